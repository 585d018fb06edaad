//! Teleported random OT against the contract KOS meets (`webmpc-ot`'s `tests/functionality.rs`:
//! correct chosen message, the other one unrelated, balanced random choices, at the same sizes),
//! in both modes through the `RotSender` / `RotReceiver` traits; a malicious enclave or sender
//! caught by the chunk τ; and a host editing a sealed chunk caught by its authentication.

mod common;

use webmpc_core::channel::memory::{network, Tamper};
use webmpc_core::channel::PartyId;
use webmpc_ot::contract::{check_random, SIZES};
use webmpc_teleport::local::{self, random_sid, rot_pair};
use webmpc_teleport::frames::tag;
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

/// A malicious ROT job whose enclave deviates (`deviate(type, counter, plaintext)` edits its
/// sealed replies before sealing), whose link is edited by a host (`edit_link(index, message)`),
/// or whose sender's messages are edited; returns the receiver's result.
fn rot_with(
    deviate: impl FnMut(u8, u64, &mut Vec<u8>) + 'static,
    edit_link: impl Fn(usize, &mut Vec<u8>),
    edit_sender: impl Fn(usize, &mut Vec<u8>),
) -> Result<(), TeleportError> {
    let job = JobHeader { sid: random_sid().unwrap(), mode: Mode::Malicious, kind: JobKind::Rot { count: 150_000 } };
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let g = Tamper::new(g, move |to: PartyId, i, m: &mut Vec<u8>| if to == 1 { edit_sender(i, m) });
    // Link frames to P2: 0 and 1 the evidence copies, then chunk j at 2 + j.
    let x = Tamper::new(x, move |to: PartyId, i, m: &mut Vec<u8>| if to == 1 { common::edit_link(m, 1, |inner| edit_link(i, inner)) });
    let mut machine = local::enclave().unwrap();
    machine.deviate(deviate);
    common::rot_run(g, e, x, &mut machine, &job).1.map(|_| ())
}

#[test]
fn a_malicious_enclave_or_sender_fails_the_chunk_tau() {
    let honest = |_: u8, _: u64, _: &mut Vec<u8>| {};
    assert!(rot_with(honest, |_, _| {}, |_, _| {}).is_ok());
    // The enclave's chunk j before sealing: tag, u64 j, u32 n, R's, σ's.
    let r = rot_with(|t, j, m| if t == tag::ROT_CHUNK && j == 1 { m[1 + 12 + 16 * 7] ^= 1 }, |_, _| {}, |_, _| {});
    assert_eq!(r.unwrap_err(), TeleportError::CheckFailed(Check::RotTau));
    let r = rot_with(|t, j, m| if t == tag::ROT_CHUNK && j == 2 { let n = m.len(); m[n - 3] ^= 4 }, |_, _| {}, |_, _| {});
    assert_eq!(r.unwrap_err(), TeleportError::CheckFailed(Check::RotTau));
    // Sender → receiver: 0 its nonce, 1 job header, 2 sealed seed, 3 τ list.
    let r = rot_with(honest, |_, _| {}, |i, m| if i == 3 { m[40] ^= 1 });
    assert_eq!(r.unwrap_err(), TeleportError::CheckFailed(Check::RotTau));
}

#[test]
fn a_host_that_edits_a_sealed_rot_chunk_is_caught_by_its_authentication() {
    let honest = |_: u8, _: u64, _: &mut Vec<u8>| {};
    // Link frames to P2: 0, 1 evidence, then chunk j at 2 + j; the index, a block, the tag.
    for at in [1usize, 9, 100, 10_000] {
        let r = rot_with(honest, move |i, m| if i == 3 { let k = at.min(m.len() - 1); m[k] ^= 1 }, |_, _| {});
        assert_eq!(r.unwrap_err(), TeleportError::Malformed("ROT chunk"), "byte {at}");
    }
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
