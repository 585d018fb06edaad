/**
 * Arithmetic program builder: write a computation on secret integers or field elements in
 * TypeScript, get a program in the format the `mascot` protocol runs (see
 * `wasm/crates/spdz/src/program.rs`; this module writes the same bytes as its Rust builder).
 *
 * ```ts
 * const b = new ProgramBuilder({ parties: 3 });
 * const x = b.uint(0, 32);                 // party 0's 32-bit unsigned input
 * const y = b.uint(1, 32);
 * const z = b.sint(2, 16);                 // party 2's signed 16-bit input
 * b.output(x.mul(y).add(z));               // to every party
 * b.output(x.lt(y), { to: [0, 1] });       // 0 or 1, to parties 0 and 1 only
 * const program = await b.build();
 * ```
 *
 * **Cost model.** Addition, subtraction, negation and operations with a public constant are
 * local and free. Each `mul` and `select` consumes one Beaver triple and one round of openings
 * for its whole layer (the interpreter batches every multiplication of equal depth). A
 * comparison of k-bit operands costs about 3k + 64 triples (a carry tree of 2(k − 1) products
 * and k + κ + 1 random bits, each made from a triple) and ⌈log2 k⌉ + 1 rounds; `eq` about 2k + 64.
 * κ = min(64, 125 − k) is the comparison's statistical security: its masked opening is within
 * 2^−κ of independent of the operands (2^−64 up to k = 61, 2^−61 at k = 64), per comparison.
 * A k-bit integer input costs k input masks and k triples (its range check). Keep integers narrow
 * where comparisons need them.
 *
 * **Integer semantics and widths.** In F_p (p = 2^128 − 173) the builder tracks, for every value,
 * the range of integers it can hold given in-range inputs, as long as that range stays within
 * ±2^126 (so no computation wraps mod p). Comparisons (`lt`, `le`, `gt`, `ge`, `eq`) take their
 * operand width from these ranges: the protocol needs a − b ∈ [−2^k, 2^k) for a k-bit
 * comparison, k ≤ 64. For a value whose range is unknown (a field input, a product too wide to
 * track), pass `{ bits }` — a promise the protocol cannot check: operands outside give a wrong
 * 0 or 1 and are hidden less well (the masking can reveal the other operand). Integer inputs
 * themselves are range-checked by the protocol. Outputs are read as unsigned when their range is
 * non-negative, signed when it may be negative, and as field elements otherwise.
 *
 * **Binary field.** Over GF(2^128) (`field: 'binary'`) there are only field elements: addition
 * and subtraction are XOR, negation is the identity, and there are no comparisons or integer
 * inputs. `select` works with a condition that is 0 or 1.
 */
import { WebmpcError } from '../errors.js';
import {
  CLIENT_OWNER,
  CLIENT_OWNER_WIRE,
  FIELD_BYTE,
  KIND_BYTE,
  MAGIC,
  MAX_INT_BITS,
  MAX_OUTPUTS,
  MAX_PARTIES,
  MAX_VALUES,
  OP,
  PRIME,
  VERSION,
  Writer,
  type FieldName,
  type InputKind,
  type OutputKind,
} from './format.js';
import { programOf, rangeOf, type Program } from './program.js';

/** Ranges beyond ±2^126 are dropped: far from p/2, so tracked integers never wrap. */
const LIMIT = 1n << 126n;

/** An integer range `[lowest, highest]`, or undefined when unknown. */
export type Range = readonly [lowest: bigint, highest: bigint] | undefined;

/** A value operand: a {@link Value} of the same builder, or a public constant. */
export type Operand = Value | bigint | number;

/** Options of the comparisons. */
export interface CompareOptions {
  /**
   * The operand width k (1 ..= 64): a promise that a − b ∈ [−2^k, 2^k). Default: derived from
   * the operands' tracked ranges (required when a range is unknown).
   */
  bits?: number;
}

/** Options of {@link ProgramBuilder.output}. */
export interface OutputOptions {
  /** The parties that learn the value (a party or a list); default every party. */
  to?: number | readonly number[];
  /** How the value is read. Default: from its tracked range (see the module docs). */
  as?: OutputKind;
}

/** Options of a new {@link ProgramBuilder}. */
export interface ProgramBuilderOptions {
  /** The number of parties (2 ..= 1024); the program runs only in sessions of this size. */
  parties: number;
  /** `'prime'` (default): F_p with p = 2^128 − 173, integers and comparisons. `'binary'`: GF(2^128). */
  field?: FieldName;
}

interface Instr {
  readonly op: number;
  readonly args: readonly number[];
  /** A constant (MULC, ADDC, CONST), already reduced into the field. */
  readonly constant?: bigint;
  /** A comparison's width (LT, LE, EQ). */
  readonly bits?: number;
}

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function clamp(lo: bigint, hi: bigint): Range {
  return lo < -LIMIT || hi > LIMIT ? undefined : [lo, hi];
}

const abs = (x: bigint) => (x < 0n ? -x : x);

/** A value of a program under construction. Operations return new values of the same builder. */
export class Value {
  /** @internal */
  readonly builder: ProgramBuilder;
  /** @internal Negative: input −(ref + 1); else instruction `ref`. */
  readonly ref: number;
  /**
   * The integers this value can hold when every input is in range, or undefined if unknown (field
   * elements, or a range beyond ±2^126).
   */
  readonly range: Range;

  /** @internal Values come from a {@link ProgramBuilder}. */
  constructor(builder: ProgramBuilder, ref: number, range: Range) {
    this.builder = builder;
    this.ref = ref;
    this.range = range;
  }

  /** this + o. */
  add(o: Operand): Value {
    return this.builder.add(this, o);
  }
  /** this − o. */
  sub(o: Operand): Value {
    return this.builder.sub(this, o);
  }
  /** −this. */
  neg(): Value {
    return this.builder.neg(this);
  }
  /** this · o (one triple unless `o` is a constant). */
  mul(o: Operand): Value {
    return this.builder.mul(this, o);
  }
  /** 1 if this < o else 0 (F_p only). */
  lt(o: Operand, options?: CompareOptions): Value {
    return this.builder.lt(this, o, options);
  }
  /** 1 if this ≤ o else 0 (F_p only). */
  le(o: Operand, options?: CompareOptions): Value {
    return this.builder.le(this, o, options);
  }
  /** 1 if this > o else 0 (F_p only). */
  gt(o: Operand, options?: CompareOptions): Value {
    return this.builder.gt(this, o, options);
  }
  /** 1 if this ≥ o else 0 (F_p only). */
  ge(o: Operand, options?: CompareOptions): Value {
    return this.builder.ge(this, o, options);
  }
  /** 1 if this = o else 0 (F_p only). */
  eq(o: Operand, options?: CompareOptions): Value {
    return this.builder.eq(this, o, options);
  }
  /** 1 if this ≠ o else 0 (F_p only). */
  ne(o: Operand, options?: CompareOptions): Value {
    return this.builder.ne(this, o, options);
  }
  /** For a bit: `a` if this is 1, `b` if it is 0 (one triple). */
  select(a: Operand, b: Operand): Value {
    return this.builder.select(this, a, b);
  }
  /** For a bit: 1 − this. */
  not(): Value {
    return this.builder.not(this);
  }
  /** For bits: this AND o (one triple). */
  and(o: Value): Value {
    return this.builder.and(this, o);
  }
  /** For bits: this OR o (one triple). */
  or(o: Value): Value {
    return this.builder.or(this, o);
  }
  /** The larger of this and o (a comparison and a select; this on ties). */
  max(o: Operand, options?: CompareOptions): Value {
    return this.builder.max(this, o, options);
  }
  /** The smaller of this and o (this on ties). */
  min(o: Operand, options?: CompareOptions): Value {
    return this.builder.min(this, o, options);
  }
}

/** Builds an arithmetic program for the `mascot` protocol; see the module docs. */
export class ProgramBuilder {
  /** The field. */
  readonly field: FieldName;
  /** The number of parties. */
  readonly parties: number;
  readonly #inputs: { owner: number; kind: InputKind }[] = [];
  readonly #instrs: Instr[] = [];
  readonly #outputs: { value: number; kind: OutputKind; to: number[] | undefined }[] = [];

  constructor(options: ProgramBuilderOptions) {
    const { parties, field = 'prime' } = options ?? ({} as ProgramBuilderOptions);
    if (!Number.isInteger(parties) || parties < 2 || parties > MAX_PARTIES) {
      throw invalid(`parties must be an integer in [2, ${MAX_PARTIES}]`);
    }
    if (field !== 'prime' && field !== 'binary') throw invalid("field must be 'prime' or 'binary'");
    this.parties = parties;
    this.field = field;
  }

  // --- inputs and constants -------------------------------------------------------------------

  /**
   * Declares the next input value, supplied by `party`, or by an external client with `'client'`
   * (the compute parties of `serve` take it from a client; see `webmpc`'s `serve`/`submit`).
   * Inputs may be declared at any point: they are numbered in declaration order, before every
   * instruction.
   */
  input(party: number | 'client', kind: InputKind): Value {
    if (party !== 'client' && (!Number.isInteger(party) || party < 0 || party >= this.parties)) {
      throw invalid(`party must be in [0, ${this.parties}) or 'client'`);
    }
    let k: InputKind;
    if (kind?.type === 'field') {
      k = { type: 'field' };
    } else if (kind?.type === 'unsigned' || kind?.type === 'signed') {
      if (this.field !== 'prime') throw invalid('integer inputs need the prime field');
      if (!Number.isInteger(kind.bits) || kind.bits < 1 || kind.bits > MAX_INT_BITS) throw invalid(`integer inputs have 1 to ${MAX_INT_BITS} bits`);
      k = { type: kind.type, bits: kind.bits };
    } else {
      throw invalid("input kind must be { type: 'field' }, { type: 'unsigned', bits } or { type: 'signed', bits }");
    }
    this.#room();
    this.#inputs.push({ owner: party === 'client' ? CLIENT_OWNER : party, kind: k });
    return new Value(this, -this.#inputs.length, rangeOf(k));
  }

  /** An unsigned `bits`-bit integer input of `party` (F_p only). */
  uint(party: number | 'client', bits: number): Value {
    return this.input(party, { type: 'unsigned', bits });
  }

  /** A signed (two's complement range) `bits`-bit integer input of `party` (F_p only). */
  sint(party: number | 'client', bits: number): Value {
    return this.input(party, { type: 'signed', bits });
  }

  /** A field-element input of `party`. */
  element(party: number | 'client'): Value {
    return this.input(party, { type: 'field' });
  }

  /** A public constant (in F_p a negative integer means p − |c|). */
  constant(c: bigint | number): Value {
    const [v, range] = this.#constant(c);
    return this.#push({ op: OP.CONST, args: [], constant: v }, range);
  }

  // --- arithmetic ---------------------------------------------------------------------------

  /** a + b. */
  add(a: Value, b: Operand): Value {
    const x = this.#own(a);
    if (!(b instanceof Value)) {
      const [c, cr] = this.#constant(b);
      return this.#push({ op: OP.ADDC, args: [x.ref], constant: c }, this.#lin(x.range, cr, (p, q) => p + q));
    }
    const y = this.#own(b);
    return this.#push({ op: OP.ADD, args: [x.ref, y.ref] }, this.#lin(x.range, y.range, (p, q) => p + q));
  }

  /** a − b. */
  sub(a: Value, b: Operand): Value {
    const x = this.#own(a);
    if (!(b instanceof Value)) {
      const [c, cr] = this.#constant(b, true);
      return this.#push({ op: OP.ADDC, args: [x.ref], constant: c }, this.#lin(x.range, cr, (p, q) => p + q));
    }
    const y = this.#own(b);
    const r = x.range && y.range && this.field === 'prime' ? clamp(x.range[0] - y.range[1], x.range[1] - y.range[0]) : undefined;
    return this.#push({ op: OP.SUB, args: [x.ref, y.ref] }, r);
  }

  /** −a. */
  neg(a: Value): Value {
    const x = this.#own(a);
    return this.#push({ op: OP.NEG, args: [x.ref] }, x.range && this.field === 'prime' ? clamp(-x.range[1], -x.range[0]) : undefined);
  }

  /** a · b: one triple, or free when `b` is a constant. */
  mul(a: Value, b: Operand): Value {
    const x = this.#own(a);
    if (!(b instanceof Value)) {
      const [c, cr] = this.#constant(b);
      return this.#push({ op: OP.MULC, args: [x.ref], constant: c }, this.#product(x.range, cr));
    }
    const y = this.#own(b);
    return this.#push({ op: OP.MUL, args: [x.ref, y.ref] }, this.#product(x.range, y.range));
  }

  // --- comparisons (F_p) --------------------------------------------------------------------

  /** 1 if a < b else 0. */
  lt(a: Value, b: Operand, options?: CompareOptions): Value {
    const [x, y] = [this.#own(a), this.#operand(b)];
    return this.#push({ op: OP.LT, args: [x.ref, y.ref], bits: this.#width(x, y, options, 'lt') }, [0n, 1n]);
  }

  /** 1 if a ≤ b else 0. */
  le(a: Value, b: Operand, options?: CompareOptions): Value {
    const [x, y] = [this.#own(a), this.#operand(b)];
    return this.#push({ op: OP.LE, args: [x.ref, y.ref], bits: this.#width(x, y, options, 'le') }, [0n, 1n]);
  }

  /** 1 if a > b else 0 (b < a). */
  gt(a: Value, b: Operand, options?: CompareOptions): Value {
    const [x, y] = [this.#own(a), this.#operand(b)];
    return this.#push({ op: OP.LT, args: [y.ref, x.ref], bits: this.#width(y, x, options, 'gt') }, [0n, 1n]);
  }

  /** 1 if a ≥ b else 0 (b ≤ a). */
  ge(a: Value, b: Operand, options?: CompareOptions): Value {
    const [x, y] = [this.#own(a), this.#operand(b)];
    return this.#push({ op: OP.LE, args: [y.ref, x.ref], bits: this.#width(y, x, options, 'ge') }, [0n, 1n]);
  }

  /** 1 if a = b else 0. */
  eq(a: Value, b: Operand, options?: CompareOptions): Value {
    const [x, y] = [this.#own(a), this.#operand(b)];
    return this.#push({ op: OP.EQ, args: [x.ref, y.ref], bits: this.#width(x, y, options, 'eq') }, [0n, 1n]);
  }

  /** 1 if a ≠ b else 0. */
  ne(a: Value, b: Operand, options?: CompareOptions): Value {
    return this.not(this.eq(a, b, options));
  }

  // --- selection and bits -------------------------------------------------------------------

  /**
   * `a` if `c` is 1, `b` if it is 0 (one triple: c·(a − b) + b). `c` must be a bit: a
   * comparison's result, a 1-bit input, or (F_p field values, GF(2^128)) a value the program
   * guarantees to be 0 or 1.
   */
  select(c: Value, a: Operand, b: Operand): Value {
    const cond = this.#bit(c, 'select');
    const [x, y] = [this.#operand(a), this.#operand(b)];
    const r = x.range && y.range ? clamp(x.range[0] < y.range[0] ? x.range[0] : y.range[0], x.range[1] > y.range[1] ? x.range[1] : y.range[1]) : undefined;
    return this.#push({ op: OP.SELECT, args: [cond.ref, x.ref, y.ref] }, r);
  }

  /** 1 − a, for a bit a. */
  not(a: Value): Value {
    const x = this.#bit(a, 'not');
    const n = this.#push({ op: OP.NEG, args: [x.ref] }, x.range && [-x.range[1], -x.range[0]]);
    return this.#push({ op: OP.ADDC, args: [n.ref], constant: 1n }, x.range && [0n, 1n]);
  }

  /** a AND b for bits (a·b). */
  and(a: Value, b: Value): Value {
    const x = this.#bit(a, 'and');
    const y = this.#bit(b, 'and');
    return this.#push({ op: OP.MUL, args: [x.ref, y.ref] }, x.range && y.range && [0n, 1n]);
  }

  /** a OR b for bits (a + b − a·b). */
  or(a: Value, b: Value): Value {
    const x = this.#bit(a, 'or');
    const y = this.#bit(b, 'or');
    const p = this.#push({ op: OP.MUL, args: [x.ref, y.ref] }, undefined);
    const s = this.#push({ op: OP.ADD, args: [x.ref, y.ref] }, undefined);
    return this.#push({ op: OP.SUB, args: [s.ref, p.ref] }, x.range && y.range && [0n, 1n]);
  }

  /** The larger of a and b (a on ties): `lt` then `select`. */
  max(a: Value, b: Operand, options?: CompareOptions): Value {
    const y = this.#operand(b);
    return this.select(this.lt(a, y, options), y, a);
  }

  /** The smaller of a and b (a on ties). */
  min(a: Value, b: Operand, options?: CompareOptions): Value {
    const y = this.#operand(b);
    return this.select(this.lt(a, y, options), a, y);
  }

  // --- outputs and the result ---------------------------------------------------------------

  /** Reveals `v` to `options.to` (default: every party), read as `options.as`. */
  output(v: Value, options: OutputOptions = {}): void {
    const x = this.#own(v);
    if (this.#outputs.length >= MAX_OUTPUTS) throw new WebmpcError('PROGRAM_TOO_LARGE', `a program has at most ${MAX_OUTPUTS} outputs`);
    const toRaw = options.to;
    let to: number[] | undefined;
    if (toRaw !== undefined) {
      const list = typeof toRaw === 'number' ? [toRaw] : Array.isArray(toRaw) ? [...toRaw] : undefined;
      if (!list || list.length === 0 || !list.every((p) => Number.isInteger(p) && p >= 0 && p < this.parties)) {
        throw invalid(`output recipients must be a non-empty list of parties in [0, ${this.parties})`);
      }
      to = [...new Set(list)].sort((p, q) => p - q);
      // Revealing to every party is one opening; naming them all would cost a mask each.
      if (to.length === this.parties) to = undefined;
    }
    let kind = options.as;
    if (kind === undefined) kind = this.field === 'binary' || !x.range ? 'field' : x.range[0] < 0n ? 'signed' : 'unsigned';
    if (kind !== 'field' && kind !== 'unsigned' && kind !== 'signed') throw invalid("output kind must be 'field', 'unsigned' or 'signed'");
    if (kind !== 'field' && this.field !== 'prime') throw invalid('integer outputs need the prime field');
    this.#outputs.push({ value: x.ref, kind, to });
  }

  /** The number of values (inputs and instructions) so far. */
  get size(): number {
    return this.#inputs.length + this.#instrs.length;
  }

  /** The program's encoding (byte for byte what the Rust builder writes for the same calls). */
  encode(): Uint8Array {
    const w = new Writer();
    const nIn = this.#inputs.length;
    const operand = (ref: number) => (ref < 0 ? -(ref + 1) : nIn + ref);
    w.bytes(MAGIC);
    w.u8(VERSION);
    w.u8(FIELD_BYTE[this.field]);
    w.u8(this.parties & 0xff);
    w.u8(this.parties >> 8);
    w.varint(nIn);
    w.varint(this.#instrs.length);
    w.varint(this.#outputs.length);
    for (const i of this.#inputs) {
      w.varint(i.owner === CLIENT_OWNER ? CLIENT_OWNER_WIRE : i.owner);
      w.u8(KIND_BYTE[i.kind.type]);
      w.u8(i.kind.type === 'field' ? 0 : i.kind.bits);
    }
    for (const ins of this.#instrs) {
      w.u8(ins.op);
      for (const a of ins.args) w.varint(operand(a));
      if (ins.constant !== undefined) w.constant(ins.constant);
      if (ins.bits !== undefined) w.u8(ins.bits);
    }
    for (const o of this.#outputs) {
      w.varint(operand(o.value));
      w.u8(KIND_BYTE[o.kind]);
      w.varint(o.to?.length ?? 0);
      for (const p of o.to ?? []) w.varint(p);
    }
    return w.finish();
  }

  /** The finished program (its content hash is computed with Web Crypto, hence async). */
  build(): Promise<Program> {
    return programOf(this.encode());
  }

  // --- internals ----------------------------------------------------------------------------

  #room(): void {
    if (this.size >= MAX_VALUES) throw new WebmpcError('PROGRAM_TOO_LARGE', `a program has at most ${MAX_VALUES} values (inputs and instructions)`);
  }

  #push(ins: Instr, range: Range): Value {
    this.#room();
    this.#instrs.push(ins);
    return new Value(this, this.#instrs.length - 1, this.field === 'prime' ? range : undefined);
  }

  #own(v: Value): Value {
    if (!(v instanceof Value)) throw invalid('operand must be a Value (or, where allowed, a bigint or safe integer constant)');
    if (v.builder !== this) throw invalid('operand belongs to another ProgramBuilder');
    return v;
  }

  /** A Value for an operand, emitting a CONST for a constant. */
  #operand(o: Operand): Value {
    return o instanceof Value ? this.#own(o) : this.constant(o);
  }

  /** A constant as a field element, and its integer range if it has a meaningful one. */
  #constant(c: bigint | number, negate = false): [bigint, Range] {
    let v: bigint;
    if (typeof c === 'bigint') v = c;
    else if (typeof c === 'number' && Number.isSafeInteger(c)) v = BigInt(c);
    else throw invalid('a constant must be a bigint or a safe integer');
    if (this.field === 'binary') {
      if (v < 0n || v >> 128n !== 0n) throw invalid('a GF(2^128) constant is an integer in [0, 2^128)');
      return [v, undefined];
    }
    if (v <= -PRIME || v >= PRIME) throw invalid('an F_p constant is an integer in (−p, p), p = 2^128 − 173');
    if (negate) v = -v;
    const range: Range = abs(v) <= LIMIT ? [v, v] : undefined;
    return [((v % PRIME) + PRIME) % PRIME, range];
  }

  #lin(a: Range, b: Range, f: (p: bigint, q: bigint) => bigint): Range {
    return a && b && this.field === 'prime' ? clamp(f(a[0], b[0]), f(a[1], b[1])) : undefined;
  }

  #product(a: Range, b: Range): Range {
    if (!a || !b || this.field !== 'prime') return undefined;
    const ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]];
    return clamp(ps.reduce((m, x) => (x < m ? x : m)), ps.reduce((m, x) => (x > m ? x : m)));
  }

  #bit(v: Value, what: string): Value {
    const x = this.#own(v);
    if (x.range && (x.range[0] < 0n || x.range[1] > 1n)) throw invalid(`${what} needs a bit (a value that is 0 or 1), but this one may hold other integers`);
    return x;
  }

  /**
   * The comparison width for a − b: derived from the operands' tracked ranges where both are
   * known, else the `{ bits }` given. A given width may widen the derived one, never narrow it:
   * a narrower comparison would give a wrong answer for some in-range inputs and open a masked
   * value that hides them less well.
   */
  #width(a: Value, b: Value, options: CompareOptions | undefined, what: string): number {
    if (this.field !== 'prime') throw invalid(`${what}: comparisons need the prime field`);
    const given = options?.bits;
    if (given !== undefined && (!Number.isInteger(given) || given < 1 || given > MAX_INT_BITS)) {
      throw invalid(`${what}: bits must be an integer in [1, ${MAX_INT_BITS}]`);
    }
    if (!a.range || !b.range) {
      if (given === undefined) throw invalid(`${what}: an operand's integer range is unknown (a field element?); pass { bits } to promise a width`);
      return given;
    }
    const spread = [a.range[0] - b.range[1], a.range[1] - b.range[0]].map(abs).reduce((m, x) => (x > m ? x : m));
    let k = 1;
    while (spread >= 1n << BigInt(k)) k++;
    if (given !== undefined) {
      if (given < k) {
        throw invalid(`${what}: { bits: ${given} } is narrower than the operands, whose difference needs ${k} bits; pass at least ${k} (or nothing: the width is derived)`);
      }
      return given;
    }
    if (k > MAX_INT_BITS) throw invalid(`${what}: the operands may differ by 2^${MAX_INT_BITS} or more; comparisons take narrower integers (or pass { bits } to promise a width)`);
    return k;
  }
}
