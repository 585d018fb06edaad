//! The real F_Pre (Π_aBit, Π_aShare, Π_HaAND, Π_LaAND, bucketing over KOS Δ-OT) with honest
//! parties: its outputs satisfy their relations for 2 to 5 parties at edge sizes, it passes the
//! `Preprocessor` contract the trusted dealer passes, and its communication is what the protocol
//! predicts. Cheating parties are in `fpre_cheating.rs`.

use futures::future::join_all;
use webmpc_authgc::fpre::contract::{self, IdealFactory, RealFactory};
use webmpc_authgc::fpre::fpre_core::bucket_plan;
use webmpc_authgc::fpre::{RealPreprocessor, Step};
use webmpc_authgc::ideal::reconstruct;
use webmpc_authgc::preprocess::{Preprocessor, Triples};
use webmpc_authgc::share::AuthShares;
use webmpc_authgc::{AuthGcError, MIN_RHO};
use webmpc_core::channel::memory::{network, run_local};
use webmpc_core::Block;
use webmpc_ot::SessionId;

/// Runs the real F_Pre for `n` parties: setup, then `random_shares(s)` and `and_triples(t)` for
/// each `(s, t)`; returns the Δ's and every party's outputs.
#[allow(clippy::type_complexity)]
fn run(n: usize, rho: usize, calls: &[(usize, usize)]) -> (Vec<Block>, Vec<Vec<(AuthShares, Triples)>>) {
    let sid = SessionId::random().unwrap();
    let net = network(n);
    let out = run_local(join_all(net.iter().map(|ch| {
        let sid = &sid;
        async move {
            let mut p = RealPreprocessor::setup(ch, sid, rho).await?;
            let mut outs = Vec::new();
            for &(s, t) in calls {
                outs.push((p.random_shares(s).await?, p.and_triples(t).await?));
            }
            Ok::<_, AuthGcError>((p.delta(), outs))
        }
    })))
    .expect("no deadlock");
    let mut deltas = Vec::new();
    let mut views = Vec::new();
    for r in out {
        let (d, o) = r.expect("honest parties succeed");
        deltas.push(d);
        views.push(o);
    }
    (deltas, views)
}

fn check(deltas: &[Block], views: &[Vec<(AuthShares, Triples)>], calls: &[(usize, usize)]) {
    let n = deltas.len();
    for (k, &(s, t)) in calls.iter().enumerate() {
        let shares: Vec<AuthShares> = views.iter().map(|v| v[k].0.clone()).collect();
        assert!(shares.iter().all(|v| v.len() == s && v.check_shape().is_ok()));
        // `reconstruct` checks every tag under its verifier's Δ.
        reconstruct(&shares, deltas);
        let pick =
            |f: fn(&Triples) -> &AuthShares| -> Vec<AuthShares> { views.iter().map(|v| f(&v[k].1).clone()).collect() };
        let (x, y, z) = (pick(|t| &t.x), pick(|t| &t.y), pick(|t| &t.z));
        assert!(x.iter().chain(&y).chain(&z).all(|v| v.len() == t && v.check_shape().is_ok()), "n = {n}, {t} triples");
        let (vx, vy, vz) = (reconstruct(&x, deltas), reconstruct(&y, deltas), reconstruct(&z, deltas));
        for i in 0..t {
            assert_eq!(vz[i], vx[i] & vy[i], "n = {n}: triple {i} of {t}");
        }
    }
}

#[test]
fn outputs_satisfy_their_relations_for_2_to_5_parties() {
    // Empty, single, odd, and the smallest batch emp-agmpc's table covers (below it the bound
    // picks larger buckets).
    let calls = [(0, 0), (1, 1), (37, 37), (1, 319), (2, 320)];
    for n in 2..=5 {
        let (deltas, views) = run(n, MIN_RHO, &calls);
        check(&deltas, &views, &calls);
    }
}

#[test]
fn triples_are_right_on_both_sides_of_the_bucket_size_thresholds() {
    assert_eq!(bucket_plan(3_099, 40).bucket, 5);
    assert_eq!(bucket_plan(3_100, 40).bucket, 4);
    let calls = [(0, 3_099), (0, 3_100)];
    for n in [2, 3] {
        let (deltas, views) = run(n, MIN_RHO, &calls);
        check(&deltas, &views, &calls);
    }
}

#[test]
fn a_large_batch_with_buckets_of_three_is_right() {
    // 280,000 triples: the first batch size with B = 3 at ρ = 40 (840,000 leaky triples).
    assert_eq!(bucket_plan(280_000, 40).bucket, 3);
    let calls = [(0, 280_000)];
    let (deltas, views) = run(2, MIN_RHO, &calls);
    check(&deltas, &views, &calls);
}

#[test]
fn a_larger_rho_works_and_costs_more() {
    let calls = [(10, 50)];
    let (deltas, views) = run(3, 64, &calls);
    check(&deltas, &views, &calls);
    assert!(bucket_plan(50, 64).leaky() > bucket_plan(50, 40).leaky());
}

#[test]
fn the_ideal_dealer_meets_the_preprocessor_contract() {
    for n in [2, 3, 4] {
        contract::check_all(IdealFactory::fresh, n);
    }
}

#[test]
fn the_real_protocol_meets_the_preprocessor_contract() {
    for n in [2, 3, 4] {
        contract::check_all(|| RealFactory::fresh(MIN_RHO), n);
    }
}

#[test]
fn bad_parameters_are_refused_before_any_traffic() {
    let net = network(2);
    let sid = SessionId::random().unwrap();
    let out = run_local(join_all(net.iter().map(|ch| RealPreprocessor::setup(ch, &sid, 39)))).unwrap();
    for r in out {
        assert_eq!(r.err().map(|e| e.code()), Some("INVALID_ARGUMENT"));
    }
    assert!(net.iter().all(|c| c.sent_bytes() == 0));
}

#[test]
fn communication_matches_the_protocol() {
    // Per AND triple and peer with B = 4: 3·B Δ-OTs as receiver (16 bytes each: the KOS matrix
    // column) and B U blocks (16 bytes): 64·4 bytes = 2,048 bits, plus 3B bits of HaAND and e and
    // B − 1 opened d bits — about 2.07 kbit, against the paper's ≈ 2.28 kbit. The per-batch
    // constants (coins, checks, commitments) are a few hundred bytes.
    for n in [2, 3] {
        let r = webmpc_authgc::fpre::local::run(n, 0, 4_000, MIN_RHO, || 0.0).unwrap();
        for &b in &r.triple_bytes {
            let bits = 8.0 * b as f64 / 4_000.0 / (n - 1) as f64;
            assert!((2_050.0..2_200.0).contains(&bits), "n = {n}: {bits:.0} bits per triple per peer");
        }
        let total: u64 = r.bytes_by_step.iter().sum();
        let ot = r.bytes_by_step[Step::AbitOt as usize];
        assert!(ot as f64 > 0.7 * total as f64, "the Δ-OTs dominate ({ot} of {total} bytes)");
        assert_eq!(r.bytes_by_step[Step::BaseOt as usize], 0, "no base OTs after setup");
    }
}

#[test]
fn a_failed_instance_stays_failed() {
    // Party 1 disappears after setup: party 0's call fails, and so does every later call.
    let net = network(2);
    let sid = SessionId::random().unwrap();
    let mut it = net.into_iter();
    let (a, b) = (it.next().unwrap(), it.next().unwrap());
    let out = run_local(async {
        let (pa, pb) = futures::join!(RealPreprocessor::setup(&a, &sid, 40), RealPreprocessor::setup(&b, &sid, 40));
        let mut pa = pa.unwrap();
        drop(pb);
        drop(b);
        let first = pa.and_triples(10).await.unwrap_err();
        let second = pa.random_shares(10).await.unwrap_err();
        (first, second)
    })
    .unwrap();
    assert_eq!(out.0.code(), "PEER_DISCONNECTED");
    assert_eq!(out.1.code(), "INVALID_ARGUMENT");
}

/// A dealer whose triples are wrong at one position (party 0 flips its share of z_0 and keeps a
/// valid tag by fixing its MACs from the other parties' keys, as a corrupt dealer would).
struct WrongTriples(webmpc_authgc::ideal::IdealPreprocessor);

impl Preprocessor for WrongTriples {
    fn party(&self) -> usize {
        self.0.party()
    }
    fn parties(&self) -> usize {
        self.0.parties()
    }
    fn delta(&self) -> Block {
        self.0.delta()
    }
    async fn random_shares(&mut self, n: usize) -> Result<AuthShares, AuthGcError> {
        self.0.random_shares(n).await
    }
    async fn and_triples(&mut self, n: usize) -> Result<Triples, AuthGcError> {
        let mut t = self.0.and_triples(n).await?;
        // Flip z_0 for everyone's view consistently: party 1 (never the constant holder) flips
        // its bit, and re-tags it with the dealer's knowledge of every key.
        if n > 0 && self.0.party() == 1 {
            let deltas = self.0.deltas().to_vec();
            t.z.bits[0] ^= true;
            for j in (0..deltas.len()).filter(|&j| j != 1) {
                t.z.macs[j][0] ^= deltas[j];
            }
        }
        Ok(t)
    }
}

struct WrongFactory(IdealFactory);

impl contract::Factory for WrongFactory {
    type P<'a> = WrongTriples;
    async fn make<'a>(
        &'a self,
        ch: &'a webmpc_core::channel::memory::MemoryChannel,
    ) -> Result<WrongTriples, AuthGcError> {
        Ok(WrongTriples(self.0.make(ch).await?))
    }
}

#[test]
#[should_panic(expected = "does not multiply")]
fn the_contract_rejects_triples_that_do_not_multiply() {
    contract::outputs_are_valid(&WrongFactory(IdealFactory::fresh()), 3, &[5]);
}
