//! Operation counters for the roofline benchmark (`npm run bench -- roofline`).
//!
//! With the `op-count` feature, the kernels count what they do — AES blocks encrypted, AES keys
//! expanded, GF(2^128) multiplications, bits transposed — and protocol crates count what they do
//! through [`add`] (curve operations, SHA-256 compressions). The roofline bench runs each
//! protocol's unit of work once in a counting build and divides by the primitives' measured
//! throughputs, so the counts come from the code, not from a formula on paper.
//!
//! Without the feature (every shipped build) [`add`] is an empty inline function and
//! [`snapshot`] returns zeros: no state, no cost. With it, the counters are **thread-local**, so
//! instances on different threads (workers) never see each other's counts, and nothing here is
//! shared mutable state between protocol instances on one thread either: only the bench reads it.

/// A primitive operation the roofline accounts for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// One 16-byte block through AES-128 (any key: fixed-key hashing and PRG alike).
    AesBlock,
    /// One AES-128 key expansion (a PRG seed or a keyed cipher).
    AesKeyExpansion,
    /// One GF(2^128) multiplication (in an inner product or on its own).
    Gf128Mul,
    /// 128 × 128 bits of a bit-matrix transposition (one block column of a KOS chunk).
    TransposeBlock,
    /// One SHA-256 or SHA-512 compression-function call (64- or 128-byte block).
    ShaBlock,
    /// A variable-base scalar multiplication on ristretto255.
    CurveVarMul,
    /// A fixed-base scalar multiplication (precomputed table: the basepoint, or a point's table).
    CurveFixedMul,
    /// A hash-to-group or uniform map (two Elligator maps and an addition).
    CurveFromUniform,
    /// A point decompression (one inverse square root).
    CurveDecompress,
    /// A point compression on its own (one inverse square root).
    CurveCompress,
    /// A point compressed in a batch (`double_and_compress_batch`: no square root, one shared
    /// inversion), counted per point.
    CurveCompressBatch,
    /// A precomputed table for a variable point (`RistrettoBasepointTable::create`).
    CurveTable,
    /// One multiplication in MASCOT's prime field F_p, p = 2^128 − 173 (`webmpc_spdz::Fp`).
    FpMul,
}

/// Every op, in the order [`OpCounts::get`] indexes them.
pub const OPS: [Op; 13] = [
    Op::AesBlock,
    Op::AesKeyExpansion,
    Op::Gf128Mul,
    Op::TransposeBlock,
    Op::ShaBlock,
    Op::CurveVarMul,
    Op::CurveFixedMul,
    Op::CurveFromUniform,
    Op::CurveDecompress,
    Op::CurveCompress,
    Op::CurveCompressBatch,
    Op::CurveTable,
    Op::FpMul,
];

impl Op {
    /// A stable name (the roofline's JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            Op::AesBlock => "aes_block",
            Op::AesKeyExpansion => "aes_key_expansion",
            Op::Gf128Mul => "gf128_mul",
            Op::TransposeBlock => "transpose_128x128",
            Op::ShaBlock => "sha2_block",
            Op::CurveVarMul => "curve_var_mul",
            Op::CurveFixedMul => "curve_fixed_mul",
            Op::CurveFromUniform => "curve_from_uniform",
            Op::CurveDecompress => "curve_decompress",
            Op::CurveCompress => "curve_compress",
            Op::CurveCompressBatch => "curve_compress_batch",
            Op::CurveTable => "curve_table",
            Op::FpMul => "fp_mul",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Counts of every [`Op`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts(pub [u64; OPS.len()]);

impl OpCounts {
    /// The count of `op`.
    pub fn get(&self, op: Op) -> u64 {
        self.0[op.index()]
    }

    /// `self − earlier`, op by op.
    pub fn since(&self, earlier: &OpCounts) -> OpCounts {
        OpCounts(core::array::from_fn(|i| self.0[i] - earlier.0[i]))
    }

    /// `(name, count)` for every op with a nonzero count.
    pub fn nonzero(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        OPS.iter().filter(|op| self.get(**op) > 0).map(|op| (op.name(), self.get(*op)))
    }
}

/// Whether this build counts (the `op-count` feature).
pub const ENABLED: bool = cfg!(feature = "op-count");

#[cfg(feature = "op-count")]
std::thread_local! {
    static COUNTS: core::cell::Cell<OpCounts> = const { core::cell::Cell::new(OpCounts([0; OPS.len()])) };
}

/// Adds `n` to the count of `op` (nothing without `op-count`).
#[inline(always)]
pub fn add(op: Op, n: u64) {
    #[cfg(feature = "op-count")]
    COUNTS.with(|c| {
        let mut v = c.get();
        v.0[op.index()] += n;
        c.set(v);
    });
    #[cfg(not(feature = "op-count"))]
    let _ = (op, n);
}

/// SHA-256 compressions of a `len`-byte message hashed in one go (with its padding: the 0x80
/// byte and the 8-byte length).
pub const fn sha256_blocks(len: usize) -> u64 {
    (len as u64 + 9).div_ceil(64)
}

/// This thread's counts so far (zeros without `op-count`).
pub fn snapshot() -> OpCounts {
    #[cfg(feature = "op-count")]
    return COUNTS.with(|c| c.get());
    #[cfg(not(feature = "op-count"))]
    OpCounts::default()
}

/// The counts of what `f` does on this thread.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, OpCounts) {
    let before = snapshot();
    let out = f();
    (out, snapshot().since(&before))
}

#[cfg(all(test, feature = "op-count"))]
mod tests {
    use super::*;
    use crate::aes::Aes128;
    use crate::prg::Prg;
    use crate::Block;

    #[test]
    fn kernels_count_what_they_do() {
        let (_, c) = measure(|| {
            let aes = Aes128::new(Block::from_u128(1));
            let mut b = [Block::ZERO; 13];
            aes.encrypt_blocks(&mut b);
        });
        assert_eq!(c.get(Op::AesBlock), 13);
        assert_eq!(c.get(Op::AesKeyExpansion), 1);
        // A PRG draws whole 64-block buffers for a ragged tail, and nothing more.
        let mut prg = Prg::from_seed(Block::ZERO);
        let (_, c) = measure(|| {
            let mut out = [0u8; 16 * 100 + 3];
            prg.fill_bytes(&mut out);
        });
        assert_eq!(c.get(Op::AesBlock), 100 + 64);
        let (_, c) = measure(|| crate::hash::tccr_many_counter(&[Block::ZERO; 10], 0, &mut [Block::ZERO; 10]).unwrap());
        assert_eq!(c.get(Op::AesBlock), 20);
        let (_, c) = measure(|| crate::gf128::gf128_inner_product(&[Block::ZERO; 7], &[Block::ZERO; 7]).unwrap());
        assert_eq!(c.get(Op::Gf128Mul), 7);
    }
}
