/**
 * A finished arithmetic program: its bytes, content hash, and what a session needs to run it
 * (input owners and kinds, output recipients and kinds), with the helpers that turn `bigint`
 * values into the session's byte convention and back.
 *
 * **Byte convention.** Like every input and output of `Session.run`, values are big-endian bytes:
 *
 * | kind                     | input bytes                                   | output bytes            |
 * |--------------------------|-----------------------------------------------|-------------------------|
 * | unsigned k-bit integer   | `ceil(k / 8)`, the value (as `encodeUint`)    | 16, the field element   |
 * | signed k-bit integer     | `ceil(k / 8)`, two's complement               | 16, two's complement    |
 * | field element            | 16, the canonical element (< p in F_p)        | 16, the canonical element |
 *
 * A GF(2^128) element is the 128-bit integer whose bit i is the coefficient of X^i (modulus
 * X^128 + X^7 + X^2 + X + 1). {@link Program.encodeInputs} and {@link Program.decodeOutputs} do
 * the conversions; errors never repeat a value.
 */
import { callWasm } from '../engine/wasm.js';
import { WebmpcError } from '../errors.js';
import type { Outputs, ProgramSource } from '../protocols/types.js';
import { sha256 } from '../protocols/util.js';
import { PRIME, readLayout, type FieldName, type InputKind, type OutputKind, type ProgramLayout } from './format.js';

/** The preprocessed material one run of a program consumes. */
export interface Requirements {
  /** Beaver triples (multiplications, selects, and the comparisons' trees). */
  readonly triples: number;
  /** Random shared bits (comparisons); each costs one more triple to make. */
  readonly bits: number;
  /**
   * Input masks per party: one per field input it owns, k per k-bit integer input (input bit by
   * bit for its range check), and one per output revealed to it alone.
   */
  readonly masks: readonly number[];
}

/** Programs made by this module (the builder or {@link programFromBytes}): the only ones `mascot` runs. */
const GENUINE = new WeakSet<object>();
/** Only this module constructs programs: their layout is read from bytes, never taken on trust. */
const TOKEN: unique symbol = Symbol('webmpc/program');

/** True if `x` is a {@link Program} made by this module. */
export function isProgram(x: unknown): x is Program {
  return typeof x === 'object' && x !== null && GENUINE.has(x);
}

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

/** Bytes an input value of this kind takes. */
export function inputBytes(kind: InputKind): number {
  return kind.type === 'field' ? 16 : Math.ceil(kind.bits / 8);
}

function describe(kind: InputKind, field: FieldName): string {
  if (kind.type === 'field') return field === 'prime' ? 'an element of F_p' : 'an element of GF(2^128)';
  return `a ${kind.bits}-bit ${kind.type} integer`;
}

function readBig(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

function writeBig(v: bigint, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = BigInt.asUintN(8 * n, v);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** The integer range of an input kind, or undefined for field elements. */
export function rangeOf(kind: InputKind): readonly [bigint, bigint] | undefined {
  if (kind.type === 'unsigned') return [0n, (1n << BigInt(kind.bits)) - 1n];
  if (kind.type === 'signed') return [-(1n << BigInt(kind.bits - 1)), (1n << BigInt(kind.bits - 1)) - 1n];
  return undefined;
}

function toBigInt(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw invalid(`${what} must be a bigint or a safe integer`);
}

/** An arithmetic program, ready for `Session.run(program, { protocol: 'mascot', ... })`. */
export class Program implements ProgramSource {
  /** Marks a program for `Session.run` (circuits have none). */
  readonly kind = 'program' as const;
  /** The encoding (the format of `wasm/crates/spdz/src/program.rs`). */
  readonly bytes: Uint8Array;
  /** SHA-256 of {@link bytes}: what the parties compare before running. */
  readonly hash: Uint8Array;
  /** The field the program computes in. */
  readonly field: FieldName;
  /** The number of parties it is written for. */
  readonly parties: number;
  /** `owners[i]`: the party supplying input value i, or −1 (`CLIENT_OWNER`) for an external client's. */
  readonly owners: readonly number[];
  /** `inputKinds[i]`: what input value i is. */
  readonly inputKinds: readonly InputKind[];
  /** `outputs[i]`: the parties learning output value i. */
  readonly outputs: readonly (readonly number[])[];
  /** `outputKinds[i]`: how output value i is read. */
  readonly outputKinds: readonly OutputKind[];
  /** The number of instructions. */
  readonly instructions: number;

  /** @internal Use {@link ProgramBuilder.build} or {@link programFromBytes}. */
  constructor(token: typeof TOKEN, bytes: Uint8Array, hash: Uint8Array, layout: ProgramLayout) {
    if (token !== TOKEN) throw invalid('programs come from ProgramBuilder.build() or programFromBytes()');
    this.bytes = bytes;
    this.hash = hash;
    this.field = layout.field;
    this.parties = layout.parties;
    this.owners = Object.freeze(layout.inputs.map((i) => i.owner));
    this.inputKinds = Object.freeze(layout.inputs.map((i) => i.kind));
    const all = Object.freeze([...Array(layout.parties).keys()]);
    this.outputs = Object.freeze(layout.outputs.map((o) => (o.to ? Object.freeze([...o.to]) : all)));
    this.outputKinds = Object.freeze(layout.outputs.map((o) => o.kind));
    this.instructions = layout.instructions;
    Object.freeze(this);
    GENUINE.add(this);
  }

  /** The indices of the input values external clients supply (owner −1), in program order. */
  clientInputs(): number[] {
    return this.owners.flatMap((p, i) => (p === -1 ? [i] : []));
  }

  /** The indices of the input values `party` supplies, in program order. */
  inputsOf(party: number): number[] {
    return this.owners.flatMap((p, i) => (p === party ? [i] : []));
  }

  /**
   * Checks `value` (big-endian bytes) for input `index`; returns what is wrong (sizes and
   * ranges, never the value) or `undefined`. `Session.run` calls it for this party's inputs.
   */
  checkInput(index: number, value: Uint8Array): string | undefined {
    const kind = this.inputKinds[index];
    if (!kind) return 'does not exist';
    const want = inputBytes(kind);
    if (value.length !== want) return `is ${describe(kind, this.field)}: it needs ${want} byte${want === 1 ? '' : 's'}, not ${value.length}`;
    const v = readBig(value);
    if (kind.type === 'unsigned' && v >> BigInt(kind.bits) !== 0n) return `has bits set above bit ${kind.bits - 1} (${describe(kind, this.field)})`;
    if (kind.type === 'signed') {
      const s = BigInt.asIntN(8 * want, v);
      const [lo, hi] = rangeOf(kind)!;
      if (s < lo || s > hi) return `is out of range for ${describe(kind, this.field)} (two's complement, sign-extended to ${want} bytes)`;
    }
    if (kind.type === 'field' && this.field === 'prime' && v >= PRIME) return 'is not an element of F_p (it must be below 2^128 − 173)';
    return undefined;
  }

  /**
   * Input `index` as the bytes `Session.run` takes. Integers must lie in their kind's range; a
   * field element is an integer in [0, p) (F_p; a negative one in (−p, 0) is read mod p) or in
   * [0, 2^128) (GF(2^128)). Throws `INVALID_ARGUMENT` (without the value) otherwise.
   */
  encodeInput(index: number, value: bigint | number): Uint8Array {
    const kind = this.inputKinds[index];
    if (!kind) throw invalid(`the program has no input ${index}`);
    return encodeValue(kind, this.field, value, `input ${index}`);
  }

  /**
   * `party`'s input values, in program order, as the `inputs` of `Session.run`. `values` has one
   * entry per input the party owns ({@link inputsOf}).
   */
  encodeInputs(party: number, values: readonly (bigint | number)[]): Uint8Array[] {
    const mine = this.inputsOf(party);
    if (!Array.isArray(values) || values.length !== mine.length) {
      throw invalid(`party ${party} owns ${mine.length} input value${mine.length === 1 ? '' : 's'} of the program; ${Array.isArray(values) ? values.length : 'none'} given`);
    }
    return mine.map((i, k) => this.encodeInput(i, values[k]!));
  }

  /** Output `index` (16 big-endian bytes from `Session.run`) as a bigint, read as its kind says. */
  decodeOutput(index: number, bytes: Uint8Array): bigint {
    const kind = this.outputKinds[index];
    if (!kind) throw invalid(`the program has no output ${index}`);
    if (!(bytes instanceof Uint8Array) || bytes.length !== 16) throw invalid(`output ${index} must be 16 bytes`);
    const v = readBig(bytes);
    return kind === 'signed' ? BigInt.asIntN(128, v) : v;
  }

  /** Every output of a run as a bigint, `undefined` where it is not revealed to this party. */
  decodeOutputs(outputs: Outputs): (bigint | undefined)[] {
    if (!Array.isArray(outputs) || outputs.length !== this.outputKinds.length) {
      throw invalid(`the program has ${this.outputKinds.length} outputs; ${Array.isArray(outputs) ? outputs.length : 'none'} given`);
    }
    return outputs.map((o, i) => (o === undefined ? undefined : this.decodeOutput(i, o)));
  }

  /** The triples, random bits and input masks one run consumes (needs `init()`). */
  requirements(): Requirements {
    const r = callWasm((w) => w.mascotRequirements(this.bytes)) as { triples: number; bits: number; masks: number[] };
    return { triples: r.triples, bits: r.bits, masks: Object.freeze([...r.masks]) };
  }
}

/** @internal A Program from bytes the builder wrote (no Wasm needed). */
export async function programOf(bytes: Uint8Array): Promise<Program> {
  return new Program(TOKEN, bytes, await sha256(bytes), readLayout(bytes));
}

/**
 * A program from its encoding (e.g. a file written from {@link Program.bytes}): validated by the
 * Rust decoder, which refuses anything malformed with `MALFORMED_PROGRAM` (or
 * `PROGRAM_TOO_LARGE`). Needs `init()`.
 */
export async function programFromBytes(bytes: Uint8Array): Promise<Program> {
  if (!(bytes instanceof Uint8Array)) throw invalid('programFromBytes needs a Uint8Array');
  const copy = bytes.slice();
  callWasm((w) => w.mascotRequirements(copy));
  return programOf(copy);
}

/**
 * @internal A value of `kind` as the big-endian bytes sessions take (see
 * {@link Program.encodeInput}); `what` names it in the error, which never carries the value.
 */
export function encodeValue(kind: InputKind, field: FieldName, value: bigint | number, what: string): Uint8Array {
  let v = toBigInt(value, what);
  const range = rangeOf(kind);
  if (range) {
    if (v < range[0] || v > range[1]) throw invalid(`${what} is out of range for ${describe(kind, field)}`);
  } else if (field === 'prime') {
    if (v <= -PRIME || v >= PRIME) throw invalid(`${what} is not an element of F_p (|value| must be below 2^128 − 173)`);
    if (v < 0n) v += PRIME;
  } else if (v < 0n || v >> 128n !== 0n) {
    throw invalid(`${what} is not an element of GF(2^128) (it must be in [0, 2^128))`);
  }
  return writeBig(v, inputBytes(kind));
}

/**
 * @internal A value (big-endian, as {@link encodeValue} makes it) as the Wasm bindings take it:
 * 16 little-endian bytes (integers as is, signed ones in two's complement; field elements
 * canonical), written into `out` at `at`.
 */
export function wireValue(kind: InputKind, bytes: Uint8Array, out: Uint8Array, at: number): void {
  let v = readBig(bytes);
  if (kind.type === 'signed') v = BigInt.asUintN(128, BigInt.asIntN(8 * bytes.length, v));
  for (let i = 0; i < 16; i++) {
    out[at + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/**
 * @internal This party's inputs (big-endian, as checked by {@link Program.checkInput}) as the
 * Wasm binding takes them: 16 little-endian bytes each (integers as is, signed ones in two's
 * complement; field elements canonical).
 */
export function wireInputs(program: Program, party: number, inputs: readonly Uint8Array[]): Uint8Array {
  const mine = program.inputsOf(party);
  const out = new Uint8Array(16 * mine.length);
  mine.forEach((index, k) => wireValue(program.inputKinds[index]!, inputs[k]!, out, 16 * k));
  return out;
}
