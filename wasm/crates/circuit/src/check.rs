//! The one validity check all entry points share (Bristol parser, binary reader, in-memory
//! validation), so that a circuit accepted by any of them is accepted by all.

use crate::error::{CircuitError, Location};
use crate::{Gate, Wire};

/// Tracks which wires hold a value while gates are read in order.
///
/// Input wires are defined from the start and are not stored; only the other wires get a bit.
/// Callers must bound `wires - input_bits` by the data before constructing one (the bitset is
/// sized by it), which every parser does by checking it against the remaining input length.
pub(crate) struct WireTracker {
    wires: u32,
    input_bits: u32,
    /// Bit `w - input_bits` is set once non-input wire `w` has been written.
    defined: Vec<u64>,
    /// Single assignment (Bristol): writing a defined wire is an error. The binary form allows it
    /// so that [`Circuit::compact`](crate::Circuit::compact) can reuse dead wires.
    ssa: bool,
}

impl WireTracker {
    /// A tracker for `wires` wires of which the first `input_bits` are inputs
    /// (`input_bits <= wires`, checked by the caller).
    pub(crate) fn new(wires: u32, input_bits: u32, ssa: bool) -> Self {
        let tracked = wires.saturating_sub(input_bits) as usize;
        WireTracker { wires, input_bits, defined: vec![0u64; tracked.div_ceil(64)], ssa }
    }

    fn in_range(&self, wire: Wire, at: Location) -> Result<(), CircuitError> {
        if wire < self.wires {
            Ok(())
        } else {
            Err(CircuitError::WireOutOfRange { at, wire, wires: self.wires })
        }
    }

    /// Whether `wire` (in range) holds a value now.
    fn is_defined(&self, wire: Wire) -> bool {
        match wire.checked_sub(self.input_bits) {
            None => true,
            Some(i) => self.defined.get((i / 64) as usize).is_some_and(|word| (word >> (i % 64)) & 1 == 1),
        }
    }

    /// Checks a read of `wire`.
    pub(crate) fn read(&self, wire: Wire, at: Location) -> Result<(), CircuitError> {
        self.in_range(wire, at)?;
        if self.is_defined(wire) {
            Ok(())
        } else {
            Err(CircuitError::UseBeforeDefinition { at, wire })
        }
    }

    /// Checks and records a write of `wire`.
    pub(crate) fn write(&mut self, wire: Wire, at: Location) -> Result<(), CircuitError> {
        self.in_range(wire, at)?;
        if self.ssa && self.is_defined(wire) {
            return Err(CircuitError::Redefinition { at, wire });
        }
        if let Some(i) = wire.checked_sub(self.input_bits) {
            if let Some(word) = self.defined.get_mut((i / 64) as usize) {
                *word |= 1 << (i % 64);
            }
        }
        Ok(())
    }

    /// Checks one gate: its operands are read before its output is written, so a gate whose
    /// output is also an operand (possible only in the non-SSA binary form) reads the old value.
    pub(crate) fn gate(&mut self, gate: &Gate, at: Location) -> Result<(), CircuitError> {
        match *gate {
            Gate::Xor { a, b, out } | Gate::And { a, b, out } => {
                self.read(a, at)?;
                self.read(b, at)?;
                self.write(out, at)
            }
            Gate::Inv { a, out } | Gate::Copy { a, out } => {
                self.read(a, at)?;
                self.write(out, at)
            }
            Gate::Const { out, .. } => self.write(out, at),
        }
    }

    /// After the last gate: every output wire (the last `output_bits` wires) must hold a value.
    pub(crate) fn finish(&self, output_bits: u32, at: Location) -> Result<(), CircuitError> {
        let first = self.wires.saturating_sub(output_bits);
        match (first..self.wires).find(|&w| !self.is_defined(w)) {
            Some(wire) => Err(CircuitError::UndefinedOutput { at, wire }),
            None => Ok(()),
        }
    }
}

/// Sum of value widths as wires, or `None` if it does not fit in a `u32`.
pub(crate) fn total_bits(widths: &[u32]) -> Option<u32> {
    widths.iter().try_fold(0u32, |acc, &w| acc.checked_add(w))
}
