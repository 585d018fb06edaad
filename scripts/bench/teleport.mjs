// The `teleport` suite: the shapes of Lu et al.'s Tables 1–2 (ESORICS 2021) measured here.
//
//   native      bench-teleport (Rust, both parties and the enclave on one thread, each party's
//               own time): ROTs 10^4…10^7 against our KOS; AES-128 / SHA-256 × N teleported
//               against our half-gates Yao.
//   wasm-node   the SDK as applications use it: the garbler and the evaluator in two Node
//               processes (one core each) over a WebSocket transport, the evaluator reaching the
//               enclave-server (simulation backend: the native enclave program, AES-NI) hosted
//               by this process. Per party: CPU time of its process during the measured calls
//               (`process.cpuUsage`), wall time, bytes it sent. Set-up (base OTs, attestation) is
//               measured apart, as both are paid once per session.
//               - ROT: `teleportOtSender/Receiver().sendRandom/receiveRandom(n)` (semi-honest,
//                 malicious) against `otSender/otReceiver` (KOS).
//               - GC: `Session.run(circuit, { protocol: 'teleport-yao', mode })` against
//                 `protocol: 'yao2pc'`, N runs in one session, outputs to both parties.
//
// Networks: `loopback`, and `shaped` — 100 Mbit/s and 25 ms one way between the two parties
// only, through a userspace TCP proxy here that serialises each direction at the rate and holds
// every chunk for the delay. (`tc tbf` in a network namespace would shape the evaluator's local
// link to the enclave-server too, and this kernel has neither netem nor tc classifiers to single
// out one connection; see ../../shared/design/TOOLCHAIN.md.) The enclave link stays local, as in
// the deployment the paper measures.
//
// Cases (full / --quick): ROT 10^4…10^7 on loopback, …10^6 shaped; AES-128 ×1000 and SHA-256 ×200
// sequential on loopback (×100 / ×20 shaped), one run after the other in one session; and
// AES-128 ×1000 as 16 concurrent sessions on the shaped link. WEBMPC_BENCH_TELEPORT_RUNS
// overrides the sequential GC counts; WEBMPC_BENCH_NODE_ARGS adds Node flags to the parties.
//
// This file is also a party: `node teleport.mjs --party '<json>'`.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { circuitsDir } from './garble.mjs';
import { teleportTraffic } from './traffic.mjs';

const SUITE = 'teleport';
const SELF = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------
// The shaped link.

/**
 * A TCP proxy to `target` that models a link of `rateBps` bits/s and `delayMs` one-way delay in
 * each direction: a chunk starts "transmitting" when the direction's link is free, takes its
 * length at the rate, and is delivered `delayMs` after it finished. A direction with more than
 * `highWater` bytes in flight stops reading its source (backpressure, like a TCP window).
 */
export async function shapingProxy(target, { rateBps = 100e6, delayMs = 25, highWater = 4 << 20 } = {}) {
  const sockets = new Set();
  // One link: every connection through the proxy shares each direction's capacity.
  const links = { up: { free: 0 }, down: { free: 0 } };
  const server = createServer((client) => {
    const upstream = tcpConnect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.on('close', () => sockets.delete(s));
    }
    const pipe = (from, to, link) => {
      // One FIFO per direction and one timer at a time: chunks must leave in the order they
      // came (separate timers of nearly equal due times may fire out of order).
      const queue = [];
      let inFlight = 0;
      let timer;
      let ended = false;
      const pump = () => {
        timer = undefined;
        const now = performance.now();
        while (queue.length && queue[0].at <= now + 0.5) {
          const { chunk } = queue.shift();
          inFlight -= chunk.length;
          if (!to.destroyed) to.write(chunk);
        }
        if (inFlight <= highWater / 2 && from.isPaused()) from.resume();
        if (queue.length) timer = setTimeout(pump, Math.max(0, queue[0].at - now));
        else if (ended && !to.destroyed) to.end();
      };
      from.on('data', (chunk) => {
        const now = performance.now();
        const start = Math.max(now, link.free);
        link.free = start + (chunk.length * 8 * 1000) / rateBps;
        queue.push({ chunk, at: link.free + delayMs });
        inFlight += chunk.length;
        if (inFlight > highWater) from.pause();
        if (!timer) timer = setTimeout(pump, Math.max(0, queue[0].at - now));
      });
      from.on('end', () => {
        ended = true;
        if (!timer) pump();
      });
    };
    pipe(client, upstream, links.up);
    pipe(upstream, client, links.down);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// A party process.

const sidOf = (id) => new Uint8Array(createHash('sha256').update(`webmpc-bench-teleport/${id}`).digest());
const out = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const cpuMs = (u) => (u.user + u.system) / 1000;

async function partyMain(cfg) {
  const { root, role, peer, cases, measurement } = cfg;
  const dist = (p) => pathToFileURL(join(root, 'dist', p)).href;
  const sdk = await import(dist('index.js'));
  const net = await import(dist('net/node.js'));
  await sdk.init();
  const party = role === 'garbler' ? 0 : 1;
  const other = 1 - party;
  const listener = party === 1 ? await net.listenWebSocket({ port: 0 }) : undefined;
  if (listener) out({ listen: listener.url });
  // `lanes` independent transports between the two processes (one WebSocket each, all through
  // the same shaped link): lane 0 carries the sequential cases, the concurrent GC cases use
  // one session per lane. Bytes sent on all lanes are counted together.
  let sent = 0;
  const lanes = [];
  for (let k = 0; k < (cfg.lanes ?? 1); k++) {
    const inner = await net.connectWebSocketMesh({
      party,
      parties: 2,
      session: `bench-teleport-${k}`,
      peers: [undefined, peer],
      connectTimeoutMs: 60_000,
      recvTimeoutMs: 600_000,
      sendTimeoutMs: 600_000,
      // A party blocked in a long Wasm call (10^7 OTs on a loaded machine) sends no keepalives.
      peerTimeoutMs: 600_000,
      ...(listener ? { listener } : {}),
    });
    lanes.push({
      party: inner.party,
      parties: inner.parties,
      closed: inner.closed,
      send: (to, data) => {
        sent += data.length;
        return inner.send(to, data);
      },
      recv: (from, o) => inner.recv(from, o),
      close: (r) => inner.close(r),
    });
  }
  const t = lanes[0];
  const barrier = async () => {
    await Promise.all([t.send(other, Uint8Array.of(1)), t.recv(other)]);
  };
  const enclave = {
    ...(party === 1 ? { url: cfg.enclaveUrl, WebSocket: await net.nodeWebSocket() } : {}),
    policy: { simulatedMeasurements: [measurement] },
    allowSimulatedEnclave: true,
    recvTimeoutMs: 600_000,
  };
  /** Times `f` (after a barrier): this process's CPU, wall time and bytes sent. */
  const measure = async (f) => {
    await barrier();
    const c0 = process.cpuUsage();
    const b0 = sent;
    const w0 = performance.now();
    const result = await f();
    const wall = performance.now() - w0;
    return { result, cpu: cpuMs(process.cpuUsage(c0)), wall, bytes: sent - b0 };
  };

  // WEBMPC_BENCH_DEBUG=1: each case's start on stderr (to find where a run stalls).
  const debug = process.env.WEBMPC_BENCH_DEBUG ? (m) => process.stderr.write(`[${role} ${new Date().toISOString()}] ${m}\n`) : () => {};
  for (const c of cases) {
    debug(`start ${c.id}`);
    const sessionId = sidOf(c.id);
    if (c.kind === 'rot') {
      let ot;
      const setup = await measure(async () => {
        if (c.impl === 'webmpc-kos') {
          ot = party === 0 ? await sdk.otSender({ transport: t, peer: other, sessionId }) : await sdk.otReceiver({ transport: t, peer: other, sessionId });
        } else {
          const mode = c.impl === 'teleport-sh' ? 'semi-honest' : 'malicious';
          const o = { transport: t, peer: other, sessionId, mode, enclave };
          ot = party === 0 ? await sdk.teleportOtSender(o) : await sdk.teleportOtReceiver(o);
        }
      });
      debug(`set up ${c.id}`);
      const call = await measure(() => (party === 0 ? ot.sendRandom(c.n) : ot.receiveRandom(c.n)));
      debug(`ran ${c.id}`);
      // A cheap consistency check on the first OT: the parties compare through the transport.
      const r = call.result;
      if (party === 0) {
        await t.send(other, Uint8Array.from([...r.m0.subarray(0, 16), ...r.m1.subarray(0, 16)]));
      } else if (c.n > 0) {
        const pair = await t.recv(other);
        const want = pair.subarray(r.choices[0] ? 16 : 0, r.choices[0] ? 32 : 16);
        if (Buffer.compare(Buffer.from(want), Buffer.from(r.messages.subarray(0, 16))) !== 0) throw new Error(`${c.id}: OT 0 is wrong`);
      }
      await ot.free();
      out({ id: c.id, role, setup: { cpu: setup.cpu, wall: setup.wall }, cpu: call.cpu, wall: call.wall, bytes: call.bytes });
    } else {
      const circuit = sdk.prepareCircuit(readFileSync(join(cfg.circuits, c.file), 'utf8'));
      const inputs = c.inputs.map((h) => Uint8Array.from(Buffer.from(h, 'hex')));
      const expected = Buffer.from(circuit.evaluate(inputs)[0]).toString('hex');
      const mine = [inputs[party]];
      // `concurrency` sessions, one per lane, each running its share of the runs in sequence.
      const conc = c.concurrency ?? 1;
      const sessions = await Promise.all(
        lanes.slice(0, conc).map((lane, k) => sdk.session({ transport: lane, party, parties: 2, sessionId: sidOf(`${c.id}#${k}`) })),
      );
      const opts =
        c.impl === 'webmpc-yao2pc' ? { protocol: 'yao2pc' } : { protocol: 'teleport-yao', mode: c.impl === 'teleport-sh' ? 'semi-honest' : 'malicious', enclave };
      const setup = await measure(() =>
        Promise.all(
          sessions.map((s) =>
            c.impl === 'webmpc-yao2pc' ? s.preprocess('yao2pc', { garbler: 0 }) : s.preprocess('teleport-yao', { garbler: 0, enclave }),
          ),
        ),
      );
      const runs = await measure(() =>
        Promise.all(
          sessions.map(async (s, k) => {
            for (let i = k; i < c.runs; i += conc) {
              const o = await s.run(circuit, { inputs: mine, ...opts });
              if (i === k && Buffer.from(o[0]).toString('hex') !== expected) throw new Error(`${c.id}: wrong output`);
            }
          }),
        ),
      );
      for (const s of sessions) s.free();
      circuit.free();
      out({ id: c.id, role, setup: { cpu: setup.cpu, wall: setup.wall }, cpu: runs.cpu, wall: runs.wall, bytes: runs.bytes, runs: c.runs });
    }
  }
  await barrier();
  out({ done: true });
  await Promise.all(lanes.map((l) => l.close()));
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// The driver.

/** Spawns a party; resolves its stdout JSON lines through `onLine`; rejects if it fails. */
function party(cfg, onLine) {
  // WEBMPC_BENCH_NODE_ARGS: extra Node flags for the party processes (e.g. --cpu-prof).
  const extra = (process.env.WEBMPC_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, SELF, '--party', JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim()) onLine(JSON.parse(line));
    }
  });
  const exited = new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${cfg.role} exited with ${code ?? signal}`))));
  });
  return { child, exited };
}

/** Runs `cases` with the two parties over `network`; returns each party's result lines by case id. */
export async function runCases(root, network, cases, enclaveUrl, measurement) {
  const results = { garbler: new Map(), evaluator: new Map() };
  const lanes = Math.max(1, ...cases.map((c) => c.concurrency ?? 1));
  const base = { root, cases, enclaveUrl, measurement, circuits: circuitsDir(root), lanes };
  let listen;
  const gotListen = new Promise((resolve) => (listen = resolve));
  const ev = party({ ...base, role: 'evaluator' }, (l) => (l.listen ? listen(l.listen) : l.id && results.evaluator.set(l.id, l)));
  let proxy;
  let ga;
  try {
    const url = await gotListen;
    let peer = url;
    if (network === 'shaped') {
      const u = new URL(url);
      proxy = await shapingProxy({ host: u.hostname, port: Number(u.port) });
      peer = `ws://127.0.0.1:${proxy.port}`;
    }
    ga = party({ ...base, role: 'garbler', peer }, (l) => l.id && results.garbler.set(l.id, l));
    // Both outcomes, so a failing party's own error is printed before the other is stopped.
    const settled = await Promise.allSettled([ev.exited, ga.exited]);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    ev.child.kill('SIGKILL');
    ga?.child.kill('SIGKILL');
    await proxy?.close();
  }
  return results;
}

const KEY = '000102030405060708090a0b0c0d0e0f';
const PT = '00112233445566778899aabbccddeeff';
const SHA_BLOCK = `61626380${'0'.repeat(128 - 8 - 2)}18`;
const SHA_IV = '6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19';

export async function run({ root, emit, quick }) {
  const row = (kase, metric, value, unit, impl, runtime = 'wasm-node') => emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl });

  // 1. Native (Rust): bench-teleport.
  {
    const bin = join(root, 'wasm', 'target', 'release', 'bench-teleport');
    const r = spawnSync(bin, [circuitsDir(root), quick ? '5' : '7', quick ? '100' : '1000'], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (r.status !== 0) throw new Error(`bench-teleport failed: ${r.stderr || r.error}`);
    for (const line of r.stdout.split('\n').filter(Boolean)) emit(JSON.parse(line));
  }

  // 2. The SDK: two processes, the enclave-server here.
  const { startEnclaveServer } = await import(pathToFileURL(join(root, 'dist', 'enclave', 'server.js')).href);
  const server = await startEnclaveServer({ backend: 'simulation', port: 0, log: () => {}, maxSessions: 64 });
  const envRuns = Number(process.env.WEBMPC_BENCH_TELEPORT_RUNS) || undefined;
  const GC = [
    ['aes128', 'aes_128.txt', [KEY, PT]],
    ['sha256', 'sha256.txt', [SHA_BLOCK, SHA_IV]],
  ];
  const plan = {
    // [ROT sizes, sequential GC runs per circuit, concurrent AES runs, lanes]
    loopback: quick ? [[1e4, 1e5, 1e6], { aes128: 20, sha256: 5 }, 0, 1] : [[1e4, 1e5, 1e6, 1e7], { aes128: 1000, sha256: 200 }, 0, 1],
    shaped: quick ? [[1e4, 1e5], { aes128: 10, sha256: 3 }, 200, 16] : [[1e4, 1e5, 1e6], { aes128: 100, sha256: 20 }, 1000, 16],
  };
  try {
    // Rounds and bytes per phase through the SDK session (./traffic.mjs), AES-128 both modes.
    const aesText = readFileSync(join(circuitsDir(root), 'aes_128.txt'), 'utf8');
    const aesInputs = [KEY, PT].map((h) => Uint8Array.from(Buffer.from(h, 'hex')));
    for (const mode of ['semi-honest', 'malicious']) {
      const traffic = { kase: `aes128-memory-teleport-${mode === 'malicious' ? 'mal' : 'sh'}`, text: aesText, inputs: aesInputs, mode, enclaveUrl: server.url, measurement: server.measurement };
      await teleportTraffic(root, traffic, (k, m, v, u, x) => emit({ suite: SUITE, case: k, metric: m, value: v, unit: u, runtime: 'wasm-node', impl: 'sdk-memory', ...x }));
    }
    for (const network of ['loopback', 'shaped']) {
      const [rotSizes, seqRuns, concRuns, lanes] = plan[network];
      const cases = [];
      for (const n of rotSizes) {
        for (const impl of ['webmpc-kos', 'teleport-sh', 'teleport-mal']) cases.push({ kind: 'rot', impl, n, id: `rot-1e${Math.log10(n)}-${network}/${impl}` });
      }
      for (const [name, file, inputs] of GC) {
        const runs = envRuns ?? seqRuns[name];
        for (const impl of ['webmpc-yao2pc', 'teleport-sh', 'teleport-mal']) cases.push({ kind: 'gc', impl, file, inputs, runs, id: `${name}-x${runs}-${network}/${impl}` });
      }
      if (concRuns) {
        // Independent evaluations in `lanes` concurrent sessions: the throughput regime of the
        // paper's Table 2, where latency overlaps and yao2pc is bound by the link's bandwidth.
        for (const impl of ['webmpc-yao2pc', 'teleport-sh']) {
          cases.push({ kind: 'gc', impl, file: 'aes_128.txt', inputs: [KEY, PT], runs: concRuns, concurrency: lanes, id: `aes128-x${concRuns}-${network}-c${lanes}/${impl}` });
        }
      }
      const res = await runCases(root, network, cases, server.url, server.measurement);
      const byCase = new Map();
      for (const c of cases) {
        const g = res.garbler.get(c.id);
        const e = res.evaluator.get(c.id);
        const [kase, impl] = c.id.split('/');
        if (c.kind === 'rot') {
          row(kase, 'sender_cpu', g.cpu, 'ms', impl);
          row(kase, 'sender_wall', g.wall, 'ms', impl);
          row(kase, 'receiver_cpu', e.cpu, 'ms', impl);
          row(kase, 'receiver_wall', e.wall, 'ms', impl);
          row(kase, 'sender_bytes', g.bytes, 'bytes', impl);
          row(kase, 'setup_wall', Math.max(g.setup.wall, e.setup.wall), 'ms', impl);
        } else {
          const e2e = Math.max(g.wall, e.wall);
          row(kase, 'garbler_cpu', g.cpu, 'ms', impl);
          row(kase, 'garbler_cpu_per_run', g.cpu / c.runs, 'ms', impl);
          row(kase, 'garbler_bytes_per_run', g.bytes / c.runs, 'bytes', impl);
          row(kase, 'evaluator_cpu', e.cpu, 'ms', impl);
          row(kase, 'evaluator_cpu_per_run', e.cpu / c.runs, 'ms', impl);
          row(kase, 'end_to_end', e2e, 'ms', impl);
          row(kase, 'end_to_end_per_run', e2e / c.runs, 'ms', impl);
          row(kase, 'setup_wall', Math.max(g.setup.wall, e.setup.wall), 'ms', impl);
        }
        byCase.set(c.id, { g, e });
      }
      // Ratios against the baseline measured in the same run.
      for (const c of cases) {
        const [kase, impl] = c.id.split('/');
        if (impl === 'webmpc-kos' || impl === 'webmpc-yao2pc') continue;
        const base = byCase.get(`${kase}/${c.kind === 'rot' ? 'webmpc-kos' : 'webmpc-yao2pc'}`);
        const mine = byCase.get(c.id);
        if (c.kind === 'rot') {
          row(kase, 'sender_cpu_speedup_vs_kos', base.g.cpu / mine.g.cpu, 'x', impl);
          row(kase, 'receiver_wall_speedup_vs_kos', base.e.wall / mine.e.wall, 'x', impl);
        } else {
          row(kase, 'garbler_cpu_speedup_vs_yao2pc', base.g.cpu / mine.g.cpu, 'x', impl);
          row(kase, 'garbler_bytes_reduction_vs_yao2pc', base.g.bytes / mine.g.bytes, 'x', impl);
          row(kase, 'end_to_end_speedup_vs_yao2pc', Math.max(base.g.wall, base.e.wall) / Math.max(mine.g.wall, mine.e.wall), 'x', impl);
        }
      }
    }
  } finally {
    await server.close();
  }
}

if (process.argv[1] === SELF && process.argv[2] === '--party') {
  await partyMain(JSON.parse(process.argv[3]));
}
