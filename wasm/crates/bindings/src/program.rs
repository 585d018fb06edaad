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

/// The client's side of MASCOT client inputs: checks every server's client masks (`shares`: an
/// array with each server's `Uint8Array` from `MascotSession.clientMasks`, all of them) and masks
/// the client's `values` with them. `field`: `"prime"` or `"binary"`; `kinds`: 2 bytes per input
/// (kind 0 field, 1 unsigned, 2 signed; then the bit width, 0 for a field element); `values`: 16
/// little-endian bytes per input (as for a party's input). Returns 16 bytes per mask (one per
/// field input, k per k-bit integer input), to send to every server. Throws `CHEATING_DETECTED`
/// (no peer) when the servers' shares do not verify: some server changed its share; send
/// nothing. Throws `INVALID_ARGUMENT` for a value out of range or malformed arguments.
#[wasm_bindgen(js_name = clientMaskedInputs)]
pub fn client_masked_inputs(field: &str, kinds: &[u8], values: &[u8], shares: js_sys::Array) -> JsResult<Vec<u8>> {
    crate::scrubbed(|| webmpc_bindings_glue::spdz::client_masked_inputs(field, kinds, values, &shares))
}
