/**
 * Messages of any size over media that carry bounded frames (WebRTC data channels, WebSockets,
 * a relay): chunking, reassembly, backpressure, keepalive, and the goodbye that tells a graceful
 * close from a crash.
 *
 * Wire format, one frame per medium message (multi-byte integers big-endian):
 *
 * | type | layout                                   | meaning                                   |
 * |------|------------------------------------------|-------------------------------------------|
 * | 0x01 | type, u32 length-hi, u32 length-lo, data | first chunk of a message of `length` bytes |
 * | 0x02 | type, data                               | next chunk of the message in progress      |
 * | 0x03 | type                                     | keepalive (no message)                     |
 * | 0x04 | type, u8 kind (0 graceful, 1 abort)      | goodbye: the sender is closing             |
 * | 0x05 | type                                     | goodbye received (answer to a graceful 0x04) |
 *
 * A graceful close waits (bounded) for each peer's 0x05 before closing the medium: the peer has
 * then read everything sent before the goodbye, which a closing data channel does not promise
 * (libdatachannel may drop in-flight data when a channel closes).
 *
 * Every frame that breaks this (unknown type, a chunk with no message in progress, a new message
 * before the last one is complete, data beyond the announced length, a length above
 * `maxMessageBytes`) is a `PROTOCOL_ERROR`. The receiver never allocates from the length header:
 * it keeps the chunks that actually arrived and joins them once the message is complete, so a
 * lying header costs nothing.
 *
 * Browser-safe: no Node imports.
 */
import type { TransportError } from '../errors.js';
import { BaseTransport, transportError, waitUntil, type TransportOptions } from './base.js';

const FRAME_START = 0x01;
const FRAME_CONTINUE = 0x02;
const FRAME_KEEPALIVE = 0x03;
const FRAME_GOODBYE = 0x04;
const FRAME_GOODBYE_ACK = 0x05;
const START_HEADER_BYTES = 9;
const GOODBYE_GRACEFUL = 0;
const GOODBYE_ABORT = 1;

/** One peer's frame pipe, as a medium adapter sees it. */
export interface FrameLink {
  /** Queues one frame; never blocks. Throws if the medium is closed. */
  send(frame: Uint8Array<ArrayBuffer>): void;
  /** Bytes queued in the medium and not yet handed to the network. */
  readonly bufferedAmount: number;
  /**
   * Calls `wake` when the medium's queue drains (e.g. `bufferedamountlow`); returns a remover.
   * Absent when the medium has no such event: then the sender polls `bufferedAmount`.
   */
  onDrain?: ((wake: () => void) => () => void) | undefined;
  /** Releases the medium. `graceful`: let queued frames go first (bounded by `timeoutMs`). */
  close(graceful: boolean, timeoutMs: number): Promise<void>;
}

export interface FramedOptions extends TransportOptions {
  /** Frame size (bytes, header included). Default 64 KiB: under every data channel's limit. */
  chunkBytes?: number;
  /** `send` waits while more than this many bytes are queued in a link. Default 1 MiB. */
  highWaterBytes?: number;
  /** Send a keepalive on a link idle for this long (ms); 0 disables keepalives. Default 2000. */
  keepaliveMs?: number;
  /**
   * A peer heard nothing from for this long (ms) counts as disconnected (crashed, or its network
   * died without a close). 0 disables. Default 20000. Must comfortably exceed the longest time a
   * peer's event loop may stay blocked (e.g. in a long synchronous Wasm call), since a blocked
   * peer sends no keepalives.
   */
  peerTimeoutMs?: number;
  /** Upper bound (ms) on flushing queued frames on a graceful close. Default 5000. */
  closeTimeoutMs?: number;
}

function nonNegative(value: number | undefined, fallback: number, name: string, min = 0): number {
  if (value === undefined) return fallback;
  if (!(typeof value === 'number' && value >= min && Number.isFinite(value))) {
    throw transportError('INVALID_ARGUMENT', `${name} must be a finite number >= ${min}`);
  }
  return value;
}

interface Reassembly {
  expected: number;
  received: number;
  chunks: Uint8Array[];
}

interface LinkState {
  link: FrameLink;
  lastHeard: number;
  lastSent: number;
}

/**
 * A transport over per-peer {@link FrameLink}s. Medium adapters create it, then
 * {@link attach} each link as it opens and feed it frames with {@link receiveFrame}
 * and closures with {@link linkClosed}.
 */
export class FramedTransport extends BaseTransport {
  private readonly chunkBytes: number;
  private readonly highWaterBytes: number;
  private readonly keepaliveMs: number;
  private readonly peerTimeoutMs: number;
  private readonly closeTimeoutMs: number;
  private readonly links = new Map<number, LinkState>();
  /** The links being closed, still answering goodbyes. */
  private closingLinks = new Map<number, LinkState>();
  private readonly reassembly = new Map<number, Reassembly>();
  /** Per peer, the tail of the send queue: a message's chunks must not interleave with another's. */
  private readonly sendTails = new Map<number, Promise<void>>();
  private readonly goodbyes = new Set<number>();
  /** Peers that acknowledged our graceful goodbye, or whose link is gone: no need to wait. */
  private readonly settledPeers = new Set<number>();
  private readonly settledListeners = new Set<() => void>();
  private readonly ticker: ReturnType<typeof setInterval> | undefined;
  /** Extra teardown of the medium (peer connections, sockets), run after the links close. */
  private readonly releaseHooks: ((graceful: boolean) => void | Promise<void>)[] = [];

  constructor(party: number, parties: number, options: FramedOptions = {}) {
    super(party, parties, options);
    this.chunkBytes = nonNegative(options.chunkBytes, 64 * 1024, 'chunkBytes', START_HEADER_BYTES + 1);
    this.highWaterBytes = nonNegative(options.highWaterBytes, 1024 * 1024, 'highWaterBytes', 1);
    this.keepaliveMs = nonNegative(options.keepaliveMs, 2_000, 'keepaliveMs');
    this.peerTimeoutMs = nonNegative(options.peerTimeoutMs, 20_000, 'peerTimeoutMs');
    this.closeTimeoutMs = nonNegative(options.closeTimeoutMs, 5_000, 'closeTimeoutMs');
    const period = Math.min(this.keepaliveMs || Infinity, this.peerTimeoutMs / 4 || Infinity);
    if (Number.isFinite(period)) this.ticker = setInterval(() => this.tick(), Math.max(10, period));
  }

  /** Starts using `link` for `peer`. Frames that arrived on it before are the adapter's to replay. */
  attach(peer: number, link: FrameLink): void {
    if (this.isClosed) {
      void link.close(false, 0);
      return;
    }
    const now = Date.now();
    this.links.set(peer, { link, lastHeard: now, lastSent: now });
  }

  /** Registers teardown that must run when the transport closes (after the links). */
  addReleaseHook(hook: (graceful: boolean) => void | Promise<void>): void {
    this.releaseHooks.push(hook);
  }

  /** Closes the transport because the medium failed as a whole (e.g. a relay broke its rules). */
  abort(error: TransportError): void {
    this.fail(error);
  }

  /** Whether every peer has an attached link. */
  get complete(): boolean {
    return this.links.size === this.parties - 1;
  }

  /** A frame from `peer`. `frame` must not be reused by the caller (chunks are kept as is). */
  receiveFrame(peer: number, frame: Uint8Array): void {
    if (this.isClosed) {
      this.receiveWhileClosing(peer, frame);
      return;
    }
    const state = this.links.get(peer);
    if (state) state.lastHeard = Date.now();
    const error = this.parseFrame(peer, frame);
    if (error) this.fail(error);
  }

  /** The medium to `peer` closed (or failed). A crash unless the peer said goodbye first. */
  linkClosed(peer: number, cause?: unknown): void {
    this.settle(peer);
    if (this.isClosed || this.goodbyes.has(peer)) return;
    this.fail(transportError('PEER_DISCONNECTED', `connection to party ${peer} closed`, peer, cause));
  }

  private parseFrame(peer: number, frame: Uint8Array): TransportError | undefined {
    const bad = (what: string) => transportError('PROTOCOL_ERROR', `party ${peer} sent a malformed frame: ${what}`, peer);
    if (this.goodbyes.has(peer)) return bad('data after goodbye');
    const type = frame[0];
    const inProgress = this.reassembly.get(peer);
    switch (type) {
      case FRAME_START: {
        if (inProgress) return bad('new message before the previous one completed');
        if (frame.byteLength < START_HEADER_BYTES) return bad('short header');
        const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
        const hi = view.getUint32(1);
        const lo = view.getUint32(5);
        // hi >= 2^21 would exceed 2^53 (and any sane maximum); compare before combining.
        if (hi >= 0x200000) return bad('length header above the maximum message size');
        const expected = hi * 0x1_0000_0000 + lo;
        if (expected > this.options.maxMessageBytes) return bad('length header above the maximum message size');
        const data = frame.subarray(START_HEADER_BYTES);
        if (data.byteLength > expected) return bad('more data than the announced length');
        if (data.byteLength === expected) {
          // The common small message: no copy when the frame is exactly the message.
          this.deliver(peer, data);
          return undefined;
        }
        this.reassembly.set(peer, { expected, received: data.byteLength, chunks: data.byteLength ? [data] : [] });
        return undefined;
      }
      case FRAME_CONTINUE: {
        if (!inProgress) return bad('continuation without a message in progress');
        const data = frame.subarray(1);
        if (data.byteLength === 0) return bad('empty continuation');
        if (inProgress.received + data.byteLength > inProgress.expected) return bad('more data than the announced length');
        inProgress.chunks.push(data);
        inProgress.received += data.byteLength;
        if (inProgress.received === inProgress.expected) {
          this.reassembly.delete(peer);
          this.deliver(peer, concat(inProgress.chunks, inProgress.expected));
        }
        return undefined;
      }
      case FRAME_KEEPALIVE:
        return frame.byteLength === 1 ? undefined : bad('keepalive with a payload');
      case FRAME_GOODBYE: {
        if (frame.byteLength !== 2) return bad('goodbye of the wrong length');
        if (inProgress) return bad('goodbye in the middle of a message');
        const kind = frame[1];
        if (kind === GOODBYE_ABORT) {
          return transportError('PEER_DISCONNECTED', `party ${peer} aborted the session`, peer);
        }
        if (kind !== GOODBYE_GRACEFUL) return bad('unknown goodbye kind');
        this.goodbyes.add(peer);
        this.acknowledgeGoodbye(peer);
        this.peerEnded(peer);
        return undefined;
      }
      case FRAME_GOODBYE_ACK:
        // Only valid while we are closing, which is handled before parsing.
        return bad('goodbye acknowledgement while open');
      default:
        return bad('unknown frame type');
    }
  }

  /** While closing, only the goodbye handshake matters; data is dropped. */
  private receiveWhileClosing(peer: number, frame: Uint8Array): void {
    if (frame.byteLength === 1 && frame[0] === FRAME_GOODBYE_ACK) this.settle(peer);
    else if (frame.byteLength === 2 && frame[0] === FRAME_GOODBYE) {
      // Both sides closing at once: each answers the other's goodbye, so neither waits in vain.
      this.acknowledgeGoodbye(peer);
      this.settle(peer);
    }
  }

  private acknowledgeGoodbye(peer: number): void {
    const state = this.links.get(peer) ?? this.closingLinks.get(peer);
    try {
      state?.link.send(Uint8Array.of(FRAME_GOODBYE_ACK));
    } catch {
      // The link is gone; the peer stops waiting at its link's close or its deadline.
    }
  }

  private settle(peer: number): void {
    this.settledPeers.add(peer);
    for (const wake of [...this.settledListeners]) wake();
  }

  protected sendMessage(to: number, data: Uint8Array): Promise<void> {
    const previous = this.sendTails.get(to) ?? Promise.resolve();
    const sent = previous.then(() => this.writeMessage(to, data));
    // The queue's tail must never reject (nobody awaits it); each caller gets `sent` itself.
    this.sendTails.set(
      to,
      sent.catch(() => {}),
    );
    return sent;
  }

  private async writeMessage(to: number, data: Uint8Array): Promise<void> {
    const state = this.links.get(to);
    if (this.closeError) throw this.closeError;
    if (!state) throw transportError('PEER_DISCONNECTED', `no connection to party ${to}`, to);
    if (this.hasEnded(to)) throw transportError('PEER_DISCONNECTED', `party ${to} has left the session`, to);
    const { link } = state;
    const length = data.byteLength;
    let offset = 0;
    let first = true;
    do {
      if (link.bufferedAmount > this.highWaterBytes) await this.drain(to, link);
      if (this.closeError) throw this.closeError;
      const header = first ? START_HEADER_BYTES : 1;
      const take = Math.min(this.chunkBytes - header, length - offset);
      const frame = new Uint8Array(header + take);
      if (first) {
        frame[0] = FRAME_START;
        const view = new DataView(frame.buffer);
        view.setUint32(1, Math.floor(length / 0x1_0000_0000));
        view.setUint32(5, length >>> 0);
      } else {
        frame[0] = FRAME_CONTINUE;
      }
      // A copy: the caller may reuse `data` once send resolves, while the medium may still hold
      // the frame.
      frame.set(data.subarray(offset, offset + take), header);
      this.sendFrame(to, state, frame);
      offset += take;
      first = false;
    } while (offset < length);
  }

  private sendFrame(to: number, state: LinkState, frame: Uint8Array<ArrayBuffer>): void {
    try {
      state.link.send(frame);
      state.lastSent = Date.now();
    } catch (cause) {
      const error = transportError('PEER_DISCONNECTED', `connection to party ${to} failed while sending`, to, cause);
      this.fail(error);
      throw error;
    }
  }

  private drain(peer: number, link: FrameLink): Promise<void> {
    // Resume at a quarter of the high-water mark: large enough to keep the pipe busy, small
    // enough that resuming does not immediately block again.
    const low = this.highWaterBytes / 4;
    return waitUntil(() => link.bufferedAmount <= low, {
      timeoutMs: this.options.sendTimeoutMs,
      // With a drain event, polling is only a safety net (some stacks skip the event).
      pollMs: link.onDrain ? 25 : 2,
      subscribe: link.onDrain,
      onClosing: (listener) => this.onClosing(listener),
      closedError: () => this.closeError,
      timeoutError: () => {
        const error = transportError('TIMEOUT', `party ${peer} accepted no data for ${this.options.sendTimeoutMs} ms`, peer);
        this.fail(error);
        return error;
      },
    });
  }

  private tick(): void {
    if (this.isClosed) return;
    const now = Date.now();
    for (const [peer, state] of this.links) {
      if (this.goodbyes.has(peer)) continue;
      if (this.peerTimeoutMs > 0 && now - state.lastHeard > this.peerTimeoutMs) {
        this.fail(transportError('PEER_DISCONNECTED', `party ${peer} silent for ${this.peerTimeoutMs} ms`, peer));
        return;
      }
      // Only on an idle link: data frames already prove we are alive, and a keepalive queued
      // behind megabytes of data would prove nothing.
      if (this.keepaliveMs > 0 && now - state.lastSent >= this.keepaliveMs && state.link.bufferedAmount === 0) {
        try {
          state.link.send(Uint8Array.of(FRAME_KEEPALIVE));
          state.lastSent = now;
        } catch (cause) {
          this.linkClosed(peer, cause);
          return;
        }
      }
    }
  }

  protected async release(graceful: boolean): Promise<void> {
    if (this.ticker !== undefined) clearInterval(this.ticker);
    const goodbye = Uint8Array.of(FRAME_GOODBYE, graceful ? GOODBYE_GRACEFUL : GOODBYE_ABORT);
    this.closingLinks = new Map(this.links);
    this.links.clear();
    this.reassembly.clear();
    for (const [peer, { link }] of this.closingLinks) {
      try {
        link.send(goodbye);
      } catch {
        // The link is already gone: nothing to tell.
        this.settle(peer);
      }
    }
    if (graceful) {
      // Wait (bounded) until every peer confirmed it read up to our goodbye.
      const peers = [...this.closingLinks.keys()];
      await new Promise<void>((resolve) => {
        const check = () => {
          if (peers.every((p) => this.settledPeers.has(p))) finish();
        };
        const finish = () => {
          clearTimeout(timer);
          this.settledListeners.delete(check);
          resolve();
        };
        const timer = setTimeout(finish, this.closeTimeoutMs);
        this.settledListeners.add(check);
        check();
      });
    }
    const closing = [...this.closingLinks.values()].map(({ link }) => link.close(graceful, this.closeTimeoutMs).catch(() => {}));
    await Promise.all(closing);
    this.closingLinks.clear();
    for (const hook of this.releaseHooks.splice(0)) {
      try {
        await hook(graceful);
      } catch {
        // Best effort, like the links.
      }
    }
  }
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Frame constants for tests that inject hand-made frames. */
export const FRAME_TYPES = {
  START: FRAME_START,
  CONTINUE: FRAME_CONTINUE,
  KEEPALIVE: FRAME_KEEPALIVE,
  GOODBYE: FRAME_GOODBYE,
  GOODBYE_ACK: FRAME_GOODBYE_ACK,
} as const;
