//! webmpc-core: the kernels every webmpc protocol is built on.
//!
//! Everything here is a batch API over [`Block`]s (128-bit values). SIMD lives behind these
//! functions; callers never see `v128` or `__m128i`.
//!
//! * [`aes`]: AES-128, constant-time. In Wasm it is bitsliced over SIMD128 (8 blocks per step);
//!   natively it uses AES-NI when the CPU has it and the same bitsliced code on a portable
//!   128-bit lane otherwise. The fixed public key used for hashing is expanded and bitsliced once.
//! * [`hash`]: the fixed-key hashes of Guo–Katz–Wang–Yu: CR, CCR (with the linear orthomorphism σ)
//!   and TCCR (tweakable, used wherever OT extension hashes rows).
//! * [`prg`]: an AES-CTR PRG seeded from a block or from the platform CSPRNG ([`random`]).
//! * [`gf128`]: constant-time multiplication in GF(2^128) (no carry-less multiply instruction in Wasm).
//! * [`transpose`]: 128 × n bit-matrix transposition for OT extension.
//! * [`channel`]: the `Channel` trait every protocol talks through, and an in-memory network.
//!
//! Secrets never reach a branch condition or a memory index in this crate.
//!
//! With the default `std` feature off, the crate is `no_std` + `alloc` (the teleport enclave build
//! links it that way): [`channel`] and [`random`] are left out, and CPU features are those the
//! build enables (`-C target-feature=+aes`) rather than detected at run time.

#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod aes;
pub mod block;
#[cfg(feature = "std")]
pub mod channel;
pub mod count;
pub mod error;
pub mod gf128;
pub mod hash;
pub mod prg;
#[cfg(feature = "std")]
pub mod random;
mod simd;
pub mod transpose;

pub use block::Block;
pub use error::KernelError;
