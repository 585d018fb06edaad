//! The channel F_Pre talks through: the caller's channel plus the protocol step in progress, so
//! that bytes can be accounted per step (bytes per AND triple is a headline figure) and — in test
//! builds (feature `testing`) — so a deliberately deviating party can edit exactly the message of a
//! given step, whoever builds it (the OT extension, `net`'s helpers or this module).
//!
//! Every clone shares the same state: the OT-extension instances hold clones, and their traffic is
//! accounted to the step the driver is in.

use super::Step;
use core::cell::{Cell, RefCell};
use std::rc::Rc;
use webmpc_core::channel::{Channel, ChannelError, PartyId};

#[cfg(feature = "testing")]
use super::Deviation;

struct TapState {
    step: Cell<Step>,
    /// Bytes sent, per step (indexed by `Step as usize`).
    bytes: RefCell<[u64; Step::COUNT]>,
    /// The deviation this party applies (tests only).
    #[cfg(feature = "testing")]
    deviation: RefCell<Option<Deviation>>,
    /// Messages sent to each peer since the current step began (tests only).
    #[cfg(feature = "testing")]
    sent_in_step: RefCell<Vec<usize>>,
}

/// A channel that knows which step of F_Pre is running.
pub(crate) struct Tap<C> {
    inner: C,
    state: Rc<TapState>,
}

impl<C: Clone> Clone for Tap<C> {
    fn clone(&self) -> Self {
        Tap { inner: self.inner.clone(), state: Rc::clone(&self.state) }
    }
}

impl<C: Channel> Tap<C> {
    pub(crate) fn new(inner: C) -> Self {
        #[cfg(feature = "testing")]
        let parties = inner.parties();
        Tap {
            inner,
            state: Rc::new(TapState {
                step: Cell::new(Step::Idle),
                bytes: RefCell::new([0; Step::COUNT]),
                #[cfg(feature = "testing")]
                deviation: RefCell::new(None),
                #[cfg(feature = "testing")]
                sent_in_step: RefCell::new(vec![0; parties]),
            }),
        }
    }

    /// Marks the start of `step`.
    pub(crate) fn set_step(&self, step: Step) {
        self.state.step.set(step);
        #[cfg(feature = "testing")]
        self.state.sent_in_step.borrow_mut().iter_mut().for_each(|c| *c = 0);
    }

    /// Bytes sent so far, per step.
    pub(crate) fn bytes(&self) -> [u64; Step::COUNT] {
        *self.state.bytes.borrow()
    }

    #[cfg(feature = "testing")]
    pub(crate) fn set_deviation(&self, deviation: Option<Deviation>) {
        *self.state.deviation.borrow_mut() = deviation;
    }

    #[cfg(feature = "testing")]
    pub(crate) fn deviation(&self) -> Option<Deviation> {
        self.state.deviation.borrow().clone()
    }

    /// Applies an `Edit` deviation to an outgoing message, if one matches.
    #[cfg(feature = "testing")]
    fn edit(&self, to: PartyId, msg: &mut Vec<u8>) {
        let nth = {
            let mut counts = self.state.sent_in_step.borrow_mut();
            let c = counts[to];
            counts[to] += 1;
            c
        };
        if let Some(Deviation::Edit { step, to: target, nth: want, edit }) = &*self.state.deviation.borrow() {
            if *step == self.state.step.get() && *want == nth && target.is_none_or(|t| t == to) {
                edit(msg);
            }
        }
    }
}

impl<C: Channel> Channel for Tap<C> {
    fn party(&self) -> PartyId {
        self.inner.party()
    }

    fn parties(&self) -> usize {
        self.inner.parties()
    }

    #[allow(unused_mut)]
    async fn send(&self, to: PartyId, mut msg: Vec<u8>) -> Result<(), ChannelError> {
        self.check_peer(to)?;
        #[cfg(feature = "testing")]
        self.edit(to, &mut msg);
        self.state.bytes.borrow_mut()[self.state.step.get() as usize] += msg.len() as u64;
        self.inner.send(to, msg).await
    }

    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        self.inner.recv(from).await
    }
}
