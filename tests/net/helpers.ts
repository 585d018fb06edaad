// Builds sessions of every transport kind for the tests: all parties in this process, each
// transport over its real medium (loopback sockets, node-datachannel peer connections).
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import * as net from '../../dist/net/node.js';
import type { Transport } from '../../dist/net/node.js';

export type Kind = 'memory' | 'websocket' | 'relay' | 'webrtc';
export const KINDS: Kind[] = ['memory', 'websocket', 'relay', 'webrtc'];

export interface Session {
  transports: Transport[];
  close(): Promise<void>;
}

export function roomId(): string {
  return `t-${randomBytes(8).toString('hex')}`;
}

export async function session(kind: Kind, parties: number, options: net.FramedOptions = {}): Promise<Session> {
  if (kind === 'memory') {
    const transports = net.createMemoryTransports(parties, options);
    return { transports, close: async () => void (await Promise.all(transports.map((t) => t.close()))) };
  }
  if (kind === 'websocket') {
    const listeners = await Promise.all(
      Array.from({ length: parties }, (_, p) => (p === 0 ? undefined : net.listenWebSocket())),
    );
    const peers = listeners.map((l) => l?.url);
    const sessionId = roomId();
    const transports = await Promise.all(
      listeners.map((listener, party) =>
        net.connectWebSocketMesh({ ...options, party, parties, session: sessionId, peers, ...(listener ? { listener } : {}) }),
      ),
    );
    return { transports, close: async () => void (await Promise.all(transports.map((t) => t.close()))) };
  }
  const server = await net.startSignalingServer({ port: 0, relay: kind === 'relay' });
  const room = roomId();
  try {
    const transports = await Promise.all(
      Array.from({ length: parties }, (_, party) =>
        kind === 'relay'
          ? net.connectNodeRelay({ ...options, url: `${server.url}/relay`, room, party, parties })
          : net.connectNodeMesh({ ...options, signalingUrl: server.url, room, party, parties, connectTimeoutMs: 30_000 }),
      ),
    );
    return {
      transports,
      close: async () => {
        await Promise.all(transports.map((t) => t.close()));
        await server.close();
      },
    };
  } catch (error) {
    await server.close();
    throw error;
  }
}

export function randomMessage(n: number): Uint8Array {
  const out = new Uint8Array(n);
  // randomFillSync caps each call at 2^31-1 bytes; messages here are far smaller.
  if (n > 0) randomFillSync(out);
  return out;
}

export function sha256(b: Uint8Array): string {
  return createHash('sha256').update(b).digest('hex');
}

/** The rejection of `p` (fails the test if it resolves), with how long it took. */
export async function rejection(p: Promise<unknown>): Promise<{ error: { code?: string; peer?: number }; ms: number }> {
  const t0 = performance.now();
  try {
    await p;
  } catch (error) {
    return { error: error as { code?: string; peer?: number }, ms: performance.now() - t0 };
  }
  throw new Error('expected a rejection, got a resolution');
}
