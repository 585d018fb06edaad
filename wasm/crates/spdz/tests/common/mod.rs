//! Helpers shared by the integration tests.
#![allow(dead_code)]

use webmpc_spdz::{Field, Share};

/// Σ of the shares' values, after checking Σ MACs = value·Σ Δ.
pub fn open_checked<F: Field>(shares: &[Share<F>], deltas: &[F]) -> F {
    let v = shares.iter().fold(F::ZERO, |a, s| a + s.value);
    let m = shares.iter().fold(F::ZERO, |a, s| a + s.mac);
    let d = deltas.iter().fold(F::ZERO, |a, x| a + *x);
    assert_eq!(m, v * d, "MAC does not match");
    v
}
