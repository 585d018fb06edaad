//! Garbling and 2PC with both parties in one process: what the benchmarks time, natively and in
//! Wasm. Nothing here is needed by applications.

use crate::halfgates::{Evaluator, GarbleError, Garbler};
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
    garble_and_evaluate_planned(circuit, None, garble_only, tag)
}

/// [`garble_and_evaluate`] with the chunks' schedules planned once
/// ([`crate::halfgates::plan_chunks`] with [`crate::yao::CHUNK_GATES`]), as the Yao protocol
/// does for a [`PreparedCircuit`] it runs more than once; `None` plans every chunk here.
pub fn garble_and_evaluate_planned(
    circuit: &Circuit,
    plans: Option<&[Vec<(u32, u32)>]>,
    garble_only: bool,
    tag: u64,
) -> Result<usize, GarbleError> {
    let delta = Block::from_u128(0x0123_4567_89ab_cdef_0f1e_2d3c_4b5a_6979 | 1);
    let mut g = Garbler::new(delta, circuit.wires, tag)?;
    let mut e = Evaluator::new(circuit.wires, tag)?;
    let n_in: u32 = circuit.inputs.iter().sum();
    for w in 0..n_in {
        let zero = Block::from_u128((w as u128 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835));
        g.set_label(w, zero);
        e.set_label(w, zero);
    }
    let mut bytes = 0;
    let mut tables = Vec::new();
    let mut base = 0u64;
    for (k, chunk) in circuit.gates.chunks(crate::yao::CHUNK_GATES).enumerate() {
        tables.clear();
        let plan = plans.and_then(|p| p.get(k)).map(Vec::as_slice);
        g.garble_chunk_planned(chunk, base, plan, &mut tables)?;
        if !garble_only {
            e.evaluate_chunk_planned(chunk, base, plan, &tables)?;
        }
        bytes += tables.len();
        base += chunk.len() as u64;
    }
    Ok(bytes)
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
