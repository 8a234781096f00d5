//! Execution: one wave's state and the semantics of each instruction.
//!
//! Semantics follow AMD's "AMD Instinct MI300 (CDNA3) ISA" reference and
//! LLVM's `AMDGPU/*.td` definitions. The wave is 64 lanes wide. Memory
//! instructions complete at once (in program order): `s_waitcnt` has nothing
//! to wait for, except in what observers record of them ([`crate::observe`]:
//! the sanitizer's counters).

use half::f16;

use crate::decode::{Instruction, Operand, RegFile, Src, EXEC, M0, VCC};
use crate::memory::{Lds, Memory};
use crate::observe::{AccessKind, Space, Trace};
use crate::Error;

/// Lanes of a wave.
pub const LANES: usize = 64;

/// What a wave is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaveState {
    /// Runs.
    Running,
    /// Waits at `s_barrier`.
    Barrier,
    /// Waits at the cluster barrier (`s_barrier_wait -3`, gfx1250) until
    /// its cluster completes the phase the wave waits for
    /// ([`crate::dispatch`]).
    ClusterBarrier,
    /// Waits at a named barrier (gfx1250's `s_barrier_wait` on the last
    /// joined one, [`crate::named_barrier`]) until it completes.
    NamedBarrier,
    /// Stopped at a barrier operation whose result depends on the other
    /// waves ([`Wave::sync`]): the dispatcher completes it and the wave
    /// runs on.
    Sync,
    /// Executed `s_endpgm`.
    Done,
}

/// A barrier operation that the dispatcher completes, because its result
/// depends on the other waves of the workgroup or cluster (the wave
/// stops with [`WaveState::Sync`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncOp {
    /// `s_barrier_signal_isfirst -1`: SCC = whether the wave is the first of
    /// its workgroup to signal the workgroup barrier's current phase.
    FirstSignal,
    /// `s_barrier_signal -3` (`isfirst`: `s_barrier_signal_isfirst -3`,
    /// SCC = whether the signal is its workgroup's first of the phase).
    ClusterSignal {
        /// The `_isfirst` form.
        isfirst: bool,
    },
    /// `s_barrier_wait -3` (printed `0xfffd`).
    ClusterWait,
    /// `s_get_barrier_state sN, -3`: the cluster barrier's state to the
    /// instruction's SGPR.
    ClusterState,
    /// gfx1250's named barriers (1..16, [`crate::named_barrier`]).
    Named(crate::named_barrier::Op),
}

/// The architectural state of one wave.
#[derive(Debug, Clone)]
pub struct Wave {
    /// Scalar registers in hardware numbering (see [`RegFile::S`]).
    pub s: [u32; 128],
    /// The scalar condition code.
    pub scc: bool,
    /// The vector register file, `v[r][lane]`: the VGPRs and the AGPRs
    /// (accumulation registers) in one, as gfx90a, gfx942 and gfx950 have
    /// them (AMDGPUUsage, "Kernel Descriptor": `ACCUM_OFFSET`). `vN` is row
    /// `N` and `aN` row [`accum`](Self::accum) + `N`, so a VGPR at or past
    /// the offset is the AGPR there; a register past the rows is a fault.
    pub v: Vec<[u32; LANES]>,
    /// The row of `a0` in [`v`](Self::v): the descriptor's accum offset
    /// (`.amdhsa_accum_offset`); at or past `v.len()` the wave has no AGPR.
    pub accum: usize,
    /// Index of the next instruction in the program.
    pub pc: usize,
    /// Running, at a barrier, or done.
    pub state: WaveState,
    /// Instructions executed.
    pub executed: u64,
    /// The last taken branch (from, to), for budget reports.
    pub last_branch: Option<(u64, u64)>,
    /// VGPR indexing is on (`s_set_gpr_idx_on` … `s_set_gpr_idx_off`): the
    /// index is `M0[7:0]`, the operands it applies to `M0[15:12]`.
    pub gpr_idx: bool,
    /// VSKIP mode (`s_setvskip`): vector instructions are not issued.
    pub vskip: bool,
    /// Private (scratch) memory, `private_size` bytes per lane, lane-major.
    pub private: Vec<u8>,
    /// Bytes of private memory per lane (the descriptor's
    /// `private_segment_fixed_size`).
    pub private_size: u32,
    /// The approximate instructions this wave executed, and the launch's
    /// perturbation seed ([`crate::approx`]).
    pub approx: crate::approx::Tally,
    /// Lanes of the wave: 64, or 32 on RDNA in wave32 mode. Lanes at and
    /// past it are never active; in wave32 EXEC and VCC are `exec_lo` and
    /// `vcc_lo`, and a lane mask is one SGPR.
    pub wave_size: u32,
    /// The target's SGPR numbering (where `m0` and `null` are).
    pub numbering: crate::decode::Numbering,
    /// gfx1250's hardware registers as `s_setreg_imm32_b32` left them
    /// ([`HwRegs`]).
    pub hwregs: HwRegs,
    /// The barrier operation the wave stopped at ([`WaveState::Sync`], and
    /// [`SyncOp::ClusterWait`] while it waits at the cluster barrier).
    pub sync: Option<SyncOp>,
}

/// The gfx1250 hardware registers the emulator keeps (ids as LLVM's
/// `hwreg(...)` names them; fields as `s_setreg_imm32_b32` writes them:
/// SIMM16 bits 5:0 the id, 10:6 the offset, 15:11 the size minus 1, the
/// literal the value). What each written field does:
///
/// - `HW_REG_WAVE_SCHED_MODE` (26): the wave's scheduling mode. Its bits
///   1:0 are the dependency-check mode: 2 is LLVM's "expert scheduling
///   mode 2" (llvm/llvm-project #170319: the hardware stops holding an
///   instruction until its operands are ready, and `s_wait_alu` must).
///   This emulator runs each instruction to completion before the next, so
///   it cannot show what a missing wait does under that mode (gcn-patch's
///   static hazard check looks for them); the value is kept, with no
///   other effect. Bit 2 (aiter's `f4gemm` and `mxfp8fp4gemm` set it): no
///   source here names it; kept, no effect (inferred from the register
///   being the scheduler's).
/// - `HW_REG_WAVE_MODE` (1), bit 25: LLVM 22 writes 1 there at the entry
///   of every gfx1250 kernel (clang-22, Triton 3.9); no source found here
///   names what it does; kept, no effect (not modelled).
/// - `HW_REG_WAVE_MODE` (1), bit 24: set by aiter's kernels (and by
///   compiler output for a prefetch option, per a public project's notes)
///   before `s_prefetch_inst*` (57 of their 58 writes), which the emulator
///   runs as no-ops; kept, no effect (inferred). Any other MODE bit (rounding, denormals,
///   bits 19:12 that hold the VGPR MSBs per llvm/llvm-project #174681)
///   is refused by name.
///
/// `s_getreg_b32 hwreg(HW_REG_IB_STS2, …)` reads bits 9:6 (1 in a
/// dispatch with workgroup clusters, else 0: LLVM 22's workgroup-ID
/// lowering then reads the cluster fields of ttmp6, else the IDs in
/// ttmp9/ttmp7; iree-org/aster #692, rocJITsu's `gfx1250_ib_sts2_raw`) and
/// bits 24:21 (the workgroup's flat rank in its cluster, which clang-22's
/// `__builtin_amdgcn_cluster_workgroup_flat_id` reads): [`HwRegs::ib_sts2`].
/// Other registers: `s_getreg_b32` reads them back only where every bit it
/// reads was written by the wave (else it is refused: their values at
/// launch are not modelled).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HwRegs {
    /// MODE's bits as written.
    pub mode: u32,
    /// Which of MODE's bits were written.
    pub mode_written: u32,
    /// SCHED_MODE's bits as written.
    pub sched_mode: u32,
    /// Which of SCHED_MODE's bits were written.
    pub sched_mode_written: u32,
    /// IB_STS2 as the dispatch sets it: bits 9:6 = 1 in a cluster dispatch,
    /// bits 24:21 the workgroup's flat rank in its cluster; 0 without
    /// clusters.
    pub ib_sts2: u32,
}

impl HwRegs {
    /// Whether the wave's dispatch has workgroup clusters (IB_STS2[9:6]).
    pub fn clustered(&self) -> bool {
        self.ib_sts2 >> 6 & 0xf != 0
    }
}

/// `hwreg(ID, OFFSET, SIZE)` from an SOPK instruction's SIMM16: the id,
/// the offset, the field's mask at bit 0.
pub(crate) fn hwreg_fields(simm16: u32) -> (u32, u32, u32) {
    let id = simm16 & 0x3f;
    let offset = (simm16 >> 6) & 0x1f;
    let size = (((simm16 >> 11) & 0x1f) + 1).min(32 - offset);
    let mask = if size == 32 {
        u32::MAX
    } else {
        (1 << size) - 1
    };
    (id, offset, mask)
}

/// gfx1250's `s_setreg_imm32_b32` and `s_getreg_b32` ([`HwRegs`]).
fn hwreg_gfx1250(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    const MODE: u32 = 1;
    const SCHED_MODE: u32 = 26;
    // MODE bits with no functional effect here (see `HwRegs`).
    const MODE_KEPT: u32 = 1 << 24 | 1 << 25;
    const IB_STS2: u32 = 28;
    let (id, offset, mask) = hwreg_fields(ins.words[0] & 0xffff);
    let field = mask << offset;
    if ins.mnemonic == "s_setreg_imm32_b32" {
        let value =
            (*ins.words.get(1).ok_or_else(|| {
                Stop::Unsupported("s_setreg_imm32_b32 without its literal".into())
            })? & mask)
                << offset;
        match id {
            SCHED_MODE => {
                w.hwregs.sched_mode = (w.hwregs.sched_mode & !field) | value;
                w.hwregs.sched_mode_written |= field;
            }
            MODE if field & !MODE_KEPT == 0 => {
                w.hwregs.mode = (w.hwregs.mode & !field) | value;
                w.hwregs.mode_written |= field;
            }
            MODE => {
                return unsup(format!(
                    "writing MODE bits {:#010x} (only bits 24 and 25 are modelled, as having no effect)",
                    field & !MODE_KEPT
                ))
            }
            _ => return unsup(format!("writing hardware register {id}")),
        }
        return Ok(());
    }
    let (reg, written) = match id {
        MODE => (w.hwregs.mode, w.hwregs.mode_written),
        SCHED_MODE => (w.hwregs.sched_mode, w.hwregs.sched_mode_written),
        // IB_STS2 bits 9:6: nonzero when the dispatch has workgroup
        // clusters (LLVM 22's workgroup-ID lowering then reads the cluster
        // fields of ttmp6; at 0 it reads ttmp9/ttmp7); bits 24:21 the flat
        // rank in the cluster. Other fields (counters) are not modelled.
        IB_STS2 if field & !(0xf << 6 | 0xf << 21) == 0 => (w.hwregs.ib_sts2, field),
        _ => return unsup(format!("reading hardware register {id}")),
    };
    let dst = opnd(&ins.ops, 0)?;
    if field & !written != 0 && !dead_sgpr_result(ctx.program, ins, dst) {
        return unsup(format!(
            "reading bits {:#010x} of hardware register {id}, which the wave did not write (their launch values are not modelled) into a register read afterwards",
            field & !written
        ));
    }
    // Bits never written read as 0 here: only a result nothing reads
    // (overwritten before any read or branch) gets them.
    w.swrite(dst, (reg & field) >> offset)
}

/// Whether the SGPRs `dst` names (plain SGPRs only) are overwritten, and
/// not read, by the straight-line instructions after `ins` before any
/// branch: a value written there is never read.
fn dead_sgpr_result(program: &crate::decode::Program, ins: &Instruction, dst: &Src) -> bool {
    let Operand::Reg {
        file: RegFile::S,
        index: first,
        count,
    } = dst.op
    else {
        return false;
    };
    if first + count > 102 {
        return false;
    }
    let touches = |o: &Src| {
        matches!(o.op, Operand::Reg { file: RegFile::S, index, count: c }
            if index < first + count && first < index + c)
    };
    let Some(&at) = program.index.get(&ins.addr) else {
        return false;
    };
    for next in program.instructions.iter().skip(at + 1).take(32) {
        let m = next.mnemonic.as_str();
        if next.dual.is_some()
            || m.starts_with("s_cbranch")
            || matches!(m, "s_branch" | "s_setpc_b64" | "s_swappc_b64" | "s_endpgm")
        {
            return false;
        }
        let Some(i) = next.ops.iter().position(touches) else {
            continue;
        };
        let writes_all = matches!(next.ops[0].op, Operand::Reg { file: RegFile::S, index, count: c }
            if index <= first && first + count <= index + c);
        let dst_role = next.route.props().is_some_and(|p| {
            p.operands
                .first()
                .is_some_and(|o| o.role == crate::isa::Role::Dst)
        });
        return i == 0 && writes_all && dst_role && !next.ops[1..].iter().any(touches);
    }
    false
}

/// Words 1 and 3 of the private segment buffer V# the launch puts in the
/// first user SGPRs (gfx90a scratch through MUBUF): base 0, swizzle and
/// `ADD_TID_ENABLE` set. Buffer instructions through such a V# reach the
/// lane's private memory at `soffset + voffset + offset`.
pub const PRIVATE_VSHARP_WORD1: u32 = 1 << 31;
/// Word 3 of the private segment buffer V#: `ADD_TID_ENABLE` (bit 23).
pub const PRIVATE_VSHARP_WORD3: u32 = 1 << 23;

/// What an instruction needs besides the wave.
pub struct Ctx<'a> {
    /// The program (for branch targets).
    pub program: &'a crate::decode::Program,
    /// Global memory.
    pub mem: &'a Memory,
    /// This workgroup's LDS.
    pub lds: &'a mut Lds,
    /// High 32 bits of the LDS aperture (`src_shared_base`).
    pub shared_base_hi: u32,
    /// High 32 bits of the scratch aperture (`src_private_base`).
    pub private_base_hi: u32,
    /// fp8/bf8 operands are OCP E4M3/E5M2 (gfx950); else FNUZ (gfx942).
    pub ocp_fp8: bool,
    /// The current instruction's memory accesses, when observed
    /// ([`crate::observe`]).
    pub(crate) trace: Trace,
    /// The workgroup's observer, with the workgroup and the wave's index
    /// ([`crate::observe`]).
    pub(crate) observer: Option<(&'a mut dyn crate::observe::Observer, [u32; 3], u32)>,
    /// The program's instructions lowered to typed operations
    /// ([`crate::typed`]), by index; shorter (empty) when not lowered.
    pub(crate) typed: &'a [Option<crate::typed::Typed>],
}

/// Operand value types of vector ALU operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// 16 bits, integer.
    B16,
    /// 32 bits, integer.
    B32,
    /// 64 bits, integer.
    B64,
    /// IEEE half.
    F16,
    /// IEEE single.
    F32,
    /// IEEE double.
    F64,
}

impl Ty {
    fn is64(self) -> bool {
        matches!(self, Ty::B64 | Ty::F64)
    }
}

/// Why an instruction could not run: the executor turns it into an [`Error`].
#[derive(Debug)]
pub enum Stop {
    /// Not implemented (detail).
    Unsupported(String),
    /// A fault (lane, what).
    Fault(Option<u32>, String),
}

type R<T> = std::result::Result<T, Stop>;

mod cvt_pk8;

/// Operand `i`, or an unsupported operand form when the instruction has
/// fewer (the executor never indexes past the operands LLVM printed).
fn opnd(ops: &[Src], i: usize) -> R<&Src> {
    ops.get(i).ok_or_else(|| {
        Stop::Unsupported(format!(
            "this operand form (operand {i} is missing: {} given)",
            ops.len()
        ))
    })
}

fn unsup<T>(what: impl Into<String>) -> R<T> {
    Err(Stop::Unsupported(what.into()))
}

fn f32b(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
pub(crate) fn f64b(x: u64) -> f64 {
    f64::from_bits(x)
}
pub(crate) fn f16b(x: u64) -> f32 {
    f16::from_bits(x as u16).to_f32()
}
fn bf32(x: f32) -> u64 {
    // Canonical quiet NaN, as the hardware produces.
    if x.is_nan() {
        0x7fc0_0000
    } else {
        x.to_bits() as u64
    }
}
pub(crate) fn bf64(x: f64) -> u64 {
    if x.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        x.to_bits()
    }
}
pub(crate) fn bf16(x: f32) -> u64 {
    if x.is_nan() {
        0x7e00
    } else {
        f16::from_f32(x).to_bits() as u64
    }
}
/// S_BFE_U32/S_BFE_I32: the field of `a` at offset `b[4:0]`, `b[22:16]`
/// bits wide, sign-extended when `signed`.
pub(crate) fn bfe32(a: u32, b: u32, signed: bool) -> u32 {
    let (off, width) = (b & 31, (b >> 16) & 0x7f);
    if width == 0 {
        return 0;
    }
    let x = (a >> off) as u64;
    let x = if width >= 32 {
        x
    } else {
        x & ((1u64 << width) - 1)
    };
    if signed && width < 32 {
        sext(x, width) as u32
    } else {
        x as u32
    }
}

fn sext(v: u64, bits: u32) -> i64 {
    ((v << (64 - bits)) as i64) >> (64 - bits)
}

/// The mnemonic without its encoding suffix, and the suffix. RDNA's VOP3
/// DPP (`v_fma_f32_e64_dpp`, gfx11+) has the one suffix `_e64_dpp`.
pub fn base_name(m: &str) -> (&str, &str) {
    for suf in ["_e64_dpp", "_e32", "_e64", "_dpp", "_sdwa"] {
        if let Some(b) = m.strip_suffix(suf) {
            return (b, suf);
        }
    }
    (m, "")
}

fn suffix_ty(name: &str) -> Ty {
    let last = name.rsplit('_').next().unwrap_or("");
    match last {
        "f16" => Ty::F16,
        "f32" => Ty::F32,
        "f64" => Ty::F64,
        "b64" | "u64" | "i64" => Ty::B64,
        "u16" | "i16" | "b16" => Ty::B16,
        _ => Ty::B32,
    }
}

/// The part of the reference executor that runs an instruction, read from
/// the instruction-property table ([`crate::isa::Props`]: its format and
/// memory access) rather than from the mnemonic's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Scalar ALU and program control (SOP1/SOP2/SOPK/SOPC/SOPP), and the
    /// scalar-memory instructions that move no data (`s_memtime`,
    /// `s_dcache_*`, ...): [`salu`].
    Salu,
    /// A scalar load: [`smem`].
    SmemRead,
    /// A scalar store or atomic: [`smem_write`].
    SmemWrite,
    /// Scratch SMEM (`s_scratch_*`): not run (it addresses the scratch
    /// segment, which [`smem`] does not).
    SmemScratch,
    /// A vector compare (VOPC): `vcmp`.
    Vcmp,
    /// Any other vector ALU instruction (VOP1/VOP2/VOP3/VOP3P).
    Valu,
    /// A matrix instruction (`v_mfma_*`, `v_smfmac_*`).
    Mfma,
    /// A data-share instruction (`ds_*`).
    Ds,
    /// FLAT and GLOBAL memory.
    Global,
    /// SCRATCH memory.
    Scratch,
    /// Untyped buffer memory (MUBUF).
    Buffer,
    /// Typed buffer memory (MTBUF): not run, but issued to the vector
    /// memory pipeline.
    Tbuffer,
    /// Not run by the executor: mnemonics neither the table nor
    /// [`UNLISTED`] has.
    None,
}

impl Unit {
    /// Whether the instruction is issued to the vector pipelines (VALU,
    /// MFMA, vector memory, DS): what `s_setvskip` suppresses and what VGPR
    /// indexing (with [`Unit::is_vector_alu`]) applies to.
    pub(crate) fn is_vector(self) -> bool {
        !self.is_scalar() && self != Unit::None
    }
    /// Issued to the scalar pipelines: SALU, program control, SMEM.
    pub(crate) fn is_scalar(self) -> bool {
        matches!(
            self,
            Unit::Salu | Unit::SmemRead | Unit::SmemWrite | Unit::SmemScratch
        )
    }
    /// A VALU or matrix instruction (`v_*`).
    pub(crate) fn is_vector_alu(self) -> bool {
        matches!(self, Unit::Vcmp | Unit::Valu | Unit::Mfma)
    }
}

/// Mnemonics the executor runs that the table lacks, with their format:
/// not in AMD's CDNA4 XML. gfx90a's `buffer_wbinvl1{,_vol}` and
/// `v_madak_f32`/`v_madmk_f32` (llvm-mc-22 assembles them for gfx90a only),
/// and spellings of other generations the executor accepts as no-ops or
/// aliases. The only list of names next to the table; a test keeps it
/// disjoint from it.
pub(crate) const UNLISTED: &[(&str, crate::isa::Format)] = {
    use crate::isa::Format::*;
    &[
        ("buffer_wbinvl1", Mubuf),
        ("buffer_wbinvl1_vol", Mubuf),
        ("s_buffer_wbinvl1", Sopp),
        ("s_code_end", Sopp),
        ("s_trap_nop", Sopp),
        ("s_waitcnt_lgkmcnt", Sopk),
        ("s_waitcnt_vmcnt", Sopk),
        ("s_waitcnt_vscnt", Sopk),
        // wave32's saveexec (RDNA), under gfx9's names of the operations
        // ([`crate::rdna::ALIASES`] maps `s_and_not1_saveexec_b32` here).
        ("s_and_saveexec_b32", Sop1),
        ("s_andn1_saveexec_b32", Sop1),
        ("s_andn2_saveexec_b32", Sop1),
        ("s_nand_saveexec_b32", Sop1),
        ("s_nor_saveexec_b32", Sop1),
        ("s_or_saveexec_b32", Sop1),
        // gfx1250's dense WMMAs `crate::wmma` models, 16x16x32 f16/bf16 and
        // 16x16x64 and 16x16x128 fp8/bf8 (in no RDNA table: gfx1250 has no
        // XML of its own).
        ("v_wmma_f32_16x16x32_bf16", Mfma),
        ("v_wmma_f32_16x16x32_f16", Mfma),
        ("v_wmma_f32_16x16x64_fp8_fp8", Mfma),
        ("v_wmma_f32_16x16x64_fp8_bf8", Mfma),
        ("v_wmma_f32_16x16x64_bf8_fp8", Mfma),
        ("v_wmma_f32_16x16x64_bf8_bf8", Mfma),
        ("v_wmma_f32_16x16x128_fp8_fp8", Mfma),
        ("v_wmma_f32_16x16x128_fp8_bf8", Mfma),
        ("v_wmma_f32_16x16x128_bf8_fp8", Mfma),
        ("v_wmma_f32_16x16x128_bf8_bf8", Mfma),
        ("v_wmma_f32_16x16x128_f8f6f4", Mfma),
        // gfx1250's transposing LDS loads ([`ds_read_tr`]).
        ("ds_load_tr16_b128", Ds),
        ("ds_load_tr8_b64", Ds),
        ("ds_load_tr4_b64", Ds),
        ("ds_load_tr6_b96", Ds),
        // gfx1250's transposing global loads (`global`, [`transpose_into`]).
        ("global_load_tr16_b128", Global),
        ("global_load_tr8_b64", Global),
        ("global_load_tr4_b64", Global),
        ("global_load_tr6_b96", Global),
        // gfx1250's f4 and scaled WMMAs (`crate::wmma::F8F6F4`; the scaled
        // ones are a `v_wmma_ld_scale*` and its WMMA, joined by
        // `crate::gfx1250_wmma::pair`).
        ("v_wmma_scale_f32_16x16x128_f8f6f4", Mfma),
        ("v_wmma_scale16_f32_16x16x128_f8f6f4", Mfma),
        ("v_wmma_f32_32x16x128_f4", Mfma),
        ("v_wmma_scale_f32_32x16x128_f4", Mfma),
        ("v_wmma_scale16_f32_32x16x128_f4", Mfma),
        // gfx1250's 64-bit add without carry out.
        ("v_add_nc_u64", Vop2),
        // gfx1250's 64-bit multiply-add without carry out.
        ("v_mad_nc_i64_i32", Vop3),
        // gfx1250's eight-element scaled conversions (exec/cvt_pk8.rs).
        ("v_cvt_scalef32_pk8_fp8_f32", Vop3),
        ("v_cvt_scalef32_pk8_fp8_f16", Vop3),
        ("v_cvt_scalef32_pk8_fp8_bf16", Vop3),
        ("v_cvt_scalef32_pk8_bf8_f32", Vop3),
        ("v_cvt_scalef32_pk8_bf8_f16", Vop3),
        ("v_cvt_scalef32_pk8_bf8_bf16", Vop3),
        ("v_cvt_scalef32_pk8_fp4_f32", Vop3),
        ("v_cvt_scalef32_pk8_fp4_f16", Vop3),
        ("v_cvt_scalef32_pk8_fp4_bf16", Vop3),
        ("v_cvt_scale_pk8_f32_fp8", Vop3),
        ("v_cvt_scale_pk8_f32_bf8", Vop3),
        ("v_cvt_scale_pk8_f32_fp4", Vop3),
        ("v_cvt_scale_pk8_f16_fp8", Vop3),
        ("v_cvt_scale_pk8_f16_bf8", Vop3),
        ("v_cvt_scale_pk8_f16_fp4", Vop3),
        ("v_cvt_scale_pk8_bf16_fp8", Vop3),
        ("v_cvt_scale_pk8_bf16_bf8", Vop3),
        ("v_cvt_scale_pk8_bf16_fp4", Vop3),
        // gfx1250's asynchronous transfers between global memory and LDS
        // (ASYNCcnt, [`crate::waitcnt`]).
        ("global_load_async_to_lds_b8", Global),
        ("global_load_async_to_lds_b32", Global),
        ("global_load_async_to_lds_b64", Global),
        ("global_load_async_to_lds_b128", Global),
        ("global_store_async_from_lds_b8", Global),
        ("global_store_async_from_lds_b32", Global),
        ("global_store_async_from_lds_b64", Global),
        ("global_store_async_from_lds_b128", Global),
        // gfx1250's multicast loads (`global`: the issuer's own copy).
        ("cluster_load_b32", Global),
        ("cluster_load_b64", Global),
        ("cluster_load_b128", Global),
        ("cluster_load_async_to_lds_b8", Global),
        ("cluster_load_async_to_lds_b32", Global),
        ("cluster_load_async_to_lds_b64", Global),
        ("cluster_load_async_to_lds_b128", Global),
        // gfx1250's tensor data mover (TENSORcnt, [`crate::tensor`]).
        ("tensor_load_to_lds", Global),
        ("tensor_store_from_lds", Global),
        ("s_orn1_saveexec_b32", Sop1),
        ("s_orn2_saveexec_b32", Sop1),
        ("s_xnor_saveexec_b32", Sop1),
        ("s_xor_saveexec_b32", Sop1),
        // gfx10+ cross-row permutes.
        ("v_permlane16_b32", Vop3),
        ("v_permlanex16_b32", Vop3),
        ("v_fmac_f16", Vop2),
        ("v_madak_f32", Vop2),
        ("v_madmk_f32", Vop2),
        ("v_mul_lo_i32", Vop3),
        // RDNA (gfx11/gfx12) operations with semantics of their own.
        ("ds_cmpstore_b32", Ds),
        ("ds_cmpstore_rtn_b32", Ds),
        ("ds_cmpstore_b64", Ds),
        ("ds_cmpstore_rtn_b64", Ds),
        ("ds_cmpstore_f32", Ds),
        ("ds_cmpstore_rtn_f32", Ds),
        ("ds_cond_sub_u32", Ds),
        ("ds_cond_sub_rtn_u32", Ds),
        ("ds_sub_clamp_u32", Ds),
        ("ds_sub_clamp_rtn_u32", Ds),
        ("global_atomic_cmpswap_f32", Global),
        ("flat_atomic_cmpswap_f32", Flat),
        ("buffer_atomic_cmpswap_f32", Mubuf),
        ("global_atomic_csub_u32", Global),
        ("buffer_atomic_csub_u32", Mubuf),
        ("global_atomic_cond_sub_u32", Global),
        ("flat_atomic_cond_sub_u32", Flat),
        ("buffer_atomic_cond_sub_u32", Mubuf),
        ("global_atomic_sub_clamp_u32", Global),
        ("flat_atomic_sub_clamp_u32", Flat),
        ("buffer_atomic_sub_clamp_u32", Mubuf),
        ("ds_max_num_f32", Ds),
        ("ds_min_num_f32", Ds),
        ("ds_max_num_rtn_f32", Ds),
        ("ds_min_num_rtn_f32", Ds),
        ("global_atomic_max_f32", Global),
        ("global_atomic_min_f32", Global),
        ("global_atomic_max_num_f32", Global),
        ("global_atomic_min_num_f32", Global),
        ("flat_atomic_max_f32", Flat),
        ("flat_atomic_min_f32", Flat),
        ("flat_atomic_max_num_f32", Flat),
        ("flat_atomic_min_num_f32", Flat),
        ("buffer_atomic_max_f32", Mubuf),
        ("buffer_atomic_min_f32", Mubuf),
        ("buffer_atomic_max_num_f32", Mubuf),
        ("buffer_atomic_min_num_f32", Mubuf),
        ("v_mov_b16", Vop1),
        ("v_dot2acc_f32_f16", Vop2),
        ("v_dot2acc_f32_bf16", Vop2),
        ("v_max_num_f32", Vop2),
        ("v_min_num_f32", Vop2),
        ("v_xor3_b32", Vop3),
        ("v_max3_num_f32", Vop3),
        ("v_min3_num_f32", Vop3),
        // gfx12 (RDNA4): `salu_gfx12`, and global()'s cache controls.
        ("s_wait_loadcnt", Sopp),
        ("s_wait_storecnt", Sopp),
        ("s_wait_dscnt", Sopp),
        ("s_wait_kmcnt", Sopp),
        ("s_wait_samplecnt", Sopp),
        ("s_wait_bvhcnt", Sopp),
        ("s_wait_expcnt", Sopp),
        ("s_wait_loadcnt_dscnt", Sopp),
        ("s_wait_storecnt_dscnt", Sopp),
        ("s_wait_alu", Sopp),
        ("s_wait_idle", Sopp),
        ("s_wait_event", Sopp),
        ("s_barrier_signal", Sop1),
        ("s_barrier_signal_isfirst", Sop1),
        ("s_get_barrier_state", Sop1),
        ("s_barrier_wait", Sopp),
        // gfx1250's named barriers ([`crate::named_barrier`]).
        ("s_barrier_init", Sop1),
        ("s_barrier_join", Sop1),
        ("s_barrier_leave", Sopp),
        ("s_add_f32", Sop2),
        ("s_sub_f32", Sop2),
        ("s_mul_f32", Sop2),
        ("s_fmac_f32", Sop2),
        ("s_fmaak_f32", Sop2),
        ("s_fmamk_f32", Sop2),
        ("s_max_num_f32", Sop2),
        ("s_min_num_f32", Sop2),
        ("s_cvt_f32_i32", Sop1),
        ("s_cvt_f32_u32", Sop1),
        ("s_cvt_i32_f32", Sop1),
        ("s_cvt_u32_f32", Sop1),
        ("s_cvt_f32_f16", Sop1),
        ("s_cvt_hi_f32_f16", Sop1),
        ("s_ceil_f32", Sop1),
        ("s_floor_f32", Sop1),
        ("s_trunc_f32", Sop1),
        ("s_rndne_f32", Sop1),
        ("s_cmp_lt_f32", Sopc),
        ("s_cmp_eq_f32", Sopc),
        ("s_cmp_le_f32", Sopc),
        ("s_cmp_gt_f32", Sopc),
        ("s_cmp_lg_f32", Sopc),
        ("s_cmp_ge_f32", Sopc),
        ("s_cmp_o_f32", Sopc),
        ("s_cmp_u_f32", Sopc),
        ("s_cmp_nge_f32", Sopc),
        ("s_cmp_nlg_f32", Sopc),
        ("s_cmp_ngt_f32", Sopc),
        ("s_cmp_nle_f32", Sopc),
        ("s_cmp_neq_f32", Sopc),
        ("s_cmp_nlt_f32", Sopc),
        ("s_add_nc_u64", Sop2),
        ("s_sub_nc_u64", Sop2),
        ("s_mul_u64", Sop2),
        ("s_load_b96", Smem),
        ("s_buffer_load_b96", Smem),
        ("global_inv", Global),
        ("global_wb", Global),
        ("global_wbinv", Global),
    ]
};

/// The encoding family of `mnemonic` as LLVM prints it (suffixes allowed):
/// the table's, else [`UNLISTED`]'s; `None` for a mnemonic neither has.
pub(crate) fn format_of(mnemonic: &str) -> Option<crate::isa::Format> {
    match crate::isa::lookup(mnemonic) {
        Some(p) => Some(p.format),
        None => {
            let base = base_name(mnemonic).0;
            UNLISTED
                .iter()
                .find(|u| u.0 == base)
                .map(|u| u.1)
                .or_else(|| rdna_matrix(base))
        }
    }
}

/// `Format::Mfma` when an RDNA table lists `name` as a matrix instruction
/// (WMMA, SWMMAC: [`crate::wmma`]; gfx1250's are [`UNLISTED`]); the
/// CDNA table has none of them.
fn rdna_matrix(name: &str) -> Option<crate::isa::Format> {
    ["gfx1100", "gfx1201"]
        .iter()
        .filter_map(|t| crate::isa::table_for(t)?.lookup(name))
        .map(|p| p.format)
        .find(|&f| f == crate::isa::Format::Mfma)
}

/// The [`Unit`] of `mnemonic` as LLVM prints it (suffixes allowed).
pub(crate) fn unit(mnemonic: &str) -> Unit {
    use crate::isa::{Access, Format};
    let (format, access, name) = match crate::isa::lookup(mnemonic) {
        Some(p) => (p.format, p.access, p.name),
        None => match format_of(mnemonic) {
            // An UNLISTED scalar-memory name (gfx12's `s_load_b96`): its
            // access from the RDNA4 table.
            Some(Format::Smem) => {
                let p = crate::isa::table_for("gfx1201").and_then(|t| t.lookup(mnemonic));
                (Format::Smem, p.map_or(Access::None, |p| p.access), "")
            }
            Some(f) => (f, Access::None, ""),
            None => return Unit::None,
        },
    };
    match format {
        Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc | Format::Sopp => Unit::Salu,
        Format::Smem if name.starts_with("s_scratch_") => Unit::SmemScratch,
        Format::Smem => match access {
            Access::Read => Unit::SmemRead,
            Access::Write | Access::Atomic(_) => Unit::SmemWrite,
            Access::None => Unit::Salu,
        },
        Format::Vopc => Unit::Vcmp,
        Format::Vop1 | Format::Vop2 | Format::Vop3 | Format::Vop3p => Unit::Valu,
        Format::Mfma => Unit::Mfma,
        Format::Ds => Unit::Ds,
        Format::Flat | Format::Global => Unit::Global,
        Format::Scratch => Unit::Scratch,
        Format::Mubuf => Unit::Buffer,
        Format::Mtbuf => Unit::Tbuffer,
        // RDNA's dual issue: not in the CDNA table the executor reads.
        Format::Vopd => Unit::None,
    }
}

/// What the executor, the sanitizer and the profiler need of a mnemonic,
/// resolved once when the instruction is decoded
/// ([`Instruction::new`](crate::decode::Instruction::new)): its [`Unit`],
/// its format (the table's, else [`UNLISTED`]'s) and its entry in the
/// instruction-property table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Route {
    /// What runs it.
    pub(crate) unit: Unit,
    /// Its encoding family ([`format_of`]).
    pub(crate) format: Option<crate::isa::Format>,
    /// Its entry in the table.
    pub(crate) id: Option<crate::isa::OpId>,
}

impl Route {
    /// The routing of `mnemonic` as LLVM prints it.
    pub(crate) fn of(mnemonic: &str) -> Route {
        Route {
            unit: unit(mnemonic),
            format: format_of(mnemonic),
            id: crate::isa::id(mnemonic),
        }
    }
    /// Its entry's properties.
    pub(crate) fn props(self) -> Option<&'static crate::isa::Props> {
        self.id.map(crate::isa::OpId::props)
    }
}

/// Whether a vector ALU operation reads `vcc` without naming it
/// (`v_div_fmas_*`): the ISA XML lists no implicit operand.
pub(crate) fn reads_vcc_implicitly(name: &str) -> bool {
    matches!(name, "v_div_fmas_f32" | "v_div_fmas_f64")
}

/// The destination and source types of a vector ALU operation.
pub(crate) fn valu_types(name: &str) -> (Ty, [Ty; 3]) {
    use Ty::*;
    if let Some(rest) = name.strip_prefix("v_cvt_") {
        let mut it = rest.split('_');
        let d = it.next().unwrap_or("");
        let s = it.next().unwrap_or("");
        let ty = |t: &str| match t {
            "f16" => F16,
            "f32" => F32,
            "f64" => F64,
            "u16" | "i16" => B16,
            _ => B32,
        };
        if matches!(rest, "pk_f32_fp8" | "pk_f32_bf8") {
            return (B64, [B32; 3]);
        }
        if matches!(rest, "f32_fp8" | "f32_bf8" | "off_f32_i4" | "f32_bf16") {
            return (F32, [B32; 3]);
        }
        if rest == "pkrtz_f16_f32" || rest.starts_with("pk_") {
            return (B32, [F32, F32, B32]);
        }
        if s.starts_with("ubyte") {
            return (F32, [B32; 3]);
        }
        return (ty(d), [ty(s); 3]);
    }
    match name {
        "v_lshlrev_b64" | "v_lshrrev_b64" | "v_ashrrev_i64" => (B64, [B32, B64, B32]),
        "v_lshl_add_u64" => (B64, [B64, B32, B64]),
        // gfx1250's 64-bit add, no carry out.
        "v_add_nc_u64" => (B64, [B64, B64, B64]),
        "v_mad_u64_u32" | "v_mad_i64_i32" | "v_mad_nc_i64_i32" => (B64, [B32, B32, B64]),
        "v_ldexp_f32" => (F32, [F32, B32, B32]),
        "v_ldexp_f64" => (F64, [F64, B32, B32]),
        "v_cmp_class_f32" | "v_cmpx_class_f32" => (B32, [F32, B32, B32]),
        "v_cmp_class_f64" | "v_cmpx_class_f64" => (B32, [F64, B32, B32]),
        "v_frexp_exp_i32_f32" => (B32, [F32; 3]),
        "v_frexp_exp_i32_f64" => (B32, [F64; 3]),
        "v_pack_b32_f16" => (B32, [F16, F16, B32]),
        "v_mov_b64" => (B64, [B64; 3]),
        "v_dot2acc_f32_f16" | "v_dot2acc_f32_bf16" => (F32, [B32, B32, F32]),
        // VOP3 v_cndmask takes float input modifiers (abs/neg of 32 bits).
        "v_cndmask_b32" => (B32, [F32, F32, B32]),
        "v_fma_mix_f32" | "v_fma_mixlo_f16" | "v_fma_mixhi_f16" => (B32, [B32; 3]),
        "v_div_fixup_f16" => (F16, [F16; 3]),
        _ => {
            let t = suffix_ty(name);
            (t, [t; 3])
        }
    }
}

/// Vector ALU operations: `x` are the sources, `cin` the per-lane mask bit
/// (carry in, `vcc` of `v_cndmask`/`v_div_fmas`). Returns the result and the
/// per-lane bit out (carry, `vcc` of `v_div_scale`). `None`: unknown.
fn valu(name: &str, x: [u64; 3], cin: bool, lane: usize) -> Option<(u64, bool)> {
    let (a, b, c) = (x[0], x[1], x[2]);
    let (a32, b32, c32) = (a as u32, b as u32, c as u32);
    let (fa, fb, fc) = (f32b(a), f32b(b), f32b(c));
    let (da, db, dc) = (f64b(a), f64b(b), f64b(c));
    let (ha, hb, hc) = (f16b(a), f16b(b), f16b(c));
    let r = |v: u32| Some((v as u64, false));
    let r64 = |v: u64| Some((v, false));
    match name {
        // Moves and bit operations.
        "v_mov_b32" | "v_accvgpr_write_b32" | "v_accvgpr_read_b32" | "v_accvgpr_mov_b32" => r(a32),
        "v_mov_b64" => r64(a),
        // RDNA's 16-bit move (true16 halves: see `t16_halves`).
        "v_mov_b16" => r(a32 & 0xffff),
        "v_not_b32" => r(!a32),
        "v_and_b32" => r(a32 & b32),
        "v_or_b32" => r(a32 | b32),
        "v_xor_b32" => r(a32 ^ b32),
        "v_xnor_b32" => r(!(a32 ^ b32)),
        "v_or3_b32" => r(a32 | b32 | c32),
        // gfx10+ (RDNA): D = S0 ^ S1 ^ S2 (RDNA4 ISA pseudo-code).
        "v_xor3_b32" => r(a32 ^ b32 ^ c32),
        "v_and_or_b32" => r((a32 & b32) | c32),
        "v_lshl_or_b32" => r(a32.wrapping_shl(b32 & 31) | c32),
        "v_bfi_b32" => r((a32 & b32) | (!a32 & c32)),
        "v_bfe_u32" => {
            let (o, w) = (b32 & 31, c32 & 31);
            r(if w == 0 {
                0
            } else {
                (a32 >> o) & ((1u64 << w) - 1) as u32
            })
        }
        "v_bfe_i32" => {
            let (o, w) = (b32 & 31, c32 & 31);
            r(if w == 0 {
                0
            } else {
                sext((a32 >> o) as u64, w) as u32
            })
        }
        "v_bfm_b32" => r((((1u64 << (a32 & 31)) - 1) as u32).wrapping_shl(b32 & 31)),
        "v_alignbit_b32" => r(((((a32 as u64) << 32) | b32 as u64) >> (c32 & 31)) as u32),
        "v_alignbyte_b32" => r(((((a32 as u64) << 32) | b32 as u64) >> (8 * (c32 & 3))) as u32),
        "v_perm_b32" => {
            let bytes = ((a & 0xffff_ffff) << 32) | (b & 0xffff_ffff);
            let mut out = 0u32;
            for i in 0..4 {
                let sel = (c32 >> (8 * i)) & 0xff;
                let byte = match sel {
                    0..=7 => (bytes >> (8 * sel)) & 0xff,
                    8..=11 => {
                        let src = (bytes >> (8 * (2 * (sel - 8) + 1))) & 0x80;
                        if src != 0 {
                            0xff
                        } else {
                            0
                        }
                    }
                    12 => 0,
                    _ => 0xff,
                };
                out |= (byte as u32) << (8 * i);
            }
            r(out)
        }
        "v_bcnt_u32_b32" => r(a32.count_ones().wrapping_add(b32)),
        "v_bfrev_b32" => r(a32.reverse_bits()),
        "v_ffbh_u32" => r(if a32 == 0 {
            u32::MAX
        } else {
            a32.leading_zeros()
        }),
        "v_ffbl_b32" => r(if a32 == 0 {
            u32::MAX
        } else {
            a32.trailing_zeros()
        }),
        "v_ffbh_i32" => {
            let v = a32 as i32;
            r(if v == 0 || v == -1 {
                u32::MAX
            } else if v < 0 {
                (!a32).leading_zeros()
            } else {
                a32.leading_zeros()
            })
        }
        "v_mbcnt_lo_u32_b32" => {
            let mask = if lane >= 32 {
                u32::MAX
            } else {
                ((1u64 << lane) - 1) as u32
            };
            r((a32 & mask).count_ones().wrapping_add(b32))
        }
        "v_mbcnt_hi_u32_b32" => {
            let mask = if lane < 32 {
                0
            } else {
                ((1u64 << (lane - 32)) - 1) as u32
            };
            r((a32 & mask).count_ones().wrapping_add(b32))
        }
        // Shifts.
        "v_lshlrev_b32" => r(b32.wrapping_shl(a32 & 31)),
        "v_lshrrev_b32" => r(b32.wrapping_shr(a32 & 31)),
        "v_ashrrev_i32" => r(((b32 as i32) >> (a32 & 31)) as u32),
        "v_lshlrev_b64" => r64(b << (a32 & 63)),
        "v_lshrrev_b64" => r64(b >> (a32 & 63)),
        "v_ashrrev_i64" => r64(((b as i64) >> (a32 & 63)) as u64),
        "v_lshl_add_u32" => r(a32.wrapping_shl(b32 & 31).wrapping_add(c32)),
        "v_add_lshl_u32" => r(a32.wrapping_add(b32).wrapping_shl(c32 & 31)),
        "v_lshl_add_u64" => r64((a << (b32 & 7)).wrapping_add(c)),
        "v_add_nc_u64" => r64(a.wrapping_add(b)),
        "v_lshlrev_b16" => r((b32 as u16).wrapping_shl(a32 & 15) as u32),
        "v_lshrrev_b16" => r((b32 as u16).wrapping_shr(a32 & 15) as u32),
        "v_ashrrev_i16" => r(((b32 as i16) >> (a32 & 15)) as u16 as u32),
        // Integer arithmetic.
        "v_add_u32" => r(a32.wrapping_add(b32)),
        "v_sub_u32" => r(a32.wrapping_sub(b32)),
        "v_subrev_u32" => r(b32.wrapping_sub(a32)),
        "v_add3_u32" => r(a32.wrapping_add(b32).wrapping_add(c32)),
        "v_xad_u32" => r((a32 ^ b32).wrapping_add(c32)),
        "v_add_i32" => r(a32.wrapping_add(b32)),
        "v_sub_i32" => r(a32.wrapping_sub(b32)),
        "v_add_u16" => r((a32 as u16).wrapping_add(b32 as u16) as u32),
        "v_sub_u16" => r((a32 as u16).wrapping_sub(b32 as u16) as u32),
        "v_add_i16" => r((a32 as u16).wrapping_add(b32 as u16) as u32),
        "v_sub_i16" => r((a32 as u16).wrapping_sub(b32 as u16) as u32),
        "v_subrev_u16" => r((b32 as u16).wrapping_sub(a32 as u16) as u32),
        "v_mul_lo_u16" => r((a32 as u16).wrapping_mul(b32 as u16) as u32),
        "v_add_co_u32" => {
            let s = a32 as u64 + b32 as u64;
            Some((s & 0xffff_ffff, s >> 32 != 0))
        }
        "v_addc_co_u32" => {
            let s = a32 as u64 + b32 as u64 + cin as u64;
            Some((s & 0xffff_ffff, s >> 32 != 0))
        }
        "v_sub_co_u32" => Some((a32.wrapping_sub(b32) as u64, b32 > a32)),
        "v_subrev_co_u32" => Some((b32.wrapping_sub(a32) as u64, a32 > b32)),
        "v_subb_co_u32" => {
            let d = a32 as i64 - b32 as i64 - cin as i64;
            Some((d as u32 as u64, d < 0))
        }
        "v_subbrev_co_u32" => {
            let d = b32 as i64 - a32 as i64 - cin as i64;
            Some((d as u32 as u64, d < 0))
        }
        "v_mul_lo_u32" | "v_mul_lo_i32" => r(a32.wrapping_mul(b32)),
        "v_mul_hi_u32" => r(((a32 as u64 * b32 as u64) >> 32) as u32),
        "v_mul_hi_i32" => r(((a32 as i32 as i64 * b32 as i32 as i64) >> 32) as u32),
        "v_mul_u32_u24" => r((a32 & 0xff_ffff).wrapping_mul(b32 & 0xff_ffff)),
        "v_mul_hi_u32_u24" => {
            r((((a32 & 0xff_ffff) as u64 * (b32 & 0xff_ffff) as u64) >> 32) as u32)
        }
        "v_mul_i32_i24" => r((sext(a & 0xff_ffff, 24) * sext(b & 0xff_ffff, 24)) as u32),
        "v_mul_hi_i32_i24" => r(((sext(a & 0xff_ffff, 24) * sext(b & 0xff_ffff, 24)) >> 32) as u32),
        "v_mad_u32_u24" => r((a32 & 0xff_ffff)
            .wrapping_mul(b32 & 0xff_ffff)
            .wrapping_add(c32)),
        "v_mad_i32_i24" => {
            r(((sext(a & 0xff_ffff, 24) * sext(b & 0xff_ffff, 24)) as u32).wrapping_add(c32))
        }
        "v_mad_u64_u32" => {
            let p = a32 as u128 * b32 as u128 + c as u128;
            Some((p as u64, p >> 64 != 0))
        }
        "v_mad_i64_i32" => {
            let p = a32 as i32 as i128 * b32 as i32 as i128 + c as i64 as i128;
            Some((p as u64, p > i64::MAX as i128 || p < i64::MIN as i128))
        }
        // gfx1250: no carry out; the sum wraps.
        "v_mad_nc_i64_i32" => r64((a32 as i32 as i64)
            .wrapping_mul(b32 as i32 as i64)
            .wrapping_add(c as i64) as u64),
        "v_min_u32" => r(a32.min(b32)),
        "v_max_u32" => r(a32.max(b32)),
        "v_min_i32" => r((a32 as i32).min(b32 as i32) as u32),
        "v_max_i32" => r((a32 as i32).max(b32 as i32) as u32),
        "v_min3_u32" => r(a32.min(b32).min(c32)),
        "v_max3_u32" => r(a32.max(b32).max(c32)),
        "v_min3_i32" => r((a32 as i32).min(b32 as i32).min(c32 as i32) as u32),
        "v_max3_i32" => r((a32 as i32).max(b32 as i32).max(c32 as i32) as u32),
        "v_med3_u32" => r(a32.max(b32).min(a32.min(b32).max(c32))),
        "v_med3_i32" => {
            let (x, y, z) = (a32 as i32, b32 as i32, c32 as i32);
            r(x.max(y).min(x.min(y).max(z)) as u32)
        }
        "v_cndmask_b32" => r(if cin { b32 } else { a32 }),
        "v_sad_u32" => r(a32.abs_diff(b32).wrapping_add(c32)),
        // Conversions.
        "v_cvt_f32_u32" => r(bf32(a32 as f32) as u32),
        "v_cvt_f32_i32" => r(bf32(a32 as i32 as f32) as u32),
        "v_cvt_u32_f32" => r(fa as u32),
        "v_cvt_i32_f32" => r(fa as i32 as u32),
        "v_cvt_f64_f32" => r64(bf64(fa as f64)),
        "v_cvt_f32_f64" => r(bf32(da as f32) as u32),
        "v_cvt_f64_i32" => r64((a32 as i32 as f64).to_bits()),
        "v_cvt_f64_u32" => r64((a32 as f64).to_bits()),
        "v_cvt_i32_f64" => r(da as i32 as u32),
        "v_cvt_u32_f64" => r(da as u32),
        "v_cvt_f16_f32" => r(bf16(fa) as u32),
        "v_cvt_f32_f16" => r(bf32(ha) as u32),
        "v_cvt_f16_u16" => r(f16::from_f32(a32 as u16 as f32).to_bits() as u32),
        "v_cvt_f16_i16" => r(f16::from_f32(a32 as i16 as f32).to_bits() as u32),
        "v_cvt_u16_f16" => r(ha as u16 as u32),
        "v_cvt_i16_f16" => r(ha as i16 as u16 as u32),
        // The 4-bit signed integer in bits 3:0, over 16 (the ISA's table:
        // 0, 0.0625, …, 0.4375, -0.5, …, -0.0625).
        "v_cvt_off_f32_i4" => r((sext(a & 0xf, 4) as f32 / 16.0).to_bits()),
        // gfx950: bf16 is the high half of an f32 (exact; NaN canonical).
        "v_cvt_f32_bf16" => Some((bf32(f32::from_bits((a32 & 0xffff) << 16)), false)),
        "v_cvt_f32_ubyte0" => r((a32 & 0xff) as f32 as u32)
            .map(|_| ((a32 & 0xff) as f32).to_bits() as u64)
            .map(|v| (v, false)),
        "v_cvt_f32_ubyte1" => {
            Some((((a32 >> 8) & 0xff) as f32).to_bits() as u64).map(|v| (v, false))
        }
        "v_cvt_f32_ubyte2" => {
            Some((((a32 >> 16) & 0xff) as f32).to_bits() as u64).map(|v| (v, false))
        }
        "v_cvt_f32_ubyte3" => Some(((a32 >> 24) as f32).to_bits() as u64).map(|v| (v, false)),
        "v_cvt_pkrtz_f16_f32" => {
            let lo = f16_rtz(fa);
            let hi = f16_rtz(fb);
            r(lo as u32 | (hi as u32) << 16)
        }
        "v_cvt_pk_bf16_f32" => r(bf16_rne(fa) as u32 | (bf16_rne(fb) as u32) << 16),
        "v_cvt_pk_f16_f32" => r(bf16(fa) as u32 | (bf16(fb) as u32) << 16),
        "v_pack_b32_f16" => r((a & 0xffff) as u32 | ((b & 0xffff) as u32) << 16),
        // f32.
        "v_add_f32" => r(bf32(fa + fb) as u32),
        "v_sub_f32" => r(bf32(fa - fb) as u32),
        "v_subrev_f32" => r(bf32(fb - fa) as u32),
        "v_mul_f32" => r(bf32(fa * fb) as u32),
        "v_mul_legacy_f32" => r(bf32(if fa == 0.0 || fb == 0.0 { 0.0 } else { fa * fb }) as u32),
        "v_fma_f32" | "v_fmac_f32" => r(bf32(fa.mul_add(fb, fc)) as u32),
        "v_mad_f32" | "v_mac_f32" => r(bf32(fa * fb + fc) as u32),
        // The K literal is an operand in LLVM's syntax: fmamk = a·K + b, fmaak = a·b + K.
        "v_fmamk_f32" | "v_fmaak_f32" => r(bf32(fa.mul_add(fb, fc)) as u32),
        "v_madmk_f32" | "v_madak_f32" => r(bf32(fa * fb + fc) as u32),
        "v_min_f32" => r(bf32(fa.min(fb)) as u32),
        "v_max_f32" => r(bf32(fa.max(fb)) as u32),
        // RDNA4 `_num_` (ISA pseudo-code): a NaN operand yields the other;
        // two NaNs yield src0 quieted; +0 > -0.
        "v_max_num_f32" => r(num_minmax32(a32, b32, true)),
        "v_min_num_f32" => r(num_minmax32(a32, b32, false)),
        "v_max3_num_f32" => r(num_minmax32(num_minmax32(a32, b32, true), c32, true)),
        "v_min3_num_f32" => r(num_minmax32(num_minmax32(a32, b32, false), c32, false)),
        // RDNA `v_dot2acc_f32_{f16,bf16}` (ISA pseudo-code): the two
        // products (exact in f32) added to the accumulator in turn, each
        // sum rounded to f32.
        "v_dot2acc_f32_f16" | "v_dot2acc_f32_bf16" => {
            let half = |v: u32, hi: bool| {
                let h = if hi { v >> 16 } else { v & 0xffff };
                if name == "v_dot2acc_f32_f16" {
                    f16b(h as u64)
                } else {
                    f32::from_bits(h << 16)
                }
            };
            let mut t = fc;
            t += half(a32, false) * half(b32, false);
            t += half(a32, true) * half(b32, true);
            r(bf32(t) as u32)
        }
        "v_min3_f32" => r(bf32(fa.min(fb).min(fc)) as u32),
        "v_max3_f32" => r(bf32(fa.max(fb).max(fc)) as u32),
        "v_med3_f32" => {
            if fa.is_nan() || fb.is_nan() || fc.is_nan() {
                r(bf32(fa.min(fb).min(fc)) as u32)
            } else {
                r(bf32(fa.max(fb).min(fa.min(fb).max(fc))) as u32)
            }
        }
        "v_rcp_f32" | "v_rcp_iflag_f32" => r(bf32(1.0 / fa) as u32),
        "v_sqrt_f32" => r(bf32(fa.sqrt()) as u32),
        "v_rsq_f32" => r(bf32(1.0 / fa.sqrt()) as u32),
        "v_exp_f32" => r(bf32(fa.exp2()) as u32),
        "v_log_f32" => r(bf32(fa.log2()) as u32),
        "v_sin_f32" => r(bf32((fa * std::f32::consts::TAU).sin()) as u32),
        "v_cos_f32" => r(bf32((fa * std::f32::consts::TAU).cos()) as u32),
        "v_floor_f32" => r(bf32(fa.floor()) as u32),
        "v_ceil_f32" => r(bf32(fa.ceil()) as u32),
        "v_trunc_f32" => r(bf32(fa.trunc()) as u32),
        "v_rndne_f32" => r(bf32(fa.round_ties_even()) as u32),
        "v_fract_f32" => r(bf32(if fa.is_infinite() {
            f32::NAN
        } else {
            (fa - fa.floor()).min(f32::from_bits(0x3f7fffff))
        }) as u32),
        "v_ldexp_f32" => r(bf32(ldexp32(fa, b32 as i32)) as u32),
        "v_frexp_mant_f32" => r(bf32(frexp32(fa).0) as u32),
        "v_frexp_exp_i32_f32" => r(frexp32(fa).1 as u32),
        "v_div_scale_f32" => {
            let (d, vcc) = div_scale32(fa, fb, fc);
            Some((bf32(d), vcc))
        }
        "v_div_fmas_f32" => {
            // The fma and the scaling round once: in f64 the fma of f32
            // values is exact but for the last bits, and the scaling exact.
            let d = (fa as f64).mul_add(fb as f64, fc as f64);
            let d = if cin {
                if fc.to_bits() >> 23 & 0xff >= 127 {
                    d * 2f64.powi(64)
                } else {
                    d * 2f64.powi(-64)
                }
            } else {
                d
            };
            r(bf32(d as f32) as u32)
        }
        "v_div_fixup_f32" => r(bf32(div_fixup32(fa, fb, fc)) as u32),
        // f64.
        "v_add_f64" => r64(bf64(da + db)),
        "v_mul_f64" => r64(bf64(da * db)),
        "v_fma_f64" | "v_fmac_f64" => r64(bf64(da.mul_add(db, dc))),
        "v_div_scale_f64" => {
            let (d, vcc) = div_scale64(da, db, dc);
            Some((bf64(d), vcc))
        }
        "v_div_fmas_f64" => {
            // Scaling by a power of two is exact unless the result leaves
            // the normal range: then the one rounding is that of the scaled
            // fma, computed from the exact product-sum in two steps.
            let d = if cin {
                let e = if dc.to_bits() >> 52 & 0x7ff >= 1023 {
                    128
                } else {
                    -128
                };
                fma_scaled64(da, db, dc, e)
            } else {
                da.mul_add(db, dc)
            };
            r64(bf64(d))
        }
        "v_div_fixup_f64" => r64(bf64(div_fixup64(da, db, dc))),
        "v_min_f64" => r64(bf64(da.min(db))),
        "v_max_f64" => r64(bf64(da.max(db))),
        "v_rcp_f64" => r64(bf64(1.0 / da)),
        "v_sqrt_f64" => r64(bf64(da.sqrt())),
        "v_rsq_f64" => r64(bf64(1.0 / da.sqrt())),
        "v_floor_f64" => r64(bf64(da.floor())),
        "v_ceil_f64" => r64(bf64(da.ceil())),
        "v_trunc_f64" => r64(bf64(da.trunc())),
        "v_rndne_f64" => r64(bf64(da.round_ties_even())),
        "v_ldexp_f64" => r64(bf64(ldexp64(da, b32 as i32))),
        // f16.
        "v_add_f16" => r(bf16(ha + hb) as u32),
        "v_sub_f16" => r(bf16(ha - hb) as u32),
        "v_subrev_f16" => r(bf16(hb - ha) as u32),
        "v_mul_f16" => r(bf16(ha * hb) as u32),
        "v_fma_f16" | "v_fmac_f16" => {
            r(bf16((ha as f64).mul_add(hb as f64, hc as f64) as f32) as u32)
        }
        "v_max_f16" => r(bf16(ha.max(hb)) as u32),
        "v_min_f16" => r(bf16(ha.min(hb)) as u32),
        "v_exp_f16" => r(bf16(ha.exp2()) as u32),
        "v_rcp_f16" => r(bf16(1.0 / ha) as u32),
        "v_sqrt_f16" => r(bf16(ha.sqrt()) as u32),
        "v_div_fixup_f16" => r(bf16(div_fixup32(ha, hb, hc)) as u32),
        _ => None,
    }
}

/// RDNA4's `v_max_num_f32`/`v_min_num_f32` on raw bits (the ISA guide's
/// pseudo-code): when both are NaN, src0 quieted; when one is, the other;
/// else the larger (smaller), with +0 above -0.
pub(crate) fn num_minmax32(a: u32, b: u32, max: bool) -> u32 {
    let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
    match (fa.is_nan(), fb.is_nan()) {
        (true, true) => a | 0x0040_0000,
        (true, false) => b,
        (false, true) => a,
        _ => {
            let zeros = fa == 0.0 && fb == 0.0;
            let (sa, sb) = (a >> 31 != 0, b >> 31 != 0);
            let a_wins = if max {
                fa > fb || zeros && !sa && sb
            } else {
                fa < fb || zeros && sa && !sb
            };
            if a_wins {
                a
            } else {
                b
            }
        }
    }
}

/// A source operand without its modifiers.
fn plain(s: &Src) -> Src {
    Src {
        op: s.op.clone(),
        neg: false,
        abs: false,
        sext: false,
    }
}

/// fp8/bf8 conversions (gfx940+): `x` are the sources (after SDWA
/// selection), `old` the destination's value (the packed encodings keep
/// the other half). A value the hardware's rule is not modelled for (an
/// encoding out of range, NaN or infinite) is refused.
fn fp8_convert(name: &str, x: [u64; 3], old: u64, op_sel: &[u8], ocp: bool) -> R<u64> {
    use crate::fp8::{decode, encode, Fp8};
    let bf8 = name.contains("bf8");
    let fmt = Fp8::of(bf8, ocp);
    let sel = |i: usize| op_sel.get(i).copied().unwrap_or(0);
    if name.starts_with("v_cvt_pk_fp8") || name.starts_with("v_cvt_pk_bf8") {
        if sel(0) != 0 || sel(1) != 0 {
            return unsup("op_sel on a source of an fp8 encoding");
        }
        let mut pair = 0u64;
        for (k, &v) in x[..2].iter().enumerate() {
            let f = f32b(v);
            let Some(b) = encode(fmt, f) else {
                return unsup(format!(
                    "{f} to {fmt:?}: the hardware's result for NaN, infinity or a value beyond the format's range is not modelled"
                ));
            };
            pair |= (b as u64) << (8 * k);
        }
        return Ok(if sel(2) != 0 {
            (old & 0xffff) | pair << 16
        } else {
            (old & 0xffff_0000) | pair
        });
    }
    if op_sel.iter().any(|&b| b != 0) {
        return unsup("op_sel on an fp8 decoding (VOP3 byte/word select)");
    }
    let val = |b: u64| bf32(decode(fmt, b as u8) as f32);
    Ok(if name.starts_with("v_cvt_pk_f32") {
        val(x[0] & 0xff) | val(x[0] >> 8 & 0xff) << 32
    } else {
        val(x[0] & 0xff)
    })
}

/// `v_bitop3`: each result bit is bit `(s0 << 2) | (s1 << 1) | s2` of the
/// truth table `t` (LLVM's `BitOp3_Op`: src0, src1, src2 are the tables
/// 0xf0, 0xcc, 0xaa).
fn bitop3_bits(t: u8, x: [u64; 3]) -> u64 {
    let mut r = 0u64;
    for bit in 0..32 {
        let i = (x[0] >> bit & 1) << 2 | (x[1] >> bit & 1) << 1 | (x[2] >> bit & 1);
        r |= (((t >> i) & 1) as u64) << bit;
    }
    r
}

pub(crate) fn f16_rtz(x: f32) -> u16 {
    let h = f16::from_f32(x);
    if x.is_nan() || x.is_infinite() {
        return h.to_bits();
    }
    let back = h.to_f32();
    if back.abs() > x.abs() {
        // Rounded away from zero: step one toward zero.
        let b = h.to_bits();
        if b & 0x7fff == 0x7c00 {
            return (b & 0x8000) | 0x7bff;
        }
        b - 1
    } else {
        h.to_bits()
    }
}

fn bf16_rne(x: f32) -> u16 {
    half::bf16::from_f32(x).to_bits()
}

pub(crate) fn ldexp32(x: f32, e: i32) -> f32 {
    (x as f64 * 2f64.powi(e.clamp(-400, 400))) as f32
}
pub(crate) fn ldexp64(x: f64, e: i32) -> f64 {
    let mut x = x;
    let mut e = e.clamp(-2200, 2200);
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e)
}
pub(crate) fn frexp32(x: f32) -> (f32, i32) {
    if x == 0.0 || x.is_nan() || x.is_infinite() {
        return (x, 0);
    }
    let d = x as f64;
    let e = d.abs().log2().floor() as i32 + 1;
    let mut m = d / 2f64.powi(e);
    let mut e = e;
    if m.abs() >= 1.0 {
        m /= 2.0;
        e += 1;
    }
    if m.abs() < 0.5 {
        m *= 2.0;
        e -= 1;
    }
    (m as f32, e)
}
fn exponent32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xff) as i32
}

/// V_DIV_SCALE_F32 (CDNA3 ISA pseudocode): `s0` is the value to scale
/// (the numerator or the denominator), `s1` the denominator, `s2` the numerator.
/// The pseudocode tests the reciprocal `1.0 / 64'F(S1.f32)` for an f64
/// denormal, which the reciprocal of an f32 never is: those two cases do not
/// apply (testing it in f32 scaled the denominator of `x / FLT_MAX` to
/// infinity).
pub(crate) fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    let denorm = |x: f32| x != 0.0 && x.is_subnormal();
    let mut vcc = false;
    let mut d = s0;
    let recip_denorm = {
        let r = 1.0 / s1 as f64;
        r != 0.0 && r.is_subnormal()
    };
    if s2 == 0.0 || s1 == 0.0 {
        d = f32::NAN;
    } else if exponent32(s2) - exponent32(s1) >= 96 {
        vcc = true;
        if s0 == s1 {
            d = ldexp32(s0, 64);
        }
    } else if denorm(s1) {
        d = ldexp32(s0, 64);
    } else if recip_denorm && denorm(s2 / s1) {
        vcc = true;
        if s0 == s1 {
            d = ldexp32(s0, 64);
        }
    } else if recip_denorm {
        d = ldexp32(s0, -64);
    } else if denorm(s2 / s1) {
        vcc = true;
        if s0 == s2 {
            d = ldexp32(s0, 64);
        }
    } else if exponent32(s2) <= 23 {
        d = ldexp32(s0, 64);
    }
    (d, vcc)
}

fn exponent64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

/// V_DIV_SCALE_F64 (CDNA3 ISA pseudocode): as [`div_scale32`] with the f64
/// limits (exponent difference 768, scale 2^128, tiny numerator below
/// exponent 53). The case of a denormal reciprocal `1.0 / S1.f64` together
/// with a denormal quotient is not applied: it would scale the denominator
/// of `x / DBL_MAX` to infinity, where LLVM's sequence is exact (tinygrad's
/// AMD emulator drops it too, among its pseudocode fixes for V_DIV_SCALE).
/// Such a division takes the next case: both operands scaled by 2^-128.
pub(crate) fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    let denorm = |x: f64| x != 0.0 && x.is_subnormal();
    let mut vcc = false;
    let mut d = s0;
    if s2 == 0.0 || s1 == 0.0 {
        d = f64::NAN;
    } else if exponent64(s2) - exponent64(s1) >= 768 {
        vcc = true;
        if s0 == s1 {
            d = ldexp64(s0, 128);
        }
    } else if denorm(s1) {
        d = ldexp64(s0, 128);
    } else if denorm(1.0 / s1) {
        d = ldexp64(s0, -128);
    } else if denorm(s2 / s1) {
        vcc = true;
        if s0 == s2 {
            d = ldexp64(s0, 128);
        }
    } else if exponent64(s2) <= 53 {
        d = ldexp64(s0, 128);
    }
    (d, vcc)
}

/// `fma(a, b, c) × 2^e` rounded once to f64. Exact when the scaled result
/// is normal; when it is a denormal, the fma is rounded to 53 bits first
/// (so a result exactly halfway after that rounding may differ in the
/// last place of the denormal; LLVM's division sequence never lands there,
/// its final fma residual is far from a tie).
pub(crate) fn fma_scaled64(a: f64, b: f64, c: f64, e: i32) -> f64 {
    let d = a.mul_add(b, c);
    let scaled = ldexp64(d, e);
    if scaled == 0.0 || !scaled.is_subnormal() {
        return scaled;
    }
    // Round the exact a*b+c at the denormal's precision: the error of the
    // first rounding (d - (a*b+c)) decides a tie.
    let err = {
        // a*b exactly as p + q, then (p + c) - d + q with TwoSum.
        let p = a * b;
        let q = a.mul_add(b, -p);
        let s = p + c;
        let bb = s - p;
        let t = (p - (s - bb)) + (c - bb);
        (s - d) + t + q
    };
    let ulp = 2f64.powi(-1074 - e);
    let k = (d / ulp).trunc();
    let rem = d - k * ulp;
    let half = ulp / 2.0;
    let pick = if rem.abs() + err * rem.signum() > half
        || (rem.abs() == half && err == 0.0 && (k as i64) & 1 != 0)
    {
        k + rem.signum()
    } else {
        k
    };
    ldexp64(pick * ulp, e)
}

/// V_DIV_FIXUP_F64: as [`div_fixup32`].
pub(crate) fn div_fixup64(s0: f64, s1: f64, s2: f64) -> f64 {
    let neg = (s1.to_bits() ^ s2.to_bits()) >> 63 != 0;
    let sign = |x: f64| if neg { -x } else { x };
    if s2.is_nan() || s1.is_nan() || s1 == 0.0 && s2 == 0.0 || s1.is_infinite() && s2.is_infinite()
    {
        f64::NAN
    } else if s1 == 0.0 || s2.is_infinite() {
        sign(f64::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 {
        sign(0.0)
    } else if s0.is_nan() {
        sign(f64::INFINITY)
    } else {
        sign(s0.abs())
    }
}

/// V_DIV_FIXUP_F32: `s0` the quotient, `s1` the denominator, `s2` the numerator.
pub(crate) fn div_fixup32(s0: f32, s1: f32, s2: f32) -> f32 {
    let neg = (s1.to_bits() ^ s2.to_bits()) >> 31 != 0;
    let sign = |x: f32| if neg { -x } else { x };
    if s2.is_nan() || s1.is_nan() || s1 == 0.0 && s2 == 0.0 || s1.is_infinite() && s2.is_infinite()
    {
        f32::NAN
    } else if s1 == 0.0 || s2.is_infinite() {
        sign(f32::INFINITY)
    } else if s1.is_infinite() || s2 == 0.0 {
        sign(0.0)
    } else if s0.is_nan() {
        sign(f32::INFINITY)
    } else {
        sign(s0.abs())
    }
}

pub(crate) fn class_bits32(x: f64, is_snan: bool) -> u32 {
    if x.is_nan() {
        return if is_snan { 1 } else { 2 };
    }
    let neg = x.is_sign_negative();
    let k = if x.is_infinite() {
        if neg {
            2
        } else {
            9
        }
    } else if x == 0.0 {
        if neg {
            5
        } else {
            6
        }
    } else if x.is_subnormal() || (x.abs() < f32::MIN_POSITIVE as f64 && x.abs() > 0.0) {
        if neg {
            4
        } else {
            7
        }
    } else if neg {
        3
    } else {
        8
    };
    1 << k
}

fn compare(op: &str, ty: &str, a: u64, b: u64) -> Option<bool> {
    if op == "class" {
        let (x, snan) = match ty {
            "f32" => (f32b(a) as f64, f32b(a).is_nan() && a & 0x0040_0000 == 0),
            "f64" => (f64b(a), f64b(a).is_nan() && a & 0x0008_0000_0000_0000 == 0),
            "f16" => (f16b(a) as f64, f16b(a).is_nan() && a & 0x200 == 0),
            _ => return None,
        };
        let mut bits = class_bits32(x, snan);
        if ty == "f16" && x != 0.0 && x.abs() < 6.103515625e-5 && !x.is_nan() {
            bits = if x < 0.0 { 1 << 4 } else { 1 << 7 };
        }
        if ty == "f64" && x.is_subnormal() {
            bits = if x < 0.0 { 1 << 4 } else { 1 << 7 };
        } else if ty == "f64" && x.is_normal() {
            bits = if x < 0.0 { 1 << 3 } else { 1 << 8 };
        }
        return Some(bits & (b as u32) != 0);
    }
    if ty.starts_with('f') {
        let (x, y) = match ty {
            "f32" => (f32b(a) as f64, f32b(b) as f64),
            "f64" => (f64b(a), f64b(b)),
            "f16" => (f16b(a) as f64, f16b(b) as f64),
            _ => return None,
        };
        use std::cmp::Ordering::{Equal, Greater, Less};
        let o = x.partial_cmp(&y);
        return Some(match op {
            "f" => false,
            "lt" => o == Some(Less),
            "eq" => o == Some(Equal),
            "le" => matches!(o, Some(Less | Equal)),
            "gt" => o == Some(Greater),
            "lg" => matches!(o, Some(Less | Greater)),
            "ge" => matches!(o, Some(Greater | Equal)),
            "o" => o.is_some(),
            "u" => o.is_none(),
            "nge" => matches!(o, None | Some(Less)),
            "nlg" => matches!(o, None | Some(Equal)),
            "ngt" => matches!(o, None | Some(Less | Equal)),
            "nle" => matches!(o, None | Some(Greater)),
            "neq" => o != Some(Equal),
            "nlt" => matches!(o, None | Some(Greater | Equal)),
            "tru" | "t" => true,
            _ => return None,
        });
    }
    let (x, y): (i128, i128) = match ty {
        "i32" => (a as u32 as i32 as i128, b as u32 as i32 as i128),
        "u32" => (a as u32 as i128, b as u32 as i128),
        "i64" => (a as i64 as i128, b as i64 as i128),
        "u64" => (a as i128, b as i128),
        "i16" => (a as u16 as i16 as i128, b as u16 as i16 as i128),
        "u16" => (a as u16 as i128, b as u16 as i128),
        _ => return None,
    };
    Some(match op {
        "f" => false,
        "lt" => x < y,
        "eq" => x == y,
        "le" => x <= y,
        "gt" => x > y,
        "ne" | "lg" => x != y,
        "ge" => x >= y,
        "t" | "tru" => true,
        _ => return None,
    })
}

impl Wave {
    /// A wave with `vgprs` vector and `agprs` accumulation registers, all
    /// zero: a file of `vgprs + agprs` registers, the AGPRs from `vgprs` on
    /// ([`Wave::unified`]`(vgprs + agprs, vgprs)`).
    pub fn new(vgprs: usize, agprs: usize) -> Self {
        Self::unified(vgprs + agprs, vgprs)
    }

    /// A wave with a unified file of `registers` VGPRs and AGPRs, all zero,
    /// the AGPRs from register `accum_offset` on: `a[i]` is
    /// `v[accum_offset + i]` (gfx90a, gfx942, gfx950: the descriptor's
    /// VGPR count and `ACCUM_OFFSET`).
    pub fn unified(registers: usize, accum_offset: usize) -> Self {
        Wave {
            s: [0; 128],
            scc: false,
            v: vec![[0; LANES]; registers],
            accum: accum_offset,
            pc: 0,
            state: WaveState::Running,
            executed: 0,
            last_branch: None,
            gpr_idx: false,
            vskip: false,
            private: Vec::new(),
            private_size: 0,
            approx: Default::default(),
            wave_size: LANES as u32,
            numbering: crate::decode::Numbering::GFX9,
            hwregs: HwRegs::default(),
            sync: None,
        }
    }

    /// The lanes that exist: all 64 bits, or the low 32 in wave32.
    pub fn lane_bits(&self) -> u64 {
        if self.wave_size == 32 {
            0xffff_ffff
        } else {
            u64::MAX
        }
    }
    /// `m0`'s value (SGPR 124 on gfx9, 125 on gfx11+).
    pub fn m0(&self) -> u32 {
        self.s[self.numbering.m0 as usize]
    }
    /// Whether the wave runs gfx10+ (RDNA) code: the generations with `null`.
    pub(crate) fn rdna(&self) -> bool {
        self.numbering.null.is_some()
    }
    /// Whether SGPR `i` is `null` (reads 0, writes dropped).
    fn is_null(&self, i: usize) -> bool {
        self.numbering.null.is_some_and(|n| n as usize == i)
    }
    /// A lane-mask operand (a compare's result, a carry, `v_cndmask`'s
    /// mask): an SGPR pair in wave64, one SGPR in wave32 (its bits past 31
    /// are 0).
    pub(crate) fn read_mask(&self, src: &Src, ctx: &Ctx) -> R<u64> {
        if self.wave_size == 32 {
            Ok(self.sread(src, ctx)? as u64)
        } else {
            self.sread64(src, ctx)
        }
    }
    /// Write a lane mask to `dst`: an SGPR pair in wave64, one SGPR in wave32.
    pub(crate) fn write_mask(&mut self, dst: &Src, bits: u64) -> R<()> {
        if self.wave_size == 32 {
            self.swrite(dst, bits as u32)
        } else {
            self.swrite64(dst, bits)
        }
    }
    /// Set VCC to a lane mask (`vcc_lo` alone in wave32).
    pub(crate) fn set_vcc(&mut self, bits: u64) {
        self.s[VCC as usize] = bits as u32;
        if self.wave_size != 32 {
            self.s[VCC as usize + 1] = (bits >> 32) as u32;
        }
    }

    /// Give each lane `size` bytes of private memory, zeroed.
    pub fn set_private(&mut self, size: u32) {
        self.private_size = size;
        self.private = vec![0; size as usize * LANES];
    }

    fn private_range(&self, lane: usize, off: u32, len: usize) -> R<usize> {
        if (off as u64) + len as u64 > self.private_size as u64 {
            return Err(Stop::Fault(
                Some(lane as u32),
                format!(
                    "{len}-byte private (scratch) access at offset {off:#x} is outside the lane's {}-byte private segment",
                    self.private_size
                ),
            ));
        }
        Ok(lane * self.private_size as usize + off as usize)
    }

    /// Read lane `lane`'s private bytes at `off`.
    pub(crate) fn private_read(&self, lane: usize, off: u32, buf: &mut [u8]) -> R<()> {
        let at = self.private_range(lane, off, buf.len())?;
        buf.copy_from_slice(&self.private[at..at + buf.len()]);
        Ok(())
    }

    /// Write lane `lane`'s private bytes at `off`.
    pub(crate) fn private_write(&mut self, lane: usize, off: u32, bytes: &[u8]) -> R<()> {
        let at = self.private_range(lane, off, bytes.len())?;
        self.private[at..at + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    /// SGPRs `index .. index + n` (hardware numbering), or a fault naming
    /// the register past the file's 128.
    fn sregs(&self, index: u16, n: usize) -> R<&[u32]> {
        let i = index as usize;
        self.s.get(i..i + n).ok_or_else(|| sgpr_fault(i, n))
    }
    /// Write SGPR `i`, or a fault past the file.
    fn sset(&mut self, i: usize, v: u32) -> R<()> {
        let r = self.s.get_mut(i).ok_or_else(|| sgpr_fault(i, 1))?;
        if self.numbering.null.is_none_or(|n| n as usize != i) {
            *r = v;
        }
        Ok(())
    }

    /// The exec mask (`exec_lo` alone in wave32).
    pub fn exec(&self) -> u64 {
        (self.s[EXEC as usize] as u64 | (self.s[EXEC as usize + 1] as u64) << 32) & self.lane_bits()
    }
    /// Set the exec mask (`exec_lo` alone in wave32: `exec_hi` is kept).
    pub fn set_exec(&mut self, m: u64) {
        self.s[EXEC as usize] = m as u32;
        if self.wave_size != 32 {
            self.s[EXEC as usize + 1] = (m >> 32) as u32;
        }
    }
    pub(crate) fn vcc(&self) -> u64 {
        (self.s[VCC as usize] as u64 | (self.s[VCC as usize + 1] as u64) << 32) & self.lane_bits()
    }

    fn aperture(&self, name: &str, ctx: &Ctx) -> R<u32> {
        match name {
            "src_shared_base" => Ok(ctx.shared_base_hi),
            "src_private_base" => Ok(ctx.private_base_hi),
            "src_shared_limit" => Ok(ctx.shared_base_hi | 0xffff),
            "src_private_limit" => Ok(ctx.private_base_hi | 0xffff),
            "src_execz" => Ok((self.exec() == 0) as u32),
            "src_vccz" => Ok((self.vcc() == 0) as u32),
            _ => unsup(format!("operand {name}")),
        }
    }

    /// A scalar operand as 32 bits.
    fn sread(&self, src: &Src, ctx: &Ctx) -> R<u32> {
        let v = match &src.op {
            Operand::Reg {
                file: RegFile::S,
                index,
                ..
            } => self.sregs(*index, 1)?[0],
            Operand::Int(i) => *i as u32,
            Operand::Float(f) => (*f as f32).to_bits(),
            Operand::Scc => self.scc as u32,
            Operand::Aperture(n) => self.aperture(n, ctx)?,
            other => return unsup(format!("scalar operand {other:?}")),
        };
        Ok(v)
    }
    /// A scalar operand as 64 bits.
    fn sread64(&self, src: &Src, ctx: &Ctx) -> R<u64> {
        Ok(match &src.op {
            Operand::Reg {
                file: RegFile::S,
                index,
                count,
            } => {
                if *count < 2 || self.is_null(*index as usize) {
                    self.sregs(*index, 1)?[0] as u64
                } else {
                    let r = self.sregs(*index, 2)?;
                    r[0] as u64 | (r[1] as u64) << 32
                }
            }
            Operand::Int(i) => *i as u64,
            Operand::Float(f) => f.to_bits(),
            Operand::Aperture(n) => (self.aperture(n, ctx)? as u64) << 32,
            _ => self.sread(src, ctx)? as u64,
        })
    }
    fn swrite(&mut self, dst: &Src, v: u32) -> R<()> {
        match dst.op {
            Operand::Reg {
                file: RegFile::S,
                index,
                ..
            } => self.sset(index as usize, v),
            _ => unsup(format!("scalar destination {:?}", dst.op)),
        }
    }
    fn swrite64(&mut self, dst: &Src, v: u64) -> R<()> {
        match dst.op {
            Operand::Reg {
                file: RegFile::S,
                index,
                ..
            } => {
                let i = index as usize;
                if self.is_null(i) {
                    // A 64-bit `null` destination drops both halves.
                    return Ok(());
                }
                self.sregs(index, 2)?;
                self.s[i] = v as u32;
                self.s[i + 1] = (v >> 32) as u32;
                Ok(())
            }
            _ => unsup(format!("scalar destination {:?}", dst.op)),
        }
    }

    /// The row of [`Wave::v`] register `i` of `file` is: `vN` is row `N`,
    /// `aN` row `accum + N` (the unified file).
    #[inline]
    fn vrow_of(&self, file: RegFile, i: usize) -> usize {
        if file == RegFile::A {
            self.accum + i
        } else {
            i
        }
    }
    /// The fault of register `i` of `file` past the file.
    #[cold]
    fn vreg_fault(&self, file: RegFile, i: usize) -> Stop {
        let (p, n) = if file == RegFile::A {
            ("a", self.agprs())
        } else {
            ("v", self.v.len())
        };
        Stop::Fault(
            None,
            format!("{p}{i} is beyond the {n} registers the kernel descriptor allocates"),
        )
    }
    /// The AGPRs the wave has: the rows of the unified file past `accum`.
    pub fn agprs(&self) -> usize {
        self.v.len().saturating_sub(self.accum)
    }
    /// Register `i` of `file` (`V` or `A`: the unified file), or a fault
    /// past it.
    #[inline]
    pub(crate) fn vreg(&self, file: RegFile, i: usize) -> R<&[u32; LANES]> {
        match self.v.get(self.vrow_of(file, i)) {
            Some(r) => Ok(r),
            None => Err(self.vreg_fault(file, i)),
        }
    }
    /// [`Wave::vreg`] to write.
    #[inline]
    pub(crate) fn vreg_mut(&mut self, file: RegFile, i: usize) -> R<&mut [u32; LANES]> {
        let row = self.vrow_of(file, i);
        if row < self.v.len() {
            Ok(&mut self.v[row])
        } else {
            Err(self.vreg_fault(file, i))
        }
    }

    /// A vector-ALU source of `lane` as `ty`, with abs/neg applied to floats.
    fn vread(&self, src: &Src, lane: usize, ty: Ty, ctx: &Ctx) -> R<u64> {
        let raw = match &src.op {
            Operand::Reg {
                file: RegFile::S,
                index,
                ..
            } => {
                if ty.is64() && !self.is_null(*index as usize) {
                    let r = self.sregs(*index, 2)?;
                    r[0] as u64 | (r[1] as u64) << 32
                } else {
                    self.sregs(*index, 1)?[0] as u64
                }
            }
            Operand::Reg { file, index, .. } => {
                let i = *index as usize;
                if ty.is64() {
                    self.vreg(*file, i)?[lane] as u64
                        | (self.vreg(*file, i + 1)?[lane] as u64) << 32
                } else {
                    self.vreg(*file, i)?[lane] as u64
                }
            }
            Operand::Int(i) => {
                let inline = (-16..=64).contains(i);
                match ty {
                    Ty::F64 if !inline && (*i as u64) <= 0xffff_ffff => (*i as u64) << 32,
                    Ty::B64 | Ty::F64 => *i as u64,
                    _ => *i as u32 as u64,
                }
            }
            Operand::Float(f) => match ty {
                Ty::F64 | Ty::B64 => f.to_bits(),
                Ty::F16 | Ty::B16 => f16::from_f64(*f).to_bits() as u64,
                _ => (*f as f32).to_bits() as u64,
            },
            Operand::Scc => self.scc as u64,
            Operand::Aperture(n) => self.aperture(n, ctx)? as u64,
            other => return unsup(format!("vector operand {other:?}")),
        };
        Ok(float_mods(raw, ty, src.abs, src.neg))
    }

    fn vwrite(&mut self, dst: &Src, lane: usize, ty: Ty, v: u64) -> R<()> {
        match dst.op {
            Operand::Reg {
                file: RegFile::S, ..
            } => unsup("scalar destination of a vector operation"),
            Operand::Reg { file, index, .. } => {
                let i = index as usize;
                self.vreg_mut(file, i)?[lane] = v as u32;
                if ty.is64() {
                    self.vreg_mut(file, i + 1)?[lane] = (v >> 32) as u32;
                }
                Ok(())
            }
            _ => unsup(format!("vector destination {:?}", dst.op)),
        }
    }
}

/// The fault of an access to SGPRs `i .. i + n` past the register file.
fn sgpr_fault(i: usize, n: usize) -> Stop {
    Stop::Fault(
        None,
        format!(
            "s[{i}:{}] is beyond the 128 scalar registers (s0-s101, flat_scratch, xnack_mask, vcc, ttmp0-15, m0, exec: 0-127 in hardware numbering)",
            i + n - 1
        ),
    )
}

fn float_mods(raw: u64, ty: Ty, abs: bool, neg: bool) -> u64 {
    let sign = match ty {
        Ty::F16 => 1u64 << 15,
        Ty::F32 => 1 << 31,
        Ty::F64 => 1 << 63,
        _ => {
            return if neg {
                // Integer negation (VOP3 neg on an integer source is not
                // defined; LLVM never emits it).
                raw
            } else {
                raw
            };
        }
    };
    let mut v = raw;
    if abs {
        v &= !sign;
    }
    if neg {
        v ^= sign;
    }
    v
}

/// The source lane DPP control `ctrl` reads for `lane`, or `None` (out of range).
pub(crate) fn dpp_source(ctrl: u32, lane: usize) -> Option<usize> {
    let row = lane / 16 * 16;
    let l = lane % 16;
    match ctrl {
        0x000..=0x0ff => Some(lane / 4 * 4 + ((ctrl >> (2 * (lane % 4))) & 3) as usize),
        0x101..=0x10f => {
            let n = (ctrl & 15) as usize;
            (l + n < 16).then_some(lane + n)
        }
        0x111..=0x11f => {
            let n = (ctrl & 15) as usize;
            (l >= n).then(|| lane - n)
        }
        0x121..=0x12f => {
            let n = (ctrl & 15) as usize;
            Some(row + (l + 16 - n) % 16)
        }
        0x130 => (lane < 63).then_some(lane + 1),
        0x134 => Some((lane + 1) % 64),
        0x138 => (lane > 0).then(|| lane - 1),
        0x13c => Some((lane + 63) % 64),
        0x140 => Some(row + 15 - l),
        0x141 => Some(lane / 8 * 8 + 7 - lane % 8),
        0x142 => (lane >= 16).then(|| row - 1),
        0x143 => (lane >= 32).then_some(31),
        // gfx90a+ `row_newbcast:N` (LLVM SIDefines.h DppCtrl
        // ROW_NEWBCAST_FIRST 0x150; AMDGPU gfx90a `dpp_ctrl` docs:
        // "broadcast a thread within a row to the whole row").
        0x150..=0x15f => Some(row + (ctrl & 15) as usize),
        // gfx10+ `row_xmask:N`: lane `l ^ N` of the row (LLVM SIDefines.h
        // DppCtrl ROW_XMASK_FIRST 0x160).
        0x160..=0x16f => Some(row + (l ^ (ctrl & 15) as usize)),
        _ => None,
    }
}

/// Run one instruction of `wave`.
pub fn step(wave: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let m = ins.mnemonic.as_str();
    wave.executed += 1;
    let next = wave.pc + 1;
    wave.pc = next;
    if let Some(y) = ins.dual.as_deref() {
        // A VOPD pair is vector ALU work: VSKIP suppresses it.
        return if wave.vskip {
            Ok(())
        } else {
            vopd(wave, ins, y, ctx)
        };
    }
    debug_assert_eq!(
        ins.route,
        Route::of(m),
        "`{m}`: routed as another mnemonic (use Instruction::set_mnemonic)"
    );
    let unit = ins.route.unit;
    match unit {
        Unit::SmemRead => {
            memory_modifiers(ins)?;
            return smem(wave, ins, ctx);
        }
        Unit::SmemWrite => {
            memory_modifiers(ins)?;
            return smem_write(wave, ins, ctx);
        }
        Unit::Salu => return salu(wave, ins, ctx),
        _ => {}
    }
    // VSKIP: no VOP*, MUBUF/MTBUF, DS or FLAT is issued.
    if wave.vskip && unit.is_vector() {
        return Ok(());
    }
    if wave.gpr_idx && unit.is_vector_alu() {
        let indexed = gpr_indexed(wave, ins)?;
        return step_v(wave, &indexed, ctx, unit);
    }
    step_v(wave, ins, ctx, unit)
}

/// The VOP1/VOP2 operation a VOPD half (`v_dual_*`) performs, as the
/// executor names it: the half's name without `dual_`, except the two
/// halves whose VOP2 instruction the executor knows by its CDNA name.
/// The X/Y opcode tables and each half's pseudo-code are in AMD's RDNA3
/// and RDNA4 ISA guides (VOPD, "Dual Issue VALU"); every half is one of
/// the 17 of `isa::rdna3`/`isa::rdna4` with [`crate::isa::Format::Vopd`].
pub(crate) fn vopd_operation(half: &str) -> Option<&'static str> {
    Some(match half.strip_prefix("v_dual_")? {
        "fmac_f32" => "v_fmac_f32",
        "fmaak_f32" => "v_fmaak_f32",
        "fmamk_f32" => "v_fmamk_f32",
        "mul_f32" => "v_mul_f32",
        "add_f32" => "v_add_f32",
        "sub_f32" => "v_sub_f32",
        "subrev_f32" => "v_subrev_f32",
        // `0 * x = 0` (DX9 rules): CDNA's `v_mul_legacy_f32`.
        "mul_dx9_zero_f32" => "v_mul_legacy_f32",
        "mov_b32" => "v_mov_b32",
        "cndmask_b32" => "v_cndmask_b32",
        // RDNA3's names: IEEE maxNum/minNum as the executor's `v_max_f32`.
        "max_f32" => "v_max_f32",
        "min_f32" => "v_min_f32",
        // RDNA4's: maximumNumber/minimumNumber with its NaN and ±0 rules.
        "max_num_f32" => "v_max_num_f32",
        "min_num_f32" => "v_min_num_f32",
        "dot2acc_f32_f16" => "v_dot2acc_f32_f16",
        "dot2acc_f32_bf16" => "v_dot2acc_f32_bf16",
        "add_nc_u32" => "v_add_u32",
        // gfx1250's VOPD3 (llvm-mc-22 assembles it for gfx1250, not
        // gfx1100): `src0 - src1`, no carry, as CDNA's `v_sub_u32`.
        "sub_nc_u32" => "v_sub_u32",
        "lshlrev_b32" => "v_lshlrev_b32",
        // gfx1250's VOPD3 (llvm-mc-22 assembles it for gfx1250).
        "lshrrev_b32" => "v_lshrrev_b32",
        "ashrrev_i32" => "v_ashrrev_i32",
        "and_b32" => "v_and_b32",
        _ => return None,
    })
}

/// One half of a VOPD pair as the VOP2/VOP1 instruction it performs
/// (`_e32`), with `v_dual_cndmask_b32`'s implicit lane mask made explicit:
/// VCC_LO, which LLVM does not print (the pair is wave32 only).
fn vopd_half(h: &Instruction) -> R<Instruction> {
    // gfx1250's VOPD3 `v_dual_bitop2_b32 D, S0, S1 bitop3:T`: the
    // two-input truth table as `v_bitop3_b32` with S2 = 0 (index
    // `S0·4 + S1·2 + S2`; LLVM prints AND as `bitop3:0x40`, index 6).
    // (Matched by its suffix: the half is run through the pair, not routed
    // by its own name, which no table has.)
    if h.mnemonic.strip_prefix("v_dual_") == Some("bitop2_b32") {
        let mut out = h.clone();
        out.set_mnemonic("v_bitop3_b32");
        out.dual = None;
        out.ops.push(Src {
            op: Operand::Int(0),
            neg: false,
            abs: false,
            sext: false,
        });
        return Ok(out);
    }
    let Some(op) = vopd_operation(&h.mnemonic) else {
        return unsup(format!("VOPD half `{}`", h.mnemonic));
    };
    let mut out = h.clone();
    out.set_mnemonic(&format!("{op}_e32"));
    out.dual = None;
    if op == "v_cndmask_b32" {
        out.ops.push(Src {
            op: Operand::Reg {
                file: RegFile::S,
                index: VCC,
                count: 1,
            },
            neg: false,
            abs: false,
            sext: false,
        });
    }
    Ok(out)
}

/// A VOPD pair (RDNA3 ISA guide, section 7.6 "Dual Issue VALU"): the two
/// operations execute at the same time, so when one reads a VGPR the
/// other writes, the read gets the old value. X runs first; when Y reads
/// X's destination, Y runs with that register's old value put back, then
/// X's result is restored. The guide requires the two destinations to
/// differ (one even, one odd): a pair writing one register twice is
/// refused. The guide also says the encoding is illegal in wave64 (the
/// hardware skips it): a pair in a wave64 wave is refused.
fn vopd(w: &mut Wave, x: &Instruction, y: &Instruction, ctx: &mut Ctx) -> R<()> {
    if w.wave_size != 32 {
        return unsup(
            "a VOPD pair in a wave64 wave: the RDNA3 ISA guide (7.6) makes the encoding legal in wave32 only (the hardware skips it in wave64)",
        );
    }
    let (xh, yh, xd) = vopd_halves(x, y)?;
    let before = *w.vreg(RegFile::V, xd)?;
    valu_ins(w, &xh, ctx)?;
    if reads_vgpr(&yh, xd) {
        let after = std::mem::replace(w.vreg_mut(RegFile::V, xd)?, before);
        valu_ins(w, &yh, ctx)?;
        *w.vreg_mut(RegFile::V, xd)? = after;
        Ok(())
    } else {
        valu_ins(w, &yh, ctx)
    }
}

/// The two halves of the VOPD pair `x :: y` as the VOP1/VOP2
/// instructions they perform ([`vopd_half`]), and X's destination VGPR;
/// refused when a half is unknown, a destination is not one VGPR, or both
/// write the same register.
pub(crate) fn vopd_halves(
    x: &Instruction,
    y: &Instruction,
) -> R<(Instruction, Instruction, usize)> {
    let (xh, yh) = (vopd_half(x)?, vopd_half(y)?);
    let dst = |h: &Instruction| match h.ops.first().map(|s| &s.op) {
        Some(Operand::Reg {
            file: RegFile::V,
            index,
            count: 1,
        }) => Ok(*index as usize),
        _ => unsup(format!(
            "VOPD half `{}`: its destination is not one VGPR",
            h.text
        )),
    };
    let (xd, yd) = (dst(&xh)?, dst(&yh)?);
    if xd == yd {
        return unsup(format!(
            "both halves of the VOPD pair write v{xd}; the ISA requires different destinations (one even, one odd)"
        ));
    }
    Ok((xh, yh, xd))
}

/// Whether `h` reads VGPR `v` among its sources (operands past the first).
pub(crate) fn reads_vgpr(h: &Instruction, v: usize) -> bool {
    h.ops.iter().skip(1).any(|s| {
        matches!(s.op, Operand::Reg { file: RegFile::V, index, count } if (index as usize..index as usize + count as usize).contains(&v))
    })
}

/// `ins` with VGPR indexing applied (GFX9 `s_set_gpr_idx_on`): `M0[7:0]`
/// is added to the VGPR number of each operand whose bit `M0[15:12]` sets —
/// bit 0 SRC0, 1 SRC1, 2 SRC2, 3 DST (AMD *Instinct MI300 (CDNA 3)
/// Instruction Set Architecture* reference guide, `S_SET_GPR_IDX_ON` and
/// `SQ_M0_GPR_IDX_WORD`; LLVM AMDGPU's gfx940 `imask` operand
/// documentation). Only VGPR operands are relocated (an SGPR or a constant
/// in that slot is not; AGPR operands are left as they are, which no
/// source here confirms); a register range moves as a whole (its first
/// register is the one indexed). An operand's slot (`vdst`, `src0`,
/// `src1`, `src2`) is its name in the instruction-property table
/// ([`crate::isa`]), in the order LLVM prints operands; a VGPR operand
/// without such a slot (or an instruction the table lacks) is refused, not
/// guessed. An index past `.amdhsa_accum_offset` reaches the AGPRs, the
/// same registers of the unified file ([`Wave::v`]).
pub(crate) fn gpr_indexed(w: &Wave, ins: &Instruction) -> R<Instruction> {
    let m0 = w.s[M0 as usize];
    let (idx, mode) = (m0 & 0xff, (m0 >> 12) & 0xf);
    let mut out = ins.clone();
    if mode == 0 {
        return Ok(out);
    }
    let Some(props) = ins.props() else {
        return unsup("VGPR indexing (s_set_gpr_idx_on) of an instruction the ISA table lacks");
    };
    for (i, o) in out.ops.iter_mut().enumerate() {
        let Operand::Reg {
            file: RegFile::V,
            index,
            ..
        } = &mut o.op
        else {
            continue;
        };
        let bit = match props.operands.get(i).map(|p| p.name) {
            Some("vdst") => 8,
            Some("src0") => 1,
            Some("src1") => 2,
            Some("src2") => 4,
            _ => return unsup(
                "VGPR indexing (s_set_gpr_idx_on) of an operand that is not vdst/src0/src1/src2",
            ),
        };
        if mode & bit != 0 {
            // Past the accum offset the index reaches the AGPR the unified
            // file has there ([`Wave::v`]); past the file, a fault.
            *index += idx as u16;
        }
    }
    Ok(out)
}

/// The `op_sel` bits of a VOP3 instruction (missing places are 0).
fn op_sel_bits(ins: &Instruction) -> R<[u8; 4]> {
    let v = ins
        .modifier("op_sel")
        .map(parse_bits)
        .transpose()?
        .unwrap_or_default();
    let mut b = [0u8; 4];
    for (o, x) in b.iter_mut().zip(v) {
        *o = x & 1;
    }
    Ok(b)
}

/// The three-source VOP3 forms below take no `neg`/`abs`/`clamp`/`omod`.
fn plain_vop3(ins: &Instruction, n: usize) -> R<()> {
    if ins.ops.len() != n || ins.ops.iter().any(|o| o.neg || o.abs) {
        return unsup("operand modifiers or count");
    }
    if ins.has("clamp") || ins.has("mul") || ins.has("div") {
        return unsup("clamp/omod");
    }
    Ok(())
}

/// gfx950 `v_cvt_scalef32_pk_fp4_f32 vdst, src0, src1, scale`: src0 and
/// src1 (f32) divided by the scale and rounded to nearest even in FP4 E2M1
/// ([`crate::mx::encode`]: saturating), packed as `src0 | src1 << 4` into
/// byte `op_sel[2] + 2·op_sel[3]` of vdst; the other bytes keep their value
/// (LLVM pull request 117417: "OPSEL[3:2] selects which dst_byte to write";
/// the builtin's `old` operand is vdst itself). The scale is the f32
/// operand's exponent, 2^(E − 127) ([`crate::mx::scalef32`]); dividing by it
/// is MLIR's `arith.scaling_truncf` (x / 2^scale), which ArithToAMDGPU
/// lowers to this instruction. The quotient is exact (f64), so the result
/// is rounded once.
fn cvt_scalef32_pk_fp4_f32(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    plain_vop3(ins, 4)?;
    let sel = op_sel_bits(ins)?;
    let byte = 8 * (sel[2] + 2 * sel[3]) as u32;
    let exec = w.exec();
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let scale = crate::mx::scalef32(w.vread(&ins.ops[3], lane, Ty::B32, ctx)? as u32);
        let mut codes = [0u32; 2];
        for (c, i) in codes.iter_mut().zip([1, 2]) {
            let x = f32b(w.vread(&ins.ops[i], lane, Ty::B32, ctx)?) as f64;
            *c = match crate::mx::encode(crate::mx::Mini::E2M1, x / scale) {
                Some(c) => c as u32,
                None => return unsup("a NaN converted to fp4 (not modelled)"),
            };
        }
        let old = w.vread(&ins.ops[0], lane, Ty::B32, ctx)? as u32;
        let v = old & !(0xff << byte) | (codes[0] | codes[1] << 4) << byte;
        w.vwrite(&ins.ops[0], lane, Ty::B32, v as u64)?;
    }
    Ok(())
}

/// gfx950 `v_cvt_scalef32_pk_bf16_fp8 vdst, src0, scale`: the two fp8 (OCP
/// E4M3) bytes of src0's low word (`op_sel[0]` = 0) or high word (1), each
/// multiplied by the scale 2^(E − 127) ([`crate::mx::scalef32`]) and
/// rounded to nearest even in bf16, into vdst's low and high halves. (MLIR's
/// `arith.scaling_extf` is x · 2^scale and lowers to the
/// `cvt.scalef32.pk.*` up-conversions; LLVM's `cvt_pk_f32_fp8` family reads
/// the word that `word_sel`/`op_sel[0]` names.)
fn cvt_scalef32_pk_bf16_fp8(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    plain_vop3(ins, 3)?;
    let sel = op_sel_bits(ins)?;
    let exec = w.exec();
    let fmt = crate::fp8::Fp8::of(false, ctx.ocp_fp8);
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let src = w.vread(&ins.ops[1], lane, Ty::B32, ctx)? as u32;
        let scale = crate::mx::scalef32(w.vread(&ins.ops[2], lane, Ty::B32, ctx)? as u32);
        let word = src >> (16 * sel[0] as u32);
        let mut out = 0u32;
        for h in 0..2 {
            let x = crate::fp8::decode(fmt, (word >> (8 * h)) as u8) * scale;
            // f64 → f32 is exact for every fp8 value times a power of two in
            // f32's range; bf16 then rounds once.
            let b = half::bf16::from_f64(x).to_bits() as u32;
            out |= b << (16 * h);
        }
        w.vwrite(&ins.ops[0], lane, Ty::B32, out as u64)?;
    }
    Ok(())
}

/// `v_cvt_pk_u8_f32 vdst, src0, src1, src2`: src0 (f32) converted to an
/// unsigned byte, written into byte `src1[1:0]` of src2, the result in vdst
/// (GCN3/Vega ISA: "D.u = (S2.u & ~(0xff << (8 * S1.u[1:0]))) |
/// (flt32_to_uint8(S0.f) << (8 * S1.u[1:0]))"). The conversion rounds to
/// nearest even (the MODE register's default round mode, the only one
/// modelled) and clamps to [0, 255]; NaN gives 0.
fn cvt_pk_u8_f32(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    plain_vop3(ins, 4)?;
    if ins.has("op_sel") {
        return unsup("op_sel");
    }
    let exec = w.exec();
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let x = f32b(w.vread(&ins.ops[1], lane, Ty::B32, ctx)?);
        let byte = 8 * (w.vread(&ins.ops[2], lane, Ty::B32, ctx)? as u32 & 3);
        let old = w.vread(&ins.ops[3], lane, Ty::B32, ctx)? as u32;
        let u = if x.is_nan() {
            0
        } else {
            x.round_ties_even().clamp(0.0, 255.0) as u32
        };
        let v = old & !(0xff << byte) | u << byte;
        w.vwrite(&ins.ops[0], lane, Ty::B32, v as u64)?;
    }
    Ok(())
}

/// Refuses, by name, a modifier of a memory instruction (SMEM, FLAT,
/// GLOBAL, SCRATCH, MUBUF) the executor does not model, rather than run it
/// as if it were absent. Modelled: `offset`, `offen`, `idxen`, `lds`,
/// `scale_offset` (gfx1250; GLOBAL/SCRATCH/SMEM), the atomic return bit
/// (`glc`, `sc0`, `th:TH_ATOMIC_RETURN`). Accepted with no effect: the
/// cache policy (`glc`/`slc`/`dlc`/`nt`/`sc0`/`sc1` on loads and stores;
/// gfx12's `th:` temporal hints and `scope:`; gfx1250's `nv`): the
/// emulator's memory has no caches and its waves' accesses are applied in
/// one order, so a hint or a coherence scope changes no value it computes.
fn memory_modifiers(ins: &Instruction) -> R<()> {
    for (k, _) in &ins.mods {
        match k.as_str() {
            "offset" | "offen" | "idxen" | "lds" | "scale_offset" => {}
            "glc" | "slc" | "dlc" | "nt" | "sc0" | "sc1" | "th" | "scope" | "nv" => {}
            other => {
                return unsup(format!(
                    "memory modifier `{other}` on `{}`: not modelled",
                    ins.mnemonic
                ))
            }
        }
    }
    Ok(())
}

fn step_v(wave: &mut Wave, ins: &Instruction, ctx: &mut Ctx, unit: Unit) -> R<()> {
    let m = ins.mnemonic.as_str();
    match unit {
        Unit::Vcmp => return vcmp(wave, ins, ctx),
        Unit::Mfma => return mfma(wave, ins, ctx),
        Unit::Ds => return ds(wave, ins, ctx),
        Unit::Global | Unit::Scratch | Unit::Buffer => {
            memory_modifiers(ins)?;
            return match unit {
                Unit::Global => global(wave, ins, ctx),
                Unit::Scratch => scratch(wave, ins, ctx),
                _ => buffer(wave, ins, ctx),
            };
        }
        Unit::Valu => {}
        Unit::Salu
        | Unit::SmemRead
        | Unit::SmemWrite
        | Unit::SmemScratch
        | Unit::Tbuffer
        | Unit::None => return unsup(""),
    }
    // CDNA's dot products (VOP3P `v_dotN_*` and VOP2 `v_dotNc_*`).
    if let Some(f) = dot_form(base_name(m).0) {
        return dot(wave, ins, ctx, f);
    }
    // Cross-lane moves and packed math, from the property table.
    if ins.props().is_some_and(|p| p.lane_select()) {
        return lane_op(wave, ins, ctx);
    }
    if matches!(base_name(m).0, "v_permlane16_b32" | "v_permlanex16_b32") {
        return permlane16(wave, ins, ctx);
    }
    if ins.props().is_some_and(|p| p.packed()) {
        return vop3p(wave, ins, ctx);
    }
    match m.strip_suffix("_e64").unwrap_or(m) {
        "v_cvt_scalef32_pk_fp4_f32" => return cvt_scalef32_pk_fp4_f32(wave, ins, ctx),
        "v_cvt_scalef32_pk_bf16_fp8" => return cvt_scalef32_pk_bf16_fp8(wave, ins, ctx),
        "v_cvt_pk_u8_f32" => return cvt_pk_u8_f32(wave, ins, ctx),
        n if cvt_pk8::handles(n) => return cvt_pk8::run(wave, ins, ctx),
        _ => {}
    }
    valu_ins(wave, ins, ctx)
}

fn branch_target(ins: &Instruction) -> u64 {
    let simm = ins.words[0] as u16 as i16 as i64;
    (ins.addr as i64 + 4 + simm * 4) as u64
}

fn jump(wave: &mut Wave, ins: &Instruction, ctx: &Ctx, to: u64) -> R<()> {
    match ctx.program.index.get(&to) {
        Some(&i) => {
            wave.pc = i;
            wave.last_branch = Some((ins.addr, to));
            Ok(())
        }
        None => Err(Stop::Fault(
            None,
            format!("branch to {to:#x}, which is not an instruction of the kernel"),
        )),
    }
}

/// gfx12's (RDNA4's) scalar instructions that gfx9 has not, when `ins`
/// is one (else `None`). Semantics are the RDNA4 ISA guide's pseudo-code:
///
/// * `s_wait_*` (the split counters `loadcnt`, `storecnt`, `dscnt`,
///   `kmcnt`, `samplecnt`, `bvhcnt`, `expcnt`, their combined forms,
///   `s_wait_alu`, `s_wait_idle`, `s_wait_event`): nothing to wait for in
///   an executor whose memory instructions complete at once. They keep
///   their names for observers (the sanitizer's counters).
/// * `s_barrier_signal -1` arrives at the workgroup barrier and
///   `s_barrier_wait -1` (printed `0xffff`) waits for it: modelled as one
///   barrier at the wait (every wave waits there until all have reached
///   theirs, hence signalled). What a wave does between its signal and its
///   wait is run before the barrier releases, so a store there is seen by
///   the other waves after it (a race on hardware: not modelled). Named
///   barriers (another id) are refused.
/// * SALU float (`s_add_f32`, `s_sub_f32`, `s_mul_f32`, `s_fmac_f32`,
///   `s_fmaak_f32`, `s_fmamk_f32`, `s_max_num_f32`, `s_min_num_f32`,
///   `s_cvt_f32_{i32,u32,f16}`, `s_cvt_hi_f32_f16`, `s_cvt_{i32,u32}_f32`,
///   `s_{ceil,floor,trunc,rndne}_f32`, `s_cmp_*_f32`): IEEE single, NaN
///   results canonical as the VALU's. The f16 SALU forms are not run.
/// * `s_add_nc_u64`, `s_sub_nc_u64`, `s_mul_u64`: 64-bit, SCC unchanged.
fn salu_gfx12(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> Option<R<()>> {
    let m = ins.mnemonic.as_str();
    let o = &ins.ops;
    let op = |i: usize| opnd(o, i);
    let f = |w: &Wave, i: usize| -> R<f32> { Ok(f32::from_bits(w.sread(op(i)?, ctx)?)) };
    let put = |w: &mut Wave, v: f32| -> R<()> { w.swrite(op(0)?, bf32(v) as u32) };
    Some(match m {
        "s_setreg_imm32_b32" | "s_getreg_b32"
            if w.numbering == crate::decode::Numbering::GFX1250 =>
        {
            hwreg_gfx1250(w, ins, ctx)
        }
        "s_wait_loadcnt"
        | "s_wait_storecnt"
        | "s_wait_dscnt"
        | "s_wait_kmcnt"
        | "s_wait_samplecnt"
        | "s_wait_bvhcnt"
        | "s_wait_expcnt"
        | "s_wait_loadcnt_dscnt"
        | "s_wait_storecnt_dscnt"
        | "s_wait_alu"
        | "s_wait_idle"
        | "s_wait_event" => Ok(()),
        "s_barrier_signal"
        | "s_barrier_signal_isfirst"
        | "s_barrier_wait"
        | "s_get_barrier_state"
        | "s_barrier_init"
        | "s_barrier_join"
        | "s_barrier_leave" => barrier_gfx12(w, ins, ctx),
        "s_add_f32" | "s_sub_f32" | "s_mul_f32" | "s_max_num_f32" | "s_min_num_f32" => (|| {
            let (a, b) = (w.sread(op(1)?, ctx)?, w.sread(op(2)?, ctx)?);
            let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
            let r = match m {
                "s_add_f32" => bf32(fa + fb) as u32,
                "s_sub_f32" => bf32(fa - fb) as u32,
                "s_mul_f32" => bf32(fa * fb) as u32,
                "s_max_num_f32" => num_minmax32(a, b, true),
                _ => num_minmax32(a, b, false),
            };
            w.swrite(op(0)?, r)
        })(),
        // fmac: D = S0·S1 + D; fmaak (`d, s0, s1, K`) and fmamk (`d, s0, K,
        // s1`) are both the fma of the printed operands 1, 2, 3.
        "s_fmac_f32" => (|| {
            let d = f(w, 0)?;
            let v = f(w, 1)?.mul_add(f(w, 2)?, d);
            put(w, v)
        })(),
        "s_fmaak_f32" | "s_fmamk_f32" => (|| {
            let v = f(w, 1)?.mul_add(f(w, 2)?, f(w, 3)?);
            put(w, v)
        })(),
        "s_cvt_f32_i32" => (|| {
            let v = w.sread(op(1)?, ctx)? as i32 as f32;
            put(w, v)
        })(),
        "s_cvt_f32_u32" => (|| {
            let v = w.sread(op(1)?, ctx)? as f32;
            put(w, v)
        })(),
        // Saturating, NaN to 0 (as `v_cvt_i32_f32`).
        "s_cvt_i32_f32" => (|| {
            let v = f(w, 1)? as i32 as u32;
            w.swrite(op(0)?, v)
        })(),
        "s_cvt_u32_f32" => (|| {
            let v = f(w, 1)? as u32;
            w.swrite(op(0)?, v)
        })(),
        "s_cvt_f32_f16" | "s_cvt_hi_f32_f16" => (|| {
            let x = w.sread(op(1)?, ctx)?;
            let h = if m == "s_cvt_hi_f32_f16" { x >> 16 } else { x };
            put(w, f16b(h as u64 & 0xffff))
        })(),
        "s_ceil_f32" | "s_floor_f32" | "s_trunc_f32" | "s_rndne_f32" => (|| {
            let x = f(w, 1)?;
            let v = match m {
                "s_ceil_f32" => x.ceil(),
                "s_floor_f32" => x.floor(),
                "s_trunc_f32" => x.trunc(),
                _ => x.round_ties_even(),
            };
            put(w, v)
        })(),
        "s_add_nc_u64" | "s_sub_nc_u64" | "s_mul_u64" => (|| {
            let (a, b) = (w.sread64(op(1)?, ctx)?, w.sread64(op(2)?, ctx)?);
            let r = match m {
                "s_add_nc_u64" => a.wrapping_add(b),
                "s_sub_nc_u64" => a.wrapping_sub(b),
                _ => a.wrapping_mul(b),
            };
            w.swrite64(op(0)?, r)
        })(),
        _ => {
            let cmp = m.strip_prefix("s_cmp_")?.strip_suffix("_f32")?;
            (|| {
                let (a, b) = (w.sread(op(0)?, ctx)?, w.sread(op(1)?, ctx)?);
                match compare(cmp, "f32", a as u64, b as u64) {
                    Some(r) => {
                        w.scc = r;
                        Ok(())
                    }
                    None => unsup(""),
                }
            })()
        }
    })
}

/// gfx12's split barrier instructions on the workgroup barrier (-1) and
/// gfx1250's cluster barrier (-3). The ID is the immediate (`s_barrier_wait
/// 0xffff` is -1, `0xfffd` -3; `s_get_barrier_state`'s second operand).
/// What depends on other waves stops the wave with [`WaveState::Sync`] for
/// the dispatcher ([`SyncOp`]). gfx1250's named barriers 0..16
/// (`s_barrier_init`, `_join`, `_leave`, `_signal` with an immediate ID or
/// M0, `s_barrier_wait 1..16` on the last joined one) go to the dispatcher
/// as [`SyncOp::Named`] ([`crate::named_barrier`]; 0 is the NULL barrier).
/// Refused: the cluster trap barrier (-4) and the workgroup trap barrier
/// (-2), both privileged, the cluster barrier in a dispatch without
/// clusters, `s_get_barrier_state` of the workgroup barrier or of a named
/// barrier, and named barriers on gfx12 (gfx1250's).
fn barrier_gfx12(w: &mut Wave, ins: &Instruction, ctx: &Ctx) -> R<()> {
    use crate::named_barrier::Op;
    let m = ins.mnemonic.as_str();
    let sync = |w: &mut Wave, op: SyncOp| {
        w.sync = Some(op);
        w.state = WaveState::Sync;
        Ok(())
    };
    let named = |w: &mut Wave, op: Op| {
        if w.numbering != crate::decode::Numbering::GFX1250 {
            return unsup("named barriers (gfx1250's, not gfx12's)");
        }
        sync(w, SyncOp::Named(op))
    };
    if m == "s_barrier_leave" {
        return named(w, Op::Leave);
    }
    let at = if m == "s_get_barrier_state" { 1 } else { 0 };
    // The ID: an immediate, or M0 (its lower half for init and join, bits
    // 4:0 for a signal; the expected count in its upper half).
    let (id, m0) = match ins.ops.get(at) {
        Some(s) if ins.ops.len() == at + 1 => match s.op {
            Operand::Int(id) => (id as i16, None),
            _ => {
                let v = w.sread(s, ctx)?;
                let id = if m.starts_with("s_barrier_signal") {
                    v & 0x1f
                } else {
                    v & 0xffff
                };
                (id as i16, Some(v))
            }
        },
        _ => return unsup("this barrier operand"),
    };
    let upper = w.m0() >> 16;
    match (id, m) {
        (0..=16, "s_barrier_init") => {
            return named(
                w,
                Op::Init {
                    id: id as u32,
                    expected: upper,
                },
            )
        }
        (0..=16, "s_barrier_join") => return named(w, Op::Join { id: id as u32 }),
        (0..=16, "s_barrier_signal" | "s_barrier_signal_isfirst") => {
            return named(
                w,
                Op::Signal {
                    id: id as u32,
                    expected: m0.map(|v| v >> 16 & 0x7f).filter(|&c| c != 0),
                    isfirst: m == "s_barrier_signal_isfirst",
                },
            )
        }
        (0, "s_barrier_wait") => return Ok(()),
        (1..=16, "s_barrier_wait") => return named(w, Op::Wait),
        (0..=16, "s_get_barrier_state") => {
            return unsup(
                "s_get_barrier_state of a named barrier (no source here gives its bit layout)",
            )
        }
        _ if m0.is_some() => return unsup("a barrier ID in M0 other than a named barrier (0..16)"),
        _ => {}
    }
    match (id, m) {
        (-1, "s_barrier_signal") => Ok(()),
        (-1, "s_barrier_signal_isfirst") => sync(w, SyncOp::FirstSignal),
        (-1, "s_barrier_wait") => {
            w.state = WaveState::Barrier;
            Ok(())
        }
        (-3, _) if !w.hwregs.clustered() => Err(Stop::Fault(
            None,
            format!("`{}`: the cluster barrier (-3) in a dispatch without workgroup clusters: every workgroup is its own cluster there, and the barrier's expected count is not modelled; launch the kernel with its cluster (`Launch::cluster`, `gcn-patch run --cluster X,Y,Z`; the kernel's `.cluster_dims` by default)", ins.text),
        )),
        (-3, "s_barrier_signal") => sync(w, SyncOp::ClusterSignal { isfirst: false }),
        (-3, "s_barrier_signal_isfirst") => sync(w, SyncOp::ClusterSignal { isfirst: true }),
        (-3, "s_barrier_wait") => sync(w, SyncOp::ClusterWait),
        (-3, "s_get_barrier_state") => sync(w, SyncOp::ClusterState),
        (-4 | -2, _) => Err(Stop::Fault(
            None,
            format!("`{}`: the {} trap barrier ({id}) is privileged: only a trap handler uses it (LLVM's AMDGPUExecutionSynchronization, GFX12 barrier IDs)", ins.text, if id == -4 { "cluster" } else { "workgroup" }),
        )),
        (-1, _) => unsup("s_get_barrier_state of the workgroup barrier (-1)"),
        _ => unsup(format!("barrier ID {id}: gfx1250 has -4..16")),
    }
}

/// Complete `s_get_barrier_state sN, -3` ([`SyncOp::ClusterState`]): write
/// `value` to the instruction's SGPR.
pub(crate) fn set_barrier_state(w: &mut Wave, ins: &Instruction, value: u32) -> R<()> {
    w.swrite(opnd(&ins.ops, 0)?, value)
}

fn salu(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    if let Some(r) = salu_gfx12(w, ins, ctx) {
        return r;
    }
    let m = ins.mnemonic.as_str();
    let o = &ins.ops;
    let op = |i: usize| -> R<&Src> { o.get(i).ok_or_else(|| Stop::Unsupported(String::new())) };
    // Program control.
    match m {
        "s_endpgm" => {
            w.state = WaveState::Done;
            return Ok(());
        }
        "s_barrier" => {
            w.state = WaveState::Barrier;
            return Ok(());
        }
        // VGPR indexing (GFX9): the index in M0[7:0], the operand mask in
        // M0[15:12] (the SOPC form's immediate, in the second source byte).
        "s_set_gpr_idx_on" => {
            let s0 = w.sread(op(0)?, ctx)?;
            let mask = (ins.words[0] >> 8) & 0xf;
            let m0 = &mut w.s[M0 as usize];
            *m0 = (*m0 & !0xf0ff) | (s0 & 0xff) | mask << 12;
            w.gpr_idx = true;
            return Ok(());
        }
        // VSKIP = S0[S1[4:0]] (GCN3/Vega ISA, S_SETVSKIP).
        "s_setvskip" => {
            let (s0, s1) = (w.sread(op(0)?, ctx)?, w.sread(op(1)?, ctx)?);
            w.vskip = s0 >> (s1 & 31) & 1 != 0;
            return Ok(());
        }
        "s_set_gpr_idx_off" => {
            w.gpr_idx = false;
            return Ok(());
        }
        "s_set_gpr_idx_idx" => {
            let s0 = w.sread(op(0)?, ctx)?;
            let m0 = &mut w.s[M0 as usize];
            *m0 = (*m0 & !0xff) | (s0 & 0xff);
            return Ok(());
        }
        "s_set_gpr_idx_mode" => {
            let m0 = &mut w.s[M0 as usize];
            *m0 = (*m0 & !0xf000) | (ins.words[0] & 0xf) << 12;
            return Ok(());
        }
        // A trap stops the wave (hardware enters the trap handler; the
        // runtime then reports the queue error): a fault here.
        "s_trap" => {
            return Err(Stop::Fault(
                None,
                format!(
                    "`{}`: the wave trapped (an assert or abort in the kernel)",
                    ins.text
                ),
            ));
        }
        "s_waitcnt" | "s_nop" | "s_setprio" | "s_sleep" | "s_waitcnt_vscnt" | "s_waitcnt_vmcnt"
        | "s_waitcnt_lgkmcnt" | "s_dcache_wb" | "s_dcache_inv" | "s_icache_inv"
        | "s_buffer_wbinvl1" | "s_wakeup" | "s_sethalt" | "s_ttracedata" | "s_trap_nop"
        | "s_code_end" => return Ok(()),
        // gfx11's `s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)` before `s_endpgm`
        // releases the wave's VGPRs early: nothing to do here.
        "s_sendmsg" if ins.text.contains("MSG_DEALLOC_VGPRS") => return Ok(()),
        "s_branch" => return jump(w, ins, ctx, branch_target(ins)),
        "s_cbranch_scc0" | "s_cbranch_scc1" | "s_cbranch_vccz" | "s_cbranch_vccnz"
        | "s_cbranch_execz" | "s_cbranch_execnz" => {
            let take = match m {
                "s_cbranch_scc0" => !w.scc,
                "s_cbranch_scc1" => w.scc,
                "s_cbranch_vccz" => w.vcc() == 0,
                "s_cbranch_vccnz" => w.vcc() != 0,
                "s_cbranch_execz" => w.exec() == 0,
                _ => w.exec() != 0,
            };
            if take {
                return jump(w, ins, ctx, branch_target(ins));
            }
            return Ok(());
        }
        "s_getpc_b64" => {
            let v = ins.addr + 4;
            return w.swrite64(op(0)?, v);
        }
        "s_setpc_b64" => {
            let t = w.sread64(op(0)?, ctx)?;
            return jump(w, ins, ctx, t);
        }
        "s_swappc_b64" => {
            let t = w.sread64(op(1)?, ctx)?;
            w.swrite64(op(0)?, ins.addr + 4)?;
            return jump(w, ins, ctx, t);
        }
        _ => {}
    }
    // SOPK: simm16 from the encoding.
    let simm16 = ins.words[0] as u16 as i16 as i32;
    match m {
        "s_movk_i32" => return w.swrite(op(0)?, simm16 as u32),
        "s_cmovk_i32" => {
            if w.scc {
                w.swrite(op(0)?, simm16 as u32)?;
            }
            return Ok(());
        }
        "s_addk_i32" => {
            let d = w.sread(op(0)?, ctx)? as i32;
            let (r, ov) = d.overflowing_add(simm16);
            w.scc = ov;
            return w.swrite(op(0)?, r as u32);
        }
        "s_mulk_i32" => {
            let d = w.sread(op(0)?, ctx)? as i32;
            return w.swrite(op(0)?, d.wrapping_mul(simm16) as u32);
        }
        _ => {}
    }
    if let Some(rest) = m.strip_prefix("s_cmpk_") {
        let a = w.sread(op(0)?, ctx)?;
        let (cmp, ty) = rest.split_once('_').unwrap_or((rest, ""));
        let b = if ty == "u32" {
            ins.words[0] as u16 as u64
        } else {
            simm16 as u32 as u64
        };
        w.scc = compare(cmp, ty, a as u64, b).ok_or_else(|| Stop::Unsupported(String::new()))?;
        return Ok(());
    }
    if let Some(rest) = m.strip_prefix("s_cmp_") {
        let (cmp, ty) = rest.split_once('_').unwrap_or((rest, ""));
        let (a, b) = if ty.ends_with("64") {
            (w.sread64(op(0)?, ctx)?, w.sread64(op(1)?, ctx)?)
        } else {
            (w.sread(op(0)?, ctx)? as u64, w.sread(op(1)?, ctx)? as u64)
        };
        w.scc = compare(cmp, ty, a, b).ok_or_else(|| Stop::Unsupported(String::new()))?;
        return Ok(());
    }
    if m.starts_with("s_bitcmp") {
        let a = w.sread64(op(0)?, ctx)?;
        let b = w.sread(op(1)?, ctx)?;
        let bit = if m.ends_with("b64") {
            (a >> (b & 63)) & 1
        } else {
            (a >> (b & 31)) & 1
        };
        w.scc = if m.starts_with("s_bitcmp1") {
            bit == 1
        } else {
            bit == 0
        };
        return Ok(());
    }
    // Saveexec (`_b32`: wave32's, on one SGPR).
    let saveexec = m
        .strip_suffix("_saveexec_b64")
        .or_else(|| m.strip_suffix("_saveexec_b32"));
    if let Some(kind) = saveexec {
        let b32 = m.ends_with("_b32");
        let src = if b32 {
            w.sread(op(1)?, ctx)? as u64
        } else {
            w.sread64(op(1)?, ctx)?
        };
        let exec = w.exec();
        let new = match kind {
            "s_and" => src & exec,
            "s_or" => src | exec,
            "s_xor" => src ^ exec,
            "s_andn2" => src & !exec,
            "s_orn2" => src | !exec,
            "s_nand" => !(src & exec),
            "s_nor" => !(src | exec),
            "s_xnor" => !(src ^ exec),
            "s_andn1" => !src & exec,
            "s_orn1" => !src | exec,
            _ => return unsup(""),
        };
        let new = if b32 { new & 0xffff_ffff } else { new };
        if b32 {
            w.swrite(op(0)?, exec as u32)?;
        } else {
            w.swrite64(op(0)?, exec)?;
        }
        w.set_exec(new);
        w.scc = new != 0;
        return Ok(());
    }
    let is64 = m.ends_with("_b64") || m.ends_with("_u64") || m.ends_with("_i64");
    // 64-bit SOP1/SOP2.
    if is64 {
        let base = &m[..m.len() - 4];
        match base {
            "s_mov" => {
                let v = w.sread64(op(1)?, ctx)?;
                return w.swrite64(op(0)?, v);
            }
            "s_cmov" => {
                let v = w.sread64(op(1)?, ctx)?;
                if w.scc {
                    w.swrite64(op(0)?, v)?;
                }
                return Ok(());
            }
            "s_not" | "s_brev" | "s_bcnt1_i32" | "s_ff1_i32" | "s_flbit_i32" | "s_ff0_i32"
            | "s_bcnt0_i32" => {
                let a = w.sread64(op(1)?, ctx)?;
                match base {
                    "s_not" => {
                        w.scc = !a != 0;
                        return w.swrite64(op(0)?, !a);
                    }
                    "s_brev" => return w.swrite64(op(0)?, a.reverse_bits()),
                    "s_bcnt1_i32" => {
                        w.scc = a != 0;
                        return w.swrite(op(0)?, a.count_ones());
                    }
                    "s_bcnt0_i32" => {
                        w.scc = !a != 0;
                        return w.swrite(op(0)?, a.count_zeros());
                    }
                    "s_ff1_i32" => {
                        return w.swrite(op(0)?, if a == 0 { u32::MAX } else { a.trailing_zeros() })
                    }
                    "s_ff0_i32" => {
                        return w.swrite(
                            op(0)?,
                            if !a == 0 {
                                u32::MAX
                            } else {
                                (!a).trailing_zeros()
                            },
                        )
                    }
                    _ => {
                        return w.swrite(op(0)?, if a == 0 { u32::MAX } else { a.leading_zeros() })
                    }
                }
            }
            "s_lshl" | "s_lshr" | "s_ashr" => {
                let a = w.sread64(op(1)?, ctx)?;
                let b = w.sread(op(2)?, ctx)? & 63;
                let r = match base {
                    "s_lshl" => a << b,
                    "s_lshr" => a >> b,
                    _ => ((a as i64) >> b) as u64,
                };
                w.scc = r != 0;
                return w.swrite64(op(0)?, r);
            }
            "s_bfm" => {
                let a = w.sread(op(1)?, ctx)? & 63;
                let b = w.sread(op(2)?, ctx)? & 63;
                let mask = if a == 64 { u64::MAX } else { (1u64 << a) - 1 };
                return w.swrite64(op(0)?, mask << b);
            }
            "s_cselect" => {
                let (a, b) = (w.sread64(op(1)?, ctx)?, w.sread64(op(2)?, ctx)?);
                return w.swrite64(op(0)?, if w.scc { a } else { b });
            }
            "s_bfe" => {
                let a = w.sread64(op(1)?, ctx)?;
                let c = w.sread(op(2)?, ctx)?;
                let (off, width) = (c & 63, (c >> 16) & 0x7f);
                let r = if width == 0 {
                    0
                } else {
                    let x = a >> off;
                    let x = if width >= 64 {
                        x
                    } else {
                        x & ((1u64 << width) - 1)
                    };
                    if m.ends_with("i64") && width < 64 {
                        sext(x, width) as u64
                    } else {
                        x
                    }
                };
                w.scc = r != 0;
                return w.swrite64(op(0)?, r);
            }
            _ => {}
        }
        let a = w.sread64(op(1)?, ctx)?;
        let b = w.sread64(op(2)?, ctx)?;
        let r = match base {
            "s_and" => a & b,
            "s_or" => a | b,
            "s_xor" => a ^ b,
            "s_andn2" => a & !b,
            "s_orn2" => a | !b,
            "s_nand" => !(a & b),
            "s_nor" => !(a | b),
            "s_xnor" => !(a ^ b),
            _ => return unsup(""),
        };
        w.scc = r != 0;
        return w.swrite64(op(0)?, r);
    }
    // 32-bit SOP1.
    let one = |w: &Wave| -> R<u32> { w.sread(op(1)?, ctx) };
    let r: u32 = match m {
        "s_mov_b32" => one(w)?,
        "s_cmov_b32" => {
            let v = one(w)?;
            if w.scc {
                w.swrite(op(0)?, v)?;
            }
            return Ok(());
        }
        "s_not_b32" => {
            let r = !one(w)?;
            w.scc = r != 0;
            r
        }
        "s_brev_b32" => one(w)?.reverse_bits(),
        // D[S0[4:0]] = 0 or 1, the rest of D kept; SCC unchanged (GCN3/CDNA
        // ISA, SOP1). aiter's gfx1250 kernels use them.
        "s_bitset0_b32" => w.sread(op(0)?, ctx)? & !(1u32 << (one(w)? & 31)),
        "s_bitset1_b32" => w.sread(op(0)?, ctx)? | 1u32 << (one(w)? & 31),
        "s_bcnt1_i32_b32" => {
            let r = one(w)?.count_ones();
            w.scc = r != 0;
            r
        }
        "s_bcnt0_i32_b32" => {
            let r = one(w)?.count_zeros();
            w.scc = r != 0;
            r
        }
        "s_ff1_i32_b32" => {
            let a = one(w)?;
            if a == 0 {
                u32::MAX
            } else {
                a.trailing_zeros()
            }
        }
        "s_ff0_i32_b32" => {
            let a = !one(w)?;
            if a == 0 {
                u32::MAX
            } else {
                a.trailing_zeros()
            }
        }
        "s_flbit_i32_b32" => {
            let a = one(w)?;
            if a == 0 {
                u32::MAX
            } else {
                a.leading_zeros()
            }
        }
        "s_sext_i32_i8" => one(w)? as i8 as i32 as u32,
        "s_sext_i32_i16" => one(w)? as i16 as i32 as u32,
        "s_abs_i32" => {
            let r = (one(w)? as i32).wrapping_abs() as u32;
            w.scc = r != 0;
            r
        }
        _ => {
            // SOP2.
            let a = w.sread(op(1)?, ctx)?;
            let b = w.sread(op(2)?, ctx)?;
            match m {
                "s_add_u32" => {
                    let (r, c) = a.overflowing_add(b);
                    w.scc = c;
                    r
                }
                "s_sub_u32" => {
                    w.scc = b > a;
                    a.wrapping_sub(b)
                }
                "s_addc_u32" => {
                    let s = a as u64 + b as u64 + w.scc as u64;
                    w.scc = s >> 32 != 0;
                    s as u32
                }
                "s_subb_u32" => {
                    let d = a as i64 - b as i64 - w.scc as i64;
                    w.scc = d < 0;
                    d as u32
                }
                "s_add_i32" => {
                    let (r, o) = (a as i32).overflowing_add(b as i32);
                    w.scc = o;
                    r as u32
                }
                "s_sub_i32" => {
                    let (r, o) = (a as i32).overflowing_sub(b as i32);
                    w.scc = o;
                    r as u32
                }
                "s_mul_i32" => a.wrapping_mul(b),
                "s_mul_hi_u32" => ((a as u64 * b as u64) >> 32) as u32,
                "s_mul_hi_i32" => ((a as i32 as i64 * b as i32 as i64) >> 32) as u32,
                "s_and_b32" | "s_or_b32" | "s_xor_b32" | "s_andn2_b32" | "s_orn2_b32"
                | "s_nand_b32" | "s_nor_b32" | "s_xnor_b32" => {
                    let r = match m {
                        "s_and_b32" => a & b,
                        "s_or_b32" => a | b,
                        "s_xor_b32" => a ^ b,
                        "s_andn2_b32" => a & !b,
                        "s_orn2_b32" => a | !b,
                        "s_nand_b32" => !(a & b),
                        "s_nor_b32" => !(a | b),
                        _ => !(a ^ b),
                    };
                    w.scc = r != 0;
                    r
                }
                "s_lshl_b32" | "s_lshr_b32" | "s_ashr_i32" => {
                    let r = match m {
                        "s_lshl_b32" => a << (b & 31),
                        "s_lshr_b32" => a >> (b & 31),
                        _ => ((a as i32) >> (b & 31)) as u32,
                    };
                    w.scc = r != 0;
                    r
                }
                "s_lshl1_add_u32" | "s_lshl2_add_u32" | "s_lshl3_add_u32" | "s_lshl4_add_u32" => {
                    let n = m.as_bytes()[6] - b'0';
                    let s = ((a as u64) << n) + b as u64;
                    w.scc = s >> 32 != 0;
                    s as u32
                }
                "s_min_u32" => {
                    w.scc = a < b;
                    a.min(b)
                }
                "s_max_u32" => {
                    w.scc = a > b;
                    a.max(b)
                }
                "s_min_i32" => {
                    w.scc = (a as i32) < b as i32;
                    (a as i32).min(b as i32) as u32
                }
                "s_max_i32" => {
                    w.scc = (a as i32) > b as i32;
                    (a as i32).max(b as i32) as u32
                }
                "s_cselect_b32" => {
                    if w.scc {
                        a
                    } else {
                        b
                    }
                }
                "s_bfm_b32" => (((1u64 << (a & 31)) - 1) as u32) << (b & 31),
                "s_bfe_u32" | "s_bfe_i32" => {
                    let r = bfe32(a, b, m == "s_bfe_i32");
                    w.scc = r != 0;
                    r
                }
                "s_absdiff_i32" => {
                    let r = (a as i32).wrapping_sub(b as i32).wrapping_abs() as u32;
                    w.scc = r != 0;
                    r
                }
                "s_pack_ll_b32_b16" => (a & 0xffff) | (b << 16),
                "s_pack_lh_b32_b16" => (a & 0xffff) | (b & 0xffff_0000),
                "s_pack_hh_b32_b16" => (a >> 16) | (b & 0xffff_0000),
                _ => return unsup(""),
            }
        }
    };
    w.swrite(op(0)?, r)
}

fn smem(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let m = ins.mnemonic.as_str();
    let dwords = match m.rsplit('_').next().unwrap_or("") {
        "dword" => 1,
        "dwordx2" => 2,
        // gfx12's 3-dword scalar load (`s_load_b96`, UNLISTED).
        "b96" => 3,
        "dwordx4" => 4,
        "dwordx8" => 8,
        "dwordx16" => 16,
        _ => return unsup(""),
    };
    let (dst, base, off) = (opnd(&ins.ops, 0)?, opnd(&ins.ops, 1)?, ins.ops.get(2));
    let Operand::Reg { index: d, .. } = dst.op else {
        return unsup("destination");
    };
    // gfx1250's `scale_offset` multiplies the SGPR offset (not the
    // immediate) by the load's size (AMD's rocjitsu,
    // `smem_calculate_address`; LLVM's assembler refuses it on
    // `s_buffer_load_*`).
    let scale = if ins.has("scale_offset") {
        if m.starts_with("s_buffer_") || off.is_none() {
            return unsup("scale_offset on a scalar buffer load or without an SGPR offset");
        }
        4 * dwords as u64
    } else {
        1
    };
    let mut offset = match off {
        Some(s) => (w.sread(s, ctx)? as u64).wrapping_mul(scale),
        None => 0,
    };
    if let Some(o) = ins.modifier("offset") {
        offset = offset.wrapping_add(parse_int(o)? as u64);
    }
    let addr = if m.starts_with("s_buffer_") {
        let Operand::Reg { index, .. } = base.op else {
            return unsup("base");
        };
        let v = w.sregs(index, 4)?;
        let vbase = v[0] as u64 | ((v[1] & 0xffff) as u64) << 32;
        let num = v[2] as u64;
        // Scalar buffer loads: dwords at or past num_records read 0.
        let mut vals = vec![0u32; dwords];
        for (k, val) in vals.iter_mut().enumerate() {
            let o = (offset & !3) + 4 * k as u64;
            if o + 4 <= num {
                let mut b = [0u8; 4];
                ctx.trace
                    .note(0, Space::Scalar, AccessKind::Read, vbase + o, 4);
                ctx.mem
                    .read(vbase + o, &mut b)
                    .map_err(|e| Stop::Fault(None, e.to_string()))?;
                *val = u32::from_le_bytes(b);
            }
        }
        for (k, val) in vals.into_iter().enumerate() {
            w.sset(d as usize + k, val)?;
        }
        return Ok(());
    } else {
        w.sread64(base, ctx)?.wrapping_add(offset) & !3
    };
    let mut buf = vec![0u8; 4 * dwords];
    ctx.trace
        .note(0, Space::Scalar, AccessKind::Read, addr, 4 * dwords);
    ctx.mem
        .read(addr, &mut buf)
        .map_err(|e| Stop::Fault(None, format!("scalar load: {e}")))?;
    for k in 0..dwords {
        let word = u32::from_le_bytes([buf[4 * k], buf[4 * k + 1], buf[4 * k + 2], buf[4 * k + 3]]);
        w.sset(d as usize + k, word)?;
    }
    Ok(())
}

/// Scalar stores and atomics (gfx9 SMEM): `s_store_dword{,x2,x4}`,
/// `s_atomic_OP{,_x2}` at an address in SGPRs plus offset, and their
/// `s_buffer_` forms through a V# (dwords at or past `num_records` are
/// dropped; an atomic past it returns 0). With `glc` an atomic writes the
/// memory's old value to its data registers.
fn smem_write(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let m = ins.mnemonic.as_str();
    if ins.has("scale_offset") {
        return unsup("scale_offset on a scalar store or atomic");
    }
    let buffer = m.starts_with("s_buffer_");
    let rest = m.trim_start_matches("s_buffer_").trim_start_matches("s_");
    let (data, base, off) = (opnd(&ins.ops, 0)?, opnd(&ins.ops, 1)?, ins.ops.get(2));
    let Operand::Reg { index: d, .. } = data.op else {
        return unsup("data");
    };
    let d = d as usize;
    let mut offset = match off {
        Some(s) => w.sread(s, ctx)? as u64,
        None => 0,
    };
    if let Some(o) = ins.modifier("offset") {
        offset = offset.wrapping_add(parse_int(o)? as u64);
    }
    // (address, bytes that may be accessed from it)
    let (addr, limit) = if buffer {
        let Operand::Reg { index, .. } = base.op else {
            return unsup("base");
        };
        let v = w.sregs(index, 4)?;
        let vbase = v[0] as u64 | ((v[1] & 0xffff) as u64) << 32;
        (
            vbase + (offset & !3),
            (v[2] as u64).saturating_sub(offset & !3),
        )
    } else {
        (w.sread64(base, ctx)?.wrapping_add(offset) & !3, u64::MAX)
    };
    let fault = |e: crate::memory::Unmapped| Stop::Fault(None, format!("scalar store/atomic: {e}"));
    if let Some(kind) = rest.strip_prefix("store_") {
        let dwords = match kind {
            "dword" => 1,
            "dwordx2" => 2,
            "dwordx4" => 4,
            _ => return unsup(""),
        };
        for k in 0..dwords {
            if 4 * k as u64 + 4 > limit {
                break;
            }
            let v =
                w.s.get(d + k)
                    .copied()
                    .ok_or_else(|| Stop::Unsupported("data".into()))?;
            let at = addr + 4 * k as u64;
            ctx.trace.note(0, Space::Scalar, AccessKind::Write, at, 4);
            ctx.mem.write(at, &v.to_le_bytes()).map_err(fault)?;
        }
        return Ok(());
    }
    let Some(kind) = rest.strip_prefix("atomic_") else {
        return unsup("");
    };
    let (op, size) = match kind.strip_suffix("_x2") {
        Some(k) => (k, 8usize),
        None => (kind, 4),
    };
    if atomic_op(op, size, 0, 0, 0).is_none() {
        return unsup("");
    }
    let words = size / 4;
    let get = |w: &Wave, at: usize| -> R<u64> {
        let mut v = 0u64;
        for k in 0..words {
            let r =
                w.s.get(at + k)
                    .copied()
                    .ok_or_else(|| Stop::Unsupported("data".into()))?;
            v |= (r as u64) << (32 * k);
        }
        Ok(v)
    };
    let src = get(w, d)?;
    let cmp = if op == "cmpswap" {
        get(w, d + words)?
    } else {
        0
    };
    let old = if size as u64 > limit {
        0
    } else {
        ctx.trace
            .note(0, Space::Scalar, AccessKind::Atomic, addr, size);
        ctx.mem
            .atomic(addr, size, |old| {
                atomic_op(op, size, old, src, cmp).unwrap_or(old)
            })
            .map_err(fault)?
    };
    if ins.has("glc") {
        for k in 0..words {
            w.sset(d + k, (old >> (32 * k)) as u32)?;
        }
    }
    Ok(())
}

pub(crate) fn parse_int(s: &str) -> R<i64> {
    let r = if let Some(h) = s.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(h) = s.strip_prefix("-0x") {
        i64::from_str_radix(h, 16).ok().map(|v| -v)
    } else {
        s.parse().ok()
    };
    r.ok_or_else(|| Stop::Unsupported(format!("modifier value {s}")))
}

fn mask_bit(w: &Wave, src: &Src, lane: usize, ctx: &Ctx) -> R<bool> {
    Ok((w.read_mask(src, ctx)? >> lane) & 1 != 0)
}

/// Vector ALU ops of the VOP1/VOP2/VOP3 encodings (with DPP and SDWA).
// The lane index selects the source lane (DPP), the mask bits and the result.
#[allow(clippy::needless_range_loop)]
fn valu_ins(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let (name, enc) = base_name(&ins.mnemonic);
    match name {
        "v_nop" => return Ok(()),
        "v_fma_mix_f32" | "v_fma_mixlo_f16" | "v_fma_mixhi_f16" => {
            return fma_mix(w, ins, ctx, name)
        }
        // gfx950: odd rows (16 lanes) of vdst swap with even rows of src0
        // (`permlane16`), or rows 2–3 of vdst with rows 0–1 of src0
        // (`permlane32`); both registers are written (LLVM AMDGPUUsage,
        // llvm.amdgcn.permlane{16,32}.swap).
        "v_permlane16_swap_b32" | "v_permlane32_swap_b32" => {
            // Every lane of the wave (gfx1250's wave32: lanes 0-31).
            if w.exec() != w.lane_bits() {
                return unsup("a partial exec (fetch-inactive and bound_ctrl are not modelled)");
            }
            let (Ok((f0, i0)), Ok((f1, i1))) =
                (reg_of(opnd(&ins.ops, 0)?), reg_of(opnd(&ins.ops, 1)?))
            else {
                return unsup("operands");
            };
            let mut a = *w.vreg(f0, i0)?;
            let mut b = *w.vreg(f1, i1)?;
            for lane in 0..LANES {
                let row = lane / 16;
                let partner = if name == "v_permlane16_swap_b32" {
                    (row % 2 == 1).then(|| lane - 16)
                } else {
                    (row >= 2).then(|| lane - 32)
                };
                if let Some(p) = partner {
                    std::mem::swap(&mut a[lane], &mut b[p]);
                }
            }
            *w.vreg_mut(f0, i0)? = a;
            *w.vreg_mut(f1, i1)? = b;
            return Ok(());
        }
        "v_swap_b32" => {
            let exec = w.exec();
            let (
                Operand::Reg {
                    file: f0,
                    index: i0,
                    ..
                },
                Operand::Reg {
                    file: f1,
                    index: i1,
                    ..
                },
            ) = (&opnd(&ins.ops, 0)?.op, &opnd(&ins.ops, 1)?.op)
            else {
                return unsup("operands");
            };
            for l in 0..LANES {
                if exec >> l & 1 != 0 {
                    let a = w.vreg(*f0, *i0 as usize)?[l];
                    let b = w.vreg(*f1, *i1 as usize)?[l];
                    w.vreg_mut(*f0, *i0 as usize)?[l] = b;
                    w.vreg_mut(*f1, *i1 as usize)?[l] = a;
                }
            }
            return Ok(());
        }
        _ => {}
    }
    let sdwa = enc == "_sdwa";
    if sdwa && (ins.has("clamp") || ins.modifier("mul").is_some() || ins.modifier("div").is_some())
    {
        return unsup("SDWA with clamp/omod");
    }
    let (dty, sty) = valu_types(name);
    // gfx950 `v_bitop3_b{16,32}`: a three-input truth table (`bitop3:imm`).
    let bitop3 = if matches!(name, "v_bitop3_b32" | "v_bitop3_b16") {
        Some(match ins.modifier("bitop3") {
            Some(t) => parse_int(t)? as u8,
            None => 0,
        })
    } else {
        None
    };
    // fp8/bf8 conversions: the format depends on the target.
    let fp8_cvt = matches!(
        name,
        "v_cvt_f32_fp8"
            | "v_cvt_f32_bf8"
            | "v_cvt_pk_f32_fp8"
            | "v_cvt_pk_f32_bf8"
            | "v_cvt_pk_fp8_f32"
            | "v_cvt_pk_bf8_f32"
    )
    .then_some(());
    // Operand roles from the instruction-property table (`crate::isa`).
    let (has_sdst, mask_in) = ins
        .props()
        .map_or((false, false), |p| (p.carry_out(), p.mask_in()));
    let implicit_vcc = reads_vcc_implicitly(name);
    let ops = &ins.ops;
    if ops.is_empty() {
        return unsup("no operands");
    }
    let dst = opnd(ops, 0)?;
    let first_src = if has_sdst { 2 } else { 1 };
    let last_src = if mask_in { ops.len() - 1 } else { ops.len() };
    if last_src < first_src || last_src - first_src > 3 {
        return unsup("operand count");
    }
    let srcs = &ops[first_src..last_src];
    let clamp = ins.has("clamp");
    let omod = match (ins.modifier("mul"), ins.modifier("div")) {
        (Some("2"), _) => 2.0,
        (Some("4"), _) => 4.0,
        (_, Some("2")) => 0.5,
        _ => 1.0,
    };
    let int_clamp = clamp && !matches!(dty, Ty::F16 | Ty::F32 | Ty::F64);
    if int_clamp && saturating(name, [0; 3]).is_none() {
        return unsup("clamp on this integer operation");
    }
    let mut op_sel = ins
        .modifier("op_sel")
        .map(parse_bits)
        .transpose()?
        .unwrap_or_default();
    // true16 (RDNA): `.h` operands read and write the high half, `.l` the
    // low; a 16-bit result keeps the other half of its register.
    let t16 = t16_halves(ins);
    if let Some(t) = t16 {
        op_sel.resize(4, 0);
        for k in 0..srcs.len().min(3) {
            op_sel[k] |= (t.get(first_src + k) == Some(&b'h')) as u8;
        }
        op_sel[3] |= (t.first() == Some(&b'h')) as u8;
    }
    // DPP8 (gfx10+): src0 from lane `sel[lane % 8]` of the lane's group
    // of 8, the selects 3 bits each in the DPP word's bits 8-31 (LLVM
    // `dpp8:[...]`).
    // VOP3 DPP (`_e64_dpp`, gfx11+): the DPP word follows VOP3's two
    // (llvm-objdump-22 prints three words: `v_fma_f32_e64_dpp ...
    // row_shr:1 // D6130008 03D206FA FF091103`), and VOP3's own fields
    // give the modifiers; VOP1/VOP2 DPP's follows the one instruction word.
    let is_dpp = matches!(enc, "_dpp" | "_e64_dpp");
    let dpp_word = if enc == "_e64_dpp" { 2 } else { 1 };
    let dpp8 = if is_dpp && ins.has("dpp8") {
        if ins.modifier("fi").is_some_and(|v| v != "0") {
            return unsup("DPP8 with fi:1 (fetch-inactive is not modelled)");
        }
        Some(ins.words.get(dpp_word).copied().unwrap_or(0) >> 8)
    } else {
        None
    };
    // DPP: src0 from another lane; writes of disabled rows/banks are skipped.
    let dpp = if is_dpp && dpp8.is_none() {
        let word = ins.words.get(dpp_word).copied().unwrap_or(0);
        let ctrl = word >> 8 & 0x1ff;
        // gfx10+ dropped the wave shifts/rotates and row broadcasts
        // (0x130-0x143), made 0x150-0x15f `row_share` (gfx90a's
        // `row_newbcast`, the same lane choice) and added `row_xmask`
        // (0x160-0x16f) (LLVM SIDefines.h DppCtrl).
        let known = if w.rdna() {
            matches!(ctrl, 0..=0xff | 0x101..=0x10f | 0x111..=0x11f | 0x121..=0x12f | 0x140 | 0x141 | 0x150..=0x16f)
        } else {
            matches!(ctrl, 0..=0xff | 0x101..=0x10f | 0x111..=0x11f | 0x121..=0x12f | 0x130 | 0x134 | 0x138 | 0x13c | 0x140..=0x143 | 0x150..=0x15f)
        };
        if !known {
            return unsup(format!("DPP control {ctrl:#x}"));
        }
        Some((
            word >> 8 & 0x1ff,
            word >> 19 & 1 != 0,
            word >> 24 & 0xf,
            word >> 28 & 0xf,
        ))
    } else {
        None
    };
    let exec = w.exec();
    let approx = crate::approx::lookup(name);
    if approx.is_some() {
        w.approx.record(ins.addr, exec.count_ones());
    }
    let mut out = [0u64; LANES];
    let mut written = 0u64;
    let mut bits = 0u64;
    let mut x = [0u64; 3];
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let mut src_lane = lane;
        if let Some(sel) = dpp8 {
            let s = lane / 8 * 8 + (sel >> (3 * (lane % 8)) & 7) as usize;
            if exec >> s & 1 == 0 {
                return unsup("DPP8 reading an inactive lane (not modelled)");
            }
            src_lane = s;
        }
        if let Some((ctrl, bound_ctrl, bank_mask, row_mask)) = dpp {
            if row_mask >> (lane / 16) & 1 == 0 || bank_mask >> (lane % 16 / 4) & 1 == 0 {
                continue;
            }
            match dpp_source(ctrl, lane) {
                Some(s) if exec >> s & 1 != 0 => src_lane = s,
                _ if bound_ctrl => src_lane = usize::MAX,
                _ => continue,
            }
        }
        for (k, s) in srcs.iter().enumerate() {
            let l = if k == 0 { src_lane } else { lane };
            x[k] = if l == usize::MAX {
                0
            } else if sdwa && k < 2 {
                let plain = Src {
                    op: s.op.clone(),
                    neg: false,
                    abs: false,
                    sext: false,
                };
                let raw = w.vread(&plain, l, Ty::B32, ctx)? as u32;
                let sel = ins.modifier(if k == 0 { "src0_sel" } else { "src1_sel" });
                float_mods(sdwa_sel(raw, sel, s.sext)? as u64, sty[k], s.abs, s.neg)
            } else {
                let mut v = w.vread(s, l, sty[k], ctx)?;
                if op_sel.get(k).copied().unwrap_or(0) == 1 && matches!(sty[k], Ty::F16 | Ty::B16) {
                    v = float_mods(
                        w.vread(
                            &Src {
                                abs: false,
                                neg: false,
                                ..s.clone()
                            },
                            l,
                            Ty::B32,
                            ctx,
                        )? >> 16,
                        sty[k],
                        s.abs,
                        s.neg,
                    );
                }
                v
            };
        }
        if (name.starts_with("v_mac_")
            || name.starts_with("v_fmac_")
            || name.starts_with("v_dot2acc_"))
            && srcs.len() == 2
        {
            x[2] = w.vread(dst, lane, sty[2], ctx)?;
        }
        let cin = if mask_in {
            mask_bit(w, opnd(ops, ops.len() - 1)?, lane, ctx)?
        } else if implicit_vcc {
            w.vcc() >> lane & 1 != 0
        } else {
            false
        };
        let computed = match bitop3 {
            Some(t) => Some((bitop3_bits(t, x), false)),
            None if fp8_cvt.is_some() => {
                let old = if name.starts_with("v_cvt_pk_fp8") || name.starts_with("v_cvt_pk_bf8") {
                    w.vread(&plain(dst), lane, Ty::B32, ctx)?
                } else {
                    0
                };
                Some((fp8_convert(name, x, old, &op_sel, ctx.ocp_fp8)?, false))
            }
            None => valu(name, x, cin, lane),
        };
        let Some((mut v, bit)) = computed else {
            return unsup("");
        };
        if let (Some(a), Some(seed)) = (approx, w.approx.perturb) {
            // Within the hardware's documented error (before omod/clamp).
            v = a.perturb(seed, x[0], v);
        }
        if int_clamp {
            // Integer clamp: the result saturates instead of wrapping.
            v = saturating(name, x).unwrap_or(v);
        } else if omod != 1.0 || clamp {
            v = match dty {
                Ty::F32 => {
                    let mut f = f32b(v) * omod as f32;
                    if clamp {
                        f = f.clamp(0.0, 1.0);
                    }
                    bf32(f)
                }
                Ty::F64 => {
                    let mut f = f64b(v) * omod;
                    if clamp {
                        f = f.clamp(0.0, 1.0);
                    }
                    bf64(f)
                }
                _ => {
                    let mut f = f16b(v) * omod as f32;
                    if clamp {
                        f = f.clamp(0.0, 1.0);
                    }
                    bf16(f)
                }
            };
        }
        out[lane] = v;
        written |= 1 << lane;
        bits |= (bit as u64) << lane;
    }
    let dst_hi = matches!(dty, Ty::F16 | Ty::B16) && op_sel.get(3).copied().unwrap_or(0) == 1;
    for (lane, &v) in out.iter().enumerate() {
        if written >> lane & 1 != 0 {
            if sdwa && dty.is64() {
                // A 64-bit result (`v_cvt_pk_f32_fp8_sdwa`): whole registers.
                if ins.modifier("dst_sel").is_some_and(|s| s != "DWORD") {
                    return unsup("SDWA dst_sel on a 64-bit result");
                }
                w.vwrite(dst, lane, dty, v)?;
            } else if sdwa {
                let old = w.vread(
                    &Src {
                        op: dst.op.clone(),
                        neg: false,
                        abs: false,
                        sext: false,
                    },
                    lane,
                    Ty::B32,
                    ctx,
                )? as u32;
                let v = sdwa_dst(
                    v as u32,
                    old,
                    ins.modifier("dst_sel"),
                    ins.modifier("dst_unused"),
                )?;
                w.vwrite(dst, lane, Ty::B32, v as u64)?;
            } else if matches!(dty, Ty::F16 | Ty::B16) {
                let old = w.vread(
                    &Src {
                        op: dst.op.clone(),
                        neg: false,
                        abs: false,
                        sext: false,
                    },
                    lane,
                    Ty::B32,
                    ctx,
                )?;
                let v = if dst_hi {
                    (old & 0xffff) | (v & 0xffff) << 16
                } else if t16.is_some() {
                    (old & 0xffff_0000) | (v & 0xffff)
                } else {
                    v & 0xffff
                };
                w.vwrite(dst, lane, Ty::B32, v)?;
            } else {
                w.vwrite(dst, lane, dty, v)?;
            }
        }
    }
    if has_sdst {
        w.write_mask(opnd(ops, 1)?, bits)?;
    }
    Ok(())
}

/// The per-operand halves of a true16 instruction (`l`, `h` or `-`, in
/// printed operand order; [`Instruction::mods`]), when it names one.
fn t16_halves(ins: &Instruction) -> Option<&[u8]> {
    ins.modifier("t16").map(str::as_bytes)
}

/// The saturated result of an integer add/sub with `clamp` (CDNA3 ISA:
/// clamp on an integer operation saturates at the type's range), or `None`
/// for an operation whose clamp is not modelled.
fn saturating(name: &str, x: [u64; 3]) -> Option<u64> {
    let (a, b) = (x[0] as u32, x[1] as u32);
    let (ah, bh) = (a as u16, b as u16);
    Some(match name {
        "v_add_u32" | "v_add_co_u32" => a.saturating_add(b) as u64,
        "v_sub_u32" | "v_sub_co_u32" => a.saturating_sub(b) as u64,
        "v_subrev_u32" | "v_subrev_co_u32" => b.saturating_sub(a) as u64,
        "v_add_i32" => (a as i32).saturating_add(b as i32) as u32 as u64,
        "v_sub_i32" => (a as i32).saturating_sub(b as i32) as u32 as u64,
        "v_add_u16" => ah.saturating_add(bh) as u64,
        "v_sub_u16" => ah.saturating_sub(bh) as u64,
        "v_subrev_u16" => bh.saturating_sub(ah) as u64,
        "v_add_i16" => (ah as i16).saturating_add(bh as i16) as u16 as u64,
        "v_sub_i16" => (ah as i16).saturating_sub(bh as i16) as u16 as u64,
        _ => return None,
    })
}

/// `v_fma_mix_f32`, `v_fma_mixlo_f16`, `v_fma_mixhi_f16` (VOP3P): each
/// source is an f32 (`op_sel_hi` bit 0) or the low/high f16 half
/// (`op_sel_hi` bit 1, `op_sel` picks the half) converted exactly to f32,
/// with abs/neg applied after the selection; one f32 fma. The `mixlo`/`mixhi`
/// forms round that f32 result to f16 into the low/high half, keeping the
/// other half (LLVM selects them only for `fptrunc(fma)` of f32 values).
fn fma_mix(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx, name: &str) -> R<()> {
    let ops = &ins.ops;
    if ops.len() != 4 {
        return unsup("operand count");
    }
    let bits = |key: &str| -> R<Vec<u8>> {
        Ok(ins
            .modifier(key)
            .map(parse_bits)
            .transpose()?
            .unwrap_or_default())
    };
    let (sel, hi) = (bits("op_sel")?, bits("op_sel_hi")?);
    let clamp = ins.has("clamp");
    let exec = w.exec();
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let mut x = [0f32; 3];
        for (k, s) in ops[1..].iter().enumerate() {
            let raw = w.vread(&plain(s), lane, Ty::B32, ctx)? as u32;
            let mut v = if hi.get(k).copied().unwrap_or(0) == 1 {
                let half = if sel.get(k).copied().unwrap_or(0) == 1 {
                    raw >> 16
                } else {
                    raw & 0xffff
                };
                f16::from_bits(half as u16).to_f32()
            } else {
                f32::from_bits(raw)
            };
            if s.abs {
                v = v.abs();
            }
            if s.neg {
                v = -v;
            }
            x[k] = v;
        }
        let mut r = x[0].mul_add(x[1], x[2]);
        if clamp {
            r = r.clamp(0.0, 1.0);
        }
        let out = match name {
            "v_fma_mix_f32" => r.to_bits(),
            _ => {
                let old = w.vread(&plain(opnd(ops, 0)?), lane, Ty::B32, ctx)? as u32;
                let h = f16::from_f32(r).to_bits() as u32;
                if name == "v_fma_mixlo_f16" {
                    (old & 0xffff_0000) | h
                } else {
                    (old & 0xffff) | h << 16
                }
            }
        };
        w.vwrite(opnd(ops, 0)?, lane, Ty::B32, out as u64)?;
    }
    Ok(())
}

/// A CDNA dot product's element format: how many elements a dword packs,
/// and how each is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DotForm {
    /// Two f16 halves, f32 accumulator.
    F16,
    /// Two bf16 halves, f32 accumulator.
    Bf16,
    /// `n` signed (`true`) or unsigned integers of `32 / n` bits, 32-bit
    /// integer accumulator.
    Int(u32, bool),
}

/// The dot-product form of a CDNA mnemonic (without `_e32`/`_e64`), or
/// `None`. The `c` forms (`v_dot2c_*`, VOP2) accumulate into their
/// destination. RDNA's `v_dot2acc_*`, `v_dot4_i32_iu8` (mixed signs) and
/// the fp8 dots are not these.
pub(crate) fn dot_form(name: &str) -> Option<DotForm> {
    Some(match name {
        "v_dot2_f32_f16" | "v_dot2c_f32_f16" => DotForm::F16,
        "v_dot2_f32_bf16" | "v_dot2c_f32_bf16" => DotForm::Bf16,
        "v_dot2_i32_i16" | "v_dot2c_i32_i16" => DotForm::Int(2, true),
        "v_dot2_u32_u16" => DotForm::Int(2, false),
        "v_dot4_i32_i8" | "v_dot4c_i32_i8" => DotForm::Int(4, true),
        "v_dot4_u32_u8" => DotForm::Int(4, false),
        "v_dot8_i32_i4" | "v_dot8c_i32_i4" => DotForm::Int(8, true),
        "v_dot8_u32_u4" => DotForm::Int(8, false),
        _ => return None,
    })
}

/// One lane's dot product `c + Σ a[i]·b[i]` (CDNA3 ISA pseudo-code of
/// `V_DOT2_F32_F16`, `V_DOT2_I32_I16`, `V_DOT4_I32_I8`, `V_DOT8_U32_U4`, …;
/// LLVM's `llvm.amdgcn.{f,s,u}dot{2,4,8}`, `fdot2.f32.bf16`):
/// * f16/bf16: each product is exact in f32 (11+11 or 8+8 significant
///   bits); the products are added to the f32 accumulator in turn, low
///   half first, each sum rounded to nearest even (the pseudo-code's
///   `tmp += …`: not one fused sum). `clamp` clamps to [0, 1]; a NaN
///   result is the canonical quiet NaN.
/// * integers: exact (64-bit) sum; without `clamp` the low 32 bits (wraps),
///   with `clamp` saturated to the i32/u32 range.
pub(crate) fn dot_lane(form: DotForm, a: u32, b: u32, c: u32, clamp: bool) -> u32 {
    match form {
        DotForm::F16 | DotForm::Bf16 => {
            let half = |v: u32, hi: bool| {
                let h = if hi { v >> 16 } else { v & 0xffff };
                if form == DotForm::F16 {
                    f16b(h as u64)
                } else {
                    f32::from_bits(h << 16)
                }
            };
            let mut t = f32::from_bits(c);
            t += half(a, false) * half(b, false);
            t += half(a, true) * half(b, true);
            if clamp {
                t = t.clamp(0.0, 1.0);
            }
            bf32(t) as u32
        }
        DotForm::Int(n, signed) => {
            let bits = 32 / n;
            let el = |v: u32, i: u32| -> i64 {
                let x = (v >> (bits * i)) & ((1u64 << bits) - 1) as u32;
                if signed {
                    ((x << (32 - bits)) as i32 >> (32 - bits)) as i64
                } else {
                    x as i64
                }
            };
            let acc = if signed { c as i32 as i64 } else { c as i64 };
            let t = (0..n).fold(acc, |t, i| t + el(a, i) * el(b, i));
            if !clamp {
                t as u32
            } else if signed {
                t.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
            } else {
                t.clamp(0, u32::MAX as i64) as u32
            }
        }
    }
}

/// The CDNA dot products ([`dot_form`], [`dot_lane`]) over the wave:
/// `vdst = src2 + src0·src1` (VOP3P), `vdst += src0·src1` (the VOP2 `c`
/// forms). VOP3P `op_sel`/`op_sel_hi`/`neg_lo`/`neg_hi` other than their
/// defaults, source `neg`/`abs`, DPP/SDWA and `omod` are refused (not
/// modelled; LLVM emits none for the builtins).
fn dot(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx, form: DotForm) -> R<()> {
    let (_, enc) = base_name(&ins.mnemonic);
    if matches!(enc, "_dpp" | "_sdwa" | "_e64_dpp") {
        return unsup("DPP/SDWA dot product");
    }
    for (k, d) in [
        ("op_sel", 0u8),
        ("op_sel_hi", 1),
        ("neg_lo", 0),
        ("neg_hi", 0),
    ] {
        if let Some(v) = ins.modifier(k) {
            if parse_bits(v)?.iter().any(|&b| b != d) {
                return unsup("op_sel/neg on a dot product");
            }
        }
    }
    if ins.has("mul") || ins.has("div") {
        return unsup("omod on a dot product");
    }
    let ops = &ins.ops;
    let acc_in_dst = ops.len() == 3;
    if !(acc_in_dst || ops.len() == 4) {
        return unsup("operand count");
    }
    if ops[1..].iter().any(|s| s.neg || s.abs) {
        return unsup("neg/abs on a dot product's source");
    }
    let clamp = ins.has("clamp");
    let exec = w.exec();
    let dst = opnd(ops, 0)?;
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32;
        let b = w.vread(opnd(ops, 2)?, lane, Ty::B32, ctx)? as u32;
        let c = if acc_in_dst {
            w.vread(dst, lane, Ty::B32, ctx)?
        } else {
            w.vread(opnd(ops, 3)?, lane, Ty::B32, ctx)?
        } as u32;
        w.vwrite(dst, lane, Ty::B32, dot_lane(form, a, b, c, clamp) as u64)?;
    }
    Ok(())
}

/// SDWA operand selection: the byte or word `sel` names, zero- or
/// sign-extended to 32 bits.
fn sdwa_sel(v: u32, sel: Option<&str>, sext_: bool) -> R<u32> {
    let (shift, bits) = match sel.unwrap_or("DWORD") {
        "BYTE_0" => (0, 8),
        "BYTE_1" => (8, 8),
        "BYTE_2" => (16, 8),
        "BYTE_3" => (24, 8),
        "WORD_0" => (0, 16),
        "WORD_1" => (16, 16),
        "DWORD" => (0, 32),
        other => return unsup(format!("SDWA selection {other}")),
    };
    if bits == 32 {
        return Ok(v);
    }
    let x = (v >> shift) & ((1u32 << bits) - 1);
    Ok(if sext_ {
        sext(x as u64, bits) as u32
    } else {
        x
    })
}

/// SDWA destination: `r` placed at `dst_sel`, the other bits as `dst_unused` says.
fn sdwa_dst(r: u32, old: u32, sel: Option<&str>, unused: Option<&str>) -> R<u32> {
    let (shift, bits) = match sel.unwrap_or("DWORD") {
        "BYTE_0" => (0, 8),
        "BYTE_1" => (8, 8),
        "BYTE_2" => (16, 8),
        "BYTE_3" => (24, 8),
        "WORD_0" => (0, 16),
        "WORD_1" => (16, 16),
        "DWORD" => return Ok(r),
        other => return unsup(format!("SDWA selection {other}")),
    };
    let mask = ((1u64 << bits) - 1) as u32;
    let placed = (r & mask) << shift;
    Ok(match unused.unwrap_or("UNUSED_PAD") {
        "UNUSED_PAD" => placed,
        "UNUSED_PRESERVE" => (old & !(mask << shift)) | placed,
        "UNUSED_SEXT" => {
            let top = shift + bits;
            sext((placed as u64) & ((1u64 << top) - 1), top) as u32
        }
        other => return unsup(format!("SDWA dst_unused {other}")),
    })
}

fn parse_bits(s: &str) -> R<Vec<u8>> {
    s.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|b| {
            b.trim()
                .parse::<u8>()
                .map_err(|_| Stop::Unsupported(format!("modifier value {s}")))
        })
        .collect()
}

fn vcmp(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let (name, enc) = base_name(&ins.mnemonic);
    if enc == "_dpp" || enc == "_e64_dpp" {
        return unsup("the DPP form of a compare");
    }
    let sdwa = enc == "_sdwa";
    let (x, rest) = if let Some(r) = name.strip_prefix("v_cmpx_") {
        (true, r)
    } else if let Some(r) = name.strip_prefix("v_cmp_") {
        (false, r)
    } else {
        return unsup("");
    };
    let (op, ty) = rest
        .rsplit_once('_')
        .ok_or_else(|| Stop::Unsupported(String::new()))?;
    let sty = match ty {
        "f16" => Ty::F16,
        "f32" => Ty::F32,
        "f64" => Ty::F64,
        "i64" | "u64" => Ty::B64,
        _ => Ty::B32,
    };
    let ops = &ins.ops;
    let (sdst, s0, s1) = match ops.len() {
        3 => (Some(opnd(ops, 0)?), opnd(ops, 1)?, opnd(ops, 2)?),
        2 => (None, opnd(ops, 0)?, opnd(ops, 1)?),
        _ => return unsup("operand count"),
    };
    let ty1 = if op == "class" { Ty::B32 } else { sty };
    let exec = w.exec();
    let mut bits = 0u64;
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let (a, b) = if sdwa {
            let rd = |s: &Src, key: &str, ty: Ty| -> R<u64> {
                let plain = Src {
                    op: s.op.clone(),
                    neg: false,
                    abs: false,
                    sext: false,
                };
                let raw = w.vread(&plain, lane, Ty::B32, ctx)? as u32;
                Ok(float_mods(
                    sdwa_sel(raw, ins.modifier(key), s.sext)? as u64,
                    ty,
                    s.abs,
                    s.neg,
                ))
            };
            (rd(s0, "src0_sel", sty)?, rd(s1, "src1_sel", ty1)?)
        } else if let Some(t) = t16_halves(ins) {
            // true16: a `.h` source is its register's high half.
            let first = ops.len() - 2;
            let rd = |s: &Src, k: usize, ty: Ty| -> R<u64> {
                if t.get(first + k) == Some(&b'h') {
                    let raw = w.vread(&plain(s), lane, Ty::B32, ctx)? >> 16;
                    Ok(float_mods(raw, ty, s.abs, s.neg))
                } else {
                    w.vread(s, lane, ty, ctx)
                }
            };
            (rd(s0, 0, sty)?, rd(s1, 1, ty1)?)
        } else {
            (w.vread(s0, lane, sty, ctx)?, w.vread(s1, lane, ty1, ctx)?)
        };
        let r = compare(op, ty, a, b).ok_or_else(|| Stop::Unsupported(String::new()))?;
        bits |= (r as u64) << lane;
    }
    if let Some(d) = sdst {
        w.write_mask(d, bits)?;
    } else if !x {
        w.set_vcc(bits);
    }
    if x {
        w.set_exec(bits);
    }
    Ok(())
}

/// gfx10+ `v_permlane16_b32 vdst, vsrc0, ssrc1, ssrc2` and
/// `v_permlanex16_b32`: lane `l` of each row of 16 reads `vsrc0` from the
/// lane of its row (`permlanex16`: of the other row of its 32) that the
/// nibble `l % 16` of `ssrc2:ssrc1` (64 bits, lane 0's in `ssrc1[3:0]`)
/// names. `op_sel[0]` is FI (read inactive lanes too) and `op_sel[1]`
/// BOUND_CTRL: a lane whose source is inactive writes 0 with BOUND_CTRL,
/// else keeps `vdst` (LLVM AMDGPUUsage, `llvm.amdgcn.permlane16`; RDNA3
/// ISA, V_PERMLANE16_B32).
fn permlane16(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let ops = &ins.ops;
    if ops.len() != 4 || ops.iter().any(|o| o.neg || o.abs) {
        return unsup("operand count or modifiers");
    }
    let sel = op_sel_bits(ins)?;
    let (fi, bound_ctrl) = (sel[0] == 1, sel[1] == 1);
    let x = base_name(&ins.mnemonic).0 == "v_permlanex16_b32";
    let lo = w.sread(opnd(ops, 2)?, ctx)? as u64;
    let hi = w.sread(opnd(ops, 3)?, ctx)? as u64;
    let select = lo | hi << 32;
    let exec = w.exec();
    let mut src = [0u32; LANES];
    for (lane, v) in src.iter_mut().enumerate() {
        *v = w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32;
    }
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let row = if x { (lane / 16) ^ 1 } else { lane / 16 };
        let from = row * 16 + (select >> (4 * (lane % 16)) & 15) as usize;
        let v = if exec >> from & 1 != 0 || fi {
            src[from]
        } else if bound_ctrl {
            0
        } else {
            continue;
        };
        w.vwrite(opnd(ops, 0)?, lane, Ty::B32, v as u64)?;
    }
    Ok(())
}

fn lane_op(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let (name, _) = base_name(&ins.mnemonic);
    let ops = &ins.ops;
    match name {
        "v_readlane_b32" => {
            let lane = (w.sread(opnd(ops, 2)?, ctx)? & (w.wave_size - 1)) as usize;
            let v = w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32;
            w.swrite(opnd(ops, 0)?, v)
        }
        "v_readfirstlane_b32" => {
            let exec = w.exec();
            let lane = if exec == 0 {
                0
            } else {
                exec.trailing_zeros() as usize
            };
            let v = w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32;
            w.swrite(opnd(ops, 0)?, v)
        }
        "v_writelane_b32" => {
            let v = w.sread(opnd(ops, 1)?, ctx)?;
            let lane = (w.sread(opnd(ops, 2)?, ctx)? & (w.wave_size - 1)) as usize;
            w.vwrite(opnd(ops, 0)?, lane, Ty::B32, v as u64)
        }
        _ => unsup(""),
    }
}

/// VOP3P: packed 16-bit (and gfx90a+ packed 32-bit) operations.
fn vop3p(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let name = ins.mnemonic.as_str();
    let ops = &ins.ops;
    let n = ops.len() - 1;
    let get = |k: &str, d: u8| -> R<Vec<u8>> {
        Ok(ins
            .modifier(k)
            .map(parse_bits)
            .transpose()?
            .unwrap_or_else(|| vec![d; 3]))
    };
    let op_sel = get("op_sel", 0)?;
    let op_sel_hi = get("op_sel_hi", 1)?;
    let neg_lo = get("neg_lo", 0)?;
    let neg_hi = get("neg_hi", 0)?;
    let clamp = ins.has("clamp");
    let exec = w.exec();
    let wide = name.ends_with("_f32") || name.ends_with("_b32");
    let raw = |w: &Wave, k: usize, lane: usize| -> R<u64> {
        let s = opnd(ops, k + 1)?;
        let plain = Src {
            op: s.op.clone(),
            neg: false,
            abs: false,
            sext: false,
        };
        if wide {
            // Packed 32-bit: a 64-bit register pair (or a 32-bit constant
            // used for both halves).
            match &s.op {
                Operand::Int(_) | Operand::Float(_) => {
                    let v = w.vread(&plain, lane, Ty::F32, ctx)?;
                    Ok(v | v << 32)
                }
                _ => w.vread(&plain, lane, Ty::B64, ctx),
            }
        } else {
            match &s.op {
                Operand::Float(_) => {
                    let v = w.vread(&plain, lane, Ty::F16, ctx)?;
                    Ok(v | v << 16)
                }
                _ => w.vread(&plain, lane, Ty::B32, ctx),
            }
        }
    };
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let mut lo = [0u64; 3];
        let mut hi = [0u64; 3];
        for k in 0..n {
            let v = raw(w, k, lane)?;
            let (bits, sign) = if wide {
                (32, 1u64 << 31)
            } else {
                (16, 1u64 << 15)
            };
            let mask = (1u64 << bits) - 1;
            let half = |sel: u8| (v >> (bits * sel as u32)) & mask;
            lo[k] = half(op_sel.get(k).copied().unwrap_or(0));
            hi[k] = half(op_sel_hi.get(k).copied().unwrap_or(1));
            if neg_lo.get(k).copied().unwrap_or(0) == 1 {
                lo[k] ^= sign;
            }
            if neg_hi.get(k).copied().unwrap_or(0) == 1 {
                hi[k] ^= sign;
            }
        }
        let f = |x: [u64; 3]| -> Option<u64> {
            let h = |i: usize| f16b(x[i]);
            let s = |i: usize| f32b(x[i]);
            let cl = |v: f32| if clamp { v.clamp(0.0, 1.0) } else { v };
            Some(match name {
                "v_pk_fma_f16" => bf16(cl((h(0) as f64).mul_add(h(1) as f64, h(2) as f64) as f32)),
                "v_pk_add_f16" => bf16(cl(h(0) + h(1))),
                "v_pk_mul_f16" => bf16(cl(h(0) * h(1))),
                "v_pk_max_f16" => bf16(h(0).max(h(1))),
                "v_pk_min_f16" => bf16(h(0).min(h(1))),
                "v_pk_add_u16" => (x[0] as u16).wrapping_add(x[1] as u16) as u64,
                "v_pk_sub_u16" => (x[0] as u16).wrapping_sub(x[1] as u16) as u64,
                "v_pk_mul_lo_u16" => (x[0] as u16).wrapping_mul(x[1] as u16) as u64,
                "v_pk_lshlrev_b16" => (x[1] as u16).wrapping_shl(x[0] as u32 & 15) as u64,
                "v_pk_lshrrev_b16" => (x[1] as u16).wrapping_shr(x[0] as u32 & 15) as u64,
                "v_pk_fma_f32" => bf32(cl(s(0).mul_add(s(1), s(2)))),
                "v_pk_mul_f32" => bf32(cl(s(0) * s(1))),
                "v_pk_add_f32" => bf32(cl(s(0) + s(1))),
                "v_pk_mov_b32" => x[0] & 0xffff_ffff,
                _ => return None,
            })
        };
        let (Some(l), Some(h)) = (f(lo), f(hi)) else {
            return unsup("");
        };
        if wide {
            let (l, h) = if name == "v_pk_mov_b32" {
                // v_pk_mov_b32 picks whole dwords: op_sel[0] for the low, op_sel[1] for the high result.
                let a = raw(w, 0, lane)?;
                let b = raw(w, 1, lane)?;
                let ls = op_sel.first().copied().unwrap_or(0);
                let hs = op_sel.get(1).copied().unwrap_or(1);
                (
                    (a >> (32 * ls as u32)) & 0xffff_ffff,
                    (b >> (32 * hs as u32)) & 0xffff_ffff,
                )
            } else {
                (l, h)
            };
            w.vwrite(opnd(ops, 0)?, lane, Ty::B64, l | h << 32)?;
        } else {
            w.vwrite(
                opnd(ops, 0)?,
                lane,
                Ty::B32,
                (l & 0xffff) | (h & 0xffff) << 16,
            )?;
        }
    }
    Ok(())
}

/// Size in bytes and sign extension of a load/store suffix.
/// A flat/global/scratch load's `kind` (`ubyte`, `short_d16_hi`, `dwordx2`,
/// …): its size in bytes, whether it sign-extends, and which half a d16
/// load writes (`Some(true)`: the high half).
fn load_kind(kind: &str) -> Result<(usize, bool, Option<bool>), Stop> {
    let (kind, d16) = match kind.strip_suffix("_d16_hi") {
        Some(k) => (k, Some(true)),
        None => match kind.strip_suffix("_d16") {
            Some(k) => (k, Some(false)),
            None => (kind, None),
        },
    };
    let kind = kind
        .strip_prefix("short_")
        .map(|k| if k == "d16" { "short" } else { k })
        .unwrap_or(kind);
    let (size, signed) = mem_size(kind).ok_or_else(|| Stop::Unsupported(String::new()))?;
    Ok((size, signed, d16))
}

fn mem_size(suffix: &str) -> Option<(usize, bool)> {
    Some(match suffix {
        "ubyte" | "byte" => (1, false),
        "sbyte" => (1, true),
        "ushort" | "short" => (2, false),
        "sshort" => (2, true),
        "dword" => (4, false),
        "dwordx2" => (8, false),
        "dwordx3" => (12, false),
        "dwordx4" => (16, false),
        "b8" | "u8" => (1, false),
        "i8" => (1, true),
        "b16" | "u16" => (2, false),
        "i16" => (2, true),
        "b32" => (4, false),
        "b64" => (8, false),
        "b96" => (12, false),
        "b128" => (16, false),
        _ => return None,
    })
}

fn reg_of(src: &Src) -> R<(RegFile, usize)> {
    match src.op {
        Operand::Reg { file, index, .. } => Ok((file, index as usize)),
        _ => unsup(format!("operand {:?}", src.op)),
    }
}

/// Bytes per element and the offset unit of a two-address LDS access
/// (`ds_read2[st64]_b32/_b64`, `ds_write2…`), from the mnemonic after
/// `read2`/`write2`: offsets count elements, or 64 elements with `st64`.
fn two_addr_form(kind: &str) -> (usize, u32) {
    let (st64, kind) = match kind.strip_prefix("st64") {
        Some(k) => (true, k),
        None => (false, kind),
    };
    let size = if kind.trim_start_matches('_') == "b64" {
        8
    } else {
        4
    };
    (size, size as u32 * if st64 { 64 } else { 1 })
}

/// Write `bytes` loaded for `lane` into consecutive registers from `dst`.
fn load_into(
    w: &mut Wave,
    dst: &Src,
    lane: usize,
    bytes: &[u8],
    signed: bool,
    d16_hi: Option<bool>,
) -> R<()> {
    let (file, i) = reg_of(dst)?;
    match (bytes.len(), d16_hi) {
        (1 | 2, Some(hi)) => {
            let mut v = 0u32;
            for (k, b) in bytes.iter().enumerate() {
                v |= (*b as u32) << (8 * k);
            }
            if signed {
                v = sext(v as u64, 8 * bytes.len() as u32) as u32 & 0xffff;
            }
            let r = &mut w.vreg_mut(file, i)?[lane];
            *r = if hi {
                (*r & 0xffff) | v << 16
            } else {
                (*r & 0xffff_0000) | v
            };
        }
        (1 | 2, None) => {
            let mut v = 0u64;
            for (k, b) in bytes.iter().enumerate() {
                v |= (*b as u64) << (8 * k);
            }
            if signed {
                v = sext(v, 8 * bytes.len() as u32) as u64;
            }
            w.vreg_mut(file, i)?[lane] = v as u32;
        }
        _ => {
            for k in 0..bytes.len() / 4 {
                w.vreg_mut(file, i + k)?[lane] =
                    u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap());
            }
        }
    }
    Ok(())
}

fn store_bytes(w: &Wave, src: &Src, lane: usize, size: usize, d16_hi: bool) -> R<Vec<u8>> {
    let (file, i) = reg_of(src)?;
    let mut out = Vec::with_capacity(size);
    for k in 0..size.div_ceil(4) {
        out.extend_from_slice(&w.vreg(file, i + k)?[lane].to_le_bytes());
    }
    if d16_hi && size <= 2 {
        let v = w.vreg(file, i)?[lane] >> 16;
        out = v.to_le_bytes().to_vec();
    }
    out.truncate(size);
    Ok(out)
}

fn atomic_op(op: &str, size: usize, old: u64, data: u64, cmp: u64) -> Option<u64> {
    let bits = 8 * size as u32;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let s = |v: u64| sext(v & mask, bits);
    Some(
        match op {
            "swap" => data,
            "cmpswap" | "cmpst" | "cmpstore" => {
                if old == cmp {
                    data
                } else {
                    old
                }
            }
            // RDNA3's `ds_cmpstore_f32` and `*_atomic_cmpswap_f32` (AMD's
            // RDNA3 ISA guide, DS_CMPSTORE_F32: "tmp = MEM[ADDR].f32; src =
            // DATA.f32; cmp = DATA2.f32; MEM[ADDR].f32 = tmp == cmp ? src :
            // tmp"): a float compare, so -0 matches +0 and NaN matches
            // nothing.
            "cmpstore_f32" | "cmpswap_f32" => {
                if f32b(old) == f32b(cmp) {
                    data
                } else {
                    old
                }
            }
            // gfx11's `*_atomic_csub_u32` and gfx12's `*_sub_clamp_u32`
            // (RDNA3 guide GLOBAL_ATOMIC_CSUB_U32, RDNA4 guide
            // DS_SUB_CLAMP_U32: "if old_value < DATA.u32 then new_value =
            // 0U else new_value = old_value - DATA.u32").
            "csub_u32" | "sub_clamp_u32" | "sub_clamp" => old.saturating_sub(data),
            // gfx12's `*_cond_sub_u32` (RDNA4 guide DS_COND_SUB_U32: "MEM =
            // tmp >= src ? tmp - src : tmp").
            "cond_sub_u32" | "cond_sub" => {
                if old >= data {
                    old - data
                } else {
                    old
                }
            }
            "add" => old.wrapping_add(data),
            "sub" => old.wrapping_sub(data),
            "rsub" => data.wrapping_sub(old),
            "smin" | "min_i32" | "min_i64" => s(old).min(s(data)) as u64,
            "smax" | "max_i32" | "max_i64" => s(old).max(s(data)) as u64,
            "umin" | "min_u32" | "min_u64" => old.min(data),
            "umax" | "max_u32" | "max_u64" => old.max(data),
            "and" => old & data,
            "or" => old | data,
            "xor" => old ^ data,
            "inc" => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            "dec" => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            "add_f32" => bf32(f32b(old) + f32b(data)),
            "add_f64" => bf64(f64b(old) + f64b(data)),
            "max_f32" => bf32(f32b(old).max(f32b(data))),
            "min_f32" => bf32(f32b(old).min(f32b(data))),
            // gfx12's `_num_` atomics: the RDNA4 ISA guide's
            // DS_MAX_NUM_RTN_F32 pseudo-code, src = DATA against tmp = MEM
            // (`num_minmax32` with src as src0).
            "max_num_f32" => num_minmax32(data as u32, old as u32, true) as u64,
            "min_num_f32" => num_minmax32(data as u32, old as u32, false) as u64,
            "max_f64" => bf64(f64b(old).max(f64b(data))),
            "min_f64" => bf64(f64b(old).min(f64b(data))),
            // Packed halves: each sum exact in f64, rounded once.
            "pk_add_f16" => pk_add_f16(old, data),
            "pk_add_bf16" => pk_add_bf16(old, data),
            _ => return None,
        } & mask,
    )
}

/// The packed-f16 atomic add (one body, shared with [`crate::typed`]: a
/// NaN's payload is whatever this code gives, so both run the same).
#[inline(never)]
pub(crate) fn pk_add_f16(old: u64, data: u64) -> u64 {
    let add = |a: u64, b: u64| f16::from_f64(f16b(a) as f64 + f16b(b) as f64).to_bits() as u64;
    add(old, data) | add(old >> 16, data >> 16) << 16
}

/// The packed-bf16 atomic add (see [`pk_add_f16`]).
#[inline(never)]
pub(crate) fn pk_add_bf16(old: u64, data: u64) -> u64 {
    let v = |x: u64| half::bf16::from_bits(x as u16).to_f64();
    let add = |a: u64, b: u64| half::bf16::from_f64(v(a) + v(b)).to_bits() as u64;
    add(old, data) | add(old >> 16, data >> 16) << 16
}

/// A flat address in the LDS aperture: its LDS offset (flat_* only).
fn flat_lds(flat: bool, a: u64, ctx: &Ctx) -> Option<u32> {
    (flat && (a >> 32) as u32 == ctx.shared_base_hi).then_some(a as u32)
}

fn mem_read(
    ctx: &mut Ctx,
    lane: usize,
    flat: bool,
    a: u64,
    buf: &mut [u8],
) -> Result<(), crate::memory::Unmapped> {
    if let Some(l) = flat_lds(flat, a, ctx) {
        ctx.trace
            .note(lane, Space::Lds, AccessKind::Read, l as u64, buf.len());
        ctx.lds.read_bytes(l, buf);
        return Ok(());
    }
    ctx.trace
        .note(lane, Space::Global, AccessKind::Read, a, buf.len());
    ctx.mem.read(a, buf)
}

fn mem_write(
    ctx: &mut Ctx,
    lane: usize,
    flat: bool,
    a: u64,
    bytes: &[u8],
) -> Result<(), crate::memory::Unmapped> {
    if let Some(l) = flat_lds(flat, a, ctx) {
        ctx.trace
            .note(lane, Space::Lds, AccessKind::Write, l as u64, bytes.len());
        ctx.lds.write_bytes(l, bytes);
        return Ok(());
    }
    ctx.trace
        .note(lane, Space::Global, AccessKind::Write, a, bytes.len());
    ctx.mem.write(a, bytes)
}

/// Whether an atomic returns the old value: `glc` (gfx9, gfx11), `sc0`
/// (gfx940+), `th:TH_ATOMIC_RETURN` (gfx12).
fn atomic_returns(ins: &Instruction) -> bool {
    ins.has("glc") || ins.has("sc0") || ins.modifier("th").is_some_and(|t| t.contains("RETURN"))
}

/// global_* and flat_* loads, stores and atomics; flat addresses in the
/// LDS aperture (`src_shared_base`) go to LDS.
/// gfx1250's tensor DMA (`tensor_load_to_lds`, `tensor_store_from_lds`):
/// the descriptor in the SGPR groups of its operands, the copy as
/// [`crate::tensor`] defines it, complete at issue (the sanitizer orders it
/// by TENSORcnt). The wave issues it once, whatever EXEC holds (its
/// operands are SGPRs), except that an EXEC of 0 is refused: whether the
/// hardware then copies is not known here. The accesses are noted on lane
/// 0. A descriptor field the emulator does not model, or an LDS range past
/// the allocation, is refused naming it.
fn tensor_dma(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let load = ins.mnemonic == "tensor_load_to_lds";
    if w.exec() == 0 {
        return unsup("a tensor DMA with EXEC 0 (whether it copies is not known)");
    }
    // `null` groups read as zeros (llvm-project PR 200911).
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for (k, src) in ins.ops.iter().enumerate() {
        let Operand::Reg {
            file: RegFile::S,
            index,
            count,
        } = src.op
        else {
            return unsup(format!("tensor DMA operand {} not an SGPR group", k + 1));
        };
        if w.is_null(index as usize) {
            groups.push(vec![0; count as usize]);
        } else {
            groups.push(w.sregs(index, count as usize)?.to_vec());
        }
    }
    let want = [4, 8, 4, 4];
    if !(groups.len() == 2 || groups.len() == 4)
        || groups.iter().zip(want).any(|(g, n)| g.len() != n)
    {
        return unsup("tensor DMA operands other than SGPR groups of 4, 8 (and 4, 4)");
    }
    let refs: Vec<&[u32]> = groups.iter().map(|g| g.as_slice()).collect();
    let d = crate::tensor::Descriptor::parse(&refs, load).map_err(Stop::Unsupported)?;
    if d.pred != 0 {
        // The workgroup's flat rank (IB_STS2[24:21]) and the cluster's size
        // (ttmp6[27:24] is the highest rank).
        let cluster = w
            .hwregs
            .clustered()
            .then(|| (w.hwregs.ib_sts2 >> 21 & 0xf, (w.s[108 + 6] >> 24 & 0xf) + 1));
        crate::tensor::check_multicast(d.multicast, cluster)
            .map_err(|e| Stop::Fault(None, format!("tensor DMA: {e}")))?;
    }
    let size = ctx.lds.data.len() as u64;
    if d.count() > 0 && d.lds as u64 + d.lds_span() > size {
        return Err(Stop::Fault(
            None,
            format!(
                "tensor DMA LDS range {:#x}..{:#x} past the workgroup's {size} bytes of LDS (what hardware does there is not modelled)",
                d.lds,
                d.lds as u64 + d.lds_span()
            ),
        ));
    }
    let n = d.size as usize;
    let mut buf = vec![0u8; n];
    ctx.lds.at_lane(0);
    for (global, lds) in d.elements() {
        if load {
            match global {
                Some(a) => {
                    ctx.trace.note(0, Space::Global, AccessKind::Read, a, n);
                    ctx.mem
                        .read(a, &mut buf)
                        .map_err(|e| Stop::Fault(None, format!("tensor DMA: {e}")))?;
                }
                None => buf.fill(0),
            }
            ctx.trace
                .note(0, Space::Lds, AccessKind::Write, lds as u64, n);
            ctx.lds.write_bytes(lds, &buf);
        } else if let Some(a) = global {
            ctx.trace
                .note(0, Space::Lds, AccessKind::Read, lds as u64, n);
            ctx.lds.read_bytes(lds, &mut buf);
            ctx.trace.note(0, Space::Global, AccessKind::Write, a, n);
            ctx.mem
                .write(a, &buf)
                .map_err(|e| Stop::Fault(None, format!("tensor DMA: {e}")))?;
        }
    }
    Ok(())
}

fn global(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let m = ins.mnemonic.as_str();
    // gfx12's cache invalidate/write-back: memory here has no caches.
    if matches!(m, "global_inv" | "global_wb" | "global_wbinv") {
        return Ok(());
    }
    if m.starts_with("tensor_") {
        return tensor_dma(w, ins, ctx);
    }
    // gfx1250's multicast loads (`cluster_load_b{32,64,128}`,
    // `cluster_load_async_to_lds_b{8,32,64,128}`; the mask of flat ranks in
    // M0 bits 15:0): every workgroup the mask selects issues its own
    // matching request and receives its own copy (rocJITsu's functional
    // model; comgr's hotswap runs them as the `global_load_` forms), so one
    // runs as the global load of the same name whose issuer's rank must be
    // in the mask ([`crate::tensor::check_mask`]).
    if m.starts_with("cluster_load_") {
        let m0 = w.m0();
        if m0 >> 16 != 0 {
            return unsup(
                "a cluster load with M0 bits 31:16 set (the multicast mask is bits 15:0)",
            );
        }
        let cluster = w
            .hwregs
            .clustered()
            .then(|| (w.hwregs.ib_sts2 >> 21 & 0xf, (w.s[108 + 6] >> 24 & 0xf) + 1));
        crate::tensor::check_mask(m0, cluster, "M0 bits 15:0")
            .map_err(|e| Stop::Fault(None, format!("`{}`: {e}", ins.text)))?;
    }
    let flat = m.starts_with("flat_");
    let rest = m.split_once('_').map(|x| x.1).unwrap_or("");
    let offset = match ins.modifier("offset") {
        Some(o) => parse_int(o)?,
        None => 0,
    };
    let ops = &ins.ops;
    let exec = w.exec();
    // gfx1250's `scale_offset`: the 32-bit VGPR offset of the `saddr` form
    // is multiplied by the access's size in bytes (the immediate offset is
    // not), and gfx1250 sign-extends that VGPR offset (LLVM's GCNSubtarget.h
    // `hasScaleOffset`, `hasSignedGVSOffset`; AMD's rocjitsu
    // `flat_global_calculate_addresses`).
    let scaled = ins.has("scale_offset");
    let signed_voffset = w.numbering == crate::decode::Numbering::GFX1250;
    let addr_of = |w: &Wave,
                   ctx: &Ctx,
                   vaddr: &Src,
                   saddr: Option<&Src>,
                   lane: usize,
                   size: usize|
     -> R<u64> {
        match saddr {
            Some(s) if !matches!(s.op, Operand::Off) => {
                let base = w.sread64(s, ctx)?;
                let off = w.vread(vaddr, lane, Ty::B32, ctx)?;
                let off = if signed_voffset {
                    off as u32 as i32 as i64 as u64
                } else {
                    off
                };
                let scale = if scaled { size as u64 } else { 1 };
                Ok(base
                    .wrapping_add(off.wrapping_mul(scale))
                    .wrapping_add(offset as u64))
            }
            _ if scaled => unsup("scale_offset without an SGPR base (saddr)"),
            _ => Ok(w
                .vread(vaddr, lane, Ty::B64, ctx)?
                .wrapping_add(offset as u64)),
        }
    };
    let fault =
        |lane: usize, e: crate::memory::Unmapped| Stop::Fault(Some(lane as u32), e.to_string());
    // gfx1250's asynchronous transfers: `global_load_async_to_lds_bN
    // vlds, vaddr, saddr` and `global_store_async_from_lds_bN vaddr, vlds,
    // saddr`. Each lane moves N bits between its global address and the
    // LDS address in its `vlds` VGPR; the instruction offset is added to
    // both (the LDS one wraps at 32 bits). An LDS address outside the
    // allocation drops the load's write and stores zeros (rocjitsu's
    // `cdna5::async_lds_lane_address`). They count on ASYNCcnt
    // ([`crate::waitcnt`]); here they complete at issue.
    let async_kind = rest
        .strip_prefix("load_async_to_lds_")
        .map(|k| (k, true))
        .or_else(|| {
            rest.strip_prefix("store_async_from_lds_")
                .map(|k| (k, false))
        });
    if let Some((kind, load)) = async_kind {
        let size = match kind {
            "b8" => 1,
            "b32" => 4,
            "b64" => 8,
            "b128" => 16,
            _ => return unsup(""),
        };
        let (vlds, vaddr) = if load {
            (opnd(ops, 0)?, opnd(ops, 1)?)
        } else {
            (opnd(ops, 1)?, opnd(ops, 0)?)
        };
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = addr_of(w, ctx, vaddr, ops.get(2), lane, size)?;
            let l = (w.vread(vlds, lane, Ty::B32, ctx)? as u32).wrapping_add(offset as u32);
            let mut buf = vec![0u8; size];
            ctx.lds.at_lane(lane);
            if load {
                ctx.trace
                    .note(lane, Space::Global, AccessKind::Read, a, size);
                ctx.mem.read(a, &mut buf).map_err(|e| fault(lane, e))?;
                ctx.trace
                    .note(lane, Space::Lds, AccessKind::Write, l as u64, size);
                ctx.lds.write_bytes(l, &buf);
            } else {
                ctx.trace
                    .note(lane, Space::Lds, AccessKind::Read, l as u64, size);
                ctx.lds.read_bytes(l, &mut buf);
                ctx.trace
                    .note(lane, Space::Global, AccessKind::Write, a, size);
                ctx.mem.write(a, &buf).map_err(|e| fault(lane, e))?;
            }
        }
        return Ok(());
    }
    // gfx940+ spell LDS DMA `global_load_lds_dword`, gfx90a `global_load_dword ... lds`.
    let lds_kind = rest
        .strip_prefix("load_lds_")
        .or_else(|| rest.strip_prefix("load_").filter(|_| ins.has("lds")));
    if let Some(kind) = lds_kind {
        let (size, _) = mem_size(kind).ok_or_else(|| Stop::Unsupported(String::new()))?;
        if size < 4 {
            return unsup("LDS DMA of this size");
        }
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = addr_of(w, ctx, opnd(ops, 0)?, ops.get(1), lane, size)?;
            let mut buf = vec![0u8; size];
            ctx.trace
                .note(lane, Space::Global, AccessKind::Read, a, size);
            ctx.mem.read(a, &mut buf).map_err(|e| fault(lane, e))?;
            let l = w
                .m0()
                .wrapping_add(offset as u32)
                .wrapping_add((lane * size) as u32);
            ctx.trace
                .note(lane, Space::Lds, AccessKind::Write, l as u64, size);
            ctx.lds.at_lane(lane);
            ctx.lds.write_bytes(l, &buf);
        }
        return Ok(());
    }
    // Transposing loads: gfx1250's `global_load_tr16_b128` and
    // `global_load_tr8_b64` read at each lane's address, then exchange
    // elements across lanes as `ds_load_tr16_b128`/`ds_load_tr8_b64` do
    // ([`ds_read_tr`]; AMD's rocjitsu test `Gfx1250MemoryIsaTranspose`
    // expects the global and LDS forms to give the same registers).
    if let Some(tr) = rest.strip_prefix("load_tr") {
        let how = match tr {
            "16_b128" => Transpose::Gfx1250Tr16,
            "8_b64" => Transpose::Gfx1250Tr8,
            "4_b64" | "6_b96" => return unsup(TR46_REFUSED),
            _ => {
                return unsup(
                    "gfx12's transposing global loads (`global_load_tr_b64`, \
                     `global_load_tr_b128`): no source here gives their lane maps",
                )
            }
        };
        let (_, bytes) = how.shape();
        let mut raw = [0u128; LANES];
        for (lane, r) in raw.iter_mut().enumerate() {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = addr_of(w, ctx, opnd(ops, 1)?, ops.get(2), lane, bytes)?;
            let mut b = [0u8; 16];
            mem_read(ctx, lane, false, a, &mut b[..bytes]).map_err(|e| fault(lane, e))?;
            *r = u128::from_le_bytes(b);
        }
        return transpose_into(w, ins, &raw, how);
    }
    if let Some(kind) = rest.strip_prefix("load_") {
        let (size, signed, d16) = load_kind(kind)?;
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = addr_of(w, ctx, opnd(ops, 1)?, ops.get(2), lane, size)?;
            let mut buf = vec![0u8; size];
            if flat && (a >> 32) as u32 == ctx.private_base_hi {
                ctx.trace.note(
                    lane,
                    Space::Private,
                    AccessKind::Read,
                    (a as u32) as u64,
                    buf.len(),
                );
                w.private_read(lane, a as u32, &mut buf)?;
            } else {
                ctx.lds.at_lane(lane);
                mem_read(ctx, lane, flat, a, &mut buf).map_err(|e| fault(lane, e))?;
            }
            load_into(w, opnd(ops, 0)?, lane, &buf, signed, d16)?;
        }
        return Ok(());
    }
    if let Some(kind) = rest.strip_prefix("store_") {
        let (kind, hi) = match kind.strip_suffix("_d16_hi") {
            Some(k) => (k, true),
            None => (kind, false),
        };
        let (size, _) = mem_size(kind).ok_or_else(|| Stop::Unsupported(String::new()))?;
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = addr_of(w, ctx, opnd(ops, 0)?, ops.get(2), lane, size)?;
            let data = store_bytes(w, opnd(ops, 1)?, lane, size, hi)?;
            if flat && (a >> 32) as u32 == ctx.private_base_hi {
                ctx.trace.note(
                    lane,
                    Space::Private,
                    AccessKind::Write,
                    (a as u32) as u64,
                    data.len(),
                );
                w.private_write(lane, a as u32, &data)?;
            } else {
                ctx.lds.at_lane(lane);
                mem_write(ctx, lane, flat, a, &data).map_err(|e| fault(lane, e))?;
            }
        }
        return Ok(());
    }
    if let Some(kind) = rest.strip_prefix("atomic_") {
        let (kind, size) = match kind.strip_suffix("_x2") {
            Some(k) => (k, 8),
            None => (kind, if kind.ends_with("f64") { 8 } else { 4 }),
        };
        let ret = atomic_returns(ins);
        let (vdst, vaddr, data, saddr) = if ret {
            (
                Some(opnd(ops, 0)?),
                opnd(ops, 1)?,
                opnd(ops, 2)?,
                ops.get(3),
            )
        } else {
            (None, opnd(ops, 0)?, opnd(ops, 1)?, ops.get(2))
        };
        let cmpswap = kind == "cmpswap" || kind == "cmpswap_f32";
        if atomic_op(kind, size, 0, 0, 0).is_none() {
            return unsup("");
        }
        let ty = if size == 8 { Ty::B64 } else { Ty::B32 };
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = addr_of(w, ctx, vaddr, saddr, lane, size)?;
            let (d, c) = if cmpswap {
                // data = {src, cmp}: two values of `size` in consecutive registers.
                let (file, i) = reg_of(data)?;
                let words = size / 4;
                let mut src = 0u64;
                let mut cmp = 0u64;
                for k in 0..words {
                    src |= (w.vreg(file, i + k)?[lane] as u64) << (32 * k);
                    cmp |= (w.vreg(file, i + words + k)?[lane] as u64) << (32 * k);
                }
                (src, cmp)
            } else {
                (w.vread(data, lane, ty, ctx)?, 0)
            };
            let old = if let Some(l) = flat_lds(flat, a, ctx) {
                ctx.trace
                    .note(lane, Space::Lds, AccessKind::Atomic, l as u64, size);
                ctx.lds.at_lane(lane);
                let old = ctx.lds.read(l, size);
                ctx.lds
                    .write(l, size, atomic_op(kind, size, old, d, c).unwrap_or(old));
                old
            } else {
                ctx.trace
                    .note(lane, Space::Global, AccessKind::Atomic, a, size);
                ctx.mem
                    .atomic(a, size, |old| {
                        atomic_op(kind, size, old, d, c).unwrap_or(old)
                    })
                    .map_err(|e| fault(lane, e))?
            };
            if let Some(v) = vdst {
                w.vwrite(v, lane, ty, old)?;
            }
        }
        return Ok(());
    }
    unsup("")
}

/// scratch_* loads and stores (gfx9 flat scratch; gfx940+ architected):
/// the lane's private memory at `vaddr + saddr + offset`, either address
/// operand `off`.
fn scratch(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let m = ins.mnemonic.as_str();
    let ops = &ins.ops;
    let offset = match ins.modifier("offset") {
        Some(o) => parse_int(o)?,
        None => 0,
    };
    let exec = w.exec();
    // gfx1250's `scale_offset` scales the VGPR offset by the access's size
    // (AMD's rocjitsu, `flat_calculate_addresses` for VSCRATCH).
    let scaled = ins.has("scale_offset");
    let addr_of = |w: &Wave,
                   ctx: &Ctx,
                   vaddr: &Src,
                   saddr: Option<&Src>,
                   lane: usize,
                   size: usize|
     -> R<u32> {
        let v = match vaddr.op {
            Operand::Off if scaled => return unsup("scale_offset without a VGPR offset"),
            Operand::Off => 0,
            _ => (w.vread(vaddr, lane, Ty::B32, ctx)? as u32).wrapping_mul(if scaled {
                size as u32
            } else {
                1
            }),
        };
        let s = match saddr.map(|s| &s.op) {
            None | Some(Operand::Off) => 0,
            Some(_) => w.sread(saddr.unwrap_or(vaddr), ctx)?,
        };
        Ok(v.wrapping_add(s).wrapping_add(offset as u32))
    };
    if let Some(kind) = m.strip_prefix("scratch_load_") {
        if kind.starts_with("lds") {
            return unsup("scratch LDS DMA");
        }
        let (size, signed, d16) = load_kind(kind)?;
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = addr_of(w, ctx, opnd(ops, 1)?, ops.get(2), lane, size)?;
            let mut buf = vec![0u8; size];
            ctx.trace.note(
                lane,
                Space::Private,
                AccessKind::Read,
                (a) as u64,
                buf.len(),
            );
            w.private_read(lane, a, &mut buf)?;
            load_into(w, opnd(ops, 0)?, lane, &buf, signed, d16)?;
        }
        return Ok(());
    }
    if let Some(kind) = m.strip_prefix("scratch_store_") {
        let (kind, hi) = match kind.strip_suffix("_d16_hi") {
            Some(k) => (k, true),
            None => (kind, false),
        };
        let (size, _) = mem_size(kind).ok_or_else(|| Stop::Unsupported(String::new()))?;
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = addr_of(w, ctx, opnd(ops, 0)?, ops.get(2), lane, size)?;
            let data = store_bytes(w, opnd(ops, 1)?, lane, size, hi)?;
            ctx.trace.note(
                lane,
                Space::Private,
                AccessKind::Write,
                (a) as u64,
                data.len(),
            );
            w.private_write(lane, a, &data)?;
        }
        return Ok(());
    }
    unsup("")
}

/// MUBUF buffer loads and stores with V# range checking.
pub(crate) fn buffer(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let m = ins.mnemonic.as_str();
    // LLVM's assembler refuses `scale_offset` on MUBUF ("scale_offset is
    // not supported for this instruction"): no source here scales a buffer
    // offset.
    if ins.has("scale_offset") {
        return unsup("scale_offset on a buffer access");
    }
    let ops = &ins.ops;
    let offen = ins.has("offen");
    let idxen = ins.has("idxen");
    let inst_off = match ins.modifier("offset") {
        Some(o) => parse_int(o)? as u64,
        None => 0,
    };
    let (store, kind) = if let Some(k) = m.strip_prefix("buffer_load_") {
        (false, k)
    } else if let Some(k) = m.strip_prefix("buffer_store_") {
        (true, k)
    } else if let Some(op) = m.strip_prefix("buffer_atomic_") {
        return buffer_atomic(w, ins, ctx, op, inst_off);
    } else if matches!(
        m,
        "buffer_wbinvl1" | "buffer_wbinvl1_vol" | "buffer_inv" | "buffer_wbl2"
    ) {
        return Ok(());
    } else {
        return unsup("");
    };
    let (kind, d16) = match kind.strip_suffix("_d16_hi") {
        Some(k) => (k, Some(true)),
        None => match kind.strip_suffix("_d16") {
            Some(k) => (k, Some(false)),
            None => (kind, None),
        },
    };
    let (size, signed) = mem_size(kind).ok_or_else(|| Stop::Unsupported(String::new()))?;
    // LDS DMA (`lds`): no vdata; lane L's data goes to LDS at
    // M0 + offset + L·size (LLVM: the immediate offset applies to both
    // the memory and the LDS address).
    let lds_dma = ins.has("lds");
    if lds_dma && (store || size < 4) {
        return unsup("LDS DMA of this size");
    }
    // Operands: vdata, vaddr (or off), srsrc, soffset; LDS DMA: vaddr, srsrc, soffset.
    let (vdata, vaddr, srsrc, soffset) = if lds_dma {
        let off = ins.ops.first().filter(|_| ops.len() == 3);
        let off = off.ok_or_else(|| Stop::Unsupported("operands".into()))?;
        (off, off, opnd(ops, 1)?, opnd(ops, 2)?)
    } else {
        (opnd(ops, 0)?, opnd(ops, 1)?, opnd(ops, 2)?, opnd(ops, 3)?)
    };
    let Operand::Reg { index, .. } = srsrc.op else {
        return unsup("resource");
    };
    let v = w.sregs(index, 4)?;
    if w.numbering == crate::decode::Numbering::GFX1250 {
        let v = [v[0], v[1], v[2], v[3]];
        return buffer_gfx1250(
            w,
            ins,
            ctx,
            v,
            [vdata, vaddr, soffset],
            store,
            (size, signed, d16),
        );
    }
    let base = v[0] as u64 | ((v[1] & 0xffff) as u64) << 32;
    let stride = ((v[1] >> 16) & 0x3fff) as u64;
    let num_records = v[2] as u64;
    let private = v[1] & 0xffff_0000 == PRIVATE_VSHARP_WORD1
        && v[3] & PRIVATE_VSHARP_WORD3 != 0
        && w.private_size > 0;
    if v[1] >> 31 != 0 && !private && !w.rdna() {
        return unsup("swizzled buffers (V# swizzle enable)");
    }
    let rdna_oob = rdna_oob_select(w, v)?;
    let soff = w.sread(soffset, ctx)? as u64;
    let exec = w.exec();
    if private {
        // Scratch through the private segment buffer (gfx90a): the lane's
        // private memory at base + soffset + voffset + offset.
        if idxen || lds_dma {
            return unsup("indexed or LDS DMA access to the private segment buffer");
        }
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let voff = if offen {
                w.vread(vaddr, lane, Ty::B32, ctx)?
            } else {
                0
            };
            let a = (base + soff + voff + inst_off) as u32;
            if store {
                let bytes = store_bytes(w, vdata, lane, size, d16 == Some(true))?;
                ctx.trace.note(
                    lane,
                    Space::Private,
                    AccessKind::Write,
                    (a) as u64,
                    bytes.len(),
                );
                w.private_write(lane, a, &bytes)?;
            } else {
                let mut bytes = vec![0u8; size];
                ctx.trace.note(
                    lane,
                    Space::Private,
                    AccessKind::Read,
                    (a) as u64,
                    bytes.len(),
                );
                w.private_read(lane, a, &mut bytes)?;
                load_into(w, vdata, lane, &bytes, signed, d16)?;
            }
        }
        return Ok(());
    }
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let (vidx, voff) = match (idxen, offen) {
            (true, true) => {
                let (f, i) = reg_of(vaddr)?;
                (w.vreg(f, i)?[lane] as u64, w.vreg(f, i + 1)?[lane] as u64)
            }
            (true, false) => (w.vread(vaddr, lane, Ty::B32, ctx)?, 0),
            (false, true) => (0, w.vread(vaddr, lane, Ty::B32, ctx)?),
            (false, false) => (0, 0),
        };
        let offset = voff + inst_off;
        let addr0 = base + soff + vidx * stride + offset;
        // Range check per dword (per element for sub-dword accesses).
        let chunk = size.min(4);
        let mut bytes = vec![0u8; size];
        if store {
            bytes = store_bytes(w, vdata, lane, size, d16 == Some(true))?;
        }
        for k in (0..size).step_by(chunk) {
            let end = offset + (k + chunk) as u64;
            let in_range = if let Some(oob) = rdna_oob {
                rdna_in_range(oob, vidx, end, stride, num_records)
            } else if stride == 0 || !idxen {
                offset + (k + chunk) as u64 <= num_records.saturating_sub(0)
                    && offset + k as u64 + chunk as u64 <= num_records
            } else {
                vidx < num_records && offset + (k + chunk) as u64 <= stride
            };
            if !in_range {
                continue;
            }
            let a = addr0 + k as u64;
            let kind = if store {
                AccessKind::Write
            } else {
                AccessKind::Read
            };
            ctx.trace.note(lane, Space::Global, kind, a, chunk);
            if store {
                ctx.mem.write(a, &bytes[k..k + chunk]).map_err(|e| {
                    Stop::Fault(
                        Some(lane as u32),
                        format!("buffer store within num_records: {e}"),
                    )
                })?;
            } else {
                ctx.mem.read(a, &mut bytes[k..k + chunk]).map_err(|e| {
                    Stop::Fault(
                        Some(lane as u32),
                        format!("buffer load within num_records: {e}"),
                    )
                })?;
            }
        }
        if lds_dma {
            let a = w
                .m0()
                .wrapping_add(inst_off as u32)
                .wrapping_add((lane * size) as u32);
            ctx.trace
                .note(lane, Space::Lds, AccessKind::Write, a as u64, size);
            ctx.lds.at_lane(lane);
            ctx.lds.write_bytes(a, &bytes);
        } else if !store {
            load_into(w, vdata, lane, &bytes, signed, d16)?;
        }
    }
    Ok(())
}

/// gfx1250's buffer resource (V#), 128 bits (`r` is the four SGPRs, bit
/// `b` of the descriptor is bit `b % 32` of word `b / 32`):
///
/// - base address: bits 56:0 (word 0, word 1 bits 24:0);
/// - NUM_RECORDS, in bytes: bits 101:57 (45 bits: word 1 bits 31:25 are
///   its low 7 bits, word 2 its bits 38:7, word 3 bits 5:0 its top 6);
/// - bits 107:102 reserved; STRIDE: bits 121:108 (word 3 bits 25:12).
///
/// These are LLVM's (commit 2195fe7e018d, "\[AMDGPU\] Add the support for
/// 45-bit buffer resource", #159702), agreed by AMD's rocjitsu emulator
/// (ROCm/rocm-systems `emulation/rocjitsu/.../cdna5/addr_calc.cpp`,
/// `decode_buffer_resource`), which also gives the top bits: stride scale
/// 123:122 (×1, 4, 8, 32), SWIZZLE_ENABLE 124, a one-bit OOB_SELECT 125,
/// TYPE 127:126. Those are modelled only at 0 (aiter's kernels' value);
/// any other value is refused by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gfx1250Vsharp {
    /// The 57-bit base address.
    pub base: u64,
    /// NUM_RECORDS: the buffer's size in bytes (45 bits).
    pub num_records: u64,
    /// STRIDE (14 bits) times the stride scale.
    pub stride: u64,
}

impl Gfx1250Vsharp {
    /// Decodes the four words, or names the field this emulator does not
    /// model (swizzle, OOB_SELECT 1, a non-buffer TYPE, reserved bits set).
    pub fn decode(r: [u32; 4]) -> Result<Gfx1250Vsharp, String> {
        let base = r[0] as u64 | ((r[1] & 0x01ff_ffff) as u64) << 32;
        let num_records = ((r[1] >> 25) as u64) | (r[2] as u64) << 7 | ((r[3] & 0x3f) as u64) << 39;
        let raw_stride = ((r[3] >> 12) & 0x3fff) as u64;
        let scale = [1, 4, 8, 32][(r[3] >> 26 & 3) as usize];
        let field = |what: &str| {
            Err(format!(
                "gfx1250's buffer descriptor (V#) with {what} (words {:#010x} {:#010x} {:#010x} {:#010x}): not modelled",
                r[0], r[1], r[2], r[3]
            ))
        };
        if r[3] >> 6 & 0x3f != 0 {
            return field("reserved bits 107:102 set");
        }
        if r[3] >> 28 & 1 != 0 {
            return field("SWIZZLE_ENABLE (bit 124)");
        }
        if r[3] >> 29 & 1 != 0 {
            return field("OOB_SELECT 1 (bit 125)");
        }
        if r[3] >> 30 != 0 {
            return field("a TYPE other than buffer (bits 127:126)");
        }
        Ok(Gfx1250Vsharp {
            base,
            num_records,
            stride: raw_stride * scale,
        })
    }

    /// Whether the `size` bytes at buffer offset `offset` are within
    /// NUM_RECORDS. The offset is index × stride, plus the VGPR offset and
    /// the instruction's, and the SGPR offset. This is rocjitsu's rule for
    /// OOB_SELECT 0: the whole byte range must lie below NUM_RECORDS; the
    /// executor checks each dword.
    pub fn in_range(&self, offset: u64, size: u64) -> bool {
        offset
            .checked_add(size)
            .is_some_and(|end| end <= self.num_records)
    }
}

/// A MUBUF load or store through a gfx1250 V# ([`Gfx1250Vsharp`]). Each
/// dword (each element below a dword) of a lane is range-checked: out of
/// range it reads 0 and its write is dropped. Whether the SGPR offset
/// counts in the check differs between the sources (rocjitsu, after the
/// CDNA5 ISA's "Range Checking", adds it; LLVM's lowering, per rocjitsu's
/// PR #10362, does not): an access the two readings judge differently is
/// refused. Not modelled: LDS DMA, swizzle, the format (atomics:
/// `buffer_atomic`).
#[allow(clippy::too_many_arguments)]
fn buffer_gfx1250(
    w: &mut Wave,
    ins: &Instruction,
    ctx: &mut Ctx,
    r: [u32; 4],
    [vdata, vaddr, soffset]: [&Src; 3],
    store: bool,
    (size, signed, d16): (usize, bool, Option<bool>),
) -> R<()> {
    if ins.has("lds") {
        return unsup("LDS DMA through gfx1250's buffer descriptor");
    }
    let vs = Gfx1250Vsharp::decode(r).map_err(Stop::Unsupported)?;
    let (offen, idxen) = (ins.has("offen"), ins.has("idxen"));
    let inst_off = match ins.modifier("offset") {
        Some(o) => parse_int(o)? as u64,
        None => 0,
    };
    let soff = w.sread(soffset, ctx)? as u64;
    let exec = w.exec();
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let (vidx, voff) = match (idxen, offen) {
            (true, true) => {
                let (f, i) = reg_of(vaddr)?;
                (w.vreg(f, i)?[lane] as u64, w.vreg(f, i + 1)?[lane] as u64)
            }
            (true, false) => (w.vread(vaddr, lane, Ty::B32, ctx)?, 0),
            (false, true) => (0, w.vread(vaddr, lane, Ty::B32, ctx)?),
            (false, false) => (0, 0),
        };
        // The 45-bit buffer offset (rocjitsu wraps it to 45 bits).
        let offset = (vidx * vs.stride + voff + inst_off) & ((1 << 45) - 1);
        let chunk = size.min(4);
        let mut bytes = vec![0u8; size];
        if store {
            bytes = store_bytes(w, vdata, lane, size, d16 == Some(true))?;
        }
        for k in (0..size).step_by(chunk) {
            let with_soffset = vs.in_range(soff + offset + k as u64, chunk as u64);
            if with_soffset != vs.in_range(offset + k as u64, chunk as u64) {
                return unsup(format!(
                    "a gfx1250 buffer access whose range check depends on whether the SGPR offset ({soff:#x}) counts (lane {lane}, buffer offset {:#x}, NUM_RECORDS {:#x}): the sources differ",
                    offset + k as u64,
                    vs.num_records
                ));
            }
            if !with_soffset {
                continue;
            }
            let a = vs.base + soff + offset + k as u64;
            let kind = if store {
                AccessKind::Write
            } else {
                AccessKind::Read
            };
            ctx.trace.note(lane, Space::Global, kind, a, chunk);
            let res = if store {
                ctx.mem.write(a, &bytes[k..k + chunk])
            } else {
                ctx.mem.read(a, &mut bytes[k..k + chunk])
            };
            res.map_err(|e| {
                Stop::Fault(
                    Some(lane as u32),
                    format!(
                        "buffer {} within NUM_RECORDS {:#x} (gfx1250 V#, buffer offset {:#x}): {e}",
                        if store { "store" } else { "load" },
                        vs.num_records,
                        offset + k as u64
                    ),
                )
            })?;
        }
        if !store {
            load_into(w, vdata, lane, &bytes, signed, d16)?;
        }
    }
    Ok(())
}

/// gfx11's V# word 3: OOB_SELECT (bits 29:28) chooses the range check
/// ([`rdna_in_range`]); `None` off RDNA. Word 1 bits 31:30 are
/// SWIZZLE_ENABLE and bit 23 of word 3 ADD_TID_ENABLE: refused.
fn rdna_oob_select(w: &Wave, v: &[u32]) -> R<Option<u32>> {
    if !w.rdna() {
        return Ok(None);
    }
    if w.numbering == crate::decode::Numbering::GFX1250 {
        // gfx1250 has its own V# ([`Gfx1250Vsharp`]); its callers take
        // that path first. gfx11's rule would drop aiter's stores.
        return unsup("gfx1250's buffer descriptor (V#) under gfx11's range check");
    }
    if v[1] >> 30 != 0 || v[3] >> 23 & 1 != 0 {
        return unsup("swizzled buffers or ADD_TID_ENABLE on RDNA");
    }
    Ok(Some(v[3] >> 28 & 3))
}

/// RDNA3 (gfx11) out-of-range rule by OOB_SELECT: 0 `index >= NUM_RECORDS
/// || offset + payload > STRIDE`, 1 `index >= NUM_RECORDS`, 2
/// `NUM_RECORDS == 0`, 3 `offset + payload > NUM_RECORDS` (no swizzle):
/// AMD's RDNA3 ISA guide, "Range Checking", as Mesa RADV restates it for
/// GFX11 (radv_make_texel_buffer_descriptor). The index is the VGPR index
/// (0 without `idxen`); `end` is the VGPR offset plus the instruction's
/// plus the payload's bytes up to the dword checked.
fn rdna_in_range(oob: u32, vidx: u64, end: u64, stride: u64, num_records: u64) -> bool {
    match oob {
        0 => vidx < num_records && end <= stride,
        1 => vidx < num_records,
        2 => num_records != 0,
        _ => end <= num_records,
    }
}

/// MUBUF atomics: `buffer_atomic_OP{,_x2}` (the integer operations, `add_f32`,
/// `add_f64`, `min/max_f64`, `pk_add_f16`, `pk_add_bf16`, `cmpswap`). An
/// element past `num_records` is not accessed and returns 0. With
/// `glc`/`sc0` the old value is written to vdata (`cmpswap`: its first half).
fn buffer_atomic(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx, op: &str, inst_off: u64) -> R<()> {
    let ops = &ins.ops;
    if ops.len() != 4 {
        return unsup("operands");
    }
    let (op, size) = match op.strip_suffix("_x2") {
        Some(k) => (k, 8usize),
        None => (op, if op.ends_with("f64") { 8 } else { 4 }),
    };
    if atomic_op(op, size, 0, 0, 0).is_none() {
        return unsup("");
    }
    let ret = atomic_returns(ins);
    let (offen, idxen) = (ins.has("offen"), ins.has("idxen"));
    let (vdata, vaddr, srsrc, soffset) =
        (opnd(ops, 0)?, opnd(ops, 1)?, opnd(ops, 2)?, opnd(ops, 3)?);
    let Operand::Reg { index, .. } = srsrc.op else {
        return unsup("resource");
    };
    let v = w.sregs(index, 4)?;
    // gfx1250's V# ([`Gfx1250Vsharp`]): an atomic is range-checked all or
    // nothing (rocjitsu, ROCm/rocm-systems PR #10362: "atomics remain
    // all-or-nothing").
    let g1250 = if w.numbering == crate::decode::Numbering::GFX1250 {
        Some(Gfx1250Vsharp::decode([v[0], v[1], v[2], v[3]]).map_err(Stop::Unsupported)?)
    } else {
        None
    };
    let (base, stride, num_records) = match g1250 {
        Some(vs) => (vs.base, vs.stride, vs.num_records),
        None => (
            v[0] as u64 | ((v[1] & 0xffff) as u64) << 32,
            ((v[1] >> 16) & 0x3fff) as u64,
            v[2] as u64,
        ),
    };
    if g1250.is_none() && v[1] >> 31 != 0 && !w.rdna() {
        return unsup("swizzled buffers (V# swizzle enable)");
    }
    let rdna_oob = match g1250 {
        Some(_) => None,
        None => rdna_oob_select(w, v)?,
    };
    let soff = w.sread(soffset, ctx)? as u64;
    let (file, di) = reg_of(vdata)?;
    let words = size / 4;
    let exec = w.exec();
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let (vidx, voff) = match (idxen, offen) {
            (true, true) => {
                let (f, i) = reg_of(vaddr)?;
                (w.vreg(f, i)?[lane] as u64, w.vreg(f, i + 1)?[lane] as u64)
            }
            (true, false) => (w.vread(vaddr, lane, Ty::B32, ctx)?, 0),
            (false, true) => (0, w.vread(vaddr, lane, Ty::B32, ctx)?),
            (false, false) => (0, 0),
        };
        let mut offset = voff + inst_off;
        let in_range = if let Some(vs) = g1250 {
            // The 45-bit buffer offset; the SGPR offset is added below.
            offset = (vidx * stride + offset) & ((1 << 45) - 1);
            let with_soffset = vs.in_range(soff + offset, size as u64);
            if with_soffset != vs.in_range(offset, size as u64) {
                return unsup(format!(
                    "a gfx1250 buffer atomic whose range check depends on whether the SGPR offset ({soff:#x}) counts (lane {lane}, buffer offset {offset:#x}, NUM_RECORDS {num_records:#x}): the sources differ"
                ));
            }
            with_soffset
        } else if let Some(oob) = rdna_oob {
            rdna_in_range(oob, vidx, offset + size as u64, stride, num_records)
        } else if stride == 0 || !idxen {
            offset + size as u64 <= num_records
        } else {
            vidx < num_records && offset + size as u64 <= stride
        };
        let val = |k: usize| -> R<u64> {
            let mut x = 0u64;
            for j in 0..words {
                x |= (w.vreg(file, di + k * words + j)?[lane] as u64) << (32 * j);
            }
            Ok(x)
        };
        let src = val(0)?;
        let cmp = if op == "cmpswap" || op == "cmpswap_f32" {
            val(1)?
        } else {
            0
        };
        let old = if in_range {
            let a = match g1250 {
                Some(_) => base + soff + offset,
                None => base + soff + vidx * stride + offset,
            };
            ctx.trace
                .note(lane, Space::Global, AccessKind::Atomic, a, size);
            ctx.mem
                .atomic(a, size, |old| {
                    atomic_op(op, size, old, src, cmp).unwrap_or(old)
                })
                .map_err(|e| {
                    Stop::Fault(
                        Some(lane as u32),
                        format!("buffer atomic within num_records: {e}"),
                    )
                })?
        } else {
            0
        };
        if ret {
            for j in 0..words {
                w.vreg_mut(file, di + j)?[lane] = (old >> (32 * j)) as u32;
            }
        }
    }
    Ok(())
}

/// LDS (DS) instructions.
fn ds(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let m = ins.mnemonic.as_str();
    let ops = &ins.ops;
    let word = ins.words[0];
    let offset = word & 0xffff;
    let (off0, off1) = (word & 0xff, (word >> 8) & 0xff);
    if word >> 16 & 1 != 0 {
        return unsup("GDS");
    }
    let exec = w.exec();
    match m {
        "ds_bpermute_b32" | "ds_permute_b32" => {
            let mut addrs = [0u32; LANES];
            let mut data = [0u32; LANES];
            for lane in 0..LANES {
                addrs[lane] = w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32;
                data[lane] = w.vread(opnd(ops, 2)?, lane, Ty::B32, ctx)? as u32;
            }
            let mut out = [0u32; LANES];
            if m == "ds_bpermute_b32" {
                for lane in 0..LANES {
                    if exec >> lane & 1 != 0 {
                        let src = (addrs[lane].wrapping_add(offset) / 4 % w.wave_size) as usize;
                        out[lane] = if exec >> src & 1 != 0 { data[src] } else { 0 };
                    }
                }
            } else {
                for lane in 0..LANES {
                    if exec >> lane & 1 != 0 {
                        let dst = (addrs[lane].wrapping_add(offset) / 4 % w.wave_size) as usize;
                        out[dst] = data[lane];
                    }
                }
            }
            for (lane, &v) in out.iter().enumerate() {
                if exec >> lane & 1 != 0 {
                    w.vwrite(opnd(ops, 0)?, lane, Ty::B32, v as u64)?;
                }
            }
            return Ok(());
        }
        "ds_swizzle_b32" => {
            let mut data = [0u32; LANES];
            for (lane, d) in data.iter_mut().enumerate() {
                *d = w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32;
            }
            for lane in 0..LANES {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let src = if offset & 0x8000 != 0 {
                    lane / 4 * 4 + ((offset >> (2 * (lane % 4))) & 3) as usize
                } else {
                    let (and, or, xor) =
                        (offset & 0x1f, (offset >> 5) & 0x1f, (offset >> 10) & 0x1f);
                    (lane & 0x20) | (((lane as u32 & and) | or) ^ xor) as usize
                };
                let v = if exec >> src & 1 != 0 { data[src] } else { 0 };
                w.vwrite(opnd(ops, 0)?, lane, Ty::B32, v as u64)?;
            }
            return Ok(());
        }
        "ds_nop" => return Ok(()),
        "ds_read_b64_tr_b16" => return ds_read_tr(w, ins, ctx, offset, Transpose::Gfx950(16)),
        "ds_read_b64_tr_b8" => return ds_read_tr(w, ins, ctx, offset, Transpose::Gfx950(8)),
        "ds_read_b64_tr_b4" => return ds_read_tr(w, ins, ctx, offset, Transpose::Gfx950(4)),
        // gfx1250's (the only target with these names; wave32).
        "ds_load_tr16_b128" => return ds_read_tr(w, ins, ctx, offset, Transpose::Gfx1250Tr16),
        "ds_load_tr8_b64" => return ds_read_tr(w, ins, ctx, offset, Transpose::Gfx1250Tr8),
        "ds_load_tr4_b64" | "ds_load_tr6_b96" => return unsup(TR46_REFUSED),
        _ => {}
    }
    let rest = &m[3..];
    // Reads.
    if let Some(kind) = rest
        .strip_prefix("read_")
        .or_else(|| rest.strip_prefix("load_"))
    {
        let (kind, d16) = match kind.strip_suffix("_d16_hi") {
            Some(k) => (k, Some(true)),
            None => match kind.strip_suffix("_d16") {
                Some(k) => (k, Some(false)),
                None => (kind, None),
            },
        };
        let (size, signed) = mem_size(kind).ok_or_else(|| Stop::Unsupported(String::new()))?;
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            // The address: the operand after the destination.
            let a = (w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32).wrapping_add(offset);
            let mut buf = vec![0u8; size];
            ctx.trace
                .note(lane, Space::Lds, AccessKind::Read, a as u64, size);
            ctx.lds.at_lane(lane);
            ctx.lds.read_bytes(a, &mut buf);
            load_into(w, opnd(ops, 0)?, lane, &buf, signed, d16)?;
        }
        return Ok(());
    }
    if let Some(kind) = rest
        .strip_prefix("read2")
        .or_else(|| rest.strip_prefix("load_2addr"))
    {
        let (size, scale) = two_addr_form(kind);
        let (file, d) = reg_of(opnd(ops, 0)?)?;
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32;
            for o in [off0, off1] {
                let at = a.wrapping_add(o * scale) as u64;
                ctx.trace.note(lane, Space::Lds, AccessKind::Read, at, size);
            }
            ctx.lds.at_lane(lane);
            let v0 = ctx.lds.read(a.wrapping_add(off0 * scale), size);
            let v1 = ctx.lds.read(a.wrapping_add(off1 * scale), size);
            let words = size / 4;
            for k in 0..words {
                w.vreg_mut(file, d + k)?[lane] = (v0 >> (32 * k)) as u32;
                w.vreg_mut(file, d + words + k)?[lane] = (v1 >> (32 * k)) as u32;
            }
        }
        return Ok(());
    }
    if let Some(kind) = rest
        .strip_prefix("write2")
        .or_else(|| rest.strip_prefix("store_2addr"))
    {
        let (size, scale) = two_addr_form(kind);
        let ty = if size == 8 { Ty::B64 } else { Ty::B32 };
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = w.vread(opnd(ops, 0)?, lane, Ty::B32, ctx)? as u32;
            let d0 = w.vread(opnd(ops, 1)?, lane, ty, ctx)?;
            let d1 = w.vread(opnd(ops, 2)?, lane, ty, ctx)?;
            for o in [off0, off1] {
                let at = a.wrapping_add(o * scale) as u64;
                ctx.trace
                    .note(lane, Space::Lds, AccessKind::Write, at, size);
            }
            ctx.lds.at_lane(lane);
            ctx.lds.write(a.wrapping_add(off0 * scale), size, d0);
            ctx.lds.write(a.wrapping_add(off1 * scale), size, d1);
        }
        return Ok(());
    }
    if let Some(kind) = rest
        .strip_prefix("write_")
        .or_else(|| rest.strip_prefix("store_"))
    {
        let (kind, hi) = match kind.strip_suffix("_d16_hi") {
            Some(k) => (k, true),
            None => (kind, false),
        };
        let (size, _) = mem_size(kind).ok_or_else(|| Stop::Unsupported(String::new()))?;
        for lane in 0..LANES {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let a = (w.vread(opnd(ops, 0)?, lane, Ty::B32, ctx)? as u32).wrapping_add(offset);
            let data = store_bytes(w, opnd(ops, 1)?, lane, size, hi)?;
            ctx.trace
                .note(lane, Space::Lds, AccessKind::Write, a as u64, size);
            ctx.lds.at_lane(lane);
            ctx.lds.write_bytes(a, &data);
        }
        return Ok(());
    }
    // Atomics: ds_OP_{u32,i32,f32,b32,u64,...} and the _rtn_ forms.
    let (ret, kind) = match rest.split_once("_rtn_") {
        Some((op, ty)) => (true, format!("{op}_{ty}")),
        None => (false, rest.to_string()),
    };
    let (op, ty) = kind
        .rsplit_once('_')
        .ok_or_else(|| Stop::Unsupported(String::new()))?;
    let size = if ty.ends_with("64") { 8 } else { 4 };
    let aop = match (op, ty) {
        ("add", "f32") => "add_f32".to_string(),
        ("add", "f64") => "add_f64".to_string(),
        ("max", "f32") | ("min", "f32") | ("max", "f64") | ("min", "f64") => format!("{op}_{ty}"),
        // gfx12's `ds_max_num_f32`/`ds_min_num_f32` (RDNA4 ISA guide,
        // DS_MAX_NUM_RTN_F32: `atomic_op`'s `max_num_f32`).
        ("max_num", "f32") | ("min_num", "f32") => format!("{op}_{ty}"),
        ("pk_add", "f16") | ("pk_add", "bf16") => format!("pk_add_{ty}"),
        ("min", t) | ("max", t) => format!("{op}_{t}"),
        ("wrxchg", _) => "swap".to_string(),
        ("cmpst", _) | ("cmpswap", _) => "cmpst".to_string(),
        // RDNA's `ds_cmpstore_*`: DATA is the new value and DATA2 the one
        // compared (AMD's RDNA3/RDNA4 ISA guides, DS_CMPSTORE_RTN_B32: "src
        // = DATA.b32; cmp = DATA2.b32", "the order of src and cmp agree
        // with the BUFFER_ATOMIC_CMPSWAP opcode"), the reverse of gfx9's
        // `ds_cmpst_*` (cmp first).
        ("cmpstore", "b32" | "b64") => "cmpstore".to_string(),
        ("cmpstore", "f32") => "cmpstore_f32".to_string(),
        (o, _) => o.to_string(),
    };
    if atomic_op(&aop, size, 0, 0, 0).is_none() {
        return unsup("");
    }
    let tyw = if size == 8 { Ty::B64 } else { Ty::B32 };
    let (vaddr_i, data_i) = if ret { (1, 2) } else { (0, 1) };
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = (w.vread(opnd(ops, vaddr_i)?, lane, Ty::B32, ctx)? as u32).wrapping_add(offset);
        let d0 = w.vread(opnd(ops, data_i)?, lane, tyw, ctx)?;
        let (cmp, d) = match aop.as_str() {
            "cmpst" => (d0, w.vread(opnd(ops, data_i + 1)?, lane, tyw, ctx)?),
            "cmpstore" | "cmpstore_f32" => (w.vread(opnd(ops, data_i + 1)?, lane, tyw, ctx)?, d0),
            _ => (0, d0),
        };
        ctx.trace
            .note(lane, Space::Lds, AccessKind::Atomic, a as u64, size);
        ctx.lds.at_lane(lane);
        let old = ctx.lds.read(a, size);
        let new = atomic_op(&aop, size, old, d, cmp).unwrap_or(old);
        ctx.lds.write(a, size, new);
        if ret {
            w.vwrite(opnd(ops, 0)?, lane, tyw, old)?;
        }
    }
    Ok(())
}

/// Why gfx1250's 4- and 6-bit transposing loads (`ds_load_tr4_b64`,
/// `ds_load_tr6_b96` and their `global_load_` forms) are refused: AMD's
/// sources disagree on their lane maps. Triton's gfx1250 lowering
/// (`queryLDSTransLoadParams`, tile 16 for 4 bits) makes tr4 a 16x16
/// transpose within each 16 lanes; rocjitsu's `Gfx1250MemoryIsaTranspose`
/// test expects another order of tr4's source lanes, gives the only tr6
/// map, and for tr8 contradicts the map AMD's MI450 LDS blog and Triton
/// agree on (the one [`Transpose::Gfx1250Tr8`] models).
const TR46_REFUSED: &str = "gfx1250's 4- and 6-bit transposing loads: AMD's sources disagree on \
     their lane maps (Triton's gfx1250 lowering vs rocjitsu's test; design/rdna.md, gfx1250)";

/// Which lane exchange a transposing LDS load makes ([`ds_read_tr`]).
#[derive(Clone, Copy)]
enum Transpose {
    /// gfx950 `ds_read_b64_tr_b{16,8,4}` (the element's bits).
    Gfx950(usize),
    /// gfx1250 `ds_load_tr16_b128`.
    Gfx1250Tr16,
    /// gfx1250 `ds_load_tr8_b64`.
    Gfx1250Tr8,
}

impl Transpose {
    /// Bits of an element and bytes a lane reads.
    fn shape(self) -> (usize, usize) {
        match self {
            Transpose::Gfx950(bits) => (bits, 8),
            Transpose::Gfx1250Tr16 => (16, 16),
            Transpose::Gfx1250Tr8 => (8, 8),
        }
    }

    /// The lane and element of the read whose element lands in element `j`
    /// of lane `lane`'s result (`e` elements a lane).
    fn source(self, lane: usize, j: usize, e: usize) -> (usize, usize) {
        match self {
            Transpose::Gfx950(_) => {
                let (b, n) = (lane / 16 * 16, lane % 16);
                (b + (16 / e) * j + n / e, n % e)
            }
            // Groups of 8 lanes, each an 8x8 transpose.
            Transpose::Gfx1250Tr16 => (lane / 8 * 8 + j, lane % 8),
            // Groups of 16 lanes: lanes 0-7 of a group take their elements
            // from lanes 0-3 and 8-11, lanes 8-15 from 4-7 and 12-15.
            Transpose::Gfx1250Tr8 => (
                lane / 16 * 16 + (j & 3) + 4 * (lane / 8 % 2) + 8 * (j / 4),
                lane % 8,
            ),
        }
    }
}

/// The transposing LDS loads: every lane reads 64 bits (gfx1250's
/// `ds_load_tr16_b128`: 128) at its address, then the lanes exchange
/// elements ([`Transpose::source`]). A read of an inactive lane is taken as
/// zero (not checked against hardware).
///
/// gfx950 `ds_read_b64_tr_b16`, `_b8` and `_b4` (`E` = 4 elements of 16
/// bits, 8 of 8 bits or 16 of 4 bits): each group of 16 lanes is
/// transposed: lane `16·b + n` receives element `j` = element `n % E` of
/// lane `16·b + (16 / E)·j + n / E`. (CDNA4 ISA §11.4: "each lane holds 4
/// consecutive M or N values" in LDS and ends with consecutive K values.)
/// The lane order is the one with which Triton 3.9's gfx950 `tl.dot`
/// computes its f16, fp8 and i8 products bit-exactly (`tests/triton.rs`);
/// the other natural order, `E`×`E` blocks of `E` consecutive lanes, does
/// not.
///
/// gfx1250 `ds_load_tr16_b128` (8 elements of 16 bits) and
/// `ds_load_tr8_b64` (8 of 8 bits), as AMD's ROCm blog "A Deep Dive into
/// LDS Optimizations on AMD Instinct MI450 GPUs" (2026-08-28) gives their
/// lane maps: tr16 is four independent 8x8 transposes of groups of 8
/// lanes (lane `8g + n` element `j` is element `n` of lane `8g + j`); tr8
/// takes lane `n`'s element `j` of a group of 16 from lane `(j % 4) +
/// 4·(n / 8) + 8·(j / 4)`, element `n % 8` (its Triton `fullTile` bases:
/// `lane=8` reads lane 4, `register=4` lane 8). AMD's gfx1250
/// `ds_load_tr16_b128` demo (lane 0 gets rows 0–7 of column 0) agrees.
fn ds_read_tr(
    w: &mut Wave,
    ins: &Instruction,
    ctx: &mut Ctx,
    offset: u32,
    how: Transpose,
) -> R<()> {
    let exec = w.exec();
    let ops = &ins.ops;
    let (_, bytes) = how.shape();
    let mut raw = [0u128; LANES];
    for (lane, r) in raw.iter_mut().enumerate() {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = (w.vread(opnd(ops, 1)?, lane, Ty::B32, ctx)? as u32).wrapping_add(offset);
        ctx.trace
            .note(lane, Space::Lds, AccessKind::Read, a as u64, bytes);
        ctx.lds.at_lane(lane);
        let mut b = [0u8; 16];
        ctx.lds.read_bytes(a, &mut b[..bytes]);
        *r = u128::from_le_bytes(b);
    }
    transpose_into(w, ins, &raw, how)
}

/// The lane exchange of a transposing load ([`ds_read_tr`], gfx1250's
/// `global_load_tr*`): `raw` holds what each lane read at its own address;
/// every active lane's destination gets its elements from the lanes
/// [`Transpose::source`] names (an inactive lane's read counts as zero).
fn transpose_into(w: &mut Wave, ins: &Instruction, raw: &[u128; LANES], how: Transpose) -> R<()> {
    let exec = w.exec();
    let (bits, bytes) = how.shape();
    let e_per_lane = 8 * bytes / bits;
    let mask = (1u128 << bits) - 1;
    let (file, d) = reg_of(opnd(&ins.ops, 0)?)?;
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let mut out = 0u128;
        for j in 0..e_per_lane {
            let (src, e) = how.source(lane, j, e_per_lane);
            let v = raw.get(src).copied().unwrap_or(0) >> (bits * e) & mask;
            out |= v << (bits * j);
        }
        for q in 0..bytes / 4 {
            w.vreg_mut(file, d + q)?[lane] = (out >> (32 * q)) as u32;
        }
    }
    Ok(())
}

/// MFMA (CDNA2/CDNA3 matrix cores), single-block shapes: `v_mfma_f32_16x16x16_f16`,
/// `_32x32x8_f16`, the `bf16_1k` ones of the same shapes, `_16x16x4_f32`, `_32x32x2_f32`.
///
/// Lane layouts (AMD's matrix instruction calculator, CDNA3): with `kl` =
/// K·M/64 elements of A and B per lane, lane `l` holds `A[l % M][kl·(l / M) + e]`
/// and `B[kl·(l / M) + e][l % M]` in its element `e`; D and C: for M = 16 lane
/// `l` register `r` is `D[4·(l / 16) + r][l % 16]`, for M = 32 it is
/// `D[8·(r / 4) + 4·(l / 32) + r % 4][l % 32]`. (Which K a lane's element
/// holds cannot change a product as long as A and B agree on it, so the
/// tests check the M/N placement and that agreement: Triton's `tl.dot` for
/// gfx942 and gfx950, whose operands reach the registers by different paths,
/// `ds_read_b64_tr_*` among them, computes its products bit-exactly.)
///
/// Each output is C plus the K products summed in f64 and rounded once to
/// f32 (products of f16/bf16/fp8 are exact); hardware adds in its own order
/// and precision, so results agree within rounding, not bit for bit, except
/// where every partial sum is exact. Integer MFMA is exact (i32, wrapping).
pub fn mfma(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    if w.rdna() {
        // RDNA has no MFMA: its matrix instructions are WMMA/SWMMAC.
        return wmma(w, ins, ctx);
    }
    let name = ins.mnemonic.as_str();
    let (m, k, ta, tb) = match name {
        "v_mfma_f32_16x16x16_f16" | "v_mfma_f32_16x16x16f16" => (16, 16, "f16", "f16"),
        "v_mfma_f32_32x32x8_f16" | "v_mfma_f32_32x32x8f16" => (32, 8, "f16", "f16"),
        "v_mfma_f32_16x16x16_bf16" | "v_mfma_f32_16x16x16bf16_1k" => (16, 16, "bf16", "bf16"),
        "v_mfma_f32_32x32x8_bf16" | "v_mfma_f32_32x32x8bf16_1k" => (32, 8, "bf16", "bf16"),
        "v_mfma_f32_16x16x4_f32" | "v_mfma_f32_16x16x4f32" => (16, 4, "f32", "f32"),
        "v_mfma_f32_32x32x2_f32" | "v_mfma_f32_32x32x2f32" => (32, 2, "f32", "f32"),
        // gfx950's double-K f16/bf16 shapes.
        "v_mfma_f32_16x16x32_f16" => (16, 32, "f16", "f16"),
        "v_mfma_f32_32x32x16_f16" => (32, 16, "f16", "f16"),
        "v_mfma_f32_16x16x32_bf16" => (16, 32, "bf16", "bf16"),
        "v_mfma_f32_32x32x16_bf16" => (32, 16, "bf16", "bf16"),
        // 8-bit integers (i32 accumulation, wrapping).
        "v_mfma_i32_16x16x32_i8" => (16, 32, "i8", "i8"),
        "v_mfma_i32_32x32x16_i8" => (32, 16, "i8", "i8"),
        "v_mfma_i32_16x16x64_i8" => (16, 64, "i8", "i8"),
        "v_mfma_i32_32x32x32_i8" => (32, 32, "i8", "i8"),
        // gfx950: the formats of A and B are `cbsz` and `blgp`.
        "v_mfma_f32_32x32x64_f8f6f4"
        | "v_mfma_f32_16x16x128_f8f6f4"
        | "v_mfma_scale_f32_32x32x64_f8f6f4"
        | "v_mfma_scale_f32_16x16x128_f8f6f4" => {
            let (a, b) = (f8f6f4_format(ins, "cbsz")?, f8f6f4_format(ins, "blgp")?);
            if name.contains("32x32") {
                (32, 64, a, b)
            } else {
                (16, 128, a, b)
            }
        }
        _ if name.starts_with("v_smfmac_") => return smfmac(w, ins, ctx),
        _ => match fp8_mfma_shape(name) {
            Some(shape) => shape,
            None => return unsup("this MFMA shape/type is not implemented"),
        },
    };
    let f8f6f4 = name.ends_with("_f8f6f4");
    for key in ["cbsz", "abid", "blgp"] {
        if f8f6f4 && key != "abid" {
            continue;
        }
        if ins.modifier(key).is_some_and(|v| v != "0") {
            return unsup(format!("MFMA modifier {key}"));
        }
    }
    let scaled = name.starts_with("v_mfma_scale_");
    let nops = if scaled { 6 } else { 4 };
    if ins.ops.len() != nops || ins.ops.iter().any(|o| o.neg || o.abs) {
        return unsup("MFMA operands");
    }
    // gfx950 `v_mfma_scale_*`: every lane's A and B elements are multiplied
    // by an E8M0 scale, a byte of the lane's scale operand (src 4 for A,
    // src 5 for B).
    let (scale_a, scale_b) = if scaled {
        mfma_scales(w, ins, ctx)?
    } else {
        ([1.0; LANES], [1.0; LANES])
    };
    let kl = k * m / 64;
    let dregs = m * m / 64;
    // Gather A (m×k), B (k×m), C (m×m) from the lanes.
    let mut a = vec![0f64; m * k];
    let mut b = vec![0f64; k * m];
    let ocp = ctx.ocp_fp8;
    let elem = |w: &Wave, s: &Src, lane: usize, e: usize, ty: &str| -> R<f64> {
        Ok(match ty {
            "f32" => f32b(w.vread(&plain(s), lane, Ty::B32, ctx)?) as f64,
            "f16" | "bf16" => {
                let (file, i) = reg_of(s)?;
                let word = w.vreg(file, i + e / 2)?[lane];
                let bits = (word >> (16 * (e % 2))) as u16;
                if ty == "f16" {
                    f16::from_bits(bits).to_f64()
                } else {
                    half::bf16::from_bits(bits).to_f64()
                }
            }
            "fp6" | "bf6" | "fp4" => {
                let fmt = match ty {
                    "fp6" => crate::mx::Mini::E2M3,
                    "bf6" => crate::mx::Mini::E3M2,
                    _ => crate::mx::Mini::E2M1,
                };
                let (file, i) = reg_of(s)?;
                let code = packed_code(w, file, i, lane, e, fmt.bits() as usize)?;
                crate::mx::decode(fmt, code)
            }
            _ => {
                let (file, i) = reg_of(s)?;
                let byte = (w.vreg(file, i + e / 4)?[lane] >> (8 * (e % 4))) as u8;
                match ty {
                    "i8" => byte as i8 as f64,
                    t => crate::fp8::decode(crate::fp8::Fp8::of(t == "bf8", ocp), byte),
                }
            }
        })
    };
    // Which K element `e` of a lane holds. gfx950's `*_f8f6f4` MFMA keeps
    // 8-bit operands in two K halves (elements 0–15 in the first, 16–31 in
    // the second, 16 per lane group in each) and 6- and 4-bit ones as 32
    // consecutive K; a scale belongs to the lane of its 32-K block (row or
    // column `l % M`, block `l / M`). Triton 3.9's `tl.dot_scaled` for gfx950
    // computes fp8 × fp4 products bit-exactly with this and not with 8-bit
    // operands as 32 consecutive K (tests/gfx950.rs).
    let kof = |ty: &str, lane: usize, e: usize| -> usize {
        if f8f6f4 && matches!(ty, "fp8" | "bf8") {
            (k / 2) * (e / 16) + 16 * (lane / m) + e % 16
        } else {
            kl * (lane / m) + e
        }
    };
    for lane in 0..LANES {
        for e in 0..kl {
            let ka = kof(ta, lane, e);
            let kb = kof(tb, lane, e);
            if ka >= k || kb >= k {
                continue;
            }
            a[(lane % m) * k + ka] =
                elem(w, opnd(&ins.ops, 1)?, lane, e, ta)? * scale_a[lane % m + m * (ka / 32)];
            b[kb * m + lane % m] =
                elem(w, opnd(&ins.ops, 2)?, lane, e, tb)? * scale_b[lane % m + m * (kb / 32)];
        }
    }
    let pos = |lane: usize, r: usize| -> (usize, usize) {
        if m == 16 {
            (4 * (lane / 16) + r, lane % 16)
        } else {
            (8 * (r / 4) + 4 * (lane / 32) + r % 4, lane % 32)
        }
    };
    let mut d = vec![0u32; LANES * dregs];
    for lane in 0..LANES {
        for r in 0..dregs {
            let (i, j) = pos(lane, r);
            let c = match &opnd(&ins.ops, 3)?.op {
                Operand::Int(_) | Operand::Float(_) => {
                    f32b(w.vread(opnd(&ins.ops, 3)?, lane, Ty::F32, ctx)?)
                }
                _ => {
                    let (file, ci) = reg_of(opnd(&ins.ops, 3)?)?;
                    f32::from_bits(w.vreg(file, ci + r)?[lane])
                }
            };
            if ta == "i8" {
                // Integer: C is i32; the products and their sum are exact in
                // i64 and wrap to 32 bits.
                let c = match &opnd(&ins.ops, 3)?.op {
                    Operand::Int(_) => w.vread(opnd(&ins.ops, 3)?, lane, Ty::B32, ctx)? as u32,
                    _ => {
                        let (file, ci) = reg_of(opnd(&ins.ops, 3)?)?;
                        w.vreg(file, ci + r)?[lane]
                    }
                };
                let mut acc = c as i32 as i64;
                for kk in 0..k {
                    acc += (a[i * k + kk] * b[kk * m + j]) as i64;
                }
                d[lane * dregs + r] = acc as u32;
                continue;
            }
            let mut acc = c as f64;
            for kk in 0..k {
                acc += a[i * k + kk] * b[kk * m + j];
            }
            d[lane * dregs + r] = bf32(acc as f32) as u32;
        }
    }
    // MFMA ignores exec for its result (all lanes are written).
    let (file, di) = reg_of(opnd(&ins.ops, 0)?)?;
    for lane in 0..LANES {
        for r in 0..dregs {
            w.vreg_mut(file, di + r)?[lane] = d[lane * dregs + r];
        }
    }
    Ok(())
}

/// RDNA's WMMA/SWMMAC: operands and modifiers from [`crate::wmma::decode`]
/// (whose layout must be the wave's size), the arithmetic from
/// [`crate::wmma::compute`]. C may be an inline constant (every element).
/// EXEC is ignored: all lanes are written, as for MFMA.
fn wmma(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    use crate::wmma::Matrix;
    if crate::wmma::F8F6F4.contains(&base_name(&ins.mnemonic).0) {
        return wmma_f8f6f4(w, ins, ctx);
    }
    let x = crate::wmma::decode(ins).map_err(Stop::Unsupported)?;
    let l = x.layout;
    if l.wave != w.wave_size as usize {
        return unsup(format!(
            "{} sized for wave{} in a wave{}",
            ins.mnemonic, l.wave, w.wave_size
        ));
    }
    let c_const = match x.c {
        Some(_) => 0,
        None => w.vread(opnd(&ins.ops, 3)?, 0, Ty::B32, ctx)? as u32,
    };
    // Every register of the ranges exists (a fault names the first that does not).
    for (first, n) in [
        (x.a, l.regs(Matrix::A)),
        (x.b, l.regs(Matrix::B)),
        (x.d, l.regs(Matrix::C)),
        (x.c.unwrap_or(0), x.c_regs),
    ] {
        w.vreg(RegFile::V, first + n.max(1) - 1)?;
    }
    let wv = &*w;
    let reg = |r: usize, lane: usize| wv.v.get(r).map_or(0, |v| v[lane]);
    let read = |m: Matrix, i: usize, lane: usize| -> u32 {
        match m {
            Matrix::A => reg(x.a + i, lane),
            Matrix::B => reg(x.b + i, lane),
            // SWMMAC accumulates into D; its third source is the index.
            Matrix::C if l.op.sparse => reg(x.d + i, lane),
            Matrix::C => x.c.map_or(c_const, |c| reg(c + i, lane)),
            Matrix::Index => reg(x.c.unwrap_or(0) + i, lane),
        }
    };
    let old_d = |i: usize, lane: usize| reg(x.d + i, lane);
    let out = crate::wmma::compute(&l, &x.mods, &read, &old_d).map_err(Stop::Unsupported)?;
    for (i, words) in out.iter().enumerate() {
        let dst = w.vreg_mut(RegFile::V, x.d + i)?;
        dst[..words.len()].copy_from_slice(words);
    }
    Ok(())
}

/// gfx1250's f8f6f4-family WMMAs, scaled or not ([`crate::wmma::decode_f8f6f4`],
/// [`crate::wmma::compute_f8f6f4`]): wave32 only; EXEC is ignored.
fn wmma_f8f6f4(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    use crate::wmma::Matrix;
    let x = crate::wmma::decode_f8f6f4(ins).map_err(Stop::Unsupported)?;
    if w.wave_size != 32 {
        return unsup(format!(
            "{} in a wave{} (wave32 only)",
            ins.mnemonic, w.wave_size
        ));
    }
    let c_const = match x.c {
        Some(_) => 0,
        None => w.vread(opnd(&ins.ops, 3)?, 0, Ty::B32, ctx)? as u32,
    };
    let (sa, sb, sn) = x.scales.map_or((0, 0, 0), |s| (s.a, s.b, s.block / 16));
    for (first, n) in [
        (x.a, x.regs(Matrix::A)),
        (x.b, x.regs(Matrix::B)),
        (x.d, x.regs(Matrix::C)),
        (x.c.unwrap_or(0), x.c.map_or(1, |_| x.regs(Matrix::C))),
        (sa, sn.max(1)),
        (sb, sn.max(1)),
    ] {
        w.vreg(RegFile::V, first + n - 1)?;
    }
    let wv = &*w;
    let reg = |r: usize, lane: usize| wv.v.get(r).map_or(0, |v| v[lane]);
    // The scale VGPRs: `Matrix::Index` registers 0/1 are A's, 2/3 B's.
    let read = |m: Matrix, i: usize, lane: usize| -> u32 {
        match m {
            Matrix::A => reg(x.a + i, lane),
            Matrix::B => reg(x.b + i, lane),
            Matrix::C => reg(x.c.unwrap_or(0) + i, lane),
            Matrix::Index if i < 2 => reg(sa + i, lane),
            Matrix::Index => reg(sb + i - 2, lane),
        }
    };
    let out = crate::wmma::compute_f8f6f4(&x, &read, c_const);
    for (i, words) in out.iter().enumerate() {
        w.vreg_mut(RegFile::V, x.d + i)?[..32].copy_from_slice(words);
    }
    Ok(())
}

/// The element format of a gfx950 `*_f8f6f4` MFMA's A (`cbsz`) or B
/// (`blgp`) operand: 0 fp8 (E4M3), 1 bf8 (E5M2), 2 fp6 (E2M3), 3 bf6
/// (E3M2), 4 fp4 (E2M1), as LLVM's assembler names them (`cbsz`/`blgp`
/// of `V_MFMA_*_F8F6F4` in VOP3PInstructions.td; AMDGPU's
/// `MFMAScaleFormats`: FP8_E4M3, FP8_E5M2, FP6_E2M3, FP6_E3M2, FP4_E2M1).
/// Operands narrower than 8 bits are packed densely, element `e` of a lane at
/// bits `[w·e, w·(e+1))` of its consecutive registers (LLVM types them
/// `v6i32` for fp6 and `v4i32` for fp4: 32 elements in 192 or 128 bits).
fn f8f6f4_format(ins: &Instruction, key: &str) -> R<&'static str> {
    Ok(match ins.modifier(key).unwrap_or("0") {
        "0" => "fp8",
        "1" => "bf8",
        "2" => "fp6",
        "3" => "bf6",
        "4" => "fp4",
        v => return unsup(format!("{key}:{v}: not an f8f6f4 format (0–4)")),
    })
}

/// The `bits`-wide code of element `e` of `lane`, packed densely in the
/// registers from `file[i]` (it may straddle two registers).
fn packed_code(w: &Wave, file: RegFile, i: usize, lane: usize, e: usize, bits: usize) -> R<u8> {
    let bit = e * bits;
    let (r, off) = (bit / 32, bit % 32);
    let mut v = (w.vreg(file, i + r)?[lane] >> off) as u64;
    if off + bits > 32 {
        v |= (w.vreg(file, i + r + 1)?[lane] as u64) << (32 - off);
    }
    Ok((v & ((1 << bits) - 1)) as u8)
}

/// The per-lane scales of `v_mfma_scale_f32_{16x16x128,32x32x64}_f8f6f4`:
/// src 4 scales A and src 5 scales B, each an E8M0 byte (2^(e − 127)) of the
/// lane's operand. The byte is `op_sel[i] + 2·op_sel_hi[i]` (i = 0 for A,
/// 1 for B): clang-22 prints the intrinsic's `opsel_a`/`opsel_b` argument 1
/// as `op_sel:[1,0,0]`, 2 as `op_sel_hi:[1,0,0]` and 3 as both (likewise in
/// the second place for B), `llvm.amdgcn.mfma.scale.*`'s
/// `(A, B, C, cbsz, blgp, opsel_a, scale_a, opsel_b, scale_b)`.
/// Lane `l`'s byte scales row (A) or column (B) `l % M` over the 32-K block
/// `l / M` (the MX block size); see `mfma` for which K each element holds.
fn mfma_scales(w: &Wave, ins: &Instruction, ctx: &Ctx) -> R<([f64; LANES], [f64; LANES])> {
    let bits = |key: &str| -> R<Vec<u8>> {
        Ok(ins
            .modifier(key)
            .map(parse_bits)
            .transpose()?
            .unwrap_or_default())
    };
    let (sel, hi) = (bits("op_sel")?, bits("op_sel_hi")?);
    let byte = |i: usize| {
        (sel.get(i).copied().unwrap_or(0) & 1) + 2 * (hi.get(i).copied().unwrap_or(0) & 1)
    };
    let (ba, bb) = (byte(0), byte(1));
    let mut sa = [1.0; LANES];
    let mut sb = [1.0; LANES];
    for lane in 0..LANES {
        let a = w.vread(&plain(opnd(&ins.ops, 4)?), lane, Ty::B32, ctx)? as u32;
        let b = w.vread(&plain(opnd(&ins.ops, 5)?), lane, Ty::B32, ctx)? as u32;
        sa[lane] = crate::mx::e8m0((a >> (8 * ba)) as u8);
        sb[lane] = crate::mx::e8m0((b >> (8 * bb)) as u8);
    }
    Ok((sa, sb))
}

/// gfx950 sparse MFMA `v_smfmac_f32_16x16x128_{fp8,bf8}_{fp8,bf8} vdst, A, B,
/// idx`: D = D + A·B where A (16×128) has two non-zeros in every group of
/// four K values (4:2 structured sparsity). A lane holds 16 of them (its
/// `v4i32` A operand) for the 32 K values the dense layout gives it
/// (`mfma`'s layout, kl = 32); the 2-bit index of non-zero `t` is bits
/// `[2t+1:2t]` of the lane's `idx` operand and names its place in group
/// `t / 2`: non-zero `t` sits at dense element `4·(t/2) + idx_t`. B (8
/// registers) and D are dense, as in `v_mfma_f32_16x16x128_f8f6f4` with
/// fp8 operands. The accumulator is the destination itself (LLVM ties
/// `vdst` to `src2`: `AMDGPUMSmfmacIntrinsic`'s C operand, CDNA3 ISA §7.1.3
/// "SMFMAC"). The 32 index bits of a lane cover all 16 non-zeros, so
/// `abid` (which selects a set of indices for the narrower shapes) must be 0.
fn smfmac(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let name = ins.mnemonic.as_str();
    let Some(types) = name.strip_prefix("v_smfmac_f32_16x16x128_") else {
        return unsup("this sparse MFMA shape is not implemented");
    };
    let (ta, tb) = match types {
        "fp8_fp8" => (false, false),
        "fp8_bf8" => (false, true),
        "bf8_fp8" => (true, false),
        "bf8_bf8" => (true, true),
        _ => return unsup("this sparse MFMA type is not implemented"),
    };
    for key in ["cbsz", "abid"] {
        if ins.modifier(key).is_some_and(|v| v != "0") {
            return unsup(format!("sparse MFMA modifier {key}"));
        }
    }
    if ins.ops.len() != 4 || ins.ops.iter().any(|o| o.neg || o.abs) {
        return unsup("sparse MFMA operands");
    }
    let (m, k, kl) = (16, 128, 32);
    let ocp = ctx.ocp_fp8;
    let byte = |w: &Wave, s: &Src, lane: usize, e: usize| -> R<u8> {
        let (file, i) = reg_of(s)?;
        Ok((w.vreg(file, i + e / 4)?[lane] >> (8 * (e % 4))) as u8)
    };
    let fa = crate::fp8::Fp8::of(ta, ocp);
    let fb = crate::fp8::Fp8::of(tb, ocp);
    let mut a = vec![0f64; m * k];
    let mut b = vec![0f64; k * m];
    for lane in 0..LANES {
        let idx = w.vread(&plain(opnd(&ins.ops, 3)?), lane, Ty::B32, ctx)? as u32;
        let base = kl * (lane / m);
        for t in 0..16 {
            let kk = base + 4 * (t / 2) + (idx >> (2 * t) & 3) as usize;
            let v = crate::fp8::decode(fa, byte(w, opnd(&ins.ops, 1)?, lane, t)?);
            a[(lane % m) * k + kk] += v;
        }
        for e in 0..kl {
            b[(base + e) * m + lane % m] =
                crate::fp8::decode(fb, byte(w, opnd(&ins.ops, 2)?, lane, e)?);
        }
    }
    let (file, di) = reg_of(opnd(&ins.ops, 0)?)?;
    let mut d = [[0u32; 4]; LANES];
    for (lane, out) in d.iter_mut().enumerate() {
        for (r, o) in out.iter_mut().enumerate() {
            let (i, j) = (4 * (lane / 16) + r, lane % 16);
            let mut acc = f32::from_bits(w.vreg(file, di + r)?[lane]) as f64;
            for kk in 0..k {
                acc += a[i * k + kk] * b[kk * m + j];
            }
            *o = bf32(acc as f32) as u32;
        }
    }
    for (lane, out) in d.iter().enumerate() {
        for (r, o) in out.iter().enumerate() {
            w.vreg_mut(file, di + r)?[lane] = *o;
        }
    }
    Ok(())
}

/// `(M, K, A type, B type)` of `v_mfma_f32_{16x16x32,32x32x16}_{fp8,bf8}_{fp8,bf8}`.
fn fp8_mfma_shape(name: &str) -> Option<(usize, usize, &'static str, &'static str)> {
    let rest = name.strip_prefix("v_mfma_f32_")?;
    let (shape, types) = rest.split_at_checked(9)?;
    let (m, k) = match shape {
        "16x16x32_" => (16, 32),
        "32x32x16_" => (32, 16),
        _ => return None,
    };
    let t = |s: &str| match s {
        "fp8" => Some("fp8"),
        "bf8" => Some("bf8"),
        _ => None,
    };
    let (a, b) = types.split_once('_')?;
    Some((m, k, t(a)?, t(b)?))
}

/// The error for a stop at `ins`.
pub fn stop_error(
    stop: Stop,
    kernel: &str,
    ins: &Instruction,
    line: Option<String>,
    wg: [u32; 3],
    wave: u32,
) -> Error {
    match stop {
        Stop::Unsupported(detail) => Error::Unsupported {
            kernel: kernel.to_string(),
            mnemonic: ins.mnemonic.clone(),
            addr: ins.addr,
            text: ins.text.clone(),
            line,
            detail,
        },
        Stop::Fault(lane, what) => Error::Fault {
            kernel: kernel.to_string(),
            addr: ins.addr,
            text: ins.text.clone(),
            workgroup: wg,
            wave,
            lane,
            what,
        },
    }
}

/// Run `wave` until it ends, reaches a barrier, or runs out of `budget`.
pub fn run_until_blocked(
    wave: &mut Wave,
    ctx: &mut Ctx,
    budget: u64,
) -> std::result::Result<(), (Stop, usize)> {
    let prog = ctx.program;
    // Whether the observer looks at instructions before they run (asked
    // once: nothing is called per instruction when no one observes).
    let issue = ctx.observer.as_ref().is_some_and(|o| o.0.wants_issue());
    // Executed instructions per engine, when measured (hidden; see
    // `crate::tally`).
    let mut tally = crate::tally::on().then(|| crate::tally::Slice::new(wave.rdna()));
    while wave.state == WaveState::Running {
        if wave.executed >= budget {
            return Ok(());
        }
        let pc = wave.pc;
        let Some(ins) = prog.instructions.get(pc) else {
            return Err((
                Stop::Fault(
                    None,
                    "ran past the end of the kernel's code without s_endpgm".into(),
                ),
                pc.saturating_sub(1),
            ));
        };
        ctx.lds.begin();
        if issue {
            if let Some((o, workgroup, w)) = ctx.observer.as_mut() {
                o.issue(&crate::observe::Issue {
                    workgroup: *workgroup,
                    wave: *w,
                    index: pc,
                    instruction: ins,
                    state: wave,
                });
            }
        }
        // An operand form the executor does not expect (an index past the
        // operands LLVM printed) is a typed `Stop::Unsupported`, not a panic.
        let exec = wave.exec();
        let unit = ins.route.unit;
        match ctx.typed.get(pc) {
            // VSKIP: no vector instruction is issued (as `step` skips it).
            Some(_) if wave.vskip && (unit.is_vector() || ins.dual.is_some()) => {
                if let Some(tally) = tally.as_mut() {
                    tally.count(&ins.mnemonic, true);
                }
                wave.executed += 1;
                wave.pc = pc + 1;
            }
            Some(Some(t)) if !wave.gpr_idx || !unit.is_vector_alu() => {
                if let Some(tally) = tally.as_mut() {
                    tally.count(&ins.mnemonic, true);
                }
                wave.executed += 1;
                wave.pc = pc + 1;
                crate::typed::exec(wave, t, ins, ctx).map_err(|s| (s, pc))?;
            }
            // VGPR indexing: the instruction with M0's index applied (the
            // reference's `gpr_indexed`, a copy), lowered again.
            Some(Some(_)) => {
                let indexed = gpr_indexed(wave, ins).map_err(|s| (s, pc))?;
                let t = crate::typed::lower(&indexed, prog);
                if let Some(tally) = tally.as_mut() {
                    tally.count(&ins.mnemonic, t.is_some());
                }
                wave.executed += 1;
                wave.pc = pc + 1;
                match t {
                    Some(t) => crate::typed::exec(wave, &t, &indexed, ctx),
                    None => step_v(wave, &indexed, ctx, unit),
                }
                .map_err(|s| (s, pc))?;
            }
            _ => {
                if let Some(tally) = tally.as_mut() {
                    tally.count(&ins.mnemonic, false);
                }
                step(wave, ins, ctx).map_err(|s| (s, pc))?
            }
        }
        if let Some((o, workgroup, w)) = ctx.observer.as_mut() {
            o.executed(&crate::observe::Event {
                workgroup: *workgroup,
                wave: *w,
                index: pc,
                exec,
                accesses: &ctx.trace.accesses,
                state: wave,
            });
            ctx.trace.accesses.clear();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The routing by spelling that [`unit`] replaced, kept only as the
    /// oracle of `units_from_the_table_are_the_old_prefix_rule`.
    fn old_unit(m: &str) -> Unit {
        if m.starts_with("s_") {
            if m.starts_with("s_load_") || m.starts_with("s_buffer_load_") {
                return Unit::SmemRead;
            }
            if m.starts_with("s_store_")
                || m.starts_with("s_buffer_store_")
                || m.starts_with("s_atomic_")
                || m.starts_with("s_buffer_atomic_")
            {
                return Unit::SmemWrite;
            }
            return Unit::Salu;
        }
        if m.starts_with("v_cmp") {
            return Unit::Vcmp;
        }
        if m.starts_with("v_mfma") || m.starts_with("v_smfmac") {
            return Unit::Mfma;
        }
        if m.starts_with("v_") {
            return Unit::Valu;
        }
        if m.starts_with("ds_") {
            return Unit::Ds;
        }
        if m.starts_with("global_") || m.starts_with("flat_") {
            return Unit::Global;
        }
        if m.starts_with("scratch_") {
            return Unit::Scratch;
        }
        if m.starts_with("buffer_") {
            return Unit::Buffer;
        }
        if m.starts_with("tbuffer_") {
            return Unit::Tbuffer;
        }
        Unit::None
    }

    /// The old rule's VSKIP list.
    fn old_vector(m: &str) -> bool {
        [
            "v_", "buffer_", "tbuffer_", "image_", "ds_", "flat_", "global_", "scratch_", "exp",
        ]
        .iter()
        .any(|p| m.starts_with(p))
    }

    #[test]
    fn units_from_the_table_are_the_old_prefix_rule() {
        let names = crate::isa::TABLE
            .iter()
            .map(|p| p.name)
            .chain(crate::isa::ALIASES.iter().map(|a| a.0));
        let mut differ = Vec::new();
        for name in names {
            for sfx in ["", "_e32", "_e64", "_dpp", "_sdwa"] {
                let m = format!("{name}{sfx}");
                let (new, old) = (unit(&m), old_unit(&m));
                if new != old {
                    differ.push(format!("{m}: {old:?} -> {new:?}"));
                }
                assert_eq!(new.is_vector(), old_vector(&m), "{m}: vector issue");
                assert_eq!(new.is_scalar(), m.starts_with("s_"), "{m}: s_");
                assert_eq!(new.is_vector_alu(), m.starts_with("v_"), "{m}: v_");
            }
        }
        // The one difference: scratch SMEM, which `salu` never ran either
        // (it went there by its `s_` prefix and was refused).
        differ.retain(|d| !d.starts_with("s_scratch_") || !d.ends_with("Salu -> SmemScratch"));
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    }

    /// The cross-lane moves and packed math the executor and the shadow
    /// send to `lane_op`/`vop3p` by the table ([`crate::isa::Props::lane_select`],
    /// [`crate::isa::Props::packed`]) are the ones the old prefix lists
    /// (`v_readlane`, `v_readfirstlane`, `v_writelane`; `v_pk_`) named, for
    /// every name and alias of the table and every unlisted one, with each
    /// encoding suffix; and the instruction's route is the name's.
    #[test]
    fn lane_and_packed_groups_from_the_table_are_the_old_prefix_rule() {
        let names = crate::isa::TABLE
            .iter()
            .map(|p| p.name)
            .chain(crate::isa::ALIASES.iter().map(|a| a.0))
            .chain(UNLISTED.iter().map(|u| u.0));
        let (mut lanes, mut packed) = (0, 0);
        for name in names {
            for sfx in ["", "_e32", "_e64", "_dpp", "_sdwa"] {
                let m = format!("{name}{sfx}");
                let ins = crate::decode::Instruction::new(0, &m, vec![], vec![], vec![], m.clone());
                assert_eq!(ins.route, Route::of(&m));
                let p = ins.props();
                let old_lane = m.starts_with("v_readlane")
                    || m.starts_with("v_readfirstlane")
                    || m.starts_with("v_writelane");
                assert_eq!(p.is_some_and(|p| p.lane_select()), old_lane, "{m}");
                let old_packed = m.starts_with("v_pk_");
                assert_eq!(p.is_some_and(|p| p.packed()), old_packed, "{m}");
                lanes += old_lane as usize;
                packed += old_packed as usize;
            }
        }
        // Not vacuous: three cross-lane moves and 26 packed instructions.
        assert_eq!((lanes, packed), (3 * 5, 26 * 5));
    }

    /// Every whole mnemonic the executor names is in the table, so routing
    /// by the table loses none of them.
    #[test]
    fn every_mnemonic_the_executor_names_is_in_the_table() {
        let src = include_str!("exec.rs");
        let mut missing = Vec::new();
        for lit in src.split('"').skip(1).step_by(2) {
            let whole = ["s_", "v_", "ds_", "global_", "flat_", "scratch_", "buffer_"]
                .iter()
                .any(|p| lit.starts_with(p))
                && !lit.ends_with('_')
                && lit
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            // A prefix of table names (`s_and`, `v_cmp`, `s_bitcmp`) is
            // not a mnemonic.
            let prefix = || crate::isa::TABLE.iter().any(|t| t.name.starts_with(lit));
            if whole
                && crate::isa::lookup(lit).is_none()
                && !prefix()
                && !UNLISTED.iter().any(|u| u.0 == lit)
            {
                missing.push(lit);
            }
        }
        missing.sort();
        missing.dedup();
        assert!(
            missing.is_empty(),
            "not in the table nor UNLISTED: {missing:?}"
        );
        for (name, _) in UNLISTED {
            assert!(crate::isa::lookup(name).is_none(), "{name} is in the table");
            // The old prefix rule predates WMMA (its matrix unit is MFMA's).
            if name.starts_with("v_wmma") {
                assert_eq!(unit(name), Unit::Mfma, "{name}");
            } else if name.starts_with("tensor_") || name.starts_with("cluster_load") {
                // gfx1250's tensor DMA and cluster loads (after the old
                // rule): vector memory.
                assert_eq!(unit(name), Unit::Global, "{name}");
            } else {
                assert_eq!(unit(name), old_unit(name), "{name}");
            }
            assert_ne!(unit(name), Unit::None, "{name}");
        }
    }

    /// gfx12's `_num_` atomics follow the RDNA4 ISA guide's
    /// DS_MAX_NUM_RTN_F32 pseudo-code (src = DATA, tmp = MEM): two NaNs
    /// give src quieted, one NaN the other value, +0 above -0; RDNA's
    /// `cmpstore` stores DATA when MEM equals DATA2.
    #[test]
    fn rdna_num_and_cmpstore_atomics_follow_the_pseudo_code() {
        let one = 1.0f32.to_bits() as u64;
        let (pz, nz) = (0.0f32.to_bits() as u64, (-0.0f32).to_bits() as u64);
        let cases = [
            // (op, old = MEM, data = src, result)
            ("max_num_f32", 0x7fc0_0001, one, one),
            ("max_num_f32", one, 0x7f80_0001, one),
            ("max_num_f32", 0x7fc0_0002, 0x7f80_0003, 0x7fc0_0003),
            ("max_num_f32", nz, pz, pz),
            ("max_num_f32", pz, nz, pz),
            ("min_num_f32", nz, pz, nz),
            ("min_num_f32", pz, nz, nz),
            (
                "min_num_f32",
                one,
                (-2.0f32).to_bits() as u64,
                (-2.0f32).to_bits() as u64,
            ),
        ];
        for (op, old, data, want) in cases {
            assert_eq!(
                atomic_op(op, 4, old, data, 0),
                Some(want),
                "{op}({old:#x}, {data:#x})"
            );
        }
        assert_eq!(atomic_op("cmpstore", 4, 5, 9, 5), Some(9));
        assert_eq!(atomic_op("cmpstore", 4, 5, 9, 6), Some(5));
        assert_eq!(atomic_op("cmpstore", 8, 1 << 40, 7, 1 << 40), Some(7));
    }

    #[test]
    fn dpp_controls_pick_the_documented_lanes() {
        assert_eq!(dpp_source(0x111, 0), None);
        assert_eq!(dpp_source(0x111, 17), Some(16));
        assert_eq!(dpp_source(0x101, 15), None);
        assert_eq!(dpp_source(0x1b, 0), Some(3)); // quad_perm:[3,2,1,0]
        assert_eq!(dpp_source(0x140, 16), Some(31));
        assert_eq!(dpp_source(0x142, 20), Some(15));
        assert_eq!(dpp_source(0x153, 40), Some(35)); // row_newbcast:3
    }

    #[test]
    fn division_helpers_match_ieee_on_normal_values() {
        let (n, d) = (7.0f32, 3.0f32);
        let (ds, vcc) = div_scale32(d, d, n);
        assert!(!vcc);
        assert_eq!(ds, d);
        assert_eq!(div_fixup32(n / d, d, n), n / d);
        assert_eq!(div_fixup32(1.0, 0.0, 1.0), f32::INFINITY);
    }
}

/// Probes whether the executor implements instructions, by running each once
/// on a scratch wave that has memory to hit: an instruction counts as
/// implemented only when it runs without a fault ([`ProbeOutcome::Ran`]).
///
/// The probe's registers are set so that addresses land in memory: every
/// even SGPR/VGPR/AGPR holds 0x1000 and every odd one the high half of an
/// 8 MiB allocation's base, so a 64-bit register pair points 4 KiB into it
/// (room for negative offsets down to −4096 and positive ones up to almost
/// 8 MiB, scalar-load offsets included), a 32-bit offset register adds 4 KiB
/// or 1, and a buffer descriptor `s[n:n+3]` (n even) has that base, stride 0
/// and 4096 records (past them an access is dropped, not a fault). Each lane
/// has 64 KiB of private memory and the wave 64 KiB of LDS; M0 is 0, exec
/// all ones, and the flat apertures are placed where no pointer points. An
/// instruction that does not run on that state is probed again with zeroed
/// registers (the state of earlier versions): running on either counts.
/// `s_trap`, whose semantics is to stop the wave with a fault, counts as run.
pub struct Probe {
    wave: Wave,
    lds: Lds,
    mem: Memory,
    program: crate::decode::Program,
    /// The 64-bit value of an even/odd register pair.
    pointer: u64,
    /// An RDNA3 target: instructions run under their executor names
    /// ([`crate::rdna::ALIASES`]).
    rdna: bool,
    /// Pairs start at odd registers (RDNA's unaligned pairs).
    odd: bool,
}

/// What running one instruction on a [`Probe`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// It ran without a fault: implemented.
    Ran,
    /// The executor refuses it (the reason): not implemented.
    Unsupported(String),
    /// It faulted on both of the probe's states (the fault): reported
    /// apart, not counted as implemented.
    Fault(String),
}

impl Default for Probe {
    fn default() -> Self {
        Self::new()
    }
}

impl Probe {
    /// A probe with a full register file, 64 KiB of LDS, 64 KiB of private
    /// memory a lane and an 8 MiB allocation the registers point into.
    pub fn new() -> Self {
        let mem = Memory::new();
        let base = mem.alloc_bytes("probe", &vec![0; 8 << 20]);
        let mut wave = Wave::new(512, 256);
        wave.set_private(64 << 10);
        Probe {
            wave,
            lds: Lds::new(65536),
            mem,
            program: crate::decode::Program {
                kernel: String::new(),
                instructions: Vec::new(),
                index: std::collections::HashMap::new(),
                lines: std::collections::HashMap::new(),
            },
            pointer: base + 0x1000,
            rdna: false,
            odd: false,
        }
    }

    /// A probe for `processor`'s instructions in waves of `wave_size` lanes:
    /// gfx11's SGPR numbering and names ([`crate::rdna`]) for an RDNA3
    /// target, else gfx9's ([`Probe::new`]).
    pub fn for_target(processor: &str, wave_size: u32) -> Self {
        let mut p = Self::new();
        if crate::rdna::is_rdna(processor) {
            p.rdna = true;
            p.wave.numbering = crate::decode::Numbering::of(processor);
            p.wave.wave_size = wave_size;
            if processor == "gfx1250" {
                // Its 1024 VGPRs (v512 up are named through s_set_vgpr_msb).
                p.wave.v.resize(1024, p.wave.v[0]);
            }
        }
        p
    }

    /// Whether `ins` runs without a fault (see [`Probe`]).
    pub fn implements(&mut self, ins: &Instruction) -> bool {
        self.probe(ins) == ProbeOutcome::Ran
    }

    /// Run `ins` once on the pointer state, then (unless it ran) on zeroed
    /// registers; see [`Probe`].
    pub fn probe(&mut self, ins: &Instruction) -> ProbeOutcome {
        let renamed;
        let ins = match crate::rdna::executor_name(&ins.mnemonic) {
            std::borrow::Cow::Owned(m) if self.rdna => {
                renamed = {
                    let mut r = ins.clone();
                    r.set_mnemonic(&m);
                    r
                };
                &renamed
            }
            _ => ins,
        };
        let first = self.step_with(ins, true);
        if first == ProbeOutcome::Ran {
            return first;
        }
        // RDNA does not align register pairs: `v[3:4]` holds a pointer
        // when the odd register is its low half.
        if self.rdna {
            self.odd = true;
            let odd = self.step_with(ins, true);
            self.odd = false;
            if odd == ProbeOutcome::Ran {
                return odd;
            }
        }
        match (first, self.step_with(ins, false)) {
            (_, ProbeOutcome::Ran) => ProbeOutcome::Ran,
            (ProbeOutcome::Unsupported(why), _) | (_, ProbeOutcome::Unsupported(why)) => {
                ProbeOutcome::Unsupported(why)
            }
            (fault, _) => fault,
        }
    }

    fn step_with(&mut self, ins: &Instruction, pointers: bool) -> ProbeOutcome {
        let (lo, hi) = if pointers {
            (self.pointer as u32, (self.pointer >> 32) as u32)
        } else {
            (0, 0)
        };
        let pair = |i: usize| if i % 2 == 0 { lo } else { hi };
        for (i, r) in self.wave.s.iter_mut().enumerate() {
            *r = pair(i);
        }
        // SGPR pairs are aligned on every target; VGPR pairs are not on RDNA.
        let shift = self.odd as usize;
        for (i, r) in self.wave.v.iter_mut().enumerate() {
            *r = [pair(i + shift); LANES];
        }
        let accum = self.wave.accum;
        for (i, r) in self.wave.v.iter_mut().enumerate().skip(accum) {
            *r = [pair(i - accum); LANES];
        }
        let m0 = self.wave.numbering.m0 as usize;
        self.wave.s[m0] = 0;
        if let Some(null) = self.wave.numbering.null {
            self.wave.s[null as usize] = 0;
        }
        self.wave.set_exec(u64::MAX);
        self.wave.state = WaveState::Running;
        self.wave.pc = 0;
        // Modes an earlier probe may have set (`s_set_gpr_idx_on`,
        // `s_setvskip`) must not apply to the next instruction.
        self.wave.gpr_idx = false;
        self.wave.vskip = false;
        // gfx1250's MODE and SCHED_MODE hold values, like the registers: a
        // lone `s_getreg_b32` runs (in a kernel, reading bits the wave did
        // not write is refused unless nothing reads the result).
        // gfx1250 probes run as a workgroup of a cluster (IB_STS2[9:6] =
        // 1), where the cluster barrier (-3) is an instruction like any
        // other; the dispatcher completes what it waits for.
        self.wave.hwregs = HwRegs {
            mode_written: u32::MAX,
            sched_mode_written: u32::MAX,
            ib_sts2: ((self.wave.numbering == crate::decode::Numbering::GFX1250) as u32) << 6,
            ..HwRegs::default()
        };
        // A branch's target is an instruction: the SOPP target of its
        // encoding, or what a register pair holds (`s_setpc_b64`).
        let targets = &mut self.program.index;
        targets.clear();
        if let Some(&w0) = ins.words.first() {
            let simm = w0 as u16 as i16 as i64;
            targets.insert((ins.addr as i64).wrapping_add(4 + simm * 4) as u64, 0);
        }
        targets.insert(self.pointer, 0);
        targets.insert(0, 0);
        let Probe {
            wave,
            lds,
            mem,
            program,
            ..
        } = self;
        let mut ctx = Ctx {
            program,
            mem,
            lds,
            // No register pair's high half (0 or the allocation's) is an
            // aperture: flat accesses go to global memory.
            shared_base_hi: 0x7000_0000,
            private_base_hi: 0x7000_0001,
            ocp_fp8: false,
            trace: Trace::default(),
            observer: None,
            typed: &[],
        };
        match step(wave, ins, &mut ctx) {
            Err(Stop::Unsupported(why)) => ProbeOutcome::Unsupported(why),
            // `s_trap`'s semantics is to stop the wave with a fault.
            Err(Stop::Fault(..)) if ins.mnemonic == "s_trap" => ProbeOutcome::Ran,
            Err(Stop::Fault(_, what)) => ProbeOutcome::Fault(what),
            Ok(()) => ProbeOutcome::Ran,
        }
    }
}
#[cfg(test)]
mod probe_tests {
    use super::*;

    #[test]
    fn the_probe_tells_implemented_from_unimplemented_forms() {
        let line = |t: &str| crate::decode::parse_line(t).unwrap().unwrap();
        let mut p = Probe::new();
        assert!(p.implements(&line(
            "\tbuffer_store_dword v2, v3, s[24:27], 0 offen // 000000001600: E0701000 80060203"
        )));
        assert!(p.implements(&line(
            "\tds_write_b32 v38, v39 offset:2112 // 000000001600: D81A0840 00002726"
        )));
        assert!(p.implements(&line(
            "\tbuffer_load_dword v21, s[4:7], 0 offen lds // 000000001600: E0511000 80011500"
        )));
        assert!(p.implements(&line(
            "\tbuffer_atomic_add_f32 v140, v7, s[32:35], 0 offen offset:256 // 000000001600: E1341100 80088C07"
        )));
        assert!(!p.implements(&line(
            "\tv_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3] cbsz:5 // 000000001600: 00000000"
        )));
        assert!(!p.implements(&line(
            "\ts_memtime s[2:3] // 000000001600: C0900080 00000000"
        )));
        // Memory instructions run on the probe's memory: scalar and global
        // loads and stores (negative offsets too), flat, scratch, LDS.
        for text in [
            "s_load_dwordx4 s[8:11], s[0:1], 0x40",
            "s_load_dword s8, s[2:3], 0xfff00",
            "global_load_dwordx4 v[4:7], v[2:3], off offset:-4096",
            "global_store_dword v2, v5, s[0:1] offset:16",
            "global_atomic_add_f32 v2, v5, s[0:1]",
            "flat_load_dword v4, v[2:3]",
            "scratch_load_dword v4, v2, off offset:16",
            "scratch_store_dwordx2 off, v[4:5], s2",
            "ds_read_b128 v[4:7], v2 offset:512",
        ] {
            assert_eq!(
                p.probe(&line(&format!("\t{text} // 000000001600: 00000000"))),
                ProbeOutcome::Ran,
                "{text}"
            );
        }
        // An address no probe state backs is a fault, reported apart.
        assert!(matches!(
            p.probe(&line(
                "\tglobal_load_dword v1, v[3:4], off // 000000001600: 00000000"
            )),
            ProbeOutcome::Fault(_)
        ));
        // A mode set by one probe does not leak into the next.
        assert!(p.implements(&line(
            "\ts_set_gpr_idx_on s32, gpr_idx(DST) // 000000001600: BF110820"
        )));
        assert!(p.implements(&line(
            "\tv_mul_f32_e32 v12, s20, v12 // 000000001600: 0A181814"
        )));
    }

    #[test]
    fn s_bitset_sets_or_clears_one_bit_of_the_destination() {
        let w = run_one("s_bitset1_b32 s53, s26", |w| {
            w.s[53] = 0x8000_0001;
            w.s[26] = 0x24; // bit 4 (the count's low 5 bits)
            w.scc = true;
        });
        assert_eq!((w.s[53], w.scc), (0x8000_0011, true));
        let w = run_one("s_bitset0_b32 s36, 31", |w| w.s[36] = 0xffff_ffff);
        assert_eq!(w.s[36], 0x7fff_ffff);
    }

    fn run_one(text: &str, init: impl FnOnce(&mut Wave)) -> Wave {
        run_encoded(text, "00000000", init)
    }

    fn run_encoded(text: &str, words: &str, init: impl FnOnce(&mut Wave)) -> Wave {
        let (p, r) = try_encoded(text, words, |p| init(&mut p.wave));
        r.unwrap_or_else(|_| panic!("{text} did not run"));
        p.wave
    }

    /// One instruction (`text`, encoded as `words`) on a probe (`init`
    /// sets it up): the probe after it and its outcome.
    fn try_encoded(text: &str, words: &str, init: impl FnOnce(&mut Probe)) -> (Probe, R<()>) {
        let ins = crate::decode::parse_line(&format!("\t{text} // 000000001600: {words}"))
            .unwrap()
            .unwrap();
        let mut p = Probe::new();
        p.wave.set_exec(u64::MAX);
        init(&mut p);
        let Probe {
            wave,
            lds,
            mem,
            program,
            ..
        } = &mut p;
        let mut ctx = Ctx {
            program,
            mem,
            lds,
            shared_base_hi: 1,
            private_base_hi: 2,
            ocp_fp8: false,
            trace: Trace::default(),
            observer: None,
            typed: &[],
        };
        let r = step(wave, &ins, &mut ctx);
        (p, r)
    }

    #[test]
    fn vgpr_indexing_relocates_the_operands_the_mode_selects() {
        // aiter's gfx942 a8w8 GEMM: `s_set_gpr_idx_on s65, gpr_idx(SRC0)`
        // (BF110141): M0[7:0] = s65, M0[15:12] = 1, the other bits kept.
        let w = run_encoded("s_set_gpr_idx_on s65, gpr_idx(SRC0)", "BF110141", |w| {
            w.s[65] = 0x1_0104;
            w.s[M0 as usize] = 0xABCD_0F00;
        });
        assert!(w.gpr_idx);
        assert_eq!(w.s[M0 as usize], 0xABCD_1F04);
        let w = run_encoded("s_set_gpr_idx_mode gpr_idx(DST,SRC1)", "BF9D000A", |w| {
            w.s[M0 as usize] = 0x0000_1004;
        });
        assert_eq!(w.s[M0 as usize], 0x0000_A004);
        let w = run_encoded("s_set_gpr_idx_off", "BF9C0000", |w| w.gpr_idx = true);
        assert!(!w.gpr_idx);
        let on = |mode: u32, idx: u32| {
            move |w: &mut Wave| {
                w.gpr_idx = true;
                w.s[M0 as usize] = mode << 12 | idx;
                for r in 0..40 {
                    w.v[r] = [(r as i32 - 20) as u32; LANES];
                }
            }
        };
        // SRC0: the source moves (v6 → v10), the destination does not.
        let w = run_one("v_cvt_f32_i32_e32 v1, v6", on(1, 4));
        assert_eq!(f32::from_bits(w.v[1][0]), -10.0);
        // DST alone: v1 → v5, the source stays v6.
        let w = run_one("v_cvt_f32_i32_e32 v1, v6", on(8, 4));
        assert_eq!(f32::from_bits(w.v[5][0]), -14.0);
        assert_eq!(w.v[1][0], (1 - 20) as u32);
        // A 64-bit VOP3P source moves as a range; src1 and the destination
        // keep their registers.
        let w = run_one("v_pk_mul_f32 v[0:1], v[2:3], v[4:5]", |w| {
            on(1, 10)(w);
            w.v[12] = [2.0f32.to_bits(); LANES];
            w.v[13] = [3.0f32.to_bits(); LANES];
            w.v[4] = [5.0f32.to_bits(); LANES];
            w.v[5] = [7.0f32.to_bits(); LANES];
        });
        assert_eq!(f32::from_bits(w.v[0][0]), 10.0);
        assert_eq!(f32::from_bits(w.v[1][0]), 21.0);
        // SRC1 and SRC2 of a VOP3; an SGPR in an indexed slot is not moved.
        let w = run_one("v_fma_f32 v0, s3, v2, v3", |w| {
            on(0b111, 2)(w);
            w.s[3] = 2.0f32.to_bits();
            w.v[4] = [3.0f32.to_bits(); LANES];
            w.v[5] = [1.0f32.to_bits(); LANES];
        });
        assert_eq!(f32::from_bits(w.v[0][0]), 7.0);
    }

    #[test]
    fn sdwa_selects_sources_and_places_the_result() {
        // src0 BYTE_2 of 0x00AB0000 = 0xAB, src1 WORD_1 of 0x00050000 = 5;
        // 0xB0 goes to BYTE_1, the other bytes of v0 are preserved.
        let w = run_one(
            "v_add_u32_sdwa v0, v1, v2 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2 src1_sel:WORD_1",
            |w| {
                w.v[0] = [0x1122_3344; LANES];
                w.v[1] = [0x00AB_0000; LANES];
                w.v[2] = [0x0005_0000; LANES];
            },
        );
        assert_eq!(w.v[0][5], 0x1122_B044);
        // sext of BYTE_0 0xFF = -1; -1 << 4 = 0xFFFFFFF0 in WORD_0, padded with 0.
        let w = run_one(
            "v_lshlrev_b32_sdwa v0, v1, sext(v2) dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:BYTE_0",
            |w| {
                w.v[1] = [4; LANES];
                w.v[2] = [0x0000_00FF; LANES];
            },
        );
        assert_eq!(w.v[0][0], 0x0000_FFF0);
        let w = run_one(
            "v_cmp_eq_u32_sdwa s[22:23], v0, v11 src0_sel:DWORD src1_sel:WORD_0",
            |w| {
                w.v[0] = [7; LANES];
                w.v[11] = [0xABCD_0007; LANES];
                w.v[11][3] = 0xABCD_0008;
            },
        );
        assert_eq!(w.s[22], !(1 << 3));
        assert_eq!(w.s[23], u32::MAX);
    }

    #[test]
    fn vopd_halves_read_before_either_writes() {
        // The decoder splits `X :: Y` (the line and words are llvm-mc-22's
        // for gfx1100).
        let ins = crate::decode::parse_line(
            "\tv_dual_mul_f32 v10, v4, v5 :: v_dual_add_f32 v11, v10, v7 // 000000001600: C8C80B04 0A0A0F0A",
        )
        .unwrap()
        .unwrap();
        assert_eq!(ins.mnemonic, "v_dual_mul_f32");
        assert_eq!(ins.ops.len(), 3);
        let y = ins.dual.as_deref().unwrap();
        assert_eq!((y.mnemonic.as_str(), y.ops.len()), ("v_dual_add_f32", 3));
        // Y reads X's destination v10: the old value.
        let w = run_one(
            "v_dual_mul_f32 v10, v4, v5 :: v_dual_add_f32 v11, v10, v7",
            |w| {
                w.wave_size = 32;
                w.v[4] = [3.0f32.to_bits(); LANES];
                w.v[5] = [5.0f32.to_bits(); LANES];
                w.v[7] = [0.5f32.to_bits(); LANES];
                w.v[10] = [100.0f32.to_bits(); LANES];
            },
        );
        assert_eq!(f32::from_bits(w.v[10][0]), 15.0);
        assert_eq!(f32::from_bits(w.v[11][0]), 100.5);
        // Each reads the other's destination: a swap.
        let w = run_one("v_dual_mov_b32 v10, v11 :: v_dual_mov_b32 v11, v10", |w| {
            w.wave_size = 32;
            w.v[10] = [1; LANES];
            w.v[11] = [2; LANES];
        });
        assert_eq!((w.v[10][5], w.v[11][5]), (2, 1));
        // cndmask's mask is VCC_LO, which LLVM does not print.
        let w = run_one(
            "v_dual_cndmask_b32 v10, v4, v5 :: v_dual_mov_b32 v11, 1.0",
            |w| {
                w.wave_size = 32;
                w.v[4] = [7; LANES];
                w.v[5] = [9; LANES];
                w.s[VCC as usize] = 0b10;
            },
        );
        assert_eq!((w.v[10][0], w.v[10][1]), (7, 9));
        assert_eq!(w.v[11][0], 1.0f32.to_bits());
        // Both halves writing one register is refused, not run (llvm-mc-22
        // refuses to assemble it: "one dst register must be even and the
        // other odd"; these words are made up).
        let ins = crate::decode::parse_line(
            "\tv_dual_mov_b32 v10, v4 :: v_dual_mov_b32 v10, v5 // 000000001600: CA10010A 0A000105",
        )
        .unwrap()
        .unwrap();
        assert!(matches!(
            Probe::for_target("gfx1100", 32).probe(&ins),
            ProbeOutcome::Unsupported(w) if w.contains("both halves")
        ));
        // In a wave64 wave the pair is refused (illegal there).
        let ins = crate::decode::parse_line(
            "\tv_dual_mov_b32 v10, v4 :: v_dual_mov_b32 v11, v5 // 000000001600: CA10010A 0B000105",
        )
        .unwrap()
        .unwrap();
        assert!(Probe::for_target("gfx1100", 32).implements(&ins));
        assert!(matches!(
            Probe::for_target("gfx1100", 64).probe(&ins),
            ProbeOutcome::Unsupported(w) if w.contains("wave64")
        ));
    }

    #[test]
    fn xor3_is_the_xor_of_three() {
        let w = run_one("v_xor3_b32 v0, v1, s2, 0x0f0f0f0f", |w| {
            w.v[1] = [0x1234_5678; LANES];
            w.s[2] = 0xffff_0000;
        });
        assert_eq!(w.v[0][7], 0x1234_5678 ^ 0xffff_0000 ^ 0x0f0f_0f0f);
    }

    #[test]
    fn true16_halves_read_and_write_one_half() {
        // Triton's gfx1201 matmul, as llvm-objdump-22 --mattr=+real-true16
        // prints it (words 7F123909, 7E123880).
        let ins = crate::decode::parse_line("\tv_mov_b16_e32 v9.h, v9.l // 000000001730: 7F123909")
            .unwrap()
            .unwrap();
        assert_eq!(ins.modifier("t16"), Some("hl"));
        let w = run_encoded("v_mov_b16_e32 v9.h, v9.l", "7F123909", |w| {
            w.v[9] = [0x1234_5678; LANES];
        });
        assert_eq!(w.v[9][0], 0x5678_5678);
        // A `.l` destination keeps the high half.
        let w = run_encoded("v_mov_b16_e32 v9.l, 0", "7E123880", |w| {
            w.v[9] = [0x1234_5678; LANES];
        });
        assert_eq!(w.v[9][3], 0x1234_0000);
        // f16 add of the two halves of v1 into v0's high half.
        let w = run_one("v_add_f16_e64 v0.h, v1.l, v1.h", |w| {
            w.v[0] = [0xaaaa_bbbb; LANES];
            w.v[1] = [(0x4000 << 16) | 0x3c00; LANES]; // 2.0, 1.0
        });
        assert_eq!(w.v[0][0], 0x4200_bbbb); // 3.0
                                            // A compare of a high half.
        let w = run_one("v_cmp_lt_f16_e32 vcc_lo, v1.l, v1.h", |w| {
            w.v[1] = [(0x4000 << 16) | 0x3c00; LANES];
        });
        assert_eq!(w.s[VCC as usize], u32::MAX);
    }

    #[test]
    fn vop3_modifiers_neg_abs_clamp_omod() {
        let w = run_one("v_add_f32_e64 v0, -|v1|, v2 clamp", |w| {
            w.v[1] = [(-0.25f32).to_bits(); LANES];
            w.v[2] = [0.5f32.to_bits(); LANES];
        });
        assert_eq!(f32::from_bits(w.v[0][0]), 0.25);
        let w = run_one("v_mul_f32_e64 v0, v1, v2 mul:2", |w| {
            w.v[1] = [3.0f32.to_bits(); LANES];
            w.v[2] = [0.5f32.to_bits(); LANES];
        });
        assert_eq!(f32::from_bits(w.v[0][0]), 3.0);
        let w = run_one("v_fmamk_f32 v1, v2, 0x40000000, v1", |w| {
            w.v[1] = [1.0f32.to_bits(); LANES];
            w.v[2] = [3.0f32.to_bits(); LANES];
        });
        assert_eq!(f32::from_bits(w.v[1][0]), 7.0);
    }

    #[test]
    fn vop3p_packed_halves_follow_op_sel() {
        // lo = a.hi * b.lo + c.lo, hi = a.lo * b.hi + c.hi (op_sel:[1,0,0] op_sel_hi:[0,1,1]).
        let h = |x: f32| half::f16::from_f32(x).to_bits() as u32;
        let w = run_one(
            "v_pk_fma_f16 v0, v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[0,1,1]",
            |w| {
                w.v[1] = [h(2.0) | h(3.0) << 16; LANES];
                w.v[2] = [h(5.0) | h(7.0) << 16; LANES];
                w.v[3] = [h(1.0) | h(-1.0) << 16; LANES];
            },
        );
        assert_eq!(w.v[0][0], h(16.0) | h(13.0) << 16);
    }

    /// One instruction on a probe (`init` sets it up): its outcome.
    fn try_one(text: &str, init: impl FnOnce(&mut Probe)) -> (Probe, R<()>) {
        try_encoded(text, "00000000", init)
    }

    #[test]
    fn scale_offset_scales_scratch_and_smem_offsets_and_is_refused_elsewhere() {
        // SCRATCH: lane l reads its private dword at v0 * 4 (+ offset:8).
        let (p, r) = try_one(
            "scratch_load_dword v1, v0, off offset:8 scale_offset",
            |p| {
                for l in 0..LANES {
                    p.wave.v[0][l] = l as u32 % 5;
                    let at = 4 * (l as u32 % 5) + 8;
                    p.wave
                        .private_write(l, at, &(1000 + l as u32).to_le_bytes())
                        .unwrap();
                }
            },
        );
        r.unwrap();
        for l in 0..LANES {
            assert_eq!(p.wave.v[1][l], 1000 + l as u32, "lane {l}");
        }
        // SMEM: the SGPR offset times the load's 8 bytes, the immediate not.
        let (p, r) = try_one(
            "s_load_dwordx2 s[8:9], s[0:1], s6 offset:0x4 scale_offset",
            |p| {
                let base = p.pointer;
                p.wave.s[0] = base as u32;
                p.wave.s[1] = (base >> 32) as u32;
                p.wave.s[6] = 3;
                p.mem
                    .write(base + 3 * 8 + 4, &[1, 0, 0, 0, 2, 0, 0, 0])
                    .unwrap();
            },
        );
        r.unwrap();
        assert_eq!((p.wave.s[8], p.wave.s[9]), (1, 2));
        for (text, name) in [
            (
                "buffer_load_dword v1, v0, s[0:3], 0 offen scale_offset",
                "scale_offset",
            ),
            (
                "global_load_dword v1, v[0:1], off scale_offset",
                "scale_offset",
            ),
            (
                "s_buffer_load_dword s4, s[0:3], s5 scale_offset",
                "scale_offset",
            ),
            ("global_load_dword v1, v0, s[0:1] tfe", "tfe"),
            ("buffer_store_dword v1, v0, s[0:3], 0 offen lwe", "lwe"),
        ] {
            let (_, r) = try_one(text, |_| {});
            match r {
                Err(Stop::Unsupported(m)) => assert!(m.contains(name), "{text}: {m}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    /// RDNA's clamped/conditional subtracts and float compare-stores, run
    /// through the LDS and global paths lane by lane against the ISA
    /// guides' pseudo-code written out here (RDNA3 GLOBAL_ATOMIC_CSUB_U32,
    /// DS_CMPSTORE_F32; RDNA4 DS_COND_SUB_U32, DS_SUB_CLAMP_U32): memory
    /// and the returned old value.
    #[test]
    fn rdna_sub_clamp_cond_sub_and_f32_compare_stores_follow_the_pseudo_code() {
        let f = |x: f32| x.to_bits();
        let nan = f32::NAN.to_bits();
        // (memory, DATA, DATA2) per lane; lanes past the list repeat it.
        let cases: [(u32, u32, u32); 8] = [
            (10, 3, 10),
            (3, 10, 4),
            (7, 7, 7),
            (0, 1, 0),
            (f(-0.0), f(2.5), f(0.0)),
            (f(1.5), f(9.0), f(1.5)),
            (nan, f(1.0), nan),
            (u32::MAX, 1, 0x8000_0000),
        ];
        // The guide's pseudo-code as written (not `saturating_sub`).
        #[allow(clippy::implicit_saturating_sub)]
        let clamp = |m: u32, d: u32, _: u32| if m < d { 0 } else { m - d };
        let cond = |m: u32, d: u32, _: u32| if m >= d { m - d } else { m };
        let fcmp = |m: u32, d: u32, c: u32| {
            if f32::from_bits(m) == f32::from_bits(c) {
                d
            } else {
                m
            }
        };
        type Pc = fn(u32, u32, u32) -> u32;
        let lds_ops: [(&str, Pc); 3] = [
            ("ds_sub_clamp_rtn_u32 v0, v1, v2", clamp),
            ("ds_cond_sub_rtn_u32 v0, v1, v2", cond),
            ("ds_cmpstore_rtn_f32 v0, v1, v2, v3", fcmp),
        ];
        for (text, pc) in lds_ops {
            let (mut p, r) = try_one(text, |p| {
                for l in 0..LANES {
                    let (m, d, c) = cases[l % cases.len()];
                    p.wave.v[1][l] = 4 * l as u32;
                    p.wave.v[2][l] = d;
                    p.wave.v[3][l] = c;
                    p.lds.write(4 * l as u32, 4, m as u64);
                }
            });
            r.unwrap_or_else(|e| panic!("{text}: {e:?}"));
            for l in 0..LANES {
                let (m, d, c) = cases[l % cases.len()];
                assert_eq!(p.wave.v[0][l], m, "{text}: lane {l} returns the old value");
                let got = p.lds.read(4 * l as u32, 4) as u32;
                assert_eq!(
                    got,
                    pc(m, d, c),
                    "{text}: lane {l} ({m:#x}, {d:#x}, {c:#x})"
                );
            }
        }
        let global_ops: [(&str, Pc); 3] = [
            ("global_atomic_csub_u32 v0, v1, v2, s[0:1] glc", clamp),
            (
                "global_atomic_cond_sub_u32 v0, v1, v2, s[0:1] th:TH_ATOMIC_RETURN",
                cond,
            ),
            ("global_atomic_cmpswap_f32 v0, v1, v[2:3], s[0:1] glc", fcmp),
        ];
        for (text, pc) in global_ops {
            let mut base = 0;
            let (p, r) = try_one(text, |p| {
                base = p.pointer;
                p.wave.s[0] = base as u32;
                p.wave.s[1] = (base >> 32) as u32;
                for l in 0..LANES {
                    let (m, d, c) = cases[l % cases.len()];
                    p.wave.v[1][l] = 4 * l as u32;
                    p.wave.v[2][l] = d;
                    p.wave.v[3][l] = c;
                    p.mem.write(base + 4 * l as u64, &m.to_le_bytes()).unwrap();
                }
            });
            r.unwrap_or_else(|e| panic!("{text}: {e:?}"));
            for l in 0..LANES {
                let (m, d, c) = cases[l % cases.len()];
                assert_eq!(p.wave.v[0][l], m, "{text}: lane {l} returns the old value");
                let mut b = [0u8; 4];
                p.mem.read(base + 4 * l as u64, &mut b).unwrap();
                let got = u32::from_le_bytes(b);
                assert_eq!(
                    got,
                    pc(m, d, c),
                    "{text}: lane {l} ({m:#x}, {d:#x}, {c:#x})"
                );
            }
        }
    }

    #[test]
    fn an_unexpected_operand_form_is_unsupported_not_a_crash() {
        let ins = crate::decode::parse_line("\tv_readlane_b32 s0 // 000000001600: D2890000")
            .unwrap()
            .unwrap();
        let mut p = Probe::new();
        p.program.instructions.push(ins);
        p.wave.set_exec(u64::MAX);
        let Probe {
            wave,
            lds,
            mem,
            program,
            ..
        } = &mut p;
        let mut ctx = Ctx {
            program,
            mem,
            lds,
            shared_base_hi: 1,
            private_base_hi: 2,
            ocp_fp8: false,
            trace: Trace::default(),
            observer: None,
            typed: &[],
        };
        let r = run_until_blocked(wave, &mut ctx, 10);
        assert!(matches!(r, Err((Stop::Unsupported(d), 0)) if d.contains("operand form")));
    }
}
