//! Native MASCOT benchmarks, one JSON object per line: the `mascot` suite's `native` rows. All
//! parties run in this process, on one thread, over the in-memory network (as the Wasm
//! in-memory rows do).
//!
//! Usage: `bench-mascot [TRIPLES]` (default 10 000 for 2 parties; 3 and 5 parties run a fraction).
//! Rows: triples/s and bytes per triple (against the paper's 180·n(n−1) kbit) per field and n;
//! online multiplications/s; the Vickrey auction of 2, 10 and 100 bids (end to end: setup
//! excluded, preprocessing included; and the online part alone).

use std::time::Instant;
use webmpc_spdz::examples::{products, vickrey, vickrey_inputs, vickrey_plain};
use webmpc_spdz::local::Local;
use webmpc_spdz::{Field, FieldKind, Fp, Gf128};
use webmpc_tools::row;

const SUITE: &str = "mascot";

fn emit(case: &str, metric: &str, value: f64, unit: &str) {
    println!("{}", row(SUITE, case, metric, value, unit, "native", "webmpc-mascot"));
}

/// The paper's communication per triple: 180·n(n−1) kbit (τ = 3, k = λ = 128), in bytes.
fn paper_bytes(n: usize) -> f64 {
    (3.0 * 128.0 * 128.0 + 8.0 * 128.0 * 128.0) * (n * (n - 1)) as f64 / 8.0
}

fn triples<F: Field>(name: &str, n: usize, count: usize) {
    let t = Instant::now();
    let mut local = Local::<F>::setup(n).expect("setup");
    emit(&format!("setup-{name}-{n}p"), "time", t.elapsed().as_secs_f64() * 1e3, "ms");
    local.generate_triples(local_batch(n)).expect("warm-up");
    let bytes0 = local.bytes_sent();
    let t = Instant::now();
    let got = local.generate_triples(count).expect("triples");
    let secs = t.elapsed().as_secs_f64();
    let case = format!("triples-{name}-{n}p");
    emit(&case, "throughput", got as f64 / secs, "triples/s");
    let per = (local.bytes_sent() - bytes0) as f64 / got as f64;
    emit(&case, "communication", per, "bytes/triple");
    emit(&case, "communication_vs_paper", per / paper_bytes(n), "x");
}

fn local_batch(_n: usize) -> usize {
    webmpc_spdz::party::DEFAULT_BATCH
}

fn main() {
    let count: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    for (n, frac) in [(2usize, 1usize), (3, 3), (5, 10)] {
        triples::<Fp>("fp", n, (count / frac).max(1));
        triples::<Gf128>("gf2k", n, (count / frac).max(1));
    }
    // Online multiplications: one layer of m Beaver products, preprocessing done beforehand.
    let m = 100_000;
    let mut local = Local::<Fp>::setup(2).expect("setup");
    let p = products(FieldKind::Prime, 2, m);
    local.preprocess_triples(m).expect("triples");
    let inputs = vec![vec![3u128.to_le_bytes()], vec![5u128.to_le_bytes()]];
    // Masks are generated on demand by run (two of them): negligible next to m products.
    let t = Instant::now();
    let out = local.run(&p, &inputs).expect("run");
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(u128::from_le_bytes(out[0][0].expect("output")), 15 * m as u128);
    emit(&format!("online-mul-fp-2p-{m}"), "throughput", m as f64 / secs, "mul/s");
    // Vickrey auctions of 32-bit bids, 2 parties.
    for bids in [2usize, 10, 100] {
        let mut local = Local::<Fp>::setup(2).expect("setup");
        let p = vickrey(2, bids, 32);
        let values: Vec<u64> = (0..bids as u64).map(|i| (i * 2_654_435_761) % 1_000_003).collect();
        let inputs = vickrey_inputs(2, &values);
        let t = Instant::now();
        let need = p.requirements();
        let out = local.run(&p, &inputs).expect("run");
        let total = t.elapsed().as_secs_f64();
        let (w, s) = vickrey_plain(&values);
        assert_eq!(u128::from_le_bytes(out[0][0].expect("winner")), w as u128);
        assert_eq!(u128::from_le_bytes(out[0][1].expect("price")), s as u128);
        let case = format!("vickrey-{bids}-bids-2p");
        emit(&case, "time_end_to_end", total * 1e3, "ms");
        emit(&case, "triples", need.triples as f64, "triples");
        emit(&case, "bits", need.bits as f64, "bits");
        // Online only: preprocess first, then time the run.
        local.preprocess_bits(need.bits).expect("bits");
        local.preprocess_triples(need.triples).expect("triples");
        let t = Instant::now();
        local.run(&p, &inputs).expect("run");
        emit(&case, "time_online", t.elapsed().as_secs_f64() * 1e3, "ms");
    }
}
