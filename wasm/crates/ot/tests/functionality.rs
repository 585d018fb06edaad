//! The OT interfaces' contract, checked the same way against the ideal functionality and the real
//! KOS implementation: correctness of every output kind at many sizes (0, 1, 127, 128, 129,
//! multi-chunk, 10^6), and that the unchosen message stays unrelated to what the receiver got.

mod common;

use common::{kos, kos_hashed_with, kos_random};
use webmpc_ot::contract::{blocks, bools, check_chosen, check_correlated, check_cot, check_random, SIZES};
use futures::executor::block_on;
use futures::join;
use webmpc_core::Block;
use webmpc_ot::{ideal, CotSender, OtError, OtReceiver, OtSender, RotReceiver, RotSender};






fn delta() -> Block {
    // Lowest bit set, as garbling wants (point-and-permute); otherwise random.
    Block::from_u128(webmpc_core::random::random_block().unwrap().to_u128() | 1)
}

#[test]
fn ideal_functionality_meets_the_contract() {
    let (mut s, mut r) = ideal::pair_random().unwrap();
    for n in SIZES {
        check_cot(&mut s, &mut r, n);
        check_random(&mut s, &mut r, n);
        check_chosen(&mut s, &mut r, n);
        check_correlated(&mut s, &mut r, n);
    }
}

#[test]
fn kos_meets_the_contract_at_every_size() {
    // One instance across all calls: the PRG streams and tweak counters carry over.
    let (mut s, mut r) = kos_random();
    for n in SIZES {
        check_cot(&mut s, &mut r, n);
        check_random(&mut s, &mut r, n);
        check_chosen(&mut s, &mut r, n);
        check_correlated(&mut s, &mut r, n);
    }
}

#[test]
fn kos_with_small_chunks_splits_calls_correctly() {
    let (mut s, mut r) = kos_random();
    s.set_chunk_size(256).unwrap();
    r.set_chunk_size(256).unwrap();
    for n in [255, 256, 257, 1000] {
        check_cot(&mut s, &mut r, n);
        check_random(&mut s, &mut r, n);
        check_chosen(&mut s, &mut r, n);
        check_correlated(&mut s, &mut r, n);
    }
}

#[test]
fn delta_is_the_one_the_sender_chose() {
    let d = Block::from_u128(0xdead_beef_0000_0000_0000_0000_0000_0001);
    let (mut s, mut r) = kos(d);
    assert_eq!(s.delta(), d);
    check_cot(&mut s, &mut r, 300);
}

#[test]
fn invalid_chunk_sizes_are_refused() {
    let (mut s, _r) = kos(delta());
    for n in [0, 100, (1 << 20) + 128] {
        assert_eq!(s.set_chunk_size(n).unwrap_err().code(), "INVALID_ARGUMENT");
    }
}

/// Every hashed-output kind once: when `served`, both ends run and must succeed; otherwise only
/// the sender is called (a refused call sends nothing, so a receiver would wait for its peer)
/// and its verdicts are returned.
fn hashed_calls<S: RotSender + OtSender, R: RotReceiver + OtReceiver>(
    s: &mut S,
    r: &mut R,
    served: bool,
) -> Vec<webmpc_ot::OtError> {
    let c = bools(10, 1);
    let m = vec![[Block::ZERO, Block::ONES]; 10];
    let x = blocks(10, 2);
    if served {
        let (a, b) = block_on(async { join!(s.send_random(10), r.receive_random(10)) });
        a.unwrap();
        b.unwrap();
        let (a, b) = block_on(async { join!(s.send_chosen(&m), r.receive_chosen(&c)) });
        a.unwrap();
        b.unwrap();
        let (a, b) = block_on(async { join!(s.send_correlated(&x), r.receive_correlated(&c)) });
        a.unwrap();
        b.unwrap();
        return Vec::new();
    }
    vec![
        block_on(s.send_random(10)).unwrap_err(),
        block_on(s.send_chosen(&m)).unwrap_err(),
        block_on(s.send_correlated(&x)).unwrap_err(),
    ]
}

#[test]
fn zero_delta_is_refused_by_kos_and_by_the_ideal_functionality() {
    // With Δ = 0, Δ-OT hands the receiver K_j whatever its choice and hashed OT gives m0 = m1.
    assert_eq!(ideal::pair(Block::ZERO).err().unwrap().code(), "INVALID_ARGUMENT");
    assert_eq!(ideal::pair_hashed_with_delta(Block::ZERO).err().unwrap().code(), "INVALID_ARGUMENT");
    for hashed in [false, true] {
        let (a, b) = webmpc_core::channel::memory::pair();
        let sid = webmpc_ot::SessionId::random().unwrap();
        let (s, _r) = block_on(async {
            join!(
                async move {
                    if hashed {
                        webmpc_ot::KosSender::setup_hashed_with_delta(a, 1, &sid, Block::ZERO).await
                    } else {
                        webmpc_ot::KosSender::setup(a, 1, &sid, Block::ZERO).await
                    }
                },
                // The sender refuses before sending; its dropped channel ends the receiver's wait.
                webmpc_ot::KosReceiver::setup(b, 0, &sid)
            )
        });
        assert_eq!(s.err().unwrap().code(), "INVALID_ARGUMENT", "hashed opt-in: {hashed}");
    }
}

#[test]
fn hashed_outputs_on_a_caller_chosen_delta_need_the_explicit_opt_in() {
    // KOS: Δ-OT with the caller's Δ works; random/chosen/correlated OT are refused.
    let (mut s, mut r) = kos(delta());
    assert!(!s.hashed_outputs_allowed());
    let refused = hashed_calls(&mut s, &mut r, false);
    assert_eq!(refused.len(), 3);
    for (kind, e) in ["random", "chosen", "correlated"].iter().zip(refused) {
        assert_eq!(e.code(), "INVALID_ARGUMENT", "KOS {kind} OT on a chosen Δ");
    }
    // So is the streaming form.
    assert_eq!(block_on(s.random_stream(5, |_, _, _| {})).unwrap_err().code(), "INVALID_ARGUMENT");
    // The refusals happen before any message, so the instance is still in step for Δ-OT.
    check_cot(&mut s, &mut r, 300);
    // With the opt-in every kind is served, and it is the caller's Δ.
    let d = delta();
    let (a, b) = webmpc_core::channel::memory::pair();
    let (mut s, mut r) = kos_hashed_with(a, b, webmpc_ot::SessionId::random().unwrap(), d);
    assert!(s.hashed_outputs_allowed());
    assert_eq!(s.delta(), d);
    hashed_calls(&mut s, &mut r, true);
    check_random(&mut s, &mut r, 200);
    check_correlated(&mut s, &mut r, 200);
    assert!(kos_random().0.hashed_outputs_allowed(), "a random Δ serves every kind");

    // The ideal functionality keeps the same rules.
    let (mut s, mut r) = ideal::pair(delta()).unwrap();
    for (kind, e) in ["random", "chosen", "correlated"].iter().zip(hashed_calls(&mut s, &mut r, false)) {
        assert_eq!(e.code(), "INVALID_ARGUMENT", "ideal {kind} OT on a chosen Δ");
    }
    check_cot(&mut s, &mut r, 300);
    let (mut s, mut r) = ideal::pair_hashed_with_delta(d).unwrap();
    assert_eq!(s.delta(), d);
    hashed_calls(&mut s, &mut r, true);
    check_random(&mut s, &mut r, 200);
}

#[test]
fn one_global_delta_serves_delta_ot_towards_several_peers() {
    // Authenticated garbling: party 0 keeps one Δ for its KOS sender instances towards parties 1
    // and 2, and uses only their unhashed Δ-OT outputs.
    use webmpc_core::channel::memory::network;
    let d = delta();
    let mut net = network(3).into_iter();
    let (p0, p1, p2) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let sid = webmpc_ot::SessionId::random().unwrap();
    let (s01, s02) = (sid.derive(b"0->1"), sid.derive(b"0->2"));
    let (a, b, c, e) = block_on(async {
        join!(
            webmpc_ot::KosSender::setup(&p0, 1, &s01, d),
            webmpc_ot::KosSender::setup(&p0, 2, &s02, d),
            webmpc_ot::KosReceiver::setup(&p1, 0, &s01),
            webmpc_ot::KosReceiver::setup(&p2, 0, &s02)
        )
    });
    let (mut to1, mut to2, mut r1, mut r2) = (a.unwrap(), b.unwrap(), c.unwrap(), e.unwrap());
    assert_eq!((to1.delta(), to2.delta()), (d, d));
    check_cot(&mut to1, &mut r1, 1000);
    check_cot(&mut to2, &mut r2, 1000);
}

/// A reverse instance derived from 128 random OTs of an existing one (instead of fresh base
/// OTs) meets the Δ-OT contract with the new sender's Δ, and the existing instance keeps working.
#[test]
fn reverse_instances_derived_from_random_ots_meet_the_contract() {
    use webmpc_core::channel::memory::pair;
    use webmpc_ot::SessionId;
    let (a, b) = pair();
    let (d0, d1) = (delta(), delta());
    let sid = SessionId::random().unwrap();
    let rsid = sid.derive(b"reverse");
    let (mut s, mut r) = common::kos_with(&a, &b, sid, d0);
    let (rr, rs) = block_on(async { join!(s.derive_reverse(&a, &rsid), r.derive_reverse(&b, &rsid, d1)) });
    let (mut rr, mut rs) = (rr.unwrap(), rs.unwrap());
    assert_eq!(rs.delta(), d1);
    for n in [1, 128, 1000] {
        check_cot(&mut rs, &mut rr, n);
        check_cot(&mut s, &mut r, n);
    }
}

/// The correction bits decide which seed the new sender holds: one flipped bit in transit leaves
/// it with the seed of the wrong choice in that row, so the reverse instance's first chunk fails
/// its consistency check instead of producing outputs. (A party can only hurt itself this way:
/// choosing its correction is choosing its base-OT choices, which endemic base OT allows.)
#[test]
fn a_wrong_correction_breaks_the_reverse_instance() {
    use webmpc_core::channel::memory::{pair, Tamper};
    use webmpc_ot::{CotReceiver, SessionId};
    let (a, b) = pair();
    // Party 1's messages: base-OT point, then u, the check answer, and the correction (index 3).
    let b = Tamper::new(b, |_, i, m: &mut Vec<u8>| {
        if i == 3 {
            m[5] ^= 0x10;
        }
    });
    let sid = SessionId::random().unwrap();
    let rsid = sid.derive(b"reverse");
    let (mut s, mut r) = common::kos_with(&a, &b, sid, delta());
    let (rr, rs) = block_on(async { join!(s.derive_reverse(&a, &rsid), r.derive_reverse(&b, &rsid, delta())) });
    let (mut rr, mut rs) = (rr.unwrap(), rs.unwrap());
    let choices = vec![true; 300];
    let (sent, got) = block_on(async { join!(rs.send_cot(300), rr.receive_cot(&choices)) });
    assert_eq!(sent.unwrap_err().code(), "CHEATING_DETECTED");
    assert!(got.is_ok(), "the receiver sees nothing wrong; the sender refuses to release outputs");
}

/// Both directions of a pair at once, chunks pipelined (`kos::cot_duplex`), over several chunks:
/// every output is a correct Δ-OT under the right party's Δ, the caller's head messages arrive,
/// and the instances stay usable one at a time afterwards (their PRGs stayed in step).
#[test]
fn duplex_gives_correct_delta_ots_both_ways() {
    use webmpc_core::channel::memory::pair;
    use webmpc_ot::kos::cot_duplex;
    use webmpc_ot::SessionId;
    let (a, b) = pair();
    let (d0, d1) = (delta(), delta());
    let sid = SessionId::random().unwrap();
    let rsid = sid.derive(b"reverse");
    let (mut s0, mut r1) = common::kos_with(&a, &b, sid, d0);
    let (r0, s1) = block_on(async { join!(s0.derive_reverse(&a, &rsid), r1.derive_reverse(&b, &rsid, d1)) });
    let (mut r0, mut s1) = (r0.unwrap(), s1.unwrap());
    for c in [s0.set_chunk_size(256), r0.set_chunk_size(256), s1.set_chunk_size(256), r1.set_chunk_size(256)] {
        c.unwrap();
    }
    let n = 1000; // four chunks of 256
    let c0: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
    let c1: Vec<bool> = (0..n).map(|i| i % 5 == 1).collect();
    let (mut k0, mut m0, mut k1, mut m1) = (vec![Block::ZERO; n], vec![Block::ZERO; n], vec![Block::ZERO; n], vec![Block::ZERO; n]);
    let (h0, h1) = block_on(async {
        join!(
            cot_duplex(&mut s0, &mut r0, &c0, &[1, 2, 3], |_| Ok::<(), OtError>(()), |o, k| k0[o..o + k.len()].copy_from_slice(k), |o, t| {
                m0[o..o + t.len()].copy_from_slice(t)
            }),
            cot_duplex(&mut s1, &mut r1, &c1, &[4, 5, 6], |_| Ok::<(), OtError>(()), |o, k| k1[o..o + k.len()].copy_from_slice(k), |o, t| {
                m1[o..o + t.len()].copy_from_slice(t)
            })
        )
    });
    assert_eq!(h0.unwrap(), vec![4, 5, 6]);
    assert_eq!(h1.unwrap(), vec![1, 2, 3]);
    for i in 0..n {
        let mask = |c: bool, d: Block| if c { d } else { Block::ZERO };
        assert_eq!(m1[i], k0[i] ^ mask(c1[i], d0), "party 1's tag {i} under Δ_0");
        assert_eq!(m0[i], k1[i] ^ mask(c0[i], d1), "party 0's tag {i} under Δ_1");
    }
    check_cot(&mut s0, &mut r1, 300);
    check_cot(&mut s1, &mut r0, 300);
}

/// The caller's check of the peer's head runs before the length of the peer's first message is
/// looked at: a party whose check rejects the head gets the check's error even though the body
/// has another length too; a party whose check passes gets the length error. Parameters that
/// differ (here the number of OTs) are then named by the caller's check, not by the channel.
#[test]
fn duplex_checks_the_head_before_the_length() {
    use webmpc_core::channel::memory::pair;
    use webmpc_core::channel::ChannelError;
    use webmpc_ot::kos::cot_duplex;
    use webmpc_ot::SessionId;
    let (a, b) = pair();
    let sid = SessionId::random().unwrap();
    let rsid = sid.derive(b"reverse");
    let (mut s0, mut r1) = common::kos_with(&a, &b, sid, delta());
    let (r0, s1) = block_on(async { join!(s0.derive_reverse(&a, &rsid), r1.derive_reverse(&b, &rsid, delta())) });
    let (mut r0, mut s1) = (r0.unwrap(), s1.unwrap());
    let expect = |want: &'static [u8], peer| {
        move |theirs: &[u8]| if theirs == want { Ok(()) } else { Err(OtError::Malformed { peer, what: "head" }) }
    };
    let (c0, c1) = (vec![true; 1000], vec![false; 500]);
    let (x, y) = block_on(async {
        join!(
            cot_duplex(&mut s0, &mut r0, &c0, &[1, 2, 3], expect(&[4, 5, 6], 1), |_, _| {}, |_, _| {}),
            cot_duplex(&mut s1, &mut r1, &c1, &[9, 9, 9], expect(&[1, 2, 3], 0), |_, _| {}, |_, _| {})
        )
    });
    assert_eq!(x.unwrap_err(), OtError::Malformed { peer: 1, what: "head" });
    let y = y.unwrap_err();
    assert!(matches!(y, OtError::Channel(ChannelError::UnexpectedLength { peer: 0, .. })), "{y}");
}

/// A party whose check answer is tampered with in the duplex: the peer's sender side refuses to
/// release the chunk's keys (`CHEATING_DETECTED`), as in a single instance.
#[test]
fn duplex_catches_a_tampered_answer() {
    use webmpc_core::channel::memory::{pair, Tamper};
    use webmpc_ot::kos::cot_duplex;
    use webmpc_ot::SessionId;
    let (a, b) = pair();
    // Party 1's messages: base-OT point, u, answer and correction of the reverse instance (0..=3),
    // then in the duplex its U's (4), its challenges (5) and its answers (6).
    let b = Tamper::new(b, |_, i, m: &mut Vec<u8>| {
        if i == 6 {
            m[20] ^= 1;
        }
    });
    let sid = SessionId::random().unwrap();
    let rsid = sid.derive(b"reverse");
    let (mut s0, mut r1) = common::kos_with(&a, &b, sid, delta());
    let (r0, s1) = block_on(async { join!(s0.derive_reverse(&a, &rsid), r1.derive_reverse(&b, &rsid, delta())) });
    let (mut r0, mut s1) = (r0.unwrap(), s1.unwrap());
    let c = vec![true; 500];
    let (x, y) = block_on(async {
        join!(
            cot_duplex(&mut s0, &mut r0, &c, &[], |_| Ok::<(), OtError>(()), |_, _| {}, |_, _| {}),
            cot_duplex(&mut s1, &mut r1, &c, &[], |_| Ok::<(), OtError>(()), |_, _| {}, |_, _| {})
        )
    });
    assert_eq!(x.unwrap_err().code(), "CHEATING_DETECTED");
    assert!(y.is_ok(), "party 1's own checks pass: only its answer was changed");
}
