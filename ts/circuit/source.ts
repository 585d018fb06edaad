/**
 * What `Session.run` accepts as a circuit, normalised once into a {@link PreparedCircuit}: a
 * built circuit (`{ toBinary() }`, e.g. from `CircuitBuilder`), webmpc binary bytes, or Bristol
 * Fashion text. Decoding, validation and the content hash happen in Rust, once per prepared
 * circuit, so running the same circuit many times pays for them once.
 */
import { callWasm } from '../engine/wasm.js';
import { evaluate, parseBristol } from './wasm.js';

export type CircuitSource = Uint8Array | string | { toBinary(): Uint8Array };

type RawPrepared = import('../wasm-gen/webmpc.js').PreparedCircuit;


/** A validated circuit in binary form, with its shape and content hash. */
export class PreparedCircuit {
  readonly binary: Uint8Array;
  readonly inputWidths: number[];
  readonly outputWidths: number[];
  readonly gates: number;
  /** SHA-256 of the binary form: what two parties compare before running it. */
  readonly hash: Uint8Array;
  // ES-private, so the Wasm handle's generated types stay out of the published declarations.
  readonly #raw: RawPrepared;

  /** Decodes and validates `binary` (prefer {@link prepareCircuit}, which accepts every source). */
  constructor(binary: Uint8Array) {
    this.binary = binary;
    const raw = callWasm((w) => new w.PreparedCircuit(binary));
    this.#raw = raw;
    RAW.set(this, raw);
    this.inputWidths = [...raw.inputWidths];
    this.outputWidths = [...raw.outputWidths];
    this.gates = raw.gates;
    this.hash = raw.hash;
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
    RAW.delete(this);
    this.#raw.free();
  }
}

const RAW = new WeakMap<PreparedCircuit, RawPrepared>();

/**
 * The Wasm handle of a prepared circuit, for the session code (typed `unknown` so that the
 * generated binding types stay out of the published declarations). Not exported by the package.
 * @internal
 */
export function preparedHandle(p: PreparedCircuit): unknown {
  const raw = RAW.get(p);
  if (!raw) throw new TypeError('this PreparedCircuit was freed');
  return raw;
}

/** Decodes and validates `source` (a no-op for an already prepared circuit). */
export function prepareCircuit(source: CircuitSource | PreparedCircuit): PreparedCircuit {
  if (source instanceof PreparedCircuit) return source;
  const binary =
    typeof source === 'string' ? parseBristol(source).binary : source instanceof Uint8Array ? source : source.toBinary();
  return new PreparedCircuit(binary);
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
}

export function isStreamedCircuit(x: unknown): x is StreamedCircuit {
  return typeof x === 'object' && x !== null && 'prefix' in x && 'hash' in x && typeof (x as StreamedCircuit).pieces === 'function';
}

/** The shape of a streamed circuit, read from its header. */
export function streamedShape(c: StreamedCircuit): { inputWidths: number[]; outputWidths: number[]; gates: number } {
  const h = callWasm((w) => w.circuitStreamHeader(c.prefix)) as { inputWidths: number[]; outputWidths: number[]; gates: number };
  return { inputWidths: [...h.inputWidths], outputWidths: [...h.outputWidths], gates: h.gates };
}
