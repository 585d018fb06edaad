//! A trusted dealer for the preprocessing (feature `ideal`): MAC key shares, triples, random bits
//! and input masks sampled in the clear and handed out as authenticated shares. It lets the
//! online phase be tested on its own; `tests/online.rs` runs the same programs on real MASCOT
//! preprocessing too. No security here by design.

use crate::field::Field;
use crate::party::Party;
use crate::share::{Share, Triple};
use crate::store::{Counts, Store};
use crate::testing::Cheat;
use webmpc_core::channel::Channel;
use webmpc_core::prg::Prg;
use webmpc_ot::SessionId;

/// The dealer: knows every Δ^(i).
pub struct Dealer<F> {
    deltas: Vec<F>,
    prg: Prg,
}

impl<F: Field> Dealer<F> {
    /// A dealer for `n` parties with fresh random Δ^(i).
    pub fn new(n: usize) -> Dealer<F> {
        let mut prg = Prg::from_entropy().expect("platform randomness");
        let deltas = (0..n).map(|_| F::random(&mut prg)).collect();
        Dealer { deltas, prg }
    }

    /// Δ^(i).
    pub fn deltas(&self) -> &[F] {
        &self.deltas
    }

    /// Random authenticated shares of `x`.
    pub fn share(&mut self, x: F) -> Vec<Share<F>> {
        let delta: F = self.deltas.iter().fold(F::ZERO, |a, d| a + *d);
        let n = self.deltas.len();
        let mut out = Vec::with_capacity(n);
        let (mut vs, mut ms) = (F::ZERO, F::ZERO);
        for _ in 0..n - 1 {
            let (v, m) = (F::random(&mut self.prg), F::random(&mut self.prg));
            vs += v;
            ms += m;
            out.push(Share { value: v, mac: m });
        }
        out.push(Share { value: x - vs, mac: x * delta - ms });
        out
    }

    /// One store per party holding `counts`.
    pub fn stores(&mut self, counts: &Counts) -> Vec<Store<F>> {
        let n = self.deltas.len();
        let mut stores: Vec<Store<F>> = (0..n).map(|_| Store::new(n)).collect();
        for _ in 0..counts.triples {
            let (a, b) = (F::random(&mut self.prg), F::random(&mut self.prg));
            let (sa, sb, sc) = (self.share(a), self.share(b), self.share(a * b));
            for i in 0..n {
                stores[i].triples.push_back(Triple { a: sa[i], b: sb[i], c: sc[i] });
            }
        }
        for _ in 0..counts.bits {
            let bit = F::from_u64((self.prg.next_block().0[0] & 1) as u64);
            for (i, s) in self.share(bit).into_iter().enumerate() {
                stores[i].bits.push_back(s);
            }
        }
        for (owner, &k) in counts.masks.iter().enumerate() {
            for _ in 0..k {
                let r = F::random(&mut self.prg);
                for (i, s) in self.share(r).into_iter().enumerate() {
                    stores[i].masks[owner].push_back((s, (i == owner).then_some(r)));
                }
            }
        }
        stores
    }

    /// Parties over `channels` with dealer-made stores of `counts`; `cheats[i]` is party i's
    /// deviation (tests).
    pub fn parties<C: Channel>(&mut self, channels: Vec<C>, counts: &Counts, cheats: Vec<Cheat>) -> Vec<Party<F, C>> {
        let sid = SessionId::random().expect("platform randomness");
        let stores = self.stores(counts);
        channels
            .into_iter()
            .zip(stores)
            .zip(cheats)
            .enumerate()
            .map(|(i, ((ch, st), cheat))| Party::from_dealer(ch, &sid, self.deltas[i], st, cheat))
            .collect()
    }
}
