// One bidder of the sealed-bid demo: a separate process, started by sealed-bid-2.mjs over an IPC
// channel. It gets its own bid and where to meet the other bidder, makes a fresh identity key,
// hands the public half to the launcher (standing in for an out-of-band key exchange), joins the
// WebRTC room, pins the other bidder's key in the secure channel, and runs the auction circuit
// with Yao's garbled circuits (bidder 0 garbles, bidder 1 evaluates). It prints its own bid
// ("your bid") and the result, never the other bidder's bid.
import { init, session } from '../dist/index.js';
import { connectNodeMesh } from '../dist/net/node.js';
import { disposeIdentity, generateIdentity, publicKeyFromHex, publicKeyToHex, secureTransport } from '../dist/secure/index.js';
import { decodeResult, encodeBid, sealedBidCircuit } from './auction-circuit.mjs';

/** The next IPC message of the given type. */
function message(type) {
  return new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (m?.type !== type) return;
      process.off('message', onMessage);
      process.off('disconnect', onGone);
      resolve(m);
    };
    const onGone = () => {
      process.off('message', onMessage);
      reject(new Error('the launcher went away'));
    };
    process.on('message', onMessage);
    process.once('disconnect', onGone);
  });
}

async function main() {
  if (!process.send) throw new Error('bidder.mjs is started by sealed-bid-2.mjs (it needs an IPC channel)');
  const { bidder, bid, signalingUrl, room } = await message('start');
  const other = 1 - bidder;
  const say = (line) => process.stdout.write(`${line}\n`);
  say(`your bid: ${bid} (stays in this process)`);

  const t0 = performance.now();
  await init();
  const circuit = sealedBidCircuit();
  const identity = await generateIdentity();
  process.send({ type: 'key', key: publicKeyToHex(identity.publicKey) });
  const { key } = await message('peer-key');
  const peers = [undefined, undefined];
  peers[other] = publicKeyFromHex(key);

  const inner = await connectNodeMesh({ signalingUrl, room, party: bidder, parties: 2, connectTimeoutMs: 30_000 });
  let transport;
  try {
    transport = await secureTransport(inner, { identity, sessionId: room, trust: 'pinned', peers });
    const s = await session({ transport, party: bidder, parties: 2 });
    const setupMs = performance.now() - t0;
    say(`connected to bidder ${other} over WebRTC; secure channel pinned to key ${key.slice(0, 16)}… (setup ${setupMs.toFixed(0)} ms)`);

    const t1 = performance.now();
    const out = await s.run(circuit, { inputs: [encodeBid(bid)], protocol: 'yao2pc', garbler: 0 });
    const computeMs = performance.now() - t1;
    s.free();
    const { winner, price } = decodeResult(out);
    say(
      winner === bidder
        ? `you win; you pay the second price, ${price} (computed in ${computeMs.toFixed(0)} ms)`
        : `bidder ${winner} wins and pays ${price}, the second price (computed in ${computeMs.toFixed(0)} ms)`,
    );
    process.send({ type: 'result', winner, price, setupMs, computeMs, andGates: circuit.andCount });
  } finally {
    await (transport ?? inner).close();
    disposeIdentity(identity);
  }
}

try {
  await main();
  process.disconnect?.();
} catch (error) {
  process.stderr.write(`${error?.code ? `${error.code}: ` : ''}${error?.message ?? error}\n`);
  process.exitCode = 1;
  process.disconnect?.();
}
