// Parties as a user starts them, one process each: `node dist/cli.js party --transport websocket
// --json …` with pinned keys (the secure channel on), every dialled pair through its own TCP
// forwarder of the shaper (scripts/lib/shaper.mjs), so each ordered pair gets its own link: party
// i < j dials party j at the forwarder in front of j's pre-chosen port, over link(i, j) forward and
// link(j, i) back. All processes start at once (a dialer retries until its peer listens), so
// `wall` runs from spawning them to the last exit, start-up (loading Node, the SDK and the Wasm)
// included. Shared by the `network` and `world` suites.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startForwarder } from '../lib/shaper.mjs';

const CPU_PRELOAD = new URL('./cpu-on-exit.mjs', import.meta.url).href;
const CPU_LINE = /webmpc-bench-cpu-ms (\d+(?:\.\d+)?)/;

/**
 * Runs `node dist/cli.js ARGS` (with the CPU reporter preloaded) and resolves with its exit code,
 * output, exit time and CPU ms; killed after `timeoutMs`.
 * @param {string} root
 * @param {string[]} args
 * @param {number} timeoutMs
 */
export function cliProcess(root, args, timeoutMs) {
  const child = spawn(process.execPath, ['--import', CPU_PRELOAD, join(root, 'dist', 'cli.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const cpu = stderr.match(CPU_LINE);
      resolve({ code: code ?? signal, stdout, stderr: stderr.replace(CPU_LINE, '').trim(), at: performance.now(), cpuMs: cpu ? Number(cpu[1]) : NaN });
    }),
  );
  return { child, done };
}

/**
 * `n` identity files in `dir` (`webmpc key`), and their public keys.
 * @param {string} root
 * @param {number} n
 * @param {string} dir
 */
export function partyKeys(root, n, dir) {
  const keys = Array.from({ length: n }, (_, p) => join(dir, `p${p}.key`));
  const pubs = keys.map((k) => {
    const r = spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), 'key', k], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`webmpc key failed: ${r.stderr}`);
    return r.stdout.trim();
  });
  return { keys, pubs };
}

/** `count` distinct free TCP ports on 127.0.0.1 (all held open together, then released). */
async function freePorts(count) {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => resolve(s));
    })),
  );
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/**
 * One run of a circuit with `n` CLI parties.
 * @param {object} o
 * @param {string} o.root
 * @param {number} o.n parties
 * @param {string} o.circuit circuit file
 * @param {(party: number) => string[]} o.inputs party p's --input values (hex), in input order
 * @param {string} o.expected the output every party must print (hex)
 * @param {(from: number, to: number) => import('../lib/shaper.mjs').LinkSpec} o.link
 * @param {{ keys: string[], pubs: string[] }} o.ids from {@link partyKeys} (at least n)
 * @param {string} [o.protocol] default 'authgc'
 * @param {number} [o.timeoutMs] per process (default 600 s)
 */
export async function runCliMesh({ root, n, circuit, inputs, expected, link, ids, protocol = 'authgc', timeoutMs = 600_000 }) {
  const room = `mesh-${process.pid}-${Date.now()}`;
  const ports = await freePorts(n);
  /** forwarders[i][j], i < j: in front of party j's port, dialled by party i. */
  const fwds = [];
  try {
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        fwds.push({ i, j, fwd: await startForwarder({ target: { port: /** @type {number} */ (ports[j]) }, forward: link(i, j), backward: link(j, i) }) });
      }
    }
    const t0 = performance.now();
    const procs = Array.from({ length: n }, (_, p) => {
      const args = [
        'party', '--protocol', protocol, '--transport', 'websocket', '--circuit', circuit, '--room', room, '--json',
        '--parties', String(n), '--party', String(p), '--identity', /** @type {string} */ (ids.keys[p]),
        // Generous: n processes start together on a loaded 2-core machine, and a party busy in a
        // long Wasm call cannot answer keep-alives (the CLI's default counts it gone after 3 s).
        '--timeout', String(timeoutMs), '--peer-timeout', '60000',
        ...(p > 0 ? ['--listen', String(ports[p])] : []),
        ...fwds.filter((f) => f.i === p).flatMap((f) => ['--peer', `${f.j}=ws://127.0.0.1:${f.fwd.port}`]),
        ...Array.from({ length: n }, (_, q) => q).filter((q) => q !== p).flatMap((q) => ['--peer-key', `${q}=${ids.pubs[q]}`]),
        ...inputs(p).flatMap((v) => ['--input', v]),
      ];
      return cliProcess(root, args, timeoutMs);
    });
    // A party that fails makes the others fail soon (its sockets close); one that never got as
    // far as connecting would leave them waiting out --timeout: stop them 10 s after a failure.
    for (const p of procs) {
      void p.done.then((r) => {
        if (r.code !== 0) setTimeout(() => procs.forEach((q) => q.child.exitCode === null && q.child.kill('SIGKILL')), 10_000).unref();
      });
    }
    const results = await Promise.all(procs.map((p) => p.done));
    const wall = Math.max(...results.map((r) => r.at)) - t0;
    // The first party to fail is the one to report (the others may only have been stopped).
    const failed = results.map((r, p) => ({ ...r, p })).filter((r) => r.code !== 0).sort((a, b) => a.at - b.at)[0];
    if (failed) throw new Error(`party ${failed.p} exited (${failed.code}): ${failed.stderr.split('\n').pop()}`);
    const ms = results.map((r, p) => {
      const out = JSON.parse(r.stdout);
      if (out.outputs[0] !== expected) throw new Error(`party ${p}: wrong output ${out.outputs[0]}`);
      return out.ms;
    });
    for (const { i, j, fwd } of fwds) if (fwd.connections < 1) throw new Error(`party ${i} did not reach party ${j} through its forwarder`);
    // Bytes per directed link (i→j is the forwarder's forward direction).
    const linkBytes = fwds.flatMap(({ i, j, fwd }) => [
      { from: i, to: j, bytes: fwd.bytes.forward },
      { from: j, to: i, bytes: fwd.bytes.backward },
    ]);
    return {
      wall,
      compute: Math.max(...ms.map((m) => m.compute)),
      connect: Math.max(...ms.map((m) => m.connect)),
      cpu: results.reduce((a, r) => a + r.cpuMs, 0),
      linkBytes,
    };
  } finally {
    await Promise.all(fwds.map((f) => f.fwd.close()));
  }
}
