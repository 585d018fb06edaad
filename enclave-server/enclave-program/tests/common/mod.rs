//! Runs teleport jobs against an enclave *process* (the simulation program, or the Open Enclave
//! host built against the harness): garbler and evaluator are the crate's drivers over the
//! in-memory network, and party 2 is a relay to the child's stdin/stdout framing.
#![allow(dead_code)]

use futures::FutureExt;
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use webmpc_core::channel::memory::{network, run_local, MemoryChannel};
use webmpc_core::channel::Channel;
use webmpc_core::prg::Prg;
use webmpc_enclave_program::{read_frame, write_frame};
use webmpc_teleport::driver::{self, EvaluatorSession, GarblerSession, Peers};
use webmpc_teleport::evidence::Policy;
use webmpc_teleport::{JobHeader, TeleportError};

pub struct Enclave {
    child: Child,
    stdin: Option<ChildStdin>,
    from_child: mpsc::Receiver<Option<(u8, Vec<u8>)>>,
}

impl Enclave {
    pub fn spawn(cmd: &mut Command) -> Enclave {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("spawn");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                match read_frame(&mut r) {
                    Ok(Some(f)) => {
                        if tx.send(Some(f)).is_err() {
                            return;
                        }
                    }
                    _ => {
                        let _ = tx.send(None);
                        return;
                    }
                }
            }
        });
        Enclave { stdin: child.stdin.take(), child, from_child: rx }
    }

    /// Waits for the process and returns its exit code.
    pub fn wait(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

struct YieldNow(bool);
impl core::future::Future for YieldNow {
    type Output = ();
    fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> core::task::Poll<()> {
        if self.0 {
            return core::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        core::task::Poll::Pending
    }
}

/// Party 2: the enclave link as the Node service runs it — each link frame from the evaluator
/// (peer byte ‖ message) becomes one stdin frame, each stdout frame one link frame to the
/// evaluator — until the process closed its output. When the evaluator leaves, stdin is closed
/// (between jobs the process exits 0; mid-job it reports PEER_DISCONNECTED).
async fn relay(x: &MemoryChannel, e: &mut Enclave) {
    let mut evaluator_open = true;
    let mut child_open = true;
    while child_open {
        let mut progressed = false;
        while let Ok(item) = e.from_child.try_recv() {
            progressed = true;
            match item {
                Some((peer, msg)) => {
                    let _ = x.send(1, driver::link_frame(peer, &msg)).await;
                }
                None => child_open = false,
            }
        }
        if evaluator_open {
            if let Some(r) = x.recv(1).now_or_never() {
                progressed = true;
                match (r, e.stdin.as_mut()) {
                    (Ok(frame), Some(stdin)) => {
                        let ok = match driver::split_link_frame(&frame) {
                            Ok((peer, msg)) => write_frame(stdin, peer, msg).and_then(|()| stdin.flush()).is_ok(),
                            Err(_) => false,
                        };
                        if !ok {
                            e.stdin = None;
                        }
                    }
                    (Ok(_), None) => {}
                    (Err(_), _) => {
                        evaluator_open = false;
                        e.stdin = None;
                    }
                }
            }
        }
        if !progressed {
            std::thread::sleep(std::time::Duration::from_micros(200));
            YieldNow(false).await;
        }
    }
}

/// GC jobs (one after the other, one attested session) with the enclave in `e`.
pub fn run_gc_jobs(
    e: &mut Enclave,
    jobs: &[JobHeader],
    circuit: &[u8],
    x1: &[bool],
    x2: &[bool],
    (policy, evaluator_policy): (&Policy<'_>, &Policy<'_>),
) -> (Result<(), TeleportError>, Result<Vec<Vec<Vec<bool>>>, TeleportError>) {
    let peers = Peers::default();
    let mut net = network(3).into_iter();
    let (g, v, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let reveal = vec![false; webmpc_teleport::circuit::Header::parse(circuit).unwrap().0.outputs.len()];
    let reveal = &reveal;
    let (a, b, _) = run_local(async {
        futures::join!(
            async move {
                let r = async {
                    let mut prg = Prg::from_entropy().unwrap();
                    let mut s = GarblerSession::connect(&g, &peers, policy, &mut prg).await?;
                    for job in jobs {
                        driver::gc_garbler(&g, &peers, &mut s, job, circuit, x1, reveal, &mut prg).await?;
                    }
                    Ok(())
                }
                .await;
                drop(g);
                r
            },
            async move {
                let r = async {
                    let mut s = EvaluatorSession::connect(&v, &peers, evaluator_policy, &mut Prg::from_entropy().unwrap()).await?;
                    let mut out = Vec::new();
                    for job in jobs {
                        let mut prg = Prg::from_entropy().unwrap();
                        out.push(driver::gc_evaluator(&v, &peers, &mut s, job, circuit, x2, reveal, &mut prg, |_| {}).await?);
                    }
                    Ok(out)
                }
                .await;
                drop(v);
                r
            },
            relay(&x, e)
        )
    })
    .expect("no deadlock");
    (a, b)
}

/// One GC job with the enclave in `e`.
pub fn run_gc(
    e: &mut Enclave,
    job: &JobHeader,
    circuit: &[u8],
    x1: &[bool],
    x2: &[bool],
    policy: &Policy<'_>,
) -> (Result<(), TeleportError>, Result<Vec<Vec<bool>>, TeleportError>) {
    let (a, b) = run_gc_jobs(e, std::slice::from_ref(job), circuit, x1, x2, (policy, policy));
    (a, b.map(|mut v| v.pop().expect("one job")))
}

/// One ROT job with the enclave in `e`; returns the receiver's (choices, outputs) and the sender's pairs.
pub fn run_rot(
    e: &mut Enclave,
    job: &JobHeader,
    (policy, evaluator_policy): (&Policy<'_>, &Policy<'_>),
) -> Result<(Vec<bool>, Vec<webmpc_core::Block>, Vec<[webmpc_core::Block; 2]>), TeleportError> {
    let peers = Peers::default();
    let mut net = network(3).into_iter();
    let (g, v, x) = (net.next().unwrap(), net.next().unwrap(), net.next().unwrap());
    let (mut choices, mut outs, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
    let (a, b, _) = run_local(async {
        futures::join!(
            async {
                let r = async {
                    let mut prg = Prg::from_entropy().unwrap();
                    let mut s = GarblerSession::connect(&g, &peers, policy, &mut prg).await?;
                    driver::rot_sender(&g, &peers, &mut s, job, &mut prg, |_, p| pairs.extend_from_slice(p)).await
                }
                .await;
                drop(g);
                r
            },
            async {
                let r = async {
                    let mut prg = Prg::from_entropy().unwrap();
                    let mut s = EvaluatorSession::connect(&v, &peers, evaluator_policy, &mut prg).await?;
                    driver::rot_receiver(&v, &peers, &mut s, job, &mut prg, |_, c, m| {
                        choices.extend_from_slice(c);
                        outs.extend_from_slice(m);
                    })
                    .await
                }
                .await;
                drop(v);
                r
            },
            relay(&x, e)
        )
    })
    .expect("no deadlock");
    a?;
    b?;
    Ok((choices, outs, pairs))
}

pub fn sid() -> [u8; 32] {
    webmpc_teleport::local::random_sid().unwrap()
}

pub fn aes() -> (webmpc_circuit::Circuit, Vec<bool>, Vec<bool>) {
    let path = webmpc_circuit::testing::reference_dir().join("aes_128.txt");
    let c = webmpc_circuit::Circuit::parse_bristol(&std::fs::read_to_string(path).unwrap()).unwrap();
    let bits = |s: &str| {
        let b: Vec<u8> = (0..32).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect();
        webmpc_circuit::bits_from_bytes_be(&b, 128)
    };
    (c, bits("000102030405060708090a0b0c0d0e0f"), bits("00112233445566778899aabbccddeeff"))
}

pub fn out_hex(out: &[Vec<bool>]) -> String {
    webmpc_circuit::bytes_be_from_bits(&out[0]).iter().map(|b| format!("{b:02x}")).collect()
}
