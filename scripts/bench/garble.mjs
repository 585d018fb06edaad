// The `garble` suite: half-gates garbling and evaluation throughput (AND gates per second; XOR
// and INV are free), with garbler and evaluator in one process on one thread and no network or
// OT, measured in the same run:
//   wasm-node  in-wasm-memory  GarbleLocalBench (webmpc-baseline): webmpc_garble::local::
//                              garble_and_evaluate inside the Wasm instance, chunk by chunk as
//                              the protocol does;
//   native                     the same Rust function natively (bench-garble's `garble` rows,
//                              best of 4 runs of the binary, 2 before and 2 after the Wasm
//                              rounds): the baseline for the ratio.
// The evaluator's rate is derived: time(garble + evaluate) − time(garble) per AND gate.
// Circuits: AES-128 and SHA-256 from /work/shared/circuits/bristol_fashion (native: AES only).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { measureInterleaved } from './measure.mjs';

const SUITE = 'garble';
const IMPL = 'webmpc-halfgates';

export function circuitsDir(root) {
  const candidates = [process.env.WEBMPC_CIRCUITS, join(root, '..', 'shared', 'circuits', 'bristol_fashion'), '/work/shared/circuits/bristol_fashion'];
  const dir = candidates.find((d) => d && existsSync(join(d, 'aes_128.txt')));
  if (!dir) throw new Error('Bristol circuits not found (set WEBMPC_CIRCUITS to the bristol_fashion directory)');
  return dir;
}

/**
 * bench-garble's rows for `suite`, best of `times` runs of the binary (highest throughput,
 * lowest time): each of its samples is only tens of milliseconds, so one busy moment of the
 * other core would otherwise decide the native figure and the ratio. Pass the returned map back
 * in to add more runs (e.g. before and after the Wasm measurement).
 * @returns {Map<string, object>} rows by case and metric
 */
export function nativeRows(root, suite, times = 3, best = new Map()) {
  const bin = join(root, 'wasm', 'target', 'release', 'bench-garble');
  for (let i = 0; i < times; i++) {
    const r = spawnSync(bin, [join(circuitsDir(root), 'aes_128.txt')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`bench-garble failed: ${r.stderr || r.error}`);
    for (const line of r.stdout.split('\n').filter(Boolean)) {
      const row = JSON.parse(line);
      if (row.suite !== suite) continue;
      const key = `${row.case}\t${row.metric}`;
      const prev = best.get(key);
      const better = !prev || (row.metric === 'throughput' ? row.value > prev.value : row.metric === 'time' ? row.value < prev.value : false);
      if (better) best.set(key, row);
    }
  }
  return best;
}

/** Loads the never-shipped baseline module (benchmark-only code) from `gen`. */
export async function loadBaseline(gen) {
  const mod = await import(pathToFileURL(join(gen, 'baseline.js')).href);
  await mod.default({ module_or_path: await readFile(join(gen, 'baseline_bg.wasm')) });
  return mod;
}

export async function run({ root, emit, quick }) {
  const row = (kase, metric, value, unit, runtime = 'wasm-node', impl = 'in-wasm-memory') =>
    emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl });
  const dir = circuitsDir(root);

  // 1. Native, from the Rust bench binary (AES-128 only): best of 2 runs of it before the Wasm
  //    measurement and 2 after (1 + 1 with --quick), so a burst of load on the other core
  //    during one of them does not decide the baseline. Emitted after the Wasm rows are timed.
  const nativeBest = nativeRows(root, SUITE, quick ? 1 : 2);

  // 2. Wasm: both circuits' garble and garble+evaluate loops timed in interleaved rounds, best
  //    round per case (noise on the shared VM only ever slows a sample).
  const baseline = await loadBaseline(join(root, 'dist', 'wasm-gen'));
  const circuits = [
    ['aes128', 'aes_128.txt', 20],
    ['sha256', 'sha256.txt', 1],
  ];
  const benches = [];
  const cases = {};
  for (const [name, file, reps] of circuits) {
    const bench = new baseline.GarbleLocalBench(await readFile(join(dir, file), 'utf8'));
    benches.push(bench);
    const ands = bench.andGates;
    const bytes = bench.garble(1);
    cases[`${name}:g`] = { fn: () => bench.garble(reps), units: ands * reps };
    cases[`${name}:ge`] = { fn: () => bench.garbleAndEvaluate(reps), units: ands * reps };
    cases[`${name}:meta`] = { ands, bytes };
  }
  const timed = Object.fromEntries(Object.entries(cases).filter(([k]) => !k.endsWith(':meta')));
  const rate = measureInterleaved(timed, quick ? { rounds: 3, millis: 150, warmupMillis: 300 } : { rounds: 9, millis: 300, warmupMillis: 600 });
  const native = {};
  for (const r of nativeRows(root, SUITE, quick ? 1 : 2, nativeBest).values()) {
    emit(r);
    if (r.metric === 'throughput') native[r.case] = r.value;
  }
  for (const [name] of circuits) {
    const g = rate[`${name}:g`];
    const ge = rate[`${name}:ge`];
    // Seconds per AND: evaluation = (garble + evaluate) − garble.
    const e = 1 / (1 / ge - 1 / g);
    const { ands, bytes } = cases[`${name}:meta`];
    row(`${name}-garble`, 'throughput', g / 1e6, 'M AND/s');
    row(`${name}-evaluate`, 'throughput', e / 1e6, 'M AND/s');
    row(`${name}-garble-and-evaluate`, 'throughput', ge / 1e6, 'M AND/s');
    row(name, 'and_gates', ands, 'AND');
    row(name, 'communication', bytes / ands, 'bytes/AND');
    for (const [kase, v] of [
      [`${name}-garble`, g],
      [`${name}-evaluate`, e],
    ]) {
      if (native[kase]) row(kase, 'ratio_native_to_wasm', native[kase] / (v / 1e6), 'x');
    }
  }
  for (const b of benches) b.free();
}
