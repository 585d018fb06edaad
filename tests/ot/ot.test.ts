// OT through the SDK: the real Wasm build running KOS between two parties over a JS Transport
// (the in-memory one here; tests/net runs it over WebRTC). Checks every output kind, a cheating
// receiver, garbage and truncated messages, a vanished peer, and argument errors.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort, TransportError, WebmpcError } from '../../dist/index.js';
import { createMemoryTransports } from '../../dist/net/memory.js';
import type { Transport } from '../../dist/net/transport.js';
import { otReceiver, otSender } from '../../dist/ot.js';

beforeAll(async () => {
  await init();
});

const sid = () => new Uint8Array(randomBytes(32));
const block = (b: Uint8Array, j: number) => b.subarray(16 * j, 16 * j + 16);
const xor = (a: Uint8Array, b: Uint8Array) => a.map((x, i) => x ^ b[i]!);
const bits = (n: number) => new Uint8Array(randomBytes(n)).map((x) => x & 1);

async function connect(transports: Transport[] = createMemoryTransports(2, { recvTimeoutMs: 10_000 })) {
  const [a, b] = transports as [Transport, Transport];
  const id = sid();
  const [s, r] = await Promise.all([otSender({ transport: a, peer: 1, sessionId: id }), otReceiver({ transport: b, peer: 0, sessionId: id })]);
  return { a, b, s, r };
}

/**
 * Wraps a transport so that outgoing message number `index` (counting from 0, to any peer) is
 * changed by `edit`: the model of a party that deviates by changing what it sends.
 */
function tampering(inner: Transport, index: number, edit: (m: Uint8Array) => Uint8Array): Transport {
  let count = 0;
  return {
    party: inner.party,
    parties: inner.parties,
    closed: inner.closed,
    send: (to, data) => inner.send(to, count++ === index ? edit(data.slice()) : data),
    recv: (from, o) => inner.recv(from, o),
    close: (reason) => inner.close(reason),
  };
}

describe('OT over a JS transport', () => {
  it('gives correct outputs for every kind and size', async () => {
    const { s, r } = await connect();
    for (const n of [0, 1, 127, 128, 129, 100_000]) {
      const [{ m0, m1 }, rr] = await Promise.all([s.sendRandom(n), r.receiveRandom(n)]);
      expect(rr.choices.length).toBe(n);
      for (const j of [0, n >> 1, n - 1].filter((j) => j >= 0 && j < n)) {
        const want = rr.choices[j] ? block(m1, j) : block(m0, j);
        const other = rr.choices[j] ? block(m0, j) : block(m1, j);
        expect(block(rr.messages, j)).toEqual(want);
        expect(block(rr.messages, j)).not.toEqual(other);
      }
      // Every OT, not just a sample, for the full equality.
      for (let j = 0; j < n; j++) {
        expect(Buffer.compare(block(rr.messages, j), rr.choices[j] ? block(m1, j) : block(m0, j))).toBe(0);
      }

      const c = bits(n);
      const [keys, macs] = await Promise.all([s.sendCot(n), r.receiveCot(c)]);
      for (let j = 0; j < n; j++) {
        const want = c[j] ? xor(block(keys, j), s.delta) : block(keys, j);
        expect(Buffer.compare(block(macs, j), want)).toBe(0);
      }

      const a0 = new Uint8Array(randomBytes(16 * n));
      const a1 = new Uint8Array(randomBytes(16 * n));
      const [, chosen] = await Promise.all([s.sendChosen(a0, a1), r.receiveChosen(c)]);
      for (let j = 0; j < n; j++) {
        expect(Buffer.compare(block(chosen, j), c[j] ? block(a1, j) : block(a0, j))).toBe(0);
      }

      const x = new Uint8Array(randomBytes(16 * n));
      const [base, corr] = await Promise.all([s.sendCorrelated(x), r.receiveCorrelated(c)]);
      for (let j = 0; j < n; j++) {
        const want = c[j] ? xor(block(base, j), block(x, j)) : block(base, j);
        expect(Buffer.compare(block(corr, j), want)).toBe(0);
      }
    }
  });

  it('uses the Δ the sender chose', async () => {
    const [a, b] = createMemoryTransports(2) as [Transport, Transport];
    const id = sid();
    const delta = new Uint8Array(randomBytes(16));
    const [s] = await Promise.all([otSender({ transport: a, peer: 1, sessionId: id, delta }), otReceiver({ transport: b, peer: 0, sessionId: id })]);
    expect(s.delta).toEqual(delta);
  });

  it('refuses Δ = 0 before any message', async () => {
    // With Δ = 0 a Δ-OT receiver would get K_j whatever it chose, and hashed OT m0 = m1.
    const [a] = createMemoryTransports(2) as [Transport, Transport];
    for (const allowHashedWithChosenDelta of [false, true]) {
      await expect(otSender({ transport: a, peer: 1, sessionId: sid(), delta: new Uint8Array(16), allowHashedWithChosenDelta })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    }
  });

  it('serves only Δ-OT on a caller-chosen Δ unless the caller opts in to hashed outputs', async () => {
    const n = 300;
    for (const optIn of [false, true]) {
      const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 10_000 }) as [Transport, Transport];
      const id = sid();
      const delta = new Uint8Array(randomBytes(16));
      const [s, r] = await Promise.all([
        otSender({ transport: a, peer: 1, sessionId: id, delta, allowHashedWithChosenDelta: optIn }),
        otReceiver({ transport: b, peer: 0, sessionId: id }),
      ]);
      const c = bits(n);
      const [keys, macs] = await Promise.all([s.sendCot(n), r.receiveCot(c)]);
      for (let j = 0; j < n; j++) expect(Buffer.compare(block(macs, j), c[j] ? xor(block(keys, j), delta) : block(keys, j))).toBe(0);
      if (!optIn) {
        // Refused before any message: the receiver is not involved.
        await expect(s.sendRandom(n)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        continue;
      }
      const [{ m0, m1 }, got] = await Promise.all([s.sendRandom(n), r.receiveRandom(n)]);
      for (let j = 0; j < n; j++) expect(Buffer.compare(block(got.messages, j), got.choices[j] ? block(m1, j) : block(m0, j))).toBe(0);
      const x = new Uint8Array(randomBytes(16 * n));
      const [base, corr] = await Promise.all([s.sendCorrelated(x), r.receiveCorrelated(c)]);
      for (let j = 0; j < n; j++) expect(Buffer.compare(block(corr, j), c[j] ? xor(block(base, j), block(x, j)) : block(base, j))).toBe(0);
    }
    // Without a chosen Δ every kind is served (the other tests), and the opt-in changes nothing.
  });

  it('catches a receiver whose matrix rows are inconsistent, and both sides abort', async () => {
    // Receiver messages: 0 = parameter record, 1 = base-OT point, 2 = the first chunk's matrix u. Flipping one bit of
    // OT 5 in 32 of the 128 rows passes only if Δ is 0 in all 32 (2^-32).
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 10_000 }) as [Transport, Transport];
    const rowBytes = (256 + 128) / 8;
    const cheater = tampering(b, 2, (m) => {
      for (let i = 0; i < 128; i += 4) m[i * rowBytes]! ^= 1 << 5;
      return m;
    });
    const { s, r } = await connect([a, cheater]);
    const [sent, got] = await Promise.allSettled([s.sendCot(200), r.receiveCot(bits(200))]);
    expect(sent.status).toBe('rejected');
    const err = (sent as PromiseRejectedResult).reason;
    expect(err).toBeInstanceOf(ProtocolAbort);
    expect(err.code).toBe('CHEATING_DETECTED');
    expect(err.peer).toBe(1);
    // The sender closed its transport, so the cheater does not wait out a timeout either way.
    expect(got.status === 'fulfilled' || (got as PromiseRejectedResult).reason instanceof TransportError).toBe(true);
    await expect(s.sendCot(1)).rejects.toBeInstanceOf(WebmpcError);
  });

  it('turns truncated and oversized messages into MALFORMED_MESSAGE', async () => {
    for (const edit of [(m: Uint8Array) => m.subarray(0, m.length - 1), (m: Uint8Array) => new Uint8Array(m.length + 16)]) {
      const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 10_000 }) as [Transport, Transport];
      const { s, r } = await connect([a, tampering(b, 2, edit)]);
      const [sent] = await Promise.allSettled([s.sendRandom(300), r.receiveRandom(300)]);
      expect((sent as PromiseRejectedResult).reason).toBeInstanceOf(ProtocolAbort);
      expect((sent as PromiseRejectedResult).reason.code).toBe('MALFORMED_MESSAGE');
    }
  });

  it('turns a garbage base-OT point into MALFORMED_MESSAGE', async () => {
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 10_000 }) as [Transport, Transport];
    const id = sid();
    const bad = tampering(a, 1, (m) => m.fill(0xff)); // 0 is the parameter record
    const results = await Promise.allSettled([otSender({ transport: bad, peer: 1, sessionId: id }), otReceiver({ transport: b, peer: 0, sessionId: id })]);
    const codes = results.map((x) => (x.status === 'rejected' ? x.reason.code : 'ok'));
    expect(codes[1]).toBe('MALFORMED_MESSAGE');
  });

  it('rejects with the transport error when the peer vanishes, within the timeout', async () => {
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 2_000 }) as [Transport, Transport];
    const { s } = await connect([a, b]);
    const t0 = performance.now();
    const pending = s.sendRandom(1000);
    await b.close();
    const err = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TransportError);
    expect(['PEER_DISCONNECTED', 'TIMEOUT']).toContain((err as TransportError).code);
    // Not a hang (the test's own limit is 120 s); the margin is for a loaded machine.
    expect(performance.now() - t0).toBeLessThan(15_000);
  });

  it('refuses bad arguments before touching the network', async () => {
    const [a] = createMemoryTransports(2) as [Transport, Transport];
    await expect(otSender({ transport: a, peer: 0, sessionId: sid() })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(otSender({ transport: a, peer: 1, sessionId: new Uint8Array(31) })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const { s, r } = await connect();
    await expect(r.receiveCot(new Uint8Array([0, 2]))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s.sendRandom(-1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s.sendChosen(new Uint8Array(16), new Uint8Array(32))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    // A second call while one runs is BUSY, not a crash.
    const first = s.sendCot(10);
    await expect(s.sendCot(10)).rejects.toMatchObject({ code: 'BUSY' });
    await Promise.all([first, r.receiveCot(bits(10))]);
  });
});
