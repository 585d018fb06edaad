//! Protocol-level helpers every module's bindings share: the JS error shapes (`ProtocolError`,
//! `OtError` codes, `CircuitError`), the channel constructor, and the `BUSY`-guarded instance slot
//! that each protocol class keeps its Rust state in.

use crate::channel::{JsChannel, JsTransport};
use crate::{scrubbed, spawn_scrubbed};
use core::cell::RefCell;
use js_sys::{Promise, Reflect};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use webmpc_circuit::CircuitError;
use webmpc_ot::{OtError, SessionId};

/// Builds the JS error for an OT failure: the transport's own error when the network failed,
/// else an `Error` named `OtError` with a stable `code` (mapped to typed classes by the SDK).
pub fn ot_error(e: OtError, ch: Option<&JsChannel>) -> JsValue {
    // A kernel's refusal (a count memory cannot hold, no CSPRNG) keeps its own class and code.
    if let OtError::Kernel(k) = e {
        return crate::js_error(k);
    }
    protocol_error(
        e.to_string(),
        e.code(),
        peer_of(&e),
        matches!(e, OtError::Channel(webmpc_core::channel::ChannelError::Transport { .. })),
        ch,
    )
}

pub fn peer_of(e: &OtError) -> Option<usize> {
    match e {
        OtError::CheatingDetected { peer, .. } | OtError::Malformed { peer, .. } => Some(*peer),
        _ => None,
    }
}

/// The JS error for a protocol failure: the transport's own error when the network failed
/// (`transport_failed`), else an `Error` named `ProtocolError` with a stable `code` and, when
/// known, the `peer` at fault.
pub fn protocol_error(
    message: String,
    code: &str,
    peer: Option<usize>,
    transport_failed: bool,
    ch: Option<&JsChannel>,
) -> JsValue {
    if let (true, Some(ch)) = (transport_failed, ch) {
        if let Some(original) = ch.take_transport_error() {
            return original;
        }
    }
    let err = js_sys::Error::new(&message);
    err.set_name("ProtocolError");
    let _ = Reflect::set(&err, &"code".into(), &code.into());
    if let Some(peer) = peer {
        let _ = Reflect::set(&err, &"peer".into(), &(peer as u32).into());
    }
    err.into()
}

pub fn busy() -> JsValue {
    let err = js_sys::Error::new("this OT instance is busy with another call or failed earlier");
    err.set_name("ProtocolError");
    let _ = Reflect::set(&err, &"code".into(), &"BUSY".into());
    err.into()
}

pub fn session_id(bytes: &[u8]) -> Result<SessionId, JsValue> {
    let id: [u8; 32] =
        bytes.try_into().map_err(|_| ot_error(OtError::InvalidArgument("session id must be 32 bytes".into()), None))?;
    Ok(SessionId(id))
}

pub fn channel(transport: JsTransport) -> Result<JsChannel, JsValue> {
    JsChannel::new(transport).map_err(|m| ot_error(OtError::InvalidArgument(m), None))
}

pub type Shared<T> = Rc<RefCell<Option<T>>>;

/// Runs `f` on the instance taken out of `slot`, putting it back only on success. The instance
/// (Δ, PRG states) passes through the stack on its way into the future: the scrub clears it.
pub fn with_instance<T: 'static, F, Fut>(slot: &Shared<T>, f: F) -> Promise
where
    F: FnOnce(T) -> Fut + 'static,
    Fut: core::future::Future<Output = (Option<T>, Result<JsValue, JsValue>)> + 'static,
{
    scrubbed(|| {
        let slot = slot.clone();
        let Some(instance) = slot.borrow_mut().take() else {
            return Promise::reject(&busy());
        };
        spawn_scrubbed(async move {
            let (back, result) = f(instance).await;
            *slot.borrow_mut() = back;
            result
        })
    })
}

/// Keeps access to a channel's stored transport error after the channel moved into a protocol
/// instance that was then dropped by a failed setup.
pub struct JsChannelProbe(Rc<RefCell<Option<JsValue>>>);

impl JsChannelProbe {
    pub fn new(ch: &JsChannel) -> Self {
        JsChannelProbe(ch.error_slot())
    }

    pub fn error(&self, e: OtError) -> JsValue {
        self.error_with(
            e.to_string(),
            e.code(),
            peer_of(&e),
            matches!(e, OtError::Channel(webmpc_core::channel::ChannelError::Transport { .. })),
        )
    }

    /// The transport's own error if the failure came from it, else a `ProtocolError`.
    pub fn error_with(&self, message: String, code: &str, peer: Option<usize>, transport_failed: bool) -> JsValue {
        if transport_failed {
            if let Some(original) = self.0.borrow_mut().take() {
                return original;
            }
        }
        protocol_error(message, code, peer, false, None)
    }
}

pub fn circuit_error(e: CircuitError) -> JsValue {
    js_circuit_error(&e.to_string(), e.code(), e.line().map(|l| l as f64), e.offset().map(|o| o as f64))
}

pub fn js_circuit_error(message: &str, code: &str, line: Option<f64>, offset: Option<f64>) -> JsValue {
    let err = js_sys::Error::new(message);
    err.set_name("CircuitError");
    let _ = Reflect::set(&err, &"code".into(), &code.into());
    if let Some(line) = line {
        let _ = Reflect::set(&err, &"line".into(), &line.into());
    }
    if let Some(offset) = offset {
        let _ = Reflect::set(&err, &"offset".into(), &offset.into());
    }
    err.into()
}
