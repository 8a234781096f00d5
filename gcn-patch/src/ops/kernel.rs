//! Commands on one kernel of a manifest: `apply`, `objdiff`; and `iree-flags`.

use std::path::PathBuf;

use gcn_embed::TargetId;

use super::{find_job, scratch, Tools};
use crate::base::diag::{Diagnostic, Diagnostics};
use crate::base::document::Document;
use crate::config::manifest::Manifest;
pub use crate::ops::objdiff::ObjDiff;
use crate::pipeline;

/// What `gcn-patch apply` returns.
#[derive(Debug)]
pub struct Applied {
    /// The patched, retargeted asm.
    pub asm: Document,
    /// Notes from preparation.
    pub notes: Vec<Diagnostic>,
}

/// What `gcn-patch apply` is asked to do.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
    /// The target (default: the first target of the kernel's first source).
    pub target: Option<TargetId>,
    /// The LLVM tools (their assembler's version decides the skew normalization).
    pub tools: Tools,
}

/// `gcn-patch apply KERNEL [--target T]`: the kernel's patched, retargeted
/// asm for T (default: the first target of its first source).
pub fn apply(opts: &ApplyOptions) -> Result<Applied, Diagnostics> {
    let m = Manifest::load(&opts.manifest)?;
    let kernel = &opts.kernel;
    let ki = m.kernel_index(kernel)?;
    let target = opts.target;
    // As `build --target`: a target of a source's generation is built too.
    let plan = pipeline::plan(&m, target.as_slice())?;
    let job = find_job(&plan, ki, kernel, target.as_ref())?;
    let prepared = pipeline::prepare(&m, &plan, &job, opts.tools.assembler_major(Some(&m)))?;
    Ok(Applied {
        asm: prepared.asm,
        notes: prepared.notes,
    })
}

/// What `gcn-patch objdiff` is asked to do.
#[derive(Debug, Clone)]
pub struct ObjdiffOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
    /// The target whose job is built twice.
    pub target: TargetId,
    /// The LLVM tools.
    pub tools: Tools,
}

/// `gcn-patch objdiff KERNEL --target T`: the job built from the unpatched
/// and the patched dump, disassembled and compared.
pub fn objdiff(opts: &ObjdiffOptions) -> Result<ObjDiff, Diagnostics> {
    let m = Manifest::load(&opts.manifest)?;
    let t = opts.target;
    let kernel = &opts.kernel;
    let ki = m.kernel_index(kernel)?;
    let plan = pipeline::plan(&m, &[t])?;
    let job = find_job(&plan, ki, kernel, Some(&t))?;
    let tc = opts.tools.find(Some(&m))?;
    let work = scratch()?;
    crate::ops::objdiff::objdiff(&m, &plan, &job, &tc, work.path())
}

/// What `gcn-patch iree-flags` is asked for.
#[derive(Debug, Clone)]
pub struct IreeFlagsOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The output directory of a `gcn-patch build` of it.
    pub out: PathBuf,
    /// The target whose objects substitute the executables.
    pub target: TargetId,
}

/// `gcn-patch iree-flags --out DIR --target T`: the iree-compile flags that
/// substitute every IREE executable of the manifest built into DIR for T.
pub fn iree_flags(opts: &IreeFlagsOptions) -> Result<Vec<String>, Diagnostics> {
    let m = Manifest::load(&opts.manifest)?;
    crate::ops::install::iree_flags(&m, &opts.out, &opts.target)
}
