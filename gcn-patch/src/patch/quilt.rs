//! `gcn-patch edit` / `save`: hand edits turned into numbered unified diffs,
//! quilt style.
//!
//! [`edit`] writes a source's dump with its existing diffs applied (the
//! structured rules are not: they run after every diff, on top of the edits)
//! to a work file `.gcn-patch/edit/<kernel>/<dump file name>` next to the
//! manifest. [`save`] diffs the work file against that same text, writes the
//! next `patches/<kernel>/NNNN-<name>.diff` and appends it to the source's
//! `patches` in the manifest; then it re-checks and assembles the kernel for
//! every target of the source, and on failure takes both changes back. No change: nothing is
//! written.

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use crate::diag::{Diagnostic, Diagnostics};
use crate::manifest::{KernelSpec, Manifest, SourceSpec};
use crate::pipeline;
use crate::toolchain::Toolchain;

/// Directory of work files, relative to the manifest directory.
pub const WORK_DIR: &str = ".gcn-patch/edit";

/// What [`edit`] wrote.
#[derive(Debug, Clone)]
pub struct WorkFile {
    /// The work file (absolute or relative to the working directory, as the manifest path).
    pub path: PathBuf,
    /// The source's dump, as written in the manifest.
    pub dump: PathBuf,
    /// Number of structured rules applied after the diffs (not in the work file).
    pub rules: usize,
}

/// What [`save`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// The work file equals the patched dump: nothing written.
    NoChange,
    /// Wrote the patch (relative to the manifest directory), appended to the manifest.
    Patch {
        /// `patches/<kernel>/NNNN-<name>.diff`.
        rel: PathBuf,
        /// Lines added and removed.
        added: usize,
        /// Lines removed.
        removed: usize,
    },
}

fn find_kernel<'a>(m: &'a Manifest, name: &str) -> Result<&'a KernelSpec, Diagnostics> {
    m.kernel(name).ok_or_else(|| {
        let names: Vec<&str> = m.kernels.iter().map(|k| k.name.as_str()).collect();
        Diagnostic::error(format!("no kernel `{name}` in {}", m.shown().display()))
            .with_note(format!("kernels: {}", names.join(", ")))
            .with_help(
                "pass the `name` of a [[kernel]] in the manifest (`gcn-patch import` adds them)",
            )
            .into()
    })
}

/// The source of `kernel` that builds `target` (default: the first source).
fn find_source<'a>(
    kernel: &'a KernelSpec,
    target: Option<&TargetId>,
) -> Result<(usize, &'a SourceSpec), Diagnostics> {
    let found = match target {
        None => kernel.sources.first().map(|s| (0, s)),
        Some(t) => kernel
            .sources
            .iter()
            .enumerate()
            .find(|(_, s)| s.targets.contains(t)),
    };
    found.ok_or_else(|| {
        let have: Vec<String> = kernel
            .sources
            .iter()
            .flat_map(|s| s.targets.iter().map(|t| t.name()))
            .collect();
        Diagnostic::error(match target {
            Some(t) => format!("kernel `{}` is not built for {}", kernel.name, t.name()),
            None => format!("kernel `{}` has no source", kernel.name),
        })
        .with_note(format!("its targets: {}", have.join(", ")))
        .with_help("pass one of its targets, or add the target to a source's `targets`")
        .into()
    })
}

fn work_dir(m: &Manifest, kernel: &str) -> PathBuf {
    m.dir.join(WORK_DIR).join(kernel)
}

fn io(what: &str, path: &Path, e: std::io::Error) -> Diagnostics {
    Diagnostic::error(format!("cannot {what} `{}`: {e}", path.display()))
        .with_help("check the path and its permissions")
        .into()
}

/// Write the work file of `kernel` (the source building `target`).
pub fn edit(
    manifest: &Path,
    kernel: &str,
    target: Option<&TargetId>,
) -> Result<WorkFile, Diagnostics> {
    let m = Manifest::load(manifest)?;
    let k = find_kernel(&m, kernel)?;
    let (_, source) = find_source(k, target)?;
    let base = crate::patch::apply_diffs(&m, k, source)?;
    let dir = work_dir(&m, kernel);
    // One work file per kernel: drop another source's stale one.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
    let name = source
        .rel
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| "dump.s".into());
    let path = dir.join(name);
    crate::output::write_atomic(&path, base.print().as_bytes())
        .map_err(|e| io("write", &path, e))?;
    Ok(WorkFile {
        path,
        dump: source.rel.clone(),
        rules: source.rules.len(),
    })
}

/// `name` made a file-name part: `[A-Za-z0-9._-]`, others become `-`.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect::<String>()
        .trim_matches('-')
        .to_string()
}

/// Turn the work file of `kernel` into the next numbered patch.
/// The kernel is then re-checked and assembled with `toolchain` for every
/// target of the source (a work file the assembler rejects is not saved).
pub fn save(
    manifest: &Path,
    kernel: &str,
    name: &str,
    toolchain: &Toolchain,
) -> Result<Saved, Diagnostics> {
    let m = Manifest::load(manifest)?;
    let k = find_kernel(&m, kernel)?;
    let dir = work_dir(&m, kernel);
    let work: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    let no_work = || -> Diagnostics {
        Diagnostic::error(format!(
            "kernel `{kernel}` has no work file in `{}`",
            dir.display()
        ))
        .with_help(format!(
            "run `gcn-patch edit {kernel}` first, edit the file it prints, then save"
        ))
        .into()
    };
    let [work] = work.as_slice() else {
        return Err(no_work());
    };
    let file_name = work.file_name().map(|f| f.to_os_string());
    let (si, source) = k
        .sources
        .iter()
        .enumerate()
        .find(|(_, s)| s.rel.file_name().map(|f| f.to_os_string()) == file_name)
        .ok_or_else(no_work)?;
    let base = crate::patch::apply_diffs(&m, k, source)?.print();
    let edited = std::fs::read_to_string(work).map_err(|e| io("read", work, e))?;
    if edited == base {
        return Ok(Saved::NoChange);
    }
    let slug = slug(name);
    if slug.is_empty() {
        return Err(
            Diagnostic::error(format!("patch name `{name}` has no letter or digit"))
                .with_help("name the patch after what it does, e.g. `coarser-waits`")
                .into(),
        );
    }
    let rel_src = source.rel.to_string_lossy().replace('\\', "/");
    let patch = diffy::create_patch(&base, &edited);
    let body = patch.to_string();
    let hunks = body.find("\n@@").map_or("", |i| &body[i + 1..]);
    let text = format!("--- a/{rel_src}\n+++ b/{rel_src}\n{hunks}");
    let added = hunks.lines().filter(|l| l.starts_with('+')).count();
    let removed = hunks.lines().filter(|l| l.starts_with('-')).count();

    // patches/<kernel>/NNNN-<name>.diff, numbered after the existing ones.
    let pdir_rel = PathBuf::from("patches").join(kernel);
    let pdir = m.dir.join(&pdir_rel);
    std::fs::create_dir_all(&pdir).map_err(|e| io("create", &pdir, e))?;
    let last = std::fs::read_dir(&pdir)
        .map_err(|e| io("read", &pdir, e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.get(..4).and_then(|d| d.parse::<u32>().ok())
        })
        .max()
        .unwrap_or(0);
    let rel = pdir_rel.join(format!("{:04}-{slug}.diff", last + 1));
    let rel_text = rel.to_string_lossy().replace('\\', "/");
    let patch_path = m.dir.join(&rel);
    crate::output::write_atomic(&patch_path, text.as_bytes())
        .map_err(|e| io("write", &patch_path, e))?;
    let new_manifest = append_patch(&m, source, &rel_text).inspect_err(|_| {
        let _ = std::fs::remove_file(&patch_path);
    })?;
    crate::output::write_atomic(&m.path, new_manifest.as_bytes())
        .map_err(|e| io("write", &m.path, e))?;
    // Re-check every target of the source; take everything back on failure.
    if let Err(mut d) = recheck(&m.path, kernel, si, toolchain) {
        let _ = crate::output::write_atomic(&m.path, m.text.as_bytes());
        let _ = std::fs::remove_file(&patch_path);
        if let Some(first) = d.0.first_mut() {
            first.notes.push(format!(
                "while saving `{}` as {rel_text}: nothing was saved",
                work.display()
            ));
            first.help.push(format!(
                "fix the work file `{}` and run `gcn-patch save {kernel} {name}` again",
                work.display()
            ));
        }
        return Err(d);
    }
    Ok(Saved::Patch {
        rel,
        added,
        removed,
    })
}

/// Plan, prepare (retarget, check) and assemble every job of source `si` of `kernel`.
fn recheck(manifest: &Path, kernel: &str, si: usize, tc: &Toolchain) -> Result<(), Diagnostics> {
    let work = tempfile::tempdir().map_err(|e| {
        Diagnostics::from(Diagnostic::error(format!("cannot create a temp dir: {e}")))
    })?;
    let m = Manifest::load(manifest)?;
    let plan = pipeline::plan(&m, &[])?;
    let ki = m.kernels.iter().position(|k| k.name == kernel).unwrap_or(0);
    let mut errors = Vec::new();
    for job in plan
        .jobs
        .iter()
        .filter(|j| j.kernel == ki && j.source == si)
    {
        let built = pipeline::prepare(&m, &plan, job, tc.version.major).and_then(|p| {
            let out = work
                .path()
                .join(format!("{}.hsaco", job.target.name().replace(':', "_")));
            pipeline::build(tc, &p, work.path(), &out).map(|_| ())
        });
        if let Err(d) = built {
            errors.extend(
                d.0.into_iter()
                    .filter(|d| d.severity == crate::diag::Severity::Error),
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Diagnostics(errors))
    }
}

/// The manifest text with `rel` appended to `source`'s `patches`.
fn append_patch(m: &Manifest, source: &SourceSpec, rel: &str) -> Result<String, Diagnostics> {
    let lines: Vec<&str> = m.text.split_inclusive('\n').collect();
    // The source's table: from its sha256/asm line back to `[[kernel.source]]`, forward to the next table.
    let at = source
        .sha256_line
        .saturating_sub(1)
        .min(lines.len().saturating_sub(1));
    let end = (at + 1..lines.len())
        .find(|&i| lines[i].trim_start().starts_with('['))
        .unwrap_or(lines.len());
    let start = (0..=at)
        .rev()
        .find(|&i| lines[i].trim_start().starts_with("[[kernel.source]]"))
        .unwrap_or(at);
    let quoted = toml::Value::String(rel.to_string()).to_string();
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let existing = (start..end).find(|&i| {
        let t = lines[i].trim_start();
        t.starts_with("patches") && t[7..].trim_start().starts_with('=')
    });
    match existing {
        Some(i) => {
            let line = lines[i].trim_end_matches(['\n', '\r']);
            let Some(close) = line.rfind(']') else {
                return Err(Diagnostic::error(format!(
                    "cannot append to the `patches` list at {}:{}",
                    m.shown().display(),
                    i + 1
                ))
                .with_help("write the list on one line (`patches = [\"a.diff\", \"b.diff\"]`) and save again")
                .into());
            };
            let inner = line[..close].trim_end();
            let sep = if inner.ends_with('[') { "" } else { ", " };
            out[i] = format!("{inner}{sep}{quoted}{}\n", &line[close..]);
        }
        None => {
            let eol = if lines[at].ends_with('\n') { "" } else { "\n" };
            out[at] = format!("{}{eol}patches = [{quoted}]\n", lines[at]);
        }
    }
    let text = out.concat();
    Manifest::parse(&text, &m.path)?;
    Ok(text)
}
