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
 *   with `TransportError` code `TIMEOUT` after `timeoutMs` (default: the transport's own), unless
 *   the caller passes `timeoutMs: Infinity` and bounds the wait itself (with `signal`).
 * - Memory is bounded on the receiving side too: a transport holds at most a window of each
 *   peer's unreceived messages (plus one message when a single message is larger), and a peer
 *   that ignores the window is cut off with `PROTOCOL_ERROR`. Messages above `maxMessageBytes`
 *   are refused before they are buffered.
 * - When a peer disconnects, crashes, goes silent, or sends something malformed, the transport
 *   closes itself and every pending and later `send`/`recv` rejects with a typed
 *   `TransportError` (`PEER_DISCONNECTED`, `PROTOCOL_ERROR`, ...). Nothing hangs, and no
 *   rejection goes unhandled.
 * - `close()` is idempotent, releases every resource (sockets, timers, peer connections: nothing
 *   keeps a Node process alive once it resolves), and makes pending operations reject with
 *   `CLOSED`. `close(reason)` is an abort: before releasing the medium it tells every peer the
 *   reason's code and (non-secret) message, and their pending and later operations reject at once
 *   with `PEER_DISCONNECTED`, `peer` set to this party and `remote` to that reason. So a party
 *   that fails locally needs only `close(err)` for every other party to learn why within a round
 *   trip.
 *
 * Messages to oneself are not supported (`to === party` is an argument error).
 */
export interface Transport {
  /** This party's index, in `[0, parties)`. */
  readonly party: number;
  /** Number of parties in the session. */
  readonly parties: number;
  /**
   * Sends one message to party `to`; resolves when it is accepted for delivery. `owned`: the
   * caller will not touch `data` again, so a transport that moves bytes between threads may
   * transfer its buffer instead of copying it (the Wasm channel says so of its messages).
   */
  send(to: number, data: Uint8Array, owned?: boolean): Promise<void>;
  /** Resolves with the next message from party `from`. */
  recv(from: number, options?: RecvOptions): Promise<Uint8Array>;
  /**
   * Closes the transport; pending and later operations reject. Without `reason`, a graceful
   * leave (what was sent is still delivered); with one, an abort that tells the peers why.
   * Safe to call more than once.
   */
  close(reason?: Error): Promise<void>;
  /**
   * Optional: sets the largest message accepted from peers from now on; with `opening`, each
   * peer's next `opening.messages` messages may be at most `opening.maxBytes` each. A message
   * above its limit is refused (`PROTOCOL_ERROR`) before it is buffered. `ts/secure` holds the
   * handshake's messages to their size and the rest to one encrypted segment, so an
   * unauthenticated peer cannot make this party buffer large messages. Every webmpc transport
   * has it.
   */
  limitMessageBytes?(maxBytes: number, opening?: { messages: number; maxBytes: number }): void;
  /** Resolves (never rejects) when the transport has closed, with the reason if it failed. */
  readonly closed: Promise<Error | undefined>;
}

export interface RecvOptions {
  /**
   * Rejects with `TIMEOUT` (and closes the transport) after this many milliseconds without a
   * message; `Infinity` waits without a deadline (then bound the wait with `signal`).
   */
  timeoutMs?: number;
  /** Rejects with `ABORTED` when the signal fires. */
  signal?: AbortSignal;
}
