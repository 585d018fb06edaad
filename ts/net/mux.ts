/**
 * Sub-channels: several independent {@link Transport}s over one, so that independent protocol
 * instances (OT-extension batches, triple batches, garbled runs), each in a worker of its own,
 * talk to their counterparts at the other parties over the one pairwise connection (and its
 * secure channel) the session already has. No SharedArrayBuffer, no second connection.
 *
 * ```ts
 * const mux = splitTransport(transport, { channels: 4 });   // both sides: the same count
 * await runInstance(mux.channels[2]);                         // talks only to the peers' channel 2
 * await mux.close();                                          // not the transport underneath
 * ```
 *
 * **Wire format.** Every message on the transport underneath carries one leading byte: the
 * sub-channel (0 ..= 254) of a data message, or 255 for a control message
 * (`[255, kind, channel, u32 LE]`: kind 1 grants that many bytes of credit on the channel, kind 2
 * says the sender closed the channel gracefully). A message for a channel that does not exist, or
 * a malformed control message, is a `PROTOCOL_ERROR` that closes everything.
 *
 * **Flow control.** Each sub-channel has its own credit window per peer, so one busy instance
 * never stalls another behind it and a peer cannot make this party hold more than a window (plus
 * one message) per channel: a sender may send while its unacknowledged bytes are within the
 * window (a message larger than the window goes alone), and the receiver grants credit back as
 * its channel's reader takes messages. Underneath, one pump per peer reads everything the
 * transport delivers, so the transport's own window never fills. A sender waiting for credit
 * longer than `sendTimeoutMs` fails with `TIMEOUT`.
 *
 * **Failure.** Sub-channels share fate: a failure of one (a deadline, a malformed message, an
 * abort with a reason) closes the transport underneath with that reason, so every channel here
 * and at every peer rejects at once. Closing a channel without a reason only ends that channel
 * (its peers' channel sees a graceful leave). {@link Mux.close} ends every channel gracefully and
 * leaves the transport underneath open, for its owner to close.
 *
 * Browser-safe: no Node imports.
 */
import { TransportError } from '../errors.js';
import { BaseTransport, transportError, waitUntil, type TransportOptions } from './base.js';
import type { RecvOptions, Transport } from './transport.js';

/** The most sub-channels one transport carries (tag 255 is the control message). */
export const MAX_CHANNELS = 255;
/** Default credit window per sub-channel and peer. */
export const DEFAULT_CHANNEL_WINDOW = 8 * 1024 * 1024;

const CONTROL = 255;
const KIND_CREDIT = 1;
const KIND_END = 2;
const CONTROL_BYTES = 7;

export interface SplitOptions extends TransportOptions {
  /** Sub-channels, 1 ..= 255; every party must split into the same number. */
  channels: number;
  /** Credit window per sub-channel and peer, in bytes (default 8 MiB). */
  windowBytes?: number;
  /**
   * The parties the sub-channels talk to (default: every other party). A pairwise protocol on a
   * transport with more parties (OT extension with one peer) names its peer, so the split reads
   * nothing that other parties send and can be used beside other traffic with them. Every party
   * so named must split with this party named.
   */
  peers?: readonly number[];
}

/** The sub-channels of one transport. */
export interface Mux {
  /** Sub-channel i talks to sub-channel i of every peer. */
  readonly channels: readonly Transport[];
  /**
   * Ends every sub-channel gracefully, waits (at most `timeoutMs`, default 10 s) until every peer
   * has ended every sub-channel too, and stops reading: the transport underneath stays open, with
   * nothing of the sub-channels left on it, for its owner to use or close. Every party must call
   * it; rejects with `TIMEOUT` if a peer does not, or with the failure that closed the channels.
   */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * The sub-channel a message on the transport underneath belongs to (a control message: the
 * channel it is about), or undefined if it is too short to say. For counting traffic per channel.
 */
export function channelOfMessage(m: Uint8Array): number | undefined {
  const tag = m[0];
  return tag === CONTROL ? m[2] : tag;
}

/** Per (sub-channel, peer): the credit state of both directions. */
interface Flow {
  /** Bytes sent to the peer on this channel that it has not yet granted back. */
  outstanding: number;
  /** Bytes taken from the peer's messages on this channel whose credit is not yet returned. */
  toGrant: number;
  /** Bytes of the peer's messages queued here, not yet taken. */
  queued: number;
}

/** One sub-channel: a transport whose medium is the mux. */
class SubChannel extends BaseTransport {
  readonly index: number;
  readonly #hub: Hub;

  constructor(hub: Hub, index: number, options: TransportOptions) {
    super(hub.inner.party, hub.inner.parties, options);
    this.#hub = hub;
    this.index = index;
  }

  protected sendMessage(to: number, data: Uint8Array): Promise<void> {
    return this.#hub.send(this, to, data);
  }

  override recv(from: number, options?: RecvOptions): Promise<Uint8Array> {
    // Nothing from a party outside the split ever arrives here: refuse rather than time out.
    if (Number.isInteger(from) && !this.#hub.peers.includes(from) && from !== this.party) return Promise.reject(this.#hub.notMember(from));
    return super.recv(from, options);
  }

  #abortReason: Error | undefined;

  override close(reason?: Error): Promise<void> {
    this.#abortReason ??= reason;
    return super.close(reason);
  }

  protected async release(graceful: boolean): Promise<void> {
    if (graceful) {
      await this.#hub.endChannel(this.index);
      return;
    }
    // An abort of one instance is an abort of the session: the transport underneath closes with
    // the same reason, so every channel here and every peer learns it at once.
    await this.#hub.abort(this.closeError ?? transportError('CLOSED', 'sub-channel closed'), this.#abortReason);
  }

  protected override onConsumed(from: number, message: Uint8Array): void {
    this.#hub.consumed(this.index, from, message.byteLength);
  }

  /** @internal A message from `from` arrived for this channel. */
  arrive(from: number, message: Uint8Array): void {
    this.deliver(from, message);
  }

  /** @internal `from` ended this channel. */
  ended(from: number): void {
    this.#endedBy.add(from);
    this.peerEnded(from);
  }

  readonly #endedBy = new Set<number>();

  /** @internal Whether `from` has ended this channel. */
  hasEndedPeer(from: number): boolean {
    return this.#endedBy.has(from);
  }

  /** @internal The session failed underneath. */
  failWith(error: TransportError): void {
    this.fail(error);
  }

  /** @internal For backpressure waits. */
  closingHook(listener: () => void): () => void {
    return this.onClosing(listener);
  }

  /** @internal */
  get closedWith(): TransportError | undefined {
    return this.closeError;
  }

  /** @internal Resolved options (send deadline). */
  get sendTimeoutMs(): number {
    return this.options.sendTimeoutMs;
  }
}

class Hub {
  readonly inner: Transport;
  readonly window: number;
  /** The parties the sub-channels talk to. */
  readonly peers: readonly number[];
  readonly subs: SubChannel[];
  /** flows[channel][peer] */
  readonly flows: Flow[][];
  /** Woken when credit arrives (senders waiting for it re-check). */
  readonly #creditWaiters = new Set<() => void>();
  readonly #stop = new AbortController();
  #stopped = false;
  #failed: TransportError | undefined;

  constructor(inner: Transport, options: SplitOptions) {
    this.inner = inner;
    this.window = options.windowBytes ?? DEFAULT_CHANNEL_WINDOW;
    this.peers = options.peers ? [...options.peers] : [...Array(inner.parties).keys()].filter((p) => p !== inner.party);
    const subOptions: TransportOptions = {
      ...(options.recvTimeoutMs !== undefined ? { recvTimeoutMs: options.recvTimeoutMs } : {}),
      ...(options.sendTimeoutMs !== undefined ? { sendTimeoutMs: options.sendTimeoutMs } : {}),
    };
    this.subs = Array.from({ length: options.channels }, (_, i) => new SubChannel(this, i, subOptions));
    this.flows = this.subs.map(() => Array.from({ length: inner.parties }, () => ({ outstanding: 0, toGrant: 0, queued: 0 })));
    for (const peer of this.peers) void this.#pump(peer);
    void inner.closed.then((reason) => {
      if (this.#stopped) return;
      if (reason === undefined) this.#innerClosedGracefully = true;
      this.#failAll(asTransportError(reason, 'the transport underneath the sub-channels closed'));
    });
  }

  notMember(peer: number): TransportError {
    return transportError('INVALID_ARGUMENT', `party ${peer} is not one of this split's peers (${this.peers.join(', ')})`, peer);
  }

  async send(sub: SubChannel, to: number, data: Uint8Array): Promise<void> {
    if (!this.peers.includes(to)) throw this.notMember(to);
    const flow = this.flows[sub.index]![to]!;
    const size = data.byteLength;
    // A message larger than the window goes alone; otherwise stay within the window.
    const fits = () => flow.outstanding === 0 || flow.outstanding + size <= this.window;
    if (!fits()) {
      await waitUntil(fits, {
        timeoutMs: sub.sendTimeoutMs,
        pollMs: 1000,
        subscribe: (wake) => {
          this.#creditWaiters.add(wake);
          return () => this.#creditWaiters.delete(wake);
        },
        onClosing: (listener) => sub.closingHook(listener),
        closedError: () => sub.closedWith,
        timeoutError: () =>
          transportError('TIMEOUT', `party ${to} took none of sub-channel ${sub.index}'s messages for ${sub.sendTimeoutMs} ms`, to),
      });
    }
    flow.outstanding += size;
    const framed = new Uint8Array(size + 1);
    framed[0] = sub.index;
    framed.set(data, 1);
    await this.inner.send(to, framed);
  }

  /** The reader of `channel` took `bytes` of `from`'s: grant them back once a quarter window has gathered. */
  consumed(channel: number, from: number, bytes: number): void {
    const flow = this.flows[channel]![from]!;
    flow.queued -= bytes;
    flow.toGrant += bytes;
    if (flow.toGrant >= this.window / 4 || flow.queued === 0) {
      const grant = flow.toGrant;
      flow.toGrant = 0;
      this.#control(from, KIND_CREDIT, channel, grant);
    }
  }

  /** Tells every peer that `channel` ended here (a graceful leave of that channel only). */
  async endChannel(channel: number): Promise<void> {
    if (this.#stopped || this.#failed) return;
    await Promise.all(this.#peers().map((peer) => this.#sendControl(peer, KIND_END, channel, 0)));
  }

  /**
   * Aborts everything: the transport underneath closes with the reason, so every peer learns it.
   * The first abort's reason holds: failing the other channels makes each of them abort too,
   * with only the CLOSED that wraps it, and it is they that reach the transport first.
   */
  async abort(error: TransportError, reason: Error | undefined): Promise<void> {
    this.#abortReason ??= reason ?? error;
    this.#failAll(error);
    await this.inner.close(this.#abortReason);
  }

  /**
   * Ends every channel here and waits until every peer has ended every channel too, so that no
   * control message of this mux is left unread on the transport for whoever reads it next (each
   * peer sends nothing of this mux after its ends, and its transport keeps order).
   */
  async stop(timeoutMs: number): Promise<void> {
    if (this.#stopped) return;
    await Promise.all(this.subs.map((s) => s.close()));
    const peers = this.#peers();
    const allEnded = () => this.#failed !== undefined || this.subs.every((s) => peers.every((p) => s.hasEndedPeer(p)));
    if (!allEnded()) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.#endWaiters.delete(check);
          reject(transportError('TIMEOUT', `the other parties did not close their sub-channels within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (!allEnded()) return;
          clearTimeout(timer);
          this.#endWaiters.delete(check);
          resolve();
        };
        this.#endWaiters.add(check);
      });
    }
    this.#stopped = true;
    this.#stop.abort();
    // Its owner closing the transport underneath (gracefully) while the channels close is not a
    // failure of the close: nothing is left on the transport for anyone to read.
    if (this.#failed && !this.#innerClosedGracefully) throw this.#failed;
  }

  /** The transport underneath closed without a reason (its owner closed it). */
  #innerClosedGracefully = false;

  /** Woken when a peer ends a channel (or everything fails). */
  readonly #endWaiters = new Set<() => void>();

  #wakeEndWaiters(): void {
    for (const w of [...this.#endWaiters]) w();
  }

  #peers(): readonly number[] {
    return this.peers;
  }

  #control(peer: number, kind: number, channel: number, value: number): void {
    void this.#sendControl(peer, kind, channel, value).catch(() => {
      // A control message fails only when the transport is failing; the pump reports that.
    });
  }

  #sendControl(peer: number, kind: number, channel: number, value: number): Promise<void> {
    const m = new Uint8Array(CONTROL_BYTES);
    m[0] = CONTROL;
    m[1] = kind;
    m[2] = channel;
    new DataView(m.buffer).setUint32(3, value, true);
    return this.inner.send(peer, m);
  }

  async #pump(peer: number): Promise<void> {
    for (;;) {
      let m: Uint8Array;
      try {
        m = await this.inner.recv(peer, { timeoutMs: Infinity, signal: this.#stop.signal });
      } catch (err) {
        if (this.#stopped) return;
        const e = asTransportError(err, `receiving from party ${peer} failed`);
        // A peer that left the whole transport gracefully has ended every channel.
        if (e.code === 'PEER_DISCONNECTED' && e.remote === undefined) {
          for (const sub of this.subs) sub.ended(peer);
          this.#wakeEndWaiters();
          return;
        }
        this.#failAll(e);
        return;
      }
      const problem = this.#dispatch(peer, m);
      if (problem) {
        const error = transportError('PROTOCOL_ERROR', `party ${peer} broke the sub-channel framing: ${problem}`, peer);
        this.#failAll(error);
        void this.inner.close(error);
        return;
      }
    }
  }

  /** Hands one message from `peer` to its channel; returns what is wrong with it, if anything. */
  #dispatch(peer: number, m: Uint8Array): string | undefined {
    if (m.byteLength === 0) return 'an empty message';
    const tag = m[0]!;
    if (tag === CONTROL) {
      if (m.byteLength !== CONTROL_BYTES) return 'a control message of the wrong size';
      const kind = m[1]!;
      const channel = m[2]!;
      if (channel >= this.subs.length) return `a control message for sub-channel ${channel}, of ${this.subs.length}`;
      const value = new DataView(m.buffer, m.byteOffset, m.byteLength).getUint32(3, true);
      if (kind === KIND_CREDIT) {
        const flow = this.flows[channel]![peer]!;
        if (value > flow.outstanding) return `credit for more bytes than were sent on sub-channel ${channel}`;
        flow.outstanding -= value;
        for (const wake of [...this.#creditWaiters]) wake();
        return undefined;
      }
      if (kind === KIND_END) {
        this.subs[channel]!.ended(peer);
        this.#wakeEndWaiters();
        return undefined;
      }
      return `an unknown control message (${kind})`;
    }
    if (tag >= this.subs.length) return `a message for sub-channel ${tag}, of ${this.subs.length}`;
    const flow = this.flows[tag]![peer]!;
    const size = m.byteLength - 1;
    // Within the window, or a lone message larger than it.
    if (flow.queued > 0 && flow.queued + size > this.window) return `more than the window on sub-channel ${tag}`;
    flow.queued += size;
    this.subs[tag]!.arrive(peer, m.subarray(1));
    return undefined;
  }

  /** Why the first abort here happened (see {@link abort}). */
  #abortReason: Error | undefined;

  #failAll(error: TransportError): void {
    if (this.#failed) return;
    this.#failed = error;
    this.#stop.abort();
    for (const sub of this.subs) sub.failWith(error);
    this.#wakeEndWaiters();
  }
}

function asTransportError(err: unknown, fallback: string): TransportError {
  return err instanceof TransportError ? err : transportError('CLOSED', fallback, undefined, err);
}

/**
 * Splits `transport` into `options.channels` sub-channels (see the module docs). Every party of
 * the transport must split it into the same number of channels, and nothing else may read from
 * it while the sub-channels are in use.
 */
export function splitTransport(transport: Transport, options: SplitOptions): Mux {
  const { channels } = options;
  if (!Number.isSafeInteger(channels) || channels < 1 || channels > MAX_CHANNELS) {
    throw transportError('INVALID_ARGUMENT', `channels must be an integer in [1, ${MAX_CHANNELS}]`);
  }
  if (options.windowBytes !== undefined && !(Number.isSafeInteger(options.windowBytes) && options.windowBytes > 0)) {
    throw transportError('INVALID_ARGUMENT', 'windowBytes must be a positive integer');
  }
  const { peers } = options;
  if (
    peers !== undefined &&
    (!Array.isArray(peers) ||
      peers.length === 0 ||
      new Set(peers).size !== peers.length ||
      !peers.every((p) => Number.isInteger(p) && p >= 0 && p < transport.parties && p !== transport.party))
  ) {
    throw transportError('INVALID_ARGUMENT', `peers must list distinct other parties in [0, ${transport.parties})`);
  }
  const hub = new Hub(transport, options);
  return { channels: hub.subs, close: (timeoutMs = 10_000) => hub.stop(timeoutMs) };
}

export type { RecvOptions };
