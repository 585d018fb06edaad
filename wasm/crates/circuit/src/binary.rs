//! The binary form (see the [crate docs](crate#binary-format-version-1)): encoder and the
//! streaming, validating decoder [`GateReader`].

use crate::check::{total_bits, WireTracker};
use crate::error::{CircuitError, Location};
use crate::{Circuit, Gate, Limits, Wire};

/// The first four bytes of every encoding.
pub const MAGIC: [u8; 4] = *b"WMPC";
/// The format version this crate writes and reads.
pub const VERSION: u8 = 1;

const OP_XOR: u8 = 0;
const OP_AND: u8 = 1;
const OP_INV: u8 = 2;
const OP_CONST: u8 = 3;
const OP_COPY: u8 = 4;
/// The shortest gate (CONST: opcode, value, out). Bounds a declared gate count by the data.
const MIN_GATE_BYTES: usize = 6;

/// Where encoded bytes go: a buffer, or straight into a hash.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for sha2::Sha256 {
    fn put(&mut self, bytes: &[u8]) {
        sha2::Digest::update(self, bytes);
    }
}

/// A capacity guess for [`encode`]: exact for circuits of only XOR/AND gates.
pub(crate) fn encoded_len_hint(c: &Circuit) -> usize {
    let values = c.inputs.len().saturating_add(c.outputs.len());
    28usize.saturating_add(values.saturating_mul(4)).saturating_add(c.gates.len().saturating_mul(13))
}

/// Writes the encoding of `c`. Counts that do not fit their fields (more than 2^32 - 1 values,
/// possible only in a hand-built circuit) are written truncated, which the decoder rejects.
pub(crate) fn encode(c: &Circuit, out: &mut impl Sink) {
    out.put(&MAGIC);
    out.put(&[VERSION, 0, 0, 0]);
    out.put(&c.wires.to_le_bytes());
    out.put(&(c.gates.len() as u64).to_le_bytes());
    for widths in [&c.inputs, &c.outputs] {
        out.put(&(widths.len() as u32).to_le_bytes());
        for w in widths.iter() {
            out.put(&w.to_le_bytes());
        }
    }
    let mut buf = [0u8; 13];
    for gate in &c.gates {
        let len = encode_gate(gate, &mut buf);
        out.put(&buf[..len]);
    }
}

/// Encodes one gate into `buf`, returning its length.
fn encode_gate(gate: &Gate, buf: &mut [u8; 13]) -> usize {
    let mut put = |i: usize, w: Wire| buf[i..i + 4].copy_from_slice(&w.to_le_bytes());
    let (op, len) = match *gate {
        Gate::Xor { a, b, out } | Gate::And { a, b, out } => {
            put(1, a);
            put(5, b);
            put(9, out);
            (if matches!(gate, Gate::Xor { .. }) { OP_XOR } else { OP_AND }, 13)
        }
        Gate::Inv { a, out } | Gate::Copy { a, out } => {
            put(1, a);
            put(5, out);
            (if matches!(gate, Gate::Inv { .. }) { OP_INV } else { OP_COPY }, 9)
        }
        Gate::Const { value, out } => {
            put(2, out);
            buf[1] = u8::from(value);
            (OP_CONST, 6)
        }
    };
    buf[0] = op;
    len
}

/// The fields of an encoding before its gates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Number of wires.
    pub wires: u32,
    /// Bit width of each input value.
    pub inputs: Vec<u32>,
    /// Bit width of each output value.
    pub outputs: Vec<u32>,
    /// Number of gates that follow.
    pub gates: u64,
}

/// Reads a binary circuit a chunk of gates at a time, validating as it goes, so that a garbler
/// can stream a circuit of any size with memory for one chunk.
///
/// ```
/// # use webmpc_circuit::{Circuit, GateReader};
/// # let bytes = Circuit::parse_bristol("1 3\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n").unwrap().to_binary();
/// let mut reader = GateReader::new(&bytes)?;
/// let wires = reader.header().wires;
/// loop {
///     let gates = reader.next_chunk(4096)?;
///     if gates.is_empty() {
///         break; // all gates read and the whole encoding checked
///     }
///     // ... garble `gates` ...
/// }
/// # Ok::<(), webmpc_circuit::CircuitError>(())
/// ```
///
/// Each chunk has been checked (wire ranges, definition before use) before it is returned. The
/// checks that need the whole circuit (outputs defined, nothing after the last gate) run when the
/// last gate is read, so the chunk holding it is returned only if the whole encoding is valid.
/// After an error every later call returns the same error.
pub struct GateReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    header: Header,
    /// Gates not yet read.
    left: u64,
    output_bits: u32,
    tracker: WireTracker,
    chunk: Vec<Gate>,
    failed: Option<CircuitError>,
}

/// Reads the header's fields in order.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CircuitError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(CircuitError::Truncated { at: at(self.pos) })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, CircuitError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, CircuitError> {
        let lo = u64::from(self.u32()?);
        let hi = u64::from(self.u32()?);
        Ok(lo | hi << 32)
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// `n` widths, after checking the data holds them (so the vector is backed by it).
    fn widths(&mut self, what: &'static str, limit: u32) -> Result<Vec<u32>, CircuitError> {
        let start = self.pos;
        let n = self.u32()?;
        if n > limit {
            return Err(CircuitError::TooLarge { at: at(start), what, limit: u64::from(limit) });
        }
        if n as usize > self.remaining() / 4 {
            return Err(CircuitError::Truncated { at: at(self.bytes.len()) });
        }
        (0..n).map(|_| self.u32()).collect()
    }
}

fn at(pos: usize) -> Location {
    Location::Byte(pos as u64)
}

impl<'a> GateReader<'a> {
    /// Reads and checks the header under the default [`Limits`].
    pub fn new(bytes: &'a [u8]) -> Result<Self, CircuitError> {
        Self::with_limits(bytes, &Limits::default())
    }

    /// Reads and checks the header under explicit limits.
    pub fn with_limits(bytes: &'a [u8], limits: &Limits) -> Result<Self, CircuitError> {
        let parsed = parse_header(bytes, limits, true)?;
        Ok(GateReader {
            bytes,
            pos: parsed.len,
            left: parsed.header.gates,
            output_bits: parsed.output_bits,
            tracker: WireTracker::new(parsed.header.wires, parsed.input_bits, false),
            header: parsed.header,
            chunk: Vec::new(),
            failed: None,
        })
    }

    /// The header, valid from construction on.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The header, consuming the reader.
    pub fn into_header(self) -> Header {
        self.header
    }

    /// Gates not yet returned.
    pub fn remaining(&self) -> u64 {
        self.left
    }

    /// The next at most `max` gates (at least one while any are left; `max = 0` counts as 1),
    /// checked; an empty slice once all gates have been read and the encoding fully validated.
    pub fn next_chunk(&mut self, max: usize) -> Result<&[Gate], CircuitError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        match self.fill(max.max(1)) {
            Ok(()) => Ok(&self.chunk),
            Err(e) => {
                self.chunk.clear();
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    fn fill(&mut self, max: usize) -> Result<(), CircuitError> {
        self.chunk.clear();
        if self.left == 0 {
            return Ok(());
        }
        // Bounded by the gates left, which the header check bounded by the data.
        let n = usize::try_from(self.left).unwrap_or(usize::MAX).min(max);
        self.chunk.reserve(n);
        for _ in 0..n {
            let start = self.pos;
            let gate = self.decode_gate()?;
            self.tracker.gate(&gate, at(start))?;
            self.chunk.push(gate);
        }
        self.left -= n as u64;
        if self.left == 0 {
            if self.pos != self.bytes.len() {
                return Err(CircuitError::TrailingData { at: at(self.pos) });
            }
            self.tracker.finish(self.output_bits, at(self.pos))?;
        }
        Ok(())
    }

    fn decode_gate(&mut self) -> Result<Gate, CircuitError> {
        match decode_gate_at(&self.bytes[self.pos..], self.pos)? {
            Some((gate, len)) => {
                self.pos += len;
                Ok(gate)
            }
            None => Err(CircuitError::Truncated { at: at(self.pos) }),
        }
    }
}

/// A parsed header: the fields, its encoded length, and the bit totals.
struct ParsedHeader {
    header: Header,
    len: usize,
    input_bits: u32,
    output_bits: u32,
}

/// Reads and checks the header at the start of `bytes`. With `whole` (the full encoding is in
/// `bytes`), the gate count must also be backed by the data; a stream checks it against `limits`
/// only, and its tracker is bounded by `limits.max_wires`.
fn parse_header(bytes: &[u8], limits: &Limits, whole: bool) -> Result<ParsedHeader, CircuitError> {
    let mut c = Cursor { bytes, pos: 0 };
    // A short prefix of something else is "not a circuit" rather than "truncated".
    let magic_len = bytes.len().min(4);
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(CircuitError::Syntax { at: at(0), msg: "not a webmpc binary circuit (bad magic)".into() });
    }
    c.take(4)?;
    let version = c.take(1)?[0];
    if version != VERSION {
        return Err(CircuitError::UnsupportedVersion { version });
    }
    if c.take(3)? != [0, 0, 0] {
        return Err(CircuitError::Syntax { at: at(5), msg: "reserved bytes must be zero".into() });
    }
    let wires = c.u32()?;
    if wires > limits.max_wires {
        return Err(CircuitError::TooLarge { at: at(8), what: "wire count", limit: u64::from(limits.max_wires) });
    }
    let gates = c.u64()?;
    if gates > limits.max_gates {
        return Err(CircuitError::TooLarge { at: at(12), what: "gate count", limit: limits.max_gates });
    }
    let inputs_at = c.pos;
    let inputs = c.widths("number of input values", limits.max_values)?;
    let input_bits = total_bits(&inputs)
        .filter(|&bits| bits <= wires)
        .ok_or_else(|| bad_counts(inputs_at, "input bits exceed the wire count"))?;
    let outputs_at = c.pos;
    let outputs = c.widths("number of output values", limits.max_values)?;
    let output_bits = total_bits(&outputs)
        .filter(|&bits| bits <= wires)
        .ok_or_else(|| bad_counts(outputs_at, "output bits exceed the wire count"))?;
    // Each gate takes at least MIN_GATE_BYTES, so the data bounds the gate count, and the gate
    // count bounds the non-input wires (each needs a gate to define it): only then is the
    // tracker, one bit per non-input wire, allocated.
    if whole && gates > (c.remaining() / MIN_GATE_BYTES) as u64 {
        return Err(CircuitError::Truncated { at: at(bytes.len()) });
    }
    if u64::from(wires - input_bits) > gates {
        return Err(bad_counts(8, "more non-input wires than gates to define them"));
    }
    Ok(ParsedHeader { header: Header { wires, inputs, outputs, gates }, len: c.pos, input_bits, output_bits })
}

/// Decodes the gate at the start of `rest` (found at byte `start` of the encoding): `None` if
/// `rest` holds only part of it.
fn decode_gate_at(rest: &[u8], start: usize) -> Result<Option<(Gate, usize)>, CircuitError> {
    let Some(&op) = rest.first() else { return Ok(None) };
    let len = match op {
        OP_XOR | OP_AND => 13,
        OP_INV | OP_COPY => 9,
        OP_CONST => 6,
        _ => return Err(CircuitError::UnknownGate { at: at(start) }),
    };
    let Some(g) = rest.get(..len) else { return Ok(None) };
    let w = |i: usize| Wire::from_le_bytes([g[i], g[i + 1], g[i + 2], g[i + 3]]);
    let gate = match op {
        OP_XOR => Gate::Xor { a: w(1), b: w(5), out: w(9) },
        OP_AND => Gate::And { a: w(1), b: w(5), out: w(9) },
        OP_INV => Gate::Inv { a: w(1), out: w(5) },
        OP_COPY => Gate::Copy { a: w(1), out: w(5) },
        _ => {
            let value = match g[1] {
                0 => false,
                1 => true,
                _ => return Err(CircuitError::Syntax { at: at(start + 1), msg: "CONST value must be 0 or 1".into() }),
            };
            Gate::Const { value, out: w(2) }
        }
    };
    Ok(Some((gate, len)))
}

/// Limits for [`GateStream`]: the gate count is not backed by data that is already here, so it
/// may be far larger than an in-memory circuit's; the wire count (which sizes the definedness
/// bitset, and the garbler's labels) keeps the ceiling of [`MAX_WIRES`](crate::MAX_WIRES).
pub fn stream_limits() -> Limits {
    Limits { max_gates: 1 << 40, ..Limits::default() }
}

/// Decodes a binary circuit that arrives in pieces of any size (from a file, the network or a
/// generator), validating as [`GateReader`] does and hashing every byte, so that circuits far
/// larger than memory can be garbled with memory for the wire labels and one chunk.
///
/// Feed bytes with [`push`](Self::push), take gates with [`next_chunk_into`](Self::next_chunk_into)
/// (empty while more bytes are needed), and call [`finish`](Self::finish) after the last gate: it
/// runs the whole-circuit checks and returns the content hash of everything pushed, which equals
/// [`Circuit::content_hash`](crate::Circuit::content_hash) of the same encoding.
pub struct GateStream {
    header: Header,
    left: u64,
    output_bits: u32,
    tracker: WireTracker,
    /// Pushed bytes not yet decoded.
    buf: Vec<u8>,
    /// Offset of `buf[0]` in the encoding (for error positions).
    offset: usize,
    hasher: sha2::Sha256,
    failed: Option<CircuitError>,
}

impl GateStream {
    /// Starts a stream from its first bytes, which must hold at least the whole header.
    pub fn new(prefix: &[u8], limits: &Limits) -> Result<Self, CircuitError> {
        let parsed = parse_header(prefix, limits, false)?;
        let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
        sha2::Digest::update(&mut hasher, prefix);
        Ok(GateStream {
            left: parsed.header.gates,
            output_bits: parsed.output_bits,
            tracker: WireTracker::new(parsed.header.wires, parsed.input_bits, false),
            buf: prefix[parsed.len..].to_vec(),
            offset: parsed.len,
            header: parsed.header,
            hasher,
            failed: None,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Gates not yet returned.
    pub fn remaining(&self) -> u64 {
        self.left
    }

    /// Appends the next bytes of the encoding.
    pub fn push(&mut self, bytes: &[u8]) {
        sha2::Digest::update(&mut self.hasher, bytes);
        self.buf.extend_from_slice(bytes);
    }

    /// Replaces `out` with the next at most `max` complete gates, checked. `out` is left empty
    /// when no complete gate is buffered (push more) or all gates have been read.
    pub fn next_chunk_into(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), CircuitError> {
        out.clear();
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut pos = 0;
        let result = (|| -> Result<(), CircuitError> {
            while self.left > 0 && out.len() < max.max(1) {
                let Some((gate, len)) = decode_gate_at(&self.buf[pos..], self.offset + pos)? else { break };
                self.tracker.gate(&gate, at(self.offset + pos))?;
                out.push(gate);
                pos += len;
                self.left -= 1;
            }
            Ok(())
        })();
        self.buf.drain(..pos);
        self.offset += pos;
        if let Err(e) = &result {
            out.clear();
            self.failed = Some(e.clone());
        }
        result
    }

    /// After the last gate: checks that nothing follows it and that every output is defined,
    /// and returns the SHA-256 of the whole encoding.
    pub fn finish(mut self) -> Result<[u8; 32], CircuitError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.left > 0 {
            return Err(CircuitError::Truncated { at: at(self.offset + self.buf.len()) });
        }
        if !self.buf.is_empty() {
            return Err(CircuitError::TrailingData { at: at(self.offset) });
        }
        self.tracker.finish(self.output_bits, at(self.offset))?;
        Ok(sha2::Digest::finalize(self.hasher).into())
    }
}

fn bad_counts(pos: usize, msg: &str) -> CircuitError {
    CircuitError::BadCounts { at: at(pos), msg: msg.to_string() }
}
