//! Fixed-key hashes of Guo, Katz, Wang and Yu ("Efficient and secure multiparty computation from
//! fixed-key block ciphers", S&P 2020), all built on π = AES-128 under the public [`FIXED_KEY`]:
//!
//! * `cr(x)   = π(x) ⊕ x`: correlation robust.
//! * `ccr(x)  = π(σ(x)) ⊕ σ(x)`: circular correlation robust, with the linear orthomorphism
//!   `σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL`; what free-XOR garbling needs.
//! * `tccr(x, i) = π(π(x) ⊕ i) ⊕ π(x)`: tweakable circular correlation robust. Every hash in OT
//!   extension must be tweaked by a value unique to that OT (MASCOT's untweaked hash was broken by
//!   exactly this omission), so OT code uses `tccr` with unique tweaks.
//!
//! xL is the high 64 bits of the block's little-endian integer reading (bytes 8..16).
//!
//! [`FIXED_KEY`]: crate::aes::FIXED_KEY

use crate::aes::{fixed_key_aes, Aes128};
use crate::{Block, KernelError};

/// Blocks hashed per step: small enough that the scratch stays in L1, large enough to amortise
/// the bitsliced cipher's 8-block granularity.
const CHUNK: usize = 64;

/// σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL. Linear, and σ(x) ⊕ x is also a permutation (an orthomorphism).
#[inline(always)]
pub fn sigma(x: Block) -> Block {
    let [lo, hi] = x.to_u64s();
    Block::from_u64s(hi, hi ^ lo)
}

fn check_lengths(what: &'static str, input: usize, out: usize) -> Result<(), KernelError> {
    if input != out {
        return Err(KernelError::LengthMismatch { what, left: input, right: out });
    }
    Ok(())
}

/// `out[j] = π(f(x_j)) ⊕ f(x_j)`: the shape shared by CR (f = id) and CCR (f = σ).
fn mmo_many(pi: &Aes128, input: &[Block], out: &mut [Block], pre: impl Fn(Block) -> Block) {
    let mut scratch = [Block::ZERO; CHUNK];
    for (xs, ys) in input.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
        let s = &mut scratch[..xs.len()];
        for (d, x) in s.iter_mut().zip(xs) {
            *d = pre(*x);
        }
        ys.copy_from_slice(s);
        pi.encrypt_blocks(ys);
        for (y, d) in ys.iter_mut().zip(s.iter()) {
            *y ^= *d;
        }
    }
    Block::wipe(&mut scratch);
}

/// `out[j] = tccr(input[j], tweak(j))`, the tweaks coming from a function of the index.
fn tmmo_many(pi: &Aes128, input: &[Block], out: &mut [Block], tweak: impl Fn(usize) -> Block) {
    let mut px = [Block::ZERO; CHUNK];
    for (c, (xs, ys)) in input.chunks(CHUNK).zip(out.chunks_mut(CHUNK)).enumerate() {
        let px = &mut px[..xs.len()];
        px.copy_from_slice(xs);
        pi.encrypt_blocks(px);
        for (k, (y, p)) in ys.iter_mut().zip(px.iter()).enumerate() {
            *y = *p ^ tweak(c * CHUNK + k);
        }
        pi.encrypt_blocks(ys);
        for (y, p) in ys.iter_mut().zip(px.iter()) {
            *y ^= *p;
        }
    }
    Block::wipe(&mut px);
}

/// The hashes over a given permutation. [`Hasher::fixed`] is π; tests and benches use other
/// backends' instances of the same key to cross-check them.
#[derive(Clone, Copy)]
pub struct Hasher<'a> {
    pi: &'a Aes128,
}

impl Hasher<'static> {
    /// The hashes over π, the fixed-key AES every party agrees on.
    pub fn fixed() -> Self {
        Hasher { pi: fixed_key_aes() }
    }
}

impl<'a> Hasher<'a> {
    /// The hashes over `pi` (which should be AES under [`crate::aes::FIXED_KEY`] to interoperate).
    pub fn with_permutation(pi: &'a Aes128) -> Self {
        Hasher { pi }
    }

    /// `out[j] = cr(input[j])`.
    pub fn cr_many(&self, input: &[Block], out: &mut [Block]) -> Result<(), KernelError> {
        check_lengths("cr_many", input.len(), out.len())?;
        mmo_many(self.pi, input, out, |x| x);
        Ok(())
    }

    /// `out[j] = ccr(input[j])`.
    pub fn ccr_many(&self, input: &[Block], out: &mut [Block]) -> Result<(), KernelError> {
        check_lengths("ccr_many", input.len(), out.len())?;
        mmo_many(self.pi, input, out, sigma);
        Ok(())
    }

    /// `out[j] = tccr(input[j], tweaks[j])`.
    pub fn tccr_many(&self, input: &[Block], tweaks: &[Block], out: &mut [Block]) -> Result<(), KernelError> {
        check_lengths("tccr_many", input.len(), out.len())?;
        check_lengths("tccr_many tweaks", input.len(), tweaks.len())?;
        tmmo_many(self.pi, input, out, |j| tweaks[j]);
        Ok(())
    }

    /// `out[j] = tccr(input[j], tweak(j))` with the tweaks computed on the fly (no tweak array):
    /// for callers whose tweaks follow a pattern, e.g. half-gates' `(tag, 2·gate + half)`. The
    /// caller must make `tweak` injective over the batch, and unique across the batches of a
    /// Δ/key, as TCCR requires.
    pub fn tccr_many_with(
        &self,
        input: &[Block],
        tweak: impl Fn(usize) -> Block,
        out: &mut [Block],
    ) -> Result<(), KernelError> {
        check_lengths("tccr_many_with", input.len(), out.len())?;
        tmmo_many(self.pi, input, out, tweak);
        Ok(())
    }

    /// `out[j] = tccr(input[j], base + j)` with the tweak as a little-endian 128-bit integer: the
    /// usual case in OT extension, where the tweak is the OT's global index. A range that would
    /// wrap past 2^128 is refused: wrapping would reuse tweaks, which is what TCCR must never do.
    pub fn tccr_many_counter(&self, input: &[Block], base: u128, out: &mut [Block]) -> Result<(), KernelError> {
        check_lengths("tccr_many_counter", input.len(), out.len())?;
        // The last tweak used is base + len - 1.
        if !input.is_empty() && base.checked_add(input.len() as u128 - 1).is_none() {
            return Err(KernelError::InvalidDimension {
                what: "tccr_many_counter",
                detail: "tweak base + count exceeds 2^128 (tweaks would repeat)".into(),
            });
        }
        tmmo_many(self.pi, input, out, |j| Block::from_u128(base + j as u128));
        Ok(())
    }
}

/// `out[j] = cr(input[j])` under π.
pub fn cr_many(input: &[Block], out: &mut [Block]) -> Result<(), KernelError> {
    Hasher::fixed().cr_many(input, out)
}

/// `out[j] = ccr(input[j])` under π.
pub fn ccr_many(input: &[Block], out: &mut [Block]) -> Result<(), KernelError> {
    Hasher::fixed().ccr_many(input, out)
}

/// `out[j] = tccr(input[j], tweaks[j])` under π.
pub fn tccr_many(input: &[Block], tweaks: &[Block], out: &mut [Block]) -> Result<(), KernelError> {
    Hasher::fixed().tccr_many(input, tweaks, out)
}

/// `out[j] = tccr(input[j], base + j)` under π.
pub fn tccr_many_counter(input: &[Block], base: u128, out: &mut [Block]) -> Result<(), KernelError> {
    Hasher::fixed().tccr_many_counter(input, base, out)
}

/// `out[j] = σ(input[j])`.
pub fn sigma_many(input: &[Block], out: &mut [Block]) -> Result<(), KernelError> {
    check_lengths("sigma_many", input.len(), out.len())?;
    for (y, x) in out.iter_mut().zip(input) {
        *y = sigma(*x);
    }
    Ok(())
}

/// Single-block CR; use [`cr_many`] for throughput.
pub fn cr(x: Block) -> Block {
    let mut y = [Block::ZERO];
    mmo_many(fixed_key_aes(), &[x], &mut y, |x| x);
    y[0]
}

/// Single-block CCR; use [`ccr_many`] for throughput.
pub fn ccr(x: Block) -> Block {
    let mut y = [Block::ZERO];
    mmo_many(fixed_key_aes(), &[x], &mut y, sigma);
    y[0]
}

/// Single-block TCCR; use [`tccr_many`] for throughput.
pub fn tccr(x: Block, tweak: Block) -> Block {
    let mut y = [Block::ZERO];
    tmmo_many(fixed_key_aes(), &[x], &mut y, |_| tweak);
    y[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pi(x: Block) -> Block {
        fixed_key_aes().encrypt_block(x)
    }

    fn blocks(v: Vec<u128>) -> Vec<Block> {
        v.into_iter().map(Block::from_u128).collect()
    }

    proptest! {
        #[test]
        fn sigma_is_linear(a in any::<u128>(), b in any::<u128>()) {
            let (a, b) = (Block::from_u128(a), Block::from_u128(b));
            prop_assert_eq!(sigma(a ^ b), sigma(a) ^ sigma(b));
        }

        #[test]
        fn batch_hashes_match_their_definitions(xs in proptest::collection::vec(any::<u128>(), 0..150), base in any::<u64>()) {
            let xs = blocks(xs);
            let mut out = vec![Block::ZERO; xs.len()];
            cr_many(&xs, &mut out).unwrap();
            for (x, y) in xs.iter().zip(&out) { prop_assert_eq!(*y, pi(*x) ^ *x); }
            ccr_many(&xs, &mut out).unwrap();
            for (x, y) in xs.iter().zip(&out) { prop_assert_eq!(*y, pi(sigma(*x)) ^ sigma(*x)); }
            tccr_many_counter(&xs, base as u128, &mut out).unwrap();
            for (j, (x, y)) in xs.iter().zip(&out).enumerate() {
                let i = Block::from_u128(base as u128 + j as u128);
                prop_assert_eq!(*y, pi(pi(*x) ^ i) ^ pi(*x));
                prop_assert_eq!(*y, tccr(*x, i));
            }
            let tweaks: Vec<Block> = (0..xs.len()).map(|j| Block::from_u128(base as u128 + j as u128)).collect();
            let mut out2 = vec![Block::ZERO; xs.len()];
            tccr_many(&xs, &tweaks, &mut out2).unwrap();
            prop_assert_eq!(&out, &out2);
            let mut out3 = vec![Block::ZERO; xs.len()];
            Hasher::fixed().tccr_many_with(&xs, |j| tweaks[j], &mut out3).unwrap();
            prop_assert_eq!(out, out3);
        }
    }

    /// σ(x) ⊕ x must be a bijection for σ to be an orthomorphism. It is linear, so it suffices
    /// that its matrix over GF(2) is invertible: Gaussian elimination on the 128 images of the
    /// unit vectors.
    #[test]
    fn sigma_is_an_orthomorphism() {
        for f in [sigma as fn(Block) -> Block, |x| sigma(x) ^ x] {
            let mut rows: Vec<u128> = (0..128).map(|i| f(Block::from_u128(1u128 << i)).to_u128()).collect();
            let mut rank = 0;
            for bit in 0..128 {
                if let Some(p) = (rank..128).find(|&r| rows[r] >> bit & 1 == 1) {
                    rows.swap(rank, p);
                    for r in 0..128 {
                        if r != rank && rows[r] >> bit & 1 == 1 {
                            rows[r] ^= rows[rank];
                        }
                    }
                    rank += 1;
                }
            }
            assert_eq!(rank, 128);
        }
    }

    #[test]
    fn tweak_ranges_that_would_wrap_are_refused() {
        let mut out = [Block::ZERO; 2];
        assert!(tccr_many_counter(&[Block::ZERO; 2], u128::MAX - 1, &mut out).is_ok());
        assert!(tccr_many_counter(&[], u128::MAX, &mut []).is_ok());
        assert!(matches!(
            tccr_many_counter(&[Block::ZERO; 2], u128::MAX, &mut out),
            Err(KernelError::InvalidDimension { .. })
        ));
    }

    #[test]
    fn tweaks_change_the_hash() {
        let x = Block::from_u128(42);
        assert_ne!(tccr(x, Block::from_u128(0)), tccr(x, Block::from_u128(1)));
        assert_ne!(cr(x), ccr(x));
    }

    #[test]
    fn length_mismatch_is_an_error() {
        let mut out = [Block::ZERO; 2];
        assert!(matches!(cr_many(&[Block::ZERO; 3], &mut out), Err(KernelError::LengthMismatch { .. })));
        assert!(tccr_many(&[Block::ZERO; 2], &[Block::ZERO; 1], &mut out).is_err());
        assert!(cr_many(&[], &mut []).is_ok());
    }
}
