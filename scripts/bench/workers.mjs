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
import { authgcAes128, authgcTriples, loadSdk, mascotTriples, tripleRows } from './sessions.mjs';

const SUITE = 'workers';

export async function run({ root, emit, quick }) {
  const sdk = await loadSdk(root);
  const { aes128Circuit } = await import(pathToFileURL(join(root, 'dist', 'circuit', 'index.js')).href);
  const row = (c, metric, value, unit, impl) => emit({ suite: SUITE, case: c, metric, value, unit, runtime: 'wasm-node', impl });
  const modes = [{ worker: false, threads: 1, impl: 'in-thread' }, ...[1, 2, 4].map((k) => ({ worker: true, threads: k, impl: `workers-k${k}` }))];

  // MASCOT triples and authgc AND triples (see ./sessions.mjs for what each measures).
  const N = quick ? 2048 : 8192;
  const A = quick ? 20_000 : 60_000;
  for (const [kase, count, measure] of [
    ['mascot-triples', N, (m) => mascotTriples(sdk, { ...m, triples: N })],
    ['authgc-triples', A, (m) => authgcTriples(sdk, { ...m, andGates: A })],
  ]) {
    let base;
    for (const mode of modes) {
      const r = await measure(mode);
      const perCpu = tripleRows((metric, value, unit) => row(kase, metric, value, unit, mode.impl), count, r);
      if (mode.impl === 'workers-k1') base = perCpu;
      if (base && mode.threads > 1) row(kase, 'efficiency-vs-k1', perCpu / base, 'ratio', mode.impl);
    }
  }

  // authgc AES-128 end to end, in workers against in-thread (see ./sessions.mjs).
  const aes = sdk.prepareCircuit(aes128Circuit());
  for (const worker of [false, true]) {
    const r = await authgcAes128(sdk, aes, { worker, threads: 1, reps: quick ? 3 : 7 });
    const impl = worker ? 'workers' : 'in-thread';
    row('authgc-aes128', 'time-median', r.time, 'ms', impl);
    row('authgc-aes128', 'session-start-median', r.start, 'ms', impl);
  }
}
