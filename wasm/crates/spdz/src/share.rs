//! Authenticated additive shares: one party's part of [[x]] = (x^(i), m^(i)) with
//! Σ x^(i) = x and Σ m^(i) = x·Δ, Δ = Σ Δ^(i) the global MAC key nobody knows.
//!
//! Linear combinations are local (Protocol 3, LinComb): shares and MAC shares combine the same
//! way, and a public constant c is added to party 0's share only while every party adds
//! c·Δ^(i) to its MAC share.

use crate::field::Field;
use core::ops::{Add, Neg, Sub};

/// One party's share of an authenticated value.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Share<F> {
    /// x^(i).
    pub value: F,
    /// m^(i).
    pub mac: F,
}

impl<F: Field> Share<F> {
    /// The share of 0.
    pub const ZERO: Share<F> = Share { value: F::ZERO, mac: F::ZERO };

    /// c·[[x]].
    #[inline]
    pub fn scale(self, c: F) -> Share<F> {
        Share { value: self.value * c, mac: self.mac * c }
    }

    /// [[x]] + c for a public c: party 0 adds c to its share, every party c·Δ^(i) to its MAC.
    #[inline]
    pub fn add_const(self, c: F, party: usize, delta: F) -> Share<F> {
        let value = if party == 0 { self.value + c } else { self.value };
        Share { value, mac: self.mac + c * delta }
    }

    /// The share of a public constant c.
    #[inline]
    pub fn constant(c: F, party: usize, delta: F) -> Share<F> {
        Share::ZERO.add_const(c, party, delta)
    }
}

impl<F: Field> Add for Share<F> {
    type Output = Share<F>;
    #[inline]
    fn add(self, o: Share<F>) -> Share<F> {
        Share { value: self.value + o.value, mac: self.mac + o.mac }
    }
}

impl<F: Field> Sub for Share<F> {
    type Output = Share<F>;
    #[inline]
    fn sub(self, o: Share<F>) -> Share<F> {
        Share { value: self.value - o.value, mac: self.mac - o.mac }
    }
}

impl<F: Field> Neg for Share<F> {
    type Output = Share<F>;
    #[inline]
    fn neg(self) -> Share<F> {
        Share { value: -self.value, mac: -self.mac }
    }
}

/// A Beaver triple share: [[a]], [[b]], [[c]] with c = a·b.
#[derive(Clone, Copy, Default, Debug)]
pub struct Triple<F> {
    /// [[a]].
    pub a: Share<F>,
    /// [[b]].
    pub b: Share<F>,
    /// [[c]] = [[a·b]].
    pub c: Share<F>,
}

/// σ^(i) = m^(i) − y·Δ^(i): this party's term of the MAC check of a claimed value y
/// (Protocol 2). Σ_i σ^(i) = 0 iff Σ m^(i) = y·Δ.
#[inline]
pub fn mac_check_term<F: Field>(y: F, mac_share: F, delta: F) -> F {
    mac_share - y * delta
}
