// Yao 2PC through session.run between two Node parties over the real stack: WebRTC data channels
// (node-datachannel) introduced by the signaling server, inside secureTransport with pinned
// identities. Known answers from ../shared/circuits (AES-128 FIPS-197, SHA-256 "abc"); two
// parties running different circuits must both refuse with PARAMETER_MISMATCH.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort, session, type Session } from '../../dist/index.js';
import * as net from '../../dist/net/node.js';
import { generateIdentity, secureTransport, type SecureTransport } from '../../dist/secure/index.js';
import { hex, referenceCircuit, unhex } from '../helpers.js';

const read = referenceCircuit;

interface Pair {
  transports: SecureTransport[];
  sessions: Session[];
  close(): Promise<void>;
}

/** Two parties on one WebRTC mesh, secure channels with pinned keys, a session each. */
async function connectPair(signalingUrl: string): Promise<Pair> {
  const room = `yao-${randomBytes(8).toString('hex')}`;
  const identities = await Promise.all([generateIdentity(), generateIdentity()]);
  const inner = await Promise.all(
    [0, 1].map((party) => net.connectNodeMesh({ signalingUrl, room, party, parties: 2, connectTimeoutMs: 30_000 })),
  );
  const close = async () => void (await Promise.all(inner.map((t) => t.close().catch(() => {}))));
  try {
    const transports = await Promise.all(
      inner.map((t, party) =>
        secureTransport(t, { identity: identities[party]!, sessionId: room, trust: 'pinned', peers: identities.map((i) => i.publicKey) }),
      ),
    );
    const sessions = await Promise.all(transports.map((transport, party) => session({ transport, party, parties: 2 })));
    return {
      transports,
      sessions,
      close: async () => {
        sessions.forEach((s) => s.free());
        await Promise.all(transports.map((t) => t.close().catch(() => {})));
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

describe('yao2pc over WebRTC (Node↔Node, node-datachannel) inside pinned secure channels', () => {
  let signaling: net.SignalingServer;
  let pair: Pair | undefined;

  beforeAll(async () => {
    await init();
    signaling = await net.startSignalingServer({ port: 0 });
    pair = await connectPair(signaling.url);
  }, 60_000);

  afterAll(async () => {
    await pair?.close();
    await signaling?.close();
  });

  it('AES-128 (aes_128.txt): both parties get the FIPS-197 C.1 ciphertext', async () => {
    const [a, b] = pair!.sessions as [Session, Session];
    const aes = read('aes_128.txt');
    const [outA, outB] = await Promise.all([
      a.run(aes, { inputs: [unhex('000102030405060708090a0b0c0d0e0f')], protocol: 'yao2pc' }),
      b.run(aes, { inputs: [unhex('00112233445566778899aabbccddeeff')], protocol: 'yao2pc' }),
    ]);
    expect(outA.map((v) => hex(v!))).toEqual(['69c4e0d86a7b0430d8cdb78070b4c55a']);
    expect(outB.map((v) => hex(v!))).toEqual(['69c4e0d86a7b0430d8cdb78070b4c55a']);
    // Same session, second run, other key/plaintext (key 0, pt 0), output only to the evaluator.
    const [zA, zB] = await Promise.all([
      a.run(aes, { inputs: [new Uint8Array(16)], protocol: 'yao2pc', outputs: [[1]] }),
      b.run(aes, { inputs: [new Uint8Array(16)], protocol: 'yao2pc', outputs: [[1]] }),
    ]);
    expect(zA).toEqual([undefined]);
    expect(hex(zB[0]!)).toBe('66e94bd4ef8a2c3b884cfa59ca342b2e');
  }, 30_000);

  it('SHA-256 (sha256.txt): the compression of "abc" padded from the IV gives SHA-256("abc")', async () => {
    const [a, b] = pair!.sessions as [Session, Session];
    const sha = read('sha256.txt');
    const block = unhex(`616263 80 ${'00'.repeat(52)} 0000000000000018`);
    const iv = unhex('6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19');
    const [outA, outB] = await Promise.all([
      a.run(sha, { inputs: [block], protocol: 'yao2pc' }),
      b.run(sha, { inputs: [iv], protocol: 'yao2pc' }),
    ]);
    const want = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(hex(outA[0]!)).toBe(want);
    expect(hex(outB[0]!)).toBe(want);
  }, 30_000);

  it('different circuits on the two sides: both reject; the mismatch is a ProtocolAbort PARAMETER_MISMATCH', async () => {
    const fresh = await connectPair(signaling.url);
    try {
      const [a, b] = fresh.sessions as [Session, Session];
      const x = unhex('0000000000000005');
      const results = await Promise.allSettled([
        a.run(read('adder64.txt'), { inputs: [x], protocol: 'yao2pc' }),
        b.run(read('sub64.txt'), { inputs: [x], protocol: 'yao2pc' }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      const reasons = results.map((r) => (r as PromiseRejectedResult).reason as { name?: string; code?: string });
      // Both sides hold the other's circuit description, so both reach the verdict themselves
      // (a mismatch leaves the transport open for exactly that reason).
      for (const e of reasons) {
        expect(e).toBeInstanceOf(ProtocolAbort);
        expect(e.code).toBe('PARAMETER_MISMATCH');
      }
    } finally {
      await fresh.close();
    }
  }, 30_000);
});
