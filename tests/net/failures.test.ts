// Hostile and broken peers: malformed frames, lying length headers, crashed processes, a stalled
// peer, and garbage sent to the signaling server.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import * as net from '../../dist/net/node.js';
import { randomMessage, rejection, roomId, session, sha256 } from './helpers.js';

const PARTY = fileURLToPath(new URL('./fixtures/party.mjs', import.meta.url));

/** Party 1 of a 2-party WebSocket mesh, with a raw socket playing party 0. */
async function rawPeer(options: net.FramedOptions = {}) {
  const listener = await net.listenWebSocket();
  const session = roomId();
  const transport = net.connectWebSocketMesh({ ...options, party: 1, parties: 2, session, peers: [], listener });
  const raw = new WebSocket(listener.url);
  await new Promise((resolve, reject) => {
    raw.once('open', resolve);
    raw.once('error', reject);
  });
  raw.send(JSON.stringify({ type: 'hello', session, from: 0, to: 1, parties: 2 }));
  await new Promise((resolve) => raw.once('message', resolve));
  return { transport: await transport, raw };
}

describe('malformed frames', () => {
  const cases: [string, number[]][] = [
    ['unknown frame type', [0x09, 1, 2]],
    ['empty frame', []],
    ['continuation without a start', [0x02, 1, 2, 3]],
    ['short start header', [0x01, 0, 0]],
    ['more data than announced', [0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0xaa, 0xbb]],
    ['keepalive with payload', [0x03, 0]],
    ['bad goodbye kind', [0x04, 7]],
  ];
  it.each(cases)('%s → PROTOCOL_ERROR', async (_name, bytes) => {
    const { transport, raw } = await rawPeer();
    const pending = rejection(transport.recv(0));
    raw.send(Uint8Array.from(bytes));
    const { error } = await pending;
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(error.peer).toBe(0);
    expect(await transport.closed).toMatchObject({ code: 'PROTOCOL_ERROR' });
    raw.terminate();
  });

  it('a lying length header is refused without allocating it', async () => {
    const { transport, raw } = await rawPeer({ maxMessageBytes: 1024 * 1024 });
    const before = process.memoryUsage().arrayBuffers;
    const pending = rejection(transport.recv(0));
    // 2^52 bytes announced (and then 1 MiB + 1, just above this transport's maximum).
    raw.send(Uint8Array.of(0x01, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0xaa));
    const { error } = await pending;
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
    raw.terminate();

    const second = await rawPeer({ maxMessageBytes: 1024 * 1024 });
    const pending2 = rejection(second.transport.recv(0));
    second.raw.send(Uint8Array.of(0x01, 0, 0, 0, 0, 0, 0x10, 0, 0x01));
    expect((await pending2).error.code).toBe('PROTOCOL_ERROR');
    second.raw.terminate();
  });

  it('a message just under the maximum is accepted', async () => {
    const { transport, raw } = await rawPeer({ maxMessageBytes: 16, closeTimeoutMs: 200 });
    raw.send(Uint8Array.of(0x01, 0, 0, 0, 0, 0, 0, 0, 16, ...new Array(10).fill(1)));
    raw.send(Uint8Array.of(0x02, ...new Array(6).fill(2)));
    expect(Array.from(await transport.recv(0))).toEqual([...new Array(10).fill(1), ...new Array(6).fill(2)]);
    await transport.close();
    raw.terminate();
  });
});

/** A start frame: type, u64 length, then the first data. */
function startFrame(length: number, data: Uint8Array): Uint8Array {
  const frame = new Uint8Array(9 + data.byteLength);
  frame[0] = 0x01;
  new DataView(frame.buffer).setUint32(1, Math.floor(length / 2 ** 32));
  new DataView(frame.buffer).setUint32(5, length >>> 0);
  frame.set(data, 9);
  return frame;
}

function continueFrame(data: Uint8Array): Uint8Array {
  const frame = new Uint8Array(1 + data.byteLength);
  frame[0] = 0x02;
  frame.set(data, 1);
  return frame;
}

/**
 * Sends `message` as frames cut at `cuts` (increasing offsets), and wherever else it takes to keep
 * every frame under the WebSocket mesh's 256 KiB frame limit.
 */
function sendCut(raw: WebSocket, message: Uint8Array, cuts: number[]): void {
  const ends: number[] = [];
  let last = 0;
  for (const end of [...cuts, message.byteLength]) {
    while (end - last > 200_000) ends.push((last += 200_000));
    ends.push((last = end));
  }
  raw.send(startFrame(message.byteLength, message.subarray(0, ends[0])));
  for (let i = 1; i < ends.length; i++) raw.send(continueFrame(message.subarray(ends[i - 1], ends[i])));
}

describe('reassembly (frames kept until 1 MiB of a message arrived, then assembled in place)', () => {
  const MiB = 1024 * 1024;
  it('messages cut anywhere around the in-place threshold arrive intact', async () => {
    const { transport, raw } = await rawPeer({ closeTimeoutMs: 200 });
    const cases: [number, number[]][] = [
      // Crosses the threshold mid-frame, then odd-sized frames to the end.
      [3 * MiB + 5, [65_527, 65_528, MiB - 7, MiB + 1, 2 * MiB, 3 * MiB + 4]],
      // Reaches exactly 1 MiB at a frame boundary.
      [2 * MiB, [MiB / 2, MiB, MiB + 1]],
      // The frame that crosses 1 MiB also completes the message: joined at the end instead.
      [MiB + 10, [200_000]],
      // Exactly 1 MiB in two frames, and one byte past it in one frame plus a last byte.
      [MiB, [1]],
      [MiB + 1, [MiB]],
    ];
    const messages = cases.map(([n]) => randomMessage(n));
    cases.forEach(([, cuts], i) => sendCut(raw, messages[i]!, cuts));
    for (const message of messages) {
      const got = await transport.recv(0, { timeoutMs: 20_000 });
      expect(got.byteLength).toBe(message.byteLength);
      expect(sha256(got)).toBe(sha256(message));
    }
    await transport.close();
    raw.terminate();
  }, 30_000);

  it('below the threshold a lying header costs only what arrived; the header alone allocates nothing', async () => {
    const { transport, raw } = await rawPeer({ closeTimeoutMs: 200 });
    // 64 MiB announced (the default maximum), 900 KiB sent, then nothing.
    const before = process.memoryUsage().arrayBuffers;
    raw.send(startFrame(64 * MiB, randomMessage(100 * 1024)));
    for (let i = 0; i < 8; i++) raw.send(continueFrame(randomMessage(100 * 1024)));
    // A message after it proves the frames were read (it is a protocol error: the first is unfinished).
    raw.send(startFrame(1, Uint8Array.of(1)));
    expect(await transport.closed).toMatchObject({ code: 'PROTOCOL_ERROR' });
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(8 * MiB);
    raw.terminate();
  }, 30_000);
});

describe('stalled peer', () => {
  it('a silent peer is declared disconnected after peerTimeoutMs', async () => {
    // The raw peer never sends keepalives: as a crashed host behind a dead network would.
    const { transport, raw } = await rawPeer({ peerTimeoutMs: 800, keepaliveMs: 200 });
    const { error, ms } = await rejection(transport.recv(0, { timeoutMs: 20_000 }));
    expect(error.code).toBe('PEER_DISCONNECTED');
    // Not early; and not the recv's own 20 s deadline, which would reject with TIMEOUT, not
    // PEER_DISCONNECTED. (No upper wall-clock bound: a loaded machine may run the timer late.)
    expect(ms).toBeGreaterThan(600);
    raw.terminate();
  });

  it('send blocked on a peer that reads nothing rejects with TIMEOUT', async () => {
    const { transport, raw } = await rawPeer({ sendTimeoutMs: 800, peerTimeoutMs: 0 });
    raw.pause(); // Stop reading: TCP fills up, then our queue does.
    const big = new Uint8Array(256 * 1024 * 1024);
    const { error, ms } = await rejection(transport.send(0, big));
    expect(error.code).toBe('TIMEOUT');
    expect(ms).toBeLessThan(10_000);
    raw.terminate();
  });
});

describe('crashed peer (child process killed mid-transfer)', () => {
  it.each(['webrtc', 'websocket'] as const)('%s: the survivors reject with PEER_DISCONNECTED or TIMEOUT in time', async (kind) => {
    const peerTimeoutMs = 3_000;
    const server = kind === 'webrtc' ? await net.startSignalingServer() : undefined;
    const listener = kind === 'websocket' ? await net.listenWebSocket() : undefined;
    const room = roomId();
    // webrtc: the child is party 1 of 3, streaming to party 0; websocket: the child is party 0
    // of 2, dialing our listener and streaming to party 1.
    const childParty = kind === 'webrtc' ? 1 : 0;
    const common = { peerTimeoutMs, keepaliveMs: 500 };
    const childConfig =
      kind === 'webrtc'
        ? { ...common, signalingUrl: server!.url, room, party: 1, parties: 3, target: 0 }
        : { ...common, party: 0, parties: 2, session: room, peers: [undefined, listener!.url], target: 1 };
    const child = spawn(process.execPath, [PARTY, kind, JSON.stringify(childConfig)], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const ours =
        kind === 'webrtc'
          ? await Promise.all(
              [0, 2].map((party) => net.connectNodeMesh({ ...common, signalingUrl: server!.url, room, party, parties: 3 })),
            )
          : [await net.connectWebSocketMesh({ ...common, party: 1, parties: 2, session: room, peers: [], listener: listener! })];
      const receiver = ours[0]!;
      // Mid-transfer: the first 4 MiB message has arrived and more are streaming.
      await receiver.recv(childParty, { timeoutMs: 20_000 });
      // Messages already delivered stay receivable, so each survivor reads until the failure.
      const drainUntilFailure = async (t: net.Transport) => {
        for (;;) await t.recv(childParty, { timeoutMs: 30_000 });
      };
      const pending = ours.map((t) => rejection(drainUntilFailure(t)));
      const t0 = performance.now();
      child.kill('SIGKILL');
      for (const { error } of await Promise.all(pending)) {
        expect(['PEER_DISCONNECTED', 'TIMEOUT']).toContain(error.code);
      }
      const ms = performance.now() - t0;
      console.log(`${kind}: crash noticed by every survivor after ${ms.toFixed(0)} ms`);
      // Liveness (3 s), not the recvs' 30 s deadline; the margin is wide so that only the
      // deadline, never a slow machine, can cross it.
      expect(ms).toBeLessThan(15_000);
      await Promise.all(ours.map((t) => t.close()));
    } finally {
      child.kill('SIGKILL');
      await server?.close();
      await listener?.close();
    }
  }, 60_000);
});

describe('signaling server', () => {
  let server: net.SignalingServer;
  beforeAll(async () => {
    server = await net.startSignalingServer({ iceServers: [{ urls: 'stun:stun.invalid:3478' }] });
  });
  afterAll(async () => {
    await server.close();
  });

  /** Sends raw messages, returns what the server answered before closing. */
  async function raw(messages: (string | Uint8Array)[]): Promise<unknown[]> {
    const ws = new WebSocket(server.url);
    const got: unknown[] = [];
    ws.on('message', (data, isBinary) => got.push(isBinary ? 'binary' : JSON.parse(String(data))));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    for (const m of messages) ws.send(m);
    await new Promise((resolve) => {
      ws.once('close', resolve);
      setTimeout(() => {
        ws.terminate();
        resolve(undefined);
      }, 1_000);
    });
    return got;
  }

  it.each([
    ['not JSON', ['{nope'], 'malformed-message'],
    ['JSON of the wrong shape', [JSON.stringify({ type: 'join', room: 'r', party: '0', parties: 2 })], 'malformed-message'],
    ['extra fields', [JSON.stringify({ type: 'join', room: 'r', party: 0, parties: 2, x: 1 })], 'malformed-message'],
    ['binary', [Uint8Array.of(1, 2, 3)], 'malformed-message'],
    ['too large', [JSON.stringify({ type: 'join', room: 'x'.repeat(70_000), party: 0, parties: 2 })], 'message-too-large'],
    ['bad room id', [JSON.stringify({ type: 'join', room: 'a b', party: 0, parties: 2 })], 'bad-room'],
    ['party out of range', [JSON.stringify({ type: 'join', room: 'r1', party: 2, parties: 2 })], 'bad-party'],
    ['negative party', [JSON.stringify({ type: 'join', room: 'r1', party: -1, parties: 2 })], 'bad-party'],
    ['signal before join', [JSON.stringify({ type: 'signal', to: 1, data: { kind: 'candidate', candidate: 'x', sdpMid: null, sdpMLineIndex: null } })], 'not-joined'],
    ['protocol data as a signal', [JSON.stringify({ type: 'join', room: 'r2', party: 0, parties: 2 }), JSON.stringify({ type: 'signal', to: 1, data: { kind: 'payload', bytes: 'AAAA' } })], 'malformed-message'],
  ])('%s → typed refusal, server survives', async (_name, messages, reason) => {
    const got = await raw(messages as (string | Uint8Array)[]);
    expect(got.at(-1)).toEqual({ type: 'error', reason });
  });

  it('room full / duplicate party, size mismatch and wrong index reject connectMesh with SIGNALING_FAILED', async () => {
    const room = roomId();
    const first = net.connectNodeMesh({ signalingUrl: server.url, room, party: 0, parties: 2, connectTimeoutMs: 10_000 });
    const firstOutcome = first.then(
      (t) => t,
      (e: unknown) => e,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const duplicate = await rejection(net.connectNodeMesh({ signalingUrl: server.url, room, party: 0, parties: 2 }));
    expect(duplicate.error).toMatchObject({ code: 'SIGNALING_FAILED' });
    expect(String((duplicate.error as Error).message)).toContain('duplicate-party');
    const mismatch = await rejection(net.connectNodeMesh({ signalingUrl: server.url, room, party: 1, parties: 3 }));
    expect(String((mismatch.error as Error).message)).toContain('room-size-mismatch');
    // The room still works: the real party 1 joins and the pair connects, using the server's
    // (unreachable) STUN server only as an extra candidate source.
    const second = await net.connectNodeMesh({ signalingUrl: server.url, room, party: 1, parties: 2 });
    const firstTransport = (await firstOutcome) as net.Transport;
    await firstTransport.send(1, Uint8Array.of(1, 2, 3));
    expect(Array.from(await second.recv(0))).toEqual([1, 2, 3]);
    // A third party in a full 2-party room can only pick a taken or out-of-range index.
    const third = await rejection(net.connectNodeMesh({ signalingUrl: server.url, room: roomId(), party: 2, parties: 2 }));
    expect(third.error.code).toBe('INVALID_ARGUMENT');
    await Promise.all([firstTransport.close(), second.close()]);
  }, 60_000);

  it('connect times out (TIMEOUT) when a peer never shows up, and releases everything', async () => {
    const { error, ms } = await rejection(
      net.connectNodeMesh({ signalingUrl: server.url, room: roomId(), party: 0, parties: 2, connectTimeoutMs: 500 }),
    );
    expect(error.code).toBe('TIMEOUT');
    // connectTimeoutMs (0.5 s) was used, not the 30 s default; the margin is for a loaded machine.
    expect(ms).toBeLessThan(15_000);
  });

  it('an unreachable signaling server → SIGNALING_FAILED', async () => {
    const { error } = await rejection(
      net.connectNodeMesh({ signalingUrl: 'ws://127.0.0.1:1', room: roomId(), party: 0, parties: 2, connectTimeoutMs: 3_000 }),
    );
    expect(error.code).toBe('SIGNALING_FAILED');
  });
});

describe('memory transport backpressure', () => {
  it('a sender waits while the receiver holds capacityBytes unreceived', async () => {
    const s = await session('memory', 2, {});
    const [a, b] = net.createMemoryTransports(2, { capacityBytes: 4 * 1024 * 1024 });
    const mib = new Uint8Array(1024 * 1024);
    for (let i = 0; i < 4; i++) await a!.send(1, mib);
    let fifth = false;
    const sending = a!.send(1, mib).then(() => {
      fifth = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fifth).toBe(false);
    await b!.recv(0);
    await sending;
    expect(fifth).toBe(true);
    await Promise.all([a!.close(), b!.close(), s.close()]);
  });
});
