//! For tests and benchmarks of this and later crates: where the shared reference circuits are, a
//! small circuit builder, and the Vickrey auction circuits the protocol tests and benches run.

use crate::{Circuit, Gate};
use std::path::PathBuf;

/// The directory of the reference Bristol circuits (`../shared/circuits/bristol_fashion/`):
/// `$WEBMPC_CIRCUITS_DIR` if set, else the `shared` folder beside the checkout, else
/// `/work/shared`, where it lives on this machine kind (so a clean clone elsewhere finds it).
/// Panics with the places it tried when none holds the circuits: a test must fail, not skip.
pub fn reference_dir() -> PathBuf {
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/circuits/bristol_fashion");
    let candidates: Vec<PathBuf> = std::env::var_os("WEBMPC_CIRCUITS_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([beside, PathBuf::from("/work/shared/circuits/bristol_fashion")])
        .collect();
    candidates
        .iter()
        .find(|d| d.join("aes_128.txt").is_file())
        .cloned()
        .unwrap_or_else(|| panic!("reference circuits not found (tried {candidates:?}); set WEBMPC_CIRCUITS_DIR"))
}

/// A tiny single-assignment circuit builder for test and benchmark circuits.
pub struct Builder {
    inputs: Vec<u32>,
    wires: u32,
    gates: Vec<Gate>,
}

impl Builder {
    /// A builder whose input values have these widths (their wires come first).
    pub fn new(inputs: &[u32]) -> Builder {
        Builder { inputs: inputs.to_vec(), wires: inputs.iter().sum(), gates: Vec::new() }
    }

    /// The wires of input value i.
    pub fn input(&self, i: usize) -> Vec<u32> {
        let start: u32 = self.inputs[..i].iter().sum();
        (start..start + self.inputs[i]).collect()
    }

    fn fresh(&mut self) -> u32 {
        self.wires += 1;
        self.wires - 1
    }

    /// a ⊕ b.
    pub fn xor(&mut self, a: u32, b: u32) -> u32 {
        let out = self.fresh();
        self.gates.push(Gate::Xor { a, b, out });
        out
    }

    /// a ∧ b.
    pub fn and(&mut self, a: u32, b: u32) -> u32 {
        let out = self.fresh();
        self.gates.push(Gate::And { a, b, out });
        out
    }

    /// ¬a.
    pub fn not(&mut self, a: u32) -> u32 {
        let out = self.fresh();
        self.gates.push(Gate::Inv { a, out });
        out
    }

    /// A constant wire.
    pub fn constant(&mut self, value: bool) -> u32 {
        let out = self.fresh();
        self.gates.push(Gate::Const { value, out });
        out
    }

    /// x > y (unsigned): no carry out of y + ¬x + 1; one AND per bit.
    pub fn gt(&mut self, x: &[u32], y: &[u32]) -> u32 {
        let mut carry = self.constant(true);
        for (&xk, &yk) in x.iter().zip(y) {
            let nx = self.not(xk);
            // maj(y, ¬x, c) = c ⊕ ((y ⊕ c) ∧ (¬x ⊕ c))
            let a = self.xor(yk, carry);
            let b = self.xor(nx, carry);
            let t = self.and(a, b);
            carry = self.xor(carry, t);
        }
        self.not(carry)
    }

    /// s ? a : b, bitwise; one AND per bit.
    pub fn mux(&mut self, s: u32, a: &[u32], b: &[u32]) -> Vec<u32> {
        a.iter()
            .zip(b)
            .map(|(&ak, &bk)| {
                let d = self.xor(ak, bk);
                let t = self.and(s, d);
                self.xor(bk, t)
            })
            .collect()
    }

    /// The circuit, with `outputs` (values, in order) copied to the last wires.
    pub fn finish(mut self, outputs: &[Vec<u32>]) -> Circuit {
        for value in outputs {
            for &w in value {
                let out = self.fresh();
                self.gates.push(Gate::Copy { a: w, out });
            }
        }
        Circuit {
            wires: self.wires,
            inputs: self.inputs,
            outputs: outputs.iter().map(|v| v.len() as u32).collect(),
            gates: self.gates,
        }
    }
}

/// Bits needed to write 0..n−1.
pub fn index_bits(n: usize) -> usize {
    (usize::BITS - (n - 1).max(1).leading_zeros()) as usize
}

/// A sealed-bid second-price (Vickrey) auction of `bidders` bids of `width` bits: outputs the
/// winner's index (the first highest bidder) and the second-highest bid.
pub fn vickrey(bidders: usize, width: u32) -> Circuit {
    let b = Builder::new(&vec![width; bidders]);
    let bids = (0..bidders).map(|i| b.input(i)).collect();
    vickrey_of(b, bids)
}

/// [`vickrey`] over client inputs ([`CLIENT`](webmpc_authgc::online::CLIENT)): each of `slots`
/// input values is a presence bit (bit 0) and then a `width`-bit bid; a bid counts as 0 unless
/// its presence bit is 1 (an absent or refused client's other bits are arbitrary).
pub fn vickrey_clients(slots: usize, width: u32) -> Circuit {
    let mut b = Builder::new(&vec![width + 1; slots]);
    let bids = (0..slots)
        .map(|i| {
            let value = b.input(i);
            value[1..].iter().map(|&w| b.and(w, value[0])).collect()
        })
        .collect();
    vickrey_of(b, bids)
}

/// A present client's value for [`vickrey_clients`]: the presence bit 1, then the bid's `width`
/// bits, least significant first.
pub fn vickrey_client_value(bid: u64, width: u32) -> Vec<bool> {
    core::iter::once(true).chain((0..width).map(|i| bid >> i & 1 == 1)).collect()
}

fn vickrey_of(mut b: Builder, bids: Vec<Vec<u32>>) -> Circuit {
    let (bidders, width) = (bids.len(), bids[0].len());
    let ib = index_bits(bidders);
    let consts = |b: &mut Builder, v: usize| -> Vec<u32> { (0..ib).map(|k| b.constant((v >> k) & 1 == 1)).collect() };
    let mut best = bids[0].clone();
    let mut second: Vec<u32> = (0..width).map(|_| b.constant(false)).collect();
    let mut winner = consts(&mut b, 0);
    for (i, bid) in bids.iter().enumerate().skip(1) {
        let bid = bid.clone();
        let above_best = b.gt(&bid, &best);
        let above_second = b.gt(&bid, &second);
        // second ← above_best ? best : (above_second ? bid : second)
        let runner = b.mux(above_second, &bid, &second);
        second = b.mux(above_best, &best, &runner);
        best = b.mux(above_best, &bid, &best);
        let idx = consts(&mut b, i);
        winner = b.mux(above_best, &idx, &winner);
    }
    b.finish(&[winner, second])
}

/// The auction's outcome in plaintext.
pub fn vickrey_reference(bids: &[u64]) -> (usize, u64) {
    let mut winner = 0;
    for (i, &x) in bids.iter().enumerate() {
        if x > bids[winner] {
            winner = i;
        }
    }
    let second = bids.iter().enumerate().filter(|&(i, _)| i != winner).map(|(_, &x)| x).max().unwrap_or(0);
    (winner, second)
}
