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
//!   use different VGPR banks"): not rewritable safely, reported by
//!   [`known_unfixable`].

use gcn_embed::{Generation, Processor};

use crate::diag::Diagnostic;
use crate::document::Document;
use crate::parse::{Operand, RegFile};

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

/// Constructs that the assembler of `assembler_llvm_major` rejects on
/// `target` although a newer LLVM wrote them, and that retargeting cannot
/// rewrite safely. Each diagnostic names the line (through its origin).
pub fn known_unfixable(
    asm: &Document,
    target: &Processor,
    assembler_llvm_major: u32,
) -> Vec<Diagnostic> {
    let mut out = vec![];
    if target.generation < Generation::Gfx12 || assembler_llvm_major >= VOPD_SAME_VGPR_LLVM {
        return out;
    }
    for (i, line) in asm.lines().iter().enumerate() {
        let Some(x) = line.instruction() else {
            continue;
        };
        let Some(y) = x.dual.as_deref() else { continue };
        for (slot, idx) in [("src0", 1), ("src1", 2)] {
            let vgpr = |ins: &crate::parse::Instruction| match ins.operands.get(idx) {
                Some(Operand::Register(r)) if r.file == RegFile::Vgpr => Some(*r),
                _ => None,
            };
            let (Some(a), Some(b)) = (vgpr(x), vgpr(y)) else {
                continue;
            };
            if a.first != b.first {
                continue;
            }
            let mut d = Diagnostic::error(format!(
                "LLVM {assembler_llvm_major} rejects this {} VOPD pair: both halves read {a} as {slot}",
                target.name
            ))
            .with_note(format!(
                "LLVM {assembler_llvm_major} says \"{slot} operands must use different VGPR banks\"; \
                 LLVM >= {VOPD_SAME_VGPR_LLVM} allows the same VGPR in both halves on GFX12 \
                 (llvm/llvm-project#196198), which is how the dump was produced"
            ))
            .with_help(format!(
                "assemble with LLVM >= {VOPD_SAME_VGPR_LLVM} (e.g. ROCm 7.x or IREE's bundled LLVM), \
                 or patch this line: swap src0/src1 of one half using the reversed opcode \
                 (`v_dual_sub_f32 v1, v1, v7 :: v_dual_subrev_f32 v2, v7, v2` assembles with LLVM 22), \
                 or split it into `{}` and `{}` when neither half reads the other's destination",
                x.mnemonic.replacen("v_dual_", "v_", 1),
                y.mnemonic.replacen("v_dual_", "v_", 1)
            ));
            d = asm.locate(d, i, None, format!("{slot} {a} in both halves"));
            out.push(d);
        }
    }
    out
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
