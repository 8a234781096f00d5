//! `gcn-patch import`: dumps and binaries under a manifest.

use std::path::{Path, PathBuf};

use crate::base::diag::Diagnostics;
use crate::ops::import::{ImportOptions, Report};
use crate::ops::{env, Tools};

/// `gcn-patch import PATH...`: copy dumps (or lift binaries) under `asm/`,
/// pin them and add them to the manifest. `triton_caches` are searched for
/// Triton launch metadata (default: `$TRITON_CACHE_DIR`, else
/// `~/.triton/cache`); binaries are lifted with the toolchain `tools` finds,
/// `jobs` at once (default: the number of CPUs).
pub fn import(
    manifest: &Path,
    paths: &[PathBuf],
    triton_caches: Vec<PathBuf>,
    jobs: Option<usize>,
    tools: &Tools,
) -> Result<Report, Diagnostics> {
    let mut options = ImportOptions::with_triton_caches(triton_caches, &env);
    options.jobs = jobs;
    // Binaries are lifted with the toolchain's LLVM tools (found only when one is given).
    if paths.iter().any(|p| crate::ops::import::is_binary(p)) {
        options.toolchain = Some(tools.find(None)?);
    }
    crate::ops::import::import_with(manifest, paths, &options)
}
