//! ALU dependency hazards of GFX12 *expert scheduling mode 2*: a kernel that
//! sets `SCHED_MODE.DEP_MODE = 2` (`s_setreg_imm32_b32
//! hwreg(HW_REG_WAVE_SCHED_MODE, 0, 2), 2`) turns off the hardware interlocks
//! on two dependency counters, and every window must be covered by an
//! explicit `s_wait_alu` (`s_waitcnt_depctr`):
//!
//! * `va_vdst` counts VALU instructions whose VGPR results are not written
//!   yet. A non-VALU instruction (VMEM, FLAT/global/scratch, LDS, async and
//!   DMA loads to LDS) that reads or overwrites a VGPR a pending VALU writes
//!   (RAW, WAW), or overwrites a VGPR a pending VALU still reads (WAR), waits
//!   for `va_vdst`. VALU → VALU is still interlocked by the hardware.
//! * `vm_vsrc` counts memory instructions (VMEM, FLAT, LDS) that have not
//!   read their VGPR sources (addresses, store data) yet. Any instruction
//!   that overwrites such a VGPR (WAR) waits for `vm_vsrc`.
//!
//! The rules are LLVM's (`SIInsertWaitcnts.cpp` in expert mode,
//! `AMDGPUHWEvents.cpp`; llvm-project PRs #170319, #201619, #203292) and aiter
//! PR #5402's; the model is written down in the book
//! (`docs/src/design/hazards.md`, "SCHED_MODE_2").
//!
//! The analysis is a forward data flow over the kernel's CFG like the
//! wait-counter one ([`super::analysis`]): per counter an issue clock, the
//! newest issue of each event class (two classes pending make the counter
//! out of order: only a wait for 0 retires anything), and per VGPR the
//! pending producer. The scheduling mode is part of the state (normal at the
//! kernel entry, set by `s_setreg*` of `HW_REG_WAVE_SCHED_MODE`); a hazard is
//! reported where mode 2 reaches on *some* path (a may-analysis: at a join
//! of a normal and a mode-2 path the check applies).

use std::collections::BTreeMap;

use super::cfg::Cfg;
use super::model::{units, Model, Unit};
use crate::base::parse::{AsmFile, Instruction, Operand, RegFile};

/// The two counters the check follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AluCounter {
    /// `va_vdst`: VALU instructions that have not written their VGPRs.
    VaVdst,
    /// `vm_vsrc`: memory instructions that have not read their VGPR sources.
    VmVsrc,
}

impl AluCounter {
    /// The field name in `s_wait_alu` (`depctr_va_vdst`).
    pub fn field(self) -> &'static str {
        match self {
            AluCounter::VaVdst => "va_vdst",
            AluCounter::VmVsrc => "vm_vsrc",
        }
    }

    /// The largest value of the field: it means "do not wait" (4 and 3 bits
    /// of the `s_wait_alu` immediate).
    pub fn max(self) -> u32 {
        match self {
            AluCounter::VaVdst => 15,
            AluCounter::VmVsrc => 7,
        }
    }
}

/// What the consumer does with the register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AluAccess {
    /// Reads a VGPR a pending VALU writes (RAW).
    ReadAfterValuWrite,
    /// Overwrites a VGPR a pending VALU writes (WAW).
    WriteAfterValuWrite,
    /// Overwrites a VGPR a pending VALU still reads (WAR).
    WriteAfterValuRead,
    /// Overwrites a VGPR a pending memory instruction still reads (WAR).
    WriteAfterMemRead,
}

impl AluAccess {
    /// The counter that covers it.
    pub fn counter(self) -> AluCounter {
        match self {
            AluAccess::WriteAfterMemRead => AluCounter::VmVsrc,
            _ => AluCounter::VaVdst,
        }
    }
}

/// One hazard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AluHazard {
    /// 0-based line of the consumer.
    pub line: usize,
    /// 0-based line of the producer.
    pub producer: usize,
    /// The kind of dependency.
    pub access: AluAccess,
    /// The VGPRs (units) concerned.
    pub pending: Vec<Unit>,
    /// The loosest value of the counter's field that covers it.
    pub needed: u32,
    /// Instructions counted after the producer (saturated).
    pub newer: u32,
    /// Two event classes are pending: only 0 retires anything.
    pub out_of_order: bool,
    /// The normal mode reaches here on another path (the mode is not 2 on
    /// every path).
    pub mixed_mode: bool,
}

/// The scheduling mode (a lattice: `Both` at a join of the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    Expert,
    Both,
}

impl Mode {
    fn join(self, o: Mode) -> Mode {
        if self == o {
            self
        } else {
            Mode::Both
        }
    }
}

/// The memory counter a memory instruction completes on (a wait for it to
/// reach `n` also means its sources were read: LLVM's `simplifyVmVsrc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemCnt {
    Load,
    Store,
    Ds,
    Async,
}

const MEMCNTS: usize = 4;

/// What one instruction does for the check.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    /// A VALU instruction of event class `class` (0 core/side, 1 DP, 2
    /// TRANS, 3 XDL).
    Valu {
        class: usize,
        defs: Vec<Unit>,
        uses: Vec<Unit>,
    },
    /// A memory instruction of class `class` (0 LDS, 1 FLAT/global/scratch,
    /// 2 other VMEM), counted on `cnt`.
    Mem {
        class: usize,
        cnt: Option<MemCnt>,
        defs: Vec<Unit>,
        uses: Vec<Unit>,
    },
    /// `s_wait_alu` / `s_waitcnt_depctr`: (va_vdst, vm_vsrc).
    WaitAlu(u32, u32),
    /// A memory counter wait: counter, value.
    WaitMem(Vec<(MemCnt, u32)>),
    /// `s_wait_idle`: everything done.
    Idle,
    /// A write of `SCHED_MODE`: the new mode (`Both` when unknown).
    SetMode(Mode),
    /// Anything else.
    Other,
}

/// A pending claim on one VGPR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pend {
    at: u32,
    producer: usize,
    class: usize,
    /// Memory producers: (counter, its clock at issue).
    mem: Option<(MemCnt, u32)>,
}

const CLOCK0: u32 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Ctr {
    clock: u32,
    kinds: [Option<u32>; 4],
    /// Producer writes (va_vdst) or source reads (vm_vsrc).
    regs: BTreeMap<Unit, Pend>,
    /// va_vdst only: VGPRs pending VALUs still read.
    reads: BTreeMap<Unit, Pend>,
}

impl Ctr {
    fn new() -> Ctr {
        Ctr {
            clock: CLOCK0,
            kinds: [None; 4],
            regs: BTreeMap::new(),
            reads: BTreeMap::new(),
        }
    }

    fn dist(&self, at: u32, sat: u32) -> u32 {
        self.clock.saturating_sub(at).min(sat)
    }

    fn out_of_order(&self) -> bool {
        self.kinds.iter().filter(|k| k.is_some()).count() > 1
    }

    fn wait(&mut self, n: u32, max: u32) {
        if n >= max {
            return;
        }
        if n == 0 {
            self.kinds = [None; 4];
            self.regs.clear();
            self.reads.clear();
            return;
        }
        if self.out_of_order() {
            return;
        }
        let clock = self.clock;
        let keep = |at: u32| clock.saturating_sub(at) < n;
        self.regs.retain(|_, p| keep(p.at));
        self.reads.retain(|_, p| keep(p.at));
        for k in self.kinds.iter_mut() {
            if k.is_some_and(|at| !keep(at)) {
                *k = None;
            }
        }
    }

    fn merge(&mut self, o: &Ctr, sat: u32) -> bool {
        let mut changed = false;
        for k in 0..4 {
            let m = match (self.kinds[k], o.kinds[k]) {
                (Some(a), Some(b)) => Some(self.dist(a, sat).min(o.dist(b, sat))),
                (Some(a), None) => Some(self.dist(a, sat)),
                (None, Some(b)) => Some(o.dist(b, sat)),
                (None, None) => None,
            }
            .map(|d| self.clock - d);
            changed |= m != self.kinds[k];
            self.kinds[k] = m;
        }
        let clock = self.clock;
        let sclock = self.clock;
        for (mine, theirs) in [(&mut self.regs, &o.regs), (&mut self.reads, &o.reads)] {
            for (u, p) in theirs {
                let dp = o.clock.saturating_sub(p.at).min(sat);
                let cand = Pend {
                    at: clock - dp,
                    ..*p
                };
                match mine.get(u) {
                    Some(q) => {
                        let dq = sclock.saturating_sub(q.at).min(sat);
                        if dp < dq || (dp == dq && p.producer < q.producer) {
                            mine.insert(*u, cand);
                            changed = true;
                        } else if q.at != clock - dq {
                            mine.insert(
                                *u,
                                Pend {
                                    at: clock - dq,
                                    ..*q
                                },
                            );
                            changed = true;
                        }
                    }
                    None => {
                        mine.insert(*u, cand);
                        changed = true;
                    }
                }
            }
        }
        changed
    }
}

/// Saturation of the memory counters' distances (the largest gfx12 counter
/// is 63).
const MEM_SAT: u32 = 62;

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    mode: Mode,
    va: Ctr,
    vm: Ctr,
    mem: [u32; MEMCNTS],
}

impl State {
    fn new() -> State {
        State {
            mode: Mode::Normal,
            va: Ctr::new(),
            vm: Ctr::new(),
            mem: [CLOCK0; MEMCNTS],
        }
    }

    fn merge(&mut self, o: &State) -> bool {
        let mut changed = false;
        let mode = self.mode.join(o.mode);
        changed |= mode != self.mode;
        self.mode = mode;
        changed |= self.va.merge(&o.va, AluCounter::VaVdst.max() - 1);
        // Memory positions of the vm_vsrc claims are relative to the memory
        // clocks: rebase the other side's to ours before merging.
        let mut other = o.vm.clone();
        for p in other.regs.values_mut() {
            if let Some((c, at)) = p.mem {
                let d = o.mem[c as usize].saturating_sub(at).min(MEM_SAT);
                p.mem = Some((c, self.mem[c as usize] - d));
            }
        }
        changed |= self.vm.merge(&other, AluCounter::VmVsrc.max() - 1);
        // Keep the strictest (newest) memory position per claim.
        for (u, p) in self.vm.regs.iter_mut() {
            if let (Some((c, a)), Some(q)) = (p.mem, other.regs.get(u).and_then(|q| q.mem)) {
                if q.0 == c && q.1 > a {
                    p.mem = Some((c, q.1));
                    changed = true;
                }
            }
        }
        changed
    }

    /// A wait for memory counter `c` ≤ `n`: the instructions it retires have
    /// read their sources.
    fn wait_mem(&mut self, c: MemCnt, n: u32) {
        let clock = self.mem[c as usize];
        let before = self.vm.regs.len();
        self.vm.regs.retain(|_, p| match p.mem {
            Some((pc, at)) if pc == c => clock.saturating_sub(at).min(MEM_SAT) < n,
            _ => true,
        });
        if self.vm.regs.len() != before {
            // Recompute the pending classes from what is left (a class with
            // no claim left has nothing pending that matters).
            let mut kinds = [None; 4];
            for p in self.vm.regs.values() {
                let k: &mut Option<u32> = &mut kinds[p.class];
                *k = Some(k.map_or(p.at, |x: u32| x.max(p.at)));
            }
            for (k, v) in kinds.iter().enumerate() {
                if v.is_none() {
                    self.vm.kinds[k] = None;
                }
            }
        }
    }
}

/// The decoded instruction of a line of text: the instruction itself, or for
/// a raw `.long … ; raw: TEXT` line of a lift, TEXT; llvm-objdump's physical
/// register annotations (`v[96:99] /*v[352:355]*/`) resolved by the parser
/// ([`crate::base::parse::resolve_inline_comments`]).
fn decoded(text: &str) -> Option<Instruction> {
    let f = crate::base::parse::parse(&format!("{}\n", text.trim_end()));
    f.lines.first()?.instruction().cloned()
}

fn vgpr_units<'a>(regs: impl Iterator<Item = &'a crate::base::parse::RegisterRef>) -> Vec<Unit> {
    let mut v: Vec<Unit> = regs
        .filter(|r| r.file == RegFile::Vgpr)
        .flat_map(units)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// TRANS VALU opcodes (LLVM `isTRANS`: the transcendental unit).
const TRANS: [&str; 9] = [
    "v_exp_",
    "v_log_",
    "v_rcp_",
    "v_rsq_",
    "v_sqrt_",
    "v_sin_",
    "v_cos_",
    "v_rcp_iflag",
    "v_tanh_",
];

fn valu_class(m: &str) -> usize {
    if m.starts_with("v_wmma") || m.starts_with("v_swmmac") {
        3
    } else if TRANS.iter().any(|p| m.starts_with(p)) {
        2
    } else if m.ends_with("_f64") || m.contains("_f64_") {
        1
    } else {
        0
    }
}

/// The immediate of a `hwreg(...)` write to `SCHED_MODE` (id 26): the new
/// mode, if this instruction writes DEP_MODE (bits 1:0).
fn set_mode(inst: &Instruction) -> Option<Mode> {
    let m = inst.mnemonic.as_str();
    if !m.starts_with("s_setreg") {
        return None;
    }
    let hw = inst.operands.iter().find_map(|o| match o {
        Operand::Func(f) if f.starts_with("hwreg(") => Some(f.to_string()),
        _ => None,
    })?;
    let inner = hw.trim_start_matches("hwreg(").trim_end_matches(')');
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let id = parts.first()?;
    if *id != "HW_REG_WAVE_SCHED_MODE" && *id != "HW_REG_SCHED_MODE" && *id != "26" {
        return None;
    }
    let num = |s: &str| -> Option<u32> {
        let s = s.trim();
        if let Some(h) = s.strip_prefix("0x") {
            u32::from_str_radix(h, 16).ok()
        } else {
            s.parse().ok()
        }
    };
    let offset = parts.get(1).and_then(|s| num(s)).unwrap_or(0);
    let size = parts.get(2).and_then(|s| num(s)).unwrap_or(32);
    if offset > 1 {
        return None; // DEP_MODE untouched
    }
    let value = if m == "s_setreg_imm32_b32" {
        match inst.operands.last() {
            Some(Operand::Integer(v)) => Some(*v as u32),
            _ => None,
        }
    } else {
        None
    };
    Some(match value {
        Some(v) if offset == 0 && size >= 2 => match v & 3 {
            2 => Mode::Expert,
            0 => Mode::Normal,
            _ => Mode::Both,
        },
        _ => Mode::Both,
    })
}

fn parse_num(s: &str) -> Option<u32> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// (va_vdst, vm_vsrc) of an `s_wait_alu` / `s_waitcnt_depctr`: named fields
/// (`depctr_va_vdst(0)`, also without the `depctr_` prefix) or the 16-bit
/// immediate (va_vdst bits 15:12, vm_vsrc bits 4:2; checked with llvm-mc-22
/// for gfx1250: `s_wait_alu depctr_va_vdst(0)` is `0x0f9f`,
/// `depctr_vm_vsrc(0)` is `0xff83`).
fn wait_alu(inst: &Instruction) -> (u32, u32) {
    let (mut va, mut vm) = (AluCounter::VaVdst.max(), AluCounter::VmVsrc.max());
    for o in &inst.operands {
        match o {
            Operand::Integer(v) => {
                let v = *v as u32;
                va = (v >> 12) & 0xf;
                vm = (v >> 2) & 0x7;
            }
            Operand::Func(f) => {
                let f = f.trim_start_matches("depctr_");
                let Some((name, arg)) = f.split_once('(') else {
                    continue;
                };
                let Some(n) = parse_num(arg.trim_end_matches(')')) else {
                    continue;
                };
                match name {
                    "va_vdst" => va = n,
                    "vm_vsrc" => vm = n,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    (va, vm)
}

fn wait_mem(inst: &Instruction) -> Option<Vec<(MemCnt, u32)>> {
    let m = inst.mnemonic.as_str();
    let v = match inst.operands.first() {
        Some(Operand::Integer(v)) => *v as u32,
        _ => return None,
    };
    Some(match m {
        "s_wait_loadcnt" => vec![(MemCnt::Load, v)],
        "s_wait_storecnt" => vec![(MemCnt::Store, v)],
        "s_wait_dscnt" => vec![(MemCnt::Ds, v)],
        "s_wait_asynccnt" => vec![(MemCnt::Async, v)],
        "s_wait_loadcnt_dscnt" => vec![(MemCnt::Load, (v >> 8) & 0x3f), (MemCnt::Ds, v & 0x3f)],
        "s_wait_storecnt_dscnt" => {
            vec![(MemCnt::Store, (v >> 8) & 0x3f), (MemCnt::Ds, v & 0x3f)]
        }
        _ => return None,
    })
}

const MEM_PREFIXES: [&str; 7] = [
    "ds_", "global_", "flat_", "scratch_", "buffer_", "tbuffer_", "image_",
];

fn classify(inst: &Instruction, model: &Model) -> Op {
    let m = inst.mnemonic.as_str();
    if m == "s_wait_alu" || m == "s_waitcnt_depctr" {
        let (va, vm) = wait_alu(inst);
        return Op::WaitAlu(va, vm);
    }
    if m == "s_wait_idle" {
        return Op::Idle;
    }
    if let Some(ws) = wait_mem(inst) {
        return Op::WaitMem(ws);
    }
    if let Some(mode) = set_mode(inst) {
        return Op::SetMode(mode);
    }
    if m.starts_with("v_") {
        let e = model.effect(inst);
        let mut defs = vgpr_units(e.defs.iter());
        let mut uses = vgpr_units(e.reads.iter());
        // VOPD: the Y half's destination is a def, not a read.
        if let Some(d) = &inst.dual {
            if let Some(Operand::Register(r)) = d.operands.first() {
                let y: Vec<Unit> = vgpr_units(std::iter::once(r));
                uses.retain(|u| {
                    !y.contains(u)
                        || d.operands[1..]
                            .iter()
                            .any(|o| o.register().is_some_and(|x| units(x).contains(u)))
                });
                defs.extend(y);
            }
        }
        return Op::Valu {
            class: valu_class(m),
            defs,
            uses,
        };
    }
    if MEM_PREFIXES.iter().any(|p| m.starts_with(p)) {
        let cache_op = m.starts_with("buffer_inv")
            || m.starts_with("buffer_wb")
            || m.starts_with("global_inv")
            || m.starts_with("global_wb");
        if cache_op {
            return Op::Other;
        }
        // Loads to LDS (async, DMA) write no VGPR: every VGPR is a source
        // (the first operand of `global_load_async_to_lds_*` is the LDS
        // address).
        let to_lds = m.contains("_to_lds") || m.contains("_load_lds") || inst.has_modifier("lds");
        let e = model.effect(inst);
        let (defs, uses) = if to_lds {
            (vec![], vgpr_units(e.defs.iter().chain(e.reads.iter())))
        } else {
            (vgpr_units(e.defs.iter()), vgpr_units(e.reads.iter()))
        };
        let class = if m.starts_with("ds_") {
            0
        } else if m.starts_with("global_") || m.starts_with("flat_") || m.starts_with("scratch_") {
            1
        } else {
            2
        };
        let cnt = if to_lds && !m.starts_with("buffer_") {
            Some(MemCnt::Async)
        } else if m.starts_with("ds_") {
            Some(MemCnt::Ds)
        } else if defs.is_empty() && !m.contains("_load") {
            Some(MemCnt::Store)
        } else {
            Some(MemCnt::Load)
        };
        return Op::Mem {
            class,
            cnt,
            defs,
            uses,
        };
    }
    Op::Other
}

/// The check's view of one kernel: per CFG node, (line, op) in order,
/// including raw `.long` lines of a lift that carry their decoded text.
pub struct AluKernel {
    nodes: Vec<Vec<(usize, Op)>>,
    succs: Vec<Vec<usize>>,
    /// Lines of the `s_setreg` that select mode 2.
    pub mode_lines: Vec<usize>,
}

/// Prepare `cfg` (of `asm`) for the check; `None` when no instruction of the
/// kernel may select mode 2 (nothing to check).
pub fn prepare(asm: &AsmFile, cfg: &Cfg, model: &Model) -> Option<AluKernel> {
    let is_raw = |l: usize| {
        asm.lines.get(l).is_some_and(|x| {
            x.instruction().is_none()
                && x.label().is_none()
                && x.text().trim_start().starts_with(".long")
        })
    };
    // Most kernels never write SCHED_MODE: nothing to decode.
    let writes_mode = cfg.nodes.iter().flat_map(|n| &n.insts).any(|i| {
        asm.lines[i.line]
            .instruction()
            .is_some_and(|x| set_mode(x).is_some_and(|m| m != Mode::Normal))
    });
    if !writes_mode {
        return None;
    }
    let mut node_lines: Vec<Vec<usize>> = vec![];
    for node in &cfg.nodes {
        let mut lines: Vec<usize> = vec![];
        if let (Some(first), Some(last)) = (node.insts.first(), node.insts.last()) {
            // Raw lines just before the first instruction (after a label or
            // a branch) and between the instructions belong to the block; so
            // do the ones after its last instruction when it falls through
            // into a label.
            let mut start = first.line;
            while start > 0 && is_raw(start - 1) {
                start -= 1;
            }
            let mut end = last.line;
            if last.effect.flow == super::model::Flow::Next {
                while is_raw(end + 1) {
                    end += 1;
                }
            }
            for l in start..=end {
                if asm.lines[l].instruction().is_some() || is_raw(l) {
                    lines.push(l);
                }
            }
        }
        node_lines.push(lines);
    }
    let mut nodes = vec![];
    let mut mode_lines = vec![];
    for lines in node_lines {
        let ops: Vec<(usize, Op)> = lines
            .into_iter()
            .filter_map(|l| {
                // Raw lines are resolved by the parser; gfx1250's VGPRs
                // by the MSBs control flow gives (`Cfg::instruction`).
                let inst = cfg.instruction(asm, l)?;
                let op = classify(&inst, model);
                if matches!(op, Op::SetMode(Mode::Expert | Mode::Both)) {
                    mode_lines.push(l);
                }
                Some((l, op))
            })
            .collect();
        nodes.push(ops);
    }
    if mode_lines.is_empty() {
        return None;
    }
    Some(AluKernel {
        nodes,
        succs: cfg.nodes.iter().map(|n| n.succs.clone()).collect(),
        mode_lines,
    })
}

impl AluKernel {
    /// Run to a fixpoint; every hazard (one per consumer and counter; the
    /// fix is assumed after it).
    pub fn hazards(&self) -> Vec<AluHazard> {
        let n = self.nodes.len();
        if n == 0 {
            return vec![];
        }
        let mut input: Vec<Option<State>> = vec![None; n];
        input[0] = Some(State::new());
        let mut work = vec![0usize];
        let mut queued = vec![false; n];
        queued[0] = true;
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
            for (l, op) in &self.nodes[b] {
                step(*l, op, &mut st, &mut |_| {});
            }
            for &s in &self.succs[b] {
                let changed = match &mut input[s] {
                    Some(x) => x.merge(&st),
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
        for (b, node) in self.nodes.iter().enumerate() {
            let Some(mut st) = input[b].clone() else {
                continue;
            };
            for (l, op) in node {
                step(*l, op, &mut st, &mut |h| out.push(h));
            }
        }
        out.sort_by_key(|h| (h.line, h.access.counter(), h.producer));
        out.dedup_by_key(|h| (h.line, h.access.counter()));
        out
    }
}

/// Check `regs` against the claims of `map`; the strictest hit.
fn hit(
    ctr: &Ctr,
    map: &BTreeMap<Unit, Pend>,
    regs: &[Unit],
    sat: u32,
) -> Option<(Pend, Vec<Unit>, u32)> {
    let mut best: Option<(Pend, u32)> = None;
    for u in regs {
        if let Some(p) = map.get(u) {
            let need = if ctr.out_of_order() {
                0
            } else {
                ctr.dist(p.at, sat)
            };
            if best.is_none_or(|(_, b)| need < b) {
                best = Some((*p, need));
            }
        }
    }
    let (p, need) = best?;
    let pending = regs
        .iter()
        .copied()
        .filter(|u| map.get(u).is_some_and(|q| q.producer == p.producer))
        .collect();
    Some((p, pending, need))
}

fn step(line: usize, op: &Op, st: &mut State, report: &mut dyn FnMut(AluHazard)) {
    let va_sat = AluCounter::VaVdst.max() - 1;
    let vm_sat = AluCounter::VmVsrc.max() - 1;
    let check = st.mode != Mode::Normal;
    let mixed = st.mode == Mode::Both;
    match op {
        Op::SetMode(m) => st.mode = *m,
        Op::WaitAlu(va, vm) => {
            st.va.wait(*va, AluCounter::VaVdst.max());
            st.vm.wait(*vm, AluCounter::VmVsrc.max());
        }
        Op::WaitMem(ws) => {
            for (c, n) in ws {
                st.wait_mem(*c, *n);
            }
        }
        Op::Idle => {
            st.va.wait(0, 1);
            st.vm.wait(0, 1);
        }
        Op::Other => {}
        Op::Valu { class, defs, uses } => {
            if check {
                if let Some((p, pending, need)) = hit(&st.vm, &st.vm.regs, defs, vm_sat) {
                    report(AluHazard {
                        line,
                        producer: p.producer,
                        access: AluAccess::WriteAfterMemRead,
                        pending,
                        needed: need,
                        newer: st.vm.dist(p.at, vm_sat),
                        out_of_order: st.vm.out_of_order(),
                        mixed_mode: mixed,
                    });
                    st.vm.wait(need, AluCounter::VmVsrc.max());
                }
            }
            let c = &mut st.va;
            c.clock += 1;
            let now = c.clock;
            c.kinds[*class] = Some(now);
            let pend = Pend {
                at: now,
                producer: line,
                class: *class,
                mem: None,
            };
            for u in uses {
                c.reads.insert(*u, pend);
            }
            for u in defs {
                c.regs.insert(*u, pend);
                c.reads.remove(u);
            }
        }
        Op::Mem {
            class,
            cnt,
            defs,
            uses,
        } => {
            if check {
                let mut found: Vec<(AluAccess, Pend, Vec<Unit>, u32, &Ctr)> = vec![];
                let all: Vec<Unit> = {
                    let mut a = uses.clone();
                    a.extend(defs.iter().copied());
                    a
                };
                if let Some((p, pend, need)) = hit(&st.va, &st.va.regs, uses, va_sat) {
                    found.push((AluAccess::ReadAfterValuWrite, p, pend, need, &st.va));
                } else if let Some((p, pend, need)) = hit(&st.va, &st.va.regs, &all, va_sat) {
                    found.push((AluAccess::WriteAfterValuWrite, p, pend, need, &st.va));
                }
                if let Some((p, pend, need)) = hit(&st.va, &st.va.reads, defs, va_sat) {
                    if found.first().is_none_or(|f| need < f.3) {
                        found.clear();
                        found.push((AluAccess::WriteAfterValuRead, p, pend, need, &st.va));
                    }
                }
                if let Some((p, pend, need)) = hit(&st.vm, &st.vm.regs, defs, vm_sat) {
                    found.push((AluAccess::WriteAfterMemRead, p, pend, need, &st.vm));
                }
                let hs: Vec<AluHazard> = found
                    .into_iter()
                    .map(|(access, p, pending, need, c)| AluHazard {
                        line,
                        producer: p.producer,
                        access,
                        pending,
                        needed: need,
                        newer: c.dist(
                            p.at,
                            if access.counter() == AluCounter::VaVdst {
                                va_sat
                            } else {
                                vm_sat
                            },
                        ),
                        out_of_order: c.out_of_order(),
                        mixed_mode: mixed,
                    })
                    .collect();
                for h in hs {
                    match h.access.counter() {
                        AluCounter::VaVdst => st.va.wait(h.needed, AluCounter::VaVdst.max()),
                        AluCounter::VmVsrc => st.vm.wait(h.needed, AluCounter::VmVsrc.max()),
                    }
                    report(h);
                }
            }
            let memclock = cnt.map(|c| {
                st.mem[c as usize] += 1;
                (c, st.mem[c as usize])
            });
            let c = &mut st.vm;
            c.clock += 1;
            let now = c.clock;
            c.kinds[*class] = Some(now);
            for u in uses {
                c.regs.insert(
                    *u,
                    Pend {
                        at: now,
                        producer: line,
                        class: *class,
                        mem: memclock,
                    },
                );
            }
        }
    }
}

/// Instructions between the producer and the consumer when both are in one
/// straight line of code (no label between) and no `s_wait_alu` between
/// waits for the hazard's counter.
pub(super) fn straight_distance(asm: &AsmFile, h: &AluHazard) -> Option<usize> {
    if h.producer >= h.line {
        return None;
    }
    let mut n = 0;
    for l in h.producer + 1..h.line {
        let line = &asm.lines[l];
        if line.label().is_some() {
            return None;
        }
        if let Some(i) = decoded(line.text()) {
            if matches!(i.mnemonic.as_str(), "s_wait_alu" | "s_waitcnt_depctr") {
                let (va, vm) = wait_alu(&i);
                let v = match h.access.counter() {
                    AluCounter::VaVdst => va,
                    AluCounter::VmVsrc => vm,
                };
                if v < h.access.counter().max() {
                    return None;
                }
            }
            n += 1;
        }
    }
    Some(n)
}

/// `v[4:7]` for contiguous units, else `v4, v9`.
fn regs_text(us: &[Unit]) -> String {
    let contiguous = us.windows(2).all(|w| w[1] == w[0] + 1);
    match us {
        [] => String::new(),
        [one] => super::model::unit_name(*one),
        [first, .., last] if contiguous && *last < 1024 => format!("v[{first}:{last}]"),
        _ => us
            .iter()
            .map(|u| super::model::unit_name(*u))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A hazard as a diagnostic at its consumer: what, the producer, why the
/// hardware does not hold the wave (the mode), the counter and the exact
/// `s_wait_alu` to insert.
pub(super) fn render(
    doc: &crate::base::document::Document,
    kernel: &str,
    k: &AluKernel,
    h: &AluHazard,
    policy: crate::config::policy::HazardPolicy,
) -> crate::base::diag::Diagnostic {
    use crate::base::diag::{Code, Diagnostic};
    use crate::config::policy::HazardPolicy;
    let asm = doc.asm();
    // The instruction as written, with physical registers (a raw line: its
    // decoded text).
    let text = |l: usize| {
        let t = asm.lines[l].text().trim();
        let t = if t.starts_with(".long") {
            t.split_once("; raw:").map_or(t, |x| x.1)
        } else {
            t
        };
        crate::base::parse::resolve_inline_comments(crate::base::parse::strip_comment(t))
            .trim()
            .to_string()
    };
    let mn = |l: usize| {
        decoded(asm.lines[l].text())
            .map(|i| i.mnemonic.to_string())
            .unwrap_or_default()
    };
    let (m, pm) = (mn(h.line), mn(h.producer));
    let regs = regs_text(&h.pending);
    let c = h.access.counter();
    let field = c.field();
    let what = match h.access {
        AluAccess::ReadAfterValuWrite => format!(
            "`{m}` reads `{regs}` before the `{pm}` that writes it is done (SCHED_MODE_2: no hardware interlock)"
        ),
        AluAccess::WriteAfterValuWrite => format!(
            "`{m}` overwrites `{regs}` while the `{pm}` that writes it may not be done (SCHED_MODE_2: no hardware interlock)"
        ),
        AluAccess::WriteAfterValuRead => format!(
            "`{m}` overwrites `{regs}` while the `{pm}` that reads it may not have read it (SCHED_MODE_2: no hardware interlock)"
        ),
        AluAccess::WriteAfterMemRead => format!(
            "`{m}` overwrites `{regs}` before the `{pm}` that reads it (address or data) has read it (SCHED_MODE_2: no hardware interlock)"
        ),
    };
    let msg = format!("kernel `{kernel}`: {what}");
    // A VALU source overwritten by a memory load (WAR on va_vdst) is LLVM's
    // conservative rule (llvm-project #201619: "possible, though not very
    // common"); aiter #5402 found its kernels correct without these waits.
    // A warning, not an error.
    let mut d = match policy {
        HazardPolicy::Error | HazardPolicy::Strict if h.access != AluAccess::WriteAfterValuRead => {
            Diagnostic::error(Code::AluDependencyHazard, msg)
        }
        _ => Diagnostic::warning(Code::AluDependencyHazard, msg),
    };
    if h.access == AluAccess::WriteAfterValuRead {
        d = d.with_note("a warning: the memory instruction would have to write its result before the VALU has read its sources; LLVM inserts this wait (llvm-project #201619: possible, though not very common), but no failure is known from it");
    }
    d = d.with_note(format!(
        "{regs} {}: `{}` at {}",
        match h.access {
            AluAccess::ReadAfterValuWrite | AluAccess::WriteAfterValuWrite => "is written by",
            _ => "is read by",
        },
        text(h.producer),
        doc.origin_text(h.producer)
    ));
    let mode_at = k
        .mode_lines
        .first()
        .map(|l| format!("`{}` at {}", text(*l), doc.origin_text(*l)))
        .unwrap_or_default();
    d = d.with_note(format!(
        "the kernel selects SCHED_MODE_2 (expert scheduling, DEP_MODE = 2) with {mode_at}{}: {}",
        if h.mixed_mode {
            " on some path to here (the normal mode reaches it on another)"
        } else {
            ""
        },
        match c {
            AluCounter::VaVdst => "a non-VALU instruction is not held until the VALU results it touches are written (va_vdst)",
            AluCounter::VmVsrc => "an instruction is not held until memory instructions have read the VGPRs it overwrites (vm_vsrc)",
        }
    ));
    d = d.with_note(if h.out_of_order {
        format!(
            "{field} here: instructions of several classes are pending ({}), completing out of order, so only {field}(0) covers it",
            match c {
                AluCounter::VaVdst => "core, DP, TRANS or XDL VALU",
                AluCounter::VmVsrc => "LDS, FLAT/global or buffer accesses",
            }
        )
    } else {
        format!(
            "{field} here: {} counted after that `{pm}`, so {field} ≤ {} covers it",
            h.newer, h.needed
        )
    });
    match straight_distance(asm, h) {
        Some(0) => {}
        Some(n) => {
            d = d.with_note(format!(
                "{n} instruction(s) between the `{pm}` and this one, in straight-line code with no `s_wait_alu` for {field}: the code relies on their latency"
            ));
        }
        None => {}
    }
    d = d.with_help(format!(
        "insert `s_wait_alu depctr_{field}({})` before {}",
        h.needed,
        doc.origin_text(h.line)
    ));
    let label = match h.access {
        AluAccess::ReadAfterValuWrite => format!("reads {regs}"),
        _ => format!("overwrites {regs}"),
    };
    doc.locate(d, h.line, None, label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gcn_embed::Generation;

    fn run(src: &str) -> Vec<AluHazard> {
        let asm = crate::base::parse::parse(src);
        let model = Model::new(Generation::Gfx12_5, "gfx1250");
        let ranges: Vec<std::ops::Range<usize>> = std::iter::once(0..asm.lines.len()).collect();
        let cfg = super::super::cfg::build(&asm, &ranges, &model);
        prepare(&asm, &cfg, &model).map_or_else(Vec::new, |k| k.hazards())
    }

    const MODE2: &str = "\ts_setreg_imm32_b32 hwreg(HW_REG_WAVE_SCHED_MODE, 0, 2), 2\n";

    #[test]
    fn raw_valu_address_needs_va_vdst() {
        let src = format!(
            "{MODE2}\tv_add_nc_u32_e64 v203, v202, s80\n\tglobal_load_async_to_lds_b128 v203, v[198:199], off\n\ts_endpgm\n"
        );
        let h = run(&src);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].access, AluAccess::ReadAfterValuWrite);
        assert_eq!((h[0].line, h[0].producer, h[0].needed), (2, 1, 0));
        // With the wait: clean.
        let fixed = src.replace(
            "\tglobal_load_async",
            "\ts_wait_alu depctr_va_vdst(0)\n\tglobal_load_async",
        );
        assert!(run(&fixed).is_empty());
        // A VALU after the producer: va_vdst(1) suffices.
        let one = src.replace(
            "\tglobal_load_async",
            "\tv_mov_b32 v7, v8\n\tglobal_load_async",
        );
        assert_eq!(run(&one)[0].needed, 1);
    }

    #[test]
    fn war_on_memory_source_needs_vm_vsrc() {
        let src =
            format!("{MODE2}\tds_store_b32 v1, v2\n\tv_cvt_pk_bf16_f32 v2, v3, v4\n\ts_endpgm\n");
        let h = run(&src);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].access, AluAccess::WriteAfterMemRead);
        let fixed = src.replace("\tv_cvt", "\ts_wait_alu depctr_vm_vsrc(0)\n\tv_cvt");
        assert!(run(&fixed).is_empty());
        // The immediate form, and a dscnt wait (the store completed, so it
        // read its sources) cover it too.
        assert!(run(&src.replace("\tv_cvt", "\ts_wait_alu 0xff83\n\tv_cvt")).is_empty());
        assert!(run(&src.replace("\tv_cvt", "\ts_wait_dscnt 0x0\n\tv_cvt")).is_empty());
        // va_vdst(0) alone does not.
        assert_eq!(
            run(&src.replace("\tv_cvt", "\ts_wait_alu depctr_va_vdst(0)\n\tv_cvt")).len(),
            1
        );
    }

    /// gfx1250: llvm-objdump lists a branch target under VGPR MSBs 0, the
    /// wave runs it under the `s_set_vgpr_msb` it executed before the
    /// branch; the finding follows the true register.
    #[test]
    fn branch_target_registers_follow_the_executed_vgpr_msbs() {
        let kernel = |msb: &str, data: &str| {
            format!(
                "{MODE2}\ts_set_vgpr_msb {msb}\n\tds_store_b32 v1, {data}\n\ts_cbranch_scc1 .LBB0_2\n\ts_endpgm\n.LBB0_2:\n\tv_cvt_pk_bf16_f32 v2, v3, v4\n\ts_endpgm\n"
            )
        };
        // 0x44: the store reads v258 (slot 1 = 1) and the target's
        // `v_cvt_pk_bf16_f32 v2` writes v258 (slot 3 = 1): a WAR the
        // listing's `v2` hides.
        let h = run(&kernel("0x44", "v2 /*v258*/"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].access, AluAccess::WriteAfterMemRead);
        assert_eq!((h[0].line, h[0].producer), (6, 2));
        // 0xc0: the store reads v2, the target writes v770 (slot 3 = 3):
        // no hazard, though the listing shows `v2` twice.
        assert!(run(&kernel("0xc0", "v2")).is_empty());
        // Without the MSBs (the same text under 0): the listing's finding.
        assert_eq!(run(&kernel("0x0", "v2")).len(), 1);
    }

    /// Opt-in survey: the SCHED_MODE_2 findings of every `.co` under
    /// `GCN_PATCH_MSB_SURVEY`, with gfx1250's VGPR MSBs by control flow and
    /// as llvm-objdump annotates them.
    #[test]
    #[ignore = "survey: GCN_PATCH_MSB_SURVEY=DIR cargo test -p gcn-patch --lib msb_verdict_survey -- --ignored --nocapture; figures in measurements.md"]
    fn msb_verdict_survey() {
        let key = |hs: &[(usize, AluHazard, Vec<usize>)]| -> std::collections::BTreeSet<String> {
            hs.iter()
                .map(|(_, h, _)| format!("{}:{}:{:?}", h.line, h.producer, h.access))
                .collect()
        };
        use crate::stage::check::msb::tests::{as_annotated, survey_lifts};
        for (f, lifts) in survey_lifts() {
            let Some((asm, listed_asm)) = lifts else {
                println!("{}: not lifted", f.display());
                continue;
            };
            let flow = key(&file_hazards(&asm));
            let listed = as_annotated(|| key(&file_hazards(&listed_asm)));
            println!(
                "{}: {} findings by control flow, {} as annotated, {} only by flow, {} only annotated",
                f.file_name().unwrap_or_default().to_string_lossy(),
                flow.len(),
                listed.len(),
                flow.difference(&listed).count(),
                listed.difference(&flow).count()
            );
        }
    }

    #[test]
    fn loop_carried_war() {
        // The store at the loop's end still reads v2 when the next iteration
        // overwrites it.
        let src = format!(
            "{MODE2}.LBB0_1:\n\tv_add_nc_u32_e32 v2, 1, v2\n\ts_wait_alu depctr_va_vdst(0)\n\tbuffer_store_b32 v2, v0, s[0:3], null offen\n\ts_cbranch_scc1 .LBB0_1\n\ts_endpgm\n"
        );
        let h = run(&src);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!((h[0].line, h[0].producer), (2, 4));
        assert_eq!(h[0].access, AluAccess::WriteAfterMemRead);
    }

    #[test]
    fn normal_mode_has_no_findings() {
        let src = "\tv_add_nc_u32_e64 v203, v202, s80\n\tglobal_load_async_to_lds_b128 v203, v[198:199], off\n\tds_store_b32 v1, v2\n\tv_mov_b32 v2, 0\n\ts_endpgm\n";
        assert!(run(src).is_empty());
        // Mode 2 set then reset: nothing after the reset.
        let reset =
            format!("{MODE2}\ts_setreg_imm32_b32 hwreg(HW_REG_WAVE_SCHED_MODE, 0, 2), 0\n{src}");
        assert!(run(&reset).is_empty());
    }

    #[test]
    fn physical_registers_of_objdump_annotations() {
        let i = decoded("\tds_load_b128 v[96:99] /*v[352:355]*/, v158 /*v414*/ offset:128")
            .expect("decoded");
        assert_eq!(i.operands[0].to_string(), "v[352:355]");
        assert_eq!(i.operands[1].to_string(), "v414");
        assert!(i.has_modifier("offset:128") || i.modifier_value("offset") == Some("128"));
        let i = decoded("\t.long\t0xcc1f4480, 0x9e90cd80 ; raw: v_pk_fma_f32 v[128:129] /*v[640:641]*/, v[128:129] /*v[640:641]*/, s[102:103], v[164:165] /*v[676:677]*/ neg_lo:[0,0,1]").expect("decoded");
        assert_eq!(i.mnemonic.as_str(), "v_pk_fma_f32");
        assert_eq!(i.operands[0].to_string(), "v[640:641]");
        assert!(decoded("\t.long\t0xd0310000 ; raw: (not decoded)").is_none());
    }
    /// Through `lint` (the path of `gcn-patch lint`, `check`, `build`): the
    /// rendered diagnostics (the book's catalogue takes its GP0432 example
    /// from these snapshots).
    fn lint_text(src: &str) -> (usize, String) {
        let doc = crate::base::document::Document::from_source(src, "k.s");
        let target = gcn_embed::TargetId::parse("gfx1250").expect("gfx1250");
        let ds = super::super::lint(&doc, &target, super::super::LintOptions::default());
        let ours: Vec<_> = ds
            .iter()
            .filter(|d| d.code == crate::base::diag::Code::AluDependencyHazard)
            .collect();
        (
            ours.len(),
            ours.iter()
                .map(|d| d.render())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    #[test]
    fn lint_renders_raw_via_va_vdst() {
        let src = format!(
            "{MODE2}\tv_add_nc_u32_e64 v203, v202, s80\n\tglobal_load_async_to_lds_b128 v203, v[198:199], off\n\ts_endpgm\n"
        );
        let (n, text) = lint_text(&src);
        assert_eq!(n, 1);
        insta::assert_snapshot!(text);
    }

    #[test]
    fn lint_renders_war_via_vm_vsrc() {
        let src = format!(
            "{MODE2}\tds_store_b128 v1, v[4:7]\n\tv_cvt_pk_bf16_f32 v4, v8, v9\n\ts_endpgm\n"
        );
        let (n, text) = lint_text(&src);
        assert_eq!(n, 1);
        insta::assert_snapshot!(text);
        // Normal mode: nothing.
        assert_eq!(lint_text(&src.replace(MODE2, "")).0, 0);
    }

    #[test]
    fn baseline_hazards_are_inherited_new_ones_are_errors() {
        use crate::base::diag::{Code, Severity};
        let base_src = format!(
            "{MODE2}\tds_store_b128 v1, v[4:7]\n\tv_cvt_pk_bf16_f32 v4, v8, v9\n\ts_endpgm\n"
        );
        // The patch adds a second window (an async load reading a fresh
        // VALU result) and keeps the first.
        let patched_src = base_src.replace(
            "\ts_endpgm",
            "\tv_add_nc_u32_e32 v20, 4, v20\n\tglobal_load_async_to_lds_b128 v20, v[30:31], off\n\ts_endpgm",
        );
        let target = gcn_embed::TargetId::parse("gfx1250").expect("gfx1250");
        let base = crate::base::document::Document::from_source(&base_src, "base.s");
        let doc = crate::base::document::Document::from_source(&patched_src, "k.s");
        let b = super::super::Baseline::aligned(&doc, &base, &target);
        let ds =
            super::super::lint_baseline(&doc, &b, &target, super::super::LintOptions::default());
        let errors: Vec<_> = ds
            .iter()
            .filter(|d| d.code == Code::AluDependencyHazard && d.severity == Severity::Error)
            .collect();
        assert_eq!(errors.len(), 1, "{ds:?}");
        assert!(errors[0].message.contains("global_load_async_to_lds_b128"));
        assert!(ds.iter().any(|d| d.code == Code::InheritedHazards
            && d.message.contains("1 SCHED_MODE_2 ALU dependency hazard")));
    }

    #[test]
    fn lint_names_both_waits_of_a_loop_and_the_fixed_loop_is_clean() {
        // The async load's address is computed by a VALU right before it
        // (RAW, va_vdst), and the next iteration overwrites the address the
        // load may not have read (WAR across the back edge, vm_vsrc).
        let src = format!(
            "{MODE2}.LBB0_1:\n\tv_add_nc_u64_e32 v[2:3], s[4:5], v[2:3]\n\tglobal_load_async_to_lds_b128 v1, v[2:3], off\n\ts_cbranch_scc1 .LBB0_1\n\ts_endpgm\n"
        );
        let (n, text) = lint_text(&src);
        assert_eq!(n, 2, "{text}");
        assert!(
            text.contains("insert `s_wait_alu depctr_va_vdst(0)` before k.s:4"),
            "{text}"
        );
        assert!(
            text.contains("insert `s_wait_alu depctr_vm_vsrc(0)` before k.s:3"),
            "{text}"
        );
        let fixed = src
            .replace(
                "\tv_add_nc_u64",
                "\ts_wait_alu depctr_vm_vsrc(0)\n\tv_add_nc_u64",
            )
            .replace(
                "\tglobal_load",
                "\ts_wait_alu depctr_va_vdst(0)\n\tglobal_load",
            );
        assert_eq!(lint_text(&fixed).0, 0);
        // No other check flags the fixed loop either (the async load writes
        // no VGPR: no wait-counter hazard on `v1`).
        let doc = crate::base::document::Document::from_source(&fixed, "k.s");
        let target = gcn_embed::TargetId::parse("gfx1250").expect("gfx1250");
        let all = super::super::lint(&doc, &target, super::super::LintOptions::default());
        assert!(
            all.iter()
                .all(|d| d.severity != crate::base::diag::Severity::Error),
            "{all:?}"
        );
        assert_eq!(lint_text(&src.replace(MODE2, "")).0, 0);
    }

    /// Every hazard of a lifted gfx1250 file, per kernel.
    fn file_hazards(text: &str) -> Vec<(usize, AluHazard, Vec<usize>)> {
        let asm = crate::base::parse::parse(text);
        let target = gcn_embed::TargetId::parse("gfx1250").expect("gfx1250");
        super::super::kernels(&asm, &target)
            .iter()
            .filter_map(|k| prepare(&asm, &k.cfg, &k.model))
            .flat_map(|ak| {
                let modes = ak.mode_lines.clone();
                ak.hazards()
                    .into_iter()
                    .map(move |h| (h.line, h, modes.clone()))
            })
            .collect()
    }

    /// aiter's shipped gfx1250 MLA decode kernel (before aiter #5402),
    /// copied into `tests/corpus/aiter/gfx1250/mla/` by
    /// `tests/corpus/aiter.sh`, lifted (llvm-objdump-22): the check finds
    /// the PR's sites A (async load reading a VALU-written address), B
    /// (`v_cvt_pk_bf16_f32` overwriting data a `ds_store` has not read), C
    /// (a VALU overwriting an async load's address) and D (a VALU
    /// overwriting a `buffer_store`'s VGPR); inserting the suggested
    /// `s_wait_alu` makes it clean.
    #[test]
    fn aiter_mla_pre_fix_kernel_has_the_pr_sites_and_the_fix_is_clean() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/corpus/aiter/gfx1250/mla/mla_a8w8_qh8_1tg_8mx2_32nx4_np_3p.co");
        let tc = crate::stage::check::msb::tests::toolchain();
        let lifted = crate::stage::lift::lift_file(&path, None, &tc, None).expect("lift");
        let hs = file_hazards(&lifted.asm);
        let asm = crate::base::parse::parse(&lifted.asm);
        let mn = |l: usize| {
            decoded(asm.lines[l].text())
                .map(|i| i.mnemonic.to_string())
                .unwrap_or_default()
        };
        let site = |h: &AluHazard| {
            let (c, p) = (mn(h.line), mn(h.producer));
            match h.access {
                AluAccess::ReadAfterValuWrite if c.contains("async_to_lds") => Some('A'),
                AluAccess::WriteAfterMemRead
                    if c.starts_with("v_cvt_pk_bf16") && p.starts_with("ds_store") =>
                {
                    Some('B')
                }
                AluAccess::WriteAfterMemRead if p.contains("async_to_lds") => Some('C'),
                AluAccess::WriteAfterMemRead if p.starts_with("buffer_store") => Some('D'),
                _ => None,
            }
        };
        let mut sites = BTreeMap::new();
        for (_, h, _) in &hs {
            if let Some(s) = site(h) {
                *sites.entry(s).or_insert(0usize) += 1;
            }
        }
        assert_eq!(
            sites.keys().copied().collect::<String>(),
            "ABCD",
            "{sites:?}"
        );
        // The fix: every suggested wait inserted; clean.
        let mut lines: Vec<String> = lifted.asm.lines().map(str::to_string).collect();
        let mut at: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (_, h, _) in &hs {
            at.entry(h.line).or_default().push(format!(
                "\ts_wait_alu depctr_{}({})",
                h.access.counter().field(),
                h.needed
            ));
        }
        for (l, ws) in at.into_iter().rev() {
            for w in ws {
                lines.insert(l, w);
            }
        }
        assert!(file_hazards(&(lines.join("\n") + "\n")).is_empty());
        // The same kernel with SCHED_MODE_NORMAL (the 1-byte patch of the
        // PR's verification: the setreg writes 0): no finding.
        let normal = lifted.asm.replace(
            "hwreg(HW_REG_WAVE_SCHED_MODE, 0, 2), 2",
            "hwreg(HW_REG_WAVE_SCHED_MODE, 0, 2), 0",
        );
        assert_ne!(normal, lifted.asm);
        assert!(file_hazards(&normal).is_empty());
    }

    /// The opt-in survey of the book (`docs/src/design/hazards.md`,
    /// "SCHED_MODE_2"): for every lifted `.s` in `$GCN_PATCH_ALU_SURVEY`
    /// (`gcn-patch lift` of aiter's `hsa/gfx1250/mla/*.co`), the hazards by
    /// kind; the mutants (each `s_wait_alu` that waits for va_vdst or
    /// vm_vsrc blanked out, one at a time) and how many the check catches
    /// (a hazard of that counter the unmutated file does not have); and the
    /// fix loop (insert every suggested `s_wait_alu`, re-check: clean).
    #[test]
    #[ignore = "opt-in survey: GCN_PATCH_ALU_SURVEY=DIR of lifted gfx1250 .s files; minutes"]
    fn survey() {
        let Some(dir) = std::env::var_os("GCN_PATCH_ALU_SURVEY") else {
            panic!("set GCN_PATCH_ALU_SURVEY to a directory of lifted gfx1250 .s files (gcn-patch lift X.co -o X.s)");
        };
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("survey dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "s"))
            .collect();
        files.sort();
        let only_mutants = std::env::var("GCN_PATCH_ALU_MUTANTS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok());
        for f in files {
            let text = std::fs::read_to_string(&f).expect("read");
            let base = file_hazards(&text);
            let mut by = BTreeMap::new();
            for (_, h, _) in &base {
                *by.entry(format!("{:?}", h.access)).or_insert(0usize) += 1;
            }
            let lines: Vec<&str> = text.lines().collect();
            // Mutants: each wait replaced by nothing in the prepared kernels
            // (the CFG and the decoded instructions are kept).
            let asm = crate::base::parse::parse(&text);
            let target = gcn_embed::TargetId::parse("gfx1250").expect("gfx1250");
            let prepared: Vec<AluKernel> = super::super::kernels(&asm, &target)
                .iter()
                .filter_map(|k| prepare(&asm, &k.cfg, &k.model))
                .collect();
            let known: std::collections::HashSet<(usize, AluCounter)> = base
                .iter()
                .map(|(_, h, _)| (h.line, h.access.counter()))
                .collect();
            let mut waits = vec![];
            for (ki, k) in prepared.iter().enumerate() {
                for (ni, node) in k.nodes.iter().enumerate() {
                    for (oi, (_, op)) in node.iter().enumerate() {
                        if let Op::WaitAlu(va, vm) = op {
                            if *va < AluCounter::VaVdst.max() || *vm < AluCounter::VmVsrc.max() {
                                waits.push((ki, ni, oi, *va, *vm));
                            }
                        }
                    }
                }
            }
            let (mut caught, mut tried, mut redundant) = (0usize, 0usize, 0usize);
            // A wait is redundant when, earlier in its block, a wait for the
            // same field ≤ its value stands with no producer of that counter
            // between (deleting it opens no window).
            let is_redundant = |ki: usize, ni: usize, oi: usize, va: u32, vm: u32| {
                let node = &prepared[ki].nodes[ni];
                let covered = |field: AluCounter, v: u32| {
                    for (_, op) in node[..oi].iter().rev() {
                        match (op, field) {
                            (Op::WaitAlu(a, _), AluCounter::VaVdst) if *a <= v => return true,
                            (Op::WaitAlu(_, b), AluCounter::VmVsrc) if *b <= v => return true,
                            (Op::Valu { .. }, AluCounter::VaVdst) => return false,
                            (Op::Mem { .. }, AluCounter::VmVsrc) => return false,
                            _ => {}
                        }
                    }
                    false
                };
                (va >= AluCounter::VaVdst.max() || covered(AluCounter::VaVdst, va))
                    && (vm >= AluCounter::VmVsrc.max() || covered(AluCounter::VmVsrc, vm))
            };
            let step_by = only_mutants.map_or(1, |n| (waits.len() / n.max(1)).max(1));
            for &(ki, ni, oi, va, vm) in waits.iter().step_by(step_by) {
                let k = &prepared[ki];
                let mut nodes = k.nodes.clone();
                let w = nodes[ni][oi].0;
                nodes[ni][oi].1 = Op::Other;
                let mutant = AluKernel {
                    nodes,
                    succs: k.succs.clone(),
                    mode_lines: k.mode_lines.clone(),
                };
                tried += 1;
                let found = mutant.hazards().into_iter().any(|h| {
                    let c = h.access.counter();
                    let waited = match c {
                        AluCounter::VaVdst => va < AluCounter::VaVdst.max(),
                        AluCounter::VmVsrc => vm < AluCounter::VmVsrc.max(),
                    };
                    waited && !known.contains(&(h.line, c)) && h.line != w
                });
                if found {
                    caught += 1;
                } else if is_redundant(ki, ni, oi, va, vm) {
                    redundant += 1;
                } else if std::env::var_os("GCN_PATCH_ALU_MISSED").is_some() {
                    println!(
                        "  not caught: line {}: {} | next: {}",
                        w + 1,
                        lines[w].trim(),
                        lines[w + 1..]
                            .iter()
                            .take(3)
                            .map(|l| l.trim())
                            .collect::<Vec<_>>()
                            .join(" | ")
                    );
                }
            }
            // The fix loop.
            let mut fixed: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            let mut rounds = 0;
            let mut inserted = 0;
            loop {
                let hs = file_hazards(&(fixed.join("\n") + "\n"));
                if hs.is_empty() || rounds == 10 {
                    break;
                }
                rounds += 1;
                let mut at: BTreeMap<usize, Vec<String>> = BTreeMap::new();
                for (_, h, _) in hs {
                    at.entry(h.line).or_default().push(format!(
                        "\ts_wait_alu depctr_{}({})",
                        h.access.counter().field(),
                        h.needed
                    ));
                }
                for (l, ws) in at.into_iter().rev() {
                    for w in ws {
                        fixed.insert(l, w);
                        inserted += 1;
                    }
                }
            }
            let left = file_hazards(&(fixed.join("\n") + "\n")).len();
            println!(
                "{}: {} hazards {by:?}; mutants: {caught}/{tried} caught, {redundant} redundant (an earlier wait in the block covers it) ({} s_wait_alu with va_vdst/vm_vsrc); fix loop: {inserted} s_wait_alu inserted in {rounds} round(s), {left} hazards left",
                f.file_name().unwrap_or_default().to_string_lossy(),
                base.len(),
                waits.len()
            );
            assert_eq!(left, 0);
        }
    }
}
