//! `gcn-patch edit` / `save` / `patches` / `drop`: hand edits turned into
//! numbered unified diffs, quilt style.
//!
//! [`edit`] writes a source's dump with its existing diffs applied (the
//! structured rules are not: they run after every diff, on top of the edits)
//! to a work file `.gcn-patch/edit/<kernel>/<dump file name>` next to the
//! manifest, and records the sha256 of what it wrote beside it
//! (`.<dump file name>.written`). A work file whose contents differ from that
//! record holds edits that are not saved: `edit` and `drop` refuse to
//! overwrite or discard it unless forced. `.gcn-patch/` gets a `.gitignore`
//! holding `*`, as cargo does for `target/`.
//!
//! [`save`] diffs the work file against that same text, writes the
//! next `patches/<kernel>/NNNN-<name>.diff` and appends it to the source's
//! `patches` in the manifest; a `NAME` the source's last patch already has
//! refreshes that patch instead (quilt's `refresh`). Then it re-checks and
//! assembles the kernel for every target of the source, and on failure takes
//! every change back (no patch, no empty `patches/<kernel>/`). No change:
//! nothing is written. [`list`] lists a kernel's patches in order; [`drop`]
//! removes a named one.

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting};
use crate::config::edit::ManifestEdit;
use crate::config::manifest::{KernelSpec, Manifest, SourceSpec};
use crate::ops::Tools;
use crate::pipeline;
use crate::stage::toolchain::Toolchain;

/// Directory of work files, relative to the manifest directory.
pub const WORK_DIR: &str = ".gcn-patch/edit";

/// The `.gitignore` written into `.gcn-patch/` (as cargo writes one into `target/`).
pub const GITIGNORE: &str = "# Written by gcn-patch: work files and state, not sources.\n*\n";

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
        /// The patch existed and was rewritten in place (the manifest is unchanged).
        refreshed: bool,
    },
}

/// One patch of a kernel, as [`list`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The source's dump, as written in the manifest.
    pub dump: PathBuf,
    /// 1-based position among the source's patches (the order they apply in).
    pub index: usize,
    /// The patch, as written in the manifest.
    pub rel: PathBuf,
    /// Its name (`NNNN-` and `.diff` taken off the file name).
    pub name: String,
    /// `+` lines and `-` lines in its hunks (`None`: the file cannot be read).
    pub lines: Option<(usize, usize)>,
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
            .find(|(_, s)| s.targets.contains(t))
            .or_else(|| {
                // As `build --target`: a target of a source's generation.
                kernel
                    .sources
                    .iter()
                    .enumerate()
                    .find(|(_, s)| pipeline::builds_for(s, t))
            }),
    };
    found.ok_or_else(|| {
        let have: Vec<String> = kernel
            .sources
            .iter()
            .flat_map(|s| s.targets.iter().map(|t| t.name()))
            .collect();
        Diagnostic::error(
            Code::KernelNotBuiltForTarget,
            match target {
                Some(t) => format!("kernel `{}` is not built for {}", kernel.name, t.name()),
                None => format!("kernel `{}` has no source", kernel.name),
            },
        )
        .with_note(format!("its targets: {}", have.join(", ")))
        .with_help("pass one of its targets, or add the target to a source's `targets`")
        .into()
    })
}

fn work_dir(m: &Manifest, kernel: &str) -> PathBuf {
    m.dir.join(WORK_DIR).join(kernel)
}

fn io(what: &str, path: &Path, e: std::io::Error) -> Diagnostics {
    Diagnostic::error(
        Code::ReadFailed,
        format!("cannot {what} `{}`: {e}", path.display()),
    )
    .with_help("check the path and its permissions")
    .into()
}

/// The work files in `dir` (its entries not starting with `.`: the records
/// of what was written, and the atomic writer's temp files, do).
fn work_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Where the sha256 of what gcn-patch last wrote to `work` is recorded.
fn record_path(work: &Path) -> PathBuf {
    let name = work
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    work.with_file_name(format!(".{name}.written"))
}

/// Record that `work` now holds `text`, as gcn-patch wrote or saved it.
fn record(work: &Path, text: &str) -> Result<(), Diagnostics> {
    let rec = record_path(work);
    crate::base::output::write_atomic(
        &rec,
        format!("{}\n", crate::base::hash::sha256_hex(text.as_bytes())).as_bytes(),
    )
    .map_err(|e| io("write", &rec, e))
}

/// Write `.gcn-patch/.gitignore` (`*`) if it is not there.
fn ensure_gitignore(m: &Manifest) -> Result<(), Diagnostics> {
    let dir = m.dir.join(".gcn-patch");
    std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
    let path = dir.join(".gitignore");
    if !path.exists() {
        crate::base::output::write_atomic(&path, GITIGNORE.as_bytes())
            .map_err(|e| io("write", &path, e))?;
    }
    Ok(())
}

/// The work files of `kernel` holding edits gcn-patch did not write and
/// `save` did not save: their contents differ from the recorded sha256 (a
/// file without a record counts as edited unless it equals `fresh`).
fn unsaved(dir: &Path, fresh: Option<&str>) -> Vec<PathBuf> {
    work_files(dir)
        .into_iter()
        .filter(|w| {
            let Ok(text) = std::fs::read_to_string(w) else {
                // Unreadable (or not text): not ours to overwrite silently.
                return w.is_file();
            };
            let recorded = std::fs::read_to_string(record_path(w)).ok();
            let hash = crate::base::hash::sha256_hex(text.as_bytes());
            match recorded {
                Some(r) => r.trim() != hash,
                None => fresh != Some(text.as_str()),
            }
        })
        .collect()
}

/// The refusal to overwrite or discard `work`, which holds unsaved edits.
/// Forcing the operation discards them: the caller names how
/// ([`Setting::Force`]).
fn refuse_unsaved(kernel: &str, work: &Path, what: &str) -> Diagnostics {
    Diagnostic::error(Code::UnsavedEdits, format!(
        "kernel `{kernel}`: the work file `{}` has edits that are not saved; {what} would lose them",
        work.display()
    ))
    .with_note("its contents differ from what gcn-patch last wrote or saved there")
    .with_help(format!(
        "keep them as a patch: `gcn-patch save {kernel} NAME`, \
         or leave the file as it is and carry on editing it"
    ))
    .about(Setting::Force)
    .into()
}

/// What `gcn-patch edit` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct EditOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
    /// The source building this target (default: the kernel's first source).
    pub target: Option<TargetId>,
    /// Overwrite a work file holding unsaved edits (they are discarded).
    pub force: bool,
}

/// Write the work file of `kernel` (the source building `target`). A work
/// file holding unsaved edits is refused unless `force` (its edits are then
/// discarded).
pub fn edit(opts: &EditOptions) -> Result<WorkFile, Diagnostics> {
    let (manifest, kernel, target, force) = (
        opts.manifest.as_path(),
        opts.kernel.as_str(),
        opts.target.as_ref(),
        opts.force,
    );
    let m = Manifest::load(manifest)?;
    let k = m.kernel(kernel)?;
    let (_, source) = find_source(k, target)?;
    let base = crate::stage::patch::apply_diffs(&m, k, source)?.print();
    let dir = work_dir(&m, kernel);
    if !force {
        if let Some(w) = unsaved(&dir, Some(&base)).first() {
            return Err(refuse_unsaved(kernel, w, "writing it again"));
        }
    }
    ensure_gitignore(&m)?;
    // One work file per kernel: drop another source's stale one.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
    let name = source
        .rel
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| "dump.s".into());
    let path = dir.join(name);
    crate::base::output::write_atomic(&path, base.as_bytes()).map_err(|e| io("write", &path, e))?;
    record(&path, &base)?;
    Ok(WorkFile {
        path,
        dump: source.rel.clone(),
        rules: source.rules.len(),
    })
}

/// The name of a patch file: `NNNN-` and `.diff` taken off.
fn patch_name(rel: &Path) -> String {
    let file = rel
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = file.strip_suffix(".diff").unwrap_or(&file);
    match stem.split_once('-') {
        Some((n, rest)) if n.len() == 4 && n.bytes().all(|b| b.is_ascii_digit()) => {
            rest.to_string()
        }
        _ => stem.to_string(),
    }
}

/// Whether `name` (as typed: `coarser-waits`, `0002-coarser-waits` or the
/// file name) names the patch `rel`.
fn names_patch(name: &str, rel: &Path) -> bool {
    let file = rel
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let s = slug(name);
    !s.is_empty()
        && (patch_name(rel) == s || file == name || file.strip_suffix(".diff") == Some(name))
}

/// `+` and `-` lines of a unified diff's hunks.
fn count_lines(text: &str) -> (usize, usize) {
    let hunks = text.find("\n@@").map_or("", |i| &text[i + 1..]);
    (
        hunks.lines().filter(|l| l.starts_with('+')).count(),
        hunks.lines().filter(|l| l.starts_with('-')).count(),
    )
}

/// Which kernel's patches `gcn-patch patches` lists.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
}

/// Every patch of `kernel`, source by source, in the order they apply.
pub fn list(opts: &ListOptions) -> Result<Vec<Listed>, Diagnostics> {
    let m = Manifest::load(&opts.manifest)?;
    let k = m.kernel(&opts.kernel)?;
    Ok(k.sources
        .iter()
        .flat_map(|s| {
            s.patches.iter().enumerate().map(|(i, p)| Listed {
                dump: s.rel.clone(),
                index: i + 1,
                rel: p.rel.clone(),
                name: patch_name(&p.rel),
                lines: std::fs::read_to_string(&p.path)
                    .ok()
                    .map(|t| count_lines(&t)),
            })
        })
        .collect())
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

/// What `gcn-patch save` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct SaveOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
    /// The patch's name (`NNNN-NAME.diff`), or the last patch's to refresh it.
    pub name: String,
    /// The LLVM tools the saved kernel is assembled with.
    pub tools: Tools,
}

/// The unified diff from `base` to `edited` (the source `rel_src`), with
/// as little context as lets every hunk apply at exactly one place: the
/// applier takes no fuzz and refuses a hunk whose context and removed
/// lines match at several places (GP0207), which 3 lines of context often
/// do in unrolled code. The context starts at 3 lines and doubles until
/// the diff applies to `base` through the applier and gives `edited` (at
/// worst it holds the whole file).
fn anchored_diff(base: &str, edited: &str, rel_src: &str) -> String {
    let doc = crate::base::document::Document::from_source(base, rel_src);
    let pf = crate::config::manifest::PatchFile {
        path: PathBuf::from("(save)"),
        rel: PathBuf::from("(save)"),
    };
    let lines = base.lines().count().max(edited.lines().count());
    let mut context = 3;
    loop {
        let patch = diffy::DiffOptions::new()
            .set_context_len(context)
            .create_patch(base, edited);
        let body = patch.to_string();
        let hunks = body.find("\n@@").map_or("", |i| &body[i + 1..]);
        let text = format!("--- a/{rel_src}\n+++ b/{rel_src}\n{hunks}");
        let applies =
            crate::stage::patch::diff::apply_diff_text(&doc, &text, &pf, Path::new(rel_src))
                .is_ok_and(|d| d.print() == edited);
        if applies || context >= lines {
            return text;
        }
        context = (context * 2).min(lines);
    }
}

/// Turn the work file of `kernel` into the next numbered patch.
/// The kernel is then re-checked and assembled with the toolchain `tools`
/// finds for every target of the source (a work file the assembler rejects
/// is not saved).
pub fn save(opts: &SaveOptions) -> Result<Saved, Diagnostics> {
    let (manifest, kernel, name, tools) = (
        opts.manifest.as_path(),
        opts.kernel.as_str(),
        opts.name.as_str(),
        &opts.tools,
    );
    let toolchain = &tools.find(None)?;
    let m = Manifest::load(manifest)?;
    let ki = m.kernel_index(kernel)?;
    let k = &m.kernels[ki];
    let dir = work_dir(&m, kernel);
    let work = work_files(&dir);
    let no_work = || -> Diagnostics {
        Diagnostic::error(
            Code::NoWorkFile,
            format!("kernel `{kernel}` has no work file in `{}`", dir.display()),
        )
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
    let edited = std::fs::read_to_string(work).map_err(|e| io("read", work, e))?;
    // `NAME` of the source's last patch: refresh it (diff against the text
    // before it). A patch of that name further down: refused.
    let named = source
        .patches
        .iter()
        .position(|p| names_patch(name, &p.rel));
    let refresh = match named {
        Some(i) if i + 1 == source.patches.len() => Some(i),
        Some(i) => {
            let later: Vec<String> = source.patches[i + 1..]
                .iter()
                .map(|p| p.rel.display().to_string())
                .collect();
            return Err(Diagnostic::error(Code::PatchNotLast, format!(
                "kernel `{kernel}`: patch `{}` is not the last of its source, so it cannot be refreshed",
                source.patches[i].rel.display()
            ))
            .with_note(format!("patches applied after it: {}", later.join(", ")))
            .with_help(format!(
                "save the edits as a new patch (`gcn-patch save {kernel} NEW-NAME`), or drop the later patches first (`gcn-patch drop {kernel} NAME`)"
            ))
            .into());
        }
        None => None,
    };
    let current = crate::stage::patch::apply_diffs(&m, k, source)?.print();
    if edited == current {
        return Ok(Saved::NoChange);
    }
    let base = match refresh {
        Some(i) => {
            let mut before = source.clone();
            before.patches.truncate(i);
            crate::stage::patch::apply_diffs(&m, k, &before)?.print()
        }
        None => current,
    };
    if edited == base {
        return Err(Diagnostic::error(Code::RefreshEmpties, format!(
            "kernel `{kernel}`: the work file undoes patch `{}` entirely; refreshing would leave it empty",
            source.patches[refresh.unwrap_or(0)].rel.display()
        ))
        .with_help(format!("drop the patch instead: `gcn-patch drop {kernel} {name}`"))
        .into());
    }
    let slug = slug(name);
    if slug.is_empty() {
        return Err(Diagnostic::error(
            Code::InvalidPatchName,
            format!("patch name `{name}` has no letter or digit"),
        )
        .with_help("name the patch after what it does, e.g. `coarser-waits`")
        .into());
    }
    let rel_src = source.rel.to_string_lossy().replace('\\', "/");
    let text = anchored_diff(&base, &edited, &rel_src);
    let (added, removed) = count_lines(&text);

    // Taking back what this save wrote, on any failure below.
    let mut undo = Undo::default();
    let result = (|| -> Result<PathBuf, Diagnostics> {
        let rel = match refresh {
            Some(i) => {
                let p = &source.patches[i];
                let old = std::fs::read(&p.path).map_err(|e| io("read", &p.path, e))?;
                crate::base::output::write_atomic(&p.path, text.as_bytes())
                    .map_err(|e| io("write", &p.path, e))?;
                undo.restore.push((p.path.clone(), old));
                p.rel.clone()
            }
            None => {
                // patches/<kernel>/NNNN-<name>.diff, numbered after the existing ones.
                let pdir_rel = PathBuf::from("patches").join(kernel);
                let pdir = m.dir.join(&pdir_rel);
                if !pdir.exists() {
                    // Created here: `patches/<kernel>/`, and `patches/` if it is new too.
                    undo.dirs.push(pdir.clone());
                    if !m.dir.join("patches").exists() {
                        undo.dirs.push(m.dir.join("patches"));
                    }
                    std::fs::create_dir_all(&pdir).map_err(|e| io("create", &pdir, e))?;
                }
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
                crate::base::output::write_atomic(&patch_path, text.as_bytes())
                    .map_err(|e| io("write", &patch_path, e))?;
                undo.remove.push(patch_path);
                let new_manifest = append_patch(&m, ki, si, &rel_text)?;
                crate::base::output::write_atomic(&m.path, new_manifest.as_bytes())
                    .map_err(|e| io("write", &m.path, e))?;
                undo.restore
                    .push((m.path.clone(), m.text.clone().into_bytes()));
                rel
            }
        };
        Ok(rel)
    })();
    let rel = match result {
        Ok(rel) => rel,
        Err(d) => {
            undo.run();
            return Err(d);
        }
    };
    let rel_text = rel.to_string_lossy().replace('\\', "/");
    // Re-check every target of the source; take everything back on failure.
    if let Err(mut d) = recheck(&m.path, kernel, si, toolchain) {
        undo.run();
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
    // The work file's edits are saved: it is clean again.
    record(work, &edited)?;
    Ok(Saved::Patch {
        rel,
        added,
        removed,
        refreshed: refresh.is_some(),
    })
}

/// What a failed save takes back: files to restore, files to remove, and the
/// directories it created (`patches/<kernel>/`, `patches/`; removed if left empty).
#[derive(Default)]
struct Undo {
    restore: Vec<(PathBuf, Vec<u8>)>,
    remove: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Undo {
    fn run(self) {
        for (path, bytes) in self.restore.iter().rev() {
            let _ = crate::base::output::write_atomic(path, bytes);
        }
        for path in &self.remove {
            let _ = std::fs::remove_file(path);
        }
        for d in &self.dirs {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// What [`drop`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The patch, as it was written in the manifest (its file is deleted).
    pub rel: PathBuf,
    /// The work file removed with it (it held the dropped patch's changes).
    pub work: Option<PathBuf>,
}

/// What `gcn-patch drop` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct DropOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
    /// The patch (its name, or its file as the manifest lists it).
    pub name: String,
    /// Remove a work file holding unsaved edits too.
    pub force: bool,
}

/// Remove the patch `name` of `kernel` from its source's `patches` and delete
/// its file. The patches after it must still apply without it. The kernel's
/// work file, which holds the dropped changes, is removed too; one holding
/// unsaved edits is refused unless `force`.
pub fn drop(opts: &DropOptions) -> Result<Dropped, Diagnostics> {
    let (manifest, kernel, name, force) = (
        opts.manifest.as_path(),
        opts.kernel.as_str(),
        opts.name.as_str(),
        opts.force,
    );
    let m = Manifest::load(manifest)?;
    let ki = m.kernel_index(kernel)?;
    let k = &m.kernels[ki];
    let found = k.sources.iter().enumerate().find_map(|(si, s)| {
        s.patches
            .iter()
            .position(|p| names_patch(name, &p.rel))
            .map(|i| (si, s, i))
    });
    let Some((si, source, i)) = found else {
        let have: Vec<String> = k
            .sources
            .iter()
            .flat_map(|s| s.patches.iter().map(|p| patch_name(&p.rel)))
            .collect();
        return Err(Diagnostic::error(
            Code::NoSuchPatch,
            format!("kernel `{kernel}` has no patch named `{name}`"),
        )
        .with_note(if have.is_empty() {
            "it has no patches".to_string()
        } else {
            format!("its patches: {}", have.join(", "))
        })
        .with_help(format!("`gcn-patch patches {kernel}` lists them"))
        .into());
    };
    let dir = work_dir(&m, kernel);
    if !force {
        if let Some(w) = unsaved(&dir, None).first() {
            return Err(refuse_unsaved(
                kernel,
                w,
                "dropping a patch (which removes the work file)",
            ));
        }
    }
    let patch = source.patches[i].clone();
    let new_text = remove_patch(&m, ki, si, &patch.rel)?;
    // The later patches must apply without it.
    let mut without = source.clone();
    without.patches.remove(i);
    crate::stage::patch::apply_diffs(&m, k, &without).map_err(|mut d| {
        if let Some(first) = d.0.first_mut() {
            first.notes.push(format!(
                "while dropping `{}`: a later patch needs it; nothing was changed",
                patch.rel.display()
            ));
            first.help.push(
                "drop the later patches first, or edit them so that they apply without it"
                    .to_string(),
            );
        }
        d
    })?;
    crate::base::output::write_atomic(&m.path, new_text.as_bytes())
        .map_err(|e| io("write", &m.path, e))?;
    let _ = std::fs::remove_file(&patch.path);
    if let Some(pdir) = patch.path.parent() {
        let _ = std::fs::remove_dir(pdir);
    }
    let work = work_files(&dir).into_iter().next();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Dropped {
        rel: patch.rel,
        work,
    })
}

/// The manifest text with `rel` taken out of the `patches` of source `si`
/// of kernel `ki` (the rest of the file as it was: [`ManifestEdit`]).
fn remove_patch(m: &Manifest, ki: usize, si: usize, rel: &Path) -> Result<String, Diagnostics> {
    let mut edit = ManifestEdit::of(m)?;
    edit.remove_patch(ki, si, &rel.to_string_lossy())?;
    let text = edit.text();
    Manifest::parse(&text, &m.path)?;
    Ok(text)
}

/// Plan, prepare (retarget, check) and assemble every job of source `si` of `kernel`.
fn recheck(manifest: &Path, kernel: &str, si: usize, tc: &Toolchain) -> Result<(), Diagnostics> {
    let work = tempfile::tempdir().map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            Code::TempFileFailed,
            format!("cannot create a temp dir: {e}"),
        ))
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
                    .filter(|d| d.severity == crate::base::diag::Severity::Error),
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Diagnostics(errors))
    }
}

/// The manifest text with `rel` appended to the `patches` of source `si`
/// of kernel `ki` (the rest of the file as it was: [`ManifestEdit`]).
fn append_patch(m: &Manifest, ki: usize, si: usize, rel: &str) -> Result<String, Diagnostics> {
    let mut edit = ManifestEdit::of(m)?;
    edit.push_patch(ki, si, rel)?;
    let text = edit.text();
    Manifest::parse(&text, &m.path)?;
    Ok(text)
}
