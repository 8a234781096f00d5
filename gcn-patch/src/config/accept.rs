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
//! A finding is recorded as one line, `<target>\t<file>:<line>\t<severity>[<code>]:
//! <message>` (its location as the diagnostics print it: the dump, patch or
//! rule line; its code as `GP0409`), so the file is reviewable and diffable; `#` lines are
//! comments. Delete a line, or the file and the key, to see a finding again.
//! A finding is shown unless a line records the same target, location,
//! severity, code and message ([`Finding`]). A line written before findings
//! had codes (`<severity>: <message>`, no `[GPnnnn]`) still acknowledges the
//! same target, location, severity and message under any code, so files
//! from earlier versions keep working; `gcn-patch accept` rewrites them
//! with codes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::config::manifest::KernelSpec;

/// Directory of accepted-findings files, relative to the manifest directory.
pub const DIR: &str = "accepted";

/// One acknowledged finding: a line of an accepted-findings file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    /// The job's target, by name.
    pub target: String,
    /// Where it was reported (file as the diagnostic names it, 1-based line).
    pub at: Option<(PathBuf, usize)>,
    /// Its severity (warning or note: errors are never accepted).
    pub severity: Severity,
    /// The condition reported (`None` on a line written before findings
    /// had codes: it matches any code).
    pub code: Option<Code>,
    /// Its message.
    pub message: String,
}

impl Finding {
    /// Finding `d` of a job for `target`.
    pub fn of(target: &TargetId, d: &Diagnostic) -> Finding {
        Finding {
            target: target.name(),
            at: d.location.as_ref().map(|l| (l.file.clone(), l.line)),
            severity: d.severity,
            code: Some(d.code),
            message: d.message.clone(),
        }
    }

    /// The finding as a line of the file (no newline).
    pub fn to_line(&self) -> String {
        let at = self.at.as_ref().map_or("-".to_string(), |(file, line)| {
            format!("{}:{line}", file.display())
        });
        let code = self.code.map_or(String::new(), |c| format!("[{c}]"));
        format!(
            "{}\t{at}\t{}{code}: {}",
            self.target,
            severity_word(self.severity),
            self.message
        )
    }

    /// A line of the file as a finding; `None` for a line that is not one
    /// (it then acknowledges nothing).
    pub fn parse(line: &str) -> Option<Finding> {
        let mut fields = line.splitn(3, '\t');
        let target = fields.next()?.to_string();
        let at = fields.next()?;
        let rest = fields.next()?;
        let at = match at {
            "-" => None,
            at => {
                let (file, line) = at.rsplit_once(':')?;
                Some((PathBuf::from(file), line.parse().ok()?))
            }
        };
        let (head, message) = rest.split_once(": ")?;
        let (severity, code) = match head.strip_suffix(']') {
            Some(head) => {
                let (severity, code) = head.split_once('[')?;
                (severity, Some(Code::from_code(code)?))
            }
            None => (head, None),
        };
        let severity = [Severity::Error, Severity::Warning, Severity::Note]
            .into_iter()
            .find(|s| severity_word(*s) == severity)?;
        Some(Finding {
            target,
            at,
            severity,
            code,
            message: message.to_string(),
        })
    }
}

/// Does a line of `keys` acknowledge `finding`: the same finding, or the
/// same words on a line without a code?
pub fn accepts(keys: &HashSet<Finding>, finding: &Finding) -> bool {
    keys.contains(finding)
        || keys.contains(&Finding {
            code: None,
            ..finding.clone()
        })
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// The findings an accepted-findings file lists.
pub fn read(path: &Path, kernel: &str) -> Result<HashSet<Finding>, Diagnostics> {
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
        .filter_map(Finding::parse)
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
        .filter(|d| d.severity == Severity::Error || !accepts(&keys, &Finding::of(target, d)))
        .collect();
    let hidden = before - shown.len();
    Ok((shown, hidden))
}
