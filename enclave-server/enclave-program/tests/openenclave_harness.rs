//! The Open Enclave shims (`enclave-server/openenclave/enclave/enclave.c`, `host/host.c`) compiled
//! with plain cmake + gcc against the **no_std** staticlib, with the `oe_*` runtime stubbed by the
//! harness, running AES-128's known answer through GC teleportation in both modes over the same
//! stdio framing as the simulation program (the enclave attesting inside `ecall_push` when the
//! session's challenge arrives); the host's claim extraction (`--verify-evidence`) feeding the
//! crate's policy, which refuses a debug enclave, another signer or measurement; and the host
//! reporting, not stalling, on a frame over the limit.
//!
//! Building the staticlib here is also the `no_std` proof: without `std` the crate defines its own
//! `#[panic_handler]`, so if any dependency linked std the build would fail with a duplicate
//! `panic_impl` lang item.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use webmpc_teleport::evidence::{parse_host_claims, OeClaims, OePolicy, Policy, TcbStatus, UP_TO_DATE};
use webmpc_teleport::{EvidenceRefusal, JobHeader, JobKind, Mode, Owner, TeleportError};

const STUB_UNIQUE_ID: [u8; 32] = *b"webmpc/teleport/oe-harness/v1..\0";
const STUB_SIGNER_ID: [u8; 32] = *b"webmpc/teleport/oe-harness-signr";

fn run(cmd: &mut Command) {
    let st = cmd.status().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(st.success(), "{cmd:?} failed");
}

/// Builds the no_std staticlib and the harness once per test binary.
fn harness() -> PathBuf {
    static ONCE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let target = root.join("wasm/target/oe-harness");
        run(Command::new(env!("CARGO"))
            .args(["build", "-p", "webmpc-teleport", "--no-default-features", "--release", "--quiet"])
            .args(["--config", "profile.release.lto=false", "--config", "profile.release.codegen-units=16"])
            .arg("--manifest-path")
            .arg(root.join("wasm/Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            .env("RUSTFLAGS", "-C target-feature=+aes,+sse2"));
        let lib = target.join("release/libwebmpc_teleport.a");
        let build = target.join("cmake");
        // A cache written for another source tree (a moved or copied checkout with its target
        // directory) makes cmake refuse to configure: start that build directory afresh.
        let source = root.join("enclave-server/openenclave/harness");
        if let Ok(cache) = std::fs::read_to_string(build.join("CMakeCache.txt")) {
            let home = std::fs::canonicalize(&source).unwrap_or_else(|_| source.clone());
            if !cache.lines().any(|l| l.strip_prefix("CMAKE_HOME_DIRECTORY:INTERNAL=") == Some(&*home.to_string_lossy())) {
                std::fs::remove_dir_all(&build).expect("remove the stale cmake build directory");
            }
        }
        run(Command::new("cmake")
            .arg("-S")
            .arg(root.join("enclave-server/openenclave/harness"))
            .arg("-B")
            .arg(&build)
            .arg(format!("-DWEBMPC_TELEPORT_LIB={}", lib.display()))
            .arg("-DCMAKE_BUILD_TYPE=Release")
            .stdout(std::process::Stdio::null()));
        run(Command::new("cmake").arg("--build").arg(&build).stdout(std::process::Stdio::null()));
        build.join("webmpc_oe_harness")
    })
    .clone()
}

/// The garbler's Open Enclave verifier: the host's `--verify-evidence` (the harness stands in
/// for `oe_verify_evidence`), its output parsed into claims.
fn host_verifier(ev: &[u8]) -> Result<OeClaims, TeleportError> {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("webmpc-oe-evidence-{}-{k}", std::process::id()));
    std::fs::write(&path, ev).unwrap();
    let out = Command::new(harness()).arg("--verify-evidence").arg(&path).output().unwrap();
    let _ = std::fs::remove_file(&path);
    if !out.status.success() {
        return Err(TeleportError::EvidenceRefused(EvidenceRefusal::Invalid));
    }
    parse_host_claims(&String::from_utf8(out.stdout).unwrap())
}

fn oe_policy<'a>(measurements: &'a [[u8; 32]], signers: &'a [[u8; 32]]) -> OePolicy<'a> {
    OePolicy { signers, product_id: 1, min_svn: 1, measurements, tcb: UP_TO_DATE }
}

#[test]
fn aes_128_known_answer_through_the_open_enclave_shims() {
    let exe = harness();
    let (c, key, pt) = aes();
    let (m, s) = ([STUB_UNIQUE_ID], [STUB_SIGNER_ID]);
    let policy = Policy { open_enclave: Some(oe_policy(&m, &s)), oe_verifier: Some(&host_verifier), ..Policy::default() };
    for mode in [Mode::SemiHonest, Mode::Malicious] {
        let job = JobHeader {
            sid: sid(),
            mode,
            kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
        };
        let mut e = Enclave::spawn(Command::new(&exe).arg("stub.signed"));
        let (g, v) = run_gc(&mut e, &job, &c.to_binary(), &key, &pt, &policy);
        g.unwrap();
        assert_eq!(out_hex(&v.unwrap()), "69c4e0d86a7b0430d8cdb78070b4c55a");
        assert_eq!(e.wait(), 0);
    }
}

#[test]
fn the_policy_refuses_a_debug_enclave_another_signer_or_measurement_through_the_shims() {
    let exe = harness();
    let (m, s) = ([STUB_UNIQUE_ID], [STUB_SIGNER_ID]);
    let good = Policy { open_enclave: Some(oe_policy(&m, &s)), oe_verifier: Some(&host_verifier), ..Policy::default() };
    let job = || JobHeader { sid: sid(), mode: Mode::Malicious, kind: JobKind::Rot { count: 10 } };
    // An enclave created in SGX debug mode (its host can read its memory): both parties refuse it,
    // whatever else matches; the evaluator, checking first, names why.
    let (c, key, pt) = aes();
    let gc = JobHeader {
        sid: sid(),
        mode: Mode::Malicious,
        kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
    };
    let mut e = Enclave::spawn(Command::new(&exe).arg("stub.signed").arg("--debug"));
    let (g, v) = run_gc_jobs(&mut e, std::slice::from_ref(&gc), &c.to_binary(), &key, &pt, (&good, &good));
    assert_eq!(v.unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::DebugEnclave));
    assert!(g.is_err());
    e.wait();
    // Another measurement, signer or a too-low version: the garbler refuses what the evaluator
    // (pinning the right identity) accepted and relayed.
    let (other_m, other_s) = ([[0u8; 32]], [[1u8; 32]]);
    for (refusing, why) in [
        (Policy { open_enclave: Some(oe_policy(&other_m, &s)), ..good }, EvidenceRefusal::MeasurementMismatch),
        (Policy { open_enclave: Some(oe_policy(&m, &other_s)), ..good }, EvidenceRefusal::SignerMismatch),
        (Policy { open_enclave: Some(OePolicy { min_svn: 2, ..oe_policy(&m, &s) }), ..good }, EvidenceRefusal::SvnTooLow),
    ] {
        let mut e = Enclave::spawn(Command::new(&exe).arg("stub.signed"));
        let err = run_rot(&mut e, &job(), (&refusing, &good)).unwrap_err();
        assert_eq!(err, TeleportError::EvidenceRefused(why));
        e.wait();
    }
}

#[test]
fn host_verify_evidence_prints_the_claims_the_policy_reads() {
    let exe = harness();
    let rd = [7u8; 32];
    let mut ev = b"OESTUB02".to_vec();
    ev.extend_from_slice(&STUB_UNIQUE_ID);
    ev.extend_from_slice(&STUB_SIGNER_ID);
    ev.extend_from_slice(&3u16.to_le_bytes());
    ev.extend_from_slice(&9u32.to_le_bytes());
    ev.extend_from_slice(&3u64.to_le_bytes()); // debug | remote
    ev.extend_from_slice(&5u32.to_le_bytes()); // the harness's OE_SGX_TCB_STATUS_SW_HARDENING_NEEDED
    ev.extend_from_slice(&rd);
    let claims = host_verifier(&ev).unwrap();
    assert_eq!(
        claims,
        OeClaims {
            unique_id: STUB_UNIQUE_ID,
            signer_id: STUB_SIGNER_ID,
            product_id: 3,
            security_version: 9,
            debug: true,
            tcb_status: TcbStatus::SwHardeningNeeded,
            report_data: rd,
        }
    );
    assert_eq!(host_verifier(b"not evidence").unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::Invalid));
    // A claim of the wrong size is as good as missing: refused.
    let mut short = ev.clone();
    short.truncate(8 + 32 + 32 + 2 + 4 + 8 + 4 + 5);
    assert_eq!(host_verifier(&short).unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::Invalid));
    let _ = exe;
}

#[test]
fn the_host_reports_a_frame_over_the_limit_instead_of_stalling() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    use webmpc_enclave_program::{read_frame, MAX_FRAME};
    let mut child = Command::new(harness()).arg("stub.signed").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut frame = (MAX_FRAME as u32 + 1).to_le_bytes().to_vec();
    frame.push(1);
    let _ = stdin.write_all(&frame);
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let mut r = &out[..];
    let mut to = Vec::new();
    while let Some((peer, msg)) = read_frame(&mut r).unwrap() {
        match webmpc_teleport::frames::parse_error(&msg[1..]) {
            TeleportError::Remote { code, .. } => assert_eq!(code, "TOO_LARGE"),
            other => panic!("{other:?}"),
        }
        to.push(peer);
    }
    assert_eq!(to, [0, 1]);
}
