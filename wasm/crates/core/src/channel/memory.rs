//! An in-process network: n [`MemoryChannel`]s joined by unbounded queues, one per ordered pair.
//!
//! Used to run every party of a protocol as a future in one process (tests, benches). Queues are
//! unbounded because a bounded queue would deadlock two parties that both send before they
//! receive; the protocols themselves keep memory bounded (OT extension waits for its peer's
//! challenge once per chunk, so no party runs more than a chunk ahead).
//!
//! Dropping a channel disconnects it: its peers' pending and later `recv`s fail with
//! [`ChannelError::Disconnected`] once its queued messages are drained, which is how tests model
//! a party that crashes or aborts.
//!
//! A test can wrap a channel to tamper with what a party sends: see [`Tamper`].

use super::{Channel, ChannelError, PartyId};
use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::lock::Mutex;
use futures::StreamExt;

type Outgoing = Option<UnboundedSender<Vec<u8>>>;
type Incoming = Option<Mutex<UnboundedReceiver<Vec<u8>>>>;

/// One party's end of an in-memory network.
pub struct MemoryChannel {
    party: PartyId,
    /// `outgoing[j]` carries this party's messages to party j (`None` for j = party).
    outgoing: Vec<Outgoing>,
    /// `incoming[j]` carries party j's messages to this party. An async mutex, because `recv`
    /// takes `&self` and two receives from the same peer must queue rather than race.
    incoming: Vec<Incoming>,
    /// Bytes sent so far, for benchmarks' bytes-per-OT figures.
    sent_bytes: core::cell::Cell<u64>,
}

/// Creates a fully connected network of `parties` channels; element i belongs to party i.
pub fn network(parties: usize) -> Vec<MemoryChannel> {
    let mut outgoing: Vec<Vec<Outgoing>> = (0..parties).map(|_| (0..parties).map(|_| None).collect()).collect();
    let mut incoming: Vec<Vec<Incoming>> = (0..parties).map(|_| (0..parties).map(|_| None).collect()).collect();
    for from in 0..parties {
        for to in 0..parties {
            if from != to {
                let (tx, rx) = unbounded();
                outgoing[from][to] = Some(tx);
                incoming[to][from] = Some(Mutex::new(rx));
            }
        }
    }
    outgoing
        .into_iter()
        .zip(incoming)
        .enumerate()
        .map(|(party, (outgoing, incoming))| MemoryChannel {
            party,
            outgoing,
            incoming,
            sent_bytes: core::cell::Cell::new(0),
        })
        .collect()
}

/// Two channels, for two-party protocols.
pub fn pair() -> (MemoryChannel, MemoryChannel) {
    let mut net = network(2);
    let b = net.pop().expect("network(2) has two channels");
    let a = net.pop().expect("network(2) has two channels");
    (a, b)
}

impl MemoryChannel {
    /// Total bytes this party has sent.
    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes.get()
    }
}

impl Channel for MemoryChannel {
    fn party(&self) -> PartyId {
        self.party
    }

    fn parties(&self) -> usize {
        self.outgoing.len()
    }

    async fn send(&self, to: PartyId, msg: Vec<u8>) -> Result<(), ChannelError> {
        self.check_peer(to)?;
        let len = msg.len() as u64;
        let tx = self.outgoing[to].as_ref().ok_or(ChannelError::InvalidPeer { peer: to, parties: self.parties() })?;
        tx.unbounded_send(msg).map_err(|_| ChannelError::Disconnected { peer: to })?;
        self.sent_bytes.set(self.sent_bytes.get() + len);
        Ok(())
    }

    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        self.check_peer(from)?;
        let rx =
            self.incoming[from].as_ref().ok_or(ChannelError::InvalidPeer { peer: from, parties: self.parties() })?;
        rx.lock().await.next().await.ok_or(ChannelError::Disconnected { peer: from })
    }
}

/// A channel that passes every outgoing message through a function first: the model of a party
/// that deviates from the protocol by changing what it sends. `edit(to, index, msg)` sees the
/// message index per destination (0 for the first message to `to`) and may change the message
/// in place (including its length).
pub struct Tamper<C, F> {
    inner: C,
    edit: F,
    counts: core::cell::RefCell<Vec<usize>>,
}

impl<C: Channel, F: Fn(PartyId, usize, &mut Vec<u8>)> Tamper<C, F> {
    /// Wraps `inner`.
    pub fn new(inner: C, edit: F) -> Self {
        let parties = inner.parties();
        Tamper { inner, edit, counts: core::cell::RefCell::new(vec![0; parties]) }
    }
}

impl<C: Channel, F: Fn(PartyId, usize, &mut Vec<u8>)> Channel for Tamper<C, F> {
    fn party(&self) -> PartyId {
        self.inner.party()
    }

    fn parties(&self) -> usize {
        self.inner.parties()
    }

    async fn send(&self, to: PartyId, mut msg: Vec<u8>) -> Result<(), ChannelError> {
        self.check_peer(to)?;
        let index = {
            let mut counts = self.counts.borrow_mut();
            let i = counts[to];
            counts[to] += 1;
            i
        };
        (self.edit)(to, index, &mut msg);
        self.inner.send(to, msg).await
    }

    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        self.inner.recv(from).await
    }
}

/// The in-memory network's executor: polls `fut` until it completes, on the current thread, with
/// no runtime (it works in Wasm, where threads cannot park). Every party's future is polled in
/// turn by `join!`; a party waiting on an empty queue is simply polled again after the others
/// ran. If nothing can make progress for `MAX_IDLE_POLLS` rounds, the parties are deadlocked
/// (a protocol bug) and this returns `Err(Stalled)` instead of spinning forever.
pub fn run_local<F: core::future::Future>(fut: F) -> Result<F::Output, Stalled> {
    use core::task::{Context, Poll};
    const MAX_IDLE_POLLS: u32 = 1_000_000;
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut fut = core::pin::pin!(fut);
    let mut idle = 0;
    loop {
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return Ok(out),
            Poll::Pending => {
                idle += 1;
                if idle > MAX_IDLE_POLLS {
                    return Err(Stalled);
                }
            }
        }
    }
}

/// The parties of a [`run_local`] run were all waiting on each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the local parties are deadlocked: every one is waiting for a message")]
pub struct Stalled;

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    #[test]
    fn messages_arrive_in_order_per_pair() {
        let net = network(3);
        block_on(async {
            net[0].send(1, vec![1]).await.unwrap();
            net[0].send(1, vec![2, 2]).await.unwrap();
            net[2].send(1, vec![3]).await.unwrap();
            assert_eq!(net[1].recv(2).await.unwrap(), vec![3]);
            assert_eq!(net[1].recv(0).await.unwrap(), vec![1]);
            assert_eq!(net[1].recv(0).await.unwrap(), vec![2, 2]);
            assert_eq!(net[0].sent_bytes(), 3);
        });
    }

    #[test]
    fn bad_peers_and_lengths_are_typed_errors() {
        let (a, b) = pair();
        block_on(async {
            assert!(matches!(a.send(0, vec![]).await, Err(ChannelError::InvalidPeer { peer: 0, parties: 2 })));
            assert!(matches!(a.recv(5).await, Err(ChannelError::InvalidPeer { peer: 5, .. })));
            b.send(0, vec![0; 7]).await.unwrap();
            let e = a.recv_exact(1, 8).await.unwrap_err();
            assert_eq!(e, ChannelError::UnexpectedLength { peer: 1, expected: 8, got: 7 });
            assert_eq!(e.code(), "MALFORMED_MESSAGE");
        });
    }

    #[test]
    fn a_dropped_peer_is_a_disconnect_after_its_queued_messages() {
        let (a, b) = pair();
        block_on(async {
            b.send(0, vec![9]).await.unwrap();
            drop(b);
            assert_eq!(a.recv(1).await.unwrap(), vec![9]);
            assert_eq!(a.recv(1).await, Err(ChannelError::Disconnected { peer: 1 }));
            assert_eq!(a.send(1, vec![1]).await, Err(ChannelError::Disconnected { peer: 1 }));
        });
    }

    #[test]
    fn run_local_drives_joined_parties_and_reports_deadlock() {
        let (a, b) = pair();
        let out = run_local(async {
            futures::join!(
                async {
                    let m = a.recv(1).await.unwrap();
                    a.send(1, vec![m[0] + 1]).await.unwrap();
                },
                async {
                    b.send(0, vec![41]).await.unwrap();
                    b.recv(0).await.unwrap()
                }
            )
        });
        assert_eq!(out.unwrap().1, vec![42]);
        let (a, b) = pair();
        let stuck = run_local(async { futures::join!(a.recv(1), b.recv(0)) });
        assert_eq!(stuck.unwrap_err(), Stalled);
    }

    #[test]
    fn tamper_edits_outgoing_messages_by_index() {
        let (a, b) = pair();
        let a = Tamper::new(a, |_, i, m: &mut Vec<u8>| {
            if i == 1 {
                m.push(0xee);
            }
        });
        block_on(async {
            a.send(1, vec![1]).await.unwrap();
            a.send(1, vec![2]).await.unwrap();
            assert_eq!(b.recv(0).await.unwrap(), vec![1]);
            assert_eq!(b.recv(0).await.unwrap(), vec![2, 0xee]);
        });
    }
}
