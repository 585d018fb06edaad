//! `bench-polytune`: polytune on our reference circuits, all parties in this process; prints one
//! JSON object per line (`suite, case, metric, value, unit, runtime, impl`).
//!
//! ```text
//! bench-polytune [--parties 2,3,4] [--runs 3] [--no-threads] --case NAME FILE HEX[,HEX...] [--case ...]
//! ```
//! `HEX`: the input values, big-endian bytes, one per input value of the circuit. Each case runs
//! for each party count in two shapes, one warm-up run and then `--runs` timed runs (the median
//! is reported; every run's output is checked against the project's plaintext evaluator):
//! - `impl: one-thread`: every party's future joined on this thread over an in-memory mesh (the
//!   code the wasm32 build runs, and the shape of our one-process benchmark);
//! - `impl: multi-thread`: each party a task on tokio's multi-thread runtime (one worker per core)
//!   over polytune's own in-memory `SimpleChannel`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use polytune::channel::SimpleChannel;
use polytune::garble_lang::register_circuit::Circuit as RegisterCircuit;
use webmpc_bench_polytune::{check, from_hex, prepare, run_one_thread, RunResult};

struct Case {
    name: String,
    file: String,
    values: Vec<Vec<u8>>,
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-polytune: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut parties = vec![2, 3, 4];
    let mut runs = 3usize;
    let mut threads = true;
    let mut cases = Vec::new();
    while let Some(a) = args.next() {
        let mut value = |what: &str| args.next().ok_or_else(|| format!("{a} needs {what}"));
        match a.as_str() {
            "--parties" => {
                parties = value("a list")?.split(',').map(|s| s.parse().map_err(|_| format!("bad party count {s}"))).collect::<Result<_, _>>()?
            }
            "--runs" => runs = value("a number")?.parse().map_err(|_| "bad --runs")?,
            "--no-threads" => threads = false,
            "--case" => {
                let name = value("a name")?;
                let file = value("a file")?;
                let values = value("hex inputs")?.split(',').map(from_hex).collect::<Result<_, _>>()?;
                cases.push(Case { name, file, values });
            }
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    if cases.is_empty() || runs == 0 {
        return Err("usage: bench-polytune [--parties 2,3,4] [--runs 3] [--no-threads] --case NAME FILE HEX[,HEX...] ...".into());
    }
    for case in &cases {
        let text = std::fs::read_to_string(&case.file).map_err(|e| format!("{}: {e}", case.file))?;
        for &n in &parties {
            let (circuit, inputs, expected, and) = prepare(&text, &case.values, n)?;
            let kase = format!("{}-n{n}", case.name);
            let mut shapes: Vec<(&str, Box<dyn Fn() -> Result<RunResult, String>>)> =
                vec![("one-thread", Box::new(|| run_one_thread(&circuit, &inputs)))];
            if threads {
                let circuit = Arc::new(circuit.clone());
                let inputs = inputs.clone();
                shapes.push(("multi-thread", Box::new(move || run_multi_thread(circuit.clone(), &inputs))));
            }
            for (shape, run) in &shapes {
                let mut times = Vec::with_capacity(runs);
                let mut bytes = 0;
                for i in 0..=runs {
                    let t0 = Instant::now();
                    let r = run().map_err(|e| format!("{kase} {shape}: {e}"))?;
                    let ms = t0.elapsed().as_secs_f64() * 1e3;
                    check(&r.outputs, &expected).map_err(|e| format!("{kase} {shape}: {e}"))?;
                    if i > 0 {
                        times.push(ms);
                    }
                    bytes = r.bytes;
                }
                times.sort_by(f64::total_cmp);
                let median = times[times.len() / 2];
                row(&kase, shape, "time", median, "ms");
                row(&kase, shape, "communication", bytes as f64 / 1024.0, "KiB");
                row(&kase, shape, "communication_per_and_per_party", bytes as f64 / n as f64 / and as f64, "bytes/AND");
            }
        }
    }
    Ok(())
}

fn row(kase: &str, imp: &str, metric: &str, value: f64, unit: &str) {
    println!(
        r#"{{"suite":"baselines","case":"{kase}","metric":"{metric}","value":{value},"unit":"{unit}","runtime":"polytune-native","impl":"{imp}"}}"#
    );
}

/// Each party a task on tokio's multi-thread runtime, over polytune's `SimpleChannel`; party 0
/// evaluates and every party receives the output.
fn run_multi_thread(circuit: Arc<RegisterCircuit>, inputs: &[Vec<bool>]) -> Result<RunResult, String> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_time().build().map_err(|e| format!("tokio: {e}"))?;
    rt.block_on(async {
        let n = inputs.len();
        let chans: Vec<Arc<SimpleChannel>> = SimpleChannel::channels(n).into_iter().map(Arc::new).collect();
        let p_out: Arc<Vec<usize>> = Arc::new((0..n).collect());
        let tasks: Vec<_> = (0..n)
            .map(|p| {
                let (ch, circuit, input, p_out) = (chans[p].clone(), circuit.clone(), inputs[p].clone(), p_out.clone());
                tokio::spawn(async move { polytune::mpc(&*ch, &circuit, &input, 0, p, &p_out, None).await })
            })
            .collect();
        let mut outputs = Vec::with_capacity(n);
        for (p, t) in tasks.into_iter().enumerate() {
            let r = t.await.map_err(|e| format!("party {p} task: {e}"))?;
            outputs.push(r.map_err(|e| format!("party {p}: {e}"))?);
        }
        Ok(RunResult { outputs, bytes: chans.iter().map(|c| c.bytes_sent()).sum() })
    })
}
