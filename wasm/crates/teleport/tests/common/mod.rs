//! Shared by the integration tests: reference circuits in binary form, GC jobs, bit helpers.
#![allow(dead_code)]

use std::sync::OnceLock;
use webmpc_circuit::{bits_from_bytes_be, Circuit};
use webmpc_teleport::{JobHeader, JobKind, Mode, Owner};

pub const FILES: [&str; 7] =
    ["aes_128.txt", "sha256.txt", "adder64.txt", "sub64.txt", "mult64.txt", "neg64.txt", "zero_equal.txt"];

/// Each reference circuit parsed once per test binary.
pub fn circuit(name: &str) -> &'static Circuit {
    static CACHE: OnceLock<Vec<(&'static str, Circuit)>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        FILES
            .iter()
            .map(|&f| {
                let path = webmpc_circuit::testing::reference_dir().join(f);
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                (f, Circuit::parse_bristol(&text).unwrap_or_else(|e| panic!("{f}: {e}")))
            })
            .collect()
    });
    &all.iter().find(|(f, _)| *f == name).unwrap_or_else(|| panic!("no circuit {name}")).1
}

/// A GC job for `c` with the given owners, a fixed or random session id.
pub fn gc_job(c: &Circuit, owners: &[Owner], mode: Mode, sid: [u8; 32]) -> JobHeader {
    JobHeader { sid, mode, kind: JobKind::Gc { circuit_hash: c.content_hash(), owners: owners.to_vec() } }
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

pub fn hex_bits(s: &str) -> Vec<bool> {
    let b = unhex(s);
    bits_from_bytes_be(&b, 8 * b.len() as u32)
}

pub fn u64_bits(x: u64) -> Vec<bool> {
    (0..64).map(|k| (x >> k) & 1 == 1).collect()
}

pub fn bits_u64(bits: &[bool]) -> u64 {
    bits.iter().enumerate().fold(0, |acc, (k, &b)| acc | (u64::from(b) << k))
}

pub const MODES: [Mode; 2] = [Mode::SemiHonest, Mode::Malicious];

use webmpc_core::channel::Channel;
use webmpc_core::prg::Prg;
use webmpc_teleport::driver::{self, EvaluatorSession, GarblerSession, Peers};
use webmpc_teleport::{local, TeleportError};

pub const PEERS: Peers = Peers { garbler: 0, evaluator: 1, enclave: 2 };

/// P1: takes the relayed evidence (the in-process enclave's policy), then one GC job.
pub async fn garbler<C: Channel>(
    ch: &C,
    job: &JobHeader,
    bin: &[u8],
    x1: &[bool],
    reveal: &[bool],
    prg: &mut Prg,
) -> Result<Vec<Option<Vec<bool>>>, TeleportError> {
    let mut s = GarblerSession::connect(ch, &PEERS, &local::policy(), prg).await?;
    driver::gc_garbler(ch, &PEERS, &mut s, job, bin, x1, reveal, prg).await
}

/// P2: checks and relays the evidence, then one GC job.
pub async fn evaluator<C: Channel>(
    ch: &C,
    job: &JobHeader,
    bin: &[u8],
    x2: &[bool],
    reveal: &[bool],
    prg: &mut Prg,
) -> Result<Vec<Vec<bool>>, TeleportError> {
    let mut s = EvaluatorSession::connect(ch, &PEERS, &local::policy(), prg).await?;
    driver::gc_evaluator(ch, &PEERS, &mut s, job, bin, x2, reveal, prg, |_| {}).await
}

/// Edits the inner message of a link frame for peer `peer`, if `frame` is one.
pub fn edit_link(frame: &mut Vec<u8>, peer: u8, edit: impl FnOnce(&mut Vec<u8>)) {
    if frame.first() == Some(&peer) {
        let mut inner = frame[1..].to_vec();
        edit(&mut inner);
        frame.truncate(1);
        frame.extend_from_slice(&inner);
    }
}

use core::cell::RefCell;
use futures::join;
use webmpc_core::channel::memory::run_local;
use webmpc_core::channel::{ChannelError, PartyId};
use webmpc_core::Block;
use webmpc_teleport::machine::EnclaveMachine;

/// A channel that records every message it sends (`true`) and receives (`false`), in order.
pub struct Recorder<'a, C> {
    pub inner: C,
    pub log: &'a RefCell<Vec<(bool, PartyId, Vec<u8>)>>,
}

impl<C: Channel> Channel for Recorder<'_, C> {
    fn party(&self) -> PartyId {
        self.inner.party()
    }
    fn parties(&self) -> usize {
        self.inner.parties()
    }
    async fn send(&self, to: PartyId, msg: Vec<u8>) -> Result<(), ChannelError> {
        self.log.borrow_mut().push((true, to, msg.clone()));
        self.inner.send(to, msg).await
    }
    async fn recv(&self, from: PartyId) -> Result<Vec<u8>, ChannelError> {
        let m = self.inner.recv(from).await?;
        self.log.borrow_mut().push((false, from, m.clone()));
        Ok(m)
    }
}

/// The honest enclave on link `x`, attesting with [`local::attest`], until P2 closes the link.
async fn enclave<X: Channel>(x: X, machine: &mut EnclaveMachine) -> Result<(), TeleportError> {
    let r = driver::enclave_party(&x, &PEERS, machine, &local::attest).await;
    drop(x);
    r
}

/// What the garbler and the evaluator of one GC job end with.
pub type GcOutcome = (Result<Vec<Option<Vec<bool>>>, TeleportError>, Result<Vec<Vec<bool>>, TeleportError>);

/// One GC job over the given channels (garbler `g`, evaluator `e`, enclave link `x`), the enclave
/// being `machine` attesting with [`local::attest`]; fresh randomness for both parties.
pub fn gc_run<G: Channel, E: Channel, X: Channel>(
    g: G,
    e: E,
    x: X,
    machine: &mut EnclaveMachine,
    job: &JobHeader,
    bin: &[u8],
    (x1, x2): (&[bool], &[bool]),
) -> GcOutcome {
    let (a, b, _) = run_local(async {
        join!(
            async move {
                let r = garbler(&g, job, bin, x1, &[false], &mut Prg::from_entropy().unwrap()).await;
                drop(g);
                r
            },
            async move {
                let r = evaluator(&e, job, bin, x2, &[false], &mut Prg::from_entropy().unwrap()).await;
                drop(e);
                r
            },
            enclave(x, machine)
        )
    })
    .expect("no deadlock");
    (a, b)
}

/// The sender's result, and the receiver's (choices, outputs), of one ROT job.
pub type RotOutcome = (Result<(), TeleportError>, Result<(Vec<bool>, Vec<Block>), TeleportError>);

/// One ROT job over the given channels, as [`gc_run`].
pub fn rot_run<G: Channel, E: Channel, X: Channel>(g: G, e: E, x: X, machine: &mut EnclaveMachine, job: &JobHeader) -> RotOutcome {
    let pol = local::policy();
    let pol = &pol;
    let (a, b, _) = run_local(async {
        join!(
            async move {
                let r = async {
                    let mut prg = Prg::from_entropy().unwrap();
                    let mut s = GarblerSession::connect(&g, &PEERS, pol, &mut prg).await?;
                    driver::rot_sender(&g, &PEERS, &mut s, job, &mut prg, |_, _| {}).await
                }
                .await;
                drop(g);
                r
            },
            async move {
                let r = async {
                    let mut prg = Prg::from_entropy().unwrap();
                    let mut s = EvaluatorSession::connect(&e, &PEERS, pol, &mut prg).await?;
                    let (mut choices, mut outs) = (Vec::new(), Vec::new());
                    driver::rot_receiver(&e, &PEERS, &mut s, job, &mut prg, |_, c, m| {
                        choices.extend_from_slice(c);
                        outs.extend_from_slice(m);
                    })
                    .await?;
                    Ok((choices, outs))
                }
                .await;
                drop(e);
                r
            },
            enclave(x, machine)
        )
    })
    .expect("no deadlock");
    (a, b)
}
