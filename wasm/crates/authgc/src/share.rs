//! Authenticated shares ⟨x⟩ (BDOZ style, WRK17 §2–3): pure data and local operations.
//!
//! A batch of ℓ shared bits x_0..x_{ℓ−1} among n parties: x_k = ⊕_i x^i_k, and every share x^i_k
//! is authenticated to every other party j (P_j holds K_j[x^i_k], P_i holds
//! M_j[x^i_k] = K_j[x^i_k] ⊕ x^i_k·Δ_j). [`AuthShares`] is one party's view of such a batch.
//!
//! Storage is peer-major (`macs[j]`, `keys[j]` are contiguous vectors of ℓ blocks) because every
//! protocol step works on one peer's column at a time (OT outputs arrive per peer, MAC checks and
//! hashes run per peer in batches).
//!
//! Everything here is constant-time in the share bits: bits select through masks, never branches.

use crate::AuthGcError;
use sha2::{Digest, Sha256};
use webmpc_core::channel::PartyId;
use webmpc_core::Block;

/// All-ones if `b`, else all-zeros, without a branch.
#[inline(always)]
pub fn mask(b: bool) -> Block {
    Block::mask_from_bit(b as u8)
}

/// One party's view of a batch of authenticated shares.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthShares {
    /// This party's index.
    pub me: PartyId,
    /// This party's share bits x^me_k.
    pub bits: Vec<bool>,
    /// `macs[j][k]` = M_j[x^me_k]: this party's tag on its own share under party j's key.
    /// `macs[me]` is empty.
    pub macs: Vec<Vec<Block>>,
    /// `keys[j][k]` = K_me[x^j_k]: this party's key on party j's share. `keys[me]` is empty.
    pub keys: Vec<Vec<Block>>,
}

impl core::fmt::Debug for AuthShares {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Shares, tags and keys are secret: show the shape only.
        write!(f, "AuthShares {{ me: {}, parties: {}, len: {} }}", self.me, self.parties(), self.len())
    }
}

impl AuthShares {
    /// An empty batch for party `me` of `parties`.
    pub fn empty(me: PartyId, parties: usize) -> AuthShares {
        AuthShares { me, bits: Vec::new(), macs: vec![Vec::new(); parties], keys: vec![Vec::new(); parties] }
    }

    /// An all-zero batch of `len` (bits, tags and keys all zero): the neutral element of XOR.
    pub fn zeros(me: PartyId, parties: usize, len: usize) -> AuthShares {
        let col = |j: PartyId| if j == me { Vec::new() } else { vec![Block::ZERO; len] };
        AuthShares {
            me,
            bits: vec![false; len],
            macs: (0..parties).map(col).collect(),
            keys: (0..parties).map(col).collect(),
        }
    }

    /// The number of parties.
    pub fn parties(&self) -> usize {
        self.macs.len()
    }

    /// The number of shared bits in the batch.
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The other parties, in order.
    pub fn peers(&self) -> impl Iterator<Item = PartyId> + '_ {
        let me = self.me;
        (0..self.parties()).filter(move |&j| j != me)
    }

    /// Checks the internal shape: every peer column has one block per bit.
    pub fn check_shape(&self) -> Result<(), AuthGcError> {
        let n = self.len();
        let ok = self.me < self.parties()
            && self.keys.len() == self.parties()
            && (0..self.parties()).all(|j| {
                let want = if j == self.me { 0 } else { n };
                self.macs[j].len() == want && self.keys[j].len() == want
            });
        if ok {
            Ok(())
        } else {
            Err(AuthGcError::InvalidArgument("authenticated shares of inconsistent shape".into()))
        }
    }

    /// ⟨x⟩ ⊕= ⟨y⟩ elementwise (local: XOR bits, tags and keys).
    pub fn xor_assign(&mut self, other: &AuthShares) {
        assert_eq!(self.len(), other.len(), "xor of batches of different lengths");
        assert_eq!(self.me, other.me, "xor of two parties' views");
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a ^= *b;
        }
        for j in 0..self.parties() {
            xor_into(&mut self.macs[j], &other.macs[j]);
            xor_into(&mut self.keys[j], &other.keys[j]);
        }
    }

    /// ⟨x_k⟩ ⊕= ⟨y_i⟩ for one share of each (local: bit, tags and keys).
    pub fn xor_one(&mut self, k: usize, other: &AuthShares, i: usize) {
        assert_eq!(self.me, other.me, "xor of two parties' views");
        self.bits[k] ^= other.bits[i];
        for j in self.peers().collect::<Vec<_>>() {
            self.macs[j][k] ^= other.macs[j][i];
            self.keys[j][k] ^= other.keys[j][i];
        }
    }

    /// ⟨x⟩ ⊕ ⟨y⟩.
    pub fn xor(&self, other: &AuthShares) -> AuthShares {
        let mut out = self.clone();
        out.xor_assign(other);
        out
    }

    /// Adds public bits: ⟨x_k⟩ ← ⟨x_k ⊕ c_k⟩. Party `designated` flips its share; every other
    /// party j XORs c_k·Δ_j into its key on `designated`'s share, so tags stay valid.
    pub fn add_public(&mut self, constants: &[bool], delta: Block, designated: PartyId) {
        assert_eq!(constants.len(), self.len(), "one constant per shared bit");
        if self.me == designated {
            for (b, &c) in self.bits.iter_mut().zip(constants) {
                *b ^= c;
            }
        } else {
            for (k, &c) in self.keys[designated].iter_mut().zip(constants) {
                *k ^= delta & mask(c);
            }
        }
    }

    /// Multiplies by public bits: ⟨x_k⟩ ← ⟨c_k·x_k⟩ (local: mask bits, tags and keys).
    pub fn and_public(&mut self, constants: &[bool]) {
        assert_eq!(constants.len(), self.len(), "one constant per shared bit");
        for (b, &c) in self.bits.iter_mut().zip(constants) {
            *b &= c;
        }
        for j in 0..self.parties() {
            for (v, &c) in self.macs[j].iter_mut().zip(constants) {
                *v &= mask(c);
            }
            for (v, &c) in self.keys[j].iter_mut().zip(constants) {
                *v &= mask(c);
            }
        }
    }

    /// The shares at `indices`, in that order.
    pub fn select(&self, indices: &[usize]) -> AuthShares {
        let pick_blocks = |v: &Vec<Block>| if v.is_empty() { Vec::new() } else { indices.iter().map(|&i| v[i]).collect() };
        AuthShares {
            me: self.me,
            bits: indices.iter().map(|&i| self.bits[i]).collect(),
            macs: self.macs.iter().map(pick_blocks).collect(),
            keys: self.keys.iter().map(pick_blocks).collect(),
        }
    }

    /// The shares in `range`.
    pub fn slice(&self, range: core::ops::Range<usize>) -> AuthShares {
        let cut = |v: &Vec<Block>| if v.is_empty() { Vec::new() } else { v[range.clone()].to_vec() };
        AuthShares {
            me: self.me,
            bits: self.bits[range.clone()].to_vec(),
            macs: self.macs.iter().map(cut).collect(),
            keys: self.keys.iter().map(cut).collect(),
        }
    }

    /// Appends `other`'s shares.
    pub fn extend(&mut self, other: &AuthShares) {
        assert_eq!(self.me, other.me, "extend with another party's view");
        self.bits.extend_from_slice(&other.bits);
        for j in 0..self.parties() {
            self.macs[j].extend_from_slice(&other.macs[j]);
            self.keys[j].extend_from_slice(&other.keys[j]);
        }
    }

    /// Splits off the shares from `at` on. The tail moves out and its old place in this batch's
    /// buffers is zeroed ([`Vec::split_off`] would leave the tags and keys in spare capacity).
    pub fn split_off(&mut self, at: usize) -> AuthShares {
        let cut = |v: &mut Vec<Block>| {
            if v.is_empty() {
                return Vec::new();
            }
            let tail = v[at..].to_vec();
            Block::wipe(&mut v[at..]);
            v.truncate(at);
            tail
        };
        let bits = self.bits[at..].to_vec();
        self.bits[at..].iter_mut().for_each(|b| *b = false);
        self.bits.truncate(at);
        AuthShares { me: self.me, bits, macs: self.macs.iter_mut().map(cut).collect(), keys: self.keys.iter_mut().map(cut).collect() }
    }

    /// Overwrites the tags and keys with zeros (secrets no longer needed).
    pub fn wipe(&mut self) {
        for v in self.macs.iter_mut().chain(self.keys.iter_mut()) {
            Block::wipe(v);
        }
        self.bits.iter_mut().for_each(|b| *b = false);
    }
}

impl Drop for AuthShares {
    fn drop(&mut self) {
        self.wipe();
    }
}

/// `dst[k] ^= src[k]`.
pub fn xor_into(dst: &mut [Block], src: &[Block]) {
    assert_eq!(dst.len(), src.len(), "xor of columns of different lengths");
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= *s;
    }
}

/// The tags a verifier expects for `bits` it holds keys for: K ⊕ b·Δ.
pub fn expected_macs(keys: &[Block], bits: &[bool], delta: Block) -> Vec<Block> {
    assert_eq!(keys.len(), bits.len(), "one key per bit");
    keys.iter().zip(bits).map(|(&k, &b)| k ^ (delta & mask(b))).collect()
}

/// A binding digest of a column of tags, sent instead of the tags themselves when bits are
/// opened: a prover who flips bit k must produce M ⊕ Δ there, which needs Δ; the digest keeps that
/// check at 32 bytes per message instead of 16 per bit. `label` separates uses (protocol step,
/// direction), so a digest from one step is never accepted at another.
pub fn mac_digest(label: &[u8], macs: &[Block]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webmpc/authgc/mac-digest/v1");
    h.update((label.len() as u64).to_le_bytes());
    h.update(label);
    h.update((macs.len() as u64).to_le_bytes());
    h.update(Block::slice_as_bytes(macs));
    h.finalize().into()
}

/// Packs bits LSB-first into bytes (the wire format of every bit vector in this crate).
pub fn pack_bits(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, &b) in bits.iter().enumerate() {
        out[i / 8] |= (b as u8) << (i % 8);
    }
    out
}

/// Unpacks `n` bits packed by [`pack_bits`]. `None` if the length is wrong or the padding bits of
/// the last byte are not zero (the encoding is canonical, so equal bit vectors hash equally).
pub fn unpack_bits(bytes: &[u8], n: usize) -> Option<Vec<bool>> {
    if bytes.len() != n.div_ceil(8) {
        return None;
    }
    if n % 8 != 0 && bytes[n / 8] >> (n % 8) != 0 {
        return None;
    }
    Some((0..n).map(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ideal::{deal, reconstruct};
    use webmpc_core::prg::Prg;

    fn deltas(prg: &mut Prg, n: usize) -> Vec<Block> {
        (0..n).map(|_| prg.next_block()).collect()
    }

    #[test]
    fn xor_add_public_and_public_keep_tags_valid() {
        let mut prg = Prg::from_seed(Block::from_u128(7));
        for n in [2, 3, 5] {
            let d = deltas(&mut prg, n);
            let a = deal(&mut prg, &d, 100);
            let b = deal(&mut prg, &d, 100);
            let va = reconstruct(&a, &d);
            let vb = reconstruct(&b, &d);
            let c: Vec<bool> = (0..100).map(|_| prg.next_block().lsb()).collect();

            let sum: Vec<AuthShares> = a.iter().zip(&b).map(|(x, y)| x.xor(y)).collect();
            let want: Vec<bool> = va.iter().zip(&vb).map(|(x, y)| x ^ y).collect();
            assert_eq!(reconstruct(&sum, &d), want);

            for designated in 0..n {
                let mut plus = a.clone();
                for v in plus.iter_mut() {
                    v.add_public(&c, d[v.me], designated);
                }
                let want: Vec<bool> = va.iter().zip(&c).map(|(x, y)| x ^ y).collect();
                assert_eq!(reconstruct(&plus, &d), want);
            }

            let mut prod = a.clone();
            for v in prod.iter_mut() {
                v.and_public(&c);
            }
            let want: Vec<bool> = va.iter().zip(&c).map(|(x, y)| x & y).collect();
            assert_eq!(reconstruct(&prod, &d), want);
        }
    }

    #[test]
    fn select_slice_split_and_extend_agree() {
        let mut prg = Prg::from_seed(Block::from_u128(8));
        let d = deltas(&mut prg, 3);
        let a = deal(&mut prg, &d, 50);
        let va = reconstruct(&a, &d);
        let idx = [49, 0, 7, 7, 20];
        let picked: Vec<AuthShares> = a.iter().map(|v| v.select(&idx)).collect();
        assert_eq!(reconstruct(&picked, &d), idx.iter().map(|&i| va[i]).collect::<Vec<_>>());
        let mut joined: Vec<AuthShares> = a.iter().map(|v| v.slice(0..20)).collect();
        for (j, v) in joined.iter_mut().zip(&a) {
            j.extend(&v.slice(20..50));
        }
        assert_eq!(joined, a);
        let mut head = a.clone();
        let tail: Vec<AuthShares> = head.iter_mut().map(|v| v.split_off(30)).collect();
        assert_eq!(reconstruct(&tail, &d), va[30..].to_vec());
        assert_eq!(reconstruct(&head, &d), va[..30].to_vec());
    }

    #[test]
    fn a_flipped_bit_breaks_its_tag() {
        let mut prg = Prg::from_seed(Block::from_u128(9));
        let d = deltas(&mut prg, 2);
        let a = deal(&mut prg, &d, 10);
        let mut bits = a[0].bits.clone();
        bits[3] ^= true;
        let want = expected_macs(&a[1].keys[0], &bits, d[1]);
        assert_ne!(mac_digest(b"t", &want), mac_digest(b"t", &a[0].macs[1]));
        assert_eq!(
            mac_digest(b"t", &expected_macs(&a[1].keys[0], &a[0].bits, d[1])),
            mac_digest(b"t", &a[0].macs[1])
        );
        assert_ne!(mac_digest(b"t", &a[0].macs[1]), mac_digest(b"u", &a[0].macs[1]));
    }

    #[test]
    fn bit_packing_is_canonical() {
        let bits = [true, false, true, true, false, false, false, false, true];
        let packed = pack_bits(&bits);
        assert_eq!(packed, vec![0b0000_1101, 0b1]);
        assert_eq!(unpack_bits(&packed, 9).unwrap(), bits.to_vec());
        assert_eq!(unpack_bits(&[0b0000_1101, 0b11], 9), None, "nonzero padding");
        assert_eq!(unpack_bits(&packed, 17), None, "wrong length");
        assert_eq!(unpack_bits(&[], 0).unwrap(), Vec::<bool>::new());
    }
}
