//! Arithmetic in GF(2^128) = GF(2)\[x\] / (x^128 + x^7 + x^2 + x + 1), non-reflected: bit `i` of
//! [`Block::to_u128`] is the coefficient of `x^i`. (GCM's bit-reflected convention is *not* used;
//! the KOS consistency check only needs some fixed field, and this one keeps shifts natural.)
//!
//! Wasm has no carry-less multiply instruction, so the portable path builds one from ordinary
//! integer multiplications on operands with "holes" (see `clmul64_lo`); on x86_64 a PCLMULQDQ
//! path is used when the CPU has it. Neither path branches on or indexes memory by data. The
//! portable path does rely on 64-bit integer multiplication taking data-independent time, which
//! holds on x86_64 and on the 64-bit ARM cores browsers run on.

use crate::{Block, KernelError};
use alloc::vec::Vec;

/// Every fourth bit, starting at bit 0 / 1 / 2 / 3.
const M0: u64 = 0x1111_1111_1111_1111;
const M1: u64 = 0x2222_2222_2222_2222;
const M2: u64 = 0x4444_4444_4444_4444;
const M3: u64 = 0x8888_8888_8888_8888;

/// The low 64 coefficients of the carry-less product of two 64-bit polynomials.
///
/// Each operand is split into four classes of bits, four positions apart. The integer product of
/// two such sparse words is `Σ c_p · 2^p`, where `c_p` counts the pairs of set bits whose
/// positions add up to `p`; the coefficient we want is `c_p mod 2`, the lowest bit of the slot
/// at `p`. Slots of one product are four bits apart, so the product is exact as long as no count
/// needs more than four bits. With both positions drawn from fixed residues mod 4, at most
/// `⌊p/4⌋ + 1` pairs reach position `p`: that is ≤ 15 for every `p < 60`, so those counts sit
/// inside their own nibble. Only `p ∈ 60..64` can reach 16, and the carry it produces lands at
/// bit `p + 4 ≥ 64`, which the wrapping 64-bit multiply discards. Everything at or above bit 64
/// is discarded wholesale (it is a multiple of 2^64), so it cannot disturb the low word either.
/// Hence every low-word slot is exact, and summing classes with XOR keeps just the parities.
///
/// This is why only the *low* half is computed this way: in the high half the counts reach 16
/// and would carry into the next slot. The high half comes from bit reversal instead
/// ([`hi_from_reversed`]).
#[inline(always)]
fn clmul64_lo(x: u64, y: u64) -> u64 {
    let (x0, x1, x2, x3) = (x & M0, x & M1, x & M2, x & M3);
    let (y0, y1, y2, y3) = (y & M0, y & M1, y & M2, y & M3);
    // Output class k collects the products of input classes (i, j) with i + j ≡ k (mod 4).
    let z0 = x0.wrapping_mul(y0) ^ x1.wrapping_mul(y3) ^ x2.wrapping_mul(y2) ^ x3.wrapping_mul(y1);
    let z1 = x0.wrapping_mul(y1) ^ x1.wrapping_mul(y0) ^ x2.wrapping_mul(y3) ^ x3.wrapping_mul(y2);
    let z2 = x0.wrapping_mul(y2) ^ x1.wrapping_mul(y1) ^ x2.wrapping_mul(y0) ^ x3.wrapping_mul(y3);
    let z3 = x0.wrapping_mul(y3) ^ x1.wrapping_mul(y2) ^ x2.wrapping_mul(y1) ^ x3.wrapping_mul(y0);
    (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3)
}

/// Turns `clmul64_lo(rev x, rev y)` into the high 64 coefficients of `x · y`.
///
/// Reversing both 64-bit operands maps coefficient `k` of the 127-coefficient product to
/// `126 - k`, so the low word of the reversed product holds coefficients 126 down to 63;
/// reversing it back and dropping coefficient 63 leaves coefficients 64..=126.
/// It is linear, so sums of reversed products may be converted once at the end.
#[inline(always)]
fn hi_from_reversed(r: u64) -> u64 {
    r.reverse_bits() >> 1
}

/// The six 64-bit words a 128 × 128 Karatsuba product is assembled from: for each of the three
/// half-products (low halves, high halves, XOR of halves), its low word and its bit-reversed
/// high word. Products are accumulated in this form (XOR is linear) so that a sum of many
/// products pays for the output reversals and the recombination only once.
#[derive(Clone, Copy, Default)]
struct Partial([u64; 6]);

impl Partial {
    #[inline(always)]
    fn of(a: Block, b: Block) -> Self {
        let [a0, a1] = a.to_u64s();
        let [b0, b1] = b.to_u64s();
        let (ra0, ra1, rb0, rb1) = (a0.reverse_bits(), a1.reverse_bits(), b0.reverse_bits(), b1.reverse_bits());
        Partial([
            clmul64_lo(a0, b0),
            clmul64_lo(ra0, rb0),
            clmul64_lo(a1, b1),
            clmul64_lo(ra1, rb1),
            clmul64_lo(a0 ^ a1, b0 ^ b1),
            // Reversal commutes with XOR, so the middle operands need no reversal of their own.
            clmul64_lo(ra0 ^ ra1, rb0 ^ rb1),
        ])
    }

    /// The 256-bit product as (low, high) 128-bit halves.
    #[inline(always)]
    fn finish(self) -> (u128, u128) {
        let [l0, r0, l1, r1, lm, rm] = self.0;
        let (h0, h1, hm) = (hi_from_reversed(r0), hi_from_reversed(r1), hi_from_reversed(rm));
        // Karatsuba: (a0 + a1 X)(b0 + b1 X) = a0b0 + ((a0+a1)(b0+b1) - a0b0 - a1b1) X + a1b1 X²,
        // with X = x^64 and "-" = XOR.
        let mid_lo = lm ^ l0 ^ l1;
        let mid_hi = hm ^ h0 ^ h1;
        let w0 = l0;
        let w1 = h0 ^ mid_lo;
        let w2 = l1 ^ mid_hi;
        let w3 = h1;
        ((w0 as u128) | ((w1 as u128) << 64), (w2 as u128) | ((w3 as u128) << 64))
    }
}

/// A 64-bit word split into its four classes of bit positions (residues mod 4), the operand form
/// of [`clmul64_lo`].
#[derive(Clone, Copy, Default)]
struct Classes([u64; 4]);

impl Classes {
    #[inline(always)]
    fn of(x: u64) -> Self {
        Classes([x & M0, x & M1, x & M2, x & M3])
    }
}

/// One factor prepared for [`Raw`] sums: the classes of the six words [`Partial::of`] multiplies
/// (low, reversed low, high, reversed high, middle, reversed middle). Preparing a factor that is
/// used many times (public coefficients) once saves its reversals and masks in every product.
#[derive(Clone, Copy, Default)]
pub(crate) struct Prepared([Classes; 6]);

impl Prepared {
    #[inline(always)]
    fn of(a: Block) -> Self {
        let [a0, a1] = a.to_u64s();
        let (r0, r1) = (a0.reverse_bits(), a1.reverse_bits());
        Prepared([
            Classes::of(a0),
            Classes::of(r0),
            Classes::of(a1),
            Classes::of(r1),
            Classes::of(a0 ^ a1),
            Classes::of(r0 ^ r1),
        ])
    }
}

/// A sum of products in [`Partial`]'s six words with the class masks of [`clmul64_lo`] deferred:
/// `0[w][k]` accumulates output class k of word w *unmasked*. In one product the bits of class k
/// hold the coefficient parities and the bits between them the higher bits of the pair counts;
/// XOR has no carries, so XOR-summing unmasked words leaves every class-k bit the XOR of the
/// parities, and the masks (4 ANDs and 3 ORs per word) are applied once per sum, not per product.
#[derive(Clone, Copy, Default)]
struct Raw([[u64; 4]; 6]);

impl Raw {
    #[inline(always)]
    fn add(&mut self, a: &Prepared, b: &Prepared) {
        for (z, (x, y)) in self.0.iter_mut().zip(a.0.iter().zip(&b.0)) {
            let (x, y) = (&x.0, &y.0);
            z[0] ^=
                x[0].wrapping_mul(y[0]) ^ x[1].wrapping_mul(y[3]) ^ x[2].wrapping_mul(y[2]) ^ x[3].wrapping_mul(y[1]);
            z[1] ^=
                x[0].wrapping_mul(y[1]) ^ x[1].wrapping_mul(y[0]) ^ x[2].wrapping_mul(y[3]) ^ x[3].wrapping_mul(y[2]);
            z[2] ^=
                x[0].wrapping_mul(y[2]) ^ x[1].wrapping_mul(y[1]) ^ x[2].wrapping_mul(y[0]) ^ x[3].wrapping_mul(y[3]);
            z[3] ^=
                x[0].wrapping_mul(y[3]) ^ x[1].wrapping_mul(y[2]) ^ x[2].wrapping_mul(y[1]) ^ x[3].wrapping_mul(y[0]);
        }
    }

    #[inline(always)]
    fn partial(&self) -> Partial {
        Partial(core::array::from_fn(|w| {
            let z = &self.0[w];
            (z[0] & M0) | (z[1] & M1) | (z[2] & M2) | (z[3] & M3)
        }))
    }
}

/// Reduction of a 256-bit polynomial `lo + hi · x^128` modulo x^128 + x^7 + x^2 + x + 1.
#[inline(always)]
fn reduce_u128(lo: u128, hi: u128) -> u128 {
    // hi · x^128 ≡ hi · (x^7 + x^2 + x + 1). That product spills at most 7 bits past x^127;
    // the spill (degree ≤ 6) is folded in the same way, and its own product has degree ≤ 13,
    // so one fold into `hi` before multiplying accounts for both rounds at once.
    let spill = (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    let h = hi ^ spill;
    lo ^ h ^ (h << 1) ^ (h << 2) ^ (h << 7)
}

/// Portable implementations, always compiled so that tests can compare them against PCLMULQDQ.
pub(crate) mod portable {
    use super::*;

    #[inline]
    pub(crate) fn clmul128(a: Block, b: Block) -> (u128, u128) {
        Partial::of(a, b).finish()
    }

    #[inline]
    pub(crate) fn mul(a: Block, b: Block) -> Block {
        let (lo, hi) = clmul128(a, b);
        Block::from_u128(reduce_u128(lo, hi))
    }

    pub(crate) fn mul_many(a: &[Block], b: &[Block], out: &mut [Block]) {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = mul(x, y);
        }
    }

    pub(crate) fn inner_product(a: &[Block], b: &[Block]) -> Block {
        let mut acc = Raw::default();
        for (&x, &y) in a.iter().zip(b) {
            acc.add(&Prepared::of(x), &Prepared::of(y));
        }
        let (lo, hi) = acc.partial().finish();
        Block::from_u128(reduce_u128(lo, hi))
    }

    /// `Σ a[i] · b[i]` with the `a` side prepared once.
    pub(crate) fn inner_product_prepared(a: &[Prepared], b: &[Block]) -> Block {
        let mut acc = Raw::default();
        for (x, &y) in a.iter().zip(b) {
            acc.add(x, &Prepared::of(y));
        }
        let (lo, hi) = acc.partial().finish();
        Block::from_u128(reduce_u128(lo, hi))
    }
}

#[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
pub(crate) mod pclmul {
    //! Every function here requires PCLMULQDQ; callers check [`available`] first.
    use super::*;
    use core::arch::x86_64::*;

    #[inline]
    pub(crate) fn available() -> bool {
        #[cfg(feature = "std")]
        return std::arch::is_x86_feature_detected!("pclmulqdq");
        #[cfg(not(feature = "std"))]
        return cfg!(target_feature = "pclmulqdq");
    }

    #[inline(always)]
    fn to_m128(b: Block) -> __m128i {
        // SAFETY: 16 readable bytes; loadu has no alignment requirement; SSE2 is baseline on x86_64.
        unsafe { _mm_loadu_si128(b.0.as_ptr() as *const __m128i) }
    }

    #[inline(always)]
    fn to_u128(v: __m128i) -> u128 {
        let mut out = [0u8; 16];
        // SAFETY: 16 writable bytes; storeu has no alignment requirement.
        unsafe { _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, v) };
        u128::from_le_bytes(out)
    }

    /// Schoolbook product with four multiplies: PCLMULQDQ is cheap enough that Karatsuba's
    /// extra shuffles and XORs would not pay for the one multiply they save.
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    unsafe fn clmul_m128(a: __m128i, b: __m128i) -> (__m128i, __m128i) {
        let ll = _mm_clmulepi64_si128::<0x00>(a, b);
        let hh = _mm_clmulepi64_si128::<0x11>(a, b);
        let mid = _mm_xor_si128(_mm_clmulepi64_si128::<0x10>(a, b), _mm_clmulepi64_si128::<0x01>(a, b));
        (_mm_xor_si128(ll, _mm_slli_si128::<8>(mid)), _mm_xor_si128(hh, _mm_srli_si128::<8>(mid)))
    }

    /// # Safety
    /// The CPU must support PCLMULQDQ.
    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(crate) unsafe fn clmul128(a: Block, b: Block) -> (u128, u128) {
        let (lo, hi) = clmul_m128(to_m128(a), to_m128(b));
        (to_u128(lo), to_u128(hi))
    }

    /// # Safety
    /// The CPU must support PCLMULQDQ.
    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(crate) unsafe fn mul(a: Block, b: Block) -> Block {
        let (lo, hi) = clmul128(a, b);
        Block::from_u128(reduce_u128(lo, hi))
    }

    /// # Safety
    /// The CPU must support PCLMULQDQ.
    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(crate) unsafe fn mul_many(a: &[Block], b: &[Block], out: &mut [Block]) {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = mul(x, y);
        }
    }

    /// `Σ a[i] · b[i]` unreduced, as (low, high) halves.
    ///
    /// # Safety
    /// The CPU must support PCLMULQDQ.
    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(crate) unsafe fn inner_product_unreduced(a: &[Block], b: &[Block]) -> (u128, u128) {
        let mut lo = _mm_setzero_si128();
        let mut hi = _mm_setzero_si128();
        for (&x, &y) in a.iter().zip(b) {
            let (l, h) = clmul_m128(to_m128(x), to_m128(y));
            lo = _mm_xor_si128(lo, l);
            hi = _mm_xor_si128(hi, h);
        }
        (to_u128(lo), to_u128(hi))
    }

    /// # Safety
    /// The CPU must support PCLMULQDQ.
    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(crate) unsafe fn inner_product(a: &[Block], b: &[Block]) -> Block {
        let mut lo = _mm_setzero_si128();
        let mut hi = _mm_setzero_si128();
        for (&x, &y) in a.iter().zip(b) {
            let (l, h) = clmul_m128(to_m128(x), to_m128(y));
            lo = _mm_xor_si128(lo, l);
            hi = _mm_xor_si128(hi, h);
        }
        Block::from_u128(reduce_u128(to_u128(lo), to_u128(hi)))
    }
}

/// The unreduced 256-bit carry-less product of `a` and `b`, as (low 128 bits, high 128 bits).
/// The high half has degree ≤ 126, so its top bit is always clear.
pub fn clmul128(a: Block, b: Block) -> (Block, Block) {
    #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
    if pclmul::available() {
        // SAFETY: PCLMULQDQ was just detected.
        let (lo, hi) = unsafe { pclmul::clmul128(a, b) };
        return (Block::from_u128(lo), Block::from_u128(hi));
    }
    let (lo, hi) = portable::clmul128(a, b);
    (Block::from_u128(lo), Block::from_u128(hi))
}

/// Reduces `lo + hi · x^128` modulo x^128 + x^7 + x^2 + x + 1.
pub fn reduce(lo: Block, hi: Block) -> Block {
    Block::from_u128(reduce_u128(lo.to_u128(), hi.to_u128()))
}

/// `a · b` in GF(2^128).
pub fn gf128_mul(a: Block, b: Block) -> Block {
    crate::count::add(crate::count::Op::Gf128Mul, 1);
    #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
    if pclmul::available() {
        // SAFETY: PCLMULQDQ was just detected.
        return unsafe { pclmul::mul(a, b) };
    }
    portable::mul(a, b)
}

/// `out[i] = a[i] · b[i]` for every `i`. All three slices must have the same length.
pub fn gf128_mul_many(a: &[Block], b: &[Block], out: &mut [Block]) -> Result<(), KernelError> {
    if a.len() != b.len() {
        return Err(KernelError::LengthMismatch { what: "gf128_mul_many: a vs b", left: a.len(), right: b.len() });
    }
    if a.len() != out.len() {
        return Err(KernelError::LengthMismatch { what: "gf128_mul_many: a vs out", left: a.len(), right: out.len() });
    }
    crate::count::add(crate::count::Op::Gf128Mul, a.len() as u64);
    #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
    if pclmul::available() {
        // SAFETY: PCLMULQDQ was just detected.
        unsafe { pclmul::mul_many(a, b, out) };
        return Ok(());
    }
    portable::mul_many(a, b, out);
    Ok(())
}

/// `Σ a[i] · b[i]` in GF(2^128). Products are summed unreduced (reduction is linear) and the
/// sum is reduced once. The empty sum is zero.
pub fn gf128_inner_product(a: &[Block], b: &[Block]) -> Result<Block, KernelError> {
    if a.len() != b.len() {
        return Err(KernelError::LengthMismatch { what: "gf128_inner_product", left: a.len(), right: b.len() });
    }
    crate::count::add(crate::count::Op::Gf128Mul, a.len() as u64);
    #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
    if pclmul::available() {
        // SAFETY: PCLMULQDQ was just detected.
        return Ok(unsafe { pclmul::inner_product(a, b) });
    }
    Ok(portable::inner_product(a, b))
}

/// Coefficients c_0..c_{k−1} prepared once for many inner products `Σ c_i · v_i` with different
/// vectors v (the same challenges against every row of a KOS chunk, say). Natively with
/// PCLMULQDQ this is just the coefficients; on the portable path (Wasm) each coefficient's
/// bit-reversals and class masks are computed here once instead of in every product, which makes
/// each inner product about a third cheaper. The results are exactly [`gf128_inner_product`]'s.
pub struct Gf128Coefficients {
    coefficients: Vec<Block>,
    prepared: Vec<Prepared>,
}

impl Gf128Coefficients {
    /// Prepares `coefficients`.
    pub fn new(coefficients: &[Block]) -> Self {
        #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
        if pclmul::available() {
            return Gf128Coefficients { coefficients: coefficients.to_vec(), prepared: Vec::new() };
        }
        Gf128Coefficients {
            coefficients: coefficients.to_vec(),
            prepared: coefficients.iter().map(|&c| Prepared::of(c)).collect(),
        }
    }

    /// The number of coefficients.
    pub fn len(&self) -> usize {
        self.coefficients.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.coefficients.is_empty()
    }

    /// `Σ c_i · v[i]`; `v` must have one block per coefficient.
    pub fn inner_product(&self, v: &[Block]) -> Result<Block, KernelError> {
        if v.len() != self.len() {
            return Err(KernelError::LengthMismatch {
                what: "Gf128Coefficients::inner_product",
                left: self.len(),
                right: v.len(),
            });
        }
        crate::count::add(crate::count::Op::Gf128Mul, v.len() as u64);
        #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
        if self.prepared.is_empty() && !v.is_empty() {
            // SAFETY: `new` leaves `prepared` empty only after detecting PCLMULQDQ.
            return Ok(unsafe { pclmul::inner_product(&self.coefficients, v) });
        }
        Ok(portable::inner_product_prepared(&self.prepared, v))
    }
}

/// A running sum `Σ c_i · v_i` over [`Gf128Coefficients`], added to in pieces
/// ([`Gf128Coefficients::accumulate`]) and reduced once ([`Gf128Sum::value`]): the KOS check
/// accumulates each row's inner product a column group at a time, while that part of the matrix
/// is in cache, instead of in a separate pass over the whole matrix.
#[derive(Clone, Copy, Default)]
pub struct Gf128Sum {
    lo: u128,
    hi: u128,
}

impl Gf128Sum {
    /// The sum so far, reduced.
    pub fn value(&self) -> Block {
        Block::from_u128(reduce_u128(self.lo, self.hi))
    }
}

impl Gf128Coefficients {
    /// `sum += Σ_k c_{offset+k} · v[k]` (unreduced); `offset + v.len()` must not pass the
    /// coefficients.
    pub fn accumulate(&self, offset: usize, v: &[Block], sum: &mut Gf128Sum) -> Result<(), KernelError> {
        let end = offset.checked_add(v.len()).filter(|&e| e <= self.len());
        let Some(end) = end else {
            return Err(KernelError::LengthMismatch {
                what: "Gf128Coefficients::accumulate",
                left: self.len(),
                right: offset.saturating_add(v.len()),
            });
        };
        crate::count::add(crate::count::Op::Gf128Mul, v.len() as u64);
        #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
        if self.prepared.is_empty() && !v.is_empty() {
            // SAFETY: `new` leaves `prepared` empty only after detecting PCLMULQDQ.
            let (lo, hi) = unsafe { pclmul::inner_product_unreduced(&self.coefficients[offset..end], v) };
            sum.lo ^= lo;
            sum.hi ^= hi;
            return Ok(());
        }
        let mut acc = Raw::default();
        for (x, &y) in self.prepared[offset..end].iter().zip(v) {
            acc.add(x, &Prepared::of(y));
        }
        let (lo, hi) = acc.partial().finish();
        sum.lo ^= lo;
        sum.hi ^= hi;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn accumulating_in_pieces_is_the_inner_product() {
        let c: Vec<Block> = (0..37u128)
            .map(|i| Block::from_u128(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ 77))
            .collect();
        let v: Vec<Block> =
            (0..37u128).map(|i| Block::from_u128(!i.wrapping_mul(0x2545_f491_4f6c_dd1d_0123_4567_89ab_cdef))).collect();
        let chi = Gf128Coefficients::new(&c);
        let mut sum = Gf128Sum::default();
        for (k, piece) in v.chunks(5).enumerate() {
            chi.accumulate(5 * k, piece, &mut sum).unwrap();
        }
        assert_eq!(sum.value(), gf128_inner_product(&c, &v).unwrap());
        assert_eq!(sum.value(), portable::inner_product(&c, &v));
        assert!(chi.accumulate(35, &v[..3], &mut sum).is_err());
    }

    /// x^128 mod the field polynomial, i.e. x^7 + x^2 + x + 1.
    const R: u128 = 0x87;

    /// Carry-less product by shift-and-add, one bit of `b` at a time.
    fn ref_clmul(a: u128, b: u128) -> (u128, u128) {
        let (mut lo, mut hi) = (0u128, 0u128);
        for i in 0..128 {
            if (b >> i) & 1 == 1 {
                lo ^= a << i;
                if i > 0 {
                    hi ^= a >> (128 - i);
                }
            }
        }
        (lo, hi)
    }

    /// Field product by shift-and-add with reduction after every doubling.
    fn ref_mul(a: u128, b: u128) -> u128 {
        let (mut acc, mut a) = (0u128, a);
        for i in 0..128 {
            if (b >> i) & 1 == 1 {
                acc ^= a;
            }
            let carry = a >> 127;
            a <<= 1;
            if carry == 1 {
                a ^= R;
            }
        }
        acc
    }

    fn ref_clmul64(a: u64, b: u64) -> u128 {
        ref_clmul(a as u128, b as u128).0
    }

    fn b(x: u128) -> Block {
        Block::from_u128(x)
    }

    fn x_pow(k: u32) -> Block {
        b(1u128 << k)
    }

    fn pow(a: Block, mut e: u128) -> Block {
        let (mut acc, mut base) = (b(1), a);
        while e != 0 {
            if e & 1 == 1 {
                acc = gf128_mul(acc, base);
            }
            base = gf128_mul(base, base);
            e >>= 1;
        }
        acc
    }

    fn arb_block() -> impl Strategy<Value = Block> {
        any::<u128>().prop_map(Block::from_u128)
    }

    /// Operands with long runs of ones stress the slot-overflow argument of `clmul64_lo` hardest
    /// (the counts per slot are maximal), which uniform random words rarely do.
    fn dense_u64() -> impl Strategy<Value = u64> {
        prop_oneof![
            any::<u64>(),
            Just(u64::MAX),
            (0u32..64).prop_map(|k| u64::MAX >> k),
            (0u32..64).prop_map(|k| u64::MAX << k),
            any::<u64>().prop_map(|x| x | 0xffff_ffff_0000_0000)
        ]
    }

    fn dense_block() -> impl Strategy<Value = Block> {
        (dense_u64(), dense_u64()).prop_map(|(lo, hi)| Block::from_u64s(lo, hi))
    }

    type ClmulFn = fn(Block, Block) -> (u128, u128);
    type MulFn = fn(Block, Block) -> Block;
    type InnerProductFn = fn(&[Block], &[Block]) -> Block;

    /// Every implementation of clmul128 available on this machine.
    fn clmul_impls() -> Vec<(&'static str, ClmulFn)> {
        let mut v: Vec<(&'static str, ClmulFn)> = vec![("portable", portable::clmul128)];
        #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
        if pclmul::available() {
            // SAFETY: only registered when PCLMULQDQ is present.
            v.push(("pclmul", |a, b| unsafe { pclmul::clmul128(a, b) }));
        }
        v
    }

    fn mul_impls() -> Vec<(&'static str, MulFn)> {
        let mut v: Vec<(&'static str, MulFn)> = vec![("portable", portable::mul), ("public", gf128_mul)];
        #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
        if pclmul::available() {
            // SAFETY: only registered when PCLMULQDQ is present.
            v.push(("pclmul", |a, b| unsafe { pclmul::mul(a, b) }));
        }
        v
    }

    fn inner_product_impls() -> Vec<(&'static str, InnerProductFn)> {
        let mut v: Vec<(&'static str, InnerProductFn)> =
            vec![("portable", portable::inner_product), ("public", |a, b| gf128_inner_product(a, b).unwrap())];
        #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
        if pclmul::available() {
            // SAFETY: only registered when PCLMULQDQ is present.
            v.push(("pclmul", |a, b| unsafe { pclmul::inner_product(a, b) }));
        }
        v
    }

    #[test]
    fn references_agree_with_each_other() {
        // The two references are independent; reducing one must give the other.
        let a = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let c = 0xffff_0000_ffff_0000_1234_5678_9abc_def0u128;
        let (lo, hi) = ref_clmul(a, c);
        assert_eq!(reduce(b(lo), b(hi)).to_u128(), ref_mul(a, c));
    }

    #[test]
    fn clmul64_lo_extremes() {
        for (x, y) in [
            (u64::MAX, u64::MAX),
            (0, u64::MAX),
            (1, u64::MAX),
            (u64::MAX, 1 << 63),
            (M0, M0),
            (M3, M3),
            (M0 | M2, M1 | M3),
        ] {
            let full = ref_clmul64(x, y);
            assert_eq!(clmul64_lo(x, y), full as u64, "lo {x:x} {y:x}");
            assert_eq!(
                hi_from_reversed(clmul64_lo(x.reverse_bits(), y.reverse_bits())),
                (full >> 64) as u64,
                "hi {x:x} {y:x}"
            );
        }
    }

    #[test]
    fn one_is_the_identity_and_zero_annihilates() {
        for (name, mul) in mul_impls() {
            for a in [b(0), b(1), b(u128::MAX), b(0xdead_beef << 77)] {
                assert_eq!(mul(a, b(1)), a, "{name}");
                assert_eq!(mul(b(1), a), a, "{name}");
                assert_eq!(mul(a, b(0)), b(0), "{name}");
            }
        }
    }

    #[test]
    fn x_to_the_128_is_the_reduction_polynomial_tail() {
        for (name, mul) in mul_impls() {
            assert_eq!(mul(x_pow(1), x_pow(127)), b(R), "{name}");
            assert_eq!(mul(x_pow(64), x_pow(64)), b(R), "{name}");
            // x^254 = x^126 · x^128 ≡ x^126 (x^7 + x^2 + x + 1), and x^133 etc. fold again.
            assert_eq!(mul(x_pow(127), x_pow(127)), b(ref_mul(1 << 127, 1 << 127)), "{name}");
        }
        for (name, clmul) in clmul_impls() {
            assert_eq!(clmul(x_pow(1), x_pow(127)), (0, 1), "{name}");
            assert_eq!(clmul(x_pow(127), x_pow(127)), (0, 1 << 126), "{name}");
        }
    }

    #[test]
    fn reduce_handles_every_high_bit() {
        for k in 0..128 {
            let hi = 1u128 << k;
            let want = ref_mul(1 << 127, ref_mul(2, hi));
            assert_eq!(reduce(b(0), b(hi)).to_u128(), want, "x^(128+{k})");
        }
        assert_eq!(reduce(b(0x1234), b(0)).to_u128(), 0x1234);
    }

    #[test]
    fn fermat_inverse() {
        // In a field of order 2^128, a^(2^128 - 2) is a's inverse; this holds only if the
        // multiplication really is that of a field (it would fail for a reducible modulus or a
        // wrong reduction), independently of the reference implementations.
        for a in [b(2), b(3), b(0x87), b(0x0123_4567_89ab_cdef_0f1e_2d3c_4b5a_6978)] {
            let inv = pow(a, u128::MAX - 1);
            assert_eq!(gf128_mul(a, inv), b(1));
        }
    }

    #[test]
    fn length_mismatches_are_errors() {
        let x = [b(1); 3];
        let mut out2 = [b(0); 2];
        let mut out3 = [b(0); 3];
        assert!(matches!(
            gf128_mul_many(&x, &x[..2], &mut out3),
            Err(KernelError::LengthMismatch { left: 3, right: 2, .. })
        ));
        assert!(matches!(
            gf128_mul_many(&x, &x, &mut out2),
            Err(KernelError::LengthMismatch { left: 3, right: 2, .. })
        ));
        assert!(matches!(gf128_inner_product(&x, &x[..1]), Err(KernelError::LengthMismatch { left: 3, right: 1, .. })));
        assert_eq!(gf128_inner_product(&[], &[]), Ok(b(0)));
        assert!(matches!(
            Gf128Coefficients::new(&x).inner_product(&x[..2]),
            Err(KernelError::LengthMismatch { left: 3, right: 2, .. })
        ));
        assert_eq!(Gf128Coefficients::new(&[]).inner_product(&[]), Ok(b(0)));
        assert_eq!(gf128_mul_many(&[], &[], &mut []), Ok(()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn clmul64_matches_reference(x in dense_u64(), y in dense_u64()) {
            let full = ref_clmul64(x, y);
            prop_assert_eq!(clmul64_lo(x, y), full as u64);
            prop_assert_eq!(hi_from_reversed(clmul64_lo(x.reverse_bits(), y.reverse_bits())), (full >> 64) as u64);
        }

        #[test]
        fn clmul128_matches_reference(a in dense_block(), c in dense_block()) {
            let want = ref_clmul(a.to_u128(), c.to_u128());
            for (name, clmul) in clmul_impls() {
                prop_assert_eq!(clmul(a, c), want, "{}", name);
            }
            let (lo, hi) = clmul128(a, c);
            prop_assert_eq!((lo.to_u128(), hi.to_u128()), want);
            prop_assert_eq!(hi.to_u128() >> 127, 0);
        }

        #[test]
        fn mul_matches_reference(a in dense_block(), c in dense_block()) {
            let want = b(ref_mul(a.to_u128(), c.to_u128()));
            for (name, mul) in mul_impls() {
                prop_assert_eq!(mul(a, c), want, "{}", name);
            }
            let (lo, hi) = clmul128(a, c);
            prop_assert_eq!(reduce(lo, hi), want);
        }

        #[test]
        fn reduce_matches_reference(lo in any::<u128>(), hi in any::<u128>()) {
            // lo + hi·x^128 = lo + (hi·x) · x^127 in the field.
            let want = lo ^ ref_mul(ref_mul(hi, 2), 1 << 127);
            prop_assert_eq!(reduce(b(lo), b(hi)).to_u128(), want);
        }

        #[test]
        fn field_laws(a in arb_block(), c in arb_block(), d in arb_block()) {
            for (name, mul) in mul_impls() {
                prop_assert_eq!(mul(a, c), mul(c, a), "commutative {}", name);
                prop_assert_eq!(mul(a, c ^ d), mul(a, c) ^ mul(a, d), "distributive {}", name);
                prop_assert_eq!(mul(mul(a, c), d), mul(a, mul(c, d)), "associative {}", name);
            }
        }

        #[test]
        fn inner_product_is_sum_of_products(pairs in prop::collection::vec((dense_block(), dense_block()), 0..40)) {
            let (a, c): (Vec<Block>, Vec<Block>) = pairs.into_iter().unzip();
            let want = a.iter().zip(&c).fold(0u128, |s, (x, y)| s ^ ref_mul(x.to_u128(), y.to_u128()));
            for (name, ip) in inner_product_impls() {
                prop_assert_eq!(ip(&a, &c), b(want), "{}", name);
            }
            // Prepared coefficients, on this CPU's path and on the portable one (Wasm's).
            prop_assert_eq!(Gf128Coefficients::new(&a).inner_product(&c), Ok(b(want)));
            let prepared: Vec<Prepared> = a.iter().map(|&x| Prepared::of(x)).collect();
            prop_assert_eq!(portable::inner_product_prepared(&prepared, &c), b(want));
        }

        #[test]
        fn mul_many_is_elementwise(pairs in prop::collection::vec((arb_block(), arb_block()), 0..40)) {
            let (a, c): (Vec<Block>, Vec<Block>) = pairs.into_iter().unzip();
            let want: Vec<Block> = a.iter().zip(&c).map(|(x, y)| b(ref_mul(x.to_u128(), y.to_u128()))).collect();
            let mut out = vec![b(0); a.len()];
            gf128_mul_many(&a, &c, &mut out).unwrap();
            prop_assert_eq!(&out, &want);
            let mut out = vec![b(0); a.len()];
            portable::mul_many(&a, &c, &mut out);
            prop_assert_eq!(&out, &want);
            #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
            if pclmul::available() {
                let mut out = vec![b(0); a.len()];
                // SAFETY: PCLMULQDQ was just detected.
                unsafe { pclmul::mul_many(&a, &c, &mut out) };
                prop_assert_eq!(&out, &want);
            }
        }
    }
}
