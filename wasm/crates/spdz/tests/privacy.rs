//! Privacy of the sharings on **real** MASCOT preprocessing (a trusted dealer's random sharings
//! would hide a preprocessing that does not reshare, which is how unshared input masks once went
//! unnoticed).
//!
//! * A party that logs every byte it receives learns nothing about another party's input from a
//!   sum output, public or private to someone else: no element it received, and no sum or
//!   difference of two of them, equals that input (with unshared masks, x = ε + r where both ε
//!   and the owner's share r of a sum's opening arrive in the clear).
//! * Every party's share of every preprocessed item (triples, random bits, input masks) is
//!   uniformly distributed, on real preprocessing as from the dealer: no share is constant, and
//!   each of several bit positions is set about half of the time.

use core::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use webmpc_core::channel::memory::{network, MemoryChannel};
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::prg::Prg;
use webmpc_ot::SessionId;
use webmpc_spdz::dealer::Dealer;
use webmpc_spdz::local::run_all;
use webmpc_spdz::program::{Builder, Kind, Program};
use webmpc_spdz::store::{Counts, Store};
use webmpc_spdz::{Field, Fp, Gf128, Party, Share};

/// A channel that keeps a copy of everything its party receives.
struct Logging {
    inner: MemoryChannel,
    received: Rc<RefCell<Vec<Vec<u8>>>>,
}

impl Channel for Logging {
    fn party(&self) -> PartyId {
        self.inner.party()
    }
    fn parties(&self) -> usize {
        self.inner.parties()
    }
    async fn send(&self, to: PartyId, msg: Vec<u8>) -> Result<(), ChannelError> {
        self.inner.send(to, msg).await
    }
    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        let m = self.inner.recv(from).await?;
        self.received.borrow_mut().push(m.clone());
        Ok(m)
    }
}

/// Every canonical field element at a 16-byte-aligned offset of a received message (field
/// elements travel as 16-byte little-endian words; a message may end with a stream tag).
fn received_elements<F: Field>(log: &[Vec<u8>]) -> HashSet<[u8; 16]> {
    let mut out = HashSet::new();
    for m in log {
        for c in m.chunks_exact(16) {
            let b: [u8; 16] = c.try_into().unwrap();
            if let Some(x) = F::from_bytes(b) {
                out.insert(x.to_bytes());
            }
        }
    }
    out
}

/// Whether `x` is in `seen` or is a sum or difference of two elements of `seen`.
fn recoverable<F: Field>(x: F, seen: &HashSet<[u8; 16]>) -> bool {
    if seen.contains(&x.to_bytes()) {
        return true;
    }
    seen.iter().any(|a| {
        let a = F::from_bytes(*a).unwrap();
        // x = a + b, x = b − a, x = a − b for some b seen.
        [x - a, x + a, a - x].iter().any(|b| seen.contains(&b.to_bytes()))
    })
}

/// Each party inputs one field element; the outputs are the sum of all inputs, public (when
/// `public`) and private to party 0. The last party logs what it receives, then tries to recover
/// every other party's input from its log.
fn sum_outputs_hide_the_inputs<F: Field>(n: usize, public: bool) {
    let field = F::KIND;
    let mut b = Builder::new(field, n);
    let xs: Vec<_> = (0..n).map(|j| b.input(j, Kind::Field)).collect();
    let mut sum = xs[0];
    for x in &xs[1..] {
        sum = b.add(sum, *x);
    }
    if public {
        b.output(sum, Kind::Field, None);
    }
    b.output(sum, Kind::Field, Some(vec![0]));
    let program: Program = b.build();

    let mut prg = Prg::from_entropy().unwrap();
    let inputs: Vec<F> = (0..n).map(|_| F::random(&mut prg)).collect();
    let logs: Vec<Rc<RefCell<Vec<Vec<u8>>>>> = (0..n).map(|_| Rc::new(RefCell::new(Vec::new()))).collect();
    let channels: Vec<Logging> =
        network(n).into_iter().zip(&logs).map(|(ch, l)| Logging { inner: ch, received: l.clone() }).collect();
    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let mut parties: Vec<Party<F, Logging>> =
        run_all(channels.into_iter().map(|ch| Party::setup(ch, sid)).collect()).expect("setup");
    let raw: Vec<[[u8; 16]; 1]> = inputs.iter().map(|x| [x.to_bytes()]).collect();
    let outs = run_all(parties.iter_mut().zip(&raw).map(|(p, x)| p.run(&program, x, |_, _| {})).collect())
    .expect("run");

    // The computation is right (so the log is of a real run).
    let want = inputs.iter().fold(F::ZERO, |a, x| a + *x);
    let private_at = usize::from(public);
    assert_eq!(F::from_bytes(outs[0][private_at].unwrap()), Some(want));
    let logger = n - 1;
    if n > 1 {
        assert_eq!(outs[logger][private_at], None, "the logger is not a recipient of the private output");
    }
    if public {
        assert_eq!(F::from_bytes(outs[logger][0].unwrap()), Some(want));
    }

    let seen = received_elements::<F>(&logs[logger].borrow());
    assert!(seen.len() > 100, "the log holds the run's traffic");
    for (j, x) in inputs.iter().enumerate().take(n - 1) {
        // With a public sum and two parties, the logger's own input and the output determine the
        // other input: there is nothing to hide.
        if public && n == 2 {
            continue;
        }
        assert!(
            !recoverable(*x, &seen),
            "{field:?}, {n} parties, {} sum: party {logger}'s received traffic reveals party {j}'s input",
            if public { "public" } else { "private" }
        );
    }
}

#[test]
fn a_logging_party_cannot_recover_inputs_from_a_public_sum_prime_field() {
    for n in [2, 3, 5] {
        sum_outputs_hide_the_inputs::<Fp>(n, true);
    }
}

#[test]
fn a_logging_party_cannot_recover_inputs_from_a_public_sum_binary_field() {
    for n in [2, 3, 5] {
        sum_outputs_hide_the_inputs::<Gf128>(n, true);
    }
}

#[test]
fn a_non_recipient_cannot_recover_inputs_from_a_private_sum_prime_field() {
    for n in [2, 3, 5] {
        sum_outputs_hide_the_inputs::<Fp>(n, false);
    }
}

#[test]
fn a_non_recipient_cannot_recover_inputs_from_a_private_sum_binary_field() {
    for n in [2, 3, 5] {
        sum_outputs_hide_the_inputs::<Gf128>(n, false);
    }
}

/// Samples per kind and owner.
const SAMPLES: usize = 256;
/// Bit positions whose frequency is checked (the top one is below 2^127 < p in F_p, and is set
/// about half the time there too).
const POSITIONS: [u32; 6] = [0, 1, 31, 64, 100, 126];

/// Asserts that `values` (one party's shares of one kind) look uniform: not constant, and each
/// checked bit set in SAMPLES/2 ± 6σ of them (a false failure has probability < 10^−8 per check).
fn assert_uniform<F: Field>(what: &str, values: &[F]) {
    assert!(values.len() >= SAMPLES, "{what}: {} samples", values.len());
    let first = values[0];
    assert!(values.iter().any(|v| *v != first), "{what}: every share is the same value");
    let n = values.len() as f64;
    let sigma = (n / 4.0).sqrt();
    for pos in POSITIONS {
        let set = values.iter().filter(|v| (v.bits() >> pos) & 1 == 1).count() as f64;
        assert!(
            (set - n / 2.0).abs() <= 6.0 * sigma,
            "{what}: bit {pos} set in {set} of {n} shares; a uniform share sets it in about half"
        );
    }
}

/// Every party's value shares of every kind in `stores`, checked for uniformity. MAC shares are
/// checked too: they must not give the value away either.
fn assert_stores_uniform<F: Field>(source: &str, stores: &[&Store<F>]) {
    let n = stores.len();
    for (i, st) in stores.iter().enumerate() {
        let kinds: Vec<(&str, Vec<Share<F>>)> = vec![
            ("triple a", st.triples.iter().map(|t| t.a).collect()),
            ("triple b", st.triples.iter().map(|t| t.b).collect()),
            ("triple c", st.triples.iter().map(|t| t.c).collect()),
            ("random bit", st.bits.iter().copied().collect()),
        ];
        let masks = (0..n).map(|owner| {
            let what = if owner == i { "own input mask" } else { "another party's input mask" };
            (what, st.masks[owner].iter().map(|(s, _)| *s).collect::<Vec<_>>())
        });
        for (what, shares) in kinds.into_iter().chain(masks) {
            let what = format!("{source}, {:?}, party {i}: {what}", F::KIND);
            assert_uniform(&format!("{what} (value share)"), &shares.iter().map(|s| s.value).collect::<Vec<_>>());
            assert_uniform(&format!("{what} (MAC share)"), &shares.iter().map(|s| s.mac).collect::<Vec<_>>());
        }
    }
}

fn real_and_dealer_shares_are_uniform<F: Field>() {
    let n = 3;
    let counts = Counts { triples: SAMPLES, bits: SAMPLES, masks: vec![SAMPLES; n] };

    let sid = SessionId::random().unwrap();
    let sid = &sid;
    let mut parties: Vec<Party<F, MemoryChannel>> =
        run_all(network(n).into_iter().map(|ch| Party::setup(ch, sid)).collect()).expect("setup");
    run_all(parties.iter_mut().map(|p| p.top_up(&counts)).collect()).expect("preprocessing");
    let stores: Vec<&Store<F>> = parties.iter().map(|p| p.store()).collect();
    assert!(stores.iter().all(|s| s.counts().triples >= SAMPLES));
    assert_stores_uniform("real preprocessing", &stores);

    let dealt = Dealer::<F>::new(n).stores(&counts);
    assert_stores_uniform("dealer", &dealt.iter().collect::<Vec<_>>());
}

#[test]
fn real_preprocessing_gives_uniform_shares_like_the_dealer_prime_field() {
    real_and_dealer_shares_are_uniform::<Fp>();
}

#[test]
fn real_preprocessing_gives_uniform_shares_like_the_dealer_binary_field() {
    real_and_dealer_shares_are_uniform::<Gf128>();
}
