/**
 * The one place `ts/secure` touches libsodium's module object.
 *
 * libsodium (about 470 KB of JavaScript with its Wasm inlined) is imported dynamically, on the
 * first call that needs it, so importing `webmpc/secure` costs a page almost nothing until it
 * makes an identity or a secure channel; bundlers (Vite, webpack, esbuild) put it in a chunk of
 * its own that is fetched then.
 *
 * `libsodium-wrappers` fills in its functions only after `ready` resolves; calling one earlier
 * throws a confusing `TypeError: ... is not a function`. Every public async entry point in
 * `ts/secure` awaits {@link loadSodium} first, so callers never have to know about `ready`.
 */
import { WebmpcError } from '../errors.js';

export type Sodium = (typeof import('libsodium-wrappers'))['default'];

let loaded: Sodium | undefined;
let loading: Promise<Sodium> | undefined;

/**
 * Resolves with libsodium once it is imported and its Wasm module instantiated (once per
 * process or page). A failed load is forgotten, so a later call can try again.
 */
export function loadSodium(): Promise<Sodium> {
  loading ??= (async () => {
    try {
      const sodium = (await import('libsodium-wrappers')).default;
      await sodium.ready;
      loaded = sodium;
      return sodium;
    } catch (err) {
      loading = undefined;
      throw new WebmpcError('WASM_LOAD_FAILED', `webmpc/secure: could not load libsodium: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
  })();
  return loading;
}

/**
 * libsodium once loaded, for the synchronous hot paths (AEAD per segment) that only run after a
 * handshake, i.e. after {@link loadSodium} has resolved.
 */
export function sodiumSync(): Sodium {
  if (!loaded) throw new WebmpcError('NOT_INITIALIZED', 'webmpc/secure: libsodium is used before loadSodium() resolved (a bug)');
  return loaded;
}

/** Constant-time equality of two byte strings; different lengths are simply unequal. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  // sodium.memcmp throws on a length mismatch; lengths are public (fixed key sizes), so checking
  // them first leaks nothing.
  return a.length === b.length && sodiumSync().memcmp(a, b);
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
