// Independent references the Wasm kernels are checked against: OpenSSL's AES through node:crypto,
// BigInt arithmetic for GF(2^128), bit-by-bit loops for the transpose, and the native Rust build
// through the kernel-oracle binary. None of them share code with the kernels under test.
import { createCipheriv, randomBytes as nodeRandomBytes } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
export const ORACLE = fileURLToPath(new URL('../wasm/target/release/kernel-oracle', import.meta.url));

export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

export function unhex(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
}

export function rand(n: number): Uint8Array {
  return new Uint8Array(nodeRandomBytes(n));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length !== b.length) throw new Error('xor: lengths differ');
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** AES-128-ECB without padding, by OpenSSL. */
export function nodeAes(key: Uint8Array, blocks: Uint8Array): Uint8Array {
  const c = createCipheriv('aes-128-ecb', key, null);
  c.setAutoPadding(false);
  return new Uint8Array(Buffer.concat([c.update(blocks), c.final()]));
}

// --- blocks as little-endian u128 -----------------------------------------------------------

export function toBig(block: Uint8Array, offset = 0): bigint {
  let x = 0n;
  for (let i = 15; i >= 0; i--) x = (x << 8n) | BigInt(block[offset + i]!);
  return x;
}

export function fromBig(x: bigint): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

export function blockAt(bytes: Uint8Array, j: number): Uint8Array {
  return bytes.subarray(16 * j, 16 * j + 16);
}

// --- references for the hashes ---------------------------------------------------------------

const MASK64 = (1n << 64n) - 1n;

/** σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL, xL the high 64 bits of the little-endian reading. */
export function refSigma(blocks: Uint8Array): Uint8Array {
  const out = new Uint8Array(blocks.length);
  for (let j = 0; j < blocks.length / 16; j++) {
    const x = toBig(blocks, 16 * j);
    const lo = x & MASK64;
    const hi = x >> 64n;
    out.set(fromBig(((hi ^ lo) << 64n) | hi), 16 * j);
  }
  return out;
}

// --- GF(2^128) -------------------------------------------------------------------------------

const GF_MOD = (1n << 128n) | 0x87n; // x^128 + x^7 + x^2 + x + 1

/** Schoolbook carry-less multiply then long division by the modulus: slow and obviously right. */
export function refGfMul(a: bigint, b: bigint): bigint {
  let prod = 0n;
  for (let i = 0n; i < 128n; i++) if ((b >> i) & 1n) prod ^= a << i;
  for (let i = 254n; i >= 128n; i--) if ((prod >> i) & 1n) prod ^= GF_MOD << (i - 128n);
  return prod;
}

// --- transpose -------------------------------------------------------------------------------

function getBit(bytes: Uint8Array, bit: number): number {
  return (bytes[bit >> 3]! >> (bit & 7)) & 1;
}

function setBit(bytes: Uint8Array, bit: number): void {
  bytes[bit >> 3] = bytes[bit >> 3]! | (1 << (bit & 7));
}

/** 128 rows of n bits (row-major, LSB-first) -> n blocks; bit i of block j = bit j of row i. */
export function refTranspose128xN(rows: Uint8Array, n: number): Uint8Array {
  const out = new Uint8Array(16 * n);
  for (let i = 0; i < 128; i++) {
    for (let j = 0; j < n; j++) {
      if (getBit(rows, i * n + j)) setBit(out, j * 128 + i);
    }
  }
  return out;
}

// --- native oracle -----------------------------------------------------------------------------

export type Backend = 'portable' | 'auto';

/** Runs the native Rust build of a kernel: raw bytes in on stdin, raw bytes out on stdout. */
export function oracle(backend: Backend, op: string, args: string[], input: Uint8Array): Uint8Array {
  if (!existsSync(ORACLE)) {
    throw new Error(`${ORACLE} is missing: run \`npm run build\` (it builds webmpc-tools)`);
  }
  const r = spawnSync(ORACLE, ['--backend', backend, op, ...args], {
    input,
    maxBuffer: 1 << 30,
  });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new Error(`kernel-oracle ${backend} ${op} exited with ${r.status}: ${r.stderr.toString().trim()}`);
  }
  return new Uint8Array(r.stdout);
}

/**
 * The baseline module (test/bench only, not in the package): RustCrypto AES compiled to Wasm, and
 * the Rust MASCOT example programs in the program encoding.
 */
export async function loadBaseline(): Promise<{
  rustcryptoAesEncrypt(key: Uint8Array, blocks: Uint8Array): Uint8Array;
  mascotVickreyProgram(parties: number, bids: number, bits: number): Uint8Array;
  mascotProductsProgram(field: string, parties: number, m: number): Uint8Array;
}> {
  const jsUrl = new URL('../dist/wasm-gen/baseline.js', import.meta.url);
  const mod = await import(/* @vite-ignore */ jsUrl.href);
  await mod.default({ module_or_path: readFileSync(new URL('../dist/wasm-gen/baseline_bg.wasm', import.meta.url)) });
  return mod;
}

/**
 * `npm pack`s the repo and unpacks the tarball as `<dir>/app/node_modules/webmpc`, the way an app
 * depending on the published package would have it. Returns the packed file list.
 */
export function packInto(dir: string): { app: string; files: string[] } {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const info = JSON.parse(out)[0] as { filename: string; files: { path: string }[] };
  const app = join(dir, 'app');
  const modules = join(app, 'node_modules');
  mkdirSync(modules, { recursive: true });
  execFileSync('tar', ['xzf', join(dir, info.filename), '-C', modules]);
  renameSync(join(modules, 'package'), join(modules, 'webmpc'));
  return { app, files: info.files.map((f) => f.path) };
}

/**
 * The shared reference circuits (`../shared/circuits/bristol_fashion/`): `$WEBMPC_CIRCUITS_DIR` if
 * set, else the `shared` folder beside this checkout, else `/work/shared`, where it lives on this
 * machine kind (a clean clone elsewhere still finds it). Throws, never skips, when none exists.
 */
export function circuitsDir(): string {
  const candidates = [
    process.env.WEBMPC_CIRCUITS_DIR,
    join(ROOT, '..', 'shared', 'circuits', 'bristol_fashion'),
    '/work/shared/circuits/bristol_fashion',
  ].filter((d): d is string => typeof d === 'string' && d.length > 0);
  const found = candidates.find((d) => existsSync(join(d, 'aes_128.txt')));
  if (!found) throw new Error(`reference circuits not found (tried ${candidates.join(', ')}); set WEBMPC_CIRCUITS_DIR`);
  return found;
}

/** The text of reference circuit `name`, e.g. `aes_128.txt`. */
export function referenceCircuit(name: string): string {
  return readFileSync(join(circuitsDir(), name), 'utf8');
}
