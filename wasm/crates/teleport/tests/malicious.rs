//! Cheating entities, each caught by the check meant for it (malicious mode), with the check's
//! name in the error: a malicious enclave (tampered table, wrong σ, wrong x2⁰ labels, wrong
//! decoding bits, a different circuit garbled with the right seed), a malicious garbler (labels
//! of the wrong x2¹ value, garbage labels for x2¹ or x1, a wrong τ) and a malicious evaluator
//! (a forged output label for an output revealed to the garbler). In semi-honest mode the same
//! tampering goes unnoticed and corrupts the output, which is why the checks exist.
//!
//! The enclave's sealed replies (x2⁰ labels and σ's) can only be forged by the enclave, which
//! holds their key: a deviating enclave edits them before sealing
//! ([`EnclaveMachine::deviate`](webmpc_teleport::machine::EnclaveMachine)); a host that edits them
//! on the link fails their authentication instead.

mod common;

use common::*;
use futures::join;
use webmpc_circuit::Circuit;
use webmpc_core::channel::memory::{network, run_local, Tamper};
use webmpc_core::channel::{Channel, PartyId};
use webmpc_core::prg::Prg;
use webmpc_teleport::driver::{self, link_frame, split_link_frame};
use webmpc_teleport::frames::{self, tag};
use webmpc_teleport::gc;
use webmpc_teleport::evidence::{report_data, Challenge};
use webmpc_teleport::local::{self, random_sid};
use webmpc_teleport::seal::{EnclaveKeys, Role};
use webmpc_teleport::{Check, JobHeader, Mode, Owner, TeleportError};

type Out = Result<Vec<Vec<bool>>, TeleportError>;

type GarblerOut = Result<Vec<Option<Vec<bool>>>, TeleportError>;

/// Runs the three parties, each over its own (possibly tampered) channel, with the honest drivers;
/// `enclave` may be replaced by a deviating future. `reveal`: the outputs the garbler learns too.
#[allow(clippy::too_many_arguments)]
fn run_revealing<C0: Channel, C1: Channel>(
    g: C0,
    e: C1,
    enclave: impl core::future::Future<Output = Result<(), TeleportError>>,
    job: &JobHeader,
    c: &Circuit,
    x1: &[bool],
    x2: &[bool],
    reveal: &[bool],
) -> (GarblerOut, Out) {
    let bin = c.to_binary();
    let bin = &bin;
    let (a, b, _) = run_local(async {
        join!(
            async move {
                let r = garbler(&g, job, bin, x1, reveal, &mut Prg::from_entropy().unwrap()).await;
                drop(g);
                r
            },
            async move {
                let r = evaluator(&e, job, bin, x2, reveal, &mut Prg::from_entropy().unwrap()).await;
                drop(e);
                r
            },
            enclave
        )
    })
    .expect("no deadlock");
    (a, b)
}

fn run<C0: Channel, C1: Channel>(
    g: C0,
    e: C1,
    enclave: impl core::future::Future<Output = Result<(), TeleportError>>,
    job: &JobHeader,
    c: &Circuit,
    x1: &[bool],
    x2: &[bool],
) -> (GarblerOut, Out) {
    run_revealing(g, e, enclave, job, c, x1, x2, &[false])
}

fn aes() -> (&'static Circuit, Vec<bool>, Vec<bool>, String) {
    (
        circuit("aes_128.txt"),
        hex_bits("000102030405060708090a0b0c0d0e0f"),
        hex_bits("00112233445566778899aabbccddeeff"),
        "69c4e0d86a7b0430d8cdb78070b4c55a".into(),
    )
}

fn out_hex(out: &[Vec<bool>]) -> String {
    webmpc_circuit::bytes_be_from_bits(&out[0]).iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs AES with the enclave's messages to the evaluator edited on the link by `edit(index,
/// message)` (the message inside the link frame; index 0 is the evidence): a host or network
/// in the middle, or — for the messages the enclave sends in the clear — a deviating enclave.
fn with_tampered_enclave(mode: Mode, edit: impl Fn(usize, &mut Vec<u8>) + Clone) -> (Out, String) {
    let (c, key, pt, want) = aes();
    let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], mode, random_sid().unwrap());
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    // Link frames: 0 is the garbler's copy of the evidence, then P2's messages from 1.
    let x = Tamper::new(x, move |to: PartyId, i, m: &mut Vec<u8>| {
        if to == PEERS.evaluator && i >= 1 {
            edit_link(m, 1, |inner| edit(i - 1, inner))
        }
    });
    let mut machine = local::enclave().unwrap();
    let enclave = async move {
        let r = driver::enclave_party(&x, &PEERS, &mut machine, &local::attest).await;
        drop(x);
        r
    };
    let (_, out) = run(g, e, enclave, &job, c, &key, &pt);
    (out, want)
}

/// Runs AES with a deviating enclave: `edit(type, counter, plaintext)` changes each sealed reply
/// before the enclave seals it.
fn with_deviating_enclave(mode: Mode, edit: impl FnMut(u8, u64, &mut Vec<u8>) + 'static) -> (Out, String) {
    let (c, key, pt, want) = aes();
    let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], mode, random_sid().unwrap());
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let mut machine = local::enclave().unwrap();
    machine.deviate(edit);
    let enclave = async move {
        let r = driver::enclave_party(&x, &PEERS, &mut machine, &local::attest).await;
        drop(x);
        r
    };
    let (_, out) = run(g, e, enclave, &job, c, &key, &pt);
    (out, want)
}

fn check_of(r: &Out) -> Check {
    match r {
        Err(TeleportError::CheckFailed(c)) => *c,
        other => panic!("expected a failed check, got {other:?}"),
    }
}

// Enclave → evaluator messages: 0 evidence, 1 input labels, 2.. tables, then decoding, done.
const INPUT_LABELS: usize = 1;
const FIRST_TABLES: usize = 2;

#[test]
fn a_tampered_table_fails_tau_and_goes_unnoticed_without_it() {
    // One bit of every 16-byte row of the first piece's tables: a row the evaluator uses is then
    // wrong whichever rows its select bits pick (only GRR3's implicit row escapes, 1 in 4 per
    // gate), so semi-honest mode's wrong output is certain, not a matter of luck.
    let flip = |i: usize, m: &mut Vec<u8>| {
        if i == FIRST_TABLES {
            assert_eq!(m[0], tag::TABLES);
            // Every row of every table in the chunk: the evaluator opens one row per gate (the
            // implicit GRR3 row for a quarter of them), so tampering with one row would change the
            // output only when that row happens to be the one opened.
            for row in m[1 + 8..].chunks_exact_mut(16) {
                row[5] ^= 0x10;
            }
        }
    };
    let (out, _) = with_tampered_enclave(Mode::Malicious, flip);
    assert_eq!(check_of(&out), Check::GcTau);
    assert_eq!(out.unwrap_err().code(), "ENCLAVE_CHECK_FAILED");
    let (out, want) = with_tampered_enclave(Mode::SemiHonest, flip);
    assert_ne!(out_hex(&out.unwrap()), want, "semi-honest mode has no check: the output is silently wrong");
}

#[test]
fn a_wrong_sigma_fails_tau() {
    let (out, _) = with_deviating_enclave(Mode::Malicious, |t, _, m| {
        if t == tag::INPUT_LABELS {
            let n = m.len();
            m[n - 7] ^= 1;
        }
    });
    assert_eq!(check_of(&out), Check::GcTau);
}

#[test]
fn a_wrong_x2_share_label_from_the_enclave_fails_its_sigma() {
    let (out, _) = with_deviating_enclave(Mode::Malicious, |t, _, m| {
        if t == tag::INPUT_LABELS {
            // Type byte, part index, then the labels.
            m[1 + 4 + 16 * 3 + 2] ^= 0x40;
        }
    });
    assert_eq!(check_of(&out), Check::EnclaveLabels);
}

#[test]
fn a_host_that_edits_the_sealed_input_labels_is_caught_by_their_authentication() {
    // Whatever byte a host or the network flips, in either mode, the reply no longer opens.
    for mode in MODES {
        for at in [0usize, 3, 5, 40] {
            let (out, _) = with_tampered_enclave(mode, move |i, m| {
                if i == INPUT_LABELS {
                    assert_eq!(m[0], tag::INPUT_LABELS);
                    let k = (1 + at).min(m.len() - 1);
                    m[k] ^= 1;
                }
            });
            assert_eq!(out.unwrap_err(), TeleportError::Malformed("input labels"), "{mode:?}, byte {at}");
        }
    }
}

#[test]
fn wrong_decoding_bits_fail_tau() {
    let (c, ..) = aes();
    let decoding_index = FIRST_TABLES + c.gates.len().div_ceil(webmpc_teleport::circuit::PIECE_GATES);
    let (out, _) = with_tampered_enclave(Mode::Malicious, move |i, m| {
        if i == decoding_index {
            assert_eq!(m[0], tag::DECODING);
            m[5] ^= 1;
        }
    });
    assert_eq!(check_of(&out), Check::GcTau);
}

/// A circuit with the same shape and gate kinds as `c` but another function: the first XOR gate
/// reads a different wire.
fn variant(c: &Circuit) -> Circuit {
    let mut v = c.clone();
    let k = v.gates.iter().position(|g| matches!(g, webmpc_circuit::Gate::Xor { .. })).unwrap();
    if let webmpc_circuit::Gate::Xor { a, b, out } = v.gates[k] {
        v.gates[k] = webmpc_circuit::Gate::Xor { a, b: if b == 0 { 1 } else { 0 }, out };
        assert_ne!(a, out);
    }
    v.validate().unwrap();
    v
}

#[test]
fn an_enclave_that_garbles_a_different_circuit_with_the_right_seed_fails_tau() {
    for mode in MODES {
        let (c, key, pt, want) = aes();
        let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], mode, random_sid().unwrap());
        let other = variant(c);
        let other_job = gc_job(&other, &[Owner::Garbler, Owner::Evaluator], mode, job.sid);
        let mut net = network(3).into_iter();
        let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
        let job2 = job.clone();
        // The deviating enclave: attests and opens both parties' inputs like an honest one, then
        // runs M^GC on `other`.
        let enclave = async move {
            let mut keys = EnclaveKeys::from_entropy([7; 32]);
            let to_p2 = |peer: u8, msg: Vec<u8>| x.send(PEERS.evaluator, link_frame(peer, &msg));
            let from_p2 = || async {
                let f = x.recv(PEERS.evaluator).await?;
                let (peer, msg) = split_link_frame(&f)?;
                Ok::<(u8, Vec<u8>), TeleportError>((peer, msg.to_vec()))
            };
            let (_, msg) = from_p2().await?;
            let challenge = Challenge::decode(&msg[1..])?;
            let (format, ev) = local::attest(&report_data(&keys.public(), &challenge))?;
            let ev = frames::evidence(format, &keys.public(), &challenge, &ev);
            to_p2(0, ev.clone()).await?;
            to_p2(1, ev).await?;
            let (_, msg) = from_p2().await?;
            let (job_bytes, sealed) = frames::parse_evaluator_job(&msg[1..])?;
            let (input, replies) = keys.open(Role::Evaluator, job_bytes, sealed)?;
            let x2_0 = frames::parse_gc_input(&input)?;
            while from_p2().await?.1[0] != tag::CIRCUIT_DONE {}
            let (peer, msg) = from_p2().await?;
            assert_eq!(peer, 0);
            let (job_bytes, sealed) = frames::parse_garbler_job(&msg[1..])?;
            assert_eq!(job_bytes, job2.encode());
            let (seed, _) = keys.open(Role::Garbler, job_bytes, sealed)?;
            let seed = webmpc_core::Block(seed[..].try_into().unwrap());
            let m = gc::m_gc(seed, &other_job, &other.to_binary(), &x2_0)?;
            let sigmas: Vec<[u8; 32]> = m.sigmas.map(|s| s.iter().copied().collect()).unwrap_or_default();
            for part in frames::input_labels(&m.share0_labels, &sigmas, &replies, |_, _, _| {}) {
                to_p2(1, part).await?;
            }
            let (_, msg) = from_p2().await?;
            assert_eq!(msg[0], tag::GARBLE_PIECE);
            let mut t = frames::tables_header(0, m.tables.len());
            t.extend_from_slice(&m.tables);
            to_p2(1, t).await?;
            to_p2(1, frames::decoding(128, &m.decoding)).await?;
            to_p2(1, frames::done()).await?;
            drop(x);
            Ok(())
        };
        let (_, out) = run(g, e, enclave, &job, c, &key, &pt);
        match mode {
            Mode::Malicious => assert_eq!(check_of(&out), Check::GcTau),
            Mode::SemiHonest => assert_ne!(out_hex(&out.unwrap()), want),
        }
    }
}

/// AES with the garbler's labels message (its third message to the evaluator, after the job
/// header and the sealed seed) edited.
fn with_tampered_garbler_labels(edit: impl Fn(&mut Vec<u8>) + Clone) -> Out {
    let (c, key, pt, _) = aes();
    let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], Mode::Malicious, random_sid().unwrap());
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    // P1 → P2: 0 its nonce, 1 job header, 2 sealed seed, 3 labels.
    let g = Tamper::new(g, move |to: PartyId, i, m: &mut Vec<u8>| {
        if to == PEERS.evaluator && i == 3 {
            edit(m)
        }
    });
    let mut machine = local::enclave().unwrap();
    let enclave = async move {
        let r = driver::enclave_party(&x, &PEERS, &mut machine, &local::attest).await;
        drop(x);
        r
    };
    run(g, e, enclave, &job, c, &key, &pt).1
}

#[test]
fn garbage_labels_from_the_garbler_fail_the_matching_check() {
    // Labels message: 128 x1 labels, 128 x2¹ labels, τ.
    let out = with_tampered_garbler_labels(|m| m[16 * 128 + 16 * 5 + 1] ^= 2);
    assert_eq!(check_of(&out), Check::GarblerShareLabels);
    let out = with_tampered_garbler_labels(|m| m[16 * 9] ^= 0x80);
    assert_eq!(check_of(&out), Check::GarblerInputLabels);
    let out = with_tampered_garbler_labels(|m| {
        let n = m.len();
        m[n - 1] ^= 1
    });
    assert_eq!(check_of(&out), Check::GcTau);
    assert_eq!(Check::GarblerShareLabels.suspect(), "garbler");
}

#[test]
fn a_garbler_sending_the_label_of_the_other_x2_share_value_is_caught() {
    // A deliberately deviating garbler: honest in everything but one x2¹ bit, so the label it sends
    // is a *valid* label of that wire, only for the wrong value.
    let (c, key, pt, _) = aes();
    let bin = c.to_binary();
    let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], Mode::Malicious, random_sid().unwrap());
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let mut machine = local::enclave().unwrap();
    let pol = local::policy();
    let job_bytes = job.encode();
    let (job, bin) = (&job, &bin);
    let (a, b, _) = run_local(async {
        join!(
            async move {
                let mut prg = Prg::from_entropy().unwrap();
                let nonce = [42u8; 32];
                g.send(PEERS.evaluator, nonce.to_vec()).await?;
                let ev = g.recv(PEERS.evaluator).await?;
                let (pk, _) = webmpc_teleport::evidence::verify(&ev[1..], &pol, webmpc_teleport::evidence::Verifier::Garbler, &nonce)?;
                let mut agreed = job_bytes.clone();
                agreed.push(0);
                g.send(PEERS.evaluator, agreed).await?;
                g.recv(PEERS.evaluator).await?;
                let mut x2_1 = webmpc_teleport::unpack_bits(&g.recv(PEERS.evaluator).await?, 128, "x2¹")?;
                let seed = prg.next_block();
                let sealed = webmpc_teleport::seal::seal(Role::Garbler, &pk, &job_bytes, &seed.0, [5; 32])?;
                g.send(PEERS.evaluator, frames::garbler_job(&job_bytes, &sealed)).await?;
                x2_1[17] = !x2_1[17];
                let labels = gc::garbler_labels(seed, job, bin, &key, &x2_1)?;
                g.send(PEERS.evaluator, labels.encode()).await?;
                drop(g);
                Ok::<(), TeleportError>(())
            },
            async move {
                let r = evaluator(&e, job, bin, &pt, &[false], &mut Prg::from_entropy().unwrap()).await;
                drop(e);
                r
            },
            async move {
                let r = driver::enclave_party(&x, &PEERS, &mut machine, &local::attest).await;
                drop(x);
                r
            }
        )
    })
    .unwrap();
    a.unwrap();
    assert_eq!(check_of(&b), Check::GarblerShareLabels);
}

#[test]
fn honest_runs_pass_every_check() {
    let (out, want) = with_tampered_enclave(Mode::Malicious, |_, _| {});
    assert_eq!(out_hex(&out.unwrap()), want);
    let out = with_tampered_garbler_labels(|_| {});
    assert_eq!(out_hex(&out.unwrap()), aes().3);
}

/// AES with the garbler learning the output too, and the evaluator's report to it edited.
fn garbler_output_with(mode: Mode, edit: impl Fn(&mut Vec<u8>) + Clone) -> (GarblerOut, Out, String) {
    let (c, key, pt, want) = aes();
    let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], mode, random_sid().unwrap());
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    // P2 → P1: 0 the relayed evidence, 1 job header, 2 x2¹, 3 the report of P1's outputs.
    let e = Tamper::new(e, move |to: PartyId, i, m: &mut Vec<u8>| {
        if to == PEERS.garbler && i == 3 {
            edit(m)
        }
    });
    let mut machine = local::enclave().unwrap();
    let enclave = async move {
        let r = driver::enclave_party(&x, &PEERS, &mut machine, &local::attest).await;
        drop(x);
        r
    };
    let (a, b) = run_revealing(g, e, enclave, &job, c, &key, &pt, &[true]);
    (a, b, want)
}

#[test]
fn the_garbler_gets_its_output_and_catches_a_forged_output_label() {
    for mode in MODES {
        let (g, e, want) = garbler_output_with(mode, |_| {});
        assert_eq!(out_hex(&g.unwrap().into_iter().map(Option::unwrap).collect::<Vec<_>>()), want);
        assert_eq!(out_hex(&e.unwrap()), want);
    }
    // Malicious mode: the report is 128 output labels; a changed label is no label of its wire.
    let (g, e, want) = garbler_output_with(Mode::Malicious, |m| {
        assert_eq!(m.len(), 16 * 128);
        m[16 * 40 + 3] ^= 1;
    });
    assert_eq!(out_hex(&e.unwrap()), want, "the evaluator's own output is right");
    let err = g.unwrap_err();
    assert_eq!(err, TeleportError::CheckFailed(Check::EvaluatorOutputLabels));
    assert_eq!(Check::EvaluatorOutputLabels.suspect(), "evaluator");
    // Swapping two labels moves valid labels onto wires they do not belong to: caught as well.
    let (g, ..) = garbler_output_with(Mode::Malicious, |m| {
        let (a, b) = m.split_at_mut(16);
        a.swap_with_slice(&mut b[..16]);
    });
    assert_eq!(g.unwrap_err(), TeleportError::CheckFailed(Check::EvaluatorOutputLabels));
    // Semi-honest mode: the report is the bits themselves, and a changed bit goes unnoticed.
    let (g, _, want) = garbler_output_with(Mode::SemiHonest, |m| m[0] ^= 1);
    assert_ne!(out_hex(&g.unwrap().into_iter().map(Option::unwrap).collect::<Vec<_>>()), want);
}
