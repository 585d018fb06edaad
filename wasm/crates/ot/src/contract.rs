//! The contract every OT implementation meets, as panicking checks (feature `ideal`, for tests):
//! KOS, the ideal functionality and other OT sources (e.g. teleported random OT) run the same
//! checks, so "passes the same tests as KOS" means exactly this code.

use crate::{CotReceiver, CotSender, OtReceiver, OtSender, RotReceiver, RotSender};
use futures::executor::block_on;
use futures::join;
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// The sizes the contract is checked at: empty, single, around a 128-bit block, several chunks,
/// a million.
pub const SIZES: [usize; 8] = [0, 1, 127, 128, 129, 1000, 70_000, 1_000_000];

/// `n` pseudorandom bits from `seed` (deterministic test inputs).
pub fn bools(n: usize, seed: u64) -> Vec<bool> {
    let mut prg = Prg::from_seed(Block::from_u128(seed as u128 | 1 << 100));
    let mut bytes = vec![0u8; n];
    prg.fill_bytes(&mut bytes);
    bytes.iter().map(|b| b & 1 == 1).collect()
}

/// `n` pseudorandom blocks from `seed` (deterministic test inputs).
pub fn blocks(n: usize, seed: u64) -> Vec<Block> {
    let mut prg = Prg::from_seed(Block::from_u128(seed as u128 | 1 << 101));
    let mut v = vec![Block::ZERO; n];
    prg.fill_blocks(&mut v);
    v
}

/// Δ-OT: the receiver gets `K_j ⊕ b_j·Δ` for its chosen bits.
pub fn check_cot<S: CotSender, R: CotReceiver>(s: &mut S, r: &mut R, n: usize) {
    let choices = bools(n, n as u64);
    let (k, m) = block_on(async { join!(s.send_cot(n), r.receive_cot(&choices)) });
    let (k, m) = (k.unwrap(), m.unwrap());
    assert_eq!((k.len(), m.len()), (n, n));
    let delta = s.delta();
    for j in 0..n {
        let want = if choices[j] { k[j] ^ delta } else { k[j] };
        assert_eq!(m[j], want, "Δ-OT {j} of {n}");
    }
}

/// Random OT: the receiver gets the message of its (random, balanced) choice and never the other.
pub fn check_random<S: RotSender, R: RotReceiver>(s: &mut S, r: &mut R, n: usize) {
    let (p, c) = block_on(async { join!(s.send_random(n), r.receive_random(n)) });
    let (pairs, (choices, got)) = (p.unwrap(), c.unwrap());
    assert_eq!((pairs.len(), choices.len(), got.len()), (n, n, n));
    for j in 0..n {
        assert_eq!(got[j], pairs[j][choices[j] as usize], "random OT {j} of {n}");
        assert_ne!(got[j], pairs[j][!choices[j] as usize], "random OT {j}: other message leaked");
    }
    if n >= 1000 {
        // Random choices are balanced (a loose bound: failing it means they are not random).
        let ones = choices.iter().filter(|b| **b).count();
        assert!(ones > n * 45 / 100 && ones < n * 55 / 100, "{ones} ones in {n}");
    }
}

/// Chosen-message OT: the receiver gets `messages[j][b_j]`.
pub fn check_chosen<S: OtSender, R: OtReceiver>(s: &mut S, r: &mut R, n: usize) {
    let choices = bools(n, 7 + n as u64);
    let flat = blocks(2 * n, n as u64);
    let msgs: Vec<[Block; 2]> = flat.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
    let (a, b) = block_on(async { join!(s.send_chosen(&msgs), r.receive_chosen(&choices)) });
    a.unwrap();
    let got = b.unwrap();
    assert_eq!(got.len(), n);
    for j in 0..n {
        assert_eq!(got[j], msgs[j][choices[j] as usize], "chosen OT {j} of {n}");
    }
}

/// Correlated OT: the receiver gets `m0_j ⊕ b_j·x_j`.
pub fn check_correlated<S: OtSender, R: OtReceiver>(s: &mut S, r: &mut R, n: usize) {
    let choices = bools(n, 11 + n as u64);
    let x = blocks(n, 5 + n as u64);
    let (a, b) = block_on(async { join!(s.send_correlated(&x), r.receive_correlated(&choices)) });
    let (m0, got) = (a.unwrap(), b.unwrap());
    assert_eq!((m0.len(), got.len()), (n, n));
    for j in 0..n {
        let want = if choices[j] { m0[j] ^ x[j] } else { m0[j] };
        assert_eq!(got[j], want, "correlated OT {j} of {n}");
    }
}
