//! Commands on one kernel of a manifest: `apply`, `objdiff`; and `iree-flags`.

use std::path::Path;

use super::{find_job, parse_target, scratch, Tools};
use crate::base::diag::{Diagnostic, Diagnostics};
use crate::base::document::Document;
use crate::config::manifest::Manifest;
use crate::ops::objdiff::ObjDiff;
use crate::pipeline;

/// What `gcn-patch apply` returns.
#[derive(Debug)]
pub struct Applied {
    /// The patched, retargeted asm.
    pub asm: Document,
    /// Notes from preparation.
    pub notes: Vec<Diagnostic>,
}

/// `gcn-patch apply KERNEL [--target T]`: the kernel's patched, retargeted
/// asm for T (default: the first target of its first source).
pub fn apply(
    manifest: &Path,
    kernel: &str,
    target: Option<&str>,
    tools: &Tools,
) -> Result<Applied, Diagnostics> {
    let m = Manifest::load(manifest)?;
    let ki = m.kernel_index(kernel)?;
    let target = target.map(parse_target).transpose()?;
    // As `build --target`: a target of a source's generation is built too.
    let plan = pipeline::plan(&m, target.as_slice())?;
    let job = find_job(&plan, ki, kernel, target.as_ref())?;
    let prepared = pipeline::prepare(&m, &plan, &job, tools.assembler_major(Some(&m)))?;
    Ok(Applied {
        asm: prepared.asm,
        notes: prepared.notes,
    })
}

/// `gcn-patch objdiff KERNEL --target T`: the job built from the unpatched
/// and the patched dump, disassembled and compared.
pub fn objdiff(
    manifest: &Path,
    kernel: &str,
    target: &str,
    tools: &Tools,
) -> Result<ObjDiff, Diagnostics> {
    let m = Manifest::load(manifest)?;
    let t = parse_target(target)?;
    let ki = m.kernel_index(kernel)?;
    let plan = pipeline::plan(&m, &[t])?;
    let job = find_job(&plan, ki, kernel, Some(&t))?;
    let tc = tools.find(Some(&m))?;
    let work = scratch()?;
    crate::ops::objdiff::objdiff(&m, &plan, &job, &tc, work.path())
}

/// `gcn-patch iree-flags --out DIR --target T`: the iree-compile flags that
/// substitute every IREE executable of the manifest built into DIR for T.
pub fn iree_flags(manifest: &Path, out: &Path, target: &str) -> Result<Vec<String>, Diagnostics> {
    let m = Manifest::load(manifest)?;
    let t = parse_target(target)?;
    crate::ops::install::iree_flags(&m, out, &t)
}
