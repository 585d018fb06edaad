/**
 * The part of the WHATWG `WebSocket` API the transports use, met by the browser's `WebSocket`
 * and by the `ws` package's client alike, so the browser-side code never imports `ws`.
 *
 * Browser-safe: no Node imports.
 */
import { transportError } from './base.js';
import type { TransportErrorCode } from '../errors.js';

export interface WebSocketMessageEvent {
  readonly data: unknown;
}

export interface WebSocketCloseEvent {
  readonly code: number;
}

export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string | ArrayBufferView | ArrayBuffer): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: WebSocketMessageEvent) => void) | null;
  onclose: ((event: WebSocketCloseEvent) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export const WS_OPEN = 1;
export const WS_CLOSED = 3;

/** The platform's WebSocket (browsers, Node >= 22), or a clear error when there is none. */
export function defaultWebSocket(injected: WebSocketConstructor | undefined): WebSocketConstructor {
  const ctor = injected ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!ctor) {
    throw transportError('INVALID_ARGUMENT', 'no WebSocket implementation: pass one (in Node, use the webmpc/net node entry)');
  }
  return ctor;
}

/**
 * Opens a socket; rejects with `code` (`SIGNALING_FAILED`, `PEER_DISCONNECTED`, ...) if it does
 * not open within `timeoutMs`, and with `ABORTED` when `signal` fires. With `early`, messages
 * arriving from the open until the caller sets its own handler are collected there.
 */
export function openWebSocket(
  Ctor: WebSocketConstructor,
  url: string,
  timeoutMs: number,
  code: TransportErrorCode,
  signal?: AbortSignal,
  early?: unknown[],
): Promise<WebSocketLike> {
  return new Promise((resolve, reject) => {
    let socket: WebSocketLike;
    try {
      socket = new Ctor(url);
    } catch (cause) {
      reject(transportError(code, 'could not open a WebSocket', undefined, cause));
      return;
    }
    socket.binaryType = 'arraybuffer';
    const fail = (err: Error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      // (A socket closed while connecting reports an error event: `ws` throws one nobody handles.)
      socket.onopen = socket.onclose = null;
      socket.onerror = () => {};
      try {
        socket.close();
      } catch {
        // Closing a socket that never opened may throw in some implementations.
      }
      reject(err);
    };
    const onAbort = () => fail(transportError('ABORTED', 'connect aborted', undefined, signal?.reason));
    const timer = setTimeout(() => fail(transportError('TIMEOUT', `WebSocket did not open within ${timeoutMs} ms`)), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.onopen = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.onopen = socket.onerror = socket.onclose = null;
      // A peer that speaks first can have its first messages arrive in the same turn as the
      // open, before the caller takes the socket: they wait in `early` for it.
      if (early) socket.onmessage = (event) => early.push(event.data);
      resolve(socket);
    };
    socket.onerror = () => fail(transportError(code, 'WebSocket connection failed'));
    socket.onclose = () => fail(transportError(code, 'WebSocket closed while connecting'));
  });
}

/** Bytes of a binary WebSocket message (ArrayBuffer with binaryType 'arraybuffer'). */
export function binaryData(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

/** Closes a socket gracefully once its queue drained (bounded), then waits for it to close. */
export function closeWebSocket(socket: WebSocketLike, graceful: boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (socket.readyState === WS_CLOSED) return resolve();
    const deadline = Date.now() + (graceful ? timeoutMs : 0);
    const previous = socket.onclose;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(hardStop);
      resolve();
    };
    socket.onclose = (event) => {
      previous?.(event);
      finish();
    };
    const tryClose = () => {
      if (socket.bufferedAmount === 0 || Date.now() >= deadline) {
        clearInterval(poll);
        try {
          socket.close(1000);
        } catch {
          finish();
        }
        return true;
      }
      return false;
    };
    const poll = setInterval(tryClose, 5);
    // The close handshake needs the peer; a dead peer must not keep us waiting.
    const hardStop = setTimeout(() => {
      // `ws` (Node) keeps a 30 s close timer of its own; terminate() cuts it short.
      (socket as { terminate?: () => void }).terminate?.();
      finish();
    }, (graceful ? timeoutMs : 0) + 1_000);
    tryClose();
  });
}
