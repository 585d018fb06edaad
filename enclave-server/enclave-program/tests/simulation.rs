//! The simulation backend as a process: AES-128's known answer through GC teleportation in both
//! modes, malicious-mode ROTs against the sender's pairs, the client's refusal of simulated
//! evidence unless it opts in, a pinned measurement, and a refused job reported to both parties.

mod common;

use common::*;
use sha2::{Digest, Sha256};
use std::process::Command;
use webmpc_teleport::evidence::Policy;
use webmpc_teleport::{JobHeader, JobKind, Mode, Owner, TeleportError};

const BIN: &str = env!("CARGO_BIN_EXE_webmpc-enclave-program");

fn measurement() -> [u8; 32] {
    Sha256::digest(std::fs::read(BIN).unwrap()).into()
}

#[test]
fn print_measurement_is_the_binary_hash() {
    let out = Command::new(BIN).arg("--print-measurement").output().unwrap();
    let hex: String = measurement().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), hex);
}

#[test]
fn aes_128_known_answer_through_the_process_in_both_modes() {
    let (c, key, pt) = aes();
    let m = [measurement()];
    let policy = Policy { allow_simulated: true, measurements: &m, ..Policy::default() };
    for mode in [Mode::SemiHonest, Mode::Malicious] {
        let job = JobHeader {
            sid: sid(),
            mode,
            kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
        };
        let mut e = Enclave::spawn(&mut Command::new(BIN));
        let (g, v) = run_gc(&mut e, &job, &c.to_binary(), &key, &pt, &policy);
        g.unwrap();
        assert_eq!(out_hex(&v.unwrap()), "69c4e0d86a7b0430d8cdb78070b4c55a");
        assert_eq!(e.wait(), 0);
    }
}

#[test]
fn malicious_rots_through_the_process() {
    let m = [measurement()];
    let policy = Policy { allow_simulated: true, measurements: &m, ..Policy::default() };
    let job = JobHeader { sid: sid(), mode: Mode::Malicious, kind: JobKind::Rot { count: 100_000 } };
    let mut e = Enclave::spawn(&mut Command::new(BIN));
    let (choices, outs, pairs) = run_rot(&mut e, &job, (&policy, &policy)).unwrap();
    assert_eq!(outs.len(), 100_000);
    for i in 0..outs.len() {
        assert_eq!(outs[i], pairs[i][choices[i] as usize]);
    }
    assert_eq!(e.wait(), 0);
}

#[test]
fn simulated_evidence_is_refused_unless_allowed_and_pinned() {
    let (c, key, pt) = aes();
    let job = JobHeader {
        sid: sid(),
        mode: Mode::SemiHonest,
        kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
    };
    let m = [measurement()];
    let accept = Policy { allow_simulated: true, measurements: &m, ..Policy::default() };
    for (policy, code) in [
        (Policy { allow_simulated: false, measurements: &m, ..Policy::default() }, "SIMULATED_ENCLAVE_REFUSED"),
        (Policy { allow_simulated: true, measurements: &[[0; 32]], ..Policy::default() }, "ENCLAVE_MEASUREMENT_MISMATCH"),
    ] {
        // The garbler refuses what the evaluator accepted and relayed.
        let mut e = Enclave::spawn(&mut Command::new(BIN));
        let (g, v) = run_gc_jobs(&mut e, std::slice::from_ref(&job), &c.to_binary(), &key, &pt, (&policy, &accept));
        assert_eq!(g.unwrap_err().code(), code);
        assert!(v.is_err(), "the evaluator cannot finish without the garbler");
        assert_eq!(e.wait(), 0, "no job started: the session just closed");
        // The evaluator checks its copy against its own policy too.
        let mut e = Enclave::spawn(&mut Command::new(BIN));
        let (_, v) = run_gc_jobs(&mut e, std::slice::from_ref(&job), &c.to_binary(), &key, &pt, (&accept, &policy));
        assert_eq!(v.unwrap_err().code(), code);
        assert_eq!(e.wait(), 0);
    }
}

#[test]
fn one_process_serves_many_jobs_of_one_session() {
    let (c, key, pt) = aes();
    let m = [measurement()];
    let policy = Policy { allow_simulated: true, measurements: &m, ..Policy::default() };
    let jobs: Vec<JobHeader> = [Mode::SemiHonest, Mode::Malicious, Mode::SemiHonest]
        .into_iter()
        .map(|mode| JobHeader {
            sid: sid(),
            mode,
            kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
        })
        .collect();
    let mut e = Enclave::spawn(&mut Command::new(BIN));
    let (g, v) = run_gc_jobs(&mut e, &jobs, &c.to_binary(), &key, &pt, (&policy, &policy));
    g.unwrap();
    let outs = v.unwrap();
    assert_eq!(outs.len(), 3);
    for out in &outs {
        assert_eq!(out_hex(out), "69c4e0d86a7b0430d8cdb78070b4c55a");
    }
    assert_eq!(e.wait(), 0, "the input ended between jobs");
}

#[test]
fn a_job_the_enclave_refuses_reaches_the_evaluator_as_a_typed_error() {
    // The evaluator names x2 bits that do not fit: the enclave refuses the upload.
    let (c, key, pt) = aes();
    let m = [measurement()];
    let policy = Policy { allow_simulated: true, measurements: &m, ..Policy::default() };
    let job = JobHeader {
        sid: sid(),
        mode: Mode::SemiHonest,
        kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
    };
    let mut e = Enclave::spawn(Command::new(BIN).args(["--max-wires", "1000"]));
    let (_, v) = run_gc(&mut e, &job, &c.to_binary(), &key, &pt, &policy);
    assert_eq!(v.unwrap_err(), TeleportError::Remote("TOO_LARGE".into()));
    assert_eq!(e.wait(), 1);
}
