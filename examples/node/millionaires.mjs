// Two parties in one process: which of two numbers is larger, without either party showing its
// number to the other (Yao's millionaires). Run: node examples/node/millionaires.mjs [A B]
import { circuit, createMemoryTransports, decodeUint, encodeUint, init, session } from 'webmpc';

await init(); // loads the Wasm module once

// The function, as a Boolean circuit: party 0's 32-bit input > party 1's 32-bit input.
const b = new circuit.CircuitBuilder();
const alice = b.input(0, 32);
const bob = b.input(1, 32);
b.output(alice.gt(bob));
const richer = b.build();

// One transport per party; in one process, in-memory ones (over a network: see the README).
const transports = createMemoryTransports(2);

async function runParty(party, wealth) {
  const s = await session({ transport: transports[party], party, parties: 2 });
  try {
    // Each party passes only its own input, as the big-endian bytes of a 32-bit value.
    const [out] = await s.run(richer, { inputs: [encodeUint(wealth, 32)], protocol: 'yao2pc' });
    return decodeUint(out, 1) === 1n;
  } finally {
    await s.close(); // frees the session and closes its transport, so the process can exit
  }
}

const [a, c] = process.argv.slice(2).map(Number);
const [seenBy0, seenBy1] = await Promise.all([runParty(0, a ?? 1_000_000), runParty(1, c ?? 750_000)]);
console.log(`Alice is richer: ${seenBy0} (party 0 learns), ${seenBy1} (party 1 learns)`);
