// The `yao` suite: AES-128 as a semi-honest 2PC (half-gates Yao, `protocol: 'yao2pc'`): party 0
// garbles and supplies input 1 (128 bits), party 1 evaluates and supplies input 2 (128 bits);
// both learn the output. Measured in the same run:
//   wasm-node  sdk-memory        both parties in this process through the SDK (`session`,
//                                `Session.run`) over the JS in-memory transport: one thread does
//                                both parties' work;
//   wasm-node  sdk-webrtc-node   the two parties in two Node processes (one core each) over
//                                WebRTC on loopback (node-datachannel, via the signaling server);
//   native                       the same Rust protocol natively, both parties on one thread over
//                                the Rust in-memory channel (bench-garble's `yao` rows, best of 3).
// "first" is a fresh session's first run: session-id agreement, the 128 base OTs and the run.
// "amortised" is the mean of the next 100 runs in that session (20 with --quick).
// Communication is counted at the transport (both directions, sdk-memory).
//
// `--threads k[,k...]` runs only the parallel-runs case instead: 64 independent AES-128 runs (16
// with --quick) in one `session.runMany` call, 2 parties in this process, each session in its
// engine worker with threads = k (k chunks of the runs, each in a worker of its own; rows with
// `threads`): wall time, runs/s and runs per CPU-second of the whole process (./sessions.mjs);
// then the same runs with teleport-yao (semi-honest), the simulation enclave-server in this
// process (at most 4 instances: one enclave session each).
//
// This file is also the WebRTC peer: `node yao.mjs --peer '<json>'` runs party 1.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { circuitsDir, nativeRows } from './garble.mjs';
import { loadSdk, yaoRunMany } from './sessions.mjs';
import { trafficRows } from './traffic.mjs';

const SUITE = 'yao';
const SELF = fileURLToPath(import.meta.url);

/** A Transport that counts the bytes it sends. */
function counting(t) {
  const c = {
    sent: 0,
    party: t.party,
    parties: t.parties,
    closed: t.closed,
    send(to, data) {
      c.sent += data.byteLength;
      return t.send(to, data);
    },
    recv: (from, options) => t.recv(from, options),
    close: (reason) => t.close(reason),
  };
  return c;
}

// Fixed inputs: FIPS-197 C.1's key and plaintext (any value would do; these make output checkable).
const KEY = Uint8Array.from(Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex'));
const PLAIN = Uint8Array.from(Buffer.from('00112233445566778899aabbccddeeff', 'hex'));
const input = (party) => (party === 0 ? KEY : PLAIN);

/** One party: opens a session on `t` and runs the circuit 1 + `runs` times; returns timings. */
async function party(sdk, t, circuit, runs) {
  const inputs = [input(t.party)];
  const t0 = performance.now();
  const s = await sdk.session({ transport: t, party: t.party, parties: 2 });
  const out = await s.run(circuit, { inputs, protocol: 'yao2pc' });
  const first = performance.now() - t0;
  const t1 = performance.now();
  for (let i = 0; i < runs; i++) await s.run(circuit, { inputs, protocol: 'yao2pc' });
  const amortised = (performance.now() - t1) / runs;
  s.free();
  return { first, amortised, out: out[0] };
}

async function peerMain(config) {
  const { root, circuitPath, options, runs } = config;
  const sdk = await loadSdk(root);
  const net = await import(pathToFileURL(join(root, 'dist', 'net', 'node.js')).href);
  const circuit = sdk.prepareCircuit(await readFile(circuitPath, 'utf8'));
  const t = await net.connectNodeMesh(options);
  await party(sdk, t, circuit, runs);
  // Wait for the measuring side to close (it closes after its last run completes).
  await Promise.race([t.closed, new Promise((r) => setTimeout(r, 30_000))]);
  await t.close();
  circuit.free();
  process.exit(0);
}

/** `--threads k`: `runs` AES-128 runs through one runMany call at k threads. */
async function threadsCases(root, emit, quick, threads) {
  const sdk = await loadSdk(root);
  const runs = quick ? 16 : 64;
  const row = (kase, metric, value, unit) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime: 'wasm-node', impl: 'sdk-workers-memory', threads });
  const aes = sdk.prepareCircuit(await readFile(join(circuitsDir(root), 'aes_128.txt'), 'utf8'));
  const { startEnclaveServer } = await import(pathToFileURL(join(root, 'dist', 'enclave', 'server.js')).href);
  const server = await startEnclaveServer({ backend: 'simulation', port: 0, log: () => {} });
  const enclave = { url: server.url, policy: { simulatedMeasurements: [server.measurement] }, allowSimulatedEnclave: true };
  try {
    for (const [protocol, extra, kase] of [
      ['yao2pc', {}, `aes128-2pc-runmany-${runs}`],
      ['teleport-yao', { mode: 'semi-honest', enclave }, `aes128-teleport-runmany-${runs}`],
    ]) {
      const r = await yaoRunMany(sdk, aes, { worker: true, threads, runs, protocol, extra });
      row(kase, 'time', r.wall * 1000, 'ms');
      row(kase, 'throughput', runs / r.wall, 'runs/s');
      row(kase, 'throughput-per-cpu', runs / r.cpu, 'runs/cpu-s');
    }
  } finally {
    aes.free();
    await server.close();
  }
}

export async function run({ root, emit, quick, threads }) {
  if (threads !== undefined) {
    for (const k of threads) await threadsCases(root, emit, quick, k);
    return;
  }
  const row = (kase, metric, value, unit, impl) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime: 'wasm-node', impl });
  const runs = quick ? 20 : 100;
  const circuitPath = join(circuitsDir(root), 'aes_128.txt');
  const text = await readFile(circuitPath, 'utf8');

  // 1. Native, from the Rust bench binary: best of 3 runs of it (1 with --quick).
  const native = {};
  for (const r of nativeRows(root, SUITE, quick ? 1 : 3).values()) {
    emit(r);
    native[r.case] = r.value;
  }

  const sdk = await loadSdk(root);
  const c0 = sdk.prepareCircuit(text);
  const c1 = sdk.prepareCircuit(text);
  const expected = c0.evaluate([KEY, PLAIN])[0];
  const andGates = andCount(text);
  const check = (out, where) => {
    if (!out || Buffer.compare(Buffer.from(out), Buffer.from(expected)) !== 0) {
      throw new Error(`yao bench: ${where} output ${out && Buffer.from(out).toString('hex')} != ${Buffer.from(expected).toString('hex')}`);
    }
  };

  // 2. SDK over the in-memory transport, both parties here.
  {
    const [a, b] = sdk.createMemoryTransports(2, { recvTimeoutMs: 120_000 }).map(counting);
    const [p0, p1] = await Promise.all([party(sdk, a, c0, 0), party(sdk, b, c1, 0)]);
    check(p0.out, 'memory garbler');
    check(p1.out, 'memory evaluator');
    const afterFirst = a.sent + b.sent;
    // Then a fresh session in the warmed-up process: its first run, then `runs` runs. Bytes per
    // run = (this session's bytes − the first session's) / runs (the protocol is deterministic
    // in size).
    const [a2, b2] = sdk.createMemoryTransports(2, { recvTimeoutMs: 120_000 }).map(counting);
    const [q0, q1] = await Promise.all([party(sdk, a2, c0, runs), party(sdk, b2, c1, runs)]);
    const total = a2.sent + b2.sent;
    const perRun = (total - afterFirst) / runs;
    const memFirst = Math.max(q0.first, q1.first);
    const memAm = Math.max(q0.amortised, q1.amortised);
    row('aes128-2pc-memory-first-cold', 'time', Math.max(p0.first, p1.first), 'ms', 'sdk-memory');
    row('aes128-2pc-memory-first', 'time', memFirst, 'ms', 'sdk-memory');
    row(`aes128-2pc-memory-amortised-${runs}`, 'time', memAm, 'ms', 'sdk-memory');
    const nat = native['aes128-2pc-memory-amortised-100'];
    if (nat) row(`aes128-2pc-memory-amortised-${runs}`, 'ratio_native_to_wasm', memAm / nat, 'x', 'sdk-memory');
    const natFirst = native['aes128-2pc-memory-first'];
    if (natFirst) row('aes128-2pc-memory-first', 'ratio_native_to_wasm', memFirst / natFirst, 'x', 'sdk-memory');
    row('aes128-2pc', 'communication_per_run', perRun / 1024, 'KiB', 'sdk-memory');
    row('aes128-2pc', 'communication_per_and', perRun / andGates, 'bytes/AND', 'sdk-memory');
    row('aes128-2pc', 'communication_first_run', afterFirst / 1024, 'KiB', 'sdk-memory');
    for (const t of [a, b, a2, b2]) await t.close();
  }

  // Rounds and bytes per phase (./traffic.mjs): a fresh session's first run, then a second.
  {
    const circuits = [c0, c1];
    const aes = { run: (s, p) => s.run(circuits[p], { inputs: [input(p)], protocol: 'yao2pc' }) };
    await trafficRows(sdk, {
      parties: 2,
      ops: [{ case: 'aes128-2pc-memory-first', ...aes }, { case: 'aes128-2pc-memory-second', ...aes }],
      row: (kase, metric, value, unit, extra) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime: 'wasm-node', impl: 'sdk-memory', ...extra }),
    });
  }

  // 3. Two Node processes over WebRTC (node-datachannel) on loopback.
  const net = await import(pathToFileURL(join(root, 'dist', 'net', 'node.js')).href);
  const server = await net.startSignalingServer();
  let child;
  try {
    const room = `bench-yao-${randomBytes(6).toString('hex')}`;
    const options = { signalingUrl: server.url, room, parties: 2 };
    child = spawn(process.execPath, [SELF, '--peer', JSON.stringify({ root, circuitPath, options: { ...options, party: 1 }, runs })], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const tc = performance.now();
    const t = await net.connectNodeMesh({ ...options, party: 0 });
    const connect = performance.now() - tc;
    const r = await party(sdk, t, c0, runs);
    check(r.out, 'webrtc garbler');
    await t.close();
    await Promise.race([exited, new Promise((res) => setTimeout(res, 10_000))]);
    row('webrtc-connect', 'time', connect, 'ms', 'sdk-webrtc-node');
    row('aes128-2pc-webrtc-first', 'time', r.first, 'ms', 'sdk-webrtc-node');
    row(`aes128-2pc-webrtc-amortised-${runs}`, 'time', r.amortised, 'ms', 'sdk-webrtc-node');
  } catch (err) {
    process.stderr.write(`bench yao: webrtc failed: ${err?.stack ?? err}\n`);
  } finally {
    child?.kill('SIGKILL');
    await server.close();
  }
  c0.free();
  c1.free();
}

function andCount(bristol) {
  let n = 0;
  for (const line of bristol.split('\n')) if (line.trimEnd().endsWith(' AND')) n++;
  return n;
}

if (process.argv[1] === SELF && process.argv[2] === '--peer') {
  await peerMain(JSON.parse(process.argv[3]));
}
