#!/usr/bin/env node
// npm's `prepack` and `postpack` hooks (`npm pack`, `npm publish`): the tarball gets a built
// package and the package users' README, while the repository keeps the developers' README.
//
//   node scripts/pack.mjs prepack    build if dist/ is missing or stale; refuse to pack without
//                                     the Wasm module; put PACKAGE-README.md in README.md's place
//   node scripts/pack.mjs postpack   put the developers' README back
//
// npm always packs the root README.md (its file list cannot exclude or rename it), so the users'
// README has to stand there while npm reads the files. The developers' README waits in
// .README.dev.md meanwhile. Packs can run concurrently (test files pack in parallel), so one lock
// (.pack-lock/) spans prepack to postpack. A pack that died in between leaves the lock and the
// moved README behind: the next prepack finds its owner gone, puts the README back and goes on.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readme = join(root, 'README.md');
const usersReadme = join(root, 'PACKAGE-README.md');
const devReadme = join(root, '.README.dev.md');
const lock = join(root, '.pack-lock');
const owner = join(lock, 'owner.json');

/** What a packed package cannot do without (the build's outputs). */
const REQUIRED = [
  'dist/index.js',
  'dist/index.d.ts',
  'dist/cli.js',
  // The main Wasm module and the per-protocol ones the SDK loads on first use (ts/engine/modules.ts).
  ...['webmpc', 'webmpc_mascot', 'webmpc_teleport'].flatMap((m) => [`dist/wasm-gen/${m}.js`, `dist/wasm-gen/${m}_bg.wasm`]),
];

function fail(message) {
  process.stderr.write(`webmpc ${process.argv[2]}: ${message}\n`);
  process.exit(1);
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * The processes whose life is this pack: npm runs the hook through a shell, so the hook's parent
 * may be that shell (gone once the hook returns) and its grandparent npm itself. Linux tells the
 * grandparent through /proc; elsewhere only the parent is known and a lock goes stale by age.
 */
function packPids() {
  const pids = [process.ppid];
  try {
    const stat = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
    const grand = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (Number.isInteger(grand) && grand > 1) pids.push(grand);
  } catch {
    // not Linux: the age rule below applies
  }
  return pids;
}

const STALE_MS = 120_000;

function lockIsStale() {
  try {
    const { pids, at } = JSON.parse(readFileSync(owner, 'utf8'));
    if (pids.length >= 2) return !pids.some(alive);
    return Date.now() - at > STALE_MS;
  } catch {
    // A lock without a readable owner is one being created right now, or a torn one: by age.
    try {
      return Date.now() - statSync(lock).mtimeMs > STALE_MS;
    } catch {
      return false;
    }
  }
}

/** A README left in .README.dev.md by a pack that died goes back into place. */
function restoreReadme() {
  if (existsSync(devReadme)) renameSync(devReadme, readme);
}

function acquire() {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(owner, JSON.stringify({ pids: packPids(), at: Date.now() }));
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    if (lockIsStale()) {
      process.stderr.write('webmpc prepack: an earlier pack died half-way; putting README.md back\n');
      restoreReadme();
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) fail(`another pack holds ${lock} for more than 10 minutes; remove it if no pack is running`);
    sleep(100);
  }
}

function release() {
  rmSync(lock, { recursive: true, force: true });
}

function prepack() {
  // Build (only if needed) before taking the lock: a build of a clean clone takes minutes.
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--wasm-only', '--if-stale'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
  });
  if (build.status !== 0) {
    fail(
      'the package must be built before it is packed, and the build failed (see above). It needs ' +
        'Rust with the wasm32 target and wasm-bindgen: `npm run setup` installs them, then `npm run build`.',
    );
  }
  const missing = REQUIRED.filter((f) => !existsSync(join(root, f)));
  if (missing.length > 0) fail(`refusing to pack without ${missing.join(', ')}: run \`npm run build\``);
  if (!existsSync(usersReadme)) fail('PACKAGE-README.md (the README shipped in the package) is missing');

  acquire();
  try {
    restoreReadme();
    renameSync(readme, devReadme);
    copyFileSync(usersReadme, readme);
  } catch (err) {
    restoreReadme();
    release();
    fail(`could not put the package README in place: ${err.message}`);
  }
}

function postpack() {
  restoreReadme();
  release();
}

const hook = process.argv[2];
if (hook === 'prepack') prepack();
else if (hook === 'postpack') postpack();
else fail('usage: node scripts/pack.mjs prepack|postpack');
