//! Profiling an emulated launch: exact counters ([`counters`]) from the
//! executor's observed stream ([`crate::observe`]), a device table
//! ([`device`]), and a trace-driven timing model ([`model`]) that
//! re-schedules the recorded per-wave streams on one CU.
//!
//! The executor knows nothing of this module: [`Profiler`] is an
//! [`Observe`]r that keeps, for each workgroup it is asked to run, one
//! stream of [`Step`]s per wave — the instruction, its exec mask and what
//! its memory accesses cost ([`MemCost`], computed on the fly from the
//! lanes' addresses so that no address is kept). Workgroups the profiler
//! does not [sample](Profiler::sample) are not run at all
//! ([`Observe::runs`]).

pub mod counters;
pub mod device;
pub mod model;

use std::collections::BTreeSet;

use crate::decode::Program;
use crate::observe::{Access, AccessKind, Event, Observe, Observer, Space};

pub use counters::{Class, Counters, LdsRule};

/// What one wave-instruction's memory accesses cost, from its lanes'
/// addresses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemCost {
    /// Bytes the active lanes requested (any space).
    pub bytes: u32,
    /// Distinct 64-byte lines of global memory touched.
    pub lines64: u16,
    /// Distinct 128-byte lines of global memory touched.
    pub lines128: u16,
    /// LDS cycles: the phases the access is served in plus the extra
    /// cycles of bank conflicts ([`LdsRule::cycles`]).
    pub lds_cycles: u16,
    /// LDS bank-conflict cycles (the extra cycles alone).
    pub lds_conflicts: u16,
    /// The accesses reached LDS.
    pub lds: bool,
    /// The accesses reached global memory (or private memory, which goes
    /// the same way through the vector memory path).
    pub global: bool,
    /// Some access wrote.
    pub writes: bool,
}

/// One executed wave-instruction of a recorded stream.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// Index into [`Program::instructions`].
    pub index: u32,
    /// The exec mask it issued with.
    pub exec: u64,
    /// Its memory cost (its global lines are in
    /// [`WorkgroupTrace::lines`]).
    pub mem: MemCost,
}

/// One workgroup's recorded waves.
#[derive(Debug, Clone, Default)]
pub struct WorkgroupTrace {
    /// The workgroup.
    pub wg: [u32; 3],
    /// Each wave's executed instructions, in program order.
    pub waves: Vec<Vec<Step>>,
    /// Global 64-byte lines per wave-instruction, for the timing model's
    /// caches: `lines[wave][k]` are the lines of the `k`-th step of that
    /// wave that touched global memory.
    pub lines: Vec<Vec<Vec<u64>>>,
    /// Barriers released.
    pub barriers: u32,
    /// Lanes per wave: 32 (RDNA's wave32) or 64; 0 means 64.
    pub wave_size: u32,
}

/// Records a [`WorkgroupTrace`] per sampled workgroup.
#[derive(Debug, Clone)]
pub struct Profiler {
    /// How LDS serves an access.
    pub rule: LdsRule,
    /// Linear indices (x fastest) of the workgroups to run; `None`: all.
    pub sample: Option<BTreeSet<u64>>,
    /// The grid, to turn a workgroup id into its linear index.
    pub grid: [u32; 3],
    /// Lanes per wave of the kernel (32 or 64), recorded in each trace.
    pub wave_size: u32,
}

impl Profiler {
    /// A profiler of every workgroup of `grid`, of a wave64 kernel.
    pub fn new(rule: LdsRule, grid: [u32; 3]) -> Self {
        Profiler {
            rule,
            sample: None,
            grid,
            wave_size: 64,
        }
    }
}

/// The observer of one workgroup ([`Profiler`]).
#[derive(Debug)]
pub struct Recorder {
    rule: LdsRule,
    trace: WorkgroupTrace,
    scratch: Vec<u64>,
}

impl Recorder {
    /// What was recorded.
    pub fn into_trace(self) -> WorkgroupTrace {
        self.trace
    }
}

impl Observe for Profiler {
    type Workgroup = Recorder;
    fn workgroup(&self, wg: [u32; 3]) -> Recorder {
        Recorder {
            rule: self.rule,
            trace: WorkgroupTrace {
                wg,
                wave_size: self.wave_size,
                ..Default::default()
            },
            scratch: Vec::new(),
        }
    }
    fn only(&self) -> Option<Vec<u64>> {
        self.sample.as_ref().map(|s| s.iter().copied().collect())
    }
    fn runs(&self, wg: [u32; 3]) -> bool {
        match &self.sample {
            None => true,
            Some(s) => {
                let i = wg[0] as u64
                    + self.grid[0] as u64 * (wg[1] as u64 + self.grid[1] as u64 * wg[2] as u64);
                s.contains(&i)
            }
        }
    }
}

impl Observer for Recorder {
    fn executed(&mut self, e: &Event<'_>) {
        let w = e.wave as usize;
        if self.trace.waves.len() <= w {
            self.trace.waves.resize_with(w + 1, Vec::new);
            self.trace.lines.resize_with(w + 1, Vec::new);
        }
        let mut mem = MemCost::default();
        if !e.accesses.is_empty() {
            mem = cost(e.accesses, self.rule, &mut self.scratch);
            if mem.global {
                self.trace.lines[w].push(std::mem::take(&mut self.scratch));
            }
        }
        self.trace.waves[w].push(Step {
            index: e.index as u32,
            exec: e.exec,
            mem,
        });
    }
    fn barrier_released(&mut self) {
        self.trace.barriers += 1;
    }
}

/// The cost of one wave-instruction's accesses; `lines` receives the
/// distinct 64-byte global lines (sorted).
pub fn cost(accesses: &[Access], rule: LdsRule, lines: &mut Vec<u64>) -> MemCost {
    let mut m = MemCost::default();
    lines.clear();
    let mut lines128: Vec<u64> = Vec::new();
    let mut lds: Vec<Access> = Vec::new();
    for a in accesses {
        m.bytes += a.bytes;
        m.writes |= a.kind != AccessKind::Read;
        match a.space {
            Space::Global | Space::Private => {
                m.global = true;
                let end = a.addr + a.bytes.max(1) as u64 - 1;
                for l in a.addr / 64..=end / 64 {
                    lines.push(l);
                }
                for l in a.addr / 128..=end / 128 {
                    lines128.push(l);
                }
            }
            Space::Lds => {
                m.lds = true;
                lds.push(*a);
            }
            Space::Scalar => {}
        }
    }
    lines.sort_unstable();
    lines.dedup();
    lines128.sort_unstable();
    lines128.dedup();
    m.lines64 = lines.len().min(u16::MAX as usize) as u16;
    m.lines128 = lines128.len().min(u16::MAX as usize) as u16;
    if m.lds {
        let (cycles, conflicts) = rule.cycles(&lds);
        m.lds_cycles = cycles.min(u16::MAX as u32) as u16;
        m.lds_conflicts = conflicts.min(u16::MAX as u32) as u16;
    }
    m
}

/// The per-instruction class of each instruction of `program`
/// ([`Class::of`]).
pub fn classes(program: &Program) -> Vec<Class> {
    program.instructions.iter().map(Class::of).collect()
}
