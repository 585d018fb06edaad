//! Native MASCOT benchmarks, one JSON object per line: the `mascot` suite's `native` rows. All
//! parties run in this process, on one thread, over the in-memory network (as the Wasm
//! in-memory rows do).
//!
//! Usage: `bench-mascot [TRIPLES] [--only SUBSTRING] [--batch N]` (default 10 000 triples for
//! 2 parties; 3 and 5 parties run a fraction). `--only` runs just the cases whose name contains
//! SUBSTRING (e.g. `triples-fp-2p`, for a profiler); `--batch` sets the preprocessing batch.
//! Rows: triples/s and bytes per triple (against the paper's 180·n(n−1) kbit) per field and n;
//! online multiplications/s; the Vickrey auction of 2, 10 and 100 bids (end to end: setup
//! excluded, preprocessing included; and the online part alone).
//!
//! Triples/s comes twice: `throughput` over wall time, and `throughput_cpu` over this thread's
//! CPU time. Every party runs on this one thread, so the CPU figure is the work of all parties
//! and, unlike wall time, does not shrink when the shared machine's other jobs take the core.

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

/// CPU time of this thread, in seconds.
fn cpu_secs() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

struct Options {
    count: usize,
    only: Option<String>,
    batch: usize,
}

impl Options {
    fn parse() -> Options {
        let mut o = Options { count: 10_000, only: None, batch: webmpc_spdz::party::DEFAULT_BATCH };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--only" => o.only = args.next(),
                "--batch" => o.batch = args.next().and_then(|s| s.parse().ok()).expect("--batch N"),
                _ => o.count = a.parse().expect("usage: bench-mascot [TRIPLES] [--only SUBSTRING] [--batch N]"),
            }
        }
        o
    }

    fn wants(&self, case: &str) -> bool {
        self.only.as_ref().is_none_or(|s| case.contains(s.as_str()))
    }
}

fn triples<F: Field>(o: &Options, name: &str, n: usize, count: usize) {
    let case = format!("triples-{name}-{n}p");
    if !o.wants(&case) {
        return;
    }
    let t = Instant::now();
    let mut local = Local::<F>::setup(n).expect("setup");
    local.set_batch(o.batch).expect("batch size");
    emit(&format!("setup-{name}-{n}p"), "time", t.elapsed().as_secs_f64() * 1e3, "ms");
    local.generate_triples(o.batch).expect("warm-up");
    let bytes0 = local.bytes_sent();
    let (t, c) = (Instant::now(), cpu_secs());
    let got = local.generate_triples(count).expect("triples");
    let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_secs() - c);
    emit(&case, "throughput", got as f64 / secs, "triples/s");
    emit(&case, "throughput_cpu", got as f64 / cpu, "triples/s");
    let per = (local.bytes_sent() - bytes0) as f64 / got as f64;
    emit(&case, "communication", per, "bytes/triple");
    emit(&case, "communication_vs_paper", per / paper_bytes(n), "x");
}

fn main() {
    let o = Options::parse();
    for (n, frac) in [(2usize, 1usize), (3, 3), (5, 10)] {
        triples::<Fp>(&o, "fp", n, (o.count / frac).max(1));
        triples::<Gf128>(&o, "gf2k", n, (o.count / frac).max(1));
    }
    online(&o);
}

fn online(o: &Options) {
    // Online multiplications: one layer of m Beaver products, preprocessing done beforehand.
    let m = 100_000;
    if o.wants(&format!("online-mul-fp-2p-{m}")) {
        online_mul(m);
    }
    // Vickrey auctions of 32-bit bids, 2 parties.
    for bids in [2usize, 10, 100] {
        if o.wants(&format!("vickrey-{bids}-bids-2p")) {
            vickrey_case(bids);
        }
    }
}

fn online_mul(m: usize) {
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
}

fn vickrey_case(bids: usize) {
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
