//! The C ABI of the enclave program, for the Open Enclave shim (`enclave-server/openenclave/`)
//! and its native harness. Declared in `include/webmpc_teleport.h`.
//!
//! Every function checks its pointers and lengths and returns a status code (never panics across
//! the boundary: with `std` a panic is caught and reported as [`WEBMPC_ERR_PANIC`]; without it
//! the staticlib's panic handler aborts). Messages are those of [`crate::frames`]; peers are
//! [`crate::machine::GARBLER`] (0) and [`crate::machine::EVALUATOR`] (1).

use crate::machine::{Config, EnclaveMachine};
use alloc::boxed::Box;
use alloc::string::String;

/// Success.
pub const WEBMPC_OK: i32 = 0;
/// Nothing to pull.
pub const WEBMPC_EMPTY: i32 = 1;
/// A null pointer where one is required.
pub const WEBMPC_ERR_NULL: i32 = -1;
/// A length out of range (entropy not 32 bytes, output not 32 bytes, message too long, peer ≥ 2).
pub const WEBMPC_ERR_LENGTH: i32 = -2;
/// The caller's buffer is too small; the needed size was written to `*len`.
pub const WEBMPC_ERR_BUFFER_TOO_SMALL: i32 = -3;
/// The enclave refused the message: the job failed, `Error` messages are queued for both peers,
/// and [`webmpc_enclave_last_error`] gives the code.
pub const WEBMPC_ERR_REJECTED: i32 = -4;
/// A panic was caught (a bug); the handle must be freed.
pub const WEBMPC_ERR_PANIC: i32 = -5;

/// Longest message `webmpc_enclave_push` accepts ([`crate::frames::MAX_INCOMING_MESSAGE`]).
pub const MAX_MESSAGE: usize = crate::frames::MAX_INCOMING_MESSAGE;
/// Longest message `webmpc_enclave_pull` hands out ([`crate::frames::MAX_OUTGOING_MESSAGE`]): a
/// host buffer of this size never sees [`WEBMPC_ERR_BUFFER_TOO_SMALL`].
pub const MAX_PULL: usize = crate::frames::MAX_OUTGOING_MESSAGE;

/// An enclave program instance (one attested session: a key and any number of jobs).
pub struct WebmpcEnclave {
    machine: EnclaveMachine,
    last_error: String,
}

#[cfg(feature = "std")]
fn guard(f: impl FnOnce() -> i32) -> i32 {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(WEBMPC_ERR_PANIC)
}

#[cfg(not(feature = "std"))]
fn guard(f: impl FnOnce() -> i32) -> i32 {
    f()
}

/// The limits of [`webmpc_enclave_new`] (see [`Config`]); a field of 0 keeps its default.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WebmpcLimits {
    /// [`Config::max_wires`].
    pub max_wires: u32,
    /// [`Config::max_gates`].
    pub max_gates: u64,
    /// [`Config::max_rots`].
    pub max_rots: u64,
    /// [`Config::max_jobs`].
    pub max_jobs: u64,
    /// [`Config::max_memory`].
    pub max_memory: u64,
}

impl WebmpcLimits {
    /// The machine's configuration: these limits over the defaults.
    pub fn config(&self) -> Config {
        let d = Config::default();
        let pick = |v: u64, default: u64| if v == 0 { default } else { v };
        Config {
            max_wires: if self.max_wires == 0 { d.max_wires } else { self.max_wires },
            max_gates: pick(self.max_gates, d.max_gates),
            max_rots: pick(self.max_rots, d.max_rots),
            max_jobs: pick(self.max_jobs, d.max_jobs),
            max_memory: pick(self.max_memory, d.max_memory),
        }
    }
}

/// Creates an instance whose X25519 key comes from `entropy` (exactly 32 fresh random bytes;
/// inside Open Enclave, from `oe_random`). `limits` may be null (every default).
///
/// # Safety
/// `entropy` must point to `entropy_len` readable bytes; `limits` is null or readable; `out` must
/// be writable.
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_new(
    entropy: *const u8,
    entropy_len: usize,
    limits: *const WebmpcLimits,
    out: *mut *mut WebmpcEnclave,
) -> i32 {
    guard(|| {
        if entropy.is_null() || out.is_null() {
            return WEBMPC_ERR_NULL;
        }
        if entropy_len != 32 {
            return WEBMPC_ERR_LENGTH;
        }
        // SAFETY: checked non-null; the caller guarantees 32 readable bytes.
        let e: [u8; 32] = unsafe { core::slice::from_raw_parts(entropy, 32) }.try_into().expect("32 bytes");
        // SAFETY: null or readable by contract.
        let cfg = unsafe { limits.as_ref() }.copied().unwrap_or_default().config();
        let b = Box::new(WebmpcEnclave { machine: EnclaveMachine::new(e, cfg), last_error: String::new() });
        // SAFETY: checked non-null and writable by contract.
        unsafe { *out = Box::into_raw(b) };
        WEBMPC_OK
    })
}

/// Frees an instance (null is ignored).
///
/// # Safety
/// `e` must come from [`webmpc_enclave_new`] and not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_free(e: *mut WebmpcEnclave) {
    if !e.is_null() {
        // SAFETY: produced by Box::into_raw in webmpc_enclave_new.
        drop(unsafe { Box::from_raw(e) });
    }
}

fn write32(out: *mut u8, out_len: usize, v: [u8; 32]) -> i32 {
    if out.is_null() {
        return WEBMPC_ERR_NULL;
    }
    if out_len != 32 {
        return WEBMPC_ERR_LENGTH;
    }
    // SAFETY: checked non-null; the caller guarantees 32 writable bytes.
    unsafe { core::ptr::copy_nonoverlapping(v.as_ptr(), out, 32) };
    WEBMPC_OK
}

/// Writes the enclave's X25519 public key (32 bytes).
///
/// # Safety
/// `e` is a live instance; `out` points to `out_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_public_key(e: *const WebmpcEnclave, out: *mut u8, out_len: usize) -> i32 {
    guard(|| match unsafe { e.as_ref() } {
        None => WEBMPC_ERR_NULL,
        Some(e) => write32(out, out_len, e.machine.public_key()),
    })
}

/// After a message from [`webmpc_enclave_push`]: whether the instance wants evidence. If so,
/// writes the 32-byte report data to attest (`oe_get_evidence`'s custom claims: the enclave's key
/// and the session's challenge) and returns [`WEBMPC_OK`]; otherwise [`WEBMPC_EMPTY`]. Answer with
/// [`webmpc_enclave_attest`].
///
/// # Safety
/// `e` is a live instance; `out` points to `out_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_evidence_request(e: *const WebmpcEnclave, out: *mut u8, out_len: usize) -> i32 {
    guard(|| match unsafe { e.as_ref() } {
        None => WEBMPC_ERR_NULL,
        Some(e) => match e.machine.evidence_request() {
            Some(rd) => write32(out, out_len, rd),
            None => WEBMPC_EMPTY,
        },
    })
}

/// Hands over the evidence of `format` (1 simulated, 2 Open Enclave) for the requested report
/// data; the instance queues the `Evidence` message for both peers. [`WEBMPC_ERR_REJECTED`] if no
/// evidence was requested or the evidence is too long.
///
/// # Safety
/// `e` is a live instance; `evidence` points to `evidence_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_attest(e: *mut WebmpcEnclave, format: u8, evidence: *const u8, evidence_len: usize) -> i32 {
    guard(|| {
        let Some(e) = (unsafe { e.as_mut() }) else { return WEBMPC_ERR_NULL };
        if evidence.is_null() {
            return WEBMPC_ERR_NULL;
        }
        if evidence_len > MAX_MESSAGE {
            return WEBMPC_ERR_LENGTH;
        }
        // SAFETY: checked non-null; the caller guarantees the length.
        let ev = unsafe { core::slice::from_raw_parts(evidence, evidence_len) };
        match e.machine.attest(format, ev) {
            Ok(()) => WEBMPC_OK,
            Err(err) => {
                e.last_error = String::from(err.code());
                WEBMPC_ERR_REJECTED
            }
        }
    })
}

fn copy_out(msg: &[u8], buf: *mut u8, cap: usize, len: *mut usize) -> i32 {
    // SAFETY: `len` checked non-null by every caller.
    unsafe { *len = msg.len() };
    if msg.len() > cap {
        return WEBMPC_ERR_BUFFER_TOO_SMALL;
    }
    // SAFETY: `buf` has `cap >= msg.len()` writable bytes (non-null when cap > 0).
    if !msg.is_empty() {
        unsafe { core::ptr::copy_nonoverlapping(msg.as_ptr(), buf, msg.len()) };
    }
    WEBMPC_OK
}

/// Hands the enclave one message from peer `from` (0 garbler, 1 evaluator).
///
/// # Safety
/// `e` is a live instance; `msg` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_push(e: *mut WebmpcEnclave, from: u8, msg: *const u8, len: usize) -> i32 {
    guard(|| {
        let Some(e) = (unsafe { e.as_mut() }) else { return WEBMPC_ERR_NULL };
        if msg.is_null() && len > 0 {
            return WEBMPC_ERR_NULL;
        }
        if len > MAX_MESSAGE || from > 1 {
            return WEBMPC_ERR_LENGTH;
        }
        // SAFETY: checked; the caller guarantees `len` readable bytes.
        let m = if len == 0 { &[][..] } else { unsafe { core::slice::from_raw_parts(msg, len) } };
        match e.machine.push(from, m) {
            Ok(()) => WEBMPC_OK,
            Err(err) => {
                e.last_error = String::from(err.code());
                WEBMPC_ERR_REJECTED
            }
        }
    })
}

/// Takes the next message the enclave sends: its destination peer to `*to`, the bytes into
/// `buf`, the length to `*len`. [`WEBMPC_EMPTY`] if there is none; if `cap` is too small,
/// [`WEBMPC_ERR_BUFFER_TOO_SMALL`] with the needed length in `*len` (the message stays queued).
///
/// # Safety
/// `e` is a live instance; `to` and `len` are writable; `buf` points to `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_pull(
    e: *mut WebmpcEnclave,
    to: *mut u8,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> i32 {
    guard(|| {
        let Some(e) = (unsafe { e.as_mut() }) else { return WEBMPC_ERR_NULL };
        if to.is_null() || len.is_null() || (buf.is_null() && cap > 0) {
            return WEBMPC_ERR_NULL;
        }
        let Some(n) = e.machine.next_len() else { return WEBMPC_EMPTY };
        if n > cap {
            // SAFETY: checked non-null.
            unsafe { *len = n };
            return WEBMPC_ERR_BUFFER_TOO_SMALL;
        }
        let (peer, msg) = e.machine.pull().expect("next_len saw a message");
        // SAFETY: checked non-null.
        unsafe { *to = peer };
        copy_out(&msg, buf, cap, len)
    })
}

/// 0 while a job is in progress, 1 while idle (no job started yet, or the last one finished and
/// the next may start: an instance is one attested session of many jobs), 2 once it failed.
///
/// # Safety
/// `e` is a live instance or null (null gives [`WEBMPC_ERR_NULL`]).
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_status(e: *const WebmpcEnclave) -> i32 {
    guard(|| match unsafe { e.as_ref() } {
        None => WEBMPC_ERR_NULL,
        Some(e) if e.machine.is_idle() => 1,
        Some(e) if e.machine.is_failed() => 2,
        Some(_) => 0,
    })
}

/// Copies the code of the last refused message (ASCII, e.g. `PARAMETER_MISMATCH`), as
/// [`webmpc_enclave_pull`] copies messages.
///
/// # Safety
/// As [`webmpc_enclave_pull`].
#[no_mangle]
pub unsafe extern "C" fn webmpc_enclave_last_error(e: *const WebmpcEnclave, buf: *mut u8, cap: usize, len: *mut usize) -> i32 {
    guard(|| {
        let Some(e) = (unsafe { e.as_ref() }) else { return WEBMPC_ERR_NULL };
        if len.is_null() || (buf.is_null() && cap > 0) {
            return WEBMPC_ERR_NULL;
        }
        copy_out(e.last_error.as_bytes(), buf, cap, len)
    })
}
