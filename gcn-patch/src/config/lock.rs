//! `kernels.lock`: what a build produced, for reproducible per-target builds.
//!
//! Written next to the manifest (`kernels.toml` → `kernels.lock`) by
//! `gcn-patch build`, and by gcn-build when asked (`Build::write_lock`,
//! `GCN_BUILD_WRITE_LOCK=1`; never in a packaged copy): per kernel × target the sha256 of the
//! patched, retargeted asm that was assembled and of the code object, plus the
//! toolchain identity (the first line of `clang --version`: no machine paths).
//! Entries are sorted by kernel then target; the file is TOML, meant for git.
//!
//! A build *locked* (`gcn-patch build --locked`, `Build::locked(true)`,
//! `GCN_BUILD_LOCKED=1`) never writes the lock; it fails with a per-entry diff
//! when an object it built is missing from the lock or has other hashes (a
//! changed patch, or a toolchain upgrade that changed bytes). A different
//! toolchain that produces the same bytes passes.
//!
//! An unlocked build updates the entries it built and keeps the others whose
//! kernel is still in the manifest (a build restricted to some targets does
//! not forget the rest).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting};
use crate::config::manifest::Manifest;

/// File name suffix: `<manifest stem>.lock`.
pub const EXTENSION: &str = "lock";

/// One kernel × target.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Entry {
    /// Kernel name.
    pub kernel: String,
    /// Target ID.
    pub target: String,
    /// sha256 of the patched, retargeted asm that was assembled.
    pub asm_sha256: String,
    /// sha256 of the code object.
    pub object_sha256: String,
}

/// A whole lock file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lock {
    /// Toolchain identity (first line of `clang --version`).
    pub toolchain: String,
    /// Entries keyed by (kernel, target): sorted.
    pub entries: BTreeMap<(String, String), Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawLock {
    toolchain: String,
    #[serde(default)]
    object: Vec<Entry>,
}

/// Where the lock of `manifest` lives: the manifest path with extension `.lock`.
pub fn path_for(manifest: &Path) -> PathBuf {
    manifest.with_extension(EXTENSION)
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

impl Lock {
    /// A lock of `entries` built with `toolchain`.
    pub fn new(toolchain: &str, entries: impl IntoIterator<Item = Entry>) -> Lock {
        Lock {
            toolchain: toolchain.to_string(),
            entries: entries
                .into_iter()
                .map(|e| ((e.kernel.clone(), e.target.clone()), e))
                .collect(),
        }
    }

    /// The file text: header comment, toolchain, one `[[object]]` per entry, sorted.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# kernels.lock: written by `gcn-patch build` and gcn-build. Commit it.\n\
             # `gcn-patch build --locked` (or GCN_BUILD_LOCKED=1) fails when a build would not reproduce it.\n",
        );
        out.push_str(&format!("toolchain = {}\n", quoted(&self.toolchain)));
        for e in self.entries.values() {
            out.push_str(&format!(
                "\n[[object]]\nkernel = {}\ntarget = {}\nasm-sha256 = {}\nobject-sha256 = {}\n",
                quoted(&e.kernel),
                quoted(&e.target),
                quoted(&e.asm_sha256),
                quoted(&e.object_sha256)
            ));
        }
        out
    }

    /// Parse a lock file's text.
    pub fn parse(text: &str, path: &Path) -> Result<Lock, Diagnostic> {
        let raw: RawLock = toml::from_str(text).map_err(|e| {
            Diagnostic::error(Code::LockInvalid, format!("cannot read `{}`: {}", path.display(), e.message()))
                .with_help("the lock is generated: delete it and run `gcn-patch build` (not locked) to write it again")
        })?;
        Ok(Lock::new(&raw.toolchain, raw.object))
    }

    /// Read the lock at `path`; `Ok(None)` if there is none.
    pub fn load(path: &Path) -> Result<Option<Lock>, Diagnostic> {
        match std::fs::read_to_string(path) {
            Ok(text) => Lock::parse(&text, path).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Diagnostic::error(
                Code::ReadFailed,
                format!("cannot read `{}`: {e}", path.display()),
            )
            .with_help("check the file's permissions")),
        }
    }

    /// `self` (what was just built) merged over `old`: old entries whose kernel
    /// is still in `manifest` and that were not rebuilt are kept.
    pub fn merged_over(&self, old: Option<&Lock>, manifest: &Manifest) -> Lock {
        let mut merged = self.clone();
        if let Some(old) = old {
            for (key, e) in &old.entries {
                if !merged.entries.contains_key(key) && manifest.kernel(&e.kernel).is_ok() {
                    merged.entries.insert(key.clone(), e.clone());
                }
            }
        }
        merged
    }

    /// Check that `self` (what was just built) reproduces `locked`: every
    /// entry present with the same hashes. The error lists every difference.
    pub fn check_reproduces(&self, locked: Option<&Lock>, path: &Path) -> Result<(), Diagnostics> {
        let shown = path.display();
        let Some(locked) = locked else {
            return Err(Diagnostic::error(
                Code::LockMissing,
                format!("there is no `{shown}` to reproduce"),
            )
            .with_help("build once, not locked, to write the lock, review it and commit it")
            .about(Setting::Locked)
            .into());
        };
        let mut diffs = Vec::new();
        for (key, e) in &self.entries {
            let what = format!("kernel `{}` for {}", key.0, key.1);
            match locked.entries.get(key) {
                None => diffs.push(format!("{what}: not in the lock (new kernel or target)")),
                Some(l) => {
                    if l.asm_sha256 != e.asm_sha256 {
                        diffs.push(format!(
                            "{what}: patched asm sha256 {} -> {} (a dump, patch or rule changed)",
                            l.asm_sha256, e.asm_sha256
                        ));
                    }
                    if l.object_sha256 != e.object_sha256 {
                        diffs.push(format!(
                            "{what}: code object sha256 {} -> {}",
                            l.object_sha256, e.object_sha256
                        ));
                    }
                }
            }
        }
        if diffs.is_empty() {
            return Ok(());
        }
        if locked.toolchain != self.toolchain {
            diffs.push(format!(
                "toolchain: {} -> {}",
                quoted(&locked.toolchain),
                quoted(&self.toolchain)
            ));
        }
        let mut d = Diagnostic::error(
            Code::LockMismatch,
            format!(
                "the build does not reproduce `{shown}` ({} difference(s))",
                diffs.len()
            ),
        );
        for line in diffs {
            d = d.with_note(line);
        }
        Err(d
            .with_help(format!(
                "if the change is intended, build once, not locked, to update `{shown}`, review its diff and commit it"
            ))
            .about(Setting::Locked)
            .into())
    }

    /// Write the lock atomically if its text changed.
    pub fn write(&self, path: &Path) -> Result<(), Diagnostic> {
        use crate::base::output::{write_if_changed, Durability};
        write_if_changed(path, self.render().as_bytes(), Durability::Synced)
            .map(drop)
            .map_err(|e| {
                Diagnostic::error(
                    Code::WriteFailed,
                    format!("cannot write `{}`: {e}", path.display()),
                )
                .with_help("the lock is written next to the manifest: make that directory writable")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(k: &str, t: &str, a: &str, o: &str) -> Entry {
        Entry {
            kernel: k.into(),
            target: t.into(),
            asm_sha256: a.into(),
            object_sha256: o.into(),
        }
    }

    #[test]
    fn renders_sorted_and_parses_back() {
        let lock = Lock::new(
            "clang version 22",
            [
                entry("b", "gfx942", "1", "2"),
                entry("a", "gfx90a", "3", "4"),
            ],
        );
        let text = lock.render();
        assert!(text.find("kernel = \"a\"").unwrap() < text.find("kernel = \"b\"").unwrap());
        assert_eq!(Lock::parse(&text, Path::new("k.lock")).unwrap(), lock);
    }

    #[test]
    fn locked_check_lists_every_difference() {
        let old = Lock::new("clang 22.0", [entry("a", "gfx942", "1", "2")]);
        let same_bytes_new_tool = Lock::new("clang 22.1", [entry("a", "gfx942", "1", "2")]);
        assert!(same_bytes_new_tool
            .check_reproduces(Some(&old), Path::new("k.lock"))
            .is_ok());
        let changed = Lock::new(
            "clang 22.0",
            [
                entry("a", "gfx942", "9", "8"),
                entry("b", "gfx942", "1", "2"),
            ],
        );
        let err = changed
            .check_reproduces(Some(&old), Path::new("k.lock"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("3 difference(s)"), "{err}");
        assert!(changed.check_reproduces(None, Path::new("k.lock")).is_err());
    }
}
