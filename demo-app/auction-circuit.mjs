// The sealed-bid (Vickrey) comparison, built with webmpc's circuit builder. Both bidders build it
// themselves; the session compares the two builds' content hashes before any input is used, so a
// bidder running a different circuit is refused (PARAMETER_MISMATCH), not trusted.
import { CircuitBuilder } from '../dist/circuit/index.js';

export const BID_BITS = 32;

/**
 * Inputs: bid of bidder 0 (input 1), bid of bidder 1 (input 2), 32-bit unsigned.
 * Outputs: the winner (1 byte: 0 or 1; bidder 1 wins only with a strictly higher bid, so a tie
 * goes to bidder 0) and the price the winner pays (4 bytes, big-endian): the second-highest bid,
 * which is the loser's bid, min(bid0, bid1). Nothing else about the bids is revealed.
 */
export function sealedBidCircuit() {
  const b = new CircuitBuilder();
  const bid0 = b.input(0, BID_BITS);
  const bid1 = b.input(1, BID_BITS);
  b.output(bid1.gt(bid0));
  b.output(bid0.min(bid1));
  return b.build();
}

/** A bid as the big-endian bytes the session takes. */
export function encodeBid(bid) {
  const out = new Uint8Array(BID_BITS / 8);
  new DataView(out.buffer).setUint32(0, bid, false);
  return out;
}

/** The circuit's outputs as { winner, price }. */
export function decodeResult([winner, price]) {
  if (!winner || !price || winner.length !== 1 || price.length !== 4) throw new Error('unexpected auction outputs');
  return { winner: winner[0], price: new DataView(price.buffer, price.byteOffset, 4).getUint32(0, false) };
}
