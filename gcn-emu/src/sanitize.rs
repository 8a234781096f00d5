//! The sanitizer: premature reads (wait counters), LDS races between waves,
//! uses of uninitialized values, and out-of-bounds global accesses
//! (barrier divergence is found by [`crate::dispatch`]), and LDS accesses
//! outside the workgroup's LDS allocation.
//!
//! **Premature reads.** The emulator completes every memory instruction at
//! once, but records it as *in flight* on its wave's counters until an
//! `s_waitcnt` forces it, at the latest time the hardware's ordering rules
//! allow (gfx9):
//!
//! - `vmcnt`: global, buffer and flat loads, stores and atomics, in issue
//!   order: `vmcnt(N)` retires all but the newest N.
//! - `lgkmcnt`: LDS (`ds_*`) and scalar memory (`s_load_*`,
//!   `s_buffer_load_*`, `s_memtime`). LDS operations return in order, scalar
//!   ones in any order: `lgkmcnt(N)` retires the oldest LDS operations beyond
//!   N plus the scalar ones in flight (a scalar one may be among the
//!   completed), and a scalar one only at `lgkmcnt(0)`.
//!
//! An instruction that names (reads or overwrites) a register a load in
//! flight still writes is a finding, with both instructions, the wait that
//! should have covered the load, and the counts in flight. A later load of
//! the same in-order counter overwriting it is not (it lands later). The
//! register keeps the loaded value: the finding, not the value, is the
//! result.
//!
//! **LDS.** Shadow state per byte: the last writer (wave, barrier epoch,
//! instruction, atomic or not) and the readers of the current epoch. Epochs
//! are separated by `s_barrier`. A write by one wave after a read or write
//! of another wave in the same epoch, or a read after another wave's write
//! in the same epoch, is a race (two atomics never race).
//!
//! **Uninitialized values** are tracked by propagation, as MemorySanitizer
//! does ([`shadow`]): a shadow per VGPR/AGPR lane and 16-bit half, per SGPR
//! bit, for `scc` and per LDS byte (a byte nothing wrote, or written with
//! an uninitialized value). Reading an uninitialized value is not a
//! finding; using it is: as an address, a branch condition, the exec mask,
//! a branch target, a lane or VGPR index, or data stored to global memory.
//! The finding names the use and the value's origin (the register nothing
//! wrote, or the LDS byte and the instruction that read it).
//!
//! **Stores in flight at a barrier.** LDS requests of different waves may
//! be reordered (AMDGPUUsage, "Memory Model GFX942": the LDS has several
//! request queues shared by the SIMDs of a CU, so `s_waitcnt lgkmcnt(0)` is
//! required to synchronize LDS operations between the waves of a
//! work-group; clang-22 emits it before every workgroup-scope release, i.e.
//! before `__syncthreads()`'s `s_barrier`; "Memory Model GFX10-GFX11" says
//! the same of a WGP's SIMDs, so the rule is the same on gfx11; on gfx12
//! it is applied with `dscnt`, at `s_barrier_signal`). An LDS store or
//! atomic (`ds_*`
//! that writes) still in flight on its wave's `lgkmcnt` when the wave
//! reaches `s_barrier` stays invisible to the other waves until that wave's
//! `s_waitcnt` retires it: another wave's access to those bytes after the
//! barrier, before that wait, is a race ([`Kind::StoreInFlightAtBarrier`])
//! naming the store, the barrier, the missing wait and the access. Global,
//! buffer and flat stores in flight at a barrier are not findings: outside
//! tgsplit mode the waves of a workgroup share one CU's vector L1 and
//! clang-22 emits no `vmcnt(0)` before a workgroup barrier on
//! gfx90a/gfx942/gfx950 (it does with `-mtgsplit`, which the emulator does
//! not model). Not modelled either: a load in flight at a barrier racing
//! with another wave's later store (write after read).
//!
//! **Barriers.** Hardware counts arrivals at `s_barrier` and has no
//! address: waves of a workgroup may wait at different `s_barrier`
//! instructions (aiter's GEMMs do), and a wave that ends no longer counts
//! (the barrier releases the surviving waves). Neither is reported unless
//! the opt-in check [`Checks::BARRIER_PAIRS`] asks. What is reported
//! ([`Checks::BARRIERS`]) is a deadlock: a wave that never reaches a
//! barrier (it runs out of its instruction budget) while others wait at one.
//!
//! **Choosing checks.** [`Checks`] selects them; each [`Kind`] belongs to
//! one check ([`Kind::check`]).
//!
//! **How it runs.** The sanitizer is an observer of the executed stream
//! ([`crate::observe`]); the executor knows nothing of it. The dispatcher
//! attaches one [`Workgroup`] to each workgroup when [`Checks`] are on. It
//! sees each instruction before it runs with the wave's registers
//! ([`Observer::issue`]: the counters in flight, the shadow registers'
//! propagation, uses of uninitialized values), then after it ran with the
//! accesses it made, one per piece ([`Observer::pieces`]: the LDS shadow's
//! races and out-of-range accesses, the private bytes' shadow, the shadow
//! of what a load returned), and each barrier release (LDS writes in flight
//! are hidden, the barrier epoch advances). Barrier divergence, deadlocks
//! and out-of-bounds global faults are the dispatcher's: they are about
//! the schedule, or stop the workgroup.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use crate::decode::{Instruction, Operand, Program, RegFile};
use crate::exec::WaveState;
use crate::observe::{AccessKind, Issue, Observer, Space};
use crate::waitcnt::{Event, Generation};

pub mod shadow;
use shadow::Origin;

/// What kind of problem a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A register a load in flight still writes was read or overwritten.
    PrematureRead,
    /// Two waves touched the same LDS byte between two barriers, one writing.
    LdsRace,
    /// A value read from an LDS byte nothing wrote in this dispatch reached
    /// a use (an address, a branch, global memory, …).
    UninitializedLds,
    /// A global or flat access outside every allocation.
    OutOfBounds,
    /// An LDS access outside the workgroup's LDS allocation (the
    /// descriptor's static LDS plus the launch's dynamic LDS).
    LdsOutOfBounds,
    /// The waves of a workgroup released from different barriers, or one
    /// ended while others wait at one (legal on hardware; reported only by
    /// the opt-in [`Checks::BARRIER_PAIRS`]).
    BarrierDivergence,
    /// A value from a register neither the launch nor an earlier
    /// instruction of the wave wrote reached a use (an address, a branch,
    /// the exec mask, global memory, …).
    UninitializedRegister,
    /// Another wave accessed LDS bytes after a barrier that a store still in
    /// flight at that barrier writes (a missing `s_waitcnt lgkmcnt(0)`).
    StoreInFlightAtBarrier,
    /// A wave never reaches a barrier while the others of its workgroup
    /// wait at one.
    Deadlock,
    /// A value read from private (scratch) bytes nothing wrote reached a
    /// use.
    UninitializedScratch,
}

impl Kind {
    /// The check a kind of finding belongs to.
    pub fn check(self) -> Checks {
        match self {
            Kind::PrematureRead => Checks::WAITS,
            Kind::LdsRace | Kind::StoreInFlightAtBarrier => Checks::RACES,
            Kind::UninitializedLds | Kind::UninitializedRegister | Kind::UninitializedScratch => {
                Checks::UNINIT
            }
            Kind::OutOfBounds | Kind::LdsOutOfBounds => Checks::BOUNDS,
            Kind::Deadlock => Checks::BARRIERS,
            Kind::BarrierDivergence => Checks::BARRIER_PAIRS,
        }
    }
}

/// A set of sanitizer checks (`--sanitize=CHECK,…`). Empty: no sanitizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Checks(u8);

impl Checks {
    /// No check: the sanitizer is off.
    pub const NONE: Checks = Checks(0);
    /// `races`: LDS races between waves, and LDS stores in flight at a barrier.
    pub const RACES: Checks = Checks(1);
    /// `uninit`: uses of values from LDS bytes and registers nothing wrote.
    pub const UNINIT: Checks = Checks(2);
    /// `bounds`: global accesses outside every allocation.
    pub const BOUNDS: Checks = Checks(4);
    /// `barriers`: deadlocks (a wave never reaching the barrier others wait at).
    pub const BARRIERS: Checks = Checks(8);
    /// `waits`: premature reads of registers a load in flight still writes.
    pub const WAITS: Checks = Checks(16);
    /// `barrier-pairs` (opt-in): waves of a workgroup released together
    /// from different `s_barrier` instructions, or ended while others wait.
    /// Legal on hardware; a bug only where the kernel means every wave to
    /// meet at the same one.
    pub const BARRIER_PAIRS: Checks = Checks(32);
    /// Plain `--sanitize`: every check but `barrier-pairs`.
    pub const DEFAULT: Checks = Checks(1 | 2 | 4 | 8 | 16);
    /// Every check.
    pub const ALL: Checks = Checks(63);

    /// Every check by name, in the order they print.
    pub const NAMES: [(&'static str, Checks); 6] = [
        ("races", Checks::RACES),
        ("uninit", Checks::UNINIT),
        ("bounds", Checks::BOUNDS),
        ("barriers", Checks::BARRIERS),
        ("waits", Checks::WAITS),
        ("barrier-pairs", Checks::BARRIER_PAIRS),
    ];

    /// Whether no check is on.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether every check of `other` is on.
    pub fn contains(self, other: Checks) -> bool {
        self.0 & other.0 == other.0 && !other.is_empty()
    }
    /// Both sets' checks.
    pub fn union(self, other: Checks) -> Checks {
        Checks(self.0 | other.0)
    }

    /// Parse `CHECK,…` (names of [`Checks::NAMES`], `default`, `all`); an
    /// error names the unknown word and the known ones.
    pub fn parse(s: &str) -> Result<Checks, String> {
        let mut c = Checks::NONE;
        for w in s.split(',').map(str::trim) {
            c = c.union(match w {
                "default" => Checks::DEFAULT,
                "all" => Checks::ALL,
                _ => match Checks::NAMES.iter().find(|(n, _)| *n == w) {
                    Some(&(_, k)) => k,
                    None => {
                        return Err(format!(
                            "unknown sanitizer check `{w}`; the checks: {}, or `default` (all but barrier-pairs) or `all`",
                            Checks::NAMES.map(|(n, _)| n).join(", ")
                        ))
                    }
                },
            });
        }
        Ok(c)
    }
}

impl<'de> serde::Deserialize<'de> for Checks {
    /// `"CHECK,…"` as [`Checks::parse`] reads it.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Checks::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl From<bool> for Checks {
    /// `true`: the default checks; `false`: none.
    fn from(on: bool) -> Self {
        if on {
            Checks::DEFAULT
        } else {
            Checks::NONE
        }
    }
}

impl fmt::Display for Checks {
    /// The names of the checks that are on, comma-separated (`none`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on: Vec<&str> = Checks::NAMES
            .iter()
            .filter(|(_, c)| self.contains(*c))
            .map(|(n, _)| *n)
            .collect();
        if on.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&on.join(","))
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::PrematureRead => "premature read",
            Kind::LdsRace => "LDS race",
            Kind::UninitializedLds => "uninitialized LDS read",
            Kind::OutOfBounds => "out-of-bounds access",
            Kind::LdsOutOfBounds => "LDS out-of-bounds access",
            Kind::BarrierDivergence => "barrier divergence",
            Kind::UninitializedRegister => "uninitialized register read",
            Kind::StoreInFlightAtBarrier => "LDS race (store in flight at a barrier)",
            Kind::Deadlock => "barrier deadlock",
            Kind::UninitializedScratch => "uninitialized scratch read",
        })
    }
}

/// One sanitizer finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What kind.
    pub kind: Kind,
    /// The workgroup it was seen in (the first one, when several).
    pub workgroup: [u32; 3],
    /// The wave within the workgroup.
    pub wave: u32,
    /// Address of the instruction that found it (the use, the second access).
    pub addr: u64,
    /// Address of the other instruction (the load, the first access), if any.
    pub other: Option<u64>,
    /// The whole report of it, lines included.
    pub message: String,
    /// How many (workgroup, wave) pairs showed the same pair of instructions.
    pub occurrences: u64,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: workgroup ({}, {}, {}), wave {}: {}",
            self.kind,
            self.workgroup[0],
            self.workgroup[1],
            self.workgroup[2],
            self.wave,
            self.message
        )?;
        if self.occurrences > 1 {
            write!(
                f,
                "\n  (the same pair of instructions in {} more wave(s))",
                self.occurrences - 1
            )?;
        }
        Ok(())
    }
}

impl Finding {
    /// The finding in one line: its kind, the instruction that found it and
    /// the other one (each as `` `text` (file:line) `` when `program` knows
    /// the line, else by address) and how many waves showed it. The
    /// [`Display`](fmt::Display) form is the full report.
    pub fn summary(&self, program: &Program) -> String {
        let mut s = format!("{}: {}", self.kind, brief(program, self.addr));
        if let Some(o) = self.other {
            s.push_str(&format!(" with {}", brief(program, o)));
        }
        if self.occurrences > 1 {
            s.push_str(&format!(", in {} waves", self.occurrences));
        }
        s
    }
}

/// `` `text` (file:line) ``, or `` addr `text` `` when the line is not known.
fn brief(program: &Program, addr: u64) -> String {
    let text = program
        .index
        .get(&addr)
        .map(|&i| program.instructions[i].text.as_str())
        .unwrap_or("?");
    // `file:line: text`: the part before the text.
    match program.lines.get(&addr).and_then(|l| l.split_once(": ")) {
        Some((at, _)) => format!("`{text}` ({at})"),
        None => format!("{addr:#x} `{text}`"),
    }
}

/// `addr `text`` and its asm line, when known.
pub fn describe(program: &Program, addr: u64) -> String {
    let text = program
        .index
        .get(&addr)
        .map(|&i| program.instructions[i].text.as_str())
        .unwrap_or("?");
    match program.lines.get(&addr) {
        Some(l) => format!("{addr:#x} `{text}` ({l})"),
        None => format!("{addr:#x} `{text}`"),
    }
}

/// Sort findings by workgroup (Z, Y, X), wave, address, and merge those of
/// the same kind and instructions into the first, counting them.
pub fn merge(mut all: Vec<Finding>) -> Vec<Finding> {
    all.sort_by_key(|f| {
        (
            [f.workgroup[2], f.workgroup[1], f.workgroup[0]],
            f.wave,
            f.addr,
            f.kind,
            f.other,
        )
    });
    let mut out: Vec<Finding> = Vec::new();
    let mut seen: HashMap<Key, usize> = HashMap::new();
    for f in all {
        match seen.get(&(f.kind, f.addr, f.other)) {
            Some(&i) => out[i].occurrences += f.occurrences,
            None => {
                seen.insert((f.kind, f.addr, f.other), out.len());
                out.push(f);
            }
        }
    }
    out
}

/// A finding's identity: kind, instruction, other instruction.
type Key = (Kind, u64, Option<u64>);

#[derive(Debug, Clone)]
struct Pending {
    /// What it is to the counters.
    event: Event,
    /// Its counter's index in the generation's counters
    /// ([`Generation::counters`]).
    slot: usize,
    /// The load's address.
    addr: u64,
    /// Registers it writes (file, first, count); emptied once reported.
    dst: Option<(RegFile, u16, u16)>,
    /// Index of the last wait executed when it was issued.
    issued_after_wait: u64,
    /// The wave's sequence number of this memory instruction (from 1).
    seq: u64,
    /// Whether it writes LDS (a `ds_*` store or atomic, or an LDS DMA load).
    lds_write: bool,
}

/// LDS writes in flight: (sequence number, address, the wait that retires
/// them).
type InFlight = Vec<(u64, u64, String)>;

/// One wave's in-flight memory operations.
#[derive(Debug, Clone, Default)]
struct WaveSan {
    /// The counter rules ([`crate::waitcnt`]).
    gen: Generation,
    /// The instruction table of the target (`None`: CDNA's).
    table: Option<crate::isa::Table>,
    /// Per counter of the generation, the operations in flight, oldest
    /// first.
    queues: Vec<Vec<Pending>>,
    /// The LDS writes in flight when the wave signalled a gfx12 barrier
    /// (`s_barrier_signal`), with the signal's address.
    signalled: Option<(u64, InFlight)>,
    /// Waits executed so far, and the last one's address and text.
    waits: u64,
    last_wait: Option<(u64, String)>,
    /// Findings of this wave.
    findings: Vec<Finding>,
    /// The workgroup and the wave's index in it.
    workgroup: [u32; 3],
    /// The wave's index in its workgroup.
    wave: u32,
    /// The shadow of the wave's registers (uninitialized values by
    /// propagation, [`shadow`]). `None`: not tracked.
    shadow: Option<Box<shadow::Shadow>>,
    /// Memory instructions issued so far (the last one's sequence number).
    seq: u64,
    /// The current instruction's private (scratch) accesses: lane, offset,
    /// length, whether a write (for the shadow of uninitialized values).
    private: RefCell<Vec<(u32, u32, u32, bool)>>,
}

/// Whether register ranges `a` and `b` share a register, in a wave whose
/// AGPRs start at row `accum` of the unified VGPR/AGPR file (`a[i]` is
/// `v[accum + i]`: [`crate::exec::Wave::v`]).
fn overlaps(a: (RegFile, u16, u16), b: (RegFile, u16, u16), accum: usize) -> bool {
    let row = |(f, i, n): (RegFile, u16, u16)| match f {
        RegFile::A => (RegFile::V, accum + i as usize, n as usize),
        _ => (f, i as usize, n as usize),
    };
    let (a, b) = (row(a), row(b));
    a.0 == b.0 && a.1 < b.1 + b.2 && b.1 < a.1 + a.2
}

fn regs(op: &Operand) -> Option<(RegFile, u16, u16)> {
    match op {
        Operand::Reg { file, index, count } => Some((*file, *index, (*count).max(1))),
        _ => None,
    }
}

fn reg_name(r: (RegFile, u16, u16)) -> String {
    let p = match r.0 {
        RegFile::S => "s",
        RegFile::V => "v",
        RegFile::A => "a",
    };
    if r.2 == 1 {
        format!("{p}{}", r.1)
    } else {
        format!("{p}[{}:{}]", r.1, r.1 + r.2 - 1)
    }
}

/// The properties of `mnemonic` in `table` (`None`: CDNA's).
fn props_in(
    table: Option<crate::isa::Table>,
    mnemonic: &str,
) -> Option<&'static crate::isa::Props> {
    match table {
        Some(t) => t.lookup(mnemonic),
        None => crate::isa::lookup(mnemonic),
    }
}

/// The counter event of a memory instruction and whether its first operand
/// is a destination it writes when the data returns, from the
/// instruction-property table ([`crate::isa`]) and the generation's rules
/// ([`crate::waitcnt::event`]). Scalar atomics and cache control stay
/// untracked, as before the table.
fn classify(ins: &Instruction, table: Option<crate::isa::Table>) -> Option<(Event, bool)> {
    use crate::isa::{Access, Format, Ret};
    // gfx1250's asynchronous global↔LDS transfers: in no table (gfx1250 has
    // none); no register destination.
    if async_lds(&ins.mnemonic).is_some() {
        return Some((Event::Async, false));
    }
    // gfx1250's transposing LDS loads (in no table either): LDS reads.
    if ins.mnemonic.starts_with("ds_load_tr") {
        return Some((Event::Lds, true));
    }
    // gfx1250's transposing global loads (`global_load_tr16_b128` etc., in
    // no table under these names): loads, on LOADcnt.
    if ins.mnemonic.starts_with("global_load_tr") {
        return Some((Event::VmemLoad, true));
    }
    // gfx1250's tensor DMA ([`crate::tensor`]): TENSORcnt.
    if tensor_lds(&ins.mnemonic).is_some() {
        return Some((Event::Tensor, false));
    }
    // gfx12's prefetches (`s_prefetch_inst s[76:77], 0x0, s78, 0`, aiter's
    // gfx1250 kernels) return no data: their first printed operand is the
    // address they read, not a destination (the table's `sdata` is an
    // immediate there). Untracked, as cache control is.
    if ins.mnemonic.starts_with("s_prefetch_") || ins.mnemonic == "s_buffer_prefetch_data" {
        return None;
    }
    let p = props_in(table, &ins.mnemonic)?;
    let returns = match p.access {
        Access::Atomic(Ret::IfGlc) => crate::waitcnt::atomic_returns(ins),
        Access::Write => false,
        _ => p.dst().next().is_some(),
    };
    let event = crate::waitcnt::event(p, returns)?;
    match event {
        Event::VmemLoad | Event::VmemStore => {
            let lds_dma = p.lds_dma || ins.has("lds");
            Some((event, returns && !lds_dma))
        }
        // s_memtime returns a value; s_dcache_* and the atomics are not tracked.
        Event::Smem
            if p.format == Format::Smem
                && (matches!(p.access, Access::Read | Access::Write)
                    || p.access == Access::None && returns) =>
        {
            Some((event, returns))
        }
        Event::Smem => None,
        Event::Lds => Some((event, returns)),
        Event::Async | Event::Tensor => Some((event, false)),
    }
}

/// Whether `m` is one of gfx1250's tensor DMA instructions, and if so
/// whether it writes LDS (`tensor_load_to_lds`: true;
/// `tensor_store_from_lds`: false, it reads LDS).
fn tensor_lds(m: &str) -> Option<bool> {
    match m {
        "tensor_load_to_lds" => Some(true),
        "tensor_store_from_lds" => Some(false),
        _ => None,
    }
}

/// An asynchronous LDS writer: an async or tensor load into LDS.
fn lds_transfer(m: &str) -> bool {
    async_lds(m).is_some() || tensor_lds(m).is_some()
}

/// Whether `m` is one of gfx1250's asynchronous transfers, and if so
/// whether it writes LDS (`global_load_async_to_lds_*`: true;
/// `global_store_async_from_lds_*`: false, it reads LDS).
fn async_lds(m: &str) -> Option<bool> {
    if m.starts_with("global_load_async_to_lds_") {
        Some(true)
    } else if m.starts_with("global_store_async_from_lds_") {
        Some(false)
    } else {
        None
    }
}

/// Retire what a count of `n` retires of `q` (oldest first): everything at
/// 0; else the oldest in-order operations beyond `n` plus every scalar one
/// in flight (a scalar one may be among the completed: they return in any
/// order), and a scalar one only at 0.
fn drain(q: &mut Vec<Pending>, n: usize) {
    if q.len() <= n {
        return;
    }
    if n == 0 {
        q.clear();
        return;
    }
    let smem = q.iter().filter(|p| p.event == Event::Smem).count();
    let mut k = q.len().saturating_sub(n + smem);
    q.retain(|p| {
        if p.event != Event::Smem && k > 0 {
            k -= 1;
            false
        } else {
            true
        }
    });
}

impl WaveSan {
    /// Nothing in flight, for wave `wave` of workgroup `workgroup`, under
    /// gfx9's counter rules.
    fn new(workgroup: [u32; 3], wave: u32) -> Self {
        WaveSan {
            workgroup,
            wave,
            queues: vec![Vec::new(); Generation::Gfx9.counters().len()],
            ..Default::default()
        }
    }

    /// Use `gen`'s counter rules and `table`'s instructions.
    fn rules(&mut self, gen: Generation, table: Option<crate::isa::Table>) {
        self.gen = gen;
        self.table = table;
        self.queues = vec![Vec::new(); gen.counters().len()];
    }

    /// Track uninitialized values: the launch wrote s0…s`sgprs - 1` and
    /// v0 (the packed work-item IDs); every other register starts
    /// uninitialized.
    fn loaded(&mut self, sgprs: u16) {
        let loaded = if sgprs == 0 {
            "v0".to_string()
        } else {
            format!("s0–s{} and v0", sgprs - 1)
        };
        self.shadow = Some(Box::new(shadow::Shadow::new(self.wave, sgprs, loaded)));
    }

    /// `ins` ran on `wave`: fill the shadow of what a memory instruction
    /// loaded (from the LDS bytes it read, `lds`; global memory is defined).
    fn after(&mut self, wave: &crate::exec::Wave, lds: Option<&LdsShadow>) {
        if let Some(sh) = self.shadow.as_mut() {
            let private = std::mem::take(&mut *self.private.borrow_mut());
            sh.after(wave, lds, &private);
        }
    }

    /// Lane `lane` of the current instruction reads (or writes) `len`
    /// private bytes at `off` (from the instruction's accesses).
    fn private_access(&self, lane: usize, off: u32, len: usize, write: bool) {
        if self.shadow.is_some() {
            self.private
                .borrow_mut()
                .push((lane as u32, off, len as u32, write));
        }
    }

    fn counts(&self) -> String {
        let n = |e: Event| {
            self.queues
                .iter()
                .flatten()
                .filter(|p| p.event == e)
                .count()
        };
        if self.gen == Generation::Gfx9 {
            return format!(
                "in flight: vmcnt {} (loads/stores), lgkmcnt {} ({} LDS, {} scalar)",
                self.queues[0].len(),
                self.queues[1].len(),
                n(Event::Lds),
                n(Event::Smem)
            );
        }
        let each: Vec<String> = self
            .gen
            .counters()
            .iter()
            .zip(&self.queues)
            // asynccnt and tensorcnt only where something counts on them
            // (gfx1250).
            .filter(|(c, q)| {
                !matches!(
                    **c,
                    crate::waitcnt::Counter::Async | crate::waitcnt::Counter::Tensor
                ) || !q.is_empty()
            })
            .map(|(c, q)| format!("{} {}", c.name(), q.len()))
            .collect();
        let mut s = format!("in flight: {}", each.join(", "));
        if self.gen == Generation::Gfx11 {
            s.push_str(&format!(
                " (lgkmcnt: {} LDS, {} scalar)",
                n(Event::Lds),
                n(Event::Smem)
            ));
        }
        s
    }

    /// Apply a wait (its counts decoded by the generation's rules,
    /// [`crate::waitcnt::decode`]); LDS writes it retires become visible to
    /// the other waves (`lds`).
    fn wait(&mut self, ins: &Instruction, wait: &crate::waitcnt::Wait, lds: Option<&LdsShadow>) {
        let counts: Vec<Option<usize>> = self
            .gen
            .counters()
            .iter()
            .map(|&c| wait.get(c).map(|n| n as usize))
            .collect();
        if let Some(sh) = lds.filter(|sh| !sh.hidden.borrow().is_empty()) {
            // What the wait retires, before it is dropped below.
            let mut hidden = sh.hidden.borrow_mut();
            for (q, n) in self.queues.iter().zip(&counts) {
                let Some(n) = *n else { continue };
                let mut copy = q.clone();
                drain(&mut copy, n);
                for p in q {
                    if !copy.iter().any(|c| c.seq == p.seq) {
                        hidden.remove(&(self.wave, p.seq));
                    }
                }
            }
        }
        for (q, n) in self.queues.iter_mut().zip(&counts) {
            if let Some(n) = *n {
                drain(q, n);
            }
        }
        self.waits += 1;
        self.last_wait = Some((ins.addr, ins.text.clone()));
    }

    /// The LDS writes still in flight (sequence number, address, the wait
    /// that retires them), for a barrier the wave waits at.
    fn lds_writes_in_flight(&self) -> InFlight {
        let counters = self.gen.counters();
        self.queues
            .iter()
            .flatten()
            .filter(|p| p.lds_write)
            .map(|p| (p.seq, p.addr, self.gen.wait_text(counters[p.slot], 0)))
            .collect()
    }

    /// The wait that retires `p`, at `pos` in its queue.
    fn needed_wait(&self, p: &Pending, pos: usize) -> String {
        let q = &self.queues[p.slot];
        let c = self.gen.counters()[p.slot];
        if q.iter().any(|x| x.event == Event::Smem) {
            self.gen.wait_text(c, 0)
        } else {
            self.gen.wait_text(c, q.len() - pos - 1)
        }
    }

    /// [`WaveSan::before_executed`] of an instruction the executor runs
    /// as it is spelled (the unit tests' CDNA code).
    #[cfg(test)]
    fn before(
        &mut self,
        ins: &Instruction,
        program: &Program,
        lds: Option<&LdsShadow>,
        wave: &crate::exec::Wave,
    ) {
        self.before_executed(ins, ins, program, lds, wave)
    }

    /// Check `ins` (about to run) against the loads in flight, then record
    /// it if it is a memory instruction, or apply it if it is a wait. `lds`:
    /// the workgroup's LDS shadow, told the sequence number of the access
    /// and the LDS writes a wait retires.
    ///
    /// With the `uninit` check ([`WaveSan::loaded`]) it also propagates the
    /// shadow of uninitialized values through `executed`, `ins` as the
    /// executor runs it (RDNA: its renamed copy, `crate::rdna::executable`),
    /// from the state of `wave` (before it runs) and reports their uses
    /// ([`shadow`]).
    fn before_executed(
        &mut self,
        ins: &Instruction,
        executed: &Instruction,
        program: &Program,
        lds: Option<&LdsShadow>,
        wave: &crate::exec::Wave,
    ) {
        if let Some(sh) = self.shadow.as_mut() {
            sh.before(
                executed,
                wave,
                program,
                lds,
                self.workgroup,
                &mut self.findings,
            );
        }
        let accum = wave.accum;
        let (wg, wave) = (self.workgroup, self.wave);
        if let Some(w) = crate::waitcnt::decode(ins, self.gen) {
            self.wait(ins, &w, lds);
            return;
        }
        if ins.mnemonic.starts_with("s_barrier_signal") {
            self.signalled = Some((ins.addr, self.lds_writes_in_flight()));
        }
        let class = classify(ins, self.table);
        let class_slot = class.map(|(e, _)| self.gen.slot_of(e));
        let mut hits = Vec::new();
        // A VOPD pair's Y half reads and writes registers too.
        let operands = ins.ops.iter().chain(ins.dual.iter().flat_map(|y| &y.ops));
        for (i, op) in operands.enumerate() {
            let Some(r) = regs(&op.op) else { continue };
            let own_dst = i == 0 && matches!(class, Some((_, true)));
            for (qi, q) in self.queues.iter().enumerate() {
                for (pos, p) in q.iter().enumerate() {
                    let Some(d) = p.dst else { continue };
                    if !overlaps(r, d, accum) {
                        continue;
                    }
                    // A later load of the same in-order counter lands after it.
                    if own_dst
                        && class_slot == Some(p.slot)
                        && p.event != Event::Smem
                        && class.is_some_and(|(e, _)| e != Event::Smem)
                    {
                        continue;
                    }
                    hits.push((i, qi, pos, r, d, own_dst));
                }
            }
        }
        // One finding per operand: the newest load it collides with (the
        // wait that retires it retires the older ones too); the others are
        // marked reported.
        let mut last_of_operand = HashMap::new();
        for (k, h) in hits.iter().enumerate() {
            last_of_operand.insert(h.0, k);
        }
        for (k, &(i, qi, pos, r, d, own_dst)) in hits.iter().enumerate() {
            let p = self.queues[qi][pos].clone();
            if last_of_operand[&i] != k {
                self.queues[qi][pos].dst = None;
                continue;
            }
            if p.dst.is_none() {
                continue; // reported by an earlier operand of this instruction
            }
            let wait_said = match &self.last_wait {
                Some((a, _)) if self.waits > p.issued_after_wait => format!(
                    "the last wait, {}, did not retire it",
                    describe(program, *a)
                ),
                _ if self.gen == Generation::Gfx9 => "no s_waitcnt ran between them".into(),
                _ => "no wait ran between them".into(),
            };
            let verb = if own_dst {
                "overwrites"
            } else {
                "reads or writes"
            };
            let message = format!(
                "{} {verb} {} while the load {} still writes {}; {wait_said}; it needs `{}` before the use; {}",
                describe(program, ins.addr),
                reg_name(r),
                describe(program, p.addr),
                reg_name(d),
                self.needed_wait(&p, pos),
                self.counts()
            );
            self.findings.push(Finding {
                kind: Kind::PrematureRead,
                workgroup: wg,
                wave,
                addr: ins.addr,
                other: Some(p.addr),
                message,
                occurrences: 1,
            });
            self.queues[qi][pos].dst = None;
        }
        if let Some((event, has_dst)) = class {
            let dst = if has_dst {
                ins.ops.first().and_then(|o| regs(&o.op))
            } else {
                None
            };
            self.seq += 1;
            if let Some(sh) = lds {
                sh.seq.set(self.seq);
            }
            // Whether it writes LDS: a DS store or atomic, or a load into LDS.
            let props = props_in(self.table, &ins.mnemonic);
            let lds_write = props.is_some_and(|p| match event {
                Event::Lds => p.writes_memory(),
                Event::VmemLoad | Event::VmemStore => {
                    p.access == crate::isa::Access::Read
                        && p.memory != crate::isa::Memory::Flat
                        && (p.lds_dma || ins.has("lds"))
                }
                Event::Smem => false,
                Event::Async | Event::Tensor => false,
            }) || async_lds(&ins.mnemonic) == Some(true)
                || tensor_lds(&ins.mnemonic) == Some(true);
            let slot = self.gen.slot_of(event);
            let p = Pending {
                event,
                slot,
                addr: ins.addr,
                dst,
                issued_after_wait: self.waits,
                seq: self.seq,
                lds_write,
            };
            self.queues[slot].push(p);
        }
    }
}

/// The sanitizer of one workgroup: an [`Observer`] of its waves, attached
/// by the dispatcher when [`Checks`] are on (see the module's "How it
/// runs").
#[derive(Debug)]
pub struct Workgroup {
    workgroup: [u32; 3],
    checks: Checks,
    program: Arc<Program>,
    waves: Vec<WaveSan>,
    lds: LdsShadow,
    /// Bytes of LDS: the descriptor's static ones, the launch's dynamic ones.
    lds_fixed: u64,
    lds_dynamic: u32,
    /// Per wave, the index of the `s_barrier` it waits at.
    waiting: Vec<Option<usize>>,
    /// The target's instruction table (`None`: CDNA's).
    table: Option<crate::isa::Table>,
}

impl Workgroup {
    /// The sanitizer of workgroup `workgroup` of a dispatch of `program`
    /// with `waves` waves, `lds_fixed` static and `lds_dynamic` dynamic LDS
    /// bytes; the launch wrote SGPRs 0 to `sgprs - 1` of each wave (and
    /// `v0`).
    pub fn new(
        program: Arc<Program>,
        checks: Checks,
        workgroup: [u32; 3],
        waves: u32,
        sgprs: u16,
        lds_fixed: u64,
        lds_dynamic: u32,
    ) -> Self {
        let waves: Vec<WaveSan> = (0..waves)
            .map(|i| {
                let mut san = WaveSan::new(workgroup, i);
                if checks.contains(Checks::UNINIT) {
                    san.loaded(sgprs.min(102));
                }
                san
            })
            .collect();
        let size = (lds_fixed + lds_dynamic as u64) as usize;
        Workgroup {
            workgroup,
            checks,
            lds: LdsShadow::new(size, program.clone()),
            program,
            waiting: vec![None; waves.len()],
            waves,
            lds_fixed,
            lds_dynamic,
            table: None,
        }
    }

    /// Check `processor`'s code (`gfx942`, `gfx1100`, `gfx1201`): its
    /// generation's counter rules ([`crate::waitcnt`]) and instruction
    /// table. Without this call, or for a processor with no rules: gfx9's
    /// (CDNA).
    pub fn target(mut self, processor: &str) -> Self {
        let gen = Generation::of(processor).unwrap_or_default();
        let table = match gen {
            Generation::Gfx9 => None,
            // gfx1250 has no table of its own: the RDNA4 one, whose
            // gfx1250 bit says which of its instructions gfx1250 has (the
            // executor routes gfx1250's names through it too). Without it
            // the shadow of uninitialized values skipped RDNA names such
            // as `s_add_nc_u64` and the counters fell back to CDNA's names.
            _ if processor == "gfx1250" => crate::isa::table_for("gfx1201"),
            _ => crate::isa::table_for(processor),
        };
        for w in &mut self.waves {
            w.rules(gen, table);
            // The shadow of uninitialized values reads the executor's
            // (CDNA) names, and the target's table for RDNA's own.
            if let Some(sh) = w.shadow.as_mut() {
                sh.set_table(table);
            }
        }
        self.table = table;
        self.lds.gen.set(gen);
        self
    }

    /// The findings so far (taken): each wave's in wave order, then the
    /// LDS shadow's. Not filtered by the checks: [`Kind::check`] does that.
    pub fn findings(&mut self) -> Vec<Finding> {
        let mut out = Vec::new();
        for w in &mut self.waves {
            out.append(&mut w.findings);
        }
        for mut f in self.lds.findings.borrow_mut().drain(..) {
            f.workgroup = self.workgroup;
            out.push(f);
        }
        out
    }

    /// One LDS access of the current instruction: a race check and the
    /// shadow of its bytes, or an out-of-range finding (the executor reads
    /// 0 and drops the write).
    fn lds_access(&self, lane: u32, addr: u32, bytes: usize, write: bool) {
        let size = self.lds_fixed + self.lds_dynamic as u64;
        if addr as u64 + bytes as u64 <= size {
            self.own_async_in_flight(addr, bytes, write);
        }
        if addr as u64 + bytes as u64 > size {
            self.lds
                .out_of_range(lane, addr, bytes, write, self.lds_fixed, self.lds_dynamic);
        } else if write {
            self.lds.write(lane, addr, bytes);
        } else {
            self.lds.read(lane, addr, bytes);
        }
    }
}

impl Workgroup {
    /// The current instruction (not itself an asynchronous transfer)
    /// accesses LDS bytes an asynchronous load of its own wave
    /// (`global_load_async_to_lds_*`, gfx1250) still writes: nothing orders
    /// the two before `s_wait_asynccnt` retires the load. A
    /// [`Kind::PrematureRead`], once per instruction and load.
    fn own_async_in_flight(&self, addr: u32, bytes: usize, write: bool) {
        let (wave, at, _) = self.lds.current.get();
        let Some(san) = self.waves.get(wave as usize) else {
            return;
        };
        let pending = |seq: u64| {
            san.queues.iter().find_map(|q| {
                q.iter()
                    .position(|p| {
                        p.seq == seq
                            && matches!(p.event, Event::Async | Event::Tensor)
                            && p.lds_write
                    })
                    .map(|pos| (q[pos].clone(), pos))
            })
        };
        if !san
            .queues
            .iter()
            .flatten()
            .any(|p| matches!(p.event, Event::Async | Event::Tensor) && p.lds_write)
        {
            return;
        }
        let current_is_async = self
            .program
            .index
            .get(&at)
            .is_some_and(|&k| lds_transfer(&self.program.instructions[k].mnemonic));
        if current_is_async {
            return;
        }
        let hit = {
            let shadow = self.lds.bytes.borrow();
            (addr as usize..addr as usize + bytes).find_map(|b| {
                let w = shadow.get(b)?.write?;
                if w.wave != wave {
                    return None;
                }
                pending(w.seq).map(|(p, pos)| (b, p, pos))
            })
        };
        let Some((byte, p, pos)) = hit else { return };
        let prog = &self.program;
        let message = format!(
            "{} {} LDS byte {byte:#x} while the {} {} of the same wave still writes it (nothing orders the two before the wait); it needs `{}` before the access; {}",
            describe(prog, at),
            if write { "writes" } else { "reads" },
            if p.event == Event::Tensor {
                "tensor load"
            } else {
                "asynchronous load"
            },
            describe(prog, p.addr),
            san.needed_wait(&p, pos),
            san.counts()
        );
        self.lds
            .report(Kind::PrematureRead, wave, at, Some(p.addr), message);
    }
}

impl Observer for Workgroup {
    fn wants_issue(&self) -> bool {
        true
    }

    fn pieces(&self) -> bool {
        true
    }

    fn issue(&mut self, i: &Issue<'_>) {
        let Some(san) = self.waves.get_mut(i.wave as usize) else {
            return;
        };
        // The instruction as the object spells it: the executor may run
        // RDNA code under its own names (`crate::rdna::executable`); the
        // counter rules read the target's table.
        let ins = match self.program.index.get(&i.instruction.addr) {
            Some(&k) => &self.program.instructions[k],
            None => i.instruction,
        };
        san.before_executed(ins, i.instruction, &self.program, Some(&self.lds), i.state);
        self.lds
            .current
            .set((san.wave, ins.addr, lds_atomic(self.table, &ins.mnemonic)));
    }

    fn executed(&mut self, e: &crate::observe::Event<'_>) {
        for a in e.accesses {
            let (lane, bytes) = (a.lane as u32, a.bytes as usize);
            match (a.space, a.kind) {
                (Space::Lds, AccessKind::Atomic) => {
                    // The executor reads, then writes.
                    self.lds_access(lane, a.addr as u32, bytes, false);
                    self.lds_access(lane, a.addr as u32, bytes, true);
                }
                (Space::Lds, k) => {
                    self.lds_access(lane, a.addr as u32, bytes, k == AccessKind::Write)
                }
                (Space::Private, k) => {
                    if let Some(san) = self.waves.get(e.wave as usize) {
                        san.private_access(
                            a.lane as usize,
                            a.addr as u32,
                            bytes,
                            k != AccessKind::Read,
                        );
                    }
                }
                _ => {}
            }
        }
        let Some(san) = self.waves.get_mut(e.wave as usize) else {
            return;
        };
        san.after(e.state, Some(&self.lds));
        // At a barrier's wait: the workgroup's, or the cluster's (which
        // the dispatcher completes after this event).
        let cluster_wait = e.state.sync == Some(crate::exec::SyncOp::ClusterWait);
        if e.state.state == WaveState::Barrier || cluster_wait {
            self.waiting[e.wave as usize] = Some(e.index);
        }
    }

    fn barrier_released(&mut self) {
        for (i, at) in self.waiting.iter_mut().enumerate() {
            let Some(b) = at.take() else { continue };
            if !self.checks.contains(Checks::RACES) {
                continue;
            }
            // LDS writes still in flight at the barrier stay invisible to
            // the other waves until their wave's wait. On gfx12 the wave
            // arrives at `s_barrier_signal`: what was in flight there.
            let signalled = self.waves[i].signalled.take();
            let (at, in_flight) = match signalled {
                Some((a, f)) => (Some(a), f),
                None => (
                    self.program.instructions.get(b).map(|i| i.addr),
                    self.waves[i].lds_writes_in_flight(),
                ),
            };
            if let (Some(at), false) = (at, in_flight.is_empty()) {
                self.lds.hide(i as u32, at, &in_flight);
            }
        }
        self.lds.epoch.set(self.lds.epoch.get() + 1);
    }
}

#[derive(Debug, Clone, Copy)]
struct Access {
    wave: u32,
    epoch: u32,
    addr: u64,
    atomic: bool,
    /// The wave's sequence number of the instruction.
    seq: u64,
}

#[derive(Debug, Clone, Default)]
struct ByteShadow {
    write: Option<Access>,
    readers: Vec<Access>,
    /// Written with an uninitialized value (its origin); a byte nothing
    /// wrote is uninitialized too (`write` is `None`).
    poison: Option<Origin>,
}

/// Shadow state of a workgroup's LDS.
#[derive(Debug, Clone)]
struct LdsShadow {
    bytes: RefCell<Vec<ByteShadow>>,
    /// Barrier epoch: how many barriers the workgroup passed.
    epoch: Cell<u32>,
    /// The wave and instruction accessing LDS now.
    current: Cell<(u32, u64, bool)>,
    /// Findings (workgroup filled in by [`Workgroup::findings`]).
    findings: RefCell<Vec<Finding>>,
    reported: RefCell<HashSet<Key>>,
    program: Arc<Program>,
    /// The current access's sequence number in its wave ([`WaveSan`]).
    seq: Cell<u64>,
    /// LDS writes in flight when their wave reached a barrier, not yet
    /// retired by its wait: (wave, sequence number) to (the write, the
    /// barrier, on `vmcnt`).
    hidden: RefCell<Hidden>,
    /// The current instruction's uninitialized data stored and read.
    values: RefCell<Values>,
    /// The counter rules (for the reports' wording).
    gen: Cell<Generation>,
}

/// What the current instruction stores and reads that is uninitialized,
/// per dword of its data in operand order (a lane's accesses consume its
/// data in order: `ds_write2`'s second access stores `data1`).
#[derive(Debug, Clone)]
pub(crate) struct Values {
    /// Per dword of the data stored, the lanes whose value is uninitialized.
    pub(crate) data: [u64; 8],
    /// Where the data's uninitialized value came from.
    pub(crate) data_origin: Option<Origin>,
    /// Per dword of the data read, the lanes that read an uninitialized byte.
    pub(crate) read: [u64; 8],
    /// Where the first uninitialized byte read came from.
    pub(crate) read_origin: Option<Origin>,
    /// Bytes written and read so far, per lane.
    wcur: [u16; 64],
    rcur: [u16; 64],
}

impl Default for Values {
    fn default() -> Self {
        Values {
            data: [0; 8],
            data_origin: None,
            read: [0; 8],
            read_origin: None,
            wcur: [0; 64],
            rcur: [0; 64],
        }
    }
}

/// LDS writes hidden at a barrier: (wave, sequence number) to (the write's
/// address, the barrier's address, the wait that retires it).
type Hidden = HashMap<(u32, u64), (u64, u64, String)>;

/// Whether a `ds_*` mnemonic is an atomic (an LDS read-modify-write), from
/// the instruction-property table ([`crate::isa`]; `table`: the target's,
/// `None`: CDNA's).
fn lds_atomic(table: Option<crate::isa::Table>, m: &str) -> bool {
    props_in(table, m).is_some_and(|p| {
        p.format == crate::isa::Format::Ds && matches!(p.access, crate::isa::Access::Atomic(_))
    })
}

impl LdsShadow {
    /// Shadow of `size` bytes, for a dispatch of `program`.
    fn new(size: usize, program: Arc<Program>) -> Self {
        LdsShadow {
            bytes: RefCell::new(vec![ByteShadow::default(); size]),
            epoch: Cell::new(0),
            current: Cell::new((0, 0, false)),
            findings: RefCell::new(Vec::new()),
            reported: RefCell::new(HashSet::new()),
            program,
            seq: Cell::new(0),
            hidden: RefCell::new(HashMap::new()),
            values: RefCell::new(Values::default()),
            gen: Cell::new(Generation::Gfx9),
        }
    }

    /// A new instruction: nothing stored or read yet.
    pub(crate) fn begin_values(&self) {
        *self.values.borrow_mut() = Values::default();
    }

    /// Per dword of the data the current instruction stores, the lanes
    /// whose value is uninitialized, and its origin.
    pub(crate) fn set_data(&self, data: [u64; 8], origin: Option<Origin>) {
        let mut v = self.values.borrow_mut();
        v.data = data;
        v.data_origin = origin;
    }

    /// Per dword of the data the current instruction read, the lanes that
    /// read an uninitialized byte, and the first one's origin.
    pub(crate) fn read_poison(&self) -> ([u64; 8], Option<Origin>) {
        let v = self.values.borrow();
        (v.read, v.read_origin)
    }

    /// Wave `wave` reached the barrier at `barrier` with the LDS writes
    /// `in_flight` ([`WaveSan::lds_writes_in_flight`]): until its wait
    /// retires them, the other waves' accesses to their bytes race.
    fn hide(&self, wave: u32, barrier: u64, in_flight: &[(u64, u64, String)]) {
        let mut h = self.hidden.borrow_mut();
        for (seq, addr, wait) in in_flight {
            h.entry((wave, *seq))
                .or_insert((*addr, barrier, wait.clone()));
        }
    }

    /// A race with a write in flight at a barrier, if `w`, the last write
    /// of `byte`, is one and `now` is another wave's access after it.
    fn unwaited(&self, byte: usize, w: Access, now: Access, write: bool) {
        if w.wave == now.wave || w.epoch >= now.epoch || (w.atomic && now.atomic) {
            return;
        }
        let Some((store, barrier, wait)) = self.hidden.borrow().get(&(w.wave, w.seq)).cloned()
        else {
            return;
        };
        let p = &self.program;
        let line = p
            .lines
            .get(&barrier)
            .and_then(|l| l.split(':').nth(1))
            .map(|n| format!(" before line {n}"))
            .unwrap_or_default();
        let model = self.gen.get().memory_model();
        let msg = format!(
            "LDS byte {byte:#x}: wave {} wrote it at {} and reached {} with the write in flight; wave {} {} it at {} after the barrier, before wave {} waited for it: the write needs `{wait}`{line} (the barrier), or the other wave may see the old value (LDS requests of different waves may be reordered: AMDGPUUsage, {model})",
            w.wave,
            describe(p, store),
            describe(p, barrier),
            now.wave,
            if write { "writes" } else { "reads" },
            describe(p, now.addr),
            w.wave,
        );
        self.report(
            Kind::StoreInFlightAtBarrier,
            now.wave,
            now.addr,
            Some(store),
            msg,
        );
    }

    fn report(&self, kind: Kind, wave: u32, addr: u64, other: Option<u64>, message: String) {
        if !self.reported.borrow_mut().insert((kind, addr, other)) {
            return;
        }
        self.findings.borrow_mut().push(Finding {
            kind,
            workgroup: [0; 3],
            wave,
            addr,
            other,
            message,
            occurrences: 1,
        });
    }

    fn now(&self) -> Access {
        let (wave, addr, atomic) = self.current.get();
        Access {
            wave,
            epoch: self.epoch.get(),
            addr,
            atomic,
            seq: self.seq.get(),
        }
    }

    fn race(&self, byte: usize, first: Access, first_is_write: bool, now: Access, write: bool) {
        let p = &self.program;
        let msg = format!(
            "LDS byte {byte:#x}: wave {} {} it at {} and wave {} {} it at {} with no s_barrier between",
            first.wave,
            if first_is_write { "wrote" } else { "read" },
            describe(p, first.addr),
            now.wave,
            if write { "writes" } else { "reads" },
            describe(p, now.addr),
        );
        self.report(Kind::LdsRace, now.wave, now.addr, Some(first.addr), msg);
    }

    /// An access of `size` bytes at `addr` by lane `lane` of the current
    /// instruction falls outside the allocation of `fixed` static plus
    /// `dynamic` bytes: a finding, once per instruction.
    fn out_of_range(
        &self,
        lane: u32,
        addr: u32,
        size: usize,
        write: bool,
        fixed: u64,
        dynamic: u32,
    ) {
        let now = self.now();
        let total = fixed + dynamic as u64;
        let msg = format!(
            "{}, lane {lane}: {size}-byte LDS {} at offset {addr:#x} is outside the workgroup's LDS allocation of {total} bytes ({fixed} static from the descriptor + {dynamic} dynamic from the launch); {}",
            describe(&self.program, now.addr),
            if write { "write" } else { "read" },
            if write {
                "the emulator drops the write"
            } else {
                "the emulator returns 0"
            },
        );
        let msg = if dynamic == 0 {
            format!("{msg}; a kernel that allocates LDS at launch (Triton's `shared`, HIP's `extern __shared__`) needs it as dynamic LDS (`gcn-patch run --dynamic-lds BYTES`, `dynamic-lds` in [[kernel.launch]])")
        } else {
            msg
        };
        self.report(Kind::LdsOutOfBounds, now.wave, now.addr, None, msg);
    }

    /// A read of `size` bytes at `addr` by lane `lane` of the current access.
    fn read(&self, lane: u32, addr: u32, size: usize) {
        let now = self.now();
        let mut bytes = self.bytes.borrow_mut();
        for b in addr as usize..addr as usize + size {
            let Some(s) = bytes.get_mut(b) else { return };
            let poison = match s.write {
                None => Some(Origin::Lds {
                    byte: b as u32,
                    read: now.addr,
                }),
                Some(w) => {
                    if w.epoch == now.epoch && w.wave != now.wave && !(w.atomic && now.atomic) {
                        self.race(b, w, true, now, false);
                    }
                    self.unwaited(b, w, now, false);
                    s.poison
                }
            };
            let mut v = self.values.borrow_mut();
            let k = v.rcur[(lane % 64) as usize] as usize + (b - addr as usize);
            if let Some(o) = poison {
                v.read[(k / 4).min(7)] |= 1u64 << (lane % 64);
                v.read_origin = v.read_origin.or(Some(o));
            }
            s.readers.retain(|r| r.epoch == now.epoch);
            if !s.readers.iter().any(|r| r.wave == now.wave) {
                s.readers.push(now);
            }
        }
        let mut v = self.values.borrow_mut();
        let l = (lane % 64) as usize;
        v.rcur[l] = v.rcur[l].saturating_add(size as u16);
    }

    /// A write of `size` bytes at `addr` by lane `lane` of the current
    /// access.
    fn write(&self, lane: u32, addr: u32, size: usize) {
        let now = self.now();
        let mut v = self.values.borrow_mut();
        let l = (lane % 64) as usize;
        let start = v.wcur[l] as usize;
        v.wcur[l] = v.wcur[l].saturating_add(size as u16);
        let mut bytes = self.bytes.borrow_mut();
        for b in addr as usize..addr as usize + size {
            let Some(s) = bytes.get_mut(b) else { return };
            // The data dword this byte comes from; an atomic's result
            // depends on all of its data.
            let dw = if now.atomic {
                v.data.iter().fold(0, |a, d| a | d)
            } else {
                v.data[((start + b - addr as usize) / 4).min(7)]
            };
            let stored = if dw >> l & 1 != 0 {
                v.data_origin
            } else {
                None
            };
            // An atomic combines the old value with the data.
            s.poison = match (stored, now.atomic, s.write) {
                (Some(o), _, _) => Some(o),
                (None, true, None) => Some(Origin::Lds {
                    byte: b as u32,
                    read: now.addr,
                }),
                (None, true, Some(_)) => s.poison,
                (None, false, _) => None,
            };
            if let Some(w) = s.write {
                if w.epoch == now.epoch && w.wave != now.wave && !(w.atomic && now.atomic) {
                    self.race(b, w, true, now, true);
                }
                self.unwaited(b, w, now, true);
            }
            s.readers.retain(|r| r.epoch == now.epoch);
            if let Some(r) = s
                .readers
                .iter()
                .find(|r| r.wave != now.wave && !(r.atomic && now.atomic))
            {
                let r = *r;
                self.race(b, r, false, now, true);
            }
            s.write = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Src;

    fn reg(file: RegFile, index: u16, count: u16) -> Src {
        Src {
            op: Operand::Reg { file, index, count },
            neg: false,
            abs: false,
            sext: false,
        }
    }

    fn ins(addr: u64, mnemonic: &str, ops: Vec<Src>, words: Vec<u32>) -> Instruction {
        Instruction::new(addr, mnemonic, ops, vec![], words, mnemonic.into())
    }

    /// gfx9 `s_waitcnt` simm16: vmcnt in [3:0] and [15:14], expcnt [6:4],
    /// lgkmcnt [11:8].
    fn waitcnt(vm: u32, lgkm: u32) -> Instruction {
        let imm = (vm & 0xf) | (vm >> 4) << 14 | 7 << 4 | lgkm << 8;
        ins(0x100, "s_waitcnt", vec![], vec![0xbf8c_0000 | imm])
    }

    fn wave() -> crate::exec::Wave {
        crate::exec::Wave::new(128, 0)
    }

    fn program() -> Program {
        Program {
            kernel: "k".into(),
            instructions: vec![],
            index: HashMap::new(),
            lines: HashMap::new(),
        }
    }

    fn use_of(w: &mut WaveSan, file: RegFile, r: u16) -> usize {
        let before = w.findings.len();
        w.before(
            &ins(
                0x200,
                "v_mov_b32_e32",
                vec![reg(RegFile::V, 99, 1), reg(file, r, 1)],
                vec![0],
            ),
            &program(),
            None,
            &wave(),
        );
        w.findings.len() - before
    }

    fn load(w: &mut WaveSan, m: &str, file: RegFile, r: u16) {
        w.before(
            &ins(
                0x10 + r as u64,
                m,
                vec![reg(file, r, 1), reg(RegFile::V, 98, 1)],
                vec![0],
            ),
            &program(),
            None,
            &wave(),
        );
    }

    #[test]
    fn checks_parse_print_and_cover_every_kind() {
        assert_eq!(Checks::parse("default").unwrap(), Checks::DEFAULT);
        assert_eq!(Checks::parse("all").unwrap(), Checks::ALL);
        let c = Checks::parse("waits, races").unwrap();
        assert_eq!(c.to_string(), "races,waits");
        assert!(c.contains(Checks::RACES) && !c.contains(Checks::UNINIT));
        assert_eq!(Checks::NONE.to_string(), "none");
        assert!(!Checks::DEFAULT.contains(Checks::BARRIER_PAIRS));
        assert_eq!(
            Checks::DEFAULT.union(Checks::BARRIER_PAIRS),
            Checks::ALL,
            "the opt-in check is the only one left out"
        );
        let e = Checks::parse("races,lds").unwrap_err();
        assert!(e.contains("unknown sanitizer check `lds`"), "{e}");
        assert!(e.contains("barrier-pairs"), "{e}");
        // Every kind belongs to exactly one named check.
        let kinds = [
            Kind::PrematureRead,
            Kind::LdsRace,
            Kind::UninitializedLds,
            Kind::OutOfBounds,
            Kind::BarrierDivergence,
            Kind::UninitializedRegister,
            Kind::StoreInFlightAtBarrier,
            Kind::Deadlock,
            Kind::UninitializedScratch,
        ];
        for k in kinds {
            let n = Checks::NAMES
                .iter()
                .filter(|(_, c)| *c == k.check())
                .count();
            assert_eq!(n, 1, "{k}");
        }
    }

    /// A VOPD pair is one instruction: a register its Y half reads while a
    /// load still writes it is a premature read, as one X reads.
    #[test]
    fn a_vopd_pairs_y_half_is_checked_too() {
        let pair = crate::decode::parse_line(
            "\tv_dual_mul_f32 v10, v4, v5 :: v_dual_add_f32 v11, v1, v7 // 000000000200: C8C80B04 0A0A0F01",
        )
        .unwrap()
        .unwrap();
        let mut w = WaveSan::new([0; 3], 0);
        load(&mut w, "global_load_dword", RegFile::V, 1);
        w.before(&pair, &program(), None, &wave());
        assert_eq!(w.findings.len(), 1, "{:?}", w.findings);
        assert!(
            w.findings[0].message.contains("v1"),
            "{}",
            w.findings[0].message
        );
    }

    #[test]
    fn vmcnt_retires_the_oldest_loads_first() {
        let mut w = WaveSan::new([0; 3], 0);
        load(&mut w, "global_load_dword", RegFile::V, 1);
        load(&mut w, "global_load_dword", RegFile::V, 2);
        w.before(&waitcnt(1, 15), &program(), None, &wave());
        assert_eq!(
            use_of(&mut w, RegFile::V, 1),
            0,
            "the older load is retired"
        );
        assert_eq!(
            use_of(&mut w, RegFile::V, 2),
            1,
            "the newer one is in flight"
        );
        assert_eq!(use_of(&mut w, RegFile::V, 2), 0, "reported once");
    }

    #[test]
    fn lds_is_in_order_but_scalar_loads_are_not() {
        let mut w = WaveSan::new([0; 3], 0);
        load(&mut w, "ds_read_b32", RegFile::V, 1);
        load(&mut w, "ds_read_b32", RegFile::V, 2);
        w.before(&waitcnt(63, 1), &program(), None, &wave());
        assert_eq!(use_of(&mut w, RegFile::V, 1), 0);
        assert_eq!(use_of(&mut w, RegFile::V, 2), 1);
        // A scalar load in flight: lgkmcnt(1) may have seen it complete
        // instead of the LDS read, so neither is retired.
        let mut w = WaveSan::new([0; 3], 0);
        load(&mut w, "ds_read_b32", RegFile::V, 1);
        load(&mut w, "s_load_dword", RegFile::S, 4);
        load(&mut w, "s_load_dword", RegFile::S, 5);
        w.before(&waitcnt(63, 2), &program(), None, &wave());
        assert_eq!(use_of(&mut w, RegFile::V, 1), 1);
        w.before(&waitcnt(63, 1), &program(), None, &wave());
        assert_eq!(
            use_of(&mut w, RegFile::S, 4),
            1,
            "scalar: only lgkmcnt(0) retires"
        );
        w.before(&waitcnt(63, 0), &program(), None, &wave());
        assert_eq!(use_of(&mut w, RegFile::S, 5), 0);
    }

    #[test]
    fn a_later_in_order_load_may_overwrite_but_a_valu_may_not() {
        let mut w = WaveSan::new([0; 3], 0);
        load(&mut w, "global_load_dword", RegFile::V, 1);
        load(&mut w, "global_load_dword", RegFile::V, 1);
        assert!(w.findings.is_empty());
        w.before(
            &ins(
                0x300,
                "v_mov_b32_e32",
                vec![reg(RegFile::V, 1, 1), reg(RegFile::V, 7, 1)],
                vec![0],
            ),
            &program(),
            None,
            &wave(),
        );
        assert_eq!(w.findings.len(), 1);
        assert!(w.findings[0]
            .message
            .contains("no s_waitcnt ran between them"));
        assert!(w.findings[0].message.contains("`s_waitcnt vmcnt(0)`"));
    }

    /// A wave with `gen`'s rules and `target`'s table.
    fn rdna(target: &str) -> WaveSan {
        let mut w = WaveSan::new([0; 3], 0);
        let gen = Generation::of(target).unwrap();
        w.rules(gen, crate::isa::table_for(target));
        w
    }

    fn store(w: &mut WaveSan, m: &str) {
        w.before(
            &ins(
                0x40,
                m,
                vec![reg(RegFile::V, 90, 2), reg(RegFile::V, 92, 1)],
                vec![0],
            ),
            &program(),
            None,
            &wave(),
        );
    }

    fn wait_word(w: &mut WaveSan, m: &str, word: u32) {
        w.before(
            &ins(0x100, m, vec![], vec![word]),
            &program(),
            None,
            &wave(),
        );
    }

    /// gfx11's `s_waitcnt` simm16: expcnt [2:0], lgkmcnt [9:4], vmcnt [15:10].
    fn waitcnt11(vm: u32, lgkm: u32) -> u32 {
        0xbf89_0000 | vm << 10 | lgkm << 4 | 7
    }

    #[test]
    fn gfx11_stores_count_on_vscnt_not_vmcnt() {
        // A load then a store: on gfx9 vmcnt(1) retires the load (the
        // store is the newer one on the same counter); on gfx11 the store
        // is on vscnt, so vmcnt(1) leaves the load in flight.
        let mut w = WaveSan::new([0; 3], 0);
        load(&mut w, "global_load_dword", RegFile::V, 1);
        store(&mut w, "global_store_dword");
        w.before(&waitcnt(1, 15), &program(), None, &wave());
        assert_eq!(use_of(&mut w, RegFile::V, 1), 0, "gfx9: retired");

        let mut w = rdna("gfx1100");
        load(&mut w, "global_load_b32", RegFile::V, 1);
        store(&mut w, "global_store_b32");
        wait_word(&mut w, "s_waitcnt", waitcnt11(1, 63));
        assert_eq!(use_of(&mut w, RegFile::V, 1), 1, "gfx11: still in flight");
        let m = &w.findings[0].message;
        assert!(m.contains("it needs `s_waitcnt vmcnt(0)`"), "{m}");
        assert!(m.contains("in flight: vmcnt 1, vscnt 1, lgkmcnt 0"), "{m}");
        // s_waitcnt_vscnt retires stores only.
        let mut w = rdna("gfx1100");
        load(&mut w, "global_load_b32", RegFile::V, 1);
        wait_word(&mut w, "s_waitcnt_vscnt", 0xbc7c_0000);
        assert_eq!(use_of(&mut w, RegFile::V, 1), 1);
        let mut w = rdna("gfx1100");
        load(&mut w, "global_load_b32", RegFile::V, 1);
        wait_word(&mut w, "s_waitcnt", waitcnt11(0, 63));
        assert_eq!(use_of(&mut w, RegFile::V, 1), 0);
    }

    #[test]
    fn rdna_atomics_count_on_vmcnt_with_a_return_and_vscnt_without() {
        for (target, ret) in [
            ("gfx1100", ("glc", "")),
            ("gfx1201", ("th", "TH_ATOMIC_RETURN")),
        ] {
            let mut w = rdna(target);
            let mut a = ins(
                0x10,
                "global_atomic_add_u32",
                vec![
                    reg(RegFile::V, 5, 1),
                    reg(RegFile::V, 6, 2),
                    reg(RegFile::V, 8, 1),
                ],
                vec![0],
            );
            a.mods = vec![(ret.0.into(), ret.1.into())];
            w.before(&a, &program(), None, &wave());
            assert_eq!(w.queues[0].len(), 1, "{target}: on vmcnt/loadcnt");
            assert_eq!(use_of(&mut w, RegFile::V, 5), 1, "{target}: its return");
            let mut w = rdna(target);
            a.mods.clear();
            a.ops.remove(0);
            w.before(&a, &program(), None, &wave());
            assert_eq!(
                (w.queues[0].len(), w.queues[1].len()),
                (0, 1),
                "{target}: on vscnt/storecnt"
            );
        }
    }

    /// `s_prefetch_inst s[76:77], 0x1000, s78, 0` (aiter's gfx1250 f8gemm
    /// prologue issues ten on the same SGPR pair): its first printed
    /// operand is the base it reads; the table's `sdata` destination is an
    /// immediate, so nothing is in flight to a register.
    #[test]
    fn gfx12_prefetch_writes_no_register() {
        for m in ["s_prefetch_inst", "s_prefetch_data"] {
            let mut w = rdna("gfx1201");
            let p = ins(
                0x10,
                m,
                vec![reg(RegFile::S, 76, 2), reg(RegFile::S, 78, 1)],
                vec![0],
            );
            w.before(&p, &program(), None, &wave());
            w.before(&p, &program(), None, &wave());
            assert_eq!(use_of(&mut w, RegFile::S, 76), 0, "{m}");
            assert!(w.findings.is_empty(), "{m}: {:?}", w.findings);
        }
        let mut w = rdna("gfx1201");
        load(&mut w, "s_load_b32", RegFile::S, 4);
        assert_eq!(use_of(&mut w, RegFile::S, 4), 1, "a scalar load still is");
    }

    #[test]
    fn gfx12_split_counters_retire_each_their_own() {
        let mut w = rdna("gfx1201");
        load(&mut w, "global_load_b32", RegFile::V, 1);
        load(&mut w, "ds_load_b32", RegFile::V, 2);
        load(&mut w, "s_load_b32", RegFile::S, 4);
        wait_word(&mut w, "s_wait_loadcnt", 0xbfc0_0000);
        assert_eq!(use_of(&mut w, RegFile::V, 1), 0, "loadcnt retired the load");
        assert_eq!(use_of(&mut w, RegFile::V, 2), 1, "not the LDS read");
        let m = &w.findings[0].message;
        assert!(m.contains("it needs `s_wait_dscnt 0x0`"), "{m}");
        assert!(
            m.contains("in flight: loadcnt 0, storecnt 0, dscnt 1, kmcnt 1"),
            "{m}"
        );
        assert!(m.contains("the last wait"), "{m}");
        assert_eq!(use_of(&mut w, RegFile::S, 4), 1, "nor the scalar load");
        assert!(w.findings[1].message.contains("`s_wait_kmcnt 0x0`"));
        // Combined: loadcnt in [13:8], dscnt in [5:0].
        let mut w = rdna("gfx1201");
        load(&mut w, "global_load_b32", RegFile::V, 1);
        load(&mut w, "global_load_b32", RegFile::V, 2);
        load(&mut w, "ds_load_b32", RegFile::V, 3);
        wait_word(&mut w, "s_wait_loadcnt_dscnt", 0xbfc8_0100);
        assert_eq!(use_of(&mut w, RegFile::V, 1), 0);
        assert_eq!(use_of(&mut w, RegFile::V, 3), 0);
        assert_eq!(
            use_of(&mut w, RegFile::V, 2),
            1,
            "loadcnt(1) keeps the newer load"
        );
        assert!(w.findings[0].message.contains("`s_wait_loadcnt 0x0`"));
        // Scalar loads return in any order: kmcnt(1) retires neither.
        let mut w = rdna("gfx1201");
        load(&mut w, "s_load_b32", RegFile::S, 4);
        load(&mut w, "s_load_b32", RegFile::S, 5);
        wait_word(&mut w, "s_wait_kmcnt", 0xbfc7_0001);
        assert_eq!(use_of(&mut w, RegFile::S, 4), 1);
        // s_wait_idle retires everything; s_wait_alu nothing.
        let mut w = rdna("gfx1201");
        load(&mut w, "global_load_b32", RegFile::V, 1);
        load(&mut w, "ds_load_b32", RegFile::V, 2);
        wait_word(&mut w, "s_wait_alu", 0xbf88_fffe);
        assert_eq!(w.waits, 0, "s_wait_alu is not a memory wait");
        wait_word(&mut w, "s_wait_idle", 0xbf8a_0000);
        assert_eq!(
            use_of(&mut w, RegFile::V, 1) + use_of(&mut w, RegFile::V, 2),
            0
        );
        // A later load on the same in-order counter may overwrite.
        let mut w = rdna("gfx1201");
        load(&mut w, "global_load_b32", RegFile::V, 1);
        load(&mut w, "global_load_b32", RegFile::V, 1);
        assert!(w.findings.is_empty());
    }

    /// Two waves of gfx1201: wave 0 stores LDS bytes 0..4 and signals the
    /// barrier (`wait`: with `s_wait_dscnt 0x0` before the signal); wave
    /// 1 reads them after the barrier.
    fn gfx12_barrier(wait: bool) -> Vec<Finding> {
        use crate::observe::Event as Ev;
        let mut list = vec![ins(
            0x10,
            "ds_store_b32",
            vec![reg(RegFile::V, 0, 1), reg(RegFile::V, 3, 1)],
            vec![0],
        )];
        if wait {
            list.push(ins(0x18, "s_wait_dscnt", vec![], vec![0xbfc6_0000]));
        }
        list.push(ins(0x1c, "s_barrier_signal", vec![], vec![0xbe80_4ec1]));
        list.push(ins(0x20, "s_barrier_wait", vec![], vec![0xbf94_ffff]));
        list.push(ins(
            0x24,
            "ds_load_b32",
            vec![reg(RegFile::V, 1, 1), reg(RegFile::V, 0, 1)],
            vec![0],
        ));
        let mut p = program();
        for (i, x) in list.iter().enumerate() {
            p.index.insert(x.addr, i);
        }
        p.instructions = list;
        let p = Arc::new(p);
        let mut wg =
            Workgroup::new(p.clone(), Checks::DEFAULT, [0; 3], 2, 0, 64, 0).target("gfx1201");
        let running = wave();
        let mut waiting = wave();
        waiting.state = WaveState::Barrier;
        let n = p.instructions.len();
        for w in 0..2u32 {
            for (i, x) in p.instructions[..n - 1].iter().enumerate() {
                if w == 1 && x.mnemonic != "s_barrier_signal" && x.mnemonic != "s_barrier_wait" {
                    continue;
                }
                wg.issue(&Issue {
                    workgroup: [0; 3],
                    wave: w,
                    index: i,
                    instruction: x,
                    state: &running,
                });
                let acc = [crate::observe::Access {
                    lane: 0,
                    space: Space::Lds,
                    kind: AccessKind::Write,
                    addr: 0,
                    bytes: 4,
                }];
                let store = x.mnemonic == "ds_store_b32";
                wg.executed(&Ev {
                    workgroup: [0; 3],
                    wave: w,
                    index: i,
                    exec: 1,
                    accesses: if store { &acc } else { &[] },
                    state: if x.mnemonic == "s_barrier_wait" {
                        &waiting
                    } else {
                        &running
                    },
                });
            }
        }
        wg.barrier_released();
        let read = &p.instructions[n - 1];
        wg.issue(&Issue {
            workgroup: [0; 3],
            wave: 1,
            index: n - 1,
            instruction: read,
            state: &running,
        });
        wg.executed(&Ev {
            workgroup: [0; 3],
            wave: 1,
            index: n - 1,
            exec: 1,
            accesses: &[crate::observe::Access {
                lane: 0,
                space: Space::Lds,
                kind: AccessKind::Read,
                addr: 0,
                bytes: 4,
            }],
            state: &running,
        });
        wg.findings()
    }

    #[test]
    fn gfx12_lds_store_in_flight_at_barrier_signal_is_reported_like_a_missing_lgkmcnt() {
        let f = gfx12_barrier(false);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, Kind::StoreInFlightAtBarrier);
        assert_eq!(f[0].other, Some(0x10));
        let m = &f[0].message;
        assert!(m.contains("needs `s_wait_dscnt 0x0`"), "{m}");
        assert!(m.contains("reached 0x1c `s_barrier_signal`"), "{m}");
        assert!(m.contains("memory model GFX12"), "{m}");
        let f = gfx12_barrier(true);
        assert!(f.is_empty(), "{f:?}");
    }
}
