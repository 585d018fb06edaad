//! A trusted-dealer F_Pre, for testing (and benchmarking) the layers above it alone.
//!
//! Every party holds the same dealer seed and derives the whole batch — all parties' views — from
//! it, then keeps its own view: no shared state, so parties can run in separate futures, threads
//! or processes. Every party's calls must come in the same order with the same sizes, as with the
//! real preprocessing. Never use this outside tests: any party can compute every other party's
//! shares, keys and Δ from the seed.

use crate::preprocess::{Preprocessor, Triples, CONSTANT_HOLDER};
use crate::share::{expected_macs, mask, AuthShares};
use crate::AuthGcError;
use sha2::{Digest, Sha256};
use webmpc_core::channel::PartyId;
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// All n parties' views of `len` random authenticated shares under the global keys `deltas`.
pub fn deal(prg: &mut Prg, deltas: &[Block], len: usize) -> Vec<AuthShares> {
    let n = deltas.len();
    let mut views: Vec<AuthShares> = (0..n).map(|i| AuthShares::zeros(i, n, len)).collect();
    let mut bytes = vec![0u8; len];
    for i in 0..n {
        prg.fill_bytes(&mut bytes);
        let bits: Vec<bool> = bytes.iter().map(|b| b & 1 == 1).collect();
        for j in (0..n).filter(|&j| j != i) {
            let mut keys = core::mem::take(&mut views[j].keys[i]);
            prg.fill_blocks(&mut keys);
            views[i].macs[j] = keys.iter().zip(&bits).map(|(&k, &b)| k ^ (deltas[j] & mask(b))).collect();
            views[j].keys[i] = keys;
        }
        views[i].bits = bits;
    }
    views
}

/// The values of a dealt batch (the XOR of every party's bits), without checking tags.
fn values(views: &[AuthShares]) -> Vec<bool> {
    let mut v = views[0].bits.clone();
    for view in &views[1..] {
        for (a, b) in v.iter_mut().zip(&view.bits) {
            *a ^= *b;
        }
    }
    v
}

/// Checks every tag in every view (panics on a bad one) and returns the shared values.
pub fn reconstruct(views: &[AuthShares], deltas: &[Block]) -> Vec<bool> {
    let n = views.len();
    let len = views[0].len();
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            assert_eq!(
                expected_macs(&views[j].keys[i], &views[i].bits, deltas[j]),
                views[i].macs[j],
                "tag of party {i} under party {j}'s key"
            );
        }
    }
    (0..len).map(|k| views.iter().fold(false, |acc, v| acc ^ v.bits[k])).collect()
}

/// All n parties' views of `len` random AND triples.
pub fn deal_triples(prg: &mut Prg, deltas: &[Block], len: usize) -> Vec<Triples> {
    let x = deal(prg, deltas, len);
    let y = deal(prg, deltas, len);
    let mut z = deal(prg, deltas, len);
    let (vx, vy, vz) = (values(&x), values(&y), values(&z));
    // Fix the constant holder's share so that z = x ∧ y, and its tags with it.
    let h = CONSTANT_HOLDER;
    for k in 0..len {
        let fix = (vx[k] & vy[k]) ^ vz[k];
        z[h].bits[k] ^= fix;
        for j in (0..deltas.len()).filter(|&j| j != h) {
            z[h].macs[j][k] ^= deltas[j] & mask(fix);
        }
    }
    x.into_iter().zip(y).zip(z).map(|((x, y), z)| Triples { x, y, z }).collect()
}

/// The trusted dealer's F_Pre, one party's handle.
pub struct IdealPreprocessor {
    me: PartyId,
    seed: [u8; 32],
    deltas: Vec<Block>,
    batch: u64,
}

impl IdealPreprocessor {
    /// Party `me`'s handle on a dealer shared by `parties` parties through `seed`.
    pub fn new(seed: [u8; 32], me: PartyId, parties: usize) -> Result<IdealPreprocessor, AuthGcError> {
        if parties < 2 || me >= parties {
            return Err(AuthGcError::InvalidArgument("ideal F_Pre needs 2 or more parties and me < parties".into()));
        }
        let mut prg = Prg::from_seed_bytes(&Self::derive(&seed, u64::MAX)[..16])?;
        let deltas = (0..parties).map(|_| prg.next_block()).collect();
        Ok(IdealPreprocessor { me, seed, deltas, batch: 0 })
    }

    /// Every party's global key (a test can check values against them).
    pub fn deltas(&self) -> &[Block] {
        &self.deltas
    }

    fn derive(seed: &[u8; 32], batch: u64) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"webmpc/authgc/ideal-fpre/v1");
        h.update(seed);
        h.update(batch.to_le_bytes());
        h.finalize().into()
    }

    fn next_prg(&mut self) -> Result<Prg, AuthGcError> {
        let prg = Prg::from_seed_bytes(&Self::derive(&self.seed, self.batch)[..16])?;
        self.batch += 1;
        Ok(prg)
    }
}

impl Preprocessor for IdealPreprocessor {
    fn party(&self) -> PartyId {
        self.me
    }

    fn parties(&self) -> usize {
        self.deltas.len()
    }

    fn delta(&self) -> Block {
        self.deltas[self.me]
    }

    async fn random_shares(&mut self, n: usize) -> Result<AuthShares, AuthGcError> {
        let mut prg = self.next_prg()?;
        Ok(deal(&mut prg, &self.deltas, n).swap_remove(self.me))
    }

    async fn and_triples(&mut self, n: usize) -> Result<Triples, AuthGcError> {
        let mut prg = self.next_prg()?;
        Ok(deal_triples(&mut prg, &self.deltas, n).swap_remove(self.me))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preprocess::and_from_triples;
    use futures::future::join_all;
    use webmpc_core::channel::memory::{network, run_local};
    use webmpc_core::channel::Channel;

    #[test]
    fn dealt_triples_multiply() {
        let mut prg = Prg::from_seed(Block::from_u128(5));
        let deltas: Vec<Block> = (0..3).map(|_| prg.next_block()).collect();
        let t = deal_triples(&mut prg, &deltas, 64);
        let x = reconstruct(&t.iter().map(|t| t.x.clone()).collect::<Vec<_>>(), &deltas);
        let y = reconstruct(&t.iter().map(|t| t.y.clone()).collect::<Vec<_>>(), &deltas);
        let z = reconstruct(&t.iter().map(|t| t.z.clone()).collect::<Vec<_>>(), &deltas);
        assert!((0..64).all(|k| z[k] == (x[k] & y[k])));
        assert!(x.iter().any(|&b| b) && x.iter().any(|&b| !b));
    }

    #[test]
    fn and_on_masks_from_ideal_triples() {
        for n in [2, 3, 4] {
            let seed = [n as u8; 32];
            let out = run_local(join_all(network(n).into_iter().map(|ch| async move {
                let mut pre = IdealPreprocessor::new(seed, ch.party(), n).unwrap();
                let a = pre.random_shares(100).await.unwrap();
                let b = pre.random_shares(100).await.unwrap();
                let t = pre.and_triples(100).await.unwrap();
                let ab = and_from_triples(&ch, pre.delta(), &a, &b, t).await.unwrap();
                (a, b, ab, pre.deltas().to_vec())
            })))
            .unwrap();
            let deltas = out[0].3.clone();
            let a = reconstruct(&out.iter().map(|o| o.0.clone()).collect::<Vec<_>>(), &deltas);
            let b = reconstruct(&out.iter().map(|o| o.1.clone()).collect::<Vec<_>>(), &deltas);
            let ab = reconstruct(&out.iter().map(|o| o.2.clone()).collect::<Vec<_>>(), &deltas);
            assert!((0..100).all(|k| ab[k] == (a[k] & b[k])), "n = {n}");
        }
    }
}
