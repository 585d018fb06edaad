//! The one interface between protocols and the network.
//!
//! Every protocol is an `async` function generic over [`Channel`]: it sends whole byte messages
//! to numbered parties and receives them back, one message per protocol round per peer. Two
//! implementations exist:
//!
//! * [`memory`]: n parties in one process, each a future (native tests, benches, and
//!   in-Wasm benchmarks);
//! * the Wasm binding (`webmpc-bindings`), which forwards to a JavaScript `Transport`
//!   (in-memory, WebSocket or WebRTC, optionally authenticated and encrypted).
//!
//! The trait is deliberately small: the transport below guarantees reliable, ordered delivery of
//! whole messages between every pair of parties and bounds every wait with a timeout, so a
//! protocol only has to say what it expects. Messages are `Vec<u8>` because the JavaScript side
//! hands over an owned copy anyway.
//!
//! Futures are not `Send`: in Wasm everything runs on one thread, and native tests drive the
//! parties with a single-threaded executor.

pub mod memory;

use core::future::Future;

/// A party's index in a session, `0..parties`.
pub type PartyId = usize;

/// Why a message could not be sent or received. Messages never include message contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// The peer is gone (closed, crashed or dropped its end).
    #[error("party {peer} disconnected")]
    Disconnected {
        /// The peer concerned.
        peer: PartyId,
    },
    /// The peer sent a message whose length is not what the protocol step expects.
    #[error("party {peer} sent a {got}-byte message where {expected} bytes were expected")]
    UnexpectedLength {
        /// The peer concerned.
        peer: PartyId,
        /// The length the protocol expects.
        expected: usize,
        /// The length that arrived.
        got: usize,
    },
    /// The peer sent a message longer than the protocol step allows.
    #[error("party {peer} sent a {got}-byte message; at most {max} bytes are allowed here")]
    TooLarge {
        /// The peer concerned.
        peer: PartyId,
        /// The length that arrived.
        got: usize,
        /// The most the protocol accepts at this step.
        max: usize,
    },
    /// A multiplexed channel (several ordered streams over one channel) got a message for a stream
    /// that does not exist.
    #[error("party {peer} sent a message on stream {tag}, which this protocol does not have")]
    UnknownStream {
        /// The peer concerned.
        peer: PartyId,
        /// The stream tag that arrived.
        tag: u8,
    },
    /// A peer ran further ahead of the protocol than it ever legitimately can: more unread
    /// messages (or bytes) for streams nobody is reading yet than the protocol has outstanding.
    /// A flood of this kind would otherwise grow memory without limit.
    #[error("party {peer} sent {messages} messages ({bytes} bytes) ahead of the protocol; at most {max_bytes} bytes or {max_messages} messages per stream are buffered")]
    Overrun {
        /// The peer concerned.
        peer: PartyId,
        /// Unread messages on the stream that overflowed, the new one included.
        messages: usize,
        /// Unread bytes from this peer, the new message included.
        bytes: usize,
        /// The byte budget per peer.
        max_bytes: usize,
        /// The message budget per stream.
        max_messages: usize,
    },
    /// A protocol addressed a party that is not in the session, or itself.
    #[error("party {peer} is not a peer in a session of {parties} parties")]
    InvalidPeer {
        /// The index that was used.
        peer: PartyId,
        /// The session's size.
        parties: usize,
    },
    /// The transport underneath failed (timeout, authentication failure, …). The binding keeps the
    /// transport's own typed error and rethrows it; this variant only carries a short reason.
    #[error("transport to party {peer} failed: {reason}")]
    Transport {
        /// The peer concerned.
        peer: PartyId,
        /// What the transport reported (never message contents).
        reason: String,
    },
}

impl ChannelError {
    /// A stable machine-readable code, mirrored by the TypeScript SDK.
    pub fn code(&self) -> &'static str {
        match self {
            ChannelError::Disconnected { .. } => "PEER_DISCONNECTED",
            ChannelError::UnexpectedLength { .. }
            | ChannelError::TooLarge { .. }
            | ChannelError::UnknownStream { .. }
            | ChannelError::Overrun { .. } => "MALFORMED_MESSAGE",
            ChannelError::InvalidPeer { .. } => "INVALID_ARGUMENT",
            ChannelError::Transport { .. } => "TRANSPORT_FAILED",
        }
    }

    /// The peer the error is about.
    pub fn peer(&self) -> PartyId {
        match self {
            ChannelError::Disconnected { peer }
            | ChannelError::UnexpectedLength { peer, .. }
            | ChannelError::TooLarge { peer, .. }
            | ChannelError::UnknownStream { peer, .. }
            | ChannelError::Overrun { peer, .. }
            | ChannelError::InvalidPeer { peer, .. }
            | ChannelError::Transport { peer, .. } => *peer,
        }
    }
}

/// Reliable, ordered delivery of whole messages between the parties of one session.
///
/// `send` may return before the peer has read the message; it applies backpressure by awaiting
/// when the transport's buffers are full. `recv(from)` returns the next message from `from`.
/// Sends to different peers and receives from different peers may be in flight at once.
#[allow(async_fn_in_trait)]
pub trait Channel {
    /// This party's index.
    fn party(&self) -> PartyId;

    /// The number of parties in the session.
    fn parties(&self) -> usize;

    /// Sends `msg` to party `to`.
    fn send(&self, to: PartyId, msg: Vec<u8>) -> impl Future<Output = Result<(), ChannelError>>;

    /// Receives the next message from party `from`.
    fn recv(&self, from: PartyId) -> impl Future<Output = Result<Vec<u8>, ChannelError>>;

    /// Receives the next message from `from`, which must be exactly `len` bytes long.
    async fn recv_exact(&self, from: PartyId, len: usize) -> Result<Vec<u8>, ChannelError> {
        let msg = self.recv(from).await?;
        if msg.len() != len {
            return Err(ChannelError::UnexpectedLength { peer: from, expected: len, got: msg.len() });
        }
        Ok(msg)
    }

    /// Checks that `peer` is another party of this session.
    fn check_peer(&self, peer: PartyId) -> Result<(), ChannelError> {
        if peer >= self.parties() || peer == self.party() {
            return Err(ChannelError::InvalidPeer { peer, parties: self.parties() });
        }
        Ok(())
    }
}

impl<C: Channel> Channel for &C {
    fn party(&self) -> PartyId {
        (**self).party()
    }
    fn parties(&self) -> usize {
        (**self).parties()
    }
    fn send(&self, to: PartyId, msg: Vec<u8>) -> impl Future<Output = Result<(), ChannelError>> {
        (**self).send(to, msg)
    }
    fn recv(&self, from: PartyId) -> impl Future<Output = Result<Vec<u8>, ChannelError>> {
        (**self).recv(from)
    }
}
