//! Adding an import to the manifest: the dump copied under `asm/`, the
//! `[[kernel]]` or `[[kernel.source]]` entry written (one program, one
//! kernel), and everything rolled back when a step fails.

use super::*;

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

/// The `[[kernel.source]]` table of an import (with a leading blank line).
/// `imported-from` is relative to the manifest directory `dir`.
pub(super) fn source_entry(imported: &Imported, rel_text: &str, dir: &Path) -> String {
    let from = relative_to(&imported.from, dir)
        .to_string_lossy()
        .replace('\\', "/");
    let mut entry = format!(
        "\n[[kernel.source]]\nasm = {}\nsha256 = {}\ntargets = {}\nsymbols = {}\nimported-from = {}\n",
        quoted(rel_text),
        quoted(&imported.sha256),
        list(&[imported.target.name()]),
        list(&imported.symbols),
        quoted(&from),
    );
    if let Some(l) = &imported.lifted {
        entry.push_str(&format!("imported-sha256 = {}\n", quoted(&l.sha256)));
    }
    if let Some(t) = &imported.triton {
        entry.push_str(&format!("triton = {}\n", t.to_toml()));
    }
    entry
}

/// The kernel of `m` that `imported` is another processor's build of: the
/// same recognized name, the same kernel symbols, and no source for that
/// processor yet.
pub(super) fn same_program<'m>(
    m: &'m Manifest,
    imported: &Imported,
) -> Option<&'m crate::config::manifest::KernelSpec> {
    let mut want = imported.symbols.clone();
    want.sort();
    m.kernels.iter().find(|k| {
        if !k.name.eq_ignore_ascii_case(&imported.kernel) || k.sources.is_empty() {
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

/// `text` with `source` inserted at the end of the `[[kernel]]` whose
/// `name` is on line `name_line` (before the next `[[kernel]]`, or at the end).
pub(super) fn insert_source(text: &str, name_line: usize, source: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let next = lines
        .iter()
        .enumerate()
        .skip(name_line)
        .find(|(_, l)| l.trim() == "[[kernel]]")
        .map(|(i, _)| i);
    let mut out = String::with_capacity(text.len() + source.len() + 1);
    match next {
        Some(i) => {
            // Before the blank and comment lines that lead into the next kernel.
            let mut at = i;
            while at > name_line
                && (lines[at - 1].trim().is_empty() || lines[at - 1].trim_start().starts_with('#'))
            {
                at -= 1;
            }
            out.extend(lines[..at].iter().copied());
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(source);
            out.extend(lines[at..].iter().copied());
        }
        None => {
            out.push_str(text);
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(source);
        }
    }
    out
}

/// TOML basic string.
pub(super) fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

pub(super) fn list(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", q.join(", "))
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
    existing: Option<&Manifest>,
    imported: &Imported,
) -> (PathBuf, Option<String>) {
    let (Some(m), Some(_)) = (existing, &imported.lifted) else {
        return (rel, None);
    };
    // `imported-from` as written (relative to the manifest; older manifests
    // hold the path as given, possibly absolute): the same file if it
    // resolves to the same place.
    let resolve = |p: &Path| {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        };
        p.canonicalize().unwrap_or(p)
    };
    let from = relative_to(&imported.from, dir);
    let from_abs = resolve(&from);
    let same_file = |f: &str| {
        f == from.to_string_lossy().replace('\\', "/") || resolve(Path::new(f)) == from_abs
    };
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

/// Copy one recognized dump under `asm/<processor>/` and append its kernel to
/// the manifest (created if absent). Idempotent for the same bytes.
pub fn add_to_manifest(manifest_path: &Path, imported: &Imported) -> Result<Outcome, Diagnostics> {
    let existing = load_existing(manifest_path)?;
    add_one(manifest_path, existing.as_ref(), imported).map(|added| added.outcome)
}

/// The manifest at `manifest_path`, if there is one.
pub(super) fn load_existing(manifest_path: &Path) -> Result<Option<Manifest>, Diagnostics> {
    if manifest_path.exists() {
        Manifest::load(manifest_path).map(Some)
    } else {
        Ok(None)
    }
}

/// What [`add_one`] did.
pub(super) struct Added {
    pub(super) outcome: Outcome,
    /// The asm file it created (none when the file was there already).
    pub(super) created: Option<PathBuf>,
    /// The manifest it wrote (none when it wrote none).
    pub(super) manifest: Option<Manifest>,
}

/// The directory `asm/` paths of a manifest are relative to.
pub(super) fn manifest_dir(manifest_path: &Path) -> PathBuf {
    match manifest_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// [`add_to_manifest`] onto `existing`, the manifest as it is now (loaded
/// once per import, not once per file: a library import adds thousands).
pub(super) fn add_one(
    manifest_path: &Path,
    existing: Option<&Manifest>,
    imported: &Imported,
) -> Result<Added, Diagnostics> {
    let dir = manifest_dir(manifest_path);
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
        if let Some(dir) = imported
            .from
            .parent()
            .and_then(|d| d.file_name())
            .filter(|d| crate::ops::triton::is_hash_dir(&d.to_string_lossy()))
        {
            rel.push(dir);
        }
    }
    let rel = rel.join(&file_name);
    let (rel, qualifier) = distinct_place(&dir, rel, &file_name, existing, imported);
    let rel_text = rel.to_string_lossy().replace('\\', "/");
    let dest = dir.join(&rel);
    let sha = &imported.sha256;
    if let Ok(old) = std::fs::read(&dest) {
        let old_sha = sha256_hex(&old);
        if old_sha != *sha {
            let kernel = existing.and_then(|m| {
                m.kernels
                    .iter()
                    .find(|k| k.sources.iter().any(|s| s.rel == rel))
                    .map(|k| k.name.clone())
            });
            let kernel = kernel.unwrap_or_else(|| imported.kernel.clone());
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
                manifest_path.display()
            ))
            .into());
        }
    }
    if let Some(m) = existing {
        if let Some(k) = m
            .kernels
            .iter()
            .find(|k| k.sources.iter().any(|s| s.rel == rel))
        {
            if dest.exists() {
                return Ok(Added {
                    outcome: Outcome::Unchanged {
                        kernel: k.name.clone(),
                        asm: rel,
                    },
                    created: None,
                    manifest: None,
                });
            }
        }
    }
    let source = source_entry(imported, &rel_text, &dir);
    let created = (!dest.exists()).then(|| dest.clone());
    // Another processor's build of a kernel already here: a new source of it.
    if let Some((m, k)) = existing.and_then(|m| same_program(m, imported).map(|k| (m, k))) {
        let text = insert_source(&m.text, k.line, &source);
        let manifest = write_manifest(
            manifest_path,
            text,
            &dest,
            &imported.bytes,
            created.is_some(),
        )?;
        return Ok(Added {
            outcome: Outcome::AddedSource {
                kernel: k.name.clone(),
                asm: rel,
            },
            created,
            manifest: Some(manifest),
        });
    }
    // A free kernel name: the recognized one, else with the processor appended, else numbered.
    let taken = |n: &str| {
        existing.is_some_and(|m| m.kernels.iter().any(|k| k.name.eq_ignore_ascii_case(n)))
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
    let mut entry = String::new();
    entry.push('\n');
    if let Some(comment) = imported
        .triton
        .as_ref()
        .and_then(|t| specialization_comment(existing, &t.kernel, &imported.from))
    {
        entry.push_str(&comment);
    }
    entry.push_str(&format!("[[kernel]]\nname = {}\n", quoted(&kernel)));
    if !imported.iree_executables.is_empty() {
        entry.push_str(&format!(
            "iree-executables = {}\n",
            list(&imported.iree_executables)
        ));
    }
    entry.push_str(&source);
    let mut text = match existing {
        Some(m) => m.text.clone(),
        None => NEW_MANIFEST.to_string(),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&entry);
    let manifest = write_manifest(
        manifest_path,
        text,
        &dest,
        &imported.bytes,
        created.is_some(),
    )?;
    Ok(Added {
        outcome: Outcome::Added { kernel, asm: rel },
        created,
        manifest: Some(manifest),
    })
}

/// The comment above a Triton kernel's `[[kernel]]` saying which
/// specialization it is (signature and block sizes, from the `.ttir` beside
/// `amdgcn`) and, for each kernel of `existing` annotated as another
/// specialization of the same Triton kernel, what differs from it.
pub(super) fn specialization_comment(
    existing: Option<&Manifest>,
    triton_kernel: &str,
    amdgcn: &Path,
) -> Option<String> {
    let spec = crate::ops::triton::specialization(amdgcn)?;
    let prefix = format!("# Triton specialization of `{triton_kernel}`: ");
    let mut out = format!("{prefix}{}\n", spec.describe());
    if let Some(m) = existing {
        let lines: Vec<&str> = m.text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let Some(other) = l.strip_prefix(&prefix) else {
                continue;
            };
            // The kernel the comment stands above: the next `name = …`.
            let Some(name) = lines[i + 1..]
                .iter()
                .take(4)
                .find_map(|n| n.trim().strip_prefix("name = "))
            else {
                continue;
            };
            let part = |d: &str, key: &str| {
                d.split("; ")
                    .find(|p| p.starts_with(key))
                    .unwrap_or("")
                    .to_string()
            };
            let mine = spec.describe();
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
            out.push_str(&format!("# differs from {name} in: {what}\n"));
        }
    }
    Some(out)
}

/// Write the asm `bytes` to `dest`, then `text` as the manifest once it is
/// known to load (it names the asm, which must exist for that): the
/// manifest it now is. On failure, an asm file it `created` is removed.
pub(super) fn write_manifest(
    manifest_path: &Path,
    text: String,
    dest: &Path,
    bytes: &[u8],
    created: bool,
) -> Result<Manifest, Diagnostics> {
    write_dump(dest, bytes)?;
    let written = Manifest::parse(&text, manifest_path).and_then(|m| {
        crate::base::output::write_atomic(manifest_path, text.as_bytes())
            .map_err(|e| io_error("write", manifest_path, e))?;
        Ok(m)
    });
    if written.is_err() && created {
        let _ = std::fs::remove_file(dest);
    }
    written
}

/// The manifest before an import, to restore it if the import fails.
pub(super) enum ManifestBefore {
    /// Its bytes.
    Bytes(Vec<u8>),
    /// No file (not even a dangling symlink) at its path.
    Absent,
    /// Unreadable: left alone.
    Unknown,
}

impl ManifestBefore {
    pub(super) fn read(path: &Path) -> ManifestBefore {
        match std::fs::read(path) {
            Ok(bytes) => ManifestBefore::Bytes(bytes),
            Err(_) if std::fs::symlink_metadata(path).is_err() => ManifestBefore::Absent,
            Err(_) => ManifestBefore::Unknown,
        }
    }
}

/// Undo an import that failed part-way: the manifest as it was (or no
/// manifest), and none of the asm files it created, nor the directories
/// left empty by their removal. Best effort: what cannot be undone stays.
pub(super) fn roll_back(
    manifest_path: &Path,
    manifest_before: ManifestBefore,
    created: &[PathBuf],
) {
    let _ = match manifest_before {
        ManifestBefore::Bytes(bytes) => crate::base::output::write_atomic(manifest_path, &bytes),
        ManifestBefore::Absent => std::fs::remove_file(manifest_path),
        ManifestBefore::Unknown => Ok(()),
    };
    let top = manifest_dir(manifest_path);
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
