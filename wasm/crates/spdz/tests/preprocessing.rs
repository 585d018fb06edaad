//! Real MASCOT preprocessing (KOS OT, COPE, Π_Triple) between 2, 3 and 5 parties in memory:
//! every triple satisfies c = a·b, every bit is 0 or 1, and every MAC verifies under Σ Δ^(i).

use crate::common;

use common::open_checked;
use webmpc_spdz::local::Local;
use webmpc_spdz::{Field, Fp, Gf128};

fn triples_and_bits<F: Field>(n: usize, triples: usize, bits: usize) {
    let mut local = Local::<F>::setup(n).unwrap();
    local.set_batch(64).unwrap();
    local.preprocess_triples(triples).unwrap();
    let deltas: Vec<F> = local.parties().iter().map(|p| p.delta_share()).collect();
    let stores: Vec<_> =
        local.parties().iter().map(|p| p.store().triples.iter().copied().collect::<Vec<_>>()).collect();
    assert!(stores.iter().all(|s| s.len() == triples));
    let mut distinct = std::collections::HashSet::new();
    for t in 0..triples {
        let a = open_checked(&stores.iter().map(|s| s[t].a).collect::<Vec<_>>(), &deltas);
        let b = open_checked(&stores.iter().map(|s| s[t].b).collect::<Vec<_>>(), &deltas);
        let c = open_checked(&stores.iter().map(|s| s[t].c).collect::<Vec<_>>(), &deltas);
        assert_eq!(c, a * b, "triple {t}");
        distinct.insert(a.to_bytes());
    }
    assert_eq!(distinct.len(), triples, "triples repeat");
    local.preprocess_bits(bits).unwrap();
    let bit_shares: Vec<_> =
        local.parties().iter().map(|p| p.store().bits.iter().copied().collect::<Vec<_>>()).collect();
    let mut ones = 0;
    for k in 0..bit_shares[0].len() {
        let v = open_checked(&bit_shares.iter().map(|s| s[k]).collect::<Vec<_>>(), &deltas);
        assert!(v == F::ZERO || v == F::ONE, "bit {k} is not a bit");
        ones += (v == F::ONE) as usize;
    }
    assert!(bit_shares[0].len() >= bits - 1);
    // Fair bits fall outside 10%–90% with probability < 10^-6 for these counts.
    assert!(ones > bits / 10 && ones < 9 * bits / 10, "bits are biased: {ones} of {bits}");
}

#[test]
fn two_parties_prime_field() {
    triples_and_bits::<Fp>(2, 150, 100);
}

#[test]
fn two_parties_binary_field() {
    triples_and_bits::<Gf128>(2, 100, 100);
}

#[test]
fn three_parties_both_fields() {
    triples_and_bits::<Fp>(3, 70, 60);
    triples_and_bits::<Gf128>(3, 70, 60);
}

#[test]
fn five_parties_prime_field() {
    triples_and_bits::<Fp>(5, 40, 40);
}
