//! The pure math of distributed garbling (WRK17 Figs. 2–3): the row hash, the per-wire state of
//! masks and labels, the garbler's authenticated rows, and the evaluator's decryption with its
//! tag checks. No IO, no async, no randomness of its own (fresh masks and labels come in as
//! arguments), so everything here is deterministic and testable alone.
//!
//! Notation as in the [module docs](super): garbler i, evaluator e, AND gate γ = α ∧ β, row
//! ℓ = 2a + b for the masked input values (a, b), ⟨r_ℓ⟩ the authenticated sharing of the masked
//! output of row ℓ, which is r_0 ⊕ b·λ_α ⊕ a·λ_β ⊕ a·b with r_0 = λ_α·λ_β ⊕ λ_γ.

use crate::preprocess::CONSTANT_HOLDER;
use crate::share::{mask, AuthShares};
use sha2::{Digest, Sha256};
use webmpc_circuit::Gate;
use webmpc_core::aes::fixed_key_aes;
use webmpc_core::channel::PartyId;
use webmpc_core::hash::sigma;
use webmpc_core::Block;

/// AND gates one run may garble: the gate index takes 44 bits of every tweak.
pub const MAX_AND_GATES: u64 = 1 << 44;

/// Most parties: block indices take 16 bits of a tweak, and recipient sets are 64-bit masks.
pub const MAX_PARTIES: usize = 64;

/// Gates hashed per batch by the garbler: the inner and outer blocks of a batch stay in L1.
const GARBLE_BATCH: usize = 128;

/// The tweaks of one garbler in one run: a 64-bit tag derived from (session, run, garbler), then
/// per hash call the AND-gate index, the row and the output block.
///
/// * inner tweak of gate g: `tag ‖ g·2^20`
/// * outer tweak of block k of row ℓ of gate g: `tag ‖ g·2^20 + ℓ·2^16 + k + 1`
///
/// so every (session, run, garbler, gate, row, block) has its own tweak, and no outer tweak
/// equals an inner one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tweaks {
    tag: u64,
}

impl Tweaks {
    /// The tweaks of `garbler` in run `run` of session `session`.
    pub fn new(session: &[u8; 32], run: u64, garbler: PartyId) -> Tweaks {
        let mut h = Sha256::new();
        h.update(b"webmpc/authgc/row-hash-tag/v1");
        h.update(session);
        h.update(run.to_le_bytes());
        h.update((garbler as u64).to_le_bytes());
        Tweaks { tag: u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes")) }
    }

    #[inline(always)]
    fn gate(&self, gate: u64) -> Block {
        Block::from_u128((u128::from(self.tag) << 64) | (u128::from(gate) << 20))
    }

    #[inline(always)]
    fn block(&self, gate: u64, row: usize, k: usize) -> Block {
        Block::from_u128((u128::from(self.tag) << 64) | (u128::from(gate) << 20) | ((row as u128) << 16) | (k as u128 + 1))
    }
}

/// The combined key of a row: x = L_α ⊕ σ(L_β) (before the gate tweak). The three rows the
/// evaluator does not open differ from the one it opens by Δ, σ(Δ) or Δ ⊕ σ(Δ) = σ²(Δ).
#[inline(always)]
pub fn combine(l_alpha: Block, l_beta: Block) -> Block {
    l_alpha ^ sigma(l_beta)
}

/// Computes the row pads H(L_α, L_β, γ, ℓ) for a batch of rows: for entry m = (gate g, row ℓ,
/// combined key x), with u = π(x ⊕ t_g), `bit_pads[m]` = lsb(u) and
/// `pads[m·blocks + k]` = π(u ⊕ t_{g,ℓ,k}) ⊕ u = TMMO(x ⊕ t_g, t_{g,ℓ,k}).
///
/// One inner AES call per row (shared by its blocks) and one per output block. `scratch` is
/// wiped before returning (it held the inner values u).
pub fn row_pads(
    tweaks: &Tweaks,
    entries: &[(u64, usize, Block)],
    blocks: usize,
    scratch: &mut Vec<Block>,
    pads: &mut [Block],
    bit_pads: &mut [bool],
) {
    assert_eq!(pads.len(), entries.len() * blocks, "one pad block per row and output block");
    assert_eq!(bit_pads.len(), entries.len(), "one bit pad per row");
    let pi = fixed_key_aes();
    scratch.clear();
    scratch.extend(entries.iter().map(|&(g, _, x)| x ^ tweaks.gate(g)));
    pi.encrypt_blocks(scratch);
    for (m, &(g, row, _)) in entries.iter().enumerate() {
        let u = scratch[m];
        bit_pads[m] = u.lsb();
        for (k, p) in pads[m * blocks..(m + 1) * blocks].iter_mut().enumerate() {
            *p = u ^ tweaks.block(g, row, k);
        }
    }
    pi.encrypt_blocks(pads);
    for (m, chunk) in pads.chunks_exact_mut(blocks.max(1)).enumerate().take(entries.len()) {
        let u = scratch[m];
        for p in chunk.iter_mut() {
            *p ^= u;
        }
    }
    Block::wipe(scratch);
}

/// Bytes of one garbler's table for `ands` AND gates among `parties`: 4 rows of `parties` blocks
/// (the tags under every other party's key, then the label share) and 4 masked bits per gate.
pub fn table_bytes(ands: usize, parties: usize) -> usize {
    ands * 4 * parties * 16 + (4 * ands).div_ceil(8)
}

/// Position of party j's block in party i's row (the tags are in party order, skipping i).
#[inline(always)]
pub fn tag_slot(i: PartyId, j: PartyId) -> usize {
    if j < i {
        j
    } else {
        j - 1
    }
}

/// What every party holds for each live wire: its view of the authenticated mask ⟨λ_w⟩, for a
/// garbler its zero-label L_{w,0} (its one-label is L_{w,0} ⊕ Δ), and whether the evaluator's
/// labels on the wire have a single source ([`single_source`]).
pub struct WireState {
    /// Mask views, one per wire.
    pub masks: AuthShares,
    /// Zero-labels, one per wire (empty for the evaluator).
    pub zero: Vec<Block>,
    /// [`single_source`] of each wire (public: it depends on the circuit and n only).
    pub single_source: Vec<bool>,
}

/// Whether the evaluator's label of every garbler i on `gate`'s output wire is a function of
/// garbler i's own messages and public values alone, given the same for its input wires
/// (`flags`, indexed by wire), among `parties` parties. Returns (output wire, flag).
///
/// This is what decides whom a failed label check may blame (the crate docs' "abort, not
/// identifiable abort"). The evaluator gets garbler i's labels of the input wires from i itself
/// (for the broadcast x̂), and XOR, INV, COPY and CONST gates combine them with nothing but public
/// values; so on a wire that no AND gate precedes, a wrong label of i is i's doing, and a wrong
/// label the evaluator hands i back is the evaluator's. An AND gate's output label of i is
/// rebuilt from i's row **and from the tags every other garbler j put in its own row for i**
/// (L^i_γ = label share ⊕ ⊕_{j≠i} M_i\[r^j\]), which i cannot check: a corrupt j that flips the
/// tag it holds for i makes i's label wrong from there on. So an AND output has a single source
/// only when there is no other garbler, i.e. with two parties (the evaluator's own tag is the
/// only other term).
pub fn single_source(gate: &Gate, flags: &[bool], parties: usize) -> (usize, bool) {
    match *gate {
        Gate::Xor { a, b, out } => (out as usize, flags[a as usize] && flags[b as usize]),
        Gate::Inv { a, out } | Gate::Copy { a, out } => (out as usize, flags[a as usize]),
        Gate::Const { out, .. } => (out as usize, true),
        Gate::And { out, .. } => (out as usize, parties == 2),
    }
}

impl Drop for WireState {
    fn drop(&mut self) {
        Block::wipe(&mut self.zero);
    }
}

/// Checks that every wire of `gates` is below `wires` (what a validated circuit guarantees; a
/// custom gate source might not). Returns the first offending gate's position.
pub fn check_wires(gates: &[Gate], wires: u32) -> Result<(), usize> {
    for (i, g) in gates.iter().enumerate() {
        let ok = match *g {
            Gate::Xor { a, b, out } | Gate::And { a, b, out } => a < wires && b < wires && out < wires,
            Gate::Inv { a, out } | Gate::Copy { a, out } => a < wires && out < wires,
            Gate::Const { out, .. } => out < wires,
        };
        if !ok {
            return Err(i);
        }
    }
    Ok(())
}

/// The wire values one AND gate's rows are made from, for a batch of AND gates in gate order:
/// the views of ⟨λ_α⟩, ⟨λ_β⟩ and the fresh ⟨λ_γ⟩, and the garbler's zero-labels of the three
/// wires. Taken when the gate is reached, since a later gate may overwrite its wires.
pub struct AndInputs {
    /// Views of ⟨λ_α⟩.
    pub alpha: AuthShares,
    /// Views of ⟨λ_β⟩.
    pub beta: AuthShares,
    /// Views of ⟨λ_γ⟩.
    pub gamma: AuthShares,
    /// L_{α,0} (garbler only).
    pub l_alpha: Vec<Block>,
    /// L_{β,0} (garbler only).
    pub l_beta: Vec<Block>,
    /// L_{γ,0} (garbler only).
    pub l_gamma: Vec<Block>,
}

impl AndInputs {
    /// An empty batch for party `me` of `parties`, with room for `ands` gates (`labels`: whether
    /// this party garbles and so records labels too).
    pub fn with_capacity(me: PartyId, parties: usize, ands: usize, labels: bool) -> AndInputs {
        let shares = || {
            let mut s = AuthShares::empty(me, parties);
            s.bits.reserve_exact(ands);
            for j in (0..parties).filter(|&j| j != me) {
                s.macs[j].reserve_exact(ands);
                s.keys[j].reserve_exact(ands);
            }
            s
        };
        let blocks = || Vec::with_capacity(if labels { ands } else { 0 });
        AndInputs {
            alpha: shares(),
            beta: shares(),
            gamma: shares(),
            l_alpha: blocks(),
            l_beta: blocks(),
            l_gamma: blocks(),
        }
    }
}

/// Appends wire `w`'s view of `from` to `to`.
fn push_view(to: &mut AuthShares, from: &AuthShares, w: usize) {
    to.bits.push(from.bits[w]);
    for j in 0..from.parties() {
        if j != from.me {
            to.macs[j].push(from.macs[j][w]);
            to.keys[j].push(from.keys[j][w]);
        }
    }
}

/// Sets wire `w` of `to` to element `k` of `from`.
fn set_view(to: &mut AuthShares, w: usize, from: &AuthShares, k: usize) {
    to.bits[w] = from.bits[k];
    for j in 0..to.parties() {
        if j != to.me {
            to.macs[j][w] = from.macs[j][k];
            to.keys[j][w] = from.keys[j][k];
        }
    }
}

/// Runs the mask (and label) side of a chunk of gates over `state`: XOR gates XOR masks and
/// labels (free-XOR with offset Δ); INV adds the public constant 1 to the mask (so the masked
/// value and the labels pass through unchanged); CONST gets the mask 0 and, for a garbler, the
/// zero-label c·Δ, so that the label of its masked value c is the public 0; COPY copies; AND
/// output k of the chunk takes the fresh mask `fresh[k]` and zero-label `fresh_labels[k]`, and
/// its inputs are recorded in `and_inputs`. `delta` is this party's Δ.
pub fn propagate(
    state: &mut WireState,
    gates: &[Gate],
    fresh: &AuthShares,
    fresh_labels: &[Block],
    delta: Block,
    and_inputs: &mut AndInputs,
) {
    let masks = &mut state.masks;
    let garbler = !state.zero.is_empty();
    let me = masks.me;
    let n = masks.parties();
    let mut k = 0;
    for gate in gates {
        let (w, single) = single_source(gate, &state.single_source, n);
        state.single_source[w] = single;
        match *gate {
            Gate::Xor { a, b, out } => {
                let (a, b, out) = (a as usize, b as usize, out as usize);
                masks.bits[out] = masks.bits[a] ^ masks.bits[b];
                for j in (0..n).filter(|&j| j != me) {
                    masks.macs[j][out] = masks.macs[j][a] ^ masks.macs[j][b];
                    masks.keys[j][out] = masks.keys[j][a] ^ masks.keys[j][b];
                }
                if garbler {
                    state.zero[out] = state.zero[a] ^ state.zero[b];
                }
            }
            Gate::And { a, b, out } => {
                let (a, b, out) = (a as usize, b as usize, out as usize);
                push_view(&mut and_inputs.alpha, masks, a);
                push_view(&mut and_inputs.beta, masks, b);
                push_view(&mut and_inputs.gamma, fresh, k);
                set_view(masks, out, fresh, k);
                if garbler {
                    and_inputs.l_alpha.push(state.zero[a]);
                    and_inputs.l_beta.push(state.zero[b]);
                    and_inputs.l_gamma.push(fresh_labels[k]);
                    state.zero[out] = fresh_labels[k];
                }
                k += 1;
            }
            Gate::Inv { a, out } => {
                let (a, out) = (a as usize, out as usize);
                copy_wire(masks, a, out);
                if me == CONSTANT_HOLDER {
                    masks.bits[out] ^= true;
                } else {
                    masks.keys[CONSTANT_HOLDER][out] ^= delta;
                }
                if garbler {
                    state.zero[out] = state.zero[a];
                }
            }
            Gate::Const { value, out } => {
                let out = out as usize;
                masks.bits[out] = false;
                for j in (0..n).filter(|&j| j != me) {
                    masks.macs[j][out] = Block::ZERO;
                    masks.keys[j][out] = Block::ZERO;
                }
                if garbler {
                    state.zero[out] = delta & mask(value);
                }
            }
            Gate::Copy { a, out } => {
                let (a, out) = (a as usize, out as usize);
                copy_wire(masks, a, out);
                if garbler {
                    state.zero[out] = state.zero[a];
                }
            }
        }
    }
}

fn copy_wire(masks: &mut AuthShares, a: usize, out: usize) {
    masks.bits[out] = masks.bits[a];
    for j in 0..masks.parties() {
        if j != masks.me {
            masks.macs[j][out] = masks.macs[j][a];
            masks.keys[j][out] = masks.keys[j][a];
        }
    }
}

/// Number of AND gates in `gates`.
pub fn and_count(gates: &[Gate]) -> usize {
    gates.iter().filter(|g| matches!(g, Gate::And { .. })).count()
}

/// The view of ⟨r_ℓ⟩ of AND gate k, element-wise from the bases r_0, λ_α, λ_β:
/// r_ℓ = r_0 ⊕ b·λ_α ⊕ a·λ_β ⊕ a·b (the constant added by [`CONSTANT_HOLDER`]).
struct RowView<'a> {
    r0: &'a AuthShares,
    alpha: &'a AuthShares,
    beta: &'a AuthShares,
    delta: Block,
}

impl RowView<'_> {
    #[inline(always)]
    fn bit(&self, k: usize, a: bool, b: bool) -> bool {
        let c = self.r0.me == CONSTANT_HOLDER && a && b;
        self.r0.bits[k] ^ (b & self.alpha.bits[k]) ^ (a & self.beta.bits[k]) ^ c
    }

    /// M_j[r^me_ℓ]: the tags are linear and unaffected by the constant.
    #[inline(always)]
    fn mac(&self, j: PartyId, k: usize, ma: Block, mb: Block) -> Block {
        self.r0.macs[j][k] ^ (self.alpha.macs[j][k] & mb) ^ (self.beta.macs[j][k] & ma)
    }

    /// K_me[r^j_ℓ]: linear, plus Δ on the holder's share in row 3.
    #[inline(always)]
    fn key(&self, j: PartyId, k: usize, ma: Block, mb: Block) -> Block {
        let c = if j == CONSTANT_HOLDER { self.delta & ma & mb } else { Block::ZERO };
        self.r0.keys[j][k] ^ (self.alpha.keys[j][k] & mb) ^ (self.beta.keys[j][k] & ma) ^ c
    }
}

/// The garbler's side of a batch of AND gates: the bases of ⟨r_ℓ⟩ (r_0 = λ_α·λ_β ⊕ λ_γ, λ_α,
/// λ_β) and its zero-labels of α, β, γ.
pub struct GarbleRows<'a> {
    /// View of ⟨λ_α·λ_β ⊕ λ_γ⟩.
    pub r0: &'a AuthShares,
    /// View of ⟨λ_α⟩.
    pub alpha: &'a AuthShares,
    /// View of ⟨λ_β⟩.
    pub beta: &'a AuthShares,
    /// L_{α,0}.
    pub l_alpha: &'a [Block],
    /// L_{β,0}.
    pub l_beta: &'a [Block],
    /// L_{γ,0}.
    pub l_gamma: &'a [Block],
}

/// Garbles a batch of AND gates (the first has AND-gate index `first_gate` in the run) for the
/// garbler whose views these are, with its Δ: appends the table (layout of [`table_bytes`]) to
/// `out`. Row ℓ = 2a + b of gate k encrypts, under H(L_{α,a}, L_{β,b}, γ, ℓ), the masked bit
/// r^i_ℓ, the tags {M_j[r^i_ℓ]}_{j≠i} and the label share L_{γ,0} ⊕ ⊕_{j≠i} K_i[r^j_ℓ] ⊕ r^i_ℓ·Δ.
pub fn garble_rows(tweaks: &Tweaks, delta: Block, first_gate: u64, rows: &GarbleRows<'_>, out: &mut Vec<u8>) {
    let me = rows.r0.me;
    let n = rows.r0.parties();
    let ands = rows.r0.len();
    let view = RowView { r0: rows.r0, alpha: rows.alpha, beta: rows.beta, delta };
    let peers: Vec<PartyId> = (0..n).filter(|&j| j != me).collect();
    let start = out.len();
    out.resize(start + table_bytes(ands, n), 0);
    let (blocks_part, bits_part) = out[start..].split_at_mut(ands * 4 * n * 16);
    let table = Block::slice_from_bytes_mut(blocks_part).expect("a multiple of 16 bytes");
    let sigma_delta = sigma(delta);
    let mut entries = Vec::with_capacity(4 * GARBLE_BATCH);
    let mut scratch = Vec::with_capacity(4 * GARBLE_BATCH);
    let mut bit_pads = vec![false; 4 * GARBLE_BATCH];
    for batch_start in (0..ands).step_by(GARBLE_BATCH) {
        let batch_end = (batch_start + GARBLE_BATCH).min(ands);
        entries.clear();
        for k in batch_start..batch_end {
            let x = combine(rows.l_alpha[k], rows.l_beta[k]);
            let g = first_gate + k as u64;
            entries.push((g, 0, x));
            entries.push((g, 1, x ^ sigma_delta));
            entries.push((g, 2, x ^ delta));
            entries.push((g, 3, x ^ delta ^ sigma_delta));
        }
        let pads = &mut table[batch_start * 4 * n..batch_end * 4 * n];
        let bits = &mut bit_pads[..entries.len()];
        row_pads(tweaks, &entries, n, &mut scratch, pads, bits);
        for k in batch_start..batch_end {
            // Σ_j K_i[r^j_ℓ] from the sums of the bases, per row.
            for row in 0..4 {
                let (a, b) = (row >> 1 == 1, row & 1 == 1);
                let (ma, mb) = (mask(a), mask(b));
                let bit = view.bit(k, a, b);
                let at = (k * 4 + row) * n;
                let mut key_sum = Block::ZERO;
                for (slot, &j) in peers.iter().enumerate() {
                    table[at + slot] ^= view.mac(j, k, ma, mb);
                    key_sum ^= view.key(j, k, ma, mb);
                }
                table[at + n - 1] ^= rows.l_gamma[k] ^ key_sum ^ (delta & mask(bit));
                let m = (k - batch_start) * 4 + row;
                let index = 4 * k + row;
                bits_part[index / 8] |= u8::from(bit ^ bit_pads[m]) << (index % 8);
            }
        }
    }
    bit_pads.iter_mut().for_each(|b| *b = false);
}

/// The evaluator's per-live-wire state: the masked value x̂_w and, for every garbler i, the
/// label L^i_{w,x̂_w} (slot `w·parties + i`; the evaluator's own slot is unused).
pub struct EvalState {
    /// x̂_w.
    pub xhat: Vec<bool>,
    /// L^i_{w,x̂_w}.
    pub labels: Vec<Block>,
    /// [`single_source`] of each wire: false until the wire is assigned (an input wire when its
    /// labels arrive, any other by its gate).
    pub single_source: Vec<bool>,
    parties: usize,
}

impl EvalState {
    /// A state for `wires` wires among `parties` parties.
    pub fn new(wires: usize, parties: usize) -> EvalState {
        EvalState {
            xhat: vec![false; wires],
            labels: vec![Block::ZERO; wires * parties],
            single_source: vec![false; wires],
            parties,
        }
    }

    /// The number of wires.
    pub fn wires(&self) -> usize {
        self.xhat.len()
    }

    /// Garbler i's label on wire w.
    pub fn label(&self, w: usize, i: PartyId) -> Block {
        self.labels[w * self.parties + i]
    }

    /// Sets garbler i's label on wire w.
    pub fn set_label(&mut self, w: usize, i: PartyId, l: Block) {
        self.labels[w * self.parties + i] = l;
    }

    fn copy(&mut self, a: usize, out: usize) {
        let n = self.parties;
        self.xhat[out] = self.xhat[a];
        self.labels.copy_within(a * n..(a + 1) * n, out * n);
    }
}

impl Drop for EvalState {
    fn drop(&mut self) {
        Block::wipe(&mut self.labels);
    }
}

/// The evaluator's material for a batch of AND gates: the bases of its views of ⟨r_ℓ⟩ and every
/// garbler's table (indexed by party; the evaluator's own entry is empty).
pub struct EvalRows<'a> {
    /// View of ⟨λ_α·λ_β ⊕ λ_γ⟩.
    pub r0: &'a AuthShares,
    /// View of ⟨λ_α⟩.
    pub alpha: &'a AuthShares,
    /// View of ⟨λ_β⟩.
    pub beta: &'a AuthShares,
    /// Garbler i's table.
    pub tables: &'a [Vec<u8>],
}

/// A garbler's row failed the evaluator's tag check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadRow {
    /// The garbler whose row it was.
    pub garbler: PartyId,
    /// Whether the failure proves that garbler deviated: both input wires of the gate have a
    /// [`single_source`], so the row was decrypted under labels only that garbler sent. Otherwise
    /// another garbler's tag for it, in an earlier row, may be what was wrong.
    pub proves_garbler: bool,
}

/// Evaluates a chunk of gates (whose AND gates are, in order, the gates of `rows`, the first with
/// AND-gate index `first_gate`), updating `state`. For each AND gate the evaluator decrypts the
/// row its masked inputs select from every garbler's table and checks the tag under its own key
/// (M_e[r^i_ℓ] = K_e[r^i_ℓ] ⊕ r^i_ℓ·Δ_e) of **every** garbler before using any of the rows; a
/// failure names the garbler whose row it was, and whether that proves it deviated
/// ([`BadRow::proves_garbler`]). `tweaks[i]` are garbler i's tweaks; `delta` is Δ_e.
///
/// `order` is the chunk's schedule from `webmpc_garble::halfgates::plan_chunk`: gates run in that
/// order, and each run of same-level AND gates (independent of each other, and safe under wire
/// reuse) is hashed in one batch per garbler, so the cipher works on many blocks at once.
pub fn evaluate_chunk(
    state: &mut EvalState,
    gates: &[Gate],
    order: &[(u32, u32)],
    tweaks: &[Tweaks],
    delta: Block,
    first_gate: u64,
    rows: &EvalRows<'_>,
) -> Result<(), BadRow> {
    assert_eq!(order.len(), gates.len(), "a schedule for this chunk");
    let e = rows.r0.me;
    let n = rows.r0.parties();
    let view = RowView { r0: rows.r0, alpha: rows.alpha, beta: rows.beta, delta };
    let garblers: Vec<PartyId> = (0..n).filter(|&i| i != e).collect();
    let ands = rows.r0.len();
    let tables: Vec<(&[Block], &[u8])> = rows
        .tables
        .iter()
        .map(|t| {
            if t.is_empty() {
                (&[][..], &[][..])
            } else {
                let (blocks, bits) = t.split_at(ands * 4 * n * 16);
                (Block::slice_from_bytes(blocks).expect("a multiple of 16 bytes"), bits)
            }
        })
        .collect();
    // The AND-gate index (within the chunk) of every gate.
    let mut and_index = vec![0usize; gates.len()];
    let mut k = 0;
    for (i, g) in gates.iter().enumerate() {
        if matches!(g, Gate::And { .. }) {
            and_index[i] = k;
            k += 1;
        }
    }
    let mut b = Batch::default();
    let mut s = 0;
    let result = (|| {
        while s < order.len() {
            let key = order[s].0;
            if key % 2 == 1 {
                free_gate(state, &gates[order[s].1 as usize], &garblers);
                s += 1;
                continue;
            }
            let mut end = s;
            while end < order.len() && order[end].0 == key {
                end += 1;
            }
            let batch = &order[s..end];
            let len = batch.len();
            // 1. Every gate's row, and the hash inputs per garbler (all inputs are read before
            //    any output is written: a gate of the batch may overwrite another's input).
            b.sel.clear();
            b.single.clear();
            for &(_, gi) in batch {
                let gate = &gates[gi as usize];
                let Gate::And { a, b: bw, out } = *gate else { unreachable!("an AND batch") };
                let (wa, wb) = (a as usize, bw as usize);
                let (xa, xb) = (state.xhat[wa], state.xhat[wb]);
                b.sel.push((and_index[gi as usize], wa, wb, out as usize, xa, xb));
                let inputs = state.single_source[wa] && state.single_source[wb];
                b.single.push((inputs, single_source(gate, &state.single_source, n).1));
            }
            b.pads.resize(n, Vec::new());
            b.bit_pads.resize(n, Vec::new());
            for &i in &garblers {
                b.entries.clear();
                for &(k, wa, wb, _, xa, xb) in &b.sel {
                    let row = 2 * usize::from(xa) + usize::from(xb);
                    b.entries.push((first_gate + k as u64, row, combine(state.label(wa, i), state.label(wb, i))));
                }
                b.pads[i].resize(len * n, Block::ZERO);
                b.bit_pads[i].resize(len, false);
                row_pads(&tweaks[i], &b.entries, n, &mut b.scratch, &mut b.pads[i], &mut b.bit_pads[i]);
            }
            // 2. Decrypt, check every garbler's tag, then combine.
            b.decrypted.resize(n * n, Block::ZERO);
            b.row_bits.resize(n, false);
            b.out_xhat.clear();
            b.out_labels.resize(len * n, Block::ZERO);
            for (m, &(k, _, _, _, xa, xb)) in b.sel.iter().enumerate() {
                let row = 2 * usize::from(xa) + usize::from(xb);
                let (ma, mb) = (mask(xa), mask(xb));
                for &i in &garblers {
                    let (blocks, bits) = tables[i];
                    let at = (k * 4 + row) * n;
                    let dec = &mut b.decrypted[i * n..(i + 1) * n];
                    for (d, (c, p)) in dec.iter_mut().zip(blocks[at..at + n].iter().zip(&b.pads[i][m * n..(m + 1) * n])) {
                        *d = *c ^ *p;
                    }
                    let index = 4 * k + row;
                    let bit = ((bits[index / 8] >> (index % 8)) & 1 == 1) ^ b.bit_pads[i][m];
                    b.row_bits[i] = bit;
                    // Pitfall 7: the row's masked bit must carry a valid tag under Δ_e.
                    let want = view.key(i, k, ma, mb) ^ (delta & mask(bit));
                    if dec[tag_slot(i, e)] != want {
                        return Err(BadRow { garbler: i, proves_garbler: b.single[m].0 });
                    }
                }
                let mut xhat = view.bit(k, xa, xb);
                for &i in &garblers {
                    xhat ^= b.row_bits[i];
                    // L^i_γ = label share ⊕ Σ_{j≠i} M_i[r^j_ℓ]: the evaluator's own tag, and the
                    // other garblers' tags from their rows.
                    let mut l = b.decrypted[i * n + n - 1] ^ view.mac(i, k, ma, mb);
                    for &j in garblers.iter().filter(|&&j| j != i) {
                        l ^= b.decrypted[j * n + tag_slot(j, i)];
                    }
                    b.out_labels[m * n + i] = l;
                }
                b.out_xhat.push(xhat);
            }
            // 3. Outputs.
            for (m, &(_, _, _, out, _, _)) in b.sel.iter().enumerate() {
                state.xhat[out] = b.out_xhat[m];
                state.single_source[out] = b.single[m].1;
                for &i in &garblers {
                    state.set_label(out, i, b.out_labels[m * n + i]);
                }
            }
            s = end;
        }
        Ok(())
    })();
    b.wipe();
    result
}

/// Scratch of [`evaluate_chunk`], reused across its batches.
#[derive(Default)]
struct Batch {
    /// Per gate of the batch: (AND index, α, β, γ, x̂_α, x̂_β).
    sel: Vec<(usize, usize, usize, usize, bool, bool)>,
    /// Per gate of the batch: whether α and β both have a [`single_source`], and whether γ has.
    single: Vec<(bool, bool)>,
    entries: Vec<(u64, usize, Block)>,
    scratch: Vec<Block>,
    pads: Vec<Vec<Block>>,
    bit_pads: Vec<Vec<bool>>,
    decrypted: Vec<Block>,
    row_bits: Vec<bool>,
    out_xhat: Vec<bool>,
    out_labels: Vec<Block>,
}

impl Batch {
    fn wipe(&mut self) {
        for p in self.pads.iter_mut() {
            Block::wipe(p);
        }
        Block::wipe(&mut self.decrypted);
        Block::wipe(&mut self.out_labels);
        for e in self.entries.iter_mut() {
            e.2 = Block::ZERO;
        }
    }
}

/// An XOR, INV, CONST or COPY gate on the evaluator's state.
fn free_gate(state: &mut EvalState, gate: &Gate, garblers: &[PartyId]) {
    let (w, single) = single_source(gate, &state.single_source, state.parties);
    state.single_source[w] = single;
    match *gate {
        Gate::Xor { a, b, out } => {
            let (a, b, out) = (a as usize, b as usize, out as usize);
            state.xhat[out] = state.xhat[a] ^ state.xhat[b];
            for &i in garblers {
                let l = state.label(a, i) ^ state.label(b, i);
                state.set_label(out, i, l);
            }
        }
        Gate::Inv { a, out } | Gate::Copy { a, out } => state.copy(a as usize, out as usize),
        Gate::Const { value, out } => {
            let out = out as usize;
            state.xhat[out] = value;
            for &i in garblers {
                state.set_label(out, i, Block::ZERO);
            }
        }
        Gate::And { .. } => unreachable!("AND gates are evaluated in batches"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ideal::{deal, deal_triples, reconstruct};
    use webmpc_core::prg::Prg;

    #[test]
    fn row_pads_are_tmmo_with_a_shared_inner_call() {
        let tw = Tweaks::new(&[3; 32], 7, 1);
        let mut prg = Prg::from_seed(Block::from_u128(11));
        let entries: Vec<(u64, usize, Block)> = (0..37).map(|m| (m as u64 / 4 + 5, m % 4, prg.next_block())).collect();
        let blocks = 3;
        let mut pads = vec![Block::ZERO; entries.len() * blocks];
        let mut bits = vec![false; entries.len()];
        row_pads(&tw, &entries, blocks, &mut Vec::new(), &mut pads, &mut bits);
        for (m, &(g, row, x)) in entries.iter().enumerate() {
            let input = x ^ tw.gate(g);
            for k in 0..blocks {
                assert_eq!(pads[m * blocks + k], webmpc_core::hash::tccr(input, tw.block(g, row, k)));
            }
            assert_eq!(bits[m], fixed_key_aes().encrypt_block(input).lsb());
        }
        // Every tweak differs: across gates, rows, blocks, runs and garblers.
        let other_run = Tweaks::new(&[3; 32], 8, 1);
        let other_garbler = Tweaks::new(&[3; 32], 7, 2);
        assert_ne!(tw.tag, other_run.tag);
        assert_ne!(tw.tag, other_garbler.tag);
        let mut seen = std::collections::HashSet::new();
        for g in 0..4 {
            assert!(seen.insert(tw.gate(g).to_u128()));
            for row in 0..4 {
                for k in 0..9 {
                    assert!(seen.insert(tw.block(g, row, k).to_u128()));
                }
            }
        }
    }

    #[test]
    fn single_source_passes_through_free_gates_and_stops_at_and_gates_unless_two_parties() {
        // Wire 0 has a single source, wire 1 has not.
        let f = [true, false];
        assert_eq!(single_source(&Gate::Xor { a: 0, b: 0, out: 5 }, &f, 3), (5, true));
        assert_eq!(single_source(&Gate::Xor { a: 0, b: 1, out: 5 }, &f, 3), (5, false));
        assert_eq!(single_source(&Gate::Inv { a: 0, out: 5 }, &f, 3), (5, true));
        assert_eq!(single_source(&Gate::Copy { a: 1, out: 5 }, &f, 3), (5, false));
        assert_eq!(single_source(&Gate::Const { value: true, out: 5 }, &f, 3), (5, true));
        // An AND output's label of garbler i is rebuilt from the other garblers' tags too.
        for n in [3, 4, 64] {
            assert_eq!(single_source(&Gate::And { a: 0, b: 0, out: 5 }, &f, n), (5, false));
        }
        assert_eq!(single_source(&Gate::And { a: 1, b: 1, out: 5 }, &f, 2), (5, true));
    }

    #[test]
    fn the_unopened_rows_differ_by_invertible_images_of_delta() {
        // x_{ab} ⊕ x_{a'b'} ∈ {Δ, σ(Δ), Δ ⊕ σ(Δ)} and none of them is 0 (σ is an orthomorphism
        // with σ³ = id, so I ⊕ σ = σ² is invertible too).
        let mut prg = Prg::from_seed(Block::from_u128(12));
        for _ in 0..100 {
            let d = prg.next_block();
            let (la, lb) = (prg.next_block(), prg.next_block());
            let rows: Vec<Block> = (0..4)
                .map(|r: usize| combine(la ^ (d & mask(r >> 1 == 1)), lb ^ (d & mask(r & 1 == 1))))
                .collect();
            for r in 0..4 {
                for s in r + 1..4 {
                    assert_ne!(rows[r], rows[s]);
                }
            }
            assert_eq!(sigma(sigma(sigma(d))), d);
            assert_eq!(d ^ sigma(d), sigma(sigma(d)));
        }
    }

    /// Garbles one batch of AND gates with dealt masks for n parties and evaluates it at every
    /// possible evaluator, for every combination of masked inputs: the evaluator's x̂_γ and labels
    /// match the garblers' zero-labels and the plaintext AND.
    #[test]
    fn garbled_rows_evaluate_to_the_masked_and_for_every_evaluator() {
        for n in [2usize, 3, 4] {
            let mut prg = Prg::from_seed(Block::from_u128(n as u128 + 40));
            let deltas: Vec<Block> = (0..n).map(|_| prg.next_block()).collect();
            let ands = 9;
            let alpha = deal(&mut prg, &deltas, ands);
            let beta = deal(&mut prg, &deltas, ands);
            let gamma = deal(&mut prg, &deltas, ands);
            let la = reconstruct(&alpha, &deltas);
            let lb = reconstruct(&beta, &deltas);
            let lg = reconstruct(&gamma, &deltas);
            // ⟨λ_α λ_β⟩ from a dealt triple with x = λ_α, y = λ_β: deal and fix up.
            let mut sig = deal_triples(&mut prg, &deltas, ands).into_iter().map(|t| t.z).collect::<Vec<_>>();
            let vz = reconstruct(&sig, &deltas);
            for v in sig.iter_mut() {
                let fix: Vec<bool> = (0..ands).map(|k| vz[k] ^ (la[k] & lb[k])).collect();
                v.add_public(&fix, deltas[v.me], CONSTANT_HOLDER);
            }
            let r0: Vec<AuthShares> = sig.iter().zip(&gamma).map(|(s, g)| s.xor(g)).collect();
            let zero: Vec<Vec<Block>> = (0..n).map(|_| (0..3 * ands).map(|_| prg.next_block()).collect()).collect();
            let session = [9u8; 32];
            for e in 0..n {
                let tweaks: Vec<Tweaks> = (0..n).map(|i| Tweaks::new(&session, 0, i)).collect();
                let tables: Vec<Vec<u8>> = (0..n)
                    .map(|i| {
                        let mut t = Vec::new();
                        if i != e {
                            let z = &zero[i];
                            let rows = GarbleRows {
                                r0: &r0[i],
                                alpha: &alpha[i],
                                beta: &beta[i],
                                l_alpha: &z[..ands],
                                l_beta: &z[ands..2 * ands],
                                l_gamma: &z[2 * ands..],
                            };
                            garble_rows(&tweaks[i], deltas[i], 100, &rows, &mut t);
                            assert_eq!(t.len(), table_bytes(ands, n));
                        }
                        t
                    })
                    .collect();
                for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
                    // Wires: 0..ands = α's, ands..2ands = β's, outputs after.
                    let gates: Vec<Gate> = (0..ands as u32)
                        .map(|k| Gate::And { a: k, b: ands as u32 + k, out: 2 * ands as u32 + k })
                        .collect();
                    let mut state = EvalState::new(3 * ands, n);
                    for k in 0..ands {
                        state.xhat[k] = a;
                        state.xhat[ands + k] = b;
                        for i in (0..n).filter(|&i| i != e) {
                            state.set_label(k, i, zero[i][k] ^ (deltas[i] & mask(a)));
                            state.set_label(ands + k, i, zero[i][ands + k] ^ (deltas[i] & mask(b)));
                        }
                    }
                    let rows = EvalRows { r0: &r0[e], alpha: &alpha[e], beta: &beta[e], tables: &tables };
                    let order = webmpc_garble::halfgates::plan_chunk(3 * ands as u32, &gates).unwrap();
                    evaluate_chunk(&mut state, &gates, &order, &tweaks, deltas[e], 100, &rows).expect("honest rows");
                    for k in 0..ands {
                        let want = ((a ^ la[k]) & (b ^ lb[k])) ^ lg[k];
                        let got = state.xhat[2 * ands + k];
                        assert_eq!(got, want, "n = {n}, e = {e}, gate {k}");
                        for i in (0..n).filter(|&i| i != e) {
                            assert_eq!(state.label(2 * ands + k, i), zero[i][2 * ands + k] ^ (deltas[i] & mask(got)));
                        }
                    }
                    // A flipped masked bit in any garbler's table is caught, naming it; the
                    // failure proves that garbler deviated only if the gate's input labels came
                    // from it alone (here: input wires, or not).
                    for i in (0..n).filter(|&i| i != e) {
                        let mut bad = tables.clone();
                        let bits_at = ands * 4 * n * 16;
                        for byte in bad[i][bits_at..].iter_mut() {
                            *byte ^= 0xff;
                        }
                        for single in [true, false] {
                            let mut state2 = EvalState::new(3 * ands, n);
                            state2.xhat.copy_from_slice(&state.xhat);
                            state2.single_source[..2 * ands].fill(single);
                            for w in 0..2 * ands {
                                for j in (0..n).filter(|&j| j != e) {
                                    state2.set_label(w, j, state.label(w, j));
                                }
                            }
                            let rows = EvalRows { r0: &r0[e], alpha: &alpha[e], beta: &beta[e], tables: &bad };
                            let err =
                                evaluate_chunk(&mut state2, &gates, &order, &tweaks, deltas[e], 100, &rows).unwrap_err();
                            assert_eq!(err, BadRow { garbler: i, proves_garbler: single });
                        }
                    }
                }
            }
        }
    }
}
