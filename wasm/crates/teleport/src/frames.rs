//! Messages to and from the enclave program. Each message is a type byte and a payload
//! (little-endian integers); the same bytes travel as one WebSocket binary message, one
//! `Channel` message, or — on the enclave program's stdin/stdout — after a `u32` length and a
//! peer byte (see `enclave-server/README.md`).
//!
//! | type | direction | payload |
//! |---|---|---|
//! | `0x01` GarblerJob | garbler → enclave | u32-prefixed job header, sealed seed (64: [`crate::seal`], role 0) |
//! | `0x02` EvaluatorJob | evaluator → enclave | u32-prefixed job header, sealed input ([`crate::seal`], role 1) of ROT: k2 (16); GC: u32 n, x2⁰ packed (⌈n/8⌉) |
//! | `0x03` CircuitPiece | evaluator → enclave | pass 1: the header piece, then gate pieces |
//! | `0x04` CircuitDone | evaluator → enclave | — |
//! | `0x05` GarblePiece | evaluator → enclave | pass 2: u64 piece index (from 0), the same gate piece |
//! | `0x06` RotNext | evaluator → enclave | u64 chunk index |
//! | `0x07` CircuitCached | evaluator → enclave | — (garble the circuit this session keeps; then `GarblePiece` carries the index alone) |
//! | `0x08` Challenge | evaluator → enclave | the garbler's nonce (32), the evaluator's nonce (32): first message of a session |
//! | `0x81` Evidence | enclave → both | format (1), enclave X25519 key (32), challenge (64), u32-prefixed evidence |
//! | `0x82` InputLabels | enclave → evaluator | u32 part index k, sealed reply (counter k) of part k of: n x2⁰ labels (16 each), then m σ's (32 each; m = 0 semi-honest) |
//! | `0x83` Tables | enclave → evaluator | u64 piece index, tables |
//! | `0x84` Decoding | enclave → evaluator | u32 bits, packed bits |
//! | `0x85` RotChunk | enclave → evaluator | u64 chunk index j, sealed reply (counter j) of: u32 n, n `R` blocks, then n σ blocks if malicious |
//! | `0x86` Done | enclave → evaluator | — |
//! | `0xee` Error | enclave → both | u32-prefixed code (ASCII), u32-prefixed detail (UTF-8, no secrets) |
//!
//! # Sizes both sides know
//!
//! The enclave accepts messages of at most [`MAX_INCOMING_MESSAGE`] bytes and sends at most
//! [`MAX_OUTGOING_MESSAGE`] (the Open Enclave host's buffer; `include/webmpc_teleport.h` states
//! both). Everything it sends is bounded by construction: tables by the piece size, ROT chunks by
//! [`crate::rot::ROT_CHUNK`], and the input labels — 16 bytes per evaluator input bit plus, in
//! malicious mode, 64 per garbler and 128 per evaluator input bit, megabytes for large inputs —
//! travel in parts of [`INPUT_LABELS_PART`] bytes whose number both sides compute from the
//! circuit ([`input_labels_len`]). The decoding bits are one message, so a circuit with more than
//! [`MAX_OUTPUT_BITS`] output bits is refused (`TOO_LARGE`) by the evaluator before anything is
//! sent and by the enclave at the circuit's header, before any garbling.
//!
//! # What the host sees
//!
//! Nothing secret: the parties' inputs to the enclave are sealed, and so are the replies that
//! would reveal the evaluator's input or outputs (x2⁰ labels and σ's, ROT outputs). Tables and
//! decoding bits stay in the clear: they are a function of the garbler's seed and the circuit,
//! and reveal nothing without the input labels.

use crate::bytes::{put_prefixed, Reader};
use crate::evidence::Challenge;
use crate::job::Mode;
use crate::seal::ReplyKey;
use crate::TeleportError;
use alloc::string::String;
use alloc::vec::Vec;
use webmpc_core::Block;
use zeroize::Zeroizing;

/// Longest message the enclave accepts (a stdin frame of 16 MiB holds it and its peer byte).
pub const MAX_INCOMING_MESSAGE: usize = (1 << 24) - 1;
/// Longest message the enclave sends (the Open Enclave host's output buffer).
pub const MAX_OUTGOING_MESSAGE: usize = 4 << 20;
/// Bytes of input labels (and σ's) per `InputLabels` message.
pub const INPUT_LABELS_PART: usize = 1 << 20;
/// Most output bits of a circuit: its decoding bits are one `Decoding` message.
pub const MAX_OUTPUT_BITS: u64 = 8 * (MAX_OUTGOING_MESSAGE as u64 - 5);

// Every message the enclave sends fits its limit.
const _: () = assert!(1 + 4 + INPUT_LABELS_PART + crate::seal::TAG_LEN <= MAX_OUTGOING_MESSAGE);
const _: () = assert!(1 + 8 + crate::grr3::AND_TABLE_BYTES * crate::circuit::PIECE_GATES <= MAX_OUTGOING_MESSAGE);
const _: () = assert!(1 + 8 + 4 + 32 * crate::rot::ROT_CHUNK + crate::seal::TAG_LEN <= MAX_OUTGOING_MESSAGE);

/// Message type bytes.
pub mod tag {
    /// Garbler → enclave: job header and sealed seed.
    pub const GARBLER_JOB: u8 = 0x01;
    /// Evaluator → enclave: job header and its input to the machine.
    pub const EVALUATOR_JOB: u8 = 0x02;
    /// Evaluator → enclave: a circuit piece (upload pass).
    pub const CIRCUIT_PIECE: u8 = 0x03;
    /// Evaluator → enclave: the upload is complete.
    pub const CIRCUIT_DONE: u8 = 0x04;
    /// Evaluator → enclave: a gate piece to garble (second pass).
    pub const GARBLE_PIECE: u8 = 0x05;
    /// Evaluator → enclave: request the next ROT chunk.
    pub const ROT_NEXT: u8 = 0x06;
    /// Evaluator → enclave: use the circuit the session keeps instead of an upload.
    pub const CIRCUIT_CACHED: u8 = 0x07;
    /// Evaluator → enclave: both verifiers' nonces; the enclave answers with its evidence.
    pub const CHALLENGE: u8 = 0x08;
    /// Enclave → parties: evidence.
    pub const EVIDENCE: u8 = 0x81;
    /// Enclave → evaluator: one part of the x2⁰ labels (and σ's), sealed.
    pub const INPUT_LABELS: u8 = 0x82;
    /// Enclave → evaluator: tables of one piece.
    pub const TABLES: u8 = 0x83;
    /// Enclave → evaluator: decoding bits.
    pub const DECODING: u8 = 0x84;
    /// Enclave → evaluator: one ROT chunk, sealed.
    pub const ROT_CHUNK: u8 = 0x85;
    /// Enclave → evaluator: the job is complete.
    pub const DONE: u8 = 0x86;
    /// Enclave → parties: the job failed.
    pub const ERROR: u8 = 0xee;
}

/// Splits a message into its type byte and payload.
pub fn split(msg: &[u8]) -> Result<(u8, &[u8]), TeleportError> {
    match msg.split_first() {
        Some((&t, rest)) => Ok((t, rest)),
        None => Err(TeleportError::Malformed("enclave message (empty)")),
    }
}

fn with_tag(t: u8, cap: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(cap + 1);
    v.push(t);
    v
}

/// `GarblerJob`.
pub fn garbler_job(job: &[u8], sealed: &[u8]) -> Vec<u8> {
    let mut v = with_tag(tag::GARBLER_JOB, 4 + job.len() + sealed.len());
    put_prefixed(&mut v, job);
    v.extend_from_slice(sealed);
    v
}

/// Parses a `GarblerJob` payload: (job header bytes, sealed seed).
pub fn parse_garbler_job(p: &[u8]) -> Result<(&[u8], &[u8]), TeleportError> {
    let mut r = Reader::new(p, "garbler job");
    let job = r.prefixed()?;
    let sealed = r.take(crate::seal::SEALED_LEN)?;
    r.finish()?;
    Ok((job, sealed))
}

/// `EvaluatorJob`: the header and the evaluator's sealed input ([`rot_input`] or [`gc_input`]).
pub fn evaluator_job(job: &[u8], sealed: &[u8]) -> Vec<u8> {
    let mut v = with_tag(tag::EVALUATOR_JOB, 4 + job.len() + sealed.len());
    put_prefixed(&mut v, job);
    v.extend_from_slice(sealed);
    v
}

/// Parses an `EvaluatorJob` payload: (job header bytes, sealed input).
pub fn parse_evaluator_job(p: &[u8]) -> Result<(&[u8], &[u8]), TeleportError> {
    let mut r = Reader::new(p, "evaluator job");
    let job = r.prefixed()?;
    Ok((job, r.rest()))
}

/// The evaluator's input to M^ROT, before sealing: k2.
pub fn rot_input(k2: Block) -> Zeroizing<Vec<u8>> {
    Zeroizing::new(k2.0.to_vec())
}

/// The evaluator's input to M^GC, before sealing: `u32 n ‖ x2⁰ packed`.
pub fn gc_input(x2_0: &[bool]) -> Zeroizing<Vec<u8>> {
    let packed = Zeroizing::new(crate::bytes::pack_bits(x2_0));
    let mut v = Zeroizing::new(Vec::with_capacity(4 + packed.len()));
    v.extend_from_slice(&(x2_0.len() as u32).to_le_bytes());
    v.extend_from_slice(&packed);
    v
}

/// Parses an opened [`rot_input`].
pub fn parse_rot_input(plain: &[u8]) -> Result<Block, TeleportError> {
    Ok(Block(plain.try_into().map_err(|_| TeleportError::Malformed("evaluator job (k2)"))?))
}

/// Parses an opened [`gc_input`].
pub fn parse_gc_input(plain: &[u8]) -> Result<Vec<bool>, TeleportError> {
    let mut r = Reader::new(plain, "evaluator job");
    let n = r.u32()? as usize;
    crate::bytes::unpack_bits(r.rest(), n, "evaluator job (x2⁰ bits)")
}

/// `Challenge`.
pub fn challenge(c: &Challenge) -> Vec<u8> {
    let mut v = with_tag(tag::CHALLENGE, crate::evidence::CHALLENGE_LEN);
    v.extend_from_slice(&c.encode());
    v
}

/// `CircuitPiece`.
pub fn circuit_piece(piece: &[u8]) -> Vec<u8> {
    let mut v = with_tag(tag::CIRCUIT_PIECE, piece.len());
    v.extend_from_slice(piece);
    v
}

/// `CircuitDone`.
pub fn circuit_done() -> Vec<u8> {
    alloc::vec![tag::CIRCUIT_DONE]
}

/// `CircuitCached`.
pub fn circuit_cached() -> Vec<u8> {
    alloc::vec![tag::CIRCUIT_CACHED]
}

/// `GarblePiece` (for a cached circuit, `piece` is empty: the index names it).
pub fn garble_piece(index: u64, piece: &[u8]) -> Vec<u8> {
    let mut v = with_tag(tag::GARBLE_PIECE, 8 + piece.len());
    v.extend_from_slice(&index.to_le_bytes());
    v.extend_from_slice(piece);
    v
}

/// `RotNext`.
pub fn rot_next(index: u64) -> Vec<u8> {
    let mut v = with_tag(tag::ROT_NEXT, 8);
    v.extend_from_slice(&index.to_le_bytes());
    v
}

/// `Evidence`.
pub fn evidence(format: u8, enclave_pk: &[u8; 32], challenge: &Challenge, evidence: &[u8]) -> Vec<u8> {
    let mut v = alloc::vec![tag::EVIDENCE];
    v.extend_from_slice(&crate::evidence::encode_frame(format, enclave_pk, challenge, evidence));
    v
}

/// Bytes of the input labels and σ's of a job with `n1` garbler and `n2` evaluator input bits.
pub fn input_labels_len(n1: usize, n2: usize, mode: Mode) -> u64 {
    let sigmas = match mode {
        Mode::Malicious => crate::gc::Sigmas::count(n1, n2) as u64,
        Mode::SemiHonest => 0,
    };
    16 * n2 as u64 + 32 * sigmas
}

/// Number of `InputLabels` messages for `len` bytes of labels and σ's (at least one).
pub fn input_labels_parts(len: u64) -> u64 {
    len.div_ceil(INPUT_LABELS_PART as u64).max(1)
}

/// The `InputLabels` messages: `labels ‖ σ's`, cut into parts of [`INPUT_LABELS_PART`] bytes,
/// each sealed under `key`; `edit` sees each part's plaintext first (the identity for an honest
/// enclave).
pub fn input_labels(labels: &[Block], sigmas: &[[u8; 32]], key: &ReplyKey, mut edit: impl FnMut(u8, u64, &mut Vec<u8>)) -> Vec<Vec<u8>> {
    let mut flat = Zeroizing::new(Vec::with_capacity(16 * labels.len() + 32 * sigmas.len()));
    flat.extend_from_slice(Block::slice_as_bytes(labels));
    for s in sigmas {
        flat.extend_from_slice(s);
    }
    let parts = input_labels_parts(flat.len() as u64);
    (0..parts)
        .map(|k| {
            let start = (k as usize * INPUT_LABELS_PART).min(flat.len());
            let end = (start + INPUT_LABELS_PART).min(flat.len());
            let mut v = with_tag(tag::INPUT_LABELS, 4 + end - start + crate::seal::TAG_LEN);
            v.extend_from_slice(&(k as u32).to_le_bytes());
            v.extend_from_slice(&flat[start..end]);
            edit(tag::INPUT_LABELS, k, &mut v);
            key.seal(tag::INPUT_LABELS, k, &mut v, 5);
            v
        })
        .collect()
}

/// Collects the `InputLabels` parts of a job with `n1` garbler and `n2` evaluator input bits:
/// feed each message (type byte first) to [`InputLabelsReader::push`] in order.
pub struct InputLabelsReader {
    n2: usize,
    expected: u64,
    next: u64,
    flat: Zeroizing<Vec<u8>>,
}

impl InputLabelsReader {
    /// A reader for the parts of the job's input labels.
    pub fn new(n1: usize, n2: usize, mode: Mode) -> Self {
        let len = input_labels_len(n1, n2, mode);
        InputLabelsReader { n2, expected: len, next: 0, flat: Zeroizing::new(Vec::new()) }
    }

    /// Number of parts the enclave sends.
    pub fn parts(&self) -> u64 {
        input_labels_parts(self.expected)
    }

    /// Opens the next part; refuses one out of order, of the wrong size, or not sealed by the
    /// enclave for this job.
    pub fn push(&mut self, msg: &[u8], key: &ReplyKey) -> Result<(), TeleportError> {
        let what = "input labels";
        if msg.len() < 5 || msg[0] != tag::INPUT_LABELS || u32::from_le_bytes(msg[1..5].try_into().expect("4")) as u64 != self.next {
            return Err(TeleportError::Malformed(what));
        }
        let plain = key.open(tag::INPUT_LABELS, self.next, &msg[..5], &msg[5..], what)?;
        let start = self.next * INPUT_LABELS_PART as u64;
        let want = self.expected.saturating_sub(start).min(INPUT_LABELS_PART as u64);
        if plain.len() as u64 != want || self.next >= self.parts() {
            return Err(TeleportError::Malformed(what));
        }
        self.flat.extend_from_slice(&plain);
        self.next += 1;
        Ok(())
    }

    /// Whether every part arrived.
    pub fn complete(&self) -> bool {
        self.next == self.parts()
    }

    /// The x2⁰ labels and the σ's (empty in semi-honest mode), once complete.
    pub fn finish(self) -> Result<(Vec<Block>, Vec<[u8; 32]>), TeleportError> {
        if !self.complete() {
            return Err(TeleportError::Malformed("input labels (parts missing)"));
        }
        let (labels, sigmas) = self.flat.split_at(16 * self.n2);
        let labels = Block::slice_from_bytes(labels).expect("a multiple of 16").to_vec();
        Ok((labels, sigmas.chunks_exact(32).map(|c| c.try_into().expect("32 bytes")).collect()))
    }
}

/// `Tables` header (the tables follow).
pub fn tables_header(index: u64, len: usize) -> Vec<u8> {
    let mut v = with_tag(tag::TABLES, 8 + len);
    v.extend_from_slice(&index.to_le_bytes());
    v
}

/// Parses a `Tables` payload: (piece index, tables).
pub fn parse_tables(p: &[u8]) -> Result<(u64, &[u8]), TeleportError> {
    let mut r = Reader::new(p, "tables");
    let index = r.u64()?;
    Ok((index, r.rest()))
}

/// `Decoding`.
pub fn decoding(bits: u32, packed: &[u8]) -> Vec<u8> {
    let mut v = with_tag(tag::DECODING, 4 + packed.len());
    v.extend_from_slice(&bits.to_le_bytes());
    v.extend_from_slice(packed);
    v
}

/// Parses a `Decoding` payload: (bit count, packed bits).
pub fn parse_decoding(p: &[u8]) -> Result<(u32, &[u8]), TeleportError> {
    let mut r = Reader::new(p, "decoding bits");
    let n = r.u32()?;
    Ok((n, r.rest()))
}

/// `RotChunk`, sealed under `key` (counter = chunk index); `edit` sees the plaintext first (the
/// identity for an honest enclave).
pub fn rot_chunk(index: u64, chunk: &crate::rot::RotChunk, key: &ReplyKey, edit: impl FnOnce(u8, u64, &mut Vec<u8>)) -> Vec<u8> {
    let n = chunk.chosen.len();
    let mut v = with_tag(tag::ROT_CHUNK, 12 + 32 * n + crate::seal::TAG_LEN);
    v.extend_from_slice(&index.to_le_bytes());
    v.extend_from_slice(&(n as u32).to_le_bytes());
    v.extend_from_slice(Block::slice_as_bytes(&chunk.chosen));
    if let Some(s) = &chunk.other_sigma {
        v.extend_from_slice(Block::slice_as_bytes(s));
    }
    edit(tag::ROT_CHUNK, index, &mut v);
    key.seal(tag::ROT_CHUNK, index, &mut v, 9);
    v
}

/// Parses a `RotChunk` message (type byte first), opening it with `key`: (index, chunk).
pub fn parse_rot_chunk(msg: &[u8], malicious: bool, key: &ReplyKey) -> Result<(u64, crate::rot::RotChunk), TeleportError> {
    let what = "ROT chunk";
    if msg.len() < 9 || msg[0] != tag::ROT_CHUNK {
        return Err(TeleportError::Malformed(what));
    }
    let index = u64::from_le_bytes(msg[1..9].try_into().expect("8 bytes"));
    let plain = key.open(tag::ROT_CHUNK, index, &msg[..9], &msg[9..], what)?;
    let mut r = Reader::new(&plain, what);
    let n = r.u32()? as usize;
    let chosen = r.blocks(n)?;
    let other_sigma = if malicious { Some(r.blocks(n)?) } else { None };
    r.finish()?;
    Ok((index, crate::rot::RotChunk { chosen, other_sigma }))
}

/// `Done`.
pub fn done() -> Vec<u8> {
    alloc::vec![tag::DONE]
}

/// `Error`.
pub fn error(code: &str, detail: &str) -> Vec<u8> {
    let mut v = with_tag(tag::ERROR, 8 + code.len() + detail.len());
    put_prefixed(&mut v, code.as_bytes());
    put_prefixed(&mut v, detail.as_bytes());
    v
}

/// Longest detail of an enclave `Error` that reaches an error message.
const MAX_DETAIL: usize = 240;

/// Parses an `Error` payload into a [`TeleportError::Remote`] carrying the code and the detail.
/// The detail comes from the enclave or its host: only printable characters are kept, at most
/// [`MAX_DETAIL`] of them.
pub fn parse_error(p: &[u8]) -> TeleportError {
    let mut r = Reader::new(p, "enclave error");
    match r.prefixed() {
        Ok(code) if !code.is_empty() && code.len() <= 64 && code.iter().all(|c| c.is_ascii_uppercase() || *c == b'_') => {
            let detail = r.prefixed().unwrap_or_default();
            let detail: String =
                String::from_utf8_lossy(detail).chars().filter(|c| !c.is_control()).take(MAX_DETAIL).collect();
            TeleportError::Remote { code: String::from_utf8_lossy(code).into_owned(), detail }
        }
        _ => TeleportError::Malformed("enclave error"),
    }
}
