//! Semi-honest Yao 2PC over a JavaScript transport: one `YaoSession` per party and peer, set up
//! once (base OTs) and run for any number of circuits.

use crate::channel::{JsChannel, JsTransport};
use crate::ot::{channel, protocol_error, session_id, with_instance, JsChannelProbe, Shared};
use core::cell::RefCell;
use js_sys::{Array, Function, Promise, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits, Circuit};
use webmpc_core::channel::ChannelError;
use webmpc_garble::{Outputs, Owner, PreparedCircuit, Reveal, YaoError, YaoEvaluator, YaoGarbler};

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
    protocol_error(e.to_string(), e.code(), None, is_transport(e), ch)
}

fn invalid(msg: impl Into<String>) -> JsValue {
    yao_error(&YaoError::InvalidArgument(msg.into()), None)
}

/// A validated circuit with its content hash, decoded once and run any number of times.
#[wasm_bindgen(js_name = PreparedCircuit)]
pub struct JsPreparedCircuit(Rc<PreparedCircuit>);

#[wasm_bindgen(js_class = PreparedCircuit)]
impl JsPreparedCircuit {
    /// Decodes and validates a binary circuit.
    #[wasm_bindgen(constructor)]
    pub fn new(binary: &[u8]) -> Result<JsPreparedCircuit, JsValue> {
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
    let prepared = (|| -> Result<_, JsValue> { Ok((channel(transport)?, session_id(session)?)) })();
    let (ch, sid) = match prepared {
        Ok(p) => p,
        Err(e) => return Promise::reject(&e),
    };
    future_to_promise(async move {
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
        let prepared = circuit.0.clone();
        let circuit = prepared.circuit();
        let owners = owners(owners_bytes)?;
        let reveal = reveals(outputs_bytes)?;
        if owners.len() != circuit.inputs.len() || reveal.len() != circuit.outputs.len() {
            return Err(invalid("owners/outputs must have one entry per input/output value"));
        }
        let is_garbler = matches!(&*self.inner.borrow(), Some(Role::Garbler(_)));
        let me = if is_garbler { Owner::Garbler } else { Owner::Evaluator };
        let widths: Vec<u32> = (0..owners.len()).filter(|&i| owners[i] == me).map(|i| circuit.inputs[i]).collect();
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
        let total = circuit.gates.len() as f64;
        Ok(with_instance(&self.inner, move |mut role| async move {
            let report = |done: u64| {
                if let Some(f) = &progress {
                    // A throwing progress callback must not abort the protocol.
                    let _ = f.call2(&JsValue::NULL, &(done as f64).into(), &total.into());
                }
            };
            let result = match &mut role {
                Role::Garbler(g) => g.run(&prepared, &owners, &reveal, &values, report).await,
                Role::Evaluator(e) => e.run(&prepared, &owners, &reveal, &values, report).await,
            };
            match result {
                Ok(out) => (Some(role), Ok(outputs_to_js(&out))),
                Err(e) => {
                    let err = yao_error(&e, Some(role.channel()));
                    (None, Err(err))
                }
            }
        }))
    }
}
