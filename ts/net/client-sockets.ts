/**
 * WebSocket links between compute parties and their clients (client–server MPC, `serve` and
 * `submit`): the server listens (Node), clients dial (browsers with their `WebSocket`, Node with
 * `ws`). Each connection is a two-party framed transport, the server party 0 and the client
 * party 1. This is plumbing, not authentication: `serve` and `submit` run the authenticated,
 * encrypted handshake over it (the server's key pinned by the client).
 */
import type { AddressInfo } from 'node:net';
import type { ClientListener } from '../clients.js';
import { isNode } from '../engine/wasm.js';
import { transportError } from './base.js';
import { FramedTransport, type FramedOptions } from './framed.js';
import { loadWsBulkClient } from './optional.js';
import type { Transport } from './transport.js';
import { adoptWebSocket, startWebSocketServer } from './websocket-mesh.js';
import { defaultWebSocket, openWebSocket, type WebSocketConstructor, type WebSocketLike } from './websocket-like.js';

/** A compute party's socket for clients. */
export interface ClientSocketListener extends ClientListener {
  readonly port: number;
  /** After `close`: resolves once every client connection has ended. */
  closed(): Promise<void>;
  /** `ws://host:port`, what clients dial. */
  readonly url: string;
}

/**
 * Liveness of a client's link, at both ends, unless the caller sets its own: a client mostly
 * waits (for the window to close, for minutes of computing), often from a page the browser
 * throttles, or one of thousands in a process; the transports' 3 s default for party links
 * dropped most of the 1,000 bench bidders while the servers preprocessed (2026-11-27). Whether
 * a client's input comes in time is `serve`'s own `inputTimeoutMs`, not this.
 */
export const CLIENT_LINK_LIVENESS = { keepaliveMs: 5_000, peerTimeoutMs: 60_000 } as const;

/** Listens for clients (Node, `ws`). Pass it to `serve({ clients })`. */
export async function listenForClients(options: { port?: number; host?: string; maxConnections?: number } & FramedOptions = {}): Promise<ClientSocketListener> {
  const host = options.host ?? '127.0.0.1';
  const maxConnections = options.maxConnections ?? 100_000;
  const wss = await startWebSocketServer('listenForClients', host, options.port ?? 0);
  let accept: ((t: Transport) => void) | undefined;
  let closed = false;
  // Clients that connect before `serve` listens wait here (their frames are buffered by the
  // transport, so nothing is lost).
  const backlog: Transport[] = [];
  wss.on('connection', (ws) => {
    ws.on('error', () => {});
    if (closed || wss.clients.size > maxConnections) {
      ws.close(1013, closed ? 'input window closed' : 'too many clients');
      return;
    }
    const socket = ws as unknown as WebSocketLike;
    socket.binaryType = 'arraybuffer';
    const transport = new FramedTransport(0, 2, { ...CLIENT_LINK_LIVENESS, ...options });
    adoptWebSocket(transport, 1, socket);
    if (accept) accept(transport);
    else backlog.push(transport);
  });
  const { port } = wss.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    port,
    url: `ws://${host.includes(':') ? `[${host}]` : host}:${port}`,
    listen(f) {
      accept = f;
      for (const t of backlog.splice(0)) f(t);
    },
    close() {
      closed = true;
      for (const t of backlog.splice(0)) void t.close();
      // Connections already handed over belong to their transports: only stop listening (the
      // server's close resolves once they have all ended, which serve does not wait for).
      closing ??= new Promise<void>((resolve) => wss.close(() => resolve()));
      return Promise.resolve();
    },
    /** Resolves once every connection has ended and the socket is closed. */
    closed: () => closing ?? Promise.resolve(),
  };
}

/**
 * Opens a link to the compute party listening at `url` (a `ws://` or `wss://` URL): in a
 * browser with its `WebSocket`, in Node with `ws` unless `WebSocket` is given.
 */
export async function dialServer(url: string, options: { WebSocket?: WebSocketConstructor; timeoutMs?: number } & FramedOptions = {}): Promise<Transport> {
  if (typeof url !== 'string' || !/^wss?:\/\//.test(url)) throw transportError('INVALID_ARGUMENT', 'url must be a ws:// or wss:// URL');
  const Ctor = options.WebSocket ?? (isNode() ? await loadWsBulkClient('dialServer') : defaultWebSocket(undefined));
  // The server speaks first (the secure handshake's COMMIT), possibly in the open's own turn.
  const early: unknown[] = [];
  const socket = await openWebSocket(Ctor, url, options.timeoutMs ?? 15_000, 'PEER_DISCONNECTED', undefined, early);
  const transport = new FramedTransport(1, 2, { ...CLIENT_LINK_LIVENESS, ...options });
  adoptWebSocket(transport, 0, socket, early);
  return transport;
}
