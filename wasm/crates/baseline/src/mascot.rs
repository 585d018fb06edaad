//! MASCOT for benchmarks and tests (never shipped; the shipped binding is
//! `webmpc-bindings`' `MascotSession`):
//!
//! * `MascotLocalBench`: every party of a session inside this Wasm instance over the Rust
//!   in-memory network, so the `mascot` suite times the protocol's computation in Wasm without
//!   JavaScript in the loop (its "in-wasm-memory" rows).
//! * `mascotFieldMulLoop`: the F_p multiplication rate in Wasm, the figure behind the choice of
//!   prime.
//! * `mascotVickreyProgram`, `mascotProductsProgram`: the Rust example programs
//!   (`webmpc_spdz::examples`) in the program encoding, for the benchmarks and for the tests that
//!   check the TypeScript builder's bytes against them.

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use webmpc_spdz::local::Local;
use webmpc_spdz::program::{Program, MAX_CMP_BITS, MAX_PARTIES};
use webmpc_spdz::{Field, FieldKind, Fp, Gf128};

/// Most triples or bits one call may ask for.
const MAX_PREPROCESS: usize = 10_000_000;

fn err(e: impl core::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// A whole number in `0..=limit` from JS, else an error (no silent wrap or truncation).
fn size(what: &str, n: f64, limit: usize) -> Result<usize, JsError> {
    if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= limit as f64 {
        Ok(n as usize)
    } else {
        Err(JsError::new(&format!("baseline: {what} must be an integer in 0..={limit}")))
    }
}

fn field_kind(field: &str) -> Result<FieldKind, JsError> {
    match field {
        "prime" => Ok(FieldKind::Prime),
        "binary" => Ok(FieldKind::Binary),
        _ => Err(JsError::new("baseline: field must be \"prime\" or \"binary\"")),
    }
}

fn inputs_of(bytes: &[u8]) -> Result<Vec<[u8; 16]>, JsError> {
    if bytes.len() % 16 != 0 {
        return Err(JsError::new("baseline: inputs must be 16 bytes (little-endian) per value"));
    }
    Ok(bytes.chunks_exact(16).map(|c| c.try_into().expect("16 bytes")).collect())
}

enum Role {
    Prime(Local<Fp>),
    Binary(Local<Gf128>),
}

/// Every party of a session inside this Wasm instance over the in-memory network (synchronous
/// calls).
#[wasm_bindgen(js_name = MascotLocalBench)]
pub struct MascotLocalBench(Role);

#[wasm_bindgen(js_class = MascotLocalBench)]
impl MascotLocalBench {
    /// Sets up `parties` parties over `field` (`"prime"` or `"binary"`).
    #[wasm_bindgen(constructor)]
    pub fn new(parties: f64, field: &str) -> Result<MascotLocalBench, JsError> {
        let n = size("parties", parties, 16)?;
        Ok(MascotLocalBench(match field_kind(field)? {
            FieldKind::Prime => Role::Prime(Local::setup(n).map_err(err)?),
            FieldKind::Binary => Role::Binary(Local::setup(n).map_err(err)?),
        }))
    }

    /// Generates `n` triples on every party and discards them; returns how many each got.
    #[wasm_bindgen(js_name = generateTriples)]
    pub fn generate_triples(&mut self, n: f64) -> Result<f64, JsError> {
        let n = size("triples", n, MAX_PREPROCESS)?;
        let got = match &mut self.0 {
            Role::Prime(l) => l.generate_triples(n),
            Role::Binary(l) => l.generate_triples(n),
        };
        Ok(got.map_err(err)? as f64)
    }

    /// Adds `triples` triples and `bits` bits to every party's store.
    pub fn preprocess(&mut self, triples: f64, bits: f64) -> Result<(), JsError> {
        let t = size("triples", triples, MAX_PREPROCESS)?;
        let b = size("bits", bits, MAX_PREPROCESS)?;
        match &mut self.0 {
            Role::Prime(l) => l.preprocess_bits(b).and_then(|_| l.preprocess_triples(t)),
            Role::Binary(l) => l.preprocess_bits(b).and_then(|_| l.preprocess_triples(t)),
        }
        .map_err(err)
    }

    /// Runs a program; `inputs` is an array (one entry per party) of flat 16-byte-per-value
    /// inputs. Returns party 0's outputs (a 16-byte `Uint8Array` per output it learns, else
    /// `undefined`).
    pub fn run(&mut self, program: &[u8], inputs: Array) -> Result<Array, JsError> {
        let program = Program::decode(program).map_err(err)?;
        let mut all = Vec::new();
        for v in inputs.iter() {
            let bytes: Uint8Array =
                v.dyn_into().map_err(|_| JsError::new("baseline: each party's inputs must be a Uint8Array"))?;
            all.push(inputs_of(&bytes.to_vec())?);
        }
        let out = match &mut self.0 {
            Role::Prime(l) => l.run(&program, &all),
            Role::Binary(l) => l.run(&program, &all),
        }
        .map_err(err)?;
        let arr = Array::new();
        for v in out.first().map(|v| v.as_slice()).unwrap_or(&[]) {
            match v {
                Some(b) => arr.push(&Uint8Array::from(&b[..])),
                None => arr.push(&JsValue::UNDEFINED),
            };
        }
        Ok(arr)
    }

    /// Bytes all parties have sent.
    #[wasm_bindgen(js_name = bytesSent)]
    pub fn bytes_sent(&self) -> f64 {
        match &self.0 {
            Role::Prime(l) => l.bytes_sent() as f64,
            Role::Binary(l) => l.bytes_sent() as f64,
        }
    }
}

/// `n` multiplications in F_p (p = 2^128 − 173) in a dependent chain; returns a checksum byte.
#[wasm_bindgen(js_name = mascotFieldMulLoop)]
pub fn mascot_field_mul_loop(n: f64) -> Result<u8, JsError> {
    let n = size("n", n, 1 << 30)?;
    let mut x = Fp::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
    let y = Fp::from_u128(0xfedc_ba98_7654_3210_8899_aabb_ccdd_eeff);
    for _ in 0..n {
        x = x * y + y;
    }
    Ok(x.to_bytes()[0])
}

/// The Vickrey auction program of `bids` unsigned `bits`-bit bids among `parties` parties (bid i
/// from party i mod n; outputs winner index and price to all; ties to the lowest index).
#[wasm_bindgen(js_name = mascotVickreyProgram)]
pub fn mascot_vickrey_program(parties: f64, bids: f64, bits: f64) -> Result<Vec<u8>, JsError> {
    let n = size("parties", parties, MAX_PARTIES)?;
    let k = size("bids", bids, 1 << 16)?;
    let b = size("bits", bits, MAX_CMP_BITS as usize)?;
    if n < 2 || k == 0 || b == 0 {
        return Err(JsError::new("baseline: need at least 2 parties, 1 bid and 1 bit"));
    }
    Ok(webmpc_spdz::examples::vickrey(n, k, b as u8).encode())
}

/// `m` independent products of party 0's and party 1's field inputs in one layer, summed (the
/// online-multiplication benchmark's program).
#[wasm_bindgen(js_name = mascotProductsProgram)]
pub fn mascot_products_program(field: &str, parties: f64, m: f64) -> Result<Vec<u8>, JsError> {
    let n = size("parties", parties, MAX_PARTIES)?;
    let m = size("m", m, 1 << 21)?;
    if n < 2 || m == 0 {
        return Err(JsError::new("baseline: need at least 2 parties and 1 product"));
    }
    Ok(webmpc_spdz::examples::products(field_kind(field)?, n, m).encode())
}
