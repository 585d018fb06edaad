//! The parties of teleport jobs over a [`Channel`]: the garbler (P1), the evaluator (P2) and the
//! enclave, which sits beside P2 (in the SDK: the enclave-server P2 hosts or reaches). Each driver
//! works in bounded steps: circuit pieces and table messages of [`PIECE_GATES`] gates, ROT chunks
//! of [`ROT_CHUNK`] OTs.
//!
//! # Topology
//!
//! P1 talks **only to P2**; P2 talks to P1 and to the enclave *link*. Every message on the link is
//! one **link frame**: a peer byte (0 = the garbler's, 1 = the evaluator's; from the enclave, the
//! destination) and one message of [`crate::frames`] — the enclave program's stdin/stdout framing
//! without its length prefix, and one WebSocket message to the enclave-server. P2 forwards P1's
//! sealed job message to the enclave as a peer-0 frame and the enclave's peer-0 evidence to P1.
//! P2 gains nothing from relaying: the seed is sealed to the key the evidence binds (P1 checked
//! it), and the enclave accepts each job id once per session. P2's own secrets are sealed the same
//! way ([`crate::seal`], role 1): the enclave-server's host and the network between P2 and it see
//! neither x2⁰ nor k2, nor the replies that would reveal them or P2's outputs (x2⁰ labels and σ's,
//! ROT chunks).
//!
//! # Attested session, then jobs
//!
//! Evidence verification and key agreement are paid **once per session**, not per job; the
//! evidence answers both parties' fresh nonces, so it cannot be a recording of another session:
//!
//! ```text
//! P1 → P2      the garbler's nonce (32 bytes)
//! P2 → E       [1] Challenge (the garbler's nonce, the evaluator's nonce)
//! E  → P2      Evidence (peer-0 and peer-1 copies); P2 checks its copy against its policy and
//!                its nonce, makes its X25519 key (Sealer, role 1)
//! P2 → P1      the peer-0 copy; P1 checks it against its policy and its nonce, makes its
//!                X25519 key (Sealer, role 0)
//! ```
//!
//! A GC job (malicious mode adds τ, the σ's and output labels instead of output bits):
//!
//! ```text
//! P1 ⇄ P2      job header ‖ who learns each output (both send, both compare)
//! P2 → P1      x2¹ (packed bits)
//! P2 → E       [1] EvaluatorJob (job header, sealed x2⁰), [1] circuit pieces, [1] CircuitDone
//!                (or [1] CircuitCached when the session keeps this circuit: see below)
//! P1 → P2      GarblerJob (job header, sealed seed);   P2 → E  [0] GarblerJob
//! E  → P2      InputLabels (x2⁰ labels [, σ's]: sealed, in parts of at most 1 MiB)
//! P1 → P2      x1 labels, x2¹ labels [, τ]
//! P2 ⇄ E       [1] GarblePiece j / Tables j, for each piece ([`WINDOW`] in flight); then Decoding, Done
//! P2 → P1      the garbler's outputs, after every check passed (possibly none: an empty message)
//! ```
//!
//! A ROT job: header exchange; P2 → E [1] EvaluatorJob (sealed k2); P1 → P2 GarblerJob (sealed
//! k1) [, the chunk τ's], forwarded as [0]; then [1] RotNext j / RotChunk j (sealed), Done;
//! P2 → P1 the end of the job (an empty message).
//!
//! When the previous upload of the session was this circuit and its encoding is at most
//! [`CIRCUIT_CACHE_BYTES`](crate::machine::CIRCUIT_CACHE_BYTES), the enclave still has it: P2
//! sends `CircuitCached` instead of uploading, and `GarblePiece j` without the piece.
//!
//! The last P2 → P1 message makes both runs end together: a job that fails at P2 (a check, the
//! enclave, the link) never completes at P1.
//!
//! # The garbler's outputs
//!
//! The evaluator learns every output (the enclave gives it every decoding bit). Outputs also
//! revealed to the garbler reach it from P2 after P2's checks: in semi-honest mode as bits (P2
//! is trusted to report them, as in `webmpc_garble`'s Yao); in malicious mode as the **output
//! wire labels**, which P1 checks against both labels of each wire (it garbled the circuit for
//! τ anyway): a cheating P2 cannot produce the label of the other value without Δ, so it can
//! only make P1 abort ([`Check::EvaluatorOutputLabels`](crate::Check::EvaluatorOutputLabels)).

use crate::circuit::{pieces, Header};
use crate::evidence::{self, Challenge, Policy, Verifier};
use crate::frames::{self, tag};
use crate::gc::{self, GarblerLabels, GcEvaluation, Layout};
use crate::job::{JobHeader, JobKind, Mode};
use crate::machine::{EnclaveMachine, EVALUATOR, GARBLER};
use crate::rot::{self, RotReceiver, RotSender};
use crate::seal::{Role, Sealer, SEAL_OVERHEAD};
use crate::TeleportError;
use sha2::{Digest, Sha256};
use webmpc_core::channel::{Channel, ChannelError, PartyId};
use webmpc_core::prg::Prg;
use webmpc_core::Block;

pub use crate::circuit::PIECE_GATES;
pub use crate::rot::ROT_CHUNK;

/// Requests (garble piece, ROT chunk) P2 keeps in flight to the enclave, so the enclave computes
/// the next while P2 handles the last; memory stays at `WINDOW` pieces or chunks.
pub const WINDOW: usize = 2;

/// Who is who on the channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peers {
    /// P1: garbler, ROT sender (P2's peer).
    pub garbler: PartyId,
    /// P2: evaluator, ROT receiver (P1's and the enclave's peer).
    pub evaluator: PartyId,
    /// The enclave link (P2's peer).
    pub enclave: PartyId,
}

impl Default for Peers {
    /// Garbler 0, evaluator 1, enclave 2.
    fn default() -> Self {
        Peers { garbler: 0, evaluator: 1, enclave: 2 }
    }
}

/// A link frame: `peer` then `msg`.
pub fn link_frame(peer: u8, msg: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + msg.len());
    v.push(peer);
    v.extend_from_slice(msg);
    v
}

/// Splits a link frame into its peer byte (0 or 1) and message.
pub fn split_link_frame(frame: &[u8]) -> Result<(u8, &[u8]), TeleportError> {
    match frame.split_first() {
        Some((&p, msg)) if p <= 1 && !msg.is_empty() => Ok((p, msg)),
        _ => Err(TeleportError::Malformed("enclave link frame")),
    }
}

/// P2's side of the link: sends frames for either peer, receives the frames meant for P2.
struct Link<'a, C> {
    ch: &'a C,
    enclave: PartyId,
}

impl<C: Channel> Link<'_, C> {
    async fn send(&self, peer: u8, msg: &[u8]) -> Result<(), TeleportError> {
        Ok(self.ch.send(self.enclave, link_frame(peer, msg)).await?)
    }

    /// The next enclave message for P2, which must have type `want`; returns the whole frame
    /// (its payload starts at byte 2: peer byte, type byte). An `Error` (to either peer: the
    /// enclave sends it to both) becomes [`TeleportError::Remote`]; any other message for P1 is out
    /// of place once the session is set up.
    async fn recv(&self, want: u8, what: &'static str) -> Result<Vec<u8>, TeleportError> {
        let frame = self.ch.recv(self.enclave).await?;
        let (peer, msg) = split_link_frame(&frame)?;
        let (t, _) = frames::split(msg)?;
        if t == tag::ERROR {
            return Err(frames::parse_error(&msg[1..]));
        }
        if peer != EVALUATOR || t != want {
            return Err(TeleportError::UnexpectedMessage { state: what, got: "another enclave message" });
        }
        Ok(frame)
    }
}

/// The session id of job number `index` of a session whose parties agreed on `base`.
pub fn job_sid(base: &[u8; 32], index: u64) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"webmpc/teleport/job-id/v1")
        .chain_update(base)
        .chain_update(index.to_le_bytes())
        .finalize()
        .into()
}

/// Job headers numbered from a base both parties agreed on: each party keeps one counter, and the
/// header exchange at the start of every job catches counters out of step.
#[derive(Clone, Debug)]
pub struct JobCounter {
    base: [u8; 32],
    next: u64,
}

impl JobCounter {
    /// Counts from job 0 of the session `base`.
    pub fn new(base: [u8; 32]) -> Self {
        JobCounter { base, next: 0 }
    }

    /// The next job's header.
    pub fn next(&mut self, mode: Mode, kind: JobKind) -> JobHeader {
        let sid = job_sid(&self.base, self.next);
        self.next += 1;
        JobHeader { sid, mode, kind }
    }
}

/// P1's attested session: the enclave key its evidence bound, and the [`Sealer`] (one X25519 key)
/// that seals every job's seed to it.
pub struct GarblerSession {
    sealer: Sealer,
}

fn nonce(prg: &mut Prg) -> [u8; 32] {
    let mut n = [0u8; 32];
    prg.fill_bytes(&mut n);
    n
}

impl GarblerSession {
    /// Checks the `Evidence` message (as the enclave sent it) against `policy` and the nonce this
    /// party sent for the session, and makes the sealer, with its X25519 key from `prg`.
    pub fn from_evidence(evidence_msg: &[u8], policy: &Policy<'_>, nonce: &[u8; 32], prg: &mut Prg) -> Result<Self, TeleportError> {
        let (t, payload) = frames::split(evidence_msg)?;
        if t == tag::ERROR {
            return Err(frames::parse_error(payload));
        }
        if t != tag::EVIDENCE {
            return Err(TeleportError::UnexpectedMessage { state: "waiting for the enclave's evidence", got: "another message" });
        }
        let (pk, _) = evidence::verify(payload, policy, Verifier::Garbler, nonce)?;
        Ok(GarblerSession { sealer: Sealer::new(Role::Garbler, &pk, entropy(prg))? })
    }

    /// Sends a fresh nonce to P2 (for the enclave's challenge), receives the evidence P2 relays
    /// and checks it (see [`GarblerSession::from_evidence`]).
    pub async fn connect<C: Channel>(ch: &C, peers: &Peers, policy: &Policy<'_>, prg: &mut Prg) -> Result<Self, TeleportError> {
        let mine = nonce(prg);
        ch.send(peers.evaluator, mine.to_vec()).await?;
        let msg = ch.recv(peers.evaluator).await?;
        Self::from_evidence(&msg, policy, &mine, prg)
    }

    /// The enclave's X25519 key.
    pub fn enclave_public(&self) -> [u8; 32] {
        self.sealer.enclave_public()
    }
}

/// P2's attested session: it checked the enclave's evidence, relayed it to P1, and seals its own
/// inputs to the enclave with its [`Sealer`].
pub struct EvaluatorSession {
    sealer: Sealer,
    /// The content hash of the circuit the enclave keeps, as P2 knows from the cache rule.
    cached: Option<[u8; 32]>,
}

impl EvaluatorSession {
    /// Receives P1's nonce, sends the enclave the challenge (P1's nonce and a fresh one of its
    /// own, from `prg`), receives the enclave's two `Evidence` frames from the link, checks P2's
    /// copy against `policy` (P2 relies on the enclave for the privacy of x2 against P1) and its
    /// nonce, and forwards P1's copy to P1.
    pub async fn connect<C: Channel>(ch: &C, peers: &Peers, policy: &Policy<'_>, prg: &mut Prg) -> Result<Self, TeleportError> {
        let garbler: [u8; 32] = ch.recv_exact(peers.garbler, 32).await?.try_into().expect("32 bytes");
        let challenge = Challenge { garbler, evaluator: nonce(prg) };
        ch.send(peers.enclave, link_frame(EVALUATOR, &frames::challenge(&challenge))).await?;
        let mut copies: [Option<Vec<u8>>; 2] = [None, None];
        while copies.iter().any(Option::is_none) {
            let frame = ch.recv(peers.enclave).await?;
            let (peer, msg) = split_link_frame(&frame)?;
            let (t, payload) = frames::split(msg)?;
            if t == tag::ERROR {
                return Err(frames::parse_error(payload));
            }
            if t != tag::EVIDENCE || copies[peer as usize].is_some() {
                return Err(TeleportError::UnexpectedMessage { state: "waiting for the enclave's evidence", got: "another message" });
            }
            copies[peer as usize] = Some(msg.to_vec());
        }
        let [Some(for_garbler), Some(own)] = copies else { unreachable!("both copies arrived") };
        let (enclave_pk, answered) = evidence::verify(&own[1..], policy, Verifier::Evaluator, &challenge.evaluator)?;
        // The enclave answered P1's nonce as P1 sent it (else P1 would refuse the evidence anyway).
        if answered != challenge {
            return Err(TeleportError::EvidenceRefused(crate::EvidenceRefusal::Stale));
        }
        ch.send(peers.garbler, for_garbler).await?;
        Ok(EvaluatorSession { sealer: Sealer::new(Role::Evaluator, &enclave_pk, entropy(prg))?, cached: None })
    }

    /// The enclave's X25519 key (as P2's copy of the evidence bound it).
    pub fn enclave_public(&self) -> [u8; 32] {
        self.sealer.enclave_public()
    }
}

/// Both parties send the job header (and who learns each output) and abort unless the peer's
/// equals theirs.
async fn agree<C: Channel>(ch: &C, peer: PartyId, job: &[u8], reveal: &[bool]) -> Result<(), TeleportError> {
    let mut mine = job.to_vec();
    mine.extend(reveal.iter().map(|&r| r as u8));
    ch.send(peer, mine.clone()).await?;
    let theirs = ch.recv(peer).await?;
    if theirs != mine {
        return Err(TeleportError::ParameterMismatch("job (session, mode, kind, count, circuit or output assignment)"));
    }
    Ok(())
}

/// The circuit's header and layout. The caller guarantees that `circuit` has the job's content
/// hash (compute it once when preparing the circuit, not per run): the enclave refuses any other
/// circuit, and in malicious mode a garbler's τ over another circuit fails P2's check.
///
/// Both parties also refuse here, before anything is sent, what the enclave would refuse at the
/// circuit's header by the sizes both sides know ([`frames`]): more output bits than one
/// `Decoding` message holds, or an evaluator input whose sealed job message exceeds the
/// enclave's incoming limit.
fn check_circuit(job: &JobHeader, circuit: &[u8], reveal: &[bool]) -> Result<(Header, Layout), TeleportError> {
    let (_, owners) = gc::gc_parts(job)?;
    let (header, _) = Header::parse(circuit)?;
    let layout = Layout::new(&header, owners)?;
    let outputs = header.output_bits().unwrap_or(u64::MAX);
    if outputs > frames::MAX_OUTPUT_BITS {
        return Err(TeleportError::TooLarge { what: "circuit output bits", got: outputs, limit: frames::MAX_OUTPUT_BITS });
    }
    let job_msg = 1 + 4 + job.encode().len() as u64 + 4 + (layout.evaluator.len() as u64).div_ceil(8) + SEAL_OVERHEAD as u64;
    if job_msg > frames::MAX_INCOMING_MESSAGE as u64 {
        return Err(TeleportError::TooLarge { what: "evaluator job message (bytes)", got: job_msg, limit: frames::MAX_INCOMING_MESSAGE as u64 });
    }
    if reveal.len() != header.outputs.len() {
        return Err(TeleportError::InvalidArgument(format!(
            "{} output assignments given; the circuit has {} output values",
            reveal.len(),
            header.outputs.len()
        )));
    }
    Ok((header, layout))
}

fn entropy(prg: &mut Prg) -> [u8; 32] {
    let mut e = [0u8; 32];
    prg.fill_bytes(&mut e);
    e
}

/// The garbler (P1) of a GC job in its attested session. `circuit` is the binary form whose hash
/// the job names, `x1` the bits of the garbler's input values in order, `reveal[i]` whether output
/// value `i` is revealed to the garbler too. The seed comes from `prg` (seed it from the platform
/// CSPRNG: `Prg::from_entropy`). Returns the revealed output values (`None` for the others).
#[allow(clippy::too_many_arguments)]
pub async fn gc_garbler<C: Channel>(
    ch: &C,
    peers: &Peers,
    session: &mut GarblerSession,
    job: &JobHeader,
    circuit: &[u8],
    x1: &[bool],
    reveal: &[bool],
    prg: &mut Prg,
) -> Result<Vec<Option<Vec<bool>>>, TeleportError> {
    let (_, layout) = check_circuit(job, circuit, reveal)?;
    if x1.len() != layout.garbler.len() {
        return Err(TeleportError::InvalidArgument(format!(
            "{} garbler input bits given; the circuit wants {}",
            x1.len(),
            layout.garbler.len()
        )));
    }
    let job_bytes = job.encode();
    agree(ch, peers.evaluator, &job_bytes, reveal).await?;
    let share = ch.recv(peers.evaluator).await?;
    let x2_1 = crate::unpack_bits(&share, layout.evaluator.len(), "x2¹ share")?;
    let mut seed = prg.next_block();
    let sealed = session.sealer.seal(&job_bytes, &seed.0);
    let sealed = match sealed {
        Ok(s) => s,
        Err(e) => {
            Block::wipe(core::slice::from_mut(&mut seed));
            return Err(e);
        }
    };
    ch.send(peers.evaluator, frames::garbler_job(&job_bytes, &sealed)).await?;
    let r = gc::garbler_side(seed, job, circuit, x1, &x2_1, reveal);
    Block::wipe(core::slice::from_mut(&mut seed));
    let (labels, outputs) = r?;
    ch.send(peers.evaluator, labels.encode()).await?;
    outputs.decode(&ch.recv(peers.evaluator).await?)
}

/// The evaluator (P2) of a GC job in its attested session: returns every output value's bits.
/// `prg` supplies the x2⁰ share; `reveal` is as for [`gc_garbler`]; `progress(gates done)` is
/// called after each piece.
#[allow(clippy::too_many_arguments)]
pub async fn gc_evaluator<C: Channel>(
    ch: &C,
    peers: &Peers,
    session: &mut EvaluatorSession,
    job: &JobHeader,
    circuit: &[u8],
    x2: &[bool],
    reveal: &[bool],
    prg: &mut Prg,
    mut progress: impl FnMut(u64),
) -> Result<Vec<Vec<bool>>, TeleportError> {
    let (header, layout) = check_circuit(job, circuit, reveal)?;
    let (n1, n2) = (layout.garbler.len(), layout.evaluator.len());
    if x2.len() != n2 {
        return Err(TeleportError::InvalidArgument(format!("{} evaluator input bits given; the circuit wants {n2}", x2.len())));
    }
    let link = Link { ch, enclave: peers.enclave };
    let ranges = pieces(circuit)?;
    let job_bytes = job.encode();
    agree(ch, peers.garbler, &job_bytes, reveal).await?;
    let mut coins = vec![0u8; n2.div_ceil(8)];
    prg.fill_bytes(&mut coins);
    let (x2_0, x2_1) = gc::split_input(x2, &coins)?;
    coins.fill(0);
    ch.send(peers.garbler, crate::pack_bits(&x2_1)).await?;

    let sealed = session.sealer.seal(&job_bytes, &frames::gc_input(&x2_0))?;
    link.send(EVALUATOR, &frames::evaluator_job(&job_bytes, &sealed)).await?;
    let replies = session.sealer.reply_key(&job_bytes);
    let (circuit_hash, _) = gc::gc_parts(job)?;
    let cached = session.cached.as_ref() == Some(circuit_hash);
    if cached {
        link.send(EVALUATOR, &frames::circuit_cached()).await?;
    } else {
        // Until this upload is accepted, the enclave keeps nothing.
        session.cached = None;
        for r in &ranges {
            link.send(EVALUATOR, &frames::circuit_piece(&circuit[r.clone()])).await?;
        }
        link.send(EVALUATOR, &frames::circuit_done()).await?;
    }
    let sealed = ch.recv(peers.garbler).await?;
    if frames::split(&sealed)?.0 != tag::GARBLER_JOB {
        return Err(TeleportError::Malformed("garbler job (wrong message type)"));
    }
    link.send(GARBLER, &sealed).await?;
    let mut parts = frames::InputLabelsReader::new(n1, n2, job.mode);
    while !parts.complete() {
        let msg = link.recv(tag::INPUT_LABELS, "waiting for the x2⁰ labels").await?;
        parts.push(&msg[1..], &replies)?;
    }
    // The enclave accepted the upload (or used its copy): it keeps the circuit if it is small.
    if circuit.len() <= crate::machine::CIRCUIT_CACHE_BYTES {
        session.cached = Some(*circuit_hash);
    }
    let (share0, sigmas) = parts.finish()?;
    let sigmas = (job.mode == Mode::Malicious).then_some(sigmas);
    let from_garbler = GarblerLabels::decode(&ch.recv(peers.garbler).await?, n1, n2, job.mode)?;
    let mut eval = GcEvaluation::new(job, header, (x2_0, x2_1), from_garbler, share0)?;
    let gate_pieces = &ranges[1..];
    let request = |j: usize| frames::garble_piece(j as u64, if cached { &[][..] } else { &circuit[gate_pieces[j].clone()] });
    for j in 0..WINDOW.min(gate_pieces.len()) {
        link.send(EVALUATOR, &request(j)).await?;
    }
    for (j, r) in gate_pieces.iter().enumerate() {
        let msg = link.recv(tag::TABLES, "waiting for garbled tables").await?;
        // Keep the enclave busy while this piece is evaluated.
        if j + WINDOW < gate_pieces.len() {
            link.send(EVALUATOR, &request(j + WINDOW)).await?;
        }
        let (index, tables) = frames::parse_tables(&msg[2..])?;
        if index != j as u64 {
            return Err(TeleportError::Malformed("tables (piece index out of order)"));
        }
        eval.evaluate_piece(&circuit[r.clone()], tables)?;
        progress(eval.gates_done());
    }
    let msg = link.recv(tag::DECODING, "waiting for the decoding bits").await?;
    let (_, decoding) = frames::parse_decoding(&msg[2..])?;
    let decoding = decoding.to_vec();
    link.recv(tag::DONE, "waiting for the end of the job").await?;
    let (outputs, for_garbler) = eval.finish_revealing(&decoding, sigmas, reveal)?;
    ch.send(peers.garbler, for_garbler).await?;
    Ok(outputs)
}

fn rot_job_count(job: &JobHeader) -> Result<u64, TeleportError> {
    match job.kind {
        JobKind::Rot { count } => Ok(count),
        JobKind::Gc { .. } => Err(TeleportError::InvalidArgument("a ROT job header was expected".into())),
    }
}

/// The ROT sender (P1) in its attested session: agrees on the job, seals `k1` to the enclave,
/// derives its output pairs chunk by chunk into `sink(first index, pairs)` (each chunk computed
/// once: in malicious mode the same pass gives the chunk's τ, sent to the receiver), and resolves
/// when the receiver reports the end of the job.
pub async fn rot_sender<C: Channel>(
    ch: &C,
    peers: &Peers,
    session: &mut GarblerSession,
    job: &JobHeader,
    prg: &mut Prg,
    mut sink: impl FnMut(u64, &[[Block; 2]]),
) -> Result<(), TeleportError> {
    let count = rot_job_count(job)?;
    let job_bytes = job.encode();
    agree(ch, peers.evaluator, &job_bytes, &[]).await?;
    let mut k1 = prg.next_block();
    let sealed = session.sealer.seal(&job_bytes, &k1.0);
    let sender = RotSender::new(job, k1);
    Block::wipe(core::slice::from_mut(&mut k1));
    let (sealed, sender) = (sealed?, sender?);
    ch.send(peers.evaluator, frames::garbler_job(&job_bytes, &sealed)).await?;
    let mut taus = Vec::new();
    for j in 0..rot::chunks(count) {
        let (pairs, tau) = sender.chunk(j);
        sink(rot::chunk_range(count, j).start, &pairs);
        taus.extend(tau);
    }
    if job.mode == Mode::Malicious {
        ch.send(peers.evaluator, taus.concat()).await?;
    }
    let end = ch.recv(peers.evaluator).await?;
    if !end.is_empty() {
        return Err(TeleportError::Malformed("end of ROT job"));
    }
    Ok(())
}

/// The ROT receiver (P2) in its attested session: `sink(first index, choice bits, outputs)` gets
/// each chunk once it is checked (malicious mode: against its τ), so memory stays at one chunk.
pub async fn rot_receiver<C: Channel>(
    ch: &C,
    peers: &Peers,
    session: &mut EvaluatorSession,
    job: &JobHeader,
    prg: &mut Prg,
    mut sink: impl FnMut(u64, &[bool], &[Block]),
) -> Result<(), TeleportError> {
    let count = rot_job_count(job)?;
    let link = Link { ch, enclave: peers.enclave };
    let job_bytes = job.encode();
    agree(ch, peers.garbler, &job_bytes, &[]).await?;
    let mut k2 = prg.next_block();
    let sealed = session.sealer.seal(&job_bytes, &frames::rot_input(k2));
    let sealed = match sealed {
        Ok(s) => s,
        Err(e) => {
            Block::wipe(core::slice::from_mut(&mut k2));
            return Err(e);
        }
    };
    link.send(EVALUATOR, &frames::evaluator_job(&job_bytes, &sealed)).await?;
    let replies = session.sealer.reply_key(&job_bytes);
    let sealed = ch.recv(peers.garbler).await?;
    if frames::split(&sealed)?.0 != tag::GARBLER_JOB {
        return Err(TeleportError::Malformed("garbler job (wrong message type)"));
    }
    link.send(GARBLER, &sealed).await?;
    let taus = match job.mode {
        Mode::SemiHonest => None,
        Mode::Malicious => {
            let bytes = ch.recv_exact(peers.garbler, 32 * rot::chunks(count) as usize).await?;
            Some(bytes.chunks_exact(32).map(|c| c.try_into().expect("32 bytes")).collect())
        }
    };
    let receiver = RotReceiver::new(job, k2, taus);
    Block::wipe(core::slice::from_mut(&mut k2));
    let receiver = receiver?;
    let chunks = rot::chunks(count);
    for j in 0..(WINDOW as u64).min(chunks) {
        link.send(EVALUATOR, &frames::rot_next(j)).await?;
    }
    for j in 0..chunks {
        let msg = link.recv(tag::ROT_CHUNK, "waiting for a ROT chunk").await?;
        // Keep the enclave busy while this chunk is checked.
        if j + (WINDOW as u64) < chunks {
            link.send(EVALUATOR, &frames::rot_next(j + WINDOW as u64)).await?;
        }
        let (index, chunk) = frames::parse_rot_chunk(&msg[1..], job.mode == Mode::Malicious, &replies)?;
        if index != j {
            return Err(TeleportError::Malformed("ROT chunk (index out of order)"));
        }
        let out = receiver.accept(j, &chunk)?;
        sink(rot::chunk_range(count, j).start, &receiver.choices(j), &out);
    }
    link.recv(tag::DONE, "waiting for the end of the job").await?;
    ch.send(peers.garbler, Vec::new()).await?;
    Ok(())
}

/// The host's attestation: evidence (its format byte and bytes) over the report data the machine
/// asks for ([`EnclaveMachine::evidence_request`]): the software signer in simulation,
/// `oe_get_evidence` in Open Enclave.
pub type Attester<'a> = &'a dyn Fn(&[u8; 32]) -> Result<(u8, Vec<u8>), TeleportError>;

/// The enclave's host, beside P2: answers the session's challenge with evidence from `attester`,
/// then serves jobs ([`enclave_serve`]) until P2 closes the link.
pub async fn enclave_party<C: Channel>(
    ch: &C,
    peers: &Peers,
    machine: &mut EnclaveMachine,
    attester: Attester<'_>,
) -> Result<(), TeleportError> {
    enclave_serve(ch, peers, machine, attester, u64::MAX).await
}

/// Tells both parties (through P2) that the enclave failed with `e`.
async fn report<C: Channel>(ch: &C, peers: &Peers, code: &str, detail: &str) {
    let msg = frames::error(code, detail);
    let _ = ch.send(peers.evaluator, link_frame(GARBLER, &msg)).await;
    let _ = ch.send(peers.evaluator, link_frame(EVALUATOR, &msg)).await;
}

/// Feeds one link frame from P2 into `machine` (attesting when it asks) and sends its answers
/// back. `Ok(false)`: P2 closed the link while no job was in progress.
async fn serve_frame<C: Channel>(ch: &C, peers: &Peers, machine: &mut EnclaveMachine, attester: Attester<'_>) -> Result<bool, TeleportError> {
    let frame = match ch.recv(peers.evaluator).await {
        Ok(f) => f,
        Err(ChannelError::Disconnected { .. }) if machine.is_idle() => return Ok(false),
        Err(e) => {
            report(ch, peers, "PEER_DISCONNECTED", "the enclave's input ended before the job did").await;
            return Err(e.into());
        }
    };
    let (peer, msg) = match split_link_frame(&frame) {
        Ok(x) => x,
        Err(e) => {
            report(ch, peers, e.code(), &e.to_string()).await;
            return Err(e);
        }
    };
    let r = machine.push(peer, msg);
    let attested = match (&r, machine.evidence_request()) {
        (Ok(()), Some(rd)) => attester(&rd).and_then(|(format, ev)| machine.attest(format, &ev)),
        _ => Ok(()),
    };
    while let Some((to, msg)) = machine.pull() {
        // A party that already left does not stop the other from hearing the outcome.
        let _ = ch.send(peers.evaluator, link_frame(to, &msg)).await;
    }
    if let Err(e) = &attested {
        report(ch, peers, e.code(), &e.to_string()).await;
    }
    r?;
    attested?;
    Ok(true)
}

/// Serves link frames from P2 until the session's evidence went out (the challenge answered).
pub async fn enclave_attest<C: Channel>(ch: &C, peers: &Peers, machine: &mut EnclaveMachine, attester: Attester<'_>) -> Result<(), TeleportError> {
    while !machine.is_attested() {
        if !serve_frame(ch, peers, machine, attester).await? {
            return Err(TeleportError::UnexpectedMessage { state: "waiting for the challenge", got: "the end of the link" });
        }
    }
    Ok(())
}

/// Feeds every link frame from P2 into `machine` (answering the session's challenge with
/// evidence from `attester`) and sends its answers back, until `jobs` more jobs completed or P2
/// closes the link (between jobs: `Ok`; mid-job: the parties are told `PEER_DISCONNECTED` and the
/// channel error is returned). A failed job sends its `Error` message to both parties and
/// returns the error.
pub async fn enclave_serve<C: Channel>(
    ch: &C,
    peers: &Peers,
    machine: &mut EnclaveMachine,
    attester: Attester<'_>,
    jobs: u64,
) -> Result<(), TeleportError> {
    let target = machine.completed_jobs().saturating_add(jobs);
    while machine.completed_jobs() < target {
        if !serve_frame(ch, peers, machine, attester).await? {
            return Ok(());
        }
    }
    Ok(())
}
