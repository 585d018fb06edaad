/**
 * The sealed-bid second-price (Vickrey) auction over client bids, as a Boolean circuit for a
 * client–server run (`serve` with `authgc`): each of `clients` input values is a client's
 * (`CircuitBuilder.input('client', bits + 1)`): bit 0 its presence bit (1 when its bid counts;
 * an absent or refused client's is 0 and its other bits are arbitrary), bits 1 to `bits` its
 * bid, least significant first. Outputs: the winner's slot (the lowest slot among the highest
 * bids present; slot 0 when no bid is) and the price (the highest bid among the other slots, 0 if
 * none), both to every server.
 *
 * Cost per client: a bid gated by its presence bit (one AND per bit), two comparisons and three
 * multiplexers of `bits` bits and one of the winner's width: about 6.3 AND gates per bid bit.
 */
import { WebmpcError } from '../../errors.js';
import { CircuitBuilder, type Circuit, type UInt } from '../builder.js';

/** Options of {@link vickreyClientsCircuit}. */
export interface VickreyClientsOptions {
  /** Client slots (bidders), 2 to 2^20. */
  readonly clients: number;
  /** Bits of a bid (default 32), 1 to 64. */
  readonly bits?: number;
}

/** Bits of the winner output for `clients` slots: enough to write clients − 1, at least 1. */
export function winnerBits(clients: number): number {
  return Math.max(1, Math.ceil(Math.log2(clients)));
}

/** The auction circuit over `clients` client bids (see the module docs for its inputs and outputs). */
export function vickreyClientsCircuit(options: VickreyClientsOptions): Circuit {
  const { clients } = options;
  const bits = options.bits ?? 32;
  if (!Number.isSafeInteger(clients) || clients < 2 || clients > 1 << 20) {
    throw new WebmpcError('INVALID_ARGUMENT', 'vickreyClientsCircuit: clients must be a whole number from 2 to 2^20');
  }
  if (!Number.isSafeInteger(bits) || bits < 1 || bits > 64) throw new WebmpcError('INVALID_ARGUMENT', 'vickreyClientsCircuit: bits must be from 1 to 64');
  const b = new CircuitBuilder();
  const width = winnerBits(clients);
  const bids: UInt[] = [];
  for (let i = 0; i < clients; i++) {
    const value = b.input('client', bits + 1);
    const [present, ...bid] = value.bits();
    bids.push(b.mux(present!, b.concat(...bid), 0));
  }
  let best = bids[0]!;
  let second = b.constant(0, bits);
  let winner = b.constant(0, width);
  for (let i = 1; i < clients; i++) {
    const bid = bids[i]!;
    const leads = bid.gt(best);
    second = b.mux(leads, best, second.max(bid));
    best = b.mux(leads, bid, best);
    winner = b.mux(leads, b.constant(i, width), winner);
  }
  b.output(winner);
  b.output(second);
  return b.build();
}
