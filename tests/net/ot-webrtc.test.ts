// OT extension between two Node parties over the real network stack: WebRTC data channels
// (node-datachannel) introduced by the signaling server, wrapped in secureTransport with pinned
// Ed25519 identities. 10^5 random OTs and 10^5 chosen-message OTs, every one checked byte by byte
// against what the sender holds. (tests/ot covers the protocol's failure paths in memory;
// tests/browser/ot-webrtc.test.ts runs the same over Chromium's WebRTC.)
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, otReceiver, otSender, type OtReceiver, type OtSender } from '../../dist/index.js';
import * as net from '../../dist/net/node.js';
import { generateIdentity, secureTransport, type SecureTransport } from '../../dist/secure/index.js';
import { badOts } from '../ot/check.js';

const N = 100_000;

describe('OT over WebRTC (Node↔Node, node-datachannel) inside secure channels', () => {
  let signaling: net.SignalingServer;
  let inner: net.Transport[] = [];
  let secure: SecureTransport[] = [];
  let sender: OtSender | undefined;
  let receiver: OtReceiver | undefined;

  beforeAll(async () => {
    await init();
    signaling = await net.startSignalingServer({ port: 0 });
    const room = `ot-${randomBytes(8).toString('hex')}`;
    const identities = await Promise.all([generateIdentity(), generateIdentity()]);
    inner = await Promise.all(
      [0, 1].map((party) =>
        net.connectNodeMesh({ signalingUrl: signaling.url, room, party, parties: 2, connectTimeoutMs: 30_000 }),
      ),
    );
    secure = await Promise.all(
      inner.map((t, party) =>
        secureTransport(t, {
          identity: identities[party]!,
          sessionId: room,
          trust: 'pinned',
          peers: identities.map((id) => id.publicKey),
        }),
      ),
    );
  }, 60_000);

  afterAll(async () => {
    sender?.free();
    receiver?.free();
    // A secure transport owns its inner one; the inner close is a no-op after that, and covers a
    // failed handshake.
    await Promise.all([...secure, ...inner].map((t) => t.close().catch(() => {})));
    await signaling?.close();
  });

  it('runs the base OTs over the secure WebRTC channel', async () => {
    const [a, b] = secure as [SecureTransport, SecureTransport];
    expect(a.trust).toBe('pinned');
    expect(b.peerKeys[0]).toEqual(a.peerKeys[0]);
    const sessionId = new Uint8Array(randomBytes(32));
    [sender, receiver] = await Promise.all([
      otSender({ transport: a, peer: 1, sessionId }),
      otReceiver({ transport: b, peer: 0, sessionId }),
    ]);
    expect(sender.delta.length).toBe(16);
  });

  it(`${N} random OTs: every receiver block is the sender's block for its choice`, async () => {
    expect(sender && receiver).toBeTruthy();
    const [{ m0, m1 }, { choices, messages }] = await Promise.all([sender!.sendRandom(N), receiver!.receiveRandom(N)]);
    expect(choices.length).toBe(N);
    const ones = choices.reduce((s, c) => s + c, 0);
    // Random choice bits: 10^5 fair coins stay within ±2% of half except with negligible odds.
    expect(Math.abs(ones - N / 2)).toBeLessThan(N / 50);
    expect(badOts(m0, m1, choices, messages)).toEqual({ wrong: [], wrongCount: 0, equalsOther: [] });

    // The check can fail: one flipped bit in the receiver's output is caught at that index.
    const tampered = messages.slice();
    tampered[16 * 777 + 5]! ^= 0x10;
    expect(badOts(m0, m1, choices, tampered)).toMatchObject({ wrong: [777], wrongCount: 1 });
  });

  it(`${N} chosen-message OTs: the receiver gets exactly the chosen messages`, async () => {
    expect(sender && receiver).toBeTruthy();
    const m0 = new Uint8Array(randomBytes(16 * N));
    const m1 = new Uint8Array(randomBytes(16 * N));
    const choices = new Uint8Array(randomBytes(N)).map((x) => x & 1);
    const [, got] = await Promise.all([sender!.sendChosen(m0, m1), receiver!.receiveChosen(choices)]);
    expect(badOts(m0, m1, choices, got)).toEqual({ wrong: [], wrongCount: 0, equalsOther: [] });
    // Choosing the opposite bits gives the other messages (so the receiver got one, not both).
    const flipped = choices.map((c) => c ^ 1);
    expect(badOts(m0, m1, flipped, got).wrongCount).toBe(N);
  });
});
