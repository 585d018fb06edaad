//! 128-bit lanes for the bitsliced cipher: Wasm SIMD128 where available, a portable `u128`
//! otherwise. The cipher is written once over [`Lane`]; only these primitives differ, so native
//! tests of the portable lane exercise the same algorithm the Wasm build runs.

use super::sbox::BitWord;
use crate::Block;

/// Byte permutations of the AES state, as source indices (`out[j] = in[P[j]]`). The state byte
/// at row r, column c has index r + 4c (FIPS-197 column-major order).
///
/// The cipher never applies ShiftRows on its own. After round r the true state is SR^r applied
/// to the state held in registers, and since SR^4 is the identity there are four "phases". In
/// phase p, MixColumns' row rotations conjugated by SR^p act on the held state directly
/// (`ROT1[p]`, `ROT2[p]`), and the round keys are pre-permuted to match. That removes eight
/// shuffles from every round; the pending SR^10 = SR^2 is applied once at the end.
pub(crate) mod perm {
    pub(crate) type Perm = [usize; 16];

    const fn shift_rows() -> Perm {
        let mut p = [0usize; 16];
        let mut j = 0;
        while j < 16 {
            p[j] = j % 4 + 4 * ((j / 4 + j % 4) % 4);
            j += 1;
        }
        p
    }

    /// Rotates every column up by `k` rows.
    const fn rot_rows(k: usize) -> Perm {
        let mut p = [0usize; 16];
        let mut j = 0;
        while j < 16 {
            p[j] = (j % 4 + k) % 4 + 4 * (j / 4);
            j += 1;
        }
        p
    }

    /// "Apply `first`, then `then`": `out[j] = in[first[then[j]]]`.
    pub(crate) const fn compose(first: &Perm, then: &Perm) -> Perm {
        let mut p = [0usize; 16];
        let mut j = 0;
        while j < 16 {
            p[j] = first[then[j]];
            j += 1;
        }
        p
    }

    pub(crate) const fn inverse(p: &Perm) -> Perm {
        let mut q = [0usize; 16];
        let mut j = 0;
        while j < 16 {
            q[p[j]] = j;
            j += 1;
        }
        q
    }

    /// SR^k.
    pub(crate) const fn shift_rows_pow(k: usize) -> Perm {
        let mut p = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let sr = shift_rows();
        let mut i = 0;
        while i < k {
            p = compose(&p, &sr);
            i += 1;
        }
        p
    }

    /// SR^-p ∘ rot ∘ SR^p: the rotation `rot` seen from the held state in phase `p`.
    const fn conjugate(rot: &Perm, phase: usize) -> Perm {
        let c = shift_rows_pow(phase);
        compose(&compose(&c, rot), &inverse(&c))
    }

    pub(crate) const ROT1: [Perm; 4] = [
        conjugate(&rot_rows(1), 0),
        conjugate(&rot_rows(1), 1),
        conjugate(&rot_rows(1), 2),
        conjugate(&rot_rows(1), 3),
    ];
    pub(crate) const ROT2: [Perm; 4] = [
        conjugate(&rot_rows(2), 0),
        conjugate(&rot_rows(2), 1),
        conjugate(&rot_rows(2), 2),
        conjugate(&rot_rows(2), 3),
    ];
    /// The pending permutation after the last round.
    pub(crate) const SHIFT_ROWS_2: Perm = shift_rows_pow(2);

    /// Names for the permutations above, so SIMD lanes can map each to a precomputed mask.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(crate) enum Which {
        Rot1(usize),
        Rot2(usize),
        ShiftRows2,
    }

    impl Which {
        pub(crate) const fn table(self) -> &'static Perm {
            match self {
                Which::Rot1(p) => &ROT1[p % 4],
                Which::Rot2(p) => &ROT2[p % 4],
                Which::ShiftRows2 => &SHIFT_ROWS_2,
            }
        }
    }
}

/// What the bitsliced cipher needs from a 128-bit register.
pub(crate) trait Lane: BitWord {
    fn load(block: &Block) -> Self;
    fn store(self, block: &mut Block);
    fn zero() -> Self;
    /// Shifts within each 64-bit half (the bit transposition masks away what crosses bytes).
    fn shr64(self, n: u32) -> Self;
    fn shl64(self, n: u32) -> Self;
    /// Applies one of the constant byte permutations in [`perm`] (the argument is always a
    /// constant after inlining, so this is one byte shuffle).
    fn permute(self, which: perm::Which) -> Self;
}

/// Portable lane: one `u128`. Byte permutations go through a byte array with constant indices.
#[derive(Clone, Copy)]
#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
pub(crate) struct PortableLane(u128);

impl PortableLane {
    #[inline(always)]
    fn permute_bytes(self, p: &perm::Perm) -> Self {
        let b = self.0.to_le_bytes();
        let mut o = [0u8; 16];
        for j in 0..16 {
            o[j] = b[p[j]];
        }
        PortableLane(u128::from_le_bytes(o))
    }
    #[inline(always)]
    fn halves(self) -> (u64, u64) {
        (self.0 as u64, (self.0 >> 64) as u64)
    }
    #[inline(always)]
    fn from_halves(lo: u64, hi: u64) -> Self {
        PortableLane(lo as u128 | (hi as u128) << 64)
    }
}

impl BitWord for PortableLane {
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        PortableLane(self.0 ^ o.0)
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        PortableLane(self.0 & o.0)
    }
}

impl Lane for PortableLane {
    #[inline(always)]
    fn load(block: &Block) -> Self {
        PortableLane(block.to_u128())
    }
    #[inline(always)]
    fn store(self, block: &mut Block) {
        *block = Block::from_u128(self.0);
    }
    #[inline(always)]
    fn zero() -> Self {
        PortableLane(0)
    }
    #[inline(always)]
    fn shr64(self, n: u32) -> Self {
        let (lo, hi) = self.halves();
        Self::from_halves(lo >> n, hi >> n)
    }
    #[inline(always)]
    fn shl64(self, n: u32) -> Self {
        let (lo, hi) = self.halves();
        Self::from_halves(lo << n, hi << n)
    }
    #[inline(always)]
    fn permute(self, which: perm::Which) -> Self {
        self.permute_bytes(which.table())
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) use simd::WasmLane;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use super::perm::{self, Which};
    use super::{BitWord, Lane};
    use crate::Block;
    use core::arch::wasm32::*;

    /// A Wasm `v128`.
    #[derive(Clone, Copy)]
    pub(crate) struct WasmLane(v128);

    /// The permutations of [`perm`] as `i8x16.swizzle` index vectors, in [`Which`] order.
    ///
    /// Why swizzle with masks in memory rather than `i8x16.shuffle` with constant lanes: V8
    /// lowers a general constant shuffle to `pshufb` plus four instructions that rebuild the
    /// mask from immediates at every use (two of them on the shuffle port). A swizzle whose mask
    /// is a loaded value costs a load, the out-of-range fix-up `paddusb` and the `pshufb`; that
    /// made the whole cipher about 25% faster in Node 20. The loads are volatile so LLVM cannot
    /// fold them back into constant shuffles.
    #[repr(align(16))]
    struct SwizzleMasks([v128; 9]);

    const fn mask(p: &perm::Perm) -> v128 {
        let mut b = [0u8; 16];
        let mut i = 0;
        while i < 16 {
            b[i] = p[i] as u8;
            i += 1;
        }
        u8x16(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }

    static MASKS: SwizzleMasks = SwizzleMasks([
        mask(&perm::ROT1[0]),
        mask(&perm::ROT1[1]),
        mask(&perm::ROT1[2]),
        mask(&perm::ROT1[3]),
        mask(&perm::ROT2[0]),
        mask(&perm::ROT2[1]),
        mask(&perm::ROT2[2]),
        mask(&perm::ROT2[3]),
        mask(&perm::SHIFT_ROWS_2),
    ]);

    impl BitWord for WasmLane {
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            WasmLane(v128_xor(self.0, o.0))
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            WasmLane(v128_and(self.0, o.0))
        }
    }

    impl Lane for WasmLane {
        #[inline(always)]
        fn load(block: &Block) -> Self {
            // SAFETY: `Block` is 16 readable bytes; v128_load has no alignment requirement.
            WasmLane(unsafe { v128_load(block.0.as_ptr() as *const v128) })
        }
        #[inline(always)]
        fn store(self, block: &mut Block) {
            // SAFETY: `Block` is 16 writable bytes; v128_store has no alignment requirement.
            unsafe { v128_store(block.0.as_mut_ptr() as *mut v128, self.0) }
        }
        #[inline(always)]
        fn zero() -> Self {
            WasmLane(u64x2_splat(0))
        }
        #[inline(always)]
        fn shr64(self, n: u32) -> Self {
            WasmLane(u64x2_shr(self.0, n))
        }
        #[inline(always)]
        fn shl64(self, n: u32) -> Self {
            WasmLane(u64x2_shl(self.0, n))
        }
        #[inline(always)]
        fn permute(self, which: Which) -> Self {
            let k = match which {
                Which::Rot1(p) => p % 4,
                Which::Rot2(p) => 4 + p % 4,
                Which::ShiftRows2 => 8,
            };
            // SAFETY: `k < 9` and MASKS is a valid, aligned static.
            let m = unsafe { core::ptr::read_volatile(&MASKS.0[k]) };
            WasmLane(u8x16_swizzle(self.0, m))
        }
    }
}
