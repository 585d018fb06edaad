/**
 * The one place `ts/secure` touches libsodium's module object.
 *
 * `libsodium-wrappers` fills in its functions only after `ready` resolves; calling one earlier
 * throws a confusing `TypeError: ... is not a function`. Every public async entry point in
 * `ts/secure` awaits {@link loadSodium} first, so callers never have to know about `ready`.
 */
import sodium from 'libsodium-wrappers';

export type Sodium = typeof sodium;

/** Resolves with libsodium once its Wasm module has been instantiated (once per process/page). */
export async function loadSodium(): Promise<Sodium> {
  await sodium.ready;
  return sodium;
}

/**
 * libsodium once loaded, for the synchronous hot paths (AEAD per segment) that only run after a
 * handshake, i.e. after {@link loadSodium} has resolved.
 */
export function sodiumSync(): Sodium {
  return sodium;
}

/** Constant-time equality of two byte strings; different lengths are simply unequal. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  // sodium.memcmp throws on a length mismatch; lengths are public (fixed key sizes), so checking
  // them first leaks nothing.
  return a.length === b.length && sodium.memcmp(a, b);
}

/**
 * Overwrites `bytes` with zeros. `fill(0)` rather than `sodium.memzero`: in libsodium-wrappers
 * memzero is a plain JavaScript loop over the array (it cannot reach into native memory either),
 * so it guarantees nothing more, while `fill` is native and took a quarter of the record layer's
 * time as a loop. JS engines do not drop stores to a typed array that other code can still read.
 */
export function wipe(bytes: Uint8Array | undefined): void {
  if (bytes !== undefined && bytes.length > 0) bytes.fill(0);
}
