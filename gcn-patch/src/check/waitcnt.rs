//! Wait-counter checks: `s_waitcnt`, `s_waitcnt_vscnt`, GFX12 `s_wait_*cnt`.
//!
//! Counter widths come from `llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp`
//! (`getVmcntBitWidthLo/Hi`, `getExpcntBitWidth`, `getLgkmcntBitWidth`,
//! `getStorecntBitWidth`, `getLoadcntBitWidth`, `getDscntBitWidth`,
//! `getKmcntBitWidth`, `getSamplecntBitWidth`, `getBvhcntBitWidth`):
//!
//! | generation | vmcnt | expcnt | lgkmcnt | vscnt | loadcnt | storecnt | dscnt | kmcnt | samplecnt | bvhcnt |
//! |---|---|---|---|---|---|---|---|---|---|---|
//! | gfx6–gfx8 | 15 | 7 | 15 | – | – | – | – | – | – | – |
//! | gfx9 | 63 | 7 | 15 | – | – | – | – | – | – | – |
//! | gfx10 | 63 | 7 | 63 | 63 | – | – | – | – | – | – |
//! | gfx11 | 63 | 7 | 63 | 63 | – | – | – | – | – | – |
//! | gfx12 | – | 7 | – | – | 63 | 63 | 63 | 31 | 63 | 7 |
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

use std::fmt;
use std::path::PathBuf;

use gcn_embed::{Generation, TargetId};

use crate::diag::{Diagnostic, Location};
use crate::parse::{AsmFile, Instruction};
use crate::provenance::{Origin, Traced};

/// One hardware wait counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// Vector memory operations (gfx6–gfx11; loads only on gfx10+).
    Vmcnt,
    /// Exports and GDS.
    Expcnt,
    /// LDS, GDS, constant (SMEM) and message operations (gfx6–gfx11).
    Lgkmcnt,
    /// Vector memory stores (gfx10, gfx11: `s_waitcnt_vscnt`).
    Vscnt,
    /// Vector memory loads (gfx12).
    Loadcnt,
    /// Vector memory stores (gfx12).
    Storecnt,
    /// Image sample operations (gfx12).
    Samplecnt,
    /// BVH operations (gfx12).
    Bvhcnt,
    /// LDS operations (gfx12).
    Dscnt,
    /// SMEM and message operations (gfx12).
    Kmcnt,
}

impl Counter {
    /// The counter's assembler name, e.g. `vmcnt`.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Vmcnt => "vmcnt",
            Counter::Expcnt => "expcnt",
            Counter::Lgkmcnt => "lgkmcnt",
            Counter::Vscnt => "vscnt",
            Counter::Loadcnt => "loadcnt",
            Counter::Storecnt => "storecnt",
            Counter::Samplecnt => "samplecnt",
            Counter::Bvhcnt => "bvhcnt",
            Counter::Dscnt => "dscnt",
            Counter::Kmcnt => "kmcnt",
        }
    }

    /// The counter named `name` (`vmcnt`, `loadcnt`, …), if any.
    pub fn from_name(name: &str) -> Option<Counter> {
        Some(match name {
            "vmcnt" => Counter::Vmcnt,
            "expcnt" => Counter::Expcnt,
            "lgkmcnt" => Counter::Lgkmcnt,
            "vscnt" => Counter::Vscnt,
            "loadcnt" => Counter::Loadcnt,
            "storecnt" => Counter::Storecnt,
            "samplecnt" => Counter::Samplecnt,
            "bvhcnt" => Counter::Bvhcnt,
            "dscnt" => Counter::Dscnt,
            "kmcnt" => Counter::Kmcnt,
            _ => return None,
        })
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The largest value of each wait counter on one generation (`None`: the
/// generation has no such counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitcntLimits {
    /// The generation.
    pub generation: Generation,
    /// `vmcnt` (gfx6–gfx11).
    pub vmcnt: Option<u32>,
    /// `expcnt` (all).
    pub expcnt: Option<u32>,
    /// `lgkmcnt` (gfx6–gfx11).
    pub lgkmcnt: Option<u32>,
    /// `vscnt` (gfx10, gfx11).
    pub vscnt: Option<u32>,
    /// `loadcnt` (gfx12).
    pub loadcnt: Option<u32>,
    /// `storecnt` (gfx12).
    pub storecnt: Option<u32>,
    /// `samplecnt` (gfx12).
    pub samplecnt: Option<u32>,
    /// `bvhcnt` (gfx12).
    pub bvhcnt: Option<u32>,
    /// `dscnt` (gfx12).
    pub dscnt: Option<u32>,
    /// `kmcnt` (gfx12).
    pub kmcnt: Option<u32>,
}

impl WaitcntLimits {
    /// The largest value of `counter`, if the generation has it.
    pub fn max(&self, counter: Counter) -> Option<u32> {
        match counter {
            Counter::Vmcnt => self.vmcnt,
            Counter::Expcnt => self.expcnt,
            Counter::Lgkmcnt => self.lgkmcnt,
            Counter::Vscnt => self.vscnt,
            Counter::Loadcnt => self.loadcnt,
            Counter::Storecnt => self.storecnt,
            Counter::Samplecnt => self.samplecnt,
            Counter::Bvhcnt => self.bvhcnt,
            Counter::Dscnt => self.dscnt,
            Counter::Kmcnt => self.kmcnt,
        }
    }

    /// True for GFX12 and later (`s_wait_*cnt` instead of `s_waitcnt`).
    pub fn split_counters(&self) -> bool {
        self.generation >= Generation::Gfx12
    }

    /// The instruction that waits for `counter` with value `n` on this
    /// generation, e.g. `s_waitcnt vmcnt(0)`, `s_waitcnt_vscnt null, 0x0`,
    /// `s_wait_loadcnt 0x0`; `None` if the counter does not exist here or `n`
    /// is out of range.
    pub fn wait_instruction(&self, counter: Counter, n: u32) -> Option<String> {
        let max = self.max(counter)?;
        if n > max {
            return None;
        }
        Some(match counter {
            Counter::Vmcnt | Counter::Expcnt | Counter::Lgkmcnt if !self.split_counters() => {
                format!("s_waitcnt {counter}({n})")
            }
            Counter::Vscnt => format!("s_waitcnt_vscnt null, {n:#x}"),
            _ => format!("s_wait_{counter} {n:#x}"),
        })
    }
}

/// Counter limits of a generation (see the module table).
pub fn waitcnt_limits(generation: Generation) -> WaitcntLimits {
    use Generation::*;
    let (pre10, gfx10_11, gfx12) = (
        generation < Gfx10_1,
        (Gfx10_1..=Gfx11).contains(&generation),
        generation >= Gfx12,
    );
    let vmcnt = match generation {
        Gfx6 | Gfx7 | Gfx8 => Some(15),
        _ if gfx12 => None,
        _ => Some(63),
    };
    let some_if = |c: bool, v: u32| c.then_some(v);
    WaitcntLimits {
        generation,
        vmcnt,
        expcnt: Some(7),
        lgkmcnt: if pre10 {
            Some(15)
        } else {
            some_if(gfx10_11, 63)
        },
        vscnt: some_if(gfx10_11, 63),
        loadcnt: some_if(gfx12, 63),
        storecnt: some_if(gfx12, 63),
        samplecnt: some_if(gfx12, 63),
        bvhcnt: some_if(gfx12, 7),
        dscnt: some_if(gfx12, 63),
        kmcnt: some_if(gfx12, 31),
    }
}

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

/// Check every wait instruction of `asm` for `target`. Locations are 1-based
/// lines of `asm` under the file name `<asm>`; use [`check_waitcnt_traced`]
/// to report at each line's origin (dump, patch hunk, rule).
pub fn check_waitcnt(asm: &AsmFile, target: &TargetId) -> Vec<Diagnostic> {
    findings(asm, target)
        .into_iter()
        .map(|f| {
            let mut diag = f.diag;
            if let Some((l, note)) = &f.related {
                diag = diag.with_note(note.replace("{at}", &format!("<asm>:{}", l + 1)));
            }
            let text = asm.lines[f.line].text.clone();
            let mut loc = Location::line("<asm>", f.line + 1, Some(text.clone()));
            if let Some((s, e)) = f.span {
                loc = loc.with_span(col(&text, s), text[s..e].chars().count());
            }
            diag.at(loc.with_label(f.label))
        })
        .collect()
}

/// [`check_waitcnt`] on a traced text, with locations and notes taken from
/// each line's [`Origin`].
pub fn check_waitcnt_traced(traced: &Traced, target: &TargetId) -> Vec<Diagnostic> {
    let asm = AsmFile::from_traced(traced);
    findings(&asm, target)
        .into_iter()
        .map(|f| {
            let mut diag = f.diag;
            if let Some((l, note)) = &f.related {
                diag = diag.with_note(note.replace("{at}", &origin_text(traced, *l)));
            }
            place(traced, f.line, f.span, f.label, diag)
        })
        .collect()
}

/// Where line `idx` (0-based) of `traced` came from, for a note.
pub(crate) fn origin_text(traced: &Traced, idx: usize) -> String {
    match traced.origins.get(idx) {
        Some(o @ (Origin::Source { .. } | Origin::Patch { .. })) => o.to_string(),
        Some(o) => format!("line {} of the patched asm ({o})", idx + 1),
        None => format!("line {} of the patched asm", idx + 1),
    }
}

/// 1-based column of byte offset `byte` in `text`.
pub(crate) fn col(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].chars().count() + 1
}

/// Attach the location of line `idx` (0-based) of `traced` to `diag`: the
/// origin's file and line, plus a note saying where the line came from when
/// it is not the dump itself.
pub(crate) fn place(
    traced: &Traced,
    idx: usize,
    span: Option<(usize, usize)>,
    label: String,
    mut diag: Diagnostic,
) -> Diagnostic {
    let text = traced.lines.get(idx).cloned().unwrap_or_default();
    let origin = traced.origins.get(idx);
    // A `+` line of a patch shows with its `+`.
    let (shown, shift) = match origin {
        Some(Origin::Patch { .. }) => (format!("+{text}"), 1),
        _ => (text.clone(), 0),
    };
    match origin.and_then(Origin::file_line) {
        Some((file, line)) => {
            let mut loc = Location::line(file, line, Some(shown));
            if let Some((s, e)) = span {
                loc = loc.with_span(col(&text, s) + shift, text[s..e].chars().count());
            }
            diag = diag.at(loc.with_label(label));
        }
        None => {
            let mut loc =
                Location::line(PathBuf::from("<patched asm>"), idx + 1, Some(text.clone()));
            if let Some((s, e)) = span {
                loc = loc.with_span(col(&text, s), text[s..e].chars().count());
            }
            diag = diag.at(loc.with_label(label));
        }
    }
    match origin {
        Some(o @ Origin::Patch { .. }) => diag.with_note(format!("this line was added by {o}")),
        Some(o @ Origin::Rule { .. }) => diag.with_note(format!("this line was written by {o}")),
        Some(o @ Origin::Retarget { .. }) => diag.with_note(format!("this line was {o}")),
        Some(o @ Origin::Generated(_)) => diag.with_note(format!("this line was {o}")),
        _ => diag,
    }
}

fn parse_int(s: &str) -> Option<u32> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()
    } else if let Some(b) = s.strip_prefix("0b") {
        u32::from_str_radix(b, 2).ok()
    } else {
        s.parse().ok()
    }
}

/// Byte range of the operand text: everything after the mnemonic, before a
/// comment.
fn operand_text(text: &str, mnemonic: &str) -> Option<(usize, usize)> {
    let start = text.find(mnemonic)? + mnemonic.len();
    let rest = &text[start..];
    let end = [";", "//"]
        .iter()
        .filter_map(|m| rest.find(m))
        .min()
        .unwrap_or(rest.len());
    Some((start, start + end))
}

/// Decode the raw `s_waitcnt` immediate (`encodeWaitcnt` layout).
fn decode_waitcnt(generation: Generation, imm: u32) -> Vec<(Counter, u32)> {
    let bits = |shift: u32, width: u32| (imm >> shift) & ((1 << width) - 1);
    let (vm, exp, lgkm) = match generation {
        Generation::Gfx6 | Generation::Gfx7 | Generation::Gfx8 => {
            (bits(0, 4), bits(4, 3), bits(8, 4))
        }
        Generation::Gfx9 => (bits(0, 4) | (bits(14, 2) << 4), bits(4, 3), bits(8, 4)),
        Generation::Gfx10_1 | Generation::Gfx10_3 => {
            (bits(0, 4) | (bits(14, 2) << 4), bits(4, 3), bits(8, 6))
        }
        _ => (bits(10, 6), bits(0, 3), bits(4, 6)),
    };
    vec![
        (Counter::Vmcnt, vm),
        (Counter::Expcnt, exp),
        (Counter::Lgkmcnt, lgkm),
    ]
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
) -> Vec<(Counter, u32, (usize, usize))> {
    let mut ignored = Vec::new();
    waits_of(inst, text, 0, limits, &mut ignored)
        .into_iter()
        .map(|w| (w.counter, w.value.min(limits.max(w.counter).unwrap_or(0)), w.span))
        .collect()
}

/// Parse the waits of one instruction; errors for unknown or misplaced
/// counters go to `out`.
fn waits_of(
    inst: &Instruction,
    text: &str,
    line: usize,
    limits: &WaitcntLimits,
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
    match m {
        "s_waitcnt" => {
            let mut any_func = false;
            let mut gfx11_waits: Vec<(String, String)> = vec![];
            let mut rest = ops;
            let mut offset = ops_start;
            while let Some(open) = rest.find('(') {
                let name_start = rest[..open]
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(0, |i| i + 1);
                let name = rest[name_start..open].trim();
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
                            if let Some(value) = parse_int(arg) {
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
                            diag: Diagnostic::error(format!(
                                "`{name}` is not an `s_waitcnt` counter on {}",
                                g.label()
                            ))
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
                    diag: Diagnostic::error(format!(
                        "`s_waitcnt` does not exist on {}: it has separate s_wait_*cnt instructions",
                        g.label()
                    ))
                    .with_note("GFX12 splits vmcnt into loadcnt / samplecnt / bvhcnt (and vscnt into storecnt), lgkmcnt into dscnt / kmcnt")
                    .with_help(format!("write {}", replacement.join(" and "))),
                });
            }
            if !any_func && !gfx12 {
                if let Some(imm) = parse_int(ops) {
                    if imm > 0xffff {
                        out.push(Finding {
                            related: None,
                            line,
                            span: Some((ops_start, ops_end)),
                            label: "does not fit 16 bits".into(),
                            diag: Diagnostic::error(format!(
                                "`s_waitcnt {imm:#x}`: the immediate is 16 bits"
                            ))
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
                    diag: Diagnostic::error(format!(
                        "`s_waitcnt` does not exist on {}: use s_wait_loadcnt / s_wait_storecnt / s_wait_dscnt / s_wait_kmcnt / s_wait_expcnt",
                        g.label()
                    )),
                });
            }
        }
        "s_waitcnt_vscnt" | "s_waitcnt_vmcnt" | "s_waitcnt_expcnt" | "s_waitcnt_lgkmcnt" => {
            let cname = &m["s_waitcnt_".len()..];
            let counter = Counter::from_name(cname).unwrap_or(Counter::Vscnt);
            if gfx12 || g < Generation::Gfx10_1 {
                out.push(Finding {
                    related: None,
                    line,
                    span: mnemonic_span,
                    label: format!("not a {} instruction", g.label()),
                    diag: Diagnostic::error(format!("`{m}` does not exist on {}", g.label()))
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
                if let Some(value) = parse_int(arg) {
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
        _ if m.starts_with("s_wait_") && m.ends_with("cnt")
            || m == "s_wait_loadcnt_dscnt"
            || m == "s_wait_storecnt_dscnt" =>
        {
            let names = &m["s_wait_".len()..];
            let known: Vec<Option<Counter>> = names.split('_').map(Counter::from_name).collect();
            if known.iter().any(Option::is_none) {
                // gfx12.5 counters (xcnt, asynccnt, tensorcnt): not modelled.
                return waits;
            }
            if !gfx12 {
                out.push(Finding {
                    related: None,
                    line,
                    span: mnemonic_span,
                    label: format!("GFX12 instruction on {}", g.label()),
                    diag: Diagnostic::error(format!("`{m}` does not exist on {}", g.label()))
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
            if let Some(v) = parse_int(t) {
                let counters: Vec<Counter> = known.into_iter().flatten().collect();
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
        let waits = waits_of(inst, &line.text, idx, &limits, &mut out);
        for w in &waits {
            match limits.max(w.counter) {
                Some(max) if w.value > max && !w.saturating => out.push(Finding {
                    related: None,
                    line: idx,
                    span: Some(w.span),
                    label: format!("{} is at most {max} on {}", w.counter, g.label()),
                    diag: Diagnostic::error(format!(
                        "{} value {} does not fit: {} counts up to {max} on {}",
                        w.counter,
                        w.value,
                        w.counter,
                        g.label()
                    ))
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
                        diag: Diagnostic::warning(format!(
                            "this {} wait waits for nothing: at most {b} vector memory load{} can be outstanding here",
                            w.counter,
                            if b == 1 { "" } else { "s" }
                        ))
                        .with_help(format!(
                            "lower the count below {b} to wait for the load{} it should cover, or delete the wait",
                            if b == 1 { "" } else { "s" }
                        )),
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
    use crate::parse::parse;

    fn t(name: &str) -> TargetId {
        TargetId::parse(name).expect("known target")
    }

    #[test]
    fn limits_follow_amdgpu_base_info() {
        let g9 = waitcnt_limits(Generation::Gfx9);
        assert_eq!(
            (g9.vmcnt, g9.expcnt, g9.lgkmcnt, g9.vscnt),
            (Some(63), Some(7), Some(15), None)
        );
        let g8 = waitcnt_limits(Generation::Gfx8);
        assert_eq!((g8.vmcnt, g8.lgkmcnt), (Some(15), Some(15)));
        let g10 = waitcnt_limits(Generation::Gfx10_3);
        assert_eq!(
            (g10.vmcnt, g10.lgkmcnt, g10.vscnt),
            (Some(63), Some(63), Some(63))
        );
        let g11 = waitcnt_limits(Generation::Gfx11);
        assert_eq!(
            (g11.vmcnt, g11.lgkmcnt, g11.vscnt),
            (Some(63), Some(63), Some(63))
        );
        let g12 = waitcnt_limits(Generation::Gfx12);
        assert_eq!(g12.vmcnt, None);
        assert_eq!(
            (
                g12.loadcnt,
                g12.storecnt,
                g12.dscnt,
                g12.kmcnt,
                g12.samplecnt,
                g12.bvhcnt,
                g12.expcnt
            ),
            (
                Some(63),
                Some(63),
                Some(63),
                Some(31),
                Some(63),
                Some(7),
                Some(7)
            )
        );
        assert_eq!(
            g9.wait_instruction(Counter::Vmcnt, 3).as_deref(),
            Some("s_waitcnt vmcnt(3)")
        );
        assert_eq!(g9.wait_instruction(Counter::Vmcnt, 64), None);
        assert_eq!(
            g11.wait_instruction(Counter::Vscnt, 0).as_deref(),
            Some("s_waitcnt_vscnt null, 0x0")
        );
        assert_eq!(
            g12.wait_instruction(Counter::Loadcnt, 2).as_deref(),
            Some("s_wait_loadcnt 0x2")
        );
        assert_eq!(g12.wait_instruction(Counter::Vmcnt, 0), None);
    }

    #[test]
    fn decodes_raw_immediates() {
        // llvm-mc-22 -mcpu=gfx942 prints `s_waitcnt 0xffff` as vmcnt(63) expcnt(7) lgkmcnt(15).
        assert_eq!(
            decode_waitcnt(Generation::Gfx9, 0xffff),
            vec![
                (Counter::Vmcnt, 63),
                (Counter::Expcnt, 7),
                (Counter::Lgkmcnt, 15)
            ]
        );
        // gfx11 encoding 0xfff7 (llvm-mc-22 -mcpu=gfx1100 for lgkmcnt(63) vmcnt(63)).
        assert_eq!(
            decode_waitcnt(Generation::Gfx11, 0xfff7),
            vec![
                (Counter::Vmcnt, 63),
                (Counter::Expcnt, 7),
                (Counter::Lgkmcnt, 63)
            ]
        );
        // gfx9 `s_waitcnt vmcnt(0) lgkmcnt(0)` encodes as 0x0070 (expcnt 7 = no wait).
        assert_eq!(
            decode_waitcnt(Generation::Gfx9, 0x0070),
            vec![
                (Counter::Vmcnt, 0),
                (Counter::Expcnt, 7),
                (Counter::Lgkmcnt, 0)
            ]
        );
    }

    fn msgs(src: &str, target: &str) -> Vec<String> {
        check_waitcnt(&parse(src), &t(target))
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
