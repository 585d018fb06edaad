//! Every check of the online protocol, each with a deviating party that it catches: tampered
//! garbled rows, a wrong mask share to an input owner, wrong input labels, an inconsistent
//! broadcast of a masked input, a wrong output mask share, a lying evaluator, a wrong F_Pre.AND
//! opening, malformed or truncated messages (a set padding bit in the masked outputs too), and a
//! party that disconnects at every point of a run; and output privacy asserted on the traffic (a
//! party that is not a recipient receives nothing derived from the output's mask). Every honest party must end with a typed error (never a hang, never an output computed
//! from the cheater's deviation), and the party whose check fires must name the check and the
//! cheater exactly where the check proves it deviated — never an honest party: a garbler that
//! flips the tag it holds for another garbler, or a tag in a gate that reaches an output through
//! XOR gates only, must not get the other garbler or the evaluator blamed (abort, not
//! identifiable abort). With two parties every check proves the other party deviated.
//!
//! Deviations edit what the cheater sends (`Tamper` inside the test channel), by the message's
//! index per destination. For the job used here (interleaved run, 3 parties, evaluator 0, adder64
//! with input 0 from party 1 and input 1 from party 2, one chunk) the schedule per pair is:
//!
//! | index | garbler → evaluator | garbler → garbler | evaluator → garbler |
//! |---|---|---|---|
//! | 0 | agreement (64 B) | agreement | agreement |
//! | 1 | input-mask opening (32 B) | input-mask opening (40 B) | input-mask opening |
//! | 2 | masked inputs (8 B from an owner) | masked inputs | masked inputs |
//! | 3 | broadcast check | broadcast check | broadcast check |
//! | 4 | input labels (2048 B) | F_Pre.AND opening (48 B) | F_Pre.AND opening |
//! | 5 | F_Pre.AND opening | output-mask opening (40 B) | masked outputs + labels (1032 B) |
//! | 6 | garbled table (12128 B) | | output-mask opening |
//! | 7 | output-mask opening | | |
//!
//! Every edit asserts the length it expects, so a change of schedule fails loudly instead of
//! tampering with another message. The indices count the online protocol's messages only: with
//! the real F_Pre, its messages travel on the same connection in between but bypass the edit
//! (`common::Side`), while a crash counts every message, F_Pre's included.
//!
//! Every test runs on both the trusted dealer (`ideal_fpre::…`) and the real F_Pre
//! (`real_fpre::…`).

use crate::common;

use common::*;
use std::rc::Rc;
use webmpc_authgc::online::{Options, Recipients, Roles};
use webmpc_authgc::{AuthGcError, Phase};
use webmpc_core::channel::PartyId;
use webmpc_core::Block;

const N: usize = 3;
const EVAL: PartyId = 0;
const TABLE: usize = 63 * 4 * N * 16 + 32;

fn adder_job(outputs: Recipients) -> Job<'static> {
    let c = reference("adder64.txt");
    let owners = [1, 2];
    let values = vec![u64_bits(0x0123_4567_89ab_cdef, 64), u64_bits(0xfedc_ba98_7654_3210, 64)];
    Job {
        circuit: c,
        roles: Roles { evaluator: EVAL, owners: owners.to_vec(), outputs: vec![outputs] },
        inputs: by_owner(&owners, &values, N),
        mode: Mode::Interleaved,
        options: Options::default(),
    }
}

/// Party `cheater` applies `f` to its `index`-th message to `to`, which must be `len` bytes.
fn edit(cheater: PartyId, to: PartyId, index: usize, len: usize, f: impl Fn(&mut Vec<u8>) + 'static) -> Deviation {
    Deviation::Tamper {
        party: cheater,
        edit: Rc::new(move |dest, i, m: &mut Vec<u8>| {
            if dest == to && i == index {
                assert_eq!(m.len(), len, "message {index} to party {to} is not the one this test means to edit");
                f(m);
            }
        }),
    }
}

fn cheating(phase: Phase, culprit: Option<PartyId>, check: &'static str) -> AuthGcError {
    AuthGcError::cheating(phase, culprit, check)
}

/// Runs the adder job with `deviation` by `cheater`; checks that `detector` reports `expected`
/// and that every honest party aborted. Returns the honest parties' errors.
fn caught<S: PreSetup>(deviation: Deviation, cheater: PartyId, detector: PartyId, expected: AuthGcError) -> Vec<AuthGcError> {
    caught_in::<S>(&adder_job(Recipients::ALL), deviation, cheater, detector, expected)
}

fn caught_in<S: PreSetup>(job: &Job<'_>, deviation: Deviation, cheater: PartyId, detector: PartyId, expected: AuthGcError) -> Vec<AuthGcError> {
    let results = run_job::<S>(job, &deviation);
    let errors = assert_all_abort(&results, cheater);
    check_detector(&results, detector, expected);
    errors
}

fn check_detector(results: &[PartyResult], detector: PartyId, expected: AuthGcError) {
    let got = results[detector].outputs.as_ref().unwrap_err();
    assert_eq!(got, &expected, "party {detector} must name the check");
    assert_eq!(got.code(), expected.code());
}

/// For deviations in the last round (output masks): the recipient that is cheated aborts naming
/// the check, and an honest party that had already received everything it needs may finish —
/// but only with the right outputs (security with abort; designated abort for private outputs).
fn caught_in_last_round<S: PreSetup>(deviation: Deviation, cheater: PartyId, detector: PartyId, expected: AuthGcError) {
    let job = adder_job(Recipients::ALL);
    let results = run_job::<S>(&job, &deviation);
    check_detector(&results, detector, expected);
    let want = plaintext(&job);
    for (p, r) in results.iter().enumerate().filter(|(p, _)| *p != cheater) {
        if let Ok(out) = &r.outputs {
            assert_eq!(out[0].as_ref(), Some(&want[0]), "party {p} finished, so with the right output");
        }
    }
}

fn the_schedule_in_the_docs_is_the_honest_run<S: PreSetup>() {
    // Counts every message per pair of an honest run of the job and checks the table above.
    use std::cell::RefCell;
    let log: Rc<RefCell<Vec<(PartyId, usize, usize)>>> = Rc::default();
    let l = log.clone();
    let dev = Deviation::Tamper { party: 1, edit: Rc::new(move |to, i, m: &mut Vec<u8>| l.borrow_mut().push((to, i, m.len()))) };
    let results = run_job::<S>(&adder_job(Recipients::ALL), &dev);
    assert!(results.iter().all(|r| r.outputs.is_ok()));
    let to_eval: Vec<usize> = log.borrow().iter().filter(|m| m.0 == EVAL).map(|m| m.2).collect();
    assert_eq!(to_eval, vec![64, 32, 8, 32, 2048, 48, TABLE, 40]);
    let to_garbler: Vec<usize> = log.borrow().iter().filter(|m| m.0 == 2).map(|m| m.2).collect();
    assert_eq!(to_garbler, vec![64, 40, 8, 32, 48, 40]);
}

fn a_tampered_garbled_row_is_caught_naming_the_garbler_where_provable<S: PreSetup>() {
    // Every row is tampered with, so the first failure is at the first level of AND gates, whose
    // inputs are input wires: the labels the row was decrypted under came from garbler 2 alone,
    // so the failure proves garbler 2 deviated.
    let expected = cheating(Phase::Online, Some(2), "tag check on a decrypted garbled row");
    let bits_at = 63 * 4 * N * 16;
    // The masked bits of every row.
    caught::<S>(edit(2, EVAL, 6, TABLE, move |m| m[bits_at..].iter_mut().for_each(|b| *b ^= 0xff)), 2, EVAL, expected.clone());
    // The tag under the evaluator's key (garbler 2's slot for party 0 is block 0 of each row).
    caught::<S>(
        edit(2, EVAL, 6, TABLE, |m| {
            for row in 0..63 * 4 {
                m[row * N * 16] ^= 1;
            }
        }),
        2,
        EVAL,
        expected.clone(),
    );
    // The label share: the evaluator's label for garbler 2 is wrong, caught at the next AND gate
    // — whose input label of garbler 2 came partly from garbler 1's row (its tag for garbler 2),
    // so the failure cannot tell garbler 2's own deviation from one by garbler 1: nobody named.
    caught::<S>(
        edit(2, EVAL, 6, TABLE, |m| {
            for row in 0..63 * 4 {
                m[(row * N + 2) * 16 + 5] ^= 0x40;
            }
        }),
        2,
        EVAL,
        cheating(Phase::Online, None, "tag check on a decrypted garbled row"),
    );
}

/// Garbler 2's block `slot` of every row of the AND gates `gates` (positions among the AND
/// gates), flipped: the table of the adder job with `parties` parties.
fn flip_slot(parties: usize, gates: Vec<usize>, slot: usize) -> impl Fn(&mut Vec<u8>) {
    move |m| {
        for &k in &gates {
            for row in 0..4 {
                m[((k * 4 + row) * parties + slot) * 16] ^= 1;
            }
        }
    }
}

fn a_garbler_flipping_its_tag_for_another_garbler_gets_no_one_else_blamed<S: PreSetup>() {
    // Garbler 2 flips the tag it holds for garbler 1 (block 1 of its rows) in every row. The
    // evaluator's check of garbler 2's rows passes (the tag under its own key is intact); it
    // rebuilds a wrong label for garbler 1 at every AND output, and garbler 1's next row
    // decrypts to garbage. Before the fix the evaluator reported "party 1 failed the tag check":
    // the honest garbler framed. The check cannot tell, so nobody may be named.
    let results = run_job::<S>(&adder_job(Recipients::ALL), &edit(2, EVAL, 6, TABLE, flip_slot(N, (0..63).collect(), 1)));
    assert_all_abort(&results, 2);
    check_detector(&results, EVAL, cheating(Phase::Online, None, "tag check on a decrypted garbled row"));
    assert_no_honest_party_blamed(&results, 2);
}

fn a_flipped_tag_in_a_gate_reaching_an_output_through_xors_gets_no_one_blamed<S: PreSetup>() {
    // Garbler 2 flips its tag for garbler 1 in the rows of one AND gate whose output reaches the
    // outputs through XOR gates only: no row check sees garbler 1's wrong label, the honest
    // evaluator hands it to garbler 1 with the output, and garbler 1's output label check fails.
    // Before the fix garbler 1 reported "party 0 failed the output label check": the honest
    // evaluator framed. The check cannot tell, so nobody may be named.
    let c = reference("adder64.txt").circuit();
    let (k, out) = and_gates(c).into_iter().find(|&(_, out)| !feeds_and(c, out)).expect("an AND gate reaching no AND gate");
    assert!(reaches_an_output(c, out), "AND gate {k} (wire {out}) reaches an output");
    let results = run_job::<S>(&adder_job(Recipients::ALL), &edit(2, EVAL, 6, TABLE, flip_slot(N, vec![k], 1)));
    assert_all_abort(&results, 2);
    check_detector(&results, 1, cheating(Phase::Online, None, "output label check (masked output value)"));
    assert_no_honest_party_blamed(&results, 2);
}

/// Whether wire `w` reaches an output wire (single-assignment circuit).
fn reaches_an_output(c: &webmpc_circuit::Circuit, w: u32) -> bool {
    let mut reached = vec![false; c.wires as usize];
    reached[w as usize] = true;
    for g in &c.gates {
        let (out, r) = match *g {
            webmpc_circuit::Gate::Xor { a, b, out } | webmpc_circuit::Gate::And { a, b, out } => {
                (out, reached[a as usize] || reached[b as usize])
            }
            webmpc_circuit::Gate::Inv { a, out } | webmpc_circuit::Gate::Copy { a, out } => (out, reached[a as usize]),
            webmpc_circuit::Gate::Const { out, .. } => (out, false),
        };
        reached[out as usize] |= r;
    }
    let outputs: u32 = c.outputs.iter().sum();
    reached[(c.wires - outputs) as usize..].iter().any(|&r| r)
}

/// The adder job with two parties: the evaluator (input 0) and garbler 1 (input 1).
fn two_party_adder_job() -> Job<'static> {
    let mut job = adder_job(Recipients::ALL);
    job.roles.owners = vec![EVAL, 1];
    job.inputs = by_owner(&[EVAL, 1], &[u64_bits(0x0123_4567_89ab_cdef, 64), u64_bits(0xfedc_ba98_7654_3210, 64)], 2);
    job
}

fn with_two_parties_every_failed_label_check_names_the_other_party<S: PreSetup>() {
    // With no other garbler, every label the evaluator holds for garbler 1 comes from garbler 1's
    // own messages (and the evaluator's own tags): a row failing anywhere, even after AND gates,
    // proves garbler 1 deviated; a wrong output label proves the evaluator did.
    let job = two_party_adder_job();
    let table = 63 * 4 * 2 * 16 + 32;
    // Garbler 1's label share (block 1 of its rows) in every row: caught at the second level.
    let label_share = |m: &mut Vec<u8>| (0..63 * 4).for_each(|row| m[(row * 2 + 1) * 16 + 5] ^= 0x40);
    caught_in::<S>(&job, edit(1, EVAL, 6, table, label_share), 1, EVAL, cheating(Phase::Online, Some(1), "tag check on a decrypted garbled row"));
    // The evaluator flips the masked value of output bit 1, which an AND gate precedes.
    let c = job.circuit.circuit();
    assert!(after_and(c, c.wires - 63), "output bit 1 follows an AND gate");
    caught_in::<S>(&job, edit(EVAL, 1, 5, 8 + 16 * 64, |m| m[0] ^= 2), EVAL, 1, cheating(Phase::Online, Some(EVAL), "output label check (masked output value)"));
}

fn a_wrong_mask_share_to_an_input_owner_is_caught<S: PreSetup>() {
    // Garbler 2 (and, separately, the evaluator) flips a share bit it opens to owner 1.
    let expected = |c| cheating(Phase::Online, Some(c), "input mask shares to their owner");
    caught::<S>(edit(2, 1, 1, 40, |m| m[0] ^= 1), 2, 1, expected(2));
    caught::<S>(edit(EVAL, 1, 1, 40, |m| m[3] ^= 0x10), EVAL, 1, expected(EVAL));
    // Or sends a wrong tag digest with the right bits.
    caught::<S>(edit(1, 2, 1, 40, |m| m[20] ^= 1), 1, 2, expected(1));
    // A prepared run sends the opening behind its 64-byte agreement, in one message: the same
    // check, on the bytes after the head. Garbler 2 flips a share bit of that message to owner 1
    // (the only message of 64 + 40 bytes it sends party 1) and keeps the agreement intact.
    let phased = Job { mode: Mode::Phased, ..adder_job(Recipients::ALL) };
    let tamper = Deviation::Tamper {
        party: 2,
        edit: Rc::new(move |dest, _, m: &mut Vec<u8>| {
            if dest == 1 && m.len() == 64 + 40 {
                m[64] ^= 1;
            }
        }),
    };
    caught_in::<S>(&phased, tamper, 2, 1, expected(2));
}

fn a_wrong_input_label_is_caught_at_the_next_and_gate<S: PreSetup>() {
    let c = reference("adder64.txt").circuit();
    assert!(feeds_and(c, 0), "input bit 0 reaches an AND gate");
    let row_check = |culprit| cheating(Phase::Online, culprit, "tag check on a decrypted garbled row");
    // A garbage label for input bit 0 (wire 0). Its first AND gate is a_0 ∧ b_0: both labels came
    // from garbler 2 alone, so the failure proves garbler 2 deviated.
    caught::<S>(edit(2, EVAL, 4, 2048, |m| m[7] ^= 0x80), 2, EVAL, row_check(Some(2)));
    // The *other* valid label, L ⊕ Δ (what a garbler that wants to flip the input would send):
    // the evaluator decrypts the row its x̂ selects under the key of another row. Bits 0 and 64
    // (a_0, b_0) are caught at a_0 ∧ b_0 (garbler 2 named); bit 70 (b_6) at a gate whose other
    // input carries the carry, an AND output whose label for garbler 2 garbler 1's rows helped
    // build: that failure cannot tell who deviated.
    for (bit, culprit) in [(0usize, Some(2)), (64, Some(2)), (70, None)] {
        let dev = edit(2, EVAL, 4, 2048, move |m| {
            let l = Block::slice_from_bytes_mut(&mut m[16 * bit..16 * bit + 16]).unwrap();
            l[0] ^= party_delta(2);
        });
        let results = run_job::<S>(&adder_job(Recipients::ALL), &dev);
        assert_all_abort(&results, 2);
        assert_eq!(results[EVAL].outputs.as_ref().unwrap_err(), &row_check(culprit), "input bit {bit}");
    }
}

fn a_wrong_label_on_a_wire_that_reaches_no_and_gate_is_harmless<S: PreSetup>() {
    // adder64's top input bits only reach the top sum bit through XOR gates: no row is decrypted
    // under their labels, so a wrong label there cannot be seen — and cannot change anything but
    // what the evaluator would forward to the cheater itself.
    let c = reference("adder64.txt").circuit();
    let w = (0..128).find(|&w| !feeds_and(c, w)).expect("some input bit reaches no AND gate") as usize;
    let job = adder_job(Recipients::only(&[0, 1]));
    let dev = edit(2, EVAL, 4, 2048, move |m| {
        let l = Block::slice_from_bytes_mut(&mut m[16 * w..16 * w + 16]).unwrap();
        l[0] ^= party_delta(2);
    });
    let results = run_job::<S>(&job, &dev);
    let want = plaintext(&job);
    for p in [0, 1] {
        assert_eq!(results[p].outputs.as_ref().unwrap()[0].as_ref(), Some(&want[0]), "party {p}'s output is right");
    }
}

fn an_inconsistent_broadcast_of_a_masked_input_is_caught_by_everyone<S: PreSetup>() {
    let expected = cheating(Phase::Online, None, "broadcast consistency check");
    // Owner 1 shows garbler 2 a different x̂ than the evaluator; then the evaluator's own input
    // (a 3-party adder with input 0 from the evaluator) shown differently to garbler 1.
    for (cheater, to) in [(1, 2), (1, EVAL)] {
        let errors = caught::<S>(edit(cheater, to, 2, 8, |m| m[0] ^= 1), cheater, to, expected.clone());
        assert!(errors.iter().all(|e| e == &expected), "every honest party names the check: {errors:?}");
    }
    let mut job = adder_job(Recipients::ALL);
    job.roles.owners = vec![EVAL, 2];
    job.inputs = by_owner(&[EVAL, 2], &[u64_bits(5, 64), u64_bits(6, 64)], N);
    let errors = caught_in::<S>(&job, edit(EVAL, 1, 2, 8, |m| m[7] ^= 0x80), EVAL, 1, expected.clone());
    assert!(errors.iter().all(|e| e == &expected));
}

fn a_wrong_output_mask_share_is_caught_by_its_recipient<S: PreSetup>() {
    let expected = |c| cheating(Phase::Online, Some(c), "output mask shares to their recipients");
    // Garbler 2 to the evaluator, garbler 1 to garbler 2, the evaluator to garbler 1.
    caught_in_last_round::<S>(edit(2, EVAL, 7, 40, |m| m[0] ^= 4), 2, EVAL, expected(2));
    caught_in_last_round::<S>(edit(1, 2, 5, 40, |m| m[1] ^= 1), 1, 2, expected(1));
    caught_in_last_round::<S>(edit(EVAL, 1, 6, 40, |m| m[39] ^= 1), EVAL, 1, expected(EVAL));
}

fn a_lying_evaluator_is_caught_by_every_other_recipient<S: PreSetup>() {
    let output_check = |culprit| cheating(Phase::Online, culprit, "output label check (masked output value)");
    let len = 8 + 16 * 64;
    // Output bit 0 is a_0 ⊕ b_0: the evaluator's label for it is the XOR of the labels the
    // recipient itself sent, so a wrong one proves the evaluator lied. Flip its masked value
    // (keeping the label it holds), for each garbler recipient.
    let c = reference("adder64.txt").circuit();
    assert!(!after_and(c, c.wires - 64) && after_and(c, c.wires - 63) && after_and(c, c.wires - 1));
    for to in [1, 2] {
        caught::<S>(edit(EVAL, to, 5, len, |m| m[0] ^= 1), EVAL, to, output_check(Some(EVAL)));
    }
    // On output bits after an AND gate (bit 1, bit 63) the recipient cannot tell a lying
    // evaluator from a garbler whose tag gave the honest evaluator a wrong label: nobody named.
    // Flip a bit and send a random label; or keep the bits and alter a label.
    caught::<S>(
        edit(EVAL, 1, 5, len, |m| {
            m[0] ^= 2;
            m[8 + 16..8 + 32].copy_from_slice(&[0x5a; 16]);
        }),
        EVAL,
        1,
        output_check(None),
    );
    caught::<S>(edit(EVAL, 2, 5, len, |m| m[8 + 16 * 63] ^= 1), EVAL, 2, output_check(None));
    // Both at once: the lie on bit 0 is proof enough.
    caught::<S>(edit(EVAL, 2, 5, len, |m| m[0] ^= 3), EVAL, 2, output_check(Some(EVAL)));
    // A recipient-only output: the evaluator sends nothing to the others (no message 5 for them).
    let mut job = adder_job(Recipients::only(&[2]));
    job.mode = Mode::Phased;
    let results = check_job::<S>(&job);
    assert_eq!(results[1].outputs.as_ref().unwrap()[0], None);
}

fn a_wrong_f_pre_and_opening_is_caught<S: PreSetup>() {
    // Garbler 1 flips one of its d shares to garbler 2 (message 4) and to the evaluator (5).
    let expected = cheating(Phase::Dependent, Some(1), "F_Pre.AND opening of d and e");
    caught::<S>(edit(1, 2, 4, 48, |m| m[0] ^= 1), 1, 2, expected.clone());
    caught::<S>(edit(1, EVAL, 5, 48, |m| m[15] ^= 0x01), 1, EVAL, expected);
}

fn malformed_and_truncated_messages_are_typed_errors<S: PreSetup>() {
    // Tables one byte short and one byte long.
    let expected = AuthGcError::Malformed { phase: Phase::Dependent, peer: 2, what: "garbled table chunk" };
    caught::<S>(edit(2, EVAL, 6, TABLE, |m| m.truncate(m.len() - 1)), 2, EVAL, expected.clone());
    caught::<S>(edit(2, EVAL, 6, TABLE, |m| m.push(0)), 2, EVAL, expected.clone());
    caught::<S>(edit(2, EVAL, 6, TABLE, |m| m.clear()), 2, EVAL, expected);
    // Masked inputs with a nonzero padding bit, or of the wrong length.
    let mut job = adder_job(Recipients::ALL);
    let c = webmpc_authgc::online::PreparedCircuit::new(random_circuit(&[1, 2, 3, 4, 5, 6, 7, 8, 9], &[3, 3])).unwrap();
    job.circuit = &c;
    job.inputs = by_owner(&[1, 2], &[vec![true; 3], vec![false; 3]], N);
    caught_in::<S>(
        &job,
        edit(1, EVAL, 2, 1, |m| m[0] |= 0x80),
        1,
        EVAL,
        AuthGcError::Malformed { phase: Phase::Online, peer: 1, what: "masked inputs" },
    );
    for (cheater, to, index, len) in [(1, 2, 2, 8), (2, EVAL, 4, 2048), (EVAL, 2, 5, 1032), (2, EVAL, 0, 64)] {
        let results = run_job::<S>(&adder_job(Recipients::ALL), &edit(cheater, to, index, len, |m| m.truncate(m.len() - 1)));
        assert_all_abort(&results, cheater);
        let err = results[to].outputs.as_ref().unwrap_err();
        assert_eq!(err.code(), "MALFORMED_MESSAGE", "message {index} from {cheater} to {to}: {err}");
        assert_eq!(err.peer(), Some(cheater));
    }
}

fn masked_outputs_with_a_set_padding_bit_are_malformed<S: PreSetup>() {
    // A 3-bidder Vickrey auction of 5-bit bids: 2 + 5 = 7 output bits, so the packed masked
    // outputs end in one padding bit, which must be zero (canonical encoding).
    let c = webmpc_authgc::online::PreparedCircuit::new(vickrey(3, 5)).unwrap();
    let owners = [EVAL, 1, 2];
    let job = Job {
        circuit: &c,
        roles: Roles { evaluator: EVAL, owners: owners.to_vec(), outputs: vec![Recipients::ALL; 2] },
        inputs: by_owner(&owners, &[u64_bits(9, 5), u64_bits(30, 5), u64_bits(17, 5)], N),
        mode: Mode::Interleaved,
        options: Options::default(),
    };
    assert_eq!(c.circuit().outputs.iter().sum::<u32>(), 7);
    caught_in::<S>(
        &job,
        edit(EVAL, 1, 5, 1 + 16 * 7, |m| m[0] |= 0x80),
        EVAL,
        1,
        AuthGcError::Malformed { phase: Phase::Online, peer: EVAL, what: "masked outputs" },
    );
}

fn a_non_recipient_receives_nothing_derived_from_an_output_mask<S: PreSetup>() {
    // Output privacy on the traffic, not on the `None` a party computes from the roles: in two
    // runs with independent masks, labels and inputs, every online message a party that is not a
    // recipient of the output receives from the output phase on is the same bytes — the
    // output-mask opening with no bits and the tag digest of nothing, a public constant — and the
    // evaluator sends it no masked output. Its messages before (the schedule above: 5 from each
    // peer to a garbler, 7 from each garbler to the evaluator) carry input masks, masked inputs,
    // digests and F_Pre.AND openings, none of which involves an output wire's mask. A recipient's
    // output-phase messages differ between the runs (they carry its mask shares): the comparison
    // sees mask-derived bytes where there are some.
    let before = |to: PartyId| if to == EVAL { 7 } else { 5 };
    for recipients in [&[EVAL, 1][..], &[2], &[EVAL]] {
        let runs: Vec<Vec<PartyResult>> = [(1u64, 2u64), (0xdead_beef, 0x1234_5678_9abc)]
            .into_iter()
            .map(|(x, y)| {
                let mut job = adder_job(Recipients::only(recipients));
                job.inputs = by_owner(&[1, 2], &[u64_bits(x, 64), u64_bits(y, 64)], N);
                check_job::<S>(&job)
            })
            .collect();
        for p in 0..N {
            for q in (0..N).filter(|&q| q != p) {
                let got: Vec<&[Vec<u8>]> = runs.iter().map(|r| &r[q].online_sent[p][before(p)..]).collect();
                if recipients.contains(&p) {
                    assert_ne!(got[0], got[1], "recipient {p} gets mask-derived bytes from {q}");
                } else {
                    assert_eq!(got[0].len(), 1, "one message from {q} to non-recipient {p} in the output phase");
                    assert_eq!(got[0][0].len(), 32, "no bits from {q} to non-recipient {p}, only the digest");
                    assert_eq!(got[0], got[1], "what non-recipient {p} gets from {q} is independent of the masks");
                }
            }
        }
    }
}

fn a_party_that_disconnects_at_any_point_makes_every_honest_party_abort<S: PreSetup>() {
    // For the evaluator and a garbler, crash before each of its sends in turn (and also run the
    // job phased). Nothing may hang; every honest party ends with a typed error — except that
    // once the crashing party has sent everything a peer needs, that peer may finish, and then
    // only with the right outputs. With the real F_Pre a party sends a few hundred messages
    // (base OTs, the Δ check, triple and mask batches) and each run sets up base OTs anew: the
    // last 16 crash points (the online messages and the last F_Pre round) are all tried, the
    // earlier ones (interleaved runs only: phased runs differ only after preprocessing) at six
    // points spread over F_Pre's setup and batches.
    for mode in [Mode::Interleaved, Mode::Phased] {
        let mut job = adder_job(Recipients::ALL);
        job.mode = mode;
        let want = plaintext(&job);
        let honest = run_job::<S>(&job, &Deviation::None);
        for cheater in [EVAL, 1, 2] {
            let sends = honest[cheater].sent;
            assert!(sends >= 10, "{cheater} sends at least 10 messages ({sends})");
            let tail = sends.saturating_sub(16);
            let stride = if mode == Mode::Phased { tail.max(1) } else { tail.div_ceil(6).max(1) };
            // The crash also fires on a receive once `after` messages are sent: at `sends` the
            // party has sent everything and still fails (it has messages to receive).
            let points: Vec<usize> = (0..tail).step_by(stride).chain(tail..=sends).collect();
            for after in points {
                let results = run_job::<S>(&job, &Deviation::Crash { party: cheater, after });
                assert!(results[cheater].outputs.is_err(), "crash of {cheater} after {after} sends in {mode:?}");
                let mut finished = 0;
                for (p, r) in results.iter().enumerate().filter(|(p, _)| *p != cheater) {
                    match &r.outputs {
                        Ok(out) => {
                            finished += 1;
                            assert_eq!(out[0].as_ref(), Some(&want[0]), "party {p} finished with a wrong output");
                        }
                        Err(e) => assert_eq!(e.code(), "PEER_DISCONNECTED", "party {p}, crash of {cheater} after {after}: {e}"),
                    }
                }
                // Until it has sent the first of its output-mask shares (the last round, one
                // message per peer), nobody can finish.
                if after <= sends - (N - 1) {
                    assert_eq!(finished, 0, "crash of {cheater} after {after} sends in {mode:?}");
                }
            }
            let results = run_job::<S>(&job, &Deviation::Crash { party: cheater, after: sends + 1 });
            assert!(results.iter().all(|r| r.outputs.is_ok()), "a crash point past the last message changes nothing");
        }
    }
}

on_both_preprocessors!(
    the_schedule_in_the_docs_is_the_honest_run,
    a_tampered_garbled_row_is_caught_naming_the_garbler_where_provable,
    a_garbler_flipping_its_tag_for_another_garbler_gets_no_one_else_blamed,
    a_flipped_tag_in_a_gate_reaching_an_output_through_xors_gets_no_one_blamed,
    with_two_parties_every_failed_label_check_names_the_other_party,
    a_wrong_mask_share_to_an_input_owner_is_caught,
    a_wrong_input_label_is_caught_at_the_next_and_gate,
    a_wrong_label_on_a_wire_that_reaches_no_and_gate_is_harmless,
    an_inconsistent_broadcast_of_a_masked_input_is_caught_by_everyone,
    a_wrong_output_mask_share_is_caught_by_its_recipient,
    a_lying_evaluator_is_caught_by_every_other_recipient,
    a_wrong_f_pre_and_opening_is_caught,
    malformed_and_truncated_messages_are_typed_errors,
    masked_outputs_with_a_set_padding_bit_are_malformed,
    a_non_recipient_receives_nothing_derived_from_an_output_mask,
    a_party_that_disconnects_at_any_point_makes_every_honest_party_abort,
);
