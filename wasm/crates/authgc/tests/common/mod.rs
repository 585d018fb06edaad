//! Shared helpers for the online-protocol tests: a preprocessor constructor the tests are generic
//! over ([`PreSetup`]: the trusted dealer [`Ideal`] and the real F_Pre [`Real`]), a macro that
//! runs a generic test on both ([`on_both_preprocessors!`]), a runner for n parties over the
//! in-memory network with an optional deviating party, reference circuits, a small circuit
//! builder (Vickrey auctions, random circuits) and a generated streamed circuit.
#![allow(dead_code, unused_macros)]

/// For each `name`, a `#[test]` that runs the generic `fn name<S: PreSetup>()` on the trusted
/// dealer (`ideal_fpre::name`) and one on the real F_Pre (`real_fpre::name`).
macro_rules! on_both_preprocessors {
    ($($name:ident),* $(,)?) => {
        mod ideal_fpre {
            $(#[test] fn $name() { super::$name::<super::common::Ideal>() })*
        }
        mod real_fpre {
            $(#[test] fn $name() { super::$name::<super::common::Real>() })*
        }
    };
}

use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use futures::future::join_all;
use std::rc::Rc;
use std::sync::OnceLock;
use webmpc_authgc::fpre::RealPreprocessor;
use webmpc_authgc::ideal::IdealPreprocessor;
use webmpc_authgc::online::{
    AuthGcParty, GateSource, Options, Outputs, PreparedCircuit, Recipients, Roles, RunStats, Shape, SharedChannel,
};
use webmpc_authgc::preprocess::Preprocessor;
use webmpc_authgc::{AuthGcError, DEFAULT_RHO};
use webmpc_circuit::{Circuit, Gate};
use webmpc_core::channel::memory::{network, run_local, MemoryChannel, Tamper};
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::Block;
use webmpc_garble::YaoError;
use webmpc_ot::SessionId;

/// How the tests build a party's preprocessor from its channel: the only thing that changes
/// between the ideal and the real F_Pre.
pub trait PreSetup {
    /// The preprocessor over a channel of type `C`.
    type Pre<C: Channel + 'static>: Preprocessor;
    /// Sets it up (base OTs for a real F_Pre). `seed` is shared by all parties of a test (the
    /// dealer's seed for the ideal F_Pre; ignored by a real one).
    fn setup<C: Channel + 'static>(
        ch: SharedChannel<C>,
        seed: [u8; 32],
    ) -> impl Future<Output = Result<Self::Pre<C>, AuthGcError>>;
}

/// The trusted-dealer F_Pre.
pub struct Ideal;

impl PreSetup for Ideal {
    type Pre<C: Channel + 'static> = IdealPreprocessor;
    fn setup<C: Channel + 'static>(
        ch: SharedChannel<C>,
        seed: [u8; 32],
    ) -> impl Future<Output = Result<IdealPreprocessor, AuthGcError>> {
        let (me, n) = (ch.party(), ch.parties());
        async move { IdealPreprocessor::new(seed, me, n) }
    }
}

/// The real F_Pre (base OTs, KOS Δ-OT, Π_aShare's global-key check in the first batch) at ρ = 40. The seed
/// becomes the session id (shared, as a session id is); nothing secret derives from it.
pub struct Real;

impl PreSetup for Real {
    type Pre<C: Channel + 'static> = RealPreprocessor<SharedChannel<C>>;
    fn setup<C: Channel + 'static>(
        ch: SharedChannel<C>,
        seed: [u8; 32],
    ) -> impl Future<Output = Result<RealPreprocessor<SharedChannel<C>>, AuthGcError>> {
        async move { RealPreprocessor::setup(ch, &SessionId(seed).derive(b"fpre"), DEFAULT_RHO).await }
    }
}

thread_local! {
    /// Every party's Δ in the job [`run_job`] is running on this thread, set right after setup.
    static DELTAS: RefCell<Vec<Option<Block>>> = const { RefCell::new(Vec::new()) };
}

/// Party `p`'s global key in the running job (for an edit that needs it, e.g. to send the other
/// valid label L ⊕ Δ). Panics before `p`'s setup is done.
pub fn party_delta(p: PartyId) -> Block {
    DELTAS.with(|d| d.borrow().get(p).copied().flatten()).expect("the party's F_Pre is set up")
}

/// An edit a deviating party applies to what it sends: `(to, index of the message to `to`, msg)`.
pub type Edit = Rc<dyn Fn(PartyId, usize, &mut Vec<u8>)>;

/// How one party deviates.
#[derive(Clone)]
pub enum Deviation {
    /// Everyone is honest.
    None,
    /// `party` edits its outgoing messages.
    Tamper { party: PartyId, edit: Edit },
    /// `party` crashes when it is about to send its `after`-th message (counting all peers, from
    /// 0), or to receive once it has sent `after` messages.
    Crash { party: PartyId, after: usize },
}

/// The edit function inside a test channel's `Tamper`.
type EditFn = Box<dyn Fn(PartyId, usize, &mut Vec<u8>)>;

/// A party's connection in the tests: the in-memory channel, a `Tamper` in front of it for the
/// online protocol's messages, a crash switch that counts every message (F_Pre's too), and a log
/// of the online protocol's messages as they leave (after any edit), per destination.
pub struct TestChannel {
    raw: SharedChannel<MemoryChannel>,
    tamper: Tamper<SharedChannel<MemoryChannel>, EditFn>,
    crash_after: Option<usize>,
    sent: Cell<usize>,
    online_sent: Traffic,
}

/// The online protocol's messages one party sent, per destination, in order.
type Traffic = Rc<RefCell<Vec<Vec<Vec<u8>>>>>;

impl TestChannel {
    pub fn new(ch: MemoryChannel, edit: Option<Edit>, crash_after: Option<usize>) -> Rc<TestChannel> {
        let online_sent: Traffic = Rc::new(RefCell::new(vec![Vec::new(); ch.parties()]));
        let log = online_sent.clone();
        // Every online message is logged as it leaves, after the edit: what its recipient gets.
        let f: EditFn = Box::new(move |to, i, m: &mut Vec<u8>| {
            if let Some(e) = &edit {
                e(to, i, m);
            }
            log.borrow_mut()[to].push(m.clone());
        });
        let raw = SharedChannel::new(ch);
        Rc::new(TestChannel { tamper: Tamper::new(raw.clone(), f), raw, crash_after, sent: Cell::new(0), online_sent })
    }

    fn crashed(&self) -> bool {
        self.crash_after.is_some_and(|n| self.sent.get() >= n)
    }
}

/// One side of a [`TestChannel`]: the online protocol's (through the `Tamper`, so edits index the
/// online protocol's messages only, whatever F_Pre sends in between) or F_Pre's (untouched).
/// Both share one connection, so the message order per pair is the real one.
pub struct Side {
    ch: Rc<TestChannel>,
    fpre: bool,
}

impl Channel for Side {
    fn party(&self) -> PartyId {
        self.ch.raw.party()
    }
    fn parties(&self) -> usize {
        self.ch.raw.parties()
    }
    async fn send(&self, to: PartyId, msg: Vec<u8>) -> Result<(), ChannelError> {
        if self.ch.crashed() {
            return Err(ChannelError::Disconnected { peer: to });
        }
        self.ch.sent.set(self.ch.sent.get() + 1);
        if self.fpre {
            self.ch.raw.send(to, msg).await
        } else {
            self.ch.tamper.send(to, msg).await
        }
    }
    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        if self.ch.crashed() {
            return Err(ChannelError::Disconnected { peer: from });
        }
        self.ch.raw.recv(from).await
    }
}

/// A party's online and F_Pre channels over one in-memory connection; `edit`, if any, applies to
/// the online messages only.
pub fn test_channels(mem: MemoryChannel, edit: Option<Edit>) -> (SharedChannel<Side>, SharedChannel<Side>) {
    let shared = TestChannel::new(mem, edit, None);
    (SharedChannel::new(Side { ch: shared.clone(), fpre: false }), SharedChannel::new(Side { ch: shared, fpre: true }))
}

/// How a job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `run` alone: garbling and evaluation interleaved per chunk, material fetched on demand.
    Interleaved,
    /// `prepare` (function-dependent) then `run` (online).
    Phased,
    /// `preprocess` for exactly the circuit's needs, then `prepare`, then `run`.
    Pooled,
}

/// One computation for n parties.
pub struct Job<'a> {
    pub circuit: &'a PreparedCircuit,
    pub roles: Roles,
    /// `inputs[p]`: party p's input values, in circuit order of the inputs it owns.
    pub inputs: Vec<Vec<Vec<bool>>>,
    pub mode: Mode,
    pub options: Options,
}

/// What a party ended with.
pub struct PartyResult {
    pub outputs: Result<Outputs, AuthGcError>,
    pub stats: Option<RunStats>,
    /// Messages the party sent (F_Pre's included).
    pub sent: usize,
    /// The online protocol's messages the party sent (F_Pre's excluded), per destination, in
    /// order, as delivered: `results[q].online_sent[p]` is everything p received from q online.
    pub online_sent: Vec<Vec<Vec<u8>>>,
}

fn random_seed() -> [u8; 32] {
    let mut s = [0u8; 32];
    webmpc_core::random::fill(&mut s).unwrap();
    s
}

/// Runs `job` with n = `job.inputs.len()` parties, one of which may deviate. Every party's future
/// owns its channel, so a party that fails drops it and its peers see the disconnect: nothing
/// may hang (`run_local` would report a deadlock, and this panics). Each party's Δ is published
/// for [`party_delta`] once its F_Pre is set up.
pub fn run_job<S: PreSetup>(job: &Job<'_>, deviation: &Deviation) -> Vec<PartyResult> {
    let n = job.inputs.len();
    let seed = random_seed();
    let session = random_seed();
    DELTAS.with(|d| *d.borrow_mut() = vec![None; n]);
    let futures = network(n).into_iter().map(|mem| {
        let p = mem.party();
        let edit = match deviation {
            Deviation::Tamper { party, edit } if *party == p => Some(edit.clone()),
            _ => None,
        };
        let crash = match deviation {
            Deviation::Crash { party, after } if *party == p => Some(*after),
            _ => None,
        };
        let inputs = job.inputs[p].clone();
        Box::pin(async move {
            let shared = TestChannel::new(mem, edit, crash);
            let counter = Rc::downgrade(&shared);
            let sent = move || counter.upgrade().map_or(0, |c| c.sent.get());
            let traffic = shared.online_sent.clone();
            let online_sent = move || traffic.borrow().clone();
            let ch = SharedChannel::new(Side { ch: shared.clone(), fpre: false });
            let fpre = SharedChannel::new(Side { ch: shared.clone(), fpre: true });
            drop(shared);
            let pre = match S::setup(fpre, seed).await {
                Ok(pre) => pre,
                Err(e) => return PartyResult { outputs: Err(e), stats: None, sent: sent(), online_sent: online_sent() },
            };
            DELTAS.with(|d| d.borrow_mut()[p] = Some(pre.delta()));
            let mut party = match AuthGcParty::new(pre, ch, session, job.options) {
                Ok(party) => party,
                Err(e) => return PartyResult { outputs: Err(e), stats: None, sent: sent(), online_sent: online_sent() },
            };
            let outputs = drive(&mut party, job, &inputs).await;
            PartyResult { outputs, stats: Some(party.last_stats().clone()), sent: sent(), online_sent: online_sent() }
        }) as Pin<Box<dyn Future<Output = PartyResult> + '_>>
    });
    run_local(join_all(futures)).expect("the parties deadlocked")
}

async fn drive<P: Preprocessor, C: Channel>(
    party: &mut AuthGcParty<P, C>,
    job: &Job<'_>,
    inputs: &[Vec<bool>],
) -> Result<Outputs, AuthGcError> {
    let c = job.circuit.circuit();
    if job.mode == Mode::Pooled {
        let ands = c.stats().and as usize;
        let input_bits = c.input_bits().unwrap() as usize;
        party.preprocess(ands, ands + input_bits, |_, _, _| {}).await?;
    }
    if job.mode != Mode::Interleaved {
        party.prepare(job.circuit, &job.roles, |_, _, _| {}).await?;
    }
    party.run(&mut job.circuit.source(), &job.roles, inputs, |_, _, _| {}).await
}

/// Runs `job` honestly and checks every party's outputs against plaintext evaluation: exactly
/// the recipients of each output value learn it, and they learn the right value.
pub fn check_job<S: PreSetup>(job: &Job<'_>) -> Vec<PartyResult> {
    let results = run_job::<S>(job, &Deviation::None);
    let want = plaintext(job);
    let errors: Vec<String> =
        results.iter().enumerate().filter_map(|(p, r)| r.outputs.as_ref().err().map(|e| format!("party {p}: {e}"))).collect();
    assert!(errors.is_empty(), "honest run failed: {errors:?}");
    for (p, r) in results.iter().enumerate() {
        let out = r.outputs.as_ref().expect("checked");
        assert_eq!(out.len(), want.len());
        for (i, (got, want)) in out.iter().zip(&want).enumerate() {
            if job.roles.outputs[i].includes(p) {
                assert_eq!(got.as_ref(), Some(want), "party {p}, output {i}, evaluator {}", job.roles.evaluator);
            } else {
                assert_eq!(got, &None, "party {p} must not learn output {i}");
            }
        }
    }
    results
}

/// The circuit's outputs on the job's inputs, in plaintext.
pub fn plaintext(job: &Job<'_>) -> Vec<Vec<bool>> {
    let c = job.circuit.circuit();
    let mut next = vec![0usize; job.inputs.len()];
    let all: Vec<Vec<bool>> = job
        .roles
        .owners
        .iter()
        .map(|&p| {
            let v = job.inputs[p][next[p]].clone();
            next[p] += 1;
            v
        })
        .collect();
    c.evaluate(&all).expect("plaintext evaluation")
}

/// Whether wire `w`'s value reaches an input of an AND gate through XOR, INV and COPY gates
/// (for a single-assignment circuit).
pub fn feeds_and(c: &Circuit, w: u32) -> bool {
    let mut tainted = vec![false; c.wires as usize];
    tainted[w as usize] = true;
    for g in &c.gates {
        match *g {
            Gate::And { a, b, .. } if tainted[a as usize] || tainted[b as usize] => return true,
            Gate::Xor { a, b, out } => tainted[out as usize] = tainted[a as usize] || tainted[b as usize],
            Gate::Inv { a, out } | Gate::Copy { a, out } => tainted[out as usize] = tainted[a as usize],
            _ => {}
        }
    }
    false
}

/// Whether an AND gate precedes wire `w` (its value depends on some AND gate's output), in a
/// single-assignment circuit: then the evaluator's labels on `w` were rebuilt from several
/// garblers' rows, and a failed label check there cannot tell who deviated (n ≥ 3).
pub fn after_and(c: &Circuit, w: u32) -> bool {
    let mut after = vec![false; c.wires as usize];
    for g in &c.gates {
        let (out, v) = match *g {
            Gate::And { out, .. } => (out, true),
            Gate::Xor { a, b, out } => (out, after[a as usize] || after[b as usize]),
            Gate::Inv { a, out } | Gate::Copy { a, out } => (out, after[a as usize]),
            Gate::Const { out, .. } => (out, false),
        };
        after[out as usize] = v;
    }
    after[w as usize]
}

/// The AND gates (position among the circuit's AND gates, output wire), in circuit order.
pub fn and_gates(c: &Circuit) -> Vec<(usize, u32)> {
    c.gates.iter().filter_map(|g| if let Gate::And { out, .. } = *g { Some(out) } else { None }).enumerate().collect()
}

/// No honest party (every party but `cheater`) names an honest party as the culprit of a failed
/// check or the sender of a malformed message: WRK17 gives abort, not identifiable abort, and a
/// verdict may only name a party the check proves deviated.
#[track_caller]
pub fn assert_no_honest_party_blamed(results: &[PartyResult], cheater: PartyId) {
    for (p, r) in results.iter().enumerate().filter(|(p, _)| *p != cheater) {
        if let Err(e @ (AuthGcError::CheatingDetected { .. } | AuthGcError::Malformed { .. })) = &r.outputs {
            assert!(e.peer().is_none_or(|c| c == cheater), "honest party {p} blames honest party {:?}: {e}", e.peer());
        }
    }
}

/// Splits per-value inputs (circuit order) among their owners.
pub fn by_owner(owners: &[PartyId], values: &[Vec<bool>], parties: usize) -> Vec<Vec<Vec<bool>>> {
    let mut out = vec![Vec::new(); parties];
    for (&p, v) in owners.iter().zip(values) {
        out[p].push(v.clone());
    }
    out
}

/// Every honest party (all but `cheater`) failed, and none of them learned anything.
pub fn assert_all_abort(results: &[PartyResult], cheater: PartyId) -> Vec<AuthGcError> {
    results
        .iter()
        .enumerate()
        .filter(|(p, _)| *p != cheater)
        .map(|(p, r)| match &r.outputs {
            Ok(out) => panic!("honest party {p} finished with outputs {out:?} although party {cheater} cheated"),
            Err(e) => e.clone(),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Circuits.

/// A reference circuit by file name, parsed and prepared once per test binary.
pub fn reference(name: &str) -> &'static PreparedCircuit {
    static CACHE: OnceLock<Vec<(&'static str, PreparedCircuit)>> = OnceLock::new();
    const FILES: [&str; 7] =
        ["aes_128.txt", "sha256.txt", "adder64.txt", "sub64.txt", "mult64.txt", "neg64.txt", "zero_equal.txt"];
    let all = CACHE.get_or_init(|| {
        FILES
            .iter()
            .map(|&f| {
                let path = webmpc_circuit::testing::reference_dir().join(f);
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                (f, PreparedCircuit::new(Circuit::parse_bristol(&text).unwrap()).unwrap())
            })
            .collect()
    });
    &all.iter().find(|(f, _)| *f == name).unwrap_or_else(|| panic!("no circuit {name}")).1
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

pub fn u64_bits(x: u64, width: usize) -> Vec<bool> {
    (0..width).map(|k| (x >> k) & 1 == 1).collect()
}

pub fn bits_u64(bits: &[bool]) -> u64 {
    bits.iter().enumerate().fold(0, |acc, (k, &b)| acc | (u64::from(b) << k))
}

pub use webmpc_circuit::testing::{vickrey, vickrey_client_value, vickrey_clients, vickrey_reference};

/// A random circuit over the given input widths using every gate kind; its last 8 wires are the
/// output (copied there).
pub fn random_circuit(seed: &[u8], inputs: &[u32]) -> Circuit {
    let n_in: u32 = inputs.iter().sum();
    let mut gates = Vec::new();
    let mut wires = n_in;
    for (k, &byte) in seed.iter().enumerate() {
        let pick = |x: u32| x % wires;
        let (a, b) = (pick(byte as u32 * 31 + k as u32), pick(byte as u32 * 7 + 3 * k as u32 + 1));
        let out = wires;
        gates.push(match byte % 6 {
            0..=2 => Gate::And { a, b, out },
            3 => Gate::Xor { a, b, out },
            4 => Gate::Inv { a, out },
            _ => {
                if byte & 0x80 == 0 {
                    Gate::Const { value: byte & 0x40 != 0, out }
                } else {
                    Gate::Copy { a, out }
                }
            }
        });
        wires += 1;
    }
    for i in 0..8 {
        gates.push(Gate::Copy { a: wires - 8 + i, out: wires + i });
    }
    Circuit { wires: wires + 8, inputs: inputs.to_vec(), outputs: vec![8], gates }
}

// ---------------------------------------------------------------------------------------------
// A streamed circuit generated on the fly.

/// `rounds` rounds over a 64-bit state s (initially x ⊕ y), each bit i in turn:
/// s_i ← s_{i+1} ⊕ (s_i ∧ y_i), updated in place (wires are overwritten), so the circuit has 320
/// wires whatever its length: 64 AND gates per round. Input 0 (x) and 1 (y), 64 bits each;
/// output 64 bits. The gates are generated as they are asked for; nothing is stored.
pub struct Recurrence {
    rounds: u64,
    pos: u64,
    shape: Shape,
}

const STATE: u32 = 64;
const S: u32 = 128;
const T: u32 = 192;
const O: u32 = 256;

impl Recurrence {
    pub fn new(rounds: u64) -> Recurrence {
        let gates = 2 * u64::from(STATE) + 2 * u64::from(STATE) * rounds;
        let mut hash = [0u8; 32];
        hash[..8].copy_from_slice(&rounds.to_le_bytes());
        hash[8..16].copy_from_slice(b"recurren");
        Recurrence { rounds, pos: 0, shape: Shape { wires: 320, inputs: vec![64, 64], outputs: vec![64], gates, hash } }
    }

    fn gate(&self, g: u64) -> Gate {
        let st = u64::from(STATE);
        if g < st {
            let i = g as u32;
            return Gate::Xor { a: i, b: 64 + i, out: S + i };
        }
        let body = 2 * st * self.rounds;
        if g < st + body {
            let k = g - st;
            let i = ((k / 2) % st) as u32;
            return if k % 2 == 0 {
                Gate::And { a: S + i, b: 64 + i, out: T + i }
            } else {
                Gate::Xor { a: S + (i + 1) % STATE, b: T + i, out: S + i }
            };
        }
        let i = (g - st - body) as u32;
        Gate::Copy { a: S + i, out: O + i }
    }

    /// The same recurrence in plaintext.
    pub fn reference(x: u64, y: u64, rounds: u64) -> u64 {
        let mut s = x ^ y;
        for _ in 0..rounds {
            for i in 0..64 {
                let si = (s >> i) & 1;
                let next = (s >> ((i + 1) % 64)) & 1;
                let yi = (y >> i) & 1;
                let v = next ^ (si & yi);
                s = (s & !(1 << i)) | (v << i);
            }
        }
        s
    }
}

impl GateSource for Recurrence {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    async fn next_chunk(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError> {
        out.clear();
        // Odd piece sizes on purpose: the protocol must cut its own chunks.
        let take = (max.max(1) as u64).min(777).min(self.shape.gates - self.pos);
        out.extend((self.pos..self.pos + take).map(|g| self.gate(g)));
        self.pos += take;
        Ok(())
    }
}

/// Roles with party `evaluator` evaluating, `owners` owning the inputs and every output to all.
pub fn roles_all(evaluator: PartyId, owners: &[PartyId], outputs: usize) -> Roles {
    Roles { evaluator, owners: owners.to_vec(), outputs: vec![Recipients::ALL; outputs] }
}
