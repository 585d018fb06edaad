//! Several ordered message streams over one [`Channel`].
//!
//! Between two MASCOT parties several sub-protocols run at once: two OT extensions (one per
//! direction), COPE, the Gilboa products, broadcasts. Each is a sequence of messages in a fixed
//! order, but their interleaving on the one pairwise channel depends on scheduling. Each message
//! therefore carries a one-byte stream tag at its end, and a receive on stream s returns the next
//! message of that stream, buffering messages of other streams until their reader asks.
//!
//! Only one task at a time reads the underlying channel for a given peer (the "pump"); the others
//! wait and are woken whenever the pump delivers a message, so a message for a stream whose reader
//! is parked is never stuck behind a reader of another stream.
//!
//! **Bounded buffering.** A peer decides what it sends; buffering whatever arrives for streams
//! nobody is reading yet would let it grow this party's memory without limit. A message is queued
//! here only when a reader of *another* stream of the same peer pumps it in, and MASCOT never has
//! more than a couple of messages outstanding on a stream that nobody reads: every sub-protocol
//! waits for the other side between its messages (an OT or Gilboa piece needs the receiver's
//! previous message, a COPE round is read by its own reader while it is sent, and every phase
//! starts after a broadcast round that needs this party's message). The largest messages are an
//! online opening chunk (16 MiB), a COPE piece (1 MiB) and a Gilboa or OT piece. So per peer at
//! most [`MAX_BUFFERED_BYTES`] unread bytes and per stream at most [`MAX_QUEUED`] unread messages
//! are kept; beyond either the peer is failed with [`ChannelError::Overrun`], and a message for a
//! stream that does not exist with [`ChannelError::UnknownStream`] (both `MALFORMED_MESSAGE`).

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::collections::VecDeque;
use std::rc::Rc;
use webmpc_core::channel::{Channel, ChannelError, PartyId};

/// The streams MASCOT uses.
pub mod stream {
    /// Broadcasts, openings, commitments, coin tossing.
    pub const CONTROL: u8 = 0;
    /// The OT extension in which the lower-indexed party of the pair is the OT sender.
    pub const OT_LOW_SENDS: u8 = 1;
    /// The OT extension in which the higher-indexed party is the OT sender.
    pub const OT_HIGH_SENDS: u8 = 2;
    /// Gilboa multiplication: the OT sender's corrections d.
    pub const GILBOA: u8 = 3;
    /// COPE: the inputter's vectors u.
    pub const COPE: u8 = 4;
    /// Number of streams.
    pub const COUNT: u8 = 5;
}

/// Most unread bytes buffered per peer (several times the legitimate worst case).
pub const MAX_BUFFERED_BYTES: usize = 128 << 20;
/// Most unread messages buffered per stream and peer (the protocol has at most two or three).
pub const MAX_QUEUED: usize = 16;

struct PeerState {
    queues: Vec<VecDeque<Vec<u8>>>,
    /// Bytes in `queues`.
    buffered: usize,
    pumping: bool,
    waiters: Vec<Waker>,
    failed: Option<ChannelError>,
}

/// A channel whose messages are split into tagged streams.
pub struct Mux<C> {
    inner: C,
    peers: RefCell<Vec<PeerState>>,
}

impl<C: Channel> Mux<C> {
    /// Wraps `inner`.
    pub fn new(inner: C) -> Rc<Mux<C>> {
        let n = inner.parties();
        let peers = (0..n)
            .map(|_| PeerState {
                queues: (0..stream::COUNT).map(|_| VecDeque::new()).collect(),
                buffered: 0,
                pumping: false,
                waiters: Vec::new(),
                failed: None,
            })
            .collect();
        Rc::new(Mux { inner, peers: RefCell::new(peers) })
    }

    /// The channel underneath.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    async fn recv(&self, from: PartyId, tag: u8) -> Result<Vec<u8>, ChannelError> {
        self.inner.check_peer(from)?;
        loop {
            let next = {
                let mut peers = self.peers.borrow_mut();
                let st = &mut peers[from];
                if let Some(m) = st.queues[tag as usize].pop_front() {
                    st.buffered -= m.len();
                    Next::Got(m)
                } else if let Some(e) = &st.failed {
                    Next::Failed(e.clone())
                } else if st.pumping {
                    Next::Wait
                } else {
                    st.pumping = true;
                    Next::Pump
                }
            };
            match next {
                Next::Got(m) => return Ok(m),
                Next::Failed(e) => return Err(e),
                Next::Wait => {
                    Park { mux_peers: &self.peers, from, parked: false }.await;
                    continue;
                }
                Next::Pump => {}
            }
            let guard = PumpGuard { peers: &self.peers, from };
            let got = self.inner.recv(from).await;
            drop(guard);
            let mut peers = self.peers.borrow_mut();
            let st = &mut peers[from];
            match got {
                Ok(mut m) => match m.pop() {
                    Some(t) if t < stream::COUNT => {
                        let q = &mut st.queues[t as usize];
                        let bytes = st.buffered + m.len();
                        if q.len() >= MAX_QUEUED || bytes > MAX_BUFFERED_BYTES {
                            st.failed = Some(ChannelError::Overrun {
                                peer: from,
                                messages: q.len() + 1,
                                bytes,
                                max_bytes: MAX_BUFFERED_BYTES,
                                max_messages: MAX_QUEUED,
                            });
                            // What is buffered will never be read: free it now.
                            st.queues.iter_mut().for_each(VecDeque::clear);
                            st.buffered = 0;
                        } else {
                            st.buffered = bytes;
                            q.push_back(m);
                        }
                    }
                    Some(tag) => st.failed = Some(ChannelError::UnknownStream { peer: from, tag }),
                    None => st.failed = Some(ChannelError::UnexpectedLength { peer: from, expected: 1, got: 0 }),
                },
                Err(e) => st.failed = Some(e),
            }
        }
    }
}

/// What a reader does next.
enum Next {
    Got(Vec<u8>),
    Failed(ChannelError),
    Wait,
    Pump,
}

/// Clears the pump flag and wakes the parked readers when the pumping read ends (or is dropped).
struct PumpGuard<'a> {
    peers: &'a RefCell<Vec<PeerState>>,
    from: PartyId,
}

impl Drop for PumpGuard<'_> {
    fn drop(&mut self) {
        let mut peers = self.peers.borrow_mut();
        let st = &mut peers[self.from];
        st.pumping = false;
        for w in st.waiters.drain(..) {
            w.wake();
        }
    }
}

/// Waits once until the pump delivers something.
struct Park<'a> {
    mux_peers: &'a RefCell<Vec<PeerState>>,
    from: PartyId,
    parked: bool,
}

impl Future for Park<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.parked {
            return Poll::Ready(());
        }
        let mut peers = self.mux_peers.borrow_mut();
        let st = &mut peers[self.from];
        if !st.pumping {
            return Poll::Ready(());
        }
        st.waiters.push(cx.waker().clone());
        drop(peers);
        self.parked = true;
        Poll::Pending
    }
}

/// One stream of a [`Mux`], usable wherever a [`Channel`] is.
pub struct Sub<C> {
    mux: Rc<Mux<C>>,
    tag: u8,
}

impl<C> Sub<C> {
    /// Stream `tag` of `mux`.
    pub fn new(mux: &Rc<Mux<C>>, tag: u8) -> Sub<C> {
        Sub { mux: mux.clone(), tag }
    }
}

impl<C: Channel> Channel for Sub<C> {
    fn party(&self) -> PartyId {
        self.mux.inner.party()
    }

    fn parties(&self) -> usize {
        self.mux.inner.parties()
    }

    async fn send(&self, to: PartyId, mut msg: Vec<u8>) -> Result<(), ChannelError> {
        msg.push(self.tag);
        self.mux.inner.send(to, msg).await
    }

    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        self.mux.recv(from, self.tag).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use webmpc_core::channel::memory::{pair, run_local};

    #[test]
    fn streams_are_separated_and_ordered() {
        let (a, b) = pair();
        let (a, b) = (Mux::new(a), Mux::new(b));
        let (a0, a1) = (Sub::new(&a, 0), Sub::new(&a, 1));
        let (b0, b1) = (Sub::new(&b, 0), Sub::new(&b, 1));
        block_on(async {
            a1.send(1, vec![10]).await.unwrap();
            a0.send(1, vec![1]).await.unwrap();
            a1.send(1, vec![11]).await.unwrap();
            assert_eq!(b0.recv(0).await.unwrap(), vec![1]);
            assert_eq!(b1.recv(0).await.unwrap(), vec![10]);
            assert_eq!(b1.recv(0).await.unwrap(), vec![11]);
        });
    }

    #[test]
    fn concurrent_readers_of_different_streams_both_finish() {
        let (a, b) = pair();
        let (a, b) = (Mux::new(a), Mux::new(b));
        let (a0, a1) = (Sub::new(&a, 0), Sub::new(&a, 1));
        let (b0, b1) = (Sub::new(&b, 0), Sub::new(&b, 1));
        let out = run_local(async {
            futures::join!(
                async {
                    // Stream 1's message is sent first, while stream 0's reader is pumping.
                    a1.send(1, vec![2]).await.unwrap();
                    a0.send(1, vec![1]).await.unwrap();
                },
                b0.recv(0),
                b1.recv(0)
            )
        })
        .unwrap();
        assert_eq!(out.1.unwrap(), vec![1]);
        assert_eq!(out.2.unwrap(), vec![2]);
    }

    #[test]
    fn bad_tags_and_disconnects_are_typed_errors() {
        let (a, b) = pair();
        let mb = Mux::new(b);
        let b0 = Sub::new(&mb, 0);
        block_on(async {
            a.send(1, vec![5, 99]).await.unwrap();
            let e = b0.recv(0).await.unwrap_err();
            assert_eq!(e, ChannelError::UnknownStream { peer: 0, tag: 99 });
            assert_eq!(e.code(), "MALFORMED_MESSAGE");
        });
        // An empty message has no tag at all.
        let (a, b) = pair();
        let mb = Mux::new(b);
        let b0 = Sub::new(&mb, 0);
        block_on(async {
            a.send(1, vec![]).await.unwrap();
            assert!(matches!(b0.recv(0).await, Err(ChannelError::UnexpectedLength { .. })));
        });
        let (a, b) = pair();
        let mb = Mux::new(b);
        let b0 = Sub::new(&mb, 0);
        drop(a);
        block_on(async {
            assert_eq!(b0.recv(0).await, Err(ChannelError::Disconnected { peer: 0 }));
        });
    }

    /// Up to the budgets everything is delivered in order; one message more on a stream nobody
    /// reads, or one byte more than the byte budget, fails the peer for every stream.
    #[test]
    fn buffering_is_bounded_per_stream_and_per_peer() {
        let (a, b) = pair();
        let mb = Mux::new(b);
        let (b0, b3) = (Sub::new(&mb, 0), Sub::new(&mb, 3));
        block_on(async {
            for i in 0..MAX_QUEUED {
                a.send(1, vec![i as u8, 3]).await.unwrap();
            }
            a.send(1, vec![7, 0]).await.unwrap();
            assert_eq!(b0.recv(0).await.unwrap(), vec![7]);
            for i in 0..MAX_QUEUED {
                assert_eq!(b3.recv(0).await.unwrap(), vec![i as u8]);
            }
            for i in 0..=MAX_QUEUED {
                a.send(1, vec![i as u8, 3]).await.unwrap();
            }
            a.send(1, vec![7, 0]).await.unwrap();
            let e = b0.recv(0).await.unwrap_err();
            assert!(
                matches!(e, ChannelError::Overrun { peer: 0, messages, .. } if messages == MAX_QUEUED + 1),
                "{e:?}"
            );
            assert_eq!(b3.recv(0).await.unwrap_err(), e);
        });
        let (a, b) = pair();
        let mb = Mux::new(b);
        let (b0, b1, b2) = (Sub::new(&mb, 0), Sub::new(&mb, 1), Sub::new(&mb, 2));
        block_on(async {
            let half = MAX_BUFFERED_BYTES / 2;
            let mut m = vec![0u8; half];
            m.push(1);
            a.send(1, m).await.unwrap();
            let mut m = vec![0u8; MAX_BUFFERED_BYTES - half];
            m.push(2);
            a.send(1, m).await.unwrap();
            a.send(1, vec![0]).await.unwrap();
            // Exactly the budget is buffered: fine.
            assert_eq!(b0.recv(0).await.unwrap(), Vec::<u8>::new());
            assert_eq!(b1.recv(0).await.unwrap().len(), half);
            let mut m = vec![0u8; MAX_BUFFERED_BYTES - half + 1];
            m.push(1);
            a.send(1, m).await.unwrap();
            a.send(1, vec![0]).await.unwrap();
            let e = b0.recv(0).await.unwrap_err();
            assert!(matches!(e, ChannelError::Overrun { bytes, .. } if bytes == MAX_BUFFERED_BYTES + 1), "{e:?}");
            assert_eq!(b2.recv(0).await.unwrap_err(), e);
        });
    }
}
