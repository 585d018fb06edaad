#!/usr/bin/env node
// A/B of teleportation's GRR3 garbling and evaluation (AES-128) in Wasm between two builds, in
// one process, in interleaved rounds (so a burst of load on the shared machine hits both alike):
//
//   node scripts/bench/ab-grr3.mjs <dist A> <dist B> [rounds]
//
// Each dist is a built `dist/` (its bench-only `wasm-gen/baseline*`); only read. Each build's
// Grr3LocalBench garbles the circuit 4 times and evaluates its tables 10 times per call; prints
// each build's best rate over the rounds (measureInterleaved) and the B/A ratios.
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { circuitsDir } from './garble.mjs';
import { measureInterleaved } from './measure.mjs';

const [a, b, roundsArg] = process.argv.slice(2);
if (!a || !b) {
  process.stderr.write('usage: ab-grr3.mjs <dist A> <dist B> [rounds=15]\n');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 15);
const aes = await readFile(join(circuitsDir(fileURLToPath(new URL('../..', import.meta.url))), 'aes_128.txt'), 'utf8');
globalThis.webmpcBenchClock ??= () => performance.now();

async function load(dist) {
  const gen = join(resolve(dist), 'wasm-gen');
  // A query string makes each build a separate module instance.
  const mod = await import(`${pathToFileURL(join(gen, 'baseline.js')).href}?ab=${encodeURIComponent(dist)}`);
  await mod.default({ module_or_path: await readFile(join(gen, 'baseline_bg.wasm')) });
  return new mod.Grr3LocalBench(aes);
}

const [ga, gb] = [await load(a), await load(b)];
const ands = ga.andGates;
const load0 = loadavg()[0];
const rates = measureInterleaved(
  {
    'A garble': { fn: () => ga.garble(4, false), units: 4 * ands },
    'B garble': { fn: () => gb.garble(4, false), units: 4 * ands },
    'A evaluate': { fn: () => ga.evaluate(10, false), units: 10 * ands },
    'B evaluate': { fn: () => gb.evaluate(10, false), units: 10 * ands },
  },
  { rounds },
);
const m = (x) => `${(x / 1e6).toFixed(2)} M AND/s (${((1e3 * ands) / x).toFixed(3)} ms per AES-128)`;
console.log(`GRR3, AES-128 (${ands} AND gates), best of ${rounds} interleaved rounds, wall time`);
for (const [k, v] of Object.entries(rates)) console.log(`${k}: ${m(v)}`);
console.log(`B/A: garble ${(rates['B garble'] / rates['A garble']).toFixed(3)}, evaluate ${(rates['B evaluate'] / rates['A evaluate']).toFixed(3)}`);
console.log(`A ${a}, B ${b}; 1-minute load average: start ${load0.toFixed(2)}, end ${loadavg()[0].toFixed(2)}`);
