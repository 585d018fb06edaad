// The Vickrey auction written with the TypeScript builder, run through the SDK (protocol
// 'mascot', in-memory transports): random bids from a seeded generator and ties (the lowest index
// wins and pays the tied bid), checked against the plain reference at every party; preprocessing
// ahead of the inputs (by program and by counts) leaves nothing for the run to generate; the
// progress a run reports.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, type Progress } from '../../dist/index.js';
import { vickreyAuction, vickreyReference, type Program } from '../../dist/program/index.js';
import { group, type Group } from '../session/helpers.js';
import { Rng } from './reference.js';

beforeAll(async () => {
  await init();
});

async function auction(g: Group, program: Program, bids: bigint[], onProgress?: (p: Progress) => void) {
  const outs = await Promise.all(
    g.sessions.map((s, party) => {
      const mine = program.inputsOf(party).map((i) => bids[i]!);
      return s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, mine), ...(party === 0 && onProgress ? { onProgress } : {}) });
    }),
  );
  return outs.map((o) => program.decodeOutputs(o));
}

function expectResult(got: (bigint | undefined)[][], bids: bigint[]) {
  const { winner, price } = vickreyReference(bids);
  for (const out of got) expect(out).toEqual([BigInt(winner), price]);
}

describe('Vickrey auction, 2 parties', () => {
  let g: Group;
  beforeAll(async () => {
    g = await group(2, 120_000);
  });
  afterAll(async () => {
    await Promise.all(g.sessions.map((s) => s.close()));
  });

  it('random 32-bit bids (2 and 5 bids, seeds 1 and 2)', async () => {
    for (const [seed, n] of [
      [1, 2],
      [2, 5],
    ] as const) {
      const rng = new Rng(seed);
      const program = await vickreyAuction({ parties: 2, bids: n, bits: 32 });
      const bids = Array.from({ length: n }, () => rng.bits(32));
      expectResult(await auction(g, program, bids), bids);
    }
  }, 120_000);

  it('ties: the lowest index wins and pays the tied bid; all equal; a tie below the top; zeros and the maximum', async () => {
    const program = await vickreyAuction({ parties: 2, bids: 6, bits: 8 });
    for (const bids of [
      [3n, 200n, 7n, 200n, 200n, 1n], // the top tied three ways: index 1 wins, pays 200
      [9n, 9n, 9n, 9n, 9n, 9n], // all equal: index 0
      [0n, 5n, 5n, 255n, 0n, 4n], // a tie below the top does not matter
      [0n, 0n, 0n, 0n, 0n, 255n], // the last wins, pays 0
    ]) {
      expectResult(await auction(g, program, bids), bids);
    }
  }, 120_000);

  it("method 'bitwise' (bids as their bits, products only): random bids and every tie case give the reference's result, with no random bits", async () => {
    const rng = new Rng(3);
    const cases: [number, bigint[]][] = [
      [32, Array.from({ length: 5 }, () => rng.bits(32))],
      [8, [3n, 200n, 7n, 200n, 200n, 1n]],
      [8, [9n, 9n, 9n, 9n, 9n, 9n]],
      [8, [0n, 5n, 5n, 255n, 0n, 4n]],
      [8, [0n, 0n, 0n, 0n, 0n, 255n]],
      [8, [77n]],
    ];
    for (const [bits, bids] of cases) {
      const program = await vickreyAuction({ parties: 2, bids: bids.length, bits, method: 'bitwise' });
      expect(program.requirements().bits).toBe(0);
      expect(program.owners).toHaveLength(bids.length * bits);
      // Each bid as its bits, least significant first, from its bidder.
      const bitsOf = (v: bigint) => Array.from({ length: bits }, (_, i) => (v >> BigInt(i)) & 1n);
      const outs = await Promise.all(
        g.sessions.map((s, party) => {
          const mine = program.inputsOf(party).map((i) => bitsOf(bids[Math.floor(i / bits)]!)[i % bits]!);
          return s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, mine) });
        }),
      );
      expectResult(outs.map((o) => program.decodeOutputs(o)), bids);
    }
  }, 180_000);

  it('a single bid: index 0, price 0', async () => {
    const program = await vickreyAuction({ parties: 2, bids: 1, bits: 16 });
    expect(program.inputsOf(1)).toEqual([]);
    expectResult(await auction(g, program, [1234n]), [1234n]);
  }, 60_000);

  it('preprocessing ahead of the inputs (by program, or by counts) leaves the run nothing to generate; progress phases in order', async () => {
    const program = await vickreyAuction({ parties: 2, bids: 3, bits: 12 });
    const bids = [100n, 4000n, 4000n];
    const need = program.requirements();
    // By counts: exactly the requirements (after any leftovers are used up by a first run).
    expectResult(await auction(g, program, bids), bids);
    await Promise.all(g.sessions.map((s) => s.preprocess('mascot', { triples: need.triples, bits: need.bits })));
    let phases: string[] = [];
    expectResult(await auction(g, program, bids, (p) => phases.push(p.phase)), bids);
    expect(new Set(phases)).toEqual(new Set(['evaluating']));
    // By program.
    await Promise.all(g.sessions.map((s) => s.preprocess('mascot', { program })));
    phases = [];
    const events: Progress[] = [];
    expectResult(
      await auction(g, program, bids, (p) => {
        phases.push(p.phase);
        events.push(p);
      }),
      bids,
    );
    expect(new Set(phases)).toEqual(new Set(['evaluating']));
    const last = events[events.length - 1]!;
    expect(last.done).toBe(program.instructions);
    expect(last.total).toBe(program.instructions);
    expect(events.every((e, i) => i === 0 || e.done >= events[i - 1]!.done)).toBe(true);
  }, 120_000);
});

describe('Vickrey auction, 3 parties', () => {
  it('random 16-bit bids with a forced tie at the top, and the progress of a first run (setup, bits, triples, evaluating)', async () => {
    const g = await group(3, 120_000);
    try {
      const rng = new Rng(3);
      const program = await vickreyAuction({ parties: 3, bids: 4, bits: 16 });
      const bids = Array.from({ length: 4 }, () => rng.bits(15));
      bids[3] = bids[1] = (1n << 16n) - 1n;
      const events: Progress[] = [];
      const got = await auction(g, program, bids, (p) => events.push(p));
      expectResult(got, bids);
      expect(got[0]).toEqual([1n, (1n << 16n) - 1n]);
      const order = events.map((e) => e.phase).filter((p, i, all) => p !== all[i - 1]);
      expect(order).toEqual(['setup', 'bits', 'triples', 'evaluating']);
      const need = program.requirements();
      expect(events.filter((e) => e.phase === 'bits').at(-1)).toMatchObject({ done: need.bits, total: need.bits });
      expect(events.filter((e) => e.phase === 'triples').at(-1)!.total).toBeGreaterThanOrEqual(need.triples);
      expect(events.at(-1)!.bytesSent).toBeGreaterThan(0);
    } finally {
      await Promise.all(g.sessions.map((s) => s.close()));
    }
  }, 120_000);
});
