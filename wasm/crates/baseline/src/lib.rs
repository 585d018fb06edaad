//! Benchmark and test module, never shipped.
//!
//! * `rustcryptoAesEncrypt`: RustCrypto `aes` (its portable fixsliced backend, which is what it
//!   compiles to in Wasm) behind the same call shape as webmpc's `aesEncrypt`, so benchmarks
//!   compare like with like and tests have an independent implementation to agree with.
//! * `kernelLoop*`: the two ciphers timed inside Wasm, on a buffer that stays in linear memory,
//!   so the comparison is free of the JS/Wasm copies that the call-shaped figures include.
//! * `OtLocalBench`, `GarbleLocalBench`: both parties of OT extension, or garbler and evaluator
//!   of half-gates, inside this instance, so suites time the protocols' computation in Wasm.
//! * `AuthGcRealLocalBench`: every party of an authenticated-garbling session (real F_Pre) inside
//!   this instance, timed phase by phase, for the `authgc` suite.
//! * `MascotLocalBench`, `mascotFieldMulLoop` and the example programs: see [`mascot`].
//! * `rooflinePrimitive`: the roofline suite's primitives, see [`roofline`].
//! * `teleportLocalRun`, `Grr3LocalBench`: teleported Yao and its GRR3 garbling, see [`teleport`].

pub mod mascot;
pub mod roofline;
pub mod teleport;

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
    /// The chunks compiled once, after `usePlans` (as a prepared circuit keeps them).
    compiled: Option<Vec<webmpc_garble::halfgates::CompiledChunk>>,
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
        Ok(GarbleLocalBench { circuit, tag: 0, compiled: None })
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

    /// Compiles the circuit's chunks once and reuses them from now on (what the Yao protocol
    /// does with a prepared circuit it runs more than once); the default plans every chunk on
    /// every run.
    #[wasm_bindgen(js_name = usePlans)]
    pub fn use_plans(&mut self) -> Result<(), JsError> {
        let compiled = webmpc_garble::local::compile_chunks(&self.circuit).map_err(|e| JsError::new(&e.to_string()))?;
        self.compiled = Some(compiled);
        Ok(())
    }

    /// Garbles the circuit once, then evaluates those tables `reps` times: the evaluator's work
    /// alone (all-zero inputs). Returns a byte of the last output label.
    #[wasm_bindgen(js_name = evaluateOnly)]
    pub fn evaluate_only(&mut self, reps: u32) -> Result<u8, JsError> {
        let e = |e: webmpc_garble::GarbleError| JsError::new(&e.to_string());
        self.tag = self.tag.wrapping_add(1);
        let garbled =
            webmpc_garble::local::garble_once(&self.circuit, self.compiled.as_deref(), self.tag).map_err(e)?;
        let mut out = 0;
        for _ in 0..reps {
            out ^=
                webmpc_garble::local::evaluate_garbled(&self.circuit, self.compiled.as_deref(), &garbled).map_err(e)?;
        }
        Ok(out)
    }

    fn repeat(&mut self, reps: u32, garble_only: bool) -> Result<f64, JsError> {
        let mut bytes = 0;
        for _ in 0..reps {
            self.tag = self.tag.wrapping_add(1);
            bytes = webmpc_garble::local::garble_and_evaluate_compiled(
                &self.circuit,
                self.compiled.as_deref(),
                garble_only,
                self.tag,
            )
            .map_err(|e| JsError::new(&e.to_string()))?;
        }
        Ok(bytes as f64)
    }
}

#[wasm_bindgen]
extern "C" {
    /// The clock of the in-Wasm profiles, in milliseconds: `globalThis.webmpcBenchClock()`, which
    /// the benchmark defines (process CPU time in Node, where the machine is shared and wall time
    /// grows with other jobs; `performance.now()` in browsers).
    #[wasm_bindgen(js_namespace = globalThis, js_name = webmpcBenchClock)]
    fn bench_clock() -> f64;
}

fn js_error(e: impl core::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// Every party of the real F_Pre (`webmpc_authgc::fpre`) inside this instance on one thread:
/// setup, `random_shares(shares)`, `and_triples(triples)`, outputs verified on a sample. Returns
/// one JSON object: `{ setupMs, sharesMs, triplesMs, shareBytes: [...], tripleBytes: [...],
/// bytesByStep: {step: bytes}, profileMs: {work: ms} }` (times from `webmpcBenchClock`, the summed
/// work of all parties).
#[wasm_bindgen(js_name = fpreLocalRun)]
pub fn fpre_local_run(parties: usize, shares: usize, triples: usize, rho: usize) -> Result<String, JsError> {
    use webmpc_authgc::fpre::{local, Step, Work};
    let r = local::run(parties, shares, triples, rho, bench_clock).map_err(js_error)?;
    let list = |v: &[u64]| v.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(",");
    let steps = Step::ALL
        .iter()
        .map(|s| format!("\"{}\":{}", s.name(), r.bytes_by_step[*s as usize]))
        .collect::<Vec<_>>()
        .join(",");
    let work = Work::ALL
        .iter()
        .map(|w| format!("\"{}\":{}", w.name(), r.profile.ms[*w as usize]))
        .collect::<Vec<_>>()
        .join(",");
    Ok(format!(
        "{{\"setupMs\":{},\"sharesMs\":{},\"triplesMs\":{},\"shareBytes\":[{}],\"tripleBytes\":[{}],\"bytesByStep\":{{{}}},\"profileMs\":{{{}}}}}",
        r.setup_ms,
        r.shares_ms,
        r.triples_ms,
        list(&r.share_bytes),
        list(&r.triple_bytes),
        steps,
        work
    ))
}

/// n-party authenticated garbling with the **real** F_Pre, every party inside this instance over
/// the Rust in-memory network on one thread, phase by phase, so the `authgc` suite can time each
/// phase in Wasm (the sum of all parties' work). Party 0 evaluates and owns input 1, party 1
/// owns input 2 (if any); every party learns every output, checked against plaintext.
#[wasm_bindgen(js_name = AuthGcRealLocalBench)]
pub struct AuthGcRealLocalBench {
    circuit: webmpc_authgc::online::PreparedCircuit,
    roles: webmpc_authgc::online::Roles,
    inputs: Vec<Vec<Vec<bool>>>,
    want: Vec<Vec<bool>>,
    parties: usize,
    rho: usize,
    local: Option<webmpc_authgc::online::local::LocalAuthGc<RealPre>>,
    /// The client auction's bids ([`AuthGcRealLocalBench::vickrey_clients`]), and the messages
    /// its clients made for this session.
    bids: Option<Vec<u64>>,
    messages: Vec<Option<webmpc_authgc::online::ClientMessage>>,
}

/// Bits of a client bid in the client auction.
const CLIENT_BID_BITS: u32 = 32;

type RealPre = webmpc_authgc::fpre::RealPreprocessor<webmpc_authgc::online::local::LocalChannel>;

#[wasm_bindgen(js_class = AuthGcRealLocalBench)]
impl AuthGcRealLocalBench {
    /// Parses Bristol Fashion text for `parties` parties at statistical security `rho`.
    #[wasm_bindgen(constructor)]
    pub fn new(bristol: &str, parties: usize, rho: usize) -> Result<AuthGcRealLocalBench, JsError> {
        use webmpc_authgc::online::{PreparedCircuit, Recipients, Roles};
        let circuit = webmpc_circuit::Circuit::parse_bristol(bristol).map_err(js_error)?;
        if circuit.inputs.len() > 2 || parties < 2 {
            return Err(JsError::new("bench: circuits with at most 2 inputs, at least 2 parties"));
        }
        let values: Vec<Vec<bool>> = circuit
            .inputs
            .iter()
            .enumerate()
            .map(|(i, &w)| (0..w).map(|k| (k as usize * 7 + i) % 3 == 0).collect())
            .collect();
        let want = circuit.evaluate(&values).map_err(js_error)?;
        let roles = Roles {
            evaluator: 0,
            owners: (0..circuit.inputs.len()).collect(),
            outputs: vec![Recipients::ALL; circuit.outputs.len()],
        };
        let mut inputs = vec![Vec::new(); parties];
        for (i, v) in values.into_iter().enumerate() {
            inputs[i].push(v);
        }
        let circuit = PreparedCircuit::new(circuit).map_err(js_error)?;
        Ok(AuthGcRealLocalBench { circuit, roles, inputs, want, parties, rho, local: None, bids: None, messages: Vec::new() })
    }

    /// A Vickrey auction among `clients` client bidders (random 32-bit bids) that `parties`
    /// servers compute (`online::clients`); `clients()` plays the bidders between `prepare()` and
    /// `run()`.
    #[wasm_bindgen(js_name = vickreyClients)]
    pub fn vickrey_clients(clients: usize, parties: usize, rho: usize) -> Result<AuthGcRealLocalBench, JsError> {
        use webmpc_authgc::online::{PreparedCircuit, Recipients, Roles, CLIENT};
        use webmpc_circuit::testing::{vickrey_clients, vickrey_reference};
        if clients < 2 || parties < 2 {
            return Err(JsError::new("bench: at least 2 clients and 2 parties"));
        }
        let mut coins = vec![0u8; 4 * clients];
        webmpc_core::random::fill(&mut coins).map_err(js_error)?;
        let bids: Vec<u64> = coins.chunks(4).map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))).collect();
        let (winner, price) = vickrey_reference(&bids);
        let bits = |x: u64, w: usize| (0..w).map(|i| x >> i & 1 == 1).collect::<Vec<bool>>();
        let circuit = PreparedCircuit::new(vickrey_clients(clients, CLIENT_BID_BITS)).map_err(js_error)?;
        let index_bits = circuit.circuit().outputs[0] as usize;
        let want = vec![bits(winner as u64, index_bits), bits(price, CLIENT_BID_BITS as usize)];
        let roles = Roles { evaluator: 0, owners: vec![CLIENT; clients], outputs: vec![Recipients::ALL; 2] };
        let inputs = vec![Vec::new(); parties];
        Ok(AuthGcRealLocalBench { circuit, roles, inputs, want, parties, rho, local: None, bids: Some(bids), messages: Vec::new() })
    }

    /// The client auction's client part: every bidder takes every server's mask shares and makes
    /// its message.
    pub fn clients(&mut self) -> Result<(), JsError> {
        use webmpc_circuit::testing::vickrey_client_value;
        let values: Vec<Option<Vec<bool>>> =
            self.bids.as_ref().ok_or_else(|| JsError::new("bench: not a client auction"))?.iter().map(|&b| Some(vickrey_client_value(b, CLIENT_BID_BITS))).collect();
        let local = self.local.as_ref().ok_or_else(|| JsError::new("bench: call setup() first"))?;
        self.messages = local.clients_give(&values).map_err(js_error)?;
        Ok(())
    }

    /// AND gates of the circuit.
    #[wasm_bindgen(getter, js_name = andGates)]
    pub fn and_gates(&self) -> f64 {
        self.circuit.circuit().stats().and as f64
    }

    /// Input bits of the circuit (the masks it needs besides one per AND gate).
    #[wasm_bindgen(getter, js_name = inputBits)]
    pub fn input_bits(&self) -> f64 {
        self.circuit.circuit().input_bits().unwrap_or(0) as f64
    }

    /// The setup phase: every party's real F_Pre (base OTs, KOS instances, the Δ check).
    pub fn setup(&mut self) -> Result<(), JsError> {
        use webmpc_authgc::fpre::RealPreprocessor;
        use webmpc_authgc::online::local::{LocalAuthGc, LocalChannel};
        use webmpc_authgc::online::Options;
        let session = webmpc_ot::SessionId::random().map_err(js_error)?;
        let rho = self.rho;
        self.local = None;
        let local = LocalAuthGc::setup(self.parties, Options::default(), move |ch: LocalChannel| async move {
            RealPreprocessor::setup(ch, &session, rho).await
        })
        .map_err(js_error)?;
        self.local = Some(local);
        Ok(())
    }

    fn local(&mut self) -> Result<&mut webmpc_authgc::online::local::LocalAuthGc<RealPre>, JsError> {
        self.local.as_mut().ok_or_else(|| JsError::new("bench: call setup() first"))
    }

    /// Function-independent preprocessing for this circuit's AND gates and masks.
    pub fn preprocess(&mut self) -> Result<(), JsError> {
        let ands = self.and_gates() as usize;
        let checks = self.bids.as_ref().map_or(0, |b| b.len() * webmpc_authgc::online::CLIENT_CHECK_BITS);
        let masks = ands + self.input_bits() as usize + checks;
        self.local()?.preprocess(ands, masks).map_err(js_error)
    }

    /// Function-dependent preprocessing (garbling; tables to the evaluator).
    pub fn prepare(&mut self) -> Result<(), JsError> {
        let (c, r) = (&self.circuit, &self.roles);
        let local = self.local.as_mut().ok_or_else(|| JsError::new("bench: call setup() first"))?;
        local.prepare(c, r).map_err(js_error)
    }

    /// The online phase; fails unless every party got the plaintext answer.
    pub fn run(&mut self) -> Result<(), JsError> {
        let (c, r, x) = (&self.circuit, &self.roles, &self.inputs);
        let local = self.local.as_mut().ok_or_else(|| JsError::new("bench: call setup() first"))?;
        let outs = if self.bids.is_some() {
            let results = local.run_with_clients(c, r, x, &self.messages).map_err(js_error)?;
            if results.iter().any(|(_, refused)| !refused.is_empty()) {
                return Err(JsError::new("bench: an honest client was refused"));
            }
            results.into_iter().map(|(out, _)| out).collect()
        } else {
            local.run(c, r, x).map_err(js_error)?
        };
        for out in &outs {
            for (got, want) in out.iter().zip(&self.want) {
                if got.as_ref() != Some(want) {
                    return Err(JsError::new("bench: wrong output"));
                }
            }
        }
        Ok(())
    }

    /// Bytes each party has sent since setup began.
    #[wasm_bindgen(js_name = bytesSent)]
    pub fn bytes_sent(&self) -> Vec<f64> {
        self.local.as_ref().map_or_else(Vec::new, |l| l.bytes_sent().into_iter().map(|b| b as f64).collect())
    }
}
