//! All three parties of a teleport job in one process over the in-memory network: what tests,
//! benchmarks and single-process demos use. The enclave here is an [`EnclaveMachine`] with
//! simulated evidence signed by a fixed test key, accepted by [`policy`] only.
//!
//! Also: adapters that present teleported ROT through `webmpc_ot`'s [`RotSender`] /
//! [`RotReceiver`] traits (the receiver runs the enclave beside it, as the deployment does), and
//! [`Timed`], which measures the time each party spends in its own code.

use crate::driver::{self, Peers};
use crate::evidence::{Policy, SimulatedSigner, FORMAT_SIMULATED};
use crate::job::{JobHeader, JobKind, Mode};
use crate::machine::{Config, EnclaveMachine};
use crate::TeleportError;
use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::time::{Duration, Instant};
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_core::channel::ChannelError;
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_ot::{OtError, RotReceiver, RotSender};

/// The measurement the in-process enclave claims (not a real program's hash).
pub const LOCAL_MEASUREMENT: [u8; 32] = *b"webmpc/teleport/local-enclave/v1";
const LOCAL_SIGNER_SEED: [u8; 32] = *b"webmpc/teleport/local-signer/v01";

/// The policy that accepts the in-process enclave (simulated evidence, [`LOCAL_MEASUREMENT`]).
pub fn policy() -> Policy<'static> {
    Policy { allow_simulated: true, measurements: core::slice::from_ref(&LOCAL_MEASUREMENT), ..Policy::default() }
}

/// A fresh in-process enclave and its `Evidence` message.
pub fn enclave() -> Result<(EnclaveMachine, Vec<u8>), TeleportError> {
    let mut e = [0u8; 32];
    webmpc_core::random::fill(&mut e)?;
    Ok(enclave_from(e))
}

/// An in-process enclave with the given key entropy (deterministic, for transcript tests).
pub fn enclave_from(entropy: [u8; 32]) -> (EnclaveMachine, Vec<u8>) {
    let m = EnclaveMachine::new(entropy, Config::default());
    let ev = evidence_for(&m.public_key());
    (m, ev)
}

/// The `Evidence` message [`policy`] accepts for the enclave key `pk` (tests use it to stand up
/// deliberately deviating enclaves).
pub fn evidence_for(pk: &[u8; 32]) -> Vec<u8> {
    let signer = SimulatedSigner::new(LOCAL_SIGNER_SEED, LOCAL_MEASUREMENT);
    crate::frames::evidence(FORMAT_SIMULATED, pk, &signer.evidence(pk))
}

fn stalled() -> TeleportError {
    TeleportError::Channel(ChannelError::Transport { peer: 0, reason: "local parties deadlocked".into() })
}

/// A future that adds the time spent inside its `poll` to a counter: with every party on one
/// thread, that is exactly the CPU time of that party's own work.
pub struct Timed<'a, F> {
    inner: Pin<Box<F>>,
    spent: &'a Cell<Duration>,
}

impl<'a, F: Future> Timed<'a, F> {
    /// Wraps `fut`, adding its poll time to `spent`.
    pub fn new(fut: F, spent: &'a Cell<Duration>) -> Self {
        Timed { inner: Box::pin(fut), spent }
    }
}

impl<F: Future> Future for Timed<'_, F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let t = Instant::now();
        let r = self.inner.as_mut().poll(cx);
        self.spent.set(self.spent.get() + t.elapsed());
        r
    }
}

/// Time each party spent in its own code during one local run.
#[derive(Clone, Copy, Debug, Default)]
pub struct PartyTimes {
    /// Garbler / ROT sender.
    pub garbler: Duration,
    /// Evaluator / ROT receiver, excluding the enclave.
    pub evaluator: Duration,
    /// The enclave.
    pub enclave: Duration,
}

/// One GC job with all three parties in this process: returns the evaluator's outputs, the time
/// each party spent, and the bytes the garbler sent (to the evaluator and to the enclave).
pub fn run_gc(job: &JobHeader, circuit: &[u8], x1: &[bool], x2: &[bool]) -> Result<(Vec<Vec<bool>>, PartyTimes, u64), TeleportError> {
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().expect("3"), net.next().expect("3"), net.next().expect("3"));
    let (mut machine, ev) = enclave()?;
    let (mut pg, mut pe) = (Prg::from_entropy()?, Prg::from_entropy()?);
    let peers = Peers::default();
    let times = [Cell::new(Duration::ZERO), Cell::new(Duration::ZERO), Cell::new(Duration::ZERO)];
    let garbler_bytes = Cell::new(0);
    let pol = policy();
    let (a, b, c) = run_local(async {
        futures::join!(
            Timed::new(
                async {
                    let r = driver::gc_garbler(&g, &peers, job, circuit, x1, &pol, &mut pg).await;
                    garbler_bytes.set(g.sent_bytes());
                    drop(g);
                    r
                },
                &times[0]
            ),
            Timed::new(
                async move {
                    let r = driver::gc_evaluator(&e, &peers, job, circuit, x2, &mut pe).await;
                    drop(e);
                    r
                },
                &times[1]
            ),
            Timed::new(
                async move {
                    let r = driver::enclave_party(&x, &peers, &mut machine, &ev).await;
                    drop(x);
                    r
                },
                &times[2]
            ),
        )
    })
    .map_err(|_| stalled())?;
    a?;
    let out = b?;
    c?;
    let t = PartyTimes { garbler: times[0].get(), evaluator: times[1].get(), enclave: times[2].get() };
    Ok((out, t, garbler_bytes.get()))
}

/// A fresh session id from the platform CSPRNG.
pub fn random_sid() -> Result<[u8; 32], TeleportError> {
    let mut sid = [0u8; 32];
    webmpc_core::random::fill(&mut sid)?;
    Ok(sid)
}

/// Teleported ROT as a `webmpc_ot` [`RotSender`]: each call is one job (fresh session id from
/// the caller's base, fresh seed) with the receiver adapter on the other end of the channel.
pub struct TeleportRotSender {
    ch: MemoryChannel,
    mode: Mode,
    sid: [u8; 32],
    calls: u64,
    prg: Prg,
}

/// The receiver side of [`TeleportRotSender`], with the enclave running beside it.
pub struct TeleportRotReceiver {
    ch: MemoryChannel,
    enclave_ch: MemoryChannel,
    mode: Mode,
    sid: [u8; 32],
    calls: u64,
    prg: Prg,
}

/// A connected sender/receiver pair in `mode`.
pub fn rot_pair(mode: Mode) -> Result<(TeleportRotSender, TeleportRotReceiver), TeleportError> {
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().expect("3"), net.next().expect("3"), net.next().expect("3"));
    let sid = random_sid()?;
    Ok((
        TeleportRotSender { ch: g, mode, sid, calls: 0, prg: Prg::from_entropy()? },
        TeleportRotReceiver { ch: e, enclave_ch: x, mode, sid, calls: 0, prg: Prg::from_entropy()? },
    ))
}

fn call_job(sid: &[u8; 32], call: u64, mode: Mode, count: u64) -> JobHeader {
    use sha2::{Digest, Sha256};
    let sid = Sha256::new().chain_update(b"webmpc/teleport/rot-call/v1").chain_update(sid).chain_update(call.to_le_bytes());
    JobHeader { sid: sid.finalize().into(), mode, kind: JobKind::Rot { count } }
}

fn ot_err(e: TeleportError) -> OtError {
    match e {
        TeleportError::Channel(c) => OtError::Channel(c),
        TeleportError::CheckFailed(c) => OtError::CheatingDetected { peer: 0, check: c.name() },
        other => OtError::InvalidArgument(other.to_string()),
    }
}

impl RotSender for TeleportRotSender {
    async fn send_random(&mut self, n: usize) -> Result<Vec<[Block; 2]>, OtError> {
        let job = call_job(&self.sid, self.calls, self.mode, n as u64);
        self.calls += 1;
        let pol = policy();
        let sender = driver::rot_sender(&self.ch, &Peers::default(), &job, &pol, &mut self.prg).await.map_err(ot_err)?;
        let mut out = Vec::with_capacity(n);
        for j in 0..crate::rot::chunks(n as u64) {
            out.extend(sender.chunk(j).0);
        }
        Ok(out)
    }
}

impl RotReceiver for TeleportRotReceiver {
    async fn receive_random(&mut self, n: usize) -> Result<(Vec<bool>, Vec<Block>), OtError> {
        let job = call_job(&self.sid, self.calls, self.mode, n as u64);
        self.calls += 1;
        let (mut machine, ev) = enclave().map_err(ot_err)?;
        let (mut choices, mut outs) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let peers = Peers::default();
        let (r, e) = futures::join!(
            driver::rot_receiver(&self.ch, &peers, &job, &mut self.prg, |_, c, m| {
                choices.extend_from_slice(c);
                outs.extend_from_slice(m);
            }),
            driver::enclave_party(&self.enclave_ch, &peers, &mut machine, &ev)
        );
        r.map_err(ot_err)?;
        e.map_err(ot_err)?;
        Ok((choices, outs))
    }
}
