/**
 * The signaling server (and optional frame relay). Node only.
 *
 * Signaling (`ws://host:port/`): parties join a room by id, size and party index; the server
 * relays SDP descriptions and ICE candidates between members of the same room, and nothing else.
 * It never sees protocol data, which flows over the peer-to-peer data channels.
 *
 * Relay (`ws://host:port/relay`, only with `relay: true`): for networks where no peer-to-peer
 * path exists, the server forwards binary frames between members of a room. It then carries the
 * protocol's bytes, so run `ts/secure` over it (the relay sees ciphertext only).
 *
 * Every client message is validated (size, JSON shape, room id, party range, room size, duplicate
 * party); a bad one earns the client a `{type:'error', reason}` and a closed socket, never a
 * server crash.
 *
 * ## Exhaustion
 * The server is meant to face the internet, so no client may use up what others need:
 * - per remote address, at most `maxConnectionsPerAddress` open connections and
 *   `maxRoomsPerAddress` rooms it created that are still open (so one host cannot take all
 *   `maxRooms`); overall at most `maxConnections` connections;
 * - a connection must join within `joinTimeoutMs`, and one that exchanges nothing for
 *   `idleTimeoutMs` is closed (relay members' keepalives count as traffic); a ping every
 *   `pingIntervalMs` finds dead TCP connections;
 * - signaling is small (one description and a few candidates per peer): a connection may send at
 *   most `maxSignalBytesPerConnection` of it;
 * - forwarding has backpressure: while a destination has more than the high-water mark queued,
 *   the server stops reading from the sender (TCP then pushes back on it), for signals and relay
 *   frames alike, so a fast sender and a slow receiver cannot make the server buffer without bound.
 * Refusals are typed (`too-many-connections`, `too-many-rooms-for-address`, `rate-limited`,
 * `join-timeout`, `idle-timeout`); a client sees them as `SIGNALING_FAILED` naming the reason.
 * Addresses are the TCP peer's: behind a reverse proxy every client shares the proxy's, so raise
 * the per-address limits there (or enforce them in the proxy).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { loadWs } from './optional.js';
import {
  MAX_PARTIES,
  MAX_SIGNALING_MESSAGE_BYTES,
  ROOM_ID,
  parseClientMessage,
  type IceServerConfig,
  type ServerMessage,
  type SignalingRefusal,
} from './signaling-protocol.js';
import { RELAY_HEADER_BYTES, RELAY_MAX_FRAME_BYTES } from './relay-protocol.js';

export interface SignalingServerOptions {
  /** TCP port; 0 picks a free one. Default 0. */
  port?: number;
  /** Interface to bind. Default `127.0.0.1`; use `0.0.0.0` to serve other machines. */
  host?: string;
  /** STUN/TURN servers handed to every party that joins (none by default: fine on a LAN). */
  iceServers?: IceServerConfig[];
  /** Also serve the frame relay at `/relay`. Default false. */
  relay?: boolean;
  /** Most rooms open at once, across signaling and relay. Default 1000. */
  maxRooms?: number;
  /** Relay: pause a sender while its destination has more than this many bytes queued. Default 4 MiB. */
  relayHighWaterBytes?: number;
  /** Most connections open at once. Default 4096. */
  maxConnections?: number;
  /** Most connections open at once from one remote address. Default 32. */
  maxConnectionsPerAddress?: number;
  /** Most open rooms created by one remote address. Default 8. */
  maxRoomsPerAddress?: number;
  /** A connection must join a room within this many ms. Default 10000. */
  joinTimeoutMs?: number;
  /** A connection with no message to or from it for this many ms is closed. Default 600000. */
  idleTimeoutMs?: number;
  /** Interval (ms) of WebSocket pings; a connection that missed the last pong is dropped. Default 30000. */
  pingIntervalMs?: number;
  /** Most signaling bytes (JSON) one connection may send over its life. Default 2 MiB. */
  maxSignalBytesPerConnection?: number;
}

export interface SignalingServer {
  readonly port: number;
  /** `ws://host:port`; the relay, when enabled, is at `${url}/relay`. */
  readonly url: string;
  /** Disconnects every client and stops listening. Idempotent. */
  close(): Promise<void>;
}

interface Member {
  socket: WebSocket;
  party: number;
}

interface Room {
  parties: number;
  members: Map<number, Member>;
  /** The address that created the room (charged against its room limit while it is open). */
  creator: string;
}

type Kind = 'signal' | 'relay';

/** Pause a signaling sender while its destination has more than this queued. */
const SIGNAL_HIGH_WATER_BYTES = 256 * 1024;

function limit(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) {
    throw new RangeError(`startSignalingServer: ${name} must be a positive finite number`);
  }
  return value;
}

/** Starts the server; resolves once it listens. */
export async function startSignalingServer(options: SignalingServerOptions = {}): Promise<SignalingServer> {
  const host = options.host ?? '127.0.0.1';
  const iceServers = options.iceServers ?? [];
  const maxRooms = limit(options.maxRooms, 1000, 'maxRooms');
  const relayHighWater = limit(options.relayHighWaterBytes, 4 * 1024 * 1024, 'relayHighWaterBytes');
  const maxConnections = limit(options.maxConnections, 4096, 'maxConnections');
  const maxConnectionsPerAddress = limit(options.maxConnectionsPerAddress, 32, 'maxConnectionsPerAddress');
  const maxRoomsPerAddress = limit(options.maxRoomsPerAddress, 8, 'maxRoomsPerAddress');
  const joinTimeoutMs = limit(options.joinTimeoutMs, 10_000, 'joinTimeoutMs');
  const idleTimeoutMs = limit(options.idleTimeoutMs, 600_000, 'idleTimeoutMs');
  const pingIntervalMs = limit(options.pingIntervalMs, 30_000, 'pingIntervalMs');
  const maxSignalBytes = limit(options.maxSignalBytesPerConnection, 2 * 1024 * 1024, 'maxSignalBytesPerConnection');
  const rooms: Record<Kind, Map<string, Room>> = { signal: new Map(), relay: new Map() };
  const roomCount = () => rooms.signal.size + rooms.relay.size;
  const connectionsByAddress = new Map<string, number>();
  const roomsByAddress = new Map<string, number>();
  let connections = 0;
  const bump = (map: Map<string, number>, key: string, delta: number) => {
    const next = (map.get(key) ?? 0) + delta;
    if (next > 0) map.set(key, next);
    else map.delete(key);
  };

  const http = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('webmpc signaling: WebSocket only\n');
  });
  // Messages above the limit are refused by us (with a typed error), not by ws, so the ws cap is
  // only a backstop against huge allocations.
  const { WebSocketServer } = await loadWs('the signaling server');
  const signalWss = new WebSocketServer({ noServer: true, maxPayload: 4 * MAX_SIGNALING_MESSAGE_BYTES });
  const relayWss = new WebSocketServer({ noServer: true, maxPayload: RELAY_MAX_FRAME_BYTES + RELAY_HEADER_BYTES });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const wss = path === '/relay' ? (options.relay ? relayWss : undefined) : path === '/' ? signalWss : undefined;
    if (!wss) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    wss.handleUpgrade(req, socket, head, (ws) => handle(ws, wss === relayWss ? 'relay' : 'signal', address));
  });

  function send(socket: WebSocket, message: ServerMessage): void {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  }

  function refuse(socket: WebSocket, reason: SignalingRefusal): void {
    send(socket, { type: 'error', reason });
    // 1008: policy violation. close() lets the error message go out first.
    socket.close(1008, reason);
    // A client that never answers the close handshake is cut off.
    setTimeout(() => socket.terminate(), 2_000).unref();
  }

  /**
   * Backpressure: stop reading from `source` until `destination` has drained below a quarter of
   * `high`, or either goes away. TCP then makes the sender wait instead of us buffering.
   */
  function pauseUntilDrained(source: WebSocket, destination: WebSocket, high: number): void {
    if (destination.bufferedAmount <= high || source.isPaused) return;
    source.pause();
    const resume = () => {
      clearInterval(timer);
      source.off('close', resume);
      destination.off('close', resume);
      if (source.readyState === source.OPEN) source.resume();
    };
    const timer = setInterval(() => {
      if (destination.readyState !== destination.OPEN || destination.bufferedAmount <= high / 4) resume();
    }, 2);
    source.once('close', resume);
    destination.once('close', resume);
  }

  /** Marks a connection as active (something was sent to it), by socket. */
  const activity = new WeakMap<WebSocket, () => void>();

  function handle(socket: WebSocket, kind: Kind, address: string): void {
    let member: Member | undefined;
    let room: Room | undefined;
    let roomId = '';
    let signalBytes = 0;
    let lastActive = Date.now();
    let alive = true;
    let joinTimer: ReturnType<typeof setTimeout> | undefined;
    let check: ReturnType<typeof setInterval> | undefined;
    socket.on('error', () => {
      // Broken sockets end in 'close'; the error itself needs no action (and must be handled).
    });
    connections += 1;
    bump(connectionsByAddress, address, 1);
    activity.set(socket, () => {
      lastActive = Date.now();
    });
    socket.on('close', () => {
      connections -= 1;
      bump(connectionsByAddress, address, -1);
      clearTimeout(joinTimer);
      clearInterval(check);
      activity.delete(socket);
      if (!member || !room) return;
      if (room.members.get(member.party) === member) room.members.delete(member.party);
      for (const other of room.members.values()) send(other.socket, { type: 'peer-left', party: member.party });
      if (room.members.size === 0) {
        rooms[kind].delete(roomId);
        bump(roomsByAddress, room.creator, -1);
      }
      member = undefined;
    });
    if (connections > maxConnections || (connectionsByAddress.get(address) ?? 0) > maxConnectionsPerAddress) {
      refuse(socket, 'too-many-connections');
      return;
    }
    joinTimer = setTimeout(() => {
      if (!member) refuse(socket, 'join-timeout');
    }, joinTimeoutMs);
    // Idle and liveness checks share one timer per connection.
    check = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      if (Date.now() - lastActive > idleTimeoutMs) return refuse(socket, 'idle-timeout');
      if (!alive) return socket.terminate();
      alive = false;
      socket.ping();
    }, Math.min(pingIntervalMs, idleTimeoutMs / 2));
    socket.on('pong', () => {
      alive = true;
    });
    const touch = (m: Member) => activity.get(m.socket)?.();

    socket.on('message', (raw: RawData, isBinary: boolean) => {
      lastActive = Date.now();
      if (member && room && kind === 'relay' && isBinary) {
        forward(member, room, toBuffer(raw));
        return;
      }
      if (isBinary) return refuse(socket, 'malformed-message');
      const buffer = toBuffer(raw);
      if (buffer.byteLength > MAX_SIGNALING_MESSAGE_BYTES) return refuse(socket, 'message-too-large');
      signalBytes += buffer.byteLength;
      if (signalBytes > maxSignalBytes) return refuse(socket, 'rate-limited');
      const message = parseClientMessage(buffer.toString('utf8'));
      if (!message) return refuse(socket, 'malformed-message');
      if (message.type === 'join') {
        if (member) return refuse(socket, 'already-joined');
        if (!ROOM_ID.test(message.room)) return refuse(socket, 'bad-room');
        if (message.parties < 2 || message.parties > MAX_PARTIES) return refuse(socket, 'bad-party');
        if (message.party < 0 || message.party >= message.parties) return refuse(socket, 'bad-party');
        let target = rooms[kind].get(message.room);
        if (target && target.parties !== message.parties) return refuse(socket, 'room-size-mismatch');
        if (target?.members.has(message.party)) return refuse(socket, 'duplicate-party');
        if (!target) {
          if (roomCount() >= maxRooms) return refuse(socket, 'too-many-rooms');
          if ((roomsByAddress.get(address) ?? 0) >= maxRoomsPerAddress) return refuse(socket, 'too-many-rooms-for-address');
          target = { parties: message.parties, members: new Map(), creator: address };
          rooms[kind].set(message.room, target);
          bump(roomsByAddress, address, 1);
        }
        room = target;
        roomId = message.room;
        member = { socket, party: message.party };
        send(socket, { type: 'joined', present: [...room.members.keys()], iceServers });
        for (const other of room.members.values()) {
          send(other.socket, { type: 'peer-joined', party: message.party });
          touch(other);
        }
        room.members.set(message.party, member);
        return;
      }
      // A signal.
      if (!member || !room) return refuse(socket, 'not-joined');
      if (kind !== 'signal') return refuse(socket, 'malformed-message');
      if (message.to < 0 || message.to >= room.parties || message.to === member.party) {
        return refuse(socket, 'bad-destination');
      }
      const destination = room.members.get(message.to);
      // A peer that left (or has not joined yet) misses the signal; its own peers notice through
      // peer-left / their connect deadline.
      if (destination) {
        send(destination.socket, { type: 'signal', from: member.party, data: message.data });
        touch(destination);
        pauseUntilDrained(socket, destination.socket, SIGNAL_HIGH_WATER_BYTES);
      }
    });
  }

  /** Relays one frame `[u16 to][frame]` from `source` as `[u16 from][frame]`. */
  function forward(source: Member, room: Room, frame: Buffer): void {
    if (frame.byteLength <= RELAY_HEADER_BYTES) return refuse(source.socket, 'malformed-message');
    const to = frame.readUInt16BE(0);
    if (to >= room.parties || to === source.party) return refuse(source.socket, 'bad-destination');
    const destination = room.members.get(to);
    if (!destination) return; // Gone: the sender learns from peer-left.
    // Rewriting the header in place is safe: ws hands us a buffer of our own.
    frame.writeUInt16BE(source.party, 0);
    destination.socket.send(frame, { binary: true });
    activity.get(destination.socket)?.();
    pauseUntilDrained(source.socket, destination.socket, relayHighWater);
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  http.on('error', () => {
    // After listening, errors concern single connections; they must not crash the process.
  });
  const { port } = http.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  let closing: Promise<void> | undefined;
  return {
    port,
    url: `ws://${urlHost}:${port}`,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const wss of [signalWss, relayWss]) {
          for (const client of wss.clients) client.terminate();
          wss.close();
        }
        http.closeAllConnections();
        http.close(() => resolve());
      });
      return closing;
    },
  };
}

function toBuffer(raw: RawData): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw);
  return Buffer.from(raw);
}
