// The record layer against a man in the middle after a successful handshake: any change to the
// ciphertext stream (bit flip, replay, reordering, drop, truncation, injection, reflection,
// splicing from another session) must close the transport with a typed error, deliver nothing
// forged, and make every later send/recv reject. And nothing the inner transport carries may
// contain plaintext.
import { describe, expect, it } from 'vitest';
import { generateIdentity, SEGMENT_BYTES, type SecureTransport } from '../../dist/secure/index.js';
import type { Interceptor, WireMessage } from './pair.js';
import { closeAll, expectReject, fulfilled, randomData, setup, sha256 } from './util.js';

/** Link 0 → 1 carries COMMIT, HELLO, AUTH and CONFIRM first; traffic segments start at this seq. */
const FIRST_TRAFFIC_SEQ = 4;

type Attack = (m: WireMessage, traffic: number) => Uint8Array[] | undefined;

/**
 * A 2-party session whose link 0 → 1 is under `attack` once the handshake is over; `traffic` is
 * the index of the segment among the traffic segments on that link.
 */
async function attacked(attack: Attack): Promise<[SecureTransport, SecureTransport]> {
  const intercept: Interceptor = (m) =>
    m.from === 0 && m.seq >= FIRST_TRAFFIC_SEQ ? attack(m, m.seq - FIRST_TRAFFIC_SEQ) : undefined;
  const { results } = await setup(2, { intercept });
  return fulfilled(results) as [SecureTransport, SecureTransport];
}

/** After an attack detected by `b`: b is closed with `code`, later operations reject, a is told. */
async function expectClosed(a: SecureTransport, b: SecureTransport, code: string): Promise<void> {
  const reason = await b.closed;
  expect((reason as { code?: string } | undefined)?.code).toBe(code);
  await expectReject(b.recv(0), code);
  await expectReject(b.send(0, new Uint8Array(1)), code);
  // b aborted its inner transport, so a sees the peer gone rather than hanging.
  await expectReject(a.recv(1, { timeoutMs: 2000 }), 'PEER_DISCONNECTED');
  await closeAll([a, b]);
}

describe('record layer under attack', () => {
  it('a flipped ciphertext bit: AUTHENTICATION_FAILED, transport closed', async () => {
    const [a, b] = await attacked((m, k) => {
      if (k !== 0) return undefined;
      const forged = m.data.slice();
      forged[forged.length >> 1]! ^= 0x04;
      return [forged];
    });
    await a.send(1, randomData(1000));
    await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
    await expectClosed(a, b, 'AUTHENTICATION_FAILED');
  });

  it('a flipped tag bit: AUTHENTICATION_FAILED', async () => {
    const [a, b] = await attacked((m, k) => {
      if (k !== 0) return undefined;
      const forged = m.data.slice();
      forged[forged.length - 1]! ^= 0x80;
      return [forged];
    });
    await a.send(1, randomData(10));
    await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
    await expectClosed(a, b, 'AUTHENTICATION_FAILED');
  });

  it('a replayed message: the first copy is delivered, the replay fails', async () => {
    const [a, b] = await attacked((m, k) => (k === 0 ? [m.data, m.data] : undefined));
    const data = randomData(50);
    await a.send(1, data);
    expect(await b.recv(0)).toEqual(data);
    await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
    await expectClosed(a, b, 'AUTHENTICATION_FAILED');
  });

  it('reordered messages: the later one arriving first fails', async () => {
    let held: Uint8Array | undefined;
    const [a, b] = await attacked((m, k) => {
      if (k === 0) {
        held = m.data;
        return [];
      }
      if (k === 1) return [m.data, held!];
      return undefined;
    });
    await a.send(1, randomData(20));
    await a.send(1, randomData(20));
    await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
    await expectClosed(a, b, 'AUTHENTICATION_FAILED');
  });

  it('a dropped message: the next one fails', async () => {
    const [a, b] = await attacked((m, k) => (k === 0 ? [] : undefined));
    await a.send(1, randomData(20));
    await a.send(1, randomData(20));
    await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
    await expectClosed(a, b, 'AUTHENTICATION_FAILED');
  });

  it('truncated ciphertexts (by one byte, to below a tag, to nothing): AUTHENTICATION_FAILED', async () => {
    for (const cut of [(n: number) => n - 1, () => 10, () => 0]) {
      const [a, b] = await attacked((m, k) => (k === 0 ? [m.data.subarray(0, cut(m.data.length))] : undefined));
      await a.send(1, randomData(100));
      await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
      await expectClosed(a, b, 'AUTHENTICATION_FAILED');
    }
  });

  it('a dropped, duplicated or swapped segment inside a multi-segment message fails', async () => {
    const attacks: Attack[] = [
      (m, k) => (k === 1 ? [] : undefined),
      (m, k) => (k === 1 ? [m.data, m.data] : undefined),
      (() => {
        let held: Uint8Array | undefined;
        return (m: WireMessage, k: number) => {
          if (k === 1) {
            held = m.data;
            return [];
          }
          return k === 2 ? [m.data, held!] : undefined;
        };
      })(),
    ];
    for (const attack of attacks) {
      const [a, b] = await attacked(attack);
      const sending = a.send(1, randomData(3 * SEGMENT_BYTES));
      await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
      await sending.catch(() => {});
      await expectClosed(a, b, 'AUTHENTICATION_FAILED');
    }
  });

  it('injected garbage of plausible size: AUTHENTICATION_FAILED', async () => {
    const { results, mesh } = await setup(2);
    const [a, b] = fulfilled(results) as [SecureTransport, SecureTransport];
    mesh.inject(0, 1, randomData(8 + 16 + 32));
    await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
    await expectClosed(a, b, 'AUTHENTICATION_FAILED');
  });

  it("a party's own message reflected back to it fails (one key per direction)", async () => {
    let reflect = false;
    const { results, mesh } = await setup(2, {
      intercept: (m) => {
        if (reflect && m.from === 1) mesh.inject(0, 1, m.data);
        return undefined;
      },
    });
    const [a, b] = fulfilled(results) as [SecureTransport, SecureTransport];
    reflect = true;
    await b.send(0, randomData(30));
    await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
    await expectClosed(a, b, 'AUTHENTICATION_FAILED');
  });

  it('a message recorded in another session of the same parties fails (fresh keys per session)', async () => {
    const identities = await Promise.all([generateIdentity(), generateIdentity()]);
    const recorded: Uint8Array[] = [];
    const first = await setup(2, {
      identities,
      intercept: (m) => {
        if (m.from === 0 && m.seq === FIRST_TRAFFIC_SEQ) recorded.push(m.data);
        return undefined;
      },
    });
    const [a1, b1] = fulfilled(first.results) as [SecureTransport, SecureTransport];
    await a1.send(1, randomData(40));
    await b1.recv(0);
    await closeAll([a1, b1]);

    const second = await setup(2, { identities });
    const [a, b] = fulfilled(second.results) as [SecureTransport, SecureTransport];
    second.mesh.inject(0, 1, recorded[0]!);
    await expectReject(b.recv(0), 'AUTHENTICATION_FAILED');
    await expectClosed(a, b, 'AUTHENTICATION_FAILED');
  });

  it('a message cut short by the sender leaving is dropped, not delivered in part', async () => {
    // The link drops everything after the first segment; then the sender leaves gracefully.
    const [a, b] = await attacked((m, k) => (k >= 1 ? [] : undefined));
    await a.send(1, randomData(2 * SEGMENT_BYTES));
    await a.close();
    await expectReject(b.recv(0), 'PEER_DISCONNECTED');
    await b.close();
  });
});

describe('wire check', () => {
  it('no plaintext on the wire: a random 32-byte marker never appears in what the inner transport carries', async () => {
    const frames: Uint8Array[] = [];
    const { results, identities } = await setup(3, {
      intercept: (m) => {
        frames.push(m.data);
        return undefined;
      },
    });
    const ts = fulfilled(results);
    const marker = randomData(32);
    // Messages of several shapes, the marker at the start, the end, in the middle, and straddling
    // a segment boundary; plus messages that are nothing but repeated markers.
    const messages: Uint8Array[] = [];
    for (const [size, at] of [
      [32, 0],
      [100, 68],
      [5000, 1234],
      [3 * SEGMENT_BYTES, SEGMENT_BYTES - 8 - 16],
      [2 * SEGMENT_BYTES + 77, 2 * SEGMENT_BYTES + 77 - 32],
    ] as const) {
      const m = randomData(size);
      m.set(marker, at);
      messages.push(m);
    }
    const repeated = new Uint8Array(32 * 1000);
    for (let i = 0; i < 1000; i++) repeated.set(marker, 32 * i);
    messages.push(repeated);

    await Promise.all(
      ts.flatMap((t) =>
        [0, 1, 2]
          .filter((to) => to !== t.party)
          .map(async (to) => {
            for (const m of messages) await t.send(to, m);
          }),
      ),
    );
    for (const t of ts) {
      for (const from of [0, 1, 2].filter((f) => f !== t.party)) {
        for (const m of messages) expect(sha256(await t.recv(from))).toBe(sha256(m));
      }
    }

    const needle = Buffer.from(marker);
    const half = Buffer.from(marker.subarray(0, 16));
    expect(frames.length).toBeGreaterThan(6 * messages.length);
    for (const frame of frames) {
      const hay = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
      expect(hay.indexOf(needle)).toBe(-1);
      // Even half of it: no frame carries a recognizable plaintext fragment.
      expect(hay.indexOf(half)).toBe(-1);
      // And no identity secret ever travels.
      for (const id of identities) expect(hay.indexOf(Buffer.from(id.secretKey.subarray(0, 32)))).toBe(-1);
    }
    // Across frame boundaries too.
    const all = Buffer.concat(frames.map((f) => Buffer.from(f)));
    expect(all.indexOf(needle)).toBe(-1);
    await closeAll(ts);
  });
});
