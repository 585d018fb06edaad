//! Native garbling and Yao 2PC benchmarks, one JSON object per line: the `garble` and `yao`
//! suites' `native` rows.
//!
//! Usage: `bench-garble <path to aes_128.txt>`.

use std::time::Instant;
use webmpc_circuit::Circuit;
use webmpc_garble::local::{garble_and_evaluate, LocalYao};
use webmpc_tools::row;

fn best_of(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: bench-garble <aes_128.txt>");
    let aes = Circuit::parse_bristol(&std::fs::read_to_string(path).expect("readable")).expect("parses");
    let ands = aes.stats().and as f64;
    // Many AES copies in one circuit would need a builder; repeat the garbling instead (tags
    // differ per repetition, as they would per circuit).
    let reps = 40;
    let garble = best_of(3, || {
        for t in 0..reps {
            garble_and_evaluate(&aes, true, t).expect("garbles");
        }
    });
    let both = best_of(3, || {
        for t in 0..reps {
            garble_and_evaluate(&aes, false, t).expect("garbles");
        }
    });
    let g_rate = ands * reps as f64 / garble / 1e6;
    let e_rate = ands * reps as f64 / (both - garble).max(1e-9) / 1e6;
    println!("{}", row("garble", "aes128-garble", "throughput", g_rate, "M AND/s", "native", "webmpc-halfgates"));
    println!("{}", row("garble", "aes128-evaluate", "throughput", e_rate, "M AND/s", "native", "webmpc-halfgates"));
    let bytes = garble_and_evaluate(&aes, true, 0).expect("garbles");
    println!(
        "{}",
        row("garble", "aes128", "communication", bytes as f64 / ands, "bytes/AND", "native", "webmpc-halfgates")
    );

    let t = Instant::now();
    let mut yao = LocalYao::setup().expect("setup");
    let setup = t.elapsed().as_secs_f64();
    let prepared = webmpc_garble::PreparedCircuit::new(aes.clone()).expect("valid");
    let x = vec![false; 128];
    let t = Instant::now();
    yao.run(&prepared, x.clone(), x.clone()).expect("runs");
    let first = t.elapsed().as_secs_f64() + setup;
    let runs = 100;
    let t = Instant::now();
    for _ in 0..runs {
        yao.run(&prepared, x.clone(), x.clone()).expect("runs");
    }
    let amortised = t.elapsed().as_secs_f64() / runs as f64;
    println!("{}", row("yao", "aes128-2pc-memory-first", "time", first * 1e3, "ms", "native", "webmpc-yao"));
    println!(
        "{}",
        row("yao", "aes128-2pc-memory-amortised-100", "time", amortised * 1e3, "ms", "native", "webmpc-yao")
    );
}
