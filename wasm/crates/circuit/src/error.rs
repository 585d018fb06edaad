//! Why a circuit was refused. Every structural error says where: a line of a Bristol file, a
//! byte offset of a binary encoding, or a gate index of an in-memory [`Circuit`](crate::Circuit).
//! Messages carry positions, wire numbers and counts only, never input values (they may be
//! secret) and never stretches of the file (they may be huge).

use core::fmt;

/// Where in its source an error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A 1-based line of a Bristol Fashion file.
    Line(usize),
    /// A byte offset into a binary encoding (the start of the field or gate at fault).
    Byte(u64),
    /// A 0-based index into [`Circuit::gates`](crate::Circuit::gates), for circuits built in memory.
    Gate(u64),
    /// The circuit as a whole (a header of an in-memory circuit, or the end of all gates).
    Circuit,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(n) => write!(f, "line {n}"),
            Location::Byte(n) => write!(f, "byte {n}"),
            Location::Gate(n) => write!(f, "gate {n}"),
            Location::Circuit => write!(f, "circuit"),
        }
    }
}

/// What a circuit parser, reader, validator or evaluator can refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CircuitError {
    /// Text that is not Bristol Fashion (a bad number, a wrong token count, a gate's arity), or
    /// a binary field with an invalid value (magic, reserved bytes, a constant other than 0/1).
    #[error("{at}: {msg}")]
    Syntax {
        /// Where.
        at: Location,
        /// What is wrong, in words (never quoting the input).
        msg: String,
    },
    /// A gate type the format does not have (an unknown Bristol operation or binary opcode).
    #[error("{at}: unknown gate type")]
    UnknownGate {
        /// Where.
        at: Location,
    },
    /// A wire number at or above the circuit's declared wire count.
    #[error("{at}: wire {wire} is out of range (the circuit has {wires} wires)")]
    WireOutOfRange {
        /// Where.
        at: Location,
        /// The offending wire.
        wire: Wire,
        /// The declared number of wires.
        wires: u32,
    },
    /// A gate reads a wire that is neither an input nor the output of an earlier gate. Because
    /// gates may only read wires written before them, a circuit that passes this check is in
    /// topological order and cannot contain a cycle.
    #[error("{at}: wire {wire} is used before it is defined")]
    UseBeforeDefinition {
        /// Where.
        at: Location,
        /// The wire read too early.
        wire: Wire,
    },
    /// A Bristol gate writes a wire that is already defined (an input, or an earlier gate's
    /// output): Bristol Fashion is single-assignment.
    #[error("{at}: wire {wire} is defined twice")]
    Redefinition {
        /// Where.
        at: Location,
        /// The wire written twice.
        wire: Wire,
    },
    /// Counts that disagree: with each other (input bits above the wire count), or with the
    /// data (fewer gate lines than the header declares).
    #[error("{at}: {msg}")]
    BadCounts {
        /// Where.
        at: Location,
        /// Which counts disagree, in words.
        msg: String,
    },
    /// An output wire is never defined, so the circuit has no value for it.
    #[error("{at}: output wire {wire} is never defined")]
    UndefinedOutput {
        /// Where the gates ended.
        at: Location,
        /// The undefined output wire.
        wire: Wire,
    },
    /// A count above the configured [`Limits`](crate::Limits), or above what the remaining input
    /// could possibly hold. Refused before anything is allocated for it.
    #[error("{at}: {what} exceeds the limit of {limit}")]
    TooLarge {
        /// Where the count was read.
        at: Location,
        /// Which count.
        what: &'static str,
        /// The most allowed here.
        limit: u64,
    },
    /// A binary encoding that ends in the middle of its header or of a gate.
    #[error("{at}: the encoding ends early")]
    Truncated {
        /// Where the missing data should start.
        at: Location,
    },
    /// Anything after the last gate but blank lines (Bristol) or anything at all (binary).
    #[error("{at}: unexpected data after the last gate")]
    TrailingData {
        /// Where the extra data starts.
        at: Location,
    },
    /// A binary encoding of a format version this crate does not know.
    #[error("unsupported binary circuit version {version} (this reader knows version 1)")]
    UnsupportedVersion {
        /// The version byte found.
        version: u8,
    },
    /// [`Circuit::evaluate`](crate::Circuit::evaluate) got a different number of input values
    /// than the circuit has.
    #[error("expected {expected} input values, got {got}")]
    WrongInputCount {
        /// Input values of the circuit.
        expected: usize,
        /// Input values given.
        got: usize,
    },
    /// An input value of the wrong width.
    #[error("input {index}: expected {expected} bits, got {got}")]
    WrongInputSize {
        /// Which input value (0-based).
        index: usize,
        /// Its width in the circuit.
        expected: u64,
        /// The width given (bits, or bytes × 8 for byte inputs that do not fit).
        got: u64,
    },
}

use crate::Wire;

impl CircuitError {
    /// A stable machine-readable code, used by the bindings to build typed JS errors:
    /// `MALFORMED_CIRCUIT`, `CIRCUIT_TOO_LARGE` or `WRONG_INPUT_SIZE`.
    pub fn code(&self) -> &'static str {
        match self {
            CircuitError::TooLarge { .. } => "CIRCUIT_TOO_LARGE",
            CircuitError::WrongInputCount { .. } | CircuitError::WrongInputSize { .. } => "WRONG_INPUT_SIZE",
            CircuitError::Syntax { .. }
            | CircuitError::UnknownGate { .. }
            | CircuitError::WireOutOfRange { .. }
            | CircuitError::UseBeforeDefinition { .. }
            | CircuitError::Redefinition { .. }
            | CircuitError::BadCounts { .. }
            | CircuitError::UndefinedOutput { .. }
            | CircuitError::Truncated { .. }
            | CircuitError::TrailingData { .. }
            | CircuitError::UnsupportedVersion { .. } => "MALFORMED_CIRCUIT",
        }
    }

    /// Where the error was found, if it is about a place in the circuit.
    pub fn location(&self) -> Option<Location> {
        match self {
            CircuitError::Syntax { at, .. }
            | CircuitError::UnknownGate { at }
            | CircuitError::WireOutOfRange { at, .. }
            | CircuitError::UseBeforeDefinition { at, .. }
            | CircuitError::Redefinition { at, .. }
            | CircuitError::BadCounts { at, .. }
            | CircuitError::UndefinedOutput { at, .. }
            | CircuitError::TooLarge { at, .. }
            | CircuitError::Truncated { at }
            | CircuitError::TrailingData { at } => Some(*at),
            CircuitError::UnsupportedVersion { .. } => Some(Location::Byte(4)),
            CircuitError::WrongInputCount { .. } | CircuitError::WrongInputSize { .. } => None,
        }
    }

    /// The 1-based Bristol line of the error, if it came from [`Circuit::parse_bristol`](crate::Circuit::parse_bristol).
    pub fn line(&self) -> Option<usize> {
        match self.location() {
            Some(Location::Line(n)) => Some(n),
            _ => None,
        }
    }

    /// The byte offset of the error, if it came from a binary encoding.
    pub fn offset(&self) -> Option<u64> {
        match self.location() {
            Some(Location::Byte(n)) => Some(n),
            _ => None,
        }
    }
}
