// Every transport kind against the Transport contract: byte-exact delivery (sha256-checked) from
// 0 B to 256 MB, per-pair ordering, interleaved traffic in a 4-party mesh, graceful and abrupt
// closes, deadlines. Media are real: loopback TCP for WebSocket and the relay, node-datachannel
// peer connections for WebRTC.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS, randomMessage, rejection, session, sha256, type Kind, type Session } from './helpers.js';

const SIZES = [0, 1, 1000, 65_536 - 9, 65_536 - 8, 65_536, 200_000, 1024 * 1024 + 7, 5 * 1024 * 1024];
// 256 MB once per transport that moves it in reasonable time on a 2-core VM; the relay crosses
// two sockets and the server, so it does 64 MB.
const BIG: Record<Kind, number> = {
  memory: 256 * 1024 * 1024,
  websocket: 256 * 1024 * 1024,
  relay: 64 * 1024 * 1024,
  webrtc: 256 * 1024 * 1024,
};

describe.each(KINDS)('%s', (kind) => {
  describe('2 parties', () => {
    let s: Session;
    beforeAll(async () => {
      // Above the 64 MiB default, which the big-message test exceeds on purpose.
      s = await session(kind, 2, { maxMessageBytes: BIG[kind] });
    });
    afterAll(async () => {
      await s?.close();
    });

    it('delivers messages of every size exactly, both directions at once', async () => {
      const [a, b] = s.transports as [typeof s.transports[0], typeof s.transports[0]];
      const toB = SIZES.map(randomMessage);
      const toA = SIZES.map((n) => randomMessage(n));
      const sending = Promise.all([
        (async () => {
          for (const m of toB) await a.send(1, m);
        })(),
        (async () => {
          for (const m of toA) await b.send(0, m);
        })(),
      ]);
      for (let i = 0; i < SIZES.length; i++) {
        const [atB, atA] = await Promise.all([b.recv(0), a.recv(1)]);
        expect(atB.byteLength).toBe(SIZES[i]);
        expect(sha256(atB)).toBe(sha256(toB[i]!));
        expect(sha256(atA)).toBe(sha256(toA[i]!));
      }
      await sending;
    });

    it('preserves order across 500 back-to-back sends of mixed sizes', async () => {
      const [a, b] = s.transports as [typeof s.transports[0], typeof s.transports[0]];
      const sizes = Array.from({ length: 500 }, (_, i) => (i * 7919) % 150_000);
      // Not awaited one by one: concurrent sends to one peer must still arrive in call order.
      const sent = sizes.map((n, i) => {
        const m = randomMessage(n + 4);
        new DataView(m.buffer).setUint32(0, i);
        return m;
      });
      const sending = Promise.all(sent.map((m) => a.send(1, m)));
      for (let i = 0; i < sent.length; i++) {
        const got = await b.recv(0);
        expect(new DataView(got.buffer, got.byteOffset).getUint32(0)).toBe(i);
        expect(sha256(got)).toBe(sha256(sent[i]!));
      }
      await sending;
    });

    it(`moves ${BIG[kind] / 2 ** 20} MiB in one message, sha256-checked`, async () => {
      const [a, b] = s.transports as [typeof s.transports[0], typeof s.transports[0]];
      const big = randomMessage(BIG[kind]);
      const digest = sha256(big);
      const t0 = performance.now();
      const [, got] = await Promise.all([a.send(1, big), b.recv(0, { timeoutMs: 100_000 })]);
      const seconds = (performance.now() - t0) / 1000;
      console.log(`${kind}: ${BIG[kind] / 2 ** 20} MiB in ${seconds.toFixed(2)} s (${(BIG[kind] / 1e6 / seconds).toFixed(0)} MB/s)`);
      expect(got.byteLength).toBe(big.byteLength);
      expect(sha256(got)).toBe(digest);
    }, 110_000);

    it('a send resolves once accepted: the sender may reuse its buffer', async () => {
      const [a, b] = s.transports as [typeof s.transports[0], typeof s.transports[0]];
      const buf = randomMessage(300_000);
      const expected = sha256(buf);
      await a.send(1, buf);
      buf.fill(0);
      expect(sha256(await b.recv(0))).toBe(expected);
    });

    it('argument errors are typed and leave the transport open', async () => {
      const [a, b] = s.transports as [typeof s.transports[0], typeof s.transports[0]];
      expect((await rejection(a.send(0, new Uint8Array(1)))).error.code).toBe('INVALID_ARGUMENT');
      expect((await rejection(a.send(2, new Uint8Array(1)))).error.code).toBe('INVALID_ARGUMENT');
      expect((await rejection(a.recv(-1))).error.code).toBe('INVALID_ARGUMENT');
      expect((await rejection(a.send(1, 'text' as unknown as Uint8Array))).error.code).toBe('INVALID_ARGUMENT');
      const ctl = new AbortController();
      const aborted = a.recv(1, { signal: ctl.signal });
      ctl.abort();
      expect((await rejection(aborted)).error.code).toBe('ABORTED');
      await b.send(0, Uint8Array.of(42));
      expect(Array.from(await a.recv(1))).toEqual([42]);
    });
  });

  it('4 parties: interleaved sends to every peer arrive in order, per pair', async () => {
    const s = await session(kind, 4);
    try {
      const rounds = 20;
      const message = (from: number, to: number, i: number) => {
        const m = randomMessage(((from * 31 + to * 17 + i * 7919) % 90_000) + 8);
        m.set([from, to, i], 0);
        return m;
      };
      const expected = new Map<string, string>();
      const sends: Promise<void>[] = [];
      for (let i = 0; i < rounds; i++) {
        for (const t of s.transports) {
          for (let to = 0; to < 4; to++) {
            if (to === t.party) continue;
            const m = message(t.party, to, i);
            expected.set(`${t.party}>${to}#${i}`, sha256(m));
            sends.push(t.send(to, m));
          }
        }
      }
      const receives = s.transports.flatMap((t) =>
        [0, 1, 2, 3]
          .filter((from) => from !== t.party)
          .map(async (from) => {
            for (let i = 0; i < rounds; i++) {
              const got = await t.recv(from);
              expect([got[0], got[1], got[2]]).toEqual([from, t.party, i]);
              expect(sha256(got)).toBe(expected.get(`${from}>${t.party}#${i}`));
            }
          }),
      );
      await Promise.all([...sends, ...receives]);
    } finally {
      await s.close();
    }
  });

  it('recv past its deadline rejects with TIMEOUT on time, and the transport is closed', async () => {
    const s = await session(kind, 2);
    try {
      const [a] = s.transports as [typeof s.transports[0]];
      const { error, ms } = await rejection(a.recv(1, { timeoutMs: 300 }));
      expect(error.code).toBe('TIMEOUT');
      expect(error.peer).toBe(1);
      expect(ms).toBeGreaterThanOrEqual(290);
      // Its own 0.3 s deadline, not a transport default; the margin is for a loaded machine.
      expect(ms).toBeLessThan(15_000);
      expect((await rejection(a.send(1, new Uint8Array(1)))).error.code).toBe('TIMEOUT');
      expect(await a.closed).toMatchObject({ code: 'TIMEOUT' });
    } finally {
      await s.close();
    }
  });

  it('a graceful close: the peer still gets what was sent, then PEER_DISCONNECTED', async () => {
    const s = await session(kind, 3);
    try {
      const [a, b, c] = s.transports as [typeof s.transports[0], typeof s.transports[0], typeof s.transports[0]];
      const last = randomMessage(3 * 1024 * 1024);
      await a.send(1, last);
      await a.close();
      expect(await a.closed).toBeUndefined();
      expect(sha256(await b.recv(0))).toBe(sha256(last));
      expect((await rejection(b.recv(0))).error.code).toBe('PEER_DISCONNECTED');
      expect((await rejection(b.send(0, new Uint8Array(1)))).error.code).toBe('PEER_DISCONNECTED');
      // The others carry on.
      await c.send(1, Uint8Array.of(7));
      expect(Array.from(await b.recv(2))).toEqual([7]);
      expect((await rejection(a.recv(1))).error.code).toBe('CLOSED');
      await a.close(); // idempotent
    } finally {
      await s.close();
    }
  });

  it('an abrupt close makes every other party reject pending and later operations', async () => {
    const s = await session(kind, 3);
    try {
      const [a, b, c] = s.transports as [typeof s.transports[0], typeof s.transports[0], typeof s.transports[0]];
      const pendingB = b.recv(0);
      const pendingC = c.recv(0);
      // PEER_DISCONNECTED, not a recv deadline's TIMEOUT: the abort travelled as a message.
      // Both observed at once: awaiting one first would leave the other unhandled meanwhile.
      const outcomes = Promise.all([rejection(pendingB), rejection(pendingC)]);
      await a.close(new Error('simulated failure'));
      for (const { error } of await outcomes) {
        expect(error.code).toBe('PEER_DISCONNECTED');
        // Party 0's abort, or the third party's abort caused by it, whichever arrives first:
        // across different connections there is no order.
        expect([0, 1, 2]).toContain(error.peer);
      }
      // Fail-stop: the whole transport is closed, also towards the healthy peer.
      expect((await rejection(b.recv(2))).error.code).toBe('PEER_DISCONNECTED');
      expect(await b.closed).toMatchObject({ code: 'PEER_DISCONNECTED' });
    } finally {
      await s.close();
    }
  });
});
