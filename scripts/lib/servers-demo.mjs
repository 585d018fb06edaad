// The auction at scale (`npm run demo -- --servers 3 --bidders 1000`): S compute parties, each a
// `webmpc serve` process (authgc or MASCOT among them over WebSockets, pinned keys), and N scripted client
// bidders in this process, each giving its bid with `submit` over WebSockets to every server.
// Shared by the demo and the `clients` bench.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A free TCP port on `host` (bound and released: another process may take it first, rarely). */
function freePort(host) {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Settles with `parse(stdout)` once `child` has exited 0 and its output is read to the end
 * ('close', not 'exit', which may come first); rejects with `failed(code)` otherwise, or if the
 * output does not parse, or the process did not start.
 */
function outputOf(child, parse, failed) {
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(failed(code));
      try {
        resolve(parse(stdout));
      } catch (err) {
        reject(new Error(`unreadable output (${err.message}): ${stdout.slice(0, 200)}`));
      }
    });
  });
}

/** `t`, counting the bytes it sends and receives into `tally`. */
function counted(t, tally) {
  return {
    party: t.party,
    parties: t.parties,
    closed: t.closed,
    send(to, data, owned) {
      tally.sent += data.length;
      return t.send(to, data, owned);
    },
    async recv(from, options) {
      const m = await t.recv(from, options);
      tally.received += m.length;
      return m;
    },
    close: (reason) => t.close(reason),
    limitMessageBytes: (max, opening) => t.limitMessageBytes?.(max, opening),
  };
}

/** Most scripted bidders one process runs (three sockets each; at most 20,000 open files here). */
const MAX_IN_PROCESS = 3000;

/**
 * Gives every bid of `bids` through `submit` from this process to the servers at `urls` (pinned
 * `keys`, hex), bidders arriving JOINING_AT_ONCE at a time (a thousand handshakes in the same
 * instant would only measure this process's queue): each frees its place once every server
 * welcomed it. Resolves with { clients: SubmitResult per bid (undefined where it failed),
 * errors, bytes: each client's bytes on its links (the secure channel's records) }.
 */
export async function submitAll({ root, urls, keys, room, bids, timeoutS }) {
  const { submit, dialServer } = await import(pathToFileURL(join(root, 'dist/clients.js')).href);
  const { init } = await import(pathToFileURL(join(root, 'dist/index.js')).href);
  const { publicKeyFromHex } = await import(pathToFileURL(join(root, 'dist/secure/index.js')).href);
  await init();
  const bytes = bids.map(() => ({ sent: 0, received: 0 }));
  const endpoints = (i) => keys.map((k, j) => ({ publicKey: publicKeyFromHex(k), connect: async () => counted(await dialServer(urls[j]), bytes[i]) }));
  const errors = [];
  const JOINING_AT_ONCE = 32;
  let joining = 0;
  const queue = [];
  const enter = () => (joining < JOINING_AT_ONCE ? (joining++, Promise.resolve()) : new Promise((resolve) => queue.push(resolve)));
  const leave = () => {
    const next = queue.shift();
    if (next) next();
    else joining--;
  };
  const clients = await Promise.all(
    bids.map(async (bid, i) => {
      await enter();
      let left = false;
      const release = () => {
        if (!left) (left = true), leave();
      };
      try {
        return await submit({ servers: endpoints(i), sessionId: room, input: bid, timeoutMs: timeoutS * 1000, onProgress: (p) => p.phase === 'window' && release() });
      } catch (err) {
        errors[i] = err;
        return undefined;
      } finally {
        release();
      }
    }),
  );
  return { clients, errors, bytes };
}

/**
 * Runs one auction. `extraClients`: how many bidders beyond `bids` the window waits for (pages
 * joining through the link `onListening` is given the parts of). `bids`: bigint per client. Resolves with { clients: SubmitResult per bid
 * (undefined where it failed, with `errors`), servers: each server's --json result, ms: {...} }.
 * Every process is stopped on return or failure.
 */
export async function serversAuction({ root, servers, bids, bits = 32, host = '127.0.0.1', timeoutS = 600, protocol = 'mascot', program = 'vickrey', method = 'bitwise', cliClients: cliWanted = 0, extraClients = 0, maxInProcess: inProcessWanted = MAX_IN_PROCESS, onListening = () => {}, say = () => {} }) {
  const cliClients = Math.min(Math.max(0, cliWanted), bids.length);
  const maxInProcess = Math.max(1, inProcessWanted);
  const bin = join(root, 'bin', 'webmpc.js');
  const dir = mkdtempSync(join(tmpdir(), 'webmpc-servers-'));
  const children = [];
  try {
    const keys = [];
    for (let j = 0; j < servers; j++) {
      const r = spawnSync(process.execPath, [bin, 'key', join(dir, `server${j}.key`)], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`webmpc key failed: ${r.stderr}`);
      keys.push(r.stdout.trim());
    }
    const meshPorts = [];
    const clientPorts = [];
    for (let j = 0; j < servers; j++) {
      meshPorts.push(await freePort(host));
      clientPorts.push(await freePort(host));
    }
    const room = `auction-${Date.now().toString(36)}`;
    const t0 = performance.now();
    const outputs = [];
    const ready = [];
    for (let j = 0; j < servers; j++) {
      const args = [bin, 'serve', '--party', String(j), '--parties', String(servers), '--room', room, '--transport', 'websocket', '--host', host];
      if (j > 0) args.push('--listen', String(meshPorts[j]));
      for (let q = j + 1; q < servers; q++) args.push('--peer', `${q}=ws://${host}:${meshPorts[q]}`);
      for (let q = 0; q < servers; q++) if (q !== j) args.push('--peer-key', `${q}=${keys[q]}`);
      args.push('--identity', join(dir, `server${j}.key`), '--clients-port', String(clientPorts[j]), '--clients-host', host);
      // Every bidder here shares this machine's two cores with the servers, which preprocess the
      // program while the inputs come in: 120 ms per bidder for the inputs (a bidder on its own
      // machine answers in milliseconds; 30 ms per bidder dropped 862 of 1,000, 2026-11-27).
      args.push('--protocol', protocol, '--program', program, '--method', method, '--bits', String(bits), '--count', String(bids.length + extraClients), '--window-ms', String(timeoutS * 1000), '--input-timeout', String(Math.max(60_000, 120 * bids.length)), '--timeout', String(timeoutS * 1000), '--json');
      // A server's main thread also builds the program (about a second for 1,000 bids) and runs
      // every client's handshake: the servers count each other as gone only after 20 s of silence.
      args.push('--peer-timeout', '20000');
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let seen = '';
      ready.push(
        new Promise((resolve, reject) => {
          child.stderr.on('data', (d) => {
            seen += d;
            for (const line of String(d).split('\n')) if (line.trim()) say(line);
            if (seen.includes('clients connect to')) resolve();
          });
          child.once('exit', (code) => reject(new Error(`server ${j} exited (${code}) before it listened`)));
        }),
      );
      outputs.push(outputOf(child, JSON.parse, (code) => new Error(`server ${j} failed (exit ${code})`)));
    }
    for (const o of outputs) o.catch(() => {});
    await Promise.all(ready);
    const tListening = performance.now();
    // Where others (pages) join: the servers' client addresses and keys, and the run's name.
    onListening({ urls: clientPorts.map((p) => `ws://${host}:${p}`), keys, session: room });
    const urls = clientPorts.map((p) => `ws://${host}:${p}`);
    const errors = [];
    const bytes = bids.map(() => ({ sent: 0, received: 0 }));
    // The last `cliClients` bids go through `webmpc submit` processes (--json), the rest through
    // `submit`: in here, or past MAX_IN_PROCESS bidders in client-pool processes (a process holds
    // three sockets per bidder, and one may open at most 20,000 files here).
    const viaCli = (bid, i) =>
      new Promise((resolve) => {
        const args = [bin, 'submit', '--session', room, '--input', String(bid), '--timeout', String(timeoutS * 1000), '--json'];
        for (let j = 0; j < servers; j++) args.push('--server', `${urls[j]}=${keys[j]}`);
        const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        children.push(child);
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        const parse = (out) => {
          const r = JSON.parse(out);
          return { outputs: r.outputs.map(BigInt), index: r.index, clients: r.clients, counted: r.counted, cli: true };
        };
        outputOf(child, parse, (code) => new Error(`webmpc submit exited ${code}: ${stderr.trim().split('\n').pop()}`)).then(resolve, (err) => {
          errors[i] = err;
          resolve(undefined);
        });
      });
    const scripted = bids.slice(0, bids.length - cliClients);
    const pool = (part, offset) =>
      new Promise((resolve, reject) => {
        const args = [join(root, 'scripts/lib/client-pool.mjs'), JSON.stringify({ root, urls, keys, room, timeoutS, bids: part.map(String) })];
        const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
        children.push(child);
        const parse = (out) => {
          const r = JSON.parse(out);
          return r.clients.map((c, k) => {
            if (r.errors[k]) errors[offset + k] = Object.assign(new Error(r.errors[k].message), { code: r.errors[k].code });
            bytes[offset + k] = r.bytes[k];
            return c ? { ...c, outputs: c.outputs.map(BigInt) } : undefined;
          });
        };
        outputOf(child, parse, (code) => new Error(`a client pool exited ${code}`)).then(resolve, reject);
      });
    const parts = [];
    if (scripted.length <= maxInProcess) {
      parts.push(
        submitAll({ root, urls, keys, room, timeoutS, bids: scripted }).then((r) => {
          r.errors.forEach((e, k) => e && (errors[k] = e));
          r.bytes.forEach((b, k) => (bytes[k] = b));
          return r.clients;
        }),
      );
    } else {
      const size = Math.ceil(scripted.length / Math.ceil(scripted.length / maxInProcess));
      for (let at = 0; at < scripted.length; at += size) parts.push(pool(scripted.slice(at, at + size), at));
    }
    parts.push(Promise.all(bids.slice(bids.length - cliClients).map((bid, k) => viaCli(bid, scripted.length + k))));
    const clients = (await Promise.all(parts)).flat();
    const tClients = performance.now();
    const results = await Promise.all(outputs);
    return { clients, errors, bytes, servers: results, ms: { start: tListening - t0, run: tClients - tListening, total: performance.now() - t0 } };
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
