//! `gcn-patch iree-flags`: the `iree-compile` flags that substitute a
//! manifest's built executables.

use std::path::PathBuf;

use gcn_embed::TargetId;

use crate::base::diag::Diagnostics;
use crate::config::manifest::Manifest;

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
