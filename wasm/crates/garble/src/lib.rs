//! Garbled circuits for webmpc.
//!
//! * [`halfgates`]: the pure half-gates garbler and evaluator (free-XOR, point-and-permute,
//!   TCCR hashing), chunk by chunk.
//! * [`yao`]: semi-honest Yao 2PC over a `Channel`, with OT for the evaluator's inputs, streamed
//!   tables, and per-party output assignment.

pub mod halfgates;
pub mod yao;

pub use halfgates::{Evaluator, GarbleError, Garbler};
pub use yao::{
    GateSource, Outputs, Owner, PieceSource, PreparedCircuit, PreparedSource, Reveal, Shape, StreamSource, YaoError,
    YaoEvaluator, YaoGarbler,
};

pub mod local;
