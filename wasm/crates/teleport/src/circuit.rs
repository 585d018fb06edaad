//! The webmpc binary circuit form (version 1, defined by `webmpc-circuit`), decoded piece by
//! piece without `std`, for the enclave: it must hash and garble circuits far larger than its
//! memory, and it cannot link `webmpc-circuit` (a `std` crate).
//!
//! Only what garbling needs is checked here: the header's counts, opcodes, operand encodings and
//! that every wire is below the wire count (so no index can go out of bounds). Whether the circuit
//! is *well formed* (wires defined before use, outputs defined) is not the enclave's concern: the
//! parties validate it with `webmpc-circuit` before naming its content hash, and the enclave only
//! garbles a circuit whose SHA-256 equals the hash both parties named. A cross-check test keeps
//! this decoder in step with `webmpc-circuit` on every reference circuit.
//!
//! A circuit travels as **pieces**: the header, then the gates in pieces of exactly
//! [`PIECE_GATES`] gates (the last piece may be shorter). [`pieces`] cuts an encoding that way.

use crate::bytes::Reader;
use crate::TeleportError;
use alloc::vec::Vec;
use core::ops::Range;

/// Gates per circuit piece (and per garbled-table message): at most 3 MiB of GRR3 tables.
pub const PIECE_GATES: usize = 1 << 16;

/// The first four bytes of every encoding.
pub const MAGIC: [u8; 4] = *b"WMPC";
const VERSION: u8 = 1;
/// Most input (and, separately, output) values a header may declare.
const MAX_VALUES: u32 = 1 << 20;
/// Gate indices enter 64-bit tweaks as `4 · gate + row`.
pub const MAX_GATES: u64 = 1 << 61;

const OP_XOR: u8 = 0;
const OP_AND: u8 = 1;
const OP_INV: u8 = 2;
const OP_CONST: u8 = 3;
const OP_COPY: u8 = 4;

/// One gate; every gate writes the wire `out`, after reading its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// `out = a ⊕ b`.
    Xor {
        /// First operand.
        a: u32,
        /// Second operand.
        b: u32,
        /// Result.
        out: u32,
    },
    /// `out = a ∧ b`.
    And {
        /// First operand.
        a: u32,
        /// Second operand.
        b: u32,
        /// Result.
        out: u32,
    },
    /// `out = ¬a`.
    Inv {
        /// Operand.
        a: u32,
        /// Result.
        out: u32,
    },
    /// `out = value`.
    Const {
        /// The constant.
        value: bool,
        /// Result.
        out: u32,
    },
    /// `out = a`.
    Copy {
        /// Operand.
        a: u32,
        /// Result.
        out: u32,
    },
}

/// The header of an encoding: the circuit's public shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Number of wires.
    pub wires: u32,
    /// Number of gates.
    pub gates: u64,
    /// Bit width of each input value (value 0 on the first wires).
    pub inputs: Vec<u32>,
    /// Bit width of each output value (the last wires, value 0 first).
    pub outputs: Vec<u32>,
}

impl Header {
    /// Parses the header at the start of `bytes`; returns it and its length in bytes.
    pub fn parse(bytes: &[u8]) -> Result<(Header, usize), TeleportError> {
        let what = "circuit header";
        let mut r = Reader::new(bytes, what);
        if r.array::<4>()? != MAGIC || r.array::<4>()? != [VERSION, 0, 0, 0] {
            return Err(TeleportError::Malformed(what));
        }
        let wires = r.u32()?;
        let gates = r.u64()?;
        if gates > MAX_GATES {
            return Err(TeleportError::TooLarge { what: "circuit gates", got: gates, limit: MAX_GATES });
        }
        let mut widths = || -> Result<Vec<u32>, TeleportError> {
            let n = r.u32()?;
            if n > MAX_VALUES {
                return Err(TeleportError::TooLarge { what: "circuit values", got: n as u64, limit: MAX_VALUES as u64 });
            }
            (0..n).map(|_| r.u32()).collect()
        };
        let inputs = widths()?;
        let outputs = widths()?;
        let len = bytes.len() - r.rest().len();
        let header = Header { wires, gates, inputs, outputs };
        let (i, o) = (header.input_bits(), header.output_bits());
        if i.is_none_or(|i| i > wires as u64) || o.is_none_or(|o| o > wires as u64) {
            return Err(TeleportError::Malformed(what));
        }
        Ok((header, len))
    }

    /// Total input bits (`None` if a width sum overflows).
    pub fn input_bits(&self) -> Option<u64> {
        self.inputs.iter().try_fold(0u64, |acc, &w| acc.checked_add(w as u64))
    }

    /// Total output bits.
    pub fn output_bits(&self) -> Option<u64> {
        self.outputs.iter().try_fold(0u64, |acc, &w| acc.checked_add(w as u64))
    }

    /// The wires of input value `i` (inputs are numbered first, in order). Callers pass `i` in range.
    pub fn input_wires(&self, i: usize) -> Range<u32> {
        let start: u32 = self.inputs[..i].iter().sum();
        start..start + self.inputs[i]
    }

    /// Every output wire, output value 0 first (outputs are the last wires).
    pub fn output_wires(&self) -> Range<u32> {
        let total = self.output_bits().unwrap_or(0) as u32;
        self.wires - total..self.wires
    }
}

/// Decodes one gate at the start of `bytes`; returns it and its encoded length.
fn decode_gate(bytes: &[u8], wires: u32) -> Result<(Gate, usize), TeleportError> {
    let what = "circuit gate";
    let mut r = Reader::new(bytes, what);
    let op = r.u8()?;
    let (gate, len) = match op {
        OP_XOR | OP_AND => {
            let (a, b, out) = (r.u32()?, r.u32()?, r.u32()?);
            (if op == OP_XOR { Gate::Xor { a, b, out } } else { Gate::And { a, b, out } }, 13)
        }
        OP_INV | OP_COPY => {
            let (a, out) = (r.u32()?, r.u32()?);
            (if op == OP_INV { Gate::Inv { a, out } } else { Gate::Copy { a, out } }, 9)
        }
        OP_CONST => {
            let value = match r.u8()? {
                0 => false,
                1 => true,
                _ => return Err(TeleportError::Malformed(what)),
            };
            (Gate::Const { value, out: r.u32()? }, 6)
        }
        _ => return Err(TeleportError::Malformed(what)),
    };
    let in_range = match gate {
        Gate::Xor { a, b, out } | Gate::And { a, b, out } => a < wires && b < wires && out < wires,
        Gate::Inv { a, out } | Gate::Copy { a, out } => a < wires && out < wires,
        Gate::Const { out, .. } => out < wires,
    };
    if !in_range {
        return Err(TeleportError::Malformed("circuit gate (wire out of range)"));
    }
    Ok((gate, len))
}

/// Decodes a piece of whole gates into `out` (replacing its contents); every wire must be below
/// `wires`. Fails on a truncated last gate, an unknown opcode, or more than `max` gates.
pub fn decode_gates(bytes: &[u8], wires: u32, max: usize, out: &mut Vec<Gate>) -> Result<(), TeleportError> {
    out.clear();
    let mut pos = 0;
    while pos < bytes.len() {
        if out.len() == max {
            return Err(TeleportError::TooLarge { what: "gates in a circuit piece", got: max as u64 + 1, limit: max as u64 });
        }
        let (gate, len) = decode_gate(&bytes[pos..], wires)?;
        out.push(gate);
        pos += len;
    }
    Ok(())
}

/// Cuts an encoding into pieces: the header, then gate pieces of [`PIECE_GATES`] gates (the last
/// may be shorter). Returns byte ranges into `binary`. Fails unless the encoding decodes and has
/// exactly the header's number of gates.
pub fn pieces(binary: &[u8]) -> Result<Vec<Range<usize>>, TeleportError> {
    let (header, mut pos) = Header::parse(binary)?;
    let mut out = alloc::vec![0..pos];
    let mut count = 0u64;
    let mut start = pos;
    let mut in_piece = 0;
    while pos < binary.len() {
        let (_, len) = decode_gate(&binary[pos..], header.wires)?;
        pos += len;
        count += 1;
        in_piece += 1;
        if in_piece == PIECE_GATES {
            out.push(start..pos);
            start = pos;
            in_piece = 0;
        }
    }
    if in_piece > 0 {
        out.push(start..pos);
    }
    if count != header.gates {
        return Err(TeleportError::Malformed("circuit (gate count differs from its header)"));
    }
    Ok(out)
}

/// Table bytes a gate needs in the GRR3 stream (see [`crate::grr3`]).
pub(crate) fn table_len(g: &Gate) -> usize {
    match g {
        Gate::And { .. } => crate::grr3::AND_TABLE_BYTES,
        Gate::Const { .. } => crate::grr3::CONST_TABLE_BYTES,
        _ => 0,
    }
}

/// Table bytes a chunk of gates needs.
pub fn tables_len(gates: &[Gate]) -> usize {
    gates.iter().map(table_len).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(wires: u32, inputs: &[u32], outputs: &[u32], gates: &[u8], count: u64) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(b"WMPC\x01\0\0\0");
        v.extend_from_slice(&wires.to_le_bytes());
        v.extend_from_slice(&count.to_le_bytes());
        for widths in [inputs, outputs] {
            v.extend_from_slice(&(widths.len() as u32).to_le_bytes());
            for w in widths {
                v.extend_from_slice(&w.to_le_bytes());
            }
        }
        v.extend_from_slice(gates);
        v
    }

    fn and(a: u32, b: u32, out: u32) -> Vec<u8> {
        let mut g = alloc::vec![OP_AND];
        for w in [a, b, out] {
            g.extend_from_slice(&w.to_le_bytes());
        }
        g
    }

    #[test]
    fn decodes_and_cuts_pieces() {
        let bin = encode(3, &[1, 1], &[1], &and(0, 1, 2), 1);
        let p = pieces(&bin).unwrap();
        assert_eq!(p.len(), 2);
        let (h, len) = Header::parse(&bin).unwrap();
        assert_eq!((h.wires, h.gates, len), (3, 1, p[0].end));
        let mut gates = Vec::new();
        decode_gates(&bin[p[1].clone()], 3, 10, &mut gates).unwrap();
        assert_eq!(gates, [Gate::And { a: 0, b: 1, out: 2 }]);
    }

    #[test]
    fn refuses_bad_encodings() {
        // Wire out of range, gate-count mismatch, truncated gate, bad constant, bad magic.
        assert!(pieces(&encode(3, &[1, 1], &[1], &and(0, 5, 2), 1)).is_err());
        assert!(pieces(&encode(3, &[1, 1], &[1], &and(0, 1, 2), 2)).is_err());
        assert!(pieces(&encode(3, &[1, 1], &[1], &and(0, 1, 2)[..12], 1)).is_err());
        assert!(pieces(&encode(3, &[1, 1], &[1], &[OP_CONST, 2, 2, 0, 0, 0], 1)).is_err());
        let mut bin = encode(3, &[1, 1], &[1], &and(0, 1, 2), 1);
        bin[0] = b'X';
        assert!(pieces(&bin).is_err());
        // More input bits than wires.
        assert!(Header::parse(&encode(1, &[1, 1], &[1], &[], 0)).is_err());
        let mut gates = Vec::new();
        assert!(decode_gates(&[and(0, 1, 2), and(0, 1, 2)].concat(), 3, 1, &mut gates).is_err());
    }
}
