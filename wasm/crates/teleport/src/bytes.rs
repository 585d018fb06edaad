//! Little-endian message reading and writing: every read is bounds-checked and fails with a typed
//! [`TeleportError::Malformed`] naming the message, never a panic.

use crate::TeleportError;
use alloc::vec::Vec;
use webmpc_core::Block;

/// A cursor over an untrusted message.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { bytes, what }
    }

    fn bad(&self) -> TeleportError {
        TeleportError::Malformed(self.what)
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], TeleportError> {
        if n > self.bytes.len() {
            return Err(self.bad());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], TeleportError> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }

    pub(crate) fn u8(&mut self) -> Result<u8, TeleportError> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u32(&mut self) -> Result<u32, TeleportError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, TeleportError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// `n` blocks, refusing before allocating when fewer bytes remain.
    pub(crate) fn blocks(&mut self, n: usize) -> Result<Vec<Block>, TeleportError> {
        let bytes = self.take(n.checked_mul(16).ok_or_else(|| self.bad())?)?;
        Ok(Block::slice_from_bytes(bytes).expect("multiple of 16").to_vec())
    }

    /// A u32 length prefix, then that many bytes.
    pub(crate) fn prefixed(&mut self) -> Result<&'a [u8], TeleportError> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    pub(crate) fn rest(&mut self) -> &'a [u8] {
        core::mem::take(&mut self.bytes)
    }

    /// Fails unless everything was read.
    pub(crate) fn finish(self) -> Result<(), TeleportError> {
        if !self.bytes.is_empty() {
            return Err(self.bad());
        }
        Ok(())
    }
}

/// Where encoded bytes go: a buffer, or straight into a hash.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Appends a u32 length prefix and the bytes.
pub(crate) fn put_prefixed(out: &mut impl Sink, bytes: &[u8]) {
    out.put(&(bytes.len() as u32).to_le_bytes());
    out.put(bytes);
}

/// Packs bits LSB-first into bytes.
pub fn pack_bits(bits: &[bool]) -> Vec<u8> {
    let mut out = alloc::vec![0u8; bits.len().div_ceil(8)];
    for (i, &b) in bits.iter().enumerate() {
        out[i / 8] |= (b as u8) << (i % 8);
    }
    out
}

/// Unpacks `n` bits packed by [`pack_bits`]; the padding bits of the last byte must be zero, so
/// that a packing is unique.
pub fn unpack_bits(bytes: &[u8], n: usize, what: &'static str) -> Result<Vec<bool>, TeleportError> {
    if bytes.len() != n.div_ceil(8) {
        return Err(TeleportError::Malformed(what));
    }
    if n % 8 != 0 && bytes[n / 8] >> (n % 8) != 0 {
        return Err(TeleportError::Malformed(what));
    }
    Ok((0..n).map(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_and_padding_is_checked() {
        let bits = [true, false, true, true, false, false, false, true, true];
        let packed = pack_bits(&bits);
        assert_eq!(packed, [0b1000_1101, 1]);
        assert_eq!(unpack_bits(&packed, 9, "t").unwrap(), bits);
        assert!(unpack_bits(&[0b1000_1101, 3], 9, "t").is_err());
        assert!(unpack_bits(&packed, 17, "t").is_err());
        assert!(unpack_bits(&[], 0, "t").unwrap().is_empty());
    }

    #[test]
    fn reader_refuses_short_input() {
        let mut r = Reader::new(&[1, 0, 0, 0, 9], "msg");
        assert_eq!(r.u32().unwrap(), 1);
        assert!(r.u32().is_err());
        let mut r = Reader::new(&[5, 0, 0, 0, 1, 2], "msg");
        assert_eq!(r.prefixed().unwrap_err(), TeleportError::Malformed("msg"));
        let r = Reader::new(&[1], "msg");
        assert!(r.finish().is_err());
    }
}
