//! The roofline's counts against the protocol's structure: run with
//! `cargo test --release -p webmpc-ot --features op-count --test op_counts`. The roofline bench
//! divides these counts by the primitives' rates, so they must be what the code does.
#![cfg(feature = "op-count")]

use webmpc_core::count::{measure, Op};
use webmpc_ot::kos::DEFAULT_CHUNK;
use webmpc_ot::local::{Kind, LocalPair};

/// Per KOS chunk of `len` random OTs (both parties): the base PRGs expand 3 rows of `w` blocks
/// per base OT (the receiver two, the sender one), the challenge PRG `w − 1` blocks under one
/// fresh key, TMMO hashing 2 AES per hash (receiver one hash, sender two); the check multiplies
/// `w − 1` blocks per row on both sides plus the receiver's choice row; each side transposes
/// `w` 128 × 128 blocks.
fn per_chunk(len: u64) -> (u64, u64, u64, u64) {
    let m = len.div_ceil(128) * 128 + 128;
    let w = m / 128;
    let aes = 3 * 128 * w + (w - 1) + 6 * len;
    let keys = 1;
    let gf = (128 + 1 + 128) * (w - 1);
    let transpose = 2 * w;
    (aes, keys, gf, transpose)
}

#[test]
fn random_ot_counts_follow_the_protocol() {
    let mut pair = LocalPair::setup().unwrap();
    let n = 2 * DEFAULT_CHUNK + 1000;
    let (_, c) = measure(|| pair.run(Kind::Random, n).unwrap());
    let mut want = (0, 0, 0, 0);
    for len in [DEFAULT_CHUNK as u64, DEFAULT_CHUNK as u64, 1000] {
        let (a, k, g, t) = per_chunk(len);
        want = (want.0 + a, want.1 + k, want.2 + g, want.3 + t);
    }
    // A PRG read that ends inside a block fills its 64-block buffer, whose rest later reads
    // take: the 384 base PRGs (and the bench's own input PRG) may have read up to 64 blocks
    // ahead when a run ends. Beyond that read-ahead the counts must match the protocol.
    let aes = c.get(Op::AesBlock);
    let read_ahead = 64 * (3 * 128 + 1);
    assert!(aes >= want.0 && aes - want.0 <= read_ahead, "AES blocks {aes}, protocol {}", want.0);
    assert_eq!(c.get(Op::Gf128Mul), want.2);
    assert_eq!(c.get(Op::TransposeBlock), want.3);
    assert!(c.get(Op::AesKeyExpansion) >= want.1);
}

#[test]
fn base_ot_counts_follow_masny_rindal() {
    let (_, c) = measure(|| LocalPair::setup().unwrap());
    // Sender: two variable-base products per OT; receiver: one product with A's table per OT.
    assert_eq!(c.get(Op::CurveVarMul), 2 * 128);
    assert_eq!(c.get(Op::CurveFixedMul), 1 + 2 * 128);
    assert_eq!(c.get(Op::CurveTable), 1);
    // Hash to the group: one per OT on the receiver, two on the sender; plus the receiver's
    // uniform point t per OT.
    assert_eq!(c.get(Op::CurveFromUniform), 4 * 128);
    assert_eq!(c.get(Op::CurveDecompress), 2 * 128 + 1);
}
