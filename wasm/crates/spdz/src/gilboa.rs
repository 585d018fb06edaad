//! Gilboa's oblivious product over random OT (Protocol 4, Multiply, steps 2a–2h), the pure part.
//!
//! For one element a held by the OT receiver (choice bits g⁻¹(a)) and one element b held by the
//! OT sender, with k = 128 random OTs whose outputs are mapped into the field
//! ([`Field::from_hash`]):
//!
//! ```text
//! sender:   q0_h, q1_h        sends d_h = q0_h − q1_h + b         share −⟨g, q0⟩
//! receiver: s_h = q_{a_h,h}   t_h = s_h + a_h·d_h = q0_h + a_h·b  share  ⟨g, t⟩
//! ```
//!
//! so the two shares add up to ⟨g, g⁻¹(a)⟩·b = a·b. d is uniform to the receiver because it
//! knows only one of q0, q1 (which is why b needs no masking).

use crate::field::Field;
use subtle::Choice;
use webmpc_core::Block;

/// OTs per product: the bits of one element.
pub const K: usize = 128;

/// The receiver's choice bits for the elements `a`: the exact bit decomposition of each, k bits
/// per element, lowest bit first.
pub fn choice_bits<F: Field>(a: &[F]) -> Vec<bool> {
    let mut out = Vec::with_capacity(K * a.len());
    for x in a {
        let bits = x.bits();
        out.extend((0..K).map(|h| (bits >> h) & 1 == 1));
    }
    out
}

/// Sender, one product: from the hashed ROT messages `r0`, `r1` of its K OTs and the sender's
/// element `b`, emits each correction `d_h = q0_h − q1_h + b` through `emit(h, d_h)` and returns
/// the sender's share −⟨g, q0⟩. What both [`sender_corrections`] and the protocol's streaming
/// path (which writes d straight into the outgoing message) run.
#[inline]
pub fn sender_product<F: Field>(r0: &[Block], r1: &[Block], b: F, mut emit: impl FnMut(usize, F)) -> F {
    debug_assert!(r0.len() == K && r1.len() == K);
    let mut q0 = [F::ZERO; K];
    for (h, (x0, x1)) in r0.iter().zip(r1).enumerate() {
        q0[h] = F::from_hash(*x0);
        emit(h, q0[h] - F::from_hash(*x1) + b);
    }
    let share = -F::gadget(&q0);
    crate::wipe::wipe(&mut q0);
    share
}

/// Receiver, one product: from its element `a` (whose bits were the choices), its hashed ROT
/// outputs `m` (K of them) and the sender's corrections `d`, its share ⟨g, t⟩ of a·b.
#[inline]
pub fn receiver_product<F: Field>(a: F, m: &[Block], d: &[F]) -> F {
    debug_assert!(m.len() == K && d.len() == K);
    let bits = a.bits();
    let mut t = [F::ZERO; K];
    for (h, (m, d)) in m.iter().zip(d).enumerate() {
        // a_h selects d without a branch or a secret-dependent index.
        let bit = Choice::from(((bits >> h) & 1) as u8);
        t[h] = F::from_hash(*m) + F::conditional_select(&F::ZERO, d, bit);
    }
    let share = F::gadget(&t);
    crate::wipe::wipe(&mut t);
    share
}

/// Sender: from both ROT messages of `K·b.len()` OTs and one element `b[e]` per product,
/// returns the corrections d (to send) and the sender's shares −⟨g, q0⟩.
pub fn sender_corrections<F: Field>(m0: &[Block], m1: &[Block], b: &[F]) -> (Vec<F>, Vec<F>) {
    debug_assert_eq!(m0.len(), K * b.len());
    let mut d = Vec::with_capacity(m0.len());
    let shares = b
        .iter()
        .enumerate()
        .map(|(e, b)| sender_product(&m0[e * K..(e + 1) * K], &m1[e * K..(e + 1) * K], *b, |_, x| d.push(x)))
        .collect();
    (d, shares)
}

/// Receiver: from its elements `a` (whose bits were the choices), its ROT outputs `m` and the
/// sender's corrections `d`, its shares ⟨g, t⟩ of each a·b.
pub fn receiver_products<F: Field>(a: &[F], m: &[Block], d: &[F]) -> Vec<F> {
    debug_assert_eq!(m.len(), K * a.len());
    debug_assert_eq!(d.len(), K * a.len());
    a.iter()
        .enumerate()
        .map(|(e, x)| receiver_product(*x, &m[e * K..(e + 1) * K], &d[e * K..(e + 1) * K]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{Fp, Gf128};
    use webmpc_core::prg::Prg;

    fn run<F: Field>() {
        let mut prg = Prg::from_seed(Block::from_u128(9));
        let n = 4;
        let a: Vec<F> = (0..n).map(|_| F::random(&mut prg)).collect();
        let b: Vec<F> = (0..n).map(|_| F::random(&mut prg)).collect();
        let mut m0 = vec![Block::ZERO; K * n];
        let mut m1 = vec![Block::ZERO; K * n];
        prg.fill_blocks(&mut m0);
        prg.fill_blocks(&mut m1);
        let bits = choice_bits(&a);
        let m: Vec<Block> = bits.iter().enumerate().map(|(j, c)| if *c { m1[j] } else { m0[j] }).collect();
        let (d, s) = sender_corrections(&m0, &m1, &b);
        let r = receiver_products(&a, &m, &d);
        for e in 0..n {
            assert_eq!(s[e] + r[e], a[e] * b[e]);
        }
    }

    #[test]
    fn shares_add_up_to_the_product() {
        run::<Fp>();
        run::<Gf128>();
    }
}
