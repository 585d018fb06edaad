//! The fixed encoding of preprocessed material moved between instances of one party: what a
//! parallel instance made (AND triples, random masks, and the ρ shares of the instance key
//! check), one party's view, for its primary's pools
//! ([`AuthGcParty::take_material`](super::AuthGcParty::take_material),
//! [`AuthGcParty::put_material`](super::AuthGcParty::put_material)).
//!
//! ```text
//! header  "WAGCMAT1" | party u32 | parties u32 | rho u32 | Δ fingerprint (16) | triples u64 | masks u64
//! body    x, y, z of the triples (each `triples` shares), the masks (`masks` shares),
//!         the check shares (`rho` shares)
//! shares  ℓ bits packed LSB-first (canonical: zero padding), then for every peer j in
//!         increasing order: the ℓ tags M_j[x] under j's Δ_j, then the ℓ keys K_me[x^j] under Δ_me
//! ```
//!
//! All integers little-endian, blocks as their 16 bytes. Everything after the header is secret;
//! the header is not (counts, indices) except the fingerprint, a one-way digest of Δ that lets
//! the receiving instance refuse material made under another key before it is used (an honest
//! instance never makes such material; a bug that did would otherwise surface as a failed MAC
//! check that seems to blame a peer). Decoding checks every length before it allocates.

use crate::preprocess::Triples;
use crate::share::{pack_bits, unpack_bits, AuthShares};
use crate::AuthGcError;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use webmpc_core::channel::PartyId;
use webmpc_core::Block;

/// The first bytes of every encoding (format version 1).
pub const MAGIC: &[u8; 8] = b"WAGCMAT1";

/// Bytes of the header.
pub const HEADER_LEN: usize = 8 + 4 + 4 + 4 + 16 + 8 + 8;

/// Most triples or masks one encoding may carry (the SDK's limit on a preprocessing call).
pub const MAX_ITEMS: u64 = 1 << 30;

/// What one instance hands to another: triples, masks and the key-check shares.
pub struct Material {
    /// The AND triples, in pool order.
    pub triples: Triples,
    /// The random masks, in pool order.
    pub masks: AuthShares,
    /// ρ fresh shares for the instance key check (never used otherwise).
    pub check: AuthShares,
}

/// A one-way digest of a global key: equal digests mean (except with probability 2^{−128}) the
/// same key.
pub fn delta_fingerprint(delta: Block) -> [u8; 16] {
    let mut h = Sha256::new();
    h.update(b"webmpc/authgc/material/delta-fingerprint/v1");
    h.update(delta.0);
    let d = h.finalize();
    d[..16].try_into().expect("16 bytes")
}

/// Bytes of one batch of `len` shares among `parties` parties.
fn shares_len(len: u64, parties: usize) -> Option<usize> {
    let len = usize::try_from(len).ok()?;
    let blocks = len.checked_mul(32)?.checked_mul(parties - 1)?;
    blocks.checked_add(len.div_ceil(8))
}

fn encode_shares(out: &mut Vec<u8>, s: &AuthShares) {
    let mut packed = pack_bits(&s.bits);
    out.extend_from_slice(&packed);
    packed.iter_mut().for_each(|b| *b = 0);
    for j in s.peers() {
        out.extend_from_slice(Block::slice_as_bytes(&s.macs[j]));
        out.extend_from_slice(Block::slice_as_bytes(&s.keys[j]));
    }
}

/// Encodes `m`, this party's (`me` of `parties`) material under the key `delta`.
pub fn encode(me: PartyId, parties: usize, rho: usize, delta: Block, m: &Material) -> Vec<u8> {
    let (t, k) = (m.triples.len() as u64, m.masks.len() as u64);
    let total = HEADER_LEN
        + 3 * shares_len(t, parties).expect("pooled triples fit in memory")
        + shares_len(k, parties).expect("pooled masks fit in memory")
        + shares_len(rho as u64, parties).expect("ρ shares");
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(me as u32).to_le_bytes());
    out.extend_from_slice(&(parties as u32).to_le_bytes());
    out.extend_from_slice(&(rho as u32).to_le_bytes());
    out.extend_from_slice(&delta_fingerprint(delta));
    out.extend_from_slice(&t.to_le_bytes());
    out.extend_from_slice(&k.to_le_bytes());
    for s in [&m.triples.x, &m.triples.y, &m.triples.z, &m.masks, &m.check] {
        encode_shares(&mut out, s);
    }
    debug_assert_eq!(out.len(), total);
    out
}

fn refused(why: &str) -> AuthGcError {
    // No secret: only what is wrong with the shape (or that the key differs).
    AuthGcError::InvalidArgument(format!("instance material refused: {why}"))
}

/// Decodes material for party `me` of `parties` at statistical parameter `rho`, refusing any
/// other party's, any other shape, any non-canonical bit padding, and material made under a key
/// other than `delta`.
pub fn decode(bytes: &[u8], me: PartyId, parties: usize, rho: usize, delta: Block) -> Result<Material, AuthGcError> {
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err(refused("not an encoding of authgc material (version 1)"));
    }
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    if u32_at(8) != me || u32_at(12) != parties {
        return Err(refused("made for another party or another number of parties"));
    }
    if u32_at(16) != rho {
        return Err(refused("made at another statistical parameter ρ"));
    }
    let (t, k) = (u64_at(36), u64_at(44));
    if t > MAX_ITEMS || k > MAX_ITEMS {
        return Err(refused("more triples or masks than one encoding may carry"));
    }
    let need = [t, t, t, k, rho as u64]
        .iter()
        .try_fold(HEADER_LEN, |a, &l| shares_len(l, parties).and_then(|b| a.checked_add(b)));
    if need != Some(bytes.len()) {
        return Err(refused("the length does not match the counts"));
    }
    // After the shape (which is public), so a wrong key is refused only for well-formed material.
    if !bool::from(bytes[20..36].ct_eq(&delta_fingerprint(delta))) {
        return Err(refused("made under another global key"));
    }
    let mut at = HEADER_LEN;
    let mut next = |len: u64| -> Result<AuthShares, AuthGcError> {
        let len = len as usize;
        let packed = len.div_ceil(8);
        let bits = unpack_bits(&bytes[at..at + packed], len).ok_or_else(|| refused("non-canonical bit padding"))?;
        at += packed;
        let mut s = AuthShares { me, bits, macs: vec![Vec::new(); parties], keys: vec![Vec::new(); parties] };
        for j in (0..parties).filter(|&j| j != me) {
            let col = |at: usize| Block::slice_from_bytes(&bytes[at..at + 16 * len]).expect("16·len bytes").to_vec();
            s.macs[j] = col(at);
            s.keys[j] = col(at + 16 * len);
            at += 32 * len;
        }
        Ok(s)
    };
    let triples = Triples { x: next(t)?, y: next(t)?, z: next(t)? };
    let masks = next(k)?;
    let check = next(rho as u64)?;
    Ok(Material { triples, masks, check })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ideal::{deal, deal_triples};
    use webmpc_core::prg::Prg;

    #[test]
    fn material_round_trips_and_malformed_encodings_are_refused() {
        let mut prg = Prg::from_seed(Block::from_u128(11));
        let n = 3;
        let d: Vec<Block> = (0..n).map(|_| prg.next_block()).collect();
        let triples = deal_triples(&mut prg, &d, 13);
        let masks = deal(&mut prg, &d, 21);
        let check = deal(&mut prg, &d, 40);
        let me = 1;
        let m = Material { triples: triples[me].clone(), masks: masks[me].clone(), check: check[me].clone() };
        let bytes = encode(me, n, 40, d[me], &m);
        let back = decode(&bytes, me, n, 40, d[me]).unwrap();
        assert!(back.triples == m.triples && back.masks == m.masks && back.check == m.check);

        let bad = |b: &[u8], me: usize, rho: usize, delta: Block| decode(b, me, n, rho, delta).is_err();
        assert!(bad(&bytes, 0, 40, d[me]), "another party's view");
        assert!(bad(&bytes, me, 41, d[me]), "another ρ");
        assert!(bad(&bytes, me, 40, d[0]), "another key");
        assert!(bad(&bytes[..bytes.len() - 1], me, 40, d[me]), "truncated");
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(bad(&longer, me, 40, d[me]), "extended");
        let mut magic = bytes.clone();
        magic[7] ^= 1;
        assert!(bad(&magic, me, 40, d[me]), "another format");
        let mut count = bytes.clone();
        count[36] ^= 1; // 12 or 14 triples
        assert!(bad(&count, me, 40, d[me]), "counts that do not match the length");
        let mut huge = bytes.clone();
        huge[36..44].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(bad(&huge, me, 40, d[me]), "absurd counts, refused before any allocation");
        // 13 triples: the packed x bits end in 3 padding bits, which must be zero.
        let mut padding = bytes.clone();
        padding[HEADER_LEN + 1] |= 0x80;
        assert!(bad(&padding, me, 40, d[me]), "non-canonical padding");
    }
}
