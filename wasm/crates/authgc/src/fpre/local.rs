//! All parties of F_Pre in one process over the in-memory network, on one thread: what the
//! benchmarks measure (natively, and inside Wasm through a thin wrapper) and a quick end-to-end
//! self-check. The outputs are verified on a sample (tags under every Δ, z = x ∧ y), so a run
//! that produced wrong shares never reports a time.

use super::{Profile, RealPreprocessor, Step, Work};
use crate::preprocess::{Preprocessor, Triples};
use crate::share::{expected_macs, AuthShares};
use crate::AuthGcError;
use futures::future::join_all;
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_core::channel::ChannelError;
use webmpc_core::Block;
use webmpc_ot::SessionId;

/// What one local run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalRun {
    /// Parties.
    pub parties: usize,
    /// Setup (base OTs, the KOS instances) of every party, milliseconds (the Δ check runs in the
    /// first batch: in `shares_ms`).
    pub setup_ms: f64,
    /// The `random_shares` call of every party, milliseconds.
    pub shares_ms: f64,
    /// The `and_triples` call of every party, milliseconds.
    pub triples_ms: f64,
    /// Bytes each party sent during `random_shares`.
    pub share_bytes: Vec<u64>,
    /// Bytes each party sent during `and_triples`.
    pub triple_bytes: Vec<u64>,
    /// Bytes sent by all parties during both calls, per step (indexed like [`Step::ALL`]).
    pub bytes_by_step: [u64; Step::COUNT],
    /// Local work of all parties during both calls, summed.
    pub profile: Profile,
}

fn stalled() -> AuthGcError {
    AuthGcError::Channel(ChannelError::Transport { peer: 0, reason: "local parties deadlocked".into() })
}

fn check_sample(views: &[&AuthShares], deltas: &[Block], sample: &[usize]) -> Result<Vec<bool>, AuthGcError> {
    let n = views.len();
    for i in 0..n {
        let bits: Vec<bool> = sample.iter().map(|&k| views[i].bits[k]).collect();
        for j in (0..n).filter(|&j| j != i) {
            let keys: Vec<Block> = sample.iter().map(|&k| views[j].keys[i][k]).collect();
            let macs: Vec<Block> = sample.iter().map(|&k| views[i].macs[j][k]).collect();
            if expected_macs(&keys, &bits, deltas[j]) != macs {
                return Err(AuthGcError::InvalidArgument("local run produced an invalid tag".into()));
            }
        }
    }
    Ok(sample.iter().map(|&k| views.iter().fold(false, |a, v| a ^ v.bits[k])).collect())
}

fn sample(len: usize) -> Vec<usize> {
    if len == 0 {
        return Vec::new();
    }
    let step = (len / 256).max(1);
    (0..len).step_by(step).chain([len - 1]).collect()
}

/// Runs setup, then `random_shares(shares)`, then `and_triples(triples)` for `parties` parties
/// (statistical parameter `rho`), timing each phase with `clock` (milliseconds).
pub fn run(
    parties: usize,
    shares: usize,
    triples: usize,
    rho: usize,
    clock: fn() -> f64,
) -> Result<LocalRun, AuthGcError> {
    let net: Vec<MemoryChannel> = network(parties);
    let session = SessionId::random()?;
    let t0 = clock();
    let made =
        run_local(join_all(net.iter().map(|ch| RealPreprocessor::setup(ch, &session, rho)))).map_err(|_| stalled())?;
    let setup_ms = clock() - t0;
    let mut pres = made.into_iter().collect::<Result<Vec<_>, _>>()?;
    for p in pres.iter_mut() {
        p.set_clock(clock);
    }
    let deltas: Vec<Block> = pres.iter().map(|p| p.delta()).collect();
    let before: Vec<[u64; Step::COUNT]> = pres.iter().map(|p| p.bytes_by_step()).collect();
    let sent0: Vec<u64> = pres.iter().map(|p| p.bytes_sent()).collect();

    let t1 = clock();
    let got = run_local(join_all(pres.iter_mut().map(|p| p.random_shares(shares)))).map_err(|_| stalled())?;
    let shares_ms = clock() - t1;
    let got = got.into_iter().collect::<Result<Vec<_>, _>>()?;
    let sent1: Vec<u64> = pres.iter().map(|p| p.bytes_sent()).collect();

    let t2 = clock();
    let tri = run_local(join_all(pres.iter_mut().map(|p| p.and_triples(triples)))).map_err(|_| stalled())?;
    let triples_ms = clock() - t2;
    let tri: Vec<Triples> = tri.into_iter().collect::<Result<Vec<_>, _>>()?;
    let sent2: Vec<u64> = pres.iter().map(|p| p.bytes_sent()).collect();

    check_sample(&got.iter().collect::<Vec<_>>(), &deltas, &sample(shares))?;
    let s = sample(triples);
    let x = check_sample(&tri.iter().map(|t| &t.x).collect::<Vec<_>>(), &deltas, &s)?;
    let y = check_sample(&tri.iter().map(|t| &t.y).collect::<Vec<_>>(), &deltas, &s)?;
    let z = check_sample(&tri.iter().map(|t| &t.z).collect::<Vec<_>>(), &deltas, &s)?;
    if (0..s.len()).any(|k| z[k] != (x[k] & y[k])) {
        return Err(AuthGcError::InvalidArgument("local run produced a wrong triple".into()));
    }

    let mut bytes_by_step = [0u64; Step::COUNT];
    let mut profile = Profile::default();
    for (p, b) in pres.iter().zip(&before) {
        for (k, (now, then)) in p.bytes_by_step().iter().zip(b).enumerate() {
            bytes_by_step[k] += now - then;
        }
        for w in Work::ALL {
            profile.ms[w as usize] += p.profile().ms[w as usize];
        }
    }
    Ok(LocalRun {
        parties,
        setup_ms,
        shares_ms,
        triples_ms,
        share_bytes: sent0.iter().zip(&sent1).map(|(a, b)| b - a).collect(),
        triple_bytes: sent1.iter().zip(&sent2).map(|(a, b)| b - a).collect(),
        bytes_by_step,
        profile,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_clock() -> f64 {
        0.0
    }

    #[test]
    fn a_small_local_run_checks_out() {
        let r = run(2, 100, 100, 40, no_clock).unwrap();
        assert_eq!(r.parties, 2);
        assert!(r.triple_bytes.iter().all(|&b| b > 0) && r.share_bytes.iter().all(|&b| b > 0));
        assert!(r.bytes_by_step[Step::HalfAnd as usize] > 0 && r.bytes_by_step[Step::BaseOt as usize] == 0);
    }
}
