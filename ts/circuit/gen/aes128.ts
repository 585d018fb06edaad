/**
 * AES-128 encryption as a Boolean circuit, built with {@link CircuitBuilder}: inputs key (128
 * bits) then plaintext (128 bits), output ciphertext (128 bits), in the bit order of the
 * reference `aes_128.txt` (a byte string is a big-endian integer, so wire 0 is the lowest bit of
 * the last byte). 200 S-boxes (160 in the rounds, 40 in the key schedule) at 32 ANDs each make
 * 6400 ANDs; everything else is XOR.
 *
 * The S-box. Inversion in GF(2^8) is done in the tower field GF(((2^2)^2)^2), where it reduces to
 * a handful of GF(2^4) and GF(2^2) operations:
 *
 *   GF(4)   = GF(2)[W]/(W² + W + 1)
 *   GF(16)  = GF(4)[Z]/(Z² + Z + N),   N = W
 *   GF(256) = GF(16)[Y]/(Y² + Y + λ),  λ the first element making this irreducible
 *
 * For x = h·Y + l:  d = λh² + hl + l²,  x⁻¹ = (h·d⁻¹)·Y + (h + l)·d⁻¹.  Squaring and multiplying
 * by constants are GF(2)-linear (free XORs), so the ANDs are: h·l (9, a GF(16) Karatsuba product
 * of three GF(4) products of 3 ANDs), d⁻¹ in GF(16) (5, below), and the two final products (18).
 * The GF(16) inversion uses a 5-AND straight-line program found by exhaustive search over
 * programs whose AND operands are sums of inputs and earlier AND outputs; the XOR combinations
 * that give the four output bits are solved for when this module loads, so the program is checked
 * against the field arithmetic here rather than trusted. The change of basis between AES's
 * GF(2)[x]/(x⁸+x⁴+x³+x+1) and the tower, and AES's affine map, are 8×8 bit matrices derived
 * from the field arithmetic at load time too.
 */
import { CircuitBuilder, type Bit, type Circuit, type UInt } from '../builder.js';
import { WebmpcError } from '../../errors.js';

// --- field arithmetic on small integers (used to derive the linear maps) ---------------------

/** GF(4): bit 1 is the coefficient of W. Karatsuba with W² = W + 1. */
function gf4Mul(p: number, q: number): number {
  const m1 = (p >> 1) & (q >> 1);
  const m0 = p & q & 1;
  const m2 = ((p >> 1) ^ p) & ((q >> 1) ^ q) & 1;
  return ((m2 ^ m0) << 1) | (m1 ^ m0);
}

const N = 0b10;

/** GF(16): bits 3..2 are the coefficient of Z, with Z² = Z + N. */
function gf16Mul(p: number, q: number): number {
  const ph = p >> 2;
  const pl = p & 3;
  const qh = q >> 2;
  const ql = q & 3;
  const m1 = gf4Mul(ph, qh);
  const m0 = gf4Mul(pl, ql);
  const m2 = gf4Mul(ph ^ pl, qh ^ ql);
  return ((m2 ^ m0) << 2) | (gf4Mul(N, m1) ^ m0);
}

/** λ: the first GF(16) element for which Y² + Y + λ has no root, i.e. is irreducible. */
const LAMBDA = (() => {
  for (let lam = 1; lam < 16; lam++) {
    let hasRoot = false;
    for (let y = 0; y < 16; y++) if ((gf16Mul(y, y) ^ y) === lam) hasRoot = true;
    if (!hasRoot) return lam;
  }
  throw new Error('aes128: no irreducible Y² + Y + λ (bug)');
})();

/** GF(256) in the tower: bits 7..4 are the coefficient of Y, with Y² = Y + λ. */
function towerMul(p: number, q: number): number {
  const ph = p >> 4;
  const pl = p & 15;
  const qh = q >> 4;
  const ql = q & 15;
  const hh = gf16Mul(ph, qh);
  return ((hh ^ gf16Mul(ph, ql) ^ gf16Mul(pl, qh)) << 4) | (gf16Mul(LAMBDA, hh) ^ gf16Mul(pl, ql));
}

/** AES's GF(2^8) = GF(2)[x]/(x⁸ + x⁴ + x³ + x + 1). */
function aesMul(p: number, q: number): number {
  let r = 0;
  for (let i = 0; i < 8; i++) {
    if ((q >> i) & 1) r ^= p;
    p = (p << 1) ^ (p & 0x80 ? 0x11b : 0);
  }
  return r;
}

/** A GF(2)-linear map on bytes as the images of the unit vectors. */
type Columns = number[];

function columnsOf(f: (x: number) => number, inBits: number): Columns {
  return Array.from({ length: inBits }, (_, j) => f(1 << j));
}

function applyColumns(cols: Columns, x: number): number {
  let r = 0;
  cols.forEach((c, j) => {
    if ((x >> j) & 1) r ^= c;
  });
  return r;
}

/** AES → tower: x ↦ β where β is a root of AES's polynomial in the tower field. */
const TO_TOWER: Columns = (() => {
  for (let beta = 2; beta < 256; beta++) {
    const pow = [1];
    for (let i = 1; i <= 8; i++) pow.push(towerMul(pow[i - 1]!, beta));
    if ((pow[8]! ^ pow[4]! ^ pow[3]! ^ pow[1]! ^ pow[0]!) === 0) return pow.slice(0, 8);
  }
  throw new Error('aes128: no root of the AES polynomial in the tower field (bug)');
})();

/** AES's affine map without its constant 0x63: bit i ^= bits i+4, i+5, i+6, i+7 (mod 8). */
function affineLinear(b: number): number {
  const rotl = (v: number, k: number): number => ((v << k) | (v >> (8 - k))) & 0xff;
  return b ^ rotl(b, 1) ^ rotl(b, 2) ^ rotl(b, 3) ^ rotl(b, 4);
}

/** Tower → AES, then the affine map: the S-box's whole output layer. */
const FROM_TOWER_AFFINE: Columns = (() => {
  const back = new Array<number>(256);
  for (let x = 0; x < 256; x++) back[applyColumns(TO_TOWER, x)] = x;
  return columnsOf((t) => affineLinear(back[t]!), 8);
})();

/** h, l ↦ λh² + l²: the linear part of d. */
const D_LINEAR: Columns = columnsOf((x) => {
  const h = x >> 4;
  const l = x & 15;
  return gf16Mul(LAMBDA, gf16Mul(h, h)) ^ gf16Mul(l, l);
}, 8);

const MUL_N: Columns = columnsOf((x) => gf4Mul(N, x), 2);

// --- GF(16) inversion with 5 ANDs -------------------------------------------------------------

/**
 * The AND layer of the GF(16) inversion: five products, each of two sums of the inputs and the
 * earlier products. Written over an abstract XOR/AND so the same program runs on truth tables
 * (to solve for the output combinations) and on circuit bits.
 */
function inv16Products<B>(x: readonly B[], xor: (a: B, b: B) => B, and: (a: B, b: B) => B): B[] {
  const [x0, x1, x2, x3] = x as [B, B, B, B];
  const a1 = and(x0, x2);
  const a2 = and(xor(x0, x1), xor(x3, a1));
  const a3 = and(x1, xor(a1, a2));
  const a4 = and(xor(x2, x3), xor(x0, a3));
  const a5 = and(xor(xor(x1, x2), x3), xor(xor(x1, a1), a3));
  return [a1, a2, a3, a4, a5];
}

/**
 * For each output bit of d⁻¹: which of [x0..x3, a1..a5] to XOR, and whether to invert. Found by
 * trying all 2^10 combinations against the truth table of GF(16) inversion (0 ↦ 0).
 */
const INV16_OUTPUTS: { terms: number[]; invert: boolean }[] = (() => {
  const table = (f: (v: number) => number): number => {
    let m = 0;
    for (let v = 0; v < 16; v++) if (f(v)) m |= 1 << v;
    return m;
  };
  const inverse = (v: number): number => {
    for (let y = 1; y < 16; y++) if (gf16Mul(v, y) === 1) return y;
    return 0;
  };
  const xs = [0, 1, 2, 3].map((i) => table((v) => (v >> i) & 1));
  const gens = [...xs, ...inv16Products(xs, (a, b) => a ^ b, (a, b) => a & b)];
  return [0, 1, 2, 3].map((bit) => {
    const target = table((v) => (inverse(v) >> bit) & 1);
    for (let m = 0; m < 1 << (gens.length + 1); m++) {
      let t = m & 1 ? 0xffff : 0;
      gens.forEach((g, k) => {
        if ((m >> (k + 1)) & 1) t ^= g;
      });
      if (t === target) {
        return { terms: gens.map((_, k) => k).filter((k) => (m >> (k + 1)) & 1), invert: (m & 1) === 1 };
      }
    }
    throw new Error('aes128: GF(16) inversion program is wrong (bug)');
  });
})();

// --- the S-box as a circuit --------------------------------------------------------------------

function linear(bits: readonly Bit[], cols: Columns, outBits: number): Bit[] {
  const out: Bit[] = [];
  for (let i = 0; i < outBits; i++) {
    let acc: Bit | undefined;
    cols.forEach((c, j) => {
      if ((c >> i) & 1) acc = acc === undefined ? bits[j]! : acc.xor(bits[j]!);
    });
    out.push(acc ?? bits[0]!.builder.bit(false));
  }
  return out;
}

const xorBits = (a: readonly Bit[], b: readonly Bit[]): Bit[] => a.map((x, i) => x.xor(b[i]!));

/** GF(4) product: 3 ANDs. */
function gf4MulBits(p: readonly Bit[], q: readonly Bit[]): Bit[] {
  const [p0, p1] = p as [Bit, Bit];
  const [q0, q1] = q as [Bit, Bit];
  const m1 = p1.and(q1);
  const m0 = p0.and(q0);
  const m2 = p1.xor(p0).and(q1.xor(q0));
  return [m1.xor(m0), m2.xor(m0)];
}

/** GF(16) product: three GF(4) products, 9 ANDs. */
function gf16MulBits(p: readonly Bit[], q: readonly Bit[]): Bit[] {
  const pl = p.slice(0, 2);
  const ph = p.slice(2, 4);
  const ql = q.slice(0, 2);
  const qh = q.slice(2, 4);
  const m1 = gf4MulBits(ph, qh);
  const m0 = gf4MulBits(pl, ql);
  const m2 = gf4MulBits(xorBits(ph, pl), xorBits(qh, ql));
  return [...xorBits(linear(m1, MUL_N, 2), m0), ...xorBits(m2, m0)];
}

function inv16Bits(x: readonly Bit[]): Bit[] {
  const gens = [...x, ...inv16Products(x, (a, b) => a.xor(b), (a, b) => a.and(b))];
  return INV16_OUTPUTS.map(({ terms, invert }) => {
    let acc = x[0]!.builder.bit(invert);
    for (const k of terms) acc = acc.xor(gens[k]!);
    return acc;
  });
}

/** The AES S-box on one byte (bit 0 = least significant): 32 ANDs. */
export function aesSbox(byte: UInt): UInt {
  const b = byte.builder;
  const t = linear(byte.bits(), TO_TOWER, 8);
  const l = t.slice(0, 4);
  const h = t.slice(4, 8);
  const d = xorBits(gf16MulBits(h, l), linear(t, D_LINEAR, 4));
  const e = inv16Bits(d);
  const outH = gf16MulBits(h, e);
  const outL = gf16MulBits(xorBits(h, l), e);
  const s = linear([...outL, ...outH], FROM_TOWER_AFFINE, 8);
  return b.concat(...s).xor(0x63);
}

// --- AES-128 ---------------------------------------------------------------------------------

/** ×2 in AES's field: a shift and a conditional reduction by 0x1b, all XOR. */
function xtime(a: UInt): UInt {
  const top = a.bit(7);
  const b = a.builder;
  return a.shl(1).xor(b.mux(top, b.constant(0x1b, 8), b.constant(0, 8)));
}

/** The 16 bytes of a 128-bit value in string order (byte 0 holds the value's top bits). */
function bytesOf(v: UInt): UInt[] {
  return Array.from({ length: 16 }, (_, j) => v.slice(8 * (15 - j), 8 * (16 - j)));
}

function fromBytes(b: CircuitBuilder, bytes: readonly UInt[]): UInt {
  return b.concat(...bytes.slice().reverse());
}

/**
 * AES-128 encryption of one block inside a circuit: `key` and `plaintext` are 128-bit values in
 * the byte-string bit order described in this module's header. Returns the ciphertext.
 */
export function aes128Encrypt(key: UInt, plaintext: UInt): UInt {
  const b = key.builder;
  if (key.width !== 128 || plaintext.width !== 128) {
    throw new WebmpcError('INVALID_ARGUMENT', 'aes128Encrypt: key and plaintext must be 128 bits');
  }
  // Key schedule: 44 words of 4 bytes.
  const w: UInt[][] = [];
  const k = bytesOf(key);
  for (let i = 0; i < 4; i++) w.push(k.slice(4 * i, 4 * i + 4));
  let rcon = 1;
  for (let i = 4; i < 44; i++) {
    let temp = w[i - 1]!;
    if (i % 4 === 0) {
      temp = [temp[1]!, temp[2]!, temp[3]!, temp[0]!].map(aesSbox);
      temp[0] = temp[0]!.xor(rcon);
      rcon = aesMul(rcon, 2);
    }
    w.push(w[i - 4]!.map((x, j) => x.xor(temp[j]!)));
  }
  const roundKey = (r: number): UInt[] => w.slice(4 * r, 4 * r + 4).flat();

  let state = bytesOf(plaintext).map((x, i) => x.xor(roundKey(0)[i]!));
  for (let round = 1; round <= 10; round++) {
    const sub = state.map(aesSbox);
    // ShiftRows: state byte r + 4c is row r, column c; row r rotates left by r columns.
    const shifted = sub.map((_, i) => sub[(i % 4) + 4 * ((Math.floor(i / 4) + (i % 4)) % 4)]!);
    let mixed = shifted;
    if (round < 10) {
      mixed = [];
      for (let c = 0; c < 4; c++) {
        const col = shifted.slice(4 * c, 4 * c + 4);
        for (let r = 0; r < 4; r++) {
          // 2·a_r ⊕ 3·a_{r+1} ⊕ a_{r+2} ⊕ a_{r+3}
          const a0 = col[r]!;
          const a1 = col[(r + 1) % 4]!;
          mixed.push(xtime(a0.xor(a1)).xor(a1).xor(col[(r + 2) % 4]!).xor(col[(r + 3) % 4]!));
        }
      }
    }
    const rk = roundKey(round);
    state = mixed.map((x, i) => x.xor(rk[i]!));
  }
  return fromBytes(b, state);
}

/** Which parties supply the key and the plaintext (metadata only; defaults 0 and 1). */
export interface Aes128CircuitOptions {
  keyParty?: number;
  plaintextParty?: number;
}

/** The AES-128 circuit: inputs key 128 and plaintext 128, output ciphertext 128. */
export function aes128Circuit(options: Aes128CircuitOptions = {}): Circuit {
  const b = new CircuitBuilder();
  const key = b.input(options.keyParty ?? 0, 128);
  const pt = b.input(options.plaintextParty ?? 1, 128);
  b.output(aes128Encrypt(key, pt));
  return b.build();
}
