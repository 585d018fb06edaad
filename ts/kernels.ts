/**
 * Typed wrappers over the Wasm kernels.
 *
 * Two jobs, and no cryptography:
 * 1. Check every argument before it reaches Wasm, so a bad call is a {@link KernelError} with a
 *    stable code rather than a trap deep inside the module.
 * 2. Split large inputs into chunks, so that Wasm linear memory (which never shrinks) stays
 *    bounded by a few chunks no matter how large the input is, while the result is exactly what
 *    a single call would have produced.
 *
 * Byte conventions (those of the Rust core): a block is 16 bytes; when a block is read as a number
 * it is a little-endian u128.
 */
import { KernelError } from './errors.js';
import { callWasm, type Bindings } from './engine/wasm.js';

export const BLOCK_BYTES = 16;

const DEFAULT_CHUNK_BYTES = 1 << 20;

// Large enough that the per-call cost (copying into Wasm memory, one allocation) is noise, small
// enough that a huge input never grows linear memory by more than a few MiB.
let chunkBytes = DEFAULT_CHUNK_BYTES;

// Per-call ceilings of the bindings (TOO_LARGE above them); the wrappers loop below them.
const RANDOM_BYTES_PER_CALL = 1 << 20;
const PRG_BYTES_PER_CALL = 64 << 20;

/**
 * Sets the chunk size, for tests that want chunk boundaries in small inputs. Not part of the
 * public API: not exported from any of the package's entry points (and not tagged internal,
 * which would strip it from the declarations the tests compile against). `undefined` restores
 * the default.
 */
export function _setChunkBytesForTesting(bytes: number | undefined): void {
  if (bytes === undefined) {
    chunkBytes = DEFAULT_CHUNK_BYTES;
    return;
  }
  // Whole groups of 128 blocks keep every chunk boundary on a boundary of the bitsliced AES
  // (8 blocks) and of the transpose column groups (128 columns = 16 bytes per row).
  if (!Number.isSafeInteger(bytes) || bytes <= 0 || bytes % (128 * BLOCK_BYTES) !== 0) {
    throw new RangeError('chunk size must be a positive multiple of 2048 bytes');
  }
  chunkBytes = bytes;
}

// ---------------------------------------------------------------------------------------------
// Argument checks. Messages carry names and lengths only, never contents.

function requireBytes(what: string, x: unknown): asserts x is Uint8Array {
  if (!(x instanceof Uint8Array)) {
    throw new TypeError(`${what}: expected a Uint8Array, got ${describeType(x)}`);
  }
}

function describeType(x: unknown): string {
  if (x === null) return 'null';
  if (typeof x === 'object') return (x as object).constructor?.name ?? 'object';
  return typeof x;
}

function requireBlocks(what: string, x: unknown): asserts x is Uint8Array {
  requireBytes(what, x);
  if (x.length % BLOCK_BYTES !== 0) {
    throw new KernelError(
      'RAGGED_LENGTH',
      `${what}: length ${x.length} is not a multiple of ${BLOCK_BYTES} bytes`,
    );
  }
}

function requireOneBlock(what: string, x: unknown): asserts x is Uint8Array {
  requireBytes(what, x);
  if (x.length !== BLOCK_BYTES) {
    throw new KernelError('WRONG_SIZE', `${what}: expected ${BLOCK_BYTES} bytes, got ${x.length}`);
  }
}

function requireSameLength(whatA: string, a: Uint8Array, whatB: string, b: Uint8Array): void {
  if (a.length !== b.length) {
    throw new KernelError('LENGTH_MISMATCH', `${whatA}, ${whatB}: lengths differ (${a.length} vs ${b.length})`);
  }
}

function requireCount(what: string, n: unknown): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new KernelError('INVALID_DIMENSION', `${what}: expected a non-negative integer, got ${describeCount(n)}`);
  }
}

function describeCount(n: unknown): string {
  // A count is public, so showing it is fine; anything else is described by type only.
  return typeof n === 'number' ? String(n) : describeType(n);
}

// ---------------------------------------------------------------------------------------------
// Calling into Wasm.

const call = callWasm;

/**
 * Runs `f` the way every kernel call runs, for tests that need a trap to pass through the SDK's
 * call path (the real kernels never trap). Not exported from any of the package's entry points.
 */
export function _callForTesting<T>(f: () => T): T {
  return call(() => f());
}

/**
 * Applies a length-preserving, block-wise kernel chunk by chunk. `f` gets the chunk and the index
 * of its first block in the whole input.
 */
function mapBlockChunks(
  input: Uint8Array,
  f: (w: Bindings, chunk: Uint8Array, firstBlock: number) => Uint8Array,
): Uint8Array {
  if (input.length <= chunkBytes) {
    return call((w) => f(w, input, 0));
  }
  const out = new Uint8Array(input.length);
  for (let off = 0; off < input.length; off += chunkBytes) {
    const end = Math.min(off + chunkBytes, input.length);
    const part = call((w) => f(w, input.subarray(off, end), off / BLOCK_BYTES));
    out.set(part, off);
  }
  return out;
}

/**
 * A block-wise kernel of two equal-length block arrays (`a[j]` with `b[j]`), chunk by chunk.
 */
function mapBlockPairs(
  nameA: string,
  a: Uint8Array,
  nameB: string,
  b: Uint8Array,
  f: (w: Bindings, a: Uint8Array, b: Uint8Array) => Uint8Array,
): Uint8Array {
  requireBlocks(nameA, a);
  requireBlocks(nameB, b);
  requireSameLength(nameA, a, nameB, b);
  return mapBlockChunks(a, (w, c, first) => f(w, c, b.subarray(first * BLOCK_BYTES, first * BLOCK_BYTES + c.length)));
}

// ---------------------------------------------------------------------------------------------
// AES

/** The public fixed key of the fixed-key permutation π used by the hashes (16 bytes). */
export function fixedKey(): Uint8Array {
  return call((w) => w.fixedKey());
}

/** π(x) for every block: AES-128 under {@link fixedKey}, with its key schedule precomputed. */
export function aesFixedKeyEncrypt(blocks: Uint8Array): Uint8Array {
  requireBlocks('blocks', blocks);
  return mapBlockChunks(blocks, (w, c) => w.aesFixedKeyEncrypt(c));
}

/** AES-128 encryption of every block (ECB) under a 16-byte key. */
export function aesEncrypt(key: Uint8Array, blocks: Uint8Array): Uint8Array {
  requireOneBlock('key', key);
  requireBlocks('blocks', blocks);
  return mapBlockChunks(blocks, (w, c) => w.aesEncrypt(key, c));
}

// ---------------------------------------------------------------------------------------------
// Fixed-key hashes (Guo–Katz–Wang–Yu)

/** Correlation-robust hash: π(x) ⊕ x per block. */
export function hashCr(blocks: Uint8Array): Uint8Array {
  requireBlocks('blocks', blocks);
  return mapBlockChunks(blocks, (w, c) => w.hashCr(c));
}

/** Circular-correlation-robust hash: π(σ(x)) ⊕ σ(x) per block. */
export function hashCcr(blocks: Uint8Array): Uint8Array {
  requireBlocks('blocks', blocks);
  return mapBlockChunks(blocks, (w, c) => w.hashCcr(c));
}

/**
 * The linear orthomorphism σ(x_L ‖ x_R) = (x_L ⊕ x_R) ‖ x_L per block, where x_L is the high
 * and x_R the low 64 bits of the little-endian reading.
 */
export function sigma(blocks: Uint8Array): Uint8Array {
  requireBlocks('blocks', blocks);
  return mapBlockChunks(blocks, (w, c) => w.sigma(c));
}

/** Tweakable CCR hash: π(π(x) ⊕ i) ⊕ π(x), with one 16-byte tweak i per block. */
export function hashTccr(blocks: Uint8Array, tweaks: Uint8Array): Uint8Array {
  return mapBlockPairs('blocks', blocks, 'tweaks', tweaks, (w, x, t) => w.hashTccr(x, t));
}

/**
 * {@link hashTccr} with tweak `base + j` (little-endian) for block j: the common case in OT
 * extension, without materialising the tweaks. A range running past 2^128 - 1 is refused
 * (`INVALID_DIMENSION`): wrapping around would reuse tweaks, which TCCR must never do.
 */
export function hashTccrCounter(blocks: Uint8Array, tweakBase: Uint8Array): Uint8Array {
  requireBlocks('blocks', blocks);
  requireOneBlock('tweakBase', tweakBase);
  const count = blocks.length / BLOCK_BYTES;
  // Checked here as well as in Rust: once split into chunks, no single call sees the whole range.
  if (count > 0 && readLe128(tweakBase) + BigInt(count - 1) > U128_MAX) {
    throw new KernelError('INVALID_DIMENSION', 'tweakBase: base + block count exceeds 2^128 (tweaks would repeat)');
  }
  return mapBlockChunks(blocks, (w, c, first) =>
    w.hashTccrCounter(c, first === 0 ? tweakBase : writeLe128(readLe128(tweakBase) + BigInt(first))),
  );
}

const U128_MAX = (1n << 128n) - 1n;

function readLe128(bytes: Uint8Array): bigint {
  let x = 0n;
  for (let i = BLOCK_BYTES - 1; i >= 0; i--) x = (x << 8n) | BigInt(bytes[i]!);
  return x;
}

function writeLe128(x: bigint): Uint8Array {
  const out = new Uint8Array(BLOCK_BYTES);
  for (let i = 0; i < BLOCK_BYTES; i++) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Randomness

const FROM_ENTROPY: unique symbol = Symbol('webmpc.Prg.fromEntropy');

/**
 * A deterministic AES-CTR pseudorandom generator. The same seed always yields the same byte
 * stream, however the reads are split. Call {@link Prg.free} when done to release its Wasm memory
 * at once (it is otherwise released when garbage-collected).
 */
export class Prg {
  #inner: InstanceType<Bindings['Prg']> | undefined;

  /** A generator expanding a 16-byte seed. Keep the seed secret if the output must be. */
  constructor(seed: Uint8Array) {
    // Private fields exist only on objects built by the constructor, so fromEntropy() comes
    // through here too, recognised by a sentinel no caller can hold.
    if ((seed as unknown) === FROM_ENTROPY) {
      this.#inner = call((w) => w.Prg.fromEntropy());
      return;
    }
    requireOneBlock('seed', seed);
    this.#inner = call((w) => new w.Prg(seed));
  }

  /** A generator seeded from the platform CSPRNG (`crypto.getRandomValues`). */
  static fromEntropy(): Prg {
    return new Prg(FROM_ENTROPY as unknown as Uint8Array);
  }

  /** The next `n` bytes of the stream. */
  fillBytes(n: number): Uint8Array {
    requireCount('n', n);
    const inner = this.#inner;
    if (!inner) throw new TypeError('Prg: used after free()');
    const step = Math.min(chunkBytes, PRG_BYTES_PER_CALL);
    if (n <= step) return call(() => inner.fillBytes(n));
    const out = new Uint8Array(n);
    for (let off = 0; off < n; off += step) {
      const len = Math.min(step, n - off);
      out.set(call(() => inner.fillBytes(len)), off);
    }
    return out;
  }

  /** Releases the generator's Wasm memory. Further use throws. */
  free(): void {
    const inner = this.#inner;
    this.#inner = undefined;
    inner?.free();
  }
}

/** `n` bytes from the platform CSPRNG. */
export function randomBytes(n: number): Uint8Array {
  requireCount('n', n);
  const step = Math.min(chunkBytes, RANDOM_BYTES_PER_CALL);
  if (n <= step) return call((w) => w.randomBytes(n));
  const out = new Uint8Array(n);
  for (let off = 0; off < n; off += step) {
    const len = Math.min(step, n - off);
    out.set(call((w) => w.randomBytes(len)), off);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Bit-matrix transpose (OT extension)

function requireColumns(n: unknown): asserts n is number {
  requireCount('n', n);
  if (n % 8 !== 0) {
    throw new KernelError('INVALID_DIMENSION', `n: ${n} is not a multiple of 8`);
  }
}

/** Columns per chunk: a multiple of 128 so every chunk is whole 16-byte row slices. */
function transposeChunkColumns(): number {
  return Math.max(128, Math.floor(chunkBytes / BLOCK_BYTES / 128) * 128);
}

/**
 * Transposes a 128 × n bit matrix given as 128 rows of n/8 bytes each (16·n bytes in all) into n
 * blocks: bit i of block j is bit j of row i. n must be a multiple of 8.
 */
export function transpose128xN(rows: Uint8Array, n: number): Uint8Array {
  requireBytes('rows', rows);
  requireColumns(n);
  if (rows.length !== 16 * n) {
    throw new KernelError('WRONG_SIZE', `rows: expected ${16 * n} bytes (128 rows of ${n} bits), got ${rows.length}`);
  }
  const step = transposeChunkColumns();
  if (n <= step) return call((w) => w.transpose128xN(rows, n));

  const rowBytes = n / 8;
  const out = new Uint8Array(16 * n);
  const slab = new Uint8Array(16 * step);
  for (let col = 0; col < n; col += step) {
    const cols = Math.min(step, n - col);
    const sliceBytes = cols / 8;
    const sub = cols === step ? slab : slab.subarray(0, 16 * cols);
    for (let r = 0; r < 128; r++) {
      const from = r * rowBytes + col / 8;
      sub.set(rows.subarray(from, from + sliceBytes), r * sliceBytes);
    }
    out.set(call((w) => w.transpose128xN(sub, cols)), col * BLOCK_BYTES);
  }
  return out;
}

/** The inverse of {@link transpose128xN}: n blocks to 128 rows of n bits. n must be a multiple of 8. */
export function transposeNx128(blocks: Uint8Array, n: number): Uint8Array {
  requireBytes('blocks', blocks);
  requireColumns(n);
  if (blocks.length !== 16 * n) {
    throw new KernelError('WRONG_SIZE', `blocks: expected ${16 * n} bytes (${n} blocks), got ${blocks.length}`);
  }
  const step = transposeChunkColumns();
  if (n <= step) return call((w) => w.transposeNx128(blocks, n));

  const rowBytes = n / 8;
  const out = new Uint8Array(16 * n);
  for (let col = 0; col < n; col += step) {
    const cols = Math.min(step, n - col);
    const sliceBytes = cols / 8;
    const part = call((w) => w.transposeNx128(blocks.subarray(col * BLOCK_BYTES, (col + cols) * BLOCK_BYTES), cols));
    for (let r = 0; r < 128; r++) {
      out.set(part.subarray(r * sliceBytes, (r + 1) * sliceBytes), r * rowBytes + col / 8);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// GF(2^128), modulus x^128 + x^7 + x^2 + x + 1; bit i of the little-endian u128 is the
// coefficient of x^i.

/** Elementwise product a[j] · b[j]. */
export function gf128Mul(a: Uint8Array, b: Uint8Array): Uint8Array {
  return mapBlockPairs('a', a, 'b', b, (w, x, y) => w.gf128Mul(x, y));
}

/** Σ a[j] · b[j] (one block). Zero for empty inputs. */
export function gf128InnerProduct(a: Uint8Array, b: Uint8Array): Uint8Array {
  requireBlocks('a', a);
  requireBlocks('b', b);
  requireSameLength('a', a, 'b', b);
  if (a.length <= chunkBytes) return call((w) => w.gf128InnerProduct(a, b));
  // Addition in GF(2^128) is XOR, so partial sums of chunks combine by XOR.
  const acc = new Uint8Array(BLOCK_BYTES);
  for (let off = 0; off < a.length; off += chunkBytes) {
    const end = Math.min(off + chunkBytes, a.length);
    const part = call((w) => w.gf128InnerProduct(a.subarray(off, end), b.subarray(off, end)));
    for (let i = 0; i < BLOCK_BYTES; i++) acc[i] = acc[i]! ^ part[i]!;
  }
  return acc;
}

// ---------------------------------------------------------------------------------------------

/** Which AES implementation the loaded module uses (e.g. a SIMD128 bitsliced backend). */
export function backendName(): string {
  return call((w) => w.backendName());
}
