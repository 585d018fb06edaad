//! Parallel instances of one party (what the SDK runs in separate workers over sub-channels): an
//! instance set up with the party's MAC key share makes triples and bits that the party can use
//! as its own; material made under another key fails the online phase's MAC check.

use futures::future::join_all;
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_ot::SessionId;
use webmpc_spdz::program::{Builder, Kind, Program};
use webmpc_spdz::{FieldKind, Fp, Party, SpdzError};

/// x·y + z·x < 2^40 with three 20-bit inputs: triples for the products, bits for the comparison.
fn program() -> Program {
    let mut b = Builder::new(FieldKind::Prime, 3);
    let (x, y, z) = (b.input(0, Kind::Unsigned(20)), b.input(1, Kind::Unsigned(20)), b.input(2, Kind::Unsigned(20)));
    let xy = b.mul(x, y);
    let zx = b.mul(z, x);
    let s = b.add(xy, zx);
    let lim = b.constant(webmpc_spdz::program::const_u64(1 << 39));
    let lt = b.lt(s, lim, 41);
    b.output(s, Kind::Unsigned(0), None);
    b.output(lt, Kind::Unsigned(0), None);
    b.build()
}

/// Three parties whose triples and bits all come from a second set of parties (their instances,
/// over a network of their own), set up with the same Δ^(i) or, with `same_delta: false`, their own.
fn run_with_instance_material(same_delta: bool) -> Vec<Result<Vec<u128>, SpdzError>> {
    let program = program();
    let need = program.requirements();
    let sid = SessionId::random().unwrap();
    let isid = SessionId::random().unwrap();
    let (program, sid, isid, need) = (&program, &sid, &isid, &need);
    let primaries = run_local(join_all(network(3).into_iter().map(|ch| Party::<Fp, MemoryChannel>::setup(ch, sid))))
        .unwrap()
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    // The instances: each with its party's Δ (or a fresh one), on another network.
    let deltas: Vec<Fp> = primaries.iter().map(|p| p.delta_for_instances()).collect();
    let instances = run_local(join_all(network(3).into_iter().zip(&deltas).map(|(ch, d)| async move {
        let mut q = if same_delta { Party::<Fp, MemoryChannel>::setup_with_delta(ch, isid, *d).await? } else { Party::setup(ch, isid).await? };
        q.preprocess_bits(need.bits, |_, _| {}).await?;
        q.preprocess_triples(need.triples, |_, _| {}).await?;
        Ok::<_, SpdzError>(q)
    })))
    .unwrap()
    .into_iter()
    .collect::<Result<Vec<_>, _>>()
    .unwrap();
    let mut primaries = primaries;
    for (p, mut q) in primaries.iter_mut().zip(instances) {
        let (bytes, t, b) = q.take_material();
        assert_eq!((t, b), (need.triples, need.bits));
        assert_eq!(q.store().counts().triples, 0);
        p.put_material(&bytes, t, b).unwrap();
        assert_eq!(p.store().counts().triples, need.triples);
    }
    let inputs = [1000u128, 70_000 % (1 << 20), 999];
    run_local(join_all(primaries.iter_mut().enumerate().map(|(i, p)| async move {
        let out = p.run(program, &[inputs[i].to_le_bytes()], |_, _| {}).await?;
        Ok(out.into_iter().map(|o| u128::from_le_bytes(o.unwrap())).collect())
    })))
    .unwrap()
}

#[test]
fn an_instance_with_the_partys_delta_makes_material_the_party_can_use() {
    let want = 1000 * 70_000 + 999 * 1000;
    for r in run_with_instance_material(true) {
        assert_eq!(r.unwrap(), vec![want, 1]);
    }
}

#[test]
fn material_made_under_another_key_fails_the_mac_check() {
    for r in run_with_instance_material(false) {
        let e = r.unwrap_err();
        assert!(matches!(e, SpdzError::MacCheckFailed { .. }), "{e:?}");
    }
}

#[test]
fn malformed_material_is_refused() {
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let mut ps = run_local(join_all(network(2).into_iter().map(|ch| Party::<Fp, MemoryChannel>::setup(ch, sid))))
        .unwrap()
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let p = &mut ps[0];
    assert!(p.put_material(&[0u8; 95], 1, 0).is_err());
    assert!(p.put_material(&[0xffu8; 96], 1, 0).is_err(), "elements at or above p are not canonical");
    assert!(p.put_material(&[0u8; 32], 0, usize::MAX).is_err());
    assert_eq!(p.store().counts().triples, 0);
}
