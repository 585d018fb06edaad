/**
 * The evaluator's connection to an enclave-server: one WebSocket, one **attested session** (the
 * server runs one enclave program per connection: one evidence, one key, any number of jobs).
 *
 * Each WebSocket message is one *link frame*: a peer byte (0 = the garbler's, 1 = the
 * evaluator's; from the server, the destination) and one enclave message. The frames are built
 * and checked by the Rust protocol (`webmpc_teleport::driver`); this module only moves them, with
 * backpressure, deadlines and typed failures, and presents the link as one more party of the
 * evaluator's transport ({@link withEnclaveLink}) so the Wasm protocol reaches it like any peer.
 *
 * A plaintext `ws://` URL is refused unless it names a loopback host or the caller sets
 * `allowPlaintextWebSocket` (the secrets on the link are sealed either way; the network could
 * still watch the circuit and cut or stall the session).
 *
 * Browser-safe: no Node imports. Node 20 has no global `WebSocket`: pass `await nodeWebSocket()` from
 * `webmpc/net/node` as `WebSocket`.
 */
import { TransportError, WebmpcError } from '../errors.js';
import type { RecvOptions, Transport } from '../net/transport.js';
import {
  binaryData,
  closeWebSocket,
  defaultWebSocket,
  WS_OPEN,
  type WebSocketCloseEvent,
  type WebSocketConstructor,
  type WebSocketLike,
  type WebSocketMessageEvent,
} from '../net/websocket-like.js';

/** Whether `hostname` (as `URL` gives it) is a loopback host: `localhost`, 127.0.0.0/8, `[::1]`. */
function loopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * Checks an enclave-server URL: `wss://`, or `ws://` to a loopback host unless
 * `allowPlaintext`. Returns why it is refused, or undefined.
 */
export function checkEnclaveUrl(url: unknown, allowPlaintext: boolean | undefined): string | undefined {
  if (typeof url !== 'string' || !/^wss?:\/\//i.test(url)) return "enclave.url must be the enclave-server's ws:// or wss:// URL";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `enclave.url ${JSON.stringify(url)} is not a URL`;
  }
  if (parsed.protocol === 'ws:' && !loopback(parsed.hostname) && allowPlaintext !== true) {
    return (
      `enclave.url ${url} is a plaintext ws:// URL to a host other than loopback: use wss://, or set ` +
      'allowPlaintextWebSocket: true to accept a network that can watch, cut or stall the session'
    );
  }
  return undefined;
}

/** How to reach an enclave-server. */
export interface EnclaveLinkOptions {
  /** The server's WebSocket URL: `wss://…`, or `ws://` to a loopback host, e.g. `ws://127.0.0.1:8790`. */
  url: string;
  /** Accept a plaintext `ws://` URL to a host other than loopback (default false: `INVALID_ARGUMENT`). */
  allowPlaintextWebSocket?: boolean;
  /** The WebSocket constructor (default: the platform's; Node 20: `await nodeWebSocket()` from `webmpc/net/node`). */
  WebSocket?: WebSocketConstructor;
  /** Deadline to open the connection (ms, default 10 000). */
  connectTimeoutMs?: number;
  /** Default deadline of a receive (ms, default 60 000): an enclave that stops answering fails the link. */
  recvTimeoutMs?: number;
  /** Cancels connecting. */
  signal?: AbortSignal;
}

/** Longest frame either side sends (the enclave program's limit). */
export const MAX_LINK_FRAME = 1 << 24;
/** Bytes queued on the socket above which `send` waits. */
const HIGH_WATER = 4 << 20;
/**
 * The enclave-server's default limit of open sessions per client identity. Here, in a module the
 * browser loads, because the SDK reads it too: teleport-yao opens one session per parallel
 * instance and must not ask for more than a default server grants.
 */
export const DEFAULT_MAX_SESSIONS_PER_CLIENT = 4;
/** Type byte of the enclave's (and its host's) `Error` message; see `webmpc_teleport::frames`. */
const ERROR_TAG = 0xee;

function unavailable(message: string, cause?: unknown): WebmpcError {
  return new WebmpcError('ENCLAVE_UNAVAILABLE', message, cause === undefined ? undefined : { cause });
}

/**
 * `CODE: detail` of an enclave `Error` link frame (peer byte, 0xee, u32-LE-prefixed ASCII code,
 * u32-LE-prefixed UTF-8 detail), or undefined for any other or malformed frame. Cut to printable
 * text of bounded length: it goes into an error message.
 */
function errorFrameText(frame: Uint8Array): string | undefined {
  if (frame.length < 10 || frame[1] !== ERROR_TAG) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const codeLength = view.getUint32(2, true);
  if (codeLength > 64 || 10 + codeLength > frame.length) return undefined;
  const detailLength = view.getUint32(6 + codeLength, true);
  if (10 + codeLength + detailLength > frame.length) return undefined;
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes).replace(/[^\x20-\x7e]/g, '?').slice(0, 300);
  return `${text(frame.subarray(6, 6 + codeLength))}: ${text(frame.subarray(10 + codeLength, 10 + codeLength + detailLength))}`;
}

/** Socket events between `open` and the link's constructor. */
interface Early {
  messages: WebSocketMessageEvent[];
  close: WebSocketCloseEvent | undefined;
  error: boolean;
}

/** An open connection to an enclave-server. */
export class EnclaveLink {
  readonly url: string;
  /** Resolves (never rejects) once the link closed, with the reason if it failed. */
  readonly closed: Promise<Error | undefined>;
  readonly #socket: WebSocketLike;
  readonly #recvTimeoutMs: number;
  readonly #queue: Uint8Array[] = [];
  readonly #waiters: { resolve(m: Uint8Array): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }[] = [];
  #error: Error | undefined;
  #resolveClosed!: (e: Error | undefined) => void;

  /**
   * `early`: what the socket delivered between its `open` event and this constructor. In Node,
   * `ws` can emit the first message (the enclave's evidence, when it arrived in the same read as
   * the upgrade response) in the `process.nextTick` after `open`, before the `await` that
   * builds the link resumes; those events are replayed here, or the session would wait forever.
   */
  private constructor(url: string, socket: WebSocketLike, recvTimeoutMs: number, early: Early) {
    this.url = url;
    this.#socket = socket;
    this.#recvTimeoutMs = recvTimeoutMs;
    this.closed = new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
    socket.onmessage = (event) => {
      const bytes = binaryData(event.data);
      if (!bytes || bytes.length < 2 || bytes.length > MAX_LINK_FRAME) {
        this.#fail(new TransportError('PROTOCOL_ERROR', 'the enclave-server sent a malformed frame'));
        return;
      }
      // Copy out of the socket's buffer: the Rust side keeps nothing, but callers may.
      const frame = bytes.slice();
      const waiter = this.#waiters.shift();
      if (waiter) {
        clearTimeout(waiter.timer);
        waiter.resolve(frame);
      } else {
        this.#queue.push(frame);
      }
    };
    socket.onclose = (event) => {
      // A server that refuses or ends the session says why in an Error frame just before closing
      // (e.g. ENCLAVE_BUSY). The protocol may be sending, not reading, when the close arrives:
      // the send then fails with this error, so it carries the server's reason.
      const said = this.#queue.map(errorFrameText).find((t) => t !== undefined);
      this.#fail(unavailable(`the enclave-server closed the connection (code ${event.code})${said ? `: ${said}` : ''}`));
    };
    socket.onerror = () => {
      this.#fail(unavailable('the connection to the enclave-server failed'));
    };
    for (const event of early.messages) socket.onmessage?.(event);
    if (early.close) socket.onclose?.(early.close);
    else if (early.error) socket.onerror?.(undefined);
  }

  /** Opens a connection (a fresh attested session on the server). */
  static async connect(options: EnclaveLinkOptions): Promise<EnclaveLink> {
    const bad = checkEnclaveUrl(options?.url, options?.allowPlaintextWebSocket);
    if (bad) throw new WebmpcError('INVALID_ARGUMENT', bad);
    const Ctor = defaultWebSocket(options.WebSocket);
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    const early: Early = { messages: [], close: undefined, error: false };
    const socket = await new Promise<WebSocketLike>((resolve, reject) => {
      let s: WebSocketLike;
      try {
        s = new Ctor(options.url);
      } catch (cause) {
        reject(unavailable(`cannot open a WebSocket to ${options.url}`, cause));
        return;
      }
      s.binaryType = 'arraybuffer';
      const done = (err?: Error) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        s.onopen = null;
        // Until the link takes the socket over, keep what arrives (see the constructor).
        s.onmessage = (event) => early.messages.push(event);
        s.onclose = (event) => (early.close ??= event);
        s.onerror = () => (early.error = true);
        if (err) {
          s.onmessage = s.onerror = s.onclose = null;
          try {
            s.close();
          } catch {
            // A socket that never opened may refuse to close.
          }
          reject(err);
        } else {
          resolve(s);
        }
      };
      const onAbort = () => done(new TransportError('ABORTED', 'connecting to the enclave-server was cancelled'));
      const timer = setTimeout(() => done(unavailable(`the enclave-server at ${options.url} did not answer within ${timeoutMs} ms`)), timeoutMs);
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      s.onopen = () => done();
      s.onerror = () => done(unavailable(`cannot reach the enclave-server at ${options.url}`));
      s.onclose = () => done(unavailable(`the enclave-server at ${options.url} refused the connection`));
    });
    return new EnclaveLink(options.url, socket, options.recvTimeoutMs ?? 60_000, early);
  }

  /** Sends one link frame; waits while the socket's queue is above its high-water mark. */
  async send(frame: Uint8Array): Promise<void> {
    if (this.#error) throw this.#error;
    if (frame.length < 2 || frame.length > MAX_LINK_FRAME) {
      throw new WebmpcError('INVALID_ARGUMENT', `a link frame holds 2 to ${MAX_LINK_FRAME} bytes`);
    }
    const deadline = Date.now() + this.#recvTimeoutMs;
    while (this.#socket.bufferedAmount > HIGH_WATER) {
      if (this.#error) throw this.#error;
      if (Date.now() > deadline) {
        const e = new TransportError('TIMEOUT', 'the enclave-server stopped reading');
        this.#fail(e);
        throw e;
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    if (this.#error) throw this.#error;
    this.#socket.send(frame);
  }

  /** The next frame from the server. */
  recv(options: RecvOptions = {}): Promise<Uint8Array> {
    if (this.#queue.length > 0) return Promise.resolve(this.#queue.shift()!);
    if (this.#error) return Promise.reject(this.#error);
    const timeoutMs = options.timeoutMs ?? this.#recvTimeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#fail(new TransportError('TIMEOUT', `no message from the enclave within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.push({ resolve, reject, timer });
    });
  }

  /** Closes the link (the server ends the attested session). Idempotent. */
  async close(reason?: Error): Promise<void> {
    if (!this.#error) this.#fail(reason ?? new TransportError('CLOSED', 'the enclave link was closed'), true);
    await this.closed;
  }

  #fail(error: Error, graceful = false): void {
    if (this.#error) return;
    this.#error = error;
    for (const w of this.#waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(error);
    }
    const s = this.#socket;
    s.onmessage = null;
    s.onerror = null;
    const settle = () => this.#resolveClosed(graceful ? undefined : error);
    if (s.readyState === WS_OPEN) {
      s.onclose = null;
      void closeWebSocket(s, graceful, 1_000).then(settle);
    } else {
      s.onclose = null;
      settle();
    }
  }
}

/**
 * The evaluator's view for the Wasm protocol: `transport`'s parties plus the enclave link as party
 * `transport.parties` (sends and receives on it are link frames). Closing the view closes the
 * link only; the session's transport stays the session's.
 */
export function withEnclaveLink(transport: Transport, link: EnclaveLink): Transport {
  const enclave = transport.parties;
  return {
    party: transport.party,
    parties: transport.parties + 1,
    closed: transport.closed,
    send: (to, data) => (to === enclave ? link.send(data) : transport.send(to, data)),
    recv: (from, options) => (from === enclave ? link.recv(options) : transport.recv(from, options)),
    close: (reason) => link.close(reason),
  };
}
