//! The online protocol against plaintext evaluation: every reference circuit for 2, 3 and 4
//! parties with every party as evaluator, random circuits, Vickrey auctions for 3–5 bidders,
//! private outputs, compacted (wire-reusing) circuits, every phase split, several runs in one
//! session, and the checks on public parameters and arguments.
//!
//! Every test is generic over the preprocessor and runs on both the trusted dealer
//! (`ideal_fpre::…`) and the real F_Pre (`real_fpre::…`); the property test runs fewer cases on
//! the real one (each case sets up base OTs between every pair).

use crate::common;

use common::*;
use proptest::prelude::*;
use webmpc_authgc::online::{AuthGcParty, Options, Recipients, Roles, SharedChannel};
use webmpc_authgc::AuthGcError;
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits, Circuit, Gate};
use webmpc_core::channel::memory::{network, run_local};
use webmpc_core::channel::Channel;

const MODES: [Mode; 3] = [Mode::Interleaved, Mode::Phased, Mode::Pooled];

/// Inputs for a reference circuit: deterministic pseudo-random values of the right widths.
fn values_for(widths: &[u32], salt: u64) -> Vec<Vec<bool>> {
    widths
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let mut x = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(salt + i as u64 + 1);
            (0..w)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x & 1 == 1
                })
                .collect()
        })
        .collect()
}

/// Every reference circuit for `n` parties: the evaluator rotates over the circuits so that each
/// party evaluates at least once, the inputs' owners rotate too, and the modes alternate.
fn reference_circuits_for<S: PreSetup>(n: usize) {
    let files = ["adder64.txt", "sub64.txt", "mult64.txt", "neg64.txt", "zero_equal.txt", "aes_128.txt", "sha256.txt"];
    for (k, name) in files.iter().enumerate() {
        let c = reference(name);
        let widths = c.circuit().inputs.clone();
        let evaluator = (k + n - 1) % n;
        let owners: Vec<usize> = (0..widths.len()).map(|i| (k + i) % n).collect();
        let values = values_for(&widths, k as u64);
        let job = Job {
            circuit: c,
            roles: roles_all(evaluator, &owners, c.circuit().outputs.len()),
            inputs: by_owner(&owners, &values, n),
            mode: MODES[k % 3],
            options: Options::default(),
        };
        check_job::<S>(&job);
    }
}

fn reference_circuits_with_2_parties<S: PreSetup>() {
    reference_circuits_for::<S>(2);
}

fn reference_circuits_with_3_parties<S: PreSetup>() {
    reference_circuits_for::<S>(3);
}

fn reference_circuits_with_4_parties<S: PreSetup>() {
    reference_circuits_for::<S>(4);
}

fn aes_and_sha256_known_answers<S: PreSetup>() {
    let aes = reference("aes_128.txt");
    let key = bits_from_bytes_be(&unhex("000102030405060708090a0b0c0d0e0f"), 128);
    let pt = bits_from_bytes_be(&unhex("00112233445566778899aabbccddeeff"), 128);
    let job = Job {
        circuit: aes,
        roles: roles_all(2, &[0, 1], 1),
        inputs: vec![vec![key], vec![pt], vec![]],
        mode: Mode::Phased,
        options: Options::default(),
    };
    for r in check_job::<S>(&job) {
        let out = r.outputs.unwrap();
        assert_eq!(bytes_be_from_bits(out[0].as_ref().unwrap()), unhex("69c4e0d86a7b0430d8cdb78070b4c55a"));
    }
    let sha = reference("sha256.txt");
    let mut block = vec![0u8; 64];
    block[..3].copy_from_slice(b"abc");
    block[3] = 0x80;
    block[63] = 0x18;
    let iv = unhex("6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19");
    // Private output: only party 1 (a garbler) learns the digest.
    let job = Job {
        circuit: sha,
        roles: Roles { evaluator: 0, owners: vec![0, 1], outputs: vec![Recipients::only(&[1])] },
        inputs: vec![vec![bits_from_bytes_be(&block, 512)], vec![bits_from_bytes_be(&iv, 256)]],
        mode: Mode::Interleaved,
        options: Options::default(),
    };
    let results = check_job::<S>(&job);
    let digest = results[1].outputs.as_ref().unwrap()[0].as_ref().unwrap();
    assert_eq!(bytes_be_from_bits(digest), unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    assert_eq!(results[0].outputs.as_ref().unwrap()[0], None, "the evaluator learns nothing of a private output");
}

fn compacted_circuits_reuse_wires_in_every_mode<S: PreSetup>() {
    let aes = reference("aes_128.txt").circuit().compact();
    assert!(aes.wires < 2000, "compaction reuses wires ({} wires)", aes.wires);
    let prepared = webmpc_authgc::online::PreparedCircuit::new(aes).unwrap();
    let values = values_for(&[128, 128], 99);
    for (k, mode) in MODES.into_iter().enumerate() {
        let job = Job {
            circuit: &prepared,
            roles: roles_all(k % 3, &[1, 2], 1),
            inputs: by_owner(&[1, 2], &values, 3),
            mode,
            // Small chunks: wires written in one chunk are overwritten in a later one.
            options: Options { chunk_gates: 3000, batch: 2048 },
        };
        let results = check_job::<S>(&job);
        let stats = results[0].stats.as_ref().unwrap();
        assert_eq!(stats.wire_state, prepared.circuit().wires as usize);
        assert!(stats.chunks > 5, "{stats:?}");
    }
}

fn private_outputs_reach_exactly_their_recipients<S: PreSetup>() {
    let c = reference("mult64.txt");
    let values = vec![u64_bits(0xdead_beef_1234_5678, 64), u64_bits(0x0fed_cba9_8765_4321, 64)];
    for n in [2, 3, 4] {
        for e in 0..n {
            // Output to one garbler only (or to the evaluator when n = 2 and e = 1).
            let to = (e + 1) % n;
            let job = Job {
                circuit: c,
                roles: Roles { evaluator: e, owners: vec![0, n - 1], outputs: vec![Recipients::only(&[to])] },
                inputs: by_owner(&[0, n - 1], &values, n),
                mode: MODES[(n + e) % 3],
                options: Options::default(),
            };
            let results = check_job::<S>(&job);
            let got = results[to].outputs.as_ref().unwrap()[0].as_ref().unwrap();
            assert_eq!(bits_u64(got), 0xdead_beef_1234_5678u64.wrapping_mul(0x0fed_cba9_8765_4321));
        }
    }
}

/// Circuits without any input (constants only): every garbler still garbles its rows, in every
/// mode (a garbler once took an empty set of input labels for being the evaluator).
fn circuits_without_inputs<S: PreSetup>() {
    let with_and = Circuit {
        wires: 4,
        inputs: vec![],
        outputs: vec![1],
        gates: vec![Gate::Const { value: true, out: 0 }, Gate::Const { value: true, out: 1 }, Gate::And { a: 0, b: 1, out: 2 }, Gate::Copy { a: 2, out: 3 }],
    };
    let without_and = Circuit { wires: 2, inputs: vec![], outputs: vec![1], gates: vec![Gate::Const { value: true, out: 0 }, Gate::Copy { a: 0, out: 1 }] };
    for c in [with_and, without_and] {
        let c = webmpc_authgc::online::PreparedCircuit::new(c).unwrap();
        for (n, mode) in [(2, Mode::Interleaved), (2, Mode::Phased), (3, Mode::Pooled), (3, Mode::Interleaved)] {
            let job = Job { circuit: &c, roles: roles_all(n - 1, &[], 1), inputs: vec![Vec::new(); n], mode, options: Options::default() };
            check_job::<S>(&job);
        }
    }
}

fn vickrey_auctions_for_3_to_5_bidders<S: PreSetup>() {
    for (bidders, bids) in [
        (3usize, vec![17u64, 250, 249]),
        (4, vec![100, 100, 7, 99]),
        (5, vec![3, 60_000, 12, 60_001, 59_999]),
        (5, vec![0, 0, 0, 0, 0]),
    ] {
        let width = 16;
        let c = webmpc_authgc::online::PreparedCircuit::new(vickrey(bidders, width)).unwrap();
        let (winner, second) = vickrey_reference(&bids);
        let owners: Vec<usize> = (0..bidders).collect();
        let values: Vec<Vec<bool>> = bids.iter().map(|&b| u64_bits(b, width as usize)).collect();
        for e in [0, bidders - 1] {
            // Everyone learns the winner; only the winner learns the price it pays.
            let roles = Roles {
                evaluator: e,
                owners: owners.clone(),
                outputs: vec![Recipients::ALL, Recipients::only(&[winner])],
            };
            let job = Job {
                circuit: &c,
                roles,
                inputs: by_owner(&owners, &values, bidders),
                mode: if e == 0 { Mode::Phased } else { Mode::Interleaved },
                options: Options::default(),
            };
            let results = check_job::<S>(&job);
            for (p, r) in results.iter().enumerate() {
                let out = r.outputs.as_ref().unwrap();
                assert_eq!(bits_u64(out[0].as_ref().unwrap()) as usize, winner);
                if p == winner {
                    assert_eq!(bits_u64(out[1].as_ref().unwrap()), second);
                } else {
                    assert_eq!(out[1], None);
                }
            }
        }
    }
}

fn several_runs_in_one_session_with_pooled_material<S: PreSetup>() {
    // One set of parties: preprocess once for two AES runs, prepare and run, run interleaved,
    // then a different circuit: tweaks, pools and run numbers carry over correctly.
    let n = 3;
    let aes = reference("aes_128.txt");
    let adder = reference("adder64.txt");
    let key = bits_from_bytes_be(&unhex("000102030405060708090a0b0c0d0e0f"), 128);
    let pt = bits_from_bytes_be(&unhex("00112233445566778899aabbccddeeff"), 128);
    let want = unhex("69c4e0d86a7b0430d8cdb78070b4c55a");
    let roles = roles_all(1, &[0, 2], 1);
    let mut seed = [0u8; 32];
    webmpc_core::random::fill(&mut seed).unwrap();
    let outs = run_local(futures::future::join_all(network(n).into_iter().map(|ch| {
        let (key, pt, roles) = (key.clone(), pt.clone(), roles.clone());
        async move {
            let me = ch.party();
            let ch = SharedChannel::new(ch);
            let pre = S::setup(ch.clone(), seed).await.unwrap();
            let mut p = AuthGcParty::new(pre, ch, [7; 32], Options::default()).unwrap();
            let mut phases = Vec::new();
            p.preprocess(2 * 6400, 2 * (6400 + 256), |ph, _, _| phases.push(ph)).await.unwrap();
            assert_eq!(p.pooled(), (12_800, 13_312));
            let mine: Vec<Vec<bool>> = match me {
                0 => vec![key],
                2 => vec![pt],
                _ => vec![],
            };
            p.prepare(aes, &roles, |ph, _, _| phases.push(ph)).await.unwrap();
            let a = p.run(&mut aes.source(), &roles, &mine, |ph, _, _| phases.push(ph)).await.unwrap();
            assert!(p.last_stats().phased);
            let b = p.run(&mut aes.source(), &roles, &mine, |_, _, _| {}).await.unwrap();
            assert!(!p.last_stats().phased);
            assert_eq!(p.pooled(), (0, 0), "two AES runs use the pooled material exactly");
            let adder_roles = roles_all(2, &[0, 1], 1);
            let x: Vec<Vec<bool>> = if me < 2 { vec![u64_bits(40 + me as u64, 64)] } else { vec![] };
            let c = p.run(&mut adder.source(), &adder_roles, &x, |_, _, _| {}).await.unwrap();
            (a, b, c, phases)
        }
    })))
    .unwrap();
    for (a, b, c, phases) in outs {
        assert_eq!(bytes_be_from_bits(a[0].as_ref().unwrap()), want);
        assert_eq!(bytes_be_from_bits(b[0].as_ref().unwrap()), want);
        assert_eq!(bits_u64(c[0].as_ref().unwrap()), 81);
        use webmpc_authgc::Phase;
        for ph in [Phase::Independent, Phase::Dependent, Phase::Online] {
            assert!(phases.contains(&ph), "progress reported {ph}");
        }
    }
}

/// A party of a two-party session on `S`'s preprocessing (the same seeds at both parties).
async fn party_of_two<S: PreSetup, C: Channel + 'static>(ch: C) -> AuthGcParty<S::Pre<C>, SharedChannel<C>> {
    let ch = SharedChannel::new(ch);
    let pre = S::setup(ch.clone(), [1; 32]).await.unwrap();
    AuthGcParty::new(pre, ch, [2; 32], Options::default()).unwrap()
}

fn mismatched_public_parameters_abort_before_any_secret_moves<S: PreSetup>() {
    let add = reference("adder64.txt");
    let values = vec![u64_bits(1, 64), u64_bits(2, 64)];
    // Party 1 thinks it is party 0 who evaluates; party 0 thinks it is party 1.
    let n = 2;
    let out = run_local(futures::future::join_all(network(n).into_iter().map(|ch| {
        let values = values.clone();
        async move {
            let me = ch.party();
            let mut p = party_of_two::<S, _>(ch).await;
            let before = p.channel().inner().sent_bytes();
            let roles = roles_all(1 - me, &[0, 1], 1);
            let r = p.run(&mut add.source(), &roles, &[values[me].clone()], |_, _, _| {}).await;
            (r, p.channel().inner().sent_bytes() - before)
        }
    })))
    .unwrap();
    for (r, sent) in out {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "PARAMETER_MISMATCH", "{e}");
        assert_eq!(sent, 64, "only the agreement was sent");
    }
    // Different circuits: named as such.
    let sub = reference("sub64.txt");
    let out = run_local(futures::future::join_all(network(n).into_iter().map(|ch| {
        let values = values.clone();
        async move {
            let me = ch.party();
            let mut p = party_of_two::<S, _>(ch).await;
            let c = if me == 0 { add } else { sub };
            p.run(&mut c.source(), &roles_all(0, &[0, 1], 1), &[values[me].clone()], |_, _, _| {}).await
        }
    })))
    .unwrap();
    for (me, r) in out.into_iter().enumerate() {
        assert_eq!(r.unwrap_err(), AuthGcError::ParameterMismatch { peer: 1 - me, what: "circuit (content hash)" });
    }
    // A prepared run sends its agreement at the head of the input masks' opening. Both parties
    // prepared the adder with party 0 evaluating; party 1 then runs it with itself evaluating, so
    // it runs interleaved (a bare agreement) while party 0 runs the prepared circuit. Both see the
    // mismatch of the agreement, not of a message's length, and no masked input moves: party 0
    // sent its agreement and the opening of party 1's mask shares (64 bits, 32-byte tag digest).
    let out = run_local(futures::future::join_all(network(n).into_iter().map(|ch| {
        let values = values.clone();
        async move {
            let me = ch.party();
            let mut p = party_of_two::<S, _>(ch).await;
            p.prepare(add, &roles_all(0, &[0, 1], 1), |_, _, _| {}).await.unwrap();
            let before = p.channel().inner().sent_bytes();
            let r = p.run(&mut add.source(), &roles_all(me, &[0, 1], 1), &[values[me].clone()], |_, _, _| {}).await;
            (r, p.channel().inner().sent_bytes() - before)
        }
    })))
    .unwrap();
    for (me, (r, sent)) in out.into_iter().enumerate() {
        let what = "roles, options, run or preprocessing state";
        assert_eq!(r.unwrap_err(), AuthGcError::ParameterMismatch { peer: 1 - me, what }, "party {me}");
        assert_eq!(sent, if me == 0 { 64 + 8 + 32 } else { 64 }, "party {me}: the agreement (and the masks' opening) only");
    }
    // Prepare's agreement leads F_Pre's first message (the real F_Pre's aBit run: its first Δ-OT
    // flight; the dealer sends nothing, so there it goes alone). Roles that differ, and circuits
    // that differ (F_Pre's batches then differ in length too), are named by the agreement at both
    // ends, not by a message's length, and each party sent that one message only: the same
    // length at both ends when the batches match, 64 bytes where the agreement went alone.
    let mult = reference("mult64.txt");
    for (theirs, evaluator, what) in
        [(add, 0, "roles, options, run or preprocessing state"), (mult, 1, "circuit (content hash)")]
    {
        let out = run_local(futures::future::join_all(network(n).into_iter().map(|ch| async move {
            let me = ch.party();
            let mut p = party_of_two::<S, _>(ch).await;
            let before = p.channel().inner().sent_bytes();
            let (c, e) = if me == 0 { (add, 1) } else { (theirs, evaluator) };
            let r = p.prepare(c, &roles_all(e, &[0, 1], 1), |_, _, _| {}).await;
            (r, p.channel().inner().sent_bytes() - before)
        })))
        .unwrap();
        for (me, (r, sent)) in out.iter().enumerate() {
            assert_eq!(r.clone().unwrap_err(), AuthGcError::ParameterMismatch { peer: 1 - me, what }, "party {me}, {what}");
            assert!(*sent >= 64, "party {me} sent its agreement");
        }
        if theirs.circuit().gates.len() == add.circuit().gates.len() {
            assert_eq!(out[0].1, out[1].1, "one message each, of one shape ({what})");
        }
    }
}

fn bad_arguments_are_typed_errors_before_any_traffic<S: PreSetup>() {
    let add = reference("adder64.txt");
    let n = 3;
    let cases: Vec<(Roles, Vec<Vec<bool>>, &str)> = vec![
        (roles_all(3, &[0, 1], 1), vec![u64_bits(1, 64)], "evaluator out of range"),
        (roles_all(0, &[0, 5], 1), vec![u64_bits(1, 64)], "owner out of range"),
        (roles_all(0, &[0], 1), vec![u64_bits(1, 64)], "too few owners"),
        (Roles { evaluator: 0, owners: vec![0, 1], outputs: vec![Recipients::only(&[7])] }, vec![u64_bits(1, 64)], "no recipient"),
        (roles_all(0, &[0, 1], 1), vec![], "missing input"),
        (roles_all(0, &[0, 1], 1), vec![vec![true; 63]], "short input"),
    ];
    for (roles, inputs, what) in cases {
        let out = run_local(futures::future::join_all(network(n).into_iter().map(|ch| {
            let (roles, inputs) = (roles.clone(), inputs.clone());
            async move {
                let me = ch.party();
                let ch = SharedChannel::new(ch);
                let pre = S::setup(ch.clone(), [1; 32]).await.unwrap();
                let mut p = AuthGcParty::new(pre, ch, [2; 32], Options::default()).unwrap();
                let before = p.channel().inner().sent_bytes();
                // Only party 0 gets the bad arguments; the others see it leave.
                let (roles, inputs) = if me == 0 {
                    (roles, inputs)
                } else {
                    (roles_all(0, &[0, 1], 1), if me == 1 { vec![u64_bits(1, 64)] } else { vec![] })
                };
                let r = p.run(&mut add.source(), &roles, &inputs, |_, _, _| {}).await;
                (r, p.channel().inner().sent_bytes() - before)
            }
        })))
        .unwrap();
        let (r0, sent0) = &out[0];
        assert_eq!(r0.as_ref().unwrap_err().code(), "INVALID_ARGUMENT", "{what}");
        assert_eq!(*sent0, 0, "{what}: nothing sent");
        for (r, _) in &out[1..] {
            assert!(r.is_err(), "{what}: the peers abort too");
        }
    }
    // Constructor checks (on the dealer, which needs no network to make).
    let ch = SharedChannel::new(network(2).pop().unwrap());
    let pre = webmpc_authgc::ideal::IdealPreprocessor::new([1; 32], 0, 2).unwrap();
    assert!(AuthGcParty::new(pre, ch, [0; 32], Options::default()).is_err(), "party index mismatch");
    let ch = SharedChannel::new(network(2).pop().unwrap());
    let pre = webmpc_authgc::ideal::IdealPreprocessor::new([1; 32], 1, 2).unwrap();
    assert!(AuthGcParty::new(pre, ch, [0; 32], Options { chunk_gates: 0, batch: 1 }).is_err(), "zero chunk");
}

fn random_circuit_case<S: PreSetup>(
    seed: &[u8],
    n: usize,
    e: usize,
    owner_pick: u64,
    recipients: u64,
    chunk: usize,
    mode: usize,
    x: u64,
) {
    let e = e % n;
    let widths = [5u32, 6, 7];
    let c = webmpc_authgc::online::PreparedCircuit::new(random_circuit(seed, &widths)).unwrap();
    let owners: Vec<usize> = (0..3).map(|i| ((owner_pick >> (8 * i)) as usize) % n).collect();
    let mut recipients = Recipients::from_mask(recipients).mask(n);
    if recipients == 0 {
        recipients = 1 << e;
    }
    let values: Vec<Vec<bool>> = widths
        .iter()
        .scan(x, |acc, &w| {
            let v = u64_bits(*acc, w as usize);
            *acc >>= w;
            Some(v)
        })
        .collect();
    let job = Job {
        circuit: &c,
        roles: Roles { evaluator: e, owners: owners.clone(), outputs: vec![Recipients::from_mask(recipients)] },
        inputs: by_owner(&owners, &values, n),
        mode: MODES[mode],
        options: Options { chunk_gates: chunk, batch: 16 },
    };
    check_job::<S>(&job);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn random_circuits_match_plaintext_on_the_dealer(
        seed in proptest::collection::vec(any::<u8>(), 1..300),
        n in 2usize..=4,
        e in 0usize..4,
        owner_pick in any::<u64>(),
        recipients in 1u64..16,
        chunk in 1usize..64,
        mode in 0usize..3,
        x in any::<u64>(),
    ) {
        random_circuit_case::<Ideal>(&seed, n, e, owner_pick, recipients, chunk, mode, x);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(REAL_CASES))]
    #[test]
    fn random_circuits_match_plaintext_on_the_real_fpre(
        seed in proptest::collection::vec(any::<u8>(), 1..300),
        n in 2usize..=4,
        e in 0usize..4,
        owner_pick in any::<u64>(),
        recipients in 1u64..16,
        chunk in 1usize..64,
        mode in 0usize..3,
        x in any::<u64>(),
    ) {
        random_circuit_case::<Real>(&seed, n, e, owner_pick, recipients, chunk, mode, x);
    }
}

/// Property cases on the real F_Pre (each sets up base OTs between every pair and generates
/// triples in batches of 16).
const REAL_CASES: u32 = 32;

on_both_preprocessors!(
    reference_circuits_with_2_parties,
    reference_circuits_with_3_parties,
    reference_circuits_with_4_parties,
    aes_and_sha256_known_answers,
    compacted_circuits_reuse_wires_in_every_mode,
    circuits_without_inputs,
    private_outputs_reach_exactly_their_recipients,
    vickrey_auctions_for_3_to_5_bidders,
    several_runs_in_one_session_with_pooled_material,
    mismatched_public_parameters_abort_before_any_secret_moves,
    bad_arguments_are_typed_errors_before_any_traffic,
);
