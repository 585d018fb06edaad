#!/usr/bin/env node
// Benchmark driver: `npm run bench -- <suite...> [--json] [--quick] [--threads k[,k...]]`.
//
// Prints a table, or with --json one JSON object per line (suite, case, metric, value, unit,
// runtime, impl). Setup and build run first with their output on stderr, so stdout carries only
// results. Every suite measures ours and its baseline in the same run and reports the ratio.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const json = argv.includes('--json');
const quick = argv.includes('--quick');
const noBuild = argv.includes('--no-build');
const suites = {
  kernels: () => import('./bench/kernels.mjs'),
  ot: () => import('./bench/ot.mjs'),
  transport: () => import('./bench/transport.mjs'),
  secure: () => import('./bench/secure.mjs'),
  garble: () => import('./bench/garble.mjs'),
  yao: () => import('./bench/yao.mjs'),
  teleport: () => import('./bench/teleport.mjs'),
  authgc: () => import('./bench/authgc.mjs'),
  baselines: () => import('./bench/baselines.mjs'),
  mascot: () => import('./bench/mascot.mjs'),
  workers: () => import('./bench/workers.mjs'),
  roofline: () => import('./bench/roofline.mjs'),
  network: () => import('./bench/network.mjs'),
  world: () => import('./bench/world.mjs'),
  clients: () => import('./bench/clients.mjs'),
};
// `--threads k[,k...]`: the suites whose work splits into parallel instances (OT extension in the
// ot suite; MASCOT and authgc preprocessing through sessions; yao2pc's independent runs through
// session.runMany in the yao suite) measure it at each k instead of their usual cases (rows carry
// `threads`).
const TAKE_THREADS = ['ot', 'mascot', 'authgc', 'yao'];
const at = argv.indexOf('--threads');
const threadsArg = at >= 0 ? String(argv[at + 1] ?? '') : undefined;
const threads = threadsArg === undefined ? undefined : threadsArg.split(',').map(Number);
if (threads !== undefined && !threads.every((k) => Number.isSafeInteger(k) && k >= 1 && k <= 64)) {
  process.stderr.write(`bench: --threads takes k or a list k1,k2,... of whole numbers from 1 to 64, not ${threadsArg || 'nothing'}\n`);
  process.exit(2);
}
const asked = argv.filter((a, i) => !a.startsWith('--') && !(at >= 0 && i === at + 1));
const unknown = asked.filter((s) => !(s in suites));
if (unknown.length) {
  process.stderr.write(`bench: unknown suite(s) ${unknown.join(', ')}; have: ${Object.keys(suites).join(', ')}\n`);
  process.exit(2);
}
if (threads !== undefined && (asked.length === 0 || asked.some((s) => !TAKE_THREADS.includes(s)))) {
  process.stderr.write(`bench: --threads applies to ${TAKE_THREADS.join(', ')} only (name them); the other protocols have no parallel instances\n`);
  process.exit(2);
}

function prepare(cmd, args) {
  // stdout of setup/build goes to our stderr: --json consumers read stdout line by line.
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) {
    process.stderr.write(`bench: ${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})\n`);
    process.exit(1);
  }
}
if (!noBuild) {
  // --browser: the kernels suite also measures in Chromium.
  prepare('bash', [join(root, 'scripts', 'setup.sh'), '--browser']);
  prepare(process.execPath, [join(root, 'scripts', 'build.mjs')]);
}

const rows = [];
const emit = (row) => {
  rows.push(row);
  if (json) process.stdout.write(`${JSON.stringify(row)}\n`);
};
// The peers' own suite takes half an hour on this machine kind, the worldwide table a quarter of
// an hour: run them only when named.
const byDefault = Object.keys(suites).filter((s) => s !== 'baselines' && s !== 'world');
for (const name of asked.length ? asked : byDefault) {
  const suite = await suites[name]();
  await suite.run({ root, emit, quick, threads });
}

if (!json) {
  // Rows of ./bench/traffic.mjs also say which phase and party they are about.
  const cols = ['suite', 'case', 'runtime', 'impl', ...(threads === undefined ? [] : ['threads']), 'metric', 'value', 'unit', ...['phase', 'party'].filter((c) => rows.some((r) => c in r))];
  const cell = (r, c) => (c === 'value' ? formatValue(r.value) : String(r[c] ?? ''));
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r, c).length)));
  const line = (cells) => cells.map((s, i) => (cols[i] === 'value' ? s.padStart(width[i]) : s.padEnd(width[i]))).join('  ');
  process.stdout.write(`${line(cols)}\n${line(width.map((w) => '-'.repeat(w)))}\n`);
  for (const r of rows) process.stdout.write(`${line(cols.map((c) => cell(r, c)))}\n`);
}

function formatValue(v) {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}
