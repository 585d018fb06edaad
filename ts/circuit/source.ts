/**
 * What `Session.run` accepts as a circuit, normalised once into a {@link PreparedCircuit}: a
 * built circuit (`{ toBinary() }`, e.g. from `CircuitBuilder`), webmpc binary bytes, or Bristol
 * Fashion text. Decoding, validation and the content hash happen in Rust, once per prepared
 * circuit, so running the same circuit many times pays for them once.
 */
import { callWasm } from '../engine/wasm.js';
import { WebmpcError } from '../errors.js';
import type { GateArrays } from './binary.js';
import { evaluate, parseBristol } from './wasm.js';

export type CircuitSource = Uint8Array | string | BuiltCircuit;

/**
 * A circuit object that can serialise itself, like the builder's `Circuit`. When it also lists
 * its `inputs` with the party supplying each (as the builder records them), those owners travel
 * with the circuit: the binary form has no place for them, so {@link prepareCircuit} keeps them
 * in {@link PreparedCircuit.owners}, and `Session.run` uses them.
 */
export interface BuiltCircuit {
  toBinary(): Uint8Array;
  /** The input values in circuit order, with the party supplying each. */
  readonly inputs?: readonly { readonly party: number }[];
}

type RawPrepared = import('../wasm-gen/webmpc.js').PreparedCircuit;


/** A validated circuit in binary form, with its shape and content hash. */
export class PreparedCircuit {
  readonly binary: Uint8Array;
  readonly inputWidths: number[];
  readonly outputWidths: number[];
  readonly gates: number;
  /** SHA-256 of the binary form: what two parties compare before running it. */
  readonly hash: Uint8Array;
  /**
   * The party supplying each input value, when the source declared them (a builder circuit
   * does; Bristol text and binary bytes do not). Not part of the binary form or its hash.
   */
  readonly owners: readonly number[] | undefined;
  /** Set by {@link free}: the handle must not be made again. */
  #freed = false;

  /**
   * Decodes and validates `binary` (prefer {@link prepareCircuit}, which accepts every source).
   * `owners`, if given, must name a party (a non-negative integer) or −1 (a client) for each
   * input value.
   * @param validated Internal: the shape and hash an engine worker found when it decoded and
   *   validated `binary` there; then nothing is decoded on this thread until a Wasm handle is
   *   needed here (plaintext evaluation, sizes).
   */
  constructor(binary: Uint8Array, owners?: readonly number[], validated?: ValidatedShape) {
    this.binary = binary;
    let raw: RawPrepared | undefined;
    let shape: ValidatedShape;
    if (validated) {
      shape = validated;
    } else {
      raw = callWasm((w) => new w.PreparedCircuit(binary));
      RAW.set(this, raw);
      shape = { inputWidths: [...raw.inputWidths], outputWidths: [...raw.outputWidths], gates: raw.gates, hash: raw.hash };
    }
    this.inputWidths = [...shape.inputWidths];
    this.outputWidths = [...shape.outputWidths];
    this.gates = shape.gates;
    this.hash = shape.hash;
    if (owners !== undefined) {
      if (owners.length !== this.inputWidths.length || !owners.every((p) => Number.isSafeInteger(p) && p >= -1)) {
        raw?.free();
        RAW.delete(this);
        throw new WebmpcError(
          'INVALID_ARGUMENT',
          `the circuit declares owners for ${owners.length} input values but has ${this.inputWidths.length}, or an owner is not a party index`,
        );
      }
      this.owners = Object.freeze([...owners]);
    } else {
      this.owners = undefined;
    }
  }

  /** Plaintext evaluation: big-endian byte values in, out (no privacy; a reference). */
  evaluate(inputs: readonly Uint8Array[]): Uint8Array[] {
    return evaluate(this, inputs);
  }

  toBinary(): Uint8Array {
    return this.binary;
  }

  /** Releases the Wasm-side copy. */
  free(): void {
    this.#freed = true;
    RAW.get(this)?.free();
    RAW.delete(this);
  }

  /** @internal Whether {@link free} was called. */
  get isFreed(): boolean {
    return this.#freed;
  }
}

/**
 * What validation found: the shape and the content hash (what an engine worker hands back with a
 * circuit it decoded; not for apps, but in the declarations because the constructor names it).
 */
export interface ValidatedShape {
  readonly inputWidths: readonly number[];
  readonly outputWidths: readonly number[];
  readonly gates: number;
  readonly hash: Uint8Array;
}

const RAW = new WeakMap<PreparedCircuit, RawPrepared>();

/**
 * The Wasm handle of a prepared circuit, for the session code (typed `unknown` so that the
 * generated binding types stay out of the published declarations), made on first use for a
 * circuit an engine worker validated. Not exported by the package.
 * @internal
 */
export function preparedHandle(p: PreparedCircuit): unknown {
  if (p.isFreed) throw new TypeError('this PreparedCircuit was freed');
  let raw = RAW.get(p);
  if (!raw) {
    const binary = p.binary;
    raw = callWasm((w) => new w.PreparedCircuit(binary));
    RAW.set(p, raw);
  }
  return raw;
}

/**
 * The bytes to validate for `source` without validating them here: a binary form (from bytes or
 * a builder circuit) or Bristol text, with the owners a builder circuit declares.
 * @internal
 */
export function unpreparedForm(source: CircuitSource): UnpreparedForm {
  if (typeof source === 'string') return { bristol: source };
  if (source instanceof Uint8Array) return { binary: source, owners: undefined };
  // A builder circuit hands over its gate arrays, not its binary form: the encoding is the
  // receiver's work (for a large circuit, tens of milliseconds on a cold page).
  const arrays = (source as { gateArrays?: () => GateArrays }).gateArrays;
  if (typeof arrays === 'function') return { gates: arrays.call(source), owners: declaredOwners(source) };
  return { binary: source.toBinary(), owners: declaredOwners(source) };
}

/**
 * A circuit source in a form the engine worker can validate: binary bytes, Bristol text, or a
 * builder circuit's gate arrays, with the owners the source declares.
 * @internal
 */
export type UnpreparedForm =
  | { readonly binary: Uint8Array; readonly owners: readonly number[] | undefined }
  | { readonly gates: GateArrays; readonly owners: readonly number[] | undefined }
  | { readonly bristol: string };

/** Decodes and validates `source` (a no-op for an already prepared circuit). */
export function prepareCircuit(source: CircuitSource | PreparedCircuit): PreparedCircuit {
  if (source instanceof PreparedCircuit) return source;
  if (typeof source === 'string') return new PreparedCircuit(parseBristol(source).binary);
  if (source instanceof Uint8Array) return new PreparedCircuit(source);
  return new PreparedCircuit(source.toBinary(), declaredOwners(source));
}

/** The owners a built circuit declares, if it declares any. */
function declaredOwners(source: BuiltCircuit): number[] | undefined {
  const inputs = source.inputs;
  if (!Array.isArray(inputs)) return undefined;
  return inputs.map((i: { party?: unknown } | undefined) => (typeof i?.party === 'number' ? i.party : NaN));
}

/**
 * A circuit too large to hold in memory, streamed in its binary form. Both parties must agree on
 * `hash` (e.g. published with the circuit file); each party checks the bytes it streams against
 * it before any output is revealed, and a mismatch aborts the run with `PARAMETER_MISMATCH`.
 */
export interface StreamedCircuit {
  /** The start of the binary encoding: at least the whole header. */
  prefix: Uint8Array;
  /** SHA-256 of the whole encoding (32 bytes). */
  hash: Uint8Array;
  /** The rest of the encoding, in pieces of any size (at most 64 MiB each); called once per run. */
  pieces(): AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  /** The party supplying each input value, if the circuit's publisher declares them. */
  owners?: readonly number[];
}

export function isStreamedCircuit(x: unknown): x is StreamedCircuit {
  return typeof x === 'object' && x !== null && 'prefix' in x && 'hash' in x && typeof (x as StreamedCircuit).pieces === 'function';
}

/** The shape of a streamed circuit, read from its header. */
export function streamedShape(c: StreamedCircuit): { inputWidths: number[]; outputWidths: number[]; gates: number } {
  const h = callWasm((w) => w.circuitStreamHeader(c.prefix)) as { inputWidths: number[]; outputWidths: number[]; gates: number };
  return { inputWidths: [...h.inputWidths], outputWidths: [...h.outputWidths], gates: h.gates };
}
