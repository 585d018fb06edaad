// MASCOT through session.run among three Node parties over the real stack: a WebRTC mesh
// (node-datachannel) introduced by the signaling server, inside secureTransport with pinned
// identities. The Vickrey auction and a GF(2^128) program against their references; then a
// party whose network connection dies during preprocessing: the other two get a typed abort
// within the bound.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, session, TransportError, type Session } from '../../dist/index.js';
import * as net from '../../dist/net/node.js';
import { ProgramBuilder, vickreyAuction, vickreyReference } from '../../dist/program/index.js';
import { generateIdentity, secureTransport, type SecureTransport } from '../../dist/secure/index.js';
import { refGfMul } from '../helpers.js';
import { rejection } from '../session/helpers.js';

interface Mesh {
  inner: net.Transport[];
  secure: SecureTransport[];
  sessions: Session[];
  close(): Promise<void>;
}

async function mesh(signalingUrl: string, parties: number, recvTimeoutMs = 30_000): Promise<Mesh> {
  const room = `mascot-${randomBytes(8).toString('hex')}`;
  const identities = await Promise.all(Array.from({ length: parties }, () => generateIdentity()));
  const inner = await Promise.all(
    Array.from({ length: parties }, (_, party) => net.connectNodeMesh({ signalingUrl, room, party, parties, connectTimeoutMs: 30_000, recvTimeoutMs })),
  );
  const secure: SecureTransport[] = [];
  const close = async () => void (await Promise.all([...secure, ...inner].map((t) => t.close().catch(() => {}))));
  try {
    secure.push(
      ...(await Promise.all(
        inner.map((t, party) => secureTransport(t, { identity: identities[party]!, sessionId: room, trust: 'pinned', peers: identities.map((i) => i.publicKey) })),
      )),
    );
    const sessions = await Promise.all(secure.map((transport, party) => session({ transport, party, parties })));
    return { inner, secure, sessions, close };
  } catch (error) {
    await close();
    throw error;
  }
}

describe('mascot over WebRTC (Node↔Node↔Node, node-datachannel) inside pinned secure channels', () => {
  let signaling: net.SignalingServer;
  let m: Mesh | undefined;

  beforeAll(async () => {
    await init();
    signaling = await net.startSignalingServer({ port: 0 });
    m = await mesh(signaling.url, 3);
  }, 90_000);

  afterAll(async () => {
    await m?.close();
    await signaling?.close();
  });

  it('the Vickrey auction of 4 bids (a tie at the top): every party gets the winner and the price', async () => {
    const program = await vickreyAuction({ parties: 3, bids: 4, bits: 16 });
    const bids = [40000n, 65535n, 17n, 65535n];
    const outs = await Promise.all(
      m!.sessions.map((s, party) => s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, program.inputsOf(party).map((i) => bids[i]!)) })),
    );
    const { winner, price } = vickreyReference(bids);
    expect(winner).toBe(1);
    for (const o of outs) expect(program.decodeOutputs(o)).toEqual([1n, price]);
  }, 90_000);

  it('a GF(2^128) program with outputs to single parties', async () => {
    const b = new ProgramBuilder({ parties: 3, field: 'binary' });
    const [x, y, z] = [0, 1, 2].map((p) => b.element(p)) as [ReturnType<typeof b.element>, ReturnType<typeof b.element>, ReturnType<typeof b.element>];
    b.output(x.mul(y).add(z), { to: 2 });
    b.output(x.mul(z).mul(0x87n));
    const program = await b.build();
    const v = [0x0123456789abcdef0123456789abcdefn, 0xfedcba9876543210fedcba9876543210n, 3n];
    const outs = await Promise.all(m!.sessions.map((s, party) => s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, [v[party]!]) })));
    const first = refGfMul(v[0]!, v[1]!) ^ v[2]!;
    const second = refGfMul(refGfMul(v[0]!, v[2]!), 0x87n);
    expect(program.decodeOutputs(outs[0]!)).toEqual([undefined, second]);
    expect(program.decodeOutputs(outs[1]!)).toEqual([undefined, second]);
    expect(program.decodeOutputs(outs[2]!)).toEqual([first, second]);
  }, 90_000);

  it("a party whose WebRTC connection dies during preprocessing: the other two abort with a TransportError within 10 s", async () => {
    const f = await mesh(signaling.url, 3, 8000);
    try {
      let died = 0;
      const runs = f.sessions.map((s, p) =>
        s.preprocess('mascot', {
          triples: 400,
          batch: 64,
          ...(p === 2
            ? {
                onProgress: (e: { phase: string; done: number; total: number }) => {
                  if (e.phase === 'triples' && e.done < e.total && !died) {
                    died = Date.now();
                    // The data channels go, as when the machine loses its network (no goodbye
                    // through the secure channel).
                    void f.inner[2]!.close(new Error('network gone'));
                  }
                },
              }
            : {}),
        }),
      );
      const results = await Promise.all(runs.map(rejection));
      expect(died).toBeGreaterThan(0);
      for (const r of results.slice(0, 2)) {
        expect(r.error).toBeInstanceOf(TransportError);
        expect(['PEER_DISCONNECTED', 'TIMEOUT']).toContain(r.error.code);
        expect(r.at - died).toBeLessThan(10_000);
      }
      console.log(`WebRTC party lost during preprocessing: ${results.slice(0, 2).map((r) => `${r.error.code} after ${r.at - died} ms`).join(', ')}`);
    } finally {
      await f.close();
    }
  }, 120_000);
});
