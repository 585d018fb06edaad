//! AES-NI backend for native builds (the enclave server and native benches/tests). Eight blocks
//! in flight per step so the `aesenc` pipeline stays full.

#![cfg(target_arch = "x86_64")]

use crate::Block;
use core::arch::x86_64::*;

pub(crate) fn available() -> bool {
    #[cfg(feature = "std")]
    return std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("sse2");
    // Without std there is no run-time detection (and `cpuid` traps inside an SGX enclave): use
    // AES-NI exactly when the build enables it.
    #[cfg(not(feature = "std"))]
    return cfg!(all(target_feature = "aes", target_feature = "sse2"));
}

/// # Safety
/// The CPU must support AES-NI and SSE2 ([`available`]).
#[target_feature(enable = "aes,sse2")]
pub(crate) unsafe fn encrypt_blocks(round_keys: &[Block; 11], blocks: &mut [Block]) {
    let rk: [__m128i; 11] = core::array::from_fn(|r| _mm_loadu_si128(round_keys[r].0.as_ptr() as *const __m128i));
    let mut chunks = blocks.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let mut s: [__m128i; 8] =
            core::array::from_fn(|i| _mm_xor_si128(_mm_loadu_si128(chunk[i].0.as_ptr() as *const __m128i), rk[0]));
        for k in &rk[1..10] {
            for x in s.iter_mut() {
                *x = _mm_aesenc_si128(*x, *k);
            }
        }
        for (i, x) in s.iter().enumerate() {
            _mm_storeu_si128(chunk[i].0.as_mut_ptr() as *mut __m128i, _mm_aesenclast_si128(*x, rk[10]));
        }
    }
    for b in chunks.into_remainder() {
        let mut x = _mm_xor_si128(_mm_loadu_si128(b.0.as_ptr() as *const __m128i), rk[0]);
        for k in &rk[1..10] {
            x = _mm_aesenc_si128(x, *k);
        }
        _mm_storeu_si128(b.0.as_mut_ptr() as *mut __m128i, _mm_aesenclast_si128(x, rk[10]));
    }
}
