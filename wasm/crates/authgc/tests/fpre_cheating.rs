//! Cheating parties against the real F_Pre: one test per check, each showing the check catches
//! the deviation; malformed and truncated messages at every step; a party that disconnects.
//!
//! The deviating party runs the real code with a `Deviation` set (feature `testing`): it edits one
//! of its own messages at a named step, or changes one internal value. The honest parties run the
//! unmodified code. Every test is deterministic: each deviation is caught with certainty or with
//! probability at least 1 − 2^{−40}; the escape probability is stated at each test.

use futures::future::join_all;
use std::rc::Rc;
use webmpc_authgc::fpre::fpre_core::bucket_plan;
use webmpc_authgc::fpre::{Deviation, RealPreprocessor, Step};
use webmpc_authgc::preprocess::Preprocessor;
use webmpc_authgc::{AuthGcError, Culprit, Phase, MIN_RHO};
use webmpc_core::channel::memory::{network, run_local};
use webmpc_core::channel::Channel;
use webmpc_ot::SessionId;

/// The party that deviates in every test.
const CHEATER: usize = 1;

/// Triples requested in the batch tests: B = 5, so 2,000 leaky triples (a multiple of 8, so the
/// packed bit vectors have no padding bits).
const TRIPLES: usize = 400;

#[derive(Clone, Copy, Debug)]
enum Call {
    Triples(usize),
    Shares(usize),
    /// `triples_and_shares`: the shares' bits ride on the triples' aBit run.
    Both(usize, usize),
    /// A share batch after an honest first one (which carried Π_aShare's check): a batch whose
    /// X digest has a flight of its own.
    LaterShares(usize),
    /// `triples_and_shares(t, s)` after an honest first batch: its X digest is compared in the
    /// HaAND message only.
    LaterBoth(usize, usize),
}

/// Runs `n` parties: setup (the cheater with `at_setup`), then `call` (the cheater with
/// `in_batch`); the first batch after setup carries Π_aShare's global-key check. Returns every party's result; panics if the parties deadlock.
fn run(n: usize, at_setup: Option<Deviation>, in_batch: Option<Deviation>, call: Call) -> Vec<Result<(), AuthGcError>> {
    let sid = SessionId::random().unwrap();
    let net = network(n);
    run_local(join_all(net.into_iter().map(|ch| {
        let (setup_dev, batch_dev) =
            if ch.party() == CHEATER { (at_setup.clone(), in_batch.clone()) } else { (None, None) };
        async move {
            // The channel lives in this future: when the party stops, its peers see it disconnect.
            let ch = ch;
            let mut p = match setup_dev {
                Some(d) => RealPreprocessor::setup_deviating(&ch, &sid, MIN_RHO, d).await?,
                None => RealPreprocessor::setup(&ch, &sid, MIN_RHO).await?,
            };
            if let Call::LaterShares(_) | Call::LaterBoth(..) = call {
                p.random_shares(1).await?;
            }
            if batch_dev.is_some() {
                p.set_deviation(batch_dev);
            }
            match call {
                Call::Triples(k) => p.and_triples(k).await.map(|_| ()),
                Call::Shares(k) | Call::LaterShares(k) => p.random_shares(k).await.map(|_| ()),
                Call::Both(t, s) | Call::LaterBoth(t, s) => p.triples_and_shares(t, s).await.map(|_| ()),
            }
        }
    })))
    .expect("no party may hang")
}

fn edit(step: Step, to: Option<usize>, nth: usize, f: impl Fn(&mut Vec<u8>) + 'static) -> Option<Deviation> {
    Some(Deviation::Edit { step, to, nth, edit: Rc::new(f) })
}

/// Asserts that `party` aborted with the cheating verdict of `check`.
#[track_caller]
fn caught(results: &[Result<(), AuthGcError>], party: usize, phase: Phase, culprit: Option<usize>, check: &str) {
    match &results[party] {
        Err(AuthGcError::CheatingDetected { phase: p, culprit: c, check: k }) => {
            assert_eq!((*p, *c, *k), (phase, Culprit(culprit), check), "party {party}");
        }
        other => panic!("party {party}: expected the {check} to fail, got {other:?}"),
    }
    assert_eq!(results[party].as_ref().unwrap_err().code(), "CHEATING_DETECTED");
}

/// Asserts that every honest party failed (nobody accepts a batch a cheater tampered with).
#[track_caller]
fn all_honest_abort(results: &[Result<(), AuthGcError>]) {
    for (i, r) in results.iter().enumerate() {
        if i != CHEATER {
            assert!(r.is_err(), "honest party {i} accepted: {r:?}");
        }
    }
}

fn honest(n: usize) -> impl Iterator<Item = usize> {
    (0..n).filter(|&i| i != CHEATER)
}

fn leaky(triples: usize) -> usize {
    bucket_plan(triples, MIN_RHO).leaky()
}

// --- Π_aBit ---------------------------------------------------------------------------------

/// The cheater authenticates one bit to party 2 with the opposite value. Its X values match the
/// bits it used with party 0, so party 2's combined-tag check fails unless every one of the ρ
/// one-bit combinations misses the flipped position (or it guesses Δ_2): escape ≤ 2^{−ρ} = 2^{−40}.
#[test]
fn abit_inconsistent_bits_are_caught_by_the_abit_check() {
    let l = leaky(TRIPLES);
    // A used bit (in ⟨y⟩), a Π_aShare check position and a padding bit of the first batch (its
    // run is 3ℓ bits, ρ check positions, 2ρ padding), a share batch, and a share riding on a
    // triple batch.
    for (index, call) in [
        (l + 5, Call::Triples(TRIPLES)),
        (3 * l + 7, Call::Triples(TRIPLES)),
        (3 * l + MIN_RHO + 7, Call::Triples(TRIPLES)),
        (3, Call::Shares(100)),
        (3 * l + 7, Call::Both(TRIPLES, 100)),
    ] {
        let dev = Some(Deviation::InconsistentBit { peer: 2, index, adapt_x: false });
        let r = run(3, None, dev, call);
        caught(&r, 2, Phase::Independent, Some(CHEATER), "aBit consistency check");
        all_honest_abort(&r);
    }
    // A bit of Π_aShare's check positions, the last ρ of the first run (after a share batch's one).
    let r = run(4, None, Some(Deviation::InconsistentBit { peer: 2, index: 1, adapt_x: false }), Call::Shares(1));
    caught(&r, 2, Phase::Independent, Some(CHEATER), "aBit consistency check");
    all_honest_abort(&r);
}

/// The cheater also announces to party 2 the X of the bits it used with party 2, so every
/// pairwise check passes; the X's it broadcast differ, which the broadcast-consistency digests
/// catch with certainty (up to a SHA-256 collision) — in the HaAND message of a triple batch and
/// in the digest round of a later share batch; a share riding on a triple batch by the HaAND
/// message's. Later batches (after an honest first one), so that these digests are the only
/// broadcast check of the run (the first batch's is also in Π_aShare's commitments, below).
#[test]
fn abit_inconsistent_bits_with_tailored_x_are_caught_by_the_broadcast_check() {
    let riding = 3 * leaky(TRIPLES) + 9;
    for (index, call) in [(9, Call::LaterBoth(TRIPLES, 0)), (9, Call::LaterShares(100)), (riding, Call::LaterBoth(TRIPLES, 100))] {
        let dev = Some(Deviation::InconsistentBit { peer: 2, index, adapt_x: true });
        let r = run(3, None, dev, call);
        for i in honest(3) {
            caught(&r, i, Phase::Independent, None, "broadcast consistency check");
        }
    }
}

/// The same in the first batch, which carries Π_aShare's check: its X digests ride on the check's
/// commitments and are compared before any opening; caught with certainty by every honest party,
/// naming nobody (a differing digest does not say who lied). A bit of the share batch's own and
/// one of the check's positions.
#[test]
fn abit_inconsistent_bits_with_tailored_x_in_the_first_batch_are_caught_by_the_broadcast_check() {
    for index in [0, 1] {
        let r = run(3, None, Some(Deviation::InconsistentBit { peer: 2, index, adapt_x: true }), Call::Shares(1));
        for i in honest(3) {
            caught(&r, i, Phase::Independent, None, "broadcast consistency check");
        }
    }
}

/// X carries one parity per check (k = ρ = 40 bits of a 16-byte field); a set bit above them is
/// not a value an honest party sends: MALFORMED_MESSAGE naming the sender, in a first share batch
/// and in a triple batch.
#[test]
fn abit_parities_beyond_the_checks_are_malformed() {
    // X is the first 16 bytes of the aBit check message, little-endian: byte 15 holds bits
    // 120..127.
    for (in_batch, call, phase) in [
        (edit(Step::AbitCheck, Some(0), 0, |m| m[15] |= 0x80), Call::Shares(1), Phase::Independent),
        (edit(Step::AbitCheck, Some(0), 0, |m| m[5] |= 0x01), Call::Triples(TRIPLES), Phase::Independent),
    ] {
        let r = run(3, None, in_batch, call);
        assert_eq!(
            r[0].as_ref().unwrap_err(),
            &AuthGcError::Malformed { phase, peer: CHEATER, what: "aBit check parities" },
            "{phase:?}"
        );
        all_honest_abort(&r);
    }
}

// --- Π_aShare ------------------------------------------------------------------------------

/// The cheater's Δ-OT instance towards party 2 uses Δ ⊕ 1, towards everyone else Δ. At each of
/// the ρ checked positions its opened key sum misses the tags' XOR whenever party 2's bit is 1:
/// escape 2^{−40}. Every honest verifier sees it.
#[test]
fn ashare_inconsistent_delta_is_caught_by_the_global_key_check() {
    for n in [3, 4] {
        for call in [Call::Triples(1), Call::Shares(1)] {
            let r = run(n, Some(Deviation::InconsistentDelta { peer: 2 }), None, call);
            for i in honest(n) {
                caught(&r, i, Phase::Independent, Some(CHEATER), "aShare global-key consistency check");
            }
        }
    }
}

/// An opened C_b that is not what was committed: caught with certainty (binding).
#[test]
fn ashare_an_opening_that_misses_its_commitment_is_caught() {
    // Round 3 to party 0: ρ openings of (nonce ‖ C_b); byte 20 is inside the first C_b.
    let r = run(3, None, edit(Step::DeltaOpenKey, Some(0), 0, |m| m[20] ^= 1), Call::Triples(TRIPLES));
    caught(&r, 0, Phase::Independent, Some(CHEATER), "aShare commitment opening");
    all_honest_abort(&r);
}

/// The opening of the bits and tags (round 2) that is not what was committed in round 1: caught
/// with certainty (binding), naming the cheater (commitment and opening are its own messages).
#[test]
fn ashare_a_tags_opening_that_misses_its_commitment_is_caught() {
    // Round 2 to party 0: nonce (16) ‖ packed bits (5) ‖ tags ‖ view; byte 18 is a bit, byte 40
    // inside the first tag.
    for at in [18, 40] {
        let r = run(3, None, edit(Step::DeltaOpenBits, Some(0), 0, move |m| m[at] ^= 1), Call::Triples(TRIPLES));
        caught(&r, 0, Phase::Independent, Some(CHEATER), "aShare commitment opening");
        all_honest_abort(&r);
    }
}

/// Round 3 carries each party's digest of every round-2 opening it saw; one that differs from
/// the receiver's view is caught with certainty before any C_b is used — naming nobody, since a
/// party that showed two parties different openings causes the same difference.
#[test]
fn ashare_a_different_view_of_the_openings_is_caught() {
    // The view is the last 32 bytes of the round-3 message.
    let r = run(3, None, edit(Step::DeltaOpenKey, Some(0), 0, |m| *m.last_mut().unwrap() ^= 1), Call::Triples(TRIPLES));
    caught(&r, 0, Phase::Independent, None, "commitment consistency check (a party equivocated)");
    all_honest_abort(&r);
}

// --- Π_HaAND -------------------------------------------------------------------------------

/// The cheater flips every H1 bit it sends party 0: party 0's share of z_t flips wherever its
/// x_t = 1, and the LaAND check sees a wrong triple. Escape: all 2,000 of party 0's x bits are 0,
/// 2^{−2000}.
#[test]
fn haand_wrong_bits_are_caught_by_the_laand_check() {
    let packed = leaky(TRIPLES) / 8;
    for n in [2, 3] {
        let dev = edit(Step::HalfAnd, Some(0), 0, move |m| m[packed..2 * packed].iter_mut().for_each(|b| *b ^= 0xff));
        let r = run(n, None, dev, Call::Triples(TRIPLES));
        for i in honest(n) {
            caught(&r, i, Phase::Independent, None, "LaAND triple check");
        }
    }
}

// --- Π_LaAND ---------------------------------------------------------------------------------

/// A wrong z (the cheater flips its share of z_t and broadcasts the matching e to everyone):
/// ⊕H_i = ⊕Δ_i ≠ 0 at that triple, caught with certainty.
#[test]
fn laand_a_wrong_z_is_caught_by_the_triple_check() {
    for n in [2, 3] {
        let r = run(n, None, Some(Deviation::WrongZ { index: 29 }), Call::Triples(TRIPLES));
        for i in honest(n) {
            caught(&r, i, Phase::Independent, None, "LaAND triple check");
        }
    }
}

/// A different e to one party only: the e digests carried by the coin openings differ; caught
/// with certainty before any check value is opened.
#[test]
fn laand_an_inconsistent_e_is_caught_by_the_broadcast_check() {
    let r = run(3, None, edit(Step::LeakyE, Some(2), 0, |m| m[0] ^= 1), Call::Triples(TRIPLES));
    for i in honest(3) {
        caught(&r, i, Phase::Independent, None, "broadcast consistency check");
    }
}

/// A wrong U (bit 1 of every U block sent to party 0, which follow the two packed HaAND bit
/// vectors in the round-1 message): party 0's M[x]_Φ is off by x_t at each triple, so the check
/// fails unless all 2,000 x_t are 0: escape 2^{−2000} (plus 2^{−128} for the compression).
/// (Bit 0 of U is outside the check and must be zero: see `non_canonical_encodings_are_malformed`.)
#[test]
fn laand_a_wrong_u_is_caught_by_the_triple_check() {
    let l = leaky(TRIPLES);
    let packed = l / 8;
    for n in [2, 3] {
        let dev = edit(Step::HalfAnd, Some(0), 0, move |m| (0..l).for_each(|t| m[2 * packed + 16 * t] ^= 2));
        let r = run(n, None, dev, Call::Triples(TRIPLES));
        for i in honest(n) {
            caught(&r, i, Phase::Independent, None, "LaAND triple check");
        }
    }
}

/// The LaAND check coins: an opening that misses its commitment is caught with certainty, and a
/// coin commitment shown differently to different parties is caught by the broadcast check.
#[test]
fn laand_coin_cheats_are_caught() {
    // Round 3 to party 0: nonce (16) ‖ coin (16) ‖ digest; byte 20 is inside the coin.
    let r = run(3, None, edit(Step::LeakyCoins, Some(0), 0, |m| m[20] ^= 1), Call::Triples(TRIPLES));
    caught(&r, 0, Phase::Independent, Some(CHEATER), "commitment opening");
    all_honest_abort(&r);
    // The coin commitment is the last 32 bytes of the round-1 message.
    let r = run(3, None, edit(Step::HalfAnd, Some(2), 0, |m| *m.last_mut().unwrap() ^= 1), Call::Triples(TRIPLES));
    for i in honest(3) {
        caught(&r, i, Phase::Independent, None, "broadcast consistency check");
    }
}

/// A wrong H (the cheater flips a bit of one triple's H_i before compressing and committing):
/// the compressed sum is off by χ_3·1 ≠ 0, caught except with probability 2^{−128}.
#[test]
fn laand_a_wrong_h_is_caught_by_the_triple_check() {
    for n in [2, 3] {
        let r = run(n, None, Some(Deviation::WrongCheckValue { index: 3 }), Call::Triples(TRIPLES));
        for i in honest(n) {
            caught(&r, i, Phase::Independent, None, "LaAND triple check");
        }
    }
}

/// H opened differently from its commitment: caught with certainty (binding).
#[test]
fn laand_an_opening_that_misses_its_commitment_is_caught() {
    let r = run(3, None, edit(Step::LeakyCheck, Some(0), 1, |m| m[20] ^= 1), Call::Triples(TRIPLES));
    caught(&r, 0, Phase::Independent, Some(CHEATER), "commitment opening");
    all_honest_abort(&r);
}

/// A party that shows different commitments to different parties (LaAND's H, the aBit coins,
/// Π_aShare's commitments): the commitment views differ, caught with certainty by everyone.
#[test]
fn equivocated_commitments_are_caught() {
    let equivocate = |step| edit(step, Some(2), 0, |m| m[0] ^= 1);
    let cases = [
        (None, equivocate(Step::LeakyCheck), Phase::Independent),
        // The aBit coin commitment leads the first Δ-OT message.
        (None, equivocate(Step::AbitOt), Phase::Independent),
        (None, equivocate(Step::DeltaCommit), Phase::Independent),
    ];
    for (at_setup, in_batch, phase) in cases {
        let r = run(3, at_setup, in_batch, Call::Triples(TRIPLES));
        for i in honest(3) {
            caught(&r, i, phase, None, "commitment consistency check (a party equivocated)");
        }
    }
}

// --- Bucketing ---------------------------------------------------------------------------------

/// The cheater flips a d bit it reveals to party 0: the digest of its tags no longer matches
/// party 0's keys; caught unless the cheater guesses Δ_0 (2^{−128}).
#[test]
fn bucketing_a_flipped_d_is_caught_by_the_mac_check() {
    for n in [2, 3] {
        let r = run(n, None, edit(Step::BucketOpen, Some(0), 0, |m| m[0] ^= 1), Call::Triples(TRIPLES));
        caught(&r, 0, Phase::Independent, Some(CHEATER), "bucketing MAC check on the opened d = y1 ⊕ y2");
        // This is the batch's last round: another honest party that got correct bits may finish
        // with correct triples (security with abort, not unanimous abort); party 0's abort reaches
        // it at its next call.
    }
}

// --- Malformed messages and disconnects ----------------------------------------------------------

/// Truncating the cheater's message to party 0 at every step gives party 0 a typed
/// MALFORMED_MESSAGE error (a length that is not the step's), never a panic or a hang.
#[test]
fn truncated_messages_are_malformed_at_every_step() {
    let truncate = |step, nth| edit(step, Some(0), nth, |m| m.truncate(m.len().saturating_sub(1)));
    let setup_steps = [
        (Step::BaseOt, 0),
        // The cheater is the larger index of the pair {0, 1}: after its base-OT point and the two
        // messages of the KOS chunk, the correction that derives the reverse instance.
        (Step::BaseOt, 3),
    ];
    for (step, nth) in setup_steps {
        let r = run(3, truncate(step, nth), None, Call::Shares(1));
        let e = r[0].as_ref().expect_err("party 0 must fail");
        assert_eq!(e.code(), "MALFORMED_MESSAGE", "setup {step:?}/{nth}: {e}");
        all_honest_abort(&r);
    }
    let batch_steps = [
        (Step::AbitOt, 0, Call::Triples(TRIPLES)),
        (Step::AbitOt, 1, Call::Triples(TRIPLES)),
        (Step::AbitOt, 2, Call::Triples(TRIPLES)),
        (Step::AbitCoins, 0, Call::Triples(TRIPLES)),
        (Step::AbitCheck, 0, Call::Triples(TRIPLES)),
        (Step::HalfAnd, 0, Call::Triples(TRIPLES)),
        (Step::LeakyE, 0, Call::Triples(TRIPLES)),
        (Step::LeakyCoins, 0, Call::Triples(TRIPLES)),
        (Step::LeakyCheck, 0, Call::Triples(TRIPLES)),
        (Step::LeakyCheck, 1, Call::Triples(TRIPLES)),
        (Step::BucketOpen, 0, Call::Triples(TRIPLES)),
        // The first batch's Π_aShare check (its X digest rides on the commitments), and a later
        // share batch's X digest round.
        (Step::DeltaCommit, 0, Call::Triples(TRIPLES)),
        (Step::DeltaOpenBits, 0, Call::Triples(TRIPLES)),
        (Step::DeltaOpenKey, 0, Call::Triples(TRIPLES)),
        (Step::AbitBroadcast, 0, Call::LaterShares(100)),
    ];
    for (step, nth, call) in batch_steps {
        let r = run(3, None, truncate(step, nth), call);
        let e = r[0].as_ref().expect_err("party 0 must fail");
        assert_eq!(e.code(), "MALFORMED_MESSAGE", "{step:?}/{nth}: {e}");
        // After a batch's last round (d opening, X digest) party 2 may already hold its result.
        if !matches!(step, Step::BucketOpen | Step::AbitBroadcast) {
            all_honest_abort(&r);
        }
    }
}

/// Encodings must be canonical: a set padding bit in the last byte of a packed bit vector (HaAND
/// bits, e bits, opened d bits) or a set bit 0 in a U block is MALFORMED_MESSAGE.
#[test]
fn non_canonical_encodings_are_malformed() {
    // 321 triples: B = 5, 1,605 leaky triples, so the last byte of a packed vector has 3 bits.
    let l = leaky(321);
    assert_ne!(l % 8, 0);
    let last = l.div_ceil(8) - 1;
    let d_last = (321 * 4usize).div_ceil(8) - 1;
    let first_u = 2 * l.div_ceil(8) + 16 * 77;
    for (step, at, bit) in [
        (Step::HalfAnd, last, 0x80),
        (Step::HalfAnd, first_u, 1),
        (Step::LeakyE, last, 0x80),
        (Step::BucketOpen, d_last, 0x80),
    ] {
        let r = run(2, None, edit(step, Some(0), 0, move |m| m[at] |= bit), Call::Triples(321));
        match &r[0] {
            Err(e @ AuthGcError::Malformed { phase: Phase::Independent, peer: CHEATER, .. }) => {
                assert_eq!(e.code(), "MALFORMED_MESSAGE")
            }
            other => panic!("{step:?}: expected a malformed message, got {other:?}"),
        }
    }
}

/// A party that stops mid-batch (or mid-setup): every other party gets a typed error naming a
/// disconnect, and nobody hangs (`run` panics on a deadlock).
#[test]
fn a_party_that_disconnects_gives_typed_errors_and_no_hang() {
    let batch = [
        Step::AbitOt,
        Step::AbitCheck,
        Step::HalfAnd,
        Step::LeakyE,
        Step::LeakyCoins,
        Step::LeakyCheck,
        Step::BucketOpen,
        Step::DeltaOpenBits,
    ];
    for step in batch {
        let r = run(3, None, Some(Deviation::Disconnect { step }), Call::Triples(TRIPLES));
        for i in honest(3) {
            let e = r[i].as_ref().expect_err("honest party must fail");
            assert_eq!(e.code(), "PEER_DISCONNECTED", "{step:?}, party {i}: {e}");
        }
    }
    for step in [Step::BaseOt] {
        let r = run(3, Some(Deviation::Disconnect { step }), None, Call::Shares(1));
        for i in honest(3) {
            assert_eq!(r[i].as_ref().expect_err("honest party must fail").code(), "PEER_DISCONNECTED", "{step:?}");
        }
    }
}

/// The honest runs of this harness succeed (so the failures above are the deviations' doing).
#[test]
fn without_a_deviation_everyone_succeeds() {
    for call in [Call::Triples(TRIPLES), Call::Shares(100), Call::LaterShares(100)] {
        let r = run(3, None, None, call);
        assert!(r.iter().all(|r| r.is_ok()), "{r:?}");
    }
    // And a deviation aimed at a step that never runs changes nothing.
    let r = run(2, None, edit(Step::AbitBroadcast, None, 0, |m| m.clear()), Call::Triples(10));
    assert!(r.iter().all(|r| r.is_ok()));
}
