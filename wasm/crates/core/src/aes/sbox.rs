//! The AES S-box as a Boolean circuit (Boyar–Peralta, "A depth-16 circuit for the AES S-box",
//! 2011: 32 AND gates and 81 XOR/XNOR gates). Evaluated over a word type, so one call computes
//! the S-box for every bit position of the word at once: 128 S-boxes per SIMD lane in the
//! bitsliced cipher, 32 per `u32` in the key schedule. No table, so no secret-indexed memory.

/// The two operations the circuit needs. Implemented by the SIMD lanes and by plain integers.
pub(crate) trait BitWord: Copy {
    fn xor(self, other: Self) -> Self;
    fn and(self, other: Self) -> Self;
}

impl BitWord for u32 {
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self ^ other
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        self & other
    }
}

/// `bits[i]` holds bit `i` (LSB = 0) of the S-box input; returns bit `i` of `S(x) ⊕ 0x63`.
///
/// The affine constant 0x63 is left out (the circuit's four XNORs become XORs) because the
/// cipher folds it into the round keys: a byte-constant passes unchanged through ShiftRows and
/// MixColumns (whose row coefficients 2 ⊕ 3 ⊕ 1 ⊕ 1 sum to 1), so adding it to round keys 1..10
/// is the same as adding it after every SubBytes, and saves four operations per round.
#[inline(always)]
pub(crate) fn sbox_without_constant<W: BitWord>(bits: &[W; 8]) -> [W; 8] {
    // The paper numbers inputs from the most significant bit: U0 = bit 7.
    let u0 = bits[7];
    let u1 = bits[6];
    let u2 = bits[5];
    let u3 = bits[4];
    let u4 = bits[3];
    let u5 = bits[2];
    let u6 = bits[1];
    let u7 = bits[0];

    // Top linear layer.
    let t1 = u0.xor(u3);
    let t2 = u0.xor(u5);
    let t3 = u0.xor(u6);
    let t4 = u3.xor(u5);
    let t5 = u4.xor(u6);
    let t6 = t1.xor(t5);
    let t7 = u1.xor(u2);
    let t8 = u7.xor(t6);
    let t9 = u7.xor(t7);
    let t10 = t6.xor(t7);
    let t11 = u1.xor(u5);
    let t12 = u2.xor(u5);
    let t13 = t3.xor(t4);
    let t14 = t6.xor(t11);
    let t15 = t5.xor(t11);
    let t16 = t5.xor(t12);
    let t17 = t9.xor(t16);
    let t18 = u3.xor(u7);
    let t19 = t7.xor(t18);
    let t20 = t1.xor(t19);
    let t21 = u6.xor(u7);
    let t22 = t7.xor(t21);
    let t23 = t2.xor(t22);
    let t24 = t2.xor(t10);
    let t25 = t20.xor(t17);
    let t26 = t3.xor(t16);
    let t27 = t1.xor(t12);

    // Middle non-linear layer: inversion in GF(2^8) through the tower field.
    let m1 = t13.and(t6);
    let m2 = t23.and(t8);
    let m3 = t14.xor(m1);
    let m4 = t19.and(u7);
    let m5 = m4.xor(m1);
    let m6 = t3.and(t16);
    let m7 = t22.and(t9);
    let m8 = t26.xor(m6);
    let m9 = t20.and(t17);
    let m10 = m9.xor(m6);
    let m11 = t1.and(t15);
    let m12 = t4.and(t27);
    let m13 = m12.xor(m11);
    let m14 = t2.and(t10);
    let m15 = m14.xor(m11);
    let m16 = m3.xor(m2);
    let m17 = m5.xor(t24);
    let m18 = m8.xor(m7);
    let m19 = m10.xor(m15);
    let m20 = m16.xor(m13);
    let m21 = m17.xor(m15);
    let m22 = m18.xor(m13);
    let m23 = m19.xor(t25);
    let m24 = m22.xor(m23);
    let m25 = m22.and(m20);
    let m26 = m21.xor(m25);
    let m27 = m20.xor(m21);
    let m28 = m23.xor(m25);
    let m29 = m28.and(m27);
    let m30 = m26.and(m24);
    let m31 = m20.and(m23);
    let m32 = m27.and(m31);
    let m33 = m27.xor(m25);
    let m34 = m21.and(m22);
    let m35 = m24.and(m34);
    let m36 = m24.xor(m25);
    let m37 = m21.xor(m29);
    let m38 = m32.xor(m33);
    let m39 = m23.xor(m30);
    let m40 = m35.xor(m36);
    let m41 = m38.xor(m40);
    let m42 = m37.xor(m39);
    let m43 = m37.xor(m38);
    let m44 = m39.xor(m40);
    let m45 = m42.xor(m41);
    let m46 = m44.and(t6);
    let m47 = m40.and(t8);
    let m48 = m39.and(u7);
    let m49 = m43.and(t16);
    let m50 = m38.and(t9);
    let m51 = m37.and(t17);
    let m52 = m42.and(t15);
    let m53 = m45.and(t27);
    let m54 = m41.and(t10);
    let m55 = m44.and(t13);
    let m56 = m40.and(t23);
    let m57 = m39.and(t19);
    let m58 = m43.and(t3);
    let m59 = m38.and(t22);
    let m60 = m37.and(t20);
    let m61 = m42.and(t1);
    let m62 = m45.and(t4);
    let m63 = m41.and(t2);

    // Bottom linear layer (with the affine map, minus its constant).
    let l0 = m61.xor(m62);
    let l1 = m50.xor(m56);
    let l2 = m46.xor(m48);
    let l3 = m47.xor(m55);
    let l4 = m54.xor(m58);
    let l5 = m49.xor(m61);
    let l6 = m62.xor(l5);
    let l7 = m46.xor(l3);
    let l8 = m51.xor(m59);
    let l9 = m52.xor(m53);
    let l10 = m53.xor(l4);
    let l11 = m60.xor(l2);
    let l12 = m48.xor(m51);
    let l13 = m50.xor(l0);
    let l14 = m52.xor(m61);
    let l15 = m55.xor(l1);
    let l16 = m56.xor(l0);
    let l17 = m57.xor(l1);
    let l18 = m58.xor(l8);
    let l19 = m63.xor(l4);
    let l20 = l0.xor(l1);
    let l21 = l1.xor(l7);
    let l22 = l3.xor(l12);
    let l23 = l18.xor(l2);
    let l24 = l15.xor(l9);
    let l25 = l6.xor(l10);
    let l26 = l7.xor(l9);
    let l27 = l8.xor(l10);
    let l28 = l11.xor(l14);
    let l29 = l11.xor(l17);
    let s0 = l6.xor(l24);
    let s1 = l16.xor(l26);
    let s2 = l19.xor(l28);
    let s3 = l6.xor(l21);
    let s4 = l20.xor(l22);
    let s5 = l25.xor(l29);
    let s6 = l13.xor(l27);
    let s7 = l6.xor(l23);

    // S0 is the most significant output bit.
    [s7, s6, s5, s4, s3, s2, s1, s0]
}

/// The affine constant the circuit above leaves out.
pub(crate) const SBOX_CONSTANT: u8 = 0x63;

#[cfg(test)]
mod tests {
    use super::*;

    /// The S-box from its definition: inversion in GF(2^8) mod x^8+x^4+x^3+x+1, then the affine map.
    fn reference_sbox(x: u8) -> u8 {
        fn gmul(mut a: u8, mut b: u8) -> u8 {
            let mut p = 0u8;
            while b != 0 {
                if b & 1 != 0 {
                    p ^= a;
                }
                let hi = a & 0x80;
                a <<= 1;
                if hi != 0 {
                    a ^= 0x1b;
                }
                b >>= 1;
            }
            p
        }
        let inv = if x == 0 { 0 } else { (1..=255u8).find(|&y| gmul(x, y) == 1).unwrap() };
        inv ^ inv.rotate_left(1) ^ inv.rotate_left(2) ^ inv.rotate_left(3) ^ inv.rotate_left(4) ^ 0x63
    }

    #[test]
    fn circuit_matches_definition_on_all_256_inputs() {
        // Evaluate 32 inputs at once per u32 word: bit j of plane i = bit i of input (base + j).
        for base in (0..256usize).step_by(32) {
            let mut planes = [0u32; 8];
            for j in 0..32 {
                for (i, plane) in planes.iter_mut().enumerate() {
                    *plane |= ((((base + j) >> i) & 1) as u32) << j;
                }
            }
            let out = sbox_without_constant(&planes);
            for j in 0..32 {
                let mut y = 0u8;
                for (i, plane) in out.iter().enumerate() {
                    y |= (((plane >> j) & 1) as u8) << i;
                }
                let x = (base + j) as u8;
                assert_eq!(y ^ SBOX_CONSTANT, reference_sbox(x), "S-box of {x:#04x}");
            }
        }
    }
}
