//! Wait-counter checks: `s_waitcnt`, `s_waitcnt_vscnt`, GFX12 `s_wait_*cnt`.
//!
//! Counter names, widths and encodings live in `crate::base::isa::waitcnt`.
//!
//! `llvm-mc-22` rejects too large `vmcnt(N)`/`lgkmcnt(N)`, but silently
//! accepts (and truncates in hardware) `s_waitcnt_vscnt null, 64` or
//! `s_wait_loadcnt 64`; it also accepts the GFX11 `s_waitcnt` on GFX12. Both
//! are reported here, at the line's origin.
//!
//! The "waits for nothing" analysis is deliberately light: inside one basic
//! block, after a wait that bounds the outstanding vector-memory loads, each
//! later vector-memory instruction raises the bound by one; a later
//! `vmcnt(N)` / `s_wait_loadcnt N` with N at or above the bound cannot block.
//! Every vector-memory instruction is counted (stores too before GFX10), so
//! the bound is an over-approximation and the warning is never spurious.

use std::collections::HashMap;

use gcn_embed::{Generation, TargetId};

use crate::base::diag::{Code, Diagnostic};
use crate::base::document::Document;
use crate::base::isa::waitcnt::decode_waitcnt;
use crate::base::isa::waitcnt::{waitcnt_limits, Counter, WaitInstruction, WaitcntLimits};
use crate::base::parse::{AsmFile, Instruction};

/// One wait found on a line: which counter, which value, where in the line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wait {
    counter: Counter,
    value: u32,
    /// Byte range of the value (or of the whole operand) in the line text.
    span: (usize, usize),
    /// `vmcnt_sat(N)`: clamped by the assembler, never out of range.
    saturating: bool,
}

/// A finding before it is placed in a file.
#[derive(Debug, Clone)]
struct Finding {
    line: usize,
    span: Option<(usize, usize)>,
    diag: Diagnostic,
    label: String,
    /// A note about another line: (line index, text with `{at}` where its
    /// location goes).
    related: Option<(usize, String)>,
}

/// Check every wait instruction of `asm` for `target`, reporting each
/// finding at the line's origin (dump, patch hunk, rule).
pub fn check_waitcnt(asm: &Document, target: &TargetId) -> Vec<Diagnostic> {
    findings(asm.asm(), target)
        .into_iter()
        .map(|f| {
            let mut diag = f.diag;
            if let Some((l, note)) = &f.related {
                diag = diag.with_note(note.replace("{at}", &asm.origin_text(*l)));
            }
            asm.locate(diag, f.line, f.span, f.label)
        })
        .collect()
}

/// A wait count: [`crate::base::parse::parse_int`], non-negative, 32 bits.
fn parse_int(s: &str) -> Option<u32> {
    crate::base::parse::parse_int(s.trim()).and_then(|v| u32::try_from(v).ok())
}

/// A wait count as the assembler evaluates it: a number, or an absolute
/// expression of numbers and `.set` symbols (`vmcnt(VMW)`,
/// `s_waitcnt 0x3f | (0 << 8)`).
fn eval_count(s: &str, symbols: &HashMap<String, String>) -> Option<u32> {
    parse_int(s).or_else(|| {
        crate::stage::check::expr::eval(s.trim(), symbols, false)
            .and_then(|v| u32::try_from(v).ok())
    })
}

/// Byte range of the operand text: everything after the mnemonic, before a
/// comment.
fn operand_text(text: &str, mnemonic: &str) -> Option<(usize, usize)> {
    let code = crate::base::parse::strip_comment(text);
    let start = code.find(mnemonic)? + mnemonic.len();
    Some((start, code.len()))
}

/// Which GFX12 instruction replaces a pre-GFX12 counter.
fn gfx12_replacement(counter: &str) -> &'static str {
    match counter {
        "vmcnt" => "s_wait_loadcnt (and s_wait_samplecnt / s_wait_bvhcnt for image sample / BVH)",
        "vscnt" => "s_wait_storecnt",
        "expcnt" => "s_wait_expcnt",
        _ => "s_wait_dscnt (LDS) / s_wait_kmcnt (SMEM, messages)",
    }
}

/// Does this instruction increment the vector-memory load counter
/// (`vmcnt`; `loadcnt` on gfx12)? Over-approximates (see module docs).
fn counts_vm_load(mnemonic: &str, generation: Generation) -> bool {
    const VMEM: [&str; 6] = [
        "buffer_", "global_", "flat_", "scratch_", "image_", "tbuffer_",
    ];
    if !VMEM.iter().any(|p| mnemonic.starts_with(p)) {
        return false;
    }
    // From gfx10 stores go to vscnt / storecnt.
    !(generation >= Generation::Gfx10_1 && mnemonic.contains("_store"))
}

fn ends_block(mnemonic: &str) -> bool {
    mnemonic.starts_with("s_branch")
        || mnemonic.starts_with("s_cbranch")
        || mnemonic.starts_with("s_setpc")
        || mnemonic.starts_with("s_swappc")
        || mnemonic.starts_with("s_call")
        || mnemonic == "s_endpgm"
}

/// The counters one wait instruction waits for, with their values and the
/// byte range of each value in `text` (used by the hazard analysis; counters
/// the instruction does not name are not waited for). Malformed or misplaced
/// waits yield what could be read; [`check_waitcnt`] reports them.
pub(crate) fn wait_values(
    inst: &Instruction,
    text: &str,
    limits: &WaitcntLimits,
    symbols: &HashMap<String, String>,
) -> Vec<(Counter, u32, (usize, usize))> {
    let mut ignored = Vec::new();
    waits_of(inst, text, 0, limits, symbols, &mut ignored)
        .into_iter()
        .map(|w| {
            (
                w.counter,
                w.value.min(limits.max(w.counter).unwrap_or(0)),
                w.span,
            )
        })
        .collect()
}

/// Parse the waits of one instruction; errors for unknown or misplaced
/// counters go to `out`.
fn waits_of(
    inst: &Instruction,
    text: &str,
    line: usize,
    limits: &WaitcntLimits,
    symbols: &HashMap<String, String>,
    out: &mut Vec<Finding>,
) -> Vec<Wait> {
    let m = inst.mnemonic.as_str();
    let Some((ops_start, ops_end)) = operand_text(text, m) else {
        return vec![];
    };
    let ops = &text[ops_start..ops_end];
    let g = limits.generation;
    let gfx12 = limits.split_counters();
    let mut waits = vec![];
    let mnemonic_span = {
        let s = text.find(m).unwrap_or(0);
        Some((s, s + m.len()))
    };
    match WaitInstruction::of(m) {
        Some(WaitInstruction::Combined) => {
            let mut any_func = false;
            let mut gfx11_waits: Vec<(String, String)> = vec![];
            let mut rest = ops;
            let mut offset = ops_start;
            while let Some(open) = rest.find('(') {
                let name_start = rest[..open]
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(0, |i| i + 1);
                let name = rest[name_start..open].trim();
                if name.is_empty() {
                    // `s_waitcnt 0x3f | (0 << 8)`: a parenthesized
                    // expression, not a counter.
                    break;
                }
                let Some(close) = rest[open..].find(')').map(|c| open + c) else {
                    break;
                };
                any_func = true;
                let arg = &rest[open + 1..close];
                let arg_span = (offset + open + 1, offset + close);
                let (base, saturating) = match name.strip_suffix("_sat") {
                    Some(b) => (b, true),
                    None => (name, false),
                };
                let full_span = Some((offset + name_start, offset + close + 1));
                if gfx12 {
                    gfx11_waits.push((base.to_string(), arg.trim().to_string()));
                } else {
                    match Counter::from_name(base).filter(|c| {
                        matches!(c, Counter::Vmcnt | Counter::Expcnt | Counter::Lgkmcnt)
                    }) {
                        Some(counter) => {
                            if let Some(value) = eval_count(arg, symbols) {
                                waits.push(Wait {
                                    counter,
                                    value,
                                    span: arg_span,
                                    saturating,
                                });
                            }
                        }
                        None => out.push(Finding {
                            related: None,
                            line,
                            span: full_span,
                            label: "unknown counter".into(),
                            diag: Diagnostic::error(
                                Code::UnknownWaitCounter,
                                format!("`{name}` is not an `s_waitcnt` counter on {}", g.label()),
                            )
                            .with_help(if base == "vscnt" {
                                "wait for stores with `s_waitcnt_vscnt null, N`".to_string()
                            } else {
                                "`s_waitcnt` takes vmcnt(N), expcnt(N) and lgkmcnt(N)".to_string()
                            }),
                        }),
                    }
                }
                offset += close + 1;
                rest = &rest[close + 1..];
            }
            if !gfx11_waits.is_empty() {
                let replacement: Vec<String> = gfx11_waits
                    .iter()
                    .map(|(c, v)| match c.as_str() {
                        "vmcnt" => format!("`s_wait_loadcnt {v}`"),
                        "expcnt" => format!("`s_wait_expcnt {v}`"),
                        "lgkmcnt" => {
                            format!("`s_wait_dscnt {v}` (LDS) and/or `s_wait_kmcnt {v}` (SMEM)")
                        }
                        other => format!("the GFX12 wait for `{other}`"),
                    })
                    .collect();
                let used: Vec<&str> = gfx11_waits.iter().map(|(c, _)| c.as_str()).collect();
                out.push(Finding {
                    related: None,
                    line,
                    span: Some((ops_start + (ops.len() - ops.trim_start().len()), ops_start + ops.trim_end().len())),
                    label: format!("{} are GFX11 counters", used.join(", ")),
                    diag: Diagnostic::error(Code::WaitInstructionNotOnTarget, format!(
                        "`s_waitcnt` does not exist on {}: it has separate s_wait_*cnt instructions",
                        g.label()
                    ))
                    .with_note("GFX12 splits vmcnt into loadcnt / samplecnt / bvhcnt (and vscnt into storecnt), lgkmcnt into dscnt / kmcnt")
                    .with_help(format!("write {}", replacement.join(" and "))),
                });
            }
            if !any_func && !gfx12 {
                if let Some(imm) = eval_count(ops, symbols) {
                    if imm > 0xffff {
                        out.push(Finding {
                            related: None,
                            line,
                            span: Some((ops_start, ops_end)),
                            label: "does not fit 16 bits".into(),
                            diag: Diagnostic::error(
                                Code::WaitImmediateTooWide,
                                format!("`s_waitcnt {imm:#x}`: the immediate is 16 bits"),
                            )
                            .with_help(
                                "write the counters by name: `s_waitcnt vmcnt(N) lgkmcnt(N)`",
                            ),
                        });
                    } else {
                        let span = {
                            let t = ops.trim_start();
                            let s = ops_start + (ops.len() - t.len());
                            (s, s + t.trim_end().len())
                        };
                        waits.extend(decode_waitcnt(g, imm).into_iter().map(|(counter, value)| {
                            Wait {
                                counter,
                                value,
                                span,
                                saturating: true,
                            }
                        }));
                    }
                }
            } else if !any_func && gfx12 {
                out.push(Finding {
 related: None,
                    line,
                    span: mnemonic_span,
                    label: "GFX11 wait".into(),
                    diag: Diagnostic::error(Code::WaitInstructionNotOnTarget, format!(
                        "`s_waitcnt` does not exist on {}: use s_wait_loadcnt / s_wait_storecnt / s_wait_dscnt / s_wait_kmcnt / s_wait_expcnt",
                        g.label()
                    )),
                });
            }
        }
        Some(WaitInstruction::Register(counter)) => {
            let cname = counter.name();
            if gfx12 || g < Generation::Gfx10_1 {
                out.push(Finding {
                    related: None,
                    line,
                    span: mnemonic_span,
                    label: format!("not a {} instruction", g.label()),
                    diag: Diagnostic::error(
                        Code::WaitInstructionNotOnTarget,
                        format!("`{m}` does not exist on {}", g.label()),
                    )
                    .with_help(if gfx12 {
                        format!("use {}", gfx12_replacement(cname))
                    } else {
                        format!(
                            "use `s_waitcnt {}(N)`",
                            if cname == "vscnt" { "vmcnt" } else { cname }
                        )
                    }),
                });
            } else if let Some(comma) = ops.rfind(',') {
                let arg = &ops[comma + 1..];
                // The count is the SGPR's value plus the immediate: only
                // `null` (zero) is known, any other SGPR makes the wait
                // unknown, and the analysis does not count on it.
                let sreg = ops[..comma].trim();
                let known_sgpr = sreg == "null" || sreg == "sgpr_null";
                if let Some(value) = eval_count(arg, symbols).filter(|_| known_sgpr) {
                    let lead = arg.len() - arg.trim_start().len();
                    let s = ops_start + comma + 1 + lead;
                    waits.push(Wait {
                        counter,
                        value,
                        span: (s, s + arg.trim().len()),
                        saturating: false,
                    });
                }
            }
        }
        Some(kind @ (WaitInstruction::Split(_) | WaitInstruction::SplitPair(..))) => {
            let names = &m["s_wait_".len()..];
            let counters = match kind {
                WaitInstruction::SplitPair(a, b) => vec![a, b],
                WaitInstruction::Split(c) => vec![c],
                _ => vec![],
            };
            if !gfx12 {
                out.push(Finding {
                    related: None,
                    line,
                    span: mnemonic_span,
                    label: format!("GFX12 instruction on {}", g.label()),
                    diag: Diagnostic::error(
                        Code::WaitInstructionNotOnTarget,
                        format!("`{m}` does not exist on {}", g.label()),
                    )
                    .with_help(match names {
                        "loadcnt" => "use `s_waitcnt vmcnt(N)`".to_string(),
                        "storecnt" if g >= Generation::Gfx10_1 => {
                            "use `s_waitcnt_vscnt null, N`".to_string()
                        }
                        "storecnt" => {
                            "use `s_waitcnt vmcnt(N)` (stores count in vmcnt before GFX10)"
                                .to_string()
                        }
                        "dscnt" | "kmcnt" => "use `s_waitcnt lgkmcnt(N)`".to_string(),
                        "expcnt" => "use `s_waitcnt expcnt(N)`".to_string(),
                        _ => "use `s_waitcnt`".to_string(),
                    }),
                });
                return waits;
            }
            let t = ops.trim();
            let lead = ops.len() - ops.trim_start().len();
            let span = (ops_start + lead, ops_start + lead + t.len());
            if let Some(v) = eval_count(t, symbols) {
                if counters.len() == 2 {
                    // s_wait_loadcnt_dscnt: loadcnt/storecnt in bits 13:8, dscnt in 5:0.
                    if v > 0xffff {
                        waits.push(Wait {
                            counter: counters[0],
                            value: v,
                            span,
                            saturating: false,
                        });
                    } else {
                        waits.push(Wait {
                            counter: counters[0],
                            value: v >> 8,
                            span,
                            saturating: false,
                        });
                        waits.push(Wait {
                            counter: counters[1],
                            value: v & 0xff,
                            span,
                            saturating: false,
                        });
                    }
                } else if let Some(&c) = counters.first() {
                    waits.push(Wait {
                        counter: c,
                        value: v,
                        span,
                        saturating: false,
                    });
                }
            }
        }
        _ => {}
    }
    waits
}

fn findings(asm: &AsmFile, target: &TargetId) -> Vec<Finding> {
    let limits = waitcnt_limits(target.processor.generation);
    let g = limits.generation;
    let load_counter = if limits.split_counters() {
        Counter::Loadcnt
    } else {
        Counter::Vmcnt
    };
    let mut out = vec![];
    let symbols = crate::stage::check::expr::set_symbols(asm);
    // Upper bound of outstanding vector-memory loads, with the line of the
    // wait that established it; None = unknown (start of a block).
    let mut bound: Option<(u32, usize)> = None;
    for (idx, line) in asm.lines.iter().enumerate() {
        if line.label().is_some() {
            bound = None;
        }
        let Some(inst) = line.instruction() else {
            continue;
        };
        let waits = waits_of(inst, line.text(), idx, &limits, &symbols, &mut out);
        for w in &waits {
            match limits.max(w.counter) {
                Some(max) if w.value > max && !w.saturating => out.push(Finding {
                    related: None,
                    line: idx,
                    span: Some(w.span),
                    label: format!("{} is at most {max} on {}", w.counter, g.label()),
                    diag: Diagnostic::error(
                        Code::WaitValueTooLarge,
                        format!(
                            "{} value {} does not fit: {} counts up to {max} on {}",
                            w.counter,
                            w.value,
                            w.counter,
                            g.label()
                        ),
                    )
                    .with_note(format!(
                        "the hardware keeps only the low bits: {} would wait for {}",
                        w.value,
                        w.value & max
                    ))
                    .with_help(format!(
                        "use a value between 0 and {max}, e.g. `{}`",
                        limits
                            .wait_instruction(w.counter, max.min(w.value))
                            .unwrap_or_default()
                    )),
                }),
                _ => {}
            }
        }
        if let Some(w) = waits.iter().find(|w| w.counter == load_counter) {
            if let Some((b, since)) = bound {
                if w.value >= b && !(w.saturating && waits.len() > 1) {
                    out.push(Finding {
                        line: idx,
                        span: Some(w.span),
                        label: format!("at most {b} outstanding"),
                        related: Some((since, format!(
                            "the wait at {{at}} left at most {} outstanding, and {} vector memory instruction{} issued since in this block",
                            b.saturating_sub(count_since(asm, since, idx, g)),
                            count_since(asm, since, idx, g),
                            if count_since(asm, since, idx, g) == 1 { " was" } else { "s were" }
                        ))),
                        diag: Diagnostic::warning(Code::WaitForNothing, format!(
                            "this {} wait waits for nothing: at most {b} vector memory load{} can be outstanding here",
                            w.counter,
                            if b == 1 { "" } else { "s" }
                        ))
                        .with_help(if b == 0 {
                            // Nothing can be outstanding: there is no lower count.
                            "delete the wait: no vector memory load is outstanding here".to_string()
                        } else {
                            format!(
                                "lower the count below {b} to wait for the load{} it should cover, or delete the wait",
                                if b == 1 { "" } else { "s" }
                            )
                        }),
                    });
                }
            }
            let prev = bound.map_or(u32::MAX, |(b, _)| b);
            bound = Some((w.value.min(prev), idx));
        }
        if counts_vm_load(&inst.mnemonic, g) {
            bound = bound.map(|(b, l)| (b.saturating_add(1), l));
        }
        if ends_block(&inst.mnemonic) {
            bound = None;
        }
    }
    out
}

fn count_since(asm: &AsmFile, from: usize, to: usize, g: Generation) -> u32 {
    asm.lines[from + 1..to]
        .iter()
        .filter_map(|l| l.instruction())
        .filter(|i| counts_vm_load(&i.mnemonic, g))
        .count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str) -> TargetId {
        TargetId::parse(name).expect("known target")
    }

    fn msgs(src: &str, target: &str) -> Vec<String> {
        check_waitcnt(&Document::from_source(src, "<asm>"), &t(target))
            .iter()
            .map(|d| format!("{:?}: {}", d.severity, d.message))
            .collect()
    }

    #[test]
    fn flags_out_of_range_and_wrong_generation() {
        assert!(msgs("\ts_waitcnt vmcnt(63) lgkmcnt(15)\n", "gfx942").is_empty());
        assert_eq!(msgs("\ts_waitcnt lgkmcnt(16)\n", "gfx942").len(), 1);
        assert!(msgs("\ts_waitcnt lgkmcnt(16)\n", "gfx1100").is_empty());
        assert_eq!(msgs("\ts_waitcnt_vscnt null, 0x40\n", "gfx1100").len(), 1);
        assert_eq!(msgs("\ts_waitcnt_vscnt null, 0x0\n", "gfx942").len(), 1);
        assert_eq!(msgs("\ts_wait_kmcnt 0x20\n", "gfx1201").len(), 1);
        assert!(msgs("\ts_wait_kmcnt 0x1f\n", "gfx1201").is_empty());
        assert!(msgs("\ts_wait_loadcnt_dscnt 0x3f3f\n", "gfx1201").is_empty());
        assert_eq!(msgs("\ts_wait_loadcnt_dscnt 0x4000\n", "gfx1201").len(), 1);
        assert_eq!(msgs("\ts_waitcnt vmcnt(0)\n", "gfx1201").len(), 1);
        assert_eq!(msgs("\ts_wait_loadcnt 0x0\n", "gfx942").len(), 1);
        assert!(msgs("\ts_waitcnt vmcnt_sat(100)\n", "gfx942").is_empty());
        assert!(msgs("\ts_waitcnt 0xffff\n", "gfx942").is_empty());
        assert_eq!(msgs("\ts_waitcnt foocnt(1)\n", "gfx942").len(), 1);
    }

    #[test]
    fn warns_for_waits_that_cannot_block() {
        let src = "k:\n\ts_waitcnt vmcnt(0)\n\tglobal_load_dword v1, v[2:3], off\n\tglobal_load_dword v4, v[2:3], off\n\ts_waitcnt vmcnt(2)\n\ts_waitcnt vmcnt(1)\n";
        let m = msgs(src, "gfx942");
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].starts_with("Warning: this vmcnt wait waits for nothing: at most 2"),
            "{m:?}"
        );
        // Unknown bound at block start: no warning; a label resets the bound.
        assert!(msgs(
            "k:\n\tglobal_load_dword v1, v[2:3], off\n\ts_waitcnt vmcnt(5)\n",
            "gfx942"
        )
        .is_empty());
        let src = "k:\n\ts_waitcnt vmcnt(0)\n.LBB0_1:\n\ts_waitcnt vmcnt(0)\n";
        assert!(msgs(src, "gfx942").is_empty());
        // gfx12: loadcnt.
        let src =
            "k:\n\ts_wait_loadcnt 0x0\n\tglobal_load_b32 v1, v[2:3], off\n\ts_wait_loadcnt 0x1\n";
        assert_eq!(msgs(src, "gfx1201").len(), 1);
    }
}
