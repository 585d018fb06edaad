//! The enclave program: M^ROT and M^GC behind the message protocol of [`crate::frames`], as a
//! state machine with no IO. The simulation backend (`enclave-program`), the C ABI (the Open
//! Enclave build) and the in-process test party all drive this one type: [`push`] a message from
//! a peer, then [`pull`] what the enclave sends back.
//!
//! One machine is one **attested session**: one X25519 key and any number of jobs, one after the
//! other, so the parties verify the evidence and agree on a key once rather than per job. The
//! session opens with the verifiers' **challenge** (their fresh nonces, `Challenge`): the machine
//! then asks its host for evidence over the report data that binds its key and both nonces
//! ([`evidence_request`](EnclaveMachine::evidence_request)), and sends it to both parties once the
//! host hands it over ([`attest`](EnclaveMachine::attest): `oe_get_evidence` inside Open Enclave,
//! the software signer in simulation). Nothing else is accepted before. For each job it accepts
//! the garbler's and the evaluator's job messages in either order and checks that they carry the
//! **same job header** (session, mode, kind, ROT count or circuit hash and owners); each party's
//! sealed input (the garbler's seed, the evaluator's k2 or x2⁰) must open under that header and
//! that party's role, and the replies that would reveal the evaluator's input or outputs are
//! sealed to it ([`crate::seal`]). A job id (the header's session id) is accepted **once per session**: a seed
//! sealed for one job cannot be replayed into a later one (which would let an evaluator see the
//! same garbling with two different x2⁰ shares), and the garbler's per-job AEAD key is never
//! reused ([`crate::seal`]). At most [`MAX_SESSION_JOBS`] jobs per session.
//!
//! **GC jobs stream the circuit twice.** Pass 1 (`CircuitPiece`…`CircuitDone`) hashes the whole
//! encoding and keeps a SHA-256 digest per piece; the enclave releases nothing until the content
//! hash equals the one both parties named. Pass 2 (`GarblePiece`) resends each piece, which must
//! match its digest, and gets its tables back. So an evaluator cannot make the enclave garble a
//! circuit other than the agreed one (which would let it evaluate another function of the
//! garbler's input), and memory stays at the wire labels, one piece and 32 bytes per piece.
//!
//! **Circuit cache.** A session keeps its most recent circuit whole when its encoding is at most
//! [`CIRCUIT_CACHE_BYTES`] (a rule both sides apply, so the evaluator knows without asking). A
//! later job naming the same content hash may then send `CircuitCached` instead of the upload,
//! and `GarblePiece` messages with the index alone: the enclave garbles its own copy, which it
//! checked against the hash when it was uploaded. Repeated evaluations of one circuit (the
//! common case) then cost the evaluator no circuit traffic at all.
//!
//! **Bounded by the declared job.** Before allocating for a job the machine checks what its header
//! declares against [`Config`]: wires, gates and ROTs per job, jobs per session, and the memory
//! the job needs ([`gc_job_memory`]: wire labels, the input labels and σ's, the piece digests, the
//! kept circuit, one piece in flight) against the session's budget. Everything it sends fits
//! [`frames::MAX_OUTGOING_MESSAGE`]; a circuit whose decoding bits would not is refused at its
//! header (`TOO_LARGE`), before any garbling.
//!
//! Any error ends the session: the machine sends an `Error` message to both peers and refuses
//! everything after it.
//!
//! [`push`]: EnclaveMachine::push
//! [`pull`]: EnclaveMachine::pull

use crate::circuit::{decode_gates, Gate, Header, PIECE_GATES};
use crate::evidence::{self, Challenge};
use crate::frames::{self, tag};
use crate::gc::{GcGarbling, Layout};
use crate::job::{JobHeader, JobKind, Mode};
use crate::rot::RotMachine;
use crate::seal::{EnclaveKeys, ReplyKey, Role, MAX_SESSION_JOBS};
use crate::TeleportError;
use alloc::boxed::Box;
use alloc::collections::{BTreeSet, VecDeque};
use alloc::string::ToString;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};
use webmpc_core::Block;

/// The garbler's peer number in [`EnclaveMachine::push`] / [`EnclaveMachine::pull`].
pub const GARBLER: u8 = 0;
/// The evaluator's peer number.
pub const EVALUATOR: u8 = 1;

/// Limits the enclave enforces before allocating: what one session may make it do.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Most wires of a circuit (24 bytes of label memory each).
    pub max_wires: u32,
    /// Most gates of a circuit (one job's garbling work and table output: 48 bytes per AND).
    pub max_gates: u64,
    /// Most ROTs of one job (its work and output: 16 or 32 bytes per ROT).
    pub max_rots: u64,
    /// Most jobs of one session (at most [`MAX_SESSION_JOBS`]).
    pub max_jobs: u64,
    /// The memory (bytes) one job may declare ([`gc_job_memory`]); ROT jobs need a few MiB.
    pub max_memory: u64,
}

/// Default [`Config::max_memory`]: 256 MiB.
pub const DEFAULT_MAX_MEMORY: u64 = 256 << 20;

impl Default for Config {
    fn default() -> Self {
        Config {
            max_wires: 1 << 25,
            max_gates: 1 << 36,
            max_rots: crate::job::MAX_ROTS,
            max_jobs: MAX_SESSION_JOBS as u64,
            max_memory: DEFAULT_MAX_MEMORY,
        }
    }
}

/// An upper bound of the memory (bytes) the enclave allocates for a GC job on the circuit with
/// `header` and input `layout`: wire labels and their schedule records (24 per wire), the input
/// labels and σ's (up to four copies while they are hashed, cut and sealed), a digest per piece,
/// the kept circuit (and the one it replaces), and one piece with its tables and its schedule in
/// flight.
pub fn gc_job_memory(header: &Header, layout: &Layout, mode: Mode) -> u64 {
    let labels = 24 * header.wires as u64;
    let inputs = 4 * frames::input_labels_len(layout.garbler.len(), layout.evaluator.len(), mode);
    let pieces = header.gates.div_ceil(PIECE_GATES as u64) + 1;
    let encoding = 64 + 4 * (header.inputs.len() + header.outputs.len()) as u64 + 13 * header.gates;
    let kept = 2 * encoding.min(CIRCUIT_CACHE_BYTES as u64);
    let in_flight =
        (2 * 13 + 2 * crate::grr3::AND_TABLE_BYTES as u64 + crate::grr3::SCHEDULE_BYTES_PER_GATE) * PIECE_GATES as u64;
    labels.saturating_add(inputs).saturating_add(32 * pieces).saturating_add(kept).saturating_add(in_flight)
}

enum EvalInput {
    Rot(Block),
    Gc(Vec<bool>),
}

impl Drop for EvalInput {
    fn drop(&mut self) {
        match self {
            EvalInput::Rot(k2) => Block::wipe(core::slice::from_mut(k2)),
            EvalInput::Gc(bits) => bits.iter_mut().for_each(|b| *b = false),
        }
    }
}

/// Edits a sealed reply's plaintext (message type, counter, message): a deviating enclave.
type Deviation = Box<dyn FnMut(u8, u64, &mut Vec<u8>)>;

/// Largest circuit encoding (bytes) a session keeps for later jobs (see the module docs).
pub const CIRCUIT_CACHE_BYTES: usize = 16 << 20;

struct Upload {
    hasher: Sha256,
    header: Option<Header>,
    digests: Vec<[u8; 32]>,
    gates: u64,
    short_seen: bool,
    scratch: Vec<Gate>,
    /// The gate pieces, while the encoding stays within the cache limit.
    kept: Option<Vec<Vec<u8>>>,
    bytes: usize,
}

/// The circuit a session keeps: its content hash, header, piece digests and gate pieces.
struct Cached {
    hash: [u8; 32],
    header: Header,
    digests: Vec<[u8; 32]>,
    pieces: Vec<Vec<u8>>,
}

enum State {
    /// Waiting for the session's challenge (nothing else is accepted before the evidence).
    Challenge,
    /// The challenge arrived: the host is to attest.
    Attesting(Challenge),
    /// Waiting for the job messages (and, for GC, the upload).
    Start,
    Upload(Upload),
    /// The circuit matches the agreed hash; waiting for the garbler's seed.
    /// `cached`: the pieces come from the session's cache, not from the evaluator.
    Uploaded { header: Header, digests: Vec<[u8; 32]>, cached: bool },
    Garbling { g: GcGarbling, digests: Vec<[u8; 32]>, next: u64, cached: bool },
    Rot { m: RotMachine, next: u64, chunks: u64, key: ReplyKey },
    Failed,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Challenge => "waiting for the challenge",
            State::Attesting(_) => "attesting",
            State::Start => "waiting for the jobs",
            State::Upload(_) => "receiving the circuit",
            State::Uploaded { .. } => "waiting for the garbler's seed",
            State::Garbling { .. } => "garbling",
            State::Rot { .. } => "sending ROT chunks",
            State::Failed => "failed",
        }
    }
}

/// The enclave program's state for one attested session (a sequence of jobs).
pub struct EnclaveMachine {
    keys: EnclaveKeys,
    cfg: Config,
    garbler: Option<(Vec<u8>, Block)>,
    evaluator: Option<(Vec<u8>, JobHeader, EvalInput, ReplyKey)>,
    state: State,
    out: VecDeque<(u8, Vec<u8>)>,
    /// Session ids of the jobs started in this session (refused if named again).
    seen: BTreeSet<[u8; 32]>,
    completed: u64,
    cache: Option<Cached>,
    deviation: Option<Deviation>,
}

impl EnclaveMachine {
    /// A machine whose ephemeral X25519 key comes from `entropy` (32 fresh bytes from the
    /// platform: `oe_random` inside Open Enclave, getrandom in simulation).
    pub fn new(entropy: [u8; 32], cfg: Config) -> Self {
        EnclaveMachine {
            keys: EnclaveKeys::from_entropy(entropy),
            cfg,
            garbler: None,
            evaluator: None,
            state: State::Challenge,
            out: VecDeque::new(),
            seen: BTreeSet::new(),
            completed: 0,
            cache: None,
            deviation: None,
        }
    }

    /// Makes this enclave **deviate**: `edit` changes each sealed reply's plaintext (message type,
    /// counter, bytes) before it is sealed. Tests use it to model a malicious enclave, which holds
    /// the reply keys and can seal anything; an honest host never calls it, and the C ABI does
    /// not expose it.
    #[doc(hidden)]
    pub fn deviate(&mut self, edit: impl FnMut(u8, u64, &mut Vec<u8>) + 'static) {
        self.deviation = Some(Box::new(edit));
    }

    /// The report data the host must attest (evidence over it, `oe_get_evidence`'s custom
    /// claims), once the challenge arrived and until [`attest`](Self::attest).
    pub fn evidence_request(&self) -> Option<[u8; 32]> {
        match &self.state {
            State::Attesting(c) => Some(evidence::report_data(&self.keys.public(), c)),
            _ => None,
        }
    }

    /// Sends the host's evidence (of `format`, over [`evidence_request`](Self::evidence_request)'s
    /// report data) to both parties; the session then takes jobs. Evidence that does not fit a
    /// message ends the session like a refused message.
    pub fn attest(&mut self, format: u8, evidence_bytes: &[u8]) -> Result<(), TeleportError> {
        let State::Attesting(c) = &self.state else {
            return Err(TeleportError::UnexpectedMessage { state: self.state.name(), got: "evidence" });
        };
        let msg = frames::evidence(format, &self.keys.public(), c, evidence_bytes);
        if msg.len() > frames::MAX_OUTGOING_MESSAGE {
            let e = TeleportError::TooLarge { what: "evidence message", got: msg.len() as u64, limit: frames::MAX_OUTGOING_MESSAGE as u64 };
            self.fail(&e);
            return Err(e);
        }
        self.out.push_back((GARBLER, msg.clone()));
        self.out.push_back((EVALUATOR, msg));
        self.state = State::Start;
        Ok(())
    }

    /// The enclave's X25519 public key (bound into the evidence).
    pub fn public_key(&self) -> [u8; 32] {
        self.keys.public()
    }

    /// Whether no job is in progress: the session is fresh, or its last job completed (everything
    /// was handed out once `pull` returns `None`) and the next has not started. A host whose input
    /// ends while idle closes normally; mid-job, the parties are told `PEER_DISCONNECTED`.
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Start | State::Challenge) && self.garbler.is_none() && self.evaluator.is_none()
    }

    /// Whether at least one job completed and no other is in progress.
    pub fn is_finished(&self) -> bool {
        self.completed > 0 && self.is_idle()
    }

    /// Number of jobs completed in this session.
    pub fn completed_jobs(&self) -> u64 {
        self.completed
    }

    /// Whether the session's evidence went out (or the session failed): jobs may follow.
    pub fn is_attested(&self) -> bool {
        !matches!(self.state, State::Challenge | State::Attesting(_))
    }

    /// Whether the job failed (the error messages were queued).
    pub fn is_failed(&self) -> bool {
        matches!(self.state, State::Failed)
    }

    /// The next message to send, with its destination peer.
    pub fn pull(&mut self) -> Option<(u8, Vec<u8>)> {
        self.out.pop_front()
    }

    /// Length of the next message to send, if any.
    pub fn next_len(&self) -> Option<usize> {
        self.out.front().map(|(_, m)| m.len())
    }

    /// Handles one message from `from` ([`GARBLER`] or [`EVALUATOR`]). On error the machine queues
    /// an `Error` message to both peers and fails every later call.
    pub fn push(&mut self, from: u8, msg: &[u8]) -> Result<(), TeleportError> {
        if matches!(self.state, State::Failed) {
            return Err(TeleportError::UnexpectedMessage { state: "failed", got: "a message" });
        }
        let r = self.handle(from, msg);
        if let Err(e) = &r {
            self.fail(e);
        }
        r
    }

    /// Ends the session: an `Error` message to both peers, and every later call refused.
    fn fail(&mut self, e: &TeleportError) {
        self.state = State::Failed;
        let msg = frames::error(e.code(), &e.to_string());
        self.out.push_back((GARBLER, msg.clone()));
        self.out.push_back((EVALUATOR, msg));
    }

    fn unexpected(&self, got: &'static str) -> TeleportError {
        TeleportError::UnexpectedMessage { state: self.state.name(), got }
    }

    fn handle(&mut self, from: u8, msg: &[u8]) -> Result<(), TeleportError> {
        let (t, p) = frames::split(msg)?;
        if matches!(self.state, State::Challenge | State::Attesting(_)) {
            if (from, t) != (EVALUATOR, tag::CHALLENGE) || !matches!(self.state, State::Challenge) {
                return Err(self.unexpected("a message before the session's evidence"));
            }
            self.state = State::Attesting(Challenge::decode(p)?);
            return Ok(());
        }
        match (from, t) {
            (GARBLER, tag::GARBLER_JOB) => {
                if self.garbler.is_some() {
                    return Err(self.unexpected("a second garbler job"));
                }
                let (job, sealed) = frames::parse_garbler_job(p)?;
                self.fresh(&JobHeader::decode(job)?)?;
                let (plain, _) = self.keys.open(Role::Garbler, job, sealed)?;
                let seed: [u8; 16] = plain[..].try_into().map_err(|_| TeleportError::Malformed("garbler job (seed)"))?;
                self.garbler = Some((job.to_vec(), Block(seed)));
            }
            (EVALUATOR, tag::EVALUATOR_JOB) => {
                if self.evaluator.is_some() {
                    return Err(self.unexpected("a second evaluator job"));
                }
                let (job, sealed) = frames::parse_evaluator_job(p)?;
                let header = JobHeader::decode(job)?;
                self.fresh(&header)?;
                if let JobKind::Rot { count } = header.kind {
                    if count > self.cfg.max_rots {
                        return Err(TeleportError::TooLarge { what: "ROTs in one job", got: count, limit: self.cfg.max_rots });
                    }
                }
                let (plain, key) = self.keys.open(Role::Evaluator, job, sealed)?;
                let input = match header.kind {
                    JobKind::Rot { .. } => EvalInput::Rot(frames::parse_rot_input(&plain)?),
                    JobKind::Gc { .. } => {
                        let bits = frames::parse_gc_input(&plain)?;
                        self.state = State::Upload(Upload {
                            hasher: Sha256::new(),
                            header: None,
                            digests: Vec::new(),
                            gates: 0,
                            short_seen: false,
                            scratch: Vec::new(),
                            kept: Some(Vec::new()),
                            bytes: 0,
                        });
                        EvalInput::Gc(bits)
                    }
                };
                self.evaluator = Some((job.to_vec(), header, input, key));
            }
            (EVALUATOR, tag::CIRCUIT_PIECE) => {
                let State::Upload(up) = &mut self.state else { return Err(self.unexpected("a circuit piece")) };
                let Some((_, job, _, _)) = &self.evaluator else { return Err(TeleportError::UnexpectedMessage { state: "receiving the circuit", got: "a circuit piece" }) };
                upload_piece(up, p, &self.cfg, job)?;
            }
            (EVALUATOR, tag::CIRCUIT_DONE) => {
                let State::Upload(up) = core::mem::replace(&mut self.state, State::Start) else {
                    return Err(self.unexpected("the end of the circuit"));
                };
                let Some((_, job, EvalInput::Gc(x2_0), _)) = &self.evaluator else {
                    return Err(self.unexpected("the end of the circuit"));
                };
                let JobKind::Gc { circuit_hash, .. } = &job.kind else { unreachable!("GC upload") };
                let header = up.header.ok_or(TeleportError::Malformed("circuit (no header piece)"))?;
                if up.gates != header.gates {
                    return Err(TeleportError::Malformed("circuit (fewer gates than its header declares)"));
                }
                let hash: [u8; 32] = up.hasher.finalize().into();
                if &hash != circuit_hash {
                    return Err(TeleportError::ParameterMismatch("circuit (content hash)"));
                }
                let layout = crate::gc::Layout::new(&header, crate::gc::gc_parts(job)?.1)?;
                if layout.evaluator.len() != x2_0.len() {
                    return Err(TeleportError::ParameterMismatch("number of evaluator input bits"));
                }
                // The checked circuit replaces the cached one (or the cache empties if it is too big).
                self.cache = up.kept.map(|pieces| Cached { hash, header: header.clone(), digests: up.digests.clone(), pieces });
                self.state = State::Uploaded { header, digests: up.digests, cached: false };
            }
            (EVALUATOR, tag::CIRCUIT_CACHED) => {
                let State::Upload(up) = &self.state else { return Err(self.unexpected("a cached-circuit request")) };
                if up.header.is_some() {
                    return Err(self.unexpected("a cached-circuit request after an upload began"));
                }
                if !p.is_empty() {
                    return Err(TeleportError::Malformed("cached-circuit request"));
                }
                let Some((_, job, EvalInput::Gc(x2_0), _)) = &self.evaluator else {
                    return Err(self.unexpected("a cached-circuit request"));
                };
                let JobKind::Gc { circuit_hash, .. } = &job.kind else { unreachable!("GC upload") };
                let Some(c) = self.cache.as_ref().filter(|c| &c.hash == circuit_hash) else {
                    return Err(TeleportError::ParameterMismatch("circuit (not the one this session keeps)"));
                };
                let layout = check_declared(&c.header, job, &self.cfg)?;
                if layout.evaluator.len() != x2_0.len() {
                    return Err(TeleportError::ParameterMismatch("number of evaluator input bits"));
                }
                self.state = State::Uploaded { header: c.header.clone(), digests: c.digests.clone(), cached: true };
            }
            (EVALUATOR, tag::GARBLE_PIECE) => {
                let State::Garbling { g, digests, next, cached } = &mut self.state else {
                    return Err(self.unexpected("a piece to garble"));
                };
                let mut r = crate::bytes::Reader::new(p, "piece to garble");
                let index = r.u64()?;
                let piece = if *cached {
                    if !r.rest().is_empty() || index != *next {
                        return Err(TeleportError::Malformed("piece to garble (a cached circuit's piece is named by its index alone)"));
                    }
                    let c = self.cache.as_ref().expect("a cached job keeps its circuit");
                    &c.pieces[index as usize][..]
                } else {
                    let piece = r.rest();
                    webmpc_core::count::add(webmpc_core::count::Op::ShaBlock, webmpc_core::count::sha256_blocks(piece.len()));
                    if index != *next || digests.get(index as usize) != Some(&Sha256::digest(piece).into()) {
                        return Err(TeleportError::ParameterMismatch("circuit piece (differs from the uploaded one)"));
                    }
                    piece
                };
                let mut out = frames::tables_header(index, piece.len() / 13 * crate::grr3::AND_TABLE_BYTES);
                g.garble_piece(piece, &mut out)?;
                self.out.push_back((EVALUATOR, out));
                *next += 1;
                if *next == digests.len() as u64 {
                    let decoding = g.decoding();
                    let bits = g.header().output_bits().unwrap_or(0) as u32;
                    self.out.push_back((EVALUATOR, frames::decoding(bits, &decoding)));
                    self.job_done();
                }
            }
            (EVALUATOR, tag::ROT_NEXT) => {
                let State::Rot { m, next, chunks, key } = &mut self.state else {
                    return Err(self.unexpected("a ROT chunk request"));
                };
                let index = u64::from_le_bytes(p.try_into().map_err(|_| TeleportError::Malformed("ROT chunk request"))?);
                if index != *next {
                    return Err(TeleportError::Malformed("ROT chunk request (out of order)"));
                }
                let deviation = &mut self.deviation;
                let msg = frames::rot_chunk(index, &m.chunk(index), key, |t, k, v| {
                    if let Some(d) = deviation {
                        d(t, k, v)
                    }
                });
                self.out.push_back((EVALUATOR, msg));
                *next += 1;
                if *next == *chunks {
                    self.job_done();
                }
            }
            _ => return Err(self.unexpected("a message of an unknown type or from the wrong peer")),
        }
        self.advance()
    }

    /// Refuses a job id already used in this session, and a session past its job limit.
    fn fresh(&self, job: &JobHeader) -> Result<(), TeleportError> {
        if self.seen.contains(&job.sid) {
            return Err(TeleportError::ParameterMismatch("job id (already used in this session: a replay)"));
        }
        let limit = self.cfg.max_jobs.min(MAX_SESSION_JOBS as u64);
        if self.seen.len() as u64 >= limit {
            return Err(TeleportError::TooLarge { what: "jobs in one attested session", got: self.seen.len() as u64 + 1, limit });
        }
        Ok(())
    }

    /// Ends the current job with `Done` to the evaluator; the session waits for the next job.
    fn job_done(&mut self) {
        self.out.push_back((EVALUATOR, frames::done()));
        self.garbler = None;
        self.evaluator = None;
        self.state = State::Start;
        self.completed += 1;
    }

    /// Compares the two job headers once both arrived, and starts what can start.
    fn advance(&mut self) -> Result<(), TeleportError> {
        let (Some((g_job, seed)), Some((e_job, job, input, _))) = (&self.garbler, &self.evaluator) else {
            return Ok(());
        };
        if g_job != e_job {
            return Err(TeleportError::ParameterMismatch("job (session, mode, kind, count or circuit)"));
        }
        // Both named this (fresh) job: from now on its id is spent for the session.
        self.seen.insert(job.sid);
        match (&self.state, input) {
            (State::Start, EvalInput::Rot(k2)) => {
                let m = RotMachine::new(job, *seed, *k2)?;
                let chunks = crate::rot::chunks(match job.kind {
                    JobKind::Rot { count } => count,
                    JobKind::Gc { .. } => unreachable!("ROT input"),
                });
                let (_, _, _, key) = self.evaluator.take().expect("both jobs arrived");
                if chunks == 0 {
                    self.job_done();
                } else {
                    self.state = State::Rot { m, next: 0, chunks, key };
                }
            }
            (State::Uploaded { .. }, EvalInput::Gc(x2_0)) => {
                let State::Uploaded { header, digests, cached } = core::mem::replace(&mut self.state, State::Start) else {
                    unreachable!("matched above")
                };
                let g = GcGarbling::new(*seed, job, header)?;
                let labels = g.share0_labels(x2_0)?;
                let sigmas: Vec<[u8; 32]> = match job.mode {
                    Mode::Malicious => crate::gc::sigmas(g.keys(), &job.sid, g.layout()).iter().copied().collect(),
                    Mode::SemiHonest => Vec::new(),
                };
                let (_, _, _, key) = self.evaluator.as_ref().expect("both jobs arrived");
                let deviation = &mut self.deviation;
                let parts = frames::input_labels(&labels, &sigmas, key, |t, k, v| {
                    if let Some(d) = deviation {
                        d(t, k, v)
                    }
                });
                self.out.extend(parts.into_iter().map(|m| (EVALUATOR, m)));
                if digests.is_empty() {
                    let bits = g.header().output_bits().unwrap_or(0) as u32;
                    self.out.push_back((EVALUATOR, frames::decoding(bits, &g.decoding())));
                    self.job_done();
                } else {
                    self.state = State::Garbling { g, digests, next: 0, cached };
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Checks what a GC job declares — the circuit's size and output bits against the limits, its
/// memory against the session's budget — before anything is allocated for it; returns its layout.
fn check_declared(h: &Header, job: &JobHeader, cfg: &Config) -> Result<Layout, TeleportError> {
    if h.wires > cfg.max_wires {
        return Err(TeleportError::TooLarge { what: "circuit wires", got: h.wires as u64, limit: cfg.max_wires as u64 });
    }
    if h.gates > cfg.max_gates {
        return Err(TeleportError::TooLarge { what: "circuit gates", got: h.gates, limit: cfg.max_gates });
    }
    let outputs = h.output_bits().unwrap_or(u64::MAX);
    if outputs > frames::MAX_OUTPUT_BITS {
        return Err(TeleportError::TooLarge { what: "circuit output bits", got: outputs, limit: frames::MAX_OUTPUT_BITS });
    }
    let layout = Layout::new(h, crate::gc::gc_parts(job)?.1)?;
    let memory = gc_job_memory(h, &layout, job.mode);
    if memory > cfg.max_memory {
        return Err(TeleportError::TooLarge { what: "memory the job needs (bytes)", got: memory, limit: cfg.max_memory });
    }
    Ok(layout)
}

fn upload_piece(up: &mut Upload, piece: &[u8], cfg: &Config, job: &JobHeader) -> Result<(), TeleportError> {
    match &up.header {
        None => {
            let (h, len) = Header::parse(piece)?;
            if len != piece.len() {
                return Err(TeleportError::Malformed("circuit header piece (trailing bytes)"));
            }
            check_declared(&h, job, cfg)?;
            up.header = Some(h);
            up.bytes = piece.len();
        }
        Some(h) => {
            if up.short_seen {
                return Err(TeleportError::Malformed("circuit piece (only the last piece may be short)"));
            }
            decode_gates(piece, h.wires, PIECE_GATES, &mut up.scratch)?;
            up.bytes = up.bytes.saturating_add(piece.len());
            if up.bytes > CIRCUIT_CACHE_BYTES {
                up.kept = None;
            }
            if let Some(kept) = &mut up.kept {
                kept.push(piece.to_vec());
            }
            if up.scratch.is_empty() {
                return Err(TeleportError::Malformed("circuit piece (empty)"));
            }
            up.short_seen = up.scratch.len() < PIECE_GATES;
            up.gates += up.scratch.len() as u64;
            if up.gates > h.gates {
                return Err(TeleportError::Malformed("circuit (more gates than its header declares)"));
            }
            webmpc_core::count::add(webmpc_core::count::Op::ShaBlock, webmpc_core::count::sha256_blocks(piece.len()));
            up.digests.push(Sha256::digest(piece).into());
        }
    }
    up.hasher.update(piece);
    Ok(())
}
