//! The 128-bit value every kernel works on.

use core::fmt;
use core::ops::{BitAnd, BitAndAssign, BitXor, BitXorAssign, Not};

use bytemuck::{Pod, Zeroable};
use subtle::{Choice, ConstantTimeEq};

/// A 128-bit block: an AES state, a wire label, an OT message, a GF(2^128) element.
///
/// Byte order is the AES byte order (byte 0 is the first byte on the wire). When a block is read
/// as an integer ([`Block::to_u128`]) it is little-endian: bit `i` of the integer is bit `i % 8`
/// of byte `i / 8`.
///
/// `repr(transparent)` over `[u8; 16]` (alignment 1) so that byte buffers from JS or the network
/// can be viewed as blocks without copying ([`Block::slice_from_bytes`]).
#[derive(Clone, Copy, Default, Pod, Zeroable)]
#[repr(transparent)]
pub struct Block(pub [u8; 16]);

impl Block {
    pub const ZERO: Block = Block([0; 16]);
    pub const ONES: Block = Block([0xff; 16]);
    pub const LEN: usize = 16;

    #[inline(always)]
    pub const fn new(bytes: [u8; 16]) -> Self {
        Block(bytes)
    }

    #[inline(always)]
    pub const fn from_u128(x: u128) -> Self {
        Block(x.to_le_bytes())
    }

    #[inline(always)]
    pub const fn to_u128(self) -> u128 {
        u128::from_le_bytes(self.0)
    }

    /// The two 64-bit halves, low then high.
    #[inline(always)]
    pub fn to_u64s(self) -> [u64; 2] {
        let x = self.to_u128();
        [x as u64, (x >> 64) as u64]
    }

    #[inline(always)]
    pub fn from_u64s(lo: u64, hi: u64) -> Self {
        Block::from_u128((lo as u128) | ((hi as u128) << 64))
    }

    /// Least significant bit of the integer reading (point-and-permute bit of a wire label).
    #[inline(always)]
    pub fn lsb(self) -> bool {
        self.0[0] & 1 == 1
    }

    /// Views a byte slice whose length is a multiple of 16 as blocks, without copying.
    pub fn slice_from_bytes(bytes: &[u8]) -> Option<&[Block]> {
        bytemuck::try_cast_slice(bytes).ok()
    }

    /// Mutable variant of [`Block::slice_from_bytes`].
    pub fn slice_from_bytes_mut(bytes: &mut [u8]) -> Option<&mut [Block]> {
        bytemuck::try_cast_slice_mut(bytes).ok()
    }

    /// Views blocks as their bytes.
    pub fn slice_as_bytes(blocks: &[Block]) -> &[u8] {
        bytemuck::cast_slice(blocks)
    }

    /// Mutable variant of [`Block::slice_as_bytes`].
    pub fn slice_as_bytes_mut(blocks: &mut [Block]) -> &mut [u8] {
        bytemuck::cast_slice_mut(blocks)
    }

    /// Overwrites blocks with zeros in a way the optimiser may not remove (scratch that held
    /// secrets: keystream, hash intermediates, cipher state).
    pub fn wipe(blocks: &mut [Block]) {
        let ptr = blocks.as_mut_ptr();
        if (ptr as usize) % core::mem::align_of::<u64>() == 0 {
            // Word stores where the buffer allows (allocations are 8-aligned in practice): a
            // volatile store of a 16-byte `Block` (alignment 1) may become 16 byte stores.
            let words = ptr as *mut u64;
            for i in 0..2 * blocks.len() {
                // SAFETY: `words` is 8-aligned and the slice spans 2·len exclusive words.
                unsafe { core::ptr::write_volatile(words.add(i), 0) };
            }
        } else {
            for b in blocks.iter_mut() {
                // SAFETY: `b` is a valid, exclusive reference to a `Block`.
                unsafe { core::ptr::write_volatile(b, Block::ZERO) };
            }
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    }

    /// All-ones if `bit` is set, all-zeros otherwise, without a branch on `bit`.
    #[inline(always)]
    pub fn mask_from_bit(bit: u8) -> Block {
        Block::from_u128(0u128.wrapping_sub((bit & 1) as u128))
    }
}

impl ConstantTimeEq for Block {
    fn ct_eq(&self, other: &Self) -> Choice {
        self.0.ct_eq(&other.0)
    }
}

/// Equality is constant-time: blocks are usually secret (labels, keys, MAC shares).
impl PartialEq for Block {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(other).into()
    }
}
impl Eq for Block {}

// Hashing agrees with the byte equality above (for maps of public blocks, e.g. circuit hashes).
impl core::hash::Hash for Block {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl BitXor for Block {
    type Output = Block;
    #[inline(always)]
    fn bitxor(self, rhs: Block) -> Block {
        Block::from_u128(self.to_u128() ^ rhs.to_u128())
    }
}
impl BitXorAssign for Block {
    #[inline(always)]
    fn bitxor_assign(&mut self, rhs: Block) {
        *self = *self ^ rhs;
    }
}
impl BitAnd for Block {
    type Output = Block;
    #[inline(always)]
    fn bitand(self, rhs: Block) -> Block {
        Block::from_u128(self.to_u128() & rhs.to_u128())
    }
}
impl BitAndAssign for Block {
    #[inline(always)]
    fn bitand_assign(&mut self, rhs: Block) {
        *self = *self & rhs;
    }
}
impl Not for Block {
    type Output = Block;
    #[inline(always)]
    fn not(self) -> Block {
        Block::from_u128(!self.to_u128())
    }
}

impl From<[u8; 16]> for Block {
    fn from(b: [u8; 16]) -> Self {
        Block(b)
    }
}
impl From<Block> for [u8; 16] {
    fn from(b: Block) -> Self {
        b.0
    }
}

/// Redacted: blocks are usually secret, and a `#[derive(Debug)]` on some protocol state must not
/// leak them into a log or an error. Use [`Block::to_hex`] where printing is intended.
impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Block(..)")
    }
}

impl Block {
    /// Lower-case hex in byte order, for known-answer tests and public values.
    pub fn to_hex(&self) -> alloc::string::String {
        self.0.iter().map(|b| alloc::format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u128_round_trip_is_little_endian() {
        let b = Block::from_u128(1);
        assert_eq!(b.0[0], 1);
        assert_eq!(b.to_u128(), 1);
        let x = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        assert_eq!(Block::from_u128(x).to_u128(), x);
        let [lo, hi] = Block::from_u128(x).to_u64s();
        assert_eq!(Block::from_u64s(lo, hi).to_u128(), x);
    }

    #[test]
    fn byte_views_reject_ragged_lengths() {
        assert!(Block::slice_from_bytes(&[0u8; 17]).is_none());
        assert_eq!(Block::slice_from_bytes(&[0u8; 32]).unwrap().len(), 2);
        assert_eq!(Block::slice_from_bytes(&[]).unwrap().len(), 0);
    }

    #[test]
    fn wipe_zeroes_aligned_and_unaligned_slices_and_nothing_else() {
        // A byte buffer viewed as blocks from offsets 0..8: the word path and the byte path.
        for off in 0..8 {
            let mut bytes = vec![0xa5u8; 16 * 5 + 16];
            let blocks = Block::slice_from_bytes_mut(&mut bytes[off..off + 16 * 5]).unwrap();
            Block::wipe(&mut blocks[1..4]);
            assert!(bytes[off + 16..off + 64].iter().all(|&b| b == 0), "offset {off}");
            assert!(bytes[..off + 16].iter().chain(&bytes[off + 64..]).all(|&b| b == 0xa5), "offset {off}");
        }
    }

    #[test]
    fn mask_from_bit_selects() {
        assert_eq!(Block::mask_from_bit(1), Block::ONES);
        assert_eq!(Block::mask_from_bit(0), Block::ZERO);
        let a = Block::from_u128(0xdead_beef);
        assert_eq!(a & Block::mask_from_bit(1), a);
        assert_ne!(a, a ^ Block::from_u128(1));
    }
}
