//! Trusted-dealer ("ideal functionality") versions of every OT interface, for testing protocols
//! built on OT without running OT. A dealer queue joins the two ends in one process: the sender's
//! call samples the correlation and hands the receiver its part, exactly what the functionality
//! does. There is no security here by design; never use outside tests.
//!
//! The real [`KosSender`](crate::KosSender)/[`KosReceiver`](crate::KosReceiver) pass the same
//! generic tests as this module (see `tests/functionality.rs`), and the dealer keeps the real
//! protocol's rules on Δ so that code tested here behaves the same there: Δ = 0 is refused, and a
//! caller-chosen Δ ([`pair`]) serves Δ-OT only unless the pair was made with the explicit opt-in
//! [`pair_hashed_with_delta`]; [`pair_random`] serves everything.

use crate::{
    check_delta, hashed_outputs_refused, CotReceiver, CotSender, OtError, OtReceiver, OtSender, RotReceiver, RotSender,
};
use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::StreamExt;
use webmpc_core::prg::Prg;
use webmpc_core::{random, Block};

/// What the dealer hands the receiver for one call.
enum Deal {
    /// Δ-OT keys.
    Keys(Vec<Block>),
    /// Message pairs (random, chosen, or `(m0, correlation)`).
    Pairs(Vec<[Block; 2]>),
    /// Correlated OT: `m0` and the correlations.
    Correlated(Vec<Block>, Vec<Block>),
}

/// The sender end of an ideal OT.
pub struct IdealSender {
    delta: Block,
    /// Whether hashed-output kinds are served (as `KosSender::hashed_outputs_allowed`).
    hashed_ok: bool,
    prg: Prg,
    to_receiver: UnboundedSender<Deal>,
}

/// The receiver end of an ideal OT.
pub struct IdealReceiver {
    delta: Block,
    from_sender: UnboundedReceiver<Deal>,
}

/// A connected pair with the caller's global correlation `delta` (nonzero), for Δ-OT only, like
/// `KosSender::setup`: random, correlated and chosen-message OT are refused.
pub fn pair(delta: Block) -> Result<(IdealSender, IdealReceiver), OtError> {
    make_pair(delta, false)
}

/// A connected pair with a random Δ serving every OT kind, like `KosSender::setup_random`.
pub fn pair_random() -> Result<(IdealSender, IdealReceiver), OtError> {
    make_pair(random::random_block()?, true)
}

/// The explicit opt-in, like `KosSender::setup_hashed_with_delta`: the caller's `delta` for every
/// OT kind.
pub fn pair_hashed_with_delta(delta: Block) -> Result<(IdealSender, IdealReceiver), OtError> {
    make_pair(delta, true)
}

fn make_pair(delta: Block, hashed_ok: bool) -> Result<(IdealSender, IdealReceiver), OtError> {
    check_delta(delta)?;
    let (tx, rx) = unbounded();
    Ok((
        IdealSender { delta, hashed_ok, prg: Prg::from_entropy()?, to_receiver: tx },
        IdealReceiver { delta, from_sender: rx },
    ))
}

fn out_of_step() -> OtError {
    OtError::InvalidArgument("ideal OT: the two ends made different calls".into())
}

impl IdealSender {
    /// Refuses a hashed kind without the opt-in before dealing anything, as the real sender
    /// refuses before sending anything (so a receiver that made the call waits, as it would for
    /// the real one).
    fn check_hashed(&self) -> Result<(), OtError> {
        if self.hashed_ok {
            Ok(())
        } else {
            Err(hashed_outputs_refused())
        }
    }

    fn deal(&self, d: Deal) -> Result<(), OtError> {
        self.to_receiver.unbounded_send(d).map_err(|_| out_of_step())
    }

    fn random_blocks(&mut self, n: usize) -> Vec<Block> {
        let mut v = vec![Block::ZERO; n];
        self.prg.fill_blocks(&mut v);
        v
    }
}

impl IdealReceiver {
    async fn next(&mut self) -> Result<Deal, OtError> {
        self.from_sender.next().await.ok_or_else(out_of_step)
    }

    fn check_len(n: usize, m: usize) -> Result<(), OtError> {
        if n != m {
            return Err(out_of_step());
        }
        Ok(())
    }
}

impl CotSender for IdealSender {
    fn delta(&self) -> Block {
        self.delta
    }

    async fn send_cot(&mut self, n: usize) -> Result<Vec<Block>, OtError> {
        let keys = self.random_blocks(n);
        self.deal(Deal::Keys(keys.clone()))?;
        Ok(keys)
    }
}

impl CotReceiver for IdealReceiver {
    async fn receive_cot(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let Deal::Keys(keys) = self.next().await? else { return Err(out_of_step()) };
        Self::check_len(keys.len(), choices.len())?;
        Ok(keys.iter().zip(choices).map(|(k, b)| *k ^ (self.delta & Block::mask_from_bit(*b as u8))).collect())
    }
}

impl RotSender for IdealSender {
    async fn send_random(&mut self, n: usize) -> Result<Vec<[Block; 2]>, OtError> {
        self.check_hashed()?;
        let v = self.random_blocks(2 * n);
        let pairs: Vec<[Block; 2]> = v.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
        self.deal(Deal::Pairs(pairs.clone()))?;
        Ok(pairs)
    }
}

impl RotReceiver for IdealReceiver {
    async fn receive_random(&mut self, n: usize) -> Result<(Vec<bool>, Vec<Block>), OtError> {
        let Deal::Pairs(pairs) = self.next().await? else { return Err(out_of_step()) };
        Self::check_len(pairs.len(), n)?;
        let mut bits = vec![0u8; n];
        random::fill(&mut bits)?;
        let choices: Vec<bool> = bits.iter().map(|b| b & 1 == 1).collect();
        let out = pairs.iter().zip(&choices).map(|(p, b)| p[*b as usize]).collect();
        Ok((choices, out))
    }
}

impl OtSender for IdealSender {
    async fn send_chosen(&mut self, messages: &[[Block; 2]]) -> Result<(), OtError> {
        self.check_hashed()?;
        self.deal(Deal::Pairs(messages.to_vec()))
    }

    async fn send_correlated(&mut self, correlations: &[Block]) -> Result<Vec<Block>, OtError> {
        self.check_hashed()?;
        let m0 = self.random_blocks(correlations.len());
        self.deal(Deal::Correlated(m0.clone(), correlations.to_vec()))?;
        Ok(m0)
    }
}

impl OtReceiver for IdealReceiver {
    async fn receive_chosen(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let Deal::Pairs(pairs) = self.next().await? else { return Err(out_of_step()) };
        Self::check_len(pairs.len(), choices.len())?;
        Ok(pairs.iter().zip(choices).map(|(p, b)| p[*b as usize]).collect())
    }

    async fn receive_correlated(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let Deal::Correlated(m0, x) = self.next().await? else { return Err(out_of_step()) };
        Self::check_len(m0.len(), choices.len())?;
        Ok(m0.iter().zip(&x).zip(choices).map(|((m, x), b)| *m ^ (*x & Block::mask_from_bit(*b as u8))).collect())
    }
}
