// examples/node/auction.mjs run as its header says, in this checkout (the package imports itself
// by name, `webmpc` and `webmpc/program`): three bidders, then a tie between two.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';

const run = (...bids: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'examples/node/auction.mjs'), ...bids], { cwd: ROOT, encoding: 'utf8', timeout: 110_000 });

describe('examples/node/auction.mjs', () => {
  it('prints the winner and the second price, the same at every bidder, and exits by itself', () => {
    const r = run('300', '500', '400');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('winner: bidder 1, price: 400 (every bidder learns the same: true)\n');
    const tie = run('7', '7');
    expect(tie.stdout).toBe('winner: bidder 0, price: 7 (every bidder learns the same: true)\n');
  }, 120_000);
});
