/**
 * Boolean circuit builder: write a computation on secret integers in TypeScript, get a circuit in
 * webmpc's binary format (or Bristol Fashion) that the garbling and secret-sharing protocols run.
 *
 * ```ts
 * const b = new CircuitBuilder();
 * const x = b.input(0, 32);          // party 0's 32-bit unsigned input
 * const y = b.input(1, 32);          // party 1's
 * b.output(x.max(y));                // the larger one, 32 bits
 * b.output(x.lt(y));                 // 1 bit
 * const circuit = b.build();
 * circuit.toBinary();                // bytes for the Wasm side
 * circuit.andCount;                  // 64 (32 for <, 32 for the mux)
 * ```
 *
 * Cost model. In garbled circuits and GMW, XOR and NOT are free (no ciphertexts, no
 * communication); only AND gates cost. So every operation here is written to minimise ANDs:
 * n-bit addition mod 2^n takes n−1 ANDs (the full adder with one AND), comparison n, equality
 * n−1, a multiplexer one per bit. On top of that the builder folds constants (a constant operand
 * costs no gates: adding a constant with t trailing zero bits saves t+1 ANDs), merges identical
 * gates, keeps negations as flags on edges so NOT is almost always absorbed into an XOR, and drops
 * every gate that no output depends on.
 *
 * Bit order. Bit k of a value is bit k of its integer, least significant first. Inputs are
 * numbered in the order of the `input*` calls and occupy the first wires; outputs are the last
 * wires, in the order of the `output` calls.
 */
import { WebmpcError } from '../errors.js';
import { encodeBinary, OP_AND, OP_CONST, OP_COPY, OP_INV, OP_XOR, type GateArrays } from './binary.js';

// ---------------------------------------------------------------------------------------------
// Internal graph. A node is a constant, an input bit, an XOR or an AND. Edges are "refs":
// `node * 2 + negated`, so NOT is a flag flip and costs nothing until the emitter needs an INV.
// Node 0 is the constant 0: ref 0 is false, ref 1 is true.
// ---------------------------------------------------------------------------------------------

const NODE_CONST = 0;
const NODE_INPUT = 1;
const NODE_XOR = 2;
const NODE_AND = 3;

const FALSE = 0;
const TRUE = 1;

/**
 * Refs are stored in Uint32Arrays and combined with `& ~1`, which is a 32-bit signed operation:
 * keep node ids below 2^30 so refs stay positive small integers.
 */
const MAX_NODES = 2 ** 30;
/**
 * Structural hashing keys are `(a * 2^25 + b) * 2 + op`, exact as long as refs stay below 2^25
 * (about 16 million nodes). Larger circuits still build; they just stop merging duplicate gates.
 */
const HASH_LIMIT = 2 ** 25;

export { OP_AND, OP_CONST, OP_COPY, OP_INV, OP_XOR };

/** Largest width accepted for a single value; far beyond any circuit a protocol can run. */
const MAX_WIDTH = 1 << 24;

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function checkWidth(width: number, what: string): void {
  if (!Number.isInteger(width) || width < 1 || width > MAX_WIDTH) {
    throw invalid(`${what} must be an integer in [1, ${MAX_WIDTH}], got ${String(width)}`);
  }
}

/** A constant operand: converted to the width of the other operand (two's complement, mod 2^n). */
export type Constant = bigint | number;

function toBigInt(value: Constant): bigint {
  if (typeof value === 'bigint') return value;
  if (!Number.isSafeInteger(value)) throw invalid('constant must be a safe integer or a bigint');
  return BigInt(value);
}

/** The bits of `value mod 2^width`, least significant first, as constant refs. */
function constantRefs(value: Constant, width: number): number[] {
  let v = BigInt.asUintN(width, toBigInt(value));
  const refs = new Array<number>(width);
  for (let i = 0; i < width; i++) {
    refs[i] = Number(v & 1n);
    v >>= 1n;
  }
  return refs;
}

/** One input value as declared: who supplies it and how many bits it has. */
export interface CircuitInput {
  /**
   * The party that supplies this value, or −1 for an external client's (`input('client', …)`,
   * which `serve` supplies with `authgc`). Not part of the wire format (nor of the content hash):
   * it travels beside it, and `Session.run` takes each input's owner from here.
   */
  readonly party: number;
  readonly width: number;
}

export class CircuitBuilder {
  #op = new Uint8Array(1024);
  #left = new Uint32Array(1024);
  #right = new Uint32Array(1024);
  #nodes = 1; // node 0: the constant
  readonly #hash = new Map<number, number>();
  readonly #inputs: { party: number; width: number; firstNode: number; firstWire: number }[] = [];
  readonly #outputs: number[][] = [];

  // --- declaring inputs and constants ---------------------------------------------------------

  /**
   * Declares the next input value: `width` bits supplied by `party`. Inputs occupy the circuit's
   * first wires in declaration order, so declare them in the order the protocol expects.
   * `'client'`: an external client's value in a client–server run (`serve` with `authgc`): its
   * bit 0 is 1 when the client's input counts and 0 for a client that gave none or was refused
   * (whose other bits are then arbitrary, so the circuit must ignore them).
   */
  input(party: number | 'client', width: number): UInt {
    return new UInt(this, this.#inputRefs(party, width));
  }

  /** Like {@link input}, read as a two's-complement signed integer. */
  inputSigned(party: number | 'client', width: number): SInt {
    return new SInt(this, this.#inputRefs(party, width));
  }

  /** A one-bit input. */
  inputBit(party: number | 'client'): Bit {
    return new Bit(this, this.#inputRefs(party, 1)[0]!);
  }

  /** The inputs declared so far, in wire order. */
  get inputs(): readonly CircuitInput[] {
    return this.#inputs.map(({ party, width }) => ({ party, width }));
  }

  #inputRefs(who: number | 'client', width: number): number[] {
    // 'client': an external client's value (owner −1), which only `serve` supplies (authgc).
    const party = who === 'client' ? -1 : who;
    if (who !== 'client' && (!Number.isInteger(party) || party < 0)) throw invalid("party must be a non-negative integer or 'client'");
    checkWidth(width, 'input width');
    const firstNode = this.#nodes;
    const last = this.#inputs[this.#inputs.length - 1];
    const firstWire = last === undefined ? 0 : last.firstWire + last.width;
    const refs = new Array<number>(width);
    for (let i = 0; i < width; i++) refs[i] = this.#newNode(NODE_INPUT, 0, 0) * 2;
    this.#inputs.push({ party, width, firstNode, firstWire });
    return refs;
  }

  /** An unsigned constant (`value mod 2^width`). Constants cost no gates. */
  constant(value: Constant, width: number): UInt {
    checkWidth(width, 'constant width');
    return new UInt(this, constantRefs(value, width));
  }

  /** A signed constant in two's complement. */
  constantSigned(value: Constant, width: number): SInt {
    checkWidth(width, 'constant width');
    return new SInt(this, constantRefs(value, width));
  }

  /** A constant bit. */
  bit(value: boolean): Bit {
    return new Bit(this, value ? TRUE : FALSE);
  }

  // --- combinators on values ------------------------------------------------------------------

  /** `sel ? ifTrue : ifFalse`, one AND per bit where the two differ. */
  mux<T extends IntValue<T>>(sel: Bit, ifTrue: T, ifFalse: T | Constant): T;
  mux(sel: Bit, ifTrue: Bit, ifFalse: Bit | boolean): Bit;
  mux(sel: Bit, ifTrue: AnyIntValue | Bit, ifFalse: AnyIntValue | Bit | Constant | boolean): AnyIntValue | Bit {
    this.owns(sel);
    if (ifTrue instanceof Bit) {
      const f = typeof ifFalse === 'boolean' ? this.bit(ifFalse) : ifFalse;
      if (!(f instanceof Bit)) throw invalid('mux: both branches must be bits');
      this.owns(ifTrue);
      this.owns(f);
      return new Bit(this, this.muxRef(sel.ref, ifTrue.ref, f.ref));
    }
    if (typeof ifFalse === 'boolean' || ifFalse instanceof Bit) throw invalid('mux: both branches must be integers');
    // Both branches share one type; the union only exists because TS cannot narrow T here.
    const f = (ifTrue as UInt).operand(ifFalse as UInt | Constant, 'mux');
    return ifTrue.wrap(ifTrue.refs.map((t, i) => this.muxRef(sel.ref, t, f[i]!)));
  }

  /**
   * `array[index]` for a secret index, as a tree of multiplexers: (length−1)·width ANDs. An index
   * at or past the end selects the last element (the result is `array[min(index, length−1)]`).
   */
  select<T extends IntValue<T>>(array: readonly T[], index: UInt): T {
    this.owns(index);
    const first = array[0];
    if (first === undefined) throw invalid('select: the array is empty');
    const width = first.width;
    let level: number[][] = array.map((v) => {
      this.owns(v);
      if (v.width !== width) throw invalid('select: array elements must have the same width');
      return v.refs.slice();
    });
    let levels = 0;
    while (1 << levels < array.length) levels++;
    const idx = index.refs;
    for (let j = 0; j < levels; j++) {
      // Index bits past the end of `idx` are zero: always pick the even element.
      const s = idx[j] ?? FALSE;
      const next: number[][] = [];
      for (let i = 0; i < level.length; i += 2) {
        const even = level[i]!;
        // Pad an odd level with its last element: past-the-end indices then select the last
        // element, and the padded mux folds away (both branches equal).
        const odd = level[i + 1] ?? level[level.length - 1]!;
        next.push(even.map((e, k) => this.muxRef(s, odd[k]!, e)));
      }
      level = next;
    }
    let result = level[0]!;
    if (idx.length > levels) {
      // High index bits set mean "past the end": clamp to the last element.
      let high = FALSE;
      for (let j = levels; j < idx.length; j++) high = this.orRef(high, idx[j]!);
      const last = array[array.length - 1]!.refs;
      result = result.map((r, k) => this.muxRef(high, last[k]!, r));
    }
    return first.wrap(result);
  }

  /**
   * A copy of `array` with `array[index] = value` for a secret index (out-of-range indices change
   * nothing). Costs about length·(index width − 1 + element width) ANDs.
   */
  update<T extends IntValue<T>>(array: readonly T[], index: UInt, value: T | Constant): T[] {
    this.owns(index);
    return array.map((element, i) => {
      this.owns(element);
      // An index too narrow to reach position i never hits it (eq would compare mod 2^width).
      if (i >= 2 ** index.width) return element;
      const hit = index.eq(i);
      return this.mux(hit, element.wrap(element.operand(value, 'update')), element);
    });
  }

  /** Concatenates values, lowest bits first: `concat(lo, hi)` has `lo` in its low bits. */
  concat(...parts: readonly (AnyIntValue | Bit)[]): UInt {
    const refs: number[] = [];
    for (const p of parts) {
      this.owns(p);
      if (p instanceof Bit) refs.push(p.ref);
      else refs.push(...p.refs);
    }
    if (refs.length === 0) throw invalid('concat: nothing to concatenate');
    return new UInt(this, refs);
  }

  // --- outputs and emission -------------------------------------------------------------------

  /** Declares the next output value. Outputs are the circuit's last wires, in declaration order. */
  output(value: AnyIntValue | Bit): void {
    this.owns(value);
    this.#outputs.push(value instanceof Bit ? [value.ref] : value.refs.slice());
  }

  /**
   * Emits the circuit: only gates some output depends on, in topological order, with inputs on
   * the first wires and outputs on the last. The builder stays usable; later calls see later
   * declarations.
   */
  build(): Circuit {
    if (this.#outputs.length === 0) throw invalid('build: the circuit has no outputs');
    const op = this.#op;
    const left = this.#left;
    const right = this.#right;
    const count = this.#nodes;
    const outRefs = this.#outputs.flat();
    const nIn = this.#inputs.reduce((s, i) => s + i.width, 0);
    const nOut = outRefs.length;

    // Liveness: node ids are already a topological order, so one backward sweep suffices.
    const live = new Uint8Array(count);
    for (const r of outRefs) live[r >>> 1] = 1;
    for (let id = count - 1; id > 0; id--) {
      if (live[id] === 1 && op[id]! >= NODE_XOR) {
        live[left[id]! >>> 1] = 1;
        live[right[id]! >>> 1] = 1;
      }
    }

    // An output that is a gate's plain (non-negated) result gets that gate's wire directly;
    // everything else (inputs, constants, negations, repeats) is written by a COPY/INV/CONST.
    const claimedBy = new Int32Array(count).fill(-1);
    outRefs.forEach((r, k) => {
      const id = r >>> 1;
      if ((r & 1) === 0 && op[id]! >= NODE_XOR && claimedBy[id] === -1) claimedBy[id] = k;
    });
    // Wires of AND operands that are negated: one INV per negated node, shared by all uses.
    const needsInv = new Uint8Array(count);
    let internal = 0;
    let invWires = 0;
    for (let id = 1; id < count; id++) {
      if (live[id] !== 1 || op[id]! < NODE_XOR) continue;
      if (claimedBy[id] === -1) internal++;
      if (op[id] === NODE_AND) {
        for (const r of [left[id]!, right[id]!]) {
          if ((r & 1) === 1 && needsInv[r >>> 1] === 0) {
            needsInv[r >>> 1] = 1;
            invWires++;
          }
        }
      }
    }
    const wireCount = nIn + internal + invWires + nOut;
    if (wireCount > 0xffffffff) throw new WebmpcError('TOO_LARGE', 'circuit has more than 2^32 wires');
    const outBase = wireCount - nOut;

    const wire = new Int32Array(count).fill(-1);
    const invWire = new Int32Array(count).fill(-1);
    for (const { width, firstNode, firstWire } of this.#inputs) {
      for (let i = 0; i < width; i++) wire[firstNode + i] = firstWire + i;
    }
    const gates = new GateList();
    const andDepth = new Uint32Array(count);
    let maxDepth = 0;
    let next = nIn;
    const plainWire = (id: number): number => {
      const w = wire[id]!;
      if (w < 0) throw new Error('circuit builder: operand emitted before its gate (bug)');
      return w;
    };
    const operandWire = (r: number): number => {
      const id = r >>> 1;
      if ((r & 1) === 0) return plainWire(id);
      let w = invWire[id]!;
      if (w < 0) {
        w = next++;
        gates.push(OP_INV, plainWire(id), 0, w);
        invWire[id] = w;
      }
      return w;
    };
    for (let id = 1; id < count; id++) {
      if (live[id] !== 1 || op[id]! < NODE_XOR) continue;
      const l = left[id]!;
      const r = right[id]!;
      const isAnd = op[id] === NODE_AND;
      const a = isAnd ? operandWire(l) : plainWire(l >>> 1);
      const b = isAnd ? operandWire(r) : plainWire(r >>> 1);
      const k = claimedBy[id]!;
      const out = k >= 0 ? outBase + k : next++;
      gates.push(isAnd ? OP_AND : OP_XOR, a, b, out);
      wire[id] = out;
      const d = Math.max(andDepth[l >>> 1]!, andDepth[r >>> 1]!) + (isAnd ? 1 : 0);
      andDepth[id] = d;
      if (d > maxDepth) maxDepth = d;
    }
    outRefs.forEach((r, k) => {
      const id = r >>> 1;
      if (claimedBy[id] === k && (r & 1) === 0) return;
      const out = outBase + k;
      if (id === 0) gates.push(OP_CONST, r & 1, 0, out);
      else if ((r & 1) === 1) gates.push(OP_INV, plainWire(id), 0, out);
      else gates.push(OP_COPY, plainWire(id), 0, out);
    });
    if (next !== outBase) throw new Error('circuit builder: wire count mismatch (bug)');
    return new Circuit(
      this.inputs,
      this.#outputs.map((o) => o.length),
      wireCount,
      gates,
      maxDepth,
    );
  }

  // --- bit-level primitives (refs) ------------------------------------------------------------

  /** @internal Throws unless `v` was made by this builder. */
  owns(v: { readonly builder: CircuitBuilder }): void {
    if (v.builder !== this) throw invalid('values from different circuit builders cannot be mixed');
  }

  #newNode(kind: number, l: number, r: number): number {
    const id = this.#nodes;
    if (id >= MAX_NODES) throw new WebmpcError('TOO_LARGE', `circuit has more than ${MAX_NODES} gates`);
    if (id === this.#op.length) {
      const grow = <A extends Uint8Array | Uint32Array>(a: A, make: (n: number) => A): A => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.#op = grow(this.#op, (n) => new Uint8Array(n));
      this.#left = grow(this.#left, (n) => new Uint32Array(n));
      this.#right = grow(this.#right, (n) => new Uint32Array(n));
    }
    this.#op[id] = kind;
    this.#left[id] = l;
    this.#right[id] = r;
    this.#nodes = id + 1;
    return id;
  }

  /** A gate node, merged with an identical earlier one when there is one. `l <= r`. */
  #gate(kind: number, l: number, r: number): number {
    if (r < HASH_LIMIT) {
      const key = (l * HASH_LIMIT + r) * 2 + (kind - NODE_XOR);
      const hit = this.#hash.get(key);
      if (hit !== undefined) return hit;
      const id = this.#newNode(kind, l, r);
      this.#hash.set(key, id);
      return id;
    }
    return this.#newNode(kind, l, r);
  }

  /** @internal */
  xorRef(a: number, b: number): number {
    // XOR nodes keep plain operands; negations move to the result, where they are free.
    const neg = (a ^ b) & 1;
    let l = a & ~1;
    let r = b & ~1;
    if (l === r) return neg;
    if (l > r) [l, r] = [r, l];
    if (l === FALSE) return r | neg;
    return this.#gate(NODE_XOR, l, r) * 2 + neg;
  }

  /** @internal */
  andRef(a: number, b: number): number {
    if (a === FALSE || b === FALSE) return FALSE;
    if (a === TRUE) return b;
    if (b === TRUE) return a;
    if (a === b) return a;
    if ((a ^ b) === 1) return FALSE; // x AND NOT x
    return this.#gate(NODE_AND, Math.min(a, b), Math.max(a, b)) * 2;
  }

  /** @internal `a OR b = a ⊕ b ⊕ ab`: one AND, and no INV gates on the AND's inputs. */
  orRef(a: number, b: number): number {
    return this.xorRef(this.xorRef(a, b), this.andRef(a, b));
  }

  /** @internal `s ? t : f = f ⊕ s(t ⊕ f)`: one AND, none if t and f are the same. */
  muxRef(s: number, t: number, f: number): number {
    return this.xorRef(f, this.andRef(s, this.xorRef(t, f)));
  }

  /**
   * @internal Ripple-carry adder with one AND per full adder: the carry is
   * `c ⊕ ((a ⊕ c) ∧ (b ⊕ c))`, which is the majority of a, b, c. The carry out of the top bit is
   * computed only when asked for, so n-bit addition mod 2^n costs n−1 ANDs.
   */
  addRefs(a: readonly number[], b: readonly number[], carryIn: number, carryOut: boolean): { sum: number[]; carry: number } {
    const n = a.length;
    const sum = new Array<number>(n);
    let c = carryIn;
    for (let i = 0; i < n; i++) {
      const ai = a[i]!;
      const bi = b[i]!;
      const axc = this.xorRef(ai, c);
      sum[i] = this.xorRef(axc, bi);
      if (i < n - 1 || carryOut) c = this.xorRef(c, this.andRef(axc, this.xorRef(bi, c)));
    }
    return { sum, carry: c };
  }

  /**
   * @internal Unsigned `a < b` in n ANDs: scanning up from bit 0, wherever a and b differ the
   * answer so far becomes b's bit (a mux on `a_i ⊕ b_i`).
   */
  ltRefs(a: readonly number[], b: readonly number[]): number {
    let lt = FALSE;
    for (let i = 0; i < a.length; i++) {
      const ai = a[i]!;
      const bi = b[i]!;
      lt = this.xorRef(lt, this.andRef(this.xorRef(ai, bi), this.xorRef(bi, lt)));
    }
    return lt;
  }

  /** @internal `a == b`: n XNORs (free) and a balanced tree of n−1 ANDs. */
  eqRefs(a: readonly number[], b: readonly number[]): number {
    let terms = a.map((ai, i) => this.xorRef(ai, b[i]!) ^ 1);
    while (terms.length > 1) {
      const next: number[] = [];
      for (let i = 0; i + 1 < terms.length; i += 2) next.push(this.andRef(terms[i]!, terms[i + 1]!));
      if (terms.length % 2 === 1) next.push(terms[terms.length - 1]!);
      terms = next;
    }
    return terms[0]!;
  }

  /** @internal Schoolbook product mod 2^n: n(n+1)/2 partial-product ANDs and n−1 shrinking adders. */
  mulRefs(a: readonly number[], b: readonly number[]): number[] {
    const n = a.length;
    let acc = a.map((ai) => this.andRef(ai, b[0]!));
    for (let j = 1; j < n; j++) {
      // Row j is a·b_j shifted left by j; only its low n−j bits survive mod 2^n, and the adder
      // only needs to cover acc's bits j..n−1 (the row is zero below bit j).
      const bj = b[j]!;
      const row = new Array<number>(n - j);
      for (let i = 0; i < n - j; i++) row[i] = this.andRef(a[i]!, bj);
      const { sum } = this.addRefs(acc.slice(j), row, FALSE, false);
      acc = acc.slice(0, j).concat(sum);
    }
    return acc;
  }
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/** A single secret (or constant) bit. */
export class Bit {
  /** @internal */
  constructor(
    readonly builder: CircuitBuilder,
    /** @internal The edge in the builder's graph. */
    readonly ref: number,
  ) {}

  /** True when the bit is a known constant (folded at build time). */
  get constantValue(): boolean | undefined {
    return this.ref === FALSE ? false : this.ref === TRUE ? true : undefined;
  }

  #other(o: Bit | boolean): number {
    if (typeof o === 'boolean') return o ? TRUE : FALSE;
    this.builder.owns(o);
    return o.ref;
  }

  and(o: Bit | boolean): Bit {
    return new Bit(this.builder, this.builder.andRef(this.ref, this.#other(o)));
  }
  or(o: Bit | boolean): Bit {
    return new Bit(this.builder, this.builder.orRef(this.ref, this.#other(o)));
  }
  xor(o: Bit | boolean): Bit {
    return new Bit(this.builder, this.builder.xorRef(this.ref, this.#other(o)));
  }
  not(): Bit {
    return new Bit(this.builder, this.ref ^ 1);
  }
  eq(o: Bit | boolean): Bit {
    return new Bit(this.builder, this.builder.xorRef(this.ref, this.#other(o)) ^ 1);
  }
  ne(o: Bit | boolean): Bit {
    return this.xor(o);
  }
  /** This bit as a 1-bit unsigned integer (or zero-extended to `width`). */
  toUInt(width = 1): UInt {
    checkWidth(width, 'width');
    const refs = new Array<number>(width).fill(FALSE);
    refs[0] = this.ref;
    return new UInt(this.builder, refs);
  }
}

/** Either integer type. */
export type AnyIntValue = UInt | SInt;

/**
 * Operations shared by {@link UInt} and {@link SInt}. Binary operations take a value of the same
 * type and width, or a constant (`bigint`/`number`, reduced mod 2^width). Arithmetic is mod
 * 2^width, as for fixed-width machine integers.
 */
export abstract class IntValue<T extends IntValue<T>> {
  /** @internal */
  constructor(
    readonly builder: CircuitBuilder,
    /** @internal The bits' edges, least significant first. */
    readonly refs: readonly number[],
  ) {}

  /** @internal A value of this type over other bits. */
  abstract wrap(refs: readonly number[]): T;
  /** Whether comparisons, shifts right and widening treat the top bit as a sign. */
  abstract readonly signed: boolean;

  get width(): number {
    return this.refs.length;
  }

  /** Bit `i` (0 = least significant). */
  bit(i: number): Bit {
    const r = this.refs[i];
    if (r === undefined || !Number.isInteger(i)) throw invalid(`bit index ${String(i)} out of range for width ${this.width}`);
    return new Bit(this.builder, r);
  }

  /** All bits, least significant first. */
  bits(): Bit[] {
    return this.refs.map((r) => new Bit(this.builder, r));
  }

  /** The value when every bit is a known constant, else undefined. */
  get constantValue(): bigint | undefined {
    let v = 0n;
    for (let i = this.refs.length - 1; i >= 0; i--) {
      const r = this.refs[i]!;
      if (r > TRUE) return undefined;
      v = (v << 1n) | BigInt(r);
    }
    return this.signed ? BigInt.asIntN(this.width, v) : v;
  }

  /** @internal The other operand's bits, checked (same builder, type and width) or a constant. */
  operand(o: T | Constant, what: string): readonly number[] {
    if (typeof o === 'bigint' || typeof o === 'number') return constantRefs(o, this.width);
    this.builder.owns(o);
    if (o.signed !== this.signed) throw invalid(`${what}: cannot mix signed and unsigned values; convert one first`);
    if (o.width !== this.width) throw invalid(`${what}: widths differ (${this.width} and ${o.width}); resize one first`);
    return o.refs;
  }

  // --- arithmetic ---

  /** `this + o mod 2^n`: n−1 ANDs (fewer when `o` is a constant). */
  add(o: T | Constant): T {
    return this.wrap(this.builder.addRefs(this.refs, this.operand(o, 'add'), FALSE, false).sum);
  }

  /** `this − o mod 2^n` as `this + ¬o + 1`: n−1 ANDs. */
  sub(o: T | Constant): T {
    const b = this.operand(o, 'sub').map((r) => r ^ 1);
    return this.wrap(this.builder.addRefs(this.refs, b, TRUE, false).sum);
  }

  /** `−this mod 2^n`. */
  neg(): T {
    return this.wrap(this.refs.map(() => FALSE)).sub(this as unknown as T);
  }

  /** `this · o mod 2^n` (schoolbook): n²−n+1 ANDs for two secret operands. */
  mul(o: T | Constant): T {
    return this.wrap(this.builder.mulRefs(this.refs, this.operand(o, 'mul')));
  }

  // --- bitwise ---

  and(o: T | Constant): T {
    const b = this.operand(o, 'and');
    return this.wrap(this.refs.map((r, i) => this.builder.andRef(r, b[i]!)));
  }
  or(o: T | Constant): T {
    const b = this.operand(o, 'or');
    return this.wrap(this.refs.map((r, i) => this.builder.orRef(r, b[i]!)));
  }
  xor(o: T | Constant): T {
    const b = this.operand(o, 'xor');
    return this.wrap(this.refs.map((r, i) => this.builder.xorRef(r, b[i]!)));
  }
  not(): T {
    return this.wrap(this.refs.map((r) => r ^ 1));
  }

  /** Shift left by a constant, filling with zeros (free). */
  shl(k: number): T {
    checkShift(k);
    const n = this.width;
    return this.wrap(this.refs.map((_, i) => (i >= k ? this.refs[i - k]! : FALSE)).slice(0, n));
  }

  /** Shift right by a constant: logical for {@link UInt}, arithmetic for {@link SInt} (free). */
  shr(k: number): T {
    checkShift(k);
    const n = this.width;
    const fill = this.signed ? this.refs[n - 1]! : FALSE;
    return this.wrap(this.refs.map((_, i) => (i + k < n ? this.refs[i + k]! : fill)));
  }

  /** Rotate left by a constant (free). */
  rotl(k: number): T {
    checkShift(k);
    const n = this.width;
    return this.wrap(this.refs.map((_, i) => this.refs[(((i - k) % n) + n) % n]!));
  }

  /** Rotate right by a constant (free). */
  rotr(k: number): T {
    checkShift(k);
    return this.rotl(this.width - (k % this.width));
  }

  // --- comparisons ---

  /** The operands' bits for an unsigned comparison: signed ones get their sign bits flipped. */
  #ordered(o: T | Constant, what: string): [readonly number[], readonly number[]] {
    const b = this.operand(o, what);
    if (!this.signed) return [this.refs, b];
    // Flipping the sign bit maps two's complement order onto unsigned order, for free.
    const flip = (refs: readonly number[]): number[] => refs.map((r, i) => (i === refs.length - 1 ? r ^ 1 : r));
    return [flip(this.refs), flip(b)];
  }

  /** `this < o`: n ANDs. */
  lt(o: T | Constant): Bit {
    const [a, b] = this.#ordered(o, 'lt');
    return new Bit(this.builder, this.builder.ltRefs(a, b));
  }
  /** `this > o`: n ANDs. */
  gt(o: T | Constant): Bit {
    const [a, b] = this.#ordered(o, 'gt');
    return new Bit(this.builder, this.builder.ltRefs(b, a));
  }
  /** `this ≤ o` as `¬(this > o)`: n ANDs. */
  le(o: T | Constant): Bit {
    return this.gt(o).not();
  }
  /** `this ≥ o` as `¬(this < o)`: n ANDs. */
  ge(o: T | Constant): Bit {
    return this.lt(o).not();
  }
  /** `this == o`: n−1 ANDs. */
  eq(o: T | Constant): Bit {
    return new Bit(this.builder, this.builder.eqRefs(this.refs, this.operand(o, 'eq')));
  }
  /** `this ≠ o`: n−1 ANDs. */
  ne(o: T | Constant): Bit {
    return this.eq(o).not();
  }
  /** `this == 0`: n−1 ANDs. */
  isZero(): Bit {
    return this.eq(0);
  }

  /** The smaller of the two: a comparison and a mux, 2n ANDs. */
  min(o: T | Constant): T {
    const b = this.wrap(this.operand(o, 'min'));
    return this.builder.mux(this.lt(b), this as unknown as T, b);
  }
  /** The larger of the two: 2n ANDs. */
  max(o: T | Constant): T {
    const b = this.wrap(this.operand(o, 'max'));
    return this.builder.mux(this.lt(b), b, this as unknown as T);
  }

  // --- shape ---

  /** Bits `start` (inclusive) to `end` (exclusive) as an unsigned value (free). */
  slice(start: number, end: number = this.width): UInt {
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > this.width || start >= end) {
      throw invalid(`slice(${String(start)}, ${String(end)}) out of range for width ${this.width}`);
    }
    return new UInt(this.builder, this.refs.slice(start, end));
  }

  /**
   * The value at another width: truncated, or extended with zeros ({@link UInt}) or copies of
   * the sign bit ({@link SInt}). Free.
   */
  resize(width: number): T {
    checkWidth(width, 'width');
    if (width <= this.width) return this.wrap(this.refs.slice(0, width));
    const fill = this.signed ? this.refs[this.width - 1]! : FALSE;
    return this.wrap(this.refs.concat(new Array<number>(width - this.width).fill(fill)));
  }

  /** The same bits read as unsigned. */
  asUInt(): UInt {
    return new UInt(this.builder, this.refs);
  }
  /** The same bits read as two's-complement signed. */
  asSInt(): SInt {
    return new SInt(this.builder, this.refs);
  }
}

function checkShift(k: number): void {
  if (!Number.isInteger(k) || k < 0) throw invalid('shift amount must be a non-negative integer constant');
}

/** An unsigned integer of any width. */
export class UInt extends IntValue<UInt> {
  readonly signed = false;
  /** @internal */
  wrap(refs: readonly number[]): UInt {
    return new UInt(this.builder, refs);
  }
}

/** A two's-complement signed integer of any width. */
export class SInt extends IntValue<SInt> {
  readonly signed = true;
  /** @internal */
  wrap(refs: readonly number[]): SInt {
    return new SInt(this.builder, refs);
  }
}

// ---------------------------------------------------------------------------------------------
// Emitted circuit
// ---------------------------------------------------------------------------------------------

/** Growable gate list: opcode plus up to three wire operands per gate. */
class GateList {
  ops = new Uint8Array(1024);
  args = new Uint32Array(3 * 1024);
  length = 0;

  push(op: number, a: number, b: number, out: number): void {
    if (this.length === this.ops.length) {
      const ops = new Uint8Array(this.ops.length * 2);
      ops.set(this.ops);
      const args = new Uint32Array(this.args.length * 2);
      args.set(this.args);
      this.ops = ops;
      this.args = args;
    }
    const i = this.length++;
    this.ops[i] = op;
    this.args[3 * i] = a;
    this.args[3 * i + 1] = b;
    this.args[3 * i + 2] = out;
  }
}

/** A finished circuit: its shape, gate statistics and serialisations. */
export class Circuit {
  readonly #gates: GateList;
  /** Number of AND gates: the cost in garbling (two ciphertexts each) and GMW (one OT each). */
  readonly andCount: number;
  readonly xorCount: number;
  readonly invCount: number;
  /** Every gate, including INV, CONST and COPY. */
  readonly gateCount: number;
  /** Largest number of ANDs on any path from an input: the round count of GMW. */
  readonly andDepth: number;

  /** @internal */
  constructor(
    /** The input values in wire order. */
    readonly inputs: readonly CircuitInput[],
    /** The widths of the output values in wire order. */
    readonly outputWidths: readonly number[],
    /** Total number of wires (inputs, internal, outputs). */
    readonly wireCount: number,
    gates: GateList,
    andDepth: number,
  ) {
    this.#gates = gates;
    this.gateCount = gates.length;
    this.andDepth = andDepth;
    let and = 0;
    let xor = 0;
    let inv = 0;
    for (let i = 0; i < gates.length; i++) {
      const o = gates.ops[i];
      if (o === OP_AND) and++;
      else if (o === OP_XOR) xor++;
      else if (o === OP_INV) inv++;
    }
    this.andCount = and;
    this.xorCount = xor;
    this.invCount = inv;
  }

  /** The widths of the input values in wire order. */
  get inputWidths(): number[] {
    return this.inputs.map((i) => i.width);
  }

  /** webmpc's binary circuit format (the layout is described in `binary.ts`). */
  toBinary(): Uint8Array {
    return encodeBinary(this.#arrays(false));
  }

  /**
   * The gate arrays with the shape, as copies trimmed to the gates: what the engine worker
   * encodes in place of {@link toBinary}, off the caller's thread (a copy is cheap next to the
   * encoding, and a structured clone of a view would send the spare capacity too).
   * @internal
   */
  gateArrays(): GateArrays {
    return this.#arrays(true);
  }

  #arrays(copy: boolean): GateArrays {
    const g = this.#gates;
    return {
      wires: this.wireCount,
      inputWidths: this.inputs.map((i) => i.width),
      outputWidths: [...this.outputWidths],
      length: g.length,
      ops: copy ? g.ops.slice(0, g.length) : g.ops,
      args: copy ? g.args.slice(0, 3 * g.length) : g.args,
    };
  }

  /**
   * Bristol Fashion text. Constants reaching an output are written with `EQ`, outputs that are
   * copies of another wire with `EQW`; everything else is XOR, AND and INV.
   */
  toBristol(): string {
    const g = this.#gates;
    const lines: string[] = [
      `${g.length} ${this.wireCount}`,
      `${this.inputs.length} ${this.inputs.map((i) => i.width).join(' ')}`,
      `${this.outputWidths.length} ${this.outputWidths.join(' ')}`,
      '',
    ];
    const args = g.args;
    for (let i = 0; i < g.length; i++) {
      const a = args[3 * i]!;
      const b = args[3 * i + 1]!;
      const out = args[3 * i + 2]!;
      switch (g.ops[i]) {
        case OP_XOR:
          lines.push(`2 1 ${a} ${b} ${out} XOR`);
          break;
        case OP_AND:
          lines.push(`2 1 ${a} ${b} ${out} AND`);
          break;
        case OP_INV:
          lines.push(`1 1 ${a} ${out} INV`);
          break;
        case OP_CONST:
          lines.push(`1 1 ${a} ${out} EQ`);
          break;
        default:
          lines.push(`1 1 ${a} ${out} EQW`);
      }
    }
    return lines.join('\n') + '\n';
  }
}
