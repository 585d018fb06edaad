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
//! service can spawn either backend. The session's first input is the verifiers' challenge; the
//! program answers it with evidence signed by its software key (nothing is sent before).

use sha2::{Digest, Sha256};
use std::io::{self, Read, Write};
use webmpc_teleport::frames::{self, MAX_INCOMING_MESSAGE};
use webmpc_teleport::machine::EnclaveMachine;

/// Longest frame on stdin or stdout: a peer byte and the longest message the enclave accepts
/// (`frames::MAX_INCOMING_MESSAGE`; the enclave sends at most `frames::MAX_OUTGOING_MESSAGE`).
pub const MAX_FRAME: usize = MAX_INCOMING_MESSAGE + 1;

/// An input frame longer than [`MAX_FRAME`] (inside the `io::Error` [`read_frame`] returns).
#[derive(Debug)]
pub struct FrameTooLarge(pub u32);

impl std::fmt::Display for FrameTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a frame of {} bytes exceeds the limit of {MAX_FRAME}", self.0)
    }
}

impl std::error::Error for FrameTooLarge {}

/// Reads one frame; `None` at a clean end of input. A length over [`MAX_FRAME`] is an
/// `InvalidData` error carrying [`FrameTooLarge`], refused before anything is allocated.
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<(u8, Vec<u8>)>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let n = u32::from_le_bytes(len);
    if n as usize > MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidData, FrameTooLarge(n)));
    }
    if n == 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "empty frame"));
    }
    let mut buf = vec![0u8; n as usize];
    r.read_exact(&mut buf)?;
    let peer = buf.remove(0);
    Ok(Some((peer, buf)))
}

/// Writes one frame. Refuses (`InvalidData`) a message whose frame would exceed [`MAX_FRAME`],
/// so its `u32` length can never wrap.
pub fn write_frame(w: &mut impl Write, peer: u8, msg: &[u8]) -> io::Result<()> {
    if msg.len() >= MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidData, FrameTooLarge(u32::try_from(msg.len() + 1).unwrap_or(u32::MAX))));
    }
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
    /// The enclave refused a message or its input (its code); `Error` messages went to both
    /// peers and the session is over.
    Failed(&'static str),
    /// Input ended in the middle of a job (a party left); `Error` messages (`PEER_DISCONNECTED`)
    /// went to both peers.
    Truncated,
}

/// Writes an `Error` message to both peers.
fn report(output: &mut impl Write, code: &str, detail: &str) -> io::Result<()> {
    let e = frames::error(code, detail);
    write_frame(output, 0, &e)?;
    write_frame(output, 1, &e)?;
    output.flush()
}

/// Serves one attested session: feeds every input frame to `machine` and writes its answers,
/// job after job, until the input ends or a job fails. The session's challenge makes the machine
/// ask for evidence, which `attest(report data)` gives (format byte, evidence bytes). An input
/// frame over [`MAX_FRAME`] is reported to both peers (`TOO_LARGE`), never waited for.
pub fn serve(
    machine: &mut EnclaveMachine,
    attest: impl Fn(&[u8; 32]) -> (u8, Vec<u8>),
    input: &mut impl Read,
    output: &mut impl Write,
) -> io::Result<Outcome> {
    loop {
        let frame = match read_frame(input) {
            Ok(f) => f,
            Err(e) => match e.get_ref().and_then(|i| i.downcast_ref::<FrameTooLarge>()) {
                Some(too_large) => {
                    report(output, "TOO_LARGE", &too_large.to_string())?;
                    return Ok(Outcome::Failed("TOO_LARGE"));
                }
                None => return Err(e),
            },
        };
        let Some((peer, msg)) = frame else {
            if machine.is_idle() {
                return Ok(Outcome::Closed(machine.completed_jobs()));
            }
            report(output, "PEER_DISCONNECTED", "the enclave's input ended before the job did")?;
            return Ok(Outcome::Truncated);
        };
        let mut r = if peer > 1 { Err(None) } else { machine.push(peer, &msg).map_err(|e| Some(e.code())) };
        if let (Ok(()), Some(rd)) = (&r, machine.evidence_request()) {
            let (format, evidence) = attest(&rd);
            r = machine.attest(format, &evidence).map_err(|e| Some(e.code()));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_lengths_are_checked_at_the_limit_and_never_wrap() {
        let mut out = Vec::new();
        write_frame(&mut out, 1, &vec![0u8; MAX_FRAME - 1]).unwrap();
        assert_eq!(u32::from_le_bytes(out[..4].try_into().unwrap()) as usize, MAX_FRAME);
        let (peer, msg) = read_frame(&mut &out[..]).unwrap().unwrap();
        assert_eq!((peer, msg.len()), (1, MAX_FRAME - 1));
        let e = write_frame(&mut Vec::new(), 1, &vec![0u8; MAX_FRAME]).unwrap_err();
        assert!(e.get_ref().unwrap().downcast_ref::<FrameTooLarge>().is_some());
        // A length just over the limit, and one that a wrapped u32 would have produced.
        for n in [MAX_FRAME as u32 + 1, u32::MAX] {
            let mut input = n.to_le_bytes().to_vec();
            input.push(1);
            let e = read_frame(&mut &input[..]).unwrap_err();
            assert_eq!(e.get_ref().unwrap().downcast_ref::<FrameTooLarge>().unwrap().0, n);
        }
    }
}
