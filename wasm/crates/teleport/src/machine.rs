//! The enclave program: M^ROT and M^GC behind the message protocol of [`crate::frames`], as a
//! state machine with no IO. The simulation backend (`enclave-program`), the C ABI (the Open
//! Enclave build) and the in-process test party all drive this one type: [`push`] a message from
//! a peer, then [`pull`] what the enclave sends back.
//!
//! One machine is one **attested session**: one X25519 key (bound into the evidence the host sends
//! once, at start) and any number of jobs, one after the other, so the parties verify the evidence
//! and agree on a key once rather than per job. For each job it accepts the garbler's and the
//! evaluator's job messages in either order and checks that they carry the **same job header**
//! (session, mode, kind, ROT count or circuit hash and owners); the sealed seed must open under
//! that header. A job id (the header's session id) is accepted **once per session**: a seed
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
//! Any error ends the session: the machine sends an `Error` message to both peers and refuses
//! everything after it.
//!
//! [`push`]: EnclaveMachine::push
//! [`pull`]: EnclaveMachine::pull

use crate::circuit::{decode_gates, Gate, Header, PIECE_GATES};
use crate::frames::{self, tag};
use crate::gc::GcGarbling;
use crate::job::{JobHeader, JobKind, Mode};
use crate::rot::RotMachine;
use crate::seal::{EnclaveKeys, MAX_SESSION_JOBS};
use crate::TeleportError;
use alloc::collections::{BTreeSet, VecDeque};
use alloc::string::ToString;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};
use webmpc_core::Block;

/// The garbler's peer number in [`EnclaveMachine::push`] / [`EnclaveMachine::pull`].
pub const GARBLER: u8 = 0;
/// The evaluator's peer number.
pub const EVALUATOR: u8 = 1;

/// Limits the enclave enforces before allocating.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Most wires of a circuit (16 bytes of label memory each).
    pub max_wires: u32,
    /// Most gates of a circuit.
    pub max_gates: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { max_wires: 1 << 25, max_gates: 1 << 36 }
    }
}

enum EvalInput {
    Rot(Block),
    Gc(Vec<bool>),
}

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
    /// Waiting for the job messages (and, for GC, the upload).
    Start,
    Upload(Upload),
    /// The circuit matches the agreed hash; waiting for the garbler's seed.
    /// `cached`: the pieces come from the session's cache, not from the evaluator.
    Uploaded { header: Header, digests: Vec<[u8; 32]>, cached: bool },
    Garbling { g: GcGarbling, digests: Vec<[u8; 32]>, next: u64, cached: bool },
    Rot { m: RotMachine, next: u64, chunks: u64 },
    Failed,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
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
    evaluator: Option<(Vec<u8>, JobHeader, EvalInput)>,
    state: State,
    out: VecDeque<(u8, Vec<u8>)>,
    /// Session ids of the jobs started in this session (refused if named again).
    seen: BTreeSet<[u8; 32]>,
    completed: u64,
    cache: Option<Cached>,
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
            state: State::Start,
            out: VecDeque::new(),
            seen: BTreeSet::new(),
            completed: 0,
            cache: None,
        }
    }

    /// The enclave's X25519 public key (bound into the evidence).
    pub fn public_key(&self) -> [u8; 32] {
        self.keys.public()
    }

    /// The report data the evidence must carry.
    pub fn report_data(&self) -> [u8; 32] {
        self.keys.report_data()
    }

    /// Whether no job is in progress: the session is fresh, or its last job completed (everything
    /// was handed out once `pull` returns `None`) and the next has not started. A host whose input
    /// ends while idle closes normally; mid-job, the parties are told `PEER_DISCONNECTED`.
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Start) && self.garbler.is_none() && self.evaluator.is_none()
    }

    /// Whether at least one job completed and no other is in progress.
    pub fn is_finished(&self) -> bool {
        self.completed > 0 && self.is_idle()
    }

    /// Number of jobs completed in this session.
    pub fn completed_jobs(&self) -> u64 {
        self.completed
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
            self.state = State::Failed;
            let msg = frames::error(e.code(), &e.to_string());
            self.out.push_back((GARBLER, msg.clone()));
            self.out.push_back((EVALUATOR, msg));
        }
        r
    }

    fn unexpected(&self, got: &'static str) -> TeleportError {
        TeleportError::UnexpectedMessage { state: self.state.name(), got }
    }

    fn handle(&mut self, from: u8, msg: &[u8]) -> Result<(), TeleportError> {
        let (t, p) = frames::split(msg)?;
        match (from, t) {
            (GARBLER, tag::GARBLER_JOB) => {
                if self.garbler.is_some() {
                    return Err(self.unexpected("a second garbler job"));
                }
                let (job, sealed) = frames::parse_garbler_job(p)?;
                self.fresh(&JobHeader::decode(job)?)?;
                let seed = self.keys.open(job, sealed)?;
                self.garbler = Some((job.to_vec(), seed));
            }
            (EVALUATOR, tag::EVALUATOR_JOB) => {
                if self.evaluator.is_some() {
                    return Err(self.unexpected("a second evaluator job"));
                }
                let (job, rest) = frames::parse_evaluator_job(p)?;
                let header = JobHeader::decode(job)?;
                self.fresh(&header)?;
                let input = match header.kind {
                    JobKind::Rot { .. } => {
                        let k2: [u8; 16] = rest.try_into().map_err(|_| TeleportError::Malformed("evaluator job"))?;
                        EvalInput::Rot(Block(k2))
                    }
                    JobKind::Gc { .. } => {
                        let mut r = crate::bytes::Reader::new(rest, "evaluator job");
                        let n = r.u32()? as usize;
                        let bits = crate::bytes::unpack_bits(r.rest(), n, "evaluator job (x2⁰ bits)")?;
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
                self.evaluator = Some((job.to_vec(), header, input));
            }
            (EVALUATOR, tag::CIRCUIT_PIECE) => {
                let State::Upload(up) = &mut self.state else { return Err(self.unexpected("a circuit piece")) };
                upload_piece(up, p, &self.cfg)?;
            }
            (EVALUATOR, tag::CIRCUIT_DONE) => {
                let State::Upload(up) = core::mem::replace(&mut self.state, State::Start) else {
                    return Err(self.unexpected("the end of the circuit"));
                };
                let Some((_, job, EvalInput::Gc(x2_0))) = &self.evaluator else {
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
                let Some((_, job, EvalInput::Gc(x2_0))) = &self.evaluator else {
                    return Err(self.unexpected("a cached-circuit request"));
                };
                let JobKind::Gc { circuit_hash, .. } = &job.kind else { unreachable!("GC upload") };
                let Some(c) = self.cache.as_ref().filter(|c| &c.hash == circuit_hash) else {
                    return Err(TeleportError::ParameterMismatch("circuit (not the one this session keeps)"));
                };
                let layout = crate::gc::Layout::new(&c.header, crate::gc::gc_parts(job)?.1)?;
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
                let State::Rot { m, next, chunks } = &mut self.state else {
                    return Err(self.unexpected("a ROT chunk request"));
                };
                let index = u64::from_le_bytes(p.try_into().map_err(|_| TeleportError::Malformed("ROT chunk request"))?);
                if index != *next {
                    return Err(TeleportError::Malformed("ROT chunk request (out of order)"));
                }
                self.out.push_back((EVALUATOR, frames::rot_chunk(index, &m.chunk(index))));
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
        if self.seen.len() >= MAX_SESSION_JOBS {
            return Err(TeleportError::TooLarge {
                what: "jobs in one attested session",
                got: self.seen.len() as u64 + 1,
                limit: MAX_SESSION_JOBS as u64,
            });
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
        let (Some((g_job, seed)), Some((e_job, job, input))) = (&self.garbler, &self.evaluator) else {
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
                if chunks == 0 {
                    self.job_done();
                } else {
                    self.state = State::Rot { m, next: 0, chunks };
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
                self.out.push_back((EVALUATOR, frames::input_labels(&labels, &sigmas)));
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

fn upload_piece(up: &mut Upload, piece: &[u8], cfg: &Config) -> Result<(), TeleportError> {
    match &up.header {
        None => {
            let (h, len) = Header::parse(piece)?;
            if len != piece.len() {
                return Err(TeleportError::Malformed("circuit header piece (trailing bytes)"));
            }
            if h.wires > cfg.max_wires {
                return Err(TeleportError::TooLarge { what: "circuit wires", got: h.wires as u64, limit: cfg.max_wires as u64 });
            }
            if h.gates > cfg.max_gates {
                return Err(TeleportError::TooLarge { what: "circuit gates", got: h.gates, limit: cfg.max_gates });
            }
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
            up.digests.push(Sha256::digest(piece).into());
        }
    }
    up.hasher.update(piece);
    Ok(())
}
