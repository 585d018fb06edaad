// The package as a user gets it: `npm pack` of this checkout, installed with `npm install` into an
// empty project (its dependencies from npm's cache, as on any machine that ran `npm ci` here).
// Shared by tests/package*.test.ts and tests/browser/package*.test.ts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

export interface Packed {
  /** Path of the .tgz. */
  tarball: string;
  /** Paths inside the package, as npm lists them. */
  files: string[];
  /** Size of the .tgz in bytes. */
  size: number;
}

/** Runs npm with its chatter (warnings, notices) kept out of the output. */
export function npm(args: string[], cwd: string, timeout = 180_000): string {
  return execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
  });
}

/** `npm pack` of this checkout into `dir` (the prepack hook builds if needed and swaps READMEs). */
export function pack(dir: string): Packed {
  const out = npm(['pack', '--json', '--pack-destination', dir], ROOT);
  const info = JSON.parse(out)[0] as { filename: string; size: number; files: { path: string }[] };
  return { tarball: join(dir, info.filename), files: info.files.map((f) => f.path), size: info.size };
}

/**
 * An empty ESM project at `app` with the tarball installed as a user would (`npm install
 * ./webmpc-x.y.z.tgz`), and `extra` packages (names) from the cache beside it.
 */
export function installInto(app: string, tarball: string, extra: string[] = []): void {
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }, null, 2));
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, ...extra], app);
}
