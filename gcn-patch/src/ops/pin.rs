//! Pins: the sha256 of each dump, checked before any patch is applied, and
//! rewritten by `gcn-patch pin`.

use std::path::{Path, PathBuf};

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::hash::sha256_hex;
use crate::config::edit::ManifestEdit;
use crate::config::manifest::Manifest;

/// Re-pin every source of `kernel` in the manifest at `manifest_path`:
/// rewrite (or add, after `asm`) its `sha256 = "…"` values to the dumps'
/// current hashes, leaving the rest of the file as it was, comments and
/// layout included ([`ManifestEdit`]; atomic write). Returns
/// `(dump, old pin or "", new pin)` for each source.
pub fn pin(
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
