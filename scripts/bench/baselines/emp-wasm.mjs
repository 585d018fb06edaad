// Peer baseline: emp-wasm (npm devDependency, pinned in package.json; an Emscripten build of
// emp-toolkit's malicious authenticated garbling: emp-ag2pc as mode '2pc', emp-agmpc as 'mpc')
// on our reference circuits, converted to emp's old Bristol format (./bristol-old.mjs).
//
//   runEmpWasm({ root, caseName, parties, mode, shape, runs })
//     -> { times: ms[], median, bytes, and, perRun: [{ ms, bytes }] }   (throws on any failure)
//
// Shapes (the two deployment shapes of our own authgc benchmark):
//   'one-process'        all parties in one Node process, joined by in-memory byte queues
//                        (emp-wasm's BufferQueue, as its own demos do). By default that process
//                        is a child of the caller, so a crash or a wedged instance (emp aborts
//                        inside Wasm on some failures) cannot take the benchmark down with it.
//   'process-per-party'  one child process per party, joined by the SDK's WebSocket mesh
//                        (`connectWebSocketMesh` from dist/net/node.js) on loopback: the link our
//                        own per-process benchmark uses, so the two share the same transport
//                        costs. Processes rather than worker_threads because emp-wasm runs its
//                        Wasm on the calling thread and blocks it while computing, and because
//                        our per-process runs are processes too. Needs the built package (dist/).
//
// Timing: each run is timed from "start" (every party already loaded and, per process,
// connected) to the last party's output, and includes what each `secureMPC` call does itself:
// instantiating a fresh emp Wasm instance (it makes one per call), reading the circuit, the
// whole protocol. One warm-up run precedes the timed ones (V8 caches the compiled module).
// Bytes: emp's payload bytes handed to `io.send`, summed over all parties (emp-wasm has no
// counter of its own); the per-process link adds 2 bytes of tag per message plus the framing.
// Every party's output is checked against the known answer (./cases.mjs).
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseBristolFashion, toEmpBristol } from './bristol-old.mjs';
import { CASES, bitsFromBytesBE, bytesBEFromBits, circuitsDir, inputOwners } from './cases.mjs';

const SELF = fileURLToPath(import.meta.url);

/** emp-wasm's public entry points, from this checkout's node_modules. */
async function loadEmp(root) {
  const pkg = JSON.parse(readFileSync(join(root, 'node_modules', 'emp-wasm', 'package.json'), 'utf8'));
  const mod = await import(pathToFileURL(join(root, 'node_modules', 'emp-wasm', pkg.main)).href);
  return { ...mod, version: pkg.version };
}

const converted = new Map();
/**
 * The circuit of `caseName` in emp's format for `parties` parties, with each party's input bits.
 * emp '2pc' reads header field 1 as party 0's bits and field 2 as party 1's; emp 'mpc' only
 * uses their sum and takes the split from `inputBitsPerParty`, so one split serves both.
 */
export function empCase(root, caseName, parties) {
  const cs = CASES[caseName];
  if (!cs) throw new Error(`emp-wasm: unknown case ${caseName}`);
  const key = `${caseName}/${parties}`;
  if (!converted.has(key)) {
    const c = parseBristolFashion(readFileSync(join(circuitsDir(root), cs.file), 'utf8'));
    const owners = inputOwners(c.inputs.length, parties);
    const bitsOf = (p) => {
      const parts = owners[p].map((v) => bitsFromBytesBE(cs.inputs[v], c.inputs[v]));
      const out = new Uint8Array(parts.reduce((s, b) => s + b.length, 0));
      let o = 0;
      for (const b of parts) {
        out.set(b, o);
        o += b.length;
      }
      return out;
    };
    const inputBits = owners.map((_, p) => bitsOf(p));
    const inputBitsPerParty = inputBits.map((b) => b.length);
    const emp = toEmpBristol(c, inputBitsPerParty[0]);
    converted.set(key, { text: emp.text, and: emp.and, inputBits, inputBitsPerParty, expected: cs.expected });
  }
  return converted.get(key);
}

function checkOutput(bits, expected, who) {
  const got = Buffer.from(bytesBEFromBits(bits));
  if (!got.equals(Buffer.from(expected))) {
    throw new Error(`emp-wasm: ${who} output ${got.toString('hex')} != known answer ${Buffer.from(expected).toString('hex')}`);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Runs `caseName` with `parties` parties in emp-wasm's `mode` in the given `shape`.
 * `circuit` (instead of `caseName`, one-process only) runs a ready emp circuit: { text, and,
 * inputBits (per party), inputBitsPerParty, expected (output bytes) }.
 * @param {{ root: string, caseName?: string, circuit?: object, parties: number, mode: '2pc'|'mpc',
 *           shape: 'one-process'|'process-per-party', runs?: number, warmup?: number, timeoutMs?: number,
 *           isolate?: boolean }} o
 */
export async function runEmpWasm(o) {
  const { shape } = o;
  if (o.mode === '2pc' && o.parties !== 2) throw new Error("emp-wasm: mode '2pc' is for 2 parties");
  if (shape === 'one-process') return o.isolate === false ? oneProcess(o) : inChild(o);
  if (shape === 'process-per-party') return processPerParty(o);
  throw new Error(`emp-wasm: unknown shape ${shape}`);
}

function summary(perRun, and) {
  const times = perRun.map((r) => r.ms);
  return { times, median: median(times), bytes: perRun[perRun.length - 1].bytes, and, perRun };
}

/** All parties here, over in-memory queues. */
async function oneProcess({ root, caseName, circuit, parties, mode, runs = 3, warmup = 1, timeoutMs = 600_000 }) {
  const emp = await loadEmp(root);
  const ec = circuit ?? empCase(root, caseName, parties);
  const perRun = [];
  for (let r = 0; r < warmup + runs; r++) {
    const queues = new Map();
    const queue = (from, to, ch) => {
      const k = `${from}>${to}${ch}`;
      if (!queues.has(k)) queues.set(k, new emp.BufferQueue());
      return queues.get(k);
    };
    let bytes = 0;
    // On the first failure every queue closes, so parties waiting on a peer fail too.
    let timer;
    const stop = () => {
      clearTimeout(timer);
      for (const q of queues.values()) if (!q.isClosed()) q.close();
    };
    const t0 = performance.now();
    const calls = Array.from({ length: parties }, (_, p) =>
      emp
        .secureMPC({
          party: p,
          size: parties,
          circuit: ec.text,
          inputBits: ec.inputBits[p],
          inputBitsPerParty: ec.inputBitsPerParty,
          mode,
          io: {
            send: (to, ch, data) => {
              bytes += data.length;
              queue(p, to, ch).push(data);
            },
            recv: (from, ch, min, max) => queue(from, p, ch).pop(min, max),
          },
        })
        .catch((e) => {
          stop();
          throw new Error(`party ${p}: ${String(e?.message ?? e).trim()}`);
        }),
    );
    timer = setTimeout(stop, timeoutMs);
    const outs = await Promise.all(calls).finally(() => clearTimeout(timer));
    const ms = performance.now() - t0;
    stop();
    outs.forEach((bits, p) => checkOutput(bits, ec.expected, `party ${p}`));
    if (r >= warmup) perRun.push({ ms, bytes });
  }
  // What each secureMPC call spends on a fresh emp instance before any protocol work (it makes
  // one per call; warm: the compiled module is cached by then), included in every run's time.
  const jslib = await import(pathToFileURL(join(root, 'node_modules', 'emp-wasm', 'dist', 'build', 'jslib.js')).href);
  const i0 = performance.now();
  await jslib.default();
  const instantiateMs = performance.now() - i0;
  return { ...summary(perRun, ec.and), version: emp.version, instantiateMs };
}

/** {@link oneProcess} in a child process; its result comes back over IPC. */
function inChild(o) {
  return new Promise((resolve, reject) => {
    const child = fork(SELF, ['--one-process'], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    let result;
    child.on('message', (m) => {
      result = m;
    });
    child.on('exit', (code, signal) => {
      if (result?.ok) resolve(result.value);
      else reject(new Error(result?.error ?? `emp-wasm child exited (${code ?? signal}) without a result: ${lastLine(stderr)}`));
    });
    child.send({ ...o, isolate: false });
  });
}

function lastLine(s) {
  return (
    s
      .trim()
      .split('\n')
      .find((l) => /error/i.test(l)) ?? s.trim().split('\n').pop() ?? ''
  ).trim();
}

/**
 * One child process per party, over the SDK's WebSocket mesh on loopback. The parent
 * coordinates (listen URLs, then connect, then a start signal per run) and times each run from
 * its start signal to the last party's result.
 */
async function processPerParty({ root, caseName, parties, mode, runs = 3, warmup = 1, timeoutMs = 600_000 }) {
  const ec = empCase(root, caseName, parties);
  const session = `emp-${process.pid}-${Date.now()}`;
  const kids = [];
  const inbox = [];
  const waiters = [];
  const post = (p, m) => kids[p].send(m);
  let failure;
  const fail = (e) => {
    failure ??= e;
    for (const w of waiters.splice(0)) w();
  };
  // Waits until `pred` holds for messages from every party (or one fails / the deadline passes).
  const gather = (type, extra = () => true) =>
    new Promise((resolve, reject) => {
      const deadline = setTimeout(() => fail(new Error(`emp-wasm: no '${type}' from every party within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        if (failure) {
          clearTimeout(deadline);
          reject(failure);
          return;
        }
        const got = inbox.filter((m) => m.type === type && extra(m));
        if (got.length === parties) {
          clearTimeout(deadline);
          for (const m of got) inbox.splice(inbox.indexOf(m), 1);
          resolve(got.sort((a, b) => a.party - b.party));
        } else waiters.push(check);
      };
      check();
    });
  try {
    for (let p = 0; p < parties; p++) {
      const child = fork(SELF, ['--party'], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr = (stderr + d).slice(-4000);
      });
      child.on('message', (m) => {
        if (m.type === 'error') fail(new Error(`party ${p}: ${m.error}`));
        inbox.push(m);
        for (const w of waiters.splice(0)) w();
      });
      child.on('exit', (code, signal) => {
        if (!child.finished) fail(new Error(`party ${p} exited (${code ?? signal}): ${lastLine(stderr)}`));
      });
      kids.push(child);
      post(p, { type: 'init', root, caseName, party: p, parties, mode, session });
    }
    const listening = await gather('listening');
    const peers = listening.map((m) => m.url);
    for (let p = 0; p < parties; p++) post(p, { type: 'connect', peers });
    await gather('connected');
    const perRun = [];
    for (let r = 0; r < warmup + runs; r++) {
      const t0 = performance.now();
      for (let p = 0; p < parties; p++) post(p, { type: 'run', run: r });
      const done = await gather('done', (m) => m.run === r);
      const ms = performance.now() - t0;
      done.forEach((m) => checkOutput(m.bits, ec.expected, `party ${m.party}`));
      if (r >= warmup) perRun.push({ ms, bytes: done.reduce((s, m) => s + m.bytes, 0) });
    }
    return { ...summary(perRun, ec.and), link: 'websocket-mesh' };
  } finally {
    for (const k of kids) {
      k.finished = true;
      if (k.connected) k.send({ type: 'exit' });
    }
    await Promise.all(
      kids.map(
        (k) =>
          new Promise((resolve) => {
            if (k.exitCode !== null || k.signalCode !== null) return resolve();
            const t = setTimeout(() => k.kill('SIGKILL'), 5_000);
            k.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
          }),
      ),
    );
  }
}

/** A child: one party of a process-per-party run, driven by the parent over IPC. */
async function partyMain() {
  let t;
  let emp;
  let ec;
  let cfg;
  const reply = (m) => process.send({ ...m, party: cfg?.party });
  // Per run and peer, one byte stream per emp channel ('a', 'b').
  const queues = new Map();
  const queue = (run, peer, ch) => {
    const k = `${run}/${peer}/${ch}`;
    if (!queues.has(k)) queues.set(k, new emp.BufferQueue());
    return queues.get(k);
  };
  process.on('message', async (m) => {
    try {
      if (m.type === 'init') {
        cfg = m;
        emp = await loadEmp(m.root);
        ec = empCase(m.root, m.caseName, m.parties);
        const net = await import(pathToFileURL(join(m.root, 'dist', 'net', 'node.js')).href);
        cfg.net = net;
        cfg.listener = m.party > 0 ? await net.listenWebSocket() : undefined;
        reply({ type: 'listening', url: cfg.listener?.url });
      } else if (m.type === 'connect') {
        t = await cfg.net.connectWebSocketMesh({
          party: cfg.party,
          parties: cfg.parties,
          session: cfg.session,
          peers: m.peers,
          listener: cfg.listener,
          // emp computes synchronously for long stretches (no keepalives then): no idle limits.
          recvTimeoutMs: 3_600_000,
          sendTimeoutMs: 3_600_000,
          peerTimeoutMs: 0,
        });
        for (let q = 0; q < cfg.parties; q++) if (q !== cfg.party) pump(q);
        reply({ type: 'connected' });
      } else if (m.type === 'run') {
        const { send, bytes } = coalescingSender(m.run);
        const bits = await emp.secureMPC({
          party: cfg.party,
          size: cfg.parties,
          circuit: ec.text,
          inputBits: ec.inputBits[cfg.party],
          inputBitsPerParty: ec.inputBitsPerParty,
          mode: cfg.mode,
          io: { send, recv: (from, ch, min, max) => queue(m.run, from, ch).pop(min, max) },
        });
        reply({ type: 'done', run: m.run, bits, bytes: bytes() });
      } else if (m.type === 'exit') {
        await t?.close();
        process.exit(0);
      }
    } catch (e) {
      reply({ type: 'error', error: String(e?.message ?? e).trim() });
      setTimeout(() => process.exit(1), 100);
    }
  });

  // Messages are [run, channel, bytes...]; each is appended to its run/peer/channel stream.
  async function pump(peer) {
    for (;;) {
      let msg;
      try {
        msg = await t.recv(peer);
      } catch {
        return; // closed: the run (if any) fails on its own recv, the parent reports it
      }
      queue(msg[0], peer, String.fromCharCode(msg[1])).push(msg.subarray(2));
    }
  }

  // emp calls send synchronously, many times between two receives. Sends to a peer are
  // gathered and go out as one message per channel switch at the end of the current
  // synchronous stretch (a microtask), so the link carries few large messages, not thousands
  // of tiny ones; order per peer is kept by chaining on the previous send.
  function coalescingSender(run) {
    let total = 0;
    const pending = new Map();
    const tails = new Map();
    const flush = (to) => {
      const parts = pending.get(to);
      pending.delete(to);
      const msgs = [];
      for (const { ch, data } of parts) {
        const last = msgs[msgs.length - 1];
        if (last && last.ch === ch) last.parts.push(data);
        else msgs.push({ ch, parts: [data] });
      }
      let tail = tails.get(to) ?? Promise.resolve();
      for (const { ch, parts: ds } of msgs) {
        const len = ds.reduce((s, d) => s + d.length, 0);
        const out = new Uint8Array(2 + len);
        out[0] = run;
        out[1] = ch.charCodeAt(0);
        let o = 2;
        for (const d of ds) {
          out.set(d, o);
          o += d.length;
        }
        tail = tail.then(() => t.send(to, out));
      }
      tail.catch((e) => reply({ type: 'error', error: `send to ${to}: ${e?.message ?? e}` }));
      tails.set(to, tail);
    };
    const send = (to, ch, data) => {
      total += data.length;
      if (!pending.has(to)) {
        pending.set(to, []);
        queueMicrotask(() => flush(to));
      }
      pending.get(to).push({ ch, data });
    };
    return { send, bytes: () => total };
  }
}

if (process.argv[1] === SELF && process.argv[2] === '--party') {
  partyMain();
} else if (process.argv[1] === SELF && process.argv[2] === '--one-process') {
  // After one party fails, the others' pending receives are rejected (their queues close) and
  // emp's Asyncify glue leaves those rejections unhandled: the first failure is what counts.
  process.on('unhandledRejection', () => {});
  process.once('message', async (o) => {
    try {
      process.send({ ok: true, value: await oneProcess(o) }, () => process.exit(0));
    } catch (e) {
      process.send({ ok: false, error: String(e?.message ?? e) }, () => process.exit(1));
    }
  });
}
