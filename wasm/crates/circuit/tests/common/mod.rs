//! Shared helpers: the reference circuits from `../shared/circuits/bristol_fashion/` (read in
//! place, never copied into the repository) and hex conversion.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;
use webmpc_circuit::Circuit;

/// Directory of the reference circuits (see `webmpc_circuit::testing::reference_dir`).
pub fn circuits_dir() -> PathBuf {
    webmpc_circuit::testing::reference_dir()
}

/// Every reference file name.
pub const FILES: [&str; 7] =
    ["aes_128.txt", "sha256.txt", "adder64.txt", "sub64.txt", "mult64.txt", "neg64.txt", "zero_equal.txt"];

pub fn text(name: &str) -> String {
    let path = circuits_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Each reference circuit parsed once per test binary.
pub fn circuit(name: &str) -> &'static Circuit {
    static CACHE: OnceLock<Vec<(&'static str, Circuit)>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        FILES.iter().map(|&f| (f, Circuit::parse_bristol(&text(f)).unwrap_or_else(|e| panic!("{f}: {e}")))).collect()
    });
    &all.iter().find(|(f, _)| *f == name).unwrap_or_else(|| panic!("no circuit {name}")).1
}

pub fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Bits of a u64, wire k = bit k.
pub fn u64_bits(x: u64) -> Vec<bool> {
    (0..64).map(|k| (x >> k) & 1 == 1).collect()
}

pub fn bits_u64(bits: &[bool]) -> u64 {
    bits.iter().enumerate().fold(0, |acc, (k, &b)| acc | (u64::from(b) << k))
}
