//! The simulation backend as a process: AES-128's known answer through GC teleportation in both
//! modes, malicious-mode ROTs against the sender's pairs, the client's refusal of simulated
//! evidence unless it opts in, a pinned measurement, a refused job reported to both parties, input
//! labels larger than a frame delivered in parts, and frames over the limit reported, not waited
//! for.

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
    let policy = Policy { allow_simulated: true, simulated_measurements: &m, ..Policy::default() };
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
    let policy = Policy { allow_simulated: true, simulated_measurements: &m, ..Policy::default() };
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
    let accept = Policy { allow_simulated: true, simulated_measurements: &m, ..Policy::default() };
    for (policy, code) in [
        (Policy { allow_simulated: false, simulated_measurements: &m, ..Policy::default() }, "SIMULATED_ENCLAVE_REFUSED"),
        (Policy { allow_simulated: true, simulated_measurements: &[[0; 32]], ..Policy::default() }, "ENCLAVE_MEASUREMENT_MISMATCH"),
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
    let policy = Policy { allow_simulated: true, simulated_measurements: &m, ..Policy::default() };
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
    let policy = Policy { allow_simulated: true, simulated_measurements: &m, ..Policy::default() };
    let job = JobHeader {
        sid: sid(),
        mode: Mode::SemiHonest,
        kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
    };
    let mut e = Enclave::spawn(Command::new(BIN).args(["--max-wires", "1000"]));
    let (_, v) = run_gc(&mut e, &job, &c.to_binary(), &key, &pt, &policy);
    match v.unwrap_err() {
        TeleportError::Remote { code, detail } => {
            assert_eq!(code, "TOO_LARGE");
            assert!(detail.contains("circuit wires") && detail.contains("1000"), "the detail names the limit: {detail}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.wait(), 1);
}

/// `y = x1 ⊕ (⊕ of x2's n bits)`: one garbler bit, `n` evaluator bits, one XOR per evaluator bit.
fn parity(n: usize) -> webmpc_circuit::Circuit {
    let mut text = format!("{n} {}\n2 1 {n}\n1 1\n\n", 2 * n + 1);
    let mut acc = 0;
    for i in 1..=n {
        text.push_str(&format!("2 1 {acc} {i} {} XOR\n", n + i));
        acc = n + i;
    }
    webmpc_circuit::Circuit::parse_bristol(&text).unwrap()
}

#[test]
fn input_labels_beyond_one_frame_reach_the_evaluator_through_the_process() {
    // Malicious mode: 16 + 128 bytes per evaluator input bit, so 120,000 bits make 17 MB of
    // labels and σ's, more than a 16 MiB frame (and than the Open Enclave host's 4 MiB buffer).
    let n = 120_000;
    let c = parity(n);
    let m = [measurement()];
    let policy = Policy { allow_simulated: true, simulated_measurements: &m, ..Policy::default() };
    let job = JobHeader {
        sid: sid(),
        mode: Mode::Malicious,
        kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
    };
    let x2: Vec<bool> = (0..n).map(|i| (i * 7 + i / 3) % 5 < 2).collect();
    let want = x2.iter().fold(true, |acc, &b| acc ^ b);
    let mut e = Enclave::spawn(&mut Command::new(BIN));
    let (g, v) = run_gc(&mut e, &job, &c.to_binary(), &[true], &x2, &policy);
    g.unwrap();
    assert_eq!(v.unwrap()[0], vec![want]);
    assert_eq!(e.wait(), 0);
}

#[test]
fn an_input_frame_over_the_limit_is_reported_to_both_peers_and_one_at_the_limit_is_read() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    use webmpc_enclave_program::{read_frame, MAX_FRAME};
    let talk = |frame_len: u32, body: usize| {
        let mut child = Command::new(BIN).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut frame = frame_len.to_le_bytes().to_vec();
        frame.push(1);
        frame.resize(4 + body, 0x03);
        // The program may stop reading once it has refused the frame.
        let _ = stdin.write_all(&frame);
        drop(stdin);
        let mut out = Vec::new();
        child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
        let code = child.wait().unwrap().code();
        let mut r = &out[..];
        let mut frames = Vec::new();
        while let Some(f) = read_frame(&mut r).unwrap() {
            frames.push(f);
        }
        (code, frames)
    };
    let errors = |frames: &[(u8, Vec<u8>)]| -> Vec<(u8, String)> {
        frames
            .iter()
            .map(|(to, m)| match webmpc_teleport::frames::parse_error(&m[1..]) {
                TeleportError::Remote { code, .. } => (*to, code),
                other => panic!("{other:?}"),
            })
            .collect()
    };
    // One byte over: refused from its length alone, both peers told, exit 1 — no waiting for
    // 16 MiB that will never come.
    let (code, frames) = talk(MAX_FRAME as u32 + 1, 1);
    assert_eq!(errors(&frames), [(0, "TOO_LARGE".to_string()), (1, "TOO_LARGE".to_string())]);
    assert_eq!(code, Some(1));
    // Exactly at the limit: read whole (a circuit piece before the session's challenge, refused as
    // out of place, not as too large).
    let (code, frames) = talk(MAX_FRAME as u32, MAX_FRAME);
    assert_eq!(errors(&frames), [(0, "UNEXPECTED_MESSAGE".to_string()), (1, "UNEXPECTED_MESSAGE".to_string())]);
    assert_eq!(code, Some(1));
}
