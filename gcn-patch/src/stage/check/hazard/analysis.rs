//! The data-flow analysis: score brackets per counter, as in LLVM's
//! `SIInsertWaitcnts.cpp` (`WaitcntBrackets`), over the kernel's CFG.
//!
//! For each counter the state keeps an upper bound of the operations that may
//! be outstanding, and for every register a pending operation will write the
//! number `d` of operations on the same counter issued after it (LLVM's
//! `UB - score`). A wait `N` on an in-order counter retires everything but the
//! `N` newest operations, so it retires a register with `d >= N`; on an
//! out-of-order counter (SMEM pending, mixed events, flat) only `N = 0`
//! retires anything. At a join the states merge by taking, per register, the
//! smallest `d` (the strictest wait) and the largest outstanding bound; `d`
//! saturates at the counter's maximum - 1 (as LLVM clamps its waits), so
//! loops reach a fixpoint.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use super::cfg::{Cfg, Inst};
use super::model::{
    counter_index, unit_name, units, Flow, Kind, Model, Unit, VmemType, COUNTERS, KINDS, LDS_DMA,
    LDS_STORE,
};
use crate::base::isa::Counter;
use crate::base::parse::RegisterRef;

/// A pending operation's claim on one register unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pend {
    /// The counter's clock when the operation issued: `clock - at` operations
    /// on the same counter were issued after it (LLVM's `UB - score`).
    pub at: u32,
    /// 0-based line of the producing instruction.
    pub producer: usize,
    /// VMEM type of the producer, for the in-order write rule.
    pub vmem: Option<VmemType>,
    /// The operation only reads the register later (export / store data).
    pub late_read: bool,
    /// The operation writes one 16-bit half only (d16 load): `Some(true)` high.
    pub half: Option<bool>,
}

/// Clock value of a fresh state (room below it for saturated distances).
const CLOCK0: u32 = 1 << 20;

/// State of one counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterState {
    /// Operations issued on this counter so far (plus `CLOCK0`).
    pub clock: u32,
    /// Upper bound of outstanding operations (saturates at the counter's max).
    pub outstanding: u32,
    /// Per kind: issue clock of the newest pending operation of that kind
    /// (never 0: clocks start at `CLOCK0`; 4 bytes, the analysis keeps a
    /// state per block).
    pub kinds: [Option<NonZeroU32>; KINDS],
    /// Registers pending operations will write (or still read).
    pub regs: BTreeMap<Unit, Pend>,
    /// The last wait on this counter on every path here: (line, value).
    pub last_wait: Option<(usize, u32)>,
}

impl Default for CounterState {
    fn default() -> Self {
        CounterState {
            clock: CLOCK0,
            outstanding: 0,
            kinds: [None; KINDS],
            regs: BTreeMap::new(),
            last_wait: None,
        }
    }
}

impl CounterState {
    /// Operations issued after one issued at `at`, saturated at `sat` (as
    /// LLVM's determineWait clamps to max - 1).
    pub fn dist(&self, at: u32, sat: u32) -> u32 {
        self.clock.saturating_sub(at).min(sat)
    }

    /// Only a wait for 0 retires anything (SMEM pending, mixed kinds, flat).
    pub fn out_of_order(&self) -> bool {
        self.kinds[Kind::Smem.index()].is_some()
            || self.kinds[Kind::Flat.index()].is_some()
            || self.kinds.iter().filter(|k| k.is_some()).count() > 1
    }

    /// The loosest wait that retires a pending entry.
    pub fn needed(&self, p: &Pend, sat: u32) -> u32 {
        if self.out_of_order() {
            0
        } else {
            self.dist(p.at, sat)
        }
    }
}

/// Units per bit of [`State`]'s summary of the units that may be pending:
/// a coarse summary (a superset) keeps every block's state small (the
/// analysis holds one per block) and still decides most register accesses
/// by one bit test.
const ANY_SHIFT: u32 = 2;

/// Words of that summary.
const ANY_WORDS: usize = ((super::model::LDS_STORE >> ANY_SHIFT) as usize) / 64 + 1;

/// Word and bit of unit `u` in the summary.
fn any_bit(u: Unit) -> (usize, u32) {
    let b = u >> ANY_SHIFT;
    (b as usize / 64, b % 64)
}

/// The state before an instruction: one [`CounterState`] per counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// Indexed by [`counter_index`].
    pub counters: [CounterState; 10],
    any: [u64; ANY_WORDS],
}

impl Default for State {
    fn default() -> Self {
        State {
            counters: Default::default(),
            any: [0; ANY_WORDS],
        }
    }
}

/// The saturation distance of a counter: max - 1.
fn sat_of(model: &Model, i: usize) -> u32 {
    model.max(COUNTERS[i]).saturating_sub(1)
}

impl State {
    /// May `u` be pending in some counter?
    fn maybe(&self, u: Unit) -> bool {
        let (w, b) = any_bit(u);
        self.any.get(w).is_some_and(|x| x & (1 << b) != 0)
    }

    fn mark(&mut self, u: Unit) {
        let (w, b) = any_bit(u);
        if let Some(x) = self.any.get_mut(w) {
            *x |= 1 << b;
        }
    }

    fn rebuild_any(&mut self) {
        let mut any = [0u64; ANY_WORDS];
        for c in &self.counters {
            for &u in c.regs.keys() {
                let (w, b) = any_bit(u);
                if let Some(x) = any.get_mut(w) {
                    *x |= 1 << b;
                }
            }
        }
        self.any = any;
    }

    /// Merge `other` into `self`; true if `self` changed.
    pub fn merge(&mut self, other: &State, model: &Model) -> bool {
        let mut changed = false;
        for (i, c) in self.counters.iter_mut().enumerate() {
            let o = &other.counters[i];
            let max = model.max(COUNTERS[i]);
            let sat = sat_of(model, i);
            let outstanding = c.outstanding.max(o.outstanding).min(max);
            changed |= outstanding != c.outstanding;
            c.outstanding = outstanding;
            for k in 0..KINDS {
                let merged = match (c.kinds[k], o.kinds[k]) {
                    (Some(a), Some(b)) => Some(c.dist(a.get(), sat).min(o.dist(b.get(), sat))),
                    (Some(a), None) => Some(c.dist(a.get(), sat)),
                    (None, Some(b)) => Some(o.dist(b.get(), sat)),
                    (None, None) => None,
                }
                .and_then(|d| NonZeroU32::new(c.clock - d));
                changed |= merged != c.kinds[k];
                c.kinds[k] = merged;
            }
            for (u, p) in &o.regs {
                let dp = o.dist(p.at, sat);
                match c.regs.get(u).copied() {
                    Some(q) => {
                        let dq = c.dist(q.at, sat);
                        let mut m = if dp < dq || (dp == dq && p.producer < q.producer) {
                            Pend {
                                at: c.clock - dp,
                                ..*p
                            }
                        } else {
                            Pend {
                                at: c.clock - dq,
                                ..q
                            }
                        };
                        m.late_read = q.late_read && p.late_read;
                        if q.half != p.half {
                            m.half = None;
                        }
                        if m != q {
                            c.regs.insert(*u, m);
                            changed = true;
                        }
                    }
                    None => {
                        c.regs.insert(
                            *u,
                            Pend {
                                at: c.clock - dp,
                                ..*p
                            },
                        );
                        changed = true;
                    }
                }
            }
            if c.last_wait.is_some() && c.last_wait != o.last_wait {
                c.last_wait = None;
                changed = true;
            }
        }
        for (x, y) in self.any.iter_mut().zip(other.any.iter()) {
            *x |= *y;
        }
        changed
    }

    /// Apply a wait: at most `n` operations of `counter` stay outstanding.
    pub fn wait(&mut self, model: &Model, counter: Counter, n: u32, line: Option<usize>) {
        let max = model.max(counter);
        let sat = max.saturating_sub(1);
        let c = &mut self.counters[counter_index(counter)];
        if let Some(l) = line {
            c.last_wait = Some((l, n));
        }
        // The maximum encodes "do not wait" (`vmcnt(63)` is omitted by the
        // assembler); LLVM never emits more than max - 1 for a real wait.
        if n >= c.outstanding || n >= max {
            return;
        }
        if n == 0 {
            c.outstanding = 0;
            c.kinds = [None; KINDS];
            let had = !c.regs.is_empty();
            c.regs.clear();
            if had {
                self.rebuild_any();
            }
            return;
        }
        let ooo = c.out_of_order();
        c.outstanding = n;
        if ooo {
            return;
        }
        let before = c.regs.len();
        let clock = c.clock;
        let dist = |at: u32| clock.saturating_sub(at).min(sat);
        c.regs.retain(|_, p| dist(p.at) < n);
        for k in c.kinds.iter_mut() {
            if k.is_some_and(|at| dist(at.get()) >= n) {
                *k = None;
            }
        }
        if c.regs.len() != before {
            self.rebuild_any();
        }
    }
}

/// What a hazard is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The instruction reads the register.
    Read,
    /// The instruction overwrites the register.
    Overwrite,
    /// A barrier while LDS operations are pending.
    Barrier,
}

/// One hazard: an access to a register a pending operation will write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hazard {
    /// 0-based line of the accessing instruction.
    pub line: usize,
    /// Read or overwrite.
    pub access: Access,
    /// The register as written in the instruction (e.g. `v[80:81]`).
    pub register: String,
    /// The pending registers among it (e.g. `v80, v81`).
    pub pending: Vec<Unit>,
    /// 0-based line of the producing instruction.
    pub producer: usize,
    /// The counter to wait on.
    pub counter: Counter,
    /// The loosest wait on `counter` that makes it safe.
    pub needed: u32,
    /// Outstanding bound on `counter` at this point.
    pub outstanding: u32,
    /// Operations issued after the producer on `counter`.
    pub newer: u32,
    /// The counter is out of order here (SMEM, mixed, flat).
    pub out_of_order: bool,
    /// The last wait on `counter` on every path here: (line, value).
    pub last_wait: Option<(usize, u32)>,
}

/// Options of one analysis run.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Replace the value of (line, counter index) in a wait instruction.
    pub waits: BTreeMap<(usize, usize), u32>,
    /// Treat a barrier as a use of this wave's pending LDS stores (used for
    /// suggestions: a wait a barrier relies on is never offered for loosening,
    /// although the barrier itself is the memory model's business, not a
    /// register hazard).
    pub barrier_rule: bool,
    /// Treat a d16 load's kept half as a read of its destination, as LLVM's
    /// tied use does (used for suggestions: LLVM keeps waits for it that the
    /// hardware, which writes only the loaded half, does not need; a wait the
    /// compiler keeps is never offered for removal).
    pub tied_d16: bool,
}

/// The analysis of one kernel.
pub struct Analysis<'a> {
    /// The model.
    pub model: &'a Model,
    /// The CFG.
    pub cfg: &'a Cfg,
    /// Wait values per line (from the parsed wait instructions).
    pub waits: &'a BTreeMap<usize, Vec<(Counter, u32)>>,
}

impl Analysis<'_> {
    /// Run to a fixpoint; return every hazard (one per instruction and
    /// counter, after which the analysis assumes the wait was inserted).
    pub fn run(&self, ov: &Overrides) -> Vec<Hazard> {
        let n = self.cfg.nodes.len();
        let mut input: Vec<Option<State>> = vec![None; n];
        input[0] = Some(State::default());
        let mut work: Vec<usize> = vec![0];
        let mut queued = vec![false; n];
        queued[0] = true;
        // Bound the iterations: the lattice is finite, this is a safety net.
        let mut budget = n * 200 + 1000;
        while let Some(b) = work.pop() {
            queued[b] = false;
            if budget == 0 {
                break;
            }
            budget -= 1;
            let Some(mut st) = input[b].clone() else {
                continue;
            };
            for inst in &self.cfg.nodes[b].insts {
                self.step(inst, &mut st, ov, &mut |_| {});
            }
            for &s in &self.cfg.nodes[b].succs {
                let changed = match &mut input[s] {
                    Some(x) => x.merge(&st, self.model),
                    None => {
                        input[s] = Some(st.clone());
                        true
                    }
                };
                if changed && !queued[s] {
                    queued[s] = true;
                    work.push(s);
                }
            }
        }
        let mut out = vec![];
        for (b, node) in self.cfg.nodes.iter().enumerate() {
            let Some(mut st) = input[b].clone() else {
                continue;
            };
            for inst in &node.insts {
                self.step(inst, &mut st, ov, &mut |h| out.push(h));
            }
        }
        out.sort_by_key(|h| (h.line, h.producer));
        out.dedup_by_key(|h| (h.line, h.counter, h.register.clone()));
        out
    }

    /// The transfer function of one instruction.
    fn step(&self, inst: &Inst, st: &mut State, ov: &Overrides, report: &mut dyn FnMut(Hazard)) {
        let e = &inst.effect;
        if let Some(ws) = self.waits.get(&inst.line) {
            for &(c, v) in ws {
                let v = ov
                    .waits
                    .get(&(inst.line, counter_index(c)))
                    .copied()
                    .unwrap_or(v);
                st.wait(self.model, c, v, Some(inst.line));
            }
            return;
        }
        // Per counter: the strictest need among this instruction's accesses.
        let mut worst: [Option<Hazard>; 10] = Default::default();
        let tied: &[RegisterRef] = if ov.tied_d16 && e.d16_half.is_some() {
            &e.defs
        } else {
            &[]
        };
        let accesses = e
            .reads
            .iter()
            .chain(tied)
            .map(|r| (r, Access::Read))
            .chain(e.defs.iter().map(|r| (r, Access::Overwrite)));
        for (reg, access) in accesses {
            let us: Vec<Unit> = units(reg).filter(|u| st.maybe(*u)).collect();
            if us.is_empty() {
                continue;
            }
            for (ci, c) in st.counters.iter().enumerate() {
                if c.regs.is_empty() {
                    continue;
                }
                let sat = sat_of(self.model, ci);
                let mut hit: Vec<(Unit, Pend)> = vec![];
                for u in &us {
                    if let Some(p) = c.regs.get(u) {
                        if p.late_read && access == Access::Read {
                            continue;
                        }
                        if access == Access::Overwrite
                            && !p.late_read
                            && p.half.is_some()
                            && e.d16_half.is_some()
                            && p.half != e.d16_half
                        {
                            continue; // d16 loads into the two halves of one VGPR
                        }
                        if access == Access::Overwrite
                            && !p.late_read
                            && !e.flat
                            && self.model.vmem_write_in_order()
                            && e.vmem_load.is_some_and(|(vc, vt)| {
                                counter_index(vc) == ci && p.vmem == Some(vt)
                            })
                        {
                            continue; // same-type VMEM writes complete in order
                        }
                        hit.push((*u, *p));
                    }
                }
                let Some(&(_, p)) = hit
                    .iter()
                    .min_by_key(|(_, p)| (c.needed(p, sat), std::cmp::Reverse(p.producer)))
                else {
                    continue;
                };
                let h = Hazard {
                    line: inst.line,
                    access,
                    register: reg.to_string(),
                    pending: hit
                        .iter()
                        .filter(|(_, q)| q.producer == p.producer)
                        .map(|(u, _)| *u)
                        .collect(),
                    producer: p.producer,
                    counter: COUNTERS[ci],
                    needed: c.needed(&p, sat),
                    outstanding: c.outstanding,
                    newer: c.dist(p.at, sat),
                    out_of_order: c.out_of_order(),
                    last_wait: c.last_wait,
                };
                if worst[ci].as_ref().is_none_or(|w| w.needed > h.needed) {
                    worst[ci] = Some(h);
                }
            }
        }
        // LDS reads and writes wait for LDS DMA on the VMEM counter. Kept
        // apart: whether the two touch the same LDS bytes is decided later
        // (`lds::dma_alias`), so the fix is not assumed for the registers.
        let mut dma: Vec<Hazard> = vec![];
        if e.reads_lds || e.writes_lds {
            for (ci, c) in st.counters.iter().enumerate() {
                if let Some(p) = c.regs.get(&LDS_DMA) {
                    let sat = sat_of(self.model, ci);
                    dma.push(Hazard {
                        line: inst.line,
                        access: if e.reads_lds {
                            Access::Read
                        } else {
                            Access::Overwrite
                        },
                        register: unit_name(LDS_DMA),
                        pending: vec![LDS_DMA],
                        producer: p.producer,
                        counter: COUNTERS[ci],
                        needed: c.needed(p, sat),
                        outstanding: c.outstanding,
                        newer: c.dist(p.at, sat),
                        out_of_order: c.out_of_order(),
                        last_wait: c.last_wait,
                    });
                }
            }
        }
        // A barrier usually publishes this wave's LDS stores to the workgroup
        // (a workgroup release, which LLVM's SIMemoryLegalizer implements as
        // `s_waitcnt lgkmcnt(0)` before it); only with `barrier_rule`.
        if e.barrier && ov.barrier_rule {
            for (ci, c) in st.counters.iter().enumerate() {
                if let Some(p) = c.regs.get(&LDS_STORE) {
                    let sat = sat_of(self.model, ci);
                    let h = Hazard {
                        line: inst.line,
                        access: Access::Barrier,
                        register: unit_name(LDS_STORE),
                        pending: vec![LDS_STORE],
                        producer: p.producer,
                        counter: COUNTERS[ci],
                        needed: c.needed(p, sat),
                        outstanding: c.outstanding,
                        newer: c.dist(p.at, sat),
                        out_of_order: c.out_of_order(),
                        last_wait: c.last_wait,
                    };
                    if worst[ci].as_ref().is_none_or(|w| w.needed > h.needed) {
                        worst[ci] = Some(h);
                    }
                }
            }
        }
        for (ci, h) in worst.into_iter().enumerate() {
            let Some(h) = h else { continue };
            // Assume the fix: report once, not at every later use.
            st.wait(self.model, COUNTERS[ci], h.needed, None);
            report(h);
        }
        // An LDS access while LDS DMA is pending (unless the register fix
        // above retired it): reported once per DMA, which is then assumed
        // done for LDS only.
        for h in dma {
            let c = &mut st.counters[counter_index(h.counter)];
            if c.regs.remove(&LDS_DMA).is_some() {
                report(h);
            }
        }
        // A call: the AMDGPU calling convention has the callee wait for every
        // counter at its entry (SIInsertWaitcnts inserts it for non-kernel
        // functions), so nothing of ours is pending after it. The call itself
        // is reported as not followed.
        if e.flow == Flow::Call {
            *st = State::default();
            return;
        }
        // Issue: count the events, record what they will write.
        for ev in &e.events {
            let ci = counter_index(ev.counter);
            let max = self.model.max(ev.counter);
            let c = &mut st.counters[ci];
            c.outstanding = (c.outstanding + 1).min(max);
            c.clock += 1;
            let now = c.clock;
            c.kinds[ev.kind.index()] = NonZeroU32::new(now);
            let vmem = e.vmem_load.map(|(_, t)| t);
            for r in &ev.writes {
                for u in units(r) {
                    c.regs.insert(
                        u,
                        Pend {
                            at: now,
                            producer: inst.line,
                            vmem,
                            late_read: false,
                            half: e.d16_half,
                        },
                    );
                }
            }
            for r in &ev.reads_late {
                for u in units(r) {
                    c.regs.entry(u).or_insert(Pend {
                        at: now,
                        producer: inst.line,
                        vmem: None,
                        late_read: true,
                        half: None,
                    });
                }
            }
            if ev.lds_store {
                c.regs.insert(
                    LDS_STORE,
                    Pend {
                        at: now,
                        producer: inst.line,
                        vmem: None,
                        late_read: false,
                        half: None,
                    },
                );
            }
            if ev.lds_dma {
                c.regs.insert(
                    LDS_DMA,
                    Pend {
                        at: now,
                        producer: inst.line,
                        vmem: None,
                        late_read: false,
                        half: None,
                    },
                );
            }
            for r in ev.writes.iter().chain(&ev.reads_late) {
                for u in units(r) {
                    st.mark(u);
                }
            }
            if ev.lds_store {
                st.mark(LDS_STORE);
            }
            if ev.lds_dma {
                st.mark(LDS_DMA);
            }
        }
    }
}
