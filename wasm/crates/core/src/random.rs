//! The only source of fresh randomness in webmpc: the platform CSPRNG (`getrandom(2)` natively,
//! `crypto.getRandomValues` in browsers and Node through getrandom's Wasm JS backend).

use crate::{Block, KernelError};

/// Fills `out` from the platform CSPRNG.
pub fn fill(out: &mut [u8]) -> Result<(), KernelError> {
    getrandom::fill(out).map_err(|e| KernelError::Entropy(e.to_string()))
}

/// A uniformly random block from the platform CSPRNG.
pub fn random_block() -> Result<Block, KernelError> {
    let mut b = Block::ZERO;
    fill(&mut b.0)?;
    Ok(b)
}

#[cfg(test)]
mod tests {
    #[test]
    fn fresh_blocks_differ() {
        // A collision of two 128-bit CSPRNG outputs would mean the source is broken.
        assert_ne!(super::random_block().unwrap(), super::random_block().unwrap());
    }
}
