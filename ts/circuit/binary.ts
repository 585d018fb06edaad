/**
 * webmpc's binary circuit format, written from a built circuit's gate arrays. Its own module so
 * the engine worker can encode a builder circuit without the builder: the caller's thread hands
 * the worker the gate arrays (a plain copy) and the worker writes the bytes, so a large circuit's
 * encoding never runs on a page's main thread.
 *
 * Layout, little-endian: `"WMPC"`, u8 version 1, three zero bytes, u32 wires, u64 gates, u32
 * input count and a u32 width per input, u32 output count and a u32 width per output, then the
 * gates: u8 opcode and u32 wires — `0 XOR a b out`, `1 AND a b out`, `2 INV a out`,
 * `3 CONST value(u8) out`, `4 COPY a out`.
 */

/** Binary format opcodes. */
export const OP_XOR = 0;
export const OP_AND = 1;
export const OP_INV = 2;
export const OP_CONST = 3;
export const OP_COPY = 4;

const MAGIC = [0x57, 0x4d, 0x50, 0x43]; // "WMPC"
const FORMAT_VERSION = 1;

/**
 * A built circuit's gates as the builder keeps them: gate `i` is `ops[i]` with operands
 * `args[3i]`, `args[3i + 1]` (unused by one-operand gates) and output `args[3i + 2]`; for CONST
 * the first operand is the value. Only the first `length` gates count.
 * @internal
 */
export interface GateArrays {
  readonly wires: number;
  readonly inputWidths: readonly number[];
  readonly outputWidths: readonly number[];
  readonly length: number;
  readonly ops: Uint8Array;
  readonly args: Uint32Array;
}

/**
 * The binary form of `g`. Bytes are written one by one with shifts rather than through a
 * DataView and a helper per field: this runs once per session on a cold (not yet optimised)
 * path, where every call and bounds-checked view access costs.
 * @internal
 */
export function encodeBinary(g: GateArrays): Uint8Array {
  const { ops, args, length } = g;
  let size = 8 + 4 + 8 + 4 + 4 * g.inputWidths.length + 4 + 4 * g.outputWidths.length;
  for (let i = 0; i < length; i++) {
    const o = ops[i]!;
    size += o === OP_XOR || o === OP_AND ? 13 : o === OP_CONST ? 6 : 9;
  }
  const bytes = new Uint8Array(size);
  bytes.set(MAGIC, 0);
  bytes[4] = FORMAT_VERSION;
  const view = new DataView(bytes.buffer);
  let at = 8;
  view.setUint32(at, g.wires, true);
  view.setBigUint64(at + 4, BigInt(length), true);
  at += 12;
  for (const list of [g.inputWidths, g.outputWidths]) {
    view.setUint32(at, list.length, true);
    at += 4;
    for (const w of list) {
      view.setUint32(at, w, true);
      at += 4;
    }
  }
  for (let i = 0; i < length; i++) {
    const o = ops[i]!;
    const j = 3 * i;
    bytes[at++] = o;
    if (o === OP_CONST) {
      bytes[at++] = args[j]!;
    } else {
      let v = args[j]!;
      bytes[at] = v;
      bytes[at + 1] = v >>> 8;
      bytes[at + 2] = v >>> 16;
      bytes[at + 3] = v >>> 24;
      at += 4;
      if (o === OP_XOR || o === OP_AND) {
        v = args[j + 1]!;
        bytes[at] = v;
        bytes[at + 1] = v >>> 8;
        bytes[at + 2] = v >>> 16;
        bytes[at + 3] = v >>> 24;
        at += 4;
      }
    }
    const out = args[j + 2]!;
    bytes[at] = out;
    bytes[at + 1] = out >>> 8;
    bytes[at + 2] = out >>> 16;
    bytes[at + 3] = out >>> 24;
    at += 4;
  }
  return bytes;
}
