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

/// [`sender_product`] in wire form, as the protocol runs it: writes the encodings of the
/// corrections `d_h` into `out` (`16·K` bytes, `d_0` first) and returns the sender's share
/// −⟨g, q0⟩, accumulated unreduced ([`Field::horner`], from `h = K − 1` down) instead of held
/// in an array and reduced per product.
#[inline]
pub fn sender_product_into<F: Field>(r0: &[Block], r1: &[Block], b: F, out: &mut [u8]) -> F {
    debug_assert!(r0.len() == K && r1.len() == K && out.len() == 16 * K);
    let mut acc = F::Horner::default();
    for ((x0, x1), d) in r0.iter().zip(r1).zip(out.chunks_exact_mut(16)).rev() {
        let q0 = F::from_hash(*x0);
        d.copy_from_slice(&(q0 - F::from_hash(*x1) + b).to_bytes());
        acc = F::horner(acc, q0);
    }
    -F::horner_value(acc)
}

/// [`receiver_product`] from the wire form of the corrections (`16·K` bytes): the receiver's
/// share ⟨g, t⟩, and whether every correction was a canonical encoding (if not, the share is
/// meaningless and the message must be rejected).
#[inline]
pub fn receiver_product_bytes<F: Field>(a: F, m: &[Block], d: &[u8]) -> (F, bool) {
    debug_assert!(m.len() == K && d.len() == 16 * K);
    let bits = a.bits();
    let mut acc = F::Horner::default();
    let mut ok = true;
    for (h, (m, d)) in m.iter().zip(d.chunks_exact(16)).enumerate().rev() {
        let (d, canonical) = F::from_bytes_flagged(d.try_into().expect("16 bytes"));
        ok &= canonical;
        // a_h selects d without a branch or a secret-dependent index.
        let bit = Choice::from(((bits >> h) & 1) as u8);
        acc = F::horner(acc, F::from_hash(*m) + F::conditional_select(&F::ZERO, &d, bit));
    }
    (F::horner_value(acc), ok)
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

    /// The wire-form products give what the element products give, and flag a non-canonical
    /// correction.
    #[test]
    fn wire_form_products_match() {
        fn check<F: Field>() {
            let mut prg = Prg::from_seed(Block::from_u128(10));
            for _ in 0..4 {
                let (a, b) = (F::random(&mut prg), F::random(&mut prg));
                let mut m0 = vec![Block::ZERO; K];
                let mut m1 = vec![Block::ZERO; K];
                prg.fill_blocks(&mut m0);
                prg.fill_blocks(&mut m1);
                let mut d = Vec::new();
                let s = sender_product(&m0, &m1, b, |_, x| d.push(x));
                let mut wire = vec![0u8; 16 * K];
                assert_eq!(sender_product_into(&m0, &m1, b, &mut wire), s);
                assert_eq!(wire, F::write_vec(&d));
                let bits = choice_bits(&[a]);
                let m: Vec<Block> = bits.iter().enumerate().map(|(j, c)| if *c { m1[j] } else { m0[j] }).collect();
                let r = receiver_product(a, &m, &d);
                assert_eq!(receiver_product_bytes(a, &m, &wire), (r, true));
                assert_eq!(r + s, a * b);
                if F::KIND == crate::field::FieldKind::Prime {
                    wire[16 * 77..16 * 78].fill(0xff);
                    assert!(!receiver_product_bytes(a, &m, &wire).1);
                }
            }
        }
        check::<Fp>();
        check::<Gf128>();
    }
}
