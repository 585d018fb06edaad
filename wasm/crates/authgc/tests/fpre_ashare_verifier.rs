//! Attacks found by reviewing the real F_Pre against Fig. 15: a cheating *verifier* in Π_aShare's
//! global-key check (the paper's prover never checks the bits and tags it is shown, so a flipped
//! bit made it open C_b = ΣK ⊕ x'·Δ and hand over Δ), and the largest ρ the API accepts. Both
//! tests failed before the fix.

use core::cell::RefCell;
use futures::future::join_all;
use sha2::{Digest, Sha256};
use std::rc::Rc;
use webmpc_authgc::commit;
use webmpc_authgc::fpre::RealPreprocessor;
use webmpc_authgc::preprocess::Preprocessor;
use webmpc_authgc::share::pack_bits;
use webmpc_authgc::{AuthGcError, Phase, MIN_RHO};
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::Block;
use webmpc_ot::SessionId;

const RHO: usize = MIN_RHO;
/// Two parties: 0 honest, 1 the attacker (a corrupt *verifier* in Π_aShare's Δ check).
const N: usize = 2;
const ME: usize = 1;
/// Message lengths of the three Π_aShare rounds at n = 2, ρ = 40 (no other message of setup and
/// a first share batch of one has these lengths: base OT 8192/32, KOS 4096/16/2064, coins 32/64,
/// aBit check 656). Round 1
/// carries the aBit run's X digest (32 bytes) after the commitments.
const COMMIT_LEN: usize = 32 + 2 * RHO * 32 + 32;
const TAGS_LEN: usize = RHO / 8 + (N - 1) * RHO * 16;
const OPEN_BITS_LEN: usize = commit::NONCE_LEN + TAGS_LEN + 32;
const OPEN_KEY_LEN: usize = RHO * (commit::NONCE_LEN + 16) + 32;

fn tags_label(party: PartyId) -> Vec<u8> {
    let mut l = b"webmpc/authgc/fpre/delta-check/tags".to_vec();
    l.extend_from_slice(&(party as u64).to_le_bytes());
    l.extend_from_slice(&0u64.to_le_bytes());
    l
}

/// The digest Π_aShare's check (fpre `key_check`) exchanges to compare views (party order 0, 1).
fn view(items: [&[u8]; 2], what: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webmpc/authgc/fpre/delta-check/view/v1");
    h.update(what);
    for c in items {
        h.update((c.len() as u64).to_le_bytes());
        h.update(c);
    }
    h.finalize().into()
}

#[derive(Default)]
struct Spy {
    /// The attacker's real round-1 message and the one party 0 gets instead.
    my_r1: Vec<u8>,
    fake_r1: Vec<u8>,
    their_r1: Vec<u8>,
    /// The fake opening (bits the attacker claims, zero tags).
    fake_opening: Vec<u8>,
    fake_bits: Vec<bool>,
    my_r2: Vec<u8>,
    fake_r2: Vec<u8>,
    their_r2: Vec<u8>,
    their_r2_as_delivered: Vec<u8>,
    /// The attacker's true bits and tags M_0[x^1_r], read from its own honest opening.
    true_bits: Vec<bool>,
    true_tags: Vec<Block>,
    /// Δ_0 candidates computed from party 0's opened C_b.
    recovered: Vec<Block>,
}

/// The attacker's channel: it runs the honest code underneath and rewrites the Π_aShare rounds so
/// that party 0 sees a commitment to (and an opening of) bits the attacker chose, with every
/// view digest made consistent.
#[derive(Clone)]
struct Attacker<'a> {
    inner: &'a MemoryChannel,
    st: Rc<RefCell<Spy>>,
}

impl Channel for Attacker<'_> {
    fn party(&self) -> PartyId {
        self.inner.party()
    }
    fn parties(&self) -> usize {
        self.inner.parties()
    }
    async fn send(&self, to: PartyId, mut msg: Vec<u8>) -> Result<(), ChannelError> {
        {
            let mut s = self.st.borrow_mut();
            if msg.len() == COMMIT_LEN {
                // Commit to bits of the attacker's choosing (all ones) and zero tags.
                s.my_r1 = msg.clone();
                s.fake_bits = vec![true; RHO];
                let mut value = pack_bits(&s.fake_bits);
                value.resize(TAGS_LEN, 0);
                let (c, opening) = commit::commit(&tags_label(ME), &value).unwrap();
                msg[..32].copy_from_slice(&c);
                s.fake_opening = opening;
                s.fake_r1 = msg.clone();
            } else if msg.len() == OPEN_BITS_LEN {
                s.my_r2 = msg.clone();
                let body = &msg[commit::NONCE_LEN..commit::NONCE_LEN + TAGS_LEN];
                s.true_bits = (0..RHO).map(|r| (body[r / 8] >> (r % 8)) & 1 == 1).collect();
                s.true_tags = Block::slice_from_bytes(&body[RHO / 8..]).unwrap().to_vec();
                let mut fake = s.fake_opening.clone();
                fake.extend_from_slice(&view([&s.their_r1, &s.fake_r1], b"commitments"));
                s.fake_r2 = fake.clone();
                msg = fake;
            } else if msg.len() == OPEN_KEY_LEN {
                let at = msg.len() - 32;
                msg[at..].copy_from_slice(&view([&s.their_r2, &s.fake_r2], b"openings"));
            }
        }
        self.inner.send(to, msg).await
    }
    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        let mut msg = self.inner.recv(from).await?;
        let mut s = self.st.borrow_mut();
        if msg.len() == COMMIT_LEN {
            s.their_r1 = msg.clone();
        } else if msg.len() == OPEN_BITS_LEN {
            // Keep the attacker's own code happy: the view it expects covers its real commitment.
            s.their_r2 = msg.clone();
            let at = msg.len() - 32;
            msg[at..].copy_from_slice(&view([&s.their_r1, &s.my_r1], b"commitments"));
            s.their_r2_as_delivered = msg.clone();
        } else if msg.len() == OPEN_KEY_LEN {
            // Party 0 opened C_b, b = the attacker's claimed bit: C_b ⊕ M_0[x^1] = (b ⊕ x^1)·Δ_0.
            for r in 0..RHO {
                if s.fake_bits[r] != s.true_bits[r] {
                    let at = r * (commit::NONCE_LEN + 16) + commit::NONCE_LEN;
                    let c = Block(msg[at..at + 16].try_into().unwrap());
                    let tag = s.true_tags[r];
                    s.recovered.push(c ^ tag);
                }
            }
            let at = msg.len() - 32;
            msg[at..].copy_from_slice(&view([&s.their_r2_as_delivered, &s.my_r2], b"openings"));
        }
        Ok(msg)
    }
}

/// Π_aShare's Δ check (in the first batch after setup): a corrupt *verifier* commits to and opens a bit it does not hold
/// (its tag is never checked), so the honest prover opens C_b for the wrong b, and
/// C_b ⊕ M[x] = Δ. The honest prover must verify the opened bits and tags under its own key
/// before it opens C_b; here it must abort, and the attacker must not learn Δ_0.
#[test]
fn ashare_a_verifier_opening_a_flipped_bit_must_not_learn_the_provers_delta() {
    let net = network(N);
    let sid = SessionId::random().unwrap();
    let st = Rc::new(RefCell::new(Spy::default()));
    let out = run_local(join_all(net.into_iter().map(|ch| {
        let (sid, st) = (&sid, st.clone());
        // Each party owns its channel: one that stops is seen to disconnect.
        async move {
            let ch = ch;
            if ch.party() == ME {
                let atk = Attacker { inner: &ch, st };
                let mut p = RealPreprocessor::setup(atk, sid, RHO).await?;
                p.random_shares(1).await.map(|_| p.delta())
            } else {
                let mut p = RealPreprocessor::setup(&ch, sid, RHO).await?;
                p.random_shares(1).await.map(|_| p.delta())
            }
        }
    })))
    .expect("no deadlock");
    let st = st.borrow();
    assert_eq!(st.true_tags.len(), RHO, "the attack reached the Δ check");
    // The check that must fire: the prover's check of the verifier's opened bits and tags under
    // its own key (the attacker's zero tags fail it), naming the attacker — its own opening.
    assert_eq!(
        out[0].as_ref().err(),
        Some(&AuthGcError::cheating(Phase::Independent, Some(ME), "aShare tag check on a verifier's opened bits")),
        "party 0 must abort at the tag check on the verifier's opened bits"
    );
    // Party 0 never opened a C_b to the attacker (so nothing of Δ_0 could be recovered, whatever
    // party 0's result).
    assert!(st.recovered.is_empty(), "party 0 opened C_b at {} positions of flipped bits", st.recovered.len());
    let leaked = match &out[0] {
        Ok(delta_0) => st.recovered.iter().filter(|d| *d == delta_0).count(),
        Err(_) => 0,
    };
    assert!(
        out[0].is_err() && leaked == 0,
        "honest party 0 finished its first batch = {} and the attacker recovered its Δ at {leaked} of {} positions",
        out[0].is_ok(),
        st.recovered.len()
    );
}

/// `check_rho` accepts ρ up to 128, but with k = ρ = 128 aBit checks the test `x >> k != 0` on a
/// peer's parities shifts a u128 by 128: a panic with overflow checks (tests), and in release
/// (shift amount masked to 0) every honest peer's nonzero X is rejected as MALFORMED_MESSAGE.
#[test]
fn the_largest_accepted_rho_must_work() {
    let net = network(2);
    let sid = SessionId::random().unwrap();
    let out = run_local(join_all(net.into_iter().map(|ch| {
        let sid = &sid;
        async move {
            let ch = ch;
            let mut p = RealPreprocessor::setup(&ch, sid, 128).await?;
            p.random_shares(10).await.map(|s| s.len())
        }
    })))
    .expect("no deadlock");
    for (i, r) in out.iter().enumerate() {
        assert_eq!(r.as_ref().ok(), Some(&10), "party {i}: {r:?}");
    }
}
