// close(reason) tells every peer why (issue 10, the transport half): on every transport, plain
// and through the secure channel, the peer's pending and later recvs reject within a second with
// PEER_DISCONNECTED naming the closing party and carrying the reason's code and message. An app's
// own (non-webmpc) error travels as code ERROR without its text, which might hold anything.
import { describe, expect, it } from 'vitest';
import { ProtocolAbort, TransportError, WebmpcError } from '../../dist/errors.js';
import { generateIdentity, secureTransport } from '../../dist/secure/index.js';
import type { Transport } from '../../dist/net/node.js';
import { FramedTransport } from '../../dist/net/framed.js';
import { KINDS, rejection, session, type Kind } from './helpers.js';

interface Remote {
  code?: string;
  peer?: number;
  message?: string;
  remote?: { code: string; message: string };
}

async function secured(kind: Kind, parties: number) {
  const s = await session(kind, parties);
  const ids = await Promise.all(Array.from({ length: parties }, () => generateIdentity()));
  const transports = await Promise.all(
    s.transports.map((inner, i) =>
      secureTransport(inner, { identity: ids[i]!, sessionId: 'close-test', trust: 'pinned', peers: ids.map((id) => id.publicKey) }),
    ),
  );
  return { transports: transports as Transport[], close: s.close };
}

const VARIANTS = KINDS.flatMap((kind) => [
  { name: kind, make: (n: number) => session(kind, n) },
  { name: `${kind} + secure channel`, make: (n: number) => secured(kind, n) },
]);

describe.each(VARIANTS)('$name', ({ make }) => {
  it('close(err) reaches the peer as a message (its cause, not a timeout): pending and later recvs reject, naming the party and the cause', async () => {
    const s = await make(2);
    try {
      const [a, b] = s.transports as [Transport, Transport];
      // Proves the link works, and that what was delivered before the abort is not the point.
      await a.send(1, Uint8Array.of(1));
      expect(Array.from(await b.recv(0))).toEqual([1]);
      const pending = rejection(b.recv(0, { timeoutMs: 30_000 }));
      await a.close(new ProtocolAbort('CHEATING_DETECTED', 'the MAC check of batch 3 failed', { peer: 1 }));
      // The pending recv would time out after 30 s with TIMEOUT; the remote cause below can only
      // have come from party 0's abort frame, so it proves the news travelled as a message.
      const { error } = await pending;
      const e = error as Remote;
      expect(e).toBeInstanceOf(TransportError);
      expect(e.code).toBe('PEER_DISCONNECTED');
      expect(e.peer).toBe(0);
      expect(e.remote).toEqual({ code: 'CHEATING_DETECTED', message: 'the MAC check of batch 3 failed' });
      expect(e.message).toContain('party 0 aborted the session (CHEATING_DETECTED: the MAC check of batch 3 failed)');
      // Later operations fail the same way, at once.
      expect(((await rejection(b.recv(0))).error as Remote).remote?.code).toBe('CHEATING_DETECTED');
      expect((await rejection(b.send(0, Uint8Array.of(2)))).error.code).toBe('PEER_DISCONNECTED');
    } finally {
      await s.close();
    }
  }, 60_000);

  it("an app's own error is reported as code ERROR without its text (it could hold secrets)", async () => {
    const s = await make(2);
    try {
      const [a, b] = s.transports as [Transport, Transport];
      const pending = rejection(b.recv(0, { timeoutMs: 30_000 }));
      await a.close(new Error('bid was 1234567'));
      const e = (await pending).error as Remote;
      expect(e.code).toBe('PEER_DISCONNECTED');
      expect(e.remote).toEqual({ code: 'ERROR', message: '' });
      expect(JSON.stringify(e) + String(e.message)).not.toContain('1234567');
    } finally {
      await s.close();
    }
  }, 60_000);

  it('3 parties: a local failure (what the session layer does) stops both others within 1 s', async () => {
    const s = await make(3);
    try {
      const [a, b, c] = s.transports as [Transport, Transport, Transport];
      // Both wait on each other, not on party 0: they still learn of party 0's failure at once.
      const pending = [rejection(b.recv(2, { timeoutMs: 30_000 })), rejection(c.recv(1, { timeoutMs: 30_000 }))];
      // (The recvs' own 30 s deadline would reject with TIMEOUT and no remote cause.)
      await a.close(new WebmpcError('INVALID_ARGUMENT', 'input 1 must be 4 bytes'));
      for (const { error } of await Promise.all(pending)) {
        const e = error as Remote;
        expect(e.code).toBe('PEER_DISCONNECTED');
        // Told by party 0 directly, or by the other party that was told first.
        expect(`${e.remote?.code}: ${e.remote?.message}`).toMatch(/INVALID_ARGUMENT: input 1 must be 4 bytes|PEER_DISCONNECTED: party 0 aborted the session \(INVALID_ARGUMENT/);
      }
    } finally {
      await s.close();
    }
  }, 60_000);
});

// A graceful close waits for each peer to confirm it read up to the goodbye, so that the last
// messages arrive. A peer that already said goodbye itself has read all it ever will: waiting
// for it is waiting for nothing. Its link may stay half-open for seconds (a peer process that
// exited while its WebRTC association lingers), and the waiting party's close then took the whole
// closeTimeoutMs: the demo's last bidder sat in its final phase past a 4 s deadline.
describe('graceful close after a peer said goodbye', () => {
  /** Two framed transports over links that deliver (asynchronously) until `cut()`, then drop everything, closing nothing. */
  function pair(closeTimeoutMs: number) {
    let cut = false;
    const ts = [0, 1].map((p) => new FramedTransport(p, 2, { closeTimeoutMs, keepaliveMs: 0, peerTimeoutMs: 0 }));
    const link = (to: FramedTransport, from: number) => ({
      send(frame: Uint8Array) {
        const copy = frame.slice();
        if (!cut) setTimeout(() => !cut && to.receiveFrame(from, copy), 1);
      },
      bufferedAmount: 0,
      close: async () => {},
    });
    ts[0]!.attach(1, link(ts[1]!, 0));
    ts[1]!.attach(0, link(ts[0]!, 1));
    return { a: ts[0]!, b: ts[1]!, cut: () => (cut = true) };
  }

  it("closes at once, not after closeTimeoutMs, when the peer's goodbye came first and its link went silent", async () => {
    const { a, b, cut } = pair(20_000);
    await a.send(1, Uint8Array.of(7));
    expect(Array.from(await b.recv(0))).toEqual([7]);
    // a leaves gracefully (b acknowledges), then its medium goes silent without closing.
    await a.close();
    cut();
    const t0 = performance.now();
    await b.close();
    // Waiting for an acknowledgement that cannot come would take the 20 s closeTimeoutMs.
    expect(performance.now() - t0).toBeLessThan(10_000);
  }, 60_000);
});
