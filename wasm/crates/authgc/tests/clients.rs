//! Client inputs (`online::clients`): a Vickrey auction among client bidders that n servers
//! garble and evaluate, against the plaintext auction, with absent clients; a server that changes
//! the mask shares it gives a client gets that client refused, never its input changed; a client
//! whose check fails is refused alone; servers holding different client messages abort; a
//! tampered opening of the client sketches fails its MAC check; bad arguments are refused.

use crate::common;
use common::*;
use core::future::Future;
use core::pin::Pin;
use futures::channel::{mpsc, oneshot};
use futures::future::{join, join_all};
use futures::StreamExt;
use webmpc_authgc::online::{
    client_share_bytes, GateSource, AuthGcParty, ClientMasks, ClientMessage, Options, Outputs, PreparedCircuit, Recipients, Roles,
    CLIENT, CLIENT_CHECK_BITS,
};
use webmpc_authgc::AuthGcError;
use webmpc_core::channel::memory::{network, run_local};
use webmpc_core::channel::{Channel, PartyId};

const WIDTH: u32 = 16;

/// One auction among client bidders and how it deviates.
#[derive(Clone, Default)]
struct Scenario {
    /// Each slot's bid; `None`: no client came.
    bids: Vec<Option<u64>>,
    /// Server s flips bit b of the mask shares it gives slot k's client: (s, k, b).
    flip_share: Option<(PartyId, usize, usize)>,
    /// Slot k's client sends a view it did not compute.
    wrong_view: Option<usize>,
    /// Slot k's client sets its presence bit to 0.
    not_present: Option<usize>,
    /// Server s runs with another masked value for slot k than the client sent: (s, k).
    altered_message: Option<(PartyId, usize)>,
    /// Server s edits its online messages.
    edit: Option<(PartyId, Edit)>,
    /// The servers reserve the inputs (`reserve_inputs`) instead of preparing the circuit, and
    /// garble it in chunks of this many gates during the run.
    reserve: Option<usize>,
}

type ServerResult = Result<(Outputs, Vec<usize>), AuthGcError>;

fn random_seed() -> [u8; 32] {
    let mut s = [0u8; 32];
    webmpc_core::random::fill(&mut s).unwrap();
    s
}

fn client_roles(slots: usize) -> Roles {
    Roles { evaluator: 0, owners: vec![CLIENT; slots], outputs: vec![Recipients::ALL; 2] }
}

/// Runs `sc` with n servers: every server prepares, hands its mask shares to the clients, and
/// runs with the messages the clients sent back.
fn run_clients<S: PreSetup>(n: usize, sc: &Scenario) -> Vec<ServerResult> {
    let slots = sc.bids.len();
    let circuit = PreparedCircuit::new(vickrey_clients(slots, WIDTH)).unwrap();
    let values = (0..slots)
        .map(|k| {
            sc.bids[k].map(|bid| {
                let mut value = vickrey_client_value(bid, WIDTH);
                value[0] = sc.not_present != Some(k);
                value
            })
        })
        .collect();
    run_on::<S>(n, sc, &circuit, &client_roles(slots), vec![Vec::new(); n], values)
}

/// [`run_clients`] for any circuit: `party_inputs[p]` are server p's own input values, `values[k]`
/// the k-th client value (`None`: that client does not come); `sc`'s deviations apply.
fn run_on<S: PreSetup>(
    n: usize,
    sc: &Scenario,
    circuit: &PreparedCircuit,
    roles: &Roles,
    party_inputs: Vec<Vec<Vec<bool>>>,
    values: Vec<Option<Vec<bool>>>,
) -> Vec<ServerResult> {
    let slots = values.len();
    let (seed, session) = (random_seed(), random_seed());
    let (share_tx, mut share_rx) = mpsc::unbounded::<(PartyId, Vec<Vec<u8>>)>();
    let (msg_txs, msg_rxs): (Vec<_>, Vec<_>) = (0..n).map(|_| oneshot::channel::<Vec<Option<ClientMessage>>>()).unzip();
    let widths: Vec<usize> =
        roles.owners.iter().zip(&circuit.circuit().inputs).filter(|(&o, _)| o == CLIENT).map(|(_, &w)| w as usize).collect();
    let servers = network(n).into_iter().zip(msg_rxs).zip(party_inputs).map(|((mem, rx), mine)| {
        let p = mem.party();
        let edit = sc.edit.as_ref().filter(|(s, _)| *s == p).map(|(_, e)| e.clone());
        let share_tx = share_tx.clone();
        Box::pin(async move {
            let (ch, fpre) = test_channels(mem, edit);
            let pre = S::setup(fpre, seed).await?;
            let options = sc.reserve.map_or_else(Options::default, |chunk_gates| Options { chunk_gates, ..Options::default() });
            let mut party = AuthGcParty::new(pre, ch, session, options)?;
            match sc.reserve {
                None => party.prepare(circuit, roles, |_, _, _| {}).await?,
                Some(_) => party.reserve_inputs(circuit.source().shape(), roles).await?,
            }
            let client_values: Vec<usize> = (0..roles.owners.len()).filter(|&v| roles.owners[v] == CLIENT).collect();
            let mut shares = client_values.iter().map(|&v| party.client_mask_shares(v)).collect::<Result<Vec<_>, _>>()?;
            if let Some((_, k, bit)) = sc.flip_share.filter(|f| f.0 == p) {
                shares[k][bit / 8] ^= 1 << (bit % 8);
            }
            share_tx.unbounded_send((p, shares)).expect("the clients listen");
            drop(share_tx);
            let mut messages = rx.await.map_err(|_| AuthGcError::InvalidArgument("no client messages".into()))?;
            if let Some((_, k)) = sc.altered_message.filter(|a| a.0 == p) {
                let m = messages[k].as_mut().expect("slot k has a client");
                m.masked[1] ^= true;
            }
            party.run_with_clients(&mut circuit.source(), roles, &mine, &messages, |_, _, _| {}).await
        }) as Pin<Box<dyn Future<Output = ServerResult> + '_>>
    });
    let servers: Vec<_> = servers.collect();
    drop(share_tx);
    let clients = async move {
        let mut got = vec![Vec::new(); n];
        let mut heard = 0;
        while let Some((p, s)) = share_rx.next().await {
            got[p] = s;
            heard += 1;
        }
        if heard < n {
            return; // a server failed before it gave masks: the others see no messages
        }
        // Privacy of the masks: no server's shares alone are the whole of a client's λ and μ
        // (what a server that did not reshare its part would hand out; 2^-(w+40) by chance).
        for k in 0..slots {
            let mut whole = vec![0u8; got[0][k].len()];
            for g in &got {
                whole.iter_mut().zip(&g[k]).for_each(|(a, b)| *a ^= b);
            }
            for (s, g) in got.iter().enumerate() {
                assert_ne!(g[k], whole, "server {s}'s mask shares for client {k} are the whole masks");
            }
        }
        let messages: Vec<Option<ClientMessage>> = (0..slots)
            .map(|k| {
                values[k].as_ref().map(|value| {
                    let shares: Vec<&[u8]> = got.iter().map(|g| g[k].as_slice()).collect();
                    let masks = ClientMasks::combine(widths[k], &shares).unwrap();
                    let mut m = masks.message(value).unwrap();
                    if sc.wrong_view == Some(k) {
                        m.view[7] ^= true;
                    }
                    m
                })
            })
            .collect();
        for tx in msg_txs {
            let _ = tx.send(messages.clone());
        }
    };
    run_local(join(join_all(servers), clients)).expect("the servers deadlocked").0
}

/// The auction's outcome when the bids of the slots in `dropped` (and absent slots) count as 0.
fn expected(sc: &Scenario, dropped: &[usize]) -> (u64, u64) {
    let bids: Vec<u64> =
        sc.bids.iter().enumerate().map(|(k, b)| if dropped.contains(&k) { 0 } else { b.unwrap_or(0) }).collect();
    let (w, s) = vickrey_reference(&bids);
    (w as u64, s)
}

/// Every server finished, refused exactly `refused`, and output the auction without `dropped`.
fn assert_outcome(results: &[ServerResult], sc: &Scenario, refused: &[usize], dropped: &[usize]) {
    let want = expected(sc, dropped);
    for (p, r) in results.iter().enumerate() {
        let (out, got_refused) = r.as_ref().unwrap_or_else(|e| panic!("server {p} failed: {e}"));
        assert_eq!(got_refused, refused, "server {p}'s refused clients");
        let winner = bits_u64(out[0].as_ref().expect("public output"));
        let price = bits_u64(out[1].as_ref().expect("public output"));
        assert_eq!((winner, price), want, "server {p}'s outcome");
    }
}

fn random_bids(slots: usize, absent: &[usize]) -> Vec<Option<u64>> {
    let mut bytes = vec![0u8; 2 * slots];
    webmpc_core::random::fill(&mut bytes).unwrap();
    (0..slots)
        .map(|k| (!absent.contains(&k)).then(|| u64::from(u16::from_le_bytes([bytes[2 * k], bytes[2 * k + 1]]))))
        .collect()
}

fn honest_clients_with_absent_ones<S: PreSetup>() {
    for n in [2, 3] {
        let sc = Scenario { bids: random_bids(7, &[2, 5]), ..Scenario::default() };
        let results = run_clients::<S>(n, &sc);
        assert_outcome(&results, &sc, &[], &[]);
    }
    // The winner is a client that came even when every other slot is empty, and ties go to the
    // lowest slot among clients that came.
    let sc = Scenario { bids: vec![None, Some(0), None, Some(9)], ..Scenario::default() };
    assert_outcome(&run_clients::<S>(2, &sc), &sc, &[], &[]);
    let sc = Scenario { bids: vec![None, Some(40), Some(40), None], ..Scenario::default() };
    assert_outcome(&run_clients::<S>(3, &sc), &sc, &[], &[]);
}

/// A server that flips any bit of the shares it gives a client — of λ (the presence bit, a bid
/// bit) or of μ — gets that client refused by every server; the auction runs without it and
/// nobody else is touched.
fn server_changing_a_clients_mask_gets_it_refused<S: PreSetup>() {
    let w = WIDTH as usize + 1;
    for (n, server, bit) in [(2, 1, 0), (2, 0, 5), (3, 2, w - 1), (3, 1, w), (3, 0, w + CLIENT_CHECK_BITS - 1)] {
        let mut bids = random_bids(5, &[3]);
        bids[1] = Some(u64::from(u16::MAX)); // the client changed would win
        let sc = Scenario { bids, flip_share: Some((server, 1, bit)), ..Scenario::default() };
        let results = run_clients::<S>(n, &sc);
        assert_outcome(&results, &sc, &[1], &[1]);
    }
}

/// Inputs reserved instead of a prepared circuit: the run garbles and evaluates chunk by chunk
/// (small chunks here), with the same client checks.
fn clients_through_reserved_inputs<S: PreSetup>() {
    for n in [2, 3] {
        let sc = Scenario { bids: random_bids(6, &[4]), reserve: Some(50), ..Scenario::default() };
        assert_outcome(&run_clients::<S>(n, &sc), &sc, &[], &[]);
    }
    let mut bids = random_bids(4, &[]);
    bids[2] = Some(u64::from(u16::MAX));
    let sc = Scenario { bids, flip_share: Some((1, 2, 3)), reserve: Some(64), ..Scenario::default() };
    assert_outcome(&run_clients::<S>(3, &sc), &sc, &[2], &[2]);
    let sc = Scenario { bids: random_bids(4, &[]), altered_message: Some((0, 3)), reserve: Some(64), ..Scenario::default() };
    for (p, r) in run_clients::<S>(2, &sc).iter().enumerate().filter(|&(p, _)| p != 0) {
        assert!(
            matches!(r, Err(AuthGcError::ParameterMismatch { peer: 0, what: "client messages" })),
            "server {p}: expected a client-message mismatch, got {:?}",
            r.as_ref().err()
        );
    }
}

/// Random circuits whose inputs mix the servers' own values and clients' (all present), prepared
/// or reserved: every server's outputs match plaintext evaluation.
fn random_circuits_over_client_and_party_inputs<S: PreSetup>() {
    let mut coins = [0u8; 96];
    webmpc_core::random::fill(&mut coins).unwrap();
    for (round, seed) in coins.chunks(24).enumerate() {
        let n = 2 + round % 2;
        let widths = [3u32, 5, 4, 2];
        let owners = [CLIENT, 0, CLIENT, n - 1];
        let c = random_circuit(seed, &widths);
        let values: Vec<Vec<bool>> = widths.iter().enumerate().map(|(i, &w)| (0..w).map(|k| (seed[i] >> k) & 1 == 1).collect()).collect();
        let want = c.evaluate(&values).unwrap();
        let circuit = PreparedCircuit::new(c).unwrap();
        let roles = Roles { evaluator: round % n, owners: owners.to_vec(), outputs: vec![Recipients::ALL] };
        let mut party_inputs = vec![Vec::new(); n];
        party_inputs[0].push(values[1].clone());
        party_inputs[n - 1].push(values[3].clone());
        let client_values = vec![Some(values[0].clone()), Some(values[2].clone())];
        let sc = Scenario { reserve: (round >= 2).then_some(3), ..Scenario::default() };
        for (p, r) in run_on::<S>(n, &sc, &circuit, &roles, party_inputs, client_values).into_iter().enumerate() {
            let (out, refused) = r.unwrap_or_else(|e| panic!("round {round}, server {p}: {e}"));
            assert!(refused.is_empty());
            assert_eq!(out[0].as_ref(), Some(&want[0]), "round {round}, server {p}");
        }
    }
}

fn client_with_a_wrong_view_is_refused_alone<S: PreSetup>() {
    let sc = Scenario { bids: random_bids(5, &[0]), wrong_view: Some(2), ..Scenario::default() };
    assert_outcome(&run_clients::<S>(3, &sc), &sc, &[2], &[2]);
}

fn client_that_is_not_present_counts_as_absent<S: PreSetup>() {
    let mut bids = random_bids(4, &[]);
    bids[3] = Some(u64::from(u16::MAX));
    let sc = Scenario { bids, not_present: Some(3), ..Scenario::default() };
    assert_outcome(&run_clients::<S>(2, &sc), &sc, &[], &[3]);
}

/// A server that runs with another message for a client than the one the client signed (what
/// the SDK's digest exchange guarantees every server holds) aborts every honest server before
/// any masked value is used.
fn servers_holding_different_client_messages_abort<S: PreSetup>() {
    let sc = Scenario { bids: random_bids(4, &[]), altered_message: Some((2, 1)), ..Scenario::default() };
    let results = run_clients::<S>(3, &sc);
    for (p, r) in results.iter().enumerate().filter(|&(p, _)| p != 2) {
        match r {
            Err(AuthGcError::ParameterMismatch { peer: 2, what: "client messages" }) => {}
            other => panic!("server {p}: expected a client-message mismatch with server 2, got {:?}", other.as_ref().err()),
        }
    }
}

/// A server that flips a bit of its shares in the flight that opens the client sketches fails
/// its MAC check there (a flipped sketch share would otherwise get an honest client refused).
fn tampered_sketch_opening_fails_its_mac_check<S: PreSetup>() {
    let agreement = 96; // the run's agreement heads the opening: content hash, digest, client digest
    let hash = PreparedCircuit::new(vickrey_clients(4, WIDTH)).unwrap().source().shape().hash;
    let edit: Edit = std::rc::Rc::new(move |to, _, m: &mut Vec<u8>| {
        // The opening's message to party 0: the one led by the run's agreement (prepare's is
        // shorter, or rode on F_Pre; garbled tables do not start with the circuit's hash).
        if to == 0 && m.len() > agreement && m[..32] == hash {
            m[agreement] ^= 1;
        }
    });
    let sc = Scenario { bids: random_bids(4, &[1]), edit: Some((1, edit)), ..Scenario::default() };
    let results = run_clients::<S>(3, &sc);
    match &results[0] {
        Err(e @ AuthGcError::CheatingDetected { .. }) => {
            assert!(e.to_string().contains("party 1"), "the MAC check names the sender: {e}")
        }
        other => panic!("server 0: expected the opening's MAC check to fail, got {:?}", other.as_ref().map(|r| &r.1)),
    }
    assert!(results.iter().all(|r| r.is_err()), "every server aborts");
}

/// A server that flips a bit of its shares in the second opening (the refused clients' presence
/// masks) fails that opening's MAC check, naming it: a refused client's presence bit cannot be
/// turned back to 1 by a server.
fn tampered_presence_opening_fails_its_mac_check<S: PreSetup>() {
    let agreement = 96;
    let hash = PreparedCircuit::new(vickrey_clients(4, WIDTH)).unwrap().source().shape().hash;
    let after_opening = std::rc::Rc::new(core::cell::Cell::new(false));
    let edit: Edit = std::rc::Rc::new(move |to, _, m: &mut Vec<u8>| {
        if to != 0 {
            return;
        }
        if m.len() > agreement && m[..32] == hash {
            after_opening.set(true); // the first opening (led by the run's agreement): left alone
        } else if after_opening.replace(false) {
            m[0] ^= 1; // the next message to party 0: the presence masks' opening
        }
    });
    let sc = Scenario { bids: random_bids(4, &[]), wrong_view: Some(1), edit: Some((1, edit)), ..Scenario::default() };
    let results = run_clients::<S>(3, &sc);
    match &results[0] {
        Err(e @ AuthGcError::CheatingDetected { .. }) => assert!(e.to_string().contains("party 1"), "names the sender: {e}"),
        other => panic!("server 0: expected the presence opening's MAC check to fail, got {:?}", other.as_ref().map(|r| &r.1)),
    }
}

/// Every honest run's clients see mask shares none of which alone is the whole (the check sits
/// in the client side of [`run_on`]); here on its own, at 2 and 3 servers.
fn no_server_alone_holds_a_clients_masks<S: PreSetup>() {
    for n in [2, 3] {
        let sc = Scenario { bids: random_bids(5, &[]), ..Scenario::default() };
        assert_outcome(&run_clients::<S>(n, &sc), &sc, &[], &[]);
    }
}

on_both_preprocessors!(
    honest_clients_with_absent_ones,
    clients_through_reserved_inputs,
    random_circuits_over_client_and_party_inputs,
    server_changing_a_clients_mask_gets_it_refused,
    client_with_a_wrong_view_is_refused_alone,
    client_that_is_not_present_counts_as_absent,
    servers_holding_different_client_messages_abort,
    tampered_sketch_opening_fails_its_mac_check,
    tampered_presence_opening_fails_its_mac_check,
    no_server_alone_holds_a_clients_masks,
);

#[test]
fn client_messages_round_trip_and_refuse_bad_encodings() {
    let w = 33;
    let mut shares = vec![vec![0u8; client_share_bytes(w)]; 3];
    for s in &mut shares {
        webmpc_core::random::fill(s).unwrap();
        let last = s.len() - 1;
        s[last] &= (1u8 << ((w + CLIENT_CHECK_BITS) % 8)) - 1;
    }
    let views: Vec<&[u8]> = shares.iter().map(Vec::as_slice).collect();
    let masks = ClientMasks::combine(w, &views).unwrap();
    let value: Vec<bool> = (0..w).map(|i| i % 3 == 0).collect();
    let m = masks.message(&value).unwrap();
    let bytes = m.encode();
    assert_eq!(bytes.len(), ClientMessage::encoded_len(w));
    assert_eq!(ClientMessage::decode(&bytes, w).unwrap(), m);
    // Two messages for one value differ in their challenge (fresh coins each time).
    assert_ne!(masks.message(&value).unwrap().challenge, m.challenge);
    assert!(ClientMessage::decode(&bytes[1..], w).is_err(), "short");
    let mut padded = bytes.clone();
    padded[w / 8] |= 0x80; // a padding bit of x̂
    assert!(ClientMessage::decode(&padded, w).is_err(), "nonzero padding");
    assert!(ClientMessage::decode(&bytes, 0).is_err(), "empty value");
    assert!(ClientMasks::combine(w, &views[..1]).is_err(), "one server's shares alone");
    assert!(ClientMasks::combine(w, &[&shares[0], &shares[1][1..]]).is_err(), "a short share");
    assert!(masks.message(&value[1..]).is_err(), "a value of the wrong width");
    // A run's messages behind their flags: decoded in order; a bad flag, a truncation or bytes
    // left over are refused.
    let all = [vec![0u8], vec![1u8], bytes.clone()].concat();
    assert_eq!(ClientMessage::decode_all(&all, &[w, w]).unwrap(), vec![None, Some(m.clone())]);
    assert!(ClientMessage::decode_all(&all[..all.len() - 1], &[w, w]).is_err(), "truncated");
    assert!(ClientMessage::decode_all(&[all.clone(), vec![0]].concat(), &[w, w]).is_err(), "left over");
    assert!(ClientMessage::decode_all(&[2u8], &[w]).is_err(), "bad flag");
    assert!(ClientMessage::decode_all(&[], &[w]).is_err(), "missing");
    assert!(ClientMessage::decode_all(&[vec![1u8], padded].concat(), &[w]).is_err(), "nonzero padding inside");
}

#[test]
fn client_inputs_refuse_bad_arguments_before_anything_is_sent() {
    let slots = 3;
    let circuit = PreparedCircuit::new(vickrey_clients(slots, WIDTH)).unwrap();
    let roles = client_roles(slots);
    let session = random_seed();
    let results = run_local(join_all(network(2).into_iter().map(|mem| {
        let (circuit, roles) = (&circuit, &roles);
        async move {
            let (ch, fpre) = test_channels(mem, None);
            let pre = Ideal::setup(fpre, session).await.unwrap();
            let mut party = AuthGcParty::new(pre, ch, session, Options::default()).unwrap();
            let mut errors = Vec::new();
            errors.push(party.client_mask_shares(0).err());
            errors.push(party.run(&mut circuit.source(), roles, &[], |_, _, _| {}).await.err());
            errors.push(party.run_with_clients(&mut circuit.source(), roles, &[], &[None, None, None], |_, _, _| {}).await.err());
            party.prepare(circuit, roles, |_, _, _| {}).await.unwrap();
            errors.push(party.run_with_clients(&mut circuit.source(), roles, &[], &[None, None], |_, _, _| {}).await.err());
            let short = ClientMessage { masked: vec![false; 3], challenge: vec![], view: vec![] };
            errors.push(party.run_with_clients(&mut circuit.source(), roles, &[], &[Some(short), None, None], |_, _, _| {}).await.err());
            // The prepared material survives the refusals: an all-absent run still works.
            let out = party.run_with_clients(&mut circuit.source(), roles, &[], &[None, None, None], |_, _, _| {}).await;
            (errors, out)
        }
    })))
    .expect("no deadlock");
    for (errors, out) in results {
        for e in errors {
            assert!(matches!(e, Some(AuthGcError::InvalidArgument(_))), "expected InvalidArgument, got {e:?}");
        }
        let (out, refused) = out.expect("the all-absent run");
        assert!(refused.is_empty());
        assert_eq!(bits_u64(out[1].as_ref().unwrap()), 0, "no bid counts");
    }
}
