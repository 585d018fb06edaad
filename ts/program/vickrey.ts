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
  /**
   * `bidders[i]`: the party supplying bid i, or `'clients'`: every bid comes from an external
   * client (the compute parties' `serve`, bid i from the i-th accepted client). Default: bid i
   * comes from party i mod parties.
   */
  bidders?: readonly number[] | 'clients';
  /**
   * `'tournament'` (default): each bid is one k-bit integer input, compared in a tournament.
   * `'bitwise'`: each bid is input as its k bits (k 1-bit integer inputs, least significant
   * first; a client–server run gives them with `input: { type: 'bits', bits: k }`), and the
   * highest bid is found bit by bit from the top (the bidders still in the running keep a bit
   * only if one of them has it) — products only, no comparisons and no random bits: about
   * 200 triples per bid for k = 32, against ≈ 150 triples and ≈ 190 random bits in the
   * tournament. Same outputs, same tie rule.
   */
  method?: 'tournament' | 'bitwise';
}

/** The auction's builder, before `build()` (for inspecting or extending the program). */
export function vickreyBuilder(options: VickreyOptions): ProgramBuilder {
  const { parties, bids, bits = 32, bidders } = options ?? ({} as VickreyOptions);
  if (!Number.isInteger(bids) || bids < 1 || bids > 1 << 20) throw new WebmpcError('INVALID_ARGUMENT', 'bids must be an integer in [1, 2^20]');
  if (bidders !== undefined && bidders !== 'clients' && (!Array.isArray(bidders) || bidders.length !== bids)) {
    throw new WebmpcError('INVALID_ARGUMENT', 'bidders must name a party for every bid');
  }
  const b = new ProgramBuilder({ parties, field: 'prime' });
  const owner = (i: number) => (bidders === 'clients' ? 'client' : bidders ? bidders[i]! : i % parties);
  if (options.method === 'bitwise') {
    if (!Number.isInteger(bits) || bits < 1 || bits > 64) throw new WebmpcError('INVALID_ARGUMENT', 'bits must be an integer in [1, 64]');
    const bidBits = Array.from({ length: bids }, (_, i) => Array.from({ length: bits }, () => b.uint(owner(i), 1)));
    const [index, price] = bitwiseVickrey(b, bidBits);
    b.output(index);
    b.output(price);
    return b;
  }
  if (options.method !== undefined && options.method !== 'tournament') throw new WebmpcError('INVALID_ARGUMENT', "method must be 'tournament' or 'bitwise'");
  const values = Array.from({ length: bids }, (_, i) => b.uint(owner(i), bits));
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

/** a_0·a_1·…·a_i for every i (bits), in log depth: ⌈m/2⌉·⌈log2 m⌉ products. */
function prefixAnd(a: readonly Value[]): Value[] {
  if (a.length <= 1) return [...a];
  const half = Math.ceil(a.length / 2);
  const left = prefixAnd(a.slice(0, half));
  const right = prefixAnd(a.slice(half));
  const carry = left[left.length - 1]!;
  return [...left, ...right.map((r) => carry.and(r))];
}

/** The product of bits, as a balanced tree. */
function productOf(a: readonly Value[]): Value {
  let level = [...a];
  while (level.length > 1) {
    const next: Value[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? level[i]!.and(level[i + 1]!) : level[i]!);
    level = next;
  }
  return level[0]!;
}

/**
 * The highest of the bids still `active` (undefined: every bid), bit by bit from the top: at bit
 * j, any = OR of (active_i AND bit_ij); the bidders without bit j drop out when any is 1. Returns
 * the highest value and who holds it (one or more bidders, on ties).
 */
function highest(b: ProgramBuilder, bidBits: readonly Value[][], active: readonly Value[] | undefined): { value: Value; active: Value[] } {
  const k = bidBits[0]!.length;
  let value = b.constant(0);
  let still = active ? [...active] : undefined;
  for (let j = k - 1; j >= 0; j--) {
    const has = bidBits.map((bid, i) => (still ? still[i]!.and(bid[j]!) : bid[j]!));
    const any = productOf(has.map((h) => h.not())).not();
    value = value.add(any.mul(2n ** BigInt(j)));
    still = has.map((h, i) => any.select(h, still ? still[i]! : b.constant(1)));
  }
  return { value, active: still ?? bidBits.map(() => b.constant(1)) };
}

/** [winner's index, price]: the first highest bid wins and pays the highest of the others. */
function bitwiseVickrey(b: ProgramBuilder, bidBits: readonly Value[][]): [Value, Value] {
  const top = highest(b, bidBits, undefined);
  // The first of the highest: active_i and no active bidder before i.
  const noneBefore = prefixAnd(top.active.map((a) => a.not()));
  const winner = top.active.map((a, i) => (i === 0 ? a : a.and(noneBefore[i - 1]!)));
  let index = b.constant(0);
  winner.forEach((w, i) => {
    if (i > 0) index = index.add(w.mul(i));
  });
  const price = highest(b, bidBits, winner.map((w) => w.not())).value;
  return [index, price];
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
