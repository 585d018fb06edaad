//! Random OT with chosen choice bits, from Δ-OT (KOS) and the TCCR hash with unique tweaks.
//!
//! MASCOT's Gilboa products need F_ROT where the *receiver chooses* its bits (they must be
//! g⁻¹(a^(i)), the same a^(i) towards every peer), and COPE's Initialize needs the same with the
//! bits of Δ. From Δ-OT (sender K_j and Δ_ot, receiver M_j = K_j ⊕ b_j·Δ_ot, which KOS gives
//! with its malicious-security check):
//!
//! ```text
//! sender: m0_j = tccr(K_j, τ_j),  m1_j = tccr(K_j ⊕ Δ_ot, τ_j)      receiver: tccr(M_j, τ_j)
//! ```
//!
//! with `tccr(x, τ) = π(π(x) ⊕ τ) ⊕ π(x)` (`webmpc_core::hash`) and the tweak
//! `τ_j = tag·2^64 + counter`, `tag` a hash of the session id and both party indices, `counter`
//! counting every OT of this instance. Tweaks never repeat within an instance and differ across
//! sessions and ordered pairs.
//!
//! **Why a tweak (the attack on MASCOT's hash, Guo–Katz–Wang–Yu App. C).** MASCOT hashed with
//! `π(x) ⊕ x`, ignoring the OT index. A corrupt receiver may fix its M_j and b_j to the same value
//! in every OT (it controls them in F_Δ-ROT); the sender's K_j are then all equal, so are its
//! m0_j and m1_j, and its Gilboa corrections d = q0 − q1 + b differ between two triples exactly
//! by b − b′: every triple becomes known relative to the first. With a unique tweak per OT, equal
//! K_j still give independent outputs (TCCR: the hash of a correlated input under a fresh tweak
//! looks random), which `tests/hash_attack.rs` checks.

use crate::error::SpdzError;
use sha2::{Digest, Sha256};
use webmpc_core::channel::PartyId;
use webmpc_core::hash::Hasher;
use webmpc_core::Block;
use webmpc_ot::{CotReceiver, CotSender, SessionId};

/// The tweak source of one ordered pair's instance.
#[derive(Debug, Clone)]
pub struct Tweaks {
    tag: u64,
    next: u64,
}

impl Tweaks {
    /// The tweaks of the instance in which `sender` sends to `receiver` in session `sid`.
    pub fn new(sid: &SessionId, sender: PartyId, receiver: PartyId) -> Tweaks {
        let mut h = Sha256::new();
        h.update(b"webmpc/spdz/rot-tweak-tag/v1");
        h.update(sid.0);
        h.update((sender as u64).to_le_bytes());
        h.update((receiver as u64).to_le_bytes());
        webmpc_core::count::add(webmpc_core::count::Op::ShaBlock, webmpc_core::count::sha256_blocks(28 + 32 + 16));
        let d = h.finalize();
        Tweaks { tag: u64::from_le_bytes(d[..8].try_into().expect("8 bytes")), next: 0 }
    }

    /// Reserves `n` consecutive tweaks and returns the first.
    pub fn take(&mut self, n: usize) -> Result<u128, SpdzError> {
        let base = ((self.tag as u128) << 64) | self.next as u128;
        self.next = self
            .next
            .checked_add(n as u64)
            .ok_or_else(|| SpdzError::InvalidArgument("random-OT instance exhausted its 2^64 tweaks".into()))?;
        Ok(base)
    }

    /// The next tweak (for tests of uniqueness).
    pub fn peek(&self) -> u128 {
        ((self.tag as u128) << 64) | self.next as u128
    }
}

/// Blocks hashed per step: one Gilboa product's OTs (and a multiple of the bitsliced AES's 8).
pub const HASH_STEP: usize = 128;

/// Hashes `rows` in place with consecutive tweaks from `base`, through a stack buffer (no copy
/// of the whole input).
pub fn hash_rows(rows: &mut [Block], base: u128) {
    let mut scratch = [Block::ZERO; HASH_STEP];
    for (k, chunk) in rows.chunks_mut(HASH_STEP).enumerate() {
        let s = &mut scratch[..chunk.len()];
        s.copy_from_slice(chunk);
        // The range fits: `Tweaks::take` refuses to pass 2^64 in the low half.
        Hasher::fixed()
            .tccr_many_counter(s, base + (k * HASH_STEP) as u128, chunk)
            .expect("tweak range checked");
    }
    Block::wipe(&mut scratch);
}

/// The sender of random OTs: both messages of each OT.
pub struct RotSender<S> {
    cot: S,
    tweaks: Tweaks,
}

impl<S: CotSender> RotSender<S> {
    /// Wraps a Δ-OT sender whose receiver uses the same `tweaks`.
    pub fn new(cot: S, tweaks: Tweaks) -> Self {
        RotSender { cot, tweaks }
    }

    /// The underlying Δ-OT sender.
    pub fn cot(&self) -> &S {
        &self.cot
    }

    /// `n` random OTs: `(m0, m1)`.
    pub async fn send(&mut self, n: usize) -> Result<(Vec<Block>, Vec<Block>), SpdzError> {
        let mut m0 = Vec::with_capacity(n);
        let mut m1 = Vec::with_capacity(n);
        self.send_with(n, |_, h0, h1| {
            m0.extend_from_slice(h0);
            m1.extend_from_slice(h1);
        })
        .await?;
        Ok((m0, m1))
    }

    /// `n` random OTs, handed to `f(offset, m0, m1)` in steps of [`HASH_STEP`] OTs (the last may
    /// be shorter) instead of being collected: the consumer (Gilboa's corrections) turns each
    /// step into field elements at once, so no hashed output is ever held in full. The same
    /// outputs, with the same tweaks, as [`RotSender::send`].
    pub async fn send_with(&mut self, n: usize, mut f: impl FnMut(usize, &[Block], &[Block])) -> Result<(), SpdzError> {
        let mut keys = self.cot.send_cot(n).await?;
        let delta = self.cot.delta();
        let base = self.tweaks.take(n)?;
        let hasher = Hasher::fixed();
        let mut h0 = [Block::ZERO; HASH_STEP];
        let mut h1 = [Block::ZERO; HASH_STEP];
        let mut k1 = [Block::ZERO; HASH_STEP];
        for (k, chunk) in keys.chunks(HASH_STEP).enumerate() {
            let len = chunk.len();
            let tweak = base + (k * HASH_STEP) as u128;
            for (x, key) in k1.iter_mut().zip(chunk) {
                *x = *key ^ delta;
            }
            hasher.tccr_many_counter(chunk, tweak, &mut h0[..len]).expect("tweak range checked");
            hasher.tccr_many_counter(&k1[..len], tweak, &mut h1[..len]).expect("tweak range checked");
            f(k * HASH_STEP, &h0[..len], &h1[..len]);
        }
        for s in [&mut h0[..], &mut h1[..], &mut k1[..], &mut keys[..]] {
            Block::wipe(s);
        }
        Ok(())
    }
}

/// The receiver of random OTs with chosen choice bits.
pub struct RotReceiver<R> {
    cot: R,
    tweaks: Tweaks,
}

impl<R: CotReceiver> RotReceiver<R> {
    /// Wraps a Δ-OT receiver whose sender uses the same `tweaks`.
    pub fn new(cot: R, tweaks: Tweaks) -> Self {
        RotReceiver { cot, tweaks }
    }

    /// The underlying Δ-OT receiver.
    pub fn cot(&self) -> &R {
        &self.cot
    }

    /// `m_{b_j}` for each choice bit `b_j`.
    pub async fn receive(&mut self, choices: &[bool]) -> Result<Vec<Block>, SpdzError> {
        let mut m = self.cot.receive_cot(choices).await?;
        let base = self.tweaks.take(choices.len())?;
        hash_rows(&mut m, base);
        Ok(m)
    }
}
