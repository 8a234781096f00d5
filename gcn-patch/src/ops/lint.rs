//! `gcn-patch lint`: wait-counter hazards in any asm file, no manifest.

use std::path::PathBuf;

use gcn_embed::TargetId;

use super::read_asm;
use crate::base::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::config::policy::HazardPolicy;
use crate::stage::check::hazard::{self, Baseline};

/// What `gcn-patch lint` is asked to do.
#[derive(Debug, Clone)]
pub struct LintOptions {
    /// The asm file.
    pub file: PathBuf,
    /// The target it is checked for.
    pub target: TargetId,
    /// Add suggestions (notes): waits that cover nothing or can be looser.
    pub suggest: bool,
    /// The original: only hazards the file has that it lacks are listed
    /// (asm, or a code object to lift).
    pub baseline: Option<PathBuf>,
}

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

/// The target `file` declares in its `.amdgcn_target` directive (any
/// spelling [`TargetId::parse`] reads, `amdgcn-amd-amdhsa--gfx942:xnack-`):
/// what `gcn-patch lint` checks for when no target is given. The error
/// says the file lacks the directive, or names the directive's line.
pub fn file_target(file: &std::path::Path) -> Result<TargetId, Diagnostics> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Diagnostic::error(
            Code::ReadFailed,
            format!("cannot read `{}`: {e}", file.display()),
        )
    })?;
    let parsed = crate::base::parse::parse(&text);
    let (line, target) = parsed.target_directive().ok_or_else(|| {
        Diagnostic::error(
            Code::InvalidTarget,
            format!(
                "`{}` has no `.amdgcn_target` directive to take the target from",
                file.display()
            ),
        )
        .with_help("give the target it is for, e.g. `--target gfx942`")
        .about(crate::base::diag::Setting::Target)
    })?;
    TargetId::parse(&target).map_err(|e| {
        Diagnostic::error(
            Code::InvalidTarget,
            format!(
                "{}:{}: `.amdgcn_target \"{target}\"` is not a target ID: {e}",
                file.display(),
                line + 1
            ),
        )
        .with_help("fix the directive, or give the target, e.g. `--target gfx942`")
        .about(crate::base::diag::Setting::Target)
        .into()
    })
}

/// `gcn-patch lint FILE --target T [--suggest] [--baseline BASE]`: with
/// `baseline`, only the hazards FILE has that BASE lacks (lines matched by a
/// diff alignment, [`Baseline::aligned`]). BASE may be asm or a code object
/// (lifted). Without it every hazard of FILE is listed. An `Err` is bad input
/// (the command exits 2); hazards are in the report.
pub fn lint(opts: &LintOptions) -> Result<LintReport, Diagnostics> {
    let target = opts.target;
    let asm = read_asm(&opts.file)?;
    // No default from a lift header here: `lint FILE` lists every hazard of
    // FILE (the inherited-hazard notes of the other commands point to it).
    let found = opts.baseline.clone().map(|b| (b, false));
    let base = match &found {
        Some((path, _)) => Some(super::asm::read_baseline(
            path,
            &target,
            &super::Tools::default(),
        )?),
        None => None,
    };
    let lint = hazard::LintOptions {
        policy: HazardPolicy::Error,
        suggest: opts.suggest,
    };
    let diagnostics = match &base {
        Some(base) => {
            let b = Baseline::aligned(&asm, base, &target);
            hazard::lint_baseline(&asm, &b, &target, lint)
        }
        None => hazard::lint(&asm, &target, lint),
    };
    Ok(LintReport {
        diagnostics,
        target,
        baseline: found,
    })
}
