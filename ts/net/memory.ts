/**
 * In-memory transports: n {@link Transport}s in one process, for tests and for running every
 * party of a protocol in one place. Messages are copied on send (the caller may reuse its buffer)
 * and handed over whole: no framing, since nothing here can corrupt them.
 *
 * Backpressure is end to end: a `send` waits while the receiver holds more than
 * `capacityBytes` of this sender's messages that no `recv` has taken (one message always goes
 * through, however large, so a message above the capacity cannot deadlock).
 *
 * Closing with a reason tells every peer at once (as a network transport's abort frame would):
 * their operations reject with `PEER_DISCONNECTED` carrying the reason's code and message.
 *
 * Browser-safe: no Node imports.
 */
import type { RemoteCloseReason } from '../errors.js';
import { BaseTransport, checkPartyCount, peerAbortError, transportError, waitUntil, type TransportOptions } from './base.js';
import type { Transport } from './transport.js';

export interface MemoryTransportOptions extends TransportOptions {
  /** Per ordered pair, bytes a receiver may hold unreceived before senders wait. Default 8 MiB. */
  capacityBytes?: number;
}

class MemoryTransport extends BaseTransport {
  /** All transports of the group, by party index. */
  peers: MemoryTransport[] = [];
  private readonly capacityBytes: number;
  /** Senders blocked on this transport's inbox, woken when a message is taken. */
  private readonly takenListeners = new Set<() => void>();
  private readonly sendTails = new Map<number, Promise<void>>();

  constructor(party: number, parties: number, options: MemoryTransportOptions) {
    super(party, parties, options);
    const capacity = options.capacityBytes ?? 8 * 1024 * 1024;
    if (!(capacity > 0 && Number.isFinite(capacity))) {
      throw transportError('INVALID_ARGUMENT', 'capacityBytes must be a positive finite number');
    }
    this.capacityBytes = capacity;
  }

  protected sendMessage(to: number, data: Uint8Array): Promise<void> {
    // Serialised per destination so a message waiting on backpressure keeps its place in line.
    const previous = this.sendTails.get(to) ?? Promise.resolve();
    const sent = previous.then(() => this.deliverTo(to, data));
    this.sendTails.set(
      to,
      sent.catch(() => {}),
    );
    return sent;
  }

  private async deliverTo(to: number, data: Uint8Array): Promise<void> {
    const target = this.peers[to]!;
    const copy = data.slice();
    if (target.queuedBytes(this.party) > 0 && target.queuedBytes(this.party) + copy.byteLength > this.capacityBytes) {
      await waitUntil(() => target.isClosed || target.queuedBytes(this.party) + copy.byteLength <= this.capacityBytes || target.queuedBytes(this.party) === 0, {
        timeoutMs: this.options.sendTimeoutMs,
        pollMs: 50,
        subscribe: (wake) => target.onTakenBy(wake),
        onClosing: (listener) => this.onClosing(listener),
        closedError: () => this.closeError,
        timeoutError: () => {
          const error = transportError('TIMEOUT', `party ${to} took no message for ${this.options.sendTimeoutMs} ms`, to);
          this.fail(error);
          return error;
        },
      });
    }
    if (this.closeError) throw this.closeError;
    if (target.isClosed || this.hasEnded(to)) {
      throw transportError('PEER_DISCONNECTED', `party ${to} has left the session`, to);
    }
    target.accept(this.party, copy);
  }

  accept(from: number, message: Uint8Array): void {
    if (message.byteLength > this.nextMessageLimit(from)) {
      this.fail(transportError('PROTOCOL_ERROR', `party ${from} sent a message above the maximum message size`, from));
      return;
    }
    this.messageStarted(from);
    this.deliver(from, message);
  }

  onTakenBy(wake: () => void): () => void {
    this.takenListeners.add(wake);
    return () => this.takenListeners.delete(wake);
  }

  protected override onConsumed(): void {
    for (const wake of [...this.takenListeners]) wake();
  }

  /** Told by a peer that closed: gracefully (its messages stay receivable) or by aborting. */
  peerLeft(from: number, reason: RemoteCloseReason | undefined): void {
    if (reason === undefined) this.peerEnded(from);
    else this.fail(peerAbortError(from, reason));
  }

  protected async release(_graceful: boolean, reason: RemoteCloseReason | undefined): Promise<void> {
    for (const wake of [...this.takenListeners]) wake();
    this.takenListeners.clear();
    // Told asynchronously, as a network would: a peer that fails because of us must not reach
    // a third party before our own news does.
    for (const peer of this.peers) {
      if (peer !== this) queueMicrotask(() => peer.peerLeft(this.party, reason));
    }
  }
}

/**
 * Creates the `parties` connected transports of one in-memory session; element i is party i's.
 * Close each when done (closing one tells the others, as a network peer leaving would).
 */
export function createMemoryTransports(parties: number, options: MemoryTransportOptions = {}): Transport[] {
  checkPartyCount(0, parties);
  const group = Array.from({ length: parties }, (_, party) => new MemoryTransport(party, parties, options));
  for (const transport of group) transport.peers = group;
  return group;
}
