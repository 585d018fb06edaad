//! Distributed garbling, input processing, evaluation and output (WRK17 Figs. 2–3) over any
//! [`Preprocessor`]: the n-party authenticated-garbling protocol proper.
//!
//! # What it protects against
//!
//! Malicious security **with abort** against any n − 1 corrupted parties, in the F_Pre-hybrid
//! model (F_Pre is the [`Preprocessor`]), with the row hash below in place of the paper's random
//! oracle. A cheater can make honest parties abort; it cannot make an honest party accept a wrong
//! output or learn more than its own outputs. Aborts are *designated* once private outputs exist:
//! a corrupt party may abort after it learned its own outputs (WRK17 note this is what several
//! output parties give with standard techniques).
//!
//! # The protocol
//!
//! One party, `roles.evaluator` (any party), evaluates; every other party i garbles with its
//! global key Δ_i as free-XOR offset (Δ_i is also its MAC key, which is what turns the BDOZ tags
//! into label shares). Per run:
//!
//! 1. **Agreement.** All parties exchange the circuit's content hash and a digest of the roles,
//!    options, run number and preprocessing state; any difference aborts with
//!    `PARAMETER_MISMATCH` before a secret-dependent message. A run of a prepared circuit sends
//!    it at the head of the input masks' opening (step 5), one flight fewer: those mask shares
//!    are of this run's prepared material alone, which a mismatch discards before any masked
//!    input moves.
//! 2. **Masks and labels.** Input wires and AND outputs get a random authenticated mask ⟨λ_w⟩
//!    (F_Pre *random*); every garbler picks a random zero-label for them. XOR gates XOR masks and
//!    labels; INV adds the public constant 1 to the mask (so masked values and labels pass
//!    through); a CONST gate has mask 0 and zero-label c·Δ_i (its active label is the public 0).
//! 3. **F_Pre.AND** ([`and_from_triples`], one opening round per chunk) gives ⟨λ_α λ_β⟩; the four
//!    rows' masked outputs ⟨r_ℓ⟩ follow locally (r_0 = λ_αλ_β ⊕ λ_γ, r_ℓ = r_0 ⊕ b·λ_α ⊕ a·λ_β ⊕ ab
//!    for ℓ = 2a + b, the constant added by
//!    [`CONSTANT_HOLDER`](crate::preprocess::CONSTANT_HOLDER)).
//! 4. **Tables.** Garbler i sends, per AND gate and row, H(L^i_{α,a}, L^i_{β,b}, γ, ℓ) ⊕
//!    (r^i_ℓ, {M_j[r^i_ℓ]}_{j≠i}, L^i_{γ,0} ⊕ ⊕_{j≠i} K_i[r^j_ℓ] ⊕ r^i_ℓ·Δ_i): 4·(nκ + 1) bits.
//! 5. **Inputs.** The mask shares of each input wire are opened to its owner only (MAC-checked,
//!    [`open`] with [`Reveal::Each`]); every owner (the evaluator included, the paper's step 6)
//!    sends x̂ = x ⊕ λ to every party; the broadcast check (below); every garbler sends its
//!    label for x̂ to the evaluator.
//! 6. **Evaluation.** The evaluator decrypts, per AND gate and garbler, the row its masked inputs
//!    select and **checks the tag under its own key of every garbler's row before using any
//!    of them** (pitfall 7); a failure aborts (naming the garbler only where that proves it
//!    deviated: see **Who is blamed**). x̂_γ = ⊕ r^i_ℓ and
//!    L^i_γ = (label share) ⊕ ⊕_{j≠i} M_i[r^j_ℓ]. Independent AND gates of a chunk (one level
//!    of the garble crate's hazard-aware schedule) are hashed in one batch per garbler. The row
//!    is selected by x̂, which the evaluator is meant to see (uniform, independent of the
//!    inputs), so indexing by it leaks no secret.
//! 7. **Outputs** (below), to all parties or to designated ones.
//!
//! # The row hash
//!
//! Each row needs n·κ + 1 pad bits. With π = fixed-key AES (the public key of
//! [`webmpc_core::aes::FIXED_KEY`]), for garbler i, AND gate γ and row ℓ = 2a + b:
//!
//! * x = L^i_{α,a} ⊕ σ(L^i_{β,b}) ⊕ t_γ, with σ the orthomorphism of [`webmpc_core::hash::sigma`];
//! * u = π(x); the masked bit's pad is lsb(u);
//! * block k (k < n: the n − 1 tags, then the label share) is padded with
//!   π(u ⊕ t_{γ,ℓ,k}) ⊕ u, which is exactly TMMO(x, t_{γ,ℓ,k}) of Guo–Katz–Wang–Yu
//!   ([`webmpc_core::hash::tccr`]) with the inner call shared by the row's blocks.
//!
//! The tweaks t_γ and t_{γ,ℓ,k} are unique per (session, run, garbler, AND gate, row, output
//! block): a 64-bit tag from SHA-256(session, run, garbler), then the AND-gate index, the row and
//! the block ([`gc_core::Tweaks`]). **Cost:** 1 + n AES calls per row, so 4(n + 1) per AND gate
//! per garbler, and (n − 1)(n + 1) per AND gate for the evaluator.
//!
//! **Why it has the property the proof needs.** The proof (Thm. A.1) uses that the three rows
//! the evaluator does not open have pads it cannot tell from random, although (i) their inputs
//! are correlated with the opened row's through Δ_i, (ii) the row contents contain multiples of
//! Δ_i (the label share is L_{γ,0} ⊕ …⊕ r·Δ_i, and the evaluator may know it up to b·Δ_i), and
//! (iii) garbling is free-XOR, so the evaluator knows many XOR relations among labels. Here the
//! unopened rows' x differ from the opened one by Δ_i, σ(Δ_i) or Δ_i ⊕ σ(Δ_i) = σ²(Δ_i); since
//! σ is an orthomorphism with σ³ = id, every one of these and every difference of two of them is
//! an invertible linear image of Δ_i, so no two rows (of any gates) have inner inputs that
//! coincide or can be predicted except with probability ~2^-128 per pair: in the
//! ideal-permutation model u is a fresh uniform value for each unopened row, and each pad block
//! π(u ⊕ t) ⊕ u masks the content with a fresh permutation output whose input the evaluator
//! cannot know. This is the TCCR argument of Guo et al. (TMMO is tweakable *circular*
//! correlation robust: H(x ⊕ R, i) ⊕ b·R looks random), which is why plain MMO (π(y) ⊕ y, not
//! circular: for y = x ⊕ Δ its output ⊕ Δ reveals π(y) and so Δ) and a sum of per-label hashes
//! (the XOR of a gate's four pads would vanish, and the XOR of its four label shares is Δ_i)
//! are not used. lsb(u) is uniform for the same reason (u is only ever used under a fresh π
//! output). The tweak in x makes the inner input of two gates with the same input wires
//! different, and the outer tweaks make every block's pad distinct.
//!
//! # Inputs and outputs
//!
//! **Masked inputs are broadcast with abort** through a [`BroadcastLog`] (Goldwasser–Lindell's
//! echo, deferred to one digest round): every party records every owner's x̂, and the digests
//! are compared right after the masked-input round — before any label is sent, so before
//! evaluation and long before any output. One round covers all owners' values, instead of an
//! echo per value; and checking it that early means an owner who shows different x̂ to
//! different parties is always caught *by this check* (every honest party aborts with
//! "broadcast consistency check"), rather than later as a tag failure that would seem to blame
//! the honest garbler whose label then belongs to the other value.
//!
//! **Client inputs** (an input value whose owner is [`CLIENT`]: someone outside the session, who
//! runs no preprocessing) are opened and checked differently: see [`clients`].
//!
//! **A wrong input label** from garbler i (anything but L^i_{w,x̂}) is caught by the evaluator's
//! tag check at the first AND gate whose input depends on w: the row is then decrypted under a
//! hash of the wrong input, so the tag is random. A wrong label on a wire that reaches no AND
//! gate cannot be caught, and is harmless: garbler i's labels are used only to decrypt garbler
//! i's rows and to authenticate outputs *to garbler i* (below), while x̂ values, and so every
//! honest party's outputs, never depend on labels on XOR-only paths.
//!
//! **Outputs** go to all parties or to designated ones ([`Recipients`]). A private output's mask
//! shares go to its recipients only ([`Reveal::Each`], MAC-checked). The evaluator sends each
//! other recipient p the masked output x̂_w **and the label L^p_{w,x̂_w}** it holds from p; p
//! checks it against its own L^p_{w,0} ⊕ x̂_w·Δ_p. To claim the other value the evaluator would
//! need L^p_{w,0} ⊕ (1 ⊕ x̂_w)·Δ_p, i.e. Δ_p, which even a coalition of all other parties does not
//! have; so a lying evaluator is caught. (Every recipient other than the evaluator is a garbler.)
//!
//! **Openings cannot equivocate either**: every share opened anywhere (input and output masks,
//! the d and e of F_Pre.AND) travels with a digest of its tags under the recipient's key, so a
//! party that shows a flipped share to one recipient needs that recipient's Δ.
//!
//! # Who is blamed
//!
//! Abort, **not identifiable abort** (the [crate docs](crate#abort-not-identifiable-abort)): a
//! verdict names a party only where the failed check proves that party deviated.
//!
//! * A share opening that fails its MAC check names the sender: the bits and the tag digest are
//!   its message, checked against the recipient's own keys, and the pairwise MAC relation of two
//!   honest parties holds whatever the others do (every public value it was combined with was
//!   opened with MAC checks or broadcast with abort before).
//! * A malformed message names its sender.
//! * The broadcast check names nobody: a digest differs, which the party that sent it and a party
//!   that showed different values to different parties both cause.
//! * The evaluator's **tag check** on garbler i's row names i only if both input labels of the
//!   gate came from i alone ([`gc_core::single_source`]: no AND gate before them, or n = 2). After
//!   an AND gate, the evaluator's label of i is rebuilt from i's row *and from the tags every other
//!   garbler j holds for i in its own row*, which the evaluator cannot check (they are MACs under
//!   Δ_i): a corrupt j that flips its tag for an honest i makes i's next row fail, so the verdict
//!   names nobody.
//! * A recipient's **output label check** names the evaluator only for a wire with a single
//!   source. Otherwise a garbler's flipped tag in a gate that reaches the output through XOR gates
//!   only (no later row check sees it) makes the honest evaluator hand over a wrong label, so the
//!   verdict names nobody.
//!
//! With two parties every label has a single source, so both checks name the other party.
//!
//! # Phases
//!
//! * setup: constructing the preprocessor (base OTs);
//! * function-independent: [`AuthGcParty::preprocess`] pools AND triples and masks for a bound;
//! * function-dependent: [`AuthGcParty::prepare`] garbles a known circuit (tables stored at the
//!   evaluator) before inputs exist;
//! * online: [`AuthGcParty::run`] processes inputs, evaluates and outputs.
//!
//! [`AuthGcParty::run`] on a circuit that was not prepared (a streamed circuit, typically) runs
//! **interleaved**: inputs first, then per chunk of gates masks, F_Pre.AND, tables and
//! evaluation, so memory is bounded by a chunk and the live wires (compacted circuits reuse wires:
//! all state is per live wire) whatever the circuit's size. Preprocessed material is drawn from
//! the pool and, when it runs out, from the preprocessor: what the chunk lacks, or
//! [`Options::batch`] at once while more of the circuit is to come.
//!
//! # Messages between a pair (for tests that deviate)
//!
//! Per run, in order: the agreement; then, if the circuit has inputs, the input-mask opening, the
//! masked inputs, the broadcast check and (garbler → evaluator) the input labels; per chunk with
//! AND gates, whatever the preprocessor sends, the F_Pre.AND opening and (garbler → evaluator)
//! the table; then (evaluator → each other recipient with outputs) the masked outputs with
//! labels, and the output-mask opening. [`AuthGcParty::prepare`] sends the agreement and the
//! chunks, its agreement at the head of the preprocessor's first message when it makes a batch
//! (the real F_Pre's first aBit flight; [`Preprocessor::lead_next_message`]); the run after it
//! sends everything else, its agreement at the head of the input-mask opening.

pub mod clients;
pub mod gc_core;
pub mod local;
pub mod material;
mod shared;

pub use gc_core::{MAX_AND_GATES, MAX_PARTIES};
pub use shared::SharedChannel;
pub use clients::{client_share_bytes, ClientMasks, ClientMessage, CLIENT, CLIENT_CHECK_BITS};

use crate::net::{exchange, exchange_heads, open, open_behind, peers, BroadcastLog, Head, Reveal};
use crate::preprocess::{and_from_triples, LeadingHead, Preprocessor, Triples};
use crate::share::{mask, pack_bits, unpack_bits, AuthShares};
use crate::{AuthGcError, Phase};
use futures::future::try_join_all;
use gc_core::{and_count, table_bytes, AndInputs, EvalRows, EvalState, GarbleRows, Tweaks, WireState};
use sha2::{Digest, Sha256};
use webmpc_circuit::Gate;
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::prg::Prg;
use webmpc_core::Block;
pub use webmpc_garble::{GateSource, PreparedCircuit, Shape};
use webmpc_garble::YaoError;
use crate::fpre::RealPreprocessor;
use material::Material;

/// Who learns an output value: a set of parties (bit p = party p).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Recipients(u64);

impl Recipients {
    /// Every party.
    pub const ALL: Recipients = Recipients(u64::MAX);

    /// Exactly `parties`.
    pub fn only(parties: &[PartyId]) -> Recipients {
        Recipients(parties.iter().filter(|&&p| p < 64).fold(0, |m, &p| m | 1 << p))
    }

    /// From a bit mask (bit p = party p).
    pub fn from_mask(mask: u64) -> Recipients {
        Recipients(mask)
    }

    /// Whether party `p` learns the value.
    pub fn includes(self, p: PartyId) -> bool {
        p < 64 && self.0 >> p & 1 == 1
    }

    /// The mask restricted to a session of `parties` parties.
    pub fn mask(self, parties: usize) -> u64 {
        if parties >= 64 {
            self.0
        } else {
            self.0 & ((1u64 << parties) - 1)
        }
    }
}

/// The public roles of a run; every party must pass the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roles {
    /// The evaluating party.
    pub evaluator: PartyId,
    /// The owner of each input value, in circuit order.
    pub owners: Vec<PartyId>,
    /// The recipients of each output value, in circuit order.
    pub outputs: Vec<Recipients>,
}

/// Tuning that every party must set alike (it is part of the agreement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Gates per chunk: the unit of F_Pre.AND rounds, table messages and (interleaved) memory.
    /// A table message is at most 64·n bytes per AND gate of a chunk.
    pub chunk_gates: usize,
    /// Most triples (or masks) fetched from the preprocessor at once when the pool runs dry
    /// during an interleaved run.
    pub batch: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { chunk_gates: 1 << 16, batch: 1 << 16 }
    }
}

/// Output values as bits (wire k = bit k), `None` for values this party does not learn.
pub type Outputs = Vec<Option<Vec<bool>>>;

/// What the last [`AuthGcParty::run`] (or [`AuthGcParty::prepare`]) held at most, for tests that
/// check memory stays bounded and for benches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Whether the run used material from [`AuthGcParty::prepare`].
    pub phased: bool,
    /// Chunks processed.
    pub chunks: u64,
    /// AND gates garbled.
    pub and_gates: u64,
    /// Most AND gates in one chunk.
    pub max_chunk_and_gates: usize,
    /// Most AND triples in the pool at once.
    pub max_pooled_triples: usize,
    /// Most random masks in the pool at once.
    pub max_pooled_shares: usize,
    /// Largest table message sent or received (per garbler).
    pub max_table_bytes: usize,
    /// Wires of per-wire state held.
    pub wire_state: usize,
    /// Bytes of garbled material stored by [`AuthGcParty::prepare`] (evaluator).
    pub stored_bytes: usize,
}

/// Progress of a phase: (phase, done, total) — gates for the dependent and online phases,
/// triples for the function-independent one.
pub trait Progress: FnMut(Phase, u64, u64) {}
impl<F: FnMut(Phase, u64, u64)> Progress for F {}

/// What a circuit's next run has ready: its input wires' masks (and a garbler's zero-labels) and
/// the client check masks from [`AuthGcParty::prepare`] or [`AuthGcParty::reserve_inputs`], and
/// with `prepare` the whole garbled circuit.
struct Prepared {
    hash: [u8; 32],
    roles: Roles,
    inputs: Ends,
    /// [`CLIENT_CHECK_BITS`] masks μ per client input value, in circuit order ([`clients`]).
    client_checks: AuthShares,
    /// The circuit's input widths.
    input_widths: Vec<u32>,
    /// The garbled circuit (`prepare`); `None` after `reserve_inputs`, whose run garbles and
    /// evaluates chunk by chunk.
    garbled: Option<Garbled>,
}

/// The function-dependent material of a prepared circuit.
struct Garbled {
    /// The run whose tweaks the tables were garbled under.
    run: u64,
    outputs: Ends,
    /// The evaluator's per-chunk material (empty for garblers).
    chunks: Vec<ChunkMaterial>,
}

/// Mask views (and a garbler's zero-labels) of the input or output wires, with whether each
/// wire's labels have a single source ([`gc_core::single_source`]; all input wires have).
struct Ends {
    masks: AuthShares,
    zero: Vec<Block>,
    single_source: Vec<bool>,
}

impl Drop for Ends {
    fn drop(&mut self) {
        Block::wipe(&mut self.zero);
    }
}

/// What the evaluator keeps of a chunk for evaluation.
struct ChunkMaterial {
    r0: AuthShares,
    alpha: AuthShares,
    beta: AuthShares,
    tables: Vec<Vec<u8>>,
}

impl ChunkMaterial {
    fn bytes(&self) -> usize {
        let per = |s: &AuthShares| s.len() * (1 + 32 * (s.parties() - 1));
        per(&self.r0) + per(&self.alpha) + per(&self.beta) + self.tables.iter().map(Vec::len).sum::<usize>()
    }
}

/// One party of an authenticated-garbling session: its preprocessor (F_Pre), its channel and the
/// pools of preprocessed material. Runs any number of circuits; every party must make the same
/// calls in the same order.
pub struct AuthGcParty<P, C> {
    pre: P,
    ch: C,
    session: [u8; 32],
    options: Options,
    runs: u64,
    triples: Option<Triples>,
    shares: Option<AuthShares>,
    labels: Prg,
    prepared: Option<Prepared>,
    stats: RunStats,
    /// A parallel instance ([`AuthGcParty::new_instance`]): preprocesses only.
    instance_only: bool,
}

const MODE_PREPARE: u8 = 0;
const MODE_PHASED: u8 = 1;
const MODE_INTERLEAVED: u8 = 2;
const MODE_RESERVE: u8 = 3;
const MODE_RESERVED: u8 = 4;

/// Checks peer j's agreement (the circuit's content hash, then a digest of everything else)
/// against this party's; the mismatch names what differs.
fn check_agreement(mine: &[u8], j: PartyId, theirs: &[u8]) -> Result<(), AuthGcError> {
    if theirs.len() < mine.len() {
        return Err(ChannelError::UnexpectedLength { peer: j, expected: mine.len(), got: theirs.len() }.into());
    }
    if theirs[..32] != mine[..32] {
        return Err(AuthGcError::ParameterMismatch { peer: j, what: "circuit (content hash)" });
    }
    let common = mine.len().min(64);
    if theirs[..common] != mine[..common] {
        return Err(AuthGcError::ParameterMismatch { peer: j, what: "roles, options, run or preprocessing state" });
    }
    if theirs != mine {
        return Err(AuthGcError::ParameterMismatch { peer: j, what: "client messages" });
    }
    Ok(())
}

/// Maps a circuit source's failure onto this crate's errors.
impl From<YaoError> for AuthGcError {
    fn from(e: YaoError) -> Self {
        match e {
            YaoError::Circuit(c) => AuthGcError::Circuit(c),
            YaoError::ParameterMismatch(what) => AuthGcError::CircuitMismatch(what),
            YaoError::Channel(c) => AuthGcError::Channel(c),
            YaoError::Ot(o) => AuthGcError::Ot(o),
            YaoError::InvalidArgument(s) => AuthGcError::InvalidArgument(s),
            YaoError::Garble(g) => AuthGcError::InvalidArgument(g.to_string()),
        }
    }
}

fn invalid(msg: impl Into<String>) -> AuthGcError {
    AuthGcError::InvalidArgument(msg.into())
}

/// Fills `out` with exactly `max` gates (fewer only at the end), whatever piece sizes the
/// source delivers, so that every party cuts the same chunks; refuses wires outside the shape.
async fn next_full_chunk<S: GateSource>(
    source: &mut S,
    max: usize,
    out: &mut Vec<Gate>,
    piece: &mut Vec<Gate>,
) -> Result<(), AuthGcError> {
    out.clear();
    while out.len() < max {
        source.next_chunk(max - out.len(), piece).await?;
        if piece.is_empty() {
            break;
        }
        out.extend_from_slice(piece);
    }
    gc_core::check_wires(out, source.shape().wires)
        .map_err(|i| invalid(format!("the circuit source gave a gate (chunk position {i}) with a wire out of range")))
}

/// The wires of each input bit (input values first, in order) with its owner.
fn input_owners(shape: &Shape, roles: &Roles) -> Vec<PartyId> {
    roles.owners.iter().zip(&shape.inputs).flat_map(|(&p, &w)| core::iter::repeat_n(p, w as usize)).collect()
}

/// The wires of each client input value, in circuit order (client value k is the k-th of them).
fn client_ranges(roles: &Roles, widths: &[u32]) -> Vec<core::ops::Range<usize>> {
    let mut at = 0usize;
    let mut out = Vec::new();
    for (&o, &w) in roles.owners.iter().zip(widths) {
        if o == CLIENT {
            out.push(at..at + w as usize);
        }
        at += w as usize;
    }
    out
}

/// A run of a prepared or reserved circuit, for [`AuthGcParty::process_ready_inputs`]: what its
/// agreement covers beyond the circuit and roles, and its clients' messages.
struct ReadyRun<'a> {
    mode: u8,
    run: u64,
    client_digest: Option<[u8; 32]>,
    clients: Option<&'a [Option<ClientMessage>]>,
}

/// What the input step needs for client inputs: their messages and their μ masks.
struct ClientRound<'a> {
    messages: &'a [Option<ClientMessage>],
    checks: &'a AuthShares,
}

/// The output wires, in order (outputs are the last wires).
fn output_wires(shape: &Shape) -> Vec<usize> {
    let total: u64 = shape.outputs.iter().map(|&w| u64::from(w)).sum();
    let first = u64::from(shape.wires) - total;
    (first..u64::from(shape.wires)).map(|w| w as usize).collect()
}

/// Per party, the positions (among the output bits) it learns.
fn output_recipients(shape: &Shape, roles: &Roles, parties: usize) -> Vec<Vec<usize>> {
    let mut idx = vec![Vec::new(); parties];
    let mut at = 0;
    for (&width, r) in shape.outputs.iter().zip(&roles.outputs) {
        for bit in at..at + width as usize {
            for (p, list) in idx.iter_mut().enumerate() {
                if r.includes(p) {
                    list.push(bit);
                }
            }
        }
        at += width as usize;
    }
    idx
}

impl<P: Preprocessor, C: Channel> AuthGcParty<P, C> {
    /// A party over `pre` (already set up) and `ch`, in the session `session` (a public id every
    /// party shares; it is bound into every hash tweak, so it must differ between sessions).
    pub fn new(pre: P, ch: C, session: [u8; 32], options: Options) -> Result<Self, AuthGcError> {
        let n = ch.parties();
        if pre.party() != ch.party() || pre.parties() != n {
            return Err(invalid("the preprocessor and the channel disagree on the party or the party count"));
        }
        if !(2..=MAX_PARTIES).contains(&n) {
            return Err(invalid(format!("authenticated garbling needs 2 to {MAX_PARTIES} parties")));
        }
        if options.chunk_gates == 0 || options.batch == 0 {
            return Err(invalid("chunk_gates and batch must be positive"));
        }
        Ok(AuthGcParty {
            pre,
            ch,
            session,
            options,
            runs: 0,
            triples: None,
            shares: None,
            labels: Prg::from_entropy()?,
            prepared: None,
            stats: RunStats::default(),
            instance_only: false,
        })
    }

    /// A **parallel instance** of a party over `pre` (set up with the party's global key, e.g.
    /// [`RealPreprocessor::setup_with_delta`]) and its own channel: it only preprocesses, for the
    /// party's primary to take what it made ([`take_material`](Self::take_material)). It never
    /// garbles — the free-XOR offset Δ_i, the label PRG and the run counter that the online
    /// protocol's tweaks hang on belong to the primary alone — so [`prepare`](Self::prepare) and
    /// [`run`](Self::run) refuse.
    pub fn new_instance(pre: P, ch: C, session: [u8; 32], options: Options) -> Result<Self, AuthGcError> {
        let mut p = Self::new(pre, ch, session, options)?;
        p.instance_only = true;
        Ok(p)
    }

    /// Whether this is a parallel instance ([`new_instance`](Self::new_instance)).
    pub fn is_instance(&self) -> bool {
        self.instance_only
    }

    fn refuse_instance(&self) -> Result<(), AuthGcError> {
        if self.instance_only {
            return Err(invalid("a parallel instance only preprocesses: its primary prepares and runs circuits"));
        }
        Ok(())
    }

    /// This party's index.
    pub fn party(&self) -> PartyId {
        self.ch.party()
    }

    /// The number of parties.
    pub fn parties(&self) -> usize {
        self.ch.parties()
    }

    /// The channel.
    pub fn channel(&self) -> &C {
        &self.ch
    }

    /// The preprocessor.
    pub fn preprocessor(&self) -> &P {
        &self.pre
    }

    /// The preprocessor, to make it deviate (tests).
    #[cfg(feature = "testing")]
    pub fn preprocessor_mut(&mut self) -> &mut P {
        &mut self.pre
    }

    /// Pooled AND triples and random masks.
    pub fn pooled(&self) -> (usize, usize) {
        (self.triples.as_ref().map_or(0, Triples::len), self.shares.as_ref().map_or(0, AuthShares::len))
    }

    /// What the last run held at most.
    pub fn last_stats(&self) -> &RunStats {
        &self.stats
    }

    /// Function-independent preprocessing: adds `and_gates` AND triples and `masks` random
    /// authenticated masks (one per input bit and per AND gate of the circuits to come) to the
    /// pools, before any circuit or input is known. Every party must call it with the same sizes.
    pub async fn preprocess(
        &mut self,
        and_gates: usize,
        masks: usize,
        mut progress: impl Progress,
    ) -> Result<(), AuthGcError> {
        let total = (and_gates + masks) as u64;
        self.fetch_both(and_gates, masks).await?;
        progress(Phase::Independent, total, total);
        Ok(())
    }

    /// `triples` triples and `shares` masks into the pools, in one call so that the preprocessor
    /// may make the masks in the triples' own flights.
    async fn fetch_both(&mut self, triples: usize, shares: usize) -> Result<(), AuthGcError> {
        if triples + shares == 0 {
            return Ok(());
        }
        let (t, s) = self.pre.triples_and_shares(triples, shares).await?;
        self.pool_triples(t, triples)?;
        self.pool_shares(s, shares)
    }

    async fn fetch_triples(&mut self, n: usize) -> Result<(), AuthGcError> {
        if n == 0 {
            return Ok(());
        }
        let t = self.pre.and_triples(n).await?;
        self.pool_triples(t, n)
    }

    /// Adds `t`, which must be the `n` triples asked for, to the pool.
    fn pool_triples(&mut self, mut t: Triples, n: usize) -> Result<(), AuthGcError> {
        if t.len() != n {
            return Err(invalid("the preprocessor returned the wrong number of triples"));
        }
        if n == 0 {
            return Ok(());
        }
        match &mut self.triples {
            Some(pool) => {
                pool.x.extend(&t.x);
                pool.y.extend(&t.y);
                pool.z.extend(&t.z);
                t.x.wipe();
                t.y.wipe();
                t.z.wipe();
            }
            None => self.triples = Some(t),
        }
        let len = self.triples.as_ref().map_or(0, Triples::len);
        self.stats.max_pooled_triples = self.stats.max_pooled_triples.max(len);
        Ok(())
    }

    async fn fetch_shares(&mut self, n: usize) -> Result<(), AuthGcError> {
        if n == 0 {
            return Ok(());
        }
        let s = self.pre.random_shares(n).await?;
        self.pool_shares(s, n)
    }

    /// Adds `s`, which must be the `n` masks asked for, to the pool.
    fn pool_shares(&mut self, s: AuthShares, n: usize) -> Result<(), AuthGcError> {
        if s.len() != n {
            return Err(invalid("the preprocessor returned the wrong number of masks"));
        }
        if n == 0 {
            return Ok(());
        }
        match &mut self.shares {
            Some(pool) => pool.extend(&s),
            None => self.shares = Some(s),
        }
        let len = self.shares.as_ref().map_or(0, AuthShares::len);
        self.stats.max_pooled_shares = self.stats.max_pooled_shares.max(len);
        Ok(())
    }

    /// How many to fetch when `need` are wanted and `have` pooled: the deficit, or a batch when
    /// more of the circuit (`upcoming` gates after this chunk) will need more.
    fn fetch_size(&self, need: usize, have: usize, upcoming: u64) -> usize {
        let deficit = need - have;
        if upcoming == 0 {
            deficit
        } else {
            let ahead = usize::try_from(upcoming).unwrap_or(usize::MAX).saturating_add(deficit);
            deficit.max(self.options.batch.min(ahead))
        }
    }

    async fn take_triples(&mut self, k: usize, upcoming: u64) -> Result<Triples, AuthGcError> {
        let have = self.triples.as_ref().map_or(0, Triples::len);
        if have < k {
            self.fetch_triples(self.fetch_size(k, have, upcoming)).await?;
        }
        let pool = self.triples.as_mut().expect("fetched");
        Ok(pool.split_off(pool.len() - k))
    }

    async fn take_shares(&mut self, k: usize, upcoming: u64) -> Result<AuthShares, AuthGcError> {
        let have = self.shares.as_ref().map_or(0, AuthShares::len);
        if have < k {
            self.fetch_shares(self.fetch_size(k, have, upcoming)).await?;
        }
        if k == 0 {
            return Ok(AuthShares::empty(self.party(), self.parties()));
        }
        let pool = self.shares.as_mut().expect("fetched");
        Ok(pool.split_off(pool.len() - k))
    }

    fn check_roles(&self, shape: &Shape, roles: &Roles) -> Result<(), AuthGcError> {
        let n = self.parties();
        if roles.evaluator >= n {
            return Err(invalid(format!("the evaluator must be a party (0..{n})")));
        }
        if roles.owners.len() != shape.inputs.len() || roles.outputs.len() != shape.outputs.len() {
            return Err(invalid(format!(
                "{} input owners and {} output assignments given for a circuit with {} inputs and {} outputs",
                roles.owners.len(),
                roles.outputs.len(),
                shape.inputs.len(),
                shape.outputs.len()
            )));
        }
        if roles.owners.iter().any(|&p| p >= n && p != CLIENT) {
            return Err(invalid("every input owner must be a party or CLIENT"));
        }
        for (&p, &w) in roles.owners.iter().zip(&shape.inputs) {
            if p == CLIENT && (w == 0 || w as usize > clients::MAX_CLIENT_VALUE_BITS) {
                return Err(invalid(format!("a client input value has 1 to {} bits, not {w}", clients::MAX_CLIENT_VALUE_BITS)));
            }
        }
        if roles.outputs.iter().any(|r| r.mask(n) == 0) {
            return Err(invalid("every output needs at least one recipient among the parties"));
        }
        let outputs: u64 = shape.outputs.iter().map(|&w| u64::from(w)).sum();
        let inputs: u64 = shape.inputs.iter().map(|&w| u64::from(w)).sum();
        if outputs > u64::from(shape.wires) || inputs > u64::from(shape.wires) {
            return Err(invalid("the circuit's inputs and outputs do not fit its wires"));
        }
        Ok(())
    }

    /// This party's input bits as (wire, value), checked against the circuit.
    fn my_inputs(&self, shape: &Shape, roles: &Roles, inputs: &[Vec<bool>]) -> Result<Vec<bool>, AuthGcError> {
        let me = self.party();
        let mine: Vec<usize> = (0..roles.owners.len()).filter(|&i| roles.owners[i] == me).collect();
        if inputs.len() != mine.len() {
            return Err(invalid(format!("{} input values given; this party owns {}", inputs.len(), mine.len())));
        }
        let mut bits = Vec::new();
        for (v, &i) in inputs.iter().zip(&mine) {
            if v.len() != shape.inputs[i] as usize {
                return Err(invalid(format!(
                    "input value {} has {} bits; the circuit wants {}",
                    i + 1,
                    v.len(),
                    shape.inputs[i]
                )));
            }
            bits.extend_from_slice(v);
        }
        Ok(bits)
    }

    /// Step 1: every party checks that every other runs the same circuit, roles and options.
    async fn agree(&self, shape: &Shape, roles: &Roles, mode: u8, run: u64) -> Result<(), AuthGcError> {
        self.exchange_agreement(&self.agreement(shape, roles, mode, run)).await
    }

    /// [`agree`](Self::agree) for a step that makes an F_Pre batch next (`batch`): the agreement
    /// leads the preprocessor's first message when it takes one, one flight fewer; else (no batch,
    /// or the trusted dealer, which sends nothing) it goes alone.
    async fn agree_leading(&mut self, agreement: Vec<u8>, batch: bool) -> Result<(), AuthGcError> {
        let led = batch && {
            let mine = agreement.clone();
            let check = Box::new(move |j, theirs: &[u8]| check_agreement(&mine, j, theirs));
            self.pre.lead_next_message(LeadingHead { mine: agreement.clone(), check })
        };
        if led {
            return Ok(());
        }
        self.exchange_agreement(&agreement).await
    }

    /// [`agree`](Self::agree) with the agreement already made.
    async fn exchange_agreement(&self, mine: &[u8]) -> Result<(), AuthGcError> {
        let check = |j: PartyId, theirs: &[u8]| check_agreement(mine, j, theirs);
        exchange_heads(&self.ch, Head { mine, check: &check }).await
    }

    /// What [`agree`](Self::agree) compares: the circuit's content hash, then a digest of the
    /// session, the run, the mode, the roles, the options and the preprocessing pool.
    fn agreement(&self, shape: &Shape, roles: &Roles, mode: u8, run: u64) -> Vec<u8> {
        let n = self.parties();
        let mut h = Sha256::new();
        h.update(b"webmpc/authgc/agreement/v1");
        h.update(self.session);
        h.update((n as u64).to_le_bytes());
        h.update(run.to_le_bytes());
        h.update([mode]);
        h.update((roles.evaluator as u64).to_le_bytes());
        h.update((roles.owners.len() as u64).to_le_bytes());
        for &o in &roles.owners {
            h.update((o as u64).to_le_bytes());
        }
        h.update((roles.outputs.len() as u64).to_le_bytes());
        for r in &roles.outputs {
            h.update(r.mask(n).to_le_bytes());
        }
        h.update((self.options.chunk_gates as u64).to_le_bytes());
        h.update((self.options.batch as u64).to_le_bytes());
        let (t, s) = self.pooled();
        h.update((t as u64).to_le_bytes());
        h.update((s as u64).to_le_bytes());
        let mut mine = shape.hash.to_vec();
        mine.extend_from_slice(&h.finalize());
        mine
    }

    fn next_run(&mut self) -> u64 {
        let r = self.runs;
        self.runs += 1;
        r
    }

    fn tweaks(&self, run: u64) -> Vec<Tweaks> {
        (0..self.parties()).map(|i| Tweaks::new(&self.session, run, i)).collect()
    }

    /// The wire state at the start of garbling: masks from the pool for the input wires and, for
    /// a garbler, fresh zero-labels. Returns it with a copy of the inputs' ends.
    async fn begin(&mut self, shape: &Shape, evaluator: PartyId, upcoming: u64) -> Result<(WireState, Ends), AuthGcError> {
        let ends = self.input_ends(shape, evaluator, upcoming).await?;
        Ok((self.state_from(shape, evaluator, &ends), ends))
    }

    /// Masks from the pool for the input wires and, for a garbler, fresh zero-labels for them.
    async fn input_ends(&mut self, shape: &Shape, evaluator: PartyId, upcoming: u64) -> Result<Ends, AuthGcError> {
        let input_bits: usize = shape.inputs.iter().map(|&w| w as usize).sum();
        let masks = self.take_shares(input_bits, upcoming).await?;
        let mut zero = Vec::new();
        if self.party() != evaluator {
            zero = vec![Block::ZERO; input_bits];
            self.labels.fill_blocks(&mut zero);
        }
        // Input wires' labels come from each garbler itself.
        Ok(Ends { masks, zero, single_source: vec![true; input_bits] })
    }

    /// The wire state at the start of garbling from the inputs' ends (every other wire is set by
    /// its gate). A garbler's state has a zero-label per wire even when the circuit has no input.
    fn state_from(&mut self, shape: &Shape, evaluator: PartyId, ends: &Ends) -> WireState {
        let (me, n) = (self.party(), self.parties());
        let (wires, input_bits) = (shape.wires as usize, ends.masks.len());
        let mut masks = AuthShares::zeros(me, n, wires);
        for k in 0..input_bits {
            masks.bits[k] = ends.masks.bits[k];
            for j in (0..n).filter(|&j| j != me) {
                masks.macs[j][k] = ends.masks.macs[j][k];
                masks.keys[j][k] = ends.masks.keys[j][k];
            }
        }
        let mut zero = Vec::new();
        if me != evaluator {
            zero = vec![Block::ZERO; wires];
            zero[..input_bits].copy_from_slice(&ends.zero);
        }
        let mut single_source = vec![false; wires];
        single_source[..input_bits].copy_from_slice(&ends.single_source);
        self.stats.wire_state = wires;
        WireState { masks, zero, single_source }
    }

    /// The function-dependent work of one chunk: masks and labels through its gates, F_Pre.AND on
    /// its AND gates, and the garbled table from every garbler to the evaluator. Returns the
    /// evaluator's material (`None` for a garbler or a chunk without AND gates).
    async fn garble_chunk(
        &mut self,
        state: &mut WireState,
        gates: &[Gate],
        evaluator: PartyId,
        tweaks: &Tweaks,
        ands_done: u64,
        upcoming: u64,
    ) -> Result<Option<ChunkMaterial>, AuthGcError> {
        let (me, n) = (self.party(), self.parties());
        let delta = self.pre.delta();
        let k = and_count(gates);
        if ands_done + k as u64 > MAX_AND_GATES {
            return Err(invalid(format!("at most {MAX_AND_GATES} AND gates per run")));
        }
        let (have_triples, have_shares) = self.pooled();
        if k > 0 && have_triples < k && have_shares < k {
            // Both pools short: one call, so the masks ride on the triples' flights.
            let (t, s) = (self.fetch_size(k, have_triples, upcoming), self.fetch_size(k, have_shares, upcoming));
            self.fetch_both(t, s).await?;
        }
        let fresh = self.take_shares(k, upcoming).await?;
        let mut fresh_labels = Vec::new();
        if me != evaluator {
            fresh_labels = vec![Block::ZERO; k];
            self.labels.fill_blocks(&mut fresh_labels);
        }
        let mut inputs = AndInputs::with_capacity(me, n, k, me != evaluator);
        gc_core::propagate(state, gates, &fresh, &fresh_labels, delta, &mut inputs);
        Block::wipe(&mut fresh_labels);
        if k == 0 {
            return Ok(None);
        }
        self.stats.chunks += 1;
        self.stats.and_gates += k as u64;
        self.stats.max_chunk_and_gates = self.stats.max_chunk_and_gates.max(k);
        let triples = self.take_triples(k, upcoming).await?;
        let mut r0 = and_from_triples(&self.ch, delta, &inputs.alpha, &inputs.beta, triples).await?;
        r0.xor_assign(&inputs.gamma);
        let len = table_bytes(k, n);
        self.stats.max_table_bytes = self.stats.max_table_bytes.max(len);
        if me != evaluator {
            let rows = GarbleRows {
                r0: &r0,
                alpha: &inputs.alpha,
                beta: &inputs.beta,
                l_alpha: &inputs.l_alpha,
                l_beta: &inputs.l_beta,
                l_gamma: &inputs.l_gamma,
            };
            let mut table = Vec::with_capacity(len);
            gc_core::garble_rows(tweaks, delta, ands_done, &rows, &mut table);
            Block::wipe(&mut inputs.l_alpha);
            Block::wipe(&mut inputs.l_beta);
            Block::wipe(&mut inputs.l_gamma);
            self.ch.send(evaluator, table).await?;
            return Ok(None);
        }
        let ch = &self.ch;
        let got = try_join_all(peers(ch).map(|i| async move {
            let t = ch.recv(i).await?;
            if t.len() != len {
                return Err(AuthGcError::Malformed { phase: Phase::Dependent, peer: i, what: "garbled table chunk" });
            }
            Ok((i, t))
        }))
        .await?;
        let mut tables = vec![Vec::new(); n];
        for (i, t) in got {
            tables[i] = t;
        }
        let AndInputs { alpha, beta, .. } = inputs;
        Ok(Some(ChunkMaterial { r0, alpha, beta, tables }))
    }

    /// Input processing (steps 5–6): mask shares to owners, masked inputs to everyone, the
    /// broadcast check, labels to the evaluator (whose state gets x̂ and the labels).
    ///
    /// `head`, if given, carries the run's agreement ([`agree`](Self::agree)), still to be
    /// checked: it leads this party's message of the input masks' opening, and every peer's
    /// passes before anything else of that peer's message is looked at. Sending the mask shares
    /// before the check passes reveals nothing that is ever used: on a mismatch the run ends here
    /// (before any masked input moves), and a run's prepared masks are never used by another.
    /// With clients, the same flight opens the sketches (uniform, μ pads them) and the presence
    /// masks of clients this party holds no message for: those reveal a presence bit at most, which
    /// an honest client sets to 1 whatever its input.
    #[allow(clippy::too_many_arguments)]
    async fn process_inputs(
        &self,
        shape: &Shape,
        roles: &Roles,
        ends: &Ends,
        my_bits: &[bool],
        eval: Option<&mut EvalState>,
        head: Option<Head<'_>>,
        clients: Option<ClientRound<'_>>,
    ) -> Result<Vec<usize>, AuthGcError> {
        let (me, n) = (self.party(), self.parties());
        let owners = input_owners(shape, roles);
        if owners.is_empty() {
            if let Some(head) = head {
                exchange_heads(&self.ch, head).await?;
            }
            return Ok(Vec::new());
        }
        let delta = self.pre.delta();
        let idx: Vec<Vec<usize>> = (0..n).map(|p| (0..owners.len()).filter(|&w| owners[w] == p).collect()).collect();
        let mut xhat = vec![false; owners.len()];
        let (lambda, refused) = match clients {
            None => {
                let label = "input mask shares to their owner";
                (open_behind(&self.ch, head, Phase::Online, label, &ends.masks, delta, Reveal::Each(&idx)).await?, Vec::new())
            }
            Some(c) => self.open_with_clients(shape, roles, ends, &idx, head, c, &mut xhat).await?,
        };
        let mine: Vec<bool> = my_bits.iter().zip(&lambda).map(|(x, l)| x ^ l).collect();
        let packed = pack_bits(&mine);
        let mut log = BroadcastLog::new();
        // With client inputs only, no party has a masked input to send (the clients' are agreed).
        let parties_give = idx.iter().any(|own| !own.is_empty());
        let msgs = if !parties_give {
            vec![Vec::new(); n]
        } else {
            exchange(&self.ch, |_| packed.clone(), |p| idx[p].len().div_ceil(8)).await?
        };
        for p in 0..n {
            let (bytes, bits) = if p == me {
                (&packed, mine.clone())
            } else {
                let bits = unpack_bits(&msgs[p], idx[p].len()).ok_or(AuthGcError::Malformed {
                    phase: Phase::Online,
                    peer: p,
                    what: "masked inputs",
                })?;
                (&msgs[p], bits)
            };
            log.record(p, b"masked inputs", bytes);
            for (&w, b) in idx[p].iter().zip(bits) {
                xhat[w] = b;
            }
        }
        // Broadcast with abort: everyone saw the same x̂ before anything depends on them.
        if parties_give {
            log.check(&self.ch, Phase::Online).await?;
        }
        if me != roles.evaluator {
            let mut labels = Vec::with_capacity(16 * owners.len());
            for (z, &x) in ends.zero.iter().zip(&xhat) {
                labels.extend_from_slice(&(*z ^ (delta & mask(x))).0);
            }
            self.ch.send(roles.evaluator, labels).await?;
            return Ok(refused);
        }
        let eval = eval.expect("the evaluator has a state");
        let ch = &self.ch;
        let len = 16 * owners.len();
        let got = try_join_all(peers(ch).map(|i| async move { Ok::<_, AuthGcError>((i, ch.recv_exact(i, len).await?)) })).await?;
        for (i, bytes) in got {
            for (w, l) in Block::slice_from_bytes(&bytes).expect("a multiple of 16 bytes").iter().enumerate() {
                eval.set_label(w, i, *l);
            }
        }
        eval.xhat[..owners.len()].copy_from_slice(&xhat);
        // Each garbler sent its own input labels: a wrong one is that garbler's doing.
        eval.single_source[..owners.len()].fill(true);
        Ok(refused)
    }

    /// Input processing of a run whose inputs were made ready (prepared or reserved): the run's
    /// agreement (`mode`, `run`, and the client messages' digest if any) leads the input masks'
    /// opening, one flight fewer than an agreement of its own.
    async fn process_ready_inputs(
        &self,
        shape: &Shape,
        roles: &Roles,
        p: &Prepared,
        my_bits: &[bool],
        eval: Option<&mut EvalState>,
        ready: ReadyRun<'_>,
    ) -> Result<Vec<usize>, AuthGcError> {
        let ReadyRun { mode, run, client_digest, clients } = ready;
        let mut agreement = self.agreement(shape, roles, mode, run);
        agreement.extend(client_digest.iter().flatten());
        let check = |j: PartyId, theirs: &[u8]| check_agreement(&agreement, j, theirs);
        let head = Head { mine: &agreement, check: &check };
        let with_clients = clients.map(|messages| ClientRound { messages, checks: &p.client_checks });
        self.process_inputs(shape, roles, &p.inputs, my_bits, eval, Some(head), with_clients).await
    }

    /// The input masks' opening with the client checks in the same flight ([`clients`], steps 4
    /// and 5): opens the parties' masks to their owners and, to everyone, every present client's
    /// sketch R·λ ⊕ μ and every absent client's presence mask; refuses the clients whose view
    /// differs and opens their presence masks (a second flight, only when one was refused); writes
    /// every client wire's x̂ into `xhat`. Returns this party's own input masks and the refused
    /// positions (in `c.messages`).
    #[allow(clippy::too_many_arguments)]
    async fn open_with_clients(
        &self,
        shape: &Shape,
        roles: &Roles,
        ends: &Ends,
        idx: &[Vec<usize>],
        head: Option<Head<'_>>,
        c: ClientRound<'_>,
        xhat: &mut [bool],
    ) -> Result<(Vec<bool>, Vec<usize>), AuthGcError> {
        let (me, delta, sigma) = (self.party(), self.pre.delta(), CLIENT_CHECK_BITS);
        let ranges = client_ranges(roles, &shape.inputs);
        let mut opened = ends.masks.clone();
        for (k, (r, m)) in ranges.iter().zip(c.messages).enumerate() {
            match m {
                Some(m) => {
                    let mu = c.checks.slice(k * sigma..(k + 1) * sigma);
                    opened.extend(&clients::sketch_shares(&m.challenge, &ends.masks.slice(r.clone()), &mu));
                }
                None => opened.extend(&ends.masks.slice(r.start..r.start + 1)),
            }
        }
        let public: Vec<usize> = (ends.masks.len()..opened.len()).collect();
        let reveal: Vec<Vec<usize>> = idx.iter().map(|own| own.iter().chain(&public).copied().collect()).collect();
        let label = "input mask shares to their owner, client sketches and absent clients' presence masks";
        let mut own = open_behind(&self.ch, head, Phase::Online, label, &opened, delta, Reveal::Each(&reveal)).await?;
        drop(opened);
        let mut public = own.split_off(idx[me].len()).into_iter();
        let (mut refused, mut presence) = (Vec::new(), vec![None; ranges.len()]);
        for (k, m) in c.messages.iter().enumerate() {
            match m {
                // Both sides are public: the opened sketch and the client's own view of it.
                Some(m) => {
                    let opened: Vec<bool> = public.by_ref().take(sigma).collect();
                    if opened != m.view {
                        refused.push(k);
                    }
                }
                None => presence[k] = public.next(),
            }
        }
        if !refused.is_empty() {
            let firsts: Vec<usize> = refused.iter().map(|&k| ranges[k].start).collect();
            let label = "refused clients' presence masks";
            let masks = ends.masks.select(&firsts);
            for (&k, l) in refused.iter().zip(open(&self.ch, Phase::Online, label, &masks, delta, Reveal::All).await?) {
                presence[k] = Some(l);
            }
        }
        for (k, r) in ranges.into_iter().enumerate() {
            match (&c.messages[k], presence[k]) {
                // Presence bit 0 (x̂ = 0 ⊕ λ); the other bits do not count.
                (_, Some(l)) => {
                    xhat[r.clone()].fill(false);
                    xhat[r.start] = l;
                }
                (Some(m), None) => xhat[r].copy_from_slice(&m.masked),
                (None, None) => unreachable!("an absent client's presence mask is opened"),
            }
        }
        Ok((own, refused))
    }

    /// Outputs: masked values with labels from the evaluator, mask shares to the recipients.
    async fn process_outputs(
        &self,
        shape: &Shape,
        roles: &Roles,
        ends: &Ends,
        eval: Option<&EvalState>,
    ) -> Result<Outputs, AuthGcError> {
        let (me, n) = (self.party(), self.parties());
        let e = roles.evaluator;
        let delta = self.pre.delta();
        let wires = output_wires(shape);
        let idx = output_recipients(shape, roles, n);
        let mut xhat = vec![false; wires.len()];
        if me == e {
            let eval = eval.expect("the evaluator has a state");
            for (x, &w) in xhat.iter_mut().zip(&wires) {
                *x = eval.xhat[w];
            }
            let ch = &self.ch;
            let (wires, idx, xhat) = (&wires, &idx, &xhat);
            try_join_all(peers(ch).filter(|&p| !idx[p].is_empty()).map(|p| async move {
                let bits: Vec<bool> = idx[p].iter().map(|&k| xhat[k]).collect();
                let mut msg = pack_bits(&bits);
                for &k in &idx[p] {
                    msg.extend_from_slice(&eval.label(wires[k], p).0);
                }
                ch.send(p, msg).await
            }))
            .await?;
        } else if !idx[me].is_empty() {
            let count = idx[me].len();
            let msg = self.ch.recv_exact(e, count.div_ceil(8) + 16 * count).await?;
            let (packed, labels) = msg.split_at(count.div_ceil(8));
            let bits = unpack_bits(packed, count).ok_or(AuthGcError::Malformed {
                phase: Phase::Online,
                peer: e,
                what: "masked outputs",
            })?;
            let labels = Block::slice_from_bytes(labels).expect("a multiple of 16 bytes");
            // The evaluator holds one of L_0, L_0 ⊕ Δ_me; it must hand over the one for x̂.
            // `blamable` collects the differences on wires whose label the evaluator got from
            // this party alone (no AND gate before them, or no other garbler).
            let (mut diff, mut blamable) = (0u128, 0u128);
            for ((&k, &x), l) in idx[me].iter().zip(&bits).zip(labels) {
                let d = (*l ^ ends.zero[k] ^ (delta & mask(x))).to_u128();
                diff |= d;
                blamable |= d & (u128::from(ends.single_source[k]) * u128::MAX);
                xhat[k] = x;
            }
            if diff != 0 {
                // Why this check can blame the evaluator only sometimes: on a wire an AND gate
                // precedes, the evaluator's label for this party was rebuilt from tags the other
                // garblers put in their rows, and a corrupt garbler that flips its tag for this
                // party there (in a gate that reaches the output through XORs only, so no later
                // row check notices) makes an honest evaluator hand over a wrong label. On a wire
                // with a single source the label is what this party sent, combined with public
                // values, so only the evaluator can have changed it (it cannot know the other
                // label without Δ_me).
                let culprit = (blamable != 0).then_some(e);
                return Err(AuthGcError::cheating(Phase::Online, culprit, "output label check (masked output value)"));
            }
        }
        let lambda =
            open(&self.ch, Phase::Online, "output mask shares to their recipients", &ends.masks, delta, Reveal::Each(&idx))
                .await?;
        let mut mine = vec![false; wires.len()];
        for (&k, l) in idx[me].iter().zip(lambda) {
            mine[k] = xhat[k] ^ l;
        }
        let mut out = Vec::with_capacity(shape.outputs.len());
        let mut at = 0;
        for (&width, r) in shape.outputs.iter().zip(&roles.outputs) {
            let range = at..at + width as usize;
            out.push(r.includes(me).then(|| mine[range].to_vec()));
            at += width as usize;
        }
        Ok(out)
    }

    /// The ends of the output wires from the final wire state.
    fn output_ends(&self, shape: &Shape, state: &WireState) -> Ends {
        let wires = output_wires(shape);
        let zero = if state.zero.is_empty() { Vec::new() } else { wires.iter().map(|&w| state.zero[w]).collect() };
        let single_source = wires.iter().map(|&w| state.single_source[w]).collect();
        Ends { masks: state.masks.select(&wires), zero, single_source }
    }

    /// Function-dependent preprocessing for a known circuit (before inputs): tops the pools up to
    /// what the circuit needs, garbles it, and leaves the tables with the evaluator. The next
    /// [`run`](Self::run) of the same circuit and roles is then only the online phase.
    pub async fn prepare(
        &mut self,
        circuit: &PreparedCircuit,
        roles: &Roles,
        mut progress: impl Progress,
    ) -> Result<(), AuthGcError> {
        self.refuse_instance()?;
        self.prepared = None;
        self.stats = RunStats::default();
        let shape = circuit.source().shape().clone();
        self.check_roles(&shape, roles)?;
        let run = self.next_run();
        let gates = &circuit.circuit().gates;
        let ands = and_count(gates);
        let input_bits: usize = shape.inputs.iter().map(|&w| w as usize).sum();
        let checks = CLIENT_CHECK_BITS * client_ranges(roles, &shape.inputs).len();
        let (t, s) = self.pooled();
        let (triples, shares) = (ands.saturating_sub(t), (ands + input_bits + checks).saturating_sub(s));
        // The agreement leads F_Pre's first message when there is one to make (one flight fewer).
        // What F_Pre sends with it before the check passes is the aBit run's Δ-OT matrices of
        // fresh random bits and a commitment: nothing of an input, and on a mismatch the session
        // ends there, before F_Pre sends anything else.
        self.agree_leading(self.agreement(&shape, roles, MODE_PREPARE, run), triples + shares > 0).await?;
        self.fetch_both(triples, shares).await?;
        progress(Phase::Independent, 1, 1);
        let e = roles.evaluator;
        let tweaks = Tweaks::new(&self.session, run, self.party());
        let (mut state, inputs) = self.begin(&shape, e, 0).await?;
        let client_checks = self.take_shares(checks, 0).await?;
        let mut chunks = Vec::new();
        let (mut done, mut ands_done) = (0u64, 0u64);
        for chunk in gates.chunks(self.options.chunk_gates) {
            let k = and_count(chunk) as u64;
            if let Some(m) = self.garble_chunk(&mut state, chunk, e, &tweaks, ands_done, 0).await? {
                self.stats.stored_bytes += m.bytes();
                chunks.push(m);
            }
            ands_done += k;
            done += chunk.len() as u64;
            progress(Phase::Dependent, done, shape.gates);
        }
        let outputs = self.output_ends(&shape, &state);
        let garbled = Some(Garbled { run, outputs, chunks });
        self.prepared = Some(Prepared { hash: shape.hash, roles: roles.clone(), inputs, client_checks, input_widths: shape.inputs.clone(), garbled });
        Ok(())
    }

    /// Takes the masks of a circuit's input wires (and its client values' check masks,
    /// [`clients`]) from the pools ahead of its run, without garbling it: the next
    /// [`run`](Self::run) or [`run_with_clients`](Self::run_with_clients) of the same circuit and
    /// roles uses them and garbles and evaluates chunk by chunk (an interleaved run), so the
    /// garbled tables and F_Pre's pools stay bounded by a chunk however large the circuit (the
    /// per-wire state is the circuit's live wires, as in any interleaved run). What a circuit
    /// with client inputs needs when it is too large to [`prepare`](Self::prepare) whole: its
    /// clients need their masks before the run.
    pub async fn reserve_inputs(&mut self, shape: &Shape, roles: &Roles) -> Result<(), AuthGcError> {
        self.refuse_instance()?;
        self.prepared = None;
        self.stats = RunStats::default();
        self.check_roles(shape, roles)?;
        let run = self.next_run();
        let input_bits: usize = shape.inputs.iter().map(|&w| w as usize).sum();
        let checks = CLIENT_CHECK_BITS * client_ranges(roles, &shape.inputs).len();
        let (_, s) = self.pooled();
        let shares = (input_bits + checks).saturating_sub(s);
        // As in prepare (and why it is safe): the agreement leads F_Pre's first message.
        self.agree_leading(self.agreement(shape, roles, MODE_RESERVE, run), shares > 0).await?;
        self.fetch_shares(shares).await?;
        let inputs = self.input_ends(shape, roles.evaluator, 0).await?;
        let client_checks = self.take_shares(checks, 0).await?;
        self.prepared =
            Some(Prepared { hash: shape.hash, roles: roles.clone(), inputs, client_checks, input_widths: shape.inputs.clone(), garbled: None });
        Ok(())
    }

    /// Runs a circuit with this party's `inputs` (one value per input it owns, in circuit order,
    /// wire k = bit k). If [`prepare`](Self::prepare) garbled this circuit with these roles, only
    /// the online phase runs; otherwise garbling and evaluation interleave chunk by chunk (for
    /// streamed circuits), with the input masks [`reserve_inputs`](Self::reserve_inputs) took if
    /// it was called for this circuit and roles. Returns the outputs this party learns.
    pub async fn run<S: GateSource>(
        &mut self,
        source: &mut S,
        roles: &Roles,
        inputs: &[Vec<bool>],
        progress: impl Progress,
    ) -> Result<Outputs, AuthGcError> {
        if roles.owners.contains(&CLIENT) {
            return Err(invalid("a circuit with client inputs runs through run_with_clients"));
        }
        Ok(self.run_inner(source, roles, inputs, None, progress).await?.0)
    }

    /// This party's shares of the masks of client input value `value` (an index into
    /// `roles.owners`, whose owner is [`CLIENT`]) of the prepared circuit, for that value's client
    /// only ([`clients`] step 2): its share bits of the value's wire masks λ, then of its
    /// [`CLIENT_CHECK_BITS`] masks μ, packed ([`client_share_bytes`] bytes). Secret: send it over
    /// a channel only the client can read.
    pub fn client_mask_shares(&self, value: usize) -> Result<Vec<u8>, AuthGcError> {
        let p = self.prepared.as_ref().ok_or_else(|| invalid("client masks exist only after prepare or reserve_inputs"))?;
        if p.roles.owners.get(value) != Some(&CLIENT) {
            return Err(invalid(format!("input value {value} is not a client's")));
        }
        let k = p.roles.owners[..value].iter().filter(|&&o| o == CLIENT).count();
        let wires = client_ranges(&p.roles, &p.input_widths).swap_remove(k);
        let mut bits = p.inputs.masks.bits[wires].to_vec();
        bits.extend_from_slice(&p.client_checks.bits[k * CLIENT_CHECK_BITS..(k + 1) * CLIENT_CHECK_BITS]);
        let out = pack_bits(&bits);
        bits.iter_mut().for_each(|b| *b = false);
        Ok(out)
    }

    /// [`run`](Self::run) for a prepared circuit with client inputs ([`clients`]): `clients` has
    /// one entry per input value owned by [`CLIENT`], in circuit order: the message its client
    /// sent, which every party must hold alike, or `None` for a client that gave no input.
    /// Returns the outputs and the positions in `clients` of the clients refused (a check that
    /// failed); a refused or absent client's value counts with its presence bit (bit 0) 0.
    pub async fn run_with_clients<S: GateSource>(
        &mut self,
        source: &mut S,
        roles: &Roles,
        inputs: &[Vec<bool>],
        clients: &[Option<ClientMessage>],
        progress: impl Progress,
    ) -> Result<(Outputs, Vec<usize>), AuthGcError> {
        self.run_inner(source, roles, inputs, Some(clients), progress).await
    }

    async fn run_inner<S: GateSource>(
        &mut self,
        source: &mut S,
        roles: &Roles,
        inputs: &[Vec<bool>],
        clients: Option<&[Option<ClientMessage>]>,
        mut progress: impl Progress,
    ) -> Result<(Outputs, Vec<usize>), AuthGcError> {
        self.refuse_instance()?;
        let shape = source.shape().clone();
        self.check_roles(&shape, roles)?;
        let my_bits = self.my_inputs(&shape, roles, inputs)?;
        let matches = |p: &Prepared| p.hash == shape.hash && p.roles == *roles && p.input_widths == shape.inputs;
        let client_digest = match clients {
            None => None,
            Some(messages) => {
                if !self.prepared.as_ref().is_some_and(matches) {
                    return Err(invalid(
                        "a circuit with client inputs runs only after prepare or reserve_inputs (its clients need their masks first)",
                    ));
                }
                let widths: Vec<usize> = client_ranges(roles, &shape.inputs).into_iter().map(|r| r.len()).collect();
                Some(clients::messages_digest(&widths, messages)?)
            }
        };
        let ready = self.prepared.take().filter(matches);
        let run = self.next_run();
        let (n, e) = (self.parties(), roles.evaluator);
        let is_eval = self.party() == e;
        let mut piece = Vec::new();
        let mut chunk = Vec::new();
        let (prepared, reserved) = match ready {
            Some(p) if p.garbled.is_some() => (Some(p), None),
            reserved => (None, reserved),
        };
        if let Some(p) = prepared {
            let g = p.garbled.as_ref().expect("a prepared circuit is garbled");
            self.stats.phased = true;
            let mut eval = is_eval.then(|| EvalState::new(shape.wires as usize, n));
            let ready = ReadyRun { mode: MODE_PHASED, run, client_digest, clients };
            let refused = self.process_ready_inputs(&shape, roles, &p, &my_bits, eval.as_mut(), ready).await?;
            if let Some(state) = eval.as_mut() {
                let tweaks = self.tweaks(g.run);
                let delta = self.pre.delta();
                let mut materials = g.chunks.iter();
                let (mut done, mut ands_done) = (0u64, 0u64);
                loop {
                    next_full_chunk(source, self.options.chunk_gates, &mut chunk, &mut piece).await?;
                    if chunk.is_empty() {
                        break;
                    }
                    let k = and_count(&chunk);
                    let m = if k > 0 {
                        Some(materials.next().ok_or_else(|| invalid("the prepared material does not match the circuit"))?)
                    } else {
                        None
                    };
                    evaluate(state, e, &chunk, &tweaks, delta, ands_done, m)?;
                    ands_done += k as u64;
                    done += chunk.len() as u64;
                    progress(Phase::Online, done, shape.gates);
                }
            } else {
                // Garblers need the circuit only to have checked it; drain a stream anyway so
                // that a streamed source is verified against its hash before outputs.
                loop {
                    next_full_chunk(source, self.options.chunk_gates, &mut chunk, &mut piece).await?;
                    if chunk.is_empty() {
                        break;
                    }
                }
                progress(Phase::Online, shape.gates, shape.gates);
            }
            return Ok((self.process_outputs(&shape, roles, &g.outputs, eval.as_ref()).await?, refused));
        }

        self.stats = RunStats::default();
        let tweaks_all = self.tweaks(run);
        let delta = self.pre.delta();
        let mut eval = is_eval.then(|| EvalState::new(shape.wires as usize, n));
        let (mut state, refused) = match reserved {
            // Inputs reserved ahead (their clients have their masks): the agreement leads their
            // opening, as in a prepared run; garbling then interleaves with evaluation.
            Some(p) => {
                let state = self.state_from(&shape, e, &p.inputs);
                let ready = ReadyRun { mode: MODE_RESERVED, run, client_digest, clients };
                (state, self.process_ready_inputs(&shape, roles, &p, &my_bits, eval.as_mut(), ready).await?)
            }
            None => {
                self.agree(&shape, roles, MODE_INTERLEAVED, run).await?;
                let (state, input_ends) = self.begin(&shape, e, shape.gates).await?;
                self.process_inputs(&shape, roles, &input_ends, &my_bits, eval.as_mut(), None, None).await?;
                (state, Vec::new())
            }
        };
        let (mut done, mut ands_done) = (0u64, 0u64);
        loop {
            next_full_chunk(source, self.options.chunk_gates, &mut chunk, &mut piece).await?;
            if chunk.is_empty() {
                break;
            }
            let upcoming = shape.gates.saturating_sub(done + chunk.len() as u64);
            let k = and_count(&chunk) as u64;
            let me = self.party();
            let material =
                self.garble_chunk(&mut state, &chunk, e, &tweaks_all[me], ands_done, upcoming).await?;
            done += chunk.len() as u64;
            progress(Phase::Dependent, done, shape.gates);
            if let Some(st) = eval.as_mut() {
                evaluate(st, e, &chunk, &tweaks_all, delta, ands_done, material.as_ref())?;
            }
            ands_done += k;
            progress(Phase::Online, done, shape.gates);
        }
        let output_ends = self.output_ends(&shape, &state);
        drop(state);
        Ok((self.process_outputs(&shape, roles, &output_ends, eval.as_ref()).await?, refused))
    }
}

/// Moving preprocessed material between a party's primary and its parallel instances (the real
/// F_Pre only: the instance key check is one of its protocols).
impl<C2: Channel + Clone, C: Channel> AuthGcParty<RealPreprocessor<C2>, C> {
    /// Takes everything in the pools out, as the fixed encoding of [`material`] for the primary's
    /// [`put_material`](Self::put_material), with ρ fresh random shares made for the instance key
    /// check. Talks to the peers (the check shares are an F_Pre batch): every party's instance of
    /// the same index calls it at the same point. The pools are empty afterwards; the bytes are
    /// secret (the caller wipes them once handed over).
    pub async fn take_material(&mut self) -> Result<Vec<u8>, AuthGcError> {
        let (me, n) = (self.party(), self.parties());
        let rho = self.pre.rho();
        let check = self.pre.random_shares(rho).await?;
        let empty = || AuthShares::empty(me, n);
        let triples = self.triples.take().unwrap_or_else(|| Triples { x: empty(), y: empty(), z: empty() });
        let masks = self.shares.take().unwrap_or_else(empty);
        let m = Material { triples, masks, check };
        Ok(material::encode(me, n, rho, self.pre.delta(), &m))
        // `m` drops here: its shares wipe themselves.
    }

    /// Appends the material this party's parallel instances made ([`take_material`](Self::take_material)),
    /// `materials[k]` from instance k + 1, to the pools after what they hold, in that order —
    /// every party must pass its instances' material in instance order, so that item k of every
    /// party's pool is the same shared item. First refuses (with nothing changed and nothing
    /// sent) material that does not decode for this party, its ρ and its global key; then runs
    /// the instance key check with every party ([`RealPreprocessor::check_instance_keys`]: a
    /// party whose instance authenticated under another key than its primary's is caught there,
    /// before anything is used). Returns the (triples, masks) added.
    pub async fn put_material(&mut self, materials: &[&[u8]]) -> Result<(usize, usize), AuthGcError> {
        if materials.is_empty() {
            return Ok((0, 0));
        }
        let (me, n) = (self.party(), self.parties());
        let (rho, delta) = (self.pre.rho(), self.pre.delta());
        let decoded =
            materials.iter().map(|b| material::decode(b, me, n, rho, delta)).collect::<Result<Vec<Material>, _>>()?;
        let checks: Vec<AuthShares> = decoded.iter().map(|m| m.check.clone()).collect();
        self.pre.check_instance_keys(&checks).await?;
        drop(checks);
        Ok(self.append_material(decoded))
    }

    /// [`put_material`](Self::put_material) without the key fingerprint and without the instance
    /// key check: what the online checks see when those are skipped (tests only).
    #[cfg(feature = "testing")]
    pub fn put_material_unchecked(&mut self, materials: &[&[u8]]) -> Result<(usize, usize), AuthGcError> {
        let (me, n) = (self.party(), self.parties());
        let rho = self.pre.rho();
        let decoded = materials
            .iter()
            .map(|b| {
                let mut b = b.to_vec();
                b[20..36].copy_from_slice(&material::delta_fingerprint(self.pre.delta()));
                material::decode(&b, me, n, rho, self.pre.delta())
            })
            .collect::<Result<Vec<Material>, _>>()?;
        Ok(self.append_material(decoded))
    }

    fn append_material(&mut self, decoded: Vec<Material>) -> (usize, usize) {
        let (me, n) = (self.party(), self.parties());
        let (mut t, mut k) = (0, 0);
        for m in decoded {
            t += m.triples.len();
            k += m.masks.len();
            let pool = self.triples.get_or_insert_with(|| {
                Triples { x: AuthShares::empty(me, n), y: AuthShares::empty(me, n), z: AuthShares::empty(me, n) }
            });
            pool.x.extend(&m.triples.x);
            pool.y.extend(&m.triples.y);
            pool.z.extend(&m.triples.z);
            self.shares.get_or_insert_with(|| AuthShares::empty(me, n)).extend(&m.masks);
            // `m` drops here: its shares wipe themselves.
        }
        let (pt, ps) = self.pooled();
        self.stats.max_pooled_triples = self.stats.max_pooled_triples.max(pt);
        self.stats.max_pooled_shares = self.stats.max_pooled_shares.max(ps);
        (t, k)
    }
}

/// The evaluator's verdict on a row that failed its tag check. Why it can blame the garbler only
/// sometimes: the row was decrypted under the evaluator's labels of that garbler, and on a wire
/// after an AND gate those were rebuilt partly from tags the *other* garblers put in their rows —
/// a corrupt garbler j that flips the tag it holds for an honest garbler i makes i's next row
/// fail. Only when both input labels have a single source (they came from the garbler itself
/// through XOR, INV, COPY and CONST gates, or there is no other garbler) is the row's garbler the
/// only party that can have made the check fail.
fn row_failure(bad: gc_core::BadRow) -> AuthGcError {
    let culprit = bad.proves_garbler.then_some(bad.garbler);
    AuthGcError::cheating(Phase::Online, culprit, "tag check on a decrypted garbled row")
}

/// Evaluates one chunk with its material (`None` for a chunk without AND gates, whose XOR, INV,
/// CONST and COPY gates still move masked values and labels); a failed tag check names the
/// garbler where that proves it deviated ([`row_failure`]).
fn evaluate(
    state: &mut EvalState,
    evaluator: PartyId,
    gates: &[Gate],
    tweaks: &[Tweaks],
    delta: Block,
    first_gate: u64,
    m: Option<&ChunkMaterial>,
) -> Result<(), AuthGcError> {
    let order = webmpc_garble::halfgates::plan_chunk(state.wires() as u32, gates)
        .map_err(|e| AuthGcError::InvalidArgument(e.to_string()))?;
    let result = match m {
        Some(m) => {
            let rows = EvalRows { r0: &m.r0, alpha: &m.alpha, beta: &m.beta, tables: &m.tables };
            gc_core::evaluate_chunk(state, gates, &order, tweaks, delta, first_gate, &rows)
        }
        None => {
            let n = tweaks.len();
            let empty = AuthShares::empty(evaluator, n);
            let none = vec![Vec::new(); n];
            let rows = EvalRows { r0: &empty, alpha: &empty, beta: &empty, tables: &none };
            gc_core::evaluate_chunk(state, gates, &order, tweaks, delta, first_gate, &rows)
        }
    };
    result.map_err(row_failure)
}

