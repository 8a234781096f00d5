//! LDS DMA and LDS accesses: do the bytes a pending `buffer_load … lds` /
//! `global_load_lds_*` writes overlap the bytes a `ds_*` reads or writes?
//!
//! The DMA writes `M0 + inst_offset + lane × size` for each lane (at most 64
//! lanes are counted, whatever the wave size: an over-approximation); a
//! `ds_*` instruction accesses `vaddr + offset` (`offset0`/`offset1` scaled by
//! the element size for `*2*` forms, by 64 × size for `*2st64*`). Each value
//! is bounded only where the code makes it a constant in the basic block of
//! the instruction: `s_mov`/`s_movk`/`v_mov` of a constant, `s_add`/`s_or`/
//! `s_lshl`/`v_add`/`v_or`/… of bounded values, through M0 and SGPR/VGPR
//! copies. Per-lane addresses from the thread id, or values from before the
//! block, are not bounded: then the two "may alias", which is a warning
//! naming what could not be proven (LLVM itself knows from alias scopes
//! that, for example, the tile a double-buffered loop prefetches is not the
//! one it reads; the asm does not say so).

use super::analysis::Hazard;
use super::cfg::Cfg;
use super::model::Model;
use crate::base::parse::{AsmFile, Operand, RegFile, RegisterRef};

/// What is known about a pending LDS DMA and an LDS access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DmaAlias {
    /// Both byte ranges are bounded and do not overlap: no hazard.
    Disjoint,
    /// Both are bounded and overlap: a hazard.
    Overlap,
    /// At least one is not bounded: why not.
    MayAlias(String),
}

/// Bytes written per lane by an LDS DMA / accessed per element by a `ds_*`,
/// from its mnemonic.
fn size_of(m: &str) -> u32 {
    // `ds_read_b64_tr_b16`: the access is the b64 before `_tr_`.
    let m = m.split("_tr_").next().unwrap_or(m);
    if m.contains("dwordx4") || m.contains("b128") {
        16
    } else if m.contains("dwordx3") || m.contains("b96") {
        12
    } else if m.contains("dwordx2") || m.contains("b64") {
        8
    } else if m.contains("byte") || m.contains("u8") || m.contains("i8") || m.ends_with("b8") {
        1
    } else if m.contains("short") || m.contains("u16") || m.contains("i16") || m.ends_with("b16") {
        2
    } else {
        4
    }
}

/// Half-open byte range.
type Range = (i64, i64);

fn overlap(a: Range, b: Range) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// The bytes the LDS DMA at line `l` writes, or why they are not bounded.
fn dma_range(asm: &AsmFile, cfg: &Cfg, model: &Model, l: usize) -> Result<Range, String> {
    let Some(dma) = cfg.instruction(asm, l) else {
        return Err("the DMA could not be read".into());
    };
    let m0 = RegisterRef {
        file: RegFile::M0,
        first: 0,
        last: 0,
        half: None,
    };
    let base = value(asm, cfg, model, l, &m0, 0).map_err(|why| format!("M0 at the DMA: {why}"))?;
    let start = base + offset(&dma, "offset");
    Ok((start, start + 64 * i64::from(size_of(&dma.mnemonic))))
}

/// Decide `h` (a hazard on the LDS DMA pseudo register). The analysis keeps
/// only the newest pending DMA (`h.producer`): overlapping it is a hazard;
/// "disjoint" needs every LDS DMA of the kernel (`dmas`, any of which may
/// still be pending) proven disjoint.
pub fn dma_alias(asm: &AsmFile, cfg: &Cfg, model: &Model, h: &Hazard, dmas: &[usize]) -> DmaAlias {
    let Some(ds) = cfg.instruction(asm, h.line) else {
        return DmaAlias::MayAlias("the instructions could not be read".into());
    };
    let mut unknown = vec![];
    let newest = match dma_range(asm, cfg, model, h.producer) {
        Ok(r) => Some(r),
        Err(why) => {
            unknown.push(why);
            None
        }
    };
    // The ds access: its address VGPR (the first register after the
    // destination of a load, the first register of a store or atomic).
    let e = model.effect(&ds);
    let addr = ds
        .operands
        .iter()
        .filter_map(Operand::register)
        .find(|r| r.file == RegFile::Vgpr && !e.defs.contains(r))
        .copied();
    let ds_range = match addr {
        None => {
            unknown.push(format!("`{}` has no address VGPR", ds.mnemonic));
            None
        }
        Some(a) => match value(asm, cfg, model, h.line, &a, 0) {
            Ok(base) => {
                let m = ds.mnemonic.as_str();
                let size = i64::from(size_of(m));
                if m.contains("2st64") || m.contains("2_") {
                    let scale = if m.contains("st64") { 64 * size } else { size };
                    let o0 = offset(&ds, "offset0") * scale;
                    let o1 = offset(&ds, "offset1") * scale;
                    Some((base + o0.min(o1), base + o0.max(o1) + size))
                } else {
                    let o = offset(&ds, "offset");
                    Some((base + o, base + o + size))
                }
            }
            Err(why) => {
                unknown.push(format!("the address `{a}` of the `{}`: {why}", ds.mnemonic));
                None
            }
        },
    };
    match (newest, ds_range) {
        (Some(a), Some(b)) if overlap(a, b) => DmaAlias::Overlap,
        (Some(_), Some(b)) => {
            // Older DMAs may be pending too.
            for &l in dmas.iter().filter(|&&l| l != h.producer) {
                match dma_range(asm, cfg, model, l) {
                    Ok(r) if !overlap(r, b) => {}
                    Ok(_) => {
                        return DmaAlias::MayAlias(format!(
                            "the LDS DMA at line {} writes these bytes and may still be pending",
                            l + 1
                        ))
                    }
                    Err(why) => {
                        return DmaAlias::MayAlias(format!(
                            "the LDS DMA at line {} may still be pending: {why}",
                            l + 1
                        ))
                    }
                }
            }
            DmaAlias::Disjoint
        }
        _ => DmaAlias::MayAlias(unknown.join("; ")),
    }
}

/// The value of modifier `key` (`offset:16`), 0 if absent.
fn offset(inst: &crate::base::parse::Instruction, key: &str) -> i64 {
    inst.modifier_value(key)
        .and_then(crate::base::parse::parse_int)
        .unwrap_or(0)
}

/// The constant value `reg` holds before line `at`, from the instructions
/// of its basic block; or why it is not known.
fn value(
    asm: &AsmFile,
    cfg: &Cfg,
    model: &Model,
    at: usize,
    reg: &RegisterRef,
    depth: u32,
) -> Result<i64, String> {
    if depth > 16 {
        return Err(format!("`{reg}` is computed too deep to follow"));
    }
    if reg.first != reg.last {
        return Err(format!("`{reg}` is not one 32-bit register"));
    }
    for i in (0..at).rev() {
        let line = &asm.lines[i];
        if let Some(l) = line.label() {
            return Err(format!(
                "`{reg}` is not set in its block (it comes from before `{l}`, line {})",
                i + 1
            ));
        }
        let Some(inst) = cfg.instruction(asm, i) else {
            continue;
        };
        let e = model.effect(&inst);
        if e.flow != super::model::Flow::Next {
            return Err(format!("`{reg}` is not set in its block"));
        }
        let def = e
            .defs
            .iter()
            .chain(
                // m0 is written by its instructions' first operand too.
                inst.operands
                    .first()
                    .and_then(Operand::register)
                    .filter(|r| r.file == RegFile::M0),
            )
            .find(|d| d.file == reg.file && d.first <= reg.last && reg.first <= d.last);
        let Some(d) = def else { continue };
        let text = line.text().trim();
        let why = || {
            format!(
                "`{reg}` is set by `{text}` (line {}), not a constant",
                i + 1
            )
        };
        if d.file != reg.file || d.first != reg.first || d.last != reg.last {
            return Err(why());
        }
        let m = inst.mnemonic.as_str();
        let m = m
            .strip_suffix("_e32")
            .or_else(|| m.strip_suffix("_e64"))
            .unwrap_or(m);
        let op = |k: usize| -> Result<i64, String> {
            match inst.operands.get(k) {
                Some(Operand::Integer(v)) => Ok(*v),
                Some(Operand::Register(r)) => value(asm, cfg, model, i, r, depth + 1)
                    .map_err(|e| format!("`{reg}` is set by `{text}` (line {}), and {e}", i + 1)),
                _ => Err(why()),
            }
        };
        let v = match m {
            "s_mov_b32" | "s_movk_i32" | "v_mov_b32" => op(1)?,
            "s_add_u32" | "s_add_i32" | "v_add_u32" | "v_add_nc_u32" => op(1)? + op(2)?,
            "s_sub_u32" | "s_sub_i32" | "v_sub_u32" | "v_sub_nc_u32" => op(1)? - op(2)?,
            "s_or_b32" | "v_or_b32" => op(1)? | op(2)?,
            "s_and_b32" | "v_and_b32" => op(1)? & op(2)?,
            "s_lshl_b32" => op(1)? << (op(2)? & 31),
            "v_lshlrev_b32" => op(2)? << (op(1)? & 31),
            _ => return Err(why()),
        };
        return Ok(v & 0xffff_ffff);
    }
    Err(format!("`{reg}` is not set before its use in the kernel"))
}

#[cfg(test)]
mod tests {
    use super::size_of;

    #[test]
    fn sizes() {
        assert_eq!(size_of("buffer_load_dwordx4"), 16);
        assert_eq!(size_of("buffer_load_dword"), 4);
        assert_eq!(size_of("ds_read_b64_tr_b16"), 8);
        assert_eq!(size_of("ds_read_u8"), 1);
        assert_eq!(size_of("global_load_lds_dwordx3"), 12);
    }
}
