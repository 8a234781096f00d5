//! `gcn-patch lint`: wait-counter hazards in any asm file, no manifest.

use std::path::Path;

use gcn_embed::TargetId;

use super::{parse_target, read_asm};
use crate::base::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::config::policy::HazardPolicy;
use crate::stage::check::hazard::{Baseline, LintOptions};

/// What `gcn-patch lint` found.
#[derive(Debug)]
pub struct LintReport {
    /// The target the file was checked for.
    pub target: TargetId,
    /// Every diagnostic: hazards (errors), warnings, suggestions (notes),
    /// and with a baseline one note per kernel counting inherited hazards.
    pub diagnostics: Vec<Diagnostic>,
    /// The baseline used (`--baseline`; the flag is always `false`: lint
    /// takes no default from a lift header).
    pub baseline: Option<(std::path::PathBuf, bool)>,
}

impl LintReport {
    /// How many diagnostics have `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    /// Hazards found (the command exits 1 when there is any).
    pub fn hazards(&self) -> usize {
        self.count(Severity::Error)
    }

    /// Kernels with hazards inherited from the baseline (their notes).
    pub fn inherited(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.code == Code::InheritedHazards)
            .count()
    }
}

/// `gcn-patch lint FILE --target T [--suggest] [--baseline BASE]`: with
/// `baseline`, only the hazards FILE has that BASE lacks (lines matched by a
/// diff alignment, [`Baseline::aligned`]). BASE may be asm or a code object
/// (lifted). Without it every hazard of FILE is listed. An `Err` is bad input
/// (the command exits 2); hazards are in the report.
pub fn lint(
    file: &Path,
    target: &str,
    suggest: bool,
    baseline: Option<&Path>,
) -> Result<LintReport, Diagnostics> {
    let target = parse_target(target)?;
    let asm = read_asm(file)?;
    // No default from a lift header here: `lint FILE` lists every hazard of
    // FILE (the inherited-hazard notes of the other commands point to it).
    let found = baseline.map(|b| (b.to_path_buf(), false));
    let base = match &found {
        Some((path, _)) => Some(super::asm::read_baseline(
            path,
            &target,
            &super::Tools::default(),
        )?),
        None => None,
    };
    let opts = LintOptions {
        policy: HazardPolicy::Error,
        suggest,
    };
    let diagnostics = match &base {
        Some(base) => {
            let b = Baseline::aligned(&asm, base, &target);
            crate::stage::check::hazard::lint_baseline(&asm, &b, &target, opts)
        }
        None => crate::stage::check::hazard::lint(&asm, &target, opts),
    };
    Ok(LintReport {
        diagnostics,
        target,
        baseline: found,
    })
}
