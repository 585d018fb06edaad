// Teleported random OT through the SDK (teleportOtSender / teleportOtReceiver /
// teleportedRandomOt) against the enclave-server's simulation backend, checked like
// tests/ot/ot.test.ts checks KOS: every OT gives the receiver the chosen message and not the
// other, at every size, in both modes, many calls on one attested session; choices are balanced;
// a host editing a sealed ROT chunk (a proxy) is caught in both modes; the policy refuses what it
// should.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, EnclaveAbort, init, teleportedRandomOt, teleportOtReceiver, teleportOtSender, type Transport } from '../../dist/index.js';
import { badOts } from '../ot/check.js';
import { both, enclaveFor, startServer, TAG, tamperingProxy } from './helpers.js';

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  await init();
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

const sid = () => new Uint8Array(randomBytes(32));

async function connect(mode: 'semi-honest' | 'malicious', url = server.url, over: { sender?: object; receiver?: object } = {}) {
  const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 20_000 }) as [Transport, Transport];
  const id = sid();
  const [s, r] = await Promise.all([
    teleportOtSender({ transport: a, peer: 1, sessionId: id, mode, enclave: enclaveFor({ url, measurement: server.measurement }, over.sender) }),
    teleportOtReceiver({ transport: b, peer: 0, sessionId: id, mode, enclave: enclaveFor({ url, measurement: server.measurement }, over.receiver) }),
  ]);
  return { a, b, s, r };
}

describe('teleported random OT', () => {
  for (const mode of ['semi-honest', 'malicious'] as const) {
    it(`gives correct outputs at every size, ${mode}, many calls on one attested session`, async () => {
      const { a, b, s, r } = await connect(mode);
      const before = server.sessions().length;
      try {
        for (const n of [0, 1, 127, 128, 129, 65_536, 65_537, 200_000]) {
          const [{ m0, m1 }, got] = await Promise.all([s.sendRandom(n), r.receiveRandom(n)]);
          expect(got.choices.length).toBe(n);
          const bad = badOts(m0, m1, got.choices, got.messages);
          expect(bad.wrongCount, `n = ${n}: OTs ${bad.wrong}`).toBe(0);
          expect(bad.equalsOther, `n = ${n}: other message leaked`).toEqual([]);
          if (n >= 10_000) {
            const ones = got.choices.reduce((x, c) => x + c, 0);
            expect(ones / n).toBeGreaterThan(0.48);
            expect(ones / n).toBeLessThan(0.52);
            // The sender's two messages are unrelated (no fixed offset between m0 and m1).
            const d0 = Buffer.from(m0.subarray(0, 16)).toString('hex');
            expect(Buffer.from(m1.subarray(0, 16)).toString('hex')).not.toBe(d0);
          }
        }
        expect(server.sessions().length, 'no new enclave program per call').toBe(before);
      } finally {
        s.free();
        await r.free();
        await Promise.all([a.close(), b.close()]);
      }
    });
  }

  it('teleportedRandomOt: one call with setup and cleanup', async () => {
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 20_000 }) as [Transport, Transport];
    const id = sid();
    const enclave = enclaveFor(server);
    const [sent, got] = await Promise.all([
      teleportedRandomOt({ transport: a, peer: 1, sessionId: id, role: 'sender', count: 1000, enclave }),
      teleportedRandomOt({ transport: b, peer: 0, sessionId: id, role: 'receiver', count: 1000, enclave }),
    ]);
    expect(badOts(sent.m0, sent.m1, got.choices, got.messages).wrongCount).toBe(0);
    await Promise.all([a.close(), b.close()]);
    const err = await teleportedRandomOt({ transport: a, peer: 1, sessionId: id, role: 'sender', count: -1, enclave }).catch((e) => e);
    expect(err.code).toBe('INVALID_ARGUMENT');
  });

  it('a host that edits a sealed ROT chunk on its way is caught in both modes (the chunk τ catches a deviating enclave: Rust tests)', async () => {
    for (const mode of ['malicious', 'semi-honest'] as const) {
      let done = false;
      // ROT chunk: peer, tag, u64 index, then the sealed u32 n, R's (and σ's). Edit chunk 1.
      const proxy = await tamperingProxy(server.url, (f: Buffer) => {
        if (!done && f[0] === 1 && f[1] === TAG.ROT_CHUNK && f.readBigUInt64LE(2) === 1n) {
          done = true;
          f[2 + 12 + 16 * 7]! ^= 1;
        }
      });
      try {
        const { a, b, s, r } = await connect(mode, proxy.url);
        const [x, y] = await both(s.sendRandom(150_000), r.receiveRandom(150_000));
        const e = (y as PromiseRejectedResult).reason;
        expect(e.code, mode).toBe('MALFORMED_MESSAGE');
        expect(e.message).toMatch(/ROT chunk/);
        expect(x.status).toBe('rejected');
        await Promise.all([a.close(), b.close()]);
      } finally {
        await proxy.close();
      }
    }
  });

  it('refuses a simulated enclave without the opt-in, and another measurement (the refusing side says why)', async () => {
    for (const [side, over, code] of [
      ['sender', { allowSimulatedEnclave: false }, 'SIMULATED_ENCLAVE_REFUSED'],
      ['receiver', { allowSimulatedEnclave: false }, 'SIMULATED_ENCLAVE_REFUSED'],
      ['sender', { policy: { simulatedMeasurements: ['33'.repeat(32)] } }, 'EVIDENCE_REJECTED'],
      ['receiver', { policy: { simulatedMeasurements: ['33'.repeat(32)] } }, 'EVIDENCE_REJECTED'],
    ] as const) {
      const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 20_000 }) as [Transport, Transport];
      const id = sid();
      const opts = (who: string) => enclaveFor(server, who === side ? over : {});
      const [x, y] = await both(
        teleportOtSender({ transport: a, peer: 1, sessionId: id, enclave: opts('sender') }),
        teleportOtReceiver({ transport: b, peer: 0, sessionId: id, enclave: opts('receiver') }),
      );
      const refusing = side === 'sender' ? x : y;
      const other = side === 'sender' ? y : x;
      expect((refusing as PromiseRejectedResult).reason.code, `${side} ${JSON.stringify(over)}`).toBe(code);
      if (other.status === 'fulfilled') {
        // The receiver's setup ends once it relayed the evidence; its first call then fails at
        // once, as the sender closed the transport.
        const r = other.value as Awaited<ReturnType<typeof teleportOtReceiver>>;
        await expect(r.receiveRandom(10)).rejects.toMatchObject({ code: expect.stringMatching(/PEER_DISCONNECTED|CLOSED/) });
        await r.free();
      }
      await Promise.all([a.close(), b.close()]);
    }
  });
});
