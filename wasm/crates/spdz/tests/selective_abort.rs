//! Aborts may be selective: what honest parties see when a corrupt party cheats towards only one
//! of them at the very end.
//!
//! MASCOT's openings and check messages are point-to-point; the parties compare transcripts of
//! everything broadcast inside each MAC check, but there is no echo round after the last one (and
//! no dishonest-majority protocol can make the last decision unanimous without a broadcast
//! channel). So a corrupt party that breaks its last message towards one honest party makes that
//! party abort while another honest party, which got a consistent message, outputs — the correct
//! output, since nothing the cheater sends can change it. This test pins that behaviour down so
//! the docs (`online.rs`, the SDK's `mascot` protocol) stay true.

use core::cell::Cell;
use futures::future::join_all;
use std::rc::Rc;
use webmpc_core::channel::memory::{network, run_local, Tamper};
use webmpc_core::channel::PartyId;
use webmpc_ot::SessionId;
use webmpc_spdz::program::{Builder, Kind, Program};
use webmpc_spdz::{FieldKind, Fp, Party, SpdzError};

const N: usize = 3;
const CHEATER: PartyId = 2;
const VICTIM: PartyId = 0;

/// The sum of one 32-bit input per party, to everyone.
fn sum_program() -> Program {
    let mut b = Builder::new(FieldKind::Prime, N);
    let xs: Vec<_> = (0..N).map(|j| b.input(j, Kind::Unsigned(32))).collect();
    let mut s = xs[0];
    for x in &xs[1..] {
        s = b.add(s, *x);
    }
    b.output(s, Kind::Unsigned(0), None);
    b.build()
}

/// A session on real preprocessing in which the cheater's messages to the victim pass through
/// `edit(index, msg)`; returns every party's result and how many messages the cheater sent the
/// victim.
fn run(edit: impl Fn(usize, &mut Vec<u8>) + 'static) -> (Vec<Result<u128, SpdzError>>, usize) {
    let sent = Rc::new(Cell::new(0usize));
    let edit: Rc<dyn Fn(usize, &mut Vec<u8>)> = Rc::new(edit);
    let channels: Vec<_> = network(N)
        .into_iter()
        .enumerate()
        .map(|(i, ch)| {
            let (sent, edit) = (sent.clone(), edit.clone());
            Tamper::new(ch, move |to: PartyId, index: usize, m: &mut Vec<u8>| {
                if i == CHEATER && to == VICTIM {
                    sent.set(index + 1);
                    edit(index, m);
                }
            })
        })
        .collect();
    let program = sum_program();
    let sid = SessionId::random().unwrap();
    let (program, sid) = (&program, &sid);
    let futs = channels.into_iter().enumerate().map(|(i, ch)| async move {
        let mut p = Party::<Fp, _>::setup(ch, sid).await?;
        let x = (1000 + i as u128).to_le_bytes();
        let out = p.run(program, &[x], |_, _| {}).await?;
        Ok(u128::from_le_bytes(out[0].expect("a public output")))
    });
    let results = run_local(join_all(futs)).expect("no deadlock");
    (results, sent.get())
}

#[test]
fn a_cheat_towards_one_party_in_the_last_check_aborts_only_that_party() {
    let want = 1000 + 1001 + 1002;
    // An honest run: everyone outputs, and the cheater's last message to the victim is known.
    let (honest, messages) = run(|_, _| {});
    for r in &honest {
        assert_eq!(r.as_ref().unwrap(), &want);
    }
    // The same session with the last message to the victim (its opening of the final MAC check's
    // commitment) broken.
    let (results, again) = run(move |index, m| {
        if index + 1 == messages {
            m[0] ^= 1;
        }
    });
    assert_eq!(again, messages, "the protocol's message count is fixed by the program");
    // The victim aborts, blaming the cheater (a commitment only the cheater could open).
    assert_eq!(
        results[VICTIM].as_ref().unwrap_err(),
        &SpdzError::CheatingDetected { peer: CHEATER, check: "commitment opening" }
    );
    // The other honest party saw nothing wrong and outputs, correctly: the abort is selective.
    assert_eq!(results[1].as_ref().unwrap(), &want);
    assert_eq!(results[CHEATER].as_ref().unwrap(), &want);
}
