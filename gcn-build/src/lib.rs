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
//! In the style of `cc`: one builder, [`Build::compile`] fails the build with
//! the full diagnostic, [`Build::try_compile`] returns it. Every environment
//! variable is read through one function that also prints
//! `cargo:rerun-if-env-changed` (see [`env`](mod@env) for the list). Jobs run in
//! parallel under Cargo's jobserver (`cargo build -j1` means one job), and code
//! objects are cached by content in `OUT_DIR`, so editing one patch reassembles
//! only that kernel's code objects.
//!
//! What the build did is written to `$OUT_DIR/gcn-build/report.txt`, one line
//! per job: `assembled` or `cached`, kernel, target, sha256.
#![warn(missing_docs)]

mod cache;
pub mod embed;
pub mod env;
mod jobs;

use std::fmt;
use std::path::{Path, PathBuf};

use gcn_embed::TargetId;
use gcn_patch::diag::{Diagnostic, Diagnostics};
use gcn_patch::manifest::Manifest;
use gcn_patch::pipeline;
use gcn_patch::toolchain::{Toolchain, ToolchainConfig};

pub use embed::{EmbeddedKernel, EmbeddedObject};

/// Name of the generated file in `OUT_DIR`.
pub const GENERATED_FILE: &str = "gcn_kernels.rs";

/// A failed build: every diagnostic, rendered in rustc style by `Display`.
#[derive(Debug)]
pub struct Error {
    /// What went wrong, with file:line, kernel, target and patch provenance.
    pub diagnostics: Diagnostics,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.diagnostics, f)
    }
}

impl std::error::Error for Error {}

impl From<Diagnostics> for Error {
    fn from(diagnostics: Diagnostics) -> Self {
        Error { diagnostics }
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Self {
        Error {
            diagnostics: d.into(),
        }
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
    /// True if it came from the cache (no assembler run).
    pub cached: bool,
}

/// What [`Build::try_compile`] produced.
#[derive(Debug, Clone)]
pub struct Output {
    /// The generated Rust file.
    pub generated: PathBuf,
    /// Every code object, in manifest order.
    pub objects: Vec<BuiltObject>,
    /// Notes (occupancy changes, register updates) worth showing.
    pub notes: Vec<Diagnostic>,
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

    /// Print `cargo:` lines (default: true when `OUT_DIR` is set, i.e. inside a build script).
    pub fn cargo_metadata(&mut self, yes: bool) -> &mut Self {
        self.cargo_metadata = Some(yes);
        self
    }

    /// Build everything; on failure print the full diagnostics and fail the build script.
    pub fn compile(&mut self) -> Output {
        match self.try_compile() {
            Ok(out) => out,
            Err(e) => {
                eprintln!("{e}");
                eprintln!("error: gcn-build failed; see the diagnostics above");
                std::process::exit(1);
            }
        }
    }

    /// Build everything and return what was built, or every diagnostic.
    pub fn try_compile(&mut self) -> Result<Output, Error> {
        let cargo_metadata = self
            .cargo_metadata
            .unwrap_or_else(|| std::env::var_os("OUT_DIR").is_some());
        let env = env::Env::new(cargo_metadata);
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => env.get("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                Diagnostic::error("OUT_DIR is not set")
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
            extra.extend(
                gcn_embed::family::expand(t).map_err(|e| {
                    Diagnostic::error(format!("gcn_build::Build::target({t:?}): {e}"))
                })?,
            );
        }
        let mut config = self.toolchain.clone();
        if config.llvm_bin.is_none() && config.clang.is_none() {
            config.llvm_bin = manifest.defaults.llvm.clone();
        }
        let toolchain = Toolchain::find(&config, &|name| env.get(name))?;
        let max_jobs = self
            .jobs
            .or_else(|| env.get("NUM_JOBS").and_then(|n| n.parse().ok()))
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1);
        // SAFETY: called once, before any other thread touches the inherited file descriptors.
        let client = unsafe { jobserver::Client::from_env() };

        let plan = pipeline::plan(&manifest, &extra)?;
        let build_dir = out_dir.join("gcn-build");
        let cache_dir = build_dir.join("cache");
        let work_root = build_dir.join("work");
        let results = jobs::run(plan.jobs.clone(), max_jobs, client.as_ref(), |job| {
            build_one(
                &manifest, &plan, &toolchain, &job, &cache_dir, &work_root, &build_dir,
            )
        });

        let mut diagnostics = Vec::new();
        let mut built = Vec::new();
        let mut notes = Vec::new();
        for r in results {
            match r {
                Ok((obj, n, syms)) => {
                    notes.extend(n);
                    built.push((obj, syms));
                }
                Err(d) => diagnostics.extend(d.0),
            }
        }
        if !diagnostics.is_empty() {
            return Err(Diagnostics(diagnostics).into());
        }
        let mut kernels: Vec<EmbeddedKernel> = Vec::new();
        for k in &manifest.kernels {
            let objects = built
                .iter()
                .filter(|(o, _)| o.kernel == k.name)
                .map(|(o, syms)| EmbeddedObject {
                    target: o.target.clone(),
                    rel_path: rel_to(&o.path, out_dir),
                    sha256: o.sha256.clone(),
                    symbols: syms.clone(),
                })
                .collect();
            kernels.push(EmbeddedKernel {
                name: k.name.clone(),
                iree_executable: k.iree_executable.clone(),
                objects,
            });
        }
        let manifest_name = manifest_path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = embed::generate(&manifest_name, &kernels);
        let generated = out_dir.join(GENERATED_FILE);
        cache::write_if_changed(&generated, text.as_bytes())
            .map_err(|e| io_error("write the generated Rust", &generated, e))?;
        let objects: Vec<BuiltObject> = built.into_iter().map(|(o, _)| o).collect();
        let mut report = String::new();
        for o in &objects {
            let state = if o.cached { "cached" } else { "assembled" };
            report.push_str(&format!("{state} {} {} {}\n", o.kernel, o.target, o.sha256));
        }
        let report_path = build_dir.join("report.txt");
        cache::write_if_changed(&report_path, report.as_bytes())
            .map_err(|e| io_error("write the build report", &report_path, e))?;
        if cargo_metadata {
            for n in &notes {
                for line in n.render().lines() {
                    println!("cargo:warning={line}");
                }
            }
        }
        let assembled = objects.iter().filter(|o| !o.cached).count();
        println!(
            "gcn-build: {} code objects, {assembled} assembled, {} cached",
            objects.len(),
            objects.len() - assembled
        );
        Ok(Output {
            generated,
            objects,
            notes,
        })
    }
}

/// Prepare, then assemble + link + verify one job unless its object is cached.
fn build_one(
    manifest: &Manifest,
    plan: &pipeline::Plan,
    toolchain: &Toolchain,
    job: &pipeline::Job,
    cache_dir: &Path,
    work_root: &Path,
    build_dir: &Path,
) -> Result<(BuiltObject, Vec<Diagnostic>, Vec<String>), Diagnostics> {
    let kernel = &manifest.kernels[job.kernel];
    let prepared = pipeline::prepare(manifest, plan, job, toolchain.version.major)?;
    let target = job.target.name();
    let key = cache::key(&[
        &prepared.asm.print(),
        &target,
        &prepared.code_object_version.to_string(),
        &toolchain.identity(),
        pipeline::FLAGS_IDENTITY,
    ]);
    let cached_path = cache::entry(cache_dir, &key);
    let (bytes, cached) = match std::fs::read(&cached_path) {
        Ok(bytes) if pipeline::verify(&bytes, &prepared).is_ok() => (bytes, true),
        _ => {
            let work = work_root.join(format!("{}-{}", kernel.name, target.replace(':', "_")));
            std::fs::create_dir_all(&work)
                .map_err(|e| Diagnostics::from(io_error("create", &work, e)))?;
            pipeline::build(toolchain, &prepared, &work, &cached_path)?;
            let bytes = std::fs::read(&cached_path)
                .map_err(|e| Diagnostics::from(io_error("read", &cached_path, e)))?;
            (bytes, false)
        }
    };
    let path = build_dir
        .join(&kernel.name)
        .join(format!("{}.hsaco", target.replace(':', "_")));
    cache::write_if_changed(&path, &bytes)
        .map_err(|e| Diagnostics::from(io_error("write", &path, e)))?;
    let obj = BuiltObject {
        kernel: kernel.name.clone(),
        target,
        path,
        sha256: gcn_patch::manifest::sha256_hex(&bytes),
        cached,
    };
    Ok((obj, prepared.notes, prepared.symbols))
}

fn rel_to(path: &Path, base: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Diagnostic {
    Diagnostic::error(format!("could not {what} `{}`: {e}", path.display()))
        .with_help("check that the output directory is writable and the disk is not full")
}
