//! Exact counters of an observed launch: per instruction and per kernel,
//! executions, active lanes, LDS bank conflicts by the target's rule,
//! global bytes and distinct 64-/128-byte lines, scalar loads, MFMA
//! operations and FLOPs, waits and barriers.
//!
//! These are facts of the emulated run (of the workgroups run, when the
//! launch was sampled), not estimates. Only [`LdsRule`] encodes hardware
//! behaviour; its sources are given there.

use serde::Serialize;

use super::WorkgroupTrace;
use crate::decode::{Instruction, Operand, Program};
use crate::observe::Access;

/// How a target's LDS serves one wave-instruction.
///
/// The LDS has `banks` banks of 4 bytes; a dword address `a` is in bank
/// `a mod banks`. A wave's access is served in phases: one phase moves at
/// most `banks × 4` bytes, so it takes the lanes `banks × 4 / w` at a time,
/// in lane order, where `w` is the bytes each lane accesses (4 for b32 and
/// narrower, 8 for b64 and `ds_read2_b32`, 16 for b96/b128). Within a
/// phase, lanes reading the same dword are served together (broadcast);
/// distinct dwords in one bank are served one per cycle. The cycles of a
/// phase are the most distinct dwords any bank holds; the bank-conflict
/// cycles are those beyond one per phase.
///
/// Sources: 32 banks × 4 bytes on CDNA (ROCm blog "Avoiding LDS Bank
/// Conflicts on AMD GPUs Using CK-Tile Framework"; AMD's CK documentation
/// "Understanding AMD GPU LDS and Bank Conflicts": 32 or 64 banks of 4
/// bytes depending on the architecture, `ds_write_b128` served in 8 phases
/// of 8 lanes); the half-wave phase of 4-byte accesses and the
/// broadcast of equal addresses (AMD APP OpenCL Programming Guide §6.2:
/// "threads 0 through 31 are checked for conflicts as are threads 32
/// through 63"). 64 banks on gfx950 (CK documentation, above); that a
/// gfx950 phase then moves 256 bytes (64 lanes of b32, 32 of b64, 16 of
/// b128) is this model's extrapolation of the same rule, not a documented
/// figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LdsRule {
    /// Banks of 4 bytes.
    pub banks: u32,
}

impl LdsRule {
    /// The rule of a processor: 64 banks on gfx950, 32 on gfx90a/gfx942.
    pub fn of(processor: &str) -> LdsRule {
        LdsRule {
            banks: if processor == "gfx950" { 64 } else { 32 },
        }
    }

    /// Lanes one phase serves when each lane accesses `bytes`.
    pub fn lanes_per_phase(&self, bytes: u32) -> u32 {
        let w = match bytes {
            0..=4 => 4,
            5..=8 => 8,
            _ => 16,
        };
        (self.banks * 4 / w).clamp(1, 64)
    }

    /// (cycles, bank-conflict cycles) of one wave-instruction's LDS
    /// accesses (the lanes' accesses in any order).
    pub fn cycles(&self, accesses: &[Access]) -> (u32, u32) {
        let mut per_lane = [0u32; 64];
        for a in accesses {
            per_lane[a.lane as usize % 64] += a.bytes;
        }
        let width = per_lane.iter().copied().max().unwrap_or(0);
        if width == 0 {
            return (0, 0);
        }
        let l = self.lanes_per_phase(width) as usize;
        let (mut cycles, mut conflicts) = (0, 0);
        let mut dwords: Vec<(u32, u64)> = Vec::with_capacity(4 * l);
        for phase in 0..64usize.div_ceil(l) {
            let lanes = phase * l..(phase + 1) * l;
            dwords.clear();
            for a in accesses
                .iter()
                .filter(|a| lanes.contains(&(a.lane as usize)))
            {
                let first = a.addr / 4;
                let last = (a.addr + a.bytes.max(1) as u64 - 1) / 4;
                for d in first..=last {
                    dwords.push(((d % self.banks as u64) as u32, d));
                }
            }
            if dwords.is_empty() {
                continue;
            }
            dwords.sort_unstable();
            dwords.dedup();
            let mut worst = 0;
            let mut run = 0;
            let mut bank = u32::MAX;
            for &(b, _) in &dwords {
                if b == bank {
                    run += 1;
                } else {
                    bank = b;
                    run = 1;
                }
                worst = worst.max(run);
            }
            cycles += worst;
            conflicts += worst - 1;
        }
        (cycles, conflicts)
    }
}

/// The matrix-core data type an MFMA's rate depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MfmaType {
    /// f64 inputs.
    F64,
    /// f32 inputs.
    F32,
    /// xf32 (tf32) inputs.
    Xf32,
    /// f16 or bf16 inputs.
    F16,
    /// fp8/bf8 (and gfx950's f8f6f4 formats) or int8 inputs.
    F8,
}

/// An MFMA's shape, from its mnemonic and destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Mfma {
    /// M, N, K of one block.
    pub m: u32,
    /// N.
    pub n: u32,
    /// K.
    pub k: u32,
    /// Blocks (independent products in one instruction).
    pub blocks: u32,
    /// The input type.
    pub ty: MfmaType,
}

impl Mfma {
    /// The shape of `v_mfma_*`/`v_smfmac_*` `ins`, or `None` for another
    /// instruction. Blocks come from the destination's size: each of the
    /// 64 lanes holds `M × N × blocks / 64` results of 4 bytes (8 for
    /// f64).
    pub fn of(ins: &Instruction) -> Option<Mfma> {
        let m = ins.mnemonic.as_str();
        if ins.route.format != Some(crate::isa::Format::Mfma) {
            return None;
        }
        let shape = m.split('_').find_map(|t| {
            let mut it = t.split('x');
            let a: u32 = it.next()?.parse().ok()?;
            let b: u32 = it.next()?.parse().ok()?;
            let c = it.next()?;
            let digits: String = c.chars().take_while(|c| c.is_ascii_digit()).collect();
            Some((a, b, digits.parse::<u32>().ok()?))
        })?;
        let (mm, nn, kk) = shape;
        let f64acc = m.contains("_f64");
        let dst = match ins.ops.first().map(|s| &s.op) {
            Some(Operand::Reg { count, .. }) => *count as u32,
            _ => return None,
        };
        let per_lane = if f64acc { dst / 2 } else { dst };
        let blocks = (per_lane * 64 / (mm * nn).max(1)).max(1);
        let tail = &m[m.find(&format!("{mm}x{nn}x{kk}")).unwrap_or(0)..];
        let ty = if f64acc {
            MfmaType::F64
        } else if tail.contains("xf32") {
            MfmaType::Xf32
        } else if tail.contains("f16") {
            MfmaType::F16
        } else if tail.contains("f8") || tail.contains("i8") || tail.contains("fp8") {
            MfmaType::F8
        } else {
            MfmaType::F32
        };
        Some(Mfma {
            m: mm,
            n: nn,
            k: kk,
            blocks,
            ty,
        })
    }

    /// Floating-point (or integer) operations: 2·M·N·K per block.
    pub fn flops(&self) -> u64 {
        2 * self.m as u64 * self.n as u64 * self.k as u64 * self.blocks as u64
    }
}

/// What an instruction is, for the counters and the timing model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Scalar ALU.
    Salu,
    /// Scalar memory (the SMEM format: `s_load_*`, `s_buffer_load_*`,
    /// `s_store_*`, scalar atomics, `s_memtime`, `s_dcache_*`, …): counted
    /// by `lgkmcnt`.
    Smem,
    /// Branches and jumps.
    Branch,
    /// Vector ALU.
    Valu,
    /// Transcendental VALU (quarter rate: `v_exp`, `v_log`, `v_rcp`,
    /// `v_rsq`, `v_sqrt`, `v_sin`, `v_cos`).
    Trans,
    /// Matrix core.
    Mfma,
    /// Vector memory: `global_*`, `buffer_*`, `tbuffer_*`, `flat_*`,
    /// `scratch_*` (counted by `vmcnt`).
    Vmem,
    /// LDS (`ds_*`, counted by `lgkmcnt`).
    Lds,
    /// A wait on memory counters: `s_waitcnt` (and gfx11's
    /// `s_waitcnt_vscnt`), gfx12's `s_wait_loadcnt`, `s_wait_dscnt`, …
    /// (not `s_wait_alu`, `s_waitcnt_depctr`: ALU dependencies).
    Wait,
    /// `s_barrier`, gfx12's `s_barrier_wait`.
    Barrier,
    /// `s_nop`.
    Nop,
    /// `s_sleep`.
    Sleep,
    /// `s_setprio`.
    SetPrio,
    /// `s_endpgm`.
    End,
}

impl Class {
    /// The class of an instruction: its memory and matrix classes from the
    /// instruction-property table's format ([`crate::isa::Props::format`];
    /// a mnemonic CDNA's table lacks is looked up in the RDNA3 then the
    /// RDNA4 table: RDNA's memory mnemonics are spelled apart from CDNA's,
    /// `global_load_b32`, `ds_load_b32`, and WMMA is `Format::Mfma`), the
    /// rest by its mnemonic.
    pub fn of(ins: &Instruction) -> Class {
        use crate::isa::Format;
        let m = ins.mnemonic.as_str();
        // The route's format (the executor's rules), else an RDNA table's.
        let format = ins.route.format.or_else(|| {
            ["gfx1100", "gfx1201"]
                .iter()
                .filter_map(|t| crate::isa::table_for(t)?.lookup(m))
                .map(|p| p.format)
                .next()
        });
        if format == Some(Format::Mfma) {
            Class::Mfma
        } else if format == Some(Format::Ds) {
            Class::Lds
        } else if let Some(
            Format::Flat | Format::Global | Format::Scratch | Format::Mubuf | Format::Mtbuf,
        ) = format
        {
            Class::Vmem
        } else if format == Some(Format::Smem) {
            Class::Smem
        } else if m.starts_with("v_") {
            const TRANS: &[&str] = &[
                "v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_",
            ];
            if TRANS.iter().any(|t| m.starts_with(t)) {
                Class::Trans
            } else {
                Class::Valu
            }
        } else if (m.starts_with("s_waitcnt") && m != "s_waitcnt_depctr")
            || (m.starts_with("s_wait_") && m != "s_wait_alu" && m != "s_wait_event")
        {
            Class::Wait
        } else if m == "s_barrier" || m == "s_barrier_wait" {
            Class::Barrier
        } else if m == "s_nop" {
            Class::Nop
        } else if m == "s_sleep" {
            Class::Sleep
        } else if m == "s_setprio" {
            Class::SetPrio
        } else if m == "s_endpgm" {
            Class::End
        } else if m.starts_with("s_branch")
            || m.starts_with("s_cbranch")
            || m.starts_with("s_setpc")
            || m.starts_with("s_swappc")
            || m.starts_with("s_getpc")
        {
            Class::Branch
        } else {
            Class::Salu
        }
    }
}

/// The counts of one instruction (or, summed, of a kernel).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Wave-instructions executed.
    pub executed: u64,
    /// Active lanes summed over executions.
    pub active_lanes: u64,
    /// LDS wave-instructions.
    pub lds_accesses: u64,
    /// LDS cycles (phases and conflicts).
    pub lds_cycles: u64,
    /// LDS bank-conflict cycles.
    pub lds_bank_conflicts: u64,
    /// Global bytes requested by active lanes.
    pub global_bytes: u64,
    /// Distinct 64-byte lines, summed over wave-instructions.
    pub lines64: u64,
    /// Distinct 128-byte lines, summed over wave-instructions.
    pub lines128: u64,
    /// Global wave-instructions (those with at least one access).
    pub global_accesses: u64,
    /// Scalar memory instructions executed.
    pub scalar_loads: u64,
    /// MFMA instructions executed.
    pub mfma_ops: u64,
    /// Their FLOPs.
    pub flops: u64,
    /// `s_waitcnt` executed.
    pub waits: u64,
    /// `s_barrier` executed (per wave).
    pub barriers: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.executed += o.executed;
        self.active_lanes += o.active_lanes;
        self.lds_accesses += o.lds_accesses;
        self.lds_cycles += o.lds_cycles;
        self.lds_bank_conflicts += o.lds_bank_conflicts;
        self.global_bytes += o.global_bytes;
        self.lines64 += o.lines64;
        self.lines128 += o.lines128;
        self.global_accesses += o.global_accesses;
        self.scalar_loads += o.scalar_loads;
        self.mfma_ops += o.mfma_ops;
        self.flops += o.flops;
        self.waits += o.waits;
        self.barriers += o.barriers;
    }
}

/// Counters of the workgroups run.
#[derive(Debug, Clone, Serialize)]
pub struct Counters {
    /// Workgroups the counts cover.
    pub workgroups: u64,
    /// Per instruction, indexed like [`Program::instructions`].
    pub per_instruction: Vec<Counts>,
    /// The kernel's totals.
    pub total: Counts,
}

impl Counters {
    /// Count the recorded workgroups of a launch of `program`.
    pub fn of(program: &Program, traces: &[WorkgroupTrace]) -> Counters {
        let n = program.instructions.len();
        let classes = super::classes(program);
        let mfma: Vec<Option<Mfma>> = program.instructions.iter().map(Mfma::of).collect();
        let mut per = vec![Counts::default(); n];
        for t in traces {
            for wave in &t.waves {
                for s in wave {
                    let i = s.index as usize;
                    let Some(c) = per.get_mut(i) else { continue };
                    c.executed += 1;
                    c.active_lanes += s.exec.count_ones() as u64;
                    if s.mem.lds {
                        c.lds_accesses += 1;
                        c.lds_cycles += s.mem.lds_cycles as u64;
                        c.lds_bank_conflicts += s.mem.lds_conflicts as u64;
                    }
                    if s.mem.global {
                        c.global_accesses += 1;
                        c.global_bytes += s.mem.bytes as u64;
                        c.lines64 += s.mem.lines64 as u64;
                        c.lines128 += s.mem.lines128 as u64;
                    }
                    match classes[i] {
                        Class::Smem => c.scalar_loads += 1,
                        Class::Wait => c.waits += 1,
                        Class::Barrier => c.barriers += 1,
                        Class::Mfma => {
                            c.mfma_ops += 1;
                            c.flops += mfma[i].map_or(0, |m| m.flops());
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut total = Counts::default();
        for c in &per {
            total.add(c);
        }
        Counters {
            workgroups: traces.len() as u64,
            per_instruction: per,
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{Counters as Cnt, Format};

    /// The classification by spelling that the table replaced, kept only
    /// as the oracle of `classes_from_the_table_are_the_old_rule`.
    fn old_class(m: &str) -> Class {
        if m.starts_with("v_mfma") || m.starts_with("v_smfmac") {
            Class::Mfma
        } else if m.starts_with("ds_") {
            Class::Lds
        } else if m.starts_with("global_")
            || m.starts_with("buffer_")
            || m.starts_with("flat_")
            || m.starts_with("scratch_")
        {
            Class::Vmem
        } else if m.starts_with("s_load")
            || m.starts_with("s_buffer_load")
            || m.starts_with("s_store")
            || m.starts_with("s_buffer_store")
            || m.starts_with("s_memtime")
            || m.starts_with("s_memrealtime")
            || m.starts_with("s_dcache")
            || m.starts_with("s_atomic")
        {
            Class::Smem
        } else if m.starts_with("v_") || m.starts_with("s_wait") || m == "s_endpgm" {
            // Still by name in `Class::of`: VALU/transcendental, waits, ...
            Class::of(&ins(m))
        } else if [
            "s_barrier",
            "s_barrier_wait",
            "s_nop",
            "s_sleep",
            "s_setprio",
        ]
        .contains(&m)
        {
            Class::of(&ins(m))
        } else if ["s_branch", "s_cbranch", "s_setpc", "s_swappc", "s_getpc"]
            .iter()
            .any(|p| m.starts_with(p))
        {
            Class::Branch
        } else {
            Class::Salu
        }
    }

    fn ins(m: &str) -> Instruction {
        Instruction::new(0, m, Vec::new(), Vec::new(), Vec::new(), m.to_string())
    }

    /// Over every mnemonic of the table and the executor's unlisted ones,
    /// the class is the old rule's, except where the old lists missed an
    /// SMEM or MTBUF instruction (they were SALU); and every memory class
    /// agrees with the counter the table gives.
    #[test]
    fn classes_from_the_table_are_the_old_rule() {
        let names = crate::isa::TABLE
            .iter()
            .map(|p| p.name)
            .chain(crate::isa::ALIASES.iter().map(|a| a.0))
            .chain(crate::exec::UNLISTED.iter().map(|u| u.0));
        let mut fixed = Vec::new();
        for m in names {
            let (new, old) = (Class::of(&ins(m)), old_class(m));
            if new != old {
                let f = crate::exec::format_of(m);
                // gfx1250's tensor DMA and cluster loads (after the old
                // rule) are vector memory.
                assert!(
                    old == Class::Salu
                        && (new == Class::Smem && f == Some(Format::Smem)
                            || new == Class::Vmem && f == Some(Format::Mtbuf)
                            || new == Class::Vmem
                                && (m.starts_with("tensor_") || m.starts_with("cluster_load"))),
                    "{m}: {old:?} -> {new:?}"
                );
                fixed.push(m);
            }
            if let Some(p) = crate::isa::lookup(m) {
                match new {
                    Class::Smem | Class::Lds => assert!(
                        p.counters.contains(Cnt::LGKM) || p.memory == crate::isa::Memory::None,
                        "{m}"
                    ),
                    Class::Vmem => assert!(p.counters.contains(Cnt::VM), "{m}"),
                    _ => {}
                }
            }
        }
        // s_buffer_atomic_*, s_scratch_*, s_atc_probe*, tbuffer_*: none of
        // them in the corpora.
        assert!(fixed.iter().any(|m| m.starts_with("s_buffer_atomic_")));
        assert!(fixed.iter().any(|m| m.starts_with("tbuffer_")));
        assert!(
            fixed.iter().all(|m| [
                "s_buffer_atomic_",
                "s_scratch_",
                "s_atc_probe",
                "tbuffer_",
                "tensor_",
                "cluster_load"
            ]
            .iter()
            .any(|p| m.starts_with(p))),
            "{fixed:?}"
        );
    }
}
