//! Pseudo-random zero-sharings from pairwise seeds: how every [[·]] this crate makes becomes a
//! uniformly random additive sharing.
//!
//! **Why.** Π_[[·]] (MASCOT, Fig. 9, step 2) has the party who inputs x split it into random
//! additive shares, one per party, before it is authenticated. Authenticating a value *without*
//! that split (`Party::authenticate_own`) leaves the owner's value share equal to x and everyone
//! else's equal to 0. That is harmless while the value is only ever used inside products (a Beaver
//! opening is masked by its triple), but an opening of anything linear in it reveals the owner's
//! share: with input masks unshared, opening `x1 + x2` handed every party x1 = ε1 + r1 and x2 —
//! also to parties who were meant to get no output at all.
//!
//! **What.** Each pair of parties {i, j} holds a seed k_ij (drawn by the lower-indexed party at
//! setup and sent to the other over their private channel, never broadcast). For every element
//! that must be re-randomised, party i adds
//!
//! ```text
//! z_i = Σ_{j > i} F(k_ij) − Σ_{j < i} F(k_ji)
//! ```
//!
//! where F(k) is the next element of the AES-CTR stream of k. Each pair's term appears once with
//! each sign, so Σ_i z_i = 0 and the shared value does not change; MAC shares are untouched
//! (the MAC is of the sum). Towards any set of corrupt parties, the honest parties' z are
//! uniformly random subject to their sum (each honest pair's stream is unknown to them), so every
//! honest party's share of a re-randomised value is uniform given the value: what a party sees
//! when a sharing is opened is the value and nothing about who contributed what.
//!
//! **Why here rather than at every opening.** Re-randomising when a sharing is *made* (input
//! masks, and GF(2^128) random bits, whose shares are otherwise each party's own 0/1 bit) makes
//! the invariant hold for everything in the store, and so for every linear function of it: public
//! and private outputs, comparison masks, anything a future instruction opens. It costs one
//! 16-byte seed per pair at setup and n − 1 PRG elements per re-randomised element, with no
//! messages during preprocessing or the online phase, and leaves the triples (already random
//! sharings, and the bulk of the communication) untouched. Doing it at each opening instead would
//! put the same PRG work on the online phase's critical path for every Beaver opening, which are
//! masked already. The resulting shares have the distribution a trusted dealer gives
//! (`tests/privacy.rs` checks both against each other).
//!
//! Both parties of a pair draw from their stream in the same order because every party
//! re-randomises the same items in the same order (preprocessing runs in lockstep).

use crate::error::SpdzError;
use crate::field::Field;
use crate::net::Net;
use webmpc_core::channel::Channel;
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// One pairwise stream: its PRG, and whether this party adds (+) or subtracts (−) it.
struct Pair {
    prg: Prg,
    add: bool,
}

/// This party's side of the pairwise seeds.
pub struct ZeroSharing {
    pairs: Vec<Pair>,
}

impl ZeroSharing {
    /// No pairs: for a dealer-made party, which never preprocesses.
    pub fn none() -> ZeroSharing {
        ZeroSharing { pairs: Vec::new() }
    }

    /// Agrees a seed with every peer: this party draws (from `prg`, itself from the platform
    /// CSPRNG) and sends the seed of each pair with a higher-indexed peer, and receives the seed
    /// of each pair with a lower-indexed one. One message each way per pair, on the private
    /// pairwise channels; nothing goes into the broadcast transcript.
    pub async fn setup<C: Channel>(net: &Net<C>, prg: &mut Prg) -> Result<ZeroSharing, SpdzError> {
        let (me, n) = (net.me(), net.n());
        let mut seeds: Vec<Option<Block>> = (0..n).map(|j| (j > me).then(|| prg.next_block())).collect();
        let msgs = seeds.iter().map(|s| Some(s.map_or_else(Vec::new, |b| b.0.to_vec()))).collect();
        let got = net.exchange(msgs).await?;
        for (j, m) in got.into_iter().enumerate() {
            if j >= me {
                // From a higher peer only an empty message is expected (this party sends that seed).
                if j > me && m.is_some_and(|m| !m.is_empty()) {
                    return Err(SpdzError::Malformed { peer: j, what: "zero-sharing seed (unexpected)" });
                }
                continue;
            }
            let m = m.ok_or(SpdzError::Malformed { peer: j, what: "zero-sharing seed" })?;
            let bytes: [u8; 16] =
                m.as_slice().try_into().map_err(|_| SpdzError::Malformed { peer: j, what: "zero-sharing seed" })?;
            seeds[j] = Some(Block(bytes));
        }
        let pairs = seeds
            .iter_mut()
            .enumerate()
            .filter_map(|(j, s)| {
                let seed = s.take()?;
                Some(Pair { prg: Prg::from_seed(seed), add: j > me })
            })
            .collect();
        // `take` left `seeds` empty: the seeds live on only as the PRGs' keys.
        Ok(ZeroSharing { pairs })
    }

    /// Adds this party's share of a fresh zero-sharing to every element of `values`.
    pub fn rerandomise<F: Field>(&mut self, values: &mut [F]) {
        for pair in &mut self.pairs {
            for v in values.iter_mut() {
                let z = F::random(&mut pair.prg);
                if pair.add {
                    *v += z;
                } else {
                    *v -= z;
                }
            }
        }
    }

    /// The number of peers this party shares seeds with.
    pub fn pairs(&self) -> usize {
        self.pairs.len()
    }
}
