//! The attested channel's key agreement and the sealed seed.
//!
//! The enclave holds an ephemeral X25519 key pair, made inside it from entropy it gathers
//! (`oe_random` in Open Enclave, the OS CSPRNG in simulation); its public key is bound into the
//! evidence through the report data `SHA-256("webmpc/teleport/report-data/v1" ‖ pk)`. The garbler,
//! having verified the evidence, makes its own ephemeral X25519 key, and both derive
//!
//! ```text
//! key = SHA-256("webmpc/teleport/seal/v1" ‖ X25519(shared) ‖ enclave pk ‖ garbler pk ‖ job header)
//! sealed = garbler pk ‖ ChaCha20-Poly1305(key, nonce = 0, ad = job header, seed)
//! ```
//!
//! A zero nonce is safe because each key seals exactly one message (a fresh garbler key per job).
//! The job header as associated data (and in the key) binds the seed to one session, mode and
//! circuit: the enclave refuses it for any other job. A non-contributory shared secret (a
//! low-order garbler key) is refused.

use crate::TeleportError;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::ChaCha20Poly1305;
use sha2::{Digest, Sha256};
use webmpc_core::Block;
use x25519_dalek::{PublicKey, StaticSecret};

/// Bytes of a sealed seed: garbler public key, 16-byte seed, 16-byte tag.
pub const SEALED_LEN: usize = 64;

/// The report data an evidence must carry for the enclave key `pk`.
pub fn report_data(pk: &[u8; 32]) -> [u8; 32] {
    Sha256::new().chain_update(b"webmpc/teleport/report-data/v1").chain_update(pk).finalize().into()
}

fn seal_key(shared: &[u8; 32], enclave_pk: &[u8; 32], garbler_pk: &[u8; 32], job: &[u8]) -> chacha20poly1305::Key {
    let digest = Sha256::new()
        .chain_update(b"webmpc/teleport/seal/v1")
        .chain_update(shared)
        .chain_update(enclave_pk)
        .chain_update(garbler_pk)
        .chain_update((job.len() as u32).to_le_bytes())
        .chain_update(job)
        .finalize();
    chacha20poly1305::Key::from(<[u8; 32]>::from(digest))
}

/// The enclave's ephemeral key pair.
pub struct EnclaveKeys {
    secret: StaticSecret,
    public: [u8; 32],
}

impl EnclaveKeys {
    /// A key pair from 32 bytes of fresh entropy (the caller's CSPRNG: `oe_random` or getrandom).
    pub fn from_entropy(entropy: [u8; 32]) -> Self {
        let secret = StaticSecret::from(entropy);
        let public = PublicKey::from(&secret).to_bytes();
        EnclaveKeys { secret, public }
    }

    /// The public key the evidence binds.
    pub fn public(&self) -> [u8; 32] {
        self.public
    }

    /// The report data for this key (see [`report_data`]).
    pub fn report_data(&self) -> [u8; 32] {
        report_data(&self.public)
    }

    /// Opens a sealed seed for the job with encoding `job`.
    pub fn open(&self, job: &[u8], sealed: &[u8]) -> Result<Block, TeleportError> {
        if sealed.len() != SEALED_LEN {
            return Err(TeleportError::Malformed("sealed seed"));
        }
        let garbler_pk: [u8; 32] = sealed[..32].try_into().expect("32 bytes");
        let shared = self.secret.diffie_hellman(&PublicKey::from(garbler_pk));
        if !shared.was_contributory() {
            return Err(TeleportError::SealOpenFailed);
        }
        let key = seal_key(shared.as_bytes(), &self.public, &garbler_pk, job);
        let nonce = chacha20poly1305::Nonce::default();
        let plain = ChaCha20Poly1305::new(&key)
            .decrypt(&nonce, Payload { msg: &sealed[32..], aad: job })
            .map_err(|_| TeleportError::SealOpenFailed)?;
        let seed: [u8; 16] = plain.as_slice().try_into().map_err(|_| TeleportError::SealOpenFailed)?;
        Ok(Block(seed))
    }
}

/// The garbler's side: seals `seed` to the enclave key `enclave_pk` for the job with encoding
/// `job`, with a fresh X25519 key made from `entropy`.
pub fn seal(enclave_pk: &[u8; 32], job: &[u8], seed: Block, entropy: [u8; 32]) -> Result<[u8; SEALED_LEN], TeleportError> {
    let secret = StaticSecret::from(entropy);
    let garbler_pk = PublicKey::from(&secret).to_bytes();
    let shared = secret.diffie_hellman(&PublicKey::from(*enclave_pk));
    if !shared.was_contributory() {
        return Err(TeleportError::EvidenceRefused(crate::EvidenceRefusal::Invalid));
    }
    let key = seal_key(shared.as_bytes(), enclave_pk, &garbler_pk, job);
    let nonce = chacha20poly1305::Nonce::default();
    let ct = ChaCha20Poly1305::new(&key)
        .encrypt(&nonce, Payload { msg: &seed.0, aad: job })
        .map_err(|_| TeleportError::InvalidArgument("sealing failed".into()))?;
    let mut out = [0u8; SEALED_LEN];
    out[..32].copy_from_slice(&garbler_pk);
    out[32..].copy_from_slice(&ct);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_opens_only_for_the_same_enclave_and_job() {
        let enclave = EnclaveKeys::from_entropy([3; 32]);
        let seed = Block::from_u128(0x1234);
        let sealed = seal(&enclave.public(), b"job-a", seed, [9; 32]).unwrap();
        assert_eq!(enclave.open(b"job-a", &sealed).unwrap(), seed);
        assert_eq!(enclave.open(b"job-b", &sealed).unwrap_err(), TeleportError::SealOpenFailed);
        let other = EnclaveKeys::from_entropy([4; 32]);
        assert_eq!(other.open(b"job-a", &sealed).unwrap_err(), TeleportError::SealOpenFailed);
        let mut flipped = sealed;
        flipped[40] ^= 1;
        assert_eq!(enclave.open(b"job-a", &flipped).unwrap_err(), TeleportError::SealOpenFailed);
        // A low-order garbler key (all zero) gives a non-contributory secret.
        let mut zero = sealed;
        zero[..32].fill(0);
        assert_eq!(enclave.open(b"job-a", &zero).unwrap_err(), TeleportError::SealOpenFailed);
        assert!(enclave.open(b"job-a", &sealed[..63]).is_err());
    }
}
