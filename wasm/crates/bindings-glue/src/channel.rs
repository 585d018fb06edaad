//! `Channel` over a JavaScript `Transport` (ts/net/transport.ts): the bridge that lets the Rust
//! protocols run over in-memory, WebSocket or WebRTC transports, encrypted or not.
//!
//! The transport's own typed error (TIMEOUT, PEER_DISCONNECTED, AUTHENTICATION_FAILED, …) is
//! what the application should see when the network fails, so a rejected `send`/`recv` is kept
//! here and rethrown unchanged by [`JsChannel::into_js_error`] instead of being flattened into a
//! string on its way through Rust.

use core::cell::RefCell;
use js_sys::{Promise, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use webmpc_core::channel::{Channel, ChannelError, PartyId};

/// Largest message accepted from JavaScript, checked before it is copied into linear memory: the
/// biggest protocol message (a KOS matrix at the maximum chunk size) is 16 MiB.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

#[wasm_bindgen]
extern "C" {
    /// The `Transport` interface, as far as the protocols need it.
    #[wasm_bindgen(typescript_type = "any")]
    pub type JsTransport;

    #[wasm_bindgen(method, getter)]
    fn party(this: &JsTransport) -> f64;

    #[wasm_bindgen(method, getter)]
    fn parties(this: &JsTransport) -> f64;

    /// `owned`: the message is a fresh buffer nobody else holds, so a transport that moves bytes
    /// to another thread (the engine worker's) may transfer it instead of copying.
    #[wasm_bindgen(method, catch)]
    fn send(this: &JsTransport, to: u32, data: Uint8Array, owned: bool) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn recv(this: &JsTransport, from: u32) -> Result<Promise, JsValue>;
}

/// A [`Channel`] that forwards to a JS transport.
pub struct JsChannel {
    transport: JsTransport,
    party: PartyId,
    parties: usize,
    /// The first error the transport raised, rethrown to JavaScript as is. Shared so that it
    /// survives the channel when a failed setup drops the protocol instance that owned it.
    transport_error: Rc<RefCell<Option<JsValue>>>,
}

impl JsChannel {
    /// Wraps `transport`, checking its `party`/`parties` fields.
    pub fn new(transport: JsTransport) -> Result<JsChannel, String> {
        let (party, parties) = (transport.party(), transport.parties());
        let whole = |x: f64| x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 65536.0;
        if !whole(party) || !whole(parties) || party >= parties {
            return Err("transport must have integer `party` < `parties`".into());
        }
        Ok(JsChannel {
            transport,
            party: party as usize,
            parties: parties as usize,
            transport_error: Rc::new(RefCell::new(None)),
        })
    }

    fn failed(&self, peer: PartyId, err: JsValue) -> ChannelError {
        let mut slot = self.transport_error.borrow_mut();
        if slot.is_none() {
            *slot = Some(err);
        }
        ChannelError::Transport { peer, reason: "the JavaScript transport rejected".into() }
    }

    /// The shared slot holding the transport's error.
    pub fn error_slot(&self) -> Rc<RefCell<Option<JsValue>>> {
        self.transport_error.clone()
    }

    /// The transport's own error, if a failure came from it.
    pub fn take_transport_error(&self) -> Option<JsValue> {
        self.transport_error.borrow_mut().take()
    }
}

impl Channel for JsChannel {
    fn party(&self) -> PartyId {
        self.party
    }

    fn parties(&self) -> usize {
        self.parties
    }

    async fn send(&self, to: PartyId, msg: Vec<u8>) -> Result<(), ChannelError> {
        self.check_peer(to)?;
        // One copy out of linear memory into a JS-owned buffer the transport may keep.
        let data = Uint8Array::from(msg.as_slice());
        let promise = self.transport.send(to as u32, data, true).map_err(|e| self.failed(to, e))?;
        JsFuture::from(promise).await.map_err(|e| self.failed(to, e))?;
        Ok(())
    }

    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        self.check_peer(from)?;
        let promise = self.transport.recv(from as u32).map_err(|e| self.failed(from, e))?;
        let value = JsFuture::from(promise).await.map_err(|e| self.failed(from, e))?;
        let bytes: Uint8Array = value.dyn_into().map_err(|_| ChannelError::Transport {
            peer: from,
            reason: "recv did not resolve to a Uint8Array".into(),
        })?;
        let len = bytes.length() as usize;
        if len > MAX_MESSAGE_BYTES {
            return Err(ChannelError::TooLarge { peer: from, got: len, max: MAX_MESSAGE_BYTES });
        }
        Ok(bytes.to_vec())
    }
}
