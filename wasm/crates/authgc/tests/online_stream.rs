//! Streamed circuits: a 10^6-AND circuit generated gate by gate (never stored) runs interleaved
//! with state bounded by the chunk and the live wires, not by the circuit; the bounds are the
//! same at 10^5 and 10^6 AND gates; and a stream that fails its hash check at the end aborts
//! every party before any output.
//!
//! Every test runs on both the trusted dealer (`ideal_fpre::…`) and the real F_Pre
//! (`real_fpre::…`).

use crate::common;

use common::*;
use futures::future::join_all;
use webmpc_authgc::online::{gc_core, AuthGcParty, GateSource, Options, RunStats, Shape, SharedChannel};
use webmpc_circuit::Gate;
use webmpc_core::channel::memory::{network, run_local};
use webmpc_core::channel::Channel;
use webmpc_garble::YaoError;

const OPTIONS: Options = Options { chunk_gates: 1 << 14, batch: 1 << 13 };

/// Runs the recurrence of `rounds` rounds (64 AND gates each) among `n` parties; party 0 owns x,
/// party n − 1 owns y, `evaluator` evaluates, all learn the result. Returns the outputs and every
/// party's run statistics.
fn recurrence<S: PreSetup>(n: usize, evaluator: usize, rounds: u64, x: u64, y: u64) -> Vec<(u64, RunStats)> {
    let mut seed = [0u8; 32];
    webmpc_core::random::fill(&mut seed).unwrap();
    let roles = roles_all(evaluator, &[0, n - 1], 1);
    run_local(join_all(network(n).into_iter().map(|ch| {
        let roles = roles.clone();
        async move {
            let me = ch.party();
            let ch = SharedChannel::new(ch);
            let pre = S::setup(ch.clone(), seed).await.unwrap();
            let mut p = AuthGcParty::new(pre, ch, [5; 32], OPTIONS).unwrap();
            let mut inputs = Vec::new();
            if me == 0 {
                inputs.push(u64_bits(x, 64));
            }
            if me == n - 1 {
                inputs.push(u64_bits(y, 64));
            }
            let mut last = (0, 0);
            let out = p
                .run(&mut Recurrence::new(rounds), &roles, &inputs, |_, done, total| {
                    assert!(done >= last.0 && total == last.1.max(total));
                    last = (done, total);
                })
                .await
                .unwrap();
            assert_eq!(last.0, last.1, "progress reached the total");
            (bits_u64(out[0].as_ref().unwrap()), p.last_stats().clone())
        }
    })))
    .unwrap()
}

/// The state a streamed run may hold, from the options alone: nothing here depends on the
/// circuit's length.
fn assert_bounded(stats: &RunStats, n: usize) {
    let chunk = OPTIONS.chunk_gates;
    assert!(!stats.phased);
    assert_eq!(stats.wire_state, 320, "per-wire state for the live wires only");
    assert!(stats.max_chunk_and_gates <= chunk);
    assert!(stats.max_table_bytes <= gc_core::table_bytes(chunk, n), "{stats:?}");
    // The pools hold at most what one chunk needs plus one batch.
    assert!(stats.max_pooled_triples <= chunk + OPTIONS.batch, "{stats:?}");
    assert!(stats.max_pooled_shares <= chunk + OPTIONS.batch + 128, "{stats:?}");
    assert_eq!(stats.stored_bytes, 0);
}

fn a_million_and_gates_stream_with_state_bounded_by_the_chunk<S: PreSetup>() {
    let (x, y) = (0x0123_4567_89ab_cdef, 0xf0e1_d2c3_b4a5_9687);
    let rounds = 1_000_000 / 64 + 1;
    let want = Recurrence::reference(x, y, rounds);
    let results = recurrence::<S>(2, 1, rounds, x, y);
    for (out, stats) in &results {
        assert_eq!(*out, want);
        assert_eq!(stats.and_gates, 64 * rounds);
        assert!(stats.and_gates >= 1_000_000);
        assert_bounded(stats, 2);
    }
    // Ten times fewer gates: the same bounds are reached (they are the chunk's, not the
    // circuit's).
    let small = recurrence::<S>(2, 0, rounds / 10, x, y);
    for ((out, stats), (_, big)) in small.iter().zip(&results) {
        assert_eq!(*out, Recurrence::reference(x, y, rounds / 10));
        assert_eq!(stats.max_chunk_and_gates, big.max_chunk_and_gates);
        assert_eq!(stats.max_table_bytes, big.max_table_bytes);
        assert_eq!(stats.max_pooled_triples, big.max_pooled_triples);
        assert_eq!(stats.wire_state, big.wire_state);
    }
}

fn streams_with_three_and_four_parties<S: PreSetup>() {
    for (n, e) in [(3, 1), (4, 3)] {
        let rounds = 3000;
        let results = recurrence::<S>(n, e, rounds, 77, 0x5555_aaaa_0000_ffff);
        for (out, stats) in &results {
            assert_eq!(*out, Recurrence::reference(77, 0x5555_aaaa_0000_ffff, rounds));
            assert_bounded(stats, n);
        }
    }
}

/// A stream that turns out not to be the agreed circuit: it errors after its last gate, as a
/// hashed stream does when the hash does not match.
struct Mismatching(Recurrence);

impl GateSource for Mismatching {
    fn shape(&self) -> &Shape {
        self.0.shape()
    }

    async fn next_chunk(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError> {
        self.0.next_chunk(max, out).await?;
        if out.is_empty() {
            return Err(YaoError::ParameterMismatch("circuit (the stream does not match its declared hash)"));
        }
        Ok(())
    }
}

fn a_stream_that_fails_its_hash_check_aborts_before_any_output<S: PreSetup>() {
    for bad in [0usize, 1] {
        let roles = roles_all(0, &[0, 1], 1);
        let out = run_local(join_all(network(2).into_iter().map(|ch| {
            let roles = roles.clone();
            async move {
                let me = ch.party();
                let ch = SharedChannel::new(ch);
                let pre = S::setup(ch.clone(), [3; 32]).await.unwrap();
                let mut p = AuthGcParty::new(pre, ch, [5; 32], OPTIONS).unwrap();
                let inputs = [u64_bits(me as u64, 64)];
                if me == bad {
                    p.run(&mut Mismatching(Recurrence::new(100)), &roles, &inputs, |_, _, _| {}).await
                } else {
                    p.run(&mut Recurrence::new(100), &roles, &inputs, |_, _, _| {}).await
                }
            }
        })))
        .unwrap();
        let e = out[bad].as_ref().unwrap_err();
        assert_eq!(e.code(), "PARAMETER_MISMATCH", "{e}");
        assert!(out[1 - bad].is_err(), "the other party gets no output either");
    }
}

/// A source that hands out a gate with a wire beyond the circuit's (a custom source need not be
/// validated like the binary decoder is).
struct OutOfRange(Recurrence);

impl GateSource for OutOfRange {
    fn shape(&self) -> &Shape {
        self.0.shape()
    }

    async fn next_chunk(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError> {
        self.0.next_chunk(max, out).await?;
        if let Some(g) = out.get_mut(3) {
            *g = Gate::And { a: 0, b: 1, out: 10_000 };
        }
        Ok(())
    }
}

fn a_gate_source_with_a_wire_out_of_range_is_refused_not_a_panic<S: PreSetup>() {
    let roles = roles_all(1, &[0, 1], 1);
    let out = run_local(join_all(network(2).into_iter().map(|ch| {
        let roles = roles.clone();
        async move {
            let me = ch.party();
            let ch = SharedChannel::new(ch);
            let pre = S::setup(ch.clone(), [4; 32]).await.unwrap();
            let mut p = AuthGcParty::new(pre, ch, [5; 32], OPTIONS).unwrap();
            let inputs = [u64_bits(me as u64, 64)];
            if me == 0 {
                p.run(&mut OutOfRange(Recurrence::new(10)), &roles, &inputs, |_, _, _| {}).await
            } else {
                p.run(&mut Recurrence::new(10), &roles, &inputs, |_, _, _| {}).await
            }
        }
    })))
    .unwrap();
    assert_eq!(out[0].as_ref().unwrap_err().code(), "INVALID_ARGUMENT");
    assert!(out[1].is_err());
}

on_both_preprocessors!(
    a_million_and_gates_stream_with_state_bounded_by_the_chunk,
    streams_with_three_and_four_parties,
    a_stream_that_fails_its_hash_check_aborts_before_any_output,
    a_gate_source_with_a_wire_out_of_range_is_refused_not_a_panic,
);
