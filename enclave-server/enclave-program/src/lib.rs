//! The teleport enclave program as a native process: the **simulation backend**.
//!
//! It runs [`webmpc_teleport::machine::EnclaveMachine`] — the same code the Open Enclave build
//! links — with AES-NI, behind a framed protocol on stdin/stdout, and signs its evidence with a
//! *software* Ed25519 key. Nothing protects it from its host: it is for development, tests and
//! deployments where the operator beside the evaluator is trusted not to read the garbler's seed.
//! Clients refuse its evidence unless they opt in (`allowSimulatedEnclave: true`).
//!
//! Framing (both directions): `u32` little-endian length `L`, then `L` bytes: a peer byte
//! (0 = garbler, 1 = evaluator; on output, the destination) and one message of
//! `webmpc_teleport::frames`. The Open Enclave host speaks exactly the same framing, so the Node
//! service can spawn either backend.

use sha2::{Digest, Sha256};
use std::io::{self, Read, Write};
use webmpc_teleport::machine::EnclaveMachine;

/// Longest frame accepted on stdin (a gate piece is at most 13 · 65,536 bytes plus a header).
pub const MAX_FRAME: usize = 1 << 24;

/// Reads one frame; `None` at a clean end of input.
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<(u8, Vec<u8>)>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len > MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("frame length {len} outside 1..={MAX_FRAME}")));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    let peer = buf.remove(0);
    Ok(Some((peer, buf)))
}

/// Writes one frame.
pub fn write_frame(w: &mut impl Write, peer: u8, msg: &[u8]) -> io::Result<()> {
    w.write_all(&((msg.len() + 1) as u32).to_le_bytes())?;
    w.write_all(&[peer])?;
    w.write_all(msg)
}

/// The measurement this program claims: SHA-256 of its own executable.
pub fn measurement() -> io::Result<[u8; 32]> {
    let exe = std::fs::read(std::env::current_exe()?)?;
    Ok(Sha256::digest(&exe).into())
}

/// How a served session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The input ended between jobs (the client closed its session) after this many completed
    /// jobs.
    Closed(u64),
    /// The enclave refused a message (its code); `Error` messages went to both peers and the
    /// session is over.
    Failed(&'static str),
    /// Input ended in the middle of a job (a party left); `Error` messages (`PEER_DISCONNECTED`)
    /// went to both peers.
    Truncated,
}

/// Serves one attested session: sends `evidence` (an `Evidence` message) to both peers, then
/// feeds every input frame to `machine` and writes its answers, job after job, until the input
/// ends or a job fails.
pub fn serve(machine: &mut EnclaveMachine, evidence: &[u8], input: &mut impl Read, output: &mut impl Write) -> io::Result<Outcome> {
    write_frame(output, 0, evidence)?;
    write_frame(output, 1, evidence)?;
    output.flush()?;
    loop {
        let Some((peer, msg)) = read_frame(input)? else {
            if machine.is_idle() {
                return Ok(Outcome::Closed(machine.completed_jobs()));
            }
            let e = webmpc_teleport::frames::error("PEER_DISCONNECTED", "the enclave's input ended before the job did");
            write_frame(output, 0, &e)?;
            write_frame(output, 1, &e)?;
            output.flush()?;
            return Ok(Outcome::Truncated);
        };
        let r = if peer > 1 { Err(None) } else { machine.push(peer, &msg).map_err(|e| Some(e.code())) };
        while let Some((to, out)) = machine.pull() {
            write_frame(output, to, &out)?;
        }
        output.flush()?;
        match r {
            Err(Some(code)) => return Ok(Outcome::Failed(code)),
            Err(None) => return Err(io::Error::new(io::ErrorKind::InvalidData, "frame for an unknown peer")),
            Ok(()) => {}
        }
    }
}
