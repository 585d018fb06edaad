//! The attested channel's key agreement, the sealed secrets of both parties, and the enclave's
//! sealed replies to the evaluator.
//!
//! The enclave holds an ephemeral X25519 key pair, made inside it from entropy it gathers
//! (`oe_random` in Open Enclave, the OS CSPRNG in simulation), for the lifetime of one attested
//! session (one enclave process or instance, any number of jobs); its public key is bound into the
//! evidence ([`crate::evidence::report_data`]). Each party, having verified the evidence once,
//! makes one X25519 key of its own for that session ([`Sealer`]): the garbler seals its seed with
//! it, the evaluator its own input to the machine (k2 for ROT, x2⁰ for GC). **No secret of either
//! party crosses the host or the network in the clear**: the enclave-server, its host and anyone on
//! the link see only ciphertexts. For each job both ends derive
//!
//! ```text
//! key   = SHA-256("webmpc/teleport/seal/v2"  ‖ role ‖ X25519(shared) ‖ enclave pk ‖ party pk ‖ u32 len ‖ job header)
//! sealed = party pk ‖ ChaCha20-Poly1305(key, nonce = 0, ad = job header, secret)
//! reply = SHA-256("webmpc/teleport/reply/v1" ‖ role ‖ X25519(shared) ‖ enclave pk ‖ party pk ‖ u32 len ‖ job header)
//! ```
//!
//! `role` is 0 for the garbler and 1 for the evaluator, so a secret sealed by one role never opens
//! as the other's (a relayed garbler seed cannot pose as the evaluator's k2, or back). The *reply*
//! key seals what the enclave sends back to that party and must hide from the host: the
//! evaluator's x2⁰ labels and σ's (with the seed they would reveal x2⁰) and its ROT outputs
//! `R_i^{b_i}`, each message under its own nonce (message type ‖ counter, [`ReplyKey`]).
//!
//! So the Diffie–Hellman and the evidence check are paid once per session, and each job costs
//! two SHA-256 and one AEAD per message. A zero nonce for the sealed secret is safe because each
//! key seals exactly one message: the key hashes the job header, whose session id is unique per
//! job — a [`Sealer`] refuses to seal a second secret under a header it has sealed before, and
//! the enclave refuses a job id it has seen before in the session ([`crate::machine`]), so a
//! sealed secret can be neither re-encrypted nor replayed. The job header as associated data (and
//! in the key) binds the secret to one session, mode and circuit. A non-contributory shared secret
//! (a low-order key on either side) is refused. Every derived key and opened secret is wiped when
//! dropped.

use crate::TeleportError;
use alloc::collections::BTreeSet;
use alloc::vec::Vec;
use chacha20poly1305::aead::{Aead, AeadInPlace, KeyInit, Payload};
use chacha20poly1305::ChaCha20Poly1305;
use sha2::{Digest, Sha256};
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::{Zeroize, Zeroizing};

/// Who sealed a secret: part of every key derivation, so one role's secret never opens as the
/// other's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The garbler (P1, ROT sender): its seed.
    Garbler = 0,
    /// The evaluator (P2, ROT receiver): k2 or x2⁰.
    Evaluator = 1,
}

/// Bytes sealing adds to a secret: the party's public key and the AEAD tag.
pub const SEAL_OVERHEAD: usize = 32 + TAG_LEN;
/// Bytes of a sealed 16-byte seed (the garbler's `GarblerJob`).
pub const SEALED_LEN: usize = 16 + SEAL_OVERHEAD;
/// Bytes a sealed reply adds (the AEAD tag).
pub const TAG_LEN: usize = 16;

fn derive(label: &[u8], role: Role, shared: &[u8; 32], enclave_pk: &[u8; 32], party_pk: &[u8; 32], job: &[u8]) -> ChaCha20Poly1305 {
    let mut digest: [u8; 32] = Sha256::new()
        .chain_update(label)
        .chain_update([role as u8])
        .chain_update(shared)
        .chain_update(enclave_pk)
        .chain_update(party_pk)
        .chain_update((job.len() as u32).to_le_bytes())
        .chain_update(job)
        .finalize()
        .into();
    let aead = ChaCha20Poly1305::new(&digest.into());
    digest.zeroize();
    aead
}

fn seal_aead(role: Role, shared: &[u8; 32], enclave_pk: &[u8; 32], party_pk: &[u8; 32], job: &[u8]) -> ChaCha20Poly1305 {
    derive(b"webmpc/teleport/seal/v2", role, shared, enclave_pk, party_pk, job)
}

fn reply_key(role: Role, shared: &[u8; 32], enclave_pk: &[u8; 32], party_pk: &[u8; 32], job: &[u8]) -> ReplyKey {
    ReplyKey(derive(b"webmpc/teleport/reply/v1", role, shared, enclave_pk, party_pk, job))
}

/// The key of one job's sealed replies from the enclave to one party. Each message is sealed
/// under the nonce `counter (u64 LE) ‖ message type ‖ 0 0 0`, with the message's clear header as
/// associated data: the enclave numbers the messages of one type within a job (input-label part
/// `k`, ROT chunk `j`), so no nonce repeats under a key, and a reply cannot be replayed as another
/// message or at another position.
pub struct ReplyKey(ChaCha20Poly1305);

fn reply_nonce(kind: u8, counter: u64) -> chacha20poly1305::Nonce {
    let mut n = [0u8; 12];
    n[..8].copy_from_slice(&counter.to_le_bytes());
    n[8] = kind;
    n.into()
}

impl ReplyKey {
    /// Seals `buf[at..]` in place (appends the tag); `buf[..at]` is the associated data.
    pub fn seal(&self, kind: u8, counter: u64, buf: &mut Vec<u8>, at: usize) {
        let (ad, msg) = buf.split_at_mut(at);
        let tag = self.0.encrypt_in_place_detached(&reply_nonce(kind, counter), ad, msg).expect("a reply fits the AEAD's length limit");
        buf.extend_from_slice(&tag);
    }

    /// Opens `ct` (ciphertext and tag) sealed with associated data `ad`; a forged, edited,
    /// misplaced or replayed reply fails with `what` as [`TeleportError::Malformed`].
    pub fn open(&self, kind: u8, counter: u64, ad: &[u8], ct: &[u8], what: &'static str) -> Result<Zeroizing<Vec<u8>>, TeleportError> {
        self.0
            .decrypt(&reply_nonce(kind, counter), Payload { msg: ct, aad: ad })
            .map(Zeroizing::new)
            .map_err(|_| TeleportError::Malformed(what))
    }
}

/// The enclave's ephemeral key pair (and, per role, the shared secret with the last party key it
/// met, so a session's jobs pay the Diffie–Hellman once).
pub struct EnclaveKeys {
    secret: StaticSecret,
    public: [u8; 32],
    last: [Option<([u8; 32], [u8; 32])>; 2],
}

impl Drop for EnclaveKeys {
    fn drop(&mut self) {
        for (_, shared) in self.last.iter_mut().flatten() {
            shared.zeroize();
        }
    }
}

impl EnclaveKeys {
    /// A key pair from 32 bytes of fresh entropy (the caller's CSPRNG: `oe_random` or getrandom).
    pub fn from_entropy(entropy: [u8; 32]) -> Self {
        let secret = StaticSecret::from(entropy);
        let public = PublicKey::from(&secret).to_bytes();
        EnclaveKeys { secret, public, last: [None, None] }
    }

    /// The public key the evidence binds.
    pub fn public(&self) -> [u8; 32] {
        self.public
    }

    /// Opens the secret `role` sealed for the job with encoding `job`; also returns the key of the
    /// enclave's sealed replies to that party for this job.
    pub fn open(&mut self, role: Role, job: &[u8], sealed: &[u8]) -> Result<(Zeroizing<Vec<u8>>, ReplyKey), TeleportError> {
        if sealed.len() < SEAL_OVERHEAD {
            return Err(TeleportError::Malformed("sealed secret"));
        }
        let party_pk: [u8; 32] = sealed[..32].try_into().expect("32 bytes");
        let slot = &mut self.last[role as usize];
        let shared = match slot {
            Some((pk, shared)) if *pk == party_pk => *shared,
            _ => {
                let shared = self.secret.diffie_hellman(&PublicKey::from(party_pk));
                if !shared.was_contributory() {
                    return Err(TeleportError::SealOpenFailed);
                }
                if let Some((_, old)) = slot {
                    old.zeroize();
                }
                *slot = Some((party_pk, *shared.as_bytes()));
                *shared.as_bytes()
            }
        };
        let shared = Zeroizing::new(shared);
        let plain = seal_aead(role, &shared, &self.public, &party_pk, job)
            .decrypt(&chacha20poly1305::Nonce::default(), Payload { msg: &sealed[32..], aad: job })
            .map(Zeroizing::new)
            .map_err(|_| TeleportError::SealOpenFailed)?;
        Ok((plain, reply_key(role, &shared, &self.public, &party_pk, job)))
    }
}

/// One party's side of one attested session: one X25519 key, one Diffie–Hellman with the enclave
/// key the evidence bound, then one sealed secret per job (and that job's reply key).
pub struct Sealer {
    role: Role,
    enclave_pk: [u8; 32],
    party_pk: [u8; 32],
    shared: [u8; 32],
    sealed: BTreeSet<[u8; 32]>,
}

impl Drop for Sealer {
    fn drop(&mut self) {
        self.shared.zeroize();
    }
}

/// Most jobs one [`Sealer`] (and one enclave session) seals: the job ids it keeps to refuse a
/// repeat stay bounded (32 bytes each). A longer session re-attests.
pub const MAX_SESSION_JOBS: usize = 1 << 20;

impl Sealer {
    /// A sealer for `role` towards `enclave_pk` (checked by the caller against the evidence) with
    /// a fresh X25519 key made from `entropy` (32 bytes from the platform CSPRNG).
    pub fn new(role: Role, enclave_pk: &[u8; 32], entropy: [u8; 32]) -> Result<Self, TeleportError> {
        let secret = StaticSecret::from(entropy);
        let party_pk = PublicKey::from(&secret).to_bytes();
        let shared = secret.diffie_hellman(&PublicKey::from(*enclave_pk));
        if !shared.was_contributory() {
            return Err(TeleportError::EvidenceRefused(crate::EvidenceRefusal::Invalid));
        }
        Ok(Sealer { role, enclave_pk: *enclave_pk, party_pk, shared: *shared.as_bytes(), sealed: BTreeSet::new() })
    }

    /// The enclave key this sealer seals to.
    pub fn enclave_public(&self) -> [u8; 32] {
        self.enclave_pk
    }

    /// Seals `secret` for the job with encoding `job`: `party pk ‖ ciphertext ‖ tag`. Refuses a
    /// job whose session id it sealed for before (a second secret under the same key and nonce
    /// would break the AEAD).
    pub fn seal(&mut self, job: &[u8], secret: &[u8]) -> Result<Vec<u8>, TeleportError> {
        let sid: [u8; 32] = crate::JobHeader::decode(job)?.sid;
        if self.sealed.contains(&sid) {
            return Err(TeleportError::InvalidArgument("a secret was already sealed for this job id".into()));
        }
        if self.sealed.len() >= MAX_SESSION_JOBS {
            return Err(TeleportError::TooLarge {
                what: "jobs in one attested session",
                got: self.sealed.len() as u64 + 1,
                limit: MAX_SESSION_JOBS as u64,
            });
        }
        let mut out = Vec::with_capacity(secret.len() + SEAL_OVERHEAD);
        out.extend_from_slice(&self.party_pk);
        out.extend_from_slice(secret);
        let tag = seal_aead(self.role, &self.shared, &self.enclave_pk, &self.party_pk, job)
            .encrypt_in_place_detached(&chacha20poly1305::Nonce::default(), job, &mut out[32..])
            .map_err(|_| TeleportError::InvalidArgument("sealing failed".into()))?;
        out.extend_from_slice(&tag);
        self.sealed.insert(sid);
        Ok(out)
    }

    /// The key of the enclave's sealed replies to this party for the job `job`.
    pub fn reply_key(&self, job: &[u8]) -> ReplyKey {
        reply_key(self.role, &self.shared, &self.enclave_pk, &self.party_pk, job)
    }
}

/// Seals one `secret` of `role` for one job with a fresh key made from `entropy`: a one-job
/// [`Sealer`] (tests and one-shot tools).
pub fn seal(role: Role, enclave_pk: &[u8; 32], job: &[u8], secret: &[u8], entropy: [u8; 32]) -> Result<Vec<u8>, TeleportError> {
    Sealer::new(role, enclave_pk, entropy)?.seal(job, secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{JobHeader, JobKind, Mode};

    fn job(sid: u8) -> alloc::vec::Vec<u8> {
        JobHeader { sid: [sid; 32], mode: Mode::SemiHonest, kind: JobKind::Rot { count: 1 } }.encode()
    }

    #[test]
    fn seal_opens_only_for_the_same_enclave_job_and_role() {
        let (a, b) = (job(1), job(2));
        let mut enclave = EnclaveKeys::from_entropy([3; 32]);
        let seed = [0x34u8; 16];
        let sealed = seal(Role::Garbler, &enclave.public(), &a, &seed, [9; 32]).unwrap();
        assert_eq!(sealed.len(), SEALED_LEN);
        assert_eq!(&enclave.open(Role::Garbler, &a, &sealed).unwrap().0[..], &seed);
        assert_eq!(enclave.open(Role::Garbler, &b, &sealed).err().unwrap(), TeleportError::SealOpenFailed);
        // The evaluator's role derives other keys: a garbler's seed never opens as its input.
        assert_eq!(enclave.open(Role::Evaluator, &a, &sealed).err().unwrap(), TeleportError::SealOpenFailed);
        let mut other = EnclaveKeys::from_entropy([4; 32]);
        assert_eq!(other.open(Role::Garbler, &a, &sealed).err().unwrap(), TeleportError::SealOpenFailed);
        let mut flipped = sealed.clone();
        flipped[40] ^= 1;
        assert_eq!(enclave.open(Role::Garbler, &a, &flipped).err().unwrap(), TeleportError::SealOpenFailed);
        // A low-order party key (all zero) gives a non-contributory secret.
        let mut zero = sealed.clone();
        zero[..32].fill(0);
        assert_eq!(enclave.open(Role::Garbler, &a, &zero).err().unwrap(), TeleportError::SealOpenFailed);
        assert!(enclave.open(Role::Garbler, &a, &sealed[..63]).is_err());
        assert!(enclave.open(Role::Garbler, &a, &sealed[..SEAL_OVERHEAD - 1]).is_err());
        assert!(seal(Role::Garbler, &[0; 32], &a, &seed, [9; 32]).is_err(), "a low-order enclave key is refused too");
        // Secrets of any length (the evaluator's x2⁰ is as long as its input).
        let long = vec![0xa5u8; 1000];
        let sealed = seal(Role::Evaluator, &enclave.public(), &a, &long, [5; 32]).unwrap();
        assert_eq!(sealed.len(), 1000 + SEAL_OVERHEAD);
        assert!(!sealed.windows(16).any(|w| w == &long[..16]), "no plaintext on the wire");
        assert_eq!(&enclave.open(Role::Evaluator, &a, &sealed).unwrap().0[..], &long[..]);
    }

    #[test]
    fn one_sealer_serves_many_jobs_but_seals_each_job_once() {
        let mut enclave = EnclaveKeys::from_entropy([3; 32]);
        let mut sealer = Sealer::new(Role::Garbler, &enclave.public(), [7; 32]).unwrap();
        let s1 = sealer.seal(&job(1), &[1; 16]).unwrap();
        let s2 = sealer.seal(&job(2), &[2; 16]).unwrap();
        assert_eq!(s1[..32], s2[..32], "one party key per session");
        assert_eq!(&enclave.open(Role::Garbler, &job(1), &s1).unwrap().0[..], &[1; 16]);
        assert_eq!(&enclave.open(Role::Garbler, &job(2), &s2).unwrap().0[..], &[2; 16]);
        // The second secret under job 1's key and nonce would leak their XOR.
        assert_eq!(sealer.seal(&job(1), &[3; 16]).unwrap_err().code(), "INVALID_ARGUMENT");
        assert!(sealer.seal(b"not a job", &[0; 16]).is_err());
    }

    #[test]
    fn replies_open_only_with_the_party_key_at_their_own_place() {
        let mut enclave = EnclaveKeys::from_entropy([3; 32]);
        let mut sealer = Sealer::new(Role::Evaluator, &enclave.public(), [7; 32]).unwrap();
        let sealed = sealer.seal(&job(1), &[9; 16]).unwrap();
        let (_, key) = enclave.open(Role::Evaluator, &job(1), &sealed).unwrap();
        let mut msg = b"head".to_vec();
        msg.extend_from_slice(&[0x77; 40]);
        key.seal(0x85, 3, &mut msg, 4);
        assert_eq!(msg.len(), 4 + 40 + TAG_LEN);
        assert!(!msg.windows(8).any(|w| w == [0x77; 8]), "the reply is not in the clear");
        let mine = sealer.reply_key(&job(1));
        assert_eq!(&mine.open(0x85, 3, b"head", &msg[4..], "reply").unwrap()[..], &[0x77; 40]);
        // Another position, another message type, another header or another job: refused.
        assert!(mine.open(0x85, 4, b"head", &msg[4..], "reply").is_err());
        assert!(mine.open(0x82, 3, b"head", &msg[4..], "reply").is_err());
        assert!(mine.open(0x85, 3, b"heaD", &msg[4..], "reply").is_err());
        assert!(sealer.reply_key(&job(2)).open(0x85, 3, b"head", &msg[4..], "reply").is_err());
        let mut edited = msg.clone();
        edited[10] ^= 1;
        assert_eq!(mine.open(0x85, 3, b"head", &edited[4..], "reply").unwrap_err(), TeleportError::Malformed("reply"));
    }
}
