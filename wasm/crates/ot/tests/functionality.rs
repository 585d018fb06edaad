//! The OT interfaces' contract, checked the same way against the ideal functionality and the real
//! KOS implementation: correctness of every output kind at many sizes (0, 1, 127, 128, 129,
//! multi-chunk, 10^6), and that the unchosen message stays unrelated to what the receiver got.

mod common;

use common::{blocks, bools, kos};
use futures::executor::block_on;
use futures::join;
use webmpc_core::Block;
use webmpc_ot::{ideal, CotReceiver, CotSender, OtReceiver, OtSender, RotReceiver, RotSender};

const SIZES: [usize; 8] = [0, 1, 127, 128, 129, 1000, 70_000, 1_000_000];

fn check_cot<S: CotSender, R: CotReceiver>(s: &mut S, r: &mut R, n: usize) {
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

fn check_random<S: RotSender, R: RotReceiver>(s: &mut S, r: &mut R, n: usize) {
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

fn check_chosen<S: OtSender, R: OtReceiver>(s: &mut S, r: &mut R, n: usize) {
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

fn check_correlated<S: OtSender, R: OtReceiver>(s: &mut S, r: &mut R, n: usize) {
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

fn delta() -> Block {
    // Lowest bit set, as garbling wants (point-and-permute); otherwise random.
    Block::from_u128(webmpc_core::random::random_block().unwrap().to_u128() | 1)
}

#[test]
fn ideal_functionality_meets_the_contract() {
    let (mut s, mut r) = ideal::pair(delta()).unwrap();
    for n in SIZES {
        check_cot(&mut s, &mut r, n);
        check_random(&mut s, &mut r, n);
        check_chosen(&mut s, &mut r, n);
        check_correlated(&mut s, &mut r, n);
    }
}

#[test]
fn kos_meets_the_contract_at_every_size() {
    // One instance across all calls: the PRG streams and tweak counters carry over.
    let (mut s, mut r) = kos(delta());
    for n in SIZES {
        check_cot(&mut s, &mut r, n);
        check_random(&mut s, &mut r, n);
        check_chosen(&mut s, &mut r, n);
        check_correlated(&mut s, &mut r, n);
    }
}

#[test]
fn kos_with_small_chunks_splits_calls_correctly() {
    let (mut s, mut r) = kos(delta());
    s.set_chunk_size(256).unwrap();
    r.set_chunk_size(256).unwrap();
    for n in [255, 256, 257, 1000] {
        check_cot(&mut s, &mut r, n);
        check_random(&mut s, &mut r, n);
        check_chosen(&mut s, &mut r, n);
        check_correlated(&mut s, &mut r, n);
    }
}

#[test]
fn delta_is_the_one_the_sender_chose() {
    let d = Block::from_u128(0xdead_beef_0000_0000_0000_0000_0000_0001);
    let (mut s, mut r) = kos(d);
    assert_eq!(s.delta(), d);
    check_cot(&mut s, &mut r, 300);
}

#[test]
fn invalid_chunk_sizes_are_refused() {
    let (mut s, _r) = kos(delta());
    for n in [0, 100, (1 << 20) + 128] {
        assert_eq!(s.set_chunk_size(n).unwrap_err().code(), "INVALID_ARGUMENT");
    }
}
