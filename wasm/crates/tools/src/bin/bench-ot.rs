//! Native OT benchmarks, one JSON object per line: the `ot` suite's `native` rows. Both parties
//! run in this process over the in-memory network (one thread), exactly as the Wasm rows do.
//!
//! Usage: `bench-ot [N]` (default 10^7 OTs per kind).

use std::time::Instant;
use webmpc_ot::local::{Kind, LocalPair};
use webmpc_tools::row;

const SUITE: &str = "ot";

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000_000);
    let emit = |case: &str, metric: &str, value: f64, unit: &str| {
        println!("{}", row(SUITE, case, metric, value, unit, "native", "webmpc-kos"));
    };
    // Base OTs: best of 5 setups (128 Masny–Rindal OTs, one round trip).
    let mut best = f64::INFINITY;
    let mut pair = None;
    for _ in 0..5 {
        let t = Instant::now();
        let p = LocalPair::setup().expect("setup");
        best = best.min(t.elapsed().as_secs_f64());
        pair = Some(p);
    }
    emit("base-ot-128", "time", best * 1e3, "ms");
    let mut pair = pair.expect("set up");
    for (name, kind) in
        [("random", Kind::Random), ("cot", Kind::Cot), ("correlated", Kind::Correlated), ("chosen", Kind::Chosen)]
    {
        pair.run(kind, 1 << 16).expect("warm-up");
        let bytes0 = pair.bytes_sent();
        let t = Instant::now();
        let sum = pair.run(kind, n).expect("run");
        let secs = t.elapsed().as_secs_f64();
        std::hint::black_box(sum);
        let case = format!("{name}-ot-{n}");
        emit(&case, "throughput", n as f64 / secs / 1e6, "M OT/s");
        emit(&case, "communication", (pair.bytes_sent() - bytes0) as f64 / n as f64, "bytes/OT");
    }
}
