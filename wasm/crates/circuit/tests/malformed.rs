//! Broken circuits: each is refused with the expected error at the expected place, never a panic.

mod common;

use proptest::prelude::*;
use webmpc_circuit::{Circuit, CircuitError, Gate, GateReader, Limits, Location};

/// What a broken Bristol file must produce: the variant (by name), its line and its code.
/// A broken binary encoding: name, bytes, expected variant, byte offset and code.
type BinaryCase = (&'static str, Vec<u8>, &'static str, Option<u64>, &'static str);

struct Case {
    name: &'static str,
    text: &'static str,
    variant: &'static str,
    line: usize,
    code: &'static str,
}

const fn case(name: &'static str, text: &'static str, variant: &'static str, line: usize, code: &'static str) -> Case {
    Case { name, text, variant, line, code }
}

const M: &str = "MALFORMED_CIRCUIT";
const L: &str = "CIRCUIT_TOO_LARGE";

fn variant(e: &CircuitError) -> &'static str {
    match e {
        CircuitError::Syntax { .. } => "Syntax",
        CircuitError::UnknownGate { .. } => "UnknownGate",
        CircuitError::WireOutOfRange { .. } => "WireOutOfRange",
        CircuitError::UseBeforeDefinition { .. } => "UseBeforeDefinition",
        CircuitError::Redefinition { .. } => "Redefinition",
        CircuitError::BadCounts { .. } => "BadCounts",
        CircuitError::UndefinedOutput { .. } => "UndefinedOutput",
        CircuitError::TooLarge { .. } => "TooLarge",
        CircuitError::Truncated { .. } => "Truncated",
        CircuitError::TrailingData { .. } => "TrailingData",
        CircuitError::UnsupportedVersion { .. } => "UnsupportedVersion",
        CircuitError::WrongInputCount { .. } => "WrongInputCount",
        CircuitError::WrongInputSize { .. } => "WrongInputSize",
    }
}

#[rustfmt::skip]
const BRISTOL_CASES: &[Case] = &[
    case("empty file", "", "BadCounts", 1, M),
    case("only blank lines", "\n\n  \n", "BadCounts", 3, M),
    case("header with three numbers", "1 3 7\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n", "Syntax", 1, M),
    case("header not numbers", "one 3\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n", "Syntax", 1, M),
    case("negative number", "1 3\n2 -1 1\n1 1\n\n2 1 0 1 2 XOR\n", "Syntax", 2, M),
    case("fractional number", "1 3\n2 1 1\n1 1\n\n2 1 0 1.5 2 XOR\n", "Syntax", 5, M),
    case("number above u64", "1 3\n2 1 1\n1 1\n\n2 1 0 99999999999999999999999 2 XOR\n", "Syntax", 5, M),
    case("wire above u32", "1 3\n2 1 1\n1 1\n\n2 1 0 4294967296 2 XOR\n", "Syntax", 5, M),
    case("fewer input widths than declared", "1 3\n3 1 1\n1 1\n\n2 1 0 1 2 XOR\n", "Syntax", 2, M),
    case("more output widths than declared", "1 3\n2 1 1\n1 1 1\n\n2 1 0 1 2 XOR\n", "Syntax", 3, M),
    case("input bits exceed wires", "1 3\n2 2 2\n1 1\n\n2 1 0 1 2 XOR\n", "BadCounts", 2, M),
    case("input widths overflow u32", "1 3\n2 4294967295 4294967295\n1 1\n\n2 1 0 1 2 XOR\n", "BadCounts", 2, M),
    case("output bits exceed wires", "1 3\n2 1 1\n1 4\n\n2 1 0 1 2 XOR\n", "BadCounts", 3, M),
    case("fewer gates than declared", "3 5\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n2 1 0 2 3 AND\n", "BadCounts", 6, M),
    case("more gates than declared", "1 3\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n2 1 0 1 2 XOR\n", "TrailingData", 6, M),
    case("trailing garbage", "1 3\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n\nhello\n", "TrailingData", 7, M),
    case("wire out of range", "1 3\n2 1 1\n1 1\n\n2 1 0 5 2 XOR\n", "WireOutOfRange", 5, M),
    case("output wire out of range", "1 3\n2 1 1\n1 1\n\n2 1 0 1 3 AND\n", "WireOutOfRange", 5, M),
    case("use before definition", "2 4\n2 1 1\n1 1\n\n2 1 0 2 3 XOR\n2 1 0 1 2 AND\n", "UseBeforeDefinition", 5, M),
    case("cycle", "2 4\n2 1 1\n1 1\n\n2 1 0 3 2 AND\n2 1 0 2 3 XOR\n", "UseBeforeDefinition", 5, M),
    case("self loop", "1 3\n2 1 1\n1 1\n\n2 1 0 2 2 AND\n", "UseBeforeDefinition", 5, M),
    case("redefinition", "2 4\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n2 1 0 1 2 AND\n", "Redefinition", 6, M),
    case("overwrite an input", "1 3\n2 1 1\n1 1\n\n2 1 0 1 0 XOR\n", "Redefinition", 5, M),
    case("unknown op", "1 3\n2 1 1\n1 1\n\n2 1 0 1 2 OR\n", "UnknownGate", 5, M),
    case("lower-case op", "1 3\n2 1 1\n1 1\n\n2 1 0 1 2 xor\n", "UnknownGate", 5, M),
    case("truncated gate line", "1 3\n2 1 1\n1 1\n\n2 1 0 1\n", "Syntax", 5, M),
    case("truncated header", "1 3\n2 1", "Syntax", 2, M),
    case("file ends after header", "1 3\n2 1 1\n", "BadCounts", 2, M),
    case("XOR with one input", "1 3\n2 1 1\n1 1\n\n1 1 0 2 XOR\n", "Syntax", 5, M),
    case("INV with two inputs", "1 3\n2 1 1\n1 1\n\n2 1 0 1 2 INV\n", "Syntax", 5, M),
    case("EQ of a non-constant", "1 3\n2 1 1\n1 1\n\n1 1 5 2 EQ\n", "Syntax", 5, M),
    case("MAND with odd inputs", "1 6\n2 2 2\n1 2\n\n3 2 0 1 2 4 5 MAND\n", "Syntax", 5, M),
    case("MAND with no outputs", "1 3\n2 1 1\n1 1\n\n0 0 MAND\n", "Syntax", 5, M),
    case("MAND count mismatch", "1 6\n2 2 2\n1 2\n\n4 2 0 1 2 3 4 MAND\n", "Syntax", 5, M),
    case("MAND reading its own output", "1 5\n2 1 1\n1 2\n\n4 2 0 3 1 1 3 4 MAND\n", "UseBeforeDefinition", 5, M),
    case("undefined output", "1 4\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n", "UndefinedOutput", 3, M),
    case("huge header", "4000000000 4000000000\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n", "TooLarge", 1, L),
    case("huge wire count", "1 4000000000\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n", "TooLarge", 1, L),
    case("huge value count", "1 3\n4000000000 1 1\n1 1\n\n2 1 0 1 2 XOR\n", "TooLarge", 2, L),
    case("wires beyond what the file can define", "1 20000000\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n", "BadCounts", 1, M),
    case("gap in the wire numbering", "1 5\n2 1 1\n1 1\n\n2 1 0 1 4 XOR\n", "BadCounts", 1, M),
];

#[test]
fn broken_bristol_files_give_the_expected_error() {
    for c in BRISTOL_CASES {
        let err = Circuit::parse_bristol(c.text).expect_err(c.name);
        assert_eq!((variant(&err), err.line(), err.code()), (c.variant, Some(c.line), c.code), "{}: {err}", c.name);
        assert!(err.to_string().contains(&format!("line {}", c.line)), "{}: {err}", c.name);
    }
}

#[test]
fn lenient_about_whitespace() {
    let c = Circuit::parse_bristol("\r\n1 3\r\n 2  1 1 \r\n1 1\r\n\r\n\r\n2 1 0 1 2 XOR\r\n\r\n\t\n").unwrap();
    assert_eq!(c.gates, vec![Gate::Xor { a: 0, b: 1, out: 2 }]);
    let c = Circuit::parse_bristol("1 3\n2 1 1\n1 1\n2 1 0 1 2 AND").unwrap();
    assert_eq!(c.gates, vec![Gate::And { a: 0, b: 1, out: 2 }]);
}

#[test]
fn configurable_limits() {
    let text = common::text("adder64.txt");
    let tight = Limits { max_gates: 100, ..Limits::default() };
    let err = Circuit::parse_bristol_with(&text, &tight).unwrap_err();
    assert!(matches!(err, CircuitError::TooLarge { at: Location::Line(1), what: "gate count", limit: 100 }), "{err}");
    let tight = Limits { max_wires: 100, ..Limits::default() };
    assert_eq!(Circuit::parse_bristol_with(&text, &tight).unwrap_err().code(), "CIRCUIT_TOO_LARGE");
    let bytes = Circuit::parse_bristol(&text).unwrap().to_binary();
    let err = Circuit::from_binary_with(&bytes, &tight).unwrap_err();
    assert!(matches!(err, CircuitError::TooLarge { at: Location::Byte(8), .. }), "{err}");
    let tight = Limits { max_values: 1, ..Limits::default() };
    let err = Circuit::from_binary_with(&bytes, &tight).unwrap_err();
    assert!(matches!(err, CircuitError::TooLarge { at: Location::Byte(20), .. }), "{err}");
    // MAND lines count once in the header but once per AND against the limit.
    let mand = "1 7\n3 1 1 1\n1 1\n\n6 3 0 1 2 1 2 0 4 5 6 MAND\n";
    let err = Circuit::parse_bristol_with(mand, &Limits { max_gates: 2, ..Limits::default() }).unwrap_err();
    assert!(matches!(err, CircuitError::TooLarge { at: Location::Line(5), .. }), "{err}");
}

/// A valid encoding to break: inputs 1+1 bits, output 1 bit, gates XOR(0,1→2), AND(0,2→3).
fn small() -> Vec<u8> {
    Circuit::parse_bristol("2 4\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n2 1 0 2 3 AND\n").unwrap().to_binary()
}

/// Where the gates of [`small`] start: 20 fixed header bytes, n_inputs + 2 widths, n_outputs + 1 width.
const GATES_AT: usize = 20 + 4 + 8 + 4 + 4;

fn with(mut b: Vec<u8>, at: usize, bytes: &[u8]) -> Vec<u8> {
    b[at..at + bytes.len()].copy_from_slice(bytes);
    b
}

#[test]
fn binary_layout_offsets() {
    assert_eq!(small().len(), GATES_AT + 13 + 13);
    assert_eq!(small()[GATES_AT], 0, "the first gate is an XOR");
}

#[test]
fn broken_binary_encodings_give_the_expected_error() {
    let ok = small();
    // The second gate, AND(0, 2 -> 3).
    let g2 = GATES_AT + 13;
    let end = ok.len() as u64;
    let cases: Vec<BinaryCase> = vec![
        ("empty", vec![], "Truncated", Some(0), M),
        ("bad magic", with(ok.clone(), 0, b"WMPX"), "Syntax", Some(0), M),
        ("text, not binary", b"1 3\n2 1 1\n".to_vec(), "Syntax", Some(0), M),
        ("magic only", b"WMPC".to_vec(), "Truncated", Some(4), M),
        ("version 2", with(ok.clone(), 4, &[2]), "UnsupportedVersion", Some(4), M),
        ("reserved byte", with(ok.clone(), 6, &[1]), "Syntax", Some(5), M),
        ("huge wire count", with(ok.clone(), 8, &u32::MAX.to_le_bytes()), "TooLarge", Some(8), L),
        ("huge gate count", with(ok.clone(), 12, &u64::MAX.to_le_bytes()), "TooLarge", Some(12), L),
        ("gate count beyond the data", with(ok.clone(), 12, &1000u64.to_le_bytes()), "Truncated", Some(end), M),
        ("huge input count", with(ok.clone(), 20, &u32::MAX.to_le_bytes()), "TooLarge", Some(20), L),
        ("input count beyond the data", with(ok.clone(), 20, &100_000u32.to_le_bytes()), "Truncated", Some(end), M),
        ("input bits exceed wires", with(ok.clone(), 24, &9u32.to_le_bytes()), "BadCounts", Some(20), M),
        ("output bits exceed wires", with(ok.clone(), 36, &9u32.to_le_bytes()), "BadCounts", Some(32), M),
        ("more wires than gates define", with(ok.clone(), 8, &5u32.to_le_bytes()), "BadCounts", Some(8), M),
        ("unknown opcode", with(ok.clone(), g2, &[9]), "UnknownGate", Some(g2 as u64), M),
        (
            "constant 2",
            {
                let mut b = ok[..g2].to_vec();
                b.extend([3, 2, 3, 0, 0, 0]);
                b
            },
            "Syntax",
            Some(g2 as u64 + 1),
            M,
        ),
        ("wire out of range", with(ok.clone(), g2 + 1, &7u32.to_le_bytes()), "WireOutOfRange", Some(g2 as u64), M),
        (
            "use before definition",
            with(ok.clone(), g2 + 1, &3u32.to_le_bytes()),
            "UseBeforeDefinition",
            Some(g2 as u64),
            M,
        ),
        ("output never written", with(ok.clone(), g2 + 9, &2u32.to_le_bytes()), "UndefinedOutput", Some(end), M),
        ("trailing byte", [ok.clone(), vec![0]].concat(), "TrailingData", Some(end), M),
        ("cut inside the last gate", ok[..ok.len() - 1].to_vec(), "Truncated", Some(g2 as u64), M),
    ];
    for (name, bytes, want, offset, code) in cases {
        let err = Circuit::from_binary(&bytes).expect_err(name);
        assert_eq!((variant(&err), err.offset(), err.code()), (want, offset, code), "{name}: {err}");
    }
    // The binary form may overwrite wires (compacted circuits do); Bristol may not.
    let rewrite = with(ok.clone(), g2 + 9, &3u32.to_le_bytes());
    assert!(Circuit::from_binary(&rewrite).is_ok());
}

#[test]
fn every_truncation_of_a_valid_encoding_is_refused() {
    let bytes = common::circuit("neg64.txt").to_binary();
    for len in 0..bytes.len() {
        let err = Circuit::from_binary(&bytes[..len]).expect_err("truncated");
        assert_eq!(err.code(), M);
    }
}

#[test]
fn gate_reader_reports_errors_then_stays_failed() {
    let ok = small();
    let bad = with(ok, GATES_AT + 13 + 1, &3u32.to_le_bytes());
    let mut r = GateReader::new(&bad).unwrap();
    assert_eq!(r.next_chunk(1).unwrap().len(), 1);
    let e1 = r.next_chunk(1).unwrap_err();
    assert!(matches!(e1, CircuitError::UseBeforeDefinition { wire: 3, .. }));
    assert_eq!(r.next_chunk(1).unwrap_err(), e1);
}

#[test]
fn in_memory_circuits_are_validated() {
    let c = Circuit { wires: 3, inputs: vec![1, 1], outputs: vec![1], gates: vec![Gate::And { a: 0, b: 5, out: 2 }] };
    let err = c.validate().unwrap_err();
    assert!(matches!(err, CircuitError::WireOutOfRange { at: Location::Gate(0), wire: 5, wires: 3 }), "{err}");
    assert_eq!(c.evaluate(&[vec![true], vec![true]]).unwrap_err(), err);
    // Everything else stays total on it.
    let _ = (c.stats(), c.to_bristol(), c.to_binary(), c.content_hash(), c.compact(), c.output_wires(0));
    let huge = Circuit { wires: 1, inputs: vec![u32::MAX, 2], outputs: vec![u32::MAX, 9], gates: vec![] };
    assert!(huge.validate().is_err());
    assert_eq!(huge.input_wires(1), 0..0);
    assert_eq!(huge.output_wires(1), 0..0);
    assert_eq!(huge.stats().inputs, u32::MAX);
}

#[test]
fn evaluate_checks_its_inputs() {
    let c = common::circuit("adder64.txt");
    let err = c.evaluate(&[vec![false; 64]]).unwrap_err();
    assert_eq!(err, CircuitError::WrongInputCount { expected: 2, got: 1 });
    assert_eq!(err.code(), "WRONG_INPUT_SIZE");
    let err = c.evaluate(&[vec![false; 64], vec![false; 63]]).unwrap_err();
    assert_eq!(err, CircuitError::WrongInputSize { index: 1, expected: 64, got: 63 });
    assert_eq!(err.code(), "WRONG_INPUT_SIZE");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Circuit::from_binary(&bytes);
        if let Ok(mut r) = GateReader::new(&bytes) {
            while let Ok(chunk) = r.next_chunk(3) {
                if chunk.is_empty() { break; }
            }
        }
    }

    #[test]
    fn random_headers_never_panic(
        wires: u32, gates: u64, n_in in 0u32..4, n_out in 0u32..4,
        widths in proptest::collection::vec(any::<u32>(), 8),
        tail in proptest::collection::vec(any::<u8>(), 0..120),
    ) {
        let mut b = b"WMPC\x01\0\0\0".to_vec();
        b.extend(wires.to_le_bytes());
        b.extend(gates.to_le_bytes());
        b.extend(n_in.to_le_bytes());
        b.extend(widths[..n_in as usize].iter().flat_map(|w| w.to_le_bytes()));
        b.extend(n_out.to_le_bytes());
        b.extend(widths[4..4 + n_out as usize].iter().flat_map(|w| w.to_le_bytes()));
        b.extend(tail);
        if let Ok(c) = Circuit::from_binary(&b) {
            prop_assert_eq!(c.to_binary(), b);
        }
    }

    #[test]
    fn mutated_encodings_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut b = common::circuit("zero_equal.txt").to_binary();
        for (i, x) in flips {
            let i = i.index(b.len());
            b[i] ^= x;
        }
        if let Ok(c) = Circuit::from_binary(&b) {
            // Whatever is accepted is a usable circuit whose encoding is exactly the input.
            prop_assert_eq!(c.to_binary(), b);
            let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| vec![true; w as usize]).collect();
            prop_assert!(c.evaluate(&inputs).is_ok());
        }
    }

    #[test]
    fn random_text_never_panics(text in "[0-9 \\nA-Z]{0,200}") {
        let _ = Circuit::parse_bristol(&text);
    }

    #[test]
    fn random_unicode_never_panics(text in any::<String>()) {
        let _ = Circuit::parse_bristol(&text);
    }

    #[test]
    fn mutated_texts_never_panic(edits in proptest::collection::vec((any::<prop::sample::Index>(), "[0-9 \\nA-Z]{0,3}"), 1..5)) {
        let mut text = common::text("zero_equal.txt");
        for (i, s) in edits {
            let mut at = i.index(text.len() + 1);
            while !text.is_char_boundary(at) { at -= 1; }
            text.insert_str(at, &s);
        }
        if let Ok(c) = Circuit::parse_bristol(&text) {
            prop_assert_eq!(Circuit::parse_bristol(&c.to_bristol()).unwrap(), c.clone());
            let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| vec![false; w as usize]).collect();
            prop_assert!(c.evaluate(&inputs).is_ok());
        }
    }
}
