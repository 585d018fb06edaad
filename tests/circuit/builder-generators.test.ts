// The AES-128 and SHA-256 generators built with the circuit builder, against the known answers in
// ../shared/circuits/README.md, node:crypto, and the reference Bristol circuits evaluated by the
// test-only reference evaluator on the same random inputs.
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { CircuitBuilder } from '../../dist/circuit/builder.js';
import { aes128Circuit, aesSbox } from '../../dist/circuit/gen/aes128.js';
import { sha256Circuit, sha256InitialState } from '../../dist/circuit/gen/sha256.js';
import {
  bigToBytes,
  bytesToBig,
  countOps,
  evaluate,
  evaluateMany,
  parseBinary,
  parseBristol,
  type RefCircuit,
} from './eval-reference.js';
import { referenceCircuit } from '../helpers.js';

const readReference = (name: string): RefCircuit => parseBristol(referenceCircuit(name));
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('AES-128 generator', () => {
  let aes: RefCircuit;
  let andCount: number;
  let bristol: string;

  beforeAll(() => {
    const c = aes128Circuit();
    andCount = c.andCount;
    aes = parseBinary(c.toBinary());
    bristol = c.toBristol();
  });

  const encrypt = (circuit: RefCircuit, key: Uint8Array, pt: Uint8Array): string =>
    hex(bigToBytes(evaluate(circuit, [bytesToBig(key), bytesToBig(pt)])[0]!, 16));

  it('has 128+128 inputs, a 128-bit output and 6400 ANDs', () => {
    expect(aes.inputs).toEqual([128, 128]);
    expect(aes.outputs).toEqual([128]);
    expect(countOps(aes).AND).toBe(andCount);
    expect(andCount).toBe(6400);
  });

  it('FIPS-197 C.1 and the all-zero vector', () => {
    expect(encrypt(aes, unhex('000102030405060708090a0b0c0d0e0f'), unhex('00112233445566778899aabbccddeeff'))).toBe(
      '69c4e0d86a7b0430d8cdb78070b4c55a',
    );
    expect(encrypt(aes, new Uint8Array(16), new Uint8Array(16))).toBe('66e94bd4ef8a2c3b884cfa59ca342b2e');
  });

  it('matches node:crypto AES-128-ECB on random keys and blocks', () => {
    const cases = Array.from({ length: 96 }, () => [randomBytes(16), randomBytes(16)] as const);
    const results = evaluateMany(
      aes,
      cases.map(([k, p]) => [bytesToBig(k), bytesToBig(p)]),
    );
    cases.forEach(([k, p], i) => {
      const cipher = createCipheriv('aes-128-ecb', k, null);
      cipher.setAutoPadding(false);
      const expected = Buffer.concat([cipher.update(p), cipher.final()]);
      expect(hex(bigToBytes(results[i]![0]!, 16))).toBe(hex(expected));
    });
  });

  it('its Bristol emit agrees with the reference aes_128.txt on random inputs', () => {
    const ours = parseBristol(bristol);
    const reference = readReference('aes_128.txt');
    expect(ours.inputs).toEqual(reference.inputs);
    expect(ours.outputs).toEqual(reference.outputs);
    expect(countOps(ours).AND).toBeLessThanOrEqual(countOps(reference).AND);
    const inputs = Array.from({ length: 64 }, () => [bytesToBig(randomBytes(16)), bytesToBig(randomBytes(16))]);
    expect(evaluateMany(ours, inputs)).toEqual(evaluateMany(reference, inputs));
  });

  it('the S-box is the AES S-box on all 256 bytes, with 32 ANDs', () => {
    // Independent S-box: inverse by brute force in GF(2^8), then the affine map.
    const mul = (a: number, b: number): number => {
      let r = 0;
      for (; b; b >>= 1, a = (a << 1) ^ (a & 0x80 ? 0x11b : 0)) if (b & 1) r ^= a;
      return r;
    };
    const rotl = (v: number, k: number): number => ((v << k) | (v >> (8 - k))) & 0xff;
    const sbox = (x: number): number => {
      let inv = 0;
      for (let y = 1; y < 256; y++) if (mul(x, y) === 1) inv = y;
      return inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ 0x63;
    };
    const b = new CircuitBuilder();
    b.output(aesSbox(b.input(0, 8)));
    const c = b.build();
    expect(c.andCount).toBe(32);
    const parsed = parseBinary(c.toBinary());
    const xs = Array.from({ length: 256 }, (_, x) => [BigInt(x)]);
    const results = evaluateMany(parsed, xs);
    xs.forEach(([x], i) => expect(Number(results[i]![0])).toBe(sbox(Number(x))));
  });
});

describe('SHA-256 compression generator', () => {
  let sha: RefCircuit;
  let andCount: number;

  beforeAll(() => {
    const c = sha256Circuit();
    andCount = c.andCount;
    sha = parseBinary(c.toBinary());
  });

  /** A message of at most 55 bytes padded to one block: compress(IV, block) is its hash. */
  const pad = (msg: Uint8Array): Uint8Array => {
    const block = new Uint8Array(64);
    block.set(msg);
    block[msg.length] = 0x80;
    new DataView(block.buffer).setUint32(60, msg.length * 8);
    return block;
  };
  const iv = (): bigint => bytesToBig(sha256InitialState());

  it('has 512+256 inputs, a 256-bit output and 22573 ANDs', () => {
    expect(sha.inputs).toEqual([512, 256]);
    expect(sha.outputs).toEqual([256]);
    expect(countOps(sha).AND).toBe(andCount);
    expect(andCount).toBe(22573);
  });

  it('exports the SHA-256 initial chaining value', () => {
    expect(hex(sha256InitialState())).toBe(
      '6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19',
    );
  });

  it('the "abc" vector', () => {
    const out = evaluate(sha, [bytesToBig(pad(new TextEncoder().encode('abc'))), iv()])[0]!;
    expect(hex(bigToBytes(out, 32))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('matches node:crypto on random one-block messages (0 to 55 bytes)', () => {
    const msgs = Array.from({ length: 64 }, (_, i) => randomBytes(i % 56));
    const results = evaluateMany(
      sha,
      msgs.map((m) => [bytesToBig(pad(m)), iv()]),
    );
    msgs.forEach((m, i) => {
      expect(hex(bigToBytes(results[i]![0]!, 32))).toBe(createHash('sha256').update(m).digest('hex'));
    });
  });

  it('agrees with the reference sha256.txt on random blocks and chaining values', () => {
    const reference = readReference('sha256.txt');
    expect(reference.inputs).toEqual(sha.inputs);
    expect(countOps(reference).AND).toBe(22573);
    const inputs = Array.from({ length: 32 }, () => [bytesToBig(randomBytes(64)), bytesToBig(randomBytes(32))]);
    expect(evaluateMany(sha, inputs)).toEqual(evaluateMany(reference, inputs));
  });
});

describe('reference circuits through the reference evaluator', () => {
  // Sanity of the test-only evaluator itself on the small reference circuits, and the builder's
  // counts next to theirs.
  it('adder64, sub64, mult64, neg64, zero_equal agree with BigInt and with the builder', () => {
    const m = (v: bigint): bigint => BigInt.asUintN(64, v);
    const rand64 = (): bigint => bytesToBig(randomBytes(8));
    const pairs = Array.from({ length: 64 }, () => [rand64(), rand64()]);
    const cases: [string, (a: bigint, b: bigint) => bigint, number][] = [
      ['adder64.txt', (a, b) => m(a + b), 63],
      ['sub64.txt', (a, b) => m(a - b), 63],
      ['mult64.txt', (a, b) => m(a * b), 4033],
    ];
    for (const [file, f, ands] of cases) {
      const ref = readReference(file);
      const results = evaluateMany(ref, pairs);
      pairs.forEach(([a, b], i) => expect(results[i]![0]).toBe(f(a!, b!)));
      const b = new CircuitBuilder();
      const x = b.input(0, 64);
      const y = b.input(1, 64);
      b.output(file === 'adder64.txt' ? x.add(y) : file === 'sub64.txt' ? x.sub(y) : x.mul(y));
      const ours = b.build();
      expect(ours.andCount).toBe(ands);
      expect(evaluateMany(parseBinary(ours.toBinary()), pairs)).toEqual(results);
    }
    const singles = [[0n], [1n], ...pairs.map(([a]) => [a!])];
    const neg = evaluateMany(readReference('neg64.txt'), singles);
    const zero = evaluateMany(readReference('zero_equal.txt'), singles);
    singles.forEach(([a], i) => {
      expect(neg[i]![0]).toBe(m(-a!));
      expect(zero[i]![0]).toBe(a === 0n ? 1n : 0n);
    });
    const b = new CircuitBuilder();
    const x = b.input(0, 64);
    b.output(x.neg());
    b.output(x.isZero());
    const ours = b.build();
    expect(ours.andCount).toBeLessThanOrEqual(62 + 63);
  });
});
