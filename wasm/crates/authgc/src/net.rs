//! Protocol steps every phase of authenticated garbling is built from, over a [`Channel`].
//!
//! * [`exchange`]: one round in which every party sends one message to every other party and
//!   receives one from each, all concurrently (a round costs one latency, whatever n is).
//! * [`open`]: reveals authenticated shares to all parties or to chosen ones, with a MAC check on
//!   **every** revealed bit (a digest of the tags travels with the bits; see
//!   [`share::mac_digest`]). [`open_behind`] sends a [`Head`] (an agreement) in the same flight.
//! * [`commit_then_open`]: simultaneous broadcast (everyone commits, then everyone opens), so that
//!   no party can choose its value after seeing the others'. Each opening carries a digest of the
//!   commitments its sender received, so a party that sent different commitments to different
//!   parties is caught before anyone uses the values.
//! * [`coin_toss`]: public coins from [`commit_then_open`]; honest parties draw them only after
//!   what the coins test has been fixed (committed or sent).
//! * [`BroadcastLog`]: broadcast with abort for values a party sends to everyone (masked inputs,
//!   revealed check values): every party hashes what it received, and [`BroadcastLog::check`]
//!   compares the digests before anything that depends on them is released.

use crate::commit::{self, COMMITMENT_LEN};
use crate::share::{expected_macs, mac_digest, pack_bits, unpack_bits, AuthShares};
use crate::{AuthGcError, Phase};
use futures::future::{join_all, try_join_all};
use sha2::{Digest, Sha256};
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::{random, Block};

/// The other parties of the session, in order.
pub fn peers<C: Channel>(ch: &C) -> impl Iterator<Item = PartyId> {
    let me = ch.party();
    (0..ch.parties()).filter(move |&j| j != me)
}

/// One round: sends `msg_for(j)` to every peer j and receives one message from each, concurrently.
/// `expected_len(j)` is the exact length required of party j's message. The result is indexed by
/// party (`out[me]` is empty).
pub async fn exchange<C: Channel>(
    ch: &C,
    msg_for: impl FnMut(PartyId) -> Vec<u8>,
    expected_len: impl Fn(PartyId) -> usize,
) -> Result<Vec<Vec<u8>>, AuthGcError> {
    exchange_behind(ch, None, msg_for, expected_len).await
}

/// A check of a peer's head (see [`Head`]): `Err` ends the step with that error.
pub type HeadCheck<'a> = &'a dyn Fn(PartyId, &[u8]) -> Result<(), AuthGcError>;

/// Bytes that lead a step's message to every peer, in the same message, and are checked before
/// anything else of that peer's message is looked at: an agreement on the step's parameters that
/// costs no round of its own. What the step sends behind it must be safe to send before the check
/// passes. Every message of the step is read whole, whatever its length, before its head is
/// checked, so a peer that sent a longer or shorter message behind a head that differs is told
/// apart (its head fails) and nothing of the step is left on the channel.
#[derive(Clone, Copy)]
pub struct Head<'a> {
    /// This party's head, the same for every peer.
    pub mine: &'a [u8],
    /// Checks a peer's head (of `mine.len()` bytes).
    pub check: HeadCheck<'a>,
}

/// One round in which only `head` goes to every peer and every peer's is checked (an agreement
/// alone). Reads a peer's message with a longer body too, so that a peer that sent its head ahead
/// of a step (a different mode) fails the check rather than the length.
pub async fn exchange_heads<C: Channel>(ch: &C, head: Head<'_>) -> Result<(), AuthGcError> {
    exchange_behind(ch, Some(head), |_| Vec::new(), |_| 0).await.map(drop)
}

/// [`exchange`], with `head` (if any) leading each message (see [`Head`]).
async fn exchange_behind<C: Channel>(
    ch: &C,
    head: Option<Head<'_>>,
    mut msg_for: impl FnMut(PartyId) -> Vec<u8>,
    expected_len: impl Fn(PartyId) -> usize,
) -> Result<Vec<Vec<u8>>, AuthGcError> {
    // Every send is attempted even after one failed (a peer that left): stopping at the first
    // failure would leave the live peers after it waiting for this party's message while it
    // waits for theirs, and both would hang.
    let sends = join_all(peers(ch).map(|j| {
        let msg = match head {
            None => msg_for(j),
            Some(h) => [h.mine, &msg_for(j)].concat(),
        };
        ch.send(j, msg)
    }));
    let recvs = try_join_all(peers(ch).map(|j| {
        let len = expected_len(j);
        async move {
            let Some(h) = head else {
                return Ok(ch.recv_exact(j, len).await?);
            };
            let mut msg = ch.recv(j).await?;
            let k = h.mine.len();
            let wrong_length = |got| ChannelError::UnexpectedLength { peer: j, expected: k + len, got };
            if msg.len() < k {
                return Err(wrong_length(msg.len()).into());
            }
            (h.check)(j, &msg[..k])?;
            if msg.len() != k + len {
                return Err(wrong_length(msg.len()).into());
            }
            Ok::<_, AuthGcError>(msg.split_off(k))
        }
    }));
    let (sent, got) = futures::join!(sends, recvs);
    // A malformed message explains more than the send failure that follows a peer's abort.
    let got = got?;
    sent.into_iter().collect::<Result<Vec<()>, _>>()?;
    let mut out = vec![Vec::new(); ch.parties()];
    for (j, msg) in peers(ch).zip(got) {
        out[j] = msg;
    }
    Ok(out)
}

/// Sends the same message to every peer and receives one of `len` bytes from each.
pub async fn exchange_same<C: Channel>(ch: &C, msg: &[u8], len: usize) -> Result<Vec<Vec<u8>>, AuthGcError> {
    exchange(ch, |_| msg.to_vec(), |_| len).await
}

/// Which shares of a batch each party learns.
#[derive(Debug, Clone, Copy)]
pub enum Reveal<'a> {
    /// Every party learns every value.
    All,
    /// Party p learns the values at `indices[p]` (possibly none), in that order.
    Each(&'a [Vec<usize>]),
}

impl Reveal<'_> {
    fn indices(&self, p: PartyId) -> Option<&[usize]> {
        match self {
            Reveal::All => None,
            Reveal::Each(idx) => Some(&idx[p]),
        }
    }

    fn count(&self, p: PartyId, len: usize) -> usize {
        self.indices(p).map_or(len, <[usize]>::len)
    }
}

fn digest_label(label: &[u8], from: PartyId, to: PartyId) -> Vec<u8> {
    let mut l = label.to_vec();
    l.extend_from_slice(&(from as u64).to_le_bytes());
    l.extend_from_slice(&(to as u64).to_le_bytes());
    l
}

/// Opens `shares` (this party's view; `delta` is this party's Δ) as `reveal` says, in one round.
///
/// Every party j sends each recipient p its share bits of the values p learns, with a digest of
/// its tags under p's key; p recomputes the tags from its keys and the bits it received and
/// aborts unless the digests match, so no share can be flipped without Δ_p. Returns the values
/// this party learns, in the order `reveal` lists them for this party (all of them for
/// [`Reveal::All`]). `label` names the protocol step (it is bound into every digest).
pub async fn open<C: Channel>(
    ch: &C,
    phase: Phase,
    label: &'static str,
    shares: &AuthShares,
    delta: Block,
    reveal: Reveal<'_>,
) -> Result<Vec<bool>, AuthGcError> {
    open_behind(ch, None, phase, label, shares, delta, reveal).await
}

/// [`open`] with `head` ahead of the opening in the same flight (see [`Head`]): every peer's head
/// passes its check before any of its bits or tags are read.
pub async fn open_behind<C: Channel>(
    ch: &C,
    head: Option<Head<'_>>,
    phase: Phase,
    label: &'static str,
    shares: &AuthShares,
    delta: Block,
    reveal: Reveal<'_>,
) -> Result<Vec<bool>, AuthGcError> {
    shares.check_shape()?;
    let me = ch.party();
    let len = shares.len();
    let pick_bits = |idx: Option<&[usize]>| -> Vec<bool> {
        match idx {
            None => shares.bits.clone(),
            Some(idx) => idx.iter().map(|&i| shares.bits[i]).collect(),
        }
    };
    let pick = |col: &[Block], idx: Option<&[usize]>| -> Vec<Block> {
        match idx {
            None => col.to_vec(),
            Some(idx) => idx.iter().map(|&i| col[i]).collect(),
        }
    };
    if let Reveal::Each(idx) = reveal {
        if idx.len() != ch.parties() || idx.iter().flatten().any(|&i| i >= len) {
            return Err(AuthGcError::InvalidArgument("reveal lists must name valid shares for every party".into()));
        }
    }
    let mine_count = reveal.count(me, len);
    let msgs = exchange_behind(
        ch,
        head,
        |p| {
            let idx = reveal.indices(p);
            let mut msg = pack_bits(&pick_bits(idx));
            msg.extend_from_slice(&mac_digest(&digest_label(label.as_bytes(), me, p), &pick(&shares.macs[p], idx)));
            msg
        },
        |_| mine_count.div_ceil(8) + 32,
    )
    .await?;
    let my_idx = reveal.indices(me);
    let mut values = pick_bits(my_idx);
    for j in peers(ch) {
        let (packed, digest) = msgs[j].split_at(mine_count.div_ceil(8));
        let bits = unpack_bits(packed, mine_count).ok_or(AuthGcError::Malformed { phase, peer: j, what: label })?;
        let want = expected_macs(&pick(&shares.keys[j], my_idx), &bits, delta);
        if mac_digest(&digest_label(label.as_bytes(), j, me), &want)[..] != digest[..] {
            // Why this can blame j: the bits and the digest are j's own message, checked against
            // this party's keys. j's tags and this party's keys on j's shares come from the Δ-OT
            // between the two of them alone, combined only with public values every honest party
            // agreed on (MAC-checked openings, broadcasts checked before use); so an honest j's
            // message passes whatever the other parties do.
            return Err(AuthGcError::cheating(phase, Some(j), label));
        }
        for (v, b) in values.iter_mut().zip(bits) {
            *v ^= b;
        }
    }
    Ok(values)
}

/// Simultaneous broadcast: every party commits to `value` (all values of the step have the same
/// length `len`), then opens; returns every party's value, indexed by party. A party whose
/// opening does not match its commitment, or who showed different commitments to different
/// parties, is caught here.
pub async fn commit_then_open<C: Channel>(
    ch: &C,
    phase: Phase,
    label: &'static str,
    value: &[u8],
    len: usize,
) -> Result<Vec<Vec<u8>>, AuthGcError> {
    let mine = Committed::new(ch.party(), label, value, len)?;
    let commitments = exchange_same(ch, &mine.commitment, COMMITMENT_LEN).await?;
    mine.open(ch, phase, commitments).await
}

/// This party's half of a [`commit_then_open`] whose commitments travel with another message of
/// the protocol (a flight that is sent anyway): [`new`](Self::new) commits, the caller sends
/// [`commitment`](Self::commitment) to every peer and receives theirs, then [`open`](Self::open)
/// runs the opening round. Open only once everything the value must not depend on, or must be
/// unpredictable to, is fixed: committing early only fixes this party's value earlier.
pub struct Committed {
    label: &'static str,
    value: Vec<u8>,
    /// The commitment, to send to every peer.
    pub commitment: [u8; COMMITMENT_LEN],
    opening: Vec<u8>,
}

impl Committed {
    fn party_label(label: &str, p: PartyId) -> Vec<u8> {
        digest_label(label.as_bytes(), p, p)
    }

    /// Commits party `me` to `value` (`len` bytes) for the step `label`.
    pub fn new(me: PartyId, label: &'static str, value: &[u8], len: usize) -> Result<Self, AuthGcError> {
        if value.len() != len {
            return Err(AuthGcError::InvalidArgument(format!("{label}: committed value must be {len} bytes")));
        }
        let (commitment, opening) = commit::commit(&Self::party_label(label, me), value)?;
        Ok(Committed { label, value: value.to_vec(), commitment, opening })
    }

    /// The opening round: `commitments[j]` is what peer j sent (this party's entry is ignored).
    /// Returns every party's value, indexed by party.
    pub async fn open<C: Channel>(
        self,
        ch: &C,
        phase: Phase,
        mut commitments: Vec<Vec<u8>>,
    ) -> Result<Vec<Vec<u8>>, AuthGcError> {
        let (me, n, len, label) = (ch.party(), ch.parties(), self.value.len(), self.label);
        commitments[me] = self.commitment.to_vec();
        // Everyone states which commitments it saw; equal digests mean equal views.
        let view = {
            let mut h = Sha256::new();
            h.update(b"webmpc/authgc/commitment-view/v1");
            h.update(label.as_bytes());
            for c in &commitments {
                h.update(c);
            }
            <[u8; 32]>::from(h.finalize())
        };
        let mut msg = self.opening;
        msg.extend_from_slice(&view);
        let openings = exchange_same(ch, &msg, commit::NONCE_LEN + len + 32).await?;
        let mut out = vec![Vec::new(); n];
        out[me] = self.value;
        for j in peers(ch) {
            let (opening, their_view) = openings[j].split_at(commit::NONCE_LEN + len);
            if their_view != view {
                // Cannot blame: j's view differs from this party's, which j lying about its view and
                // a third party showing j and this party different commitments both cause.
                return Err(AuthGcError::cheating(phase, None, "commitment consistency check (a party equivocated)"));
            }
            // Can blame j: the commitment and the opening are both j's own messages to this party.
            let v = commit::verify(&Self::party_label(label, j), &commitments[j], opening)
                .ok_or(AuthGcError::cheating(phase, Some(j), "commitment opening"))?;
            out[j] = v.to_vec();
        }
        Ok(out)
    }
}

/// Public random coins: a 128-bit seed no coalition of fewer than all parties can bias. Call it
/// only after everything the coins will test is fixed.
pub async fn coin_toss<C: Channel>(ch: &C, phase: Phase, label: &'static str) -> Result<Block, AuthGcError> {
    let mine = coin_commit(ch.party(), label)?;
    let commitments = exchange_same(ch, &mine.commitment, COMMITMENT_LEN).await?;
    coin_open(ch, phase, mine, commitments).await
}

/// [`coin_toss`] with the commitments carried by another flight (see [`Committed`]): this
/// party's committed share of the coins for `label`.
pub fn coin_commit(me: PartyId, label: &'static str) -> Result<Committed, AuthGcError> {
    Committed::new(me, label, &random::random_block()?.0, 16)
}

/// Opens the shares committed by [`coin_commit`] (`commitments[j]`: peer j's) and derives the
/// coins. Call it only after everything the coins will test is fixed.
pub async fn coin_open<C: Channel>(
    ch: &C,
    phase: Phase,
    mine: Committed,
    commitments: Vec<Vec<u8>>,
) -> Result<Block, AuthGcError> {
    let label = mine.label;
    let all = mine.open(ch, phase, commitments).await?;
    let mut h = Sha256::new();
    h.update(b"webmpc/authgc/coins/v1");
    h.update(label.as_bytes());
    for s in &all {
        h.update(s);
    }
    let d = h.finalize();
    Ok(Block::new(d[..16].try_into().expect("16 bytes")))
}

/// Broadcast with abort (Goldwasser–Lindell style, with the echo deferred): every value a party
/// is supposed to send identically to everyone is recorded, by every recipient, in the order of
/// the protocol; [`check`](Self::check) exchanges the digests and aborts on any difference. Run
/// the check before releasing anything that depends on the recorded values.
#[derive(Clone)]
pub struct BroadcastLog {
    h: Sha256,
}

impl Default for BroadcastLog {
    fn default() -> Self {
        Self::new()
    }
}

impl BroadcastLog {
    /// An empty log.
    pub fn new() -> Self {
        let mut h = Sha256::new();
        h.update(b"webmpc/authgc/broadcast-log/v1");
        BroadcastLog { h }
    }

    /// Records that `sender` broadcast `bytes` at step `label`.
    pub fn record(&mut self, sender: PartyId, label: &[u8], bytes: &[u8]) {
        self.h.update((sender as u64).to_le_bytes());
        self.h.update((label.len() as u64).to_le_bytes());
        self.h.update(label);
        self.h.update((bytes.len() as u64).to_le_bytes());
        self.h.update(bytes);
    }

    /// The digest of everything recorded so far: what [`check`](Self::check) exchanges. A protocol
    /// that has a message to send to every peer anyway can carry it there instead of spending a
    /// round on `check`, and compare what it receives with [`matches`](Self::matches).
    pub fn digest(&self) -> [u8; 32] {
        self.h.clone().finalize().into()
    }

    /// Whether a digest received from a peer equals this party's (a plain comparison: digests of
    /// broadcast values are public).
    pub fn matches(&self, theirs: &[u8]) -> bool {
        theirs == self.digest()
    }

    /// Compares this party's digest with every other party's; one round.
    pub async fn check<C: Channel>(&self, ch: &C, phase: Phase) -> Result<(), AuthGcError> {
        let mine = self.digest();
        let theirs = exchange_same(ch, &mine, 32).await?;
        for j in peers(ch) {
            if theirs[j] != mine {
                // Cannot blame: j's digest differs from this party's, which j lying and any
                // sender showing j and this party different values both cause.
                return Err(AuthGcError::cheating(phase, None, "broadcast consistency check"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ideal::{deal, reconstruct};
    use webmpc_core::channel::memory::{network, run_local, MemoryChannel, Tamper};
    use webmpc_core::prg::Prg;

    fn run_all<T>(
        n: usize,
        f: impl Fn(MemoryChannel) -> core::pin::Pin<Box<dyn core::future::Future<Output = T>>>,
    ) -> Vec<T> {
        let net = network(n);
        run_local(join_all(net.into_iter().map(f))).expect("no deadlock")
    }

    #[test]
    fn open_to_all_and_to_each_with_honest_parties() {
        for n in [2, 3, 4] {
            let mut prg = Prg::from_seed(Block::from_u128(n as u128));
            let deltas: Vec<Block> = (0..n).map(|_| prg.next_block()).collect();
            let views = deal(&mut prg, &deltas, 37);
            let values = reconstruct(&views, &deltas);
            let each: Vec<Vec<usize>> = (0..n).map(|p| (0..37).filter(|k| k % n == p).collect()).collect();
            let out = run_all(n, |ch| {
                let v = views[ch.party()].clone();
                let d = deltas[ch.party()];
                let each = each.clone();
                Box::pin(async move {
                    let all = open(&ch, Phase::Online, "test all", &v, d, Reveal::All).await.unwrap();
                    let mine = open(&ch, Phase::Online, "test each", &v, d, Reveal::Each(&each)).await.unwrap();
                    (all, mine)
                })
            });
            for (p, (all, mine)) in out.into_iter().enumerate() {
                assert_eq!(all, values);
                assert_eq!(mine, each[p].iter().map(|&k| values[k]).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn a_flipped_share_is_caught_by_the_mac_check() {
        let n = 3;
        let mut prg = Prg::from_seed(Block::from_u128(99));
        let deltas: Vec<Block> = (0..n).map(|_| prg.next_block()).collect();
        let views = deal(&mut prg, &deltas, 20);
        // Party 2 flips the first bit it sends to party 0 (bits travel in the message's first byte).
        let net = network(n);
        let out: Vec<Result<Vec<bool>, AuthGcError>> = run_local(join_all(net.into_iter().map(|ch| {
            let v = views[ch.party()].clone();
            let d = deltas[ch.party()];
            Box::pin(async move {
                if ch.party() == 2 {
                    let ch = Tamper::new(ch, |to, _, m: &mut Vec<u8>| {
                        if to == 0 {
                            m[0] ^= 1;
                        }
                    });
                    open(&ch, Phase::Dependent, "masks", &v, d, Reveal::All).await
                } else {
                    open(&ch, Phase::Dependent, "masks", &v, d, Reveal::All).await
                }
            }) as core::pin::Pin<Box<dyn core::future::Future<Output = _>>>
        })))
        .unwrap();
        let err = out[0].clone().unwrap_err();
        assert_eq!(err, AuthGcError::cheating(Phase::Dependent, Some(2), "masks"));
        assert_eq!(err.code(), "CHEATING_DETECTED");
        assert!(out[1].is_ok(), "party 1 got honest messages");
    }

    #[test]
    fn coin_toss_agrees_and_equivocation_is_caught() {
        let coins = run_all(3, |ch| Box::pin(async move { coin_toss(&ch, Phase::Independent, "c").await.unwrap() }));
        assert!(coins.iter().all(|c| *c == coins[0]));
        let again = run_all(3, |ch| Box::pin(async move { coin_toss(&ch, Phase::Independent, "c").await.unwrap() }));
        assert_ne!(again[0], coins[0], "fresh coins each time");

        // Party 1 shows party 2 a different commitment (its first message to party 2).
        let net = network(3);
        let out: Vec<Result<Block, AuthGcError>> = run_local(join_all(net.into_iter().map(|ch| {
            Box::pin(async move {
                if ch.party() == 1 {
                    let ch = Tamper::new(ch, |to, i, m: &mut Vec<u8>| {
                        if to == 2 && i == 0 {
                            m[5] ^= 0x80;
                        }
                    });
                    coin_toss(&ch, Phase::Independent, "c").await
                } else {
                    coin_toss(&ch, Phase::Independent, "c").await
                }
            }) as core::pin::Pin<Box<dyn core::future::Future<Output = _>>>
        })))
        .unwrap();
        assert!(out[0].is_err() && out[2].is_err(), "both honest parties abort: {out:?}");
    }

    #[test]
    fn broadcast_log_catches_different_values_to_different_parties() {
        let out = run_all(3, |ch| {
            Box::pin(async move {
                let mut log = BroadcastLog::new();
                // Party 0 "broadcast" 1 to party 1 and 2 to party 2.
                let value = if ch.party() == 2 { [2u8] } else { [1u8] };
                log.record(0, b"x", &value);
                log.check(&ch, Phase::Online).await
            })
        });
        assert!(out.iter().all(|r| r.is_err()));
        let ok = run_all(3, |ch| {
            Box::pin(async move {
                let mut log = BroadcastLog::new();
                log.record(0, b"x", &[1]);
                log.check(&ch, Phase::Online).await
            })
        });
        assert!(ok.iter().all(|r| r.is_ok()));
    }

    #[test]
    fn a_peer_that_left_does_not_hang_the_others_exchange() {
        // Party 0 sends its message of the round and leaves: parties 1 and 2 each fail to send
        // to it first (and read its message), and must still send to each other, or each would
        // wait for the other forever.
        let out = run_all(3, |ch| {
            Box::pin(async move {
                if ch.party() == 0 {
                    ch.send(1, vec![1, 2, 3]).await.unwrap();
                    ch.send(2, vec![1, 2, 3]).await.unwrap();
                    drop(ch);
                    return Ok(vec![]);
                }
                exchange_same(&ch, &[1, 2, 3], 3).await
            })
        });
        for r in &out[1..] {
            assert_eq!(r.as_ref().unwrap_err().code(), "PEER_DISCONNECTED");
        }
    }

    #[test]
    fn wrong_lengths_are_typed_errors() {
        let out = run_all(2, |ch| {
            Box::pin(async move {
                if ch.party() == 0 {
                    ch.send(1, vec![0; 3]).await.unwrap();
                    Ok(vec![])
                } else {
                    exchange_same(&ch, &[0; 4], 4).await
                }
            })
        });
        assert_eq!(out[1].as_ref().unwrap_err().code(), "MALFORMED_MESSAGE");
    }
}
