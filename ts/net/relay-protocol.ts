/**
 * Relay framing: a binary WebSocket message is `[u16 party][frame]`. From a client, `party` is
 * the destination; the relay rewrites it to the source before forwarding. The frame inside is a
 * {@link FramedTransport} frame, opaque to the relay.
 *
 * Browser-safe: no Node imports.
 */
export const RELAY_HEADER_BYTES = 2;
/** Largest frame the relay forwards (the data-channel ceiling, so one chunk size fits all). */
export const RELAY_MAX_FRAME_BYTES = 256 * 1024;
