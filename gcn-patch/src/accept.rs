//! Acknowledged findings: a per-kernel baseline file, as linters keep one.
//!
//! `gcn-patch accept KERNEL` prepares every job of the kernel, records each
//! warning and note it reports (what `check`, `build` and gcn-build would
//! print) in `accepted/<kernel>.txt` next to the manifest, and points the
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
use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use crate::diag::{Diagnostic, Diagnostics, Severity};
use crate::manifest::{KernelSpec, Manifest};

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
            Diagnostic::error(format!(
                "kernel `{kernel}`: cannot read its accepted findings `{}`: {e}",
                path.display()
            ))
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

/// What [`accept`] recorded.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// The file written, relative to the manifest directory.
    pub rel: PathBuf,
    /// How many findings it lists.
    pub findings: usize,
    /// Whether the kernel's `accepted` key was added to the manifest.
    pub manifest_updated: bool,
}

/// `gcn-patch accept KERNEL`: record every warning and note of the kernel's
/// jobs (every source × target, as `check` plans them) and point the
/// kernel's `accepted` key at the file. A job with errors is refused: only
/// findings that do not stop the build can be acknowledged.
pub fn accept(
    manifest: &Path,
    kernel: &str,
    assembler_major: u32,
) -> Result<Accepted, Diagnostics> {
    let m = Manifest::load(manifest)?;
    let ki = crate::ops::find_kernel(&m, kernel)?;
    let plan = crate::pipeline::plan(&m, &[])?;
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for job in plan.jobs.iter().filter(|j| j.kernel == ki) {
        match crate::pipeline::prepare_every_finding(&m, &plan, job, assembler_major) {
            Ok(p) => {
                for d in &p.notes {
                    let k = key(&job.target, d);
                    if !lines.contains(&k) {
                        lines.push(k);
                    }
                }
            }
            Err(d) => errors.extend(d.0.into_iter().filter(|d| d.severity == Severity::Error)),
        }
    }
    if !errors.is_empty() {
        if let Some(first) = errors.first_mut() {
            first.notes.push(format!(
                "while accepting the findings of kernel `{kernel}`: nothing was written"
            ));
            first.help.push(
                "errors cannot be accepted: fix them first (`gcn-patch check` lists them)".into(),
            );
        }
        return Err(Diagnostics(errors));
    }
    let rel = match &m.kernels[ki].accepted_rel {
        Some(r) => r.clone(),
        None => PathBuf::from(DIR).join(format!("{kernel}.txt")),
    };
    let path = m.dir.join(&rel);
    let mut text = format!(
        "# Findings of kernel `{kernel}` acknowledged with `gcn-patch accept {kernel}`:\n\
         # check, build and gcn-build do not show them (they count them). A finding\n\
         # not listed here is shown. Delete a line to see that finding again.\n\
         # One finding a line, tab-separated: target, file:line, severity: message.\n"
    );
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    }
    crate::output::write_atomic(&path, text.as_bytes()).map_err(|e| io("write", &path, e))?;
    let manifest_updated = m.kernels[ki].accepted_rel.is_none();
    if manifest_updated {
        let new_text = add_key(&m, ki, &rel)?;
        crate::output::write_atomic(&m.path, new_text.as_bytes())
            .map_err(|e| io("write", &m.path, e))?;
    }
    Ok(Accepted {
        rel,
        findings: lines.len(),
        manifest_updated,
    })
}

fn io(what: &str, path: &Path, e: std::io::Error) -> Diagnostics {
    Diagnostic::error(format!("cannot {what} `{}`: {e}", path.display()))
        .with_help("check the path and its permissions")
        .into()
}

/// The manifest text with `accepted = "<rel>"` after kernel `ki`'s `name` line.
fn add_key(m: &Manifest, ki: usize, rel: &Path) -> Result<String, Diagnostics> {
    let mut lines: Vec<String> = m.text.split_inclusive('\n').map(str::to_string).collect();
    let at = m.kernels[ki].line.saturating_sub(1).min(lines.len());
    let quoted = toml::Value::String(rel.to_string_lossy().replace('\\', "/")).to_string();
    if at < lines.len() && !lines[at].ends_with('\n') {
        lines[at].push('\n');
    }
    lines.insert((at + 1).min(lines.len()), format!("accepted = {quoted}\n"));
    let text = lines.concat();
    Manifest::parse(&text, &m.path)?;
    Ok(text)
}
