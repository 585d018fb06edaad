//! RustCrypto `aes` (its portable fixsliced backend, which is what it compiles to in Wasm) behind
//! the same call shape as webmpc's `aesEncrypt`, so benchmarks compare like with like and tests
//! have an independent implementation to agree with.

use aes::cipher::{BlockEncrypt, KeyInit};
use wasm_bindgen::prelude::*;

/// AES-128-ECB over 16-byte blocks under a 16-byte key.
#[wasm_bindgen(js_name = rustcryptoAesEncrypt)]
pub fn rustcrypto_aes_encrypt(key: &[u8], blocks: &[u8]) -> Result<Vec<u8>, JsError> {
    if key.len() != 16 || blocks.len() % 16 != 0 {
        return Err(JsError::new("baseline: key must be 16 bytes and input a multiple of 16 bytes"));
    }
    let cipher = aes::Aes128::new_from_slice(key).map_err(|_| JsError::new("baseline: bad key"))?;
    let mut out = blocks.to_vec();
    // The batch call lets the fixsliced backend work on several blocks at once, its best case.
    let chunks: &mut [aes::Block] = bytemuck_free_cast(&mut out);
    cipher.encrypt_blocks(chunks);
    Ok(out)
}

fn bytemuck_free_cast(bytes: &mut [u8]) -> &mut [aes::Block] {
    let n = bytes.len() / 16;
    // SAFETY: `aes::Block` is `GenericArray<u8, U16>`, a `repr(transparent)` [u8; 16] with
    // alignment 1, and `bytes` holds exactly n·16 bytes (checked by the caller).
    unsafe { core::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut aes::Block, n) }
}
