//! What every webmpc Wasm module shares: the JS error shape for kernel failures, the stack scrub
//! around every entry point, the zero-on-free allocator, the `Channel` over a JS `Transport`, and
//! the protocol-error helpers. The package ships one Wasm module per protocol family (the main
//! `webmpc-bindings`, `webmpc-bindings-mascot`, `webmpc-bindings-teleport`), each a cdylib that
//! links this crate, so each module gets the same secret hygiene from one copy of the code.
//!
//! **No `#[wasm_bindgen]` exports here**: every exported function of a linked rlib is exported
//! by the cdylib too, so an export here would land in every module.
//!
//! **Secret hygiene.** Wasm's shadow stack lives in linear memory, which outlives every call, so
//! whatever a call spills there (cipher state, labels, Δ) stays readable until overwritten. Every
//! synchronous entry point that touches secrets runs inside [`scrubbed`]; every asynchronous one
//! (OT, Yao) also builds its future inside `scrubbed` (the future is assembled on the stack before
//! it is boxed) and runs it through [`spawn_scrubbed`], which clears the stack after each step of
//! the future resolves, including the last. Freed heap memory is zeroed by the allocator
//! ([`zeroing_alloc`], the `#[global_allocator]` of every module that links this crate).

pub mod channel;
pub mod protocol;
pub mod spdz;
mod zeroing_alloc;

use wasm_bindgen::prelude::*;
use webmpc_core::KernelError;

pub fn js_error(e: KernelError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name("KernelError");
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(e.code()));
    err.into()
}

pub type JsResult<T> = Result<T, JsValue>;

/// Bytes of shadow stack cleared after every call. The kernels' deepest frames (transpose tiles,
/// bitsliced AES state spills, hash scratch) total well under this (largest frame: ~13 KiB).
const STACK_SCRUB_BYTES: usize = 32 * 1024;

/// Runs `f`, then zeroes the stack region its callees used. Wasm's shadow stack lives in linear
/// memory, which outlives the call: without this, spilled cipher state, keystream and plaintext
/// would stay readable there until overwritten. The scrub frame sits at the same depth the
/// kernels' frames did, so it overwrites them.
pub fn scrubbed<T>(f: impl FnOnce() -> T) -> T {
    let out = below(f);
    scrub_stack();
    out
}

/// Calls `f` in a frame of its own. Without it `f` may be inlined into the caller, and its locals
/// (a parsed Δ, a key) would then live in the caller's frame, above the region the scrub that
/// follows overwrites; in a frame of their own they sit exactly where the scrub frame goes next.
#[inline(never)]
pub fn below<T>(f: impl FnOnce() -> T) -> T {
    f()
}

#[inline(never)]
pub fn scrub_stack() {
    let mut area = [0u8; STACK_SCRUB_BYTES];
    // The zeros are observable through black_box, so they cannot be elided as dead stores.
    core::hint::black_box(&mut area);
}

/// Bytes of shadow stack cleared after every poll of a protocol future. Deeper than for the
/// kernels: a poll runs the protocol's whole async call chain (KOS chunk, transpose, hashing,
/// garbling batch) below the executor's frames; measured at under 16 KiB today, with room for
/// protocols that nest deeper.
const FUTURE_STACK_SCRUB_BYTES: usize = 64 * 1024;

#[inline(never)]
fn scrub_future_stack() {
    let mut area = [0u8; FUTURE_STACK_SCRUB_BYTES];
    core::hint::black_box(&mut area);
}

/// A future that clears the stack region its inner future used after every poll: a poll is one
/// step of the protocol (it ends where the protocol awaits the network, or where it completes).
/// The scrub frame sits directly below this poll's frame, where the inner poll's frames were.
/// The inner future is boxed, so pinning needs no unsafe code.
pub struct Scrubbed<F>(core::pin::Pin<Box<F>>);

impl<F: core::future::Future> core::future::Future for Scrubbed<F> {
    type Output = F::Output;

    fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> core::task::Poll<F::Output> {
        // In a frame of its own (see `below`): an inlined inner poll would keep its locals in
        // this frame, above the scrubbed region.
        let out = below(|| self.0.as_mut().poll(cx));
        scrub_future_stack();
        out
    }
}

/// Runs a protocol future as a JS `Promise`, scrubbing the stack after each of its steps. Call it
/// inside [`scrubbed`], so the stack copy of the future made before it is boxed is cleared too.
pub fn spawn_scrubbed<F>(future: F) -> js_sys::Promise
where
    F: core::future::Future<Output = Result<JsValue, JsValue>> + 'static,
{
    wasm_bindgen_futures::future_to_promise(Scrubbed(Box::pin(future)))
}

/// A size argument from JS. Taken as `f64` because wasm-bindgen would pass a `usize` through
/// ToInt32, silently wrapping 2^32 + 16 to 16 and truncating 1.5 to 1: here anything but a whole
/// number in `0..=limit` is a typed error, before any allocation.
pub fn js_size(what: &'static str, n: f64, limit: usize) -> JsResult<usize> {
    if !(n.is_finite() && n >= 0.0 && n.fract() == 0.0) {
        return Err(js_error(KernelError::InvalidDimension { what, detail: "must be a non-negative integer".into() }));
    }
    if n > limit as f64 {
        return Err(js_error(KernelError::TooLarge { what, requested: format!("{n}"), limit }));
    }
    Ok(n as usize)
}
