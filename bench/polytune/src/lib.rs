//! Bench-only peer baseline: runs [polytune](https://crates.io/crates/polytune) (multi-party
//! authenticated garbling after Wang–Ranellucci–Katz, malicious security with abort) on the
//! project's reference Bristol Fashion circuits, all parties in one process.
//!
//! - [`to_polytune`] converts a [`webmpc_circuit::Circuit`] (parsed by the project's own parser)
//!   to polytune's input form, garble_lang's SSA circuit, with the same input ownership rule the
//!   other baselines use ([`owned_values`]).
//! - [`LocalChannel`] and [`run_local`]: an in-memory [`Channel`] mesh and a one-thread poll loop.
//!   They run every party in one thread with no async runtime, so the very same code runs natively
//!   and in wasm32 (polytune's own `SimpleChannel` is tokio-based and not built for wasm32).
//! - [`run_one_thread`]: all parties' `polytune::mpc` futures joined on one thread; the native
//!   binary also runs them on tokio's multi-thread runtime over polytune's `SimpleChannel`.
//!
//! Nothing here is shipped: it exists to be measured against.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use polytune::channel::Channel;
use polytune::garble_lang::circuit::{Circuit as SsaCircuit, Gate as SsaGate};
use polytune::garble_lang::register_circuit::Circuit as RegisterCircuit;
use webmpc_circuit::{Circuit, Gate};

/// Which input values each of `parties` parties owns: party `i` owns value `i`; parties beyond
/// the last value own none (they garble and check, like helper parties); with fewer parties than
/// values, the last party owns the rest. The same rule as `scripts/bench/baselines/cases.mjs`.
pub fn owned_values(values: usize, parties: usize) -> Vec<Vec<usize>> {
    let mut owners = vec![Vec::new(); parties];
    for v in 0..values {
        owners[v.min(parties - 1)].push(v);
    }
    owners
}

/// Converts a circuit to garble_lang's SSA form for `parties` parties.
///
/// SSA gate `i` is input bit `i` for `i` below the total input bits, then one gate per `AND`,
/// `XOR` or `INV`. Copies alias their source; constants are built from input bit 0
/// (`XOR(x, x) = 0`, `NOT 0 = 1`); output gates name the sources of the circuit's output wires
/// in order. Party `p`'s input bits are the wires of its [`owned_values`], which are contiguous
/// and in party order, as polytune expects.
pub fn to_polytune(c: &Circuit, parties: usize) -> Result<SsaCircuit, String> {
    c.validate().map_err(|e| format!("circuit: {e}"))?;
    if parties < 2 {
        return Err("polytune needs at least 2 parties".into());
    }
    let in_bits = c.input_bits().ok_or("input widths overflow")? as usize;
    if in_bits == 0 {
        return Err("a circuit without inputs".into());
    }
    let input_gates = owned_values(c.inputs.len(), parties)
        .iter()
        .map(|vs| vs.iter().map(|&v| c.inputs[v] as usize).sum())
        .collect();
    const UNSET: usize = usize::MAX;
    let mut at = vec![UNSET; c.wires as usize];
    for (w, slot) in at.iter_mut().enumerate().take(in_bits) {
        *slot = w;
    }
    let mut gates: Vec<SsaGate> = Vec::with_capacity(c.gates.len());
    let push = |gates: &mut Vec<SsaGate>, g: SsaGate| {
        gates.push(g);
        in_bits + gates.len() - 1
    };
    let (mut zero, mut one) = (None, None);
    for g in &c.gates {
        match *g {
            Gate::Xor { a, b, out } => at[out as usize] = push(&mut gates, SsaGate::Xor(at[a as usize], at[b as usize])),
            Gate::And { a, b, out } => at[out as usize] = push(&mut gates, SsaGate::And(at[a as usize], at[b as usize])),
            Gate::Inv { a, out } => at[out as usize] = push(&mut gates, SsaGate::Not(at[a as usize])),
            Gate::Copy { a, out } => at[out as usize] = at[a as usize],
            Gate::Const { value, out } => {
                let z = *zero.get_or_insert_with(|| push(&mut gates, SsaGate::Xor(0, 0)));
                at[out as usize] = if value { *one.get_or_insert_with(|| push(&mut gates, SsaGate::Not(z))) } else { z };
            }
        }
    }
    let out_bits = c.output_bits().ok_or("output widths overflow")?;
    let output_gates = (c.wires - out_bits..c.wires).map(|w| at[w as usize]).collect();
    let ssa = SsaCircuit { input_gates, gates, output_gates };
    ssa.validate().map_err(|e| format!("garble_lang rejects the converted circuit: {e:?}"))?;
    Ok(ssa)
}

/// One party's end of an in-memory full mesh; counts the bytes it sends.
pub struct LocalChannel {
    party: usize,
    mesh: Rc<RefCell<Mesh>>,
    sent: Cell<u64>,
}

struct Mesh {
    /// `queues[from][to]`: messages in flight from `from` to `to`.
    queues: Vec<Vec<VecDeque<Vec<u8>>>>,
    /// `waiting[to][from]`: the waker of `to`'s pending receive from `from`.
    waiting: Vec<Vec<Option<Waker>>>,
}

/// Error of a [`LocalChannel`] operation: a party index outside the mesh.
#[derive(Debug)]
pub struct NoSuchParty(pub usize);

impl LocalChannel {
    /// A full mesh of `parties` channels; element `p` is party `p`'s end.
    pub fn mesh(parties: usize) -> Vec<LocalChannel> {
        let mesh = Rc::new(RefCell::new(Mesh {
            queues: (0..parties).map(|_| (0..parties).map(|_| VecDeque::new()).collect()).collect(),
            waiting: (0..parties).map(|_| (0..parties).map(|_| None).collect()).collect(),
        }));
        (0..parties).map(|party| LocalChannel { party, mesh: mesh.clone(), sent: Cell::new(0) }).collect()
    }

    /// Bytes this party has sent.
    pub fn bytes_sent(&self) -> u64 {
        self.sent.get()
    }
}

impl Channel for LocalChannel {
    type SendError = NoSuchParty;
    type RecvError = NoSuchParty;

    async fn send_bytes_to(&self, p: usize, data: Vec<u8>, _phase: &str) -> Result<(), NoSuchParty> {
        let mut m = self.mesh.borrow_mut();
        if p >= m.queues.len() || p == self.party {
            return Err(NoSuchParty(p));
        }
        self.sent.set(self.sent.get() + data.len() as u64);
        m.queues[self.party][p].push_back(data);
        if let Some(w) = m.waiting[p][self.party].take() {
            w.wake();
        }
        Ok(())
    }

    async fn recv_bytes_from(&self, p: usize, _phase: &str) -> Result<Vec<u8>, NoSuchParty> {
        std::future::poll_fn(|cx| {
            let mut m = self.mesh.borrow_mut();
            if p >= m.queues.len() || p == self.party {
                return Poll::Ready(Err(NoSuchParty(p)));
            }
            match m.queues[p][self.party].pop_front() {
                Some(msg) => Poll::Ready(Ok(msg)),
                None => {
                    m.waiting[self.party][p] = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Drives `fut` to completion on this thread by polling it while something woke it. Every wake
/// here comes from a [`LocalChannel`] send made during a poll, so a poll that ends pending with
/// no wake can never progress: that is reported as a deadlock instead of spinning forever.
pub fn run_local<F: Future>(fut: F) -> Result<F::Output, String> {
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        flag.0.store(false, Ordering::SeqCst);
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return Ok(v);
        }
        if !flag.0.load(Ordering::SeqCst) {
            return Err("deadlock: every party waits for a message nobody sent".into());
        }
    }
}

/// Input bits of each party: its owned values' wires, concatenated.
pub fn party_inputs(c: &Circuit, values: &[Vec<bool>], parties: usize) -> Vec<Vec<bool>> {
    owned_values(c.inputs.len(), parties)
        .iter()
        .map(|vs| vs.iter().flat_map(|&v| values[v].iter().copied()).collect())
        .collect()
}

/// What one run gave: every party's output bits and the bytes all parties sent.
pub struct RunResult {
    /// `outputs[p]`: party `p`'s output bits (all parties receive the output).
    pub outputs: Vec<Vec<bool>>,
    /// Bytes sent, summed over all parties.
    pub bytes: u64,
}

/// Runs `polytune::mpc` for all `parties` parties on this thread over a [`LocalChannel`] mesh:
/// party 0 evaluates, every party receives the output.
pub fn run_one_thread(circuit: &RegisterCircuit, inputs: &[Vec<bool>]) -> Result<RunResult, String> {
    let parties = inputs.len();
    let chans = LocalChannel::mesh(parties);
    let p_out: Vec<usize> = (0..parties).collect();
    let futs = chans
        .iter()
        .enumerate()
        .map(|(p, ch)| polytune::mpc(ch, circuit, &inputs[p], 0, p, &p_out, None));
    let results = run_local(futures_util::future::join_all(futs))?;
    let mut outputs = Vec::with_capacity(parties);
    for (p, r) in results.into_iter().enumerate() {
        outputs.push(r.map_err(|e| format!("party {p}: {e}"))?);
    }
    Ok(RunResult { outputs, bytes: chans.iter().map(LocalChannel::bytes_sent).sum() })
}

/// Parses, converts and checks one case: returns the register circuit polytune runs, each
/// party's input bits, and the expected output bits from the project's plaintext evaluator.
pub fn prepare(bristol: &str, values: &[Vec<u8>], parties: usize) -> Result<(RegisterCircuit, Vec<Vec<bool>>, Vec<bool>, usize), String> {
    let c = Circuit::parse_bristol(bristol).map_err(|e| format!("bristol: {e}"))?;
    if values.len() != c.inputs.len() {
        return Err(format!("the circuit has {} input values, {} given", c.inputs.len(), values.len()));
    }
    let bits: Vec<Vec<bool>> = values.iter().zip(&c.inputs).map(|(v, &w)| webmpc_circuit::bits_from_bytes_be(v, w)).collect();
    let expected: Vec<bool> = c.evaluate(&bits).map_err(|e| format!("evaluate: {e}"))?.concat();
    let ssa = to_polytune(&c, parties)?;
    let and = c.stats().and as usize;
    Ok((RegisterCircuit::from(&ssa), party_inputs(&c, &bits, parties), expected, and))
}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use polytune::garble_lang::register_circuit::Circuit as RegisterCircuit;
    use wasm_bindgen::prelude::*;

    /// One case prepared for repeated runs: parsed, converted and its expected output computed
    /// once, so that [`PolytuneCase::run`] times only the protocol (as the native binary does).
    #[wasm_bindgen]
    pub struct PolytuneCase {
        circuit: RegisterCircuit,
        inputs: Vec<Vec<bool>>,
        expected: Vec<bool>,
    }

    thread_local! {
        static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }

    /// The message and location of the last Rust panic in this instance (a panic traps as
    /// `unreachable` in JS, which says nothing about why), or an empty string.
    #[wasm_bindgen(js_name = lastPanic)]
    pub fn last_panic() -> String {
        LAST_PANIC.with(|p| p.borrow().clone())
    }

    #[wasm_bindgen(start)]
    fn start() {
        std::panic::set_hook(Box::new(|info| LAST_PANIC.with(|p| *p.borrow_mut() = info.to_string())));
    }

    #[wasm_bindgen]
    impl PolytuneCase {
        /// `bristol`: the circuit; `values_hex`: its input values (big-endian hex, one per input
        /// value); `parties`: how many parties run it.
        #[wasm_bindgen(constructor)]
        pub fn new(bristol: &str, values_hex: Vec<String>, parties: usize) -> Result<PolytuneCase, JsError> {
            let values = values_hex.iter().map(|h| super::from_hex(h)).collect::<Result<Vec<_>, _>>().map_err(|e| JsError::new(&e))?;
            let (circuit, inputs, expected, _) = super::prepare(bristol, &values, parties).map_err(|e| JsError::new(&e))?;
            Ok(PolytuneCase { circuit, inputs, expected })
        }

        /// Runs every party in this instance on one thread; checks every party's output against
        /// the plaintext evaluator and returns the bytes sent in total. Throws on any failure.
        pub fn run(&self) -> Result<f64, JsError> {
            let r = super::run_one_thread(&self.circuit, &self.inputs).map_err(|e| JsError::new(&e))?;
            super::check(&r.outputs, &self.expected).map_err(|e| JsError::new(&e))?;
            Ok(r.bytes as f64)
        }
    }
}

/// Checks that every party got `expected`.
pub fn check(outputs: &[Vec<bool>], expected: &[bool]) -> Result<(), String> {
    for (p, o) in outputs.iter().enumerate() {
        if o != expected {
            return Err(format!("party {p}: output {} != expected {}", to_hex(o), to_hex(expected)));
        }
    }
    Ok(())
}

/// Hex of output bits read as a big-endian byte string (the circuits' convention).
pub fn to_hex(bits: &[bool]) -> String {
    webmpc_circuit::bytes_be_from_bits(bits).iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of a hex string.
pub fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("not hex: {s}"));
    }
    Ok((0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("checked hex")).collect())
}
