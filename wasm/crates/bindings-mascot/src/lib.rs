//! The package's MASCOT module, `webmpc_mascot_bg.wasm`, loaded by the SDK on first use of the
//! `mascot` protocol (so apps that never run MASCOT never download it). It links the shared glue
//! (`webmpc-bindings-glue`: stack scrub, zero-on-free allocator, JS channel, program decoding)
//! and nothing of the main module: programs arrive as their encoding and are decoded here.
//! (`mascotRequirements`, which `webmpc/program` calls synchronously, stays in the main module.)
//!
//! MASCOT (arithmetic MPC with malicious security, any n ≥ 2) over a JavaScript transport: one
//! `MascotSession` per party, set up once per session (base OTs and COPE with every peer), then
//! `preprocess` (triples, random bits) and `run` (programs in the `webmpc_spdz::program` format)
//! any number of times; programs with inputs from external clients (`webmpc_spdz::clients`) run
//! through `clientMasks` (hand the client its masks), `runWithClients` and `dropClientMasks`. Errors are `ProtocolError`s with stable codes (`MAC_CHECK_FAILED`,
//! `SACRIFICE_FAILED`, `CHEATING_DETECTED`, `MALFORMED_MESSAGE`, `PARAMETER_MISMATCH`,
//! `MALFORMED_PROGRAM`, `PROGRAM_TOO_LARGE`, `INVALID_ARGUMENT`, `BUSY`, `SESSION_FAILED`, …)
//! and a `peer` when the failed check can name one; a failure of the transport rethrows the
//! transport's own error. Nothing secret is ever in an error.
//!
//! Bench- and test-only MASCOT exports (every party in one instance, the field-multiplication
//! loop, the Rust example programs) live in `webmpc-baseline`, which is never shipped.

use core::cell::RefCell;
use js_sys::{Array, Function, Promise, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use webmpc_bindings_glue::channel::{JsChannel, JsTransport};
use webmpc_bindings_glue::protocol::{busy, channel, session_id, with_instance, JsChannelProbe, Shared};
use webmpc_bindings_glue::spdz::{counts_to_js, decode_program, spdz_error};
use webmpc_bindings_glue::{js_size, scrubbed, spawn_scrubbed, JsResult};
use webmpc_spdz::clients::{decode_client_inputs, ClientInput, MAX_CLIENT_MASKS};
use webmpc_spdz::program::Program;
use webmpc_spdz::{Field, FieldKind, Fp, Gf128, Party, ProgramError, SpdzError};

/// Most triples or bits one `preprocess` call may ask for (memory: ~100 bytes per item).
const MAX_PREPROCESS: usize = 10_000_000;

enum Role {
    Prime(Party<Fp, JsChannel>),
    Binary(Party<Gf128, JsChannel>),
}

impl Role {
    fn channel(&self) -> &JsChannel {
        match self {
            Role::Prime(p) => p.channel(),
            Role::Binary(p) => p.channel(),
        }
    }
}

fn invalid(msg: impl Into<String>) -> JsValue {
    spdz_error(&SpdzError::InvalidArgument(msg.into()), None)
}

fn field_kind(field: &str) -> Result<FieldKind, JsValue> {
    match field {
        "prime" => Ok(FieldKind::Prime),
        "binary" => Ok(FieldKind::Binary),
        _ => Err(invalid("field must be \"prime\" or \"binary\"")),
    }
}

fn inputs_of(bytes: &[u8]) -> Result<Vec<[u8; 16]>, JsValue> {
    if bytes.len() % 16 != 0 {
        return Err(invalid("inputs must be 16 bytes (little-endian) per value"));
    }
    Ok(bytes.chunks_exact(16).map(|c| c.try_into().expect("16 bytes")).collect())
}

fn outputs_to_js(out: &[Option<[u8; 16]>]) -> JsValue {
    let arr = Array::new();
    for v in out {
        match v {
            Some(b) => arr.push(&Uint8Array::from(&b[..])),
            None => arr.push(&JsValue::UNDEFINED),
        };
    }
    arr.into()
}

/// One party of a MASCOT session.
#[wasm_bindgen(js_name = MascotSession)]
pub struct MascotSession {
    inner: Shared<Role>,
    field: FieldKind,
    party: usize,
    parties: usize,
}

/// Sets up this party (`field`: `"prime"` for F_p with p = 2^128 − 173, `"binary"` for
/// GF(2^128)); `session` is the 32-byte id all parties agreed on, fresh per session. Resolves to
/// a `MascotSession` once the base OTs and COPE with every peer are done.
#[wasm_bindgen(js_name = mascotSetup)]
pub fn mascot_setup(transport: JsTransport, field: &str, session: &[u8]) -> Promise {
    setup(transport, field, session, None)
}

/// [`mascot_setup`] for a parallel instance of a party (in another worker, over a sub-channel):
/// `delta` is the party's MAC key share (16 bytes, from `MascotSession.deltaForInstances`), so
/// the instance's triples and bits can join the party's store (`takeMaterial`/`putMaterial`).
#[wasm_bindgen(js_name = mascotSetupInstance)]
pub fn mascot_setup_instance(transport: JsTransport, field: &str, session: &[u8], delta: &[u8]) -> Promise {
    setup(transport, field, session, Some(delta))
}

fn setup(transport: JsTransport, field: &str, session: &[u8], delta: Option<&[u8]>) -> Promise {
    // The MAC key share and the base-OT secrets pass through the stack: scrubbed like every
    // entry point that touches secrets (see webmpc-bindings-glue).
    scrubbed(|| {
        let prepared = (|| -> Result<_, JsValue> {
            let field = field_kind(field)?;
            let delta = match delta {
                None => None,
                Some(d) => Some(<[u8; 16]>::try_from(d).map_err(|_| invalid("delta must be 16 bytes"))?),
            };
            Ok((field, channel(transport)?, session_id(session)?, delta))
        })();
        let (field, ch, sid, delta) = match prepared {
            Ok(p) => p,
            Err(e) => return Promise::reject(&e),
        };
        let (party, parties) = (webmpc_core::channel::Channel::party(&ch), webmpc_core::channel::Channel::parties(&ch));
        spawn_scrubbed(async move {
            let probe = JsChannelProbe::new(&ch);
            let role = match (field, delta) {
                (FieldKind::Prime, None) => Party::<Fp, _>::setup(ch, &sid).await.map(Role::Prime),
                (FieldKind::Binary, None) => Party::<Gf128, _>::setup(ch, &sid).await.map(Role::Binary),
                (FieldKind::Prime, Some(d)) => match Fp::from_bytes(d) {
                    Some(d) => Party::<Fp, _>::setup_with_delta(ch, &sid, d).await.map(Role::Prime),
                    None => Err(SpdzError::InvalidArgument("delta is not a canonical field element".into())),
                },
                (FieldKind::Binary, Some(d)) => match Gf128::from_bytes(d) {
                    Some(d) => Party::<Gf128, _>::setup_with_delta(ch, &sid, d).await.map(Role::Binary),
                    None => Err(SpdzError::InvalidArgument("delta is not a field element".into())),
                },
            };
            match role {
                Ok(r) => Ok(MascotSession { inner: Rc::new(RefCell::new(Some(r))), field, party, parties }.into()),
                Err(e) => Err(probe.error_with(e.to_string(), e.code(), e.peer(), e.is_transport())),
            }
        })
    })
}

fn report(progress: &Option<Function>, phase: &str, done: usize, total: usize) {
    if let Some(f) = progress {
        // A throwing progress callback must not abort the protocol.
        let _ = f.call3(&JsValue::NULL, &phase.into(), &(done as f64).into(), &(total as f64).into());
    }
}

async fn preprocess_role<F: Field>(
    p: &mut Party<F, JsChannel>,
    triples: usize,
    bits: usize,
    progress: &Option<Function>,
) -> Result<(), SpdzError> {
    p.preprocess_triples(triples, |d, t| report(progress, "triples", d, t)).await?;
    p.preprocess_bits(bits, |d, t| report(progress, "bits", d, t)).await
}

async fn run_role<F: Field>(
    p: &mut Party<F, JsChannel>,
    program: &Program,
    inputs: &[[u8; 16]],
    clients: Option<&[ClientInput]>,
    progress: &Option<Function>,
) -> Result<(Vec<Option<[u8; 16]>>, Option<Vec<u32>>), SpdzError> {
    let progress = |d, t| report(progress, "run", d, t);
    match clients {
        None => Ok((p.run(program, inputs, progress).await?, None)),
        Some(c) => {
            let (out, refused) = p.run_with_clients(program, inputs, c, progress).await?;
            Ok((out, Some(refused)))
        }
    }
}

/// A client mask id from JS: a non-negative safe integer.
fn mask_id(first: f64) -> Result<u64, JsValue> {
    if !(first.is_finite() && first >= 0.0 && first.fract() == 0.0 && first <= 9_007_199_254_740_991.0) {
        return Err(invalid("a client mask id must be a non-negative safe integer"));
    }
    Ok(first as u64)
}

/// What a failed call leaves: a refusal before any traffic (a program, inputs or client inputs
/// that do not fit) leaves the party usable, so it goes back. An InvalidArgument raised mid-run
/// (preprocessing exhausted) has poisoned the party: it goes back too, and every later call on it
/// fails with SESSION_FAILED. Anything else ends the session.
fn failed(role: Role, e: SpdzError) -> (Option<Role>, Result<JsValue, JsValue>) {
    match e {
        e @ (SpdzError::InvalidArgument(_) | SpdzError::Program(_)) => (Some(role), Err(spdz_error(&e, None))),
        e => {
            let err = spdz_error(&e, Some(role.channel()));
            (None, Err(err))
        }
    }
}

#[wasm_bindgen(js_class = MascotSession)]
impl MascotSession {
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

    /// `"prime"` or `"binary"`.
    #[wasm_bindgen(getter)]
    pub fn field(&self) -> String {
        match self.field {
            FieldKind::Prime => "prime".into(),
            FieldKind::Binary => "binary".into(),
        }
    }

    /// What the store holds now (`{ triples, bits, masks }`), or `undefined` while a call runs.
    #[wasm_bindgen(getter)]
    pub fn stored(&self) -> JsValue {
        match &*self.inner.borrow() {
            Some(Role::Prime(p)) => counts_to_js(&p.store().counts()),
            Some(Role::Binary(p)) => counts_to_js(&p.store().counts()),
            None => JsValue::UNDEFINED,
        }
    }

    /// Triples per preprocessing batch (all parties must use the same; default 1024).
    #[wasm_bindgen(js_name = setBatch)]
    pub fn set_batch(&self, batch: f64) -> JsResult<()> {
        let b = js_size("batch", batch, webmpc_spdz::party::MAX_BATCH)?;
        let r = match self.inner.borrow_mut().as_mut() {
            Some(Role::Prime(p)) => p.set_batch(b),
            Some(Role::Binary(p)) => p.set_batch(b),
            None => return Err(busy()),
        };
        r.map_err(|e| spdz_error(&e, None))
    }

    /// This party's MAC key share (16 bytes), for its own parallel instances
    /// (`mascotSetupInstance`) and nobody else: secret, to be wiped (`fill(0)`) once handed over.
    #[wasm_bindgen(js_name = deltaForInstances)]
    pub fn delta_for_instances(&self) -> JsResult<Uint8Array> {
        let bytes = match self.inner.borrow().as_ref() {
            Some(Role::Prime(p)) => p.delta_for_instances().to_bytes(),
            Some(Role::Binary(p)) => p.delta_for_instances().to_bytes(),
            None => return Err(busy()),
        };
        let out = Uint8Array::from(&bytes[..]);
        let mut bytes = bytes;
        webmpc_spdz::wipe::wipe(&mut bytes);
        Ok(out)
    }

    /// Takes every triple and random bit out of the store, as `{ bytes, triples, bits }`, to move
    /// them into another instance of this party (`putMaterial`). Secret: wipe the bytes once
    /// handed over.
    #[wasm_bindgen(js_name = takeMaterial)]
    pub fn take_material(&self) -> JsResult<JsValue> {
        let (bytes, t, b) = match self.inner.borrow_mut().as_mut() {
            Some(Role::Prime(p)) => p.take_material(),
            Some(Role::Binary(p)) => p.take_material(),
            None => return Err(busy()),
        };
        let obj = js_sys::Object::new();
        let mut bytes = bytes;
        let _ = js_sys::Reflect::set(&obj, &"bytes".into(), &Uint8Array::from(&bytes[..]));
        webmpc_spdz::wipe::wipe(&mut bytes);
        let _ = js_sys::Reflect::set(&obj, &"triples".into(), &(t as f64).into());
        let _ = js_sys::Reflect::set(&obj, &"bits".into(), &(b as f64).into());
        Ok(obj.into())
    }

    /// Appends material another instance of this party took (`takeMaterial`): `triples` triples
    /// then `bits` bits. Every party appends its instances' material in the same order.
    #[wasm_bindgen(js_name = putMaterial)]
    pub fn put_material(&self, bytes: &[u8], triples: f64, bits: f64) -> JsResult<()> {
        let t = js_size("triples", triples, MAX_PREPROCESS)?;
        let b = js_size("bits", bits, MAX_PREPROCESS)?;
        let r = match self.inner.borrow_mut().as_mut() {
            Some(Role::Prime(p)) => p.put_material(bytes, t, b),
            Some(Role::Binary(p)) => p.put_material(bytes, t, b),
            None => return Err(busy()),
        };
        r.map_err(|e| spdz_error(&e, None))
    }

    /// Generates `triples` triples and `bits` random bits into the store (all parties must ask
    /// for the same). `progress(phase, done, total)` with phase `"triples"` or `"bits"`.
    pub fn preprocess(&self, triples: f64, bits: f64, progress: Option<Function>) -> JsResult<Promise> {
        let t = js_size("triples", triples, MAX_PREPROCESS)?;
        let b = js_size("bits", bits, MAX_PREPROCESS)?;
        Ok(with_instance(&self.inner, move |mut role| async move {
            let r = match &mut role {
                Role::Prime(p) => preprocess_role(p, t, b, &progress).await,
                Role::Binary(p) => preprocess_role(p, t, b, &progress).await,
            };
            match r {
                Ok(()) => (Some(role), Ok(JsValue::UNDEFINED)),
                Err(e) => {
                    let err = spdz_error(&e, Some(role.channel()));
                    (None, Err(err))
                }
            }
        }))
    }

    /// Runs a program (the `webmpc_spdz::program` encoding; every party passes the same bytes)
    /// with this party's inputs: 16 little-endian bytes per input it owns, in program order
    /// (field elements canonical; unsigned integers as is; signed integers in two's complement).
    /// Preprocessing the program needs beyond the store is generated first.
    /// `progress("run", done, total)` counts instructions. Resolves to one entry per output: a
    /// 16-byte `Uint8Array` if this party learns it, else `undefined`.
    pub fn run(&self, program: &[u8], inputs: &[u8], progress: Option<Function>) -> JsResult<Promise> {
        self.run_program(program, inputs, None, progress)
    }

    /// `run` for a program with inputs from external clients (owner `CLIENT_OWNER`).
    /// `clients` is, for each client-owned input in program order, the id of the first client
    /// mask it used (u64 little-endian, 8 bytes), the id of the client it belongs to (u32
    /// little-endian, 4 bytes; several inputs may share one) and the client's masked values (16
    /// bytes per mask: one for a field input, k for a k-bit integer input; as
    /// `clientMaskedInputs` returned them). Every server passes the same bytes; the masks must
    /// be held (from `clientMasks`, not used or dropped), and the run consumes them. Servers
    /// given different client inputs fail with `PARAMETER_MISMATCH` before anything is consumed.
    /// Resolves to `{ outputs, refused }`: `outputs` as for `run`, `refused` the ids of the
    /// clients refused because an integer input of theirs was out of range (ascending, unique;
    /// the same at every server): all their inputs counted as 0.
    #[wasm_bindgen(js_name = runWithClients)]
    pub fn run_with_clients(
        &self,
        program: &[u8],
        inputs: &[u8],
        clients: &[u8],
        progress: Option<Function>,
    ) -> JsResult<Promise> {
        self.run_program(program, inputs, Some(clients), progress)
    }

    fn run_program(
        &self,
        program: &[u8],
        inputs: &[u8],
        clients: Option<&[u8]>,
        progress: Option<Function>,
    ) -> JsResult<Promise> {
        let program = decode_program(program)?;
        if program.field != self.field {
            return Err(spdz_error(&ProgramError::Mismatch("program is for the other field".into()).into(), None));
        }
        let inputs = inputs_of(inputs)?;
        let clients = match clients {
            None => None,
            Some(c) => Some(decode_client_inputs(&program, c).map_err(|e| spdz_error(&e, None))?),
        };
        Ok(with_instance(&self.inner, move |mut role| async move {
            let c = clients.as_deref();
            let r = match &mut role {
                Role::Prime(p) => run_role(p, &program, &inputs, c, &progress).await,
                Role::Binary(p) => run_role(p, &program, &inputs, c, &progress).await,
            };
            match r {
                Ok((out, None)) => (Some(role), Ok(outputs_to_js(&out))),
                Ok((out, Some(refused))) => {
                    let obj = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&obj, &"outputs".into(), &outputs_to_js(&out));
                    let ids: Array = refused.iter().map(|c| JsValue::from(*c as f64)).collect();
                    let _ = js_sys::Reflect::set(&obj, &"refused".into(), &ids);
                    (Some(role), Ok(obj.into()))
                }
                Err(e) => failed(role, e),
            }
        }))
    }

    /// Hands out `count` client masks (at most 2^20 held at once): resolves to
    /// `{ first: number, shares: Uint8Array }`, the id of the first mask and this server's shares
    /// for the client (48 bytes per mask). Every server calls it with the same counts in the same
    /// order (so ids agree); triples the store lacks are generated first (every server together).
    /// `shares` is secret: send it to the client only, over a private channel, then wipe it
    /// (`fill(0)`).
    #[wasm_bindgen(js_name = clientMasks)]
    pub fn client_masks(&self, count: f64) -> JsResult<Promise> {
        let count = js_size("count", count, MAX_CLIENT_MASKS)?;
        Ok(with_instance(&self.inner, move |mut role| async move {
            let r = match &mut role {
                Role::Prime(p) => p.client_masks(count).await,
                Role::Binary(p) => p.client_masks(count).await,
            };
            match r {
                Ok((first, mut shares)) => {
                    let obj = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&obj, &"first".into(), &(first as f64).into());
                    let _ = js_sys::Reflect::set(&obj, &"shares".into(), &Uint8Array::from(&shares[..]));
                    webmpc_spdz::wipe::wipe(&mut shares);
                    (Some(role), Ok(obj.into()))
                }
                Err(e) => failed(role, e),
            }
        }))
    }

    /// Forgets the held client masks with ids `first .. first + count` (a client that went
    /// away): they can never be used. Ids not held are ignored. Every server drops the same.
    #[wasm_bindgen(js_name = dropClientMasks)]
    pub fn drop_client_masks(&self, first: f64, count: f64) -> JsResult<()> {
        let first = mask_id(first)?;
        let count = js_size("count", count, usize::MAX)?;
        match self.inner.borrow_mut().as_mut() {
            Some(Role::Prime(p)) => p.drop_client_masks(first, count),
            Some(Role::Binary(p)) => p.drop_client_masks(first, count),
            None => return Err(busy()),
        }
        Ok(())
    }
}
