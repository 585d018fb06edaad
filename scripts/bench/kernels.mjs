// The `kernels` suite: AES-128, the CR/CCR/TCCR hashes, the PRG, transpose and GF(2^128), in
// Wasm under Node and in Chromium, each beside RustCrypto's AES compiled to Wasm (the AES peer
// SDKs ship), and natively (AES-NI and the portable bitsliced path, beside RustCrypto native).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { kernelCases, BLOCKS } from './kernel-cases.mjs';
import { measureInterleaved } from './measure.mjs';

const SUITE = 'kernels';

async function loadModule(dir, name) {
  const mod = await import(join(dir, `${name}.js`));
  await mod.default({ module_or_path: await readFile(join(dir, `${name}_bg.wasm`)) });
  return mod;
}

// The page imports the modules and the shared bench code from the static server, measures, and
// leaves the rates (or an error) on window.benchResult.
const PAGE = (timing) => `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
  try {
    const ours = await import('/pkg/webmpc.js');
    const baseline = await import('/pkg/baseline.js');
    await ours.default();
    await baseline.default();
    const { kernelCases } = await import('/bench/kernel-cases.mjs');
    const { measureInterleaved } = await import('/bench/measure.mjs');
    const { cases, dispose } = kernelCases(ours, baseline);
    const rates = measureInterleaved(cases, ${JSON.stringify(timing)});
    dispose();
    window.benchResult = { ok: true, rates, backend: ours.backendName(), agent: navigator.userAgent };
  } catch (e) {
    window.benchResult = { ok: false, error: String((e && e.stack) || e) };
  }
</script></head><body>webmpc kernels bench</body></html>`;

async function measureInChromium(root, timing) {
  const { CHROMIUM, launch } = await import('../lib/chromium.mjs');
  const { serveStatic } = await import('../lib/static-server.mjs');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (scripts/setup.sh --browser installs it)`);
  const server = await serveStatic(
    { '/pkg/': join(root, 'dist', 'wasm-gen'), '/bench/': join(root, 'scripts', 'bench') },
    { '/': PAGE(timing) },
  );
  const browser = await launch();
  try {
    await browser.page.goto(`${server.url}/`);
    await browser.page.waitForFunction(() => window.benchResult !== undefined, undefined, { timeout: 300_000 });
    const result = await browser.page.evaluate(() => window.benchResult);
    if (!result.ok) throw new Error(`in the page: ${result.error}`);
    return result;
  } finally {
    await browser.close();
    await server.close();
  }
}

export async function run({ root, emit, quick }) {
  const timing = quick ? { rounds: 3, millis: 80, warmupMillis: 300 } : { rounds: 9, millis: 150, warmupMillis: 600 };
  // The clock we convert to cycles/byte with: the nominal frequency the kernel reports.
  const mhz = cpus()[0]?.speed || 2000;
  const row = (kase, metric, value, unit, runtime, impl) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl });
  const throughput = (kase, mbs, runtime, impl) => {
    row(kase, 'throughput', mbs, 'MB/s', runtime, impl);
    row(kase, 'cycles_per_byte', mhz / mbs, `cycles/B @${mhz}MHz`, runtime, impl);
  };
  const wasmRows = (rate, runtime, backend) => {
    const mbs = (k) => rate[k] / 1e6;
    throughput('aes128-ecb-4096', mbs('aes'), runtime, backend);
    throughput('aes128-ecb-4096', mbs('baseline'), `rustcrypto-aes-${runtime}`, 'rustcrypto-aes-0.8-soft');
    row('aes128-ecb-4096', 'speedup_vs_rustcrypto_wasm', rate.aes / rate.baseline, 'x', runtime, backend);
    throughput('aes128-fixed-key-ecb-4096', mbs('aesFixed'), runtime, backend);
    // The same ciphers timed inside Wasm (no JS/Wasm copies): the kernels alone.
    throughput('aes128-ecb-4096-in-wasm-loop', mbs('kernelOurs'), runtime, backend);
    throughput('aes128-ecb-4096-in-wasm-loop', mbs('kernelBaseline'), `rustcrypto-aes-${runtime}`, 'rustcrypto-aes-0.8-soft');
    row('aes128-ecb-4096-in-wasm-loop', 'speedup_vs_rustcrypto_wasm', rate.kernelOurs / rate.kernelBaseline, 'x', runtime, backend);
    for (const [k, kase] of [['cr', 'cr-4096'], ['ccr', 'ccr-4096'], ['tccr', 'tccr-4096']]) {
      throughput(kase, mbs(k), runtime, backend);
      row(kase, 'ratio_to_fixed_key_aes', rate[k] / rate.aesFixed, 'x', runtime, backend);
    }
    throughput('prg-aes-ctr-64KiB', mbs('prg'), runtime, backend);
    throughput('transpose-128x65536', mbs('transpose'), runtime, 'core');
    row(`gf128-mul-${BLOCKS}`, 'throughput', rate.gfMul / 1e6, 'Mmul/s', runtime, 'core');
    row(`gf128-inner-product-${BLOCKS}`, 'throughput', rate.gfInner / 1e6, 'Mmul/s', runtime, 'core');
  };

  const gen = join(root, 'dist', 'wasm-gen');
  const ours = await loadModule(gen, 'webmpc');
  const baseline = await loadModule(gen, 'baseline');
  const { cases, dispose } = kernelCases(ours, baseline);
  const nodeRate = measureInterleaved(cases, timing);
  dispose();
  wasmRows(nodeRate, 'wasm-node', ours.backendName());

  const page = await measureInChromium(root, timing);
  wasmRows(page.rates, 'wasm-chromium', page.backend);

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
  if (nativeAes) {
    row('aes128-fixed-key-ecb-4096', 'ratio_wasm_to_native', nodeRate.aesFixed / 1e6 / nativeAes, 'x', 'wasm-node', ours.backendName());
  }
}
