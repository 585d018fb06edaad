//! Native benchmark of n-party authenticated garbling, one JSON object per line: the `authgc`
//! suite's `native` rows. All parties run in this process on one thread (so every phase's time
//! is the sum of all parties' work), over the in-memory network.
//!
//! Per circuit (AES-128, SHA-256) and party count (2, 3, 4): the time of each phase as the paper
//! separates them — setup (building the preprocessors), function-independent (AND triples and
//! masks for the circuit's size), function-dependent (garbling, tables to the evaluator), online
//! (inputs, evaluation, outputs) — best of several sessions; and the bytes each party sends per
//! AND gate in the function-dependent phase, against the paper's 4(nκ + 1) bits per garbler.
//!
//! The preprocessor is the trusted dealer (`IdealPreprocessor`) until the real F_Pre is wired in
//! (`make_preprocessor` below is the one place to change): its setup and function-independent
//! rows measure the dealer, not a protocol.
//!
//! Usage: `bench-authgc [<directory of the reference Bristol circuits>] [--quick]`.

use std::path::PathBuf;
use std::time::Instant;
use webmpc_authgc::ideal::IdealPreprocessor;
use webmpc_authgc::online::local::{LocalAuthGc, LocalChannel};
use webmpc_authgc::online::{Options, PreparedCircuit, Recipients, Roles};
use webmpc_authgc::AuthGcError;
use webmpc_circuit::Circuit;
use webmpc_core::channel::Channel;
use webmpc_tools::row;

const SUITE: &str = "authgc";
const IMPL: &str = "webmpc-authgc (ideal F_Pre)";

/// The preprocessor every party uses (the setup phase).
fn make_preprocessor(seed: [u8; 32], ch: LocalChannel) -> impl core::future::Future<Output = Result<IdealPreprocessor, AuthGcError>> {
    let (me, n) = (ch.party(), ch.parties());
    async move { IdealPreprocessor::new(seed, me, n) }
}

#[derive(Clone, Copy)]
struct Phases {
    setup: f64,
    independent: f64,
    dependent: f64,
    online: f64,
}

impl Phases {
    fn total(&self) -> f64 {
        self.setup + self.independent + self.dependent + self.online
    }
}

fn millis(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// One session: every phase once. Returns the phase times and, per phase, the most bytes any
/// party sent.
fn session(c: &PreparedCircuit, roles: &Roles, inputs: &[Vec<Vec<bool>>], want: &[Vec<bool>]) -> (Phases, [u64; 3]) {
    let circuit = c.circuit();
    let ands = circuit.stats().and as usize;
    let input_bits = circuit.input_bits().expect("valid") as usize;
    let n = inputs.len();
    let mut seed = [0u8; 32];
    webmpc_core::random::fill(&mut seed).expect("entropy");
    let t = Instant::now();
    let mut local = LocalAuthGc::setup(n, Options::default(), |ch| make_preprocessor(seed, ch)).expect("setup");
    let setup = millis(t);
    let max_delta = |before: &[u64], after: &[u64]| before.iter().zip(after).map(|(b, a)| a - b).max().unwrap_or(0);
    let b0 = local.bytes_sent();
    let t = Instant::now();
    local.preprocess(ands, ands + input_bits).expect("function-independent preprocessing");
    let independent = millis(t);
    let b1 = local.bytes_sent();
    let t = Instant::now();
    local.prepare(c, roles).expect("function-dependent preprocessing");
    let dependent = millis(t);
    let b2 = local.bytes_sent();
    let t = Instant::now();
    let outputs = local.run(c, roles, inputs).expect("online phase");
    let online = millis(t);
    let b3 = local.bytes_sent();
    for out in &outputs {
        assert_eq!(out[0].as_ref(), Some(&want[0]), "wrong output");
    }
    (Phases { setup, independent, dependent, online }, [max_delta(&b0, &b1), max_delta(&b1, &b2), max_delta(&b2, &b3)])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(webmpc_circuit::testing::reference_dir);
    for (name, file, reps) in [("aes128", "aes_128.txt", if quick { 2 } else { 5 }), ("sha256", "sha256.txt", if quick { 1 } else { 3 })] {
        let text = std::fs::read_to_string(dir.join(file)).expect("reference circuit");
        let circuit = Circuit::parse_bristol(&text).expect("parses");
        let ands = circuit.stats().and as f64;
        let widths = circuit.inputs.clone();
        let values: Vec<Vec<bool>> =
            widths.iter().enumerate().map(|(i, &w)| (0..w).map(|k| (k as usize * 7 + i) % 3 == 0).collect()).collect();
        let want = circuit.evaluate(&values).expect("plaintext");
        let c = PreparedCircuit::new(circuit).expect("valid");
        for n in [2usize, 3, 4] {
            // Party 0 evaluates and owns input 1; party 1 owns input 2; all learn the output.
            let roles = Roles { evaluator: 0, owners: vec![0, 1], outputs: vec![Recipients::ALL] };
            let mut inputs = vec![Vec::new(); n];
            inputs[0].push(values[0].clone());
            inputs[1].push(values[1].clone());
            // A warm-up session, then the best of `reps` per phase.
            session(&c, &roles, &inputs, &want);
            let mut best = Phases { setup: f64::MAX, independent: f64::MAX, dependent: f64::MAX, online: f64::MAX };
            let mut best_total = f64::MAX;
            let mut bytes = [0u64; 3];
            for _ in 0..reps {
                let (p, b) = session(&c, &roles, &inputs, &want);
                best.setup = best.setup.min(p.setup);
                best.independent = best.independent.min(p.independent);
                best.dependent = best.dependent.min(p.dependent);
                best.online = best.online.min(p.online);
                best_total = best_total.min(p.total());
                bytes = b;
            }
            let case = format!("{name}-n{n}");
            for (phase, v) in [
                ("setup", best.setup),
                ("independent", best.independent),
                ("dependent", best.dependent),
                ("online", best.online),
                ("total", best_total),
            ] {
                println!("{}", row(SUITE, &format!("{case}-{phase}"), "time", v, "ms", "native", IMPL));
            }
            let paper = (4.0 * (128.0 * n as f64 + 1.0)) / 8.0;
            println!(
                "{}",
                row(SUITE, &format!("{case}-dependent"), "communication_per_and", bytes[1] as f64 / ands, "bytes/AND", "native", IMPL)
            );
            println!("{}", row(SUITE, &format!("{case}-dependent"), "paper_communication_per_and", paper, "bytes/AND", "native", IMPL));
            println!(
                "{}",
                row(SUITE, &format!("{case}-independent"), "communication_per_and", bytes[0] as f64 / ands, "bytes/AND", "native", IMPL)
            );
            println!("{}", row(SUITE, &format!("{case}-online"), "communication", bytes[2] as f64 / 1024.0, "KiB", "native", IMPL));
        }
    }
}
