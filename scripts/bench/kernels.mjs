// The `kernels` suite: AES-128, the CR/CCR/TCCR hashes, the PRG, transpose and GF(2^128), in
// Wasm under Node beside RustCrypto's AES compiled to Wasm (the AES peer SDKs ship), and natively.
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assumedClockMHz, measureInterleaved } from './measure.mjs';

const SUITE = 'kernels';
const BLOCKS = 4096;
const BYTES = BLOCKS * 16;

async function loadModule(root, name) {
  const dir = join(root, 'dist', 'wasm-gen');
  const mod = await import(join(dir, `${name}.js`));
  await mod.default({ module_or_path: await readFile(join(dir, `${name}_bg.wasm`)) });
  return mod;
}

export async function run({ root, emit, quick }) {
  const timing = quick ? { rounds: 3, millis: 80, warmupMillis: 300 } : { rounds: 9, millis: 150, warmupMillis: 600 };
  const mhz = assumedClockMHz();
  const ours = await loadModule(root, 'webmpc');
  const baseline = await loadModule(root, 'baseline');
  const row = (kase, metric, value, unit, runtime, impl) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl });
  const throughput = (kase, mbs, runtime, impl) => {
    row(kase, 'throughput', mbs, 'MB/s', runtime, impl);
    row(kase, 'cycles_per_byte', mhz / mbs, `cycles/B @${mhz}MHz`, runtime, impl);
  };

  const data = ours.randomBytes(BYTES);
  const other = ours.randomBytes(BYTES);
  const key = ours.randomBytes(16);
  const tweak = new Uint8Array(16);
  const backend = ours.backendName();
  const n = 1 << 16;
  const rows128 = ours.randomBytes(16 * n);
  const prg = new ours.Prg(key);

  // Ours and the baseline share the call shape (bytes in, bytes out), so both pay the same
  // copy across the JS/Wasm boundary: the ratio compares the ciphers.
  const rate = measureInterleaved(
    {
      aes: { fn: () => ours.aesEncrypt(key, data), units: BYTES },
      aesFixed: { fn: () => ours.aesFixedKeyEncrypt(data), units: BYTES },
      baseline: { fn: () => baseline.rustcryptoAesEncrypt(key, data), units: BYTES },
      cr: { fn: () => ours.hashCr(data), units: BYTES },
      ccr: { fn: () => ours.hashCcr(data), units: BYTES },
      tccr: { fn: () => ours.hashTccrCounter(data, tweak), units: BYTES },
      prg: { fn: () => prg.fillBytes(BYTES), units: BYTES },
      transpose: { fn: () => ours.transpose128xN(rows128, n), units: 16 * n },
      gfMul: { fn: () => ours.gf128Mul(data, other), units: BLOCKS },
      gfInner: { fn: () => ours.gf128InnerProduct(data, other), units: BLOCKS },
    },
    timing,
  );
  prg.free();
  const mbs = (k) => rate[k] / 1e6;

  throughput('aes128-ecb-4096', mbs('aes'), 'wasm-node', backend);
  throughput('aes128-ecb-4096', mbs('baseline'), 'rustcrypto-aes-wasm-node', 'rustcrypto-aes-0.8-soft');
  row('aes128-ecb-4096', 'speedup_vs_rustcrypto_wasm', rate.aes / rate.baseline, 'x', 'wasm-node', backend);
  throughput('aes128-fixed-key-ecb-4096', mbs('aesFixed'), 'wasm-node', backend);
  for (const [k, kase] of [['cr', 'cr-4096'], ['ccr', 'ccr-4096'], ['tccr', 'tccr-4096']]) {
    throughput(kase, mbs(k), 'wasm-node', backend);
    row(kase, 'ratio_to_fixed_key_aes', rate[k] / rate.aesFixed, 'x', 'wasm-node', backend);
  }
  throughput('prg-aes-ctr-64KiB', mbs('prg'), 'wasm-node', backend);
  throughput('transpose-128x65536', mbs('transpose'), 'wasm-node', 'core');
  row('gf128-mul-4096', 'throughput', rate.gfMul / 1e6, 'Mmul/s', 'wasm-node', 'core');
  row('gf128-inner-product-4096', 'throughput', rate.gfInner / 1e6, 'Mmul/s', 'wasm-node', 'core');

  // Native rows come from the Rust bench binary, in this same run.
  const native = spawnSync(join(root, 'wasm', 'target', 'release', 'bench-kernels'), [], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_MILLIS: String(timing.millis) },
  });
  if (native.status !== 0) throw new Error(`bench-kernels failed: ${native.stderr || native.error}`);
  let nativeAes;
  for (const line of native.stdout.split('\n').filter(Boolean)) {
    const r = JSON.parse(line);
    if (r.unit === 'MB/s') throughput(r.case, r.value, r.runtime, r.impl);
    else emit(r);
    if (r.case === 'aes128-fixed-key-ecb-4096' && r.runtime === 'native' && r.impl === 'aes-ni') nativeAes = r.value;
  }
  if (nativeAes) row('aes128-fixed-key-ecb-4096', 'ratio_wasm_to_native', mbs('aesFixed') / nativeAes, 'x', 'wasm-node', backend);
}
