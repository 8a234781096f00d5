//! The CLI's commands as library operations (as `cargo::ops` is to cargo).
//!
//! Each command is a function that takes its options and returns a typed
//! report; none prints. The `gcn-patch` binary parses arguments, calls one of
//! these and renders what it returns, so another front end (an xtask, a
//! Python wrapper, a tuner's driver) gets exactly the same behaviour.
//!
//! Options are typed: targets are [`TargetId`]s (the binary parses
//! `--target` with [`parse_target`], a list of targets and families with
//! [`expand_targets`]), choices are enums, paths are owned fields of the
//! options struct. The options struct of command `x` is `XOptions`, or
//! `XRequest` where the module has another `XOptions` already (the build
//! engine's, lift's). A diagnostic about one of the options names it with a
//! [`Setting`] (never with a flag): the binary names its flag.
//!
//! | command | operation | options |
//! |---|---|---|
//! | `retarget`, `assemble` | [`asm::retarget`], [`asm::assemble`] | [`asm::RetargetOptions`], [`asm::AssembleOptions`] |
//! | `apply` | [`apply::apply`] | [`apply::ApplyOptions`] |
//! | `objdiff` | [`objdiff::objdiff`] | [`objdiff::ObjdiffOptions`] |
//! | `iree-flags` | [`iree::iree_flags`] | [`iree::IreeFlagsOptions`] |
//! | `check` | [`check::check`] | [`check::CheckOptions`] |
//! | `lint` | [`lint::lint`] | [`lint::LintOptions`] |
//! | `build`, `triton-override` | [`build::build`] | [`build::BuildRequest`] |
//! | `lift`, `import` (feature `lift`) | `lift::lift`, `import::import` | `lift::LiftRequest`, `import::ImportOptions` |
//! | `pin` (feature `edit`) | [`crate::ops::pin::pin()`] | [`pin::PinOptions`] |
//! | `edit`, `save`, `patches`, `drop` (feature `edit`) | [`crate::ops::quilt::edit`], [`crate::ops::quilt::save`], [`crate::ops::quilt::list`], [`crate::ops::quilt::drop`] | [`quilt::EditOptions`], [`quilt::SaveOptions`], [`quilt::ListOptions`], [`quilt::DropOptions`] |
//! | `accept` (feature `edit`) | [`accept::accept`] | [`accept::AcceptOptions`] |
//! | `targets` | [`targets::targets`] | none |
//! | `run` (feature `cli`) | `run::run` (the emulator, crate `gcn-emu`); `run::unsupported` (`--list-unsupported`) | `run::RunOptions` |
//! | `profile` (feature `cli`) | `profile::profile` (the emulator under `gcn_emu::profile`: counters and a predicted time); `emulate::profile` (a manifest kernel, unpatched and patched, in `compare`'s launch loop); `profile::ReportFiles::write`/`write_declared` (`--json`, `--trace`, `--html`, `--annotate`) | `profile::ProfileOptions`, `profile::ReportFiles` |
//! | `compare`, `test` (feature `cli`) | `emulate::compare`, `emulate::test`, `emulate::outputs` (launches declared in `kernels.toml`, run in the emulator; `outputs`: the buffers after each launch of the patched object) | `emulate::CompareOptions`, `emulate::TestOptions` |
//!
//! Environment variables are read through [`env()`] only.

#[cfg(feature = "edit")]
pub mod accept;
pub mod apply;
pub mod asm;
pub mod build;
pub mod check;
#[cfg(feature = "cli")]
pub mod emulate;
#[cfg(feature = "lift")]
pub mod import;
pub(crate) mod install;
pub mod iree;
#[cfg(feature = "lift")]
pub mod lift;
pub mod lint;
pub mod notes;
pub mod objdiff;
#[cfg(feature = "edit")]
pub mod pin;
#[cfg(feature = "cli")]
pub mod profile;
#[cfg(feature = "edit")]
pub mod quilt;
#[cfg(feature = "cli")]
pub mod run;
pub mod targets;

use std::path::{Path, PathBuf};
use std::time::Duration;

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting};
use crate::base::document::Document;
use crate::config::manifest::Manifest;
use crate::pipeline::engine::{Engine, EngineConfig};
use crate::pipeline::{Job, Plan};
use crate::stage::toolchain::{Toolchain, ToolchainConfig};

pub use crate::base::jobs::{catch, Panicked};
/// How the long operations (build, check, import) report their progress.
pub use crate::base::progress;
pub use crate::pipeline::label;
pub use crate::stage::toolchain::process::parse_timeout;

/// The one place the operations read the process environment.
pub fn env(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// Where the LLVM tools come from, as the CLI's `--llvm-bin` and
/// `--tool-timeout` say (both optional).
#[derive(Debug, Clone, Default)]
pub struct Tools {
    /// Directory holding clang and ld.lld (default: the manifest's
    /// `defaults.llvm`, then the search described in docs/src/reference/toolchain.md).
    pub llvm_bin: Option<PathBuf>,
    /// Time limit of every tool run (default 300 s or `GCN_PATCH_TOOL_TIMEOUT`).
    pub tool_timeout: Option<Duration>,
}

impl Tools {
    /// Find the toolchain; the manifest's `defaults.llvm` applies when no
    /// directory was given.
    pub fn find(&self, manifest: Option<&Manifest>) -> Result<Toolchain, Diagnostics> {
        let mut config = self.config();
        if config.llvm_bin.is_none() {
            config.llvm_bin = manifest.and_then(|m| m.defaults.llvm.clone());
        }
        Toolchain::find(&config, &env).map_err(Diagnostics::from)
    }

    /// How these settings find the toolchain.
    pub fn config(&self) -> ToolchainConfig {
        ToolchainConfig {
            llvm_bin: self.llvm_bin.clone(),
            timeout: self.tool_timeout,
            ..ToolchainConfig::default()
        }
    }

    /// Set up the build engine with these tools, `jobs` at once, its
    /// state (local cache, scratch) under `state_dir`: the setup gcn-build
    /// does too ([`Engine::new`]).
    pub(crate) fn engine(
        &self,
        manifest: &Manifest,
        jobs: Option<usize>,
        state_dir: &Path,
    ) -> Result<Engine, Diagnostics> {
        let config = EngineConfig {
            toolchain: self.config(),
            jobs,
            shared_cache: None,
            state_dir: state_dir.to_path_buf(),
        };
        Engine::new(&config, Some(manifest), &env)
    }

    /// LLVM major of the assembler, for skew normalization: the toolchain's
    /// when one is found, else 22 (the pinned one).
    pub fn assembler_major(&self, manifest: Option<&Manifest>) -> u32 {
        self.find(manifest).map(|t| t.version.major).unwrap_or(22)
    }
}

/// A `--target` value as a target ID.
pub fn parse_target(spec: &str) -> Result<TargetId, Diagnostics> {
    TargetId::parse(spec).map_err(|e| {
        Diagnostic::error(Code::InvalidTarget, e.to_string())
            .about(Setting::Target)
            .into()
    })
}

/// Target IDs and family names (`gfx942`, `gfx9-4-generic`, `therock-gfx94x`)
/// as the target IDs they stand for, in order, each once.
pub fn expand_targets<S: AsRef<str>>(specs: &[S]) -> Result<Vec<TargetId>, Diagnostics> {
    let mut out: Vec<TargetId> = Vec::new();
    for spec in specs {
        let expanded = gcn_embed::family::expand(spec.as_ref()).map_err(|e| {
            Diagnostics::from(
                Diagnostic::error(Code::InvalidTarget, e.to_string()).about(Setting::Target),
            )
        })?;
        for t in expanded {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// Read an asm file given on the command line (not from a manifest).
pub fn read_asm(file: &Path) -> Result<Document, Diagnostics> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Diagnostic::error(
            Code::ReadFailed,
            format!("cannot read `{}`: {e}", file.display()),
        )
        .with_help("check the path; dumps are plain-text .s/.rocmasm files")
    })?;
    if text.trim().is_empty() {
        return Err(Diagnostic::error(
            Code::EmptyAsm,
            format!("`{}` is empty: it has no asm", file.display()),
        )
        .with_help("pass a dumped .s/.rocmasm file (the dump may have failed to write)")
        .into());
    }
    Ok(Document::from_source(&text, file))
}

/// The kernel name an asm file given on the command line goes by.
pub fn kernel_name(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "asm".into())
}

/// An output path (`-o`) naming a directory (or a symlink to one) is
/// refused before any work.
pub fn refuse_directory(out: &Path) -> Result<(), Diagnostics> {
    if out.is_dir() {
        return Err(Diagnostic::error(
            Code::OutputIsDirectory,
            format!("cannot write {}: is a directory", out.display()),
        )
        .with_help(format!(
            "name a file for the output, e.g. `{}`",
            out.join("out.hsaco").display()
        ))
        .about(Setting::Output)
        .into());
    }
    Ok(())
}

/// A scratch directory, removed when dropped.
pub(crate) fn scratch() -> Result<tempfile::TempDir, Diagnostics> {
    tempfile::tempdir().map_err(|e| {
        Diagnostic::error(
            Code::TempFileFailed,
            format!("cannot create a temp dir: {e}"),
        )
        .into()
    })
}

/// The job of kernel `ki` for `target`, or its first job when no target is given.
pub fn find_job(
    plan: &Plan,
    ki: usize,
    kernel: &str,
    target: Option<&TargetId>,
) -> Result<Job, Diagnostics> {
    match target {
        Some(t) => plan
            .jobs
            .iter()
            .find(|j| j.kernel == ki && j.target == *t)
            .cloned()
            .ok_or_else(|| {
                let have: Vec<String> = plan
                    .jobs
                    .iter()
                    .filter(|j| j.kernel == ki)
                    .map(|j| j.target.name())
                    .collect();
                Diagnostic::error(
                    Code::KernelNotBuiltForTarget,
                    format!("kernel `{kernel}` is not built for {}", t.name()),
                )
                .with_note(format!("its targets: {}", have.join(", ")))
                .with_help("add the target to a source's `targets` in kernels.toml")
                .into()
            }),
        None => plan
            .jobs
            .iter()
            .find(|j| j.kernel == ki)
            .cloned()
            .ok_or_else(|| {
                Diagnostic::error(
                    Code::KernelHasNoTargets,
                    format!("kernel `{kernel}` has no targets"),
                )
                .into()
            }),
    }
}
