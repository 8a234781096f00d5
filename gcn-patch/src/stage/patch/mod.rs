//! Patch stage: pin check, unified diffs, structured rules — with provenance.
//!
//! [`apply`] reads a source's dump, refuses it if its bytes do not match the
//! pin ([`crate::ops::pin::pin()`] rewrites pins), applies its unified diffs in order
//! (`diff`), then its structured rules in order (`rules`). Every output
//! line carries an [`Origin`](crate::base::provenance::Origin):
//! `Source { file, line }` for dump lines (file as written in the manifest,
//! relative to [`Manifest::dir`]), `Patch { file, hunk, line }` for `+` lines
//! (patch file relative to the manifest dir, 1-based hunk, line of the `+`
//! line in the patch file), `Rule(RuleOrigin { manifest, kernel, index, what })` for
//! lines written or moved by a rule (`manifest` is the manifest's file name).

pub(crate) mod diff;
pub(crate) mod rules;

use std::borrow::Cow;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Location};
use crate::base::document::Document;
use crate::base::hash::sha256_hex;
use crate::config::manifest::{KernelSpec, Manifest, SourceSpec, Src};

/// Pin check → diffs in order → rules in order.
pub fn apply(
    manifest: &Manifest,
    kernel: &KernelSpec,
    source: &SourceSpec,
) -> Result<Document, Diagnostics> {
    apply_keeping_original(manifest, kernel, source).map(|(_, patched)| patched)
}

/// Like [`apply`], also returning the dump as read (before any patch), so
/// callers that compare the two do not read the file again.
pub fn apply_keeping_original(
    manifest: &Manifest,
    kernel: &KernelSpec,
    source: &SourceSpec,
) -> Result<(Document, Document), Diagnostics> {
    let (original, mut t) = read_and_diff(manifest, kernel, source)?;
    let context = context(kernel, source);
    let ctx = rules::Ctx {
        manifest: &manifest.shown(),
        kernel: &kernel.name,
        generations: source
            .targets
            .iter()
            .map(|t| t.processor.generation)
            .collect(),
    };
    rules::apply_rules(&mut t, &source.rules, &ctx).map_err(|d| d.with_note(context))?;
    Ok((original, t))
}

fn context(kernel: &KernelSpec, source: &SourceSpec) -> String {
    format!(
        "while patching kernel `{}` (dump {})",
        kernel.name,
        source.rel.display()
    )
}

/// The dump with its unified diffs applied, without the rules: the text a new
/// diff of the source is written against ([`crate::ops::quilt`]).
pub fn apply_diffs(
    manifest: &Manifest,
    kernel: &KernelSpec,
    source: &SourceSpec,
) -> Result<Document, Diagnostics> {
    read_and_diff(manifest, kernel, source).map(|(_, t)| t)
}

/// What [`apply`] checks, keeping nothing: the dump's pin and text and, for
/// a source with diffs or rules, every one of them. A source with neither is
/// read and not parsed ([`apply`] of it fails only where reading does).
pub fn check(
    manifest: &Manifest,
    kernel: &KernelSpec,
    source: &SourceSpec,
) -> Result<(), Diagnostics> {
    if source.patches.is_empty() && source.rules.is_empty() {
        read_text(manifest, kernel, source).map(drop)
    } else {
        apply_keeping_original(manifest, kernel, source).map(drop)
    }
}

/// Pin check, then the diffs in order: (dump as read, after the diffs).
fn read_and_diff(
    manifest: &Manifest,
    kernel: &KernelSpec,
    source: &SourceSpec,
) -> Result<(Document, Document), Diagnostics> {
    let text = read_text(manifest, kernel, source)?;
    let context = context(kernel, source);
    let original = Document::from_source(&text, &source.rel);
    drop(text);
    // The first diff copies what it keeps of the original; later ones move.
    let mut t = Cow::Borrowed(&original);
    for pf in &source.patches {
        let _doing = crate::base::jobs::doing(
            format!("applying patch `{}`", pf.rel.display()),
            Some(Location::line(&pf.rel, 1, None)),
        );
        t = Cow::Owned(
            diff::apply_diff(t, pf, &source.rel).map_err(|d| d.with_note(context.clone()))?,
        );
    }
    let t = t.into_owned();
    Ok((original, t))
}

/// The dump's text: read, its pin checked, UTF-8.
fn read_text(
    manifest: &Manifest,
    kernel: &KernelSpec,
    source: &SourceSpec,
) -> Result<String, Diagnostics> {
    let bytes = std::fs::read(&source.asm).map_err(|e| {
        Diagnostic::error(
            Code::ReadFailed,
            format!("cannot read dump `{}`: {e}", source.rel.display()),
        )
        .with_note(context(kernel, source))
    })?;
    check_pin(manifest, &kernel.name, source, &bytes)?;
    Ok(String::from_utf8(bytes).map_err(|e| {
        Diagnostic::error(
            Code::NotUtf8,
            format!("dump `{}` is not UTF-8 text: {e}", source.rel.display()),
        )
        .with_help("name the assembly (.s/.rocmasm) file, not a binary")
    })?)
}

/// Refuse a dump whose bytes do not match its pin.
fn check_pin(
    manifest: &Manifest,
    kernel: &str,
    source: &SourceSpec,
    bytes: &[u8],
) -> Result<(), Diagnostic> {
    let Some(expected) = &source.sha256 else {
        return Ok(());
    };
    let actual = sha256_hex(bytes);
    if &actual == expected {
        return Ok(());
    }
    let src = Src::new(&manifest.text, manifest.shown());
    let line_start: usize = manifest
        .text
        .split_inclusive('\n')
        .take(source.sha256_line - 1)
        .map(str::len)
        .sum();
    let line = manifest.text[line_start..].lines().next().unwrap_or("");
    let col = line.find(expected.as_str()).unwrap_or(0);
    Err(Diagnostic::error(Code::PinMismatch, format!(
        "dump `{}` changed since its patches were written (a patch made against one compilation must not be applied to another)",
        source.rel.display()
    ))
    .at(src.loc(line_start + col..line_start + col + expected.len()).with_label("pinned sha256"))
    .with_note(format!("kernel `{kernel}`: expected sha256 {expected}"))
    .with_note(format!("actual sha256 of {}: {actual}", source.rel.display()))
    .with_help(format!(
        "re-check the patches against the new dump, then run `gcn-patch pin {kernel} --manifest {}`",
        manifest.path.display()
    )))
}
