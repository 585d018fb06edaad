//! webmpc-spdz: MASCOT (Keller–Orsini–Scholl, CCS 2016), maliciously secure arithmetic MPC for
//! any number n ≥ 2 of parties with a dishonest majority (security with abort), over a 128-bit
//! prime field or GF(2^128).
//!
//! * [`field`]: the two fields behind one trait ([`Fp`], p = 2^128 − 173; [`Gf128`]).
//! * Pure math, no IO: [`cope`] (Π_COPEe), [`gilboa`] (products over random OT), [`share`]
//!   (authenticated shares, LinComb, the MAC-check term), [`program`] (the program format and
//!   its validation), [`online_core`] (comparison circuits).
//! * Drivers over `webmpc_core::channel::Channel`: [`party`] (setup, Π_[[·]] with the input
//!   check, ΠMACCheck, Π_Triple, input masks, random bits), [`online`] (the SPDZ online phase
//!   and the program interpreter), with [`mux`], [`net`] and [`rot`] underneath.
//! * [`clients`]: inputs from external clients that run no preprocessing (the servers hand
//!   them checked triples; the client checks c = a·b and sends x − a), run by
//!   [`Party::run_with_clients`].
//! * [`zero`]: pairwise-seeded zero-sharings, which make every sharing in the store (input masks,
//!   random bits) a uniformly random additive sharing, as Π_[[·]]'s resharing step requires.
//! * [`dealer`] (feature `ideal`): a trusted dealer for the preprocessing, so that the online
//!   phase can be tested on its own.
//!
//! Every check has a cheating-party test in `tests/cheating.rs`; the attack on MASCOT's
//! original OT hash is in `tests/hash_attack.rs`.

pub mod clients;
pub mod cope;
#[cfg(feature = "ideal")]
pub mod dealer;
pub mod error;
pub mod examples;
pub mod field;
pub mod gilboa;
pub mod local;
pub mod mux;
pub mod net;
pub mod online;
pub mod online_core;
pub mod party;
pub mod program;
pub mod rot;
pub mod share;
pub mod store;
#[cfg(any(test, feature = "ideal"))]
pub mod testing;
pub mod wipe;
pub mod zero;

pub use clients::{client_masked_inputs, ClientInput};
pub use error::SpdzError;
pub use field::{Field, FieldKind, Fp, Gf128};
pub use party::Party;
pub use program::{Program, ProgramError};
pub use share::{Share, Triple};
