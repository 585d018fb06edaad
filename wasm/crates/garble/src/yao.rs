//! Semi-honest Yao 2PC over a [`Channel`]: one party garbles, the other evaluates.
//!
//! A session runs 128 base OTs once ([`YaoGarbler::setup`] / [`YaoEvaluator::setup`]); each
//! [`run`](YaoGarbler::run) then garbles a circuit afresh:
//!
//! 1. **Agreement.** Both parties send the circuit's content hash, the input owners, the output
//!    assignment and the run number, and abort with `PARAMETER_MISMATCH` unless the peer's copy
//!    equals their own — before any input-dependent message.
//! 2. **Evaluator inputs** by Δ-OT (KOS, with the garbling Δ as the OT's global correlation): the
//!    garbler's keys are the zero-labels and the evaluator receives exactly the label of its bit.
//! 3. **Garbler inputs**: the garbler sends its active labels.
//! 4. **Tables**, streamed: one message per chunk of gates, so neither side holds the garbled
//!    circuit (memory is the wire labels plus a chunk).
//! 5. **Outputs** per assignment: the garbler sends decoding bits (lsb of the zero-label) only
//!    for outputs the evaluator may learn; the evaluator sends the colour bits only of outputs
//!    the garbler may learn. A party learns nothing about outputs not assigned to it.
//!
//! Δ is fixed for the session (it is the OT's correlation); labels are fresh per run and every
//! run has its own tweak tag, so no hash input/tweak pair repeats across runs.

use crate::halfgates::{table_bytes, Evaluator, GarbleError, Garbler};
use sha2::{Digest, Sha256};
use thiserror::Error;
use webmpc_circuit::{Circuit, Gate};
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_ot::{CotReceiver, CotSender, KosReceiver, KosSender, OtError, SessionId};

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

/// A circuit with its content hash computed once, for running many times; the garbling schedule
/// of each chunk is computed on first use and kept.
#[derive(Debug)]
pub struct PreparedCircuit {
    circuit: Circuit,
    hash: [u8; 32],
    plans: std::sync::OnceLock<Vec<Vec<(u32, u32)>>>,
}

impl PreparedCircuit {
    /// Validates `circuit` and hashes it.
    pub fn new(circuit: Circuit) -> Result<Self, webmpc_circuit::CircuitError> {
        circuit.validate()?;
        let hash = circuit.content_hash();
        Ok(PreparedCircuit { circuit, hash, plans: std::sync::OnceLock::new() })
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
    /// The wires of input value `i` (inputs come first, in order).
    fn input_wires(&self, i: usize) -> core::ops::Range<u32> {
        let start: u32 = self.inputs[..i].iter().sum();
        start..start + self.inputs[i]
    }

    /// The wires of output value `i` (outputs are the last wires, in order).
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

    /// Replaces `out` with the next at most `max` gates. After the last gate it leaves `out`
    /// empty — and only once the whole circuit has been checked against `shape().hash`, so a
    /// run never reveals outputs of a circuit other than the one agreed on.
    async fn next_chunk(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError>;
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

    fn cached_order(&self) -> Option<&[(u32, u32)]> {
        // Plans are cut at CHUNK_GATES, the only chunk size the protocol asks for.
        let c = &self.prepared.circuit;
        let plans = self.prepared.plans.get_or_init(|| {
            c.gates.chunks(CHUNK_GATES).map(|chunk| crate::halfgates::plan_chunk(c.wires, chunk)).collect()
        });
        plans.get(self.chunk).map(Vec::as_slice)
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
    let mut out = Vec::new();
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
        out.extend(wires.zip(v.iter().copied()));
    }
    Ok(out)
}

fn peer_wires(circuit: &Shape, owners: &[Owner], them: Owner) -> Vec<u32> {
    (0..owners.len()).filter(|&i| owners[i] == them).flat_map(|i| circuit.input_wires(i)).collect()
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

/// What both roles do first in a run: check the arguments, take the run number, and agree with
/// the peer on the circuit and the assignment. Returns this party's (wire, bit) inputs.
async fn start_run<C: Channel>(
    ch: &C,
    peer: PartyId,
    runs: &mut u64,
    shape: &Shape,
    (owners, reveal): (&[Owner], &[Reveal]),
    me: Owner,
    inputs: &[Vec<bool>],
) -> Result<(Vec<(u32, bool)>, u64), YaoError> {
    check_shape(shape, owners, reveal)?;
    let mine = own_inputs(shape, owners, me, inputs)?;
    let run = *runs;
    *runs += 1;
    agree(ch, peer, agreement(shape, owners, reveal, run)).await?;
    Ok((mine, run))
}

/// Walks the circuit chunk by chunk, calling `f(source, chunk, index of its first gate)` and
/// then `progress(gates done)`.
async fn for_each_chunk<S: GateSource>(
    source: &mut S,
    mut progress: impl FnMut(u64),
    mut f: impl AsyncFnMut(&S, &[Gate], u64) -> Result<(), YaoError>,
) -> Result<(), YaoError> {
    let mut done = 0u64;
    let mut chunk = Vec::new();
    loop {
        source.next_chunk(CHUNK_GATES, &mut chunk).await?;
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
    runs: u64,
    prg: Prg,
}

impl<C: Channel> YaoGarbler<C> {
    /// Sets up a session with `peer` (base OTs; Δ random with lsb 1).
    pub async fn setup(ch: C, peer: PartyId, sid: &SessionId) -> Result<Self, YaoError> {
        let delta = Block::from_u128(webmpc_core::random::random_block().map_err(OtError::from)?.to_u128() | 1);
        let ot = KosSender::setup(ch, peer, &sid.derive(b"yao/ot"), delta).await?;
        let prg = Prg::from_entropy().map_err(OtError::from)?;
        Ok(YaoGarbler { ot, peer, sid: *sid, runs: 0, prg })
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
        let (mine, run) =
            start_run(self.ot.channel(), self.peer, &mut self.runs, circuit, (owners, reveal), Owner::Garbler, inputs)
                .await?;

        let delta = self.ot.delta();
        let mut g = Garbler::new(delta, circuit.wires, run_tag(&self.sid, run));
        // Evaluator's inputs: Δ-OT keys are the zero-labels.
        let theirs = peer_wires(circuit, owners, Owner::Evaluator);
        let keys = self.ot.send_cot(theirs.len()).await?;
        for (w, k) in theirs.iter().zip(keys) {
            g.set_label(*w, k);
        }
        // Own inputs: fresh zero-labels, active labels to the evaluator.
        let mut active = Vec::with_capacity(16 * mine.len());
        for &(w, bit) in &mine {
            let zero = self.prg.next_block();
            g.set_label(w, zero);
            active.extend_from_slice(&(zero ^ (delta & Block::mask_from_bit(bit as u8))).0);
        }
        let (ch, peer) = (self.ot.channel(), self.peer);
        ch.send(peer, active).await?;
        for_each_chunk(source, &mut progress, async |source, chunk, base| {
            let mut tables = Vec::with_capacity(table_bytes(chunk));
            g.garble_chunk_planned(chunk, base, source.cached_order(), &mut tables)?;
            Ok(ch.send(peer, tables).await?)
        })
        .await?;

        // Decoding bits for the evaluator's outputs; colour bits back for ours.
        let wires = output_wires(circuit);
        ch.send(peer, output_lsbs(&wires, reveal, Reveal::to_evaluator, |w| g.label(w))).await?;
        let n = output_bit_count(&wires, reveal, Reveal::to_garbler);
        let colours = ch.recv_exact(peer, n.div_ceil(8)).await?;
        Ok(decode_outputs(&wires, reveal, Reveal::to_garbler, &colours, |w| g.label(w)))
    }
}

/// The evaluating party of a Yao session.
pub struct YaoEvaluator<C> {
    ot: KosReceiver<C>,
    peer: PartyId,
    sid: SessionId,
    runs: u64,
}

impl<C: Channel> YaoEvaluator<C> {
    /// Sets up a session with `peer` (base OTs).
    pub async fn setup(ch: C, peer: PartyId, sid: &SessionId) -> Result<Self, YaoError> {
        let ot = KosReceiver::setup(ch, peer, &sid.derive(b"yao/ot")).await?;
        Ok(YaoEvaluator { ot, peer, sid: *sid, runs: 0 })
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
        let (mine, run) = start_run(
            self.ot.channel(),
            self.peer,
            &mut self.runs,
            circuit,
            (owners, reveal),
            Owner::Evaluator,
            inputs,
        )
        .await?;

        let mut e = Evaluator::new(circuit.wires, run_tag(&self.sid, run));
        let choices: Vec<bool> = mine.iter().map(|&(_, b)| b).collect();
        let labels = self.ot.receive_cot(&choices).await?;
        for (&(w, _), l) in mine.iter().zip(labels) {
            e.set_label(w, l);
        }
        let (ch, peer) = (self.ot.channel(), self.peer);
        let theirs = peer_wires(circuit, owners, Owner::Garbler);
        let active = ch.recv_exact(peer, 16 * theirs.len()).await?;
        for (w, l) in theirs.iter().zip(Block::slice_from_bytes(&active).expect("multiple of 16")) {
            e.set_label(*w, *l);
        }
        for_each_chunk(source, &mut progress, async |source, chunk, base| {
            let tables = ch.recv(peer).await?;
            Ok(e.evaluate_chunk_planned(chunk, base, source.cached_order(), &tables)?)
        })
        .await?;

        let wires = output_wires(circuit);
        let n = output_bit_count(&wires, reveal, Reveal::to_evaluator);
        let decode = ch.recv_exact(peer, n.div_ceil(8)).await?;
        ch.send(peer, output_lsbs(&wires, reveal, Reveal::to_garbler, |w| e.label(w))).await?;
        Ok(decode_outputs(&wires, reveal, Reveal::to_evaluator, &decode, |w| e.label(w)))
    }
}
