//! Under [`RegisterPolicy::Update`]: the counts a kernel should declare, and
//! the edits (rewritten lines and inserted ones) that make every declaration
//! say so.

use super::*;

/// The counts a kernel should declare after an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Target {
    pub(super) num_vgpr: u32,
    pub(super) num_agpr: u32,
    pub(super) numbered_sgpr: u32,
    pub(super) uses_vcc: bool,
    pub(super) uses_flat_scratch: bool,
    pub(super) next_free_vgpr: u32,
    pub(super) next_free_sgpr: u32,
    pub(super) accum_offset: Option<u32>,
    pub(super) vgpr_count: u32,
    pub(super) agpr_count: u32,
    pub(super) sgpr_count: u32,
}

pub(super) fn targets(kb: &KernelBudget, isa: &Isa, target: &TargetId) -> Target {
    let d = &kb.declared;
    let u = &kb.used;
    let num = |v: &Option<DeclaredValue>| v.as_ref().and_then(|v| v.value).unwrap_or(0);
    let num_vgpr = num(&d.num_vgpr).max(u.vgpr);
    let num_agpr = num(&d.num_agpr).max(u.agpr);
    let numbered_sgpr = num(&d.numbered_sgpr).max(u.sgpr);
    let uses_vcc = flag(&d.uses_vcc).unwrap_or(false) || u.vcc;
    let uses_flat_scratch = flag(&d.uses_flat_scratch).unwrap_or(false) || u.flat_scratch;
    let accum_offset = isa
        .unified_agprs
        .then(|| num(&d.accum_offset).max(num_vgpr.max(1).div_ceil(4) * 4));
    let combined = match accum_offset {
        Some(acc) if num_agpr > 0 => acc + num_agpr,
        _ => isa.combined_vgprs(num_vgpr, num_agpr),
    };
    let next_free_vgpr = num(&d.next_free_vgpr).max(combined);
    let next_free_sgpr = num(&d.next_free_sgpr).max(numbered_sgpr);
    let extra = isa.extra_sgprs(uses_vcc, uses_flat_scratch, xnack_on_or_any(isa, target));
    Target {
        num_vgpr,
        num_agpr,
        numbered_sgpr,
        uses_vcc,
        uses_flat_scratch,
        next_free_vgpr,
        next_free_sgpr,
        accum_offset,
        vgpr_count: num(&d.vgpr_count).max(isa.combined_vgprs(num_vgpr, num_agpr).max(1)),
        agpr_count: num(&d.agpr_count).max(num_agpr),
        sgpr_count: num(&d.sgpr_count).max(numbered_sgpr + extra),
    }
}

/// A line an update inserts: (index to insert at, text, description).
pub(super) type Insert = (usize, String, String);

/// One line rewrite of an update.
pub(super) struct Edit {
    pub(super) line: usize,
    pub(super) new_text: String,
    pub(super) change: String,
}

pub(super) fn plan_updates(
    asm: &AsmFile,
    kb: &KernelBudget,
    isa: &Isa,
    target: &TargetId,
) -> (Vec<Edit>, Vec<Insert>, Vec<Diagnostic>) {
    let t = targets(kb, isa, target);
    let d = &kb.declared;
    let mut edits = vec![];
    let mut inserts: Vec<Insert> = vec![];
    let mut errors = vec![];
    // Symbol values as updated so far: descriptor expressions that refer to
    // `.set` symbols are evaluated with the new values.
    let mut symbols = set_symbols(asm);
    let gfx90a = isa.unified_agprs;
    let mut set = |v: &Option<DeclaredValue>, want: u32| {
        let Some(v) = v else { return };
        let current = if v.is_literal() {
            v.value
        } else {
            value_of(&v.text, &symbols, gfx90a)
        };
        if current.is_some_and(|x| x >= want) {
            return;
        }
        let text = asm.lines[v.line].text();
        let new_text = crate::base::parse::edit::replace_value(text, &want.to_string());
        if let Some(sym) = v.what.strip_prefix(".set ") {
            symbols.insert(sym.to_string(), want.to_string());
        }
        edits.push(Edit {
            line: v.line,
            new_text,
            change: format!("{} {} → {want}", v.what, v.text),
        });
    };
    let b = |x: bool| u32::from(x);

    // .set lines first: descriptor expressions may refer to them.
    set(&d.num_vgpr, t.num_vgpr);
    set(&d.num_agpr, t.num_agpr);
    set(&d.numbered_sgpr, t.numbered_sgpr);
    if d.uses_vcc.as_ref().is_some_and(|v| v.value == Some(0)) && t.uses_vcc {
        set(&d.uses_vcc, b(t.uses_vcc));
    }
    if d.uses_flat_scratch
        .as_ref()
        .is_some_and(|v| v.value == Some(0))
        && t.uses_flat_scratch
    {
        set(&d.uses_flat_scratch, b(t.uses_flat_scratch));
    }
    set(&d.next_free_vgpr, t.next_free_vgpr);
    set(&d.next_free_sgpr, t.next_free_sgpr);
    if let Some(acc) = t.accum_offset {
        set(&d.accum_offset, acc);
    }
    for (used, decl) in [
        (kb.used.vcc, &d.reserve_vcc),
        (kb.used.flat_scratch, &d.reserve_flat_scratch),
        (kb.used.xnack_mask, &d.reserve_xnack_mask),
    ] {
        if used && decl.as_ref().is_some_and(|v| v.value == Some(0)) {
            set(decl, 1);
        }
    }
    set(&d.vgpr_count, t.vgpr_count);
    set(&d.agpr_count, t.agpr_count);
    set(&d.sgpr_count, t.sgpr_count);

    // Missing counts of a hand-written kernel: fill them.
    if let Some(start) = d.descriptor_line {
        let indent = {
            let next = asm.lines.get(start + 1).map(|l| l.text()).unwrap_or("");
            let trimmed = next.trim_start();
            if trimmed.starts_with(".amdhsa_") {
                next[..next.len() - trimmed.len()].to_string()
            } else {
                "\t\t".to_string()
            }
        };
        let mut fill = |present: bool, name: &str, value: u32| {
            if !present {
                inserts.push((
                    start + 1,
                    format!("{indent}{name} {value}"),
                    format!("{name} {value} (added)"),
                ));
            }
        };
        fill(
            d.next_free_vgpr.is_some(),
            ".amdhsa_next_free_vgpr",
            t.next_free_vgpr,
        );
        fill(
            d.next_free_sgpr.is_some(),
            ".amdhsa_next_free_sgpr",
            t.next_free_sgpr,
        );
        if let Some(acc) = t.accum_offset {
            fill(d.accum_offset.is_some(), ".amdhsa_accum_offset", acc);
        }
    }
    if let Some((line, indent)) = &d.metadata_name {
        let mut fill = |present: bool, key: &str, value: u32| {
            if !present {
                inserts.push((
                    line + 1,
                    format!("{indent}{key}: {value}"),
                    format!("metadata `{key}` {value} (added)"),
                ));
            }
        };
        fill(d.vgpr_count.is_some(), ".vgpr_count", t.vgpr_count);
        fill(d.sgpr_count.is_some(), ".sgpr_count", t.sgpr_count);
        if isa.unified_agprs || isa.separate_agprs {
            fill(d.agpr_count.is_some(), ".agpr_count", t.agpr_count);
        }
    }

    // Hardware limits an update cannot fix.
    let max_vgpr = if isa.unified_agprs { 512 } else { 256 };
    if t.next_free_vgpr > max_vgpr {
        errors.push(
            Diagnostic::error(
                Code::TooManyVgprs,
                format!(
                    "kernel `{}` needs {} VGPRs, more than the {max_vgpr} of {}",
                    kb.kernel,
                    t.next_free_vgpr,
                    target.name()
                ),
            )
            .with_help("use fewer registers in the patch"),
        );
    }
    // AMDGPUAsmParser::calculateGPRBlocks: next_free_sgpr (without the
    // extra SGPRs) must not exceed getAddressableNumSGPRs.
    if t.next_free_sgpr > isa.addressable_sgprs() {
        errors.push(
            Diagnostic::error(
                Code::TooManySgprs,
                format!(
                    "kernel `{}` needs {} SGPRs, more than the {} {} can address",
                    kb.kernel,
                    t.next_free_sgpr,
                    isa.addressable_sgprs(),
                    target.name()
                ),
            )
            .with_help("use fewer SGPRs in the patch"),
        );
    }
    (edits, inserts, errors)
}
