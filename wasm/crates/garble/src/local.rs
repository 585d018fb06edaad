//! Garbling and 2PC with both parties in one process: what the benchmarks time, natively and in
//! Wasm. Nothing here is needed by applications.

use crate::halfgates::{CompiledChunk, Evaluator, GarbleError, Garbler};
use crate::yao::{Owner, PreparedCircuit, Reveal, YaoError, YaoEvaluator, YaoGarbler};
use futures::join;
use webmpc_circuit::Circuit;
use webmpc_core::channel::memory::{pair, run_local, MemoryChannel};
use webmpc_core::channel::ChannelError;
use webmpc_core::Block;
use webmpc_ot::SessionId;

/// Garbles `circuit` once, then evaluates the tables, chunk by chunk, as the protocol does.
/// Returns the garbled bytes; `garble_only` skips evaluation (to time the garbler alone).
pub fn garble_and_evaluate(circuit: &Circuit, garble_only: bool, tag: u64) -> Result<usize, GarbleError> {
    garble_and_evaluate_compiled(circuit, None, garble_only, tag)
}

/// The chunks of `circuit` ([`crate::yao::CHUNK_GATES`] gates each) compiled once
/// ([`CompiledChunk`]), as a [`PreparedCircuit`] keeps them for the Yao protocol.
pub fn compile_chunks(circuit: &Circuit) -> Result<Vec<CompiledChunk>, GarbleError> {
    crate::halfgates::plan_chunks(circuit.wires, &circuit.gates, crate::yao::CHUNK_GATES)?
        .iter()
        .zip(circuit.gates.chunks(crate::yao::CHUNK_GATES))
        .map(|(plan, gates)| CompiledChunk::from_plan(circuit.wires, gates, plan))
        .collect()
}

/// [`garble_and_evaluate`] with the chunks compiled once ([`compile_chunks`]), as the Yao
/// protocol runs a [`PreparedCircuit`]; `None` plans every chunk on every run.
pub fn garble_and_evaluate_compiled(
    circuit: &Circuit,
    compiled: Option<&[CompiledChunk]>,
    garble_only: bool,
    tag: u64,
) -> Result<usize, GarbleError> {
    let delta = Block::from_u128(0x0123_4567_89ab_cdef_0f1e_2d3c_4b5a_6979 | 1);
    let mut g = Garbler::new(delta, circuit.wires, tag)?;
    // Only when it evaluates: timing the garbler alone must not pay for the evaluator's state.
    let mut e = if garble_only { None } else { Some(Evaluator::new(circuit.wires, tag)?) };
    let n_in: u32 = circuit.inputs.iter().sum();
    for w in 0..n_in {
        let zero = Block::from_u128((w as u128 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835));
        g.set_label(w, zero);
        if let Some(e) = e.as_mut() {
            e.set_label(w, zero);
        }
    }
    let mut bytes = 0;
    let mut tables = Vec::new();
    let mut base = 0u64;
    for (k, chunk) in circuit.gates.chunks(crate::yao::CHUNK_GATES).enumerate() {
        tables.clear();
        if let Some(c) = compiled.and_then(|c| c.get(k)) {
            g.garble_compiled(c, base, &mut tables)?;
            if let Some(e) = e.as_mut() {
                e.evaluate_compiled(c, base, &tables)?;
            }
        } else {
            g.garble_chunk(chunk, base, &mut tables)?;
            if let Some(e) = e.as_mut() {
                e.evaluate_chunk(chunk, base, &tables)?;
            }
        }
        bytes += tables.len();
        base += chunk.len() as u64;
    }
    Ok(bytes)
}

/// A circuit garbled once, kept so that its evaluation can be timed on its own: the garbled
/// tables of every chunk and the active labels of the inputs (all zeros input).
pub struct Garbled {
    tag: u64,
    inputs: Vec<Block>,
    tables: Vec<Vec<u8>>,
}

/// Garbles `circuit` once (compiled chunks if given) and keeps what evaluation needs.
pub fn garble_once(circuit: &Circuit, compiled: Option<&[CompiledChunk]>, tag: u64) -> Result<Garbled, GarbleError> {
    let delta = Block::from_u128(0x0123_4567_89ab_cdef_0f1e_2d3c_4b5a_6979 | 1);
    let mut g = Garbler::new(delta, circuit.wires, tag)?;
    let n_in: u32 = circuit.inputs.iter().sum();
    let inputs: Vec<Block> = (0..n_in)
        .map(|w| Block::from_u128((w as u128 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)))
        .collect();
    for (w, zero) in inputs.iter().enumerate() {
        g.set_label(w as u32, *zero);
    }
    let mut tables = Vec::new();
    let mut base = 0u64;
    for (k, chunk) in circuit.gates.chunks(crate::yao::CHUNK_GATES).enumerate() {
        let mut t = Vec::new();
        match compiled.and_then(|c| c.get(k)) {
            Some(c) => g.garble_compiled(c, base, &mut t)?,
            None => g.garble_chunk(chunk, base, &mut t)?,
        }
        tables.push(t);
        base += chunk.len() as u64;
    }
    Ok(Garbled { tag, inputs, tables })
}

/// Evaluates a [`Garbled`] circuit (as the protocol's evaluator does, chunk by chunk); returns
/// a byte of the output labels.
pub fn evaluate_garbled(
    circuit: &Circuit,
    compiled: Option<&[CompiledChunk]>,
    garbled: &Garbled,
) -> Result<u8, GarbleError> {
    let mut e = Evaluator::new(circuit.wires, garbled.tag)?;
    for (w, l) in garbled.inputs.iter().enumerate() {
        e.set_label(w as u32, *l);
    }
    let mut base = 0u64;
    for (k, (chunk, t)) in circuit.gates.chunks(crate::yao::CHUNK_GATES).zip(&garbled.tables).enumerate() {
        match compiled.and_then(|c| c.get(k)) {
            Some(c) => e.evaluate_compiled(c, base, t)?,
            None => e.evaluate_chunk(chunk, base, t)?,
        }
        base += chunk.len() as u64;
    }
    Ok(e.label(circuit.wires - 1).0[0])
}

/// A garbler (party 0) and evaluator (party 1) with base OTs done, over the in-memory network.
pub struct LocalYao {
    garbler: YaoGarbler<MemoryChannel>,
    evaluator: YaoEvaluator<MemoryChannel>,
}

fn stalled() -> YaoError {
    YaoError::Channel(ChannelError::Transport { peer: 0, reason: "local parties deadlocked".into() })
}

impl LocalYao {
    /// Runs the session setup.
    pub fn setup() -> Result<LocalYao, YaoError> {
        let (a, b) = pair();
        let sid = SessionId::random()?;
        let (g, e) = run_local(async { join!(YaoGarbler::setup(a, 1, &sid), YaoEvaluator::setup(b, 0, &sid)) })
            .map_err(|_| stalled())?;
        Ok(LocalYao { garbler: g?, evaluator: e? })
    }

    /// Bytes both parties sent so far.
    pub fn bytes_sent(&self) -> u64 {
        self.garbler.channel().sent_bytes() + self.evaluator.channel().sent_bytes()
    }

    /// One 2PC run of a two-input circuit: input 1 from the garbler, input 2 from the evaluator,
    /// every output to both. Returns the outputs.
    pub fn run(&mut self, circuit: &PreparedCircuit, x: Vec<bool>, y: Vec<bool>) -> Result<Vec<Vec<bool>>, YaoError> {
        let owners = [Owner::Garbler, Owner::Evaluator];
        let reveal = vec![Reveal::Both; circuit.circuit().outputs.len()];
        let (g, e) = (&mut self.garbler, &mut self.evaluator);
        let (mut gs, mut es) = (circuit.source(), circuit.source());
        let (a, b) = run_local(async {
            join!(
                g.run(&mut gs, &owners, &reveal, std::slice::from_ref(&x), |_| {}),
                e.run(&mut es, &owners, &reveal, std::slice::from_ref(&y), |_| {})
            )
        })
        .map_err(|_| stalled())?;
        a?;
        Ok(b?.into_iter().map(|v| v.unwrap_or_default()).collect())
    }
}
