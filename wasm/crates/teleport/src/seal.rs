//! The attested channel's key agreement and the sealed seed.
//!
//! The enclave holds an ephemeral X25519 key pair, made inside it from entropy it gathers
//! (`oe_random` in Open Enclave, the OS CSPRNG in simulation), for the lifetime of one attested
//! session (one enclave process or instance, any number of jobs); its public key is bound into the
//! evidence through the report data `SHA-256("webmpc/teleport/report-data/v1" ‖ pk)`. The garbler,
//! having verified the evidence once, makes one X25519 key of its own for that session
//! ([`Sealer`]), and for each job both derive
//!
//! ```text
//! key = SHA-256("webmpc/teleport/seal/v1" ‖ X25519(shared) ‖ enclave pk ‖ garbler pk ‖ job header)
//! sealed = garbler pk ‖ ChaCha20-Poly1305(key, nonce = 0, ad = job header, seed)
//! ```
//!
//! So the Diffie–Hellman and the evidence check are paid once per session, and each job costs
//! one SHA-256 and one 16-byte AEAD. A zero nonce is safe because each key seals exactly one
//! message: the key hashes the job header, whose session id is unique per job — the [`Sealer`]
//! refuses to seal a second seed under a header it has sealed before, and the enclave refuses a
//! job id it has seen before in the session ([`crate::machine`]), so a sealed seed can be neither
//! re-encrypted nor replayed. The job header as associated data (and in the key) binds the seed
//! to one session, mode and circuit: the enclave refuses it for any other job. A
//! non-contributory shared secret (a low-order key on either side) is refused.

use crate::TeleportError;
use alloc::collections::BTreeSet;
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

/// The enclave's ephemeral key pair (and the shared secret with the last garbler key it met, so a
/// session's jobs pay the Diffie–Hellman once).
pub struct EnclaveKeys {
    secret: StaticSecret,
    public: [u8; 32],
    last: Option<([u8; 32], [u8; 32])>,
}

impl Drop for EnclaveKeys {
    fn drop(&mut self) {
        if let Some((_, shared)) = &mut self.last {
            shared.fill(0);
        }
    }
}

impl EnclaveKeys {
    /// A key pair from 32 bytes of fresh entropy (the caller's CSPRNG: `oe_random` or getrandom).
    pub fn from_entropy(entropy: [u8; 32]) -> Self {
        let secret = StaticSecret::from(entropy);
        let public = PublicKey::from(&secret).to_bytes();
        EnclaveKeys { secret, public, last: None }
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
    pub fn open(&mut self, job: &[u8], sealed: &[u8]) -> Result<Block, TeleportError> {
        if sealed.len() != SEALED_LEN {
            return Err(TeleportError::Malformed("sealed seed"));
        }
        let garbler_pk: [u8; 32] = sealed[..32].try_into().expect("32 bytes");
        let shared = match self.last {
            Some((pk, shared)) if pk == garbler_pk => shared,
            _ => {
                let shared = self.secret.diffie_hellman(&PublicKey::from(garbler_pk));
                if !shared.was_contributory() {
                    return Err(TeleportError::SealOpenFailed);
                }
                let bytes = *shared.as_bytes();
                self.last = Some((garbler_pk, bytes));
                bytes
            }
        };
        let key = seal_key(&shared, &self.public, &garbler_pk, job);
        let nonce = chacha20poly1305::Nonce::default();
        let plain = ChaCha20Poly1305::new(&key)
            .decrypt(&nonce, Payload { msg: &sealed[32..], aad: job })
            .map_err(|_| TeleportError::SealOpenFailed)?;
        let seed: [u8; 16] = plain.as_slice().try_into().map_err(|_| TeleportError::SealOpenFailed)?;
        Ok(Block(seed))
    }
}

/// The garbler's side of one attested session: one X25519 key, one Diffie–Hellman with the
/// enclave key the evidence bound, then one sealed seed per job.
pub struct Sealer {
    enclave_pk: [u8; 32],
    garbler_pk: [u8; 32],
    shared: [u8; 32],
    sealed: BTreeSet<[u8; 32]>,
}

impl Drop for Sealer {
    fn drop(&mut self) {
        self.shared.fill(0);
    }
}

/// Most jobs one [`Sealer`] (and one enclave session) seals: the job ids it keeps to refuse a
/// repeat stay bounded (32 bytes each). A longer session re-attests.
pub const MAX_SESSION_JOBS: usize = 1 << 20;

impl Sealer {
    /// A sealer towards `enclave_pk` (checked by the caller against the evidence) with a fresh
    /// X25519 key made from `entropy` (32 bytes from the platform CSPRNG).
    pub fn new(enclave_pk: &[u8; 32], entropy: [u8; 32]) -> Result<Self, TeleportError> {
        let secret = StaticSecret::from(entropy);
        let garbler_pk = PublicKey::from(&secret).to_bytes();
        let shared = secret.diffie_hellman(&PublicKey::from(*enclave_pk));
        if !shared.was_contributory() {
            return Err(TeleportError::EvidenceRefused(crate::EvidenceRefusal::Invalid));
        }
        Ok(Sealer { enclave_pk: *enclave_pk, garbler_pk, shared: *shared.as_bytes(), sealed: BTreeSet::new() })
    }

    /// The enclave key this sealer seals to.
    pub fn enclave_public(&self) -> [u8; 32] {
        self.enclave_pk
    }

    /// Seals `seed` for the job with encoding `job`. Refuses a job whose session id it sealed for
    /// before (a second seed under the same key and nonce would break the AEAD).
    pub fn seal(&mut self, job: &[u8], seed: Block) -> Result<[u8; SEALED_LEN], TeleportError> {
        let sid: [u8; 32] = crate::JobHeader::decode(job)?.sid;
        if self.sealed.contains(&sid) {
            return Err(TeleportError::InvalidArgument("a seed was already sealed for this job id".into()));
        }
        if self.sealed.len() >= MAX_SESSION_JOBS {
            return Err(TeleportError::TooLarge {
                what: "jobs in one attested session",
                got: self.sealed.len() as u64 + 1,
                limit: MAX_SESSION_JOBS as u64,
            });
        }
        let key = seal_key(&self.shared, &self.enclave_pk, &self.garbler_pk, job);
        let nonce = chacha20poly1305::Nonce::default();
        let ct = ChaCha20Poly1305::new(&key)
            .encrypt(&nonce, Payload { msg: &seed.0, aad: job })
            .map_err(|_| TeleportError::InvalidArgument("sealing failed".into()))?;
        self.sealed.insert(sid);
        let mut out = [0u8; SEALED_LEN];
        out[..32].copy_from_slice(&self.garbler_pk);
        out[32..].copy_from_slice(&ct);
        Ok(out)
    }
}

/// Seals one `seed` for one job with a fresh garbler key made from `entropy`: a one-job
/// [`Sealer`] (tests and one-shot tools).
pub fn seal(enclave_pk: &[u8; 32], job: &[u8], seed: Block, entropy: [u8; 32]) -> Result<[u8; SEALED_LEN], TeleportError> {
    Sealer::new(enclave_pk, entropy)?.seal(job, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{JobHeader, JobKind, Mode};

    fn job(sid: u8) -> alloc::vec::Vec<u8> {
        JobHeader { sid: [sid; 32], mode: Mode::SemiHonest, kind: JobKind::Rot { count: 1 } }.encode()
    }

    #[test]
    fn seal_opens_only_for_the_same_enclave_and_job() {
        let (a, b) = (job(1), job(2));
        let mut enclave = EnclaveKeys::from_entropy([3; 32]);
        let seed = Block::from_u128(0x1234);
        let sealed = seal(&enclave.public(), &a, seed, [9; 32]).unwrap();
        assert_eq!(enclave.open(&a, &sealed).unwrap(), seed);
        assert_eq!(enclave.open(&b, &sealed).unwrap_err(), TeleportError::SealOpenFailed);
        let mut other = EnclaveKeys::from_entropy([4; 32]);
        assert_eq!(other.open(&a, &sealed).unwrap_err(), TeleportError::SealOpenFailed);
        let mut flipped = sealed;
        flipped[40] ^= 1;
        assert_eq!(enclave.open(&a, &flipped).unwrap_err(), TeleportError::SealOpenFailed);
        // A low-order garbler key (all zero) gives a non-contributory secret.
        let mut zero = sealed;
        zero[..32].fill(0);
        assert_eq!(enclave.open(&a, &zero).unwrap_err(), TeleportError::SealOpenFailed);
        assert!(enclave.open(&a, &sealed[..63]).is_err());
        assert!(seal(&[0; 32], &a, seed, [9; 32]).is_err(), "a low-order enclave key is refused too");
    }

    #[test]
    fn one_sealer_serves_many_jobs_but_seals_each_job_once() {
        let mut enclave = EnclaveKeys::from_entropy([3; 32]);
        let mut sealer = Sealer::new(&enclave.public(), [7; 32]).unwrap();
        let s1 = sealer.seal(&job(1), Block::from_u128(1)).unwrap();
        let s2 = sealer.seal(&job(2), Block::from_u128(2)).unwrap();
        assert_eq!(s1[..32], s2[..32], "one garbler key per session");
        assert_eq!(enclave.open(&job(1), &s1).unwrap(), Block::from_u128(1));
        assert_eq!(enclave.open(&job(2), &s2).unwrap(), Block::from_u128(2));
        // The second seed under job 1's key and nonce would leak seed ⊕ seed'.
        assert_eq!(sealer.seal(&job(1), Block::from_u128(3)).unwrap_err().code(), "INVALID_ARGUMENT");
        assert!(sealer.seal(b"not a job", Block::ZERO).is_err());
    }
}
