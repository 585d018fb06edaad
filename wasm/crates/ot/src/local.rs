//! Both parties of an OT extension in one process, over the in-memory network: what the
//! benchmarks measure (natively and inside Wasm) and what single-process demos use. Outputs are
//! folded into a checksum as they stream, so 10^8 OTs need only a chunk of memory.

use crate::kos::{KosReceiver, KosSender};
use crate::{CotSender, OtError, OtReceiver, OtSender, SessionId};
use futures::join;
use webmpc_core::channel::memory::{pair, run_local, MemoryChannel};
use webmpc_core::channel::ChannelError;
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// Which OT flavour to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Random OT (both messages and the choice random).
    Random,
    /// Δ-OT / COT with the global Δ.
    Cot,
    /// Correlated OT with sender-chosen per-OT correlations.
    Correlated,
    /// Chosen-message OT.
    Chosen,
}

impl Kind {
    /// Parses `random | cot | correlated | chosen`.
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "random" => Kind::Random,
            "cot" => Kind::Cot,
            "correlated" => Kind::Correlated,
            "chosen" => Kind::Chosen,
            _ => return None,
        })
    }
}

/// A connected sender (party 0) and receiver (party 1) with base OTs done.
pub struct LocalPair {
    sender: KosSender<MemoryChannel>,
    receiver: KosReceiver<MemoryChannel>,
}

fn stalled() -> OtError {
    OtError::Channel(ChannelError::Transport { peer: 0, reason: "local parties deadlocked".into() })
}

/// Calls per chosen/correlated batch, so inputs stay bounded too.
const BATCH: usize = 1 << 18;

impl LocalPair {
    /// Runs the base OTs (random Δ).
    pub fn setup() -> Result<LocalPair, OtError> {
        let (a, b) = pair();
        let sid = SessionId::random()?;
        let (s, r) = run_local(async { join!(KosSender::setup_random(a, 1, &sid), KosReceiver::setup(b, 0, &sid)) })
            .map_err(|_| stalled())?;
        Ok(LocalPair { sender: s?, receiver: r? })
    }

    /// Bytes both parties have sent so far.
    pub fn bytes_sent(&self) -> u64 {
        self.sender.channel().sent_bytes() + self.receiver.channel().sent_bytes()
    }

    /// Runs `n` OTs of `kind`; returns a checksum of both parties' outputs (so the work cannot be
    /// optimised away) after checking a sample of them for correctness.
    pub fn run(&mut self, kind: Kind, n: usize) -> Result<u8, OtError> {
        let (s, r) = (&mut self.sender, &mut self.receiver);
        let delta = s.delta();
        // Inputs come from a seeded PRG: the benchmark measures OT, not the system CSPRNG.
        let mut inputs = Prg::from_entropy()?;
        let mut sum = 0u8;
        let mut fold = |b: &Block| sum ^= b.0[0] ^ b.0[15];
        let ok = match kind {
            Kind::Random => {
                let mut first = (Block::ZERO, Block::ZERO);
                let mut got = (false, Block::ZERO);
                let (a, b) = run_local(async {
                    join!(
                        s.random_stream(n, |off, m0, m1| {
                            if off == 0 && !m0.is_empty() {
                                first = (m0[0], m1[0]);
                            }
                            m0.iter().chain(m1).for_each(&mut fold);
                        }),
                        r.random_stream(n, |off, c, m| {
                            if off == 0 && !m.is_empty() {
                                got = (c[0], m[0]);
                            }
                        })
                    )
                })
                .map_err(|_| stalled())?;
                a?;
                b?;
                n == 0 || got.1 == if got.0 { first.1 } else { first.0 }
            }
            Kind::Cot => {
                let choices = random_bits(&mut inputs, n);
                let mut k0 = Block::ZERO;
                let mut m0 = Block::ZERO;
                let (a, b) = run_local(async {
                    join!(
                        s.cot_stream(n, |off, k| {
                            if off == 0 && !k.is_empty() {
                                k0 = k[0];
                            }
                            k.iter().for_each(&mut fold);
                        }),
                        r.cot_stream(&choices, |off, m| {
                            if off == 0 && !m.is_empty() {
                                m0 = m[0];
                            }
                        })
                    )
                })
                .map_err(|_| stalled())?;
                a?;
                b?;
                n == 0 || m0 == if choices[0] { k0 ^ delta } else { k0 }
            }
            Kind::Correlated | Kind::Chosen => {
                let mut ok = true;
                let mut done = 0;
                while done < n {
                    let len = BATCH.min(n - done);
                    let choices = random_bits(&mut inputs, len);
                    let mut msgs = vec![Block::ZERO; 2 * len];
                    inputs.fill_blocks(&mut msgs);
                    let (out, got) = if kind == Kind::Chosen {
                        let pairs: Vec<[Block; 2]> = msgs.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
                        let (a, b) = run_local(async { join!(s.send_chosen(&pairs), r.receive_chosen(&choices)) })
                            .map_err(|_| stalled())?;
                        a?;
                        let got = b?;
                        let want = pairs[0][choices[0] as usize];
                        (want, got)
                    } else {
                        let x = &msgs[..len];
                        let (a, b) = run_local(async { join!(s.send_correlated(x), r.receive_correlated(&choices)) })
                            .map_err(|_| stalled())?;
                        let m0 = a?;
                        let got = b?;
                        let want = if choices[0] { m0[0] ^ x[0] } else { m0[0] };
                        (want, got)
                    };
                    got.iter().for_each(&mut fold);
                    ok &= got[0] == out;
                    done += len;
                }
                ok
            }
        };
        if !ok {
            return Err(OtError::InvalidArgument("local OT run produced inconsistent outputs".into()));
        }
        Ok(sum)
    }
}

fn random_bits(prg: &mut Prg, n: usize) -> Vec<bool> {
    let mut bytes = vec![0u8; n];
    prg.fill_bytes(&mut bytes);
    bytes.iter().map(|b| b & 1 == 1).collect()
}
