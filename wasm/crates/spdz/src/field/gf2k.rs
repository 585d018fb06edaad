//! GF(2^128) as a MASCOT field: a thin wrapper over `webmpc_core::gf128` (modulus
//! X^128 + X^7 + X^2 + X + 1, bit i of the little-endian integer = coefficient of X^i).
//! Addition and subtraction are XOR; the gadget element is g = X, so g⁻¹(x) is the coefficient
//! vector itself.

use super::{Field, FieldKind};
use core::fmt;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use webmpc_core::gf128::gf128_mul;
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// An element of GF(2^128).
#[derive(Clone, Copy, Default)]
pub struct Gf128(pub u128);

/// x·X: shift, and fold X^128 = X^7 + X^2 + X + 1 back in without a branch.
#[inline(always)]
fn times_x(x: u128) -> u128 {
    let top = 0u128.wrapping_sub(x >> 127);
    (x << 1) ^ (0x87 & top)
}

impl Field for Gf128 {
    const KIND: FieldKind = FieldKind::Binary;
    const ZERO: Gf128 = Gf128(0);
    const ONE: Gf128 = Gf128(1);

    fn from_u64(x: u64) -> Gf128 {
        Gf128(x as u128)
    }

    /// Every 128-bit string is an element: the identity is exactly uniform.
    fn from_hash(b: Block) -> Gf128 {
        Gf128(b.to_u128())
    }

    fn random(prg: &mut Prg) -> Gf128 {
        Gf128(prg.next_block().to_u128())
    }

    fn random_fill(prg: &mut Prg, out: &mut [Gf128]) {
        super::fill_through_blocks(prg, out, |b| Gf128(b.to_u128()));
    }

    fn to_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    fn from_bytes(b: [u8; 16]) -> Option<Gf128> {
        Some(Gf128(u128::from_le_bytes(b)))
    }

    fn bits(self) -> u128 {
        self.0
    }

    fn from_bits(bits: u128) -> Gf128 {
        Gf128(bits)
    }

    /// Horner from the highest power down: 128 shifts and XORs, no multiplication.
    fn gadget(xs: &[Gf128]) -> Gf128 {
        let mut acc = 0u128;
        for x in xs.iter().rev() {
            acc = times_x(acc) ^ x.0;
        }
        Gf128(acc)
    }

    /// x^(2^128 − 2) by square and multiply (public values only).
    fn invert(self) -> Option<Gf128> {
        if self.0 == 0 {
            return None;
        }
        let mut acc = Gf128::ONE;
        let mut base = self;
        // 2^128 − 2 = 0b111…110: every bit but the lowest.
        for i in 0..128 {
            if i > 0 {
                acc *= base;
            }
            base *= base;
        }
        Some(acc)
    }

    fn times_g(self) -> Gf128 {
        Gf128(times_x(self.0))
    }

    /// Squaring is a bijection in characteristic 2: the root is x^(2^127).
    fn sqrt(self) -> Option<Gf128> {
        let mut x = self;
        for _ in 0..127 {
            x *= x;
        }
        Some(x)
    }
}

impl ConstantTimeEq for Gf128 {
    fn ct_eq(&self, other: &Gf128) -> Choice {
        self.0.ct_eq(&other.0)
    }
}

impl PartialEq for Gf128 {
    fn eq(&self, other: &Gf128) -> bool {
        self.ct_eq(other).into()
    }
}
impl Eq for Gf128 {}

impl ConditionallySelectable for Gf128 {
    fn conditional_select(a: &Gf128, b: &Gf128, choice: Choice) -> Gf128 {
        Gf128(u128::conditional_select(&a.0, &b.0, choice))
    }
}

/// Redacted: elements are usually secret.
impl fmt::Debug for Gf128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Gf128(..)")
    }
}

#[allow(clippy::suspicious_arithmetic_impl)] // addition in characteristic 2 is XOR
impl Add for Gf128 {
    type Output = Gf128;
    #[inline(always)]
    fn add(self, o: Gf128) -> Gf128 {
        Gf128(self.0 ^ o.0)
    }
}
#[allow(clippy::suspicious_arithmetic_impl)] // addition in characteristic 2 is XOR
impl Sub for Gf128 {
    type Output = Gf128;
    #[inline(always)]
    fn sub(self, o: Gf128) -> Gf128 {
        Gf128(self.0 ^ o.0)
    }
}
impl Neg for Gf128 {
    type Output = Gf128;
    #[inline(always)]
    fn neg(self) -> Gf128 {
        self
    }
}
impl Mul for Gf128 {
    type Output = Gf128;
    #[inline(always)]
    fn mul(self, o: Gf128) -> Gf128 {
        Gf128(gf128_mul(Block::from_u128(self.0), Block::from_u128(o.0)).to_u128())
    }
}
#[allow(clippy::suspicious_op_assign_impl)] // addition in characteristic 2 is XOR
impl AddAssign for Gf128 {
    #[inline(always)]
    fn add_assign(&mut self, o: Gf128) {
        self.0 ^= o.0;
    }
}
#[allow(clippy::suspicious_op_assign_impl)] // addition in characteristic 2 is XOR
impl SubAssign for Gf128 {
    #[inline(always)]
    fn sub_assign(&mut self, o: Gf128) {
        self.0 ^= o.0;
    }
}
impl MulAssign for Gf128 {
    #[inline(always)]
    fn mul_assign(&mut self, o: Gf128) {
        *self = *self * o;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Schoolbook carry-less multiplication and reduction, bit by bit.
    fn reference_mul(a: u128, b: u128) -> u128 {
        let mut acc = 0u128;
        let mut x = a;
        for i in 0..128 {
            if (b >> i) & 1 == 1 {
                acc ^= x;
            }
            x = times_x(x);
        }
        acc
    }

    proptest! {
        #[test]
        fn multiplication_matches_schoolbook(a in any::<u128>(), b in any::<u128>()) {
            prop_assert_eq!((Gf128(a) * Gf128(b)).0, reference_mul(a, b));
        }

        #[test]
        fn inverse(a in any::<u128>()) {
            match Gf128(a).invert() {
                None => prop_assert_eq!(a, 0),
                Some(i) => prop_assert_eq!(i * Gf128(a), Gf128::ONE),
            }
        }
    }
}
