//! `gcn-patch lint`: wait-counter hazards in any asm file, no manifest.

use std::path::Path;

use gcn_embed::TargetId;

use super::{parse_target, read_asm};
use crate::check::hazard::LintOptions;
use crate::check::HazardPolicy;
use crate::diag::{Diagnostic, Diagnostics, Severity};

/// What `gcn-patch lint` found.
#[derive(Debug)]
pub struct LintReport {
    /// The target the file was checked for.
    pub target: TargetId,
    /// Every diagnostic: hazards (errors), warnings, suggestions (notes).
    pub diagnostics: Vec<Diagnostic>,
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
}

/// `gcn-patch lint FILE --target T [--suggest]`. An `Err` is bad input (the
/// command exits 2); hazards are in the report.
pub fn lint(file: &Path, target: &str, suggest: bool) -> Result<LintReport, Diagnostics> {
    let target = parse_target(target)?;
    let asm = read_asm(file)?;
    let opts = LintOptions {
        policy: HazardPolicy::Error,
        suggest,
    };
    Ok(LintReport {
        diagnostics: crate::check::hazard::lint(&asm, &target, opts),
        target,
    })
}
