// The sealed-bid demo (npm run demo, minus setup and build): two bidder processes over WebRTC.
// Fixed bids, so the printed result is known; each bidder prints only its own bid.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';

const DEMO = join(ROOT, 'demo-app/sealed-bid-2.mjs');

function demo(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [DEMO, ...args], { timeout: 45_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** The lines one bidder printed (the launcher prefixes them with `[bidder i]`). */
const linesOf = (stdout: string, bidder: number) =>
  stdout.split('\n').filter((l) => l.startsWith(`[bidder ${bidder}] `)).join('\n');

describe('sealed-bid demo (two bidder processes over WebRTC)', () => {
  it('the higher bidder wins and pays the other bid; each bidder prints only its own bid', async () => {
    const bids = [123_456_789, 3_000_000_017];
    const r = await demo(bids.map(String));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('result: bidder 1 wins and pays 123456789 (the second-highest bid)');
    expect(r.stdout).toMatch(/time: setup \d+ ms .*computation \d+ ms/);
    const [b0, b1] = [linesOf(r.stdout, 0), linesOf(r.stdout, 1)];
    expect(b0).toContain('your bid: 123456789');
    expect(b1).toContain('your bid: 3000000017');
    expect(b1).toContain('you win; you pay the second price, 123456789');
    expect(b0).toContain('bidder 1 wins and pays 123456789');
    // The loser never learns the winning bid.
    expect(r.stdout.replace(/^\[bidder 1\].*$/gm, '')).not.toContain('3000000017');
    expect(r.stderr).toBe('');
  }, 60_000);

  it('ties go to bidder 0; a lower bid from bidder 1 loses', async () => {
    const tie = await demo(['4294967295', '4294967295']);
    expect(tie.code, tie.stderr).toBe(0);
    expect(tie.stdout).toContain('result: bidder 0 wins and pays 4294967295');
    const low = await demo(['10', '0']);
    expect(low.code, low.stderr).toBe(0);
    expect(low.stdout).toContain('result: bidder 0 wins and pays 0');
  }, 60_000);

  it('bad bids exit 2 with a usage line', async () => {
    const r = await demo(['12', '4294967296']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^usage: /);
  });
});
