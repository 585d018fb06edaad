#!/usr/bin/env node
// Builds the npm package into dist/ and the native helper binaries the tests and benches use.
//
//   1. cargo: the Wasm crates (one cdylib per shipped module, see MODULES; webmpc-baseline) and
//      the native tools
//   2. wasm-bindgen --target web into ts/wasm-gen/ (skipped when no .wasm changed)
//   3. tsc: ts/ -> dist/
//   4. ts/wasm-gen/ -> dist/wasm-gen/, so dist/ is a self-contained ESM package
//   5. the simulation enclave program -> dist/native/<platform>-<arch>/, where the enclave-server
//      (`webmpc enclave-server --backend simulation`) finds it next to the package
//
// Flags:
//   --wasm-only   skips the native tools (the test/bench helpers are not part of the package;
//                 without the enclave program the enclave-server needs --program or
//                 WEBMPC_ENCLAVE_PROGRAM).
//   --keep-names  keeps the Wasm `name` section (function names) in the shipped modules, for
//                 profiling in a browser or with `perf`; the default strips it, as published.
//   --if-stale    does nothing when dist/ is complete and newer than every source it is built
//                 from (`npm pack` runs this as `prepack`, so a clean clone packs a built package
//                 and repeated packs stay quick); otherwise builds as without the flag.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const wasmDir = join(root, 'wasm');
const genDir = join(root, 'ts', 'wasm-gen');
const distDir = join(root, 'dist');
const wasmRelease = join(wasmDir, 'target', 'wasm32-unknown-unknown', 'release');

/**
 * The Wasm modules: each a cdylib crate of its own (so one `cargo build` builds them all, with no
 * feature unification between them), run through wasm-bindgen as `<out>.js` + `<out>_bg.wasm`.
 * The main module is loaded by `init()`; the others by the SDK on first use of their protocols
 * (ts/engine/modules.ts). Every shipped module links webmpc-bindings-glue (stack scrub,
 * zero-on-free allocator) and is held to the package's size budget (tests/package.test.ts).
 */
const MODULES = [
  { pkg: 'webmpc-bindings', crate: 'webmpc_bindings', out: 'webmpc', shipped: true },
  { pkg: 'webmpc-bindings-mascot', crate: 'webmpc_bindings_mascot', out: 'webmpc_mascot', shipped: true },
  { pkg: 'webmpc-bindings-teleport', crate: 'webmpc_bindings_teleport', out: 'webmpc_teleport', shipped: true },
  // Bench-only (RustCrypto AES, in-Wasm timing loops): never shipped, keeps its names.
  { pkg: 'webmpc-baseline', crate: 'webmpc_baseline', out: 'baseline', shipped: false },
];

const args = new Set(process.argv.slice(2));
const wasmOnly = args.has('--wasm-only');
const keepNames = args.has('--keep-names');
const known = new Set(['--wasm-only', '--keep-names', '--if-stale']);
for (const a of args) if (!known.has(a)) fail(`unknown flag ${a} (flags: ${[...known].join(', ')})`);

// Non-login shells (CI) may lack ~/.cargo/bin, where rustup and `cargo install` put binaries.
const cargoBin = join(homedir(), '.cargo', 'bin');
const env = { ...process.env };
if (existsSync(cargoBin) && !(env.PATH ?? '').split(delimiter).includes(cargoBin)) {
  env.PATH = `${cargoBin}${delimiter}${env.PATH ?? ''}`;
}

// Everything goes to stderr so that commands chained after the build (`npm run bench -- --json`)
// own stdout.
function step(name, fn) {
  const t0 = performance.now();
  process.stderr.write(`build: ${name}\n`);
  const note = fn();
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  process.stderr.write(`build: ${name}: ${note ?? 'done'} (${secs} s)\n`);
}

function run(cmd, argv, cwd = root) {
  const r = spawnSync(cmd, argv, { cwd, env, stdio: ['ignore', 2, 2] });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${argv.join(' ')} exited with ${r.status ?? r.signal}`);
}

function output(cmd, argv) {
  const r = spawnSync(cmd, argv, { cwd: root, env, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function fail(msg) {
  process.stderr.write(`build: error: ${msg}\n`);
  process.exit(1);
}

function lockedWasmBindgenVersion() {
  const lock = join(wasmDir, 'Cargo.lock');
  if (!existsSync(lock)) return undefined;
  const m = readFileSync(lock, 'utf8').match(/\[\[package\]\]\nname = "wasm-bindgen"\nversion = "([^"]+)"/);
  return m?.[1];
}

if (args.has('--if-stale')) {
  const why = staleness();
  if (why === undefined) {
    process.stderr.write('build: dist/ is up to date, nothing to do\n');
    process.exit(0);
  }
  process.stderr.write(`build: ${why}: building\n`);
}

/**
 * Why dist/ needs a build, or undefined when it is complete and newer than the sources: the
 * TypeScript in ts/, the Rust in wasm/ (crates, manifests, lock file), tsconfig.json and this
 * script. Timestamps, not contents: a checkout or a merge that touches a source rebuilds.
 */
function staleness() {
  const outputs = [
    'index.js',
    'index.d.ts',
    'cli.js',
    ...MODULES.filter((m) => m.shipped).flatMap((m) => [`wasm-gen/${m.out}.js`, `wasm-gen/${m.out}_bg.wasm`]),
  ].map((f) => join(distDir, f));
  const missing = outputs.find((f) => !existsSync(f));
  if (missing) return `${missing.slice(root.length + 1)} is missing`;
  const stampFile = join(genDir, '.stamp.json');
  if (existsSync(stampFile) && JSON.parse(readFileSync(stampFile, 'utf8')).keepNames !== keepNames) {
    return keepNames ? 'the Wasm was built without --keep-names' : 'the Wasm was built with --keep-names';
  }
  const builtAt = Math.min(...outputs.map((f) => statSync(f).mtimeMs));
  const sources = [
    join(root, 'tsconfig.json'),
    join(root, 'scripts', 'build.mjs'),
    join(wasmDir, 'Cargo.toml'),
    join(wasmDir, 'Cargo.lock'),
    ...walk(join(root, 'ts'), (p) => !p.startsWith(genDir)),
    ...walk(join(wasmDir, 'crates'), (p) => !p.includes(`${sep}target`)),
  ];
  const newer = sources.find((f) => existsSync(f) && statSync(f).mtimeMs > builtAt);
  return newer ? `${newer.slice(root.length + 1)} is newer than dist/` : undefined;
}

/** Every file under `dir` whose path passes `keep` (directories pruned by the same test). */
function* walk(dir, keep) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (!keep(p)) continue;
    if (entry.isDirectory()) yield* walk(p, keep);
    else yield p;
  }
}

step(`cargo build (wasm32: ${MODULES.map((m) => m.pkg).join(', ')})`, () => {
  run('cargo', ['build', '--release', '--target', 'wasm32-unknown-unknown', ...MODULES.flatMap((m) => ['-p', m.pkg])], wasmDir);
});

if (!wasmOnly) {
  step('cargo build (native: webmpc-tools, webmpc-enclave-program)', () => {
    run('cargo', ['build', '--release', '-p', 'webmpc-tools', '-p', 'webmpc-enclave-program'], wasmDir);
  });
}

step('wasm-bindgen', () => {
  const want = lockedWasmBindgenVersion();
  const have = output('wasm-bindgen', ['--version'])?.split(/\s+/)[1];
  if (!have) fail('wasm-bindgen not found; run scripts/setup.sh');
  if (want && have !== want) {
    fail(`wasm-bindgen CLI is ${have} but wasm/Cargo.lock has ${want}; run scripts/setup.sh`);
  }
  // Outputs are a pure function of the input module and the CLI version, so a stamp of both
  // tells whether there is anything to do.
  const stampFile = join(genDir, '.stamp.json');
  const inputs = MODULES.map(({ crate }) => {
    const path = join(wasmRelease, `${crate}.wasm`);
    if (!existsSync(path)) fail(`missing ${path}`);
    const st = statSync(path);
    return { path, size: st.size, mtimeMs: st.mtimeMs };
  });
  const stamp = JSON.stringify({ have, inputs, keepNames });
  const outputsPresent = MODULES.flatMap((m) => [`${m.out}.js`, `${m.out}_bg.wasm`]).every((f) => existsSync(join(genDir, f)));
  if (outputsPresent && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    return 'unchanged, skipped';
  }
  rmSync(genDir, { recursive: true, force: true });
  mkdirSync(genDir, { recursive: true });
  for (const { crate, out, shipped } of MODULES) {
    // The published modules lose their `name` section (about 15% of each file: function names)
    // and the producers section; --keep-names keeps them for profiling. The bench-only baseline
    // keeps its names.
    const strip = shipped && !keepNames ? ['--remove-name-section', '--remove-producers-section'] : [];
    run('wasm-bindgen', ['--target', 'web', ...strip, '--out-dir', genDir, '--out-name', out, join(wasmRelease, `${crate}.wasm`)]);
  }
  writeFileSync(stampFile, stamp);
  return undefined;
});

step('tsc', () => {
  // A clean dist/ so files deleted from ts/ do not linger in the package.
  rmSync(distDir, { recursive: true, force: true });
  // --stripInternal: members marked @internal (constructors behind a factory, the builder's
  // gate-level helpers, test hooks) stay out of the published declarations.
  run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.json'), '--stripInternal']);
});

step('copy bindings into dist/', () => {
  // The command stays executable across rebuilds (tsc writes 0644), for links made to it directly.
  chmodSync(join(distDir, 'cli.js'), 0o755);
  cpSync(genDir, join(distDir, 'wasm-gen'), {
    recursive: true,
    filter: (src) => !src.endsWith('.stamp.json') && !src.endsWith('.gitignore'),
  });
});

if (!wasmOnly) {
  step('copy the enclave program into dist/native/', () => {
    const exe = process.platform === 'win32' ? 'webmpc-enclave-program.exe' : 'webmpc-enclave-program';
    const dir = join(distDir, 'native', `${process.platform}-${process.arch}`);
    mkdirSync(dir, { recursive: true });
    cpSync(join(wasmDir, 'target', 'release', exe), join(dir, exe));
  });
}
