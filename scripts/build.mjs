#!/usr/bin/env node
// Builds the npm package into dist/ and the native helper binaries the tests and benches use.
//
//   1. cargo: the Wasm crates (webmpc-bindings, webmpc-baseline) and the native tools
//   2. wasm-bindgen --target web into ts/wasm-gen/ (skipped when the .wasm is unchanged)
//   3. tsc: ts/ -> dist/
//   4. ts/wasm-gen/ -> dist/wasm-gen/, so dist/ is a self-contained ESM package
//   5. the simulation enclave program -> dist/native/<platform>-<arch>/, where the enclave-server
//      (`webmpc enclave-server --backend simulation`) finds it next to the package
//
// Flags: --wasm-only skips the native tools (the test/bench helpers are not part of the package;
// without the enclave program the enclave-server needs --program or WEBMPC_ENCLAVE_PROGRAM).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const wasmDir = join(root, 'wasm');
const genDir = join(root, 'ts', 'wasm-gen');
const distDir = join(root, 'dist');
const wasmRelease = join(wasmDir, 'target', 'wasm32-unknown-unknown', 'release');

const args = new Set(process.argv.slice(2));
const wasmOnly = args.has('--wasm-only');

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

step('cargo build (wasm32: webmpc-bindings, webmpc-baseline)', () => {
  run('cargo', ['build', '--release', '--target', 'wasm32-unknown-unknown', '-p', 'webmpc-bindings', '-p', 'webmpc-baseline'], wasmDir);
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
  const inputs = ['webmpc_bindings', 'webmpc_baseline'].map((crate) => {
    const path = join(wasmRelease, `${crate}.wasm`);
    if (!existsSync(path)) fail(`missing ${path}`);
    const st = statSync(path);
    return { path, size: st.size, mtimeMs: st.mtimeMs };
  });
  const stamp = JSON.stringify({ have, inputs });
  const outputsPresent = ['webmpc.js', 'webmpc_bg.wasm', 'baseline.js', 'baseline_bg.wasm'].every((f) =>
    existsSync(join(genDir, f)),
  );
  if (outputsPresent && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    return 'unchanged, skipped';
  }
  rmSync(genDir, { recursive: true, force: true });
  mkdirSync(genDir, { recursive: true });
  for (const [crate, outName] of [
    ['webmpc_bindings', 'webmpc'],
    ['webmpc_baseline', 'baseline'],
  ]) {
    run('wasm-bindgen', ['--target', 'web', '--out-dir', genDir, '--out-name', outName, join(wasmRelease, `${crate}.wasm`)]);
  }
  writeFileSync(stampFile, stamp);
  return undefined;
});

step('tsc', () => {
  // A clean dist/ so files deleted from ts/ do not linger in the package.
  rmSync(distDir, { recursive: true, force: true });
  run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.json')]);
});

step('copy bindings into dist/', () => {
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
