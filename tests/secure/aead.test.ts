// The record cipher's two implementations (libsodium's Wasm build; OpenSSL's through node:crypto,
// which the secure channel takes in Node): RFC 8439's AEAD vector, each one opening what the
// other sealed (a page on libsodium talks to a Node server on OpenSSL), and forgeries refused.
import { randomBytes } from 'node:crypto';
import sodiumModule from 'libsodium-wrappers';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeCipher, recordCipher, sodiumCipher, type RecordCipher } from '../../dist/secure/aead.js';

const unhex = (h: string) => Uint8Array.from(Buffer.from(h.replace(/\s+/g, ''), 'hex'));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

// RFC 8439, section 2.8.2.
const RFC = {
  key: unhex('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f'),
  nonce: unhex('070000004041424344454647'),
  ad: unhex('50515253c0c1c2c3c4c5c6c7'),
  plaintext: new TextEncoder().encode(
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
  ),
  ciphertext: unhex(`
    d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b
    1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc
    3ff4def08e4b7a9de576d26586cec64b6116`),
  tag: unhex('1ae10b594f09e26a7e902ecbd0600691'),
};

let ciphers: RecordCipher[];

beforeAll(async () => {
  await sodiumModule.ready;
  const node = nodeCipher();
  // Node 20.16+ has process.getBuiltinModule: the OpenSSL cipher must be found here.
  expect(node?.name).toBe('node:crypto');
  ciphers = [sodiumCipher(sodiumModule), node!];
});

describe('the record cipher', () => {
  it('is OpenSSL’s in Node', () => {
    expect(recordCipher(sodiumModule).name).toBe('node:crypto');
  });

  it('both implementations give RFC 8439’s ciphertext and tag, and open it', () => {
    for (const c of ciphers) {
      const frame = c.seal(RFC.plaintext, RFC.ad, RFC.nonce, RFC.key);
      expect(hex(frame), c.name).toBe(hex(RFC.ciphertext) + hex(RFC.tag));
      expect(hex(c.open(frame, RFC.ad, RFC.nonce, RFC.key)), c.name).toBe(hex(RFC.plaintext));
    }
  });

  it('each opens what the other sealed, for every length from empty to a whole segment', () => {
    for (const length of [0, 1, 15, 16, 17, 63, 64, 65, 1000, 65_536, 1 << 20]) {
      const [plaintext, key, nonce, ad] = [randomBytes(length), randomBytes(32), randomBytes(12), randomBytes(9)];
      const frames = ciphers.map((c) => c.seal(plaintext, ad, nonce, key));
      expect(hex(frames[1]!), `length ${length}`).toBe(hex(frames[0]!));
      for (const c of ciphers) {
        for (const f of frames) expect(Buffer.compare(c.open(f, ad, nonce, key), plaintext), `${c.name}, length ${length}`).toBe(0);
      }
    }
  });

  it('both refuse a flipped bit anywhere, another nonce, other associated data, another key, a short frame', () => {
    const [plaintext, key, nonce, ad] = [randomBytes(300), randomBytes(32), randomBytes(12), randomBytes(9)];
    for (const c of ciphers) {
      const frame = c.seal(plaintext, ad, nonce, key);
      for (const at of [0, 150, 299, 300, 315]) {
        const bad = frame.slice();
        bad[at]! ^= 0x01;
        expect(() => c.open(bad, ad, nonce, key), `${c.name}, byte ${at}`).toThrow();
      }
      const flip = (b: Uint8Array) => {
        const x = b.slice();
        x[0]! ^= 0x80;
        return x;
      };
      expect(() => c.open(frame, ad, flip(nonce), key), c.name).toThrow();
      expect(() => c.open(frame, flip(ad), nonce, key), c.name).toThrow();
      expect(() => c.open(frame, ad, nonce, flip(key)), c.name).toThrow();
      expect(() => c.open(frame.subarray(0, frame.length - 1), ad, nonce, key), c.name).toThrow();
      expect(() => c.open(frame.subarray(0, 15), ad, nonce, key), c.name).toThrow();
    }
  });
});
