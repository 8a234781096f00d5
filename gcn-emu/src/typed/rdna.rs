//! The typed engine on RDNA (gfx11, gfx12, gfx1250; wave32 and wave64).
//!
//! An RDNA dispatch lowers the program the executor runs, whose mnemonics
//! went through [`crate::rdna::ALIASES`] (so `v_add_nc_u32` lowers as
//! `v_add_u32`), for the wave's [`Shape`]: its SGPR numbering and lanes.
//! The lane loops are the wave64 ones: in wave32 the exec mask has no bit
//! past 31, so lanes 32–63 are never written, and a lane mask (a compare's
//! result, a carry, `v_cndmask`'s mask) is one SGPR (`set_mask`,
//! `get_mask`). What RDNA changes beyond names is lowered here or left to
//! the reference executor:
//! - gfx11+'s `null` (SGPR 124; `m0` is 125, which the decoder already
//!   resolved): read as the constant 0; a lane mask written to it is
//!   dropped ([`DROP`]); any other use runs on the reference executor;
//! - VOPD pairs ([`Dual`]): both halves lowered, both read before either
//!   writes; wave32 only, as the reference refuses them in wave64;
//! - DPP: gfx10+'s controls (`row_share`, `row_xmask`; no wave shifts or
//!   row broadcasts) and DPP8 ([`dpp8`]);
//! - wave32's `s_<op>_saveexec_b32`, gfx12's split waits and
//!   `s_barrier_signal`/`s_barrier_wait` of the workgroup barrier, gfx12's
//!   float and 64-bit scalar ALU ([`Salu12`]), cache invalidations;
//! - `v_permlane16_b32`/`v_permlanex16_b32` ([`Permlane`]);
//! - the d16 loads RDNA code uses (`ds_load_u16_d16[_hi]`,
//!   `global_load_d16[_hi]_b16`, …);
//! - buffer accesses through a raw V# (OOB_SELECT 3, whose range check is
//!   CDNA's `offset + size <= num_records`); any other V# runs on the
//!   reference executor at run time.
//!
//! Not lowered (the reference executor runs them): WMMA/SWMMAC, true16
//! operands (`v9.l`/`v9.h`), VOP3 DPP, `ds_bpermute_b32`, `ds_swizzle_b32`,
//! DPP with `fi:1`.

use super::*;
use crate::decode::Numbering;

/// The SGPR index of a dropped lane-mask destination (`null`): past the
/// file, so `set_mask` writes nothing.
pub(crate) const DROP: u16 = u16::MAX;

/// The wave a program is lowered for: its SGPR numbering (where `m0` and
/// `null` are; RDNA has `null`) and whether it has 32 lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The target's SGPR numbering.
    pub numbering: Numbering,
    /// A wave32 wave (RDNA).
    pub wave32: bool,
}

impl Shape {
    /// CDNA (gfx9): wave64, no `null`.
    pub const GFX9: Shape = Shape {
        numbering: Numbering::GFX9,
        wave32: false,
    };

    /// The shape of `processor`'s waves of `wave_size` lanes.
    pub fn of(processor: &str, wave_size: u32) -> Shape {
        Shape {
            numbering: Numbering::of(processor),
            wave32: wave_size == 32,
        }
    }
}

/// Lower every instruction of `program` for waves of `shape` (`None`: it
/// runs on the reference executor). On RDNA, `program` is the executor's
/// renamed copy ([`crate::rdna::executable`]).
pub(crate) fn lower_all_for(program: &Program, shape: Shape) -> Vec<Option<Typed>> {
    program
        .instructions
        .iter()
        .map(|i| lower_for(i, program, shape))
        .collect()
}

/// Which of `program`'s instructions lower for `processor`'s waves of
/// `wave_size` lanes, by index (hidden: for tests and the speed bench; an
/// RDNA program as [`crate::rdna::executable`] renames it).
#[doc(hidden)]
pub fn lowered_for(program: &Program, processor: &str, wave_size: u32) -> Vec<bool> {
    lower_all_for(program, Shape::of(processor, wave_size))
        .iter()
        .map(|t| t.is_some())
        .collect()
}

/// Lower one instruction for `shape`.
pub(crate) fn lower_for(ins: &Instruction, program: &Program, shape: Shape) -> Option<Typed> {
    let null = shape.numbering.null;
    if let Some(y) = ins.dual.as_deref() {
        return match null {
            Some(n) if shape.wave32 => lower_dual(ins, y, program, n),
            _ => None,
        };
    }
    let mut t = lower(ins, program)?;
    // gfx1250 sign-extends GLOBAL's `saddr` VGPR offset (LLVM's
    // GCNSubtarget.h `hasSignedGVSOffset`: "FLAT GLOBAL VOffset is signed",
    // gfx1250 only; rocjitsu's `flat_global_calculate_addresses`); gfx9–gfx12
    // zero-extend it.
    if shape.numbering == crate::decode::Numbering::GFX1250 {
        match &mut t {
            Typed::Global(g) => g.signed_voffset = true,
            Typed::GlobalD16(g) => g.0.signed_voffset = true,
            Typed::Atomic(x) => x.signed_voffset = true,
            _ => {}
        }
    }
    match null {
        None => Some(t),
        Some(n) => on_rdna(t, ins, n),
    }
}

/// The DPP controls gfx10+ has (the reference executor's list): quad
/// permutes, row shifts and rotates, mirrors, `row_share`, `row_xmask`.
fn rdna_dpp_ctrl(ctrl: u32) -> bool {
    matches!(ctrl, 0..=0xff | 0x101..=0x10f | 0x111..=0x11f | 0x121..=0x12f | 0x140 | 0x141 | 0x150..=0x16f)
}

/// `t`, lowered from `ins`, made an RDNA operation: `null` (SGPR `null`)
/// read as 0 and a lane mask written to it dropped; `None` for what RDNA
/// runs otherwise, and for any operation not listed here.
fn on_rdna(mut t: Typed, ins: &Instruction, null: u16) -> Option<Typed> {
    match &t {
        // gfx9's own (RDNA's matrix and lane-swap instructions are others).
        Typed::PermSwap { .. } | Typed::DsReadTr { .. } | Typed::Mfma(_) => return None,
        Typed::V32 { dpp: Some(d), .. }
            if !d.strict && !rdna_dpp_ctrl(ins.words.get(1)? >> 8 & 0x1ff) =>
        {
            return None;
        }
        _ => {}
    }
    // Only the operations checked against the reference on RDNA (the
    // differential test's RDNA corpus and tails) run typed there: one
    // added to `lower` later stays on the reference executor on RDNA until
    // it is listed here.
    let z = |o: &mut Opnd| {
        if *o == Opnd::S(null) {
            *o = Opnd::Imm(0);
        }
    };
    let drop = |d: &mut u16| {
        if *d == null {
            *d = DROP;
        }
    };
    let not = |first: u16, n: u16| null < first || null >= first + n;
    let ok = match &mut t {
        Typed::Nop | Typed::Halt(_) | Typed::Branch { .. } => true,
        Typed::V32 { src, .. } | Typed::V64 { src, .. } => {
            src.iter_mut().for_each(z);
            true
        }
        Typed::Carry { sdst, src, cin, .. } => {
            src.iter_mut().for_each(z);
            drop(sdst);
            cin.is_none_or(|c| c != null)
        }
        Typed::DivScale { sdst, src, .. } => {
            src.iter_mut().for_each(z);
            drop(sdst);
            true
        }
        Typed::Cndmask { src, mask, .. } => {
            src.iter_mut().for_each(z);
            *mask != null
        }
        Typed::Cmp { src, sdst, .. } => {
            src.iter_mut().for_each(z);
            if *sdst == Some(null) {
                *sdst = None;
            }
            true
        }
        Typed::S32 { dst, src, .. } => {
            src.iter_mut().for_each(z);
            *dst != null
        }
        Typed::S64 { dst, src, .. } => {
            src.iter_mut().for_each(z);
            not(*dst, 2)
        }
        Typed::AddK { dst, .. } => *dst != null,
        Typed::SCmp { src, .. } => {
            src.iter_mut().for_each(z);
            true
        }
        Typed::SaveExec { dst, src, .. } => {
            z(src);
            not(*dst, 2)
        }
        Typed::SaveExec32 { dst, src, .. } => {
            z(src);
            *dst != null
        }
        Typed::Salu12 { dst, src, .. } => {
            src.iter_mut().for_each(z);
            not(*dst, 2)
        }
        Typed::F64(x) => {
            x.src.iter_mut().for_each(z);
            if x.sdst == Some(null) {
                x.sdst = None;
            }
            true
        }
        Typed::FmaMix(x) => {
            x.src.iter_mut().for_each(z);
            true
        }
        Typed::Pk(x) => {
            x.src.iter_mut().for_each(z);
            true
        }
        Typed::Smem {
            dst,
            dwords,
            base,
            soff,
            ..
        } => {
            if let Some(o) = soff {
                z(o);
            }
            not(*dst, *dwords as u16) && not(*base, 2)
        }
        Typed::Buffer(b) => {
            z(&mut b.soffset);
            not(b.srsrc, 4)
        }
        Typed::Scratch(x) => {
            if let Some(o) = &mut x.saddr {
                z(o);
            }
            true
        }
        Typed::ReadLane { dst, lane, .. } => {
            if let Some(o) = lane {
                z(o);
            }
            *dst != null
        }
        Typed::WriteLane { src, lane, .. } => {
            z(src);
            z(lane);
            true
        }
        Typed::Global(g) => g.saddr != Some(null),
        Typed::GlobalD16(g) => g.0.saddr != Some(null),
        Typed::Atomic(x) => x.saddr != Some(null),
        Typed::DsRead { .. }
        | Typed::DsWrite { .. }
        | Typed::DsNarrow { .. }
        | Typed::Ds2 { .. }
        | Typed::DsAtomic(_)
        | Typed::DsD16(_)
        | Typed::Permlane(_)
        | Typed::Mov16(_) => true,
        // Anything else: the reference executor.
        _ => false,
    };
    ok.then_some(t)
}

/// A VOPD pair ([`Typed::Dual`]), as the reference's `vopd` runs it: X,
/// then Y, which reads X's destination (`xd`) as it was before X when
/// `y_reads_xd`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dual {
    x: Typed,
    y: Typed,
    xd: u16,
    y_reads_xd: bool,
}

fn lower_dual(x: &Instruction, y: &Instruction, program: &Program, null: u16) -> Option<Typed> {
    let (xh, yh, xd) = crate::exec::vopd_halves(x, y).ok()?;
    let tx = on_rdna(lower(&xh, program)?, &xh, null)?;
    let ty = on_rdna(lower(&yh, program)?, &yh, null)?;
    Some(Typed::Dual(Box::new(Dual {
        x: tx,
        y: ty,
        xd: u16::try_from(xd).ok()?,
        y_reads_xd: crate::exec::reads_vgpr(&yh, xd),
    })))
}

/// Run a VOPD pair.
pub(super) fn dual(w: &mut Wave, d: &Dual, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let xd = VDst {
        file: RegFile::V,
        index: d.xd,
    };
    let before = *vrow(w, RegFile::V, d.xd)?;
    exec(w, &d.x, ins, ctx)?;
    if d.y_reads_xd {
        let after = std::mem::replace(vrow_mut(w, xd)?, before);
        exec(w, &d.y, ins, ctx)?;
        *vrow_mut(w, xd)? = after;
        Ok(())
    } else {
        exec(w, &d.y, ins, ctx)
    }
}

/// DPP8's lanes: lane `l` reads lane `sel[l % 8]` of its group of 8, the
/// selects 3 bits each in the DPP word's bits 8–31 (as the reference).
pub(super) fn dpp8(word: u32) -> Dpp {
    let sel = word >> 8;
    Dpp {
        from: std::array::from_fn(|lane| {
            (lane / 8 * 8 + (sel >> (3 * (lane % 8)) & 7) as usize) as u8
        }),
        bound_ctrl: false,
        enabled: u64::MAX,
        strict: true,
    }
}

/// Whether an active lane of a DPP8 operation reads an inactive one.
pub(super) fn dpp8_inactive(d: &Dpp, exec: u64) -> bool {
    (0..LANES).any(|l| exec >> l & 1 != 0 && exec >> d.from[l] & 1 == 0)
}

/// The scalar operations of RDNA lowered here: `Some(None)` when the
/// instruction is one of them in a form not modelled.
pub(super) fn lower_scalar(ins: &Instruction) -> Option<Option<Typed>> {
    let m = ins.mnemonic.as_str();
    if let Some(t) = lower_salu12(ins) {
        return Some(t);
    }
    Some(match m {
        // gfx12's split waits and ALU waits: the emulator's memory
        // instructions complete in order (the reference's no-ops).
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
        | "s_wait_event" => Some(Typed::Nop),
        "s_sendmsg" if ins.text.contains("MSG_DEALLOC_VGPRS") => Some(Typed::Nop),
        // The workgroup barrier (-1): signal, then wait.
        "s_barrier_signal" | "s_barrier_wait" => match ins.ops.first().map(|s| &s.op) {
            Some(Operand::Int(id)) if *id as i16 == -1 && ins.ops.len() == 1 => {
                Some(if m == "s_barrier_wait" {
                    Typed::Halt(crate::exec::WaveState::Barrier)
                } else {
                    Typed::Nop
                })
            }
            _ => None,
        },
        _ => {
            let kind = m.strip_suffix("_saveexec_b32")?;
            let op = save_op(kind)?;
            let ops = &ins.ops;
            if ops.len() != 2 || !ins.mods.is_empty() {
                return Some(None);
            }
            (|| {
                Some(Typed::SaveExec32 {
                    op,
                    dst: sgpr(&ops[0].op, 1)?,
                    src: ssrc(&ops[1], 1)?,
                })
            })()
        }
    })
}

/// `s_<op>_saveexec_b32` as the reference runs it: `exec_lo` to the SGPR,
/// exec to op(source, exec) in 32 bits.
pub(super) fn save_exec32(w: &mut Wave, op: SaveOp, dst: u16, src: Opnd) {
    let exec = w.exec();
    let new = save(op, sget(w, src) as u64, exec) & 0xffff_ffff;
    w.s[dst as usize] = exec as u32;
    w.set_exec(new);
    w.scc = new != 0;
}

/// `ds_read_{u8,i8,u16}_d16[_hi]` ([`Typed::DsD16`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct D16 {
    data: VDst,
    addr: u16,
    offset: u32,
    size: u8,
    signed: bool,
    hi: bool,
}

/// The halves of a d16 load's kind (`u16_d16_hi` → (`u16`, high)).
fn d16_kind(kind: &str) -> Option<(&str, bool)> {
    match kind.strip_suffix("_d16_hi") {
        Some(k) => Some((k, true)),
        None => Some((kind.strip_suffix("_d16")?, false)),
    }
}

pub(super) fn lower_ds_d16(ins: &Instruction, word: u32) -> Option<Typed> {
    let (kind, hi) = d16_kind(ins.mnemonic.strip_prefix("ds_read_")?)?;
    let (size, signed) = match kind {
        "u8" => (1, false),
        "i8" => (1, true),
        "u16" => (2, false),
        _ => return None,
    };
    let ops = &ins.ops;
    if ins.mods.iter().any(|(k, _)| k != "offset") || ops.len() != 2 {
        return None;
    }
    Some(Typed::DsD16(Box::new(D16 {
        data: vdst(&ops[0])?,
        addr: vgpr(&ops[1])?,
        offset: word & 0xffff,
        size,
        signed,
        hi,
    })))
}

/// The 16 bits of a d16 load put into a register's half (`hi`), the other
/// half kept.
#[inline]
fn half_into(old: u32, v: u32, hi: bool) -> u32 {
    if hi {
        (old & 0xffff) | v << 16
    } else {
        (old & 0xffff_0000) | (v & 0xffff)
    }
}

pub(super) fn ds_d16(w: &mut Wave, x: &D16, ctx: &mut Ctx) -> R<()> {
    let exec = w.exec();
    let at = *vrow(w, RegFile::V, x.addr)?;
    let size = x.size as usize;
    let mut row = *vrow_mut(w, x.data)?;
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = at[lane].wrapping_add(x.offset);
        ctx.trace
            .note(lane, Space::Lds, AccessKind::Read, a as u64, size);
        ctx.lds.at_lane(lane);
        let mut buf = [0u8; 4];
        ctx.lds.read_bytes(a, &mut buf[..size]);
        let mut v = u32::from_le_bytes(buf);
        if x.signed {
            v = v as u8 as i8 as u32 & 0xffff;
        }
        row[lane] = half_into(row[lane], v, x.hi);
    }
    *vrow_mut(w, x.data)? = row;
    Ok(())
}

/// `global_load_{ubyte,sbyte,short}_d16[_hi]`: [`Typed::GlobalD16`].
pub(super) fn lower_global_d16(ins: &Instruction) -> Option<Typed> {
    let (kind, hi) = d16_kind(ins.mnemonic.strip_prefix("global_load_")?)?;
    let whole = match kind {
        "ubyte" => "global_load_ubyte",
        "sbyte" => "global_load_sbyte",
        "short" => "global_load_ushort",
        _ => return None,
    };
    let mut plain = ins.clone();
    plain.set_mnemonic(whole);
    match lower_global(&plain)? {
        Typed::Global(g) => Some(Typed::GlobalD16(Box::new((*g, hi)))),
        _ => None,
    }
}

pub(super) fn global_d16(w: &mut Wave, g: &Global, hi: bool, ctx: &mut Ctx) -> R<()> {
    let old = *vrow(w, g.data.file, g.data.index)?;
    global(w, g, ctx)?;
    let exec = w.exec();
    let row = vrow_mut(w, g.data)?;
    for l in 0..LANES {
        row[l] = if exec >> l & 1 != 0 {
            half_into(old[l], row[l], hi)
        } else {
            old[l]
        };
    }
    Ok(())
}

/// Whether an RDNA buffer access through the V# `v` is one the typed
/// engine makes: a raw buffer (OOB_SELECT 3: `offset + size <=
/// num_records`, CDNA's rule without `idxen`), neither swizzled nor
/// ADD_TID_ENABLE, and not gfx1250's (whose layout the reference refuses).
pub(super) fn raw_buffer(w: &Wave, v: &[u32]) -> bool {
    w.numbering != Numbering::GFX1250
        && v[1] >> 30 == 0
        && v[3] >> 23 & 1 == 0
        && v[3] >> 28 & 3 == 3
}

/// `v_permlane16_b32`/`v_permlanex16_b32` ([`Typed::Permlane`]): lane `l`
/// reads the lane of its row of 16 (x16: of the other row of its 32) that
/// nibble `l % 16` of `sel[1]:sel[0]` names; `op_sel` bit 0 is FI (an
/// inactive source lane is read), bit 1 BOUND_CTRL (it reads 0), as the
/// reference's `permlane16`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Permlane {
    dst: VDst,
    src: u16,
    sel: [Opnd; 2],
    fi: bool,
    bound_ctrl: bool,
    x: bool,
}

pub(super) fn lower_permlane(ins: &Instruction, x: bool) -> Option<Typed> {
    let ops = &ins.ops;
    if ops.len() != 4 || ops.iter().any(|o| o.neg || o.abs || o.sext) {
        return None;
    }
    let (mut fi, mut bound_ctrl) = (false, false);
    for (k, v) in &ins.mods {
        if k != "op_sel" {
            return None;
        }
        let bits: Vec<&str> = v
            .trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .map(str::trim)
            .collect();
        if bits.iter().any(|b| !matches!(*b, "0" | "1")) {
            return None;
        }
        fi = bits.first() == Some(&"1");
        bound_ctrl = bits.get(1) == Some(&"1");
    }
    Some(Typed::Permlane(Box::new(Permlane {
        dst: match vdst(&ops[0])? {
            d @ VDst {
                file: RegFile::V, ..
            } => d,
            _ => return None,
        },
        src: vgpr(&ops[1])?,
        sel: [ssrc(&ops[2], 1)?, ssrc(&ops[3], 1)?],
        fi,
        bound_ctrl,
        x,
    })))
}

pub(super) fn permlane(w: &mut Wave, p: &Permlane) -> R<()> {
    let exec = w.exec();
    let select = sget(w, p.sel[0]) as u64 | (sget(w, p.sel[1]) as u64) << 32;
    let src = *vrow(w, RegFile::V, p.src)?;
    let dst = vrow_mut(w, p.dst)?;
    for (lane, d) in dst.iter_mut().enumerate() {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let row = if p.x { (lane / 16) ^ 1 } else { lane / 16 };
        let from = row * 16 + (select >> (4 * (lane % 16)) & 15) as usize;
        if exec >> from & 1 != 0 || p.fi {
            *d = src[from];
        } else if p.bound_ctrl {
            *d = 0;
        }
    }
    Ok(())
}

/// `v_mov_b16_e32` with true16 halves ([`Typed::Mov16`]): the source's
/// low or high half (an integer constant's low 16 bits) into the low or
/// high half of the destination, the other half kept, as the reference's
/// t16 VALU path runs it. A VGPR or integer source only (an SGPR, a float
/// constant or any modifier but `t16`: the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mov16 {
    dst: VDst,
    hi: bool,
    src: Opnd,
    src_hi: bool,
}

pub(super) fn lower_mov16(ins: &Instruction) -> Option<Typed> {
    let t = ins.modifier("t16")?.as_bytes();
    let ops = &ins.ops;
    if ins.mods.len() != 1 || ops.len() != 2 || t.len() != 2 {
        return None;
    }
    if ops.iter().any(|o| o.neg || o.abs || o.sext) {
        return None;
    }
    let src = match ops[1].op {
        Operand::Reg {
            file: RegFile::V,
            index,
            ..
        } => Opnd::V(index),
        Operand::Int(i) => Opnd::Imm(i as u16 as u64),
        _ => return None,
    };
    let dst = match vdst(&ops[0])? {
        d @ VDst {
            file: RegFile::V, ..
        } => d,
        _ => return None,
    };
    Some(Typed::Mov16(Mov16 {
        dst,
        hi: t[0] == b'h',
        src,
        src_hi: t[1] == b'h' && matches!(src, Opnd::V(_)),
    }))
}

pub(super) fn mov16(w: &mut Wave, m: &Mov16) -> R<()> {
    let exec = w.exec();
    let src = match m.src {
        Opnd::V(i) => *vrow(w, RegFile::V, i)?,
        Opnd::Imm(x) => [x as u32; LANES],
        _ => return Err(Stop::Unsupported("v_mov_b16 source".into())),
    };
    let dst = vrow_mut(w, m.dst)?;
    for (lane, d) in dst.iter_mut().enumerate() {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let v = if m.src_hi { src[lane] >> 16 } else { src[lane] } & 0xffff;
        *d = if m.hi {
            (*d & 0xffff) | v << 16
        } else {
            (*d & 0xffff_0000) | v
        };
    }
    Ok(())
}

/// Cache invalidations and write-backs (`buffer_gl0_inv`, renamed
/// `buffer_wbinvl1`, gfx12's `global_inv`, …): memory here has no caches
/// (the reference's no-ops).
pub(super) fn lower_cache(ins: &Instruction) -> Option<Typed> {
    match ins.mnemonic.as_str() {
        "buffer_wbinvl1" | "buffer_wbinvl1_vol" | "buffer_inv" | "buffer_wbl2" | "global_inv"
        | "global_wb" | "global_wbinv"
            if ins.mods.iter().all(|(k, _)| k == "scope") && ins.ops.is_empty() =>
        {
            Some(Typed::Nop)
        }
        _ => None,
    }
}

/// gfx12's float scalar ALU and 64-bit `s_*_nc_u64`/`s_mul_u64`
/// ([`Typed::Salu12`]), as the reference's `salu_gfx12`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Salu12 {
    AddF,
    SubF,
    MulF,
    MaxNumF,
    MinNumF,
    /// `s_fmac_f32`: D = S0·S1 + D (the destination is source 2).
    /// `s_fmaak_f32`, `s_fmamk_f32`: the fma of the printed operands.
    Fma,
    CvtF32I32,
    CvtF32U32,
    CvtI32F32,
    CvtU32F32,
    /// 64-bit, SCC unchanged.
    AddNc64,
    SubNc64,
    Mul64,
}

/// [`lower_scalar`]'s gfx12 operations.
fn lower_salu12(ins: &Instruction) -> Option<Option<Typed>> {
    use Salu12::*;
    let m = ins.mnemonic.as_str();
    let (op, n) = match m {
        "s_add_f32" => (AddF, 2),
        "s_sub_f32" => (SubF, 2),
        "s_mul_f32" => (MulF, 2),
        "s_max_num_f32" => (MaxNumF, 2),
        "s_min_num_f32" => (MinNumF, 2),
        "s_fmac_f32" => (Fma, 2),
        "s_fmaak_f32" | "s_fmamk_f32" => (Fma, 3),
        "s_cvt_f32_i32" => (CvtF32I32, 1),
        "s_cvt_f32_u32" => (CvtF32U32, 1),
        "s_cvt_i32_f32" => (CvtI32F32, 1),
        "s_cvt_u32_f32" => (CvtU32F32, 1),
        "s_add_nc_u64" => (AddNc64, 2),
        "s_sub_nc_u64" => (SubNc64, 2),
        "s_mul_u64" => (Mul64, 2),
        _ => return None,
    };
    let ops = &ins.ops;
    let wide = matches!(op, AddNc64 | SubNc64 | Mul64);
    Some((|| {
        if ops.len() != n + 1 || !ins.mods.is_empty() || ops[0].neg || ops[0].abs {
            return None;
        }
        let w = if wide { 2 } else { 1 };
        let dst = sgpr(&ops[0].op, w)?;
        let mut src = [Opnd::Imm(0); 3];
        for k in 0..n {
            src[k] = ssrc(&ops[k + 1], w)?;
        }
        if m == "s_fmac_f32" {
            src[2] = Opnd::S(dst);
        }
        Some(Typed::Salu12 { op, dst, src })
    })())
}

pub(super) fn salu12(w: &mut Wave, op: Salu12, dst: u16, src: [Opnd; 3]) {
    use Salu12::*;
    let i = dst as usize;
    if matches!(op, AddNc64 | SubNc64 | Mul64) {
        let (a, b) = (sget64(w, src[0]), sget64(w, src[1]));
        let r = match op {
            AddNc64 => a.wrapping_add(b),
            SubNc64 => a.wrapping_sub(b),
            _ => a.wrapping_mul(b),
        };
        sset64(w, dst, r);
        return;
    }
    let [a, b, c] = src.map(|o| sget(w, o));
    w.s[i] = match op {
        AddF => cf32(f(a) + f(b)),
        SubF => cf32(f(a) - f(b)),
        MulF => cf32(f(a) * f(b)),
        MaxNumF => crate::exec::num_minmax32(a, b, true),
        MinNumF => crate::exec::num_minmax32(a, b, false),
        Fma => cf32(f(a).mul_add(f(b), f(c))),
        CvtF32I32 => cf32(a as i32 as f32),
        CvtF32U32 => cf32(a as f32),
        CvtI32F32 => f(a) as i32 as u32,
        CvtU32F32 => f(a) as u32,
        AddNc64 | SubNc64 | Mul64 => return,
    };
}
