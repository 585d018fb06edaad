//! `AuthGcLocal`: every party of an authenticated-garbling session (WRK17, with the real F_Pre)
//! inside this Wasm instance over the Rust in-memory network, so the `authgc` bench suite can time
//! each phase in Wasm without JavaScript or a transport in the loop. It lives here, in the
//! benchmark module, so the SDK's Wasm does not carry a second instantiation of the whole protocol
//! (over `MemoryChannel`) that only benchmarks use.
//!
//! The preprocessor is the SDK's: `RealPreprocessor::setup` with the F_Pre session id derived as
//! in `webmpc_bindings::authgc::make_preprocessor`.

use js_sys::{Array, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use webmpc_authgc::fpre::RealPreprocessor;
use webmpc_authgc::online::local::{LocalAuthGc, LocalChannel};
use webmpc_authgc::online::{Options, PreparedCircuit, Recipients, Roles, SharedChannel, MAX_PARTIES};
use webmpc_authgc::{check_rho, AuthGcError, DEFAULT_RHO};
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits, Circuit};
use webmpc_core::channel::memory::MemoryChannel;
use webmpc_ot::SessionId;

fn err(e: impl core::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// A validated circuit for [`AuthGcLocal`] (this module's own: objects of the SDK's module cannot
/// cross into this one).
#[wasm_bindgen(js_name = AuthGcLocalCircuit)]
pub struct AuthGcLocalCircuit(Rc<PreparedCircuit>);

#[wasm_bindgen(js_class = AuthGcLocalCircuit)]
impl AuthGcLocalCircuit {
    /// Decodes and validates webmpc's binary circuit form.
    #[wasm_bindgen(constructor)]
    pub fn new(binary: &[u8]) -> Result<AuthGcLocalCircuit, JsError> {
        let c = Circuit::from_binary(binary).map_err(err)?;
        Ok(AuthGcLocalCircuit(Rc::new(PreparedCircuit::new(c).map_err(err)?)))
    }

    /// Parses and validates Bristol Fashion text.
    #[wasm_bindgen(js_name = fromBristol)]
    pub fn from_bristol(text: &str) -> Result<AuthGcLocalCircuit, JsError> {
        let c = Circuit::parse_bristol(text).map_err(err)?;
        Ok(AuthGcLocalCircuit(Rc::new(PreparedCircuit::new(c).map_err(err)?)))
    }

    /// AND gates in the circuit.
    #[wasm_bindgen(getter, js_name = andGates)]
    pub fn and_gates(&self) -> f64 {
        self.0.circuit().stats().and as f64
    }
}

/// Every party of a session in this instance (see the module docs). Each call runs all parties
/// on this thread and returns when they are done.
#[wasm_bindgen(js_name = AuthGcLocal)]
pub struct AuthGcLocal {
    local: LocalAuthGc<RealPreprocessor<SharedChannel<MemoryChannel>>>,
    parties: usize,
}

/// Reads a whole number `key` of `obj` in `least..=most`, if present.
fn option(obj: &JsValue, key: &str, least: usize, most: usize) -> Result<Option<usize>, JsError> {
    if !obj.is_object() {
        return Ok(None);
    }
    let v = js_sys::Reflect::get(obj, &key.into()).map_err(|_| JsError::new("options must be an object"))?;
    if v.is_undefined() {
        return Ok(None);
    }
    match v.as_f64() {
        Some(n) if n.fract() == 0.0 && n >= least as f64 && n <= most as f64 => Ok(Some(n as usize)),
        _ => Err(JsError::new(&format!("options.{key} must be a whole number in {least}..={most}"))),
    }
}

fn roles(c: &PreparedCircuit, parties: usize, evaluator: u32, owners: &[u32], outputs: &[u32]) -> Result<Roles, JsError> {
    if owners.len() != c.circuit().inputs.len() || outputs.len() != c.circuit().outputs.len() {
        return Err(JsError::new("owners/outputs must have one entry per input/output value"));
    }
    if evaluator as usize >= parties || owners.iter().any(|&p| p as usize >= parties) {
        return Err(JsError::new("the evaluator and every owner must be a party"));
    }
    Ok(Roles {
        evaluator: evaluator as usize,
        owners: owners.iter().map(|&p| p as usize).collect(),
        outputs: outputs.iter().map(|&m| if m == u32::MAX { Recipients::ALL } else { Recipients::from_mask(u64::from(m)) }).collect(),
    })
}

#[wasm_bindgen(js_class = AuthGcLocal)]
impl AuthGcLocal {
    /// Sets up `parties` parties (the setup phase: base OTs, Δ-OT, the global-key check).
    /// `options`: `{ chunkGates?, batch?, rho? }` as for the SDK's `authgcSetup`.
    #[wasm_bindgen(constructor)]
    pub fn new(parties: u32, options: JsValue) -> Result<AuthGcLocal, JsError> {
        let n = parties as usize;
        if !(2..=MAX_PARTIES).contains(&n) {
            return Err(JsError::new(&format!("authenticated garbling needs 2 to {MAX_PARTIES} parties")));
        }
        let mut run = Options::default();
        if let Some(c) = option(&options, "chunkGates", 1, 1 << 20)? {
            run.chunk_gates = c;
        }
        if let Some(b) = option(&options, "batch", 1, 1 << 22)? {
            run.batch = b;
        }
        let rho = check_rho(option(&options, "rho", webmpc_authgc::MIN_RHO, 128)?.unwrap_or(DEFAULT_RHO)).map_err(err)?;
        let mut session = [0u8; 32];
        webmpc_core::random::fill(&mut session).map_err(err)?;
        let sid = SessionId(session).derive(b"webmpc/authgc/fpre");
        let local = LocalAuthGc::setup(n, run, |ch: LocalChannel| {
            async move { RealPreprocessor::setup(ch, &sid, rho).await }
        })
        .map_err(err)?;
        Ok(AuthGcLocal { local, parties: n })
    }

    /// Bytes each party has sent so far.
    #[wasm_bindgen(js_name = bytesSent)]
    pub fn bytes_sent(&self) -> Vec<f64> {
        self.local.bytes_sent().into_iter().map(|b| b as f64).collect()
    }

    /// Function-independent preprocessing at every party.
    pub fn preprocess(&mut self, and_gates: u32, masks: u32) -> Result<(), JsError> {
        self.local.preprocess(and_gates as usize, masks as usize).map_err(err)
    }

    /// Function-dependent preprocessing of `circuit` at every party. `owners[i]`: the party of
    /// input value i; `outputs[i]`: the recipient mask of output value i (0xffffffff = all).
    pub fn prepare(&mut self, circuit: &AuthGcLocalCircuit, evaluator: u32, owners: &[u32], outputs: &[u32]) -> Result<(), JsError> {
        let roles = roles(&circuit.0, self.parties, evaluator, owners, outputs)?;
        self.local.prepare(&circuit.0, &roles).map_err(err)
    }

    /// Runs `circuit`; `inputs[p]` is party p's array of input values (big-endian bytes, for the
    /// inputs it owns in circuit order). Returns every party's outputs (an array per party, with
    /// `undefined` for a value not revealed to that party).
    pub fn run(
        &mut self,
        circuit: &AuthGcLocalCircuit,
        evaluator: u32,
        owners: &[u32],
        outputs: &[u32],
        inputs: Array,
    ) -> Result<Array, JsError> {
        let roles = roles(&circuit.0, self.parties, evaluator, owners, outputs)?;
        let widths = circuit.0.circuit().inputs.clone();
        if inputs.length() as usize != self.parties {
            return Err(JsError::new("one array of input values per party"));
        }
        let mut values = Vec::with_capacity(self.parties);
        for p in 0..self.parties {
            let mine: Array = inputs.get(p as u32).dyn_into().map_err(|_| JsError::new("inputs[p] must be an array"))?;
            let owned: Vec<u32> = (0..widths.len()).filter(|&i| roles.owners[i] == p).map(|i| widths[i]).collect();
            if mine.length() as usize != owned.len() {
                return Err(JsError::new(&format!("party {p} owns {} input values", owned.len())));
            }
            let mut bits = Vec::with_capacity(owned.len());
            for (k, &w) in owned.iter().enumerate() {
                let bytes: Uint8Array = mine.get(k as u32).dyn_into().map_err(|_| JsError::new("input values must be Uint8Arrays"))?;
                if bytes.length() as usize != (w as usize).div_ceil(8) {
                    return Err(JsError::new("an input value has the wrong length"));
                }
                bits.push(bits_from_bytes_be(&bytes.to_vec(), w));
            }
            values.push(bits);
        }
        let all = self.local.run(&circuit.0, &roles, &values).map_err(|e: AuthGcError| err(e))?;
        Ok(all
            .iter()
            .map(|out| {
                out.iter()
                    .map(|v| match v {
                        Some(bits) => JsValue::from(Uint8Array::from(bytes_be_from_bits(bits).as_slice())),
                        None => JsValue::UNDEFINED,
                    })
                    .collect::<Array>()
            })
            .collect())
    }
}
