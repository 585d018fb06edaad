//! A cheating or broken peer is caught: every check KOS has gets a test where it fires, and
//! truncated, oversized and garbage messages give typed errors, never a panic.
//!
//! Message indices (per direction, counted by `Tamper`): the KOS receiver (party 1) sends the
//! base-OT sender point as message 0, then per chunk its matrix `u` and its check answer; the
//! KOS sender (party 0) sends its base-OT receiver points as message 0, then per chunk the
//! challenge seed and, for chosen/correlated OT, the masked messages.

mod common;

use common::{kos, kos_hashed_with, kos_random, kos_with};
use webmpc_ot::contract::bools;
use futures::executor::block_on;
use futures::join;
use webmpc_core::channel::memory::{pair, Tamper};
use webmpc_core::Block;
use webmpc_ot::{CotReceiver, CotSender, OtError, OtReceiver, OtSender, SessionId};

const U_MSG: usize = 1;
const ANSWER_MSG: usize = 2;

/// Runs one Δ-OT chunk of `n` with the receiver's outgoing messages edited; returns the sender's
/// result (the party that runs the check).
fn cot_with_cheating_receiver(
    n: usize,
    delta: Block,
    edit: impl Fn(usize, &mut Vec<u8>),
) -> (Result<Vec<Block>, OtError>, Result<Vec<Block>, OtError>) {
    let (a, b) = pair();
    let b = Tamper::new(b, move |_, i, m: &mut Vec<u8>| edit(i, m));
    let (s, r) = kos_with(a, b, SessionId::random().unwrap(), delta);
    let choices = bools(n, 3);
    // Each party owns its instance inside its future, so a party that aborts drops its channel
    // and its peer sees a disconnect instead of waiting forever (the SDK closes the transport).
    block_on(async {
        join!(
            async move {
                let mut s = s;
                s.send_cot(n).await
            },
            async move {
                let mut r = r;
                r.receive_cot(&choices).await
            }
        )
    })
}

fn random_delta() -> Block {
    webmpc_core::random::random_block().unwrap()
}

/// Flips bit `j` of rows `rows` of the receiver's matrix u: the receiver used choice `¬r_j` in
/// those rows and `r_j` in the others.
fn flip_rows(m: &mut [u8], n: usize, rows: &[usize], j: usize) {
    let row_bytes = (n.div_ceil(128) * 128 + 128) / 8;
    for &i in rows {
        m[i * row_bytes + j / 8] ^= 1 << (j % 8);
    }
}

#[test]
fn receiver_with_inconsistent_rows_is_caught() {
    // Inconsistent in 16 rows: passing needs Δ_i = 0 on all 16, probability 2^-16 per run.
    // 200 runs with fresh Δ: every one must abort (a miss has probability ~0.3%).
    let n = 1000;
    let rows: Vec<usize> = (0..128).step_by(8).collect();
    let mut caught = 0;
    for run in 0..200 {
        let j = (run * 37) % n;
        let rows = rows.clone();
        let (s, _r) = cot_with_cheating_receiver(n, random_delta(), move |i, m| {
            if i == U_MSG {
                flip_rows(m, n, &rows, j);
            }
        });
        match s {
            Err(OtError::CheatingDetected { peer: 1, check: "KOS consistency check" }) => caught += 1,
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => {}
        }
    }
    assert!(caught >= 198, "caught {caught} of 200");
}

#[test]
fn one_inconsistent_row_is_caught_exactly_when_that_delta_bit_is_set() {
    // The check's known, proven-tolerable leakage: a single inconsistent row passes iff the
    // sender's Δ bit for that row is 0. This pins the check down bit by bit.
    let n = 300;
    for (row, bit_set) in [(5, true), (5, false), (77, true), (127, false)] {
        let mut d = random_delta().to_u128();
        if bit_set {
            d |= 1 << row;
        } else {
            d &= !(1 << row);
        }
        let (s, _) = cot_with_cheating_receiver(n, Block::from_u128(d), move |i, m| {
            if i == U_MSG {
                flip_rows(m, n, &[row], 10);
            }
        });
        assert_eq!(s.is_err(), bit_set, "row {row}, Δ bit {bit_set}");
    }
}

#[test]
fn a_matrix_that_disagrees_with_the_claimed_choices_is_caught() {
    // The same flip in all 128 rows is a consistent change of choice j, but the receiver's
    // answer x still commits to the old choice: x must match the rows actually sent, so this
    // fails for every Δ ≠ 0 (and Δ always has bits set here).
    let n = 500;
    for j in [0, 123, 499, 600] {
        let delta = Block::from_u128(random_delta().to_u128() | 1 << 64);
        let (s, _) = cot_with_cheating_receiver(n, delta, move |i, m| {
            if i == U_MSG {
                flip_rows(m, n, &(0..128).collect::<Vec<_>>(), j);
            }
        });
        assert!(matches!(s, Err(OtError::CheatingDetected { .. })), "flip at {j}");
    }
}

#[test]
fn tampered_check_answers_are_always_caught() {
    for (block, bit) in [(0usize, 3u32), (1, 0), (64, 127), (128, 64)] {
        let (s, _) = cot_with_cheating_receiver(256, random_delta(), move |i, m| {
            if i == ANSWER_MSG {
                m[block * 16 + (bit / 8) as usize] ^= 1 << (bit % 8);
            }
        });
        assert!(matches!(s, Err(OtError::CheatingDetected { .. })), "answer block {block}");
    }
}

#[test]
fn garbage_matrix_of_the_right_length_is_caught() {
    let (s, _) = cot_with_cheating_receiver(128, random_delta(), |i, m| {
        if i == U_MSG {
            for (k, b) in m.iter_mut().enumerate() {
                *b = (k as u8).wrapping_mul(151).wrapping_add(7);
            }
        }
    });
    assert!(matches!(s, Err(OtError::CheatingDetected { .. })));
}

#[test]
fn truncated_and_oversized_messages_are_typed_errors() {
    for (msg, delta_len) in [(U_MSG, -1i64), (U_MSG, 16), (ANSWER_MSG, -16), (ANSWER_MSG, 1), (0, -1), (0, 5)] {
        let (s, _) = cot_with_cheating_receiver_setup_tolerant(msg, delta_len);
        let code = s.expect_err("must fail").code();
        assert_eq!(code, "MALFORMED_MESSAGE", "message {msg} resized by {delta_len}");
    }
}

/// Like `cot_with_cheating_receiver`, but the edit may break setup, so errors there count too.
fn cot_with_cheating_receiver_setup_tolerant(msg: usize, delta_len: i64) -> (Result<(), OtError>, ()) {
    let (a, b) = pair();
    let b = Tamper::new(b, move |_, i, m: &mut Vec<u8>| {
        if i == msg {
            let len = (m.len() as i64 + delta_len) as usize;
            m.resize(len, 0xab);
        }
    });
    let sid = SessionId::random().unwrap();
    let choices = bools(200, 1);
    let (k, m) = block_on(async move {
        join!(
            async move {
                let mut s = webmpc_ot::KosSender::setup(a, 1, &sid, random_delta()).await?;
                s.send_cot(200).await
            },
            async move {
                let mut r = webmpc_ot::KosReceiver::setup(b, 0, &sid).await?;
                r.receive_cot(&choices).await
            }
        )
    });
    // The sender runs every length check on the receiver's messages.
    let _ = m;
    (k.map(|_| ()), ())
}

#[test]
fn a_failed_instance_refuses_further_use() {
    let (a, b) = pair();
    let b = Tamper::new(b, |_, i, m: &mut Vec<u8>| {
        if i == ANSWER_MSG {
            m[0] ^= 1;
        }
    });
    let (mut s, mut r) = kos_with(a, b, SessionId::random().unwrap(), random_delta());
    let choices = bools(128, 1);
    let (k, _) = block_on(async { join!(s.send_cot(128), r.receive_cot(&choices)) });
    assert!(matches!(k, Err(OtError::CheatingDetected { .. })));
    let again = block_on(s.send_cot(128)).unwrap_err();
    assert_eq!(again.code(), "INVALID_ARGUMENT");
}

#[test]
fn a_vanished_peer_is_a_disconnect_not_a_hang() {
    let (mut s, r) = kos(random_delta());
    drop(r);
    assert_eq!(block_on(s.send_cot(10)).unwrap_err().code(), "PEER_DISCONNECTED");
    let (s, mut r) = kos(random_delta());
    drop(s);
    assert_eq!(block_on(r.receive_chosen(&[true; 3])).unwrap_err().code(), "PEER_DISCONNECTED");
}

#[test]
fn sender_garbage_is_caught_or_typed() {
    // A corrupted chosen-OT ciphertext message of the wrong length: typed, no panic.
    let (a, b) = pair();
    let a = Tamper::new(a, |_, i, m: &mut Vec<u8>| {
        if i == 2 {
            m.truncate(m.len() - 3);
        }
    });
    let (s, r) = kos_hashed_with(a, b, SessionId::random().unwrap(), random_delta());
    let msgs = vec![[Block::ZERO, Block::ONES]; 50];
    let (x, y) = block_on(async {
        join!(
            async move {
                let mut s = s;
                s.send_chosen(&msgs).await
            },
            async move {
                let mut r = r;
                r.receive_chosen(&[false; 50]).await
            }
        )
    });
    x.unwrap();
    assert_eq!(y.unwrap_err().code(), "MALFORMED_MESSAGE");
}

#[test]
fn tweaks_never_repeat_across_batches_sessions_and_directions() {
    use webmpc_ot::RotSender;
    let mut ranges: Vec<(u128, u128)> = Vec::new();
    for _session in 0..2 {
        let (mut s, mut r) = kos_random();
        for batch in [1000usize, 70_000] {
            let start = s.next_tweak();
            assert_eq!(start, r.next_tweak(), "both parties agree on the tweak");
            let (p, c) =
                block_on(async { join!(s.send_random(batch), webmpc_ot::RotReceiver::receive_random(&mut r, batch)) });
            p.unwrap();
            c.unwrap();
            assert_eq!(s.next_tweak(), start + batch as u128, "one tweak per OT");
            ranges.push((start, start + batch as u128));
        }
    }
    // The same session with the roles of the parties swapped gets another tag.
    let sid = SessionId::random().unwrap();
    let (a, b) = pair();
    let (s01, _) = kos_with(a, b, sid, random_delta());
    let (a, b) = pair();
    let (_, s10) = block_on(async {
        join!(webmpc_ot::KosReceiver::setup(a, 1, &sid), webmpc_ot::KosSender::setup(b, 0, &sid, random_delta()))
    });
    let (t01, t10) = (s01.next_tweak(), s10.unwrap().next_tweak());
    assert_ne!(t01 >> 64, t10 >> 64, "direction is part of the tweak tag");
    ranges.push((t01, t01 + 1_000_000));
    ranges.push((t10, t10 + 1_000_000));
    ranges.sort();
    for w in ranges.windows(2) {
        assert!(w[0].1 <= w[1].0, "tweak ranges overlap: {:x?} and {:x?}", w[0], w[1]);
    }
}
