//! The sizes both sides know (issue 17, item 9) and what one session may make the enclave do
//! (item 10), each exactly at its limit and just over it: input labels cut into parts of
//! `INPUT_LABELS_PART` bytes, the decoding bits' one message, and the session's limits on wires,
//! gates, ROTs, jobs and memory.

mod common;

use sha2::{Digest, Sha256};
use webmpc_core::Block;
use webmpc_teleport::circuit::Header;
use webmpc_teleport::evidence::Challenge;
use webmpc_teleport::frames::{self, tag, INPUT_LABELS_PART, MAX_OUTGOING_MESSAGE, MAX_OUTPUT_BITS};
use webmpc_teleport::gc::{self, Layout};
use webmpc_teleport::machine::{gc_job_memory, Config, EnclaveMachine, EVALUATOR, GARBLER};
use webmpc_teleport::seal::{seal, Role, Sealer};
use webmpc_teleport::{local, JobHeader, JobKind, Mode, Owner, TeleportError};

fn drain(m: &mut EnclaveMachine) -> Vec<(u8, Vec<u8>)> {
    std::iter::from_fn(|| m.pull()).collect()
}

fn attested(cfg: Config) -> EnclaveMachine {
    let mut m = EnclaveMachine::new([1; 32], cfg);
    m.push(EVALUATOR, &frames::challenge(&Challenge { garbler: [1; 32], evaluator: [2; 32] })).unwrap();
    let (f, ev) = local::attest(&m.evidence_request().unwrap()).unwrap();
    m.attest(f, &ev).unwrap();
    drain(&mut m);
    m
}

/// A gate-less circuit: `wires` wires, inputs of the given widths, outputs of the given widths.
fn header(wires: u32, inputs: &[u32], outputs: &[u32]) -> Vec<u8> {
    let mut v = b"WMPC\x01\0\0\0".to_vec();
    v.extend_from_slice(&wires.to_le_bytes());
    v.extend_from_slice(&0u64.to_le_bytes());
    for widths in [inputs, outputs] {
        v.extend_from_slice(&(widths.len() as u32).to_le_bytes());
        for w in widths {
            v.extend_from_slice(&w.to_le_bytes());
        }
    }
    v
}

fn gc_job_for(bin: &[u8], mode: Mode, sid: u8) -> JobHeader {
    JobHeader {
        sid: [sid; 32],
        mode,
        kind: JobKind::Gc { circuit_hash: Sha256::digest(bin).into(), owners: vec![Owner::Garbler, Owner::Evaluator] },
    }
}

fn garbler_job(m: &EnclaveMachine, job: &JobHeader, seed: Block) -> Vec<u8> {
    let b = job.encode();
    frames::garbler_job(&b, &seal(Role::Garbler, &m.public_key(), &b, &seed.0, [3; 32]).unwrap())
}

fn evaluator_job(m: &EnclaveMachine, job: &JobHeader, input: &[u8]) -> Vec<u8> {
    let b = job.encode();
    frames::evaluator_job(&b, &Sealer::new(Role::Evaluator, &m.public_key(), [4; 32]).unwrap().seal(&b, input).unwrap())
}

fn replies(m: &EnclaveMachine, job: &JobHeader) -> webmpc_teleport::seal::ReplyKey {
    Sealer::new(Role::Evaluator, &m.public_key(), [4; 32]).unwrap().reply_key(&job.encode())
}

#[test]
fn input_labels_travel_in_parts_exactly_at_and_just_over_a_part() {
    // Semi-honest: 16 bytes per evaluator bit, so 65,536 bits fill one part exactly.
    for (mode, n2, parts, last) in [
        (Mode::SemiHonest, 65_536, 1, INPUT_LABELS_PART),
        (Mode::SemiHonest, 65_537, 2, 16),
        (Mode::SemiHonest, 0, 1, 0),
        // Malicious: 16 + 128 per evaluator bit and 64 per garbler bit.
        (Mode::Malicious, 20_000, 3, 144 * 20_000 + 64 - 2 * INPUT_LABELS_PART),
    ] {
        let bin = header(1 + n2, &[1, n2], &[1]);
        let job = gc_job_for(&bin, mode, 7);
        let x2_0: Vec<bool> = (0..n2).map(|i| i % 3 == 1).collect();
        let seed = Block::from_u128(99);
        let mut m = attested(Config::default());
        m.push(GARBLER, &garbler_job(&m, &job, seed)).unwrap();
        m.push(EVALUATOR, &evaluator_job(&m, &job, &frames::gc_input(&x2_0))).unwrap();
        m.push(EVALUATOR, &frames::circuit_piece(&bin)).unwrap();
        m.push(EVALUATOR, &frames::circuit_done()).unwrap();
        let out = drain(&mut m);
        let labels: Vec<&Vec<u8>> = out.iter().filter(|(_, msg)| msg[0] == tag::INPUT_LABELS).map(|(_, msg)| msg).collect();
        assert_eq!(labels.len(), parts, "{mode:?}, {n2} bits");
        assert_eq!(labels.last().unwrap().len(), 1 + 4 + last + 16, "{mode:?}, {n2} bits: the last part");
        assert!(labels.iter().all(|l| l.len() <= MAX_OUTGOING_MESSAGE));
        // The evaluator reassembles exactly what M^GC returns.
        let mut reader = frames::InputLabelsReader::new(1, n2 as usize, mode);
        assert_eq!(reader.parts(), parts as u64);
        for l in &labels {
            reader.push(l, &replies(&m, &job)).unwrap();
        }
        let (share0, sigmas) = reader.finish().unwrap();
        let want = gc::m_gc(seed, &job, &bin, &x2_0).unwrap();
        assert_eq!(share0, want.share0_labels);
        assert_eq!(sigmas, want.sigmas.map(|s| s.iter().copied().collect::<Vec<_>>()).unwrap_or_default());
    }
    // A part out of order, or one too many, is refused.
    let bin = header(1 + 65_537, &[1, 65_537], &[1]);
    let job = gc_job_for(&bin, Mode::SemiHonest, 8);
    let mut m = attested(Config::default());
    m.push(GARBLER, &garbler_job(&m, &job, Block::ZERO)).unwrap();
    m.push(EVALUATOR, &evaluator_job(&m, &job, &frames::gc_input(&[false; 65_537]))).unwrap();
    m.push(EVALUATOR, &frames::circuit_piece(&bin)).unwrap();
    m.push(EVALUATOR, &frames::circuit_done()).unwrap();
    let parts: Vec<Vec<u8>> = drain(&mut m).into_iter().map(|(_, msg)| msg).filter(|msg| msg[0] == tag::INPUT_LABELS).collect();
    let key = replies(&m, &job);
    let mut reader = frames::InputLabelsReader::new(1, 65_537, Mode::SemiHonest);
    assert!(reader.push(&parts[1], &key).is_err(), "part 1 before part 0");
    let mut reader = frames::InputLabelsReader::new(1, 65_537, Mode::SemiHonest);
    reader.push(&parts[0], &key).unwrap();
    reader.push(&parts[1], &key).unwrap();
    assert!(reader.push(&parts[1], &key).is_err(), "a part beyond the count");
}

#[test]
fn output_bits_past_one_decoding_message_are_refused_by_both_sides_before_garbling() {
    let cfg = Config { max_memory: u64::MAX, ..Config::default() };
    let at = MAX_OUTPUT_BITS as u32;
    // At the limit the header passes; one bit more is TOO_LARGE, before any allocation.
    for (outputs, ok) in [(at, true), (at + 1, false)] {
        let bin = header(outputs, &[1, 1], &[outputs]);
        let job = gc_job_for(&bin, Mode::SemiHonest, 9);
        let mut m = attested(Config { max_wires: outputs, ..cfg });
        m.push(EVALUATOR, &evaluator_job(&m, &job, &frames::gc_input(&[true]))).unwrap();
        let r = m.push(EVALUATOR, &frames::circuit_piece(&bin));
        match ok {
            true => r.unwrap(),
            false => assert_eq!(
                r.unwrap_err(),
                TeleportError::TooLarge { what: "circuit output bits", got: outputs as u64, limit: MAX_OUTPUT_BITS }
            ),
        }
    }
    // The parties refuse such a circuit themselves before sending anything for the job.
    let bin = header(at + 1, &[1, 1], &[at + 1]);
    let job = gc_job_for(&bin, Mode::SemiHonest, 10);
    let err = local::run_gc(&job, &bin, &[true], &[false]).unwrap_err();
    assert_eq!(err, TeleportError::TooLarge { what: "circuit output bits", got: at as u64 + 1, limit: MAX_OUTPUT_BITS });
    // Every message kind fits the outgoing limit by construction (also asserted at compile time).
    assert!(1 + 4 + (MAX_OUTPUT_BITS as usize).div_ceil(8) <= MAX_OUTGOING_MESSAGE);
}

#[test]
fn each_job_is_bounded_by_the_sessions_limits_exactly() {
    let c = common::circuit("adder64.txt");
    let bin = c.to_binary();
    let (h, len) = Header::parse(&bin).unwrap();
    let job = common::gc_job(c, &[Owner::Garbler, Owner::Evaluator], Mode::Malicious, [5; 32]);
    let layout = Layout::new(&h, &[Owner::Garbler, Owner::Evaluator]).unwrap();
    let memory = gc_job_memory(&h, &layout, Mode::Malicious);
    let try_header = |cfg: Config| {
        let mut m = attested(cfg);
        m.push(EVALUATOR, &evaluator_job(&m, &job, &frames::gc_input(&[true; 64]))).unwrap();
        m.push(EVALUATOR, &frames::circuit_piece(&bin[..len]))
    };
    // Memory: what the job declares, at the budget and one byte under.
    try_header(Config { max_memory: memory, ..Config::default() }).unwrap();
    let e = try_header(Config { max_memory: memory - 1, ..Config::default() }).unwrap_err();
    assert_eq!(e, TeleportError::TooLarge { what: "memory the job needs (bytes)", got: memory, limit: memory - 1 });
    // Gates and wires of the circuit.
    try_header(Config { max_gates: h.gates, max_wires: h.wires, ..Config::default() }).unwrap();
    assert_eq!(try_header(Config { max_gates: h.gates - 1, ..Config::default() }).unwrap_err().code(), "TOO_LARGE");
    assert_eq!(try_header(Config { max_wires: h.wires - 1, ..Config::default() }).unwrap_err().code(), "TOO_LARGE");

    // ROTs per job, refused at the evaluator's job message.
    let rot = |count: u64, sid: u8| JobHeader { sid: [sid; 32], mode: Mode::SemiHonest, kind: JobKind::Rot { count } };
    let cfg = Config { max_rots: 1000, max_jobs: 2, ..Config::default() };
    let mut m = attested(cfg);
    assert_eq!(
        m.push(EVALUATOR, &evaluator_job(&m, &rot(1001, 1), &frames::rot_input(Block::ZERO))).unwrap_err(),
        TeleportError::TooLarge { what: "ROTs in one job", got: 1001, limit: 1000 }
    );
    // Jobs per session: two at most here; each ROT job of exactly the limit completes.
    let mut m = attested(cfg);
    for sid in [1, 2] {
        let j = rot(1000, sid);
        m.push(EVALUATOR, &evaluator_job(&m, &j, &frames::rot_input(Block::ZERO))).unwrap();
        m.push(GARBLER, &garbler_job(&m, &j, Block::ZERO)).unwrap();
        m.push(EVALUATOR, &frames::rot_next(0)).unwrap();
        assert!(m.is_finished());
        drain(&mut m);
    }
    let e = m.push(EVALUATOR, &evaluator_job(&m, &rot(10, 3), &frames::rot_input(Block::ZERO))).unwrap_err();
    assert_eq!(e, TeleportError::TooLarge { what: "jobs in one attested session", got: 3, limit: 2 });
    // The refusal names the limit: it reaches the parties in the Error message's detail.
    let detail = drain(&mut m).into_iter().find(|(_, msg)| msg[0] == tag::ERROR).unwrap().1;
    match frames::parse_error(&detail[1..]) {
        TeleportError::Remote { code, detail } => {
            assert_eq!(code, "TOO_LARGE");
            assert!(detail.contains("jobs in one attested session") && detail.contains('2'), "{detail}");
        }
        other => panic!("{other:?}"),
    }
}
