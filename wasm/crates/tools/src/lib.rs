//! Shared plumbing of the native helper binaries.

use std::time::Instant;

/// Runs `f` (which processes `bytes_per_call` bytes) repeatedly for about `millis` per sample,
/// five samples, and returns the median throughput in MB/s (10^6 bytes per second). The median
/// resists the other core's noise on a 2-core machine better than the mean.
pub fn measure_mb_per_s(bytes_per_call: usize, millis: u64, mut f: impl FnMut()) -> f64 {
    // Warm-up: caches, branch predictors, lazily initialised keys.
    for _ in 0..3 {
        f();
    }
    let mut samples = Vec::with_capacity(5);
    for _ in 0..5 {
        let start = Instant::now();
        let mut calls = 0u64;
        while start.elapsed().as_millis() < millis as u128 {
            f();
            calls += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        samples.push(calls as f64 * bytes_per_call as f64 / secs / 1e6);
    }
    samples.sort_by(|a, b| a.partial_cmp(b).expect("throughputs are finite"));
    samples[2]
}

/// One benchmark row in the project's JSON-lines format.
pub fn row(
    suite: &str,
    case: &str,
    metric: &str,
    value: f64,
    unit: &str,
    runtime: &str,
    implementation: &str,
) -> String {
    format!(
        "{{\"suite\":\"{suite}\",\"case\":\"{case}\",\"metric\":\"{metric}\",\"value\":{value:.3},\"unit\":\"{unit}\",\"runtime\":\"{runtime}\",\"impl\":\"{implementation}\"}}"
    )
}

/// Parses 32 hex digits into 16 bytes.
pub fn parse_hex16(s: &str) -> Result<[u8; 16], String> {
    if s.len() != 32 {
        return Err(format!("expected 32 hex digits, got {}", s.len()));
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
    }
    Ok(out)
}
