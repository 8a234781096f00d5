//! The whole pipeline for one kernel × target job:
//! patch → retarget → check → assemble → link → verify.
//!
//! Sources with Triton metadata (`triton = { … }`) also get the Triton limits check
//! ([`check::triton_limits`]).
//!
//! [`plan`] reads the manifest, checks every pin and applies every source's
//! patches once; [`prepare`] retargets and checks one job; [`build()`] turns a
//! prepared job into a verified code object. The CLI (`gcn-patch check`,
//! `apply`) and `gcn-build` both go through here, so a broken patch reads the
//! same in both.

pub mod build;
pub mod cache;
pub mod engine;
pub mod fingerprint;
#[cfg(feature = "remote-cache")]
pub mod remote;

use std::borrow::Cow;
use std::path::Path;

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting, Severity};
use crate::base::document::Document;
use crate::config::manifest::Manifest;
use crate::config::policy::{HazardPolicy, RegisterPolicy};
use crate::stage::check;
use crate::stage::check::hazard::{self, LintOptions};
use crate::stage::retarget::{self, RetargetOptions};
use crate::stage::toolchain::Toolchain;
use crate::stage::verify::{self, Expect, VerifyReport};
use crate::stage::{assemble, link};

/// One unit of work: source `source` of kernel `kernel` built for `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Index into `Manifest::kernels`.
    pub kernel: usize,
    /// Index into that kernel's sources.
    pub source: usize,
    /// The target to build for.
    pub target: TargetId,
}

/// A source's dump before and after its patches.
#[derive(Debug, Clone)]
pub struct Patched {
    /// The dump as read (pin checked).
    pub original: Document,
    /// After every diff and rule.
    pub patched: Document,
    /// No diff or rule changed a line: `patched` has the lines of
    /// `original` (found once per source, not once per target).
    pub unchanged: bool,
}

/// Every job of a manifest, each source's pin and patches checked.
///
/// The plan holds indices and targets, never a document: a job loads and
/// patches its source when it runs ([`load`]; the build engine shares one
/// load between the jobs of a source and drops it after the last of them,
/// see [`Sources`]), so the memory of a whole library's check or build
/// depends on the jobs in flight, not on the number of sources.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Jobs in manifest order: kernel, source, target.
    pub jobs: Vec<Job>,
    /// The sources whose pin and patches were checked: (kernel, source).
    checked: std::collections::BTreeSet<(usize, usize)>,
}

impl Plan {
    /// Whether planning checked the pin and patches of source `source` of
    /// kernel `kernel` (every source of a manifest that planned).
    pub fn checked(&self, kernel: usize, source: usize) -> bool {
        self.checked.contains(&(kernel, source))
    }
}

/// Read source `source` of kernel `kernel` and apply its patches: the dump
/// as read (pin checked) and patched. What a job does first; [`plan`]
/// checks that it succeeds for every source, but keeps nothing of it.
pub fn load(manifest: &Manifest, kernel: usize, source: usize) -> Result<Patched, Diagnostics> {
    let k = &manifest.kernels[kernel];
    let (original, patched) =
        crate::stage::patch::apply_keeping_original(manifest, k, &k.sources[source])?;
    Ok(Patched {
        unchanged: original.same_lines(&patched),
        original,
        patched,
    })
}

/// The patched sources of a set of jobs, each loaded ([`load`]) by the first
/// of its jobs to ask and dropped when the last of them is done: the build
/// engine's memory holds the sources of the jobs in flight (jobs of one
/// source are adjacent in a plan), never every source of the manifest.
pub struct Sources<'m> {
    manifest: &'m Manifest,
    slots: std::collections::HashMap<(usize, usize), std::sync::Mutex<Slot>>,
}

/// One source of [`Sources`]: how many of its jobs are not done yet, and the
/// load, while any of them may still ask for it.
struct Slot {
    remaining: usize,
    loaded: Option<Result<std::sync::Arc<Patched>, Diagnostics>>,
}

impl<'m> Sources<'m> {
    /// The sources of `jobs`, none loaded yet.
    pub fn new(manifest: &'m Manifest, jobs: &[Job]) -> Self {
        let mut slots: std::collections::HashMap<(usize, usize), std::sync::Mutex<Slot>> =
            std::collections::HashMap::new();
        for j in jobs {
            slots
                .entry((j.kernel, j.source))
                .or_insert_with(|| {
                    std::sync::Mutex::new(Slot {
                        remaining: 0,
                        loaded: None,
                    })
                })
                .get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remaining += 1;
        }
        Sources { manifest, slots }
    }

    /// The source of `job`, patched: loaded now if no other job of it has
    /// (another job of the same source waits for the one loading it), else
    /// the shared load. Call [`Sources::done`] when the job ends.
    pub fn get(&self, job: &Job) -> Result<std::sync::Arc<Patched>, Diagnostics> {
        let load = || load(self.manifest, job.kernel, job.source).map(std::sync::Arc::new);
        let Some(slot) = self.slots.get(&(job.kernel, job.source)) else {
            // Not one of the jobs given to `new`: loaded for this call alone.
            return load();
        };
        let mut slot = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.loaded.get_or_insert_with(load).clone()
    }

    /// `job` is done with its source: after the last job of a source, its
    /// load is dropped (when the jobs' own references to it are).
    pub fn done(&self, job: &Job) {
        if let Some(slot) = self.slots.get(&(job.kernel, job.source)) {
            let mut slot = slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            slot.remaining = slot.remaining.saturating_sub(1);
            if slot.remaining == 0 {
                slot.loaded = None;
            }
        }
    }
}

/// Whether `source` builds for `target` when asked to (`--target`): one of
/// its `targets`, or a target of the same generation (the rule [`plan`]'s
/// `extra` targets follow; every command taking `--target` uses it).
pub fn builds_for(source: &crate::config::manifest::SourceSpec, target: &TargetId) -> bool {
    source.targets.contains(target)
        || source
            .targets
            .iter()
            .any(|s| s.processor.generation == target.processor.generation)
}

/// Build the plan: pins, patches and rules of every source checked; then one
/// job per source × target (plus `extra` targets of the same generation as a
/// source's own). All failures are collected, not just the first. One source
/// at a time; see [`plan_with`] to check sources in parallel.
pub fn plan(manifest: &Manifest, extra: &[TargetId]) -> Result<Plan, Diagnostics> {
    plan_with(manifest, extra, 1, &crate::base::jobs::Unlimited)
}

/// [`plan`], checking up to `max_workers` sources at once, bounded by
/// `tokens` like the build's jobs ([`crate::base::jobs::run`]). The result, and the
/// order of any errors, do not depend on the worker count. Each source is
/// checked and dropped ([`crate::stage::patch::check`]): a source without
/// patches or rules is read, its pin and text checked, and not parsed.
pub fn plan_with(
    manifest: &Manifest,
    extra: &[TargetId],
    max_workers: usize,
    tokens: &dyn crate::base::jobs::Tokens,
) -> Result<Plan, Diagnostics> {
    plan_cached(manifest, extra, max_workers, tokens, None)
}

/// [`plan_with`], skipping the check of every source whose inputs passed it
/// before ([`fingerprint::Fingerprints::source_checked`]: the same dump
/// bytes, pin, patches and rules) and recording each check that passes.
pub fn plan_cached(
    manifest: &Manifest,
    extra: &[TargetId],
    max_workers: usize,
    tokens: &dyn crate::base::jobs::Tokens,
    fingerprints: Option<&fingerprint::Fingerprints>,
) -> Result<Plan, Diagnostics> {
    let sources: Vec<(usize, usize)> = manifest
        .kernels
        .iter()
        .enumerate()
        .flat_map(|(ki, k)| (0..k.sources.len()).map(move |si| (ki, si)))
        .collect();
    // Sources whose check passed before, found in a few batches (a thread
    // per batch, not per source); the others are checked, one job each.
    let passed: Vec<bool> = match fingerprints {
        None => vec![false; sources.len()],
        Some(f) => {
            let size = sources.len().div_ceil(max_workers.max(1) * 4).max(1);
            let batches: Vec<&[(usize, usize)]> = sources.chunks(size).collect();
            let found = crate::base::jobs::run(batches.clone(), max_workers, tokens, |batch| {
                batch
                    .iter()
                    .map(|&(ki, si)| {
                        // The test hook fires here too: a batch that panics
                        // leaves its sources to be checked, where it fires
                        // again as that source's own error.
                        crate::base::jobs::test_panic_point("patch", &manifest.kernels[ki].name);
                        f.source_key(manifest, ki, si)
                            .is_some_and(|key| f.source_checked(&key))
                    })
                    .collect::<Vec<bool>>()
            });
            batches
                .iter()
                .zip(found)
                .flat_map(|(b, r)| r.unwrap_or_else(|_| vec![false; b.len()]))
                .collect()
        }
    };
    let unchecked: Vec<(usize, usize)> = sources
        .iter()
        .zip(&passed)
        .filter(|(_, p)| !**p)
        .map(|(s, _)| *s)
        .collect();
    let checked_now = crate::base::jobs::run(unchecked, max_workers, tokens, |(ki, si)| {
        let kernel = &manifest.kernels[ki];
        crate::base::jobs::test_panic_point("patch", &kernel.name);
        let checked = crate::stage::patch::check(manifest, kernel, &kernel.sources[si]);
        if let Some(f) = fingerprints {
            let key = f.source_key(manifest, ki, si);
            f.checked_source(key.as_deref(), checked.is_ok());
        }
        checked
    });
    let mut checked_now = checked_now.into_iter();
    let results: Vec<_> = passed
        .into_iter()
        .map(|p| {
            if p {
                Ok(Ok(()))
            } else {
                checked_now
                    .next()
                    .expect("one result for each source checked")
            }
        })
        .collect();
    let mut jobs = Vec::new();
    let mut checked = std::collections::BTreeSet::new();
    let mut errors = Vec::new();
    for ((ki, si), result) in sources.into_iter().zip(results) {
        let result = result.unwrap_or_else(|p| {
            let kernel = &manifest.kernels[ki];
            Err(p
                .into_diagnostic(&format!(
                    "patching kernel `{}` (source `{}`)",
                    kernel.name,
                    kernel.sources[si].rel.display()
                ))
                .into())
        });
        match result {
            Ok(()) => {
                checked.insert((ki, si));
            }
            Err(d) => errors.extend(d.0),
        }
        let source = &manifest.kernels[ki].sources[si];
        let mut targets: Vec<TargetId> = source.targets.clone();
        for t in extra {
            if builds_for(source, t) && !targets.contains(t) {
                targets.push(*t);
            }
        }
        for target in targets {
            jobs.push(Job {
                kernel: ki,
                source: si,
                target,
            });
        }
    }
    if errors.is_empty() {
        Ok(Plan { jobs, checked })
    } else {
        Err(Diagnostics(errors))
    }
}

/// A job ready to assemble: retargeted, checked asm plus what verification expects.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Kernel name from the manifest.
    pub kernel: String,
    /// Target of this job.
    pub target: TargetId,
    /// The asm to assemble, with provenance.
    pub asm: Document,
    /// Code object version written into it.
    pub code_object_version: u32,
    /// Kernel symbols the code object must define (`<symbol>.kd`).
    pub symbols: Vec<String>,
    /// What retargeting did (target rewrite, version change, skew normalized).
    pub steps: Vec<String>,
    /// Notes worth showing: occupancy changes, register updates, wait-counter warnings.
    pub notes: Vec<Diagnostic>,
    /// Findings left out of `notes` because the kernel's accepted file lists them.
    pub accepted: usize,
}

/// Label used in diagnostics: "kernel `matmul` for gfx950".
pub fn label(kernel: &str, target: &TargetId) -> String {
    format!("kernel `{kernel}` for {}", target.name())
}

/// A job's source, loaded and patched ([`load`]), and the retargeting
/// options for its target. The job must be one of `plan`'s.
pub fn job_inputs(
    manifest: &Manifest,
    plan: &Plan,
    job: &Job,
    llvm_major: u32,
) -> Result<(Patched, RetargetOptions), Diagnostics> {
    if !plan.checked(job.kernel, job.source) {
        return Err(not_patched(manifest, job));
    }
    let patched = load(manifest, job.kernel, job.source)?;
    Ok((patched, retarget_options(manifest, job, llvm_major)))
}

/// The error for a job whose source its plan did not check (a job of
/// another plan).
pub(crate) fn not_patched(manifest: &Manifest, job: &Job) -> Diagnostics {
    Diagnostics::from(Diagnostic::error(
        Code::NotPatched,
        format!(
            "{}: its source was not patched",
            label(&manifest.kernels[job.kernel].name, &job.target)
        ),
    ))
}

/// The retargeting options of `job`.
fn retarget_options(manifest: &Manifest, job: &Job, llvm_major: u32) -> RetargetOptions {
    RetargetOptions {
        target: job.target,
        code_object_version: manifest.defaults.code_object_version,
        assembler_llvm_major: llvm_major,
    }
}

/// Retarget and check one job. `llvm_major` is the LLVM that will assemble it.
/// A source with Triton metadata also gets the Triton limits check ([`check::triton_limits`]).
/// Findings the kernel's accepted file lists ([`crate::config::accept`]) are left
/// out of the notes and counted in [`Prepared::accepted`].
pub fn prepare(
    manifest: &Manifest,
    plan: &Plan,
    job: &Job,
    llvm_major: u32,
) -> Result<Prepared, Diagnostics> {
    let (patched, _) = job_inputs(manifest, plan, job, llvm_major)?;
    // The documents are this job's own: the checks drop each as soon as
    // they no longer need it (a large file's peak memory).
    let mut p = every_finding(manifest, job, Loaded::Owned(patched), llvm_major)?;
    accept_filter(manifest, job, &mut p)?;
    Ok(p)
}

/// [`prepare`] with the job's source already loaded ([`load`], [`Sources`]):
/// the build engine loads a source once for all its targets.
pub fn prepare_loaded(
    manifest: &Manifest,
    job: &Job,
    patched: &Patched,
    llvm_major: u32,
) -> Result<Prepared, Diagnostics> {
    let mut p = every_finding(manifest, job, Loaded::Borrowed(patched), llvm_major)?;
    accept_filter(manifest, job, &mut p)?;
    Ok(p)
}

/// Hide the findings the manifest accepts for `job` ([`Prepared::accepted`]
/// counts them).
fn accept_filter(manifest: &Manifest, job: &Job, p: &mut Prepared) -> Result<(), Diagnostics> {
    let kernel = &manifest.kernels[job.kernel];
    let (shown, hidden) =
        crate::config::accept::filter(kernel, &job.target, std::mem::take(&mut p.notes))?;
    p.notes = shown;
    p.accepted = hidden;
    Ok(())
}

/// A job's loaded source: its own ([`prepare`], dropped as the checks go)
/// or shared with the source's other jobs ([`prepare_loaded`]).
enum Loaded<'a> {
    Owned(Patched),
    Borrowed(&'a Patched),
}

impl<'a> Loaded<'a> {
    /// The unpatched dump, whether it has the patched lines, and the
    /// patched asm.
    fn split(self) -> (Cow<'a, Document>, bool, Cow<'a, Document>) {
        match self {
            Loaded::Owned(p) => (Cow::Owned(p.original), p.unchanged, Cow::Owned(p.patched)),
            Loaded::Borrowed(p) => (
                Cow::Borrowed(&p.original),
                p.unchanged,
                Cow::Borrowed(&p.patched),
            ),
        }
    }
}

/// [`prepare`] with every finding in the notes, accepted ones included
/// (what `gcn-patch accept` records).
pub fn prepare_every_finding(
    manifest: &Manifest,
    plan: &Plan,
    job: &Job,
    llvm_major: u32,
) -> Result<Prepared, Diagnostics> {
    let (patched, _) = job_inputs(manifest, plan, job, llvm_major)?;
    every_finding(manifest, job, Loaded::Owned(patched), llvm_major)
}

/// [`prepare_every_finding`] of a loaded source.
fn every_finding(
    manifest: &Manifest,
    job: &Job,
    patched: Loaded<'_>,
    llvm_major: u32,
) -> Result<Prepared, Diagnostics> {
    let kernel = &manifest.kernels[job.kernel];
    let opts = retarget_options(manifest, job, llvm_major);
    let (original, unchanged, patched) = patched.split();
    let source = &kernel.sources[job.source];
    let caution = retarget_caution(&kernel.name, source, &original, &job.target);
    let mut prepared = prepare_checked(
        &kernel.name,
        Some((original, unchanged)),
        patched,
        &opts,
        kernel.registers,
        kernel.hazards,
        source.triton.as_ref(),
        Findings::All,
    )
    .map_err(|d| registers_key(d, &kernel.name))?;
    prepared.notes = registers_key(Diagnostics(prepared.notes), &kernel.name).0;
    prepared.notes.extend(caution);
    Ok(prepared)
}

/// A warning for a source lifted from a code object (hand-written or vendor
/// code, e.g. aiter's) built for another processor than its own: the checks
/// see registers, waits and launch limits, not the timing and features the
/// code may rely on.
fn retarget_caution(
    kernel: &str,
    source: &crate::config::manifest::SourceSpec,
    original: &Document,
    target: &TargetId,
) -> Option<Diagnostic> {
    source.imported_sha256.as_ref()?;
    let (line, text) = original.asm().target_directive()?;
    let own = TargetId::parse(&text).ok()?;
    if own.processor.name == target.processor.name {
        return None;
    }
    Some(
        Diagnostic::warning(Code::RetargetedFromGeneric, format!(
            "{}: retargeted from a {} code object, which may be hand-written",
            label(kernel, target),
            own.processor.name
        ))
        .at(original.location(line, None))
        .with_note(format!(
            "hand-written code may rely on {}'s timing and features (instruction latencies, hazards its hardware resolves, what it supports): the checks see registers, waits and launch limits, not that",
            own.processor.name
        ))
        .with_help(format!(
            "test it on {} before shipping it there, or build it for {} only; `gcn-patch accept {kernel}` acknowledges this warning",
            target.name(),
            own.processor.name
        )),
    )
}

/// Retarget and check any traced asm of no manifest (`gcn-patch assemble`);
/// wait-counter hazards are errors. A finding a register update would fix
/// keeps its [`Setting::UpdateRegisters`]: the caller adds how it asks for
/// one to its first help.
pub fn prepare_traced(
    kernel: &str,
    original: Option<&Document>,
    asm: &Document,
    opts: &RetargetOptions,
    policy: RegisterPolicy,
) -> Result<Prepared, Diagnostics> {
    let original = original.map(|o| (Cow::Borrowed(o), o.same_lines(asm)));
    prepare_checked(
        kernel,
        original,
        Cow::Borrowed(asm),
        opts,
        policy,
        HazardPolicy::Error,
        None,
        Findings::All,
    )
}

/// [`prepare_traced`] with an explicit wait-counter hazard policy
/// (`hazards = "error" | "warn" | "strict"` in kernels.toml).
pub fn prepare_traced_with(
    kernel: &str,
    original: Option<&Document>,
    asm: &Document,
    opts: &RetargetOptions,
    policy: RegisterPolicy,
    hazards: HazardPolicy,
) -> Result<Prepared, Diagnostics> {
    let original = original.map(|o| (Cow::Borrowed(o), o.same_lines(asm)));
    let mut prepared = prepare_checked(
        kernel,
        original,
        Cow::Borrowed(asm),
        opts,
        policy,
        hazards,
        None,
        Findings::All,
    )
    .map_err(|d| registers_key(d, kernel))?;
    prepared.notes = registers_key(Diagnostics(prepared.notes), kernel).0;
    Ok(prepared)
}

/// The preparation of an unpatched source whose warnings nobody reads
/// (lift's identity check): [`prepare_traced_with`] with `asm` as its own
/// original and hazards as warnings, but only the steps and checks that
/// can change the built bytes or fail — retargeting, the structure and
/// register checks. The control-flow check, the wait-count check and the
/// hazard lint are skipped: against its own original every finding of
/// theirs is inherited, a warning. [`Prepared::notes`] is therefore
/// incomplete; errors are the same.
pub fn prepare_unpatched_errors_only(
    kernel: &str,
    asm: &Document,
    opts: &RetargetOptions,
    policy: RegisterPolicy,
) -> Result<Prepared, Diagnostics> {
    prepare_checked(
        kernel,
        Some((Cow::Borrowed(asm), true)),
        Cow::Borrowed(asm),
        opts,
        policy,
        HazardPolicy::Warn,
        None,
        Findings::ErrorsOnly,
    )
    .map_err(|d| registers_key(d, kernel))
}

/// The findings of manifest kernel `kernel` that a register update fixes
/// ([`Setting::UpdateRegisters`]) get the manifest's way of asking for one,
/// its `registers` key, in their first help.
fn registers_key(mut d: Diagnostics, kernel: &str) -> Diagnostics {
    for diag in &mut d.0 {
        if diag.setting != Some(Setting::UpdateRegisters) {
            continue;
        }
        diag.setting = None;
        let key = format!(
            "or set `registers = \"update\"` for kernel `{kernel}` in kernels.toml to rewrite the counts (either changes the shipped code object: `gcn-patch objdiff` shows the new counts)"
        );
        match diag.help.first_mut() {
            Some(h) => {
                h.push_str(", ");
                h.push_str(&key);
            }
            None => diag.help.push(key),
        }
    }
    d
}

/// The preparation behind [`prepare`] and [`prepare_traced_with`]; `launch`
/// adds the Triton limits check against the same retargeted original the
/// other checks compare with. `original` is the unpatched dump and whether
/// `asm` has its lines. Owned documents are dropped as soon as the checks
/// no longer need them: `asm` once retargeted, `original` once its
/// retargeted copy is made.
#[allow(clippy::too_many_arguments)]
fn prepare_checked(
    kernel: &str,
    original: Option<(Cow<'_, Document>, bool)>,
    asm: Cow<'_, Document>,
    opts: &RetargetOptions,
    policy: RegisterPolicy,
    hazards: HazardPolicy,
    launch: Option<&crate::config::triton::TritonKernel>,
    findings: Findings,
) -> Result<Prepared, Diagnostics> {
    let label = label(kernel, &opts.target);
    // An unpatched source is its own original: every control, wait and
    // hazard finding is one the original has (inherited), so a warning.
    let quiet = findings == Findings::ErrorsOnly
        && original.as_ref().is_some_and(|(_, unchanged)| *unchanged)
        && hazards == HazardPolicy::Warn
        && launch.is_none();
    check::structure::check_strings(&asm, &label)?;
    check::structure::check_complete(&asm, &label).map_err(|mut d| {
        if original.as_ref().is_some_and(|(_, unchanged)| !*unchanged) {
            for diag in &mut d.0 {
                diag.notes.push(
                    "the dump was patched: check that no patch or rule removes these lines".into(),
                );
            }
        }
        d
    })?;
    // Paths that leave a kernel through no end instruction: errors unless
    // the unpatched dump has them too.
    let control = if quiet {
        Vec::new()
    } else {
        check::control::check_control(&asm, original.as_ref().map(|(o, _)| &**o), &label)
    };
    let (control_errors, control_warnings): (Vec<_>, Vec<_>) = control
        .into_iter()
        .partition(|d| d.severity == Severity::Error);
    if !control_errors.is_empty() {
        return Err(with_context(Diagnostics(control_errors), &label));
    }
    let retargeted = retarget::retarget(&asm, opts).map_err(|d| with_context(d, &label))?;
    // The checks below read the retargeted asm only.
    drop(asm);
    let retarget::Retargeted {
        asm: retargeted_asm,
        code_object_version,
        notes: steps,
        rewrites,
    } = retargeted;
    let mut notes: Vec<Diagnostic> = rewrites;
    notes.extend(control_warnings);
    // Compare with the unpatched dump retargeted the same way, so that the
    // occupancy report shows what the patches changed, not what retargeting
    // did. An unpatched source (the same lines) is not retargeted twice: the
    // retargeted asm is its own original.
    // `original` is consumed here: the checks below read its retargeted copy.
    let unpatched = original.as_ref().is_some_and(|(_, unchanged)| *unchanged);
    let original_retargeted = original
        .filter(|_| !unpatched)
        .and_then(|(o, _)| retarget::retarget(&o, opts).ok())
        .map(|r| r.asm);
    let (checked, own_original) = if unpatched {
        let checked = check::budget::check_registers(
            Some(&retargeted_asm),
            &retargeted_asm,
            &opts.target,
            policy,
            &label,
        );
        (checked, Some(retargeted_asm))
    } else {
        // The retargeted asm is not needed after the register check: the
        // outcome is that document (no copy of a possibly large file).
        let checked = check::budget::check_registers_owned(
            original_retargeted.as_ref(),
            retargeted_asm,
            &opts.target,
            policy,
            &label,
        );
        (checked, None)
    };
    let checked = checked.map_err(|d| with_context(d, &label))?;
    notes.extend(checked.notes);
    let original = own_original.as_ref().or(original_retargeted.as_ref());
    // What the later checks need of the original, taken now so that it is
    // dropped before the hazard analysis (a large file's peak memory):
    // the dump's waits the patches removed, and the launch comparison.
    if quiet {
        // Only the register check above can fail an unpatched source whose
        // warnings are not wanted: skip the wait-count check (run twice,
        // once as the source's own original) and the hazard lint.
        drop(own_original);
        return Ok(prepared_of(
            kernel,
            opts,
            checked.asm,
            code_object_version,
            steps,
            notes,
        ));
    }
    let removed = original.map(|o| hazard::RemovedWaits::new(&checked.asm, o));
    // The unpatched source's hazards: the patched code's hazards found there
    // too (same producer, reader and register, no looser wait) are inherited.
    let baseline = original.map(|o| {
        if unpatched {
            let source = (0..o.len())
                .find_map(|i| {
                    o.origin(i)
                        .and_then(crate::base::provenance::Origin::file_line)
                })
                .map(|(f, _)| f.display().to_string())
                .unwrap_or_else(|| "the dump".into());
            hazard::Baseline::unpatched(&source)
        } else {
            hazard::Baseline::of_original(o, &opts.target)
        }
    });
    // Triton kernels: the patched kernel must fit the launch Triton will do
    // (a register update, the only edit the check above makes, changes no
    // launch field, so without an original the checked asm stands for it).
    let launch_findings = launch.map_or_else(Vec::new, |t| {
        let original = original.unwrap_or(&checked.asm);
        check::triton_limits::check_triton_limits(original, &checked.asm, t, &label)
    });
    // Wait-instruction errors the unpatched source has too (the same code and
    // message at the same dump line, e.g. aiter's `s_wait_dscnt 0x40`, which the
    // assembler takes and the hardware truncates) are inherited: warnings.
    let key = |d: &Diagnostic| {
        (
            d.code,
            d.message.clone(),
            d.location.as_ref().map(|l| (l.file.clone(), l.line)),
        )
    };
    let inherited_waits: std::collections::HashSet<_> = original
        .map(|o| {
            check::waitcnt::check_waitcnt(o, &opts.target)
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(key)
                .collect()
        })
        .unwrap_or_default();
    drop(own_original);
    drop(original_retargeted);
    let waits: Vec<Diagnostic> = check::waitcnt::check_waitcnt(&checked.asm, &opts.target)
        .into_iter()
        .map(|mut d| {
            if d.severity == Severity::Error && inherited_waits.contains(&key(&d)) {
                d.severity = Severity::Warning;
                d.notes.push(
                    "the unpatched source has this too (inherited): not an error; a patch that changes it is"
                        .into(),
                );
            }
            d
        })
        .collect();
    // Wait-counter hazards, reported at each line's origin (dump, patch hunk, rule).
    let hazard_findings = hazard::lint_removed(
        &checked.asm,
        removed.as_ref(),
        baseline.as_ref(),
        &opts.target,
        LintOptions {
            policy: hazards,
            suggest: false,
        },
    );
    let (errors, warnings): (Vec<_>, Vec<_>) = waits
        .into_iter()
        .chain(hazard_findings)
        .chain(launch_findings)
        .partition(|d| d.severity == Severity::Error);
    if !errors.is_empty() {
        return Err(with_context(Diagnostics(errors), &label));
    }
    notes.extend(warnings);
    Ok(prepared_of(
        kernel,
        opts,
        checked.asm,
        code_object_version,
        steps,
        notes,
    ))
}

/// Which findings a preparation reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Findings {
    /// Errors, and warnings as notes (every build, check and report).
    All,
    /// Only what can fail: the caller discards the notes (lift's identity
    /// check), so the checks whose findings are warnings by construction
    /// for an unpatched source are not run.
    ErrorsOnly,
}

/// The prepared job of `kernel`: `asm` checked, with its symbols.
fn prepared_of(
    kernel: &str,
    opts: &RetargetOptions,
    asm: Document,
    code_object_version: u32,
    steps: Vec<String>,
    notes: Vec<Diagnostic>,
) -> Prepared {
    let symbols = asm.kernels().iter().map(|k| k.name.clone()).collect();
    Prepared {
        kernel: kernel.to_owned(),
        target: opts.target,
        asm,
        code_object_version,
        symbols,
        steps,
        notes,
        accepted: 0,
    }
}

/// Assemble, link and verify a prepared job into `out` (written atomically).
pub fn build(
    toolchain: &Toolchain,
    prepared: &Prepared,
    work_dir: &Path,
    out: &Path,
) -> Result<VerifyReport, Diagnostics> {
    let (bytes, report) = build_bytes(toolchain, prepared, work_dir)?;
    install(&bytes, out)?;
    Ok(report)
}

/// Assemble, link and verify a prepared job; the verified code object's bytes.
///
/// Both tools work in memory (the asm piped to clang, the object piped to
/// ld.lld, each output read from the tool's stdout; see
/// [`assemble::assemble_bytes`] and [`link::link_bytes`]): a job writes no
/// file, so concurrent builds cannot collide on one. `work_dir` is used only
/// where a tool cannot read its stdin as a file (not Unix).
pub fn build_bytes(
    toolchain: &Toolchain,
    prepared: &Prepared,
    work_dir: &Path,
) -> Result<(Vec<u8>, VerifyReport), Diagnostics> {
    let label = label(&prepared.kernel, &prepared.target);
    toolchain
        .check_target(&prepared.target)
        .map_err(|d| with_context(d.into(), &label))?;
    let name = format!(
        "{}-{}",
        prepared.kernel,
        prepared.target.name().replace(':', "_")
    );
    let object = assemble::assemble_bytes(&assemble::AssembleRequest {
        toolchain,
        asm: &prepared.asm,
        target: &prepared.target,
        work_dir,
        name: &name,
        label: &label,
    })?;
    // Undefined symbols at the user's line, before ld.lld says it without one.
    crate::stage::undefined::check(&prepared.asm, &object, &label)?;
    let bytes = link::link_bytes(toolchain, &object, &format!("{name}.o"), work_dir)
        .map_err(|d| with_context(d, &label))?;
    // Only an object that passed verification is returned (an existing
    // output survives any failure).
    let report = verify(&bytes, prepared)?;
    Ok((bytes, report))
}

/// Write `bytes` to `out` atomically: a temp file in `out`'s directory, renamed over it.
fn install(bytes: &[u8], out: &Path) -> Result<(), Diagnostic> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| {
        Diagnostic::error(
            Code::CreateDirFailed,
            format!("cannot create directory {}: {e}", dir.display()),
        )
        .with_help("the output's directory cannot be created: check the output path")
    })?;
    crate::base::output::write_atomic(out, bytes).map_err(|e| {
        Diagnostic::error(
            Code::WriteFailed,
            format!("cannot write {}: {e}", out.display()),
        )
        .with_help("name a file (not a directory) in a writable directory for the output")
    })
}

/// Verify code object bytes against what a prepared job expects.
pub fn verify(bytes: &[u8], prepared: &Prepared) -> Result<VerifyReport, Diagnostics> {
    let label = label(&prepared.kernel, &prepared.target);
    let expect = Expect {
        target: prepared.target,
        code_object_version: prepared.code_object_version,
        kernels: prepared.symbols.clone(),
    };
    verify::verify(bytes, &expect).map_err(|d| with_context(d, &label))
}

/// Add "while building kernel `k` for T" to every diagnostic whose check does
/// not name the job itself ([`names_its_job`]: decided by its code).
fn with_context(mut d: Diagnostics, label: &str) -> Diagnostics {
    for diag in &mut d.0 {
        if !names_its_job(diag.code) {
            diag.notes.insert(0, format!("while building {label}"));
        }
    }
    d
}

/// Whether a diagnostic of `code` names its job itself: the checks that
/// report it are given the job's [`label`] and start their message with it
/// (control flow, the register findings of the budget check, Triton's
/// launch). The others get a "while building" note.
fn names_its_job(code: Code) -> bool {
    matches!(
        code,
        Code::ControlFlowLeak
            | Code::RegisterBudgetExceeded
            | Code::ExtraSgprsNotDeclared
            | Code::RegisterCountUnknown
            | Code::RegisterCountContradiction
            | Code::TritonKernelMissing
            | Code::TritonLdsExceeded
            | Code::TritonWaveSize
            | Code::TritonWorkgroupSize
            | Code::TritonLaunchChanged
            | Code::TritonArgsChanged
    )
}
