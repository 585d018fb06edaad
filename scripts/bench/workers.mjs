// The `workers` suite (`npm run bench -- workers`): what engine workers and parallel instances
// (`threads`) cost and gain, through the SDK, with every party's session in this one process
// over in-memory transports (each session with its own engine worker, and threads − 1 instance
// workers when it splits its work):
//   mascot-triples  MASCOT preprocessing of N triples, 2 parties, threads k = 1, 2, 4, and the
//                   in-thread mode (worker: false) as the baseline: wall time, triples/s,
//                   triples per CPU-second of the whole process (all threads), and the
//                   efficiency against k = 1 (per-CPU-second rate at k over the rate at k = 1);
//   authgc-triples  authgc function-independent preprocessing of N AND triples, 2 parties, the
//                   same modes and figures as mascot-triples (triples per CPU-second, efficiency
//                   against k = 1);
//   authgc-aes128   authgc AES-128, 2 parties, end to end (session set-up to outputs), in
//                   workers against in-thread.
// This machine has 2 cores: with 2 parties wall-clock speed-up cannot exceed 2, so efficiency
// (throughput per CPU-second) is the figure that says whether more threads waste work.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { timedWithCpu as timed } from './measure.mjs';

const SUITE = 'workers';

export async function run({ root, emit, quick }) {
  const sdk = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
  const { aes128Circuit } = await import(pathToFileURL(join(root, 'dist', 'circuit', 'index.js')).href);
  await sdk.init();
  const row = (c, metric, value, unit, impl) => emit({ suite: SUITE, case: c, metric, value, unit, runtime: 'wasm-node', impl });

  async function group(parties, options) {
    const ts = sdk.createMemoryTransports(parties, { recvTimeoutMs: 600_000 });
    const s = await Promise.all(ts.map((transport, party) => sdk.session({ transport, party, parties, ...options })));
    await Promise.all(s.map((x) => x.ready()));
    return { s, close: () => Promise.all(s.map((x) => x.close())) };
  }

  // MASCOT triples: a warm-up run sets up (base OTs, COPE per instance); the measured run
  // generates N more triples on set-up parties and instances.
  const N = quick ? 2048 : 8192;
  let base;
  for (const mode of [{ worker: false, threads: 1, impl: 'in-thread' }, ...[1, 2, 4].map((k) => ({ worker: true, threads: k, impl: `workers-k${k}` }))]) {
    const g = await group(2, { worker: mode.worker, threads: mode.threads });
    await Promise.all(g.s.map((x) => x.preprocess('mascot', { triples: 256 })));
    const r = await timed(() => Promise.all(g.s.map((x) => x.preprocess('mascot', { triples: N }))));
    await g.close();
    const perCpu = N / r.cpu;
    row('mascot-triples', 'time', r.wall * 1000, 'ms', mode.impl);
    row('mascot-triples', 'throughput', N / r.wall, 'triples/s', mode.impl);
    row('mascot-triples', 'throughput-per-cpu', perCpu, 'triples/cpu-s', mode.impl);
    if (mode.impl === 'workers-k1') base = perCpu;
    if (base && mode.threads > 1) row('mascot-triples', 'efficiency-vs-k1', perCpu / base, 'ratio', mode.impl);
  }

  // authgc AND triples: a warm-up big enough to split four ways sets up the primary and every
  // instance (base OTs, Δ-OT, the Π_aShare check); the measured call makes N more, shared out
  // over the threads (AND triples only: masks are cheap aBits).
  const A = quick ? 20_000 : 60_000;
  let abase;
  for (const mode of [{ worker: false, threads: 1, impl: 'in-thread' }, ...[1, 2, 4].map((k) => ({ worker: true, threads: k, impl: `workers-k${k}` }))]) {
    const g = await group(2, { worker: mode.worker, threads: mode.threads });
    await Promise.all(g.s.map((x) => x.preprocess('authgc', { andGates: 16_000, masks: 0 })));
    const r = await timed(() => Promise.all(g.s.map((x) => x.preprocess('authgc', { andGates: A, masks: 0 }))));
    await g.close();
    const perCpu = A / r.cpu;
    row('authgc-triples', 'time', r.wall * 1000, 'ms', mode.impl);
    row('authgc-triples', 'throughput', A / r.wall, 'triples/s', mode.impl);
    row('authgc-triples', 'throughput-per-cpu', perCpu, 'triples/cpu-s', mode.impl);
    if (mode.impl === 'workers-k1') abase = perCpu;
    if (abase && mode.threads > 1) row('authgc-triples', 'efficiency-vs-k1', perCpu / abase, 'ratio', mode.impl);
  }

  // authgc AES-128 end to end (set-up: base OTs, OT extension; preprocessing; garbling; online),
  // on fresh sessions whose workers are already running (a page opens its session before the
  // user presses the button), and, separately, the worker's start-up itself.
  const aes = sdk.prepareCircuit(aes128Circuit());
  const key = new Uint8Array(16).fill(1);
  const block = new Uint8Array(16).fill(2);
  const reps = quick ? 3 : 7;
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const worker of [false, true]) {
    const times = [];
    const starts = [];
    for (let i = 0; i <= reps; i++) {
      const t0 = performance.now();
      const g = await group(2, { worker, threads: 1 });
      const started = performance.now() - t0;
      const r = await timed(() => Promise.all(g.s.map((x, p) => x.run(aes, { protocol: 'authgc', inputs: [p === 0 ? key : block] }))));
      await g.close();
      if (i > 0) {
        // The first run warms V8 up.
        times.push(r.wall * 1000);
        starts.push(started);
      }
    }
    const impl = worker ? 'workers' : 'in-thread';
    row('authgc-aes128', 'time-median', median(times), 'ms', impl);
    row('authgc-aes128', 'session-start-median', median(starts), 'ms', impl);
  }
}
