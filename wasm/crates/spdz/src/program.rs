//! The arithmetic program format: what the TypeScript program builder emits and
//! [`crate::online`] runs. Compact, versioned, and validated on decode: a malformed program is a
//! typed [`ProgramError`], never a panic.
//!
//! # Encoding (version 1)
//!
//! All integers marked *varint* are unsigned LEB128 (7 bits per byte, low bits first, high bit =
//! "more"), at most 5 bytes and at most 2^32 − 1, minimal (no trailing zero groups). Constants
//! are 16-byte little-endian canonical field elements (`< p` in F_p; any 16 bytes in GF(2^128)).
//!
//! ```text
//! magic      4 bytes   "WMPA"
//! version    u8        1
//! field      u8        0 = F_p (p = 2^128 − 173), 1 = GF(2^128)
//! parties    u16 LE    2 ..= 1024; must equal the session's
//! n_inputs   varint
//! n_instrs   varint    n_inputs + n_instrs ≤ 2^22
//! n_outputs  varint    ≤ 2^20
//! inputs     n_inputs × { owner: varint (< parties, or CLIENT_OWNER), kind: u8, bits: u8 }
//!              owner CLIENT_OWNER = 0xFFFF_FFFF (the largest varint): supplied by an
//!              external client through `Party::run_with_clients` (see below)
//!              kind 0 = field element (bits must be 0)
//!              kind 1 = unsigned integer of `bits` bits, 1 ..= 64 (F_p only)
//!              kind 2 = signed (two's complement) integer of `bits` bits, 1 ..= 64 (F_p only)
//! instrs     n_instrs × { opcode: u8, operands }
//! outputs    n_outputs × { value: varint, kind: u8 (as for inputs, bits omitted),
//!                          count: varint, count × party: varint }
//!              count 0 = revealed to every party; otherwise the recipients, strictly
//!              increasing, each < parties
//! ```
//!
//! Values are numbered in order: inputs first (0 ..), then one value per instruction. An operand
//! must name an earlier value (so every program is acyclic and in evaluation order).
//!
//! | opcode | name   | operands            | result                                      |
//! |--------|--------|---------------------|---------------------------------------------|
//! | 0x01   | ADD    | a b                 | a + b                                       |
//! | 0x02   | SUB    | a b                 | a − b                                       |
//! | 0x03   | NEG    | a                   | −a                                          |
//! | 0x04   | MULC   | a, constant c       | c·a                                         |
//! | 0x05   | ADDC   | a, constant c       | a + c                                       |
//! | 0x06   | MUL    | a b                 | a·b (one Beaver triple)                     |
//! | 0x07   | LT     | a b, bits: u8       | 1 if a < b else 0 (F_p only)                |
//! | 0x08   | LE     | a b, bits: u8       | 1 if a ≤ b else 0 (F_p only)                |
//! | 0x09   | EQ     | a b, bits: u8       | 1 if a = b else 0 (F_p only)                |
//! | 0x0A   | SELECT | c a b               | a if c = 1, b if c = 0 (c must be 0 or 1)   |
//! | 0x0B   | CONST  | constant c          | c                                           |
//!
//! For LT, LE and EQ, `bits` (1 ..= 64) bounds the operands: both are k-bit integers, unsigned
//! (`[0, 2^k)`) or signed (`[−2^(k−1), 2^(k−1))`, negative numbers being p − |x|) — the same
//! circuit serves both, because it looks only at a − b ∈ (−2^k, 2^k). Variable operands and
//! operands mixing widths are the builder's business: it must pass the larger width.
//!
//! # Ranges, and what the protocol guarantees
//!
//! * **Integer inputs are range-checked.** An input of kind unsigned or signed k bits is input as
//!   its k bits (one input mask each) and every bit b is checked to satisfy b² = b (one Beaver
//!   triple each) before any comparison that depends on it opens a masked value, and before any
//!   output. A malicious owner cannot input anything outside the declared range: the run aborts
//!   with `MAC_CHECK_FAILED` (phase "input range check"). Cost per k-bit input: k input masks and
//!   k triples ([`Program::requirements`] counts them). A field input costs one mask and is not
//!   checked: it is any element of the field.
//! * **Comparison results are always 0 or 1**, whatever the operands (see
//!   [`crate::online_core`]): SELECT on a comparison can never mix its two branches. SELECT
//!   on any other condition (a field input, a product) needs that condition to be 0 or 1; the
//!   builder must make sure of it (a 1-bit integer input or a comparison result is).
//! * **Operands out of a comparison's declared range** can only come from the program itself
//!   (field inputs, products or sums that overflow the width): they give a wrong 0/1 and are
//!   hidden less well — the masked opening hides a value in its range with statistical distance
//!   2^−κ, a value outside it less, or not at all (a field input multiplied by an honest
//!   value and compared can reveal that value). A program must only compare values that fit its
//!   declared width for *every* choice of the other parties' inputs within their declared kinds.
//!
//! # Client inputs
//!
//! An input whose owner is [`CLIENT_OWNER`] comes from an external client that runs no
//! preprocessing and holds no share of anything ([`crate::clients`]): the parties (the "servers")
//! hand it one checked Beaver triple per mask, it verifies c = a·b and sends ε = x − a, and the
//! servers set [[x]] = [[a]] + ε, exactly as for a party's input. An integer client input costs k
//! client masks (one per bit) and the same k range-check triples as a party's; a field client
//! input one mask. Client masks are not input masks: [`Program::requirements`] counts none for
//! client inputs, only their range-check triples. [`crate::Party::run`] refuses a program with
//! client inputs (`INVALID_ARGUMENT`): they go through [`crate::Party::run_with_clients`].
//!
//! Comparisons use Catrina–de Hoogh's statistical masking with κ = min(64, 125 − k) bits per
//! k-bit comparison (64 up to k = 61, at least 61 for every allowed k; see
//! [`crate::online_core::stat_sec`]): a program with C comparisons leaks at most C·2^−61 in
//! statistical distance about operands that are in their declared range.

use crate::field::{Field, FieldKind};
use crate::store::Counts;
use sha2::{Digest, Sha256};

/// The magic bytes.
pub const MAGIC: &[u8; 4] = b"WMPA";
/// The version this code reads and writes.
pub const VERSION: u8 = 1;
/// Most parties a program may name.
pub const MAX_PARTIES: usize = 1024;
/// Most values (inputs + instructions).
pub const MAX_VALUES: usize = 1 << 22;
/// Most outputs.
pub const MAX_OUTPUTS: usize = 1 << 20;
/// Largest operand width of a comparison.
pub const MAX_CMP_BITS: u8 = 64;
/// The input owner that means "an external client" (the largest varint the format allows).
pub const CLIENT_OWNER: u32 = 0xFFFF_FFFF;

/// Why a program was refused. `offset` is the byte position of the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// The bytes ended early.
    #[error("program truncated at byte {offset}")]
    Truncated {
        /// Where more bytes were expected.
        offset: usize,
    },
    /// Not a program, or a version this code does not read.
    #[error("not a version-{VERSION} webmpc arithmetic program (byte {offset})")]
    BadHeader {
        /// The offending byte.
        offset: usize,
    },
    /// A field that does not decode or violates a rule.
    #[error("invalid program at byte {offset}: {reason}")]
    Invalid {
        /// The offending byte.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A count above the format's limits.
    #[error("program {what} exceeds the limit of {limit}")]
    TooLarge {
        /// Which count.
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// The program does not fit the session (field, number of parties) or the inputs given.
    #[error("program does not fit: {0}")]
    Mismatch(String),
}

impl ProgramError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ProgramError::TooLarge { .. } => "PROGRAM_TOO_LARGE",
            ProgramError::Mismatch(_) => "INVALID_ARGUMENT",
            _ => "MALFORMED_PROGRAM",
        }
    }
}

/// What an input or output value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A field element.
    Field,
    /// An unsigned integer of this many bits (inputs), or read as an unsigned integer (outputs).
    Unsigned(u8),
    /// A signed integer of this many bits (inputs), or read as signed (outputs).
    Signed(u8),
}

impl Kind {
    /// Input masks an input of this kind takes: one for a field element, one per bit for an
    /// integer (it is input bit by bit, so that its range can be checked).
    pub fn input_masks(self) -> usize {
        match self {
            Kind::Field => 1,
            Kind::Unsigned(k) | Kind::Signed(k) => k as usize,
        }
    }

    /// The input kind declared by the bytes (`kind`, `bits`) of the inputs table (0 field, 1
    /// unsigned, 2 signed; `bits` 0 for a field element, 1 ..= 64 for integers, which need the
    /// prime field): the decoder's rules, with offsets relative to these two bytes.
    pub fn input_from_bytes(field: FieldKind, kind: u8, bits: u8) -> Result<Kind, ProgramError> {
        read_kind(&mut Reader { b: &[kind, bits], at: 0 }, field, true)
    }

    /// Whether a program over `field` may declare an input of this kind.
    pub fn is_valid_input(self, field: FieldKind) -> bool {
        let (k, b) = kind_byte(self);
        Kind::input_from_bytes(field, k, b) == Ok(self)
    }

    /// Bits whose b² = b check an input of this kind needs (one triple each): 0 for a field
    /// element, k for a k-bit integer.
    pub fn range_bits(self) -> usize {
        match self {
            Kind::Field => 0,
            Kind::Unsigned(k) | Kind::Signed(k) => k as usize,
        }
    }
}

/// Who supplies an input. An enum rather than a bare index, so that the client sentinel can never
/// index a per-party table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// Party `i` of the session (encoded as `i`).
    Party(usize),
    /// An external client, through [`crate::Party::run_with_clients`] (encoded as
    /// [`CLIENT_OWNER`]).
    Client,
}

impl Owner {
    /// The party index, `None` for a client.
    pub fn party(self) -> Option<usize> {
        match self {
            Owner::Party(p) => Some(p),
            Owner::Client => None,
        }
    }

    /// True for party `p`'s inputs (never for a client's).
    pub fn is_party(self, p: usize) -> bool {
        self == Owner::Party(p)
    }

    /// The varint written for this owner (a party index that does not fit 32 bits is truncated,
    /// and [`Program::validate`] then refuses it).
    fn code(self) -> u32 {
        match self {
            Owner::Party(p) => p as u32,
            Owner::Client => CLIENT_OWNER,
        }
    }
}

/// One input value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    /// Who supplies it.
    pub owner: Owner,
    /// What it is.
    pub kind: Kind,
}

/// A 16-byte constant, validated for the program's field.
pub type Constant = [u8; 16];

/// One instruction. Operands are value numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Instr {
    Add(u32, u32),
    Sub(u32, u32),
    Neg(u32),
    MulConst(u32, Constant),
    AddConst(u32, Constant),
    Mul(u32, u32),
    Lt(u32, u32, u8),
    Le(u32, u32, u8),
    Eq(u32, u32, u8),
    Select(u32, u32, u32),
    Const(Constant),
}

impl Instr {
    /// True for instructions that need communication.
    pub fn is_interactive(&self) -> bool {
        matches!(self, Instr::Mul(..) | Instr::Select(..) | Instr::Lt(..) | Instr::Le(..) | Instr::Eq(..))
    }

    /// The operands.
    pub fn operands(&self) -> Vec<u32> {
        match *self {
            Instr::Add(a, b) | Instr::Sub(a, b) | Instr::Mul(a, b) => vec![a, b],
            Instr::Lt(a, b, _) | Instr::Le(a, b, _) | Instr::Eq(a, b, _) => vec![a, b],
            Instr::Neg(a) | Instr::MulConst(a, _) | Instr::AddConst(a, _) => vec![a],
            Instr::Select(c, a, b) => vec![c, a, b],
            Instr::Const(_) => vec![],
        }
    }
}

/// One output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The value revealed.
    pub value: u32,
    /// How to read it (bits are not encoded for outputs and are 0 here).
    pub kind: Kind,
    /// `None`: every party; otherwise the recipients (increasing).
    pub recipients: Option<Vec<usize>>,
}

/// A decoded, validated program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The field.
    pub field: FieldKind,
    /// Number of parties.
    pub parties: usize,
    /// Inputs.
    pub inputs: Vec<Input>,
    /// Instructions.
    pub instrs: Vec<Instr>,
    /// Outputs.
    pub outputs: Vec<Output>,
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn u8(&mut self) -> Result<u8, ProgramError> {
        let v = *self.b.get(self.at).ok_or(ProgramError::Truncated { offset: self.at })?;
        self.at += 1;
        Ok(v)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProgramError> {
        if self.b.len() - self.at < n {
            return Err(ProgramError::Truncated { offset: self.b.len() });
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn varint(&mut self) -> Result<u32, ProgramError> {
        let start = self.at;
        let mut v: u64 = 0;
        for i in 0..5 {
            let byte = self.u8()?;
            v |= ((byte & 0x7f) as u64) << (7 * i);
            if byte & 0x80 == 0 {
                if i > 0 && byte == 0 {
                    return Err(ProgramError::Invalid { offset: start, reason: "non-minimal varint" });
                }
                return u32::try_from(v)
                    .map_err(|_| ProgramError::Invalid { offset: start, reason: "varint above 2^32 − 1" });
            }
        }
        Err(ProgramError::Invalid { offset: start, reason: "varint longer than 5 bytes" })
    }

    fn constant(&mut self, field: FieldKind) -> Result<Constant, ProgramError> {
        let at = self.at;
        let c: Constant = self.take(16)?.try_into().expect("16 bytes");
        let ok = match field {
            FieldKind::Prime => crate::Fp::from_bytes(c).is_some(),
            FieldKind::Binary => true,
        };
        if !ok {
            return Err(ProgramError::Invalid { offset: at, reason: "constant is not a canonical field element" });
        }
        Ok(c)
    }
}

fn write_varint(out: &mut Vec<u8>, mut v: u32) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn kind_byte(k: Kind) -> (u8, u8) {
    match k {
        Kind::Field => (0, 0),
        Kind::Unsigned(b) => (1, b),
        Kind::Signed(b) => (2, b),
    }
}

impl Program {
    /// Decodes and validates a program.
    pub fn decode(b: &[u8]) -> Result<Program, ProgramError> {
        let mut r = Reader { b, at: 0 };
        if r.take(4).map_err(|_| ProgramError::BadHeader { offset: 0 })? != MAGIC {
            return Err(ProgramError::BadHeader { offset: 0 });
        }
        if r.u8()? != VERSION {
            return Err(ProgramError::BadHeader { offset: 4 });
        }
        let field =
            FieldKind::from_byte(r.u8()?).ok_or(ProgramError::Invalid { offset: 5, reason: "unknown field" })?;
        let parties = u16::from_le_bytes(r.take(2)?.try_into().expect("2 bytes")) as usize;
        if !(2..=MAX_PARTIES).contains(&parties) {
            return Err(ProgramError::Invalid { offset: 6, reason: "party count must be 2 ..= 1024" });
        }
        let n_in = r.varint()? as usize;
        let n_instr = r.varint()? as usize;
        let n_out = r.varint()? as usize;
        if n_in.saturating_add(n_instr) > MAX_VALUES {
            return Err(ProgramError::TooLarge { what: "value count", limit: MAX_VALUES });
        }
        if n_out > MAX_OUTPUTS {
            return Err(ProgramError::TooLarge { what: "output count", limit: MAX_OUTPUTS });
        }
        // Every input takes at least 3 bytes, every instruction 2, every output 3: refuse counts
        // the remaining bytes cannot hold before allocating for them.
        let rest = b.len() - r.at;
        if n_in.saturating_mul(3).saturating_add(n_instr.saturating_mul(2)).saturating_add(n_out.saturating_mul(3))
            > rest
        {
            return Err(ProgramError::Truncated { offset: b.len() });
        }
        let mut inputs = Vec::with_capacity(n_in);
        for _ in 0..n_in {
            let at = r.at;
            let owner = match r.varint()? {
                CLIENT_OWNER => Owner::Client,
                p if (p as usize) < parties => Owner::Party(p as usize),
                _ => return Err(ProgramError::Invalid { offset: at, reason: "input owner is not a party or a client" }),
            };
            let kind = read_kind(&mut r, field, true)?;
            inputs.push(Input { owner, kind });
        }
        let mut instrs = Vec::with_capacity(n_instr);
        for i in 0..n_instr {
            let here = (n_in + i) as u32;
            let at = r.at;
            let op = r.u8()?;
            let operand = |r: &mut Reader| -> Result<u32, ProgramError> {
                let at = r.at;
                let v = r.varint()?;
                if v >= here {
                    return Err(ProgramError::Invalid { offset: at, reason: "operand does not name an earlier value" });
                }
                Ok(v)
            };
            let cmp_bits = |r: &mut Reader| -> Result<u8, ProgramError> {
                let at = r.at;
                let k = r.u8()?;
                if k == 0 || k > MAX_CMP_BITS {
                    return Err(ProgramError::Invalid { offset: at, reason: "comparison width must be 1 ..= 64 bits" });
                }
                if field != FieldKind::Prime {
                    return Err(ProgramError::Invalid { offset: at, reason: "comparisons need the prime field" });
                }
                Ok(k)
            };
            let ins = match op {
                0x01 => Instr::Add(operand(&mut r)?, operand(&mut r)?),
                0x02 => Instr::Sub(operand(&mut r)?, operand(&mut r)?),
                0x03 => Instr::Neg(operand(&mut r)?),
                0x04 => Instr::MulConst(operand(&mut r)?, r.constant(field)?),
                0x05 => Instr::AddConst(operand(&mut r)?, r.constant(field)?),
                0x06 => Instr::Mul(operand(&mut r)?, operand(&mut r)?),
                0x07 => Instr::Lt(operand(&mut r)?, operand(&mut r)?, cmp_bits(&mut r)?),
                0x08 => Instr::Le(operand(&mut r)?, operand(&mut r)?, cmp_bits(&mut r)?),
                0x09 => Instr::Eq(operand(&mut r)?, operand(&mut r)?, cmp_bits(&mut r)?),
                0x0A => Instr::Select(operand(&mut r)?, operand(&mut r)?, operand(&mut r)?),
                0x0B => Instr::Const(r.constant(field)?),
                _ => return Err(ProgramError::Invalid { offset: at, reason: "unknown opcode" }),
            };
            instrs.push(ins);
        }
        let total = (n_in + n_instr) as u32;
        let mut outputs = Vec::with_capacity(n_out);
        for _ in 0..n_out {
            let at = r.at;
            let value = r.varint()?;
            if value >= total {
                return Err(ProgramError::Invalid { offset: at, reason: "output names no value" });
            }
            let kind = read_kind(&mut r, field, false)?;
            let at = r.at;
            let count = r.varint()? as usize;
            if count > parties {
                return Err(ProgramError::Invalid { offset: at, reason: "more recipients than parties" });
            }
            let recipients = if count == 0 {
                None
            } else {
                let mut v: Vec<usize> = Vec::with_capacity(count);
                for _ in 0..count {
                    let at = r.at;
                    let p = r.varint()? as usize;
                    if p >= parties || v.last().is_some_and(|&q| q >= p) {
                        return Err(ProgramError::Invalid {
                            offset: at,
                            reason: "recipients must be increasing party indices",
                        });
                    }
                    v.push(p);
                }
                Some(v)
            };
            outputs.push(Output { value, kind, recipients });
        }
        if r.at != b.len() {
            return Err(ProgramError::Invalid { offset: r.at, reason: "trailing bytes after the last output" });
        }
        Ok(Program { field, parties, inputs, instrs, outputs })
    }

    /// The encoding (the inverse of [`Program::decode`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(VERSION);
        out.push(self.field.byte());
        out.extend_from_slice(&(self.parties as u16).to_le_bytes());
        write_varint(&mut out, self.inputs.len() as u32);
        write_varint(&mut out, self.instrs.len() as u32);
        write_varint(&mut out, self.outputs.len() as u32);
        for i in &self.inputs {
            write_varint(&mut out, i.owner.code());
            let (k, b) = kind_byte(i.kind);
            out.extend_from_slice(&[k, b]);
        }
        for ins in &self.instrs {
            let (op, ops, tail): (u8, Vec<u32>, Vec<u8>) = match *ins {
                Instr::Add(a, b) => (0x01, vec![a, b], vec![]),
                Instr::Sub(a, b) => (0x02, vec![a, b], vec![]),
                Instr::Neg(a) => (0x03, vec![a], vec![]),
                Instr::MulConst(a, c) => (0x04, vec![a], c.to_vec()),
                Instr::AddConst(a, c) => (0x05, vec![a], c.to_vec()),
                Instr::Mul(a, b) => (0x06, vec![a, b], vec![]),
                Instr::Lt(a, b, k) => (0x07, vec![a, b], vec![k]),
                Instr::Le(a, b, k) => (0x08, vec![a, b], vec![k]),
                Instr::Eq(a, b, k) => (0x09, vec![a, b], vec![k]),
                Instr::Select(c, a, b) => (0x0A, vec![c, a, b], vec![]),
                Instr::Const(c) => (0x0B, vec![], c.to_vec()),
            };
            out.push(op);
            for o in ops {
                write_varint(&mut out, o);
            }
            out.extend_from_slice(&tail);
        }
        for o in &self.outputs {
            write_varint(&mut out, o.value);
            out.push(kind_byte(o.kind).0);
            match &o.recipients {
                None => write_varint(&mut out, 0),
                Some(v) => {
                    write_varint(&mut out, v.len() as u32);
                    for p in v {
                        write_varint(&mut out, *p as u32);
                    }
                }
            }
        }
        out
    }

    /// SHA-256 of the encoding: what the parties compare before running.
    pub fn hash(&self) -> [u8; 32] {
        Sha256::digest(self.encode()).into()
    }

    /// Checks every rule [`Program::decode`] enforces on a program built or changed in memory
    /// (its fields are public): owners, kinds and widths, operands naming earlier values,
    /// canonical constants, comparison widths, outputs and recipients, the format's limits.
    /// [`crate::Party::run`] calls it before anything else.
    pub fn validate(&self) -> Result<(), ProgramError> {
        // One set of rules: the decoder's. A field that does not survive encoding (a count or an
        // index beyond what the encoding holds) comes back different.
        let decoded = Program::decode(&self.encode())?;
        let mut normal = self.clone();
        for o in &mut normal.outputs {
            o.kind = match o.kind {
                Kind::Field => Kind::Field,
                Kind::Unsigned(_) => Kind::Unsigned(0),
                Kind::Signed(_) => Kind::Signed(0),
            };
        }
        if decoded != normal {
            return Err(ProgramError::Invalid { offset: 0, reason: "a count or an index does not fit the format" });
        }
        Ok(())
    }

    /// The preprocessed material one run consumes.
    pub fn requirements(&self) -> Counts {
        use crate::online_core::{eq_cost, lt_cost};
        let mut c = Counts { triples: 0, bits: 0, masks: vec![0; self.parties] };
        for i in &self.inputs {
            // A client input uses client masks ([`crate::Party::client_masks`]), not input masks;
            // its bits are range-checked like a party's.
            if let Owner::Party(p) = i.owner {
                c.masks[p] += i.kind.input_masks();
            }
            c.triples += i.kind.range_bits();
        }
        for ins in &self.instrs {
            let (t, b) = match *ins {
                Instr::Mul(..) | Instr::Select(..) => (1, 0),
                Instr::Lt(_, _, k) | Instr::Le(_, _, k) => lt_cost(k as usize),
                Instr::Eq(_, _, k) => eq_cost(k as usize),
                _ => (0, 0),
            };
            c.triples += t;
            c.bits += b;
        }
        for o in &self.outputs {
            if let Some(r) = &o.recipients {
                for p in r {
                    c.masks[*p] += 1;
                }
            }
        }
        c
    }

    /// The inputs `party` supplies, in order (never a client's).
    pub fn inputs_of(&self, party: usize) -> Vec<Kind> {
        self.inputs.iter().filter(|i| i.owner.is_party(party)).map(|i| i.kind).collect()
    }

    /// The inputs external clients supply, in order: what [`crate::Party::run_with_clients`]
    /// takes one [`crate::clients::ClientInput`] for each of.
    pub fn client_inputs(&self) -> Vec<Kind> {
        self.inputs.iter().filter(|i| i.owner == Owner::Client).map(|i| i.kind).collect()
    }

    /// Whether any input comes from an external client.
    pub fn has_client_inputs(&self) -> bool {
        self.inputs.iter().any(|i| i.owner == Owner::Client)
    }
}

fn read_kind(r: &mut Reader, field: FieldKind, with_bits: bool) -> Result<Kind, ProgramError> {
    let at = r.at;
    let k = r.u8()?;
    let bits = if with_bits { r.u8()? } else { 0 };
    let kind = match (k, with_bits) {
        (0, _) if bits == 0 => Kind::Field,
        (0, _) => return Err(ProgramError::Invalid { offset: at, reason: "a field input has no bit width" }),
        (1, false) => Kind::Unsigned(0),
        (2, false) => Kind::Signed(0),
        (1 | 2, true) if bits == 0 || bits > MAX_CMP_BITS => {
            return Err(ProgramError::Invalid { offset: at, reason: "integer inputs have 1 ..= 64 bits" })
        }
        (1, true) => Kind::Unsigned(bits),
        (2, true) => Kind::Signed(bits),
        _ => return Err(ProgramError::Invalid { offset: at, reason: "unknown value kind" }),
    };
    if field != FieldKind::Prime && kind != Kind::Field {
        return Err(ProgramError::Invalid { offset: at, reason: "integer values need the prime field" });
    }
    Ok(kind)
}

/// Builds programs in Rust (tests, benchmarks, the Vickrey auction); the TypeScript builder
/// emits the same bytes.
pub struct Builder {
    program: Program,
}

/// A value in a [`Builder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value(pub u32);

impl Builder {
    /// An empty program for `parties` parties over `field`. Inputs must be declared before the
    /// first instruction (values are numbered inputs first).
    pub fn new(field: FieldKind, parties: usize) -> Builder {
        Builder { program: Program { field, parties, inputs: vec![], instrs: vec![], outputs: vec![] } }
    }

    /// Declares an input of party `owner`.
    pub fn input(&mut self, owner: usize, kind: Kind) -> Value {
        self.input_of(Owner::Party(owner), kind)
    }

    /// Declares an input of an external client (see [`crate::clients`]).
    pub fn client_input(&mut self, kind: Kind) -> Value {
        self.input_of(Owner::Client, kind)
    }

    fn input_of(&mut self, owner: Owner, kind: Kind) -> Value {
        assert!(self.program.instrs.is_empty(), "declare inputs before instructions");
        self.program.inputs.push(Input { owner, kind });
        Value(self.program.inputs.len() as u32 - 1)
    }

    fn push(&mut self, i: Instr) -> Value {
        self.program.instrs.push(i);
        Value((self.program.inputs.len() + self.program.instrs.len() - 1) as u32)
    }

    /// a + b.
    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.push(Instr::Add(a.0, b.0))
    }
    /// a − b.
    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.push(Instr::Sub(a.0, b.0))
    }
    /// −a.
    pub fn neg(&mut self, a: Value) -> Value {
        self.push(Instr::Neg(a.0))
    }
    /// c·a.
    pub fn mul_const(&mut self, a: Value, c: Constant) -> Value {
        self.push(Instr::MulConst(a.0, c))
    }
    /// a + c.
    pub fn add_const(&mut self, a: Value, c: Constant) -> Value {
        self.push(Instr::AddConst(a.0, c))
    }
    /// a·b.
    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.push(Instr::Mul(a.0, b.0))
    }
    /// a < b on k-bit integers.
    pub fn lt(&mut self, a: Value, b: Value, k: u8) -> Value {
        self.push(Instr::Lt(a.0, b.0, k))
    }
    /// a ≤ b on k-bit integers.
    pub fn le(&mut self, a: Value, b: Value, k: u8) -> Value {
        self.push(Instr::Le(a.0, b.0, k))
    }
    /// a = b on k-bit integers.
    pub fn eq(&mut self, a: Value, b: Value, k: u8) -> Value {
        self.push(Instr::Eq(a.0, b.0, k))
    }
    /// c ? a : b.
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.push(Instr::Select(c.0, a.0, b.0))
    }
    /// A constant.
    pub fn constant(&mut self, c: Constant) -> Value {
        self.push(Instr::Const(c))
    }
    /// Reveals `v` to `recipients` (`None`: everyone).
    pub fn output(&mut self, v: Value, kind: Kind, recipients: Option<Vec<usize>>) {
        self.program.outputs.push(Output { value: v.0, kind, recipients });
    }
    /// The finished program.
    pub fn build(self) -> Program {
        self.program
    }
}

/// A small integer as a constant.
pub fn const_u64(x: u64) -> Constant {
    (x as u128).to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Program {
        let mut b = Builder::new(FieldKind::Prime, 3);
        let x = b.input(0, Kind::Unsigned(32));
        let y = b.input(2, Kind::Signed(8));
        let z = b.input(1, Kind::Field);
        let s = b.add(x, y);
        let m = b.mul(s, z);
        let c = b.lt(x, y, 33);
        let k = b.constant(const_u64(7));
        let e = b.eq(m, k, 64);
        let t = b.select(c, m, k);
        let u = b.mul_const(t, const_u64(3));
        let v = b.add_const(u, const_u64(1));
        let w = b.neg(v);
        let q = b.sub(w, e);
        let le = b.le(q, x, 64);
        b.output(q, Kind::Field, None);
        b.output(le, Kind::Unsigned(0), Some(vec![0, 2]));
        b.build()
    }

    #[test]
    fn encode_decode_round_trip() {
        let p = sample();
        let bytes = p.encode();
        assert_eq!(Program::decode(&bytes).unwrap(), p);
        let r = p.requirements();
        // One mask per bit of an integer input (32 + 1 output, 1, 8 + 1 output), one per field
        // input; a triple per bit for the range checks.
        assert_eq!(r.masks, vec![33, 1, 9]);
        assert!(r.triples > 40 && r.bits > 0);
    }

    #[test]
    fn client_owner_round_trips_and_costs_no_input_masks() {
        let mut b = Builder::new(FieldKind::Prime, 2);
        let x = b.client_input(Kind::Unsigned(32));
        let y = b.input(1, Kind::Field);
        let z = b.client_input(Kind::Field);
        let s = b.add(x, y);
        let t = b.add(s, z);
        b.output(t, Kind::Field, None);
        let p = b.build();
        let bytes = p.encode();
        // The sentinel is written as the largest 5-byte varint.
        assert_eq!(&bytes[11..18], &[0xff, 0xff, 0xff, 0xff, 0x0f, 1, 32]);
        assert_eq!(Program::decode(&bytes).unwrap(), p);
        assert_eq!(p.validate(), Ok(()));
        assert_eq!(p.inputs[0].owner, Owner::Client);
        assert_eq!(p.inputs[0].owner.party(), None);
        assert_eq!(p.inputs[1].owner.party(), Some(1));
        assert_eq!(p.inputs_of(0), vec![]);
        assert_eq!(p.inputs_of(1), vec![Kind::Field]);
        assert_eq!(p.client_inputs(), vec![Kind::Unsigned(32), Kind::Field]);
        assert!(p.has_client_inputs() && !sample().has_client_inputs());
        let r = p.requirements();
        // No input masks for the client's inputs, but the range-check triples of its 32 bits.
        assert_eq!(r.masks, vec![0, 1]);
        assert_eq!(r.triples, 32);
    }

    #[test]
    fn input_kinds_from_bytes_follow_the_decoder() {
        use FieldKind::{Binary, Prime};
        assert_eq!(Kind::input_from_bytes(Prime, 0, 0), Ok(Kind::Field));
        assert_eq!(Kind::input_from_bytes(Prime, 1, 64), Ok(Kind::Unsigned(64)));
        assert_eq!(Kind::input_from_bytes(Prime, 2, 1), Ok(Kind::Signed(1)));
        assert_eq!(Kind::input_from_bytes(Binary, 0, 0), Ok(Kind::Field));
        for (f, k, b) in [(Prime, 0, 1), (Prime, 1, 0), (Prime, 2, 65), (Prime, 3, 8), (Binary, 1, 8)] {
            assert!(Kind::input_from_bytes(f, k, b).is_err(), "{f:?} {k} {b}");
        }
        assert!(Kind::Signed(16).is_valid_input(Prime));
        assert!(!Kind::Signed(16).is_valid_input(Binary));
        assert!(!Kind::Unsigned(0).is_valid_input(Prime));
        assert!(!Kind::Unsigned(65).is_valid_input(Prime));
    }

    #[test]
    fn validate_refuses_what_decode_refuses() {
        let p = sample();
        assert_eq!(p.validate(), Ok(()));
        // Output kinds carry no width on the wire: any width is fine in memory.
        let mut q = p.clone();
        q.outputs[1].kind = Kind::Unsigned(17);
        assert_eq!(q.validate(), Ok(()));
        type Mutation = Box<dyn Fn(&mut Program)>;
        let bad: Vec<Mutation> = vec![
            Box::new(|p| p.instrs[2] = Instr::Lt(0, 1, 0)),
            Box::new(|p| p.instrs[2] = Instr::Eq(0, 1, 65)),
            Box::new(|p| p.instrs[4] = Instr::Const([0xff; 16])),
            Box::new(|p| p.instrs[0] = Instr::Add(0, 3)),
            Box::new(|p| p.inputs[1].kind = Kind::Signed(0)),
            Box::new(|p| p.inputs[0].kind = Kind::Unsigned(65)),
            Box::new(|p| p.inputs[0].owner = Owner::Party(3)),
            Box::new(|p| p.inputs[0].owner = Owner::Party((1 << 32) + 1)),
            // The sentinel's number as a party index: it encodes as the client, so it comes back
            // different.
            Box::new(|p| p.inputs[0].owner = Owner::Party(CLIENT_OWNER as usize)),
            Box::new(|p| p.parties = (1 << 16) + 3),
            Box::new(|p| p.parties = 1),
            Box::new(|p| p.outputs[0].value = 1000),
            Box::new(|p| p.outputs[1].recipients = Some(vec![2, 2])),
            Box::new(|p| p.outputs[1].recipients = Some(vec![])),
            Box::new(|p| p.field = FieldKind::Binary),
        ];
        for (i, f) in bad.iter().enumerate() {
            let mut q = sample();
            f(&mut q);
            assert!(q.validate().is_err(), "mutation {i} accepted");
        }
    }

    #[test]
    fn every_truncation_is_a_typed_error() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            assert!(Program::decode(&bytes[..cut]).is_err(), "prefix of {cut} bytes");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(Program::decode(&longer), Err(ProgramError::Invalid { .. })));
    }

    #[test]
    fn specific_violations() {
        let mut b = Builder::new(FieldKind::Binary, 2);
        let x = b.input(0, Kind::Field);
        b.output(x, Kind::Field, None);
        assert!(Program::decode(&b.build().encode()).is_ok());
        // Integers and comparisons need the prime field.
        let mut p = sample();
        p.field = FieldKind::Binary;
        assert!(Program::decode(&p.encode()).is_err());
        // Forward reference.
        let mut p = sample();
        p.instrs[0] = Instr::Add(0, 50);
        assert!(Program::decode(&p.encode()).is_err());
        // Non-canonical constant.
        let mut p = sample();
        p.instrs[4] = Instr::Const([0xff; 16]);
        assert!(Program::decode(&p.encode()).is_err());
        // Bad widths, owners and recipients.
        let mut p = sample();
        p.instrs[2] = Instr::Lt(0, 1, 65);
        assert!(Program::decode(&p.encode()).is_err());
        let mut p = sample();
        p.inputs[0].owner = Owner::Party(3);
        assert!(Program::decode(&p.encode()).is_err());
        // Owners between the parties and the client sentinel are refused.
        for owner in [3u32, 4, 1 << 20, CLIENT_OWNER - 1] {
            let mut bytes = MAGIC.to_vec();
            bytes.extend_from_slice(&[1, 0, 3, 0, 1, 0, 0]);
            write_varint(&mut bytes, owner);
            bytes.extend_from_slice(&[0, 0]);
            assert!(
                matches!(Program::decode(&bytes), Err(ProgramError::Invalid { offset: 11, .. })),
                "owner {owner}"
            );
        }
        let mut p = sample();
        p.outputs[1].recipients = Some(vec![2, 0]);
        assert!(Program::decode(&p.encode()).is_err());
        // Header.
        let mut bytes = sample().encode();
        bytes[4] = 2;
        assert_eq!(Program::decode(&bytes), Err(ProgramError::BadHeader { offset: 4 }));
        assert_eq!(Program::decode(b"WMP"), Err(ProgramError::BadHeader { offset: 0 }));
        // Counts the bytes cannot hold are refused before allocation.
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[1, 0, 2, 0, 0xff, 0xff, 0xff, 0x01, 0, 0]);
        assert!(Program::decode(&bytes).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        #[test]
        fn decoding_garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Program::decode(&bytes);
            let mut with_header = MAGIC.to_vec();
            with_header.extend_from_slice(&[1, 0, 3, 0]);
            with_header.extend_from_slice(&bytes);
            let _ = Program::decode(&with_header);
        }

        #[test]
        fn mutating_a_valid_program_never_panics(pos in any::<usize>(), byte in any::<u8>(), cut in any::<usize>()) {
            let mut bytes = sample().encode();
            let i = pos % bytes.len();
            bytes[i] = byte;
            let _ = Program::decode(&bytes);
            let c = cut % (bytes.len() + 1);
            let _ = Program::decode(&bytes[..c]);
        }
    }
}
