//! The per-generation counter model: which instruction increments which wait
//! counter, which registers it will write (or still read) when it completes,
//! and which counters complete in order.
//!
//! This follows LLVM's `SIInsertWaitcnts.cpp` (`updateEventWaitcntAfter`,
//! `getVmemWaitEventType`, `counterOutOfOrder`, `WaitEventMaskForInst`) and the
//! memory-model tables of `AMDGPUUsage.rst`:
//!
//! | event | GFX6–GFX9 | GFX10, GFX11 | GFX12 |
//! |---|---|---|---|
//! | VMEM load, atomic with return (buffer/global/flat/scratch/image) | `vmcnt` | `vmcnt` | `loadcnt` (`samplecnt` image sample, `bvhcnt` BVH) |
//! | VMEM store, atomic without return | `vmcnt` | `vscnt` | `storecnt` |
//! | LDS `ds_*` (also flat, which may reach LDS) | `lgkmcnt` | `lgkmcnt` | `dscnt` |
//! | SMEM `s_load_*`, `s_buffer_load_*`, `s_memtime`, …; `s_sendmsg` | `lgkmcnt` | `lgkmcnt` | `kmcnt` |
//! | exports, GFX11 `lds_param_load` | `expcnt` | `expcnt` | `expcnt` |
//!
//! Before GFX10 every VMEM access is one event type (`VMEM_ACCESS`), so loads
//! and stores complete in order with each other. SMEM completes out of order
//! (only a wait for 0 covers it), and a counter with two kinds of events
//! pending (LDS and SMEM on `lgkmcnt`, or a flat access counting in both
//! `vmcnt` and `lgkmcnt`) is out of order too (`hasMixedPendingEvents`,
//! `hasPendingFlat`). VMEM loads of the same type write their VGPRs in order,
//! so one may overwrite the destination of a pending one
//! (`hasVmemWriteVgprInOrder`); every other overwrite of a pending destination
//! needs a wait. Buffer cache invalidations (`buffer_wbinvl1`, `buffer_inv`,
//! `buffer_gl*_inv`, `global_inv`, `global_wb`) are not counted
//! (`getMUBUFIsBufferInv`). `buffer_load … lds` / `global_load_lds_*` write
//! LDS, not VGPRs: a later LDS read waits for them on the VMEM counter.
//! Stores keep their data VGPRs only on GFX6 (`vmemWriteNeedsExpWaitcnt`:
//! `expcnt`), and exports keep theirs until `expcnt` says they left.

use gcn_embed::Generation;

use crate::base::isa::{waitcnt_limits, Counter, WaitcntLimits};
use crate::base::parse::{Instruction, Operand, RegFile, RegisterRef};

/// Every counter, in a fixed order (index = [`counter_index`]).
pub const COUNTERS: [Counter; 10] = [
    Counter::Vmcnt,
    Counter::Expcnt,
    Counter::Lgkmcnt,
    Counter::Vscnt,
    Counter::Loadcnt,
    Counter::Storecnt,
    Counter::Samplecnt,
    Counter::Bvhcnt,
    Counter::Dscnt,
    Counter::Kmcnt,
];

/// Index of `c` in [`COUNTERS`].
pub fn counter_index(c: Counter) -> usize {
    COUNTERS.iter().position(|&k| k == c).unwrap_or(0)
}

/// Kinds of pending events (LLVM's `WaitEventType`, coarsened to what decides
/// ordering). Two kinds pending on one counter make it out of order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// VMEM access (loads; before GFX10 also stores).
    Vmem,
    /// VMEM image sample (GFX12 `samplecnt`).
    Sample,
    /// VMEM BVH (GFX12 `bvhcnt`).
    Bvh,
    /// VMEM store / atomic without return (GFX10+).
    VmemWrite,
    /// LDS.
    Lds,
    /// GDS (`… gds`, `ds_gws_*`, `ds_ordered_count`): LLVM's `GDS_ACCESS`,
    /// another event type on the LDS counter than LDS.
    Gds,
    /// LDS DMA (`buffer_load … lds`, `global_load_lds_*`): from GFX10 an
    /// event type of its own on the VMEM counter (LLVM's `VMEM_ACCESS` vs
    /// ordinary loads' `VMEM_READ_ACCESS`), so with ordinary loads pending the
    /// counter is out of order.
    LdsDma,
    /// Scalar memory: always out of order.
    Smem,
    /// `s_sendmsg`.
    Message,
    /// Exports to MRT/null (`EXP_GPR_LOCK`), GFX6 store data locks.
    Export,
    /// Position exports (`EXP_POS_ACCESS`).
    ExportPos,
    /// Parameter exports (`EXP_PARAM_ACCESS`).
    ExportParam,
    /// GDS data and address VGPRs held until `expcnt` (`GDS_GPR_LOCK`).
    GdsLock,
    /// GFX11+ LDS parameter loads (`EXP_LDS_ACCESS`).
    ExportLds,
    /// A flat access (counts in both the VMEM and the LDS counter).
    Flat,
}

/// Number of [`Kind`]s.
pub const KINDS: usize = 15;

impl Kind {
    /// Index for per-kind arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// VMEM type for the in-order write rule (LLVM `VmemType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VmemType {
    /// Buffer, global, flat, scratch, image load without sampler.
    NoSampler,
    /// Image sample / gather.
    Sampler,
    /// BVH intersect.
    Bvh,
}

/// A register unit: one 32-bit register of one file, or the LDS pseudo unit
/// written by LDS DMA.
pub type Unit = u32;

/// The pseudo unit standing for LDS written by `buffer_load … lds`.
pub const LDS_DMA: Unit = 8000;

/// The pseudo unit standing for an LDS store not yet complete (other waves
/// may read it after a barrier).
pub const LDS_STORE: Unit = 8001;

/// The units of a register reference (special registers have none).
pub fn units(r: &RegisterRef) -> std::ops::Range<Unit> {
    let (base, size) = match r.file {
        RegFile::Vgpr => (0, 1024),
        RegFile::Agpr => (1024, 1024),
        RegFile::Sgpr => (2048, 2048),
        RegFile::Ttmp => (4096, 64),
        _ => return 0..0,
    };
    // Out-of-range or reversed references (the assembler rejects them) name no unit.
    if r.first > r.last || r.last >= size {
        return 0..0;
    }
    base + r.first..base + r.last + 1
}

/// The half a VMEM d16 load writes (`Some(true)`: high), keeping the other
/// half of its destination VGPR. Newer LLVM's SIInsertWaitcnts tracks VGPRs
/// in 16-bit units, so VMEM loads into the two halves of one VGPR need no wait
/// between them (Triton's gfx1100 and gfx1201 matmuls issue
/// `global_load_d16_hi_b16 v1` and `global_load_d16_b16 v1` back to back),
/// and a second load into the same half is an overwrite (in-order rule).
/// `*_format_d16_*` loads write whole (packed) registers and are not half
/// writes. (LDS d16 loads are still read-modify-write, see `lds`.)
fn d16_half(mnemonic: &str, writes_reg: bool) -> Option<bool> {
    if !writes_reg || !mnemonic.contains("_d16") || mnemonic.contains("format_d16") {
        return None;
    }
    Some(mnemonic.contains("_d16_hi"))
}

/// Print one unit as a register name.
pub fn unit_name(u: Unit) -> String {
    match u {
        LDS_DMA => "LDS (written by LDS DMA)".into(),
        LDS_STORE => "LDS (written by this wave's LDS store)".into(),
        0..=1023 => format!("v{u}"),
        1024..=2047 => format!("a{}", u - 1024),
        2048..=4095 => format!("s{}", u - 2048),
        _ => format!("ttmp{}", u - 4096),
    }
}

/// One counter increment made by an instruction, and what completes with it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Event {
    /// The counter.
    pub counter: Counter,
    /// The kind of event (for ordering).
    pub kind: Kind,
    /// Registers the operation writes when it completes.
    pub writes: Vec<RegisterRef>,
    /// Registers the operation still reads after issue (export data, GFX6 store data).
    pub reads_late: Vec<RegisterRef>,
    /// Writes LDS through DMA (a later LDS read must wait).
    pub lds_dma: bool,
    /// An LDS store (a barrier must wait for it).
    pub lds_store: bool,
}

/// Control flow of one instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Flow {
    /// Falls through.
    Next,
    /// `s_branch L`.
    Jump(String),
    /// `s_cbranch_* L`: taken or not.
    Branch(String),
    /// `s_endpgm` and friends.
    End,
    /// `s_swappc_b64`, `s_call_b64`: a call.
    Call,
    /// `s_setpc_b64`, `s_cbranch_join`, …: target unknown.
    Indirect,
}

/// What the analysis needs to know about one instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Effect {
    /// Registers read at issue (a pending write to any of them is a hazard).
    pub reads: Vec<RegisterRef>,
    /// Registers written at issue or at completion (a pending write or late
    /// read of any of them is a hazard, except in-order VMEM writes).
    pub defs: Vec<RegisterRef>,
    /// Counter increments.
    pub events: Vec<Event>,
    /// VMEM type when this is a VMEM load (for the in-order write rule).
    pub vmem_load: Option<(Counter, VmemType)>,
    /// A d16 load that writes one 16-bit half of its destination and keeps
    /// the other: `Some(true)` for the high half (`*_d16_hi*`), `Some(false)`
    /// for the low half.
    pub d16_half: Option<bool>,
    /// Reads LDS (must wait for pending LDS DMA).
    pub reads_lds: bool,
    /// Writes LDS (`ds_write*`, `ds_store*`; must wait for pending LDS DMA
    /// too, as LLVM does).
    pub writes_lds: bool,
    /// A flat access (may reach LDS): not a VMEM-only instruction, so it
    /// never overwrites a pending VMEM destination without a wait (LLVM's
    /// `updateVMCntOnly`).
    pub flat: bool,
    /// Reads or writes registers by an index the analysis cannot follow
    /// (`v_movrel*`, `s_movrel*`, `s_set_gpr_idx_on`): reported.
    pub indexed: bool,
    /// Control flow.
    pub flow: Flow,
    /// A barrier (`s_barrier`, GFX12 `s_barrier_signal`).
    pub barrier: bool,
    /// A memory-model instruction: a barrier (incl. GFX12 `s_barrier_wait`)
    /// or a cache invalidate / write-back (`buffer_gl0_inv`, `global_inv`, …).
    /// A wait right before one is half of a fence, not a register wait.
    pub fence: bool,
    /// The instruction is not known to the model (reported as a warning).
    pub unknown: bool,
}

/// The counter model of one generation.
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// The generation.
    pub generation: Generation,
    /// Counter limits (and which counters exist).
    pub limits: WaitcntLimits,
    /// GFX940/941/942/950: atomics return with `sc0`, not `glc`.
    pub sc0_returns: bool,
}

const VMEM_PREFIXES: [&str; 6] = [
    "buffer_", "tbuffer_", "global_", "flat_", "scratch_", "image_",
];

const SMEM_PREFIXES: [&str; 12] = [
    "s_load_",
    "s_buffer_load_",
    "s_scratch_load_",
    "s_store_",
    "s_buffer_store_",
    "s_scratch_store_",
    "s_atomic_",
    "s_buffer_atomic_",
    "s_dcache_",
    "s_atc_probe",
    "s_prefetch_",
    "s_get_waveid_in_workgroup",
];

/// Mnemonics of the `s_` family that read their first register operand
/// instead of writing it.
const NO_DEF_SCALAR: [&str; 9] = [
    "s_cmp",
    "s_bitcmp",
    "s_cbranch",
    "s_branch",
    "s_setpc",
    "s_wait",
    "s_set_gpr_idx",
    "s_setreg",
    "s_sendmsg",
];

/// VALU mnemonics (substrings) that read their destination register too.
const READS_DEST: [&str; 5] = ["_fmac", "_mac_", "v_writelane", "_dot2c", "_d16"];

impl Model {
    /// The model for a processor of `generation` (`processor` decides
    /// GFX94x/GFX950 atomic-return syntax).
    pub fn new(generation: Generation, processor: &str) -> Model {
        let sc0_returns =
            ["gfx940", "gfx941", "gfx942", "gfx950", "gfx9-4-generic"].contains(&processor);
        Model {
            generation,
            limits: waitcnt_limits(generation),
            sc0_returns,
        }
    }

    /// True when the counter exists on this generation.
    pub fn has(&self, c: Counter) -> bool {
        self.limits.max(c).is_some()
    }

    /// The largest value of `c` (0 if absent).
    pub fn max(&self, c: Counter) -> u32 {
        self.limits.max(c).unwrap_or(0)
    }

    /// VMEM loads of one type write their VGPRs in issue order, so a later
    /// load may overwrite a register an earlier one of the same type has yet
    /// to write without a wait (LLVM's `hasVmemWriteVgprInOrder`, a feature of
    /// every generation before gfx12: Triton's gfx1201 matmul waits
    /// `s_wait_loadcnt` before a `global_load_d16_hi_b16` into a register an
    /// earlier d16 load still writes, its gfx1100 twin does not).
    pub fn vmem_write_in_order(&self) -> bool {
        !self.gfx12()
    }

    fn gfx12(&self) -> bool {
        self.generation >= Generation::Gfx12
    }

    fn vscnt(&self) -> bool {
        self.generation >= Generation::Gfx10_1
    }

    /// Counter of VMEM loads (`vmcnt` / `loadcnt`).
    pub fn load_counter(&self) -> Counter {
        if self.gfx12() {
            Counter::Loadcnt
        } else {
            Counter::Vmcnt
        }
    }

    fn lds_counter(&self) -> Counter {
        if self.gfx12() {
            Counter::Dscnt
        } else {
            Counter::Lgkmcnt
        }
    }

    fn smem_counter(&self) -> Counter {
        if self.gfx12() {
            Counter::Kmcnt
        } else {
            Counter::Lgkmcnt
        }
    }

    fn store_counter(&self) -> Counter {
        if self.gfx12() {
            Counter::Storecnt
        } else if self.vscnt() {
            Counter::Vscnt
        } else {
            Counter::Vmcnt
        }
    }

    /// What `inst` does, for the analysis.
    pub fn effect(&self, inst: &Instruction) -> Effect {
        let m = inst.mnemonic.as_str();
        let regs: Vec<RegisterRef> = inst.registers().copied().collect();
        let first_reg = inst.operands.first().and_then(Operand::register).copied();
        let mut e = Effect {
            reads: vec![],
            defs: vec![],
            events: vec![],
            vmem_load: None,
            d16_half: None,
            reads_lds: false,
            writes_lds: false,
            flat: false,
            indexed: false,
            flow: Flow::Next,
            barrier: false,
            fence: false,
            unknown: false,
        };
        // Control flow and barriers.
        if let Some(flow) = flow_of(inst) {
            e.flow = flow;
        }
        if m == "s_barrier" || m == "s_barrier_signal" || m == "s_barrier_signal_isfirst" {
            e.barrier = true;
        }
        e.fence = e.barrier || m == "s_barrier_wait";
        if VMEM_PREFIXES.iter().any(|p| m.starts_with(p)) {
            self.vmem(inst, &regs, first_reg, &mut e);
        } else if m.starts_with("lds_param_load")
            || m.starts_with("lds_direct_load")
            || m.starts_with("ds_param_load")
            || m.starts_with("ds_direct_load")
        {
            // GFX11+ LDS parameter loads count in expcnt (EXP_LDS_ACCESS).
            let (def, rest) = split_first(&regs, first_reg);
            e.reads = rest;
            e.defs = def.clone();
            e.events.push(Event {
                counter: Counter::Expcnt,
                kind: Kind::ExportLds,
                writes: def,
                reads_late: vec![],
                lds_dma: false,
                lds_store: false,
            });
        } else if m.starts_with("ds_") {
            self.lds(inst, &regs, first_reg, &mut e);
        } else if SMEM_PREFIXES.iter().any(|p| m.starts_with(p))
            || m == "s_memtime"
            || m == "s_memrealtime"
        {
            self.smem(inst, &regs, first_reg, &mut e);
        } else if m == "s_sendmsg" || m == "s_sendmsghalt" || m.starts_with("s_sendmsg_rtn") {
            let (def, rest) = if m.starts_with("s_sendmsg_rtn") {
                split_first(&regs, first_reg)
            } else {
                (vec![], regs.clone())
            };
            e.reads = rest;
            e.defs = def.clone();
            e.events.push(Event {
                counter: self.smem_counter(),
                kind: Kind::Message,
                writes: def,
                reads_late: vec![],
                lds_dma: false,
                lds_store: false,
            });
        } else if m.starts_with("exp") && !m.starts_with("exp_") || m == "export" {
            // `exp mrt0 v0, v1, v2, v3`: the data VGPRs are read until expcnt.
            // The target and the first register share one operand token.
            let mut regs = regs.clone();
            for o in &inst.operands {
                if let Operand::Expr(t) | Operand::Flag(t) | Operand::Symbol(t) = o {
                    regs.extend(t.split_whitespace().filter_map(RegisterRef::parse));
                }
            }
            e.reads = regs.clone();
            e.events.push(Event {
                counter: Counter::Expcnt,
                kind: export_kind(inst),
                writes: vec![],
                reads_late: regs,
                lds_dma: false,
                lds_store: false,
            });
        } else if m.starts_with("v_") || m.starts_with("s_") {
            e.indexed =
                m.starts_with("v_movrel") || m.starts_with("s_movrel") || m == "s_set_gpr_idx_on";
            let no_def = NO_DEF_SCALAR.iter().any(|p| m.starts_with(p))
                || (m.starts_with("v_cmpx") && self.vscnt())
                || !matches!(e.flow, Flow::Next | Flow::Call);
            if no_def {
                e.reads = regs;
            } else {
                let (def, rest) = split_first(&regs, first_reg);
                e.reads = rest;
                // Accumulating / lane-writing ops also read their destination
                // (LLVM: a tied use).
                if READS_DEST.iter().any(|p| m.contains(p)) {
                    e.reads.extend(def.iter().copied());
                }
                e.defs = def;
            }
        } else {
            e.reads = regs;
            e.unknown = true;
        }
        // Effects live as long as the analysis (one per instruction): no
        // growth slack in their small vectors.
        e.reads.shrink_to_fit();
        e.defs.shrink_to_fit();
        e.events.shrink_to_fit();
        for ev in &mut e.events {
            ev.writes.shrink_to_fit();
            ev.reads_late.shrink_to_fit();
        }
        e
    }

    fn vmem(
        &self,
        inst: &Instruction,
        regs: &[RegisterRef],
        first: Option<RegisterRef>,
        e: &mut Effect,
    ) {
        let m = inst.mnemonic.as_str();
        let cache_op = m.starts_with("buffer_wbinvl1")
            || m.starts_with("buffer_inv")
            || m.starts_with("buffer_wbl2")
            || (m.starts_with("buffer_gl") && m.ends_with("_inv"))
            || m == "global_inv"
            || m == "global_wb"
            || m == "global_wbinv";
        if cache_op {
            e.reads = regs.to_vec();
            e.fence = true;
            return;
        }
        let flat = m.starts_with("flat_");
        let lds_dma =
            inst.has_modifier("lds") || m.contains("_load_lds") || m.starts_with("global_load_lds");
        let atomic = m.contains("_atomic");
        let returns = atomic
            && (m.contains("_rtn")
                || inst
                    .modifiers
                    .iter()
                    .any(|x| x == "glc" && !self.sc0_returns || x == "sc0" && self.sc0_returns)
                || inst
                    .modifiers
                    .iter()
                    .any(|x| x.contains("TH_ATOMIC_RETURN")));
        let load = !atomic
            && !lds_dma
            && (m.contains("_load")
                || m.starts_with("image_sample")
                || m.starts_with("image_gather")
                || m.starts_with("image_get_")
                || m.starts_with("image_msaa_load")
                || m.starts_with("image_bvh"));
        // gfx1250's `global_load_async_to_lds_*` (`ASYNCcnt`, not modelled)
        // writes LDS, not its first operand (an LDS address VGPR).
        let writes_reg = (load || returns) && !lds_dma && !m.contains("_async_to_lds");
        let (def, rest) = if writes_reg {
            split_first(regs, first)
        } else {
            (vec![], regs.to_vec())
        };
        e.reads = rest;
        e.defs = def.clone();
        e.d16_half = d16_half(m, writes_reg);
        let vtype = if m.starts_with("image_sample") || m.starts_with("image_gather") {
            VmemType::Sampler
        } else if m.starts_with("image_bvh") {
            VmemType::Bvh
        } else {
            VmemType::NoSampler
        };
        e.flat = flat;
        let (counter, kind) = if lds_dma && self.vscnt() {
            (self.load_counter(), Kind::LdsDma)
        } else if !self.vscnt() || lds_dma {
            (self.load_counter(), Kind::Vmem)
        } else if !writes_reg {
            (self.store_counter(), Kind::VmemWrite)
        } else if self.gfx12() && !flat && vtype == VmemType::Sampler {
            (Counter::Samplecnt, Kind::Sample)
        } else if self.gfx12() && !flat && vtype == VmemType::Bvh {
            (Counter::Bvhcnt, Kind::Bvh)
        } else {
            (self.load_counter(), Kind::Vmem)
        };
        if writes_reg {
            e.vmem_load = Some((counter, vtype));
        }
        let late = if self.generation <= Generation::Gfx6 && !writes_reg {
            regs.iter()
                .copied()
                .filter(|r| r.file == RegFile::Vgpr)
                .collect()
        } else {
            vec![]
        };
        e.events.push(Event {
            counter,
            kind,
            writes: def.clone(),
            reads_late: vec![],
            lds_dma,
            lds_store: false,
        });
        if !late.is_empty() {
            e.events.push(Event {
                counter: Counter::Expcnt,
                kind: Kind::Export,
                writes: vec![],
                reads_late: late,
                lds_dma: false,
                lds_store: false,
            });
        }
        if flat {
            // A flat access may reach LDS: it counts in the LDS counter too,
            // and both counters become out of order while it is pending.
            e.events[0].kind = Kind::Flat;
            e.events.push(Event {
                counter: self.lds_counter(),
                kind: Kind::Flat,
                writes: def,
                reads_late: vec![],
                lds_dma: false,
                lds_store: false,
            });
        }
    }

    fn lds(
        &self,
        inst: &Instruction,
        regs: &[RegisterRef],
        first: Option<RegisterRef>,
        e: &mut Effect,
    ) {
        let m = inst.mnemonic.as_str();
        let writes_reg = m.starts_with("ds_read")
            || m.starts_with("ds_load")
            || m.contains("_rtn")
            || m.starts_with("ds_swizzle")
            || m.starts_with("ds_permute")
            || m.starts_with("ds_bpermute")
            || m.starts_with("ds_consume")
            || m.starts_with("ds_append")
            || m.starts_with("ds_bvh_stack");
        let reads_lds = !(m.starts_with("ds_write")
            || m.starts_with("ds_store")
            || m.starts_with("ds_swizzle")
            || m.starts_with("ds_permute")
            || m.starts_with("ds_bpermute")
            || m == "ds_nop");
        let (def, rest) = if writes_reg {
            split_first(regs, first)
        } else {
            (vec![], regs.to_vec())
        };
        e.reads = rest;
        // LDS d16 loads keep the other half of the destination: LLVM treats
        // that as a read (a tied use) and waits for a pending load into the
        // other half (IREE's gfx1100 matmul: `lgkmcnt(7)` between
        // `ds_load_u16_d16 v203` and `ds_load_u16_d16_hi v203`).
        if m.contains("_d16") && writes_reg {
            e.reads.extend(def.iter().copied());
        }
        let gds = inst.has_modifier("gds")
            || m.starts_with("ds_gws")
            || m.starts_with("ds_ordered_count");
        e.reads_lds = reads_lds && !gds;
        e.writes_lds = !gds && (m.starts_with("ds_write") || m.starts_with("ds_store"));
        e.events.push(Event {
            counter: self.lds_counter(),
            kind: if gds { Kind::Gds } else { Kind::Lds },
            writes: def.clone(),
            reads_late: vec![],
            lds_dma: false,
            lds_store: !gds && !writes_reg && !m.starts_with("ds_nop"),
        });
        // GDS keeps its data and address VGPRs until expcnt says they were
        // read (LLVM's `GDS_GPR_LOCK`; GDS exists up to GFX11).
        if gds && self.generation < Generation::Gfx12 {
            let held: Vec<RegisterRef> = e
                .reads
                .iter()
                .copied()
                .filter(|r| r.file == RegFile::Vgpr && !def.contains(r))
                .collect();
            if !held.is_empty() {
                e.events.push(Event {
                    counter: Counter::Expcnt,
                    kind: Kind::GdsLock,
                    writes: vec![],
                    reads_late: held,
                    lds_dma: false,
                    lds_store: false,
                });
            }
        }
        e.defs = def;
    }

    fn smem(
        &self,
        inst: &Instruction,
        regs: &[RegisterRef],
        first: Option<RegisterRef>,
        e: &mut Effect,
    ) {
        let m = inst.mnemonic.as_str();
        let writes_reg = m.starts_with("s_load_")
            || m.starts_with("s_buffer_load_")
            || m.starts_with("s_scratch_load_")
            || m == "s_memtime"
            || m == "s_memrealtime"
            || m.starts_with("s_get_waveid")
            || m.contains("_atomic") && inst.has_modifier("glc");
        let (def, rest) = if writes_reg {
            split_first(regs, first)
        } else {
            (vec![], regs.to_vec())
        };
        e.reads = rest;
        e.defs = def.clone();
        e.events.push(Event {
            counter: self.smem_counter(),
            kind: Kind::Smem,
            writes: def,
            reads_late: vec![],
            lds_dma: false,
            lds_store: false,
        });
    }
}

/// The export event type of `exp TARGET …` (LLVM: `EXP_POS_ACCESS` for
/// `pos*`, `EXP_PARAM_ACCESS` for `param*`, `EXP_GPR_LOCK` otherwise).
fn export_kind(inst: &Instruction) -> Kind {
    let target = inst
        .operands
        .first()
        .map(|o| o.to_string())
        .unwrap_or_default();
    let target = target.trim_start();
    if target.starts_with("pos") {
        Kind::ExportPos
    } else if target.starts_with("param") {
        Kind::ExportParam
    } else {
        Kind::Export
    }
}

/// The first operand (if it is a register) as the definition, the other
/// registers as reads.
fn split_first(
    regs: &[RegisterRef],
    first: Option<RegisterRef>,
) -> (Vec<RegisterRef>, Vec<RegisterRef>) {
    match first {
        Some(f) if regs.first() == Some(&f) => (vec![f], regs[1..].to_vec()),
        _ => (vec![], regs.to_vec()),
    }
}

/// Control flow of a scalar branch / end instruction.
pub(crate) fn flow_of(inst: &Instruction) -> Option<Flow> {
    let m = inst.mnemonic.as_str();
    let target = || {
        inst.operands.iter().find_map(|o| match o {
            Operand::Symbol(s) | Operand::Expr(s) => Some(s.to_string()),
            _ => None,
        })
    };
    Some(match m {
        "s_endpgm" | "s_endpgm_saved" | "s_endpgm_ordered_ps_done" | "s_rfe_b64" => Flow::End,
        "s_branch" => match target() {
            Some(t) => Flow::Jump(t),
            None => Flow::Indirect,
        },
        "s_cbranch_join" | "s_cbranch_g_fork" | "s_cbranch_i_fork" | "s_setpc_b64" => {
            Flow::Indirect
        }
        "s_swappc_b64" | "s_call_b64" => Flow::Call,
        _ if m.starts_with("s_cbranch_") => match target() {
            Some(t) => Flow::Branch(t),
            None => Flow::Indirect,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::parse::parse;

    fn effect(line: &str, g: Generation, p: &str) -> Effect {
        let f = parse(&format!("\t{line}\n"));
        Model::new(g, p).effect(f.lines[0].instruction().expect("instruction"))
    }

    #[test]
    fn counters_per_generation() {
        let e = effect(
            "buffer_load_dwordx4 v[34:37], v50, s[12:15], 0 offen",
            Generation::Gfx9,
            "gfx942",
        );
        assert_eq!(e.events[0].counter, Counter::Vmcnt);
        assert_eq!(e.defs[0].to_string(), "v[34:37]");
        let e = effect(
            "global_store_dword v[0:1], v2, off",
            Generation::Gfx10_3,
            "gfx1030",
        );
        assert_eq!((e.events[0].counter, e.defs.len()), (Counter::Vscnt, 0));
        let e = effect(
            "s_load_b64 s[4:5], s[0:1], 0x0",
            Generation::Gfx12,
            "gfx1201",
        );
        assert_eq!(
            (e.events[0].counter, e.events[0].kind),
            (Counter::Kmcnt, Kind::Smem)
        );
        let e = effect(
            "ds_load_u16_d16_hi v203, v223 offset:264",
            Generation::Gfx11,
            "gfx1100",
        );
        assert_eq!(e.events[0].counter, Counter::Lgkmcnt);
        assert!(e.reads.iter().any(|r| r.first == 203));
        let e = effect("flat_load_dword v1, v[2:3]", Generation::Gfx9, "gfx90a");
        assert_eq!(e.events.len(), 2);
        let e = effect(
            "global_atomic_add v0, v[1:2], v3, off sc0",
            Generation::Gfx9,
            "gfx942",
        );
        assert_eq!(e.defs.len(), 1);
        let e = effect(
            "global_atomic_add v[1:2], v3, off",
            Generation::Gfx9,
            "gfx942",
        );
        assert!(e.defs.is_empty());
        let e = effect("v_cmpx_gt_u32_e32 0x80, v0", Generation::Gfx12, "gfx1201");
        assert!(e.defs.is_empty());
        assert_eq!(
            effect("s_cbranch_execz .LBB0_2", Generation::Gfx9, "gfx942").flow,
            Flow::Branch(".LBB0_2".into())
        );
    }
}
