//! Bit-matrix transposition between the two shapes OT extension needs.
//!
//! A "128 × n" matrix is 128 rows of `n` bits, each row `n / 8` bytes, rows back to back. Bit `j`
//! of a row is bit `j % 8` of byte `j / 8` (LSB first). Its transpose is `n` rows of 128 bits,
//! i.e. `n` [`Block`](crate::Block)s with the same bit convention: output row `j`, bit `i` equals
//! input row `i`, bit `j`.
//!
//! The work is done in 128 × 128-bit tiles. A tile is a 16 × 16 grid of 8 × 8-bit sub-blocks
//! (sub-block `(r, c)` is byte `c` of rows `8r .. 8r + 8`); transposing the tile means
//! transposing every sub-block in place *and* transposing the grid. The first is three rounds of
//! "swap-move" on whole 128-bit rows (the masks stop bits from crossing bytes, so all sixteen
//! sub-blocks of a row band are transposed at once), the second is eight independent 16 × 16
//! byte transposes done with byte interleaves. Both are fixed sequences of shifts, masks and
//! shuffles: nothing depends on the data.
//!
//! The tile is written once over [`crate::simd::Lane`] (Wasm SIMD128, SSE2, portable), so native
//! tests exercise the exact algorithm the Wasm build runs.

use crate::simd::{transpose_8x8_bits, BestLane, Lane};
use crate::KernelError;

/// Bytes in one 128-bit row of a tile.
const ROW: usize = 16;
/// Bytes in a whole 128 × 128-bit tile.
const TILE: usize = 128 * ROW;

/// Transposes a 16 × 16 byte matrix held as 16 rows.
///
/// One round maps the element at (row `s·8 + k`, column `h·8 + m`) to (row `2k + h`, column
/// `2m + s`): read as an 8-bit address `row:col`, that is a rotation left by one bit. Four
/// rounds rotate by four, which swaps row and column.
#[inline(always)]
fn transpose_16x16_bytes<L: Lane>(v: &mut [L; 16]) {
    for _ in 0..4 {
        let w = *v;
        for k in 0..8 {
            v[2 * k] = w[k].zip_lo(w[k + 8]);
            v[2 * k + 1] = w[k].zip_hi(w[k + 8]);
        }
    }
}

/// Transposes one 128 × 128-bit tile. Row `i` of the tile is `src[i * src_stride ..][..16]`;
/// row `j` of the result goes to `dst[j * dst_stride ..][..16]`. Callers guarantee both slices
/// cover 128 rows. Every address depends only on the (public) strides.
#[inline(always)]
fn transpose_tile<L: Lane>(src: &[u8], src_stride: usize, dst: &mut [u8], dst_stride: usize) {
    // groups[ib][jj] is tile row 8·ib + jj.
    let mut groups = [[L::splat(0); 8]; 16];
    for (ib, g) in groups.iter_mut().enumerate() {
        *g = core::array::from_fn(|jj| L::load(row(src, (8 * ib + jj) * src_stride)));
        transpose_8x8_bits(g);
    }
    // Byte `jb` of row 8·ib + jj now belongs at byte `ib` of output row 8·jb + jj: for each
    // `jj`, a 16 × 16 byte transpose of the rows 8·ib + jj.
    let bands: [[L; 16]; 8] = core::array::from_fn(|jj| core::array::from_fn(|ib| groups[ib][jj]));
    for (jj, mut band) in bands.into_iter().enumerate() {
        transpose_16x16_bytes(&mut band);
        for (jb, v) in band.iter().enumerate() {
            v.store(row_mut(dst, (8 * jb + jj) * dst_stride));
        }
    }
}

#[inline(always)]
fn row(s: &[u8], at: usize) -> &[u8; 16] {
    s[at..at + ROW].try_into().expect("tile rows are in bounds")
}

#[inline(always)]
fn row_mut(s: &mut [u8], at: usize) -> &mut [u8; 16] {
    (&mut s[at..at + ROW]).try_into().expect("tile rows are in bounds")
}

/// 128 × n → n × 128 on validated arguments (`n % 8 == 0`, both buffers `16 n` bytes).
fn t128xn<L: Lane>(input: &[u8], n: usize, out: &mut [u8]) {
    let stride = n / 8;
    let full = n / 128;
    for c in 0..full {
        // Tile c is byte columns 16c .. 16c + 16 of every input row, and output rows 128c.. .
        transpose_tile::<L>(&input[ROW * c..], stride, &mut out[TILE * c..TILE * (c + 1)], ROW);
    }
    let tail = stride - ROW * full;
    if tail != 0 {
        // Fewer than 16 byte columns remain: zero-pad them to a tile and keep the first
        // 8 · tail output rows.
        let mut buf = [0u8; TILE];
        for i in 0..128 {
            let at = i * stride + ROW * full;
            buf[i * ROW..i * ROW + tail].copy_from_slice(&input[at..at + tail]);
        }
        let mut res = [0u8; TILE];
        transpose_tile::<L>(&buf, ROW, &mut res, ROW);
        out[TILE * full..].copy_from_slice(&res[..8 * tail * ROW]);
    }
}

/// n × 128 → 128 × n on validated arguments. The tile transpose is its own inverse, so this is
/// the same kernel with the strides swapped.
fn tnx128<L: Lane>(input: &[u8], n: usize, out: &mut [u8]) {
    let stride = n / 8;
    let full = n / 128;
    for c in 0..full {
        transpose_tile::<L>(&input[TILE * c..TILE * (c + 1)], ROW, &mut out[ROW * c..], stride);
    }
    let tail = stride - ROW * full;
    if tail != 0 {
        // 8 · tail input rows remain: zero-pad them to 128 rows, then each output row takes
        // only its first `tail` bytes.
        let mut buf = [0u8; TILE];
        buf[..8 * tail * ROW].copy_from_slice(&input[TILE * full..]);
        let mut res = [0u8; TILE];
        transpose_tile::<L>(&buf, ROW, &mut res, ROW);
        for i in 0..128 {
            let at = i * stride + ROW * full;
            out[at..at + tail].copy_from_slice(&res[i * ROW..i * ROW + tail]);
        }
    }
}

/// The preconditions both directions share. Once it returns `Ok`, `n` is a multiple of 8 and
/// both buffers hold exactly `16 n` bytes, which is all the kernels' indexing relies on.
fn check(what: &'static str, input: &[u8], n: usize, out: &[u8]) -> Result<(), KernelError> {
    if n % 8 != 0 {
        return Err(KernelError::InvalidDimension { what, detail: alloc::format!("n = {n} is not a multiple of 8") });
    }
    let bytes = n
        .checked_mul(ROW)
        .ok_or_else(|| KernelError::InvalidDimension { what, detail: alloc::format!("n = {n} is too large") })?;
    if input.len() != bytes {
        return Err(KernelError::WrongSize { what, expected: bytes, got: input.len() });
    }
    if out.len() != bytes {
        return Err(KernelError::WrongSize { what, expected: bytes, got: out.len() });
    }
    Ok(())
}

/// Transposes a 128 × n bit matrix (128 rows of `n / 8` bytes) into n rows of 16 bytes.
///
/// `n` must be a multiple of 8 (0 is allowed); `input` and `out` must both be `16 · n` bytes.
pub fn transpose_128xn(input: &[u8], n: usize, out: &mut [u8]) -> Result<(), KernelError> {
    check("transpose_128xn", input, n, out)?;
    crate::count::add(crate::count::Op::TransposeBlock, n.div_ceil(128) as u64);
    t128xn::<BestLane>(input, n, out);
    Ok(())
}

/// Transposes n rows of 16 bytes into a 128 × n bit matrix (128 rows of `n / 8` bytes); the
/// inverse of [`transpose_128xn`].
///
/// `n` must be a multiple of 8 (0 is allowed); `input` and `out` must both be `16 · n` bytes.
pub fn transpose_nx128(input: &[u8], n: usize, out: &mut [u8]) -> Result<(), KernelError> {
    check("transpose_nx128", input, n, out)?;
    crate::count::add(crate::count::Op::TransposeBlock, n.div_ceil(128) as u64);
    tnx128::<BestLane>(input, n, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bit(bytes: &[u8], k: usize) -> u8 {
        (bytes[k / 8] >> (k % 8)) & 1
    }

    /// Bit by bit, straight from the definition.
    fn naive_128xn(input: &[u8], n: usize) -> Vec<u8> {
        let mut out = vec![0u8; 16 * n];
        let stride = n / 8;
        for i in 0..128 {
            for j in 0..n {
                out[16 * j + i / 8] |= bit(&input[i * stride..], j) << (i % 8);
            }
        }
        out
    }

    fn naive_nx128(input: &[u8], n: usize) -> Vec<u8> {
        let mut out = vec![0u8; 16 * n];
        let stride = n / 8;
        for j in 0..n {
            for i in 0..128 {
                out[i * stride + j / 8] |= bit(&input[16 * j..], i) << (j % 8);
            }
        }
        out
    }

    /// Deterministic filler (splitmix64) so failures reproduce without a seed.
    fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (z ^ (z >> 31)) as u8
            })
            .collect()
    }

    type Kernel = fn(&[u8], usize, &mut [u8]);

    /// (name, 128×n kernel, n×128 kernel) for every lane this machine can run.
    fn kernels() -> Vec<(&'static str, Kernel, Kernel)> {
        let mut v: Vec<(&'static str, Kernel, Kernel)> = vec![
            ("portable", t128xn::<crate::simd::PortableLane>, tnx128::<crate::simd::PortableLane>),
            ("public", |i, n, o| transpose_128xn(i, n, o).unwrap(), |i, n, o| transpose_nx128(i, n, o).unwrap()),
        ];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        v.push(("sse2", t128xn::<crate::simd::sse2::Sse2Lane>, tnx128::<crate::simd::sse2::Sse2Lane>));
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        v.push(("wasm", t128xn::<crate::simd::wasm::WasmLane>, tnx128::<crate::simd::wasm::WasmLane>));
        v
    }

    const SIZES: [usize; 12] = [0, 8, 16, 120, 128, 136, 248, 256, 384, 1000, 1024, 4096];

    #[test]
    fn matches_naive_on_random_data() {
        for (name, fwd, inv) in kernels() {
            for (s, &n) in SIZES.iter().enumerate() {
                let input = pseudo_random(16 * n, s as u64);
                let mut out = vec![0xa5u8; 16 * n];
                fwd(&input, n, &mut out);
                assert!(out == naive_128xn(&input, n), "{name} 128xn n={n}");
                let mut back = vec![0x5au8; 16 * n];
                inv(&input, n, &mut back);
                assert!(back == naive_nx128(&input, n), "{name} nx128 n={n}");
            }
        }
    }

    #[test]
    fn single_bits_land_where_they_should() {
        // The random-data tests already cover the mapping; this one makes a failure name the
        // exact bit that went astray.
        let n = 136;
        for (name, fwd, _) in kernels() {
            for i in (0..128).step_by(7) {
                for j in (0..n).step_by(5) {
                    let mut input = vec![0u8; 16 * n];
                    input[i * (n / 8) + j / 8] = 1 << (j % 8);
                    let mut out = vec![0u8; 16 * n];
                    fwd(&input, n, &mut out);
                    let mut want = vec![0u8; 16 * n];
                    want[16 * j + i / 8] = 1 << (i % 8);
                    assert!(out == want, "{name} bit ({i}, {j})");
                }
            }
        }
    }

    #[test]
    fn square_transpose_is_an_involution() {
        for (name, fwd, inv) in kernels() {
            let x = pseudo_random(TILE, 99);
            let mut once = vec![0u8; TILE];
            let mut twice = vec![0u8; TILE];
            fwd(&x, 128, &mut once);
            fwd(&once, 128, &mut twice);
            assert!(twice == x, "{name}");
            // For n = 128 both directions are the same map.
            let mut other = vec![0u8; TILE];
            inv(&x, 128, &mut other);
            assert!(other == once, "{name}");
        }
    }

    #[test]
    fn bad_dimensions_are_errors() {
        let mut out = vec![0u8; 16 * 16];
        let input = vec![0u8; 16 * 16];
        for f in [transpose_128xn as fn(&[u8], usize, &mut [u8]) -> Result<(), KernelError>, transpose_nx128] {
            assert!(matches!(f(&input, 12, &mut out), Err(KernelError::InvalidDimension { .. })));
            assert!(matches!(f(&input, 1, &mut out), Err(KernelError::InvalidDimension { .. })));
            assert!(matches!(f(&input, 8, &mut out), Err(KernelError::WrongSize { expected: 128, got: 256, .. })));
            assert!(matches!(
                f(&input[..255], 16, &mut out),
                Err(KernelError::WrongSize { expected: 256, got: 255, .. })
            ));
            assert!(matches!(
                f(&input, 16, &mut out[..250]),
                Err(KernelError::WrongSize { expected: 256, got: 250, .. })
            ));
            assert!(matches!(f(&input, usize::MAX & !7, &mut out), Err(KernelError::InvalidDimension { .. })));
            assert!(matches!(f(&input, 1 << 56, &mut out), Err(KernelError::WrongSize { .. })));
            assert_eq!(f(&[], 0, &mut []), Ok(()));
            assert_eq!(f(&input, 16, &mut out), Ok(()));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn round_trips(blocks in 0usize..70, seed in any::<u64>()) {
            let n = 8 * blocks;
            let x = pseudo_random(16 * n, seed);
            for (name, fwd, inv) in kernels() {
                let mut t = vec![0u8; 16 * n];
                let mut back = vec![0u8; 16 * n];
                fwd(&x, n, &mut t);
                inv(&t, n, &mut back);
                prop_assert!(back == x, "{} 128xn then nx128, n={}", name, n);
                inv(&x, n, &mut t);
                fwd(&t, n, &mut back);
                prop_assert!(back == x, "{} nx128 then 128xn, n={}", name, n);
            }
        }

        #[test]
        fn matches_naive(blocks in 0usize..50, data in prop::collection::vec(any::<u8>(), 16 * 8 * 50)) {
            let n = 8 * blocks;
            let x = &data[..16 * n];
            let want_fwd = naive_128xn(x, n);
            let want_inv = naive_nx128(x, n);
            for (name, fwd, inv) in kernels() {
                let mut out = vec![0u8; 16 * n];
                fwd(x, n, &mut out);
                prop_assert!(out == want_fwd, "{} 128xn n={}", name, n);
                inv(x, n, &mut out);
                prop_assert!(out == want_inv, "{} nx128 n={}", name, n);
            }
        }

        #[test]
        fn transpose_is_linear(seed in any::<u64>()) {
            // XOR of transposes is the transpose of the XOR: catches any lane that mixes bits
            // nonlinearly (e.g. an arithmetic instead of logical shift).
            let n = 264;
            let a = pseudo_random(16 * n, seed);
            let c = pseudo_random(16 * n, !seed);
            let ac: Vec<u8> = a.iter().zip(&c).map(|(x, y)| x ^ y).collect();
            for (name, fwd, _) in kernels() {
                let (mut ta, mut tc, mut tac) = (vec![0u8; 16 * n], vec![0u8; 16 * n], vec![0u8; 16 * n]);
                fwd(&a, n, &mut ta);
                fwd(&c, n, &mut tc);
                fwd(&ac, n, &mut tac);
                let sum: Vec<u8> = ta.iter().zip(&tc).map(|(x, y)| x ^ y).collect();
                prop_assert!(sum == tac, "{}", name);
            }
        }
    }
}
