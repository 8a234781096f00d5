//! # gcn-patch
//!
//! Lossless AMDGPU assembly model, declarative patches, retargeting, checks and
//! the real LLVM toolchain path (clang + ld.lld), used by the `gcn-patch` CLI
//! and by `gcn-build` from build scripts.
//!
//! The pipeline stages, in the order a kernel goes through them:
//!
//! | stage | module | what it does |
//! |---|---|---|
//! | parse | [`parse`] | lossless line model of a dumped `.s`/`.rocmasm`/`.amdgcn` |
//! | manifest | [`manifest`] | `kernels.toml` schema, sha256 pins, path checks |
//! | patch | [`patch`] | unified diffs and structured rules, with [`provenance`] |
//! | retarget | [`retarget`] | rewrite for a target ID, normalize toolchain skew |
//! | check | [`check`] | dump structure, register budget, occupancy, wait counters, hazards, Triton launch limits |
//! | toolchain | [`toolchain`] | find clang/ld.lld with AMDGPU support, run them with time and output bounds |
//! | assemble | [`assemble`] | `.s` → `.o` with llvm-mc or clang, through the bounded [`toolchain::run`] |
//! | undefined | [`undefined`] | undefined symbols reported at the line naming them, before linking |
//! | link | [`link`] | `.o` → `.hsaco` through `ld.lld -shared` |
//! | verify | [`verify`] | ELF checks of the code object |
//!
//! [`pipeline`] ties the stages together for one kernel × target job;
//! [`build`] runs every job of a manifest in parallel ([`jobs`]) through the
//! content-addressed object [`cache`] (gcn-build and the CLI share it).
//!
//! Workflows around the pipeline, one per command family:
//!
//! | workflow | module | what it does |
//! |---|---|---|
//! | lift | [`lift`] | code object (or bundle, fat binary, `.vmfb`) → asm that rebuilds byte-identically (`gcn-patch lift`) |
//! | import | [`import`] | bring dumps and binaries under a manifest (`gcn-patch import`) |
//! | lock | [`lock`] | `kernels.lock`: asm and object sha256 per kernel × target |
//! | install | [`install`] | output layout `DIR/<target>/<exec>.hsaco`, `iree-compile` flags, Triton override directory |
//! | triton | [`triton`] | Triton's dump, cache and override layouts (`import`, `triton-override`) |
//! | objdiff | [`objdiff`] | disassembly diff of unpatched vs patched code objects (`llvm-objdump`) |
//! | accept | [`accept`] | acknowledged findings per kernel (`gcn-patch accept`), left out of builds |
//!
//! [`ops`] holds the commands: one operation per `gcn-patch` command, taking
//! options and returning a typed report without printing; the binary only
//! parses arguments and renders reports, and other tools can call the same
//! operations.
//!
//! Below the stages: [`document`] is the one line model (text, kind, origin)
//! and edit API they share; [`isa`] holds per-generation instruction-set facts
//! (wait counters, register granules, occupancy inputs) shared by patch,
//! retarget and check; [`diag`] renders rustc-style diagnostics; [`output`]
//! writes files atomically.
//!
//! **Process-wide effects.** The first external tool run installs handlers
//! for `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGQUIT` (only where the signal is
//! still at its default action) that kill running LLVM tools and then die of
//! the signal as before. A program embedding the library that handles those
//! signals itself opts out with
//! [`toolchain::run::set_signal_handlers`]`(false)` and calls
//! [`toolchain::run::kill_running_tools`] from its own handler. The
//! environment variable `GCN_PATCH_TEST_PANIC` is a test-only hook
//! ([`jobs::test_panic_point`]); leave it unset.
#![warn(missing_docs)]
// `Diagnostic` is every stage's error type; it is large by design and errors are cold.
#![allow(clippy::result_large_err)]

pub mod accept;
pub mod assemble;
pub mod build;
pub mod cache;
pub mod check;
pub mod diag;
pub mod document;
pub mod import;
pub mod install;
pub mod isa;
pub mod jobs;
pub mod lift;
pub mod link;
pub mod lock;
pub mod manifest;
pub mod objdiff;
pub mod ops;
pub mod output;
pub mod parse;
pub mod patch;
pub mod pipeline;
pub mod provenance;
pub mod retarget;
pub mod toolchain;
pub mod triton;
pub mod undefined;
pub mod verify;
