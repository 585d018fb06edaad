//! Teleported random OT against the contract KOS meets (`webmpc-ot`'s `tests/functionality.rs`:
//! correct chosen message, the other one unrelated, balanced random choices, at the same sizes),
//! in both modes through the `RotSender` / `RotReceiver` traits; and a malicious enclave or sender
//! caught by the chunk τ.

mod common;

use futures::join;
use webmpc_core::channel::memory::{network, run_local, Tamper};
use webmpc_core::channel::PartyId;
use webmpc_core::prg::Prg;
use webmpc_ot::contract::{check_random, SIZES};
use webmpc_teleport::driver::{self, EvaluatorSession, GarblerSession, Peers};
use webmpc_teleport::local::{self, random_sid, rot_pair};
use webmpc_teleport::{Check, JobHeader, JobKind, Mode, TeleportError};



#[test]
fn teleported_rot_meets_the_kos_contract_at_every_size() {
    for mode in [Mode::SemiHonest, Mode::Malicious] {
        let (mut s, mut r) = rot_pair(mode).unwrap();
        for n in SIZES {
            check_random(&mut s, &mut r, n);
        }
    }
}

#[test]
fn the_ideal_functionality_meets_the_same_contract() {
    // The check itself is sound: the trusted dealer passes it too.
    let (mut s, mut r) = webmpc_ot::ideal::pair_random().unwrap();
    for n in [0, 1, 1000] {
        check_random(&mut s, &mut r, n);
    }
}

/// A malicious ROT job whose enclave (or sender) messages are edited; returns the receiver's result.
fn rot_with(edit_enclave: impl Fn(usize, &mut Vec<u8>), edit_sender: impl Fn(usize, &mut Vec<u8>)) -> Result<(), TeleportError> {
    let peers = Peers::default();
    let job = JobHeader { sid: random_sid().unwrap(), mode: Mode::Malicious, kind: JobKind::Rot { count: 150_000 } };
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let g = Tamper::new(g, move |to: PartyId, i, m: &mut Vec<u8>| if to == 1 { edit_sender(i, m) });
    // Link frames to P2: 0 and 1 the evidence copies, then chunk j at 2 + j.
    let x = Tamper::new(x, move |to: PartyId, i, m: &mut Vec<u8>| if to == 1 { common::edit_link(m, 1, |inner| edit_enclave(i, inner)) });
    let (mut machine, ev) = local::enclave().unwrap();
    let pol = local::policy();
    let (job, pol) = (&job, &pol);
    let (_, b, _) = run_local(async {
        join!(
            async move {
                let r = async {
                    let mut prg = Prg::from_entropy().unwrap();
                    let mut s = GarblerSession::connect(&g, &peers, pol, &mut prg).await?;
                    driver::rot_sender(&g, &peers, &mut s, job, &mut prg, |_, _| {}).await
                }
                .await;
                drop(g);
                r
            },
            async move {
                let r = async {
                    let mut s = EvaluatorSession::connect(&e, &peers, pol).await?;
                    driver::rot_receiver(&e, &peers, &mut s, job, &mut Prg::from_entropy().unwrap(), |_, _, _| {}).await
                }
                .await;
                drop(e);
                r
            },
            async move {
                let r = driver::enclave_party(&x, &peers, &mut machine, &ev).await;
                drop(x);
                r
            }
        )
    })
    .unwrap();
    b
}

#[test]
fn a_malicious_enclave_or_sender_fails_the_chunk_tau() {
    assert!(rot_with(|_, _| {}, |_, _| {}).is_ok());
    // Enclave → receiver: 0, 1 evidence, then chunks 0, 1, 2 (index 2 + j). Layout: tag, u64, u32, R's, σ's.
    let r = rot_with(|i, m| if i == 3 { m[1 + 12 + 16 * 7] ^= 1 }, |_, _| {});
    assert_eq!(r.unwrap_err(), TeleportError::CheckFailed(Check::RotTau));
    let r = rot_with(|i, m| if i == 4 { let n = m.len(); m[n - 3] ^= 4 }, |_, _| {});
    assert_eq!(r.unwrap_err(), TeleportError::CheckFailed(Check::RotTau));
    // Sender → receiver: 0 job header, 1 sealed seed, 2 τ list.
    let r = rot_with(|_, _| {}, |i, m| if i == 2 { m[40] ^= 1 });
    assert_eq!(r.unwrap_err(), TeleportError::CheckFailed(Check::RotTau));
}

#[test]
fn pure_m_rot_matches_both_sides() {
    use webmpc_teleport::rot::{m_rot, RotReceiver as P2, RotSender as P1};
    let job = JobHeader { sid: [3; 32], mode: Mode::Malicious, kind: JobKind::Rot { count: 70_000 } };
    let (k1, k2) = (webmpc_core::Block::from_u128(11), webmpc_core::Block::from_u128(22));
    let chunks = m_rot(&job, k1, k2).unwrap();
    let s = P1::new(&job, k1).unwrap();
    let r = P2::new(&job, k2, Some(s.taus())).unwrap();
    for (j, ch) in chunks.iter().enumerate() {
        let out = r.accept(j as u64, ch).unwrap();
        let (pairs, _) = s.chunk(j as u64);
        for ((m, p), b) in out.iter().zip(&pairs).zip(r.choices(j as u64)) {
            assert_eq!(*m, p[b as usize]);
        }
    }
}
