//! 128-bit lanes shared by the SIMD kernels (bitsliced AES, bit-matrix transpose): one trait,
//! implemented for Wasm SIMD128, SSE2 (every x86_64) and a portable `[u64; 2]`. Algorithms are
//! written once over [`Lane`], so native tests of the portable and SSE2 lanes exercise exactly
//! what the Wasm build runs. Every operation here is data-independent.

/// A 128-bit register, as the bitsliced AES and the bit-matrix transpose use it.
pub(crate) trait Lane: Copy {
    fn load(src: &[u8; 16]) -> Self;
    fn store(self, dst: &mut [u8; 16]);
    fn splat(byte: u8) -> Self;
    fn xor(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    /// Shifts within each 64-bit half; callers mask so that nothing needs to cross halves.
    fn shl64(self, n: u32) -> Self;
    fn shr64(self, n: u32) -> Self;
    /// Bytes 0..8 of `self` and `o`, interleaved: `s0 o0 s1 o1 … s7 o7`.
    fn zip_lo(self, o: Self) -> Self;
    /// Bytes 8..16 of `self` and `o`, interleaved.
    fn zip_hi(self, o: Self) -> Self;
}

/// Exchanges the bits of `a` at positions `mask << shift` with the bits of `b` at `mask`.
#[inline(always)]
fn swap_move<L: Lane>(a: &mut L, b: &mut L, shift: u32, mask: L) {
    let t = a.shr64(shift).xor(*b).and(mask);
    *b = b.xor(t);
    *a = a.xor(t.shl64(shift));
}

/// Transposes, in place, every 8 × 8-bit sub-block of eight lanes: afterwards bit `c` of byte `k`
/// of lane `r` holds what was bit `r` of byte `k` of lane `c`. The transpose enters (and, being
/// an involution, leaves) AES's bitsliced form, and is the first half of a 128 × 128 tile
/// transpose. Recursive halving: swap the off-diagonal 4 × 4 quadrants, then 2 × 2, then bits.
#[inline(always)]
pub(crate) fn transpose_8x8_bits<L: Lane>(r: &mut [L; 8]) {
    let m4 = L::splat(0x0f);
    let m2 = L::splat(0x33);
    let m1 = L::splat(0x55);
    for (lo, hi) in [(0, 4), (1, 5), (2, 6), (3, 7)] {
        let (a, b) = pair(r, lo, hi);
        swap_move(a, b, 4, m4);
    }
    for (lo, hi) in [(0, 2), (1, 3), (4, 6), (5, 7)] {
        let (a, b) = pair(r, lo, hi);
        swap_move(a, b, 2, m2);
    }
    for (lo, hi) in [(0, 1), (2, 3), (4, 5), (6, 7)] {
        let (a, b) = pair(r, lo, hi);
        swap_move(a, b, 1, m1);
    }
}

#[inline(always)]
fn pair<L>(r: &mut [L; 8], lo: usize, hi: usize) -> (&mut L, &mut L) {
    let (x, y) = r.split_at_mut(hi);
    (&mut x[lo], &mut y[0])
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) type BestLane = wasm::WasmLane;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) type BestLane = sse2::Sse2Lane;
#[cfg(not(any(
    all(target_arch = "wasm32", target_feature = "simd128"),
    all(target_arch = "x86_64", target_feature = "sse2")
)))]
pub(crate) type BestLane = PortableLane;

/// Two `u64`s; what every platform without a SIMD lane runs, and the reference for the others.
/// On x86_64 the bitsliced AES fallback and the tests use it; in Wasm nothing does.
#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128", not(test)), allow(dead_code))]
#[derive(Clone, Copy)]
pub(crate) struct PortableLane(pub(crate) [u64; 2]);

/// Moves byte `k` of a 32-bit word to byte `2k` of a 64-bit word, leaving odd bytes zero.
#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128", not(test)), allow(dead_code))]
#[inline(always)]
fn spread_bytes(x: u64) -> u64 {
    let x = x & 0xffff_ffff;
    let x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    (x | (x << 8)) & 0x00ff_00ff_00ff_00ff
}

#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128", not(test)), allow(dead_code))]
impl PortableLane {
    /// Interleaves the bytes of two 64-bit words: `a0 b0 a1 b1 …` across two output words.
    #[inline(always)]
    fn zip_words(a: u64, b: u64) -> Self {
        PortableLane([spread_bytes(a) | (spread_bytes(b) << 8), spread_bytes(a >> 32) | (spread_bytes(b >> 32) << 8)])
    }
}

impl Lane for PortableLane {
    #[inline(always)]
    fn load(src: &[u8; 16]) -> Self {
        let (lo, hi) = src.split_at(8);
        PortableLane([u64::from_le_bytes(lo.try_into().unwrap()), u64::from_le_bytes(hi.try_into().unwrap())])
    }
    #[inline(always)]
    fn store(self, dst: &mut [u8; 16]) {
        dst[..8].copy_from_slice(&self.0[0].to_le_bytes());
        dst[8..].copy_from_slice(&self.0[1].to_le_bytes());
    }
    #[inline(always)]
    fn splat(byte: u8) -> Self {
        let w = u64::from_ne_bytes([byte; 8]);
        PortableLane([w, w])
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        PortableLane([self.0[0] ^ o.0[0], self.0[1] ^ o.0[1]])
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        PortableLane([self.0[0] & o.0[0], self.0[1] & o.0[1]])
    }
    #[inline(always)]
    fn shl64(self, n: u32) -> Self {
        PortableLane([self.0[0] << n, self.0[1] << n])
    }
    #[inline(always)]
    fn shr64(self, n: u32) -> Self {
        PortableLane([self.0[0] >> n, self.0[1] >> n])
    }
    #[inline(always)]
    fn zip_lo(self, o: Self) -> Self {
        Self::zip_words(self.0[0], o.0[0])
    }
    #[inline(always)]
    fn zip_hi(self, o: Self) -> Self {
        Self::zip_words(self.0[1], o.0[1])
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) mod sse2 {
    use super::Lane;
    use core::arch::x86_64::*;

    /// An `__m128i`. Every intrinsic used is SSE2, which every x86_64 CPU has.
    #[derive(Clone, Copy)]
    pub(crate) struct Sse2Lane(__m128i);

    // SAFETY (all blocks below): SSE2 is statically enabled (checked by the cfg above), and
    // loadu/storeu have no alignment requirement on their 16-byte operands.
    impl Lane for Sse2Lane {
        #[inline(always)]
        fn load(src: &[u8; 16]) -> Self {
            Sse2Lane(unsafe { _mm_loadu_si128(src.as_ptr() as *const __m128i) })
        }
        #[inline(always)]
        fn store(self, dst: &mut [u8; 16]) {
            unsafe { _mm_storeu_si128(dst.as_mut_ptr() as *mut __m128i, self.0) }
        }
        #[inline(always)]
        fn splat(byte: u8) -> Self {
            Sse2Lane(unsafe { _mm_set1_epi8(byte as i8) })
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Sse2Lane(unsafe { _mm_xor_si128(self.0, o.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            Sse2Lane(unsafe { _mm_and_si128(self.0, o.0) })
        }
        #[inline(always)]
        fn shl64(self, n: u32) -> Self {
            Sse2Lane(unsafe { _mm_sll_epi64(self.0, _mm_cvtsi32_si128(n as i32)) })
        }
        #[inline(always)]
        fn shr64(self, n: u32) -> Self {
            Sse2Lane(unsafe { _mm_srl_epi64(self.0, _mm_cvtsi32_si128(n as i32)) })
        }
        #[inline(always)]
        fn zip_lo(self, o: Self) -> Self {
            Sse2Lane(unsafe { _mm_unpacklo_epi8(self.0, o.0) })
        }
        #[inline(always)]
        fn zip_hi(self, o: Self) -> Self {
            Sse2Lane(unsafe { _mm_unpackhi_epi8(self.0, o.0) })
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod wasm {
    use super::Lane;
    use core::arch::wasm32::*;

    /// A Wasm `v128`. The interleaves are constant `i8x16.shuffle`s that engines lower to a
    /// single `punpcklbw`/`zip1`-class instruction (unlike general shuffles: see aes/lane.rs).
    #[derive(Clone, Copy)]
    pub(crate) struct WasmLane(pub(crate) v128);

    impl Lane for WasmLane {
        #[inline(always)]
        fn load(src: &[u8; 16]) -> Self {
            // SAFETY: 16 readable bytes; v128_load has no alignment requirement.
            WasmLane(unsafe { v128_load(src.as_ptr() as *const v128) })
        }
        #[inline(always)]
        fn store(self, dst: &mut [u8; 16]) {
            // SAFETY: 16 writable bytes; v128_store has no alignment requirement.
            unsafe { v128_store(dst.as_mut_ptr() as *mut v128, self.0) }
        }
        #[inline(always)]
        fn splat(byte: u8) -> Self {
            WasmLane(u8x16_splat(byte))
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            WasmLane(v128_xor(self.0, o.0))
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            WasmLane(v128_and(self.0, o.0))
        }
        #[inline(always)]
        fn shl64(self, n: u32) -> Self {
            WasmLane(u64x2_shl(self.0, n))
        }
        #[inline(always)]
        fn shr64(self, n: u32) -> Self {
            WasmLane(u64x2_shr(self.0, n))
        }
        #[inline(always)]
        fn zip_lo(self, o: Self) -> Self {
            WasmLane(u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(self.0, o.0))
        }
        #[inline(always)]
        fn zip_hi(self, o: Self) -> Self {
            WasmLane(u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(self.0, o.0))
        }
    }
}
