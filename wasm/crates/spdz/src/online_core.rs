//! The pure part of comparisons in F_p (Catrina–de Hoogh, "Improved primitives for secure
//! multiparty integer computation", SCN 2010), as used by [`crate::online`].
//!
//! **Less than zero.** For a ∈ [−2^(K−1), 2^(K−1)) and m = K − 1, with shared random bits
//! r_0..r_{m−1} (r′ = Σ 2^i r_i) and κ + 1 more bits forming r″ < 2^(κ+1):
//!
//! ```text
//! c  = Open(2^(K−1) + a + 2^m·r″ + r′)          (statistically hides a: r is 2^κ times larger)
//! c′ = c mod 2^m
//! u  = [c′ < r′]                                  (carry-out of r′ + ¬c′: a carry tree)
//! a′ = c′ − r′ + 2^m·u                            (= a mod 2^m)
//! LTZ(a) = −(a − a′)·2^(−m)                       (= 1 iff a < 0)
//! ```
//!
//! c never wraps mod p: it is below 2^(K+κ+2) ≤ 2^107 for K ≤ 65. The carry tree combines
//! (generate, propagate) pairs g_i = r_i·¬c_i, p_i = r_i ⊕ ¬c_i (linear in r_i, since c is
//! public): (G, P) ∘ (G′, P′) = (G + P·G′, P·P′) for the higher range (G, P) above the lower
//! (G′, P′); two multiplications per combination, ⌈log2 m⌉ rounds.
//!
//! **Equal to zero.** For |a| < 2^K, with K bits r′ and κ bits r″:
//! c = Open(2^K + a + r′ + 2^K·r″); a = 0 iff c mod 2^K = r′ bit for bit, so
//! EQZ(a) = Π_i (c_i ? r_i : 1 − r_i), a product tree of K − 1 multiplications.
//!
//! a < b on k-bit integers is LTZ(a − b) with K = k + 1; a ≤ b is 1 − LTZ(b − a); a = b is
//! EQZ(a − b) with K = k (|a − b| < 2^k).

/// κ: statistical security of the masking in comparisons, in bits.
pub const STAT_SEC: usize = 40;

/// Random bits for one LTZ on K = k + 1 bits: m = k bits of r′ and κ + 1 of r″.
pub fn lt_bits(k: usize) -> usize {
    k + STAT_SEC + 1
}

/// Random bits for one EQZ on K = k bits: k bits of r′ and κ of r″.
pub fn eq_bits(k: usize) -> usize {
    k + STAT_SEC
}

/// (triples, bits) for a < b (or ≤) on k-bit operands: a carry tree over m = k positions
/// (2 multiplications per combination, m − 1 combinations).
pub fn lt_cost(k: usize) -> (usize, usize) {
    (2 * (k - 1), lt_bits(k))
}

/// (triples, bits) for a = b on k-bit operands: a product tree of k − 1 multiplications.
pub fn eq_cost(k: usize) -> (usize, usize) {
    (k - 1, eq_bits(k))
}

/// Bits 0..m of a public value's canonical integer.
pub fn low_bits(c: u128, m: usize) -> Vec<bool> {
    (0..m).map(|i| (c >> i) & 1 == 1).collect()
}

#[cfg(test)]
mod tests {
    /// The carry-tree identity on plain integers: [c < r] is the carry out of r + ¬c.
    #[test]
    fn carry_out_of_r_plus_not_c_is_less_than() {
        let m = 6;
        for c in 0u32..64 {
            for r in 0u32..64 {
                let mut nodes: Vec<(u32, u32)> = (0..m)
                    .map(|i| {
                        let (ci, ri) = ((c >> i) & 1, (r >> i) & 1);
                        (ri & (1 - ci), ri ^ (1 - ci))
                    })
                    .collect();
                while nodes.len() > 1 {
                    nodes = nodes
                        .chunks(2)
                        .map(|p| if p.len() == 2 { (p[1].0 + p[1].1 * p[0].0, p[1].1 * p[0].1) } else { p[0] })
                        .collect();
                }
                assert_eq!(nodes[0].0, (c < r) as u32, "c={c} r={r}");
            }
        }
    }
}
