//! `gcn-patch check`: every kernel × target of a manifest, every check.

use std::path::PathBuf;

use gcn_embed::TargetId;

use super::{scratch, Tools};
use crate::base::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::base::progress::Observer;
use crate::base::progress::{Outcome, Tally, Task};
use crate::config::manifest::Manifest;
use crate::pipeline;
use crate::pipeline::build::Finished;

/// One job's outcome.
#[derive(Debug)]
pub struct Checked {
    /// Kernel name.
    pub kernel: String,
    /// Target of the job.
    pub target: TargetId,
    /// Notes from preparation (shown whether the job passed or not).
    pub notes: Vec<Diagnostic>,
    /// `true` when every check (and the build, when asked) passed.
    pub passed: bool,
    /// Findings left out of `notes`: the kernel's accepted file lists them.
    pub accepted: usize,
}

/// How far `gcn-patch check` takes each job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Depth {
    /// Apply the patches and run every check; no toolchain is needed, and
    /// an "ok" does not mean the assembler takes every instruction
    /// (`--no-assemble`).
    Checks,
    /// Then assemble, link and verify (the command's default).
    #[default]
    Build,
}

/// What `gcn-patch check` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// How far each job goes.
    pub depth: Depth,
    /// Parallel jobs, checking or building (default: the number of CPUs).
    pub jobs: Option<usize>,
    /// The LLVM tools.
    pub tools: Tools,
}

/// What `gcn-patch check` found: every job in plan order, and the errors.
#[derive(Debug)]
pub struct CheckReport {
    /// Each job, in plan order.
    pub jobs: Vec<Checked>,
    /// Every error of every failing job.
    pub errors: Vec<Diagnostic>,
    /// How far the jobs went ([`Depth::Build`]: assembled, linked and verified).
    pub depth: Depth,
    /// What went wrong with the shared cache, once (a remote cache that
    /// failed and was not used for the rest of the check): the check is fine.
    pub cache_warning: Option<String>,
}

/// `gcn-patch check [--no-assemble]`: apply every patch for every target,
/// run every check and, with [`Depth::Build`] (the default), assemble, link
/// and verify each job: in parallel (`jobs` at once, default the number of
/// CPUs), through the build engine and its object cache (the shared one,
/// `GCN_BUILD_CACHE` or `GCN_BUILD_CACHE_DIR`, when set; nothing is written next to the
/// manifest), so "ok" means it builds.
/// An `Err` is a manifest that cannot be planned; failing jobs are in the report.
/// `progress` is told the job count ([`Task::Check`]) and each finished job.
pub fn check(
    opts: &CheckOptions,
    progress: Option<&dyn Observer>,
) -> Result<CheckReport, Diagnostics> {
    let CheckOptions {
        manifest,
        depth,
        jobs,
        tools,
    } = opts;
    let (depth, jobs) = (*depth, *jobs);
    use crate::pipeline::build::each_job;
    let m = Manifest::load(manifest)?;
    // A full check builds through the engine; its fingerprints let the plan
    // skip sources checked before. The engine's own errors (no toolchain)
    // come after the plan's, as they always did.
    let work = if depth == Depth::Build {
        Some(scratch()?)
    } else {
        None
    };
    let engine = work.as_ref().map(|w| tools.engine(&m, jobs, w.path()));
    let fingerprints = match &engine {
        Some(Ok(e)) => Some(&e.fingerprints),
        _ => None,
    };
    let max_jobs = crate::base::jobs::workers(jobs);
    let plan = pipeline::plan_cached(
        &m,
        &[],
        max_jobs,
        &crate::base::jobs::Unlimited,
        fingerprints,
    )?;
    if plan.jobs.is_empty() {
        return Err(Diagnostic::error(
            Code::NoKernels,
            format!("{} lists no kernel to check", manifest.display()),
        )
        .with_help(
            "add a [[kernel]] with a [[kernel.source]] (see docs/src/reference/kernels-toml.md)",
        )
        .into());
    }
    // Each job loads its source (shared with its other targets) and drops
    // it when done ([`pipeline::build::each_job`]).
    let mut cache_warning = None;
    let outcomes = if let Some(engine) = engine {
        let engine = engine?;
        let max_jobs = engine.max_jobs;
        let tally = Tally::start(progress, Task::Check, plan.jobs.len(), max_jobs);
        let opts = engine.options(&crate::base::jobs::Unlimited, None);
        let outcomes: Vec<_> =
            crate::pipeline::build::build_jobs(&m, &plan, &opts, &tally, "check")
                .into_iter()
                .map(|r| r.map(|built| built.map(|b| (b.notes, b.accepted))))
                .collect();
        engine.fingerprints.save();
        cache_warning = engine.cache.warning();
        outcomes
    } else {
        // The checks alone, as many jobs at once as a build runs; results
        // in plan order all the same.
        let major = tools.assembler_major(Some(&m));
        let tally = Tally::start(progress, Task::Check, plan.jobs.len(), max_jobs);
        each_job(
            &m,
            &plan,
            max_jobs,
            &crate::base::jobs::Unlimited,
            |job, source| {
                let kernel = &m.kernels[job.kernel].name;
                let counted = Finished::start(&tally, kernel, &job.target);
                crate::base::jobs::test_panic_point("check", kernel);
                let r = source()
                    .and_then(|p| pipeline::prepare_loaded(&m, job, &p, major))
                    .map(|p| (p.notes, p.accepted));
                if r.is_ok() {
                    counted.outcome.set(Outcome::Done);
                }
                r
            },
        )
    };
    let results: Vec<Result<(Vec<Diagnostic>, usize), Diagnostics>> = outcomes
        .into_iter()
        .zip(&plan.jobs)
        .map(|(r, job)| {
            r.unwrap_or_else(|p| Err(panicked(p, &m.kernels[job.kernel].name, &job.target)))
        })
        .collect();
    let mut report = CheckReport {
        jobs: Vec::with_capacity(plan.jobs.len()),
        errors: Vec::new(),
        depth,
        cache_warning,
    };
    for (job, result) in plan.jobs.iter().zip(results) {
        let kernel = &m.kernels[job.kernel].name;
        let (notes, passed, accepted) = match result {
            Ok((notes, accepted)) => (notes, true, accepted),
            Err(d) => {
                // The notes of a failing job (retargeting, raw lines,
                // inherited hazards) stay with it: they often explain the error.
                let (errors, notes): (Vec<_>, Vec<_>) =
                    d.0.into_iter().partition(|d| d.severity == Severity::Error);
                report.errors.extend(errors);
                (notes, false, 0)
            }
        };
        report.jobs.push(Checked {
            kernel: kernel.clone(),
            target: job.target,
            notes,
            passed,
            accepted,
        });
    }
    Ok(report)
}

/// The error for a check job that panicked.
fn panicked(p: crate::base::jobs::Panicked, kernel: &str, target: &TargetId) -> Diagnostics {
    p.into_diagnostic(&format!("checking kernel `{kernel}` for {}", target.name()))
        .into()
}
