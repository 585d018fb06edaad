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
 * Browser-safe: no Node imports.
 */
import { TransportError, type TransportErrorCode } from '../errors.js';
import type { RecvOptions, Transport } from './transport.js';

/** Deadlines and limits shared by every transport. All optional; defaults in {@link DEFAULTS}. */
export interface TransportOptions {
  /** Default deadline of `recv` (ms) when the call gives none. */
  recvTimeoutMs?: number;
  /** Deadline (ms) for a `send` blocked on backpressure to make progress. */
  sendTimeoutMs?: number;
  /** Largest message accepted from a peer (bytes); a longer length header is a `PROTOCOL_ERROR`. */
  maxMessageBytes?: number;
}

export const DEFAULTS = {
  recvTimeoutMs: 60_000,
  sendTimeoutMs: 60_000,
  maxMessageBytes: 1024 * 1024 * 1024,
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
    this.inboxes = Array.from({ length: parties }, () => ({ messages: [], bytes: 0, waiters: [], ended: false }));
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
  }

  /** Hands one message to the medium; resolves when it is accepted (after backpressure). */
  protected abstract sendMessage(to: number, data: Uint8Array): Promise<void>;

  /**
   * Frees the medium. `graceful`: flush what was accepted and tell peers we left on purpose;
   * otherwise tear down at once and tell peers (where still possible) that we aborted.
   */
  protected abstract release(graceful: boolean): Promise<void>;

  get isClosed(): boolean {
    return this.closeError !== undefined;
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
      timeoutMs = positive(options.timeoutMs, this.options.recvTimeoutMs, 'timeoutMs');
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
      const timer = setTimeout(() => {
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
      await this.release(graceful);
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

  /** Hook for subclasses: a queued message was taken by `recv`. */
  protected onTaken(_from: number): void {}

  private take(from: number): Uint8Array {
    const inbox = this.inboxes[from]!;
    const message = inbox.messages.shift()!;
    inbox.bytes -= message.byteLength;
    this.onTaken(from);
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
