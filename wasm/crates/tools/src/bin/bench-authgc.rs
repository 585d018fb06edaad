//! Native benchmark of n-party authenticated garbling, one JSON object per line: the `authgc`
//! suite's `native` rows. All parties run in this process on one thread (so every phase's time
//! is the sum of all parties' work), over the in-memory network, with the **real** F_Pre
//! (`RealPreprocessor`: base OTs, KOS Δ-OT, Π_aBit, Π_aShare, Π_HaAND, Π_LaAND, bucketing).
//!
//! Per circuit (AES-128, SHA-256) and party count (2, 3, 4): the time of each phase as the paper
//! separates them — setup (building the preprocessors: base OTs and the Δ check), function-
//! independent (AND triples and masks for the circuit's size), function-dependent (garbling,
//! tables to the evaluator), online (inputs, evaluation, outputs) — the median of several
//! sessions after a warm-up; and the bytes each party sends per AND gate in the
//! function-independent phase (against the paper's ≈ 2.28(n − 1) kbit) and the dependent one
//! (against 4(nκ + 1) bits per garbler).
//!
//! Each phase is reported as wall-clock time (`time`, ms) and as this thread's CPU time
//! (`cpu_time`, ms-cpu: every party runs on it, so it is their summed work, which other jobs on a
//! shared machine do not inflate).
//!
//! Case `clients` (not run by default): a Vickrey auction among `AUTHGC_CLIENTS` ("100,1000")
//! client bidders with 32-bit bids that the n parties compute as servers (`online::clients`):
//! setup, preprocessing (independent and dependent together, the client masks included), the
//! clients' part (every server's mask shares to each client, the client's check message), and
//! the online run with the client checks; the outcome is checked against the bids in the clear.
//!
//! Usage: `bench-authgc [<directory of the reference Bristol circuits>] [--quick]`; the
//! environment's `AUTHGC_PARTIES` ("2,3,4"), `AUTHGC_CASES` ("aes128,sha256"; add "clients") and
//! `AUTHGC_RUNS` (5, or 3 with `--quick`) narrow it.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;
use webmpc_authgc::fpre::RealPreprocessor;
use webmpc_authgc::online::local::{LocalAuthGc, LocalChannel};
use webmpc_authgc::online::{
    client_share_bytes, ClientMessage, Options, PreparedCircuit, Recipients, Roles, CLIENT, CLIENT_CHECK_BITS,
};
use webmpc_circuit::Circuit;
use webmpc_ot::SessionId;
use webmpc_tools::row;

const SUITE: &str = "authgc";
const IMPL: &str = "webmpc-authgc";
const RHO: usize = 40;

fn wall_ms() -> f64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
}

/// CPU time of this thread, in milliseconds.
fn cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// Both clocks at one instant: (wall, CPU), in milliseconds.
fn now() -> [f64; 2] {
    [wall_ms(), cpu_ms()]
}

fn since(t: [f64; 2]) -> [f64; 2] {
    let n = now();
    [n[0] - t[0], n[1] - t[1]]
}

/// Per phase, (wall, CPU) milliseconds.
#[derive(Clone, Copy)]
struct Phases {
    setup: [f64; 2],
    independent: [f64; 2],
    dependent: [f64; 2],
    online: [f64; 2],
}

/// n parties with the real F_Pre set up (base OTs, the Δ check), in a fresh session.
fn setup_local(n: usize) -> LocalAuthGc<RealPreprocessor<LocalChannel>> {
    let sid = SessionId::random().expect("entropy");
    LocalAuthGc::setup(n, Options::default(), move |ch: LocalChannel| async move { RealPreprocessor::setup(ch, &sid, RHO).await })
        .expect("setup")
}

/// One session: every phase once. Returns the phase times and, per phase, the most bytes any
/// party sent.
fn session(c: &PreparedCircuit, roles: &Roles, inputs: &[Vec<Vec<bool>>], want: &[Vec<bool>]) -> (Phases, [u64; 3]) {
    let circuit = c.circuit();
    let ands = circuit.stats().and as usize;
    let input_bits = circuit.input_bits().expect("valid") as usize;
    let n = inputs.len();
    let t = now();
    let mut local = setup_local(n);
    let setup = since(t);
    let max_delta = |before: &[u64], after: &[u64]| before.iter().zip(after).map(|(b, a)| a - b).max().unwrap_or(0);
    let b0 = local.bytes_sent();
    let t = now();
    local.preprocess(ands, ands + input_bits).expect("function-independent preprocessing");
    let independent = since(t);
    let b1 = local.bytes_sent();
    let t = now();
    local.prepare(c, roles).expect("function-dependent preprocessing");
    let dependent = since(t);
    let b2 = local.bytes_sent();
    let t = now();
    let outputs = local.run(c, roles, inputs).expect("online phase");
    let online = since(t);
    let b3 = local.bytes_sent();
    for out in &outputs {
        assert_eq!(out[0].as_ref(), Some(&want[0]), "wrong output");
    }
    (Phases { setup, independent, dependent, online }, [max_delta(&b0, &b1), max_delta(&b1, &b2), max_delta(&b2, &b3)])
}

/// Bits of a client bid.
const BID_BITS: u32 = 32;

/// One client auction session; returns (setup, preprocessing, clients, online) and the most
/// bytes a server sent in all.
fn clients_session(c: &PreparedCircuit, roles: &Roles, bids: &[u64], n: usize) -> ([[f64; 2]; 4], u64) {
    let t = now();
    let mut local = setup_local(n);
    let setup = since(t);
    let circuit = c.circuit();
    let ands = circuit.stats().and as usize;
    let masks = ands + circuit.input_bits().expect("valid") as usize + CLIENT_CHECK_BITS * bids.len();
    let t = now();
    local.preprocess(ands, masks).expect("function-independent preprocessing");
    local.prepare(c, roles).expect("function-dependent preprocessing");
    let preprocessing = since(t);
    let t = now();
    let values: Vec<Option<Vec<bool>>> = bids.iter().map(|&bid| Some(webmpc_circuit::testing::vickrey_client_value(bid, BID_BITS))).collect();
    let messages = local.clients_give(&values).expect("client messages");
    let clients = since(t);
    let t = now();
    let results = local.run_with_clients(c, roles, &vec![Vec::new(); n], &messages).expect("online phase");
    let online = since(t);
    let (winner, price) = webmpc_circuit::testing::vickrey_reference(bids);
    let number = |bits: &[bool]| bits.iter().enumerate().fold(0u64, |acc, (i, &b)| acc | u64::from(b) << i);
    for (out, refused) in &results {
        assert!(refused.is_empty(), "an honest client was refused");
        let got = (number(out[0].as_ref().expect("public")), number(out[1].as_ref().expect("public")));
        assert_eq!(got, (winner as u64, price), "wrong auction outcome");
    }
    let sent = local.bytes_sent().into_iter().max().unwrap_or(0);
    ([setup, preprocessing, clients, online], sent)
}

fn clients_case(n: usize, slots: usize, runs: usize, emit: &dyn Fn(&str, &str, f64, &str)) {
    let c = PreparedCircuit::new(webmpc_circuit::testing::vickrey_clients(slots, BID_BITS)).expect("valid");
    let roles = Roles { evaluator: 0, owners: vec![CLIENT; slots], outputs: vec![Recipients::ALL; 2] };
    let mut coins = vec![0u8; 4 * slots];
    webmpc_core::random::fill(&mut coins).expect("entropy");
    let bids: Vec<u64> = coins.chunks(4).map(|b| u64::from(u32::from_le_bytes(b.try_into().expect("4 bytes")))).collect();
    let samples: Vec<([[f64; 2]; 4], u64)> = (0..runs).map(|_| clients_session(&c, &roles, &bids, n)).collect();
    let case = format!("vickrey-clients{slots}-n{n}");
    for (clock, metric, unit) in [(0, "time", "ms"), (1, "cpu_time", "ms-cpu")] {
        let m = |f: &dyn Fn(&[[f64; 2]; 4]) -> f64| median(samples.iter().map(|(p, _)| f(p)).collect());
        for (k, phase) in ["setup", "preprocessing", "clients", "online"].iter().enumerate() {
            emit(&format!("{case}-{phase}"), metric, m(&|p| p[k][clock]), unit);
        }
        emit(&format!("{case}-total"), metric, m(&|p| p.iter().map(|x| x[clock]).sum()), unit);
    }
    emit(&format!("{case}-total"), "and_gates", c.circuit().stats().and as f64, "gates");
    emit(&format!("{case}-total"), "server_sent", samples[0].1 as f64 / 1048576.0, "MiB");
    let per_client = n * (client_share_bytes(BID_BITS as usize + 1) + ClientMessage::encoded_len(BID_BITS as usize + 1));
    emit(&format!("{case}-clients"), "bytes_per_client", per_client as f64, "bytes");
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(webmpc_circuit::testing::reference_dir);
    let env_list = |key: &str, default: &str| -> Vec<String> {
        std::env::var(key).unwrap_or_else(|_| default.into()).split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    };
    let parties: Vec<usize> = env_list("AUTHGC_PARTIES", "2,3,4").iter().map(|s| s.parse().expect("AUTHGC_PARTIES: numbers")).collect();
    let cases = env_list("AUTHGC_CASES", "aes128,sha256");
    let runs: usize = std::env::var("AUTHGC_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(if quick { 3 } else { 5 });
    let emit = |case: &str, metric: &str, value: f64, unit: &str| println!("{}", row(SUITE, case, metric, value, unit, "native", IMPL));
    if cases.iter().any(|c| c == "clients") {
        for slots in env_list("AUTHGC_CLIENTS", "100,1000").iter().map(|s| s.parse().expect("AUTHGC_CLIENTS: numbers")) {
            for &n in &parties {
                clients_case(n, slots, runs, &emit);
            }
        }
    }
    for (name, file) in [("aes128", "aes_128.txt"), ("sha256", "sha256.txt")] {
        if !cases.iter().any(|c| c == name) {
            continue;
        }
        let text = std::fs::read_to_string(dir.join(file)).expect("reference circuit");
        let circuit = Circuit::parse_bristol(&text).expect("parses");
        let ands = circuit.stats().and as f64;
        let widths = circuit.inputs.clone();
        let values: Vec<Vec<bool>> =
            widths.iter().enumerate().map(|(i, &w)| (0..w).map(|k| (k as usize * 7 + i) % 3 == 0).collect()).collect();
        let want = circuit.evaluate(&values).expect("plaintext");
        let c = PreparedCircuit::new(circuit).expect("valid");
        for &n in &parties {
            // Party 0 evaluates and owns input 1; party 1 owns input 2; all learn the output.
            let roles = Roles { evaluator: 0, owners: vec![0, 1], outputs: vec![Recipients::ALL] };
            let mut inputs = vec![Vec::new(); n];
            inputs[0].push(values[0].clone());
            inputs[1].push(values[1].clone());
            // A warm-up session, then the median of `runs` per phase.
            session(&c, &roles, &inputs, &want);
            let samples: Vec<(Phases, [u64; 3])> = (0..runs).map(|_| session(&c, &roles, &inputs, &want)).collect();
            let case = format!("{name}-n{n}");
            for (clock, metric, unit) in [(0, "time", "ms"), (1, "cpu_time", "ms-cpu")] {
                let m = |f: &dyn Fn(&Phases) -> f64| median(samples.iter().map(|(p, _)| f(p)).collect());
                for (phase, v) in [
                    ("setup", m(&|p| p.setup[clock])),
                    ("independent", m(&|p| p.independent[clock])),
                    ("dependent", m(&|p| p.dependent[clock])),
                    ("online", m(&|p| p.online[clock])),
                    ("total", m(&|p| p.setup[clock] + p.independent[clock] + p.dependent[clock] + p.online[clock])),
                ] {
                    emit(&format!("{case}-{phase}"), metric, v, unit);
                }
            }
            let bytes = samples[0].1;
            // Function-independent: the paper's ≈ 2.28(n − 1) kbit per AND gate and party.
            emit(&format!("{case}-independent"), "communication_per_and", 8.0 * bytes[0] as f64 / ands / 1e3, "kbit/AND");
            emit(&format!("{case}-independent"), "paper_communication_per_and", 2.28 * (n - 1) as f64, "kbit/AND");
            // Function-dependent: 4(nκ + 1) bits per AND gate from each garbler.
            emit(&format!("{case}-dependent"), "communication_per_and", bytes[1] as f64 / ands, "bytes/AND");
            emit(&format!("{case}-dependent"), "paper_communication_per_and", (4.0 * (128.0 * n as f64 + 1.0)) / 8.0, "bytes/AND");
            emit(&format!("{case}-online"), "communication", bytes[2] as f64 / 1024.0, "KiB");
        }
    }
}
