//! Native teleportation benchmarks, one JSON object per line (suite `teleport`).
//!
//! * ROT: 10^4…10^7 teleported random OTs (semi-honest and malicious) against our KOS random OT,
//!   both parties (and the enclave) in one process on one thread; each party's time is the time
//!   spent in its own code (`Timed`), so sender and receiver are measured separately and the
//!   enclave's share of the receiver side is reported on its own.
//! * GC: AES-128 and SHA-256, 1000 evaluations each, teleported (both modes) against our
//!   half-gates Yao: garbler ms and bytes, enclave ms, evaluator ms.
//!
//! Usage: `bench-teleport <circuits dir> [max ROT exponent, default 7] [GC repetitions, default 1000]`.

use std::cell::Cell;
use std::time::{Duration, Instant};
use webmpc_circuit::Circuit;
use webmpc_core::channel::memory::{pair, run_local};
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_ot::{KosReceiver, KosSender, SessionId};
use webmpc_teleport::local::{self, Timed};
use webmpc_teleport::machine::{Config, EnclaveMachine, EVALUATOR, GARBLER};
use webmpc_teleport::evidence::Challenge;
use webmpc_teleport::rot::{chunks, RotReceiver, RotSender};
use webmpc_teleport::seal::{Role, Sealer};
use webmpc_teleport::{frames, JobHeader, JobKind, Mode, Owner};
use webmpc_tools::row;

fn emit(case: &str, metric: &str, value: f64, unit: &str, implementation: &str) {
    println!("{}", row("teleport", case, metric, value, unit, "native", implementation));
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// KOS random OT: sender and receiver time, each in its own code.
fn kos(n: usize) -> (Duration, Duration) {
    let (a, b) = pair();
    let sid = SessionId::random().unwrap();
    let (s, r) = run_local(async { futures::join!(KosSender::setup_random(a, 1, &sid), KosReceiver::setup(b, 0, &sid)) }).unwrap();
    let (mut s, mut r) = (s.unwrap(), r.unwrap());
    let (ts, tr) = (Cell::new(Duration::ZERO), Cell::new(Duration::ZERO));
    let mut sum = 0u8;
    let (x, y) = run_local(async {
        futures::join!(
            Timed::new(s.random_stream(n, |_, m0, m1| m0.iter().chain(m1).for_each(|b| sum ^= b.0[0])), &ts),
            Timed::new(r.random_stream(n, |_, _, m| { std::hint::black_box(m); }), &tr)
        )
    })
    .unwrap();
    x.unwrap();
    y.unwrap();
    std::hint::black_box(sum);
    (ts.get(), tr.get())
}

/// Teleported ROT, the pure parties driven directly (no channel: what each side computes).
/// Returns (sender, receiver excluding the enclave, enclave).
fn teleported_rot(n: u64, mode: Mode) -> (Duration, Duration, Duration) {
    let job = JobHeader { sid: [1; 32], mode, kind: JobKind::Rot { count: n } };
    let mut prg = Prg::from_entropy().unwrap();
    let (k1, k2) = (prg.next_block(), prg.next_block());
    let t = Instant::now();
    let sender = RotSender::new(&job, k1).unwrap();
    let taus = (mode == Mode::Malicious).then(|| sender.taus());
    let mut sum = Block::ZERO;
    if mode == Mode::SemiHonest {
        for j in 0..chunks(n) {
            for p in sender.chunk(j).0 {
                sum ^= p[0] ^ p[1];
            }
        }
    }
    // Malicious mode: the τ pass already derived every output (chunk() returns both); count it once.
    let t_sender = t.elapsed();
    let mut machine = EnclaveMachine::new([3; 32], Config::default());
    // The session's evidence (once per session, not per job: outside the timings).
    machine.push(EVALUATOR, &frames::challenge(&Challenge { garbler: [1; 32], evaluator: [2; 32] })).unwrap();
    let (format, ev) = local::attest(&machine.evidence_request().unwrap()).unwrap();
    machine.attest(format, &ev).unwrap();
    while machine.pull().is_some() {}
    let bytes = job.encode();
    let sealed = webmpc_teleport::seal::seal(Role::Garbler, &machine.public_key(), &bytes, &k1.0, [4; 32]).unwrap();
    let mut evaluator = Sealer::new(Role::Evaluator, &machine.public_key(), [5; 32]).unwrap();
    let receiver = RotReceiver::new(&job, k2, taus).unwrap();
    let (mut t_enclave, mut t_receiver) = (Duration::ZERO, Duration::ZERO);
    // The receiver seals k2 and opens each chunk: its share of the work.
    let t = Instant::now();
    let own = evaluator.seal(&bytes, &frames::rot_input(k2)).unwrap();
    let replies = evaluator.reply_key(&bytes);
    t_receiver += t.elapsed();
    let t = Instant::now();
    machine.push(GARBLER, &frames::garbler_job(&bytes, &sealed)).unwrap();
    machine.push(EVALUATOR, &frames::evaluator_job(&bytes, &own)).unwrap();
    t_enclave += t.elapsed();
    for j in 0..chunks(n) {
        let t = Instant::now();
        machine.push(EVALUATOR, &frames::rot_next(j)).unwrap();
        let (_, msg) = machine.pull().unwrap();
        t_enclave += t.elapsed();
        let t = Instant::now();
        let (_, chunk) = frames::parse_rot_chunk(&msg, mode == Mode::Malicious, &replies).unwrap();
        let out = receiver.accept(j, &chunk).unwrap();
        let c = receiver.choices(j);
        sum ^= out[0] ^ Block::from_u128(c[0] as u128);
        t_receiver += t.elapsed();
    }
    std::hint::black_box(sum);
    (t_sender, t_receiver, t_enclave)
}

fn load(dir: &str, name: &str) -> Circuit {
    Circuit::parse_bristol(&std::fs::read_to_string(format!("{dir}/{name}")).expect("readable")).expect("parses")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).expect("usage: bench-teleport <circuits dir> [max ROT exponent] [GC reps]");
    let max_exp: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(7);
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);

    for e in 4..=max_exp {
        let n = 10u64.pow(e);
        let (ks, kr) = kos(n as usize);
        emit(&format!("rot-1e{e}"), "sender", ms(ks), "ms", "webmpc-kos");
        emit(&format!("rot-1e{e}"), "receiver", ms(kr), "ms", "webmpc-kos");
        for mode in [Mode::SemiHonest, Mode::Malicious] {
            let name = if mode == Mode::SemiHonest { "teleport-sh" } else { "teleport-mal" };
            let (s, r, x) = teleported_rot(n, mode);
            emit(&format!("rot-1e{e}"), "sender", ms(s), "ms", name);
            emit(&format!("rot-1e{e}"), "receiver", ms(r), "ms", name);
            emit(&format!("rot-1e{e}"), "enclave", ms(x), "ms", name);
            emit(&format!("rot-1e{e}"), "receiver+enclave", ms(r + x), "ms", name);
        }
    }

    for (name, file) in [("aes128", "aes_128.txt"), ("sha256", "sha256.txt")] {
        let c = load(dir, file);
        let bin = c.to_binary();
        let n: Vec<usize> = c.inputs.iter().map(|&w| w as usize).collect();
        let (x1, x2) = (vec![false; n[0]], vec![true; n[1]]);
        let case = format!("{name}-x{reps}");
        for mode in [Mode::SemiHonest, Mode::Malicious] {
            let implementation = if mode == Mode::SemiHonest { "teleport-sh" } else { "teleport-mal" };
            // All repetitions in one attested session: the evidence check and the key agreement
            // are paid once, as the SDK does.
            let mut counter = webmpc_teleport::driver::JobCounter::new(local::random_sid().unwrap());
            let kind = JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] };
            let jobs: Vec<JobHeader> = (0..reps).map(|_| counter.next(mode, kind.clone())).collect();
            let run = local::run_gc_session(&jobs, &bin, &x1, &x2, &vec![false; c.outputs.len()]).unwrap();
            let total = run.times;
            let bytes = run.garbler_bytes / reps as u64;
            emit(&case, "garbler", ms(total.garbler), "ms", implementation);
            // The paper's "garbler" figure: input-label generation only (no attestation, sealing).
            let job = JobHeader {
                sid: [5; 32],
                mode,
                kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] },
            };
            let t = Instant::now();
            for k in 0..reps {
                let l = webmpc_teleport::gc::garbler_labels(Block::from_u128(k as u128), &job, &bin, &x1, &x2).unwrap();
                std::hint::black_box(l);
            }
            emit(&case, "garbler-labels-only", ms(t.elapsed()), "ms", implementation);
            emit(&case, "garbler-bytes-per-run", bytes as f64, "bytes", implementation);
            emit(&case, "enclave", ms(total.enclave), "ms", implementation);
            emit(&case, "evaluator", ms(total.evaluator), "ms", implementation);
        }
        // Our half-gates Yao, both parties in one process, per-party time.
        let prepared = webmpc_garble::PreparedCircuit::new(c.clone()).unwrap();
        let (a, b) = pair();
        let sid = SessionId::random().unwrap();
        let (g, e) = run_local(async {
            futures::join!(webmpc_garble::YaoGarbler::setup(a, 1, &sid), webmpc_garble::YaoEvaluator::setup(b, 0, &sid))
        })
        .unwrap();
        let (mut g, mut e) = (g.unwrap(), e.unwrap());
        let owners = [webmpc_garble::Owner::Garbler, webmpc_garble::Owner::Evaluator];
        let reveal = vec![webmpc_garble::Reveal::Evaluator; c.outputs.len()];
        let (tg, te) = (Cell::new(Duration::ZERO), Cell::new(Duration::ZERO));
        let bytes0 = g.channel().sent_bytes();
        for _ in 0..reps {
            let (mut gs, mut es) = (prepared.source(), prepared.source());
            let (r1, r2) = run_local(async {
                futures::join!(
                    Timed::new(g.run(&mut gs, &owners, &reveal, std::slice::from_ref(&x1), |_| {}), &tg),
                    Timed::new(e.run(&mut es, &owners, &reveal, std::slice::from_ref(&x2), |_| {}), &te)
                )
            })
            .unwrap();
            r1.unwrap();
            r2.unwrap();
        }
        emit(&case, "garbler", ms(tg.get()), "ms", "webmpc-yao");
        emit(&case, "garbler-bytes-per-run", (g.channel().sent_bytes() - bytes0) as f64 / reps as f64, "bytes", "webmpc-yao");
        emit(&case, "evaluator", ms(te.get()), "ms", "webmpc-yao");
    }
}
