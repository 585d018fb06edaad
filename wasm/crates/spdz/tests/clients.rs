//! Inputs from external clients (`webmpc_spdz::clients`): the client's check of the servers'
//! triples, the servers' agreement on the client inputs, the range check of a client's integer
//! input, and masks used once — each against the deviation it exists for — and client inputs
//! mixed with the servers' own against plaintext arithmetic (dealer and real MASCOT
//! preprocessing).

use futures::future::join_all;
use num_bigint::BigUint;
use proptest::prelude::*;
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_spdz::clients::{
    decode_client_inputs, encode_client_inputs, ClientInput, CLIENT_SHARE_BYTES, MAX_CLIENT_MASKS,
};
use webmpc_spdz::dealer::Dealer;
use webmpc_spdz::local::{run_all, Local};
use webmpc_spdz::program::{Builder, Kind, Owner, Program, ProgramError, CLIENT_OWNER};
use webmpc_spdz::testing::Cheat;
use webmpc_spdz::{client_masked_inputs, Field, FieldKind, Fp, Gf128, Party, SpdzError};

const P: u128 = u128::MAX - 172;

type Outs = Vec<Option<[u8; 16]>>;

/// Dealer-made servers for `p` with `extra` triples beyond what the program needs (for the
/// client masks); `cheats[i]` is server i's deviation.
fn servers<F: Field>(p: &Program, extra: usize, cheats: Vec<Cheat>) -> Vec<Party<F, MemoryChannel>> {
    let n = p.parties;
    let mut counts = p.requirements();
    counts.triples += extra;
    Dealer::<F>::new(n).parties(network(n), &counts, cheats)
}

fn honest(n: usize) -> Vec<Cheat> {
    vec![Cheat::None; n]
}

/// Every server hands out `count` client masks; returns the common first id and every server's
/// shares.
fn masks<F: Field>(servers: &mut [Party<F, MemoryChannel>], count: usize) -> (u64, Vec<Vec<u8>>) {
    let got = run_all(servers.iter_mut().map(|s| s.client_masks(count)).collect()).unwrap();
    let first = got[0].0;
    assert!(got.iter().all(|g| g.0 == first), "every server hands out the same ids");
    for g in &got {
        assert_eq!(g.1.len(), CLIENT_SHARE_BYTES * count);
    }
    (first, got.into_iter().map(|g| g.1).collect())
}

/// The client's side (client 0): checks the shares, masks `values`, splits the result per input.
fn client<F: Field>(
    shares: &[Vec<u8>],
    first: u64,
    kinds: &[Kind],
    values: &[[u8; 16]],
) -> Result<Vec<ClientInput>, SpdzError> {
    client_as::<F>(0, shares, first, kinds, values)
}

/// [`client`] for client `id`.
fn client_as<F: Field>(
    id: u32,
    shares: &[Vec<u8>],
    first: u64,
    kinds: &[Kind],
    values: &[[u8; 16]],
) -> Result<Vec<ClientInput>, SpdzError> {
    let refs: Vec<&[u8]> = shares.iter().map(|s| &s[..]).collect();
    let eps = client_masked_inputs::<F>(&refs, kinds, values)?;
    ClientInput::split(id, first, kinds, &eps)
}

/// Every server runs `p`; server i with `inputs[i]` and client inputs `clients[i]`. Returns
/// each server's outputs and refused clients.
fn run_full<F: Field>(
    servers: &mut [Party<F, MemoryChannel>],
    p: &Program,
    inputs: &[Vec<[u8; 16]>],
    clients: &[Vec<ClientInput>],
) -> Vec<Result<(Outs, Vec<u32>), SpdzError>> {
    let futs = servers
        .iter_mut()
        .zip(inputs)
        .zip(clients)
        .map(|((s, i), c)| async move { s.run_with_clients(p, i, c, |_, _| {}).await });
    run_local(join_all(futs)).unwrap()
}

/// [`run_full`] where every client is honest: a run that succeeds refuses nobody.
fn run<F: Field>(
    servers: &mut [Party<F, MemoryChannel>],
    p: &Program,
    inputs: &[Vec<[u8; 16]>],
    clients: &[Vec<ClientInput>],
) -> Vec<Result<Outs, SpdzError>> {
    run_full(servers, p, inputs, clients)
        .into_iter()
        .map(|r| {
            r.map(|(o, refused)| {
                assert!(refused.is_empty(), "an honest client was refused: {refused:?}");
                o
            })
        })
        .collect()
}

/// Runs only `s` (its peers do nothing): an answer other than a stall shows it sent nothing and
/// waited for nothing.
fn alone<F: Field>(s: &mut Party<F, MemoryChannel>, p: &Program, inputs: &[[u8; 16]], c: &[ClientInput]) -> SpdzError {
    let before = s.channel().sent_bytes();
    let r = run_local(s.run_with_clients(p, inputs, c, |_, _| {})).expect("refused without waiting for a peer");
    assert_eq!(s.channel().sent_bytes(), before, "refused before any message");
    r.expect_err("refused")
}

fn bytes(x: u128) -> [u8; 16] {
    x.to_le_bytes()
}

fn modp(x: BigUint) -> u128 {
    let d = (x % BigUint::from(P)).to_u64_digits();
    d.first().copied().unwrap_or(0) as u128 | (d.get(1).copied().unwrap_or(0) as u128) << 64
}

// ------------------------------------------------------------------ correctness

/// Two clients and the servers: client A inputs a field element x and an unsigned 32-bit y
/// (one `client_masks` call for both), client B a signed 16-bit z; server 0 an unsigned 32-bit
/// w, server n − 1 a signed 16-bit v, server 1 a field element f.
fn mixed_program(n: usize) -> Program {
    let mut b = Builder::new(FieldKind::Prime, n);
    let x = b.client_input(Kind::Field);
    let w = b.input(0, Kind::Unsigned(32));
    let y = b.client_input(Kind::Unsigned(32));
    let f = b.input(1, Kind::Field);
    let z = b.client_input(Kind::Signed(16));
    let v = b.input(n - 1, Kind::Signed(16));
    let sum = b.add(x, f);
    let prod = b.mul(x, f);
    let lt = b.lt(y, w, 32);
    let le = b.le(z, v, 16);
    let eq = b.eq(y, w, 32);
    let min = b.select(lt, y, w);
    let zv = b.add(z, v);
    let zv2 = b.mul(z, v);
    b.output(sum, Kind::Field, None);
    b.output(prod, Kind::Field, Some(vec![0]));
    b.output(lt, Kind::Unsigned(0), None);
    b.output(le, Kind::Unsigned(0), None);
    b.output(eq, Kind::Unsigned(0), None);
    b.output(min, Kind::Unsigned(0), None);
    b.output(zv, Kind::Signed(0), None);
    b.output(zv2, Kind::Signed(0), Some(vec![n - 1]));
    b.build()
}

#[allow(clippy::too_many_arguments)]
fn mixed_case<F: Field>(servers: &mut [Party<F, MemoryChannel>], n: usize, x: u128, y: u32, z: i16, w: u32, f: u128, v: i16) {
    let p = mixed_program(n);
    // Client A: one call for both its inputs; client B: a call of its own.
    let a_kinds = [Kind::Field, Kind::Unsigned(32)];
    let (a_first, a_shares) = masks(servers, 33);
    let (b_first, b_shares) = masks(servers, 16);
    assert_eq!(b_first, a_first + 33);
    let mut ci = client::<F>(&a_shares, a_first, &a_kinds, &[bytes(x), bytes(y as u128)]).unwrap();
    ci.extend(client_as::<F>(1, &b_shares, b_first, &[Kind::Signed(16)], &[(z as i128).to_le_bytes()]).unwrap());
    let mut inputs: Vec<Vec<[u8; 16]>> = vec![Vec::new(); n];
    inputs[0].push(bytes(w as u128));
    inputs[1].push(bytes(f));
    inputs[n - 1].push((v as i128).to_le_bytes());
    let out = run(servers, &p, &inputs, &vec![ci; n]);
    let want: Vec<[u8; 16]> = vec![
        bytes(modp(BigUint::from(x) + BigUint::from(f))),
        bytes(modp(BigUint::from(x) * BigUint::from(f))),
        bytes((y < w) as u128),
        bytes((z <= v) as u128),
        bytes((y == w) as u128),
        bytes(y.min(w) as u128),
        (z as i128 + v as i128).to_le_bytes(),
        (z as i128 * v as i128).to_le_bytes(),
    ];
    for (i, o) in out.into_iter().enumerate() {
        let o = o.unwrap_or_else(|e| panic!("server {i}: {e}"));
        for (k, (got, want)) in o.iter().zip(&want).enumerate() {
            let entitled = p.outputs[k].recipients.as_ref().is_none_or(|r| r.contains(&i));
            assert_eq!(got.as_ref(), entitled.then_some(want), "server {i} output {k}");
        }
    }
    for s in servers.iter() {
        assert_eq!(s.client_masks_held(), 0, "the run consumed every client mask");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    #[test]
    fn client_inputs_mixed_with_server_inputs_match_plaintext(
        n in prop_oneof![Just(2usize), Just(3)],
        x in 0..P, f in 0..P, y: u32, w: u32, z: i16, v: i16, same: bool,
    ) {
        let w = if same { y } else { w };
        let mut s = servers::<Fp>(&mixed_program(n), 49, honest(n));
        mixed_case(&mut s, n, x, y, z, w, f, v);
    }
}

/// The edges of the client's integer ranges, and the same program again on the same servers
/// (fresh masks from the counter).
#[test]
fn client_inputs_at_the_edges_of_their_ranges() {
    let n = 3;
    let cases = [(0u32, i16::MIN, u32::MAX, i16::MAX), (u32::MAX, i16::MAX, 0, i16::MIN), (7, -1, 7, -1)];
    // Enough for three runs and three rounds of client masks.
    let mut counts = mixed_program(n).requirements();
    counts.triples = 3 * (counts.triples + 49);
    counts.bits *= 3;
    counts.masks.iter_mut().for_each(|m| *m *= 3);
    let mut s = Dealer::<Fp>::new(n).parties(network(n), &counts, honest(n));
    for (y, z, w, v) in cases {
        mixed_case(&mut s, n, P - 1, y, z, w, 1, v);
    }
}

#[test]
fn client_field_inputs_in_the_binary_field() {
    let mut b = Builder::new(FieldKind::Binary, 2);
    let x = b.client_input(Kind::Field);
    let y = b.input(1, Kind::Field);
    let s = b.add(x, y);
    let m = b.mul(x, y);
    b.output(s, Kind::Field, None);
    b.output(m, Kind::Field, None);
    let p = b.build();
    let mut servers = servers::<Gf128>(&p, 1, honest(2));
    let (first, shares) = masks(&mut servers, 1);
    let (xv, yv) = (0x1234_5678_9abc_def0_0fed_cba9_8765_4321u128, 0xffff_0000_1111_2222_3333_4444_5555_6666u128);
    let ci = client::<Gf128>(&shares, first, &[Kind::Field], &[bytes(xv)]).unwrap();
    let out = run(&mut servers, &p, &[vec![], vec![bytes(yv)]], &vec![ci; 2]);
    let (gx, gy) = (Gf128::from_bytes(bytes(xv)).unwrap(), Gf128::from_bytes(bytes(yv)).unwrap());
    for o in out {
        let o = o.unwrap();
        assert_eq!(o[0], Some(bytes(xv ^ yv)));
        assert_eq!(o[1], Some((gx * gy).to_bytes()));
    }
}

/// Real MASCOT preprocessing: `client_masks` generates the triples it lacks (every server
/// together), then the run generates what the program needs.
#[test]
fn client_inputs_on_real_preprocessing() {
    let mut local = Local::<Fp>::setup(2).unwrap();
    local.set_batch(16).unwrap();
    let mut b = Builder::new(FieldKind::Prime, 2);
    let x = b.client_input(Kind::Unsigned(8));
    let y = b.input(1, Kind::Unsigned(8));
    let lt = b.lt(x, y, 8);
    let m = b.mul(x, y);
    b.output(lt, Kind::Unsigned(0), None);
    b.output(m, Kind::Unsigned(0), Some(vec![0]));
    let p = b.build();
    let servers = local.parties();
    let (first, shares) = masks(servers, 8);
    let ci = client::<Fp>(&shares, first, &[Kind::Unsigned(8)], &[bytes(200)]).unwrap();
    let out = run(servers, &p, &[vec![], vec![bytes(201)]], &vec![ci; 2]);
    let out: Vec<Outs> = out.into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(out[0], vec![Some(bytes(1)), Some(bytes(200 * 201))]);
    assert_eq!(out[1], vec![Some(bytes(1)), None]);
}

// ------------------------------------------------------------------ the client's check

/// A server that changes its share of a, b or c in what it sends to the client (or sends an
/// element that does not decode) is caught by the client's check c = a·b, which names no server.
#[test]
fn a_changed_share_sent_to_the_client_is_caught_by_its_check() {
    let kinds = [Kind::Field, Kind::Unsigned(4)];
    let values = [bytes(99), bytes(9)];
    for n in [2, 3] {
        let p = Builder::new(FieldKind::Prime, n).build();
        let mut s = servers::<Fp>(&p, 5, honest(n));
        let (first, shares) = masks(&mut s, 5);
        assert!(client::<Fp>(&shares, first, &kinds, &values).is_ok());
        for cheater in 0..n {
            for mask in [0, 4] {
                for (which, name) in [(0, "a"), (1, "b"), (2, "c")] {
                    let mut bad = shares.clone();
                    let at = CLIENT_SHARE_BYTES * mask + 16 * which;
                    let x = Fp::from_bytes(bad[cheater][at..at + 16].try_into().unwrap()).unwrap();
                    bad[cheater][at..at + 16].copy_from_slice(&(x + Fp::ONE).to_bytes());
                    let e = client::<Fp>(&bad, first, &kinds, &values).unwrap_err();
                    assert_eq!(e, SpdzError::ClientMasksInvalid, "n {n}, server {cheater} changed {name} of mask {mask}");
                    assert_eq!(e.code(), "CHEATING_DETECTED");
                    assert_eq!(e.peer(), None);
                }
            }
            // A share that is not a canonical element.
            let mut bad = shares.clone();
            bad[cheater][16..32].copy_from_slice(&[0xff; 16]);
            assert_eq!(client::<Fp>(&bad, first, &kinds, &values).unwrap_err(), SpdzError::ClientMasksInvalid);
        }
        // A server's shares missing altogether do not add up either.
        assert_eq!(client::<Fp>(&shares[1..], first, &kinds, &values).unwrap_err(), SpdzError::ClientMasksInvalid);
    }
}

/// The client's own mistakes are INVALID_ARGUMENT (never CHEATING_DETECTED): a value out of its
/// range, a kind the field does not have, shares of the wrong length.
#[test]
fn the_clients_own_mistakes_are_invalid_arguments() {
    let p = Builder::new(FieldKind::Prime, 2).build();
    let mut s = servers::<Fp>(&p, 8, honest(2));
    let (_, shares) = masks(&mut s, 8);
    let refs: Vec<&[u8]> = shares.iter().map(|s| &s[..]).collect();
    let invalid = |r: Result<Vec<u8>, SpdzError>| matches!(r, Err(SpdzError::InvalidArgument(_)));
    assert!(invalid(client_masked_inputs::<Fp>(&refs, &[Kind::Unsigned(8)], &[bytes(256)])));
    assert!(invalid(client_masked_inputs::<Fp>(&refs, &[Kind::Signed(8)], &[(-129i128).to_le_bytes()])));
    assert!(invalid(client_masked_inputs::<Fp>(&refs, &[Kind::Unsigned(7)], &[bytes(1)])));
    assert!(invalid(client_masked_inputs::<Fp>(&refs, &[Kind::Unsigned(8)], &[])));
    assert!(invalid(client_masked_inputs::<Fp>(&[], &[Kind::Unsigned(8)], &[bytes(1)])));
    assert!(invalid(client_masked_inputs::<Fp>(&refs, &[Kind::Field; 8], &[[0xff; 16]; 8])));
    assert!(invalid(client_masked_inputs::<Gf128>(&refs, &[Kind::Unsigned(8)], &[bytes(1)])));
    assert!(invalid(client_masked_inputs::<Fp>(&refs, &[Kind::Unsigned(0)], &[bytes(0)])));
    assert!(client_masked_inputs::<Fp>(&refs, &[Kind::Unsigned(8)], &[bytes(255)]).is_ok());
}

// ------------------------------------------------------------------ the servers' agreement

fn one_field_client_input(n: usize) -> Program {
    let mut b = Builder::new(FieldKind::Prime, n);
    let x = b.client_input(Kind::Field);
    let y = b.input(0, Kind::Field);
    let s = b.add(x, y);
    let m = b.mul(x, y);
    b.output(s, Kind::Field, None);
    b.output(m, Kind::Field, None);
    b.build()
}

/// Servers given different ε for a client's input (a server, or the path from the client to it,
/// changed it) refuse to run in the opening broadcast, before consuming anything.
#[test]
fn servers_holding_different_client_inputs_refuse_before_consuming_anything() {
    for n in [2, 3] {
        let p = one_field_client_input(n);
        let mut s = servers::<Fp>(&p, 1, honest(n));
        let (first, shares) = masks(&mut s, 1);
        let ci = client::<Fp>(&shares, first, &[Kind::Field], &[bytes(5)]).unwrap();
        let mut clients = vec![ci.clone(); n];
        let mut changed = ci[0].masked[0];
        changed[0] ^= 1;
        clients[1][0].masked[0] = changed;
        let before: Vec<_> = s.iter().map(|q| (q.store().counts(), q.client_masks_held())).collect();
        let mut inputs = vec![Vec::new(); n];
        inputs[0].push(bytes(3));
        let r = run(&mut s, &p, &inputs, &clients);
        for (i, res) in r.iter().enumerate() {
            let e = res.as_ref().unwrap_err();
            let peer = if i == 1 { 0 } else { 1 };
            assert_eq!(*e, SpdzError::ParameterMismatch { peer, what: "client inputs" }, "n {n} server {i}");
        }
        let after: Vec<_> = s.iter().map(|q| (q.store().counts(), q.client_masks_held())).collect();
        assert_eq!(before, after, "nothing consumed");
        // A different first mask id is a different client input too.
        let mut s = servers::<Fp>(&p, 2, honest(n));
        let (first, shares) = masks(&mut s, 2);
        let ci = client::<Fp>(&shares[..], first, &[Kind::Field, Kind::Field], &[bytes(5), bytes(6)]).unwrap();
        let mut clients = vec![vec![ci[0].clone()]; n];
        clients[n - 1] = vec![ci[1].clone()];
        let r = run(&mut s, &p, &inputs, &clients);
        let e = r[0].as_ref().unwrap_err();
        assert_eq!(*e, SpdzError::ParameterMismatch { peer: n - 1, what: "client inputs" });
        // So is a different client id (it decides who is refused).
        let mut s = servers::<Fp>(&p, 1, honest(n));
        let (first, shares) = masks(&mut s, 1);
        let ci = client::<Fp>(&shares, first, &[Kind::Field], &[bytes(5)]).unwrap();
        let mut clients = vec![ci; n];
        clients[n - 1][0].client = 1;
        let r = run(&mut s, &p, &inputs, &clients);
        let e = r[0].as_ref().unwrap_err();
        assert_eq!(*e, SpdzError::ParameterMismatch { peer: n - 1, what: "client inputs" });
    }
}

/// Servers whose client-mask counters differ (one handed out masks the other did not) refuse to
/// run, even when their stores hold as much as each other.
#[test]
fn servers_with_different_client_mask_counters_refuse() {
    let p = one_field_client_input(2);
    let mut s = servers::<Fp>(&p, 1, honest(2));
    run_local(s[0].client_masks(1)).unwrap().unwrap();
    // Server 1 drops a triple another way, so that only the counters differ.
    let (m, t, b) = s[1].take_material();
    s[1].put_material(&m[96..], t - 1, b).unwrap();
    assert_eq!(s[0].store().counts(), s[1].store().counts());
    s[0].drop_client_masks(0, 1);
    let p2 = {
        let mut b = Builder::new(FieldKind::Prime, 2);
        let y = b.input(0, Kind::Field);
        b.output(y, Kind::Field, None);
        b.build()
    };
    let r = run(&mut s, &p2, &[vec![bytes(1)], vec![]], &[vec![], vec![]]);
    for (i, res) in r.iter().enumerate() {
        assert_eq!(*res.as_ref().unwrap_err(), SpdzError::ParameterMismatch { peer: 1 - i, what: "preprocessing state" });
    }
}

/// A server that uses a different ε after the agreement: if its transcript shows it, the
/// broadcast consistency check names it; if only its share of the input is off, the MAC check
/// catches the first opening that depends on it. Either way no honest server outputs.
#[test]
fn a_server_changing_a_client_input_after_the_agreement_is_caught() {
    for (n, cheater) in [(2, 0), (2, 1), (3, 1), (3, 2)] {
        for in_transcript in [true, false] {
            let p = one_field_client_input(n);
            let cheats = (0..n).map(|i| if i == cheater { Cheat::ClientEpsilon { in_transcript } } else { Cheat::None }).collect();
            let mut s = servers::<Fp>(&p, 1, cheats);
            let (first, shares) = masks(&mut s, 1);
            let ci = client::<Fp>(&shares, first, &[Kind::Field], &[bytes(5)]).unwrap();
            let mut inputs = vec![Vec::new(); n];
            inputs[0].push(bytes(3));
            let r = run(&mut s, &p, &inputs, &vec![ci; n]);
            for (i, res) in r.iter().enumerate().filter(|(i, _)| *i != cheater) {
                let e = res.as_ref().expect_err("no honest server outputs");
                if in_transcript {
                    assert_eq!(
                        *e,
                        SpdzError::CheatingDetected { peer: cheater, check: "broadcast consistency check" },
                        "n {n} cheater {cheater} server {i}"
                    );
                } else {
                    // The product's Beaver openings are the first openings that depend on it.
                    assert_eq!(*e, SpdzError::MacCheckFailed { phase: "online phase" }, "n {n} cheater {cheater} server {i}");
                }
            }
        }
    }
}

// ------------------------------------------------------------------ a malicious client

/// Client 0 (honest) inputs an unsigned 8-bit a and a field element f; client 1 inputs x of
/// `kind` and a field element g; client 2 (honest) an unsigned 4-bit c; server 0 an unsigned
/// 8-bit y. Outputs: a + f + x + g + c + y, x + g, a·y.
fn three_clients(n: usize, kind: Kind) -> Program {
    let mut b = Builder::new(FieldKind::Prime, n);
    let a = b.client_input(Kind::Unsigned(8));
    let f = b.client_input(Kind::Field);
    let x = b.client_input(kind);
    let y = b.input(0, Kind::Unsigned(8));
    let g = b.client_input(Kind::Field);
    let c = b.client_input(Kind::Unsigned(4));
    let t = [a, f, x, g, c, y].into_iter().reduce(|u, v| b.add(u, v)).unwrap();
    let xg = b.add(x, g);
    let ay = b.mul(a, y);
    b.output(t, Kind::Field, None);
    b.output(xg, Kind::Field, None);
    b.output(ay, Kind::Field, Some(vec![n - 1]));
    b.build()
}

/// The client inputs of [`three_clients`] (a = 200, f = 1000, x = 0, g = 77, c = 9) in program
/// order; client 1 sends ε = 2 − a for bit 0 of x when `malicious` (running its own code, it can
/// send anything).
fn three_clients_inputs(s: &mut [Party<Fp, MemoryChannel>], kind: Kind, malicious: bool) -> Vec<ClientInput> {
    let (f0, sh0) = masks(s, 9);
    let (f1, sh1) = masks(s, kind.input_masks() + 1);
    let (f2, sh2) = masks(s, 4);
    let c0 = client_as::<Fp>(0, &sh0, f0, &[Kind::Unsigned(8), Kind::Field], &[bytes(200), bytes(1000)]).unwrap();
    let mut c1 = client_as::<Fp>(1, &sh1, f1, &[kind, Kind::Field], &[bytes(0), bytes(77)]).unwrap();
    if malicious {
        let e0 = Fp::from_bytes(c1[0].masked[0]).unwrap();
        c1[0].masked[0] = (e0 + Fp::from_u64(2)).to_bytes();
    }
    let c2 = client_as::<Fp>(2, &sh2, f2, &[Kind::Unsigned(4)], &[bytes(9)]).unwrap();
    vec![c0[0].clone(), c0[1].clone(), c1[0].clone(), c1[1].clone(), c2[0].clone()]
}

/// A client whose integer input has a digit that is not a bit is refused: the run goes on at
/// every server, every input of that client counts as 0 (its field input too), the honest
/// clients' inputs are used as given, every server reports the same refused list, and the
/// refused client's masks are consumed anyway.
#[test]
fn a_client_integer_input_out_of_range_is_refused_and_the_run_goes_on() {
    for (n, kind) in [(2, Kind::Unsigned(1)), (3, Kind::Unsigned(8)), (2, Kind::Signed(16)), (3, Kind::Signed(5))] {
        let p = three_clients(n, kind);
        let mut s = servers::<Fp>(&p, 14 + kind.input_masks(), honest(n));
        let ci = three_clients_inputs(&mut s, kind, true);
        let mut inputs = vec![Vec::new(); n];
        inputs[0].push(bytes(3));
        let r = run_full(&mut s, &p, &inputs, &vec![ci; n]);
        for (i, res) in r.into_iter().enumerate() {
            let (out, refused) = res.unwrap_or_else(|e| panic!("{kind:?} server {i}: {e}"));
            assert_eq!(refused, vec![1], "{kind:?} server {i}");
            assert_eq!(out[0], Some(bytes(200 + 1000 + 9 + 3)), "{kind:?} server {i}: x and g count as 0");
            assert_eq!(out[1], Some(bytes(0)), "{kind:?} server {i}");
            assert_eq!(out[2], (i == n - 1).then_some(bytes(600)), "{kind:?} server {i}");
        }
        for q in &s {
            assert_eq!(q.client_masks_held(), 0, "the refused client's masks are consumed too");
        }
    }
}

/// The same clients, all honest: nobody is refused and every input counts.
#[test]
fn clients_with_inputs_in_range_are_not_refused() {
    for (n, kind) in [(2, Kind::Unsigned(8)), (3, Kind::Signed(16))] {
        let p = three_clients(n, kind);
        let mut s = servers::<Fp>(&p, 14 + kind.input_masks(), honest(n));
        let ci = three_clients_inputs(&mut s, kind, false);
        let mut inputs = vec![Vec::new(); n];
        inputs[0].push(bytes(3));
        for res in run(&mut s, &p, &inputs, &vec![ci; n]) {
            let out = res.unwrap();
            assert_eq!(out[0], Some(bytes(200 + 1000 + 77 + 9 + 3)));
            assert_eq!(out[1], Some(bytes(77)));
        }
    }
}

/// A server that adds an error to its share of an opening of the per-client check — a z_c, or
/// a Beaver opening of the squares (the run's first opening) — to frame an honest client is
/// caught by the MAC check that runs before the refusals are decided: MAC_CHECK_FAILED at every
/// honest server, nobody refused. (With a malicious client present too, the run still aborts.)
#[test]
fn a_server_framing_an_honest_client_makes_the_run_abort() {
    for n in [2, 3] {
        for cheat in [Cheat::ShiftClientCheck { by: 1 }, Cheat::ShiftFirstOpen { by: 5 }] {
            for malicious in [false, true] {
                let kind = Kind::Unsigned(8);
                let p = three_clients(n, kind);
                let cheater = n - 1;
                let cheats = (0..n).map(|i| if i == cheater { cheat.clone() } else { Cheat::None }).collect();
                let mut s = servers::<Fp>(&p, 14 + kind.input_masks(), cheats);
                let ci = three_clients_inputs(&mut s, kind, malicious);
                let mut inputs = vec![Vec::new(); n];
                inputs[0].push(bytes(3));
                let r = run_full(&mut s, &p, &inputs, &vec![ci; n]);
                for (i, res) in r.iter().enumerate().filter(|(i, _)| *i != cheater) {
                    let e = res.as_ref().expect_err("a framing server must not get a refusal through");
                    assert_eq!(*e, SpdzError::MacCheckFailed { phase: "client range check" }, "{cheat:?} server {i}");
                }
            }
        }
    }
}

// ------------------------------------------------------------------ masks used once

#[test]
fn client_masks_are_used_once() {
    let n = 2;
    let p = one_field_client_input(n);
    // Enough for three runs and four masks.
    let mut counts = p.requirements();
    counts.triples = 3 * counts.triples + 4;
    counts.masks.iter_mut().for_each(|m| *m *= 3);
    let mut s = Dealer::<Fp>::new(n).parties(network(n), &counts, honest(n));
    let inputs = vec![vec![bytes(3)], vec![]];
    let (first, shares) = masks(&mut s, 2);
    let ci = client::<Fp>(&shares, first, &[Kind::Field, Kind::Field], &[bytes(5), bytes(6)]).unwrap();
    let use0 = vec![ci[0].clone()];
    let out = run(&mut s, &p, &inputs, &vec![use0.clone(); n]);
    assert!(out.iter().all(|o| o.as_ref().unwrap()[0] == Some(bytes(8))));
    assert!(s.iter().all(|q| q.client_masks_held() == 1));
    // Mask 0 again: refused by every server on its own, before any message; still usable.
    for q in s.iter_mut() {
        let me = q.me();
        assert!(matches!(alone(q, &p, &inputs[me], &use0), SpdzError::InvalidArgument(_)));
    }
    // Two inputs naming one mask.
    let mut b = Builder::new(FieldKind::Prime, n);
    let x1 = b.client_input(Kind::Field);
    let x2 = b.client_input(Kind::Field);
    let t = b.add(x1, x2);
    b.output(t, Kind::Field, None);
    let p2 = b.build();
    let twice = vec![ci[1].clone(), ci[1].clone()];
    assert!(matches!(alone(&mut s[0], &p2, &[], &twice), SpdzError::InvalidArgument(_)));
    // The other mask still works.
    let out = run(&mut s, &p, &inputs, &vec![vec![ci[1].clone()]; n]);
    assert!(out.iter().all(|o| o.as_ref().unwrap()[0] == Some(bytes(9))));
    // Dropped masks cannot be used; dropping what is not held is harmless.
    let (first, shares) = masks(&mut s, 2);
    assert_eq!(first, 2, "ids are never handed out twice");
    let ci = client::<Fp>(&shares, first, &[Kind::Field, Kind::Field], &[bytes(5), bytes(6)]).unwrap();
    for q in s.iter_mut() {
        q.drop_client_masks(first + 1, 1);
        q.drop_client_masks(0, 2);
        q.drop_client_masks(u64::MAX, usize::MAX);
        assert_eq!(q.client_masks_held(), 1);
    }
    for q in s.iter_mut() {
        let me = q.me();
        assert!(matches!(alone(q, &p, &inputs[me], &[ci[1].clone()]), SpdzError::InvalidArgument(_)));
    }
    let out = run(&mut s, &p, &inputs, &vec![vec![ci[0].clone()]; n]);
    assert!(out.iter().all(|o| o.as_ref().unwrap()[0] == Some(bytes(8))));
    assert!(s.iter().all(|q| q.client_masks_held() == 0));
    // A mask id never handed out.
    let never = ClientInput { client: 0, first_mask: 1000, masked: vec![bytes(1)] };
    assert!(matches!(alone(&mut s[0], &p, &inputs[0], &[never]), SpdzError::InvalidArgument(_)));
}

#[test]
fn client_masks_are_bounded() {
    let p = Builder::new(FieldKind::Prime, 2).build();
    let mut s = servers::<Fp>(&p, 3, honest(2));
    // Refused by the bound itself (not by the dealer-made party's lack of triples, below).
    let e = run_local(s[0].client_masks(MAX_CLIENT_MASKS + 1)).unwrap().unwrap_err();
    assert!(matches!(&e, SpdzError::InvalidArgument(m) if m.contains("client masks may be held")), "{e:?}");
    assert_eq!(s[0].store().counts().triples, 3, "nothing consumed");
    assert_eq!(s[0].client_masks_held(), 0);
    // A dealer-made party cannot make the triples it lacks.
    let e = run_local(s[0].client_masks(4)).unwrap().unwrap_err();
    assert!(matches!(e, SpdzError::InvalidArgument(_)), "{e:?}");
    assert_eq!(run_local(s[0].client_masks(0)).unwrap().unwrap(), (0, vec![]));
}

// ------------------------------------------------------------------ run's checks, the format

#[test]
fn run_refuses_malformed_client_inputs_before_any_message() {
    let n = 2;
    let mut b = Builder::new(FieldKind::Prime, n);
    let x = b.client_input(Kind::Unsigned(2));
    b.output(x, Kind::Unsigned(0), None);
    let p = b.build();
    let mut s = servers::<Fp>(&p, 2, honest(n));
    let (first, shares) = masks(&mut s, 2);
    let ci = client::<Fp>(&shares, first, &[Kind::Unsigned(2)], &[bytes(3)]).unwrap();
    let bad_cases: Vec<Vec<ClientInput>> = vec![
        vec![],
        vec![ci[0].clone(), ci[0].clone()],
        vec![ClientInput { client: 0, first_mask: first, masked: ci[0].masked[..1].to_vec() }],
        vec![ClientInput { client: 0, first_mask: first, masked: vec![ci[0].masked[0]; 3] }],
        vec![ClientInput { client: 0, first_mask: first, masked: vec![[0xff; 16]; 2] }],
        vec![ClientInput { client: 0, first_mask: u64::MAX, masked: ci[0].masked.clone() }],
    ];
    for (k, c) in bad_cases.iter().enumerate() {
        let e = alone(&mut s[0], &p, &[], c);
        assert!(matches!(e, SpdzError::InvalidArgument(_)), "case {k}: {e:?}");
    }
    // Plain `run` refuses a program with client inputs.
    let e = run_local(s[0].run(&p, &[], |_, _| {})).unwrap().unwrap_err();
    assert_eq!(e, SpdzError::InvalidArgument("program has client inputs: use run_with_clients".into()));
    // After all that, the servers are still usable.
    let out = run(&mut s, &p, &[vec![], vec![]], &vec![ci; n]);
    assert!(out.iter().all(|o| o.as_ref().unwrap()[0] == Some(bytes(3))));
}

#[test]
fn the_client_owner_in_the_format() {
    let p = one_field_client_input(3);
    let enc = p.encode();
    let q = Program::decode(&enc).unwrap();
    assert_eq!(q, p);
    assert_eq!(q.inputs[0].owner, Owner::Client);
    // The same bytes with owner = parties (3) or CLIENT_OWNER − 1 instead: refused.
    let sentinel = [0xff, 0xff, 0xff, 0xff, 0x0f];
    let at = enc.windows(5).position(|w| w == sentinel).unwrap();
    for owner in [vec![3u8], vec![0xfe, 0xff, 0xff, 0xff, 0x0f]] {
        let mut b = enc[..at].to_vec();
        b.extend_from_slice(&owner);
        b.extend_from_slice(&enc[at + 5..]);
        assert!(matches!(Program::decode(&b), Err(ProgramError::Invalid { .. })), "{owner:?}");
    }
    assert_eq!(CLIENT_OWNER, u32::MAX);
    // The binding's wire form of client inputs.
    let mut b = Builder::new(FieldKind::Prime, 2);
    let x = b.client_input(Kind::Field);
    let y = b.client_input(Kind::Signed(3));
    let t = b.add(x, y);
    b.output(t, Kind::Field, None);
    let p = b.build();
    let ci = vec![
        ClientInput { client: 0, first_mask: 7, masked: vec![bytes(1)] },
        ClientInput { client: 0xdead_beef, first_mask: 1 << 40, masked: vec![bytes(2), bytes(3), bytes(4)] },
    ];
    let wire = encode_client_inputs(&ci);
    assert_eq!(wire.len(), 12 + 16 + 12 + 48);
    assert_eq!(decode_client_inputs(&p, &wire).unwrap(), ci);
    for len in [0, wire.len() - 1, wire.len() + 1] {
        let mut w = wire.clone();
        w.resize(len, 0);
        assert!(matches!(decode_client_inputs(&p, &w), Err(SpdzError::InvalidArgument(_))), "{len} bytes");
    }
    // Each input carries its client id after its first mask id.
    assert_eq!(wire[8..12], 0u32.to_le_bytes());
    assert_eq!(wire[36..40], 0xdead_beef_u32.to_le_bytes());
    let mut other = wire.clone();
    other[36] ^= 1;
    assert_eq!(decode_client_inputs(&p, &other).unwrap()[1].client, 0xdead_beee);
    assert!(ClientInput::split(0, 7, &[Kind::Field, Kind::Signed(3)], &wire[12..28]).is_err());
    let split = ClientInput::split(0, 7, &[Kind::Field, Kind::Signed(3)], &[&wire[12..28], &wire[40..]].concat()).unwrap();
    assert_eq!(split[0], ci[0]);
    assert_eq!((split[1].client, split[1].first_mask), (0, 8));
}
