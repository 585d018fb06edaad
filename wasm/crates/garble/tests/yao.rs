//! Garbling and Yao 2PC against the plaintext evaluator: the shared reference circuits with their
//! known answers, random circuits with every gate kind, private outputs, and bad peers.

use futures::executor::block_on;
use futures::join;
use proptest::prelude::*;
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits, Circuit, Gate};
use webmpc_core::channel::memory::{pair, Tamper};
use webmpc_core::channel::Channel;
use webmpc_core::Block;
use webmpc_garble::{Evaluator, Garbler, Outputs, Owner, PreparedCircuit, Reveal, YaoError, YaoEvaluator, YaoGarbler};
use webmpc_ot::SessionId;

fn load(name: &str) -> Circuit {
    let path = webmpc_circuit::testing::reference_dir().join(name);
    let text = std::fs::read_to_string(path).expect("reference circuit");
    Circuit::parse_bristol(&text).expect("parses")
}

fn prepare(c: &Circuit) -> PreparedCircuit {
    PreparedCircuit::new(c.clone()).expect("valid circuit")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// Runs one Yao execution; the garbler is party 0, the evaluator party 1.
fn yao_with<C0: Channel, C1: Channel>(
    a: C0,
    b: C1,
    circuits: (&Circuit, &Circuit),
    owners: &[Owner],
    reveal: &[Reveal],
    inputs: (&[Vec<bool>], &[Vec<bool>]),
) -> (Result<Outputs, YaoError>, Result<Outputs, YaoError>) {
    let sid = SessionId::random().unwrap();
    let (pg, pe) = (prepare(circuits.0), prepare(circuits.1));
    block_on(async {
        join!(
            async {
                let mut g = YaoGarbler::setup(a, 1, &sid).await?;
                g.run(&mut pg.source(), owners, reveal, inputs.0, |_| {}).await
            },
            async {
                let mut e = YaoEvaluator::setup(b, 0, &sid).await?;
                e.run(&mut pe.source(), owners, reveal, inputs.1, |_| {}).await
            }
        )
    })
}

fn yao(c: &Circuit, owners: &[Owner], reveal: &[Reveal], g_in: &[Vec<bool>], e_in: &[Vec<bool>]) -> (Outputs, Outputs) {
    let (a, b) = pair();
    let (g, e) = yao_with(a, b, (c, c), owners, reveal, (g_in, e_in));
    (g.unwrap(), e.unwrap())
}

#[test]
fn aes_128_fips_vector_in_2pc() {
    let c = load("aes_128.txt");
    let key = bits_from_bytes_be(&unhex("000102030405060708090a0b0c0d0e0f"), 128);
    let pt = bits_from_bytes_be(&unhex("00112233445566778899aabbccddeeff"), 128);
    let (g, e) = yao(&c, &[Owner::Garbler, Owner::Evaluator], &[Reveal::Both], &[key], &[pt]);
    let want = unhex("69c4e0d86a7b0430d8cdb78070b4c55a");
    assert_eq!(bytes_be_from_bits(g[0].as_ref().unwrap()), want);
    assert_eq!(bytes_be_from_bits(e[0].as_ref().unwrap()), want);
}

#[test]
fn compacted_circuits_that_overwrite_wires_garble_correctly() {
    // compact() reuses dead wires, so gates overwrite wires other gates read: the garbling
    // schedule must respect write-after-read and write-after-write order, not just data flow.
    let c = load("aes_128.txt").compact();
    assert!(c.wires < 2000, "compaction reuses wires ({} wires)", c.wires);
    let key = bits_from_bytes_be(&unhex("000102030405060708090a0b0c0d0e0f"), 128);
    let pt = bits_from_bytes_be(&unhex("00112233445566778899aabbccddeeff"), 128);
    let (_, e) = yao(&c, &[Owner::Garbler, Owner::Evaluator], &[Reveal::Evaluator], &[key], &[pt]);
    assert_eq!(bytes_be_from_bits(e[0].as_ref().unwrap()), unhex("69c4e0d86a7b0430d8cdb78070b4c55a"));
    let c = load("sha256.txt").compact();
    let mut block = vec![0u8; 64];
    block[..3].copy_from_slice(b"abc");
    block[3] = 0x80;
    block[63] = 0x18;
    let iv = unhex("6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19");
    let (_, e) = yao(
        &c,
        &[Owner::Evaluator, Owner::Garbler],
        &[Reveal::Evaluator],
        &[bits_from_bytes_be(&iv, 256)],
        &[bits_from_bytes_be(&block, 512)],
    );
    assert_eq!(
        bytes_be_from_bits(e[0].as_ref().unwrap()),
        unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    );
}

#[test]
fn sha256_of_abc_in_2pc_with_private_output() {
    let c = load("sha256.txt");
    let mut block = vec![0u8; 64];
    block[..3].copy_from_slice(b"abc");
    block[3] = 0x80;
    block[63] = 0x18;
    let iv = unhex("6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19");
    let (g, e) = yao(
        &c,
        &[Owner::Evaluator, Owner::Garbler],
        &[Reveal::Evaluator],
        &[bits_from_bytes_be(&iv, 256)],
        &[bits_from_bytes_be(&block, 512)],
    );
    assert_eq!(g[0], None, "the garbler learns nothing of an evaluator-only output");
    assert_eq!(
        bytes_be_from_bits(e[0].as_ref().unwrap()),
        unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    );
}

#[test]
fn arithmetic_circuits_match_u64_arithmetic() {
    let u = |x: u64| (0..64).map(|i| (x >> i) & 1 == 1).collect::<Vec<bool>>();
    let back = |b: &[bool]| b.iter().enumerate().fold(0u64, |acc, (i, &x)| acc | (x as u64) << i);
    type U64Op = fn(u64, u64) -> u64;
    let cases: [(&str, U64Op); 3] =
        [("adder64.txt", u64::wrapping_add), ("sub64.txt", u64::wrapping_sub), ("mult64.txt", u64::wrapping_mul)];
    for (name, f) in cases {
        let c = load(name);
        for (x, y) in [(0u64, 0u64), (u64::MAX, 1), (0x1234_5678_9abc_def0, 0xfedc_ba98_7654_3210), (7, u64::MAX)] {
            let (g, e) = yao(&c, &[Owner::Garbler, Owner::Evaluator], &[Reveal::Garbler], &[u(x)], &[u(y)]);
            assert_eq!(back(g[0].as_ref().unwrap()), f(x, y), "{name}({x}, {y})");
            assert_eq!(e[0], None);
        }
    }
    // One-input circuits: both inputs owned by one party is allowed.
    let c = load("zero_equal.txt");
    for x in [0u64, 1, 1 << 63] {
        let (_, e) = yao(&c, &[Owner::Evaluator], &[Reveal::Evaluator], &[], &[u(x)]);
        assert_eq!(e[0].as_ref().unwrap()[0], x == 0);
    }
    let c = load("neg64.txt");
    let (g, _) = yao(&c, &[Owner::Garbler], &[Reveal::Both], &[u(5)], &[]);
    assert_eq!(back(g[0].as_ref().unwrap()), 5u64.wrapping_neg());
}

/// A random circuit over `n_in` input bits using every gate kind, outputs the last 8 wires.
fn random_circuit(seed: &[u8], n_in: u32) -> Circuit {
    let mut gates = Vec::new();
    let mut wires = n_in;
    for (k, &byte) in seed.iter().enumerate() {
        let pick = |x: u32| x % wires;
        let (a, b) = (pick(byte as u32 * 31 + k as u32), pick(byte as u32 * 7 + 3 * k as u32 + 1));
        let out = wires;
        gates.push(match byte % 5 {
            0 | 1 => Gate::And { a, b, out },
            2 => Gate::Xor { a, b, out },
            3 => Gate::Inv { a, out },
            _ => {
                if byte & 0x80 == 0 {
                    Gate::Const { value: byte & 0x40 != 0, out }
                } else {
                    Gate::Copy { a, out }
                }
            }
        });
        wires += 1;
    }
    // Outputs must be the last wires: copy 8 wires to the end.
    for i in 0..8 {
        gates.push(Gate::Copy { a: wires - 8 + i, out: wires + i });
    }
    Circuit { wires: wires + 8, inputs: vec![n_in / 2, n_in - n_in / 2], outputs: vec![8], gates }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn garbling_matches_plaintext_on_random_circuits(seed in proptest::collection::vec(any::<u8>(), 1..400), x in any::<u64>()) {
        let c = random_circuit(&seed, 16);
        let bits: Vec<bool> = (0..16).map(|i| (x >> i) & 1 == 1).collect();
        let (i0, i1) = (bits[..8].to_vec(), bits[8..].to_vec());
        let want = c.evaluate(&[i0.clone(), i1.clone()]).unwrap();
        // Pure garbling with a tiny chunk size to cross chunk boundaries.
        let delta = Block::from_u128(0x5555_0000_1111_2222_3333_4444_5555_6667);
        let mut g = Garbler::new(delta, c.wires, 9);
        let mut e = Evaluator::new(c.wires, 9);
        for w in 0..16u32 {
            let zero = Block::from_u128(0x9e37_79b9_7f4a_7c15_u128.wrapping_mul(w as u128 + 1) << 3);
            g.set_label(w, zero);
            e.set_label(w, if bits[w as usize] { zero ^ delta } else { zero });
        }
        let mut base = 0u64;
        for chunk in c.gates.chunks(7) {
            let mut t = Vec::new();
            g.garble_chunk(chunk, base, &mut t).unwrap();
            e.evaluate_chunk(chunk, base, &t).unwrap();
            base += chunk.len() as u64;
        }
        let got: Vec<bool> = c.output_wires(0).map(|w| e.label(w).lsb() ^ g.label(w).lsb()).collect();
        prop_assert_eq!(&got, &want[0]);
        // And the full protocol.
        let (_, out) = yao(&c, &[Owner::Garbler, Owner::Evaluator], &[Reveal::Evaluator], &[i0], &[i1]);
        prop_assert_eq!(out[0].as_ref().unwrap(), &want[0]);
    }
}

#[test]
fn mismatched_circuits_abort_before_any_input_dependent_message() {
    let add = load("adder64.txt");
    let sub = load("sub64.txt");
    let (a, b) = pair();
    let zero = vec![false; 64];
    let (g, e) = yao_with(
        &a,
        &b,
        (&add, &sub),
        &[Owner::Garbler, Owner::Evaluator],
        &[Reveal::Both],
        (std::slice::from_ref(&zero), std::slice::from_ref(&zero)),
    );
    assert_eq!(g.unwrap_err(), YaoError::ParameterMismatch("circuit (content hash)"));
    assert_eq!(e.unwrap_err().code(), "PARAMETER_MISMATCH");
    // The garbler sent its base-OT message and the agreement, nothing after.
    let agreement = 32 + 8 + 4 + 2 + 4 + 1;
    assert_eq!(a.sent_bytes(), 128 * 64 + agreement as u64);
}

#[test]
fn truncated_or_padded_tables_are_typed_errors() {
    let c = load("adder64.txt");
    let zero = vec![false; 64];
    // Garbler messages: 0 base OT, 1 agreement, 2 Δ-OT seed, 3 active labels, 4 tables.
    for edit in [|m: &mut Vec<u8>| m.truncate(m.len() - 1), |m: &mut Vec<u8>| m.push(0)] {
        let (a, b) = pair();
        let a = Tamper::new(a, move |_, i, m: &mut Vec<u8>| {
            if i == 4 {
                edit(m)
            }
        });
        let (_, e) = yao_with(
            a,
            b,
            (&c, &c),
            &[Owner::Garbler, Owner::Evaluator],
            &[Reveal::Evaluator],
            (std::slice::from_ref(&zero), std::slice::from_ref(&zero)),
        );
        assert_eq!(e.unwrap_err().code(), "MALFORMED_MESSAGE");
    }
}

#[test]
fn wrong_input_sizes_are_argument_errors() {
    let c = load("adder64.txt");
    let (a, b) = pair();
    let (g, e) = yao_with(
        a,
        b,
        (&c, &c),
        &[Owner::Garbler, Owner::Evaluator],
        &[Reveal::Both],
        (&[vec![false; 63]], &[vec![false; 64]]),
    );
    assert_eq!(g.unwrap_err().code(), "INVALID_ARGUMENT");
    // The garbler stopped before the agreement; its peer sees it leave.
    assert_eq!(e.unwrap_err().code(), "PEER_DISCONNECTED");
}
