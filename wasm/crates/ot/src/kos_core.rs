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

use webmpc_core::gf128::Gf128Coefficients;
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

/// Receiver's answer to the challenge: `x` then `t̃_0..t̃_127` (129 blocks).
pub fn receiver_check(chi: &Gf128Coefficients, r: &[Block], t: &[Block]) -> Vec<Block> {
    let w = chi.len() + 1;
    let mut out = Vec::with_capacity(KAPPA + 1);
    out.push(compress_row(chi, r));
    out.extend(t.chunks_exact(w).map(|row| compress_row(chi, row)));
    out
}

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

    #[test]
    fn pack_bits_is_lsb_first() {
        let b = pack_bits(&[true, false, false, true, true], 128);
        assert_eq!(b[0].to_u128(), 0b11001);
    }
}
