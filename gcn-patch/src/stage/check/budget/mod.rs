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

use super::expr::{eval, set_symbols};
use super::occupancy::{occupancy, Occupancy};
use crate::base::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::base::document::{Document, Edits};
use crate::base::isa::Isa;
use crate::base::parse::{AsmFile, Kernel, RegFile, RegisterRef};
use crate::base::provenance::Origin;
use crate::config::policy::RegisterPolicy;

mod problems;
mod update;
use problems::*;
use update::*;

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
    /// The register operands of the kernel's instructions that use a
    /// higher register of their class than every use before them, in line
    /// order: the first use of a class, the first use at or beyond any
    /// limit and the highest use are among them (what the findings name),
    /// and a large kernel keeps a few hundred, not one per operand.
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
        .map(|k| analyze_kernel(asm, k, &symbols, isa.unified_agprs, target))
        .collect()
}

/// gfx1250: the VGPR MSBs control flow gives the instructions of `k`, over
/// the hazard check's CFG (`None` when the kernel never sets them).
fn msb_flow(asm: &AsmFile, k: &Kernel, target: &TargetId) -> Option<super::msb::Flow> {
    let sets = k.code.clone().any(|l| {
        asm.lines
            .get(l)
            .and_then(|x| x.instruction())
            .is_some_and(|i| i.mnemonic == "s_set_vgpr_msb")
    });
    if !sets {
        return None;
    }
    let model = super::hazard::Model::new(target.processor.generation, target.processor.name);
    let ranges: Vec<_> = k.blocks.iter().map(|b| b.lines.clone()).collect();
    super::hazard::cfg::build(asm, &ranges, &model).msb
}

fn analyze_kernel(
    asm: &AsmFile,
    k: &Kernel,
    symbols: &HashMap<String, String>,
    gfx90a: bool,
    target: &TargetId,
) -> KernelBudget {
    // gfx1250: every VGPR each instruction names on some path, by the MSBs
    // control flow gives (not llvm-objdump's annotations).
    let msb = msb_flow(asm, k, target);
    let mut used = Usage::default();
    let mut uses = vec![];
    // The highest register of each class used so far: only a use above it
    // is kept ([`KernelBudget::uses`]).
    let mut high: [Option<u32>; 6] = [None; 6];
    let mut record = |u: RegUse| {
        let h = &mut high[u.class as usize];
        if h.is_none_or(|h| u.last > h) {
            *h = Some(u.last);
            uses.push(u);
        }
    };
    for idx in k.code.clone() {
        let Some(inst) = asm.lines.get(idx).and_then(|l| l.instruction()) else {
            continue;
        };
        if implicit_vcc(&inst.mnemonic) {
            used.vcc = true;
            record(RegUse {
                line: idx,
                class: RegClass::Vcc,
                first: 0,
                last: 0,
                operand: None,
            });
        }
        let resolved = msb.as_ref().map(|f| f.each(asm, idx));
        let insts = resolved.as_deref().unwrap_or(std::slice::from_ref(inst));
        for r in insts.iter().flat_map(|i| i.registers()) {
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
            record(RegUse {
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
            let text = asm.lines.get(*line)?.text();
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
            let inherited: HashSet<FindingKey> = match original {
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
                let mut note = Diagnostic::note(
                    Code::RegistersUpdated,
                    format!("updated the register counts of {klabel}"),
                );
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
            Diagnostic::note(Code::Occupancy, msg)
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
/// code: its code, message and place in the dump.
type FindingKey = (Code, String, Option<(PathBuf, usize)>);

/// The [`FindingKey`] of `d`.
fn finding_key(d: &Diagnostic) -> FindingKey {
    (
        d.code,
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
