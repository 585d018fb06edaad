/**
 * The secure channel's record cipher: ChaCha20-Poly1305 with a 96-bit nonce (RFC 8439, libsodium's
 * `crypto_aead_chacha20poly1305_ietf`), sealing to ciphertext ‖ 16-byte tag.
 *
 * Two implementations of the same construction, byte for byte:
 * - libsodium (its Wasm build), everywhere: the only one browsers have (Web Crypto has no
 *   ChaCha20);
 * - in Node, OpenSSL's, through `node:crypto`. A Node party's channel carries every byte of its
 *   protocol traffic — MASCOT sends ~45 KB per triple per pair of parties — and libsodium's Wasm
 *   build made its record layer a large share of a server's CPU (measured: the clients bench's
 *   servers, 2026-11-27); OpenSSL's assembly is several times faster.
 *
 * Both ends of a channel may use either one (a page and a Node server do); the tests check both
 * against RFC 8439's vector and against each other. `node:crypto` is reached through
 * `process.getBuiltinModule` (Node ≥ 20.16), not an import, so browser bundles never see it.
 *
 * Browser-safe: no Node imports.
 */
import type { Sodium } from './sodium.js';

/** What a record cipher does; `open` throws on a forged or damaged frame. */
export interface RecordCipher {
  /** Which implementation this is (for tests and benches). */
  readonly name: 'libsodium' | 'node:crypto';
  seal(plaintext: Uint8Array, ad: Uint8Array, nonce: Uint8Array, key: Uint8Array): Uint8Array;
  open(frame: Uint8Array, ad: Uint8Array, nonce: Uint8Array, key: Uint8Array): Uint8Array;
}

const TAG_BYTES = 16;
const ALGORITHM = 'chacha20-poly1305';

/** libsodium's implementation. */
export function sodiumCipher(sodium: Sodium): RecordCipher {
  return {
    name: 'libsodium',
    seal: (plaintext, ad, nonce, key) => sodium.crypto_aead_chacha20poly1305_ietf_encrypt(plaintext, ad, null, nonce, key),
    open: (frame, ad, nonce, key) => sodium.crypto_aead_chacha20poly1305_ietf_decrypt(null, frame, ad, nonce, key),
  };
}

/** The slice of `node:crypto` used here. */
interface NodeCrypto {
  getCiphers(): string[];
  createCipheriv(algorithm: string, key: Uint8Array, iv: Uint8Array, options: { authTagLength: number }): NodeAeadCipher;
  createDecipheriv(algorithm: string, key: Uint8Array, iv: Uint8Array, options: { authTagLength: number }): NodeAeadDecipher;
}
interface NodeAeadCipher {
  setAAD(ad: Uint8Array, options: { plaintextLength: number }): void;
  update(data: Uint8Array): Uint8Array;
  final(): Uint8Array;
  getAuthTag(): Uint8Array;
}
interface NodeAeadDecipher {
  setAAD(ad: Uint8Array, options: { plaintextLength: number }): void;
  setAuthTag(tag: Uint8Array): void;
  update(data: Uint8Array): Uint8Array;
  final(): Uint8Array;
}

/** `node:crypto` when this is Node and its OpenSSL has ChaCha20-Poly1305, else undefined. */
function nodeCrypto(): NodeCrypto | undefined {
  const proc = (globalThis as { process?: { versions?: { node?: string }; getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof proc?.versions?.node !== 'string' || typeof proc.getBuiltinModule !== 'function') return undefined;
  try {
    const crypto = proc.getBuiltinModule('node:crypto') as NodeCrypto | undefined;
    return crypto?.getCiphers().includes(ALGORITHM) ? crypto : undefined;
  } catch {
    return undefined;
  }
}

/** OpenSSL's implementation through `node:crypto`, when this runtime has one. */
export function nodeCipher(): RecordCipher | undefined {
  const crypto = nodeCrypto();
  if (!crypto) return undefined;
  const options = { authTagLength: TAG_BYTES };
  return {
    name: 'node:crypto',
    seal(plaintext, ad, nonce, key) {
      const cipher = crypto.createCipheriv(ALGORITHM, key, nonce, options);
      cipher.setAAD(ad, { plaintextLength: plaintext.length });
      const body = cipher.update(plaintext);
      const rest = cipher.final(); // empty for a stream cipher, but part of the API's contract
      const tag = cipher.getAuthTag();
      const frame = new Uint8Array(body.length + rest.length + TAG_BYTES);
      frame.set(body, 0);
      frame.set(rest, body.length);
      frame.set(tag, body.length + rest.length);
      return frame;
    },
    open(frame, ad, nonce, key) {
      if (frame.length < TAG_BYTES) throw new Error('ciphertext too short');
      const end = frame.length - TAG_BYTES;
      const decipher = crypto.createDecipheriv(ALGORITHM, key, nonce, options);
      decipher.setAAD(ad, { plaintextLength: end });
      decipher.setAuthTag(frame.subarray(end));
      const body = decipher.update(frame.subarray(0, end));
      try {
        // Throws when the tag does not verify: `body` is then unauthenticated and never returned.
        const rest = decipher.final();
        if (rest.length === 0) return body;
        const out = new Uint8Array(body.length + rest.length);
        out.set(body, 0);
        out.set(rest, body.length);
        body.fill(0);
        return out;
      } catch (err) {
        body.fill(0);
        throw err;
      }
    },
  };
}

/** The fastest record cipher this runtime has: OpenSSL's in Node, libsodium's elsewhere. */
export function recordCipher(sodium: Sodium): RecordCipher {
  // Looked up once: every secure channel (a server has one per client) asks.
  if (runtimeCipher === undefined) runtimeCipher = nodeCipher() ?? null;
  return runtimeCipher ?? sodiumCipher(sodium);
}

let runtimeCipher: RecordCipher | null | undefined;
