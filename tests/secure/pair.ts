// A tiny in-memory n-party Transport for the secure-channel tests, with a man in the middle:
// every message passes through `intercept`, which may deliver it unchanged, rewrite it, drop it,
// hold it back and release it later (reorder), or deliver extra copies (replay). `inject` lets a
// test put arbitrary bytes on a link. Semantics follow the Transport contract as ts/net reads it:
// fail-stop on a missed recv deadline, an aborted recv leaves the transport open, a graceful
// close() lets peers drain what was sent and then see PEER_DISCONNECTED, close(reason) aborts
// the peers too.
import { TransportError } from '../../dist/errors.js';
import type { RecvOptions, Transport } from '../../dist/net/transport.js';

export interface WireMessage {
  readonly from: number;
  readonly to: number;
  /** Index of this message among all messages sent on the link from → to (0-based). */
  readonly seq: number;
  readonly data: Uint8Array;
}

/** What to deliver instead of `msg`: `undefined` delivers it unchanged, `[]` drops it. */
export type Interceptor = (msg: WireMessage) => Uint8Array[] | undefined;

export interface MeshOptions {
  intercept?: Interceptor;
  /** Default recv deadline; fail-stop when it passes. */
  recvTimeoutMs?: number;
  /** Bytes a receiver may hold unread per sender before `send` waits. */
  capacityBytes?: number;
}

export interface Mesh {
  readonly transports: MeshTransport[];
  /** Puts `data` on the link from → to as if `from` had sent it (bypassing `intercept`). */
  inject(from: number, to: number, data: Uint8Array): void;
  /** Total bytes carried on all links so far. */
  readonly bytesCarried: number;
}

interface Waiter {
  resolve(m: Uint8Array): void;
  reject(e: TransportError): void;
  dispose(): void;
}

interface Inbox {
  messages: Uint8Array[];
  bytes: number;
  waiters: Waiter[];
  ended: boolean;
  /** Senders waiting for room in this inbox. */
  roomWaiters: (() => void)[];
}

export class MeshTransport implements Transport {
  readonly closed: Promise<Error | undefined>;
  closeError: TransportError | undefined;
  group: MeshTransport[] = [];
  private readonly inboxes: Inbox[];
  private resolveClosed!: (r: Error | undefined) => void;
  private readonly seqs: number[];

  constructor(
    readonly party: number,
    readonly parties: number,
    private readonly options: MeshOptions,
    private readonly counter: { bytes: number },
  ) {
    this.inboxes = Array.from({ length: parties }, () => ({
      messages: [],
      bytes: 0,
      waiters: [],
      ended: false,
      roomWaiters: [],
    }));
    this.seqs = new Array<number>(parties).fill(0);
    this.closed = new Promise((r) => (this.resolveClosed = r));
  }

  private check(peer: number): void {
    if (!Number.isInteger(peer) || peer < 0 || peer >= this.parties || peer === this.party) {
      throw new TransportError('INVALID_ARGUMENT', 'bad party index');
    }
  }

  async send(to: number, data: Uint8Array): Promise<void> {
    this.check(to);
    if (this.closeError) throw this.closeError;
    const target = this.group[to]!;
    if (target.closeError) throw new TransportError('PEER_DISCONNECTED', `party ${to} left`, { peer: to });
    const capacity = this.options.capacityBytes ?? 8 << 20;
    const inbox = target.inboxes[this.party]!;
    while (inbox.bytes > 0 && inbox.bytes + data.length > capacity) {
      await new Promise<void>((r) => inbox.roomWaiters.push(r));
      if (this.closeError) throw this.closeError;
      if (target.closeError) throw new TransportError('PEER_DISCONNECTED', `party ${to} left`, { peer: to });
    }
    const msg: WireMessage = { from: this.party, to, seq: this.seqs[to]!++, data: data.slice() };
    const out = this.options.intercept?.(msg) ?? [msg.data];
    for (const m of out) target.deliver(this.party, m);
  }

  /** Hands `message` to `from`'s inbox (used by send and by Mesh.inject). */
  deliver(from: number, message: Uint8Array): void {
    if (this.closeError) return;
    this.counter.bytes += message.length;
    const inbox = this.inboxes[from]!;
    const waiter = inbox.waiters.shift();
    if (waiter) {
      waiter.dispose();
      waiter.resolve(message);
      return;
    }
    inbox.messages.push(message);
    inbox.bytes += message.length;
  }

  recv(from: number, options: RecvOptions = {}): Promise<Uint8Array> {
    try {
      this.check(from);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.closeError) return Promise.reject(this.closeError);
    const inbox = this.inboxes[from]!;
    const queued = inbox.messages.shift();
    if (queued) {
      inbox.bytes -= queued.length;
      for (const wake of inbox.roomWaiters.splice(0)) wake();
      return Promise.resolve(queued);
    }
    if (inbox.ended) return Promise.reject(new TransportError('PEER_DISCONNECTED', `party ${from} left`, { peer: from }));
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(new TransportError('ABORTED', 'aborted', { peer: from }));
    const timeoutMs = options.timeoutMs ?? this.options.recvTimeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const i = inbox.waiters.indexOf(waiter);
        if (i >= 0) inbox.waiters.splice(i, 1);
        waiter.dispose();
        reject(new TransportError('ABORTED', 'aborted', { peer: from }));
      };
      // Infinity: no deadline (the caller bounds the wait with its signal), as the contract says.
      const timer =
        timeoutMs === Infinity
          ? undefined
          : setTimeout(() => void this.close(new TransportError('TIMEOUT', `no message from ${from}`, { peer: from })), timeoutMs);
      const waiter: Waiter = {
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

  async close(reason?: Error): Promise<void> {
    if (this.closeError) return;
    this.closeError =
      reason instanceof TransportError ? reason : new TransportError('CLOSED', 'closed', reason ? { cause: reason } : {});
    for (const inbox of this.inboxes) {
      for (const w of inbox.waiters.splice(0)) {
        w.dispose();
        w.reject(this.closeError);
      }
      inbox.messages.length = 0;
      inbox.bytes = 0;
      for (const wake of inbox.roomWaiters.splice(0)) wake();
    }
    for (const peer of this.group) {
      if (peer === this) continue;
      for (const wake of peer.inboxes[this.party]!.roomWaiters.splice(0)) wake();
      if (reason === undefined) peer.peerEnded(this.party);
      else void peer.close(new TransportError('PEER_DISCONNECTED', `party ${this.party} aborted`, { peer: this.party }));
    }
    this.resolveClosed(reason);
  }

  private peerEnded(from: number): void {
    const inbox = this.inboxes[from]!;
    inbox.ended = true;
    if (inbox.messages.length === 0) {
      for (const w of inbox.waiters.splice(0)) {
        w.dispose();
        w.reject(new TransportError('PEER_DISCONNECTED', `party ${from} left`, { peer: from }));
      }
    }
  }
}

export function createMesh(parties: number, options: MeshOptions = {}): Mesh {
  const counter = { bytes: 0 };
  const transports = Array.from({ length: parties }, (_, i) => new MeshTransport(i, parties, options, counter));
  for (const t of transports) t.group = transports;
  return {
    transports,
    inject: (from, to, data) => transports[to]!.deliver(from, data.slice()),
    get bytesCarried() {
      return counter.bytes;
    },
  };
}
