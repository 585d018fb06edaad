/**
 * A full mesh of direct WebSocket connections between Node parties. Node only.
 *
 * Each pair has one connection: the lower party index dials the higher, which listens (so party
 * `n-1` dials nobody and party 0 needs no listener). The dialer opens with a hello naming the
 * session, both indices and the party count; the listener answers `welcome` once a mesh claims
 * the connection. This is plumbing, not authentication: `ts/secure` authenticates the peers.
 */
import type { AddressInfo } from 'node:net';
import { loadWs, loadWsBulkClient } from './optional.js';
import type { TransportError } from '../errors.js';
import { checkPartyCount, transportError } from './base.js';
import { FramedTransport, type FrameLink, type FramedOptions } from './framed.js';
import type { Transport } from './transport.js';
import {
  binaryData,
  closeWebSocket,
  openWebSocket,
  WS_OPEN,
  type WebSocketLike,
} from './websocket-like.js';

/** Session ids: like room ids, URL- and log-safe. */
const SESSION_ID = /^[A-Za-z0-9_.-]{1,128}$/;
const HELLO_MAX_BYTES = 1024;
/** Largest frame accepted from a peer's socket (the data-channel ceiling, as elsewhere). */
const MAX_FRAME_BYTES = 256 * 1024;

interface Hello {
  type: 'hello';
  session: string;
  from: number;
  to: number;
  parties: number;
}

function parseHello(data: unknown): Hello | undefined {
  if (typeof data !== 'string' || data.length > HELLO_MAX_BYTES) return undefined;
  try {
    const v = JSON.parse(data) as Record<string, unknown>;
    if (typeof v !== 'object' || v === null || v.type !== 'hello' || typeof v.session !== 'string') return undefined;
    if (![v.from, v.to, v.parties].every((x) => Number.isSafeInteger(x))) return undefined;
    return { type: 'hello', session: v.session, from: v.from as number, to: v.to as number, parties: v.parties as number };
  } catch {
    return undefined;
  }
}

interface Pending {
  socket: WebSocketLike;
  hello: Hello;
}

/** A listening socket that parties with lower indices dial. */
export interface WebSocketListener {
  readonly port: number;
  /** `ws://host:port`, for the dialers' `peers` list. */
  readonly url: string;
  /** Stops listening and drops connections no mesh claimed. Idempotent. */
  close(): Promise<void>;
}

interface ListenerInternals extends WebSocketListener {
  /** Waits for the dialer `from` of `session` (hello already checked against `to`/`parties`). */
  claim(session: string, from: number, to: number, parties: number, timeoutMs: number, signal: AbortSignal): Promise<WebSocketLike>;
}

/**
 * @internal A `ws` server listening on `host:port` (0: any free port), frames capped at the framed
 * transports' ceiling; errors after it listens are per connection and never crash the process.
 */
export async function startWebSocketServer(feature: string, host: string, port: number): Promise<import('ws').WebSocketServer> {
  const { WebSocketServer } = await loadWs(feature);
  const wss = new WebSocketServer({ port, host, maxPayload: MAX_FRAME_BYTES });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  wss.on('error', () => {});
  return wss;
}

/** Starts listening for dialers. Pass the listener to {@link connectWebSocketMesh}. */
export async function listenWebSocket(options: { port?: number; host?: string } = {}): Promise<WebSocketListener> {
  const host = options.host ?? '127.0.0.1';
  const wss = await startWebSocketServer('listenWebSocket', host, options.port ?? 0);
  const pending: Pending[] = [];
  /** Sockets handed to a mesh: theirs to close. */
  const claimed = new WeakSet<WebSocketLike>();
  const waiters = new Set<() => void>();
  wss.on('connection', (ws) => {
    const socket = ws as unknown as WebSocketLike;
    socket.binaryType = 'arraybuffer';
    ws.on('error', () => {});
    // A dialer that never says hello is dropped.
    const timer = setTimeout(() => ws.terminate(), 30_000);
    ws.once('close', () => clearTimeout(timer));
    socket.onmessage = (event) => {
      clearTimeout(timer);
      const hello = parseHello(event.data);
      if (!hello) {
        ws.close(1008, 'bad hello');
        return;
      }
      socket.onmessage = null;
      pending.push({ socket, hello });
      ws.once('close', () => {
        const i = pending.findIndex((p) => p.socket === socket);
        if (i >= 0) pending.splice(i, 1);
      });
      for (const wake of [...waiters]) wake();
    };
  });
  const { port } = wss.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const listener: ListenerInternals = {
    port,
    url: `ws://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const p of pending.splice(0)) p.socket.close();
        // Dialers that have not said hello yet belong to nobody: cut them off.
        for (const client of wss.clients) if (!claimed.has(client as unknown as WebSocketLike)) client.terminate();
        wss.close(() => resolve());
        // Claimed sockets belong to their mesh, which closes them; do not wait on them here.
        setTimeout(() => {
          for (const client of wss.clients) client.terminate();
        }, 5_000).unref();
      });
      return closing;
    },
    claim: (session, from, to, parties, timeoutMs, signal) =>
      new Promise<WebSocketLike>((resolve, reject) => {
        const check = () => {
          const i = pending.findIndex((p) => p.hello.session === session && p.hello.from === from);
          if (i < 0) return;
          const { socket, hello } = pending.splice(i, 1)[0]!;
          if (hello.to !== to || hello.parties !== parties) {
            socket.close(1008, 'session mismatch');
            done(transportError('PROTOCOL_ERROR', `party ${from} disagrees on the session's parties`, from));
            return;
          }
          socket.send(JSON.stringify({ type: 'welcome' }));
          claimed.add(socket);
          done(undefined, socket);
        };
        const done = (error?: TransportError, socket?: WebSocketLike) => {
          clearTimeout(timer);
          waiters.delete(check);
          signal.removeEventListener('abort', onAbort);
          if (error) reject(error);
          else resolve(socket!);
        };
        const onAbort = () => done(transportError('ABORTED', 'connect abandoned', from));
        const timer = setTimeout(() => done(transportError('TIMEOUT', `party ${from} did not connect within ${timeoutMs} ms`, from)), timeoutMs);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        waiters.add(check);
        check();
      }),
  };
  return listener;
}

/**
 * Makes `socket` the link to `peer` of `transport`: its binary messages are frames (`early`: any
 * that arrived before), its close is the link's. Shared by the mesh and the client sockets.
 */
export function adoptWebSocket(transport: FramedTransport, peer: number, socket: WebSocketLike, early: readonly unknown[] = []): void {
  const receive = (data: unknown) => {
    const bytes = binaryData(data);
    // Text after the handshake is not a frame: an empty frame is a protocol error.
    transport.receiveFrame(peer, bytes ?? new Uint8Array(0));
  };
  socket.onmessage = (event) => receive(event.data);
  socket.onclose = () => transport.linkClosed(peer);
  socket.onerror = () => {};
  const link: FrameLink = {
    // A frame for a socket already closing goes nowhere (the close reaches the transport as
    // linkClosed); sending it anyway makes a browser log an error.
    send: (frame) => {
      if (socket.readyState === WS_OPEN) socket.send(frame);
    },
    get bufferedAmount() {
      return socket.bufferedAmount;
    },
    close: (graceful, timeoutMs) => closeWebSocket(socket, graceful, timeoutMs),
  };
  transport.attach(peer, link);
  for (const data of early) receive(data);
}

export interface WebSocketMeshOptions extends FramedOptions {
  party: number;
  parties: number;
  /** A session id all parties share (letters, digits, `_.-`), so stray dialers are refused. */
  session: string;
  /** `peers[q]`: the URL of party q's listener, for every q above this party. */
  peers: readonly (string | undefined)[];
  /** This party's listener; required unless it is party 0. Closed with the transport. */
  listener?: WebSocketListener;
  /** Deadline (ms) for every connection to be up. Default 30000. */
  connectTimeoutMs?: number;
  /** Cancels connecting (rejects with `ABORTED`, having released everything). */
  signal?: AbortSignal;
}

/** Connects to every other party; resolves once all `parties - 1` connections are up. */
export async function connectWebSocketMesh(options: WebSocketMeshOptions): Promise<Transport> {
  const { party, parties, session } = options;
  checkPartyCount(party, parties);
  if (!SESSION_ID.test(session)) throw transportError('INVALID_ARGUMENT', 'session must be 1-128 characters of [A-Za-z0-9_.-]');
  if (party > 0 && !options.listener) throw transportError('INVALID_ARGUMENT', 'a listener is required for parties above 0');
  for (let q = party + 1; q < parties; q++) {
    if (typeof options.peers[q] !== 'string') throw transportError('INVALID_ARGUMENT', `peers[${q}] must be a URL`);
  }
  const listener = options.listener as ListenerInternals | undefined;
  const WsWebSocket = await loadWsBulkClient('connectWebSocketMesh');
  const connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  const deadline = Date.now() + connectTimeoutMs;
  const transport = new FramedTransport(party, parties, options);
  const sockets: WebSocketLike[] = [];
  if (listener) transport.addReleaseHook(() => listener.close());
  // When one connection fails, the others stop trying at once (no retry loop or timer lingers).
  const stop = new AbortController();
  const onCancel = () => stop.abort();
  if (options.signal?.aborted) onCancel();
  else options.signal?.addEventListener('abort', onCancel, { once: true });

  const adopt = (peer: number, socket: WebSocketLike, early: readonly unknown[] = []) => {
    sockets.push(socket);
    adoptWebSocket(transport, peer, socket, early);
  };

  const dial = async (peer: number): Promise<void> => {
    const url = options.peers[peer]!;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw transportError('TIMEOUT', `could not reach party ${peer} within ${connectTimeoutMs} ms`, peer);
      if (stop.signal.aborted) throw transportError('ABORTED', 'connect abandoned', peer);
      let socket: WebSocketLike;
      try {
        socket = await openWebSocket(WsWebSocket, url, remaining, 'PEER_DISCONNECTED', stop.signal);
      } catch (error) {
        const code = (error as TransportError).code;
        if (code === 'TIMEOUT' || code === 'ABORTED') throw error;
        // The peer may not listen yet: retry until the deadline.
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (stop.signal.aborted) {
        socket.close();
        throw transportError('ABORTED', 'connect abandoned', peer);
      }
      socket.send(JSON.stringify({ type: 'hello', session, from: party, to: peer, parties }));
      // Frames the peer sends right after its welcome may arrive before we adopt the socket.
      const early: unknown[] = [];
      let welcomed = false;
      await new Promise<void>((resolve, reject) => {
        let done = false;
        const finish = (error?: TransportError) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          stop.signal.removeEventListener('abort', onAbort);
          if (error) {
            socket.onmessage = socket.onclose = null;
            socket.close();
            reject(error);
          } else {
            resolve();
          }
        };
        const onAbort = () => finish(transportError('ABORTED', 'connect abandoned', peer));
        const timer = setTimeout(
          () => finish(transportError('TIMEOUT', `party ${peer} did not welcome us within ${connectTimeoutMs} ms`, peer)),
          Math.max(1, deadline - Date.now()),
        );
        stop.signal.addEventListener('abort', onAbort, { once: true });
        socket.onmessage = (event) => {
          if (welcomed) early.push(event.data);
          else if (event.data === JSON.stringify({ type: 'welcome' })) {
            welcomed = true;
            finish();
          } else finish(transportError('PROTOCOL_ERROR', `party ${peer} answered the hello wrongly`, peer));
        };
        socket.onclose = () => finish(transportError('PEER_DISCONNECTED', `party ${peer} refused the connection`, peer));
      });
      adopt(peer, socket, early);
      return;
    }
  };

  const accept = async (peer: number): Promise<void> => {
    const socket = await listener!.claim(session, peer, party, parties, Math.max(1, deadline - Date.now()), stop.signal);
    if (socket.readyState !== WS_OPEN) throw transportError('PEER_DISCONNECTED', `party ${peer} went away while connecting`, peer);
    adopt(peer, socket);
  };

  const connecting: Promise<void>[] = [];
  for (let q = 0; q < parties; q++) {
    if (q < party) connecting.push(accept(q));
    else if (q > party) connecting.push(dial(q));
  }
  try {
    await Promise.all(connecting);
    return transport;
  } catch (failure) {
    // Stop the rest now; their rejections are handled here.
    const cancelled = options.signal?.aborted === true;
    stop.abort();
    for (const c of connecting) c.catch(() => {});
    await Promise.allSettled(connecting);
    const error = cancelled ? transportError('ABORTED', 'connect aborted', undefined, options.signal?.reason) : (failure as TransportError);
    await transport.close(error);
    for (const socket of sockets) void closeWebSocket(socket, false, 0);
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', onCancel);
  }
}
