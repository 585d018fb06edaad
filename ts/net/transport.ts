/**
 * The one contract between protocols and the network.
 *
 * A `Transport` moves whole byte messages between the `parties` parties of one session, addressed
 * by party index (0-based). Between any ordered pair of parties, messages arrive reliably, in
 * order, and exactly as sent, whatever their size (implementations chunk and reassemble under
 * their medium's message limit). The Rust protocol code reaches the network only through this
 * interface (see the Wasm `Channel` binding), so every implementation — in-memory, WebSocket,
 * WebRTC, and the authenticated-encryption wrapper in `ts/secure` — must keep these rules:
 *
 * - `send` resolves once the message is accepted for delivery; it waits (backpressure) rather than
 *   buffering without bound, so a 1 GB stream never holds more than a few MB in flight.
 * - `recv(from)` resolves with the next message from `from`. Every wait is bounded: it rejects
 *   with `TransportError` code `TIMEOUT` after `timeoutMs` (default: the transport's own).
 * - When a peer disconnects, crashes, or sends something malformed, the transport closes itself
 *   and every pending and later `send`/`recv` rejects with a typed `TransportError`
 *   (`PEER_DISCONNECTED`, `PROTOCOL_ERROR`, ...). Nothing hangs, and no rejection goes unhandled.
 * - `close()` is idempotent, releases every resource (sockets, timers, peer connections), and
 *   makes pending operations reject with `CLOSED`.
 *
 * Messages to oneself are not supported (`to === party` is an argument error).
 */
export interface Transport {
  /** This party's index, in `[0, parties)`. */
  readonly party: number;
  /** Number of parties in the session. */
  readonly parties: number;
  /** Sends one message to party `to`; resolves when it is accepted for delivery. */
  send(to: number, data: Uint8Array): Promise<void>;
  /** Resolves with the next message from party `from`. */
  recv(from: number, options?: RecvOptions): Promise<Uint8Array>;
  /** Closes the transport; pending and later operations reject. Safe to call more than once. */
  close(reason?: Error): Promise<void>;
  /** Resolves (never rejects) when the transport has closed, with the reason if it failed. */
  readonly closed: Promise<Error | undefined>;
}

export interface RecvOptions {
  /** Rejects with `TIMEOUT` after this many milliseconds without a message. */
  timeoutMs?: number;
  /** Rejects with `ABORTED` when the signal fires. */
  signal?: AbortSignal;
}
