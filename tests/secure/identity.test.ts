// Long-term identities: generation, persistence, text forms of public keys, argument checks.
import sodium from 'libsodium-wrappers';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  disposeIdentity,
  exportIdentitySecret,
  generateIdentity,
  importIdentitySecret,
  publicKeyFromBase64,
  publicKeyFromHex,
  publicKeyToBase64,
  publicKeyToHex,
} from '../../dist/secure/index.js';
import { TransportError } from '../../dist/errors.js';

beforeAll(async () => {
  await sodium.ready;
});

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof TransportError ? e.code : `not a TransportError: ${String(e)}`;
  }
  return undefined;
}

async function asyncCode(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return e instanceof TransportError ? e.code : `not a TransportError: ${String(e)}`;
  }
  return undefined;
}

describe('identities', () => {
  it('generateIdentity makes distinct Ed25519 key pairs that sign and verify', async () => {
    const [a, b] = await Promise.all([generateIdentity(), generateIdentity()]);
    expect(a.publicKey.length).toBe(32);
    expect(a.secretKey.length).toBe(64);
    expect(a.publicKey).not.toEqual(b.publicKey);
    const msg = new Uint8Array([1, 2, 3]);
    const sig = sodium.crypto_sign_detached(msg, a.secretKey);
    expect(sodium.crypto_sign_verify_detached(sig, msg, a.publicKey)).toBe(true);
    expect(sodium.crypto_sign_verify_detached(sig, msg, b.publicKey)).toBe(false);
  });

  it('export → import round-trips through the 32-byte seed; the 64-byte form is accepted too', async () => {
    const id = await generateIdentity();
    const seed = await exportIdentitySecret(id);
    expect(seed.length).toBe(32);
    const back = await importIdentitySecret(seed);
    expect(back.publicKey).toEqual(id.publicKey);
    expect(back.secretKey).toEqual(id.secretKey);
    const fromFull = await importIdentitySecret(id.secretKey);
    expect(fromFull.publicKey).toEqual(id.publicKey);
  });

  it('import rejects wrong sizes and a 64-byte key whose halves disagree', async () => {
    const [a, b] = await Promise.all([generateIdentity(), generateIdentity()]);
    expect(await asyncCode(importIdentitySecret(new Uint8Array(31)))).toBe('INVALID_ARGUMENT');
    const franken = new Uint8Array(64);
    franken.set(a.secretKey.subarray(0, 32));
    franken.set(b.publicKey, 32);
    expect(await asyncCode(importIdentitySecret(franken))).toBe('INVALID_ARGUMENT');
    expect(await asyncCode(exportIdentitySecret({ publicKey: b.publicKey, secretKey: a.secretKey }))).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('disposeIdentity zeroes the secret key', async () => {
    const id = await generateIdentity();
    disposeIdentity(id);
    expect(id.secretKey.every((x) => x === 0)).toBe(true);
  });

  it('hex and base64url fingerprints round-trip and match independent encoders', async () => {
    const id = await generateIdentity();
    const hex = publicKeyToHex(id.publicKey);
    expect(hex).toBe(Buffer.from(id.publicKey).toString('hex'));
    expect(publicKeyFromHex(hex)).toEqual(id.publicKey);
    expect(publicKeyFromHex(hex.toUpperCase())).toEqual(id.publicKey);
    const b64 = publicKeyToBase64(id.publicKey);
    expect(b64).toBe(Buffer.from(id.publicKey).toString('base64url'));
    expect(b64).toHaveLength(43);
    expect(publicKeyFromBase64(b64)).toEqual(id.publicKey);
    expect(publicKeyFromBase64(Buffer.from(id.publicKey).toString('base64'))).toEqual(id.publicKey);
  });

  it('malformed fingerprints are argument errors', () => {
    expect(code(() => publicKeyFromHex('abc'))).toBe('INVALID_ARGUMENT');
    expect(code(() => publicKeyFromHex('zz'.repeat(32)))).toBe('INVALID_ARGUMENT');
    expect(code(() => publicKeyFromBase64('AAAA'))).toBe('INVALID_ARGUMENT');
    expect(code(() => publicKeyFromBase64('!'.repeat(43)))).toBe('INVALID_ARGUMENT');
    expect(code(() => publicKeyToHex(new Uint8Array(31)))).toBe('INVALID_ARGUMENT');
  });
});
