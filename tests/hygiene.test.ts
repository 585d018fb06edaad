// Secrets must not outlive the call that used them in Wasm linear memory, which lives as long as
// the instance and never shrinks. After each call these tests scan the whole memory for the key,
// seed, plaintext and outputs: the zero-on-free allocator, the boxed key schedules and the
// post-call stack scrub in the bindings are what make them pass.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIST, hex, nodeAes, rand } from './helpers.js';

// A private instance of the raw bindings, so the scan sees exactly this module's memory.
type Raw = typeof import('../dist/wasm-gen/webmpc.js');
let raw: Raw;
let memory: WebAssembly.Memory;

beforeAll(async () => {
  const gen = join(DIST, 'wasm-gen');
  raw = (await import(join(gen, 'webmpc.js'))) as Raw;
  const exports = await raw.default({ module_or_path: await readFile(join(gen, 'webmpc_bg.wasm')) });
  memory = exports.memory;
});

/** Every offset at which `needle` (at least 16 bytes, so chance matches are impossible) occurs. */
function findInMemory(needle: Uint8Array): number[] {
  const hay = Buffer.from(memory.buffer);
  const hits: number[] = [];
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) hits.push(at);
  return hits;
}

describe('no secret is left in Wasm linear memory after a call', () => {
  it('AES: key, plaintext and ciphertext', () => {
    const key = rand(16);
    const pt = rand(16 * 37);
    const ct = raw.aesEncrypt(key, pt);
    expect(hex(ct)).toBe(hex(nodeAes(key, pt)));
    expect(findInMemory(key)).toEqual([]);
    expect(findInMemory(pt.subarray(0, 16))).toEqual([]);
    expect(findInMemory(pt.subarray(16 * 36))).toEqual([]);
    expect(findInMemory(ct.subarray(0, 16))).toEqual([]);
    expect(findInMemory(ct.subarray(16 * 36))).toEqual([]);
  });

  it('PRG: seed and keystream, once the generator is freed', () => {
    const seed = rand(16);
    const prg = new raw.Prg(seed);
    const first = prg.fillBytes(1000);
    const more = prg.fillBytes(24);
    prg.free();
    expect(findInMemory(seed)).toEqual([]);
    expect(findInMemory(first.subarray(0, 16))).toEqual([]);
    expect(findInMemory(first.subarray(992, 1000))).toEqual([]);
    // The unread rest of the buffered keystream block is gone too: regenerate it to look for it.
    const again = new raw.Prg(seed);
    const stream = again.fillBytes(1024 + 64 * 16);
    again.free();
    expect(hex(stream.subarray(1000, 1024))).toBe(hex(more));
    expect(findInMemory(stream.subarray(1024, 1040))).toEqual([]);
  });

  it('hashes and GF(2^128): inputs and outputs', () => {
    const x = rand(16 * 100);
    const t = rand(16 * 100);
    for (const out of [raw.hashCr(x), raw.hashCcr(x), raw.hashTccr(x, t), raw.gf128Mul(x, t)]) {
      expect(findInMemory(out.subarray(0, 16))).toEqual([]);
    }
    expect(findInMemory(x.subarray(0, 16))).toEqual([]);
    expect(findInMemory(t.subarray(16 * 99))).toEqual([]);
  });

  it('transpose: the stack tiles of a ragged-width matrix (the post-call stack scrub)', () => {
    // 136 columns: one full 128-column tile and a tail tile padded on the stack.
    const n = 136;
    const rows = rand(16 * n);
    const cols = raw.transpose128xN(rows, n);
    for (let j = 128; j < n; j++) expect(findInMemory(cols.subarray(16 * j, 16 * j + 16))).toEqual([]);
  });

  it('platform randomness handed out', () => {
    const r = raw.randomBytes(64);
    expect(findInMemory(r.subarray(0, 16))).toEqual([]);
  });
});
