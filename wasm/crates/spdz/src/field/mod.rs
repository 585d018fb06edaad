//! The two fields MASCOT runs over, behind one trait: [`Fp`] (the prime field of
//! p = 2^128 − 173) and [`Gf128`] (GF(2^128), the binary field of `webmpc_core::gf128`).
//!
//! Both have k = 128 bits, so the gadget vector g = (1, g, …, g^127) has 128 entries (g = 2 in
//! F_p, g = X in GF(2^128)), Π_Triple combines τ = 3 raw triples (Corollary 1 of the paper: k/2
//! = 64 bits of statistical security), and every element travels as 16 little-endian bytes.
//!
//! Arithmetic on elements is constant-time: no branch and no memory index depends on a value.
//! The one exception is documented where it occurs ([`Field::from_hash`] for F_p re-hashes an
//! input ≥ p, an event of probability 173/2^128 that reveals only itself).

mod fp;
mod gf2k;

pub use fp::Fp;
pub use gf2k::Gf128;

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use subtle::{ConditionallySelectable, ConstantTimeEq};
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// Which field a program or a session uses (the byte in the program header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// F_p with p = 2^128 − 173.
    Prime,
    /// GF(2^128) = GF(2)\[X\]/(X^128 + X^7 + X^2 + X + 1).
    Binary,
}

impl FieldKind {
    /// The wire byte of this field.
    pub fn byte(self) -> u8 {
        match self {
            FieldKind::Prime => 0,
            FieldKind::Binary => 1,
        }
    }

    /// The field of a wire byte.
    pub fn from_byte(b: u8) -> Option<FieldKind> {
        match b {
            0 => Some(FieldKind::Prime),
            1 => Some(FieldKind::Binary),
            _ => None,
        }
    }
}

/// A finite field of 128-bit elements, as MASCOT needs it.
pub trait Field:
    Copy
    + Default
    + Debug
    + PartialEq
    + Eq
    + ConstantTimeEq
    + ConditionallySelectable
    + Add<Output = Self>
    + Sub<Output = Self>
    + Neg<Output = Self>
    + Mul<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + 'static
{
    /// Which field this is.
    const KIND: FieldKind;
    /// k = ⌈log2 |F|⌉: the length of the gadget vector and of a bit decomposition.
    const BITS: usize = 128;
    /// Bytes of the wire encoding.
    const BYTES: usize = 16;
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;

    /// The element with integer value `x` (F_p) or with coefficient vector `x` (GF(2^128)).
    fn from_u64(x: u64) -> Self;

    /// Maps a hash output (an OT-extension row hashed with a unique TCCR tweak, a PRF block)
    /// to a uniformly distributed element, deterministically, so that both ends of an OT get
    /// the same element from the same block.
    fn from_hash(b: Block) -> Self;

    /// A uniformly random element from `prg` (exact: rejection sampling for F_p).
    fn random(prg: &mut Prg) -> Self;

    /// Fills `out` with uniformly random elements from `prg`.
    fn random_fill(prg: &mut Prg, out: &mut [Self]) {
        for x in out.iter_mut() {
            *x = Self::random(prg);
        }
    }

    /// The canonical 16-byte little-endian encoding.
    fn to_bytes(self) -> [u8; 16];

    /// Decodes a canonical encoding; `None` for an integer ≥ p (F_p). Public data only: the
    /// check branches.
    fn from_bytes(b: [u8; 16]) -> Option<Self>;

    /// g⁻¹(x): the exact bit decomposition, bit h of the result is the coefficient of g^h
    /// (⟨g, g⁻¹(x)⟩ = x). For F_p the bits of the canonical integer in `[0, p)`.
    fn bits(self) -> u128;

    /// ⟨g, bits⟩ = Σ_h bit_h·g^h: the element a vector of OT choice bits stands for.
    fn from_bits(bits: u128) -> Self;

    /// ⟨g, xs⟩ = Σ_h xs[h]·g^h for at most 128 entries: how k OT outputs become one element.
    /// Accumulates unreduced and reduces once.
    fn gadget(xs: &[Self]) -> Self;

    /// x^-1, or `None` for 0. For public values (variable time).
    fn invert(self) -> Option<Self>;

    /// x·2 in F_p, x·X in GF(2^128): g·x.
    fn times_g(self) -> Self;

    /// A square root of `self` if it has one; the same root on every party. Used (in F_p) to
    /// turn a random square into a random bit.
    fn sqrt(self) -> Option<Self>;

    /// Reads `n` elements from `bytes` (exactly `16·n` bytes); `None` if any is not canonical.
    fn read_vec(bytes: &[u8]) -> Option<Vec<Self>> {
        if bytes.len() % 16 != 0 {
            return None;
        }
        bytes.chunks_exact(16).map(|c| Self::from_bytes(c.try_into().expect("16 bytes"))).collect()
    }

    /// The concatenated encodings of `xs`. (One byte of spare capacity: the stream tag the
    /// multiplexer appends then needs no reallocation.)
    fn write_vec(xs: &[Self]) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 * xs.len() + 1);
        for x in xs {
            out.extend_from_slice(&x.to_bytes());
        }
        out
    }
}

/// Blocks read from a PRG per step of [`fill_through_blocks`]: enough for the bitsliced AES to
/// work on full batches, small enough to stay in L1.
const FILL_STEP: usize = 64;

/// `out[i] = of(block i of prg's stream)`, reading the stream through a stack buffer (wiped
/// afterwards: it held keystream).
pub(crate) fn fill_through_blocks<F>(prg: &mut Prg, out: &mut [F], mut of: impl FnMut(Block) -> F) {
    let mut buf = [Block::ZERO; FILL_STEP];
    for chunk in out.chunks_mut(FILL_STEP) {
        let b = &mut buf[..chunk.len()];
        prg.fill_blocks(b);
        for (x, b) in chunk.iter_mut().zip(b.iter()) {
            *x = of(*b);
        }
    }
    Block::wipe(&mut buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn gadget_matches_definition<F: Field>(xs: &[F]) {
        let mut want = F::ZERO;
        let mut g = F::ONE;
        for x in xs {
            want += *x * g;
            g = g.times_g();
        }
        assert_eq!(F::gadget(xs), want);
    }

    fn bits_round_trip<F: Field>(x: F) {
        assert_eq!(F::from_bits(x.bits()), x);
        let mut g = F::ONE;
        let mut sum = F::ZERO;
        for h in 0..F::BITS {
            if (x.bits() >> h) & 1 == 1 {
                sum += g;
            }
            g = g.times_g();
        }
        assert_eq!(sum, x);
    }

    proptest! {
        #[test]
        fn gadget_and_bits_agree_with_their_definitions(seed in any::<u128>(), len in 0usize..=128) {
            let mut prg = Prg::from_seed(Block::from_u128(seed));
            let xs: Vec<Fp> = (0..len).map(|_| Fp::random(&mut prg)).collect();
            gadget_matches_definition(&xs);
            let ys: Vec<Gf128> = (0..len).map(|_| Gf128::random(&mut prg)).collect();
            gadget_matches_definition(&ys);
            bits_round_trip(Fp::random(&mut prg));
            bits_round_trip(Gf128::random(&mut prg));
            bits_round_trip(-Fp::ONE);
        }
    }

    /// `random_fill` reads the same stream as repeated `random` (nothing is rejected for these
    /// seeds), whatever the split, so both ends of a COPE seed agree however they batch.
    #[test]
    fn random_fill_is_the_stream_of_random() {
        fn check<F: Field>() {
            for len in [0usize, 1, 63, 64, 65, 200] {
                let mut a = Prg::from_seed(Block::from_u128(len as u128 + 7));
                let mut b = Prg::from_seed(Block::from_u128(len as u128 + 7));
                let mut filled = vec![F::ZERO; len];
                F::random_fill(&mut a, &mut filled);
                let one_by_one: Vec<F> = (0..len).map(|_| F::random(&mut b)).collect();
                assert_eq!(filled, one_by_one);
                assert_eq!(a.next_block(), b.next_block());
            }
        }
        check::<Fp>();
        check::<Gf128>();
    }

    #[test]
    fn field_kind_bytes_round_trip() {
        for k in [FieldKind::Prime, FieldKind::Binary] {
            assert_eq!(FieldKind::from_byte(k.byte()), Some(k));
        }
        assert_eq!(FieldKind::from_byte(2), None);
    }
}
