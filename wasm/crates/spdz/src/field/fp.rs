//! F_p with p = 2^128 − 173, the largest prime below 2^128 with p ≡ 3 (mod 4).
//!
//! **Why this prime.** WebAssembly has no 64×64→128-bit multiply, so a 128-bit product is
//! built from sixteen 32×32→64 multiplies (`i64.mul`); the candidates differ in the reduction.
//! Measured in Wasm (Node 20, a chain of dependent multiplications, best of 9 interleaved runs,
//! on the shared 2-core VM; scratch benchmark described in the report of issue 12):
//!
//! | candidate                                   | k   | M mul/s |
//! |---------------------------------------------|-----|---------|
//! | 2^128 − 173, 32-bit limbs (this code)       | 128 | 42      |
//! | 2^128 − 173, 64-bit limbs (`u128` products) | 128 | 21      |
//! | Montgomery, random 128-bit prime, 32-bit    | 128 | 41      |
//! | 2^127 − 1 (Mersenne), 32-bit limbs          | 127 | 72      |
//!
//! 64-bit limbs lose because each 64×64→128 product becomes a `__multi3` call in Wasm. The
//! Mersenne prime multiplies 1.7× faster but has k = 127 bits: below the 128 that Corollary 1
//! needs for τ = 3 (64-bit statistical security), so it would need τ = 4 and a third more
//! random OTs per triple — and OTs, not field multiplications, dominate triple generation
//! (a triple needs 384 OTs per ordered pair and only a handful of multiplications). Among
//! 128-bit primes, the pseudo-Mersenne form is as fast as Montgomery and needs no conversion
//! into and out of Montgomery form for every hashed OT output and every value on the wire.
//! p ≡ 3 (mod 4) (2^128 − 159, the largest 128-bit prime, is ≡ 1) makes square roots one
//! exponentiation (x^((p+1)/4)), which random bits use.
//!
//! Elements are kept canonical (`< p`). Natively the product uses 64-bit limbs (one `mul`
//! instruction per 64×64 product); in Wasm, 32-bit limbs. Both are always compiled and tested
//! against each other and against big-integer arithmetic.

use super::{Field, FieldKind};
use core::fmt;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// c in p = 2^128 − c.
const C: u128 = 173;
/// The modulus.
pub const P: u128 = u128::MAX - (C - 1);

/// An element of F_p, p = 2^128 − 173, as its canonical integer.
#[derive(Clone, Copy, Default)]
pub struct Fp(u128);

/// All-ones if `bit` is 1, zero if 0.
#[inline(always)]
fn mask(bit: bool) -> u128 {
    0u128.wrapping_sub(bit as u128)
}

/// `x mod p` for any `x < 2^128` (a single conditional subtraction: 2p > 2^128).
#[inline(always)]
fn reduce_once(x: u128) -> u128 {
    let (t, over) = x.overflowing_add(C);
    // x ≥ p ⟺ x + c ≥ 2^128; then x − p = x + c − 2^128 = t.
    (t & mask(over)) | (x & !mask(over))
}

#[inline(always)]
fn add_mod(a: u128, b: u128) -> u128 {
    let (s, c1) = a.overflowing_add(b);
    let (t, c2) = s.overflowing_add(C);
    // a + b ≥ p ⟺ (a + b) + c ≥ 2^128, i.e. a carry from either addition; then t = a + b − p.
    let m = mask(c1 | c2);
    (t & m) | (s & !m)
}

#[inline(always)]
fn sub_mod(a: u128, b: u128) -> u128 {
    let (d, borrow) = a.overflowing_sub(b);
    // On a borrow, d = a − b + 2^128; adding p = 2^128 − c means subtracting c.
    d.wrapping_sub(C & mask(borrow))
}

/// The 256-bit product as 32-bit limbs, little-endian (the Wasm path: only 32×32→64 products).
#[inline(always)]
#[allow(dead_code)]
fn mul_wide_32(a: u128, b: u128) -> [u32; 8] {
    let a = [a as u32, (a >> 32) as u32, (a >> 64) as u32, (a >> 96) as u32];
    let b = [b as u32, (b >> 32) as u32, (b >> 64) as u32, (b >> 96) as u32];
    let mut w = [0u32; 8];
    for i in 0..4 {
        let mut carry = 0u64;
        for j in 0..4 {
            // ≤ (2^32 − 1)^2 + 2·(2^32 − 1) = 2^64 − 1: never overflows.
            let t = w[i + j] as u64 + a[i] as u64 * b[j] as u64 + carry;
            w[i + j] = t as u32;
            carry = t >> 32;
        }
        w[i + 4] = carry as u32;
    }
    w
}

/// Reduces `Σ w[i]·2^(32 i)` (up to 9 limbs of at most 32 bits each) modulo p, with 32-bit
/// limb arithmetic only: fold the part above 2^128 down with 2^128 ≡ c, twice, then subtract p
/// once if needed.
#[inline(always)]
fn reduce_limbs_32(w: &[u64; 9]) -> u128 {
    // r = lo + hi·c, hi = limbs 4..9 (< 2^160), c < 2^8: r < 2^169, kept as 5 limbs + carry.
    let mut r = [0u64; 4];
    let mut carry = 0u64;
    for i in 0..4 {
        let t = w[i] + w[i + 4] * C as u64 + carry;
        r[i] = t & 0xffff_ffff;
        carry = t >> 32;
    }
    // The fifth limb of hi contributes w[8]·c·2^32 beyond the 128 bits: add it to the carry
    // (which already counts units of 2^128).
    let top = carry + w[8] * C as u64; // value ≡ r + top·2^128 ≡ r + top·c, top < 2^42
    let mut carry = top * C as u64; // < 2^50
    for limb in r.iter_mut() {
        let t = *limb + carry;
        *limb = t & 0xffff_ffff;
        carry = t >> 32;
    }
    // carry ∈ {0, 1}: r + 2^128 ≡ r + c, and r is then < 2^50, so adding c cannot carry.
    let x = (r[0] as u128) | (r[1] as u128) << 32 | (r[2] as u128) << 64 | (r[3] as u128) << 96;
    reduce_once(x.wrapping_add(C & mask(carry == 1)))
}

/// `a·b mod p` with 32-bit limbs (what Wasm runs): the 256-bit product, then
/// `lo + hi·c` limb by limb (hi·c < 2^136: a carry below 2^9 remains), then that carry times c.
#[inline(always)]
#[allow(dead_code)]
fn mul_mod_32(a: u128, b: u128) -> u128 {
    let w = mul_wide_32(a, b);
    let mut r = [0u32; 4];
    let mut carry = 0u64;
    for i in 0..4 {
        let t = w[i] as u64 + w[i + 4] as u64 * C as u64 + carry;
        r[i] = t as u32;
        carry = t >> 32;
    }
    let x = (r[0] as u128) | (r[1] as u128) << 32 | (r[2] as u128) << 64 | (r[3] as u128) << 96;
    // carry·c < 2^17; on overflow x + carry·c − 2^128 is tiny and 2^128 ≡ c adds back.
    let (x, over) = x.overflowing_add((carry * C as u64) as u128);
    reduce_once(x.wrapping_add(C & mask(over)))
}

/// `a·b mod p` with 64-bit limbs and 64×64→128 products (native).
#[inline(always)]
#[allow(dead_code)]
fn mul_mod_64(a: u128, b: u128) -> u128 {
    let (a0, a1) = (a as u64 as u128, a >> 64);
    let (b0, b1) = (b as u64 as u128, b >> 64);
    let ll = a0 * b0;
    let lh = a0 * b1;
    let hl = a1 * b0;
    let hh = a1 * b1;
    let (mid, mid_carry) = lh.overflowing_add(hl);
    let (lo, c1) = ll.overflowing_add(mid << 64);
    let hi = hh + (mid >> 64) + ((mid_carry as u128) << 64) + c1 as u128;
    // hi·c: hi < 2^128, c < 2^8.
    let m0 = (hi as u64 as u128) * C;
    let m1 = (hi >> 64) * C;
    let (t_lo, c2) = m0.overflowing_add(m1 << 64);
    let t_hi = (m1 >> 64) + c2 as u128;
    let (s, c3) = lo.overflowing_add(t_lo);
    let top = t_hi + c3 as u128; // < 2^9
    let (s, c4) = s.overflowing_add(top * C);
    reduce_once(s.wrapping_add(C & mask(c4)))
}

#[inline(always)]
fn mul_mod(a: u128, b: u128) -> u128 {
    #[cfg(target_pointer_width = "64")]
    {
        mul_mod_64(a, b)
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        mul_mod_32(a, b)
    }
}

impl Fp {
    /// The canonical integer in `[0, p)`.
    pub fn to_u128(self) -> u128 {
        self.0
    }

    /// The element `x mod p`.
    pub fn from_u128(x: u128) -> Fp {
        Fp(reduce_once(x))
    }

    /// The element `x mod p` of a signed integer.
    pub fn from_i128(x: i128) -> Fp {
        if x >= 0 {
            Fp::from_u128(x as u128)
        } else {
            -Fp::from_u128(x.unsigned_abs())
        }
    }

    /// The value as a signed integer in `(−p/2, p/2]` (public values only: it branches).
    pub fn to_i128(self) -> i128 {
        if self.0 > P / 2 {
            -((P - self.0) as i128)
        } else {
            self.0 as i128
        }
    }

    /// x^e (square and multiply over every bit of `e`; `e` is public).
    pub fn pow(self, e: u128) -> Fp {
        let mut acc = Fp::ONE;
        for i in (0..128).rev() {
            acc = acc * acc;
            let with = acc * self;
            acc = Fp::conditional_select(&acc, &with, Choice::from(((e >> i) & 1) as u8));
        }
        acc
    }
}

impl Field for Fp {
    const KIND: FieldKind = FieldKind::Prime;
    const ZERO: Fp = Fp(0);
    const ONE: Fp = Fp(1);

    fn from_u64(x: u64) -> Fp {
        Fp(x as u128)
    }

    /// `b mod p` is off uniform by 173/2^128 (the values below 173 would be hit twice), so an
    /// input ≥ p is not reduced but re-hashed with the fixed-key CR hash until it lands below
    /// p: in the random-permutation model the result is exactly uniform. The loop runs again
    /// with probability 173/2^128 ≈ 2^-120.6 per element; that branch reveals only the event.
    fn from_hash(b: Block) -> Fp {
        let mut v = b.to_u128();
        let mut x = b;
        while v >= P {
            x = webmpc_core::hash::cr(x);
            v = x.to_u128();
        }
        Fp(v)
    }

    /// Rejection sampling on 128-bit PRG blocks: exact.
    fn random(prg: &mut Prg) -> Fp {
        loop {
            let v = prg.next_block().to_u128();
            if v < P {
                return Fp(v);
            }
        }
    }

    /// The same stream as [`Fp::random`] element by element would read when nothing is
    /// rejected; a rejected block (probability 173/2^128) is replaced by blocks read after the
    /// whole request, as both ends of a COPE seed do alike. Read through a small stack buffer,
    /// so a large request allocates nothing.
    fn random_fill(prg: &mut Prg, out: &mut [Fp]) {
        let mut rejected = false;
        super::fill_through_blocks(prg, out, |b| {
            let v = b.to_u128();
            rejected |= v >= P;
            Fp(v)
        });
        if rejected {
            for x in out.iter_mut() {
                if x.0 >= P {
                    *x = Fp::random(prg);
                }
            }
        }
    }

    fn to_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    fn from_bytes(b: [u8; 16]) -> Option<Fp> {
        let v = u128::from_le_bytes(b);
        (v < P).then_some(Fp(v))
    }

    fn bits(self) -> u128 {
        self.0
    }

    fn from_bits(bits: u128) -> Fp {
        Fp(reduce_once(bits))
    }

    /// Σ xs[h]·2^h: each term is added, shifted, into 32-bit columns held in u64 accumulators
    /// (128 terms of < 2^32 per column cannot overflow), then one reduction.
    fn gadget(xs: &[Fp]) -> Fp {
        debug_assert!(xs.len() <= 128);
        let mut acc = [0u64; 9];
        for (h, x) in xs.iter().enumerate() {
            let (q, s) = (h / 32, (h % 32) as u32);
            let v = x.0;
            let limbs = [v as u32, (v >> 32) as u32, (v >> 64) as u32, (v >> 96) as u32];
            for (i, l) in limbs.iter().enumerate() {
                let t = (*l as u64) << s;
                acc[q + i] += t & 0xffff_ffff;
                acc[q + i + 1] += t >> 32;
            }
        }
        // Carry-propagate into 32-bit limbs; the total is < 2^256 · 2 < 2^288.
        let mut carry = 0u64;
        for a in acc.iter_mut() {
            let t = *a + carry;
            *a = t & 0xffff_ffff;
            carry = t >> 32;
        }
        debug_assert_eq!(carry, 0);
        Fp(reduce_limbs_32(&acc))
    }

    fn invert(self) -> Option<Fp> {
        (self.0 != 0).then(|| self.pow(P - 2))
    }

    fn times_g(self) -> Fp {
        self + self
    }

    /// `x^((p+1)/4)` (p ≡ 3 mod 4); `None` if `x` is not a square.
    fn sqrt(self) -> Option<Fp> {
        let r = self.pow((P >> 2) + 1);
        (r * r == self).then_some(r)
    }
}

impl ConstantTimeEq for Fp {
    fn ct_eq(&self, other: &Fp) -> Choice {
        self.0.ct_eq(&other.0)
    }
}

impl PartialEq for Fp {
    fn eq(&self, other: &Fp) -> bool {
        self.ct_eq(other).into()
    }
}
impl Eq for Fp {}

impl ConditionallySelectable for Fp {
    fn conditional_select(a: &Fp, b: &Fp, choice: Choice) -> Fp {
        Fp(u128::conditional_select(&a.0, &b.0, choice))
    }
}

/// Redacted, like `Block`: elements are usually secret shares or MAC keys.
impl fmt::Debug for Fp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fp(..)")
    }
}

impl Add for Fp {
    type Output = Fp;
    #[inline(always)]
    fn add(self, o: Fp) -> Fp {
        Fp(add_mod(self.0, o.0))
    }
}
impl Sub for Fp {
    type Output = Fp;
    #[inline(always)]
    fn sub(self, o: Fp) -> Fp {
        Fp(sub_mod(self.0, o.0))
    }
}
impl Neg for Fp {
    type Output = Fp;
    #[inline(always)]
    fn neg(self) -> Fp {
        Fp(sub_mod(0, self.0))
    }
}
impl Mul for Fp {
    type Output = Fp;
    #[inline(always)]
    fn mul(self, o: Fp) -> Fp {
        webmpc_core::count::add(webmpc_core::count::Op::FpMul, 1);
        Fp(mul_mod(self.0, o.0))
    }
}
impl AddAssign for Fp {
    #[inline(always)]
    fn add_assign(&mut self, o: Fp) {
        *self = *self + o;
    }
}
impl SubAssign for Fp {
    #[inline(always)]
    fn sub_assign(&mut self, o: Fp) {
        *self = *self - o;
    }
}
impl MulAssign for Fp {
    #[inline(always)]
    fn mul_assign(&mut self, o: Fp) {
        *self = *self * o;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;
    use proptest::prelude::*;

    fn big(x: u128) -> BigUint {
        BigUint::from(x)
    }

    fn p() -> BigUint {
        big(P)
    }

    fn to_u128(b: &BigUint) -> u128 {
        let d = b.to_u64_digits();
        d.first().copied().unwrap_or(0) as u128 | (d.get(1).copied().unwrap_or(0) as u128) << 64
    }

    fn edge() -> impl Strategy<Value = u128> {
        prop_oneof![
            any::<u128>().prop_map(|x| x % P),
            (0u128..1000).prop_map(|d| P - 1 - d),
            0u128..1000,
            Just(P - 1),
            Just(1u128 << 127),
        ]
    }

    #[test]
    fn the_modulus_is_the_documented_prime() {
        assert_eq!(P.wrapping_add(173), 0, "p = 2^128 − 173");
        assert_eq!(P % 4, 3);
        // Fermat witnesses: a^(p−1) = 1 for several bases (p is prime; a composite would fail).
        for a in [2u64, 3, 5, 7, 11, 13] {
            assert_eq!(Fp::from_u64(a).pow(P - 1), Fp::ONE);
        }
    }

    proptest! {
        #[test]
        fn arithmetic_matches_big_integers(a in edge(), b in edge()) {
            let (x, y) = (Fp(a), Fp(b));
            prop_assert_eq!((x + y).0, to_u128(&((big(a) + big(b)) % p())));
            prop_assert_eq!((x - y).0, to_u128(&((big(a) + p() - big(b)) % p())));
            prop_assert_eq!((-x).0, to_u128(&((p() - big(a)) % p())));
            let prod = to_u128(&((big(a) * big(b)) % p()));
            prop_assert_eq!(mul_mod_32(a, b), prod);
            prop_assert_eq!(mul_mod_64(a, b), prod);
            prop_assert_eq!((x * y).0, prod);
        }

        #[test]
        fn reduction_of_any_128_bit_value(v in any::<u128>()) {
            prop_assert_eq!(Fp::from_u128(v).0, to_u128(&(big(v) % p())));
            prop_assert_eq!(Fp::from_bits(v).0, v % P);
        }

        #[test]
        fn inverse_and_sqrt(a in edge()) {
            let x = Fp(a);
            match x.invert() {
                None => prop_assert_eq!(a, 0),
                Some(i) => prop_assert_eq!(i * x, Fp::ONE),
            }
            let s = x * x;
            let r = s.sqrt().unwrap();
            prop_assert!(r == x || r == -x);
        }

        #[test]
        fn signed_round_trip(v in any::<i64>()) {
            prop_assert_eq!(Fp::from_i128(v as i128).to_i128(), v as i128);
        }
    }

    #[test]
    fn non_residues_have_no_root_and_bytes_are_canonical() {
        // −1 is a non-residue when p ≡ 3 mod 4.
        assert!((-Fp::ONE).sqrt().is_none());
        assert!(Fp::from_bytes(P.to_le_bytes()).is_none());
        assert!(Fp::from_bytes(u128::MAX.to_le_bytes()).is_none());
        assert_eq!(Fp::from_bytes((P - 1).to_le_bytes()), Some(-Fp::ONE));
    }

    #[test]
    fn hash_mapping_rehashes_values_at_or_above_p() {
        let below = Block::from_u128(P - 1);
        assert_eq!(Fp::from_hash(below).0, P - 1);
        for v in [P, P + 1, u128::MAX] {
            let x = Fp::from_hash(Block::from_u128(v));
            assert!(x.0 < P);
            // Deterministic, and not the biased `v mod p`.
            assert_eq!(x, Fp::from_hash(Block::from_u128(v)));
            assert_ne!(x.0, v - P);
        }
    }
}
