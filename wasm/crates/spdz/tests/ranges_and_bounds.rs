//! Declared ranges and resource bounds hold against a malicious peer (found by a security review
//! of the crate; each test failed before its fix):
//!
//! * an integer input outside its declared range (a malicious owner can broadcast any ε) is
//!   caught by the input range check before any comparison or output depends on it, so it can
//!   neither make SELECT reveal both branches of a 1-out-of-2 choice nor stuff a 1-bit input;
//! * a comparison whose operand is out of its declared width anyway (a field input, which has no
//!   range) still returns 0 or 1, so SELECT on it returns exactly one branch;
//! * the stream multiplexer refuses a peer that floods a stream nobody reads;
//! * mask preprocessing keeps every message under the 64 MiB the JS transports accept.

use futures::future::join_all;
use webmpc_core::channel::memory::{network, pair, run_local, MemoryChannel};
use webmpc_core::channel::{Channel, PartyId};
use webmpc_ot::SessionId;
use webmpc_spdz::dealer::Dealer;
use webmpc_spdz::mux::{Mux, Sub};
use webmpc_spdz::program::{const_u64, Builder, Kind, Program};
use webmpc_spdz::testing::Cheat;
use webmpc_spdz::{Field, FieldKind, Fp, Party, SpdzError};

/// Runs `p` with dealer preprocessing in which party `who` believes its first own input mask (for
/// an integer input: the mask of its lowest bit) is r − `delta` instead of r: it then broadcasts
/// ε = y − r + δ to everyone (and absorbs that same ε itself), i.e. it inputs y + δ whatever
/// range the program declares. This is what a malicious party running modified code does; the
/// broadcast is consistent, so only the range check can notice.
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
    let futs =
        parties.into_iter().zip(inputs).map(|(mut party, inp)| async move { party.run(p, inp, |_, _| {}).await });
    run_local(join_all(futs)).unwrap()
}

/// The 1-out-of-2 OT of the tests below: P0 holds a, P1 holds b (32-bit), P2 chooses with `y`
/// of kind `y_kind` and learns a if y < 1 (y = 0), else b — exactly one of them.
fn ot_program(y_kind: Kind) -> Program {
    let mut b = Builder::new(FieldKind::Prime, 3);
    let a = b.input(0, Kind::Unsigned(32));
    let bb = b.input(1, Kind::Unsigned(32));
    let y = b.input(2, y_kind);
    let one = b.constant(const_u64(1));
    let c = b.lt(y, one, 32);
    let out = b.select(c, a, bb);
    b.output(out, Kind::Field, Some(vec![2]));
    b.build()
}

const SECRET_A: u128 = 0xdead_beef;
const SECRET_B: u128 = 0x1234_5678;

fn ot_inputs(y: [u8; 16]) -> Vec<Vec<[u8; 16]>> {
    vec![vec![SECRET_A.to_le_bytes()], vec![SECRET_B.to_le_bytes()], vec![y]]
}

/// Every party's run ended with the input range check's MAC failure: nobody, in particular not the
/// cheating P2, got an output.
fn all_caught_by_the_range_check(r: &[Result<Vec<Option<[u8; 16]>>, SpdzError>]) {
    for (i, res) in r.iter().enumerate() {
        let e = res.as_ref().expect_err("an out-of-range input must not produce outputs");
        assert_eq!(*e, SpdzError::MacCheckFailed { phase: "input range check" }, "party {i}");
        assert_eq!(e.code(), "MAC_CHECK_FAILED");
    }
}

/// A malicious P2 adds a constant to its input broadcast ε (consistently to both peers and in its
/// own transcript, so the broadcast check has nothing to catch): its effective y would be
/// 1 + t·2^32, outside the declared 32-bit range, and on the code as reviewed LTZ returned −t,
/// SELECT(c, a, b) = b + c·(a − b) revealed b − t·(a − b) and P2 recovered both a and b. Now y is
/// input bit by bit and each bit checked, before the comparison opens anything: the run aborts.
#[test]
fn out_of_range_comparison_operand_cannot_make_select_reveal_both_branches() {
    let p = ot_program(Kind::Unsigned(32));
    let t: u128 = 1 << 40;
    let r = run_with_shifted_input(&p, &ot_inputs(0u128.to_le_bytes()), 2, Fp::from_u128(1 + (t << 32)));
    all_caught_by_the_range_check(&r);
}

/// What P2 can compute from its output `got` when SELECT's condition was −t, not a bit.
fn assert_one_branch_only(got: Fp, t: u128) {
    let v = got.to_i128(); // = b − t·(a − b) if the condition was −t
    let ti = t as i128;
    let rec_b = v.rem_euclid(ti);
    let rec_a = rec_b - (v - rec_b) / ti;
    assert!(
        !(rec_a == SECRET_A as i128 && rec_b == SECRET_B as i128),
        "P2 learned both messages of the OT (a = {rec_a:#x}, b = {rec_b:#x})"
    );
    assert!(
        got == Fp::from_u128(SECRET_A) || got == Fp::from_u128(SECRET_B),
        "SELECT returned neither branch: its condition was not a bit"
    );
}

/// The same OT with y a *field* input, which has no range to check: an honest-looking P2 inputs
/// y = 1 + t·2^32 (or other values far outside the comparison's 32 bits). The comparison now
/// returns a bit whatever its operands, so SELECT gives P2 exactly one of a and b.
#[test]
fn comparison_on_an_unranged_operand_still_selects_exactly_one_branch() {
    let p = ot_program(Kind::Field);
    let t: u128 = 1 << 40;
    let ys = [Fp::from_u128(1 + (t << 32)), Fp::from_u128((1 << 33) + 5), -Fp::from_u128(1 << 100), -Fp::ONE];
    for y in ys {
        let r = run_with_shifted_input(&p, &ot_inputs(y.to_bytes()), 2, Fp::ZERO);
        let got = Fp::from_bytes(r[2].as_ref().expect("an honest run completes")[0].unwrap()).unwrap();
        assert_one_branch_only(got, t);
    }
}

/// The same root cause without a comparison: P2's choice is declared a 1-bit unsigned input.
/// P2 inputs 2^40 (SELECT would reveal b + 2^40·(a − b)): the range check aborts the run. A
/// shift that stays in range (0 + 1 = 1) is just a different choice and completes.
#[test]
fn declared_one_bit_input_cannot_make_select_reveal_both_branches() {
    let mut b = Builder::new(FieldKind::Prime, 3);
    let a = b.input(0, Kind::Unsigned(32));
    let bb = b.input(1, Kind::Unsigned(32));
    let choice = b.input(2, Kind::Unsigned(1));
    let out = b.select(choice, a, bb);
    b.output(out, Kind::Field, Some(vec![2]));
    let p = b.build();
    let inputs = ot_inputs(0u128.to_le_bytes());
    let t: u128 = 1 << 40;
    all_caught_by_the_range_check(&run_with_shifted_input(&p, &inputs, 2, Fp::from_u128(t)));
    all_caught_by_the_range_check(&run_with_shifted_input(&p, &inputs, 2, -Fp::ONE));
    let r = run_with_shifted_input(&p, &inputs, 2, Fp::ONE);
    assert_eq!(Fp::from_bytes(r[2].as_ref().unwrap()[0].unwrap()).unwrap(), Fp::from_u128(SECRET_A));
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
                let mut junk = vec![0u8; 64 << 10];
                junk.push(3);
                for _ in 0..flood {
                    let m = junk.clone();
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

/// Online openings and input broadcasts go out in chunks: a level of 64 products opens 128
/// values, which with a chunk of 8 values must take 16 messages of at most 8 values each, and
/// the results stay right across chunk boundaries. (At the real chunk, 2^20 values = 16 MiB, a
/// level or an input list of any size stays under the 64 MiB transport limit; before, a whole
/// level went into one message.)
#[test]
fn online_openings_and_input_broadcasts_are_chunked() {
    use std::cell::Cell;
    use std::rc::Rc;
    use webmpc_core::channel::memory::Tamper;
    const CHUNK: usize = 8;
    let mut b = Builder::new(FieldKind::Prime, 2);
    let xs: Vec<_> = (0..8).map(|_| b.input(0, Kind::Unsigned(8))).collect();
    let ys: Vec<_> = (0..8).map(|_| b.input(1, Kind::Field)).collect();
    let mut sum = None;
    for x in &xs {
        for y in &ys {
            let p = b.mul(*x, *y);
            sum = Some(match sum {
                None => p,
                Some(s) => b.add(s, p),
            });
        }
    }
    b.output(sum.unwrap(), Kind::Field, None);
    let p = b.build();
    let xv: Vec<u128> = (0..8).map(|i| 200 + i).collect();
    let yv: Vec<u128> = (0..8).map(|i| 1_000_003 * (i + 1)).collect();
    let inputs = [
        xv.iter().map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
        yv.iter().map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    ];
    let want = xv.iter().sum::<u128>() * yv.iter().sum::<u128>();
    let largest = Rc::new(Cell::new(0usize));
    let channels = network(2)
        .into_iter()
        .map(|ch| {
            let largest = largest.clone();
            Tamper::new(ch, move |_: PartyId, _: usize, m: &mut Vec<u8>| largest.set(largest.get().max(m.len())))
        })
        .collect();
    webmpc_spdz::online::set_open_chunk_for_tests(CHUNK);
    let mut dealer = Dealer::<Fp>::new(2);
    let parties = dealer.parties(channels, &p.requirements(), vec![Cheat::None; 2]);
    let futs = parties.into_iter().zip(&inputs).map(|(mut party, inp)| {
        let p = &p;
        async move { party.run(p, inp, |_, _| {}).await }
    });
    let out = run_local(join_all(futs)).unwrap();
    for o in out {
        assert_eq!(o.unwrap()[0], Some(want.to_le_bytes()));
    }
    // 64 products open 128 values (2 KiB) and P0's 64 input bits are 64 values (1 KiB) in one
    // message each if unchunked. The largest message must hold no more than a chunk (plus the
    // MAC checks' and coins' fixed-size messages, all below 200 bytes here).
    assert!(largest.get() <= 200, "a {}-byte message: openings were not chunked", largest.get());
}

/// The multiplexer's budgets never fail an honest peer: three parties at the largest batch
/// (triples, bits and more than one round of masks), where a party that is ahead sends the most
/// unread messages and bytes.
#[test]
fn honest_parties_at_the_largest_batch_stay_within_the_mux_budgets() {
    use webmpc_spdz::party::MAX_BATCH;
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let futs = network(3).into_iter().map(|ch| async move {
        let mut p = Party::<Fp, _>::setup(ch, sid).await?;
        p.set_batch(MAX_BATCH)?;
        p.preprocess_triples(MAX_BATCH, |_, _| {}).await?;
        p.preprocess_bits(64, |_, _| {}).await?;
        p.preprocess_masks(&[5 * MAX_BATCH + 3, 0, 1]).await?;
        Ok::<_, SpdzError>(p.store().counts())
    });
    for r in run_local(join_all(futs)).unwrap() {
        let c = r.unwrap();
        // (Bit generation in F_p consumes some of the triples.)
        assert!(c.triples > 0 && c.bits >= 64, "{c:?}");
        assert_eq!(c.masks, vec![5 * MAX_BATCH + 3, 0, 1]);
    }
}
