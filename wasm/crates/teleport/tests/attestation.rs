//! The session's attestation (issue 17, item 8): the enclave answers its verifiers' fresh
//! challenge and takes nothing before; both parties refuse evidence recorded in an earlier
//! session; the evaluator's and the garbler's secrets open only under their own role.

mod common;

use common::*;
use webmpc_core::channel::memory::{network, Tamper};
use webmpc_core::channel::PartyId;
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_teleport::driver::GarblerSession;
use webmpc_teleport::evidence::{self, Challenge, Verifier};
use webmpc_teleport::frames::{self, tag};
use webmpc_teleport::machine::{Config, EnclaveMachine, EVALUATOR, GARBLER};
use webmpc_teleport::seal::{seal, Role};
use webmpc_teleport::{local, EvidenceRefusal, JobHeader, JobKind, Mode, Owner, TeleportError};

const CH: Challenge = Challenge { garbler: [1; 32], evaluator: [2; 32] };

fn drain(m: &mut EnclaveMachine) -> Vec<(u8, Vec<u8>)> {
    std::iter::from_fn(|| m.pull()).collect()
}

#[test]
fn the_enclave_takes_nothing_before_its_evidence_and_attests_its_challenge_once() {
    let job = JobHeader { sid: [9; 32], mode: Mode::SemiHonest, kind: JobKind::Rot { count: 1 } };
    let bytes = job.encode();
    // A job before the challenge: refused, the session ends with an Error to both.
    let mut m = EnclaveMachine::new([1; 32], Config::default());
    assert!(m.is_idle() && !m.is_attested());
    let sealed = seal(Role::Garbler, &m.public_key(), &bytes, &[0; 16], [3; 32]).unwrap();
    assert_eq!(m.push(GARBLER, &frames::garbler_job(&bytes, &sealed)).unwrap_err().code(), "UNEXPECTED_MESSAGE");
    assert_eq!(drain(&mut m).iter().filter(|(_, msg)| msg[0] == tag::ERROR).count(), 2);
    // The garbler cannot send the challenge (it reaches the enclave through the evaluator).
    let mut m = EnclaveMachine::new([1; 32], Config::default());
    assert!(m.push(GARBLER, &frames::challenge(&CH)).is_err());

    let mut m = EnclaveMachine::new([1; 32], Config::default());
    assert_eq!(m.evidence_request(), None);
    assert!(m.attest(evidence::FORMAT_SIMULATED, b"unasked").is_err(), "no evidence before the challenge");
    let mut m = EnclaveMachine::new([1; 32], Config::default());
    m.push(EVALUATOR, &frames::challenge(&CH)).unwrap();
    let rd = m.evidence_request().expect("the challenge asks for evidence");
    assert_eq!(rd, evidence::report_data(&m.public_key(), &CH), "the report data binds the key and both nonces");
    assert!(drain(&mut m).is_empty(), "nothing goes out before the host attests");
    // Still nothing but the evidence is accepted.
    let mut waiting = EnclaveMachine::new([1; 32], Config::default());
    waiting.push(EVALUATOR, &frames::challenge(&CH)).unwrap();
    assert!(waiting.push(EVALUATOR, &frames::rot_next(0)).is_err());
    let (format, ev) = local::attest(&rd).unwrap();
    m.attest(format, &ev).unwrap();
    let out = drain(&mut m);
    assert_eq!(out.iter().map(|(to, msg)| (*to, msg[0])).collect::<Vec<_>>(), [(GARBLER, tag::EVIDENCE), (EVALUATOR, tag::EVIDENCE)]);
    assert_eq!(evidence::verify(&out[0].1[1..], &local::policy(), Verifier::Garbler, &CH.garbler).unwrap(), (m.public_key(), CH));
    assert!(m.is_attested() && m.is_idle());
    assert_eq!(m.evidence_request(), None);
    // One challenge per session: a second one (a host fishing for fresh evidence) ends it.
    assert_eq!(m.push(EVALUATOR, &frames::challenge(&CH)).unwrap_err().code(), "UNEXPECTED_MESSAGE");
}

#[test]
fn evidence_recorded_in_an_earlier_session_is_refused_by_both_parties() {
    // Session 1: a host records the enclave's evidence (for the nonces of that session).
    let mut old = local::enclave().unwrap();
    old.push(EVALUATOR, &frames::challenge(&CH)).unwrap();
    let (format, ev) = local::attest(&old.evidence_request().unwrap()).unwrap();
    old.attest(format, &ev).unwrap();
    let recorded = drain(&mut old).remove(0).1;
    // The garbler's fresh nonce is not in it.
    let err = GarblerSession::from_evidence(&recorded, &local::policy(), &[7; 32], &mut Prg::from_entropy().unwrap());
    assert_eq!(err.err().unwrap(), TeleportError::EvidenceRefused(EvidenceRefusal::Stale));

    // Session 2, run by the drivers: the host answers the new challenge with the recording.
    let c = circuit("adder64.txt");
    let bin = c.to_binary();
    let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], Mode::Malicious, local::random_sid().unwrap());
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let x = Tamper::new(x, move |to: PartyId, _, m: &mut Vec<u8>| {
        if to == PEERS.evaluator && m.get(1) == Some(&tag::EVIDENCE) {
            m.truncate(1);
            m.extend_from_slice(&recorded);
        }
    });
    let mut machine = local::enclave().unwrap();
    let (a, b) = gc_run(g, e, x, &mut machine, &job, &bin, (&u64_bits(1), &u64_bits(2)));
    assert_eq!(b.unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::Stale));
    assert!(a.is_err());
}

#[test]
fn each_party_checks_its_own_nonce() {
    // The evaluator relays a challenge with another garbler nonce than P1 sent: P1 refuses.
    let c = circuit("adder64.txt");
    let bin = c.to_binary();
    let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], Mode::SemiHonest, local::random_sid().unwrap());
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    // P1 → P2 message 0 is P1's nonce: the evaluator (or whoever relays) sees another one.
    let g = Tamper::new(g, |to: PartyId, i, m: &mut Vec<u8>| {
        if to == PEERS.evaluator && i == 0 {
            m[0] ^= 1;
        }
    });
    let mut machine = local::enclave().unwrap();
    let (a, _) = gc_run(g, e, x, &mut machine, &job, &bin, (&u64_bits(1), &u64_bits(2)));
    assert_eq!(a.unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::Stale));
}

#[test]
fn each_partys_secret_opens_only_under_its_own_role() {
    let job = JobHeader { sid: [9; 32], mode: Mode::SemiHonest, kind: JobKind::Rot { count: 10 } };
    let bytes = job.encode();
    let attested = || {
        let mut m = local::enclave().unwrap();
        m.push(EVALUATOR, &frames::challenge(&CH)).unwrap();
        let (f, ev) = local::attest(&m.evidence_request().unwrap()).unwrap();
        m.attest(f, &ev).unwrap();
        drain(&mut m);
        m
    };
    // The garbler's sealed seed, replayed by the evaluator as its own k2: it does not open.
    let mut m = attested();
    let garblers = seal(Role::Garbler, &m.public_key(), &bytes, &[5; 16], [3; 32]).unwrap();
    assert_eq!(m.push(EVALUATOR, &frames::evaluator_job(&bytes, &garblers)).unwrap_err(), TeleportError::SealOpenFailed);
    // And the other way round.
    let mut m = attested();
    let evaluators = seal(Role::Evaluator, &m.public_key(), &bytes, &frames::rot_input(Block::ZERO), [3; 32]).unwrap();
    assert_eq!(m.push(GARBLER, &frames::garbler_job(&bytes, &evaluators)).unwrap_err(), TeleportError::SealOpenFailed);
    // k2 in the clear (the message before sealing) is refused, not used.
    let mut m = attested();
    let e = m.push(EVALUATOR, &frames::evaluator_job(&bytes, &[7; 16])).unwrap_err();
    assert!(matches!(e, TeleportError::Malformed(_) | TeleportError::SealOpenFailed), "{e:?}");
}
