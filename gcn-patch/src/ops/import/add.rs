//! Adding an import to the manifest: the dump moved from the stage to
//! `asm/`, the `[[kernel]]` or `[[kernel.source]]` entry added to the one
//! in-memory document of the run (one program, one kernel), and the
//! manifest written once at the end ([`Session`]).

use super::*;
use std::collections::HashMap;

pub(super) fn write_dump(dest: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error("create directory", parent, e))?;
    }
    crate::base::output::write_atomic(dest, bytes).map_err(|e| io_error("write", dest, e))
}

/// `path` relative to directory `base` (`..` where needed), `/`-separated:
/// how `imported-from` names the imported file, so that the manifest reads
/// the same in another checkout. Absolute when the two share no root.
pub fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        // Resolve `.`/`..` and symlinks where the path exists.
        p.canonicalize().unwrap_or(p)
    };
    let (p, b) = (abs(path), abs(base));
    let pc: Vec<_> = p.components().collect();
    let bc: Vec<_> = b.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return p;
    }
    let mut out = PathBuf::new();
    for _ in common..bc.len() {
        out.push("..");
    }
    for c in &pc[common..] {
        out.push(c);
    }
    out
}

/// The `[[kernel.source]]` of an import. `imported-from` is relative to
/// the manifest directory `dir`.
pub(super) fn new_source(imported: &Imported, rel_text: &str, dir: &Path) -> NewSource {
    NewSource {
        asm: rel_text.to_string(),
        sha256: imported.sha256.clone(),
        targets: vec![imported.target.name()],
        symbols: imported.symbols.clone(),
        imported_from: from_text(imported, dir),
        imported_sha256: imported.lifted.as_ref().map(|l| l.sha256.clone()),
        triton: imported.triton.clone(),
    }
}

/// `imported-from`: the file as given, relative to the manifest directory.
fn from_text(imported: &Imported, dir: &Path) -> String {
    relative_to(&imported.from, dir)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The kernel of `m` that `imported` is another processor's build of: the
/// same recognized name, the same kernel symbols, and no source for that
/// processor yet. `by_program` is [`programs_of`]`(m)`, kept up to date by
/// the caller (so each file added costs no pass over every source's path).
pub(super) fn same_program(
    m: &Manifest,
    by_program: &HashMap<String, Vec<usize>>,
    imported: &Imported,
) -> Option<usize> {
    let mut want = imported.symbols.clone();
    want.sort();
    let imported_as = by_program.get(&imported.kernel);
    m.kernels.iter().enumerate().position(|(ki, k)| {
        // The same name, or a source imported from a file of that program
        // (`hist-gfx942.co` of kernel `hist_gfx942`, imported before the
        // processor suffix was stripped: its kernel keeps its name).
        let same_name = k.name.eq_ignore_ascii_case(&imported.kernel)
            || imported_as.is_some_and(|kis| kis.contains(&ki));
        if !same_name || k.sources.is_empty() {
            return false;
        }
        let same_symbols = k.sources.iter().all(|s| {
            let mut have = s.symbols.clone();
            have.sort();
            have == want
        });
        let processor_free = k.sources.iter().all(|s| {
            s.targets
                .iter()
                .all(|t| t.processor.name != imported.target.processor.name)
        });
        same_symbols && processor_free
    })
}

/// The kernels of `m` by the program their sources were imported from
/// ([`program_key`] of each `imported-from`).
pub(super) fn programs_of(m: &Manifest) -> HashMap<String, Vec<usize>> {
    let mut by_program: HashMap<String, Vec<usize>> = HashMap::new();
    for (ki, k) in m.kernels.iter().enumerate() {
        for from in k.sources.iter().filter_map(|s| s.imported_from.as_deref()) {
            note_program(&mut by_program, from, ki);
        }
    }
    by_program
}

/// Record that kernel `ki` has a source imported from `from`.
fn note_program(by_program: &mut HashMap<String, Vec<usize>>, from: &str, ki: usize) {
    let kis = by_program.entry(program_key(from)).or_default();
    if !kis.contains(&ki) {
        kis.push(ki);
    }
}

/// Whether an `imported-from` value names the file `from`: as written
/// (relative to the manifest directory `dir`; older manifests hold the path
/// as given, possibly absolute), or resolving to the same place.
pub(super) fn same_file(dir: &Path, from: &Path) -> impl Fn(&str) -> bool {
    let resolve = |dir: &Path, p: &Path| {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        };
        p.canonicalize().unwrap_or(p)
    };
    let rel = relative_to(from, dir).to_string_lossy().replace('\\', "/");
    let abs = resolve(dir, &relative_to(from, dir));
    let dir = dir.to_path_buf();
    move |f: &str| f == rel || resolve(&dir, Path::new(f)) == abs
}

/// Where a lifted binary's asm goes: `rel` (`asm/<processor>/<file_name>`),
/// unless that is taken by a *different* binary of the same file name (its
/// source records another `imported-from`; aiter ships
/// `fmha_v3_fwd/MI300/X.co` and `fmha_v3_fwd/MI308/X.co` for one
/// processor). Then the binary's own parent directories are added, the
/// nearest first, until the place is free or holds this binary:
/// `asm/<processor>/MI308/X.s`, with `MI308` returned as the qualifier for
/// its kernel name. Dumps, and re-imports of the same path, keep `rel` (a
/// changed file is then an error that says how to replace it).
pub(super) fn distinct_place(
    dir: &Path,
    rel: PathBuf,
    file_name: &str,
    m: &Manifest,
    imported: &Imported,
) -> (PathBuf, Option<String>) {
    if imported.lifted.is_none() {
        return (rel, None);
    }
    let same_file = same_file(dir, &imported.from);
    // Taken by another binary: the file is there with other bytes, and its
    // source says it came from elsewhere.
    let taken_by_another = |rel: &Path| {
        let Ok(old) = std::fs::read(dir.join(rel)) else {
            return false;
        };
        sha256_hex(&old) != imported.sha256
            && m.kernels
                .iter()
                .flat_map(|k| &k.sources)
                .find(|s| s.rel == rel)
                .and_then(|s| s.imported_from.as_deref())
                .is_some_and(|f| !same_file(f))
    };
    if !taken_by_another(&rel) {
        return (rel, None);
    }
    let parents: Vec<String> = imported
        .from
        .parent()
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let processor_dir = PathBuf::from("asm").join(imported.target.processor.name);
    for n in 1..=parents.len() {
        let dirs = &parents[parents.len() - n..];
        let mut candidate = processor_dir.clone();
        candidate.extend(dirs);
        let candidate = candidate.join(file_name);
        if !taken_by_another(&candidate) {
            return (candidate, Some(dirs.join("_")));
        }
    }
    (rel, None)
}

/// The manifest directory: `asm/` paths are relative to it.
pub(super) fn manifest_dir(manifest_path: &Path) -> PathBuf {
    match manifest_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Files waiting to be imported: each recognized dump and lifted binary is
/// written here as soon as it is read or lifted, so that an import of
/// thousands holds none of them in memory (aiter's lifted asm is about
/// 1 GB). In the manifest's directory when it exists (then moving a file
/// into `asm/` is a rename), else in the system's temp directory; removed
/// with what is left in it when the import ends.
pub(super) struct Stage {
    dir: tempfile::TempDir,
    next: std::sync::atomic::AtomicUsize,
}

impl Stage {
    pub(super) fn new(manifest_dir: &Path) -> Result<Stage, Diagnostic> {
        let builder = {
            let mut b = tempfile::Builder::new();
            b.prefix(".gcn-patch-import-");
            b
        };
        let dir = if manifest_dir.is_dir() {
            builder.tempdir_in(manifest_dir)
        } else {
            builder.tempdir()
        }
        .map_err(|e| io_error("create a staging directory in", manifest_dir, e))?;
        Ok(Stage {
            dir,
            next: Default::default(),
        })
    }

    /// Move `imported`'s bytes to a file of the stage (`.staged`: not an
    /// extension a directory import reads).
    pub(super) fn put(&self, imported: &mut Imported) -> Result<(), Diagnostic> {
        if imported.staged.is_some() {
            return Ok(());
        }
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = self.dir.path().join(format!("{n}.staged"));
        std::fs::write(&path, &imported.bytes).map_err(|e| io_error("write", &path, e))?;
        imported.bytes = Vec::new();
        imported.staged = Some(path);
        Ok(())
    }
}

/// Put `imported`'s file at `dest`: its staged file moved (copied across
/// file systems), or its bytes written.
fn place(imported: &Imported, dest: &Path) -> Result<(), Diagnostic> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error("create directory", parent, e))?;
    }
    match &imported.staged {
        Some(staged) => std::fs::rename(staged, dest)
            .or_else(|_| std::fs::copy(staged, dest).map(|_| ()))
            .map_err(|e| io_error("write", dest, e)),
        None => write_dump(dest, &imported.bytes),
    }
}

/// One import run: the manifest read once, edited in memory file by file
/// ([`ManifestEdit`]), and written once, atomically, by [`Session::finish`].
/// `model` is the manifest as the edits make it, which the next file's
/// decisions (one program one kernel, free names and places) read.
pub(super) struct Session {
    manifest_path: PathBuf,
    dir: PathBuf,
    pub(super) model: Manifest,
    /// [`programs_of`] the model, kept up to date as files are added.
    by_program: HashMap<String, Vec<usize>>,
    edit: ManifestEdit,
    /// The asm files this run put in place (removed if the write fails).
    created: Vec<PathBuf>,
    changed: bool,
}

impl Session {
    /// Read the manifest at `manifest_path` (none yet: an empty one).
    pub(super) fn open(manifest_path: &Path) -> Result<Session, Diagnostics> {
        let dir = manifest_dir(manifest_path);
        let (model, edit) = if manifest_path.exists() {
            let m = Manifest::load(manifest_path)?;
            let edit = ManifestEdit::of(&m)?;
            (m, edit)
        } else {
            let m = Manifest {
                path: manifest_path.to_path_buf(),
                dir: dir.clone(),
                defaults: crate::config::manifest::Defaults {
                    targets: Vec::new(),
                    code_object_version: None,
                    llvm: None,
                    registers: Default::default(),
                    hazards: Default::default(),
                },
                kernels: Vec::new(),
                text: String::new(),
            };
            (m, ManifestEdit::new(manifest_path, NEW_MANIFEST))
        };
        Ok(Session {
            manifest_path: manifest_path.to_path_buf(),
            dir,
            by_program: programs_of(&model),
            model,
            edit,
            created: Vec::new(),
            changed: false,
        })
    }

    /// Add one recognized file: its asm put under `asm/<processor>/`, its
    /// `[[kernel]]` or `[[kernel.source]]` added to the document. On error
    /// nothing of it stays (the document and the files as before it).
    pub(super) fn add(&mut self, imported: &Imported) -> Result<Outcome, Diagnostics> {
        let dir = &self.dir;
        let file_name = match &imported.lifted {
            Some(l) => l.file_name.clone(),
            None => imported
                .from
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| "dump.s".into()),
        };
        let mut rel = PathBuf::from("asm").join(imported.target.processor.name);
        // Triton names every kernel file `<kernel>.amdgcn`: keep its directory.
        if imported.triton.is_some() {
            if let Some(d) = imported
                .from
                .parent()
                .and_then(|d| d.file_name())
                .filter(|d| crate::stage::triton::is_hash_dir(&d.to_string_lossy()))
            {
                rel.push(d);
            }
        }
        let rel = rel.join(&file_name);
        let (rel, qualifier) = distinct_place(dir, rel, &file_name, &self.model, imported);
        let rel_text = rel.to_string_lossy().replace('\\', "/");
        let dest = dir.join(&rel);
        let sha = &imported.sha256;
        let dest_exists = dest.exists();
        if dest_exists {
            let old = std::fs::read(&dest).map_err(|e| io_error("read", &dest, e))?;
            let old_sha = sha256_hex(&old);
            if old_sha != *sha {
                let kernel = self
                    .model
                    .kernels
                    .iter()
                    .find(|k| k.sources.iter().any(|s| s.rel == rel))
                    .map(|k| k.name.clone())
                    .unwrap_or_else(|| imported.kernel.clone());
                // A binary is lifted over its asm; a dump is copied.
                let replace = if imported.lifted.is_some() {
                    format!(
                        "lift it over (`gcn-patch lift {} -o {}`)",
                        imported.from.display(),
                        dest.display()
                    )
                } else {
                    format!(
                        "copy it over (`cp {} {}`)",
                        imported.from.display(),
                        dest.display()
                    )
                };
                return Err(Diagnostic::error(Code::ImportConflict, format!(
                    "`{}` was already imported as `{rel_text}` with other bytes",
                    imported.from.display()
                ))
                .with_note(format!("`{rel_text}` has sha256 {old_sha}"))
                .with_note(format!("`{}` has sha256 {sha}", imported.from.display()))
                .with_help(format!(
                    "to replace the dump: {replace}, then run `gcn-patch pin {kernel} --manifest {}` (it re-checks the patches against the new dump); or rename the file to import it as another kernel",
                    self.manifest_path.display()
                ))
                .into());
            }
            if let Some(k) = self
                .model
                .kernels
                .iter()
                .find(|k| k.sources.iter().any(|s| s.rel == rel))
            {
                return Ok(Outcome::Unchanged {
                    kernel: k.name.clone(),
                    asm: rel,
                });
            }
        }
        let source = new_source(imported, &rel_text, dir);
        let spec = SourceSpec {
            asm: dest.clone(),
            rel: rel.clone(),
            sha256: Some(sha.clone()),
            sha256_line: 0,
            targets: vec![imported.target],
            patches: Vec::new(),
            rules: Vec::new(),
            symbols: imported.symbols.clone(),
            imported_from: Some(source.imported_from.clone()),
            imported_sha256: source.imported_sha256.clone(),
            triton: imported.triton.clone(),
        };
        // The file first (an edit that fails takes it back), then the entry.
        if !dest_exists {
            place(imported, &dest)?;
        }
        let undo = |e: Diagnostic| -> Diagnostics {
            if !dest_exists {
                let _ = std::fs::remove_file(&dest);
            }
            e.into()
        };
        // Another processor's build of a kernel already here: a new source of it.
        if let Some(ki) = same_program(&self.model, &self.by_program, imported) {
            self.edit.add_source(ki, &source).map_err(undo)?;
            note_program(&mut self.by_program, &source.imported_from, ki);
            let k = &mut self.model.kernels[ki];
            k.sources.push(spec);
            self.changed = true;
            if !dest_exists {
                self.created.push(dest);
            }
            return Ok(Outcome::AddedSource {
                kernel: k.name.clone(),
                asm: rel,
            });
        }
        // A free kernel name: the recognized one, else with the processor appended, else numbered.
        let taken = |n: &str| {
            self.model
                .kernels
                .iter()
                .any(|k| k.name.eq_ignore_ascii_case(n))
        };
        // A binary placed under its own directories (`distinct_place`) is
        // named after them too: `MI308_fwd_…` beside `fwd_…`.
        let base = match &qualifier {
            Some(q) => identifier(&format!("{q}_{}", imported.kernel)),
            None => imported.kernel.clone(),
        };
        let mut kernel = base.clone();
        if taken(&kernel) {
            kernel = format!("{base}_{}", imported.target.processor.name);
            let mut n = 2;
            while taken(&kernel) {
                kernel = format!("{base}_{}_{n}", imported.target.processor.name);
                n += 1;
            }
        }
        let comment = imported
            .triton
            .as_ref()
            .and_then(|t| specialization_comment(self, &t.kernel, &imported.from));
        let from = source.imported_from.clone();
        self.edit
            .add_kernel(&NewKernel {
                name: kernel.clone(),
                iree_executables: imported.iree_executables.clone(),
                comment,
                source,
            })
            .map_err(undo)?;
        note_program(&mut self.by_program, &from, self.model.kernels.len());
        self.model.kernels.push(KernelSpec {
            name: kernel.clone(),
            iree_executable: None,
            iree_executables: imported.iree_executables.clone(),
            registers: self.model.defaults.registers,
            hazards: self.model.defaults.hazards,
            sources: vec![spec],
            line: 0,
            accepted: None,
            accepted_rel: None,
            launches: Vec::new(),
        });
        self.changed = true;
        if !dest_exists {
            self.created.push(dest);
        }
        Ok(Outcome::Added { kernel, asm: rel })
    }

    /// Write the manifest, once, atomically, if anything was added: after
    /// checking that it loads (every asm file it names is in place by now).
    /// If it does not load or cannot be written, the asm files this run put
    /// in place are removed and the manifest stays as it was.
    pub(super) fn finish(self) -> Result<(), Diagnostics> {
        if !self.changed {
            return Ok(());
        }
        let text = self.edit.text();
        let written = Manifest::parse(&text, &self.manifest_path).and_then(|_| {
            // The asm files reach the disk before the manifest that pins them.
            sync_file_system(&self.dir);
            crate::base::output::write_atomic(&self.manifest_path, text.as_bytes())
                .map_err(|e| io_error("write", &self.manifest_path, e).into())
        });
        if written.is_err() {
            remove_created(&self.dir, &self.created);
        }
        written
    }
}

/// Flush what was written to the file system holding `dir` (one `syncfs`
/// on Linux instead of one `fsync` per imported file; elsewhere nothing:
/// the pins catch a file that did not reach the disk).
fn sync_file_system(dir: &Path) {
    #[cfg(target_os = "linux")]
    if let Ok(f) = std::fs::File::open(dir) {
        use std::os::fd::AsRawFd;
        // SAFETY: `f` is an open file descriptor for the duration of the call.
        unsafe {
            libc::syncfs(f.as_raw_fd());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = dir;
}

/// Remove the asm files an import `created`, and the directories left
/// empty by their removal (up to the manifest directory `top`).
fn remove_created(top: &Path, created: &[PathBuf]) {
    for file in created.iter().rev() {
        let _ = std::fs::remove_file(file);
        let mut dir = file.parent();
        while let Some(d) = dir {
            if d == top || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
}

/// Copy one recognized dump under `asm/<processor>/` and add its kernel to
/// the manifest (created if absent). Idempotent for the same bytes.
pub fn add_to_manifest(manifest_path: &Path, imported: &Imported) -> Result<Outcome, Diagnostics> {
    let mut session = Session::open(manifest_path)?;
    let outcome = session.add(imported)?;
    session.finish()?;
    Ok(outcome)
}

/// The comment above a Triton kernel's `[[kernel]]` saying which
/// specialization it is (signature and block sizes, from the `.ttir` beside
/// `amdgcn`) and, for each kernel already annotated as another
/// specialization of the same Triton kernel, what differs from it.
fn specialization_comment(session: &Session, triton_kernel: &str, amdgcn: &Path) -> Option<String> {
    let spec = crate::stage::triton::specialization(amdgcn)?;
    let prefix = format!("# Triton specialization of `{triton_kernel}`: ");
    let mine = spec.describe();
    let mut out = format!("{prefix}{mine}\n");
    for (ki, k) in session.model.kernels.iter().enumerate() {
        let Some(comment) = session.edit.kernel_comment(ki) else {
            continue;
        };
        let Some(other) = comment.lines().find_map(|l| l.strip_prefix(&prefix)) else {
            continue;
        };
        let part = |d: &str, key: &str| {
            d.split("; ")
                .find(|p| p.starts_with(key))
                .unwrap_or("")
                .to_string()
        };
        let mut differs = Vec::new();
        if part(&mine, "signature") != part(other, "signature") {
            differs.push("signature");
        }
        if part(&mine, "block sizes") != part(other, "block sizes") {
            differs.push("block sizes (constexprs)");
        }
        let what = if differs.is_empty() {
            "neither signature nor block sizes (other constexprs or options)".to_string()
        } else {
            differs.join(" and ")
        };
        out.push_str(&format!("# differs from \"{}\" in: {what}\n", k.name));
    }
    Some(out)
}
