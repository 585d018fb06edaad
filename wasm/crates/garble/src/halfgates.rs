//! Half-gates garbling (Zahur–Rosulek–Evans, EUROCRYPT 2015) with free-XOR and
//! point-and-permute: the pure part, with no IO. The garbler turns a chunk of gates into garbled
//! tables (two blocks per AND gate); the evaluator turns the same chunk and those tables into
//! active labels. Both walk the chunk in the same **schedule** (see [`Schedule`]), which groups
//! independent AND gates so their hashes run 8 at a time through the bitsliced AES.
//!
//! **Hash.** `H(x, i) = tccr(x, tweak(i))`, the TMMO construction of Guo–Katz–Wang–Yu (two
//! fixed-key AES calls). Half-gates needs a hash that stays pseudorandom on inputs that are
//! correlated by the secret Δ (`W⁰` and `W⁰ ⊕ Δ` are both hashed) and whose output is XORed with
//! Δ-dependent values: that is *circular* correlation robustness, and because a fixed-key
//! permutation is public, the gate index must enter as a tweak so that equal labels in different
//! gates do not give equal hashes — TCCR, the notion GKWY prove half-gates needs
//! (`../shared/papers/notes/fixedkey_and_teleport.md`, §A.1–A.2). CR lacks the circular part and
//! CCR the tweak, so neither is enough. Tweaks are `tag · 2^64 + 2·gate + {0,1}`: `tag` is unique
//! per garbled circuit (session and run), `gate` the gate's index in the circuit.
//!
//! For an AND gate with input zero-labels `A⁰, B⁰`, permute bits `pa = lsb A⁰`, `pb = lsb B⁰`:
//!
//! ```text
//! garbler:   TG = H(A⁰, j) ⊕ H(A¹, j) ⊕ pb·Δ          WG⁰ = H(A⁰, j) ⊕ pa·TG
//!            TE = H(B⁰, j') ⊕ H(B¹, j') ⊕ A⁰           WE⁰ = H(B⁰, j') ⊕ pb·(TE ⊕ A⁰)
//!            C⁰ = WG⁰ ⊕ WE⁰,  table (TG, TE)
//! evaluator: C = H(A, j) ⊕ sa·TG ⊕ H(B, j') ⊕ sb·(TE ⊕ A)     with sa = lsb A, sb = lsb B
//! ```
//!
//! Every selection by a permute or colour bit is a mask, never a branch. A constant gate has a
//! one-block "table": the active label of its (public) value, which reveals nothing.
//!
//! **Δ and memory.** Point-and-permute needs lsb Δ = 1 (the two labels of a wire then have
//! different permute bits); an even Δ would make the evaluator pick the wrong table row for half
//! the gates and return wrong outputs silently, so [`Garbler::new`] refuses it in every build.
//! Each party keeps 16 bytes per wire (its label), allocated up front, and 16 more (the schedule's
//! record) once it plans a chunk itself — a [`CompiledChunk`] needs none, so a prepared circuit
//! run many times does not allocate and clear them on every run. Both are allocated fallibly: a
//! circuit above [`MAX_WIRES`] wires, or one whose state does not fit in memory, is a typed
//! error, never an aborted process or a trapped Wasm instance.

use thiserror::Error;
use webmpc_circuit::{Gate, MAX_WIRES};
use webmpc_core::hash::Hasher;
use webmpc_core::Block;

/// Bytes of garbled material per AND gate (TG, TE).
pub const AND_TABLE_BYTES: usize = 32;
/// Bytes per constant gate (its active label).
pub const CONST_TABLE_BYTES: usize = 16;

/// Why garbling or evaluation refused a chunk.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GarbleError {
    /// The garbled material for a chunk has the wrong length (truncated or padded).
    #[error("garbled tables for a chunk are {got} bytes; {expected} expected")]
    TableLength {
        /// Bytes the chunk's gates need.
        expected: usize,
        /// Bytes that arrived.
        got: usize,
    },
    /// A gate refers to a wire beyond the circuit's wire count.
    #[error("gate {gate} uses wire {wire}, but the circuit has {wires} wires")]
    WireOutOfRange {
        /// The gate's index.
        gate: u64,
        /// The wire.
        wire: u32,
        /// The circuit's wire count.
        wires: u32,
    },
    /// A cached schedule does not belong to the chunk it was given with (a caller's mix-up).
    #[error("the cached schedule does not match the chunk's {0} gates")]
    ScheduleMismatch(usize),
    /// The circuit has too many gates for the tweak space.
    #[error("circuit too large to garble (gate index {0})")]
    TooManyGates(u64),
    /// Δ has lsb 0: point-and-permute needs the two labels of a wire to differ in their lsb.
    #[error("the garbling Δ must have its lowest (point-and-permute) bit set")]
    EvenDelta,
    /// The circuit has more wires than [`MAX_WIRES`], or its per-wire state does not fit in
    /// memory.
    #[error("a circuit of {wires} wires is too large to garble here ({why})")]
    TooManyWires {
        /// The circuit's wire count.
        wires: u32,
        /// Which bound it hit.
        why: &'static str,
    },
}

impl GarbleError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            GarbleError::TableLength { .. } => "MALFORMED_MESSAGE",
            GarbleError::WireOutOfRange { .. } | GarbleError::TooManyGates(_) => "MALFORMED_CIRCUIT",
            GarbleError::ScheduleMismatch(_) | GarbleError::EvenDelta => "INVALID_ARGUMENT",
            GarbleError::TooManyWires { .. } => "CIRCUIT_TOO_LARGE",
        }
    }
}

/// `n` default values, or a typed error instead of an allocation failure (which aborts natively
/// and traps in Wasm). The count is checked against [`MAX_WIRES`] first.
fn per_wire<T: Clone + Default>(wires: u32) -> Result<Vec<T>, GarbleError> {
    if wires > MAX_WIRES {
        return Err(GarbleError::TooManyWires { wires, why: "above MAX_WIRES" });
    }
    let mut v = Vec::new();
    v.try_reserve_exact(wires as usize)
        .map_err(|_| GarbleError::TooManyWires { wires, why: "out of memory for the per-wire state" })?;
    v.resize(wires as usize, T::default());
    Ok(v)
}

/// Garbled bytes a chunk of gates needs.
pub fn table_bytes(gates: &[Gate]) -> usize {
    gates
        .iter()
        .map(|g| match g {
            Gate::And { .. } => AND_TABLE_BYTES,
            Gate::Const { .. } => CONST_TABLE_BYTES,
            _ => 0,
        })
        .sum()
}

/// The processing order of one chunk, shared by garbler and evaluator.
///
/// Each gate gets a level within the chunk, and the chunk is processed level by level: first the
/// level's AND gates as one batch (all their input labels are read before any output is
/// written, so they hash together), then its other gates in their original order. Levels respect
/// every dependency, including those of circuits that overwrite wires (the binary form allows it,
/// and `Circuit::compact` relies on it):
///
/// * read after write: an AND sits above the gates that wrote its inputs; any other gate at or
///   above them (a same-level writer is an AND, processed first, or precedes it in order);
/// * write after read: an AND sits above every non-AND reader of the value it overwrites and at
///   or above every AND reader (same batch: reads happen before writes); any other gate at or
///   above every reader;
/// * write after write: an AND sits above the previous writer; any other gate at or above it.
///
/// Tables are laid out in processing order.
#[derive(Default)]
pub struct Schedule {
    /// The wire count the records are for.
    capacity: u32,
    /// Per wire (one 16-byte record, so a gate touches one cache line per wire); empty until
    /// the first plan.
    wires: Vec<WireState>,
    epoch: u32,
    /// (level·2 + is_not_and, index in chunk), sorted.
    order: Vec<(u32, u32)>,
    /// Scratch for the counting sort.
    keyed: Vec<(u32, u32)>,
    counts: Vec<u32>,
}

/// What the schedule knows of a wire within the current chunk; valid where `stamp == epoch`.
#[derive(Clone, Copy, Default)]
struct WireState {
    stamp: u32,
    /// Level of the gate that wrote the current value (0: written before this chunk).
    written: u32,
    /// Highest level of an AND gate that read the current value.
    read_and: u32,
    /// Highest level of any other gate that read the current value.
    read_other: u32,
}

impl Schedule {
    /// A schedule for circuits of up to `wires` wires; its per-wire records are allocated by
    /// [`ready`](Self::ready), on first use.
    pub(crate) fn new(wires: u32) -> Result<Self, GarbleError> {
        if wires > MAX_WIRES {
            return Err(GarbleError::TooManyWires { wires, why: "above MAX_WIRES" });
        }
        Ok(Schedule { capacity: wires, ..Schedule::default() })
    }

    /// Allocates the per-wire records if they are not there yet.
    fn ready(&mut self) -> Result<&mut Self, GarbleError> {
        if self.wires.len() != self.capacity as usize {
            self.wires = per_wire(self.capacity)?;
            self.epoch = 0;
        }
        Ok(self)
    }

    /// The wire's state in this chunk (fresh if it was last seen in an earlier chunk).
    #[inline(always)]
    fn state(&self, w: u32) -> WireState {
        let st = self.wires[w as usize];
        if st.stamp == self.epoch {
            st
        } else {
            WireState { stamp: self.epoch, ..WireState::default() }
        }
    }

    /// Plans `gates`, whose wires must already be checked to be below the wire count the schedule
    /// was made for. Returns the processing order as `(key, index)` pairs, key = level·2 for ANDs
    /// and level·2 + 1 for other gates.
    fn plan(&mut self, gates: &[Gate]) -> &[(u32, u32)] {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Stamps wrapped: clear them so no stale stamp can match.
            self.wires.iter_mut().for_each(|s| s.stamp = 0);
            self.epoch = 1;
        }
        self.keyed.clear();
        let mut max_key = 0;
        for (i, g) in gates.iter().enumerate() {
            let (key, out, level) = match *g {
                Gate::And { a, b, out } => {
                    let (sa, sb, so) = (self.state(a), self.state(b), self.state(out));
                    let level = (sa.written + 1)
                        .max(sb.written + 1)
                        .max(so.read_other + 1)
                        .max(so.read_and)
                        .max(so.written + 1);
                    let mut sa = sa;
                    sa.read_and = sa.read_and.max(level);
                    self.wires[a as usize] = sa;
                    let mut sb = self.state(b);
                    sb.read_and = sb.read_and.max(level);
                    self.wires[b as usize] = sb;
                    (2 * level, out, level)
                }
                Gate::Xor { a, b, out } => {
                    let (sa, sb, so) = (self.state(a), self.state(b), self.state(out));
                    let level = sa.written.max(sb.written).max(so.read_other).max(so.read_and).max(so.written);
                    let mut sa = sa;
                    sa.read_other = sa.read_other.max(level);
                    self.wires[a as usize] = sa;
                    let mut sb = self.state(b);
                    sb.read_other = sb.read_other.max(level);
                    self.wires[b as usize] = sb;
                    (2 * level + 1, out, level)
                }
                Gate::Inv { a, out } | Gate::Copy { a, out } => {
                    let (sa, so) = (self.state(a), self.state(out));
                    let level = sa.written.max(so.read_other).max(so.read_and).max(so.written);
                    let mut sa = sa;
                    sa.read_other = sa.read_other.max(level);
                    self.wires[a as usize] = sa;
                    (2 * level + 1, out, level)
                }
                Gate::Const { out, .. } => {
                    let so = self.state(out);
                    let level = so.read_other.max(so.read_and).max(so.written);
                    (2 * level + 1, out, level)
                }
            };
            // The new value has no readers yet.
            self.wires[out as usize] = WireState { stamp: self.epoch, written: level, read_and: 0, read_other: 0 };
            max_key = max_key.max(key);
            self.keyed.push((key, i as u32));
        }
        // Counting sort by key: linear, and stable, so gates of one key keep their original order.
        self.counts.clear();
        self.counts.resize(max_key as usize + 2, 0);
        for &(key, _) in &self.keyed {
            self.counts[key as usize + 1] += 1;
        }
        for k in 1..self.counts.len() {
            self.counts[k] += self.counts[k - 1];
        }
        self.order.clear();
        self.order.resize(self.keyed.len(), (0, 0));
        for &(key, i) in &self.keyed {
            let slot = &mut self.counts[key as usize];
            self.order[*slot as usize] = (key, i);
            *slot += 1;
        }
        &self.order
    }
}

/// The schedule of one chunk of a circuit with `wires` wires (see [`Schedule`]), for callers that
/// run the same circuit many times and keep it: garbler and evaluator must use the same one.
pub fn plan_chunk(wires: u32, gates: &[Gate]) -> Result<Vec<(u32, u32)>, GarbleError> {
    Ok(plan_chunks(wires, gates, gates.len().max(1))?.pop().unwrap_or_default())
}

/// The schedules of `gates` cut into chunks of `chunk` gates, with one set of per-wire records
/// for all of them (so planning costs the circuit's size, not its size times its chunk count).
pub fn plan_chunks(wires: u32, gates: &[Gate], chunk: usize) -> Result<Vec<Vec<(u32, u32)>>, GarbleError> {
    let mut schedule = Schedule::new(wires)?;
    schedule.ready()?;
    let mut base = 0u64;
    let mut plans = Vec::new();
    for c in gates.chunks(chunk.max(1)) {
        check_wires(c, wires, base)?;
        plans.push(schedule.plan(c).to_vec());
        base += c.len() as u64;
    }
    Ok(plans)
}

/// One step of a [`CompiledChunk`].
#[derive(Clone, Copy, Debug)]
enum Step {
    /// AND gates `ands[start..end]`, hashed as one batch.
    Ands {
        start: u32,
        end: u32,
    },
    Xor {
        a: u32,
        b: u32,
        out: u32,
    },
    Inv {
        a: u32,
        out: u32,
    },
    Copy {
        a: u32,
        out: u32,
    },
    Const {
        value: bool,
        out: u32,
        gate: u32,
    },
}

/// A chunk of gates compiled once for repeated garbling or evaluation (a circuit run many
/// times): its schedule ([`Schedule`]) resolved into a flat list of steps with the wires of
/// each gate inline, the AND gates of a level contiguous, the wires checked against the wire
/// count and the tables' size known. Running a compiled chunk does no planning, no validation
/// pass over the gates and no indirection through the schedule, so the per-gate work outside
/// the hashes is a few loads and stores; the result (labels, tables and their order) is exactly
/// what [`Garbler::garble_chunk_planned`] and [`Evaluator::evaluate_chunk_planned`] produce with
/// the same schedule.
#[derive(Clone, Debug)]
pub struct CompiledChunk {
    wires: u32,
    gates: usize,
    table_bytes: usize,
    steps: Vec<Step>,
    /// `(a, b, out, index in chunk)` of every AND gate, in processing order.
    ands: Vec<[u32; 4]>,
}

impl CompiledChunk {
    /// Compiles `gates` of a circuit with `wires` wires.
    pub fn new(wires: u32, gates: &[Gate]) -> Result<Self, GarbleError> {
        let plan = plan_chunk(wires, gates)?;
        Self::from_plan(wires, gates, &plan)
    }

    /// Compiles `gates` with their schedule `order` (from [`plan_chunk`] / [`plan_chunks`]).
    pub fn from_plan(wires: u32, gates: &[Gate], order: &[(u32, u32)]) -> Result<Self, GarbleError> {
        check_wires(gates, wires, 0)?;
        let order = check_order(order, gates.len())?;
        let mut steps = Vec::new();
        let mut ands = Vec::new();
        let mut k = 0;
        while k < order.len() {
            let (end, is_and) = next_step(order, k);
            if is_and {
                let start = ands.len() as u32;
                for &(_, i) in &order[k..end] {
                    let Gate::And { a, b, out } = gates[i as usize] else { unreachable!("batch holds AND gates") };
                    ands.push([a, b, out, i]);
                }
                steps.push(Step::Ands { start, end: ands.len() as u32 });
            } else {
                let i = order[k].1;
                steps.push(match gates[i as usize] {
                    Gate::Xor { a, b, out } => Step::Xor { a, b, out },
                    Gate::Inv { a, out } => Step::Inv { a, out },
                    Gate::Copy { a, out } => Step::Copy { a, out },
                    Gate::Const { value, out } => Step::Const { value, out, gate: i },
                    Gate::And { .. } => unreachable!("ANDs are batched"),
                });
            }
            k = end;
        }
        Ok(CompiledChunk { wires, gates: gates.len(), table_bytes: table_bytes(gates), steps, ands })
    }

    /// Gates in the chunk.
    pub fn gates(&self) -> usize {
        self.gates
    }

    /// Garbled bytes the chunk produces.
    pub fn table_bytes(&self) -> usize {
        self.table_bytes
    }

    /// Refuses a chunk compiled for more wires than `wires`, or whose gate indices from `base`
    /// leave the tweak space.
    fn check(&self, wires: usize, base: u64) -> Result<(), GarbleError> {
        if self.wires as usize > wires {
            return Err(GarbleError::WireOutOfRange { gate: base, wire: self.wires - 1, wires: wires as u32 });
        }
        let last = base.saturating_add(self.gates as u64);
        if last >= 1 << 62 {
            return Err(GarbleError::TooManyGates(last));
        }
        Ok(())
    }
}

/// The tweak of half `half` of gate `gate` (< 2^62, checked by the caller).
#[inline(always)]
fn tweak_unchecked(tag: u64, gate: u64, half: u64) -> Block {
    Block::from_u128(((tag as u128) << 64) | (2 * gate + half) as u128)
}

/// A cached schedule must cover exactly this chunk's gates (it came from [`plan_chunk`]; this
/// only guards the indexing against a mix-up of chunks).
fn check_order(order: &[(u32, u32)], gates: usize) -> Result<&[(u32, u32)], GarbleError> {
    if order.len() != gates || order.iter().any(|&(_, i)| i as usize >= gates) {
        return Err(GarbleError::ScheduleMismatch(gates));
    }
    Ok(order)
}

fn check_wires(gates: &[Gate], wires: u32, base: u64) -> Result<(), GarbleError> {
    for (i, g) in gates.iter().enumerate() {
        let (x, y, out) = match *g {
            Gate::And { a, b, out } | Gate::Xor { a, b, out } => (a, b, out),
            Gate::Inv { a, out } | Gate::Copy { a, out } => (a, a, out),
            Gate::Const { out, .. } => (out, out, out),
        };
        for w in [x, y, out] {
            if w >= wires {
                return Err(GarbleError::WireOutOfRange { gate: base + i as u64, wire: w, wires });
            }
        }
    }
    Ok(())
}

fn tweak(tag: u64, gate: u64, half: u64) -> Result<Block, GarbleError> {
    if gate >= 1 << 62 {
        return Err(GarbleError::TooManyGates(gate));
    }
    Ok(Block::from_u128(((tag as u128) << 64) | (2 * gate + half) as u128))
}

fn mask(bit: bool) -> Block {
    Block::mask_from_bit(bit as u8)
}

/// Splits a schedule into steps: a batch of same-level AND gates, or one other gate.
fn next_step(order: &[(u32, u32)], k: usize) -> (usize, bool) {
    let key = order[k].0;
    if key % 2 == 1 {
        return (k + 1, false);
    }
    let mut end = k;
    while end < order.len() && order[end].0 == key {
        end += 1;
    }
    (end, true)
}

/// The garbler's state: Δ and the zero-label of every wire.
pub struct Garbler {
    delta: Block,
    labels: Vec<Block>,
    tag: u64,
    schedule: Schedule,
    hash_in: Vec<Block>,
    tweaks: Vec<Block>,
    hash_out: Vec<Block>,
}

impl Garbler {
    /// A garbler for a circuit of `wires` wires. `delta` must have its lowest bit set (the
    /// point-and-permute bit of `W¹` is then the complement of `W⁰`'s): an even Δ is
    /// [`GarbleError::EvenDelta`] in every build. `tag` must be unique per garbled circuit under
    /// this Δ. More than [`MAX_WIRES`] wires, or more than memory holds, is
    /// [`GarbleError::TooManyWires`].
    pub fn new(delta: Block, wires: u32, tag: u64) -> Result<Self, GarbleError> {
        if !delta.lsb() {
            return Err(GarbleError::EvenDelta);
        }
        Ok(Garbler {
            delta,
            labels: per_wire(wires)?,
            tag,
            schedule: Schedule::new(wires)?,
            hash_in: Vec::new(),
            tweaks: Vec::new(),
            hash_out: Vec::new(),
        })
    }

    /// Δ.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// Sets the zero-label of an input wire.
    pub fn set_label(&mut self, wire: u32, zero: Block) {
        self.labels[wire as usize] = zero;
    }

    /// The zero-label of `wire`.
    pub fn label(&self, wire: u32) -> Block {
        self.labels[wire as usize]
    }

    /// Garbles `gates` (whose first gate has index `base` in the circuit), appending their tables
    /// to `tables` in schedule order.
    pub fn garble_chunk(&mut self, gates: &[Gate], base: u64, tables: &mut Vec<u8>) -> Result<(), GarbleError> {
        self.garble_chunk_planned(gates, base, None, tables)
    }

    /// [`garble_chunk`](Self::garble_chunk) with the chunk's schedule from [`plan_chunk`] when
    /// the caller has it cached (a circuit run many times); `None` plans it here.
    pub fn garble_chunk_planned(
        &mut self,
        gates: &[Gate],
        base: u64,
        planned: Option<&[(u32, u32)]>,
        tables: &mut Vec<u8>,
    ) -> Result<(), GarbleError> {
        check_wires(gates, self.labels.len() as u32, base)?;
        let Garbler { delta, labels, tag, schedule, hash_in, tweaks, hash_out } = self;
        let (delta, tag) = (*delta, *tag);
        let order = match planned {
            Some(order) => check_order(order, gates.len())?,
            None => schedule.ready()?.plan(gates),
        };
        let mut k = 0;
        while k < order.len() {
            let (end, is_and) = next_step(order, k);
            if is_and {
                let ands = &order[k..end];
                hash_in.clear();
                tweaks.clear();
                for &(_, i) in ands {
                    let Gate::And { a, b, .. } = gates[i as usize] else { unreachable!("batch holds AND gates") };
                    let (a0, b0) = (labels[a as usize], labels[b as usize]);
                    let (j0, j1) = (tweak(tag, base + i as u64, 0)?, tweak(tag, base + i as u64, 1)?);
                    hash_in.extend_from_slice(&[a0, a0 ^ delta, b0, b0 ^ delta]);
                    tweaks.extend_from_slice(&[j0, j0, j1, j1]);
                }
                hash_out.resize(hash_in.len(), Block::ZERO);
                Hasher::fixed().tccr_many(hash_in, tweaks, hash_out).expect("equal lengths");
                for (n, &(_, i)) in ands.iter().enumerate() {
                    let Gate::And { out, .. } = gates[i as usize] else { unreachable!("batch holds AND gates") };
                    // The labels as read before the batch wrote anything (a batch may overwrite
                    // a wire another gate of the batch reads).
                    let (a0, b0) = (hash_in[4 * n], hash_in[4 * n + 2]);
                    let (pa, pb) = (a0.lsb(), b0.lsb());
                    let h = &hash_out[4 * n..4 * n + 4];
                    let tg = h[0] ^ h[1] ^ (delta & mask(pb));
                    let wg = h[0] ^ (tg & mask(pa));
                    let te = h[2] ^ h[3] ^ a0;
                    let we = h[2] ^ ((te ^ a0) & mask(pb));
                    labels[out as usize] = wg ^ we;
                    tables.extend_from_slice(&tg.0);
                    tables.extend_from_slice(&te.0);
                }
            } else {
                let i = order[k].1;
                match gates[i as usize] {
                    Gate::Xor { a, b, out } => labels[out as usize] = labels[a as usize] ^ labels[b as usize],
                    Gate::Inv { a, out } => labels[out as usize] = labels[a as usize] ^ delta,
                    Gate::Copy { a, out } => labels[out as usize] = labels[a as usize],
                    Gate::Const { value, out } => {
                        // The zero-label is H(Δ, tweak of this gate): unpredictable without Δ (TCCR
                        // with w = 0), unique per gate, and needs no randomness source here.
                        let zero = webmpc_core::hash::tccr(delta, tweak(tag, base + i as u64, 0)?);
                        labels[out as usize] = zero;
                        let active = zero ^ (delta & mask(value));
                        tables.extend_from_slice(&active.0);
                    }
                    Gate::And { .. } => unreachable!("ANDs are batched"),
                }
            }
            k = end;
        }
        Ok(())
    }
}

impl Garbler {
    /// Garbles a [`CompiledChunk`] whose first gate has index `base` in the circuit, appending
    /// its tables to `tables`: the same labels and tables as
    /// [`garble_chunk_planned`](Self::garble_chunk_planned) with the schedule it was compiled
    /// from.
    pub fn garble_compiled(
        &mut self,
        chunk: &CompiledChunk,
        base: u64,
        tables: &mut Vec<u8>,
    ) -> Result<(), GarbleError> {
        chunk.check(self.labels.len(), base)?;
        let Garbler { delta, labels, tag, hash_in, hash_out, .. } = self;
        let (delta, tag) = (*delta, *tag);
        tables.reserve(chunk.table_bytes);
        for step in &chunk.steps {
            match *step {
                Step::Ands { start, end } => {
                    let ands = &chunk.ands[start as usize..end as usize];
                    // Every input label of the batch is read before any output is written (a
                    // gate of the batch may overwrite a wire another one reads).
                    hash_in.clear();
                    hash_in.resize(4 * ands.len(), Block::ZERO);
                    for (x, &[a, b, _, _]) in hash_in.chunks_exact_mut(4).zip(ands) {
                        let (a0, b0) = (labels[a as usize], labels[b as usize]);
                        x.copy_from_slice(&[a0, a0 ^ delta, b0, b0 ^ delta]);
                    }
                    hash_out.clear();
                    hash_out.resize(hash_in.len(), Block::ZERO);
                    // Tweaks (tag, 2·gate + half), half = 0 for the A pair and 1 for the B pair.
                    let gate_tweak = |j: usize| {
                        let i = ands[j / 4][3] as u64;
                        tweak_unchecked(tag, base + i, (j as u64 / 2) & 1)
                    };
                    Hasher::fixed().tccr_many_with(hash_in, gate_tweak, hash_out).expect("equal lengths");
                    let at = tables.len();
                    tables.resize(at + 32 * ands.len(), 0);
                    let rows = Block::slice_from_bytes_mut(&mut tables[at..]).expect("whole blocks");
                    for (((&[_, _, out, _], x), h), row) in ands
                        .iter()
                        .zip(hash_in.chunks_exact(4))
                        .zip(hash_out.chunks_exact(4))
                        .zip(rows.chunks_exact_mut(2))
                    {
                        let (a0, b0) = (x[0], x[2]);
                        let (pa, pb) = (a0.lsb(), b0.lsb());
                        let tg = h[0] ^ h[1] ^ (delta & mask(pb));
                        let wg = h[0] ^ (tg & mask(pa));
                        let te = h[2] ^ h[3] ^ a0;
                        let we = h[2] ^ ((te ^ a0) & mask(pb));
                        labels[out as usize] = wg ^ we;
                        row[0] = tg;
                        row[1] = te;
                    }
                }
                Step::Xor { a, b, out } => labels[out as usize] = labels[a as usize] ^ labels[b as usize],
                Step::Inv { a, out } => labels[out as usize] = labels[a as usize] ^ delta,
                Step::Copy { a, out } => labels[out as usize] = labels[a as usize],
                Step::Const { value, out, gate } => {
                    let zero = webmpc_core::hash::tccr(delta, tweak_unchecked(tag, base + gate as u64, 0));
                    labels[out as usize] = zero;
                    tables.extend_from_slice(&(zero ^ (delta & mask(value))).0);
                }
            }
        }
        Ok(())
    }
}

/// The evaluator's state: the active label of every wire.
pub struct Evaluator {
    labels: Vec<Block>,
    tag: u64,
    schedule: Schedule,
    hash_in: Vec<Block>,
    tweaks: Vec<Block>,
    hash_out: Vec<Block>,
}

impl Evaluator {
    /// An evaluator for a circuit of `wires` wires, garbled under `tag`. More than [`MAX_WIRES`]
    /// wires, or more than memory holds, is [`GarbleError::TooManyWires`].
    pub fn new(wires: u32, tag: u64) -> Result<Self, GarbleError> {
        Ok(Evaluator {
            labels: per_wire(wires)?,
            tag,
            schedule: Schedule::new(wires)?,
            hash_in: Vec::new(),
            tweaks: Vec::new(),
            hash_out: Vec::new(),
        })
    }

    /// Sets the active label of an input wire.
    pub fn set_label(&mut self, wire: u32, active: Block) {
        self.labels[wire as usize] = active;
    }

    /// The active label of `wire`.
    pub fn label(&self, wire: u32) -> Block {
        self.labels[wire as usize]
    }

    /// Evaluates `gates` (first gate index `base`) with their garbled `tables`.
    pub fn evaluate_chunk(&mut self, gates: &[Gate], base: u64, tables: &[u8]) -> Result<(), GarbleError> {
        self.evaluate_chunk_planned(gates, base, None, tables)
    }

    /// [`evaluate_chunk`](Self::evaluate_chunk) with a cached schedule from [`plan_chunk`].
    pub fn evaluate_chunk_planned(
        &mut self,
        gates: &[Gate],
        base: u64,
        planned: Option<&[(u32, u32)]>,
        tables: &[u8],
    ) -> Result<(), GarbleError> {
        check_wires(gates, self.labels.len() as u32, base)?;
        let expected = table_bytes(gates);
        if tables.len() != expected {
            return Err(GarbleError::TableLength { expected, got: tables.len() });
        }
        let Evaluator { labels, tag, schedule, hash_in, tweaks, hash_out } = self;
        let tag = *tag;
        let order = match planned {
            Some(order) => check_order(order, gates.len())?,
            None => schedule.ready()?.plan(gates),
        };
        let blocks = Block::slice_from_bytes(tables).expect("length checked to be a multiple of 16");
        let mut pos = 0usize;
        let mut k = 0;
        while k < order.len() {
            let (end, is_and) = next_step(order, k);
            if is_and {
                let ands = &order[k..end];
                hash_in.clear();
                tweaks.clear();
                for &(_, i) in ands {
                    let Gate::And { a, b, .. } = gates[i as usize] else { unreachable!("batch holds AND gates") };
                    hash_in.extend_from_slice(&[labels[a as usize], labels[b as usize]]);
                    tweaks.extend_from_slice(&[tweak(tag, base + i as u64, 0)?, tweak(tag, base + i as u64, 1)?]);
                }
                hash_out.resize(hash_in.len(), Block::ZERO);
                Hasher::fixed().tccr_many(hash_in, tweaks, hash_out).expect("equal lengths");
                for (n, &(_, i)) in ands.iter().enumerate() {
                    let Gate::And { out, .. } = gates[i as usize] else { unreachable!("batch holds AND gates") };
                    let (wa, wb) = (hash_in[2 * n], hash_in[2 * n + 1]);
                    let (tg, te) = (blocks[pos], blocks[pos + 1]);
                    pos += 2;
                    let wg = hash_out[2 * n] ^ (tg & mask(wa.lsb()));
                    let we = hash_out[2 * n + 1] ^ ((te ^ wa) & mask(wb.lsb()));
                    labels[out as usize] = wg ^ we;
                }
            } else {
                match gates[order[k].1 as usize] {
                    Gate::Xor { a, b, out } => labels[out as usize] = labels[a as usize] ^ labels[b as usize],
                    // NOT is free: the garbler swapped the meaning of the labels.
                    Gate::Inv { a, out } | Gate::Copy { a, out } => labels[out as usize] = labels[a as usize],
                    Gate::Const { out, .. } => {
                        labels[out as usize] = blocks[pos];
                        pos += 1;
                    }
                    Gate::And { .. } => unreachable!("ANDs are batched"),
                }
            }
            k = end;
        }
        Ok(())
    }
}

impl Evaluator {
    /// Evaluates a [`CompiledChunk`] (first gate index `base`) with its garbled `tables`: the
    /// same labels as [`evaluate_chunk_planned`](Self::evaluate_chunk_planned) with the schedule
    /// it was compiled from.
    pub fn evaluate_compiled(&mut self, chunk: &CompiledChunk, base: u64, tables: &[u8]) -> Result<(), GarbleError> {
        chunk.check(self.labels.len(), base)?;
        if tables.len() != chunk.table_bytes {
            return Err(GarbleError::TableLength { expected: chunk.table_bytes, got: tables.len() });
        }
        let Evaluator { labels, tag, hash_in, tweaks, hash_out, .. } = self;
        let tag = *tag;
        let blocks = Block::slice_from_bytes(tables).expect("length checked to be a multiple of 16");
        let mut pos = 0usize;
        for step in &chunk.steps {
            match *step {
                Step::Ands { start, end } => {
                    let ands = &chunk.ands[start as usize..end as usize];
                    hash_in.clear();
                    hash_in.resize(2 * ands.len(), Block::ZERO);
                    for (x, &[a, b, _, _]) in hash_in.chunks_exact_mut(2).zip(ands) {
                        x.copy_from_slice(&[labels[a as usize], labels[b as usize]]);
                    }
                    hash_out.clear();
                    hash_out.resize(hash_in.len(), Block::ZERO);
                    tweaks.clear();
                    for &[_, _, _, i] in ands {
                        let g = base + i as u64;
                        tweaks.extend_from_slice(&[tweak_unchecked(tag, g, 0), tweak_unchecked(tag, g, 1)]);
                    }
                    Hasher::fixed().tccr_many(hash_in, tweaks, hash_out).expect("equal lengths");
                    let rows = &blocks[pos..pos + 2 * ands.len()];
                    pos += 2 * ands.len();
                    for (n, &[_, _, out, _]) in ands.iter().enumerate() {
                        let (wa, wb) = (hash_in[2 * n], hash_in[2 * n + 1]);
                        let (tg, te) = (rows[2 * n], rows[2 * n + 1]);
                        let wg = hash_out[2 * n] ^ (tg & mask(wa.lsb()));
                        let we = hash_out[2 * n + 1] ^ ((te ^ wa) & mask(wb.lsb()));
                        labels[out as usize] = wg ^ we;
                    }
                }
                Step::Xor { a, b, out } => labels[out as usize] = labels[a as usize] ^ labels[b as usize],
                // NOT is free: the garbler swapped the meaning of the labels.
                Step::Inv { a, out } | Step::Copy { a, out } => labels[out as usize] = labels[a as usize],
                Step::Const { out, .. } => {
                    labels[out as usize] = blocks[pos];
                    pos += 1;
                }
            }
        }
        Ok(())
    }
}
