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
        let mut g = Garbler::new(delta, c.wires, 9).unwrap();
        let mut e = Evaluator::new(c.wires, 9).unwrap();
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

/// The 63-byte circuit of issue 10: 2^27 + 1 wires, two 2^26-bit inputs, two 1-bit outputs, an AND
/// and a constant. Valid in every respect but size; before the cap, garbling it allocated 2 GiB
/// of labels (a trap on wasm32).
fn huge_63_byte_circuit() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(b"WMPC\x01\x00\x00\x00");
    b.extend_from_slice(&((1u32 << 27) + 1).to_le_bytes());
    b.extend_from_slice(&2u64.to_le_bytes());
    for w in [2u32, 1 << 26, 1 << 26, 2, 1, 1] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    b.push(1); // AND 0, 2^26 -> 2^27
    for w in [0u32, 1 << 26, 1 << 27] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    b.extend_from_slice(&[3, 1]); // CONST 1 -> 2^27 - 1 (overwrites an input wire)
    b.extend_from_slice(&((1u32 << 27) - 1).to_le_bytes());
    assert_eq!(b.len(), 63);
    b
}

/// A source whose shape is whatever the test says and which has no gates: what a buggy or
/// hostile `GateSource` implementation can hand the protocol.
struct ShapeOnly(webmpc_garble::Shape);

impl webmpc_garble::GateSource for ShapeOnly {
    fn shape(&self) -> &webmpc_garble::Shape {
        &self.0
    }
    async fn next_chunk(&mut self, _max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError> {
        out.clear();
        Ok(())
    }
}

/// Runs both roles on `shape` after a completed setup; returns both results and the bytes each
/// party sent during the run.
fn run_shape(
    shape: webmpc_garble::Shape,
    owners: &[Owner],
    reveal: &[Reveal],
) -> [(Result<Outputs, YaoError>, u64); 2] {
    let (a, b) = pair();
    let sid = SessionId::random().unwrap();
    let (g, e) = block_on(async { join!(YaoGarbler::setup(&a, 1, &sid), YaoEvaluator::setup(&b, 0, &sid)) });
    let (mut g, mut e) = (g.unwrap(), e.unwrap());
    let (sa, sb) = (a.sent_bytes(), b.sent_bytes());
    let (mut s1, mut s2) = (ShapeOnly(shape.clone()), ShapeOnly(shape));
    let (rg, re) = block_on(async {
        join!(g.run(&mut s1, owners, reveal, &[], |_| {}), e.run(&mut s2, owners, reveal, &[], |_| {}))
    });
    [(rg, a.sent_bytes() - sa), (re, b.sent_bytes() - sb)]
}

#[test]
fn a_small_circuit_with_too_many_wires_is_refused_everywhere_before_any_allocation() {
    let bytes = huge_63_byte_circuit();
    let err = Circuit::from_binary(&bytes).unwrap_err();
    assert_eq!(err.code(), "CIRCUIT_TOO_LARGE");
    let mut s = webmpc_circuit::GateStream::new(&bytes, &webmpc_circuit::stream_limits());
    assert_eq!(s.as_mut().err().unwrap().code(), "CIRCUIT_TOO_LARGE");
    // The same circuit built in memory, past every parser.
    let c = Circuit {
        wires: (1 << 27) + 1,
        inputs: vec![1 << 26, 1 << 26],
        outputs: vec![1, 1],
        gates: vec![Gate::And { a: 0, b: 1 << 26, out: 1 << 27 }, Gate::Const { value: true, out: (1 << 27) - 1 }],
    };
    assert_eq!(c.validate().unwrap_err().code(), "CIRCUIT_TOO_LARGE");
    assert_eq!(PreparedCircuit::new(c.clone()).unwrap_err().code(), "CIRCUIT_TOO_LARGE");
    let d = Block::from_u128(3);
    assert_eq!(Garbler::new(d, c.wires, 1).err().unwrap().code(), "CIRCUIT_TOO_LARGE");
    assert_eq!(Evaluator::new(c.wires, 1).err().unwrap().code(), "CIRCUIT_TOO_LARGE");
    assert_eq!(Garbler::new(d, u32::MAX, 1).err().unwrap().code(), "CIRCUIT_TOO_LARGE");
    // And handed to both roles by a source that never validated it: refused before any message.
    let shape = webmpc_garble::Shape { wires: c.wires, inputs: c.inputs, outputs: c.outputs, gates: 2, hash: [0; 32] };
    let owners = [Owner::Garbler, Owner::Evaluator];
    for (role, (result, sent)) in ["garbler", "evaluator"].iter().zip(run_shape(shape, &owners, &[Reveal::Both; 2])) {
        assert_eq!(result.unwrap_err().code(), "CIRCUIT_TOO_LARGE", "{role}");
        assert_eq!(sent, 0, "{role} sent nothing");
    }
}

#[test]
fn shapes_whose_counts_overflow_are_typed_errors_not_panics() {
    // Widths that wrap a u32 sum, or exceed the wire count: the test profile keeps overflow checks
    // on, so unchecked arithmetic would panic here.
    let cases = [
        (10u32, vec![u32::MAX, 2], vec![1]),
        (10, vec![4], vec![u32::MAX, 2]),
        (10, vec![11], vec![1]),
        (10, vec![1], vec![11]),
        (u32::MAX, vec![1], vec![1]),
    ];
    for (wires, inputs, outputs) in cases {
        let owners = vec![Owner::Garbler; inputs.len()];
        let reveal = vec![Reveal::Both; outputs.len()];
        let shape = webmpc_garble::Shape { wires, inputs, outputs, gates: 0, hash: [0; 32] };
        for (result, sent) in run_shape(shape.clone(), &owners, &reveal) {
            let code = result.unwrap_err().code();
            assert!(code == "MALFORMED_CIRCUIT" || code == "CIRCUIT_TOO_LARGE", "{shape:?}: {code}");
            assert_eq!(sent, 0);
        }
    }
}

#[test]
fn an_even_delta_is_refused_in_every_build() {
    // A release build used to accept it (the check was a debug_assert) and garble wrong outputs.
    for d in [0u128, 2, 0xffff_ffff_ffff_ffff_ffff_ffff_ffff_fffe] {
        let err = Garbler::new(Block::from_u128(d), 10, 1).err().unwrap();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert_eq!(err, webmpc_garble::GarbleError::EvenDelta);
    }
    assert!(Garbler::new(Block::from_u128(1), 10, 1).is_ok());
}

#[test]
fn a_failed_run_poisons_both_sessions_so_delta_is_never_reused_after_an_abort() {
    let add = load("adder64.txt");
    let sub = load("sub64.txt");
    let (pa, ps) = (prepare(&add), prepare(&sub));
    let (a, b) = pair();
    let sid = SessionId::random().unwrap();
    let (g, e) = block_on(async { join!(YaoGarbler::setup(&a, 1, &sid), YaoEvaluator::setup(&b, 0, &sid)) });
    let (mut g, mut e) = (g.unwrap(), e.unwrap());
    let owners = [Owner::Garbler, Owner::Evaluator];
    let zero = vec![vec![false; 64]];
    let run = |g: &mut YaoGarbler<_>, e: &mut YaoEvaluator<_>, gc: &PreparedCircuit, ec: &PreparedCircuit| {
        let (mut gs, mut es) = (gc.source(), ec.source());
        block_on(async {
            join!(
                g.run(&mut gs, &owners, &[Reveal::Both], &zero, |_| {}),
                e.run(&mut es, &owners, &[Reveal::Both], &zero, |_| {})
            )
        })
    };
    // A healthy run, then one the parties disagree on: both abort.
    let (x, y) = run(&mut g, &mut e, &pa, &pa);
    assert_eq!((x.unwrap(), y.unwrap()), (vec![Some(vec![false; 64])], vec![Some(vec![false; 64])]));
    let (x, y) = run(&mut g, &mut e, &pa, &ps);
    assert_eq!((x.unwrap_err().code(), y.unwrap_err().code()), ("PARAMETER_MISMATCH", "PARAMETER_MISMATCH"));
    // From then on both refuse, before sending anything.
    let (sa, sb) = (a.sent_bytes(), b.sent_bytes());
    let (x, y) = run(&mut g, &mut e, &pa, &pa);
    assert_eq!((x.unwrap_err().code(), y.unwrap_err().code()), ("INVALID_ARGUMENT", "INVALID_ARGUMENT"));
    assert_eq!((a.sent_bytes(), b.sent_bytes()), (sa, sb));
}

#[test]
fn garbler_inputs_larger_than_one_message_arrive_in_several() {
    // 70,000 garbler input bits: two label messages. Output: parity of x, XORed with y.
    let n = 70_000u32;
    let mut gates = vec![Gate::Xor { a: 0, b: n, out: n + 1 }];
    for i in 1..n {
        gates.push(Gate::Xor { a: i, b: n + i, out: n + 1 + i });
    }
    let c = Circuit { wires: 2 * n + 1, inputs: vec![n, 1], outputs: vec![1], gates };
    let x: Vec<bool> = (0..n).map(|i| (i * 7 + i / 3) % 5 == 0).collect();
    for y in [false, true] {
        let want = c.evaluate(&[x.clone(), vec![y]]).unwrap();
        let (g, e) =
            yao(&c, &[Owner::Garbler, Owner::Evaluator], &[Reveal::Both], std::slice::from_ref(&x), &[vec![y]]);
        assert_eq!((g[0].as_ref().unwrap(), e[0].as_ref().unwrap()), (&want[0], &want[0]));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// A compiled chunk garbles to the same tables and labels, and evaluates to the same labels,
    /// as the chunk garbled with the schedule it was compiled from (the Yao protocol runs
    /// prepared circuits compiled, everything else planned per chunk); circuits that overwrite
    /// wires (compacted) included.
    #[test]
    fn compiled_chunks_garble_and_evaluate_exactly_like_planned_ones(seed in proptest::collection::vec(any::<u8>(), 1..300), x in any::<u16>(), compact in any::<bool>()) {
        use webmpc_garble::halfgates::{plan_chunk, CompiledChunk};
        let mut c = random_circuit(&seed, 16);
        if compact {
            c = c.compact();
        }
        let delta = Block::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        let setup = || {
            let mut g = Garbler::new(delta, c.wires, 5).unwrap();
            let mut e = Evaluator::new(c.wires, 5).unwrap();
            for w in 0..16u32 {
                let zero = Block::from_u128(0x9e37_79b9_7f4a_7c15_u128.wrapping_mul(w as u128 + 3) << 5);
                g.set_label(w, zero);
                e.set_label(w, if (x >> w) & 1 == 1 { zero ^ delta } else { zero });
            }
            (g, e)
        };
        let (mut g1, mut e1) = setup();
        let (mut g2, mut e2) = setup();
        let mut base = 0u64;
        for chunk in c.gates.chunks(11) {
            let order = plan_chunk(c.wires, chunk).unwrap();
            let compiled = CompiledChunk::from_plan(c.wires, chunk, &order).unwrap();
            let (mut t1, mut t2) = (Vec::new(), Vec::new());
            g1.garble_chunk_planned(chunk, base, Some(&order), &mut t1).unwrap();
            g2.garble_compiled(&compiled, base, &mut t2).unwrap();
            prop_assert_eq!(&t1, &t2);
            prop_assert_eq!(compiled.table_bytes(), t1.len());
            e1.evaluate_chunk_planned(chunk, base, Some(&order), &t1).unwrap();
            e2.evaluate_compiled(&compiled, base, &t2).unwrap();
            // Truncated tables are refused by the compiled path too (before touching a label).
            if !t2.is_empty() {
                let mut scratch = Evaluator::new(c.wires, 5).unwrap();
                let err = scratch.evaluate_compiled(&compiled, base, &t2[..t2.len() - 16]).unwrap_err();
                prop_assert_eq!(err.code(), "MALFORMED_MESSAGE");
            }
            base += chunk.len() as u64;
        }
        for w in 0..c.wires {
            prop_assert_eq!(g1.label(w), g2.label(w));
            prop_assert_eq!(e1.label(w), e2.label(w));
        }
    }
}
