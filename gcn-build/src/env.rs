//! Every environment variable gcn-build reads goes through [`Env::get`], which
//! also tells Cargo to rerun the build script when that variable changes.
//!
//! | variable | used for |
//! |---|---|
//! | `OUT_DIR` | where code objects and `gcn_kernels.rs` are written (set by Cargo) |
//! | `NUM_JOBS` | upper bound on parallel assembler jobs when there is no jobserver (set by Cargo) |
//! | `GCN_PATCH_LLVM_BIN` | directory holding `clang` and `ld.lld` |
//! | `GCN_PATCH_CLANG`, `GCN_PATCH_LD_LLD` | explicit tool paths |
//! | `CC_amdgcn_amd_amdhsa` | cc-rs style per-target compiler override (a clang) |
//! | `ROCM_PATH` | ROCm install: `$ROCM_PATH/llvm/bin`, `$ROCM_PATH/lib/llvm/bin` |
//! | `PATH` | versioned (`clang-22`) and plain tool names |
//! | `GCN_PATCH_TOOL_TIMEOUT` | time limit of every clang/ld.lld run, seconds (default 300) |
//!
//! The jobserver variables (`CARGO_MAKEFLAGS`, `MAKEFLAGS`, `MFLAGS`) are read
//! by the `jobserver` crate; they do not change outputs and are not tracked.

use std::cell::RefCell;
use std::collections::BTreeSet;

/// The one reader of environment variables.
#[derive(Debug, Default)]
pub struct Env {
    /// Print `cargo:rerun-if-env-changed` lines (true inside build scripts).
    pub(crate) cargo_metadata: bool,
    seen: RefCell<BTreeSet<String>>,
}

impl Env {
    /// A reader; `cargo_metadata` controls the `cargo:` lines.
    pub fn new(cargo_metadata: bool) -> Self {
        Env {
            cargo_metadata,
            seen: RefCell::new(BTreeSet::new()),
        }
    }

    /// Read `name`, announcing it to Cargo once.
    pub fn get(&self, name: &str) -> Option<String> {
        if self.seen.borrow_mut().insert(name.to_owned()) && self.cargo_metadata {
            println!("cargo:rerun-if-env-changed={name}");
        }
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }

    /// The names read so far, sorted.
    pub fn read_so_far(&self) -> Vec<String> {
        self.seen.borrow().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_each_variable_once() {
        let env = Env::new(false);
        let _ = env.get("GCN_BUILD_TEST_UNSET_VARIABLE");
        let _ = env.get("PATH");
        let _ = env.get("PATH");
        assert_eq!(
            env.read_so_far(),
            vec!["GCN_BUILD_TEST_UNSET_VARIABLE", "PATH"]
        );
        assert!(env.get("GCN_BUILD_TEST_UNSET_VARIABLE").is_none());
    }
}
