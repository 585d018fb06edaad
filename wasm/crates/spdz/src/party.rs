//! One MASCOT party: session setup, Π_[[·]] (authentication with the input check), the MAC check,
//! Π_Triple, input masks and random bits, over any [`Channel`] and any n ≥ 2.
//!
//! **Security.** Malicious adversary corrupting up to n − 1 parties, security with abort (UC in
//! the paper's (F_OT, F_Comm, F_Rand)-hybrid model). Honest parties either output correct
//! preprocessing or abort with a typed error; an abort may be caused by (and so reveal the
//! presence of) a cheater, never leak a secret.
//!
//! Where each check sits:
//! * **Input check (P2)**, [`Party::authenticate_own`]: every authentication includes a random
//!   dummy x_0 and ends with a MAC check of a random combination of all values (coefficients
//!   from a coin opened after COPE), catching a party that fed inconsistent x into COPE.
//! * **MAC check (P4)**, [`Party::check_sigmas`]: every party commits to its σ^(i) (and to its
//!   broadcast transcript, P9) before any is opened; Σ σ^(i) must be 0 and all transcripts equal.
//! * **Sacrifice**, [`Party::triple_batch`]: ρ = s·a − â is opened and σ = s·c − ĉ − ρ·b is
//!   checked to be 0 with a MAC check, never opened.
//! * **Coins (P3)**: all committed at the start of a batch, each opened only after what it tests
//!   is fixed (combine coefficients after Multiply, input-check and sacrifice coefficients after
//!   authentication, check coefficients after the openings).
//!
//! Work is done in bounded batches ([`Party::set_batch`]): generating 10^6 triples never holds
//! more than one batch of intermediate state, and [`Party::generate_triples`] hands finished
//! batches to a callback. Within a round, the pairwise work with every peer runs concurrently.

use crate::cope::{CopeReceiver, CopeSender, ROWS};
use crate::error::SpdzError;
use crate::field::{Field, FieldKind};
use crate::gilboa;
use crate::mux::{stream, Mux, Sub};
use crate::net::{decode_elems, CoinCommitment, Net};
use crate::rot::{RotReceiver, RotSender, Tweaks};
use crate::share::{mac_check_term, Share, Triple};
use crate::store::Store;
use crate::wipe::{wipe, Wiping};
use crate::zero::ZeroSharing;
use futures::future::{try_join, try_join_all};
use webmpc_core::channel::{Channel, PartyId};
use webmpc_core::prg::Prg;
use webmpc_core::Block;
use webmpc_ot::{KosReceiver, KosSender, SessionId};

/// τ: raw triples combined per output triple. 3 for k = 128 (Corollary 1: k/2 = 64 bits of
/// statistical security against the selective-failure leak of Multiply). Never smaller (P6).
pub const TAU: usize = 3;
/// Triples per batch unless configured.
pub const DEFAULT_BATCH: usize = 1024;
/// Largest batch. Memory per batch grows linearly: COPE's vectors u are 10 KiB per triple in each
/// direction with each peer (40 MiB per peer at this size), plus one bounded OT piece per peer.
pub const MAX_BATCH: usize = 1 << 12;
/// Products (elements of a) per Gilboa piece: 2^16 OTs, one KOS chunk, 1 MiB per message. A
/// piece is the unit of work between two messages, so it bounds how long a party computes
/// without reading or writing the network: long synchronous steps starve the event loop of a
/// JS host (a transport then declares the silent party dead) and leave the peer idle, while
/// pieces much smaller would add round trips. A default batch (1024 triples) is six pieces.
const GILBOA_PIECE: usize = 512;
/// OTs per KOS chunk (both ends set it): one Gilboa piece.
const KOS_CHUNK: usize = GILBOA_PIECE * gilboa::K;
/// Values per COPE message (1 MiB of u): each is sent as soon as it is computed, so the peer
/// works on one piece while this party computes the next.
const COPE_PIECE: usize = 512;
// The streaming Gilboa sender hands out one product's OTs per hashing step.
const _: () = assert!(crate::rot::HASH_STEP == gilboa::K);

/// The pairwise state with one peer.
struct Peer<F, C> {
    id: PartyId,
    rot_send: RotSender<KosSender<Sub<C>>>,
    rot_recv: RotReceiver<KosReceiver<Sub<C>>>,
    cope_send: CopeSender<F>,
    cope_recv: CopeReceiver<F>,
    gilboa: Sub<C>,
    cope: Sub<C>,
}

/// Counters, for benchmarks and the binding's progress reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    /// Triples generated (after sacrifice).
    pub triples: u64,
    /// Random bits generated.
    pub bits: u64,
    /// Input masks generated (all owners).
    pub masks: u64,
}

/// One party of a MASCOT session over field `F`.
pub struct Party<F: Field, C: Channel> {
    pub(crate) net: Net<C>,
    pub(crate) delta: F,
    peers: Vec<Peer<F, C>>,
    pub(crate) prg: Prg,
    /// Pairwise seeds that re-randomise the sharings made without a split (see [`crate::zero`]).
    zero: ZeroSharing,
    pub(crate) store: Store<F>,
    /// Client masks handed out and not yet used or dropped ([`crate::clients`]).
    pub(crate) clients: crate::clients::ClientMasks<F>,
    pub(crate) poisoned: bool,
    batch: usize,
    stats: Stats,
    /// Values opened in the online phase since the last check: (value, this party's MAC share).
    pub(crate) online_log: Vec<(F, F)>,
    /// Made by the trusted dealer: no OT or COPE state, so it cannot preprocess.
    ideal: bool,
    /// Test hook: a deviation this party commits (cheating-party tests only).
    #[cfg(any(test, feature = "ideal"))]
    pub(crate) cheat: crate::testing::Cheat,
}

fn elems_from(peer: PartyId, m: Option<Vec<u8>>, len: usize, what: &'static str) -> Result<Vec<u8>, SpdzError> {
    let m = m.ok_or(SpdzError::Malformed { peer, what })?;
    if m.len() != 16 * len {
        return Err(SpdzError::Malformed { peer, what });
    }
    Ok(m)
}

impl<F: Field, C: Channel> Party<F, C> {
    /// Sets up the session: a fresh Δ^(i), and with every peer (concurrently) both OT
    /// extensions (base OTs) and both COPE initialisations. `sid` must be the same for all
    /// parties and fresh for every session.
    pub async fn setup(ch: C, sid: &SessionId) -> Result<Self, SpdzError> {
        Self::setup_inner(ch, sid, None, false).await
    }

    /// [`Party::setup`] for a parallel instance of a party that already has its MAC key share:
    /// the instance uses `delta` (the party's Δ^(i), from [`Party::delta_for_instances`]) instead
    /// of drawing one, so that what it preprocesses is authenticated under the same global key
    /// and can be moved into the party's store ([`Party::take_material`], [`Party::put_material`]).
    ///
    /// **Why sharing Δ^(i) between instances is sound.** An instance runs its own base OTs, OT
    /// extensions and COPE initialisations with every peer, under its own session id (so its own
    /// tweaks), with Δ^(i)'s bits as the receiver's choices, exactly as a second session with the
    /// same key would: each base-OT set hides those choices on its own. The one thing a malicious
    /// peer could try is a selective failure that tests guesses of Δ^(i)'s bits (COPE, Multiply);
    /// any failure in any instance aborts the whole session, so guessing c bits still succeeds with
    /// probability 2^−c however the guesses are spread over instances. Every check (input check,
    /// sacrifice, MAC checks) runs inside each instance before its material leaves it.
    pub async fn setup_with_delta(ch: C, sid: &SessionId, delta: F) -> Result<Self, SpdzError> {
        Self::setup_inner(ch, sid, Some(delta), false).await
    }

    /// This party's MAC key share, to hand to its own parallel instances
    /// ([`Party::setup_with_delta`]) and to nobody else. Secret: wipe it after use.
    pub fn delta_for_instances(&self) -> F {
        self.delta
    }

    /// Takes every triple and random bit out of the store, to move them to another instance of
    /// the same party ([`Party::put_material`]): triples as (a, b, c) and bits as shares, each
    /// share as its value and MAC, 16 bytes per element. Secret: the caller wipes it.
    pub fn take_material(&mut self) -> (Vec<u8>, usize, usize) {
        let triples: Vec<Triple<F>> = self.store.triples.drain(..).collect();
        let bits: Vec<Share<F>> = self.store.bits.drain(..).collect();
        let mut out = Vec::with_capacity(96 * triples.len() + 32 * bits.len());
        for t in &triples {
            for s in [t.a, t.b, t.c] {
                out.extend_from_slice(&s.value.to_bytes());
                out.extend_from_slice(&s.mac.to_bytes());
            }
        }
        for b in &bits {
            out.extend_from_slice(&b.value.to_bytes());
            out.extend_from_slice(&b.mac.to_bytes());
        }
        let (mut triples, mut bits) = (triples, bits);
        let counts = (triples.len(), bits.len());
        wipe(&mut triples);
        wipe(&mut bits);
        (out, counts.0, counts.1)
    }

    /// Appends material taken from another instance of this party ([`Party::take_material`]):
    /// `triples` triples then `bits` bits. Every party must append the same instances' material in
    /// the same order, so that item k of every party's store is the same shared item.
    pub fn put_material(&mut self, bytes: &[u8], triples: usize, bits: usize) -> Result<(), SpdzError> {
        let bad = || SpdzError::InvalidArgument("material of the wrong length or with a non-canonical element".into());
        let need = triples.checked_mul(96).and_then(|t| bits.checked_mul(32).and_then(|b| t.checked_add(b))).ok_or_else(bad)?;
        if bytes.len() != need {
            return Err(bad());
        }
        let elems = Wiping(decode_elems::<F>(self.me(), bytes, bytes.len() / 16, "material").map_err(|_| bad())?);
        let share = |k: usize| Share { value: elems[2 * k], mac: elems[2 * k + 1] };
        for t in 0..triples {
            self.store.triples.push_back(Triple { a: share(3 * t), b: share(3 * t + 1), c: share(3 * t + 2) });
        }
        for b in 0..bits {
            self.store.bits.push_back(share(3 * triples + b));
        }
        Ok(())
    }

    /// [`Party::setup`] for a party that commits `cheat` (cheating-party tests only).
    #[cfg(any(test, feature = "ideal"))]
    pub async fn setup_cheating(ch: C, sid: &SessionId, cheat: crate::testing::Cheat) -> Result<Self, SpdzError> {
        let mut p = Self::setup_inner(ch, sid, None, cheat.wrong_delta()).await?;
        p.cheat = cheat;
        Ok(p)
    }

    async fn setup_inner(ch: C, sid: &SessionId, delta: Option<F>, wrong_delta: bool) -> Result<Self, SpdzError> {
        let n = ch.parties();
        if n < 2 || ch.party() >= n {
            return Err(SpdzError::InvalidArgument(format!("a MASCOT session needs at least 2 parties (got {n})")));
        }
        let mux = Mux::new(ch);
        let net = Net::new(&mux, sid.0);
        let me = net.me();
        let mut prg = Prg::from_entropy()?;
        let delta = match delta {
            Some(d) => d,
            None => F::random(&mut prg),
        };
        let setups = net.peers().into_iter().map(|j| {
            let mux = mux.clone();
            async move {
                let (mine, theirs) = if me < j {
                    (stream::OT_LOW_SENDS, stream::OT_HIGH_SENDS)
                } else {
                    (stream::OT_HIGH_SENDS, stream::OT_LOW_SENDS)
                };
                let kos_sid = |s: PartyId, r: PartyId| {
                    let mut label = b"spdz/kos/".to_vec();
                    label.extend_from_slice(&(s as u64).to_le_bytes());
                    label.extend_from_slice(&(r as u64).to_le_bytes());
                    sid.derive(&label)
                };
                let (mut s, mut r) = try_join(
                    KosSender::setup_random(Sub::new(&mux, mine), j, &kos_sid(me, j)),
                    KosReceiver::setup(Sub::new(&mux, theirs), j, &kos_sid(j, me)),
                )
                .await?;
                s.set_chunk_size(KOS_CHUNK)?;
                r.set_chunk_size(KOS_CHUNK)?;
                let mut rot_send = RotSender::new(s, Tweaks::new(sid, me, j));
                let mut rot_recv = RotReceiver::new(r, Tweaks::new(sid, j, me));
                // COPE Initialize both ways: towards j this party is P_A (j holds Δ^(j)); from j
                // it is P_B, choosing with the bits of its own Δ^(i).
                // (A cheating test may make this Δ differ from the one in the party's own MACs.)
                let cope_delta = if wrong_delta { delta + F::ONE } else { delta };
                // Δ's bits, the seed pairs and the chosen seeds are secrets: wiped once the COPE
                // states (which keep only their PRGs, wiped on drop) are made.
                let choices = Wiping(CopeReceiver::<F>::choice_bits(cope_delta));
                let ((m0, m1), chosen) = try_join(rot_send.send(ROWS), rot_recv.receive(&choices)).await?;
                let (m0, m1, chosen) = (Wiping(m0), Wiping(m1), Wiping(chosen));
                let pairs: Wiping<[webmpc_core::Block; 2]> =
                    Wiping(m0.iter().zip(m1.iter()).map(|(a, b)| [*a, *b]).collect());
                Ok::<_, SpdzError>(Peer {
                    id: j,
                    rot_send,
                    rot_recv,
                    cope_send: CopeSender::new(&pairs),
                    cope_recv: CopeReceiver::new(cope_delta, &chosen),
                    gilboa: Sub::new(&mux, stream::GILBOA),
                    cope: Sub::new(&mux, stream::COPE),
                })
            }
        });
        // The zero-sharing seeds travel on the control stream while the pairs run their OTs.
        let (peers, zero) = try_join(try_join_all(setups), ZeroSharing::setup(&net, &mut prg)).await?;
        Ok(Party {
            net,
            delta,
            peers,
            prg,
            zero,
            store: Store::new(n),
            clients: Default::default(),
            poisoned: false,
            batch: DEFAULT_BATCH,
            stats: Stats::default(),
            online_log: Vec::new(),
            ideal: false,
            #[cfg(any(test, feature = "ideal"))]
            cheat: crate::testing::Cheat::None,
        })
    }

    /// A party whose MAC key share and preprocessing come from the trusted dealer
    /// ([`crate::dealer`]): for testing the online phase on its own. It cannot preprocess.
    #[cfg(feature = "ideal")]
    pub fn from_dealer(ch: C, sid: &SessionId, delta: F, store: Store<F>, cheat: crate::testing::Cheat) -> Self {
        let mux = Mux::new(ch);
        let net = Net::new(&mux, sid.0);
        Party {
            net,
            delta,
            peers: Vec::new(),
            prg: Prg::from_entropy().expect("platform randomness"),
            zero: ZeroSharing::none(),
            store,
            clients: Default::default(),
            poisoned: false,
            batch: DEFAULT_BATCH,
            stats: Stats::default(),
            online_log: Vec::new(),
            ideal: true,
            cheat,
        }
    }

    /// Changes the deviation this party commits from now on (cheating-party tests only: e.g.
    /// honest triple generation, then a deviation in what uses the triples).
    #[cfg(feature = "ideal")]
    pub fn set_cheat(&mut self, cheat: crate::testing::Cheat) {
        self.cheat = cheat;
    }

    /// This party's index.
    pub fn me(&self) -> PartyId {
        self.net.me()
    }

    /// The number of parties.
    pub fn parties(&self) -> usize {
        self.net.n()
    }

    /// The channel underneath (e.g. for byte counters).
    pub fn channel(&self) -> &C {
        self.net.mux().inner()
    }

    /// Triples per batch (both parties must agree; 1..=[`MAX_BATCH`]).
    pub fn set_batch(&mut self, batch: usize) -> Result<(), SpdzError> {
        if batch == 0 || batch > MAX_BATCH {
            return Err(SpdzError::InvalidArgument(format!("batch size must be in 1..={MAX_BATCH}")));
        }
        self.batch = batch;
        Ok(())
    }

    /// What has been generated so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Δ^(i), this party's MAC key share (tests check MACs with it; feature `ideal` only).
    #[cfg(feature = "ideal")]
    pub fn delta_share(&self) -> F {
        self.delta
    }

    /// The preprocessed material available.
    pub fn store(&self) -> &Store<F> {
        &self.store
    }

    /// Runs `f` unless poisoned; poisons the party if `f` fails.
    pub(crate) async fn guarded<T>(
        &mut self,
        f: impl AsyncFnOnce(&mut Self) -> Result<T, SpdzError>,
    ) -> Result<T, SpdzError> {
        if self.poisoned {
            return Err(SpdzError::Poisoned);
        }
        self.poisoned = true;
        let out = f(self).await?;
        self.poisoned = false;
        Ok(out)
    }

    // ---------------------------------------------------------------- MAC check (Protocol 2)

    /// ΠMACCheck for a vector of checks at once: commits to this party's σ vector together with
    /// its broadcast transcript, opens after every commitment arrived, and requires every
    /// transcript to equal this party's (broadcast consistency, P9) and every column of σ to sum
    /// to 0. `phase(k)` names check k in the error.
    pub(crate) async fn check_sigmas(
        &mut self,
        sigmas: &[F],
        phase: impl Fn(usize) -> SpdzError,
    ) -> Result<(), SpdzError> {
        let transcript = self.net.transcript();
        let mut value = F::write_vec(sigmas);
        #[cfg(any(test, feature = "ideal"))]
        if let crate::testing::Cheat::WrongSigma = self.cheat {
            value[0] ^= 1;
        }
        value.extend_from_slice(&transcript);
        let len = value.len();
        let opened = self.net.commit_and_open(b"mac-check", value, len).await?;
        let mut sums = vec![F::ZERO; sigmas.len()];
        for (j, v) in opened.iter().enumerate() {
            let (s, t) = v.split_at(16 * sigmas.len());
            if t != transcript {
                return Err(SpdzError::CheatingDetected { peer: j, check: "broadcast consistency check" });
            }
            let s = decode_elems::<F>(j, s, sigmas.len(), "MAC check σ")?;
            for (acc, x) in sums.iter_mut().zip(s) {
                *acc += x;
            }
        }
        if let Some(k) = sums.iter().position(|s| *s != F::ZERO) {
            return Err(phase(k));
        }
        Ok(())
    }

    /// σ for `Check` (Protocol 3) of opened values and of values claimed to be zero: with public
    /// coefficients from `coin` (opened after the values were), σ = Σ w·m − (Σ w·y)·Δ^(i).
    pub(crate) fn opened_sigma(&self, coin: &mut Prg, opened: &[(F, F)], zero_macs: &[F]) -> F {
        let mut y = F::ZERO;
        let mut m = F::ZERO;
        for (v, mac) in opened {
            let w = F::random(coin);
            y += w * *v;
            m += w * *mac;
        }
        for mac in zero_macs {
            m += F::random(coin) * *mac;
        }
        mac_check_term(y, m, self.delta)
    }

    /// Opens shared values to everyone in one round: broadcasts this party's shares and sums.
    /// The opened values go into the transcript; the caller keeps them for a later Check.
    pub(crate) async fn open(&mut self, shares: &[Share<F>]) -> Result<Vec<F>, SpdzError> {
        #[allow(unused_mut)]
        let mut mine: Vec<F> = shares.iter().map(|s| s.value).collect();
        #[cfg(any(test, feature = "ideal"))]
        self.cheat.on_open(&mut mine);
        let me = self.me();
        let n = self.parties();
        let msgs: Vec<Option<Vec<u8>>> = (0..n)
            .map(|j| {
                (j != me).then(|| {
                    #[cfg(any(test, feature = "ideal"))]
                    {
                        let mut v = mine.clone();
                        self.cheat.on_open_to(j, &mut v);
                        F::write_vec(&v)
                    }
                    #[cfg(not(any(test, feature = "ideal")))]
                    F::write_vec(&mine)
                })
            })
            .collect();
        let got = self.net.exchange(msgs).await?;
        let mut sum = mine;
        for (j, m) in got.into_iter().enumerate() {
            if j == me {
                continue;
            }
            let m = elems_from(j, m, shares.len(), "opened shares")?;
            let theirs = decode_elems::<F>(j, &m, shares.len(), "opened shares")?;
            for (s, x) in sum.iter_mut().zip(theirs) {
                *s += x;
            }
        }
        self.net.absorb_elems(b"open", &sum);
        Ok(sum)
    }

    // ------------------------------------------------------- Π_[[·]] Input (Protocol 3), COPE

    /// One COPE round: every party authenticates its own vector (`lens[j]` values for party j,
    /// this party's being `mine`). Returns the MAC shares this party holds on every party's
    /// values: for its own, x_h·Δ^(i) + Σ_j t_h^(j); for party j's, q_h^(j). The pairs run
    /// concurrently.
    async fn cope_round(&mut self, mine: &[F], lens: &[usize]) -> Result<Vec<Vec<F>>, SpdzError> {
        let me = self.me();
        #[cfg(any(test, feature = "ideal"))]
        let cheat = self.cheat.clone();
        let works = self.peers.iter_mut().map(|p| {
            let l_peer = lens[p.id];
            let Peer { id, cope_send, cope_recv, cope, .. } = p;
            let (id, cope) = (*id, &*cope);
            #[cfg(any(test, feature = "ideal"))]
            let cheat = cheat.clone();
            // As P_A: this party's values, piece by piece, each u sent as soon as it is ready.
            let send = async move {
                let mut t = Vec::with_capacity(mine.len());
                for (_k, piece) in mine.chunks(COPE_PIECE).enumerate() {
                    let mut msg = Vec::with_capacity(16 * ROWS * piece.len() + 1);
                    t.extend(cope_send.extend_into(piece, &mut msg));
                    #[cfg(any(test, feature = "ideal"))]
                    if _k == 0 {
                        cheat.on_cope::<F>(id, &mut msg);
                    }
                    cope.send(id, msg).await?;
                }
                Ok::<_, SpdzError>(t)
            };
            // As P_B: the peer's values, in the same pieces.
            let recv = async move {
                let mut q = Vec::with_capacity(l_peer);
                while q.len() < l_peer {
                    let l = COPE_PIECE.min(l_peer - q.len());
                    let got = cope.recv(id).await?;
                    let piece = cope_recv
                        .extend_bytes(&got, l)
                        .ok_or(SpdzError::Malformed { peer: id, what: "COPE vector u" })?;
                    q.extend(piece);
                }
                Ok::<_, SpdzError>(q)
            };
            async move {
                let (t, q) = try_join(send, recv).await?;
                Ok::<_, SpdzError>((id, t, q))
            }
        });
        let results = try_join_all(works).await?;
        let mut macs: Vec<Vec<F>> = (0..self.parties()).map(|_| Vec::new()).collect();
        let mut own: Vec<F> = mine.iter().map(|x| *x * self.delta).collect();
        for (j, t, q) in results {
            for (m, t) in own.iter_mut().zip(t) {
                *m += t;
            }
            macs[j] = q;
        }
        macs[me] = own;
        Ok(macs)
    }

    /// Π_[[·]].Input of every party's own values at once, without resharing (each party's
    /// value share is its own value; the others hold share 0). Authenticate of Π_Triple needs
    /// exactly that (each party's a, b, c are already its additive shares); a caller that makes
    /// a sharing of one party's value (input masks, GF(2^128) bits) must re-randomise it with
    /// [`crate::zero`] before storing it. Party j inputs `lens[j]` values; this party's are `mine`.
    ///
    /// A random dummy x_0 is authenticated with the values (P2). After COPE, the coin `coin` is
    /// opened; every party broadcasts y_j = Σ_h r_{j,h}·x_{j,h} and each computes
    /// σ_j = Σ_h r_{j,h}·m_{j,h} − y_j·Δ^(i). Returns the MAC shares (dummy removed) and the
    /// σ_j, to be verified by [`Self::check_sigmas`] (with whatever else the caller checks).
    pub(crate) async fn authenticate_own(
        &mut self,
        mine: &[F],
        lens: &[usize],
        coin: CoinCommitment,
    ) -> Result<(Vec<Vec<F>>, Vec<F>), SpdzError> {
        let me = self.me();
        debug_assert_eq!(lens[me], mine.len());
        let mut xs = Vec::with_capacity(mine.len() + 1);
        xs.push(F::random(&mut self.prg));
        xs.extend_from_slice(mine);
        let lens1: Vec<usize> = lens.iter().map(|l| l + 1).collect();
        let macs = self.cope_round(&xs, &lens1).await?;
        let mut coins = self.net.open_coin(coin).await?;
        let coefs: Vec<Vec<F>> = lens1
            .iter()
            .map(|&l| {
                let mut r = vec![F::ZERO; l];
                F::random_fill(&mut coins, &mut r);
                r
            })
            .collect();
        let y_me = coefs[me].iter().zip(&xs).fold(F::ZERO, |acc, (r, x)| acc + *r * *x);
        let all = self.net.broadcast_elems(&[y_me], |_| 1).await?;
        let mut sigmas = Vec::with_capacity(self.parties());
        for (j, v) in all.into_iter().enumerate() {
            self.net.absorb_elems(b"input-check y", &v);
            let m = coefs[j].iter().zip(&macs[j]).fold(F::ZERO, |acc, (r, m)| acc + *r * *m);
            sigmas.push(mac_check_term(v[0], m, self.delta));
        }
        let macs = macs.into_iter().map(|mut m| m.split_off(1)).collect();
        Ok((macs, sigmas))
    }

    // ------------------------------------------------------------- Π_Triple (Protocol 4)

    /// Multiply for `count` triples: this party's a^(i) ∈ F^{τ·count}, b^(i) ∈ F^count and its
    /// share of c = a·b ∈ F^{τ·count}, via Gilboa products over random OT with every peer (both
    /// directions at once).
    async fn multiply(&mut self, count: usize) -> Result<(Vec<F>, Vec<F>, Vec<F>), SpdzError> {
        let mut a = vec![F::ZERO; TAU * count];
        let mut b = vec![F::ZERO; count];
        F::random_fill(&mut self.prg, &mut a);
        F::random_fill(&mut self.prg, &mut b);
        let mut c: Vec<F> = a.iter().enumerate().map(|(e, x)| *x * b[e / TAU]).collect();
        #[cfg(any(test, feature = "ideal"))]
        let cheat = self.cheat.clone();
        let (a_ref, b_ref) = (&a, &b);
        let works = self.peers.iter_mut().map(|p| {
            #[cfg(any(test, feature = "ideal"))]
            let cheat = cheat.clone();
            let Peer { id, rot_send, rot_recv, gilboa, .. } = p;
            let (id, gilboa) = (*id, &*gilboa);
            let total = a_ref.len();
            const K: usize = gilboa::K;
            // This party as OT receiver (its a, the peer's b).
            let recv_side = async move {
                let mut out = Vec::with_capacity(total);
                for piece in a_ref.chunks(GILBOA_PIECE) {
                    let mut m = rot_recv.receive(&gilboa::choice_bits(piece)).await?;
                    let got = gilboa.recv(id).await?;
                    let malformed = SpdzError::Malformed { peer: id, what: "Gilboa corrections" };
                    if got.len() != 16 * K * piece.len() {
                        Block::wipe(&mut m);
                        return Err(malformed);
                    }
                    let mut d = [F::ZERO; K];
                    for (e, (x, bytes)) in piece.iter().zip(got.chunks_exact(16 * K)).enumerate() {
                        for (d, b) in d.iter_mut().zip(bytes.chunks_exact(16)) {
                            match F::from_bytes(b.try_into().expect("16 bytes")) {
                                Some(v) => *d = v,
                                None => {
                                    Block::wipe(&mut m);
                                    return Err(malformed);
                                }
                            }
                        }
                        out.push(gilboa::receiver_product(*x, &m[e * K..(e + 1) * K], &d));
                    }
                    Block::wipe(&mut m);
                }
                Ok::<_, SpdzError>(out)
            };
            // This party as OT sender (the peer's a, its b): each product's corrections go
            // straight into the outgoing message as its OTs are hashed.
            let send_side = async move {
                let mut out = Vec::with_capacity(total);
                for start in (0..total).step_by(GILBOA_PIECE) {
                    let len = GILBOA_PIECE.min(total - start);
                    let mut msg = Vec::with_capacity(16 * K * len + 1);
                    rot_send
                        .send_with(K * len, |off, h0, h1| {
                            let b = b_ref[(start + off / K) / TAU];
                            out.push(gilboa::sender_product(h0, h1, b, |_, d| msg.extend_from_slice(&d.to_bytes())));
                        })
                        .await?;
                    #[cfg(any(test, feature = "ideal"))]
                    cheat.on_gilboa_d::<F>(id, &mut msg);
                    gilboa.send(id, msg).await?;
                }
                Ok::<_, SpdzError>(out)
            };
            try_join(recv_side, send_side)
        });
        for (r, s) in try_join_all(works).await? {
            for ((c, r), s) in c.iter_mut().zip(r).zip(s) {
                *c += r + s;
            }
        }
        #[cfg(any(test, feature = "ideal"))]
        self.cheat.on_product(&mut c);
        Ok((a, b, c))
    }

    /// One batch of `count` triples: Multiply, Combine, Authenticate, Sacrifice.
    async fn triple_batch(&mut self, count: usize) -> Result<Vec<Triple<F>>, SpdzError> {
        let n = self.parties();
        // Coins: combine (after Multiply), input check + sacrifice s (after authentication),
        // check coefficients (after ρ is opened). All committed now, each opened when due.
        let [c_combine, c_auth, c_check]: [CoinCommitment; 3] = self
            .net
            .commit_coins(&[b"triple/combine", b"triple/auth", b"triple/check"])
            .await?
            .try_into()
            .map_err(|_| SpdzError::InvalidArgument("three coins".into()))?;
        let (a, b, c) = self.multiply(count).await?;
        let (a, b, c) = (Wiping(a), Wiping(b), Wiping(c));
        // Combine: a = ⟨a, r⟩, c = ⟨c, r⟩, â = ⟨a, r̂⟩, ĉ = ⟨c, r̂⟩ with the same b.
        let mut coin = self.net.open_coin(c_combine).await?;
        let mut mine = Wiping(Vec::with_capacity(5 * count));
        for t in 0..count {
            let (mut a1, mut c1, mut a2, mut c2) = (F::ZERO, F::ZERO, F::ZERO, F::ZERO);
            for u in 0..TAU {
                let (r, rh) = (F::random(&mut coin), F::random(&mut coin));
                a1 += r * a[t * TAU + u];
                c1 += r * c[t * TAU + u];
                a2 += rh * a[t * TAU + u];
                c2 += rh * c[t * TAU + u];
            }
            mine.extend_from_slice(&[a1, b[t], c1, a2, c2]);
        }
        // Authenticate the five values of every party (COPE); then one coin gives the input-check
        // coefficients and the sacrifice's s, and ρ = s·a − â is opened in the same round as the
        // input-check broadcast.
        let lens = vec![5 * count; n];
        let (macs, mut sigmas, rho_shares, rho_macs, s) =
            self.authenticate_and_rho(&mine, &lens, c_auth, count).await?;
        // Sum the per-inputter authentications into [[a]], [[b]], [[c]], [[â]], [[ĉ]]: this party's
        // value share is its own value, its MAC share the sum over inputters.
        let share = |h: usize| Share { value: mine[h], mac: macs.iter().fold(F::ZERO, |acc, m| acc + m[h]) };
        let mut opened = Vec::with_capacity(count);
        let mut zeros = Vec::with_capacity(count);
        let mut out = Vec::with_capacity(count);
        for t in 0..count {
            let (sa, sb, sc, _sah, sch) =
                (share(5 * t), share(5 * t + 1), share(5 * t + 2), share(5 * t + 3), share(5 * t + 4));
            let rho = rho_shares[t];
            opened.push((rho, rho_macs[t]));
            // [[σ]] = s·[[c]] − [[ĉ]] − ρ·[[b]], claimed to be 0.
            let sigma = sc.scale(s[t]) - sch - sb.scale(rho);
            zeros.push(sigma.mac);
            out.push(Triple { a: sa, b: sb, c: sc });
        }
        let mut check = self.net.open_coin(c_check).await?;
        sigmas.push(self.opened_sigma(&mut check, &opened, &zeros));
        self.check_sigmas(&sigmas, |k| {
            if k < n {
                SpdzError::MacCheckFailed { phase: "input check" }
            } else {
                SpdzError::SacrificeFailed
            }
        })
        .await?;
        Ok(out)
    }

    /// Authentication of the five values per triple with the sacrifice's ρ opened in the
    /// input-check round. Returns the MAC shares per inputter, the input-check σs, the opened ρ,
    /// this party's MAC shares of ρ, and the sacrifice coefficients s.
    #[allow(clippy::type_complexity)]
    async fn authenticate_and_rho(
        &mut self,
        mine: &[F],
        lens: &[usize],
        coin: CoinCommitment,
        count: usize,
    ) -> Result<(Vec<Vec<F>>, Vec<F>, Vec<F>, Vec<F>, Vec<F>), SpdzError> {
        let me = self.me();
        let mut xs = Vec::with_capacity(mine.len() + 1);
        xs.push(F::random(&mut self.prg));
        xs.extend_from_slice(mine);
        let lens1: Vec<usize> = lens.iter().map(|l| l + 1).collect();
        let macs = self.cope_round(&xs, &lens1).await?;
        let mut coins = self.net.open_coin(coin).await?;
        let coefs: Vec<Vec<F>> = lens1
            .iter()
            .map(|&l| {
                let mut r = vec![F::ZERO; l];
                F::random_fill(&mut coins, &mut r);
                r
            })
            .collect();
        let mut s = vec![F::ZERO; count];
        F::random_fill(&mut coins, &mut s);
        let y_me = coefs[me].iter().zip(&xs).fold(F::ZERO, |acc, (r, x)| acc + *r * *x);
        // ρ_t = s_t·[[a_t]] − [[â_t]]; values and MACs (a at 5t, â at 5t + 3; +1 for the dummy).
        let mac_of = |h: usize| macs.iter().fold(F::ZERO, |acc, m| acc + m[h + 1]);
        let mut rho_vals = Vec::with_capacity(count);
        let mut rho_macs = Vec::with_capacity(count);
        for t in 0..count {
            rho_vals.push(s[t] * mine[5 * t] - mine[5 * t + 3]);
            rho_macs.push(s[t] * mac_of(5 * t) - mac_of(5 * t + 3));
        }
        #[cfg(any(test, feature = "ideal"))]
        self.cheat.on_open(&mut rho_vals);
        let mut msg = vec![y_me];
        msg.extend_from_slice(&rho_vals);
        let all = self.net.broadcast_elems(&msg, |_| 1 + count).await?;
        let mut sigmas = Vec::with_capacity(self.parties());
        let mut rho = vec![F::ZERO; count];
        for (j, v) in all.iter().enumerate() {
            self.net.absorb_elems(b"input-check y", &v[..1]);
            let m = coefs[j].iter().zip(&macs[j]).fold(F::ZERO, |acc, (r, m)| acc + *r * *m);
            sigmas.push(mac_check_term(v[0], m, self.delta));
            for (r, x) in rho.iter_mut().zip(&v[1..]) {
                *r += *x;
            }
        }
        self.net.absorb_elems(b"open", &rho);
        let macs = macs.into_iter().map(|mut m| m.split_off(1)).collect();
        Ok((macs, sigmas, rho, rho_macs, s))
    }

    /// Generates `n` triples in batches, handing each finished (checked) batch to `sink`;
    /// memory stays bounded by one batch. `progress(done, n)` after each batch.
    pub async fn generate_triples(
        &mut self,
        n: usize,
        mut sink: impl FnMut(Vec<Triple<F>>),
        mut progress: impl FnMut(usize, usize),
    ) -> Result<(), SpdzError> {
        if self.ideal && n > 0 {
            return Err(SpdzError::InvalidArgument("a dealer-made party cannot preprocess".into()));
        }
        self.guarded(async |p| {
            let mut done = 0;
            while done < n {
                let k = p.batch.min(n - done);
                let t = p.triple_batch(k).await?;
                p.stats.triples += k as u64;
                done += k;
                sink(t);
                progress(done, n);
            }
            Ok(())
        })
        .await
    }

    /// Adds `n` triples to the store.
    pub async fn preprocess_triples(&mut self, n: usize, progress: impl FnMut(usize, usize)) -> Result<(), SpdzError> {
        let mut got = Vec::new();
        self.generate_triples(n, |t| got.extend(t), progress).await?;
        self.store.triples.extend(got);
        Ok(())
    }

    // ------------------------------------------------------------------ input masks

    /// Generates input masks: `counts[j]` for each party j ([[r]] with r known to j), with the
    /// input check. Appended to the store.
    ///
    /// Runs in rounds of at most 5·batch masks per party (the COPE message of one triple batch's
    /// authentication, so no message grows with the request: ≈ 10 MiB per peer at the default
    /// batch), each round with its own dummy value, coin and input check.
    pub async fn preprocess_masks(&mut self, counts: &[usize]) -> Result<(), SpdzError> {
        if counts.len() != self.parties() {
            return Err(SpdzError::InvalidArgument("one mask count per party".into()));
        }
        if counts.iter().all(|&c| c == 0) {
            return Ok(());
        }
        if self.ideal {
            return Err(SpdzError::InvalidArgument("a dealer-made party cannot preprocess".into()));
        }
        let per_round = 5 * self.batch;
        let mut left = counts.to_vec();
        while left.iter().any(|&c| c > 0) {
            let round: Vec<usize> = left.iter().map(|&c| c.min(per_round)).collect();
            self.guarded(async |p| p.mask_round(&round).await).await?;
            for (l, r) in left.iter_mut().zip(&round) {
                *l -= r;
            }
        }
        Ok(())
    }

    /// One round of [`Party::preprocess_masks`]: `counts[j]` masks for each party j.
    async fn mask_round(&mut self, counts: &[usize]) -> Result<(), SpdzError> {
        let me = self.me();
        let coin = self.net.commit_coin(b"masks").await?;
        let mut mine = crate::wipe::Wiping(vec![F::ZERO; counts[me]]);
        F::random_fill(&mut self.prg, &mut mine);
        let (macs, sigmas) = self.authenticate_own(&mine, counts, coin).await?;
        self.check_sigmas(&sigmas, |_| SpdzError::MacCheckFailed { phase: "input check" }).await?;
        // Π_[[·]] step 2: the owner's r becomes a random additive sharing (zero-sharing added),
        // so opening anything linear in r shows no party's contribution (see `crate::zero`).
        let mut values = Wiping(Vec::with_capacity(counts.iter().sum()));
        for (j, &c) in counts.iter().enumerate() {
            if j == me {
                values.extend_from_slice(&mine);
            } else {
                values.extend(core::iter::repeat_n(F::ZERO, c));
            }
        }
        self.zero.rerandomise(&mut values);
        let mut values = values.iter();
        for (j, macs_j) in macs.iter().enumerate() {
            for (h, mac) in macs_j.iter().enumerate() {
                let value = *values.next().expect("one value per MAC");
                let known = (j == me).then(|| mine[h]);
                self.store.masks[j].push_back((Share { value, mac: *mac }, known));
            }
        }
        self.stats.masks += counts.iter().sum::<usize>() as u64;
        Ok(())
    }

    // ------------------------------------------------------------------ random bits

    /// Generates `n` random shared bits, appending them to the store. Takes triples from the
    /// store (generating more if needed).
    ///
    /// * F_p: from a triple (a, b, c), open d = a − b; then [[a²]] = [[c]] + d·[[a]] (since
    ///   a² = a·b + a·d); open s = a² (s ≠ 0 except with probability 1/p, and such a triple is
    ///   skipped); with the canonical root v = √s, a/v = ±1 with a uniform sign, so
    ///   [[bit]] = (v⁻¹·[[a]] + 1)/2. One triple per bit.
    /// * GF(2^128): every party authenticates a random bit of its own; the sum is a bit iff all
    ///   the summands are 0 or 1 (an adversary's sum outside {0, 1} fails whatever the honest bit
    ///   was, so the check leaks nothing); it is checked with a triple: b·b − b opened against 0
    ///   through the MAC check, b·b by Beaver. One triple per bit.
    ///
    /// Everything opened is MAC-checked before the bits are stored.
    pub async fn preprocess_bits(&mut self, n: usize, mut progress: impl FnMut(usize, usize)) -> Result<(), SpdzError> {
        if self.ideal && n > 0 {
            return Err(SpdzError::InvalidArgument("a dealer-made party cannot preprocess".into()));
        }
        let mut done = 0;
        while done < n {
            let k = self.batch.min(n - done);
            if self.store.triples.len() < k {
                let need = k - self.store.triples.len();
                self.preprocess_triples(need, |_, _| {}).await?;
            }
            let got = self.guarded(async |p| p.bit_batch(k).await).await?;
            done += got;
            self.stats.bits += got as u64;
            progress(done.min(n), n);
        }
        Ok(())
    }

    async fn bit_batch(&mut self, k: usize) -> Result<usize, SpdzError> {
        let triples: Vec<Triple<F>> = self.store.triples.drain(..k).collect();
        let coin = self.net.commit_coin(b"bits/check").await?;
        let me = self.me();
        let delta = self.delta;
        let mut opened: Vec<(F, F)> = Vec::new();
        let mut zeros: Vec<F> = Vec::new();
        let mut bits = Vec::with_capacity(k);
        match F::KIND {
            FieldKind::Prime => {
                let d_sh: Vec<Share<F>> = triples.iter().map(|t| t.a - t.b).collect();
                let d = self.open(&d_sh).await?;
                let sq: Vec<Share<F>> = triples.iter().zip(&d).map(|(t, d)| t.c + t.a.scale(*d)).collect();
                let s = self.open(&sq).await?;
                opened.extend(d.iter().zip(&d_sh).map(|(v, sh)| (*v, sh.mac)));
                opened.extend(s.iter().zip(&sq).map(|(v, sh)| (*v, sh.mac)));
                let two_inv = (F::ONE + F::ONE).invert().expect("p is odd");
                for (t, s) in triples.iter().zip(&s) {
                    let Some(v) = s.sqrt() else {
                        return Err(SpdzError::MacCheckFailed {
                            phase: "random bit generation (a non-square was opened)",
                        });
                    };
                    let Some(vi) = v.invert() else { continue };
                    bits.push(t.a.scale(vi * two_inv).add_const(two_inv, me, delta));
                }
            }
            FieldKind::Binary => {
                let n = self.parties();
                let auth_coin = self.net.commit_coin(b"bits/auth").await?;
                let mine: Vec<F> = (0..k).map(|_| F::from_u64((self.prg.next_block().0[0] & 1) as u64)).collect();
                #[cfg(any(test, feature = "ideal"))]
                let mine = self.cheat.own_bits(mine);
                let (macs, sigmas) = self.authenticate_own(&mine, &vec![k; n], auth_coin).await?;
                self.check_sigmas(&sigmas, |_| SpdzError::MacCheckFailed { phase: "input check" }).await?;
                // Each party's share would otherwise be its own bit: re-randomise, as for masks.
                let mut values = Wiping(mine.clone());
                self.zero.rerandomise(&mut values);
                let b: Vec<Share<F>> = (0..k)
                    .map(|h| Share { value: values[h], mac: macs.iter().fold(F::ZERO, |acc, m| acc + m[h]) })
                    .collect();
                // Beaver: ε = b − x, δ = b − y for the triple (x, y, z).
                let mut eps_delta = Vec::with_capacity(2 * k);
                for (bh, t) in b.iter().zip(&triples) {
                    eps_delta.push(*bh - t.a);
                    eps_delta.push(*bh - t.b);
                }
                let ed = self.open(&eps_delta).await?;
                opened.extend(ed.iter().zip(&eps_delta).map(|(v, sh)| (*v, sh.mac)));
                for (h, (bh, t)) in b.iter().zip(&triples).enumerate() {
                    let (e, d) = (ed[2 * h], ed[2 * h + 1]);
                    let sq = t.c + t.b.scale(e) + t.a.scale(d);
                    let sq = sq.add_const(e * d, me, delta);
                    zeros.push((sq - *bh).mac);
                    bits.push(*bh);
                }
            }
        }
        let mut coin = self.net.open_coin(coin).await?;
        let sigma = self.opened_sigma(&mut coin, &opened, &zeros);
        self.check_sigmas(&[sigma], |_| SpdzError::MacCheckFailed { phase: "random bit generation" }).await?;
        let got = bits.len();
        self.store.bits.extend(bits);
        Ok(got)
    }
}

impl<F: Field, C: Channel> Drop for Party<F, C> {
    fn drop(&mut self) {
        // Best effort: the MAC key share is the one secret whose leak breaks every MAC (each
        // peer's COPE receiver holds a copy); the stored shares are secret too.
        wipe(core::slice::from_mut(&mut self.delta));
        for p in &mut self.peers {
            p.cope_recv.wipe();
        }
        let st = &mut self.store;
        wipe(st.triples.make_contiguous());
        wipe(st.bits.make_contiguous());
        for m in &mut st.masks {
            wipe(m.make_contiguous());
        }
        wipe(&mut self.online_log);
        self.clients.wipe();
    }
}
