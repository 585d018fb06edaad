//! Semi-honest Yao 2PC over a [`Channel`]: one party garbles, the other evaluates.
//!
//! **Security: semi-honest only.** Both parties' inputs stay private, and each learns only the
//! outputs assigned to it, as long as both follow the protocol. Nothing stops a party that
//! deviates: a cheating **garbler** can garble a different function (the tables are not
//! checked), for instance one that leaks the evaluator's input through the outputs or through
//! whether the run fails; a cheating **evaluator** can send the garbler any colour bits in step
//! 5 and so choose the garbler's outputs at will. Use a maliciously secure protocol
//! (authenticated garbling) when either party may cheat. The OT below it is KOS, which is
//! maliciously secure, so the evaluator's input labels are transferred safely either way.
//!
//! A session runs 128 base OTs once ([`YaoGarbler::setup`] / [`YaoEvaluator::setup`]); each
//! [`run`](YaoGarbler::run) then garbles a circuit afresh:
//!
//! 1. **Agreement.** Both parties send the circuit's content hash, the input owners, the output
//!    assignment and the run number, and abort with `PARAMETER_MISMATCH` unless the peer's copy
//!    equals their own — before any input-dependent message.
//! 2. **Evaluator inputs** by Δ-OT (KOS, with the garbling Δ as the OT's global correlation): the
//!    garbler's keys are the zero-labels and the evaluator receives exactly the label of its bit.
//! 3. **Garbler inputs**: the garbler sends its active labels (in messages of at most
//!    [`CHUNK_GATES`] labels).
//! 4. **Tables**, streamed: one message per chunk of gates, so neither side holds the garbled
//!    circuit (memory is the wire labels plus a chunk).
//! 5. **Outputs** per assignment: the garbler sends decoding bits (lsb of the zero-label) only
//!    for outputs the evaluator may learn; the evaluator sends the colour bits only of outputs
//!    the garbler may learn. A party learns nothing about outputs not assigned to it.
//!
//! **Δ.** Each [`YaoGarbler`] draws a fresh uniformly random Δ (lsb set) at setup and never takes
//! one from the caller: it is the KOS sender's global correlation, of which only the unhashed
//! Δ-OT outputs are used, and the garbling Δ. It is fixed for the session; labels are fresh per
//! run and every run has its own tweak tag, so no hash input/tweak pair repeats across runs. A
//! run that fails after its local argument checks poisons the session on both sides (every later
//! run is refused): a Δ is never used again after an abort, since aborts are how a cheating OT
//! receiver learns bits of it.
//!
//! **Size.** Circuits of up to [`MAX_WIRES`](webmpc_circuit::MAX_WIRES) wires are accepted; the
//! wire, input and output counts of a run's [`Shape`] are checked with checked arithmetic before
//! anything is allocated or sent.

use crate::halfgates::{table_bytes, Evaluator, GarbleError, Garbler};
use sha2::{Digest, Sha256};
use thiserror::Error;
use webmpc_circuit::{stream_limits, Circuit, CircuitError, Gate, GateStream, Location, MAX_WIRES};
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_ot::{CotSender, KosReceiver, KosSender, OtError, SessionId};

/// Gates per streamed chunk (and per table message): at most 2 MiB of tables.
pub const CHUNK_GATES: usize = 1 << 16;

/// Who supplies an input value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The garbling party.
    Garbler,
    /// The evaluating party.
    Evaluator,
}

/// Who learns an output value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reveal {
    /// Only the garbler.
    Garbler,
    /// Only the evaluator.
    Evaluator,
    /// Both parties.
    Both,
}

impl Reveal {
    fn to_evaluator(self) -> bool {
        matches!(self, Reveal::Evaluator | Reveal::Both)
    }
    fn to_garbler(self) -> bool {
        matches!(self, Reveal::Garbler | Reveal::Both)
    }
}

/// Why a 2PC run failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum YaoError {
    /// The channel failed.
    #[error(transparent)]
    Channel(#[from] ChannelError),
    /// OT failed.
    #[error(transparent)]
    Ot(#[from] OtError),
    /// Garbling or evaluation refused the material.
    #[error(transparent)]
    Garble(#[from] GarbleError),
    /// The parties do not hold the same circuit or assignment.
    #[error("the parties disagree on the {0}")]
    ParameterMismatch(&'static str),
    /// The caller's inputs do not fit the circuit.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A streamed circuit failed to decode or validate.
    #[error(transparent)]
    Circuit(#[from] webmpc_circuit::CircuitError),
}

impl YaoError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            YaoError::Channel(e) => e.code(),
            YaoError::Ot(e) => e.code(),
            YaoError::Garble(e) => e.code(),
            YaoError::ParameterMismatch(_) => "PARAMETER_MISMATCH",
            YaoError::InvalidArgument(_) => "INVALID_ARGUMENT",
            YaoError::Circuit(e) => e.code(),
        }
    }
}

/// A circuit with its content hash computed once, for running many times; each chunk is
/// compiled on first use (its schedule resolved, see [`crate::halfgates::CompiledChunk`]) and
/// kept.
#[derive(Debug)]
pub struct PreparedCircuit {
    circuit: Circuit,
    hash: [u8; 32],
    compiled: std::sync::OnceLock<Vec<crate::halfgates::CompiledChunk>>,
}

impl PreparedCircuit {
    /// Validates `circuit` (which bounds it by [`MAX_WIRES`]) and hashes it.
    pub fn new(circuit: Circuit) -> Result<Self, webmpc_circuit::CircuitError> {
        circuit.validate()?;
        let hash = circuit.content_hash();
        Ok(PreparedCircuit { circuit, hash, compiled: std::sync::OnceLock::new() })
    }

    /// The circuit.
    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    /// Its content hash (SHA-256 of the binary form).
    pub fn hash(&self) -> &[u8; 32] {
        &self.hash
    }
}

/// The public shape of a circuit: what both parties agree on before running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Number of wires.
    pub wires: u32,
    /// Bit width of each input value.
    pub inputs: Vec<u32>,
    /// Bit width of each output value.
    pub outputs: Vec<u32>,
    /// Number of gates.
    pub gates: u64,
    /// Content hash (SHA-256 of the binary form).
    pub hash: [u8; 32],
}

impl Shape {
    /// Checks the counts every other method relies on, with checked arithmetic: at most
    /// [`MAX_WIRES`] wires, and input bits and output bits each fitting in the wires. A shape
    /// from a parsed or validated circuit always passes; a hand-made [`GateSource`] may not.
    pub fn check(&self) -> Result<(), CircuitError> {
        let at = Location::Circuit;
        if self.wires > MAX_WIRES {
            return Err(CircuitError::TooLarge { at, what: "wire count", limit: u64::from(MAX_WIRES) });
        }
        let fits = |widths: &[u32]| {
            widths.iter().try_fold(0u32, |acc, &w| acc.checked_add(w)).is_some_and(|total| total <= self.wires)
        };
        if !fits(&self.inputs) || !fits(&self.outputs) {
            return Err(CircuitError::BadCounts { at, msg: "input or output bits exceed the wire count".into() });
        }
        Ok(())
    }

    /// The wires of input value `i` (inputs come first, in order). Needs a checked shape.
    fn input_wires(&self, i: usize) -> core::ops::Range<u32> {
        let start: u32 = self.inputs[..i].iter().sum();
        start..start + self.inputs[i]
    }

    /// The wires of output value `i` (outputs are the last wires, in order). Needs a checked
    /// shape.
    fn output_wires(&self, i: usize) -> core::ops::Range<u32> {
        let total: u32 = self.outputs.iter().sum();
        let start = self.wires - total + self.outputs[..i].iter().sum::<u32>();
        start..start + self.outputs[i]
    }
}

/// Where a run's gates come from: an in-memory circuit, or a stream that may be far larger than
/// memory (see `webmpc_circuit::GateStream`).
#[allow(async_fn_in_trait)]
pub trait GateSource {
    /// The circuit's shape, known before the first gate.
    fn shape(&self) -> &Shape;
    /// The schedule of the chunk last returned by `next_chunk`, if the source keeps one (see
    /// `halfgates::plan_chunk`); `None` makes the garbler plan it.
    fn cached_order(&self) -> Option<&[(u32, u32)]> {
        None
    }

    /// The chunk last returned by `next_chunk` compiled (see `halfgates::CompiledChunk`), if the
    /// source keeps it; preferred over [`cached_order`](Self::cached_order).
    fn cached_compiled(&self) -> Option<&crate::halfgates::CompiledChunk> {
        None
    }

    /// Replaces `out` with the next `max` gates, or all that are left if fewer: both parties
    /// must cut the circuit at the same places, since a chunk's tables are laid out in its own
    /// schedule order (the protocol refuses a chunk of any other length). After the last gate it
    /// leaves `out` empty — and only once the whole circuit has been checked against
    /// `shape().hash`, so a run never reveals outputs of a circuit other than the one agreed on.
    async fn next_chunk(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError>;
}

/// Where a [`StreamSource`] gets the pieces of a binary circuit from (a file, the network, a
/// JavaScript `pull()`), in pieces of any size.
#[allow(async_fn_in_trait)]
pub trait PieceSource {
    /// The next piece of the encoding, or `None` after the last.
    async fn next_piece(&mut self) -> Result<Option<Vec<u8>>, YaoError>;
}

/// A [`GateSource`] over a binary circuit that arrives in pieces, decoded and hashed as it
/// streams (`webmpc_circuit::GateStream` under `stream_limits`), so a circuit far larger than
/// memory runs with memory for the wire labels and one chunk. Chunks have the same length
/// however the pieces are cut, and the content hash is checked against the shape's before the
/// last chunk is handed out.
pub struct StreamSource<P> {
    stream: Option<GateStream>,
    pieces: P,
    shape: Shape,
    scratch: Vec<Gate>,
}

impl<P: PieceSource> StreamSource<P> {
    /// Starts from `prefix` (at least the whole header) and the content hash both parties agreed
    /// on; the rest comes from `pieces`.
    pub fn new(prefix: &[u8], hash: [u8; 32], pieces: P) -> Result<Self, YaoError> {
        let stream = GateStream::new(prefix, &stream_limits())?;
        let h = stream.header();
        let shape =
            Shape { wires: h.wires, inputs: h.inputs.clone(), outputs: h.outputs.clone(), gates: h.gates, hash };
        Ok(StreamSource { stream: Some(stream), pieces, shape, scratch: Vec::new() })
    }
}

impl<P: PieceSource> GateSource for StreamSource<P> {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    async fn next_chunk(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError> {
        out.clear();
        let max = max.max(1);
        while out.len() < max {
            let Some(stream) = self.stream.as_mut() else { return Ok(()) };
            stream.next_chunk_into(max - out.len(), &mut self.scratch)?;
            if !self.scratch.is_empty() {
                out.extend_from_slice(&self.scratch);
                continue;
            }
            if stream.remaining() == 0 {
                let hash = self.stream.take().expect("present").finish()?;
                if hash != self.shape.hash {
                    return Err(YaoError::ParameterMismatch("circuit (the stream does not match its declared hash)"));
                }
                return Ok(());
            }
            match self.pieces.next_piece().await? {
                Some(piece) => stream.push(&piece),
                None => return Err(YaoError::InvalidArgument("the circuit stream ended before its last gate".into())),
            }
        }
        Ok(())
    }
}

/// A [`GateSource`] over a [`PreparedCircuit`].
pub struct PreparedSource<'a> {
    prepared: &'a PreparedCircuit,
    shape: Shape,
    pos: usize,
    /// Index of the chunk last returned.
    chunk: usize,
}

impl PreparedCircuit {
    /// A gate source over this circuit, for [`YaoGarbler::run`] / [`YaoEvaluator::run`].
    pub fn source(&self) -> PreparedSource<'_> {
        let c = &self.circuit;
        let shape = Shape {
            wires: c.wires,
            inputs: c.inputs.clone(),
            outputs: c.outputs.clone(),
            gates: c.gates.len() as u64,
            hash: self.hash,
        };
        PreparedSource { prepared: self, shape, pos: 0, chunk: usize::MAX }
    }
}

impl GateSource for PreparedSource<'_> {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn cached_compiled(&self) -> Option<&crate::halfgates::CompiledChunk> {
        // Chunks are cut at CHUNK_GATES, the only chunk size the protocol asks for.
        let c = &self.prepared.circuit;
        // A circuit that cannot be compiled gets nothing cached: the garbler and evaluator then
        // plan each chunk themselves (and report what is wrong with it).
        let compiled = self.prepared.compiled.get_or_init(|| crate::local::compile_chunks(c).unwrap_or_default());
        compiled.get(self.chunk)
    }

    async fn next_chunk(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError> {
        let gates = &self.prepared.circuit.gates;
        let end = (self.pos + max.max(1)).min(gates.len());
        out.clear();
        out.extend_from_slice(&gates[self.pos..end]);
        // Cached plans line up with chunks only when chunks are CHUNK_GATES long.
        self.chunk =
            if max == CHUNK_GATES && self.pos % CHUNK_GATES == 0 { self.pos / CHUNK_GATES } else { usize::MAX };
        self.pos = end;
        Ok(())
    }
}

/// The public description of a run both parties must agree on.
fn agreement(shape: &Shape, owners: &[Owner], reveal: &[Reveal], run: u64) -> Vec<u8> {
    let mut m = Vec::with_capacity(48 + owners.len() + reveal.len());
    m.extend_from_slice(&shape.hash);
    m.extend_from_slice(&run.to_le_bytes());
    m.extend_from_slice(&(owners.len() as u32).to_le_bytes());
    m.extend(owners.iter().map(|o| *o as u8));
    m.extend_from_slice(&(reveal.len() as u32).to_le_bytes());
    m.extend(reveal.iter().map(|r| *r as u8));
    m
}

async fn agree<C: Channel>(ch: &C, peer: PartyId, mine: Vec<u8>) -> Result<(), YaoError> {
    ch.send(peer, mine.clone()).await?;
    let theirs = ch.recv(peer).await?;
    if theirs.len() != mine.len() || theirs[..32] != mine[..32] {
        return Err(YaoError::ParameterMismatch("circuit (content hash)"));
    }
    if theirs != mine {
        return Err(YaoError::ParameterMismatch("input owners, output assignment or run number"));
    }
    Ok(())
}

fn check_shape(circuit: &Shape, owners: &[Owner], reveal: &[Reveal]) -> Result<(), YaoError> {
    circuit.check()?;
    if owners.len() != circuit.inputs.len() {
        return Err(YaoError::InvalidArgument(format!(
            "{} input owners given for {} input values",
            owners.len(),
            circuit.inputs.len()
        )));
    }
    if reveal.len() != circuit.outputs.len() {
        return Err(YaoError::InvalidArgument(format!(
            "{} output assignments given for {} output values",
            reveal.len(),
            circuit.outputs.len()
        )));
    }
    Ok(())
}

/// Checks the caller's own input values (one per input value it owns, in circuit order) and
/// returns the (wire, bit) pairs.
fn own_inputs(
    circuit: &Shape,
    owners: &[Owner],
    me: Owner,
    values: &[Vec<bool>],
) -> Result<Vec<(u32, bool)>, YaoError> {
    let mine: Vec<usize> = (0..owners.len()).filter(|&i| owners[i] == me).collect();
    if values.len() != mine.len() {
        return Err(YaoError::InvalidArgument(format!("{} input values given, {} expected", values.len(), mine.len())));
    }
    for (v, &i) in values.iter().zip(&mine) {
        let wires = circuit.input_wires(i);
        if v.len() != wires.len() {
            return Err(YaoError::InvalidArgument(format!(
                "input value {} has {} bits; the circuit wants {}",
                i + 1,
                v.len(),
                wires.len()
            )));
        }
    }
    let mut out = reserve(circuit, values.iter().map(Vec::len).sum())?;
    for (v, &i) in values.iter().zip(&mine) {
        out.extend(circuit.input_wires(i).zip(v.iter().copied()));
    }
    Ok(out)
}

fn peer_wires(circuit: &Shape, owners: &[Owner], them: Owner) -> Result<Vec<u32>, YaoError> {
    let values = || (0..owners.len()).filter(move |&i| owners[i] == them);
    let mut out = reserve(circuit, values().map(|i| circuit.inputs[i] as usize).sum())?;
    out.extend(values().flat_map(|i| circuit.input_wires(i)));
    Ok(out)
}

/// Room for `n` per-input-bit records, or a typed error when memory cannot hold them (the input
/// bits are at most the wire count, but a circuit at the cap has 2^25 of them).
fn reserve<T>(circuit: &Shape, n: usize) -> Result<Vec<T>, YaoError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| GarbleError::TooManyWires { wires: circuit.wires, why: "out of memory for the input bits" })?;
    Ok(v)
}

fn run_tag(sid: &SessionId, run: u64) -> u64 {
    let mut h = Sha256::new();
    h.update(b"webmpc/yao/tweak-tag/v1");
    h.update(sid.0);
    h.update(run.to_le_bytes());
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

fn pack(bits: impl Iterator<Item = bool>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, b) in bits.enumerate() {
        if i % 8 == 0 {
            out.push(0);
        }
        *out.last_mut().expect("pushed") |= (b as u8) << (i % 8);
    }
    out
}

fn unpack(bytes: &[u8], n: usize) -> impl Iterator<Item = bool> + '_ {
    (0..n).map(move |i| (bytes[i / 8] >> (i % 8)) & 1 == 1)
}

/// What both roles do first in a run, before any message: refuse a poisoned session, check the
/// arguments and take the run number. Returns this party's (wire, bit) inputs and the run.
fn start_run(
    state: &mut RunState,
    shape: &Shape,
    (owners, reveal): (&[Owner], &[Reveal]),
    me: Owner,
    inputs: &[Vec<bool>],
) -> Result<(Vec<(u32, bool)>, u64), YaoError> {
    if state.poisoned {
        return Err(YaoError::InvalidArgument(
            "this Yao session failed in an earlier run and cannot be used again (its Δ must not be reused)".into(),
        ));
    }
    check_shape(shape, owners, reveal)?;
    let mine = own_inputs(shape, owners, me, inputs)?;
    let run = state.runs;
    state.runs += 1;
    Ok((mine, run))
}

/// Per-session bookkeeping shared by both roles.
#[derive(Default)]
struct RunState {
    /// Runs started so far (the next run's number).
    runs: u64,
    /// Set while a run talks to the peer and left set if it fails: from then on every run is
    /// refused, so a Δ is never used again after an abort.
    poisoned: bool,
}

/// Runs the networked part of a run: poisons the session first and clears it only on success.
async fn guarded<T>(
    state: &mut bool,
    run: impl core::future::Future<Output = Result<T, YaoError>>,
) -> Result<T, YaoError> {
    *state = true;
    let out = run.await?;
    *state = false;
    Ok(out)
}

/// Garbler input labels per message: bounded like a chunk of tables, whatever the input size.
const LABELS_PER_MESSAGE: usize = CHUNK_GATES;

/// `(offset, length)` of the messages `n` garbler input labels are sent in: at least one
/// (possibly empty) message, so the message sequence does not depend on whether the garbler has
/// inputs.
fn label_messages(n: usize) -> impl Iterator<Item = (usize, usize)> {
    let count = n.div_ceil(LABELS_PER_MESSAGE).max(1);
    (0..count).map(move |k| (k * LABELS_PER_MESSAGE, LABELS_PER_MESSAGE.min(n - k * LABELS_PER_MESSAGE)))
}

/// Walks the circuit chunk by chunk, calling `f(source, chunk, index of its first gate)` and
/// then `progress(gates done)`. Every chunk must be exactly [`CHUNK_GATES`] gates (the last one
/// the rest) and there must be exactly `shape().gates` of them in all: the garbler's tables of a
/// chunk only make sense to an evaluator holding the same chunk.
async fn for_each_chunk<S: GateSource>(
    source: &mut S,
    mut progress: impl FnMut(u64),
    mut f: impl AsyncFnMut(&S, &[Gate], u64) -> Result<(), YaoError>,
) -> Result<(), YaoError> {
    let total = source.shape().gates;
    let mut done = 0u64;
    let mut chunk = Vec::new();
    loop {
        source.next_chunk(CHUNK_GATES, &mut chunk).await?;
        let want = (total - done).min(CHUNK_GATES as u64);
        if chunk.len() as u64 != want {
            return Err(YaoError::InvalidArgument(format!(
                "the gate source returned {} gates where the circuit has {want} more to give",
                chunk.len()
            )));
        }
        if chunk.is_empty() {
            return Ok(());
        }
        f(source, &chunk, done).await?;
        done += chunk.len() as u64;
        progress(done);
    }
}

/// The output wires, grouped by output value.
fn output_wires(shape: &Shape) -> Vec<Vec<u32>> {
    (0..shape.outputs.len()).map(|i| shape.output_wires(i).collect()).collect()
}

/// The lsbs of `label(w)` for every output wire of the values `to` selects, packed.
fn output_lsbs(wires: &[Vec<u32>], reveal: &[Reveal], to: fn(Reveal) -> bool, label: impl Fn(u32) -> Block) -> Vec<u8> {
    pack(wires.iter().zip(reveal).filter(|(_, r)| to(**r)).flat_map(|(w, _)| w.iter().map(|&w| label(w).lsb())))
}

/// Number of output bits of the values `to` selects.
fn output_bit_count(wires: &[Vec<u32>], reveal: &[Reveal], to: fn(Reveal) -> bool) -> usize {
    wires.iter().zip(reveal).filter(|(_, r)| to(**r)).map(|(w, _)| w.len()).sum()
}

/// This party's outputs: for the values `to` selects, bit = received bit ⊕ lsb of our label.
fn decode_outputs(
    wires: &[Vec<u32>],
    reveal: &[Reveal],
    to: fn(Reveal) -> bool,
    received: &[u8],
    label: impl Fn(u32) -> Block,
) -> Outputs {
    let mut bits = unpack(received, output_bit_count(wires, reveal, to));
    wires
        .iter()
        .zip(reveal)
        .map(|(ws, r)| to(*r).then(|| ws.iter().map(|&w| bits.next().expect("counted") ^ label(w).lsb()).collect()))
        .collect()
}

/// Output values as bits, `None` for values not revealed to this party.
pub type Outputs = Vec<Option<Vec<bool>>>;

/// The garbling party of a Yao session.
pub struct YaoGarbler<C> {
    ot: KosSender<C>,
    peer: PartyId,
    sid: SessionId,
    state: RunState,
    prg: Prg,
}

/// A fresh garbling Δ: uniformly random from the platform CSPRNG, with the point-and-permute
/// bit set.
fn fresh_delta() -> Result<Block, YaoError> {
    let r = webmpc_core::random::random_block().map_err(OtError::from)?;
    Ok(Block::from_u128(r.to_u128() | 1))
}

impl<C: Channel> YaoGarbler<C> {
    /// Sets up a session with `peer`: draws a fresh random Δ (lsb 1) for this instance and runs
    /// the base OTs of a KOS sender holding it (Δ-OT only; see the module docs).
    pub async fn setup(ch: C, peer: PartyId, sid: &SessionId) -> Result<Self, YaoError> {
        let ot = KosSender::setup(ch, peer, &sid.derive(b"yao/ot"), fresh_delta()?).await?;
        let prg = Prg::from_entropy().map_err(OtError::from)?;
        Ok(YaoGarbler { ot, peer, sid: *sid, state: RunState::default(), prg })
    }

    /// The channel (byte counters).
    pub fn channel(&self) -> &C {
        self.ot.channel()
    }

    /// Garbles `circuit` with `inputs` (the values of the inputs this party owns, in order).
    /// `progress(gates_done)` is called after each chunk.
    pub async fn run(
        &mut self,
        source: &mut impl GateSource,
        owners: &[Owner],
        reveal: &[Reveal],
        inputs: &[Vec<bool>],
        mut progress: impl FnMut(u64),
    ) -> Result<Outputs, YaoError> {
        let circuit = source.shape().clone();
        let circuit = &circuit;
        let (mine, run) = start_run(&mut self.state, circuit, (owners, reveal), Owner::Garbler, inputs)?;
        let YaoGarbler { ot, peer, sid, state, prg } = self;
        let peer = *peer;
        // Allocated before the agreement, so a circuit too large for memory fails before any
        // message (and the peer sees this party leave).
        let mut g = Garbler::new(ot.delta(), circuit.wires, run_tag(sid, run))?;
        guarded(&mut state.poisoned, async {
            agree(ot.channel(), peer, agreement(circuit, owners, reveal, run)).await?;
            let delta = ot.delta();
            // Evaluator's inputs: Δ-OT keys are the zero-labels, streamed chunk by chunk.
            let theirs = peer_wires(circuit, owners, Owner::Evaluator)?;
            ot.cot_stream(theirs.len(), |off, keys| {
                for (w, k) in theirs[off..].iter().zip(keys) {
                    g.set_label(*w, *k);
                }
            })
            .await?;
            // Own inputs: fresh zero-labels, active labels to the evaluator.
            let ch = ot.channel();
            for (off, len) in label_messages(mine.len()) {
                let mut active = Vec::with_capacity(16 * len);
                for &(w, bit) in &mine[off..off + len] {
                    let zero = prg.next_block();
                    g.set_label(w, zero);
                    active.extend_from_slice(&(zero ^ (delta & Block::mask_from_bit(bit as u8))).0);
                }
                ch.send(peer, active).await?;
            }
            for_each_chunk(source, &mut progress, async |source, chunk, base| {
                let mut tables = Vec::with_capacity(table_bytes(chunk));
                match source.cached_compiled().filter(|c| c.gates() == chunk.len()) {
                    Some(c) => g.garble_compiled(c, base, &mut tables)?,
                    None => g.garble_chunk_planned(chunk, base, source.cached_order(), &mut tables)?,
                }
                Ok(ch.send(peer, tables).await?)
            })
            .await?;

            // Decoding bits for the evaluator's outputs; colour bits back for ours.
            let wires = output_wires(circuit);
            ch.send(peer, output_lsbs(&wires, reveal, Reveal::to_evaluator, |w| g.label(w))).await?;
            let n = output_bit_count(&wires, reveal, Reveal::to_garbler);
            let colours = ch.recv_exact(peer, n.div_ceil(8)).await?;
            Ok(decode_outputs(&wires, reveal, Reveal::to_garbler, &colours, |w| g.label(w)))
        })
        .await
    }
}

/// The evaluating party of a Yao session.
pub struct YaoEvaluator<C> {
    ot: KosReceiver<C>,
    peer: PartyId,
    sid: SessionId,
    state: RunState,
}

impl<C: Channel> YaoEvaluator<C> {
    /// Sets up a session with `peer` (base OTs).
    pub async fn setup(ch: C, peer: PartyId, sid: &SessionId) -> Result<Self, YaoError> {
        let ot = KosReceiver::setup(ch, peer, &sid.derive(b"yao/ot")).await?;
        Ok(YaoEvaluator { ot, peer, sid: *sid, state: RunState::default() })
    }

    /// The channel (byte counters).
    pub fn channel(&self) -> &C {
        self.ot.channel()
    }

    /// Evaluates `circuit` with `inputs` (the values of the inputs this party owns, in order).
    pub async fn run(
        &mut self,
        source: &mut impl GateSource,
        owners: &[Owner],
        reveal: &[Reveal],
        inputs: &[Vec<bool>],
        mut progress: impl FnMut(u64),
    ) -> Result<Outputs, YaoError> {
        let circuit = source.shape().clone();
        let circuit = &circuit;
        let (mine, run) = start_run(&mut self.state, circuit, (owners, reveal), Owner::Evaluator, inputs)?;
        let YaoEvaluator { ot, peer, sid, state } = self;
        let peer = *peer;
        let mut e = Evaluator::new(circuit.wires, run_tag(sid, run))?;
        guarded(&mut state.poisoned, async {
            agree(ot.channel(), peer, agreement(circuit, owners, reveal, run)).await?;
            let choices: Vec<bool> = mine.iter().map(|&(_, b)| b).collect();
            ot.cot_stream(&choices, |off, labels| {
                for (&(w, _), l) in mine[off..].iter().zip(labels) {
                    e.set_label(w, *l);
                }
            })
            .await?;
            let ch = ot.channel();
            let theirs = peer_wires(circuit, owners, Owner::Garbler)?;
            for (off, len) in label_messages(theirs.len()) {
                // `len` is at most LABELS_PER_MESSAGE, so the length cannot overflow.
                let active = ch.recv_exact(peer, 16 * len).await?;
                for (w, l) in
                    theirs[off..off + len].iter().zip(Block::slice_from_bytes(&active).expect("multiple of 16"))
                {
                    e.set_label(*w, *l);
                }
            }
            for_each_chunk(source, &mut progress, async |source, chunk, base| {
                let tables = ch.recv(peer).await?;
                match source.cached_compiled().filter(|c| c.gates() == chunk.len()) {
                    Some(c) => Ok(e.evaluate_compiled(c, base, &tables)?),
                    None => Ok(e.evaluate_chunk_planned(chunk, base, source.cached_order(), &tables)?),
                }
            })
            .await?;

            let wires = output_wires(circuit);
            let n = output_bit_count(&wires, reveal, Reveal::to_evaluator);
            let decode = ch.recv_exact(peer, n.div_ceil(8)).await?;
            ch.send(peer, output_lsbs(&wires, reveal, Reveal::to_garbler, |w| e.label(w))).await?;
            Ok(decode_outputs(&wires, reveal, Reveal::to_evaluator, &decode, |w| e.label(w)))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::join;
    use webmpc_core::channel::memory::pair;

    #[test]
    fn every_garbler_instance_draws_its_own_delta_with_the_permute_bit_set() {
        // Δ is never the caller's and never shared: 16 sessions (same session id even), 16 Δs.
        let sid = SessionId::random().unwrap();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..16 {
            let (a, b) = pair();
            let (g, e) = block_on(async { join!(YaoGarbler::setup(a, 1, &sid), YaoEvaluator::setup(b, 0, &sid)) });
            let (g, _e) = (g.unwrap(), e.unwrap());
            let delta = g.ot.delta();
            assert!(delta.lsb(), "point-and-permute bit");
            assert!(seen.insert(delta.to_u128()), "two Yao instances shared a Δ");
        }
    }

    #[test]
    fn label_messages_cover_every_label_once_and_at_least_one_message() {
        assert_eq!(label_messages(0).collect::<Vec<_>>(), vec![(0, 0)]);
        assert_eq!(label_messages(5).collect::<Vec<_>>(), vec![(0, 5)]);
        let n = 2 * LABELS_PER_MESSAGE + 3;
        let m: Vec<_> = label_messages(n).collect();
        assert_eq!(
            m,
            vec![(0, LABELS_PER_MESSAGE), (LABELS_PER_MESSAGE, LABELS_PER_MESSAGE), (2 * LABELS_PER_MESSAGE, 3)]
        );
    }
}
