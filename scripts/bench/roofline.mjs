// The `roofline` suite: for each protocol's unit of work, the primitive operations it needs
// (counted in the code), each primitive's throughput in Wasm (measured in this run), the ceiling
// they imply, and the fraction of it the real implementation reaches (also measured in this run).
//
//   counts   `roofline-counts` (wasm/crates/tools), built with `webmpc-core/op-count` in its own
//            target directory (wasm/target/op-count) so the shipped binaries never count: it runs
//            every unit natively with thread-local counters in the kernels and prints per-unit
//            counts. The counts are properties of the code (the Wasm build runs the same code).
//   rates    `rooflinePrimitive(name, reps)` in the bench-only baseline module: each primitive in
//            a loop inside Wasm, in the batch shape the protocols use.
//   reached  the real implementation in the same module, both (all) parties on this one thread:
//            OtLocalBench (base OTs, random OT), GarbleLocalBench (garble, garble+evaluate),
//            fpreLocalRun (authgc F_Pre AND triples), MascotLocalBench (MASCOT triples),
//            Grr3LocalBench (teleportation's GRR3 garbling and evaluation, on its level schedule
//            and, as the "before", in the gate-order walk it replaced), teleportLocalRun (a
//            teleported AES-128 session, all three parties, timed per party by webmpcBenchClock).
//   ceiling  1 / Σ_op count(op) / rate(op): the unit's rate if it did nothing but its counted
//            primitives at their measured rates. Bytes are reported per unit; with both parties in
//            one process they cost a copy, not a network, so they are not in the ceiling.
//
// Every time is measured as wall and as process CPU time, in interleaved rounds; the headline
// figures are medians over rounds by CPU time (fraction: the median of the per-round fractions),
// with best-round figures beside them. The load average is recorded.
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { circuitsDir } from './garble.mjs';

const SUITE = 'roofline';
const RUNTIME = 'wasm-node';

/** The primitives, with display names and units (rates are ops per second). */
export const PRIMITIVES = {
  aes_block: 'AES-128 block (fixed key, 4096-block batches)',
  aes_key_expansion: 'AES-128 key expansion',
  gf128_mul: 'GF(2^128) mul (prepared inner product)',
  transpose_128x128: '128×128 bit transpose (in 128×65536)',
  sha2_block: 'SHA-256 compression',
  curve_var_mul: 'ristretto255 variable-base mul',
  curve_fixed_mul: 'ristretto255 basepoint / table mul',
  curve_from_uniform: 'ristretto255 from_uniform_bytes',
  curve_decompress: 'ristretto255 decompress',
  curve_compress: 'ristretto255 compress (one point)',
  curve_compress_batch: 'ristretto255 double_and_compress_batch (per point, 256 a batch)',
  curve_table: 'ristretto255 table for a point',
  fp_mul: 'F_p mul, p = 2^128 − 173 (4096 independent products)',
};

/** Units of work, in table order, and how each is displayed. */
const UNITS = [
  { unit: 'random-ot', label: 'random OT (KOS)', scale: 1e6, rateUnit: 'M OT/s' },
  { unit: 'garble-and', label: 'AND garbled (half-gates)', scale: 1e6, rateUnit: 'M AND/s' },
  { unit: 'evaluate-and', label: 'AND evaluated (half-gates)', scale: 1e6, rateUnit: 'M AND/s' },
  { unit: 'authgc-and-triple', label: 'authenticated AND triple (authgc, n=2)', scale: 1e3, rateUnit: 'k triples/s' },
  { unit: 'mascot-triple', label: 'MASCOT triple (F_p, n=2)', scale: 1, rateUnit: 'triples/s' },
  { unit: 'grr3-garble-and', label: 'AND garbled (GRR3, teleport)', scale: 1e6, rateUnit: 'M AND/s' },
  { unit: 'grr3-garble-and-walk', counts: 'grr3-garble-and', label: 'AND garbled (GRR3, gate-order walk: before)', scale: 1e6, rateUnit: 'M AND/s' },
  { unit: 'grr3-evaluate-and', label: 'AND evaluated (GRR3, teleport)', scale: 1e6, rateUnit: 'M AND/s' },
  { unit: 'grr3-evaluate-and-walk', counts: 'grr3-evaluate-and', label: 'AND evaluated (GRR3, gate-order walk: before)', scale: 1e6, rateUnit: 'M AND/s' },
  { unit: 'teleport-aes', label: 'teleported AES-128 run (malicious)', scale: 1, rateUnit: 'runs/s' },
  { unit: 'base-ot', label: '128 base OTs (Masny–Rindal, one pair)', scale: 1, rateUnit: 'setups/s' },
];

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** One timed trial of `fn` (which does `units` units of work), at least `minMs` long: units per wall and per CPU second. */
function once(fn, units, minMs) {
  let n = 0;
  const w0 = performance.now();
  const c0 = cpuNow();
  do {
    fn();
    n += 1;
  } while (performance.now() - w0 < minMs);
  const wall = (n * units) / ((performance.now() - w0) / 1000);
  const cpu = (n * units) / Math.max(1e-9, (cpuNow() - c0) / 1000);
  return { wall, cpu };
}

/** The per-unit counts, from the counting build. */
function counts(root, dir) {
  const wasmDir = join(root, 'wasm');
  const env = { ...process.env, CARGO_TARGET_DIR: join(wasmDir, 'target', 'op-count') };
  const build = spawnSync('cargo', ['build', '--release', '-q', '-p', 'webmpc-tools', '--features', 'op-count', '--bin', 'roofline-counts'], {
    cwd: wasmDir,
    env,
    stdio: ['ignore', 2, 2],
  });
  if (build.status !== 0) throw new Error('building roofline-counts failed');
  const r = spawnSync(join(wasmDir, 'target', 'op-count', 'release', 'roofline-counts'), [dir], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`roofline-counts failed: ${r.stderr || r.error}`);
  return Object.fromEntries(
    r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .map((o) => [o.unit, o]),
  );
}

export async function run({ root, emit, quick }) {
  const row = (kase, metric, value, unit, impl = 'webmpc') => emit({ suite: SUITE, case: kase, metric, value, unit, runtime: RUNTIME, impl });
  const load = () => loadavg()[0];
  const opts = quick ? { trials: 3, minMs: 60 } : { trials: 11, minMs: 100 };
  const dir = circuitsDir(root);
  const aesText = await readFile(join(dir, 'aes_128.txt'), 'utf8');

  const load0 = load();
  const perUnit = counts(root, dir);

  const gen = join(root, 'dist', 'wasm-gen');
  const baseline = await import(pathToFileURL(join(gen, 'baseline.js')).href);
  await baseline.default({ module_or_path: await readFile(join(gen, 'baseline_bg.wasm')) });
  globalThis.webmpcBenchClock ??= cpuNow;

  // Every primitive and every unit is timed once per round, in interleaved rounds, so that a
  // burst of load on the shared machine hits the primitives and the implementations alike; each
  // round gives a ceiling and a fraction, and the figures are medians over the rounds.
  const cases = {};
  for (const name of Object.keys(PRIMITIVES)) {
    const ops = baseline.rooflinePrimitiveOps(name);
    // About 5-20 ms per call.
    const reps = { aes_block: 8, aes_key_expansion: 8, gf128_mul: 1, transpose_128x128: 2, sha2_block: 4, curve_table: 8, curve_compress_batch: 2, fp_mul: 32 }[name] ?? 16;
    cases[`p:${name}`] = { fn: () => baseline.rooflinePrimitive(name, reps), units: ops * reps };
  }
  const ot = new baseline.OtLocalBench();
  cases['u:base-ot'] = { fn: () => new baseline.OtLocalBench().free(), units: 1, minMs: 2 * opts.minMs };
  const nOt = 1 << 19;
  cases['u:random-ot'] = { fn: () => ot.run('random', nOt), units: nOt, minMs: 0 };
  const gb = new baseline.GarbleLocalBench(aesText);
  // Chunks compiled once, as the Yao protocol keeps them for a prepared circuit.
  gb.usePlans?.();
  const ands = gb.andGates;
  cases['u:garble'] = { fn: () => gb.garble(10), units: 10 * ands };
  // The evaluator timed on its own: one garbling, then ten evaluations of its tables.
  cases['u:evaluate'] = { fn: () => gb.evaluateOnly(10), units: 10 * ands };
  // authgc: the F_Pre's own clock (process CPU time here) around its triples call alone.
  const nTriples = quick ? 20_000 : 40_000;
  cases['u:authgc'] = {
    once: () => {
      const r = JSON.parse(baseline.fpreLocalRun(2, 0, nTriples, 40));
      return { cpu: nTriples / (r.triplesMs / 1000), wall: NaN };
    },
  };
  const mascot = new baseline.MascotLocalBench(2, 'prime');
  const nMascot = quick ? 500 : 2000;
  cases['u:mascot'] = { fn: () => mascot.generateTriples(nMascot), units: nMascot, minMs: 0 };
  // GRR3 alone, on the schedule and in the old gate-order walk (the "before", same run).
  const grr3 = new baseline.Grr3LocalBench(aesText);
  const grr3Ands = grr3.andGates;
  cases['u:grr3-garble'] = { fn: () => grr3.garble(4, false), units: 4 * grr3Ands };
  cases['u:grr3-garble-walk'] = { fn: () => grr3.garble(4, true), units: 4 * grr3Ands };
  cases['u:grr3-evaluate'] = { fn: () => grr3.evaluate(10, false), units: 10 * grr3Ands };
  cases['u:grr3-evaluate-walk'] = { fn: () => grr3.evaluate(10, true), units: 10 * grr3Ands };
  // Teleported AES-128: a session of `jobs` runs, all three parties on this thread, each
  // party's own time by webmpcBenchClock (process CPU time here), session setup taken out.
  const jobs = quick ? 2 : 4;
  const teleportRun = (malicious) => {
    const r = JSON.parse(baseline.teleportLocalRun(aesText, jobs, malicious));
    const per = (k) => (r[`${k}Ms`] - r[`setup${k[0].toUpperCase()}${k.slice(1)}Ms`]) / jobs;
    return { garbler: per('garbler'), evaluator: per('evaluator'), enclave: per('enclave') };
  };
  const teleportParties = { malicious: [], semiHonest: [] };
  cases['u:teleport'] = {
    once: () => {
      const t = teleportRun(true);
      teleportParties.malicious.push(t);
      return { cpu: 1000 / (t.garbler + t.evaluator + t.enclave), wall: NaN };
    },
  };
  cases['u:teleport-sh'] = {
    once: () => {
      const t = teleportRun(false);
      teleportParties.semiHonest.push(t);
      return { cpu: 1000 / (t.garbler + t.evaluator + t.enclave), wall: NaN };
    },
  };

  const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const run1 = (c) => (c.once ? c.once() : once(c.fn, c.units, c.minMs ?? opts.minMs));
  for (const c of Object.values(cases)) run1({ ...c, minMs: 0 });
  // Each round: the primitives, the units, the primitives again (so the units are bracketed in
  // time by the primitives they are compared with; a primitive's rate in a round is the mean of
  // its two samples).
  const prims = Object.keys(cases).filter((k) => k.startsWith('p:'));
  const units = Object.keys(cases).filter((k) => k.startsWith('u:'));
  for (let r = 0; r < opts.trials; r++) {
    const before = Object.fromEntries(prims.map((k) => [k, run1(cases[k])]));
    for (const k of units) samples[k].push(run1(cases[k]));
    for (const k of prims) {
      const a = before[k];
      const b = run1(cases[k]);
      samples[k].push({ cpu: (a.cpu + b.cpu) / 2, wall: (a.wall + b.wall) / 2 });
    }
  }
  ot.free();
  gb.free();
  mascot.free();
  grr3.free();

  const rateIn = (k, r, clock = 'cpu') => samples[k][r][clock];
  for (const name of Object.keys(PRIMITIVES)) {
    const k = `p:${name}`;
    row(`primitive:${name}`, 'throughput', median(samples[k].map((x) => x.cpu)) / 1e6, 'M op/s (CPU, median)', PRIMITIVES[name]);
    row(`primitive:${name}`, 'throughput_best_round', Math.max(...samples[k].map((x) => x.cpu)) / 1e6, 'M op/s (CPU, best round)', PRIMITIVES[name]);
    row(`primitive:${name}`, 'throughput_wall', Math.max(...samples[k].map((x) => x.wall)) / 1e6, 'M op/s (wall, best round)', PRIMITIVES[name]);
  }
  // Per round, units per second of each unit (evaluation alone: garble+evaluate minus garble).
  const reachedWith = (unit, rate) => {
    switch (unit) {
      case 'base-ot':
        return rate('u:base-ot');
      case 'random-ot':
        return rate('u:random-ot');
      case 'garble-and':
        return rate('u:garble');
      case 'evaluate-and':
        // Ten evaluations per garbling: take the garbling's share (measured alone) out.
        return 1 / (1 / rate('u:evaluate') - 1 / (10 * rate('u:garble')));
      case 'authgc-and-triple':
        return rate('u:authgc');
      case 'mascot-triple':
        return rate('u:mascot');
      case 'grr3-garble-and':
        return rate('u:grr3-garble');
      case 'grr3-garble-and-walk':
        return rate('u:grr3-garble-walk');
      case 'grr3-evaluate-and':
        return rate('u:grr3-evaluate');
      case 'grr3-evaluate-and-walk':
        return rate('u:grr3-evaluate-walk');
      case 'teleport-aes':
        return rate('u:teleport');
      default:
        return NaN;
    }
  };
  const reachedIn = (unit, r, clock) => reachedWith(unit, (k) => samples[k][r][clock]);

  // Ceilings and fractions. Each round measures every primitive and every unit within a couple
  // of seconds, so a round's fraction compares like with like; the headline figures are medians
  // over rounds (by CPU time). Best-round figures (noise only ever slows a sample) are reported
  // beside them as the quiet-machine estimate.
  const best = (k) => ({ cpu: Math.max(...samples[k].map((x) => x.cpu)), wall: Math.max(...samples[k].map((x) => x.wall)) });
  const reachedBest = (unit, clock) => reachedWith(unit, (k) => best(k)[clock]);
  for (const { unit, counts: countsOf, label, scale, rateUnit } of UNITS) {
    const c = perUnit[countsOf ?? unit];
    if (!c) continue;
    const ops = Object.entries(c.counts).filter(([, k]) => k > 0);
    for (const [op, k] of ops) row(unit, `count:${op}`, k, `per ${c.per}`, label);
    const secsWith = (rate) => ops.reduce((a, [op, k]) => a + k / rate(op), 0);
    const rounds = Array.from({ length: opts.trials }, (_, r) => r);
    const secsIn = (r, clock = 'cpu') => secsWith((op) => rateIn(`p:${op}`, r, clock));
    const ceiling = median(rounds.map((r) => 1 / secsIn(r)));
    const got = median(rounds.map((r) => reachedIn(unit, r, 'cpu')));
    const gotWall = median(rounds.map((r) => reachedIn(unit, r, 'wall')));
    const bestSecs = secsWith((op) => best(`p:${op}`).cpu);
    row(unit, 'ceiling', ceiling / scale, rateUnit, label);
    row(unit, 'ceiling_best_round', 1 / bestSecs / scale, rateUnit, label);
    if (Number.isFinite(got)) {
      row(unit, 'reached', got / scale, rateUnit, label);
      row(unit, 'fraction', 100 * median(rounds.map((r) => reachedIn(unit, r, 'cpu') * secsIn(r))), '%', label);
      row(unit, 'reached_best_round', reachedBest(unit, 'cpu') / scale, rateUnit, label);
      row(unit, 'fraction_best_round', 100 * reachedBest(unit, 'cpu') * bestSecs, '%', label);
    }
    if (Number.isFinite(gotWall)) {
      row(unit, 'reached_wall', gotWall / scale, rateUnit, label);
      row(unit, 'fraction_wall', 100 * median(rounds.map((r) => reachedIn(unit, r, 'wall') * secsIn(r, 'wall'))), '%', label);
    }
    row(unit, 'bytes', c.bytes, `bytes per ${c.per}`, label);
    // Which primitive bounds it: its share of the ceiling's time.
    const share = ops.map(([op, k]) => [op, k / best(`p:${op}`).cpu]).sort((a, b) => b[1] - a[1]);
    row(unit, `bound:${share[0][0]}`, (100 * share[0][1]) / bestSecs, '% of ceiling time', label);
    if (unit === 'base-ot') {
      if (Number.isFinite(got)) row(unit, 'time', 1e3 / got, 'ms (CPU) per 128 OTs', label);
      row(unit, 'ceiling_time', 1e3 / ceiling, 'ms per 128 OTs', label);
    }
  }
  // Each teleport party's CPU per run (medians over rounds), and the semi-honest garbler against
  // half-gates garbling of the same circuit (yao2pc's garbler, its base OTs and OTs aside).
  const med = (xs, k) => median(xs.map((t) => t[k]));
  for (const [mode, xs] of Object.entries(teleportParties)) {
    if (!xs.length) continue;
    for (const k of ['garbler', 'evaluator', 'enclave']) row(`teleport-aes-${mode}`, `${k}_ms_per_run`, med(xs, k), 'ms (CPU) per AES-128 run', 'teleport-yao, in-process');
  }
  if (teleportParties.semiHonest.length) {
    const halfGates = 1000 / (median(samples['u:garble'].map((x) => x.cpu)) / ands);
    row('teleport-aes-semiHonest', 'halfgates_garble_ms_per_run', halfGates, 'ms (CPU) per AES-128 garbling', 'half-gates (yao2pc garbler, OTs aside)');
    row('teleport-aes-semiHonest', 'garbler_cheaper_than_halfgates', halfGates / med(teleportParties.semiHonest, 'garbler'), 'x', 'teleport-yao garbler vs half-gates garbling');
  }
  row('machine', 'load_average_1min', (load0 + load()) / 2, 'load', `start ${load0.toFixed(2)}, end ${load().toFixed(2)}`);
}
