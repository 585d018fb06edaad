//! A PRG: AES-128 in counter mode keyed by a seed. Deterministic from the seed (parties expand
//! shared or committed seeds into long correlated strings), and seedable from the platform CSPRNG.

use crate::aes::Aes128;
use crate::{Block, KernelError};
use alloc::boxed::Box;

/// Blocks generated per refill of the byte buffer: one bitsliced step's worth times eight.
const BUFFER_BLOCKS: usize = 64;

/// AES-CTR stream. The stream is a pure function of the seed: how it is consumed (blocks or
/// bytes, in whatever split) does not change it.
pub struct Prg {
    aes: Aes128,
    counter: u128,
    /// Boxed so that moving a `Prg` does not copy unread keystream around the stack.
    buffer: Box<[Block; BUFFER_BLOCKS]>,
    /// Bytes of `buffer` already handed out.
    used: usize,
}

impl Prg {
    /// The stream for `seed`: block k is AES_seed(k) with k as a little-endian 128-bit integer.
    pub fn from_seed(seed: Block) -> Self {
        Prg {
            aes: Aes128::new(seed),
            counter: 0,
            buffer: Box::new([Block::ZERO; BUFFER_BLOCKS]),
            used: BUFFER_BLOCKS * 16,
        }
    }

    /// Parses a 16-byte seed.
    pub fn from_seed_bytes(seed: &[u8]) -> Result<Self, KernelError> {
        Ok(Self::from_seed(crate::error::one_block("PRG seed", seed)?))
    }

    /// A PRG seeded from the platform CSPRNG.
    #[cfg(feature = "std")]
    pub fn from_entropy() -> Result<Self, KernelError> {
        Ok(Self::from_seed(crate::random::random_block()?))
    }

    /// Writes the next `out.len()` keystream blocks into `out`.
    fn keystream_into(aes: &Aes128, counter: &mut u128, out: &mut [Block]) {
        for b in out.iter_mut() {
            *b = Block::from_u128(*counter);
            // 2^128 blocks are out of reach, so the counter never wraps in practice.
            *counter = counter.wrapping_add(1);
        }
        aes.encrypt_blocks(out);
    }

    /// Fills `out` with the next bytes of the stream.
    pub fn fill_bytes(&mut self, mut out: &mut [u8]) {
        // Drain what is left of the buffer first, so the stream is split-independent.
        let buffered = Block::slice_as_bytes(&self.buffer[..]);
        let take = out.len().min(buffered.len() - self.used);
        out[..take].copy_from_slice(&buffered[self.used..self.used + take]);
        self.used += take;
        out = &mut out[take..];
        // Whole blocks go straight into the output (Block has alignment 1, so this never copies).
        let whole = out.len() / 16 * 16;
        let (direct, rest) = out.split_at_mut(whole);
        Self::keystream_into(
            &self.aes,
            &mut self.counter,
            Block::slice_from_bytes_mut(direct).expect("multiple of 16"),
        );
        if !rest.is_empty() {
            Self::keystream_into(&self.aes, &mut self.counter, &mut self.buffer[..]);
            rest.copy_from_slice(&Block::slice_as_bytes(&self.buffer[..])[..rest.len()]);
            self.used = rest.len();
        }
    }

    /// Fills `out` with the next blocks of the stream.
    pub fn fill_blocks(&mut self, out: &mut [Block]) {
        self.fill_bytes(Block::slice_as_bytes_mut(out));
    }

    /// The next block of the stream.
    pub fn next_block(&mut self) -> Block {
        let mut b = [Block::ZERO];
        self.fill_blocks(&mut b);
        b[0]
    }
}

impl Drop for Prg {
    fn drop(&mut self) {
        Block::wipe(&mut self.buffer[..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stream_is_aes_ctr() {
        let seed = Block::from_u128(7);
        let mut prg = Prg::from_seed(seed);
        let aes = Aes128::new(seed);
        for k in 0..20u128 {
            assert_eq!(prg.next_block(), aes.encrypt_block(Block::from_u128(k)));
        }
    }

    proptest! {
        #[test]
        fn stream_does_not_depend_on_how_it_is_read(seed in any::<u128>(), cuts in proptest::collection::vec(0usize..1100, 0..12)) {
            let total: usize = cuts.iter().sum();
            let mut whole = vec![0u8; total];
            Prg::from_seed(Block::from_u128(seed)).fill_bytes(&mut whole);
            let mut pieces = Vec::with_capacity(total);
            let mut prg = Prg::from_seed(Block::from_u128(seed));
            for c in cuts {
                let mut p = vec![0u8; c];
                prg.fill_bytes(&mut p);
                pieces.extend_from_slice(&p);
            }
            prop_assert_eq!(whole, pieces);
        }
    }

    #[test]
    fn seeds_give_different_streams() {
        let mut a = Prg::from_seed(Block::from_u128(1));
        let mut b = Prg::from_seed(Block::from_u128(2));
        assert_ne!(a.next_block(), b.next_block());
        let mut e1 = Prg::from_entropy().unwrap();
        let mut e2 = Prg::from_entropy().unwrap();
        assert_ne!(e1.next_block(), e2.next_block());
        assert!(Prg::from_seed_bytes(&[0u8; 3]).is_err());
    }
}
