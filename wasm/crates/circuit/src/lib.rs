//! Boolean circuits for webmpc: the model every protocol garbles or secret-shares, its two
//! serialised forms, and the tools around it.
//!
//! - [`Circuit::parse_bristol`] / [`Circuit::to_bristol`]: Bristol Fashion text, with `XOR`,
//!   `AND`, `INV`, `EQ` (constant), `EQW` (copy) and `MAND` (several ANDs, expanded on parse).
//! - [`Circuit::to_binary`] / [`Circuit::from_binary`] / [`GateReader`]: the compact binary form
//!   (below), and [`Circuit::content_hash`], the SHA-256 of it, which parties compare to agree on
//!   a circuit.
//! - [`Circuit::evaluate`]: plaintext evaluation, the reference every protocol is tested against.
//! - [`Circuit::stats`] (gate counts, AND depth) and [`Circuit::compact`] (wire reuse).
//!
//! # Conventions
//!
//! Wires are numbered `0..wires`. Input value 0 occupies the first wires, input 1 the next ones,
//! and so on ([`Circuit::input_wires`]); the outputs are the **last** wires of the circuit, output 0
//! first ([`Circuit::output_wires`]). Wire `k` of a value is bit `k` of that value's integer,
//! least significant first; for byte strings the integer is the big-endian reading of the bytes,
//! so wire 0 is the lowest bit of the *last* byte ([`bits_from_bytes_be`], [`bytes_be_from_bits`]).
//!
//! Gates run in order and may only read wires that are inputs or were written by an earlier
//! gate. That rule is checked by every entry point; it makes the gate list a topological order,
//! so a circuit that passes it **cannot contain a cycle** (a cycle would need some gate to read a
//! wire written later). Bristol files must also be single-assignment (each wire written once);
//! the binary form allows a gate to overwrite a wire, which is what [`Circuit::compact`] uses to
//! reuse the slots of dead wires. A gate reads its operands before writing its output.
//!
//! Every circuit accepted anywhere also has at most `input bits + gates` wires: a wire count
//! beyond that would leave wires that nothing can define, and bounding it by the data is what
//! lets the parsers size their bookkeeping without trusting the header. And it has at most
//! [`MAX_WIRES`] wires, the bound that keeps every per-wire table (evaluation, statistics,
//! garbling) within what a wasm32 instance can hold, since the input widths alone can claim
//! billions of wires in a few bytes.
//!
//! # Binary format, version 1
//!
//! All integers little-endian.
//!
//! | field | bytes | meaning |
//! |---|---|---|
//! | magic | 4 | `"WMPC"` |
//! | version | 1 | `1` |
//! | reserved | 3 | zero |
//! | wires | 4 (u32) | number of wires |
//! | gates | 8 (u64) | number of gates |
//! | n_inputs | 4 (u32) | number of input values, then `n_inputs` × u32 bit widths |
//! | n_outputs | 4 (u32) | number of output values, then `n_outputs` × u32 bit widths |
//! | gates | … | `gates` gates, each a `u8` opcode then its operands (u32 wires) |
//!
//! | opcode | gate | operands | bytes |
//! |---|---|---|---|
//! | 0 | XOR | `a b out` | 13 |
//! | 1 | AND | `a b out` | 13 |
//! | 2 | INV | `a out` | 9 |
//! | 3 | CONST | `value` (u8, 0 or 1) `out` | 6 |
//! | 4 | COPY | `a out` | 9 |
//!
//! Nothing may follow the last gate. The encoding of a circuit is unique (reserved bytes and
//! constants are checked), so two circuits are equal exactly when their encodings, and hence
//! their [`content hashes`](Circuit::content_hash), are.
//!
//! # Untrusted input
//!
//! Parsers never panic and never allocate from a count they have not checked against both the
//! configured [`Limits`] and the amount of data left: vectors grow as gates are actually read.
//! Errors are [`CircuitError`]s naming the line (Bristol) or byte offset (binary).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod binary;
mod bristol;
mod check;
mod compact;
mod error;
mod eval;
mod stats;
pub mod testing;

use core::ops::Range;

pub use binary::{stream_limits, GateReader, GateStream, Header, MAGIC, VERSION};
pub use error::{CircuitError, Location};
pub use eval::{bits_from_bytes_be, bytes_be_from_bits};
pub use stats::Stats;

/// A wire number, `0..Circuit::wires`.
pub type Wire = u32;

/// One gate. Every gate writes exactly one wire, `out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// `out = a ⊕ b` (free in garbling).
    Xor {
        /// First operand.
        a: Wire,
        /// Second operand.
        b: Wire,
        /// Result.
        out: Wire,
    },
    /// `out = a ∧ b` (the gates that cost communication).
    And {
        /// First operand.
        a: Wire,
        /// Second operand.
        b: Wire,
        /// Result.
        out: Wire,
    },
    /// `out = ¬a`.
    Inv {
        /// Operand.
        a: Wire,
        /// Result.
        out: Wire,
    },
    /// `out = value` (Bristol `EQ`).
    Const {
        /// The constant.
        value: bool,
        /// Result.
        out: Wire,
    },
    /// `out = a` (Bristol `EQW`).
    Copy {
        /// Operand.
        a: Wire,
        /// Result.
        out: Wire,
    },
}

impl Gate {
    /// The wire this gate writes.
    pub fn output(&self) -> Wire {
        match *self {
            Gate::Xor { out, .. }
            | Gate::And { out, .. }
            | Gate::Inv { out, .. }
            | Gate::Const { out, .. }
            | Gate::Copy { out, .. } => out,
        }
    }
}

/// A boolean circuit in the conventions of the [crate docs](crate).
///
/// The fields are public so that builders can assemble circuits directly; such a circuit is not
/// checked until [`Circuit::validate`] or [`Circuit::evaluate`] runs, and every method stays
/// panic-free on an invalid one (see each method for what it does then).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Circuit {
    /// Number of wires; every wire number is below it.
    pub wires: u32,
    /// Bit width of each input value, in order.
    pub inputs: Vec<u32>,
    /// Bit width of each output value, in order.
    pub outputs: Vec<u32>,
    /// The gates, in evaluation order.
    pub gates: Vec<Gate>,
}

/// The most wires a circuit may have anywhere in webmpc: 2^25 (about 33.5 million).
///
/// The bound comes from memory, not from the format. Garbling keeps 32 bytes per wire and party
/// (a 16-byte label and a 16-byte schedule record), so a circuit at the bound needs 1 GiB per
/// party: a quarter of the 4 GiB a wasm32 instance can address at all, and two parties in one
/// page (tests, demos) stay within what browsers grant. Plaintext evaluation (1 byte per wire) and
/// [`Circuit::stats`] (4 bytes per wire) fit easily below it. The default [`Limits`], the
/// stream limits and the garbler all enforce it, so a tiny file declaring a huge wire count is a
/// typed `CIRCUIT_TOO_LARGE` error rather than an allocation that aborts the process. Larger
/// computations reuse wires ([`Circuit::compact`], or a streamed circuit that overwrites them).
pub const MAX_WIRES: u32 = 1 << 25;

/// Ceilings on the counts a parser accepts, checked before anything is allocated for them.
/// The defaults suit any circuit this project runs (SHA-512 is about 350,000 wires); `max_wires`
/// may be lowered but the protocols refuse more than [`MAX_WIRES`] whatever a parser accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most wires.
    pub max_wires: u32,
    /// Most gates (after `MAND` expansion).
    pub max_gates: u64,
    /// Most input values, and separately most output values.
    pub max_values: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_wires: MAX_WIRES, max_gates: 1 << 31, max_values: 1 << 20 }
    }
}

impl Circuit {
    /// Parses a Bristol Fashion file under the default [`Limits`]; `MAND` lines become one
    /// [`Gate::And`] per output, `EQ` a [`Gate::Const`], `EQW` a [`Gate::Copy`].
    pub fn parse_bristol(text: &str) -> Result<Circuit, CircuitError> {
        bristol::parse(text, &Limits::default())
    }

    /// [`Circuit::parse_bristol`] under explicit limits.
    pub fn parse_bristol_with(text: &str, limits: &Limits) -> Result<Circuit, CircuitError> {
        bristol::parse(text, limits)
    }

    /// Writes Bristol Fashion text: one line per gate (`EQ` for constants, `EQW` for copies,
    /// never `MAND`), so that `parse_bristol(to_bristol(c)) == c` for every valid single-assignment
    /// circuit. A circuit that overwrites wires (the output of [`Circuit::compact`]) is written
    /// as it is, but is not valid Bristol Fashion: keep such circuits in the binary form.
    pub fn to_bristol(&self) -> String {
        bristol::write(self)
    }

    /// The binary encoding described in the [crate docs](crate#binary-format-version-1).
    pub fn to_binary(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(binary::encoded_len_hint(self));
        binary::encode(self, &mut out);
        out
    }

    /// Decodes and validates a binary encoding under the default [`Limits`].
    pub fn from_binary(bytes: &[u8]) -> Result<Circuit, CircuitError> {
        Circuit::from_binary_with(bytes, &Limits::default())
    }

    /// [`Circuit::from_binary`] under explicit limits.
    pub fn from_binary_with(bytes: &[u8], limits: &Limits) -> Result<Circuit, CircuitError> {
        let mut reader = GateReader::with_limits(bytes, limits)?;
        let mut gates = Vec::new();
        loop {
            let chunk = reader.next_chunk(1 << 16)?;
            if chunk.is_empty() {
                break;
            }
            gates.extend_from_slice(chunk);
        }
        let header = reader.into_header();
        Ok(Circuit { wires: header.wires, inputs: header.inputs, outputs: header.outputs, gates })
    }

    /// SHA-256 of [`Circuit::to_binary`], computed without materialising the encoding.
    pub fn content_hash(&self) -> [u8; 32] {
        use sha2::Digest;
        let mut hasher = sha2::Sha256::new();
        binary::encode(self, &mut hasher);
        hasher.finalize().into()
    }

    /// Gate counts and AND depth; see [`Stats`].
    pub fn stats(&self) -> Stats {
        stats::stats(self)
    }

    /// The wires of input value `i`. Empty if there is no such input (or the widths overflow).
    pub fn input_wires(&self, i: usize) -> Range<u32> {
        value_range(&self.inputs, i, 0)
    }

    /// The wires of output value `i`: outputs are the last wires, output 0 first. Empty if there
    /// is no such output or the outputs do not fit in `wires`.
    pub fn output_wires(&self, i: usize) -> Range<u32> {
        match check::total_bits(&self.outputs).and_then(|total| self.wires.checked_sub(total)) {
            Some(first) => value_range(&self.outputs, i, first),
            None => 0..0,
        }
    }

    /// Total input bits (`None` if the widths overflow `u32`).
    pub fn input_bits(&self) -> Option<u32> {
        check::total_bits(&self.inputs)
    }

    /// Total output bits (`None` if the widths overflow `u32`).
    pub fn output_bits(&self) -> Option<u32> {
        check::total_bits(&self.outputs)
    }

    /// Checks everything the parsers check (counts, wire ranges, definition before use, outputs
    /// defined, at most [`MAX_WIRES`] wires), for circuits assembled in memory. Errors point at a [`Location::Gate`]. Writing
    /// a wire twice is allowed, as in the binary form.
    pub fn validate(&self) -> Result<(), CircuitError> {
        let at = Location::Circuit;
        if self.wires > MAX_WIRES {
            return Err(CircuitError::TooLarge { at, what: "wire count", limit: u64::from(MAX_WIRES) });
        }
        let input_bits = self.input_bits().ok_or_else(|| bad_counts(at, "input widths overflow u32"))?;
        let output_bits = self.output_bits().ok_or_else(|| bad_counts(at, "output widths overflow u32"))?;
        if input_bits > self.wires {
            return Err(bad_counts(at, "input bits exceed the wire count"));
        }
        if output_bits > self.wires {
            return Err(bad_counts(at, "output bits exceed the wire count"));
        }
        if u64::from(self.wires - input_bits) > self.gates.len() as u64 {
            return Err(bad_counts(at, "more non-input wires than gates to define them"));
        }
        let mut tracker = check::WireTracker::new(self.wires, input_bits, false);
        for (i, gate) in self.gates.iter().enumerate() {
            tracker.gate(gate, Location::Gate(i as u64))?;
        }
        tracker.finish(output_bits, at)
    }

    /// Evaluates the circuit on plaintext inputs: `inputs[i][k]` is wire `k` of input value `i`
    /// (bit `k` of its integer). Returns the output values the same way. Refuses inputs of the
    /// wrong number or width, and invalid circuits (see [`Circuit::validate`]).
    pub fn evaluate(&self, inputs: &[Vec<bool>]) -> Result<Vec<Vec<bool>>, CircuitError> {
        eval::evaluate(self, inputs)
    }

    /// Renumbers wires so that the slots of dead values are reused (a value is live from the gate
    /// that writes it to the last gate that reads it; outputs are live to the end).
    ///
    /// The result computes the same function with the same inputs and outputs and the same gates
    /// in the same order, only renumbered. Input value wires stay first and outputs stay the last wires; `wires` drops
    /// to at most (the most simultaneously live non-output values) + (output bits), where a value
    /// is live from the gate that writes it to the last gate that reads it. Gates overwrite dead
    /// wires, so the result is for the binary form and the protocols, not for Bristol text.
    /// An invalid circuit (see [`Circuit::validate`]) is returned unchanged.
    pub fn compact(&self) -> Circuit {
        compact::compact(self)
    }
}

fn bad_counts(at: Location, msg: &str) -> CircuitError {
    CircuitError::BadCounts { at, msg: msg.to_string() }
}

/// Wires `first + sum(widths[..i]) .. + widths[i]`, or empty when out of range or overflowing.
fn value_range(widths: &[u32], i: usize, first: u32) -> Range<u32> {
    let Some(&width) = widths.get(i) else { return 0..0 };
    let start = widths[..i].iter().try_fold(first, |acc, &w| acc.checked_add(w));
    match start.and_then(|s| s.checked_add(width).map(|e| s..e)) {
        Some(range) => range,
        None => 0..0,
    }
}
