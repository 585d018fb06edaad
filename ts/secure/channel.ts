/**
 * The record layer: a {@link Transport} whose messages travel AEAD-encrypted over an inner one,
 * with the keys a finished handshake produced (see `handshake.ts`).
 *
 * ## Records
 * A message of L bytes is cut into segments of at most {@link SEGMENT_BYTES} plaintext bytes,
 * each sent as one inner message:
 * ```
 * first segment:  ChaCha20-Poly1305-IETF( u64 L ‖ data[0 .. min(L, SEGMENT_BYTES − 8)] )
 * later segments: ChaCha20-Poly1305-IETF( next min(SEGMENT_BYTES, remaining) bytes of data )
 * ```
 * Nothing travels in the clear, not even a type byte: the receiver knows from its own state
 * whether it expects a first or a later segment and how long a later one must be. The cipher
 * is libsodium's, or in Node OpenSSL's implementation of the same construction (`aead.ts`).
 *
 * - **Nonce** = 4 zero bytes ‖ u64 big-endian segment counter of that direction, starting at 0.
 *   Each direction has its own key from the handshake, and each handshake makes fresh keys, so a
 *   (key, nonce) pair is never used twice; a random nonce would buy nothing here.
 * - **Associated data** = u32 sender index ‖ u32 receiver index ‖ segment kind (1 = first,
 *   2 = later), so a segment is valid in one place of one direction only.
 * - **Receiver**: decrypts with exactly the next counter it expects. A replayed, reordered,
 *   dropped, truncated, tampered or injected segment therefore fails to decrypt, and the
 *   transport closes with `AUTHENTICATION_FAILED`; a well-authenticated segment whose lengths
 *   disagree with the header (which only a buggy or malicious peer can produce) closes it with
 *   `PROTOCOL_ERROR`.
 *
 * ## Memory
 * Segmenting keeps every cipher call at ≤ 1 MiB, so libsodium's own heap stays small however
 * big the message, and the receiver learns L from the first segment and decrypts straight into
 * one output buffer: a 256 MB message costs the output plus about a segment, not two copies.
 * L is checked against `maxMessageBytes` (default {@link DEFAULT_MAX_MESSAGE_BYTES}, what a
 * protocol accepts) before anything is allocated, and the inner transport is told to accept
 * nothing larger than one segment (see `secureTransport`), so an authenticated peer can make
 * this party hold at most one message plus the inner transport's window.
 *
 * ## Reading ahead, ordering and concurrency
 * One reader per peer decrypts that peer's segments as they arrive, whether or not a `recv` is
 * waiting, until one whole message is ready; it then pauses until a `recv` takes it. Reading one
 * message ahead means two parties that send each other a large message before receiving cannot
 * deadlock on the inner transport's flow-control window (one message always goes through, as on
 * every `ts/net` transport), while memory stays bounded.
 *
 * Sends to one peer are serialized (a message's segments are never interleaved with another's),
 * as are receives from one peer. A `recv` aborted through its signal, even in the middle of a
 * multi-segment message, only ends that call: the message is handed to the next `recv`, so an
 * abort never desynchronizes the stream.
 *
 * ## Failure model (the same as `ts/net`'s transports)
 * Fail-stop: an authentication failure, a missed `recv` deadline, or the inner transport failing
 * closes the whole transport, and every pending and later operation rejects with that one error.
 * An aborted `recv` only ends that call. A peer that *gracefully* leaves (its inner stream ended:
 * `recv`/`send` from/to it reject with `PEER_DISCONNECTED`) only ends that peer's streams, so the
 * others can finish; a message cut short by such an end is dropped, never delivered in part.
 * `close(reason)` passes the reason to the inner transport, which tells every peer (see
 * `ts/net/transport.ts`); that notice travels outside the encryption, so its text is a hint, not
 * an authenticated statement (a network attacker can end a session anyway, and could also forge
 * the stated reason).
 */
import { TransportError, type TransportErrorCode } from '../errors.js';
import type { RecvOptions, Transport } from '../net/transport.js';
import { recordCipher, type RecordCipher } from './aead.js';
import { type Sodium, wipe } from './sodium.js';
import { traceClock, traceCount, TRACING } from '../trace.js';

/** Plaintext bytes per encrypted segment (the first one includes the 8-byte length header). */
export const SEGMENT_BYTES = 1 << 20;
/** Poly1305 tag appended to each segment. */
const TAG_BYTES = 16;
const LENGTH_HEADER_BYTES = 8;
const NONCE_BYTES = 12;
const KIND_FIRST = 1;
const KIND_LATER = 2;
/** Counters stay exact JS numbers; 2^53 segments of 1 MiB is far beyond any session. */
const MAX_COUNTER = Number.MAX_SAFE_INTEGER;
/** Largest encrypted segment on the wire: what the inner transport must accept after the handshake. */
export const MAX_RECORD_BYTES = SEGMENT_BYTES + TAG_BYTES;
/** Default largest message accepted from a peer: 64 MiB, the most a protocol accepts. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Default `recv` deadline when the call gives none (ms), as on `ts/net` transports. */
export const DEFAULT_RECV_TIMEOUT_MS = 60_000;

/** Per-peer keys handed over by the handshake; the transport owns and wipes them. */
export interface PeerKeys {
  readonly sendKey: Uint8Array;
  readonly recvKey: Uint8Array;
}

interface RecvWaiter {
  resolve(message: Uint8Array): void;
  reject(error: Error): void;
}

/** A message being reassembled from its segments. */
interface Partial {
  readonly out: Uint8Array;
  filled: number;
}

interface PeerState {
  readonly peer: number;
  readonly sendKey: Uint8Array;
  readonly recvKey: Uint8Array;
  sendCounter: number;
  recvCounter: number;
  /** Settles when every earlier send to this peer has finished (never rejects). */
  sendTail: Promise<void>;
  readonly waiters: RecvWaiter[];
  /** Whole messages no `recv` has taken yet (at most one: the reader then pauses). */
  readonly ready: Uint8Array[];
  partial: Partial | undefined;
  reading: boolean;
  /** Set when the peer's stream to us ended: later recvs from it reject with this. */
  recvEnded: TransportError | undefined;
  /** Set when our stream to the peer ended: later sends to it reject with this. */
  sendEnded: TransportError | undefined;
}

function invalidArgument(message: string): TransportError {
  return new TransportError('INVALID_ARGUMENT', message);
}

function associatedData(from: number, to: number, kind: number): Uint8Array {
  const ad = new Uint8Array(9);
  const view = new DataView(ad.buffer);
  view.setUint32(0, from, false);
  view.setUint32(4, to, false);
  ad[8] = kind;
  return ad;
}

function nonceFor(counter: number): Uint8Array {
  const nonce = new Uint8Array(NONCE_BYTES);
  const view = new DataView(nonce.buffer);
  view.setUint32(4, Math.floor(counter / 2 ** 32), false);
  view.setUint32(8, counter >>> 0, false);
  return nonce;
}

/** Limits of a {@link SecureChannel}. */
export interface SecureChannelLimits {
  /** Largest message accepted from a peer; default {@link DEFAULT_MAX_MESSAGE_BYTES}. */
  readonly maxMessageBytes?: number | undefined;
  /** `recv` deadline when the call gives none; default {@link DEFAULT_RECV_TIMEOUT_MS}. */
  readonly recvTimeoutMs?: number | undefined;
}

/**
 * The Transport `secureTransport` returns. Construct only after every pairwise handshake
 * succeeded; it takes ownership of `inner` and of the keys.
 */
export class SecureChannel implements Transport {
  readonly party: number;
  readonly parties: number;
  readonly closed: Promise<Error | undefined>;

  readonly #cipher: RecordCipher;
  readonly #inner: Transport;
  readonly #peers: (PeerState | undefined)[];
  readonly #maxMessageBytes: number;
  readonly #recvTimeoutMs: number;
  /** Ends the readers' waits on the inner transport when this one closes. */
  readonly #stop = new AbortController();
  /** Set once closed: what every pending and later operation rejects with. */
  #failure: TransportError | undefined;
  #resolveClosed!: (reason: Error | undefined) => void;
  #innerClosing: Promise<void> | undefined;

  constructor(sodium: Sodium, inner: Transport, keys: readonly (PeerKeys | undefined)[], limits: SecureChannelLimits = {}) {
    this.#cipher = recordCipher(sodium);
    this.#inner = inner;
    this.party = inner.party;
    this.parties = inner.parties;
    this.#maxMessageBytes = limits.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#recvTimeoutMs = limits.recvTimeoutMs ?? DEFAULT_RECV_TIMEOUT_MS;
    this.closed = new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
    this.#peers = keys.map((k, peer) =>
      k === undefined
        ? undefined
        : {
            peer,
            sendKey: k.sendKey,
            recvKey: k.recvKey,
            sendCounter: 0,
            recvCounter: 0,
            sendTail: Promise.resolve(),
            waiters: [],
            ready: [],
            partial: undefined,
            reading: false,
            recvEnded: undefined,
            sendEnded: undefined,
          },
    );
    // The inner transport failing on its own (peer gone, relay error) ends this one too.
    void inner.closed.then((reason) => {
      if (this.#failure !== undefined) return;
      const error =
        reason instanceof TransportError
          ? reason
          : new TransportError(
              reason === undefined ? 'CLOSED' : 'PEER_DISCONNECTED',
              'the transport under the secure channel closed',
              reason === undefined ? {} : { cause: reason },
            );
      this.#shutdown(error, error);
    });
    for (const state of this.#peers) if (state !== undefined) void this.#read(state);
  }

  send(to: number, data: Uint8Array): Promise<void> {
    let state: PeerState;
    try {
      state = this.#peerState(to, 'to');
      if (!(data instanceof Uint8Array)) throw invalidArgument('send: data must be a Uint8Array');
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (state.sendEnded !== undefined) return Promise.reject(state.sendEnded);
    const sending = state.sendTail.then(() => this.#sendNow(state, data));
    state.sendTail = sending.then(
      () => {},
      () => {},
    );
    return sending;
  }

  recv(from: number, options?: RecvOptions): Promise<Uint8Array> {
    let state: PeerState;
    let timeoutMs: number;
    try {
      state = this.#peerState(from, 'from');
      timeoutMs = options?.timeoutMs ?? this.#recvTimeoutMs;
      if (!(typeof timeoutMs === 'number' && timeoutMs > 0 && !Number.isNaN(timeoutMs))) {
        throw invalidArgument('recv: timeoutMs must be a positive number (or Infinity)');
      }
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const early = state.ready.shift();
    if (early !== undefined) {
      // Room for the next message: let the reader go on.
      void this.#read(state);
      return Promise.resolve(early);
    }
    if (state.recvEnded !== undefined) return Promise.reject(state.recvEnded);
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(new TransportError('ABORTED', 'recv aborted', { peer: from }));
    return new Promise<Uint8Array>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (): boolean => {
        const i = state.waiters.indexOf(waiter);
        if (i < 0) return false;
        state.waiters.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const waiter: RecvWaiter = {
        resolve: (message) => {
          if (settle()) resolve(message);
        },
        reject: (error) => {
          if (settle()) reject(error);
        },
      };
      // Only this call ends; a message under way goes to the next recv.
      const onAbort = (): void => waiter.reject(new TransportError('ABORTED', 'recv aborted', { peer: from }));
      if (timeoutMs !== Infinity) {
        // A missed deadline leaves the protocol's state unknown: fail-stop, like ts/net does.
        timer = setTimeout(
          () => this.#fail(new TransportError('TIMEOUT', `no message from party ${from} within ${timeoutMs} ms`, { peer: from })),
          timeoutMs,
        );
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      state.waiters.push(waiter);
      void this.#read(state);
    });
  }

  close(reason?: Error): Promise<void> {
    if (this.#failure === undefined) {
      const error = new TransportError(
        'CLOSED',
        'secure transport closed',
        reason === undefined ? {} : { cause: reason },
      );
      this.#shutdown(error, reason);
    }
    return this.#innerClosing ?? Promise.resolve();
  }

  #peerState(peer: number, name: string): PeerState {
    if (!Number.isInteger(peer) || peer < 0 || peer >= this.parties) {
      throw invalidArgument(`${name} must be a party index in [0, ${this.parties}), got ${String(peer)}`);
    }
    const state = this.#peers[peer];
    if (state === undefined) throw invalidArgument(`${name} must not be this party (${this.party})`);
    return state;
  }

  /**
   * Ends the transport once: wipes the keys, rejects every waiting recv with `opError`, resolves
   * `closed` with `closedReason` and closes the inner transport (telling the peers the reason).
   */
  #shutdown(opError: TransportError, closedReason: Error | undefined): void {
    if (this.#failure !== undefined) return;
    this.#failure = opError;
    this.#stop.abort();
    for (const state of this.#peers) {
      if (state === undefined) continue;
      wipe(state.sendKey);
      wipe(state.recvKey);
      if (state.partial !== undefined) wipe(state.partial.out);
      state.partial = undefined;
      for (const message of state.ready.splice(0)) wipe(message);
      for (const waiter of [...state.waiters]) waiter.reject(opError);
    }
    this.#resolveClosed(closedReason);
    this.#innerClosing = this.#inner.close(closedReason).catch(() => {});
  }

  #fail(error: TransportError): TransportError {
    this.#shutdown(error, error);
    return this.#failure ?? error;
  }

  async #sendNow(state: PeerState, data: Uint8Array): Promise<void> {
    const cipher = this.#cipher;
    const total = data.length;
    const firstData = Math.min(total, SEGMENT_BYTES - LENGTH_HEADER_BYTES);
    let offset = 0;
    let first = true;
    while (first || offset < total) {
      if (this.#failure !== undefined) throw this.#failure;
      if (state.sendEnded !== undefined) throw state.sendEnded;
      if (state.sendCounter >= MAX_COUNTER) {
        throw this.#fail(new TransportError('PROTOCOL_ERROR', 'secure channel exhausted its message counter', { peer: state.peer }));
      }
      let plaintext: Uint8Array;
      if (first) {
        plaintext = new Uint8Array(LENGTH_HEADER_BYTES + firstData);
        new DataView(plaintext.buffer).setBigUint64(0, BigInt(total), false);
        plaintext.set(data.subarray(0, firstData), LENGTH_HEADER_BYTES);
      } else {
        plaintext = data.subarray(offset, Math.min(total, offset + SEGMENT_BYTES));
      }
      const ad = associatedData(this.party, state.peer, first ? KIND_FIRST : KIND_LATER);
      const t0 = TRACING ? traceClock() : 0;
      const frame = cipher.seal(plaintext, ad, nonceFor(state.sendCounter), state.sendKey);
      if (TRACING) {
        traceCount('secure.segmentsSent');
        traceCount('secure.encryptMs', traceClock() - t0);
      }
      state.sendCounter += 1;
      if (first) {
        wipe(plaintext); // our copy of the caller's data; the caller's own buffer is theirs
        offset = firstData;
        first = false;
      } else {
        offset += plaintext.length;
      }
      try {
        await this.#inner.send(state.peer, frame);
      } catch (err) {
        // If we closed meanwhile, report why we closed rather than the inner's generic CLOSED.
        if (this.#failure !== undefined) throw this.#failure;
        const error = asTransportError(err, state.peer);
        if (error.code === 'PEER_DISCONNECTED') {
          // That peer left; the rest of the session may go on without it.
          state.sendEnded = error;
          throw error;
        }
        throw this.#fail(error);
      }
    }
  }

  /**
   * The peer's reader: hands whole messages to waiting `recv`s, and reads and decrypts segments
   * until one whole message waits for a `recv` (then pauses; `recv` restarts it).
   */
  async #read(state: PeerState): Promise<void> {
    if (state.reading) return;
    state.reading = true;
    try {
      for (;;) {
        if (this.#failure !== undefined) return;
        while (state.waiters.length > 0 && state.ready.length > 0) state.waiters[0]!.resolve(state.ready.shift()!);
        if (state.ready.length > 0 || state.recvEnded !== undefined) return;
        let frame: Uint8Array;
        try {
          // No deadline here: each recv has its own, and the stop signal ends this wait on close.
          frame = await this.#inner.recv(state.peer, { timeoutMs: Infinity, signal: this.#stop.signal });
        } catch (err) {
          if (this.#failure !== undefined) return;
          const error = asTransportError(err, state.peer);
          if (error.code === 'PEER_DISCONNECTED') {
            // The peer's stream ended (if the whole inner transport failed, its `closed` handler
            // shuts this one down too). A half-received message is dropped, never delivered.
            state.recvEnded = error;
            if (state.partial !== undefined) wipe(state.partial.out);
            state.partial = undefined;
            for (const waiter of [...state.waiters]) waiter.reject(error);
            return;
          }
          this.#fail(error);
          return;
        }
        if (this.#failure !== undefined) return;
        let message: Uint8Array | undefined;
        try {
          message = this.#absorb(state, frame);
        } catch (err) {
          this.#fail(asTransportError(err, state.peer));
          return;
        }
        if (message !== undefined) state.ready.push(message);
      }
    } finally {
      state.reading = false;
    }
  }

  /** Decrypts one segment into the message being assembled; returns the message when complete. */
  #absorb(state: PeerState, frame: Uint8Array): Uint8Array | undefined {
    const peer = state.peer;
    const partial = state.partial;
    if (partial !== undefined) {
      const expected = Math.min(SEGMENT_BYTES, partial.out.length - partial.filled) + TAG_BYTES;
      if (frame.length !== expected) throw authFailure(peer);
    } else if (frame.length < LENGTH_HEADER_BYTES + TAG_BYTES || frame.length > SEGMENT_BYTES + TAG_BYTES) {
      throw authFailure(peer);
    }
    if (state.recvCounter >= MAX_COUNTER) {
      throw new TransportError('PROTOCOL_ERROR', 'secure channel exhausted its message counter', { peer });
    }
    let plaintext: Uint8Array;
    const t0 = TRACING ? traceClock() : 0;
    try {
      plaintext = this.#cipher.open(
        frame,
        associatedData(peer, this.party, partial === undefined ? KIND_FIRST : KIND_LATER),
        nonceFor(state.recvCounter),
        state.recvKey,
      );
    } catch (err) {
      throw authFailure(peer, err);
    }
    state.recvCounter += 1;
    if (TRACING) {
      traceCount('secure.segmentsReceived');
      traceCount('secure.decryptMs', traceClock() - t0);
    }
    try {
      if (partial !== undefined) {
        partial.out.set(plaintext, partial.filled);
        partial.filled += plaintext.length;
        if (partial.filled < partial.out.length) return undefined;
        state.partial = undefined;
        return partial.out;
      }
      const total = new DataView(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength).getBigUint64(0, false);
      // Checked before anything is allocated: the header is the peer's word, authenticated or not.
      if (total > BigInt(this.#maxMessageBytes)) {
        throw new TransportError(
          'PROTOCOL_ERROR',
          `peer ${peer} announced a ${total}-byte message, above the ${this.#maxMessageBytes}-byte maximum`,
          { peer },
        );
      }
      const length = Number(total);
      if (plaintext.length - LENGTH_HEADER_BYTES !== Math.min(length, SEGMENT_BYTES - LENGTH_HEADER_BYTES)) {
        throw badLengths(peer);
      }
      let out: Uint8Array;
      try {
        out = new Uint8Array(length);
      } catch (err) {
        throw new TransportError('PROTOCOL_ERROR', `cannot allocate a ${length}-byte message from peer ${peer}`, {
          peer,
          cause: err,
        });
      }
      out.set(plaintext.subarray(LENGTH_HEADER_BYTES));
      const filled = plaintext.length - LENGTH_HEADER_BYTES;
      if (filled === length) return out;
      state.partial = { out, filled };
      return undefined;
    } finally {
      wipe(plaintext);
    }
  }
}

function authFailure(peer: number, cause?: unknown): TransportError {
  // Deliberately vague: the message says what failed, never which bytes.
  return new TransportError(
    'AUTHENTICATION_FAILED',
    `a message from peer ${peer} failed authentication (tampered, replayed, reordered, dropped or truncated)`,
    cause === undefined ? { peer } : { peer, cause },
  );
}

function badLengths(peer: number): TransportError {
  return new TransportError('PROTOCOL_ERROR', `peer ${peer} sent an authenticated message with inconsistent lengths`, {
    peer,
  });
}

/** Keeps typed transport errors as they are; anything else becomes `fallback` with the cause. */
export function asTransportError(
  err: unknown,
  peer: number | undefined,
  fallback: TransportErrorCode = 'PROTOCOL_ERROR',
): TransportError {
  if (err instanceof TransportError) return err;
  return new TransportError(
    fallback,
    'the secure channel failed unexpectedly',
    peer === undefined ? { cause: err } : { cause: err, peer },
  );
}
