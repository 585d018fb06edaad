// connectMesh's onPeer: an app learns, per other party, when it is in the room and when its
// data channel is up, so it can show people whom they are waiting for.
import { describe, expect, it } from 'vitest';
import { connectNodeMesh, startSignalingServer, type MeshPeerState, type Transport } from '../../dist/net/node.js';
import { roomId } from './helpers.js';

describe('WebRTC mesh progress (onPeer)', () => {
  it('reports every other party present, then connected, and nothing after the mesh is up', async () => {
    const server = await startSignalingServer({ port: 0 });
    const room = roomId();
    const parties = 3;
    const events: [number, MeshPeerState][][] = [[], [], []];
    const transports: Transport[] = [];
    try {
      // Staggered joins: party 0 hears of the others as they come; party 2 finds them present.
      const connecting: Promise<Transport>[] = [];
      for (let party = 0; party < parties; party++) {
        connecting.push(
          connectNodeMesh({
            signalingUrl: server.url,
            room,
            party,
            parties,
            connectTimeoutMs: 30_000,
            onPeer: (peer, state) => {
              events[party]!.push([peer, state]);
              // A throwing display must not break the connection.
              if (party === 1) throw new Error('display failed');
            },
          }),
        );
        await new Promise((r) => setTimeout(r, 150));
      }
      transports.push(...(await Promise.all(connecting)));
      const seen = events.map((e) => e.length);
      for (let party = 0; party < parties; party++) {
        for (let peer = 0; peer < parties; peer++) {
          if (peer === party) continue;
          const states = events[party]!.filter(([p]) => p === peer).map(([, s]) => s);
          expect(states, `party ${party} about ${peer}`).toEqual(['present', 'connected']);
        }
        expect(events[party]!.some(([p]) => p === party)).toBe(false);
      }
      // The mesh works, and is quiet about peers from now on.
      await transports[0]!.send(2, Uint8Array.of(7));
      expect(Array.from(await transports[2]!.recv(0))).toEqual([7]);
      expect(events.map((e) => e.length)).toEqual(seen);
    } finally {
      await Promise.all(transports.map((t) => t.close()));
      await server.close();
    }
  }, 60_000);
});
