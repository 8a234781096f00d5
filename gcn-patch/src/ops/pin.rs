//! Pins: the sha256 of each dump, checked before any patch is applied, and
//! rewritten by `gcn-patch pin`.

use std::path::{Path, PathBuf};

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::hash::sha256_hex;
use crate::config::edit::ManifestEdit;
use crate::config::manifest::Manifest;

/// What `gcn-patch pin` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct PinOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
}

/// One source [`pin()`] re-pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repinned {
    /// The dump, as the manifest names it.
    pub dump: PathBuf,
    /// The pin it had (empty when it had none).
    pub old: String,
    /// Its pin now: the dump's sha256.
    pub new: String,
}

/// Re-pin every source of a kernel: rewrite (or add) its `sha256 = "…"`
/// values to the dumps' current hashes, leaving the rest of the manifest
/// as it was, comments and layout included ([`ManifestEdit`]; atomic write). Returns each source's old and new pin.
pub fn pin(opts: &PinOptions) -> Result<Vec<Repinned>, Diagnostics> {
    Ok(repin(&opts.manifest, &opts.kernel)?
        .into_iter()
        .map(|(dump, old, new)| Repinned { dump, old, new })
        .collect())
}

/// [`pin()`]: `(dump, old pin or "", new pin)` for each source; a source
/// without a pin gets one after its `asm`.
fn repin(
    manifest_path: &Path,
    kernel: &str,
) -> Result<Vec<(PathBuf, String, String)>, Diagnostics> {
    // Malformed or missing pins are what pin repairs: not errors here.
    let manifest = Manifest::load_for_pin(manifest_path)?;
    let ki = manifest.kernel_index(kernel)?;
    let spec = &manifest.kernels[ki];
    let mut edit = ManifestEdit::of(&manifest)?;
    let mut changed = false;
    let mut out = Vec::new();
    for (si, s) in spec.sources.iter().enumerate() {
        let bytes = std::fs::read(&s.asm).map_err(|e| {
            Diagnostic::error(
                Code::ReadFailed,
                format!("cannot read dump `{}`: {e}", s.rel.display()),
            )
        })?;
        let new = sha256_hex(&bytes);
        // As written: a malformed pin too.
        let old = edit.pin(ki, si).unwrap_or_default();
        if old != new {
            edit.set_pin(ki, si, &new)?;
            changed = true;
        }
        out.push((s.asm.clone(), old, new));
    }
    if !changed {
        return Ok(out);
    }
    crate::base::output::write_atomic(manifest_path, edit.text().as_bytes()).map_err(|e| {
        Diagnostic::error(
            Code::WriteFailed,
            format!("cannot write {}: {e}", manifest_path.display()),
        )
        .with_help("check that the manifest's directory is writable")
    })?;
    Ok(out)
}
