//! The three parties of a teleport job over a [`Channel`]: the garbler (P1), the evaluator (P2)
//! and the enclave (reached through its host; in the SDK, the enclave-server). Each driver works
//! in bounded steps: circuit pieces and table messages of [`PIECE_GATES`] gates, ROT chunks of
//! [`ROT_CHUNK`] OTs.
//!
//! Message flow of a GC job (malicious mode adds τ and σ's):
//!
//! ```text
//! P1 ⇄ P2      job header (both send, both compare)
//! P2 → P1      x2¹ (packed bits)
//! E  → P1, P2  evidence;  P1 checks it against its policy
//! P1 → E       GarblerJob (job header, sealed seed)
//! P2 → E       EvaluatorJob (job header, x2⁰), circuit pieces, CircuitDone
//! E  → P2      InputLabels (x2⁰ labels [, σ's])
//! P1 → P2      x1 labels, x2¹ labels [, τ]
//! P2 ⇄ E       GarblePiece j / Tables j, for each piece; then Decoding, Done
//! ```
//!
//! A ROT job: header exchange, evidence, GarblerJob (sealed k1), EvaluatorJob (k2), [τ's P1 → P2],
//! then RotNext j / RotChunk j.

use crate::circuit::{pieces, Header};
use crate::evidence::{self, Policy};
use crate::frames::{self, tag};
use crate::gc::{self, GarblerLabels, GcEvaluation, Layout};
use crate::job::{JobHeader, JobKind, Mode};
use crate::machine::{EnclaveMachine, EVALUATOR, GARBLER};
use crate::rot::{self, RotReceiver, RotSender};
use crate::TeleportError;
use webmpc_core::channel::{Channel, PartyId};
use webmpc_core::prg::Prg;
use webmpc_core::Block;

pub use crate::circuit::PIECE_GATES;
pub use crate::rot::ROT_CHUNK;

/// Who is who on the channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peers {
    /// P1: garbler, ROT sender.
    pub garbler: PartyId,
    /// P2: evaluator, ROT receiver.
    pub evaluator: PartyId,
    /// The enclave's host.
    pub enclave: PartyId,
}

impl Default for Peers {
    /// Garbler 0, evaluator 1, enclave 2.
    fn default() -> Self {
        Peers { garbler: 0, evaluator: 1, enclave: 2 }
    }
}

/// Both parties send the job header and abort unless the peer's equals theirs.
async fn agree<C: Channel>(ch: &C, peer: PartyId, job: &[u8]) -> Result<(), TeleportError> {
    ch.send(peer, job.to_vec()).await?;
    let theirs = ch.recv(peer).await?;
    if theirs != job {
        return Err(TeleportError::ParameterMismatch("job (session, mode, kind, count or circuit)"));
    }
    Ok(())
}

/// The next message from the enclave, which must have type `want` (an `Error` becomes
/// [`TeleportError::Remote`]).
async fn from_enclave<C: Channel>(ch: &C, enclave: PartyId, want: u8, what: &'static str) -> Result<Vec<u8>, TeleportError> {
    let msg = ch.recv(enclave).await?;
    let (t, _) = frames::split(&msg)?;
    if t == tag::ERROR {
        return Err(frames::parse_error(&msg[1..]));
    }
    if t != want {
        return Err(TeleportError::UnexpectedMessage { state: what, got: "another enclave message" });
    }
    Ok(msg)
}

/// The circuit's header and layout. The caller guarantees that `circuit` has the job's content
/// hash (compute it once when preparing the circuit, not per run): the enclave refuses any other
/// circuit, and in malicious mode a garbler's τ over another circuit fails P2's check.
fn check_circuit(job: &JobHeader, circuit: &[u8]) -> Result<(Header, Layout), TeleportError> {
    let (_, owners) = gc::gc_parts(job)?;
    let (header, _) = Header::parse(circuit)?;
    let layout = Layout::new(&header, owners)?;
    Ok((header, layout))
}

fn entropy(prg: &mut Prg) -> [u8; 32] {
    let mut e = [0u8; 32];
    prg.fill_bytes(&mut e);
    e
}

/// Receives the enclave's evidence, checks it, and sends the sealed `seed`.
async fn send_sealed_seed<C: Channel>(
    ch: &C,
    peers: &Peers,
    job: &[u8],
    seed: Block,
    policy: &Policy<'_>,
    prg: &mut Prg,
) -> Result<(), TeleportError> {
    let ev = from_enclave(ch, peers.enclave, tag::EVIDENCE, "waiting for the enclave's evidence").await?;
    let pk = evidence::verify(&ev[1..], policy)?;
    let sealed = crate::seal::seal(&pk, job, seed, entropy(prg))?;
    ch.send(peers.enclave, frames::garbler_job(job, &sealed)).await?;
    Ok(())
}

/// The garbler (P1) of a GC job: `circuit` is the binary form whose hash the job names, `x1` the
/// bits of the garbler's input values in order. Randomness (seed, X25519 key) comes from `prg`
/// (seed it from the platform CSPRNG: `Prg::from_entropy`). The garbler learns no output.
pub async fn gc_garbler<C: Channel>(
    ch: &C,
    peers: &Peers,
    job: &JobHeader,
    circuit: &[u8],
    x1: &[bool],
    policy: &Policy<'_>,
    prg: &mut Prg,
) -> Result<(), TeleportError> {
    let (_, layout) = check_circuit(job, circuit)?;
    if x1.len() != layout.garbler.len() {
        return Err(TeleportError::InvalidArgument(format!(
            "{} garbler input bits given; the circuit wants {}",
            x1.len(),
            layout.garbler.len()
        )));
    }
    let job_bytes = job.encode();
    agree(ch, peers.evaluator, &job_bytes).await?;
    let share = ch.recv(peers.evaluator).await?;
    let x2_1 = crate::unpack_bits(&share, layout.evaluator.len(), "x2¹ share")?;
    let seed = prg.next_block();
    send_sealed_seed(ch, peers, &job_bytes, seed, policy, prg).await?;
    let labels = gc::garbler_labels(seed, job, circuit, x1, &x2_1)?;
    ch.send(peers.evaluator, labels.encode()).await?;
    Ok(())
}

/// The evaluator (P2) of a GC job: returns the output values' bits. `prg` supplies the x2⁰ share.
pub async fn gc_evaluator<C: Channel>(
    ch: &C,
    peers: &Peers,
    job: &JobHeader,
    circuit: &[u8],
    x2: &[bool],
    prg: &mut Prg,
) -> Result<Vec<Vec<bool>>, TeleportError> {
    let (header, layout) = check_circuit(job, circuit)?;
    let (n1, n2) = (layout.garbler.len(), layout.evaluator.len());
    if x2.len() != n2 {
        return Err(TeleportError::InvalidArgument(format!("{} evaluator input bits given; the circuit wants {n2}", x2.len())));
    }
    let ranges = pieces(circuit)?;
    let job_bytes = job.encode();
    agree(ch, peers.garbler, &job_bytes).await?;
    let mut coins = vec![0u8; n2.div_ceil(8)];
    prg.fill_bytes(&mut coins);
    let (x2_0, x2_1) = gc::split_input(x2, &coins)?;
    ch.send(peers.garbler, crate::pack_bits(&x2_1)).await?;

    // The evaluator does not rely on the evidence (malicious mode checks the enclave's output).
    from_enclave(ch, peers.enclave, tag::EVIDENCE, "waiting for the enclave's evidence").await?;
    ch.send(peers.enclave, frames::evaluator_gc_job(&job_bytes, &x2_0)).await?;
    for r in &ranges {
        ch.send(peers.enclave, frames::circuit_piece(&circuit[r.clone()])).await?;
    }
    ch.send(peers.enclave, frames::circuit_done()).await?;
    let msg = from_enclave(ch, peers.enclave, tag::INPUT_LABELS, "waiting for the x2⁰ labels").await?;
    let (share0, sigmas) = frames::parse_input_labels(&msg[1..])?;
    let sigmas = match job.mode {
        Mode::Malicious => Some(sigmas),
        Mode::SemiHonest if sigmas.is_empty() => None,
        Mode::SemiHonest => return Err(TeleportError::Malformed("input labels (σ's in semi-honest mode)")),
    };
    let from_garbler = GarblerLabels::decode(&ch.recv(peers.garbler).await?, n1, n2, job.mode)?;
    let mut eval = GcEvaluation::new(job, header, (x2_0, x2_1), from_garbler, share0)?;
    for (j, r) in ranges[1..].iter().enumerate() {
        ch.send(peers.enclave, frames::garble_piece(j as u64, &circuit[r.clone()])).await?;
        let msg = from_enclave(ch, peers.enclave, tag::TABLES, "waiting for garbled tables").await?;
        let (index, tables) = frames::parse_tables(&msg[1..])?;
        if index != j as u64 {
            return Err(TeleportError::Malformed("tables (piece index out of order)"));
        }
        eval.evaluate_piece(&circuit[r.clone()], tables)?;
    }
    let msg = from_enclave(ch, peers.enclave, tag::DECODING, "waiting for the decoding bits").await?;
    let (_, decoding) = frames::parse_decoding(&msg[1..])?;
    let decoding = decoding.to_vec();
    from_enclave(ch, peers.enclave, tag::DONE, "waiting for the end of the job").await?;
    eval.finish(&decoding, sigmas)
}

fn rot_job_count(job: &JobHeader) -> Result<u64, TeleportError> {
    match job.kind {
        JobKind::Rot { count } => Ok(count),
        JobKind::Gc { .. } => Err(TeleportError::InvalidArgument("a ROT job header was expected".into())),
    }
}

/// The ROT sender (P1): agrees on the job, seals `k1` to the enclave and (malicious mode) sends
/// the chunk τ's to the receiver. Returns the sender, from which the output pairs are derived
/// chunk by chunk ([`RotSender::chunk`]).
pub async fn rot_sender<C: Channel>(
    ch: &C,
    peers: &Peers,
    job: &JobHeader,
    policy: &Policy<'_>,
    prg: &mut Prg,
) -> Result<RotSender, TeleportError> {
    rot_job_count(job)?;
    let job_bytes = job.encode();
    agree(ch, peers.evaluator, &job_bytes).await?;
    let k1 = prg.next_block();
    send_sealed_seed(ch, peers, &job_bytes, k1, policy, prg).await?;
    let sender = RotSender::new(job, k1)?;
    if job.mode == Mode::Malicious {
        ch.send(peers.evaluator, sender.taus().concat()).await?;
    }
    Ok(sender)
}

/// The ROT receiver (P2): `sink(first index, choice bits, outputs)` gets each chunk once it is
/// checked (malicious mode: against its τ), so memory stays at one chunk.
pub async fn rot_receiver<C: Channel>(
    ch: &C,
    peers: &Peers,
    job: &JobHeader,
    prg: &mut Prg,
    mut sink: impl FnMut(u64, &[bool], &[Block]),
) -> Result<(), TeleportError> {
    let count = rot_job_count(job)?;
    let job_bytes = job.encode();
    agree(ch, peers.garbler, &job_bytes).await?;
    from_enclave(ch, peers.enclave, tag::EVIDENCE, "waiting for the enclave's evidence").await?;
    let k2 = prg.next_block();
    ch.send(peers.enclave, frames::evaluator_rot_job(&job_bytes, k2)).await?;
    let taus = match job.mode {
        Mode::SemiHonest => None,
        Mode::Malicious => {
            let bytes = ch.recv_exact(peers.garbler, 32 * rot::chunks(count) as usize).await?;
            Some(bytes.chunks_exact(32).map(|c| c.try_into().expect("32 bytes")).collect())
        }
    };
    let receiver = RotReceiver::new(job, k2, taus)?;
    for j in 0..rot::chunks(count) {
        ch.send(peers.enclave, frames::rot_next(j)).await?;
        let msg = from_enclave(ch, peers.enclave, tag::ROT_CHUNK, "waiting for a ROT chunk").await?;
        let (index, chunk) = frames::parse_rot_chunk(&msg[1..], job.mode == Mode::Malicious)?;
        if index != j {
            return Err(TeleportError::Malformed("ROT chunk (index out of order)"));
        }
        let out = receiver.accept(j, &chunk)?;
        sink(rot::chunk_range(count, j).start, &receiver.choices(j), &out);
    }
    from_enclave(ch, peers.enclave, tag::DONE, "waiting for the end of the job").await?;
    Ok(())
}

/// The enclave's host: sends `evidence` (an `Evidence` message) to both parties, then relays the
/// garbler's job message and the evaluator's messages into `machine` and its answers back, until
/// the job is finished. A failed job sends its `Error` message to both parties and returns the
/// error.
pub async fn enclave_party<C: Channel>(
    ch: &C,
    peers: &Peers,
    machine: &mut EnclaveMachine,
    evidence: &[u8],
) -> Result<(), TeleportError> {
    ch.send(peers.garbler, evidence.to_vec()).await?;
    ch.send(peers.evaluator, evidence.to_vec()).await?;
    let mut garbler_heard = false;
    loop {
        while let Some((to, msg)) = machine.pull() {
            let peer = if to == GARBLER { peers.garbler } else { peers.evaluator };
            // A party that already left does not stop the other from hearing the outcome.
            let _ = ch.send(peer, msg).await;
        }
        if machine.is_finished() {
            return Ok(());
        }
        let (from, msg) = if !garbler_heard {
            garbler_heard = true;
            (GARBLER, ch.recv(peers.garbler).await?)
        } else {
            (EVALUATOR, ch.recv(peers.evaluator).await?)
        };
        if let Err(e) = machine.push(from, &msg) {
            while let Some((to, msg)) = machine.pull() {
                let peer = if to == GARBLER { peers.garbler } else { peers.evaluator };
                let _ = ch.send(peer, msg).await;
            }
            return Err(e);
        }
    }
}
