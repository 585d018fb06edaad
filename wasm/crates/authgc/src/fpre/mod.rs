//! The real F_Pre (WRK17 §5 and App. B): a multi-party TinyOT with BDOZ-style shares, over our KOS
//! Δ-OT, implementing [`Preprocessor`].
//!
//! # What it protects against
//!
//! Malicious security with abort against any n − 1 of the n parties, statically corrupted. A
//! cheating party can make the honest parties abort — with a typed
//! [`AuthGcError::CheatingDetected`] naming the check (and a culprit only where the check proves
//! that party deviated: abort, not identifiable abort; each site says why it can or cannot blame),
//! [`AuthGcError::Malformed`]/`MALFORMED_MESSAGE` for bytes that do not decode, or a channel error
//! for a party that disconnects — but an honest party that does not abort holds correct shares,
//! tags and keys whose values the adversary does not know beyond what F_Pre allows (its own
//! shares), except with probability about 2^{−ρ} (statistical) plus the computational terms of
//! the hash and the OT extension. After any error the instance is poisoned: every later call fails.
//!
//! # The protocol, step by step
//!
//! **Setup** ([`RealPreprocessor::setup`]). Party i draws a fresh random nonzero Δ_i
//! ([`webmpc_core::random`]) and, for every peer j, sets up the two KOS Δ-OT instances of the pair:
//! i as Δ-OT *sender* with Δ_i (j's bits get authenticated to i) and i as *receiver* (its bits get
//! authenticated to j). Each instance has its own [`SessionId`], derived from the session id, the
//! sender and the receiver. With a given peer everything runs in one order both ends agree on —
//! the instance whose sender has the smaller index first — while different peers run
//! concurrently. Only that first instance runs public-key base OTs; the second one's base OTs are
//! derived from 128 random OTs of the first ([`KosSender::derive_reverse`]: the smaller index's
//! hashed random-OT messages under its Δ, ordered by the larger index's correction bits c ⊕ Δ_j),
//! which halves setup's group operations. That hashes with Δ_i, like Π_HaAND does below: the
//! KOS tweaks (its instance tag, then a counter below 2^60) never meet this module's, whose low
//! 64 bits are at least 2^60 ([`fpre_core::tweak_base`]), so no TCCR tweak repeats under Δ_i.
//! (Parallel instances, which share Δ_i, run fresh base OTs both ways instead: see *Parallel
//! instances* below.) Only the *unhashed* Δ-OT outputs are used (`cot_stream`): K and M = K ⊕ x·Δ_i.
//! The Π_aShare global-key check (below) runs in the first batch after setup, on ρ positions
//! added to that batch's aBit run.
//!
//! **Π^n_aBit (Fig. 14)**, run by every batch: party i picks `len + p` random bits x and runs
//! the receiver side of every pair's Δ-OT with the *same* x, so each peer j holds K_j\[x_m\] and i
//! holds M_j\[x_m\] (both instances of a pair at once, chunks pipelined: [`cot_duplex`]). After
//! every Δ-OT of the batch is done the parties open coins ([`net::coin_open`]; each party's
//! share was committed in the first flight of the Δ-OTs) and expand them into k = ρ uniform
//! coefficient vectors r_j; i broadcasts the parities X_j = ⊕_m r_{j,m}·x_m and sends each peer
//! the combined tags ⊕_m r_{j,m}·M\[x_m\]; the peer accepts iff each equals its combined keys
//! ⊕ X_j·Δ. Broadcast consistency of the X's is checked (digests of everything broadcast,
//! [`BroadcastLog`]) before anything else of the batch is revealed — in a triple batch the digest
//! rides on the HaAND message, in a later share batch it has an exchange of its own, and the first
//! batch also compares it with Π_aShare's commitments.
//! * *Soundness.* If i authenticated x^(1) to one honest party and x^(2) ≠ x^(1) to another, its
//!   single X must match both (a combined tag that absorbs a nonzero multiple of an honest Δ means
//!   guessing it), so every check needs ⟨r_j, x^(1) ⊕ x^(2)⟩ = 0: probability 1/2 each, for a
//!   difference fixed before the coins (they come after the OTs). i escapes with 2^{−ρ}.
//! * *Leakage.* The k parities are linear in the bits; the last `p = k + ρ = 2ρ` bits are uniform
//!   padding, thrown away, and one-time-pad them unless the k × p coefficient matrix of the padding
//!   is rank-deficient, which happens with probability at most 2^{k − p} = 2^{−ρ} (Lemma B.1). See
//!   [`fpre_core::abit_padding`]; the paper's 2ρ checks with 2ρ padding make that bound vacuous
//!   (digest §4.1).
//! * *Why one-bit checks.* A single combination with GF(2^128) coefficients (2^{−128} soundness,
//!   128 + ρ padding) costs one field multiplication per bit and peer, ≈ 65 ns in Wasm. The ρ
//!   one-bit combinations are evaluated four positions at a time from a 16-entry XOR table indexed
//!   by the (public) coefficient bits, ≈ 4× cheaper, and 2^{−ρ} is the protocol's target anyway.
//!
//! **Π_aShare (Fig. 15)**: ⟨x⟩ is every party's aBit output together. A party could use different
//! global keys in its n − 1 sender instances (impossible to notice pairwise). The consistent-Δ check
//! opens ρ positions: each prover i commits to C0 = ⊕_k K_i\[x^k\], C1 = C0 ⊕ Δ_i and (as a verifier)
//! to its bits and tags; after all commitments are exchanged the bits and tags are opened, then
//! each prover opens C_{b} for b = ⊕_{k≠i} x^k, which must equal the XOR of the opened tags under
//! its key. A prover with two different Δ's fails each position with probability ≥ 1/2: escape
//! 2^{−ρ}. Every view of every commitment and opening is compared (digests), so a party that shows
//! different commitments to different parties is caught. KOS fixes each instance's Δ at its base
//! OTs for the instance's lifetime, so if the check passes once the Δ's are consistent for every
//! later batch: it runs **once**, on ρ extra aBits at the end of the first batch's aBit run, not
//! per batch, which saves three rounds per batch. (The paper runs it on the last ρ shares of each
//! call; consistency is a property of the instances, not of the bits.) It completes before that
//! batch reveals anything computed from the keys (the HaAND message, or a share batch's result),
//! as F_aShare's output precedes Π_aAND in the paper. It used to end setup on an aBit run of its
//! own: riding on the first batch's run saves that run's five flights (Δ-OTs, coins, check).
//!
//! **Π_HaAND (Fig. 16)** and **Π_LaAND (Fig. 8)**, per leaky triple t and ordered pair
//! (holder i, owner j), on ⟨x⟩, ⟨y⟩, ⟨r⟩ from one aBit run, with K = K_i\[x^j\]:
//! * Round 1: i sends j the HaAND bits lsb(H(K)) ⊕ s and lsb(H(K ⊕ Δ_i)) ⊕ s ⊕ y^i and the LaAND
//!   block U = H′(K ⊕ Δ_i) ⊕ H′(K) ⊕ Φ_i (Φ_i: i's share of y·⊕Δ; H′: see **Hash** below). U depends on aBit outputs
//!   only, so it travels with the HaAND bits instead of after e (the paper's order): an honest U is
//!   a random-oracle mask either way, and a cheater must fix its U deviations even earlier. j
//!   keeps the HaAND bit selected by x^j (unmasked by lsb(H(M_i\[x^j\]))) and z^i = x^i y^i ⊕ v^i.
//! * Round 2: e^i = z^i ⊕ r^i is broadcast and ⟨z⟩ = ⟨r⟩ ⊕ e.
//! * Round 3: coins committed in round 1 are opened, with the digest of every e and coin
//!   commitment (broadcast consistency, checked before anything derived from H leaves a party).
//! * Rounds 4–5: every party computes its H_i (one block per triple; ⊕_i H_i = (xy ⊕ z)·⊕Δ_i on
//!   bits 1..127) and
//!   commits to, then opens, h_i = Σ_t χ_t·H_{i,t} ∈ GF(2^128) with χ from those coins
//!   ([`net::commit_then_open`], simultaneous broadcast); abort unless ⊕_i h_i = 0. The paper
//!   opens every H_{i,t}; the compression sends 16 bytes instead of 16 per triple and per peer
//!   (≈ 20% of the batch's traffic) and is as strong: χ is drawn after everything that can make a
//!   triple wrong (HaAND bits, U: round 1; e: round 2) and after the honest H's are determined, and
//!   the only thing a cheater still chooses — its h_i — is one offset it commits to before seeing
//!   the honest h's. So (a) a set W ≠ ∅ of wrong triples passes only if Σ_{t∈W} χ_t·⊕Δ is
//!   predictable, i.e. Σ_{t∈W} χ_t = 0 (probability 2^{−128} over χ for W fixed before it) or the
//!   cheater guesses ⊕Δ on bits 1..127; (b) U deviations R_t become the single κ-bit test Σ_t χ_t·x_t·R_t = c on
//!   the attacked triples T, whose coefficient vectors χ_t·R_t are uniform and independent, so for
//!   |T| ≤ κ − ρ they are linearly independent except with probability 2^{−ρ} and passing means
//!   guessing every attacked x_t — the 2^{−|T|} of per-triple tests that the bucketing bound
//!   assumes (more attacked triples pass with probability ≤ 2^{−(κ−ρ)}); (c) HaAND and e
//!   deviations make the wrongness w_t(x) depend on honest bits, and passing needs w(x) = 0, as
//!   with per-triple tests. The honest h_i are linear functions of the H_i the paper opens, so
//!   they reveal no more. Coins opened before e would break (a): with χ known, a cheater can pick a
//!   wrong set W with Σ_W χ_t = 0 once there are more than 128 triples.
//! * **Hash.** H is TMMO, the tweakable circular-correlation-robust hash of Guo–Katz–Wang–Yu
//!   (`tccr(x, τ) = π(π(x) ⊕ τ) ⊕ π(x)`, [`webmpc_core::hash`], batched with
//!   `tccr_many_counter`). One hash per key serves both protocols: bit 0 is HaAND's, bits 1..127
//!   are LaAND's H′ (a random oracle's output bits are independent, and TCCR makes all 128 jointly
//!   pseudorandom), so the LaAND check runs on bits 1..127 — U and every H_i have bit 0 cleared,
//!   else lsb(U) ⊕ h0 ⊕ h1 would reveal lsb(Φ_i) ⊕ y^i — and a wrong triple passes only if ⊕Δ_i
//!   vanishes on those bits (2^{−127}). That is 6 AES calls per triple and ordered pair instead of
//!   12. The proof needs H(K ⊕ Δ_i, τ) to look random to the bit owner, who knows K ⊕ x·Δ_i and
//!   gets the other hash XORed with values that are themselves linear in Δ_i (Φ_i contains
//!   y^i·Δ_i): that is exactly the TCCR game (oracle H(w ⊕ Δ, τ) ⊕ b·Δ) with Δ_i as the secret, as
//!   long as no tweak is queried twice. A malicious Δ-OT receiver can make its tags (hence the
//!   holder's keys) repeat across indices by choosing its OT-extension seeds badly, so an
//!   untweaked hash would let it match H(K ⊕ Δ) at one index with H(K′) at another (the MASCOT
//!   attack); the **tweak is unique per use**: session tag, use, holder, owner and a per-instance
//!   leaky-triple counter ([`fpre_core::tweak_base`]) — never reused across calls, batches or
//!   pairs, and separated across sessions by the session tag.
//!
//! **Bucketing (Fig. 18).** ℓ·B leaky triples are generated; the coins for the bucket permutation
//! are committed together with the h_i (so they are tossed after the leaky triples are fixed) and
//! opened with them; every bucket is folded pairwise, revealing d = y_head ⊕ y_s **with a MAC
//! check on every revealed bit** ([`net::open`]). B comes from the batch size
//! ([`fpre_core::bucket_plan`]): emp-agmpc's 5 / 4 / 3 (from 3,100 and 280,000 triples) at ρ = 40
//! for batches of ≥ 320 triples; otherwise — smaller batches, or ρ > 40 — the cheapest B (and
//! batch, possibly larger than asked) for which the bucketing bound is ≤ 2^{−ρ}.
//!
//! # Parallel instances
//!
//! A party may run its F_Pre as several independent instances at once — the primary, set up by
//! [`RealPreprocessor::setup`] with a fresh Δ_i, and parallel instances set up by
//! [`RealPreprocessor::setup_with_delta`] with the **same** Δ_i, each over a channel of its own
//! (in the SDK: a worker each, over a sub-channel of every pairwise transport), talking to the
//! instance of the same index at every other party — and move what the instances make into the
//! primary's pools ([`crate::online::AuthGcParty::take_material`] /
//! [`put_material`](crate::online::AuthGcParty::put_material)). Why sharing Δ_i is sound for WRK17's F_Pre:
//!
//! * **Base OTs.** Each instance runs its own base OTs with every peer, in both directions, with
//!   Δ_i's bits as the choices of its Δ-OT sender side: exactly what a second session with the
//!   same key would run. Each set of base OTs hides the choices on its own (fresh randomness on
//!   both sides), so a peer learns no more about Δ_i from k sets than from one. The instance's
//!   Δ-OT outputs are used unhashed (K and K ⊕ x·Δ_i), as in the primary. An instance does not
//!   use [`KosSender::derive_reverse`]: that hashes under the sender's Δ with KOS tweaks whose tag
//!   is a 64-bit hash of the session id, and with Δ shared those tags would separate the
//!   primary's hashes from an instance's only with probability 1 − 2^{−64} (less if the session
//!   id can be ground); fresh base OTs in both directions avoid the question.
//! * **Selective failure on Δ_i.** A malicious Δ-OT receiver can make the KOS check (or a later
//!   check) fail depending on a guess of some bits of Δ_i, in any instance. Any failure in any
//!   instance — or in the primary — fails the whole session at every party (the SDK closes every
//!   sub-channel and the transport), and Δ_i is never used again (it is fresh per session). So c
//!   guessed bits survive with probability 2^{−c} however the guesses are spread over instances,
//!   as in a single instance.
//! * **Π_aShare within an instance.** Each instance runs the global-key check in its own first
//!   batch, on its own fresh aBits, with its own commitments and coins: every party's sender instances
//!   inside it use one key.
//! * **Across instances: the instance key check.** Nothing inside an instance ties a *corrupt*
//!   party's key there to the key it uses in the primary, and a party that authenticated the
//!   instance's material under Δ′_i ≠ Δ_i would break the garbling: the evaluator rebuilds
//!   garbler i's labels from i's row and the tags M_i\[r^k\] every other party holds, and with
//!   keys under two Δ's the rebuilt label is off by ⊕_k r^k·(Δ_i ⊕ Δ′_i) — a function of the honest
//!   parties' *individual* mask shares, which a corrupt evaluator colluding with i reads off
//!   (or an honest one's abort reveals). So before the primary takes any instance's material,
//!   every party runs Π_aShare's check once more on ρ positions that are sums of one fresh share
//!   from the primary and one from every instance
//!   ([`RealPreprocessor::check_instance_keys`]): a prover whose key towards some honest party
//!   differs, in any source, from the key it opens C_1 = C_0 ⊕ Δ with fails each position with
//!   probability ≥ 1/2 (the honest bits of every source are uniform and unknown to it when it
//!   commits), so it passes with probability 2^{−ρ} — and the primary's key is among the sources.
//!   The shares checked are never used for anything else, and only their sums are opened.
//! * **Tweaks.** Every HaAND/LaAND hash under Δ_i has a tweak that holds the instance's index
//!   next to its session tag ([`fpre_core::tweak_tag`], [`fpre_core::tweak_base`]), and each
//!   instance counts its own leaky triples (`leaky_done`): no tweak repeats within an instance,
//!   and none can repeat between two instances of a session, whatever their session ids hash to.
//!   The primary's KOS `derive_reverse` hashes (low 64 bits below 2^60) never meet them either.
//! * **Everything else is per instance**: the coins of every aBit check, of the LaAND check and
//!   of the bucketing permutation are tossed inside each instance for each batch (commitments
//!   labelled with the committing party, so one instance's commitment cannot pass for another
//!   party's in another instance), broadcast logs and views are per instance, and an instance
//!   never garbles: the free-XOR offset Δ_i, the label PRG and the run counter (the online
//!   protocol's tweaks) belong to the primary alone
//!   ([`AuthGcParty::new_instance`](crate::online::AuthGcParty::new_instance) refuses to
//!   prepare or run).
//!
//! # Batches and memory
//!
//! [`Preprocessor::and_triples`] and [`Preprocessor::random_shares`] work in independent batches
//! of at most [`MAX_TRIPLE_BATCH`] triples / [`MAX_SHARE_BATCH`] shares; larger requests are split
//! into equal batches. Memory is bounded by the batch: a triple batch holds its B·ℓ leaky triples
//! (three shares of 32·(n − 1) + 1 bytes each, 3·B·ℓ·32·(n − 1) bytes) until bucketing, plus
//! per-peer messages (the Δ-OTs of a pair hold up to [`webmpc_ot::kos::DUPLEX_WINDOW_OTS`] OTs in
//! flight, ≈ 24 MiB per peer) and the output; measured, a batch of 2^20 triples (B = 3) peaks at about
//! 700 MB per party at n = 2, i.e. ≈ 2.3× its leaky triples. Masks asked for with the triples
//! ([`Preprocessor::triples_and_shares`]) ride on the last batch's aBit run, at most 3ℓ of them
//! beside the triples' 3ℓ authenticated bits, so that run holds at most twice as many; a
//! circuit's masks (one per AND gate and input bit) add about a tenth at B = 4. Callers that
//! stream (or run many parties in one 32-bit Wasm memory) should ask for smaller batches.
//!
//! # Rounds
//!
//! Every flight of setup and of the function-independent phase, for n = 2 and AES-128 (6,400 AND
//! triples in one batch, B = 4, with the circuit's 6,656 masks riding on its run and, in the first
//! batch, Π_aShare's ρ positions: 76,800 + 6,656 + ρ + 2ρ Δ-OTs each way), counted as one-way flights with each `exchange` (every party sends, then
//! receives) as one flight. Why each waits for the one before: **D**, a data dependency (it is
//! computed from what arrived); **S**, an order security requires (a challenge or public coins
//! drawn only after what they test is fixed; an opening only after every commitment arrived; a
//! digest compared before anything it guards is revealed); **C**, code order only. The rounds
//! that waited for code order only were cut (protocol version 3 of the SDK's `authgc` module, the
//! masks' own batch in version 4, setup's own aBit run for the Π_aShare check in version 5, and
//! prepare's own agreement exchange in version 7); the "was" column is version 2.
//!
//! | Step | Messages (each party to each peer) | Waits for | Kind | was | now |
//! |---|---|---|---|---|---|
//! | *Setup* | | | | | |
//! | base OTs | one message each way | — | — | 1 | 1 |
//! | reverse instance | U (larger → smaller index), challenge, answer + correction d | base-OT seeds; U; challenge | D, S, D | 3 | 3 |
//! | aBit run for the Π_aShare check: Δ-OTs (3ρ bits), coins, check | U, challenge, answer per instance; coin commitment and opening; X, combined tags | the reverse instance (d) | C: its ρ positions now ride on the first batch's aBit run | 9 | 0 |
//! | X digest | 32 bytes | the X's | D; C for its own flight: now with the Π_aShare commitments, compared before any opening | 1 | 0 |
//! | *Triple batch* | | | | | |
//! | a prepared circuit's agreement (`online`: circuit, roles, options, run, pool) | 64 bytes, now at the head of the aBit run's first Δ-OT message ([`Preprocessor::lead_next_message`]), checked before anything else of the peer's message | — | C: version 7 of the SDK's `authgc` module rides it on the batch | 1 | 0 |
//! | aBit Δ-OTs (3Bℓ bits, the riding masks, 2ρ padding; + ρ in the first batch) | per chunk and instance: U, challenge, answer | the previous chunk, the other instance | C: chunk k + 1 and the other direction need nothing of them; now three flights per window of 2^19 OTs | 12 | 3 |
//! | aBit coins | commitment (in the U flight); opening, view digest | every Δ-OT message of the run | C; S | 2 | 1 |
//! | aBit check | X, combined tags | the coins | D | 1 | 1 |
//! | Π_aShare commit (first batch only) | commitments to C0, C1, bits and tags; the X digest | the aBits | D | 1 | 1 |
//! | Π_aShare open bits (first batch only) | bits, tags, view digest | every commitment | S | 1 | 1 |
//! | Π_aShare open C_b (first batch only) | C_b openings, view digest | the opened bits (b, and the tag check first) | D, S | 1 | 1 |
//! | HaAND | HaAND bits, U blocks, X digest, LaAND coin commitment | verified aBits, X's, and (first batch) every Δ proven consistent | D, S (digest before anything is revealed) | 1 | 1 |
//! | LaAND e | e = z ⊕ r | z needs the HaAND bits | D | 1 | 1 |
//! | LaAND coins | opening, digest of the e's | every e | S (χ after every e) | 1 | 1 |
//! | LaAND check: commit | commitment to h and a bucketing coin | χ | D | 1 | 1 |
//! | LaAND check: open | opening, view digest | every commitment | S | 1 | 1 |
//! | bucketing | d with MAC digests | the permutation (the bucketing coins) | D | 1 | 1 |
//! | *Masks* | | | | | |
//! | aBit Δ-OTs, coins, check, X digest | their bits are the triple batch's aBit run's last ones ([`Preprocessor::triples_and_shares`]): its Δ-OTs, check and HaAND digest cover them | the triple batch (the caller's order) | C: now none of their own | 10 | 0 |
//! | **Total** | | | | **49** | **18** |
//!
//! What two parties actually wait is less than the sum where one party's last message of a step
//! and the other's first of the next share a flight (an exchange after a lockstep step is
//! zipped into it); the SDK's session counts what each party sees (`session.traffic`).
//!
//! Masks asked for beyond 3ℓ of the last triple batch (so that a run at most doubles), or
//! without triples, still take a share batch of six flights (a first share batch: eight, its
//! X digest riding on the Π_aShare commitments). The aBit check and the HaAND
//! message cannot share a flight (HaAND needs verified aBits and the X digest), and each
//! commit-then-open keeps its two flights (S).

pub mod fpre_core;
mod tap;

#[cfg(feature = "ideal")]
pub mod contract;
pub mod local;

use crate::commit::{self, COMMITMENT_LEN, NONCE_LEN};
use crate::net::{self, peers, BroadcastLog, Reveal};
use crate::preprocess::{LeadingHead, Preprocessor, Triples};
use crate::share::{expected_macs, pack_bits, unpack_bits, AuthShares};
use crate::{check_rho, AuthGcError, Phase};
use fpre_core::{
    abit_checks, abit_combine, abit_padding, abit_verify, bucket_differences, bucket_permutation, bucket_plan,
    fold_buckets, key_sums, laand_compress, laand_local_terms, leaky_and_receive, leaky_and_send, phi, tweak_base,
    tweak_tag, HashUse, MAX_LEAKY, MAX_PARTIES,
};
use futures::future::try_join_all;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tap::Tap;
use webmpc_core::channel::{Channel, PartyId};
use webmpc_core::prg::Prg;
use webmpc_core::{random, Block};
use webmpc_ot::kos::cot_duplex;
use webmpc_ot::{KosReceiver, KosSender, OtError, SessionId};

#[cfg(feature = "testing")]
use std::rc::Rc;

/// The most AND triples one batch produces (larger requests are split into equal batches).
/// 2^20 triples at B = 3 hold about 300·(n − 1) MB of leaky triples (≈ 700 MB peak per party at
/// n = 2).
pub const MAX_TRIPLE_BATCH: usize = 1 << 20;

/// The most random shares one batch produces.
pub const MAX_SHARE_BATCH: usize = 1 << 22;

/// The steps of F_Pre, for byte accounting ([`RealPreprocessor::bytes_by_step`]) and for tests
/// that make one party deviate at a given step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Between calls.
    Idle,
    /// Setup: the base OTs of every pair's first KOS instance, and the second instance's base
    /// OTs derived from it (one KOS chunk and a 16-byte correction).
    BaseOt,
    /// The Δ-OT extension of an aBit run (both instances of every pair, pipelined:
    /// [`webmpc_ot::kos::cot_duplex`]); the first message to each peer leads with the commitment
    /// to this party's share of the aBit check coins.
    AbitOt,
    /// The opening of the aBit check coins (after every Δ-OT of the run).
    AbitCoins,
    /// X and the combined tag, to every peer (32 bytes).
    AbitCheck,
    /// The digest of the broadcast X's (later share batches; triple batches carry it in the
    /// HaAND message, and the first batch of either kind in Π_aShare's commitments).
    AbitBroadcast,
    /// Π_aShare's commitments (the first batch).
    DeltaCommit,
    /// Π_aShare's opening of bits and tags (the first batch).
    DeltaOpenBits,
    /// Π_aShare's opening of the prover's C_b (the first batch).
    DeltaOpenKey,
    /// Π_HaAND's two bits per triple, Π_LaAND's U blocks, the X digest and a commitment to a
    /// coin for the LaAND check.
    HalfAnd,
    /// Π_LaAND's e = z ⊕ r (packed bits, the same to every peer).
    LeakyE,
    /// The opening of the LaAND check coins, then the digest of the e's and coin commitments.
    LeakyCoins,
    /// Π_LaAND's compressed check value with the bucketing coin: commitment, then opening.
    LeakyCheck,
    /// Bucketing: the d bits with the digest of their tags ([`net::open`]).
    BucketOpen,
}

impl Step {
    /// The number of steps.
    pub const COUNT: usize = 14;

    /// Every step, in protocol order.
    pub const ALL: [Step; Step::COUNT] = [
        Step::Idle,
        Step::BaseOt,
        Step::AbitOt,
        Step::AbitCoins,
        Step::AbitCheck,
        Step::AbitBroadcast,
        Step::DeltaCommit,
        Step::DeltaOpenBits,
        Step::DeltaOpenKey,
        Step::HalfAnd,
        Step::LeakyE,
        Step::LeakyCoins,
        Step::LeakyCheck,
        Step::BucketOpen,
    ];

    /// A stable short name.
    pub fn name(self) -> &'static str {
        match self {
            Step::Idle => "idle",
            Step::BaseOt => "base-ot",
            Step::AbitOt => "abit-ot",
            Step::AbitCoins => "abit-coins",
            Step::AbitCheck => "abit-check",
            Step::AbitBroadcast => "abit-broadcast",
            Step::DeltaCommit => "delta-commit",
            Step::DeltaOpenBits => "delta-open-bits",
            Step::DeltaOpenKey => "delta-open-key",
            Step::HalfAnd => "haand",
            Step::LeakyE => "laand-e",
            Step::LeakyCoins => "laand-coins",
            Step::LeakyCheck => "laand-check",
            Step::BucketOpen => "bucket-open",
        }
    }
}

/// Kinds of local computation, for [`RealPreprocessor::profile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// The aBit combination (one-bit checks by table lookup) and its verification.
    AbitCheck,
    /// Π_HaAND's and Π_LaAND's hashes: the HaAND bits, U, and the hashed check terms.
    Hashing,
    /// Π_LaAND's Φ, the local terms of H and its compression.
    LeakyCheck,
    /// The permutation, the differences and the folding.
    Bucketing,
}

impl Work {
    /// The number of kinds.
    pub const COUNT: usize = 4;
    /// Every kind.
    pub const ALL: [Work; Work::COUNT] = [Work::AbitCheck, Work::Hashing, Work::LeakyCheck, Work::Bucketing];

    /// A stable short name.
    pub fn name(self) -> &'static str {
        match self {
            Work::AbitCheck => "abit-check",
            Work::Hashing => "hashing",
            Work::LeakyCheck => "laand-check",
            Work::Bucketing => "bucketing",
        }
    }
}

/// Milliseconds of synchronous local work per [`Work`] kind (what is not here is OT extension,
/// commitments and messaging). Filled only when a clock was given
/// ([`RealPreprocessor::set_clock`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Profile {
    /// Milliseconds per kind, indexed by `Work as usize`.
    pub ms: [f64; Work::COUNT],
}

/// An in-place change to an outgoing message (tests).
#[cfg(feature = "testing")]
pub type MessageEdit = Rc<dyn Fn(&mut Vec<u8>)>;

/// A deviation a test makes one party apply (feature `testing` only; the honest code path is the
/// same code with no deviation set).
#[cfg(feature = "testing")]
#[derive(Clone)]
pub enum Deviation {
    /// In every aBit run, authenticate bit `index` to `peer` with the opposite value (and the
    /// true value to everyone else): the Π_aBit consistency check must catch it.
    InconsistentBit {
        /// The peer that gets the flipped bit.
        peer: PartyId,
        /// The bit's position in the run (triple batches lay out x, y, r, then padding).
        index: usize,
        /// Also announce to `peer` the X of the flipped bits (so its own check passes and only
        /// the broadcast-consistency check can notice).
        adapt_x: bool,
    },
    /// Set up the Δ-OT instance where this party is the sender to `peer` with a different global
    /// key (Δ ⊕ 1): the Π_aShare check (in the first batch) must catch it. Only meaningful at setup.
    InconsistentDelta {
        /// The peer that sees the other key.
        peer: PartyId,
    },
    /// Use a wrong share of z at leaky triple `index` (flip it before computing e, and broadcast
    /// that e consistently): the LaAND sum check must catch it.
    WrongZ {
        /// The leaky triple whose z share is flipped.
        index: usize,
    },
    /// Commit to an H_i with one bit flipped at leaky triple `index`: the LaAND sum check must
    /// catch it.
    WrongCheckValue {
        /// The leaky triple whose check value is wrong.
        index: usize,
    },
    /// Edit the `nth` message (0-based, counted from the start of `step`) this party sends to
    /// `to` (to every peer if `None`) during `step`, in place (flip, truncate, extend, …).
    Edit {
        /// The step whose message is edited.
        step: Step,
        /// The recipient (all if `None`).
        to: Option<PartyId>,
        /// Which of the step's messages to that recipient.
        nth: usize,
        /// The edit.
        edit: MessageEdit,
    },
    /// Stop (as if the process died) when `step` begins: the call fails at once, and the test
    /// drops the party's channel.
    Disconnect {
        /// The step at which the party stops.
        step: Step,
    },
    /// In the instance key check ([`RealPreprocessor::check_instance_keys`]), skip this party's
    /// own checks of the others' openings, as a corrupt party may: only the others' checks of
    /// this party remain.
    SkipOwnInstanceKeyChecks,
}

#[cfg(feature = "testing")]
impl core::fmt::Debug for Deviation {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Deviation::InconsistentBit { peer, index, adapt_x } => {
                write!(f, "InconsistentBit {{ peer: {peer}, index: {index}, adapt_x: {adapt_x} }}")
            }
            Deviation::InconsistentDelta { peer } => write!(f, "InconsistentDelta {{ peer: {peer} }}"),
            Deviation::WrongZ { index } => write!(f, "WrongZ {{ index: {index} }}"),
            Deviation::WrongCheckValue { index } => write!(f, "WrongCheckValue {{ index: {index} }}"),
            Deviation::Edit { step, to, nth, .. } => write!(f, "Edit {{ step: {step:?}, to: {to:?}, nth: {nth} }}"),
            Deviation::Disconnect { step } => write!(f, "Disconnect {{ step: {step:?} }}"),
            Deviation::SkipOwnInstanceKeyChecks => write!(f, "SkipOwnInstanceKeyChecks"),
        }
    }
}

/// The two Δ-OT instances of this party with one peer.
struct PairOt<C> {
    /// This party sends (its Δ): the peer's bits get authenticated to this party.
    sender: KosSender<C>,
    /// The peer sends: this party's bits get authenticated to the peer.
    receiver: KosReceiver<C>,
}

/// The real F_Pre, one party's handle. `C` is cloned once per OT-extension instance (use a
/// reference or an `Rc`-backed channel).
pub struct RealPreprocessor<C> {
    ch: Tap<C>,
    me: PartyId,
    n: usize,
    delta: Block,
    rho: usize,
    /// `pairs[j]`: the instances with peer j (`None` at this party's own index).
    pairs: Vec<Option<PairOt<Tap<C>>>>,
    /// The session part of every HaAND/LaAND tweak, with this instance's index in its low byte
    /// ([`fpre_core::tweak_tag`]).
    tag: u64,
    /// 0 for a party's primary F_Pre, 1.. for its parallel instances (which share its Δ).
    instance: u8,
    /// Leaky triples hashed so far: the counter part of the next tweak.
    leaky_done: u64,
    /// Π_aShare's global-key check has not run yet: the next aBit run (the first batch's) carries
    /// its ρ positions, and the check passes before anything else of that batch is revealed.
    key_check_pending: bool,
    /// A head for the next aBit run's first flight ([`Preprocessor::lead_next_message`]).
    leading: Option<LeadingHead>,
    poisoned: bool,
    clock: Option<fn() -> f64>,
    profile: Profile,
}

/// Zeroes `bytes` in a way the optimiser may not remove.
fn wipe_bytes(bytes: &mut [u8]) {
    for b in bytes.iter_mut() {
        // SAFETY: `b` is a valid, exclusive reference to a byte.
        unsafe { core::ptr::write_volatile(b, 0) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

impl<C> Drop for RealPreprocessor<C> {
    fn drop(&mut self) {
        Block::wipe(core::slice::from_mut(&mut self.delta));
    }
}

/// The id of the Δ-OT instance in which `sender` authenticates `receiver`'s bits.
fn instance_id(session: &SessionId, sender: PartyId, receiver: PartyId) -> SessionId {
    let mut label = b"webmpc/authgc/fpre/delta-ot/".to_vec();
    label.extend_from_slice(&(sender as u64).to_le_bytes());
    label.extend_from_slice(&(receiver as u64).to_le_bytes());
    session.derive(&label)
}

/// `n` bits from a PRG seeded by the platform CSPRNG.
fn random_bits(n: usize) -> Result<Vec<bool>, AuthGcError> {
    let mut prg = Prg::from_entropy()?;
    let mut bytes = vec![0u8; n.div_ceil(8)];
    prg.fill_bytes(&mut bytes);
    let bits = (0..n).map(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1).collect();
    bytes.iter_mut().for_each(|b| *b = 0);
    Ok(bits)
}

fn poisoned() -> AuthGcError {
    AuthGcError::InvalidArgument("this F_Pre instance failed earlier and cannot be used again".into())
}

/// `len` equal-as-possible batch sizes of at most `max` summing to `total`.
fn batch_sizes(total: usize, max: usize) -> Vec<usize> {
    if total == 0 {
        return Vec::new();
    }
    let count = total.div_ceil(max);
    (0..count).map(|k| total / count + usize::from(k < total % count)).collect()
}

/// The labels and check names of one use of Π_aShare's check.
struct KeyCheck {
    /// The phase its errors name.
    phase: Phase,
    /// The check across instances (tests: a deviating party may skip its own checks there).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    across_instances: bool,
    /// The prefix of its commitment labels and view digests.
    domain: &'static [u8],
    /// A commitment that does not open.
    opening: &'static str,
    /// A verifier's opened bits whose tags fail under the prover's key.
    tags: &'static str,
    /// A prover's opened key sum that is not the XOR of the tags.
    consistency: &'static str,
}

/// Π_aShare's check in the first batch (within one F_Pre instance).
const ASHARE_CHECK: KeyCheck = KeyCheck {
    phase: Phase::Independent,
    across_instances: false,
    domain: b"webmpc/authgc/fpre/delta-check/",
    opening: "aShare commitment opening",
    tags: "aShare tag check on a verifier's opened bits",
    consistency: "aShare global-key consistency check",
};

/// The same check across a party's primary and its parallel instances
/// ([`RealPreprocessor::check_instance_keys`]).
const INSTANCE_CHECK: KeyCheck = KeyCheck {
    phase: Phase::Independent,
    across_instances: true,
    domain: b"webmpc/authgc/fpre/instance-key-check/",
    opening: "instance key check commitment opening",
    tags: "instance key check on a verifier's opened bits",
    consistency: "instance global-key consistency check",
};

impl<C: Channel + Clone> RealPreprocessor<C> {
    /// Sets up F_Pre for this party: a fresh Δ, the KOS instances with every peer, and the
    /// Π_aShare global-key check, which runs in the first batch. Every party must call it with the
    /// same `session` (fresh per session) and `rho` (≥ 40).
    pub async fn setup(ch: C, session: &SessionId, rho: usize) -> Result<Self, AuthGcError> {
        Self::setup_inner(Tap::new(ch), session, rho, None).await
    }

    /// Sets up a **parallel instance** of this party's F_Pre (what the SDK runs in another worker,
    /// over a sub-channel of its own): like [`setup`](Self::setup), but with the party's global
    /// key `delta` (from the primary's [`delta_for_instances`](Self::delta_for_instances))
    /// instead of a fresh one, so that its shares and triples are authenticated under the same
    /// Δ_i as the primary's and can join the primary's pools
    /// ([`AuthGcParty::take_material`](crate::online::AuthGcParty::take_material),
    /// [`AuthGcParty::put_material`](crate::online::AuthGcParty::put_material)). `instance` is
    /// its index (1 to [`fpre_core::MAX_INSTANCES`] − 1; 0 is the primary) and `session` its own
    /// id; every party passes the same for its instance of the same index. `delta` must be
    /// nonzero.
    ///
    /// **Why sharing Δ_i between the primary and its instances is sound** (the full argument is
    /// under *Parallel instances* in the [module docs](self)): each instance runs its own base
    /// OTs, in both directions, with Δ_i's bits as the choices of its sender side, as a second
    /// session with the same key would (each set of base OTs hides them on its own); its own
    /// Π_aShare check in its first batch; its own coins for every check and for bucketing; and tweaks that
    /// never meet another instance's (the instance index is part of every tweak). A malicious
    /// peer can still test guesses of Δ_i's bits by selective failure, in any instance, but every
    /// failure aborts the whole session, so c guessed bits survive with probability 2^{−c} however
    /// they are spread. What an instance cannot check on its own — that every *other* party's
    /// instance used that party's one global key — the primary checks before it accepts the
    /// material ([`check_instance_keys`](Self::check_instance_keys)).
    pub async fn setup_with_delta(
        ch: C,
        session: &SessionId,
        rho: usize,
        delta: Block,
        instance: u8,
    ) -> Result<Self, AuthGcError> {
        if instance == 0 {
            return Err(AuthGcError::InvalidArgument("instance 0 is the primary: a parallel instance has an index from 1".into()));
        }
        if delta == Block::ZERO {
            return Err(AuthGcError::InvalidArgument("the global key of an instance must be nonzero".into()));
        }
        Self::setup_inner(Tap::new(ch), session, rho, Some((delta, instance))).await
    }

    /// [`setup_with_delta`](Self::setup_with_delta) for a party that applies `deviation` from
    /// the start (tests).
    #[cfg(feature = "testing")]
    pub async fn setup_with_delta_deviating(
        ch: C,
        session: &SessionId,
        rho: usize,
        delta: Block,
        instance: u8,
        deviation: Deviation,
    ) -> Result<Self, AuthGcError> {
        let tap = Tap::new(ch);
        tap.set_deviation(Some(deviation));
        Self::setup_inner(tap, session, rho, Some((delta, instance))).await
    }

    /// This party's global key Δ_i, to hand to its own parallel instances
    /// ([`setup_with_delta`](Self::setup_with_delta)) and to nobody else. Secret: the caller wipes
    /// it after use.
    pub fn delta_for_instances(&self) -> Block {
        self.delta
    }

    /// This F_Pre's instance index: 0 for a party's primary, 1.. for a parallel instance.
    pub fn instance(&self) -> u8 {
        self.instance
    }

    /// [`setup`](Self::setup) for a party that applies `deviation` from the start (tests).
    #[cfg(feature = "testing")]
    pub async fn setup_deviating(
        ch: C,
        session: &SessionId,
        rho: usize,
        deviation: Deviation,
    ) -> Result<Self, AuthGcError> {
        let tap = Tap::new(ch);
        tap.set_deviation(Some(deviation));
        Self::setup_inner(tap, session, rho, None).await
    }

    /// Makes this party apply `deviation` from now on (tests).
    #[cfg(feature = "testing")]
    pub fn set_deviation(&mut self, deviation: Option<Deviation>) {
        self.ch.set_deviation(deviation);
    }

    async fn setup_inner(
        ch: Tap<C>,
        session: &SessionId,
        rho: usize,
        given: Option<(Block, u8)>,
    ) -> Result<Self, AuthGcError> {
        let rho = check_rho(rho)?;
        let (me, n) = (ch.party(), ch.parties());
        if !(2..=MAX_PARTIES).contains(&n) || me >= n {
            return Err(AuthGcError::InvalidArgument(format!(
                "F_Pre needs 2 to {MAX_PARTIES} parties, got {n} (party {me})"
            )));
        }
        let (delta, instance) = match given {
            Some((d, i)) => (d, i),
            None => loop {
                let d = random::random_block()?;
                if d != Block::ZERO {
                    break (d, 0);
                }
            },
        };
        let mut this = RealPreprocessor {
            ch,
            me,
            n,
            delta,
            rho,
            pairs: (0..n).map(|_| None).collect(),
            tag: tweak_tag(&session.0, instance),
            instance,
            leaky_done: 0,
            key_check_pending: true,
            leading: None,
            poisoned: true,
            clock: None,
            profile: Profile::default(),
        };
        this.enter(Step::BaseOt)?;
        let setups = peers(&this.ch).map(|j| {
            let ch = this.ch.clone();
            let key = this.sender_delta(j);
            async move {
                let (send_id, recv_id) = (instance_id(session, me, j), instance_id(session, j, me));
                // The primary runs base OTs once per pair, for the instance whose sender has the
                // smaller index; the other instance's base OTs come from 128 of its random OTs
                // (KOS `derive_reverse`), which saves half the public-key work of setup. That
                // hashes with the sender's Δ under KOS tweaks whose tag is a 64-bit hash of the
                // session id: a parallel instance, which shares Δ with the primary, runs fresh
                // base OTs in both directions instead, so no KOS hash under a shared Δ ever
                // depends on two session ids hashing apart (its Δ-OT outputs are never hashed).
                let pair = if instance != 0 {
                    if me < j {
                        let sender = KosSender::setup(ch.clone(), j, &send_id, key).await?;
                        let receiver = KosReceiver::setup(ch, j, &recv_id).await?;
                        PairOt { sender, receiver }
                    } else {
                        let receiver = KosReceiver::setup(ch.clone(), j, &recv_id).await?;
                        let sender = KosSender::setup(ch, j, &send_id, key).await?;
                        PairOt { sender, receiver }
                    }
                } else if me < j {
                    let mut sender = KosSender::setup(ch.clone(), j, &send_id, key).await?;
                    let receiver = sender.derive_reverse(ch, &recv_id).await?;
                    PairOt { sender, receiver }
                } else {
                    let mut receiver = KosReceiver::setup(ch.clone(), j, &recv_id).await?;
                    let sender = receiver.derive_reverse(ch, &send_id, key).await?;
                    PairOt { sender, receiver }
                };
                Ok::<_, OtError>((j, pair))
            }
        });
        for (j, pair) in try_join_all(setups).await? {
            this.pairs[j] = Some(pair);
        }
        this.enter(Step::Idle)?;
        this.poisoned = false;
        Ok(this)
    }

    /// The global key this party's sender instance towards `peer` uses: Δ, unless a test makes
    /// it deviate.
    fn sender_delta(&self, _peer: PartyId) -> Block {
        #[cfg(feature = "testing")]
        if let Some(Deviation::InconsistentDelta { peer }) = self.ch.deviation() {
            if peer == _peer {
                return self.delta ^ Block::from_u128(1);
            }
        }
        self.delta
    }

    /// The choice bits this party uses towards `peer` in an aBit run: its bits, unless a test
    /// makes it deviate.
    fn choices_for<'a>(&self, _peer: PartyId, bits: &'a [bool]) -> std::borrow::Cow<'a, [bool]> {
        #[cfg(feature = "testing")]
        if let Some(Deviation::InconsistentBit { peer, index, .. }) = self.ch.deviation() {
            if peer == _peer && index < bits.len() {
                let mut flipped = bits.to_vec();
                flipped[index] ^= true;
                return std::borrow::Cow::Owned(flipped);
            }
        }
        std::borrow::Cow::Borrowed(bits)
    }

    /// Marks the start of `step` (and, in tests, stops there if asked to).
    fn enter(&self, step: Step) -> Result<(), AuthGcError> {
        #[cfg(feature = "testing")]
        if let Some(Deviation::Disconnect { step: at }) = self.ch.deviation() {
            if at == step {
                return Err(AuthGcError::InvalidArgument(format!("test deviation: stopped at {}", step.name())));
            }
        }
        self.ch.set_step(step);
        Ok(())
    }

    /// Gives the instance a clock (milliseconds, any origin) so it records [`Profile`]s.
    pub fn set_clock(&mut self, clock: fn() -> f64) {
        self.clock = Some(clock);
    }

    /// Local work so far, per kind (zeros without a clock).
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Bytes this party has sent, per step (including setup), indexed like [`Step::ALL`].
    pub fn bytes_by_step(&self) -> [u64; Step::COUNT] {
        self.ch.bytes()
    }

    /// Bytes this party has sent in total.
    pub fn bytes_sent(&self) -> u64 {
        self.ch.bytes().iter().sum()
    }

    /// The statistical security parameter ρ of the instance.
    pub fn rho(&self) -> usize {
        self.rho
    }

    fn timed<T>(&mut self, work: Work, f: impl FnOnce(&mut Self) -> T) -> T {
        let start = self.clock.map(|c| c());
        let out = f(self);
        if let (Some(c), Some(s)) = (self.clock, start) {
            self.profile.ms[work as usize] += c() - s;
        }
        out
    }

    /// Π^n_aBit: `len` random bits of this party authenticated to every peer, and every peer's
    /// `len` bits authenticated to this party (one [`AuthShares`] batch), plus the log of the
    /// broadcast X's, whose consistency the caller must check before revealing anything else.
    async fn abit(&mut self, len: usize, phase: Phase) -> Result<(AuthShares, BroadcastLog), AuthGcError> {
        let m = len + abit_padding(self.rho);
        let (me, n) = (self.me, self.n);
        let bits = random_bits(m)?;
        let mut macs: Vec<Vec<Block>> =
            (0..n).map(|j| if j == me { Vec::new() } else { vec![Block::ZERO; m] }).collect();
        let mut keys = macs.clone();

        // This party's share of the check coins is committed in the first flight of the Δ-OTs
        // (the commitment leads the first message) and opened only after every Δ-OT of the run
        // is done: committing early only fixes the share earlier, and nothing the coins test can
        // change once they are opened.
        let coin = net::coin_commit(me, "aBit check coefficients")?;
        self.enter(Step::AbitOt)?;
        let choices: Vec<std::borrow::Cow<[bool]>> = (0..n).map(|j| self.choices_for(j, &bits)).collect();
        // A caller's head (an agreement) leads the commitment, and each peer's passes its check
        // before the rest of that peer's first message is looked at (`cot_duplex`).
        let leading = self.leading.take();
        let lead = leading.as_ref().map_or(0, |h| h.mine.len());
        let head = [leading.as_ref().map_or(&[][..], |h| &h.mine[..]), &coin.commitment[..]].concat();
        let (head, leading) = (&head, &leading);
        let runs = self
            .pairs
            .iter_mut()
            .zip(macs.iter_mut().zip(keys.iter_mut()))
            .zip(&choices)
            .enumerate()
            .filter_map(|(j, ((p, cols), c))| p.as_mut().map(|p| (j, p, cols, c)))
            .map(|(j, p, (macs, keys), choices)| async move {
                // Both instances of the pair at once, chunks pipelined (three flights per window
                // instead of six per chunk); the peer's coin commitment arrives first.
                let check = |theirs: &[u8]| match leading {
                    Some(h) => (h.check)(j, &theirs[..lead.min(theirs.len())]),
                    None => Ok(()),
                };
                let theirs = cot_duplex::<_, AuthGcError>(
                    &mut p.sender,
                    &mut p.receiver,
                    choices,
                    head,
                    check,
                    |off, k| keys[off..off + k.len()].copy_from_slice(k),
                    |off, t| macs[off..off + t.len()].copy_from_slice(t),
                )
                .await?;
                Ok::<_, AuthGcError>((j, theirs[lead..].to_vec()))
            });
        let heads = try_join_all(runs).await?;
        drop(choices);
        let mut shares = AuthShares { me, bits, macs, keys };
        let mut commitments = vec![Vec::new(); n];
        for (j, head) in heads {
            commitments[j] = head;
        }

        // Coins only now: every Δ-OT of this party is done, so nothing it tests can still change.
        self.enter(Step::AbitCoins)?;
        let seed = net::coin_open(&self.ch, phase, coin, commitments).await?;
        let k = abit_checks(self.rho);
        let comb = self.timed(Work::AbitCheck, |_| abit_combine(seed, k, &shares));
        self.enter(Step::AbitCheck)?;
        let announced = |_j: PartyId| -> u128 {
            #[cfg(feature = "testing")]
            if let Some(Deviation::InconsistentBit { peer, index, adapt_x: true }) = self.ch.deviation() {
                if peer == _j && index < m {
                    return comb.x ^ fpre_core::abit_coefficients(seed, k, index);
                }
            }
            comb.x
        };
        // X (16 bytes, bit j = check j) then the k combined tags under the recipient's key.
        let msg_len = 16 + 16 * k;
        let got = net::exchange(
            &self.ch,
            |j| {
                let mut msg = announced(j).to_le_bytes().to_vec();
                msg.extend_from_slice(Block::slice_as_bytes(&comb.macs[j]));
                msg
            },
            |_| msg_len,
        )
        .await?;
        let mut log = BroadcastLog::new();
        for (p, msg) in got.iter().enumerate() {
            if p == me {
                log.record(p, b"aBit X", &comb.x.to_le_bytes());
                continue;
            }
            let x = u128::from_le_bytes(msg[..16].try_into().expect("fixed-length message"));
            if x.checked_shr(k as u32).unwrap_or(0) != 0 {
                // p's own message does not decode.
                return Err(AuthGcError::Malformed { phase, peer: p, what: "aBit check parities" });
            }
            let tags = Block::slice_from_bytes(&msg[16..]).expect("fixed-length message");
            // The key of the instance that authenticated p's bits (Δ, unless a test skews it).
            let key = self.sender_delta(p);
            let ok = self.timed(Work::AbitCheck, |_| abit_verify(&comb.keys[p], x, tags, key));
            if !ok {
                // Can blame p: its X and combined tags are checked against this party's keys from
                // the Δ-OT of this pair alone, under public coins every honest party agreed on
                // (commit-then-open with compared views); an honest p passes whatever others do.
                return Err(AuthGcError::cheating(phase, Some(p), "aBit consistency check"));
            }
            log.record(p, b"aBit X", &msg[..16]);
        }
        // The padding one-time-pads the check; it is never used.
        drop(shares.split_off(len));
        Ok((shares, log))
    }

    /// The aBit positions the next run adds for Π_aShare's global-key check: ρ in the first
    /// batch after setup, none after it.
    fn key_check_positions(&self) -> usize {
        if self.key_check_pending {
            self.rho
        } else {
            0
        }
    }

    /// Π_aShare's global-key consistency check on `positions`, the last ρ aBits of the first run
    /// (`log` its broadcast log: the X digest rides on the check's commitments, which reveal
    /// nothing, and is compared before anything is opened). Runs once per instance.
    async fn first_key_check(&mut self, positions: AuthShares, log: &BroadcastLog) -> Result<(), AuthGcError> {
        self.key_check(&positions, &ASHARE_CHECK, Some(log)).await?;
        self.key_check_pending = false;
        Ok(())
    }

    /// The cross-instance global-key check (see *Parallel instances* in the [module docs](self)):
    /// before this party (the primary) takes material its parallel instances made, every party
    /// proves that the keys it holds on the others' bits are under **one** global key in the
    /// primary and in every instance. `theirs[k]` are ρ fresh random shares instance k + 1 made
    /// for this check alone (never used otherwise); this party adds ρ fresh shares of its own and
    /// runs Π_aShare's check on the sums. Every party calls it at the same point with the same
    /// number of instances. A failure poisons the instance.
    ///
    /// Why the sums: a prover i's tag sum for position r opens as ⊕_src ⊕_{k≠i} (K ⊕ x^k_src·Δ^(i→k)_src)
    /// over the sources src (the primary and each instance), while its committed C_b = C0 ⊕ b·D
    /// needs b·D with b = ⊕_src ⊕_k x^k_src. For an honest verifier h, the bits x^h_src are
    /// uniform, independent and unknown to i when it commits, so passing needs
    /// ⊕_src x^h_src·(Δ^(i→h)_src ⊕ D) to equal a value i fixed before — probability at most 1/2
    /// unless Δ^(i→h)_src = D for **every** source: 2^{−ρ} over the ρ positions. The primary's key
    /// is among the sources, so D is the primary's Δ_i, the key i garbles with.
    pub async fn check_instance_keys(&mut self, theirs: &[AuthShares]) -> Result<(), AuthGcError> {
        let (me, n, rho) = (self.me, self.n, self.rho);
        if theirs.iter().any(|s| s.me != me || s.parties() != n || s.len() != rho || s.check_shape().is_err()) {
            return Err(AuthGcError::InvalidArgument(format!(
                "the instance key check takes {rho} shares of this party's view from each instance"
            )));
        }
        self.guarded(async |this: &mut Self| {
            let mut sum = this.share_batch(rho).await?;
            for s in theirs {
                sum.xor_assign(s);
            }
            this.key_check(&sum, &INSTANCE_CHECK, None).await
        })
        .await
    }

    /// Π_aShare's check (Fig. 15) on `shares` (ρ positions that are never used for anything
    /// else), with the labels and check names of `which`. `log`: the broadcast log of the aBit
    /// run that made `shares`, if its digest has not been compared yet: it travels with the
    /// commitments and is compared before any opening.
    async fn key_check(
        &mut self,
        shares: &AuthShares,
        which: &KeyCheck,
        log: Option<&BroadcastLog>,
    ) -> Result<(), AuthGcError> {
        let phase = which.phase;
        // Whether this party checks the others' openings (always, unless a test makes it skip
        // them in the instance key check, as a corrupt party may).
        let checks_others = {
            #[cfg(feature = "testing")]
            let skip = which.across_instances && matches!(self.ch.deviation(), Some(Deviation::SkipOwnInstanceKeyChecks));
            #[cfg(not(feature = "testing"))]
            let skip = false;
            !skip
        };
        let rho = self.rho;
        let (me, n) = (self.me, self.n);

        // (a) Commit to C0_r, C1_r = C0_r ⊕ Δ (as prover) and to the bits and tags (as verifier).
        let c0 = key_sums(shares);
        let label = |what: &[u8], party: PartyId, r: usize| {
            let mut l = which.domain.to_vec();
            l.extend_from_slice(what);
            l.extend_from_slice(&(party as u64).to_le_bytes());
            l.extend_from_slice(&(r as u64).to_le_bytes());
            l
        };
        let mut tags_value = pack_bits(&shares.bits);
        for j in shares.peers() {
            tags_value.extend_from_slice(Block::slice_as_bytes(&shares.macs[j]));
        }
        let tags_len = tags_value.len();
        let (tags_commitment, tags_opening) = commit::commit(&label(b"tags", me, 0), &tags_value)?;
        let mut key_openings = Vec::with_capacity(2 * rho);
        let mut round1 = tags_commitment.to_vec();
        for (r, c) in c0.iter().enumerate() {
            for (b, v) in [(0u8, *c), (1u8, *c ^ self.delta)] {
                let (commitment, opening) = commit::commit(&label(&[b'C', b], me, r), &v.0)?;
                round1.extend_from_slice(&commitment);
                key_openings.push(opening);
            }
        }
        if let Some(log) = log {
            round1.extend_from_slice(&log.digest());
        }
        self.enter(Step::DeltaCommit)?;
        let mut commitments = net::exchange_same(&self.ch, &round1, round1.len()).await?;
        if let Some(log) = log {
            for k in peers(&self.ch) {
                if !log.matches(&commitments[k][round1.len() - 32..]) {
                    // Cannot blame: k lying and a party that showed k and this party different
                    // X's both cause it.
                    return Err(AuthGcError::cheating(phase, None, "broadcast consistency check"));
                }
            }
        }
        commitments[me] = round1;
        let view = |items: &[Vec<u8>], what: &[u8]| -> [u8; 32] {
            let mut h = Sha256::new();
            h.update(which.domain);
            h.update(b"view/v1");
            h.update(what);
            for c in items {
                h.update((c.len() as u64).to_le_bytes());
                h.update(c);
            }
            h.finalize().into()
        };

        // (b) Open bits and tags, with the digest of the commitments this party saw.
        self.enter(Step::DeltaOpenBits)?;
        let mut round2 = tags_opening;
        round2.extend_from_slice(&view(&commitments, b"commitments"));
        let openings = net::exchange_same(&self.ch, &round2, round2.len()).await?;
        let mut bits = vec![shares.bits.clone(); n];
        // tags[k][j][r] = M_j[x^k_r], as opened by k.
        let mut tags = vec![vec![Vec::new(); n]; n];
        tags[me] = shares.macs.clone();
        let my_view = view(&commitments, b"commitments");
        for k in peers(&self.ch) {
            let (opening, their_view) = openings[k].split_at(NONCE_LEN + tags_len);
            if their_view != my_view {
                // Cannot blame: k lying about its view and a third party showing k and this party
                // different commitments both cause it.
                return Err(AuthGcError::cheating(phase, None, "commitment consistency check (a party equivocated)"));
            }
            // Can blame k: the commitment and its opening are both k's own messages.
            let value = commit::verify(&label(b"tags", k, 0), &commitments[k][..COMMITMENT_LEN], opening)
                .ok_or(AuthGcError::cheating(phase, Some(k), which.opening))?;
            let packed = rho.div_ceil(8);
            bits[k] = unpack_bits(&value[..packed], rho).ok_or(AuthGcError::Malformed {
                phase,
                peer: k,
                what: "aShare opened bits",
            })?;
            let blocks = Block::slice_from_bytes(&value[packed..]).expect("length fixed by the commitment check");
            let mut at = 0;
            for j in (0..n).filter(|&j| j != k) {
                tags[k][j] = blocks[at..at + rho].to_vec();
                at += rho;
            }
            // The verifier's opened bits must carry valid tags under this party's key before this
            // party opens C_b: with a flipped bit x', C_b = ΣK ⊕ x'·Δ, and the verifier, who knows
            // its true tag K ⊕ x·Δ, would learn Δ from it. (Fig. 15 omits this check.)
            let want = expected_macs(&shares.keys[k], &bits[k], self.sender_delta(k));
            let ok = Block::slice_as_bytes(&want).ct_eq(Block::slice_as_bytes(&tags[k][me]));
            if !bool::from(ok) && checks_others {
                // Can blame k: the bits and tags are k's own opening, checked against this
                // party's keys from the Δ-OT of this pair alone.
                return Err(AuthGcError::cheating(phase, Some(k), which.tags));
            }
        }

        // (c) Open C_b for b = ⊕_{k≠me} x^k, with the digest of the openings this party saw.
        let mut opened = openings.clone();
        opened[me] = round2;
        let openings_view = view(&opened, b"openings");
        let b_of = |prover: PartyId, r: usize| (0..n).filter(|&k| k != prover).fold(false, |a, k| a ^ bits[k][r]);
        let mut round3 = Vec::with_capacity(rho * (NONCE_LEN + 16) + 32);
        for r in 0..rho {
            round3.extend_from_slice(&key_openings[2 * r + usize::from(b_of(me, r))]);
        }
        round3.extend_from_slice(&openings_view);
        self.enter(Step::DeltaOpenKey)?;
        // C0_r ⊕ C1_r = Δ: the unopened halves must not outlive this step.
        key_openings.iter_mut().for_each(|o| wipe_bytes(o));
        let keys = net::exchange_same(&self.ch, &round3, round3.len()).await?;

        // (d) Each prover's opened key sum must be the XOR of the tags under its key.
        for j in peers(&self.ch) {
            let (body, their_view) = keys[j].split_at(rho * (NONCE_LEN + 16));
            if their_view != openings_view {
                // Cannot blame, as for the commitments' view above.
                return Err(AuthGcError::cheating(phase, None, "commitment consistency check (a party equivocated)"));
            }
            for r in 0..rho {
                let b = usize::from(b_of(j, r));
                let at = COMMITMENT_LEN * (1 + 2 * r + b);
                let opening = &body[r * (NONCE_LEN + 16)..(r + 1) * (NONCE_LEN + 16)];
                // Can blame j: its own commitment and opening; b is public and agreed (the
                // openings' views were just compared).
                let value =
                    commit::verify(&label(&[b'C', b as u8], j, r), &commitments[j][at..at + COMMITMENT_LEN], opening)
                        .ok_or(AuthGcError::cheating(phase, Some(j), which.opening))?;
                let want = (0..n).filter(|&k| k != j).fold(Block::ZERO, |a, k| a ^ tags[k][j][r]);
                if value != &want.0[..] && checks_others {
                    // Can blame j: the tags are the verifiers' openings, which every honest
                    // party saw alike (compared views) and which j itself checked under its key
                    // before opening C_b (step (b)); so ⊕ tags = ⊕ K_j ⊕ b·Δ_j for an honest j,
                    // and only j's C_b (its keys' sum and Δ_j) can be off.
                    return Err(AuthGcError::cheating(phase, Some(j), which.consistency));
                }
            }
        }
        Ok(())
    }

    /// One batch of `len` random authenticated shares.
    async fn share_batch(&mut self, len: usize) -> Result<AuthShares, AuthGcError> {
        let phase = Phase::Independent;
        let (mut shares, log) = self.abit(len + self.key_check_positions(), phase).await?;
        if self.key_check_pending {
            // The global-key check compares the X digest in its first flight.
            let positions = shares.split_off(len);
            self.first_key_check(positions, &log).await?;
        } else {
            self.enter(Step::AbitBroadcast)?;
            log.check(&self.ch, phase).await?;
        }
        Ok(shares)
    }

    /// One batch of `requested` AND triples (aBit, HaAND, LaAND, bucketing), and `riders` random
    /// shares whose bits come from the same aBit run: they share its consistency check, and
    /// their X's are in the digest the HaAND flight compares, so they cost no flight of their
    /// own (a share batch takes six).
    async fn triple_batch(&mut self, requested: usize, riders: usize) -> Result<(Triples, AuthShares), AuthGcError> {
        let phase = Phase::Independent;
        let (me, n, delta) = (self.me, self.n, self.delta);
        let plan = bucket_plan(requested, self.rho);
        let l = plan.leaky();
        let counter = self.leaky_done;
        if counter + l as u64 > MAX_LEAKY {
            return Err(AuthGcError::InvalidArgument("this F_Pre instance has used up its hash tweaks".into()));
        }
        self.leaky_done += l as u64;

        // ⟨x⟩, ⟨y⟩, ⟨r⟩, the riding shares and (first batch) Π_aShare's positions from one aBit run.
        let (mut x, x_log) = self.abit(3 * l + riders + self.key_check_positions(), phase).await?;
        let key_check = x.split_off(3 * l + riders);
        let riding = x.split_off(3 * l);
        let r = x.split_off(2 * l);
        let y = x.split_off(l);
        // split_off leaves the head's capacity at the whole run: give the memory back.
        x.bits.shrink_to_fit();
        x.macs.iter_mut().chain(x.keys.iter_mut()).for_each(|c| c.shrink_to_fit());
        // The first batch proves every party's keys are under one Δ before HaAND reveals anything
        // computed from them (F_aShare's output precedes Π_aAND, as in the paper).
        if self.key_check_pending {
            self.first_key_check(key_check, &x_log).await?;
        }

        // Round 1, to every peer j: Π_HaAND's two bits per triple and Π_LaAND's U blocks for the
        // keys this party holds on j's x, the digest of the X's, and a commitment to this party's
        // share of the coins for the LaAND check (opened only after every e is fixed).
        let packed = l.div_ceil(8);
        let r1_len = 2 * packed + 16 * l + 32 + COMMITMENT_LEN;
        let coin = random::random_block()?;
        let coin_label = |p: PartyId| {
            let mut label = b"webmpc/authgc/fpre/laand-coins/".to_vec();
            label.extend_from_slice(&(p as u64).to_le_bytes());
            label
        };
        let (coin_commitment, coin_opening) = commit::commit(&coin_label(me), &coin.0)?;
        let s: Vec<Vec<bool>> =
            (0..n).map(|j| if j == me { Ok(Vec::new()) } else { random_bits(l) }).collect::<Result<_, _>>()?;
        let phis = self.timed(Work::LeakyCheck, |_| phi(&y, delta));
        let mut acc = vec![Block::ZERO; l];
        let mut r1: Vec<Vec<u8>> = self.timed(Work::Hashing, |this| {
            (0..n)
                .map(|j| {
                    if j == me {
                        return Vec::new();
                    }
                    let (mut h0, mut h1) = (vec![false; l], vec![false; l]);
                    let mut msg = vec![0u8; r1_len];
                    let u = Block::slice_from_bytes_mut(&mut msg[2 * packed..2 * packed + 16 * l]).expect("16·l bytes");
                    let base = tweak_base(this.tag, HashUse::AndTriple, me, j, counter);
                    leaky_and_send(&x.keys[j], delta, &y.bits, &s[j], &phis, base, &mut h0, &mut h1, u, &mut acc);
                    msg[..packed].copy_from_slice(&pack_bits(&h0));
                    msg[packed..2 * packed].copy_from_slice(&pack_bits(&h1));
                    msg[2 * packed + 16 * l..2 * packed + 16 * l + 32].copy_from_slice(&x_log.digest());
                    msg[2 * packed + 16 * l + 32..].copy_from_slice(&coin_commitment);
                    msg
                })
                .collect()
        });
        self.enter(Step::HalfAnd)?;
        let got = net::exchange(&self.ch, |j| core::mem::take(&mut r1[j]), |_| r1_len).await?;
        drop(r1);
        let mut z_bits: Vec<bool> = x.bits.iter().zip(&y.bits).map(|(a, b)| a & b).collect();
        let mut e_log = BroadcastLog::new();
        let mut coin_commitments = vec![coin_commitment.to_vec(); n];
        for j in peers(&self.ch) {
            let msg = &got[j];
            if !x_log.matches(&msg[2 * packed + 16 * l..2 * packed + 16 * l + 32]) {
                // Cannot blame: j lying and a party that showed j and this party different X's
                // both cause it.
                return Err(AuthGcError::cheating(phase, None, "broadcast consistency check"));
            }
            let malformed = || AuthGcError::Malformed { phase, peer: j, what: "HaAND bits" };
            let h0 = unpack_bits(&msg[..packed], l).ok_or_else(malformed)?;
            let h1 = unpack_bits(&msg[packed..2 * packed], l).ok_or_else(malformed)?;
            let u = Block::slice_from_bytes(&msg[2 * packed..2 * packed + 16 * l]).expect("16·l bytes");
            // Bit 0 of U is not part of the check (it is cleared): canonical encodings only.
            if u.iter().any(|b| b.lsb()) {
                return Err(AuthGcError::Malformed { phase, peer: j, what: "LaAND U blocks" });
            }
            coin_commitments[j] = msg[2 * packed + 16 * l + 32..].to_vec();
            self.timed(Work::Hashing, |this| {
                let mut t = vec![false; l];
                let base = tweak_base(this.tag, HashUse::AndTriple, j, me, counter);
                leaky_and_receive(&x.macs[j], &x.bits, &h0, &h1, u, base, &mut t, &mut acc);
                for ((z, t), s) in z_bits.iter_mut().zip(&t).zip(&s[j]) {
                    *z ^= t ^ s;
                }
            });
        }
        drop(got);
        drop(s);
        for (p, c) in coin_commitments.iter().enumerate() {
            e_log.record(p, b"LaAND coin commitment", c);
        }
        #[cfg(feature = "testing")]
        if let Some(Deviation::WrongZ { index }) = self.ch.deviation() {
            if index < l {
                z_bits[index] ^= true;
            }
        }

        // Round 2: broadcast e = z ⊕ r; ⟨z⟩ = ⟨r⟩ ⊕ e.
        let e: Vec<bool> = z_bits.iter().zip(&r.bits).map(|(z, r)| z ^ r).collect();
        z_bits.iter_mut().for_each(|b| *b = false);
        let e_packed = pack_bits(&e);
        self.enter(Step::LeakyE)?;
        let mut es = net::exchange_same(&self.ch, &e_packed, packed).await?;
        es[me] = e_packed;
        let mut z = r;
        for (p, packed_e) in es.iter().enumerate() {
            e_log.record(p, b"LaAND e", packed_e);
            let e = unpack_bits(packed_e, l).ok_or(AuthGcError::Malformed { phase, peer: p, what: "LaAND e bits" })?;
            z.add_public(&e, delta, p);
        }

        // Round 3: open the coins, with the digest of the e's and coin commitments; check them
        // before anything derived from the honest H values leaves this party.
        let mut r3 = coin_opening;
        r3.extend_from_slice(&e_log.digest());
        self.enter(Step::LeakyCoins)?;
        let got = net::exchange_same(&self.ch, &r3, NONCE_LEN + 16 + 32).await?;
        let mut coins = Sha256::new();
        coins.update(b"webmpc/authgc/fpre/laand-coins/v1");
        for (p, msg) in got.iter().enumerate() {
            if p == me {
                coins.update(coin.0);
                continue;
            }
            if !e_log.matches(&msg[NONCE_LEN + 16..]) {
                // Cannot blame, as for the X digest above.
                return Err(AuthGcError::cheating(phase, None, "broadcast consistency check"));
            }
            // Can blame p: the coin commitment and its opening are both p's own messages.
            let value = commit::verify(&coin_label(p), &coin_commitments[p], &msg[..NONCE_LEN + 16])
                .ok_or(AuthGcError::cheating(phase, Some(p), "commitment opening"))?;
            coins.update(value);
        }
        let chi_seed = Block(coins.finalize()[..16].try_into().expect("16 bytes"));

        // H_i, compressed to h_i = Σ χ_t·H_{i,t}; commit-then-open h_i with a coin for bucketing.
        let h = self.timed(Work::LeakyCheck, |_this| {
            laand_local_terms(&x.bits, &z, &phis, delta, &mut acc);
            #[cfg(feature = "testing")]
            if let Some(Deviation::WrongCheckValue { index }) = _this.ch.deviation() {
                if index < l {
                    acc[index] ^= Block::from_u128(2);
                }
            }
            laand_compress(chi_seed, &acc)
        });
        Block::wipe(&mut acc);
        drop(phis);
        let bucket_coin = random::random_block()?;
        let mut value = h.0.to_vec();
        value.extend_from_slice(&bucket_coin.0);
        self.enter(Step::LeakyCheck)?;
        let all = net::commit_then_open(&self.ch, phase, "LaAND check value and bucketing coins", &value, 32).await?;
        let sum = all.iter().fold(Block::ZERO, |a, v| a ^ Block(v[..16].try_into().expect("32 bytes")));
        // The sum is public once opened.
        if sum != Block::ZERO {
            // Cannot blame: a sum over every party's H_i, and a wrong triple (which any party's
            // HaAND bits, U blocks or z can cause) shows in every honest party's term too.
            return Err(AuthGcError::cheating(phase, None, "LaAND triple check"));
        }
        let mut bc = Sha256::new();
        bc.update(b"webmpc/authgc/fpre/bucket-coins/v1");
        for v in &all {
            bc.update(&v[16..]);
        }
        let seed = Block(bc.finalize()[..16].try_into().expect("16 bytes"));

        // Bucketing: a public permutation, d = y_head ⊕ y_s opened with MAC checks, fold.
        let leaky = Triples { x, y, z };
        let (perm, d_shares) = self.timed(Work::Bucketing, |_| {
            let perm = bucket_permutation(seed, l);
            let d = bucket_differences(&leaky.y, &perm, plan.bucket);
            (perm, d)
        });
        self.enter(Step::BucketOpen)?;
        let d =
            net::open(&self.ch, phase, "bucketing MAC check on the opened d = y1 ⊕ y2", &d_shares, delta, Reveal::All)
                .await?;
        drop(d_shares);
        let mut out = self.timed(Work::Bucketing, |_| fold_buckets(&leaky, &perm, plan.bucket, &d));
        drop(leaky);
        drop(out.split_off(requested));
        Ok((out, riding))
    }

    /// Runs `f` over batches, poisoning the instance on any error.
    async fn guarded<T>(&mut self, f: impl AsyncFnOnce(&mut Self) -> Result<T, AuthGcError>) -> Result<T, AuthGcError> {
        if self.poisoned {
            return Err(poisoned());
        }
        self.poisoned = true;
        let out = f(self).await?;
        self.enter(Step::Idle)?;
        self.poisoned = false;
        Ok(out)
    }
}

impl<C: Channel + Clone> Preprocessor for RealPreprocessor<C> {
    fn party(&self) -> PartyId {
        self.me
    }

    fn parties(&self) -> usize {
        self.n
    }

    fn delta(&self) -> Block {
        self.delta
    }

    fn lead_next_message(&mut self, head: LeadingHead) -> bool {
        // Every batch's first message is its aBit run's first Δ-OT flight.
        self.leading = Some(head);
        true
    }

    async fn random_shares(&mut self, n: usize) -> Result<AuthShares, AuthGcError> {
        Ok(self.triples_and_shares(0, n).await?.1)
    }

    async fn and_triples(&mut self, n: usize) -> Result<Triples, AuthGcError> {
        Ok(self.triples_and_shares(n, 0).await?.0)
    }

    /// The shares ride on the last triple batch's aBit run (up to 3ℓ of them, so the run at most
    /// doubles); any more come in share batches of their own, after it.
    async fn triples_and_shares(&mut self, triples: usize, shares: usize) -> Result<(Triples, AuthShares), AuthGcError> {
        self.guarded(async |this: &mut Self| {
            let empty = AuthShares::empty(this.me, this.n);
            let mut out = Triples { x: empty.clone(), y: empty.clone(), z: empty.clone() };
            let mut masks = empty;
            let sizes = batch_sizes(triples, MAX_TRIPLE_BATCH);
            let riders = sizes.last().map_or(0, |&last| shares.min(3 * bucket_plan(last, this.rho).leaky()));
            for (i, &len) in sizes.iter().enumerate() {
                let (t, s) = this.triple_batch(len, if i + 1 == sizes.len() { riders } else { 0 }).await?;
                out.x.extend(&t.x);
                out.y.extend(&t.y);
                out.z.extend(&t.z);
                masks.extend(&s);
            }
            for len in batch_sizes(shares - riders, MAX_SHARE_BATCH) {
                masks.extend(&this.share_batch(len).await?);
            }
            Ok((out, masks))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_split_evenly() {
        assert!(batch_sizes(0, 10).is_empty());
        assert_eq!(batch_sizes(10, 10), vec![10]);
        assert_eq!(batch_sizes(11, 10), vec![6, 5]);
        assert_eq!(batch_sizes(25, 10), vec![9, 8, 8]);
        assert_eq!(batch_sizes(MAX_TRIPLE_BATCH + 1, MAX_TRIPLE_BATCH).iter().sum::<usize>(), MAX_TRIPLE_BATCH + 1);
    }

    #[test]
    fn step_table_is_complete() {
        for (i, s) in Step::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
        for (i, w) in Work::ALL.iter().enumerate() {
            assert_eq!(*w as usize, i);
        }
    }
}
