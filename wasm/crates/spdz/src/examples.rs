//! Example programs written with the [`Builder`]: what tests and benchmarks run.

use crate::field::FieldKind;
use crate::program::{const_u64, Builder, Kind, Program, Value};

/// A Vickrey (second-price, sealed-bid) auction of `bids` unsigned `k`-bit bids; bid i belongs to
/// party i mod n. Outputs, to every party: the winner's index, then the price (the highest bid
/// among the others, 0 for a single bid).
///
/// A tournament keeps (highest bid, its index, second-highest bid) per subtree: ⌈log2 bids⌉
/// rounds of two comparisons each. **Ties go to the lowest index**: a subtree of higher indices
/// wins only with a strictly higher bid, and with equal top bids the price equals the winning bid.
pub fn vickrey(n: usize, bids: usize, k: u8) -> Program {
    let mut b = Builder::new(FieldKind::Prime, n);
    let vs: Vec<Value> = (0..bids).map(|i| b.input(i % n, Kind::Unsigned(k))).collect();
    let zero = b.constant(const_u64(0));
    let mut level: Vec<(Value, Value, Value)> = vs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let idx = b.constant(const_u64(i as u64));
            (*v, idx, zero)
        })
        .collect();
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for pair in level.chunks(2) {
            if pair.len() == 1 {
                next.push(pair[0]);
                continue;
            }
            let ((lm, li, ls), (rm, ri, rs)) = (pair[0], pair[1]);
            let right = b.lt(lm, rm, k);
            let max = b.select(right, rm, lm);
            let idx = b.select(right, ri, li);
            let loser = b.select(right, lm, rm);
            let runner = b.select(right, rs, ls);
            let c = b.lt(loser, runner, k);
            let second = b.select(c, runner, loser);
            next.push((max, idx, second));
        }
        level = next;
    }
    let (_, idx, second) = level[0];
    b.output(idx, Kind::Unsigned(0), None);
    b.output(second, Kind::Unsigned(0), None);
    b.build()
}

/// The auction's answer in the clear: (winner, price).
pub fn vickrey_plain(bids: &[u64]) -> (u64, u64) {
    let max = bids.iter().copied().max().unwrap_or(0);
    let winner = bids.iter().position(|b| *b == max).unwrap_or(0);
    let second = bids.iter().enumerate().filter(|(i, _)| *i != winner).map(|(_, b)| *b).max().unwrap_or(0);
    (winner as u64, second)
}

/// Each party's inputs for [`vickrey`] with these bids.
pub fn vickrey_inputs(n: usize, bids: &[u64]) -> Vec<Vec<[u8; 16]>> {
    let mut inputs = vec![Vec::new(); n];
    for (i, bid) in bids.iter().enumerate() {
        inputs[i % n].push((*bid as u128).to_le_bytes());
    }
    inputs
}

/// `m` independent products x·y of party 0's x and party 1's y in one layer, and their sum as
/// the output: what the online-multiplication benchmark runs.
pub fn products(field: FieldKind, n: usize, m: usize) -> Program {
    let mut b = Builder::new(field, n);
    let x = b.input(0, Kind::Field);
    let y = b.input(1, Kind::Field);
    let mut acc = b.mul(x, y);
    for _ in 1..m {
        let p = b.mul(x, y);
        acc = b.add(acc, p);
    }
    b.output(acc, Kind::Field, None);
    b.build()
}
