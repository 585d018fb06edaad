//! The pure part of comparisons in F_p (after Catrina–de Hoogh, "Improved primitives for secure
//! multiparty integer computation", SCN 2010), as used by [`crate::online`]: no IO, no
//! randomness; the functions are generic over what they combine, so the driver runs them on
//! authenticated shares and the tests on plain integers.
//!
//! **Less than zero.** For a ∈ [−2^m, 2^m) (m = k for k-bit operands a − b), with shared random
//! bits r_0..r_{m−1} (r′ = Σ 2^i r_i) and κ + 1 more bits forming r″ < 2^(κ+1):
//!
//! ```text
//! c   = Open(a + 2^m + r′ + 2^m·r″)        (hides a + 2^m ∈ [0, 2^(m+1)): r is 2^κ times larger)
//! c′  = c mod 2^m,   c_m = bit m of c
//! u   = [c′ < r′]                          (the borrow of c′ − r′: a carry tree on public c′)
//! LTZ = 1 − (c_m ⊕ r″_0 ⊕ u)               (1 − bit m of a + 2^m, i.e. 1 iff a < 0)
//! ```
//!
//! Why the last line: c − r = a + 2^m lies in [0, 2^(m+1)) and c does not wrap mod p
//! (c < 2^(m+κ+2) ≤ 2^127 < p, see [`stat_sec`]), so bit m of a + 2^m is bit m of the subtraction c − r, which is
//! c_m ⊕ r_m ⊕ (borrow out of the low m bits); r_m = r″_0 and that borrow is u. r″_0 ⊕ u costs one
//! multiplication (x ⊕ y = x + y − 2xy) after the tree. **The result is a bit whatever a is**: u is
//! a bit for any public c (below), r″_0 is a preprocessed bit, and XOR and negation by a public
//! bit keep bits bits. An operand outside its declared range therefore gives a wrong 0/1, never a
//! value that lets SELECT mix both branches. (Catrina–de Hoogh's (a − (a mod 2^m))·2^−m is equal
//! for in-range a but is −t for a = t·2^m.)
//!
//! **The carry tree.** Position i gets (generate, propagate) g_i = r_i·¬c_i, p_i = r_i ⊕ ¬c_i,
//! linear in r_i since c is public; (G, P) ∘ (G′, P′) = (G + P·G′, P·P′) combines a higher range
//! over a lower one, and the root's G is [c′ < r′] (the carry out of r′ + ¬c′). g_i and p_i are
//! never both 1, and the combination keeps that, so every G and P is a bit. The lowest node's P is
//! never used (the root needs only G, and a lowest node's P only feeds the next lowest node's P),
//! so it is not computed: m − 1 combinations cost 2(m − 1) − ⌈log2 m⌉ multiplications in
//! ⌈log2 m⌉ rounds.
//!
//! **Equal to zero.** For |a| < 2^K (K = k), with K bits r′ and κ + 1 bits r″:
//! c = Open(a + 2^K + r′ + 2^K·r″); a = 0 iff c mod 2^K = r′ bit for bit, so
//! EQZ(a) = Π_i (c_i ? r_i : 1 − r_i): a product tree of K − 1 multiplications, a bit for any a.
//!
//! **Statistical hiding.** The opened c is a value in [0, 2^(m+1)) plus a uniform r of
//! m + κ + 1 bits: statistical distance at most 2^−κ from a value independent of a, **per
//! comparison**, with κ = κ(m) = min(64, 125 − m) ([`stat_sec`]): 2^−64 for widths up to 61 bits
//! and at worst 2^−61 (64-bit operands). A program with C comparisons leaks at most
//! Σ 2^−κ(m_i) ≤ C·2^−61 in statistical distance, which is within the 2^−64 per triple that τ = 3
//! gives the preprocessing for any realistic C. This needs the operand to be in its range *and
//! correct*: the driver MAC-checks everything opened before a comparison that depends on it (an
//! additive error e·y in a Beaver product would otherwise be masked only by r).
//!
//! a < b on k-bit integers is LTZ(a − b) with m = k; a ≤ b is 1 − LTZ(b − a); a = b is
//! EQZ(a − b) with K = k.

use core::ops::{Add, Sub};

/// The most statistical security a comparison's masking is given, in bits: κ = 64 matches the
/// k/2 = 64 bits that τ = 3 gives the preprocessing against Multiply's selective failure
/// ([`crate::party::TAU`]), so the masking is never the weakest link.
pub const STAT_SEC_MAX: usize = 64;

/// κ(m): the statistical security of the masking in one comparison of width m, in bits: as much
/// as the field leaves room for, up to [`STAT_SEC_MAX`].
///
/// The opened c = (a + 2^m) + r′ + 2^m·r″ with a + 2^m < 2^(m+1), r′ < 2^m and r″ < 2^(κ+1) is
/// below 2^(m+1) + 2^(m+κ+1) ≤ 2^(m+κ+2), which must not wrap mod p > 2^127: m + κ + 2 ≤ 127,
/// so κ(m) = min(64, 125 − m). For every width the protocol allows (m ≤ 64) that is at least 61:
/// 64 bits up to m = 61, then 63, 62, 61 for m = 62, 63, 64.
pub const fn stat_sec(m: usize) -> usize {
    let room = 125 - m;
    if room < STAT_SEC_MAX {
        room
    } else {
        STAT_SEC_MAX
    }
}

/// Random bits for one LTZ on k-bit operands: m = k bits of r′ and κ(k) + 1 of r″.
pub fn lt_bits(k: usize) -> usize {
    k + stat_sec(k) + 1
}

/// Random bits for one EQZ on k-bit operands: k bits of r′ and κ(k) + 1 of r″.
pub fn eq_bits(k: usize) -> usize {
    k + stat_sec(k) + 1
}

/// ⌈log2 x⌉ for x ≥ 1.
pub fn ceil_log2(x: usize) -> usize {
    (usize::BITS - (x.max(1) - 1).leading_zeros()) as usize
}

/// (triples, bits) for a < b (or ≤) on k-bit operands (k ≥ 1): the carry tree over m = k
/// positions (2(k − 1) − ⌈log2 k⌉ multiplications) and the final r″_0 ⊕ u (one).
pub fn lt_cost(k: usize) -> (usize, usize) {
    (2 * (k - 1) - ceil_log2(k) + 1, lt_bits(k))
}

/// (triples, bits) for a = b on k-bit operands (k ≥ 1): a product tree of k − 1 multiplications.
pub fn eq_cost(k: usize) -> (usize, usize) {
    (k - 1, eq_bits(k))
}

/// Bits 0..m of a public value's canonical integer.
pub fn low_bits(c: u128, m: usize) -> Vec<bool> {
    (0..m).map(|i| (c >> i) & 1 == 1).collect()
}

/// The carry tree's leaves (g_i, p_i) for the public bits `c` and the shared bits `r`:
/// (0, r_i) where c_i = 1, (r_i, 1 − r_i) where c_i = 0. `one` is the sharing of 1.
pub fn carry_leaves<T: Copy + Sub<Output = T> + Default>(c: &[bool], r: &[T], one: T) -> Vec<(T, T)> {
    r.iter().zip(c).map(|(r, ci)| if *ci { (T::default(), *r) } else { (*r, one - *r) }).collect()
}

/// The products one level of the carry tree needs, in order: for each pair of adjacent nodes
/// (lower l, higher h), P_h·G_l, then P_h·P_l unless l is the lowest node. An unpaired top node
/// waits for the next level.
pub fn carry_level_pairs<T: Copy>(nodes: &[(T, T)]) -> Vec<(T, T)> {
    let mut out = Vec::with_capacity(nodes.len());
    for (i, p) in nodes.chunks_exact(2).enumerate() {
        out.push((p[1].1, p[0].0));
        if i > 0 {
            out.push((p[1].1, p[0].1));
        }
    }
    out
}

/// The next level from `nodes` and the products [`carry_level_pairs`] asked for (taken from
/// `products` in the same order). The lowest node's P is left at `T::default()`: never used.
pub fn carry_level_apply<T: Copy + Add<Output = T> + Default>(
    nodes: &[(T, T)],
    products: &mut impl Iterator<Item = T>,
) -> Vec<(T, T)> {
    let mut next = Vec::with_capacity(nodes.len().div_ceil(2));
    for (i, p) in nodes.chunks(2).enumerate() {
        if p.len() == 2 {
            let pg = products.next().expect("one product per pair");
            let pp = if i > 0 { products.next().expect("two products per higher pair") } else { T::default() };
            next.push((p[1].0 + pg, pp));
        } else {
            next.push(p[0]);
        }
    }
    next
}

/// The products one level of EQZ's product tree needs: adjacent factors pairwise.
pub fn product_level_pairs<T: Copy>(factors: &[T]) -> Vec<(T, T)> {
    factors.chunks_exact(2).map(|p| (p[0], p[1])).collect()
}

/// The next level of the product tree from the products of [`product_level_pairs`].
pub fn product_level_apply<T: Copy>(factors: &[T], products: &mut impl Iterator<Item = T>) -> Vec<T> {
    factors
        .chunks(2)
        .map(|p| if p.len() == 2 { products.next().expect("one product per pair") } else { p[0] })
        .collect()
}

/// EQZ's factors: [c_i = r_i] as c_i ? r_i : 1 − r_i.
pub fn eq_factors<T: Copy + Sub<Output = T>>(c: &[bool], r: &[T], one: T) -> Vec<T> {
    r.iter().zip(c).map(|(r, ci)| if *ci { *r } else { one - *r }).collect()
}

/// x ⊕ y for bits x, y from their product: x + y − 2xy.
pub fn xor_from_product<T: Copy + Add<Output = T> + Sub<Output = T>>(x: T, y: T, xy: T) -> T {
    x + y - xy - xy
}

/// LTZ = 1 − (c_m ⊕ v) for v = r″_0 ⊕ u: v where c_m = 1, 1 − v where c_m = 0.
pub fn ltz_from<T: Copy + Sub<Output = T>>(c_m: bool, v: T, one: T) -> T {
    if c_m {
        v
    } else {
        one - v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{Field, Fp};
    use webmpc_core::prg::Prg;

    /// Runs the carry tree on plain integers (products are real products): [c < r] for the low
    /// m bits, and how many products it took.
    fn borrow(c: u128, r: u128, m: usize) -> (i128, usize) {
        let rb: Vec<i128> = (0..m).map(|i| ((r >> i) & 1) as i128).collect();
        let mut nodes = carry_leaves(&low_bits(c, m), &rb, 1);
        let mut used = 0;
        while nodes.len() > 1 {
            let prods: Vec<i128> = carry_level_pairs(&nodes).iter().map(|(x, y)| x * y).collect();
            used += prods.len();
            nodes = carry_level_apply(&nodes, &mut prods.into_iter());
        }
        (nodes[0].0, used)
    }

    #[test]
    fn carry_tree_gives_the_borrow_with_the_advertised_number_of_products() {
        for m in 1..=7usize {
            for c in 0u128..(1 << m) {
                for r in 0u128..(1 << m) {
                    let (u, used) = borrow(c, r, m);
                    assert_eq!(u, (c < r) as i128, "m={m} c={c} r={r}");
                    assert_eq!(used, lt_cost(m).0 - 1, "m={m}");
                }
            }
        }
        assert_eq!(lt_cost(32).0, 2 * 31 - 5 + 1);
        assert_eq!(lt_cost(64).0, 2 * 63 - 6 + 1);
        assert_eq!(lt_cost(1).0, 1);
        assert_eq!((ceil_log2(1), ceil_log2(2), ceil_log2(3), ceil_log2(64), ceil_log2(65)), (0, 1, 2, 6, 7));
    }

    /// Both comparisons open c = v + r with v = a + 2^m in [0, 2^(m+1)) (LT: m = k, a in
    /// [-2^k, 2^k); EQ: K = k, |a| < 2^k) and r uniform below 2^(bits of r): the statistical
    /// distance from a value independent of a is 2^(m+1) / 2^(bits of r), which must be at most
    /// 2^-κ(k), with κ(k) ≥ 61 for every width and 64 for widths up to 61; and c must not wrap
    /// mod p. (Equality once took κ bits of r″, one short; κ was once 40.)
    #[test]
    fn masks_hide_the_operand_by_kappa_bits_for_every_comparison_and_width() {
        let p = u128::MAX - 172;
        for k in 1..=64usize {
            let kappa = stat_sec(k);
            assert!(kappa >= 61 && kappa <= STAT_SEC_MAX, "k={k}");
            assert_eq!(kappa == STAT_SEC_MAX, k <= 61, "k={k}: 64 bits wherever the field leaves room");
            let masked_range_bits = k + 1;
            assert!(lt_bits(k) >= masked_range_bits + kappa, "LT k={k}");
            assert!(eq_bits(k) >= masked_range_bits + kappa, "EQ k={k}");
            // The largest c: v < 2^(k+1), r′ < 2^k, r″ < 2^(κ+1); it must stay below p.
            let (v, r1, r2) = ((1u128 << (k + 1)) - 1, (1u128 << k) - 1, (1u128 << (kappa + 1)) - 1);
            let c = v.checked_add(r1).and_then(|x| x.checked_add(r2.checked_mul(1u128 << k)?));
            assert!(c.is_some_and(|c| c < p), "k={k}: the opened c could wrap mod p");
            assert_eq!(eq_cost(k).1, eq_bits(k));
            assert_eq!(lt_cost(k).1, lt_bits(k));
        }
    }

    /// The whole LTZ in F_p with plain values: c from a and random masks, then the tree and the
    /// final XOR. In range it is [a < 0]; out of range (any field element) it is still a bit.
    fn ltz(a: Fp, m: usize, prg: &mut Prg) -> Fp {
        let r1 = prg.next_block().to_u128() & ((1u128 << m) - 1);
        let r2 = prg.next_block().to_u128() & ((1u128 << (stat_sec(m) + 1)) - 1);
        let pow = |e: usize| Fp::from_bits(1u128 << e);
        let c = a + pow(m) + Fp::from_bits(r1) + Fp::from_bits(r2) * pow(m);
        let c = c.bits();
        let (u, _) = borrow(c & ((1u128 << m) - 1), r1, m);
        let r0 = (r2 & 1) as i128;
        let v = xor_from_product(r0, u, r0 * u);
        let l = ltz_from((c >> m) & 1 == 1, v, 1);
        if l < 0 {
            -Fp::from_bits((-l) as u128)
        } else {
            Fp::from_bits(l as u128)
        }
    }

    #[test]
    fn ltz_is_the_sign_in_range_and_a_bit_everywhere() {
        let mut prg = Prg::from_seed(webmpc_core::Block::from_u128(3));
        for m in [1usize, 2, 3, 5, 8] {
            let lim = 1i128 << m;
            for a in -lim..lim {
                let fa = if a < 0 { -Fp::from_bits((-a) as u128) } else { Fp::from_bits(a as u128) };
                for _ in 0..4 {
                    assert_eq!(ltz(fa, m, &mut prg), Fp::from_bits((a < 0) as u128), "m={m} a={a}");
                }
            }
        }
        for m in [1usize, 32, 64] {
            for _ in 0..2000 {
                let a = Fp::random(&mut prg);
                let l = ltz(a, m, &mut prg);
                assert!(l == Fp::ZERO || l == Fp::ONE, "m={m}");
            }
            // The review's example: a = t·2^m (Catrina–de Hoogh's formula gives −t).
            let a = Fp::from_bits(1u128 << 40) * Fp::from_bits(1u128 << m);
            let l = ltz(a, m, &mut prg);
            assert!(l == Fp::ZERO || l == Fp::ONE);
        }
    }

    #[test]
    fn eqz_is_equality_in_range() {
        let mut prg = Prg::from_seed(webmpc_core::Block::from_u128(4));
        for k in [1usize, 2, 4, 6] {
            let lim = 1i128 << k;
            for a in (-lim + 1)..lim {
                let fa = if a < 0 { -Fp::from_bits((-a) as u128) } else { Fp::from_bits(a as u128) };
                let r1 = prg.next_block().to_u128() & ((1u128 << k) - 1);
                let r2 = prg.next_block().to_u128() & ((1u128 << (stat_sec(k) + 1)) - 1);
                let pow = Fp::from_bits(1u128 << k);
                let c = (fa + pow + Fp::from_bits(r1) + Fp::from_bits(r2) * pow).bits();
                let rb: Vec<u32> = (0..k).map(|i| ((r1 >> i) & 1) as u32).collect();
                let mut f = eq_factors(&low_bits(c, k), &rb, 1);
                let mut used = 0;
                while f.len() > 1 {
                    let prods: Vec<u32> = product_level_pairs(&f).iter().map(|(x, y)| x * y).collect();
                    used += prods.len();
                    f = product_level_apply(&f, &mut prods.into_iter());
                }
                assert_eq!(f[0], (a == 0) as u32, "k={k} a={a}");
                assert_eq!(used, eq_cost(k).0);
            }
        }
    }
}
