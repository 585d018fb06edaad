//! The Wasm module's allocator: the system allocator, but every freed block is zeroed first.
//!
//! Linear memory is one long-lived array that never shrinks. Without this, keys, seeds, PRG
//! output and plaintexts copied in and out by the bindings would stay readable in freed heap
//! memory for the life of the instance. Zeroing runs at memset speed, far below the cost of the
//! kernels that produced the data.

use std::alloc::{GlobalAlloc, Layout, System};

struct ZeroOnFree;

// SAFETY: defers every allocation to `System`; `dealloc` only writes within the block it is
// about to free, which the caller owns until then.
unsafe impl GlobalAlloc for ZeroOnFree {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // A plain memset (memory.fill) for speed; handing the pointer to `black_box` afterwards
        // makes the zeros observable, so they cannot be dropped as dead stores.
        core::ptr::write_bytes(ptr, 0, layout.size());
        core::hint::black_box(ptr);
        System.dealloc(ptr, layout);
    }
    // `realloc` keeps the trait's default (alloc, copy, dealloc), so the old block is zeroed too.
}

#[global_allocator]
static ALLOCATOR: ZeroOnFree = ZeroOnFree;
