// The circuit builder's integer operations against BigInt, through the test-only reference
// evaluator (tests/circuit/eval-reference.ts), with the AND counts the issue promises asserted on
// the parsed binary (not on the builder's own statistics).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CircuitBuilder, type Circuit, type SInt, type UInt } from '../../dist/circuit/builder.js';
import { WebmpcError } from '../../dist/errors.js';
import { countOps, evaluateMany, parseBinary, parseBristol, type RefCircuit } from './eval-reference.js';

const WIDTHS = [1, 7, 8, 32, 64];
const SAMPLES = 96;

function randBig(width: number): bigint {
  const bytes = randomBytes(Math.ceil(width / 8));
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return BigInt.asUintN(width, v);
}

/** Random values plus the edges (0, 1, all ones, the signed extremes) that break carry chains. */
function samples(width: number): bigint[] {
  const edges = [0n, 1n, (1n << BigInt(width)) - 1n, 1n << BigInt(width - 1), (1n << BigInt(width - 1)) - 1n];
  const out = edges.map((e) => BigInt.asUintN(width, e));
  while (out.length < SAMPLES) out.push(randBig(width));
  return out;
}

/** Parses the binary (and checks the Bristol emit agrees with it), then evaluates. */
function run(circuit: Circuit, inputs: bigint[][]): { results: bigint[][]; parsed: RefCircuit } {
  const parsed = parseBinary(circuit.toBinary());
  const results = evaluateMany(parsed, inputs);
  expect(evaluateMany(parseBristol(circuit.toBristol()), inputs)).toEqual(results);
  expect(countOps(parsed).AND).toBe(circuit.andCount);
  expect(parsed.gates.length).toBe(circuit.gateCount);
  expect(parsed.wires).toBe(circuit.wireCount);
  return { results, parsed };
}

type Kind = 'unsigned' | 'signed';
type Val = UInt | SInt;
const asNum = (kind: Kind, w: number, v: bigint): bigint => (kind === 'signed' ? BigInt.asIntN(w, v) : v);
const bool = (b: boolean): bigint => (b ? 1n : 0n);

interface BinOp {
  name: string;
  build: (x: Val, y: Val) => Val | ReturnType<UInt['lt']>;
  ref: (a: bigint, b: bigint, w: number) => bigint; // on the interpreted numbers; result masked later
  ands?: (w: number) => number;
  maxAnds?: (w: number) => number;
}

const OPS: BinOp[] = [
  { name: 'add', build: (x, y) => (x as UInt).add(y as UInt), ref: (a, b) => a + b, ands: (w) => w - 1 },
  { name: 'sub', build: (x, y) => (x as UInt).sub(y as UInt), ref: (a, b) => a - b, ands: (w) => w - 1 },
  { name: 'mul', build: (x, y) => (x as UInt).mul(y as UInt), ref: (a, b) => a * b, ands: (w) => w * w - w + 1 },
  { name: 'lt', build: (x, y) => (x as UInt).lt(y as UInt), ref: (a, b) => bool(a < b), maxAnds: (w) => w },
  { name: 'le', build: (x, y) => (x as UInt).le(y as UInt), ref: (a, b) => bool(a <= b), maxAnds: (w) => w },
  { name: 'gt', build: (x, y) => (x as UInt).gt(y as UInt), ref: (a, b) => bool(a > b), maxAnds: (w) => w },
  { name: 'ge', build: (x, y) => (x as UInt).ge(y as UInt), ref: (a, b) => bool(a >= b), maxAnds: (w) => w },
  { name: 'eq', build: (x, y) => (x as UInt).eq(y as UInt), ref: (a, b) => bool(a === b), ands: (w) => w - 1 },
  { name: 'ne', build: (x, y) => (x as UInt).ne(y as UInt), ref: (a, b) => bool(a !== b), ands: (w) => w - 1 },
  { name: 'min', build: (x, y) => (x as UInt).min(y as UInt), ref: (a, b) => (a < b ? a : b), maxAnds: (w) => 2 * w },
  { name: 'max', build: (x, y) => (x as UInt).max(y as UInt), ref: (a, b) => (a > b ? a : b), maxAnds: (w) => 2 * w },
  { name: 'and', build: (x, y) => (x as UInt).and(y as UInt), ref: (a, b) => a & b, ands: (w) => w },
  { name: 'or', build: (x, y) => (x as UInt).or(y as UInt), ref: (a, b) => a | b, ands: (w) => w },
  { name: 'xor', build: (x, y) => (x as UInt).xor(y as UInt), ref: (a, b) => a ^ b, ands: () => 0 },
];

describe.each(['unsigned', 'signed'] as const)('%s integers vs BigInt', (kind) => {
  for (const op of OPS) {
    it.each(WIDTHS)(`${op.name}, width %i`, (w) => {
      const b = new CircuitBuilder();
      const x = kind === 'signed' ? b.inputSigned(0, w) : b.input(0, w);
      const y = kind === 'signed' ? b.inputSigned(1, w) : b.input(1, w);
      const r = op.build(x, y);
      b.output(r);
      const c = b.build();
      const xs = samples(w);
      const ys = samples(w).reverse();
      // Equal operands too: they are the edge case of every comparison.
      const inputs = xs.map((a, i) => [a, i % 7 === 0 ? a : ys[i]!]);
      const { results } = run(c, inputs);
      const outWidth = 'width' in r ? r.width : 1;
      inputs.forEach(([a, bb], i) => {
        const expected = BigInt.asUintN(outWidth, op.ref(asNum(kind, w, a!), asNum(kind, w, bb!), w));
        expect(results[i]![0], `${op.name}(${a}, ${bb})`).toBe(expected);
      });
      if (op.ands) expect(c.andCount).toBe(op.ands(w));
      if (op.maxAnds) expect(c.andCount).toBeLessThanOrEqual(op.maxAnds(w));
    });
  }

  it.each(WIDTHS)('mux, width %i: one AND per bit', (w) => {
    const b = new CircuitBuilder();
    const s = b.inputBit(0);
    const x = kind === 'signed' ? b.inputSigned(0, w) : b.input(0, w);
    const y = kind === 'signed' ? b.inputSigned(1, w) : b.input(1, w);
    b.output(b.mux(s, x as UInt, y as UInt));
    const c = b.build();
    expect(c.andCount).toBe(w);
    const xs = samples(w);
    const inputs = xs.map((a, i) => [BigInt(i & 1), a, randBig(w)]);
    const { results } = run(c, inputs);
    inputs.forEach(([s0, a, bb], i) => expect(results[i]![0]).toBe(s0 === 1n ? a : bb));
  });

  it.each(WIDTHS)('neg, shifts and resize, width %i', (w) => {
    const b = new CircuitBuilder();
    const x = (kind === 'signed' ? b.inputSigned(0, w) : b.input(0, w)) as UInt;
    const k = Math.min(3, w - 1);
    b.output(x.neg());
    b.output(x.shl(k));
    b.output(x.shr(k));
    b.output(x.rotl(k));
    b.output(x.rotr(k));
    b.output(x.resize(w + 5));
    b.output(x.resize(Math.max(1, w - 2)));
    b.output(x.not());
    const c = b.build();
    const xs = samples(w);
    const { results } = run(
      c,
      xs.map((a) => [a]),
    );
    const mask = (n: number, v: bigint): bigint => BigInt.asUintN(n, v);
    xs.forEach((a, i) => {
      const n = asNum(kind, w, a);
      const rot = (v: bigint, r: number): bigint => mask(w, (v << BigInt(r)) | (v >> BigInt(w - r)));
      expect(results[i]).toEqual([
        mask(w, -n),
        mask(w, n << BigInt(k)),
        mask(w, n >> BigInt(k)),
        rot(a, k),
        rot(a, (w - k) % w),
        mask(w + 5, n),
        mask(Math.max(1, w - 2), n),
        mask(w, ~n),
      ]);
    });
    // Only negation costs ANDs (w − 1 for 0 − x, minus what the constant folds away).
    expect(c.andCount).toBeLessThanOrEqual(Math.max(0, w - 1));
  });
});

describe('constants fold', () => {
  it('a constant operand costs nothing where the math allows', () => {
    const b = new CircuitBuilder();
    const x = b.input(0, 32);
    b.output(x.add(0));
    b.output(x.mul(1));
    b.output(x.mul(8)); // a shift
    b.output(x.and(0xffff0000));
    b.output(x.or(0));
    b.output(x.xor(0xdeadbeef));
    b.output(b.constant(5, 32).add(b.constant(7, 32)));
    const c = b.build();
    expect(c.andCount).toBe(0);
    const xs = samples(32);
    const { results } = run(
      c,
      xs.map((a) => [a]),
    );
    const m = (v: bigint): bigint => BigInt.asUintN(32, v);
    xs.forEach((a, i) =>
      expect(results[i]).toEqual([a, a, m(a * 8n), a & 0xffff0000n, a, a ^ 0xdeadbeefn, 12n]),
    );
  });

  it('adding a constant with t trailing zero bits saves t + 1 ANDs', () => {
    for (const [k, ands] of [
      [1n, 30],
      [0x80n, 23],
      [0x428a2f98n, 27],
    ] as const) {
      const b = new CircuitBuilder();
      const x = b.input(0, 32);
      b.output(x.add(k));
      const c = b.build();
      expect(c.andCount).toBe(ands);
      const xs = samples(32);
      const { results } = run(
        c,
        xs.map((a) => [a]),
      );
      xs.forEach((a, i) => expect(results[i]![0]).toBe(BigInt.asUintN(32, a + k)));
    }
  });

  it('constant, input and negated outputs are written with CONST, COPY and INV', () => {
    const b = new CircuitBuilder();
    const x = b.input(0, 4);
    const y = b.input(1, 4);
    const s = x.xor(y);
    b.output(b.constant(0b1010, 4));
    b.output(x);
    b.output(s);
    b.output(s); // the same gate twice: the second is a copy
    b.output(s.not());
    b.output(b.bit(true));
    const c = b.build();
    const parsed = parseBinary(c.toBinary());
    const ops = countOps(parsed);
    expect(ops.CONST).toBe(5);
    expect(ops.COPY).toBe(8);
    expect(ops.INV).toBe(4);
    expect(ops.XOR).toBe(4);
    expect(c.toBristol()).toMatch(/^1 1 1 \d+ EQ$/m);
    expect(c.toBristol()).toMatch(/EQW$/m);
    const { results } = run(c, [[0b0011n, 0b0101n]]);
    expect(results[0]).toEqual([0b1010n, 0b0011n, 0b0110n, 0b0110n, 0b1001n, 1n]);
  });

  it('gates no output depends on are not emitted', () => {
    const b = new CircuitBuilder();
    const x = b.input(0, 64);
    const y = b.input(1, 64);
    x.mul(y); // dead
    const sum = x.add(y);
    sum.lt(x); // dead
    b.output(sum);
    const c = b.build();
    expect(c.andCount).toBe(63);
    expect(c.xorCount).toBe(countOps(parseBinary(c.toBinary())).XOR);
    // 2 XORs per sum bit, 2 more per carry: nothing else survives.
    expect(c.xorCount).toBeLessThanOrEqual(64 * 2 + 63 * 2);
  });

  it('identical subexpressions are built once', () => {
    const b = new CircuitBuilder();
    const x = b.input(0, 16);
    const y = b.input(1, 16);
    b.output(x.add(y));
    b.output(y.add(x));
    const c = b.build();
    expect(c.andCount).toBe(15);
  });
});

describe('arrays, bits and shapes', () => {
  it.each([1, 2, 3, 5, 8])('select from %i elements, every index including past the end', (len) => {
    const w = 8;
    const b = new CircuitBuilder();
    const arr = Array.from({ length: len }, () => b.input(0, w));
    const idxBits = 4;
    const idx = b.input(1, idxBits);
    b.output(b.select(arr, idx));
    const c = b.build();
    const values = Array.from({ length: len }, () => randBig(w));
    const inputs = Array.from({ length: 1 << idxBits }, (_, i) => [...values, BigInt(i)]);
    const { results } = run(c, inputs);
    inputs.forEach((_, i) => expect(results[i]![0]).toBe(values[Math.min(i, len - 1)]));
    // (len − 1)·w for the tree, plus the clamp on the unused high index bits.
    let levels = 0;
    while (1 << levels < len) levels++;
    const clampAnds = idxBits > levels ? idxBits - levels - 1 + w : 0;
    expect(c.andCount).toBeLessThanOrEqual((len - 1) * w + clampAnds);
  });

  it('select with an index exactly as wide as needed costs (length − 1)·width ANDs', () => {
    const b = new CircuitBuilder();
    const arr = Array.from({ length: 8 }, () => b.input(0, 32));
    b.output(b.select(arr, b.input(1, 3)));
    expect(b.build().andCount).toBe(7 * 32);
  });

  it('update writes one element at a secret index', () => {
    const b = new CircuitBuilder();
    const arr = Array.from({ length: 5 }, () => b.input(0, 8));
    const idx = b.input(1, 3);
    const v = b.input(1, 8);
    for (const e of b.update(arr, idx, v)) b.output(e);
    const c = b.build();
    const values = [1n, 2n, 3n, 4n, 5n];
    const inputs = Array.from({ length: 8 }, (_, i) => [...values, BigInt(i), 99n]);
    const { results } = run(c, inputs);
    inputs.forEach((_, i) => expect(results[i]).toEqual(values.map((x, j) => (j === i ? 99n : x))));
  });

  it('update with an index narrower than the array never writes past its range', () => {
    const b = new CircuitBuilder();
    const arr = Array.from({ length: 6 }, () => b.input(0, 4));
    const idx = b.input(1, 2);
    for (const e of b.update(arr, idx, 15)) b.output(e);
    const c = b.build();
    const values = [1n, 2n, 3n, 4n, 5n, 6n];
    const inputs = Array.from({ length: 4 }, (_, i) => [...values, BigInt(i)]);
    const { results } = run(c, inputs);
    inputs.forEach((_, i) => expect(results[i]).toEqual(values.map((x, j) => (j === i ? 15n : x))));
  });

  it('signed values mixed with negative constants', () => {
    const b = new CircuitBuilder();
    const x = b.inputSigned(0, 16);
    b.output(x.add(-5));
    b.output(x.lt(-100));
    b.output(x.max(-1).min(1000));
    b.output(x.mul(-3));
    const c = b.build();
    const xs = samples(16);
    const { results } = run(
      c,
      xs.map((a) => [a]),
    );
    const m = (v: bigint): bigint => BigInt.asUintN(16, v);
    xs.forEach((a, i) => {
      const n = BigInt.asIntN(16, a);
      const clamped = n < -1n ? -1n : n > 1000n ? 1000n : n;
      expect(results[i]).toEqual([m(n - 5n), bool(n < -100n), m(clamped), m(n * -3n)]);
    });
  });

  it('bits, concat and slice', () => {
    const b = new CircuitBuilder();
    const x = b.input(0, 8);
    const y = b.input(1, 4);
    const bit = b.inputBit(0);
    b.output(b.concat(x, y, bit));
    b.output(x.slice(2, 6));
    b.output(x.bit(0).and(y.bit(3)).or(bit).xor(x.bit(7)));
    b.output(b.mux(bit, x.bit(1), y.bit(1)));
    b.output(bit.toUInt(3));
    const c = b.build();
    const inputs = Array.from({ length: 64 }, () => [randBig(8), randBig(4), randBig(1)]);
    const { results } = run(c, inputs);
    inputs.forEach(([xv, yv, bv], i) => {
      const bitOf = (v: bigint, k: number): bigint => (v >> BigInt(k)) & 1n;
      expect(results[i]).toEqual([
        xv! | (yv! << 8n) | (bv! << 12n),
        (xv! >> 2n) & 0xfn,
        ((bitOf(xv!, 0) & bitOf(yv!, 3)) | bv!) ^ bitOf(xv!, 7),
        bv === 1n ? bitOf(xv!, 1) : bitOf(yv!, 1),
        bv,
      ]);
    });
  });

  it('inputs and outputs keep declaration order and widths', () => {
    const b = new CircuitBuilder();
    const a = b.input(1, 3);
    const s = b.inputSigned(0, 5);
    b.output(s.resize(9));
    b.output(a);
    const c = b.build();
    expect(c.inputs).toEqual([
      { party: 1, width: 3 },
      { party: 0, width: 5 },
    ]);
    expect(c.inputWidths).toEqual([3, 5]);
    expect(c.outputWidths).toEqual([9, 3]);
    const bin = c.toBinary();
    expect(String.fromCharCode(...bin.subarray(0, 4))).toBe('WMPC');
    expect([...bin.subarray(4, 8)]).toEqual([1, 0, 0, 0]);
    expect(c.toBristol().split('\n').slice(1, 4)).toEqual(['2 3 5', '2 9 3', '']);
    const { results } = run(c, [[5n, 0b10000n]]);
    expect(results[0]).toEqual([BigInt.asUintN(9, -16n), 5n]);
  });
});

describe('argument errors', () => {
  const code = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (e) {
      return e instanceof WebmpcError ? e.code : 'not a WebmpcError';
    }
    return undefined;
  };

  it('rejects mismatched widths, signedness, builders and bad sizes', () => {
    const b = new CircuitBuilder();
    const x = b.input(0, 8);
    const y = b.input(0, 9);
    const s = b.inputSigned(0, 8);
    const other = new CircuitBuilder().input(0, 8);
    expect(code(() => x.add(y))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.add(s as unknown as UInt))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.add(other))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.input(0, 0))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.input(-1, 8))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.add(1.5))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.bit(8))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.slice(4, 2))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.shl(-1))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.select([], x))).toBe('INVALID_ARGUMENT');
    expect(code(() => new CircuitBuilder().build())).toBe('INVALID_ARGUMENT');
  });

  it('reports constants', () => {
    const b = new CircuitBuilder();
    expect(b.constant(-1, 8).constantValue).toBe(255n);
    expect(b.constantSigned(-1, 8).constantValue).toBe(-1n);
    expect(b.input(0, 8).constantValue).toBeUndefined();
    expect(b.bit(true).constantValue).toBe(true);
  });
});
