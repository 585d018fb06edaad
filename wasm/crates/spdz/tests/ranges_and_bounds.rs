//! Security review (review-mascot): tests that demonstrate findings. Each states the property
//! that should hold; they fail on the code as reviewed.

use futures::future::join_all;
use webmpc_core::channel::memory::{network, pair, run_local, MemoryChannel};
use webmpc_core::channel::{Channel, PartyId};
use webmpc_ot::SessionId;
use webmpc_spdz::dealer::Dealer;
use webmpc_spdz::mux::{Mux, Sub};
use webmpc_spdz::program::{const_u64, Builder, Kind, Program};
use webmpc_spdz::testing::Cheat;
use webmpc_spdz::{Field, FieldKind, Fp, Party};

/// Runs `p` with dealer preprocessing in which party `who` believes its first own input mask is
/// r − `delta` instead of r: it then broadcasts ε = y − r + δ to everyone (and absorbs that
/// same ε itself), i.e. it inputs y + δ whatever range the program declares. This is what a
/// malicious party running modified code does; the broadcast is consistent, so no check fires.
fn run_with_shifted_input(
    p: &Program,
    inputs: &[Vec<[u8; 16]>],
    who: PartyId,
    delta: Fp,
) -> Vec<Result<Vec<Option<[u8; 16]>>, webmpc_spdz::SpdzError>> {
    let n = p.parties;
    let mut dealer = Dealer::<Fp>::new(n);
    let mut stores = dealer.stores(&p.requirements());
    let mask = &mut stores[who].masks[who][0];
    mask.1 = Some(mask.1.unwrap() - delta);
    let sid = SessionId::random().unwrap();
    let deltas = dealer.deltas().to_vec();
    let parties: Vec<Party<Fp, MemoryChannel>> = network(n)
        .into_iter()
        .zip(stores)
        .enumerate()
        .map(|(i, (ch, st))| Party::from_dealer(ch, &sid, deltas[i], st, Cheat::None))
        .collect();
    let futs = parties.into_iter().zip(inputs).map(|(mut party, inp)| async move { party.run(p, inp, |_, _| {}).await });
    run_local(join_all(futs)).unwrap()
}

/// A 1-out-of-2 OT written as a program: P0 holds a, P1 holds b (32-bit), P2 chooses with a
/// 32-bit y and learns a if y < 1 (y = 0), else b — exactly one of them.
///
/// A malicious P2 adds a constant to its input broadcast ε (consistently to both peers and in its
/// own transcript, so the broadcast check has nothing to catch): its effective y is 1 + t·2^32, outside the declared
/// 32-bit range. LTZ then returns −t, not a bit, and SELECT(c, a, b) = b + c·(a − b) reveals
/// b − t·(a − b), from which P2 recovers both a and b. The module docs of `online.rs` claim
/// "honest inputs stay hidden" for out-of-range inputs; this shows they do not.
#[test]
fn out_of_range_comparison_operand_cannot_make_select_reveal_both_branches() {
    let mut b = Builder::new(FieldKind::Prime, 3);
    let a = b.input(0, Kind::Unsigned(32));
    let bb = b.input(1, Kind::Unsigned(32));
    let y = b.input(2, Kind::Unsigned(32));
    let one = b.constant(const_u64(1));
    let c = b.lt(y, one, 32);
    let out = b.select(c, a, bb);
    b.output(out, Kind::Field, Some(vec![2]));
    let p = b.build();

    let (secret_a, secret_b) = (0xdead_beefu128, 0x1234_5678u128);
    let inputs = vec![vec![secret_a.to_le_bytes()], vec![secret_b.to_le_bytes()], vec![0u128.to_le_bytes()]];
    let t: u128 = 1 << 40;
    let r = run_with_shifted_input(&p, &inputs, 2, Fp::from_u128(1 + (t << 32)));
    let got = Fp::from_bytes(r[2].as_ref().expect("the run completes: nothing detects the deviation")[0].unwrap())
        .unwrap();

    // What P2 can compute from its output alone.
    let v = got.to_i128(); // = b − t·(a − b)
    let ti = t as i128;
    let rec_b = v.rem_euclid(ti);
    let rec_a = rec_b - (v - rec_b) / ti;
    assert!(
        !(rec_a == secret_a as i128 && rec_b == secret_b as i128),
        "P2 learned both messages of the OT (a = {rec_a:#x}, b = {rec_b:#x})"
    );
    assert!(
        got == Fp::from_u128(secret_a) || got == Fp::from_u128(secret_b),
        "SELECT returned neither branch: its condition was not a bit"
    );
}

/// The same root cause without a comparison: P2's choice is declared a 1-bit unsigned input, but
/// nothing enforces the declared range against a malicious inputter (`encode_input` only checks
/// the honest party's own inputs). P2 inputs 2^40 and SELECT reveals b + 2^40·(a − b).
#[test]
fn declared_one_bit_input_cannot_make_select_reveal_both_branches() {
    let mut b = Builder::new(FieldKind::Prime, 3);
    let a = b.input(0, Kind::Unsigned(32));
    let bb = b.input(1, Kind::Unsigned(32));
    let choice = b.input(2, Kind::Unsigned(1));
    let out = b.select(choice, a, bb);
    b.output(out, Kind::Field, Some(vec![2]));
    let p = b.build();
    let (secret_a, secret_b) = (0xdead_beefu128, 0x1234_5678u128);
    let inputs = vec![vec![secret_a.to_le_bytes()], vec![secret_b.to_le_bytes()], vec![0u128.to_le_bytes()]];
    let t: u128 = 1 << 40;
    let r = run_with_shifted_input(&p, &inputs, 2, Fp::from_u128(t));
    let got = Fp::from_bytes(r[2].as_ref().expect("nothing detects the deviation")[0].unwrap()).unwrap();
    let v = got.to_u128(); // = b + t·(a − b), no wrap for these values
    let (rec_b, rec_a) = (v % t, v % t + v / t);
    assert!(
        !(rec_a == secret_a && rec_b == secret_b),
        "P2 learned both messages (a = {rec_a:#x}, b = {rec_b:#x}) through a 1-bit input of 2^40"
    );
}

/// The multiplexer buffers whatever a peer sends on a stream nobody is reading, without limit:
/// a peer can flood stream 3 (Gilboa) while this party waits on stream 0 (control). The mux
/// should refuse once the peer is far ahead of any legitimate schedule (at most a few messages
/// per stream are ever outstanding), instead of growing memory until the tab dies.
#[test]
fn mux_does_not_buffer_unboundedly_for_an_idle_stream() {
    let (a, b) = pair();
    let mb = Mux::new(b);
    let control = Sub::new(&mb, 0);
    let flood = 1024usize; // 1024 × 64 KiB = 64 MiB buffered; a real peer can go on forever
    let r = run_local(async {
        futures::join!(
            async {
                let junk = vec![0u8; 64 << 10];
                for _ in 0..flood {
                    let mut m = junk.clone();
                    m.push(3);
                    if a.send(1, m).await.is_err() {
                        return;
                    }
                }
                let _ = a.send(1, vec![1, 0]).await;
            },
            control.recv(0)
        )
    })
    .unwrap();
    assert!(r.1.is_err(), "the mux accepted {flood} unread messages (64 MiB) from one peer");
}

/// `preprocess_masks` authenticates all the masks it is asked for in one COPE round, unlike
/// triples and bits (bounded batches): 2 KiB of COPE vector u per mask and peer, in a single
/// message. A program whose inputs (plus private outputs) give one party ≥ 32 768 masks — well
/// within the format's 2^22 values — makes that message exceed the 64 MiB every JS transport
/// refuses (`bindings::channel::MAX_MESSAGE_BYTES`), so the run aborts with MALFORMED_MESSAGE
/// in the browser, and memory grows with the program instead of the batch.
#[test]
fn mask_preprocessing_keeps_every_message_under_the_transport_limit() {
    use std::cell::Cell;
    use std::rc::Rc;
    use webmpc_core::channel::memory::Tamper;
    const MAX_MESSAGE_BYTES: usize = 64 << 20;
    let largest = Rc::new(Cell::new(0usize));
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let futs = network(2).into_iter().map(|ch| {
        let largest = largest.clone();
        let ch = Tamper::new(ch, move |_: PartyId, _: usize, m: &mut Vec<u8>| largest.set(largest.get().max(m.len())));
        async move {
            let mut p = Party::<Fp, _>::setup(ch, sid).await?;
            p.preprocess_masks(&[32_768, 0]).await
        }
    });
    for r in run_local(join_all(futs)).unwrap() {
        r.unwrap();
    }
    assert!(
        largest.get() <= MAX_MESSAGE_BYTES,
        "a {}-byte message: the JS transport refuses anything above {MAX_MESSAGE_BYTES}",
        largest.get()
    );
}
