//! Hash commitments: `c = SHA-256(domain, label, r, value)` with a fresh 128-bit random `r`.
//!
//! Hiding because `r` is uniform and SHA-256 is modelled as a random oracle (the paper's proofs
//! already work in the random-oracle model); binding by collision resistance. The `label` names
//! the protocol step and the committing party, so a commitment cannot be replayed at another step
//! or passed off as another party's.

use sha2::{Digest, Sha256};
use webmpc_core::{random, KernelError};

/// Bytes of a commitment.
pub const COMMITMENT_LEN: usize = 32;
/// Bytes of the randomness inside an opening.
pub const NONCE_LEN: usize = 16;

fn digest(label: &[u8], nonce: &[u8; NONCE_LEN], value: &[u8]) -> [u8; COMMITMENT_LEN] {
    let mut h = Sha256::new();
    h.update(b"webmpc/authgc/commit/v1");
    h.update((label.len() as u64).to_le_bytes());
    h.update(label);
    h.update(nonce);
    h.update((value.len() as u64).to_le_bytes());
    h.update(value);
    h.finalize().into()
}

/// Commits to `value`: returns the commitment and the opening (`nonce ‖ value`).
pub fn commit(label: &[u8], value: &[u8]) -> Result<([u8; COMMITMENT_LEN], Vec<u8>), KernelError> {
    let mut nonce = [0u8; NONCE_LEN];
    random::fill(&mut nonce)?;
    let c = digest(label, &nonce, value);
    let mut opening = Vec::with_capacity(NONCE_LEN + value.len());
    opening.extend_from_slice(&nonce);
    opening.extend_from_slice(value);
    Ok((c, opening))
}

/// Checks `opening` (as made by [`commit`]) against `commitment`; returns the committed value.
pub fn verify<'a>(label: &[u8], commitment: &[u8], opening: &'a [u8]) -> Option<&'a [u8]> {
    if commitment.len() != COMMITMENT_LEN || opening.len() < NONCE_LEN {
        return None;
    }
    let (nonce, value) = opening.split_at(NONCE_LEN);
    let nonce: &[u8; NONCE_LEN] = nonce.try_into().expect("split at NONCE_LEN");
    let want = digest(label, nonce, value);
    // Commitments are public; a plain comparison leaks nothing secret.
    (want[..] == commitment[..]).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_only_what_was_committed_under_its_label() {
        let (c, o) = commit(b"step/1", b"hello").unwrap();
        assert_eq!(verify(b"step/1", &c, &o), Some(&b"hello"[..]));
        assert_eq!(verify(b"step/2", &c, &o), None, "other label");
        let mut forged = o.clone();
        *forged.last_mut().unwrap() ^= 1;
        assert_eq!(verify(b"step/1", &c, &forged), None, "other value");
        assert_eq!(verify(b"step/1", &c, &o[..NONCE_LEN - 1]), None, "truncated");
        let (c2, o2) = commit(b"step/1", b"hello").unwrap();
        assert_ne!(c, c2, "fresh randomness each time");
        assert_ne!(o, o2);
    }
}
