//! Register budget: the registers a kernel's instructions use against what
//! it declares. The assembler accepts overuse silently (a patch that touches
//! `v120` in a kernel declaring `.amdhsa_next_free_vgpr 112` assembles and
//! then corrupts another wave's registers); this check does not.
//!
//! Where counts are declared, and how they relate (checked on every kernel
//! of `tests/corpus`, LLVM 22 clang and IREE's LLVM 24, all of which pass
//! with no finding):
//!
//! * descriptor (`.amdhsa_kernel`): `.amdhsa_next_free_vgpr` is what the
//!   hardware allocates. With AGPRs in the unified file (gfx90a, gfx942,
//!   gfx950, gfx9-4-generic) arch VGPRs must stay below
//!   `.amdhsa_accum_offset` and AGPR `aK` lives at `accum_offset + K`, so
//!   `next_free_vgpr ≥ accum_offset + num_agpr`; LLVM writes
//!   `accum_offset = alignTo(max(num_vgpr, 1), 4)`. On gfx908 AGPRs are a
//!   separate file and `next_free_vgpr = max(num_vgpr, num_agpr)`.
//!   `.amdhsa_next_free_sgpr` counts numbered SGPRs; `.amdhsa_reserve_vcc`,
//!   `_flat_scratch`, `_xnack_mask` (default 1) add the extra SGPRs. IREE
//!   (LLVM 24) pads the descriptor beyond the `.set` counts (e.g.
//!   `next_free_vgpr 257` for `num_vgpr 112`); padding is not an error.
//! * `.set <kernel>.num_vgpr` / `.num_agpr` / `.numbered_sgpr` / `.uses_vcc`
//!   / `.uses_flat_scratch` (LLVM 22+): what the code uses, exactly.
//! * metadata: `.vgpr_count = max(1, totalnumvgprs(num_agpr, num_vgpr))`,
//!   `.agpr_count = num_agpr`, `.sgpr_count = numbered_sgpr + extra` where
//!   extra is `getNumExtraSGPRs` (`AMDGPUBaseInfo.cpp`): VCC 2; on gfx8/9
//!   XNACK (xnack on or any) 4, FLAT_SCRATCH or architected flat scratch
//!   (gfx942, gfx950) 6; nothing more on gfx10+.
//!
//! Every count must cover the instructions' usage; a smaller count in one
//! place than another implies is an inconsistency. Under
//! [`RegisterPolicy::Update`] the counts are rewritten consistently. They
//! only grow: a descriptor may be padded on purpose (as IREE does), and
//! shrinking would change occupancy behind the author's back; lower them by
//! hand if a patch frees registers.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;

use gcn_embed::{Feature, Generation, TargetId};

use super::expr::eval;
use super::occupancy::{occupancy, Occupancy};
use super::RegisterPolicy;
use crate::base::diag::{Diagnostic, Diagnostics, Severity};
use crate::base::document::{Document, Edits};
use crate::base::isa::Isa;
use crate::base::parse::{AsmFile, Kernel, RegFile, RegisterRef};
use crate::base::provenance::Origin;

/// Registers the instructions of one kernel use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Highest arch VGPR index + 1 (`v[4:7]` counts up to v7).
    pub vgpr: u32,
    /// Highest AGPR index + 1.
    pub agpr: u32,
    /// Highest SGPR index + 1.
    pub sgpr: u32,
    /// VCC (or `vcc_lo`/`vcc_hi`, or an implicit reader such as `s_cbranch_vccz`).
    pub vcc: bool,
    /// FLAT_SCRATCH (or its halves).
    pub flat_scratch: bool,
    /// XNACK_MASK (or its halves).
    pub xnack_mask: bool,
}

/// Register class of one use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegClass {
    /// Arch VGPRs `v0..`.
    Vgpr,
    /// AGPRs `a0..`.
    Agpr,
    /// SGPRs `s0..`.
    Sgpr,
    /// VCC.
    Vcc,
    /// FLAT_SCRATCH.
    FlatScratch,
    /// XNACK_MASK.
    XnackMask,
}

/// One register operand of one instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegUse {
    /// 0-based line index.
    pub line: usize,
    /// Register class.
    pub class: RegClass,
    /// First index.
    pub first: u32,
    /// Last index (inclusive).
    pub last: u32,
    /// The operand (`v[4:7]`, `vcc`), to highlight it; `None` for the
    /// instruction's implicit `vcc` (its mnemonic is highlighted). Not its
    /// text: a kernel has a use per register operand, and a million-line
    /// file would keep millions of strings for the few that are shown.
    pub operand: Option<RegisterRef>,
}

/// One declared count: where, as written, and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredValue {
    /// How to name it to a user: `.amdhsa_next_free_vgpr`,
    /// `.set .Lk.num_vgpr`, metadata `.vgpr_count`.
    pub what: String,
    /// 0-based line index.
    pub line: usize,
    /// The value text as written (a number or an expression).
    pub text: String,
    /// The evaluated value (`None`: an expression this checker cannot evaluate).
    pub value: Option<u32>,
}

impl DeclaredValue {
    fn is_literal(&self) -> bool {
        let t = self.text.trim();
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_hexdigit() || c == 'x' || c == 'X')
    }
}

impl fmt::Display for DeclaredValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Some(v) if self.is_literal() => write!(f, "{} {v}", self.what),
            Some(v) => write!(f, "{} {v} (`{}`)", self.what, self.text),
            None => write!(f, "{} `{}`", self.what, self.text),
        }
    }
}

/// What one kernel declares about its registers, in the descriptor, `.set`
/// symbols and metadata (each with its line).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Declared {
    /// Line of `.amdhsa_kernel` (None: no descriptor).
    pub descriptor_line: Option<usize>,
    /// `.amdhsa_next_free_vgpr`.
    pub next_free_vgpr: Option<DeclaredValue>,
    /// `.amdhsa_next_free_sgpr`.
    pub next_free_sgpr: Option<DeclaredValue>,
    /// `.amdhsa_accum_offset`.
    pub accum_offset: Option<DeclaredValue>,
    /// `.amdhsa_reserve_vcc` (default 1).
    pub reserve_vcc: Option<DeclaredValue>,
    /// `.amdhsa_reserve_flat_scratch` (default 1).
    pub reserve_flat_scratch: Option<DeclaredValue>,
    /// `.amdhsa_reserve_xnack_mask` (default: the target supports xnack).
    pub reserve_xnack_mask: Option<DeclaredValue>,
    /// `.amdhsa_wavefront_size32`.
    pub wavefront_size32: Option<DeclaredValue>,
    /// `.amdhsa_group_segment_fixed_size` (LDS bytes).
    pub group_segment_fixed_size: Option<DeclaredValue>,
    /// `.set <kernel>.num_vgpr`.
    pub num_vgpr: Option<DeclaredValue>,
    /// `.set <kernel>.num_agpr`.
    pub num_agpr: Option<DeclaredValue>,
    /// `.set <kernel>.numbered_sgpr`.
    pub numbered_sgpr: Option<DeclaredValue>,
    /// `.set <kernel>.uses_vcc`.
    pub uses_vcc: Option<DeclaredValue>,
    /// `.set <kernel>.uses_flat_scratch`.
    pub uses_flat_scratch: Option<DeclaredValue>,
    /// Metadata `.vgpr_count`.
    pub vgpr_count: Option<DeclaredValue>,
    /// Metadata `.agpr_count`.
    pub agpr_count: Option<DeclaredValue>,
    /// Metadata `.sgpr_count`.
    pub sgpr_count: Option<DeclaredValue>,
    /// Metadata `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: Option<u32>,
    /// Line of the metadata `.name:` field and its indentation, where
    /// missing metadata counts are inserted.
    pub metadata_name: Option<(usize, String)>,
}

/// Usage and declarations of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelBudget {
    /// Kernel symbol.
    pub kernel: String,
    /// Registers the instructions use.
    pub used: Usage,
    /// What the kernel declares.
    pub declared: Declared,
    /// Every register operand of the kernel's instructions, in line order.
    pub uses: Vec<RegUse>,
}

/// Result of [`check_registers`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutcome {
    /// The asm: unchanged, or with updated counts under
    /// [`RegisterPolicy::Update`].
    pub asm: Document,
    /// Notes (occupancy changes, updates made) and warnings (counts that
    /// cannot be evaluated and so are not checked).
    pub notes: Vec<Diagnostic>,
}

/// Counts are capped here so that arithmetic on nonsense input cannot
/// overflow; any real count is far below (512 VGPRs, 106 SGPRs).
const CAP: u32 = 1 << 16;

fn value_of(text: &str, symbols: &HashMap<String, String>, gfx90a: bool) -> Option<u32> {
    eval(text, symbols, gfx90a)
        .and_then(|v| u32::try_from(v).ok())
        .map(|v| v.min(CAP))
}

/// Mnemonics that read or write VCC without naming it.
fn implicit_vcc(mnemonic: &str) -> bool {
    mnemonic.starts_with("s_cbranch_vcc") || mnemonic.starts_with("v_div_fmas")
}

/// Every `.set name, value` of the file.
pub(crate) fn set_symbols(asm: &AsmFile) -> HashMap<String, String> {
    asm.lines
        .iter()
        .filter_map(|l| match &l.kind {
            crate::base::parse::LineKind::Set { name, value } => {
                Some((name.clone(), value.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Usage and declarations of every kernel of `asm`, for `target`.
pub fn analyze(asm: &AsmFile, target: &TargetId) -> Vec<KernelBudget> {
    analyze_kernels(asm, &asm.kernels(), target)
}

/// [`analyze`] of a document, whose kernels are found once.
fn analyze_doc(doc: &Document, target: &TargetId) -> Vec<KernelBudget> {
    analyze_kernels(doc.asm(), doc.kernels(), target)
}

fn analyze_kernels(asm: &AsmFile, kernels: &[Kernel], target: &TargetId) -> Vec<KernelBudget> {
    let isa = Isa::of(target);
    let symbols = set_symbols(asm);
    kernels
        .iter()
        .map(|k| analyze_kernel(asm, k, &symbols, isa.unified_agprs))
        .collect()
}

fn analyze_kernel(
    asm: &AsmFile,
    k: &Kernel,
    symbols: &HashMap<String, String>,
    gfx90a: bool,
) -> KernelBudget {
    let mut used = Usage::default();
    let mut uses = vec![];
    for idx in k.code.clone() {
        let Some(inst) = asm.lines.get(idx).and_then(|l| l.instruction()) else {
            continue;
        };
        if implicit_vcc(&inst.mnemonic) {
            used.vcc = true;
            uses.push(RegUse {
                line: idx,
                class: RegClass::Vcc,
                first: 0,
                last: 0,
                operand: None,
            });
        }
        for r in inst.registers() {
            let class = match r.file {
                RegFile::Vgpr => RegClass::Vgpr,
                RegFile::Agpr => RegClass::Agpr,
                RegFile::Sgpr => RegClass::Sgpr,
                RegFile::Vcc | RegFile::VccLo | RegFile::VccHi => RegClass::Vcc,
                RegFile::FlatScratch | RegFile::FlatScratchLo | RegFile::FlatScratchHi => {
                    RegClass::FlatScratch
                }
                RegFile::XnackMask | RegFile::XnackMaskLo | RegFile::XnackMaskHi => {
                    RegClass::XnackMask
                }
                _ => continue,
            };
            let n = r.last.saturating_add(1).min(CAP);
            match class {
                RegClass::Vgpr => used.vgpr = used.vgpr.max(n),
                RegClass::Agpr => used.agpr = used.agpr.max(n),
                RegClass::Sgpr => used.sgpr = used.sgpr.max(n),
                RegClass::Vcc => used.vcc = true,
                RegClass::FlatScratch => used.flat_scratch = true,
                RegClass::XnackMask => used.xnack_mask = true,
            }
            uses.push(RegUse {
                line: idx,
                class,
                first: r.first.min(CAP - 1),
                last: r.last.min(CAP - 1),
                operand: Some(*r),
            });
        }
    }

    let mut d = Declared::default();
    let dv = |what: String, line: usize, text: &str| DeclaredValue {
        what,
        line,
        text: text.trim().to_string(),
        value: value_of(text, symbols, gfx90a),
    };
    if let Some(desc) = &k.descriptor {
        d.descriptor_line = Some(desc.start);
        for f in &desc.fields {
            let v = Some(dv(f.name.clone(), f.line, &f.value));
            match f.name.as_str() {
                ".amdhsa_next_free_vgpr" => d.next_free_vgpr = v,
                ".amdhsa_next_free_sgpr" => d.next_free_sgpr = v,
                ".amdhsa_accum_offset" => d.accum_offset = v,
                ".amdhsa_reserve_vcc" => d.reserve_vcc = v,
                ".amdhsa_reserve_flat_scratch" => d.reserve_flat_scratch = v,
                ".amdhsa_reserve_xnack_mask" => d.reserve_xnack_mask = v,
                ".amdhsa_wavefront_size32" => d.wavefront_size32 = v,
                ".amdhsa_group_segment_fixed_size" => d.group_segment_fixed_size = v,
                _ => {}
            }
        }
    }
    for s in &k.sets {
        let v = Some(dv(format!(".set {}", s.symbol), s.line, &s.value));
        match s.field.as_str() {
            "num_vgpr" => d.num_vgpr = v,
            "num_agpr" => d.num_agpr = v,
            "numbered_sgpr" => d.numbered_sgpr = v,
            "uses_vcc" => d.uses_vcc = v,
            "uses_flat_scratch" => d.uses_flat_scratch = v,
            _ => {}
        }
    }
    if let Some(md) = &k.metadata {
        let mv = |key: &str, f: Option<(usize, u32)>| {
            f.map(|(line, value)| DeclaredValue {
                what: format!("metadata `{key}`"),
                line,
                text: value.to_string(),
                value: Some(value.min(CAP)),
            })
        };
        d.vgpr_count = mv(".vgpr_count", md.vgpr_count);
        d.agpr_count = mv(".agpr_count", md.agpr_count);
        d.sgpr_count = mv(".sgpr_count", md.sgpr_count);
        d.max_flat_workgroup_size = md.max_flat_workgroup_size.map(|(_, v)| v);
        d.metadata_name = md.name.as_ref().and_then(|(line, _)| {
            let text = &asm.lines.get(*line)?.text;
            let body = text.trim_start().trim_start_matches("- ");
            let indent = " ".repeat(text.len() - body.len());
            Some((*line, indent))
        });
    }
    KernelBudget {
        kernel: k.name.clone(),
        used,
        declared: d,
        uses,
    }
}

fn flag(v: &Option<DeclaredValue>) -> Option<bool> {
    v.as_ref().and_then(|v| v.value).map(|v| v != 0)
}

fn xnack_on_or_any(isa: &Isa, target: &TargetId) -> bool {
    isa.xnack_supported && target.xnack != Feature::Off
}

/// One register bound: indices must stay below `limit`.
struct Bound<'a> {
    limit: u32,
    decl: &'a DeclaredValue,
    /// Extra words after the declaration, e.g. "- 6 extra SGPRs".
    how: String,
    /// The value the declaration should have.
    want: u32,
    /// Blame instructions beyond it (descriptor, `.set`), or only list it
    /// (metadata, checked against the `.set` counts).
    blame: bool,
}

/// What a problem highlights on its line.
enum Highlight {
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
struct Problem {
    line: usize,
    token: Option<Highlight>,
    label: String,
    diag: Diagnostic,
    related: Vec<usize>,
}

fn problems(kb: &KernelBudget, isa: &Isa, target: &TargetId, label: &str) -> Vec<Problem> {
    let d = &kb.declared;
    let u = &kb.used;
    let mut out = vec![];
    // Name the manifest's kernel (the label's), not the ELF symbol: that is
    // the name kernels.toml and the commands know it by.
    let manifest_kernel = label
        .strip_prefix("kernel `")
        .and_then(|rest| rest.split('`').next())
        .unwrap_or(&kb.kernel);
    let update_help = format!(
        "or set `registers = \"update\"` for kernel `{manifest_kernel}` in kernels.toml to rewrite the counts (either changes the shipped code object: `gcn-patch objdiff` shows the new counts)"
    );

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
        let mut diag = Diagnostic::error(format!(
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
        diag = diag.with_help(format!("raise {}, {update_help}", raise.join(", ")));
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
                    diag: Diagnostic::error(format!("{label} uses {name}, but declares {decl}"))
                        .with_note(format!(
                        "without it the hardware does not allocate the extra SGPRs behind {name}"
                    ))
                        .with_help(format!("set {} to 1, {update_help}", decl.what)),
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
            diag: Diagnostic::warning(format!(
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
            diag: Diagnostic::error(format!(
                "{label}: {decl} contradicts the kernel's other register counts"
            ))
            .with_note(because)
            .with_help(format!("set {} to {should}, {update_help}", decl.what)),
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
fn diagnose(traced: &Document, problems: Vec<Problem>) -> Vec<Diagnostic> {
    problems
        .into_iter()
        .map(|p| {
            let text = traced.text(p.line);
            let token = match p.token {
                Some(Highlight::Operand(r)) => Some(r.to_string()),
                Some(Highlight::Mnemonic) => traced.instruction(p.line).map(|i| i.mnemonic.clone()),
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
fn find_token(text: &str, tok: &str) -> Option<usize> {
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

/// The counts a kernel should declare after an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Target {
    num_vgpr: u32,
    num_agpr: u32,
    numbered_sgpr: u32,
    uses_vcc: bool,
    uses_flat_scratch: bool,
    next_free_vgpr: u32,
    next_free_sgpr: u32,
    accum_offset: Option<u32>,
    vgpr_count: u32,
    agpr_count: u32,
    sgpr_count: u32,
}

fn targets(kb: &KernelBudget, isa: &Isa, target: &TargetId) -> Target {
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
type Insert = (usize, String, String);

/// One line rewrite of an update.
struct Edit {
    line: usize,
    new_text: String,
    change: String,
}

fn plan_updates(
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
        let text = &asm.lines[v.line].text;
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
            let next = asm
                .lines
                .get(start + 1)
                .map(|l| l.text.as_str())
                .unwrap_or("");
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
            Diagnostic::error(format!(
                "kernel `{}` needs {} VGPRs, more than the {max_vgpr} of {}",
                kb.kernel,
                t.next_free_vgpr,
                target.name()
            ))
            .with_help("use fewer registers in the patch"),
        );
    }
    // AMDGPUAsmParser::calculateGPRBlocks: next_free_sgpr (without the
    // extra SGPRs) must not exceed getAddressableNumSGPRs.
    if t.next_free_sgpr > isa.addressable_sgprs() {
        errors.push(
            Diagnostic::error(format!(
                "kernel `{}` needs {} SGPRs, more than the {} {} can address",
                kb.kernel,
                t.next_free_sgpr,
                isa.addressable_sgprs(),
                target.name()
            ))
            .with_help("use fewer SGPRs in the patch"),
        );
    }
    (edits, inserts, errors)
}

fn wave_size(d: &Declared, isa: &Isa) -> u32 {
    if isa.generation < Generation::Gfx10_1 {
        64
    } else if flag(&d.wavefront_size32) == Some(true) {
        32
    } else {
        64
    }
}

/// Occupancy from what the hardware allocates (the descriptor): the
/// occupancy, allocated VGPRs and SGPRs (`None` without evaluable counts).
pub fn allocated_occupancy(kb: &KernelBudget, target: &TargetId) -> Option<(Occupancy, u32, u32)> {
    let isa = &Isa::of(target);
    let d = &kb.declared;
    let v = d.next_free_vgpr.as_ref()?.value?;
    let s = d.next_free_sgpr.as_ref()?.value?;
    let vcc = flag(&d.reserve_vcc).unwrap_or(true);
    let flat = flag(&d.reserve_flat_scratch).unwrap_or(true)
        && isa.generation < Generation::Gfx10_1
        && !isa.architected_flat_scratch;
    let xnack =
        flag(&d.reserve_xnack_mask).unwrap_or(isa.xnack_supported) && xnack_on_or_any(isa, target);
    let sgprs = s + isa.extra_sgprs(vcc, flat, xnack);
    let lds = d
        .group_segment_fixed_size
        .as_ref()
        .and_then(|v| v.value)
        .unwrap_or(0);
    let o = occupancy(
        target,
        v,
        0,
        sgprs,
        lds,
        wave_size(d, isa),
        d.max_flat_workgroup_size,
    );
    Some((o, v, sgprs))
}

/// Check (and under [`RegisterPolicy::Update`], fix) the register counts of
/// every kernel of `patched` for `target`. `original` is the unpatched dump,
/// used to report occupancy changes; `label` names the build in messages
/// ("kernel `matmul` for gfx950"). A kernel that declares no counts at all
/// (hand-written) gets them filled in whatever the policy.
///
/// Returns the (possibly updated) asm with notes, or the errors.
pub fn check_registers(
    original: Option<&Document>,
    patched: &Document,
    target: &TargetId,
    policy: RegisterPolicy,
    label: &str,
) -> Result<CheckOutcome, Diagnostics> {
    check(original, Cow::Borrowed(patched), target, policy, label)
}

/// [`check_registers`] taking the asm by value: the outcome's asm is that
/// document (edited in place under [`RegisterPolicy::Update`]), not a copy
/// of it, which matters for large files.
pub fn check_registers_owned(
    original: Option<&Document>,
    patched: Document,
    target: &TargetId,
    policy: RegisterPolicy,
    label: &str,
) -> Result<CheckOutcome, Diagnostics> {
    check(original, Cow::Owned(patched), target, policy, label)
}

fn check(
    original: Option<&Document>,
    mut patched_doc: Cow<'_, Document>,
    target: &TargetId,
    policy: RegisterPolicy,
    label: &str,
) -> Result<CheckOutcome, Diagnostics> {
    let patched: &Document = &patched_doc;
    // The original's lines are the patched ones (an unpatched source): its
    // analysis is the patched one.
    let unpatched = original.is_some_and(|o| o.same_lines(patched));
    let isa = Isa::of(target);
    let asm = patched.asm();
    let budgets = analyze_doc(patched, target);
    // A hand-written kernel may leave its register counts to us: with nothing
    // declared in its `.amdhsa_kernel` block there is nothing to contradict,
    // so they are filled in. A descriptor kept as raw bytes (lifted) declares
    // its counts in those bytes: nothing is filled in for it.
    let declares_nothing = budgets.iter().any(|k| {
        k.declared.next_free_vgpr.is_none()
            && k.declared.next_free_sgpr.is_none()
            && k.declared.descriptor_line.is_some()
    });
    let policy = if declares_nothing {
        RegisterPolicy::Update
    } else {
        policy
    };
    let single = budgets.len() == 1;
    let mut errors = vec![];
    let mut notes = vec![];
    // The analysis of the output when it was edited (else it is `budgets`).
    let mut reanalyzed = None;

    match policy {
        RegisterPolicy::Error => {
            // Findings the unpatched source has too (the same message at the
            // same dump line) are inherited: the code object was built and
            // shipped that way (hand-written kernels declare their own
            // counts), so they warn instead of failing; what a patch adds
            // or changes is an error.
            let inherited: HashSet<(String, Option<(PathBuf, usize)>)> = match original {
                _ if unpatched => HashSet::new(),
                Some(o) => {
                    let single_o = analyze_doc(o, target);
                    let one = single_o.len() == 1;
                    single_o
                        .iter()
                        .flat_map(|kb| {
                            let klabel = kernel_label(label, &kb.kernel, one);
                            diagnose(o, problems(kb, &isa, target, &klabel))
                        })
                        .filter(|d| d.severity == Severity::Error)
                        .map(|d| finding_key(&d))
                        .collect()
                }
                None => HashSet::new(),
            };
            for kb in &budgets {
                let klabel = kernel_label(label, &kb.kernel, single);
                for mut d in diagnose(patched, problems(kb, &isa, target, &klabel)) {
                    if d.severity == Severity::Error
                        && (unpatched || inherited.contains(&finding_key(&d)))
                    {
                        d.severity = Severity::Warning;
                        d.notes.push(
                            "the unpatched source has this too (inherited): not an error; a patch that changes it is"
                                .into(),
                        );
                    }
                    if d.severity == Severity::Error {
                        errors.push(d);
                    } else {
                        notes.push(d);
                    }
                }
            }
        }
        RegisterPolicy::Update => {
            let mut all_edits = vec![];
            let mut all_inserts = vec![];
            for kb in &budgets {
                let (edits, inserts, errs) = plan_updates(asm, kb, &isa, target);
                errors.extend(errs);
                if edits.is_empty() && inserts.is_empty() {
                    continue;
                }
                let klabel = kernel_label(label, &kb.kernel, single);
                let mut note = Diagnostic::note(format!("updated the register counts of {klabel}"));
                for e in &edits {
                    note = note.with_note(format!(
                        "{} (at {})",
                        e.change,
                        patched.origin_text(e.line)
                    ));
                }
                for (_, _, change) in &inserts {
                    note = note.with_note(change.clone());
                }
                notes.push(note);
                all_edits.extend(edits);
                all_inserts.extend(inserts);
            }
            let mut edits = Edits::new();
            for e in all_edits {
                let old = patched
                    .origin(e.line)
                    .cloned()
                    .unwrap_or_else(|| Origin::Generated("patched asm".into()));
                edits.replace(
                    e.line,
                    e.new_text,
                    Origin::Retarget {
                        replaces: Some(Box::new(old)),
                        what: "register budget update".into(),
                    },
                );
            }
            // Same-line insertions keep their order.
            for (line, text, _) in all_inserts {
                edits.insert_before(
                    line,
                    text,
                    Origin::Generated(format!("register budget of {label}")),
                );
            }
            if !edits.is_empty() {
                let mut out = patched_doc.into_owned();
                out.apply(edits);
                reanalyzed = Some(analyze_doc(&out, target));
                patched_doc = Cow::Owned(out);
            }
            let out: &Document = &patched_doc;
            // The update must leave nothing to report.
            if errors.is_empty() {
                for kb in reanalyzed.as_deref().unwrap_or(&budgets) {
                    let klabel = kernel_label(label, &kb.kernel, single);
                    for d in diagnose(out, problems(kb, &isa, target, &klabel)) {
                        if d.severity == Severity::Error {
                            errors.push(d);
                        } else {
                            notes.push(d);
                        }
                    }
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(Diagnostics(errors));
    }

    // Occupancy consequences. Each analysis is done once: an unpatched
    // source (the original's lines are the patched ones) and an unedited
    // `out` reuse `budgets`.
    let after = reanalyzed.as_deref().unwrap_or(&budgets);
    let before_own = original
        .filter(|_| !unpatched)
        .map(|o| analyze_doc(o, target));
    let before = original.map(|_| before_own.as_deref().unwrap_or(&budgets));
    for kb in after {
        let Some(prev) = before.and_then(|b| b.iter().find(|p| p.kernel == kb.kernel)) else {
            continue;
        };
        let (Some((o1, v1, s1)), Some((o2, v2, s2))) = (
            allocated_occupancy(prev, target),
            allocated_occupancy(kb, target),
        ) else {
            continue;
        };
        if o1.vgpr_granule_alloc == o2.vgpr_granule_alloc && s1 == s2 && o1 == o2 {
            continue;
        }
        let klabel = kernel_label(label, &kb.kernel, single);
        let msg = if o1.waves_per_simd == o2.waves_per_simd {
            format!(
                "{klabel}: waves per SIMD stay {} ({})",
                o2.waves_per_simd,
                describe_limit(&o2)
            )
        } else {
            format!(
                "{klabel}: waves per SIMD {} → {} ({})",
                o1.waves_per_simd,
                o2.waves_per_simd,
                describe_limit(&o2)
            )
        };
        notes.push(
            Diagnostic::note(msg)
                .with_note(format!(
                    "VGPRs allocated {} → {} (.amdhsa_next_free_vgpr {v1} → {v2}, granule {}); SGPRs {s1} → {s2}",
                    o1.vgpr_granule_alloc, o2.vgpr_granule_alloc, o2.vgpr_granule
                ))
                .with_note(format!(
                    "limits on {}: VGPRs {} waves, SGPRs {}, LDS/workgroup {}, hardware {}",
                    target.name(),
                    o2.by_vgpr,
                    o2.by_sgpr,
                    o2.by_lds,
                    o2.max_waves
                )),
        );
    }
    Ok(CheckOutcome {
        asm: patched_doc.into_owned(),
        notes,
    })
}

fn describe_limit(o: &Occupancy) -> String {
    match o.limited_by {
        super::occupancy::Limiter::Vgpr => {
            format!("limited by VGPRs: {} allocated", o.vgpr_granule_alloc)
        }
        super::occupancy::Limiter::Max => "the hardware maximum".into(),
        l => format!("limited by {l}"),
    }
}

/// `label` names the build; a file with several kernels names the symbol too.
/// A register finding's identity across the unpatched and the patched
/// code: its message and its place in the dump.
fn finding_key(d: &Diagnostic) -> (String, Option<(PathBuf, usize)>) {
    (
        d.message.clone(),
        d.location.as_ref().map(|l| (l.file.clone(), l.line)),
    )
}

fn kernel_label(label: &str, kernel: &str, single: bool) -> String {
    if single || label.contains(kernel) {
        label.to_string()
    } else {
        format!("{label}, kernel symbol `{kernel}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::parse::parse;

    fn t(name: &str) -> TargetId {
        TargetId::parse(name).expect("known target")
    }

    const K: &str = "\t.text
\t.globl\tk
k:
\tv_mov_b32 v[4:7], 0
\ts_mov_b32 s9, 0
\tv_add_co_u32 v1, vcc, v2, v3
\ts_endpgm
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
\t.section\t.rodata
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 8
\t\t.amdhsa_next_free_sgpr 10
\t\t.amdhsa_accum_offset 8
\t.end_amdhsa_kernel
\t.set k.num_vgpr, 8
\t.set k.num_agpr, 0
\t.set k.numbered_sgpr, 10
";

    #[test]
    fn counts_ranges_and_special_registers() {
        let b = analyze(&parse(K), &t("gfx942"));
        assert_eq!(b.len(), 1);
        assert_eq!(
            b[0].used,
            Usage {
                vgpr: 8,
                agpr: 0,
                sgpr: 10,
                vcc: true,
                flat_scratch: false,
                xnack_mask: false
            }
        );
        assert_eq!(
            b[0].declared.next_free_vgpr.as_ref().unwrap().value,
            Some(8)
        );
        assert_eq!(b[0].declared.num_vgpr.as_ref().unwrap().line, 15);
    }

    #[test]
    fn unevaluable_counts_are_a_warning() {
        let src = K.replace(
            ".amdhsa_next_free_vgpr 8",
            ".amdhsa_next_free_vgpr unknown_fn(3)",
        );
        let traced = Document::from_source(&src, "k.s");
        let o = check_registers(
            None,
            &traced,
            &t("gfx942"),
            RegisterPolicy::Error,
            "kernel `k`",
        )
        .expect("other counts hold");
        assert_eq!(o.notes.len(), 1);
        assert_eq!(o.notes[0].severity, Severity::Warning);
        assert!(o.notes[0]
            .message
            .contains("cannot evaluate .amdhsa_next_free_vgpr `unknown_fn(3)`"));
    }

    #[test]
    fn finds_tokens_as_words() {
        assert_eq!(find_token("\tv_mov_b32 v12, v1", "v1"), Some(16));
        assert_eq!(find_token("\tv_mov_b32 v[4:7], 0", "v[4:7]"), Some(11));
    }
}
