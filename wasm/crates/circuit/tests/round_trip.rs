//! Bristol and binary round trips, the content hash, the streaming reader and compaction.

mod common;

use common::{circuit, FILES};
use proptest::prelude::*;
use webmpc_circuit::{stream_limits, Circuit, CircuitError, Gate, GateReader, GateStream, Header, MAGIC};

/// A small circuit using every gate type: out0 = (a & b) ^ !a, out1 = const 1, out2 = copy of b.
fn every_gate() -> Circuit {
    Circuit::parse_bristol(
        "6 8\n2 1 1\n3 1 1 1\n\n2 1 0 1 2 AND\n1 1 0 3 INV\n2 1 2 3 5 XOR\n1 1 1 6 EQ\n1 1 1 7 EQW\n1 1 5 4 EQW\n",
    )
    .unwrap()
}

#[test]
fn bristol_round_trip_is_exact() {
    for f in FILES {
        let c = circuit(f);
        let text = c.to_bristol();
        assert_eq!(&Circuit::parse_bristol(&text).unwrap(), c, "{f}");
        // Writing is deterministic, so a second round gives the same text.
        assert_eq!(Circuit::parse_bristol(&text).unwrap().to_bristol(), text, "{f}");
    }
    let c = every_gate();
    assert_eq!(Circuit::parse_bristol(&c.to_bristol()).unwrap(), c);
}

#[test]
fn mand_expands_to_ands_and_round_trips() {
    let c = Circuit::parse_bristol("1 7\n2 2 2\n1 3\n\n6 3 0 1 2 2 3 3 4 5 6 MAND\n").unwrap();
    assert_eq!(
        c.gates,
        vec![Gate::And { a: 0, b: 2, out: 4 }, Gate::And { a: 1, b: 3, out: 5 }, Gate::And { a: 2, b: 3, out: 6 }]
    );
    assert_eq!(c.stats().and, 3);
    let back = Circuit::parse_bristol(&c.to_bristol()).unwrap();
    assert_eq!(back, c);
    // a = 0b11, b = 0b01 -> (a0&b0, a1&b1, b0&b1) = (1, 0, 0)
    let out = c.evaluate(&[vec![true, true], vec![true, false]]).unwrap();
    assert_eq!(out, vec![vec![true, false, false]]);
}

#[test]
fn binary_round_trip_and_layout() {
    for f in FILES {
        let c = circuit(f);
        let bytes = c.to_binary();
        assert_eq!(&Circuit::from_binary(&bytes).unwrap(), c, "{f}");
    }
    let c = every_gate();
    let b = c.to_binary();
    // Spelled out field by field, as the TypeScript builder writes it.
    let mut want = Vec::new();
    want.extend_from_slice(b"WMPC");
    want.extend_from_slice(&[1, 0, 0, 0]);
    want.extend_from_slice(&8u32.to_le_bytes());
    want.extend_from_slice(&6u64.to_le_bytes());
    want.extend_from_slice(&2u32.to_le_bytes());
    want.extend_from_slice(&1u32.to_le_bytes());
    want.extend_from_slice(&1u32.to_le_bytes());
    want.extend_from_slice(&3u32.to_le_bytes());
    for w in [1u32, 1, 1] {
        want.extend_from_slice(&w.to_le_bytes());
    }
    let wires = |ws: &[u32]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    want.push(1);
    want.extend(wires(&[0, 1, 2]));
    want.push(2);
    want.extend(wires(&[0, 3]));
    want.push(0);
    want.extend(wires(&[2, 3, 5]));
    want.extend([3, 1]);
    want.extend(wires(&[6]));
    want.push(4);
    want.extend(wires(&[1, 7]));
    want.push(4);
    want.extend(wires(&[5, 4]));
    assert_eq!(b, want);
    assert_eq!(&b[..4], &MAGIC);
}

#[test]
fn content_hash_is_sha256_of_the_encoding_and_tells_circuits_apart() {
    use sha2::Digest;
    let mut seen = std::collections::HashSet::new();
    for f in FILES {
        let c = circuit(f);
        let h = c.content_hash();
        assert_eq!(h, <[u8; 32]>::from(sha2::Sha256::digest(c.to_binary())), "{f}");
        assert_eq!(h, c.clone().content_hash(), "{f}: stable");
        assert_eq!(h, Circuit::parse_bristol(&c.to_bristol()).unwrap().content_hash(), "{f}: survives text");
        assert!(seen.insert(h), "{f}: hash collides with another circuit");
    }
    // A one-gate change changes the hash.
    let mut c = circuit("adder64.txt").clone();
    let before = c.content_hash();
    if let Some(Gate::Xor { a, b, out }) = c.gates.first().copied() {
        c.gates[0] = Gate::And { a, b, out };
    }
    assert_ne!(c.content_hash(), before);
    // A known value, pinned so that any change to the encoding is noticed.
    let empty = Circuit::default();
    assert_eq!(
        common::hex(&empty.content_hash()),
        common::hex(&<[u8; 32]>::from(sha2::Sha256::digest([b"WMPC".as_slice(), &[1, 0, 0, 0], &[0; 20]].concat())))
    );
}

fn read_all(bytes: &[u8], chunk: usize) -> (Header, Vec<Gate>) {
    let mut r = GateReader::new(bytes).unwrap();
    let mut gates = Vec::new();
    loop {
        let c = r.next_chunk(chunk).unwrap();
        if c.is_empty() {
            break;
        }
        assert!(c.len() <= chunk.max(1));
        gates.extend_from_slice(c);
    }
    assert_eq!(r.remaining(), 0);
    // Finished readers stay finished.
    assert!(r.next_chunk(chunk).unwrap().is_empty());
    (r.into_header(), gates)
}

#[test]
fn gate_reader_matches_from_binary_for_any_chunk_size() {
    for f in ["adder64.txt", "neg64.txt", "aes_128.txt"] {
        let c = circuit(f);
        let bytes = c.to_binary();
        for chunk in [0, 1, 2, 3, 7, 64, 1000, 36663, 1 << 20, usize::MAX] {
            let (h, gates) = read_all(&bytes, chunk);
            assert_eq!(
                (h.wires, &h.inputs, &h.outputs, h.gates),
                (c.wires, &c.inputs, &c.outputs, c.gates.len() as u64)
            );
            assert_eq!(gates, c.gates, "{f} chunk {chunk}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn gate_reader_any_chunk(chunk in 0usize..600) {
        let c = circuit("mult64.txt");
        let bytes = c.to_binary();
        let (_, gates) = read_all(&bytes, chunk);
        prop_assert_eq!(&gates, &c.gates);
    }

    #[test]
    fn compact_preserves_semantics(seed: [u64; 4]) {
        for f in ["adder64.txt", "sub64.txt", "mult64.txt", "neg64.txt", "zero_equal.txt", "aes_128.txt"] {
            let c = circuit(f);
            let k = compacted(f);
            let inputs: Vec<Vec<bool>> = c.inputs.iter().enumerate()
                .map(|(i, &w)| (0..w).map(|j| (seed[(i + j as usize / 64) % 4].rotate_left(j) ^ u64::from(j)) & 1 == 1).collect())
                .collect();
            prop_assert_eq!(c.evaluate(&inputs).unwrap(), k.evaluate(&inputs).unwrap(), "{}", f);
        }
    }
}

fn compacted(f: &str) -> &'static Circuit {
    use std::sync::OnceLock;
    static CACHE: OnceLock<Vec<(String, Circuit)>> = OnceLock::new();
    let all = CACHE.get_or_init(|| common::FILES.iter().map(|f| (f.to_string(), circuit(f).compact())).collect());
    &all.iter().find(|(n, _)| n == f).unwrap().1
}

#[test]
fn compact_reduces_wires_and_keeps_the_conventions() {
    for f in FILES {
        let c = circuit(f);
        let k = compacted(f);
        k.validate().unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(k.wires <= c.wires, "{f}");
        assert_eq!((&k.inputs, &k.outputs), (&c.inputs, &c.outputs), "{f}");
        let (s, t) = (c.stats(), k.stats());
        assert_eq!((s.and, s.xor, s.inv, s.constants, s.depth), (t.and, t.xor, t.inv, t.constants, t.depth), "{f}");
        // The binary form carries compacted circuits (wires are overwritten there).
        assert_eq!(&Circuit::from_binary(&k.to_binary()).unwrap(), k, "{f}");
        // Compacting twice changes nothing more than compacting once did, semantically.
        let kk = k.compact();
        assert!(kk.wires <= k.wires);
    }
    let aes = compacted("aes_128.txt");
    let sha = compacted("sha256.txt");
    eprintln!(
        "aes wires {} -> {}, sha256 wires {} -> {}",
        circuit("aes_128.txt").wires,
        aes.wires,
        circuit("sha256.txt").wires,
        sha.wires
    );
    assert!(aes.wires < circuit("aes_128.txt").wires / 10, "AES: {} wires after compaction", aes.wires);
    assert!(sha.wires < circuit("sha256.txt").wires / 10, "SHA-256: {} wires after compaction", sha.wires);
}

#[test]
fn compact_handles_passthrough_outputs_and_dead_gates() {
    /// Checks `c` and its compaction agree on every 3-bit input; returns the compaction.
    fn same_on_all_inputs(c: &Circuit) -> Circuit {
        let k = c.compact();
        k.validate().unwrap();
        for x in 0..8u8 {
            let bits = vec![(0..3).map(|i| (x >> i) & 1 == 1).collect::<Vec<bool>>()];
            assert_eq!(c.evaluate(&bits).unwrap(), k.evaluate(&bits).unwrap(), "input {x:03b}");
        }
        k
    }
    // Outputs are input wires 1 and 2 directly (no gates): nothing to gain, returned unchanged.
    let pass = Circuit { wires: 3, inputs: vec![3], outputs: vec![2], gates: vec![] };
    assert_eq!(same_on_all_inputs(&pass), pass);
    // A dead XOR (wire 3 is never read), an unread input (wire 2), and an output read again later.
    let k = same_on_all_inputs(
        &Circuit::parse_bristol(
            "5 8\n1 3\n1 2\n\n2 1 0 1 3 XOR\n2 1 0 1 4 AND\n1 1 4 5 INV\n2 1 4 5 6 AND\n2 1 6 4 7 XOR\n",
        )
        .unwrap(),
    );
    // Three slots for inputs and temporaries (the dead XOR reuses the unread input's slot), then
    // the two outputs.
    assert_eq!(k.wires, 5);
}

#[test]
fn compact_leaves_invalid_circuits_alone() {
    let bad = Circuit { wires: 2, inputs: vec![1], outputs: vec![1], gates: vec![Gate::Inv { a: 7, out: 1 }] };
    assert_eq!(bad.compact(), bad);
}

/// Pushes `bytes` into a stream in pieces of `piece` bytes (after a prefix holding the header),
/// taking gates as they become available.
fn stream_all(
    bytes: &[u8],
    header_len: usize,
    piece: usize,
    max: usize,
) -> Result<(Vec<Gate>, [u8; 32]), CircuitError> {
    let mut s = GateStream::new(&bytes[..header_len], &stream_limits())?;
    let mut gates = Vec::new();
    let mut chunk = Vec::new();
    for part in bytes[header_len..].chunks(piece) {
        s.push(part);
        loop {
            s.next_chunk_into(max, &mut chunk)?;
            if chunk.is_empty() {
                break;
            }
            gates.extend_from_slice(&chunk);
        }
    }
    Ok((gates, s.finish()?))
}

#[test]
fn gate_stream_matches_the_whole_decoder_for_any_piece_size() {
    let aes = circuit("aes_128.txt");
    let bytes = aes.to_binary();
    let header_len = 8 + 4 + 8 + 4 + 4 * aes.inputs.len() + 4 + 4 * aes.outputs.len();
    for (piece, max) in [(1, 3), (7, 1000), (4096, 64), (bytes.len(), 1 << 20)] {
        let (gates, hash) = stream_all(&bytes, header_len, piece, max).unwrap();
        assert_eq!(gates, aes.gates, "piece {piece}");
        assert_eq!(hash, aes.content_hash(), "piece {piece}");
    }
    // Truncated, padded and corrupted streams fail (at the end or where the damage is).
    let short = &bytes[..bytes.len() - 1];
    assert!(matches!(stream_all(short, header_len, 4096, 64), Err(CircuitError::Truncated { .. })));
    let mut long = bytes.clone();
    long.push(0);
    assert!(matches!(stream_all(&long, header_len, 4096, 64), Err(CircuitError::TrailingData { .. })));
    let mut bad = bytes.clone();
    bad[header_len] = 9;
    assert!(matches!(stream_all(&bad, header_len, 4096, 64), Err(CircuitError::UnknownGate { .. })));
    // A prefix without the whole header is refused.
    assert!(GateStream::new(&bytes[..10], &stream_limits()).is_err());
}
