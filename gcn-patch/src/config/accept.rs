//! Acknowledged findings: a per-kernel baseline file, as linters keep one.
//!
//! `gcn-patch accept KERNEL` (the operation `ops::accept`) prepares every
//! job of the kernel, records each warning and note it reports (what
//! `check`, `build` and gcn-build would print) in `accepted/<kernel>.txt` next to the manifest, and points the
//! kernel's `accepted = "…"` key at it. From then on the manifest-driven
//! commands leave those findings out and count them instead, so a build is
//! silent until something new appears: a finding not in the file (a patch
//! adds one, a re-import changes the dump) is shown as before. Errors are
//! never accepted.
//!
//! A finding is recorded as one line, `<target>\t<file>:<line>\t<severity>:
//! <message>` (its location as the diagnostics print it: the dump, patch or
//! rule line), so the file is reviewable and diffable; `#` lines are
//! comments. Delete a line, or the file and the key, to see a finding again.

use std::collections::HashSet;
use std::path::Path;

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::config::manifest::KernelSpec;

/// Directory of accepted-findings files, relative to the manifest directory.
pub const DIR: &str = "accepted";

/// The recorded key of finding `d` of a job for `target`.
pub fn key(target: &TargetId, d: &Diagnostic) -> String {
    let at = d.location.as_ref().map_or("-".to_string(), |l| {
        format!("{}:{}", l.file.display(), l.line)
    });
    let severity = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    };
    format!("{}\t{at}\t{severity}: {}", target.name(), d.message)
}

/// The keys an accepted-findings file lists.
pub fn read(path: &Path, kernel: &str) -> Result<HashSet<String>, Diagnostics> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Diagnostics::from(
            Diagnostic::error(
                Code::ReadFailed,
                format!(
                    "kernel `{kernel}`: cannot read its accepted findings `{}`: {e}",
                    path.display()
                ),
            )
            .with_help(format!(
                "run `gcn-patch accept {kernel}` to write it, or remove the kernel's `accepted` key"
            )),
        )
    })?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// `notes` of kernel `k`'s job for `target` without the findings its
/// accepted file lists: (shown, how many were left out).
pub fn filter(
    k: &KernelSpec,
    target: &TargetId,
    notes: Vec<Diagnostic>,
) -> Result<(Vec<Diagnostic>, usize), Diagnostics> {
    let Some(path) = &k.accepted else {
        return Ok((notes, 0));
    };
    let keys = read(path, &k.name)?;
    let before = notes.len();
    let shown: Vec<Diagnostic> = notes
        .into_iter()
        .filter(|d| d.severity == Severity::Error || !keys.contains(&key(target, d)))
        .collect();
    let hidden = before - shown.len();
    Ok((shown, hidden))
}
