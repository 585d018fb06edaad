//! Circuits from JS: thin functions over `webmpc_circuit`. Circuits cross the boundary in their
//! binary form (a `Uint8Array`, see the `webmpc_circuit` crate docs), which every function here
//! validates in full before using. Failures are JS `Error`s named `CircuitError` with a stable
//! `code` (`MALFORMED_CIRCUIT`, `CIRCUIT_TOO_LARGE`, `WRONG_INPUT_SIZE`) and, when the error is
//! at a place in the circuit, a numeric `line` (Bristol) or `offset` (binary). Messages never
//! contain input values: evaluation inputs may be secret.

use crate::{scrubbed, JsResult};
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
pub(crate) use webmpc_bindings_glue::protocol::{circuit_error, js_circuit_error};
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits, Circuit};

/// Sets `key` on a fresh object; cannot fail for plain objects and string keys.
fn set(obj: &Object, key: &str, value: JsValue) {
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value);
}

fn wrong_input(message: String) -> JsValue {
    js_circuit_error(&message, "WRONG_INPUT_SIZE", None, None)
}

fn decode(binary: &[u8]) -> JsResult<Circuit> {
    Circuit::from_binary(binary).map_err(circuit_error)
}

/// Parses Bristol Fashion text and returns the circuit's binary form.
#[wasm_bindgen(js_name = circuitFromBristol)]
pub fn circuit_from_bristol(text: &str) -> JsResult<Vec<u8>> {
    Ok(Circuit::parse_bristol(text).map_err(circuit_error)?.to_binary())
}

/// The binary circuit with its wires reused (`Circuit::compact`): the same gates in the same
/// order, each value on a wire only while it is live, inputs first and outputs last. A protocol
/// that holds state per wire then needs memory for the live values only.
#[wasm_bindgen(js_name = circuitCompact)]
pub fn circuit_compact(binary: &[u8]) -> JsResult<Vec<u8>> {
    Ok(decode(binary)?.compact().to_binary())
}

/// Writes a binary circuit as Bristol Fashion text.
#[wasm_bindgen(js_name = circuitToBristol)]
pub fn circuit_to_bristol(binary: &[u8]) -> JsResult<String> {
    Ok(decode(binary)?.to_bristol())
}

/// Statistics of a binary circuit, as a plain object: `wires`, `gates`, `and`, `xor`, `inv`,
/// `constants`, `copies`, `depth` (AND depth), `inputs` / `outputs` (total bits) and
/// `inputWidths` / `outputWidths` (bits per value).
#[wasm_bindgen(js_name = circuitStats)]
pub fn circuit_stats(binary: &[u8]) -> JsResult<JsValue> {
    let c = decode(binary)?;
    let s = c.stats();
    let obj = Object::new();
    // Counts are below 2^53 (they are bounded by the encoding's length), so f64 is exact.
    for (key, n) in [
        ("wires", u64::from(s.wires)),
        ("gates", s.gates),
        ("and", s.and),
        ("xor", s.xor),
        ("inv", s.inv),
        ("constants", s.constants),
        ("copies", s.copies),
        ("depth", s.depth),
        ("inputs", u64::from(s.inputs)),
        ("outputs", u64::from(s.outputs)),
    ] {
        set(&obj, key, JsValue::from_f64(n as f64));
    }
    let widths = |ws: &[u32]| ws.iter().map(|&w| JsValue::from_f64(f64::from(w))).collect::<Array>();
    set(&obj, "inputWidths", widths(&c.inputs).into());
    set(&obj, "outputWidths", widths(&c.outputs).into());
    Ok(obj.into())
}

/// The content hash of a binary circuit (32 bytes): SHA-256 of its encoding, after checking it
/// is a valid circuit.
#[wasm_bindgen(js_name = circuitHash)]
pub fn circuit_hash(binary: &[u8]) -> JsResult<Vec<u8>> {
    Ok(decode(binary)?.content_hash().to_vec())
}

/// Evaluates a binary circuit in plaintext. Each input is a `Uint8Array` holding the value as a
/// big-endian integer of exactly `ceil(width / 8)` bytes (bits above `width` must be zero); the
/// outputs come back the same way.
#[wasm_bindgen(js_name = circuitEvaluate)]
pub fn circuit_evaluate(binary: &[u8], inputs: Array) -> JsResult<Array> {
    scrubbed(|| {
        let c = decode(binary)?;
        if inputs.length() as usize != c.inputs.len() {
            return Err(wrong_input(format!("expected {} input values, got {}", c.inputs.len(), inputs.length())));
        }
        let mut bits = Vec::with_capacity(c.inputs.len());
        for (i, (value, &width)) in inputs.iter().zip(&c.inputs).enumerate() {
            let Ok(value) = value.dyn_into::<Uint8Array>() else {
                return Err(wrong_input(format!("input {i} is not a Uint8Array")));
            };
            let want = width.div_ceil(8);
            if value.length() != want {
                return Err(wrong_input(format!(
                    "input {i}: a {width}-bit value takes {want} bytes, got {}",
                    value.length()
                )));
            }
            let bytes = value.to_vec();
            // The unused top bits of the first byte must be zero, or the value does not fit.
            let spare = want * 8 - width;
            if spare > 0 && bytes.first().is_some_and(|&b| b >> (8 - spare) != 0) {
                return Err(wrong_input(format!("input {i}: value does not fit in {width} bits")));
            }
            bits.push(bits_from_bytes_be(&bytes, width));
        }
        let outputs = c.evaluate(&bits).map_err(circuit_error)?;
        Ok(outputs.iter().map(|o| JsValue::from(Uint8Array::from(bytes_be_from_bits(o).as_slice()))).collect())
    })
}

/// The header of a streamed circuit from its first bytes (`prefix` must hold at least the whole
/// header): `wires`, `gates`, `inputWidths`, `outputWidths`.
#[wasm_bindgen(js_name = circuitStreamHeader)]
pub fn circuit_stream_header(prefix: &[u8]) -> JsResult<JsValue> {
    let stream = webmpc_circuit::GateStream::new(prefix, &webmpc_circuit::stream_limits()).map_err(circuit_error)?;
    let h = stream.header();
    let obj = Object::new();
    set(&obj, "wires", JsValue::from_f64(f64::from(h.wires)));
    set(&obj, "gates", JsValue::from_f64(h.gates as f64));
    let widths = |ws: &[u32]| ws.iter().map(|&w| JsValue::from_f64(f64::from(w))).collect::<Array>();
    set(&obj, "inputWidths", widths(&h.inputs).into());
    set(&obj, "outputWidths", widths(&h.outputs).into());
    Ok(obj.into())
}
