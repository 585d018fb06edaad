/**
 * The relay transport: every party holds one WebSocket to the relay (see server.ts, `/relay`),
 * which forwards frames between the members of a room. For browsers on networks where WebRTC
 * finds no path. The relay sees every frame, so wrap this transport with `ts/secure`.
 *
 * Browser-safe: no Node imports (Node passes the `ws` client as `WebSocket`).
 */
import type { TransportError } from '../errors.js';
import { checkPartyCount, transportError } from './base.js';
import { FramedTransport, type FrameLink, type FramedOptions } from './framed.js';
import { RELAY_HEADER_BYTES, RELAY_MAX_FRAME_BYTES } from './relay-protocol.js';
import { checkRoomName } from './signaling-client.js';
import { MAX_SIGNALING_MESSAGE_BYTES, parseServerMessage } from './signaling-protocol.js';
import type { Transport } from './transport.js';
import {
  binaryData,
  closeWebSocket,
  defaultWebSocket,
  openWebSocket,
  type WebSocketConstructor,
  type WebSocketLike,
} from './websocket-like.js';

export interface RelayOptions extends FramedOptions {
  /** The relay endpoint, e.g. `ws://host:port/relay`. */
  url: string;
  room: string;
  party: number;
  parties: number;
  /** Default: `globalThis.WebSocket`. */
  WebSocket?: WebSocketConstructor;
  /** Deadline (ms) for every party to be in the room. Default 30000. */
  connectTimeoutMs?: number;
  signal?: AbortSignal;
}

/** Joins `room` on the relay and resolves once all `parties` are present. */
export async function connectRelay(options: RelayOptions): Promise<Transport> {
  const { party, parties } = options;
  checkPartyCount(party, parties);
  checkRoomName(options.room);
  if (options.chunkBytes !== undefined && options.chunkBytes > RELAY_MAX_FRAME_BYTES) {
    throw transportError('INVALID_ARGUMENT', `chunkBytes must be at most ${RELAY_MAX_FRAME_BYTES} over the relay`);
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  let socket: WebSocketLike;
  try {
    socket = await openWebSocket(defaultWebSocket(options.WebSocket), options.url, connectTimeoutMs, 'SIGNALING_FAILED', options.signal);
  } catch (err) {
    const e = err as TransportError;
    if (e.code === 'ABORTED') throw e;
    throw transportError(e.code, `could not connect to the relay ${options.url} (room '${options.room}', party ${party}): ${e.message}`, undefined, e);
  }
  const transport = new FramedTransport(party, parties, options);
  transport.addReleaseHook((graceful) => closeWebSocket(socket, graceful, 5_000));
  const present = new Set<number>();
  let settled = false;
  let settle!: { resolve: () => void; reject: (error: TransportError) => void };
  const ready = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const fail = (error: TransportError) => {
    if (!settled) {
      settled = true;
      settle.reject(error);
    } else {
      transport.abort(error);
    }
  };
  const link = (peer: number): FrameLink => ({
    send: (frame) => {
      const out = new Uint8Array(RELAY_HEADER_BYTES + frame.byteLength);
      out[0] = peer >>> 8;
      out[1] = peer & 0xff;
      out.set(frame, RELAY_HEADER_BYTES);
      socket.send(out);
    },
    get bufferedAmount() {
      return socket.bufferedAmount;
    },
    // The socket is shared and closed once, by the release hook.
    close: async () => {},
  });
  const joinedCheck = () => {
    if (!settled && present.size === parties - 1) {
      settled = true;
      for (let peer = 0; peer < parties; peer++) if (peer !== party) transport.attach(peer, link(peer));
      settle.resolve();
    }
  };
  let joined = false;
  socket.onmessage = (event) => {
    const bytes = binaryData(event.data);
    if (bytes) {
      if (bytes.byteLength <= RELAY_HEADER_BYTES) return fail(transportError('PROTOCOL_ERROR', 'relay forwarded an empty frame'));
      const from = (bytes[0]! << 8) | bytes[1]!;
      if (from >= parties || from === party) {
        return fail(transportError('PROTOCOL_ERROR', 'relay forwarded a frame from an invalid party'));
      }
      transport.receiveFrame(from, bytes.subarray(RELAY_HEADER_BYTES));
      return;
    }
    const text = event.data;
    const message =
      typeof text === 'string' && text.length <= MAX_SIGNALING_MESSAGE_BYTES ? parseServerMessage(text, parties) : undefined;
    if (!message || message.type === 'signal') return fail(transportError('PROTOCOL_ERROR', 'malformed message from the relay'));
    if (message.type === 'error') return fail(transportError('SIGNALING_FAILED', `the relay ${options.url} (room '${options.room}', party ${party}) refused: ${message.reason}`));
    if (message.type === 'joined') {
      if (joined) return fail(transportError('PROTOCOL_ERROR', 'relay answered the join twice'));
      joined = true;
      for (const peer of message.present) if (peer !== party) present.add(peer);
    } else if (message.type === 'peer-joined') {
      present.add(message.party);
    } else if (message.type === 'peer-left') {
      present.delete(message.party);
      if (!settled) fail(transportError('PEER_DISCONNECTED', `party ${message.party} left before the session started`, message.party));
      else transport.linkClosed(message.party);
      return;
    }
    joinedCheck();
  };
  socket.onclose = () => {
    // Peers that said goodbye first are not affected (linkClosed ignores them).
    if (!settled) fail(transportError('PEER_DISCONNECTED', 'relay connection closed'));
    else for (let peer = 0; peer < parties; peer++) if (peer !== party) transport.linkClosed(peer);
  };
  socket.onerror = () => {
    // 'close' follows.
  };
  socket.send(JSON.stringify({ type: 'join', room: options.room, party, parties }));

  const timer = setTimeout(() => {
    const absent = [...Array(parties).keys()].filter((p) => p !== party && !present.has(p));
    const who = `part${absent.length === 1 ? 'y' : 'ies'} ${absent.join(', ')}`;
    fail(transportError('TIMEOUT', `relay room '${options.room}' on ${options.url} not complete within ${connectTimeoutMs} ms: ${who} never joined`));
  }, connectTimeoutMs);
  const onAbort = () => fail(transportError('ABORTED', 'connect aborted', undefined, options.signal?.reason));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await ready;
    return transport;
  } catch (error) {
    await transport.close(error as TransportError);
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

export type { WebSocketLike };
