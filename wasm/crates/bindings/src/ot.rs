//! OT between two parties over a JavaScript transport: thin classes over `webmpc_ot`'s KOS.
//!
//! **Security** (see `webmpc_ot::kos`): malicious security with abort against either party. A
//! cheating receiver can guess bits of Δ at the price of being caught with probability ½ per
//! guess, so a Δ must never be used again once an instance holding it aborted. Δ is random
//! unless the caller passes one; a caller-chosen Δ serves Δ-OT only, unless `otSenderSetup` is
//! called with the explicit opt-in for hashed outputs.
//!
//! Each class owns its protocol instance behind an `Rc<RefCell<Option<…>>>`: a call takes the
//! instance out for its duration (the returned Promise must own everything it uses), so a second
//! call while one is running gets a typed `BUSY` error instead of a RefCell panic, and an
//! instance whose call failed is not put back (it is poisoned anyway). Every entry point runs
//! inside the stack scrub and its future through [`spawn_scrubbed`](crate::spawn_scrubbed).

use crate::channel::{JsChannel, JsTransport};
use crate::{js_size, scrubbed, spawn_scrubbed, JsResult};
// Shared with the other modules (webmpc-bindings-glue); re-exported under their old paths.
use core::cell::RefCell;
use js_sys::{Object, Promise, Reflect, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
pub(crate) use webmpc_bindings_glue::protocol::{
    busy, channel, ot_error, protocol_error, session_id, with_instance, JsChannelProbe, Shared,
};
use webmpc_core::error::one_block;
use webmpc_core::Block;
use webmpc_ot::{
    CotReceiver, CotSender, KosReceiver, KosSender, OtError, OtReceiver, OtSender, RotReceiver, RotSender,
};

/// Most OTs per call; larger runs call repeatedly (memory stays bounded by the call).
const MAX_OTS_PER_CALL: usize = 1 << 24;

fn bits(choices: &[u8]) -> Result<Vec<bool>, JsValue> {
    if choices.len() > MAX_OTS_PER_CALL {
        return Err(ot_error(OtError::InvalidArgument(format!("at most {MAX_OTS_PER_CALL} OTs per call")), None));
    }
    choices
        .iter()
        .map(|&c| match c {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(ot_error(OtError::InvalidArgument("choice bytes must be 0 or 1".into()), None)),
        })
        .collect()
}

fn blocks(what: &'static str, bytes: &[u8], per_ot: usize) -> Result<Vec<Block>, JsValue> {
    let b = webmpc_core::error::blocks_of(what, bytes).map_err(crate::js_error)?;
    if b.len() % per_ot != 0 || b.len() / per_ot > MAX_OTS_PER_CALL {
        return Err(ot_error(OtError::InvalidArgument(format!("{what}: wrong length")), None));
    }
    Ok(b.to_vec())
}

fn to_js(blocks: &[Block]) -> JsValue {
    Uint8Array::from(Block::slice_as_bytes(blocks)).into()
}

/// The sender of a KOS OT extension with one peer.
#[wasm_bindgen(js_name = OtSenderSession)]
pub struct OtSenderSession {
    inner: Shared<KosSender<JsChannel>>,
    /// A copy of Δ, so the getter works while a call holds the instance (zeroed on free).
    delta: Block,
}

/// Sets up the sender side (base OTs with `peer`). `delta`: empty for a random Δ (every OT kind
/// available), or the caller's 16-byte Δ, nonzero, which serves Δ-OT only unless
/// `allowHashedWithChosenDelta` is true: the explicit opt-in for random, correlated and
/// chosen-message OT on a caller-chosen Δ, by which the caller vouches that Δ is random, secret
/// and never used again after any instance holding it aborted.
#[wasm_bindgen(js_name = otSenderSetup)]
pub fn ot_sender_setup(
    transport: JsTransport,
    peer: u32,
    session: &[u8],
    delta: &[u8],
    allow_hashed_with_chosen_delta: bool,
) -> Promise {
    scrubbed(|| {
        let prepared = (|| -> Result<_, JsValue> {
            let sid = session_id(session)?;
            let chosen =
                if delta.is_empty() { None } else { Some(one_block("delta", delta).map_err(crate::js_error)?) };
            Ok((channel(transport)?, sid, chosen))
        })();
        let (ch, sid, chosen) = match prepared {
            Ok(p) => p,
            Err(e) => return Promise::reject(&e),
        };
        spawn_scrubbed(async move {
            let probe = JsChannelProbe::new(&ch);
            let peer = peer as usize;
            let setup = match chosen {
                None => KosSender::setup_random(ch, peer, &sid).await,
                Some(d) if allow_hashed_with_chosen_delta => {
                    KosSender::setup_hashed_with_delta(ch, peer, &sid, d).await
                }
                Some(d) => KosSender::setup(ch, peer, &sid, d).await,
            };
            match setup {
                Ok(s) => {
                    let delta = s.delta();
                    Ok(OtSenderSession { inner: Rc::new(RefCell::new(Some(s))), delta }.into())
                }
                Err(e) => Err(probe.error(e)),
            }
        })
    })
}

#[wasm_bindgen(js_class = OtSenderSession)]
impl OtSenderSession {
    /// Δ (16 bytes): the global correlation of Δ-OT, the sender's own secret.
    pub fn delta(&self) -> Vec<u8> {
        scrubbed(|| self.delta.0.to_vec())
    }

    /// `n` random OTs: resolves to 32·n bytes, `m0_j ‖ m1_j` per OT.
    #[wasm_bindgen(js_name = sendRandom)]
    pub fn send_random(&self, n: f64) -> JsResult<Promise> {
        let n = js_size("OT count", n, MAX_OTS_PER_CALL)?;
        // The trait methods reserve their outputs fallibly: a count memory cannot hold is a typed
        // TOO_LARGE error, not a trap.
        Ok(with_instance(&self.inner, move |mut s| async move {
            let r = s.send_random(n).await;
            finish(s, r.map(|pairs| to_js(pairs.as_flattened())))
        }))
    }

    /// `n` Δ-OTs: resolves to the keys `K_j` (16·n bytes).
    #[wasm_bindgen(js_name = sendCot)]
    pub fn send_cot(&self, n: f64) -> JsResult<Promise> {
        let n = js_size("OT count", n, MAX_OTS_PER_CALL)?;
        Ok(with_instance(&self.inner, move |mut s| async move {
            let r = s.send_cot(n).await;
            finish(s, r.map(|k| to_js(&k)))
        }))
    }

    /// Chosen-message OT: `messages` is `m0_j ‖ m1_j` per OT (32·n bytes).
    #[wasm_bindgen(js_name = sendChosen)]
    pub fn send_chosen(&self, messages: &[u8]) -> JsResult<Promise> {
        scrubbed(|| {
            let flat = blocks("messages", messages, 2)?;
            Ok(with_instance(&self.inner, move |mut s| async move {
                let pairs: Vec<[Block; 2]> = flat.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
                let r = s.send_chosen(&pairs).await;
                finish(s, r.map(|_| JsValue::UNDEFINED))
            }))
        })
    }

    /// Correlated OT: resolves to random `m0_j`; the receiver gets `m0_j ⊕ b_j·correlations_j`.
    #[wasm_bindgen(js_name = sendCorrelated)]
    pub fn send_correlated(&self, correlations: &[u8]) -> JsResult<Promise> {
        scrubbed(|| {
            let x = blocks("correlations", correlations, 1)?;
            Ok(with_instance(&self.inner, move |mut s| async move {
                let r = s.send_correlated(&x).await;
                finish(s, r.map(|m| to_js(&m)))
            }))
        })
    }
}

/// Converts a call's outcome, putting the instance back only on success.
fn finish<C: HasChannel>(instance: C, r: Result<JsValue, OtError>) -> (Option<C>, Result<JsValue, JsValue>) {
    match r {
        Ok(v) => (Some(instance), Ok(v)),
        Err(e) => {
            let err = ot_error(e, Some(instance.js_channel()));
            (None, Err(err))
        }
    }
}

trait HasChannel {
    fn js_channel(&self) -> &JsChannel;
}

impl HasChannel for KosSender<JsChannel> {
    fn js_channel(&self) -> &JsChannel {
        self.channel()
    }
}

impl HasChannel for KosReceiver<JsChannel> {
    fn js_channel(&self) -> &JsChannel {
        self.channel()
    }
}

/// The receiver of a KOS OT extension with one peer.
#[wasm_bindgen(js_name = OtReceiverSession)]
pub struct OtReceiverSession {
    inner: Shared<KosReceiver<JsChannel>>,
}

/// Sets up the receiver side (base OTs with `peer`).
#[wasm_bindgen(js_name = otReceiverSetup)]
pub fn ot_receiver_setup(transport: JsTransport, peer: u32, session: &[u8]) -> Promise {
    scrubbed(|| {
        let prepared = (|| -> Result<_, JsValue> { Ok((channel(transport)?, session_id(session)?)) })();
        let (ch, sid) = match prepared {
            Ok(p) => p,
            Err(e) => return Promise::reject(&e),
        };
        spawn_scrubbed(async move {
            let probe = JsChannelProbe::new(&ch);
            match KosReceiver::setup(ch, peer as usize, &sid).await {
                Ok(r) => Ok(OtReceiverSession { inner: Rc::new(RefCell::new(Some(r))) }.into()),
                Err(e) => Err(probe.error(e)),
            }
        })
    })
}

fn choices_and_messages(choices: &[bool], messages: &[Block]) -> JsValue {
    let obj = Object::new();
    let c: Vec<u8> = choices.iter().map(|&b| b as u8).collect();
    let _ = Reflect::set(&obj, &"choices".into(), &Uint8Array::from(c.as_slice()));
    let _ = Reflect::set(&obj, &"messages".into(), &to_js(messages));
    obj.into()
}

#[wasm_bindgen(js_class = OtReceiverSession)]
impl OtReceiverSession {
    /// `n` random OTs: resolves to `{ choices: Uint8Array(n) of 0/1, messages: 16·n bytes }`.
    #[wasm_bindgen(js_name = receiveRandom)]
    pub fn receive_random(&self, n: f64) -> JsResult<Promise> {
        let n = js_size("OT count", n, MAX_OTS_PER_CALL)?;
        Ok(with_instance(&self.inner, move |mut r| async move {
            let res = r.receive_random(n).await;
            finish(r, res.map(|(bits, out)| choices_and_messages(&bits, &out)))
        }))
    }

    /// Δ-OTs for `choices` (one byte 0/1 per OT): resolves to `M_j = K_j ⊕ b_j·Δ`.
    #[wasm_bindgen(js_name = receiveCot)]
    pub fn receive_cot(&self, choices: &[u8]) -> JsResult<Promise> {
        scrubbed(|| {
            let c = bits(choices)?;
            Ok(with_instance(&self.inner, move |mut r| async move {
                let res = r.receive_cot(&c).await;
                finish(r, res.map(|m| to_js(&m)))
            }))
        })
    }

    /// Chosen-message OT: resolves to `m_{b_j}` per OT.
    #[wasm_bindgen(js_name = receiveChosen)]
    pub fn receive_chosen(&self, choices: &[u8]) -> JsResult<Promise> {
        scrubbed(|| {
            let c = bits(choices)?;
            Ok(with_instance(&self.inner, move |mut r| async move {
                let res = r.receive_chosen(&c).await;
                finish(r, res.map(|m| to_js(&m)))
            }))
        })
    }

    /// Correlated OT: resolves to `m0_j ⊕ b_j·x_j` per OT.
    #[wasm_bindgen(js_name = receiveCorrelated)]
    pub fn receive_correlated(&self, choices: &[u8]) -> JsResult<Promise> {
        scrubbed(|| {
            let c = bits(choices)?;
            Ok(with_instance(&self.inner, move |mut r| async move {
                let res = r.receive_correlated(&c).await;
                finish(r, res.map(|m| to_js(&m)))
            }))
        })
    }
}
