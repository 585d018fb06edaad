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

/// The client's side of client inputs (`clientMaskedInputs` in the main module): `kinds` is 2
/// bytes per input (kind: 0 field, 1 unsigned, 2 signed; then bits), `values` 16 little-endian
/// bytes per input, `shares` every server's bytes from `MascotSession.clientMasks`. Returns the
/// masked values (16 bytes per mask) or the typed error (`CHEATING_DETECTED` when a server's
/// shares do not verify, `INVALID_ARGUMENT` for the caller's own mistakes).
pub fn client_masked_inputs(field: &str, kinds: &[u8], values: &[u8], shares: &Array) -> Result<Vec<u8>, JsValue> {
    use wasm_bindgen::JsCast;
    use webmpc_spdz::program::Kind;
    use webmpc_spdz::wipe::Wiping;
    use webmpc_spdz::{FieldKind, Fp, Gf128};
    let invalid = |m: String| spdz_error(&SpdzError::InvalidArgument(m), None);
    // The servers' shares reveal the client's masks: wiped when done.
    let mut got: Vec<Wiping<u8>> = Vec::with_capacity(shares.length() as usize);
    for s in shares.iter() {
        let s: js_sys::Uint8Array = s.dyn_into().map_err(|_| invalid("shares must be an array of Uint8Array".into()))?;
        got.push(Wiping(s.to_vec()));
    }
    let shares: Vec<&[u8]> = got.iter().map(|s| &s[..]).collect();
    let field = match field {
        "prime" => FieldKind::Prime,
        "binary" => FieldKind::Binary,
        _ => return Err(invalid("field must be \"prime\" or \"binary\"".into())),
    };
    if kinds.len() % 2 != 0 || values.len() % 16 != 0 || kinds.len() / 2 != values.len() / 16 {
        return Err(invalid("kinds are 2 bytes and values 16 bytes per input, for the same inputs".into()));
    }
    let kinds: Vec<Kind> = kinds
        .chunks_exact(2)
        .enumerate()
        .map(|(i, k)| {
            Kind::input_from_bytes(field, k[0], k[1]).map_err(|e| invalid(format!("input {i}: kind {}", e)))
        })
        .collect::<Result<_, _>>()?;
    let values: Vec<[u8; 16]> = values.chunks_exact(16).map(|c| c.try_into().expect("16 bytes")).collect();
    let values = Secret(values);
    let r = match field {
        FieldKind::Prime => webmpc_spdz::client_masked_inputs::<Fp>(&shares, &kinds, &values.0),
        FieldKind::Binary => webmpc_spdz::client_masked_inputs::<Gf128>(&shares, &kinds, &values.0),
    };
    r.map_err(|e| spdz_error(&e, None))
}

/// Values wiped when dropped (the client's inputs).
struct Secret(Vec<[u8; 16]>);

impl Drop for Secret {
    fn drop(&mut self) {
        webmpc_spdz::wipe::wipe(&mut self.0);
    }
}
