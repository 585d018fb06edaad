/**
 * The engine host's relay of its worker's messages in bounded slices, so that the caller's thread
 * never runs a task whose length grows with what the worker posts at once.
 *
 * Why: every message from the worker starts work on the caller's thread — a `send` hands its
 * bytes to the transport (which copies, frames or encrypts them in the same task), a `progress`
 * calls the app's callback. A browser delivers each worker message as a task of its own, but
 * Node's `worker_threads` delivers everything queued on the port in one turn of the event loop,
 * and a flood (many sends at once, megabytes of OT-extension windows, a progress burst) would
 * then hold the thread — its transport's heartbeats and sockets included — for as long as the
 * whole batch takes.
 *
 * How: at most {@link RelaySlice.messages} messages, and at most {@link RelaySlice.bytes} bytes
 * unless a single message is larger, are handled per macrotask; the rest wait, in order, for the
 * next one (`setImmediate` in Node, a `MessageChannel` message in browsers: neither is clamped
 * like a nested `setTimeout`). Nothing waits when there is little to do: a message that finds
 * the slice not used up is handled at once, in the task that delivered it. One queue for all
 * messages, first in first out, so nothing is reordered (a `close` still goes before its `done`,
 * a peer's messages keep their order). Bytes are not touched here: they move by transfer.
 */

/** How much work one macrotask may take on. */
export interface RelaySlice {
  /** Messages handled per macrotask. */
  readonly messages: number;
  /** Payload bytes handled per macrotask (a single larger message is handled alone). */
  readonly bytes: number;
}

/**
 * The host's slice. 32 messages: each costs the caller's thread tens of microseconds, so a slice
 * is well under a millisecond of relaying. 4 MiB: what a memory or network transport copies or
 * frames in a few milliseconds; authgc's 8 MiB OT-extension windows then go one per task.
 */
export const RELAY_SLICE: RelaySlice = { messages: 32, bytes: 4 << 20 };

/** What the relays of this realm have done (see {@link _relayStats}). */
const stats = { messages: 0, slices: 0, deferred: 0, maxSliceMessages: 0, maxSliceBytes: 0, maxMessageBytes: 0 };

/**
 * @internal Tests: what the relays of this realm have done since the last reset — messages
 * handled, slices (macrotasks that handled any), slices that left messages for the next one, and
 * the most messages and bytes one slice handled (bytes: and the largest single message, which may
 * exceed a slice alone).
 */
export function _relayStats(reset = false): typeof stats {
  const now = { ...stats };
  if (reset) for (const k of Object.keys(stats) as (keyof typeof stats)[]) stats[k] = 0;
  return now;
}

/** Runs `f` in a later macrotask, unclamped. */
const nextTask: (f: () => void) => void = (() => {
  const g = globalThis as { setImmediate?: (f: () => void) => unknown; MessageChannel?: typeof MessageChannel };
  if (typeof g.setImmediate === 'function') {
    const setImmediate = g.setImmediate;
    return (f) => void setImmediate(f);
  }
  if (typeof g.MessageChannel === 'function') {
    // One channel for the realm: its messages are tasks, run in the order they were posted.
    let channel: MessageChannel | undefined;
    const waiting: (() => void)[] = [];
    return (f) => {
      if (!channel) {
        channel = new g.MessageChannel!();
        channel.port1.onmessage = () => waiting.shift()?.();
      }
      waiting.push(f);
      channel.port2.postMessage(null);
    };
  }
  return (f) => void setTimeout(f, 0);
})();

/**
 * @internal A first-in first-out queue whose items are handled at most one slice per macrotask
 * (see the module comment). `handle` must not throw (an exception is dropped: the relay goes on).
 */
export class SlicedRelay<T> {
  readonly #handle: (item: T) => void;
  readonly #bytesOf: (item: T) => number;
  readonly #slice: RelaySlice;
  #queue: T[] = [];
  #head = 0;
  /** What the current macrotask has handled so far. */
  #messages = 0;
  #bytes = 0;
  /** Whether the next macrotask (which starts a fresh slice) is scheduled. */
  #scheduled = false;
  #draining = false;
  #stopped = false;

  constructor(handle: (item: T) => void, bytesOf: (item: T) => number, slice: RelaySlice = RELAY_SLICE) {
    if (!(slice.messages >= 1 && slice.bytes >= 1)) throw new RangeError('a relay slice takes at least one message and one byte');
    this.#handle = handle;
    this.#bytesOf = bytesOf;
    this.#slice = slice;
  }

  /** Items waiting for a later slice. */
  get pending(): number {
    return this.#queue.length - this.#head;
  }

  /** Queues `item`; handles it now if this macrotask's slice has room and nothing waits before it. */
  push(item: T): void {
    if (this.#stopped) return;
    this.#queue.push(item);
    this.#drain();
  }

  /** Drops what waits and handles nothing more (the worker is gone). */
  stop(): void {
    this.#stopped = true;
    this.#queue = [];
    this.#head = 0;
  }

  #drain(): void {
    // A handler that (indirectly) pushes again: the loop below takes the new item in its turn.
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (!this.#stopped && this.#head < this.#queue.length) {
        const item = this.#queue[this.#head]!;
        const bytes = this.#bytesOf(item);
        const full = this.#messages >= this.#slice.messages || (this.#bytes > 0 && this.#bytes + bytes > this.#slice.bytes);
        if (full) break;
        this.#head++;
        if (this.#messages === 0) stats.slices++;
        this.#messages++;
        this.#bytes += bytes;
        stats.messages++;
        stats.maxSliceMessages = Math.max(stats.maxSliceMessages, this.#messages);
        stats.maxSliceBytes = Math.max(stats.maxSliceBytes, this.#bytes);
        stats.maxMessageBytes = Math.max(stats.maxMessageBytes, bytes);
        // The slice's count must start afresh in the next macrotask, whether or not anything waits.
        this.#schedule();
        try {
          this.#handle(item);
        } catch {
          // The host's handlers settle their own errors; one that throws must not stall the rest.
        }
      }
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      } else if (this.#head > 1024) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
    } finally {
      this.#draining = false;
    }
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    nextTask(() => {
      this.#scheduled = false;
      if (this.pending > 0) stats.deferred++;
      this.#messages = 0;
      this.#bytes = 0;
      this.#drain();
    });
  }
}
