//! The wasm-bindgen surface of webmpc's **main module** (`webmpc_bg.wasm`, loaded by `init()`):
//! kernels, OT, circuits, `yao2pc`, `authgc`. Protocol families an app may not use live in
//! modules of their own, loaded on first use (`webmpc-bindings-teleport`, …); all of them link
//! `webmpc-bindings-glue`, which holds what they share (stack scrub, zero-on-free allocator, the JS
//! transport channel, error shapes). Thin on purpose: it converts JS values, checks sizes, calls
//! the Rust crates and turns their errors into JS `Error`s with `name = "KernelError"` and a stable
//! `code`, which the TypeScript SDK maps onto its typed error classes. Nothing here may panic on
//! bad input: a panic in Wasm is an unrecoverable `RuntimeError: unreachable`.
//!
//! **Secret hygiene** (see `webmpc-bindings-glue`): every synchronous entry point that touches
//! secrets runs inside [`scrubbed`]; every asynchronous one also builds its future inside
//! `scrubbed` and runs it through [`spawn_scrubbed`], which clears the stack after each step of the
//! future. Freed heap memory is zeroed by the glue's allocator.

mod authgc;
mod circuit;
mod ot;
mod program;
mod yao;

// The shared glue, under the names the modules here have always used (`crate::scrubbed`, …).
pub(crate) use webmpc_bindings_glue::channel;
pub(crate) use webmpc_bindings_glue::{js_error, js_size, scrub_stack, scrubbed, spawn_scrubbed, JsResult};

use wasm_bindgen::prelude::*;
use webmpc_core::error::{blocks_of, one_block};
use webmpc_core::{aes, gf128, hash, prg, random, transpose, Block, KernelError};

/// Most bytes `randomBytes` hands out per call: it is for seeds and keys; bulk randomness comes
/// from a seeded [`Prg`].
const MAX_RANDOM_BYTES: usize = 1 << 20;
/// Most bytes one `Prg.fillBytes` call returns (callers loop for more).
const MAX_PRG_BYTES: usize = 64 << 20;

/// Name of the AES implementation this module runs (e.g. `wasm-simd128-bitsliced`).
#[wasm_bindgen(js_name = backendName)]
pub fn backend_name() -> String {
    aes::Backend::best().name().to_string()
}

/// The public key of the fixed-key permutation π used by the hashes.
#[wasm_bindgen(js_name = fixedKey)]
pub fn fixed_key() -> Vec<u8> {
    aes::FIXED_KEY.0.to_vec()
}

/// π(x) for each 16-byte block: AES-128 under the fixed public key.
///
/// AES takes its input by value (wasm-bindgen hands over the buffer it copied in) and encrypts in
/// place: one allocation, copy and wipe per call fewer than a separate output.
#[wasm_bindgen(js_name = aesFixedKeyEncrypt)]
pub fn aes_fixed_key_encrypt(mut blocks: Vec<u8>) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        aes::fixed_key_aes().encrypt_bytes(&mut blocks).map_err(js_error)?;
        Ok(blocks)
    })
}

/// AES-128 (ECB over independent blocks) under `key`.
#[wasm_bindgen(js_name = aesEncrypt)]
pub fn aes_encrypt(key: &[u8], mut blocks: Vec<u8>) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        let aes = aes::Aes128::from_key_bytes(key).map_err(js_error)?;
        aes.encrypt_bytes(&mut blocks).map_err(js_error)?;
        Ok(blocks)
    })
}

fn map_blocks(
    what: &'static str,
    blocks: &[u8],
    f: impl FnOnce(&[Block], &mut [Block]) -> Result<(), KernelError>,
) -> JsResult<Vec<u8>> {
    let input = blocks_of(what, blocks).map_err(js_error)?;
    let mut out = vec![0u8; blocks.len()];
    f(input, Block::slice_from_bytes_mut(&mut out).expect("same length as a block slice")).map_err(js_error)?;
    Ok(out)
}

/// cr(x) = π(x) ⊕ x for each block.
#[wasm_bindgen(js_name = hashCr)]
pub fn hash_cr(blocks: &[u8]) -> JsResult<Vec<u8>> {
    scrubbed(|| map_blocks("hashCr input", blocks, hash::cr_many))
}

/// ccr(x) = π(σ(x)) ⊕ σ(x) for each block.
#[wasm_bindgen(js_name = hashCcr)]
pub fn hash_ccr(blocks: &[u8]) -> JsResult<Vec<u8>> {
    scrubbed(|| map_blocks("hashCcr input", blocks, hash::ccr_many))
}

/// σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL for each block.
#[wasm_bindgen]
pub fn sigma(blocks: &[u8]) -> JsResult<Vec<u8>> {
    scrubbed(|| map_blocks("sigma input", blocks, hash::sigma_many))
}

/// tccr(x_j, tweak_j) = π(π(x_j) ⊕ tweak_j) ⊕ π(x_j), one 16-byte tweak per block.
#[wasm_bindgen(js_name = hashTccr)]
pub fn hash_tccr(blocks: &[u8], tweaks: &[u8]) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        let tweaks = blocks_of("hashTccr tweaks", tweaks).map_err(js_error)?;
        map_blocks("hashTccr input", blocks, |x, out| hash::tccr_many(x, tweaks, out))
    })
}

/// tccr(x_j, base + j), the base a 16-byte little-endian integer.
#[wasm_bindgen(js_name = hashTccrCounter)]
pub fn hash_tccr_counter(blocks: &[u8], tweak_base: &[u8]) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        let base = one_block("hashTccrCounter tweak base", tweak_base).map_err(js_error)?.to_u128();
        map_blocks("hashTccrCounter input", blocks, |x, out| hash::tccr_many_counter(x, base, out))
    })
}

/// AES-CTR PRG (see `webmpc_core::prg`).
#[wasm_bindgen]
pub struct Prg(prg::Prg);

#[wasm_bindgen]
impl Prg {
    /// The deterministic stream of a 16-byte seed.
    #[wasm_bindgen(constructor)]
    pub fn new(seed: &[u8]) -> JsResult<Prg> {
        scrubbed(|| Ok(Prg(prg::Prg::from_seed_bytes(seed).map_err(js_error)?)))
    }

    /// A PRG seeded from `crypto.getRandomValues`.
    #[wasm_bindgen(js_name = fromEntropy)]
    pub fn from_entropy() -> JsResult<Prg> {
        scrubbed(|| Ok(Prg(prg::Prg::from_entropy().map_err(js_error)?)))
    }

    /// The next `n` bytes of the stream (at most 64 MiB per call).
    #[wasm_bindgen(js_name = fillBytes)]
    pub fn fill_bytes(&mut self, n: f64) -> JsResult<Vec<u8>> {
        scrubbed(|| {
            let mut out = vec![0u8; js_size("Prg.fillBytes n", n, MAX_PRG_BYTES)?];
            self.0.fill_bytes(&mut out);
            Ok(out)
        })
    }
}

/// `n` bytes from the platform CSPRNG (at most 1 MiB per call).
#[wasm_bindgen(js_name = randomBytes)]
pub fn random_bytes(n: f64) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        let mut out = vec![0u8; js_size("randomBytes n", n, MAX_RANDOM_BYTES)?];
        random::fill(&mut out).map_err(js_error)?;
        Ok(out)
    })
}

/// 128 rows of `n` bits (16·n bytes, row-major, LSB-first) → `n` rows of 128 bits.
#[wasm_bindgen(js_name = transpose128xN)]
pub fn transpose_128xn(rows: &[u8], n: f64) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        // The input length bounds n (it must equal 16·n), so the length is the natural limit.
        let n = js_size("transpose128xN n", n, rows.len())?;
        let mut out = vec![0u8; rows.len()];
        transpose::transpose_128xn(rows, n, &mut out).map_err(js_error)?;
        Ok(out)
    })
}

/// Inverse of [`transpose_128xn`]: `n` rows of 128 bits → 128 rows of `n` bits.
#[wasm_bindgen(js_name = transposeNx128)]
pub fn transpose_nx128(blocks: &[u8], n: f64) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        let n = js_size("transposeNx128 n", n, blocks.len())?;
        let mut out = vec![0u8; blocks.len()];
        transpose::transpose_nx128(blocks, n, &mut out).map_err(js_error)?;
        Ok(out)
    })
}

/// Elementwise product in GF(2^128) (modulus x^128 + x^7 + x^2 + x + 1).
#[wasm_bindgen(js_name = gf128Mul)]
pub fn gf128_mul(a: &[u8], b: &[u8]) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        let b = blocks_of("gf128Mul b", b).map_err(js_error)?;
        map_blocks("gf128Mul a", a, |a, out| gf128::gf128_mul_many(a, b, out))
    })
}

/// Σ a_j · b_j in GF(2^128).
#[wasm_bindgen(js_name = gf128InnerProduct)]
pub fn gf128_inner_product(a: &[u8], b: &[u8]) -> JsResult<Vec<u8>> {
    scrubbed(|| {
        let a = blocks_of("gf128InnerProduct a", a).map_err(js_error)?;
        let b = blocks_of("gf128InnerProduct b", b).map_err(js_error)?;
        Ok(gf128::gf128_inner_product(a, b).map_err(js_error)?.0.to_vec())
    })
}
