//! The reference circuits parse, have the documented sizes, and compute the documented answers.

mod common;

use common::{bits_u64, circuit, hex, u64_bits, unhex, FILES};
use proptest::prelude::*;
use webmpc_circuit::{bits_from_bytes_be, bytes_be_from_bits, Circuit};

/// Runs a circuit on big-endian byte-string inputs and returns the outputs the same way.
fn run_bytes(c: &Circuit, inputs: &[&[u8]]) -> Vec<Vec<u8>> {
    let bits: Vec<Vec<bool>> = inputs.iter().zip(&c.inputs).map(|(b, &w)| bits_from_bytes_be(b, w)).collect();
    c.evaluate(&bits).unwrap().iter().map(|o| bytes_be_from_bits(o)).collect()
}

fn aes(c: &Circuit, key: &str, pt: &str) -> String {
    hex(&run_bytes(c, &[&unhex(key), &unhex(pt)])[0])
}

#[test]
fn every_reference_circuit_parses_and_validates() {
    for f in FILES {
        let c = circuit(f);
        c.validate().unwrap_or_else(|e| panic!("{f}: {e}"));
    }
}

#[test]
fn aes_128_fips_197_vectors() {
    let c = circuit("aes_128.txt");
    assert_eq!(
        aes(c, "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff"),
        "69c4e0d86a7b0430d8cdb78070b4c55a"
    );
    assert_eq!(aes(c, &"00".repeat(16), &"00".repeat(16)), "66e94bd4ef8a2c3b884cfa59ca342b2e");
}

#[test]
fn sha256_of_abc() {
    let c = circuit("sha256.txt");
    let mut block = b"abc".to_vec();
    block.push(0x80);
    block.resize(56, 0);
    block.extend_from_slice(&24u64.to_be_bytes());
    let iv = unhex("6a09e667 bb67ae85 3c6ef372 a54ff53a 510e527f 9b05688c 1f83d9ab 5be0cd19");
    let out = run_bytes(c, &[&block, &iv]);
    assert_eq!(hex(&out[0]), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

#[test]
fn stats_match_the_readme() {
    let and_counts = [
        ("aes_128.txt", 6400),
        ("sha256.txt", 22573),
        ("adder64.txt", 63),
        ("sub64.txt", 63),
        ("mult64.txt", 4033),
        ("neg64.txt", 62),
        ("zero_equal.txt", 63),
    ];
    for (f, and) in and_counts {
        let s = circuit(f).stats();
        assert_eq!(s.and, and, "{f}");
        assert_eq!(s.and + s.xor + s.inv + s.constants + s.copies, s.gates, "{f}");
    }
    let aes = circuit("aes_128.txt").stats();
    assert_eq!((aes.wires, aes.gates, aes.xor, aes.inv), (36919, 36663, 28176, 2087));
    assert_eq!((aes.inputs, aes.outputs), (256, 128));
    let sha = circuit("sha256.txt").stats();
    assert_eq!((sha.wires, sha.gates, sha.xor, sha.inv), (135841, 135073, 110644, 1856));
    assert_eq!((sha.inputs, sha.outputs), (768, 256));
    let neg = circuit("neg64.txt").stats();
    assert_eq!(neg.copies, 1);
    // A ripple-carry adder's carry chain is one AND per bit position after the first.
    assert_eq!(circuit("adder64.txt").stats().depth, 63);
    assert!(aes.depth > 0 && aes.depth <= u64::from(aes.wires));
}

#[test]
fn wire_ranges_follow_the_bristol_convention() {
    let c = circuit("aes_128.txt");
    assert_eq!(c.input_wires(0), 0..128);
    assert_eq!(c.input_wires(1), 128..256);
    assert_eq!(c.input_wires(2), 0..0);
    assert_eq!(c.output_wires(0), 36919 - 128..36919);
    assert_eq!(c.output_wires(1), 0..0);
}

#[test]
fn edge_values_of_the_64_bit_circuits() {
    let edges = [0u64, 1, 2, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1, 0x5555_5555_5555_5555];
    for &a in &edges {
        for &b in &edges {
            check_binary_ops(a, b);
        }
        check_unary_ops(a);
    }
}

fn eval2(f: &str, a: u64, b: u64) -> u64 {
    bits_u64(&circuit(f).evaluate(&[u64_bits(a), u64_bits(b)]).unwrap()[0])
}

fn check_binary_ops(a: u64, b: u64) {
    assert_eq!(eval2("adder64.txt", a, b), a.wrapping_add(b), "{a} + {b}");
    assert_eq!(eval2("sub64.txt", a, b), a.wrapping_sub(b), "{a} - {b}");
    assert_eq!(eval2("mult64.txt", a, b), a.wrapping_mul(b), "{a} * {b}");
}

fn check_unary_ops(a: u64) {
    let neg = circuit("neg64.txt").evaluate(&[u64_bits(a)]).unwrap();
    assert_eq!(bits_u64(&neg[0]), a.wrapping_neg(), "-{a}");
    let zero = circuit("zero_equal.txt").evaluate(&[u64_bits(a)]).unwrap();
    assert_eq!(zero[0], vec![a == 0], "{a} == 0");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arithmetic_circuits_match_u64_arithmetic(a: u64, b: u64) {
        check_binary_ops(a, b);
        check_unary_ops(a);
    }

    #[test]
    fn byte_bit_conversions_invert(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        let bits = bits_from_bytes_be(&bytes, bytes.len() as u32 * 8);
        prop_assert_eq!(bytes_be_from_bits(&bits), bytes.clone());
        if let Some(&last) = bytes.last() {
            // Wire 0 is the lowest bit of the last byte.
            prop_assert_eq!(bits[0], last & 1 == 1);
        }
    }
}

#[test]
fn bits_from_bytes_pads_and_truncates() {
    assert_eq!(bits_from_bytes_be(&[0x01], 3), vec![true, false, false]);
    assert_eq!(bits_from_bytes_be(&[0xff, 0x80], 9), [vec![false; 7], vec![true, true]].concat());
    assert_eq!(bits_from_bytes_be(&[0x02], 10), [vec![false, true], vec![false; 8]].concat());
    assert_eq!(bytes_be_from_bits(&[true]), vec![1]);
    assert_eq!(bytes_be_from_bits(&[false; 9]), vec![0, 0]);
    assert!(bytes_be_from_bits(&[]).is_empty());
}
