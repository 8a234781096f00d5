//! Demo package for gcn-patch: the patched IREE matmul and HIP-compiled
//! kernels from `kernels.toml`, embedded for every target by `build.rs`
//! (gcn-build) and selected at run time by [`gcn_embed`].
//!
//! ```no_run
//! let hsaco = gcn_patch_demo::MATMUL.select("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-").unwrap();
//! assert_eq!(hsaco.target, "gfx942");
//! ```
#![warn(missing_docs)]

gcn_embed::include_kernels!();

/// Find a kernel by its manifest name (a binary search of `KERNELS`).
pub fn kernel(name: &str) -> Option<&'static gcn_embed::Kernel> {
    KERNELS.by_name(name)
}
