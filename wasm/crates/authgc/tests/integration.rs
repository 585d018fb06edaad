//! Every integration test of the crate in one test binary: each binary links the crate and
//! compiles its generic protocol code anew, so one binary per file made these tests most of
//! `cargo test`'s build time. Each file is a module here; run one file's tests with
//! `cargo test -p webmpc-authgc --test integration <file>::`.

#[macro_use]
mod common;

mod clients;
mod fpre;
mod fpre_ashare_verifier;
mod fpre_cheating;
mod instances;
mod online;
mod online_cheating;
mod online_stream;
