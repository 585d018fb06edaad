//! The garbling scheme teleportation uses (Lu et al. §4.2, digest §B.4): **GRR3 + point-and-permute
//! + free-XOR**, one tweaked hash per evaluated AND gate, deterministic from the garbler's keys.
//! Pure code: no IO, no randomness of its own.
//!
//! # Scheme
//!
//! Δ has lsb 1; a wire's labels are `W⁰` and `W¹ = W⁰ ⊕ Δ`, and the *colour* of a label is its lsb
//! (the colour of `W⁰` is the wire's permute bit `p`). XOR, NOT and COPY are free (NOT swaps the
//! meaning: `out⁰ = in⁰ ⊕ Δ`). For an AND gate `g` with input zero-labels `A⁰, B⁰` (permute bits
//! `pa, pb`), row `r = 2i + j` is the row the evaluator reaches holding the colour-`i` label of A
//! and the colour-`j` label of B; it carries the semantic value `v_r = (i ⊕ pa) ∧ (j ⊕ pb)`:
//!
//! ```text
//! K_r  = A_i ⊕ σ(B_j)                               (A_i, B_j: the labels of colour i, j)
//! h_r  = H(K_r, tweak(session, g, r))
//! C⁰   = h_0 ⊕ v_0·Δ                                (GRR3: row 0's ciphertext is all-zero, not sent)
//! E_r  = h_r ⊕ C⁰ ⊕ v_r·Δ  for r = 1, 2, 3          (table: E_1 ‖ E_2 ‖ E_3, 48 bytes)
//! evaluator: C = H(A ⊕ σ(B), tweak(session, g, 2·lsb A + lsb B)) ⊕ E_r   (E_0 = 0)
//! ```
//!
//! A constant gate's "table" is the active label of its value (16 bytes); it reveals nothing.
//!
//! # Which hash, and why
//!
//! `H(x, t) = π(π(x) ⊕ t) ⊕ π(x)`: **TMMO**, the tweakable circular correlation robust (TCCR)
//! construction of Guo–Katz–Wang–Yu (§7.4; `webmpc_core::hash::tccr`, two fixed-key AES calls),
//! applied to the two labels combined as `A ⊕ σ(B)` with their linear orthomorphism
//! `σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL` (§7.3). Why this is what GRR3 needs:
//!
//! * The evaluator knows `K` of its own row. The other three rows' inputs are `K ⊕ Δ`,
//!   `K ⊕ σ(Δ)` and `K ⊕ Δ ⊕ σ(Δ)`: each is `K` plus an invertible linear image of the secret Δ,
//!   and the differences between them are invertible images too (σ and `σ ⊕ id` are both
//!   permutations — that is what makes σ an orthomorphism). So none of them is computable, and the
//!   TCCR argument (an adversary must query π at a point that depends on Δ) goes through with each
//!   offset in the role of the secret. The plain combination `A ⊕ B` is broken: the opposite row
//!   `(1−i, 1−j)` has input `A ⊕ Δ ⊕ B ⊕ Δ = K`, which the evaluator can hash itself.
//! * Outputs are XORed with Δ-dependent labels (`C⁰ ⊕ v·Δ`) while inputs are Δ-correlated: that is
//!   *circular* correlation robustness, which CR (MMO) does not give.
//! * A fixed-key permutation is public, so equal inputs in two gates (or two sessions) would give
//!   equal hashes: the tweak `(session tag, gate index, row)` makes every (input, tweak) pair used
//!   once, which CCR (MMO-σ, untweaked) does not.
//!
//! # Order and batching
//!
//! Tables are laid out in **gate order** (AND: 48 bytes, CONST: 16 bytes, others: none), so the
//! garbler and evaluator may process gates in any order that gives the sequential result. Both
//! run each chunk on a **level schedule** (the one `webmpc_garble`'s half-gates use, see
//! [`Schedule`]): every gate gets a level within the chunk that respects every dependency
//! (including circuits that overwrite wires), and the chunk is processed level by level, the
//! level's AND gates first as one batch (all their inputs read before any output is written, so
//! their hashes go through the bitsliced AES together), then its other gates in their original
//! order. A chunk is compiled once into a flat list of steps ([`Compiled`]); each AND gate keeps
//! its gate-order table offset, so the tables are byte for byte those of processing the gates one
//! by one (`tests::schedule_matches_gate_order`).

use crate::circuit::{Gate, MAX_GATES, PIECE_GATES};
use crate::TeleportError;
use alloc::vec::Vec;
use webmpc_core::aes::Aes128;
use webmpc_core::hash::{sigma, Hasher};
use webmpc_core::Block;

/// Bytes of table per AND gate (`E_1 ‖ E_2 ‖ E_3`).
pub const AND_TABLE_BYTES: usize = 48;
/// Bytes of "table" per constant gate (its active label).
pub const CONST_TABLE_BYTES: usize = 16;
/// Domain of the constant-gate zero-labels in the label PRF (see [`crate::gc::GcKeys`]).
pub(crate) const DOM_CONST: u64 = 4;
/// Bytes of schedule state per gate of a chunk, at most (steps, AND records, sort keys and
/// counts; see [`Compiled`]): what [`crate::machine::gc_job_memory`] counts for the piece in
/// flight.
pub const SCHEDULE_BYTES_PER_GATE: u64 = 64;

/// `tweak(tag, g, r) = tag · 2^64 + 4g + r`.
#[inline(always)]
fn tweak(tag: u64, gate: u64, row: u64) -> Block {
    Block::from_u128(((tag as u128) << 64) | (4 * gate + row) as u128)
}

#[inline(always)]
fn mask(bit: bool) -> Block {
    Block::mask_from_bit(bit as u8)
}

fn check_chunk(gates: &[Gate], base: u64, wires: usize) -> Result<(), TeleportError> {
    if base.checked_add(gates.len() as u64).is_none_or(|end| end > MAX_GATES) {
        return Err(TeleportError::TooLarge { what: "gate index", got: base, limit: MAX_GATES });
    }
    let ok = |w: u32| (w as usize) < wires;
    let in_range = gates.iter().all(|g| match *g {
        Gate::Xor { a, b, out } | Gate::And { a, b, out } => ok(a) && ok(b) && ok(out),
        Gate::Inv { a, out } | Gate::Copy { a, out } => ok(a) && ok(out),
        Gate::Const { out, .. } => ok(out),
    });
    if !in_range {
        return Err(TeleportError::Malformed("circuit gate (wire out of range)"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------- schedule

/// The level schedule of a chunk, shared by garbler and evaluator (the rules of
/// `webmpc_garble::halfgates::Schedule`).
///
/// Each gate gets a level within the chunk, and the chunk is processed level by level: first the
/// level's AND gates as one batch (every input read before any output is written), then its
/// other gates in their original order. Levels respect every dependency, including those of
/// circuits that overwrite wires:
///
/// * read after write: an AND sits above the gates that wrote its inputs; any other gate at or
///   above them (a same-level writer is an AND, processed first, or precedes it in order);
/// * write after read: an AND sits above every non-AND reader of the value it overwrites and at
///   or above every AND reader (same batch: reads happen before writes); any other gate at or
///   above every reader;
/// * write after write: an AND sits above the previous writer; any other gate at or above it.
///
/// Per wire it keeps 8 bytes (as the gate-order walk did): the level of the gate that wrote the
/// current value and the highest *read key* `2·level + (reader is not an AND)` of its readers.
/// One key suffices: an AND writer must sit at `⌈key/2⌉` or above (above a non-AND reader, at or
/// above an AND reader), any other writer at `⌊key/2⌋`. Levels are absolute and keep growing from
/// chunk to chunk, so no per-chunk clearing is needed: everything at or below the previous
/// chunk's highest level counts as "before this chunk" (level 0 of the chunk).
pub struct Schedule {
    /// Per wire: `[written level, read key]`, absolute.
    wires: Vec<[u32; 2]>,
    /// The highest absolute level assigned so far.
    top: u32,
    /// Scratch: each gate's key `2·level + is_not_and`, in gate order.
    keys: Vec<u32>,
    /// Scratch: gates per key, then each key's next slot (in `ands` for even keys, in `steps`
    /// for odd ones).
    slots: Vec<u32>,
}

/// Absolute levels start over (every record cleared) before they could overflow a read key.
const LEVEL_LIMIT: u32 = 1 << 30;

impl Schedule {
    /// A schedule for a circuit of `wires` wires.
    pub fn new(wires: u32) -> Self {
        Schedule { wires: alloc::vec![[0; 2]; wires as usize], top: 0, keys: Vec::new(), slots: Vec::new() }
    }

    /// Compiles `gates` (wires checked to be in range; at most [`PIECE_GATES`]) into `out`.
    ///
    /// Two passes over the gates, both in gate order: the first gives each gate its level (and
    /// counts the gates of each key); the second writes each gate straight to its place in the
    /// steps (a stable counting sort by key, so gates of one key keep their order) and its
    /// table offset, which is a running sum in gate order.
    fn compile(&mut self, gates: &[Gate], out: &mut Compiled) {
        debug_assert!(gates.len() <= PIECE_GATES);
        if self.top >= LEVEL_LIMIT - 2 * PIECE_GATES as u32 {
            self.wires.iter_mut().for_each(|w| *w = [0; 2]);
            self.top = 0;
        }
        let base = self.top;
        let wires = &mut self.wires;
        // Relative to this chunk: 0 is "before it".
        let written = |w: &[u32; 2]| w[0].saturating_sub(base);
        let read = |w: &[u32; 2]| if w[1] > 2 * base + 1 { w[1] - 2 * base } else { 0 };
        let (keys, slots) = (&mut self.keys, &mut self.slots);
        keys.clear();
        keys.reserve(gates.len());
        slots.clear();
        for g in gates {
            let (key, out, level) = match *g {
                Gate::And { a, b, out } => {
                    let so = wires[out as usize];
                    let level = (written(&wires[a as usize]) + 1)
                        .max(written(&wires[b as usize]) + 1)
                        .max(read(&so).div_ceil(2))
                        .max(written(&so) + 1);
                    let k = 2 * (base + level);
                    for w in [a, b] {
                        let r = &mut wires[w as usize][1];
                        *r = (*r).max(k);
                    }
                    (2 * level, out, level)
                }
                Gate::Xor { a, b, out } => {
                    let so = wires[out as usize];
                    let level = written(&wires[a as usize])
                        .max(written(&wires[b as usize]))
                        .max(read(&so) / 2)
                        .max(written(&so));
                    let k = 2 * (base + level) + 1;
                    for w in [a, b] {
                        let r = &mut wires[w as usize][1];
                        *r = (*r).max(k);
                    }
                    (2 * level + 1, out, level)
                }
                Gate::Inv { a, out } | Gate::Copy { a, out } => {
                    let so = wires[out as usize];
                    let level = written(&wires[a as usize]).max(read(&so) / 2).max(written(&so));
                    let r = &mut wires[a as usize][1];
                    *r = (*r).max(2 * (base + level) + 1);
                    (2 * level + 1, out, level)
                }
                Gate::Const { out, .. } => {
                    let so = wires[out as usize];
                    let level = (read(&so) / 2).max(written(&so));
                    (2 * level + 1, out, level)
                }
            };
            // The new value has no readers yet.
            wires[out as usize] = [base + level, 0];
            keys.push(key);
            if key as usize >= slots.len() {
                slots.resize(key as usize + 1, 0);
            }
            slots[key as usize] += 1;
        }
        // The highest key is the last slot's (a chunk's keys grow its slots as they come).
        self.top = base + slots.len().saturating_sub(1) as u32 / 2;
        // The steps in key order: one `Ands` step per level that has AND gates (even key), then
        // that level's other gates one step each (odd key). Each key's count becomes its first
        // slot: in `ands` for an even key, in `steps` for an odd one.
        out.steps.clear();
        out.ands.clear();
        let mut ands = 0u32;
        for (k, slot) in slots.iter_mut().enumerate() {
            let count = *slot;
            if k % 2 == 0 {
                *slot = ands;
                if count > 0 {
                    out.steps.push(Step::Ands { start: ands, end: ands + count });
                }
                ands += count;
            } else {
                *slot = out.steps.len() as u32;
                // Placeholders, each overwritten by its gate below.
                out.steps.resize(out.steps.len() + count as usize, Step::Copy { a: 0, out: 0 });
            }
        }
        out.ands.resize(ands as usize, And { a: 0, b: 0, out: 0, gate: 0, offset: 0 });
        let mut offset = 0u32;
        for ((i, g), &key) in gates.iter().enumerate().zip(keys.iter()) {
            let slot = &mut slots[key as usize];
            let at = *slot as usize;
            *slot += 1;
            let gate = i as u32;
            match *g {
                Gate::And { a, b, out: o } => out.ands[at] = And { a, b, out: o, gate, offset },
                Gate::Xor { a, b, out: o } => out.steps[at] = Step::Xor { a, b, out: o },
                Gate::Inv { a, out: o } => out.steps[at] = Step::Inv { a, out: o },
                Gate::Copy { a, out: o } => out.steps[at] = Step::Copy { a, out: o },
                Gate::Const { value, out: o } => out.steps[at] = Step::Const { value, out: o, gate, offset },
            }
            offset += crate::circuit::table_len(g) as u32;
        }
        out.gates = gates.len();
        out.table_bytes = offset as usize;
    }
}

/// An AND gate of a [`Compiled`] chunk: wires, index in the chunk, table offset (gate order).
#[derive(Clone, Copy, Debug)]
struct And {
    a: u32,
    b: u32,
    out: u32,
    gate: u32,
    offset: u32,
}

/// One step of a [`Compiled`] chunk.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// AND gates `ands[start..end]`, hashed as one batch.
    Ands { start: u32, end: u32 },
    Xor { a: u32, b: u32, out: u32 },
    Inv { a: u32, out: u32 },
    Copy { a: u32, out: u32 },
    Const { value: bool, out: u32, gate: u32, offset: u32 },
}

/// A chunk of at most [`PIECE_GATES`] gates compiled on its [`Schedule`]: a flat list of steps,
/// the AND gates of a level contiguous, each with its gate-order table offset.
#[derive(Default)]
pub struct Compiled {
    gates: usize,
    table_bytes: usize,
    steps: Vec<Step>,
    ands: Vec<And>,
}

/// Splits `gates` into chunks the schedule takes (at most [`PIECE_GATES`] gates: offsets and
/// levels then fit in `u32`, and the schedule's scratch stays bounded), with their first index.
fn sub_chunks(gates: &[Gate], base: u64) -> impl Iterator<Item = (&[Gate], u64)> {
    gates.chunks(PIECE_GATES).enumerate().map(move |(k, c)| (c, base + (k * PIECE_GATES) as u64))
}

// ---------------------------------------------------------------------------------- garbler

/// The garbler's state: Δ, σ(Δ), the label PRF (for constant gates) and every wire's zero-label.
pub struct Garbler {
    delta: Block,
    sigma_delta: Block,
    prf: Aes128,
    tag: u64,
    labels: Vec<Block>,
    schedule: Schedule,
    compiled: Compiled,
    /// Permute bits `pa | pb << 1` of each gate of the batch.
    perm: Vec<u8>,
    hash_in: Vec<Block>,
    tweaks: Vec<Block>,
    hash_out: Vec<Block>,
}

impl Garbler {
    /// A garbler for a circuit of `wires` wires under Δ (`delta`, lsb 1) with the label PRF `prf`
    /// (constant-gate labels) and the session's tweak `tag`. Input zero-labels are set with
    /// [`set_label`](Self::set_label) before the first chunk.
    pub fn new(delta: Block, prf: Aes128, wires: u32, tag: u64) -> Self {
        debug_assert!(delta.lsb(), "Δ must have lsb 1");
        Garbler {
            delta,
            sigma_delta: sigma(delta),
            prf,
            tag,
            labels: alloc::vec![Block::ZERO; wires as usize],
            schedule: Schedule::new(wires),
            compiled: Compiled::default(),
            perm: Vec::new(),
            hash_in: Vec::new(),
            tweaks: Vec::new(),
            hash_out: Vec::new(),
        }
    }

    /// Sets the zero-label of an input wire (callers pass wires below the wire count).
    pub fn set_label(&mut self, wire: u32, zero: Block) {
        self.labels[wire as usize] = zero;
    }

    /// The zero-label of `wire`.
    pub fn label(&self, wire: u32) -> Block {
        self.labels[wire as usize]
    }

    /// Garbles `gates` (the first has index `base` in the circuit) and appends their tables, in
    /// gate order, to `tables`.
    pub fn garble_chunk(&mut self, gates: &[Gate], base: u64, tables: &mut Vec<u8>) -> Result<(), TeleportError> {
        check_chunk(gates, base, self.labels.len())?;
        let start = tables.len();
        tables.resize(start + crate::circuit::tables_len(gates), 0);
        let mut at = start;
        let mut compiled = core::mem::take(&mut self.compiled);
        for (c, b) in sub_chunks(gates, base) {
            self.schedule.compile(c, &mut compiled);
            self.run(&compiled, b, &mut tables[at..at + compiled.table_bytes]);
            at += compiled.table_bytes;
        }
        self.compiled = compiled;
        Ok(())
    }

    /// Garbles a compiled chunk into `tables` (exactly its table bytes).
    fn run(&mut self, c: &Compiled, base: u64, tables: &mut [u8]) {
        let Garbler { delta, sigma_delta, prf, tag, labels, perm, hash_in, tweaks, hash_out, .. } = self;
        let (delta, sd, tag) = (*delta, *sigma_delta, *tag);
        for step in &c.steps {
            match *step {
                Step::Ands { start, end } => {
                    let ands = &c.ands[start as usize..end as usize];
                    // Every input of the batch is read before any output is written.
                    hash_in.clear();
                    hash_in.resize(4 * ands.len(), Block::ZERO);
                    tweaks.clear();
                    tweaks.resize(4 * ands.len(), Block::ZERO);
                    perm.clear();
                    for ((x, t), g) in hash_in.chunks_exact_mut(4).zip(tweaks.chunks_exact_mut(4)).zip(ands) {
                        let (a0, b0) = (labels[g.a as usize], labels[g.b as usize]);
                        let (pa, pb) = (a0.lsb(), b0.lsb());
                        perm.push(pa as u8 | (pb as u8) << 1);
                        let k = a0 ^ sigma(b0);
                        let gate = base + g.gate as u64;
                        for r in 0..4u64 {
                            let (ci, cj) = (r >> 1 == 1, r & 1 == 1);
                            x[r as usize] = k ^ (delta & mask(ci ^ pa)) ^ (sd & mask(cj ^ pb));
                            t[r as usize] = tweak(tag, gate, r);
                        }
                    }
                    hash_out.clear();
                    hash_out.resize(hash_in.len(), Block::ZERO);
                    Hasher::fixed().tccr_many(hash_in, tweaks, hash_out).expect("equal lengths");
                    for ((g, &p), h) in ands.iter().zip(perm.iter()).zip(hash_out.chunks_exact(4)) {
                        // Permute bits of the inputs as read before the batch wrote anything.
                        let (pa, pb) = (p & 1 == 1, p & 2 == 2);
                        let v = |r: u64| ((r >> 1 == 1) ^ pa) & ((r & 1 == 1) ^ pb);
                        let c0 = h[0] ^ (delta & mask(v(0)));
                        labels[g.out as usize] = c0;
                        let off = g.offset as usize;
                        let t = &mut tables[off..off + AND_TABLE_BYTES];
                        for r in 1..4u64 {
                            let e = h[r as usize] ^ c0 ^ (delta & mask(v(r)));
                            t[16 * (r as usize - 1)..16 * r as usize].copy_from_slice(&e.0);
                        }
                    }
                }
                Step::Xor { a, b, out } => labels[out as usize] = labels[a as usize] ^ labels[b as usize],
                Step::Inv { a, out } => labels[out as usize] = labels[a as usize] ^ delta,
                Step::Copy { a, out } => labels[out as usize] = labels[a as usize],
                Step::Const { value, out, gate, offset } => {
                    let index = base + gate as u64;
                    let zero = prf.encrypt_block(Block::from_u128(((DOM_CONST as u128) << 64) | index as u128));
                    labels[out as usize] = zero;
                    let active = zero ^ (delta & mask(value));
                    tables[offset as usize..offset as usize + CONST_TABLE_BYTES].copy_from_slice(&active.0);
                }
            }
        }
    }
}

impl Drop for Garbler {
    fn drop(&mut self) {
        Block::wipe(&mut self.labels);
        Block::wipe(&mut self.hash_in);
        Block::wipe(&mut self.hash_out);
        Block::wipe(core::slice::from_mut(&mut self.delta));
        Block::wipe(core::slice::from_mut(&mut self.sigma_delta));
    }
}

// -------------------------------------------------------------------------------- evaluator

/// The evaluator's state: the active label of every wire.
pub struct Evaluator {
    tag: u64,
    labels: Vec<Block>,
    schedule: Schedule,
    compiled: Compiled,
    hash_in: Vec<Block>,
    tweaks: Vec<Block>,
    hash_out: Vec<Block>,
}

fn block_at(tables: &[u8], off: usize) -> Block {
    Block(tables[off..off + 16].try_into().expect("16 bytes"))
}

impl Evaluator {
    /// An evaluator for a circuit of `wires` wires garbled under `tag`.
    pub fn new(wires: u32, tag: u64) -> Self {
        Evaluator {
            tag,
            labels: alloc::vec![Block::ZERO; wires as usize],
            schedule: Schedule::new(wires),
            compiled: Compiled::default(),
            hash_in: Vec::new(),
            tweaks: Vec::new(),
            hash_out: Vec::new(),
        }
    }

    /// Sets the active label of an input wire.
    pub fn set_label(&mut self, wire: u32, active: Block) {
        self.labels[wire as usize] = active;
    }

    /// The active label of `wire`.
    pub fn label(&self, wire: u32) -> Block {
        self.labels[wire as usize]
    }

    /// Evaluates `gates` (first index `base`) with their `tables` (exactly the chunk's length).
    pub fn evaluate_chunk(&mut self, gates: &[Gate], base: u64, tables: &[u8]) -> Result<(), TeleportError> {
        check_chunk(gates, base, self.labels.len())?;
        if tables.len() != crate::circuit::tables_len(gates) {
            return Err(TeleportError::Malformed("garbled tables (wrong length for the chunk)"));
        }
        let mut at = 0;
        let mut compiled = core::mem::take(&mut self.compiled);
        for (c, b) in sub_chunks(gates, base) {
            self.schedule.compile(c, &mut compiled);
            self.run(&compiled, b, &tables[at..at + compiled.table_bytes]);
            at += compiled.table_bytes;
        }
        self.compiled = compiled;
        Ok(())
    }

    /// Evaluates a compiled chunk with its tables (exactly its table bytes).
    fn run(&mut self, c: &Compiled, base: u64, tables: &[u8]) {
        let Evaluator { tag, labels, hash_in, tweaks, hash_out, .. } = self;
        let tag = *tag;
        for step in &c.steps {
            match *step {
                Step::Ands { start, end } => {
                    let ands = &c.ands[start as usize..end as usize];
                    hash_in.clear();
                    hash_in.resize(ands.len(), Block::ZERO);
                    tweaks.clear();
                    tweaks.resize(ands.len(), Block::ZERO);
                    for ((x, t), g) in hash_in.iter_mut().zip(tweaks.iter_mut()).zip(ands) {
                        let (wa, wb) = (labels[g.a as usize], labels[g.b as usize]);
                        let row = 2 * wa.lsb() as u64 + wb.lsb() as u64;
                        *x = wa ^ sigma(wb);
                        *t = tweak(tag, base + g.gate as u64, row);
                    }
                    hash_out.clear();
                    hash_out.resize(ands.len(), Block::ZERO);
                    Hasher::fixed().tccr_many(hash_in, tweaks, hash_out).expect("equal lengths");
                    for ((g, h), t) in ands.iter().zip(hash_out.iter()).zip(tweaks.iter()) {
                        // The row (the colours of the inputs as read) is in the tweak's low bits.
                        let row = t.to_u128() as u64 & 3;
                        let (ci, cj) = (row >> 1 == 1, row & 1 == 1);
                        let off = g.offset as usize;
                        let sel = (block_at(tables, off) & mask(!ci & cj))
                            ^ (block_at(tables, off + 16) & mask(ci & !cj))
                            ^ (block_at(tables, off + 32) & mask(ci & cj));
                        labels[g.out as usize] = *h ^ sel;
                    }
                }
                Step::Xor { a, b, out } => labels[out as usize] = labels[a as usize] ^ labels[b as usize],
                // NOT is free: the garbler swapped the meaning of the labels.
                Step::Inv { a, out } | Step::Copy { a, out } => labels[out as usize] = labels[a as usize],
                Step::Const { out, offset, .. } => labels[out as usize] = block_at(tables, offset as usize),
            }
        }
    }
}

impl Drop for Evaluator {
    fn drop(&mut self) {
        Block::wipe(&mut self.labels);
        Block::wipe(&mut self.hash_in);
        Block::wipe(&mut self.hash_out);
    }
}

// ------------------------------------------------------------------------ gate-order walk

/// The gate-order walk the schedule replaced, kept as the reference the schedule is tested
/// against and as the "before" of the benchmarks (`bench-teleport --grr3`): AND gates are
/// collected into a batch (at most 32) until one depends on it, other gates run at once unless
/// they depend on the batch. Not for production use: it batches far fewer gates per AES call.
#[doc(hidden)]
pub mod gate_order {
    use super::*;

    const BATCH: usize = 32;

    /// Per-wire marks of the current batch: which wires it reads and writes.
    struct Stamps {
        read: Vec<u32>,
        write: Vec<u32>,
        epoch: u32,
    }

    impl Stamps {
        fn new(wires: usize) -> Self {
            Stamps { read: alloc::vec![0; wires], write: alloc::vec![0; wires], epoch: 1 }
        }

        fn clear(&mut self) {
            self.epoch = self.epoch.wrapping_add(1);
            if self.epoch == 0 {
                self.read.iter_mut().for_each(|s| *s = 0);
                self.write.iter_mut().for_each(|s| *s = 0);
                self.epoch = 1;
            }
        }

        fn written(&self, w: u32) -> bool {
            self.write[w as usize] == self.epoch
        }

        fn touched(&self, w: u32) -> bool {
            self.read[w as usize] == self.epoch || self.write[w as usize] == self.epoch
        }
    }

    /// Builds one [`Compiled`] chunk in the walk's order: its batches and single gates, so the
    /// same `run` code executes it.
    fn walk(gates: &[Gate], wires: usize) -> Compiled {
        let mut stamps = Stamps::new(wires);
        let mut c = Compiled::default();
        let mut pending: Vec<And> = Vec::new();
        let flush = |c: &mut Compiled, pending: &mut Vec<And>, stamps: &mut Stamps| {
            if !pending.is_empty() {
                let start = c.ands.len() as u32;
                c.ands.append(pending);
                c.steps.push(Step::Ands { start, end: c.ands.len() as u32 });
            }
            stamps.clear();
        };
        let mut offset = 0u32;
        for (i, g) in gates.iter().enumerate() {
            match *g {
                Gate::And { a, b, out } => {
                    if pending.len() == BATCH || stamps.written(a) || stamps.written(b) || stamps.touched(out) {
                        flush(&mut c, &mut pending, &mut stamps);
                    }
                    stamps.read[a as usize] = stamps.epoch;
                    stamps.read[b as usize] = stamps.epoch;
                    stamps.write[out as usize] = stamps.epoch;
                    pending.push(And { a, b, out, gate: i as u32, offset });
                }
                other => {
                    let (x, y, out) = match other {
                        Gate::Xor { a, b, out } => (a, b, out),
                        Gate::Inv { a, out } | Gate::Copy { a, out } => (a, a, out),
                        Gate::Const { out, .. } => (out, out, out),
                        Gate::And { .. } => unreachable!("matched above"),
                    };
                    let reads = !matches!(other, Gate::Const { .. });
                    if !pending.is_empty() && ((reads && (stamps.written(x) || stamps.written(y))) || stamps.touched(out)) {
                        flush(&mut c, &mut pending, &mut stamps);
                    }
                    c.steps.push(match other {
                        Gate::Xor { a, b, out } => Step::Xor { a, b, out },
                        Gate::Inv { a, out } => Step::Inv { a, out },
                        Gate::Copy { a, out } => Step::Copy { a, out },
                        Gate::Const { value, out } => Step::Const { value, out, gate: i as u32, offset },
                        Gate::And { .. } => unreachable!("matched above"),
                    });
                }
            }
            offset += crate::circuit::table_len(g) as u32;
        }
        flush(&mut c, &mut pending, &mut stamps);
        c.gates = gates.len();
        c.table_bytes = offset as usize;
        c
    }

    /// How many AND batches the walk makes of `gates`.
    #[cfg(test)]
    pub(super) fn walk_batches(gates: &[Gate], wires: usize) -> usize {
        walk(gates, wires).steps.iter().filter(|s| matches!(s, Step::Ands { .. })).count()
    }

    /// [`Garbler::garble_chunk`] in gate order (the same tables and labels).
    pub fn garble_chunk(g: &mut Garbler, gates: &[Gate], base: u64, tables: &mut Vec<u8>) -> Result<(), TeleportError> {
        check_chunk(gates, base, g.labels.len())?;
        for (c, b) in sub_chunks(gates, base) {
            let compiled = walk(c, g.labels.len());
            let start = tables.len();
            tables.resize(start + compiled.table_bytes, 0);
            g.run(&compiled, b, &mut tables[start..]);
        }
        Ok(())
    }

    /// [`Evaluator::evaluate_chunk`] in gate order (the same labels).
    pub fn evaluate_chunk(e: &mut Evaluator, gates: &[Gate], base: u64, tables: &[u8]) -> Result<(), TeleportError> {
        check_chunk(gates, base, e.labels.len())?;
        if tables.len() != crate::circuit::tables_len(gates) {
            return Err(TeleportError::Malformed("garbled tables (wrong length for the chunk)"));
        }
        let mut at = 0;
        for (c, b) in sub_chunks(gates, base) {
            let compiled = walk(c, e.labels.len());
            e.run(&compiled, b, &tables[at..at + compiled.table_bytes]);
            at += compiled.table_bytes;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use webmpc_core::hash::tccr;
    use webmpc_core::prg::Prg;

    const TAG: u64 = 0x5eed;

    /// The scheme of the module docs, one gate at a time: zero-labels after the chunk and tables.
    fn reference_garble(delta: Block, prf: &Aes128, labels: &mut [Block], gates: &[Gate], base: u64) -> Vec<u8> {
        let mut tables = Vec::new();
        for (i, g) in gates.iter().enumerate() {
            let index = base + i as u64;
            match *g {
                Gate::And { a, b, out } => {
                    let (a0, b0) = (labels[a as usize], labels[b as usize]);
                    let (pa, pb) = (a0.lsb(), b0.lsb());
                    let with = |w: Block, bit: bool| if bit { w ^ delta } else { w };
                    let h = |r: u64| {
                        let (ci, cj) = (r >> 1 == 1, r & 1 == 1);
                        // The labels of colours (ci, cj) have values (ci ⊕ pa, cj ⊕ pb).
                        tccr(with(a0, ci ^ pa) ^ sigma(with(b0, cj ^ pb)), tweak(TAG, index, r))
                    };
                    let v = |r: u64| ((r >> 1 == 1) ^ pa) & ((r & 1 == 1) ^ pb);
                    let c0 = with(h(0), v(0));
                    for r in 1..4 {
                        tables.extend_from_slice(&with(h(r) ^ c0, v(r)).0);
                    }
                    labels[out as usize] = c0;
                }
                Gate::Xor { a, b, out } => labels[out as usize] = labels[a as usize] ^ labels[b as usize],
                Gate::Inv { a, out } => labels[out as usize] = labels[a as usize] ^ delta,
                Gate::Copy { a, out } => labels[out as usize] = labels[a as usize],
                Gate::Const { value, out } => {
                    let zero = prf.encrypt_block(Block::from_u128(((DOM_CONST as u128) << 64) | index as u128));
                    labels[out as usize] = zero;
                    tables.extend_from_slice(&(if value { zero ^ delta } else { zero }).0);
                }
            }
        }
        tables
    }

    /// The plaintext value of every wire after `gates`, in gate order.
    fn plain(values: &mut [bool], gates: &[Gate]) {
        for g in gates {
            match *g {
                Gate::And { a, b, out } => values[out as usize] = values[a as usize] & values[b as usize],
                Gate::Xor { a, b, out } => values[out as usize] = values[a as usize] ^ values[b as usize],
                Gate::Inv { a, out } => values[out as usize] = !values[a as usize],
                Gate::Copy { a, out } => values[out as usize] = values[a as usize],
                Gate::Const { value, out } => values[out as usize] = value,
            }
        }
    }

    /// Garbles and evaluates `gates` (cut into `cuts` chunks) on the schedule, in gate order and
    /// one gate at a time, and checks they agree with each other and with the plaintext: the
    /// same tables, the same labels, and every final active label is the zero-label ⊕ value·Δ.
    fn check(wires: u32, gates: &[Gate], cuts: &[usize], seed: u128) {
        let mut prg = Prg::from_seed(Block::from_u128(seed));
        let delta = Block::from_u128(prg.next_block().to_u128() | 1);
        let prf = Aes128::new(prg.next_block());
        let zeros: Vec<Block> = (0..wires).map(|_| prg.next_block()).collect();
        let mut values: Vec<bool> = (0..wires).map(|_| prg.next_block().lsb()).collect();
        let mut chunks = Vec::new();
        let mut rest = gates;
        for &c in cuts {
            let (a, b) = rest.split_at(c.min(rest.len()));
            chunks.push(a);
            rest = b;
        }
        chunks.push(rest);

        let mut scheduled = Garbler::new(delta, prf.clone(), wires, TAG);
        let mut ordered = Garbler::new(delta, prf.clone(), wires, TAG);
        let mut eval = Evaluator::new(wires, TAG);
        let mut eval_ordered = Evaluator::new(wires, TAG);
        for w in 0..wires {
            scheduled.set_label(w, zeros[w as usize]);
            ordered.set_label(w, zeros[w as usize]);
            let active = if values[w as usize] { zeros[w as usize] ^ delta } else { zeros[w as usize] };
            eval.set_label(w, active);
            eval_ordered.set_label(w, active);
        }
        let mut reference = zeros.clone();
        let mut base = 0u64;
        for c in chunks {
            let want = reference_garble(delta, &prf, &mut reference, c, base);
            let (mut t1, mut t2) = (vec![7u8], vec![7u8]);
            scheduled.garble_chunk(c, base, &mut t1).unwrap();
            gate_order::garble_chunk(&mut ordered, c, base, &mut t2).unwrap();
            assert_eq!(&t1[1..], &want[..], "scheduled tables");
            assert_eq!(&t2[1..], &want[..], "gate-order tables");
            eval.evaluate_chunk(c, base, &want).unwrap();
            gate_order::evaluate_chunk(&mut eval_ordered, c, base, &want).unwrap();
            plain(&mut values, c);
            base += c.len() as u64;
        }
        for w in 0..wires {
            assert_eq!(scheduled.label(w), reference[w as usize]);
            assert_eq!(ordered.label(w), reference[w as usize]);
            let want = if values[w as usize] { reference[w as usize] ^ delta } else { reference[w as usize] };
            assert_eq!(eval.label(w), want, "wire {w}");
            assert_eq!(eval_ordered.label(w), want, "wire {w}");
        }
    }

    fn arb_gate(wires: u32) -> impl Strategy<Value = Gate> {
        let w = 0..wires;
        prop_oneof![
            3 => (w.clone(), w.clone(), w.clone()).prop_map(|(a, b, out)| Gate::And { a, b, out }),
            3 => (w.clone(), w.clone(), w.clone()).prop_map(|(a, b, out)| Gate::Xor { a, b, out }),
            1 => (w.clone(), w.clone()).prop_map(|(a, out)| Gate::Inv { a, out }),
            1 => (w.clone(), w.clone()).prop_map(|(a, out)| Gate::Copy { a, out }),
            1 => (any::<bool>(), w).prop_map(|(value, out)| Gate::Const { value, out }),
        ]
    }

    proptest! {
        /// Circuits over few wires overwrite them all the time (every kind of read-after-write,
        /// write-after-read and write-after-write hazard, within a level and across chunks).
        #[test]
        fn schedule_matches_gate_order(
            gates in proptest::collection::vec(arb_gate(9), 0..300),
            cuts in proptest::collection::vec(0usize..120, 0..4),
            seed in any::<u128>(),
        ) {
            check(9, &gates, &cuts, seed);
        }
    }

    fn reference_circuit(name: &str) -> (u32, Vec<Gate>) {
        let path = webmpc_circuit::testing::reference_dir().join(name);
        let c = webmpc_circuit::Circuit::parse_bristol(&std::fs::read_to_string(path).unwrap()).unwrap();
        let bin = c.to_binary();
        let ranges = crate::circuit::pieces(&bin).unwrap();
        let (h, _) = crate::circuit::Header::parse(&bin).unwrap();
        let mut gates = Vec::new();
        let mut piece = Vec::new();
        for r in &ranges[1..] {
            crate::circuit::decode_gates(&bin[r.clone()], h.wires, PIECE_GATES, &mut piece).unwrap();
            gates.extend_from_slice(&piece);
        }
        (h.wires, gates)
    }

    /// The reference circuits, whole and compacted (which reuses wires), in one chunk and cut.
    #[test]
    fn reference_circuits_match_gate_order() {
        for name in ["aes_128.txt", "adder64.txt", "mult64.txt", "neg64.txt", "zero_equal.txt"] {
            let (wires, gates) = reference_circuit(name);
            check(wires, &gates, &[], 1);
            check(wires, &gates, &[gates.len() / 3, 777], 2);
            let path = webmpc_circuit::testing::reference_dir().join(name);
            let c = webmpc_circuit::Circuit::parse_bristol(&std::fs::read_to_string(path).unwrap()).unwrap().compact();
            let bin = c.to_binary();
            let (h, _) = crate::circuit::Header::parse(&bin).unwrap();
            let ranges = crate::circuit::pieces(&bin).unwrap();
            let mut compact = Vec::new();
            for r in &ranges[1..] {
                let mut piece = Vec::new();
                crate::circuit::decode_gates(&bin[r.clone()], h.wires, PIECE_GATES, &mut piece).unwrap();
                compact.extend(piece);
            }
            check(h.wires, &compact, &[compact.len() / 2], 3);
        }
    }

    /// The point of the schedule: AES-128's AND gates go through the hash a level at a time
    /// (its AND depth is a few dozen), not in the gate-order walk's batches of at most 32.
    #[test]
    fn aes_ands_batch_by_level() {
        let (wires, gates) = reference_circuit("aes_128.txt");
        let mut s = Schedule::new(wires);
        let mut c = Compiled::default();
        s.compile(&gates, &mut c);
        let batches = c.steps.iter().filter(|s| matches!(s, Step::Ands { .. })).count();
        let ands = c.ands.len();
        assert!(ands > 6000);
        assert!(batches <= 100, "{batches} AND batches for {ands} AND gates");
        let walked = gate_order::walk_batches(&gates, wires as usize);
        assert!(walked > 4 * batches, "the gate-order walk made {walked} batches");
    }

    /// Levels carry over from chunk to chunk and start over before they could overflow.
    #[test]
    fn levels_start_over_before_overflowing() {
        let gates: Vec<Gate> = (0..200).map(|i| Gate::And { a: i % 3, b: (i + 1) % 3, out: (i + 2) % 3 }).collect();
        let mut s = Schedule::new(3);
        let mut c = Compiled::default();
        s.top = LEVEL_LIMIT - 2 * PIECE_GATES as u32 - 1;
        s.wires = alloc::vec![[s.top; 2]; 3];
        s.compile(&gates, &mut c);
        assert!(s.top > LEVEL_LIMIT - 2 * PIECE_GATES as u32);
        s.compile(&gates, &mut c);
        assert!(s.top < 1000, "cleared and started over");
        check(3, &gates, &[50, 50], 4);
    }
}
