/**
 * How `party` reaches the other parties: WebRTC through a signaling server (`--signal`), or
 * direct WebSockets (`--transport websocket`: each party dials the ones above it and listens for
 * the ones below). Checked before anything connects.
 */
import type { Transport } from '../net/transport.js';
import { integerOption, perParty } from './args.js';
import { UsageError } from './errors.js';

export const NETWORK_OPTIONS = {
  transport: { type: 'string', default: 'webrtc' },
  signal: { type: 'string' },
  room: { type: 'string' },
  listen: { type: 'string' },
  host: { type: 'string', default: '127.0.0.1' },
  peer: { type: 'string', multiple: true },
  timeout: { type: 'string', default: '30000' },
  'peer-timeout': { type: 'string', default: '3000' },
} as const;

/** Where this party connects, checked. */
export type Route = { readonly room: string; readonly timeoutMs: number; readonly peerTimeoutMs: number } & (
  | { readonly kind: 'webrtc'; readonly signal: string }
  | { readonly kind: 'websocket'; readonly host: string; readonly listen: number | undefined; readonly peers: (string | undefined)[] }
);

export function routeOf(
  values: {
    transport: string;
    signal?: string | undefined;
    room?: string | undefined;
    listen?: string | undefined;
    host: string;
    peer?: string[] | undefined;
    timeout: string;
    'peer-timeout': string;
  },
  parties: number,
  party: number,
): Route {
  const timeoutMs = Number(values.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout must be a positive number of milliseconds');
  const peerTimeoutMs = Number(values['peer-timeout']);
  if (!Number.isInteger(peerTimeoutMs) || peerTimeoutMs < 500) throw new UsageError('--peer-timeout must be a number of milliseconds >= 500');
  if (values.room === undefined) throw new UsageError('--room ID is required (both parties name the same room)');
  const common = { room: values.room, timeoutMs, peerTimeoutMs };
  const peers = perParty(values.peer, '--peer', 'ws://HOST:PORT', parties, party);
  if (values.transport === 'webrtc') {
    if (values.signal === undefined) throw new UsageError('--signal ws://HOST:PORT is required with --transport webrtc');
    return { ...common, kind: 'webrtc', signal: values.signal };
  }
  if (values.transport !== 'websocket') throw new UsageError('--transport must be webrtc or websocket');
  if (party > 0 && values.listen === undefined) throw new UsageError(`party ${party} listens: --listen PORT is required`);
  const above = [...Array(parties).keys()].filter((q) => q > party && peers[q] === undefined);
  if (above.length > 0) {
    throw new UsageError(
      parties === 2
        ? 'party 0 dials party 1: --peer ws://HOST:PORT is required'
        : `party ${party} dials every party above it: --peer Q=ws://HOST:PORT is required for party ${above.join(', ')}`,
    );
  }
  const below = peers.findIndex((u, q) => u !== undefined && q < party);
  if (below >= 0) throw new UsageError(`party ${below} dials this party (it is below it): no --peer for it`);
  let listen: number | undefined;
  try {
    listen = integerOption(values.listen, '--listen', 0, 65_535);
  } catch {
    throw new UsageError('--listen must be a port in [0, 65535]');
  }
  return { ...common, kind: 'websocket', host: values.host, listen, peers };
}

/** Connects to every other party along `route` (the raw transport, before authentication). */
export async function connect(
  route: Route,
  party: number,
  parties: number,
  signal: AbortSignal,
  say: (line: string) => void,
): Promise<Transport> {
  const net = await import('../net/node.js');
  const common = { connectTimeoutMs: route.timeoutMs, peerTimeoutMs: route.peerTimeoutMs, signal };
  if (route.kind === 'webrtc') {
    return net.connectNodeMesh({ ...common, signalingUrl: route.signal, room: route.room, party, parties });
  }
  const listener = party > 0 ? await net.listenWebSocket({ port: route.listen!, host: route.host }) : undefined;
  if (listener) say(`listening on ${listener.url}`);
  return net.connectWebSocketMesh({
    ...common,
    party,
    parties,
    session: route.room,
    peers: route.peers,
    ...(listener ? { listener } : {}),
  });
}
