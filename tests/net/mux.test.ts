// Sub-channels over one transport (ts/net/mux.ts): each channel is a Transport of its own (order,
// exact bytes, independence: a channel nobody reads never stalls another), credit-based flow
// control (a peer cannot make this party hold more than a window per channel), framing errors,
// and shared fate (an abort on one channel reaches every channel of every party with its reason).
import { describe, expect, it } from 'vitest';
import { TransportError, WebmpcError } from '../../dist/index.js';
import { createMemoryTransports, splitTransport, type Transport } from '../../dist/net/index.js';
import { randomMessage, rejection, sha256 } from './helpers.js';

/** What `p` rejects with. */
const failure = async (p: Promise<unknown>) => (await rejection(p)).error as TransportError;

function pair(channels: number, windowBytes?: number) {
  const [a, b] = createMemoryTransports(2) as [Transport, Transport];
  const opts = { channels, ...(windowBytes ? { windowBytes } : {}) };
  return { a, b, ma: splitTransport(a, opts), mb: splitTransport(b, opts) };
}

describe('sub-channels (splitTransport)', () => {
  it('each channel delivers its own messages exactly and in order, interleaved with the others', async () => {
    const { a, b, ma, mb } = pair(3);
    const sizes = [0, 1, 17, 70_000, 1 << 20];
    const sent = [0, 1, 2].map((c) => sizes.map((n) => randomMessage(n + c)));
    // All channels at once, in both directions.
    const sending = Promise.all(
      [0, 1, 2].flatMap((c) => [
        (async () => {
          for (const m of sent[c]!) await ma.channels[c]!.send(1, m);
        })(),
        (async () => {
          for (const m of sent[c]!) await mb.channels[c]!.send(0, m);
        })(),
      ]),
    );
    for (const c of [2, 0, 1]) {
      for (const m of sent[c]!) {
        expect(sha256(await mb.channels[c]!.recv(0))).toBe(sha256(m));
        expect(sha256(await ma.channels[c]!.recv(1))).toBe(sha256(m));
      }
    }
    await sending;
    await Promise.all([ma.close(), mb.close()]);
    await Promise.all([a.close(), b.close()]);
  });

  it('a channel whose reader is busy never stalls another; its sender waits for credit instead', async () => {
    const window = 64 * 1024;
    const { a, b, ma, mb } = pair(2, window);
    // Channel 0: far more than a window, nobody reading at b yet.
    const big = Array.from({ length: 10 }, () => randomMessage(30_000));
    let sent0 = 0;
    const sending0 = (async () => {
      for (const m of big) {
        await ma.channels[0]!.send(1, m);
        sent0++;
      }
    })();
    // Channel 1 flows meanwhile.
    for (let i = 0; i < 20; i++) {
      const m = randomMessage(5000);
      await ma.channels[1]!.send(1, m);
      expect(sha256(await mb.channels[1]!.recv(0))).toBe(sha256(m));
    }
    // Channel 0's sender is held to the window: at most window + one message in flight.
    expect(sent0).toBeLessThanOrEqual(Math.ceil(window / 30_000) + 1);
    expect(sent0).toBeLessThan(big.length);
    // Once read, everything arrives in order.
    for (const m of big) expect(sha256(await mb.channels[0]!.recv(0))).toBe(sha256(m));
    await sending0;
    expect(sent0).toBe(big.length);
    await Promise.all([ma.close(), mb.close(), a.close(), b.close()]);
  });

  it('a message larger than the window goes alone', async () => {
    const { a, b, ma, mb } = pair(1, 1024);
    const m = randomMessage(1 << 20);
    const [, got] = await Promise.all([ma.channels[0]!.send(1, m), mb.channels[0]!.recv(0)]);
    expect(sha256(got)).toBe(sha256(m));
    await Promise.all([ma.close(), mb.close(), a.close(), b.close()]);
  });

  it('a peer that ignores the window, or names a channel that does not exist, is a PROTOCOL_ERROR', async () => {
    for (const bad of ['flood', 'channel', 'control']) {
      const [a, b] = createMemoryTransports(2) as [Transport, Transport];
      const mb = splitTransport(b, { channels: 2, windowBytes: 4096 });
      const pending = failure(mb.channels[0]!.recv(0, { timeoutMs: 5000 }));
      if (bad === 'flood') {
        // Raw frames for channel 1 (which nobody reads), beyond its window.
        // (The last sends may find the transport already closed by the victim.)
        for (let i = 0; i < 4; i++) await a.send(1, Uint8Array.of(1, ...randomMessage(2000))).catch(() => {});
      } else if (bad === 'channel') {
        await a.send(1, Uint8Array.of(7, 1, 2, 3));
      } else {
        await a.send(1, Uint8Array.of(255, 9, 0, 0, 0, 0, 0));
      }
      const err = await pending;
      expect(err, bad).toBeInstanceOf(TransportError);
      expect((err as TransportError).code, bad).toBe('PROTOCOL_ERROR');
      expect((err as TransportError).message, bad).toMatch(/sub-channel framing/);
      // The transport underneath is closed too, so the sender learns it.
      expect(((await failure(a.recv(1, { timeoutMs: 5000 }))) as TransportError).code).toBe('PEER_DISCONNECTED');
      await a.close();
    }
  });

  // A protocol's verdict (not a TransportError) too: the other channels here fail with a CLOSED
  // that wraps it, and their own aborts must not overtake it as the reason the peers learn.
  it.each([
    ['a transport error', new TransportError('TIMEOUT', 'instance 2 gave up')],
    ["a protocol's verdict", new WebmpcError('ENCLAVE_FAILED', 'the enclave reported ENCLAVE_BUSY: no more sessions')],
  ])('an abort on one channel reaches every channel of every party, with its reason: %s', async (_, reason) => {
    const [t0, t1, t2] = createMemoryTransports(3) as [Transport, Transport, Transport];
    const m = [t0, t1, t2].map((t) => splitTransport(t, { channels: 3 }));
    const waits = [1, 2].flatMap((p) => [0, 1, 2].map((c) => failure(m[p]!.channels[c]!.recv(0, { timeoutMs: 5000 }))));
    // The remote cause below proves the abort travelled (a 5 s deadline would give TIMEOUT).
    await m[0]!.channels[2]!.close(reason);
    for (const err of await Promise.all(waits)) {
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).code).toBe('PEER_DISCONNECTED');
      expect((err as TransportError).remote).toEqual({ code: reason.code, message: reason.message });
    }
    // This party's other channels are closed too.
    expect(await failure(m[0]!.channels[0]!.send(1, new Uint8Array(1)))).toBeInstanceOf(TransportError);
    await Promise.all([t1.close(), t2.close()]);
  });

  it('closing one channel without a reason ends only that channel', async () => {
    const { a, b, ma, mb } = pair(2);
    await ma.channels[0]!.send(1, Uint8Array.of(42));
    await ma.channels[0]!.close();
    // What was sent before the leave is still delivered, then the leave.
    expect(await mb.channels[0]!.recv(0)).toEqual(Uint8Array.of(42));
    expect(((await failure(mb.channels[0]!.recv(0))) as TransportError).code).toBe('PEER_DISCONNECTED');
    // The other channel carries on.
    await ma.channels[1]!.send(1, Uint8Array.of(7));
    expect(await mb.channels[1]!.recv(0)).toEqual(Uint8Array.of(7));
    await Promise.all([ma.close(), mb.close()]);
    // The transport underneath is still the owner's.
    await a.send(1, Uint8Array.of(1, 2));
    expect(await b.recv(0, { timeoutMs: 2000 })).toEqual(Uint8Array.of(1, 2));
    await Promise.all([a.close(), b.close()]);
  });

  it('a split with named peers reads nothing from the other parties, which keep the transport', async () => {
    // A pairwise split (0 ↔ 1) beside party 2's traffic with party 0 on the transport itself.
    const [t0, t1, t2] = createMemoryTransports(3) as [Transport, Transport, Transport];
    const m0 = splitTransport(t0, { channels: 2, peers: [1] });
    const m1 = splitTransport(t1, { channels: 2, peers: [0] });
    await t2.send(0, Uint8Array.of(2, 2));
    await m0.channels[1]!.send(1, Uint8Array.of(9));
    expect(await m1.channels[1]!.recv(0, { timeoutMs: 2000 })).toEqual(Uint8Array.of(9));
    // Party 2's message is still on the transport, untouched by the split's pump.
    expect(await t0.recv(2, { timeoutMs: 2000 })).toEqual(Uint8Array.of(2, 2));
    // A party outside the split is refused on the sub-channels, not waited for.
    expect((await failure(m0.channels[0]!.send(2, Uint8Array.of(1)))).code).toBe('INVALID_ARGUMENT');
    expect((await failure(m0.channels[0]!.recv(2))).code).toBe('INVALID_ARGUMENT');
    await Promise.all([m0.close(), m1.close()]);
    await Promise.all([t0.close(), t1.close(), t2.close()]);
  });

  it('refuses bad arguments', () => {
    const [a] = createMemoryTransports(2) as [Transport, Transport];
    for (const channels of [0, 256, 1.5]) {
      expect(() => splitTransport(a, { channels })).toThrow(/channels must be an integer in \[1, 255\]/);
    }
    expect(() => splitTransport(a, { channels: 2, windowBytes: 0 })).toThrow(/windowBytes/);
    for (const peers of [[], [0], [1, 1], [2], [1.5]]) expect(() => splitTransport(a, { channels: 2, peers })).toThrow(/peers/);
  });
});
