/**
 * The sealed-bid second-price (Vickrey) auction as a Boolean circuit: the winner (the lowest
 * index among the highest bids) and the price (the highest bid among the others; with a tie at
 * the top, the tied bid), both to every party.
 *
 * One pass over the bids keeps the highest bid so far, its (lowest) index, and the highest bid
 * among the others. A later bid takes the lead only if strictly higher, which makes ties go to
 * the lowest index; the runner-up then becomes the old leader, otherwise the larger of the old
 * runner-up and the new bid: two comparisons and three multiplexers of `bits` bits and one of
 * the winner's width per bid after the first, about 5·`bits` AND gates.
 *
 * {@link vickreyCircuit}: bid i is party i's input. {@link vickreyClientsCircuit}: each bid is a
 * client's value in a client–server run (`serve` with `authgc`), `input('client', bits + 1)`:
 * bit 0 its presence bit (1 when the bid counts; an absent or refused client's is 0 and its other
 * bits are arbitrary), bits 1 to `bits` the bid; every bid is ANDed with its presence bit first
 * (one AND per bit), which the client input protocol needs for privacy too.
 */
import { WebmpcError } from '../../errors.js';
import { CircuitBuilder, type Circuit, type UInt } from '../builder.js';

/** Options of {@link vickreyCircuit}. */
export interface VickreyCircuitOptions {
  /** Bidders, 2 to 2^20: bid i is party i's input. */
  readonly bidders: number;
  /** Bits of a bid (default 32), 1 to 64. */
  readonly bits?: number;
  /** Bits of the winner output (default: {@link winnerBits} of the bidders). */
  readonly winnerBits?: number;
}

/** Options of {@link vickreyClientsCircuit}. */
export interface VickreyClientsOptions {
  /** Client slots (bidders), 2 to 2^20. */
  readonly clients: number;
  /** Bits of a bid (default 32), 1 to 64. */
  readonly bits?: number;
}

/** Bits of the winner output for `bidders` bids: enough to write bidders − 1, at least 1. */
export function winnerBits(bidders: number): number {
  return Math.max(1, Math.ceil(Math.log2(bidders)));
}

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function checkSizes(count: number, what: string, bits: number): void {
  if (!Number.isSafeInteger(count) || count < 2 || count > 1 << 20) throw invalid(`${what} must be a whole number from 2 to 2^20`);
  if (!Number.isSafeInteger(bits) || bits < 1 || bits > 64) throw invalid('bits must be from 1 to 64');
}

/**
 * The auction over `count` bids, `bid(i)` making bid i (a UInt of `bits` bits) when the pass
 * reaches it, so that what it builds is live only from there (a compacted circuit then holds few
 * wires); its two outputs declared.
 */
function auction(b: CircuitBuilder, count: number, bid: (i: number) => UInt, bits: number, width: number): Circuit {
  let best = bid(0);
  let second = b.constant(0, bits);
  let winner = b.constant(0, width);
  for (let i = 1; i < count; i++) {
    const next = bid(i);
    const leads = next.gt(best);
    second = b.mux(leads, best, second.max(next));
    best = b.mux(leads, next, best);
    winner = b.mux(leads, b.constant(i, width), winner);
  }
  b.output(winner);
  b.output(second);
  return b.build();
}

/** The auction among `bidders` parties, bid i party i's (see the module docs). */
export function vickreyCircuit(options: VickreyCircuitOptions): Circuit {
  const { bidders } = options;
  const bits = options.bits ?? 32;
  checkSizes(bidders, 'bidders', bits);
  const width = options.winnerBits ?? winnerBits(bidders);
  if (!Number.isSafeInteger(width) || width < winnerBits(bidders) || width > 32) throw invalid('winnerBits must write every bidder index, at most 32');
  const b = new CircuitBuilder();
  const bids = Array.from({ length: bidders }, (_, i) => b.input(i, bits));
  return auction(b, bidders, (i) => bids[i]!, bits, width);
}

/** The auction over `clients` client bids (see the module docs for its inputs). */
export function vickreyClientsCircuit(options: VickreyClientsOptions): Circuit {
  const { clients } = options;
  const bits = options.bits ?? 32;
  checkSizes(clients, 'clients', bits);
  const b = new CircuitBuilder();
  const values = Array.from({ length: clients }, () => b.input('client', bits + 1));
  // Each bid gated by its presence bit as the pass reaches it.
  const gated = (i: number) => {
    const [present, ...bid] = values[i]!.bits();
    return b.mux(present!, b.concat(...bid), 0);
  };
  return auction(b, clients, gated, bits, winnerBits(clients));
}
