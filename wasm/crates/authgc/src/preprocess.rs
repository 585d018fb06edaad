//! The preprocessing functionality F_Pre (WRK17 Fig. 1) as the garbling protocol consumes it, and
//! F_Pre.AND on wire masks from random AND triples.
//!
//! [`Preprocessor`] is implemented by the real protocol (`fpre`: Π_aBit, Π_aShare, Π_HaAND,
//! Π_LaAND and bucketing over KOS Δ-OT) and by a trusted dealer for tests (`ideal`). Both are
//! function-independent: they need only a bound on the number of gates, never the circuit or the
//! inputs, and they work in batches whose size the caller chooses (memory is bounded by the batch).
//!
//! Every party's calls must come in the same order with the same sizes; the values returned are
//! this party's views ([`AuthShares`]).

use crate::net::{open, Reveal};
use crate::share::AuthShares;
use crate::{AuthGcError, Phase};
use webmpc_core::channel::{Channel, PartyId};
use webmpc_core::Block;

/// The party that adds public constants to shared values (see [`AuthShares::add_public`]).
/// Any fixed party works; every party must use the same one.
pub const CONSTANT_HOLDER: PartyId = 0;

/// A batch of random authenticated AND triples ⟨x⟩, ⟨y⟩, ⟨z⟩ with z = x ∧ y, one party's view.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Triples {
    /// The first factors.
    pub x: AuthShares,
    /// The second factors.
    pub y: AuthShares,
    /// The products.
    pub z: AuthShares,
}

impl Triples {
    /// The number of triples.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Splits off the triples from `at` on.
    pub fn split_off(&mut self, at: usize) -> Triples {
        Triples { x: self.x.split_off(at), y: self.y.split_off(at), z: self.z.split_off(at) }
    }
}

/// Checks peer j's head; its error ends the step (see [`LeadingHead`]).
pub type LeadingHeadCheck = Box<dyn Fn(PartyId, &[u8]) -> Result<(), AuthGcError>>;

/// Bytes to lead a preprocessor's next message to every peer, and the check of each peer's
/// (see [`Preprocessor::lead_next_message`]).
pub struct LeadingHead {
    /// This party's head, the same for every peer.
    pub mine: Vec<u8>,
    /// Checks peer j's head: what j sent in its place (shorter than `mine` if j's message is).
    pub check: LeadingHeadCheck,
}

/// F_Pre: this party's global key and, on demand, random authenticated shares and AND triples.
#[allow(async_fn_in_trait)]
pub trait Preprocessor {
    /// This party's index.
    fn party(&self) -> PartyId;

    /// The number of parties.
    fn parties(&self) -> usize;

    /// This party's global key Δ_i: its MAC key, and its free-XOR offset when it garbles. Fresh
    /// for every instance.
    fn delta(&self) -> Block;

    /// `n` random authenticated shares ⟨r⟩ (F_Pre *random*): wire masks.
    async fn random_shares(&mut self, n: usize) -> Result<AuthShares, AuthGcError>;

    /// `n` random authenticated AND triples. The implementation may choose its internal batch
    /// parameters (e.g. the bucket size) from `n`, so callers that want the cheapest triples ask
    /// for large batches.
    async fn and_triples(&mut self, n: usize) -> Result<Triples, AuthGcError>;

    /// `triples` AND triples and `shares` random shares, as [`and_triples`](Self::and_triples)
    /// then [`random_shares`](Self::random_shares) would give them. An implementation may make
    /// both in fewer rounds than the two calls (the real one authenticates the shares' bits in
    /// the triples' own aBit run); this default is the two calls.
    async fn triples_and_shares(&mut self, triples: usize, shares: usize) -> Result<(Triples, AuthShares), AuthGcError> {
        let t = self.and_triples(triples).await?;
        let s = self.random_shares(shares).await?;
        Ok((t, s))
    }

    /// Lets `head` lead this preprocessor's next message to every peer, in that message: an
    /// agreement that costs no flight of its own. Each peer's head is checked before anything else
    /// of its message is looked at, and the check's error ends the call that sent it. Returns
    /// `false`, and sends nothing, if this preprocessor takes no heads (the trusted dealer sends
    /// no messages): the caller then exchanges the head itself. A caller that hands a head must
    /// make a call that sends a message next.
    fn lead_next_message(&mut self, head: LeadingHead) -> bool {
        drop(head);
        false
    }
}

/// F_Pre.AND on wire masks: ⟨a_k ∧ b_k⟩ from ⟨a⟩, ⟨b⟩ and one random triple per k (Beaver).
///
/// Opens d = a ⊕ x and e = b ⊕ y to everyone (MAC-checked; they are one-time-padded by the random
/// x and y, so they reveal nothing), then ⟨ab⟩ = ⟨z⟩ ⊕ e·⟨x⟩ ⊕ d·⟨y⟩ ⊕ d·e, since
/// (x ⊕ d)(y ⊕ e) = xy ⊕ e·x ⊕ d·y ⊕ d·e. One round. Consumes the triples.
pub async fn and_from_triples<C: Channel>(
    ch: &C,
    delta: Block,
    a: &AuthShares,
    b: &AuthShares,
    triples: Triples,
) -> Result<AuthShares, AuthGcError> {
    let n = a.len();
    if b.len() != n || triples.len() != n {
        return Err(AuthGcError::InvalidArgument("F_Pre.AND needs one triple per pair of shares".into()));
    }
    // Open d and e together: one round, one digest per peer.
    let mut de = a.xor(&triples.x);
    de.extend(&b.xor(&triples.y));
    let opened = open(ch, Phase::Dependent, "F_Pre.AND opening of d and e", &de, delta, Reveal::All).await?;
    let (d, e) = opened.split_at(n);
    let Triples { mut x, mut y, mut z } = triples;
    x.and_public(e);
    y.and_public(d);
    z.xor_assign(&x);
    z.xor_assign(&y);
    let de: Vec<bool> = d.iter().zip(e).map(|(d, e)| d & e).collect();
    z.add_public(&de, delta, CONSTANT_HOLDER);
    Ok(z)
}
