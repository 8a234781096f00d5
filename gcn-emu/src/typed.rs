//! Instructions decoded once into typed operations, executed over all 64
//! lanes at a time.
//!
//! `lower` turns a decoded [`Instruction`] (LLVM's text, split into
//! operands and modifiers) into a `Typed` operation once per dispatch: an
//! operation id, its operands resolved to register indices or constants
//! (an inline or literal constant already converted to the operand's type),
//! and branch targets resolved to instruction indices. `exec` then runs it
//! without touching a string: the operation is matched once per
//! wave-instruction, and each arm is a loop over the 64 lanes that the
//! compiler vectorises (inactive lanes are computed and then masked out, so
//! the loop has no branch).
//!
//! Only the forms this module knows are lowered — the common integer,
//! bitwise, f32, f16 and f64 vector operations (their DPP forms too), the
//! transcendentals and division steps, conversions, packed VOP3P math and
//! `v_fma_mix*`, compares, cross-lane moves, dense and i8 MFMA, LDS (with
//! atomics), MUBUF, global (with atomics) and scratch loads and stores,
//! scalar ALU and loads, branches, waits, barriers — and only without
//! modifiers it does not model (`op_sel` outside VOP3P, SDWA, integer
//! `neg`/`abs`; `clamp` and `omod` only where modelled: VOP3P, f64 results,
//! integer saturation); every other instruction is `None` and runs on the
//! executor of [`crate::exec`], which stays the
//! reference: a differential test runs each lowered instruction of the
//! corpora on both, over random wave states, and requires the same result
//! (`gcn-emu/tests/it/typed.rs`).

use crate::decode::{Instruction, Operand, Program, RegFile, Src, VCC};
use crate::exec::{base_name, Ctx, Stop, Wave, LANES};
use crate::observe::{AccessKind, Space};

mod rdna;
pub(crate) use rdna::lower_all_for;
pub use rdna::{lowered_for, Shape};

type R<T> = std::result::Result<T, Stop>;
type Lanes = [u32; LANES];
type Lanes64 = [u64; LANES];

/// A source operand, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opnd {
    /// A VGPR.
    V(u16),
    /// An AGPR.
    A(u16),
    /// An SGPR in hardware numbering (checked below 128 when lowered; a
    /// 64-bit operand's pair below 127).
    S(u16),
    /// A constant, already in the operand's type and width.
    Imm(u64),
}

/// A vector destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VDst {
    file: RegFile,
    index: u16,
}

/// Vector operations with a 32-bit result and up to three 32-bit sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum V32 {
    Mov,
    Not,
    And,
    Or,
    Xor,
    Xnor,
    Or3,
    AndOr,
    LshlOr,
    Bfi,
    BfeU,
    AlignBit,
    LshlRev,
    LshrRev,
    AshrRev,
    LshlAdd,
    AddLshl,
    Add,
    Sub,
    SubRev,
    Add3,
    Xad,
    MulLo,
    MulHiU,
    MulHiI,
    MulU24,
    MulI24,
    MadU24,
    MinU,
    MaxU,
    MinI,
    MaxI,
    Min3U,
    Max3U,
    Min3I,
    Max3I,
    AddF,
    SubF,
    SubRevF,
    MulF,
    FmaF,
    MadF,
    MinF,
    MaxF,
    Min3F,
    Max3F,
    CvtF32U32,
    CvtF32I32,
    CvtU32F32,
    CvtI32F32,
    CvtPkBf16F32,
    Perm,
    BfeI,
    AlignByte,
    Bcnt,
    Bfrev,
    FfbhU,
    FfblB,
    MbcntLo,
    MbcntHi,
    Med3U,
    Med3I,
    Med3F,
    MulLegacyF,
    Rcp,
    Sqrt,
    Rsq,
    Exp,
    Log,
    Sin,
    Cos,
    Floor,
    Ceil,
    Trunc,
    Rndne,
    Fract,
    FrexpMant,
    FrexpExp,
    /// `v_ldexp_f32`: the second source is an integer.
    Ldexp,
    DivFixup,
    /// `v_div_fmas_f32`: scaled by VCC's lane bit.
    DivFmas,
    CvtF16F32,
    CvtF32F16,
    CvtF32Ubyte(u8),
    /// `v_cvt_off_f32_i4`: the signed 4-bit integer in bits 3:0, over 16.
    CvtOffF32I4,
    /// gfx950 `v_cvt_f32_bf16`: the low half as an f32's high half.
    CvtF32Bf16,
    /// gfx950 `v_bitop3_b32`: bit i of the table is the result for the
    /// source bits (a, b, c) = i.
    Bitop3(u8),
    /// CDNA's dot products (`crate::exec::dot_lane`): the form and `clamp`.
    Dot(crate::exec::DotForm, bool),
    CvtPkrtz,
    CvtPkF16F32,
    PackF16,
    AddH,
    SubH,
    SubRevH,
    MulH,
    FmaH,
    MaxH,
    MinH,
    /// `v_div_fixup_f16`, through the reference's f32 function.
    DivFixupH,
    /// 16-bit integer arithmetic (the result's high half 0), and with
    /// `clamp` the saturating forms of it and of the 32-bit ones.
    AddU16,
    SubU16,
    SubRevU16,
    MulLoU16,
    AddU16Sat,
    SubU16Sat,
    SubRevU16Sat,
    AddI16Sat,
    SubI16Sat,
    AddUSat,
    SubUSat,
    SubRevUSat,
    AddISat,
    SubISat,
    /// RDNA4's `v_max_num_f32`/`v_min_num_f32` (the reference's
    /// `num_minmax32`).
    MaxNum,
    MinNum,
}

impl V32 {
    fn of(name: &str) -> Option<(V32, usize, bool)> {
        use V32::*;
        // (operation, sources, float sources: neg/abs apply)
        Some(match name {
            "v_mov_b32" | "v_accvgpr_write_b32" | "v_accvgpr_read_b32" | "v_accvgpr_mov_b32" => {
                (Mov, 1, false)
            }
            "v_not_b32" => (Not, 1, false),
            "v_and_b32" => (And, 2, false),
            "v_or_b32" => (Or, 2, false),
            "v_xor_b32" => (Xor, 2, false),
            "v_xnor_b32" => (Xnor, 2, false),
            "v_or3_b32" => (Or3, 3, false),
            "v_and_or_b32" => (AndOr, 3, false),
            "v_lshl_or_b32" => (LshlOr, 3, false),
            "v_bfi_b32" => (Bfi, 3, false),
            "v_bfe_u32" => (BfeU, 3, false),
            "v_alignbit_b32" => (AlignBit, 3, false),
            "v_lshlrev_b32" => (LshlRev, 2, false),
            "v_lshrrev_b32" => (LshrRev, 2, false),
            "v_ashrrev_i32" => (AshrRev, 2, false),
            "v_lshl_add_u32" => (LshlAdd, 3, false),
            "v_add_lshl_u32" => (AddLshl, 3, false),
            "v_add_u32" | "v_add_i32" => (Add, 2, false),
            "v_sub_u32" | "v_sub_i32" => (Sub, 2, false),
            "v_subrev_u32" => (SubRev, 2, false),
            "v_add3_u32" => (Add3, 3, false),
            "v_xad_u32" => (Xad, 3, false),
            "v_mul_lo_u32" | "v_mul_lo_i32" => (MulLo, 2, false),
            "v_mul_hi_u32" => (MulHiU, 2, false),
            "v_mul_hi_i32" => (MulHiI, 2, false),
            "v_mul_u32_u24" => (MulU24, 2, false),
            "v_mul_i32_i24" => (MulI24, 2, false),
            "v_mad_u32_u24" => (MadU24, 3, false),
            "v_min_u32" => (MinU, 2, false),
            "v_max_u32" => (MaxU, 2, false),
            "v_min_i32" => (MinI, 2, false),
            "v_max_i32" => (MaxI, 2, false),
            "v_min3_u32" => (Min3U, 3, false),
            "v_max3_u32" => (Max3U, 3, false),
            "v_min3_i32" => (Min3I, 3, false),
            "v_max3_i32" => (Max3I, 3, false),
            "v_add_f32" => (AddF, 2, true),
            "v_sub_f32" => (SubF, 2, true),
            "v_subrev_f32" => (SubRevF, 2, true),
            "v_mul_f32" => (MulF, 2, true),
            "v_fma_f32" | "v_fmac_f32" => (FmaF, 3, true),
            "v_mad_f32" | "v_mac_f32" => (MadF, 3, true),
            "v_min_f32" => (MinF, 2, true),
            "v_max_f32" => (MaxF, 2, true),
            "v_min3_f32" => (Min3F, 3, true),
            "v_max3_f32" => (Max3F, 3, true),
            "v_cvt_f32_u32" => (CvtF32U32, 1, false),
            "v_cvt_f32_i32" => (CvtF32I32, 1, false),
            "v_cvt_u32_f32" => (CvtU32F32, 1, true),
            "v_cvt_i32_f32" => (CvtI32F32, 1, true),
            "v_cvt_pk_bf16_f32" => (CvtPkBf16F32, 2, true),
            "v_perm_b32" => (Perm, 3, false),
            "v_bfe_i32" => (BfeI, 3, false),
            "v_alignbyte_b32" => (AlignByte, 3, false),
            "v_bcnt_u32_b32" => (Bcnt, 2, false),
            "v_bfrev_b32" => (Bfrev, 1, false),
            "v_ffbh_u32" => (FfbhU, 1, false),
            "v_ffbl_b32" => (FfblB, 1, false),
            "v_mbcnt_lo_u32_b32" => (MbcntLo, 2, false),
            "v_mbcnt_hi_u32_b32" => (MbcntHi, 2, false),
            "v_med3_u32" => (Med3U, 3, false),
            "v_med3_i32" => (Med3I, 3, false),
            "v_med3_f32" => (Med3F, 3, true),
            "v_mul_legacy_f32" => (MulLegacyF, 2, true),
            "v_fmamk_f32" | "v_fmaak_f32" => (FmaF, 3, true),
            "v_madmk_f32" | "v_madak_f32" => (MadF, 3, true),
            "v_rcp_f32" | "v_rcp_iflag_f32" => (Rcp, 1, true),
            "v_sqrt_f32" => (Sqrt, 1, true),
            "v_rsq_f32" => (Rsq, 1, true),
            "v_exp_f32" => (Exp, 1, true),
            "v_log_f32" => (Log, 1, true),
            "v_sin_f32" => (Sin, 1, true),
            "v_cos_f32" => (Cos, 1, true),
            "v_floor_f32" => (Floor, 1, true),
            "v_ceil_f32" => (Ceil, 1, true),
            "v_trunc_f32" => (Trunc, 1, true),
            "v_rndne_f32" => (Rndne, 1, true),
            "v_fract_f32" => (Fract, 1, true),
            "v_frexp_mant_f32" => (FrexpMant, 1, true),
            "v_frexp_exp_i32_f32" => (FrexpExp, 1, true),
            "v_ldexp_f32" => (Ldexp, 2, true),
            "v_div_fixup_f32" => (DivFixup, 3, true),
            "v_div_fmas_f32" => (DivFmas, 3, true),
            "v_cvt_f16_f32" => (CvtF16F32, 1, true),
            "v_cvt_f32_f16" => (CvtF32F16, 1, true),
            "v_cvt_off_f32_i4" => (CvtOffF32I4, 1, false),
            "v_cvt_f32_ubyte0" => (CvtF32Ubyte(0), 1, false),
            "v_cvt_f32_ubyte1" => (CvtF32Ubyte(1), 1, false),
            "v_cvt_f32_ubyte2" => (CvtF32Ubyte(2), 1, false),
            "v_cvt_f32_ubyte3" => (CvtF32Ubyte(3), 1, false),
            "v_cvt_f32_bf16" => (CvtF32Bf16, 1, false),
            "v_cvt_pkrtz_f16_f32" => (CvtPkrtz, 2, true),
            "v_cvt_pk_f16_f32" => (CvtPkF16F32, 2, true),
            "v_pack_b32_f16" => (PackF16, 2, true),
            "v_add_f16" => (AddH, 2, true),
            "v_sub_f16" => (SubH, 2, true),
            "v_subrev_f16" => (SubRevH, 2, true),
            "v_mul_f16" => (MulH, 2, true),
            "v_fma_f16" | "v_fmac_f16" => (FmaH, 3, true),
            "v_max_f16" => (MaxH, 2, true),
            "v_min_f16" => (MinH, 2, true),
            "v_div_fixup_f16" => (DivFixupH, 3, true),
            "v_max_num_f32" => (MaxNum, 2, true),
            "v_min_num_f32" => (MinNum, 2, true),
            _ => return None,
        })
    }

    /// The sources (bits) that are f16: their modifiers act on bit 15 and
    /// a float constant is an f16.
    fn half(self) -> u8 {
        use V32::*;
        match self {
            CvtF32F16 | PackF16 => 0b011,
            AddH | SubH | SubRevH | MulH | FmaH | MaxH | MinH | DivFixupH => 0b111,
            // (A float constant of a 16-bit integer source is an f16.)
            AddU16 | SubU16 | SubRevU16 | MulLoU16 | AddU16Sat | SubU16Sat | SubRevU16Sat
            | AddI16Sat | SubI16Sat => 0b011,
            _ => 0,
        }
    }

    /// The sources (bits) of a float operation that are integers (no
    /// modifiers: the reference ignores them there).
    fn int(self) -> u8 {
        match self {
            V32::Ldexp => 0b110,
            V32::CvtPkrtz | V32::CvtPkF16F32 | V32::CvtPkBf16F32 | V32::PackF16 => 0b100,
            _ => 0,
        }
    }
}

/// Vector operations with a 64-bit result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum V64 {
    /// `v_lshl_add_u64`: (a << (b & 7)) + c.
    LshlAdd,
    /// `v_lshlrev_b64`: b << (a & 63).
    LshlRev,
    /// `v_lshrrev_b64`: b >> (a & 63).
    LshrRev,
    /// `v_mov_b64`.
    Mov,
}

/// Vector operations with a carry (or borrow) out to an SGPR pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carry {
    Add,
    Sub,
    SubRev,
    AddC,
    SubB,
    SubBRev,
    /// `v_mad_u64_u32`: a 64-bit result.
    MadU64,
}

/// A comparison's relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rel {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Ne,
    Ge,
    T,
    /// Float only: ordered, unordered, and the negated relations (true
    /// when unordered).
    O,
    U,
    Nge,
    Nlg,
    Ngt,
    Nle,
    Neq,
    Nlt,
}

/// A comparison's operand type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpTy {
    U32,
    I32,
    F32,
    /// 64-bit operands (vector compares only).
    U64,
    I64,
    F64,
    /// `v_cmp_class_f64`: source 1 is the 32-bit class mask.
    ClassF64,
    /// `v_cmp_class_f32`: the class mask, not a relation.
    ClassF32,
}

impl CmpTy {
    fn wide(self) -> bool {
        matches!(self, CmpTy::U64 | CmpTy::I64 | CmpTy::F64 | CmpTy::ClassF64)
    }
}

/// f64 vector operations ([`Typed::F64`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum F64Op {
    Add,
    Mul,
    Fma,
    Min,
    Max,
    Rcp,
    Sqrt,
    Rsq,
    Floor,
    Ceil,
    Trunc,
    Rndne,
    /// Source 1 is a 32-bit integer.
    Ldexp,
    DivFixup,
    /// Scaled by VCC's lane bit.
    DivFmas,
    /// The lane's bit to the SGPR pair `sdst`.
    DivScale,
    /// Conversions: `v_cvt_f64_{f32,i32,u32}`, `v_cvt_{f32,i32,u32}_f64`.
    FromF32,
    FromI32,
    FromU32,
    ToF32,
    ToI32,
    ToU32,
}

/// An f64 vector operation ([`Typed::F64`]), as the reference executor
/// runs it: sources read with their float modifiers, the result canonical
/// (NaN), perturbed when approximate, then scaled by `omod` and clamped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct F64 {
    op: F64Op,
    dst: VDst,
    sdst: Option<u16>,
    src: [Opnd; 3],
    /// Bit k: source k is 64 bits wide (else 32).
    wide: u8,
    /// Bit k: source k is a float (modifiers apply to its sign: bit 63 of
    /// a wide one, bit 31 of a narrow one).
    neg: u8,
    abs: u8,
    clamp: bool,
    omod: f64,
    approx: Option<&'static crate::approx::Approx>,
}

impl F64Op {
    /// (operation, sources, 64-bit sources, float sources, 64-bit result).
    fn of(name: &str) -> Option<(F64Op, usize, u8, u8, bool)> {
        use F64Op::*;
        Some(match name {
            "v_add_f64" => (Add, 2, 0b011, 0b011, true),
            "v_mul_f64" => (Mul, 2, 0b011, 0b011, true),
            "v_fma_f64" | "v_fmac_f64" => (Fma, 3, 0b111, 0b111, true),
            "v_min_f64" => (Min, 2, 0b011, 0b011, true),
            "v_max_f64" => (Max, 2, 0b011, 0b011, true),
            "v_rcp_f64" => (Rcp, 1, 1, 1, true),
            "v_sqrt_f64" => (Sqrt, 1, 1, 1, true),
            "v_rsq_f64" => (Rsq, 1, 1, 1, true),
            "v_floor_f64" => (Floor, 1, 1, 1, true),
            "v_ceil_f64" => (Ceil, 1, 1, 1, true),
            "v_trunc_f64" => (Trunc, 1, 1, 1, true),
            "v_rndne_f64" => (Rndne, 1, 1, 1, true),
            "v_ldexp_f64" => (Ldexp, 2, 0b001, 0b001, true),
            "v_div_fixup_f64" => (DivFixup, 3, 0b111, 0b111, true),
            "v_div_fmas_f64" => (DivFmas, 3, 0b111, 0b111, true),
            "v_div_scale_f64" => (DivScale, 3, 0b111, 0b111, true),
            "v_cvt_f64_f32" => (FromF32, 1, 0, 1, true),
            "v_cvt_f64_i32" => (FromI32, 1, 0, 0, true),
            "v_cvt_f64_u32" => (FromU32, 1, 0, 0, true),
            "v_cvt_f32_f64" => (ToF32, 1, 1, 1, false),
            "v_cvt_i32_f64" => (ToI32, 1, 1, 1, false),
            "v_cvt_u32_f64" => (ToU32, 1, 1, 1, false),
            _ => return None,
        })
    }
}

/// One lane of an f64 operation: the result and the lane's bit out
/// (`v_div_scale_f64`), as [`crate::exec`]'s `valu` computes them.
#[inline]
fn f64_el(op: F64Op, x: [u64; 3], cin: bool) -> (u64, bool) {
    use crate::exec::{bf64, f64b};
    use F64Op::*;
    let (da, db, dc) = (f64b(x[0]), f64b(x[1]), f64b(x[2]));
    let v = match op {
        Add => bf64(da + db),
        Mul => bf64(da * db),
        Fma => bf64(da.mul_add(db, dc)),
        Min => bf64(da.min(db)),
        Max => bf64(da.max(db)),
        Rcp => bf64(1.0 / da),
        Sqrt => bf64(da.sqrt()),
        Rsq => bf64(1.0 / da.sqrt()),
        Floor => bf64(da.floor()),
        Ceil => bf64(da.ceil()),
        Trunc => bf64(da.trunc()),
        Rndne => bf64(da.round_ties_even()),
        Ldexp => bf64(crate::exec::ldexp64(da, x[1] as u32 as i32)),
        DivFixup => bf64(crate::exec::div_fixup64(da, db, dc)),
        DivFmas => {
            let d = if cin {
                let e = if dc.to_bits() >> 52 & 0x7ff >= 1023 {
                    128
                } else {
                    -128
                };
                crate::exec::fma_scaled64(da, db, dc, e)
            } else {
                da.mul_add(db, dc)
            };
            bf64(d)
        }
        DivScale => {
            let (d, vcc) = crate::exec::div_scale64(da, db, dc);
            return (bf64(d), vcc);
        }
        FromF32 => bf64(f(x[0] as u32) as f64),
        FromI32 => (x[0] as u32 as i32 as f64).to_bits(),
        FromU32 => (x[0] as u32 as f64).to_bits(),
        ToF32 => cf32(da as f32) as u64,
        ToI32 => da as i32 as u32 as u64,
        ToU32 => da as u32 as u64,
    };
    (v, false)
}

/// An f64 operand as the reference executor reads a constant for an f64
/// source: a literal integer (outside the inline range) is the high half.
fn fsrc64(s: &Src) -> Option<Opnd> {
    if s.sext {
        return None;
    }
    Some(match s.op {
        Operand::Int(i) if !(-16..=64).contains(&i) && (i as u64) <= 0xffff_ffff => {
            Opnd::Imm((i as u64) << 32)
        }
        Operand::Int(i) => Opnd::Imm(i as u64),
        Operand::Float(x) => Opnd::Imm(x.to_bits()),
        _ => vsrc(s, true)?,
    })
}

/// Scalar ALU operations of two 32-bit sources (SOP2) or one (SOP1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum S32 {
    Mov,
    AddU,
    SubU,
    AddC,
    SubB,
    AddI,
    SubI,
    Mul,
    MulHiU,
    MulHiI,
    And,
    Or,
    Xor,
    AndN2,
    OrN2,
    Lshl,
    Lshr,
    Ashr,
    LshlAdd(u8),
    MinU,
    MaxU,
    MinI,
    MaxI,
    Cselect,
    Nand,
    Nor,
    Xnor,
    /// `s_bfe_{u,i}32` (signed: `true`).
    Bfe(bool),
    Bfm,
    /// SOP1 of one source.
    Not,
    Brev,
    Bcnt1,
    Ff1,
    Flbit,
    SextI8,
    SextI16,
    Abs,
    /// `s_absdiff_i32`.
    AbsDiff,
    PackLl,
    PackLh,
    PackHh,
}

/// Scalar ALU operations of 64-bit sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum S64 {
    Mov,
    And,
    Or,
    Xor,
    AndN2,
    OrN2,
    Cselect,
    /// Shifts: the second source is a 32-bit amount.
    Lshl,
    Lshr,
    Ashr,
    Nand,
    Nor,
    Xnor,
    Not,
    Brev,
    /// `s_bfe_{u,i}64` (signed: `true`); the second source is 32-bit.
    Bfe(bool),
    /// `s_bfm_b64`: two 32-bit sources.
    Bfm,
    /// A 32-bit result of a 64-bit source: `s_bcnt1_i32_b64`,
    /// `s_ff1_i32_b64`, `s_flbit_i32_b64`.
    Bcnt1,
    Ff1,
    Flbit,
}

/// `s_<op>_saveexec_b64`: the SGPR pair gets exec, exec gets op(source,
/// exec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SaveOp {
    And,
    Or,
    Xor,
    AndN2,
    OrN2,
    Nand,
    Nor,
    Xnor,
    AndN1,
    OrN1,
}

/// The operation of `s_<op>_saveexec_*` (`kind` is `s_<op>`).
fn save_op(kind: &str) -> Option<SaveOp> {
    Some(match kind {
        "s_and" => SaveOp::And,
        "s_or" => SaveOp::Or,
        "s_xor" => SaveOp::Xor,
        "s_andn2" => SaveOp::AndN2,
        "s_orn2" => SaveOp::OrN2,
        "s_nand" => SaveOp::Nand,
        "s_nor" => SaveOp::Nor,
        "s_xnor" => SaveOp::Xnor,
        "s_andn1" => SaveOp::AndN1,
        "s_orn1" => SaveOp::OrN1,
        _ => return None,
    })
}

/// A saveexec's new exec mask: op(source, exec).
fn save(op: SaveOp, src: u64, exec: u64) -> u64 {
    match op {
        SaveOp::And => src & exec,
        SaveOp::Or => src | exec,
        SaveOp::Xor => src ^ exec,
        SaveOp::AndN2 => src & !exec,
        SaveOp::OrN2 => src | !exec,
        SaveOp::Nand => !(src & exec),
        SaveOp::Nor => !(src | exec),
        SaveOp::Xnor => !(src ^ exec),
        SaveOp::AndN1 => !src & exec,
        SaveOp::OrN1 => !src | exec,
    }
}

/// A branch's condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cond {
    Always,
    Scc0,
    Scc1,
    Vccz,
    Vccnz,
    Execz,
    Execnz,
}

/// One instruction, decoded once.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Typed {
    /// No architectural effect in the emulator (`s_nop`, `s_waitcnt`, …).
    Nop,
    /// A branch to instruction `target` (an index into the program).
    Branch { cond: Cond, target: usize, to: u64 },
    /// A 32-bit vector operation.
    V32 {
        op: V32,
        dst: VDst,
        src: [Opnd; 3],
        /// Bit k: negate (float sources) / take the magnitude of source k.
        neg: u8,
        abs: u8,
        /// `v_fmac`/`v_mac` with two printed sources: the destination is the
        /// addend.
        acc: bool,
        /// An approximate operation ([`crate::approx`]): counted, and
        /// perturbed when the launch asks.
        approx: Option<&'static crate::approx::Approx>,
        /// DPP: source 0 from other lanes.
        dpp: Option<Box<Dpp>>,
    },
    /// A 64-bit vector operation.
    V64 {
        op: V64,
        dst: VDst,
        src: [Opnd; 3],
        /// Whether each source is 64 bits wide.
        wide: [bool; 3],
    },
    /// A vector operation with a carry out (and in).
    Carry {
        op: Carry,
        dst: VDst,
        sdst: u16,
        src: [Opnd; 3],
        cin: Option<u16>,
    },
    /// `v_div_scale_f32`: the scaled value, and VCC's bits to the SGPR
    /// pair `sdst`.
    DivScale {
        dst: VDst,
        sdst: u16,
        src: [Opnd; 3],
        neg: u8,
        abs: u8,
    },
    /// `v_cndmask_b32`.
    Cndmask {
        dst: VDst,
        src: [Opnd; 2],
        neg: u8,
        abs: u8,
        mask: u16,
    },
    /// `v_cmp_*`/`v_cmpx_*` of 32-bit operands.
    Cmp {
        rel: Rel,
        ty: CmpTy,
        src: [Opnd; 2],
        neg: u8,
        abs: u8,
        /// The SGPR pair written (VCC for the 32-bit encoding), none for a
        /// `v_cmpx` without one.
        sdst: Option<u16>,
        x: bool,
    },
    /// A 32-bit scalar operation.
    S32 { op: S32, dst: u16, src: [Opnd; 2] },
    /// A 64-bit scalar operation.
    S64 { op: S64, dst: u16, src: [Opnd; 2] },
    /// `s_cmp_*` (and `s_cmpk_*`) of 32-bit operands.
    SCmp { rel: Rel, ty: CmpTy, src: [Opnd; 2] },
    /// `s_addk_i32`.
    AddK { dst: u16, imm: i32 },
    /// `s_<op>_saveexec_b64`.
    SaveExec { op: SaveOp, dst: u16, src: Opnd },
    /// `s_<op>_saveexec_b32` (wave32's; RDNA): one SGPR gets `exec_lo`.
    SaveExec32 { op: SaveOp, dst: u16, src: Opnd },
    /// A VOPD pair (RDNA, wave32): both halves read before either writes.
    Dual(Box<rdna::Dual>),
    /// `ds_read_{u8,i8,u16}_d16[_hi]`: into one half of the register, the
    /// other kept.
    DsD16(Box<rdna::D16>),
    /// `global_load_{ubyte,sbyte,short}_d16[_hi]` (`true`: the high half).
    GlobalD16(Box<(Global, bool)>),
    /// gfx10+'s `v_permlane16_b32` and `v_permlanex16_b32`.
    Permlane(Box<rdna::Permlane>),
    /// RDNA's `v_mov_b16` with true16 halves (`v9.h`, `v9.l`).
    Mov16(rdna::Mov16),
    /// gfx12's float and 64-bit scalar ALU (`s_add_f32`, `s_add_nc_u64`, …).
    Salu12 {
        op: rdna::Salu12,
        dst: u16,
        src: [Opnd; 3],
    },
    /// An f64 operation (and conversions to and from f64).
    F64(Box<F64>),
    /// A global atomic.
    Atomic(Box<Atomic>),
    /// `v_fma_mix_f32`, `v_fma_mixlo_f16`, `v_fma_mixhi_f16`.
    FmaMix(Box<FmaMix>),
    /// `scratch_load_*` and `scratch_store_*` of bytes, shorts and 1–4
    /// dwords: the lane's private memory.
    Scratch(Box<Scratch>),
    /// An LDS atomic (`ds_<op>[_rtn]_<type>`): `vaddr` is the address VGPR,
    /// `ret` the old value's registers; `data` for `cmpst` the compare
    /// value then the new one.
    DsAtomic(Box<Atomic>),
    /// gfx950 `ds_read_b64_tr_b{4,8,16}`: 64 bits a lane, transposed in
    /// groups of 16 lanes (see the reference's `ds_read_tr`).
    DsReadTr {
        dst: VDst,
        addr: u16,
        offset: u32,
        bits: u8,
    },
    /// `v_readlane_b32` (lane from `lane`) and `v_readfirstlane_b32`
    /// (`lane` none: the first active lane, 0 when none is).
    ReadLane {
        dst: u16,
        src: VDst,
        lane: Option<Opnd>,
    },
    /// `v_writelane_b32`: one lane (whatever exec holds).
    WriteLane { dst: VDst, src: Opnd, lane: Opnd },
    /// gfx950 `v_permlane16_swap_b32` (`half`: false) and
    /// `v_permlane32_swap_b32`: rows of `a` swapped with rows of `b`.
    PermSwap { a: VDst, b: VDst, row32: bool },
    /// `s_endpgm` (`Done`) and `s_barrier` (`Barrier`): the wave's state.
    Halt(crate::exec::WaveState),
    /// GFX9's VGPR indexing and VSKIP modes (`s_set_gpr_idx_*`,
    /// `s_setvskip`), as the reference sets them.
    Mode(Mode),
    /// `s_trap`: the wave stops with the reference's fault.
    Trap,
    /// `s_mov_b64 dst, src_shared_base` (`private`: `src_private_base`):
    /// the aperture's base address.
    Aperture { dst: u16, private: bool },
    /// `s_load_dword{,x2,x4,x8,x16}`: `dwords` SGPRs at `dst` from the
    /// address in the pair `base` plus the offset operand (`soff`) and the
    /// `offset` modifier, rounded down to 4 bytes.
    Smem {
        dst: u16,
        dwords: u8,
        base: u16,
        soff: Option<Opnd>,
        offset: u64,
    },
    /// `s_store_dword{,x2,x4}` (`atomic` none) and `s_atomic_*` (the
    /// operation, its size and whether `glc` returns the old value): at
    /// the address in the pair `base` plus `soff` and `offset`, rounded
    /// down to 4 bytes, from (into) the SGPRs at `data`.
    SmemWrite {
        atomic: Option<(AtomicOp, u8, bool)>,
        dwords: u8,
        data: u16,
        base: u16,
        soff: Option<Opnd>,
        offset: u64,
    },
    /// A dense f16/bf16/f32 MFMA.
    Mfma(Box<Mfma>),
    /// An MFMA of 8-bit and narrower elements ([`MfmaX`]).
    MfmaX(Box<MfmaX>),
    /// A byte-placing conversion: gfx950's `v_cvt_scalef32_pk_fp4_f32`
    /// (`src`: the two values and the scale; `byte`: vdst's byte written)
    /// and `v_cvt_scalef32_pk_bf16_fp8` (`byte`: 16 × the source word), and
    /// `v_cvt_pk_u8_f32`; as the reference's functions of those names.
    CvtPk {
        op: CvtPk,
        dst: VDst,
        src: [Opnd; 3],
        byte: u32,
    },
    /// `ds_read_b{32,64,96,128}` into `dwords` registers at `dst`.
    DsRead {
        dst: VDst,
        addr: u16,
        offset: u32,
        dwords: u8,
    },
    /// `ds_write_b{32,64,96,128}` of `dwords` registers at `data`.
    DsWrite {
        addr: u16,
        data: VDst,
        offset: u32,
        dwords: u8,
    },
    /// `ds_read_{u8,i8,u16,i16}` (`signed`: sign-extended) and
    /// `ds_write_{b8,b16}`: `size` bytes, one register.
    DsNarrow {
        write: bool,
        data: VDst,
        addr: u16,
        offset: u32,
        size: u8,
        signed: bool,
    },
    /// `ds_read2[st64]_b{32,64}` and `ds_write2[st64]_b{32,64}`: two
    /// accesses of `size` bytes at the address plus each offset (already
    /// scaled); `data` the two registers written (one range, for a read)
    /// or read.
    Ds2 {
        write: bool,
        data: [VDst; 2],
        addr: u16,
        off: [u32; 2],
        size: u8,
    },
    /// A packed (VOP3P) operation on two halves.
    Pk(Box<Pk>),
    /// The SDWA form of a 32-bit VOP1/VOP2 operation ([`Sdwa`]).
    Sdwa(Box<Sdwa>),
    /// The fp8/bf8 conversions ([`Fp8Cvt`]).
    Fp8Cvt(Box<Fp8Cvt>),
    /// `ds_bpermute_b32` (`addr`, `back`), `ds_permute_b32` (`addr`) and
    /// `ds_swizzle_b32` (no `addr`: the pattern is `offset`): lanes
    /// exchanged without LDS, as the reference's.
    DsPermute {
        dst: VDst,
        addr: Option<u16>,
        data: VDst,
        offset: u32,
        back: bool,
    },
    /// `buffer_atomic_*`: a global atomic through a V# (not swizzled: a
    /// swizzled one runs on the reference executor, which refuses it).
    BufferAtomic(Box<BufferAtomic>),
    /// `global_load_*` and `global_store_*` of whole registers, and of
    /// bytes and shorts into (from) one register.
    Global(Box<Global>),
    /// `buffer_load_dword*` (into registers, or into LDS with `lds`) and
    /// `buffer_store_dword*`, without `idxen`, through a V# that is not
    /// swizzled (a swizzled one runs on the reference executor).
    Buffer(Box<Buffer>),
}

impl Typed {
    /// Whether it accesses global memory (the differential test gives
    /// those an allocation).
    fn memory(&self) -> bool {
        matches!(
            self,
            Typed::Smem { .. }
                | Typed::SmemWrite { .. }
                | Typed::Global(_)
                | Typed::Atomic(_)
                | Typed::BufferAtomic(_)
        )
    }
}

/// [`Typed::Mode`]: what `s_set_gpr_idx_on` (`M0[7:0]` from `src`, the
/// operand mask `M0[15:12]` from the encoding), `s_set_gpr_idx_off`,
/// `s_set_gpr_idx_idx`, `s_set_gpr_idx_mode` and `s_setvskip` (VSKIP =
/// `src0[src1[4:0]]`) set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    On { src: Opnd, mask: u32 },
    Off,
    Index(Opnd),
    Operands(u32),
    Vskip([Opnd; 2]),
}

/// A DPP form's lanes ([`Typed::V32`]), as the reference executor reads
/// them from the encoding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dpp {
    /// The lane source 0 is read from, for each lane (`u8::MAX`: none).
    from: [u8; LANES],
    /// Lanes whose source lane is out of range, or inactive, read 0
    /// (`bound_ctrl`) instead of being left unwritten.
    bound_ctrl: bool,
    /// The lanes of the enabled rows and banks.
    enabled: u64,
    /// DPP8 (gfx10+): reading an inactive lane is refused, as the
    /// reference executor refuses it (fetch-inactive is not modelled).
    strict: bool,
}

/// A packed operation's element operation ([`Typed::Pk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PkOp {
    FmaH,
    AddH,
    MulH,
    MaxH,
    MinH,
    AddU16,
    SubU16,
    MulLoU16,
    LshlRevB16,
    LshrRevB16,
    FmaF,
    MulF,
    AddF,
    /// `v_pk_mov_b32`: whole dwords, `op_sel[0]` picks source 0's for the
    /// low result, `op_sel[1]` source 1's for the high (no negation).
    MovB32,
}

/// A VOP3P operation ([`Typed::Pk`]): each source's low and high element
/// picked by `op_sel`/`op_sel_hi` and negated by `neg_lo`/`neg_hi` (bit k:
/// source k), as the reference executor reads them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pk {
    op: PkOp,
    dst: VDst,
    /// Registers, or a constant already in both halves.
    src: [Opnd; 3],
    n: usize,
    /// 32-bit elements in register pairs (else 16-bit halves of one).
    wide: bool,
    op_sel: u8,
    op_sel_hi: u8,
    neg_lo: u8,
    neg_hi: u8,
    clamp: bool,
}

/// A global memory access ([`Typed::Global`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Global {
    store: bool,
    /// Bytes per lane.
    size: u8,
    /// A load of a byte or short sign-extends.
    signed: bool,
    data: VDst,
    /// The address: a VGPR pair, or with `saddr` a VGPR offset from an
    /// SGPR pair.
    vaddr: u16,
    saddr: Option<u16>,
    /// gfx1250: the `saddr` form's VGPR offset is sign-extended
    /// ([`voffset`]).
    signed_voffset: bool,
    offset: i64,
    /// `flat_*`: an address in the LDS or private aperture goes there.
    flat: bool,
    /// LDS DMA (`global_load_lds_*`, gfx90a's `global_load_* … lds`): no
    /// data registers; lane L's bytes go to LDS at M0 + offset + L·size.
    lds: bool,
}

/// An atomic read-modify-write's operation ([`Atomic`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomicOp {
    Swap,
    CmpSwap,
    Add,
    Sub,
    /// `ds_rsub_*`: data − old.
    RSub,
    SMin,
    SMax,
    UMin,
    UMax,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    AddF32,
    MaxF32,
    MinF32,
    AddF64,
    MaxF64,
    MinF64,
    PkAddF16,
    PkAddBf16,
}

impl AtomicOp {
    /// The operation of a `global_atomic_` suffix (without `_x2`), and
    /// its size when the suffix fixes it.
    fn of(kind: &str) -> Option<(AtomicOp, Option<u8>)> {
        use AtomicOp::*;
        Some(match kind {
            "swap" => (Swap, None),
            "cmpswap" => (CmpSwap, None),
            "add" => (Add, None),
            "sub" => (Sub, None),
            "smin" => (SMin, None),
            "smax" => (SMax, None),
            "umin" => (UMin, None),
            "umax" => (UMax, None),
            "and" => (And, None),
            "or" => (Or, None),
            "xor" => (Xor, None),
            "inc" => (Inc, None),
            "dec" => (Dec, None),
            "add_f32" => (AddF32, Some(4)),
            "add_f64" => (AddF64, Some(8)),
            "max_f64" => (MaxF64, Some(8)),
            "min_f64" => (MinF64, Some(8)),
            "pk_add_f16" => (PkAddF16, Some(4)),
            "pk_add_bf16" => (PkAddBf16, Some(4)),
            _ => return None,
        })
    }
}

/// The new value of an atomic, as [`crate::exec`]'s `atomic_op` computes it.
fn atomic_el(op: AtomicOp, size: u8, old: u64, data: u64, cmp: u64) -> u64 {
    use crate::exec::{bf64, f64b};
    use AtomicOp::*;
    let bits = 8 * size as u32;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let s = |v: u64| (((v & mask) << (64 - bits)) as i64) >> (64 - bits);
    (match op {
        Swap => data,
        CmpSwap if old == cmp => data,
        CmpSwap => old,
        Add => old.wrapping_add(data),
        Sub => old.wrapping_sub(data),
        RSub => data.wrapping_sub(old),
        SMin => s(old).min(s(data)) as u64,
        SMax => s(old).max(s(data)) as u64,
        UMin => old.min(data),
        UMax => old.max(data),
        And => old & data,
        Or => old | data,
        Xor => old ^ data,
        Inc if old >= data => 0,
        Inc => old + 1,
        Dec if old == 0 || old > data => data,
        Dec => old - 1,
        AddF32 => cf32(f(old as u32) + f(data as u32)) as u64,
        MaxF32 => cf32(f(old as u32).max(f(data as u32))) as u64,
        MinF32 => cf32(f(old as u32).min(f(data as u32))) as u64,
        AddF64 => bf64(f64b(old) + f64b(data)),
        MaxF64 => bf64(f64b(old).max(f64b(data))),
        MinF64 => bf64(f64b(old).min(f64b(data))),
        PkAddF16 => crate::exec::pk_add_f16(old, data),
        PkAddBf16 => crate::exec::pk_add_bf16(old, data),
    }) & mask
}

/// A `global_atomic_*` ([`Typed::Atomic`]): lane by lane in lane order, as
/// the reference executor makes them; with `glc`/`sc0` the old value to
/// `ret`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Atomic {
    op: AtomicOp,
    size: u8,
    ret: Option<VDst>,
    vaddr: u16,
    saddr: Option<u16>,
    /// gfx1250: the `saddr` form's VGPR offset is sign-extended
    /// ([`voffset`]).
    signed_voffset: bool,
    /// The data (for `cmpswap`, the source then the compare value).
    data: VDst,
    offset: i64,
    /// `flat_atomic_*`: an address in the LDS aperture goes there.
    flat: bool,
}

/// A scratch access ([`Typed::Scratch`]) at `vaddr + saddr + offset`
/// (either address operand `off`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scratch {
    store: bool,
    size: u8,
    signed: bool,
    data: VDst,
    vaddr: Option<u16>,
    saddr: Option<Opnd>,
    offset: i64,
}

/// A mixed-precision fma ([`Typed::FmaMix`]): source k is an f16 (the
/// half `op_sel` bit k picks) when `op_sel_hi` bit k is set, else an f32;
/// the f32 result, or its f16 into the low (`out` 1) or high (2) half.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FmaMix {
    dst: VDst,
    src: [Opnd; 3],
    sel: u8,
    hi: u8,
    neg: u8,
    abs: u8,
    clamp: bool,
    out: u8,
}

/// [`Typed::DsPermute`].
fn ds_permute(
    w: &mut Wave,
    dst: VDst,
    addr: Option<u16>,
    data: VDst,
    offset: u32,
    back: bool,
) -> R<()> {
    let exec = w.exec();
    let size = w.wave_size;
    let data = *vrow(w, data.file, data.index)?;
    let at = match addr {
        Some(a) => Some(*vrow(w, RegFile::V, a)?),
        None => None,
    };
    let active = |l: usize| exec >> l & 1 != 0;
    let mut out = [0u32; LANES];
    match at {
        Some(at) if back => {
            for l in (0..LANES).filter(|&l| active(l)) {
                let src = (at[l].wrapping_add(offset) / 4 % size) as usize;
                out[l] = if active(src) { data[src] } else { 0 };
            }
        }
        Some(at) => {
            for l in (0..LANES).filter(|&l| active(l)) {
                out[(at[l].wrapping_add(offset) / 4 % size) as usize] = data[l];
            }
        }
        None => {
            for l in (0..LANES).filter(|&l| active(l)) {
                let src = if offset & 0x8000 != 0 {
                    l / 4 * 4 + ((offset >> (2 * (l % 4))) & 3) as usize
                } else {
                    let (and, or, xor) =
                        (offset & 0x1f, (offset >> 5) & 0x1f, (offset >> 10) & 0x1f);
                    (l & 0x20) | (((l as u32 & and) | or) ^ xor) as usize
                };
                out[l] = if active(src) { data[src] } else { 0 };
            }
        }
    }
    put(vrow_mut(w, dst)?, &out, exec);
    Ok(())
}

/// An SDWA field: `bits` at `shift` (`bits` 32: the whole dword).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sel {
    shift: u8,
    bits: u8,
}

impl Sel {
    /// `BYTE_0`…`BYTE_3`, `WORD_0`, `WORD_1`, `DWORD` (absent: `DWORD`).
    fn of(v: Option<&str>) -> Option<Sel> {
        let (shift, bits) = match v.unwrap_or("DWORD") {
            "BYTE_0" => (0, 8),
            "BYTE_1" => (8, 8),
            "BYTE_2" => (16, 8),
            "BYTE_3" => (24, 8),
            "WORD_0" => (0, 16),
            "WORD_1" => (16, 16),
            "DWORD" => (0, 32),
            _ => return None,
        };
        Some(Sel { shift, bits })
    }
}

/// How SDWA fills the destination bits outside `dst_sel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unused {
    Pad,
    Preserve,
    Sext,
}

/// [`Typed::Sdwa`]: a 32-bit VOP1/VOP2 operation whose sources are
/// selected (and sign-extended with `sext(…)`) before `neg`/`abs`, and whose
/// result is placed by `dst_sel`/`dst_unused`, as the reference's
/// `sdwa_sel` and `sdwa_dst`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sdwa {
    op: V32,
    dst: VDst,
    src: [Opnd; 2],
    neg: u8,
    abs: u8,
    sel: [Sel; 2],
    sext: [bool; 2],
    dst_sel: Sel,
    unused: Unused,
}

fn lower_sdwa(ins: &Instruction, name: &str) -> Option<Typed> {
    let (op, n, float) = V32::of(name)?;
    // 32-bit results of one or two sources, exact (not approximate), not
    // accumulating into the destination.
    if n > 2
        || op.half() != 0
        || crate::approx::lookup(name).is_some()
        || matches!(name, "v_fmac_f32" | "v_mac_f32" | "v_fmac_f16")
    {
        return None;
    }
    let mut sel = [None; 3];
    let mut unused = Unused::Pad;
    for (k, v) in &ins.mods {
        match k.as_str() {
            "src0_sel" => sel[0] = Some(v.as_str()),
            "src1_sel" => sel[1] = Some(v.as_str()),
            "dst_sel" => sel[2] = Some(v.as_str()),
            "dst_unused" => {
                unused = match v.as_str() {
                    "UNUSED_PAD" => Unused::Pad,
                    "UNUSED_PRESERVE" => Unused::Preserve,
                    "UNUSED_SEXT" => Unused::Sext,
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    let ops = &ins.ops;
    if ops.len() != n + 1 || matches!(ops[0].op, Operand::Reg { count, .. } if count != 1) {
        return None;
    }
    let (neg, abs) = mods(&ops[1..], float)?;
    if (neg | abs) & op.int() != 0 {
        return None;
    }
    let mut src = [Opnd::Imm(0); 2];
    let mut sext = [false; 2];
    for (k, s) in ops[1..].iter().enumerate() {
        sext[k] = s.sext;
        src[k] = vsrc(
            &Src {
                sext: false,
                ..s.clone()
            },
            false,
        )?;
    }
    Some(Typed::Sdwa(Box::new(Sdwa {
        op,
        dst: vdst(&ops[0])?,
        src,
        neg,
        abs,
        sel: [Sel::of(sel[0])?, Sel::of(sel[1])?],
        sext,
        dst_sel: Sel::of(sel[2])?,
        unused,
    })))
}

/// The fp8/bf8 conversions, as the reference's `fp8_convert` (formats by
/// the target, `Ctx::ocp_fp8`): `v_cvt_f32_{fp8,bf8}` (`pk` false) and
/// `v_cvt_pk_f32_{fp8,bf8}` (`pk`: two bytes to a register pair) from
/// source 0 after an SDWA select (`sel`, `sext`), and
/// `v_cvt_pk_{fp8,bf8}_f32` (`encode`: two f32 sources with `neg`/`abs`
/// into the low or, with `op_sel[2]`, the high word of vdst).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fp8Cvt {
    bf8: bool,
    pk: bool,
    encode: bool,
    hi: bool,
    dst: VDst,
    src: [Opnd; 2],
    neg: u8,
    abs: u8,
    sel: Sel,
    sext: bool,
}

fn lower_fp8(ins: &Instruction, name: &str, enc: &str) -> Option<Typed> {
    let (bf8, pk, encode) = match name {
        "v_cvt_f32_fp8" => (false, false, false),
        "v_cvt_f32_bf8" => (true, false, false),
        "v_cvt_pk_f32_fp8" => (false, true, false),
        "v_cvt_pk_f32_bf8" => (true, true, false),
        "v_cvt_pk_fp8_f32" => (false, false, true),
        "v_cvt_pk_bf8_f32" => (true, false, true),
        _ => return None,
    };
    let sdwa = enc == "_sdwa";
    let mut sel = None;
    let mut hi = false;
    for (k, v) in &ins.mods {
        match k.as_str() {
            "src0_sel" if sdwa => sel = Some(v.as_str()),
            // A DWORD destination only (a 64-bit one must be).
            "dst_sel" if sdwa && v == "DWORD" => {}
            "dst_unused" if sdwa => {}
            "op_sel" if encode => {
                let bits: Vec<u32> = v
                    .trim_matches(|c| c == '[' || c == ']')
                    .split(',')
                    .map(|b| b.trim().parse().ok())
                    .collect::<Option<_>>()?;
                if bits.first().copied().unwrap_or(0) != 0 || bits.get(1).copied().unwrap_or(0) != 0
                {
                    return None;
                }
                hi = bits.get(2).copied().unwrap_or(0) != 0;
            }
            _ => return None,
        }
    }
    let ops = &ins.ops;
    let n = if encode { 2 } else { 1 };
    let regs = if pk { 2 } else { 1 };
    if ops.len() != n + 1 || !matches!(ops[0].op, Operand::Reg { count, .. } if count == regs) {
        return None;
    }
    let (neg, abs) = mods(&ops[1..], encode)?;
    let mut src = [Opnd::Imm(0); 2];
    for (k, s) in ops[1..].iter().enumerate() {
        src[k] = vsrc(
            &Src {
                sext: false,
                ..s.clone()
            },
            false,
        )?;
    }
    Some(Typed::Fp8Cvt(Box::new(Fp8Cvt {
        bf8,
        pk,
        encode,
        hi,
        dst: vdst(&ops[0])?,
        src,
        neg,
        abs,
        sel: Sel::of(sel)?,
        sext: ops[1].sext,
    })))
}

/// [`Typed::Fp8Cvt`].
fn fp8_cvt(w: &mut Wave, x: &Fp8Cvt, ocp: bool) -> R<()> {
    use crate::fp8::{decode, encode, Fp8};
    let exec = w.exec();
    let fmt = Fp8::of(x.bf8, ocp);
    let mut a = get32(w, x.src[0])?;
    if x.encode {
        let mut b = get32(w, x.src[1])?;
        fmods(&mut a, 0, x.neg, x.abs, 0);
        fmods(&mut b, 1, x.neg, x.abs, 0);
        let old = *vrow(w, x.dst.file, x.dst.index)?;
        let mut r = [0u32; LANES];
        for l in (0..LANES).filter(|&l| exec >> l & 1 != 0) {
            let mut pair = 0u32;
            for (k, v) in [a[l], b[l]].into_iter().enumerate() {
                let v = f(v);
                let Some(c) = encode(fmt, v) else {
                    return Err(Stop::Unsupported(format!(
                        "{v} to {fmt:?}: the hardware's result for NaN, infinity or a value beyond the format's range is not modelled"
                    )));
                };
                pair |= (c as u32) << (8 * k);
            }
            r[l] = if x.hi {
                old[l] & 0xffff | pair << 16
            } else {
                old[l] & 0xffff_0000 | pair
            };
        }
        put(vrow_mut(w, x.dst)?, &r, exec);
        return Ok(());
    }
    let Sel { shift, bits } = x.sel;
    if bits < 32 {
        for e in a.iter_mut() {
            let v = (*e >> shift) & ((1u32 << bits) - 1);
            *e = if x.sext { sext_bits(v, bits) } else { v };
        }
    }
    let val = |b: u32| cf32(decode(fmt, b as u8) as f32);
    if x.pk {
        let r: Lanes64 = std::array::from_fn(|l| val(a[l]) as u64 | (val(a[l] >> 8) as u64) << 32);
        return write64(w, x.dst, &r, exec);
    }
    let r: Lanes = std::array::from_fn(|l| val(a[l]));
    put(vrow_mut(w, x.dst)?, &r, exec);
    Ok(())
}

/// `v`'s low `bits` bits sign-extended.
#[inline]
fn sext_bits(v: u32, bits: u8) -> u32 {
    let s = 32 - bits as u32;
    (((v << s) as i32) >> s) as u32
}

/// [`Typed::Sdwa`].
fn sdwa(w: &mut Wave, x: &Sdwa) -> R<()> {
    let exec = w.exec();
    let mut v = [get32(w, x.src[0])?, get32(w, x.src[1])?, [0; LANES]];
    for (k, v) in v.iter_mut().take(2).enumerate() {
        let Sel { shift, bits } = x.sel[k];
        if bits < 32 {
            for e in v.iter_mut() {
                let f = (*e >> shift) & ((1u32 << bits) - 1);
                *e = if x.sext[k] { sext_bits(f, bits) } else { f };
            }
        }
        fmods(v, k, x.neg, x.abs, 0);
    }
    let mut r = [0u32; LANES];
    v32(x.op, &v[0], &v[1], &v[2], 0, &mut r);
    let Sel { shift, bits } = x.dst_sel;
    if bits < 32 {
        let old = *vrow(w, x.dst.file, x.dst.index)?;
        let mask = ((1u64 << bits) - 1) as u32;
        for (r, &old) in r.iter_mut().zip(&old) {
            let placed = (*r & mask) << shift;
            *r = match x.unused {
                Unused::Pad => placed,
                Unused::Preserve => old & !(mask << shift) | placed,
                Unused::Sext => sext_bits(placed, shift + bits),
            };
        }
    }
    put(vrow_mut(w, x.dst)?, &r, exec);
    Ok(())
}

/// A MUBUF atomic ([`Typed::BufferAtomic`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BufferAtomic {
    op: AtomicOp,
    size: u8,
    /// With `glc`/`sc0`: the old value is written back to `data`.
    ret: bool,
    /// The data (for `cmpswap`, the source then the compare value).
    data: VDst,
    /// The address VGPR(s): the index (`idxen`) and/or the offset
    /// (`offen`), in that order.
    vaddr: Option<u16>,
    idxen: bool,
    offen: bool,
    srsrc: u16,
    soffset: Opnd,
    inst_off: u64,
}

/// A MUBUF access ([`Typed::Buffer`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Buffer {
    store: bool,
    lds: bool,
    dwords: u8,
    /// The VGPR of the offset (`offen`).
    voffset: Option<u16>,
    /// The data registers (none for LDS DMA).
    data: Option<VDst>,
    srsrc: u16,
    soffset: Opnd,
    inst_off: u64,
}

/// An MFMA's input element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum El {
    F16,
    Bf16,
    F32,
    /// Signed 8-bit integers, an i32 C and D.
    I8,
}

impl El {
    /// Elements per 32-bit register.
    fn per(self) -> usize {
        match self {
            El::F32 => 1,
            El::F16 | El::Bf16 => 2,
            El::I8 => 4,
        }
    }
}

/// A dense MFMA, D = A·B + C, of M×M outputs and depth K (the f16, bf16,
/// f32 and gfx942's i8 shapes; the fp8, scaled and sparse ones and gfx950's
/// deeper i8 shapes stay on the reference executor).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mfma {
    m: usize,
    k: usize,
    el: El,
    a: (RegFile, u16),
    b: (RegFile, u16),
    /// C: registers, or a constant's f32 bits.
    c: Result<(RegFile, u16), u32>,
    d: VDst,
}

/// Lower every instruction of `program` (`None`: it runs on the reference
/// executor).
pub(crate) fn lower_all(program: &Program) -> Vec<Option<Typed>> {
    lower_all_for(program, Shape::GFX9)
}

fn sgpr(o: &Operand, n: u16) -> Option<u16> {
    match *o {
        Operand::Reg {
            file: RegFile::S,
            index,
            ..
        } if index + n <= 128 => Some(index),
        _ => None,
    }
}

/// A scalar source of `n` dwords (1 or 2), as `Wave::sread`/`sread64` read it.
fn ssrc(s: &Src, n: u16) -> Option<Opnd> {
    if s.neg || s.abs || s.sext {
        return None;
    }
    Some(match s.op {
        Operand::Reg {
            file: RegFile::S,
            index,
            count,
        } if index + n <= 128 => {
            if n == 2 && count < 2 {
                return None;
            }
            Opnd::S(index)
        }
        Operand::Int(i) if n == 1 => Opnd::Imm(i as u32 as u64),
        Operand::Int(i) => Opnd::Imm(i as u64),
        Operand::Float(f) if n == 1 => Opnd::Imm((f as f32).to_bits() as u64),
        Operand::Float(f) => Opnd::Imm(f.to_bits()),
        _ => return None,
    })
}

/// A vector-ALU source as `Wave::vread` reads it for a 32-bit (`wide`
/// false) or 64-bit integer type.
fn vsrc(s: &Src, wide: bool) -> Option<Opnd> {
    if s.sext {
        return None;
    }
    Some(match s.op {
        Operand::Reg { file, index, .. } => match file {
            RegFile::S if index + 1 + wide as u16 <= 128 => Opnd::S(index),
            RegFile::S => return None,
            RegFile::V => Opnd::V(index),
            RegFile::A => Opnd::A(index),
        },
        Operand::Int(i) if wide => Opnd::Imm(i as u64),
        Operand::Int(i) => Opnd::Imm(i as u32 as u64),
        Operand::Float(f) if wide => Opnd::Imm(f.to_bits()),
        Operand::Float(f) => Opnd::Imm((f as f32).to_bits() as u64),
        _ => return None,
    })
}

fn vdst(s: &Src) -> Option<VDst> {
    match s.op {
        Operand::Reg {
            file: file @ (RegFile::V | RegFile::A),
            index,
            ..
        } if !s.neg && !s.abs => Some(VDst { file, index }),
        _ => None,
    }
}

fn mods(srcs: &[Src], float: bool) -> Option<(u8, u8)> {
    let (mut neg, mut abs) = (0u8, 0u8);
    for (k, s) in srcs.iter().enumerate() {
        if (s.neg || s.abs) && !float {
            return None;
        }
        neg |= (s.neg as u8) << k;
        abs |= (s.abs as u8) << k;
    }
    Some((neg, abs))
}

fn rel(op: &str, float: bool) -> Option<Rel> {
    use Rel::*;
    Some(match op {
        "f" => F,
        "lt" => Lt,
        "eq" => Eq,
        "le" => Le,
        "gt" => Gt,
        "ne" if !float => Ne,
        // Float: ordered and not equal.
        "lg" => Ne,
        "ge" => Ge,
        "t" | "tru" => T,
        "o" if float => O,
        "u" if float => U,
        "nge" if float => Nge,
        "nlg" if float => Nlg,
        "ngt" if float => Ngt,
        "nle" if float => Nle,
        "neq" if float => Neq,
        "nlt" if float => Nlt,
        _ => return None,
    })
}

/// Lower one instruction; `None` when this module does not model its form.
pub(crate) fn lower(ins: &Instruction, program: &Program) -> Option<Typed> {
    use crate::exec::Unit;
    let m = ins.mnemonic.as_str();
    if let Some(t) = rdna::lower_cache(ins) {
        return Some(t);
    }
    // Which lowering: the instruction's unit, resolved at decode from the
    // property table, as the reference executor routes it.
    match ins.route.unit {
        Unit::Salu | Unit::SmemRead | Unit::SmemWrite => return lower_scalar(ins, program),
        Unit::Ds => return lower_ds(ins),
        Unit::Buffer => return lower_buffer(ins),
        Unit::Global | Unit::Scratch => return lower_global(ins),
        Unit::Vcmp | Unit::Valu | Unit::Mfma => {}
        _ => return None,
    }
    if let Some(f) = crate::exec::dot_form(base_name(m).0) {
        return lower_dot(ins, f);
    }
    if ins.props().is_some_and(|p| p.packed()) {
        return lower_pk(ins);
    }
    let (name, enc) = base_name(m);
    if matches!(
        name,
        "v_cvt_f32_fp8"
            | "v_cvt_f32_bf8"
            | "v_cvt_pk_f32_fp8"
            | "v_cvt_pk_f32_bf8"
            | "v_cvt_pk_fp8_f32"
            | "v_cvt_pk_bf8_f32"
    ) {
        return lower_fp8(ins, name, enc);
    }
    if enc == "_sdwa" {
        return lower_sdwa(ins, name);
    }
    if !matches!(enc, "" | "_e32" | "_e64" | "_dpp") {
        return None;
    }
    if matches!(name, "v_permlane16_b32" | "v_permlanex16_b32") && enc != "_dpp" {
        return rdna::lower_permlane(ins, name == "v_permlanex16_b32");
    }
    if name == "v_mov_b16" && enc == "_e32" {
        return rdna::lower_mov16(ins);
    }
    // Modifiers this module does not model: any but none at all, and a
    // DPP form's controls (read from the encoding, as the reference does).
    let dpp_key = |k: &str| {
        matches!(
            k,
            "quad_perm"
                | "row_shl"
                | "row_shr"
                | "row_ror"
                | "wave_shl"
                | "wave_rol"
                | "wave_shr"
                | "wave_ror"
                | "row_mirror"
                | "row_half_mirror"
                | "row_bcast"
                | "row_mask"
                | "bank_mask"
                | "bound_ctrl"
                | "row_newbcast"
                // gfx10+ (RDNA): the controls' lanes are `exec::dpp_source`'s;
                // which controls a target has is checked in `rdna`.
                | "row_share"
                | "row_xmask"
                | "dpp8"
        )
    };
    if enc != "_dpp" {
        if name.starts_with("v_mfma_") || name.starts_with("v_smfmac_") {
            if let Some(t) = lower_mfma_x(ins) {
                return Some(t);
            }
        }
        if let Some(op) = match name {
            "v_cvt_scalef32_pk_fp4_f32" => Some(CvtPk::ScaleFp4F32),
            "v_cvt_scalef32_pk_bf16_fp8" => Some(CvtPk::ScaleBf16Fp8),
            "v_cvt_pk_u8_f32" => Some(CvtPk::U8F32),
            _ => None,
        } {
            return lower_cvt_pk(ins, op);
        }
        if let Some(t) = F64Op::of(name) {
            return lower_f64(ins, t);
        }
        if let Some(out) = match name {
            "v_fma_mix_f32" => Some(0),
            "v_fma_mixlo_f16" => Some(1),
            "v_fma_mixhi_f16" => Some(2),
            _ => None,
        } {
            return lower_fma_mix(ins, out);
        }
        // 16-bit integer add/sub/mul, and integer `clamp` (saturation).
        if ins.mods.iter().all(|(k, _)| k == "clamp") {
            use V32::*;
            let sat = !ins.mods.is_empty();
            let op = match (name, sat) {
                ("v_add_u16" | "v_add_i16", false) => Some(AddU16),
                ("v_sub_u16" | "v_sub_i16", false) => Some(SubU16),
                ("v_subrev_u16", false) => Some(SubRevU16),
                ("v_mul_lo_u16", false) => Some(MulLoU16),
                ("v_add_u16", true) => Some(AddU16Sat),
                ("v_sub_u16", true) => Some(SubU16Sat),
                ("v_subrev_u16", true) => Some(SubRevU16Sat),
                ("v_add_i16", true) => Some(AddI16Sat),
                ("v_sub_i16", true) => Some(SubI16Sat),
                ("v_add_u32", true) => Some(AddUSat),
                ("v_sub_u32", true) => Some(SubUSat),
                ("v_subrev_u32", true) => Some(SubRevUSat),
                ("v_add_i32", true) => Some(AddISat),
                ("v_sub_i32", true) => Some(SubISat),
                _ => None,
            };
            if let Some(op) = op {
                let ops = &ins.ops;
                if ops.len() != 3 || matches!(ops[0].op, Operand::Reg { count, .. } if count != 1) {
                    return None;
                }
                mods(&ops[1..], false)?;
                let mut src = [Opnd::Imm(0); 3];
                for (k, s) in ops[1..].iter().enumerate() {
                    src[k] = match (&s.op, op.half() >> k & 1 != 0) {
                        (Operand::Float(f), true) if !s.sext => {
                            Opnd::Imm(half::f16::from_f64(*f).to_bits() as u64)
                        }
                        _ => vsrc(s, false)?,
                    };
                }
                return Some(Typed::V32 {
                    op,
                    dst: vdst(&ops[0])?,
                    src,
                    neg: 0,
                    abs: 0,
                    acc: false,
                    approx: None,
                    dpp: None,
                });
            }
        }
        if name == "v_bitop3_b32" {
            let mut t = 0;
            for (k, v) in &ins.mods {
                match k.as_str() {
                    "bitop3" => t = crate::exec::parse_int(v).ok()? as u8,
                    _ => return None,
                }
            }
            let ops = &ins.ops;
            if ops.len() != 4 || matches!(ops[0].op, Operand::Reg { count, .. } if count != 1) {
                return None;
            }
            mods(&ops[1..], false)?;
            return Some(Typed::V32 {
                op: V32::Bitop3(t),
                dst: vdst(&ops[0])?,
                src: [
                    vsrc(&ops[1], false)?,
                    vsrc(&ops[2], false)?,
                    vsrc(&ops[3], false)?,
                ],
                neg: 0,
                abs: 0,
                acc: false,
                approx: None,
                dpp: None,
            });
        }
    }
    if ins.mods.iter().any(|(k, _)| enc != "_dpp" || !dpp_key(k)) {
        return None;
    }
    let dpp = if enc == "_dpp" && ins.has("dpp8") {
        Some(Box::new(rdna::dpp8(*ins.words.get(1)?)))
    } else if enc == "_dpp" {
        let word = *ins.words.get(1)?;
        let (ctrl, bound_ctrl) = (word >> 8 & 0x1ff, word >> 19 & 1 != 0);
        let (bank_mask, row_mask) = (word >> 24 & 0xf, word >> 28 & 0xf);
        let mut from = [u8::MAX; LANES];
        let mut enabled = 0u64;
        for (lane, f) in from.iter_mut().enumerate() {
            if row_mask >> (lane / 16) & 1 != 0 && bank_mask >> (lane % 16 / 4) & 1 != 0 {
                enabled |= 1 << lane;
            }
            if let Some(s) = crate::exec::dpp_source(ctrl, lane) {
                *f = s as u8;
            }
        }
        Some(Box::new(Dpp {
            from,
            bound_ctrl,
            enabled,
            strict: false,
        }))
    } else {
        None
    };
    if dpp.is_some() && V32::of(name).is_none() {
        return None;
    }
    let ops = &ins.ops;
    match name {
        "v_readlane_b32"
        | "v_readfirstlane_b32"
        | "v_writelane_b32"
        | "v_permlane16_swap_b32"
        | "v_permlane32_swap_b32"
            if dpp.is_none() =>
        {
            return lower_lane(name, ops)
        }
        _ => {}
    }
    if let Some(rest) = name
        .strip_prefix("v_cmpx_")
        .map(|r| (true, r))
        .or_else(|| name.strip_prefix("v_cmp_").map(|r| (false, r)))
    {
        let (x, rest) = rest;
        let (op, ty) = rest.rsplit_once('_')?;
        let ty = match (op, ty) {
            ("class", "f64") => CmpTy::ClassF64,
            ("class", "f32") => CmpTy::ClassF32,
            (_, "u32") => CmpTy::U32,
            (_, "i32") => CmpTy::I32,
            (_, "f32") => CmpTy::F32,
            (_, "u64") => CmpTy::U64,
            (_, "i64") => CmpTy::I64,
            (_, "f64") => CmpTy::F64,
            _ => return None,
        };
        let class = matches!(ty, CmpTy::ClassF64 | CmpTy::ClassF32);
        let float = matches!(ty, CmpTy::F32 | CmpTy::F64) || class;
        // (The class mask takes no relation; `Rel::T` stands in.)
        let rel = if class { Rel::T } else { rel(op, float)? };
        let (sdst, s) = match ops.len() {
            3 => (Some(sgpr(&ops[0].op, 2)?), &ops[1..3]),
            2 => ((!x).then_some(VCC), &ops[0..2]),
            _ => return None,
        };
        let (neg, abs) = mods(s, float)?;
        if class && (neg | abs) & 2 != 0 {
            return None;
        }
        let src = match ty {
            CmpTy::F64 => [fsrc64(&s[0])?, fsrc64(&s[1])?],
            CmpTy::ClassF64 => [fsrc64(&s[0])?, vsrc(&s[1], false)?],
            _ => [vsrc(&s[0], ty.wide())?, vsrc(&s[1], ty.wide())?],
        };
        return Some(Typed::Cmp {
            rel,
            ty,
            src,
            neg,
            abs,
            sdst,
            x,
        });
    }
    let dst = vdst(ops.first()?)?;
    if name.starts_with("v_mfma_") {
        return lower_mfma(name, ops, dst);
    }
    if let Some((op, n, float)) = V32::of(name) {
        let srcs = &ops[1..];
        let acc = matches!(name, "v_fmac_f32" | "v_mac_f32" | "v_fmac_f16") && srcs.len() == 2;
        if srcs.len() != n && !acc {
            return None;
        }
        // A 64-bit destination register pair is not a 32-bit result.
        if matches!(ops[0].op, Operand::Reg { count, .. } if count != 1) {
            return None;
        }
        let (neg, abs) = mods(srcs, float)?;
        if (neg | abs) & op.int() != 0 {
            return None;
        }
        let mut src = [Opnd::Imm(0); 3];
        for (k, s) in srcs.iter().enumerate() {
            src[k] = match (s.op.clone(), op.half() >> k & 1 != 0) {
                (Operand::Float(f), true) if !s.sext => {
                    Opnd::Imm(half::f16::from_f64(f).to_bits() as u64)
                }
                _ => vsrc(s, false)?,
            };
        }
        // DPP reads source 0 from a VGPR of another lane.
        if dpp.is_some() && !matches!(src[0], Opnd::V(_)) {
            return None;
        }
        if acc {
            src[2] = match dst.file {
                RegFile::V => Opnd::V(dst.index),
                _ => Opnd::A(dst.index),
            };
        }
        return Some(Typed::V32 {
            op,
            dst,
            src,
            neg,
            abs,
            acc,
            approx: crate::approx::lookup(name),
            dpp,
        });
    }
    let (op64, wide): (V64, [bool; 3]) = match name {
        "v_lshl_add_u64" => (V64::LshlAdd, [true, false, true]),
        "v_lshlrev_b64" => (V64::LshlRev, [false, true, false]),
        "v_lshrrev_b64" => (V64::LshrRev, [false, true, false]),
        "v_mov_b64" => (V64::Mov, [true, false, false]),
        _ => (V64::Mov, [false; 3]),
    };
    if wide.iter().any(|&w| w) {
        let n = if op64 == V64::LshlAdd {
            3
        } else if op64 == V64::Mov {
            1
        } else {
            2
        };
        if ops.len() != n + 1 {
            return None;
        }
        mods(&ops[1..], false)?;
        let mut src = [Opnd::Imm(0); 3];
        for k in 0..n {
            src[k] = vsrc(&ops[k + 1], wide[k])?;
        }
        return Some(Typed::V64 {
            op: op64,
            dst,
            src,
            wide,
        });
    }
    let carry = match name {
        "v_add_co_u32" => Some((Carry::Add, false)),
        "v_sub_co_u32" => Some((Carry::Sub, false)),
        "v_subrev_co_u32" => Some((Carry::SubRev, false)),
        "v_addc_co_u32" => Some((Carry::AddC, true)),
        "v_subb_co_u32" => Some((Carry::SubB, true)),
        "v_subbrev_co_u32" => Some((Carry::SubBRev, true)),
        "v_mad_u64_u32" => Some((Carry::MadU64, false)),
        _ => None,
    };
    if let Some((op, has_cin)) = carry {
        let nsrc = if op == Carry::MadU64 { 3 } else { 2 };
        if ops.len() != 2 + nsrc + has_cin as usize {
            return None;
        }
        let sdst = sgpr(&ops[1].op, 2)?;
        mods(&ops[2..], false)?;
        let mut src = [Opnd::Imm(0); 3];
        for k in 0..nsrc {
            src[k] = vsrc(&ops[2 + k], op == Carry::MadU64 && k == 2)?;
        }
        let cin = if has_cin {
            Some(sgpr(&ops[2 + nsrc].op, 2)?)
        } else {
            None
        };
        return Some(Typed::Carry {
            op,
            dst,
            sdst,
            src,
            cin,
        });
    }
    if name == "v_div_scale_f32" {
        if ops.len() != 5 || matches!(ops[0].op, Operand::Reg { count, .. } if count != 1) {
            return None;
        }
        let (neg, abs) = mods(&ops[2..], true)?;
        return Some(Typed::DivScale {
            dst,
            sdst: sgpr(&ops[1].op, 2)?,
            src: [
                vsrc(&ops[2], false)?,
                vsrc(&ops[3], false)?,
                vsrc(&ops[4], false)?,
            ],
            neg,
            abs,
        });
    }
    if name == "v_cndmask_b32" {
        if ops.len() != 4 {
            return None;
        }
        let (neg, abs) = mods(&ops[1..3], true)?;
        return Some(Typed::Cndmask {
            dst,
            src: [vsrc(&ops[1], false)?, vsrc(&ops[2], false)?],
            neg,
            abs,
            mask: sgpr(&ops[3].op, 2)?,
        });
    }
    None
}

/// An f64 operation ([`Typed::F64`]): `t` from [`F64Op::of`].
fn lower_f64(ins: &Instruction, t: (F64Op, usize, u8, u8, bool)) -> Option<Typed> {
    let (op, n, wide, float, wide_dst) = t;
    let (name, _) = base_name(&ins.mnemonic);
    let (mut clamp, mut omod) = (false, 1.0);
    for (k, v) in &ins.mods {
        match (k.as_str(), v.as_str()) {
            ("clamp", _) => clamp = true,
            ("mul", "2") => omod = 2.0,
            ("mul", "4") => omod = 4.0,
            ("div", "2") => omod = 0.5,
            _ => return None,
        }
    }
    // Output modifiers of a narrow result: the reference's f32 and
    // integer rules (not lowered).
    if (clamp || omod != 1.0) && !wide_dst {
        return None;
    }
    let ops = &ins.ops;
    let dst = vdst(ops.first()?)?;
    let want = if wide_dst { 2 } else { 1 };
    if !matches!(ops[0].op, Operand::Reg { count, .. } if count == want) {
        return None;
    }
    let sdst = if op == F64Op::DivScale {
        Some(sgpr(&ops.get(1)?.op, 2)?)
    } else {
        None
    };
    let srcs = &ops[1 + sdst.is_some() as usize..];
    let acc = name == "v_fmac_f64" && srcs.len() == 2;
    if srcs.len() != n && !acc {
        return None;
    }
    let (mut neg, mut abs) = (0, 0);
    let mut src = [Opnd::Imm(0); 3];
    for (k, s) in srcs.iter().enumerate() {
        let bit = 1u8 << k;
        if (s.neg || s.abs) && float & bit == 0 {
            return None;
        }
        neg |= (s.neg as u8) << k;
        abs |= (s.abs as u8) << k;
        src[k] = if wide & bit != 0 {
            fsrc64(s)?
        } else {
            vsrc(s, false)?
        };
    }
    if acc {
        src[2] = match dst.file {
            RegFile::V => Opnd::V(dst.index),
            _ => Opnd::A(dst.index),
        };
    }
    Some(Typed::F64(Box::new(F64 {
        op,
        dst,
        sdst,
        src,
        wide,
        neg,
        abs,
        clamp,
        omod,
        approx: crate::approx::lookup(name),
    })))
}

/// [`V32::Dot`]: the VOP3P form (`vdst, src0, src1, src2`) and the VOP2
/// `c` form (the destination is the accumulator), as the reference's
/// `exec::dot` reads them; any modifier but `clamp` (and default
/// `op_sel`/`op_sel_hi`/`neg_lo`/`neg_hi`), DPP/SDWA and float constants
/// stay on the reference.
fn lower_dot(ins: &Instruction, form: crate::exec::DotForm) -> Option<Typed> {
    let (_, enc) = base_name(&ins.mnemonic);
    if !matches!(enc, "" | "_e32" | "_e64") {
        return None;
    }
    let mut clamp = false;
    for (k, v) in &ins.mods {
        let default = match k.as_str() {
            "clamp" => {
                clamp = true;
                continue;
            }
            "op_sel" | "neg_lo" | "neg_hi" => 0,
            "op_sel_hi" => 1,
            _ => return None,
        };
        let all = v
            .trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .all(|x| x.trim().parse::<u8>().ok() == Some(default));
        if !all {
            return None;
        }
    }
    let ops = &ins.ops;
    if !matches!(ops.len(), 3 | 4) || matches!(ops[0].op, Operand::Reg { count, .. } if count != 1)
    {
        return None;
    }
    mods(&ops[1..], false)?;
    if ops[1..].iter().any(|s| matches!(s.op, Operand::Float(_))) {
        return None;
    }
    let dst = vdst(&ops[0])?;
    let acc = ops.len() == 3;
    let src = [
        vsrc(&ops[1], false)?,
        vsrc(&ops[2], false)?,
        if acc {
            match dst.file {
                RegFile::V => Opnd::V(dst.index),
                _ => Opnd::A(dst.index),
            }
        } else {
            vsrc(&ops[3], false)?
        },
    ];
    Some(Typed::V32 {
        op: V32::Dot(form, clamp),
        dst,
        src,
        neg: 0,
        abs: 0,
        acc,
        approx: None,
        dpp: None,
    })
}

/// [`Typed::FmaMix`].
fn lower_fma_mix(ins: &Instruction, out: u8) -> Option<Typed> {
    // The reference's reading of `op_sel`/`op_sel_hi`: bit k is 1 when the
    // list's k-th entry is 1 (absent: 0).
    let bits = |v: &str| -> Option<u8> {
        let mut b = 0;
        for (k, x) in v
            .trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .enumerate()
        {
            let x: u8 = x.trim().parse().ok()?;
            if k < 3 && x == 1 {
                b |= 1 << k;
            }
        }
        Some(b)
    };
    let (mut sel, mut hi, mut clamp) = (0, 0, false);
    for (k, v) in &ins.mods {
        match k.as_str() {
            "op_sel" => sel = bits(v)?,
            "op_sel_hi" => hi = bits(v)?,
            "clamp" => clamp = true,
            _ => return None,
        }
    }
    let ops = &ins.ops;
    if ops.len() != 4 || matches!(ops[0].op, Operand::Reg { count, .. } if count != 1) {
        return None;
    }
    let (mut neg, mut abs) = (0, 0);
    let mut src = [Opnd::Imm(0); 3];
    for (k, s) in ops[1..].iter().enumerate() {
        neg |= (s.neg as u8) << k;
        abs |= (s.abs as u8) << k;
        src[k] = vsrc(
            &Src {
                neg: false,
                abs: false,
                ..s.clone()
            },
            false,
        )?;
    }
    Some(Typed::FmaMix(Box::new(FmaMix {
        dst: vdst(&ops[0])?,
        src,
        sel,
        hi,
        neg,
        abs,
        clamp,
        out,
    })))
}

/// [`Typed::FmaMix`] over the lanes.
fn fma_mix(w: &mut Wave, x: &FmaMix) -> R<()> {
    let exec = w.exec();
    let mut v = [[0f32; LANES]; 3];
    for (k, v) in v.iter_mut().enumerate() {
        let raw = get32(w, x.src[k])?;
        let bit = 1u8 << k;
        for (v, &r) in v.iter_mut().zip(&raw) {
            let mut f = if x.hi & bit != 0 {
                let h = if x.sel & bit != 0 {
                    r >> 16
                } else {
                    r & 0xffff
                };
                half::f16::from_bits(h as u16).to_f32()
            } else {
                f32::from_bits(r)
            };
            if x.abs & bit != 0 {
                f = f.abs();
            }
            if x.neg & bit != 0 {
                f = -f;
            }
            *v = f;
        }
    }
    let old = *vrow(w, x.dst.file, x.dst.index)?;
    let mut r = [0u32; LANES];
    for l in 0..LANES {
        let mut y = v[0][l].mul_add(v[1][l], v[2][l]);
        if x.clamp {
            y = y.clamp(0.0, 1.0);
        }
        r[l] = match x.out {
            0 => y.to_bits(),
            1 => (old[l] & 0xffff_0000) | half::f16::from_f32(y).to_bits() as u32,
            _ => (old[l] & 0xffff) | (half::f16::from_f32(y).to_bits() as u32) << 16,
        };
    }
    put(vrow_mut(w, x.dst)?, &r, exec);
    Ok(())
}

/// An f64 operation over the lanes ([`Typed::F64`]).
fn f64_op(w: &mut Wave, x: &F64, ins: &Instruction) -> R<()> {
    let exec = w.exec();
    if x.approx.is_some() {
        w.approx.record(ins.addr, exec.count_ones());
    }
    let mut s = [[0u64; LANES]; 3];
    for (k, s) in s.iter_mut().enumerate() {
        let bit = 1u8 << k;
        let sign = if x.wide & bit != 0 {
            *s = get64(w, x.src[k])?;
            1u64 << 63
        } else {
            *s = get32(w, x.src[k])?.map(|v| v as u64);
            1 << 31
        };
        if (x.neg | x.abs) & bit != 0 {
            for v in s.iter_mut() {
                if x.abs & bit != 0 {
                    *v &= !sign;
                }
                if x.neg & bit != 0 {
                    *v ^= sign;
                }
            }
        }
    }
    let vcc = if x.op == F64Op::DivFmas { w.vcc() } else { 0 };
    let mut r = [0u64; LANES];
    let mut bits = 0u64;
    for l in 0..LANES {
        let (v, b) = f64_el(x.op, [s[0][l], s[1][l], s[2][l]], vcc >> l & 1 != 0);
        r[l] = v;
        bits |= (b as u64) << l;
    }
    if let (Some(a), Some(seed)) = (x.approx, w.approx.perturb) {
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                r[l] = a.perturb(seed, s[0][l], r[l]);
            }
        }
    }
    if x.clamp || x.omod != 1.0 {
        for v in r.iter_mut() {
            let mut f = crate::exec::f64b(*v) * x.omod;
            if x.clamp {
                f = f.clamp(0.0, 1.0);
            }
            *v = crate::exec::bf64(f);
        }
    }
    if let Some(d) = x.sdst {
        set_mask(w, d, bits & exec);
    }
    if matches!(x.op, F64Op::ToF32 | F64Op::ToI32 | F64Op::ToU32) {
        put(vrow_mut(w, x.dst)?, &r.map(|v| v as u32), exec);
        return Ok(());
    }
    write64(w, x.dst, &r, exec)
}

/// The cross-lane moves ([`Typed::ReadLane`], [`Typed::WriteLane`],
/// [`Typed::PermSwap`]).
fn lower_lane(name: &str, ops: &[Src]) -> Option<Typed> {
    if ops.iter().any(|s| s.neg || s.abs || s.sext) {
        return None;
    }
    let vreg = |s: &Src| match s.op {
        Operand::Reg {
            file: file @ (RegFile::V | RegFile::A),
            index,
            ..
        } => Some(VDst { file, index }),
        _ => None,
    };
    Some(match (name, ops.len()) {
        ("v_readlane_b32", 3) => Typed::ReadLane {
            dst: sgpr(&ops[0].op, 1)?,
            src: vreg(&ops[1])?,
            lane: Some(ssrc(&ops[2], 1)?),
        },
        ("v_readfirstlane_b32", 2) => Typed::ReadLane {
            dst: sgpr(&ops[0].op, 1)?,
            src: vreg(&ops[1])?,
            lane: None,
        },
        ("v_writelane_b32", 3) => Typed::WriteLane {
            dst: vreg(&ops[0])?,
            src: ssrc(&ops[1], 1)?,
            lane: ssrc(&ops[2], 1)?,
        },
        ("v_permlane16_swap_b32" | "v_permlane32_swap_b32", 2) => Typed::PermSwap {
            a: vreg(&ops[0])?,
            b: vreg(&ops[1])?,
            row32: name == "v_permlane32_swap_b32",
        },
        _ => return None,
    })
}

fn lower_global(ins: &Instruction) -> Option<Typed> {
    let m = ins.mnemonic.as_str();
    if let Some(kind) = m
        .strip_prefix("global_atomic_")
        .or_else(|| m.strip_prefix("flat_atomic_"))
    {
        return lower_atomic(ins, kind);
    }
    if let Some(t) = rdna::lower_global_d16(ins) {
        return Some(t);
    }
    let dma = m
        .strip_prefix("global_load_lds_")
        .or_else(|| m.strip_prefix("global_load_").filter(|_| ins.has("lds")));
    if let Some(kind) = dma {
        let size = match kind {
            "dword" => 4,
            "dwordx3" => 12,
            "dwordx4" => 16,
            _ => return None,
        };
        let mut offset = 0;
        for (k, v) in &ins.mods {
            match k.as_str() {
                "offset" => offset = crate::exec::parse_int(v).ok()?,
                "lds" | "glc" | "slc" | "sc0" | "sc1" | "nt" => {}
                _ => return None,
            }
        }
        let ops = &ins.ops;
        if ops.len() != 2 || ops.iter().any(|s| s.neg || s.abs || s.sext) {
            return None;
        }
        let saddr = match ops[1].op {
            Operand::Off => None,
            ref o => Some(sgpr(o, 2)?),
        };
        return Some(Typed::Global(Box::new(Global {
            store: false,
            size,
            signed: false,
            data: VDst {
                file: RegFile::V,
                index: 0,
            },
            vaddr: vgpr(&ops[0])?,
            saddr,
            signed_voffset: false,
            offset,
            flat: false,
            lds: true,
        })));
    }
    let scratch = m.starts_with("scratch_");
    let flat = m.starts_with("flat_");
    let (store, kind) = match m
        .strip_prefix("global_load_")
        .or_else(|| m.strip_prefix("scratch_load_"))
        .or_else(|| m.strip_prefix("flat_load_"))
    {
        Some(k) => (false, k),
        None => (
            true,
            m.strip_prefix("global_store_")
                .or_else(|| m.strip_prefix("scratch_store_"))
                .or_else(|| m.strip_prefix("flat_store_"))?,
        ),
    };
    let (size, signed) = match (store, kind) {
        (_, "dword") => (4, false),
        (_, "dwordx2") => (8, false),
        (_, "dwordx3") => (12, false),
        (_, "dwordx4") => (16, false),
        (false, "ubyte") | (true, "byte") => (1, false),
        (false, "sbyte") => (1, true),
        (false, "ushort") | (true, "short") => (2, false),
        (false, "sshort") => (2, true),
        _ => return None,
    };
    let mut offset = 0;
    for (k, v) in &ins.mods {
        match k.as_str() {
            "offset" => offset = crate::exec::parse_int(v).ok()?,
            // Cache policy (gfx12's `th:`, `scope:` too): no effect on
            // what the emulator computes.
            "glc" | "slc" | "sc0" | "sc1" | "nt" | "th" | "scope" => {}
            _ => return None,
        }
    }
    let ops = &ins.ops;
    // A flat address is a VGPR pair: no `saddr` operand.
    if ops.len() != 3 - flat as usize {
        return None;
    }
    let (data, vaddr) = if store {
        (&ops[1], &ops[0])
    } else {
        (&ops[0], &ops[1])
    };
    let saddr = match ops.get(2).map(|s| &s.op) {
        None | Some(Operand::Off) => None,
        Some(o) => Some(sgpr(o, 2)?),
    };
    if ops.iter().skip(2).any(|s| s.neg || s.abs || s.sext) {
        return None;
    }
    if scratch {
        if vaddr.neg || vaddr.abs || vaddr.sext {
            return None;
        }
        return Some(Typed::Scratch(Box::new(Scratch {
            store,
            size,
            signed,
            data: vdst(data)?,
            vaddr: match vaddr.op {
                Operand::Off => None,
                _ => Some(vgpr(vaddr)?),
            },
            saddr: match ops[2].op {
                Operand::Off => None,
                _ => Some(ssrc(&ops[2], 1)?),
            },
            offset,
        })));
    }
    Some(Typed::Global(Box::new(Global {
        store,
        size,
        signed,
        data: vdst(data)?,
        vaddr: vgpr(vaddr)?,
        saddr,
        signed_voffset: false,
        offset,
        flat,
        lds: false,
    })))
}

fn lower_atomic(ins: &Instruction, kind: &str) -> Option<Typed> {
    let (kind, x2) = match kind.strip_suffix("_x2") {
        Some(k) => (k, true),
        None => (kind, false),
    };
    let (op, fixed) = AtomicOp::of(kind)?;
    let size = match (fixed, x2) {
        (Some(n), false) => n,
        (None, true) => 8,
        (None, false) => 4,
        (Some(_), true) => return None,
    };
    let mut offset = 0;
    let mut ret = false;
    for (k, v) in &ins.mods {
        match k.as_str() {
            "offset" => offset = crate::exec::parse_int(v).ok()?,
            "glc" | "sc0" => ret = true,
            // gfx12: `th:TH_ATOMIC_RETURN` returns the old value.
            "th" if v.contains("RETURN") => ret = true,
            "slc" | "sc1" | "nt" | "th" | "scope" => {}
            _ => return None,
        }
    }
    let ops = &ins.ops;
    // A flat address is a VGPR pair: no `saddr` operand.
    let flat = ins.mnemonic.starts_with("flat_");
    if ops.len() != 3 - flat as usize + ret as usize || ops.iter().any(|s| s.neg || s.abs || s.sext)
    {
        return None;
    }
    let o = &ops[ret as usize..];
    let saddr = match o.get(2).map(|s| &s.op) {
        None | Some(Operand::Off) => None,
        Some(a) => Some(sgpr(a, 2)?),
    };
    let data = match o[1].op {
        Operand::Reg {
            file: file @ (RegFile::V | RegFile::A),
            index,
            ..
        } => VDst { file, index },
        _ => return None,
    };
    Some(Typed::Atomic(Box::new(Atomic {
        op,
        size,
        ret: if ret { Some(vdst(&ops[0])?) } else { None },
        vaddr: vgpr(&o[0])?,
        saddr,
        signed_voffset: false,
        data,
        offset,
        flat,
    })))
}

/// An LDS atomic ([`Typed::DsAtomic`]), spelled as the reference reads
/// it: `ds_<op>[_rtn]_<type>`.
fn lower_ds_atomic(ins: &Instruction, word: u32) -> Option<Typed> {
    use AtomicOp::*;
    let rest = ins.mnemonic.strip_prefix("ds_")?;
    let (ret, op, ty) = match rest.split_once("_rtn_") {
        Some((op, ty)) => (true, op, ty),
        None => {
            let (op, ty) = rest.rsplit_once('_')?;
            (false, op, ty)
        }
    };
    let size: u8 = if ty.ends_with("64") { 8 } else { 4 };
    let op = match (op, ty) {
        ("add", "f32") => AddF32,
        ("add", "f64") => AddF64,
        ("max", "f32") => MaxF32,
        ("min", "f32") => MinF32,
        ("max", "f64") => MaxF64,
        ("min", "f64") => MinF64,
        ("pk_add", "f16") => PkAddF16,
        ("pk_add", "bf16") => PkAddBf16,
        ("min", "i32" | "i64") => SMin,
        ("max", "i32" | "i64") => SMax,
        ("min", "u32" | "u64") => UMin,
        ("max", "u32" | "u64") => UMax,
        ("wrxchg", _) => Swap,
        ("cmpst", _) => CmpSwap,
        ("add", "u32" | "u64") => Add,
        ("sub", "u32" | "u64") => Sub,
        ("rsub", "u32" | "u64") => RSub,
        ("and", "b32" | "b64") => And,
        ("or", "b32" | "b64") => Or,
        ("xor", "b32" | "b64") => Xor,
        ("inc", "u32" | "u64") => Inc,
        ("dec", "u32" | "u64") => Dec,
        // (The rest: the reference executor.)
        _ => return None,
    };
    if ins.mods.iter().any(|(k, _)| k != "offset") {
        return None;
    }
    let ops = &ins.ops;
    let n = ret as usize + 2 + (op == CmpSwap) as usize;
    if ops.len() != n || ops.iter().any(|s| s.neg || s.abs || s.sext) {
        return None;
    }
    let o = &ops[ret as usize..];
    let words = size as u16 / 4;
    let data = vdst(&o[1])?;
    if op == CmpSwap {
        // The compare value and the new one in consecutive registers.
        let next = vdst(&o[2])?;
        if next.file != data.file || next.index != data.index + words {
            return None;
        }
    }
    Some(Typed::DsAtomic(Box::new(Atomic {
        op,
        size,
        ret: if ret { Some(vdst(&ops[0])?) } else { None },
        vaddr: vgpr(&o[0])?,
        saddr: None,
        signed_voffset: false,
        data,
        offset: (word & 0xffff) as i64,
        flat: false,
    })))
}

/// An atomic's data (and compare) registers, read before any lane writes:
/// `words` rows, twice that for a compare-swap.
fn atomic_data(w: &Wave, x: &Atomic) -> R<[Lanes; 4]> {
    let words = x.size as u16 / 4;
    let n = if x.op == AtomicOp::CmpSwap {
        2 * words
    } else {
        words
    };
    let mut data = [[0u32; LANES]; 4];
    for (k, row) in data.iter_mut().enumerate().take(n as usize) {
        *row = *vrow(w, x.data.file, x.data.index + k as u16)?;
    }
    Ok(data)
}

/// Lane `l`'s `words`-dword value of [`atomic_data`], from row `from`.
fn lane_value(data: &[Lanes; 4], words: u16, l: usize, from: u16) -> u64 {
    (0..words).fold(0, |v, k| {
        v | (data[(from + k) as usize][l] as u64) << (32 * k)
    })
}

/// An LDS atomic, lane by lane in lane order, as the reference makes it.
#[allow(clippy::needless_range_loop)] // `lane` also selects the LDS checks' lane
fn ds_atomic(w: &mut Wave, x: &Atomic, ctx: &mut Ctx) -> R<()> {
    let exec = w.exec();
    let words = x.size as u16 / 4;
    let at = *vrow(w, RegFile::V, x.vaddr)?;
    let data = atomic_data(w, x)?;
    let get = |l: usize, from: u16| lane_value(&data, words, l, from);
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = at[lane].wrapping_add(x.offset as u32);
        // `cmpst`: the compare value first, then the new one.
        let (d, c) = match x.op {
            AtomicOp::CmpSwap => (get(lane, words), get(lane, 0)),
            _ => (get(lane, 0), 0),
        };
        ctx.trace.note(
            lane,
            Space::Lds,
            AccessKind::Atomic,
            a as u64,
            x.size as usize,
        );
        ctx.lds.at_lane(lane);
        let old = ctx.lds.read(a, x.size as usize);
        ctx.lds
            .write(a, x.size as usize, atomic_el(x.op, x.size, old, d, c));
        if let Some(r) = x.ret {
            for k in 0..words {
                vrow_mut(
                    w,
                    VDst {
                        index: r.index + k,
                        ..r
                    },
                )?[lane] = (old >> (32 * k)) as u32;
            }
        }
    }
    Ok(())
}

/// gfx950's transposing LDS load ([`Typed::DsReadTr`]).
fn ds_read_tr(w: &mut Wave, dst: VDst, addr: u16, offset: u32, bits: u8, ctx: &mut Ctx) -> R<()> {
    let exec = w.exec();
    let bits = bits as usize;
    let e = 64 / bits;
    let at = *vrow(w, RegFile::V, addr)?;
    // Both destination registers exist (the reference's check first).
    vrow_mut(w, dst)?;
    vrow_mut(
        w,
        VDst {
            index: dst.index + 1,
            ..dst
        },
    )?;
    let mut raw = [0u64; LANES];
    for (lane, r) in raw.iter_mut().enumerate() {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = at[lane].wrapping_add(offset);
        ctx.trace
            .note(lane, Space::Lds, AccessKind::Read, a as u64, 8);
        ctx.lds.at_lane(lane);
        *r = ctx.lds.read(a, 8);
    }
    let mask = (1u64 << bits) - 1;
    let mut lo = [0u32; LANES];
    let mut hi = [0u32; LANES];
    for lane in 0..LANES {
        let (b, n) = (lane / 16 * 16, lane % 16);
        let mut out = 0u64;
        for j in 0..e {
            let src = raw[b + (16 / e) * j + n / e];
            out |= (src >> (bits * (n % e)) & mask) << (bits * j);
        }
        lo[lane] = out as u32;
        hi[lane] = (out >> 32) as u32;
    }
    put(vrow_mut(w, dst)?, &lo, exec);
    put(
        vrow_mut(
            w,
            VDst {
                index: dst.index + 1,
                ..dst
            },
        )?,
        &hi,
        exec,
    );
    Ok(())
}

/// The 32-bit VGPR offset of a GLOBAL access with `saddr`, made 64 bits:
/// zero-extended on gfx9–gfx12, sign-extended on gfx1250 (`signed`; LLVM's
/// GCNSubtarget.h `hasSignedGVSOffset`, "FLAT GLOBAL VOffset is signed",
/// gfx1250 only), as the reference executor's `global` makes it.
fn voffset(lo: u32, signed: bool) -> u64 {
    if signed {
        lo as i32 as i64 as u64
    } else {
        lo as u64
    }
}

/// A global atomic, lane by lane in lane order.
fn atomic(w: &mut Wave, x: &Atomic, ctx: &mut Ctx) -> R<()> {
    let exec = w.exec();
    let words = x.size as u16 / 4;
    let lo = *vrow(w, RegFile::V, x.vaddr)?;
    let (hi, base) = match x.saddr {
        Some(s) => ([0; LANES], sget64(w, Opnd::S(s))),
        None => (*vrow(w, RegFile::V, x.vaddr + 1)?, 0),
    };
    // The data (and compare) registers, read before any lane writes.
    let data = atomic_data(w, x)?;
    let get = |l: usize, from: u16| lane_value(&data, words, l, from);
    let mut old = [0u64; LANES];
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = match x.saddr {
            Some(_) => base.wrapping_add(voffset(lo[lane], x.signed_voffset)),
            None => lo[lane] as u64 | (hi[lane] as u64) << 32,
        }
        .wrapping_add(x.offset as u64);
        let (d, c) = match x.op {
            AtomicOp::CmpSwap => (get(lane, 0), get(lane, words)),
            _ => (get(lane, 0), 0),
        };
        old[lane] = if x.flat && (a >> 32) as u32 == ctx.shared_base_hi {
            // The LDS aperture (as the reference's `flat_lds`).
            let l = a as u32;
            let size = x.size as usize;
            ctx.trace
                .note(lane, Space::Lds, AccessKind::Atomic, l as u64, size);
            ctx.lds.at_lane(lane);
            let o = ctx.lds.read(l, size);
            ctx.lds.write(l, size, atomic_el(x.op, x.size, o, d, c));
            o
        } else {
            ctx.trace
                .note(lane, Space::Global, AccessKind::Atomic, a, x.size as usize);
            ctx.mem
                .atomic(a, x.size as usize, |o| atomic_el(x.op, x.size, o, d, c))
                .map_err(|e| Stop::Fault(Some(lane as u32), e.to_string()))?
        };
        if let Some(r) = x.ret {
            // A lane's old value is written before the next lane reads
            // (the registers may overlap).
            for k in 0..words {
                vrow_mut(
                    w,
                    VDst {
                        index: r.index + k,
                        ..r
                    },
                )?[lane] = (old[lane] >> (32 * k)) as u32;
            }
        }
    }
    Ok(())
}

/// A scratch access, as the reference executor makes it lane by lane.
fn scratch(w: &mut Wave, x: &Scratch, ctx: &mut Ctx) -> R<()> {
    let exec = w.exec();
    let size = x.size as usize;
    let dwords = size.div_ceil(4);
    let v = match x.vaddr {
        Some(i) => *vrow(w, RegFile::V, i)?,
        None => [0; LANES],
    };
    let s = x.saddr.map_or(0, |o| sget(w, o));
    let mut rows = [[0u32; LANES]; 4];
    for (q, row) in rows.iter_mut().enumerate().take(dwords) {
        let index = x.data.index + q as u16;
        *row = *vrow_mut(w, VDst { index, ..x.data })?;
    }
    let kind = if x.store {
        AccessKind::Write
    } else {
        AccessKind::Read
    };
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = v[lane].wrapping_add(s).wrapping_add(x.offset as u32);
        let mut buf = [0u8; 16];
        ctx.trace.note(lane, Space::Private, kind, a as u64, size);
        if x.store {
            for (q, r) in rows.iter().enumerate().take(dwords) {
                buf[4 * q..4 * q + 4].copy_from_slice(&r[lane].to_le_bytes());
            }
            w.private_write(lane, a, &buf[..size])?;
        } else {
            w.private_read(lane, a, &mut buf[..size])?;
            for (q, r) in rows.iter_mut().enumerate().take(dwords) {
                r[lane] = u32::from_le_bytes(buf[4 * q..4 * q + 4].try_into().unwrap_or_default());
            }
            if x.signed {
                rows[0][lane] = match size {
                    1 => rows[0][lane] as u8 as i8 as u32,
                    _ => rows[0][lane] as u16 as i16 as u32,
                };
            }
        }
    }
    if !x.store {
        for (q, r) in rows.iter().enumerate().take(dwords) {
            let index = x.data.index + q as u16;
            *vrow_mut(w, VDst { index, ..x.data })? = *r;
        }
    }
    Ok(())
}

/// A global LDS DMA ([`Global::lds`]), lane by lane as the reference's.
fn global_lds(w: &mut Wave, g: &Global, ctx: &mut Ctx) -> R<()> {
    let exec = w.exec();
    let size = g.size as usize;
    let lo = *vrow(w, RegFile::V, g.vaddr)?;
    let (hi, base) = match g.saddr {
        Some(s) => ([0; LANES], sget64(w, Opnd::S(s))),
        None => (*vrow(w, RegFile::V, g.vaddr + 1)?, 0),
    };
    let m0 = w.s[crate::decode::M0 as usize];
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = match g.saddr {
            Some(_) => base.wrapping_add(voffset(lo[lane], g.signed_voffset)),
            None => lo[lane] as u64 | (hi[lane] as u64) << 32,
        }
        .wrapping_add(g.offset as u64);
        let mut buf = [0u8; 16];
        ctx.trace
            .note(lane, Space::Global, AccessKind::Read, a, size);
        ctx.mem
            .read(a, &mut buf[..size])
            .map_err(|e| Stop::Fault(Some(lane as u32), e.to_string()))?;
        let l = m0
            .wrapping_add(g.offset as u32)
            .wrapping_add((lane * size) as u32);
        ctx.trace
            .note(lane, Space::Lds, AccessKind::Write, l as u64, size);
        ctx.lds.at_lane(lane);
        ctx.lds.write_bytes(l, &buf[..size]);
    }
    Ok(())
}

/// A global access, as the reference executor makes it lane by lane.
fn global(w: &mut Wave, g: &Global, ctx: &mut Ctx) -> R<()> {
    if g.lds {
        return global_lds(w, g, ctx);
    }
    let exec = w.exec();
    let size = g.size as usize;
    let dwords = size.div_ceil(4);
    let lo = *vrow(w, RegFile::V, g.vaddr)?;
    let (hi, base) = match g.saddr {
        Some(s) => ([0; LANES], sget64(w, Opnd::S(s))),
        None => (*vrow(w, RegFile::V, g.vaddr + 1)?, 0),
    };
    let mut rows = [[0u32; LANES]; 4];
    for (q, row) in rows.iter_mut().enumerate().take(dwords) {
        let index = g.data.index + q as u16;
        *row = *vrow_mut(w, VDst { index, ..g.data })?;
    }
    let mem = ctx.mem.view();
    let kind = if g.store {
        AccessKind::Write
    } else {
        AccessKind::Read
    };
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = match g.saddr {
            Some(_) => base.wrapping_add(voffset(lo[lane], g.signed_voffset)),
            None => lo[lane] as u64 | (hi[lane] as u64) << 32,
        }
        .wrapping_add(g.offset as u64);
        let mut buf = [0u8; 16];
        if g.store {
            for (q, r) in rows.iter().enumerate().take(dwords) {
                buf[4 * q..4 * q + 4].copy_from_slice(&r[lane].to_le_bytes());
            }
        }
        // A flat address in the private or the LDS aperture goes there, as
        // the reference's `global` sends it.
        let hi = (a >> 32) as u32;
        if g.flat && hi == ctx.private_base_hi {
            ctx.trace
                .note(lane, Space::Private, kind, a as u32 as u64, size);
            if g.store {
                w.private_write(lane, a as u32, &buf[..size])?;
            } else {
                w.private_read(lane, a as u32, &mut buf[..size])?;
            }
        } else if g.flat && hi == ctx.shared_base_hi {
            ctx.trace
                .note(lane, Space::Lds, kind, a as u32 as u64, size);
            ctx.lds.at_lane(lane);
            if g.store {
                ctx.lds.write_bytes(a as u32, &buf[..size]);
            } else {
                ctx.lds.read_bytes(a as u32, &mut buf[..size]);
            }
        } else {
            ctx.trace.note(lane, Space::Global, kind, a, size);
            if g.flat {
                ctx.lds.at_lane(lane);
            }
            let r = if g.store {
                mem.write(a, &buf[..size])
            } else {
                mem.read(a, &mut buf[..size])
            };
            r.map_err(|e| Stop::Fault(Some(lane as u32), e.to_string()))?;
        }
        if !g.store {
            for (q, r) in rows.iter_mut().enumerate().take(dwords) {
                r[lane] = u32::from_le_bytes(buf[4 * q..4 * q + 4].try_into().unwrap_or_default());
            }
            if g.signed {
                rows[0][lane] = match size {
                    1 => rows[0][lane] as u8 as i8 as u32,
                    _ => rows[0][lane] as u16 as i16 as u32,
                };
            }
        }
    }
    drop(mem);
    if !g.store {
        for (q, r) in rows.iter().enumerate().take(dwords) {
            let index = g.data.index + q as u16;
            *vrow_mut(w, VDst { index, ..g.data })? = *r;
        }
    }
    Ok(())
}

fn lower_pk(ins: &Instruction) -> Option<Typed> {
    use PkOp::*;
    let (op, wide) = match ins.mnemonic.as_str() {
        "v_pk_fma_f16" => (FmaH, false),
        "v_pk_add_f16" => (AddH, false),
        "v_pk_mul_f16" => (MulH, false),
        "v_pk_max_f16" => (MaxH, false),
        "v_pk_min_f16" => (MinH, false),
        "v_pk_add_u16" => (AddU16, false),
        "v_pk_sub_u16" => (SubU16, false),
        "v_pk_mul_lo_u16" => (MulLoU16, false),
        "v_pk_lshlrev_b16" => (LshlRevB16, false),
        "v_pk_lshrrev_b16" => (LshrRevB16, false),
        "v_pk_fma_f32" => (FmaF, true),
        "v_pk_mul_f32" => (MulF, true),
        "v_pk_add_f32" => (AddF, true),
        "v_pk_mov_b32" => (MovB32, true),
        _ => return None,
    };
    let bits = |key: &str, default: u8| -> Option<u8> {
        let Some(v) = ins.modifier(key) else {
            return Some(if default == 1 { 0b111 } else { 0 });
        };
        let mut out = if default == 1 { 0b111 } else { 0 };
        for (k, b) in v
            .trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .enumerate()
        {
            let b: u8 = b.trim().parse().ok()?;
            if b > 1 || k > 2 {
                return None;
            }
            out = out & !(1 << k) | b << k;
        }
        Some(out)
    };
    let mut clamp = false;
    for (k, _) in &ins.mods {
        match k.as_str() {
            "op_sel" | "op_sel_hi" | "neg_lo" | "neg_hi" => {}
            "clamp" => clamp = true,
            _ => return None,
        }
    }
    let ops = &ins.ops;
    let n = ops.len().checked_sub(1)?;
    if n == 0
        || n > 3
        || matches!(ops[0].op, Operand::Reg { count, .. } if count != 1 + wide as u16)
    {
        return None;
    }
    let dst = vdst(&ops[0])?;
    let mut src = [Opnd::Imm(0); 3];
    for (k, s) in ops[1..].iter().enumerate() {
        if s.neg || s.abs || s.sext {
            return None;
        }
        src[k] = match (&s.op, wide) {
            (Operand::Int(i), true) => Opnd::Imm((*i as u32 as u64) * 0x1_0000_0001),
            (Operand::Float(f), true) => Opnd::Imm(((*f as f32).to_bits() as u64) * 0x1_0000_0001),
            (Operand::Float(f), false) => {
                Opnd::Imm(half::f16::from_f64(*f).to_bits() as u64 * 0x1_0001)
            }
            _ => vsrc(s, wide)?,
        };
    }
    Some(Typed::Pk(Box::new(Pk {
        op,
        dst,
        src,
        n,
        wide,
        op_sel: bits("op_sel", 0)?,
        op_sel_hi: bits("op_sel_hi", 1)?,
        neg_lo: bits("neg_lo", 0)?,
        neg_hi: bits("neg_hi", 0)?,
        clamp,
    })))
}

/// One element of a packed operation, as the reference executor computes it.
#[inline]
fn pk_el(op: PkOp, x: [u64; 3], clamp: bool) -> u64 {
    use PkOp::*;
    let hh = |i: usize| h(x[i] as u32);
    let s = |i: usize| f(x[i] as u32);
    let cl = |v: f32| if clamp { v.clamp(0.0, 1.0) } else { v };
    match op {
        FmaH => ch(cl((hh(0) as f64).mul_add(hh(1) as f64, hh(2) as f64) as f32)) as u64,
        AddH => ch(cl(hh(0) + hh(1))) as u64,
        MulH => ch(cl(hh(0) * hh(1))) as u64,
        MaxH => ch(hh(0).max(hh(1))) as u64,
        MinH => ch(hh(0).min(hh(1))) as u64,
        AddU16 => (x[0] as u16).wrapping_add(x[1] as u16) as u64,
        SubU16 => (x[0] as u16).wrapping_sub(x[1] as u16) as u64,
        MulLoU16 => (x[0] as u16).wrapping_mul(x[1] as u16) as u64,
        LshlRevB16 => (x[1] as u16).wrapping_shl(x[0] as u32 & 15) as u64,
        LshrRevB16 => (x[1] as u16).wrapping_shr(x[0] as u32 & 15) as u64,
        FmaF => cf32(cl(s(0).mul_add(s(1), s(2)))) as u64,
        MulF => cf32(cl(s(0) * s(1))) as u64,
        AddF => cf32(cl(s(0) + s(1))) as u64,
        // (Whole dwords: `pk` moves them.)
        MovB32 => x[0],
    }
}

fn pk(w: &mut Wave, p: &Pk) -> R<()> {
    let exec = w.exec();
    let mut raw = [[0u64; LANES]; 3];
    for (r, &s) in raw.iter_mut().zip(&p.src).take(p.n) {
        *r = if p.wide {
            get64(w, s)?
        } else {
            get32(w, s)?.map(|v| v as u64)
        };
    }
    let (bits, sign) = if p.wide {
        (32, 1u64 << 31)
    } else {
        (16, 1u64 << 15)
    };
    let mask = (1u64 << bits) - 1;
    let mut out = [0u64; LANES];
    if p.op == PkOp::MovB32 {
        let (a, b) = (32 * (p.op_sel & 1) as u32, 32 * (p.op_sel >> 1 & 1) as u32);
        for l in 0..LANES {
            out[l] = (raw[0][l] >> a) & mask | ((raw[1][l] >> b) & mask) << 32;
        }
        return write64(w, p.dst, &out, exec);
    }
    for l in 0..LANES {
        let (mut lo, mut hi) = ([0u64; 3], [0u64; 3]);
        for k in 0..p.n {
            let v = raw[k][l];
            lo[k] = (v >> (bits * (p.op_sel >> k & 1) as u32)) & mask;
            hi[k] = (v >> (bits * (p.op_sel_hi >> k & 1) as u32)) & mask;
            if p.neg_lo >> k & 1 != 0 {
                lo[k] ^= sign;
            }
            if p.neg_hi >> k & 1 != 0 {
                hi[k] ^= sign;
            }
        }
        let (a, b) = (pk_el(p.op, lo, p.clamp), pk_el(p.op, hi, p.clamp));
        out[l] = if p.wide {
            a | b << 32
        } else {
            (a & 0xffff) | (b & 0xffff) << 16
        };
    }
    if p.wide {
        write64(w, p.dst, &out, exec)
    } else {
        put(vrow_mut(w, p.dst)?, &out.map(|v| v as u32), exec);
        Ok(())
    }
}

fn vgpr(s: &Src) -> Option<u16> {
    match s.op {
        Operand::Reg {
            file: RegFile::V,
            index,
            ..
        } if !s.neg && !s.abs && !s.sext => Some(index),
        _ => None,
    }
}

fn lower_ds(ins: &Instruction) -> Option<Typed> {
    let word = *ins.words.first()?;
    if word >> 16 & 1 != 0 {
        return None;
    }
    if let Some(t) = rdna::lower_ds_d16(ins, word) {
        return Some(t);
    }
    let ops = &ins.ops;
    if let Some(bits) = ins.mnemonic.strip_prefix("ds_read_b64_tr_b") {
        let bits = match bits {
            "4" => 4,
            "8" => 8,
            "16" => 16,
            _ => return None,
        };
        if ins.mods.iter().any(|(k, _)| k != "offset")
            || ops.len() != 2
            || !matches!(ops[0].op, Operand::Reg { count: 2, .. })
        {
            return None;
        }
        return Some(Typed::DsReadTr {
            dst: vdst(&ops[0])?,
            addr: vgpr(&ops[1])?,
            offset: word & 0xffff,
            bits,
        });
    }
    if let Some(t) = lower_ds_atomic(ins, word) {
        return Some(t);
    }
    if let Some((addr, back)) = match ins.mnemonic.as_str() {
        "ds_bpermute_b32" => Some((true, true)),
        "ds_permute_b32" => Some((true, false)),
        "ds_swizzle_b32" => Some((false, false)),
        _ => None,
    } {
        if ins
            .mods
            .iter()
            .any(|(k, _)| k != "offset" && k != "swizzle")
            || ops.len() != 2 + addr as usize
            || ops.iter().any(|s| s.neg || s.abs || s.sext)
        {
            return None;
        }
        return Some(Typed::DsPermute {
            dst: vdst(&ops[0])?,
            addr: if addr { Some(vgpr(&ops[1])?) } else { None },
            data: vdst(&ops[1 + addr as usize])?,
            offset: word & 0xffff,
            back,
        });
    }
    if let Some((write, kind)) = ins
        .mnemonic
        .strip_prefix("ds_read2")
        .map(|k| (false, k))
        .or_else(|| ins.mnemonic.strip_prefix("ds_write2").map(|k| (true, k)))
    {
        let (st64, kind) = match kind.strip_prefix("st64") {
            Some(k) => (true, k),
            None => (false, kind),
        };
        let size: u8 = match kind {
            "_b32" => 4,
            "_b64" => 8,
            _ => return None,
        };
        if ins
            .mods
            .iter()
            .any(|(k, _)| k != "offset0" && k != "offset1")
        {
            return None;
        }
        let scale = size as u32 * if st64 { 64 } else { 1 };
        let off = [(word & 0xff) * scale, (word >> 8 & 0xff) * scale];
        let words = size as u16 / 4;
        return Some(if write {
            if ops.len() != 3 {
                return None;
            }
            Typed::Ds2 {
                write,
                data: [vdst(&ops[1])?, vdst(&ops[2])?],
                addr: vgpr(&ops[0])?,
                off,
                size,
            }
        } else {
            if ops.len() != 2 {
                return None;
            }
            let d = vdst(&ops[0])?;
            Typed::Ds2 {
                write,
                data: [
                    d,
                    VDst {
                        index: d.index + words,
                        ..d
                    },
                ],
                addr: vgpr(&ops[1])?,
                off,
                size,
            }
        });
    }
    if ins.mods.iter().any(|(k, _)| k != "offset") {
        return None;
    }
    let (write, kind) = match ins.mnemonic.strip_prefix("ds_read_") {
        Some(k) => (false, k),
        None => (true, ins.mnemonic.strip_prefix("ds_write_")?),
    };
    if ops.len() != 2 {
        return None;
    }
    let offset = word & 0xffff;
    let narrow = match (write, kind) {
        (false, "u8") => Some((1, false)),
        (false, "i8") => Some((1, true)),
        (false, "u16") => Some((2, false)),
        (false, "i16") => Some((2, true)),
        (true, "b8") => Some((1, false)),
        (true, "b16") => Some((2, false)),
        _ => None,
    };
    if let Some((size, signed)) = narrow {
        let (data, addr) = if write {
            (&ops[1], &ops[0])
        } else {
            (&ops[0], &ops[1])
        };
        return Some(Typed::DsNarrow {
            write,
            data: vdst(data)?,
            addr: vgpr(addr)?,
            offset,
            size,
            signed,
        });
    }
    let dwords = match kind {
        "b32" => 1,
        "b64" => 2,
        "b96" => 3,
        "b128" => 4,
        _ => return None,
    };
    Some(if write {
        Typed::DsWrite {
            addr: vgpr(&ops[0])?,
            data: vdst(&ops[1])?,
            offset,
            dwords,
        }
    } else {
        Typed::DsRead {
            dst: vdst(&ops[0])?,
            addr: vgpr(&ops[1])?,
            offset,
            dwords,
        }
    })
}

fn lower_buffer(ins: &Instruction) -> Option<Typed> {
    if let Some(kind) = ins.mnemonic.strip_prefix("buffer_atomic_") {
        return lower_buffer_atomic(ins, kind);
    }
    let (store, kind) = match ins.mnemonic.strip_prefix("buffer_load_") {
        Some(k) => (false, k),
        None => (true, ins.mnemonic.strip_prefix("buffer_store_")?),
    };
    let dwords = match kind {
        "dword" => 1,
        "dwordx2" => 2,
        "dwordx3" => 3,
        "dwordx4" => 4,
        _ => return None,
    };
    let mut inst_off = 0u64;
    let (mut offen, mut lds) = (false, false);
    for (k, v) in &ins.mods {
        match k.as_str() {
            "offen" => offen = true,
            "lds" if !store => lds = true,
            "offset" => {
                inst_off = match v.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok()?,
                    None => v.parse().ok()?,
                }
            }
            // Cache policy: no effect on what the emulator computes.
            "glc" | "slc" | "sc0" | "sc1" | "nt" => {}
            _ => return None,
        }
    }
    let ops = &ins.ops;
    let (data, rest) = if lds {
        (None, &ops[..])
    } else {
        (Some(vdst(ops.first()?)?), ops.get(1..)?)
    };
    if rest.len() != 3 {
        return None;
    }
    let voffset = if offen { Some(vgpr(&rest[0])?) } else { None };
    Some(Typed::Buffer(Box::new(Buffer {
        store,
        lds,
        dwords,
        voffset,
        data,
        srsrc: sgpr(&rest[1].op, 4)?,
        soffset: ssrc(&rest[2], 1)?,
        inst_off,
    })))
}

/// [`Typed::CvtPk`]'s conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CvtPk {
    ScaleFp4F32,
    ScaleBf16Fp8,
    U8F32,
}

/// [`Typed::CvtPk`] from `ins`.
fn lower_cvt_pk(ins: &Instruction, op: CvtPk) -> Option<Typed> {
    let mut sel = [0u32; 4];
    for (k, v) in &ins.mods {
        match k.as_str() {
            "op_sel" if op != CvtPk::U8F32 => {
                let bits = v.trim_matches(|c| c == '[' || c == ']').split(',');
                for (o, b) in sel.iter_mut().zip(bits) {
                    *o = b.trim().parse::<u32>().ok()? & 1;
                }
            }
            _ => return None,
        }
    }
    let ops = &ins.ops;
    let n = if op == CvtPk::ScaleBf16Fp8 { 3 } else { 4 };
    if ops.len() != n || ops.iter().any(|o| o.neg || o.abs || o.sext) {
        return None;
    }
    if matches!(ops[0].op, Operand::Reg { count, .. } if count != 1) {
        return None;
    }
    let mut src = [Opnd::Imm(0); 3];
    for (k, s) in ops[1..].iter().enumerate() {
        src[k] = vsrc(s, false)?;
    }
    let byte = match op {
        CvtPk::ScaleFp4F32 => 8 * (sel[2] + 2 * sel[3]),
        CvtPk::ScaleBf16Fp8 => 16 * sel[0],
        CvtPk::U8F32 => 0,
    };
    Some(Typed::CvtPk {
        op,
        dst: vdst(&ops[0])?,
        src,
        byte,
    })
}

/// [`Typed::CvtPk`], every lane computed before any is written.
fn cvt_pk(w: &mut Wave, op: CvtPk, dst: VDst, src: [Opnd; 3], byte: u32, ocp: bool) -> R<()> {
    let exec = w.exec();
    let (a, b, c) = (get32(w, src[0])?, get32(w, src[1])?, get32(w, src[2])?);
    let old = *vrow(w, dst.file, dst.index)?;
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        out[l] = match op {
            CvtPk::ScaleFp4F32 => {
                let scale = crate::mx::scalef32(c[l]);
                let mut codes = [0u32; 2];
                for (code, x) in codes.iter_mut().zip([a[l], b[l]]) {
                    *code = match crate::mx::encode(crate::mx::Mini::E2M1, f(x) as f64 / scale) {
                        Some(c) => c as u32,
                        None => {
                            return Err(Stop::Unsupported(
                                "a NaN converted to fp4 (not modelled)".into(),
                            ))
                        }
                    };
                }
                old[l] & !(0xff << byte) | (codes[0] | codes[1] << 4) << byte
            }
            CvtPk::ScaleBf16Fp8 => {
                let fmt = crate::fp8::Fp8::of(false, ocp);
                let scale = crate::mx::scalef32(b[l]);
                let word = a[l] >> byte;
                let mut v = 0u32;
                for h in 0..2 {
                    let x = crate::fp8::decode(fmt, (word >> (8 * h)) as u8) * scale;
                    v |= (half::bf16::from_f64(x).to_bits() as u32) << (16 * h);
                }
                v
            }
            CvtPk::U8F32 => {
                let x = f(a[l]);
                let at = 8 * (b[l] & 3);
                let u = if x.is_nan() {
                    0
                } else {
                    x.round_ties_even().clamp(0.0, 255.0) as u32
                };
                c[l] & !(0xff << at) | u << at
            }
        };
    }
    put(vrow_mut(w, dst)?, &out, exec);
    Ok(())
}

/// The element format of an [`MfmaX`] operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fmt {
    I8,
    /// fp8 (E4M3) and bf8 (E5M2): OCP or FNUZ by the target
    /// (`Ctx::ocp_fp8`).
    Fp8,
    Bf8,
    Mini(crate::mx::Mini),
}

impl Fmt {
    fn bits(self) -> usize {
        match self {
            Fmt::Mini(m) => m.bits() as usize,
            _ => 8,
        }
    }
    #[inline]
    fn value(self, code: u8, ocp: bool) -> f64 {
        match self {
            Fmt::I8 => code as i8 as f64,
            Fmt::Fp8 => crate::fp8::decode(crate::fp8::Fp8::of(false, ocp), code),
            Fmt::Bf8 => crate::fp8::decode(crate::fp8::Fp8::of(true, ocp), code),
            Fmt::Mini(m) => crate::mx::decode(m, code),
        }
    }
}

/// An MFMA of 8-bit and narrower elements, as the reference's `mfma` and
/// `smfmac` compute it: the fp8/bf8 shapes (`v_mfma_f32_{16x16x32,32x32x16}_
/// {fp8,bf8}_{fp8,bf8}`), gfx950's deeper i8 shapes, the `*_f8f6f4` ones
/// (formats from `cbsz`/`blgp`) with and without E8M0 scales
/// (`v_mfma_scale_*`), and the sparse `v_smfmac_f32_16x16x128_*` (A's 16
/// elements a lane placed by the index operand).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MfmaX {
    m: usize,
    k: usize,
    fa: Fmt,
    fb: Fmt,
    /// `*_f8f6f4`: 8-bit operands in two K halves (the reference's `kof`).
    f8f6f4: bool,
    a: (RegFile, u16),
    b: (RegFile, u16),
    /// C: registers, or a constant's bits.
    c: Result<(RegFile, u16), u32>,
    d: VDst,
    /// `v_mfma_scale_*`: A's and B's scale operands and the byte of each.
    scale: Option<([Opnd; 2], [u8; 2])>,
    /// `v_smfmac_*`: the index operand (C is D).
    sparse: Option<Opnd>,
}

/// [`Typed::MfmaX`] from `ins` (modifiers and all), or `None` when it is
/// none of its shapes or has a modifier the reference refuses.
fn lower_mfma_x(ins: &Instruction) -> Option<Typed> {
    use crate::mx::Mini;
    let name = ins.mnemonic.as_str();
    let ops = &ins.ops;
    let fp8 = |t: &str| match t {
        "fp8" => Some(Fmt::Fp8),
        "bf8" => Some(Fmt::Bf8),
        _ => None,
    };
    let mut mods: [Option<&str>; 5] = [None; 5];
    for (k, v) in &ins.mods {
        let i = ["cbsz", "abid", "blgp", "op_sel", "op_sel_hi"]
            .iter()
            .position(|x| x == k)?;
        mods[i] = Some(v.as_str());
    }
    let [cbsz, abid, blgp, op_sel, op_sel_hi] = mods;
    let zero = |v: Option<&str>| v.is_none_or(|v| v == "0");
    if !zero(abid) {
        return None;
    }
    let f8f6f4_fmt = |v: Option<&str>| {
        Some(match v.unwrap_or("0") {
            "0" => Fmt::Fp8,
            "1" => Fmt::Bf8,
            "2" => Fmt::Mini(Mini::E2M3),
            "3" => Fmt::Mini(Mini::E3M2),
            "4" => Fmt::Mini(Mini::E2M1),
            _ => return None,
        })
    };
    let (m, k, fa, fb, f8f6f4, scaled, sparse) = match name {
        "v_mfma_i32_16x16x64_i8" => (16, 64, Fmt::I8, Fmt::I8, false, false, false),
        "v_mfma_i32_32x32x32_i8" => (32, 32, Fmt::I8, Fmt::I8, false, false, false),
        "v_mfma_f32_32x32x64_f8f6f4"
        | "v_mfma_f32_16x16x128_f8f6f4"
        | "v_mfma_scale_f32_32x32x64_f8f6f4"
        | "v_mfma_scale_f32_16x16x128_f8f6f4" => {
            let (m, k) = if name.contains("32x32") {
                (32, 64)
            } else {
                (16, 128)
            };
            let scaled = name.starts_with("v_mfma_scale_");
            (
                m,
                k,
                f8f6f4_fmt(cbsz)?,
                f8f6f4_fmt(blgp)?,
                true,
                scaled,
                false,
            )
        }
        _ => {
            if let Some(t) = name.strip_prefix("v_smfmac_f32_16x16x128_") {
                let (a, b) = t.split_once('_')?;
                (16, 128, fp8(a)?, fp8(b)?, false, false, true)
            } else {
                let rest = name.strip_prefix("v_mfma_f32_")?;
                let (shape, types) = rest.split_at_checked(9)?;
                let (m, k) = match shape {
                    "16x16x32_" => (16, 32),
                    "32x32x16_" => (32, 16),
                    _ => return None,
                };
                let (a, b) = types.split_once('_')?;
                (m, k, fp8(a)?, fp8(b)?, false, false, false)
            }
        }
    };
    if !(f8f6f4 || zero(cbsz) && zero(blgp)) {
        return None;
    }
    // op_sel/op_sel_hi only select a scaled MFMA's scale bytes.
    if !scaled && (op_sel.is_some() || op_sel_hi.is_some()) {
        return None;
    }
    if ops.len() != if scaled { 6 } else { 4 } || ops.iter().any(|o| o.neg || o.abs || o.sext) {
        return None;
    }
    let reg = |s: &Src| match s.op {
        Operand::Reg {
            file: f @ (RegFile::V | RegFile::A),
            index,
            ..
        } => Some((f, index)),
        _ => None,
    };
    let d = vdst(&ops[0])?;
    let c = if sparse {
        Ok((d.file, d.index))
    } else {
        match ops[3].op {
            Operand::Int(i) => Err(i as u32),
            // (An i32 C is an integer; the reference refuses a float constant.)
            Operand::Float(_) if fa == Fmt::I8 => return None,
            Operand::Float(f) => Err((f as f32).to_bits()),
            _ => Ok(reg(&ops[3])?),
        }
    };
    let scale = if scaled {
        let bits = |v: Option<&str>| -> Option<Vec<u8>> {
            match v {
                None => Some(Vec::new()),
                Some(v) => v
                    .trim_matches(|c| c == '[' || c == ']')
                    .split(',')
                    .map(|b| b.trim().parse::<u8>().ok())
                    .collect(),
            }
        };
        let (sel, hi) = (bits(op_sel)?, bits(op_sel_hi)?);
        let byte = |i: usize| {
            (sel.get(i).copied().unwrap_or(0) & 1) + 2 * (hi.get(i).copied().unwrap_or(0) & 1)
        };
        Some((
            [vsrc(&ops[4], false)?, vsrc(&ops[5], false)?],
            [byte(0), byte(1)],
        ))
    } else {
        None
    };
    Some(Typed::MfmaX(Box::new(MfmaX {
        m,
        k,
        fa,
        fb,
        f8f6f4,
        a: reg(&ops[1])?,
        b: reg(&ops[2])?,
        c,
        d,
        scale,
        sparse: if sparse {
            Some(vsrc(&ops[3], false)?)
        } else {
            None
        },
    })))
}

/// One lane's operand registers (up to 8).
fn lane_words(
    w: &Wave,
    (file, index): (RegFile, u16),
    regs: usize,
    out: &mut [[u32; 8]; LANES],
) -> R<()> {
    for q in 0..regs {
        let row = vrow(w, file, index + q as u16)?;
        for (o, &v) in out.iter_mut().zip(row) {
            o[q] = v;
        }
    }
    Ok(())
}

/// Code `e` of `bits` bits, packed densely in a lane's words.
#[inline]
fn code(words: &[u32; 8], e: usize, bits: usize) -> u8 {
    let bit = e * bits;
    let (r, off) = (bit / 32, bit % 32);
    let mut v = (words[r] >> off) as u64;
    if off + bits > 32 {
        v |= (words.get(r + 1).copied().unwrap_or(0) as u64) << (32 - off);
    }
    (v & ((1 << bits) - 1)) as u8
}

/// [`Typed::MfmaX`]: A and B gathered depth-major with their scales, then
/// the sums of [`mfma_in`].
fn mfma_x(w: &mut Wave, x: &MfmaX, ocp: bool) -> R<()> {
    let (m, k) = (x.m, x.k);
    let kl = k * m / LANES;
    let mut wa = [[0u32; 8]; LANES];
    let mut wb = [[0u32; 8]; LANES];
    // The sparse A holds 16 elements a lane.
    let ka_lane = if x.sparse.is_some() { 16 } else { kl };
    lane_words(w, x.a, (ka_lane * x.fa.bits()).div_ceil(32), &mut wa)?;
    lane_words(w, x.b, (kl * x.fb.bits()).div_ceil(32), &mut wb)?;
    let (mut sa, mut sb) = ([1.0; LANES], [1.0; LANES]);
    if let Some(([oa, ob], [ba, bb])) = x.scale {
        let (ra, rb) = (get32(w, oa)?, get32(w, ob)?);
        for l in 0..LANES {
            sa[l] = crate::mx::e8m0((ra[l] >> (8 * ba)) as u8);
            sb[l] = crate::mx::e8m0((rb[l] >> (8 * bb)) as u8);
        }
    }
    let idx = match x.sparse {
        Some(o) => Some(get32(w, o)?),
        None => None,
    };
    // Which K element `e` of a lane holds (the reference's `kof`).
    let kof = |f: Fmt, lane: usize, e: usize| -> usize {
        if x.f8f6f4 && matches!(f, Fmt::Fp8 | Fmt::Bf8) {
            (k / 2) * (e / 16) + 16 * (lane / m) + e % 16
        } else {
            kl * (lane / m) + e
        }
    };
    MFMA_SCRATCH.with(|s| {
        let s = &mut **s.borrow_mut();
        let (at, bt) = (&mut s.xa[..m * k], &mut s.xb[..m * k]);
        at.fill(0.0);
        for lane in 0..LANES {
            let r = lane % m;
            if let Some(idx) = &idx {
                let base = kl * (lane / m);
                for t in 0..16 {
                    let kk = base + 4 * (t / 2) + (idx[lane] >> (2 * t) & 3) as usize;
                    at[kk * m + r] += x.fa.value(code(&wa[lane], t, 8), ocp);
                }
                for e in 0..kl {
                    bt[(base + e) * m + r] = x.fb.value(code(&wb[lane], e, 8), ocp);
                }
                continue;
            }
            for e in 0..kl {
                let (ka, kb) = (kof(x.fa, lane, e), kof(x.fb, lane, e));
                at[ka * m + r] =
                    x.fa.value(code(&wa[lane], e, x.fa.bits()), ocp) * sa[r + m * (ka / 32)];
                bt[kb * m + r] =
                    x.fb.value(code(&wb[lane], e, x.fb.bits()), ocp) * sb[r + m * (kb / 32)];
            }
        }
        mfma_in(w, m, k, x.fa == Fmt::I8, x.c, x.d, at, bt, &mut s.cd)
    })
}

fn lower_mfma(name: &str, ops: &[Src], d: VDst) -> Option<Typed> {
    let (m, k, el) = match name {
        "v_mfma_f32_16x16x16_f16" | "v_mfma_f32_16x16x16f16" => (16, 16, El::F16),
        "v_mfma_f32_32x32x8_f16" | "v_mfma_f32_32x32x8f16" => (32, 8, El::F16),
        "v_mfma_f32_16x16x16_bf16" | "v_mfma_f32_16x16x16bf16_1k" => (16, 16, El::Bf16),
        "v_mfma_f32_32x32x8_bf16" | "v_mfma_f32_32x32x8bf16_1k" => (32, 8, El::Bf16),
        "v_mfma_f32_16x16x4_f32" | "v_mfma_f32_16x16x4f32" => (16, 4, El::F32),
        "v_mfma_f32_32x32x2_f32" | "v_mfma_f32_32x32x2f32" => (32, 2, El::F32),
        "v_mfma_f32_16x16x32_f16" => (16, 32, El::F16),
        "v_mfma_f32_32x32x16_f16" => (32, 16, El::F16),
        "v_mfma_f32_16x16x32_bf16" => (16, 32, El::Bf16),
        "v_mfma_f32_32x32x16_bf16" => (32, 16, El::Bf16),
        // (gfx950's deeper i8 shapes, 16x16x64 and 32x32x32, need more
        // than a fragment's 512 elements: the reference executor.)
        "v_mfma_i32_16x16x32_i8" => (16, 32, El::I8),
        "v_mfma_i32_32x32x16_i8" => (32, 16, El::I8),
        _ => return None,
    };
    if ops.len() != 4 || ops.iter().any(|o| o.neg || o.abs || o.sext) {
        return None;
    }
    let reg = |s: &Src| match s.op {
        Operand::Reg {
            file: f @ (RegFile::V | RegFile::A),
            index,
            ..
        } => Some((f, index)),
        _ => None,
    };
    let c = match ops[3].op {
        Operand::Int(i) => Err(i as u32),
        // (An i32 C is an integer; the reference refuses a float constant.)
        Operand::Float(_) if el == El::I8 => return None,
        Operand::Float(f) => Err((f as f32).to_bits()),
        _ => Ok(reg(&ops[3])?),
    };
    Some(Typed::Mfma(Box::new(Mfma {
        m,
        k,
        el,
        a: reg(&ops[1])?,
        b: reg(&ops[2])?,
        c,
        d,
    })))
}

/// Gather an MFMA's A or B operand, depth-major (`out[kk·M + x]`: row x
/// of A, or column x of B, at depth kk): lane l holds K·M/64 consecutive
/// elements of row (column) l mod M from depth (l / M)·K·M/64, so each
/// element slot of the 64 lanes is 64/M contiguous runs of M.
fn gather<const M: usize>(
    w: &Wave,
    x: &Mfma,
    (file, index): (RegFile, u16),
    out: &mut [f64],
) -> R<()> {
    let kl = x.k * M / LANES;
    let per = x.el.per();
    let mut slot = [0f64; LANES];
    for e in 0..kl {
        let row = vrow(w, file, index + (e / per) as u16)?;
        let h = (e % per) as u32 * (32 / per as u32);
        match x.el {
            El::I8 => {
                for (v, &word) in slot.iter_mut().zip(row) {
                    *v = (word >> h) as u8 as i8 as f64;
                }
            }
            El::F32 => {
                for (v, &word) in slot.iter_mut().zip(row) {
                    *v = f(word) as f64;
                }
            }
            El::Bf16 => {
                for (v, &word) in slot.iter_mut().zip(row) {
                    *v = f((word >> h) << 16) as f64;
                }
            }
            El::F16 => {
                // One slice conversion (F16C where the CPU has it).
                use half::slice::HalfFloatSliceExt;
                let halves: [half::f16; LANES] =
                    std::array::from_fn(|l| half::f16::from_bits((row[l] >> h) as u16));
                halves.convert_to_f64_slice(&mut slot);
            }
        }
        for g in 0..LANES / M {
            let kk = g * kl + e;
            out[kk * M..kk * M + M].copy_from_slice(&slot[g * M..g * M + M]);
        }
    }
    Ok(())
}

/// The first output row of register `r` of lanes `g·M ..`: the M lanes of
/// a group hold M consecutive columns of one row.
#[inline]
fn mfma_row(m: usize, g: usize, r: usize) -> usize {
    if m == 16 {
        4 * g + r
    } else {
        8 * (r / 4) + 4 * g + r % 4
    }
}

/// D = A·B + C over M×M, each sum from C in order of depth, in f64 (the
/// products of f16, bf16 and f32 inputs are exact in f64), as the
/// reference executor sums. `at` and `b` are depth-major. With `FMA` each
/// step is one fused multiply-add: the same result, since the product is
/// exact and both round only the sum.
#[inline(always)]
fn matmul<const M: usize, const FMA: bool>(k: usize, at: &[f64], b: &[f64], cd: &mut [f64]) {
    // Two rows at a time share each load of B's row; every sum still runs
    // from C in order of depth.
    for i in (0..M).step_by(2) {
        let mut acc0 = [0f64; M];
        let mut acc1 = [0f64; M];
        acc0.copy_from_slice(&cd[i * M..i * M + M]);
        acc1.copy_from_slice(&cd[(i + 1) * M..(i + 1) * M + M]);
        for kk in 0..k {
            let (x0, x1) = (at[kk * M + i], at[kk * M + i + 1]);
            let row = &b[kk * M..kk * M + M];
            for j in 0..M {
                if FMA {
                    acc0[j] = x0.mul_add(row[j], acc0[j]);
                    acc1[j] = x1.mul_add(row[j], acc1[j]);
                } else {
                    acc0[j] += x0 * row[j];
                    acc1[j] += x1 * row[j];
                }
            }
        }
        cd[i * M..i * M + M].copy_from_slice(&acc0);
        cd[(i + 1) * M..(i + 1) * M + M].copy_from_slice(&acc1);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn matmul_fma<const M: usize>(k: usize, at: &[f64], b: &[f64], cd: &mut [f64]) {
    matmul::<M, true>(k, at, b, cd)
}

/// An MFMA's operands and sums, kept per thread: zeroing 16 KiB of arrays on
/// the stack for every MFMA cost as much as the sums themselves.
///
/// A or B gathered once is kept with the register words it came from
/// (`FRAGMENTS` per operand, by register): a GEMM's K loop multiplies each
/// A fragment with several B fragments and back, and a fragment whose
/// registers hold the same words again is not gathered again.
struct MfmaScratch {
    a: [Fragment; FRAGMENTS],
    b: [Fragment; FRAGMENTS],
    cd: [f64; 1024],
    /// [`MfmaX`]'s A and B (up to 2048 elements each).
    xa: [f64; 2048],
    xb: [f64; 2048],
}

const FRAGMENTS: usize = 16;

/// One gathered MFMA operand.
#[derive(Clone)]
struct Fragment {
    /// The registers and shape it was gathered for (`None`: empty).
    key: Option<(RegFile, u16, El, usize, usize)>,
    /// The register words it was gathered from.
    raw: [Lanes; 4],
    /// The elements, depth-major ([`gather`]).
    vals: [f64; 512],
}

thread_local! {
    static MFMA_SCRATCH: std::cell::RefCell<Box<MfmaScratch>> = {
        let empty = Fragment {
            key: None,
            raw: [[0; LANES]; 4],
            vals: [0.0; 512],
        };
        std::cell::RefCell::new(Box::new(MfmaScratch {
            a: std::array::from_fn(|_| empty.clone()),
            b: std::array::from_fn(|_| empty.clone()),
            cd: [0.0; 1024],
            xa: [0.0; 2048],
            xb: [0.0; 2048],
        }))
    };
}

fn mfma(w: &mut Wave, x: &Mfma) -> R<()> {
    MFMA_SCRATCH.with(|s| {
        let s = &mut **s.borrow_mut();
        let slot = |i: u16| (i as usize / 4) % FRAGMENTS;
        let a = &mut s.a[slot(x.a.1)];
        let b = &mut s.b[slot(x.b.1)];
        fragment(w, x, x.a, a)?;
        fragment(w, x, x.b, b)?;
        let (m, k) = (x.m, x.k);
        let int = x.el == El::I8;
        mfma_in(
            w,
            m,
            k,
            int,
            x.c,
            x.d,
            &a.vals[..m * k],
            &b.vals[..m * k],
            &mut s.cd,
        )
    })
}

/// Gather operand `reg` into `f`, unless `f` already holds it gathered
/// from the same register words.
fn fragment(w: &Wave, x: &Mfma, reg: (RegFile, u16), f: &mut Fragment) -> R<()> {
    let per = x.el.per();
    let regs = (x.k * x.m / LANES).div_ceil(per);
    let key = Some((reg.0, reg.1, x.el, x.m, x.k));
    let mut same = f.key == key;
    for (q, raw) in f.raw.iter_mut().enumerate().take(regs) {
        let row = vrow(w, reg.0, reg.1 + q as u16)?;
        if !same || raw != row {
            same = false;
            *raw = *row;
        }
    }
    if !same {
        // Invalid until gathered whole (a fault leaves it empty).
        f.key = None;
        let n = x.m * x.k;
        if x.m == 16 {
            gather::<16>(w, x, reg, &mut f.vals[..n])?;
        } else {
            gather::<32>(w, x, reg, &mut f.vals[..n])?;
        }
        f.key = key;
    }
    Ok(())
}

/// [`mfma`] from gathered operands `a` and `b` (`m·k` elements each,
/// depth-major; `int`: i32 C and D) over the scratch array `cd`: every
/// element it reads (`m·m`) it writes first.
#[allow(clippy::too_many_arguments)]
fn mfma_in(
    w: &mut Wave,
    m: usize,
    k: usize,
    int: bool,
    c: Result<(RegFile, u16), u32>,
    d: VDst,
    a: &[f64],
    b: &[f64],
    cd: &mut [f64; 1024],
) -> R<()> {
    let dregs = m * m / LANES;
    for r in 0..dregs {
        let row = match c {
            Ok((file, i)) => *vrow(w, file, i + r as u16)?,
            Err(bits) => [bits; LANES],
        };
        for g in 0..LANES / m {
            let i = mfma_row(m, g, r);
            for (c, &v) in cd[i * m..i * m + m].iter_mut().zip(&row[g * m..g * m + m]) {
                *c = if int { v as i32 as f64 } else { f(v) as f64 };
            }
        }
    }
    let cd = &mut cd[..m * m];
    #[cfg(target_arch = "x86_64")]
    let fma =
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let fma = false;
    match (m, fma) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and FMA (checked above).
        (16, true) => unsafe { matmul_fma::<16>(k, a, b, cd) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        (_, true) => unsafe { matmul_fma::<32>(k, a, b, cd) },
        (16, _) => matmul::<16, false>(k, a, b, cd),
        _ => matmul::<32, false>(k, a, b, cd),
    }
    // MFMA ignores exec: every lane's result is written.
    for r in 0..dregs {
        let d = vrow_mut(
            w,
            VDst {
                file: d.file,
                index: d.index + r as u16,
            },
        )?;
        for g in 0..LANES / m {
            let i = mfma_row(m, g, r);
            for (o, &v) in d[g * m..g * m + m].iter_mut().zip(&cd[i * m..i * m + m]) {
                // An i32 sum is exact in f64 (|C| < 2^31, K products of
                // at most 2^14) and wraps to 32 bits as the reference's.
                *o = if int { v as i64 as u32 } else { cf32(v as f32) };
            }
        }
    }
    Ok(())
}

fn lower_scalar(ins: &Instruction, program: &Program) -> Option<Typed> {
    let m = ins.mnemonic.as_str();
    if let Some(t) = rdna::lower_scalar(ins) {
        return t;
    }
    match m {
        "s_waitcnt" | "s_nop" | "s_setprio" | "s_sleep" | "s_waitcnt_vscnt" | "s_waitcnt_vmcnt"
        | "s_waitcnt_lgkmcnt" => return Some(Typed::Nop),
        "s_endpgm" => return Some(Typed::Halt(crate::exec::WaveState::Done)),
        "s_barrier" => return Some(Typed::Halt(crate::exec::WaveState::Barrier)),
        "s_trap" => return Some(Typed::Trap),
        "s_set_gpr_idx_on" => {
            return Some(Typed::Mode(Mode::On {
                src: ssrc(ins.ops.first()?, 1)?,
                mask: (*ins.words.first()? >> 8) & 0xf,
            }))
        }
        "s_set_gpr_idx_off" => return Some(Typed::Mode(Mode::Off)),
        "s_set_gpr_idx_idx" => return Some(Typed::Mode(Mode::Index(ssrc(ins.ops.first()?, 1)?))),
        "s_set_gpr_idx_mode" => {
            return Some(Typed::Mode(Mode::Operands(*ins.words.first()? & 0xf)))
        }
        "s_setvskip" if ins.ops.len() == 2 => {
            return Some(Typed::Mode(Mode::Vskip([
                ssrc(&ins.ops[0], 1)?,
                ssrc(&ins.ops[1], 1)?,
            ])))
        }
        "s_branch" | "s_cbranch_scc0" | "s_cbranch_scc1" | "s_cbranch_vccz" | "s_cbranch_vccnz"
        | "s_cbranch_execz" | "s_cbranch_execnz" => {
            let cond = match m {
                "s_branch" => Cond::Always,
                "s_cbranch_scc0" => Cond::Scc0,
                "s_cbranch_scc1" => Cond::Scc1,
                "s_cbranch_vccz" => Cond::Vccz,
                "s_cbranch_vccnz" => Cond::Vccnz,
                "s_cbranch_execz" => Cond::Execz,
                _ => Cond::Execnz,
            };
            let simm = *ins.words.first()? as u16 as i16 as i64;
            let to = (ins.addr as i64 + 4 + simm * 4) as u64;
            // A target that is not an instruction faults on the reference
            // executor, which says so.
            let target = *program.index.get(&to)?;
            return Some(Typed::Branch { cond, target, to });
        }
        _ => {}
    }
    let ops = &ins.ops;
    if let Some(kind) = m.strip_prefix("s_load_") {
        let dwords = match kind {
            "dword" => 1,
            "dwordx2" => 2,
            "dwordx4" => 4,
            "dwordx8" => 8,
            "dwordx16" => 16,
            _ => return None,
        };
        let mut offset = 0u64;
        for (k, v) in &ins.mods {
            match k.as_str() {
                "offset" => offset = crate::exec::parse_int(v).ok()? as u64,
                // Cache policy: no effect on what the emulator computes.
                "glc" | "sc0" | "sc1" | "nt" | "dlc" => {}
                _ => return None,
            }
        }
        let soff = match ops.len() {
            2 => None,
            3 => Some(ssrc(&ops[2], 1)?),
            _ => return None,
        };
        if ops[0].neg || ops[0].abs || ops[0].sext || ops[1].neg || ops[1].abs || ops[1].sext {
            return None;
        }
        return Some(Typed::Smem {
            dst: sgpr(&ops[0].op, dwords)?,
            dwords: dwords as u8,
            base: sgpr(&ops[1].op, 2)?,
            soff,
            offset,
        });
    }
    let store = m.strip_prefix("s_store_");
    let atomic = m.strip_prefix("s_atomic_");
    if store.is_some() || atomic.is_some() {
        let (mut offset, mut ret) = (0u64, false);
        for (k, v) in &ins.mods {
            match k.as_str() {
                "offset" => offset = crate::exec::parse_int(v).ok()? as u64,
                // (A store's `glc` is cache policy.)
                "glc" => ret = true,
                _ => return None,
            }
        }
        let (atomic, dwords) = match (store, atomic) {
            (Some(kind), _) => (
                None,
                match kind {
                    "dword" => 1,
                    "dwordx2" => 2,
                    "dwordx4" => 4,
                    _ => return None,
                },
            ),
            (_, Some(kind)) => {
                let (kind, size) = match kind.strip_suffix("_x2") {
                    Some(k) => (k, 8u8),
                    None => (kind, 4),
                };
                let (op, fixed) = AtomicOp::of(kind)?;
                if fixed.is_some() {
                    return None;
                }
                let words = size / 4 * if op == AtomicOp::CmpSwap { 2 } else { 1 };
                (Some((op, size, ret)), words)
            }
            _ => return None,
        };
        let soff = match ops.len() {
            2 => None,
            3 => Some(ssrc(&ops[2], 1)?),
            _ => return None,
        };
        if ops[..2].iter().any(|s| s.neg || s.abs || s.sext) {
            return None;
        }
        return Some(Typed::SmemWrite {
            atomic,
            dwords,
            data: sgpr(&ops[0].op, dwords as u16)?,
            base: sgpr(&ops[1].op, 2)?,
            soff,
            offset,
        });
    }
    if !ins.mods.is_empty() {
        return None;
    }
    // `s_mov_b64 sdst, src_shared_base` / `src_private_base`: the aperture.
    if m == "s_mov_b64" && ops.len() == 2 {
        if let Operand::Aperture(n) = &ops[1].op {
            let private = match n.as_str() {
                "src_shared_base" => false,
                "src_private_base" => true,
                _ => return None,
            };
            let dst = sgpr(&ops[0].op, 2)?;
            return Some(Typed::Aperture { dst, private });
        }
    }
    if m == "s_addk_i32" || m == "s_movk_i32" || m == "s_mulk_i32" {
        let dst = sgpr(&ops.first()?.op, 1)?;
        let imm = *ins.words.first()? as u16 as i16 as i32;
        return Some(if m == "s_addk_i32" {
            Typed::AddK { dst, imm }
        } else if m == "s_mulk_i32" {
            Typed::S32 {
                op: S32::Mul,
                dst,
                src: [Opnd::S(dst), Opnd::Imm(imm as u32 as u64)],
            }
        } else {
            Typed::S32 {
                op: S32::Mov,
                dst,
                src: [Opnd::Imm(imm as u32 as u64), Opnd::Imm(0)],
            }
        });
    }
    if let Some(rest) = m.strip_prefix("s_cmp_") {
        let (op, ty) = rest.split_once('_')?;
        let ty = match ty {
            "u32" => CmpTy::U32,
            "i32" => CmpTy::I32,
            _ => return None,
        };
        if ops.len() != 2 {
            return None;
        }
        return Some(Typed::SCmp {
            rel: rel(op, false)?,
            ty,
            src: [ssrc(&ops[0], 1)?, ssrc(&ops[1], 1)?],
        });
    }
    let s32 = match m {
        "s_mov_b32" => Some(S32::Mov),
        "s_add_u32" => Some(S32::AddU),
        "s_sub_u32" => Some(S32::SubU),
        "s_addc_u32" => Some(S32::AddC),
        "s_subb_u32" => Some(S32::SubB),
        "s_add_i32" => Some(S32::AddI),
        "s_sub_i32" => Some(S32::SubI),
        "s_mul_i32" => Some(S32::Mul),
        "s_mul_hi_u32" => Some(S32::MulHiU),
        "s_mul_hi_i32" => Some(S32::MulHiI),
        "s_and_b32" => Some(S32::And),
        "s_or_b32" => Some(S32::Or),
        "s_xor_b32" => Some(S32::Xor),
        "s_andn2_b32" => Some(S32::AndN2),
        "s_orn2_b32" => Some(S32::OrN2),
        "s_lshl_b32" => Some(S32::Lshl),
        "s_lshr_b32" => Some(S32::Lshr),
        "s_ashr_i32" => Some(S32::Ashr),
        "s_lshl1_add_u32" => Some(S32::LshlAdd(1)),
        "s_lshl2_add_u32" => Some(S32::LshlAdd(2)),
        "s_lshl3_add_u32" => Some(S32::LshlAdd(3)),
        "s_lshl4_add_u32" => Some(S32::LshlAdd(4)),
        "s_min_u32" => Some(S32::MinU),
        "s_max_u32" => Some(S32::MaxU),
        "s_min_i32" => Some(S32::MinI),
        "s_max_i32" => Some(S32::MaxI),
        "s_cselect_b32" => Some(S32::Cselect),
        "s_nand_b32" => Some(S32::Nand),
        "s_nor_b32" => Some(S32::Nor),
        "s_xnor_b32" => Some(S32::Xnor),
        "s_bfe_u32" => Some(S32::Bfe(false)),
        "s_bfe_i32" => Some(S32::Bfe(true)),
        "s_bfm_b32" => Some(S32::Bfm),
        "s_not_b32" => Some(S32::Not),
        "s_brev_b32" => Some(S32::Brev),
        "s_bcnt1_i32_b32" => Some(S32::Bcnt1),
        "s_ff1_i32_b32" => Some(S32::Ff1),
        "s_flbit_i32_b32" => Some(S32::Flbit),
        "s_sext_i32_i8" => Some(S32::SextI8),
        "s_sext_i32_i16" => Some(S32::SextI16),
        "s_abs_i32" => Some(S32::Abs),
        "s_absdiff_i32" => Some(S32::AbsDiff),
        "s_pack_ll_b32_b16" => Some(S32::PackLl),
        "s_pack_lh_b32_b16" => Some(S32::PackLh),
        "s_pack_hh_b32_b16" => Some(S32::PackHh),
        _ => None,
    };
    if let Some(op) = s32 {
        let one = matches!(
            op,
            S32::Mov
                | S32::Not
                | S32::Brev
                | S32::Bcnt1
                | S32::Ff1
                | S32::Flbit
                | S32::SextI8
                | S32::SextI16
                | S32::Abs
        );
        let n = if one { 1 } else { 2 };
        if ops.len() != n + 1 {
            return None;
        }
        let dst = sgpr(&ops[0].op, 1)?;
        let mut src = [Opnd::Imm(0); 2];
        for k in 0..n {
            src[k] = ssrc(&ops[k + 1], 1)?;
        }
        return Some(Typed::S32 { op, dst, src });
    }
    let s64 = match m {
        "s_mov_b64" => Some(S64::Mov),
        "s_and_b64" => Some(S64::And),
        "s_or_b64" => Some(S64::Or),
        "s_xor_b64" => Some(S64::Xor),
        "s_andn2_b64" => Some(S64::AndN2),
        "s_orn2_b64" => Some(S64::OrN2),
        "s_cselect_b64" => Some(S64::Cselect),
        "s_lshl_b64" => Some(S64::Lshl),
        "s_lshr_b64" => Some(S64::Lshr),
        "s_ashr_i64" => Some(S64::Ashr),
        "s_nand_b64" => Some(S64::Nand),
        "s_nor_b64" => Some(S64::Nor),
        "s_xnor_b64" => Some(S64::Xnor),
        "s_not_b64" => Some(S64::Not),
        "s_brev_b64" => Some(S64::Brev),
        "s_bfe_u64" => Some(S64::Bfe(false)),
        "s_bfe_i64" => Some(S64::Bfe(true)),
        "s_bfm_b64" => Some(S64::Bfm),
        "s_bcnt1_i32_b64" => Some(S64::Bcnt1),
        "s_ff1_i32_b64" => Some(S64::Ff1),
        "s_flbit_i32_b64" => Some(S64::Flbit),
        _ => None,
    };
    if let Some(op) = s64 {
        let one = matches!(
            op,
            S64::Mov | S64::Not | S64::Brev | S64::Bcnt1 | S64::Ff1 | S64::Flbit
        );
        let n = if one { 1 } else { 2 };
        if ops.len() != n + 1 {
            return None;
        }
        // The destination: 32 bits for a count of a 64-bit source.
        let narrow = matches!(op, S64::Bcnt1 | S64::Ff1 | S64::Flbit);
        let dst = sgpr(&ops[0].op, if narrow { 1 } else { 2 })?;
        let mut src = [Opnd::Imm(0); 2];
        for k in 0..n {
            // 32-bit sources: a shift's or bfe's second, both of bfm's.
            let w32 = (k == 1 && matches!(op, S64::Lshl | S64::Lshr | S64::Ashr | S64::Bfe(_)))
                || op == S64::Bfm;
            src[k] = ssrc(&ops[k + 1], if w32 { 1 } else { 2 })?;
        }
        return Some(Typed::S64 { op, dst, src });
    }
    if let Some(kind) = m.strip_suffix("_saveexec_b64") {
        let op = save_op(kind)?;
        if ops.len() != 2 {
            return None;
        }
        return Some(Typed::SaveExec {
            op,
            dst: sgpr(&ops[0].op, 2)?,
            src: ssrc(&ops[1], 2)?,
        });
    }
    None
}

/// A vector register row (its fault worded by the reference executor).
#[inline]
fn vrow(w: &Wave, file: RegFile, i: u16) -> R<&Lanes> {
    w.vreg(file, i as usize)
}

#[inline]
fn vrow_mut(w: &mut Wave, d: VDst) -> R<&mut Lanes> {
    w.vreg_mut(d.file, d.index as usize)
}

/// A 32-bit source's lanes.
#[inline]
fn get32(w: &Wave, o: Opnd) -> R<Lanes> {
    Ok(match o {
        Opnd::V(i) => *vrow(w, RegFile::V, i)?,
        Opnd::A(i) => *vrow(w, RegFile::A, i)?,
        Opnd::S(i) => [w.s[i as usize]; LANES],
        Opnd::Imm(x) => [x as u32; LANES],
    })
}

/// A 32-bit source's lanes, in place for a register (`buf` holds a
/// broadcast scalar or constant).
#[inline]
fn src32<'a>(w: &'a Wave, o: Opnd, buf: &'a mut Lanes) -> R<&'a Lanes> {
    Ok(match o {
        Opnd::V(i) => vrow(w, RegFile::V, i)?,
        Opnd::A(i) => vrow(w, RegFile::A, i)?,
        Opnd::S(i) => {
            *buf = [w.s[i as usize]; LANES];
            buf
        }
        Opnd::Imm(x) => {
            *buf = [x as u32; LANES];
            buf
        }
    })
}

/// A 64-bit source's lanes.
#[inline]
fn get64(w: &Wave, o: Opnd) -> R<Lanes64> {
    Ok(match o {
        Opnd::V(i) | Opnd::A(i) => {
            let file = if matches!(o, Opnd::A(_)) {
                RegFile::A
            } else {
                RegFile::V
            };
            let lo = vrow(w, file, i)?;
            let hi = vrow(w, file, i + 1)?;
            std::array::from_fn(|l| lo[l] as u64 | (hi[l] as u64) << 32)
        }
        Opnd::S(i) => {
            let i = i as usize;
            [w.s[i] as u64 | (w.s[i + 1] as u64) << 32; LANES]
        }
        Opnd::Imm(x) => [x; LANES],
    })
}

/// A scalar source, 32 bits.
#[inline]
fn sget(w: &Wave, o: Opnd) -> u32 {
    match o {
        Opnd::S(i) => w.s[i as usize],
        Opnd::Imm(x) => x as u32,
        // Lowering gives scalar operations only the two forms above.
        Opnd::V(_) | Opnd::A(_) => 0,
    }
}

/// A scalar source, 64 bits.
#[inline]
fn sget64(w: &Wave, o: Opnd) -> u64 {
    match o {
        Opnd::S(i) => w.s[i as usize] as u64 | (w.s[i as usize + 1] as u64) << 32,
        Opnd::Imm(x) => x,
        Opnd::V(_) | Opnd::A(_) => 0,
    }
}

/// Write a lane mask to SGPR `i`: a pair in wave64, one SGPR in wave32
/// (as `Wave::write_mask`); an index past the file ([`rdna::DROP`]: the
/// `null` destination) drops it.
#[inline]
fn set_mask(w: &mut Wave, i: u16, bits: u64) {
    let i = i as usize;
    if w.wave_size == 32 {
        if let Some(r) = w.s.get_mut(i) {
            *r = bits as u32;
        }
    } else if let Some(p) = w.s.get_mut(i..i + 2) {
        p[0] = bits as u32;
        p[1] = (bits >> 32) as u32;
    }
}

/// A lane mask read from SGPR `i`: a pair in wave64, one SGPR in wave32.
#[inline]
fn get_mask(w: &Wave, i: u16) -> u64 {
    let i = i as usize;
    if w.wave_size == 32 {
        w.s[i] as u64
    } else {
        w.s[i] as u64 | (w.s[i + 1] as u64) << 32
    }
}

fn sset64(w: &mut Wave, i: u16, v: u64) {
    w.s[i as usize] = v as u32;
    w.s[i as usize + 1] = (v >> 32) as u32;
}

/// Apply float input modifiers of source `k` to its lanes (of an f16
/// source, to bit 15, when bit `k` of `half` is set).
#[inline]
fn fmods(x: &mut Lanes, k: usize, neg: u8, abs: u8, half: u8) {
    let sign = if half >> k & 1 != 0 {
        0x8000
    } else {
        0x8000_0000
    };
    if abs >> k & 1 != 0 {
        x.iter_mut().for_each(|v| *v &= !sign);
    }
    if neg >> k & 1 != 0 {
        x.iter_mut().for_each(|v| *v ^= sign);
    }
}

/// Write `r` to the lanes of `exec`.
#[inline]
fn put(d: &mut Lanes, r: &Lanes, exec: u64) {
    if exec == u64::MAX {
        *d = *r;
        return;
    }
    if exec == 0xffff_ffff {
        // A whole wave32 wave.
        d[..32].copy_from_slice(&r[..32]);
        return;
    }
    for l in 0..LANES {
        if exec >> l & 1 != 0 {
            d[l] = r[l];
        }
    }
}

#[inline]
fn cf32(x: f32) -> u32 {
    if x.is_nan() {
        0x7fc0_0000
    } else {
        x.to_bits()
    }
}

#[inline]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn sext24(x: u32) -> i64 {
    ((x << 8) as i32 >> 8) as i64
}

fn h(x: u32) -> f32 {
    crate::exec::f16b(x as u64)
}

fn ch(x: f32) -> u32 {
    crate::exec::bf16(x) as u32
}

/// [`v32_n`] over the 64 lanes.
#[inline]
fn v32(op: V32, a: &Lanes, b: &Lanes, c: &Lanes, vcc: u64, out: &mut Lanes) {
    v32_n::<LANES>(op, a, b, c, vcc, out)
}

/// A 32-bit vector operation over the first `N` lanes (32 in wave32: the
/// others are never active).
fn v32_n<const N: usize>(op: V32, a: &Lanes, b: &Lanes, c: &Lanes, vcc: u64, out: &mut Lanes) {
    macro_rules! each {
        (|$x:ident, $y:ident, $z:ident| $e:expr) => {
            for l in 0..N {
                let ($x, $y, $z) = (a[l], b[l], c[l]);
                let _ = (&$x, &$y, &$z);
                out[l] = $e;
            }
        };
        (|$x:ident, $y:ident, $z:ident, $l:ident| $e:expr) => {
            for $l in 0..N {
                let ($x, $y, $z) = (a[$l], b[$l], c[$l]);
                let _ = (&$x, &$y, &$z);
                out[$l] = $e;
            }
        };
    }
    use V32::*;
    match op {
        Mov => each!(|x, y, z| x),
        Not => each!(|x, y, z| !x),
        And => each!(|x, y, z| x & y),
        Or => each!(|x, y, z| x | y),
        Xor => each!(|x, y, z| x ^ y),
        Xnor => each!(|x, y, z| !(x ^ y)),
        Or3 => each!(|x, y, z| x | y | z),
        AndOr => each!(|x, y, z| (x & y) | z),
        LshlOr => each!(|x, y, z| x.wrapping_shl(y & 31) | z),
        Bfi => each!(|x, y, z| (x & y) | (!x & z)),
        BfeU => each!(|x, y, z| {
            let (o, w) = (y & 31, z & 31);
            if w == 0 {
                0
            } else {
                (x >> o) & ((1u64 << w) - 1) as u32
            }
        }),
        AlignBit => each!(|x, y, z| ((((x as u64) << 32) | y as u64) >> (z & 31)) as u32),
        LshlRev => each!(|x, y, z| y.wrapping_shl(x & 31)),
        LshrRev => each!(|x, y, z| y.wrapping_shr(x & 31)),
        AshrRev => each!(|x, y, z| ((y as i32) >> (x & 31)) as u32),
        LshlAdd => each!(|x, y, z| x.wrapping_shl(y & 31).wrapping_add(z)),
        AddLshl => each!(|x, y, z| x.wrapping_add(y).wrapping_shl(z & 31)),
        Add => each!(|x, y, z| x.wrapping_add(y)),
        Sub => each!(|x, y, z| x.wrapping_sub(y)),
        SubRev => each!(|x, y, z| y.wrapping_sub(x)),
        Add3 => each!(|x, y, z| x.wrapping_add(y).wrapping_add(z)),
        Xad => each!(|x, y, z| (x ^ y).wrapping_add(z)),
        MulLo => each!(|x, y, z| x.wrapping_mul(y)),
        MulHiU => each!(|x, y, z| ((x as u64 * y as u64) >> 32) as u32),
        MulHiI => each!(|x, y, z| ((x as i32 as i64 * y as i32 as i64) >> 32) as u32),
        MulU24 => each!(|x, y, z| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff)),
        MulI24 => each!(|x, y, z| (sext24(x) * sext24(y)) as u32),
        MadU24 => each!(|x, y, z| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff).wrapping_add(z)),
        MinU => each!(|x, y, z| x.min(y)),
        MaxU => each!(|x, y, z| x.max(y)),
        MinI => each!(|x, y, z| (x as i32).min(y as i32) as u32),
        MaxI => each!(|x, y, z| (x as i32).max(y as i32) as u32),
        Min3U => each!(|x, y, z| x.min(y).min(z)),
        Max3U => each!(|x, y, z| x.max(y).max(z)),
        Min3I => each!(|x, y, z| (x as i32).min(y as i32).min(z as i32) as u32),
        Max3I => each!(|x, y, z| (x as i32).max(y as i32).max(z as i32) as u32),
        AddF => each!(|x, y, z| cf32(f(x) + f(y))),
        SubF => each!(|x, y, z| cf32(f(x) - f(y))),
        SubRevF => each!(|x, y, z| cf32(f(y) - f(x))),
        MulF => each!(|x, y, z| cf32(f(x) * f(y))),
        FmaF => each!(|x, y, z| cf32(f(x).mul_add(f(y), f(z)))),
        MadF => each!(|x, y, z| cf32(f(x) * f(y) + f(z))),
        MinF => each!(|x, y, z| cf32(f(x).min(f(y)))),
        MaxF => each!(|x, y, z| cf32(f(x).max(f(y)))),
        Min3F => each!(|x, y, z| cf32(f(x).min(f(y)).min(f(z)))),
        Max3F => each!(|x, y, z| cf32(f(x).max(f(y)).max(f(z)))),
        CvtF32U32 => each!(|x, y, z| cf32(x as f32)),
        CvtF32I32 => each!(|x, y, z| cf32(x as i32 as f32)),
        CvtU32F32 => each!(|x, y, z| f(x) as u32),
        CvtI32F32 => each!(|x, y, z| f(x) as i32 as u32),
        CvtPkBf16F32 => each!(|x, y, z| {
            half::bf16::from_f32(f(x)).to_bits() as u32
                | (half::bf16::from_f32(f(y)).to_bits() as u32) << 16
        }),
        Perm => each!(|x, y, z| perm(x, y, z)),
        BfeI => each!(|x, y, z| {
            let (o, w) = (y & 31, z & 31);
            if w == 0 {
                0
            } else {
                (((x >> o) << (32 - w)) as i32 >> (32 - w)) as u32
            }
        }),
        AlignByte => each!(|x, y, z| ((((x as u64) << 32) | y as u64) >> (8 * (z & 3))) as u32),
        Bcnt => each!(|x, y, z| x.count_ones().wrapping_add(y)),
        Bfrev => each!(|x, y, z| x.reverse_bits()),
        FfbhU => each!(|x, y, z| if x == 0 { u32::MAX } else { x.leading_zeros() }),
        FfblB => each!(|x, y, z| if x == 0 { u32::MAX } else { x.trailing_zeros() }),
        MbcntLo => each!(|x, y, z, l| {
            let mask = if l >= 32 {
                u32::MAX
            } else {
                ((1u64 << l) - 1) as u32
            };
            (x & mask).count_ones().wrapping_add(y)
        }),
        MbcntHi => each!(|x, y, z, l| {
            let mask = if l < 32 {
                0
            } else {
                ((1u64 << (l - 32)) - 1) as u32
            };
            (x & mask).count_ones().wrapping_add(y)
        }),
        Med3U => each!(|x, y, z| x.max(y).min(x.min(y).max(z))),
        Med3I => each!(|x, y, z| {
            let (x, y, z) = (x as i32, y as i32, z as i32);
            x.max(y).min(x.min(y).max(z)) as u32
        }),
        Med3F => each!(|x, y, z| {
            let (x, y, z) = (f(x), f(y), f(z));
            if x.is_nan() || y.is_nan() || z.is_nan() {
                cf32(x.min(y).min(z))
            } else {
                cf32(x.max(y).min(x.min(y).max(z)))
            }
        }),
        MulLegacyF => each!(|x, y, z| {
            let (x, y) = (f(x), f(y));
            cf32(if x == 0.0 || y == 0.0 { 0.0 } else { x * y })
        }),
        Rcp => each!(|x, y, z| cf32(1.0 / f(x))),
        Sqrt => each!(|x, y, z| cf32(f(x).sqrt())),
        Rsq => each!(|x, y, z| cf32(1.0 / f(x).sqrt())),
        Exp => each!(|x, y, z| cf32(f(x).exp2())),
        Log => each!(|x, y, z| cf32(f(x).log2())),
        Sin => each!(|x, y, z| cf32((f(x) * std::f32::consts::TAU).sin())),
        Cos => each!(|x, y, z| cf32((f(x) * std::f32::consts::TAU).cos())),
        Floor => each!(|x, y, z| cf32(f(x).floor())),
        Ceil => each!(|x, y, z| cf32(f(x).ceil())),
        Trunc => each!(|x, y, z| cf32(f(x).trunc())),
        Rndne => each!(|x, y, z| cf32(f(x).round_ties_even())),
        Fract => each!(|x, y, z| {
            let x = f(x);
            cf32(if x.is_infinite() {
                f32::NAN
            } else {
                (x - x.floor()).min(f32::from_bits(0x3f7fffff))
            })
        }),
        FrexpMant => each!(|x, y, z| cf32(crate::exec::frexp32(f(x)).0)),
        FrexpExp => each!(|x, y, z| crate::exec::frexp32(f(x)).1 as u32),
        Ldexp => each!(|x, y, z| cf32(crate::exec::ldexp32(f(x), y as i32))),
        DivFixup => each!(|x, y, z| cf32(crate::exec::div_fixup32(f(x), f(y), f(z)))),
        DivFmas => each!(|x, y, z, l| {
            // As the reference: the fma in f64, scaled, rounded once.
            let d = (f(x) as f64).mul_add(f(y) as f64, f(z) as f64);
            let d = if vcc >> l & 1 != 0 {
                if z >> 23 & 0xff >= 127 {
                    d * 2f64.powi(64)
                } else {
                    d * 2f64.powi(-64)
                }
            } else {
                d
            };
            cf32(d as f32)
        }),
        CvtF16F32 => each!(|x, y, z| ch(f(x))),
        CvtF32F16 => each!(|x, y, z| cf32(h(x))),
        CvtF32Ubyte(n) => each!(|x, y, z| (((x >> (8 * n)) & 0xff) as f32).to_bits()),
        CvtOffF32I4 => each!(|x, y, z| (((x << 28) as i32 >> 28) as f32 / 16.0).to_bits()),
        CvtF32Bf16 => each!(|x, y, z| cf32(f32::from_bits(x << 16))),
        Dot(form, clamp) => each!(|x, y, z| crate::exec::dot_lane(form, x, y, z, clamp)),
        // The table's minterms, ORed.
        Bitop3(t) => each!(|x, y, z| {
            let mut r = 0;
            for i in 0..8 {
                if t >> i & 1 != 0 {
                    let a = if i & 4 != 0 { x } else { !x };
                    let b = if i & 2 != 0 { y } else { !y };
                    let c = if i & 1 != 0 { z } else { !z };
                    r |= a & b & c;
                }
            }
            r
        }),
        CvtPkrtz => each!(|x, y, z| {
            crate::exec::f16_rtz(f(x)) as u32 | (crate::exec::f16_rtz(f(y)) as u32) << 16
        }),
        CvtPkF16F32 => each!(|x, y, z| ch(f(x)) | ch(f(y)) << 16),
        PackF16 => each!(|x, y, z| (x & 0xffff) | (y & 0xffff) << 16),
        AddH => each!(|x, y, z| ch(h(x) + h(y))),
        SubH => each!(|x, y, z| ch(h(x) - h(y))),
        SubRevH => each!(|x, y, z| ch(h(y) - h(x))),
        MulH => each!(|x, y, z| ch(h(x) * h(y))),
        FmaH => each!(|x, y, z| ch((h(x) as f64).mul_add(h(y) as f64, h(z) as f64) as f32)),
        MaxH => each!(|x, y, z| ch(h(x).max(h(y)))),
        DivFixupH => each!(|x, y, z| ch(crate::exec::div_fixup32(h(x), h(y), h(z)))),
        AddU16 => each!(|x, y, z| (x as u16).wrapping_add(y as u16) as u32),
        SubU16 => each!(|x, y, z| (x as u16).wrapping_sub(y as u16) as u32),
        SubRevU16 => each!(|x, y, z| (y as u16).wrapping_sub(x as u16) as u32),
        MulLoU16 => each!(|x, y, z| (x as u16).wrapping_mul(y as u16) as u32),
        AddU16Sat => each!(|x, y, z| (x as u16).saturating_add(y as u16) as u32),
        SubU16Sat => each!(|x, y, z| (x as u16).saturating_sub(y as u16) as u32),
        SubRevU16Sat => each!(|x, y, z| (y as u16).saturating_sub(x as u16) as u32),
        AddI16Sat => each!(|x, y, z| (x as i16).saturating_add(y as i16) as u16 as u32),
        SubI16Sat => each!(|x, y, z| (x as i16).saturating_sub(y as i16) as u16 as u32),
        AddUSat => each!(|x, y, z| x.saturating_add(y)),
        SubUSat => each!(|x, y, z| x.saturating_sub(y)),
        SubRevUSat => each!(|x, y, z| y.saturating_sub(x)),
        AddISat => each!(|x, y, z| (x as i32).saturating_add(y as i32) as u32),
        SubISat => each!(|x, y, z| (x as i32).saturating_sub(y as i32) as u32),
        MaxNum => each!(|x, y, z| crate::exec::num_minmax32(x, y, true)),
        MinNum => each!(|x, y, z| crate::exec::num_minmax32(x, y, false)),
        MinH => each!(|x, y, z| ch(h(x).min(h(y)))),
    }
}

/// `v_perm_b32`, as the reference executor selects bytes.
fn perm(a: u32, b: u32, c: u32) -> u32 {
    let bytes = (a as u64) << 32 | b as u64;
    let mut out = 0u32;
    for i in 0..4 {
        let sel = (c >> (8 * i)) & 0xff;
        let byte = match sel {
            0..=7 => (bytes >> (8 * sel)) & 0xff,
            8..=11 => {
                if (bytes >> (8 * (2 * (sel - 8) + 1))) & 0x80 != 0 {
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
    out
}

fn holds(rel: Rel, o: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    use Rel::*;
    match rel {
        F => false,
        T => true,
        Lt => o == Some(Less),
        Eq => o == Some(Equal),
        Le => matches!(o, Some(Less | Equal)),
        Gt => o == Some(Greater),
        Ne => matches!(o, Some(Less | Greater)),
        Ge => matches!(o, Some(Greater | Equal)),
        O => o.is_some(),
        U => o.is_none(),
        Nge => matches!(o, None | Some(Less)),
        Nlg => matches!(o, None | Some(Equal)),
        Ngt => matches!(o, None | Some(Less | Equal)),
        Nle => matches!(o, None | Some(Greater)),
        Neq => o != Some(Equal),
        Nlt => matches!(o, None | Some(Greater | Equal)),
    }
}

fn compare(rel: Rel, ty: CmpTy, a: u32, b: u32) -> bool {
    let o = match ty {
        CmpTy::U32 => Some(a.cmp(&b)),
        CmpTy::I32 => Some((a as i32).cmp(&(b as i32))),
        CmpTy::F32 => f(a).partial_cmp(&f(b)),
        // The class of `a` (as the reference's `compare`) in the mask `b`.
        CmpTy::ClassF32 => {
            let snan = f(a).is_nan() && a & 0x0040_0000 == 0;
            return crate::exec::class_bits32(f(a) as f64, snan) & b != 0;
        }
        _ => return compare64(rel, ty, a as u64, b as u64),
    };
    holds(rel, o)
}

/// A 64-bit comparison (and `v_cmp_class_f64`, as the reference's
/// `compare` classifies).
fn compare64(rel: Rel, ty: CmpTy, a: u64, b: u64) -> bool {
    let o = match ty {
        CmpTy::U64 => Some(a.cmp(&b)),
        CmpTy::I64 => Some((a as i64).cmp(&(b as i64))),
        CmpTy::F64 => crate::exec::f64b(a).partial_cmp(&crate::exec::f64b(b)),
        CmpTy::ClassF64 => {
            let x = crate::exec::f64b(a);
            let snan = x.is_nan() && a & 0x0008_0000_0000_0000 == 0;
            let bits = if x.is_subnormal() {
                if x < 0.0 {
                    1 << 4
                } else {
                    1 << 7
                }
            } else if x.is_normal() {
                if x < 0.0 {
                    1 << 3
                } else {
                    1 << 8
                }
            } else {
                crate::exec::class_bits32(x, snan)
            };
            return bits & (b as u32) != 0;
        }
        _ => return compare(rel, ty, a as u32, b as u32),
    };
    holds(rel, o)
}

/// Run one lowered instruction `t` of `ins` (the program counter already
/// points past it).
pub(crate) fn exec(w: &mut Wave, t: &Typed, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    match *t {
        Typed::Nop => {}
        Typed::Branch { cond, target, to } => {
            let take = match cond {
                Cond::Always => true,
                Cond::Scc0 => !w.scc,
                Cond::Scc1 => w.scc,
                Cond::Vccz => w.vcc() == 0,
                Cond::Vccnz => w.vcc() != 0,
                Cond::Execz => w.exec() == 0,
                Cond::Execnz => w.exec() != 0,
            };
            if take {
                let from = ctx.program.instructions[w.pc - 1].addr;
                w.pc = target;
                w.last_branch = Some((from, to));
            }
        }
        Typed::V32 {
            op,
            dst,
            src,
            neg,
            abs,
            acc: _,
            approx,
            ref dpp,
        } => {
            let mut exec = w.exec();
            if approx.is_some() {
                w.approx.record(ins.addr, exec.count_ones());
            }
            let vcc = if op == V32::DivFmas { w.vcc() } else { 0 };
            let mut r = [0u32; LANES];
            if neg | abs != 0 || dpp.is_some() || approx.is_some() {
                let mut x = [get32(w, src[0])?, get32(w, src[1])?, get32(w, src[2])?];
                let half = op.half();
                for (k, x) in x.iter_mut().enumerate() {
                    fmods(x, k, neg, abs, half);
                }
                if let Some(d) = dpp {
                    if d.strict && rdna::dpp8_inactive(d, exec) {
                        return Err(Stop::Unsupported(
                            "DPP8 reading an inactive lane (not modelled)".into(),
                        ));
                    }
                    let row = x[0];
                    let mut write = 0u64;
                    for (l, (x0, &from)) in x[0].iter_mut().zip(&d.from).enumerate() {
                        let from = from as usize;
                        if from < LANES && exec >> from & 1 != 0 {
                            *x0 = row[from];
                            write |= 1 << l;
                        } else {
                            *x0 = 0;
                            write |= (d.bound_ctrl as u64) << l;
                        }
                    }
                    exec &= d.enabled & write;
                }
                if w.wave_size == 32 {
                    v32_n::<32>(op, &x[0], &x[1], &x[2], vcc, &mut r);
                } else {
                    v32(op, &x[0], &x[1], &x[2], vcc, &mut r);
                }
                if let (Some(a), Some(seed)) = (approx, w.approx.perturb) {
                    for l in 0..LANES {
                        if exec >> l & 1 != 0 {
                            r[l] = a.perturb(seed, x[0][l] as u64, r[l] as u64) as u32;
                        }
                    }
                }
            } else {
                // Registers are read in place; a scalar or a constant is
                // broadcast into a buffer.
                let mut bufs = [[0u32; LANES]; 3];
                let [b0, b1, b2] = &mut bufs;
                let (a, b, c) = (
                    src32(w, src[0], b0)?,
                    src32(w, src[1], b1)?,
                    src32(w, src[2], b2)?,
                );
                if w.wave_size == 32 {
                    v32_n::<32>(op, a, b, c, vcc, &mut r);
                } else {
                    v32(op, a, b, c, vcc, &mut r);
                }
            }
            put(vrow_mut(w, dst)?, &r, exec);
        }
        Typed::V64 { op, dst, src, wide } => {
            let exec = w.exec();
            let g = |w: &Wave, k: usize| -> R<Lanes64> {
                if wide[k] {
                    get64(w, src[k])
                } else {
                    Ok(get32(w, src[k])?.map(|v| v as u64))
                }
            };
            let (a, b, c) = (g(w, 0)?, g(w, 1)?, g(w, 2)?);
            let r: Lanes64 = std::array::from_fn(|l| match op {
                V64::LshlAdd => (a[l] << (b[l] as u32 & 7)).wrapping_add(c[l]),
                V64::LshlRev => b[l] << (a[l] as u32 & 63),
                V64::LshrRev => b[l] >> (a[l] as u32 & 63),
                V64::Mov => a[l],
            });
            write64(w, dst, &r, exec)?;
        }
        Typed::Carry {
            op,
            dst,
            sdst,
            src,
            cin,
        } => {
            let exec = w.exec();
            let (a, b) = (get32(w, src[0])?, get32(w, src[1])?);
            let cin = cin.map(|c| get_mask(w, c));
            let cbit = |l: usize| cin.is_some_and(|m| m >> l & 1 != 0) as i64;
            let mut bits = 0u64;
            if op == Carry::MadU64 {
                let c = get64(w, src[2])?;
                let mut r = [0u64; LANES];
                for l in 0..LANES {
                    let p = a[l] as u128 * b[l] as u128 + c[l] as u128;
                    r[l] = p as u64;
                    bits |= (((p >> 64) != 0) as u64 & (exec >> l & 1)) << l;
                }
                write64(w, dst, &r, exec)?;
            } else {
                let mut r = [0u32; LANES];
                for l in 0..LANES {
                    let (x, y) = (a[l] as i64, b[l] as i64);
                    let (v, c) = match op {
                        Carry::Add => (x + y, (x + y) >> 32 != 0),
                        Carry::AddC => (x + y + cbit(l), (x + y + cbit(l)) >> 32 != 0),
                        Carry::Sub => (x - y, y > x),
                        Carry::SubRev => (y - x, x > y),
                        Carry::SubB => (x - y - cbit(l), x - y - cbit(l) < 0),
                        Carry::SubBRev => (y - x - cbit(l), y - x - cbit(l) < 0),
                        Carry::MadU64 => (0, false),
                    };
                    r[l] = v as u32;
                    bits |= ((c as u64) & (exec >> l & 1)) << l;
                }
                put(vrow_mut(w, dst)?, &r, exec);
            }
            set_mask(w, sdst, bits);
        }
        Typed::DivScale {
            dst,
            sdst,
            src,
            neg,
            abs,
        } => {
            let exec = w.exec();
            let mut x = [get32(w, src[0])?, get32(w, src[1])?, get32(w, src[2])?];
            for (k, x) in x.iter_mut().enumerate() {
                fmods(x, k, neg, abs, 0);
            }
            let mut r = [0u32; LANES];
            let mut bits = 0u64;
            for l in 0..LANES {
                let (d, vcc) = crate::exec::div_scale32(f(x[0][l]), f(x[1][l]), f(x[2][l]));
                r[l] = cf32(d);
                bits |= (vcc as u64) << l;
            }
            put(vrow_mut(w, dst)?, &r, exec);
            set_mask(w, sdst, bits & exec);
        }
        Typed::Cndmask {
            dst,
            src,
            neg,
            abs,
            mask,
        } => {
            let exec = w.exec();
            let mut a = get32(w, src[0])?;
            let mut b = get32(w, src[1])?;
            fmods(&mut a, 0, neg, abs, 0);
            fmods(&mut b, 1, neg, abs, 0);
            let m = get_mask(w, mask);
            let r: Lanes = std::array::from_fn(|l| if m >> l & 1 != 0 { b[l] } else { a[l] });
            put(vrow_mut(w, dst)?, &r, exec);
        }
        Typed::Cmp {
            rel,
            ty,
            src,
            neg,
            abs,
            sdst,
            x,
        } => {
            let exec = w.exec();
            if ty.wide() {
                let mut a = get64(w, src[0])?;
                let mut b = match ty {
                    CmpTy::ClassF64 => get32(w, src[1])?.map(|v| v as u64),
                    _ => get64(w, src[1])?,
                };
                for (k, x) in [&mut a, &mut b].into_iter().enumerate() {
                    if (neg | abs) >> k & 1 != 0 {
                        for v in x.iter_mut() {
                            if abs >> k & 1 != 0 {
                                *v &= !(1 << 63);
                            }
                            if neg >> k & 1 != 0 {
                                *v ^= 1 << 63;
                            }
                        }
                    }
                }
                let mut bits = 0u64;
                for l in 0..LANES {
                    bits |= (compare64(rel, ty, a[l], b[l]) as u64) << l;
                }
                bits &= exec;
                if let Some(d) = sdst {
                    set_mask(w, d, bits);
                }
                if x {
                    w.set_exec(bits);
                }
                return Ok(());
            }
            let mut a = get32(w, src[0])?;
            let mut b = get32(w, src[1])?;
            if neg | abs != 0 {
                fmods(&mut a, 0, neg, abs, 0);
                fmods(&mut b, 1, neg, abs, 0);
            }
            let mut bits = 0u64;
            for l in 0..LANES {
                bits |= (compare(rel, ty, a[l], b[l]) as u64) << l;
            }
            bits &= exec;
            if let Some(d) = sdst {
                set_mask(w, d, bits);
            }
            if x {
                w.set_exec(bits);
            }
        }
        Typed::S32 { op, dst, src } => {
            let (a, b) = (sget(w, src[0]), sget(w, src[1]));
            let r = match op {
                S32::Mov => a,
                S32::AddU => {
                    let (r, c) = a.overflowing_add(b);
                    w.scc = c;
                    r
                }
                S32::SubU => {
                    w.scc = b > a;
                    a.wrapping_sub(b)
                }
                S32::AddC => {
                    let s = a as u64 + b as u64 + w.scc as u64;
                    w.scc = s >> 32 != 0;
                    s as u32
                }
                S32::SubB => {
                    let d = a as i64 - b as i64 - w.scc as i64;
                    w.scc = d < 0;
                    d as u32
                }
                S32::AddI => {
                    let (r, o) = (a as i32).overflowing_add(b as i32);
                    w.scc = o;
                    r as u32
                }
                S32::SubI => {
                    let (r, o) = (a as i32).overflowing_sub(b as i32);
                    w.scc = o;
                    r as u32
                }
                S32::Mul => a.wrapping_mul(b),
                S32::MulHiU => ((a as u64 * b as u64) >> 32) as u32,
                S32::MulHiI => ((a as i32 as i64 * b as i32 as i64) >> 32) as u32,
                S32::And | S32::Or | S32::Xor | S32::AndN2 | S32::OrN2 => {
                    let r = match op {
                        S32::And => a & b,
                        S32::Or => a | b,
                        S32::Xor => a ^ b,
                        S32::AndN2 => a & !b,
                        _ => a | !b,
                    };
                    w.scc = r != 0;
                    r
                }
                S32::Lshl | S32::Lshr | S32::Ashr => {
                    let r = match op {
                        S32::Lshl => a << (b & 31),
                        S32::Lshr => a >> (b & 31),
                        _ => ((a as i32) >> (b & 31)) as u32,
                    };
                    w.scc = r != 0;
                    r
                }
                S32::LshlAdd(n) => {
                    let s = ((a as u64) << n) + b as u64;
                    w.scc = s >> 32 != 0;
                    s as u32
                }
                S32::MinU => {
                    w.scc = a < b;
                    a.min(b)
                }
                S32::MaxU => {
                    w.scc = a > b;
                    a.max(b)
                }
                S32::MinI => {
                    w.scc = (a as i32) < b as i32;
                    (a as i32).min(b as i32) as u32
                }
                S32::MaxI => {
                    w.scc = (a as i32) > b as i32;
                    (a as i32).max(b as i32) as u32
                }
                S32::Cselect => {
                    if w.scc {
                        a
                    } else {
                        b
                    }
                }
                S32::Nand | S32::Nor | S32::Xnor | S32::Not => {
                    let r = match op {
                        S32::Nand => !(a & b),
                        S32::Nor => !(a | b),
                        S32::Xnor => !(a ^ b),
                        _ => !a,
                    };
                    w.scc = r != 0;
                    r
                }
                S32::Bfe(signed) => {
                    let r = crate::exec::bfe32(a, b, signed);
                    w.scc = r != 0;
                    r
                }
                S32::Bfm => (((1u64 << (a & 31)) - 1) as u32) << (b & 31),
                S32::Brev => a.reverse_bits(),
                S32::Bcnt1 => {
                    let r = a.count_ones();
                    w.scc = r != 0;
                    r
                }
                S32::Ff1 | S32::Flbit if a == 0 => u32::MAX,
                S32::Ff1 => a.trailing_zeros(),
                S32::Flbit => a.leading_zeros(),
                S32::SextI8 => a as i8 as i32 as u32,
                S32::SextI16 => a as i16 as i32 as u32,
                S32::Abs | S32::AbsDiff => {
                    let x = if op == S32::Abs {
                        a as i32
                    } else {
                        (a as i32).wrapping_sub(b as i32)
                    };
                    let r = x.wrapping_abs() as u32;
                    w.scc = r != 0;
                    r
                }
                S32::PackLl => (a & 0xffff) | (b << 16),
                S32::PackLh => (a & 0xffff) | (b & 0xffff_0000),
                S32::PackHh => (a >> 16) | (b & 0xffff_0000),
            };
            w.s[dst as usize] = r;
        }
        Typed::S64 { op, dst, src } => {
            let a = sget64(w, src[0]);
            let r = match op {
                S64::Mov => a,
                S64::Ashr => {
                    let r = ((a as i64) >> (sget(w, src[1]) & 63)) as u64;
                    w.scc = r != 0;
                    r
                }
                S64::Not => {
                    w.scc = !a != 0;
                    !a
                }
                S64::Brev => a.reverse_bits(),
                S64::Bfe(signed) => {
                    let c = sget(w, src[1]);
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
                        if signed && width < 64 {
                            (((x << (64 - width)) as i64) >> (64 - width)) as u64
                        } else {
                            x
                        }
                    };
                    w.scc = r != 0;
                    r
                }
                S64::Bfm => {
                    let (a, b) = (sget(w, src[0]) & 63, sget(w, src[1]) & 63);
                    ((1u64 << a) - 1) << b
                }
                S64::Bcnt1 | S64::Ff1 | S64::Flbit => {
                    let r = match op {
                        S64::Bcnt1 => {
                            w.scc = a != 0;
                            a.count_ones()
                        }
                        _ if a == 0 => u32::MAX,
                        S64::Ff1 => a.trailing_zeros(),
                        _ => a.leading_zeros(),
                    };
                    w.s[dst as usize] = r;
                    return Ok(());
                }
                S64::Cselect => {
                    let b = sget64(w, src[1]);
                    if w.scc {
                        a
                    } else {
                        b
                    }
                }
                S64::Lshl | S64::Lshr => {
                    let b = sget(w, src[1]) & 63;
                    let r = if op == S64::Lshl { a << b } else { a >> b };
                    w.scc = r != 0;
                    r
                }
                _ => {
                    let b = sget64(w, src[1]);
                    let r = match op {
                        S64::And => a & b,
                        S64::Or => a | b,
                        S64::Xor => a ^ b,
                        S64::AndN2 => a & !b,
                        S64::Nand => !(a & b),
                        S64::Nor => !(a | b),
                        S64::Xnor => !(a ^ b),
                        _ => a | !b,
                    };
                    w.scc = r != 0;
                    r
                }
            };
            sset64(w, dst, r);
        }
        Typed::SaveExec { op, dst, src } => {
            let (src, exec) = (sget64(w, src), w.exec());
            let new = save(op, src, exec);
            sset64(w, dst, exec);
            w.set_exec(new);
            w.scc = new != 0;
        }
        Typed::SaveExec32 { op, dst, src } => rdna::save_exec32(w, op, dst, src),
        Typed::Dual(ref d) => rdna::dual(w, d, ins, ctx)?,
        Typed::DsD16(ref x) => rdna::ds_d16(w, x, ctx)?,
        Typed::GlobalD16(ref x) => rdna::global_d16(w, &x.0, x.1, ctx)?,
        Typed::Permlane(ref p) => rdna::permlane(w, p)?,
        Typed::Mov16(ref m) => rdna::mov16(w, m)?,
        Typed::Salu12 { op, dst, src } => rdna::salu12(w, op, dst, src),
        Typed::Halt(state) => w.state = state,
        Typed::Mode(mode) => {
            let m0 = crate::decode::M0 as usize;
            match mode {
                Mode::On { src, mask } => {
                    let s0 = sget(w, src);
                    w.s[m0] = (w.s[m0] & !0xf0ff) | (s0 & 0xff) | mask << 12;
                    w.gpr_idx = true;
                }
                Mode::Off => w.gpr_idx = false,
                Mode::Index(src) => {
                    let s0 = sget(w, src);
                    w.s[m0] = (w.s[m0] & !0xff) | (s0 & 0xff);
                }
                Mode::Operands(mask) => w.s[m0] = (w.s[m0] & !0xf000) | mask << 12,
                Mode::Vskip([a, b]) => w.vskip = sget(w, a) >> (sget(w, b) & 31) & 1 != 0,
            }
        }
        Typed::Aperture { dst, private } => {
            let hi = if private {
                ctx.private_base_hi
            } else {
                ctx.shared_base_hi
            };
            sset64(w, dst, (hi as u64) << 32);
        }
        Typed::SmemWrite {
            atomic,
            dwords,
            data,
            base,
            soff,
            offset,
        } => {
            let off = soff.map_or(0, |o| sget(w, o) as u64).wrapping_add(offset);
            let addr = sget64(w, Opnd::S(base)).wrapping_add(off) & !3;
            let fault =
                |e: crate::memory::Unmapped| Stop::Fault(None, format!("scalar store/atomic: {e}"));
            let d = data as usize;
            match atomic {
                None => {
                    for k in 0..dwords as usize {
                        let at = addr + 4 * k as u64;
                        ctx.trace.note(0, Space::Scalar, AccessKind::Write, at, 4);
                        ctx.mem
                            .write(at, &w.s[d + k].to_le_bytes())
                            .map_err(fault)?;
                    }
                }
                Some((op, size, ret)) => {
                    let words = size as usize / 4;
                    let get = |at: usize| {
                        (0..words).fold(0u64, |v, k| v | (w.s[at + k] as u64) << (32 * k))
                    };
                    let src = get(d);
                    let cmp = if op == AtomicOp::CmpSwap {
                        get(d + words)
                    } else {
                        0
                    };
                    ctx.trace
                        .note(0, Space::Scalar, AccessKind::Atomic, addr, size as usize);
                    let old = ctx
                        .mem
                        .atomic(addr, size as usize, |o| atomic_el(op, size, o, src, cmp))
                        .map_err(fault)?;
                    if ret {
                        for k in 0..words {
                            w.s[d + k] = (old >> (32 * k)) as u32;
                        }
                    }
                }
            }
        }
        Typed::Trap => {
            return Err(Stop::Fault(
                None,
                format!(
                    "`{}`: the wave trapped (an assert or abort in the kernel)",
                    ins.text
                ),
            ))
        }
        Typed::F64(ref x) => f64_op(w, x, ins)?,
        Typed::Atomic(ref x) => atomic(w, x, ctx)?,
        Typed::FmaMix(ref x) => fma_mix(w, x)?,
        Typed::Scratch(ref x) => scratch(w, x, ctx)?,
        Typed::DsAtomic(ref x) => ds_atomic(w, x, ctx)?,
        Typed::DsReadTr {
            dst,
            addr,
            offset,
            bits,
        } => ds_read_tr(w, dst, addr, offset, bits, ctx)?,
        Typed::ReadLane { dst, src, lane } => {
            let exec = w.exec();
            let l = match lane {
                Some(o) => (sget(w, o) & (w.wave_size - 1)) as usize,
                None if exec == 0 => 0,
                None => exec.trailing_zeros() as usize,
            };
            w.s[dst as usize] = vrow(w, src.file, src.index)?[l];
        }
        Typed::WriteLane { dst, src, lane } => {
            let (v, l) = (sget(w, src), (sget(w, lane) & (w.wave_size - 1)) as usize);
            vrow_mut(w, dst)?[l] = v;
        }
        Typed::PermSwap { a, b, row32 } => {
            if w.exec() != u64::MAX {
                return Err(Stop::Unsupported(
                    "a partial exec (fetch-inactive and bound_ctrl are not modelled)".into(),
                ));
            }
            let (mut x, mut y) = (*vrow(w, a.file, a.index)?, *vrow(w, b.file, b.index)?);
            #[allow(clippy::needless_range_loop)] // the partner is another lane
            for lane in 0..LANES {
                let partner = if row32 {
                    (lane >= 32).then(|| lane - 32)
                } else {
                    (lane / 16 % 2 == 1).then(|| lane - 16)
                };
                if let Some(p) = partner {
                    std::mem::swap(&mut x[lane], &mut y[p]);
                }
            }
            *vrow_mut(w, a)? = x;
            *vrow_mut(w, b)? = y;
        }
        Typed::Smem {
            dst,
            dwords,
            base,
            soff,
            offset,
        } => {
            let off = soff.map_or(0, |o| sget(w, o) as u64).wrapping_add(offset);
            let addr = sget64(w, Opnd::S(base)).wrapping_add(off) & !3;
            let n = 4 * dwords as usize;
            let mut buf = [0u8; 64];
            ctx.trace.note(0, Space::Scalar, AccessKind::Read, addr, n);
            ctx.mem
                .read(addr, &mut buf[..n])
                .map_err(|e| Stop::Fault(None, format!("scalar load: {e}")))?;
            for (k, b) in buf[..n].chunks_exact(4).enumerate() {
                w.s[dst as usize + k] = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        Typed::SCmp { rel, ty, src } => {
            w.scc = compare(rel, ty, sget(w, src[0]), sget(w, src[1]));
        }
        Typed::Mfma(ref x) => mfma(w, x)?,
        Typed::MfmaX(ref x) => mfma_x(w, x, ctx.ocp_fp8)?,
        Typed::CvtPk { op, dst, src, byte } => cvt_pk(w, op, dst, src, byte, ctx.ocp_fp8)?,
        Typed::DsRead {
            dst,
            addr,
            offset,
            dwords,
        } => {
            let exec = w.exec();
            let size = 4 * dwords as usize;
            let at = *vrow(w, RegFile::V, addr)?;
            for q in 0..dwords as u16 {
                vrow_mut(
                    w,
                    VDst {
                        index: dst.index + q,
                        ..dst
                    },
                )?;
            }
            let mut out = [[0u32; LANES]; 4];
            for lane in 0..LANES {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let a = at[lane].wrapping_add(offset);
                ctx.trace
                    .note(lane, Space::Lds, AccessKind::Read, a as u64, size);
                let mut buf = [0u8; 16];
                let lds = &mut *ctx.lds;
                let end = a as usize + size;
                if end <= lds.data.len() {
                    buf[..size].copy_from_slice(&lds.data[a as usize..end]);
                } else {
                    lds.at_lane(lane);
                    lds.read_bytes(a, &mut buf[..size]);
                }
                for (q, o) in out.iter_mut().enumerate().take(dwords as usize) {
                    o[lane] =
                        u32::from_le_bytes(buf[4 * q..4 * q + 4].try_into().unwrap_or_default());
                }
            }
            for (q, o) in out.iter().enumerate().take(dwords as usize) {
                put(
                    vrow_mut(
                        w,
                        VDst {
                            index: dst.index + q as u16,
                            ..dst
                        },
                    )?,
                    o,
                    exec,
                );
            }
        }
        Typed::DsWrite {
            addr,
            data,
            offset,
            dwords,
        } => {
            let exec = w.exec();
            let size = 4 * dwords as usize;
            let at = *vrow(w, RegFile::V, addr)?;
            let mut rows = [[0u32; LANES]; 4];
            for (q, r) in rows.iter_mut().enumerate().take(dwords as usize) {
                *r = *vrow(w, data.file, data.index + q as u16)?;
            }
            for lane in 0..LANES {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let a = at[lane].wrapping_add(offset);
                let mut buf = [0u8; 16];
                for (q, r) in rows.iter().enumerate().take(dwords as usize) {
                    buf[4 * q..4 * q + 4].copy_from_slice(&r[lane].to_le_bytes());
                }
                ctx.trace
                    .note(lane, Space::Lds, AccessKind::Write, a as u64, size);
                let lds = &mut *ctx.lds;
                let end = a as usize + size;
                if end <= lds.data.len() {
                    lds.data[a as usize..end].copy_from_slice(&buf[..size]);
                } else {
                    lds.at_lane(lane);
                    lds.write_bytes(a, &buf[..size]);
                }
            }
        }
        Typed::DsNarrow {
            write,
            data,
            addr,
            offset,
            size,
            signed,
        } => {
            let exec = w.exec();
            let at = *vrow(w, RegFile::V, addr)?;
            let size = size as usize;
            let kind = if write {
                AccessKind::Write
            } else {
                AccessKind::Read
            };
            let mut row = *vrow_mut(w, data)?;
            for lane in 0..LANES {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let a = at[lane].wrapping_add(offset);
                ctx.trace.note(lane, Space::Lds, kind, a as u64, size);
                ctx.lds.at_lane(lane);
                if write {
                    ctx.lds.write_bytes(a, &row[lane].to_le_bytes()[..size]);
                } else {
                    let mut buf = [0u8; 4];
                    ctx.lds.read_bytes(a, &mut buf[..size]);
                    let v = u32::from_le_bytes(buf);
                    row[lane] = match (signed, size) {
                        (true, 1) => v as u8 as i8 as u32,
                        (true, _) => v as u16 as i16 as u32,
                        _ => v,
                    };
                }
            }
            if !write {
                *vrow_mut(w, data)? = row;
            }
        }
        Typed::Ds2 {
            write,
            data,
            addr,
            off,
            size,
        } => {
            let exec = w.exec();
            let at = *vrow(w, RegFile::V, addr)?;
            let size = size as usize;
            let words = size / 4;
            // The registers: data[0] then data[1], `words` each.
            let mut rows = [[0u32; LANES]; 4];
            for (q, row) in rows.iter_mut().enumerate().take(2 * words) {
                let d = data[q / words];
                *row = *vrow_mut(
                    w,
                    VDst {
                        index: d.index + (q % words) as u16,
                        ..d
                    },
                )?;
            }
            let kind = if write {
                AccessKind::Write
            } else {
                AccessKind::Read
            };
            for lane in 0..LANES {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let a = at[lane];
                for o in off {
                    let at = a.wrapping_add(o) as u64;
                    ctx.trace.note(lane, Space::Lds, kind, at, size);
                }
                ctx.lds.at_lane(lane);
                for (j, o) in off.iter().enumerate() {
                    let x = a.wrapping_add(*o);
                    if write {
                        let mut v = 0u64;
                        for k in 0..words {
                            v |= (rows[j * words + k][lane] as u64) << (32 * k);
                        }
                        ctx.lds.write(x, size, v);
                    } else {
                        let v = ctx.lds.read(x, size);
                        for k in 0..words {
                            rows[j * words + k][lane] = (v >> (32 * k)) as u32;
                        }
                    }
                }
            }
            if !write {
                for (q, row) in rows.iter().enumerate().take(2 * words) {
                    let d = data[q / words];
                    *vrow_mut(
                        w,
                        VDst {
                            index: d.index + (q % words) as u16,
                            ..d
                        },
                    )? = *row;
                }
            }
        }
        Typed::Pk(ref p) => pk(w, p)?,
        Typed::Sdwa(ref x) => sdwa(w, x)?,
        Typed::Fp8Cvt(ref x) => fp8_cvt(w, x, ctx.ocp_fp8)?,
        Typed::DsPermute {
            dst,
            addr,
            data,
            offset,
            back,
        } => ds_permute(w, dst, addr, data, offset, back)?,
        Typed::BufferAtomic(ref x) => {
            if w.s[x.srsrc as usize + 1] >> 31 != 0 {
                // Swizzled: the reference (which refuses it).
                return crate::exec::buffer(w, ins, ctx);
            }
            buffer_atomic(w, x, ctx)?;
        }
        Typed::Global(ref g) => global(w, g, ctx)?,
        Typed::Buffer(ref b) => {
            let v = &w.s[b.srsrc as usize..b.srsrc as usize + 4];
            // gfx1250's V# (`exec::Gfx1250Vsharp`) and, on other RDNA
            // targets, any V# but a raw buffer (OOB_SELECT 3, whose range
            // check is then CDNA's: `rdna::raw_buffer`) go to the reference.
            let plain = if w.numbering == crate::decode::Numbering::GFX1250 {
                false
            } else if w.rdna() {
                rdna::raw_buffer(w, v)
            } else {
                v[1] >> 31 == 0
            };
            if !plain {
                // Swizzled, the private segment buffer, or one of the
                // above: the reference.
                return crate::exec::buffer(w, ins, ctx);
            }
            buffer(w, b, ctx)?;
        }
        Typed::AddK { dst, imm } => {
            let (r, ov) = (w.s[dst as usize] as i32).overflowing_add(imm);
            w.scc = ov;
            w.s[dst as usize] = r as u32;
        }
    }
    Ok(())
}

fn lower_buffer_atomic(ins: &Instruction, kind: &str) -> Option<Typed> {
    let (kind, x2) = match kind.strip_suffix("_x2") {
        Some(k) => (k, true),
        None => (kind, false),
    };
    let (op, fixed) = AtomicOp::of(kind)?;
    let size = match (fixed, x2) {
        (Some(n), false) => n,
        (None, true) => 8,
        (None, false) => 4,
        (Some(_), true) => return None,
    };
    let (mut inst_off, mut ret, mut offen, mut idxen) = (0u64, false, false, false);
    for (k, v) in &ins.mods {
        match k.as_str() {
            "offen" => offen = true,
            "idxen" => idxen = true,
            "offset" => inst_off = crate::exec::parse_int(v).ok()? as u64,
            "glc" | "sc0" => ret = true,
            // Cache policy: no effect on what the emulator computes.
            "slc" | "sc1" | "nt" => {}
            _ => return None,
        }
    }
    let ops = &ins.ops;
    if ops.len() != 4 || ops.iter().any(|s| s.neg || s.abs || s.sext) {
        return None;
    }
    let data = vdst(&ops[0])?;
    let vaddr = match (offen || idxen, &ops[1].op) {
        (false, _) => None,
        (
            true,
            Operand::Reg {
                file: RegFile::V,
                index,
                count,
            },
        ) if *count > (offen && idxen) as u16 => Some(*index),
        _ => return None,
    };
    Some(Typed::BufferAtomic(Box::new(BufferAtomic {
        op,
        size,
        ret,
        data,
        vaddr,
        idxen,
        offen,
        srsrc: sgpr(&ops[2].op, 4)?,
        soffset: ssrc(&ops[3], 1)?,
        inst_off,
    })))
}

/// A MUBUF atomic, lane by lane in lane order, as the reference's
/// `buffer_atomic` makes it: a lane whose access is out of range returns 0.
fn buffer_atomic(w: &mut Wave, x: &BufferAtomic, ctx: &mut Ctx) -> R<()> {
    let v = &w.s[x.srsrc as usize..x.srsrc as usize + 4];
    let base = v[0] as u64 | ((v[1] & 0xffff) as u64) << 32;
    let stride = ((v[1] >> 16) & 0x3fff) as u64;
    let num_records = v[2] as u64;
    let soff = sget(w, x.soffset) as u64;
    let exec = w.exec();
    let words = x.size as u16 / 4;
    let (vidx, voff) = match (x.vaddr, x.idxen, x.offen) {
        (Some(r), true, true) => (*vrow(w, RegFile::V, r)?, *vrow(w, RegFile::V, r + 1)?),
        (Some(r), true, false) => (*vrow(w, RegFile::V, r)?, [0; LANES]),
        (Some(r), false, true) => ([0; LANES], *vrow(w, RegFile::V, r)?),
        _ => ([0; LANES], [0; LANES]),
    };
    let n = if x.op == AtomicOp::CmpSwap {
        2 * words
    } else {
        words
    };
    let mut data = [[0u32; LANES]; 4];
    for (k, row) in data.iter_mut().enumerate().take(n as usize) {
        *row = *vrow(w, x.data.file, x.data.index + k as u16)?;
    }
    let size = x.size as u64;
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let (vidx, offset) = (vidx[lane] as u64, voff[lane] as u64 + x.inst_off);
        let in_range = if stride == 0 || !x.idxen {
            offset + size <= num_records
        } else {
            vidx < num_records && offset + size <= stride
        };
        let (d, c) = (
            lane_value(&data, words, lane, 0),
            lane_value(&data, words, lane, words),
        );
        let old = if in_range {
            let a = base + soff + vidx * stride + offset;
            ctx.trace
                .note(lane, Space::Global, AccessKind::Atomic, a, x.size as usize);
            ctx.mem
                .atomic(a, x.size as usize, |o| atomic_el(x.op, x.size, o, d, c))
                .map_err(|e| {
                    Stop::Fault(
                        Some(lane as u32),
                        format!("buffer atomic within num_records: {e}"),
                    )
                })?
        } else {
            0
        };
        if x.ret {
            for k in 0..words {
                vrow_mut(
                    w,
                    VDst {
                        index: x.data.index + k,
                        ..x.data
                    },
                )?[lane] = (old >> (32 * k)) as u32;
            }
        }
    }
    Ok(())
}

/// A MUBUF access without `idxen` through a V# that is not swizzled, as
/// the reference executor makes it: each dword of a lane is range-checked
/// against `num_records` (a dword past it reads 0, its write is dropped).
fn buffer(w: &mut Wave, b: &Buffer, ctx: &mut Ctx) -> R<()> {
    let v = &w.s[b.srsrc as usize..b.srsrc as usize + 4];
    let base = v[0] as u64 | ((v[1] & 0xffff) as u64) << 32;
    let num_records = v[2] as u64;
    let soff = sget(w, b.soffset) as u64;
    let exec = w.exec();
    let size = 4 * b.dwords as usize;
    let voff = match b.voffset {
        Some(r) => *vrow(w, RegFile::V, r)?,
        None => [0; LANES],
    };
    let mut rows = [[0u32; LANES]; 4];
    if let Some(d) = b.data {
        for (q, row) in rows.iter_mut().enumerate().take(b.dwords as usize) {
            let index = d.index + q as u16;
            *row = *vrow_mut(w, VDst { index, ..d })?;
        }
    }
    let mem = ctx.mem.view();
    let m0 = w.m0();
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let offset = voff[lane] as u64 + b.inst_off;
        let addr0 = base + soff + offset;
        let mut buf = [0u8; 16];
        if b.store {
            for (q, r) in rows.iter().enumerate().take(b.dwords as usize) {
                buf[4 * q..4 * q + 4].copy_from_slice(&r[lane].to_le_bytes());
            }
        }
        let kind = if b.store {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        for k in (0..size).step_by(4) {
            if offset + k as u64 + 4 > num_records {
                continue;
            }
            let a = addr0 + k as u64;
            ctx.trace.note(lane, Space::Global, kind, a, 4);
            let r = if b.store {
                mem.write(a, &buf[k..k + 4])
            } else {
                mem.read(a, &mut buf[k..k + 4])
            };
            r.map_err(|e| {
                Stop::Fault(
                    Some(lane as u32),
                    format!(
                        "buffer {} within num_records: {e}",
                        if b.store { "store" } else { "load" }
                    ),
                )
            })?;
        }
        if b.lds {
            let a = m0
                .wrapping_add(b.inst_off as u32)
                .wrapping_add((lane * size) as u32);
            ctx.trace
                .note(lane, Space::Lds, AccessKind::Write, a as u64, size);
            ctx.lds.at_lane(lane);
            ctx.lds.write_bytes(a, &buf[..size]);
        } else if !b.store {
            for (q, r) in rows.iter_mut().enumerate().take(b.dwords as usize) {
                r[lane] = u32::from_le_bytes(buf[4 * q..4 * q + 4].try_into().unwrap_or_default());
            }
        }
    }
    drop(mem);
    if let (Some(d), false) = (b.data, b.store) {
        for (q, r) in rows.iter().enumerate().take(b.dwords as usize) {
            *vrow_mut(
                w,
                VDst {
                    index: d.index + q as u16,
                    ..d
                },
            )? = *r;
        }
    }
    Ok(())
}

fn write64(w: &mut Wave, dst: VDst, r: &Lanes64, exec: u64) -> R<()> {
    let lo: Lanes = r.map(|v| v as u32);
    let hi: Lanes = r.map(|v| (v >> 32) as u32);
    put(vrow_mut(w, dst)?, &lo, exec);
    put(
        vrow_mut(
            w,
            VDst {
                file: dst.file,
                index: dst.index + 1,
            },
        )?,
        &hi,
        exec,
    );
    Ok(())
}

/// Which of `program`'s instructions lower, by index (hidden: for tests
/// and the speed bench's instruction mix).
#[doc(hidden)]
pub fn lowered(program: &Program) -> Vec<bool> {
    lower_all(program).iter().map(|t| t.is_some()).collect()
}

/// A wave state for [`differential`] (hidden: for tests): random
/// registers from `seed`, some of them small integers, ordinary floats and
/// special values (0, all ones, sign bit, infinity, NaN).
#[doc(hidden)]
#[doc(hidden)]
pub fn random_wave(seed: u64) -> Wave {
    let mut rng = crate::launch::SplitMix64(seed);
    let value = |rng: &mut crate::launch::SplitMix64| -> u32 {
        let r = rng.next_u64();
        match r % 8 {
            0 => (r >> 8) as u32 % 64,
            1 => (((r >> 8) as u32 % 2000) as f32).to_bits() ^ ((r >> 40) as u32 & 1) << 31,
            2 => (((r >> 8) % 1000) as f32 / 7.0).to_bits(),
            3 => [
                0,
                u32::MAX,
                0x8000_0000,
                0x7fff_ffff,
                0x7f80_0000,
                0x7fc0_0000,
            ][(r >> 8) as usize % 6],
            _ => (r >> 16) as u32,
        }
    };
    // A unified file of 512 registers, the AGPRs from v128 on: `a[i]` is
    // `v[128 + i]`, so `v128`-`v255` (an instruction names at most v255)
    // are `a0`-`a127`, the same registers under both names.
    let mut w = Wave::unified(512, 128);
    for s in w.s.iter_mut() {
        *s = value(&mut rng);
    }
    for r in w.v.iter_mut() {
        for x in r.iter_mut() {
            *x = value(&mut rng);
        }
    }
    w
}

/// Point the address registers of memory operation `t` into the
/// allocation at `base` (64 KiB): each lane (or the scalar base) a random
/// address in its middle half, so that every offset the encodings hold
/// stays inside.
fn aim(w: &mut Wave, t: &Typed, base: u64, rng: &mut crate::launch::SplitMix64) {
    let at = |rng: &mut crate::launch::SplitMix64| base + 16384 + rng.next_u64() % 32768;
    let pair = |w: &mut Wave, s: u16, v: u64| {
        if let Some(p) = w.s.get_mut(s as usize..s as usize + 2) {
            p[0] = v as u32;
            p[1] = (v >> 32) as u32;
        }
    };
    match t {
        Typed::Smem { base: b, soff, .. } | Typed::SmemWrite { base: b, soff, .. } => {
            let a = at(rng);
            pair(w, *b, a);
            if let Some(Opnd::S(o)) = soff {
                if let Some(x) = w.s.get_mut(*o as usize) {
                    *x %= 4096;
                }
            }
        }
        Typed::Atomic(x) => {
            aim_vector(w, x.vaddr, x.saddr, x.signed_voffset, base, rng);
            if x.flat {
                aim_flat(w, x.vaddr, false, rng);
            }
        }
        // 16 KiB of private memory a lane with a pattern, addresses in its
        // first half.
        Typed::Scratch(x) => {
            w.set_private(16384);
            for (i, b) in w.private.iter_mut().enumerate() {
                *b = (i as u32).wrapping_mul(2_654_435_761) as u8;
            }
            if let Some(r) = x.vaddr.and_then(|i| w.v.get_mut(i as usize)) {
                for v in r.iter_mut() {
                    *v = (rng.next_u64() % 4096) as u32;
                }
            }
            if let Some(Opnd::S(i)) = x.saddr {
                if let Some(v) = w.s.get_mut(i as usize) {
                    *v = (rng.next_u64() % 4096) as u32;
                }
            }
        }
        // LDS addresses inside its 64 KiB, sometimes one of four (lanes
        // meet).
        Typed::DsAtomic(_) | Typed::DsReadTr { .. } => {
            let addr = match t {
                Typed::DsAtomic(x) => x.vaddr,
                Typed::DsReadTr { addr, .. } => *addr,
                _ => return,
            };
            let few = rng.next_u64() & 1 == 0;
            let spots: [u32; 4] = std::array::from_fn(|_| (rng.next_u64() % 32768) as u32 & !7);
            if let Some(r) = w.v.get_mut(addr as usize) {
                for x in r.iter_mut() {
                    *x = if few {
                        spots[rng.next_u64() as usize % 4]
                    } else {
                        (rng.next_u64() % 32768) as u32
                    };
                }
            }
        }
        // A V# over the 64 KiB (stride 0 or 16, 32 KiB of records), small
        // offsets and indices: some lanes past the records.
        Typed::BufferAtomic(x) => {
            let stride = if rng.next_u64() & 1 == 0 { 0 } else { 16 };
            if let Some(v) = w.s.get_mut(x.srsrc as usize..x.srsrc as usize + 4) {
                v[0] = base as u32;
                v[1] = (base >> 32) as u32 & 0xffff | stride << 16;
                v[2] = 32768;
            }
            if let Opnd::S(i) = x.soffset {
                if let Some(v) = w.s.get_mut(i as usize) {
                    *v = (rng.next_u64() % 4096) as u32;
                }
            }
            if let Some(r) = x.vaddr {
                for (k, i) in [r, r + 1].into_iter().enumerate() {
                    let span = if k == 0 && x.idxen { 3000 } else { 40000 };
                    if let Some(row) = w.v.get_mut(i as usize) {
                        for v in row.iter_mut() {
                            *v = (rng.next_u64() % span) as u32 & !7;
                        }
                    }
                }
            }
        }
        Typed::Global(g) => {
            aim_vector(w, g.vaddr, g.saddr, g.signed_voffset, base, rng);
            if g.flat {
                aim_flat(w, g.vaddr, true, rng);
            }
        }
        _ => {}
    }
}

/// A flat access's lanes: about a third pointed into the LDS aperture
/// (the differential's 64 KiB), and with `private` a third into the private
/// one (16 KiB a lane with a pattern); the others keep their global address.
fn aim_flat(w: &mut Wave, vaddr: u16, private: bool, rng: &mut crate::launch::SplitMix64) {
    if private {
        w.set_private(16384);
        for (i, b) in w.private.iter_mut().enumerate() {
            *b = (i as u32).wrapping_mul(2_654_435_761) as u8;
        }
    }
    let i = vaddr as usize;
    if i + 1 >= w.v.len() {
        return;
    }
    for l in 0..LANES {
        let (hi, lo) = match rng.next_u64() % 3 {
            0 => (crate::dispatch::SHARED_BASE_HI, rng.next_u64() % 32768),
            1 if private => (crate::dispatch::PRIVATE_BASE_HI, rng.next_u64() % 4096),
            _ => continue,
        };
        w.v[i][l] = lo as u32;
        w.v[i + 1][l] = hi;
    }
}

/// [`aim`] for a vector address (`vaddr`, with `saddr` an offset). With
/// `signed` (gfx1250's sign-extended offset), half the time the SGPR base
/// lies above every lane's address, so that each lane's offset is negative.
fn aim_vector(
    w: &mut Wave,
    vaddr: u16,
    saddr: Option<u16>,
    signed: bool,
    base: u64,
    rng: &mut crate::launch::SplitMix64,
) {
    let at = |rng: &mut crate::launch::SplitMix64| base + 16384 + rng.next_u64() % 32768;
    let pair = |w: &mut Wave, s: u16, v: u64| {
        if let Some(p) = w.s.get_mut(s as usize..s as usize + 2) {
            p[0] = v as u32;
            p[1] = (v >> 32) as u32;
        }
    };
    // Sometimes one of 4 addresses per lane, so that lanes meet (atomics
    // in lane order).
    let few = rng.next_u64() & 1 == 0;
    let spots: [u64; 4] = std::array::from_fn(|_| at(rng) & !7);
    // With an SGPR base: base + [0, 8 KiB), lane offsets 8 KiB + [0, 32
    // KiB).
    let mut sbase = base + rng.next_u64() % 8192;
    let below = signed && rng.next_u64() & 1 == 0;
    if below {
        sbase = base + 49152 + rng.next_u64() % 8192;
    }
    if let Some(s) = saddr {
        pair(w, s, sbase);
    }
    for lane in 0..LANES {
        let a = if few {
            spots[rng.next_u64() as usize % 4]
        } else {
            at(rng)
        };
        let (lo, hi) = match saddr {
            Some(_) if below => (a.wrapping_sub(sbase) as u32, None),
            Some(_) => ((a - 8192 - base) as u32, None),
            None => (a as u32, Some((a >> 32) as u32)),
        };
        if let Some(r) = w.v.get_mut(vaddr as usize) {
            r[lane] = lo;
        }
        if let (Some(hi), Some(r)) = (hi, w.v.get_mut(vaddr as usize + 1)) {
            r[lane] = hi;
        }
    }
}

/// Differential check of instruction `index` of `program` (hidden: for
/// tests). From `state` (see [`random_wave`]) with an exec mask and scc
/// drawn from `seed`, run the instruction on the reference executor and, if
/// it lowers, on the typed one, and compare every register, scc, the
/// program counter and the wave's state. `Ok(false)`: it does not lower;
/// `Err`: the executors disagree (what differs).
#[doc(hidden)]
#[doc(hidden)]
pub fn differential(
    program: &Program,
    index: usize,
    state: &Wave,
    seed: u64,
) -> Result<bool, String> {
    let ins = &program.instructions[index];
    // Lowered for the state's wave: its numbering and lanes (an RDNA
    // program is the executor's renamed copy, `crate::rdna::executable`).
    let shape = Shape {
        numbering: state.numbering,
        wave32: state.wave_size == 32,
    };
    let Some(t) = rdna::lower_for(ins, program, shape) else {
        return Ok(false);
    };
    let mut rng = crate::launch::SplitMix64(seed);
    let mut w = state.clone();
    // `null` reads 0: no write ever reaches it.
    if let Some(n) = w.numbering.null {
        w.s[n as usize] = 0;
    }
    w.scc = rng.next_u64() & 1 != 0;
    let mask = match rng.next_u64() % 4 {
        0 => u64::MAX,
        1 => 0,
        _ => rng.next_u64(),
    };
    w.set_exec(mask);
    w.pc = index;
    // Global memory: 64 KiB with a pattern, the same in two address spaces
    // (one per executor). For half the seeds a memory instruction's address
    // registers are pointed into it (else they are random and both
    // executors fault).
    // (Only for memory operations: the allocation is most of a run's
    // time in a debug build.)
    let memory = || {
        let mem = crate::memory::Memory::new();
        if !t.memory() {
            return (mem, 0);
        }
        thread_local! {
            static BYTES: Vec<u8> = (0..1u32 << 16)
                .map(|i| (i.wrapping_mul(2_246_822_519) >> 13) as u8)
                .collect();
        }
        let base = BYTES.with(|b| mem.alloc_bytes("differential", b));
        (mem, base)
    };
    let (mem, base) = memory();
    let (mem_typed, _) = memory();
    if rng.next_u64() & 1 == 0 {
        aim(&mut w, &t, base, &mut rng);
    }
    // 64 KiB of LDS with a pattern; addresses past it read 0 on both.
    // (Made once: filling it per run was most of the differential test's
    // time in a debug build.)
    thread_local! {
        static LDS: crate::memory::Lds = {
            let mut lds = crate::memory::Lds::new(65536);
            for (i, b) in lds.data.iter_mut().enumerate() {
                *b = (i as u32).wrapping_mul(2_654_435_761) as u8;
            }
            lds
        };
    }
    let mut lds = LDS.with(|p| p.clone());
    let mut lds_ref = lds.clone();
    let mut reference = w.clone();
    // One context: the reference runs on `lds_ref`, the typed operation on
    // `lds`, each from the same contents.
    let mut ctx = Ctx {
        program,
        mem: &mem,
        lds: &mut lds_ref,
        shared_base_hi: crate::dispatch::SHARED_BASE_HI,
        private_base_hi: crate::dispatch::PRIVATE_BASE_HI,
        ocp_fp8: false,
        trace: Default::default(),
        observer: None,
        typed: &[],
    };
    let got_ref = crate::exec::step(&mut reference, ins, &mut ctx);
    ctx.lds = &mut lds;
    ctx.mem = &mem_typed;
    ctx.trace = Default::default();
    w.executed += 1;
    w.pc = index + 1;
    let got = exec(&mut w, &t, ins, &mut ctx);
    let what = |s: String| format!("`{}` (seed {seed}, exec {mask:#x}): {s}", ins.text);
    match (got_ref, got) {
        (Ok(()), Ok(())) => {}
        (Err(Stop::Fault(..)), Err(Stop::Fault(..))) => return Ok(true),
        (Err(Stop::Unsupported(a)), Err(Stop::Unsupported(b))) if a == b => return Ok(true),
        (r, t) => return Err(what(format!("reference {r:?}, typed {t:?}"))),
    }
    if reference.s != w.s {
        let i = (0..128).find(|&i| reference.s[i] != w.s[i]).unwrap_or(0);
        return Err(what(format!(
            "s{i}: reference {:#x}, typed {:#x}",
            reference.s[i], w.s[i]
        )));
    }
    if lds_ref.data != lds.data || lds_ref.out_of_range != lds.out_of_range {
        return Err(what("LDS contents or out-of-range count differ".into()));
    }
    let (m_ref, m_typed) = (mem.contents(base), mem_typed.contents(base));
    if m_ref != m_typed {
        let (x, y) = (m_ref.unwrap_or_default(), m_typed.unwrap_or_default());
        let i = (0..x.len()).find(|&i| x.get(i) != y.get(i)).unwrap_or(0);
        return Err(what(format!(
            "global memory byte {i} of 64 KiB: reference {:x?}, typed {:x?}",
            x.get(i & !3..(i & !3) + 4),
            y.get(i & !3..(i & !3) + 4)
        )));
    }
    if reference.private != w.private {
        return Err(what("private (scratch) memory differs".into()));
    }
    if reference.scc != w.scc {
        return Err(what(format!(
            "scc: reference {}, typed {}",
            reference.scc, w.scc
        )));
    }
    if (reference.v.len(), reference.accum) != (w.v.len(), w.accum) {
        return Err(what("the register file's shape differs".into()));
    }
    // Whole registers compared first (a lane search per register was most
    // of the differential test's time in a debug build). The unified file:
    // row `accum + i` is `a[i]`, named as the VGPR it also is.
    for (i, (x, y)) in reference
        .v
        .iter()
        .zip(w.v.iter())
        .enumerate()
        .filter(|(_, (x, y))| x != y)
    {
        if let Some(l) = (0..LANES).find(|&l| x[l] != y[l]) {
            let alias = i
                .checked_sub(w.accum)
                .map(|a| format!(" (a{a})"))
                .unwrap_or_default();
            return Err(what(format!(
                "v{i}{alias} lane {l}: reference {:#x}, typed {:#x}",
                x[l], y[l]
            )));
        }
    }
    if (
        reference.pc,
        reference.last_branch,
        reference.state,
        reference.executed,
    ) != (w.pc, w.last_branch, w.state, w.executed)
        || (reference.gpr_idx, reference.vskip) != (w.gpr_idx, w.vskip)
    {
        return Err(what(format!(
            "pc/branch/state/modes: reference {:?}, typed {:?}",
            (
                reference.pc,
                reference.last_branch,
                reference.state,
                reference.executed,
                reference.gpr_idx,
                reference.vskip
            ),
            (w.pc, w.last_branch, w.state, w.executed, w.gpr_idx, w.vskip)
        )));
    }
    Ok(true)
}
