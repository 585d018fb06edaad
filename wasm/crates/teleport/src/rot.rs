//! Random-OT teleportation (Lu et al. Fig. 4 and the prose of §4.1), the pure parts: M^ROT, the
//! sender's (P1) and the receiver's (P2) computations, σ/τ and P2's check.
//!
//! * P1 picks a seed `k1`; `R_i^b = PRF_k1(i, b) = AES_k1(2i + b)` (the [`Prg`] stream of `k1`,
//!   read at random positions).
//! * P2 picks a seed `k2`; its choice bits are `b = PRG(k2)`: bit `i` is bit `i mod 128` of
//!   `AES_k2(⌊i/128⌋)`.
//! * M^ROT, given both seeds, returns `R_i^{b_i}` to P2 (malicious mode: also `σ_i^{1−b_i}`).
//!
//! Semi-honest mode: the outputs are `m_i^b = R_i^b`. The only P1↔P2 traffic is the job header.
//!
//! Malicious mode: `σ_i^b = H(R_i^b, (i, b, "σ"))` and the outputs are `m_i^b = H(R_i^b, (i, b,
//! "out"))`, with `H` the TCCR hash (TMMO) under the job's tag. P1 sends `τ_j = SHA-256(job ‖ j ‖
//! σ_i^0 ‖ σ_i^1 …)` for each chunk `j` of [`ROT_CHUNK`] OTs; P2 recomputes `σ_i^{b_i}` from the
//! `R̂_i` it received, takes `σ̂_i^{1−b_i}` from the enclave, and accepts chunk `j` only if τ̂_j = τ_j.
//! Why each piece:
//!
//! * τ needs **collision resistance** (a malicious enclave passes only with a second list of σ's
//!   hashing to P1's τ), so it is SHA-256. One τ per chunk instead of the paper's single τ costs
//!   32 bytes per 65,536 OTs and lets P2 release each verified chunk at once, in bounded memory.
//! * σ needs **second-preimage resistance** for targets fixed by an honest P1 (the enclave must
//!   find `R̂ ≠ R_i^{b_i}` with the same σ): TMMO under a unique tweak gives that in the ideal-
//!   permutation model (about `2^-128` per π query), at a tenth of SHA-256's cost per OT.
//! * P2 sees `σ_i^{1−b_i}`, a hash of the message it must not learn, so `R_i^{1−b_i}` is no longer
//!   pseudorandom to P2 (P2 could test guesses). The outputs are therefore a *second* tweaked hash
//!   of `R`: under TCCR the σ-tweak and out-tweak hashes of a random `R` are jointly pseudorandom,
//!   so `m_i^{1−b_i}` stays uniform given σ. (The paper returns `R` itself; consumers that derive
//!   chosen-message OT from ROT would leak low-entropy messages through σ.)

use crate::job::{JobHeader, JobKind, Mode};
use crate::TeleportError;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use webmpc_core::aes::Aes128;
use webmpc_core::hash::Hasher;
use webmpc_core::Block;

/// OTs per enclave message and per τ chunk.
pub const ROT_CHUNK: usize = 1 << 16;

const DOM_SIGMA: u64 = 0;
const DOM_OUT: u64 = 1;

fn tweak(tag: u64, index: u64, bit: u64, domain: u64) -> Block {
    Block::from_u128(((tag as u128) << 64) | (4 * index + 2 * bit + domain) as u128)
}

/// Number of chunks of `count` OTs.
pub fn chunks(count: u64) -> u64 {
    count.div_ceil(ROT_CHUNK as u64)
}

/// The OT range of chunk `j`.
pub fn chunk_range(count: u64, j: u64) -> core::ops::Range<u64> {
    let start = j * ROT_CHUNK as u64;
    start..(start + ROT_CHUNK as u64).min(count)
}

fn rot_count(job: &JobHeader) -> Result<u64, TeleportError> {
    match job.kind {
        JobKind::Rot { count } => Ok(count),
        JobKind::Gc { .. } => Err(TeleportError::InvalidArgument("a ROT job header was expected".into())),
    }
}

/// `R_i^0, R_i^1` for `i` in `range`, interleaved.
fn raw_pairs(k1: &Aes128, range: core::ops::Range<u64>) -> Vec<Block> {
    let mut v: Vec<Block> = range.flat_map(|i| [Block::from_u128(2 * i as u128), Block::from_u128(2 * i as u128 + 1)]).collect();
    k1.encrypt_blocks(&mut v);
    v
}

/// Choice bits `b_i` for `i` in `range` (the PRG of `k2`).
fn choice_bits(k2: &Aes128, range: core::ops::Range<u64>) -> Vec<bool> {
    if range.is_empty() {
        return Vec::new();
    }
    let first = range.start / 128;
    let last = (range.end - 1) / 128;
    let mut words: Vec<Block> = (first..=last).map(|c| Block::from_u128(c as u128)).collect();
    k2.encrypt_blocks(&mut words);
    let bits = range.map(|i| (words[(i / 128 - first) as usize].to_u128() >> (i % 128)) & 1 == 1).collect();
    Block::wipe(&mut words);
    bits
}

/// `H(x_k, tweak(i_k, b_k, domain))` for a batch.
fn hash(tag: u64, xs: &[Block], index_bit: impl Fn(usize) -> (u64, u64), domain: u64) -> Vec<Block> {
    let tweaks: Vec<Block> = (0..xs.len()).map(|k| {
        let (i, b) = index_bit(k);
        tweak(tag, i, b, domain)
    }).collect();
    let mut out = alloc::vec![Block::ZERO; xs.len()];
    Hasher::fixed().tccr_many(xs, &tweaks, &mut out).expect("equal lengths");
    out
}

fn chunk_tau(job: &[u8], j: u64, sigma_pairs: &[Block]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webmpc/teleport/rot-tau/v1");
    h.update((job.len() as u32).to_le_bytes());
    h.update(job);
    h.update(j.to_le_bytes());
    h.update(Block::slice_as_bytes(sigma_pairs));
    h.finalize().into()
}

/// What M^ROT returns for one chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RotChunk {
    /// `R_i^{b_i}`.
    pub chosen: Vec<Block>,
    /// Malicious mode: `σ_i^{1−b_i}`.
    pub other_sigma: Option<Vec<Block>>,
}

/// M^ROT for one chunk: given both seeds (as keyed AES) and the job, what the enclave returns.
pub struct RotMachine {
    k1: Aes128,
    k2: Aes128,
    count: u64,
    tag: u64,
    mode: Mode,
}

impl RotMachine {
    /// The machine for `job` with P1's seed `k1` and P2's seed `k2`.
    pub fn new(job: &JobHeader, k1: Block, k2: Block) -> Result<Self, TeleportError> {
        Ok(RotMachine { k1: Aes128::new(k1), k2: Aes128::new(k2), count: rot_count(job)?, tag: job.tag(), mode: job.mode })
    }

    /// Chunk `j` (callers pass `j < chunks(count)`).
    pub fn chunk(&self, j: u64) -> RotChunk {
        let range = chunk_range(self.count, j);
        let b = choice_bits(&self.k2, range.clone());
        let pick = |bit: fn(bool) -> bool| -> Vec<Block> {
            let mut v: Vec<Block> =
                range.clone().zip(&b).map(|(i, &bi)| Block::from_u128(2 * i as u128 + bit(bi) as u128)).collect();
            self.k1.encrypt_blocks(&mut v);
            v
        };
        let chosen = pick(|b| b);
        let other_sigma = (self.mode == Mode::Malicious).then(|| {
            let other = pick(|b| !b);
            hash(self.tag, &other, |k| (range.start + k as u64, !b[k] as u64), DOM_SIGMA)
        });
        RotChunk { chosen, other_sigma }
    }
}

/// P1's side: its ROT outputs, and (malicious mode) the τ of every chunk.
pub struct RotSender {
    job: JobHeader,
    k1: Aes128,
    count: u64,
}

impl RotSender {
    /// The sender of `job` with seed `k1`.
    pub fn new(job: &JobHeader, k1: Block) -> Result<Self, TeleportError> {
        Ok(RotSender { job: job.clone(), k1: Aes128::new(k1), count: rot_count(job)? })
    }

    /// The output pairs `(m_i^0, m_i^1)` of chunk `j`, and (malicious mode) its τ.
    pub fn chunk(&self, j: u64) -> (Vec<[Block; 2]>, Option<[u8; 32]>) {
        let range = chunk_range(self.count, j);
        let raw = raw_pairs(&self.k1, range.clone());
        let at = |k: usize| (range.start + (k / 2) as u64, (k % 2) as u64);
        let (flat, tau) = match self.job.mode {
            Mode::SemiHonest => (raw, None),
            Mode::Malicious => {
                let sigmas = hash(self.job.tag(), &raw, at, DOM_SIGMA);
                let out = hash(self.job.tag(), &raw, at, DOM_OUT);
                (out, Some(chunk_tau(&self.job.encode(), j, &sigmas)))
            }
        };
        (flat.chunks_exact(2).map(|p| [p[0], p[1]]).collect(), tau)
    }

    /// Malicious mode: every chunk's τ (what P1 sends P2), computed chunk by chunk.
    pub fn taus(&self) -> Vec<[u8; 32]> {
        (0..chunks(self.count)).filter_map(|j| self.chunk(j).1).collect()
    }
}

/// P2's side: choice bits, and the check and outputs of each chunk the enclave returns.
pub struct RotReceiver {
    job: JobHeader,
    k2: Aes128,
    count: u64,
    taus: Option<Vec<[u8; 32]>>,
}

impl RotReceiver {
    /// The receiver of `job` with seed `k2`; in malicious mode `taus` are P1's chunk τ's.
    pub fn new(job: &JobHeader, k2: Block, taus: Option<Vec<[u8; 32]>>) -> Result<Self, TeleportError> {
        let count = rot_count(job)?;
        match (job.mode, &taus) {
            (Mode::Malicious, Some(t)) if t.len() as u64 == chunks(count) => {}
            (Mode::Malicious, _) => return Err(TeleportError::Malformed("ROT τ list (wrong count)")),
            (Mode::SemiHonest, None) => {}
            (Mode::SemiHonest, Some(_)) => return Err(TeleportError::InvalidArgument("τ's are for malicious mode".into())),
        }
        Ok(RotReceiver { job: job.clone(), k2: Aes128::new(k2), count, taus })
    }

    /// The choice bits of chunk `j`.
    pub fn choices(&self, j: u64) -> Vec<bool> {
        choice_bits(&self.k2, chunk_range(self.count, j))
    }

    /// Checks chunk `j` from the enclave (malicious mode: τ̂_j = τ_j) and returns `m_i^{b_i}`.
    pub fn accept(&self, j: u64, chunk: &RotChunk) -> Result<Vec<Block>, TeleportError> {
        let range = chunk_range(self.count, j);
        let n = (range.end - range.start) as usize;
        if chunk.chosen.len() != n {
            return Err(TeleportError::Malformed("ROT chunk (wrong length)"));
        }
        let Some(taus) = &self.taus else { return Ok(chunk.chosen.clone()) };
        let other = chunk.other_sigma.as_ref().ok_or(TeleportError::Malformed("ROT chunk (σ's missing)"))?;
        if other.len() != n {
            return Err(TeleportError::Malformed("ROT chunk (wrong length)"));
        }
        let b = self.choices(j);
        let tag = self.job.tag();
        let own = hash(tag, &chunk.chosen, |k| (range.start + k as u64, b[k] as u64), DOM_SIGMA);
        let mut pairs = Vec::with_capacity(2 * n);
        for k in 0..n {
            // (σ^0, σ^1) from (own = σ^{b}, other = σ^{1−b}) without branching on b.
            let swap = (own[k] ^ other[k]) & Block::mask_from_bit(b[k] as u8);
            pairs.push(own[k] ^ swap);
            pairs.push(other[k] ^ swap);
        }
        let tau_hat = chunk_tau(&self.job.encode(), j, &pairs);
        let tau = taus.get(j as usize).ok_or(TeleportError::Malformed("ROT chunk index"))?;
        if !bool::from(tau_hat.ct_eq(tau)) {
            return Err(TeleportError::CheckFailed(crate::Check::RotTau));
        }
        Ok(hash(tag, &chunk.chosen, |k| (range.start + k as u64, b[k] as u64), DOM_OUT))
    }
}

/// M^ROT as one pure function over all chunks (tests; the enclave streams [`RotMachine::chunk`]).
pub fn m_rot(job: &JobHeader, k1: Block, k2: Block) -> Result<Vec<RotChunk>, TeleportError> {
    let m = RotMachine::new(job, k1, k2)?;
    Ok((0..chunks(m.count)).map(|j| m.chunk(j)).collect())
}
