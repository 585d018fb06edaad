//! The package's teleport module, `webmpc_teleport_bg.wasm`, loaded by the SDK on first use of
//! `teleport-yao` or teleported OT (so apps that never teleport never download it). It links the
//! shared glue (`webmpc-bindings-glue`: stack scrub, zero-on-free allocator, JS channel) and
//! nothing of the main module: circuits arrive as their binary form and are parsed here.
//!
//! Teleported correlated randomness (`webmpc_teleport`) over JavaScript transports: both parties'
//! attested sessions, GC jobs (the `teleport-yao` protocol) and random-OT jobs. Thin: it converts
//! JS values, keeps each session's state, and turns `TeleportError`s into JS errors with a stable
//! `code` (plus `check`/`suspect`, `reason` or `enclaveCode` where they say more). Evidence
//! checks, sealing, labels, σ/τ, evaluation: all in the crate.
//!
//! The garbler's channel reaches only the evaluator. The evaluator's channel has one more peer,
//! the **enclave link**: each message to and from it is one link frame (peer byte ‖ enclave
//! message; `webmpc_teleport::driver`), which the SDK carries as one WebSocket message to the
//! enclave-server.

use core::cell::RefCell;
use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use webmpc_bindings_glue::channel::{JsChannel, JsTransport};
use webmpc_bindings_glue::protocol::{channel, circuit_error, protocol_error, with_instance, JsChannelProbe, Shared};
use webmpc_bindings_glue::{js_error, js_size, scrubbed, spawn_scrubbed};
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits, Circuit};
use webmpc_core::channel::{Channel, ChannelError};
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_teleport::driver::{self, EvaluatorSession, GarblerSession, JobCounter, Peers};
use webmpc_teleport::evidence::Policy;
use webmpc_teleport::{Check, EvidenceRefusal, JobKind, Mode, Owner, TeleportError};

/// Most OTs per call (as for KOS); larger runs call repeatedly.
const MAX_OTS_PER_CALL: usize = 1 << 24;

/// Which party a check's suspect is, as far as this party can tell.
enum Suspect {
    Garbler,
    Evaluator,
    Other,
}

fn suspect(c: Check) -> Suspect {
    match c.suspect() {
        "garbler" => Suspect::Garbler,
        "evaluator" => Suspect::Evaluator,
        _ => Suspect::Other,
    }
}

/// The JS error for a teleport failure. The SDK's codes: `ENCLAVE_CHECK_FAILED` (with `check`,
/// the check's name, and `suspect`), `SIMULATED_ENCLAVE_REFUSED`, `EVIDENCE_REJECTED` (with
/// `reason`: `measurement-mismatch`, `signer-mismatch`, `stale` (evidence of another session),
/// `debug-enclave`, `product-mismatch`, `svn-too-low`, `tcb-status`, `no-verifier`, `no-policy`,
/// `invalid`), `ENCLAVE_FAILED` (the enclave or its host aborted the job; `enclaveCode` says
/// why, e.g. `TOO_LARGE`, and the message carries the enclave's detail), and the common protocol
/// codes.
fn teleport_error(e: &TeleportError, probe: &JsChannelProbe, peers: &Peers) -> JsValue {
    let transport = matches!(e, TeleportError::Channel(ChannelError::Transport { .. }));
    let mut extra: Vec<(&str, String)> = Vec::new();
    let (code, peer) = match e {
        TeleportError::CheckFailed(c) => {
            extra.push(("check", c.name().into()));
            extra.push(("suspect", c.suspect().into()));
            let peer = match suspect(*c) {
                Suspect::Garbler => Some(peers.garbler),
                Suspect::Evaluator => Some(peers.evaluator),
                Suspect::Other => None,
            };
            ("ENCLAVE_CHECK_FAILED", peer)
        }
        TeleportError::EvidenceRefused(EvidenceRefusal::SimulatedRefused) => ("SIMULATED_ENCLAVE_REFUSED", None),
        TeleportError::EvidenceRefused(r) => {
            extra.push(("reason", r.name().into()));
            ("EVIDENCE_REJECTED", None)
        }
        TeleportError::Remote { code, .. } => {
            extra.push(("enclaveCode", code.clone()));
            ("ENCLAVE_FAILED", None)
        }
        TeleportError::UnexpectedMessage { .. } | TeleportError::Malformed(_) => ("MALFORMED_MESSAGE", None),
        TeleportError::SealOpenFailed | TeleportError::TooLarge { .. } => ("INVALID_ARGUMENT", None),
        other => (other.code(), None),
    };
    let err = probe.error_with(e.to_string(), code, peer, transport);
    if !transport {
        for (k, v) in extra {
            let _ = Reflect::set(&err, &k.into(), &v.into());
        }
    }
    err
}

fn invalid(msg: impl Into<String>) -> JsValue {
    protocol_error(msg.into(), "INVALID_ARGUMENT", None, false, None)
}

fn mode(text: &str) -> Result<Mode, JsValue> {
    match text {
        "semi-honest" => Ok(Mode::SemiHonest),
        "malicious" => Ok(Mode::Malicious),
        _ => Err(invalid("mode must be \"semi-honest\" or \"malicious\"")),
    }
}

fn digests(what: &str, bytes: &[u8]) -> Result<Vec<[u8; 32]>, JsValue> {
    if bytes.len() % 32 != 0 {
        return Err(invalid(format!("{what} must be 32-byte values, concatenated")));
    }
    Ok(bytes.chunks_exact(32).map(|c| c.try_into().expect("32 bytes")).collect())
}

/// An evidence policy, owned (the crate's [`Policy`] borrows from it).
struct OwnedPolicy {
    allow_simulated: bool,
    simulated_measurements: Vec<[u8; 32]>,
    signers: Option<Vec<[u8; 32]>>,
}

impl OwnedPolicy {
    /// `simulated_measurements`: the simulation programs accepted when `allow_simulated` (the SDK
    /// checks that some pin is given; an Open Enclave MRENCLAVE never pins a simulated enclave).
    fn new(allow_simulated: bool, simulated_measurements: &[u8], signers: Option<Vec<u8>>) -> Result<Self, JsValue> {
        let simulated_measurements = digests("simulated measurements", simulated_measurements)?;
        let signers = signers.map(|s| digests("simulation signers", &s)).transpose()?;
        Ok(OwnedPolicy { allow_simulated, simulated_measurements, signers })
    }

    fn policy(&self) -> Policy<'_> {
        Policy {
            allow_simulated: self.allow_simulated,
            simulated_measurements: &self.simulated_measurements,
            simulation_signers: self.signers.as_deref(),
            // Open Enclave quotes need `oe_verify_evidence`, which does not run in Wasm: such
            // evidence is refused (`EVIDENCE_REJECTED`, reason `no-verifier`).
            open_enclave: None,
            oe_verifier: None,
        }
    }
}

fn session_base(bytes: &[u8]) -> Result<[u8; 32], JsValue> {
    bytes.try_into().map_err(|_| invalid("session id must be 32 bytes"))
}

/// A circuit prepared for teleportation: its binary form (what the evaluator streams to the
/// enclave and the garbler garbles for τ), validated once, and its content hash.
#[wasm_bindgen(js_name = TeleportCircuit)]
pub struct TeleportCircuit {
    binary: Rc<Vec<u8>>,
    hash: [u8; 32],
    inputs: Vec<u32>,
    outputs: Vec<u32>,
}

#[wasm_bindgen(js_class = TeleportCircuit)]
impl TeleportCircuit {
    /// Decodes and validates a binary circuit.
    #[wasm_bindgen(constructor)]
    pub fn new(binary: &[u8]) -> Result<TeleportCircuit, JsValue> {
        let c = Circuit::from_binary(binary).map_err(circuit_error)?;
        Ok(TeleportCircuit {
            binary: Rc::new(binary.to_vec()),
            hash: c.content_hash(),
            inputs: c.inputs,
            outputs: c.outputs,
        })
    }

    /// The content hash (32 bytes).
    #[wasm_bindgen(getter)]
    pub fn hash(&self) -> Vec<u8> {
        self.hash.to_vec()
    }
}

/// A GC job's arguments, checked and converted: kind, who learns what, and this party's bits.
struct GcArgs {
    kind: JobKind,
    reveal: Vec<bool>,
    bits: Vec<bool>,
}

fn gc_args(c: &TeleportCircuit, owners: &[u8], reveal: &[u8], inputs: &Array, me: Owner) -> Result<GcArgs, JsValue> {
    let owners: Vec<Owner> = owners
        .iter()
        .map(|b| match b {
            0 => Ok(Owner::Garbler),
            1 => Ok(Owner::Evaluator),
            _ => Err(invalid("owners: 0 = garbler, 1 = evaluator")),
        })
        .collect::<Result<_, _>>()?;
    let reveal: Vec<bool> = reveal
        .iter()
        .map(|b| match b {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(invalid("reveal: 1 if the garbler learns the output value too, else 0")),
        })
        .collect::<Result<_, _>>()?;
    if owners.len() != c.inputs.len() || reveal.len() != c.outputs.len() {
        return Err(invalid("owners/reveal must have one entry per input/output value"));
    }
    let widths: Vec<u32> = (0..owners.len()).filter(|&i| owners[i] == me).map(|i| c.inputs[i]).collect();
    if inputs.length() as usize != widths.len() {
        return Err(invalid(format!("{} input values given; this party owns {}", inputs.length(), widths.len())));
    }
    let mut bits = Vec::new();
    for (k, &w) in widths.iter().enumerate() {
        let v: Uint8Array =
            inputs.get(k as u32).dyn_into().map_err(|_| invalid("each input value must be a Uint8Array"))?;
        if v.length() as usize != (w as usize).div_ceil(8) {
            return Err(invalid(format!("input value {} must be {} bytes", k + 1, (w as usize).div_ceil(8))));
        }
        bits.extend(bits_from_bytes_be(&v.to_vec(), w));
    }
    Ok(GcArgs { kind: JobKind::Gc { circuit_hash: c.hash, owners }, reveal, bits })
}

fn outputs_to_js<'a>(values: impl Iterator<Item = Option<&'a Vec<bool>>>) -> JsValue {
    let arr = Array::new();
    for v in values {
        match v {
            Some(bits) => arr.push(&Uint8Array::from(bytes_be_from_bits(bits).as_slice())),
            None => arr.push(&JsValue::UNDEFINED),
        };
    }
    arr.into()
}

fn ot_count(n: f64) -> Result<usize, JsValue> {
    js_size("OT count", n, MAX_OTS_PER_CALL)
        .map_err(|_| invalid(format!("OT count must be an integer in [0, {MAX_OTS_PER_CALL}]")))
}

struct GarblerState {
    ch: JsChannel,
    peers: Peers,
    session: GarblerSession,
    jobs: JobCounter,
    prg: Prg,
}

/// The garbler's (ROT sender's) side of an attested teleport session with one evaluator: the
/// enclave's evidence was checked once and one X25519 key agreed; each job seals a fresh seed.
#[wasm_bindgen(js_name = TeleportGarbler)]
pub struct TeleportGarbler {
    inner: Shared<GarblerState>,
    enclave_key: [u8; 32],
}

/// Sets up the garbler's session: sends a fresh nonce to `evaluator` (for the enclave's
/// challenge), receives the enclave's evidence it relays, checks it against the policy
/// (`allowSimulated`, `measurements`: the accepted simulation programs, 32-byte values
/// concatenated, `signers`: the same for simulation signer keys, or undefined for any) and the
/// nonce, and makes the session key. `session`: 32 bytes both parties agree on (job ids are
/// derived from it). Resolves to a `TeleportGarbler`.
#[wasm_bindgen(js_name = teleportGarblerConnect)]
pub fn teleport_garbler_connect(
    transport: JsTransport,
    evaluator: u32,
    session: &[u8],
    allow_simulated: bool,
    measurements: &[u8],
    signers: Option<Vec<u8>>,
) -> js_sys::Promise {
    // The session key agreement and the PRG seed pass through the stack: scrubbed like
    // every entry point that touches secrets (see webmpc-bindings-glue).
    scrubbed(|| {
        let prepared = (|| -> Result<_, JsValue> {
            let ch = channel(transport)?;
            let base = session_base(session)?;
            let policy = OwnedPolicy::new(allow_simulated, measurements, signers)?;
            if evaluator as usize >= ch.parties() || evaluator as usize == ch.party() {
                return Err(invalid("evaluator must be another party of the transport"));
            }
            let prg = Prg::from_entropy().map_err(js_error)?;
            Ok((ch, base, policy, prg))
        })();
        let (ch, base, policy, mut prg) = match prepared {
            Ok(p) => p,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        let peers = Peers { garbler: ch.party(), evaluator: evaluator as usize, enclave: evaluator as usize };
        spawn_scrubbed(async move {
            let probe = JsChannelProbe::new(&ch);
            match GarblerSession::connect(&ch, &peers, &policy.policy(), &mut prg).await {
                Ok(session) => {
                    let enclave_key = session.enclave_public();
                    let state = GarblerState { ch, peers, session, jobs: JobCounter::new(base), prg };
                    Ok(TeleportGarbler { inner: Rc::new(RefCell::new(Some(state))), enclave_key }.into())
                }
                Err(e) => Err(teleport_error(&e, &probe, &peers)),
            }
        })
    })
}

#[wasm_bindgen(js_class = TeleportGarbler)]
impl TeleportGarbler {
    /// The enclave's X25519 key the evidence bound (32 bytes).
    #[wasm_bindgen(getter, js_name = enclaveKey)]
    pub fn enclave_key(&self) -> Vec<u8> {
        self.enclave_key.to_vec()
    }

    /// One GC job (`mode`: `"semi-honest"` or `"malicious"`). `owners[i]`: 0 if input value `i` is
    /// the garbler's, 1 if the evaluator's; `reveal[i]`: 1 if output value `i` goes to the garbler
    /// too (every output goes to the evaluator). `inputs`: the garbler's values, big-endian.
    /// Resolves to one entry per output value: bytes where revealed to the garbler, else undefined.
    #[wasm_bindgen(js_name = runGc)]
    pub fn run_gc(
        &self,
        circuit: &TeleportCircuit,
        mode_text: &str,
        owners: &[u8],
        reveal: &[u8],
        inputs: Array,
    ) -> Result<js_sys::Promise, JsValue> {
        let mode = mode(mode_text)?;
        let args = gc_args(circuit, owners, reveal, &inputs, Owner::Garbler)?;
        let binary = circuit.binary.clone();
        Ok(with_instance(&self.inner, move |mut s| async move {
            let probe = JsChannelProbe::new(&s.ch);
            let job = s.jobs.next(mode, args.kind);
            let GarblerState { ch, peers, session, prg, .. } = &mut s;
            let r = driver::gc_garbler(ch, peers, session, &job, &binary, &args.bits, &args.reveal, prg).await;
            match r {
                Ok(out) => (Some(s), Ok(outputs_to_js(out.iter().map(Option::as_ref)))),
                Err(e) => {
                    let err = teleport_error(&e, &probe, &s.peers);
                    (None, Err(err))
                }
            }
        }))
    }

    /// `n` teleported random OTs as the sender: resolves to `32·n` bytes, `m0 ‖ m1` per OT.
    #[wasm_bindgen(js_name = sendRandom)]
    pub fn send_random(&self, n: f64, mode_text: &str) -> Result<js_sys::Promise, JsValue> {
        let n = ot_count(n)?;
        let mode = mode(mode_text)?;
        Ok(with_instance(&self.inner, move |mut s| async move {
            let probe = JsChannelProbe::new(&s.ch);
            let job = s.jobs.next(mode, JobKind::Rot { count: n as u64 });
            let GarblerState { ch, peers, session, prg, .. } = &mut s;
            let mut pairs: Vec<Block> = Vec::with_capacity(2 * n);
            let r = driver::rot_sender(ch, peers, session, &job, prg, |_, chunk| {
                for p in chunk {
                    pairs.extend_from_slice(p);
                }
            })
            .await;
            match r {
                Ok(()) => {
                    let out = Uint8Array::from(Block::slice_as_bytes(&pairs));
                    Block::wipe(&mut pairs);
                    (Some(s), Ok(out.into()))
                }
                Err(e) => {
                    Block::wipe(&mut pairs);
                    let err = teleport_error(&e, &probe, &s.peers);
                    (None, Err(err))
                }
            }
        }))
    }
}

struct EvaluatorState {
    ch: JsChannel,
    peers: Peers,
    session: EvaluatorSession,
    jobs: JobCounter,
    prg: Prg,
}

/// The evaluator's (ROT receiver's) side of an attested teleport session: its transport reaches
/// the garbler and, as one more party, the enclave link.
#[wasm_bindgen(js_name = TeleportEvaluator)]
pub struct TeleportEvaluator {
    inner: Shared<EvaluatorState>,
    enclave_key: [u8; 32],
}

/// Sets up the evaluator's session: sends the enclave the challenge (the garbler's nonce and its
/// own), receives the evidence from the link (`enclave`), checks its copy against the policy (as
/// for [`teleport_garbler_connect`]) and its nonce, relays the garbler's copy to `garbler`, and
/// makes its own session key (its k2 and x2⁰ are sealed to the enclave like the garbler's seed).
/// Resolves to a `TeleportEvaluator`.
#[wasm_bindgen(js_name = teleportEvaluatorConnect)]
pub fn teleport_evaluator_connect(
    transport: JsTransport,
    garbler: u32,
    enclave: u32,
    session: &[u8],
    allow_simulated: bool,
    measurements: &[u8],
    signers: Option<Vec<u8>>,
) -> js_sys::Promise {
    // The session key agreement and the PRG seed pass through the stack: scrubbed like
    // every entry point that touches secrets (see webmpc-bindings-glue).
    scrubbed(|| {
        let prepared = (|| -> Result<_, JsValue> {
            let ch = channel(transport)?;
            let base = session_base(session)?;
            let policy = OwnedPolicy::new(allow_simulated, measurements, signers)?;
            let (g, x, me, n) = (garbler as usize, enclave as usize, ch.party(), ch.parties());
            if g >= n || x >= n || g == me || x == me || g == x {
                return Err(invalid("garbler and enclave must be two other parties of the transport"));
            }
            let prg = Prg::from_entropy().map_err(js_error)?;
            Ok((ch, base, policy, prg))
        })();
        let (ch, base, policy, mut prg) = match prepared {
            Ok(p) => p,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        let peers = Peers { garbler: garbler as usize, evaluator: ch.party(), enclave: enclave as usize };
        spawn_scrubbed(async move {
            let probe = JsChannelProbe::new(&ch);
            match EvaluatorSession::connect(&ch, &peers, &policy.policy(), &mut prg).await {
                Ok(session) => {
                    let enclave_key = session.enclave_public();
                    let state = EvaluatorState { ch, peers, session, jobs: JobCounter::new(base), prg };
                    Ok(TeleportEvaluator { inner: Rc::new(RefCell::new(Some(state))), enclave_key }.into())
                }
                Err(e) => Err(teleport_error(&e, &probe, &peers)),
            }
        })
    })
}

#[wasm_bindgen(js_class = TeleportEvaluator)]
impl TeleportEvaluator {
    /// The enclave's X25519 key the evidence bound (32 bytes).
    #[wasm_bindgen(getter, js_name = enclaveKey)]
    pub fn enclave_key(&self) -> Vec<u8> {
        self.enclave_key.to_vec()
    }

    /// One GC job, as [`TeleportGarbler::run_gc`] with the evaluator's inputs;
    /// `progress(gatesDone, gatesTotal)` after each piece. Resolves to every output value.
    #[wasm_bindgen(js_name = runGc)]
    pub fn run_gc(
        &self,
        circuit: &TeleportCircuit,
        mode_text: &str,
        owners: &[u8],
        reveal: &[u8],
        inputs: Array,
        progress: Option<Function>,
    ) -> Result<js_sys::Promise, JsValue> {
        let mode = mode(mode_text)?;
        let args = gc_args(circuit, owners, reveal, &inputs, Owner::Evaluator)?;
        let binary = circuit.binary.clone();
        let total = webmpc_teleport::circuit::Header::parse(&binary).map(|(h, _)| h.gates as f64).unwrap_or(0.0);
        Ok(with_instance(&self.inner, move |mut s| async move {
            let probe = JsChannelProbe::new(&s.ch);
            let job = s.jobs.next(mode, args.kind);
            let report = |done: u64| {
                if let Some(f) = &progress {
                    // A throwing progress callback must not abort the protocol.
                    let _ = f.call2(&JsValue::NULL, &(done as f64).into(), &total.into());
                }
            };
            let EvaluatorState { ch, peers, session, prg, .. } = &mut s;
            let r =
                driver::gc_evaluator(ch, peers, session, &job, &binary, &args.bits, &args.reveal, prg, report).await;
            match r {
                Ok(out) => (Some(s), Ok(outputs_to_js(out.iter().map(Some)))),
                Err(e) => {
                    let err = teleport_error(&e, &probe, &s.peers);
                    (None, Err(err))
                }
            }
        }))
    }

    /// `n` teleported random OTs as the receiver: resolves to `{ choices, messages }` (one byte
    /// 0/1 per OT; `16·n` bytes, `m_{b_j}` per OT).
    #[wasm_bindgen(js_name = receiveRandom)]
    pub fn receive_random(&self, n: f64, mode_text: &str) -> Result<js_sys::Promise, JsValue> {
        let n = ot_count(n)?;
        let mode = mode(mode_text)?;
        Ok(with_instance(&self.inner, move |mut s| async move {
            let probe = JsChannelProbe::new(&s.ch);
            let job = s.jobs.next(mode, JobKind::Rot { count: n as u64 });
            let (mut choices, mut messages) = (Vec::with_capacity(n), Vec::with_capacity(n));
            let EvaluatorState { ch, peers, session, prg, .. } = &mut s;
            let r = driver::rot_receiver(ch, peers, session, &job, prg, |_, c, m| {
                choices.extend(c.iter().map(|&b| b as u8));
                messages.extend_from_slice(m);
            })
            .await;
            match r {
                Ok(()) => {
                    let obj = Object::new();
                    let _ = Reflect::set(&obj, &"choices".into(), &Uint8Array::from(choices.as_slice()));
                    let _ = Reflect::set(&obj, &"messages".into(), &Uint8Array::from(Block::slice_as_bytes(&messages)));
                    Block::wipe(&mut messages);
                    choices.fill(0);
                    (Some(s), Ok(obj.into()))
                }
                Err(e) => {
                    let err = teleport_error(&e, &probe, &s.peers);
                    (None, Err(err))
                }
            }
        }))
    }
}
