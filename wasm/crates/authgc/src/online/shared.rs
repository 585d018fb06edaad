//! A cloneable handle on one [`Channel`], so that the preprocessor and the garbling protocol of
//! one party can each own a handle on the same connection (they never use it at the same time:
//! the protocol calls into the preprocessor and waits for it).

use core::future::Future;
use std::rc::Rc;
use webmpc_core::channel::{Channel, ChannelError, PartyId};

/// A shared, single-threaded handle on a channel: clones talk over the same connection.
pub struct SharedChannel<C>(Rc<C>);

impl<C> SharedChannel<C> {
    /// Wraps `ch`.
    pub fn new(ch: C) -> Self {
        SharedChannel(Rc::new(ch))
    }

    /// The channel underneath.
    pub fn inner(&self) -> &C {
        &self.0
    }
}

impl<C> Clone for SharedChannel<C> {
    fn clone(&self) -> Self {
        SharedChannel(self.0.clone())
    }
}

impl<C: Channel> Channel for SharedChannel<C> {
    fn party(&self) -> PartyId {
        self.0.party()
    }

    fn parties(&self) -> usize {
        self.0.parties()
    }

    fn send(&self, to: PartyId, msg: Vec<u8>) -> impl Future<Output = Result<(), ChannelError>> {
        self.0.send(to, msg)
    }

    fn recv(&self, from: PartyId) -> impl Future<Output = Result<Vec<u8>, ChannelError>> {
        self.0.recv(from)
    }
}
