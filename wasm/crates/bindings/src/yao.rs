//! Semi-honest Yao 2PC over a JavaScript transport: one `YaoSession` per party and peer, set up
//! once (base OTs) and run for any number of circuits.
//!
//! **Security: semi-honest only** (see `webmpc_garble::yao`). Inputs and unassigned outputs stay
//! private while both parties follow the protocol, but a cheating evaluator can choose the
//! garbler's outputs (it sends the colour bits they are decoded from), and a cheating garbler
//! can garble another function (tables are not checked). The OT underneath (KOS) is malicious
//! secure. Each session's garbler draws its own random Δ; a failed run ends the session.
//!
//! Circuits of more than `webmpc_circuit::MAX_WIRES` wires, or whose garbling state does not fit
//! in memory, are refused with a `CircuitError` (`CIRCUIT_TOO_LARGE`) before any message.

use crate::channel::{JsChannel, JsTransport};
use crate::ot::{channel, protocol_error, session_id, with_instance, JsChannelProbe, Shared};
use crate::{scrubbed, spawn_scrubbed};
use core::cell::RefCell;
use js_sys::{Array, Function, Promise, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits, Circuit};
use webmpc_core::channel::ChannelError;
use webmpc_garble::{
    GateSource, Outputs, Owner, PieceSource, PreparedCircuit, Reveal, Shape, StreamSource, YaoError, YaoEvaluator,
    YaoGarbler,
};

enum Role {
    Garbler(YaoGarbler<JsChannel>),
    Evaluator(YaoEvaluator<JsChannel>),
}

impl Role {
    fn channel(&self) -> &JsChannel {
        match self {
            Role::Garbler(g) => g.channel(),
            Role::Evaluator(e) => e.channel(),
        }
    }
}

fn is_transport(e: &YaoError) -> bool {
    matches!(
        e,
        YaoError::Channel(ChannelError::Transport { .. })
            | YaoError::Ot(webmpc_ot::OtError::Channel(ChannelError::Transport { .. }))
    )
}

fn yao_error(e: &YaoError, ch: Option<&JsChannel>) -> JsValue {
    match e {
        YaoError::Circuit(c) => crate::circuit::circuit_error(c.clone()),
        // The garbler's own refusals of a circuit (too many wires for memory, a wire out of
        // range) are circuit errors to the SDK too.
        YaoError::Garble(g) if matches!(g.code(), "CIRCUIT_TOO_LARGE" | "MALFORMED_CIRCUIT") => {
            crate::circuit::js_circuit_error(&g.to_string(), g.code(), None, None)
        }
        _ => protocol_error(e.to_string(), e.code(), None, is_transport(e), ch),
    }
}

/// Largest piece a circuit stream may hand over at once (it is copied into linear memory).
const MAX_STREAM_PIECE: u32 = 64 << 20;

/// The pieces of a streamed circuit, from a JavaScript `pull()` function resolving to the next
/// `Uint8Array` of the binary encoding, or `null` at the end. Decoding, hashing and chunking are
/// `webmpc_garble::StreamSource`'s.
pub(crate) struct JsPieces(pub(crate) Function);

impl PieceSource for JsPieces {
    async fn next_piece(&mut self) -> Result<Option<Vec<u8>>, YaoError> {
        let promise: Promise = self
            .0
            .call0(&JsValue::NULL)
            .ok()
            .and_then(|p| p.dyn_into().ok())
            .ok_or_else(|| YaoError::InvalidArgument("the circuit stream's pull() must return a Promise".into()))?;
        let piece = JsFuture::from(promise)
            .await
            .map_err(|_| YaoError::InvalidArgument("the circuit stream's pull() rejected".into()))?;
        if piece.is_null() || piece.is_undefined() {
            return Ok(None);
        }
        let bytes: Uint8Array = piece
            .dyn_into()
            .map_err(|_| YaoError::InvalidArgument("the circuit stream must yield Uint8Arrays".into()))?;
        if bytes.length() > MAX_STREAM_PIECE {
            return Err(YaoError::InvalidArgument(format!(
                "circuit stream pieces are limited to {MAX_STREAM_PIECE} bytes"
            )));
        }
        Ok(Some(bytes.to_vec()))
    }
}

fn invalid(msg: impl Into<String>) -> JsValue {
    yao_error(&YaoError::InvalidArgument(msg.into()), None)
}

/// A validated circuit with its content hash, decoded once and run any number of times.
#[wasm_bindgen(js_name = PreparedCircuit)]
pub struct JsPreparedCircuit(pub(crate) Rc<PreparedCircuit>);

#[wasm_bindgen(js_class = PreparedCircuit)]
impl JsPreparedCircuit {
    /// Decodes and validates a binary circuit.
    #[wasm_bindgen(constructor)]
    pub fn new(binary: &[u8]) -> Result<JsPreparedCircuit, JsValue> {
        // Decoding bounds the circuit by MAX_WIRES (a CircuitError otherwise), before any
        // per-wire state is allocated.
        let c = Circuit::from_binary(binary).map_err(crate::circuit::circuit_error)?;
        let p = PreparedCircuit::new(c).map_err(crate::circuit::circuit_error)?;
        Ok(JsPreparedCircuit(Rc::new(p)))
    }

    /// Bit widths of the input values.
    #[wasm_bindgen(getter, js_name = inputWidths)]
    pub fn input_widths(&self) -> Vec<u32> {
        self.0.circuit().inputs.clone()
    }

    /// Bit widths of the output values.
    #[wasm_bindgen(getter, js_name = outputWidths)]
    pub fn output_widths(&self) -> Vec<u32> {
        self.0.circuit().outputs.clone()
    }

    /// Number of gates.
    #[wasm_bindgen(getter)]
    pub fn gates(&self) -> f64 {
        self.0.circuit().gates.len() as f64
    }

    /// The content hash (32 bytes).
    #[wasm_bindgen(getter)]
    pub fn hash(&self) -> Vec<u8> {
        self.0.hash().to_vec()
    }
}

/// One party of a Yao 2PC session.
#[wasm_bindgen(js_name = YaoSession)]
pub struct YaoSession {
    inner: Shared<Role>,
}

/// Sets up this party's side (`role`: `"garbler"` or `"evaluator"`) with `peer`; runs the base
/// OTs. Resolves to a `YaoSession`.
#[wasm_bindgen(js_name = yaoSetup)]
pub fn yao_setup(transport: JsTransport, role: &str, peer: u32, session: &[u8]) -> Promise {
    let garbler = match role {
        "garbler" => true,
        "evaluator" => false,
        _ => return Promise::reject(&invalid("role must be \"garbler\" or \"evaluator\"")),
    };
    scrubbed(|| {
        let prepared = (|| -> Result<_, JsValue> { Ok((channel(transport)?, session_id(session)?)) })();
        let (ch, sid) = match prepared {
            Ok(p) => p,
            Err(e) => return Promise::reject(&e),
        };
        spawn_scrubbed(async move {
            let probe = JsChannelProbe::new(&ch);
            let role = if garbler {
                YaoGarbler::setup(ch, peer as usize, &sid).await.map(Role::Garbler)
            } else {
                YaoEvaluator::setup(ch, peer as usize, &sid).await.map(Role::Evaluator)
            };
            match role {
                Ok(r) => Ok(YaoSession { inner: Rc::new(RefCell::new(Some(r))) }.into()),
                Err(e) => Err(probe.error_with(e.to_string(), e.code(), None, is_transport(&e))),
            }
        })
    })
}

fn owners(bytes: &[u8]) -> Result<Vec<Owner>, JsValue> {
    bytes
        .iter()
        .map(|b| match b {
            0 => Ok(Owner::Garbler),
            1 => Ok(Owner::Evaluator),
            _ => Err(invalid("owners: 0 = garbler, 1 = evaluator")),
        })
        .collect()
}

fn reveals(bytes: &[u8]) -> Result<Vec<Reveal>, JsValue> {
    bytes
        .iter()
        .map(|b| match b {
            0 => Ok(Reveal::Garbler),
            1 => Ok(Reveal::Evaluator),
            2 => Ok(Reveal::Both),
            _ => Err(invalid("outputs: 0 = garbler, 1 = evaluator, 2 = both")),
        })
        .collect()
}

fn outputs_to_js(out: &Outputs) -> JsValue {
    let arr = Array::new();
    for v in out {
        match v {
            Some(bits) => arr.push(&Uint8Array::from(bytes_be_from_bits(bits).as_slice())),
            None => arr.push(&JsValue::UNDEFINED),
        };
    }
    arr.into()
}

#[wasm_bindgen(js_class = YaoSession)]
impl YaoSession {
    /// Runs `circuit` (webmpc binary form). `owners[i]` says who supplies input value i (0
    /// garbler, 1 evaluator); `outputs[i]` who learns output value i (0 garbler, 1 evaluator, 2
    /// both). `inputs` holds this party's own input values in order, as big-endian bytes
    /// (`ceil(width / 8)` each). `progress(gatesDone, gatesTotal)` is called after each chunk.
    /// Resolves to one entry per output value: big-endian bytes, or `undefined` when the value is
    /// not revealed to this party.
    pub fn run(
        &self,
        circuit: &JsPreparedCircuit,
        owners_bytes: &[u8],
        outputs_bytes: &[u8],
        inputs: Array,
        progress: Option<Function>,
    ) -> Result<Promise, JsValue> {
        scrubbed(|| {
            let prepared = circuit.0.clone();
            let (owners, reveal, values) =
                self.arguments(&prepared.source().shape().clone(), owners_bytes, outputs_bytes, &inputs)?;
            let total = prepared.circuit().gates.len() as f64;
            Ok(with_instance(&self.inner, move |mut role| async move {
                let mut source = prepared.source();
                let (ok, result) = run_role(&mut role, &mut source, &owners, &reveal, &values, progress, total).await;
                (ok.then_some(role), result)
            }))
        })
    }

    /// Like [`run`](Self::run) for a circuit streamed from JavaScript: `prefix` holds the start of
    /// the binary encoding (at least its header), `hash` the content hash both parties agreed on
    /// (checked against the streamed bytes before any output is revealed), and `pull()` resolves
    /// to the next piece of the encoding, or `null` after the last.
    #[wasm_bindgen(js_name = runStream)]
    #[allow(clippy::too_many_arguments)]
    pub fn run_stream(
        &self,
        prefix: &[u8],
        hash: &[u8],
        pull: Function,
        owners_bytes: &[u8],
        outputs_bytes: &[u8],
        inputs: Array,
        progress: Option<Function>,
    ) -> Result<Promise, JsValue> {
        scrubbed(|| {
            let hash: [u8; 32] = hash.try_into().map_err(|_| invalid("the declared circuit hash must be 32 bytes"))?;
            let mut source = StreamSource::new(prefix, hash, JsPieces(pull)).map_err(|e| yao_error(&e, None))?;
            let shape = source.shape().clone();
            let (owners, reveal, values) = self.arguments(&shape, owners_bytes, outputs_bytes, &inputs)?;
            let total = shape.gates as f64;
            Ok(with_instance(&self.inner, move |mut role| async move {
                let (ok, result) = run_role(&mut role, &mut source, &owners, &reveal, &values, progress, total).await;
                (ok.then_some(role), result)
            }))
        })
    }

    /// Checks and converts the arguments common to both kinds of run.
    fn arguments(
        &self,
        shape: &Shape,
        owners_bytes: &[u8],
        outputs_bytes: &[u8],
        inputs: &Array,
    ) -> Result<RunArguments, JsValue> {
        let owners = owners(owners_bytes)?;
        let reveal = reveals(outputs_bytes)?;
        if owners.len() != shape.inputs.len() || reveal.len() != shape.outputs.len() {
            return Err(invalid("owners/outputs must have one entry per input/output value"));
        }
        let is_garbler = matches!(&*self.inner.borrow(), Some(Role::Garbler(_)));
        let me = if is_garbler { Owner::Garbler } else { Owner::Evaluator };
        let widths: Vec<u32> = (0..owners.len()).filter(|&i| owners[i] == me).map(|i| shape.inputs[i]).collect();
        if inputs.length() as usize != widths.len() {
            return Err(invalid(format!("{} input values given; this party owns {}", inputs.length(), widths.len())));
        }
        let mut values = Vec::with_capacity(widths.len());
        for (k, w) in widths.iter().enumerate() {
            let bytes: Uint8Array =
                inputs.get(k as u32).dyn_into().map_err(|_| invalid("each input value must be a Uint8Array"))?;
            if bytes.length() as usize != (*w as usize).div_ceil(8) {
                return Err(invalid(format!("input value {} must be {} bytes", k + 1, (*w as usize).div_ceil(8))));
            }
            values.push(bits_from_bytes_be(&bytes.to_vec(), *w));
        }
        Ok((owners, reveal, values))
    }
}

/// Input owners, output assignment and this party's input bits.
type RunArguments = (Vec<Owner>, Vec<Reveal>, Vec<Vec<bool>>);

/// Runs one computation in this party's role; puts the session back only on success.
async fn run_role(
    role: &mut Role,
    source: &mut impl GateSource,
    owners: &[Owner],
    reveal: &[Reveal],
    values: &[Vec<bool>],
    progress: Option<Function>,
    total: f64,
) -> (bool, Result<JsValue, JsValue>) {
    let report = |done: u64| {
        if let Some(f) = &progress {
            // A throwing progress callback must not abort the protocol.
            let _ = f.call2(&JsValue::NULL, &(done as f64).into(), &total.into());
        }
    };
    let result = match role {
        Role::Garbler(g) => g.run(source, owners, reveal, values, report).await,
        Role::Evaluator(e) => e.run(source, owners, reveal, values, report).await,
    };
    match result {
        Ok(out) => (true, Ok(outputs_to_js(&out))),
        Err(e) => (false, Err(yao_error(&e, Some(role.channel())))),
    }
}
