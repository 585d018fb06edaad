//! AES-128 key expansion, constant-time: SubWord evaluates the same Boolean S-box circuit as the
//! cipher (on a `u32` holding four bytes bit-plane-wise), never a table.

use super::sbox::{sbox_without_constant, SBOX_CONSTANT};
use crate::Block;

fn sub_word(w: [u8; 4]) -> [u8; 4] {
    let mut planes = [0u32; 8];
    for (j, byte) in w.iter().enumerate() {
        for (i, plane) in planes.iter_mut().enumerate() {
            *plane |= (((byte >> i) & 1) as u32) << j;
        }
    }
    let out = sbox_without_constant(&planes);
    let mut r = [SBOX_CONSTANT; 4];
    for (j, byte) in r.iter_mut().enumerate() {
        for (i, plane) in out.iter().enumerate() {
            *byte ^= (((plane >> j) & 1) as u8) << i;
        }
    }
    r
}

/// The eleven round keys of AES-128 (FIPS-197 §5.2), written into `keys` in place.
pub(crate) fn expand_key(key: &Block, keys: &mut [Block; 11]) {
    const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
    let mut w = [[0u8; 4]; 44];
    for (i, word) in w.iter_mut().take(4).enumerate() {
        word.copy_from_slice(&key.0[4 * i..4 * i + 4]);
    }
    for i in 4..44 {
        let mut t = w[i - 1];
        if i % 4 == 0 {
            t = sub_word([t[1], t[2], t[3], t[0]]);
            t[0] ^= RCON[i / 4 - 1];
        }
        for k in 0..4 {
            w[i][k] = w[i - 4][k] ^ t[k];
        }
    }
    for (r, rk) in keys.iter_mut().enumerate() {
        for c in 0..4 {
            rk.0[4 * c..4 * c + 4].copy_from_slice(&w[4 * r + c]);
        }
    }
    for word in w.iter_mut() {
        // SAFETY: valid exclusive reference; volatile so the wipe of key material is kept.
        unsafe { core::ptr::write_volatile(word, [0; 4]) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fips197_appendix_a1_expansion() {
        let key =
            Block([0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c]);
        let mut rk = [Block::ZERO; 11];
        expand_key(&key, &mut rk);
        // w[4..8] and w[40..44] from FIPS-197 Appendix A.1.
        assert_eq!(rk[1].to_hex(), "a0fafe1788542cb123a339392a6c7605");
        assert_eq!(rk[10].to_hex(), "d014f9a8c9ee2589e13f0cc8b6630ca6");
    }
}
