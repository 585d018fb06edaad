//! `webmpc-enclave-program`: one attested teleport session per process over stdin/stdout (see the
//! library docs for the framing): one evidence and key, then jobs one after the other until stdin
//! ends. The Node enclave-server spawns one per client connection.
//!
//! ```text
//! webmpc-enclave-program [--evidence-key FILE] [--max-wires N] [--max-gates N] [--max-rots N]
//!                        [--max-jobs N] [--max-memory BYTES]
//! webmpc-enclave-program --print-measurement        # hex SHA-256 of this binary (pin it)
//! webmpc-enclave-program --print-identity [--evidence-key FILE]   # hex Ed25519 evidence key
//! ```
//!
//! `FILE` holds 64 hex digits (the Ed25519 seed of the software evidence key); without it a fresh
//! key is made per process. The limits bound what one session may make the program do
//! (`webmpc_teleport::machine::Config`: wires of a circuit, gates and ROTs of a job, jobs of the
//! session, memory a job declares). Exit codes: 0 the input ended between jobs, 1 a job failed
//! (an `Error` message was sent to both peers), 2 bad usage, broken input, or input that ended
//! mid-job.

use std::io::{self, BufReader, BufWriter};
use std::process::ExitCode;
use webmpc_enclave_program::{measurement, serve, Outcome};
use webmpc_teleport::evidence::{SimulatedSigner, FORMAT_SIMULATED};
use webmpc_teleport::machine::{Config, EnclaveMachine};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn read_key(path: &str) -> Result<[u8; 32], String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let t = text.trim();
    if t.len() != 64 || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("{path}: expected 64 hex digits"));
    }
    let mut k = [0u8; 32];
    for (i, o) in k.iter_mut().enumerate() {
        *o = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
    }
    Ok(k)
}

/// The positive number after `flag`.
fn number<T: std::str::FromStr + PartialOrd + Default>(it: &mut std::slice::Iter<'_, String>, flag: &str) -> Result<T, String> {
    it.next()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > T::default())
        .ok_or_else(|| format!("{flag} needs a positive number"))
}

fn run() -> Result<ExitCode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut key = None;
    let mut cfg = Config::default();
    let (mut print_measurement, mut print_identity) = (false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--evidence-key" => key = Some(read_key(it.next().ok_or("--evidence-key needs a file")?)?),
            "--max-wires" => cfg.max_wires = number(&mut it, a)?,
            "--max-gates" => cfg.max_gates = number(&mut it, a)?,
            "--max-rots" => cfg.max_rots = number(&mut it, a)?,
            "--max-jobs" => cfg.max_jobs = number(&mut it, a)?,
            "--max-memory" => cfg.max_memory = number(&mut it, a)?,
            "--print-measurement" => print_measurement = true,
            "--print-identity" => print_identity = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let m = measurement().map_err(|e| format!("cannot hash this program: {e}"))?;
    if print_measurement {
        println!("{}", hex(&m));
        return Ok(ExitCode::SUCCESS);
    }
    let key = match key {
        Some(k) => k,
        None => {
            let mut k = [0u8; 32];
            webmpc_core::random::fill(&mut k).map_err(|e| e.to_string())?;
            k
        }
    };
    let signer = SimulatedSigner::new(key, m);
    if print_identity {
        println!("{}", hex(&signer.public()));
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "webmpc-enclave-program: SIMULATION BACKEND — no enclave, no hardware protection; the host can read \
         every seed and every party's input to the enclave. Evidence is signed by a software key and marked \
         simulated. AES backend: {}. Limits per session: {} wires, {} gates and {} ROTs per job, {} jobs, {} MiB \
         per job.",
        webmpc_core::aes::Backend::best().name(),
        cfg.max_wires,
        cfg.max_gates,
        cfg.max_rots,
        cfg.max_jobs,
        cfg.max_memory >> 20
    );
    let mut entropy = [0u8; 32];
    webmpc_core::random::fill(&mut entropy).map_err(|e| e.to_string())?;
    let mut machine = EnclaveMachine::new(entropy, cfg);
    let attest = |report_data: &[u8; 32]| (FORMAT_SIMULATED, signer.evidence(report_data));
    let mut input = BufReader::with_capacity(1 << 20, io::stdin().lock());
    let mut output = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    match serve(&mut machine, attest, &mut input, &mut output).map_err(|e| format!("stdio: {e}"))? {
        Outcome::Closed(_) => Ok(ExitCode::SUCCESS),
        Outcome::Failed(code) => {
            eprintln!("webmpc-enclave-program: job failed: {code}");
            Ok(ExitCode::from(1))
        }
        Outcome::Truncated => Err("input ended in the middle of a job".into()),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("webmpc-enclave-program: {e}");
            ExitCode::from(2)
        }
    }
}
