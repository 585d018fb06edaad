//! What the bitsliced cipher needs beyond [`crate::simd::Lane`]: the constant byte permutations
//! of the AES state, applied to a whole lane at once.

use super::sbox::BitWord;
use crate::simd::{Lane, PortableLane};

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

/// A lane the cipher can run on: the shared [`Lane`] operations plus the byte permutations.
pub(crate) trait AesLane: Lane {
    /// Applies one of the constant byte permutations in [`perm`] (the argument is always a
    /// constant after inlining, so this is one byte shuffle).
    fn permute(self, which: perm::Which) -> Self;
}

/// The S-box circuit runs on any lane.
impl<L: Lane> BitWord for L {
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        Lane::xor(self, other)
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        Lane::and(self, other)
    }
}

/// Portable: the permutation goes through a byte array with constant indices.
impl AesLane for PortableLane {
    #[inline(always)]
    fn permute(self, which: perm::Which) -> Self {
        let p = which.table();
        let mut b = [0u8; 16];
        self.store(&mut b);
        let mut o = [0u8; 16];
        for j in 0..16 {
            o[j] = b[p[j]];
        }
        Self::load(&o)
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use super::perm::{self, Which};
    use super::AesLane;
    use crate::simd::wasm::WasmLane;
    use core::arch::wasm32::*;

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

    impl AesLane for WasmLane {
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
