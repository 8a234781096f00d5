//! The build engine's setup, shared by both build paths: `gcn-patch build`
//! and `check` (`ops::build`, `ops::check`) and gcn-build's build script.
//!
//! One place decides how a build finds its toolchain (the caller's
//! settings, else the manifest's `defaults.llvm`, else the search of
//! [`Toolchain::find`]), how many jobs run at once, and where its object
//! cache lives (a local directory under the caller's state directory, and
//! the shared one [`Shared::configure`] configures, which the caller may
//! name itself). The callers differ only in the [`EngineConfig`] they pass
//! and the token source they run the jobs under.

use std::path::PathBuf;

use super::build::{BuildOptions, Observer};
use super::cache::{ObjectCache, Shared};
use super::fingerprint::Fingerprints;
use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::jobs::Tokens;
use crate::config::manifest::Manifest;
use crate::stage::toolchain::{Toolchain, ToolchainConfig};

/// What a build is set up with.
#[derive(Debug, Clone, Default)]
pub struct EngineConfig {
    /// How to find clang and ld.lld. Without `llvm_bin` and `clang`, the
    /// manifest's `defaults.llvm` is the directory when it names one.
    pub toolchain: ToolchainConfig,
    /// Jobs at once (default: the number of CPUs).
    pub jobs: Option<usize>,
    /// The shared cache, instead of the one `GCN_BUILD_CACHE` or
    /// `GCN_BUILD_CACHE_DIR` names: a directory (its size limit is still
    /// `GCN_BUILD_CACHE_SIZE`'s) or a URL ([`Shared::configure`]).
    pub shared_cache: Option<PathBuf>,
    /// The build's own directory: the local object cache is its `cache/`,
    /// the tools' scratch files go to its `work/`.
    pub state_dir: PathBuf,
}

/// A build, set up: the toolchain found, the job count and the cache.
#[derive(Debug)]
pub struct Engine {
    /// clang + ld.lld.
    pub toolchain: Toolchain,
    /// Where objects are cached.
    pub cache: ObjectCache,
    /// Scratch directory of the tools ([`BuildOptions::work_dir`]).
    pub work_dir: PathBuf,
    /// Jobs at once.
    pub max_jobs: usize,
    /// The job fingerprints stored beside the object cache.
    pub fingerprints: Fingerprints,
}

impl Engine {
    /// Set up a build of `manifest` (if any) as `config` says, reading the
    /// environment through `env` (gcn-build's one reader, or the process
    /// environment): the toolchain is found first, then the shared cache
    /// is configured (an unusable `GCN_BUILD_CACHE_SIZE` is an error).
    pub fn new(
        config: &EngineConfig,
        manifest: Option<&Manifest>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Engine, Diagnostics> {
        let mut tc = config.toolchain.clone();
        if tc.llvm_bin.is_none() && tc.clang.is_none() {
            tc.llvm_bin = manifest.and_then(|m| m.defaults.llvm.clone());
        }
        let toolchain = Toolchain::find(&tc, env)?;
        let spec = config
            .shared_cache
            .as_ref()
            .map(|d| d.display().to_string());
        let shared = Shared::configure(spec.as_deref(), env).map_err(|e| {
            Diagnostics::from(Diagnostic::error(Code::InvalidEnvVar, e).with_help(
                "fix the setting, or unset it for the default (no shared cache, a 1 GiB \
                 directory, a 5 s remote timeout)",
            ))
        })?;
        let cache = ObjectCache {
            local: config.state_dir.join("cache"),
            shared,
        };
        Ok(Engine {
            toolchain,
            fingerprints: Fingerprints::new(&cache),
            cache,
            work_dir: config.state_dir.join("work"),
            max_jobs: crate::base::jobs::workers(config.jobs),
        })
    }

    /// The options of [`super::build::build_all`] and
    /// [`super::build::build_one`] for this engine: jobs take `tokens`
    /// (beyond the first), `progress` watches them.
    pub fn options<'a>(
        &'a self,
        tokens: &'a dyn Tokens,
        progress: Option<&'a dyn Observer>,
    ) -> BuildOptions<'a> {
        BuildOptions {
            toolchain: &self.toolchain,
            cache: self.cache.clone(),
            work_dir: self.work_dir.clone(),
            max_jobs: self.max_jobs,
            tokens,
            progress,
            fingerprints: Some(&self.fingerprints),
        }
    }
}
