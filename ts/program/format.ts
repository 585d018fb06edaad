/**
 * The arithmetic program format (version 1), as `wasm/crates/spdz/src/program.rs` defines it: the
 * constants, the writer the builder uses, and a reader of metadata for programs loaded from
 * bytes. Validation belongs to Rust (`Program::decode`, reached through `mascotRequirements`);
 * the reader here runs only on bytes Rust has accepted and extracts what the SDK needs (field,
 * parties, input owners and kinds, output kinds and recipients).
 *
 * ```text
 * magic "WMPA" | version 1 | field u8 | parties u16 LE | n_inputs, n_instrs, n_outputs varints
 * inputs  { owner varint (a party, or CLIENT_OWNER_WIRE: a client's), kind u8, bits u8 }
 * instrs  { opcode u8, operand varints, then a 16-byte LE constant or a u8 width }
 * outputs { value varint, kind u8, count varint, count × party varint (0: every party) }
 * ```
 */
import { WebmpcError } from '../errors.js';

/** The magic bytes at the start of every program. */
export const MAGIC = Uint8Array.of(0x57, 0x4d, 0x50, 0x41); // "WMPA"
/** The format version written and read. */
export const VERSION = 1;
/** Most parties a program may name. */
export const MAX_PARTIES = 1024;
/** Most values (inputs + instructions) in a program. */
export const MAX_VALUES = 1 << 22;
/** Most outputs in a program. */
export const MAX_OUTPUTS = 1 << 20;
/**
 * The owner an input has on the wire when an external client supplies it (the largest varint the
 * format allows): the compute parties take it as a masked value through `serve` (`ts/clients.ts`).
 */
export const CLIENT_OWNER_WIRE = 0xffff_ffff;
/** The owner such an input has in {@link Program.owners} and in a session's job: no party. */
export const CLIENT_OWNER = -1;
/** Largest width, in bits, of an integer input or of a comparison's operands. */
export const MAX_INT_BITS = 64;

/** The prime of the prime field: p = 2^128 − 173. */
export const PRIME = (1n << 128n) - 173n;

/** The two fields a program can be over: F_p with p = 2^128 − 173, or GF(2^128). */
export type FieldName = 'prime' | 'binary';

/** The field byte of the header. */
export const FIELD_BYTE: Readonly<Record<FieldName, number>> = { prime: 0, binary: 1 };

/** Opcodes. */
export const OP = {
  ADD: 0x01,
  SUB: 0x02,
  NEG: 0x03,
  MULC: 0x04,
  ADDC: 0x05,
  MUL: 0x06,
  LT: 0x07,
  LE: 0x08,
  EQ: 0x09,
  SELECT: 0x0a,
  CONST: 0x0b,
} as const;

/** What an input value is: a field element, or an unsigned or signed integer of `bits` bits. */
export type InputKind =
  | {
      /** A field element (16 bytes). */
      readonly type: 'field';
    }
  | {
      /** An unsigned integer in [0, 2^bits). */
      readonly type: 'unsigned';
      /** Its width, 1 ..= 64. */
      readonly bits: number;
    }
  | {
      /** A signed integer in [−2^(bits−1), 2^(bits−1)). */
      readonly type: 'signed';
      /** Its width, 1 ..= 64. */
      readonly bits: number;
    };

/** How an output value is read: as a field element, an unsigned or a signed integer. */
export type OutputKind = 'field' | 'unsigned' | 'signed';

/** The kind byte of inputs and outputs. */
export const KIND_BYTE: Readonly<Record<OutputKind, number>> = { field: 0, unsigned: 1, signed: 2 };

/** An append-only byte buffer. */
export class Writer {
  #buf = new Uint8Array(256);
  #len = 0;

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }

  u8(v: number): void {
    this.#room(1);
    this.#buf[this.#len++] = v;
  }

  bytes(b: Uint8Array): void {
    this.#room(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  /** Unsigned LEB128, minimal, for v in [0, 2^32). */
  varint(v: number): void {
    let x = v;
    for (;;) {
      const byte = x & 0x7f;
      x = Math.floor(x / 128);
      if (x === 0) {
        this.u8(byte);
        return;
      }
      this.u8(byte | 0x80);
    }
  }

  /** A field element (or any value below 2^128) as 16 little-endian bytes. */
  constant(v: bigint): void {
    const b = new Uint8Array(16);
    let x = v;
    for (let i = 0; i < 16; i++) {
      b[i] = Number(x & 0xffn);
      x >>= 8n;
    }
    this.bytes(b);
  }

  finish(): Uint8Array {
    return this.#buf.slice(0, this.#len);
  }
}

/** What the SDK reads from a program's bytes. */
export interface ProgramLayout {
  readonly field: FieldName;
  readonly parties: number;
  readonly inputs: readonly { readonly owner: number; readonly kind: InputKind }[];
  readonly instructions: number;
  readonly outputs: readonly { readonly value: number; readonly kind: OutputKind; readonly to: readonly number[] | undefined }[];
}

function malformed(offset: number, what: string): WebmpcError {
  return new WebmpcError('MALFORMED_PROGRAM', `invalid program at byte ${offset}: ${what}`);
}

/** Operands and trailing bytes per opcode: [operand count, trailing bytes]. */
const SHAPE: Readonly<Record<number, readonly [number, number]>> = {
  [OP.ADD]: [2, 0],
  [OP.SUB]: [2, 0],
  [OP.NEG]: [1, 0],
  [OP.MULC]: [1, 16],
  [OP.ADDC]: [1, 16],
  [OP.MUL]: [2, 0],
  [OP.LT]: [2, 1],
  [OP.LE]: [2, 1],
  [OP.EQ]: [2, 1],
  [OP.SELECT]: [3, 0],
  [OP.CONST]: [0, 16],
};

/**
 * Reads the layout of a program Rust has validated. Throws `MALFORMED_PROGRAM` if the bytes do
 * not have the expected shape after all (it never trusts them to be well formed).
 */
export function readLayout(b: Uint8Array): ProgramLayout {
  let at = 0;
  const u8 = (): number => {
    if (at >= b.length) throw malformed(at, 'truncated');
    return b[at++]!;
  };
  const varint = (): number => {
    const start = at;
    let v = 0;
    for (let i = 0; i < 5; i++) {
      const byte = u8();
      v += (byte & 0x7f) * 2 ** (7 * i);
      if ((byte & 0x80) === 0) return v;
    }
    throw malformed(start, 'varint longer than 5 bytes');
  };
  const skip = (n: number): void => {
    if (b.length - at < n) throw malformed(at, 'truncated');
    at += n;
  };
  for (let i = 0; i < 4; i++) if (u8() !== MAGIC[i]) throw malformed(0, 'not a webmpc arithmetic program');
  if (u8() !== VERSION) throw malformed(4, `not a version-${VERSION} program`);
  const fieldByte = u8();
  const field: FieldName | undefined = fieldByte === 0 ? 'prime' : fieldByte === 1 ? 'binary' : undefined;
  if (!field) throw malformed(5, 'unknown field');
  const parties = u8() | (u8() << 8);
  const nIn = varint();
  const nInstr = varint();
  const nOut = varint();
  if (nIn + nInstr > MAX_VALUES || nOut > MAX_OUTPUTS) throw new WebmpcError('PROGRAM_TOO_LARGE', 'program counts exceed the format limits');
  if (nIn * 3 + nInstr * 2 + nOut * 3 > b.length - at) throw malformed(b.length, 'truncated');
  const inputs: { owner: number; kind: InputKind }[] = [];
  for (let i = 0; i < nIn; i++) {
    const owner = varint();
    const k = u8();
    const bits = u8();
    const kind: InputKind | undefined =
      k === 0 ? { type: 'field' } : k === 1 ? { type: 'unsigned', bits } : k === 2 ? { type: 'signed', bits } : undefined;
    if (!kind || (owner >= parties && owner !== CLIENT_OWNER_WIRE)) throw malformed(at, 'bad input');
    inputs.push({ owner: owner === CLIENT_OWNER_WIRE ? CLIENT_OWNER : owner, kind });
  }
  for (let i = 0; i < nInstr; i++) {
    const shape = SHAPE[u8()];
    if (!shape) throw malformed(at - 1, 'unknown opcode');
    for (let o = 0; o < shape[0]; o++) varint();
    skip(shape[1]);
  }
  const outputs: { value: number; kind: OutputKind; to: number[] | undefined }[] = [];
  for (let i = 0; i < nOut; i++) {
    const value = varint();
    const k = u8();
    const kind: OutputKind | undefined = k === 0 ? 'field' : k === 1 ? 'unsigned' : k === 2 ? 'signed' : undefined;
    if (!kind) throw malformed(at - 1, 'unknown output kind');
    const count = varint();
    const to: number[] = [];
    for (let j = 0; j < count; j++) to.push(varint());
    outputs.push({ value, kind, to: count === 0 ? undefined : to });
  }
  if (at !== b.length) throw malformed(at, 'trailing bytes after the last output');
  return { field, parties, inputs, instructions: nInstr, outputs };
}
