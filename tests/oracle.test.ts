// Wasm against native: the same Rust kernels built for x86-64 (kernel-oracle), once forced onto
// the portable backend and once on the best one the CPU allows (AES-NI here). Agreement means the
// SIMD128 code paths compute exactly what the native ones do, byte for byte.
import { beforeAll, describe, expect, it } from 'vitest';
import * as webmpc from '../dist/index.js';
import { type Backend, concat, hex, oracle, rand } from './helpers.js';

beforeAll(async () => {
  await webmpc.init();
});

const BACKENDS: Backend[] = ['portable', 'auto'];
// Odd sizes so tails shorter than the bitsliced batch (8 blocks) are covered.
const SIZES = [0, 1, 7, 9, 1000, 4099];

describe.each(BACKENDS)('kernel-oracle --backend %s', (backend) => {
  it('aes-fixed', () => {
    for (const n of SIZES) {
      const x = rand(16 * n);
      expect(hex(webmpc.aesFixedKeyEncrypt(x))).toBe(hex(oracle(backend, 'aes-fixed', [], x)));
    }
  });

  it('aes <key>', () => {
    for (const n of SIZES) {
      const key = rand(16);
      const x = rand(16 * n);
      expect(hex(webmpc.aesEncrypt(key, x))).toBe(hex(oracle(backend, 'aes', [hex(key)], x)));
    }
  });

  it.each(['cr', 'ccr', 'sigma'] as const)('%s', (op) => {
    const f = { cr: webmpc.hashCr, ccr: webmpc.hashCcr, sigma: webmpc.sigma }[op];
    for (const n of SIZES) {
      const x = rand(16 * n);
      expect(hex(f(x))).toBe(hex(oracle(backend, op, [], x)));
    }
  });

  it('tccr-counter <base>', () => {
    for (const n of SIZES) {
      const base = rand(16);
      const x = rand(16 * n);
      expect(hex(webmpc.hashTccrCounter(x, base))).toBe(hex(oracle(backend, 'tccr-counter', [hex(base)], x)));
    }
    // A base whose counter carries from the low into the high 64 bits within the batch.
    const x = rand(16 * 20);
    const base = new Uint8Array(16);
    base.fill(0xff, 1, 8);
    base[0] = 0xf0;
    expect(hex(webmpc.hashTccrCounter(x, base))).toBe(hex(oracle(backend, 'tccr-counter', [hex(base)], x)));
  });

  it('gf128-mul and gf128-inner', () => {
    for (const n of SIZES) {
      const a = rand(16 * n);
      const b = rand(16 * n);
      expect(hex(webmpc.gf128Mul(a, b))).toBe(hex(oracle(backend, 'gf128-mul', [], concat(a, b))));
      expect(hex(webmpc.gf128InnerProduct(a, b))).toBe(hex(oracle(backend, 'gf128-inner', [], concat(a, b))));
    }
  });

  it('transpose-128xn and transpose-nx128', () => {
    for (const n of [0, 8, 128, 136, 1024, 4104]) {
      const rows = rand(16 * n);
      expect(hex(webmpc.transpose128xN(rows, n))).toBe(hex(oracle(backend, 'transpose-128xn', [String(n)], rows)));
      expect(hex(webmpc.transposeNx128(rows, n))).toBe(hex(oracle(backend, 'transpose-nx128', [String(n)], rows)));
    }
  });

  it('prg <seed> <n>', () => {
    for (const n of [0, 1, 16, 17, 100_003]) {
      const seed = rand(16);
      const prg = new webmpc.Prg(seed);
      expect(hex(prg.fillBytes(n))).toBe(hex(oracle(backend, 'prg', [hex(seed), String(n)], new Uint8Array(0))));
      prg.free();
    }
  });
});
