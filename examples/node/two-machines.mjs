// One party of a two-party computation over WebRTC, authenticated and encrypted: run it twice,
// on two machines or in two terminals, with a signaling server running (`npx webmpc signal`).
//
//   npm install webmpc ws node-datachannel      # the Node transports' optional dependencies
//   node two-machines.mjs --party 0 --value 1000000 --signal ws://HOST:8787 --room R
//   node two-machines.mjs --party 1 --value 750000  --signal ws://HOST:8787 --room R
//
// Each run prints its public key and asks for the other's (--peer-key skips the question).
// --seed HEX (64 hex digits: this party's own secret identity seed, kept private) gives a fixed
// identity instead of a fresh one, so its public key can be handed out once.
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline/promises';
import { circuit, decodeUint, encodeUint, init, session } from 'webmpc';
import { connectNodeMesh } from 'webmpc/net/node';
import { generateIdentity, importIdentitySecret, publicKeyFromHex, publicKeyToHex, secureTransport } from 'webmpc/secure';

const { values } = parseArgs({
  options: {
    party: { type: 'string' },
    value: { type: 'string' },
    signal: { type: 'string', default: 'ws://127.0.0.1:8787' },
    room: { type: 'string' },
    seed: { type: 'string' },
    'peer-key': { type: 'string' },
  },
});
const party = Number(values.party);
if (party !== 0 && party !== 1) throw new Error('--party must be 0 or 1');
if (!values.room) throw new Error('--room is required (both parties name the same room)');

await init();
const me = values.seed ? await importIdentitySecret(Uint8Array.from(Buffer.from(values.seed, 'hex'))) : await generateIdentity();
console.error(`party ${party}: my public key ${publicKeyToHex(me.publicKey)}`);
let peerKey = values['peer-key'];
if (!peerKey) {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  peerKey = (await rl.question("the other party's public key: ")).trim();
  rl.close();
}

// Connect (WebRTC through the signaling server), then authenticate the other party's seat.
const inner = await connectNodeMesh({ signalingUrl: values.signal, room: values.room, party, parties: 2 });
const peers = [undefined, undefined];
peers[1 - party] = publicKeyFromHex(peerKey);
const transport = await secureTransport(inner, { identity: me, sessionId: values.room, trust: 'pinned', peers });

const b = new circuit.CircuitBuilder();
b.output(b.input(0, 32).gt(b.input(1, 32)));
const s = await session({ transport, party, parties: 2 });
try {
  const [out] = await s.run(b.build(), { inputs: [encodeUint(Number(values.value), 32)] });
  console.log(`party 0's value is larger: ${decodeUint(out, 1) === 1n}`);
} finally {
  await s.close(); // closes the secure transport and the WebRTC connections under it
}
