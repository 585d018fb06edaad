//! Messages to and from the enclave program. Each message is a type byte and a payload
//! (little-endian integers); the same bytes travel as one WebSocket binary message, one
//! `Channel` message, or — on the enclave program's stdin/stdout — after a `u32` length and a
//! peer byte (see `enclave-server/README.md`).
//!
//! | type | direction | payload |
//! |---|---|---|
//! | `0x01` GarblerJob | garbler → enclave | u32-prefixed job header, sealed seed (64) |
//! | `0x02` EvaluatorJob | evaluator → enclave | u32-prefixed job header; ROT: k2 (16); GC: u32 n, x2⁰ packed (⌈n/8⌉) |
//! | `0x03` CircuitPiece | evaluator → enclave | pass 1: the header piece, then gate pieces |
//! | `0x04` CircuitDone | evaluator → enclave | — |
//! | `0x05` GarblePiece | evaluator → enclave | pass 2: u64 piece index (from 0), the same gate piece |
//! | `0x06` RotNext | evaluator → enclave | u64 chunk index |
//! | `0x07` CircuitCached | evaluator → enclave | — (garble the circuit this session keeps; then `GarblePiece` carries the index alone) |
//! | `0x81` Evidence | enclave → both | format (1), enclave X25519 key (32), u32-prefixed evidence |
//! | `0x82` InputLabels | enclave → evaluator | u32 n, n labels (16 each), u32 m, m σ's (32 each; m = 0 semi-honest) |
//! | `0x83` Tables | enclave → evaluator | u64 piece index, tables |
//! | `0x84` Decoding | enclave → evaluator | u32 bits, packed bits |
//! | `0x85` RotChunk | enclave → evaluator | u64 chunk index, u32 n, n `R` blocks, then n σ blocks if malicious |
//! | `0x86` Done | enclave → evaluator | — |
//! | `0xee` Error | enclave → both | u32-prefixed code (ASCII), u32-prefixed detail (UTF-8, no secrets) |

use crate::bytes::{put_prefixed, Reader};
use crate::TeleportError;
use alloc::string::String;
use alloc::vec::Vec;
use webmpc_core::Block;

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
    /// Enclave → parties: evidence.
    pub const EVIDENCE: u8 = 0x81;
    /// Enclave → evaluator: x2⁰ labels (and σ's).
    pub const INPUT_LABELS: u8 = 0x82;
    /// Enclave → evaluator: tables of one piece.
    pub const TABLES: u8 = 0x83;
    /// Enclave → evaluator: decoding bits.
    pub const DECODING: u8 = 0x84;
    /// Enclave → evaluator: one ROT chunk.
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
pub fn garbler_job(job: &[u8], sealed: &[u8; crate::seal::SEALED_LEN]) -> Vec<u8> {
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

/// `EvaluatorJob` for ROT: the header and k2.
pub fn evaluator_rot_job(job: &[u8], k2: Block) -> Vec<u8> {
    let mut v = with_tag(tag::EVALUATOR_JOB, 4 + job.len() + 16);
    put_prefixed(&mut v, job);
    v.extend_from_slice(&k2.0);
    v
}

/// `EvaluatorJob` for GC: the header and x2⁰.
pub fn evaluator_gc_job(job: &[u8], x2_0: &[bool]) -> Vec<u8> {
    let packed = crate::bytes::pack_bits(x2_0);
    let mut v = with_tag(tag::EVALUATOR_JOB, 8 + job.len() + packed.len());
    put_prefixed(&mut v, job);
    v.extend_from_slice(&(x2_0.len() as u32).to_le_bytes());
    v.extend_from_slice(&packed);
    v
}

/// Parses an `EvaluatorJob` payload: (job header bytes, the rest).
pub fn parse_evaluator_job(p: &[u8]) -> Result<(&[u8], &[u8]), TeleportError> {
    let mut r = Reader::new(p, "evaluator job");
    let job = r.prefixed()?;
    Ok((job, r.rest()))
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
pub fn evidence(format: u8, enclave_pk: &[u8; 32], evidence: &[u8]) -> Vec<u8> {
    let mut v = alloc::vec![tag::EVIDENCE];
    v.extend_from_slice(&crate::evidence::encode_frame(format, enclave_pk, evidence));
    v
}

/// `InputLabels`.
pub fn input_labels(labels: &[Block], sigmas: &[[u8; 32]]) -> Vec<u8> {
    let mut v = with_tag(tag::INPUT_LABELS, 8 + 16 * labels.len() + 32 * sigmas.len());
    v.extend_from_slice(&(labels.len() as u32).to_le_bytes());
    v.extend_from_slice(Block::slice_as_bytes(labels));
    v.extend_from_slice(&(sigmas.len() as u32).to_le_bytes());
    for s in sigmas {
        v.extend_from_slice(s);
    }
    v
}

/// Parses an `InputLabels` payload.
pub fn parse_input_labels(p: &[u8]) -> Result<(Vec<Block>, Vec<[u8; 32]>), TeleportError> {
    let mut r = Reader::new(p, "input labels");
    let n = r.u32()? as usize;
    let labels = r.blocks(n)?;
    let m = r.u32()? as usize;
    let bytes = r.take(m.checked_mul(32).ok_or(TeleportError::Malformed("input labels"))?)?;
    r.finish()?;
    Ok((labels, bytes.chunks_exact(32).map(|c| c.try_into().expect("32 bytes")).collect()))
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

/// `RotChunk`.
pub fn rot_chunk(index: u64, chunk: &crate::rot::RotChunk) -> Vec<u8> {
    let n = chunk.chosen.len();
    let mut v = with_tag(tag::ROT_CHUNK, 12 + 32 * n);
    v.extend_from_slice(&index.to_le_bytes());
    v.extend_from_slice(&(n as u32).to_le_bytes());
    v.extend_from_slice(Block::slice_as_bytes(&chunk.chosen));
    if let Some(s) = &chunk.other_sigma {
        v.extend_from_slice(Block::slice_as_bytes(s));
    }
    v
}

/// Parses a `RotChunk` payload.
pub fn parse_rot_chunk(p: &[u8], malicious: bool) -> Result<(u64, crate::rot::RotChunk), TeleportError> {
    let mut r = Reader::new(p, "ROT chunk");
    let index = r.u64()?;
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

/// Parses an `Error` payload into a [`TeleportError::Remote`] carrying the code.
pub fn parse_error(p: &[u8]) -> TeleportError {
    let mut r = Reader::new(p, "enclave error");
    match r.prefixed() {
        Ok(code) if code.iter().all(|c| c.is_ascii_uppercase() || *c == b'_') => {
            TeleportError::Remote(String::from_utf8_lossy(code).into_owned())
        }
        _ => TeleportError::Malformed("enclave error"),
    }
}
