//! Shared by the integration tests: set up KOS pairs over the in-memory network.
#![allow(dead_code)]

use futures::executor::block_on;
use futures::join;
use webmpc_core::channel::memory::{pair, MemoryChannel};
use webmpc_core::channel::Channel;
use webmpc_core::Block;
use webmpc_ot::{KosReceiver, KosSender, SessionId};

/// Deterministic test randomness (the protocol itself draws from the CSPRNG).


/// A KOS pair between parties 0 (sender) and 1 (receiver) over the given channels, with the
/// caller's Δ for Δ-OT only (`KosSender::setup`).
pub fn kos_with<C0: Channel, C1: Channel>(
    a: C0,
    b: C1,
    sid: SessionId,
    delta: Block,
) -> (KosSender<C0>, KosReceiver<C1>) {
    let (s, r) = block_on(async { join!(KosSender::setup(a, 1, &sid, delta), KosReceiver::setup(b, 0, &sid)) });
    (s.expect("sender setup"), r.expect("receiver setup"))
}

/// Like [`kos_with`] with the explicit opt-in for hashed outputs on the caller's Δ.
pub fn kos_hashed_with<C0: Channel, C1: Channel>(
    a: C0,
    b: C1,
    sid: SessionId,
    delta: Block,
) -> (KosSender<C0>, KosReceiver<C1>) {
    let (s, r) = block_on(async {
        join!(KosSender::setup_hashed_with_delta(a, 1, &sid, delta), KosReceiver::setup(b, 0, &sid))
    });
    (s.expect("sender setup"), r.expect("receiver setup"))
}

/// A Δ-OT-only pair with the caller's Δ.
pub fn kos(delta: Block) -> (KosSender<MemoryChannel>, KosReceiver<MemoryChannel>) {
    let (a, b) = pair();
    kos_with(a, b, SessionId::random().unwrap(), delta)
}

/// A pair with a random Δ and every output kind.
pub fn kos_random() -> (KosSender<MemoryChannel>, KosReceiver<MemoryChannel>) {
    let (a, b) = pair();
    let sid = SessionId::random().unwrap();
    let (s, r) = block_on(async { join!(KosSender::setup_random(a, 1, &sid), KosReceiver::setup(b, 0, &sid)) });
    (s.expect("sender setup"), r.expect("receiver setup"))
}
