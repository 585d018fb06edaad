//! What the enclave-server's host sees (issue 17, item 7): everything on the enclave link, in
//! both directions, recorded. The evaluator's secrets reach the enclave sealed (as the garbler's
//! seed does), and so do the replies that would reveal them: a host recording the link finds
//! neither x2⁰ nor k2, nor the ROT receiver's outputs, while the runs stay correct.

mod common;

use common::*;
use core::cell::RefCell;
use webmpc_core::channel::memory::network;
use webmpc_core::channel::PartyId;
use webmpc_core::Block;
use webmpc_teleport::rot::RotReceiver;
use webmpc_teleport::{local, pack_bits, JobHeader, JobKind, Mode, Owner};

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn the_link_carries_neither_x2_share_in_the_clear() {
    for mode in MODES {
        let c = circuit("adder64.txt");
        let bin = c.to_binary();
        let job = gc_job(c, &[Owner::Garbler, Owner::Evaluator], mode, local::random_sid().unwrap());
        let (x1, x2) = (0x0123_4567_89ab_cdefu64, 0xfeed_f00d_dead_beefu64);
        let (link, p2) = (RefCell::new(Vec::new()), RefCell::new(Vec::new()));
        let mut net = network(3).into_iter();
        let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
        // The evaluator's channel: to P1 (x2¹) and to the enclave link (what the host relays).
        let e = Recorder { inner: e, log: &p2 };
        let x = Recorder { inner: x, log: &link };
        let mut machine = local::enclave().unwrap();
        let (a, b) = gc_run(g, e, x, &mut machine, &job, &bin, (&u64_bits(x1), &u64_bits(x2)));
        a.unwrap();
        assert_eq!(bits_u64(&b.unwrap()[0]), x1.wrapping_add(x2));
        // x2¹ is the evaluator's only 8-byte message to P1; x2⁰ = x2 ⊕ x2¹.
        let p2: Vec<(PartyId, Vec<u8>)> = p2.into_inner().into_iter().filter(|(sent, ..)| *sent).map(|(_, to, m)| (to, m)).collect();
        let x2_1 = &p2.iter().find(|(to, m)| *to == PEERS.garbler && m.len() == 8).expect("the x2¹ share").1;
        let x2_0: Vec<u8> = pack_bits(&u64_bits(x2)).iter().zip(x2_1).map(|(a, b)| a ^ b).collect();
        let link: Vec<(PartyId, Vec<u8>)> = link.into_inner().into_iter().map(|(_, peer, m)| (peer, m)).collect();
        assert!(link.len() > 4);
        for (_, frame) in link.iter().chain(&p2) {
            assert!(!contains(frame, &x2_0), "{mode:?}: x2⁰ in the clear on a {}-byte message", frame.len());
        }
    }
}

#[test]
fn the_link_carries_neither_k2_nor_the_receivers_outputs_in_the_clear() {
    for mode in MODES {
        let job = JobHeader { sid: local::random_sid().unwrap(), mode, kind: JobKind::Rot { count: 1000 } };
        let link = RefCell::new(Vec::new());
        let mut net = network(3).into_iter();
        let (g, e, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
        let x = Recorder { inner: x, log: &link };
        let mut machine = local::enclave().unwrap();
        let (a, b) = rot_run(g, e, x, &mut machine, &job);
        a.unwrap();
        let (choices, outs) = b.unwrap();
        let probe = JobHeader { mode: Mode::SemiHonest, ..job.clone() };
        for (_, _, frame) in link.into_inner() {
            // A host trying every 16 bytes it relays as k2 never finds the receiver's choices.
            for w in frame.windows(16) {
                let k2 = Block(w.try_into().unwrap());
                let r = RotReceiver::new(&probe, k2, None).unwrap();
                assert_ne!(r.choices(0)[..128], choices[..128], "{mode:?}: k2 in the clear");
            }
            for m in &outs[..8] {
                assert!(!contains(&frame, &m.0), "{mode:?}: a ROT output in the clear");
            }
            // In semi-honest mode the outputs are R^{b} themselves; in malicious mode hashes of them.
        }
    }
}
