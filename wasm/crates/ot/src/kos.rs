//! KOS malicious OT extension (Keller–Orsu–Scholl, CRYPTO 2015; consistency check of the revised
//! version, eprint 2015/546 Fig. 10), driven over a [`Channel`]. The math is in `kos_core`.
//!
//! **Security.** Malicious security with abort against either party, for a static adversary:
//! the receiver's matrix is checked (the consistency check) before the sender releases anything
//! derived from a chunk, and the sender's only messages are a challenge seed and, for chosen and
//! correlated OT, hashed ciphertexts. The check has one known leakage, proven tolerable in the
//! revised paper and pinned by `tests/malicious.rs`
//! (`one_inconsistent_row_is_caught_exactly_when_that_delta_bit_is_set`): a receiver that makes
//! row i inconsistent passes iff Δ_i = 0, so it learns bits of Δ by *guessing* them, each guess
//! halving its chance of not being caught. That is harmless for one instance (a wrong guess
//! aborts it, and k right guesses succeed with probability 2^-k), but it adds up across instances
//! that share Δ: **a Δ must never be reused after an abort.** An instance poisons itself on
//! failure (below); whoever chose Δ must also discard it.
//!
//! **Δ.** [`KosSender::setup_random`] draws Δ from the platform CSPRNG and allows every output
//! kind. [`KosSender::setup`] takes the caller's Δ (nonzero: with Δ = 0 the receiver would get
//! both messages) for **Δ-OT only** (`cot_stream`, `send_cot`), the unhashed outputs protocols
//! such as authenticated garbling build on, where one party's global Δ is shared by its sender
//! instances towards every peer. Hashed outputs (random, correlated, chosen-message OT) of a
//! caller-chosen Δ are refused with `INVALID_ARGUMENT` unless the instance was set up with the
//! explicit opt-in [`KosSender::setup_hashed_with_delta`]: a Δ that is reused, predictable or
//! zero turns hashed OT into no OT at all (the receiver who knows Δ gets `H(T_j ⊕ Δ)`, the other
//! message), so the caller must vouch for it.
//!
//! One instance is set up per ordered pair (sender, receiver): the roles of the 128 base OTs are
//! reversed (the extension sender is the base-OT receiver, choosing the bits of Δ). After that,
//! each call extends in **chunks** of at most `chunk_size` OTs (default 2^16). Each chunk is
//! three messages — the receiver's matrix `u`, the sender's challenge seed, the receiver's check
//! answer — and the sender releases nothing from a chunk before its check passes. Memory is
//! bounded by the chunk, so `random_stream` can produce 10^8 OTs through a callback.
//! [`cot_duplex`] runs the two instances of a pair (one each way) at once and pipelines their
//! chunks: three flights per window of [`DUPLEX_WINDOW_OTS`] OTs instead of six per chunk.
//!
//! **Tweaks.** Hashed outputs use `tccr(x, tweak)` (TMMO, Guo–Katz–Wang–Yu) with
//! `tweak = tag · 2^64 + counter`: `tag` is a hash of the session id and both party indices, and
//! `counter` counts every hashed OT of the instance across calls and chunks. Tweaks therefore
//! never repeat within an instance, and differ across sessions and peers. TCCR is what the
//! hashing needs: the two inputs `Q_j` and `Q_j ⊕ Δ` are correlated by the secret Δ (correlation
//! robustness), and a malicious receiver may choose its rows so that inputs repeat across OTs,
//! which the per-OT tweak defeats. Δ-OT outputs are not hashed (globally correlated OT needs no
//! correlation-robust hash) and use no tweaks.
//!
//! **Why two AES calls per hash, not one.** TMMO costs two fixed-key AES calls, and hashing is
//! two thirds of a random OT's AES (the roofline: 9 AES blocks per random OT, both parties, 6 of
//! them in TMMO). We looked for a construction with one call per hash and a published proof
//! that covers this use, and found none that applies:
//! * GKWY's one-call hashes, MMO^π (CR) and MMO-hat^π_σ (CCR, Section VII), are not tweakable.
//!   Putting the tweak into their input, `π(σ(x) ⊕ i) ⊕ σ(x) ⊕ i`, is not TCR against an
//!   adversary who chooses the inputs: it can make `σ(x_j) ⊕ j` equal across OTs, and a
//!   malicious KOS receiver chooses its rows (up to Δ) — the MASCOT attack of GKWY App. C in
//!   another guise. Their tweakable construction, TMMO^π, is the one with a theorem (TCCR,
//!   proven in App. B; concrete bound O((pq + q²)/2^128), App. D), and it needs two calls.
//! * A one-AES hash with a theorem does exist: Guo–Katz–Wang–Weng–Yu's MITCCR (CRYPTO 2020),
//!   `π_{s ⊕ i}(σ(x)) ⊕ σ(x)` with an AES key per tweak, secure in the ideal-cipher model (what
//!   emp-ot's IKNP hashes with). It pays a key expansion per tweak (shared by the sender's two
//!   hashes of an OT; the receiver needs its own). Our key expansion (scalar schedule, then
//!   slicing) runs at 0.55 M keys/s against 21 M AES blocks/s in the roofline, so as it stands
//!   MITCCR would make random OT slower. With a bitsliced expansion of 8 keys at once (about
//!   ten S-box layers, ~¾ of an encryption per key) a random OT would cost about
//!   3 + 3 + 2·0.75 = 7.5 AES-equivalents instead of 9: at most +20% on the ceiling, for a new
//!   multi-key cipher kernel. Not done in this round; the roofline shows the bound.
//!
//! **Passes.** A chunk is processed in groups of 16 column blocks (2,048 OTs; `kos_core::GROUP`):
//! the sender expands a group's rows, adds them to the check's compressed rows (GF(2^128) inner
//! products accumulated unreduced, `Gf128Coefficients::accumulate`), transposes them and hashes
//! the keys while the group is in cache; the receiver does the same after sending `u`. Nothing
//! computed from a chunk leaves the instance before the sender's check has passed (the sender's
//! challenge is drawn after `u` has arrived, so it can be sent before the expansion).
//!
//! **Reverse instances.** Two parties that need OT extension in both directions (each party
//! the sender of one instance, as in authenticated garbling's pairwise Δ-OT) need not run the
//! public-key base OTs twice: [`KosSender::derive_reverse`] and [`KosReceiver::derive_reverse`]
//! turn 128 random OTs of an existing instance into the base OTs of the instance in the opposite
//! direction (Beaver's derandomisation). The existing receiver, who becomes the reverse
//! instance's sender with its Δ′, holds random choices c and m_c; it sends d = c ⊕ Δ′ (128 bits),
//! and the existing sender orders its pair (m_0, m_1) by d, so the new sender's seed for base OT k
//! is the one for choice bit Δ′_k. Why it is as good as fresh base OTs: c is uniform and hidden
//! from the existing sender (KOS hides the receiver's choices; the check's masking block hides
//! them from the check), so d reveals nothing about Δ′; the seeds m_{1−c} the new sender must not
//! learn are `tccr(Q ⊕ Δ, tweak)` for the existing instance's Δ, pseudorandom to whoever does not
//! know Δ (tweakable correlation robustness, unique tweaks from this instance's counter); a
//! malicious existing sender choosing its m's, or a malicious receiver choosing its c, is what
//! endemic base OT allows anyway. The random OTs are hashed with the existing instance's Δ even
//! when it was chosen by the caller ([`KosSender::setup`]): that needs Δ uniformly random and
//! secret, which Δ-OT with the instance needs already (its receiver who knew Δ could forge every
//! key). One chunk of 128 OTs plus 16 bytes, instead of 128 more group operations per side.
//!
//! **Failure.** Any error (a failed check, a malformed or missing message) poisons the instance:
//! its PRG streams may be out of step with the peer's, so every later call fails with the same
//! kind of error instead of producing outputs.

use crate::kos_core::{
    challenges, chunk_width, pack_bits, receiver_expand_grouped, receiver_fused, sender_fused,
    sender_verify_compressed, KAPPA,
};
use crate::{
    base, check_delta, hashed_outputs_refused, try_vec, CotReceiver, CotSender, OtError, OtReceiver, OtSender,
    RotReceiver, RotSender, SessionId,
};
use sha2::{Digest, Sha256};
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::hash::Hasher;
use webmpc_core::prg::Prg;
use webmpc_core::{random, Block};

/// OTs per chunk unless configured: 1 MiB of matrix per message.
pub const DEFAULT_CHUNK: usize = 1 << 16;
/// Largest allowed chunk (16 MiB matrices).
pub const MAX_CHUNK: usize = 1 << 20;
/// Blocks in the receiver's answer to the check: x and one per row.
const ANSWER_BLOCKS: usize = KAPPA + 1;

/// The per-instance tweak source.
#[derive(Debug, Clone)]
struct Tweaks {
    tag: u64,
    next: u64,
}

impl Tweaks {
    fn new(sid: &SessionId, sender: PartyId, receiver: PartyId) -> Self {
        let mut h = Sha256::new();
        h.update(b"webmpc/ot/kos/tweak-tag/v1");
        h.update(sid.0);
        h.update((sender as u64).to_le_bytes());
        h.update((receiver as u64).to_le_bytes());
        let d = h.finalize();
        let tag = u64::from_le_bytes(d[..8].try_into().expect("8 bytes"));
        Tweaks { tag, next: 0 }
    }

    /// The tweak the next hashed OT will use.
    fn peek(&self) -> u128 {
        ((self.tag as u128) << 64) | self.next as u128
    }

    /// Reserves `n` consecutive tweaks and returns the first.
    fn take(&mut self, n: usize) -> Result<u128, OtError> {
        let base = self.peek();
        self.next = self
            .next
            .checked_add(n as u64)
            .ok_or_else(|| OtError::InvalidArgument("OT extension instance exhausted its 2^64 tweaks".into()))?;
        Ok(base)
    }
}

fn hash_rows(rows: &[Block], tweak_base: u128) -> Vec<Block> {
    let mut out = vec![Block::ZERO; rows.len()];
    // The range fits: the base's low half plus a chunk never passes 2^64 (checked in `take`).
    Hasher::fixed().tccr_many_counter(rows, tweak_base, &mut out).expect("tweak range checked");
    out
}

/// The sender's two hashes of a group of keys `K_j` (offset `off` in its chunk, tweaks from
/// `tweak`): `h0[off + j] = tccr(K_j, tweak + off + j)`, `h1[off + j] = tccr(K_j ⊕ Δ, same tweak)`.
fn hash_pair(
    keys: &[Block],
    delta: Block,
    tweak: u128,
    off: usize,
    h0: &mut [Block],
    h1: &mut [Block],
    flipped: &mut Vec<Block>,
) {
    let h = Hasher::fixed();
    let tweak = tweak + off as u128;
    h.tccr_many_counter(keys, tweak, &mut h0[off..off + keys.len()]).expect("tweak range checked");
    flipped.clear();
    flipped.extend(keys.iter().map(|k| *k ^ delta));
    h.tccr_many_counter(flipped, tweak, &mut h1[off..off + keys.len()]).expect("tweak range checked");
}

/// The receiver's choice row of a chunk of `n` OTs padded to `m`: `choices` for the first bits
/// (`None`: all random). Padding and the extra block are random: the extra block masks x in the
/// check.
fn choice_row(n: usize, m: usize, choices: Option<&[bool]>) -> Result<Vec<Block>, OtError> {
    let mut r = vec![Block::ZERO; m / 128];
    random::fill(Block::slice_as_bytes_mut(&mut r))?;
    if let Some(c) = choices {
        let chosen = pack_bits(c, m);
        // Keep the random bits from position n on; take the chosen ones below n.
        for (k, (r, c)) in r.iter_mut().zip(&chosen).enumerate() {
            let lo = k * 128;
            let keep_random = if n >= lo + 128 {
                0u128
            } else if n <= lo {
                !0u128
            } else {
                !0u128 << (n - lo)
            };
            *r = Block::from_u128((r.to_u128() & keep_random) | (c.to_u128() & !keep_random));
        }
    }
    Ok(r)
}

/// `(offset, length)` of the chunks `n` OTs are extended in.
fn chunk_ranges(n: usize, chunk: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(chunk).map(move |done| (done, chunk.min(n - done)))
}

fn check_chunk_size(n: usize) -> Result<usize, OtError> {
    if n == 0 || n > MAX_CHUNK || n % 128 != 0 {
        return Err(OtError::InvalidArgument(format!(
            "chunk size {n} must be a positive multiple of 128 of at most {MAX_CHUNK}"
        )));
    }
    Ok(n)
}

fn poisoned() -> OtError {
    OtError::InvalidArgument("this OT extension instance failed earlier and cannot be used again".into())
}

/// Converts a received byte message into blocks (lengths were checked by `recv_exact`).
fn blocks(bytes: &[u8]) -> Vec<Block> {
    Block::slice_from_bytes(bytes).expect("length is a multiple of 16").to_vec()
}

fn bytes(blocks: &[Block]) -> Vec<u8> {
    Block::slice_as_bytes(blocks).to_vec()
}

/// KOS sender: holds Δ and one PRG per base OT.
pub struct KosSender<C> {
    ch: C,
    peer: PartyId,
    delta: Block,
    /// Whether hashed outputs may be produced from Δ (see the module docs on Δ).
    hashed_ok: bool,
    prgs: Vec<Prg>,
    tweaks: Tweaks,
    chunk: usize,
    poisoned: bool,
}

impl<C: Channel> KosSender<C> {
    /// Runs the base OTs with `peer` (as base-OT receiver choosing the bits of `delta`), for
    /// **Δ-OT only** with the caller's `delta`, e.g. a party's global Δ shared by its instances
    /// towards every peer. `delta` must be nonzero; hashed outputs are refused (see the module
    /// docs). After an abort of this or any other instance using `delta`, discard `delta`.
    pub async fn setup(ch: C, peer: PartyId, sid: &SessionId, delta: Block) -> Result<Self, OtError> {
        Self::setup_with(ch, peer, sid, delta, false).await
    }

    /// Runs the base OTs with a uniformly random Δ from the platform CSPRNG; every output kind is
    /// available. The right choice unless the caller needs to know or share Δ.
    pub async fn setup_random(ch: C, peer: PartyId, sid: &SessionId) -> Result<Self, OtError> {
        let delta = random::random_block()?;
        Self::setup_with(ch, peer, sid, delta, true).await
    }

    /// **Explicit opt-in**: the caller's `delta` for every output kind, hashed ones (random,
    /// correlated, chosen-message OT) included. The caller vouches that `delta` is uniformly
    /// random, secret, and never used again once any instance holding it has aborted: each abort
    /// can cost a bit of Δ, and a receiver that learns Δ learns both messages of every hashed OT.
    pub async fn setup_hashed_with_delta(ch: C, peer: PartyId, sid: &SessionId, delta: Block) -> Result<Self, OtError> {
        Self::setup_with(ch, peer, sid, delta, true).await
    }

    async fn setup_with(ch: C, peer: PartyId, sid: &SessionId, delta: Block, hashed_ok: bool) -> Result<Self, OtError> {
        ch.check_peer(peer)?;
        check_delta(delta)?;
        let bits = delta.to_u128();
        let choices: Vec<bool> = (0..KAPPA).map(|i| (bits >> i) & 1 == 1).collect();
        let mut seeds = base::receive(&ch, peer, &sid.derive(b"kos/base"), &choices).await?;
        let sender = Self::from_seeds(ch, peer, sid, delta, hashed_ok, &seeds);
        Block::wipe(&mut seeds);
        Ok(sender)
    }

    /// The instance whose base OTs gave `seeds[i]` for choice bit i of `delta`.
    fn from_seeds(ch: C, peer: PartyId, sid: &SessionId, delta: Block, hashed_ok: bool, seeds: &[Block]) -> Self {
        let prgs = seeds.iter().map(|s| Prg::from_seed(*s)).collect();
        let tweaks = Tweaks::new(sid, ch.party(), peer);
        KosSender { ch, peer, delta, hashed_ok, prgs, tweaks, chunk: DEFAULT_CHUNK, poisoned: false }
    }

    /// Sets up the **reverse** instance with the same peer — the peer sends, this party receives,
    /// over `ch` with id `sid` — from 128 random OTs of this instance instead of fresh base OTs
    /// (see *Reverse instances* in the module docs). The peer calls
    /// [`KosReceiver::derive_reverse`] at the same point. Three messages of one KOS chunk, then
    /// the peer's 16-byte correction.
    pub async fn derive_reverse(&mut self, ch: C, sid: &SessionId) -> Result<KosReceiver<C>, OtError> {
        ch.check_peer(self.peer)?;
        let mut q = self.chunk(KAPPA).await?;
        let tweak = self.tweaks.take(KAPPA)?;
        let mut m0 = hash_rows(&q, tweak);
        for k in q.iter_mut() {
            *k ^= self.delta;
        }
        let mut m1 = hash_rows(&q, tweak);
        Block::wipe(&mut q);
        self.poisoned = true;
        let d = self.ch.recv_exact(self.peer, KAPPA / 8).await?;
        self.poisoned = false;
        // Seed k for choice b is m_{b ⊕ d_k}: swap the pair where d_k = 1 (a mask, not a branch).
        let mut seeds: Vec<[Block; 2]> = (0..KAPPA)
            .map(|k| {
                let swap = Block::mask_from_bit((d[k / 8] >> (k % 8)) & 1);
                let x = (m0[k] ^ m1[k]) & swap;
                [m0[k] ^ x, m1[k] ^ x]
            })
            .collect();
        Block::wipe(&mut m0);
        Block::wipe(&mut m1);
        let receiver = KosReceiver::from_seeds(ch, self.peer, sid, &seeds);
        for s in seeds.iter_mut() {
            Block::wipe(s);
        }
        Ok(receiver)
    }

    /// Whether this instance may produce hashed outputs (random Δ, or the explicit opt-in).
    pub fn hashed_outputs_allowed(&self) -> bool {
        self.hashed_ok
    }

    fn check_hashed(&self) -> Result<(), OtError> {
        if self.hashed_ok {
            Ok(())
        } else {
            Err(hashed_outputs_refused())
        }
    }

    /// Sets the chunk size (a multiple of 128, at most [`MAX_CHUNK`]); both parties must agree.
    pub fn set_chunk_size(&mut self, n: usize) -> Result<(), OtError> {
        self.chunk = check_chunk_size(n)?;
        Ok(())
    }

    /// The channel, e.g. to read its byte counters.
    pub fn channel(&self) -> &C {
        &self.ch
    }

    /// The first tweak the next hashed OT will use (for tests of tweak uniqueness).
    pub fn next_tweak(&self) -> u128 {
        self.tweaks.peek()
    }

    /// One chunk of `n` Δ-OTs: the keys `K_j` (`= Q_j`), released only after the check passed.
    async fn chunk(&mut self, n: usize) -> Result<Vec<Block>, OtError> {
        let mut keys = Vec::new();
        self.chunk_with(n, &mut keys, |_, _| {}).await?;
        Ok(keys)
    }

    /// One chunk of `n` Δ-OTs into `keys`, in one fused pass per group of columns (expansion,
    /// the check's compression, transposition, then `group(offset, keys)` on the group's new
    /// keys, e.g. to hash them while they are in cache; see `kos_core::sender_fused`). Whatever
    /// `group` computes must stay with the caller unless this returns `Ok`: the check comes last.
    async fn chunk_with(
        &mut self,
        n: usize,
        keys: &mut Vec<Block>,
        group: impl FnMut(usize, &[Block]),
    ) -> Result<(), OtError> {
        if self.poisoned {
            return Err(poisoned());
        }
        self.poisoned = true;
        let m = chunk_width(n);
        let u = blocks(&self.ch.recv_exact(self.peer, KAPPA * m / 8).await?);
        // The challenge is drawn after `u` has arrived, so it may go out before the rows are
        // expanded (the receiver is committed to `u` either way).
        let seed = random::random_block()?;
        self.ch.send(self.peer, seed.0.to_vec()).await?;
        let chi = challenges(seed, m);
        let compressed = sender_fused(&mut self.prgs, self.delta, &u, m, n, &chi, keys, group);
        let answer = blocks(&self.ch.recv_exact(self.peer, ANSWER_BLOCKS * 16).await?);
        if !sender_verify_compressed(self.delta, &compressed, &answer) {
            Block::wipe(keys);
            return Err(OtError::CheatingDetected { peer: self.peer, check: "KOS consistency check" });
        }
        keys.truncate(n);
        self.poisoned = false;
        Ok(())
    }

    /// Streams `n` Δ-OT keys in chunks: `f(offset, keys)`.
    pub async fn cot_stream(&mut self, n: usize, mut f: impl FnMut(usize, &[Block])) -> Result<(), OtError> {
        for (done, len) in chunk_ranges(n, self.chunk) {
            let keys = self.chunk(len).await?;
            f(done, &keys);
        }
        Ok(())
    }

    /// Streams `n` random OTs: `f(offset, m0, m1)`. Needs hashed outputs (see the module docs).
    pub async fn random_stream(
        &mut self,
        n: usize,
        mut f: impl FnMut(usize, &[Block], &[Block]),
    ) -> Result<(), OtError> {
        self.check_hashed()?;
        let (mut keys, mut m0, mut m1, mut flipped) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let delta = self.delta;
        for (done, len) in chunk_ranges(n, self.chunk) {
            let tweak = self.tweaks.take(len)?;
            m0.resize(len, Block::ZERO);
            m1.resize(len, Block::ZERO);
            self.chunk_with(len, &mut keys, |off, k| hash_pair(k, delta, tweak, off, &mut m0, &mut m1, &mut flipped))
                .await?;
            f(done, &m0[..len], &m1[..len]);
        }
        Block::wipe(&mut keys);
        Block::wipe(&mut flipped);
        Ok(())
    }

    /// Correlated and chosen-message OT share this: per chunk, the hashes of `Q_j` and
    /// `Q_j ⊕ Δ`, then `make(offset, h0, h1)` builds the message to send and the local output.
    async fn hashed_then_send(
        &mut self,
        n: usize,
        mut make: impl FnMut(usize, &[Block], &[Block]) -> Vec<u8>,
    ) -> Result<(), OtError> {
        self.check_hashed()?;
        let (mut keys, mut h0, mut h1, mut flipped) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let delta = self.delta;
        for (done, len) in chunk_ranges(n, self.chunk) {
            let tweak = self.tweaks.take(len)?;
            h0.resize(len, Block::ZERO);
            h1.resize(len, Block::ZERO);
            self.chunk_with(len, &mut keys, |off, k| hash_pair(k, delta, tweak, off, &mut h0, &mut h1, &mut flipped))
                .await?;
            let msg = make(done, &h0[..len], &h1[..len]);
            self.poisoned = true;
            self.ch.send(self.peer, msg).await?;
            self.poisoned = false;
        }
        Ok(())
    }
}

impl<C: Channel> CotSender for KosSender<C> {
    fn delta(&self) -> Block {
        self.delta
    }

    async fn send_cot(&mut self, n: usize) -> Result<Vec<Block>, OtError> {
        let mut out = try_vec("Δ-OT count", n)?;
        self.cot_stream(n, |_, k| out.extend_from_slice(k)).await?;
        Ok(out)
    }
}

impl<C: Channel> RotSender for KosSender<C> {
    async fn send_random(&mut self, n: usize) -> Result<Vec<[Block; 2]>, OtError> {
        self.check_hashed()?;
        let mut out = try_vec("random OT count", n)?;
        self.random_stream(n, |_, m0, m1| out.extend(m0.iter().zip(m1).map(|(a, b)| [*a, *b]))).await?;
        Ok(out)
    }
}

impl<C: Channel> OtSender for KosSender<C> {
    async fn send_chosen(&mut self, messages: &[[Block; 2]]) -> Result<(), OtError> {
        self.hashed_then_send(messages.len(), |off, h0, h1| {
            let mut y = Vec::with_capacity(32 * h0.len());
            for ((m, a), b) in messages[off..off + h0.len()].iter().zip(h0).zip(h1) {
                y.extend_from_slice(&(m[0] ^ *a).0);
                y.extend_from_slice(&(m[1] ^ *b).0);
            }
            y
        })
        .await
    }

    async fn send_correlated(&mut self, correlations: &[Block]) -> Result<Vec<Block>, OtError> {
        self.check_hashed()?;
        let mut out = try_vec("correlated OT count", correlations.len())?;
        self.hashed_then_send(correlations.len(), |off, h0, h1| {
            let mut d = Vec::with_capacity(16 * h0.len());
            for ((x, a), b) in correlations[off..off + h0.len()].iter().zip(h0).zip(h1) {
                out.push(*a);
                d.extend_from_slice(&(*a ^ *x ^ *b).0);
            }
            d
        })
        .await?;
        Ok(out)
    }
}

/// KOS receiver: holds both base keys per base OT.
pub struct KosReceiver<C> {
    ch: C,
    peer: PartyId,
    prgs: Vec<[Prg; 2]>,
    tweaks: Tweaks,
    chunk: usize,
    poisoned: bool,
}

impl<C: Channel> KosReceiver<C> {
    /// Runs the base OTs with `peer` (as base-OT sender).
    pub async fn setup(ch: C, peer: PartyId, sid: &SessionId) -> Result<Self, OtError> {
        ch.check_peer(peer)?;
        let mut seeds = base::send(&ch, peer, &sid.derive(b"kos/base"), KAPPA).await?;
        let receiver = Self::from_seeds(ch, peer, sid, &seeds);
        for s in seeds.iter_mut() {
            Block::wipe(s);
        }
        Ok(receiver)
    }

    /// The instance whose base OTs gave the seed pairs `seeds`.
    fn from_seeds(ch: C, peer: PartyId, sid: &SessionId, seeds: &[[Block; 2]]) -> Self {
        let prgs = seeds.iter().map(|[a, b]| [Prg::from_seed(*a), Prg::from_seed(*b)]).collect();
        let tweaks = Tweaks::new(sid, peer, ch.party());
        KosReceiver { ch, peer, prgs, tweaks, chunk: DEFAULT_CHUNK, poisoned: false }
    }

    /// Sets up the **reverse** instance with the same peer — this party sends with the nonzero
    /// `delta` (Δ-OT only, as [`KosSender::setup`]), the peer receives — over `ch` with id `sid`,
    /// from 128 random OTs of this instance instead of fresh base OTs (see *Reverse instances* in
    /// the module docs). The peer calls [`KosSender::derive_reverse`] at the same point.
    pub async fn derive_reverse(&mut self, ch: C, sid: &SessionId, delta: Block) -> Result<KosSender<C>, OtError> {
        ch.check_peer(self.peer)?;
        check_delta(delta)?;
        let (c, t) = self.chunk(KAPPA, None).await?;
        let tweak = self.tweaks.take(KAPPA)?;
        let mut m = hash_rows(&t, tweak);
        // d = c ⊕ Δ: the peer's pair for base OT k is then ordered by Δ_k.
        let bits = delta.to_u128();
        let mut d = [0u8; KAPPA / 8];
        for (k, &ck) in c.iter().enumerate() {
            d[k / 8] |= ((ck as u8) ^ ((bits >> k) & 1) as u8) << (k % 8);
        }
        self.poisoned = true;
        self.ch.send(self.peer, d.to_vec()).await?;
        self.poisoned = false;
        let sender = KosSender::from_seeds(ch, self.peer, sid, delta, false, &m);
        Block::wipe(&mut m);
        Ok(sender)
    }

    /// Sets the chunk size (a multiple of 128, at most [`MAX_CHUNK`]); both parties must agree.
    pub fn set_chunk_size(&mut self, n: usize) -> Result<(), OtError> {
        self.chunk = check_chunk_size(n)?;
        Ok(())
    }

    /// The channel, e.g. to read its byte counters.
    pub fn channel(&self) -> &C {
        &self.ch
    }

    /// The first tweak the next hashed OT will use (for tests of tweak uniqueness).
    pub fn next_tweak(&self) -> u128 {
        self.tweaks.peek()
    }

    /// One chunk: `choices` gives the first bits of the choice row (`None`: all random). Returns
    /// the choice bits used and `T_j` (`= K_j ⊕ b_j·Δ`).
    async fn chunk(&mut self, n: usize, choices: Option<&[bool]>) -> Result<(Vec<bool>, Vec<Block>), OtError> {
        let mut macs = Vec::new();
        let used = self.chunk_with(n, choices, &mut macs, |_, _| {}).await?;
        Ok((used, macs))
    }

    /// [`chunk`](Self::chunk) into `macs`, with the check's compression, the transposition and
    /// `group(offset, macs)` fused per group of columns (see `kos_core::receiver_fused`). Returns
    /// the choice bits used.
    async fn chunk_with(
        &mut self,
        n: usize,
        choices: Option<&[bool]>,
        macs: &mut Vec<Block>,
        group: impl FnMut(usize, &[Block]),
    ) -> Result<Vec<bool>, OtError> {
        if self.poisoned {
            return Err(poisoned());
        }
        self.poisoned = true;
        let m = chunk_width(n);
        let r = choice_row(n, m, choices)?;
        let (u, mut t) = receiver_expand_grouped(&mut self.prgs, &r, m);
        self.ch.send(self.peer, bytes(&u)).await?;
        drop(u);
        let seed = Block(self.ch.recv_exact(self.peer, 16).await?.try_into().expect("16 bytes"));
        let chi = challenges(seed, m);
        let answer = receiver_fused(&chi, &r, &t, m, n, macs, group);
        Block::wipe(&mut t);
        self.ch.send(self.peer, bytes(&answer)).await?;
        macs.truncate(n);
        let bits = Block::slice_as_bytes(&r);
        let used = (0..n).map(|j| (bits[j / 8] >> (j % 8)) & 1 == 1).collect();
        self.poisoned = false;
        Ok(used)
    }

    /// Streams Δ-OTs for `choices`: `f(offset, macs)`.
    pub async fn cot_stream(&mut self, choices: &[bool], mut f: impl FnMut(usize, &[Block])) -> Result<(), OtError> {
        for (done, len) in chunk_ranges(choices.len(), self.chunk) {
            let (_, macs) = self.chunk(len, Some(&choices[done..done + len])).await?;
            f(done, &macs);
        }
        Ok(())
    }

    /// Streams `n` random OTs: `f(offset, choices, m_choice)`.
    pub async fn random_stream(
        &mut self,
        n: usize,
        mut f: impl FnMut(usize, &[bool], &[Block]),
    ) -> Result<(), OtError> {
        let (mut macs, mut out) = (Vec::new(), Vec::new());
        for (done, len) in chunk_ranges(n, self.chunk) {
            let tweak = self.tweaks.take(len)?;
            out.resize(len, Block::ZERO);
            let bits = self
                .chunk_with(len, None, &mut macs, |off, t| {
                    let dst = &mut out[off..off + t.len()];
                    Hasher::fixed().tccr_many_counter(t, tweak + off as u128, dst).expect("tweak range checked");
                })
                .await?;
            f(done, &bits, &out[..len]);
        }
        Block::wipe(&mut macs);
        Ok(())
    }

    /// Chosen-message and correlated OT: per chunk, receives `width` blocks per OT from the
    /// sender and `pick(choice, hash, received)` gives the output.
    async fn hashed_then_receive(
        &mut self,
        choices: &[bool],
        width: usize,
        pick: impl Fn(bool, Block, &[Block]) -> Block,
    ) -> Result<Vec<Block>, OtError> {
        let mut out = try_vec("OT count", choices.len())?;
        let (mut macs, mut h) = (Vec::new(), Vec::new());
        for (done, len) in chunk_ranges(choices.len(), self.chunk) {
            let tweak = self.tweaks.take(len)?;
            h.resize(len, Block::ZERO);
            let bits = self
                .chunk_with(len, Some(&choices[done..done + len]), &mut macs, |off, t| {
                    let dst = &mut h[off..off + t.len()];
                    Hasher::fixed().tccr_many_counter(t, tweak + off as u128, dst).expect("tweak range checked");
                })
                .await?;
            self.poisoned = true;
            let y = blocks(&self.ch.recv_exact(self.peer, 16 * width * len).await?);
            self.poisoned = false;
            out.extend(bits.iter().zip(&h).zip(y.chunks_exact(width)).map(|((b, h), y)| pick(*b, *h, y)));
        }
        Ok(out)
    }
}

/// Most OTs per direction that one window of [`cot_duplex`] holds in flight: 8 default chunks,
/// so a window's U message is about 8 MiB (a channel's message limit is 64 MiB). Its memory per
/// pair is about 48 bytes per OT (the receiver's matrix T, the peer's matrix U and the keys not
/// yet released), 24 MiB at this size.
pub const DUPLEX_WINDOW_OTS: usize = 1 << 19;

/// Δ-OT in **both directions of a pair at once**, chunks pipelined: `sender` (this party's Δ,
/// `choices.len()` keys to `keys_out`) and `receiver` (this party's `choices`, the tags to
/// `macs_out`) are the two instances with one peer, over clones of one channel, with one chunk
/// size; the peer calls `cot_duplex` at the same point with its own two instances, as many
/// choices and a head of the same length. Outputs are those of [`KosSender::cot_stream`] and
/// [`KosReceiver::cot_stream`] run one after the other (each instance's PRGs advance chunk by
/// chunk in the same order).
///
/// **Why.** Run one after the other, each chunk of each direction costs three one-way flights
/// (U, the challenge, the answer), six per chunk for the pair. Nothing of a chunk waits for
/// another chunk or for the other direction: a receiver's U depends on its choices and base-OT
/// seeds only, a sender's challenge only on the U it answers. So both parties send every U of a
/// window (of [`DUPLEX_WINDOW_OTS`] OTs), then every challenge, then every answer: **three
/// flights per window** for both directions. Each instance's own order, and so its security, is
/// unchanged: a chunk's challenge is drawn after its U arrived, the receiver answers only the
/// challenge it received, and no key of a chunk is released before its check passed.
///
/// **One message per flight.** Each flight is a single message each way (the window's U's, its
/// challenges, its answers, concatenated), sent before the peer's is read — the pattern of a
/// symmetric exchange, which a flow-controlled channel always lets through (a message larger
/// than the credit window goes alone); several messages each way could both wait for credit
/// the other party only grants by reading.
///
/// `head`: bytes of the caller's protocol that share the first flight: they lead this party's
/// first message, and the peer's first message leads with as many, returned. `check_head` sees
/// the peer's head before anything else of its first message is looked at, and its error ends
/// the call: that message is read whole whatever its length, so a peer whose head differs (a
/// caller's agreement on parameters, say, which may also change the body's length) is told
/// apart by the caller's check, not by a length error, and nothing of the flight is left on the
/// channel. It is handed what the peer sent of the head (less than `head.len()` bytes if its
/// message is that short). On any error both instances are poisoned.
pub async fn cot_duplex<C: Channel, E: From<OtError>>(
    sender: &mut KosSender<C>,
    receiver: &mut KosReceiver<C>,
    choices: &[bool],
    head: &[u8],
    check_head: impl Fn(&[u8]) -> Result<(), E>,
    mut keys_out: impl FnMut(usize, &[Block]),
    mut macs_out: impl FnMut(usize, &[Block]),
) -> Result<Vec<u8>, E> {
    let peer = sender.peer;
    // Every failure below is the OT's own, but for the caller's check of the peer's head.
    let ot = |e: OtError| E::from(e);
    if receiver.peer != peer || sender.chunk != receiver.chunk {
        return Err(OtError::InvalidArgument("cot_duplex takes the two instances of one pair, with one chunk size".into()).into());
    }
    if sender.poisoned || receiver.poisoned {
        return Err(poisoned().into());
    }
    sender.poisoned = true;
    receiver.poisoned = true;
    let ranges: Vec<(usize, usize)> = chunk_ranges(choices.len(), sender.chunk).collect();
    let per_window = (DUPLEX_WINDOW_OTS / sender.chunk).max(1);
    let mut their_head = Vec::new();
    let mut first = true;
    // An empty call still carries the heads.
    let windows: Vec<&[(usize, usize)]> = if ranges.is_empty() { vec![&[]] } else { ranges.chunks(per_window).collect() };
    for window in windows {
        let u_bytes: Vec<usize> = window.iter().map(|&(_, len)| KAPPA * chunk_width(len) / 8).collect();
        // Flight 1: this party's matrices, as receiver (after the head, in the first window).
        let lead = if first { head.len() } else { 0 };
        let mut msg = Vec::with_capacity(lead + u_bytes.iter().sum::<usize>());
        msg.extend_from_slice(&head[..lead]);
        let mut rows = Vec::with_capacity(window.len());
        for &(off, len) in window {
            let m = chunk_width(len);
            let r = choice_row(len, m, Some(&choices[off..off + len])).map_err(ot)?;
            let (u, t) = receiver_expand_grouped(&mut receiver.prgs, &r, m);
            msg.extend_from_slice(Block::slice_as_bytes(&u));
            rows.push((r, t));
        }
        receiver.ch.send(peer, msg).await.map_err(|e| ot(e.into()))?;
        let body = u_bytes.iter().sum::<usize>();
        let theirs = if first {
            let theirs = sender.ch.recv(peer).await.map_err(|e| ot(e.into()))?;
            check_head(&theirs[..lead.min(theirs.len())])?;
            if theirs.len() != lead + body {
                return Err(ot(ChannelError::UnexpectedLength { peer, expected: lead + body, got: theirs.len() }.into()));
            }
            their_head = theirs[..lead].to_vec();
            first = false;
            theirs
        } else {
            sender.ch.recv_exact(peer, body).await.map_err(|e| ot(e.into()))?
        };
        if window.is_empty() {
            break;
        }
        // Flight 2: a challenge for each of the peer's matrices, drawn after they arrived.
        let mut seeds = Vec::with_capacity(window.len());
        for _ in window {
            seeds.push(random::random_block().map_err(|e| ot(e.into()))?);
        }
        sender.ch.send(peer, bytes(&seeds)).await.map_err(|e| ot(e.into()))?;
        // The sender's expansion while the challenges travel; its keys stay here until checked.
        let mut pending = Vec::with_capacity(window.len());
        let mut at = lead;
        for ((&(_, len), &nb), seed) in window.iter().zip(&u_bytes).zip(&seeds) {
            let m = chunk_width(len);
            let u = blocks(&theirs[at..at + nb]);
            at += nb;
            let mut keys = Vec::new();
            let compressed = sender_fused(&mut sender.prgs, sender.delta, &u, m, len, &challenges(*seed, m), &mut keys, |_, _| {});
            pending.push((compressed, keys));
        }
        drop(theirs);
        // Flight 3: the answers to the peer's challenges.
        let their_seeds = blocks(&sender.ch.recv_exact(peer, 16 * window.len()).await.map_err(|e| ot(e.into()))?);
        let mut answers = Vec::with_capacity(window.len() * ANSWER_BLOCKS);
        for ((&(off, len), (r, mut t)), seed) in window.iter().zip(rows).zip(their_seeds) {
            let m = chunk_width(len);
            let mut macs = Vec::new();
            answers.extend(receiver_fused(&challenges(seed, m), &r, &t, m, len, &mut macs, |_, _| {}));
            Block::wipe(&mut t);
            macs.truncate(len);
            macs_out(off, &macs);
        }
        receiver.ch.send(peer, bytes(&answers)).await.map_err(|e| ot(e.into()))?;
        // The peer's answers: each chunk's keys leave only after its check passed.
        let their_answers = blocks(&sender.ch.recv_exact(peer, 16 * ANSWER_BLOCKS * window.len()).await.map_err(|e| ot(e.into()))?);
        for ((&(off, len), (compressed, mut keys)), answer) in
            window.iter().zip(pending).zip(their_answers.chunks_exact(ANSWER_BLOCKS))
        {
            if !sender_verify_compressed(sender.delta, &compressed, answer) {
                Block::wipe(&mut keys);
                return Err(ot(OtError::CheatingDetected { peer, check: "KOS consistency check" }));
            }
            keys.truncate(len);
            keys_out(off, &keys);
        }
    }
    sender.poisoned = false;
    receiver.poisoned = false;
    Ok(their_head)
}

impl<C: Channel> CotReceiver for KosReceiver<C> {
    async fn receive_cot(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        let mut out = try_vec("Δ-OT count", choices.len())?;
        self.cot_stream(choices, |_, m| out.extend_from_slice(m)).await?;
        Ok(out)
    }
}

impl<C: Channel> RotReceiver for KosReceiver<C> {
    async fn receive_random(&mut self, n: usize) -> Result<(Vec<bool>, Vec<Block>), OtError> {
        let mut bits = try_vec("random OT count", n)?;
        let mut out = try_vec("random OT count", n)?;
        self.random_stream(n, |_, b, m| {
            bits.extend_from_slice(b);
            out.extend_from_slice(m);
        })
        .await?;
        Ok((bits, out))
    }
}

impl<C: Channel> OtReceiver for KosReceiver<C> {
    async fn receive_chosen(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        self.hashed_then_receive(choices, 2, |b, h, y| {
            let mask = Block::mask_from_bit(b as u8);
            h ^ (y[0] & !mask) ^ (y[1] & mask)
        })
        .await
    }

    async fn receive_correlated(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError> {
        self.hashed_then_receive(choices, 1, |b, h, d| h ^ (d[0] & Block::mask_from_bit(b as u8))).await
    }
}
