/**
 * A Vickrey (second-price, sealed-bid) auction written with the {@link ProgramBuilder}: the
 * example of the MASCOT paper, and the same program as the Rust `webmpc_spdz::examples::vickrey`
 * (the builders write identical bytes).
 *
 * ```ts
 * const auction = await vickreyAuction({ parties: 3, bids: 3, bits: 32 });   // bid i from party i
 * const out = await s.run(auction, { protocol: 'mascot', inputs: auction.encodeInputs(party, [myBid]) });
 * const [winner, price] = auction.decodeOutputs(out);                           // bigints
 * ```
 *
 * Outputs, to every party: the winner's index (0-based, in bid order) and the price, the highest
 * bid among the others (0 when there is a single bid). **Ties go to the lowest index**: among
 * equal highest bids the first wins and pays its own bid (the equal second one). Nothing else is
 * revealed: not the bids, not who bid what beyond the winner. Every bid is range-checked by the
 * protocol (a bidder that inputs a value outside [0, 2^bits) makes the run abort), so a bidder
 * running modified code cannot learn another bid from the price either.
 *
 * How: a tournament keeps (highest bid, its index, second-highest bid) per subtree, ⌈log2 bids⌉
 * rounds of two comparisons and five selects per match; about (bids − 1)·(6k + 87) triples for
 * k-bit bids (each comparison ≈ 3k + 64, each select 1).
 */
import { WebmpcError } from '../errors.js';
import { ProgramBuilder, type Value } from './builder.js';
import type { Program } from './program.js';

/** Options of {@link vickreyAuction}. */
export interface VickreyOptions {
  /** The number of parties (2 ..= 1024). */
  parties: number;
  /** The number of bids (≥ 1). */
  bids: number;
  /** The bids' width in bits (1 ..= 64; default 32): bids are unsigned integers below 2^bits. */
  bits?: number;
  /** `bidders[i]`: the party supplying bid i. Default: bid i comes from party i mod parties. */
  bidders?: readonly number[];
}

/** The auction's builder, before `build()` (for inspecting or extending the program). */
export function vickreyBuilder(options: VickreyOptions): ProgramBuilder {
  const { parties, bids, bits = 32, bidders } = options ?? ({} as VickreyOptions);
  if (!Number.isInteger(bids) || bids < 1 || bids > 1 << 20) throw new WebmpcError('INVALID_ARGUMENT', 'bids must be an integer in [1, 2^20]');
  if (bidders !== undefined && (!Array.isArray(bidders) || bidders.length !== bids)) {
    throw new WebmpcError('INVALID_ARGUMENT', 'bidders must name a party for every bid');
  }
  const b = new ProgramBuilder({ parties, field: 'prime' });
  const values = Array.from({ length: bids }, (_, i) => b.uint(bidders ? bidders[i]! : i % parties, bits));
  const zero = b.constant(0);
  let level: [max: Value, index: Value, second: Value][] = values.map((v, i) => [v, b.constant(i), zero]);
  while (level.length > 1) {
    const next: typeof level = [];
    for (let j = 0; j < level.length; j += 2) {
      const left = level[j]!;
      const right = level[j + 1];
      if (!right) {
        next.push(left);
        continue;
      }
      const [lm, li, ls] = left;
      const [rm, ri, rs] = right;
      // The right subtree (higher indices) wins only with a strictly higher bid.
      const r = lm.lt(rm);
      const max = r.select(rm, lm);
      const index = r.select(ri, li);
      const loser = r.select(lm, rm);
      const runner = r.select(rs, ls);
      const second = loser.lt(runner).select(runner, loser);
      next.push([max, index, second]);
    }
    level = next;
  }
  const [, index, second] = level[0]!;
  b.output(index);
  b.output(second);
  return b;
}

/** The auction as a program: outputs winner index, then price, to every party. */
export function vickreyAuction(options: VickreyOptions): Promise<Program> {
  return vickreyBuilder(options).build();
}

/** The result of an auction. */
export interface VickreyResult {
  /** The index of the winning bid (the first of the highest). */
  winner: number;
  /** The highest bid among the others (0 for a single bid). */
  price: bigint;
}

/** The auction's answer in the clear, for checking: the first highest bid wins, pays the highest other. */
export function vickreyReference(bids: readonly bigint[]): VickreyResult {
  if (bids.length === 0) throw new WebmpcError('INVALID_ARGUMENT', 'no bids');
  let winner = 0;
  bids.forEach((v, i) => {
    if (v > bids[winner]!) winner = i;
  });
  let price = 0n;
  bids.forEach((v, i) => {
    if (i !== winner && v > price) price = v;
  });
  return { winner, price };
}
