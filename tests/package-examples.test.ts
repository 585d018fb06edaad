// examples/node/two-machines.mjs as its header says to run it: a signaling server and two
// processes, each one party over WebRTC, authenticated by pinned keys. In this checkout the
// example imports the package by its own name (Node resolves `webmpc` to dist/ through the
// package's exports); the in-process example runs from the packed package in package.test.ts.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startSignalingServer } from '../dist/net/node.js';
import { importIdentitySecret, publicKeyToHex } from '../dist/secure/index.js';
import { ROOT } from './helpers.js';

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'examples/node/two-machines.mjs'), ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('examples/node/two-machines.mjs', () => {
  it('two processes over WebRTC with pinned keys compare their values, both ways round', async () => {
    const server = await startSignalingServer({ port: 0 });
    try {
      const seeds = [randomBytes(32), randomBytes(32)];
      const keys = await Promise.all(seeds.map(async (s) => publicKeyToHex((await importIdentitySecret(new Uint8Array(s))).publicKey)));
      for (const [v0, v1, want] of [
        [1_000_000, 750_000, true],
        [3, 4_000_000_000, false],
      ] as const) {
        const room = `example-${Date.now()}-${v0}`;
        const party = (p: 0 | 1, value: number) =>
          run(['--party', String(p), '--value', String(value), '--signal', server.url, '--room', room, '--seed', seeds[p]!.toString('hex'), '--peer-key', keys[1 - p]!]);
        const [a, b] = await Promise.all([party(0, v0), party(1, v1)]);
        for (const [r, p] of [[a, 0], [b, 1]] as const) {
          expect(r.code, r.stderr).toBe(0);
          expect(r.stdout).toBe(`party 0's value is larger: ${want}\n`);
          expect(r.stderr).toBe(`party ${p}: my public key ${keys[p]}\n`);
        }
      }
    } finally {
      await server.close();
    }
  }, 100_000);
});
