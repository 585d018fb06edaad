// The auction at scale as deployed (`npm run demo -- --servers S`, the clients bench): every
// compute party a `webmpc serve` process (MASCOT or authgc among them over WebSockets, pinned keys), client
// bidders in this process (`submit` over WebSockets) and as `webmpc submit` processes.
import { describe, expect, it } from 'vitest';
import { vickreyReference } from '../../dist/program/index.js';
import { serversAuction } from '../../scripts/lib/servers-demo.mjs';
import { ROOT } from '../helpers.js';

describe('webmpc serve / webmpc submit', () => {
  it('3 server processes, 10 bidders (2 of them `webmpc submit` processes): every bidder gets the Vickrey result of the bids', async () => {
    const bids = [5n, 1_000_000n, 77n, 4_000_000_000n, 12n, 999_999n, 3n, 64n, 2n ** 31n, 0n];
    const r = await serversAuction({ root: ROOT, servers: 3, bids, timeoutS: 300, cliClients: 2 });
    expect(r.errors.filter(Boolean)).toEqual([]);
    const bySlot: bigint[] = [];
    r.clients.forEach((c: { index: number }, i: number) => (bySlot[c.index] = bids[i]!));
    const { winner, price } = vickreyReference(bySlot);
    for (const c of r.clients) expect(c.outputs).toEqual([BigInt(winner), price]);
    expect(bySlot[winner]).toBe(4_000_000_000n);
    expect(r.clients.filter((c: { cli?: boolean }) => c.cli)).toHaveLength(2);
    for (const s of r.servers) {
      expect(s.outputs).toEqual([String(winner), String(price)]);
      expect(s.clients).toBe(bids.length);
    }
  }, 300_000);

  it('--protocol authgc: 3 server processes, 6 bidders (1 a `webmpc submit` process): every bidder gets the Vickrey result', async () => {
    const bids = [5n, 4_000_000_000n, 77n, 2n ** 31n, 4_000_000_000n, 0n];
    const r = await serversAuction({ root: ROOT, servers: 3, bids, timeoutS: 300, cliClients: 1, protocol: 'authgc' });
    expect(r.errors.filter(Boolean)).toEqual([]);
    const bySlot: bigint[] = [];
    r.clients.forEach((c: { index: number }, i: number) => (bySlot[c.index] = bids[i]!));
    const { winner, price } = vickreyReference(bySlot);
    for (const c of r.clients) expect(c.outputs).toEqual([BigInt(winner), price]);
    expect(price).toBe(4_000_000_000n); // a tie at the top: the price is the tied bid
    for (const s of r.servers) expect(s.outputs).toEqual([String(winner), String(price)]);
  }, 300_000);
});
