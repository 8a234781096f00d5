//! What `check`, `build` and gcn-build show of a run's warnings and notes:
//! each finding once.
//!
//! - [`collapse_repeats`]: a job's diagnostics that say the same thing at
//!   several lines (aiter kernels carry one instruction the wait-counter
//!   model does not know many times) are shown once, in full, with the other
//!   lines listed under it.
//! - [`register_summary`]: the register updates of `registers = "update"`
//!   (GP0412) and their occupancy reports (GP0413) are the same on every run
//!   until the code changes; a run shows them in one note naming each
//!   kernel and target, with the `gcn-patch accept` command that
//!   acknowledges them.
//!
//! Nothing is dropped: the callers keep every diagnostic in full where a
//! user can ask for it (`check -v`, gcn-build's `notes.txt`).

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Location};

/// How many other lines a collapsed diagnostic lists before "…".
pub const LISTED_LINES: usize = 20;

/// Diagnostics of one job that differ only in their line (same severity,
/// code, message, notes, help and file) become one: the first, in full,
/// with a note "and N more like it at lines …" (up to [`LISTED_LINES`]
/// of them). Order is kept (each group where its first member was).
pub fn collapse_repeats(ds: Vec<Diagnostic>) -> Vec<Diagnostic> {
    fn same(a: &Diagnostic, b: &Diagnostic) -> bool {
        a.severity == b.severity
            && a.code == b.code
            && a.message == b.message
            && a.notes == b.notes
            && a.help == b.help
            && a.location.as_ref().map(|l| &l.file) == b.location.as_ref().map(|l| &l.file)
            && a.location.as_ref().map(|l| &l.label) == b.location.as_ref().map(|l| &l.label)
    }
    let mut groups: Vec<(Diagnostic, Vec<Option<usize>>)> = Vec::new();
    for d in ds {
        // Only located diagnostics repeat "at another line"; two identical
        // unlocated ones are shown once too.
        match groups.iter_mut().find(|(first, _)| same(first, &d)) {
            Some((_, more)) => more.push(d.location.as_ref().map(|l| l.line)),
            None => groups.push((d, Vec::new())),
        }
    }
    groups
        .into_iter()
        .map(|(mut d, more)| {
            if !more.is_empty() {
                d.notes.push(more_like_it(d.location.as_deref(), &more));
            }
            d
        })
        .collect()
}

/// "and 15 more like it at lines 40, 77, … of k.s".
fn more_like_it(at: Option<&Location>, more: &[Option<usize>]) -> String {
    let mut lines: Vec<usize> = more.iter().flatten().copied().collect();
    lines.sort_unstable();
    lines.dedup();
    let n = more.len();
    if lines.is_empty() {
        return format!("and {n} more like it");
    }
    let shown: Vec<String> = lines
        .iter()
        .take(LISTED_LINES)
        .map(|l| l.to_string())
        .collect();
    let rest = if lines.len() > LISTED_LINES {
        format!(", … ({} more)", lines.len() - LISTED_LINES)
    } else {
        String::new()
    };
    let file = at
        .map(|l| format!(" of {}", l.file.display()))
        .unwrap_or_default();
    format!(
        "and {n} more like it at line{} {}{rest}{file}",
        if lines.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}

/// Whether `d` is one of the notes [`register_summary`] folds: a register
/// update (GP0412) or an occupancy report (GP0413).
pub fn is_register_note(d: &Diagnostic) -> bool {
    matches!(d.code, Code::RegistersUpdated | Code::Occupancy)
}

/// One note for the register updates (GP0412) and occupancy reports
/// (GP0413) of a run, or `None` when it has none. `jobs` gives each job's
/// kernel (the manifest's name), target and notes. The note names each
/// kernel with its targets, keeps each occupancy report as one line, and its
/// help gives the `gcn-patch accept` command for each kernel (accepted
/// notes are counted, not shown: [`crate::config::accept`]).
pub fn register_summary<'a>(
    jobs: impl IntoIterator<Item = (&'a str, &'a TargetId, &'a [Diagnostic])>,
) -> Option<Diagnostic> {
    // Kernel -> targets with updates, in run order.
    let mut updated: Vec<(&str, Vec<String>)> = Vec::new();
    let mut occupancy: Vec<String> = Vec::new();
    let mut kernels: Vec<&str> = Vec::new();
    for (kernel, target, notes) in jobs {
        for d in notes.iter().filter(|d| is_register_note(d)) {
            if !kernels.contains(&kernel) {
                kernels.push(kernel);
            }
            match d.code {
                Code::RegistersUpdated => {
                    let t = target.name();
                    match updated.iter_mut().find(|(k, _)| *k == kernel) {
                        Some((_, ts)) if !ts.contains(&t) => ts.push(t),
                        Some(_) => {}
                        None => updated.push((kernel, vec![t])),
                    }
                }
                _ => {
                    if !occupancy.contains(&d.message) {
                        occupancy.push(d.message.clone());
                    }
                }
            }
        }
    }
    if kernels.is_empty() {
        return None;
    }
    let message = if updated.is_empty() {
        "the patches change the register allocation (occupancy below)".to_string()
    } else {
        format!(
            "`registers = \"update\"` updated the register counts of {}",
            updated
                .iter()
                .map(|(k, ts)| format!("kernel `{k}` for {}", ts.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    let mut d = Diagnostic::note(
        if updated.is_empty() {
            Code::Occupancy
        } else {
            Code::RegistersUpdated
        },
        message,
    );
    for o in occupancy {
        d = d.with_note(format!("occupancy: {o}"));
    }
    let accept: Vec<String> = kernels
        .iter()
        .map(|k| format!("`gcn-patch accept {k}`"))
        .collect();
    d = d.with_help(format!(
        "these notes repeat on every check and build: {} acknowledges them (check and build then count them instead of showing them); `gcn-patch check -v` shows each change",
        accept.join(", ")
    ));
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize) -> Diagnostic {
        Diagnostic::warning(Code::HazardAnalysisLimit, "kernel `k`: `foo` is not known")
            .with_note("not tracked")
            .at(Location::line("k.s", line, Some("foo v1".into())))
    }

    #[test]
    fn repeats_at_other_lines_become_one_with_the_lines_listed() {
        let other =
            Diagnostic::warning(Code::HazardAnalysisLimit, "kernel `k`: `bar` is not known")
                .at(Location::line("k.s", 9, None));
        let out = collapse_repeats(vec![at(4), at(30), other.clone(), at(12)]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].location.as_ref().unwrap().line, 4);
        assert_eq!(
            out[0].notes.last().unwrap(),
            "and 2 more like it at lines 12, 30 of k.s"
        );
        assert_eq!(out[1], other);
    }

    #[test]
    fn a_long_list_of_lines_is_cut() {
        let out = collapse_repeats((1..=30).map(at).collect());
        assert_eq!(out.len(), 1);
        let listed: Vec<String> = (2..=21).map(|l| l.to_string()).collect();
        assert_eq!(
            out[0].notes.last().unwrap(),
            &format!(
                "and 29 more like it at lines {}, … (9 more) of k.s",
                listed.join(", ")
            )
        );
    }
}
