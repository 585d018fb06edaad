//! The Open Enclave shims (`enclave-server/openenclave/enclave/enclave.c`, `host/host.c`) compiled
//! with plain cmake + gcc against the **no_std** staticlib, with the `oe_*` runtime stubbed by the
//! harness, running AES-128's known answer through GC teleportation in both modes over the same
//! stdio framing as the simulation program; and the host's `oe_verify_evidence` claim checks.
//!
//! Building the staticlib here is also the `no_std` proof: without `std` the crate defines its own
//! `#[panic_handler]`, so if any dependency linked std the build would fail with a duplicate
//! `panic_impl` lang item.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use webmpc_teleport::evidence::{OeClaims, Policy};
use webmpc_teleport::{JobHeader, JobKind, Mode, Owner, TeleportError};

const STUB_UNIQUE_ID: [u8; 32] = *b"webmpc/teleport/oe-harness/v1..\0";

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

/// Parses the harness's stub evidence ("OESTUB01" ‖ unique id ‖ custom claims), standing in for
/// `oe_verify_evidence` on the garbler's side.
fn stub_verifier(ev: &[u8]) -> Result<OeClaims, TeleportError> {
    if ev.len() != 72 || &ev[..8] != b"OESTUB01" {
        return Err(TeleportError::EvidenceRefused(webmpc_teleport::EvidenceRefusal::Invalid));
    }
    Ok(OeClaims { unique_id: ev[8..40].try_into().unwrap(), report_data: ev[40..72].try_into().unwrap() })
}

#[test]
fn aes_128_known_answer_through_the_open_enclave_shims() {
    let exe = harness();
    let (c, key, pt) = aes();
    let m = [STUB_UNIQUE_ID];
    let policy = Policy { measurements: &m, oe_verifier: Some(&stub_verifier), ..Policy::default() };
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
    // A garbler pinning another measurement refuses the shim's evidence (which the evaluator,
    // pinning the right one, relayed).
    let other = [[0u8; 32]];
    let refusing = Policy { measurements: &other, oe_verifier: Some(&stub_verifier), ..Policy::default() };
    let job = JobHeader { sid: sid(), mode: Mode::Malicious, kind: JobKind::Rot { count: 10 } };
    let mut e = Enclave::spawn(Command::new(&exe).arg("stub.signed"));
    let err = run_rot(&mut e, &job, (&refusing, &policy)).unwrap_err();
    assert_eq!(err.code(), "ENCLAVE_MEASUREMENT_MISMATCH");
    e.wait();
}

#[test]
fn host_verify_evidence_checks_measurement_and_report_data() {
    let exe = harness();
    let rd = [7u8; 32];
    let ev = [b"OESTUB01".as_slice(), &STUB_UNIQUE_ID, &rd].concat();
    let path = std::env::temp_dir().join(format!("webmpc-oe-evidence-{}", std::process::id()));
    std::fs::write(&path, &ev).unwrap();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let verify = |m: &[u8], r: &[u8]| {
        let out = Command::new(&exe).arg("--verify-evidence").arg(&path).arg(hex(m)).arg(hex(r)).output().unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap().trim().to_string())
    };
    assert_eq!(verify(&STUB_UNIQUE_ID, &rd), (Some(0), "ok".into()));
    assert_eq!(verify(&[1; 32], &rd), (Some(1), "measurement-mismatch".into()));
    assert_eq!(verify(&STUB_UNIQUE_ID, &[8; 32]), (Some(1), "report-data-mismatch".into()));
    std::fs::write(&path, b"not evidence").unwrap();
    assert_eq!(verify(&STUB_UNIQUE_ID, &rd), (Some(1), "invalid".into()));
    let _ = std::fs::remove_file(&path);
}
