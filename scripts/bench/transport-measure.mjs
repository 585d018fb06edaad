// The transport suite's measurements, browser-safe (no Node imports): Node runs them against its
// transports and the Chromium rows run them inside the page.

const MIB = 1024 * 1024;

/**
 * Runs the standard cases against `t` talking to party `other`, which echoes (see
 * transport-peer.mjs). Browser-safe: the Chromium rows run this same function in the page.
 * `mark(name)`, if given, is awaited at the start and end of each throughput case
 * (`one:start`, `one:end`, `many:start`, `many:end`), so the caller can account CPU time.
 */
export async function measure(t, other, { quick, mark = async () => {} }) {
  const now = () => performance.now();
  const big = new Uint8Array(64 * MIB);
  const mib = new Uint8Array(MIB);
  for (let i = 0; i < big.length; i += 4096) big[i] = i & 0xff;
  const results = {};
  const runs = quick ? 1 : 3;
  // Warm-up: connection windows, JIT.
  await t.send(other, mib);
  await t.recv(other);
  let best = 0;
  await mark('one:start');
  for (let r = 0; r < runs; r++) {
    const t0 = now();
    await Promise.all([t.send(other, big), t.recv(other, { timeoutMs: 300_000 })]);
    best = Math.max(best, big.length / 1e6 / ((now() - t0) / 1000));
  }
  await mark('one:end');
  results.one = best;
  best = 0;
  await mark('many:start');
  for (let r = 0; r < runs; r++) {
    const t0 = now();
    const acks = (async () => {
      for (let i = 0; i < 64; i++) await t.recv(other, { timeoutMs: 300_000 });
    })();
    for (let i = 0; i < 64; i++) await t.send(other, mib);
    await acks;
    best = Math.max(best, (64 * MIB) / 1e6 / ((now() - t0) / 1000));
  }
  await mark('many:end');
  results.many = best;
  results.megabytes = (runs * 64 * MIB) / 1e6;
  const ping = new Uint8Array(32);
  const samples = [];
  const n = quick ? 50 : 300;
  for (let i = 0; i < n + 20; i++) {
    const t0 = now();
    await t.send(other, ping);
    await t.recv(other);
    if (i >= 20) samples.push(now() - t0);
  }
  samples.sort((a, b) => a - b);
  results.rtt = samples[Math.floor(samples.length / 2)];
  return results;
}
