//! The online phase against plaintext arithmetic: random programs (proptest) run by 2, 3 and 5
//! parties in both fields, checked against big-integer arithmetic mod p (num-bigint) and a
//! bit-by-bit GF(2^128) reference; comparisons at the edges of their ranges; the Vickrey
//! auction; and the same programs on real MASCOT preprocessing.

use num_bigint::{BigInt, BigUint};
use proptest::prelude::*;
use webmpc_core::channel::memory::network;
use webmpc_spdz::dealer::Dealer;
use webmpc_spdz::local::{run_all, Local};
use webmpc_spdz::program::{const_u64, Builder, Instr, Kind, Program, Value};
use webmpc_spdz::testing::Cheat;
use webmpc_spdz::{Field, FieldKind, Fp, Gf128};

const P: u128 = u128::MAX - 172;

/// Plaintext values: integers mod p, or GF(2^128) elements as u128.
trait Reference: Field {
    fn r_add(a: u128, b: u128) -> u128;
    fn r_sub(a: u128, b: u128) -> u128;
    fn r_mul(a: u128, b: u128) -> u128;
    fn r_neg(a: u128) -> u128 {
        Self::r_sub(0, a)
    }
}

impl Reference for Fp {
    fn r_add(a: u128, b: u128) -> u128 {
        to_u128((BigUint::from(a) + BigUint::from(b)) % P)
    }
    fn r_sub(a: u128, b: u128) -> u128 {
        to_u128((BigUint::from(a) + BigUint::from(P) - BigUint::from(b)) % P)
    }
    fn r_mul(a: u128, b: u128) -> u128 {
        to_u128((BigUint::from(a) * BigUint::from(b)) % P)
    }
}

impl Reference for Gf128 {
    fn r_add(a: u128, b: u128) -> u128 {
        a ^ b
    }
    fn r_sub(a: u128, b: u128) -> u128 {
        a ^ b
    }
    fn r_mul(a: u128, b: u128) -> u128 {
        let (mut acc, mut x) = (0u128, a);
        for i in 0..128 {
            if (b >> i) & 1 == 1 {
                acc ^= x;
            }
            x = (x << 1) ^ if x >> 127 == 1 { 0x87 } else { 0 };
        }
        acc
    }
}

fn to_u128(b: BigUint) -> u128 {
    let d = b.to_u64_digits();
    d.first().copied().unwrap_or(0) as u128 | (d.get(1).copied().unwrap_or(0) as u128) << 64
}

/// The signed reading of a value mod p.
fn signed(v: u128) -> BigInt {
    if v > P / 2 {
        BigInt::from(v) - BigInt::from(P)
    } else {
        BigInt::from(v)
    }
}

fn raw_to_value(kind: Kind, raw: [u8; 16]) -> u128 {
    match kind {
        Kind::Signed(_) => {
            let v = i128::from_le_bytes(raw);
            if v < 0 {
                P - v.unsigned_abs()
            } else {
                v as u128
            }
        }
        _ => u128::from_le_bytes(raw),
    }
}

fn value_to_raw(kind: Kind, v: u128) -> [u8; 16] {
    match kind {
        Kind::Signed(_) => {
            let s = signed(v);
            let x: i128 = s.try_into().unwrap();
            x.to_le_bytes()
        }
        _ => v.to_le_bytes(),
    }
}

/// Evaluates `p` in the clear: outputs as every recipient should see them.
fn evaluate<F: Reference>(p: &Program, inputs: &[Vec<[u8; 16]>]) -> Vec<[u8; 16]> {
    let mut vals: Vec<u128> = Vec::new();
    let mut next = vec![0; p.parties];
    for i in &p.inputs {
        let o = i.owner.party().expect("these programs have no client inputs");
        vals.push(raw_to_value(i.kind, inputs[o][next[o]]));
        next[o] += 1;
    }
    let c = |c: &[u8; 16]| u128::from_le_bytes(*c);
    for ins in &p.instrs {
        let v = |o: u32| vals[o as usize];
        let out = match *ins {
            Instr::Add(a, b) => F::r_add(v(a), v(b)),
            Instr::Sub(a, b) => F::r_sub(v(a), v(b)),
            Instr::Neg(a) => F::r_neg(v(a)),
            Instr::MulConst(a, k) => F::r_mul(v(a), c(&k)),
            Instr::AddConst(a, k) => F::r_add(v(a), c(&k)),
            Instr::Mul(a, b) => F::r_mul(v(a), v(b)),
            Instr::Lt(a, b, _) => (signed(v(a)) < signed(v(b))) as u128,
            Instr::Le(a, b, _) => (signed(v(a)) <= signed(v(b))) as u128,
            Instr::Eq(a, b, _) => (v(a) == v(b)) as u128,
            Instr::Select(s, a, b) => {
                if v(s) == 1 {
                    v(a)
                } else {
                    v(b)
                }
            }
            Instr::Const(k) => c(&k),
        };
        vals.push(out);
    }
    p.outputs.iter().map(|o| value_to_raw(o.kind, vals[o.value as usize])).collect()
}

/// Runs `p` with dealer preprocessing; returns every party's outputs.
fn run_dealer<F: Field>(p: &Program, inputs: &[Vec<[u8; 16]>]) -> Vec<Vec<Option<[u8; 16]>>> {
    let n = p.parties;
    let mut dealer = Dealer::<F>::new(n);
    let mut parties = dealer.parties(network(n), &p.requirements(), vec![Cheat::None; n]);
    run_all(parties.iter_mut().zip(inputs).map(|(q, i)| q.run(p, i, |_, _| {})).collect()).unwrap()
}

fn check_outputs(p: &Program, want: &[[u8; 16]], got: &[Vec<Option<[u8; 16]>>]) {
    for (party, outs) in got.iter().enumerate() {
        assert_eq!(outs.len(), p.outputs.len());
        for (k, (o, g)) in p.outputs.iter().zip(outs).enumerate() {
            let entitled = o.recipients.as_ref().is_none_or(|r| r.contains(&party));
            if entitled {
                assert_eq!(g.as_ref(), Some(&want[k]), "party {party} output {k}");
            } else {
                assert_eq!(*g, None, "party {party} must not learn output {k}");
            }
        }
    }
}

/// A random program: inputs of random kinds and owners, then random instructions. Comparison
/// operands are drawn from values known to lie in their range (inputs and 0/1 results).
fn random_program(field: FieldKind, n: usize, seed: &[u8]) -> (Program, Vec<Vec<[u8; 16]>>) {
    let mut it = seed.iter().copied().cycle();
    let mut next = move || it.next().unwrap_or(0);
    let mut b = Builder::new(field, n);
    let mut inputs: Vec<Vec<[u8; 16]>> = vec![Vec::new(); n];
    // (value, width) of values known to be in a k-bit signed range.
    let mut small: Vec<(Value, u8)> = Vec::new();
    let mut all = Vec::new();
    let n_in = 2 + next() as usize % 4;
    for _ in 0..n_in {
        let owner = next() as usize % n;
        let kind = if field == FieldKind::Binary {
            Kind::Field
        } else {
            match next() % 3 {
                0 => Kind::Field,
                1 => Kind::Unsigned(1 + next() % 64),
                _ => Kind::Signed(1 + next() % 64),
            }
        };
        let raw: [u8; 16] = match kind {
            Kind::Field => {
                let mut r = [0u8; 16];
                for x in r.iter_mut() {
                    *x = next();
                }
                let v = u128::from_le_bytes(r);
                (if field == FieldKind::Prime { v % P } else { v }).to_le_bytes()
            }
            Kind::Unsigned(k) => {
                let v = u128::from_le_bytes([
                    next(),
                    next(),
                    next(),
                    next(),
                    next(),
                    next(),
                    next(),
                    next(),
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                ]);
                (v & ((1u128 << k) - 1)).to_le_bytes()
            }
            Kind::Signed(k) => {
                let v = i64::from_le_bytes([next(), next(), next(), next(), next(), next(), next(), next()]) as i128;
                let lim = 1i128 << (k - 1);
                (v.rem_euclid(2 * lim) - lim).to_le_bytes()
            }
        };
        inputs[owner].push(raw);
        let v = b.input(owner, kind);
        all.push(v);
        match kind {
            Kind::Unsigned(k) => small.push((v, k.min(63) + 1)),
            Kind::Signed(k) => small.push((v, k)),
            Kind::Field => {}
        }
    }
    let n_ins = 3 + next() as usize % 10;
    for _ in 0..n_ins {
        let pick = |r: u8, from: &Vec<Value>| from[r as usize % from.len()];
        let op = next() % 11;
        let v = match op {
            0 => b.add(pick(next(), &all), pick(next(), &all)),
            1 => b.sub(pick(next(), &all), pick(next(), &all)),
            2 => b.neg(pick(next(), &all)),
            3 => b.mul_const(pick(next(), &all), const_u64(next() as u64 * 977 + 1)),
            4 => b.add_const(pick(next(), &all), const_u64(next() as u64)),
            5 | 6 => b.mul(pick(next(), &all), pick(next(), &all)),
            7 => b.constant(const_u64(next() as u64 * 12345)),
            8..=10 if field == FieldKind::Prime && small.len() >= 2 => {
                let (x, kx) = small[next() as usize % small.len()];
                let (y, ky) = small[next() as usize % small.len()];
                let k = kx.max(ky);
                let c = match op {
                    8 => b.lt(x, y, k),
                    9 => b.le(x, y, k),
                    _ => b.eq(x, y, k),
                };
                small.push((c, 2));
                let s = b.select(c, pick(next(), &all), pick(next(), &all));
                all.push(c);
                s
            }
            _ => b.mul(pick(next(), &all), pick(next(), &all)),
        };
        all.push(v);
    }
    for _ in 0..1 + next() as usize % 3 {
        let v = all[next() as usize % all.len()];
        let recipients = match next() % 3 {
            0 => None,
            _ => Some(vec![next() as usize % n]),
        };
        b.output(v, Kind::Field, recipients);
    }
    (b.build(), inputs)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_match_plaintext_prime(seed in proptest::collection::vec(any::<u8>(), 64), n in prop_oneof![Just(2usize), Just(3), Just(5)]) {
        let (p, inputs) = random_program(FieldKind::Prime, n, &seed);
        let p = Program::decode(&p.encode()).unwrap();
        check_outputs(&p, &evaluate::<Fp>(&p, &inputs), &run_dealer::<Fp>(&p, &inputs));
    }

    #[test]
    fn random_programs_match_plaintext_binary(seed in proptest::collection::vec(any::<u8>(), 64), n in prop_oneof![Just(2usize), Just(3), Just(5)]) {
        let (p, inputs) = random_program(FieldKind::Binary, n, &seed);
        let p = Program::decode(&p.encode()).unwrap();
        check_outputs(&p, &evaluate::<Gf128>(&p, &inputs), &run_dealer::<Gf128>(&p, &inputs));
    }
}

/// Comparisons of k-bit operands at 0, the maxima, the minima, equal and adjacent values.
#[test]
fn comparisons_at_the_edges() {
    let mut cases: Vec<(Kind, i128, i128)> = Vec::new();
    for k in [1u8, 2, 8, 32, 63, 64] {
        let max = (1i128 << k) - 1;
        for (a, b) in [(0, 0), (0, max), (max, 0), (max, max), (max - 1, max), (1.min(max), 0)] {
            cases.push((Kind::Unsigned(k), a, b));
        }
        let (lo, hi) = (-(1i128 << (k - 1)), (1i128 << (k - 1)) - 1);
        for (a, b) in [(lo, hi), (hi, lo), (lo, lo), (hi, hi), (-1.max(lo), 0), (0, -1.max(lo)), (lo, 0), (0, hi)] {
            cases.push((Kind::Signed(k), a, b));
        }
    }
    for n in [2usize, 3] {
        let mut b = Builder::new(FieldKind::Prime, n);
        let mut inputs: Vec<Vec<[u8; 16]>> = vec![Vec::new(); n];
        let mut vs = Vec::new();
        for (kind, x, y) in &cases {
            let vx = b.input(0, *kind);
            inputs[0].push(x.to_le_bytes());
            let vy = b.input(n - 1, *kind);
            inputs[n - 1].push(y.to_le_bytes());
            vs.push((vx, vy, *kind));
        }
        for (vx, vy, kind) in vs {
            let k = match kind {
                Kind::Unsigned(k) | Kind::Signed(k) => k,
                Kind::Field => unreachable!(),
            };
            let lt = b.lt(vx, vy, k);
            let le = b.le(vx, vy, k);
            let eq = b.eq(vx, vy, k);
            for v in [lt, le, eq] {
                b.output(v, Kind::Unsigned(0), None);
            }
        }
        let p = b.build();
        let got = run_dealer::<Fp>(&p, &inputs);
        for (i, (_, x, y)) in cases.iter().enumerate() {
            let want = [(x < y) as u128, (x <= y) as u128, (x == y) as u128];
            for (j, w) in want.iter().enumerate() {
                assert_eq!(u128::from_le_bytes(got[0][3 * i + j].unwrap()), *w, "case {i} {x} vs {y}, op {j}");
            }
        }
    }
}

fn vickrey(n: usize, bids: usize) -> Program {
    webmpc_spdz::examples::vickrey(n, bids, 32)
}

fn vickrey_inputs(n: usize, bids: &[u32]) -> Vec<Vec<[u8; 16]>> {
    webmpc_spdz::examples::vickrey_inputs(n, &bids.iter().map(|b| *b as u64).collect::<Vec<_>>())
}

fn vickrey_plain(bids: &[u32]) -> (u128, u128) {
    let (w, s) = webmpc_spdz::examples::vickrey_plain(&bids.iter().map(|b| *b as u64).collect::<Vec<_>>());
    (w as u128, s as u128)
}

#[test]
fn vickrey_auction_matches_plaintext_with_ties() {
    let mut prg = webmpc_core::prg::Prg::from_entropy().unwrap();
    for (n, k) in [(2usize, 2usize), (2, 7), (3, 6), (5, 10), (5, 3)] {
        let p = vickrey(n, k);
        let p = Program::decode(&p.encode()).unwrap();
        for round in 0..3 {
            let bids: Vec<u32> = (0..k)
                .map(|_| {
                    let r = u32::from_le_bytes(prg.next_block().0[..4].try_into().unwrap());
                    // Round 1: few distinct values, so ties are common; round 2: all equal.
                    match round {
                        0 => r,
                        1 => u32::MAX - 3 + r % 3,
                        _ => 77,
                    }
                })
                .collect();
            let got = run_dealer::<Fp>(&p, &vickrey_inputs(n, &bids));
            let (w, s) = vickrey_plain(&bids);
            for outs in &got {
                assert_eq!(u128::from_le_bytes(outs[0].unwrap()), w, "winner for {bids:?}");
                assert_eq!(u128::from_le_bytes(outs[1].unwrap()), s, "price for {bids:?}");
            }
        }
    }
}

/// The online phase on real MASCOT preprocessing (generated on demand by `run`).
#[test]
fn programs_on_real_preprocessing() {
    let bids = [5u32, 900, 17, 900];
    let mut local = Local::<Fp>::setup(2).unwrap();
    local.set_batch(256).unwrap();
    let p = vickrey(2, bids.len());
    let got = local.run(&p, &vickrey_inputs(2, &bids)).unwrap();
    for outs in &got {
        assert_eq!(u128::from_le_bytes(outs[0].unwrap()), 1);
        assert_eq!(u128::from_le_bytes(outs[1].unwrap()), 900);
    }
    // A second run in the same session uses fresh preprocessing.
    let got = local.run(&p, &vickrey_inputs(2, &[3, 2, 1, 0])).unwrap();
    assert_eq!(u128::from_le_bytes(got[1][0].unwrap()), 0);
    assert_eq!(u128::from_le_bytes(got[1][1].unwrap()), 2);

    let mut local = Local::<Gf128>::setup(3).unwrap();
    let mut prg = webmpc_core::prg::Prg::from_entropy().unwrap();
    let seed: Vec<u8> = (0..64).map(|_| prg.next_block().0[0]).collect();
    let (p, inputs) = random_program(FieldKind::Binary, 3, &seed);
    check_outputs(&p, &evaluate::<Gf128>(&p, &inputs), &local.run(&p, &inputs).unwrap());
}

#[test]
fn mismatched_programs_and_inputs_are_typed_errors() {
    let p = vickrey(2, 2);
    let mut dealer = Dealer::<Fp>::new(2);
    let mut parties = dealer.parties(network(2), &p.requirements(), vec![Cheat::None; 2]);
    let other = vickrey(2, 4);
    let (a, b) = parties.split_at_mut(1);
    let inputs_a = vickrey_inputs(2, &[1, 2]);
    let inputs_b = vickrey_inputs(2, &[1, 2, 3, 4]);
    let r = run_all(vec![
        Box::pin(a[0].run(&p, &inputs_a[0], |_, _| {})) as std::pin::Pin<Box<dyn core::future::Future<Output = _>>>,
        Box::pin(b[0].run(&other, &inputs_b[1], |_, _| {})),
    ]);
    assert!(matches!(r, Err(webmpc_spdz::SpdzError::ParameterMismatch { what: "program", .. })), "{r:?}");
    // Wrong number of inputs and out-of-range inputs are refused before any traffic.
    let mut dealer = Dealer::<Fp>::new(2);
    let mut parties = dealer.parties(network(2), &p.requirements(), vec![Cheat::None; 2]);
    let e = futures::executor::block_on(parties[0].run(&p, &[], |_, _| {})).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    let e = futures::executor::block_on(parties[0].run(&p, &[(1u128 << 40).to_le_bytes()], |_, _| {})).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    let bin = Builder::new(FieldKind::Binary, 2).build();
    let e = futures::executor::block_on(parties[0].run(&bin, &[], |_, _| {})).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
}

/// `Program`'s fields are public, so `run` cannot rely on the decoder: a non-canonical constant
/// (which panicked on `expect`), a comparison of width 0 (an underflow in its cost) and a
/// `Signed(0)` input (a shift underflow) are refused with MALFORMED_PROGRAM before any traffic,
/// and the parties stay usable: the valid program runs afterwards.
#[test]
fn run_validates_a_program_built_in_memory() {
    let mut b = Builder::new(FieldKind::Prime, 2);
    let x = b.input(0, Kind::Unsigned(8));
    let y = b.input(1, Kind::Unsigned(8));
    let c = b.constant(const_u64(3));
    let s = b.add(x, c);
    let l = b.lt(s, y, 9);
    b.output(l, Kind::Unsigned(1), None);
    let p = b.build();
    let const_at = p.instrs.iter().position(|i| matches!(i, Instr::Const(_))).unwrap();
    let lt_at = p.instrs.iter().position(|i| matches!(i, Instr::Lt(..))).unwrap();
    let mut bad = Vec::new();
    let mut q = p.clone();
    q.instrs[const_at] = Instr::Const([0xff; 16]);
    bad.push(q);
    let mut q = p.clone();
    let Instr::Lt(a, b2, _) = q.instrs[lt_at] else { unreachable!() };
    q.instrs[lt_at] = Instr::Lt(a, b2, 0);
    bad.push(q);
    let mut q = p.clone();
    q.inputs[0].kind = Kind::Signed(0);
    bad.push(q);
    let mut dealer = Dealer::<Fp>::new(2);
    let mut parties = dealer.parties(network(2), &p.requirements(), vec![Cheat::None; 2]);
    let inputs = [[5u128.to_le_bytes()], [9u128.to_le_bytes()]];
    for q in &bad {
        for (party, inp) in parties.iter_mut().zip(&inputs) {
            let e = futures::executor::block_on(party.run(q, inp, |_, _| {})).unwrap_err();
            assert_eq!(e.code(), "MALFORMED_PROGRAM", "{e:?}");
        }
    }
    let (a, b) = parties.split_at_mut(1);
    let out = run_all(vec![
        Box::pin(a[0].run(&p, &inputs[0], |_, _| {})) as std::pin::Pin<Box<dyn core::future::Future<Output = _>>>,
        Box::pin(b[0].run(&p, &inputs[1], |_, _| {})),
    ])
    .unwrap();
    for o in out {
        assert_eq!(o[0], Some(1u128.to_le_bytes()), "5 + 3 < 9");
    }
}

/// Runs `p` by two dealer-made parties with `extra` spare triples, counting party 0's messages
/// to party 1 (each is one round, the protocol sending one message per peer per round) and the
/// triples party 0 consumed.
fn rounds_and_triples(p: &Program, inputs: &[Vec<[u8; 16]>]) -> (usize, usize) {
    use std::cell::Cell;
    use std::rc::Rc;
    use webmpc_core::channel::memory::Tamper;
    use webmpc_core::channel::PartyId;
    const EXTRA: usize = 1000;
    let sent = Rc::new(Cell::new(0usize));
    let channels = network(2)
        .into_iter()
        .enumerate()
        .map(|(i, ch)| {
            let sent = sent.clone();
            Tamper::new(ch, move |to: PartyId, _: usize, _: &mut Vec<u8>| {
                if i == 0 && to == 1 {
                    sent.set(sent.get() + 1);
                }
            })
        })
        .collect();
    let mut req = p.requirements();
    req.triples += EXTRA;
    let mut dealer = Dealer::<Fp>::new(2);
    let mut parties = dealer.parties(channels, &req, vec![Cheat::None; 2]);
    let (a, b) = parties.split_at_mut(1);
    run_all(vec![
        Box::pin(a[0].run(p, &inputs[0], |_, _| {})) as std::pin::Pin<Box<dyn core::future::Future<Output = _>>>,
        Box::pin(b[0].run(p, &inputs[1], |_, _| {})),
    ])
    .unwrap();
    (sent.get(), req.triples - parties[0].store().counts().triples)
}

/// What one comparison costs, measured (`cargo test -p webmpc-spdz --test integration
/// online::comparison_costs -- --nocapture` prints the table): a < b on k bits takes
/// 2(k − 1) − ⌈log2 k⌉ + 1 triples and ⌈log2 k⌉ + 2 rounds (the masked opening, the carry tree,
/// the final XOR that makes the result a bit whatever the operands), one round more than
/// a = b; k-bit integer inputs add k triples (b² = b per bit) and 4 rounds per run (one Beaver
/// round for all bits, and the MAC check — coin, commit, open — before the first comparison).
#[test]
fn comparison_costs_the_documented_triples_and_rounds() {
    use webmpc_spdz::online_core::{ceil_log2, eq_cost, lt_cost};
    let prog = |kind: Kind, k: u8, lt: bool| {
        let mut b = Builder::new(FieldKind::Prime, 2);
        let x = b.input(0, kind);
        let y = b.input(1, kind);
        let c = if lt { b.lt(x, y, k) } else { b.eq(x, y, k) };
        b.output(c, Kind::Unsigned(1), None);
        b.build()
    };
    let inputs = vec![vec![0u128.to_le_bytes()], vec![1u128.to_le_bytes()]];
    println!("k | LT triples | LT rounds | EQ triples | EQ rounds | LT, k-bit inputs: triples, rounds");
    for k in [1u8, 8, 32, 64] {
        let ku = k as usize;
        let (lt_rounds, lt_triples) = rounds_and_triples(&prog(Kind::Field, k, true), &inputs);
        let (eq_rounds, eq_triples) = rounds_and_triples(&prog(Kind::Field, k, false), &inputs);
        let (int_rounds, int_triples) = rounds_and_triples(&prog(Kind::Unsigned(k), k, true), &inputs);
        println!("{k} | {lt_triples} | {lt_rounds} | {eq_triples} | {eq_rounds} | {int_triples}, {int_rounds}");
        assert_eq!(lt_triples, lt_cost(ku).0);
        assert_eq!(lt_triples, 2 * (ku - 1) - ceil_log2(ku) + 1);
        assert_eq!(eq_triples, eq_cost(ku).0);
        assert_eq!(lt_rounds, eq_rounds + 1, "the final XOR is one round");
        assert_eq!(int_triples, lt_triples + 2 * ku, "one b² = b product per input bit");
        assert_eq!(int_rounds, lt_rounds + 4, "range-check round + the MAC check before the comparison");
        if k > 1 {
            let (r1, _) = rounds_and_triples(&prog(Kind::Field, 1, true), &inputs);
            assert_eq!(lt_rounds, r1 + ceil_log2(ku), "one round per carry-tree level");
        }
    }
}
