//! Benchmark and test module, never shipped.
//!
//! * `rustcryptoAesEncrypt`: RustCrypto `aes` (its portable fixsliced backend, which is what it
//!   compiles to in Wasm) behind the same call shape as webmpc's `aesEncrypt`, so benchmarks
//!   compare like with like and tests have an independent implementation to agree with.
//! * `kernelLoop*`: the two ciphers timed inside Wasm, on a buffer that stays in linear memory,
//!   so the comparison is free of the JS/Wasm copies that the call-shaped figures include.
//! * `OtLocalBench`, `GarbleLocalBench`: both parties of OT extension, or garbler and evaluator
//!   of half-gates, inside this instance, so suites time the protocols' computation in Wasm.
//! * `AuthGcLocal` (module `authgc`): every party of an authenticated-garbling session inside
//!   this instance, for the `authgc` suite.
//! * `MascotLocalBench`, `mascotFieldMulLoop` and the example programs: see [`mascot`].

mod authgc;
pub mod mascot;
pub use authgc::{AuthGcLocal, AuthGcLocalCircuit};

use aes::cipher::{BlockEncrypt, KeyInit};
use wasm_bindgen::prelude::*;
use webmpc_core::aes::{Aes128, FIXED_KEY};
use webmpc_core::Block;

/// AES-128-ECB over 16-byte blocks under a 16-byte key.
#[wasm_bindgen(js_name = rustcryptoAesEncrypt)]
pub fn rustcrypto_aes_encrypt(key: &[u8], blocks: &[u8]) -> Result<Vec<u8>, JsError> {
    if key.len() != 16 || blocks.len() % 16 != 0 {
        return Err(JsError::new("baseline: key must be 16 bytes and input a multiple of 16 bytes"));
    }
    let cipher = aes::Aes128::new_from_slice(key).map_err(|_| JsError::new("baseline: bad key"))?;
    let mut out = blocks.to_vec();
    // The batch call lets the fixsliced backend work on several blocks at once, its best case.
    cipher.encrypt_blocks(as_rustcrypto_blocks(&mut out));
    Ok(out)
}

fn as_rustcrypto_blocks(bytes: &mut [u8]) -> &mut [aes::Block] {
    let n = bytes.len() / 16;
    // SAFETY: `aes::Block` is `GenericArray<u8, U16>`, a `repr(transparent)` [u8; 16] with
    // alignment 1, and `bytes` holds at least n·16 bytes.
    unsafe { core::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut aes::Block, n) }
}

/// Encrypts a `blocks`-block buffer in place `iterations` times with webmpc's AES under the
/// fixed key; returns a byte of the result so the work cannot be optimised away.
#[wasm_bindgen(js_name = kernelLoopOurs)]
pub fn kernel_loop_ours(blocks: usize, iterations: u32) -> u8 {
    let aes = Aes128::new(FIXED_KEY);
    let mut buf = vec![Block::ZERO; blocks];
    for _ in 0..iterations {
        aes.encrypt_blocks(&mut buf);
    }
    buf.first().map_or(0, |b| b.0[0])
}

/// The same loop with RustCrypto's AES under the same key.
#[wasm_bindgen(js_name = kernelLoopRustcrypto)]
pub fn kernel_loop_rustcrypto(blocks: usize, iterations: u32) -> u8 {
    let cipher = aes::Aes128::new(&FIXED_KEY.0.into());
    let mut buf = vec![0u8; 16 * blocks];
    for _ in 0..iterations {
        cipher.encrypt_blocks(as_rustcrypto_blocks(&mut buf));
    }
    buf.first().copied().unwrap_or(0)
}

/// Both parties of a KOS OT extension inside this Wasm instance over the in-memory network, so
/// the `ot` suite can time the protocol's computation in Wasm without JavaScript in the loop.
#[wasm_bindgen(js_name = OtLocalBench)]
pub struct OtLocalBench(webmpc_ot::local::LocalPair);

#[wasm_bindgen(js_class = OtLocalBench)]
impl OtLocalBench {
    /// Runs the 128 base OTs (time it from JavaScript).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<OtLocalBench, JsError> {
        webmpc_ot::local::LocalPair::setup().map(OtLocalBench).map_err(|e| JsError::new(&e.to_string()))
    }

    /// Runs `n` OTs of `kind` (`random | cot | correlated | chosen`); returns a checksum.
    pub fn run(&mut self, kind: &str, n: usize) -> Result<u8, JsError> {
        let kind = webmpc_ot::local::Kind::parse(kind).ok_or_else(|| JsError::new("unknown OT kind"))?;
        self.0.run(kind, n).map_err(|e| JsError::new(&e.to_string()))
    }

    /// Bytes both parties have sent.
    #[wasm_bindgen(js_name = bytesSent)]
    pub fn bytes_sent(&self) -> f64 {
        self.0.bytes_sent() as f64
    }
}

/// Garbler and evaluator of half-gates in this Wasm instance (no OT, no network): the `garble`
/// suite's in-Wasm timing loop, the same code `bench-garble` times natively.
#[wasm_bindgen(js_name = GarbleLocalBench)]
pub struct GarbleLocalBench {
    circuit: webmpc_circuit::Circuit,
    tag: u64,
}

#[wasm_bindgen(js_class = GarbleLocalBench)]
impl GarbleLocalBench {
    /// Parses Bristol Fashion text.
    #[wasm_bindgen(constructor)]
    pub fn new(bristol: &str) -> Result<GarbleLocalBench, JsError> {
        Self::checked(webmpc_circuit::Circuit::parse_bristol(bristol))
    }

    /// Decodes webmpc's binary circuit form (what `CircuitBuilder.toBinary()` produces).
    #[wasm_bindgen(js_name = fromBinary)]
    pub fn from_binary(bytes: &[u8]) -> Result<GarbleLocalBench, JsError> {
        Self::checked(webmpc_circuit::Circuit::from_binary(bytes))
    }

    fn checked(
        parsed: Result<webmpc_circuit::Circuit, webmpc_circuit::CircuitError>,
    ) -> Result<GarbleLocalBench, JsError> {
        let circuit = parsed.map_err(|e| JsError::new(&e.to_string()))?;
        circuit.validate().map_err(|e| JsError::new(&e.to_string()))?;
        Ok(GarbleLocalBench { circuit, tag: 0 })
    }

    /// AND gates in the circuit.
    #[wasm_bindgen(getter, js_name = andGates)]
    pub fn and_gates(&self) -> f64 {
        self.circuit.stats().and as f64
    }

    /// Garbles the circuit `reps` times (fresh tag each time); returns the garbled-table bytes of
    /// one garbling.
    pub fn garble(&mut self, reps: u32) -> Result<f64, JsError> {
        self.repeat(reps, true)
    }

    /// Garbles and evaluates the circuit `reps` times, chunk by chunk as the protocol does;
    /// returns the garbled-table bytes of one garbling.
    #[wasm_bindgen(js_name = garbleAndEvaluate)]
    pub fn garble_and_evaluate(&mut self, reps: u32) -> Result<f64, JsError> {
        self.repeat(reps, false)
    }

    fn repeat(&mut self, reps: u32, garble_only: bool) -> Result<f64, JsError> {
        let mut bytes = 0;
        for _ in 0..reps {
            self.tag = self.tag.wrapping_add(1);
            bytes = webmpc_garble::local::garble_and_evaluate(&self.circuit, garble_only, self.tag)
                .map_err(|e| JsError::new(&e.to_string()))?;
        }
        Ok(bytes as f64)
    }
}
