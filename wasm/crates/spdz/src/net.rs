//! Rounds between all parties: exchanging messages with every peer at once, commitments,
//! coin tossing, and the broadcast transcript.
//!
//! Every round sends to and receives from all peers concurrently (`try_join_all`), so a round
//! costs one network latency whatever n is.
//!
//! **Commitments** are `SHA-256(domain ‖ session ‖ committer ‖ label ‖ value ‖ 16-byte nonce)`:
//! hiding because the nonce is random, binding because SHA-256 is collision resistant, and bound
//! to the committer's index so that a party cannot replay an honest party's commitment as its
//! own.
//!
//! **Coin tossing (F_Rand):** every party commits to a random 128-bit seed share; after all
//! commitments arrived, the shares are opened and the public seed is their XOR, expanded with
//! the AES-CTR PRG. The seed is fixed at commitment time but unknown to everyone until opened,
//! so a coin opened *after* the values it tests are fixed is independent of them (pitfall P3).
//!
//! **Broadcast consistency (P9):** every value a party treats as broadcast or opened is absorbed,
//! in protocol order, into a running SHA-256 transcript. The MAC check compares the transcripts
//! of all parties (inside the committed message) before anything is output, so a party that sent
//! different values to different peers is caught.

use crate::error::SpdzError;
use crate::field::Field;
use crate::mux::{stream, Mux, Sub};
use futures::future::try_join_all;
use sha2::{Digest, Sha256};
use std::rc::Rc;
use webmpc_core::channel::{Channel, PartyId};
use webmpc_core::prg::Prg;
use webmpc_core::{random, Block};

/// Largest message accepted on the control stream (64 MiB, like the JS channel).
pub const MAX_CONTROL_BYTES: usize = 64 << 20;

/// The control stream plus the session's identity and transcript.
pub struct Net<C> {
    ctl: Sub<C>,
    mux: Rc<Mux<C>>,
    session: [u8; 32],
    transcript: Sha256,
    /// Bytes absorbed into the transcript (for the roofline's SHA-256 block count).
    absorbed: u64,
}

/// A commitment opening: value and nonce.
struct Opening {
    value: Vec<u8>,
    nonce: [u8; 16],
}

/// The commitment of `party` to `value` under `label` with `nonce` in session `session` (public so
/// that cheating-party tests can build a consistent commitment to a value of their choice).
pub fn commitment(session: &[u8; 32], party: PartyId, label: &[u8], value: &[u8], nonce: &[u8; 16]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"webmpc/spdz/commit/v1");
    h.update(session);
    h.update((party as u64).to_le_bytes());
    h.update((label.len() as u64).to_le_bytes());
    h.update(label);
    h.update((value.len() as u64).to_le_bytes());
    h.update(value);
    h.update(nonce);
    let len = 21 + 32 + 8 + 8 + label.len() + 8 + value.len() + 16;
    webmpc_core::count::add(webmpc_core::count::Op::ShaBlock, webmpc_core::count::sha256_blocks(len));
    h.finalize().into()
}

impl<C: Channel> Net<C> {
    /// The control stream of `mux` for session `session`.
    pub fn new(mux: &Rc<Mux<C>>, session: [u8; 32]) -> Net<C> {
        let mut transcript = Sha256::new();
        transcript.update(b"webmpc/spdz/transcript/v1");
        transcript.update(session);
        Net { ctl: Sub::new(mux, stream::CONTROL), mux: mux.clone(), session, transcript, absorbed: 25 + 32 }
    }

    /// The multiplexed channel.
    pub fn mux(&self) -> &Rc<Mux<C>> {
        &self.mux
    }

    /// This party's index.
    pub fn me(&self) -> PartyId {
        self.ctl.party()
    }

    /// The number of parties.
    pub fn n(&self) -> usize {
        self.ctl.parties()
    }

    /// The other parties, in increasing order.
    pub fn peers(&self) -> Vec<PartyId> {
        let me = self.me();
        (0..self.n()).filter(|&j| j != me).collect()
    }

    /// Sends `msgs[j]` to every peer j and receives one message from each, concurrently.
    /// Returns the received messages indexed by party (`None` at this party's own index).
    pub async fn exchange(&self, msgs: Vec<Option<Vec<u8>>>) -> Result<Vec<Option<Vec<u8>>>, SpdzError> {
        let me = self.me();
        let ctl = &self.ctl;
        let sends = msgs
            .into_iter()
            .enumerate()
            .filter(|(j, _)| *j != me)
            .map(|(j, m)| async move { ctl.send(j, m.unwrap_or_default()).await });
        let recvs = self.peers().into_iter().map(|j| async move {
            let m = ctl.recv(j).await?;
            if m.len() > MAX_CONTROL_BYTES {
                return Err(webmpc_core::channel::ChannelError::TooLarge {
                    peer: j,
                    got: m.len(),
                    max: MAX_CONTROL_BYTES,
                });
            }
            Ok((j, m))
        });
        let (_, got) = futures::future::try_join(try_join_all(sends), try_join_all(recvs)).await?;
        let mut out: Vec<Option<Vec<u8>>> = (0..self.n()).map(|_| None).collect();
        for (j, m) in got {
            out[j] = Some(m);
        }
        Ok(out)
    }

    /// Sends the same message to every peer; returns every peer's message.
    pub async fn broadcast(&self, msg: Vec<u8>) -> Result<Vec<Option<Vec<u8>>>, SpdzError> {
        let me = self.me();
        let msgs = (0..self.n()).map(|j| (j != me).then(|| msg.clone())).collect();
        self.exchange(msgs).await
    }

    /// Broadcasts a vector of field elements and returns every party's vector (this party's own
    /// included), each checked to have `len` canonical elements.
    pub async fn broadcast_elems<F: Field>(
        &self,
        mine: &[F],
        len_of: impl Fn(PartyId) -> usize,
    ) -> Result<Vec<Vec<F>>, SpdzError> {
        let got = self.broadcast(F::write_vec(mine)).await?;
        let me = self.me();
        got.into_iter()
            .enumerate()
            .map(|(j, m)| {
                if j == me {
                    return Ok(mine.to_vec());
                }
                let m = m.expect("a message from every peer");
                decode_elems(j, &m, len_of(j), "vector of field elements")
            })
            .collect()
    }

    /// Absorbs public data into the broadcast transcript.
    pub fn absorb(&mut self, label: &[u8], data: &[u8]) {
        self.transcript.update((label.len() as u64).to_le_bytes());
        self.transcript.update(label);
        self.transcript.update((data.len() as u64).to_le_bytes());
        self.transcript.update(data);
        // Compressions run as whole 64-byte blocks fill up.
        let before = self.absorbed;
        self.absorbed += 16 + (label.len() + data.len()) as u64;
        webmpc_core::count::add(webmpc_core::count::Op::ShaBlock, self.absorbed / 64 - before / 64);
    }

    /// Absorbs public field elements.
    pub fn absorb_elems<F: Field>(&mut self, label: &[u8], xs: &[F]) {
        self.absorb(label, &F::write_vec(xs));
    }

    /// The transcript hash so far.
    pub fn transcript(&self) -> [u8; 32] {
        // Finalizing compresses the buffered tail with the padding.
        webmpc_core::count::add(webmpc_core::count::Op::ShaBlock, webmpc_core::count::sha256_blocks(self.absorbed as usize % 64));
        self.transcript.clone().finalize().into()
    }

    /// Commits to `value` towards every peer, then (after every peer's commitment arrived) opens
    /// it; returns every party's opened value, each checked against its commitment.
    /// `value_len` is the length every peer's value must have.
    pub async fn commit_and_open(
        &self,
        label: &'static [u8],
        value: Vec<u8>,
        value_len: usize,
    ) -> Result<Vec<Vec<u8>>, SpdzError> {
        let me = self.me();
        let mut nonce = [0u8; 16];
        random::fill(&mut nonce)?;
        let c = commitment(&self.session, me, label, &value, &nonce);
        let commits = self.broadcast(c.to_vec()).await?;
        let mut theirs = vec![[0u8; 32]; self.n()];
        for (j, m) in commits.into_iter().enumerate() {
            if let Some(m) = m {
                theirs[j] = m.try_into().map_err(|_| SpdzError::Malformed { peer: j, what: "commitment" })?;
            }
        }
        let mine = Opening { value, nonce };
        let mut msg = mine.value.clone();
        msg.extend_from_slice(&mine.nonce);
        let opened = self.broadcast(msg).await?;
        let mut out = Vec::with_capacity(self.n());
        for (j, m) in opened.into_iter().enumerate() {
            if j == me {
                out.push(mine.value.clone());
                continue;
            }
            let m = m.expect("a message from every peer");
            if m.len() != value_len + 16 {
                return Err(SpdzError::Malformed { peer: j, what: "commitment opening" });
            }
            let (v, n) = m.split_at(value_len);
            let n: [u8; 16] = n.try_into().expect("16 bytes");
            if commitment(&self.session, j, label, v, &n) != theirs[j] {
                return Err(SpdzError::CheatingDetected { peer: j, check: "commitment opening" });
            }
            out.push(v.to_vec());
        }
        Ok(out)
    }

    /// Commits to a fresh random seed share now; [`Net::open_coin`] later yields the public
    /// coin (a PRG) once the values it must not depend on are fixed.
    pub async fn commit_coin(&self, label: &'static [u8]) -> Result<CoinCommitment, SpdzError> {
        let mut coins = self.commit_coins(&[label]).await?;
        Ok(coins.pop().expect("one coin"))
    }

    /// Commits to several coins in one round (one 32-byte commitment each, sent together); each
    /// is opened on its own with [`Net::open_coin`], when what it tests is fixed. Labels name the
    /// coins' purposes and separate their domains from other commitments; coins of one purpose
    /// may share a label (the online phase's checks do): each opening is checked against its
    /// own slot's commitment, which binds it to that slot's seed.
    pub async fn commit_coins(&self, labels: &[&'static [u8]]) -> Result<Vec<CoinCommitment>, SpdzError> {
        let me = self.me();
        let mut mine = Vec::with_capacity(labels.len());
        let mut msg = Vec::with_capacity(32 * labels.len());
        for &label in labels {
            let seed = random::random_block()?;
            let mut nonce = [0u8; 16];
            random::fill(&mut nonce)?;
            msg.extend_from_slice(&commitment(&self.session, me, label, &seed.0, &nonce));
            mine.push((label, seed, nonce));
        }
        let commits = self.broadcast(msg).await?;
        let mut theirs = vec![vec![[0u8; 32]; self.n()]; labels.len()];
        for (j, m) in commits.into_iter().enumerate() {
            if let Some(m) = m {
                if m.len() != 32 * labels.len() {
                    return Err(SpdzError::Malformed { peer: j, what: "coin commitment" });
                }
                for (k, c) in m.chunks_exact(32).enumerate() {
                    theirs[k][j] = c.try_into().expect("32 bytes");
                }
            }
        }
        Ok(mine
            .into_iter()
            .zip(theirs)
            .map(|((label, seed, nonce), theirs)| CoinCommitment { label, seed, nonce, theirs })
            .collect())
    }

    /// Opens a coin committed with [`Net::commit_coin`]: one round.
    pub async fn open_coin(&mut self, coin: CoinCommitment) -> Result<Prg, SpdzError> {
        let me = self.me();
        let mut msg = coin.seed.0.to_vec();
        msg.extend_from_slice(&coin.nonce);
        let opened = self.broadcast(msg).await?;
        let mut seed = coin.seed;
        for (j, m) in opened.into_iter().enumerate() {
            if j == me {
                continue;
            }
            let m = m.expect("a message from every peer");
            if m.len() != 32 {
                return Err(SpdzError::Malformed { peer: j, what: "coin opening" });
            }
            let (s, n) = m.split_at(16);
            let n: [u8; 16] = n.try_into().expect("16 bytes");
            if commitment(&self.session, j, coin.label, s, &n) != coin.theirs[j] {
                return Err(SpdzError::CheatingDetected { peer: j, check: "coin commitment opening" });
            }
            seed ^= Block(s.try_into().expect("16 bytes"));
        }
        self.absorb(b"coin", &seed.0);
        Ok(Prg::from_seed(seed))
    }

    /// Commit, then open, a coin at once (when nothing needs to happen in between).
    pub async fn coin(&mut self, label: &'static [u8]) -> Result<Prg, SpdzError> {
        let c = self.commit_coin(label).await?;
        self.open_coin(c).await
    }
}

/// This party's part of a committed coin, and every peer's commitment.
pub struct CoinCommitment {
    label: &'static [u8],
    seed: Block,
    nonce: [u8; 16],
    theirs: Vec<[u8; 32]>,
}

/// Decodes exactly `len` canonical field elements from a peer's message.
pub fn decode_elems<F: Field>(peer: PartyId, m: &[u8], len: usize, what: &'static str) -> Result<Vec<F>, SpdzError> {
    if m.len() != 16 * len {
        return Err(SpdzError::Malformed { peer, what });
    }
    F::read_vec(m).ok_or(SpdzError::Malformed { peer, what })
}
