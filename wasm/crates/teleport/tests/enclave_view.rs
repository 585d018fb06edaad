//! The enclave's view depends on neither party's input: with every party's randomness fixed, two
//! runs whose garbler inputs (x1) **and** evaluator inputs (x2) both differ, but whose x2⁰ shares
//! are equal, give byte-identical enclave transcripts (everything it receives and sends, the
//! garbler's relayed job message included), while the outputs follow the inputs. Both inputs vary
//! independently: with x1 fixed, a leak of x1 into anything the enclave sees would go unnoticed.

mod common;

use common::*;
use core::cell::RefCell;
use futures::join;
use proptest::prelude::*;
use webmpc_core::channel::memory::{network, run_local};
use webmpc_core::channel::PartyId;
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_teleport::driver;
use webmpc_teleport::local;
use webmpc_teleport::{Mode, Owner};

/// One run with fixed randomness; returns the enclave's transcript and the evaluator's output.
fn transcript(mode: Mode, x1: &[bool], x2: &[bool]) -> (Vec<(bool, PartyId, Vec<u8>)>, u64) {
    let c = circuit("adder64.txt");
    let bin = c.to_binary();
    let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], mode, [42; 32]);
    let peers = PEERS;
    let log = RefCell::new(Vec::new());
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let x = Recorder { inner: x, log: &log };
    let mut machine = local::enclave_from([9; 32]);
    let (job, bin) = (&job, &bin);
    let (a, b, c) = run_local(async {
        join!(
            async move {
                let mut prg = Prg::from_seed(Block::from_u128(1));
                garbler(&g, job, bin, x1, &[false], &mut prg).await
            },
            async move {
                let mut prg = Prg::from_seed(Block::from_u128(2));
                let r = evaluator(&e, job, bin, x2, &[false], &mut prg).await;
                drop(e);
                r
            },
            async { driver::enclave_party(&x, &peers, &mut machine, &local::attest).await }
        )
    })
    .unwrap();
    a.unwrap();
    c.unwrap();
    (log.into_inner(), bits_u64(&b.unwrap()[0]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn enclave_transcript_is_independent_of_x1_and_x2(
        x1a in any::<u64>(),
        x1b in any::<u64>(),
        a in any::<u64>(),
        b in any::<u64>(),
        malicious in any::<bool>(),
    ) {
        prop_assume!(x1a != x1b);
        let mode = if malicious { Mode::Malicious } else { Mode::SemiHonest };
        let (ta, ya) = transcript(mode, &u64_bits(x1a), &u64_bits(a));
        let (tb, yb) = transcript(mode, &u64_bits(x1b), &u64_bits(b));
        prop_assert_eq!(ya, x1a.wrapping_add(a));
        prop_assert_eq!(yb, x1b.wrapping_add(b));
        prop_assert!(ta.len() > 5);
        prop_assert!(ta == tb, "the enclave's transcript depends on an input (x1 or x2)");
    }
}
