// Receive-side flow control and the memory a peer can make another hold (issue 10, item 3):
// honest senders wait for a slow receiver; a single message larger than the window still goes
// through, also both ways at once; and a peer that floods — before the secure handshake with raw
// frames, after it with valid records — leaves the victim's memory bounded and the victim with a
// typed error (PROTOCOL_ERROR naming the flooder), which the flooder is told.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import * as net from '../../dist/net/node.js';
import { generateIdentity, publicKeyToHex, secureTransport } from '../../dist/secure/index.js';
import { randomMessage, rejection, roomId, session, sha256, type Kind } from './helpers.js';

const FLOODER = fileURLToPath(new URL('./fixtures/flooder.mjs', import.meta.url));
const MiB = 1024 * 1024;
const FRAMED: Kind[] = ['websocket', 'relay', 'webrtc'];

// A full collection before each sample, so what is measured is what the victim holds, not garbage
// (every decrypted segment is a fresh buffer) that the collector has not come round to yet.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Largest growth of this process's live ArrayBuffer memory while `work` runs (sampled every 25 ms). */
async function peakGrowth<T>(work: Promise<T>): Promise<{ value: T; peak: number }> {
  gc();
  const base = process.memoryUsage().arrayBuffers;
  let peak = 0;
  const timer = setInterval(() => {
    gc();
    peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
  }, 25);
  try {
    const value = await work;
    return { value, peak };
  } finally {
    clearInterval(timer);
  }
}

describe.each(FRAMED)('%s: flow control', (kind) => {
  it('a sender waits while the receiver takes nothing: at most a window in flight, then it goes on', async () => {
    const s = await session(kind, 2, { receiveWindowBytes: 4 * MiB });
    try {
      const [a, b] = s.transports as [net.Transport, net.Transport];
      let sent = 0;
      const message = randomMessage(MiB);
      const sending = (async () => {
        for (let i = 0; i < 20; i++) {
          await a.send(1, message);
          sent += 1;
        }
      })();
      await new Promise((r) => setTimeout(r, 1_000));
      // 4 MiB of window (+ what the media buffer on the way, which is bounded by highWaterBytes).
      expect(sent).toBeGreaterThanOrEqual(3);
      expect(sent).toBeLessThan(10);
      for (let i = 0; i < 20; i++) expect(sha256(await b.recv(0))).toBe(sha256(message));
      await sending;
      expect(sent).toBe(20);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('messages larger than the window go through, both ways at once (no deadlock)', async () => {
    const s = await session(kind, 2, { receiveWindowBytes: 256 * 1024 });
    try {
      const [a, b] = s.transports as [net.Transport, net.Transport];
      const [x, y] = [randomMessage(5 * MiB), randomMessage(3 * MiB + 1)];
      // Each sends its large message before receiving: one message always goes through.
      const [, , atB, atA] = await Promise.all([a.send(1, x), b.send(0, y), b.recv(0), a.recv(1)]);
      expect(sha256(atB)).toBe(sha256(x));
      expect(sha256(atA)).toBe(sha256(y));
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe('secure channel over a small window', () => {
  it('two parties that each send a 20 MiB message (20 records) before receiving do not deadlock', async () => {
    const s = await session('websocket', 2, { receiveWindowBytes: 2 * MiB });
    try {
      const ids = await Promise.all([generateIdentity(), generateIdentity()]);
      const [a, b] = await Promise.all(
        s.transports.map((inner, i) =>
          secureTransport(inner, { identity: ids[i]!, sessionId: 'w', trust: 'pinned', peers: ids.map((id) => id.publicKey) }),
        ),
      );
      const [x, y] = [randomMessage(20 * MiB), randomMessage(20 * MiB)];
      const [, , atB, atA] = await Promise.all([a!.send(1, x), b!.send(0, y), b!.recv(0), a!.recv(1)]);
      expect(sha256(atB)).toBe(sha256(x));
      expect(sha256(atA)).toBe(sha256(y));
      await Promise.all([a!.close(), b!.close()]);
    } finally {
      await s.close();
    }
  }, 60_000);
});

/** Party 1 (the victim, here) listening; party 0 a flooder in a child process. */
async function flood(mode: 'frames' | 'big' | 'records') {
  const listener = await net.listenWebSocket();
  const room = roomId();
  const identity = await generateIdentity();
  const child = spawn(
    process.execPath,
    [FLOODER, mode, JSON.stringify({ url: listener.url, session: room, victimKey: publicKeyToHex(identity.publicKey) })],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const inner = await net.connectWebSocketMesh({ party: 1, parties: 2, session: room, peers: [], listener });
    return { inner, identity, room, child, exited, output: () => out };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

describe('a flooding peer (child process) leaves the victim bounded, with a typed error', () => {
  it('a 1 GiB message announced before the handshake: PROTOCOL_ERROR at its header, the flooder is told why', async () => {
    const { inner, identity, child, exited, output } = await flood('big');
    try {
      // The flooder's key does not matter here: nothing it sends is even read as a handshake.
      const { value: result, peak } = await peakGrowth(rejection(secureTransport(inner, { identity, sessionId: 'flood', trust: 'tofu' })));
      expect(result.error.code).toBe('PROTOCOL_ERROR');
      console.log(`flood before handshake: victim grew by at most ${(peak / MiB).toFixed(1)} MiB`);
      expect(peak).toBeLessThan(16 * MiB);
      await exited;
      expect(output()).toMatch(/aborted PROTOCOL_ERROR/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('raw frames beyond the window, nobody receiving: PROTOCOL_ERROR after one window, memory bounded', async () => {
    const { inner, child, exited, output } = await flood('frames');
    try {
      // A plain transport whose app reads nothing: only the window protects it.
      const { value: reason, peak } = await peakGrowth(inner.closed);
      expect(reason).toMatchObject({ code: 'PROTOCOL_ERROR', peer: 0 });
      expect(String((reason as Error).message)).toMatch(/flow-control window/);
      console.log(`flood without recv: victim grew by at most ${(peak / MiB).toFixed(1)} MiB (window 8 MiB)`);
      expect(peak).toBeLessThan(32 * MiB);
      await exited;
      expect(output()).toMatch(/aborted PROTOCOL_ERROR/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('valid records after the handshake, nobody receiving: PROTOCOL_ERROR, memory bounded by one message + window', async () => {
    const { inner, identity, room, child, exited, output } = await flood('records');
    try {
      // The flooder is authenticated (its key learnt; who it is does not matter here): the point is
      // what an authenticated peer can do.
      const t = await secureTransport(inner, { identity, sessionId: room, trust: 'tofu' });
      const { value: reason, peak } = await peakGrowth(t.closed);
      expect(reason).toMatchObject({ code: 'PROTOCOL_ERROR', peer: 0 });
      console.log(`record flood without recv: victim grew by at most ${(peak / MiB).toFixed(1)} MiB (16 MiB messages, window 8 MiB)`);
      // One 16 MiB message read ahead, the 8 MiB window, one segment being decrypted.
      expect(peak).toBeLessThan(48 * MiB);
      await exited;
      expect(output()).toMatch(/handshake done/);
      expect(output()).toMatch(/aborted PROTOCOL_ERROR/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
