//! Wait-counter hazards: does every instruction wait for the memory
//! operations whose results it reads?
//!
//! * [`model`]: per generation, which instruction increments which counter,
//!   which registers it writes when it completes, which counters complete in
//!   order (LLVM `SIInsertWaitcnts.cpp`, `AMDGPUUsage.rst`).
//! * [`cfg`](mod@cfg): basic blocks and branches of each kernel.
//! * [`analysis`]: the score-bracket data flow over the CFG, to a fixpoint
//!   (pending operations carried across loop back edges; the kernel entry has
//!   nothing pending).
//! * [`suggest`]: for every wait, the loosest value that adds no hazard.
//!
//! [`lint`] runs it on one file and returns rustc-style diagnostics: hazards
//! (errors, or warnings with [`HazardPolicy::Warn`]), control flow or
//! instructions the model cannot follow (warnings, never silently safe), and
//! with `suggest` the loosenable waits (notes).

pub mod analysis;
pub mod cfg;
pub mod lds;
pub mod model;
pub mod suggest;

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};

use gcn_embed::TargetId;
use serde::Deserialize;

use crate::base::diag::Diagnostic;
use crate::base::document::Document;
use crate::base::isa::Counter;
use crate::base::parse::{AsmFile, Instruction, Kernel};
use crate::base::provenance::Origin;
use crate::stage::check::waitcnt::wait_values;

pub use analysis::{Access, Hazard};
pub use model::Model;
pub use suggest::Suggestion;

/// What to do with a wait-counter hazard in `gcn-patch check` / gcn-build
/// (`hazards = "error" | "warn" | "strict"` in kernels.toml). A hazard the
/// unpatched source has too (*inherited*: same producer and reader dump
/// lines, same register, no looser wait) is counted in one note per kernel
/// unless the policy is `Strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HazardPolicy {
    /// A new or worse hazard stops the build (default).
    #[default]
    Error,
    /// A new or worse hazard is reported as a warning.
    Warn,
    /// Every hazard stops the build, inherited ones too.
    Strict,
}

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
    let symbols = crate::stage::check::budget::set_symbols(asm);
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
                        let vs = if i.mnemonic == "s_wait_idle" {
                            model::COUNTERS
                                .iter()
                                .filter(|c| model.has(**c))
                                .map(|c| (*c, 0, (0, 0)))
                                .collect()
                        } else {
                            wait_values(i, &line.text, &model.limits, &symbols)
                        };
                        let vs: Vec<_> = vs.into_iter().filter(|(c, _, _)| model.has(*c)).collect();
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
/// `s_wait_alu` are not counter waits and are ignored)?
fn is_wait(m: &str) -> bool {
    m == "s_waitcnt"
        || m == "s_wait_idle"
        || (m.starts_with("s_waitcnt_") && m != "s_waitcnt_depctr")
        || (m.starts_with("s_wait_") && m.ends_with("cnt"))
        || m == "s_wait_loadcnt_dscnt"
        || m == "s_wait_storecnt_dscnt"
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

/// A hazard's place for matching across two versions of a kernel: the
/// positions of its producer and reader, its register or resource, its
/// counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct HazardKey {
    producer: (PathBuf, usize),
    line: (PathBuf, usize),
    register: String,
    counter: Counter,
}

/// How bad a hazard is where it is: operations at least as old as its
/// producer that may still be outstanding at the read (a looser wait raises
/// it), whether the counter is out of order there, and the value of the last
/// wait on its counter before the read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slack {
    older: u32,
    out_of_order: bool,
    wait: Option<u32>,
}

impl Slack {
    fn of(h: &Hazard) -> Slack {
        Slack {
            older: h.outstanding.saturating_sub(h.newer),
            out_of_order: h.out_of_order,
            wait: h.last_wait.map(|(_, v)| v),
        }
    }

    /// A looser wait before the same read: more old operations outstanding,
    /// out of order where it was not, or a larger (or no) last wait.
    fn worse_than(self, base: Slack) -> bool {
        let looser_wait = match (self.wait, base.wait) {
            (Some(a), Some(b)) => a > b,
            (None, Some(_)) => true,
            _ => false,
        };
        self.older > base.older || (self.out_of_order && !base.out_of_order) || looser_wait
    }
}

/// The hazards of the unpatched source (or of a `--baseline` file): a hazard
/// of the patched code found here, with no looser wait, is *inherited*.
pub struct Baseline {
    /// Every hazard is inherited (the code is the unpatched source itself).
    everything: bool,
    hazards: HashMap<HazardKey, Slack>,
    /// Patched line → baseline line (0-based) by diff alignment; `None`: by
    /// the lines' origins (a patched dump and its dump).
    aligned: Option<Vec<Option<usize>>>,
    /// What to lint to list the inherited hazards (the dump's path).
    source: String,
}

/// The outcome of matching one hazard against a [`Baseline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inheritance {
    New,
    Inherited,
    Worse(Slack),
}

impl Baseline {
    /// The code is its own unpatched source: every hazard is inherited.
    pub fn unpatched(source: &str) -> Baseline {
        Baseline {
            everything: true,
            hazards: HashMap::new(),
            aligned: None,
            source: source.to_string(),
        }
    }

    /// The hazards of `original` (the unpatched dump, retargeted as the
    /// patched code is), matched by the dump lines the patched code's lines
    /// come from.
    pub fn of_original(original: &Document, target: &TargetId) -> Baseline {
        let source = (0..original.len())
            .find_map(|i| original.origin(i).and_then(Origin::file_line))
            .map(|(f, _)| f.display().to_string())
            .unwrap_or_else(|| "the dump".into());
        let pos = |i: usize| {
            original
                .origin(i)
                .and_then(Origin::file_line)
                .map(|(f, l)| (f.to_path_buf(), l))
        };
        Baseline {
            everything: false,
            hazards: baseline_hazards(original, target, &pos),
            aligned: None,
            source,
        }
    }

    /// The hazards of `base` (any file), with the lines of `doc` matched to
    /// those of `base` by a diff alignment (equal lines in the longest
    /// common subsequence, [`similar`]'s Patience diff).
    pub fn aligned(doc: &Document, base: &Document, target: &TargetId) -> Baseline {
        let a: Vec<&str> = doc.texts().collect();
        let b: Vec<&str> = base.texts().collect();
        let mut map = vec![None; a.len()];
        let ops = similar::capture_diff_slices(similar::Algorithm::Patience, &a, &b);
        for op in ops {
            if let similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            {
                for j in 0..len {
                    map[old_index + j] = Some(new_index + j);
                }
            }
        }
        let here = PathBuf::from("<baseline>");
        let pos = |i: usize| Some((here.clone(), i));
        let source = (0..base.len())
            .find_map(|i| base.origin(i).and_then(Origin::file_line))
            .map(|(f, _)| f.display().to_string())
            .unwrap_or_else(|| "the baseline".into());
        Baseline {
            everything: false,
            hazards: baseline_hazards(base, target, &pos),
            aligned: Some(map),
            source,
        }
    }

    fn position(&self, doc: &Document, i: usize) -> Option<(PathBuf, usize)> {
        match &self.aligned {
            Some(map) => map
                .get(i)
                .copied()
                .flatten()
                .map(|j| (PathBuf::from("<baseline>"), j)),
            None => doc
                .origin(i)
                .and_then(Origin::file_line)
                .map(|(f, l)| (f.to_path_buf(), l)),
        }
    }

    fn classify(&self, doc: &Document, h: &Hazard) -> Inheritance {
        if self.everything {
            return Inheritance::Inherited;
        }
        let (Some(producer), Some(line)) =
            (self.position(doc, h.producer), self.position(doc, h.line))
        else {
            return Inheritance::New;
        };
        let key = HazardKey {
            producer,
            line,
            register: h.register.clone(),
            counter: h.counter,
        };
        match self.hazards.get(&key) {
            None => Inheritance::New,
            Some(&base) if Slack::of(h).worse_than(base) => Inheritance::Worse(base),
            Some(_) => Inheritance::Inherited,
        }
    }
}

/// Every hazard of `doc` (LDS DMA ones not proven disjoint included), by
/// [`HazardKey`] with positions from `pos`.
fn baseline_hazards(
    doc: &Document,
    target: &TargetId,
    pos: &dyn Fn(usize) -> Option<(PathBuf, usize)>,
) -> HashMap<HazardKey, Slack> {
    let asm = doc.asm();
    let mut out = HashMap::new();
    for k in kernels_of(asm, doc.kernels(), target) {
        for h in k.hazards(&analysis::Overrides::default()) {
            if h.pending == [model::LDS_DMA]
                && lds::dma_alias(asm, &k.model, &h, &k.dmas()) == lds::DmaAlias::Disjoint
            {
                continue;
            }
            if let (Some(producer), Some(line)) = (pos(h.producer), pos(h.line)) {
                let key = HazardKey {
                    producer,
                    line,
                    register: h.register.clone(),
                    counter: h.counter,
                };
                let slack = Slack::of(&h);
                out.entry(key)
                    .and_modify(|s: &mut Slack| {
                        if slack.worse_than(*s) {
                            *s = slack;
                        }
                    })
                    .or_insert(slack);
            }
        }
    }
    out
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
                match lds::dma_alias(asm, &k.model, &h, &dmas) {
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
        if let (Some(b), true) = (baseline, inherited > 0) {
            out.push(
                Diagnostic::note(format!(
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
                    Diagnostic::warning(format!(
                        "kernel `{}`: wait-counter analysis: {}",
                        k.name, u.what
                    ))
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
                    .map(|i| i.mnemonic.clone())
                    .unwrap_or_default();
                out.push(
                    doc.locate(
                        Diagnostic::warning(format!(
                            "kernel `{}`: {}",
                            k.name,
                            message.replace("{m}", &m)
                        ))
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

/// An LDS access while an LDS DMA is pending whose byte ranges could not be
/// bounded: a warning naming both lines and what was not proven.
fn render_may_alias(doc: &Document, k: &KernelAnalysis, h: &Hazard, why: &str) -> Diagnostic {
    let asm = doc.asm();
    let c = h.counter;
    let mn = |l: usize| {
        asm.lines[l]
            .instruction()
            .map(|i| i.mnemonic.clone())
            .unwrap_or_default()
    };
    let producer_text = crate::base::parse::strip_comment(&asm.lines[h.producer].text)
        .trim()
        .to_string();
    let wait = k
        .model
        .limits
        .wait_instruction(c, h.needed)
        .unwrap_or_else(|| format!("{c} {}", h.needed));
    let d = Diagnostic::warning(format!(
        "kernel `{}`: this `{}` may {} LDS that the `{}` at {} is still writing (may alias)",
        k.name,
        mn(h.line),
        if h.access == Access::Read { "read" } else { "write" },
        mn(h.producer),
        doc.origin_text(h.producer)
    ))
    .with_note(format!(
        "`{producer_text}` (LDS DMA) at {} has not completed here: {c} ≤ {} would cover it",
        doc.origin_text(h.producer),
        h.needed
    ))
    .with_note(format!("not proven disjoint: {why}"))
    .with_help(format!(
        "if the two can touch the same LDS bytes, insert `{wait}` before {}; compilers rely on alias information the asm does not carry (e.g. a double-buffered tile)",
        doc.origin_text(h.line)
    ));
    doc.locate(d, h.line, None, "may alias the pending LDS DMA")
}

/// A read with no wait on its counter between the producer and it (in the
/// same straight line of code): the number of instructions in between, the
/// code relying on the latency of the load.
fn timing_reliant(asm: &AsmFile, k: &KernelAnalysis, h: &Hazard) -> Option<usize> {
    if h.access != Access::Read || h.producer >= h.line {
        return None;
    }
    let mut n = 0;
    for l in h.producer + 1..h.line {
        let line = &asm.lines[l];
        if line.label().is_some() {
            return None;
        }
        if line.instruction().is_some() {
            n += 1;
        }
        if k.waits
            .get(&l)
            .is_some_and(|ws| ws.iter().any(|(c, _)| *c == h.counter))
        {
            return None;
        }
    }
    Some(n)
}

fn render_hazard(
    doc: &Document,
    k: &KernelAnalysis,
    h: &Hazard,
    policy: HazardPolicy,
    as_written: bool,
) -> Diagnostic {
    let asm = doc.asm();
    let limits = &k.model.limits;
    let c = h.counter;
    let producer_text = asm.lines[h.producer]
        .instruction()
        .map(|_| asm.lines[h.producer].text.trim().to_string())
        .unwrap_or_default();
    let producer_text = producer_text
        .split(&[';'][..])
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let producer_mn = producer_text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
    let pending: Vec<String> = h.pending.iter().map(|u| model::unit_name(*u)).collect();
    let wait = limits
        .wait_instruction(c, h.needed)
        .unwrap_or_else(|| format!("{c} {}", h.needed));
    let what = match h.access {
        Access::Read => match timing_reliant(asm, k, h).filter(|_| as_written) {
            Some(0) => format!(
                "`{}` is read right after the `{producer_mn}` that writes it with no wait (relies on latency)",
                h.register
            ),
            Some(n) => format!(
                "`{}` is read {n} instruction{} after the `{producer_mn}` that writes it with no wait (relies on latency)",
                h.register,
                if n == 1 { "" } else { "s" }
            ),
            None => format!(
                "`{}` is read before the `{producer_mn}` that writes it has completed",
                h.register
            ),
        },
        Access::Overwrite => format!(
            "`{}` is overwritten while the `{producer_mn}` that writes it may still be in flight",
            h.register
        ),
        Access::Barrier => format!(
            "barrier while the `{producer_mn}` of this wave may not have reached LDS: other waves may read stale data"
        ),
    };
    let msg = format!("kernel `{}`: {what}", k.name);
    let mut d = match policy {
        HazardPolicy::Error | HazardPolicy::Strict => Diagnostic::error(msg),
        HazardPolicy::Warn => Diagnostic::warning(msg),
    };
    let text = &asm.lines[h.line].text;
    let span = register_span(text, &h.register);
    let label = match h.access {
        Access::Read => format!("reads {}", pending.join(", ")),
        Access::Overwrite => format!("overwrites {}", pending.join(", ")),
        Access::Barrier => "barrier".to_string(),
    };
    d = d.with_note(format!(
        "{} {} written by `{producer_text}` at {}",
        pending.join(", "),
        if pending.len() == 1 { "is" } else { "are" },
        doc.origin_text(h.producer)
    ));
    let state = if h.out_of_order {
        format!(
            "{c} here: up to {} operation(s) outstanding, completing out of order ({}), so only `{}` waits for it",
            h.outstanding,
            if c == Counter::Lgkmcnt || c == Counter::Kmcnt {
                "a scalar memory load, a message, a flat access or mixed LDS/SMEM operations are pending"
            } else {
                "a flat access or mixed operation types are pending"
            },
            limits.wait_instruction(c, 0).unwrap_or_default()
        )
    } else {
        format!(
            "{c} here: up to {} operation(s) outstanding, {} issued after that `{producer_mn}`, so a wait for {c} ≤ {} covers it",
            h.outstanding, h.newer, h.needed
        )
    };
    d = d.with_note(state);
    let mut fix_change = None;
    if let Some((wl, wv)) = h.last_wait {
        d = d.with_note(format!(
            "the last {c} wait on every path here is `{}` at {}",
            asm.lines[wl].text.trim(),
            doc.origin_text(wl)
        ));
        if wv > h.needed && wl > h.producer {
            fix_change = Some((wl, wv));
        }
    }
    if let Some((wl, wv)) = fix_change {
        d = d.with_help(format!(
            "`{}` → `{}` at {}",
            written(k, asm, wl, c, wv),
            written(k, asm, wl, c, h.needed),
            doc.origin_text(wl)
        ));
        d = d.with_help(format!(
            "or insert `{wait}` before {}",
            doc.origin_text(h.line)
        ));
    } else {
        d = d.with_help(format!(
            "insert `{wait}` before {}",
            doc.origin_text(h.line)
        ));
    }
    doc.locate(d, h.line, span, label)
}

/// The dump's wait instructions that are not in the patched document (by
/// file and line), per file, sorted by line: a patch or rule removed or
/// changed them. They are copied out of the dump (few), so the dump can be
/// dropped before the analysis. Built once per check: per hazard it would
/// make the check quadratic (every hazard scanning both whole documents).
pub(crate) struct RemovedWaits(HashMap<PathBuf, Vec<RemovedWait>>);

/// One wait of the dump that the patched document lacks.
struct RemovedWait {
    /// 1-based line in the dump.
    line: usize,
    /// The wait as parsed, and its text.
    inst: Instruction,
    text: String,
}

impl RemovedWaits {
    /// The waits of `original` (the dump) whose file and line no line of
    /// `doc` (the patched asm) comes from.
    pub(crate) fn new(doc: &Document, original: &Document) -> Self {
        // The dump's waits by line number (then file): looking up each
        // patched line's origin costs a hash of a number, not of a path.
        let mut waits: HashMap<usize, Vec<(&Path, usize)>> = HashMap::new();
        for i in 0..original.len() {
            if !original
                .instruction(i)
                .is_some_and(|inst| is_wait(&inst.mnemonic))
            {
                continue;
            }
            if let Some((file, line)) = original.origin(i).and_then(|o| o.file_line()) {
                waits.entry(line).or_default().push((file, i));
            }
        }
        for i in 0..doc.len() {
            if let Some((file, line)) = doc.origin(i).and_then(|o| o.file_line()) {
                if let Some(v) = waits.get_mut(&line) {
                    v.retain(|&(f, _)| f != file);
                }
            }
        }
        let mut by_file: HashMap<PathBuf, Vec<RemovedWait>> = HashMap::new();
        for (line, v) in waits {
            for (file, i) in v {
                let Some(inst) = original.instruction(i) else {
                    continue;
                };
                by_file
                    .entry(file.to_path_buf())
                    .or_default()
                    .push(RemovedWait {
                        line,
                        inst: inst.clone(),
                        text: original.text(i).to_string(),
                    });
            }
        }
        for v in by_file.values_mut() {
            v.sort_unstable_by_key(|w| w.line);
        }
        RemovedWaits(by_file)
    }
}

/// Notes naming the dump's waits between the producer's and the read's
/// dump lines that the patched document no longer has and that would have
/// covered the hazard (a wait on its counter for at most the needed value).
fn removed_waits(
    doc: &Document,
    removed: &RemovedWaits,
    k: &KernelAnalysis,
    h: &Hazard,
) -> Vec<String> {
    let (producer, read) = (h.producer, h.line);
    fn file_line(d: &Document, i: usize) -> Option<(&Path, usize)> {
        d.origin(i).and_then(Origin::file_line)
    }
    let (Some((pf, pl)), Some((rf, rl))) = (file_line(doc, producer), file_line(doc, read)) else {
        return vec![];
    };
    if pf != rf || pl >= rl {
        return vec![];
    }
    let Some(waits) = removed.0.get(pf) else {
        return vec![];
    };
    // The removed waits strictly between the load and the read.
    let from = waits.partition_point(|w| w.line <= pl);
    waits[from..]
        .iter()
        .take_while(|w| w.line < rl)
        .filter(|w| {
            wait_values(&w.inst, &w.text, &k.model.limits, &HashMap::new())
                .iter()
                .any(|(c, v, _)| *c == h.counter && *v <= h.needed)
        })
        .map(|w| {
            format!(
                "the dump's `{}` at {}:{}, between that load and this read, is not in the patched asm as written: a patch or rule removed or changed it",
                w.text.trim(),
                pf.display(),
                w.line
            )
        })
        .collect()
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
    let first = match m {
        "s_wait_loadcnt_dscnt" => Counter::Loadcnt,
        "s_wait_storecnt_dscnt" => Counter::Storecnt,
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
    format!("{m} {:#x}", (value(first) << 8) | value(Counter::Dscnt))
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
