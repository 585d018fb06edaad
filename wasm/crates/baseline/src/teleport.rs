//! Teleported Yao for benchmarks (never shipped; the shipped binding is
//! `webmpc-bindings-teleport`):
//!
//! * `teleportLocalRun`: a GC session of `jobs` runs of one circuit with all three parties (the
//!   garbler, the evaluator and the in-process enclave) inside this instance, each party's own
//!   time taken by `webmpcBenchClock` (the runner's `std::time::Instant` traps in Wasm).
//! * `Grr3LocalBench`: GRR3 garbling and evaluation alone (the pure `webmpc_teleport::grr3`),
//!   on the level schedule or in the gate-order walk it replaced, for the roofline's GRR3 rows.

use wasm_bindgen::prelude::*;
use webmpc_circuit::Circuit;
use webmpc_core::aes::Aes128;
use webmpc_core::Block;
use webmpc_teleport::circuit::{decode_gates, pieces, Gate, Header, PIECE_GATES};
use webmpc_teleport::grr3::{gate_order, Evaluator, Garbler};
use webmpc_teleport::{local, JobKind, Mode, Owner};

fn err(e: impl core::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

fn parse(bristol: &str) -> Result<Circuit, JsError> {
    let c = Circuit::parse_bristol(bristol).map_err(err)?;
    c.validate().map_err(err)?;
    Ok(c)
}

/// `jobs` GC runs of the two-input circuit `bristol` (the garbler owns input 0, the evaluator
/// input 1; nothing revealed to the garbler) in one attested session, all three parties on this
/// thread. Returns JSON `{ garblerMs, evaluatorMs, enclaveMs, setupGarblerMs, setupEvaluatorMs,
/// setupEnclaveMs, garblerBytes }`: each party's own time by `webmpcBenchClock`, session setup
/// included in the first three and given apart in the `setup*` fields.
#[wasm_bindgen(js_name = teleportLocalRun)]
pub fn teleport_local_run(bristol: &str, jobs: u32, malicious: bool) -> Result<String, JsError> {
    let c = parse(bristol)?;
    if c.inputs.len() != 2 {
        return Err(JsError::new("baseline: teleportLocalRun takes a two-input circuit"));
    }
    let bin = c.to_binary();
    let mode = if malicious { Mode::Malicious } else { Mode::SemiHonest };
    let mut counter = webmpc_teleport::driver::JobCounter::new(local::random_sid().map_err(err)?);
    let kind = JobKind::Gc { circuit_hash: c.content_hash(), owners: vec![Owner::Garbler, Owner::Evaluator] };
    let list: Vec<_> = (0..jobs).map(|_| counter.next(mode, kind.clone())).collect();
    let (x1, x2) = (vec![false; c.inputs[0] as usize], vec![true; c.inputs[1] as usize]);
    let reveal = vec![false; c.outputs.len()];
    let r = local::run_gc_session_with_clock(&list, &bin, &x1, &x2, &reveal, &crate::bench_clock).map_err(err)?;
    let ms = |d: core::time::Duration| d.as_secs_f64() * 1000.0;
    Ok(format!(
        "{{\"garblerMs\":{},\"evaluatorMs\":{},\"enclaveMs\":{},\"setupGarblerMs\":{},\"setupEvaluatorMs\":{},\"setupEnclaveMs\":{},\"garblerBytes\":{}}}",
        ms(r.times.garbler),
        ms(r.times.evaluator),
        ms(r.times.enclave),
        ms(r.setup.garbler),
        ms(r.setup.evaluator),
        ms(r.setup.enclave),
        r.garbler_bytes
    ))
}

/// GRR3 on one circuit: its pieces decoded once, garbled once for `evaluate`.
#[wasm_bindgen(js_name = Grr3LocalBench)]
pub struct Grr3LocalBench {
    wires: u32,
    pieces: Vec<Vec<Gate>>,
    tables: Vec<Vec<u8>>,
    ands: usize,
    tag: u64,
}

fn garbler(wires: u32, tag: u64) -> Garbler {
    let delta = Block::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677 | 1);
    Garbler::new(delta, Aes128::new(Block::from_u128(tag as u128)), wires, tag)
}

#[wasm_bindgen(js_class = Grr3LocalBench)]
impl Grr3LocalBench {
    /// Parses Bristol Fashion text and garbles it once (all-zero input labels).
    #[wasm_bindgen(constructor)]
    pub fn new(bristol: &str) -> Result<Grr3LocalBench, JsError> {
        let c = parse(bristol)?;
        let bin = c.to_binary();
        let (h, _) = Header::parse(&bin).map_err(err)?;
        let ranges = pieces(&bin).map_err(err)?;
        let mut list = Vec::new();
        for r in &ranges[1..] {
            let mut gates = Vec::new();
            decode_gates(&bin[r.clone()], h.wires, PIECE_GATES, &mut gates).map_err(err)?;
            list.push(gates);
        }
        let ands = list.iter().flatten().filter(|g| matches!(g, Gate::And { .. })).count();
        let mut b = Grr3LocalBench { wires: h.wires, pieces: list, tables: Vec::new(), ands, tag: 1 };
        b.tables = b.garble_tables(false)?;
        Ok(b)
    }

    /// AND gates in the circuit.
    #[wasm_bindgen(getter, js_name = andGates)]
    pub fn and_gates(&self) -> f64 {
        self.ands as f64
    }

    fn garble_tables(&self, gate_order_walk: bool) -> Result<Vec<Vec<u8>>, JsError> {
        let mut g = garbler(self.wires, self.tag);
        let mut base = 0;
        let mut out = Vec::with_capacity(self.pieces.len());
        for p in &self.pieces {
            let mut t = Vec::new();
            if gate_order_walk {
                gate_order::garble_chunk(&mut g, p, base, &mut t).map_err(err)?;
            } else {
                g.garble_chunk(p, base, &mut t).map_err(err)?;
            }
            base += p.len() as u64;
            out.push(t);
        }
        Ok(out)
    }

    /// Garbles the circuit `reps` times on the level schedule, or in the gate-order walk it
    /// replaced (`gateOrder`); returns the table bytes of one garbling.
    pub fn garble(&mut self, reps: u32, gate_order_walk: bool) -> Result<f64, JsError> {
        let mut bytes = 0;
        for _ in 0..reps {
            self.tag = self.tag.wrapping_add(1);
            bytes = self.garble_tables(gate_order_walk)?.iter().map(Vec::len).sum::<usize>();
        }
        Ok(bytes as f64)
    }

    /// Evaluates the tables of the constructor's garbling `reps` times, on the schedule or in
    /// gate order; returns a byte of the last output label.
    pub fn evaluate(&mut self, reps: u32, gate_order_walk: bool) -> Result<u8, JsError> {
        let mut out = 0;
        for _ in 0..reps {
            let mut e = Evaluator::new(self.wires, 1);
            let mut base = 0;
            for (p, t) in self.pieces.iter().zip(&self.tables) {
                if gate_order_walk {
                    gate_order::evaluate_chunk(&mut e, p, base, t).map_err(err)?;
                } else {
                    e.evaluate_chunk(p, base, t).map_err(err)?;
                }
                base += p.len() as u64;
            }
            out ^= e.label(self.wires - 1).0[0];
        }
        Ok(out)
    }
}
