//! What the main module knows of MASCOT programs: their validation and preprocessing needs, which
//! `webmpc/program` asks for synchronously when a program is built or loaded. Running programs
//! is the MASCOT module's (`webmpc-bindings-mascot`, loaded on first use).

use crate::JsResult;
use wasm_bindgen::prelude::*;
use webmpc_bindings_glue::spdz::{counts_to_js, decode_program};

/// The preprocessed material a program needs: `{ triples, bits, masks: number[] }` (masks per
/// party: one per field input it owns, k per k-bit integer input, and one per output revealed to
/// it alone).
#[wasm_bindgen(js_name = mascotRequirements)]
pub fn mascot_requirements(program: &[u8]) -> JsResult<JsValue> {
    crate::scrubbed(|| Ok(counts_to_js(&decode_program(program)?.requirements())))
}
