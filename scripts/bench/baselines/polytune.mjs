// Peer baseline: polytune (crates.io, multi-party authenticated garbling after WRK17, the same
// protocol family as our authgc), built from bench/polytune/ — its own cargo project and
// lockfile outside wasm/, so the workspace's `cargo test` never builds it.
//
//   runPolytuneNative({ root, cases, parties, runs, threads }) -> rows (JSON objects, runtime
//       'polytune-native'; impl 'one-thread' = all parties on one thread over an in-memory mesh,
//       'multi-thread' = one tokio task per party over polytune's SimpleChannel)
//   runPolytuneWasm({ root, caseName, parties, runs }) -> { times, median, bytes } (runtime
//       'polytune-wasm': the same one-thread code compiled to wasm32, run in this Node process)
//
// Both build on demand with cargo (`--locked`: polytune 0.2.0-alpha.4 compiles only with the
// pinned cipher 0.5.0-rc.2 / crypto-common 0.2.0-rc.5 prereleases) and are cached by cargo itself:
// a build with nothing changed takes well under a second. Cargo runs from bench/polytune/ so
// that its .cargo/config.toml (SIMD128 and getrandom's JS backend for wasm32) applies.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CASES, circuitsDir } from './cases.mjs';

const dirOf = (root) => join(root, 'bench', 'polytune');

function cargo(root, args) {
  const r = spawnSync('cargo', args, { cwd: dirOf(root), stdio: ['ignore', 2, 2], env: { ...process.env } });
  if (r.status !== 0) throw new Error(`polytune: cargo ${args.join(' ')} failed (${r.status ?? r.signal ?? r.error})`);
}

/** Builds the native bench binary (cached by cargo) and returns its path. */
export function buildNative(root) {
  cargo(root, ['build', '--release', '--locked', '--bin', 'bench-polytune']);
  return join(dirOf(root), 'target', 'release', 'bench-polytune');
}

const hex = (b) => Buffer.from(b).toString('hex');

/**
 * Runs the native binary on `cases` for each party count; returns its JSON rows.
 * @param {{ root: string, cases: string[], parties: number[], runs?: number, threads?: boolean }} o
 */
export function runPolytuneNative({ root, cases, parties, runs = 3, threads = true }) {
  const bin = buildNative(root);
  const args = ['--parties', parties.join(','), '--runs', String(runs)];
  if (!threads) args.push('--no-threads');
  for (const name of cases) {
    const cs = CASES[name];
    args.push('--case', name, join(circuitsDir(root), cs.file), cs.inputs.map(hex).join(','));
  }
  const r = spawnSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`bench-polytune failed (${r.status ?? r.signal}): ${r.stderr.trim().split('\n').pop()}`);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/**
 * Builds the wasm32 library and its wasm-bindgen glue (web target: ES module, loaded from bytes) into
 * bench/polytune/target/wasm-gen; returns that directory. The wasm-bindgen CLI on PATH must be
 * the version pinned in bench/polytune/Cargo.toml (the project's; scripts/setup.sh installs it).
 */
export function buildWasm(root) {
  cargo(root, ['build', '--release', '--locked', '--lib', '--target', 'wasm32-unknown-unknown']);
  const wasm = join(dirOf(root), 'target', 'wasm32-unknown-unknown', 'release', 'webmpc_bench_polytune.wasm');
  const out = join(dirOf(root), 'target', 'wasm-gen');
  const glue = join(out, 'webmpc_bench_polytune.js');
  if (!existsSync(glue) || statSync(glue).mtimeMs < statSync(wasm).mtimeMs) {
    mkdirSync(out, { recursive: true });
    const r = spawnSync('wasm-bindgen', ['--target', 'web', '--out-dir', out, wasm], { stdio: ['ignore', 2, 2] });
    if (r.status !== 0) throw new Error(`polytune: wasm-bindgen failed (${r.status ?? r.error})`);
  }
  return out;
}

/**
 * All parties in this Node process, in one wasm32 instance on one thread (the same code as the
 * native 'one-thread' rows). Each call's output is checked inside against our plaintext
 * evaluator; a mismatch or any protocol error throws.
 * @param {{ root: string, caseName: string, parties: number, runs?: number, warmup?: number }} o
 */
export async function runPolytuneWasm({ root, caseName, parties, runs = 3, warmup = 1 }) {
  const out = buildWasm(root);
  const mod = await import(pathToFileURL(join(out, 'webmpc_bench_polytune.js')).href);
  await mod.default({ module_or_path: readFileSync(join(out, 'webmpc_bench_polytune_bg.wasm')) });
  const cs = CASES[caseName];
  const text = readFileSync(join(circuitsDir(root), cs.file), 'utf8');
  const values = cs.inputs.map(hex);
  const prepared = new mod.PolytuneCase(text, values, parties);
  const times = [];
  let bytes = 0;
  try {
    for (let r = 0; r < warmup + runs; r++) {
      const t0 = performance.now();
      try {
        bytes = prepared.run();
      } catch (e) {
        throw new Error(explainTrap(e, mod.lastPanic()));
      }
      const ms = performance.now() - t0;
      if (r >= warmup) times.push(ms);
    }
  } finally {
    // After a trap (a Rust panic) the instance is unusable and free() would throw over the
    // real error.
    try {
      prepared.free();
    } catch {}
  }
  const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];
  return { times, median, bytes, and: cs.and };
}

/** A trap's panic message plus the innermost polytune frame of its stack, or the error itself. */
function explainTrap(e, panic) {
  if (!panic) return String(e?.message ?? e);
  const frames = String(e?.stack ?? '')
    .split('\n')
    .map((l) => /wasm\.(.*?) \(wasm:/.exec(l)?.[1]?.replace(/::h[0-9a-f]{16}|\[[0-9a-f]{16}\]/g, ''))
    .filter(Boolean);
  const i = frames.findIndex((f) => f.includes('polytune::'));
  const where = i > 0 ? `; called from ${frames[i]} via ${frames[i - 1]}` : '';
  return `Rust panic in Wasm: ${panic.replace(/\s+/g, ' ')}${where}`;
}
