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
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
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
  /** Relay: pause a sender while its destination has more than this many bytes queued. */
  relayHighWaterBytes?: number;
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
}

type Kind = 'signal' | 'relay';

/** Starts the server; resolves once it listens. */
export async function startSignalingServer(options: SignalingServerOptions = {}): Promise<SignalingServer> {
  const host = options.host ?? '127.0.0.1';
  const iceServers = options.iceServers ?? [];
  const maxRooms = options.maxRooms ?? 1000;
  const relayHighWater = options.relayHighWaterBytes ?? 4 * 1024 * 1024;
  const rooms: Record<Kind, Map<string, Room>> = { signal: new Map(), relay: new Map() };
  const roomCount = () => rooms.signal.size + rooms.relay.size;

  const http = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('webmpc signaling: WebSocket only\n');
  });
  // Messages above the limit are refused by us (with a typed error), not by ws, so the ws cap is
  // only a backstop against huge allocations.
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
    wss.handleUpgrade(req, socket, head, (ws) => handle(ws, wss === relayWss ? 'relay' : 'signal'));
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

  function handle(socket: WebSocket, kind: Kind): void {
    let member: Member | undefined;
    let room: Room | undefined;
    let roomId = '';
    socket.on('error', () => {
      // Broken sockets end in 'close'; the error itself needs no action (and must be handled).
    });
    socket.on('close', () => {
      if (!member || !room) return;
      if (room.members.get(member.party) === member) room.members.delete(member.party);
      for (const other of room.members.values()) send(other.socket, { type: 'peer-left', party: member.party });
      if (room.members.size === 0) rooms[kind].delete(roomId);
      member = undefined;
    });
    socket.on('message', (raw: RawData, isBinary: boolean) => {
      if (member && room && kind === 'relay' && isBinary) {
        forward(member, room, toBuffer(raw));
        return;
      }
      if (isBinary) return refuse(socket, 'malformed-message');
      const buffer = toBuffer(raw);
      if (buffer.byteLength > MAX_SIGNALING_MESSAGE_BYTES) return refuse(socket, 'message-too-large');
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
          target = { parties: message.parties, members: new Map() };
          rooms[kind].set(message.room, target);
        }
        room = target;
        roomId = message.room;
        member = { socket, party: message.party };
        send(socket, { type: 'joined', present: [...room.members.keys()], iceServers });
        for (const other of room.members.values()) send(other.socket, { type: 'peer-joined', party: message.party });
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
      if (destination) send(destination.socket, { type: 'signal', from: member.party, data: message.data });
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
    if (destination.socket.bufferedAmount > relayHighWater && !source.socket.isPaused) {
      // Backpressure across the relay: stop reading from the sender until the receiver drains,
      // so a fast sender and a slow receiver cannot make the relay buffer without bound.
      source.socket.pause();
      const timer = setInterval(() => {
        const gone = destination.socket.readyState !== destination.socket.OPEN;
        if (gone || destination.socket.bufferedAmount <= relayHighWater / 4) {
          clearInterval(timer);
          if (source.socket.readyState === source.socket.OPEN) source.socket.resume();
        }
      }, 2);
      source.socket.once('close', () => clearInterval(timer));
    }
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
