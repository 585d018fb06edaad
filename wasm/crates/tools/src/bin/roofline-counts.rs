//! The roofline's operation counts: runs each protocol's unit of work natively in a build with
//! `webmpc-core/op-count` (thread-local counters in the kernels and the base OT) and prints, per
//! unit, the primitive operations it needed, one JSON object per line:
//!
//! `{"unit":"random-ot","per":"OT","counts":{"aes_block":9.0,...},"bytes":16.06}`
//!
//! Per-unit counts are differences between two runs of different sizes (so one-time setup drops
//! out) divided by the size difference; `base-ot` is one whole setup (128 base OTs, both parties).
//! The counts are properties of the code, not of the platform: the Wasm build runs the same code
//! (AES counts logical blocks, not the bitsliced backend's 8-block steps).
//!
//! Usage (the roofline suite builds it in its own target directory, so the shipped binaries are
//! never built with counters): `cargo run --release -p webmpc-tools --features op-count --bin
//! roofline-counts -- <bristol circuits dir>`.

use webmpc_circuit::Circuit;
use webmpc_core::count::{self, OpCounts, OPS};

fn emit(unit: &str, per: &str, counts: &OpCounts, units: f64, bytes: f64) {
    let fields: Vec<String> =
        OPS.iter().map(|op| format!("\"{}\":{}", op.name(), counts.get(*op) as f64 / units)).collect();
    println!(
        "{{\"unit\":\"{unit}\",\"per\":\"{per}\",\"counts\":{{{}}},\"bytes\":{}}}",
        fields.join(","),
        bytes / units
    );
}

/// Counts and bytes of `f(n2)` minus those of `f(n1)`, per unit.
fn diff(n1: usize, n2: usize, mut f: impl FnMut(usize) -> u64) -> (OpCounts, f64, f64) {
    let (b1, c1) = count::measure(|| f(n1));
    let (b2, c2) = count::measure(|| f(n2));
    let d = OpCounts(core::array::from_fn(|i| c2.0[i] - c1.0[i]));
    (d, (n2 - n1) as f64, b2 as f64 - b1 as f64)
}

fn main() {
    assert!(count::ENABLED, "build with --features op-count");
    let dir = std::env::args().nth(1).expect("usage: roofline-counts <bristol circuits dir>");
    let aes = Circuit::parse_bristol(&std::fs::read_to_string(format!("{dir}/aes_128.txt")).expect("aes_128.txt"))
        .expect("parse aes_128.txt");
    let ands = aes.gates.iter().filter(|g| matches!(g, webmpc_circuit::Gate::And { .. })).count() as f64;

    // Base OT: one KOS setup = 128 Masny–Rindal OTs (both parties).
    let (pair, c) = count::measure(|| webmpc_ot::local::LocalPair::setup().expect("setup"));
    emit("base-ot", "128 OTs", &c, 1.0, pair.bytes_sent() as f64);

    // Random OT (KOS), both parties.
    let mut pair = pair;
    let (c, u, b) = diff(1 << 16, 5 << 16, |n| {
        let b0 = pair.bytes_sent();
        pair.run(webmpc_ot::local::Kind::Random, n).expect("random OT");
        pair.bytes_sent() - b0
    });
    emit("random-ot", "OT", &c, u, b);

    // Half-gates: garbling alone, and garbling + evaluation (the evaluator's share is the
    // difference), per AND gate of AES-128.
    let (g, cg) = count::measure(|| webmpc_garble::local::garble_and_evaluate(&aes, true, 7).expect("garble"));
    emit("garble-and", "AND", &cg, ands, g as f64);
    let (_, cge) = count::measure(|| webmpc_garble::local::garble_and_evaluate(&aes, false, 7).expect("garble"));
    emit("evaluate-and", "AND", &cge.since(&cg), ands, 0.0);

    // authgc: AND triples of the real F_Pre, 2 parties, ρ = 40 (every party's work).
    let clock = || 0.0;
    let (c, u, b) = diff(20_000, 60_000, |n| {
        let r = webmpc_authgc::fpre::local::run(2, 0, n, 40, clock).expect("F_Pre");
        r.triple_bytes.iter().sum()
    });
    emit("authgc-and-triple", "AND triple", &c, u, b);

    // MASCOT: triples over the prime field, 2 parties.
    let mut mascot = webmpc_spdz::local::Local::<webmpc_spdz::Fp>::setup(2).expect("MASCOT setup");
    let (c, u, b) = diff(2_000, 6_000, |n| {
        let b0 = mascot.bytes_sent();
        mascot.generate_triples(n).expect("triples");
        mascot.bytes_sent() - b0
    });
    emit("mascot-triple", "triple", &c, u, b);

    // GRR3 (teleportation's garbling scheme) on its level schedule: garbling alone and
    // evaluation alone, per AND gate of AES-128.
    {
        use webmpc_teleport::circuit::{decode_gates, pieces, Header, PIECE_GATES};
        use webmpc_teleport::grr3::{Evaluator, Garbler};
        let bin = aes.to_binary();
        let (h, _) = Header::parse(&bin).expect("header");
        let mut gates = Vec::new();
        let mut list = Vec::new();
        for r in &pieces(&bin).expect("pieces")[1..] {
            decode_gates(&bin[r.clone()], h.wires, PIECE_GATES, &mut gates).expect("gates");
            list.push(gates.clone());
        }
        let delta = webmpc_core::Block::from_u128(0x1234_5678_9abc_def1);
        let prf = webmpc_core::aes::Aes128::new(webmpc_core::Block::from_u128(5));
        let (tables, cg) = count::measure(|| {
            let mut g = Garbler::new(delta, prf.clone(), h.wires, 1);
            let (mut base, mut out) = (0, Vec::new());
            for p in &list {
                let mut t = Vec::new();
                g.garble_chunk(p, base, &mut t).expect("garble");
                base += p.len() as u64;
                out.push(t);
            }
            out
        });
        emit("grr3-garble-and", "AND", &cg, ands, tables.iter().map(Vec::len).sum::<usize>() as f64);
        let (_, ce) = count::measure(|| {
            let mut e = Evaluator::new(h.wires, 1);
            let mut base = 0;
            for (p, t) in list.iter().zip(&tables) {
                e.evaluate_chunk(p, base, t).expect("evaluate");
                base += p.len() as u64;
            }
        });
        emit("grr3-evaluate-and", "AND", &ce, ands, 0.0);
    }

    // Teleported Yao (malicious mode): one AES-128 run in a session, all three parties.
    use webmpc_teleport::{local, JobKind, Mode, Owner};
    let bin = aes.to_binary();
    let (x1, x2) = (vec![false; aes.inputs[0] as usize], vec![true; aes.inputs[1] as usize]);
    let reveal = vec![false; aes.outputs.len()];
    let (c, u, b) = diff(1, 3, |reps| {
        let mut counter = webmpc_teleport::driver::JobCounter::new(local::random_sid().expect("sid"));
        let kind = JobKind::Gc { circuit_hash: aes.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] };
        let jobs: Vec<_> = (0..reps).map(|_| counter.next(Mode::Malicious, kind.clone())).collect();
        local::run_gc_session(&jobs, &bin, &x1, &x2, &reveal).expect("teleport").garbler_bytes
    });
    emit("teleport-aes", "AES-128 run", &c, u, b);
}
