//! Benchmark and test module, never shipped.
//!
//! * `rustcryptoAesEncrypt`: RustCrypto `aes` (its portable fixsliced backend, which is what it
//!   compiles to in Wasm) behind the same call shape as webmpc's `aesEncrypt`, so benchmarks
//!   compare like with like and tests have an independent implementation to agree with.
//! * `kernelLoop*`: the two ciphers timed inside Wasm, on a buffer that stays in linear memory,
//!   so the comparison is free of the JS/Wasm copies that the call-shaped figures include.

use aes::cipher::{BlockEncrypt, KeyInit};
use wasm_bindgen::prelude::*;
use webmpc_core::aes::{Aes128, FIXED_KEY};
use webmpc_core::Block;

/// AES-128-ECB over 16-byte blocks under a 16-byte key.
#[wasm_bindgen(js_name = rustcryptoAesEncrypt)]
pub fn rustcrypto_aes_encrypt(key: &[u8], blocks: &[u8]) -> Result<Vec<u8>, JsError> {
    if key.len() != 16 || blocks.len() % 16 != 0 {
        return Err(JsError::new("baseline: key must be 16 bytes and input a multiple of 16 bytes"));
    }
    let cipher = aes::Aes128::new_from_slice(key).map_err(|_| JsError::new("baseline: bad key"))?;
    let mut out = blocks.to_vec();
    // The batch call lets the fixsliced backend work on several blocks at once, its best case.
    cipher.encrypt_blocks(as_rustcrypto_blocks(&mut out));
    Ok(out)
}

fn as_rustcrypto_blocks(bytes: &mut [u8]) -> &mut [aes::Block] {
    let n = bytes.len() / 16;
    // SAFETY: `aes::Block` is `GenericArray<u8, U16>`, a `repr(transparent)` [u8; 16] with
    // alignment 1, and `bytes` holds at least n·16 bytes.
    unsafe { core::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut aes::Block, n) }
}

/// Encrypts a `blocks`-block buffer in place `iterations` times with webmpc's AES under the
/// fixed key; returns a byte of the result so the work cannot be optimised away.
#[wasm_bindgen(js_name = kernelLoopOurs)]
pub fn kernel_loop_ours(blocks: usize, iterations: u32) -> u8 {
    let aes = Aes128::new(FIXED_KEY);
    let mut buf = vec![Block::ZERO; blocks];
    for _ in 0..iterations {
        aes.encrypt_blocks(&mut buf);
    }
    buf.first().map_or(0, |b| b.0[0])
}

/// The same loop with RustCrypto's AES under the same key.
#[wasm_bindgen(js_name = kernelLoopRustcrypto)]
pub fn kernel_loop_rustcrypto(blocks: usize, iterations: u32) -> u8 {
    let cipher = aes::Aes128::new(&FIXED_KEY.0.into());
    let mut buf = vec![0u8; 16 * blocks];
    for _ in 0..iterations {
        cipher.encrypt_blocks(as_rustcrypto_blocks(&mut buf));
    }
    buf.first().copied().unwrap_or(0)
}
