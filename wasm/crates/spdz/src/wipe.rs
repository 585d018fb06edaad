//! Best-effort wiping of secrets held in plain values (field elements, shares, bits): a
//! volatile write of the default (zero) value that the compiler may not remove, so that a
//! secret does not linger in freed memory longer than needed.

use core::ops::{Deref, DerefMut};
use core::sync::atomic::{compiler_fence, Ordering};

/// Overwrites every element of `xs` with `T::default()`.
pub fn wipe<T: Copy + Default>(xs: &mut [T]) {
    for x in xs.iter_mut() {
        // SAFETY: `x` is a valid, exclusive, aligned place of type T, and T::default() a valid T.
        unsafe { core::ptr::write_volatile(x, T::default()) };
    }
    compiler_fence(Ordering::SeqCst);
}

/// A vector whose elements are wiped when it is dropped (also on an early return or an error).
pub struct Wiping<T: Copy + Default>(pub Vec<T>);

impl<T: Copy + Default> Drop for Wiping<T> {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

impl<T: Copy + Default> Deref for Wiping<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Copy + Default> DerefMut for Wiping<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}
