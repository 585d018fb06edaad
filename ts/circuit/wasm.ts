/**
 * Circuits through the Rust circuit crate (`wasm/crates/circuit`, compiled to Wasm): parse
 * Bristol Fashion, hold a circuit in webmpc's binary form, inspect it, hash it, and evaluate it
 * in plaintext (the reference every protocol is tested against).
 *
 * ```ts
 * await init();
 * const aes = parseBristol(await readFile('aes_128.txt', 'utf8'));
 * aes.stats.and;                          // 6400
 * const [ct] = evaluate(aes, [key, plaintext]);
 * ```
 *
 * Values are byte strings read as big-endian integers: wire k of a value is bit k of that integer,
 * so wire 0 is the lowest bit of the last byte. A value of `w` bits takes exactly `ceil(w / 8)`
 * bytes, and the unused top bits of its first byte must be zero.
 */
import { callWasm } from '../engine/wasm.js';
import { CircuitError, isCircuitErrorCode } from './errors.js';

export { CircuitError, isCircuitErrorCode };
export type { CircuitErrorCode } from './errors.js';

/** Gate counts and shape of a circuit. */
export interface CircuitStats {
  /** Number of wires. */
  readonly wires: number;
  /** Number of gates of all kinds. */
  readonly gates: number;
  /** AND gates: the gates that cost communication. */
  readonly and: number;
  /** XOR gates (free with free-XOR). */
  readonly xor: number;
  /** INV gates. */
  readonly inv: number;
  /** Constant gates (Bristol `EQ`). */
  readonly constants: number;
  /** Copy gates (Bristol `EQW`). */
  readonly copies: number;
  /** AND depth: the most ANDs on any path; the round count of GMW-style protocols. */
  readonly depth: number;
  /** Total input bits. */
  readonly inputs: number;
  /** Total output bits. */
  readonly outputs: number;
  /** Bits of each input value, in order. */
  readonly inputWidths: readonly number[];
  /** Bits of each output value, in order. */
  readonly outputWidths: readonly number[];
}

/** Anything that can produce webmpc's binary circuit form, such as the builder's `Circuit`. */
export interface HasBinaryForm {
  toBinary(): Uint8Array;
}

const call = callWasm;

function describeType(x: unknown): string {
  if (x === null) return 'null';
  if (typeof x === 'object') return (x as object).constructor?.name ?? 'object';
  return typeof x;
}

function requireBytes(what: string, x: unknown): asserts x is Uint8Array {
  if (!(x instanceof Uint8Array)) throw new TypeError(`${what}: expected a Uint8Array, got ${describeType(x)}`);
}

function freezeStats(raw: unknown): CircuitStats {
  const s = raw as CircuitStats;
  return Object.freeze({
    ...s,
    inputWidths: Object.freeze([...s.inputWidths]),
    outputWidths: Object.freeze([...s.outputWidths]),
  });
}

const CONSTRUCT: unique symbol = Symbol('webmpc.BinaryCircuit');

/**
 * A validated circuit held in webmpc's binary form. Immutable: the bytes are copied in, and every
 * accessor returns a copy, so a circuit's hash always describes the circuit it came with.
 */
export class BinaryCircuit implements HasBinaryForm {
  readonly #binary: Uint8Array;
  readonly #stats: CircuitStats;
  #hash: Uint8Array | undefined;

  /** @internal Use {@link parseBristol} or {@link BinaryCircuit.fromBinary}. */
  constructor(token: typeof CONSTRUCT, binary: Uint8Array, stats: CircuitStats) {
    if (token !== CONSTRUCT) throw new TypeError('BinaryCircuit: use parseBristol() or BinaryCircuit.fromBinary()');
    this.#binary = binary;
    this.#stats = stats;
  }

  /** Checks and adopts (a copy of) a binary circuit, such as the builder's `toBinary()` output. */
  static fromBinary(bytes: Uint8Array): BinaryCircuit {
    requireBytes('bytes', bytes);
    const binary = bytes.slice();
    // circuitStats decodes and validates the whole encoding.
    const stats = freezeStats(call((w) => w.circuitStats(binary)));
    return new BinaryCircuit(CONSTRUCT, binary, stats);
  }

  /** The binary form (a copy). */
  toBinary(): Uint8Array {
    return this.#binary.slice();
  }

  /** The binary form (a copy); the same as {@link BinaryCircuit.toBinary}. */
  get binary(): Uint8Array {
    return this.#binary.slice();
  }

  /** Bristol Fashion text of the circuit (constants as `EQ`, copies as `EQW`). */
  toBristol(): string {
    return call((w) => w.circuitToBristol(this.#binary));
  }

  /** Gate counts and shape. */
  get stats(): CircuitStats {
    return this.#stats;
  }

  /** SHA-256 of the binary form (32 bytes, a copy): equal exactly for equal circuits. */
  get hash(): Uint8Array {
    this.#hash ??= call((w) => w.circuitHash(this.#binary));
    return this.#hash.slice();
  }
}

/** Parses Bristol Fashion text (`XOR`, `AND`, `INV`, `EQ`, `EQW`, `MAND`) into a {@link BinaryCircuit}. */
export function parseBristol(text: string): BinaryCircuit {
  if (typeof text !== 'string') throw new TypeError(`text: expected a string, got ${describeType(text)}`);
  const binary = call((w) => w.circuitFromBristol(text));
  return new BinaryCircuit(CONSTRUCT, binary, freezeStats(call((w) => w.circuitStats(binary))));
}

/**
 * Evaluates a circuit in plaintext. `inputs[i]` is input value i as big-endian bytes
 * (`ceil(width / 8)` of them); returns the output values the same way.
 */
export function evaluate(circuit: BinaryCircuit | HasBinaryForm, inputs: readonly Uint8Array[]): Uint8Array[] {
  const c = circuit instanceof BinaryCircuit ? circuit : BinaryCircuit.fromBinary(toBinaryOf(circuit));
  if (!Array.isArray(inputs)) throw new TypeError(`inputs: expected an array of Uint8Array, got ${describeType(inputs)}`);
  const widths = c.stats.inputWidths;
  if (inputs.length !== widths.length) {
    throw new CircuitError('WRONG_INPUT_SIZE', `expected ${widths.length} input values, got ${inputs.length}`);
  }
  inputs.forEach((value, i) => {
    requireBytes(`inputs[${i}]`, value);
    const want = Math.ceil(widths[i]! / 8);
    if (value.length !== want) {
      throw new CircuitError('WRONG_INPUT_SIZE', `input ${i}: a ${widths[i]}-bit value takes ${want} bytes, got ${value.length}`);
    }
  });
  // `c.binary` is a copy; Wasm copies it in again, which is cheap next to evaluation itself.
  return call((w) => w.circuitEvaluate(c.binary, [...inputs]) as Uint8Array[]);
}

function toBinaryOf(circuit: unknown): Uint8Array {
  if (typeof (circuit as HasBinaryForm | null)?.toBinary !== 'function') {
    throw new TypeError(`circuit: expected a BinaryCircuit or an object with toBinary(), got ${describeType(circuit)}`);
  }
  return (circuit as HasBinaryForm).toBinary();
}
