/**
 * The part every {@link Transport} shares, whatever carries the bytes: per-peer inboxes, `recv`
 * with deadlines and abort signals, argument checks, and the close/fail state machine.
 *
 * Failure model (fail-stop, as MPC with abort wants): a peer that disconnects abruptly, goes
 * silent, or breaks the framing, and any deadline that passes, closes the whole transport; every
 * pending and later operation then rejects with that one typed error. A peer that closes
 * *gracefully* (it called `close()` without a reason) only ends its own stream: messages it sent
 * before stay receivable, then `recv` from it rejects with `PEER_DISCONNECTED`; the other peers
 * carry on (a party that finishes first may leave while the others exchange their last messages).
 *
 * `close(reason)` with a reason is an abort: every peer is told the reason's code and message
 * ({@link closeReasonOf}) before the medium closes, and its pending and later operations reject
 * with `PEER_DISCONNECTED` carrying that reason in {@link TransportError.remote}.
 *
 * Browser-safe: no Node imports.
 */
import {
  MAX_REMOTE_MESSAGE_CHARS,
  TransportError,
  WebmpcError,
  type RemoteCloseReason,
  type TransportErrorCode,
} from '../errors.js';
import type { RecvOptions, Transport } from './transport.js';

/** Deadlines and limits shared by every transport. All optional; defaults in {@link DEFAULTS}. */
export interface TransportOptions {
  /** Default deadline of `recv` (ms) when the call gives none. */
  recvTimeoutMs?: number;
  /** Deadline (ms) for a `send` blocked on backpressure to make progress. */
  sendTimeoutMs?: number;
  /**
   * Largest message accepted from a peer (bytes); a longer length header is a `PROTOCOL_ERROR`.
   * Default 64 MiB, the most a protocol accepts in one message. Anyone who reaches the medium can
   * send up to this much before any authentication, so raise it only for trusted networks;
   * `ts/secure` lowers it to a few hundred bytes during its handshake (see
   * {@link Transport.limitMessageBytes}).
   */
  maxMessageBytes?: number;
}

export const DEFAULTS = {
  recvTimeoutMs: 60_000,
  sendTimeoutMs: 60_000,
  maxMessageBytes: 64 * 1024 * 1024,
} as const;

interface RecvWaiter {
  resolve(msg: Uint8Array): void;
  reject(err: TransportError): void;
  /** Removes timers and abort listeners. */
  dispose(): void;
}

interface PeerInbox {
  messages: Uint8Array[];
  bytes: number;
  waiters: RecvWaiter[];
  /** The peer closed gracefully: nothing more will arrive after what is queued. */
  ended: boolean;
}

export function transportError(code: TransportErrorCode, message: string, peer?: number, cause?: unknown): TransportError {
  const options: { cause?: unknown; peer?: number } = {};
  if (peer !== undefined) options.peer = peer;
  if (cause !== undefined) options.cause = cause;
  return new TransportError(code, message, options);
}

/** Error codes travel as short upper-case identifiers; anything else is reported as `ERROR`. */
const REASON_CODE = /^[A-Z][A-Z0-9_]{0,31}$/;

/** Printable text only (no control characters: it ends up in logs), at most the allowed length. */
export function sanitizeReasonText(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return clean.length > MAX_REMOTE_MESSAGE_CHARS ? `${clean.slice(0, MAX_REMOTE_MESSAGE_CHARS - 1)}…` : clean;
}

/**
 * What a transport tells its peers when it closes with `reason`: the code and message of a webmpc
 * error (whose messages never carry secrets, by the SDK's rule), or code `ERROR` and no message
 * for any other error, whose text might hold anything.
 */
export function closeReasonOf(reason: Error): RemoteCloseReason {
  if (reason instanceof WebmpcError && REASON_CODE.test(reason.code)) {
    return { code: reason.code, message: sanitizeReasonText(reason.message) };
  }
  return { code: 'ERROR', message: '' };
}

/** The error a party sees when `peer` closed the session giving `remote` as its reason. */
export function peerAbortError(peer: number, remote: RemoteCloseReason): TransportError {
  const code = REASON_CODE.test(remote.code) ? remote.code : 'ERROR';
  const clean = { code, message: sanitizeReasonText(remote.message) };
  const detail = clean.message ? `${clean.code}: ${clean.message}` : clean.code;
  return new TransportError('PEER_DISCONNECTED', `party ${peer} aborted the session (${detail})`, { peer, remote: clean });
}

export function checkPartyCount(party: number, parties: number): void {
  if (!Number.isSafeInteger(parties) || parties < 2 || parties > 65_535) {
    throw transportError('INVALID_ARGUMENT', `parties must be an integer in [2, 65535], got ${String(parties)}`);
  }
  if (!Number.isSafeInteger(party) || party < 0 || party >= parties) {
    throw transportError('INVALID_ARGUMENT', `party must be an integer in [0, ${parties}), got ${String(party)}`);
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) {
    throw transportError('INVALID_ARGUMENT', `${name} must be a positive finite number`);
  }
  return value;
}

/** A recv deadline: positive, or `Infinity` for none (the caller bounds the wait otherwise). */
function recvDeadline(value: number | undefined, fallback: number): number {
  if (value === Infinity) return value;
  return positive(value, fallback, 'timeoutMs');
}

export function resolveOptions(options: TransportOptions): Required<TransportOptions> {
  return {
    recvTimeoutMs: positive(options.recvTimeoutMs, DEFAULTS.recvTimeoutMs, 'recvTimeoutMs'),
    sendTimeoutMs: positive(options.sendTimeoutMs, DEFAULTS.sendTimeoutMs, 'sendTimeoutMs'),
    maxMessageBytes: positive(options.maxMessageBytes, DEFAULTS.maxMessageBytes, 'maxMessageBytes'),
  };
}

/**
 * A transport's shared state. Subclasses implement {@link sendMessage} (the medium) and
 * {@link release} (free the medium), and call {@link deliver}, {@link peerEnded} and {@link fail}
 * as bytes and events arrive.
 */
export abstract class BaseTransport implements Transport {
  readonly party: number;
  readonly parties: number;
  readonly closed: Promise<Error | undefined>;
  protected readonly options: Required<TransportOptions>;
  /** Largest message accepted from a peer now (see {@link limitMessageBytes}). */
  private maxMessageBytes: number;
  /** Per peer, how many of its next messages are held to {@link openingMaxBytes}. */
  private readonly openingLeft: number[];
  private openingMaxBytes = 0;
  /** Set once closing starts: the error pending and later operations reject with. */
  protected closeError: TransportError | undefined;
  private readonly inboxes: PeerInbox[];
  private resolveClosed!: (reason: Error | undefined) => void;
  private closing: Promise<void> | undefined;
  /** Called when closing starts, so operations blocked on the medium can re-check and bail out. */
  private readonly closeListeners = new Set<() => void>();

  protected constructor(party: number, parties: number, options: TransportOptions) {
    checkPartyCount(party, parties);
    this.party = party;
    this.parties = parties;
    this.options = resolveOptions(options);
    this.maxMessageBytes = this.options.maxMessageBytes;
    this.openingLeft = new Array<number>(parties).fill(0);
    this.inboxes = Array.from({ length: parties }, () => ({ messages: [], bytes: 0, waiters: [], ended: false }));
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
  }

  /** Hands one message to the medium; resolves when it is accepted (after backpressure). */
  protected abstract sendMessage(to: number, data: Uint8Array): Promise<void>;

  /**
   * Frees the medium. `graceful`: flush what was accepted and tell peers we left on purpose;
   * otherwise tear down at once and tell peers (where still possible) that we aborted, and why
   * (`reason`). Must leave no timer or handle behind once it resolves.
   */
  protected abstract release(graceful: boolean, reason: RemoteCloseReason | undefined): Promise<void>;

  get isClosed(): boolean {
    return this.closeError !== undefined;
  }

  /**
   * Sets the largest message accepted from peers from now on; with `opening`, each peer's next
   * `opening.messages` messages are held to `opening.maxBytes` instead. `ts/secure` uses it so
   * that nothing larger than a handshake message is buffered before the peers are authenticated,
   * without a race against the first encrypted records (which may arrive before the handshake
   * code has read the last handshake message).
   */
  limitMessageBytes(maxBytes: number, opening?: { messages: number; maxBytes: number }): void {
    const max = positive(maxBytes, this.maxMessageBytes, 'maxBytes');
    if (opening !== undefined) {
      if (!Number.isSafeInteger(opening.messages) || opening.messages < 0) {
        throw transportError('INVALID_ARGUMENT', 'opening.messages must be a non-negative integer');
      }
      this.openingMaxBytes = positive(opening.maxBytes, max, 'opening.maxBytes');
      // Messages already queued here count among the opening ones: a peer that spoke first (its
      // first message arriving before this call) must not get one more message at the opening
      // limit's expense, nor make the reader's next message one too many.
      this.inboxes.forEach((inbox, p) => (this.openingLeft[p] = Math.max(0, opening.messages - inbox.messages.length)));
    }
    this.maxMessageBytes = max;
  }

  /** The largest message `from` may send next; call {@link messageStarted} once it starts. */
  protected nextMessageLimit(from: number): number {
    return this.openingLeft[from]! > 0 ? this.openingMaxBytes : this.maxMessageBytes;
  }

  /** A message from `from` has started (its length was accepted). */
  protected messageStarted(from: number): void {
    if (this.openingLeft[from]! > 0) this.openingLeft[from]! -= 1;
  }

  /** The limit on every message, whatever its place (for messages already under way). */
  protected get messageLimit(): number {
    return this.maxMessageBytes;
  }

  send(to: number, data: Uint8Array): Promise<void> {
    try {
      this.checkPeer(to, 'to');
      if (!(data instanceof Uint8Array)) throw transportError('INVALID_ARGUMENT', 'data must be a Uint8Array');
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.closeError) return Promise.reject(this.closeError);
    if (this.inboxes[to]!.ended) {
      return Promise.reject(transportError('PEER_DISCONNECTED', `party ${to} has left the session`, to));
    }
    return this.sendMessage(to, data);
  }

  recv(from: number, options: RecvOptions = {}): Promise<Uint8Array> {
    let timeoutMs: number;
    try {
      this.checkPeer(from, 'from');
      timeoutMs = recvDeadline(options.timeoutMs, this.options.recvTimeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.closeError) return Promise.reject(this.closeError);
    const inbox = this.inboxes[from]!;
    if (inbox.waiters.length === 0 && inbox.messages.length > 0) return Promise.resolve(this.take(from));
    if (inbox.ended && inbox.messages.length === 0) {
      return Promise.reject(transportError('PEER_DISCONNECTED', `party ${from} has left the session`, from));
    }
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(transportError('ABORTED', 'recv aborted', from, signal.reason));
    return new Promise<Uint8Array>((resolve, reject) => {
      const onAbort = () => {
        // An aborted recv is the caller's choice, not a network failure: the transport stays
        // open and the next message from `from` goes to the next recv.
        const i = inbox.waiters.indexOf(waiter);
        if (i >= 0) inbox.waiters.splice(i, 1);
        waiter.dispose();
        reject(transportError('ABORTED', 'recv aborted', from, signal?.reason));
      };
      const timer =
        timeoutMs === Infinity
          ? undefined
          : setTimeout(() => {
              // A missed deadline leaves the protocol's state unknown: fail-stop the whole transport.
              this.fail(transportError('TIMEOUT', `no message from party ${from} within ${timeoutMs} ms`, from));
            }, timeoutMs);
      const waiter: RecvWaiter = {
        resolve,
        reject,
        dispose: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      inbox.waiters.push(waiter);
    });
  }

  close(reason?: Error): Promise<void> {
    if (this.closing) return this.closing;
    const error =
      reason === undefined
        ? transportError('CLOSED', 'transport closed')
        : reason instanceof TransportError
          ? reason
          : transportError('CLOSED', 'transport closed', undefined, reason);
    // Assigned before shutdown runs: releasing may re-enter close() (a peer's close that
    // cascades back to us) and must then find it under way.
    let done!: () => void;
    this.closing = new Promise<void>((resolve) => {
      done = resolve;
    });
    void this.shutdown(error, reason, reason === undefined).then(done);
    return this.closing;
  }

  /** Closes because something went wrong (a peer, a deadline, the framing). Never throws. */
  protected fail(error: TransportError): void {
    void this.close(error);
  }

  private async shutdown(error: TransportError, reason: Error | undefined, graceful: boolean): Promise<void> {
    this.closeError = error;
    for (const inbox of this.inboxes) {
      for (const waiter of inbox.waiters.splice(0)) {
        waiter.dispose();
        waiter.reject(error);
      }
      inbox.messages.length = 0;
      inbox.bytes = 0;
    }
    for (const listener of [...this.closeListeners]) listener();
    this.closeListeners.clear();
    try {
      await this.release(graceful, graceful ? undefined : closeReasonOf(reason ?? error));
    } catch {
      // Releasing is best effort: the transport is closed whatever the medium says.
    }
    this.resolveClosed(reason);
  }

  /** Registers a callback for when closing starts; returns its remover. */
  protected onClosing(listener: () => void): () => void {
    if (this.closeError) {
      listener();
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** A whole message arrived from `from`. */
  protected deliver(from: number, message: Uint8Array): void {
    if (this.closeError) return;
    const inbox = this.inboxes[from]!;
    const waiter = inbox.waiters.shift();
    if (waiter) {
      waiter.dispose();
      waiter.resolve(message);
      this.onConsumed(from, message);
      return;
    }
    inbox.messages.push(message);
    inbox.bytes += message.byteLength;
  }

  /** `from` closed gracefully: wake its waiters once its queue is empty. */
  protected peerEnded(from: number): void {
    const inbox = this.inboxes[from]!;
    if (inbox.ended || this.closeError) return;
    inbox.ended = true;
    if (inbox.messages.length === 0) {
      for (const waiter of inbox.waiters.splice(0)) {
        waiter.dispose();
        waiter.reject(transportError('PEER_DISCONNECTED', `party ${from} has left the session`, from));
      }
    }
  }

  protected hasEnded(peer: number): boolean {
    return this.inboxes[peer]!.ended;
  }

  /** Bytes received from `from` that no `recv` has taken yet. */
  protected queuedBytes(from: number): number {
    return this.inboxes[from]!.bytes;
  }

  /** Whole messages received from `from` that no `recv` has taken yet. */
  protected queuedCount(from: number): number {
    return this.inboxes[from]!.messages.length;
  }

  /**
   * Hook for subclasses: `recv` took `message` (from the queue, or straight off the medium for a
   * waiting `recv`). Called in delivery order; not called once the transport is closed.
   */
  protected onConsumed(_from: number, _message: Uint8Array): void {}

  private take(from: number): Uint8Array {
    const inbox = this.inboxes[from]!;
    const message = inbox.messages.shift()!;
    inbox.bytes -= message.byteLength;
    this.onConsumed(from, message);
    return message;
  }

  private checkPeer(peer: number, name: string): void {
    if (!Number.isSafeInteger(peer) || peer < 0 || peer >= this.parties) {
      throw transportError('INVALID_ARGUMENT', `${name} must be a party index in [0, ${this.parties})`);
    }
    if (peer === this.party) throw transportError('INVALID_ARGUMENT', `${name} must not be this party's own index`);
  }
}

/**
 * Waits until `ready()` holds, re-checking on `wake` notifications and every `pollMs`; rejects
 * with `TIMEOUT` after `timeoutMs`, or with the transport's error when it closes. Used for
 * backpressure, where some media signal "drained" (`bufferedamountlow`) and some never do.
 */
export function waitUntil(
  ready: () => boolean,
  options: {
    timeoutMs: number;
    pollMs: number;
    subscribe?: ((wake: () => void) => () => void) | undefined;
    onClosing: (listener: () => void) => () => void;
    closedError: () => TransportError | undefined;
    timeoutError: () => TransportError;
  },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const cleanups: (() => void)[] = [];
    let done = false;
    const finish = (err?: TransportError) => {
      if (done) return;
      done = true;
      for (const cleanup of cleanups) cleanup();
      if (err) reject(err);
      else resolve();
    };
    const check = () => {
      if (done) return;
      const closedError = options.closedError();
      if (closedError) finish(closedError);
      else if (ready()) finish();
    };
    const poll = setInterval(check, options.pollMs);
    const deadline = setTimeout(() => finish(options.timeoutError()), options.timeoutMs);
    cleanups.push(() => clearInterval(poll), () => clearTimeout(deadline));
    if (options.subscribe) cleanups.push(options.subscribe(check));
    cleanups.push(options.onClosing(check));
    check();
    // finish() may have run inside subscribe/onClosing before their removers were pushed.
    if (done) for (const cleanup of cleanups) cleanup();
  });
}
