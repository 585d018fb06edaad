// The signaling server against exhaustion (issue 10, item 5): a host that floods it with
// connections and rooms hits its per-address limits while a fresh room from another host is
// still served; connections that never join or go idle are closed; a signal flood is cut off;
// and a relay sender is held back (TCP backpressure) instead of being buffered without bound.
// Misbehaving clients connect from 127.0.0.2–4 so the server sees other hosts on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import * as net from '../../dist/net/node.js';
import { rejection, roomId } from './helpers.js';

const FLOODER_ADDRESS = '127.0.0.2';
const SLOW_ADDRESS = '127.0.0.3';
const NOISY_ADDRESS = '127.0.0.4';

interface Client {
  ws: WebSocket;
  /** JSON messages from the server, in order. */
  got: { type: string; reason?: string }[];
  closed: Promise<void>;
}

async function client(url: string, localAddress?: string): Promise<Client> {
  const ws = new WebSocket(url, localAddress ? { localAddress } : {});
  const got: Client['got'] = [];
  ws.on('message', (data, isBinary) => {
    if (!isBinary) got.push(JSON.parse(String(data)) as Client['got'][number]);
  });
  ws.on('error', () => {});
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, got, closed };
}

/** Waits until `c` got a message of `type` (or the socket closed); returns it. */
async function answer(c: Client, timeoutMs = 2_000): Promise<Client['got'][number] | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (c.got.length > 0) return c.got.at(-1);
    await new Promise((r) => setTimeout(r, 10));
  }
  return undefined;
}

const join = (c: Client, room: string, party = 0, parties = 2) => c.ws.send(JSON.stringify({ type: 'join', room, party, parties }));

describe('signaling server limits', () => {
  let server: net.SignalingServer;
  beforeAll(async () => {
    server = await net.startSignalingServer({
      relay: true,
      maxConnectionsPerAddress: 20,
      maxRoomsPerAddress: 5,
      joinTimeoutMs: 500,
      idleTimeoutMs: 1_500,
      maxSignalBytesPerConnection: 64 * 1024,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('one host flooding connections and rooms is refused past its limits; a fresh room from another host is served', async () => {
    // 30 connections at once: the 21st and later are refused.
    const flood = await Promise.all(Array.from({ length: 30 }, () => client(server.url, FLOODER_ADDRESS)));
    const early = await Promise.all(flood.map((c) => answer(c, 300)));
    expect(early.filter((a) => a?.reason === 'too-many-connections').length).toBe(10);
    const open = flood.filter((_, i) => early[i] === undefined);
    expect(open.length).toBe(20);
    // Each of the 20 tries to create a room: 5 may.
    open.forEach((c, i) => join(c, `flood-${i}`));
    const answers = await Promise.all(open.map((c) => answer(c)));
    expect(answers.filter((a) => a?.type === 'joined').length).toBe(5);
    expect(answers.filter((a) => a?.reason === 'too-many-rooms-for-address').length).toBe(15);
    // Another host still gets a room and its parties connect (WebRTC through this server).
    const room = roomId();
    const [a, b] = await Promise.all([0, 1].map((party) => net.connectNodeMesh({ signalingUrl: server.url, room, party, parties: 2 })));
    await a!.send(1, Uint8Array.of(9));
    expect(Array.from(await b!.recv(0))).toEqual([9]);
    await Promise.all([a!.close(), b!.close()]);
    for (const c of flood) c.ws.terminate();
  }, 60_000);

  it('a connection that never joins is closed (join-timeout); one that goes idle too (idle-timeout)', async () => {
    const silent = await client(server.url, SLOW_ADDRESS);
    await silent.closed;
    expect(silent.got.at(-1)).toEqual({ type: 'error', reason: 'join-timeout' });
    const idle = await client(server.url, SLOW_ADDRESS);
    join(idle, roomId());
    await idle.closed;
    expect(idle.got.map((m) => m.type === 'error' ? m.reason : m.type)).toEqual(['joined', 'idle-timeout']);
    // A client sees the refusal as a typed error.
    const { error } = await rejection(
      net.connectNodeMesh({ signalingUrl: server.url, room: roomId(), party: 0, parties: 2, connectTimeoutMs: 10_000 }),
    );
    expect(error.code).toBe('SIGNALING_FAILED');
    expect(String((error as Error).message)).toContain('idle-timeout');
  }, 30_000);

  it('a signal flood is cut off (rate-limited) and the server goes on', async () => {
    const room = roomId();
    const [a, b] = [await client(server.url, NOISY_ADDRESS), await client(server.url, NOISY_ADDRESS)];
    join(a, room, 0);
    join(b, room, 1);
    await answer(a);
    const candidate = { kind: 'candidate', candidate: `candidate:${'x'.repeat(1_000)}`, sdpMid: null, sdpMLineIndex: null };
    for (let i = 0; i < 200 && a.ws.readyState === WebSocket.OPEN; i++) a.ws.send(JSON.stringify({ type: 'signal', to: 1, data: candidate }));
    await a.closed;
    expect(a.got.at(-1)).toEqual({ type: 'error', reason: 'rate-limited' });
    // b got the signals up to the budget, then peer-left.
    const signals = b.got.filter((m) => m.type === 'signal').length;
    expect(signals).toBeGreaterThan(10);
    expect(signals).toBeLessThan(70);
    b.ws.terminate();
    const c = await client(server.url);
    join(c, roomId());
    expect(await answer(c)).toMatchObject({ type: 'joined' });
    c.ws.terminate();
  }, 30_000);
});

describe('relay backpressure', () => {
  it('a receiver that reads nothing makes the relay stop reading from the sender (its bytes wait on the sender side)', async () => {
    const server = await net.startSignalingServer({ relay: true, relayHighWaterBytes: 1024 * 1024 });
    try {
      const room = roomId();
      const [sender, receiver] = [await client(`${server.url}/relay`), await client(`${server.url}/relay`)];
      join(sender, room, 0);
      join(receiver, room, 1);
      await answer(sender);
      // The receiver stops reading its socket: the relay's queue to it fills, then the relay must
      // stop reading the sender rather than buffer everything.
      receiver.ws.pause();
      const frame = new Uint8Array(2 + 200 * 1024);
      frame[1] = 1; // to party 1; the bytes after the header are opaque to the relay
      const total = 64 * 1024 * 1024;
      for (let sent = 0; sent < total; sent += frame.byteLength) sender.ws.send(frame);
      await new Promise((r) => setTimeout(r, 1_500));
      // Most of the 64 MiB is still queued at the sender: the relay took at most a few MiB (its
      // high-water mark plus socket buffers).
      expect(sender.ws.bufferedAmount).toBeGreaterThan(total - 24 * 1024 * 1024);
      receiver.ws.resume();
      sender.ws.terminate();
      receiver.ws.terminate();
    } finally {
      await server.close();
    }
  }, 30_000);
});
