#!/usr/bin/env node
// A/B of MASCOT preprocessing in Wasm between two builds, in one process and interleaved rounds
// (so a burst of load on the shared machine hits both alike):
//
//   node scripts/bench/ab-mascot.mjs <dist A> <dist B> [rounds] [triples] [field]
//
// Each dist is a built `dist/` (its bench-only `wasm-gen/baseline*`); only read. Per round, each
// build generates `triples` triples (2 parties, `field` prime|binary) with MascotLocalBench, timed
// by process CPU time. Prints per-build median and range of triples/s and the B/A ratio of medians
// and the median of per-round ratios.
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [a, b, roundsArg, countArg, fieldArg] = process.argv.slice(2);
if (!a || !b) {
  process.stderr.write('usage: ab-mascot.mjs <dist A> <dist B> [rounds=9] [triples=2000] [field=prime]\n');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 9);
const count = Number(countArg ?? 2000);
const field = fieldArg ?? 'prime';

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
globalThis.webmpcBenchClock ??= cpuNow;

async function load(dist) {
  const gen = join(resolve(dist), 'wasm-gen');
  // A query string makes each build a separate module instance.
  const mod = await import(`${pathToFileURL(join(gen, 'baseline.js')).href}?ab=${encodeURIComponent(dist)}`);
  await mod.default({ module_or_path: await readFile(join(gen, 'baseline_bg.wasm')) });
  return new mod.MascotLocalBench(2, field);
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const benches = [await load(a), await load(b)];
for (const m of benches) m.generateTriples(Math.min(count, 500)); // warm-up
const load0 = loadavg()[0];
const rates = [[], []];
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [1, 0] : [0, 1];
  for (const i of order) {
    const c0 = cpuNow();
    benches[i].generateTriples(count);
    rates[i].push(count / ((cpuNow() - c0) / 1000));
  }
}
const fmt = (xs) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
console.log(`MASCOT triples/s (${field}, n=2, ${count} per round, ${rounds} rounds, CPU time)`);
console.log(`A ${a}: ${fmt(rates[0])}`);
console.log(`B ${b}: ${fmt(rates[1])}`);
console.log(`B/A: ${(median(rates[1]) / median(rates[0])).toFixed(3)} (median of per-round ratios ${median(rates[1].map((x, i) => x / rates[0][i])).toFixed(3)})`);
console.log(`1-minute load average: start ${load0.toFixed(2)}, end ${loadavg()[0].toFixed(2)}`);
