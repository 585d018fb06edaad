// The kernels suite's cases, as closures over loaded Wasm modules. Browser-safe: the same cases
// run in Node (wasm-node) and inside a Chromium page (wasm-chromium).

export const BLOCKS = 4096;
export const BYTES = BLOCKS * 16;
export const TRANSPOSE_COLUMNS = 1 << 16;

/**
 * @param {any} ours the `webmpc` wasm-bindgen module, initialised
 * @param {any} baseline the `baseline` module (RustCrypto AES in Wasm), initialised
 * @returns {{ cases: Record<string, {fn: () => unknown, units: number}>, dispose: () => void }}
 */
export function kernelCases(ours, baseline) {
  const data = ours.randomBytes(BYTES);
  const other = ours.randomBytes(BYTES);
  const key = ours.randomBytes(16);
  const tweak = new Uint8Array(16);
  const n = TRANSPOSE_COLUMNS;
  const rows128 = new Uint8Array(16 * n);
  for (let off = 0; off < rows128.length; off += BYTES) rows128.set(ours.randomBytes(Math.min(BYTES, rows128.length - off)), off);
  const prg = new ours.Prg(key);
  // Ours and the baseline share the call shape (bytes in, bytes out), so both pay the same
  // copy across the JS/Wasm boundary: the ratio compares the ciphers.
  return {
    cases: {
      aes: { fn: () => ours.aesEncrypt(key, data), units: BYTES },
      // In-Wasm loops: 16 passes over 4096 blocks per call, so the call itself is noise.
      kernelOurs: { fn: () => baseline.kernelLoopOurs(BLOCKS, 16), units: 16 * BYTES },
      kernelBaseline: { fn: () => baseline.kernelLoopRustcrypto(BLOCKS, 16), units: 16 * BYTES },
      aesFixed: { fn: () => ours.aesFixedKeyEncrypt(data), units: BYTES },
      baseline: { fn: () => baseline.rustcryptoAesEncrypt(key, data), units: BYTES },
      cr: { fn: () => ours.hashCr(data), units: BYTES },
      ccr: { fn: () => ours.hashCcr(data), units: BYTES },
      tccr: { fn: () => ours.hashTccrCounter(data, tweak), units: BYTES },
      prg: { fn: () => prg.fillBytes(BYTES), units: BYTES },
      transpose: { fn: () => ours.transpose128xN(rows128, n), units: 16 * n },
      gfMul: { fn: () => ours.gf128Mul(data, other), units: BLOCKS },
      gfInner: { fn: () => ours.gf128InnerProduct(data, other), units: BLOCKS },
    },
    dispose: () => prg.free(),
  };
}
