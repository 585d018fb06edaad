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
//! garbler and evaluator may batch gates differently. Both use [`walk`]: AND gates are collected
//! into a batch until one depends on the batch (reads a wire the batch writes, or writes a wire
//! it reads or writes), and other gates run at once unless they depend on the batch. A batch
//! reads all its inputs before writing any output. Hashes of a batch go through AES together (8
//! in flight with AES-NI).

use crate::circuit::{Gate, MAX_GATES};
use crate::TeleportError;
use alloc::vec::Vec;
use webmpc_core::aes::Aes128;
use webmpc_core::hash::{sigma, Hasher};
use webmpc_core::Block;

/// Bytes of table per AND gate (`E_1 ‖ E_2 ‖ E_3`).
pub const AND_TABLE_BYTES: usize = 48;
/// Bytes of "table" per constant gate (its active label).
pub const CONST_TABLE_BYTES: usize = 16;
/// Most AND gates per batch.
const BATCH: usize = 32;
/// Domain of the constant-gate zero-labels in the label PRF (see [`crate::gc::GcKeys`]).
pub(crate) const DOM_CONST: u64 = 4;

/// `tweak(tag, g, r) = tag · 2^64 + 4g + r`.
#[inline(always)]
fn tweak(tag: u64, gate: u64, row: u64) -> Block {
    Block::from_u128(((tag as u128) << 64) | (4 * gate + row) as u128)
}

#[inline(always)]
fn mask(bit: bool) -> Block {
    Block::mask_from_bit(bit as u8)
}

/// Per-wire marks of the current batch: which wires it reads and writes.
struct Stamps {
    read: Vec<u32>,
    write: Vec<u32>,
    epoch: u32,
}

impl Stamps {
    fn new(wires: u32) -> Self {
        Stamps { read: alloc::vec![0; wires as usize], write: alloc::vec![0; wires as usize], epoch: 1 }
    }

    /// Starts a new (empty) batch.
    fn clear(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.read.iter_mut().for_each(|s| *s = 0);
            self.write.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
    }

    #[inline(always)]
    fn written(&self, w: u32) -> bool {
        self.write[w as usize] == self.epoch
    }

    #[inline(always)]
    fn touched(&self, w: u32) -> bool {
        self.read[w as usize] == self.epoch || self.write[w as usize] == self.epoch
    }
}

/// What garbler and evaluator do with a batch of AND gates or one other gate.
trait Exec {
    /// `batch[k] = (index in chunk, table offset)` of AND gates, all independent.
    fn ands(&mut self, gates: &[Gate], base: u64, batch: &[(u32, u32)]);
    /// One non-AND gate at `offset` in the chunk's tables.
    fn other(&mut self, gate: Gate, index: u64, offset: usize);
}

/// Runs a chunk through `exec` in a dependency-respecting order (see the module docs).
fn walk(stamps: &mut Stamps, pending: &mut Vec<(u32, u32)>, gates: &[Gate], base: u64, exec: &mut impl Exec) {
    pending.clear();
    stamps.clear();
    let mut offset = 0usize;
    for (i, g) in gates.iter().enumerate() {
        match *g {
            Gate::And { a, b, out } => {
                if pending.len() == BATCH || stamps.written(a) || stamps.written(b) || stamps.touched(out) {
                    exec.ands(gates, base, pending);
                    pending.clear();
                    stamps.clear();
                }
                stamps.read[a as usize] = stamps.epoch;
                stamps.read[b as usize] = stamps.epoch;
                stamps.write[out as usize] = stamps.epoch;
                pending.push((i as u32, offset as u32));
                offset += AND_TABLE_BYTES;
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
                    exec.ands(gates, base, pending);
                    pending.clear();
                    stamps.clear();
                }
                exec.other(other, base + i as u64, offset);
                offset += crate::circuit::table_len(&other);
            }
        }
    }
    if !pending.is_empty() {
        exec.ands(gates, base, pending);
    }
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

/// The garbler's state: Δ, σ(Δ), the label PRF (for constant gates) and every wire's zero-label.
pub struct Garbler {
    delta: Block,
    sigma_delta: Block,
    prf: Aes128,
    tag: u64,
    labels: Vec<Block>,
    stamps: Stamps,
    pending: Vec<(u32, u32)>,
    /// Permute bits `pa | pb << 1` of each gate of the batch.
    perm: Vec<u8>,
    hash_in: Vec<Block>,
    tweaks: Vec<Block>,
    hash_out: Vec<Block>,
}

struct GarbleExec<'a> {
    g: &'a mut Garbler,
    tables: &'a mut [u8],
}

impl Exec for GarbleExec<'_> {
    fn ands(&mut self, gates: &[Gate], base: u64, batch: &[(u32, u32)]) {
        let g = &mut *self.g;
        let (delta, sd) = (g.delta, g.sigma_delta);
        g.hash_in.clear();
        g.tweaks.clear();
        g.perm.clear();
        for &(i, _) in batch {
            let Gate::And { a, b, .. } = gates[i as usize] else { unreachable!("batches hold AND gates") };
            let (a0, b0) = (g.labels[a as usize], g.labels[b as usize]);
            let (pa, pb) = (a0.lsb(), b0.lsb());
            g.perm.push(pa as u8 | (pb as u8) << 1);
            let k = a0 ^ sigma(b0);
            for r in 0..4u64 {
                let (ci, cj) = (r >> 1 == 1, r & 1 == 1);
                g.hash_in.push(k ^ (delta & mask(ci ^ pa)) ^ (sd & mask(cj ^ pb)));
                g.tweaks.push(tweak(g.tag, base + i as u64, r));
            }
        }
        g.hash_out.resize(g.hash_in.len(), Block::ZERO);
        Hasher::fixed().tccr_many(&g.hash_in, &g.tweaks, &mut g.hash_out).expect("equal lengths");
        for (n, &(i, off)) in batch.iter().enumerate() {
            let Gate::And { out, .. } = gates[i as usize] else { unreachable!("batches hold AND gates") };
            // Permute bits of the inputs as read before the batch wrote anything.
            let (pa, pb) = (g.perm[n] & 1 == 1, g.perm[n] & 2 == 2);
            let h = &g.hash_out[4 * n..4 * n + 4];
            let v = |r: u64| ((r >> 1 == 1) ^ pa) & ((r & 1 == 1) ^ pb);
            let c0 = h[0] ^ (delta & mask(v(0)));
            g.labels[out as usize] = c0;
            let t = &mut self.tables[off as usize..off as usize + AND_TABLE_BYTES];
            for r in 1..4u64 {
                let e = h[r as usize] ^ c0 ^ (delta & mask(v(r)));
                t[16 * (r as usize - 1)..16 * r as usize].copy_from_slice(&e.0);
            }
        }
    }

    fn other(&mut self, gate: Gate, index: u64, offset: usize) {
        let g = &mut *self.g;
        match gate {
            Gate::Xor { a, b, out } => g.labels[out as usize] = g.labels[a as usize] ^ g.labels[b as usize],
            Gate::Inv { a, out } => g.labels[out as usize] = g.labels[a as usize] ^ g.delta,
            Gate::Copy { a, out } => g.labels[out as usize] = g.labels[a as usize],
            Gate::Const { value, out } => {
                let zero = g.prf.encrypt_block(Block::from_u128(((DOM_CONST as u128) << 64) | index as u128));
                g.labels[out as usize] = zero;
                let active = zero ^ (g.delta & mask(value));
                self.tables[offset..offset + CONST_TABLE_BYTES].copy_from_slice(&active.0);
            }
            Gate::And { .. } => unreachable!("ANDs are batched"),
        }
    }
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
            stamps: Stamps::new(wires),
            pending: Vec::new(),
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
        let mut stamps = core::mem::replace(&mut self.stamps, Stamps { read: Vec::new(), write: Vec::new(), epoch: 1 });
        let mut pending = core::mem::take(&mut self.pending);
        walk(&mut stamps, &mut pending, gates, base, &mut GarbleExec { g: self, tables: &mut tables[start..] });
        self.stamps = stamps;
        self.pending = pending;
        Ok(())
    }
}

impl Drop for Garbler {
    fn drop(&mut self) {
        Block::wipe(&mut self.labels);
        Block::wipe(&mut self.hash_in);
        Block::wipe(core::slice::from_mut(&mut self.delta));
        Block::wipe(core::slice::from_mut(&mut self.sigma_delta));
    }
}

/// The evaluator's state: the active label of every wire.
pub struct Evaluator {
    tag: u64,
    labels: Vec<Block>,
    stamps: Stamps,
    pending: Vec<(u32, u32)>,
    hash_in: Vec<Block>,
    tweaks: Vec<Block>,
    hash_out: Vec<Block>,
}

struct EvalExec<'a> {
    e: &'a mut Evaluator,
    tables: &'a [u8],
}

fn block_at(tables: &[u8], off: usize) -> Block {
    Block(tables[off..off + 16].try_into().expect("16 bytes"))
}

impl Exec for EvalExec<'_> {
    fn ands(&mut self, gates: &[Gate], base: u64, batch: &[(u32, u32)]) {
        let e = &mut *self.e;
        e.hash_in.clear();
        e.tweaks.clear();
        for &(i, _) in batch {
            let Gate::And { a, b, .. } = gates[i as usize] else { unreachable!("batches hold AND gates") };
            let (wa, wb) = (e.labels[a as usize], e.labels[b as usize]);
            let row = 2 * wa.lsb() as u64 + wb.lsb() as u64;
            e.hash_in.push(wa ^ sigma(wb));
            e.tweaks.push(tweak(e.tag, base + i as u64, row));
        }
        e.hash_out.resize(e.hash_in.len(), Block::ZERO);
        Hasher::fixed().tccr_many(&e.hash_in, &e.tweaks, &mut e.hash_out).expect("equal lengths");
        for (n, &(i, off)) in batch.iter().enumerate() {
            let Gate::And { out, .. } = gates[i as usize] else { unreachable!("batches hold AND gates") };
            let row = e.tweaks[n].to_u128() as u64 & 3;
            let (ci, cj) = (row >> 1 == 1, row & 1 == 1);
            let off = off as usize;
            let sel = (block_at(self.tables, off) & mask(!ci & cj))
                ^ (block_at(self.tables, off + 16) & mask(ci & !cj))
                ^ (block_at(self.tables, off + 32) & mask(ci & cj));
            e.labels[out as usize] = e.hash_out[n] ^ sel;
        }
    }

    fn other(&mut self, gate: Gate, _index: u64, offset: usize) {
        let e = &mut *self.e;
        match gate {
            Gate::Xor { a, b, out } => e.labels[out as usize] = e.labels[a as usize] ^ e.labels[b as usize],
            // NOT is free: the garbler swapped the meaning of the labels.
            Gate::Inv { a, out } | Gate::Copy { a, out } => e.labels[out as usize] = e.labels[a as usize],
            Gate::Const { out, .. } => e.labels[out as usize] = block_at(self.tables, offset),
            Gate::And { .. } => unreachable!("ANDs are batched"),
        }
    }
}

impl Evaluator {
    /// An evaluator for a circuit of `wires` wires garbled under `tag`.
    pub fn new(wires: u32, tag: u64) -> Self {
        Evaluator {
            tag,
            labels: alloc::vec![Block::ZERO; wires as usize],
            stamps: Stamps::new(wires),
            pending: Vec::new(),
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
        let mut stamps = core::mem::replace(&mut self.stamps, Stamps { read: Vec::new(), write: Vec::new(), epoch: 1 });
        let mut pending = core::mem::take(&mut self.pending);
        walk(&mut stamps, &mut pending, gates, base, &mut EvalExec { e: self, tables });
        self.stamps = stamps;
        self.pending = pending;
        Ok(())
    }
}

impl Drop for Evaluator {
    fn drop(&mut self) {
        Block::wipe(&mut self.labels);
        Block::wipe(&mut self.hash_in);
    }
}
