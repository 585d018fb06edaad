//! The roofline's counts for half-gates against the scheme: run with
//! `cargo test --release -p webmpc-garble --features op-count --test op_counts`.
#![cfg(feature = "op-count")]

use webmpc_circuit::{Circuit, Gate};
use webmpc_core::count::{measure, Op};

#[test]
fn half_gates_hash_four_times_to_garble_and_twice_to_evaluate() {
    // A small circuit with every gate kind: AND, XOR, INV, a constant.
    let gates = vec![
        Gate::And { a: 0, b: 1, out: 4 },
        Gate::Xor { a: 2, b: 3, out: 5 },
        Gate::And { a: 4, b: 5, out: 6 },
        Gate::Inv { a: 6, out: 7 },
        Gate::Const { value: true, out: 8 },
        Gate::And { a: 7, b: 8, out: 9 },
    ];
    let c = Circuit { wires: 10, inputs: vec![2, 2], outputs: vec![1], gates };
    let (_, g) = measure(|| webmpc_garble::local::garble_and_evaluate(&c, true, 1).unwrap());
    let (_, ge) = measure(|| webmpc_garble::local::garble_and_evaluate(&c, false, 1).unwrap());
    let e = ge.since(&g);
    // TMMO: 2 AES per hash. Garbler: 4 hashes per AND, one per constant; evaluator: 2 per AND.
    assert_eq!(g.get(Op::AesBlock), 3 * 8 + 2);
    assert_eq!(e.get(Op::AesBlock), 3 * 4);
}
