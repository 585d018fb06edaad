// Sessions through the SDK, every party in this process over in-memory transports, and what
// their work costs in wall time and CPU time. Shared by the `workers` suite (threads k = 1, 2, 4
// against in-thread) and the protocol suites' `--threads k` rows (mascot, authgc, yao): one
// measurement, so their figures compare.
//
// With `worker: true` (the SDK's default) each session runs in its own engine worker, and with
// `threads: k > 1` the protocols with parallel instances (MASCOT, authgc; yao2pc's runMany) add
// k − 1 instance workers per party. CPU time is the whole process's (`process.cpuUsage`: every thread, the
// workers' included), so a figure per CPU-second says what the work costs however it is spread.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { timedWithCpu } from './measure.mjs';

/** The built SDK (`dist/`), initialised. */
export async function loadSdk(root) {
  const sdk = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
  await sdk.init();
  return sdk;
}

/** `parties` connected sessions with `options` (worker, threads), ready; `close` ends them all. */
export async function sessionGroup(sdk, parties, options) {
  const ts = sdk.createMemoryTransports(parties, { recvTimeoutMs: 600_000 });
  const s = await Promise.all(ts.map((transport, party) => sdk.session({ transport, party, parties, ...options })));
  await Promise.all(s.map((x) => x.ready()));
  return { s, close: () => Promise.all(s.map((x) => x.close())) };
}

/** Wall seconds and process CPU seconds (every thread) of `fn`, and its value. */
export const timed = timedWithCpu;

/**
 * MASCOT preprocessing of `triples` triples, 2 parties, through `session.preprocess`: a warm-up
 * batch sets up (base OTs, COPE per instance), then the measured call makes `triples` more on
 * set-up parties and instances. Returns `{ wall, cpu }` of the measured call.
 */
export async function mascotTriples(sdk, { worker, threads, triples }) {
  const g = await sessionGroup(sdk, 2, { worker, threads });
  try {
    await Promise.all(g.s.map((x) => x.preprocess('mascot', { triples: 256 })));
    return await timed(() => Promise.all(g.s.map((x) => x.preprocess('mascot', { triples }))));
  } finally {
    await g.close();
  }
}

/**
 * authgc function-independent preprocessing of `andGates` AND triples, 2 parties: a warm-up big
 * enough to split four ways sets up the primary and every instance (base OTs, Δ-OT, the
 * Π_aShare check); the measured call makes `andGates` more, shared out over the threads (AND
 * triples only: masks are cheap aBits). Returns `{ wall, cpu }` of the measured call.
 */
export async function authgcTriples(sdk, { worker, threads, andGates }) {
  const g = await sessionGroup(sdk, 2, { worker, threads });
  try {
    await Promise.all(g.s.map((x) => x.preprocess('authgc', { andGates: 16_000, masks: 0 })));
    return await timed(() => Promise.all(g.s.map((x) => x.preprocess('authgc', { andGates, masks: 0 }))));
  } finally {
    await g.close();
  }
}

/**
 * yao2pc AES-128 (a prepared circuit), 2 parties, `runs` independent runs in one
 * `session.runMany` call: a warm-up call of as many runs sets up the primary and every instance
 * (base OTs) and warms V8 up; the measured call reuses those setups (with k threads: k chunks,
 * each in a worker of its own). Returns `{ wall, cpu }` of the measured call.
 */
export async function yaoRunMany(sdk, aes, { worker, threads, runs, protocol = 'yao2pc', extra = {} }) {
  const keys = Array.from({ length: runs }, (_, r) => [new Uint8Array(16).fill(r & 255)]);
  const blocks = Array.from({ length: runs }, (_, r) => [new Uint8Array(16).fill((r * 7) & 255)]);
  const g = await sessionGroup(sdk, 2, { worker, threads });
  try {
    const once = () => Promise.all(g.s.map((x, p) => x.runMany(aes, { protocol, ...extra, inputs: p === 0 ? keys : blocks })));
    await once();
    const r = await timed(once);
    // A bench of wrong answers measures nothing: every run's ciphertext, at both parties, against
    // the circuit evaluated in the clear.
    for (const [p, outs] of r.out.entries()) {
      outs.forEach((o, i) => {
        const want = aes.evaluate([keys[i][0], blocks[i][0]])[0];
        if (Buffer.compare(Buffer.from(o[0]), Buffer.from(want)) !== 0) throw new Error(`${protocol} runMany bench: party ${p}, run ${i}: wrong output`);
      });
    }
    return r;
  } finally {
    await g.close();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * authgc AES-128 (a prepared circuit), 2 parties, end to end (set-up: base OTs, OT extension;
 * preprocessing; garbling; online), `reps` times after one run that warms V8 up, each on fresh
 * sessions whose workers are already running (a page opens its session before the user presses
 * the button). Returns the medians: `time` (ms) and `cpu` (process CPU-seconds) of the run,
 * `start` (ms), the sessions' start-up (their workers') measured apart, and with `again`, the
 * same figures of a second run on the same sessions (`againTime`, `againCpu`: set up already,
 * instance workers included).
 */
export async function authgcAes128(sdk, aes, { worker, threads, reps, again = false }) {
  const key = new Uint8Array(16).fill(1);
  const block = new Uint8Array(16).fill(2);
  const times = [];
  const cpus = [];
  const starts = [];
  const againTimes = [];
  const againCpus = [];
  for (let i = 0; i <= reps; i++) {
    const t0 = performance.now();
    const g = await sessionGroup(sdk, 2, { worker, threads });
    const started = performance.now() - t0;
    try {
      const once = () => timed(() => Promise.all(g.s.map((x, p) => x.run(aes, { protocol: 'authgc', inputs: [p === 0 ? key : block] }))));
      const r = await once();
      const r2 = again ? await once() : undefined;
      if (i > 0) {
        times.push(r.wall * 1000);
        cpus.push(r.cpu);
        starts.push(started);
        if (r2) {
          againTimes.push(r2.wall * 1000);
          againCpus.push(r2.cpu);
        }
      }
    } finally {
      await g.close();
    }
  }
  return { time: median(times), cpu: median(cpus), start: median(starts), againTime: median(againTimes), againCpu: median(againCpus) };
}

/**
 * Rows for one protocol's triples at `threads`: wall time, triples/s and triples per CPU-second
 * (`row(metric, value, unit)`); returns the per-CPU-second rate.
 */
export function tripleRows(row, count, r) {
  const perCpu = count / r.cpu;
  row('time', r.wall * 1000, 'ms');
  row('throughput', count / r.wall, 'triples/s');
  row('throughput-per-cpu', perCpu, 'triples/cpu-s');
  return perCpu;
}
