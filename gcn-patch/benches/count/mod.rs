//! A counting global allocator: bytes allocated, live and the peak of live
//! bytes, for the benches and tests that measure memory without clocks
//! (`benches/line_model.rs`, `tests/it/line_model.rs`, `tests/it/scale.rs`,
//! `tests/it/library_scale.rs`). Each binary that includes this module installs
//! it as its global allocator.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Forwards to the system allocator and counts.
pub struct Counting;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(n: usize) {
    ALLOCATED.fetch_add(n, Relaxed);
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every call forwards to the system allocator with the same
// arguments; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Relaxed);
        grow(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Bytes live on the heap now.
pub fn live() -> usize {
    LIVE.load(Relaxed)
}

/// `f`'s result, the bytes it left live (live after minus live before)
/// and its peak of live bytes above what was live when it started.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let out = f();
    let kept = LIVE.load(Relaxed).saturating_sub(base);
    let peak = PEAK.load(Relaxed).saturating_sub(base);
    (out, kept, peak)
}

/// `f`'s result, the bytes it allocated (freed or not) and its peak of live
/// bytes above what was live when it started.
pub fn measure_allocated<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let before = ALLOCATED.load(Relaxed);
    let out = f();
    let allocated = ALLOCATED.load(Relaxed) - before;
    let peak = PEAK.load(Relaxed).saturating_sub(base);
    (out, allocated, peak)
}
