// The kernels as the published package exposes them (dist/, real .wasm), against independent
// references. Nothing here re-implements a kernel the way the Rust does; the references are
// chosen to be slow and obviously right.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as webmpc from '../dist/index.js';
import { KernelError, WebmpcError } from '../dist/index.js';
import { _setChunkBytesForTesting } from '../dist/kernels.js';
import { _wasmMemoryBytes, wasm } from '../dist/engine/wasm.js';
import {
  blockAt,
  concat,
  fromBig,
  hex,
  loadBaseline,
  nodeAes,
  rand,
  refGfMul,
  refSigma,
  refTranspose128xN,
  toBig,
  unhex,
  xor,
} from './helpers.js';

const {
  aesEncrypt,
  aesFixedKeyEncrypt,
  backendName,
  fixedKey,
  gf128InnerProduct,
  gf128Mul,
  hashCcr,
  hashCr,
  hashTccr,
  hashTccrCounter,
  Prg,
  randomBytes,
  sigma,
  transpose128xN,
  transposeNx128,
} = webmpc;

beforeAll(async () => {
  await webmpc.init();
});

afterEach(() => {
  _setChunkBytesForTesting(undefined);
});

const BLOCK_COUNTS = [0, 1, 7, 8, 9, 4097];

describe('AES-128', () => {
  it('FIPS-197 Appendix C.1', () => {
    const key = unhex('000102030405060708090a0b0c0d0e0f');
    const pt = unhex('00112233445566778899aabbccddeeff');
    expect(hex(aesEncrypt(key, pt))).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
  });

  it('NIST SP 800-38A F.1.1 ECB-AES128.Encrypt', () => {
    const key = unhex('2b7e151628aed2a6abf7158809cf4f3c');
    const pt = unhex(`
      6bc1bee22e409f96e93d7e117393172a
      ae2d8a571e03ac9c9eb76fac45af8e51
      30c81c46a35ce411e5fbc1191a0a52ef
      f69f2445df4f9b17ad2b417be66c3710`);
    const ct = `
      3ad77bb40d7a3660a89ecaf32466ef97
      f5d3d58503b9699de785895a96fdbaaf
      43b1cd7f598ece23881b00e3ed030688
      7b0c785e27e8ad3f8223207104725dd4`.replace(/\s+/g, '');
    expect(hex(aesEncrypt(key, pt))).toBe(ct);
    // Each block on its own too: ECB must not chain.
    for (let j = 0; j < 4; j++) {
      expect(hex(aesEncrypt(key, blockAt(pt, j)))).toBe(ct.slice(32 * j, 32 * j + 32));
    }
  });

  it.each(BLOCK_COUNTS)('random key, %i blocks: equals OpenSSL (node:crypto)', (n) => {
    for (let trial = 0; trial < 3; trial++) {
      const key = rand(16);
      const pt = rand(16 * n);
      expect(hex(aesEncrypt(key, pt))).toBe(hex(nodeAes(key, pt)));
    }
  });

  it.each(BLOCK_COUNTS)('random key, %i blocks: equals RustCrypto aes in Wasm (baseline)', async (n) => {
    const baseline = await loadBaseline();
    const key = rand(16);
    const pt = rand(16 * n);
    expect(hex(aesEncrypt(key, pt))).toBe(hex(baseline.rustcryptoAesEncrypt(key, pt)));
  });

  it('does not modify its input and accepts subarray views', () => {
    const key = rand(16);
    const backing = rand(16 * 20 + 5);
    const view = backing.subarray(5, 5 + 16 * 20);
    const before = hex(backing);
    expect(hex(aesEncrypt(key, view))).toBe(hex(nodeAes(key, view.slice())));
    expect(hex(backing)).toBe(before);
    // Node's Buffer is a Uint8Array too.
    expect(hex(aesEncrypt(Buffer.from(key), Buffer.from(view)))).toBe(hex(nodeAes(key, view.slice())));
  });

  it('fixed-key AES equals keyed AES under fixedKey() and OpenSSL', () => {
    const k = fixedKey();
    expect(k).toBeInstanceOf(Uint8Array);
    expect(k.length).toBe(16);
    expect(hex(fixedKey())).toBe(hex(k));
    for (const n of BLOCK_COUNTS) {
      const x = rand(16 * n);
      const y = aesFixedKeyEncrypt(x);
      expect(hex(y)).toBe(hex(aesEncrypt(k, x)));
      expect(hex(y)).toBe(hex(nodeAes(k, x)));
    }
  });

  it('reports a backend name', () => {
    expect(typeof backendName()).toBe('string');
    expect(backendName().length).toBeGreaterThan(0);
  });
});

describe('fixed-key hashes', () => {
  const pi = (x: Uint8Array) => nodeAes(fixedKey(), x);

  it('sigma matches (xL ^ xR) || xL with xL the high 64 bits', () => {
    for (const n of BLOCK_COUNTS) {
      const x = rand(16 * n);
      expect(hex(sigma(x))).toBe(hex(refSigma(x)));
    }
    // One hand-checked block: lo = bytes 0..8, hi = bytes 8..16.
    const x = unhex('0102030405060708' + 'a0b0c0d0e0f00010');
    expect(hex(sigma(x))).toBe('a0b0c0d0e0f00010' + 'a1b2c3d4e5f60718');
  });

  it('sigma is linear and has order 3', () => {
    const a = rand(16 * 100);
    const b = rand(16 * 100);
    expect(hex(sigma(xor(a, b)))).toBe(hex(xor(sigma(a), sigma(b))));
    expect(hex(sigma(new Uint8Array(32)))).toBe(hex(new Uint8Array(32)));
    // σ has order 3: σ(σ(σ(x))) = x.
    expect(hex(sigma(sigma(sigma(a))))).toBe(hex(a));
  });

  it('cr(x) = π(x) ⊕ x', () => {
    for (const n of BLOCK_COUNTS) {
      const x = rand(16 * n);
      expect(hex(hashCr(x))).toBe(hex(xor(pi(x), x)));
    }
  });

  it('ccr(x) = π(σ(x)) ⊕ σ(x)', () => {
    for (const n of BLOCK_COUNTS) {
      const x = rand(16 * n);
      const s = refSigma(x);
      expect(hex(hashCcr(x))).toBe(hex(xor(pi(s), s)));
    }
  });

  it('tccr(x, i) = π(π(x) ⊕ i) ⊕ π(x)', () => {
    for (const n of BLOCK_COUNTS) {
      const x = rand(16 * n);
      const t = rand(16 * n);
      const px = pi(x);
      expect(hex(hashTccr(x, t))).toBe(hex(xor(pi(xor(px, t)), px)));
    }
  });

  it('tweak counter mode equals explicit tweaks base + j (little-endian)', () => {
    const n = 300;
    const bases = [
      new Uint8Array(16),
      rand(16),
      fromBig((1n << 64n) - 100n), // carries from the low into the high half
      fromBig((1n << 128n) - BigInt(n)), // the last tweak is 2^128 - 1
    ];
    for (const base of bases) {
      for (const count of [0, 1, 9, n]) {
        const x = rand(16 * count);
        const b = toBig(base);
        const tweaks = concat(...Array.from({ length: count }, (_, j) => fromBig(b + BigInt(j))));
        expect(hex(hashTccrCounter(x, base))).toBe(hex(hashTccr(x, tweaks)));
      }
    }
  });

  it('tweak counter ranges that would wrap past 2^128 are refused, not wrapped', () => {
    const top = fromBig((1n << 128n) - 1n);
    expect(hashTccrCounter(rand(16), top).length).toBe(16);
    expect(hashTccrCounter(new Uint8Array(0), top).length).toBe(0);
    expect(() => hashTccrCounter(rand(32), top)).toThrow(expect.objectContaining({ code: 'INVALID_DIMENSION' }));
    expect(() => hashTccrCounter(rand(16 * 10), fromBig((1n << 128n) - 9n))).toThrow(KernelError);
  });

  it('hashes differ from each other and from π on the same input', () => {
    const x = rand(16 * 4);
    const outs = [aesFixedKeyEncrypt(x), hashCr(x), hashCcr(x), hashTccrCounter(x, new Uint8Array(16))].map(hex);
    expect(new Set(outs).size).toBe(outs.length);
  });
});

describe('GF(2^128)', () => {
  it('multiplication matches a BigInt reference', () => {
    const n = 64;
    const a = rand(16 * n);
    const b = rand(16 * n);
    const got = gf128Mul(a, b);
    for (let j = 0; j < n; j++) {
      expect(hex(blockAt(got, j))).toBe(hex(fromBig(refGfMul(toBig(a, 16 * j), toBig(b, 16 * j)))));
    }
  });

  it('edge values: 0, 1, x^127 · x reduces to x^7 + x^2 + x + 1', () => {
    const x = rand(16);
    const one = fromBig(1n);
    const zero = new Uint8Array(16);
    expect(hex(gf128Mul(x, one))).toBe(hex(x));
    expect(hex(gf128Mul(one, x))).toBe(hex(x));
    expect(hex(gf128Mul(x, zero))).toBe(hex(zero));
    expect(hex(gf128Mul(fromBig(1n << 127n), fromBig(2n)))).toBe(hex(fromBig(0x87n)));
    const all = fromBig((1n << 128n) - 1n);
    expect(hex(gf128Mul(all, all))).toBe(hex(fromBig(refGfMul((1n << 128n) - 1n, (1n << 128n) - 1n))));
  });

  it('inner product is the XOR of the elementwise products', () => {
    for (const n of [0, 1, 7, 8, 9, 100]) {
      const a = rand(16 * n);
      const b = rand(16 * n);
      let ref = 0n;
      for (let j = 0; j < n; j++) ref ^= refGfMul(toBig(a, 16 * j), toBig(b, 16 * j));
      const got = gf128InnerProduct(a, b);
      expect(got.length).toBe(16);
      expect(hex(got)).toBe(hex(fromBig(ref)));
    }
  });
});

describe('transpose', () => {
  const NS = [0, 8, 16, 64, 120, 128, 136, 1024, 1032];

  it.each(NS)('128 x %i matches a bit-by-bit transpose and round-trips', (n) => {
    const rows = rand(16 * n);
    const t = transpose128xN(rows, n);
    expect(t.length).toBe(16 * n);
    expect(hex(t)).toBe(hex(refTranspose128xN(rows, n)));
    expect(hex(transposeNx128(t, n))).toBe(hex(rows));
  });

  it('places single bits where the definition says', () => {
    const n = 256;
    for (const [i, j] of [
      [0, 0],
      [0, 255],
      [127, 0],
      [5, 77],
      [127, 255],
    ] as const) {
      const rows = new Uint8Array(16 * n);
      rows[(i * n + j) >> 3] = 1 << ((i * n + j) & 7);
      const expected = new Uint8Array(16 * n);
      expected[16 * j + (i >> 3)] = 1 << (i & 7);
      expect(hex(transpose128xN(rows, n))).toBe(hex(expected));
    }
  });
});

describe('Prg', () => {
  it('same seed, same stream, however the reads are split', () => {
    const seed = rand(16);
    const whole = new Prg(seed).fillBytes(10_000);
    const prg = new Prg(seed);
    const parts: Uint8Array[] = [];
    for (const len of [0, 1, 15, 16, 17, 1000, 3, 4096, 4852]) parts.push(prg.fillBytes(len));
    expect(hex(concat(...parts))).toBe(hex(whole));
    prg.free();
    expect(hex(new Prg(seed.slice()).fillBytes(10_000))).toBe(hex(whole));
  });

  it('different seeds give different streams; the stream is not trivially structured', () => {
    const s1 = rand(16);
    const s2 = s1.slice();
    s2[15] = s2[15]! ^ 1;
    const a = new Prg(s1).fillBytes(64);
    const b = new Prg(s2).fillBytes(64);
    expect(hex(a)).not.toBe(hex(b));
    expect(hex(a.subarray(0, 16))).not.toBe(hex(a.subarray(16, 32)));
    expect(hex(new Prg(new Uint8Array(16)).fillBytes(32))).not.toBe(hex(new Uint8Array(32)));
  });

  it('fromEntropy streams differ', () => {
    const a = Prg.fromEntropy();
    const b = Prg.fromEntropy();
    expect(hex(a.fillBytes(32))).not.toBe(hex(b.fillBytes(32)));
    a.free();
    b.free();
  });

  it('use after free() throws instead of touching freed Wasm memory', () => {
    const p = new Prg(rand(16));
    p.free();
    p.free();
    expect(() => p.fillBytes(1)).toThrow(TypeError);
  });

  it('randomBytes gives fresh bytes of the asked length', () => {
    expect(randomBytes(0).length).toBe(0);
    const a = randomBytes(4096);
    const b = randomBytes(4096);
    expect(a.length).toBe(4096);
    expect(hex(a)).not.toBe(hex(b));
    // 4096 random bytes all zero would be a broken source, not bad luck.
    expect(a.some((v) => v !== 0)).toBe(true);
  });
});

describe('argument checks', () => {
  const B = (n: number) => new Uint8Array(n).fill(0xab);
  const cases: [string, string, () => unknown][] = [
    ['aesEncrypt ragged', 'RAGGED_LENGTH', () => aesEncrypt(B(16), B(17))],
    ['aesEncrypt short key', 'WRONG_SIZE', () => aesEncrypt(B(15), B(16))],
    ['aesEncrypt long key', 'WRONG_SIZE', () => aesEncrypt(B(32), B(16))],
    ['aesEncrypt bad key, empty input', 'WRONG_SIZE', () => aesEncrypt(B(0), B(0))],
    ['aesFixedKeyEncrypt ragged', 'RAGGED_LENGTH', () => aesFixedKeyEncrypt(B(1))],
    ['hashCr ragged', 'RAGGED_LENGTH', () => hashCr(B(31))],
    ['hashCcr ragged', 'RAGGED_LENGTH', () => hashCcr(B(33))],
    ['sigma ragged', 'RAGGED_LENGTH', () => sigma(B(8))],
    ['hashTccr ragged input', 'RAGGED_LENGTH', () => hashTccr(B(17), B(16))],
    ['hashTccr ragged tweaks', 'RAGGED_LENGTH', () => hashTccr(B(16), B(17))],
    ['hashTccr mismatched', 'LENGTH_MISMATCH', () => hashTccr(B(32), B(16))],
    ['hashTccrCounter short base', 'WRONG_SIZE', () => hashTccrCounter(B(16), B(8))],
    ['hashTccrCounter ragged', 'RAGGED_LENGTH', () => hashTccrCounter(B(15), B(16))],
    ['hashTccrCounter wrapping', 'INVALID_DIMENSION', () => hashTccrCounter(B(32), new Uint8Array(16).fill(0xff))],
    ['Prg short seed', 'WRONG_SIZE', () => new Prg(B(15))],
    ['Prg long seed', 'WRONG_SIZE', () => new Prg(B(17))],
    ['Prg negative length', 'INVALID_DIMENSION', () => new Prg(B(16)).fillBytes(-1)],
    ['Prg fractional length', 'INVALID_DIMENSION', () => new Prg(B(16)).fillBytes(1.5)],
    ['randomBytes NaN', 'INVALID_DIMENSION', () => randomBytes(Number.NaN)],
    ['gf128Mul mismatched', 'LENGTH_MISMATCH', () => gf128Mul(B(16), B(32))],
    ['gf128Mul ragged', 'RAGGED_LENGTH', () => gf128Mul(B(15), B(15))],
    ['gf128InnerProduct mismatched', 'LENGTH_MISMATCH', () => gf128InnerProduct(B(48), B(32))],
    ['transpose128xN n % 8', 'INVALID_DIMENSION', () => transpose128xN(B(16 * 12), 12)],
    ['transpose128xN negative n', 'INVALID_DIMENSION', () => transpose128xN(B(0), -8)],
    ['transpose128xN wrong size', 'WRONG_SIZE', () => transpose128xN(B(16 * 8 + 16), 8)],
    ['transposeNx128 n % 8', 'INVALID_DIMENSION', () => transposeNx128(B(16 * 4), 4)],
    ['transposeNx128 wrong size', 'WRONG_SIZE', () => transposeNx128(B(16 * 8), 16)],
  ];

  it.each(cases)('%s -> KernelError %s', (_name, code, f) => {
    let caught: unknown;
    try {
      f();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(KernelError);
    expect(caught).toBeInstanceOf(WebmpcError);
    expect(caught).toBeInstanceOf(Error);
    const e = caught as KernelError;
    expect(e.code).toBe(code);
    expect(e.name).toBe('KernelError');
    // The input is 0xab everywhere; none of its renderings may leak into the message.
    expect(e.message).not.toMatch(/abab|171,\s*171|AB AB|ab ab/i);
  });

  it('non-byte arguments are TypeErrors', () => {
    expect(() => aesFixedKeyEncrypt([1, 2, 3] as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => aesEncrypt('k'.repeat(16) as unknown as Uint8Array, new Uint8Array(16))).toThrow(TypeError);
    expect(() => hashTccr(new Uint8Array(16), new Uint16Array(8) as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => transpose128xN(null as unknown as Uint8Array, 8)).toThrow(TypeError);
  });

  it('errors thrown by the Rust bindings themselves carry name KernelError and a code', () => {
    // Bypass the TypeScript checks to pin the contract between the bindings and the SDK.
    const w = wasm();
    const codeOf = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        expect(err).toBeInstanceOf(Error);
        expect((err as Error).name).toBe('KernelError');
        expect((err as Error).message).not.toMatch(/abab/i);
        return (err as { code?: unknown }).code;
      }
      return 'no error';
    };
    const B = (n: number) => new Uint8Array(n).fill(0xab);
    expect(codeOf(() => w.aesEncrypt(B(15), B(16)))).toBe('WRONG_SIZE');
    expect(codeOf(() => w.aesFixedKeyEncrypt(B(17)))).toBe('RAGGED_LENGTH');
    expect(codeOf(() => w.hashTccr(B(32), B(16)))).toBe('LENGTH_MISMATCH');
    expect(codeOf(() => w.hashTccrCounter(B(32), new Uint8Array(16).fill(0xff)))).toBe('INVALID_DIMENSION');
    expect(codeOf(() => w.gf128Mul(B(32), B(16)))).toBe('LENGTH_MISMATCH');
    expect(codeOf(() => w.gf128InnerProduct(B(32), B(16)))).toBe('LENGTH_MISMATCH');
    expect(codeOf(() => w.transpose128xN(B(16 * 12), 12))).toBe('INVALID_DIMENSION');
    expect(codeOf(() => w.transpose128xN(B(16 * 8 + 16), 8))).toMatch(/^(WRONG_SIZE|LENGTH_MISMATCH)$/);
    expect(codeOf(() => new w.Prg(B(3)))).toBe('WRONG_SIZE');
    // Sizes cross the boundary as numbers: no silent wrap-around or truncation, no huge allocation.
    expect(codeOf(() => w.randomBytes(1.5))).toBe('INVALID_DIMENSION');
    expect(codeOf(() => w.randomBytes(-1))).toBe('INVALID_DIMENSION');
    expect(codeOf(() => w.randomBytes(2 ** 32 + 16))).toBe('TOO_LARGE');
    expect(codeOf(() => w.randomBytes((1 << 20) + 1))).toBe('TOO_LARGE');
    expect(codeOf(() => new w.Prg(B(16)).fillBytes((64 << 20) + 1))).toBe('TOO_LARGE');
    expect(codeOf(() => w.transpose128xN(B(16 * 8), 2 ** 32 + 8))).toMatch(/^(TOO_LARGE|WRONG_SIZE)$/);
  });

  it('sizes above the per-call limits of the bindings are looped over, not refused', () => {
    const a = randomBytes((1 << 20) * 2 + 3);
    expect(a.length).toBe((1 << 20) * 2 + 3);
    // A zero megabyte would mean a chunk was skipped.
    expect(a.subarray(1 << 20, (1 << 20) + 4096).some((v) => v !== 0)).toBe(true);
    expect(a.subarray(2 << 20).some((v) => v !== 0)).toBe(true);
  });

  it('empty inputs give empty outputs', () => {
    const e = new Uint8Array(0);
    expect(aesEncrypt(rand(16), e).length).toBe(0);
    expect(aesFixedKeyEncrypt(e).length).toBe(0);
    expect(hashCr(e).length).toBe(0);
    expect(hashCcr(e).length).toBe(0);
    expect(sigma(e).length).toBe(0);
    expect(hashTccr(e, e).length).toBe(0);
    expect(hashTccrCounter(e, rand(16)).length).toBe(0);
    expect(gf128Mul(e, e).length).toBe(0);
    expect(hex(gf128InnerProduct(e, e))).toBe(hex(new Uint8Array(16)));
    expect(transpose128xN(e, 0).length).toBe(0);
    expect(transposeNx128(e, 0).length).toBe(0);
    expect(new Prg(rand(16)).fillBytes(0).length).toBe(0);
  });
});

describe('chunking', () => {
  // A tiny chunk size puts many chunk boundaries, at odd places, into small inputs; the results
  // must be exactly those of one unchunked call.
  const CHUNK = 2048; // 128 blocks

  it('every chunked kernel equals its unchunked result', () => {
    const nBlocks = 128 * 5 + 37;
    const x = rand(16 * nBlocks);
    const t = rand(16 * nBlocks);
    const key = rand(16);
    const base = fromBig((1n << 64n) - 300n); // the counter carries into the high half in a later chunk
    const n = 128 * 7 + 24; // transpose columns: 7 whole chunks of 128 and a ragged one
    const rows = rand(16 * n);
    const seed = rand(16);

    const run = () => ({
      aes: hex(aesEncrypt(key, x)),
      fixed: hex(aesFixedKeyEncrypt(x)),
      cr: hex(hashCr(x)),
      ccr: hex(hashCcr(x)),
      sigma: hex(sigma(x)),
      tccr: hex(hashTccr(x, t)),
      counter: hex(hashTccrCounter(x, base)),
      mul: hex(gf128Mul(x, t)),
      inner: hex(gf128InnerProduct(x, t)),
      t128: hex(transpose128xN(rows, n)),
      tN: hex(transposeNx128(rows, n)),
      prg: hex(new Prg(seed).fillBytes(16 * nBlocks + 5)),
    });
    const whole = run();
    _setChunkBytesForTesting(CHUNK);
    const chunked = run();
    expect(chunked).toEqual(whole);
    expect(transposeNx128(transpose128xN(rows, n), n)).toEqual(rows);
    expect(randomBytes(3 * CHUNK + 1).length).toBe(3 * CHUNK + 1);
    expect(chunked.aes).toBe(hex(nodeAes(key, x)));
  });

  it('a 64 MiB input is right, and Wasm memory stays bounded', () => {
    const key = rand(16);
    const size = 64 << 20;
    const x = new Uint8Array(size);
    // Random but cheap: a random 1 MiB pattern, with a per-MiB counter so chunks are distinct.
    const pattern = rand(1 << 20);
    for (let off = 0; off < size; off += pattern.length) {
      x.set(pattern, off);
      x[off] = off >>> 20;
    }
    const before = _wasmMemoryBytes();
    const y = aesEncrypt(key, x);
    expect(y.length).toBe(size);
    expect(Buffer.compare(Buffer.from(y.buffer, y.byteOffset, y.length), Buffer.from(nodeAes(key, x)))).toBe(0);
    const grown = _wasmMemoryBytes() - before;
    // Two chunk-sized buffers (input copy and output) plus allocator slack, never the whole input.
    expect(grown).toBeLessThan(16 << 20);

    // The counter carries from the low into the high 64 bits exactly at a chunk boundary.
    const j = (4 << 20) / 16 - 1;
    const base = (1n << 64n) - BigInt(j + 1);
    const c = hashTccrCounter(x.subarray(0, 8 << 20), fromBig(base));
    const px = nodeAes(fixedKey(), x.subarray(16 * j, 16 * j + 32));
    const tweaks = concat(fromBig(base + BigInt(j)), fromBig(base + BigInt(j + 1)));
    const expected = xor(nodeAes(fixedKey(), xor(px, tweaks)), px);
    expect(hex(c.subarray(16 * j, 16 * j + 32))).toBe(hex(expected));

    // The module still works normally afterwards.
    const key2 = unhex('000102030405060708090a0b0c0d0e0f');
    expect(hex(aesEncrypt(key2, unhex('00112233445566778899aabbccddeeff')))).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
  });
});
