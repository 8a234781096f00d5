//! Observers: what the executor reports of each instruction a wave executes,
//! for tools that stand outside it (a timing model, counters, traces, the
//! sanitizer, [`crate::sanitize`]).
//!
//! The executor knows no observer: it only fills an [`Event`] — the
//! workgroup, the wave, the instruction (its index in the
//! [`Program`](crate::decode::Program)), the exec mask it issued with and,
//! for a memory instruction, every lane's [`Access`] — and hands it to the
//! [`Observer`] of the workgroup, if the dispatch has one
//! ([`crate::dispatch::run_observed`]). Nothing in the executor's semantics
//! depends on an observer. An observer that follows values asks for an
//! [`Issue`] before each instruction ([`Observer::wants_issue`]: the wave's
//! state before it runs) and for the accesses as the executor makes them
//! ([`Observer::pieces`]); both are asked once (per workgroup, or per slice
//! of a wave), never per instruction, and an unobserved run pays nothing.
//!
//! Workgroups run in parallel; each gets its own observer from
//! [`Observe::workgroup`], which sees that workgroup's waves in the order
//! the emulator ran them (a wave runs until it blocks at `s_barrier` or
//! ends, or for a seeded slice): an observer that needs a machine's order
//! (a timing model) keeps one stream per wave and schedules them itself.
//! [`crate::dispatch::run_observed`] returns the observers in workgroup
//! order, so what they report does not depend on the thread count.

use crate::decode::Instruction;
use crate::exec::Wave;

/// The memory an [`Access`] reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    /// Global memory through `global_*`, `flat_*` or `buffer_*`.
    Global,
    /// The workgroup's LDS (`ds_*`, a flat address in the LDS aperture, and
    /// the LDS side of an LDS DMA).
    Lds,
    /// A lane's private (scratch) memory.
    Private,
    /// Scalar memory (`s_load_*`, `s_buffer_load_*`, scalar stores): one
    /// access for the wave, lane 0.
    Scalar,
}

/// What an access does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// Reads.
    Read,
    /// Writes.
    Write,
    /// Reads and writes atomically.
    Atomic,
}

/// One lane's access to memory by one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// The lane (0 for scalar memory).
    pub lane: u8,
    /// The memory.
    pub space: Space,
    /// Read, write or atomic.
    pub kind: AccessKind,
    /// The address: a byte offset in LDS or in the lane's private segment, a
    /// virtual address in global and scalar memory.
    pub addr: u64,
    /// Bytes accessed.
    pub bytes: u32,
}

/// An instruction a wave is about to execute, with the wave's state before
/// it: for observers that follow values (the sanitizer's shadow registers)
/// or check operands against what is in flight.
#[derive(Debug, Clone, Copy)]
pub struct Issue<'a> {
    /// The workgroup.
    pub workgroup: [u32; 3],
    /// The wave's index in its workgroup.
    pub wave: u32,
    /// The instruction's index in [`Program::instructions`](crate::decode::Program::instructions).
    pub index: usize,
    /// The instruction.
    pub instruction: &'a Instruction,
    /// The wave's registers and state before it runs (read only).
    pub state: &'a Wave,
}

/// One executed instruction of one wave.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    /// The workgroup.
    pub workgroup: [u32; 3],
    /// The wave's index in its workgroup.
    pub wave: u32,
    /// The instruction's index in [`Program::instructions`](crate::decode::Program::instructions).
    pub index: usize,
    /// The exec mask the instruction issued with.
    pub exec: u64,
    /// Its memory accesses, in the order the executor made them (empty for
    /// an instruction that touches no memory, and for a lane the exec mask
    /// or an out-of-range buffer access disables).
    pub accesses: &'a [Access],
    /// The wave's registers and state after it ran (read only).
    pub state: &'a Wave,
}

/// Subscribes to one workgroup's executed instructions.
pub trait Observer: Send {
    /// A wave is about to execute an instruction (default: nothing). Called
    /// only when [`Observer::wants_issue`] says so.
    fn issue(&mut self, _issue: &Issue<'_>) {}
    /// Whether to call [`Observer::issue`] before each instruction
    /// (default: no; asked once per slice of a wave).
    fn wants_issue(&self) -> bool {
        false
    }
    /// Whether [`Event::accesses`] should list each access as the executor
    /// makes it (`true`: a wide access made in pieces, such as a
    /// `ds_read2`'s two halves, stays in pieces) instead of merged
    /// (default).
    fn pieces(&self) -> bool {
        false
    }
    /// A wave executed an instruction.
    fn executed(&mut self, event: &Event<'_>);
    /// Every wave of the workgroup that has not ended waited at a barrier,
    /// and they are all released.
    fn barrier_released(&mut self) {}
}

/// Makes an [`Observer`] for each workgroup of a dispatch.
pub trait Observe: Sync {
    /// The observer of one workgroup.
    type Workgroup: Observer;
    /// A fresh observer for workgroup `wg`.
    fn workgroup(&self, wg: [u32; 3]) -> Self::Workgroup;
    /// Whether to run workgroup `wg` at all (default: every workgroup). A
    /// workgroup this declines is not run and gets no observer: a sampling
    /// profiler runs only the workgroups it times. Its stores are then
    /// missing from memory, so only an observer that needs no result
    /// declines.
    fn runs(&self, _wg: [u32; 3]) -> bool {
        true
    }
    /// The linear indices (x fastest) of the only workgroups to run, when
    /// they are a known few of the grid (default `None`: every workgroup
    /// is asked [`Observe::runs`]). The dispatch then visits these alone,
    /// however large the grid, and its work limit counts these alone;
    /// indices beyond the grid are ignored.
    fn only(&self) -> Option<Vec<u64>> {
        None
    }
}

/// The accesses of the instruction executing now, filled by the executor
/// only when someone observes (one buffer per workgroup, reused: no
/// allocation per instruction once it has grown).
#[derive(Debug, Default)]
pub(crate) struct Trace {
    /// Recording is on.
    pub on: bool,
    /// Each access as it is made, unmerged ([`Observer::pieces`]).
    pub pieces: bool,
    /// The current instruction's accesses.
    pub accesses: Vec<Access>,
}

impl Trace {
    /// Record one access (nothing when recording is off).
    #[inline]
    pub fn note(&mut self, lane: usize, space: Space, kind: AccessKind, addr: u64, bytes: usize) {
        if !self.on {
            return;
        }
        let a = Access {
            lane: lane as u8,
            space,
            kind,
            addr,
            bytes: bytes as u32,
        };
        if self.pieces {
            self.accesses.push(a);
        } else {
            push_merged(&mut self.accesses, a);
        }
    }
}

/// Append `a` to `list`, merged into the last access when it continues it:
/// a wide access the executor makes in pieces (a buffer load's dwords) is
/// one access.
pub(crate) fn push_merged(list: &mut Vec<Access>, a: Access) {
    if let Some(last) = list.last_mut() {
        if last.lane == a.lane
            && last.space == a.space
            && last.kind == a.kind
            && last.addr.wrapping_add(last.bytes as u64) == a.addr
        {
            last.bytes += a.bytes;
            return;
        }
    }
    list.push(a);
}
