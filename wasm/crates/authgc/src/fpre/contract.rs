//! The contract every [`Preprocessor`] must meet, as checks generic over how an instance is made
//! ([`Factory`]), so the trusted dealer ([`IdealFactory`]), the real protocol ([`RealFactory`])
//! and anything else (a wrapper, a future implementation) run the same tests. Feature `ideal`
//! only: this is test support, and its checks panic on a violation.
//!
//! The checks run all parties on the in-memory network with [`run_local`]:
//! * [`deltas_are_fresh`]: every Δ is nonzero, the parties' Δ's differ, and two instances never
//!   share one;
//! * [`outputs_are_valid`]: for each size, `random_shares` and `and_triples` return batches of that
//!   size whose every tag verifies under the verifier's Δ, and z = x ∧ y;
//! * [`batches_are_independent`]: two batches of the same call never repeat values or keys;
//! * [`and_on_masks_works`]: [`and_from_triples`] on top multiplies;
//! * [`check_all`] runs them all.

use crate::ideal::{reconstruct, IdealPreprocessor};
use crate::preprocess::{and_from_triples, Preprocessor, Triples};
use crate::share::AuthShares;
use crate::AuthGcError;
use futures::future::join_all;
use std::future::Future;
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_core::channel::Channel;
use webmpc_core::Block;
use webmpc_ot::SessionId;

use super::RealPreprocessor;

/// Makes one party's instance; every party of one instance is made from the same factory value.
pub trait Factory {
    /// The preprocessor type (it may borrow the channel).
    type P<'a>: Preprocessor
    where
        Self: 'a;

    /// This party's instance over `ch`.
    fn make<'a>(&'a self, ch: &'a MemoryChannel) -> impl Future<Output = Result<Self::P<'a>, AuthGcError>> + 'a;
}

/// The trusted dealer of [`crate::ideal`], from a shared seed.
pub struct IdealFactory {
    /// The dealer seed every party shares.
    pub seed: [u8; 32],
}

impl IdealFactory {
    /// A dealer with a fresh random seed.
    pub fn fresh() -> Self {
        let mut seed = [0u8; 32];
        webmpc_core::random::fill(&mut seed).expect("platform randomness");
        IdealFactory { seed }
    }
}

impl Factory for IdealFactory {
    type P<'a> = IdealPreprocessor;

    async fn make<'a>(&'a self, ch: &'a MemoryChannel) -> Result<IdealPreprocessor, AuthGcError> {
        IdealPreprocessor::new(self.seed, ch.party(), ch.parties())
    }
}

/// The real protocol ([`RealPreprocessor`]) in one session.
pub struct RealFactory {
    /// The session id every party uses.
    pub session: SessionId,
    /// The statistical security parameter.
    pub rho: usize,
}

impl RealFactory {
    /// A fresh session at statistical security `rho`.
    pub fn fresh(rho: usize) -> Self {
        RealFactory { session: SessionId::random().expect("platform randomness"), rho }
    }
}

impl Factory for RealFactory {
    type P<'a> = RealPreprocessor<&'a MemoryChannel>;

    fn make<'a>(
        &'a self,
        ch: &'a MemoryChannel,
    ) -> impl Future<Output = Result<RealPreprocessor<&'a MemoryChannel>, AuthGcError>> + 'a {
        RealPreprocessor::setup(ch, &self.session, self.rho)
    }
}

/// One call a party makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `random_shares(n)`.
    Shares(usize),
    /// `and_triples(n)`.
    Triples(usize),
    /// `random_shares(n)` twice, `and_triples(n)`, then [`and_from_triples`] on the two batches.
    AndOnMasks(usize),
    /// `triples_and_shares(t, s)`.
    Both(usize, usize),
}

/// What a call returned (one party's view).
#[derive(Debug, Clone)]
pub enum Out {
    /// From [`Op::Shares`].
    Shares(AuthShares),
    /// From [`Op::Triples`].
    Triples(Triples),
    /// From [`Op::AndOnMasks`]: the two inputs and the product.
    And(AuthShares, AuthShares, AuthShares),
    /// From [`Op::Both`].
    Both(Triples, AuthShares),
}

/// Runs `ops` in order for every party of a fresh `n`-party network, each with an instance from
/// `factory`; returns every party's Δ and outputs. Panics if any party fails or they deadlock.
pub fn run_ops<F: Factory>(factory: &F, n: usize, ops: &[Op]) -> (Vec<Block>, Vec<Vec<Out>>) {
    let net = network(n);
    let results = run_local(join_all(net.iter().map(|ch| async move {
        let mut p = factory.make(ch).await?;
        let mut outs = Vec::with_capacity(ops.len());
        for op in ops {
            outs.push(match *op {
                Op::Shares(k) => Out::Shares(p.random_shares(k).await?),
                Op::Triples(k) => Out::Triples(p.and_triples(k).await?),
                Op::AndOnMasks(k) => {
                    let a = p.random_shares(k).await?;
                    let b = p.random_shares(k).await?;
                    let t = p.and_triples(k).await?;
                    let ab = and_from_triples(ch, p.delta(), &a, &b, t).await?;
                    Out::And(a, b, ab)
                }
                Op::Both(t, s) => {
                    let (t, s) = p.triples_and_shares(t, s).await?;
                    Out::Both(t, s)
                }
            });
        }
        Ok::<_, AuthGcError>((p.delta(), outs))
    })))
    .expect("the parties deadlocked");
    let mut deltas = Vec::with_capacity(n);
    let mut outs = Vec::with_capacity(n);
    for (i, r) in results.into_iter().enumerate() {
        let (d, o) = r.unwrap_or_else(|e| panic!("party {i} failed: {e} ({})", e.code()));
        deltas.push(d);
        outs.push(o);
    }
    (deltas, outs)
}

fn column(outs: &[Vec<Out>], k: usize) -> Vec<&Out> {
    outs.iter().map(|o| &o[k]).collect()
}

fn shares_of(col: &[&Out]) -> Vec<AuthShares> {
    col.iter()
        .map(|o| match o {
            Out::Shares(s) => s.clone(),
            other => panic!("expected shares, got {other:?}"),
        })
        .collect()
}

fn triples_of(col: &[&Out]) -> (Vec<AuthShares>, Vec<AuthShares>, Vec<AuthShares>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    let mut z = Vec::new();
    for o in col {
        match o {
            Out::Triples(t) => {
                x.push(t.x.clone());
                y.push(t.y.clone());
                z.push(t.z.clone());
            }
            other => panic!("expected triples, got {other:?}"),
        }
    }
    (x, y, z)
}

/// Checks shape (every party's view has `len` entries and a column per peer) and every tag, and
/// returns the shared values.
fn valid_values(views: &[AuthShares], deltas: &[Block], len: usize, what: &str) -> Vec<bool> {
    for (i, v) in views.iter().enumerate() {
        assert_eq!(v.me, i, "{what}: party {i}'s view is labelled {}", v.me);
        assert_eq!(v.len(), len, "{what}: party {i} got {} values, asked for {len}", v.len());
        v.check_shape().unwrap_or_else(|e| panic!("{what}: party {i}: {e}"));
    }
    // `reconstruct` panics on any tag that does not verify under the verifier's Δ.
    reconstruct(views, deltas)
}

/// Random-looking: a batch of 128 or more values is neither constant nor equal to another.
fn not_constant(values: &[bool], what: &str) {
    if values.len() >= 128 {
        assert!(values.iter().any(|&b| b) && values.iter().any(|&b| !b), "{what}: {} constant values", values.len());
    }
}

/// Every Δ is nonzero, the parties' differ, and two instances (from two factories) share none.
pub fn deltas_are_fresh<F: Factory>(make: impl Fn() -> F, n: usize) {
    let (a, _) = run_ops(&make(), n, &[]);
    let (b, _) = run_ops(&make(), n, &[]);
    for d in a.iter().chain(&b) {
        assert_ne!(*d, Block::ZERO, "a zero Δ");
    }
    for i in 0..n {
        for j in 0..n {
            if i != j {
                assert_ne!(a[i], a[j], "parties {i} and {j} share a Δ");
            }
            assert_ne!(a[i], b[j], "two instances share a Δ");
        }
    }
}

/// For each size: `random_shares` and `and_triples` return that many values, every tag verifies
/// under its verifier's Δ, and z = x ∧ y.
pub fn outputs_are_valid<F: Factory>(factory: &F, n: usize, sizes: &[usize]) {
    let ops: Vec<Op> = sizes.iter().flat_map(|&s| [Op::Shares(s), Op::Triples(s)]).collect();
    let (deltas, outs) = run_ops(factory, n, &ops);
    for (k, &size) in sizes.iter().enumerate() {
        let r = valid_values(&shares_of(&column(&outs, 2 * k)), &deltas, size, "random shares");
        not_constant(&r, "random shares");
        let (x, y, z) = triples_of(&column(&outs, 2 * k + 1));
        let vx = valid_values(&x, &deltas, size, "triples x");
        let vy = valid_values(&y, &deltas, size, "triples y");
        let vz = valid_values(&z, &deltas, size, "triples z");
        for t in 0..size {
            assert_eq!(vz[t], vx[t] & vy[t], "n = {n}, size {size}: triple {t} does not multiply");
        }
        not_constant(&vx, "triples x");
        not_constant(&vy, "triples y");
    }
}

/// For each (t, s): `triples_and_shares(t, s)` returns t triples and s shares, as valid as the two
/// calls' (tags verify, z = x ∧ y), and the shares are not the triples' bits: no key of a share
/// is a key of a triple's x, y or z (the real preprocessor makes them in one aBit run).
pub fn combined_call_is_valid<F: Factory>(factory: &F, n: usize, sizes: &[(usize, usize)]) {
    let ops: Vec<Op> = sizes.iter().map(|&(t, s)| Op::Both(t, s)).collect();
    let (deltas, outs) = run_ops(factory, n, &ops);
    for (k, &(t, s)) in sizes.iter().enumerate() {
        let (mut triples, mut shares) = (Vec::new(), Vec::new());
        for o in column(&outs, k) {
            match o {
                Out::Both(tr, sh) => {
                    triples.push(tr.clone());
                    shares.push(sh.clone());
                }
                other => panic!("expected triples and shares, got {other:?}"),
            }
        }
        let r = valid_values(&shares, &deltas, s, "riding shares");
        not_constant(&r, "riding shares");
        let x: Vec<AuthShares> = triples.iter().map(|t| t.x.clone()).collect();
        let y: Vec<AuthShares> = triples.iter().map(|t| t.y.clone()).collect();
        let z: Vec<AuthShares> = triples.iter().map(|t| t.z.clone()).collect();
        let vx = valid_values(&x, &deltas, t, "triples x");
        let vy = valid_values(&y, &deltas, t, "triples y");
        let vz = valid_values(&z, &deltas, t, "triples z");
        for i in 0..t {
            assert_eq!(vz[i], vx[i] & vy[i], "n = {n}, ({t}, {s}): triple {i} does not multiply");
        }
        let mut seen = std::collections::HashSet::new();
        for views in [&x, &y, &z] {
            for v in views.iter() {
                for j in v.peers() {
                    seen.extend(v.keys[j].iter().map(|b| b.0));
                }
            }
        }
        for v in shares.iter() {
            for j in v.peers() {
                assert!(v.keys[j].iter().all(|b| !seen.contains(&b.0)), "a share's key is a triple's");
            }
        }
    }
}

/// Two batches from consecutive calls are independent: different values, no key in common.
pub fn batches_are_independent<F: Factory>(factory: &F, n: usize, size: usize) {
    assert!(size >= 128, "independence is only observable on batches of 128 or more");
    let ops = [Op::Shares(size), Op::Shares(size), Op::Triples(size), Op::Triples(size)];
    let (deltas, outs) = run_ops(factory, n, &ops);
    let a = shares_of(&column(&outs, 0));
    let b = shares_of(&column(&outs, 1));
    assert_ne!(valid_values(&a, &deltas, size, "batch 1"), valid_values(&b, &deltas, size, "batch 2"));
    let (x1, y1, _) = triples_of(&column(&outs, 2));
    let (x2, y2, _) = triples_of(&column(&outs, 3));
    assert_ne!(valid_values(&x1, &deltas, size, "x1"), valid_values(&x2, &deltas, size, "x2"));
    assert_ne!(valid_values(&y1, &deltas, size, "y1"), valid_values(&y2, &deltas, size, "y2"));
    let mut seen = std::collections::HashSet::new();
    for views in [&a, &b, &x1, &x2] {
        for v in views.iter() {
            for j in v.peers() {
                for key in &v.keys[j] {
                    assert!(seen.insert(key.0), "a key repeats across batches");
                }
            }
        }
    }
}

/// F_Pre.AND on wire masks built from the triples multiplies.
pub fn and_on_masks_works<F: Factory>(factory: &F, n: usize, size: usize) {
    let (deltas, outs) = run_ops(factory, n, &[Op::AndOnMasks(size)]);
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut ab = Vec::new();
    for o in column(&outs, 0) {
        match o {
            Out::And(x, y, z) => {
                a.push(x.clone());
                b.push(y.clone());
                ab.push(z.clone());
            }
            other => panic!("expected an AND, got {other:?}"),
        }
    }
    let va = valid_values(&a, &deltas, size, "a");
    let vb = valid_values(&b, &deltas, size, "b");
    let vab = valid_values(&ab, &deltas, size, "a ∧ b");
    assert!((0..size).all(|k| vab[k] == (va[k] & vb[k])), "F_Pre.AND on masks");
}

/// Every check of the contract for `n` parties, at small sizes (0, 1, an odd size and a batch of
/// a few hundred).
pub fn check_all<F: Factory>(make: impl Fn() -> F, n: usize) {
    deltas_are_fresh(&make, n);
    outputs_are_valid(&make(), n, &[0, 1, 37, 300]);
    batches_are_independent(&make(), n, 200);
    and_on_masks_works(&make(), n, 65);
    combined_call_is_valid(&make(), n, &[(0, 5), (1, 0), (37, 300), (300, 37)]);
}
