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

/// Both parties of a KOS OT extension inside this Wasm instance over the in-memory network, so
/// the `ot` suite can time the protocol's computation in Wasm without JavaScript in the loop.
#[wasm_bindgen(js_name = OtLocalBench)]
pub struct OtLocalBench(webmpc_ot::local::LocalPair);

#[wasm_bindgen(js_class = OtLocalBench)]
impl OtLocalBench {
    /// Runs the 128 base OTs (time it from JavaScript).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<OtLocalBench, JsError> {
        webmpc_ot::local::LocalPair::setup().map(OtLocalBench).map_err(|e| JsError::new(&e.to_string()))
    }

    /// Runs `n` OTs of `kind` (`random | cot | correlated | chosen`); returns a checksum.
    pub fn run(&mut self, kind: &str, n: usize) -> Result<u8, JsError> {
        let kind = webmpc_ot::local::Kind::parse(kind).ok_or_else(|| JsError::new("unknown OT kind"))?;
        self.0.run(kind, n).map_err(|e| JsError::new(&e.to_string()))
    }

    /// Bytes both parties have sent.
    #[wasm_bindgen(js_name = bytesSent)]
    pub fn bytes_sent(&self) -> f64 {
        self.0.bytes_sent() as f64
    }
}
