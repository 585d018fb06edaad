//! Parallel instances of one party's F_Pre (what the SDK runs in separate workers over
//! sub-channels): an instance set up with the party's global key Δ_i makes AND triples and masks
//! that the party's primary takes into its pools and garbles with; a party whose instance used
//! another key is caught by the instance key check before anything is used (and, were that check
//! skipped, by the online checks only after the fact); malformed material is refused.

use crate::common;

use common::{reference, unhex};
use futures::future::join_all;
use webmpc_authgc::fpre::{Deviation, RealPreprocessor, Step};
use webmpc_authgc::online::material::{self, delta_fingerprint};
use webmpc_authgc::online::{AuthGcParty, Options, Outputs, PreparedCircuit, Recipients, Roles, SharedChannel};
use webmpc_authgc::preprocess::Preprocessor;
use webmpc_authgc::{AuthGcError, Phase, DEFAULT_RHO};
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits};
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_core::channel::PartyId;
use webmpc_core::{random, Block};
use webmpc_ot::SessionId;

type Ch = SharedChannel<MemoryChannel>;
type Party = AuthGcParty<RealPreprocessor<Ch>, Ch>;

/// How the parties' instances get their keys.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// Every instance with its party's Δ_i.
    Shared,
    /// Party `p`'s instances with a fresh key of their own (and, if `forge`, party p claims in
    /// its material that it is its primary's, as a corrupt party would).
    Other { party: PartyId, forge: bool },
}

/// Every party's primary and `k` parallel instances (instance i + 1 over a network of its own,
/// with its own session id), as the SDK sets them up.
fn setup(n: usize, k: usize, keys: Keys) -> Vec<Slot> {
    let session = SessionId::random().unwrap().0;
    let mut per_party: Vec<Vec<MemoryChannel>> = (0..n).map(|_| Vec::new()).collect();
    for _ in 0..=k {
        for (p, ch) in network(n).into_iter().enumerate() {
            per_party[p].push(ch);
        }
    }
    let out = run_local(join_all(per_party.into_iter().enumerate().map(|(me, chs)| async move {
        let mut chs = chs.into_iter();
        let ch = SharedChannel::new(chs.next().unwrap());
        let pre = RealPreprocessor::setup(ch.clone(), &SessionId(session).derive(b"fpre"), DEFAULT_RHO).await?;
        let delta = pre.delta_for_instances();
        let primary = AuthGcParty::new(pre, ch, session, Options::default())?;
        let mut instances = Vec::new();
        for (i, ch) in chs.enumerate() {
            let index = (i + 1) as u8;
            let isid = SessionId(session).derive(format!("instance/{index}").as_bytes());
            let key = match keys {
                Keys::Other { party, .. } if party == me => random::random_block()?,
                _ => delta,
            };
            let ch = SharedChannel::new(ch);
            let pre = RealPreprocessor::setup_with_delta(ch.clone(), &isid.derive(b"fpre"), DEFAULT_RHO, key, index).await?;
            assert_eq!(pre.delta(), key);
            instances.push(AuthGcParty::new_instance(pre, ch, isid.0, Options::default())?);
        }
        Ok::<_, AuthGcError>((primary, instances))
    })))
    .expect("no deadlock");
    out.into_iter().map(|r| Some(r.expect("honest setup"))).collect()
}

/// `total` shared out over the primary and `k` instances as the SDK does.
fn part(total: usize, parts: usize, i: usize) -> usize {
    total / parts + usize::from(i < total % parts)
}

/// A party's primary and its instances; `None` once the party stopped after an error (its
/// channels are dropped then, so its peers see it disconnect instead of waiting).
type Slot = Option<(Party, Vec<Party>)>;

/// Runs `f` on every party still there, dropping each party whose call failed.
fn each<T>(
    parties: Vec<Slot>,
    f: impl AsyncFn(&mut Party, &mut Vec<Party>) -> Result<T, AuthGcError>,
) -> (Vec<Slot>, Vec<Result<T, AuthGcError>>) {
    let f = &f;
    let out = run_local(join_all(parties.into_iter().map(|slot| async move {
        let Some((mut primary, mut instances)) = slot else {
            return (None, Err(AuthGcError::InvalidArgument("stopped earlier".into())));
        };
        match f(&mut primary, &mut instances).await {
            Ok(v) => (Some((primary, instances)), Ok(v)),
            Err(e) => (None, Err(e)),
        }
    })))
    .expect("no deadlock");
    out.into_iter().unzip()
}

/// Preprocesses `and_gates` triples and `masks` masks shared out over the primary and its
/// instances, then moves the instances' material into the primary (checked, or with
/// `unchecked`, without the fingerprint and the instance key check). Returns each party's result
/// of the hand-over.
fn preprocess(
    parties: Vec<Slot>,
    and_gates: usize,
    masks: usize,
    keys: Keys,
    unchecked: bool,
) -> (Vec<Slot>, Vec<Result<(usize, usize), AuthGcError>>) {
    each(parties, async |primary: &mut Party, instances: &mut Vec<Party>| {
        let me = primary.party();
        let k = instances.len() + 1;
        primary.preprocess(part(and_gates, k, 0), part(masks, k, 0), |_, _, _| {}).await?;
        let mut made = Vec::new();
        for (i, inst) in instances.iter_mut().enumerate() {
            inst.preprocess(part(and_gates, k, i + 1), part(masks, k, i + 1), |_, _, _| {}).await?;
            let mut bytes = inst.take_material().await?;
            assert_eq!(inst.pooled(), (0, 0), "taking empties the instance's pools");
            if let Keys::Other { party, forge: true } = keys {
                if party == me {
                    // A corrupt party's own code need not stop it: it claims its primary's key,
                    // and it skips its own checks of the others in the instance key check (which
                    // its keys under two Δ's would fail).
                    bytes[20..36].copy_from_slice(&delta_fingerprint(primary.preprocessor().delta()));
                    primary.preprocessor_mut().set_deviation(Some(Deviation::SkipOwnInstanceKeyChecks));
                }
            }
            made.push(bytes);
        }
        let refs: Vec<&[u8]> = made.iter().map(Vec::as_slice).collect();
        if unchecked {
            primary.put_material_unchecked(&refs)
        } else {
            primary.put_material(&refs).await
        }
    })
}

/// Runs `circuit` on every party's primary (prepare, then run) with `inputs[p]` for party p.
fn run(
    parties: Vec<Slot>,
    circuit: &PreparedCircuit,
    roles: &Roles,
    inputs: &[Vec<Vec<bool>>],
) -> (Vec<Slot>, Vec<Result<Outputs, AuthGcError>>) {
    each(parties, async |primary: &mut Party, _: &mut Vec<Party>| {
        let me = primary.party();
        primary.prepare(circuit, roles, |_, _, _| {}).await?;
        let mut source = circuit.source();
        primary.run(&mut source, roles, &inputs[me], |_, _, _| {}).await
    })
}

fn aes_job(n: usize) -> (Roles, Vec<Vec<Vec<bool>>>) {
    let key = bits_from_bytes_be(&unhex("000102030405060708090a0b0c0d0e0f"), 128);
    let pt = bits_from_bytes_be(&unhex("00112233445566778899aabbccddeeff"), 128);
    let mut inputs = vec![Vec::new(); n];
    inputs[0] = vec![key];
    inputs[1] = vec![pt];
    (Roles { evaluator: n - 1, owners: vec![0, 1], outputs: vec![Recipients::ALL] }, inputs)
}

fn aes_needs() -> (usize, usize) {
    let aes = reference("aes_128.txt");
    let ands = aes.circuit().stats().and as usize;
    (ands, ands + 256)
}

fn triple_batches(p: &Slot) -> u64 {
    p.as_ref().unwrap().0.preprocessor().bytes_by_step()[Step::HalfAnd as usize]
}

fn primary(p: &Slot) -> &Party {
    &p.as_ref().expect("the party is still there").0
}

#[test]
fn an_instance_with_the_partys_key_makes_material_the_primary_garbles_with() {
    // AES-128's known answer, 2 and 3 parties, with 1 and 2 instances besides the primary; the
    // pools hold exactly what the circuit needs, so prepare draws nothing from the primary's F_Pre.
    let aes = reference("aes_128.txt");
    let (ands, masks) = aes_needs();
    for (n, k) in [(2, 1), (2, 2), (3, 2)] {
        let parties = setup(n, k, Keys::Shared);
        let (parties, results) = preprocess(parties, ands, masks, Keys::Shared, false);
        for r in results {
            let (t, m) = r.expect("honest hand-over");
            assert_eq!((t, m), ((1..=k).map(|i| part(ands, k + 1, i)).sum(), (1..=k).map(|i| part(masks, k + 1, i)).sum()));
        }
        for p in &parties {
            assert_eq!(primary(p).pooled(), (ands, masks), "n = {n}, k = {k}");
        }
        let before: Vec<u64> = parties.iter().map(triple_batches).collect();
        let (roles, inputs) = aes_job(n);
        let (parties, results) = run(parties, aes, &roles, &inputs);
        for r in results {
            let out = r.expect("honest run");
            assert_eq!(bytes_be_from_bits(out[0].as_ref().unwrap()), unhex("69c4e0d86a7b0430d8cdb78070b4c55a"));
        }
        for (p, b) in parties.iter().zip(before) {
            assert_eq!(primary(p).pooled(), (0, 0));
            assert_eq!(triple_batches(p), b, "the run used the pooled material only");
        }
    }
}

#[test]
fn instances_keep_their_state_across_operations_and_a_comparison_runs_right() {
    // Three parties, a 64-bit comparison by subtraction (the sign of a − b) twice, on material
    // from two rounds of hand-over by the same instances (their tweak counters run on).
    let sub = reference("sub64.txt");
    let ands = sub.circuit().stats().and as usize;
    let mut parties = setup(3, 2, Keys::Shared);
    for (a, b) in [(5u64, 9u64), (1 << 40, 3)] {
        let results;
        (parties, results) = preprocess(parties, ands, ands + 128, Keys::Shared, false);
        for r in results {
            r.expect("honest hand-over");
        }
        let roles = Roles { evaluator: 2, owners: vec![0, 1], outputs: vec![Recipients::ALL] };
        let inputs = vec![vec![common::u64_bits(a, 64)], vec![common::u64_bits(b, 64)], vec![]];
        let results;
        (parties, results) = run(parties, sub, &roles, &inputs);
        for r in results {
            let out = r.expect("honest run");
            assert_eq!(common::bits_u64(out[0].as_ref().unwrap()), a.wrapping_sub(b));
        }
    }
}

#[test]
fn a_party_whose_instance_used_another_key_is_caught_by_the_instance_key_check() {
    // The corrupt party's own code is changed to pass its fingerprint check; every honest party
    // aborts at the hand-over, before any of the material is used, naming the corrupt party
    // (its own commitment and opening failed the check). Without the check, the honest parties
    // would accept it (see the next test).
    for (n, corrupt) in [(2, 1), (3, 0), (3, 2)] {
        let keys = Keys::Other { party: corrupt, forge: true };
        let parties = setup(n, 1, keys);
        let (ands, masks) = aes_needs();
        let (_, results) = preprocess(parties, ands, masks, keys, false);
        for (p, r) in results.iter().enumerate().filter(|&(p, _)| p != corrupt) {
            assert_eq!(
                r.as_ref().unwrap_err(),
                &AuthGcError::cheating(Phase::Independent, Some(corrupt), "instance global-key consistency check"),
                "n = {n}, party {p}"
            );
        }
    }
}

#[test]
fn without_the_checks_material_under_another_key_fails_the_online_mac_check() {
    // Party 0's instance authenticated under another key (a bug, with honest code), and the
    // material is taken in without the fingerprint and the instance key check: the first
    // F_Pre.AND opening fails party 0's MAC check — its keys are under one Δ and its primary
    // checks with another — and the verdict names party 1, who did nothing wrong. (With a corrupt
    // party in party 0's place, ignoring its own checks, the failures would instead land on the
    // honest evaluator's row checks and depend on honest mask shares.) Both reasons are why the
    // material is checked before it is used: the fingerprint at the party, the instance key
    // check across parties (the tests above).
    for n in [2, 3] {
        let other = 0;
        let parties = setup(n, 1, Keys::Other { party: other, forge: false });
        let (ands, masks) = aes_needs();
        // All the material from the instances, so that every gate uses it.
        let (parties, results) = each(parties, async |primary: &mut Party, instances: &mut Vec<Party>| {
            let inst = &mut instances[0];
            inst.preprocess(ands, masks, |_, _, _| {}).await?;
            let bytes = inst.take_material().await?;
            primary.put_material_unchecked(&[&bytes])
        });
        results.into_iter().for_each(|r| {
            r.unwrap();
        });
        let (roles, inputs) = aes_job(n);
        let (_, results) = run(parties, reference("aes_128.txt"), &roles, &inputs);
        assert!(results.iter().all(Result::is_err), "n = {n}: nobody gets an output");
        let e = results[other].as_ref().unwrap_err();
        assert!(
            matches!(e, AuthGcError::CheatingDetected { phase: Phase::Dependent, check: "F_Pre.AND opening of d and e", .. }),
            "n = {n}: {e:?}"
        );
    }
}

#[test]
fn material_made_under_another_key_or_malformed_is_refused_before_anything_is_sent() {
    let parties = setup(2, 1, Keys::Other { party: 0, forge: false });
    // Honest code at party 0: the instance's material carries its key's fingerprint, and the
    // primary refuses it locally (no message: party 1 is not called at all here).
    let (mut parties, made) = each(parties, async |_: &mut Party, instances: &mut Vec<Party>| {
        let inst = &mut instances[0];
        inst.preprocess(20, 30, |_, _, _| {}).await?;
        inst.take_material().await
    });
    let mine = made[0].as_ref().unwrap();
    let theirs = made[1].as_ref().unwrap();
    let p0 = &mut parties[0].as_mut().unwrap().0;
    let sent = p0.preprocessor().bytes_sent();
    let refused = |r: Result<(usize, usize), AuthGcError>| matches!(r, Err(AuthGcError::InvalidArgument(m)) if m.starts_with("instance material refused"));
    assert!(refused(run_local(p0.put_material(&[mine])).unwrap()), "another key");
    assert!(refused(run_local(p0.put_material(&[theirs])).unwrap()), "another party's view");
    let mut short = mine.clone();
    short.pop();
    assert!(refused(run_local(p0.put_material(&[&short])).unwrap()), "truncated");
    assert!(refused(run_local(p0.put_material(&[&[]])).unwrap()), "empty");
    assert!(refused(run_local(p0.put_material(&[&[0u8; material::HEADER_LEN]])).unwrap()), "no magic");
    assert_eq!(p0.pooled(), (0, 0));
    assert_eq!(p0.preprocessor().bytes_sent(), sent, "nothing was sent");
}

#[test]
fn an_instance_only_preprocesses_and_needs_a_proper_index_and_key() {
    let parties = setup(2, 1, Keys::Shared);
    let aes = reference("aes_128.txt");
    let (roles, inputs) = aes_job(2);
    let (_, results) = each(parties, async |_: &mut Party, instances: &mut Vec<Party>| {
        let inst = &mut instances[0];
        let me = inst.party();
        let a = inst.prepare(aes, &roles, |_, _, _| {}).await;
        let b = inst.run(&mut aes.source(), &roles, &inputs[me], |_, _, _| {}).await;
        Ok((a.map(|_| ()), b.map(|_| ())))
    });
    for r in results {
        let (a, b) = r.unwrap();
        assert!(matches!(a, Err(AuthGcError::InvalidArgument(_))));
        assert!(matches!(b, Err(AuthGcError::InvalidArgument(_))));
    }
    let sid = SessionId::random().unwrap();
    let ch = SharedChannel::new(network(2).remove(0));
    let key = random::random_block().unwrap();
    for (delta, index) in [(key, 0u8), (Block::ZERO, 1)] {
        let r = run_local(RealPreprocessor::setup_with_delta(ch.clone(), &sid, DEFAULT_RHO, delta, index)).unwrap();
        assert!(matches!(r, Err(AuthGcError::InvalidArgument(_))));
    }
}
