//! Pins: the sha256 of each dump, checked before any patch is applied, and
//! rewritten by `gcn-patch pin`.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::hash::sha256_hex;
use crate::config::manifest::Manifest;

#[derive(Deserialize)]
struct PinManifest {
    #[serde(default)]
    kernel: Vec<PinKernel>,
}

#[derive(Deserialize)]
struct PinKernel {
    name: String,
    #[serde(default)]
    source: Vec<PinSource>,
}

#[derive(Deserialize)]
struct PinSource {
    asm: Spanned<String>,
    sha256: Option<Spanned<String>>,
}

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
/// byte-identical (atomic write). Returns each source's old and new pin.
pub fn pin(opts: &PinOptions) -> Result<Vec<Repinned>, Diagnostics> {
    Ok(repin(&opts.manifest, &opts.kernel)?
        .into_iter()
        .map(|(dump, old, new)| Repinned { dump, old, new })
        .collect())
}

/// [`pin()`]: `(dump, old pin or "", new pin)` for each source.
fn repin(
    manifest_path: &Path,
    kernel: &str,
) -> Result<Vec<(PathBuf, String, String)>, Diagnostics> {
    // Malformed or missing pins are what pin repairs: not errors here.
    let manifest = Manifest::load_for_pin(manifest_path)?;
    let spec = manifest.kernel(kernel)?;
    let text = &manifest.text;
    let raw: PinManifest = toml::from_str(text).map_err(|e| {
        Diagnostic::error(
            Code::ManifestInvalid,
            format!("invalid manifest: {}", e.message()),
        )
    })?;
    let raw_kernel = raw
        .kernel
        .iter()
        .find(|k| k.name == kernel)
        .ok_or_else(|| {
            Diagnostic::error(
                Code::ManifestChanged,
                format!("kernel `{kernel}` vanished from the manifest"),
            )
        })?;
    // Edits: (byte range, replacement), applied back to front.
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut out = Vec::new();
    for (rs, s) in raw_kernel.source.iter().zip(&spec.sources) {
        let bytes = std::fs::read(&s.asm).map_err(|e| {
            Diagnostic::error(
                Code::ReadFailed,
                format!("cannot read dump `{}`: {e}", s.rel.display()),
            )
        })?;
        let new = sha256_hex(&bytes);
        match &rs.sha256 {
            Some(old) => {
                if old.get_ref() != &new {
                    edits.push((old.span(), format!("\"{new}\"")));
                }
                out.push((s.asm.clone(), old.get_ref().clone(), new));
            }
            None => {
                let end = rs.asm.span().end;
                let eol = text[end..].find('\n').map_or(text.len(), |i| end + i);
                let nl = if text[..eol].ends_with('\r') {
                    "\r\n"
                } else {
                    "\n"
                };
                let at = if text[..eol].ends_with('\r') {
                    eol - 1
                } else {
                    eol
                };
                let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1);
                let indent: String = text[line_start..]
                    .chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .collect();
                let _ = at;
                let insert_at = if eol < text.len() { eol + 1 } else { eol };
                let prefix = if eol == text.len() { nl } else { "" };
                edits.push((
                    insert_at..insert_at,
                    format!("{prefix}{indent}sha256 = \"{new}\"{nl}"),
                ));
                out.push((s.asm.clone(), String::new(), new));
            }
        }
    }
    if edits.is_empty() {
        return Ok(out);
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
    let mut new_text = text.clone();
    for (r, s) in edits {
        new_text.replace_range(r, &s);
    }
    crate::base::output::write_atomic(manifest_path, new_text.as_bytes()).map_err(|e| {
        Diagnostic::error(
            Code::WriteFailed,
            format!("cannot write {}: {e}", manifest_path.display()),
        )
        .with_help("check that the manifest's directory is writable")
    })?;
    Ok(out)
}
