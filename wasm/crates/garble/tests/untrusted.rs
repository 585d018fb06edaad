//! Untrusted circuits through every entry point: generated headers and gate lists (mostly valid
//! circuits with one mutation each: a huge or inconsistent count, a bad wire, a bad opcode, a cut
//! or extra bytes) go through the binary decoder, the gate reader, the streaming decoder, the
//! Bristol parser, validation, statistics, compaction, plaintext evaluation, `PreparedCircuit`,
//! pure garbling and evaluation, and Yao in both roles (from a prepared circuit, from a stream,
//! and from a source that hands over the unchecked header and gates). Every outcome must be a
//! result or a typed error with a known code: a panic fails the test (natively it is what would
//! be a trap in Wasm), and the decoders must agree with each other.

use futures::executor::block_on;
use futures::join;
use proptest::prelude::*;
use webmpc_circuit::{stream_limits, Circuit, Gate, GateReader, GateStream, MAX_WIRES};
use webmpc_core::channel::memory::pair;
use webmpc_core::Block;
use webmpc_garble::{
    Evaluator, GarbleError, Garbler, GateSource, Outputs, Owner, PieceSource, PreparedCircuit, Reveal, Shape,
    StreamSource, YaoError, YaoEvaluator, YaoGarbler,
};
use webmpc_ot::SessionId;

/// Every code an entry point may answer with.
/// Every code an entry point may answer with (`PEER_DISCONNECTED`: the party that did not find
/// the fault sees the other leave).
const CODES: [&str; 7] = [
    "MALFORMED_CIRCUIT",
    "CIRCUIT_TOO_LARGE",
    "WRONG_INPUT_SIZE",
    "INVALID_ARGUMENT",
    "PARAMETER_MISMATCH",
    "MALFORMED_MESSAGE",
    "PEER_DISCONNECTED",
];

fn typed(what: &str, code: &str) {
    assert!(CODES.contains(&code), "{what}: unexpected code {code}");
}

/// One gate as it will be encoded, possibly invalid (`op` above 4 is an unknown opcode).
#[derive(Debug, Clone, Copy)]
struct RawGate {
    op: u8,
    a: u32,
    b: u32,
    out: u32,
}

/// A circuit description that may be inconsistent in any field.
#[derive(Debug, Clone)]
struct Case {
    wires: u32,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    declared: u64,
    gates: Vec<RawGate>,
    /// Bytes appended after the gates, and bytes cut from the end.
    tail: Vec<u8>,
    cut: usize,
}

/// Counts that break parsers and allocators: zero, small, just around the wire cap, around the
/// issue's 2^27 + 1, and the extremes.
fn big() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..70,
        Just(MAX_WIRES - 1),
        Just(MAX_WIRES),
        Just(MAX_WIRES + 1),
        Just(1 << 26),
        Just((1 << 27) + 1),
        Just(1 << 31),
        Just(u32::MAX),
        any::<u32>(),
    ]
}

/// A valid random circuit: 1–3 input values, gates of every kind reading earlier wires (some
/// overwriting, as the binary form allows), outputs copied to the last wires.
fn valid() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(1u32..6, 1..4),
        proptest::collection::vec((0u8..5, any::<u32>(), any::<u32>(), any::<bool>()), 0..40),
        1u32..5,
    )
        .prop_map(|(inputs, picks, n_out)| {
            let n_in: u32 = inputs.iter().sum();
            let mut wires = n_in;
            let mut gates = Vec::new();
            for (op, x, y, overwrite) in picks {
                let (a, b) = (x % wires, y % wires);
                let out = if overwrite && wires > n_in { n_in + x % (wires - n_in) } else { wires };
                let (a, b) = if op == 3 { (u32::from(x & 1 == 1), b) } else { (a, b) };
                gates.push(RawGate { op, a, b, out });
                if out == wires {
                    wires += 1;
                }
            }
            for k in 0..n_out {
                gates.push(RawGate { op: 4, a: (wires - 1 + k) % wires, b: 0, out: wires + k });
            }
            let declared = gates.len() as u64;
            Case { wires: wires + n_out, inputs, outputs: vec![n_out], declared, gates, tail: Vec::new(), cut: 0 }
        })
}

/// One mutation of a valid case.
fn case() -> impl Strategy<Value = Case> {
    (valid(), 0u8..12, big(), any::<usize>(), any::<u8>()).prop_map(|(mut c, kind, x, i, byte)| {
        let g = c.gates.len();
        match kind {
            0 | 1 => {} // valid as generated
            2 => c.wires = x,
            3 => {
                let k = i % c.inputs.len();
                c.inputs[k] = x;
            }
            4 => c.outputs[0] = x,
            5 => {
                if i % 2 == 0 {
                    c.inputs.push(x)
                } else {
                    c.outputs.push(x)
                }
            }
            6 => c.declared = [c.declared + 1, c.declared.saturating_sub(1), u64::from(x), u64::MAX][i % 4],
            7 if g > 0 => {
                let gate = &mut c.gates[i % g];
                match byte % 3 {
                    0 => gate.a = x,
                    1 => gate.b = x,
                    _ => gate.out = x,
                }
            }
            8 if g > 0 => c.gates[i % g].op = byte,
            9 => c.cut = 1 + i % 20,
            10 => c.tail = vec![byte; 1 + i % 13],
            _ => {
                // Two fields at once: a huge wire count made consistent with huge inputs.
                c.wires = x;
                c.inputs = vec![x.saturating_sub(c.gates.len() as u32)];
            }
        }
        c
    })
}

fn encode(c: &Case) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(b"WMPC\x01\x00\x00\x00");
    b.extend_from_slice(&c.wires.to_le_bytes());
    b.extend_from_slice(&c.declared.to_le_bytes());
    for widths in [&c.inputs, &c.outputs] {
        b.extend_from_slice(&(widths.len() as u32).to_le_bytes());
        for w in widths {
            b.extend_from_slice(&w.to_le_bytes());
        }
    }
    for g in &c.gates {
        b.push(g.op);
        match g.op {
            3 => {
                b.push(g.a as u8);
                b.extend_from_slice(&g.out.to_le_bytes());
            }
            2 | 4 => {
                b.extend_from_slice(&g.a.to_le_bytes());
                b.extend_from_slice(&g.out.to_le_bytes());
            }
            _ => {
                for w in [g.a, g.b, g.out] {
                    b.extend_from_slice(&w.to_le_bytes());
                }
            }
        }
    }
    b.extend_from_slice(&c.tail);
    b.truncate(b.len().saturating_sub(c.cut));
    b
}

fn bristol(c: &Case) -> String {
    let mut s = format!("{} {}\n{}", c.declared, c.wires, c.inputs.len());
    for w in &c.inputs {
        s += &format!(" {w}");
    }
    s += &format!("\n{}", c.outputs.len());
    for w in &c.outputs {
        s += &format!(" {w}");
    }
    s += "\n\n";
    for g in &c.gates {
        s += &match g.op {
            0 => format!("2 1 {} {} {} XOR\n", g.a, g.b, g.out),
            1 => format!("2 1 {} {} {} AND\n", g.a, g.b, g.out),
            2 => format!("1 1 {} {} INV\n", g.a, g.out),
            3 => format!("1 1 {} {} EQ\n", g.a, g.out),
            4 => format!("1 1 {} {} EQW\n", g.a, g.out),
            5 => format!("2 1 {} {} {} MAND\n", g.a, g.b, g.out),
            _ => format!("2 1 {} {} {} NAND\n", g.a, g.b, g.out),
        };
    }
    s
}

/// The gates of the raw case as the garbler would see them if nobody checked them (unknown
/// opcodes become constants).
fn raw_gates(c: &Case) -> Vec<Gate> {
    c.gates
        .iter()
        .map(|g| match g.op {
            0 => Gate::Xor { a: g.a, b: g.b, out: g.out },
            1 => Gate::And { a: g.a, b: g.b, out: g.out },
            2 => Gate::Inv { a: g.a, out: g.out },
            4 => Gate::Copy { a: g.a, out: g.out },
            _ => Gate::Const { value: g.a & 1 == 1, out: g.out },
        })
        .collect()
}

/// A source over a fixed shape and gate list, checked by nothing but the protocol itself.
struct Unchecked {
    shape: Shape,
    gates: Vec<Gate>,
    pos: usize,
}

impl GateSource for Unchecked {
    fn shape(&self) -> &Shape {
        &self.shape
    }
    async fn next_chunk(&mut self, max: usize, out: &mut Vec<Gate>) -> Result<(), YaoError> {
        let end = (self.pos + max.max(1)).min(self.gates.len());
        out.clear();
        out.extend_from_slice(&self.gates[self.pos..end]);
        self.pos = end;
        Ok(())
    }
}

/// The pieces of an encoding after its prefix, `piece` bytes at a time.
struct Pieces {
    rest: Vec<u8>,
    piece: usize,
}

impl PieceSource for Pieces {
    async fn next_piece(&mut self) -> Result<Option<Vec<u8>>, YaoError> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.rest.drain(..self.piece.max(1).min(self.rest.len())).collect()))
    }
}

/// A streamed source over `bytes`: the first `split` bytes as the prefix, the rest in pieces.
fn streamed(bytes: &[u8], split: usize, piece: usize, hash: [u8; 32]) -> Result<StreamSource<Pieces>, YaoError> {
    let split = split.min(bytes.len());
    StreamSource::new(&bytes[..split], hash, Pieces { rest: bytes[split..].to_vec(), piece })
}

/// Both roles of one Yao run over `sources` (garbler's, evaluator's) with the inputs each owns.
fn yao<S: GateSource, T: GateSource>(
    sources: (&mut S, &mut T),
    owners: &[Owner],
    reveal: &[Reveal],
    inputs: (&[Vec<bool>], &[Vec<bool>]),
) -> (Result<Outputs, YaoError>, Result<Outputs, YaoError>) {
    let (a, b) = pair();
    let sid = SessionId::random().unwrap();
    block_on(async {
        join!(
            async move {
                let mut g = YaoGarbler::setup(a, 1, &sid).await?;
                g.run(sources.0, owners, reveal, inputs.0, |_| {}).await
            },
            async move {
                let mut e = YaoEvaluator::setup(b, 0, &sid).await?;
                e.run(sources.1, owners, reveal, inputs.1, |_| {}).await
            }
        )
    })
}

fn bits(n: u32, seed: u64) -> Vec<bool> {
    (0..u64::from(n)).map(|i| (i.wrapping_mul(0x9e37_79b9) ^ seed).count_ones() % 2 == 1).collect()
}

/// What a valid circuit must survive, with its known plaintext answer as the reference.
fn valid_circuit(c: &Circuit, bytes: &[u8], seed: u64, split: usize, piece: usize) {
    let s = c.stats();
    assert_eq!((s.wires, s.gates), (c.wires, c.gates.len() as u64));
    let input_bits = c.input_bits().unwrap();
    assert!(c.wires <= MAX_WIRES);
    let small = c.wires <= 4096 && input_bits <= 512;
    let inputs: Vec<Vec<bool>> = c.inputs.iter().enumerate().map(|(i, &w)| bits(w, seed + i as u64)).collect();
    let want = c.evaluate(&inputs).unwrap();
    let compacted = c.compact();
    compacted.validate().unwrap();
    assert_eq!(compacted.evaluate(&inputs).unwrap(), want);
    match Circuit::parse_bristol(&c.to_bristol()) {
        Ok(back) => assert_eq!(&back, c),
        Err(e) => typed("Bristol round trip of a binary-only circuit", e.code()),
    }
    let prepared = PreparedCircuit::new(c.clone()).unwrap();
    assert_eq!(prepared.hash(), &c.content_hash());
    if !small {
        return;
    }
    // Pure garbling in odd-sized chunks against the plaintext answer.
    let delta = Block::from_u128(u128::from(seed) << 1 | 1 | 1 << 100);
    let mut g = Garbler::new(delta, c.wires, seed).unwrap();
    let mut e = Evaluator::new(c.wires, seed).unwrap();
    for (w, &bit) in inputs.iter().flatten().enumerate() {
        let zero = Block::from_u128((w as u128 + 1) * 0x9e37_79b9_7f4a_7c15 + u128::from(seed));
        g.set_label(w as u32, zero);
        e.set_label(w as u32, if bit { zero ^ delta } else { zero });
    }
    let mut base = 0;
    for chunk in c.gates.chunks(1 + piece % 9) {
        let mut t = Vec::new();
        g.garble_chunk(chunk, base, &mut t).unwrap();
        e.evaluate_chunk(chunk, base, &t).unwrap();
        base += chunk.len() as u64;
    }
    for (i, out) in want.iter().enumerate() {
        let got: Vec<bool> = c.output_wires(i).map(|w| e.label(w).lsb() ^ g.label(w).lsb()).collect();
        assert_eq!(&got, out, "garbled output {i}");
    }
    // Yao, input owners and output assignment drawn from the seed.
    let owners: Vec<Owner> =
        (0..c.inputs.len()).map(|i| if (seed >> i) & 1 == 0 { Owner::Garbler } else { Owner::Evaluator }).collect();
    let reveal: Vec<Reveal> = (0..c.outputs.len())
        .map(|i| [Reveal::Garbler, Reveal::Evaluator, Reveal::Both][(seed as usize + i) % 3])
        .collect();
    let of = |who: Owner| -> Vec<Vec<bool>> {
        inputs.iter().zip(&owners).filter(|(_, o)| **o == who).map(|(v, _)| v.clone()).collect()
    };
    let (gi, ei) = (of(Owner::Garbler), of(Owner::Evaluator));
    let check = |(g, e): (Result<Outputs, YaoError>, Result<Outputs, YaoError>)| {
        let (g, e) = match (g, e) {
            (Ok(g), Ok(e)) => (g, e),
            other => panic!("Yao on a valid circuit: {other:?}"),
        };
        for (i, r) in reveal.iter().enumerate() {
            let to_g = matches!(r, Reveal::Garbler | Reveal::Both);
            let to_e = matches!(r, Reveal::Evaluator | Reveal::Both);
            assert_eq!(g[i].as_ref(), to_g.then_some(&want[i]));
            assert_eq!(e[i].as_ref(), to_e.then_some(&want[i]));
        }
    };
    let (mut s1, mut s2) = (prepared.source(), prepared.source());
    check(yao((&mut s1, &mut s2), &owners, &reveal, (&gi, &ei)));
    let hash = c.content_hash();
    // The two parties' streams are cut differently: the chunks (and so the tables) must not be.
    let mut s1 = streamed(bytes, bytes.len(), 1 + piece / 2, hash).unwrap();
    let mut s2 =
        streamed(bytes, split, piece, hash).unwrap_or_else(|_| streamed(bytes, bytes.len(), piece, hash).unwrap());
    check(yao((&mut s1, &mut s2), &owners, &reveal, (&gi, &ei)));
}

/// What an invalid encoding must give everywhere: typed errors, and the protocol refusing it
/// even when a source hands it over unchecked.
fn invalid_circuit(case: &Case, bytes: &[u8], split: usize, piece: usize) {
    // The streaming decoder reaches a verdict too (possibly only at `finish`).
    if let Ok(mut s) = GateStream::new(&bytes[..split.min(bytes.len())], &stream_limits()) {
        let mut rest = &bytes[split.min(bytes.len())..];
        let mut out = Vec::new();
        let verdict = loop {
            if let Err(e) = s.next_chunk_into(7, &mut out) {
                break Err(e);
            }
            if out.is_empty() {
                // Everything is pushed before `finish`, so trailing bytes are seen too.
                if rest.is_empty() {
                    break s.finish().map(|_| ());
                }
                let k = piece.max(1).min(rest.len());
                s.push(&rest[..k]);
                rest = &rest[k..];
            }
        };
        typed("GateStream", verdict.unwrap_err().code());
    }
    // A streamed Yao run over it fails on both sides, typed, whichever side sees it first.
    if let (Ok(mut s1), Ok(mut s2)) =
        (streamed(bytes, bytes.len(), piece, [7; 32]), streamed(bytes, split, piece, [7; 32]))
    {
        let shape = s1.shape().clone();
        if shape.wires <= 1 << 16 {
            let owners = vec![Owner::Garbler; shape.inputs.len()];
            let reveal = vec![Reveal::Both; shape.outputs.len()];
            let gi: Vec<Vec<bool>> = shape.inputs.iter().map(|&w| vec![false; w as usize]).collect();
            let (g, e) = yao((&mut s1, &mut s2), &owners, &reveal, (&gi, &[]));
            for r in [g, e] {
                typed("streamed Yao", r.unwrap_err().code());
            }
        }
    }
    // The raw header and gates, handed over by a source that checks nothing.
    let shape = Shape {
        wires: case.wires,
        inputs: case.inputs.clone(),
        outputs: case.outputs.clone(),
        gates: case.gates.len() as u64,
        hash: [1; 32],
    };
    let input_bits = case.inputs.iter().try_fold(0u32, |a, &w| a.checked_add(w));
    if shape.check().is_ok() && case.wires <= 1 << 16 && input_bits.is_some_and(|b| b <= 1 << 12) {
        let owners = vec![Owner::Evaluator; case.inputs.len()];
        let reveal = vec![Reveal::Evaluator; case.outputs.len()];
        let ei: Vec<Vec<bool>> = case.inputs.iter().map(|&w| vec![true; w as usize]).collect();
        let gates = raw_gates(case);
        let mut s1 = Unchecked { shape: shape.clone(), gates: gates.clone(), pos: 0 };
        let mut s2 = Unchecked { shape: shape.clone(), gates, pos: 0 };
        let (g, e) = yao((&mut s1, &mut s2), &owners, &reveal, (&[], &ei));
        // Gates that read undefined wires garble garbage, which is not the protocol's to detect;
        // anything else must be a typed refusal.
        for r in [g, e] {
            if let Err(e) = r {
                typed("unchecked Yao", e.code());
            }
        }
    } else {
        // Garbling state is refused, not allocated, above the cap.
        if case.wires > MAX_WIRES {
            let err = Garbler::new(Block::from_u128(1), case.wires, 0).err().unwrap();
            assert!(matches!(err, GarbleError::TooManyWires { .. }));
            typed("Evaluator::new", Evaluator::new(case.wires, 0).err().unwrap().code());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn generated_circuits_give_results_or_typed_errors_at_every_entry_point(
        case in case(),
        seed in any::<u64>(),
        split in 0usize..120,
        piece in 1usize..40,
    ) {
        let bytes = encode(&case);
        // The whole-buffer decoder and the chunked reader agree.
        let whole = Circuit::from_binary(&bytes);
        let chunked = GateReader::new(&bytes).and_then(|mut r| {
            let mut gates = Vec::new();
            loop {
                let chunk = r.next_chunk(1 + piece % 5)?;
                if chunk.is_empty() {
                    break Ok(gates);
                }
                gates.extend_from_slice(chunk);
            }
        });
        match (&whole, &chunked) {
            (Ok(c), Ok(gates)) => prop_assert_eq!(&c.gates, gates),
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            _ => prop_assert!(false, "decoders disagree: {:?} / {:?}", whole.as_ref().err(), chunked.as_ref().err()),
        }
        // The Bristol parser on the same description.
        match Circuit::parse_bristol(&bristol(&case)) {
            Ok(c) => {
                c.validate().unwrap();
                let _ = c.stats();
            }
            Err(e) => typed("Bristol", e.code()),
        }
        match whole {
            Ok(c) => {
                c.validate().unwrap();
                valid_circuit(&c, &bytes, seed, split, piece);
            }
            Err(e) => {
                typed("decoder", e.code());
                invalid_circuit(&case, &bytes, split, piece);
            }
        }
    }
}

#[test]
fn the_mutations_reach_both_valid_and_refused_circuits() {
    // Guards the generator: a strategy that only produced one kind would test little.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut ok, mut too_large, mut malformed) = (0, 0, 0);
    for _ in 0..400 {
        let c = case().new_tree(&mut runner).unwrap().current();
        match Circuit::from_binary(&encode(&c)) {
            Ok(_) => ok += 1,
            Err(e) if e.code() == "CIRCUIT_TOO_LARGE" => too_large += 1,
            Err(_) => malformed += 1,
        }
    }
    assert!(ok > 60 && too_large > 10 && malformed > 60, "valid {ok}, too large {too_large}, malformed {malformed}");
}
