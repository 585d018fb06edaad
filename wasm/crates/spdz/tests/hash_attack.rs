//! The attack of Guo–Katz–Wang–Yu (App. C) on MASCOT's untweaked OT hash, against our random OT.
//!
//! A corrupt OT receiver repeats its choice bits and its "message" in every OT, across batches:
//! in the F_Δ-ROT model it fixes M_j and b_j, so the honest sender's keys K_j = M_j ⊕ b_j·Δ are
//! all equal. With MASCOT's hash H(x) = π(x) ⊕ x the sender's q0, q1 are then equal in every OT
//! and its Gilboa corrections d = q0 − q1 + b differ between two triples exactly by b − b′,
//! making every triple known relative to the first. The test drives the honest sender's real
//! code (`RotSender` over such a Δ-OT, `gilboa::sender_corrections`) and checks that its messages
//! stay unrelated; it also checks that the same inputs *would* leak under the untweaked hash.

use futures::executor::block_on;
use std::collections::HashSet;
use webmpc_core::hash::cr_many;
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_ot::{CotSender, OtError, SessionId};
use webmpc_spdz::gilboa::{sender_corrections, K};
use webmpc_spdz::rot::{RotSender, Tweaks};
use webmpc_spdz::{Field, Fp, Gf128};

/// The Δ-OT a corrupt receiver can force: every key equal.
struct RepeatingReceiverCot {
    delta: Block,
    key: Block,
}

impl CotSender for RepeatingReceiverCot {
    fn delta(&self) -> Block {
        self.delta
    }
    async fn send_cot(&mut self, n: usize) -> Result<Vec<Block>, OtError> {
        Ok(vec![self.key; n])
    }
}

fn attack<F: Field>() {
    let mut prg = Prg::from_entropy().unwrap();
    let cot = RepeatingReceiverCot { delta: prg.next_block(), key: prg.next_block() };
    let sid = SessionId::random().unwrap();
    let mut sender = RotSender::new(cot, Tweaks::new(&sid, 0, 1));
    let (b1, b2) = (F::random(&mut prg), F::random(&mut prg));
    // Two batches (two calls), one product each.
    let (m0a, m1a) = block_on(sender.send(K)).unwrap();
    let (m0b, m1b) = block_on(sender.send(K)).unwrap();
    let (d1, _) = sender_corrections(&m0a, &m1a, &[b1]);
    let (d2, _) = sender_corrections(&m0b, &m1b, &[b2]);
    // The relation the attack needs never holds, and the differences look unrelated.
    let diffs: HashSet<[u8; 16]> = d1.iter().zip(&d2).map(|(x, y)| (*y - *x).to_bytes()).collect();
    assert!(!diffs.contains(&(b2 - b1).to_bytes()), "d − d′ revealed b − b′");
    assert_eq!(diffs.len(), K, "corrections of different OTs are related");
    // Every hashed message is distinct although every key was the same.
    let all: HashSet<[u8; 16]> = m0a.iter().chain(&m1a).chain(&m0b).chain(&m1b).map(|b| b.0).collect();
    assert_eq!(all.len(), 4 * K);

    // The counterfactual: MASCOT's untweaked hash on the same keys lets the attack through.
    let keys = vec![sender.cot().key; K];
    let keys1: Vec<Block> = keys.iter().map(|k| *k ^ sender.cot().delta).collect();
    let (mut h0, mut h1) = (vec![Block::ZERO; K], vec![Block::ZERO; K]);
    cr_many(&keys, &mut h0).unwrap();
    cr_many(&keys1, &mut h1).unwrap();
    let (e1, _) = sender_corrections(&h0, &h1, &[b1]);
    let (e2, _) = sender_corrections(&h0, &h1, &[b2]);
    assert!(e1.iter().zip(&e2).all(|(x, y)| *y - *x == b2 - b1), "the untweaked hash should leak b − b′");
}

#[test]
fn repeated_receiver_choices_do_not_relate_triples_prime() {
    attack::<Fp>();
}

#[test]
fn repeated_receiver_choices_do_not_relate_triples_binary() {
    attack::<Gf128>();
}

#[test]
fn tweaks_are_unique_per_pair_session_and_ot() {
    let sid = SessionId::random().unwrap();
    let other = SessionId::random().unwrap();
    let mut t = Tweaks::new(&sid, 0, 1);
    let first = t.take(10).unwrap();
    assert_eq!(t.peek(), first + 10);
    let bases: HashSet<u128> =
        [Tweaks::new(&sid, 0, 1), Tweaks::new(&sid, 1, 0), Tweaks::new(&sid, 0, 2), Tweaks::new(&other, 0, 1)]
            .iter()
            .map(|t| t.peek() >> 64)
            .collect();
    assert_eq!(bases.len(), 4);
}
