/**
 * Messages of any size over media that carry bounded frames (WebRTC data channels, WebSockets,
 * a relay): chunking, reassembly, flow control, backpressure, keepalive, and the goodbye that
 * tells a graceful close from an abort (with its reason) and from a crash.
 *
 * Wire format, one frame per medium message (multi-byte integers big-endian):
 *
 * | type | layout                                   | meaning                                   |
 * |------|------------------------------------------|-------------------------------------------|
 * | 0x01 | type, u32 length-hi, u32 length-lo, data | first chunk of a message of `length` bytes |
 * | 0x02 | type, data                               | next chunk of the message in progress      |
 * | 0x03 | type                                     | keepalive (no message)                     |
 * | 0x04 | type, 0x00                               | goodbye: the sender closes gracefully      |
 * | 0x04 | type, 0x01, u8 n, code[n], u16 m, text[m] | abort: the sender closes because of an error (code: ASCII `[A-Z0-9_]`, text: UTF-8, both short and non-secret) |
 * | 0x05 | type                                     | goodbye received (answer to a graceful 0x04) |
 * | 0x06 | type, u32 grant-hi, u32 grant-lo         | flow-control credit: the sender of this frame may be sent `grant` more bytes |
 *
 * A graceful close waits (bounded) for each peer's 0x05 before closing the medium: the peer has
 * then read everything sent before the goodbye, which a closing data channel does not promise
 * (libdatachannel may drop in-flight data when a channel closes). An abort sends its reason and
 * waits (at most 500 ms) until each peer answered with its own abort or its link closed, so the
 * peers learn why within a round trip instead of from a bare disconnection.
 *
 * ## Flow control (receive side)
 * Each direction has a window: the receiver holds at most `receiveWindowBytes` of a peer's data
 * that no `recv` has taken. A sender starts with {@link INITIAL_WINDOW_BYTES} of credit (so small
 * messages need no round trip), the receiver grants the rest of its window when the link opens,
 * and grants again as `recv` takes messages (0x06). Data is charged by its bytes plus
 * {@link MESSAGE_OVERHEAD_BYTES} per message, so a flood of empty messages is bounded too.
 * A sender waits for credit (backpressure reaches the sending app, bounded by `sendTimeoutMs`);
 * a peer that sends beyond its credit is misbehaving, and the transport closes with
 * `PROTOCOL_ERROR` — so a flooding peer costs at most one window of memory.
 *
 * One exception keeps single large messages from deadlocking: when a message is larger than the
 * window and nothing else from that peer waits to be taken, the receiver grants what that message
 * still needs (it knows its length from the header, already checked against `maxMessageBytes`).
 * So, per peer, memory is bounded by the window plus one message of at most `maxMessageBytes`,
 * and a message always goes through once the previous ones are taken — the same rule as the
 * in-memory transport.
 *
 * Every frame that breaks this (unknown type, a chunk with no message in progress, a new message
 * before the last one is complete, data beyond the announced length, a length above
 * `maxMessageBytes`, data beyond the credit) is a `PROTOCOL_ERROR`. The receiver allocates nothing
 * from a length header alone: it keeps the chunks that actually arrived, and only once
 * {@link ASSEMBLE_IN_PLACE_BYTES} (1 MiB) of a message did, allocates the whole message and copies
 * each further frame straight into it. A lying header so costs what actually arrived below 1 MiB,
 * and at most one message (within the bound above) past it; a large message is copied once, as
 * it arrives, rather than kept in frames and joined in a second pass at the end (that pass alone
 * took 130–170 ms of the receiver's CPU per 64 MiB message on the 2-core test VM).
 *
 * ## Silence
 * Each side sends a keepalive on a link idle for `keepaliveMs` (default 1 s) and declares a peer
 * it has heard nothing from for `peerTimeoutMs` (default 3 s) disconnected: a peer that was killed,
 * or whose network died, is noticed within about 3–4 s. If this party's own event loop was
 * stalled (a timer ran late), peers are not blamed for the silence it caused: the check waits one
 * more period, so the frames that arrived meanwhile are read first. A *peer* blocked for longer
 * than `peerTimeoutMs` (a long synchronous computation on its main thread, or a browser tab whose
 * timers are throttled to once a minute) is indistinguishable from a dead one: raise the timeout
 * on both sides for such setups.
 *
 * Browser-safe: no Node imports.
 */
import type { RemoteCloseReason, TransportError } from '../errors.js';
import { BaseTransport, peerAbortError, transportError, waitUntil, type TransportOptions } from './base.js';
import { traceClock, traceCount, TRACING } from '../trace.js';

const FRAME_START = 0x01;
const FRAME_CONTINUE = 0x02;
const FRAME_KEEPALIVE = 0x03;
const FRAME_GOODBYE = 0x04;
const FRAME_GOODBYE_ACK = 0x05;
const FRAME_CREDIT = 0x06;
const START_HEADER_BYTES = 9;
const CREDIT_BYTES = 9;
const GOODBYE_GRACEFUL = 0;
const GOODBYE_ABORT = 1;
/** Longest code and text an abort frame carries (bytes). */
const ABORT_CODE_MAX_BYTES = 32;
const ABORT_TEXT_MAX_BYTES = 800;

/** Credit every sender starts with, before the receiver's first grant. Part of the wire protocol. */
export const INITIAL_WINDOW_BYTES = 256 * 1024;
/** Flow-control cost of a message beyond its bytes (bounds the memory of many empty messages). */
export const MESSAGE_OVERHEAD_BYTES = 64;
/** Default {@link FramedOptions.receiveWindowBytes}. */
export const DEFAULT_RECEIVE_WINDOW_BYTES = 8 * 1024 * 1024;
/** Credits are exact JS numbers; a peer granting beyond this is broken. */
const MAX_CREDIT = 2 ** 52;
/**
 * Bytes of a message that must have arrived before its buffer is allocated from its length header
 * and the rest is assembled in place. Below that, chunks are kept and joined at the end, so a
 * length header that lies costs only what actually arrived.
 */
const ASSEMBLE_IN_PLACE_BYTES = 1024 * 1024;
/** Longest an abort waits for its peers to have its reason before the medium is closed (ms). */
const ABORT_FLUSH_MS = 500;

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
  /**
   * Most bytes of one peer's messages held here before a `recv` takes them; the peer's sends wait
   * beyond that (see "Flow control" above). Default 8 MiB; at least
   * {@link INITIAL_WINDOW_BYTES}.
   */
  receiveWindowBytes?: number;
  /** Send a keepalive on a link idle for this long (ms); 0 disables keepalives. Default 1000. */
  keepaliveMs?: number;
  /**
   * A peer heard nothing from for this long (ms) counts as disconnected (killed, or its network
   * died without a close). 0 disables. Default 3000. Must exceed the peer's `keepaliveMs` and the
   * longest time a peer's event loop may stay blocked (e.g. in a long synchronous Wasm call),
   * since a blocked peer sends no keepalives. Set it alike on every party.
   */
  peerTimeoutMs?: number;
  /** Upper bound (ms) on flushing queued frames on a graceful close. Default 5000. */
  closeTimeoutMs?: number;
}

/** Defaults of the {@link FramedOptions} timing options (ms). */
export const FRAMED_DEFAULTS = { keepaliveMs: 1_000, peerTimeoutMs: 3_000, closeTimeoutMs: 5_000 } as const;

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
  /** The frames' data so far, until {@link buffer} exists. */
  chunks: Uint8Array[];
  /** The whole message, allocated once {@link ASSEMBLE_IN_PLACE_BYTES} of it arrived. */
  buffer: Uint8Array | undefined;
  /** Credit granted beyond the window so this message can complete. */
  extra: number;
}

interface LinkState {
  link: FrameLink;
  lastHeard: number;
  lastSent: number;
}

/** Flow-control state of one peer, both directions. */
interface Flow {
  /** Bytes we may still send to the peer. */
  sendAllowance: number;
  /** Bytes the peer may still send to us. */
  recvAllowance: number;
  /** Credit earned by consumed messages and not yet granted (batched). */
  pendingCredit: number;
  /** Messages delivered and not yet taken by `recv`, in order: their cost and extra credit. */
  delivered: { cost: number; extra: number }[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An abort frame carrying `reason` (code and text cut to their maximum lengths). */
function abortFrame(reason: RemoteCloseReason): Uint8Array<ArrayBuffer> {
  const code = encoder.encode(reason.code).subarray(0, ABORT_CODE_MAX_BYTES);
  let text = encoder.encode(reason.message);
  if (text.byteLength > ABORT_TEXT_MAX_BYTES) text = encoder.encode(reason.message.slice(0, ABORT_TEXT_MAX_BYTES / 4));
  const frame = new Uint8Array(3 + code.byteLength + 2 + text.byteLength);
  frame[0] = FRAME_GOODBYE;
  frame[1] = GOODBYE_ABORT;
  frame[2] = code.byteLength;
  frame.set(code, 3);
  const at = 3 + code.byteLength;
  frame[at] = text.byteLength >>> 8;
  frame[at + 1] = text.byteLength & 0xff;
  frame.set(text, at + 2);
  return frame;
}

/** The reason in an abort frame, or undefined if the frame is malformed. */
function parseAbort(frame: Uint8Array): RemoteCloseReason | undefined {
  if (frame.byteLength < 5) return undefined;
  const codeLength = frame[2]!;
  if (codeLength > ABORT_CODE_MAX_BYTES || frame.byteLength < 3 + codeLength + 2) return undefined;
  const at = 3 + codeLength;
  const textLength = (frame[at]! << 8) | frame[at + 1]!;
  if (textLength > ABORT_TEXT_MAX_BYTES || frame.byteLength !== at + 2 + textLength) return undefined;
  return {
    code: decoder.decode(frame.subarray(3, at)),
    message: decoder.decode(frame.subarray(at + 2)),
  };
}

function u64Frame(type: number, value: number): Uint8Array<ArrayBuffer> {
  const frame = new Uint8Array(START_HEADER_BYTES);
  frame[0] = type;
  const view = new DataView(frame.buffer);
  view.setUint32(1, Math.floor(value / 0x1_0000_0000));
  view.setUint32(5, value >>> 0);
  return frame;
}

/** The u64 after the type byte, or undefined if it exceeds 2^53 (hi >= 2^21). */
function readU64(frame: Uint8Array): number | undefined {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const hi = view.getUint32(1);
  if (hi >= 0x200000) return undefined;
  return hi * 0x1_0000_0000 + view.getUint32(5);
}

/**
 * A transport over per-peer {@link FrameLink}s. Medium adapters create it, then
 * {@link attach} each link as it opens and feed it frames with {@link receiveFrame}
 * and closures with {@link linkClosed}.
 */
export class FramedTransport extends BaseTransport {
  private readonly chunkBytes: number;
  private readonly highWaterBytes: number;
  private readonly windowBytes: number;
  private readonly keepaliveMs: number;
  private readonly peerTimeoutMs: number;
  private readonly closeTimeoutMs: number;
  private readonly links = new Map<number, LinkState>();
  /** The links being closed, still answering goodbyes. */
  private closingLinks = new Map<number, LinkState>();
  private readonly reassembly = new Map<number, Reassembly>();
  private readonly flows: Flow[];
  /** Senders waiting for credit, woken when any arrives. */
  private readonly creditListeners = new Set<() => void>();
  /** Per peer, the tail of the send queue: a message's chunks must not interleave with another's. */
  private readonly sendTails = new Map<number, Promise<void>>();
  private readonly goodbyes = new Set<number>();
  /** Peers that acknowledged our graceful goodbye, left gracefully, or whose link is gone: no need to wait. */
  private readonly settledPeers = new Set<number>();
  private readonly settledListeners = new Set<() => void>();
  private readonly ticker: ReturnType<typeof setInterval> | undefined;
  private readonly tickPeriod: number;
  private lastTick = Date.now();
  /** Extra teardown of the medium (peer connections, sockets), run after the links close. */
  private readonly releaseHooks: ((graceful: boolean) => void | Promise<void>)[] = [];

  constructor(party: number, parties: number, options: FramedOptions = {}) {
    super(party, parties, options);
    this.chunkBytes = nonNegative(options.chunkBytes, 64 * 1024, 'chunkBytes', START_HEADER_BYTES + 1);
    this.highWaterBytes = nonNegative(options.highWaterBytes, 1024 * 1024, 'highWaterBytes', 1);
    this.windowBytes = nonNegative(options.receiveWindowBytes, DEFAULT_RECEIVE_WINDOW_BYTES, 'receiveWindowBytes', INITIAL_WINDOW_BYTES);
    this.keepaliveMs = nonNegative(options.keepaliveMs, FRAMED_DEFAULTS.keepaliveMs, 'keepaliveMs');
    this.peerTimeoutMs = nonNegative(options.peerTimeoutMs, FRAMED_DEFAULTS.peerTimeoutMs, 'peerTimeoutMs');
    this.closeTimeoutMs = nonNegative(options.closeTimeoutMs, FRAMED_DEFAULTS.closeTimeoutMs, 'closeTimeoutMs');
    this.flows = Array.from({ length: parties }, () => ({
      sendAllowance: INITIAL_WINDOW_BYTES,
      recvAllowance: INITIAL_WINDOW_BYTES,
      pendingCredit: 0,
      delivered: [],
    }));
    // Keepalives go out every keepaliveMs (to within half of it) on idle links, and silence is
    // judged to within a quarter of peerTimeoutMs.
    const period = Math.min(this.keepaliveMs / 2 || Infinity, this.peerTimeoutMs / 4 || Infinity);
    this.tickPeriod = Number.isFinite(period) ? Math.max(10, period) : 0;
    if (this.tickPeriod > 0) this.ticker = setInterval(() => this.tick(), this.tickPeriod);
  }

  /** Starts using `link` for `peer`. Frames that arrived on it before are the adapter's to replay. */
  attach(peer: number, link: FrameLink): void {
    if (this.isClosed) {
      void link.close(false, 0);
      return;
    }
    const now = Date.now();
    const state: LinkState = { link, lastHeard: now, lastSent: now };
    this.links.set(peer, state);
    // The rest of our window, beyond what every sender may assume.
    if (this.windowBytes > INITIAL_WINDOW_BYTES) this.grant(peer, this.windowBytes - INITIAL_WINDOW_BYTES);
    // A large message may have started before the link was ours (relay).
    this.grantForLargeMessage(peer);
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
    traceCount('framed.framesReceived');
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
    const flow = this.flows[peer]!;
    /** Charges `cost` to the peer's credit; false if it has not that much. */
    const charge = (cost: number): boolean => {
      if (cost > flow.recvAllowance) return false;
      flow.recvAllowance -= cost;
      return true;
    };
    // The length was accepted (at most maxMessageBytes), but this runtime cannot hold it now.
    const noMemory = (length: number) =>
      transportError('PROTOCOL_ERROR', `cannot allocate party ${peer}'s ${length}-byte message`, peer);
    const overrun = () =>
      transportError('PROTOCOL_ERROR', `party ${peer} sent beyond its flow-control window (it ignores backpressure)`, peer);
    switch (type) {
      case FRAME_START: {
        if (inProgress) return bad('new message before the previous one completed');
        if (frame.byteLength < START_HEADER_BYTES) return bad('short header');
        const expected = readU64(frame);
        if (expected === undefined || expected > this.nextMessageLimit(peer)) {
          return bad('length header above the maximum message size');
        }
        this.messageStarted(peer);
        const data = frame.subarray(START_HEADER_BYTES);
        if (data.byteLength > expected) return bad('more data than the announced length');
        if (!charge(MESSAGE_OVERHEAD_BYTES + data.byteLength)) return overrun();
        if (data.byteLength === expected) {
          // The common small message: no copy when the frame is exactly the message.
          this.deliverCounted(peer, data, 0);
          return undefined;
        }
        this.reassembly.set(peer, {
          expected,
          received: data.byteLength,
          chunks: data.byteLength ? [data] : [],
          buffer: undefined,
          extra: 0,
        });
        this.grantForLargeMessage(peer);
        return undefined;
      }
      case FRAME_CONTINUE: {
        if (!inProgress) return bad('continuation without a message in progress');
        const data = frame.subarray(1);
        if (data.byteLength === 0) return bad('empty continuation');
        if (inProgress.received + data.byteLength > inProgress.expected) return bad('more data than the announced length');
        // A limit lowered while this message was under way applies to it as well.
        if (inProgress.expected > this.messageLimit) return bad('message above the maximum message size');
        if (!charge(data.byteLength)) return overrun();
        if (inProgress.buffer) {
          inProgress.buffer.set(data, inProgress.received);
        } else {
          inProgress.chunks.push(data);
          if (inProgress.received + data.byteLength >= ASSEMBLE_IN_PLACE_BYTES && inProgress.expected > data.byteLength + inProgress.received) {
            // Enough of it arrived to take the length at its word: from here on each frame is
            // copied once, into the message, as it arrives (no second pass over a large message,
            // and the frames are garbage at once).
            const buffer = allocate(inProgress.expected);
            if (!buffer) return noMemory(inProgress.expected);
            let at = 0;
            for (const chunk of inProgress.chunks) {
              buffer.set(chunk, at);
              at += chunk.byteLength;
            }
            inProgress.chunks = [];
            inProgress.buffer = buffer;
          }
        }
        inProgress.received += data.byteLength;
        if (inProgress.received === inProgress.expected) {
          this.reassembly.delete(peer);
          const message = inProgress.buffer ?? concat(inProgress.chunks, inProgress.expected);
          if (!message) return noMemory(inProgress.expected);
          this.deliverCounted(peer, message, inProgress.extra);
        }
        return undefined;
      }
      case FRAME_KEEPALIVE:
        return frame.byteLength === 1 ? undefined : bad('keepalive with a payload');
      case FRAME_CREDIT: {
        if (frame.byteLength !== CREDIT_BYTES) return bad('credit of the wrong length');
        const grant = readU64(frame);
        if (grant === undefined || grant === 0 || flow.sendAllowance + grant > MAX_CREDIT) return bad('impossible credit');
        flow.sendAllowance += grant;
        for (const wake of [...this.creditListeners]) wake();
        return undefined;
      }
      case FRAME_GOODBYE: {
        if (frame.byteLength >= 2 && frame[1] === GOODBYE_ABORT) {
          // An abort may cut a message short: its reason is what matters now.
          const reason = parseAbort(frame);
          if (!reason) return bad('malformed abort');
          return peerAbortError(peer, reason);
        }
        if (frame.byteLength !== 2) return bad('goodbye of the wrong length');
        if (frame[1] !== GOODBYE_GRACEFUL) return bad('unknown goodbye kind');
        if (inProgress) return bad('goodbye in the middle of a message');
        this.goodbyes.add(peer);
        this.acknowledgeGoodbye(peer);
        // A peer that left has read all it ever will: our own close need not wait for it to
        // confirm our goodbye (its link may linger silent, e.g. a process that exited).
        this.settle(peer);
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

  /** Delivers a whole message, remembering its flow-control cost until `recv` takes it. */
  private deliverCounted(peer: number, message: Uint8Array, extra: number): void {
    this.flows[peer]!.delivered.push({ cost: MESSAGE_OVERHEAD_BYTES + message.byteLength, extra });
    this.deliver(peer, message);
  }

  protected override onConsumed(from: number, _message: Uint8Array): void {
    const flow = this.flows[from]!;
    const entry = flow.delivered.shift();
    if (!entry) return;
    // What the message cost, less what was granted for it beyond the window.
    flow.pendingCredit += entry.cost - entry.extra;
    // Batched: a sender with nothing queued here has at least three quarters of the window, and
    // it cuts its chunks to fit, so it cannot be stuck on credit we are holding back — except
    // on a message larger than that, which grantForLargeMessage handles.
    if (!this.grantForLargeMessage(from) && flow.pendingCredit >= this.windowBytes / 4) this.grant(from, 0);
  }

  /**
   * If a message under way needs more than the peer may still send, and nothing else from the
   * peer is queued, grants what it needs (the pending credit first, then beyond the window).
   * Returns whether it granted.
   */
  private grantForLargeMessage(peer: number): boolean {
    const flow = this.flows[peer]!;
    const partial = this.reassembly.get(peer);
    // Without a link yet (frames can precede it on the relay), the link's first grant comes later.
    if (!partial || this.queuedCount(peer) > 0 || !this.links.has(peer)) return false;
    const need = partial.expected - partial.received - flow.recvAllowance;
    if (need <= 0) return false;
    const extra = Math.max(0, need - flow.pendingCredit);
    partial.extra += extra;
    this.grant(peer, extra);
    return true;
  }

  /** Sends the pending credit plus `extra` to `peer`, if any. */
  private grant(peer: number, extra: number): void {
    const flow = this.flows[peer]!;
    const amount = flow.pendingCredit + extra;
    const state = this.links.get(peer);
    if (amount <= 0 || !state) return;
    flow.pendingCredit = 0;
    flow.recvAllowance += amount;
    traceCount('framed.creditFramesSent');
    try {
      state.link.send(u64Frame(FRAME_CREDIT, amount));
      state.lastSent = Date.now();
    } catch (cause) {
      // Not from inside frame parsing: the caller may still be using the peer's state.
      queueMicrotask(() => this.linkClosed(peer, cause));
    }
  }

  /** While closing, only the goodbye handshake matters; data is dropped. */
  private receiveWhileClosing(peer: number, frame: Uint8Array): void {
    if (frame.byteLength === 1 && frame[0] === FRAME_GOODBYE_ACK) this.settle(peer);
    else if (frame.byteLength >= 2 && frame[0] === FRAME_GOODBYE) {
      // Both sides closing at once: each answers the other's graceful goodbye, so neither waits
      // in vain; an abort needs no answer.
      if (frame.byteLength === 2 && frame[1] === GOODBYE_GRACEFUL) this.acknowledgeGoodbye(peer);
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
    const flow = this.flows[to]!;
    const length = data.byteLength;
    let offset = 0;
    let first = true;
    do {
      if (link.bufferedAmount > this.highWaterBytes) {
        const t0 = TRACING ? traceClock() : 0;
        await this.drain(to, link);
        traceCount('framed.drainWaitMs', TRACING ? traceClock() - t0 : 0);
      }
      const overhead = first ? MESSAGE_OVERHEAD_BYTES : 0;
      // At least one byte of data per chunk (none for an empty message).
      const needed = overhead + Math.min(1, length - offset);
      if (flow.sendAllowance < needed) {
        const t0 = TRACING ? traceClock() : 0;
        await this.awaitCredit(to, needed);
        traceCount('framed.creditWaitMs', TRACING ? traceClock() - t0 : 0);
      }
      if (this.closeError) throw this.closeError;
      const header = first ? START_HEADER_BYTES : 1;
      const take = Math.min(this.chunkBytes - header, length - offset, flow.sendAllowance - overhead);
      const frame = new Uint8Array(header + take);
      if (first) {
        frame.set(u64Frame(FRAME_START, length));
      } else {
        frame[0] = FRAME_CONTINUE;
      }
      // A copy: the caller may reuse `data` once send resolves, while the medium may still hold
      // the frame.
      frame.set(data.subarray(offset, offset + take), header);
      this.sendFrame(to, state, frame);
      flow.sendAllowance -= overhead + take;
      offset += take;
      first = false;
    } while (offset < length);
  }

  private sendFrame(to: number, state: LinkState, frame: Uint8Array<ArrayBuffer>): void {
    traceCount('framed.dataFramesSent');
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

  /** Waits until `peer` has granted at least `needed` bytes of credit. */
  private awaitCredit(peer: number, needed: number): Promise<void> {
    const flow = this.flows[peer]!;
    return waitUntil(() => flow.sendAllowance >= needed, {
      timeoutMs: this.options.sendTimeoutMs,
      // Credit frames wake us; polling is only a safety net.
      pollMs: 250,
      subscribe: (wake) => {
        this.creditListeners.add(wake);
        return () => this.creditListeners.delete(wake);
      },
      onClosing: (listener) => this.onClosing(listener),
      closedError: () => this.closeError,
      timeoutError: () => {
        const error = transportError(
          'TIMEOUT',
          `party ${peer} took none of our messages for ${this.options.sendTimeoutMs} ms (its receive window is full)`,
          peer,
        );
        this.fail(error);
        return error;
      },
    });
  }

  private tick(): void {
    if (this.isClosed) return;
    const now = Date.now();
    // A late tick means this event loop was blocked: frames that arrived meanwhile are still
    // queued behind this timer. Judge silence next time, once they have been read.
    const late = now - this.lastTick > this.tickPeriod + Math.max(250, this.peerTimeoutMs / 4);
    this.lastTick = now;
    for (const [peer, state] of this.links) {
      if (this.goodbyes.has(peer)) continue;
      if (!late && this.peerTimeoutMs > 0 && now - state.lastHeard > this.peerTimeoutMs) {
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

  protected async release(graceful: boolean, reason: RemoteCloseReason | undefined): Promise<void> {
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.creditListeners.clear();
    const goodbye = graceful || reason === undefined ? Uint8Array.of(FRAME_GOODBYE, GOODBYE_GRACEFUL) : abortFrame(reason);
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
      await this.until(() => peers.every((p) => this.settledPeers.has(p)), this.closeTimeoutMs);
    } else {
      // Let the abort (and its reason) arrive before the medium closes: closing a data channel
      // can drop what it has not delivered yet. A peer that got it aborts too, and its own abort
      // (or its link closing) tells us so; bounded, since a dead peer never answers.
      const peers = [...this.closingLinks.keys()];
      await this.until(() => peers.every((p) => this.settledPeers.has(p)), Math.min(ABORT_FLUSH_MS, this.closeTimeoutMs));
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

  /** Resolves once `done()` holds (checked on settle events) or after `timeoutMs`. */
  private until(done: () => boolean, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = () => {
        if (done()) finish();
      };
      const finish = () => {
        clearTimeout(timer);
        this.settledListeners.delete(check);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.settledListeners.add(check);
      check();
    });
  }
}

/** A zeroed buffer, or undefined when the runtime refuses the allocation. */
function allocate(bytes: number): Uint8Array | undefined {
  try {
    return new Uint8Array(bytes);
  } catch {
    return undefined;
  }
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array | undefined {
  const out = allocate(total);
  if (!out) return undefined;
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
  CREDIT: FRAME_CREDIT,
} as const;
