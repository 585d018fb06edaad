/**
 * The SHA-256 compression function as a Boolean circuit, built with {@link CircuitBuilder}:
 * inputs a padded 512-bit message block then the 256-bit chaining value, output the new chaining
 * value, in the bit order of the reference `sha256.txt` (byte strings are big-endian integers, so
 * word W0 is the block's top 32 bits and wire 0 is the lowest bit of the last byte).
 *
 * Cost: every 32-bit addition is the builder's 31-AND ripple adder; Ch and Maj are one AND per
 * bit each (`Ch = g ⊕ e(f ⊕ g)`, `Maj = b ⊕ (a ⊕ b)(b ⊕ c)`); the rotations and σ/Σ functions are
 * free. The round constant is added first, to the message word, so the builder's constant folding
 * removes the adder's low carries wherever the constant has trailing zero bits.
 *
 * The constants are computed from their definitions (fractional parts of square and cube roots of
 * the first primes) rather than typed in.
 */
import { WebmpcError } from '../../errors.js';
import { CircuitBuilder, type Circuit, type UInt } from '../builder.js';

function firstPrimes(n: number): bigint[] {
  const primes: bigint[] = [];
  for (let c = 2; primes.length < n; c++) {
    if (primes.every((p) => c % Number(p) !== 0)) primes.push(BigInt(c));
  }
  return primes;
}

/** floor(x^(1/k)) for a non-negative bigint, by Newton's method from above. */
function integerRoot(x: bigint, k: bigint): bigint {
  if (x < 2n) return x;
  let r = 1n << (BigInt(x.toString(2).length) / k + 1n); // ≥ the root
  for (;;) {
    const next = ((k - 1n) * r + x / r ** (k - 1n)) / k;
    if (next >= r) return r;
    r = next;
  }
}

/** The first 32 bits of the fractional part of p^(1/k), for the first `n` primes. */
function rootFractions(n: number, k: bigint): number[] {
  return firstPrimes(n).map((p) => Number(integerRoot(p << (32n * k), k) & 0xffffffffn));
}

let roundConstants: number[] | undefined;
function K(): number[] {
  roundConstants ??= rootFractions(64, 3n);
  return roundConstants;
}

/**
 * SHA-256's initial chaining value H0..H7 (square roots of the first 8 primes), as the 32 bytes
 * to feed the circuit's chaining-value input for a message's first block.
 */
export function sha256InitialState(): Uint8Array {
  const words = rootFractions(8, 2n);
  const out = new Uint8Array(32);
  const view = new DataView(out.buffer);
  words.forEach((w, i) => view.setUint32(4 * i, w));
  return out;
}

/** The 32-bit words of a value, most significant word first (big-endian byte-string order). */
function wordsOf(v: UInt, count: number): UInt[] {
  const n = v.width;
  return Array.from({ length: count }, (_, i) => v.slice(n - 32 * (i + 1), n - 32 * i));
}

const bigSigma0 = (x: UInt): UInt => x.rotr(2).xor(x.rotr(13)).xor(x.rotr(22));
const bigSigma1 = (x: UInt): UInt => x.rotr(6).xor(x.rotr(11)).xor(x.rotr(25));
const smallSigma0 = (x: UInt): UInt => x.rotr(7).xor(x.rotr(18)).xor(x.shr(3));
const smallSigma1 = (x: UInt): UInt => x.rotr(17).xor(x.rotr(19)).xor(x.shr(10));

/**
 * One SHA-256 compression inside a circuit: `block` (512 bits) and `chain` (256 bits) in the
 * byte-string bit order described in this module's header. Returns the new chaining value.
 */
export function sha256Compress(block: UInt, chain: UInt): UInt {
  if (block.width !== 512 || chain.width !== 256) {
    throw new WebmpcError('INVALID_ARGUMENT', 'sha256Compress: block must be 512 bits and chain 256 bits');
  }
  const k = K();
  const w = wordsOf(block, 16);
  for (let t = 16; t < 64; t++) {
    w.push(smallSigma1(w[t - 2]!).add(w[t - 7]!).add(smallSigma0(w[t - 15]!)).add(w[t - 16]!));
  }
  const h0 = wordsOf(chain, 8);
  let [a, b, c, d, e, f, g, h] = h0 as [UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt];
  for (let t = 0; t < 64; t++) {
    const ch = g.xor(e.and(f.xor(g)));
    const maj = b.xor(a.xor(b).and(b.xor(c)));
    const t1 = w[t]!.add(k[t]!).add(h).add(bigSigma1(e)).add(ch);
    const t2 = bigSigma0(a).add(maj);
    h = g;
    g = f;
    f = e;
    e = d.add(t1);
    d = c;
    c = b;
    b = a;
    a = t1.add(t2);
  }
  const next = [a, b, c, d, e, f, g, h].map((x, i) => x.add(h0[i]!));
  return block.builder.concat(...next.reverse());
}

/** Which parties supply the block and the chaining value (metadata only; defaults 0 and 1). */
export interface Sha256CircuitOptions {
  blockParty?: number;
  chainParty?: number;
}

/** The SHA-256 compression circuit: inputs block 512 and chain 256, output chain 256. */
export function sha256Circuit(options: Sha256CircuitOptions = {}): Circuit {
  const b = new CircuitBuilder();
  const block = b.input(options.blockParty ?? 0, 512);
  const chain = b.input(options.chainParty ?? 1, 256);
  b.output(sha256Compress(block, chain));
  return b.build();
}
