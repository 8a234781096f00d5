//! `gcn-patch check`: every kernel × target of a manifest, every check.

use std::path::Path;

use gcn_embed::TargetId;

use super::{scratch, Tools};
use crate::diag::{Diagnostic, Diagnostics, Severity};
use crate::manifest::Manifest;
use crate::pipeline;

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
}

/// What `gcn-patch check` found: every job in plan order, and the errors.
#[derive(Debug)]
pub struct CheckReport {
    /// Each job, in plan order.
    pub jobs: Vec<Checked>,
    /// Every error of every failing job.
    pub errors: Vec<Diagnostic>,
}

/// `gcn-patch check [--assemble]`: apply every patch for every target and
/// run every check; with `assemble`, also assemble, link and verify each job.
/// An `Err` is a manifest that cannot be planned; failing jobs are in the report.
pub fn check(manifest: &Path, assemble: bool, tools: &Tools) -> Result<CheckReport, Diagnostics> {
    let m = Manifest::load(manifest)?;
    let plan = pipeline::plan(&m, &[])?;
    if plan.jobs.is_empty() {
        return Err(
            Diagnostic::error(format!("{} lists no kernel to check", manifest.display()))
                .with_help(
                    "add a [[kernel]] with a [[kernel.source]] (see README, \"kernels.toml\")",
                )
                .into(),
        );
    }
    let tc = if assemble {
        Some(tools.find(Some(&m))?)
    } else {
        None
    };
    let major = tc
        .as_ref()
        .map(|t| t.version.major)
        .unwrap_or_else(|| tools.assembler_major(Some(&m)));
    let work = scratch()?;
    let mut report = CheckReport {
        jobs: Vec::with_capacity(plan.jobs.len()),
        errors: Vec::new(),
    };
    for job in &plan.jobs {
        let kernel = &m.kernels[job.kernel].name;
        let mut notes = Vec::new();
        let result = pipeline::prepare(&m, &plan, job, major).and_then(|p| {
            notes = p.notes.clone();
            if let Some(tc) = &tc {
                let out = work.path().join(format!(
                    "{kernel}-{}.hsaco",
                    job.target.name().replace(':', "_")
                ));
                pipeline::build(tc, &p, work.path(), &out)?;
            }
            Ok(())
        });
        let passed = result.is_ok();
        if let Err(d) = result {
            report
                .errors
                .extend(d.0.into_iter().filter(|d| d.severity == Severity::Error));
        }
        report.jobs.push(Checked {
            kernel: kernel.clone(),
            target: job.target,
            notes,
            passed,
        });
    }
    Ok(report)
}
