//! Every integration test of the crate in one test binary: each binary links the crate and
//! compiles its generic protocol code anew, so one binary per file made these tests most of
//! `cargo test`'s build time. Each file is a module here; run one file's tests with
//! `cargo test -p webmpc-spdz --test integration <file>::`.

mod common;

mod cheating;
mod clients;
mod hash_attack;
mod instances;
mod online;
mod preprocessing;
mod privacy;
mod ranges_and_bounds;
mod selective_abort;
