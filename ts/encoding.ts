/**
 * Input and output values as a session takes and returns them: an unsigned integer of `width`
 * bits is `ceil(width / 8)` bytes, big-endian (the first byte holds the top bits), the
 * convention of Bristol Fashion circuits and of `circuit.CircuitBuilder.input`.
 *
 * ```js
 * const [out] = await s.run(circuit, { inputs: [encodeUint(bid, 32)] });
 * const price = decodeUint(out, 32); // a bigint
 * ```
 *
 * Errors never repeat the value: inputs are secrets, and messages end up in logs.
 */
import { WebmpcError } from './errors.js';

/** The widest value these helpers take, in bits (a 1 MiB value). */
export const MAX_UINT_WIDTH = 8 * 1024 * 1024;

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function checkWidth(width: unknown, fn: string): asserts width is number {
  if (!Number.isInteger(width) || (width as number) < 1 || (width as number) > MAX_UINT_WIDTH) {
    throw invalid(`${fn}: width must be an integer number of bits in [1, ${MAX_UINT_WIDTH}]`);
  }
}

/**
 * The `ceil(width / 8)` big-endian bytes of `value`, an integer in `[0, 2^width)`: a `bigint`, or
 * a `number` that is a safe integer (beyond 2^53 a `number` has already lost bits: pass a bigint).
 * Throws `INVALID_ARGUMENT` for anything else, including a value that does not fit in `width`
 * bits (the message does not repeat the value).
 */
export function encodeUint(value: number | bigint, width: number): Uint8Array {
  checkWidth(width, 'encodeUint');
  let v: bigint;
  if (typeof value === 'bigint') {
    v = value;
  } else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw invalid('encodeUint: a number value must be a safe integer (above 2^53 - 1, pass a bigint)');
    }
    v = BigInt(value);
  } else {
    throw invalid('encodeUint: value must be a number or a bigint');
  }
  if (v < 0n) throw invalid('encodeUint: the value is negative; unsigned values only');
  if (v >> BigInt(width) !== 0n) throw invalid(`encodeUint: the value does not fit in ${width} bits`);
  const out = new Uint8Array(Math.ceil(width / 8));
  for (let i = out.length - 1; i >= 0 && v !== 0n; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/**
 * The unsigned integer held by big-endian `bytes` (an output value of a session), as a bigint.
 * With `width`, checks that `bytes` is the `ceil(width / 8)` bytes of a `width`-bit value (no bit
 * set above it); without, reads any length. `Number(decodeUint(...))` gives a number where it
 * fits. Throws `INVALID_ARGUMENT` for anything else, including `undefined` (an output value not
 * revealed to this party).
 */
export function decodeUint(bytes: Uint8Array | undefined, width?: number): bigint {
  if (!(bytes instanceof Uint8Array)) {
    throw invalid(
      bytes === undefined
        ? 'decodeUint: no value (an output not revealed to this party is undefined)'
        : 'decodeUint: bytes must be a Uint8Array',
    );
  }
  if (width !== undefined) {
    checkWidth(width, 'decodeUint');
    const want = Math.ceil(width / 8);
    if (bytes.length !== want) throw invalid(`decodeUint: a ${width}-bit value is ${want} byte${want === 1 ? '' : 's'}, got ${bytes.length}`);
  }
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  if (width !== undefined && v >> BigInt(width) !== 0n) throw invalid(`decodeUint: the value has bits set above bit ${width - 1}`);
  return v;
}
