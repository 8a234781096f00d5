//! # gcn-build
//!
//! Use from `build.rs` (as a build-dependency) to apply the patches declared in
//! a `kernels.toml`, assemble and link one code object per kernel × target with
//! the real LLVM (clang + ld.lld), and generate `$OUT_DIR/gcn_kernels.rs`,
//! which embeds every code object for [`gcn_embed`] to select at run time.
//!
//! ```no_run
//! // build.rs: `fn main() { … }` around this line
//! gcn_build::Build::new().manifest("kernels.toml").compile();
//! ```
//!
//! ```text
//! // src/lib.rs
//! mod kernels {
//!     gcn_embed::include_kernels!();
//! }
//! let hsaco = kernels::MATMUL.select("gfx942:sramecc+:xnack-")?;
//! ```
//!
//! In the style of `cc`: one builder, [`Build::compile`] panics with the
//! rendered diagnostics (failing the build script), [`Build::try_compile`]
//! returns them as an [`Error`] (both on `&self`).
//! Jobs run in parallel under Cargo's jobserver (`cargo build -j1` means one
//! job; the jobserver is opened once per process), and code objects are cached
//! by content in `OUT_DIR` and, optionally, in a cache shared by every checkout
//! (`GCN_BUILD_CACHE_DIR`, or `GCN_BUILD_CACHE`: a directory or, with the
//! `remote-cache` feature, Redis, WebDAV, S3 or the GitHub Actions cache),
//! so editing one patch reassembles only that
//! kernel's code objects. Job fingerprints
//! ([`gcn_patch::pipeline::fingerprint`]) go further: a rerun of the build
//! script loads, patches and checks only the sources whose inputs changed
//! (a rerun of all of aiter with nothing changed reads no dump). The engine is [`gcn_patch::pipeline::build`](mod@gcn_patch::pipeline::build), shared with the
//! `gcn-patch build` command.
//!
//! ## Environment variables
//!
//! Every variable is read through one function that also prints
//! `cargo:rerun-if-env-changed` for it (except those Cargo sets and `PATH`):
//!
//! | variable | used for |
//! |---|---|
//! | `OUT_DIR` | where code objects and `gcn_kernels.rs` are written (set by Cargo) |
//! | `NUM_JOBS` | upper bound on parallel assembler jobs (set by Cargo) |
//! | `GCN_PATCH_LLVM_BIN` | directory holding `clang` and `ld.lld` |
//! | `GCN_PATCH_CLANG`, `GCN_PATCH_LD_LLD` | explicit tool paths |
//! | `CC_amdgcn_amd_amdhsa` | cc-rs style per-target compiler override (a clang) |
//! | `ROCM_PATH` | ROCm install: `$ROCM_PATH/llvm/bin`, `$ROCM_PATH/lib/llvm/bin` |
//! | `PATH` | versioned (`clang-22`) and plain tool names; **not tracked** |
//! | `GCN_PATCH_TOOL_TIMEOUT` | time limit of every clang/ld.lld run, seconds (default 300) |
//! | `GCN_BUILD_CACHE_DIR` | shared object cache directory across checkouts (unset: none) |
//! | `GCN_BUILD_CACHE` | the shared cache: a directory, or with the `remote-cache` feature `redis://[user:pass@]host:port[/db]` (`rediss://` for TLS), `webdav+http(s)://host:port/path`, `s3://bucket/prefix`, `ghac`; wins over `GCN_BUILD_CACHE_DIR` |
//! | `GCN_BUILD_CACHE_SIZE` | bound of a shared cache directory: bytes or `K`/`M`/`G` (default `1G`) |
//! | `GCN_BUILD_CACHE_READONLY` | `1`: read the shared cache, never write it (forks, untrusted pull requests) |
//! | `GCN_BUILD_CACHE_TIMEOUT` | seconds each remote cache request may take (default 5); the first failure stops its use for the build |
//! | `GCN_BUILD_CACHE_WEBDAV_USERNAME`, `…_PASSWORD`, `…_TOKEN` | WebDAV credentials (basic auth or bearer token) |
//! | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL` | an `s3://` cache's credentials, region (default `us-east-1`) and endpoint (S3-compatible servers); without keys, OpenDAL's own AWS lookup (profile, instance metadata) |
//! | `ACTIONS_CACHE_URL`, `ACTIONS_RESULTS_URL`, `ACTIONS_RUNTIME_TOKEN` | the `ghac` cache (set by the GitHub Actions runner; OpenDAL also reads `ACTIONS_CACHE_SERVICE_V2` and `GITHUB_SERVER_URL` itself, untracked) |
//! | `GCN_BUILD_LOCKED` | `1`: fail unless the build reproduces `kernels.lock` (as [`Build::locked`]) |
//! | `GCN_BUILD_WRITE_LOCK` | `1`: write `kernels.lock` next to the manifest (as [`Build::write_lock`]) |
//! | `CARGO_MANIFEST_DIR` | the package root, to tell a packaged copy from a checkout (set by Cargo; read only when the lock is to be written) |
//! | `CARGO_HOME` | packages under `$CARGO_HOME/registry` or `$CARGO_HOME/git` never get a lock written (read only when the lock is to be written) |
//!
//! ## `kernels.lock`
//!
//! A build script writes nothing outside `OUT_DIR` (and the shared cache, when
//! one is set) unless asked: Cargo forbids a build script to change its
//! package's sources during `cargo package` and `cargo publish`, and a
//! registry, git or vendored copy of a package is no place to write.
//!
//! The lock (per kernel × target the sha256 of the patched asm and of the code
//! object, and the toolchain) is written next to the manifest, through
//! [`gcn_patch::pipeline::build::record_lock`] as by `gcn-patch build`, only when asked, with
//! [`Build::write_lock`]`(true)` or `GCN_BUILD_WRITE_LOCK=1`, and only in a
//! local checkout: a manifest in a packaged copy (a directory or ancestor
//! holding `Cargo.toml.orig`, `.cargo-ok` or `.cargo-checksum.json`, as the
//! registry's, git's and `cargo vendor`'s copies and `cargo package`'s
//! verification copy do) or under `$CARGO_HOME/registry` or
//! `$CARGO_HOME/git` gets none, and [`Output::lock`] says why. With
//! [`Build::locked`] or `GCN_BUILD_LOCKED=1` the lock is read, never written,
//! and the build fails with a per-entry diff when it would not reproduce it.
//!
//! `PATH` is not tracked, as in cc-rs: shells, IDEs and rustup change it all
//! the time, and tracking it would rerun the build script on each change. A
//! toolchain found through `PATH` changes only at the next rerun for another
//! reason; to switch toolchains set `GCN_PATCH_LLVM_BIN` (tracked). Cache keys
//! hold the toolchain's version and resolved paths, so objects of another
//! toolchain are never reused. The jobserver variables (`CARGO_MAKEFLAGS`,
//! `MAKEFLAGS`, `MFLAGS`) are read by the `jobserver` crate; they do not change
//! outputs and are not tracked.
//!
//! A shared cache only accelerates: a remote one that is down, slow or
//! refusing costs one `cargo:warning` and at most one timeout per request in
//! flight, then the build goes on with the local cache and the tools.
//!
//! What the build did is written to `$OUT_DIR/gcn-build/report.txt`, one line
//! per job: `assembled`, `cached` or `shared-cache`, kernel, target, sha256.
//! Every note (findings the unpatched source has too, register updates,
//! rewrites) is written to `$OUT_DIR/gcn-build/notes.txt`. Cargo is shown
//! each job's repeated findings once and the register updates of
//! `registers = "update"` in one note naming `gcn-patch accept`
//! ([`gcn_patch::ops::notes`]); the first [`WARNED_NOTES`] of those become
//! `cargo:warning` lines and one more line counts the rest (Cargo replays a
//! build script's warnings on every build).
//!
//! ## Output
//!
//! Inside a build script ([`Build::cargo_metadata`] on, the default when
//! `OUT_DIR` is set) gcn-build prints `cargo:` lines and one status line
//! (`gcn-build: N code objects, …`) to standard output, where Cargo keeps them.
//! With `cargo_metadata(false)` it prints nothing at all: [`Output`] and
//! `report.txt` hold the same facts.
#![warn(missing_docs)]

mod embed;
mod env;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gcn_embed::TargetId;
pub use gcn_patch::base::diag::{Code, Diagnostic, Kind};
use gcn_patch::base::diag::{Diagnostics, Setting};
use gcn_patch::base::jobs::{Token, Tokens};
use gcn_patch::base::output::{write_if_changed, Durability};
use gcn_patch::config::manifest::Manifest;
use gcn_patch::pipeline;
use gcn_patch::pipeline::build::build_all;
use gcn_patch::pipeline::engine::{Engine, EngineConfig};
use gcn_patch::stage::toolchain::{Toolchain, ToolchainConfig};

use embed::{EmbeddedKernel, EmbeddedObject};

/// Name of the generated file in `OUT_DIR`.
pub const GENERATED_FILE: &str = "gcn_kernels.rs";

/// A failed build: every diagnostic, rendered in rustc style by `Display`.
#[derive(Debug)]
pub struct Error {
    diagnostics: Diagnostics,
}

impl Error {
    /// Every diagnostic, typed: match on their [`Code`]s (or
    /// [`Diagnostic::kind`]), not on their text.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics.0
    }

    /// The code of each diagnostic, in order.
    pub fn codes(&self) -> Vec<Code> {
        self.diagnostics.codes()
    }

    /// The headline of each diagnostic (`error: …` without location, notes or help), in order.
    pub fn messages(&self) -> Vec<String> {
        self.diagnostics
            .0
            .iter()
            .map(|d| d.message.clone())
            .collect()
    }

    /// Every diagnostic rendered in rustc style (the same text as `Display`).
    pub fn rendered(&self) -> String {
        self.diagnostics.to_string()
    }

    /// The diagnostics, to merge with others or render elsewhere.
    pub fn into_diagnostics(self) -> Diagnostics {
        self.diagnostics
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.diagnostics, f)
    }
}

impl std::error::Error for Error {}

impl From<Diagnostics> for Error {
    fn from(mut diagnostics: Diagnostics) -> Self {
        // The library names no option; a build script sets these so.
        for d in &mut diagnostics.0 {
            if d.setting == Some(Setting::Locked) {
                d.message = format!(
                    "locked build (`Build::locked`, GCN_BUILD_LOCKED): {}",
                    d.message
                );
            }
        }
        Error { diagnostics }
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Self {
        Diagnostics::from(d).into()
    }
}

/// One built code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltObject {
    /// Kernel name from the manifest.
    pub kernel: String,
    /// Target ID it was built for.
    pub target: String,
    /// The `.hsaco` inside the output directory.
    pub path: PathBuf,
    /// Hex sha256 of its bytes.
    pub sha256: String,
    /// True if it came from a cache (no assembler run).
    pub cached: bool,
    /// True if it came from the shared cache (`GCN_BUILD_CACHE_DIR`, `GCN_BUILD_CACHE`).
    pub shared_hit: bool,
}

/// What [`Build::try_compile`] produced.
#[derive(Debug, Clone)]
pub struct Output {
    /// The generated Rust file.
    pub generated: PathBuf,
    /// Every code object, in manifest order.
    pub objects: Vec<BuiltObject>,
    /// Notes (occupancy changes, register updates, rewrites) worth showing,
    /// each rendered in rustc style.
    pub notes: Vec<String>,
    /// The notes as Cargo is shown them (before the cap of
    /// [`WARNED_NOTES`]): each job's repeated findings once, the register
    /// updates and occupancy reports of the build in one note
    /// ([`gcn_patch::ops::notes`]).
    pub shown: Vec<String>,
    /// What the build did with `kernels.lock`.
    pub lock: LockOutcome,
    /// How much of the build its job fingerprints skipped: sources the
    /// plan read, jobs taken from their records (see
    /// [`gcn_patch::pipeline::fingerprint`]).
    pub fingerprints: gcn_patch::pipeline::fingerprint::Stats,
    /// What went wrong with the shared cache, once (a remote cache that
    /// failed and was not used for the rest of the build, or one this
    /// build cannot use); also a `cargo:warning`. The build itself is fine.
    pub cache_warning: Option<String>,
}

/// What a build did with `kernels.lock` (see the crate docs, `kernels.lock`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockOutcome {
    /// Locked build: the lock at this path is reproduced (nothing written).
    Reproduced(PathBuf),
    /// Written (or already up to date) at this path, as asked.
    Written(PathBuf),
    /// Not asked to write it: nothing outside `OUT_DIR` was touched.
    NotRequested,
    /// Asked, but the manifest is in a packaged copy, not a local checkout;
    /// nothing was written. The reason names the marker found.
    Refused(String),
}

impl Output {
    /// How many code objects were assembled (not taken from the cache).
    pub fn assembled(&self) -> usize {
        self.objects.iter().filter(|o| !o.cached).count()
    }
}

/// The builder: configure, then [`compile`](Build::compile).
#[derive(Debug, Clone, Default)]
pub struct Build {
    manifest: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    toolchain: ToolchainConfig,
    extra_targets: Vec<String>,
    jobs: Option<usize>,
    cargo_metadata: Option<bool>,
    shared_cache: Option<PathBuf>,
    locked: Option<bool>,
    write_lock: Option<bool>,
}

impl Build {
    /// A builder with defaults: `kernels.toml` in the package root, output to `OUT_DIR`.
    pub fn new() -> Self {
        Build::default()
    }

    /// The manifest (default `kernels.toml`, relative to the build script's working directory).
    pub fn manifest(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.manifest = Some(path.as_ref().to_path_buf());
        self
    }

    /// Where to write code objects and `gcn_kernels.rs` (default `OUT_DIR`).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Directory with `clang` and `ld.lld` (overrides the manifest's `llvm` and the search).
    pub fn llvm_bin(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.toolchain.llvm_bin = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Explicit clang path.
    pub fn clang(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.toolchain.clang = Some(path.as_ref().to_path_buf());
        self
    }

    /// Explicit ld.lld path.
    pub fn lld(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.toolchain.lld = Some(path.as_ref().to_path_buf());
        self
    }

    /// Time limit of every clang/ld.lld run (default: `GCN_PATCH_TOOL_TIMEOUT`
    /// seconds, else 300 s). A tool past it is killed with its process group
    /// and the build fails naming the tool, kernel and target.
    pub fn tool_timeout(&mut self, limit: std::time::Duration) -> &mut Self {
        self.toolchain.timeout = Some(limit);
        self
    }

    /// Also build every source for `target` (a target ID or a family such as
    /// `gfx94X-all`) when the source's dump belongs to the same generation.
    pub fn target(&mut self, target: impl Into<String>) -> &mut Self {
        self.extra_targets.push(target.into());
        self
    }

    /// Upper bound on parallel jobs (default: `NUM_JOBS`, limited by the jobserver).
    pub fn jobs(&mut self, n: usize) -> &mut Self {
        self.jobs = Some(n.max(1));
        self
    }

    /// Shared object cache (default: `GCN_BUILD_CACHE`, else
    /// `GCN_BUILD_CACHE_DIR`, else none): a directory, whose size bound
    /// stays `GCN_BUILD_CACHE_SIZE` (default 1 GiB), or with the
    /// `remote-cache` feature a URL as `GCN_BUILD_CACHE` takes
    /// (`"redis://127.0.0.1:6379"`, `"webdav+https://host/path"`,
    /// `"s3://bucket/prefix"`, `"ghac"`; see the crate docs).
    pub fn shared_cache(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.shared_cache = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Fail unless the build reproduces `kernels.lock` next to the manifest
    /// (default: `GCN_BUILD_LOCKED=1`); a locked build does not write the lock.
    pub fn locked(&mut self, yes: bool) -> &mut Self {
        self.locked = Some(yes);
        self
    }

    /// Write `kernels.lock` next to the manifest (default:
    /// `GCN_BUILD_WRITE_LOCK=1`, else no). Only a local checkout gets it: in a
    /// packaged copy (registry, git or vendored sources, `cargo package`'s
    /// verification copy) the request is ignored and [`Output::lock`] says so.
    /// A [`locked`](Build::locked) build reads the lock and writes none.
    pub fn write_lock(&mut self, yes: bool) -> &mut Self {
        self.write_lock = Some(yes);
        self
    }

    /// Print `cargo:` lines and the status line (default: true when `OUT_DIR`
    /// is set, i.e. inside a build script). `false`: print nothing at all.
    pub fn cargo_metadata(&mut self, yes: bool) -> &mut Self {
        self.cargo_metadata = Some(yes);
        self
    }

    /// Build everything; on failure panic with the rendered diagnostics,
    /// which fails the build script (as cc-rs does). The panic names the
    /// caller's line (the `compile()` call in `build.rs`).
    #[track_caller]
    pub fn compile(&self) -> Output {
        match self.try_compile() {
            Ok(out) => out,
            Err(e) => panic!("gcn-build failed:\n{e}"),
        }
    }

    /// Build everything and return what was built, or every diagnostic.
    pub fn try_compile(&self) -> Result<Output, Error> {
        let env = env::Env::new(self.cargo_metadata);
        let cargo_metadata = env.cargo_metadata();
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => env.get("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                Diagnostic::error(Code::OutDirNotSet, "OUT_DIR is not set")
                    .with_help("run gcn-build from a build script, or call `.out_dir(...)`")
            })?,
        };
        let manifest_path = self
            .manifest
            .clone()
            .unwrap_or_else(|| PathBuf::from("kernels.toml"));
        let generated = out_dir.join(GENERATED_FILE);
        let result = self.run(&env, &manifest_path, &out_dir, cargo_metadata);
        if result.is_err() {
            // Never leave stale generated code behind a failed build.
            let _ = std::fs::remove_file(&generated);
        }
        result
    }

    fn run(
        &self,
        env: &env::Env,
        manifest_path: &Path,
        out_dir: &Path,
        cargo_metadata: bool,
    ) -> Result<Output, Error> {
        // Declared before loading, so that fixing a broken manifest reruns the build script.
        if cargo_metadata {
            println!("cargo:rerun-if-changed={}", manifest_path.display());
        }
        let manifest = Manifest::load(manifest_path)?;
        if cargo_metadata {
            // Every source and patch file (the first entry is the manifest); nothing else.
            for f in manifest.input_files().iter().skip(1) {
                println!("cargo:rerun-if-changed={}", f.display());
            }
        }
        let mut extra: Vec<TargetId> = Vec::new();
        for t in &self.extra_targets {
            extra.extend(gcn_embed::family::expand(t).map_err(|e| {
                Diagnostic::error(
                    Code::InvalidTarget,
                    format!("gcn_build::Build::target({t:?}): {e}"),
                )
            })?);
        }
        // The engine's setup is `gcn-patch build`'s (the toolchain, with
        // the manifest's `defaults.llvm`; the job count; the caches), with
        // the build script's settings and state directory.
        let build_dir = out_dir.join("gcn-build");
        let mut toolchain = self.toolchain.clone();
        // What the probes found is remembered in OUT_DIR under the tools'
        // identity: a rerun of the build script starts no probe.
        toolchain.probe_cache = Some(build_dir.join("toolchain.txt"));
        let config = EngineConfig {
            toolchain,
            jobs: self
                .jobs
                .or_else(|| env.get("NUM_JOBS").and_then(|n| n.parse().ok())),
            shared_cache: self.shared_cache.clone(),
            state_dir: build_dir.clone(),
        };
        let engine = Engine::new(&config, Some(&manifest), &|name| env.get(name))?;

        let tokens = Jobserver::new(jobserver_client());
        let plan = pipeline::plan_cached(
            &manifest,
            &extra,
            engine.max_jobs,
            &tokens,
            Some(&engine.fingerprints),
        )?;
        let built = build_all(&manifest, &plan, &engine.options(&tokens, None));
        if built.is_err() {
            // What was hashed stays known to the next run.
            engine.fingerprints.save();
        }
        let built = built?;
        let lock = self.lock(env, &manifest, &engine.toolchain, &built)?;

        let mut objects = Vec::new();
        let mut notes = Vec::new();
        let mut shown = Vec::new();
        let mut register_notes = Vec::new();
        let mut accepted = 0usize;
        let mut kernels: Vec<EmbeddedKernel> = manifest
            .kernels
            .iter()
            .map(|k| EmbeddedKernel {
                name: k.name.clone(),
                iree_executable: k.iree_executable.clone(),
                objects: Vec::new(),
            })
            .collect();
        let mut report = String::new();
        for b in built {
            let target = b.target.name();
            // The engine's words, as `gcn-patch build` shows them.
            let state = b.state().as_str();
            let path = build_dir
                .join(&b.kernel)
                .join(format!("{}.hsaco", target.replace(':', "_")));
            // An object installed by an earlier run, unchanged since (its
            // sha256 remembered with its stat data), is not read again.
            if engine.fingerprints.sha256_of(&path).as_ref() != Some(&b.sha256) {
                write_if_changed(&path, &b.read()?, Durability::Unsynced)
                    .map_err(|e| io_error("write", &path, e))?;
            }
            kernels[b.job.kernel].objects.push(EmbeddedObject {
                target: target.clone(),
                rel_path: rel_to(&path, out_dir),
                sha256: b.sha256.clone(),
                symbols: b.symbols,
            });
            notes.extend(b.notes.iter().map(Diagnostic::render));
            // What Cargo shows: each job's repeats once, register notes
            // folded into one for the build (below).
            shown.extend(
                gcn_patch::ops::notes::collapse_repeats(
                    b.notes
                        .iter()
                        .filter(|d| !gcn_patch::ops::notes::is_register_note(d))
                        .cloned()
                        .collect(),
                )
                .iter()
                .map(Diagnostic::render),
            );
            register_notes.push((b.kernel.clone(), b.target, b.notes.clone()));
            accepted += b.accepted;
            report.push_str(&format!("{state} {} {target} {}\n", b.kernel, b.sha256));
            objects.push(BuiltObject {
                kernel: b.kernel,
                target,
                path,
                sha256: b.sha256,
                cached: b.cached.is_some(),
                shared_hit: b.cached == Some(gcn_patch::pipeline::cache::Hit::Shared),
            });
        }
        // The hashes of the objects just installed, for the next run (and
        // the records, in the shared cache too).
        engine.fingerprints.save();
        let cache_warning = engine.cache.warning();
        if let (true, Some(w)) = (cargo_metadata, &cache_warning) {
            println!("cargo:warning=gcn-build: {w}");
        }
        let manifest_name = manifest_path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = embed::generate(&manifest_name, &kernels);
        let generated = out_dir.join(GENERATED_FILE);
        write_if_changed(&generated, text.as_bytes(), Durability::Unsynced)
            .map_err(|e| io_error("write the generated Rust", &generated, e))?;

        let report_path = build_dir.join("report.txt");
        write_if_changed(&report_path, report.as_bytes(), Durability::Unsynced)
            .map_err(|e| io_error("write the build report", &report_path, e))?;
        // Every note in one file; Cargo shows (and replays on every later
        // build) only the first few, so a library of thousands of kernels
        // with inherited findings does not print tens of thousands of lines.
        let notes_path = build_dir.join(NOTES_FILE);
        let mut all_notes = notes.join("\n");
        if !all_notes.is_empty() {
            all_notes.push('\n');
        }
        write_if_changed(&notes_path, all_notes.as_bytes(), Durability::Unsynced)
            .map_err(|e| io_error("write the build notes", &notes_path, e))?;
        if let Some(d) = gcn_patch::ops::notes::register_summary(
            register_notes
                .iter()
                .map(|(k, t, n): &(String, _, Vec<Diagnostic>)| (k.as_str(), t, n.as_slice())),
        ) {
            shown.push(d.render());
        }
        if cargo_metadata {
            for line in warning_lines(&shown, notes.len(), &notes_path) {
                println!("cargo:warning={line}");
            }
        }
        let assembled = objects.iter().filter(|o| !o.cached).count();
        if cargo_metadata {
            // Acknowledged findings (the kernels' `accepted` files) are counted
            // here, on the build script's own output, never as cargo warnings.
            println!(
                "gcn-build: {} code objects, {assembled} assembled, {} cached, {accepted} acknowledged finding(s) not shown",
                objects.len(),
                objects.len() - assembled
            );
        }
        Ok(Output {
            generated,
            objects,
            notes,
            shown,
            lock,
            fingerprints: engine.fingerprints.stats(),
            cache_warning,
        })
    }

    /// Check or write `kernels.lock` as configured (see the crate docs).
    fn lock(
        &self,
        env: &env::Env,
        manifest: &Manifest,
        toolchain: &Toolchain,
        built: &[gcn_patch::pipeline::build::BuiltJob],
    ) -> Result<LockOutcome, Error> {
        let flag = |name: &str| env.get(name).is_some_and(|v| !v.is_empty() && v != "0");
        if self.locked.unwrap_or_else(|| flag("GCN_BUILD_LOCKED")) {
            let path = gcn_patch::pipeline::build::record_lock(manifest, toolchain, built, true)?;
            return Ok(LockOutcome::Reproduced(path));
        }
        if !self
            .write_lock
            .unwrap_or_else(|| flag("GCN_BUILD_WRITE_LOCK"))
        {
            return Ok(LockOutcome::NotRequested);
        }
        if let Some(reason) = packaged_copy(&manifest.path, env) {
            return Ok(LockOutcome::Refused(reason));
        }
        let path = gcn_patch::pipeline::build::record_lock(manifest, toolchain, built, false)?;
        Ok(LockOutcome::Written(path))
    }
}

/// Files Cargo leaves in packages it did not get from a checkout: every
/// `.crate` holds `Cargo.toml.orig` (registry sources, `cargo vendor`, the
/// `target/package` verification copy), Cargo marks the unpacked registry
/// crates and git checkouts it made with `.cargo-ok`, and `cargo vendor`
/// writes `.cargo-checksum.json`.
const PACKAGED_MARKERS: &[&str] = &["Cargo.toml.orig", ".cargo-ok", ".cargo-checksum.json"];

/// Why the manifest at `manifest` is not in a local checkout (so no lock is
/// written next to it), or `None` for a checkout.
fn packaged_copy(manifest: &Path, env: &env::Env) -> Option<String> {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let dir = abs(manifest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new(".")));
    let mut dirs: Vec<PathBuf> = dir.ancestors().map(Path::to_path_buf).collect();
    if let Some(root) = env.get("CARGO_MANIFEST_DIR") {
        dirs.push(abs(Path::new(&root)));
    }
    for d in &dirs {
        for marker in PACKAGED_MARKERS {
            if d.join(marker).is_file() {
                return Some(format!(
                    "`{}` holds `{marker}`: a packaged copy (registry, git or vendored sources, or `cargo package`'s verification copy), not a local checkout",
                    d.display()
                ));
            }
        }
    }
    if let Some(home) = env.get("CARGO_HOME") {
        let home = abs(Path::new(&home));
        for sub in ["registry", "git"] {
            if dir.starts_with(home.join(sub)) {
                return Some(format!(
                    "`{}` is under `{}`: Cargo's copy of a dependency, not a local checkout",
                    dir.display(),
                    home.join(sub).display()
                ));
            }
        }
    }
    None
}

/// Cargo's jobserver, as [`Tokens`] for the job runner.
///
/// Tokens are acquired by the jobserver crate's helper thread (a blocking
/// read, as cc-rs does): `Client::try_acquire` only works on named-pipe
/// jobservers and returns `Unsupported` on the anonymous pipes Cargo hands
/// build scripts, which made every job run on the implicit token alone. One
/// request is outstanding at a time; a granted token is picked up by the next
/// `try_acquire` (the runner retries every few milliseconds while jobs wait).
enum Jobserver {
    /// Not under Cargo (or make): bounded by the job count only.
    Absent,
    /// Tokens come from the helper thread.
    Helper(Helper),
    /// The helper thread could not start: the implicit token only (serial, correct).
    Serial,
}

struct Helper {
    /// Dropping it stops the thread; tokens granted late are released.
    thread: jobserver::HelperThread,
    granted: std::sync::Mutex<std::sync::mpsc::Receiver<jobserver::Acquired>>,
    requested: std::sync::atomic::AtomicBool,
}

impl Jobserver {
    fn new(client: Option<&'static jobserver::Client>) -> Self {
        let Some(client) = client else {
            return Jobserver::Absent;
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        let thread = client.clone().into_helper_thread(move |acquired| {
            if let (Ok(token), Ok(tx)) = (acquired, tx.lock()) {
                let _ = tx.send(token);
            }
        });
        match thread {
            Ok(thread) => Jobserver::Helper(Helper {
                thread,
                granted: std::sync::Mutex::new(rx),
                requested: std::sync::atomic::AtomicBool::new(false),
            }),
            Err(_) => Jobserver::Serial,
        }
    }
}

impl Tokens for Jobserver {
    fn try_acquire(&self) -> Option<Token> {
        use std::sync::atomic::Ordering;
        let h = match self {
            Jobserver::Absent => return Some(Token::free()),
            Jobserver::Serial => return None,
            Jobserver::Helper(h) => h,
        };
        if let Ok(rx) = h.granted.lock() {
            if let Ok(token) = rx.try_recv() {
                h.requested.store(false, Ordering::SeqCst);
                return Some(Token::new(token));
            }
        }
        if !h.requested.swap(true, Ordering::SeqCst) {
            h.thread.request_token();
        }
        None
    }
}

/// The jobserver inherited from Cargo, opened once per process (as cc-rs does):
/// the file descriptors it names are only valid to claim once, and a second
/// `from_env` could take descriptors reused for something else.
fn jobserver_client() -> Option<&'static jobserver::Client> {
    static CLIENT: OnceLock<Option<jobserver::Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // SAFETY: runs once per process; the inherited jobserver descriptors
            // are not used by anything else in a build script.
            unsafe { jobserver::Client::from_env() }
        })
        .as_ref()
}

/// Notes shown in full as `cargo:warning` lines; the rest are counted in one
/// more line that names [`NOTES_FILE`], which holds them all.
pub const WARNED_NOTES: usize = 10;

/// The file in `$OUT_DIR/gcn-build/` holding every note of the last build.
pub const NOTES_FILE: &str = "notes.txt";

/// The `cargo:warning` lines for `notes` (repeats collapsed and register
/// notes folded, [`gcn_patch::ops::notes`]): the first [`WARNED_NOTES`] in
/// full, then one line counting the others and naming `all_at`, which holds
/// all `total` notes in full.
fn warning_lines(notes: &[String], total: usize, all_at: &Path) -> Vec<String> {
    let mut lines: Vec<String> = notes
        .iter()
        .take(WARNED_NOTES)
        .flat_map(|n| n.lines().map(str::to_string))
        .collect();
    if notes.len() > WARNED_NOTES {
        lines.push(format!(
            "gcn-build: {} more note(s) not shown ({} in all); every note is in {}",
            notes.len() - WARNED_NOTES,
            total,
            all_at.display()
        ));
    } else if total > notes.len() && !notes.is_empty() {
        lines.push(format!(
            "gcn-build: repeated notes shown once; every note ({total}) is in {}",
            all_at.display()
        ));
    }
    lines
}

fn rel_to(path: &Path, base: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Diagnostic {
    Diagnostic::error(
        Code::WriteFailed,
        format!("could not {what} `{}`: {e}", path.display()),
    )
    .with_help("check that the output directory is writable and the disk is not full")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `try_acquire` until a token comes (the helper thread answers asynchronously).
    fn acquire(tokens: &Jobserver) -> Option<Token> {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < end {
            if let Some(t) = tokens.try_acquire() {
                return Some(t);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        None
    }

    #[test]
    fn the_jobserver_grants_exactly_its_tokens_and_takes_them_back() {
        // An anonymous-pipe jobserver, as Cargo gives build scripts.
        let client: &'static jobserver::Client = Box::leak(Box::new(
            jobserver::Client::new(2).expect("create a jobserver"),
        ));
        let tokens = Jobserver::new(Some(client));
        let a = acquire(&tokens).expect("first token");
        let b = acquire(&tokens).expect("second token");
        assert!(acquire(&tokens).is_none(), "a third token was granted");
        drop(a);
        let c = acquire(&tokens).expect("a returned token is granted again");
        drop((b, c));
        // Under the jobserver, three jobs (implicit token + two) really overlap.
        let arrived = std::sync::atomic::AtomicUsize::new(0);
        let met = gcn_patch::base::jobs::run(vec![0; 3], 8, &tokens, |_| {
            arrived.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while std::time::Instant::now() < end {
                if arrived.load(std::sync::atomic::Ordering::SeqCst) >= 3 {
                    return true;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            false
        });
        assert_eq!(met, vec![Ok(true); 3], "the jobs never overlapped");
    }

    #[test]
    fn at_most_ten_notes_become_cargo_warnings_and_the_rest_are_counted() {
        let notes: Vec<String> = (0..3)
            .map(|i| format!("note: {i}\n = help: h{i}"))
            .collect();
        let path = Path::new("/out/gcn-build/notes.txt");
        assert_eq!(warning_lines(&notes, 3, path).len(), 6);
        // Collapsed from more: the file holds them all, and a line says so.
        let lines = warning_lines(&notes, 7, path);
        assert_eq!(
            lines.last().unwrap(),
            "gcn-build: repeated notes shown once; every note (7) is in /out/gcn-build/notes.txt"
        );
        let many: Vec<String> = (0..5000)
            .map(|i| format!("note: {i}\n = help: h{i}"))
            .collect();
        let lines = warning_lines(&many, 5000, path);
        assert_eq!(lines.len(), 2 * WARNED_NOTES + 1, "{lines:#?}");
        assert_eq!(lines[0], "note: 0");
        assert_eq!(
            lines.last().unwrap(),
            "gcn-build: 4990 more note(s) not shown (5000 in all); every note is in /out/gcn-build/notes.txt"
        );
        assert!(warning_lines(&[], 0, path).is_empty());
    }

    #[test]
    fn without_a_jobserver_tokens_are_unlimited() {
        let tokens = Jobserver::Absent;
        let held: Vec<Token> = (0..16).filter_map(|_| tokens.try_acquire()).collect();
        assert_eq!(held.len(), 16);
    }
}
