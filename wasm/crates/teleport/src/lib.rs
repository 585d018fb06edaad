//! Correlated-randomness teleportation (Lu, Zhang, Zhou, Liu, Zhang, Ren, ESORICS 2021; digest
//! `../shared/papers/notes/fixedkey_and_teleport.md` Part B): a semi-trusted enclave beside the
//! evaluator regenerates correlated randomness from the garbler's seed, so the garbler sends
//! O(input) bytes and does almost no work.
//!
//! * [`rot`]: random-OT teleportation: M^ROT and both parties' sides.
//! * [`gc`]: garbled-circuit teleportation ("silent 2PC"): M^GC, input splitting x2 = x2⁰ ⊕ x2¹,
//!   σ/τ and every check the evaluator makes; [`grr3`] is the garbling scheme.
//! * [`machine`]: the enclave program as a state machine over the messages of [`frames`]; the
//!   simulation backend, the C ABI ([`ffi`]) and tests drive it.
//! * [`seal`] / [`evidence`]: the attested channel (X25519 bound into evidence that answers both
//!   parties' fresh nonces; each party's secret — the garbler's seed, the evaluator's k2 or x2⁰ —
//!   sealed with ChaCha20-Poly1305, and the enclave's replies that would reveal the evaluator's
//!   input or outputs sealed back) and the pinned policy both parties check.
//! * `driver` (feature `std`): the parties over a `webmpc_core::channel::Channel`.
//!
//! # What it protects against
//!
//! One statically corrupted entity among {enclave, garbler, evaluator} (Lu et al. §3). In
//! semi-honest mode ([`Mode::SemiHonest`]) all follow the protocol; the enclave sees the garbler's
//! seed and x2⁰, never x2 (x2¹ goes to the garbler). The enclave's host and the network see
//! neither: both reach the enclave sealed to its attested key (with the simulation backend there
//! is no enclave, and its host sees everything). In malicious mode ([`Mode::Malicious`]) the
//! evaluator checks the enclave's and the garbler's messages against σ/τ and aborts (security with
//! abort, no accountability: the error says which check failed and whom it suspects). An enclave
//! colluding with either party breaks privacy (with the garbler: x2; with the evaluator: x1).
//!
//! # `no_std`
//!
//! The crate is `no_std` + `alloc` without its default `std` feature, so the same code links into
//! an enclave. The proof is the build itself: without `std` the staticlib defines its own
//! `#[panic_handler]`, which cannot coexist with std's, so any dependency that linked std would
//! fail the build (`cargo build -p webmpc-teleport --no-default-features`, which the Open Enclave
//! harness test runs); `--target x86_64-unknown-none` (a target with no std at all) also builds.

#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

mod bytes;
pub mod circuit;
mod error;
pub mod evidence;
pub mod ffi;
pub mod frames;
pub mod gc;
pub mod grr3;
pub mod job;
pub mod machine;
pub mod rot;
pub mod seal;

#[cfg(all(not(feature = "std"), not(test)))]
mod c_runtime;
#[cfg(feature = "std")]
pub mod driver;
#[cfg(feature = "std")]
pub mod local;

pub use bytes::{pack_bits, unpack_bits};
pub use error::{Check, EvidenceRefusal, TeleportError};
pub use job::{JobHeader, JobKind, Mode, Owner};
