//! Memory: one address space of named allocations (global memory), and the
//! LDS of a workgroup.
//!
//! Allocations get 64 KiB-aligned addresses from 4 GiB upwards with an
//! unmapped 64 KiB gap after each, so that an access past the end of one
//! buffer does not land in the next. Bytes are atomics: workgroups run on
//! several threads and may touch the same memory. Read-modify-write atomics
//! take the allocation's lock, so they are atomic with respect to each other.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, RwLock};

/// First address handed out.
const FIRST: u64 = 1 << 32;
/// Allocation alignment and the gap after each allocation.
const ALIGN: u64 = 1 << 16;

/// One named allocation.
#[derive(Debug)]
pub struct Allocation {
    /// Its name (e.g. `arg1`, `kernarg`).
    pub name: String,
    /// Its first address.
    pub base: u64,
    data: Vec<AtomicU8>,
    lock: Mutex<()>,
}

impl Allocation {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// The address space.
#[derive(Debug, Default)]
pub struct Memory {
    allocs: RwLock<Vec<Allocation>>,
}

/// A read or write outside every allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmapped {
    /// The first address accessed.
    pub addr: u64,
    /// The access size.
    pub size: usize,
    /// The nearest allocation below the address and how far past its end the access is.
    pub near: Option<(String, u64, u64)>,
}

impl std::fmt::Display for Unmapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-byte access at {:#x} is outside every allocation",
            self.size, self.addr
        )?;
        if let Some((name, base, len)) = &self.near {
            write!(
                f,
                " (nearest below: `{name}` at {base:#x}, {len} bytes; the access is at byte offset {} of it)",
                self.addr - base
            )?;
        }
        Ok(())
    }
}

impl Memory {
    /// An empty address space.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allocate `bytes.len()` bytes holding `bytes`; returns the address.
    pub fn alloc_bytes(&self, name: &str, bytes: &[u8]) -> u64 {
        let mut allocs = self.allocs.write().unwrap_or_else(|e| e.into_inner());
        let base = allocs
            .last()
            .map(|a| (a.base + a.data.len() as u64).div_ceil(ALIGN) * ALIGN + ALIGN)
            .unwrap_or(FIRST);
        allocs.push(Allocation {
            name: name.to_string(),
            base,
            data: bytes.iter().map(|&b| AtomicU8::new(b)).collect(),
            lock: Mutex::new(()),
        });
        base
    }

    /// Free the allocation at `base` (nothing when there is none). Its
    /// addresses are not handed out again while a later allocation exists.
    pub fn free(&self, base: u64) {
        let mut allocs = self.allocs.write().unwrap_or_else(|e| e.into_inner());
        if let Ok(i) = allocs.binary_search_by_key(&base, |a| a.base) {
            allocs.remove(i);
        }
    }

    /// The allocations that exist.
    pub fn allocations(&self) -> usize {
        self.allocs.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Bytes held by all allocations.
    pub fn allocated(&self) -> u64 {
        let allocs = self.allocs.read().unwrap_or_else(|e| e.into_inner());
        allocs.iter().map(|a| a.data.len() as u64).sum()
    }

    /// The bytes of the allocation at `base`, or `None`.
    pub fn contents(&self, base: u64) -> Option<Vec<u8>> {
        let allocs = self.allocs.read().unwrap_or_else(|e| e.into_inner());
        let a = allocs.iter().find(|a| a.base == base)?;
        Some(a.data.iter().map(|b| b.load(Ordering::Relaxed)).collect())
    }

    /// The address space held for reading and writing the contents of its
    /// allocations (not for allocating or freeing) while the view lives:
    /// one lock for all the accesses of an instruction.
    pub(crate) fn view(&self) -> View<'_> {
        View {
            allocs: self.allocs.read().unwrap_or_else(|e| e.into_inner()),
            last: std::cell::Cell::new(0),
        }
    }

    /// Read `out.len()` bytes at `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), Unmapped> {
        self.view().read(addr, out)
    }

    /// Write `bytes` at `addr`.
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), Unmapped> {
        self.view().write(addr, bytes)
    }

    /// Atomically replace the `size`-byte little-endian value at `addr`
    /// by `f(old)`; returns the old value.
    pub fn atomic(
        &self,
        addr: u64,
        size: usize,
        f: impl FnOnce(u64) -> u64,
    ) -> Result<u64, Unmapped> {
        let view = self.view();
        let (a, o) = view.find(addr, size)?;
        let _guard = a.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut old = 0u64;
        for i in 0..size {
            old |= (a.data[o + i].load(Ordering::Relaxed) as u64) << (8 * i);
        }
        let new = f(old);
        for i in 0..size {
            a.data[o + i].store((new >> (8 * i)) as u8, Ordering::Relaxed);
        }
        Ok(old)
    }
}

/// A [`Memory`] held for one instruction's accesses ([`Memory::view`]),
/// the one place an address is resolved to its allocation (the
/// allocation last used tried first).
pub(crate) struct View<'a> {
    allocs: std::sync::RwLockReadGuard<'a, Vec<Allocation>>,
    last: std::cell::Cell<usize>,
}

impl View<'_> {
    fn find(&self, addr: u64, size: usize) -> Result<(&Allocation, usize), Unmapped> {
        let within =
            |a: &Allocation| addr >= a.base && (addr - a.base) + size as u64 <= a.data.len() as u64;
        if let Some(a) = self.allocs.get(self.last.get()) {
            if within(a) {
                return Ok((a, (addr - a.base) as usize));
            }
        }
        let i = self.allocs.partition_point(|a| a.base <= addr);
        if i > 0 {
            let a = &self.allocs[i - 1];
            if within(a) {
                self.last.set(i - 1);
                return Ok((a, (addr - a.base) as usize));
            }
            return Err(Unmapped {
                addr,
                size,
                near: Some((a.name.clone(), a.base, a.data.len() as u64)),
            });
        }
        Err(Unmapped {
            addr,
            size,
            near: None,
        })
    }

    /// [`Memory::read`].
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), Unmapped> {
        let n = out.len();
        let (a, o) = self.find(addr, n)?;
        for (b, x) in out.iter_mut().zip(&a.data[o..o + n]) {
            *b = x.load(Ordering::Relaxed);
        }
        Ok(())
    }

    /// [`Memory::write`].
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), Unmapped> {
        let (a, o) = self.find(addr, bytes.len())?;
        for (b, x) in bytes.iter().zip(&a.data[o..o + bytes.len()]) {
            x.store(*b, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// The LDS of one workgroup: `size` bytes, the descriptor's
/// `group_segment_fixed_size` plus the launch's dynamic LDS. An access
/// outside it reads 0 and its write is dropped (the emulator's model of
/// gfx9's LDS range check; see the emulator guide); such accesses are
/// counted, once per lane and instruction ([`Lds::out_of_range`]); the
/// sanitizer, which sees every access ([`crate::observe`]), reports each
/// instruction that makes one ([`crate::sanitize::Kind::LdsOutOfBounds`]).
/// The executor's state, like its waves: hidden, not an API.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Lds {
    /// The bytes.
    pub data: Vec<u8>,
    /// Lane accesses (one per lane and instruction) outside the allocation.
    pub out_of_range: u64,
    /// The lane accessing LDS now (set by the executor), and the lanes of
    /// the current instruction already counted in [`Lds::out_of_range`].
    lane: u32,
    counted: u64,
}

impl Lds {
    /// Zero-filled LDS of `size` bytes.
    pub fn new(size: usize) -> Self {
        Lds {
            data: vec![0; size],
            out_of_range: 0,
            lane: 0,
            counted: 0,
        }
    }
    /// A new instruction starts: no lane of it counted yet.
    pub fn begin(&mut self) {
        self.counted = 0;
    }
    /// The lane whose accesses follow (for counting and reports).
    pub fn at_lane(&mut self, lane: usize) {
        self.lane = lane as u32;
    }
    /// Whether `size` bytes at `addr` fit; counts them if not.
    fn fits(&mut self, addr: u32, size: usize) -> bool {
        let end = addr as u64 + size as u64;
        if end <= self.data.len() as u64 {
            return true;
        }
        let bit = 1u64 << (self.lane % 64);
        if self.counted & bit == 0 {
            self.counted |= bit;
            self.out_of_range += 1;
        }
        false
    }
    /// Read a little-endian value of `size` bytes (0 when out of range).
    pub fn read(&mut self, addr: u32, size: usize) -> u64 {
        let a = addr as usize;
        if !self.fits(addr, size) {
            return 0;
        }
        let mut v = 0u64;
        for i in 0..size {
            v |= (self.data[a + i] as u64) << (8 * i);
        }
        v
    }
    /// Read `out.len()` bytes at `addr` (all 0 when any is out of range).
    pub fn read_bytes(&mut self, addr: u32, out: &mut [u8]) {
        if !self.fits(addr, out.len()) {
            out.fill(0);
            return;
        }
        let a = addr as usize;
        out.copy_from_slice(&self.data[a..a + out.len()]);
    }
    /// Write `bytes` at `addr` (all dropped when any is out of range).
    pub fn write_bytes(&mut self, addr: u32, bytes: &[u8]) {
        if !self.fits(addr, bytes.len()) {
            return;
        }
        let a = addr as usize;
        self.data[a..a + bytes.len()].copy_from_slice(bytes);
    }
    /// Write a little-endian value of `size` bytes (dropped when out of range).
    pub fn write(&mut self, addr: u32, size: usize, v: u64) {
        let a = addr as usize;
        if !self.fits(addr, size) {
            return;
        }
        for i in 0..size {
            self.data[a + i] = (v >> (8 * i)) as u8;
        }
    }
}
