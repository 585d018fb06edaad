/**
 * Long-term party identities: Ed25519 key pairs.
 *
 * A party's identity outlives sessions: the app generates it once, stores the secret bytes
 * (see {@link exportIdentitySecret}) wherever it keeps secrets, and gives the public key — or its
 * text form, {@link publicKeyToHex} / {@link publicKeyToBase64} — to the other parties out of
 * band. Each session's secure channel then proves possession of the secret key by signing the
 * handshake transcript (see `handshake.ts`).
 *
 * What is persisted is the 32-byte Ed25519 seed, not libsodium's 64-byte secret key (seed ‖
 * public key): the seed determines the whole key pair, so a stored identity can never carry a
 * public half that disagrees with its secret half.
 */
import { TransportError } from '../errors.js';
import { bytesEqual, loadSodium, wipe } from './sodium.js';

/** Size of an Ed25519 public key, and so of a party's identity key on the wire. */
export const PUBLIC_KEY_BYTES = 32;
/** Size of libsodium's Ed25519 secret key (seed ‖ public key). */
export const SECRET_KEY_BYTES = 64;
/** Size of the persisted form of an identity (the Ed25519 seed). */
export const IDENTITY_SEED_BYTES = 32;

/** A party's long-term Ed25519 key pair. */
export interface Identity {
  /** Ed25519 public key (32 bytes): what other parties pin. */
  readonly publicKey: Uint8Array;
  /** libsodium Ed25519 secret key (64 bytes: seed ‖ public key). Never leaves this party. */
  readonly secretKey: Uint8Array;
}

function invalid(message: string): TransportError {
  return new TransportError('INVALID_ARGUMENT', message);
}

/** Generates a fresh identity from libsodium's CSPRNG. */
export async function generateIdentity(): Promise<Identity> {
  const sodium = await loadSodium();
  const { publicKey, privateKey } = sodium.crypto_sign_keypair();
  return { publicKey, secretKey: privateKey };
}

/**
 * The bytes to persist for `identity`: its 32-byte Ed25519 seed. The caller owns the returned
 * copy and should wipe it (e.g. `fill(0)`) once stored.
 */
export async function exportIdentitySecret(identity: Identity): Promise<Uint8Array> {
  await loadSodium();
  checkIdentity(identity, 'identity');
  // libsodium's Ed25519 secret key is seed ‖ public key (the non-sumo build has no sk_to_seed).
  return identity.secretKey.slice(0, IDENTITY_SEED_BYTES);
}

/**
 * Rebuilds an identity from the bytes {@link exportIdentitySecret} returned. Also accepts
 * libsodium's 64-byte secret key, in which case its public half must match its seed.
 */
export async function importIdentitySecret(secret: Uint8Array): Promise<Identity> {
  const sodium = await loadSodium();
  if (!(secret instanceof Uint8Array)) throw invalid('identity secret must be a Uint8Array');
  if (secret.length === IDENTITY_SEED_BYTES) {
    const { publicKey, privateKey } = sodium.crypto_sign_seed_keypair(secret);
    return { publicKey, secretKey: privateKey };
  }
  if (secret.length === SECRET_KEY_BYTES) {
    const seed = secret.slice(0, IDENTITY_SEED_BYTES);
    try {
      const { publicKey, privateKey } = sodium.crypto_sign_seed_keypair(seed);
      if (!bytesEqual(publicKey, secret.subarray(IDENTITY_SEED_BYTES))) {
        wipe(privateKey);
        throw invalid('identity secret: its public half does not match its seed');
      }
      return { publicKey, secretKey: privateKey };
    } finally {
      wipe(seed);
    }
  }
  throw invalid(
    `identity secret must be ${IDENTITY_SEED_BYTES} or ${SECRET_KEY_BYTES} bytes, got ${secret.length}`,
  );
}

/** Zeroes the secret key of an identity the app no longer needs. */
export function disposeIdentity(identity: Identity): void {
  wipe(identity.secretKey);
}

/**
 * Throws `INVALID_ARGUMENT` unless `identity` is a well-formed key pair whose secret key embeds its
 * public key (libsodium's layout), so a mismatched pair fails here rather than as a confusing
 * authentication failure on the peer's side. Requires libsodium to be loaded.
 */
export function checkIdentity(identity: Identity, name: string): void {
  if (
    identity === null ||
    typeof identity !== 'object' ||
    !(identity.publicKey instanceof Uint8Array) ||
    !(identity.secretKey instanceof Uint8Array)
  ) {
    throw invalid(`${name} must be { publicKey: Uint8Array, secretKey: Uint8Array }`);
  }
  if (identity.publicKey.length !== PUBLIC_KEY_BYTES) {
    throw invalid(`${name}.publicKey must be ${PUBLIC_KEY_BYTES} bytes, got ${identity.publicKey.length}`);
  }
  if (identity.secretKey.length !== SECRET_KEY_BYTES) {
    throw invalid(`${name}.secretKey must be ${SECRET_KEY_BYTES} bytes, got ${identity.secretKey.length}`);
  }
  if (!bytesEqual(identity.secretKey.subarray(IDENTITY_SEED_BYTES), identity.publicKey)) {
    throw invalid(`${name}: publicKey does not belong to secretKey`);
  }
}

// Text forms of public keys. Written here rather than with libsodium's to_hex/to_base64 so that
// they work synchronously before libsodium has loaded; public keys are not secret, so ordinary
// (not constant-time) code is fine.

const HEX_DIGITS = '0123456789abcdef';

/** Lowercase hex of a public key (64 characters): a party's fingerprint for humans and configs. */
export function publicKeyToHex(publicKey: Uint8Array): string {
  checkPublicKey(publicKey, 'publicKey');
  let out = '';
  for (const byte of publicKey) out += HEX_DIGITS[byte >> 4]! + HEX_DIGITS[byte & 15]!;
  return out;
}

/** Parses {@link publicKeyToHex}'s output (either case). */
export function publicKeyFromHex(text: string): Uint8Array {
  if (typeof text !== 'string' || !/^[0-9a-fA-F]*$/.test(text) || text.length !== 2 * PUBLIC_KEY_BYTES) {
    throw invalid(`public key hex must be ${2 * PUBLIC_KEY_BYTES} hex digits`);
  }
  const out = new Uint8Array(PUBLIC_KEY_BYTES);
  for (let i = 0; i < PUBLIC_KEY_BYTES; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** URL-safe base64 without padding (43 characters): a shorter fingerprint for URLs and QR codes. */
export function publicKeyToBase64(publicKey: Uint8Array): string {
  checkPublicKey(publicKey, 'publicKey');
  let binary = '';
  for (const byte of publicKey) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Parses {@link publicKeyToBase64}'s output (standard alphabet and padding also accepted). */
export function publicKeyFromBase64(text: string): Uint8Array {
  const invalidText = (): TransportError => invalid(`public key base64 must encode ${PUBLIC_KEY_BYTES} bytes`);
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) throw invalidText();
  let binary: string;
  try {
    binary = atob(text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, ''));
  } catch {
    throw invalidText();
  }
  if (binary.length !== PUBLIC_KEY_BYTES) throw invalidText();
  const out = new Uint8Array(PUBLIC_KEY_BYTES);
  for (let i = 0; i < PUBLIC_KEY_BYTES; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function checkPublicKey(publicKey: unknown, name: string): asserts publicKey is Uint8Array {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== PUBLIC_KEY_BYTES) {
    throw invalid(`${name} must be a ${PUBLIC_KEY_BYTES}-byte Uint8Array`);
  }
}
