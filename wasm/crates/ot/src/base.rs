//! Base OT: Masny–Rindal "endemic" OT (CCS 2019, eprint 2019/706) on ristretto255.
//!
//! Why this protocol: it is two independent messages (the sender's one group element and the
//! receiver's two per OT), so a batch of 128 costs one round trip; its malicious security is
//! proven in the random-oracle model for *endemic* OT, where a corrupt party may choose its own
//! outputs. That is exactly what OT extension needs from its base OTs (they only seed PRGs), and
//! it avoids the known problems of Chou–Orlandi "simplest OT" (not UC-extractable as published).
//! ristretto255 (curve25519-dalek) gives a prime-order group with constant-time arithmetic and a
//! hash-to-group map, so no cofactor handling is needed.
//!
//! For OT i of a batch with choice c, and H a hash to the group bound to (session, i):
//!
//! ```text
//! sender:   a ← Z_q,  A = a·G                                   → A
//! receiver: b ← Z_q,  B = b·G,  t ← uniform point,
//!           r_{1-c} = t,  r_c = B − H(t)                          → (r_0, r_1)
//! sender:   k_j = KDF(a · (r_j + H(r_{1-j})))   for j ∈ {0, 1}
//! receiver: k_c = KDF(b · A)                    (= KDF(a·B), since r_c + H(r_{1-c}) = B)
//! ```
//!
//! Both `r`s are uniform whatever c is, so the sender learns nothing about c; the receiver
//! cannot know the discrete log of both `r_j + H(r_{1-j})`. The KDF hashes the session id, the
//! OT index and the whole transcript (A, r_0, r_1), so keys never repeat across OTs or sessions.
//! The receiver picks c with a constant-time select.

use crate::{OtError, SessionId};
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use sha2::{Digest, Sha256, Sha512};
use subtle::{Choice, ConditionallySelectable};
use webmpc_core::channel::{Channel, PartyId};
use webmpc_core::count::{self, Op};
use webmpc_core::{random, Block};
use zeroize_shim::{wipe_compressed, wipe_points, wipe_scalars};

/// Compression-function calls of SHA-256 (`block` 64) or SHA-512 (`block` 128) on `len` bytes,
/// padding included: what the roofline counts for a hash (see `webmpc_core::count`).
fn sha_blocks(len: usize, block: usize) -> u64 {
    let length_field = block / 8;
    (len + 1 + length_field).div_ceil(block) as u64
}

/// Most base OTs one call runs (OT extension needs 128); bounds the receiver's message size.
pub const MAX_BASE_OTS: usize = 1024;

const POINT: usize = 32;

/// Uniform scalar from 64 CSPRNG bytes (reduction of 512 bits leaves negligible bias).
fn random_scalar() -> Result<Scalar, OtError> {
    let mut wide = [0u8; 64];
    random::fill(&mut wide)?;
    let s = Scalar::from_bytes_mod_order_wide(&wide);
    wide.fill(0);
    Ok(s)
}

/// Uniform group element, via the Elligator-based map of 64 CSPRNG bytes.
fn random_point() -> Result<RistrettoPoint, OtError> {
    let mut wide = [0u8; 64];
    random::fill(&mut wide)?;
    count::add(Op::CurveFromUniform, 1);
    Ok(RistrettoPoint::from_uniform_bytes(&wide))
}

/// H: the hash to the group, domain-separated by session and OT index.
fn hash_to_point(sid: &SessionId, index: usize, p: &CompressedRistretto) -> RistrettoPoint {
    let mut h = Sha512::new();
    h.update(b"webmpc/ot/base/masny-rindal/h2g/v1");
    h.update(sid.0);
    h.update((index as u64).to_le_bytes());
    h.update(p.as_bytes());
    count::add(Op::ShaBlock, sha_blocks(34 + 32 + 8 + 32, 128));
    count::add(Op::CurveFromUniform, 1);
    RistrettoPoint::from_uniform_bytes(&h.finalize().into())
}

/// The key of OT `index` from the (compressed) shared point and the whole transcript of that OT.
fn derive_key(sid: &SessionId, index: usize, a: &CompressedRistretto, r: &[u8], shared: &CompressedRistretto) -> Block {
    let mut h = Sha256::new();
    h.update(b"webmpc/ot/base/masny-rindal/kdf/v1");
    h.update(sid.0);
    h.update((index as u64).to_le_bytes());
    h.update(a.as_bytes());
    h.update(r);
    h.update(shared.as_bytes());
    count::add(Op::ShaBlock, sha_blocks(34 + 32 + 8 + 32 + r.len() + 32, 64));
    let d = h.finalize();
    let mut k = [0u8; 16];
    k.copy_from_slice(&d[..16]);
    Block(k)
}

/// 1/2 mod ℓ: a shared point s·P is computed as 2·((s/2)·P), so that a whole batch of them is
/// compressed with one field inversion ([`RistrettoPoint::double_and_compress_batch`]) instead of
/// one per point; the encodings are the same.
fn half(s: &Scalar) -> Scalar {
    s * Scalar::from(2u8).invert()
}

fn decode_point(peer: PartyId, bytes: &[u8], what: &'static str) -> Result<RistrettoPoint, OtError> {
    count::add(Op::CurveDecompress, 1);
    CompressedRistretto::from_slice(bytes).ok().and_then(|c| c.decompress()).ok_or(OtError::Malformed { peer, what })
}

fn check_count(n: usize) -> Result<(), OtError> {
    if n > MAX_BASE_OTS {
        return Err(OtError::InvalidArgument(format!("{n} base OTs requested; at most {MAX_BASE_OTS} per batch")));
    }
    Ok(())
}

/// Sender side of `n` random base OTs with `peer`: returns `n` random key pairs `(k0, k1)`.
pub async fn send<C: Channel>(ch: &C, peer: PartyId, sid: &SessionId, n: usize) -> Result<Vec<[Block; 2]>, OtError> {
    check_count(n)?;
    ch.check_peer(peer)?;
    let mut a = random_scalar()?;
    let big_a = RistrettoPoint::mul_base(&a).compress();
    count::add(Op::CurveFixedMul, 1);
    count::add(Op::CurveCompress, 1);
    ch.send(peer, big_a.as_bytes().to_vec()).await?;
    let msg = ch.recv_exact(peer, 2 * POINT * n).await?;
    let mut a_half = half(&a);
    wipe_scalars(core::slice::from_mut(&mut a));
    let mut halves = Vec::with_capacity(2 * n);
    for (i, pair) in msg.chunks_exact(2 * POINT).enumerate() {
        let (r0_bytes, r1_bytes) = pair.split_at(POINT);
        let r0 = decode_point(peer, r0_bytes, "base-OT receiver point")?;
        let r1 = decode_point(peer, r1_bytes, "base-OT receiver point")?;
        let p0 = r0 + hash_to_point(sid, i, &CompressedRistretto::from_slice(r1_bytes).expect("32 bytes"));
        let p1 = r1 + hash_to_point(sid, i, &CompressedRistretto::from_slice(r0_bytes).expect("32 bytes"));
        halves.push(a_half * p0);
        halves.push(a_half * p1);
        count::add(Op::CurveVarMul, 2);
    }
    wipe_scalars(core::slice::from_mut(&mut a_half));
    // a·p = 2·((a/2)·p), compressed in one batch.
    let mut shared = RistrettoPoint::double_and_compress_batch(&halves);
    count::add(Op::CurveCompressBatch, halves.len() as u64);
    wipe_points(&mut halves);
    let keys = msg
        .chunks_exact(2 * POINT)
        .zip(shared.chunks_exact(2))
        .enumerate()
        .map(|(i, (pair, s))| [derive_key(sid, i, &big_a, pair, &s[0]), derive_key(sid, i, &big_a, pair, &s[1])])
        .collect();
    wipe_compressed(&mut shared);
    Ok(keys)
}

/// Receiver side of `choices.len()` random base OTs with `peer`: returns `k_{c_i}` per OT.
pub async fn receive<C: Channel>(
    ch: &C,
    peer: PartyId,
    sid: &SessionId,
    choices: &[bool],
) -> Result<Vec<Block>, OtError> {
    check_count(choices.len())?;
    ch.check_peer(peer)?;
    let mut secrets = Vec::with_capacity(choices.len());
    let mut msg = Vec::with_capacity(2 * POINT * choices.len());
    for (i, &c) in choices.iter().enumerate() {
        let b = random_scalar()?;
        let big_b = RistrettoPoint::mul_base(&b);
        let t = random_point()?;
        let t_compressed = t.compress();
        let rc = (big_b - hash_to_point(sid, i, &t_compressed)).compress();
        count::add(Op::CurveFixedMul, 1);
        count::add(Op::CurveCompress, 2);
        let choice = Choice::from(c as u8);
        // r_0 = c ? t : r_c and r_1 = c ? r_c : t, selected byte by byte without a branch on c.
        let (mut r0, mut r1) = ([0u8; POINT], [0u8; POINT]);
        for k in 0..POINT {
            r0[k] = u8::conditional_select(&rc.as_bytes()[k], &t_compressed.as_bytes()[k], choice);
            r1[k] = u8::conditional_select(&t_compressed.as_bytes()[k], &rc.as_bytes()[k], choice);
        }
        msg.extend_from_slice(&r0);
        msg.extend_from_slice(&r1);
        // The key is b·A = 2·((b/2)·A); keep b/2.
        secrets.push(half(&b));
    }
    ch.send(peer, msg.clone()).await?;
    let a_bytes = ch.recv_exact(peer, POINT).await?;
    let big_a = decode_point(peer, &a_bytes, "base-OT sender point")?;
    // The identity would make every receiver key a public constant.
    if big_a == RistrettoPoint::identity() {
        return Err(OtError::Malformed { peer, what: "base-OT sender point (identity)" });
    }
    let a_compressed = CompressedRistretto::from_slice(&a_bytes).expect("32 bytes");
    // Every OT multiplies the same point A: a table of its multiples (built once, like the
    // precomputed basepoint table) makes each product about three times cheaper than a generic
    // variable-base multiplication. Constant time in the scalar, like the generic one.
    let table = RistrettoBasepointTable::create(&big_a);
    let mut halves: Vec<RistrettoPoint> = secrets.iter().map(|b| &table * b).collect();
    count::add(Op::CurveTable, 1);
    count::add(Op::CurveFixedMul, halves.len() as u64);
    wipe_scalars(&mut secrets);
    let mut shared = RistrettoPoint::double_and_compress_batch(&halves);
    count::add(Op::CurveCompressBatch, halves.len() as u64);
    wipe_points(&mut halves);
    let keys = shared
        .iter()
        .zip(msg.chunks_exact(2 * POINT))
        .enumerate()
        .map(|(i, (s, pair))| derive_key(sid, i, &a_compressed, pair, s))
        .collect();
    wipe_compressed(&mut shared);
    Ok(keys)
}

mod zeroize_shim {
    use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
    use curve25519_dalek::scalar::Scalar;
    use curve25519_dalek::traits::Identity;

    /// Overwrites secret scalars before their memory is freed (the Wasm allocator also zeroes
    /// freed memory; natively this is the only scrub).
    pub fn wipe_scalars(s: &mut [Scalar]) {
        for x in s.iter_mut() {
            *x = Scalar::ZERO;
        }
        core::hint::black_box(s);
    }

    /// Overwrites secret points (shared secrets before the KDF).
    pub fn wipe_points(p: &mut [RistrettoPoint]) {
        for x in p.iter_mut() {
            *x = RistrettoPoint::identity();
        }
        core::hint::black_box(p);
    }

    /// Overwrites secret point encodings.
    pub fn wipe_compressed(p: &mut [CompressedRistretto]) {
        for x in p.iter_mut() {
            *x = CompressedRistretto([0u8; 32]);
        }
        core::hint::black_box(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::join;
    use webmpc_core::channel::memory::{pair, Tamper};

    fn run(choices: &[bool]) -> (Vec<[Block; 2]>, Vec<Block>) {
        let (a, b) = pair();
        let sid = SessionId([7; 32]);
        let (s, r) = block_on(async { join!(send(&a, 1, &sid, choices.len()), receive(&b, 0, &sid, choices)) });
        (s.unwrap(), r.unwrap())
    }

    #[test]
    fn receiver_gets_the_chosen_key_and_not_the_other() {
        let choices: Vec<bool> = (0..128).map(|i| (i * 7 + i / 3) % 2 == 1).collect();
        let (keys, got) = run(&choices);
        for ((k, g), c) in keys.iter().zip(&got).zip(&choices) {
            assert_eq!(*g, k[*c as usize]);
            assert_ne!(*g, k[!*c as usize]);
        }
        // Keys are distinct across OTs (the index is in the KDF).
        let mut all: Vec<u128> = keys.iter().flat_map(|k| [k[0].to_u128(), k[1].to_u128()]).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 256);
    }

    /// The shortcuts both sides take give the encodings of the textbook products: s·P computed
    /// as 2·((s/2)·P) and compressed in a batch, and s·A through a table of A's multiples.
    #[test]
    fn halved_batched_and_tabled_products_match_the_plain_ones() {
        let a = random_point().unwrap();
        let table = RistrettoBasepointTable::create(&a);
        let scalars: Vec<Scalar> = (0..5).map(|_| random_scalar().unwrap()).collect();
        let plain: Vec<CompressedRistretto> = scalars.iter().map(|s| (s * a).compress()).collect();
        let halves: Vec<RistrettoPoint> = scalars.iter().map(|s| half(s) * a).collect();
        assert_eq!(RistrettoPoint::double_and_compress_batch(&halves), plain);
        let tabled: Vec<RistrettoPoint> = scalars.iter().map(|s| &table * &half(s)).collect();
        assert_eq!(RistrettoPoint::double_and_compress_batch(&tabled), plain);
    }

    #[test]
    fn zero_ots_and_too_many() {
        let (keys, got) = run(&[]);
        assert!(keys.is_empty() && got.is_empty());
        let (a, _b) = pair();
        let e = block_on(send(&a, 1, &SessionId([0; 32]), MAX_BASE_OTS + 1)).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT");
    }

    #[test]
    fn sessions_give_unrelated_keys() {
        let (a, b) = pair();
        let choices = [false; 4];
        let (s1, _) = block_on(async {
            join!(send(&a, 1, &SessionId([1; 32]), 4), receive(&b, 0, &SessionId([2; 32]), &choices))
        });
        let (a2, b2) = pair();
        let (s2, r2) = block_on(async {
            join!(send(&a2, 1, &SessionId([1; 32]), 4), receive(&b2, 0, &SessionId([2; 32]), &choices))
        });
        // Mismatched session ids: the receiver's keys match neither of the sender's.
        for (k, g) in s2.unwrap().iter().zip(r2.unwrap()) {
            assert_ne!(g, k[0]);
            assert_ne!(g, k[1]);
        }
        assert_eq!(s1.unwrap().len(), 4);
    }

    #[test]
    fn malformed_points_and_lengths_are_typed_errors() {
        // An invalid encoding from the receiver (all 0xff is not a canonical point).
        let (a, b) = pair();
        let b = Tamper::new(b, |_, _, m: &mut Vec<u8>| m[..32].fill(0xff));
        let (s, _r) = block_on(async {
            join!(send(&a, 1, &SessionId([3; 32]), 2), receive(&b, 0, &SessionId([3; 32]), &[true, false]))
        });
        assert_eq!(s.unwrap_err().code(), "MALFORMED_MESSAGE");

        // The identity as the sender's point.
        let (a, b) = pair();
        let a = Tamper::new(a, |_, _, m: &mut Vec<u8>| m.fill(0));
        let (_s, r) = block_on(async {
            join!(send(&a, 1, &SessionId([3; 32]), 2), receive(&b, 0, &SessionId([3; 32]), &[true, false]))
        });
        assert_eq!(r.unwrap_err().code(), "MALFORMED_MESSAGE");

        // A truncated receiver message.
        let (a, b) = pair();
        let b = Tamper::new(b, |_, _, m: &mut Vec<u8>| m.truncate(63));
        let (s, _r) = block_on(async {
            join!(send(&a, 1, &SessionId([3; 32]), 2), receive(&b, 0, &SessionId([3; 32]), &[true, false]))
        });
        assert_eq!(s.unwrap_err().code(), "MALFORMED_MESSAGE");
    }
}
