//! All three parties of a teleport job in one process over the in-memory network: what tests,
//! benchmarks and single-process demos use. The enclave here is an [`EnclaveMachine`] with
//! simulated evidence signed by a fixed test key, accepted by [`policy`] only.
//!
//! Also: adapters that present teleported ROT through `webmpc_ot`'s [`RotSender`] /
//! [`RotReceiver`] traits (the receiver runs the enclave beside it, as the deployment does), and
//! [`Timed`] / [`Watched`], which measure the time each party spends in its own code.
//!
//! **Clocks.** [`Timed`] and [`run_gc_session`] read `std::time::Instant`, which traps in
//! `wasm32-unknown-unknown`; [`run_gc_session_with_clock`] takes the clock as an argument (in
//! Wasm, the benchmark's JavaScript clock), as the other in-process runners do.

use crate::driver::{self, EvaluatorSession, GarblerSession, JobCounter, Peers};
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
    Policy { allow_simulated: true, simulated_measurements: core::slice::from_ref(&LOCAL_MEASUREMENT), ..Policy::default() }
}

/// A fresh in-process enclave.
pub fn enclave() -> Result<EnclaveMachine, TeleportError> {
    let mut e = [0u8; 32];
    webmpc_core::random::fill(&mut e)?;
    Ok(enclave_from(e))
}

/// An in-process enclave with the given key entropy (deterministic, for transcript tests).
pub fn enclave_from(entropy: [u8; 32]) -> EnclaveMachine {
    EnclaveMachine::new(entropy, Config::default())
}

/// The in-process enclave's attestation: simulated evidence over the report data, signed by the
/// fixed test key [`policy`] accepts (tests also use it to stand up deliberately deviating
/// enclaves). Use it as the [`driver::Attester`] of [`driver::enclave_party`].
pub fn attest(report_data: &[u8; 32]) -> Result<(u8, Vec<u8>), TeleportError> {
    Ok((FORMAT_SIMULATED, SimulatedSigner::new(LOCAL_SIGNER_SEED, LOCAL_MEASUREMENT).evidence(report_data)))
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

/// A party's time in its own code, by a clock given as milliseconds from any origin: the sum of
/// the time spent inside the polls of its [`Watched`] future, readable at any moment (also from
/// inside the future, where the current poll's time so far is included).
pub struct Stopwatch<'c> {
    clock: &'c dyn Fn() -> f64,
    spent: Cell<f64>,
    entered: Cell<Option<f64>>,
}

impl<'c> Stopwatch<'c> {
    /// A stopwatch at zero reading `clock` (milliseconds).
    pub fn new(clock: &'c dyn Fn() -> f64) -> Self {
        Stopwatch { clock, spent: Cell::new(0.0), entered: Cell::new(None) }
    }

    /// Milliseconds spent so far.
    pub fn ms(&self) -> f64 {
        self.spent.get() + self.entered.get().map_or(0.0, |t| (self.clock)() - t)
    }

    /// [`ms`](Self::ms) as a duration (negative clock steps read as zero).
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.ms().max(0.0) / 1000.0)
    }
}

/// A future whose polls a [`Stopwatch`] times (with every party on one thread, exactly the time
/// of that party's own work).
pub struct Watched<'a, 'c, F> {
    inner: Pin<Box<F>>,
    watch: &'a Stopwatch<'c>,
}

impl<'a, 'c, F: Future> Watched<'a, 'c, F> {
    /// Wraps `fut`, timing its polls on `watch`.
    pub fn new(fut: F, watch: &'a Stopwatch<'c>) -> Self {
        Watched { inner: Box::pin(fut), watch }
    }
}

impl<F: Future> Future for Watched<'_, '_, F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let w = self.watch;
        let t = (w.clock)();
        w.entered.set(Some(t));
        let r = self.inner.as_mut().poll(cx);
        w.entered.set(None);
        w.spent.set(w.spent.get() + ((w.clock)() - t));
        r
    }
}

/// Milliseconds since the first call, by `std::time::Instant` (native builds; traps in
/// `wasm32-unknown-unknown`).
pub fn instant_ms() -> f64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0
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

/// What local GC jobs give.
#[derive(Debug)]
pub struct LocalRun {
    /// The evaluator's outputs (every output value), per job.
    pub outputs: Vec<Vec<Vec<bool>>>,
    /// The garbler's outputs (the values revealed to it), per job.
    pub garbler_outputs: Vec<Vec<Option<Vec<bool>>>>,
    /// Time each party spent in its own code, session setup included.
    pub times: PartyTimes,
    /// The part of `times` each party spent setting up the attested session: the garbler and
    /// the evaluator until their session was connected, the enclave until its evidence was made.
    pub setup: PartyTimes,
    /// Bytes the garbler sent (all to the evaluator), in total.
    pub garbler_bytes: u64,
}

/// One GC job with all three parties in this process: returns the evaluator's outputs, the time
/// each party spent, and the bytes the garbler sent.
pub fn run_gc(job: &JobHeader, circuit: &[u8], x1: &[bool], x2: &[bool]) -> Result<(Vec<Vec<bool>>, PartyTimes, u64), TeleportError> {
    let n = crate::circuit::Header::parse(circuit)?.0.outputs.len();
    let mut r = run_gc_session(core::slice::from_ref(job), circuit, x1, x2, &vec![false; n])?;
    Ok((r.outputs.pop().expect("one job"), r.times, r.garbler_bytes))
}

/// GC jobs of one circuit in one fresh attested session (the evidence checked and the garbler's
/// X25519 key made once), all three parties in this process; `reveal[i]`: output value `i` goes
/// to the garbler too. Times by `std::time::Instant` (native only: see
/// [`run_gc_session_with_clock`]).
pub fn run_gc_session(jobs: &[JobHeader], circuit: &[u8], x1: &[bool], x2: &[bool], reveal: &[bool]) -> Result<LocalRun, TeleportError> {
    run_gc_session_with_clock(jobs, circuit, x1, x2, reveal, &instant_ms)
}

/// [`run_gc_session`] timing the parties by `clock` (milliseconds from any origin; in Wasm, a
/// clock from the host, since `Instant` traps there).
pub fn run_gc_session_with_clock(
    jobs: &[JobHeader],
    circuit: &[u8],
    x1: &[bool],
    x2: &[bool],
    reveal: &[bool],
    clock: &dyn Fn() -> f64,
) -> Result<LocalRun, TeleportError> {
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().expect("3"), net.next().expect("3"), net.next().expect("3"));
    let mut machine = enclave()?;
    let (mut pg, mut pe) = (Prg::from_entropy()?, Prg::from_entropy()?);
    let peers = Peers::default();
    let watches = [Stopwatch::new(clock), Stopwatch::new(clock), Stopwatch::new(clock)];
    let setup = [Cell::new(Duration::ZERO), Cell::new(Duration::ZERO), Cell::new(Duration::ZERO)];
    let garbler_bytes = Cell::new(0);
    let pol = policy();
    // The enclave's session setup ends when its evidence is made.
    let attest_timed = |report: &[u8; 32]| {
        let r = attest(report);
        setup[2].set(watches[2].duration());
        r
    };
    let (a, b, c) = run_local(async {
        futures::join!(
            Watched::new(
                async {
                    let r = async {
                        let mut s = GarblerSession::connect(&g, &peers, &pol, &mut pg).await?;
                        setup[0].set(watches[0].duration());
                        let mut out = Vec::with_capacity(jobs.len());
                        for job in jobs {
                            out.push(driver::gc_garbler(&g, &peers, &mut s, job, circuit, x1, reveal, &mut pg).await?);
                        }
                        Ok::<_, TeleportError>(out)
                    }
                    .await;
                    garbler_bytes.set(g.sent_bytes());
                    drop(g);
                    r
                },
                &watches[0]
            ),
            Watched::new(
                async {
                    let r = async {
                        let mut s = EvaluatorSession::connect(&e, &peers, &pol, &mut pe).await?;
                        setup[1].set(watches[1].duration());
                        let mut out = Vec::with_capacity(jobs.len());
                        for job in jobs {
                            out.push(driver::gc_evaluator(&e, &peers, &mut s, job, circuit, x2, reveal, &mut pe, |_| {}).await?);
                        }
                        Ok::<_, TeleportError>(out)
                    }
                    .await;
                    drop(e);
                    r
                },
                &watches[1]
            ),
            Watched::new(
                async {
                    let r = driver::enclave_party(&x, &peers, &mut machine, &attest_timed).await;
                    drop(x);
                    r
                },
                &watches[2]
            ),
        )
    })
    .map_err(|_| stalled())?;
    let garbler_outputs = a?;
    let outputs = b?;
    c?;
    let times = PartyTimes { garbler: watches[0].duration(), evaluator: watches[1].duration(), enclave: watches[2].duration() };
    let setup = PartyTimes { garbler: setup[0].get(), evaluator: setup[1].get(), enclave: setup[2].get() };
    Ok(LocalRun { outputs, garbler_outputs, times, setup, garbler_bytes: garbler_bytes.get() })
}

/// A fresh session id from the platform CSPRNG.
pub fn random_sid() -> Result<[u8; 32], TeleportError> {
    let mut sid = [0u8; 32];
    webmpc_core::random::fill(&mut sid)?;
    Ok(sid)
}

/// Teleported ROT as a `webmpc_ot` [`RotSender`]: one attested session (set up on the first
/// call), then one job per call (numbered session ids, fresh seed) with the receiver adapter on
/// the other end of the channel.
pub struct TeleportRotSender {
    ch: MemoryChannel,
    mode: Mode,
    jobs: JobCounter,
    session: Option<GarblerSession>,
    prg: Prg,
}

/// The receiver side of [`TeleportRotSender`], with the enclave (one session) running beside it.
pub struct TeleportRotReceiver {
    ch: MemoryChannel,
    enclave_ch: MemoryChannel,
    machine: EnclaveMachine,
    mode: Mode,
    jobs: JobCounter,
    session: Option<EvaluatorSession>,
    prg: Prg,
}

/// A connected sender/receiver pair in `mode`.
pub fn rot_pair(mode: Mode) -> Result<(TeleportRotSender, TeleportRotReceiver), TeleportError> {
    let mut net = network(3).into_iter();
    let (g, e, x) = (net.next().expect("3"), net.next().expect("3"), net.next().expect("3"));
    let sid = random_sid()?;
    let machine = enclave()?;
    Ok((
        TeleportRotSender { ch: g, mode, jobs: JobCounter::new(sid), session: None, prg: Prg::from_entropy()? },
        TeleportRotReceiver {
            ch: e,
            enclave_ch: x,
            machine,
            mode,
            jobs: JobCounter::new(sid),
            session: None,
            prg: Prg::from_entropy()?,
        },
    ))
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
        let peers = Peers::default();
        if self.session.is_none() {
            let pol = policy();
            self.session = Some(GarblerSession::connect(&self.ch, &peers, &pol, &mut self.prg).await.map_err(ot_err)?);
        }
        let session = self.session.as_mut().expect("connected above");
        let job = self.jobs.next(self.mode, JobKind::Rot { count: n as u64 });
        let mut out = Vec::with_capacity(n);
        driver::rot_sender(&self.ch, &peers, session, &job, &mut self.prg, |_, pairs| out.extend_from_slice(pairs))
            .await
            .map_err(ot_err)?;
        Ok(out)
    }
}

impl RotReceiver for TeleportRotReceiver {
    async fn receive_random(&mut self, n: usize) -> Result<(Vec<bool>, Vec<Block>), OtError> {
        let peers = Peers::default();
        if self.session.is_none() {
            let pol = policy();
            let (s, x) = futures::join!(
                EvaluatorSession::connect(&self.ch, &peers, &pol, &mut self.prg),
                driver::enclave_attest(&self.enclave_ch, &peers, &mut self.machine, &attest)
            );
            x.map_err(ot_err)?;
            self.session = Some(s.map_err(ot_err)?);
        }
        let session = self.session.as_mut().expect("connected above");
        let job = self.jobs.next(self.mode, JobKind::Rot { count: n as u64 });
        let (mut choices, mut outs) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (r, e) = futures::join!(
            driver::rot_receiver(&self.ch, &peers, session, &job, &mut self.prg, |_, c, m| {
                choices.extend_from_slice(c);
                outs.extend_from_slice(m);
            }),
            driver::enclave_serve(&self.enclave_ch, &peers, &mut self.machine, &attest, 1)
        );
        r.map_err(ot_err)?;
        e.map_err(ot_err)?;
        Ok((choices, outs))
    }
}
