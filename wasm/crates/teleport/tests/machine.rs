//! The enclave program's own checks and robustness, message by message: both parties must name
//! the same job; the uploaded circuit must have the named hash; pass-2 pieces must match pass 1;
//! a seed sealed for another job does not open; out-of-order, truncated or random messages give
//! typed errors (never a panic) and end the job; a 10^7-gate circuit streams through in bounded
//! memory; the C ABI checks pointers and lengths.

mod common;

use common::*;
use proptest::prelude::*;
use sha2::{Digest, Sha256};
use webmpc_core::Block;
use webmpc_teleport::circuit::{pieces, Header, PIECE_GATES};
use webmpc_teleport::ffi::*;
use webmpc_teleport::frames::{self, tag};
use webmpc_teleport::gc::{self, GcEvaluation};
use webmpc_teleport::evidence::Challenge;
use webmpc_teleport::local;
use webmpc_teleport::machine::{Config, EnclaveMachine, EVALUATOR, GARBLER};
use webmpc_teleport::seal::{seal, Role, Sealer};
use webmpc_teleport::{JobHeader, JobKind, Mode, Owner, TeleportError};

fn garbler_job(m: &EnclaveMachine, job: &JobHeader, seed: Block) -> Vec<u8> {
    let bytes = job.encode();
    frames::garbler_job(&bytes, &seal(Role::Garbler, &m.public_key(), &bytes, &seed.0, [1; 32]).unwrap())
}

/// The evaluator's GC job message: x2⁰ sealed to `m`.
fn evaluator_gc(m: &EnclaveMachine, job: &JobHeader, x2_0: &[bool]) -> Vec<u8> {
    let bytes = job.encode();
    frames::evaluator_job(&bytes, &seal(Role::Evaluator, &m.public_key(), &bytes, &frames::gc_input(x2_0), [2; 32]).unwrap())
}

/// The evaluator's ROT job message: k2 sealed to `m`.
fn evaluator_rot(m: &EnclaveMachine, job: &JobHeader, k2: Block) -> Vec<u8> {
    let bytes = job.encode();
    frames::evaluator_job(&bytes, &seal(Role::Evaluator, &m.public_key(), &bytes, &frames::rot_input(k2), [2; 32]).unwrap())
}

/// The key of the enclave's sealed replies to the evaluator helpers above.
fn evaluator_replies(m: &EnclaveMachine, job: &JobHeader) -> webmpc_teleport::seal::ReplyKey {
    Sealer::new(Role::Evaluator, &m.public_key(), [2; 32]).unwrap().reply_key(&job.encode())
}

const CHALLENGE: Challenge = Challenge { garbler: [1; 32], evaluator: [2; 32] };

/// A machine whose session is attested (challenge answered, evidence drained): ready for jobs.
fn attested(entropy: [u8; 32], cfg: Config) -> EnclaveMachine {
    let mut m = EnclaveMachine::new(entropy, cfg);
    m.push(EVALUATOR, &frames::challenge(&CHALLENGE)).unwrap();
    let (format, ev) = local::attest(&m.evidence_request().unwrap()).unwrap();
    m.attest(format, &ev).unwrap();
    assert_eq!(drain(&mut m).len(), 2, "the evidence, to both parties");
    m
}

fn drain(m: &mut EnclaveMachine) -> Vec<(u8, Vec<u8>)> {
    std::iter::from_fn(|| m.pull()).collect()
}

fn error_code(msgs: &[(u8, Vec<u8>)]) -> Vec<(u8, String)> {
    msgs.iter()
        .filter(|(_, m)| m[0] == tag::ERROR)
        .map(|(to, m)| (*to, frames::parse_error(&m[1..]).to_string()))
        .collect()
}

fn adder_job(sid: [u8; 32]) -> (JobHeader, Vec<u8>) {
    let c = circuit("adder64.txt");
    (gc_job(c, &[Owner::Garbler, Owner::Evaluator], Mode::Malicious, sid), c.to_binary())
}

#[test]
fn parties_naming_different_jobs_are_refused_with_an_error_to_both() {
    let mut m = attested([1; 32], Config::default());
    let (job, _) = adder_job([1; 32]);
    let (other, _) = adder_job([2; 32]);
    m.push(GARBLER, &garbler_job(&m, &job, Block::from_u128(5))).unwrap();
    let e = m.push(EVALUATOR, &evaluator_gc(&m, &other, &[false; 64])).unwrap_err();
    assert_eq!(e.code(), "PARAMETER_MISMATCH");
    let errors = error_code(&drain(&mut m));
    assert_eq!(errors.iter().map(|(to, _)| *to).collect::<Vec<_>>(), [GARBLER, EVALUATOR]);
    assert!(m.is_failed());
    assert!(m.push(EVALUATOR, &frames::circuit_done()).is_err());
    // ROT jobs: the counts must match too.
    let mut m = attested([1; 32], Config::default());
    let a = JobHeader { sid: [1; 32], mode: Mode::SemiHonest, kind: JobKind::Rot { count: 10 } };
    let b = JobHeader { kind: JobKind::Rot { count: 11 }, ..a.clone() };
    m.push(EVALUATOR, &evaluator_rot(&m, &b, Block::ZERO)).unwrap();
    assert_eq!(m.push(GARBLER, &garbler_job(&m, &a, Block::ZERO)).unwrap_err().code(), "PARAMETER_MISMATCH");
}

#[test]
fn a_circuit_other_than_the_named_one_is_refused_before_anything_is_released() {
    let (job, _) = adder_job([1; 32]);
    let other = circuit("sub64.txt").to_binary();
    let mut m = attested([1; 32], Config::default());
    m.push(GARBLER, &garbler_job(&m, &job, Block::from_u128(5))).unwrap();
    m.push(EVALUATOR, &evaluator_gc(&m, &job, &[true; 64])).unwrap();
    for r in pieces(&other).unwrap() {
        m.push(EVALUATOR, &frames::circuit_piece(&other[r])).unwrap();
    }
    let e = m.push(EVALUATOR, &frames::circuit_done()).unwrap_err();
    assert_eq!(e, TeleportError::ParameterMismatch("circuit (content hash)"));
    assert!(drain(&mut m).iter().all(|(_, msg)| msg[0] == tag::ERROR));
}

#[test]
fn a_second_pass_piece_that_differs_from_the_upload_is_refused() {
    let (job, bin) = adder_job([1; 32]);
    let mut m = attested([1; 32], Config::default());
    m.push(EVALUATOR, &evaluator_gc(&m, &job, &[true; 64])).unwrap();
    let ranges = pieces(&bin).unwrap();
    for r in &ranges {
        m.push(EVALUATOR, &frames::circuit_piece(&bin[r.clone()])).unwrap();
    }
    m.push(EVALUATOR, &frames::circuit_done()).unwrap();
    assert!(drain(&mut m).is_empty(), "nothing before the garbler's seed");
    m.push(GARBLER, &garbler_job(&m, &job, Block::from_u128(5))).unwrap();
    assert_eq!(drain(&mut m)[0].1[0], tag::INPUT_LABELS);
    let mut piece = bin[ranges[1].clone()].to_vec();
    piece[1] ^= 1;
    let e = m.push(EVALUATOR, &frames::garble_piece(0, &piece)).unwrap_err();
    assert_eq!(e.code(), "PARAMETER_MISMATCH");
}

#[test]
fn a_seed_sealed_for_another_job_or_enclave_does_not_open() {
    let (job, _) = adder_job([1; 32]);
    let (other, _) = adder_job([2; 32]);
    let m = attested([1; 32], Config::default());
    let mut m2 = attested([2; 32], Config::default());
    // Sealed to m's key, replayed to m2.
    assert_eq!(m2.push(GARBLER, &garbler_job(&m, &job, Block::ZERO)).unwrap_err().code(), "SEAL_OPEN_FAILED");
    // Sealed for `other`'s header but presented with `job`'s.
    let mut m3 = attested([1; 32], Config::default());
    let sealed = seal(Role::Garbler, &m3.public_key(), &other.encode(), &[0; 16], [1; 32]).unwrap();
    let e = m3.push(GARBLER, &frames::garbler_job(&job.encode(), &sealed)).unwrap_err();
    assert_eq!(e, TeleportError::SealOpenFailed);
}

#[test]
fn out_of_order_and_misaddressed_messages_are_refused() {
    let (job, bin) = adder_job([1; 32]);
    for (from, msg) in [
        (EVALUATOR, frames::circuit_piece(&bin[..10])),
        (EVALUATOR, frames::garble_piece(0, &[])),
        (EVALUATOR, frames::rot_next(0)),
        (GARBLER, frames::evaluator_job(&job.encode(), &[0; 64])),
        (EVALUATOR, vec![]),
        (EVALUATOR, vec![0x7f]),
    ] {
        let mut m = attested([1; 32], Config::default());
        assert!(m.push(from, &msg).is_err());
        assert!(m.is_failed());
    }
    // Wires beyond the configured limit are refused at the header, before any allocation.
    let mut m = attested([1; 32], Config { max_wires: 100, ..Config::default() });
    m.push(EVALUATOR, &evaluator_gc(&m, &job, &[true; 64])).unwrap();
    let header = &bin[pieces(&bin).unwrap()[0].clone()];
    assert_eq!(m.push(EVALUATOR, &frames::circuit_piece(header)).unwrap_err().code(), "TOO_LARGE");
}

proptest! {
    #[test]
    fn random_messages_never_panic(msgs in proptest::collection::vec((0u8..2, proptest::collection::vec(any::<u8>(), 0..200)), 1..8), first in 0u8..8) {
        let (job, _) = adder_job([1; 32]);
        // Sometimes a fresh session (before its evidence), sometimes an attested one, sometimes
        // one with a valid job started, so every state sees noise.
        let mut m = if first == 1 { EnclaveMachine::new([1; 32], Config::default()) } else { attested([1; 32], Config::default()) };
        if first == 0 {
            m.push(EVALUATOR, &evaluator_gc(&m, &job, &[true; 64])).unwrap();
        }
        for (from, mut msg) in msgs {
            if let Some(t) = msg.first_mut() {
                *t = [tag::GARBLER_JOB, tag::EVALUATOR_JOB, tag::CIRCUIT_PIECE, tag::CIRCUIT_DONE, tag::GARBLE_PIECE, tag::ROT_NEXT, tag::CHALLENGE, 0xee][(*t % 8) as usize];
            }
            let _ = m.push(from, &msg);
            while m.pull().is_some() {}
        }
    }
}

/// A 10^7-gate circuit on 64 wires, generated piece by piece (never held whole): each step is
/// AND then XOR over a sliding window, overwriting wires (the binary form allows it).
struct Big {
    gates: u64,
}

impl Big {
    const WIRES: u32 = 64;
    fn header(&self) -> Vec<u8> {
        let mut v = b"WMPC\x01\0\0\0".to_vec();
        v.extend_from_slice(&Self::WIRES.to_le_bytes());
        v.extend_from_slice(&self.gates.to_le_bytes());
        v.extend_from_slice(&2u32.to_le_bytes());
        v.extend_from_slice(&16u32.to_le_bytes());
        v.extend_from_slice(&16u32.to_le_bytes());
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&32u32.to_le_bytes());
        v
    }
    fn gate(k: u64) -> (u8, u32, u32, u32) {
        let w = |x: u64| (x % Big::WIRES as u64) as u32;
        (if k % 2 == 0 { 1 } else { 0 }, w(k), w(k * 7 + 3), w(k + 32))
    }
    fn piece(&self, j: u64) -> Vec<u8> {
        let start = j * PIECE_GATES as u64;
        let end = (start + PIECE_GATES as u64).min(self.gates);
        let mut v = Vec::with_capacity(13 * (end - start) as usize);
        for k in start..end {
            let (op, a, b, out) = Self::gate(k);
            v.push(op);
            for x in [a, b, out] {
                v.extend_from_slice(&x.to_le_bytes());
            }
        }
        v
    }
    fn pieces(&self) -> u64 {
        self.gates.div_ceil(PIECE_GATES as u64)
    }
    fn plaintext(&self, inputs: u32) -> u32 {
        let mut w = [false; 64];
        for (i, b) in w.iter_mut().enumerate().take(32) {
            *b = (inputs >> i) & 1 == 1;
        }
        for k in 0..self.gates {
            let (op, a, b, out) = Self::gate(k);
            let (x, y) = (w[a as usize], w[b as usize]);
            w[out as usize] = if op == 1 { x & y } else { x ^ y };
        }
        (0..32).fold(0, |acc, i| acc | (w[32 + i] as u32) << i)
    }
}

#[test]
fn ten_million_gates_stream_through_in_bounded_memory() {
    let big = Big { gates: 10_000_000 };
    let mut h = Sha256::new();
    h.update(big.header());
    for j in 0..big.pieces() {
        h.update(big.piece(j));
    }
    let job = JobHeader {
        sid: [4; 32],
        mode: Mode::Malicious,
        kind: JobKind::Gc { circuit_hash: h.finalize().into(), owners: vec![Owner::Garbler, Owner::Evaluator] },
    };
    let (x1, x2) = (0xbeefu32, 0x1234u32);
    let bits = |v: u32| (0..16).map(|i| (v >> i) & 1 == 1).collect::<Vec<bool>>();
    let seed = Block::from_u128(77);
    let mut m = attested([1; 32], Config::default());
    let (x2_0, x2_1) = gc::split_input(&bits(x2), &[0x5a, 0xa5]).unwrap();
    m.push(GARBLER, &garbler_job(&m, &job, seed)).unwrap();
    m.push(EVALUATOR, &evaluator_gc(&m, &job, &x2_0)).unwrap();
    m.push(EVALUATOR, &frames::circuit_piece(&big.header())).unwrap();
    for j in 0..big.pieces() {
        m.push(EVALUATOR, &frames::circuit_piece(&big.piece(j))).unwrap();
    }
    m.push(EVALUATOR, &frames::circuit_done()).unwrap();
    let (to, msg) = m.pull().unwrap();
    assert_eq!((to, msg[0]), (EVALUATOR, tag::INPUT_LABELS));
    let mut parts = frames::InputLabelsReader::new(16, 16, Mode::Malicious);
    parts.push(&msg, &evaluator_replies(&m, &job)).unwrap();
    let (share0, sigmas) = parts.finish().unwrap();
    // The garbler's side, streamed the same way (it garbles too in malicious mode, for τ).
    let mut g = gc::GcGarbling::new(seed, &job, Header::parse(&big.header()).unwrap().0).unwrap();
    let mut tau = gc::TauHasher::new(&job);
    let (tau, _) = {
        let mut t = Vec::new();
        for j in 0..big.pieces() {
            t.clear();
            g.garble_piece(&big.piece(j), &mut t).unwrap();
            tau.tables(&t);
        }
        let s = gc::sigmas(g.keys(), &job.sid, g.layout());
        (tau.finish(&g.decoding(), &s), s)
    };
    // Garbler labels without the circuit in memory: from the seed and the header alone.
    let header = big.header();
    let labels = {
        let mut l = gc::garbler_labels(seed, &JobHeader { mode: Mode::SemiHonest, ..job.clone() }, &tiny_with_header(&big), &bits(x1), &x2_1).unwrap();
        l.tau = Some(tau);
        l
    };
    let mut eval = GcEvaluation::new(&job, Header::parse(&header).unwrap().0, (x2_0, x2_1), labels, share0).unwrap();
    let mut largest = 0;
    for j in 0..big.pieces() {
        let piece = big.piece(j);
        m.push(EVALUATOR, &frames::garble_piece(j, &piece)).unwrap();
        let (_, msg) = m.pull().unwrap();
        largest = largest.max(msg.len());
        let (index, tables) = frames::parse_tables(&msg[1..]).unwrap();
        assert_eq!(index, j);
        eval.evaluate_piece(&piece, tables).unwrap();
    }
    let (_, msg) = m.pull().unwrap();
    let (_, decoding) = frames::parse_decoding(&msg[1..]).unwrap();
    let decoding = decoding.to_vec();
    assert_eq!(m.pull().unwrap().1, frames::done());
    assert!(m.is_finished());
    assert!(largest <= 1 + 8 + 48 * PIECE_GATES, "one message holds at most one piece's tables");
    let out = eval.finish(&decoding, Some(sigmas)).unwrap();
    let y = out[0].iter().enumerate().fold(0u32, |acc, (i, &b)| acc | (b as u32) << i);
    assert_eq!(y, big.plaintext(x1 | x2 << 16));
}

/// The big circuit's header with no gates: what `garbler_labels` needs in semi-honest mode (it
/// reads only the header).
fn tiny_with_header(big: &Big) -> Vec<u8> {
    let mut h = big.header();
    h[12..20].copy_from_slice(&0u64.to_le_bytes());
    h
}

#[test]
fn the_c_abi_checks_pointers_and_lengths() {
    unsafe {
        let mut e: *mut WebmpcEnclave = std::ptr::null_mut();
        let no_limits = std::ptr::null();
        assert_eq!(webmpc_enclave_new(std::ptr::null(), 32, no_limits, &mut e), WEBMPC_ERR_NULL);
        assert_eq!(webmpc_enclave_new([0u8; 31].as_ptr(), 31, no_limits, &mut e), WEBMPC_ERR_LENGTH);
        assert_eq!(webmpc_enclave_new([7u8; 32].as_ptr(), 32, no_limits, &mut e), WEBMPC_OK);
        let mut pk = [0u8; 32];
        assert_eq!(webmpc_enclave_public_key(e, pk.as_mut_ptr(), 31), WEBMPC_ERR_LENGTH);
        assert_eq!(webmpc_enclave_public_key(e, pk.as_mut_ptr(), 32), WEBMPC_OK);
        assert_eq!(pk, attested([7; 32], Config::default()).public_key());
        let (mut to, mut len) = (0u8, 0usize);
        let mut buf = vec![0u8; 4];
        assert_eq!(webmpc_enclave_pull(e, &mut to, buf.as_mut_ptr(), buf.len(), &mut len), WEBMPC_EMPTY);
        assert_eq!(webmpc_enclave_push(e, 2, [1u8].as_ptr(), 1), WEBMPC_ERR_LENGTH);
        assert_eq!(webmpc_enclave_push(e, 1, std::ptr::null(), 5), WEBMPC_ERR_NULL);
        // A bad message is refused, an error queued for both peers.
        assert_eq!(webmpc_enclave_push(e, 1, [0x7fu8].as_ptr(), 1), WEBMPC_ERR_REJECTED);
        assert_eq!(webmpc_enclave_status(e), 2);
        let mut code = [0u8; 64];
        assert_eq!(webmpc_enclave_last_error(e, code.as_mut_ptr(), code.len(), &mut len), WEBMPC_OK);
        assert_eq!(&code[..len], b"UNEXPECTED_MESSAGE");
        assert_eq!(webmpc_enclave_pull(e, &mut to, buf.as_mut_ptr(), buf.len(), &mut len), WEBMPC_ERR_BUFFER_TOO_SMALL);
        let mut buf = vec![0u8; len];
        assert_eq!(webmpc_enclave_pull(e, &mut to, buf.as_mut_ptr(), buf.len(), &mut len), WEBMPC_OK);
        assert_eq!((to, buf[0]), (0, tag::ERROR));
        assert_eq!(webmpc_enclave_status(std::ptr::null()), WEBMPC_ERR_NULL);
        webmpc_enclave_free(e);
        webmpc_enclave_free(std::ptr::null_mut());
    }
}

#[test]
fn one_session_serves_many_jobs_and_refuses_a_replayed_job_id() {
    let mut m = attested([1; 32], Config::default());
    assert!(m.is_idle() && !m.is_finished());
    let mut sealer = Sealer::new(Role::Garbler, &m.public_key(), [2; 32]).unwrap();
    let mut first_garbler_msg = Vec::new();
    for (i, sid) in [[1u8; 32], [2u8; 32], [3u8; 32]].into_iter().enumerate() {
        let job = JobHeader { sid, mode: Mode::Malicious, kind: JobKind::Rot { count: 10 } };
        let (k1, k2) = (Block::from_u128(100 + i as u128), Block::from_u128(200 + i as u128));
        let g = frames::garbler_job(&job.encode(), &sealer.seal(&job.encode(), &k1.0).unwrap());
        if i == 0 {
            first_garbler_msg = g.clone();
        }
        // Either order of the two job messages.
        if i % 2 == 0 {
            m.push(GARBLER, &g).unwrap();
            m.push(EVALUATOR, &evaluator_rot(&m, &job, k2)).unwrap();
        } else {
            m.push(EVALUATOR, &evaluator_rot(&m, &job, k2)).unwrap();
            m.push(GARBLER, &g).unwrap();
        }
        assert!(!m.is_idle());
        m.push(EVALUATOR, &frames::rot_next(0)).unwrap();
        let out = drain(&mut m);
        assert_eq!(out.len(), 2);
        let (_, chunk) = frames::parse_rot_chunk(&out[0].1, true, &evaluator_replies(&m, &job)).unwrap();
        assert_eq!(chunk, webmpc_teleport::rot::m_rot(&job, k1, k2).unwrap()[0], "job {i} used its own seeds");
        assert_eq!(out[1].1, frames::done());
        assert!(m.is_finished());
        assert_eq!(m.completed_jobs(), i as u64 + 1);
    }
    // The evaluator replays job 0's sealed seed: refused before it opens, the session ends.
    let e = m.push(GARBLER, &first_garbler_msg).unwrap_err();
    assert_eq!(e.code(), "PARAMETER_MISMATCH");
    assert!(e.to_string().contains("replay"), "{e}");
    assert_eq!(error_code(&drain(&mut m)).len(), 2);
    assert!(m.is_failed());

    // A job id reused by the evaluator alone is refused too.
    let mut m = attested([1; 32], Config::default());
    let job = JobHeader { sid: [9; 32], mode: Mode::SemiHonest, kind: JobKind::Rot { count: 0 } };
    m.push(GARBLER, &garbler_job(&m, &job, Block::ZERO)).unwrap();
    m.push(EVALUATOR, &evaluator_rot(&m, &job, Block::ZERO)).unwrap();
    assert_eq!(drain(&mut m), vec![(EVALUATOR, frames::done())]);
    let e = m.push(EVALUATOR, &evaluator_rot(&m, &job, Block::ZERO)).unwrap_err();
    assert_eq!(e.code(), "PARAMETER_MISMATCH");
}

/// Runs one GC job on `m` (the circuit cached or uploaded), returns its tables and decoding bits.
fn gc_job_on(m: &mut EnclaveMachine, job: &JobHeader, bin: &[u8], cached: bool, seed: Block) -> Result<Vec<u8>, TeleportError> {
    let msg = evaluator_gc(m, job, &[true; 64]);
    m.push(EVALUATOR, &msg)?;
    let ranges = pieces(bin).unwrap();
    if cached {
        m.push(EVALUATOR, &frames::circuit_cached())?;
    } else {
        for r in &ranges {
            m.push(EVALUATOR, &frames::circuit_piece(&bin[r.clone()]))?;
        }
        m.push(EVALUATOR, &frames::circuit_done())?;
    }
    m.push(GARBLER, &garbler_job(m, job, seed))?;
    let mut out = Vec::new();
    for (j, r) in ranges[1..].iter().enumerate() {
        m.push(EVALUATOR, &frames::garble_piece(j as u64, if cached { &[] } else { &bin[r.clone()] }))?;
    }
    for (_, msg) in drain(m) {
        if msg[0] == tag::TABLES || msg[0] == tag::DECODING {
            out.extend_from_slice(&msg[1..]);
        }
    }
    Ok(out)
}

#[test]
fn a_session_keeps_its_last_circuit_and_garbles_it_again_without_an_upload() {
    let (job1, bin) = adder_job([1; 32]);
    let (job2, _) = adder_job([2; 32]);
    let mut m = attested([1; 32], Config::default());
    // Nothing is cached before an upload.
    let e = gc_job_on(&mut m, &job1, &bin, true, Block::from_u128(5)).unwrap_err();
    assert_eq!(e.code(), "PARAMETER_MISMATCH");

    let mut m = attested([1; 32], Config::default());
    let uploaded = gc_job_on(&mut m, &job1, &bin, false, Block::from_u128(5)).unwrap();
    // Same seed, cached circuit: the same garbling, bit for bit (the job id differs only in the
    // tweak tag, so compare with an uploaded run of that job in a fresh session instead).
    let cached = gc_job_on(&mut m, &job2, &bin, true, Block::from_u128(6)).unwrap();
    let mut fresh = attested([1; 32], Config::default());
    assert_eq!(cached, gc_job_on(&mut fresh, &job2, &bin, false, Block::from_u128(6)).unwrap());
    assert_ne!(uploaded, cached);
    assert_eq!(m.completed_jobs(), 2);

    // A job naming another circuit cannot use the cache; a cached job's piece must come bare.
    let other = circuit("sub64.txt");
    let job3 = gc_job(other, &[Owner::Garbler, Owner::Evaluator], Mode::Malicious, [3; 32]);
    let mut m2 = attested([1; 32], Config::default());
    gc_job_on(&mut m2, &job1, &bin, false, Block::from_u128(5)).unwrap();
    assert_eq!(gc_job_on(&mut m2, &job3, &other.to_binary(), true, Block::ZERO).unwrap_err().code(), "PARAMETER_MISMATCH");
    let mut m3 = attested([1; 32], Config::default());
    gc_job_on(&mut m3, &job1, &bin, false, Block::from_u128(5)).unwrap();
    m3.push(EVALUATOR, &evaluator_gc(&m3, &job2, &[true; 64])).unwrap();
    m3.push(EVALUATOR, &frames::circuit_cached()).unwrap();
    m3.push(GARBLER, &garbler_job(&m3, &job2, Block::ZERO)).unwrap();
    let r = pieces(&bin).unwrap();
    assert_eq!(m3.push(EVALUATOR, &frames::garble_piece(0, &bin[r[1].clone()])).unwrap_err().code(), "MALFORMED_MESSAGE");
    // CircuitCached after an upload began is out of place.
    let mut m4 = attested([1; 32], Config::default());
    gc_job_on(&mut m4, &job1, &bin, false, Block::from_u128(5)).unwrap();
    m4.push(EVALUATOR, &evaluator_gc(&m4, &job2, &[true; 64])).unwrap();
    m4.push(EVALUATOR, &frames::circuit_piece(&bin[r[0].clone()])).unwrap();
    assert_eq!(m4.push(EVALUATOR, &frames::circuit_cached()).unwrap_err().code(), "UNEXPECTED_MESSAGE");
}
