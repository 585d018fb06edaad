//! Every check MASCOT has, each with a party that deviates so that exactly that check must catch
//! it, and broken peers (tampered, truncated, missing messages) giving typed errors.
//!
//! | deviation                                   | caught by                  | error               |
//! |---------------------------------------------|----------------------------|---------------------|
//! | inconsistent x in COPE                      | input check (P2)           | MAC_CHECK_FAILED    |
//! | Δ in COPE differs from Δ in own MACs        | input check                | MAC_CHECK_FAILED    |
//! | wrong Gilboa correction d in Multiply       | sacrifice                  | SACRIFICE_FAILED    |
//! | wrong share of a product c                  | sacrifice                  | SACRIFICE_FAILED    |
//! | wrong share of ρ opened in the sacrifice    | sacrifice's MAC check      | SACRIFICE_FAILED    |
//! | wrong share at an online Open               | MAC check before output    | MAC_CHECK_FAILED    |
//! | wrong σ committed in the MAC check          | MAC check                  | MAC_CHECK_FAILED    |
//! | different opened share to different peers  | broadcast consistency (P9) | CHEATING_DETECTED   |
//! | different input ε to different peers        | broadcast consistency      | CHEATING_DETECTED   |
//! | coin share that does not match its commit   | commitment opening         | CHEATING_DETECTED   |

use futures::future::join_all;
use std::pin::Pin;
use webmpc_core::channel::memory::{network, run_local, MemoryChannel, Tamper};
use webmpc_core::channel::{Channel, PartyId};
use webmpc_ot::SessionId;
use webmpc_spdz::dealer::Dealer;
use webmpc_spdz::program::{const_u64, Builder, Kind, Program};
use webmpc_spdz::testing::Cheat;
use webmpc_spdz::{FieldKind, Fp, Gf128, Party, SpdzError};

type Res = Result<(), SpdzError>;

/// Sets up `n` parties (party `cheater` deviating) and generates triples; each party owns its
/// state inside its future, so one that aborts drops its channel and nobody waits forever.
fn preprocess_with_cheater(n: usize, cheater: PartyId, cheat: Cheat, binary: bool) -> Vec<Res> {
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let futs = network(n).into_iter().enumerate().map(|(i, ch)| {
        let cheat = if i == cheater { cheat.clone() } else { Cheat::None };
        let fut: Pin<Box<dyn core::future::Future<Output = Res>>> = if binary {
            Box::pin(async move {
                let mut p = Party::<Gf128, _>::setup_cheating(ch, sid, cheat).await?;
                p.set_batch(16)?;
                p.preprocess_triples(20, |_, _| {}).await
            })
        } else {
            Box::pin(async move {
                let mut p = Party::<Fp, _>::setup_cheating(ch, sid, cheat).await?;
                p.set_batch(16)?;
                p.preprocess_triples(20, |_, _| {}).await
            })
        };
        fut
    });
    run_local(join_all(futs)).unwrap()
}

fn honest_errors(results: &[Res], cheater: PartyId) -> Vec<&SpdzError> {
    results
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != cheater)
        .map(|(i, r)| r.as_ref().err().unwrap_or_else(|| panic!("honest party {i} accepted the deviation")))
        .collect()
}

#[test]
fn inconsistent_cope_input_is_caught_by_the_input_check() {
    for (n, binary) in [(2, false), (3, false), (2, true)] {
        let r = preprocess_with_cheater(n, 0, Cheat::InconsistentCope { peer: 1 }, binary);
        for e in honest_errors(&r, 0) {
            assert_eq!(*e, SpdzError::MacCheckFailed { phase: "input check" });
            assert_eq!(e.code(), "MAC_CHECK_FAILED");
        }
    }
}

#[test]
fn wrong_delta_share_is_caught_by_the_input_check() {
    for n in [2, 3] {
        let r = preprocess_with_cheater(n, 1, Cheat::WrongDelta, false);
        for e in honest_errors(&r, 1) {
            assert_eq!(*e, SpdzError::MacCheckFailed { phase: "input check" });
        }
    }
}

#[test]
fn wrong_gilboa_correction_is_caught_by_the_sacrifice() {
    for (n, binary) in [(2, false), (3, false), (2, true)] {
        let r = preprocess_with_cheater(n, 1, Cheat::WrongD { peer: 0 }, binary);
        for e in honest_errors(&r, 1) {
            assert_eq!(*e, SpdzError::SacrificeFailed);
            assert_eq!(e.code(), "SACRIFICE_FAILED");
        }
    }
}

#[test]
fn wrong_product_share_is_caught_by_the_sacrifice() {
    for n in [2, 3] {
        let r = preprocess_with_cheater(n, 0, Cheat::WrongProduct, false);
        for e in honest_errors(&r, 0) {
            assert_eq!(*e, SpdzError::SacrificeFailed);
        }
    }
}

#[test]
fn wrong_rho_share_is_caught_by_the_sacrifice_check() {
    let r = preprocess_with_cheater(2, 0, Cheat::WrongOpenShare, false);
    for e in honest_errors(&r, 0) {
        assert_eq!(*e, SpdzError::SacrificeFailed);
    }
}

/// x·y + 1 from one input of party 0 and one of the last party; output to everyone.
fn small_program(n: usize) -> Program {
    let mut b = Builder::new(FieldKind::Prime, n);
    let x = b.input(0, Kind::Unsigned(16));
    let y = b.input(n - 1, Kind::Unsigned(16));
    let m = b.mul(x, y);
    let z = b.add_const(m, const_u64(1));
    b.output(z, Kind::Unsigned(0), None);
    b.build()
}

fn online_with_cheater<C: Channel>(
    channels: Vec<C>,
    p: &Program,
    cheater: PartyId,
    cheat: Cheat,
) -> Vec<Result<Vec<Option<[u8; 16]>>, SpdzError>> {
    let n = p.parties;
    let mut dealer = Dealer::<Fp>::new(n);
    let cheats = (0..n).map(|i| if i == cheater { cheat.clone() } else { Cheat::None }).collect();
    let parties = dealer.parties(channels, &p.requirements(), cheats);
    let futs = parties.into_iter().enumerate().map(|(i, mut party)| {
        let inputs: Vec<[u8; 16]> = p.inputs.iter().filter(|x| x.owner.is_party(i)).map(|_| 7u128.to_le_bytes()).collect();
        async move { party.run(p, &inputs, |_, _| {}).await }
    });
    run_local(join_all(futs)).unwrap()
}

#[test]
fn honest_online_run_gives_the_output() {
    let p = small_program(3);
    let r = online_with_cheater(network(3), &p, 0, Cheat::None);
    for out in r {
        assert_eq!(u128::from_le_bytes(out.unwrap()[0].unwrap()), 50);
    }
}

#[test]
fn wrong_share_at_open_is_caught_by_the_mac_check_before_output() {
    for n in [2, 3] {
        let r = online_with_cheater(network(n), &small_program(n), 0, Cheat::WrongOpenShare);
        for (i, out) in r.iter().enumerate().skip(1) {
            assert_eq!(out.as_ref().unwrap_err(), &SpdzError::MacCheckFailed { phase: "online phase" }, "party {i}");
        }
    }
}

#[test]
fn wrong_sigma_is_caught_by_the_mac_check() {
    let r = online_with_cheater(network(2), &small_program(2), 1, Cheat::WrongSigma);
    assert_eq!(r[0].as_ref().unwrap_err(), &SpdzError::MacCheckFailed { phase: "online phase" });
}

#[test]
fn inconsistent_open_is_caught_by_the_broadcast_check() {
    let r = online_with_cheater(network(3), &small_program(3), 0, Cheat::InconsistentOpen { to: 1 });
    for out in &r[1..] {
        let e = out.as_ref().unwrap_err();
        assert!(matches!(e, SpdzError::CheatingDetected { check: "broadcast consistency check", .. }), "{e:?}");
        assert_eq!(e.code(), "CHEATING_DETECTED");
    }
}

#[test]
fn inconsistent_input_broadcast_is_caught() {
    let r = online_with_cheater(network(3), &small_program(3), 0, Cheat::InconsistentInput { to: 2 });
    for out in &r[1..] {
        assert!(matches!(
            out.as_ref().unwrap_err(),
            SpdzError::CheatingDetected { check: "broadcast consistency check", .. }
        ));
    }
}

type Edit = Box<dyn Fn(PartyId, usize, &mut Vec<u8>)>;

fn tampered(
    n: usize,
    who: PartyId,
    edit: impl Fn(PartyId, usize, &mut Vec<u8>) + 'static,
) -> Vec<Tamper<MemoryChannel, Edit>> {
    let mut edit: Option<Edit> = Some(Box::new(edit));
    network(n)
        .into_iter()
        .enumerate()
        .map(|(i, ch)| {
            let e: Edit = if i == who { edit.take().unwrap() } else { Box::new(|_, _, _| {}) };
            Tamper::new(ch, e)
        })
        .collect()
}

#[test]
fn coin_share_that_does_not_match_its_commitment_is_caught() {
    // Party 0's control messages: 0 = program hash, 1 and 2 = coin commitments, 3 = its input ε;
    // the first 33-byte message after those is its first coin opening.
    let p = small_program(2);
    let chans = tampered(2, 0, |_, i, m| {
        if i > 3 && m.len() == 33 {
            m[3] ^= 1;
        }
    });
    let r = online_with_cheater(chans, &p, 0, Cheat::None);
    assert_eq!(r[1].as_ref().unwrap_err(), &SpdzError::CheatingDetected { peer: 0, check: "coin commitment opening" });
}

#[test]
fn truncated_and_garbage_messages_are_typed_errors() {
    let p = small_program(2);
    for cut in [3usize, 4, 5, 6] {
        // Message `cut` of party 0 loses its last 5 bytes (its stream tag among them).
        let chans = tampered(2, 0, move |_, i, m| {
            if i == cut {
                let l = m.len().saturating_sub(5);
                m.truncate(l);
            }
        });
        let r = online_with_cheater(chans, &p, 0, Cheat::None);
        let e = r[1].as_ref().unwrap_err();
        assert!(
            matches!(e.code(), "MALFORMED_MESSAGE" | "CHEATING_DETECTED" | "PEER_DISCONNECTED"),
            "cut {cut}: {e:?}"
        );
    }
    // A non-canonical field element (all ones ≥ p) where shares are expected.
    let chans = tampered(2, 0, |_, i, m| {
        if i == 3 && m.len() > 16 {
            m[..16].copy_from_slice(&[0xff; 16]);
        }
    });
    let r = online_with_cheater(chans, &p, 0, Cheat::None);
    assert_eq!(r[1].as_ref().unwrap_err().code(), "MALFORMED_MESSAGE");
}

#[test]
fn a_peer_that_disappears_is_a_disconnect_not_a_hang() {
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let mut chans = network(3);
    let gone = chans.pop().unwrap();
    drop(gone);
    let futs = chans.into_iter().map(|ch| async move { Party::<Fp, _>::setup(ch, sid).await.map(|_| ()) });
    for r in run_local(join_all(futs)).unwrap() {
        assert_eq!(r.unwrap_err().code(), "PEER_DISCONNECTED");
    }
}

#[test]
fn a_failed_party_refuses_further_work() {
    let r = {
        let sid = SessionId::random().unwrap();
        let sid = &sid;
        let futs = network(2).into_iter().enumerate().map(|(i, ch)| async move {
            let cheat = if i == 0 { Cheat::WrongProduct } else { Cheat::None };
            let mut p = Party::<Fp, _>::setup_cheating(ch, sid, cheat).await?;
            p.set_batch(8)?;
            let first = p.preprocess_triples(8, |_, _| {}).await;
            let again = p.preprocess_triples(8, |_, _| {}).await;
            Ok::<_, SpdzError>((first, again))
        });
        run_local(join_all(futs)).unwrap()
    };
    let (first, again) = r[1].as_ref().unwrap();
    assert_eq!(first.as_ref().unwrap_err(), &SpdzError::SacrificeFailed);
    let e = again.as_ref().unwrap_err();
    assert_eq!(e, &SpdzError::Poisoned);
    // Not BUSY (a call while another runs, worth retrying): this session is over.
    assert_eq!(e.code(), "SESSION_FAILED");
}

// ------------------------------------------------------------------ checks added after review

/// A row-dependent COPE error (rows 0..63 of one value off by one, not every row): t + q is off
/// by Σ_{i<64} 2^i·Δ_i·e, caught by the input check unless the peer's 64 low bits of Δ are all
/// zero (probability 2^−64).
#[test]
fn row_dependent_cope_error_is_caught_by_the_input_check() {
    for (n, binary) in [(2, false), (3, false), (2, true)] {
        let r = preprocess_with_cheater(n, 0, Cheat::CopeRows { peer: n - 1, rows: 64 }, binary);
        for e in honest_errors(&r, 0) {
            assert_eq!(*e, SpdzError::MacCheckFailed { phase: "input check" });
        }
    }
}

/// Sets up `n` parties (party `cheater` deviating) and generates `masks[j]` input masks for each
/// party j directly (no triples).
fn masks_with_cheater(n: usize, cheater: PartyId, cheat: Cheat, masks: Vec<usize>) -> Vec<Res> {
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let masks = &masks;
    let futs = network(n).into_iter().enumerate().map(|(i, ch)| {
        let cheat = if i == cheater { cheat.clone() } else { Cheat::None };
        async move {
            let mut p = Party::<Fp, _>::setup_cheating(ch, sid, cheat).await?;
            p.set_batch(4)?;
            p.preprocess_masks(masks).await
        }
    });
    run_local(join_all(futs)).unwrap()
}

/// An inputter that feeds inconsistent x into COPE while authenticating its input masks is caught
/// by that round's input check; also in a later round of a request split into rounds (5·batch
/// masks per round), each of which has its own dummy and check.
#[test]
fn inconsistent_cope_in_mask_preprocessing_is_caught_by_the_input_check() {
    for (n, masks) in [(2, vec![3, 0]), (3, vec![45, 2, 0])] {
        let r = masks_with_cheater(n, 0, Cheat::InconsistentCope { peer: 1 }, masks.clone());
        for e in honest_errors(&r, 0) {
            assert_eq!(*e, SpdzError::MacCheckFailed { phase: "input check" });
        }
        let honest = masks_with_cheater(n, 0, Cheat::None, masks);
        assert!(honest.iter().all(|r| r.is_ok()));
    }
}

/// Random bits in F_p: after honest triple generation, party 0 opens a wrong share of d = a − b
/// (`which` = 0) or of s = a² (`which` = 1), consistently (its own view is the wrong one too).
/// Either the opened s is not a square or the bits' MAC check fails: both are the random-bit check
/// (MAC_CHECK_FAILED).
#[test]
fn wrong_opening_in_prime_field_bit_generation_is_caught() {
    for (n, which) in [(2usize, 0usize), (2, 1), (3, 0), (3, 1)] {
        let sid = SessionId::random().unwrap();
        let sid = &sid;
        let futs = network(n).into_iter().enumerate().map(|(i, ch)| async move {
            let mut p = Party::<Fp, _>::setup(ch, sid).await?;
            p.set_batch(8)?;
            p.preprocess_triples(8, |_, _| {}).await?;
            if i == 0 {
                p.set_cheat(Cheat::WrongOpenShareAt { call: which, seen: Default::default() });
            }
            p.preprocess_bits(8, |_, _| {}).await
        });
        let r = run_local(join_all(futs)).unwrap();
        for e in honest_errors(&r, 0) {
            assert!(
                matches!(e, SpdzError::MacCheckFailed { phase } if phase.starts_with("random bit generation")),
                "n = {n}, opening {which}: {e:?}"
            );
        }
    }
}

/// Random bits in GF(2^128): a party authenticates X (or X + 1) as its "bit". The sum is then not
/// a bit, and the b² = b check (b·b by Beaver, b·b − b claimed 0 through the MAC check) catches it.
#[test]
fn non_bit_own_bit_in_binary_field_bit_generation_is_caught() {
    for (n, value) in [(2usize, 2u64), (3, 3)] {
        let sid = SessionId::random().unwrap();
        let sid = &sid;
        let futs = network(n).into_iter().enumerate().map(|(i, ch)| {
            let cheat = if i == 0 { Cheat::OwnBitNotABit { value } } else { Cheat::None };
            async move {
                let mut p = Party::<Gf128, _>::setup_cheating(ch, sid, cheat).await?;
                p.set_batch(8)?;
                p.preprocess_bits(8, |_, _| {}).await
            }
        });
        let r = run_local(join_all(futs)).unwrap();
        for e in honest_errors(&r, 0) {
            assert_eq!(*e, SpdzError::MacCheckFailed { phase: "random bit generation" });
        }
    }
}

/// Three parties; party 0 sends party 2 a different share of ρ (in the sacrifice's opening) than
/// party 1: the two honest parties' transcripts differ, and the broadcast consistency check
/// inside the MAC check catches it (at both honest parties).
#[test]
fn equivocated_rho_share_is_caught_by_the_broadcast_check() {
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let futs = network(3).into_iter().enumerate().map(|(i, ch)| {
        // y and ρ of 8 triples: (1 + 8) elements + tag, on the control stream.
        let ch = Tamper::new(ch, move |to: PartyId, _: usize, m: &mut Vec<u8>| {
            if i == 0 && to == 2 && m.len() == 16 * 9 + 1 && m.last() == Some(&0) {
                m[16] ^= 1;
            }
        });
        async move {
            let mut p = Party::<Fp, _>::setup(ch, sid).await?;
            p.set_batch(8)?;
            p.preprocess_triples(8, |_, _| {}).await
        }
    });
    let r = run_local(join_all(futs)).unwrap();
    for e in honest_errors(&r, 0) {
        assert!(matches!(e, SpdzError::CheatingDetected { check: "broadcast consistency check", .. }), "{e:?}");
    }
}

/// Three parties; party 0 commits to one seed share towards party 1 and to another towards
/// party 2 (both commitments valid) for the first coin of triple generation (Combine's), and opens
/// each consistently: each honest party's commitment check passes, but their coins, and hence
/// transcripts, differ, which the broadcast consistency check catches at both.
#[test]
fn equivocated_coin_is_caught_by_the_broadcast_check() {
    use std::cell::Cell;
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let session = sid.0;
    let futs = network(3).into_iter().enumerate().map(|(i, ch)| {
        let (seed, nonce) = ([7u8; 16], [9u8; 16]);
        let forged = webmpc_spdz::net::commitment(&session, 0, b"triple/combine", &seed, &nonce);
        let count = Cell::new(0usize);
        // Party 0's control messages (tag 0) to party 2: the three coin commitments of triple
        // generation in one message (combine, auth, check: 3 × 32 bytes), then the combine coin's
        // opening (seed ‖ nonce: 32 bytes).
        let ch = Tamper::new(ch, move |to: PartyId, _: usize, m: &mut Vec<u8>| {
            if i == 0 && to == 2 && m.last() == Some(&0) {
                match (count.get(), m.len()) {
                    (0, 97) => m[..32].copy_from_slice(&forged),
                    (1, 33) => {
                        m[..16].copy_from_slice(&seed);
                        m[16..32].copy_from_slice(&nonce);
                    }
                    _ => return,
                }
                count.set(count.get() + 1);
            }
        });
        async move {
            let mut p = Party::<Fp, _>::setup(ch, sid).await?;
            p.set_batch(8)?;
            p.preprocess_triples(8, |_, _| {}).await
        }
    });
    let r = run_local(join_all(futs)).unwrap();
    for e in honest_errors(&r, 0) {
        assert!(matches!(e, SpdzError::CheatingDetected { check: "broadcast consistency check", .. }), "{e:?}");
    }
}

/// A wrong share at the output opening (after the computation's MAC check passed) is caught by
/// the second MAC check, before any output is returned: for an output to everyone and for one
/// revealed to a single party.
#[test]
fn wrong_share_at_output_is_caught_by_the_output_mac_check() {
    for to in [None, Some(vec![1])] {
        let mut b = Builder::new(FieldKind::Prime, 3);
        let x = b.input(0, Kind::Field);
        let y = b.input(2, Kind::Field);
        let m = b.mul(x, y);
        b.output(m, Kind::Field, to.clone());
        let r = online_with_cheater(network(3), &b.build(), 0, Cheat::WrongOutputShare);
        for (i, out) in r.iter().enumerate().skip(1) {
            assert_eq!(out.as_ref().unwrap_err(), &SpdzError::MacCheckFailed { phase: "output" }, "party {i} {to:?}");
        }
    }
}

/// An additive error in a Beaver opening turns x·y into x·y + e·y. If a comparison on that product
/// opened its masked value c = x·y + e·y + r before any check, e = 2^64 would make c reveal y
/// (r is only 2^73 wide). Everything opened is MAC-checked before such a comparison: the honest
/// parties abort there, before the comparison's opening.
#[test]
fn additive_error_before_a_comparison_is_caught_before_the_comparison_opens() {
    for n in [2usize, 3] {
        let mut b = Builder::new(FieldKind::Prime, n);
        let x = b.input(0, Kind::Field);
        let y = b.input(n - 1, Kind::Field);
        let z = b.mul(x, y);
        let k = b.constant(const_u64(5));
        let c = b.lt(z, k, 32);
        b.output(c, Kind::Unsigned(0), None);
        let r = online_with_cheater(network(n), &b.build(), 0, Cheat::ShiftFirstOpen { by: 1 << 64 });
        for (i, out) in r.iter().enumerate().skip(1) {
            assert_eq!(
                out.as_ref().unwrap_err(),
                &SpdzError::MacCheckFailed { phase: "online phase (before a comparison)" },
                "party {i}"
            );
        }
    }
}
