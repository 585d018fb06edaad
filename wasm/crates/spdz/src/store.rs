//! Preprocessed material of one party, consumed by the online phase. Every item is used once
//! (pitfall P7): taking removes it.

use crate::field::Field;
use crate::share::{Share, Triple};
use std::collections::VecDeque;

/// Triples, random bits and input masks, in the order they were generated (the same order on
/// every party, which is how the parties agree on which item they use).
pub struct Store<F> {
    /// Beaver triples.
    pub triples: VecDeque<Triple<F>>,
    /// Shared random bits.
    pub bits: VecDeque<Share<F>>,
    /// Per owner: input masks [[r]], with r itself when this party is the owner.
    pub masks: Vec<VecDeque<(Share<F>, Option<F>)>>,
}

/// How much of each kind a computation needs (or a store holds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Triples.
    pub triples: usize,
    /// Random bits.
    pub bits: usize,
    /// Input masks per owner.
    pub masks: Vec<usize>,
}

impl<F: Field> Store<F> {
    /// An empty store for `n` parties.
    pub fn new(n: usize) -> Store<F> {
        Store { triples: VecDeque::new(), bits: VecDeque::new(), masks: (0..n).map(|_| VecDeque::new()).collect() }
    }

    /// What the store holds.
    pub fn counts(&self) -> Counts {
        Counts {
            triples: self.triples.len(),
            bits: self.bits.len(),
            masks: self.masks.iter().map(|m| m.len()).collect(),
        }
    }
}
