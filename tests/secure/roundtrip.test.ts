// Honest-path behaviour of secureTransport: every message arrives whole, in order and unchanged,
// for 2 and 4 parties and sizes from 0 B to 256 MB; the Transport contract's other rules
// (argument errors, aborts, deadlines, graceful leave, close) hold for the wrapper too.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SEGMENT_BYTES, secureTransport, type SecureTransport } from '../../dist/secure/index.js';
import type { Transport } from '../../dist/net/transport.js';
import { closeAll, expectReject, fulfilled, randomData, setup, sha256 } from './util.js';

const SIZES = [0, 1, 1024, SEGMENT_BYTES - 8, SEGMENT_BYTES - 7, SEGMENT_BYTES, 3 * SEGMENT_BYTES + 12_345];

/** Each party sends every size to every other party (all at once), then checks what it got. */
async function allPairsRoundTrip(ts: SecureTransport[], sizes: number[]): Promise<void> {
  const n = ts.length;
  const sent = new Map<string, string[]>();
  const sends: Promise<void>[] = [];
  for (let from = 0; from < n; from++) {
    for (let to = 0; to < n; to++) {
      if (from === to) continue;
      const digests: string[] = [];
      for (const size of sizes) {
        const data = randomData(size);
        digests.push(sha256(data));
        // Not awaited one by one: queued sends must keep their order.
        sends.push(ts[from]!.send(to, data));
      }
      sent.set(`${from}->${to}`, digests);
    }
  }
  const receives: Promise<void>[] = [];
  for (let to = 0; to < n; to++) {
    for (let from = 0; from < n; from++) {
      if (from === to) continue;
      receives.push(
        (async () => {
          const got: string[] = [];
          const lengths: number[] = [];
          for (let k = 0; k < sizes.length; k++) {
            const msg = await ts[to]!.recv(from);
            lengths.push(msg.length);
            got.push(sha256(msg));
          }
          expect(lengths).toEqual(sizes);
          expect(got).toEqual(sent.get(`${from}->${to}`));
        })(),
      );
    }
  }
  await Promise.all([...sends, ...receives]);
}

describe('secureTransport round trips', () => {
  it('2 parties: 0 B, 1 B, 1 KB, segment boundaries, 3 MB, in order', async () => {
    const { results } = await setup(2);
    const ts = fulfilled(results);
    await allPairsRoundTrip(ts, SIZES);
    await closeAll(ts);
  });

  it('4 parties: 0 B, 1 B, 1 KB, segment boundaries, 3 MB between every ordered pair', async () => {
    const { results } = await setup(4);
    const ts = fulfilled(results);
    expect(ts.map((t) => [t.party, t.parties])).toEqual([
      [0, 4],
      [1, 4],
      [2, 4],
      [3, 4],
    ]);
    await allPairsRoundTrip(ts, SIZES);
    await closeAll(ts);
  });

  it('4 parties: a 64 MiB message around the ring, checksum-verified', async () => {
    // Just above the 64 MiB default: the limit is the app's to raise.
    const size = 64 * 1024 * 1024 + 3;
    const { results } = await setup(4, { recvTimeoutMs: 60_000, optionsFor: () => ({ maxMessageBytes: size }) });
    const ts = fulfilled(results);
    const data = ts.map(() => randomData(size));
    const digests = data.map(sha256);
    const got = await Promise.all(
      ts.map(async (t, i) => {
        const [, msg] = await Promise.all([t.send((i + 1) % 4, data[i]!), t.recv((i + 3) % 4)]);
        return sha256(msg);
      }),
    );
    expect(got).toEqual([digests[3], digests[0], digests[1], digests[2]]);
    await closeAll(ts);
  });

  it('2 parties: a 256 MiB message, then a small one behind it', async () => {
    const { results, mesh } = await setup(2, { recvTimeoutMs: 60_000, optionsFor: () => ({ maxMessageBytes: 256 * 1024 * 1024 }) });
    const [a, b] = fulfilled(results) as [SecureTransport, SecureTransport];
    const big = randomData(256 * 1024 * 1024);
    const digest = sha256(big);
    const small = randomData(100);
    const sending = Promise.all([a.send(1, big), a.send(1, small)]);
    const first = await b.recv(0);
    expect(first.length).toBe(big.length);
    expect(sha256(first)).toBe(digest);
    expect(sha256(await b.recv(0))).toBe(sha256(small));
    await sending;
    // 256 segments of 1 MiB + 16-byte tags (+ 8-byte header), plus the small message: the wire
    // carries exactly the ciphertext, nothing buffered twice.
    expect(mesh.bytesCarried).toBeGreaterThan(big.length);
    await closeAll([a, b]);
  }, 180_000);

  it('messages are copied: a received message is a fresh, zero-offset buffer', async () => {
    const { results } = await setup(2);
    const [a, b] = fulfilled(results) as [SecureTransport, SecureTransport];
    await a.send(1, new Uint8Array([1, 2, 3]));
    const msg = await b.recv(0);
    expect(msg.byteOffset).toBe(0);
    expect(msg.buffer.byteLength).toBe(3);
    expect([...msg]).toEqual([1, 2, 3]);
    await closeAll([a, b]);
  });

  it('argument errors reject without closing the transport', async () => {
    const { results } = await setup(2);
    const [a, b] = fulfilled(results) as [SecureTransport, SecureTransport];
    await expectReject(a.send(0, new Uint8Array(1)), 'INVALID_ARGUMENT');
    await expectReject(a.send(2, new Uint8Array(1)), 'INVALID_ARGUMENT');
    await expectReject(a.send(1, 'text' as unknown as Uint8Array), 'INVALID_ARGUMENT');
    await expectReject(a.recv(-1), 'INVALID_ARGUMENT');
    await expectReject(a.recv(1, { timeoutMs: -5 }), 'INVALID_ARGUMENT');
    await a.send(1, new Uint8Array([7]));
    expect([...(await b.recv(0))]).toEqual([7]);
    await closeAll([a, b]);
  });

  it('an aborted recv mid-message loses nothing: the next recv returns the whole message', async () => {
    // Hold back everything after the first segment of the 3-segment message.
    let held: Uint8Array[] = [];
    let holding = false;
    const { results, mesh } = await setup(2, {
      intercept: (m) => {
        if (holding && m.from === 0 && m.seq >= 5) {
          held.push(m.data);
          return [];
        }
        return undefined;
      },
    });
    const [a, b] = fulfilled(results) as [SecureTransport, SecureTransport];
    holding = true;
    const data = randomData(2 * SEGMENT_BYTES + 5);
    await a.send(1, data);
    const controller = new AbortController();
    const pending = b.recv(0, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await expectReject(pending, 'ABORTED');
    for (const frame of held) mesh.inject(0, 1, frame);
    held = [];
    expect(sha256(await b.recv(0))).toBe(sha256(data));
    await closeAll([a, b]);
  });

  it('a missed recv deadline fails the transport with TIMEOUT (fail-stop, like ts/net)', async () => {
    const { results } = await setup(2);
    const [a, b] = fulfilled(results) as [SecureTransport, SecureTransport];
    await expectReject(b.recv(0, { timeoutMs: 30 }), 'TIMEOUT');
    const reason = await b.closed;
    expect((reason as { code?: string } | undefined)?.code).toBe('TIMEOUT');
    await expectReject(b.send(0, new Uint8Array(1)), 'TIMEOUT');
    await closeAll([a, b]);
  });

  it('close(): pending and later operations reject with CLOSED; closed resolves; idempotent', async () => {
    const { results } = await setup(2);
    const [a, b] = fulfilled(results) as [SecureTransport, SecureTransport];
    const pending = a.recv(1);
    await a.close();
    await a.close();
    await expectReject(pending, 'CLOSED');
    await expectReject(a.send(1, new Uint8Array(1)), 'CLOSED');
    await expectReject(a.recv(1), 'CLOSED');
    expect(await a.closed).toBeUndefined();
    await b.close();
  });

  it('a party that leaves gracefully: its last messages arrive, then PEER_DISCONNECTED; others go on', async () => {
    const { results } = await setup(3);
    const [p0, p1, p2] = fulfilled(results) as [SecureTransport, SecureTransport, SecureTransport];
    await p0.send(1, new Uint8Array([42]));
    await p0.close();
    expect([...(await p1.recv(0))]).toEqual([42]);
    await expectReject(p1.recv(0), 'PEER_DISCONNECTED');
    await expectReject(p1.send(0, new Uint8Array(1)), 'PEER_DISCONNECTED');
    await p1.send(2, new Uint8Array([9]));
    expect([...(await p2.recv(1))]).toEqual([9]);
    await closeAll([p1, p2]);
  });

  it('over ts/net in-memory transports too (when present)', async (ctx) => {
    const memoryJs = new URL('../../dist/net/memory.js', import.meta.url);
    if (!existsSync(memoryJs)) ctx.skip();
    const { createMemoryTransports } = (await import(memoryJs.href)) as {
      createMemoryTransports(n: number): Transport[];
    };
    const { generateIdentity } = await import('../../dist/secure/index.js');
    const ids = await Promise.all([0, 1, 2].map(() => generateIdentity()));
    const inners = createMemoryTransports(3);
    const ts = await Promise.all(
      inners.map((inner, i) =>
        secureTransport(inner, {
          identity: ids[i]!,
          sessionId: 'memory-room',
          trust: 'pinned',
          peers: ids.map((id) => id.publicKey),
        }),
      ),
    );
    await allPairsRoundTrip(ts, [0, 1, 1024, 3 * SEGMENT_BYTES + 1]);
    await closeAll(ts);
  });
});
