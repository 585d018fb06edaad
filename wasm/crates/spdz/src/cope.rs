//! Π_COPEe (Protocol 1 of MASCOT), the pure part: correlated oblivious product evaluation with
//! errors. P_B holds a fixed Δ; for every x P_A feeds in, P_A gets t and P_B gets q with
//! t + q = x·Δ. No IO here; `party.rs` moves the messages.
//!
//! **Initialize** (once per ordered pair and session): P_A holds k = 128 seed pairs
//! (k_0^i, k_1^i) and P_B gets k_{Δ_i}^i for the bits Δ_i = g⁻¹(Δ)_i, by 128 random OTs with
//! chosen choice bits (`rot.rs`). Seeds are per session and pair and never leave the party.
//!
//! **Extend(x_1..x_l)**: the PRF F(k, j) is the j-th element of the AES-CTR stream keyed by k,
//! mapped into the field by exact rejection sampling (both ends of a seed read the same stream,
//! so they reject the same blocks and stay in step). The counter j is the stream position: it
//! advances by one per element and can never repeat (pitfall P7: a repeated counter would reveal
//! x − x′ through u). For each row i and value h:
//!
//! ```text
//! P_A: t0 = F(k_0^i, j_h), t1 = F(k_1^i, j_h), sends u_{i,h} = t0 − t1 + x_h
//! P_B: q_{i,h} = Δ_i·u_{i,h} + F(k_{Δ_i}^i, j_h) = t0 + Δ_i·x_h
//! P_A: t_h = −⟨g, t0_{·,h}⟩      P_B: q_h = ⟨g, q_{·,h}⟩      t_h + q_h = x_h·Δ
//! ```
//!
//! A corrupt P_A may use a different x in different rows ("errors"): then t + q = ⟨g ∗ x, Δ_B⟩,
//! not x·Δ. COPE does not prevent this; the input check of Π_[[·]] catches it (P2).

use crate::field::Field;
use subtle::Choice;
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// Rows: one per bit of Δ.
pub const ROWS: usize = 128;

/// P_A's side of one ordered pair.
pub struct CopeSender<F> {
    prgs: Vec<[Prg; 2]>,
    _f: core::marker::PhantomData<F>,
}

/// P_B's side of one ordered pair: Δ^(B) and the chosen seeds.
pub struct CopeReceiver<F> {
    delta: F,
    prgs: Vec<Prg>,
}

impl<F: Field> CopeSender<F> {
    /// From the 128 seed pairs of Initialize.
    pub fn new(seeds: &[[Block; 2]]) -> CopeSender<F> {
        assert_eq!(seeds.len(), ROWS, "COPE needs one seed pair per bit of Δ");
        let prgs = seeds.iter().map(|[a, b]| [Prg::from_seed(*a), Prg::from_seed(*b)]).collect();
        CopeSender { prgs, _f: core::marker::PhantomData }
    }

    /// Extend for `xs`: returns `u` (row-major, `128·l` elements, to send to P_B) and P_A's
    /// outputs `t_h` (one per x).
    pub fn extend(&mut self, xs: &[F]) -> (Vec<F>, Vec<F>) {
        let l = xs.len();
        let mut u = vec![F::ZERO; ROWS * l];
        let t = self.extend_with(xs, |i, h, x| u[i * l + h] = x);
        (u, t)
    }

    /// [`CopeSender::extend`] writing `u` straight into its wire form: appends the `128·l`
    /// elements' encodings to `out` (row-major, as [`CopeReceiver::extend_bytes`] reads them).
    /// Returns P_A's outputs `t_h`.
    pub fn extend_into(&mut self, xs: &[F], out: &mut Vec<u8>) -> Vec<F> {
        let l = xs.len();
        let start = out.len();
        out.resize(start + 16 * ROWS * l, 0);
        let body = &mut out[start..];
        self.extend_with(xs, |i, h, x| {
            let at = 16 * (i * l + h);
            body[at..at + 16].copy_from_slice(&x.to_bytes());
        })
    }

    /// The work of both: `emit(row, h, u_{row,h})` for every element of u, rows from 127 down.
    fn extend_with(&mut self, xs: &[F], mut emit: impl FnMut(usize, usize, F)) -> Vec<F> {
        let l = xs.len();
        let mut acc = vec![F::ZERO; l];
        let mut t0 = vec![F::ZERO; l];
        let mut t1 = vec![F::ZERO; l];
        // Row 127 first: Horner's rule builds Σ_i 2^i·t0_i (or Σ X^i·t0_i) column by column.
        for i in (0..ROWS).rev() {
            F::random_fill(&mut self.prgs[i][0], &mut t0);
            F::random_fill(&mut self.prgs[i][1], &mut t1);
            for (h, ((a, b), x)) in t0.iter().zip(&t1).zip(xs).enumerate() {
                emit(i, h, *a - *b + *x);
                acc[h] = acc[h].times_g() + *a;
            }
        }
        crate::wipe::wipe(&mut t0);
        crate::wipe::wipe(&mut t1);
        for a in acc.iter_mut() {
            *a = -*a;
        }
        acc
    }
}

impl<F: Field> CopeReceiver<F> {
    /// From Δ^(B) and the seeds `k_{Δ_i}^i` of Initialize.
    pub fn new(delta: F, seeds: &[Block]) -> CopeReceiver<F> {
        assert_eq!(seeds.len(), ROWS, "COPE needs one seed per bit of Δ");
        CopeReceiver { delta, prgs: seeds.iter().map(|s| Prg::from_seed(*s)).collect() }
    }

    /// The choice bits of Initialize: g⁻¹(Δ).
    pub fn choice_bits(delta: F) -> Vec<bool> {
        let bits = delta.bits();
        (0..ROWS).map(|i| (bits >> i) & 1 == 1).collect()
    }

    /// Extend for P_A's `u` (`128·l` elements): P_B's outputs `q_h`.
    pub fn extend(&mut self, u: &[F], l: usize) -> Vec<F> {
        debug_assert_eq!(u.len(), ROWS * l);
        self.extend_with(l, |i, h| Some(u[i * l + h])).expect("every element given")
    }

    /// [`CopeReceiver::extend`] reading `u` from its wire form (`16·128·l` bytes, row-major),
    /// decoding as it goes; `None` if the length is wrong or an element is not canonical (then
    /// the PRF counter has moved on anyway: the caller must abort the session).
    pub fn extend_bytes(&mut self, u: &[u8], l: usize) -> Option<Vec<F>> {
        if u.len() != 16 * ROWS * l {
            return None;
        }
        self.extend_with(l, |i, h| {
            let at = 16 * (i * l + h);
            F::from_bytes(u[at..at + 16].try_into().expect("16 bytes"))
        })
    }

    /// The work of both, fetching `u_{row,h}` through `get` (rows from 127 down).
    fn extend_with(&mut self, l: usize, mut get: impl FnMut(usize, usize) -> Option<F>) -> Option<Vec<F>> {
        let bits = self.delta.bits();
        let mut acc = vec![F::ZERO; l];
        let mut t = vec![F::ZERO; l];
        let mut valid = true;
        for i in (0..ROWS).rev() {
            F::random_fill(&mut self.prgs[i], &mut t);
            // Δ_i selects u without a branch or an index that depends on it.
            let bit = Choice::from(((bits >> i) & 1) as u8);
            for (h, t) in t.iter().enumerate() {
                let u = get(i, h).unwrap_or_else(|| {
                    valid = false;
                    F::ZERO
                });
                let q = *t + F::conditional_select(&F::ZERO, &u, bit);
                acc[h] = acc[h].times_g() + q;
            }
        }
        crate::wipe::wipe(&mut t);
        valid.then_some(acc)
    }
}

impl<F: Field> CopeReceiver<F> {
    /// Overwrites this copy of Δ^(B) (the party wipes its copies when it is dropped; the PRGs
    /// wipe their keys themselves).
    pub fn wipe(&mut self) {
        crate::wipe::wipe(core::slice::from_mut(&mut self.delta));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{Fp, Gf128};

    fn run<F: Field>() {
        let mut prg = Prg::from_seed(Block::from_u128(5));
        let delta = F::random(&mut prg);
        let seeds: Vec<[Block; 2]> = (0..ROWS).map(|_| [prg.next_block(), prg.next_block()]).collect();
        let bits = CopeReceiver::<F>::choice_bits(delta);
        let chosen: Vec<Block> = seeds.iter().zip(&bits).map(|(s, b)| s[*b as usize]).collect();
        let mut a = CopeSender::<F>::new(&seeds);
        let mut b = CopeReceiver::new(delta, &chosen);
        // Two extends: the counter moves on, and outputs stay correct.
        for l in [3usize, 17] {
            let xs: Vec<F> = (0..l).map(|_| F::random(&mut prg)).collect();
            let (u, t) = a.extend(&xs);
            let q = b.extend(&u, l);
            for h in 0..l {
                assert_eq!(t[h] + q[h], xs[h] * delta);
            }
        }
        // A sender using a different x in one row breaks the relation (what the input check
        // must catch).
        let xs = vec![F::ONE];
        let (mut u, t) = a.extend(&xs);
        u[77] += F::ONE;
        let q = b.extend(&u, 1);
        let flipped = (delta.bits() >> 77) & 1 == 1;
        assert_eq!(t[0] + q[0] == delta, !flipped);
    }

    /// The wire-form paths give what the element paths give, and reject a non-canonical u.
    #[test]
    fn byte_paths_match_element_paths() {
        fn check<F: Field>() {
            let mut prg = Prg::from_seed(Block::from_u128(11));
            let delta = F::random(&mut prg);
            let seeds: Vec<[Block; 2]> = (0..ROWS).map(|_| [prg.next_block(), prg.next_block()]).collect();
            let bits = CopeReceiver::<F>::choice_bits(delta);
            let chosen: Vec<Block> = seeds.iter().zip(&bits).map(|(s, b)| s[*b as usize]).collect();
            let (mut a1, mut a2) = (CopeSender::<F>::new(&seeds), CopeSender::<F>::new(&seeds));
            let (mut b1, mut b2) = (CopeReceiver::new(delta, &chosen), CopeReceiver::new(delta, &chosen));
            for l in [1usize, 5, 70] {
                let xs: Vec<F> = (0..l).map(|_| F::random(&mut prg)).collect();
                let (u, t) = a1.extend(&xs);
                let mut wire = vec![9u8];
                let t2 = a2.extend_into(&xs, &mut wire);
                assert_eq!(t, t2);
                assert_eq!(&wire[1..], &F::write_vec(&u)[..]);
                let q = b1.extend(&u, l);
                assert_eq!(b2.extend_bytes(&wire[1..], l), Some(q));
            }
            assert!(b2.extend_bytes(&[0u8; 16], 1).is_none(), "wrong length");
        }
        check::<Fp>();
        check::<Gf128>();
        // An integer ≥ p is refused.
        let mut prg = Prg::from_seed(Block::from_u128(12));
        let seeds: Vec<Block> = (0..ROWS).map(|_| prg.next_block()).collect();
        let mut b = CopeReceiver::new(Fp::ONE, &seeds);
        assert!(b.extend_bytes(&[0xff; 16 * ROWS], 1).is_none());
    }

    #[test]
    fn extend_gives_shares_of_x_times_delta() {
        run::<Fp>();
        run::<Gf128>();
    }
}
