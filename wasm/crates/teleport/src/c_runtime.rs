//! The Rust runtime of the `no_std` staticlib, for the Open Enclave build (and its native harness):
//! a panic aborts through the C library's `abort` (a panic must never unwind into C), and heap
//! allocation goes to the C library's allocator (Open Enclave's `oelibc` inside an enclave).
//! Only compiled without `std`; with `std`, std provides both.

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;

extern "C" {
    fn abort() -> !;
    fn malloc(size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
    fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `abort` takes no arguments and never returns.
    unsafe { abort() }
}

struct CAllocator;

// SAFETY: malloc/posix_memalign return suitably aligned blocks of at least `size` bytes or null,
// and free releases exactly what they returned.
unsafe impl GlobalAlloc for CAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= 16 {
            return malloc(layout.size().max(1)) as *mut u8;
        }
        let mut p = core::ptr::null_mut();
        if posix_memalign(&mut p, layout.align(), layout.size().max(1)) != 0 {
            return core::ptr::null_mut();
        }
        p as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        free(ptr as *mut c_void)
    }
}

#[global_allocator]
static ALLOCATOR: CAllocator = CAllocator;

/// The precompiled `alloc` and `core` refer to the unwinding personality routine even though this
/// staticlib is built with `panic = "abort"` and never unwinds; a stub satisfies the linker.
#[no_mangle]
extern "C" fn rust_eh_personality() {}
