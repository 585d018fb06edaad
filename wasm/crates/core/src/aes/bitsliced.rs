//! Bitsliced AES-128 over 8 blocks at a time (Käsper–Schwabe layout).
//!
//! Eight 128-bit lanes hold eight blocks as bit planes: bit `b` of byte `j` of plane `i` is bit
//! `i` of byte `j` of block `b`. Byte positions stay byte positions, so ShiftRows and the row
//! rotations of MixColumns are byte shuffles applied to every plane, and SubBytes is the
//! Boyar–Peralta circuit applied plane-wise. Every operation is data-independent: no table, no
//! branch, no secret-dependent address.

use super::lane::perm::{self, Which};
use super::lane::AesLane;
use super::sbox::{sbox_without_constant, SBOX_CONSTANT};
use crate::simd::transpose_8x8_bits;
use crate::Block;

/// Blocks per bitsliced step.
pub(crate) const PARALLEL: usize = 8;

/// Round keys in bitsliced form: plane `i`, byte `j` is all-ones where bit `i` of key byte `j` is
/// set, since every block sees the same key. Keys 1..=10 carry the S-box constant (see sbox.rs)
/// and are permuted by SR^-r to meet the state in its phase (see `lane::perm`).
#[derive(Clone)]
pub(crate) struct SlicedKeys<L: AesLane>(pub(crate) [[L; 8]; 11]);

impl<L: AesLane> SlicedKeys<L> {
    pub(crate) fn zeroed() -> Self {
        SlicedKeys([[L::splat(0); 8]; 11])
    }

    /// Slices `round_keys` into `self` in place (no key-sized temporary on the stack).
    pub(crate) fn fill(&mut self, round_keys: &[Block; 11]) {
        let out = &mut self.0;
        for (r, rk) in round_keys.iter().enumerate() {
            let constant = if r == 0 { 0 } else { SBOX_CONSTANT };
            let phase = perm::inverse(&perm::shift_rows_pow(r % 4));
            for (i, plane) in out[r].iter_mut().enumerate() {
                let mut bytes = Block::ZERO;
                for (byte, &src) in bytes.0.iter_mut().zip(phase.iter()) {
                    // Spread bit i of the key byte over the whole byte, without branching on it.
                    *byte = 0u8.wrapping_sub(((rk.0[src] ^ constant) >> i) & 1);
                }
                *plane = L::load(&bytes.0);
            }
        }
    }

    /// Overwrites the key material; `write_volatile` so the compiler cannot drop the stores.
    pub(crate) fn wipe(&mut self) {
        for round in self.0.iter_mut() {
            for plane in round.iter_mut() {
                // SAFETY: `plane` is a valid, aligned, exclusive reference.
                unsafe { core::ptr::write_volatile(plane, L::splat(0)) };
            }
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }
}

#[inline(always)]
fn add_round_key<L: AesLane>(s: &mut [L; 8], k: &[L; 8]) {
    for i in 0..8 {
        s[i] = s[i].xor(k[i]);
    }
}

/// One full round (SubBytes, ShiftRows, MixColumns, AddRoundKey) on a state held in `phase`
/// (ShiftRows^phase pending). ShiftRows itself is deferred: it only advances the phase.
///
/// MixColumns on bit planes, with rot_k rotating a column up by k rows and `a` the true state:
/// `2·a ⊕ 3·rot1(a) ⊕ rot2(a) ⊕ rot3(a) = xtime(t) ⊕ rot1(a) ⊕ rot2(t)` where `t = a ⊕ rot1(a)`.
/// Seen from the held state, rot_k becomes the conjugated permutation of the new phase.
#[inline(always)]
fn round<L: AesLane>(s: &mut [L; 8], phase: usize, key: &[L; 8]) {
    let w = sbox_without_constant(s);
    let r1 = w.map(|p| p.permute(Which::Rot1(phase)));
    let t: [L; 8] = core::array::from_fn(|i| w[i].xor(r1[i]));
    // xtime on planes: multiply by x modulo x^8 + x^4 + x^3 + x + 1 (0x11b).
    let x = [t[7], t[0].xor(t[7]), t[1], t[2].xor(t[7]), t[3].xor(t[7]), t[4], t[5], t[6]];
    for i in 0..8 {
        s[i] = x[i].xor(r1[i]).xor(t[i].permute(Which::Rot2(phase))).xor(key[i]);
    }
}

/// Encrypts eight blocks in place.
#[inline(always)]
pub(crate) fn encrypt8<L: AesLane>(keys: &SlicedKeys<L>, blocks: &mut [Block; PARALLEL]) {
    let mut s: [L; 8] = core::array::from_fn(|b| L::load(&blocks[b].0));
    transpose_8x8_bits(&mut s);
    add_round_key(&mut s, &keys.0[0]);
    // Round r leaves the state in phase r mod 4. Two passes of a 4-round body (phases 1,2,3,0)
    // keep every shuffle a compile-time constant without unrolling all nine rounds.
    for base in [0, 4] {
        round(&mut s, 1, &keys.0[base + 1]);
        round(&mut s, 2, &keys.0[base + 2]);
        round(&mut s, 3, &keys.0[base + 3]);
        round(&mut s, 0, &keys.0[base + 4]);
    }
    round(&mut s, 1, &keys.0[9]);
    // Last round: no MixColumns. The state is then in phase 10 mod 4 = 2.
    s = sbox_without_constant(&s);
    add_round_key(&mut s, &keys.0[10]);
    transpose_8x8_bits(&mut s);
    for b in 0..PARALLEL {
        // Bitslicing keeps byte positions, so the pending SR^2 can be applied per block.
        s[b].permute(Which::ShiftRows2).store(&mut blocks[b].0);
    }
}

/// Encrypts any number of blocks in place; a ragged tail is padded into one more 8-block step.
pub(crate) fn encrypt_blocks<L: AesLane>(keys: &SlicedKeys<L>, blocks: &mut [Block]) {
    let mut chunks = blocks.chunks_exact_mut(PARALLEL);
    for chunk in &mut chunks {
        let chunk: &mut [Block; PARALLEL] = chunk.try_into().expect("chunks_exact yields full chunks");
        encrypt8(keys, chunk);
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let mut pad = [Block::ZERO; PARALLEL];
        pad[..tail.len()].copy_from_slice(tail);
        encrypt8(keys, &mut pad);
        tail.copy_from_slice(&pad[..tail.len()]);
        // The pad holds ciphertext of the tail and of zero blocks (E_k(0) is PRG output).
        Block::wipe(&mut pad);
    }
}
