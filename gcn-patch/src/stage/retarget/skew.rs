//! Toolchain skew: syntax newer LLVMs write that an older assembler rejects.
//!
//! * New target triple spelling (LLVM 23+, IREE 3.13):
//!   `amdgpu9.42-amd-amdhsa-unknown-gfx942` → `amdgcn-amd-amdhsa--gfx942`.
//!   Handled by rewriting the target in `mod.rs` (always to the canonical
//!   `amdgcn-amd-amdhsa--` form that every LLVM accepts).
//! * `.amdhsa_inst_pref_size ((instprefsize(E)<<4)&MASK)>>4` (LLVM 24, gfx11+):
//!   [`instprefsize_expr`] rewrites it into an expression LLVM 22 evaluates.
//! * VOPD pairs reading the same VGPR in both halves on gfx12 (allowed since
//!   LLVM 23, llvm/llvm-project#196198; LLVM 22 says "src0/src1 operands must
//!   use different VGPR banks"): [`normalize_vopd`] swaps src0/src1 of one
//!   half where an exact equivalent exists (`sub` ↔ `subrev`, commutative
//!   operations) and reports the other pairs as errors.

use gcn_embed::{Generation, Processor};

use crate::base::diag::{Code, Diagnostic};
use crate::base::document::Document;
use crate::base::parse::{Instruction, Operand, RegFile};

/// First LLVM major whose assembler parses `instprefsize(...)`.
pub const INSTPREFSIZE_LLVM: u32 = 24;
/// First LLVM major that accepts the same VGPR in both halves of a gfx12 VOPD.
pub const VOPD_SAME_VGPR_LLVM: u32 = 23;

/// Largest `INST_PREF_SIZE` value: the field is 6 bits on gfx11, 8 on gfx12+.
pub fn inst_pref_size_max(p: &Processor) -> u32 {
    if p.generation >= Generation::Gfx12 {
        255
    } else {
        63
    }
}

/// If `value` uses `instprefsize(E)`, the equivalent LLVM 22 expression.
///
/// LLVM 24 defines `instprefsize(size)` as `min(ceil(size / 128), max)` in
/// 128-byte cache lines (llvm/test/CodeGen/AMDGPU/inst-prefetch-hint tests:
/// 132 bytes → 2, 8196 bytes → 63 on gfx11 / 65 on gfx12), and wraps it as
/// `((instprefsize(E)<<4)&MASK)>>4` to fit the `COMPUTE_PGM_RSRC3` field.
/// LLVM 22 has `max` but no `min`, and evaluates label differences in the
/// descriptor after layout, so this writes
/// `N-max(N-MAX,0)` with `N = (((E)+127)/128)`: it follows the code size when a
/// patch changes it (checked: gives the same descriptor bytes as IREE's own
/// hsaco for every gfx1100/gfx1201 corpus dump).
pub fn instprefsize_expr(value: &str, max: u32) -> Option<String> {
    let start = value.find("instprefsize(")?;
    let open = start + "instprefsize".len();
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in value[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = value[open + 1..close?].trim();
    if inner.is_empty() {
        return None;
    }
    let n = format!("((({inner})+127)/128)");
    Some(format!("{n}-max({n}-{max},0)"))
}

/// One VOPD line rewritten for an older assembler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VopdRewrite {
    /// 0-based line in the input.
    pub line: usize,
    /// The new text: one line (a VOPD with a half swapped; layout and comment
    /// kept) or two (the pair split into its two VOP1/VOP2 instructions).
    pub lines: Vec<String>,
    /// What the rewrite is, for the line's origin ("VOPD operand order for LLVM 22").
    pub what: String,
    /// The note reported to the user: where, what and why.
    pub note: String,
    /// The same as a diagnostic (severity note) at the rewritten line.
    pub diagnostic: Diagnostic,
}

/// What [`normalize_vopd`] found: rewrites, and errors for pairs that have no
/// exact equivalent.
#[derive(Debug, Default)]
pub struct VopdOutcome {
    /// Lines to replace.
    pub rewrites: Vec<VopdRewrite>,
    /// Pairs LLVM `assembler_llvm_major` rejects and no swap can fix.
    pub errors: Vec<Diagnostic>,
}

/// VGPR bank masks of a VOPD component's operands: dst, src0, src1, src2
/// (`VOPD_VGPR_BANK_MASKS` in LLVM's AMDGPUBaseInfo.h: four banks for src0
/// and src1, two for the destination and src2).
const BANK_MASK: [u32; 4] = [1, 3, 3, 1];
/// Operand slot names, as LLVM's messages use them.
const SLOT: [&str; 4] = ["dst", "src0", "src1", "src2"];

/// The VGPRs of one VOPD half by slot (dst, src0, src1, src2), `None` where
/// the slot is empty or not a VGPR (SGPR, literal, inline constant).
fn vopd_slots(ins: &Instruction) -> [Option<u32>; 4] {
    let vgpr = |i: usize| match ins.operands.get(i) {
        Some(Operand::Register(r)) if r.file == RegFile::Vgpr => Some(r.first),
        _ => None,
    };
    let m = ins.mnemonic.as_str();
    // `v_dual_fmamk_f32 vD, src0, K, vsrc1`: the literal sits between the sources.
    let src1 = if m.ends_with("_fmamk_f32") {
        vgpr(3)
    } else {
        vgpr(2)
    };
    // FMAC and DOT2ACC accumulate into their destination: it is also src2.
    let src2 = if m.ends_with("_fmac_f32") || m.ends_with("_dot2acc_f32_f16") {
        vgpr(0)
    } else {
        None
    };
    [vgpr(0), vgpr(1), src1, src2]
}

/// The first slot where the halves break the bank rule, with the VGPR of
/// each half. `same_vgpr_ok`: LLVM 23+ on GFX12 lets both halves read the
/// very same VGPR (llvm/llvm-project#196198; LLVM's
/// `VOPD::InstInfo::getInvalidCompOperandIndex` with `AllowSameVGPR`).
fn bank_conflict(
    x: &[Option<u32>; 4],
    y: &[Option<u32>; 4],
    same_vgpr_ok: bool,
) -> Option<(usize, u32, u32)> {
    (0..4).find_map(|slot| {
        let (a, b) = (x[slot]?, y[slot]?);
        let same_bank = a & BANK_MASK[slot] == b & BANK_MASK[slot];
        let allowed = same_vgpr_ok && slot != 0 && a == b;
        (same_bank && !allowed).then_some((slot, a, b))
    })
}

/// Whether both halves are `v_dual_mov_b32`. On GFX12 the second of two
/// moves reads its source through the src2 operand cache, so LLVM checks
/// only the destinations' banks (`AMDGPUAsmParser::validateVOPDRegBankConstraints`:
/// `SkipSrc` for `V_DUAL_MOV_B32_e32_X_MOV_B32_e32_gfx12`; checked: llvm-mc
/// 22 assembles `v_dual_mov_b32 v12, v8 :: v_dual_mov_b32 v13, v8` for
/// gfx1201 and rejects the same source in a mov and an add). Such a pair
/// needs no rewrite; splitting it changed the bytes of Triton's gfx1201
/// matmul.
fn both_mov(x: &Instruction, y: &Instruction) -> bool {
    x.mnemonic == "v_dual_mov_b32" && y.mnemonic == "v_dual_mov_b32"
}

/// The opcode of a half with src0 and src1 exchanged, when that computes
/// exactly the same value: `sub` ↔ `subrev`, and the operations LLVM marks
/// commutable whose result does not depend on operand order (`add`, `mul`,
/// `mul_dx9_zero`, `fmac`, `fmaak`: a*b(+c), `add_nc_u32`, `and_b32`). Not
/// min/max (signed-zero and NaN order), `cndmask`, shifts, `fmamk`, `mov`.
fn swapped_opcode(mnemonic: &str) -> Option<String> {
    let op = mnemonic.strip_prefix("v_dual_")?;
    let swapped = match op {
        "sub_f32" => "subrev_f32",
        "subrev_f32" => "sub_f32",
        "add_f32" | "mul_f32" | "mul_dx9_zero_f32" | "fmac_f32" | "fmaak_f32" | "add_nc_u32"
        | "and_b32" => op,
        _ => return None,
    };
    Some(format!("v_dual_{swapped}"))
}

/// `ins` with src0 and src1 exchanged, if that is an exact equivalent and
/// src0 is a VGPR (src1 of a VOPD half must be one).
fn swapped(ins: &Instruction) -> Option<Instruction> {
    let mnemonic = swapped_opcode(&ins.mnemonic)?;
    match ins.operands.get(1) {
        Some(Operand::Register(r)) if r.file == RegFile::Vgpr && r.count() == 1 => {}
        _ => return None,
    }
    ins.operands.get(2)?;
    let mut out = ins.clone();
    out.mnemonic = mnemonic.into();
    out.operands.swap(1, 2);
    Some(out)
}

/// Rewrite the text of one half (`v_dual_sub_f32 v2, v2, v7`, with its
/// surrounding whitespace) to `ins`: operands keep their own spelling.
fn rewrite_half(half: &str, ins: &Instruction) -> Option<String> {
    let lead = &half[..half.len() - half.trim_start().len()];
    let trail = &half[half.trim_end().len()..];
    let body = half.trim();
    let (mnemonic, rest) = body.split_once(char::is_whitespace)?;
    let mut chunks: Vec<&str> = rest.split(',').map(str::trim).collect();
    if chunks.len() < 3 || chunks.iter().any(|c| c.contains(['(', '['])) {
        return None;
    }
    debug_assert!(mnemonic.starts_with("v_dual_"));
    chunks.swap(1, 2);
    Some(format!(
        "{lead}{} {}{trail}",
        ins.mnemonic,
        chunks.join(", ")
    ))
}

/// gfx12 VOPD pairs whose halves read one VGPR in the same source slot
/// (`v_dual_sub_f32 v1, v1, v7 :: v_dual_sub_f32 v2, v2, v7`): LLVM 23+
/// writes them (IREE 3.13 is LLVM 24), LLVM 22 rejects them ("src1 operands
/// must use different VGPR banks"). When the assembler is older than
/// `VOPD_SAME_VGPR_LLVM`, each such pair is rewritten into an exact
/// equivalent that satisfies the older bank rule, swapping src0 and src1 of
/// one half (the second first, then the first) with the reversed
/// opcode (`v_dual_subrev_f32 v2, v7, v2`) or, for a commutative operation,
/// the same one; failing that, by splitting the pair into its two `_e32`
/// instructions when that is exact and keeps the size (see `split`). A
/// pair with no such equivalent stays an error naming the line and the fixes.
pub fn normalize_vopd(
    asm: &Document,
    target: &Processor,
    assembler_llvm_major: u32,
) -> VopdOutcome {
    let mut out = VopdOutcome::default();
    if target.generation < Generation::Gfx12 || assembler_llvm_major >= VOPD_SAME_VGPR_LLVM {
        return out;
    }
    for (i, line) in asm.lines().iter().enumerate() {
        // A raw line (`.long 0x… ; raw: v_dual_…`, as lift keeps a pair the
        // assembler rejects) is already the pair's bytes: the assembler
        // never reads the pair, so there is nothing to normalize, and its
        // text is no instruction to rewrite.
        let Some(x) = line.written_instruction() else {
            continue;
        };
        let Some(y) = x.dual.as_deref() else { continue };
        let (mut sx, mut sy) = (vopd_slots(x), vopd_slots(y));
        if both_mov(x, y) {
            // Only the destinations obey the bank rule here (see `both_mov`).
            sx[1..].fill(None);
            sy[1..].fill(None);
        }
        let Some((slot, a, _)) = bank_conflict(&sx, &sy, false) else {
            continue;
        };
        if bank_conflict(&sx, &sy, true).is_some() {
            // Invalid for every LLVM: leave it to the assembler's own message.
            continue;
        }
        // Swapping both halves never helps: the shared VGPR would then be
        // shared in the other slot.
        let candidates = [(None, swapped(y)), (swapped(x), None)];
        let fix = candidates.into_iter().find_map(|(nx, ny)| {
            if nx.is_none() && ny.is_none() {
                return None;
            }
            let (new_x, new_y) = (nx.as_ref().unwrap_or(x), ny.as_ref().unwrap_or(y));
            bank_conflict(&vopd_slots(new_x), &vopd_slots(new_y), false)
                .is_none()
                .then_some((nx, ny))
        });
        let rewritten = match fix {
            Some((nx, ny)) => rewrite_line(asm.text(i), x, nx.as_ref(), ny.as_ref())
                .map(|(text, shown)| (vec![text], shown, "VOPD operand order")),
            None => split(asm.text(i), x, y).map(|(lines, shown)| (lines, shown, "VOPD split")),
        };
        match rewritten {
            Some((lines, shown, kind)) => {
                let loc = asm.location(i, None);
                let at = format!("{}:{}", loc.file.display(), loc.line);
                let why = format!(
                    "LLVM {assembler_llvm_major} rejects both halves reading v{a} as {} \
                     (allowed on {} since LLVM {VOPD_SAME_VGPR_LLVM})",
                    SLOT[slot], target.name
                );
                let mut diagnostic =
                    Diagnostic::note(Code::SkewRewrite, format!("rewrote {shown}")).with_note(
                        format!("{why}; the rewrite computes exactly the same values"),
                    );
                if kind == "VOPD split" {
                    diagnostic = diagnostic.with_note(
                        "no operand swap satisfies the bank rule, so the pair is split into its \
                         two instructions (same 8 bytes); `s_delay_alu` hints after it may count \
                         one VALU instruction off, which only affects scheduling",
                    );
                }
                diagnostic = diagnostic.at(loc.with_label("rewritten for this assembler"));
                if let Some(n) = asm.provenance_note(i) {
                    diagnostic = diagnostic.with_note(n);
                }
                out.rewrites.push(VopdRewrite {
                    line: i,
                    lines,
                    what: format!("{kind} for LLVM {assembler_llvm_major}"),
                    note: format!("{at}: rewrote {shown}: {why}"),
                    diagnostic,
                });
            }
            None => out.errors.push(unfixable(
                asm,
                i,
                x,
                y,
                slot,
                a,
                target,
                assembler_llvm_major,
            )),
        }
    }
    out
}
/// The line with the halves replaced by `nx` / `ny` (where given), and a
/// description `` `old` as `new` `` of what changed.
fn rewrite_line(
    text: &str,
    x: &Instruction,
    nx: Option<&Instruction>,
    ny: Option<&Instruction>,
) -> Option<(String, String)> {
    let (body, cr) = match text.strip_suffix('\r') {
        Some(b) => (b, "\r"),
        None => (text, ""),
    };
    let (code, comment) = match &x.comment {
        Some(c) if body.ends_with(c.as_str()) => body.split_at(body.len() - c.len()),
        Some(_) => return None,
        None => (body, ""),
    };
    let (hx, hy) = code.split_once("::")?;
    if hy.contains("::") {
        return None;
    }
    let new_x = match nx {
        Some(n) => rewrite_half(hx, n)?,
        None => hx.to_string(),
    };
    let new_y = match ny {
        Some(n) => rewrite_half(hy, n)?,
        None => hy.to_string(),
    };
    let mut shown = Vec::new();
    if nx.is_some() {
        shown.push(format!("`{}` as `{}`", hx.trim(), new_x.trim()));
    }
    if ny.is_some() {
        shown.push(format!("`{}` as `{}`", hy.trim(), new_y.trim()));
    }
    Some((
        format!("{new_x}::{new_y}{comment}{cr}"),
        shown.join(" and "),
    ))
}

/// The VOP1/VOP2 (`_e32`) instruction a VOPD half stands for.
fn single_opcode(mnemonic: &str) -> Option<String> {
    let op = mnemonic.strip_prefix("v_dual_")?;
    match op {
        "add_f32" | "sub_f32" | "subrev_f32" | "mul_f32" | "mul_dx9_zero_f32" | "fmac_f32"
        | "max_num_f32" | "min_num_f32" | "cndmask_b32" | "add_nc_u32" | "lshlrev_b32"
        | "and_b32" | "mov_b32" | "dot2acc_f32_f16" => Some(format!("v_{op}_e32")),
        _ => None,
    }
}

/// VGPRs a half reads (its sources, and its destination when it accumulates).
fn reads(ins: &Instruction) -> Vec<u32> {
    let slots = vopd_slots(ins);
    let mut regs: Vec<u32> = ins.operands[1.min(ins.operands.len())..]
        .iter()
        .filter_map(Operand::register)
        .filter(|r| r.file == RegFile::Vgpr)
        .flat_map(|r| r.first..=r.last)
        .collect();
    regs.extend(slots[3]);
    regs
}

/// Whether every source of `ins` is a register or an inline constant: its
/// `_e32` form is then 4 bytes, so two of them fill the VOPD's 8 bytes and
/// no later address moves.
fn no_literal(ins: &Instruction) -> bool {
    ins.operands[1.min(ins.operands.len())..]
        .iter()
        .all(|o| match o {
            Operand::Register(_) => true,
            Operand::Integer(v) => (-16..=64).contains(v),
            Operand::Float(f) => matches!(
                f.trim_start_matches('-'),
                "0.5" | "1.0" | "2.0" | "4.0" | "0.0" | "0.15915494"
            ),
            _ => false,
        })
}

/// The pair as two single instructions, when that is exact: both halves
/// have an `_e32` form without a literal (same 8 bytes, so no address or
/// branch offset changes), and one half does not read what the other writes
/// (it goes first: a VOPD reads all sources before writing). Only the
/// `s_delay_alu` hints after it may now count one VALU instruction off; they
/// are scheduling hints (LLVM's AMDGPUInsertDelayAlu.cpp inserts them "to
/// avoid stalls" and only when optimizing), not needed for correctness.
fn split(text: &str, x: &Instruction, y: &Instruction) -> Option<(Vec<String>, String)> {
    let (ox, oy) = (single_opcode(&x.mnemonic)?, single_opcode(&y.mnemonic)?);
    if !(no_literal(x) && no_literal(y)) {
        return None;
    }
    let dst = |ins: &Instruction| vopd_slots(ins)[0];
    let y_reads_x = dst(x).is_some_and(|d| reads(y).contains(&d));
    let x_reads_y = dst(y).is_some_and(|d| reads(x).contains(&d));
    let (body, cr) = match text.strip_suffix('\r') {
        Some(b) => (b, "\r"),
        None => (text, ""),
    };
    let (code, comment) = match &x.comment {
        Some(c) if body.ends_with(c.as_str()) => body.split_at(body.len() - c.len()),
        Some(_) => return None,
        None => (body, ""),
    };
    let indent = &code[..code.len() - code.trim_start().len()];
    let (hx, hy) = code.split_once("::")?;
    let single = |half: &str, op: &str| -> Option<String> {
        let (_, operands) = half.trim().split_once(char::is_whitespace)?;
        Some(format!("{op} {}", operands.trim()))
    };
    let (sx, sy) = (single(hx, &ox)?, single(hy, &oy)?);
    let (first, second) = match (y_reads_x, x_reads_y) {
        (false, _) => (sx, sy),
        (true, false) => (sy, sx),
        (true, true) => return None,
    };
    let comment = if comment.is_empty() {
        String::new()
    } else {
        format!(" {}", comment.trim_start())
    };
    let shown = format!("`{}` as `{first}` and `{second}`", code.trim());
    Some((
        vec![
            format!("{indent}{first}{comment}{cr}"),
            format!("{indent}{second}{cr}"),
        ],
        shown,
    ))
}

/// The error for a pair LLVM `major` rejects and no swap fixes.
#[allow(clippy::too_many_arguments)]
fn unfixable(
    asm: &Document,
    i: usize,
    x: &Instruction,
    y: &Instruction,
    slot: usize,
    vgpr: u32,
    target: &Processor,
    major: u32,
) -> Diagnostic {
    let name = SLOT[slot];
    let d = Diagnostic::error(
        Code::VopdPairRejected,
        format!(
            "LLVM {major} rejects this {} VOPD pair: both halves read v{vgpr} as {name}",
            target.name
        ),
    )
    .with_note(format!(
        "LLVM {major} says \"{name} operands must use different VGPR banks\"; \
         LLVM >= {VOPD_SAME_VGPR_LLVM} allows the same VGPR in both halves on GFX12 \
         (llvm/llvm-project#196198), which is how the dump was produced"
    ))
    .with_note(format!(
        "no exact equivalent was found: swapping src0/src1 needs `sub`/`subrev` or a \
         commutative operation with a VGPR src0 and must satisfy the bank rule; splitting \
         needs `_e32` forms of `{}` and `{}` without literals, and one half not reading \
         the other's destination",
        x.mnemonic, y.mnemonic
    ))
    .with_help(format!(
        "assemble with LLVM >= {VOPD_SAME_VGPR_LLVM} (e.g. ROCm 7.x or IREE's bundled LLVM), \
         or patch this line by hand into two instructions (`{}` and `{}`), ordered so that \
         neither reads what the other already wrote",
        x.mnemonic.replacen("v_dual_", "v_", 1),
        y.mnemonic.replacen("v_dual_", "v_", 1)
    ));
    asm.locate(d, i, None, format!("{name} v{vgpr} in both halves"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_instprefsize() {
        assert_eq!(
            instprefsize_expr("((instprefsize(.Lfunc_end0-k)<<4)&1008)>>4", 63).as_deref(),
            Some("(((.Lfunc_end0-k)+127)/128)-max((((.Lfunc_end0-k)+127)/128)-63,0)")
        );
        assert_eq!(instprefsize_expr("5", 63), None);
        assert_eq!(instprefsize_expr("instprefsize(", 63), None);
        assert_eq!(instprefsize_expr("instprefsize()", 63), None);
    }
}
