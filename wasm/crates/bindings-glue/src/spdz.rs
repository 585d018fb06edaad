//! MASCOT programs and errors, shared by the main module (which validates programs and reports
//! their preprocessing needs synchronously, for `webmpc/program`) and the MASCOT module (which
//! runs them).

use crate::channel::JsChannel;
use crate::protocol::protocol_error;
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use webmpc_spdz::program::Program;
use webmpc_spdz::store::Counts;
use webmpc_spdz::{ProgramError, SpdzError};

/// Largest program accepted (bytes).
pub const MAX_PROGRAM_BYTES: usize = 256 << 20;
/// The JS error for a MASCOT failure (a `ProtocolError` with its stable code, or the
/// transport's own error).
pub fn spdz_error(e: &SpdzError, ch: Option<&JsChannel>) -> JsValue {
    protocol_error(e.to_string(), e.code(), e.peer(), e.is_transport(), ch)
}

/// A program from its encoding, refused (typed) above [`MAX_PROGRAM_BYTES`] or when malformed.
pub fn decode_program(bytes: &[u8]) -> Result<Program, JsValue> {
    if bytes.len() > MAX_PROGRAM_BYTES {
        return Err(spdz_error(&ProgramError::TooLarge { what: "encoding", limit: MAX_PROGRAM_BYTES }.into(), None));
    }
    Program::decode(bytes).map_err(|e| spdz_error(&e.into(), None))
}

/// `{ triples, bits, masks: number[] }`.
pub fn counts_to_js(c: &Counts) -> JsValue {
    let obj = Object::new();
    let _ = Reflect::set(&obj, &"triples".into(), &(c.triples as f64).into());
    let _ = Reflect::set(&obj, &"bits".into(), &(c.bits as f64).into());
    let masks = Array::new();
    for m in &c.masks {
        masks.push(&(*m as f64).into());
    }
    let _ = Reflect::set(&obj, &"masks".into(), &masks);
    obj.into()
}
