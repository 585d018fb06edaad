//! Deviations a party can be told to commit, for the cheating-party tests (feature `ideal` or
//! `cfg(test)` only; never compiled into the shipped library). Each names the check that must
//! catch it.

use crate::field::Field;
use webmpc_core::channel::PartyId;

/// A deviation from the protocol.
#[derive(Debug, Clone, Default)]
pub enum Cheat {
    /// Honest.
    #[default]
    None,
    /// Feeds a different x into COPE towards `peer` than it keeps as its own share (every row of
    /// u for one value off by one): caught by the input check (MAC_CHECK_FAILED). (An error in a
    /// single row i only matters when the peer's Δ_i = 1, so it would be caught half the time.)
    InconsistentCope {
        /// The peer whose COPE gets the bad row.
        peer: PartyId,
    },
    /// Feeds a different x into COPE towards `peer` in rows 0..`rows` only (a row-dependent
    /// error, not a scalar one): t + q is then off by Σ_{i<rows} 2^i·Δ_i^(peer)·e, caught by the
    /// input check unless those bits of the peer's Δ are all zero (probability 2^−rows).
    CopeRows {
        /// The peer whose COPE gets the bad rows.
        peer: PartyId,
        /// How many of the lowest rows are off.
        rows: usize,
    },
    /// Uses a Δ^(i) in COPE's Initialize that differs from the one in its own MACs: caught by
    /// the input check.
    WrongDelta,
    /// Sends wrong Gilboa corrections d to `peer` (all k of the first product off by one, i.e.
    /// a different b): the triple is wrong; caught by the sacrifice (SACRIFICE_FAILED). (A
    /// single wrong d_h only matters when the receiver's bit a_h = 1: the selective-failure
    /// leak that Combine's τ = 3 exists for.)
    WrongD {
        /// The peer that gets the bad d.
        peer: PartyId,
    },
    /// Adds 1 to its share of one product c in Multiply: caught by the sacrifice.
    WrongProduct,
    /// Opens a share off by one (to everyone): caught by the MAC check.
    WrongOpenShare,
    /// Like [`Cheat::WrongOpenShare`], but only in the `call`-th opening from now on (0-based,
    /// counting every opening this party makes).
    WrongOpenShareAt {
        /// Which opening.
        call: usize,
        /// Openings seen so far.
        seen: core::cell::Cell<usize>,
    },
    /// Sends a different share to `to` than to the others when opening: caught by the broadcast
    /// consistency check (CHEATING_DETECTED) when another honest party sees the right value.
    InconsistentOpen {
        /// The party that gets the bad share.
        to: PartyId,
    },
    /// Sends a different ε for its input to `to` in the online phase: caught by the broadcast
    /// consistency check.
    InconsistentInput {
        /// The party that gets the bad ε.
        to: PartyId,
    },
    /// Commits to a wrong σ in the MAC check: caught by the MAC check.
    WrongSigma,
    /// A server that, after the servers agreed on the client inputs, uses the first client ε
    /// plus one for its share of that input ([[x]] = [[a]] + ε): with `in_transcript`, it also
    /// absorbs the changed ε into its transcript (caught by the broadcast consistency check,
    /// CHEATING_DETECTED naming it); without, only its share (and MAC share) is off (caught by
    /// the MAC check of the first opening that depends on it, MAC_CHECK_FAILED).
    ClientEpsilon {
        /// Whether its transcript shows the changed ε.
        in_transcript: bool,
    },
    /// Adds `by` to its share of the first value of its first opening in the online phase (an
    /// additive error in a Beaver product: the product becomes x·y + by·y). Caught by the MAC
    /// check that runs before any comparison depending on it opens a masked value.
    ShiftFirstOpen {
        /// The error added.
        by: u128,
    },
    /// Opens a wrong share of the first output: caught by the MAC check of the outputs.
    WrongOutputShare,
    /// Adds `by` to its share of the first opened z_c of the per-client range check (trying to
    /// frame an honest client): caught by the MAC check that runs before the refusals are
    /// decided (MAC_CHECK_FAILED, nobody refused).
    ShiftClientCheck {
        /// The error added.
        by: u128,
    },
    /// In GF(2^128) random-bit generation, authenticates `value` (as an element: 2 is X) instead
    /// of its first random bit: the sum is not a bit, caught by the b² = b check.
    OwnBitNotABit {
        /// What it authenticates instead of a bit.
        value: u64,
    },
}

fn bump<F: Field>(bytes: &mut [u8]) {
    if let Some(x) = F::from_bytes(bytes[..16].try_into().expect("16 bytes")) {
        bytes[..16].copy_from_slice(&(x + F::ONE).to_bytes());
    }
}

impl Cheat {
    pub(crate) fn on_cope<F: Field>(&self, peer: PartyId, msg: &mut [u8]) {
        let (p, rows) = match self {
            Cheat::InconsistentCope { peer } => (*peer, 128),
            Cheat::CopeRows { peer, rows } => (*peer, (*rows).min(128)),
            _ => return,
        };
        // Value 1 (value 0 is the dummy) in rows 0..rows.
        let l = msg.len() / 16 / 128;
        if p == peer && l > 1 {
            for row in 0..rows {
                bump::<F>(&mut msg[16 * (row * l + 1)..]);
            }
        }
    }

    /// The online share offset this party adds to the `index`-th opening of a run.
    pub(crate) fn online_open_shift<F: Field>(&self, index: usize) -> Option<F> {
        match self {
            Cheat::ShiftFirstOpen { by } if index == 0 => Some(F::from_bits(*by)),
            _ => None,
        }
    }

    /// The error this party adds to its share of the first z_c of the per-client range check.
    pub(crate) fn client_check_shift<F: Field>(&self) -> Option<F> {
        match self {
            Cheat::ShiftClientCheck { by } => Some(F::from_bits(*by)),
            _ => None,
        }
    }

    pub(crate) fn wrong_output_share(&self) -> bool {
        matches!(self, Cheat::WrongOutputShare)
    }

    /// This party's own random bits for GF(2^128) bit generation, possibly replaced.
    pub(crate) fn own_bits<F: Field>(&self, mut bits: Vec<F>) -> Vec<F> {
        if let (Cheat::OwnBitNotABit { value }, Some(b)) = (self, bits.first_mut()) {
            *b = F::from_u64(*value);
        }
        bits
    }

    /// `msg`: the encoded corrections of one Gilboa piece.
    pub(crate) fn on_gilboa_d<F: Field>(&self, peer: PartyId, msg: &mut [u8]) {
        if let Cheat::WrongD { peer: p } = self {
            if *p == peer {
                for x in msg.chunks_exact_mut(16).take(crate::gilboa::K) {
                    bump::<F>(x);
                }
            }
        }
    }

    pub(crate) fn on_product<F: Field>(&self, c: &mut [F]) {
        if let Cheat::WrongProduct = self {
            // Every raw product of the first triple: combining cannot cancel the error.
            for x in c.iter_mut().take(crate::party::TAU) {
                *x += F::ONE;
            }
        }
    }

    pub(crate) fn on_open<F: Field>(&self, v: &mut [F]) {
        let bump = match self {
            Cheat::WrongOpenShare => true,
            Cheat::WrongOpenShareAt { call, seen } => {
                seen.set(seen.get() + 1);
                seen.get() == call + 1
            }
            _ => false,
        };
        if let (true, Some(x)) = (bump, v.first_mut()) {
            *x += F::ONE;
        }
    }

    pub(crate) fn on_open_to<F: Field>(&self, to: PartyId, v: &mut [F]) {
        if let Cheat::InconsistentOpen { to: t } = self {
            if *t == to {
                if let Some(x) = v.first_mut() {
                    *x += F::ONE;
                }
            }
        }
    }

    pub(crate) fn on_input_to<F: Field>(&self, to: PartyId, v: &mut [F]) {
        if let Cheat::InconsistentInput { to: t } = self {
            if *t == to {
                if let Some(x) = v.first_mut() {
                    *x += F::ONE;
                }
            }
        }
    }

    /// The client ε this server uses instead of the agreed `eps`, and whether its transcript
    /// shows them; `None` when honest.
    pub(crate) fn on_client_eps<F: Field>(&self, eps: &[F]) -> Option<(Vec<F>, bool)> {
        match (self, eps.first()) {
            (Cheat::ClientEpsilon { in_transcript }, Some(_)) => {
                let mut v = eps.to_vec();
                v[0] += F::ONE;
                Some((v, *in_transcript))
            }
            _ => None,
        }
    }

    pub(crate) fn wrong_delta(&self) -> bool {
        matches!(self, Cheat::WrongDelta)
    }
}
