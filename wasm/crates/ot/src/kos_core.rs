//! The pure part of KOS OT extension: matrix expansion, the consistency check, and layout.
//! No IO and no randomness source of its own; the protocol in `kos.rs` drives it.
//!
//! Layout of one chunk of `m` extended OTs (`m` a multiple of 128): each of the κ = 128 base OTs
//! owns one *row* of `m` bits (`m / 8` bytes, i.e. `m / 128` blocks), rows stored one after the
//! other. Bit `j` of row `i` belongs to OT `j`; transposing gives OT `j` its 128-bit block whose
//! bit `i` comes from row `i` (the convention of `webmpc_core::transpose`, and the bit order of
//! `Block::to_u128`, so bit `i` of Δ is base choice `i`).
//!
//! With the receiver's base keys `(k_i^0, k_i^1)`, its choice row `r` and `t_i = PRG(k_i^0)`:
//! `u_i = t_i ⊕ PRG(k_i^1) ⊕ r`. The sender, holding `k_i^{Δ_i}`, computes
//! `q_i = PRG(k_i^{Δ_i}) ⊕ Δ_i·u_i = t_i ⊕ Δ_i·r`, so after transposing, `Q_j = T_j ⊕ r_j·Δ`.
//!
//! **Consistency check** (revised KOS, Fig. 10; the original check's proof was shown wrong by
//! Roy's SoftSpokenOT paper). It runs on the untransposed rows: with challenges χ_0..χ_{K-1} ∈
//! GF(2^128), chosen by the sender *after* it received every `u_i`, and the chunk's last block of
//! each row as a one-time mask (the 128 extra OTs),
//!
//! ```text
//! receiver: x = Σ_k χ_k·r_k ⊕ r_K,   t̃_i = Σ_k χ_k·t_{i,k} ⊕ t_{i,K}   (i < 128)
//! sender:   accept iff  Σ_k χ_k·q_{i,k} ⊕ q_{i,K} = t̃_i ⊕ Δ_i·x  for every i
//! ```
//!
//! A receiver that used a different choice row in row i than the x it claims must guess Δ_i to
//! pass, so every inconsistent row halves its chance; and x is masked by the random extra block,
//! so it reveals nothing about the real choices.

use webmpc_core::gf128::{Gf128Coefficients, Gf128Sum};
use webmpc_core::prg::Prg;
use webmpc_core::transpose::transpose_128xn;
use webmpc_core::Block;

/// κ: base OTs, rows of the matrices, bits of Δ.
pub const KAPPA: usize = 128;

/// OTs in a chunk that carries `n` outputs: padded to a multiple of 128, plus one block of 128
/// extra OTs that masks the check.
pub fn chunk_width(n: usize) -> usize {
    n.div_ceil(128) * 128 + 128
}

/// Blocks per row for a chunk of width `m`.
fn row_blocks(m: usize) -> usize {
    m / 128
}

#[cfg(test)]
/// Receiver: expands its base PRGs for one chunk of width `m` given its packed choice row `r`
/// (`m / 8` bytes). Returns `(u, t)`, both `128 · m / 8` bytes, rows one after the other.
pub fn receiver_expand(prgs: &mut [[Prg; 2]], r: &[Block], m: usize) -> (Vec<Block>, Vec<Block>) {
    let w = row_blocks(m);
    debug_assert_eq!(r.len(), w);
    debug_assert_eq!(prgs.len(), KAPPA);
    let mut u = vec![Block::ZERO; KAPPA * w];
    let mut t = vec![Block::ZERO; KAPPA * w];
    for ((prg, u_row), t_row) in prgs.iter_mut().zip(u.chunks_exact_mut(w)).zip(t.chunks_exact_mut(w)) {
        prg[0].fill_blocks(t_row);
        prg[1].fill_blocks(u_row);
        for ((u, t), r) in u_row.iter_mut().zip(t_row.iter()).zip(r) {
            *u ^= *t ^ *r;
        }
    }
    (u, t)
}

#[cfg(test)]
/// Sender: from its base PRGs (seeded with `k_i^{Δ_i}`), Δ and the receiver's `u`, computes the
/// rows `q_i = PRG_i ⊕ Δ_i·u_i` (a mask, not a branch, on Δ_i).
pub fn sender_expand(prgs: &mut [Prg], delta: Block, u: &[Block], m: usize) -> Vec<Block> {
    let w = row_blocks(m);
    debug_assert_eq!(u.len(), KAPPA * w);
    let bits = delta.to_u128();
    let mut q = vec![Block::ZERO; KAPPA * w];
    for (i, ((prg, q_row), u_row)) in prgs.iter_mut().zip(q.chunks_exact_mut(w)).zip(u.chunks_exact(w)).enumerate() {
        prg.fill_blocks(q_row);
        let mask = Block::mask_from_bit((bits >> i) as u8);
        for (q, u) in q_row.iter_mut().zip(u_row) {
            *q ^= *u & mask;
        }
    }
    q
}

/// The challenges χ_0..χ_{K-1} of a chunk of width `m`, expanded from the sender's seed and
/// prepared once for the 129 inner products of a check.
pub fn challenges(seed: Block, m: usize) -> Gf128Coefficients {
    let mut chi = vec![Block::ZERO; row_blocks(m) - 1];
    Prg::from_seed(seed).fill_blocks(&mut chi);
    Gf128Coefficients::new(&chi)
}

/// `Σ_k χ_k·row_k ⊕ row_K`: the compressed form of one row (or of the choice row).
fn compress_row(chi: &Gf128Coefficients, row: &[Block]) -> Block {
    let (body, mask) = row.split_at(chi.len());
    chi.inner_product(body).expect("equal lengths") ^ mask[0]
}

#[cfg(test)]
/// Receiver's answer to the challenge: `x` then `t̃_0..t̃_127` (129 blocks).
pub fn receiver_check(chi: &Gf128Coefficients, r: &[Block], t: &[Block]) -> Vec<Block> {
    let w = chi.len() + 1;
    let mut out = Vec::with_capacity(KAPPA + 1);
    out.push(compress_row(chi, r));
    out.extend(t.chunks_exact(w).map(|row| compress_row(chi, row)));
    out
}

#[cfg(test)]
/// Sender's verdict on the receiver's answer (129 blocks): true iff every row is consistent.
/// Runs in time independent of Δ and of where a difference is.
pub fn sender_verify(chi: &Gf128Coefficients, delta: Block, q: &[Block], answer: &[Block]) -> bool {
    let w = chi.len() + 1;
    let x = answer[0];
    let bits = delta.to_u128();
    let mut diff = 0u128;
    for (i, (row, t)) in q.chunks_exact(w).zip(&answer[1..]).enumerate() {
        let mask = Block::mask_from_bit((bits >> i) as u8);
        diff |= (compress_row(chi, row) ^ *t ^ (x & mask)).to_u128();
    }
    use subtle::ConstantTimeEq;
    bool::from(diff.ct_eq(&0u128))
}

/// Column blocks (128 OTs each) per group of the fused passes: a group's 128 rows are
/// 128 × 16 blocks = 32 KiB, so expanding, checking, transposing and hashing it happen while it is
/// in cache, instead of in one pass over the whole (1 MiB by default) matrix each.
pub const GROUP: usize = 16;

/// The groups of a chunk of width `m`: `(first column block, column blocks)`.
fn groups(m: usize) -> impl Iterator<Item = (usize, usize)> {
    let w = row_blocks(m);
    (0..w).step_by(GROUP).map(move |g0| (g0, GROUP.min(w - g0)))
}

/// Adds one group's rows (`rows[i·gw..(i+1)·gw]` is row i's blocks `g0..g0+gw`) to the
/// compressed rows: columns below `w − 1` through the challenges, column `w − 1` (the masking
/// block) by XOR.
fn compress_group(
    chi: &Gf128Coefficients,
    rows: &[Block],
    g0: usize,
    gw: usize,
    sums: &mut [Gf128Sum],
    masks: &mut [Block],
) {
    let body = chi.len();
    let in_body = body.saturating_sub(g0).min(gw);
    for (i, row) in rows.chunks_exact(gw).enumerate() {
        if in_body > 0 {
            chi.accumulate(g0, &row[..in_body], &mut sums[i]).expect("group within the challenges");
        }
        if in_body < gw {
            masks[i] ^= row[in_body];
        }
    }
}

/// Sender, fused: for each group of columns, expands its base PRGs (`q_i = PRG_i ⊕ Δ_i·u_i`),
/// adds the group to the compressed rows of the check, transposes it into `keys` (one block per
/// OT, `m` of them) and calls `group(offset, keys)` on the new keys below `n` (to hash them while
/// they are in cache). Returns the 128 compressed rows for [`sender_verify_compressed`]. Nothing
/// computed here may leave the caller before the check passes.
pub fn sender_fused(
    prgs: &mut [Prg],
    delta: Block,
    u: &[Block],
    m: usize,
    n: usize,
    chi: &Gf128Coefficients,
    keys: &mut Vec<Block>,
    mut group: impl FnMut(usize, &[Block]),
) -> Vec<Block> {
    let w = row_blocks(m);
    debug_assert_eq!(u.len(), KAPPA * w);
    let bits = delta.to_u128();
    let masks_delta: Vec<Block> = (0..KAPPA).map(|i| Block::mask_from_bit((bits >> i) as u8)).collect();
    keys.clear();
    keys.resize(m, Block::ZERO);
    let mut rows = vec![Block::ZERO; KAPPA * GROUP];
    let mut sums = vec![Gf128Sum::default(); KAPPA];
    let mut masks = vec![Block::ZERO; KAPPA];
    for (g0, gw) in groups(m) {
        let rows = &mut rows[..KAPPA * gw];
        for (i, (prg, row)) in prgs.iter_mut().zip(rows.chunks_exact_mut(gw)).enumerate() {
            prg.fill_blocks(row);
            let mask = masks_delta[i];
            for (q, u) in row.iter_mut().zip(&u[i * w + g0..i * w + g0 + gw]) {
                *q ^= *u & mask;
            }
        }
        compress_group(chi, rows, g0, gw, &mut sums, &mut masks);
        let out = &mut keys[128 * g0..128 * (g0 + gw)];
        transpose_128xn(Block::slice_as_bytes(rows), 128 * gw, Block::slice_as_bytes_mut(out)).expect("whole blocks");
        let end = n.min(128 * (g0 + gw));
        if 128 * g0 < end {
            group(128 * g0, &keys[128 * g0..end]);
        }
    }
    Block::wipe(&mut rows);
    sums.iter().zip(&masks).map(|(s, k)| s.value() ^ *k).collect()
}

/// Sender's verdict from the compressed rows of [`sender_fused`]: true iff every row is
/// consistent with the receiver's answer. Runs in time independent of Δ and of where a
/// difference is.
pub fn sender_verify_compressed(delta: Block, compressed: &[Block], answer: &[Block]) -> bool {
    let x = answer[0];
    let bits = delta.to_u128();
    let mut diff = 0u128;
    for (i, (row, t)) in compressed.iter().zip(&answer[1..]).enumerate() {
        let mask = Block::mask_from_bit((bits >> i) as u8);
        diff |= (*row ^ *t ^ (x & mask)).to_u128();
    }
    use subtle::ConstantTimeEq;
    bool::from(diff.ct_eq(&0u128))
}

/// Receiver: expands its base PRGs for a chunk of width `m` and packed choice row `r`. Returns
/// `(u, t)`: `u` rows one after the other (the message), `t` **group-major** (each group's 128
/// rows together, see [`GROUP`]) for [`receiver_fused`].
pub fn receiver_expand_grouped(prgs: &mut [[Prg; 2]], r: &[Block], m: usize) -> (Vec<Block>, Vec<Block>) {
    let w = row_blocks(m);
    debug_assert_eq!(r.len(), w);
    let mut u = vec![Block::ZERO; KAPPA * w];
    let mut t = vec![Block::ZERO; KAPPA * w];
    for (g0, gw) in groups(m) {
        let tg = &mut t[KAPPA * g0..KAPPA * (g0 + gw)];
        for (i, (prg, t_row)) in prgs.iter_mut().zip(tg.chunks_exact_mut(gw)).enumerate() {
            let u_row = &mut u[i * w + g0..i * w + g0 + gw];
            prg[0].fill_blocks(t_row);
            prg[1].fill_blocks(u_row);
            for ((u, t), r) in u_row.iter_mut().zip(t_row.iter()).zip(&r[g0..g0 + gw]) {
                *u ^= *t ^ *r;
            }
        }
    }
    (u, t)
}

/// Receiver, fused: for each group, adds `t`'s rows to the compressed rows of the check,
/// transposes them into `macs` (`m` blocks, `T_j`) and calls `group(offset, macs)` on the new
/// ones below `n`. Returns the answer to the challenge: `x` then `t̃_0..t̃_127` (129 blocks).
pub fn receiver_fused(
    chi: &Gf128Coefficients,
    r: &[Block],
    t: &[Block],
    m: usize,
    n: usize,
    macs: &mut Vec<Block>,
    mut group: impl FnMut(usize, &[Block]),
) -> Vec<Block> {
    macs.clear();
    macs.resize(m, Block::ZERO);
    let mut sums = vec![Gf128Sum::default(); KAPPA];
    let mut masks = vec![Block::ZERO; KAPPA];
    for (g0, gw) in groups(m) {
        let rows = &t[KAPPA * g0..KAPPA * (g0 + gw)];
        compress_group(chi, rows, g0, gw, &mut sums, &mut masks);
        let out = &mut macs[128 * g0..128 * (g0 + gw)];
        transpose_128xn(Block::slice_as_bytes(rows), 128 * gw, Block::slice_as_bytes_mut(out)).expect("whole blocks");
        let end = n.min(128 * (g0 + gw));
        if 128 * g0 < end {
            group(128 * g0, &macs[128 * g0..end]);
        }
    }
    let mut answer = Vec::with_capacity(KAPPA + 1);
    answer.push(compress_row(chi, r));
    answer.extend(sums.iter().zip(&masks).map(|(s, k)| s.value() ^ *k));
    answer
}

#[cfg(test)]
/// Transposes the 128 rows of a chunk into `m` blocks, one per OT.
pub fn transpose_rows(rows: &[Block], m: usize) -> Vec<Block> {
    let mut out = vec![Block::ZERO; m];
    transpose_128xn(Block::slice_as_bytes(rows), m, Block::slice_as_bytes_mut(&mut out))
        .expect("m is a multiple of 128");
    out
}

/// Packs choice bits into blocks, LSB first, zero-padded to `m` bits (`m / 128` blocks).
pub fn pack_bits(bits: &[bool], m: usize) -> Vec<Block> {
    let mut bytes = vec![0u8; m / 8];
    for (j, &b) in bits.iter().enumerate() {
        bytes[j / 8] |= (b as u8) << (j % 8);
    }
    Block::slice_from_bytes(&bytes).expect("m / 8 is a multiple of 16").to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(delta: Block) -> (Vec<[Prg; 2]>, Vec<Prg>) {
        let mut r = Vec::new();
        let mut s = Vec::new();
        for i in 0..KAPPA {
            let k0 = Block::from_u128(2 * i as u128 + 1000);
            let k1 = Block::from_u128(2 * i as u128 + 1001);
            let bit = (delta.to_u128() >> i) & 1 == 1;
            r.push([Prg::from_seed(k0), Prg::from_seed(k1)]);
            s.push(Prg::from_seed(if bit { k1 } else { k0 }));
        }
        (r, s)
    }

    #[test]
    fn honest_rows_satisfy_the_correlation_and_pass_the_check() {
        let delta = Block::from_u128(0x1234_5678_9abc_def0_0fed_cba9_8765_4321);
        let (mut rp, mut sp) = setup(delta);
        let m = chunk_width(300);
        assert_eq!(m, 512);
        let choices: Vec<bool> = (0..m).map(|j| (j * 5 + j / 7) % 3 == 0).collect();
        let r = pack_bits(&choices, m);
        let (u, t) = receiver_expand(&mut rp, &r, m);
        let q = sender_expand(&mut sp, delta, &u, m);
        let tt = transpose_rows(&t, m);
        let qt = transpose_rows(&q, m);
        for j in 0..m {
            let expect = if choices[j] { tt[j] ^ delta } else { tt[j] };
            assert_eq!(qt[j], expect, "OT {j}");
        }
        let chi = challenges(Block::from_u128(99), m);
        let answer = receiver_check(&chi, &r, &t);
        assert!(sender_verify(&chi, delta, &q, &answer));
        // Any change to the answer fails.
        for k in [0, 1, 64, 128] {
            let mut bad = answer.clone();
            bad[k] ^= Block::from_u128(1 << 77);
            assert!(!sender_verify(&chi, delta, &q, &bad), "answer block {k}");
        }
    }

    /// The fused passes compute exactly what the reference (one pass per step) does: the same
    /// keys and MACs, the same check answer, the same verdict; and the group callbacks see every
    /// output below `n` once, in order.
    #[test]
    fn fused_passes_match_the_reference() {
        let delta = Block::from_u128(0x0bad_cafe_1234_5678_9abc_def0_1357_9bdf);
        for n in [1, 127, 128, 300, 2047, 2048, 2049, 5000] {
            let m = chunk_width(n);
            let choices: Vec<bool> = (0..m).map(|j| (j * 7 + j / 5) % 3 == 1).collect();
            let r = pack_bits(&choices, m);
            let (mut rp, mut sp) = setup(delta);
            let (u, t) = receiver_expand(&mut rp, &r, m);
            let q = sender_expand(&mut sp, delta, &u, m);
            let chi = challenges(Block::from_u128(4242), m);
            let answer = receiver_check(&chi, &r, &t);

            let (mut rp2, mut sp2) = setup(delta);
            let (u2, t2) = receiver_expand_grouped(&mut rp2, &r, m);
            assert_eq!(u2, u, "u, n = {n}");
            let mut macs = Vec::new();
            let mut seen = 0;
            let answer2 = receiver_fused(&chi, &r, &t2, m, n, &mut macs, |off, g| {
                assert_eq!(off, seen);
                seen += g.len();
            });
            assert_eq!(seen, n);
            assert_eq!(answer2, answer, "answer, n = {n}");
            assert_eq!(macs, transpose_rows(&t, m), "macs, n = {n}");
            let mut keys = Vec::new();
            let compressed = sender_fused(&mut sp2, delta, &u2, m, n, &chi, &mut keys, |_, _| {});
            assert_eq!(keys, transpose_rows(&q, m), "keys, n = {n}");
            assert!(sender_verify(&chi, delta, &q, &answer));
            assert!(sender_verify_compressed(delta, &compressed, &answer2));
            for k in [0, 1, 77, 128] {
                let mut bad = answer2.clone();
                bad[k] ^= Block::from_u128(1 << 9);
                assert!(!sender_verify_compressed(delta, &compressed, &bad), "answer block {k}");
            }
        }
    }

    #[test]
    fn pack_bits_is_lsb_first() {
        let b = pack_bits(&[true, false, false, true, true], 128);
        assert_eq!(b[0].to_u128(), 0b11001);
    }
}
