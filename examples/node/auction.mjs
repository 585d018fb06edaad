// A sealed-bid second-price (Vickrey) auction among three bidders in one process, with MASCOT:
// arithmetic MPC secure against any two of the three cheating (with abort). Each bidder learns
// who won and the price (the second-highest bid), nothing else about the other bids.
// Run: node examples/node/auction.mjs [BID0 BID1 BID2]
import { createMemoryTransports, init, session } from 'webmpc';
import { vickreyAuction } from 'webmpc/program';

await init();

const bids = process.argv.slice(2).map(BigInt);
if (bids.length === 0) bids.push(300n, 500n, 400n);
const parties = bids.length;

// The auction as an arithmetic program: bid i comes from party i, unsigned 32-bit integers.
// Outputs, to everyone: the winner's index (ties go to the lowest index) and the price.
const auction = await vickreyAuction({ parties, bids: parties, bits: 32 });

const transports = createMemoryTransports(parties);

async function bidder(party, bid) {
  const s = await session({ transport: transports[party], party, parties });
  try {
    // Input-independent preprocessing (setup, random bits, Beaver triples) can run while users
    // are still typing their bids; run() would otherwise do it itself.
    await s.preprocess('mascot', { program: auction });
    const out = await s.run(auction, { protocol: 'mascot', inputs: auction.encodeInputs(party, [bid]) });
    const [winner, price] = auction.decodeOutputs(out);
    return { winner, price };
  } finally {
    await s.close();
  }
}

const results = await Promise.all(bids.map((bid, party) => bidder(party, bid)));
const { winner, price } = results[0];
console.log(`winner: bidder ${winner}, price: ${price} (every bidder learns the same: ${results.every((r) => r.winner === winner && r.price === price)})`);
