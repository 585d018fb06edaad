//! Gate counts and depth.

use crate::{Circuit, Gate};

/// What a circuit costs: gate counts by type and its AND depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Stats {
    /// Number of wires.
    pub wires: u32,
    /// Number of gates.
    pub gates: u64,
    /// AND gates (each costs communication or a garbled table).
    pub and: u64,
    /// XOR gates (free with free-XOR).
    pub xor: u64,
    /// INV gates.
    pub inv: u64,
    /// Constant gates (Bristol `EQ`).
    pub constants: u64,
    /// Copy gates (Bristol `EQW`).
    pub copies: u64,
    /// AND depth: the most AND gates on any path from an input to any gate's output (dead gates
    /// included, since protocols evaluate them too). Rounds of a GMW-style protocol.
    pub depth: u64,
    /// Total input bits (input wires). Saturates at `u32::MAX` for a malformed hand-built circuit.
    pub inputs: u32,
    /// Total output bits (output wires). Saturates like `inputs`.
    pub outputs: u32,
}

pub(crate) fn stats(c: &Circuit) -> Stats {
    let mut s = Stats {
        wires: c.wires,
        gates: c.gates.len() as u64,
        inputs: c.input_bits().unwrap_or(u32::MAX),
        outputs: c.output_bits().unwrap_or(u32::MAX),
        ..Stats::default()
    };
    // AND depth per wire, in gate order; inputs (and never-written wires) are at depth 0. Wires
    // out of range in a hand-built circuit read as depth 0 and are not stored, and neither are
    // wires past MAX_WIRES (only an invalid hand-built circuit has them), so a wire count of
    // u32::MAX cannot make this allocate 16 GiB.
    let mut depth = vec![0u32; c.wires.min(crate::MAX_WIRES) as usize];
    let d = |depth: &[u32], w: u32| depth.get(w as usize).copied().unwrap_or(0);
    for gate in &c.gates {
        let (out, level) = match *gate {
            Gate::Xor { a, b, out } => {
                s.xor += 1;
                (out, d(&depth, a).max(d(&depth, b)))
            }
            Gate::And { a, b, out } => {
                s.and += 1;
                (out, d(&depth, a).max(d(&depth, b)).saturating_add(1))
            }
            Gate::Inv { a, out } => {
                s.inv += 1;
                (out, d(&depth, a))
            }
            Gate::Const { out, .. } => {
                s.constants += 1;
                (out, 0)
            }
            Gate::Copy { a, out } => {
                s.copies += 1;
                (out, d(&depth, a))
            }
        };
        if let Some(slot) = depth.get_mut(out as usize) {
            *slot = level;
        }
        s.depth = s.depth.max(u64::from(level));
    }
    s
}
