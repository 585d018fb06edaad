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
        let inputs: Vec<[u8; 16]> = p.inputs.iter().filter(|x| x.owner == i).map(|_| 7u128.to_le_bytes()).collect();
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
    assert_eq!(again.as_ref().unwrap_err(), &SpdzError::Poisoned);
}
