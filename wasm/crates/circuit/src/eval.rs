//! Plaintext evaluation and the bit-order helpers.

use crate::error::CircuitError;
use crate::{Circuit, Gate};

/// Evaluates `c`; see [`Circuit::evaluate`].
pub(crate) fn evaluate(c: &Circuit, inputs: &[Vec<bool>]) -> Result<Vec<Vec<bool>>, CircuitError> {
    if inputs.len() != c.inputs.len() {
        return Err(CircuitError::WrongInputCount { expected: c.inputs.len(), got: inputs.len() });
    }
    for (index, (given, &width)) in inputs.iter().zip(&c.inputs).enumerate() {
        if given.len() as u64 != u64::from(width) {
            return Err(CircuitError::WrongInputSize { index, expected: u64::from(width), got: given.len() as u64 });
        }
    }
    // After this every wire index is in range and every read wire was written, so the indexing
    // below cannot fail.
    c.validate()?;
    let mut values = vec![false; c.wires as usize];
    for (slot, &bit) in values.iter_mut().zip(inputs.iter().flatten()) {
        *slot = bit;
    }
    for gate in &c.gates {
        let (out, v) = match *gate {
            Gate::Xor { a, b, out } => (out, values[a as usize] ^ values[b as usize]),
            Gate::And { a, b, out } => (out, values[a as usize] & values[b as usize]),
            Gate::Inv { a, out } => (out, !values[a as usize]),
            Gate::Const { value, out } => (out, value),
            Gate::Copy { a, out } => (out, values[a as usize]),
        };
        values[out as usize] = v;
    }
    Ok((0..c.outputs.len())
        .map(|i| {
            let r = c.output_wires(i);
            values[r.start as usize..r.end as usize].to_vec()
        })
        .collect())
}

/// The `width` wires of a value given as big-endian bytes: wire `k` is bit `k` of the integer the
/// bytes spell, so wire 0 is the lowest bit of the **last** byte. Bits beyond the bytes are zero
/// (a short value is zero-extended); bytes beyond `width` bits are ignored.
pub fn bits_from_bytes_be(bytes: &[u8], width: u32) -> Vec<bool> {
    // Bits past the bytes would be zero anyway: capping here keeps a huge width from allocating
    // beyond what the caller could have meant, while the result still has exactly `width` bits.
    let mut bits = Vec::with_capacity((width as usize).min(bytes.len().saturating_mul(8)));
    bits.extend(bytes.iter().rev().flat_map(|&byte| (0..8).map(move |i| (byte >> i) & 1 == 1)).take(width as usize));
    bits.resize(width as usize, false);
    bits
}

/// The inverse of [`bits_from_bytes_be`]: `ceil(len / 8)` big-endian bytes whose integer has bit
/// `k` equal to `bits[k]` (the unused high bits of the first byte are zero).
pub fn bytes_be_from_bits(bits: &[bool]) -> Vec<u8> {
    let n = bits.len().div_ceil(8);
    let mut bytes = vec![0u8; n];
    for (k, &bit) in bits.iter().enumerate() {
        if bit {
            bytes[n - 1 - k / 8] |= 1 << (k % 8);
        }
    }
    bytes
}
