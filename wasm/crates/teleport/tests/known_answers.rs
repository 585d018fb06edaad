//! Every reference circuit, AES-128 and SHA-256 with their known answers, through GC
//! teleportation in both modes, all three parties in one process (the enclave as the in-process
//! state machine the simulation backend runs). Also keeps the enclave's `no_std` circuit decoder
//! in step with `webmpc-circuit`.

mod common;

use common::*;
use webmpc_circuit::{bytes_be_from_bits, Circuit};
use webmpc_teleport::circuit::{decode_gates, pieces, Gate, Header, PIECE_GATES};
use webmpc_teleport::local::{random_sid, run_gc};
use webmpc_teleport::Owner;

const G: Owner = Owner::Garbler;
const E: Owner = Owner::Evaluator;

fn teleport(c: &Circuit, owners: &[Owner], g_in: &[Vec<bool>], e_in: &[Vec<bool>]) -> Vec<Vec<Vec<bool>>> {
    MODES
        .iter()
        .map(|&mode| {
            let job = gc_job(c, owners, mode, random_sid().unwrap());
            let (out, _, _) = run_gc(&job, &c.to_binary(), &g_in.concat(), &e_in.concat()).unwrap();
            out
        })
        .collect()
}

#[test]
fn aes_128_fips_197_vector_in_both_modes() {
    let c = circuit("aes_128.txt");
    let key = hex_bits("000102030405060708090a0b0c0d0e0f");
    let pt = hex_bits("00112233445566778899aabbccddeeff");
    for out in teleport(c, &[G, E], &[key.clone()], &[pt.clone()]) {
        assert_eq!(hex(&bytes_be_from_bits(&out[0])), "69c4e0d86a7b0430d8cdb78070b4c55a");
    }
    // The evaluator may hold the key instead.
    for out in teleport(c, &[E, G], &[pt], &[key]) {
        assert_eq!(hex(&bytes_be_from_bits(&out[0])), "69c4e0d86a7b0430d8cdb78070b4c55a");
    }
    let zero = vec![false; 128];
    for out in teleport(c, &[G, E], &[zero.clone()], &[zero.clone()]) {
        assert_eq!(hex(&bytes_be_from_bits(&out[0])), "66e94bd4ef8a2c3b884cfa59ca342b2e");
    }
}

#[test]
fn sha_256_abc_in_both_modes() {
    let c = circuit("sha256.txt");
    let block = hex_bits(&format!("61626380{}18", "0".repeat(128 - 8 - 2)));
    let iv = hex_bits("6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19");
    for out in teleport(c, &[G, E], &[block], &[iv]) {
        assert_eq!(
            hex(&bytes_be_from_bits(&out[0])),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

#[test]
fn arithmetic_reference_circuits_match_plaintext() {
    let (a, b) = (0xfedc_ba98_7654_3210u64, 0x0123_4567_89ab_cdefu64);
    for (name, want) in [
        ("adder64.txt", a.wrapping_add(b)),
        ("sub64.txt", a.wrapping_sub(b)),
        ("mult64.txt", a.wrapping_mul(b)),
    ] {
        for out in teleport(circuit(name), &[G, E], &[u64_bits(a)], &[u64_bits(b)]) {
            assert_eq!(bits_u64(&out[0]), want, "{name}");
        }
    }
    // One-input circuits, owned by either party (neg64 has constant gates).
    for owner in [G, E] {
        let (g_in, e_in) = if owner == G { (vec![u64_bits(a)], vec![]) } else { (vec![], vec![u64_bits(a)]) };
        for out in teleport(circuit("neg64.txt"), &[owner], &g_in, &e_in) {
            assert_eq!(bits_u64(&out[0]), a.wrapping_neg());
        }
        for (x, want) in [(0u64, true), (a, false)] {
            let (g_in, e_in) = if owner == G { (vec![u64_bits(x)], vec![]) } else { (vec![], vec![u64_bits(x)]) };
            for out in teleport(circuit("zero_equal.txt"), &[owner], &g_in, &e_in) {
                assert_eq!(out[0], vec![want]);
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn no_std_decoder_agrees_with_webmpc_circuit() {
    for name in FILES {
        let c = circuit(name);
        for c in [c.clone(), c.compact()] {
            let bin = c.to_binary();
            let ranges = pieces(&bin).unwrap();
            let (h, len) = Header::parse(&bin).unwrap();
            assert_eq!(ranges[0], 0..len);
            assert_eq!((h.wires, h.gates, &h.inputs, &h.outputs), (c.wires, c.gates.len() as u64, &c.inputs, &c.outputs));
            let mut all = Vec::new();
            let mut gates = Vec::new();
            for r in &ranges[1..] {
                decode_gates(&bin[r.clone()], h.wires, PIECE_GATES, &mut gates).unwrap();
                all.extend_from_slice(&gates);
            }
            let want: Vec<Gate> = c
                .gates
                .iter()
                .map(|g| match *g {
                    webmpc_circuit::Gate::Xor { a, b, out } => Gate::Xor { a, b, out },
                    webmpc_circuit::Gate::And { a, b, out } => Gate::And { a, b, out },
                    webmpc_circuit::Gate::Inv { a, out } => Gate::Inv { a, out },
                    webmpc_circuit::Gate::Const { value, out } => Gate::Const { value, out },
                    webmpc_circuit::Gate::Copy { a, out } => Gate::Copy { a, out },
                })
                .collect();
            assert_eq!(all, want, "{name}");
        }
    }
}
