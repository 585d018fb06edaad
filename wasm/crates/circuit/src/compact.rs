//! Wire compaction: give each value a wire only while it is live, so that a protocol holding one
//! label (or share) per wire needs memory for the live values, not for all of them.
//!
//! The circuit is first seen as values rather than wires: input bit `k` is value `k`, and gate
//! `i` defines value `input_bits + i` (which also handles circuits that already overwrite wires).
//! A value is live from its gate to its last reader; the final value of each output wire is live
//! to the end. Slots are then handed out in gate order from a free list:
//!
//! - input value `k` keeps wire `k` (inputs stay first) until its last reader;
//! - a value that is an output gets wire `T + j` (output bit `j`), where `T` is the number of
//!   other slots used, so outputs stay the last wires and are never overwritten;
//! - any other value takes a free slot, preferring one freed by the gate's own operands (a gate
//!   reads before it writes), else a new one.
//!
//! The gates stay the same gates in the same order; only their wire numbers change.

use crate::{Circuit, Gate, Wire};

/// Slot of a value: a general slot, or output bit `j` (resolved to `T + j` at the end).
#[derive(Clone, Copy)]
enum Slot {
    Temp(u32),
    Out(u32),
}

/// Marks "no value" in the wire → value map and "never read" in the last-use table.
const NONE: usize = usize::MAX;

/// The values a gate reads, looked up through the current wire → value map.
fn operands(gate: &Gate, cur: &[usize]) -> [usize; 2] {
    match *gate {
        Gate::Xor { a, b, .. } | Gate::And { a, b, .. } => [cur[a as usize], cur[b as usize]],
        Gate::Inv { a, .. } | Gate::Copy { a, .. } => [cur[a as usize], NONE],
        Gate::Const { .. } => [NONE, NONE],
    }
}

fn with_wires(gate: &Gate, mut slot: impl FnMut(usize) -> Wire, ops: [usize; 2], out: Wire) -> Gate {
    match *gate {
        Gate::Xor { .. } => Gate::Xor { a: slot(ops[0]), b: slot(ops[1]), out },
        Gate::And { .. } => Gate::And { a: slot(ops[0]), b: slot(ops[1]), out },
        Gate::Inv { .. } => Gate::Inv { a: slot(ops[0]), out },
        Gate::Copy { .. } => Gate::Copy { a: slot(ops[0]), out },
        Gate::Const { value, .. } => Gate::Const { value, out },
    }
}

/// See [`Circuit::compact`].
pub(crate) fn compact(c: &Circuit) -> Circuit {
    if c.validate().is_err() {
        return c.clone();
    }
    // validate() guarantees these sums fit and are at most `wires`.
    let input_bits = c.input_bits().unwrap_or(0);
    let output_bits = c.output_bits().unwrap_or(0);
    let n_in = input_bits as usize;
    let gates = c.gates.len();
    let values = n_in + gates;
    let fresh_map = || {
        let mut cur = vec![NONE; c.wires as usize];
        for (w, v) in cur.iter_mut().enumerate().take(n_in) {
            *v = w;
        }
        cur
    };

    // Pass 1: last reader of every value, and the final value of each output bit.
    let mut last_use = vec![NONE; values];
    let mut cur = fresh_map();
    for (i, gate) in c.gates.iter().enumerate() {
        for v in operands(gate, &cur) {
            if v != NONE {
                last_use[v] = i;
            }
        }
        cur[gate.output() as usize] = n_in + i;
    }
    let first_out = (c.wires - output_bits) as usize;
    let mut output_of = vec![NONE; values];
    for j in 0..output_bits as usize {
        let v = cur[first_out + j];
        if v < n_in {
            // An output that is an input wire: outputs then overlap inputs, so
            // wires < input bits + output bits already, and the compacted layout (inputs first,
            // outputs after all other slots) cannot have fewer wires.
            return c.clone();
        }
        output_of[v] = j;
    }

    // Pass 2: hand out slots in gate order.
    let mut slot_of: Vec<Slot> = vec![Slot::Temp(0); values];
    let mut free: Vec<u32> = Vec::new();
    for (v, slot) in slot_of.iter_mut().enumerate().take(n_in) {
        *slot = Slot::Temp(v as u32);
    }
    // Unread inputs are free from the start; pushed high to low so that low slots go first.
    free.extend((0..input_bits).rev().filter(|&k| last_use[k as usize] == NONE));
    let mut next_temp = input_bits;
    let mut out_gates: Vec<(Gate, [usize; 2], usize)> = Vec::with_capacity(gates);
    let mut cur = fresh_map();
    for (i, gate) in c.gates.iter().enumerate() {
        let ops = operands(gate, &cur);
        for (k, &v) in ops.iter().enumerate() {
            // `k == 1 && ops[0] == v`: the same value read twice is freed once.
            if v != NONE && last_use[v] == i && output_of[v] == NONE && !(k == 1 && ops[0] == v) {
                if let Slot::Temp(s) = slot_of[v] {
                    free.push(s);
                }
            }
        }
        let v = n_in + i;
        slot_of[v] = if output_of[v] != NONE {
            Slot::Out(output_of[v] as u32)
        } else {
            let s = free.pop().unwrap_or_else(|| {
                next_temp += 1;
                next_temp - 1
            });
            if last_use[v] == NONE {
                // Dead on arrival: the slot is free again right after this gate.
                free.push(s);
            }
            Slot::Temp(s)
        };
        out_gates.push((*gate, ops, v));
        cur[gate.output() as usize] = v;
    }

    let temps = next_temp;
    let Some(wires) = temps.checked_add(output_bits).filter(|&w| w < c.wires) else {
        // Nothing gained (every value is live at once): keep the original numbering.
        return c.clone();
    };
    let resolve = |s: Slot| match s {
        Slot::Temp(t) => t,
        Slot::Out(j) => temps + j,
    };
    let new_gates = out_gates
        .iter()
        .map(|(gate, ops, v)| with_wires(gate, |u| resolve(slot_of[u]), *ops, resolve(slot_of[*v])))
        .collect();
    Circuit { wires, inputs: c.inputs.clone(), outputs: c.outputs.clone(), gates: new_gates }
}
