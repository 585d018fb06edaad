//! n-party authenticated garbling (malicious, with abort) over a JavaScript transport: one
//! `AuthGcSession` per party, set up once (the preprocessor's setup), then function-independent
//! preprocessing, function-dependent preprocessing of a known circuit, and runs of prepared or
//! streamed circuits. (The all-parties-in-one-instance runner the benchmarks time, `AuthGcRealLocalBench`,
//! is in the never-shipped `webmpc-baseline` module.)
//!
//! **The preprocessor is built in one place**, [`make_preprocessor`] (with its type [`Pre`]): the
//! real F_Pre of WRK17 (`webmpc_authgc::fpre::RealPreprocessor`: base OTs and KOS Δ-OT with every
//! peer at setup; Π_aBit, Π_HaAND, Π_LaAND and bucketing for every batch of triples, the first
//! batch with the Π_aShare global-key check). `AuthGcSession.preprocessor` reports it as `"wrk17"`. The trusted
//! dealer and the deviation hooks of the authgc crate are behind its `ideal` and `testing`
//! features, which this crate does not enable: neither is in the SDK's Wasm.
//!
//! Errors are JS `Error`s: the transport's own error when the network failed; a `CircuitError`
//! for a circuit that does not decode; otherwise `name = "ProtocolError"` with a stable `code`
//! (`CHEATING_DETECTED`, `MALFORMED_MESSAGE`, `PARAMETER_MISMATCH`, `INVALID_ARGUMENT`, `BUSY`,
//! …), and when known `peer` (the party at fault), `phase` (`"setup"`,
//! `"function-independent preprocessing"`, `"function-dependent preprocessing"`, `"online"`) and
//! `check` (which check failed). Never a secret.

use crate::channel::{JsChannel, JsTransport};
use crate::ot::{protocol_error, with_instance, JsChannelProbe, Shared};
use crate::yao::{JsPieces, JsPreparedCircuit};
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use webmpc_authgc::fpre::RealPreprocessor;
use webmpc_authgc::online::{
    client_share_bytes, AuthGcParty, ClientMasks, ClientMessage, GateSource, Options, Outputs, Recipients, Roles, Shape, SharedChannel, CLIENT,
    CLIENT_CHECK_BITS, MAX_PARTIES,
};
use webmpc_authgc::{check_rho, AuthGcError, Phase, DEFAULT_RHO};
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits};
use webmpc_core::channel::{Channel, ChannelError};
use webmpc_ot::{OtError, SessionId};

/// The preprocessor every party uses over a channel of type `C`: the real F_Pre.
pub type Pre<C> = RealPreprocessor<SharedChannel<C>>;

/// What [`AuthGcSession::preprocessor`] reports for [`Pre`].
const PRE_KIND: &str = "wrk17";

/// Builds this party's preprocessor over its channel: the setup phase (base OTs and the KOS Δ-OT
/// instances with every peer, a fresh Δ; the global-key check runs in the first batch). Every party passes the same
/// `session` (fresh per session; the F_Pre instances' ids derive from it) and `rho`.
///
/// The F_Pre holds one clone of the channel per OT instance (two per peer). `SharedChannel` is an
/// `Rc` around one channel, so every clone talks over the same transport; F_Pre never has two
/// sub-protocols in flight with the same peer (see `webmpc_authgc::fpre`), so the clones never
/// race for a peer's next message.
pub async fn make_preprocessor<C: Channel + 'static>(
    ch: SharedChannel<C>,
    session: [u8; 32],
    rho: usize,
) -> Result<Pre<C>, AuthGcError> {
    let sid = SessionId(session).derive(b"webmpc/authgc/fpre");
    RealPreprocessor::setup(ch, &sid, rho).await
}

/// [`make_preprocessor`] for a **parallel instance** `index` (1..) of this party, with the party's
/// global key `delta` (its primary's `deltaForInstances`), over the instance's own channel and
/// session id: see `RealPreprocessor::setup_with_delta` for why sharing Δ is sound and what the
/// primary checks before it takes the material.
pub async fn make_instance_preprocessor<C: Channel + 'static>(
    ch: SharedChannel<C>,
    session: [u8; 32],
    rho: usize,
    delta: webmpc_core::Block,
    index: u8,
) -> Result<Pre<C>, AuthGcError> {
    let sid = SessionId(session).derive(b"webmpc/authgc/fpre");
    RealPreprocessor::setup_with_delta(ch, &sid, rho, delta, index).await
}

type Party = AuthGcParty<Pre<JsChannel>, SharedChannel<JsChannel>>;

/// Polls `F`, clearing the stack region its callees used after every poll: garbling spills
/// labels, keys and tags onto Wasm's shadow stack, which outlives the call.
struct Scrubbed<F>(F);

impl<F: Future> Future for Scrubbed<F> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: structural pinning of the only field; it is never moved out.
        let inner = unsafe { self.map_unchecked_mut(|s| &mut s.0) };
        let out = inner.poll(cx);
        crate::scrub_stack();
        out
    }
}

fn is_transport(e: &AuthGcError) -> bool {
    matches!(
        e,
        AuthGcError::Channel(ChannelError::Transport { .. }) | AuthGcError::Ot(OtError::Channel(ChannelError::Transport { .. }))
    )
}

/// The JS error for `e` (see the module docs), from a call that runs `during` (the phase named
/// when the error does not name one itself).
fn authgc_error(e: &AuthGcError, ch: Option<&JsChannel>, during: Phase) -> JsValue {
    if let AuthGcError::Circuit(c) = e {
        return crate::circuit::circuit_error(c.clone());
    }
    let transport = is_transport(e) && ch.is_some();
    let err = protocol_error(e.to_string(), e.code(), e.peer(), is_transport(e), ch);
    if !transport {
        annotate(&err, e, during);
    }
    err
}

/// Adds `phase` and `check` to a ProtocolError. Only F_Pre runs OT, so an OT failure belongs to
/// the setup (base OTs) or, later, to function-independent preprocessing (Δ-OT extension), even
/// when an interleaved run asked for the triples.
fn annotate(err: &JsValue, e: &AuthGcError, during: Phase) {
    let phase = match e {
        AuthGcError::InvalidArgument(_) => None,
        AuthGcError::Ot(_) if during != Phase::Setup => Some(Phase::Independent),
        _ => Some(e.phase().unwrap_or(during)),
    };
    if let Some(phase) = phase {
        let _ = Reflect::set(err, &"phase".into(), &phase.name().into());
    }
    let check = match e {
        AuthGcError::CheatingDetected { check, .. } | AuthGcError::Ot(OtError::CheatingDetected { check, .. }) => Some(*check),
        AuthGcError::Malformed { what, .. }
        | AuthGcError::ParameterMismatch { what, .. }
        | AuthGcError::Ot(OtError::Malformed { what, .. }) => Some(*what),
        _ => None,
    };
    if let Some(check) = check {
        let _ = Reflect::set(err, &"check".into(), &check.into());
    }
}

fn invalid(msg: impl Into<String>) -> JsValue {
    authgc_error(&AuthGcError::InvalidArgument(msg.into()), None, Phase::Setup)
}

/// The most AND triples (and, separately, masks) one step of [`AuthGcSession::preprocess`] asks
/// F_Pre for. F_Pre's working memory grows with the batch (≈ 700·(n − 1) MB per party for 2^20
/// triples); this keeps it near 200·(n − 1) MB while staying above the 280,000 triples from which
/// the bucket size is 3 rather than 4.
const PREPROCESS_STEP: usize = 300_000;

/// The number of AND gates of `circuit` (a `PreparedCircuit`): what `preprocess` needs per run
/// (with `masks` = AND gates + input bits).
#[wasm_bindgen(js_name = authgcAndGates)]
pub fn authgc_and_gates(circuit: &JsPreparedCircuit) -> f64 {
    circuit.0.circuit().stats().and as f64
}

/// Most bytes of one garbled-table message: well under the channel's message limit
/// ([`crate::channel::MAX_MESSAGE_BYTES`]), since a chunk's table takes 64·n bytes per AND gate.
const MAX_TABLE_BYTES: usize = 48 << 20;

/// The setup options every party must pass alike.
struct SetupOptions {
    run: Options,
    rho: usize,
}

/// Reads the options object `{ chunkGates?, batch?, rho? }` (whole numbers) for `parties`
/// parties: `chunkGates` defaults to 2^16 and may not let a table message exceed
/// [`MAX_TABLE_BYTES`]; `batch` (default 2^16) is at most 2^22; `rho` (the statistical security
/// parameter, default [`DEFAULT_RHO`] = 40) is in 40..=128.
fn options(obj: &JsValue, parties: usize) -> Result<SetupOptions, JsValue> {
    let most_gates = MAX_TABLE_BYTES / (64 * parties.max(1));
    let mut o = Options { chunk_gates: Options::default().chunk_gates.min(most_gates), ..Options::default() };
    let mut rho = DEFAULT_RHO;
    if obj.is_undefined() || obj.is_null() {
        return Ok(SetupOptions { run: o, rho });
    }
    if !obj.is_object() {
        return Err(invalid("options must be an object"));
    }
    let get = |key: &str, least: usize, limit: usize| -> Result<Option<usize>, JsValue> {
        let v = Reflect::get(obj, &key.into()).map_err(|_| invalid("options must be an object"))?;
        if v.is_undefined() {
            return Ok(None);
        }
        let n = v.as_f64().ok_or_else(|| invalid(format!("options.{key} must be a number")))?;
        if !(n.is_finite() && n >= least as f64 && n.fract() == 0.0 && n <= limit as f64) {
            return Err(invalid(format!("options.{key} must be a whole number in {least}..={limit}")));
        }
        Ok(Some(n as usize))
    };
    if let Some(c) = get("chunkGates", 1, most_gates)? {
        o.chunk_gates = c;
    }
    if let Some(b) = get("batch", 1, 1 << 22)? {
        o.batch = b;
    }
    if let Some(r) = get("rho", webmpc_authgc::MIN_RHO, 128)? {
        rho = check_rho(r).map_err(|e| authgc_error(&e, None, Phase::Setup))?;
    }
    Ok(SetupOptions { run: o, rho })
}

fn session_bytes(bytes: &[u8]) -> Result<[u8; 32], JsValue> {
    bytes.try_into().map_err(|_| invalid("the session id must be 32 bytes"))
}

/// The sizes of the client input protocol for a client value of `width` bits
/// (`online::clients`): `{ checkBits, shareBytes, messageBytes }` — the check masks per value, a
/// server's mask shares for it, and the client's message.
#[wasm_bindgen(js_name = authgcClientFormat)]
pub fn authgc_client_format(width: u32) -> JsValue {
    let w = width as usize;
    let obj = Object::new();
    let _ = Reflect::set(&obj, &"checkBits".into(), &(CLIENT_CHECK_BITS as f64).into());
    let _ = Reflect::set(&obj, &"shareBytes".into(), &(client_share_bytes(w) as f64).into());
    let _ = Reflect::set(&obj, &"messageBytes".into(), &(ClientMessage::encoded_len(w) as f64).into());
    obj.into()
}

/// Whether `message` decodes as a client's message for a `width`-bit value (what the run needs):
/// a server checks it on receipt.
#[wasm_bindgen(js_name = authgcClientMessageDecodes)]
pub fn authgc_client_message_decodes(width: u32, message: &[u8]) -> bool {
    ClientMessage::decode(message, width as usize).is_ok()
}

/// A client's message for one client input value of `width` bits (`online::clients`): combines
/// every server's mask shares (`shares`, one `Uint8Array` per server, any order) and masks
/// `value` (big-endian bytes, ceil(width / 8), bit 0 the presence bit) with a fresh challenge
/// from the platform CSPRNG. Returns the encoded message (public: it is sent to every server).
#[wasm_bindgen(js_name = authgcClientMessage)]
pub fn authgc_client_message(width: u32, shares: Array, value: &[u8]) -> Result<Uint8Array, JsValue> {
    let width = width as usize;
    if width == 0 || value.len() != width.div_ceil(8) {
        return Err(invalid(format!("a {width}-bit client value takes {} bytes", width.div_ceil(8))));
    }
    // Big-endian: the first byte holds the top bits; any beyond `width` would be dropped silently.
    if width % 8 != 0 && value[0] >> (width % 8) != 0 {
        return Err(invalid(format!("the client value has more than {width} bits")));
    }
    let mut copies = Vec::with_capacity(shares.length() as usize);
    for v in shares.iter() {
        let bytes: Uint8Array = v.dyn_into().map_err(|_| invalid("each server's shares must be a Uint8Array"))?;
        copies.push(bytes.to_vec());
    }
    let views: Vec<&[u8]> = copies.iter().map(Vec::as_slice).collect();
    let mut bits = bits_from_bytes_be(value, width as u32);
    let r = ClientMasks::combine(width, &views).and_then(|m| m.message(&bits));
    bits.iter_mut().for_each(|b| *b = false);
    for c in copies.iter_mut() {
        c.iter_mut().for_each(|b| *b = 0);
    }
    let m = r.map_err(|e| authgc_error(&e, None, Phase::Online))?;
    Ok(Uint8Array::from(m.encode().as_slice()))
}

/// One party of an authenticated-garbling session.
#[wasm_bindgen(js_name = AuthGcSession)]
pub struct AuthGcSession {
    inner: Shared<Party>,
    party: usize,
    parties: usize,
    rho: usize,
}

/// Sets up this party of an n-party session over `transport` (its `party` and `parties` fields
/// say who and how many): builds the preprocessor (the setup phase). `session` is a 32-byte id
/// all parties share and that differs between sessions; `options` is `{ chunkGates?, batch?,
/// rho? }` (every party must pass the same; `chunkGates` at most 48 MiB / (64·parties), default
/// 2^16 or that bound; `rho` the statistical security parameter, 40..=128, default 40).
/// Resolves to an `AuthGcSession`.
#[wasm_bindgen(js_name = authgcSetup)]
pub fn authgc_setup(transport: JsTransport, session: &[u8], options_obj: JsValue) -> Promise {
    let prepared = (|| -> Result<_, JsValue> {
        let sid = session_bytes(session)?;
        let ch = JsChannel::new(transport).map_err(invalid)?;
        if ch.parties() < 2 || ch.parties() > MAX_PARTIES {
            return Err(invalid(format!("authenticated garbling needs 2 to {MAX_PARTIES} parties")));
        }
        let opts = options(&options_obj, ch.parties())?;
        Ok((sid, opts, ch))
    })();
    let (sid, opts, ch) = match prepared {
        Ok(p) => p,
        Err(e) => return Promise::reject(&e),
    };
    future_to_promise(Scrubbed(async move {
        let probe = JsChannelProbe::new(&ch);
        let (party, parties) = (ch.party(), ch.parties());
        let ch = SharedChannel::new(ch);
        let built = match make_preprocessor(ch.clone(), sid, opts.rho).await {
            Ok(pre) => AuthGcParty::new(pre, ch, sid, opts.run),
            Err(e) => Err(e),
        };
        match built {
            Ok(p) => Ok(AuthGcSession { inner: Rc::new(RefCell::new(Some(p))), party, parties, rho: opts.rho }.into()),
            Err(e) => {
                let err = probe.error_with(e.to_string(), e.code(), e.peer(), is_transport(&e));
                if !is_transport(&e) {
                    annotate(&err, &e, Phase::Setup);
                }
                Err(err)
            }
        }
    }))
}

/// [`authgc_setup`] for a **parallel instance** of a party (in another worker, over a
/// sub-channel): `session` is the instance's own id, `delta` the party's global key (16 bytes,
/// from the primary's `AuthGcSession.deltaForInstances`; secret: the caller wipes its copy),
/// `index` the instance's index (1 to 255, the same at every party). The instance only
/// preprocesses: its `takeMaterial` hands what it made to the primary's `putMaterial`; `prepare`
/// and `run` refuse.
#[wasm_bindgen(js_name = authgcSetupInstance)]
pub fn authgc_setup_instance(transport: JsTransport, session: &[u8], options_obj: JsValue, delta: &[u8], index: u32) -> Promise {
    let prepared = (|| -> Result<_, JsValue> {
        let sid = session_bytes(session)?;
        let key = <[u8; 16]>::try_from(delta).map_err(|_| invalid("delta must be 16 bytes"))?;
        let index = u8::try_from(index).ok().filter(|&i| i >= 1).ok_or_else(|| invalid("index must be a whole number from 1 to 255"))?;
        let ch = JsChannel::new(transport).map_err(invalid)?;
        if ch.parties() < 2 || ch.parties() > MAX_PARTIES {
            return Err(invalid(format!("authenticated garbling needs 2 to {MAX_PARTIES} parties")));
        }
        let opts = options(&options_obj, ch.parties())?;
        Ok((sid, opts, ch, webmpc_core::Block(key), index))
    })();
    let (sid, opts, ch, mut key, index) = match prepared {
        Ok(p) => p,
        Err(e) => return Promise::reject(&e),
    };
    future_to_promise(Scrubbed(async move {
        let probe = JsChannelProbe::new(&ch);
        let (party, parties) = (ch.party(), ch.parties());
        let ch = SharedChannel::new(ch);
        let made = make_instance_preprocessor(ch.clone(), sid, opts.rho, key, index).await;
        webmpc_core::Block::wipe(core::slice::from_mut(&mut key));
        let built = made.and_then(|pre| AuthGcParty::new_instance(pre, ch, sid, opts.run));
        match built {
            Ok(p) => Ok(AuthGcSession { inner: Rc::new(RefCell::new(Some(p))), party, parties, rho: opts.rho }.into()),
            Err(e) => {
                let err = probe.error_with(e.to_string(), e.code(), e.peer(), is_transport(&e));
                if !is_transport(&e) {
                    annotate(&err, &e, Phase::Setup);
                }
                Err(err)
            }
        }
    }))
}

/// Triples (and masks) below which a parallel instance does not get a part: its fixed costs
/// (set-up, the instance key check) would outweigh what it saves.
const MIN_TRIPLES_PER_PART: usize = 1024;
/// Masks below which a mask-only preprocessing is not split.
const MIN_MASKS_PER_PART: usize = 1 << 14;

/// Over how many of `maxParts` parts (the primary and `maxParts − 1` parallel instances) to share
/// out `andGates` AND triples and `masks` masks at statistical parameter `rho`: the most parts for
/// which every part's triples still get the bucket size the whole would (smaller batches need
/// larger buckets, i.e. more leaky triples per triple: splitting must not cost CPU time) and at
/// least [`MIN_TRIPLES_PER_PART`] triples each; without triples, one part per
/// [`MIN_MASKS_PER_PART`] masks. A function of public numbers only, so every party gets the same.
#[wasm_bindgen(js_name = authgcInstanceParts)]
pub fn authgc_instance_parts(and_gates: f64, masks: f64, max_parts: f64, rho: f64) -> Result<u32, JsValue> {
    let limit = 1usize << 30;
    let a = crate::js_size("andGates", and_gates, limit)?;
    let m = crate::js_size("masks", masks, limit)?;
    let max = crate::js_size("maxParts", max_parts, 256)?.max(1);
    let rho = check_rho(crate::js_size("rho", rho, 128)?).map_err(|e| authgc_error(&e, None, Phase::Setup))?;
    Ok(instance_parts(a, m, max, rho) as u32)
}

fn instance_parts(a: usize, m: usize, max: usize, rho: usize) -> usize {
    use webmpc_authgc::fpre::fpre_core::bucket_plan;
    if a == 0 {
        return (m / MIN_MASKS_PER_PART).clamp(1, max);
    }
    let whole = bucket_plan(a.min(PREPROCESS_STEP), rho).bucket;
    (1..=max)
        .rev()
        .find(|&j| {
            let part = a.div_ceil(j);
            j == 1 || (part >= MIN_TRIPLES_PER_PART && bucket_plan(part.min(PREPROCESS_STEP), rho).bucket <= whole)
        })
        .unwrap_or(1)
}

/// Calls `progress(phaseName, done, total)`, ignoring what it throws.
fn reporter(progress: Option<Function>) -> impl FnMut(Phase, u64, u64) {
    move |phase, done, total| {
        if let Some(f) = &progress {
            let _ = f.call3(&JsValue::NULL, &phase.name().into(), &(done as f64).into(), &(total as f64).into());
        }
    }
}

/// Roles from JS: `evaluator`, `owners` (party of each input value) and `outputs` (recipient bit
/// mask of each output value: bit p = party p; 0xffffffff = every party).
fn roles(shape: &Shape, parties: usize, evaluator: u32, owners: &[u32], outputs: &[u32]) -> Result<Roles, JsValue> {
    if owners.len() != shape.inputs.len() || outputs.len() != shape.outputs.len() {
        return Err(invalid("owners/outputs must have one entry per input/output value"));
    }
    let roles = Roles {
        evaluator: evaluator as usize,
        // 0xffffffff: an external client's input (`online::clients`).
        owners: owners.iter().map(|&p| if p == u32::MAX { CLIENT } else { p as usize }).collect(),
        outputs: outputs.iter().map(|&m| if m == u32::MAX { Recipients::ALL } else { Recipients::from_mask(u64::from(m)) }).collect(),
    };
    if roles.evaluator >= parties || roles.owners.iter().any(|&p| p >= parties && p != CLIENT) {
        return Err(invalid("the evaluator and every owner must be a party of the session (or a client)"));
    }
    if roles.outputs.iter().any(|r| r.mask(parties) == 0) {
        return Err(invalid("every output needs a recipient among the parties"));
    }
    Ok(roles)
}

/// This party's input values (big-endian bytes, ceil(width / 8) each, for the inputs it owns
/// in circuit order) as bits.
fn input_bits(shape: &Shape, roles: &Roles, me: usize, inputs: &Array) -> Result<Vec<Vec<bool>>, JsValue> {
    let widths: Vec<u32> = (0..roles.owners.len()).filter(|&i| roles.owners[i] == me).map(|i| shape.inputs[i]).collect();
    if inputs.length() as usize != widths.len() {
        return Err(invalid(format!("{} input values given; this party owns {}", inputs.length(), widths.len())));
    }
    widths
        .iter()
        .enumerate()
        .map(|(k, &w)| {
            let bytes: Uint8Array =
                inputs.get(k as u32).dyn_into().map_err(|_| invalid("each input value must be a Uint8Array"))?;
            if bytes.length() as usize != (w as usize).div_ceil(8) {
                return Err(invalid(format!("input value {} must be {} bytes", k + 1, (w as usize).div_ceil(8))));
            }
            Ok(bits_from_bytes_be(&bytes.to_vec(), w))
        })
        .collect()
}

fn outputs_to_js(out: &Outputs) -> JsValue {
    let arr = Array::new();
    for v in out {
        match v {
            Some(bits) => arr.push(&Uint8Array::from(bytes_be_from_bits(bits).as_slice())),
            None => arr.push(&JsValue::UNDEFINED),
        };
    }
    arr.into()
}

/// Runs `f` on the party taken out of the session, putting it back only on success, with the
/// stack scrubbed after every poll.
fn with_party<F, Fut>(slot: &Shared<Party>, during: Phase, f: F) -> Promise
where
    F: FnOnce(Party) -> Fut + 'static,
    Fut: Future<Output = (Party, Result<JsValue, AuthGcError>)> + 'static,
{
    with_instance(slot, move |p| {
        Scrubbed(async move {
            let (p, r) = f(p).await;
            match r {
                Ok(v) => (Some(p), Ok(v)),
                Err(e) => {
                    let err = authgc_error(&e, Some(p.channel().inner()), during);
                    (None, Err(err))
                }
            }
        })
    })
}

/// A run's checked arguments: the circuit, its shape, the roles and this party's input bits.
type RunArguments = (Rc<webmpc_authgc::online::PreparedCircuit>, Shape, Roles, Vec<Vec<bool>>);

impl AuthGcSession {
    /// What `run` and `runWithClients` check before anything is sent: the circuit, its shape, the
    /// roles and this party's input values as bits.
    fn run_arguments(
        &self,
        circuit: &JsPreparedCircuit,
        evaluator: u32,
        owners: &[u32],
        outputs: &[u32],
        inputs: &Array,
    ) -> Result<RunArguments, JsValue> {
        let prepared = circuit.0.clone();
        let shape = prepared.source().shape().clone();
        let roles = roles(&shape, self.parties, evaluator, owners, outputs)?;
        let values = input_bits(&shape, &roles, self.party, inputs)?;
        Ok((prepared, shape, roles, values))
    }
}

#[wasm_bindgen(js_class = AuthGcSession)]
impl AuthGcSession {
    /// This party's index.
    #[wasm_bindgen(getter)]
    pub fn party(&self) -> u32 {
        self.party as u32
    }

    /// The number of parties.
    #[wasm_bindgen(getter)]
    pub fn parties(&self) -> u32 {
        self.parties as u32
    }

    /// Which preprocessor runs underneath: `"wrk17"`, the real F_Pre of Wang–Ranellucci–Katz
    /// (malicious security with abort).
    #[wasm_bindgen(getter)]
    pub fn preprocessor(&self) -> String {
        PRE_KIND.into()
    }

    /// The statistical security parameter ρ of this session's F_Pre.
    #[wasm_bindgen(getter)]
    pub fn rho(&self) -> u32 {
        self.rho as u32
    }

    /// Pooled material: `{ triples, masks }` (fails with `BUSY` while a call runs).
    pub fn pooled(&self) -> Result<JsValue, JsValue> {
        let slot = self.inner.borrow();
        let p = slot.as_ref().ok_or_else(crate::ot::busy)?;
        let (t, m) = p.pooled();
        let obj = Object::new();
        let _ = Reflect::set(&obj, &"triples".into(), &(t as f64).into());
        let _ = Reflect::set(&obj, &"masks".into(), &(m as f64).into());
        Ok(obj.into())
    }

    /// This party's global key Δ_i (16 bytes), for its own parallel instances
    /// (`authgcSetupInstance`) and nobody else: secret, to be wiped (`fill(0)`) once handed over.
    /// Fails with `BUSY` while a call runs.
    #[wasm_bindgen(js_name = deltaForInstances)]
    pub fn delta_for_instances(&self) -> Result<Uint8Array, JsValue> {
        let slot = self.inner.borrow();
        let p = slot.as_ref().ok_or_else(crate::ot::busy)?;
        let mut key = p.preprocessor().delta_for_instances();
        let out = Uint8Array::from(&key.0[..]);
        webmpc_core::Block::wipe(core::slice::from_mut(&mut key));
        Ok(out)
    }

    /// A parallel instance's hand-over: takes everything its pools hold, with ρ fresh shares made
    /// for the primary's instance key check (an F_Pre batch: every party's instance of this index
    /// calls it at the same point). Resolves to `{ bytes, triples, masks }`; the bytes are secret
    /// (the caller wipes them once the primary has them).
    #[wasm_bindgen(js_name = takeMaterial)]
    pub fn take_material(&self) -> Promise {
        with_party(&self.inner, Phase::Independent, move |mut p| async move {
            let (t, m) = p.pooled();
            let r = p.take_material().await.map(|mut bytes| {
                let obj = Object::new();
                let _ = Reflect::set(&obj, &"bytes".into(), &Uint8Array::from(&bytes[..]));
                bytes.iter_mut().for_each(|b| *b = 0);
                let _ = Reflect::set(&obj, &"triples".into(), &(t as f64).into());
                let _ = Reflect::set(&obj, &"masks".into(), &(m as f64).into());
                JsValue::from(obj)
            });
            (p, r)
        })
    }

    /// The primary's side of the hand-over: `materials[k]` is what instance k + 1 took
    /// (`takeMaterial`'s bytes), appended to the pools in that order after what they hold — every
    /// party passes its instances' material in instance order. Refuses material that does not
    /// decode for this party and key (`INVALID_ARGUMENT`, nothing sent), then runs the instance
    /// key check with every party (a party whose instance used another global key is caught:
    /// `CHEATING_DETECTED`, check `instance global-key consistency check`). Resolves to
    /// `{ triples, masks }` added. The caller wipes its copies of the bytes.
    #[wasm_bindgen(js_name = putMaterial)]
    pub fn put_material(&self, materials: Array) -> Result<Promise, JsValue> {
        let mut copies = Vec::with_capacity(materials.length() as usize);
        for v in materials.iter() {
            let bytes: Uint8Array = v.dyn_into().map_err(|_| invalid("each material must be a Uint8Array"))?;
            copies.push(bytes.to_vec());
        }
        Ok(with_party(&self.inner, Phase::Independent, move |mut p| async move {
            let refs: Vec<&[u8]> = copies.iter().map(Vec::as_slice).collect();
            let r = p.put_material(&refs).await;
            drop(refs);
            for c in copies.iter_mut() {
                c.iter_mut().for_each(|b| *b = 0);
            }
            let r = r.map(|(t, m)| {
                let obj = Object::new();
                let _ = Reflect::set(&obj, &"triples".into(), &(t as f64).into());
                let _ = Reflect::set(&obj, &"masks".into(), &(m as f64).into());
                JsValue::from(obj)
            });
            (p, r)
        }))
    }

    /// Function-independent preprocessing: pools `andGates` AND triples and `masks` random masks
    /// (one per input bit and per AND gate of the circuits to come). Every party must call it
    /// with the same sizes. `progress(phase, done, total)` is optional; it is called after every
    /// step of at most [`PREPROCESS_STEP`] triples and masks (the most F_Pre is asked for at once,
    /// which bounds its working memory).
    pub fn preprocess(&self, and_gates: f64, masks: f64, progress: Option<Function>) -> Result<Promise, JsValue> {
        let limit = 1usize << 30;
        let a = crate::js_size("andGates", and_gates, limit).map_err(|_| invalid(format!("andGates must be a whole number ≤ {limit}")))?;
        let m = crate::js_size("masks", masks, limit).map_err(|_| invalid(format!("masks must be a whole number ≤ {limit}")))?;
        Ok(with_party(&self.inner, Phase::Independent, move |mut p| async move {
            let mut report = reporter(progress);
            let total = (a + m) as u64;
            report(Phase::Independent, 0, total);
            let (mut a_left, mut m_left) = (a, m);
            let mut r = Ok(());
            while r.is_ok() && a_left + m_left > 0 {
                let (sa, sm) = (a_left.min(PREPROCESS_STEP), m_left.min(PREPROCESS_STEP));
                r = p.preprocess(sa, sm, |_, _, _| {}).await;
                (a_left, m_left) = (a_left - sa, m_left - sm);
                if r.is_ok() {
                    report(Phase::Independent, total - (a_left + m_left) as u64, total);
                }
            }
            (p, r.map(|_| JsValue::UNDEFINED))
        }))
    }

    /// Function-dependent preprocessing of `circuit` (a `PreparedCircuit`) for these roles,
    /// before inputs: garbles it and leaves the tables with the evaluator. `owners[i]`: the party
    /// of input value i; `outputs[i]`: the recipient mask of output value i (bit p = party p,
    /// 0xffffffff = all).
    pub fn prepare(
        &self,
        circuit: &JsPreparedCircuit,
        evaluator: u32,
        owners: &[u32],
        outputs: &[u32],
        progress: Option<Function>,
    ) -> Result<Promise, JsValue> {
        let prepared = circuit.0.clone();
        let roles = roles(prepared.source().shape(), self.parties, evaluator, owners, outputs)?;
        Ok(with_party(&self.inner, Phase::Dependent, move |mut p| async move {
            let r = p.prepare(&prepared, &roles, reporter(progress)).await.map(|_| JsValue::UNDEFINED);
            (p, r)
        }))
    }

    /// Reserves the masks of `circuit`'s input wires (and its client values' check masks) for its
    /// next run without garbling it: that run garbles and evaluates chunk by chunk, its tables and
    /// F_Pre's pools bounded by a chunk (for circuits with client inputs too large to `prepare`).
    #[wasm_bindgen(js_name = reserveInputs)]
    pub fn reserve_inputs(&self, circuit: &JsPreparedCircuit, evaluator: u32, owners: &[u32], outputs: &[u32]) -> Result<Promise, JsValue> {
        let prepared = circuit.0.clone();
        let shape = prepared.source().shape().clone();
        let roles = roles(&shape, self.parties, evaluator, owners, outputs)?;
        Ok(with_party(&self.inner, Phase::Dependent, move |mut p| async move {
            let r = p.reserve_inputs(&shape, &roles).await.map(|_| JsValue::UNDEFINED);
            (p, r)
        }))
    }

    /// Runs `circuit` with this party's `inputs` (its input values in circuit order, big-endian
    /// bytes, ceil(width / 8) each). After a matching `prepare` only the online phase runs.
    /// Resolves to one entry per output value: big-endian bytes, or `undefined` when the value
    /// is not revealed to this party.
    pub fn run(
        &self,
        circuit: &JsPreparedCircuit,
        evaluator: u32,
        owners: &[u32],
        outputs: &[u32],
        inputs: Array,
        progress: Option<Function>,
    ) -> Result<Promise, JsValue> {
        let (prepared, _, roles, values) = self.run_arguments(circuit, evaluator, owners, outputs, &inputs)?;
        Ok(with_party(&self.inner, Phase::Online, move |mut p| async move {
            let mut source = prepared.source();
            let r = p.run(&mut source, &roles, &values, reporter(progress)).await.map(|o| outputs_to_js(&o));
            (p, r)
        }))
    }

    /// This party's shares of every client input value's masks in the prepared circuit
    /// (`online::clients`), concatenated in circuit order: `client_share_bytes(width)` bytes per
    /// client value. Secret: each client's part goes to that client alone, over its secure
    /// channel. Fails with `BUSY` while a call runs, `INVALID_ARGUMENT` before `prepare`.
    #[wasm_bindgen(js_name = clientMaskShares)]
    pub fn client_mask_shares(&self, owners: &[u32]) -> Result<Uint8Array, JsValue> {
        let slot = self.inner.borrow();
        let p = slot.as_ref().ok_or_else(crate::ot::busy)?;
        let mut all = Vec::new();
        for (v, _) in owners.iter().enumerate().filter(|(_, &o)| o == u32::MAX) {
            let mut mine = p.client_mask_shares(v).map_err(|e| authgc_error(&e, None, Phase::Dependent))?;
            all.extend_from_slice(&mine);
            mine.iter_mut().for_each(|b| *b = 0);
        }
        let out = Uint8Array::from(all.as_slice());
        all.iter_mut().for_each(|b| *b = 0);
        Ok(out)
    }

    /// [`run`](Self::run) of a prepared circuit with client inputs: `clients` holds, per client
    /// input value in circuit order, a flag byte (1: the client's message follows, of
    /// `ClientMessage::encoded_len(width)` bytes; 0: the client gave none). Resolves to
    /// `{ outputs, refused }`: the outputs as `run` gives them and the positions (among the client
    /// values) of the clients refused.
    #[wasm_bindgen(js_name = runWithClients)]
    #[allow(clippy::too_many_arguments)]
    pub fn run_with_clients(
        &self,
        circuit: &JsPreparedCircuit,
        evaluator: u32,
        owners: &[u32],
        outputs: &[u32],
        inputs: Array,
        clients: &[u8],
        progress: Option<Function>,
    ) -> Result<Promise, JsValue> {
        let (prepared, shape, roles, values) = self.run_arguments(circuit, evaluator, owners, outputs, &inputs)?;
        let widths: Vec<usize> =
            roles.owners.iter().zip(&shape.inputs).filter(|(&o, _)| o == CLIENT).map(|(_, &w)| w as usize).collect();
        let messages = ClientMessage::decode_all(clients, &widths).map_err(|e| authgc_error(&e, None, Phase::Online))?;
        Ok(with_party(&self.inner, Phase::Online, move |mut p| async move {
            let mut source = prepared.source();
            let r = p.run_with_clients(&mut source, &roles, &values, &messages, reporter(progress)).await.map(|(o, refused)| {
                let obj = Object::new();
                let _ = Reflect::set(&obj, &"outputs".into(), &outputs_to_js(&o));
                let list = Array::new();
                for k in refused {
                    list.push(&(k as f64).into());
                }
                let _ = Reflect::set(&obj, &"refused".into(), &list);
                JsValue::from(obj)
            });
            (p, r)
        }))
    }

    /// Like [`run`](Self::run) for a circuit streamed from JavaScript (garbling and evaluation
    /// interleave chunk by chunk, so memory does not grow with the circuit): `prefix` holds the
    /// start of the binary encoding (at least its header), `hash` the content hash every party
    /// agreed on (checked against the streamed bytes before any output), and `pull()` resolves
    /// to the next piece of the encoding, or `null` after the last.
    #[wasm_bindgen(js_name = runStream)]
    #[allow(clippy::too_many_arguments)]
    pub fn run_stream(
        &self,
        prefix: &[u8],
        hash: &[u8],
        pull: Function,
        evaluator: u32,
        owners: &[u32],
        outputs: &[u32],
        inputs: Array,
        progress: Option<Function>,
    ) -> Result<Promise, JsValue> {
        let hash: [u8; 32] = hash.try_into().map_err(|_| invalid("the declared circuit hash must be 32 bytes"))?;
        let mut source =
            webmpc_garble::StreamSource::new(prefix, hash, JsPieces(pull)).map_err(|e| authgc_error(&e.into(), None, Phase::Online))?;
        let shape = source.shape().clone();
        let roles = roles(&shape, self.parties, evaluator, owners, outputs)?;
        let values = input_bits(&shape, &roles, self.party, &inputs)?;
        Ok(with_party(&self.inner, Phase::Online, move |mut p| async move {
            let r = p.run(&mut source, &roles, &values, reporter(progress)).await.map(|o| outputs_to_js(&o));
            (p, r)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::instance_parts;

    #[test]
    fn instance_parts_keep_the_bucket_size_of_the_whole() {
        // AES-128 (6,800 AND gates): B = 4 whole, 3,400 per part at 2 parts (B = 4), 1,700 at 4
        // (B = 5): two parts at most.
        assert_eq!(instance_parts(6_800, 7_056, 4, 40), 2);
        assert_eq!(instance_parts(6_800, 7_056, 2, 40), 2);
        assert_eq!(instance_parts(6_800, 7_056, 1, 40), 1);
        // Past 4·3,100 triples, four parts of B = 4 each.
        assert_eq!(instance_parts(20_000, 0, 4, 40), 4);
        // B = 3 from 280,000 per batch: 600,000 splits in two (batches of 300,000 keep B = 3) but
        // not in four.
        assert_eq!(instance_parts(600_000, 0, 4, 40), 2);
        // Small jobs stay whole; mask-only jobs split by 2^14 masks.
        assert_eq!(instance_parts(300, 300, 4, 40), 1);
        assert_eq!(instance_parts(0, 10_000, 4, 40), 1);
        assert_eq!(instance_parts(0, 40_000, 4, 40), 2);
        assert_eq!(instance_parts(0, 1 << 20, 4, 40), 4);
        // ρ > 40 follows its own bucket plans, the same rule.
        let p = instance_parts(20_000, 0, 4, 64);
        assert!((1..=4).contains(&p));
    }
}
