// Timing shared by the benchmark suites. Browser-safe (no Node imports): the wasm-chromium rows
// run this same code inside the page.

/**
 * Measures several cases in interleaved rounds (each round times every case once, for about
 * `millis`), after a warm-up long enough for V8 to tier the Wasm up to TurboFan, and returns
 * each case's best rate. Interleaving and best-of make ratios between cases (ours vs baseline,
 * tccr vs AES) robust to the other core's load on a 2-core VM: noise only ever slows a sample.
 * @param {Record<string, {fn: () => unknown, units: number}>} cases units processed per call
 * @returns {Record<string, number>} units per second
 */
export function measureInterleaved(cases, { rounds = 7, millis = 150, warmupMillis = 500 } = {}) {
  const spin = ({ fn, units }, ms) => {
    let calls = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < ms) {
      fn();
      calls += 1;
      t = performance.now();
    }
    return (calls * units) / ((t - t0) / 1000);
  };
  for (const c of Object.values(cases)) spin(c, warmupMillis);
  const best = Object.fromEntries(Object.keys(cases).map((k) => [k, 0]));
  for (let r = 0; r < rounds; r++) {
    for (const [k, c] of Object.entries(cases)) best[k] = Math.max(best[k], spin(c, millis));
  }
  return best;
}

/**
 * Node only: wall seconds and the process's CPU seconds (`process.cpuUsage` counts every thread
 * of the process, engine workers included) spent while `fn` runs, and its result.
 */
export async function timedWithCpu(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const out = await fn();
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1e6, out };
}
