// The `mascot` suite: MASCOT preprocessing (triples/s, bytes per triple against the paper's
// 180·n(n−1) kbit), online multiplications/s and the Vickrey auction, measured in the same run:
//   native                      bench-mascot: every party in one process on one thread over the
//                               Rust in-memory network;
//   wasm-node  in-wasm-memory   MascotLocalBench: the same, inside one Wasm instance (one thread
//                               does every party's work); from the bench-only baseline module,
//                               like the field loop and the Rust example programs;
//   wasm-node  workers-ws       one worker_thread per party (one core each on this 2-core
//                               machine for 2 parties), each with its own Wasm instance, over the
//                               SDK's WebSocket mesh on loopback, through the MascotSession
//                               binding: what a deployment with one party per process does.
//   wasm-node  sdk-workers-ws   the same deployment through the SDK: session.preprocess('mascot')
//                               for triples, and the Vickrey auction written with webmpc/program
//                               run end to end by session.run (setup, preprocessing from an
//                               empty store, online) for 2 … 100 bids (see sdkCases below).
// Also the F_p multiplication rate in Wasm (p = 2^128 − 173, 32-bit limbs), the figure behind
// the choice of prime.
//
// WEBMPC_MASCOT_CASES=sdk runs only the SDK cases.
//
// `--threads k` runs only the parallel-instances case instead: 2 parties in this process, each
// session in its engine worker with threads = k (sdk-workers-memory, rows with `threads`).
//
// This file is also the worker: `new Worker(mascot.mjs, { workerData })` runs one party.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { loadSdk, mascotTriples, tripleRows } from './sessions.mjs';
import { mascotTraffic } from './traffic.mjs';

const SUITE = 'mascot';
const SELF = fileURLToPath(import.meta.url);
/** The paper's communication per triple, in bytes: (τλk + (τ+5)k²)·n(n−1)/8 with τ = 3. */
const paperBytes = (n) => ((3 * 128 * 128 + 8 * 128 * 128) * n * (n - 1)) / 8;

/** The shipped MASCOT module (`webmpc_mascot`, for MascotSession) or the bench-only one (`baseline`). */
async function loadModule(root, name) {
  const gen = join(root, 'dist', 'wasm-gen');
  const mod = await import(pathToFileURL(join(gen, `${name}.js`)).href);
  await mod.default({ module_or_path: await readFile(join(gen, `${name}_bg.wasm`)) });
  return mod;
}
const loadBindings = (root) => loadModule(root, 'webmpc_mascot');
const loadBaseline = (root) => loadModule(root, 'baseline');

const secs = (t0) => (performance.now() - t0) / 1000;

/** One party in a worker: WebSocket mesh, MascotSession, then the measured work. */
async function workerMain() {
  const { root, party, parties, session, sid, triples, field, vickreyBids } = workerData;
  const wasm = await loadBindings(root);
  // The example program comes from the bench-only module; the session runs in the shipped one.
  const baseline = vickreyBids.length ? await loadBaseline(root) : undefined;
  const net = await import(pathToFileURL(join(root, 'dist', 'net', 'node.js')).href);
  const listener = party > 0 ? await net.listenWebSocket() : undefined;
  parentPort.postMessage({ type: 'url', party, url: listener?.url });
  const peers = await new Promise((resolve) => parentPort.once('message', (m) => resolve(m.peers)));
  const t = await net.connectWebSocketMesh({ party, parties, session, peers, listener, recvTimeoutMs: 600_000 });
  let sent = 0;
  const counted = {
    party: t.party,
    parties: t.parties,
    send(to, data) {
      sent += data.byteLength;
      return t.send(to, data);
    },
    recv: (from) => t.recv(from),
  };
  const result = {};
  let t0 = performance.now();
  const s = await wasm.mascotSetup(counted, field, Uint8Array.from(sid));
  result.setupMs = secs(t0) * 1e3;
  // Auctions first, from an empty store: each run generates exactly what it needs.
  if (vickreyBids.length) {
    result.vickrey = [];
    for (const bids of vickreyBids) {
      const program = baseline.mascotVickreyProgram(parties, bids, 32);
      const mine = [];
      for (let i = party; i < bids; i += parties) mine.push(...le16(BigInt((i * 2654435761) % 1000003)));
      t0 = performance.now();
      const out = await s.run(program, Uint8Array.from(mine), undefined);
      result.vickrey.push({ bids, ms: secs(t0) * 1e3, winner: Number(fromLe(out[0])), price: Number(fromLe(out[1])) });
    }
  }
  await s.preprocess(1024, 0, undefined); // warm-up batch
  const sent0 = sent;
  t0 = performance.now();
  await s.preprocess(triples, 0, undefined);
  result.triplesSecs = secs(t0);
  result.bytes = sent - sent0;
  s.free();
  parentPort.postMessage({ type: 'done', result });
  await t.close();
}

function le16(x) {
  const b = new Uint8Array(16);
  for (let i = 0; i < 16; i++) b[i] = Number((x >> BigInt(8 * i)) & 0xffn);
  return b;
}

function fromLe(b) {
  let x = 0n;
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]);
  return x;
}

function vickreyPlain(bids) {
  const values = Array.from({ length: bids }, (_, i) => (i * 2654435761) % 1000003);
  const max = Math.max(...values);
  const winner = values.indexOf(max);
  const price = Math.max(0, ...values.filter((_, i) => i !== winner));
  return { winner, price };
}

/**
 * Hands every worker the others' mesh URLs once all announced theirs, then collects each one's
 * result and stops the workers.
 */
async function meshAndCollect(workers) {
  const urls = [];
  const results = [];
  await new Promise((resolve, reject) => {
    let done = 0;
    let announced = 0;
    for (const w of workers) {
      w.on('error', reject);
      w.on('message', (m) => {
        if (m.type === 'url') {
          urls[m.party] = m.url;
          if (++announced === workers.length) for (const x of workers) x.postMessage({ peers: urls });
        } else if (m.type === 'done') {
          results.push(m.result);
          if (++done === workers.length) resolve();
        }
      });
    }
  });
  await Promise.all(workers.map((w) => w.terminate()));
  return results;
}

/** Runs one party per worker thread over the WebSocket mesh; returns every party's result. */
async function withWorkers(root, parties, field, triples, vickreyBids) {
  const session = `mascot-bench-${randomBytes(4).toString('hex')}`;
  const sid = [...randomBytes(32)];
  const workers = Array.from({ length: parties }, (_, party) =>
    new Worker(SELF, { workerData: { root, party, parties, session, sid, triples, field, vickreyBids } }),
  );
  return meshAndCollect(workers);
}

export async function run({ root, emit, quick, threads }) {
  const row = (kase, metric, value, unit, runtime, impl) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl });
  if (threads !== undefined) {
    for (const k of threads) await threadsCases(root, emit, quick, k);
    return;
  }
  if (process.env.WEBMPC_MASCOT_CASES === 'sdk') return sdkCases(root, row, quick);
  const count = quick ? 2000 : 10000;

  // 1. Native.
  const native = spawnSync(join(root, 'wasm', 'target', 'release', 'bench-mascot'), [String(count)], { encoding: 'utf8' });
  if (native.status !== 0) throw new Error(`bench-mascot failed: ${native.stderr || native.error}`);
  const nativeRate = {};
  for (const line of native.stdout.split('\n').filter(Boolean)) {
    const r = JSON.parse(line);
    emit(r);
    if (r.metric === 'throughput') nativeRate[r.case] = r.value;
  }

  // 2. Wasm, every party in one instance (the bench-only module).
  const baseline = await loadBaseline(root);
  {
    const n = 2_000_000;
    baseline.mascotFieldMulLoop(100_000);
    const t0 = performance.now();
    baseline.mascotFieldMulLoop(n);
    row('fp-mul', 'throughput', n / secs(t0) / 1e6, 'M mul/s', 'wasm-node', 'in-wasm-memory');
  }
  for (const field of ['prime', 'binary']) {
    const name = field === 'prime' ? 'fp' : 'gf2k';
    for (const [n, frac] of [[2, 1], [3, 3], [5, 10]]) {
      const k = Math.max(256, Math.floor(count / frac / (quick ? 2 : 1)));
      let t0 = performance.now();
      const bench = new baseline.MascotLocalBench(n, field);
      row(`setup-${name}-${n}p`, 'time', secs(t0) * 1e3, 'ms', 'wasm-node', 'in-wasm-memory');
      bench.generateTriples(1024);
      const b0 = bench.bytesSent();
      t0 = performance.now();
      const got = bench.generateTriples(k);
      const rate = got / secs(t0);
      const kase = `triples-${name}-${n}p`;
      row(kase, 'throughput', rate, 'triples/s', 'wasm-node', 'in-wasm-memory');
      const per = (bench.bytesSent() - b0) / got;
      row(kase, 'communication', per, 'bytes/triple', 'wasm-node', 'in-wasm-memory');
      row(kase, 'communication_vs_paper', per / paperBytes(n), 'x', 'wasm-node', 'in-wasm-memory');
      if (nativeRate[kase]) row(kase, 'ratio_native_to_wasm', nativeRate[kase] / rate, 'x', 'wasm-node', 'in-wasm-memory');
      if (n === 2 && field === 'prime') {
        const m = 100_000;
        bench.preprocess(m, 0);
        const program = baseline.mascotProductsProgram('prime', 2, m);
        const inputs = [Uint8Array.from(le16(3n)), Uint8Array.from(le16(5n))];
        t0 = performance.now();
        const out = bench.run(program, inputs);
        const mulRate = m / secs(t0);
        if (fromLe(out[0]) !== 15n * BigInt(m)) throw new Error('mascot bench: wrong product sum');
        row(`online-mul-fp-2p-${m}`, 'throughput', mulRate, 'mul/s', 'wasm-node', 'in-wasm-memory');
        for (const bids of quick ? [2, 10] : [2, 10, 100]) {
          const vb = new baseline.MascotLocalBench(2, 'prime');
          const prog = baseline.mascotVickreyProgram(2, bids, 32);
          const mine = [[], []];
          for (let i = 0; i < bids; i++) mine[i % 2].push(...le16(BigInt((i * 2654435761) % 1000003)));
          t0 = performance.now();
          const res = vb.run(prog, mine.map((x) => Uint8Array.from(x)));
          const ms = secs(t0) * 1e3;
          const want = vickreyPlain(bids);
          if (Number(fromLe(res[0])) !== want.winner || Number(fromLe(res[1])) !== want.price) throw new Error('mascot bench: wrong auction result');
          row(`vickrey-${bids}-bids-2p`, 'time_end_to_end', ms, 'ms', 'wasm-node', 'in-wasm-memory');
          vb.free();
        }
      }
      bench.free();
    }
  }

  // 3. Wasm, one worker thread per party over the WebSocket mesh on loopback.
  for (const n of quick ? [2] : [2, 3]) {
    const k = quick ? 2048 : n === 2 ? 8192 : 2048;
    const vickreyBids = n === 2 ? (quick ? [10] : [2, 10, 100]) : [];
    const results = await withWorkers(root, n, 'prime', k, vickreyBids);
    const slowest = Math.max(...results.map((r) => r.triplesSecs));
    const kase = `triples-fp-${n}p`;
    row(kase, 'throughput', k / slowest, 'triples/s', 'wasm-node', 'workers-ws');
    const bytes = results.reduce((a, r) => a + r.bytes, 0) / k;
    row(kase, 'communication', bytes, 'bytes/triple', 'wasm-node', 'workers-ws');
    row(kase, 'communication_vs_paper', bytes / paperBytes(n), 'x', 'wasm-node', 'workers-ws');
    row(`setup-fp-${n}p`, 'time', Math.max(...results.map((r) => r.setupMs)), 'ms', 'wasm-node', 'workers-ws');
    for (const [i, v] of (results[0].vickrey ?? []).entries()) {
      const want = vickreyPlain(v.bids);
      if (v.winner !== want.winner || v.price !== want.price) throw new Error('mascot bench: wrong auction result (workers)');
      const ms = Math.max(...results.map((r) => r.vickrey[i].ms));
      row(`vickrey-${v.bids}-bids-2p`, 'time_end_to_end', ms, 'ms', 'wasm-node', 'workers-ws');
    }
  }

  // 4. The same deployment through the SDK.
  await sdkCases(root, row, quick);
  // Rounds and bytes per phase through the SDK session (./traffic.mjs).
  for (const [parties, bids] of [[2, 10], [3, 3]]) await mascotTraffic(root, { parties, bids }, (k, m, v, u, x) => emit({ suite: SUITE, case: k, metric: m, value: v, unit: u, runtime: 'wasm-node', impl: 'sdk-memory', ...x }));
}

// --- --threads k -------------------------------------------------------------------------------

/**
 * `--threads k`: triples through session.preprocess, 2 parties in this process, each session in
 * its engine worker with threads = k (k − 1 instance workers each): wall time, triples/s and
 * triples per CPU-second of the whole process (./sessions.mjs, as the workers suite measures).
 */
async function threadsCases(root, emit, quick, threads) {
  const sdk = await loadSdk(root);
  const triples = quick ? 2048 : 8192;
  const r = await mascotTriples(sdk, { worker: true, threads, triples });
  const row = (metric, value, unit) => emit({ suite: SUITE, case: 'triples-fp-2p', metric, value, unit, runtime: 'wasm-node', impl: 'sdk-workers-memory', threads });
  tripleRows(row, triples, r);
}

// --- SDK cases (mascot-sdk) ---------------------------------------------------------------------

/**
 * One party in a worker, through the SDK: WebSocket mesh, a session, the MASCOT setup, the
 * Vickrey auctions from an empty store (each run preprocesses exactly what it needs, then runs
 * the online phase), then triples by session.preprocess.
 */
async function sdkWorkerMain() {
  const { root, party, parties, session: room, sid, triples, vickreyBids } = workerData;
  const dist = (f) => pathToFileURL(join(root, 'dist', f)).href;
  const sdk = await import(dist('index.js'));
  const net = await import(dist('net/node.js'));
  const programs = await import(dist('program/index.js'));
  await sdk.init();
  const listener = party > 0 ? await net.listenWebSocket() : undefined;
  parentPort.postMessage({ type: 'url', party, url: listener?.url });
  const peers = await new Promise((resolve) => parentPort.once('message', (m) => resolve(m.peers)));
  const t = await net.connectWebSocketMesh({ party, parties, session: room, peers, listener, recvTimeoutMs: 600_000 });
  const s = await sdk.session({ transport: t, party, parties, sessionId: Uint8Array.from(sid) });
  const result = { vickrey: [] };
  let t0 = performance.now();
  await s.preprocess('mascot', { triples: 0 }); // setup only: base OTs and COPE with every peer
  result.setupMs = secs(t0) * 1e3;
  for (const bids of vickreyBids) {
    const auction = await programs.vickreyAuction({ parties, bids, bits: 32 });
    const mine = auction.inputsOf(party).map((i) => BigInt((i * 2654435761) % 1000003));
    t0 = performance.now();
    const out = await s.run(auction, { protocol: 'mascot', inputs: auction.encodeInputs(party, mine) });
    const [winner, price] = auction.decodeOutputs(out);
    result.vickrey.push({ bids, ms: secs(t0) * 1e3, winner: Number(winner), price: Number(price) });
  }
  await s.preprocess('mascot', { triples: 1024 }); // warm-up batch
  const sent0 = s.bytesSent;
  t0 = performance.now();
  await s.preprocess('mascot', { triples });
  result.triplesSecs = secs(t0);
  result.bytes = s.bytesSent - sent0;
  await s.close();
  parentPort.postMessage({ type: 'done', result });
}

/** Every party in its own worker thread through the SDK; returns every party's result. */
async function withSdkWorkers(root, parties, triples, vickreyBids) {
  const session = `mascot-sdk-bench-${randomBytes(4).toString('hex')}`;
  const sid = [...randomBytes(32)];
  const workers = Array.from({ length: parties }, (_, party) =>
    new Worker(SELF, { workerData: { sdk: true, root, party, parties, session, sid, triples, vickreyBids } }),
  );
  return meshAndCollect(workers);
}

/** Triples/s and bytes per triple through session.preprocess; the Vickrey auction end to end. */
async function sdkCases(root, row, quick) {
  for (const n of quick ? [2] : [2, 3]) {
    const k = quick ? 2048 : n === 2 ? 8192 : 2048;
    const bids = n === 2 ? (quick ? [2, 10] : [2, 10, 30, 100]) : quick ? [] : [3, 10];
    const results = await withSdkWorkers(root, n, k, bids);
    const kase = `triples-fp-${n}p`;
    row(kase, 'throughput', k / Math.max(...results.map((r) => r.triplesSecs)), 'triples/s', 'wasm-node', 'sdk-workers-ws');
    const bytes = results.reduce((a, r) => a + r.bytes, 0) / k;
    row(kase, 'communication', bytes, 'bytes/triple', 'wasm-node', 'sdk-workers-ws');
    row(kase, 'communication_vs_paper', bytes / paperBytes(n), 'x', 'wasm-node', 'sdk-workers-ws');
    for (const [i, v] of results[0].vickrey.entries()) {
      const values = Array.from({ length: v.bids }, (_, j) => (j * 2654435761) % 1000003);
      const max = Math.max(...values);
      const winner = values.indexOf(max);
      const price = Math.max(0, ...values.filter((_, j) => j !== winner));
      if (results.some((r) => r.vickrey[i].winner !== winner || r.vickrey[i].price !== price)) throw new Error('mascot bench: wrong auction result (SDK)');
      const ms = Math.max(...results.map((r) => r.vickrey[i].ms));
      row(`vickrey-${v.bids}-bids-${n}p`, 'time_end_to_end', ms, 'ms', 'wasm-node', 'sdk-workers-ws');
    }
    row(`setup-fp-${n}p`, 'time', Math.max(...results.map((r) => r.setupMs)), 'ms', 'wasm-node', 'sdk-workers-ws');
  }
}

if (!isMainThread && workerData?.party !== undefined) {
  await (workerData.sdk ? sdkWorkerMain() : workerMain());
}
