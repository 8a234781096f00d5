//! The register budget's findings: each bound a declaration sets, checked
//! against the registers the instructions use, as diagnostics at the line that
//! oversteps it.

use super::*;
use crate::base::diag::Setting;

/// One register bound: indices must stay below `limit`.
pub(super) struct Bound<'a> {
    pub(super) limit: u32,
    pub(super) decl: &'a DeclaredValue,
    /// Extra words after the declaration, e.g. "- 6 extra SGPRs".
    pub(super) how: String,
    /// The value the declaration should have.
    pub(super) want: u32,
    /// Blame instructions beyond it (descriptor, `.set`), or only list it
    /// (metadata, checked against the `.set` counts).
    pub(super) blame: bool,
}

/// What a problem highlights on its line.
pub(super) enum Highlight {
    /// A register operand, as written.
    Operand(RegisterRef),
    /// The mnemonic (an implicit register use).
    Mnemonic,
}

impl RegUse {
    fn highlight(&self) -> Highlight {
        self.operand.map_or(Highlight::Mnemonic, Highlight::Operand)
    }
}

/// Everything wrong with one kernel, as diagnostics (no locations yet:
/// `(line, token span, label, diagnostic)`).
pub(super) struct Problem {
    pub(super) line: usize,
    pub(super) token: Option<Highlight>,
    pub(super) label: String,
    pub(super) diag: Diagnostic,
    pub(super) related: Vec<usize>,
}

pub(super) fn problems(
    kb: &KernelBudget,
    isa: &Isa,
    target: &TargetId,
    label: &str,
) -> Vec<Problem> {
    let d = &kb.declared;
    let u = &kb.used;
    let mut out = vec![];
    // The first help of a finding an update of the counts would fix says
    // how to fix it by hand; the caller, who knows how a register update is
    // asked for (the manifest's `registers` key, an option), adds that way
    // to it ([`Setting::UpdateRegisters`]).

    // --- usage beyond declarations -------------------------------------
    // The descriptor and the `.set` counts are blamed at the first
    // instruction beyond them; metadata counts describe the others and are
    // checked against them below (and listed here when short too).
    let tg = targets(kb, isa, target);
    let overuse = |class: RegClass,
                   bounds: Vec<Bound>,
                   unit: &str,
                   prefix: &str|
     -> Option<Problem> {
        let tight = bounds.iter().filter(|b| b.blame).min_by_key(|b| b.limit)?;
        let first = kb
            .uses
            .iter()
            .find(|r| r.class == class && r.last >= tight.limit)?;
        let needed = kb
            .uses
            .iter()
            .filter(|r| r.class == class)
            .map(|r| r.last + 1)
            .max()
            .unwrap_or(0);
        let reg = format!("{prefix}{}", first.last);
        let mut diag = Diagnostic::error(Code::RegisterBudgetExceeded, format!(
            "{label} uses {reg}, beyond its declared {unit} budget"
        ))
        .with_note(format!(
            "the kernel's instructions use {needed} {unit}s ({prefix}0–{prefix}{}); the assembler accepts this silently and the extra registers belong to another wave",
            needed - 1
        ));
        let short: Vec<&Bound> = bounds.iter().filter(|b| b.limit < needed).collect();
        let others: Vec<String> = short
            .iter()
            .filter(|b| !std::ptr::eq(**b, tight))
            .map(|b| format!("{}{} (at {{{}}})", b.decl, b.how, b.decl.line))
            .collect();
        if !others.is_empty() {
            diag = diag.with_note(format!("also too small: {}", others.join(", ")));
        }
        let raise: Vec<String> = short
            .iter()
            .map(|b| format!("{} to {}", b.decl.what, b.want))
            .collect();
        diag = diag
            .with_help(format!("raise {}", raise.join(", ")))
            .about(Setting::UpdateRegisters);
        Some(Problem {
            line: first.line,
            token: Some(first.highlight()),
            label: format!("{reg} is beyond {}{}", tight.decl, tight.how),
            diag,
            related: bounds.iter().map(|b| b.decl.line).collect(),
        })
    };
    fn bound(v: &Option<DeclaredValue>, want: u32, blame: bool) -> Option<Bound<'_>> {
        let decl = v.as_ref()?;
        Some(Bound {
            limit: decl.value?,
            decl,
            how: String::new(),
            want,
            blame,
        })
    }

    // Arch VGPRs.
    let mut vb: Vec<Bound> = vec![];
    vb.extend(bound(&d.next_free_vgpr, tg.next_free_vgpr, true));
    if isa.unified_agprs {
        vb.extend(bound(&d.accum_offset, tg.accum_offset.unwrap_or(0), true));
    }
    vb.extend(bound(&d.num_vgpr, tg.num_vgpr, true));
    vb.extend(bound(&d.vgpr_count, tg.vgpr_count, false));
    let vgpr_over = overuse(RegClass::Vgpr, vb, "VGPR", "v");

    // AGPRs.
    let mut ab: Vec<Bound> = vec![];
    if isa.unified_agprs {
        if let (Some(nf), Some(acc)) = (&d.next_free_vgpr, &d.accum_offset) {
            if let (Some(n), Some(a)) = (nf.value, acc.value) {
                ab.push(Bound {
                    limit: n.saturating_sub(a),
                    decl: nf,
                    how: format!(" (AGPRs start at .amdhsa_accum_offset {a})"),
                    want: tg.next_free_vgpr,
                    blame: true,
                });
            }
        }
    } else if isa.separate_agprs {
        ab.extend(bound(&d.next_free_vgpr, tg.next_free_vgpr, true));
    }
    ab.extend(bound(&d.num_agpr, tg.num_agpr, true));
    ab.extend(bound(&d.agpr_count, tg.agpr_count, false));
    // Metadata `.vgpr_count` covers the AGPRs too (totalnumvgprs).
    if let Some(vc) = &d.vgpr_count {
        if let Some(n) = vc.value {
            if isa.unified_agprs {
                let start = tg.num_vgpr.div_ceil(4) * 4;
                ab.push(Bound {
                    limit: n.saturating_sub(start),
                    decl: vc,
                    how: format!(" (AGPRs counted after alignTo(num_vgpr, 4) = {start})"),
                    want: tg.vgpr_count,
                    blame: false,
                });
            } else if isa.separate_agprs {
                ab.extend(bound(&d.vgpr_count, tg.vgpr_count, false));
            }
        }
    }
    let agpr_over = overuse(RegClass::Agpr, ab, "AGPR", "a");

    // SGPRs.
    let xnack = xnack_on_or_any(isa, target);
    let meta_vcc = flag(&d.uses_vcc).unwrap_or(u.vcc);
    let meta_flat = flag(&d.uses_flat_scratch).unwrap_or(u.flat_scratch);
    let meta_extra = isa.extra_sgprs(meta_vcc, meta_flat, xnack);
    let mut sb: Vec<Bound> = vec![];
    sb.extend(bound(&d.next_free_sgpr, tg.next_free_sgpr, true));
    sb.extend(bound(&d.numbered_sgpr, tg.numbered_sgpr, true));
    if let Some(sc) = &d.sgpr_count {
        if let Some(v) = sc.value {
            sb.push(Bound {
                limit: v.saturating_sub(meta_extra),
                decl: sc,
                how: format!(" - {meta_extra} extra SGPRs"),
                want: tg.sgpr_count,
                blame: false,
            });
        }
    }
    let sgpr_over = overuse(RegClass::Sgpr, sb, "SGPR", "s");
    // Without `.set` counts, metadata is compared with the usage (unless
    // the usage already exceeds the descriptor: reported above).
    let (sv_fallback, sa_fallback, ss_fallback) = (
        (vgpr_over.is_none() && agpr_over.is_none()).then_some(u.vgpr),
        agpr_over.is_none().then_some(u.agpr),
        sgpr_over.is_none().then_some(u.sgpr),
    );
    out.extend(vgpr_over);
    out.extend(agpr_over);
    out.extend(sgpr_over);

    // Special registers that must be reserved.
    let special = [
        (RegClass::Vcc, "vcc", &d.reserve_vcc, &d.uses_vcc),
        (
            RegClass::FlatScratch,
            "flat_scratch",
            &d.reserve_flat_scratch,
            &d.uses_flat_scratch,
        ),
        (
            RegClass::XnackMask,
            "xnack_mask",
            &d.reserve_xnack_mask,
            &None,
        ),
    ];
    for (class, name, reserve, set) in special {
        let Some(first) = kb.uses.iter().find(|r| r.class == class) else {
            continue;
        };
        for decl in [reserve, set].into_iter().flatten() {
            if decl.value == Some(0) {
                out.push(Problem {
                    line: first.line,
                    token: Some(first.highlight()),
                    label: format!("{name} is used but {decl}"),
                    diag: Diagnostic::error(
                        Code::ExtraSgprsNotDeclared,
                        format!("{label} uses {name}, but declares {decl}"),
                    )
                    .with_note(format!(
                        "without it the hardware does not allocate the extra SGPRs behind {name}"
                    ))
                    .with_help(format!("set {} to 1", decl.what))
                    .about(Setting::UpdateRegisters),
                    related: vec![decl.line],
                });
            }
        }
    }

    // Counts this checker cannot evaluate are not checked: say so.
    for decl in [
        &d.next_free_vgpr,
        &d.next_free_sgpr,
        &d.accum_offset,
        &d.num_vgpr,
        &d.num_agpr,
        &d.numbered_sgpr,
    ]
    .into_iter()
    .flatten()
    .filter(|v| v.value.is_none())
    {
        out.push(Problem {
            line: decl.line,
            token: None,
            label: "not evaluated".into(),
            diag: Diagnostic::warning(Code::RegisterCountUnknown, format!(
                "{label}: cannot evaluate {decl}; registers beyond it are not checked"
            ))
            .with_note("understood: numbers, `.set` symbols, + - * / % << >> & | ^ ~, max, or, alignto, totalnumvgprs")
            .with_help(format!("write {} as a number", decl.what)),
            related: vec![],
        });
    }

    // --- declarations that contradict each other ------------------------
    let num = |v: &Option<DeclaredValue>| v.as_ref().and_then(|v| v.value);
    let mut inconsistent = |decl: &DeclaredValue, should: String, because: String| {
        out.push(Problem {
            line: decl.line,
            token: None,
            label: format!("should be at least {should}"),
            diag: Diagnostic::error(
                Code::RegisterCountContradiction,
                format!("{label}: {decl} contradicts the kernel's other register counts"),
            )
            .with_note(because)
            .with_help(format!("set {} to {should}", decl.what))
            .about(Setting::UpdateRegisters),
            related: vec![],
        });
    };
    let (sv, sa, ss) = (num(&d.num_vgpr), num(&d.num_agpr), num(&d.numbered_sgpr));
    let (mv, ma, ms) = (sv.or(sv_fallback), sa.or(sa_fallback), ss.or(ss_fallback));
    if let (Some(v), Some(nf)) = (sv, &d.next_free_vgpr) {
        let combined = isa.combined_vgprs(v, sa.unwrap_or(0));
        if nf.value.is_some_and(|n| n < combined) {
            inconsistent(
                nf,
                combined.to_string(),
                format!(
                    "the .set counts say {v} VGPRs and {} AGPRs: {combined} registers of the VGPR file",
                    sa.unwrap_or(0)
                ),
            );
        }
    }
    if isa.unified_agprs {
        if let (Some(acc), Some(v)) = (&d.accum_offset, sv) {
            if acc.value.is_some_and(|a| a < v) {
                inconsistent(
                    acc,
                    (v.div_ceil(4) * 4).to_string(),
                    format!(
                        "arch VGPRs v0–v{} must stay below the AGPRs",
                        v.saturating_sub(1)
                    ),
                );
            }
        }
        if let (Some(acc), Some(nf), Some(a)) = (num(&d.accum_offset), &d.next_free_vgpr, sa) {
            if a > 0 && nf.value.is_some_and(|n| n < acc + a) {
                inconsistent(
                    nf,
                    (acc + a).to_string(),
                    format!("{a} AGPRs start at .amdhsa_accum_offset {acc}"),
                );
            }
        }
    }
    if let (Some(s), Some(nf)) = (ss, &d.next_free_sgpr) {
        if nf.value.is_some_and(|n| n < s) {
            inconsistent(nf, s.to_string(), format!("`.numbered_sgpr` is {s}"));
        }
    }
    if let (Some(v), Some(vc)) = (mv, &d.vgpr_count) {
        let combined = isa.combined_vgprs(v, ma.unwrap_or(0)).max(1);
        if vc.value.is_some_and(|n| n < combined) {
            inconsistent(
                vc,
                combined.to_string(),
                format!(
                    "`.vgpr_count` is totalnumvgprs(num_agpr {}, num_vgpr {v})",
                    ma.unwrap_or(0)
                ),
            );
        }
    }
    if let (Some(a), Some(ac)) = (ma, &d.agpr_count) {
        if ac.value.is_some_and(|n| n < a) {
            inconsistent(ac, a.to_string(), format!("`.num_agpr` is {a}"));
        }
    }
    if let (Some(s), Some(sc)) = (ms, &d.sgpr_count) {
        if sc.value.is_some_and(|n| n < s + meta_extra) {
            inconsistent(
                sc,
                (s + meta_extra).to_string(),
                format!(
                    "`.sgpr_count` is numbered_sgpr {s} + {meta_extra} extra SGPRs on {} (VCC {}, flat scratch {}, xnack {})",
                    target.name(),
                    if meta_vcc { "used" } else { "unused" },
                    if meta_flat || isa.architected_flat_scratch { "counted" } else { "unused" },
                    if xnack { "on or any" } else { "off" },
                ),
            );
        }
    }
    out
}

/// Render problems at their origins in `traced`.
pub(super) fn diagnose(traced: &Document, problems: Vec<Problem>) -> Vec<Diagnostic> {
    problems
        .into_iter()
        .map(|p| {
            let text = traced.text(p.line);
            let token = match p.token {
                Some(Highlight::Operand(r)) => Some(r.to_string()),
                Some(Highlight::Mnemonic) => {
                    traced.instruction(p.line).map(|i| i.mnemonic.to_string())
                }
                None => None,
            };
            let span = token.as_deref().and_then(|t| {
                let start = find_token(text, t)?;
                Some((start, start + t.len()))
            });
            let mut diag = p.diag;
            // Replace `{N}` placeholders (line indices) by origins.
            for n in &mut diag.notes {
                for l in &p.related {
                    *n = n.replace(&format!("{{{l}}}"), &traced.origin_text(*l));
                }
            }
            traced.locate(diag, p.line, span, p.label)
        })
        .collect()
}

/// Byte offset of register token `tok` in `text`, not inside a longer word.
pub(super) fn find_token(text: &str, tok: &str) -> Option<usize> {
    let code = crate::base::parse::strip_comment(text);
    let mut from = 0;
    while let Some(i) = code[from..].find(tok) {
        let s = from + i;
        let e = s + tok.len();
        let before = code[..s].chars().next_back();
        let after = code[e..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !word(before) && !word(after) {
            return Some(s);
        }
        from = e;
    }
    None
}
