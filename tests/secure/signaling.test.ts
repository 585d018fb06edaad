// End to end over real WebRTC data channels (node-datachannel through ts/net's mesh): with an
// honest signaling server the secure channel works; with a malicious one that cross-wires two
// rooms (it hands each party the SDP — and so the DTLS fingerprint — of a party of the other
// room), WebRTC happily connects the wrong parties, and the secure handshake is what refuses it.
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { generateIdentity, secureTransport, type Identity } from '../../dist/secure/index.js';
import type { Transport } from '../../dist/net/transport.js';
import { closeAll, expectCode, randomData, sha256 } from './util.js';

const NODE_NET = new URL('../../dist/net/node.js', import.meta.url);

interface NodeNet {
  startSignalingServer(options?: object): Promise<{ url: string; close(): Promise<void> }>;
  connectNodeMesh(options: {
    signalingUrl: string;
    room: string;
    party: number;
    parties: number;
    connectTimeoutMs?: number;
  }): Promise<Transport>;
}

async function nodeNet(): Promise<NodeNet> {
  return (await import(NODE_NET.href)) as NodeNet;
}

/**
 * A hostile signaling server speaking ts/net's signaling protocol. It cross-wires rooms 'alpha'
 * and 'beta': party p of one room is introduced to, and exchanges SDP/ICE with, the parties of
 * the other room. Every party sees a well-formed session of the size it asked for.
 */
async function startCrossWiringServer(): Promise<{ url: string; close(): Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const members = new Map<string, WebSocket>(); // `${room}/${party}`
  const other = (room: string): string => (room === 'alpha' ? 'beta' : 'alpha');
  wss.on('connection', (socket) => {
    let me: { room: string; party: number; parties: number } | undefined;
    socket.on('message', (raw) => {
      const msg = JSON.parse(String(raw)) as {
        type: string;
        room: string;
        party: number;
        parties: number;
        to: number;
        data: unknown;
      };
      if (msg.type === 'join') {
        me = { room: msg.room, party: msg.party, parties: msg.parties };
        const present: number[] = [];
        for (let q = 0; q < msg.parties; q++) {
          if (q === msg.party) continue;
          const peer = members.get(`${other(msg.room)}/${q}`);
          if (peer) {
            present.push(q);
            peer.send(JSON.stringify({ type: 'peer-joined', party: msg.party }));
          }
        }
        members.set(`${msg.room}/${msg.party}`, socket);
        socket.send(JSON.stringify({ type: 'joined', present, iceServers: [] }));
      } else if (msg.type === 'signal' && me) {
        members.get(`${other(me.room)}/${msg.to}`)?.send(JSON.stringify({ type: 'signal', from: me.party, data: msg.data }));
      }
    });
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

const servers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('secure channel over the WebRTC mesh', () => {
  it('honest signaling server: 3 parties authenticate and exchange messages up to 3 MB', async () => {
    const net = await nodeNet();
    const server = await net.startSignalingServer();
    servers.push(server);
    const ids = await Promise.all([0, 1, 2].map(() => generateIdentity()));
    const inners = await Promise.all(
      [0, 1, 2].map((party) =>
        net.connectNodeMesh({ signalingUrl: server.url, room: 'honest', party, parties: 3, connectTimeoutMs: 20_000 }),
      ),
    );
    const ts = await Promise.all(
      inners.map((inner, i) =>
        secureTransport(inner, {
          identity: ids[i]!,
          sessionId: 'honest',
          trust: 'pinned',
          peers: ids.map((id) => id.publicKey),
        }),
      ),
    );
    const data = randomData(3 * 1024 * 1024 + 17);
    const small = randomData(1);
    await Promise.all([ts[0]!.send(2, data), ts[0]!.send(2, small), ts[1]!.send(0, new Uint8Array(0))]);
    expect(sha256(await ts[2]!.recv(0))).toBe(sha256(data));
    expect(await ts[2]!.recv(0)).toEqual(small);
    expect((await ts[0]!.recv(1)).length).toBe(0);
    await closeAll(ts);
  }, 60_000);

  it('malicious signaling server cross-wiring two rooms (SDP/DTLS fingerprint swap): AUTHENTICATION_FAILED everywhere', async () => {
    const net = await nodeNet();
    const server = await startCrossWiringServer();
    servers.push(server);
    const rooms = ['alpha', 'beta'] as const;
    const ids: Record<string, Identity[]> = {
      alpha: await Promise.all([generateIdentity(), generateIdentity()]),
      beta: await Promise.all([generateIdentity(), generateIdentity()]),
    };
    const inners = await Promise.all(
      rooms.flatMap((room) =>
        [0, 1].map(async (party) => ({
          room,
          party,
          inner: await net.connectNodeMesh({ signalingUrl: server.url, room, party, parties: 2, connectTimeoutMs: 20_000 }),
        })),
      ),
    );
    // WebRTC connected: the server's swap is invisible below the secure layer.
    expect(inners).toHaveLength(4);
    const results = await Promise.allSettled(
      inners.map(({ room, party, inner }) =>
        secureTransport(inner, {
          identity: ids[room]![party]!,
          sessionId: room,
          trust: 'pinned',
          peers: ids[room]!.map((id) => id.publicKey),
          handshakeTimeoutMs: 10_000,
        }),
      ),
    );
    for (const r of results) expectCode(r, 'AUTHENTICATION_FAILED');
  }, 60_000);

  it('the same cross-wiring with a shared session id and tofu: still no silent success for pinned parties', async () => {
    // Room alpha pins; room beta (say, the attacker's accomplices) uses tofu and the same session
    // id. The alpha parties must still refuse their cross-wired peers.
    const net = await nodeNet();
    const server = await startCrossWiringServer();
    servers.push(server);
    const alpha = await Promise.all([generateIdentity(), generateIdentity()]);
    const beta = await Promise.all([generateIdentity(), generateIdentity()]);
    const inners = await Promise.all(
      (['alpha', 'beta'] as const).flatMap((room) =>
        [0, 1].map(async (party) => ({
          room,
          party,
          inner: await net.connectNodeMesh({ signalingUrl: server.url, room, party, parties: 2, connectTimeoutMs: 20_000 }),
        })),
      ),
    );
    const results = await Promise.allSettled(
      inners.map(({ room, party, inner }) =>
        room === 'alpha'
          ? secureTransport(inner, {
              identity: alpha[party]!,
              sessionId: 'shared',
              trust: 'pinned',
              peers: alpha.map((id) => id.publicKey),
              handshakeTimeoutMs: 10_000,
            })
          : secureTransport(inner, { identity: beta[party]!, sessionId: 'shared', trust: 'tofu', handshakeTimeoutMs: 10_000 }),
      ),
    );
    expectCode(results[0], 'AUTHENTICATION_FAILED');
    expectCode(results[1], 'AUTHENTICATION_FAILED');
  }, 60_000);
  it('control: the cross-wiring really connects the wrong parties (all-tofu handshakes reveal the foreign keys)', async () => {
    const net = await nodeNet();
    const server = await startCrossWiringServer();
    servers.push(server);
    const ids: Record<string, Identity[]> = {
      alpha: await Promise.all([generateIdentity(), generateIdentity()]),
      beta: await Promise.all([generateIdentity(), generateIdentity()]),
    };
    const inners = await Promise.all(
      (['alpha', 'beta'] as const).flatMap((room) =>
        [0, 1].map(async (party) => ({
          room,
          party,
          inner: await net.connectNodeMesh({ signalingUrl: server.url, room, party, parties: 2, connectTimeoutMs: 20_000 }),
        })),
      ),
    );
    const ts = await Promise.all(
      inners.map(({ room, party, inner }) =>
        secureTransport(inner, { identity: ids[room]![party]!, sessionId: 'shared', trust: 'tofu' }),
      ),
    );
    // alpha/0 talks to beta/1, and beta/0 to alpha/1: exactly what pinning refuses above.
    expect(ts[0]!.peerKeys[1]).toEqual(ids.beta![1]!.publicKey);
    expect(ts[2]!.peerKeys[1]).toEqual(ids.alpha![1]!.publicKey);
    await closeAll(ts);
  }, 60_000);
});
