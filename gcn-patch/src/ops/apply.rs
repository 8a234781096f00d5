//! `gcn-patch apply`: one kernel's patched, retargeted asm for one target.

use std::path::PathBuf;

use gcn_embed::TargetId;

use super::{find_job, Tools};
use crate::base::diag::{Diagnostic, Diagnostics};
use crate::base::document::Document;
use crate::config::manifest::Manifest;
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
