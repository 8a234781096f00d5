//! Wait-counter hazards: does every instruction wait for the memory
//! operations whose results it reads?
//!
//! * `model`: per generation, which instruction increments which counter,
//!   which registers it writes when it completes, which counters complete in
//!   order (LLVM `SIInsertWaitcnts.cpp`, `AMDGPUUsage.rst`).
//! * `cfg`: basic blocks and branches of each kernel.
//! * `analysis`: the score-bracket data flow over the CFG, to a fixpoint
//!   (pending operations carried across loop back edges; the kernel entry has
//!   nothing pending).
//! * `suggest`: for every wait, the loosest value that adds no hazard.
//! * `alu`: GFX12 expert scheduling mode 2 (`SCHED_MODE` DEP_MODE = 2): the
//!   `s_wait_alu` `va_vdst` / `vm_vsrc` windows the hardware does not
//!   protect in that mode (aiter #5402), code GP0432.
//!
//! [`lint`] runs it on one file and returns rustc-style diagnostics: hazards
//! (errors, or warnings with [`HazardPolicy::Warn`]), control flow or
//! instructions the model cannot follow (warnings, never silently safe), and
//! with `suggest` the loosenable waits (notes).

pub(crate) mod alu;
pub(crate) mod analysis;
pub(crate) mod cfg;
pub(crate) mod lds;
pub(crate) mod model;
pub(crate) mod suggest;

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic};
use crate::base::document::Document;
use crate::base::isa::{Counter, WaitInstruction};
use crate::base::parse::{AsmFile, Instruction, Kernel};
use crate::base::provenance::Origin;
use crate::config::policy::HazardPolicy;
use crate::stage::check::waitcnt::wait_values;

mod baseline;
mod removed;
mod render;
pub use baseline::Baseline;
use baseline::*;
pub(crate) use removed::RemovedWaits;
use removed::*;
use render::*;

pub use analysis::{Access, Hazard};
pub use model::Model;
pub use suggest::Suggestion;

/// One counter of a wait instruction: counter, value, byte range of the
/// value in the line.
pub type WaitValue = (Counter, u32, (usize, usize));

/// One kernel prepared for analysis.
pub struct KernelAnalysis {
    /// Kernel symbol (or `<file>` for code outside any kernel).
    pub name: String,
    /// The model.
    pub model: Model,
    /// The CFG.
    pub cfg: cfg::Cfg,
    /// Wait values per line.
    pub waits: BTreeMap<usize, Vec<(Counter, u32)>>,
    /// Wait value spans per line: (counter, value, byte range in the text).
    pub wait_spans: BTreeMap<usize, Vec<WaitValue>>,
    /// Lines of instructions the model does not know.
    pub unknown: Vec<usize>,
    /// Lines of instructions that access registers by a run-time index
    /// (`v_movrels*`, `s_set_gpr_idx_on`): not followed, reported.
    pub indexed: Vec<usize>,
}

impl KernelAnalysis {
    /// Lines of the kernel's LDS DMA instructions.
    pub fn dmas(&self) -> Vec<usize> {
        self.cfg
            .nodes
            .iter()
            .flat_map(|n| &n.insts)
            .filter(|i| i.effect.events.iter().any(|e| e.lds_dma))
            .map(|i| i.line)
            .collect()
    }

    /// Run the analysis with `ov` applied.
    pub fn hazards(&self, ov: &analysis::Overrides) -> Vec<Hazard> {
        analysis::Analysis {
            model: &self.model,
            cfg: &self.cfg,
            waits: &self.waits,
        }
        .run(ov)
    }
}

/// Prepare every kernel of `asm` for `target` (a file without kernel
/// descriptors is analysed as one program from its first instruction).
pub fn kernels(asm: &AsmFile, target: &TargetId) -> Vec<KernelAnalysis> {
    kernels_of(asm, &asm.kernels(), target)
}

/// [`kernels`] with the file's kernels already found (a document's,
/// [`Document::kernels`]).
fn kernels_of(asm: &AsmFile, found: &[Kernel], target: &TargetId) -> Vec<KernelAnalysis> {
    let model = Model::new(target.processor.generation, target.processor.name);
    let symbols = crate::stage::check::expr::set_symbols(asm);
    let mut groups: Vec<(String, Vec<Range<usize>>)> = found
        .iter()
        .filter(|k| !k.blocks.is_empty())
        .map(|k| {
            (
                k.name.clone(),
                k.blocks.iter().map(|b| b.lines.clone()).collect(),
            )
        })
        .collect();
    if groups.is_empty() {
        groups.push((
            "<file>".into(),
            std::iter::once(0..asm.lines.len()).collect(),
        ));
    }
    groups
        .into_iter()
        .map(|(name, ranges)| {
            let cfg = cfg::build(asm, &ranges, &model);
            let mut waits = BTreeMap::new();
            let mut wait_spans = BTreeMap::new();
            let mut unknown = vec![];
            let mut indexed = vec![];
            for node in &cfg.nodes {
                for inst in &node.insts {
                    let line = &asm.lines[inst.line];
                    let Some(i) = line.instruction() else {
                        continue;
                    };
                    if inst.effect.unknown {
                        unknown.push(inst.line);
                    }
                    if inst.effect.indexed {
                        indexed.push(inst.line);
                    }
                    if is_wait(&i.mnemonic) {
                        let vs = if WaitInstruction::of(&i.mnemonic) == Some(WaitInstruction::Idle)
                        {
                            model::COUNTERS
                                .iter()
                                .filter(|c| model.has(**c))
                                .map(|c| (*c, 0, (0, 0)))
                                .collect()
                        } else {
                            wait_values(i, line.text(), &model.limits, &symbols)
                        };
                        let mut vs: Vec<_> =
                            vs.into_iter().filter(|(c, _, _)| model.has(*c)).collect();
                        // Kept for the whole analysis, one per wait line:
                        // no growth slack.
                        vs.shrink_to_fit();
                        waits.insert(inst.line, vs.iter().map(|(c, v, _)| (*c, *v)).collect());
                        wait_spans.insert(inst.line, vs);
                    }
                }
            }
            KernelAnalysis {
                name,
                model,
                cfg,
                waits,
                wait_spans,
                unknown,
                indexed,
            }
        })
        .collect()
}

/// Is this a wait instruction the model applies (`s_waitcnt_depctr` and
/// `s_wait_alu` are not memory-counter waits: the SCHED_MODE_2 check,
/// [`alu`], reads them)?
fn is_wait(m: &str) -> bool {
    WaitInstruction::of(m).is_some()
}

/// Every hazard of `asm` for `target`, per kernel name.
pub fn hazards(asm: &AsmFile, target: &TargetId) -> Vec<(String, Hazard)> {
    kernels(asm, target)
        .iter()
        .flat_map(|k| {
            k.hazards(&analysis::Overrides::default())
                .into_iter()
                .map(|h| (k.name.clone(), h))
        })
        .collect()
}

/// Options of [`lint`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LintOptions {
    /// Hazards are errors (default) or warnings.
    pub policy: HazardPolicy,
    /// Also list waits that could be loosened (notes).
    pub suggest: bool,
}

/// Lint a document: hazards, unfollowed control flow and unknown
/// instructions, and (with `suggest`) loosenable waits, each placed at the
/// line's origin (dump line, patch hunk, rule).
pub fn lint(doc: &Document, target: &TargetId, opts: LintOptions) -> Vec<Diagnostic> {
    lint_patched(doc, None, target, opts)
}

/// [`lint`] reporting only the hazards of `doc` that `baseline` does not
/// have, or has with a stricter wait (see [`Baseline`]): the inherited ones
/// are counted in one note per kernel, or are errors too with
/// [`HazardPolicy::Strict`].
pub fn lint_baseline(
    doc: &Document,
    baseline: &Baseline,
    target: &TargetId,
    opts: LintOptions,
) -> Vec<Diagnostic> {
    lint_removed(doc, None, Some(baseline), target, opts)
}

/// [`lint`] of a patched document, with the unpatched dump `original`: a
/// hazard whose producer and read both come from the dump also names the
/// dump's waits between them that the patches removed.
pub fn lint_patched(
    doc: &Document,
    original: Option<&Document>,
    target: &TargetId,
    opts: LintOptions,
) -> Vec<Diagnostic> {
    let removed = original.map(|o| RemovedWaits::new(doc, o));
    lint_removed(doc, removed.as_ref(), None, target, opts)
}

/// [`lint_patched`] with the dump's removed waits already collected
/// ([`RemovedWaits::new`]), so that the dump itself need not be kept while
/// the analysis runs.
pub(crate) fn lint_removed(
    doc: &Document,
    removed: Option<&RemovedWaits>,
    baseline: Option<&Baseline>,
    target: &TargetId,
    opts: LintOptions,
) -> Vec<Diagnostic> {
    let asm = doc.asm();
    let mut out = vec![];
    for k in kernels_of(asm, doc.kernels(), target) {
        let mut inherited = 0usize;
        let dmas = k.dmas();
        for h in k.hazards(&analysis::Overrides::default()) {
            let alias = if h.pending == [model::LDS_DMA] {
                match lds::dma_alias(asm, &k.cfg, &k.model, &h, &dmas) {
                    lds::DmaAlias::Disjoint => continue,
                    lds::DmaAlias::Overlap => None,
                    lds::DmaAlias::MayAlias(why) => Some(why),
                }
            } else {
                None
            };
            let inheritance = baseline.map_or(Inheritance::New, |b| b.classify(doc, &h));
            if inheritance == Inheritance::Inherited && opts.policy != HazardPolicy::Strict {
                inherited += 1;
                continue;
            }
            if let Some(why) = alias {
                out.push(render_may_alias(doc, &k, &h, &why));
                continue;
            }
            // A wait a patch removed is no design choice: no latency wording.
            let removed_notes = removed.map_or_else(Vec::new, |r| removed_waits(doc, r, &k, &h));
            let mut d = render_hazard(doc, &k, &h, opts.policy, removed_notes.is_empty());
            match inheritance {
                Inheritance::Inherited => {
                    d = d.with_note(
                        "the unpatched source has this hazard too (inherited): an error only because `hazards = \"strict\"`",
                    );
                }
                Inheritance::Worse(base) => {
                    d = d.with_note(format!(
                        "the unpatched source has this hazard too, but with {} before this read: the patched code waits less (made worse)",
                        match base.wait {
                            Some(v) => format!("a wait for {} ≤ {v}", h.counter),
                            None => "no wait".to_string(),
                        }
                    ));
                }
                Inheritance::New => {}
            }
            for note in removed_notes {
                d = d.with_note(note);
            }
            out.push(d);
        }
        // GFX12 expert scheduling mode 2: ALU dependency hazards (only in
        // kernels that select the mode); those the baseline has too are
        // inherited, as above.
        if k.model.generation >= gcn_embed::Generation::Gfx12 {
            if let Some(ak) = alu::prepare(asm, &k.cfg, &k.model) {
                let mut alu_inherited = 0usize;
                for h in ak.hazards() {
                    let inherited = baseline.is_some_and(|b| b.inherits_alu(doc, &h));
                    if inherited && opts.policy != HazardPolicy::Strict {
                        alu_inherited += 1;
                        continue;
                    }
                    let mut d = alu::render(doc, &k.name, &ak, &h, opts.policy);
                    if inherited {
                        d = d.with_note("the unpatched source has this hazard too (inherited): an error only because `hazards = \"strict\"`");
                    }
                    out.push(d);
                }
                if let (Some(b), true) = (baseline, alu_inherited > 0) {
                    out.push(
                        Diagnostic::note(
                            Code::InheritedHazards,
                            format!(
                                "kernel `{}`: {alu_inherited} SCHED_MODE_2 ALU dependency hazard(s) (a missing `s_wait_alu`) inherited from {}: not errors",
                                k.name,
                                if b.aligned.is_some() { format!("the baseline {}", b.source) } else { "the unpatched source".to_string() }
                            ),
                        )
                        .with_help(format!(
                            "list them with `gcn-patch lint {} --target {}`; `hazards = \"strict\"` in kernels.toml makes them errors",
                            b.source,
                            target.name()
                        )),
                    );
                }
            }
        }
        if let (Some(b), true) = (baseline, inherited > 0) {
            out.push(
                Diagnostic::note(Code::InheritedHazards, format!(
                    "kernel `{}`: {inherited} wait-counter hazard(s) inherited from {} (the same producer, reader and register there, no looser wait): not errors",
                    k.name,
                    if b.aligned.is_some() { format!("the baseline {}", b.source) } else { "the unpatched source".to_string() }
                ))
                .with_help(format!(
                    "list them with `gcn-patch lint {} --target {}`; `hazards = \"strict\"` in kernels.toml makes them errors",
                    b.source,
                    target.name()
                )),
            );
        }
        for u in &k.cfg.unfollowed {
            out.push(
                doc.locate(
                    Diagnostic::warning(
                        Code::HazardAnalysisLimit,
                        format!("kernel `{}`: wait-counter analysis: {}", k.name, u.what),
                    )
                    .with_note("hazards on this path are not checked"),
                    u.line,
                    None,
                    "not followed by the hazard analysis",
                ),
            );
        }
        // Instructions the model does not follow: one warning each
        // (`{m}`: the mnemonic).
        let unfollowed: [(&[usize], &str, &str, &str); 2] = [
            (
                &k.unknown,
                "`{m}` is not known to the wait-counter model",
                "its register reads are checked, but if it accesses memory its results are not tracked",
                "unknown instruction",
            ),
            (
                &k.indexed,
                "the wait-counter analysis cannot follow `{m}`: it reads or writes registers by a run-time index (M0 or `s_set_gpr_idx_on`)",
                "hazards on the registers it reaches by index are not checked",
                "indexed register access",
            ),
        ];
        for (lines, message, note, label) in unfollowed {
            for &l in lines {
                let m = asm.lines[l]
                    .instruction()
                    .map(|i| i.mnemonic.to_string())
                    .unwrap_or_default();
                out.push(
                    doc.locate(
                        Diagnostic::warning(
                            Code::HazardAnalysisLimit,
                            format!("kernel `{}`: {}", k.name, message.replace("{m}", &m)),
                        )
                        .with_note(note),
                        l,
                        None,
                        label,
                    ),
                );
            }
        }
        if opts.suggest {
            for s in suggest::suggest(&k) {
                out.push(suggest::render(doc, &k, &s));
            }
        }
    }
    out
}

/// `vmcnt(3)` / `loadcnt 0x3`: the counter part of a wait, as written.
pub(crate) fn short(c: Counter, v: u32, k: &KernelAnalysis) -> String {
    if k.model.limits.split_counters() || c == Counter::Vscnt {
        k.model
            .limits
            .wait_instruction(c, v)
            .unwrap_or_else(|| format!("{c} {v}"))
    } else {
        format!("{c}({v})")
    }
}

/// The wait at `line` as it would be written with `c` set to `v`: the
/// counter part ([`short`]), or for a GFX12 combined wait
/// (`s_wait_loadcnt_dscnt`, `s_wait_storecnt_dscnt`) the whole instruction
/// with its other counter kept, since the fix changes that line.
pub(crate) fn written(
    k: &KernelAnalysis,
    asm: &AsmFile,
    line: usize,
    c: Counter,
    v: u32,
) -> String {
    let m = asm.lines[line]
        .instruction()
        .map(|i| i.mnemonic.as_str())
        .unwrap_or_default();
    let (first, second) = match WaitInstruction::of(m) {
        Some(WaitInstruction::SplitPair(first, second)) => (first, second),
        _ => return short(c, v, k),
    };
    let value = |x: Counter| {
        if x == c {
            v
        } else {
            k.waits
                .get(&line)
                .and_then(|ws| ws.iter().find(|(w, _)| *w == x).map(|(_, v)| *v))
                .unwrap_or(0)
        }
    };
    format!("{m} {:#x}", (value(first) << 8) | value(second))
}

/// Byte range of `reg` in the operands of `text`.
fn register_span(text: &str, reg: &str) -> Option<(usize, usize)> {
    let code_end = text.find(';').unwrap_or(text.len());
    let start = text[..code_end]
        .trim_start()
        .find(char::is_whitespace)
        .map(|i| i + (text.len() - text.trim_start().len()))?;
    let pos = text[start..code_end].find(reg)? + start;
    Some((pos, pos + reg.len()))
}
