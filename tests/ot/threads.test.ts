// OT extension in parallel instances (`threads`): k KOS instances, each in an engine worker over
// a sub-channel of the transport. The outputs keep the contract of one instance (OT j of the
// concatenation matches choice j, one Δ across chunk boundaries); each instance has its own
// derived session id; an abort in one instance rejects the call with the error of one instance
// and ends every worker; the parties must agree on k.
import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort, TransportError } from '../../dist/index.js';
import * as workerHost from '../../dist/engine/worker-host.js';
import { createMemoryTransports } from '../../dist/net/memory.js';
import type { Transport } from '../../dist/net/transport.js';
import { otReceiver, otSender, type OtReceiver, type OtSender } from '../../dist/ot.js';
import { badOts } from './check.js';

beforeAll(async () => {
  await init();
});

// Internal hooks (left out of the published declarations).
const liveWorkers = (workerHost as unknown as { _liveEngineWorkers(): number })._liveEngineWorkers;
const instanceIds = (x: OtSender | OtReceiver) => (x as unknown as { _instanceSessionIds: Uint8Array[] })._instanceSessionIds;

const block = (b: Uint8Array, j: number) => b.subarray(16 * j, 16 * j + 16);
const xor = (a: Uint8Array, b: Uint8Array) => a.map((x, i) => x ^ b[i]!);
const bits = (n: number) => new Uint8Array(randomBytes(n)).map((x) => x & 1);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

async function pair(threads: number, transports?: Transport[], sidOverride?: Uint8Array) {
  const [a, b] = (transports ?? createMemoryTransports(2, { recvTimeoutMs: 10_000 })) as [Transport, Transport];
  const sessionId = sidOverride ?? new Uint8Array(randomBytes(32));
  const [s, r] = await Promise.all([
    otSender({ transport: a, peer: 1, sessionId, threads }),
    otReceiver({ transport: b, peer: 0, sessionId, threads }),
  ]);
  return { a, b, s, r, sessionId, close: () => Promise.all([s.close(), r.close()]) };
}

/** Waits (at most `ms`) until no engine worker of this realm is alive beyond `count`. */
async function workersDownTo(count: number, ms = 5_000): Promise<number> {
  const t0 = performance.now();
  while (liveWorkers() > count && performance.now() - t0 < ms) await new Promise((r) => setTimeout(r, 20));
  return liveWorkers();
}

/**
 * Wraps a transport so that data message number `index` (from 0) on sub-channel `channel` (the
 * first byte of a split transport's messages) is changed by `edit` (which sees the payload).
 */
function tamperChannel(inner: Transport, channel: number, index: number, edit: (m: Uint8Array) => Uint8Array): Transport {
  let count = 0;
  let split = false;
  return {
    party: inner.party,
    parties: inner.parties,
    closed: inner.closed,
    send: (to, data) => {
      // The first message is the parameter record, sent before the split.
      if (!split) {
        split = true;
        return inner.send(to, data);
      }
      if (data[0] !== channel || count++ !== index) return inner.send(to, data);
      const payload = edit(data.slice(1));
      const framed = new Uint8Array(payload.length + 1);
      framed[0] = channel;
      framed.set(payload, 1);
      return inner.send(to, framed);
    },
    recv: (from, o) => inner.recv(from, o),
    close: (reason) => inner.close(reason),
  };
}

describe('OT extension in parallel instances (threads)', () => {
  for (const threads of [1, 2, 4]) {
    it(`threads ${threads}: every output kind keeps the one-instance contract, across chunk boundaries`, async () => {
      const before = liveWorkers();
      const { s, r, close } = await pair(threads);
      expect(liveWorkers()).toBe(before + (threads > 1 ? 2 * threads : 0));
      // 3 < 4 OTs leaves chunks empty; 70_001 splits unevenly and spans a KOS chunk (2^16).
      for (const n of [0, 3, 1000, 70_001]) {
        const [{ m0, m1 }, got] = await Promise.all([s.sendRandom(n), r.receiveRandom(n)]);
        expect(got.choices.length).toBe(n);
        expect(badOts(m0, m1, got.choices, got.messages)).toEqual({ wrong: [], wrongCount: 0, equalsOther: [] });

        // Δ-OT: one Δ for every OT, whichever instance made it.
        const c = bits(n);
        const delta = s.delta;
        const [keys, macs] = await Promise.all([s.sendCot(n), r.receiveCot(c)]);
        let bad = 0;
        for (let j = 0; j < n; j++) if (Buffer.compare(block(macs, j), c[j] ? xor(block(keys, j), delta) : block(keys, j)) !== 0) bad++;
        expect(bad).toBe(0);

        const a0 = new Uint8Array(randomBytes(16 * n));
        const a1 = new Uint8Array(randomBytes(16 * n));
        const [, chosen] = await Promise.all([s.sendChosen(a0, a1), r.receiveChosen(c)]);
        expect(badOts(a0, a1, c, chosen).wrongCount).toBe(0);

        const x = new Uint8Array(randomBytes(16 * n));
        const [base, corr] = await Promise.all([s.sendCorrelated(x), r.receiveCorrelated(c)]);
        for (let j = 0; j < n; j++) if (Buffer.compare(block(corr, j), c[j] ? xor(block(base, j), block(x, j)) : block(base, j)) !== 0) bad++;
        expect(bad).toBe(0);
      }
      await close();
      expect(await workersDownTo(before)).toBe(before);
    });
  }

  it('uses the Δ the sender chose in every instance', async () => {
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 10_000 }) as [Transport, Transport];
    const sessionId = new Uint8Array(randomBytes(32));
    const delta = new Uint8Array(randomBytes(16));
    const [s, r] = await Promise.all([
      otSender({ transport: a, peer: 1, sessionId, threads: 3, delta }),
      otReceiver({ transport: b, peer: 0, sessionId, threads: 3 }),
    ]);
    expect(s.delta).toEqual(delta);
    const c = bits(3000);
    const [keys, macs] = await Promise.all([s.sendCot(3000), r.receiveCot(c)]);
    for (let j = 0; j < 3000; j++) expect(Buffer.compare(block(macs, j), c[j] ? xor(block(keys, j), delta) : block(keys, j))).toBe(0);
    // Hashed outputs on a caller's Δ stay refused without the opt-in, by every instance alike,
    // before anything is sent (the receiver is not involved), as at k = 1.
    await expect(s.sendRandom(3000)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await Promise.all([s.close(), r.close()]);
  });

  it('gives every instance its own session id, derived from the caller’s, the same at both parties', async () => {
    const { s, r, sessionId, close } = await pair(4);
    const ids = instanceIds(s);
    expect(ids.map(hex)).toEqual(instanceIds(r).map(hex));
    // Independently computed: SHA-256(sessionId ‖ "instance/i"). Dropping the derivation (every
    // instance on the caller's id) or using one index twice fails here.
    const want = [0, 1, 2, 3].map((i) => createHash('sha256').update(sessionId).update(`instance/${i}`).digest('hex'));
    expect(ids.map(hex)).toEqual(want);
    expect(new Set([...ids.map(hex), hex(sessionId)]).size).toBe(5);
    // Same caller id, same instance ids: the outputs still differ, by fresh base OTs (and the
    // chunks of one call never repeat each other's keys).
    const { m0 } = (await Promise.all([s.sendRandom(8), r.receiveRandom(8)]))[0];
    const rows = [0, 2, 4, 6].map((j) => hex(block(m0, j)));
    expect(new Set(rows).size).toBe(4);
    await close();
    // At k = 1 the instance keeps the caller's id (the wire of one instance is unchanged).
    const one = await pair(1);
    expect(instanceIds(one.s).map(hex)).toEqual([hex(one.sessionId)]);
    await one.close();
  });

  it('refuses different thread counts with PARAMETER_MISMATCH at both parties, before any OT message', async () => {
    const before = liveWorkers();
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 10_000 }) as [Transport, Transport];
    const sessionId = new Uint8Array(randomBytes(32));
    const results = await Promise.allSettled([
      otSender({ transport: a, peer: 1, sessionId, threads: 2 }),
      otReceiver({ transport: b, peer: 0, sessionId, threads: 1 }),
    ]);
    for (const x of results) {
      expect(x.status).toBe('rejected');
      const e = (x as PromiseRejectedResult).reason;
      expect(e).toBeInstanceOf(ProtocolAbort);
      expect(e.code).toBe('PARAMETER_MISMATCH');
      expect(e.message).toMatch(/threads/);
    }
    expect(await workersDownTo(before)).toBe(before);
    // The transport stays in step: the same parties can set up again with equal counts.
    const again = await pair(2, [a, b], sessionId);
    const [{ m0, m1 }, got] = await Promise.all([again.s.sendRandom(100), again.r.receiveRandom(100)]);
    expect(badOts(m0, m1, got.choices, got.messages).wrongCount).toBe(0);
    await again.close();
  });

  it('an instance caught cheating rejects the call with CHEATING_DETECTED and ends every worker at both parties', async () => {
    const before = liveWorkers();
    // Receiver's messages on sub-channel 1: 0 = base-OT point, 1 = the first KOS chunk's matrix.
    // Flipping one bit of an OT in 32 of the 128 rows passes only if those 32 bits of Δ are 0.
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 10_000 }) as [Transport, Transport];
    const rowBytes = (256 + 128) / 8; // 200 OTs per instance, padded as KOS pads them
    const cheater = tamperChannel(b, 1, 1, (m) => {
      for (let i = 0; i < 128; i += 4) m[i * rowBytes]! ^= 1 << 5;
      return m;
    });
    const { s, r } = await pair(2, [a, cheater]);
    const [sent, got] = await Promise.allSettled([s.sendCot(400), r.receiveCot(bits(400))]);
    expect(sent.status).toBe('rejected');
    const err = (sent as PromiseRejectedResult).reason;
    expect(err).toBeInstanceOf(ProtocolAbort);
    expect(err.code).toBe('CHEATING_DETECTED');
    expect(err.peer).toBe(1);
    expect(got.status === 'fulfilled' || (got as PromiseRejectedResult).reason instanceof TransportError).toBe(true);
    // Both parties' workers end: the sender's on its verdict, the receiver's as its transport closes.
    expect(await workersDownTo(before)).toBe(before);
    // Δ is discarded with the instances, and nothing more runs on them.
    expect(() => s.delta).toThrow();
    await expect(s.sendCot(1)).rejects.toBeInstanceOf(ProtocolAbort);
  });

  it('turns a truncated message on one sub-channel into MALFORMED_MESSAGE, and ends every worker', async () => {
    const before = liveWorkers();
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 10_000 }) as [Transport, Transport];
    const { s, r } = await pair(4, [a, tamperChannel(b, 3, 1, (m) => m.subarray(0, m.length - 1))]);
    const [sent] = await Promise.allSettled([s.sendRandom(4000), r.receiveRandom(4000)]);
    const err = (sent as PromiseRejectedResult).reason;
    expect(err).toBeInstanceOf(ProtocolAbort);
    expect(err.code).toBe('MALFORMED_MESSAGE');
    expect(await workersDownTo(before)).toBe(before);
  });

  it('rejects with the transport error when the peer vanishes mid-call, within the timeout, and leaves no worker', async () => {
    const before = liveWorkers();
    const { s, b } = await pair(2, createMemoryTransports(2, { recvTimeoutMs: 2_000 }) as Transport[]);
    const t0 = performance.now();
    const pending = s.sendRandom(200_000);
    await b.close();
    const err = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TransportError);
    expect(['PEER_DISCONNECTED', 'TIMEOUT', 'CLOSED']).toContain((err as TransportError).code);
    // Not a hang (the test's own limit is 120 s); the margin is for a loaded machine.
    expect(performance.now() - t0).toBeLessThan(15_000);
    expect(await workersDownTo(before)).toBe(before);
  });

  it('runs between two parties of a larger transport, beside the third party\'s traffic', async () => {
    const [t0, t1, t2] = createMemoryTransports(3, { recvTimeoutMs: 10_000 }) as [Transport, Transport, Transport];
    const sessionId = new Uint8Array(randomBytes(32));
    await t2.send(0, Uint8Array.of(7));
    const [s, r] = await Promise.all([
      otSender({ transport: t1, peer: 0, sessionId, threads: 2 }),
      otReceiver({ transport: t0, peer: 1, sessionId, threads: 2 }),
    ]);
    const [{ m0, m1 }, got] = await Promise.all([s.sendRandom(5000), r.receiveRandom(5000)]);
    expect(badOts(m0, m1, got.choices, got.messages).wrongCount).toBe(0);
    // Party 2's message waited on the transport, untouched.
    expect(await t0.recv(2, { timeoutMs: 2000 })).toEqual(Uint8Array.of(7));
    await Promise.all([s.close(), r.close()]);
    await Promise.all([t0.close(), t1.close(), t2.close()]);
  });

  it('refuses a bad thread count before touching the network', async () => {
    const [a] = createMemoryTransports(2) as [Transport, Transport];
    for (const threads of [0, -1, 1.5, 65, Number.NaN]) {
      await expect(otSender({ transport: a, peer: 1, sessionId: new Uint8Array(32), threads })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });
});
