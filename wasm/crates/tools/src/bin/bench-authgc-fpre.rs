//! Native benchmarks of the real F_Pre (authenticated-garbling preprocessing), one JSON object
//! per line: the `authgc-fpre` suite's `native` rows. All parties run in this process over the
//! in-memory network on one thread (`webmpc_authgc::fpre::local`), as the Wasm rows do, so a time
//! is the sum of every party's work.
//!
//! Cases, for 2, 3 and 4 parties:
//! * `aes128-n{n}`: what AES-128 needs per party — 6,400 AND triples (B = 4) and 6,700 random
//!   shares — time, bytes per triple per party and per peer, and where the time goes;
//! * `throughput-n{n}`: one batch of 300,000 triples (B = 3), triples per second;
//! * `max-batch-n2` (without `--quick`): one batch of 2^20 triples, the largest batch.
//!
//! Times are thread CPU time by default (every party runs on this one thread, so it is their
//! summed work, unaffected by other jobs on a shared machine); `--wall` uses wall-clock time.
//!
//! Usage: `bench-authgc-fpre [--quick] [--wall]`.

use std::sync::OnceLock;
use std::time::Instant;
use webmpc_authgc::fpre::local::{run, LocalRun};
use webmpc_authgc::fpre::{Step, Work, MAX_TRIPLE_BATCH};
use webmpc_tools::row;

const SUITE: &str = "authgc-fpre";
const IMPL: &str = "webmpc-authgc";
const RHO: usize = 40;
const AES_TRIPLES: usize = 6_400;
const AES_SHARES: usize = 6_700;

fn wall_ms() -> f64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
}

/// CPU time of this thread, in milliseconds. Every party runs on this one thread, so it is the
/// work of all parties, and — unlike wall time — it does not grow when the shared machine's
/// other jobs take the core away.
fn cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// The clock and the unit its milliseconds are reported in.
type Clock = (fn() -> f64, &'static str);

static CLOCK: OnceLock<Clock> = OnceLock::new();

fn clock() -> fn() -> f64 {
    CLOCK.get().expect("clock chosen").0
}

fn ms() -> &'static str {
    CLOCK.get().expect("clock chosen").1
}

fn emit(case: &str, metric: &str, value: f64, unit: &str) {
    println!("{}", row(SUITE, case, metric, value, unit, "native", IMPL));
}

/// The run with the smallest total among `reps` (the other core's noise only ever adds time).
fn best_of(reps: usize, parties: usize, shares: usize, triples: usize) -> LocalRun {
    (0..reps)
        .map(|_| run(parties, shares, triples, RHO, clock()).expect("local F_Pre run"))
        .min_by(|a, b| (a.shares_ms + a.triples_ms).total_cmp(&(b.shares_ms + b.triples_ms)))
        .expect("at least one run")
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let wall = std::env::args().any(|a| a == "--wall");
    CLOCK.set(if wall { (wall_ms, "ms") } else { (cpu_ms, "ms-cpu") }).expect("set once");
    let reps = if quick { 2 } else { 5 };
    for n in [2, 3, 4] {
        let case = format!("aes128-n{n}");
        let r = best_of(reps, n, AES_SHARES, AES_TRIPLES);
        emit(&case, "setup", r.setup_ms, ms());
        emit(&case, "random-shares", r.shares_ms, ms());
        emit(&case, "and-triples", r.triples_ms, ms());
        emit(&case, "total", r.shares_ms + r.triples_ms, ms());
        let per_party = r.triple_bytes.iter().sum::<u64>() as f64 / n as f64;
        let kbit = 8.0 * per_party / AES_TRIPLES as f64 / 1e3;
        emit(&case, "triple-communication-per-party", kbit, "kbit/AND");
        emit(&case, "triple-communication-per-peer", kbit / (n - 1) as f64, "kbit/AND");
        // The paper's estimate, 2.28·(n − 1) kbit per party: the ratio of ours to it.
        emit(&case, "ratio_to_paper_communication", kbit / (2.28 * (n - 1) as f64), "x");
        let local: f64 = r.profile.ms.iter().sum();
        for w in Work::ALL {
            emit(&case, &format!("time-{}", w.name()), r.profile.ms[w as usize], ms());
        }
        // What the profile does not cover: OT extension, commitments, coin tossing, messaging.
        emit(&case, "time-ot-and-rest", r.shares_ms + r.triples_ms - local, ms());
        let total: u64 = r.bytes_by_step.iter().sum();
        for s in Step::ALL {
            let b = r.bytes_by_step[s as usize];
            if b > 0 {
                emit(&case, &format!("bytes-share-{}", s.name()), 100.0 * b as f64 / total as f64, "%");
            }
        }

        let case = format!("throughput-n{n}");
        let big = 300_000;
        let r = best_of(1, n, 0, big);
        emit(&case, "throughput", big as f64 / r.triples_ms * 1e3, "AND triples/s");
        let local: f64 = r.profile.ms.iter().sum();
        emit(&case, "time-local-share", 100.0 * local / r.triples_ms, "%");
    }
    if !quick {
        let r = best_of(1, 2, 0, MAX_TRIPLE_BATCH);
        emit("max-batch-n2", "throughput", MAX_TRIPLE_BATCH as f64 / r.triples_ms * 1e3, "AND triples/s");
        emit("max-batch-n2", "and-triples", r.triples_ms, ms());
    }
}
