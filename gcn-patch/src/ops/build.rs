//! `gcn-patch build` and `gcn-patch triton-override`: the build engine
//! outside Cargo, installed into an output layout, with the lock recorded.

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use super::Tools;
use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::output::{write_if_changed, Durability};
pub use crate::base::progress::{Observer, Progress, State};
use crate::config::manifest::Manifest;
use crate::pipeline;
use crate::pipeline::build::build_all;

/// Which jobs to build and where their objects go.
#[derive(Debug, Clone)]
pub enum Layout {
    /// `gcn-patch build [--target …]`: `DIR/<target>/<exec or kernel>.hsaco`,
    /// only the given targets when any (a family expands to its targets:
    /// [`crate::ops::expand_targets`]).
    Build(Vec<TargetId>),
    /// `gcn-patch triton-override`: `DIR/<hash>/<kernel>.hsaco` per Triton kernel.
    TritonOverride,
}

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// The manifest.
    pub manifest: PathBuf,
    /// The output directory.
    pub out: PathBuf,
    /// Which jobs, and their files.
    pub layout: Layout,
    /// Check that the build reproduces kernels.lock instead of writing it.
    pub locked: bool,
    /// Parallel jobs (default: the number of CPUs).
    pub jobs: Option<usize>,
    /// The LLVM tools.
    pub tools: Tools,
}

impl BuildRequest {
    /// How many jobs run at once.
    pub fn max_jobs(&self) -> usize {
        crate::base::jobs::workers(self.jobs)
    }
}

/// One built code object and the files it was installed as.
#[derive(Debug, Clone)]
pub struct Row {
    /// Kernel name.
    pub kernel: String,
    /// Target.
    pub target: TargetId,
    /// Where the object came from.
    pub state: State,
    /// Hex sha256 of the object.
    pub sha256: String,
    /// The files written, relative to the output directory.
    pub files: Vec<PathBuf>,
}

/// What a build did.
#[derive(Debug)]
pub struct BuildReport {
    /// One row per code object, in plan order.
    pub rows: Vec<Row>,
    /// Notes of the built jobs (occupancy changes, register updates,
    /// rewrites): each job's repeats once, and the register updates and
    /// occupancy reports of all jobs in one note, last
    /// ([`crate::ops::notes`]).
    pub notes: Vec<Diagnostic>,
    /// The lock file written (or checked, with `locked`).
    pub lock: PathBuf,
    /// Findings left out of `notes`: their kernels' accepted files list them.
    pub accepted: usize,
    /// What went wrong with the shared cache, once (a remote cache that
    /// failed and was not used for the rest of the build): the build is fine.
    pub cache_warning: Option<String>,
}

impl BuildReport {
    /// How many objects were assembled (not taken from a cache).
    pub fn assembled(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.state == State::Assembled)
            .count()
    }
}

/// `gcn-patch build` / `triton-override`: plan, build in parallel through the
/// shared engine (`observer` watching it), check or write the lock, install the objects (files are
/// written only when their bytes changed).
pub fn build(
    req: &BuildRequest,
    observer: Option<&dyn Observer>,
) -> Result<BuildReport, Diagnostics> {
    let manifest = &req.manifest;
    let out = &req.out;
    let m = Manifest::load(manifest)?;
    let mut wanted: Vec<TargetId> = Vec::new();
    if let Layout::Build(targets) = &req.layout {
        for t in targets {
            if !wanted.contains(t) {
                wanted.push(*t);
            }
        }
    }
    let max_jobs = req.max_jobs();
    // The engine first: its fingerprints let the plan skip sources checked
    // before. Its own errors (no toolchain) come after the plan's.
    let engine = req
        .tools
        .engine(&m, Some(max_jobs), &out.join(".gcn-patch"));
    let mut plan = pipeline::plan_cached(
        &m,
        &wanted,
        max_jobs,
        &crate::base::jobs::Unlimited,
        engine.as_ref().ok().map(|e| &e.fingerprints),
    )?;
    if !wanted.is_empty() {
        plan.jobs.retain(|j| wanted.contains(&j.target));
        for t in &wanted {
            if !plan.jobs.iter().any(|j| j.target == *t) {
                return Err(Diagnostic::error(Code::NoKernelForTarget, format!(
                    "no kernel of {} builds for {}",
                    manifest.display(),
                    t.name()
                ))
                .with_help("a source builds for its `targets` and for targets of its dump's generation; check the requested targets")
                .into());
            }
        }
    }
    if plan.jobs.is_empty() {
        return Err(
            Diagnostic::error(Code::NoKernels, format!("{} lists no kernel to build", manifest.display()))
                .with_help("import dumps with `gcn-patch import DUMP...` or add a [[kernel]] (see docs/src/reference/kernels-toml.md)")
                .into(),
        );
    }
    let files = match req.layout {
        Layout::Build(_) => {
            let pairs: Vec<(usize, TargetId)> =
                plan.jobs.iter().map(|j| (j.kernel, j.target)).collect();
            crate::ops::install::plan_files(&m, out, &pairs)?
        }
        Layout::TritonOverride => {
            let files = crate::ops::install::triton_override_files(&m, &plan, out)?;
            plan.jobs.retain(|j| {
                files
                    .iter()
                    .any(|(k, t, _)| *k == j.kernel && *t == j.target)
            });
            files
        }
    };
    let engine = engine?;
    let opts = engine.options(&crate::base::jobs::Unlimited, observer);
    // The job records and file hashes, for the next build: written only
    // when the build succeeds (a failed one leaves no partial output).
    let built = build_all(&m, &plan, &opts)?;
    engine.fingerprints.save();
    let lock = crate::pipeline::build::record_lock(&m, &engine.toolchain, &built, req.locked)?;
    let mut report = BuildReport {
        rows: Vec::with_capacity(built.len()),
        notes: Vec::new(),
        lock,
        accepted: 0,
        cache_warning: engine.cache.warning(),
    };
    // Each job's files, found once (not a scan of every file per job).
    let mut by_job: std::collections::HashMap<(usize, TargetId), Vec<&PathBuf>> =
        std::collections::HashMap::new();
    for (k, t, p) in &files {
        by_job.entry((*k, *t)).or_default().push(p);
    }
    let mut register_notes: Vec<(String, TargetId, Vec<Diagnostic>)> = Vec::new();
    for b in built {
        let mut written = Vec::new();
        let paths = by_job
            .get(&(b.job.kernel, b.target))
            .map_or(&[][..], Vec::as_slice);
        // The object, read back from the build's cache (the engine keeps
        // none in memory), once for all its files.
        let bytes = if paths.is_empty() {
            Vec::new()
        } else {
            b.read()?
        };
        for p in paths {
            write_if_changed(p, &bytes, Durability::Unsynced).map_err(|e| {
                Diagnostic::error(
                    Code::WriteFailed,
                    format!("cannot write `{}`: {e}", p.display()),
                )
                .with_help("check that the output directory is writable")
            })?;
            written.push(relative(p, out));
        }
        let state = b.state();
        report.notes.extend(crate::ops::notes::collapse_repeats(
            b.notes
                .iter()
                .filter(|d| !crate::ops::notes::is_register_note(d))
                .cloned()
                .collect(),
        ));
        register_notes.push((b.kernel.clone(), b.target, b.notes));
        report.accepted += b.accepted;
        report.rows.push(Row {
            kernel: b.kernel,
            target: b.target,
            state,
            sha256: b.sha256,
            files: written,
        });
    }
    report.notes.extend(crate::ops::notes::register_summary(
        register_notes
            .iter()
            .map(|(k, t, n)| (k.as_str(), t, n.as_slice())),
    ));
    Ok(report)
}

fn relative(p: &Path, out: &Path) -> PathBuf {
    p.strip_prefix(out).unwrap_or(p).to_path_buf()
}
