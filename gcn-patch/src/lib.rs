//! # gcn-patch
//!
//! Lossless AMDGPU assembly model, declarative patches, retargeting, checks and
//! the real LLVM toolchain path (clang + ld.lld), used by the `gcn-patch` CLI
//! and by `gcn-build` from build scripts.
//!
//! The folders are the layers; each uses only its own layer and the layers
//! above it in this table, and no two folders use each other
//! (`tests/module_graph.rs` holds the rule):
//!
//! | layer | what it holds |
//! |---|---|
//! | [`base`] | the line model ([`base::document`], [`base::parse`]), ISA facts ([`base::isa`]), diagnostics ([`base::diag`]), provenance, atomic output, the job runner ([`base::jobs`]), content hashes ([`base::hash`]) |
//! | [`config`] | `kernels.toml` ([`config::manifest`]) with its rule schema ([`config::rules`]), policies ([`config::policy`]) and Triton record ([`config::triton`]); `kernels.lock` ([`config::lock`]), accepted findings ([`config::accept`]) |
//! | [`stage`] | the stages: [`stage::patch`], [`stage::retarget`], [`stage::check`], [`stage::assemble`], `stage::undefined`, [`stage::link`], [`stage::verify`]; [`stage::lift`] (code object → asm) and the LLVM [`stage::toolchain`] they run |
//! | [`pipeline`] | one kernel × target job through the stages, every job of a manifest in parallel ([`pipeline::build`](mod@pipeline::build)), the content-addressed object [`pipeline::cache`] (gcn-build and the CLI share it) |
//! | [`ops`] | one operation per `gcn-patch` command (import, pin, edit/save, check, lint, build, objdiff, install, Triton overrides, run, …), taking options and returning a typed report without printing |
//!
//! The binary only parses arguments, calls [`ops`] and renders reports; other
//! tools (an xtask, a tuner's driver) call the same operations.
//!
//! **Process-wide effects.** The first external tool run installs handlers
//! for `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGQUIT` (only where the signal is
//! still at its default action) that kill running LLVM tools and then die of
//! the signal as before. A program embedding the library that handles those
//! signals itself opts out with
//! [`stage::toolchain::process::set_signal_handlers`]`(false)` and calls
//! [`stage::toolchain::process::kill_running_tools`] from its own handler. The
//! environment variable `GCN_PATCH_TEST_PANIC` is a test-only hook
//! ([`base::jobs::test_panic_point`]); leave it unset.
#![warn(missing_docs)]

pub mod base;
pub mod config;
pub mod ops;
pub mod pipeline;
pub mod stage;

/// Internals that gcn-patch's own integration tests and fuzz targets reach
/// and users should not: hidden from the documentation, not part of the
/// API, changed or removed in any release without notice.
#[doc(hidden)]
pub mod support {
    /// Control-flow findings (`stage::check::control`), before they are
    /// diagnostics.
    pub use crate::stage::check::control::{findings, Leak};
    /// Reading code objects and containers (`stage::lift`'s readers).
    #[cfg(feature = "lift")]
    pub mod lift {
        pub use crate::stage::lift::container::{code_objects, Kind};
        pub use crate::stage::lift::elf::read;
        pub use crate::stage::lift::metadata::canonical;
    }
    /// The wait-counter analysis' model, graph and suggestions
    /// (`stage::check::hazard`'s parts).
    pub mod hazard {
        pub use crate::stage::check::hazard::cfg::Node;
        pub use crate::stage::check::hazard::model::{units, Kind};
        pub use crate::stage::check::hazard::suggest::suggest;
    }
    /// One unified diff applied to a document (`stage::patch::diff`).
    pub use crate::stage::patch::diff::apply_diff_text;
}
