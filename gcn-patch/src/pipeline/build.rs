//! The build engine: every kernel × target job of a manifest, in parallel,
//! through the content-addressed object [`cache`](mod@crate::pipeline::cache).
//!
//! gcn-build (in build scripts, under Cargo's jobserver) and the CLI (with a
//! plain thread count) both build through [`build_all`]; they differ only in
//! where they put the code objects it returns.
//!
//! ```no_run
//! # fn main() -> Result<(), gcn_patch::base::diag::Diagnostics> {
//! use gcn_patch::base::jobs;
//! use gcn_patch::config::manifest::Manifest;
//! use gcn_patch::pipeline::{self, build, cache};
//! use gcn_patch::stage::toolchain;
//! let manifest = Manifest::load("kernels.toml".as_ref())?;
//! let plan = pipeline::plan(&manifest, &[])?;
//! let tc = toolchain::Toolchain::find(&Default::default(), &|v| std::env::var(v).ok())?;
//! let opts = build::BuildOptions {
//!     toolchain: &tc,
//!     cache: cache::ObjectCache { local: "out/.cache".into(), shared: None },
//!     work_dir: "out/.work".into(),
//!     max_jobs: 4,
//!     tokens: &jobs::Unlimited,
//!     progress: None,
//!     fingerprints: None,
//! };
//! for built in build::build_all(&manifest, &plan, &opts)? {
//!     let bytes = built.read()?;
//!     std::fs::write(format!("out/{}-{}.hsaco", built.kernel, built.target.name()), bytes)
//!         .unwrap();
//! }
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::hash::sha256_hex;
use crate::base::jobs::{self, Tokens};
use crate::base::progress::{Item, Outcome, Tally, Task};
use crate::config::lock;
use crate::config::manifest::Manifest;
use crate::pipeline::cache::{self, Hit, ObjectCache};
use crate::pipeline::fingerprint::{Fingerprints, Record};
use crate::pipeline::{self, Job, Plan, Prepared, Sources};
use crate::stage::assemble;
use crate::stage::link;
use crate::stage::toolchain::Toolchain;

/// How to run a build.
pub struct BuildOptions<'a> {
    /// clang + ld.lld.
    pub toolchain: &'a Toolchain,
    /// Where objects are cached (local directory, optional shared one).
    pub cache: ObjectCache,
    /// Scratch directory for tools that cannot read their input from stdin
    /// (not Unix: uniquely named temporary objects, removed when the job
    /// ends); on Unix nothing is written there (see [`pipeline::build_bytes`]).
    pub work_dir: PathBuf,
    /// At most this many jobs at once.
    pub max_jobs: usize,
    /// Tokens for each job beyond the first ([`jobs::Unlimited`] outside Cargo).
    pub tokens: &'a dyn Tokens,
    /// Told the job count ([`Task::Build`]), then each finished job (from
    /// the job's thread), with what has finished so far; the CLI draws its
    /// progress bar with it (see [`crate::base::progress`]).
    pub progress: Option<&'a dyn Observer>,
    /// Job fingerprints ([`fingerprint`](mod@crate::pipeline::fingerprint)):
    /// a job whose inputs did not change since it last succeeded takes its
    /// recorded result, without loading, patching or checking its source.
    /// `None`: every job runs (its object may still come from the cache).
    pub fingerprints: Option<&'a Fingerprints>,
}

pub use crate::base::progress::{Observer, Progress, State};

/// One built (or cached) code object.
#[derive(Debug, Clone)]
pub struct BuiltJob {
    /// The job of the plan.
    pub job: Job,
    /// Kernel name from the manifest.
    pub kernel: String,
    /// Target it was built for.
    pub target: TargetId,
    /// The verified code object, in the build's own cache
    /// ([`ObjectCache::local_entry`]): the engine keeps no object in
    /// memory after its job ([`BuiltJob::read`] reads it back).
    pub object: PathBuf,
    /// The object's key in the object cache ([`cache_key`]).
    pub object_key: String,
    /// Hex sha256 of the object.
    pub sha256: String,
    /// Hex sha256 of the patched, retargeted asm that was assembled.
    pub asm_sha256: String,
    /// `None` when assembled by this build, else where the cache hit was.
    pub cached: Option<Hit>,
    /// Kernel symbols in the object (without `.kd`).
    pub symbols: Vec<String>,
    /// Notes worth showing (occupancy changes, register updates, rewrites).
    pub notes: Vec<Diagnostic>,
    /// Findings left out of `notes`: the kernel's accepted file lists them.
    pub accepted: usize,
}

impl BuiltJob {
    /// The code object's bytes, read from the build's cache and checked
    /// against [`BuiltJob::sha256`].
    pub fn read(&self) -> Result<Vec<u8>, Diagnostics> {
        let failed = |why: String| {
            Diagnostics::from(
                Diagnostic::error(
                    Code::ReadFailed,
                    format!(
                        "cannot read the code object of kernel `{}` for {} from the object cache `{}`: {why}",
                        self.kernel,
                        self.target.name(),
                        self.object.display()
                    ),
                )
                .with_help("something removed or changed the build's cache while it ran: build again"),
            )
        };
        let bytes = std::fs::read(&self.object).map_err(|e| failed(e.to_string()))?;
        if sha256_hex(&bytes) != self.sha256 {
            return Err(failed(format!(
                "its sha256 is not the built object's ({})",
                self.sha256
            )));
        }
        Ok(bytes)
    }

    /// Where the object came from.
    pub fn state(&self) -> State {
        match self.cached {
            None => State::Assembled,
            Some(Hit::Local) => State::Cached,
            Some(Hit::Shared) => State::SharedCache,
        }
    }
}

/// Build every job of `plan` (in parallel, cached); results in plan order.
/// Every job's failure is collected, not just the first. Each source is
/// loaded by its first job and dropped after its last ([`each_job`]).
pub fn build_all(
    manifest: &Manifest,
    plan: &Plan,
    opts: &BuildOptions,
) -> Result<Vec<BuiltJob>, Diagnostics> {
    let tally = Tally::start(opts.progress, Task::Build, plan.jobs.len(), opts.max_jobs);
    let results = build_jobs(manifest, plan, opts, &tally, "build");
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut built = Vec::new();
    for (job, r) in plan.jobs.iter().zip(results) {
        // A job that panicked (jobs::run caught it): an error naming the job.
        let r = r.unwrap_or_else(|p| {
            Err(job_panicked(
                p,
                &manifest.kernels[job.kernel].name,
                &job.target,
            ))
        });
        match r {
            Ok(b) => built.push(b),
            // The same error from several jobs (an unwritable cache) is shown once.
            Err(d) => {
                for d in d.0 {
                    if !errors.contains(&d) {
                        errors.push(d);
                    }
                }
            }
        }
    }
    if let Some(shared) = opts.cache.shared.as_ref().and_then(cache::Shared::dir) {
        if built.iter().any(|b| b.cached.is_none()) {
            // Bounded size; a failed trim only leaves the cache larger.
            let _ = shared.trim();
        }
    }
    if errors.is_empty() {
        Ok(built)
    } else {
        Err(Diagnostics(errors))
    }
}

/// Every job of `plan` built ([`build_job`]), results in plan order, each
/// counted on `tally` (`panic_point`: the test hook's stage name). Jobs
/// with a record ([`BuildOptions::fingerprints`]) are looked up first, in a
/// few batches (a thread per batch, not per job: a rerun of thousands of
/// unchanged jobs starts a handful of threads); the others then run as
/// [`each_job`] runs them.
pub(crate) fn build_jobs(
    manifest: &Manifest,
    plan: &Plan,
    opts: &BuildOptions,
    tally: &Tally,
    panic_point: &str,
) -> Vec<Result<Result<BuiltJob, Diagnostics>, jobs::Panicked>> {
    let recorded = take_records(manifest, plan, opts, tally, panic_point);
    let rest = Plan {
        jobs: plan
            .jobs
            .iter()
            .zip(&recorded)
            .filter(|(_, r)| r.is_none())
            .map(|(j, _)| j.clone())
            .collect(),
        checked: plan.checked.clone(),
    };
    let built = each_job(
        manifest,
        &rest,
        opts.max_jobs,
        opts.tokens,
        |job, source| {
            let kernel = &manifest.kernels[job.kernel].name;
            // A panic below is caught by `jobs::run`; the job is counted then too.
            let counted = Finished::start(tally, kernel, &job.target);
            jobs::test_panic_point(panic_point, kernel);
            let result = build_job(manifest, opts, job, source);
            if let Ok(b) = &result {
                counted.outcome.set(Outcome::Built(b.state()));
            }
            result
        },
    );
    let mut built = built.into_iter();
    recorded
        .into_iter()
        .map(|r| match r {
            Some(b) => Ok(Ok(b)),
            None => built
                .next()
                .expect("one result for each job without a record"),
        })
        .collect()
}

/// The jobs of `plan` whose recorded results can be taken ([`from_record`]),
/// in plan order (`None`: the job runs), looked up in at most four batches
/// per worker. The test hook (`panic_point`) fires here too: a batch that
/// panics leaves its jobs to run, where the hook fires again as the job's
/// own error.
fn take_records(
    manifest: &Manifest,
    plan: &Plan,
    opts: &BuildOptions,
    tally: &Tally,
    panic_point: &str,
) -> Vec<Option<BuiltJob>> {
    let n = plan.jobs.len();
    let Some(f) = opts.fingerprints else {
        return (0..n).map(|_| None).collect();
    };
    let identity = opts.toolchain.identity();
    let size = n.div_ceil(opts.max_jobs.max(1) * 4).max(1);
    let batches: Vec<std::ops::Range<usize>> =
        (0..n).step_by(size).map(|a| a..(a + size).min(n)).collect();
    let found = jobs::run(batches.clone(), opts.max_jobs, opts.tokens, |range| {
        range
            .map(|i| {
                let job = &plan.jobs[i];
                if !plan.checked(job.kernel, job.source) {
                    return None;
                }
                jobs::test_panic_point(panic_point, &manifest.kernels[job.kernel].name);
                let key = f.job_key(manifest, (job.kernel, job.source), &job.target, &identity)?;
                let built = from_record(manifest, opts, f, job, f.get(&key)?)?;
                f.reused();
                let kernel = &manifest.kernels[job.kernel].name;
                let counted = Finished::start(tally, kernel, &job.target);
                counted.outcome.set(Outcome::Built(built.state()));
                Some(built)
            })
            .collect::<Vec<_>>()
    });
    // A batch that panicked: its jobs run (and report what went wrong).
    batches
        .into_iter()
        .zip(found)
        .flat_map(|(range, r)| r.unwrap_or_else(|_| range.map(|_| None).collect()))
        .collect()
}

/// Run `f` on every job of `plan`, at most `max_jobs` at once (bounded by
/// `tokens`); results in plan order, a job that panicked as
/// `Err(Panicked)`. `f` gets the job and its source's loader: the source
/// loaded and patched ([`pipeline::load`]), by the first of its jobs to ask,
/// and dropped when the last of them ends ([`Sources`]), so memory holds
/// the documents of the jobs in flight, whatever the size of the manifest.
pub fn each_job<R, F>(
    manifest: &Manifest,
    plan: &Plan,
    max_jobs: usize,
    tokens: &dyn Tokens,
    f: F,
) -> Vec<Result<R, jobs::Panicked>>
where
    R: Send,
    F: Fn(&Job, &dyn Fn() -> Result<Arc<pipeline::Patched>, Diagnostics>) -> R + Sync,
{
    let sources = Sources::new(manifest, &plan.jobs);
    jobs::run(plan.jobs.clone(), max_jobs, tokens, |job| {
        /// Tells `sources` the job is done, even when it panics.
        struct Done<'a, 'm>(&'a Sources<'m>, &'a Job);
        impl Drop for Done<'_, '_> {
            fn drop(&mut self) {
                self.0.done(self.1);
            }
        }
        let _done = Done(&sources, &job);
        let load = || {
            if plan.checked(job.kernel, job.source) {
                sources.get(&job)
            } else {
                Err(pipeline::not_patched(manifest, &job))
            }
        };
        f(&job, &load)
    })
}

/// Reports a kernel × target job to its [`Tally`] when dropped: when it
/// returns and when it unwinds (a panicking job is counted, as failed).
pub(crate) struct Finished<'a> {
    pub(crate) tally: &'a Tally<'a>,
    pub(crate) kernel: &'a str,
    pub(crate) target: &'a TargetId,
    /// How the job ended ([`Outcome::Failed`] until it succeeds).
    pub(crate) outcome: std::cell::Cell<Outcome>,
}

impl<'a> Finished<'a> {
    /// A job of `kernel` for `target` that has started: it counts as
    /// failed unless its outcome is set before it is dropped.
    pub(crate) fn start(tally: &'a Tally<'a>, kernel: &'a str, target: &'a TargetId) -> Self {
        Finished {
            tally,
            kernel,
            target,
            outcome: std::cell::Cell::new(Outcome::Failed),
        }
    }
}

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.tally.finished(
            Item::Job {
                kernel: self.kernel,
                target: self.target,
            },
            self.outcome.get(),
        );
    }
}

/// The error for a kernel × target job that panicked.
pub(crate) fn job_panicked(p: jobs::Panicked, kernel: &str, target: &TargetId) -> Diagnostics {
    p.into_diagnostic(&format!("building kernel `{kernel}` for {}", target.name()))
        .into()
}

/// The cache key of a prepared job: the asm, target, code object version,
/// toolchain identity and the exact assembler and linker arguments (the
/// features an asm text adds, [`assemble::asm_features`], follow from the asm
/// and the target, both in the key).
pub fn cache_key(toolchain: &Toolchain, prepared: &Prepared) -> String {
    cache_key_of(toolchain, prepared, &prepared.asm.print())
}

/// [`cache_key`] with the prepared asm already printed (`asm`).
fn cache_key_of(toolchain: &Toolchain, prepared: &Prepared, asm: &str) -> String {
    let clang = assemble::clang_command(
        toolchain,
        &prepared.target,
        Path::new("in.s"),
        Path::new("out.o"),
    );
    let clang_args: Vec<String> = clang
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    cache::key(&[
        asm,
        &prepared.target.name(),
        &prepared.code_object_version.to_string(),
        &toolchain.identity(),
        &clang_args.join("\u{1f}"),
        &link::LINK_FLAGS.join("\u{1f}"),
    ])
}

/// One job of [`build_all`] and of `gcn-patch check`: its recorded result
/// when [`BuildOptions::fingerprints`] has one for its inputs and the
/// object cache still holds its object (checked against its sha256), else
/// its source loaded (`source`, see [`each_job`]) and built
/// ([`build_loaded`]), and the result recorded.
pub fn build_job(
    manifest: &Manifest,
    opts: &BuildOptions,
    job: &Job,
    source: &dyn Fn() -> Result<Arc<pipeline::Patched>, Diagnostics>,
) -> Result<BuiltJob, Diagnostics> {
    let fingerprint = opts.fingerprints.and_then(|f| {
        let key = f.job_key(
            manifest,
            (job.kernel, job.source),
            &job.target,
            &opts.toolchain.identity(),
        )?;
        Some((f, key))
    });
    if let Some((f, key)) = &fingerprint {
        if let Some(built) = f
            .get(key)
            .and_then(|r| from_record(manifest, opts, f, job, r))
        {
            f.reused();
            return Ok(built);
        }
    }
    let built = source().and_then(|p| build_loaded(manifest, opts, job, &p))?;
    if let Some((f, key)) = &fingerprint {
        f.put(
            key,
            &Record {
                object_key: built.object_key.clone(),
                object_sha256: built.sha256.clone(),
                asm_sha256: built.asm_sha256.clone(),
                symbols: built.symbols.clone(),
                notes: built.notes.clone(),
                accepted: built.accepted,
            },
        );
    }
    Ok(built)
}

/// The job's result from its record: `None` when the object cache no
/// longer holds the recorded object (or holds other bytes under its key).
/// The local entry's sha256 is the one `fingerprints` remembers for its
/// stat data, when that did not change (else it is read and hashed); a
/// shared entry is read, checked and copied as any hit is.
fn from_record(
    manifest: &Manifest,
    opts: &BuildOptions,
    fingerprints: &Fingerprints,
    job: &Job,
    r: Record,
) -> Option<BuiltJob> {
    let local = opts.cache.local_entry(&r.object_key);
    let hit = if fingerprints.sha256_of(&local).as_ref() == Some(&r.object_sha256) {
        Hit::Local
    } else {
        let valid = |b: &[u8]| sha256_hex(b) == r.object_sha256;
        opts.cache.get(&r.object_key, &valid)?.1
    };
    Some(BuiltJob {
        job: job.clone(),
        kernel: manifest.kernels[job.kernel].name.clone(),
        target: job.target,
        object: local,
        object_key: r.object_key,
        sha256: r.object_sha256,
        asm_sha256: r.asm_sha256,
        cached: Some(hit),
        symbols: r.symbols,
        notes: r.notes,
        accepted: r.accepted,
    })
}

/// Prepare one job, then take it from the cache or assemble + link + verify
/// it (one job of [`build_all`], loading its source itself).
pub fn build_one(
    manifest: &Manifest,
    plan: &Plan,
    opts: &BuildOptions,
    job: Job,
) -> Result<BuiltJob, Diagnostics> {
    let (patched, _) = pipeline::job_inputs(manifest, plan, &job, opts.toolchain.version.major)?;
    build_loaded(manifest, opts, &job, &patched)
}

/// [`build_one`] with the job's source loaded (one job of [`build_all`] and
/// of `gcn-patch check`, through [`each_job`]).
pub fn build_loaded(
    manifest: &Manifest,
    opts: &BuildOptions,
    job: &Job,
    patched: &pipeline::Patched,
) -> Result<BuiltJob, Diagnostics> {
    let prepared = pipeline::prepare_loaded(manifest, job, patched, opts.toolchain.version.major)?;
    // The assembler's input, printed once for the key and the lock.
    let asm = prepared.asm.print();
    let key = cache_key_of(opts.toolchain, &prepared, &asm);
    let asm_sha256 = sha256_hex(asm.as_bytes());
    drop(asm);
    let valid = |b: &[u8]| pipeline::verify(b, &prepared).is_ok();
    let (bytes, cached) = match opts.cache.get(&key, &valid) {
        Some((bytes, hit)) => (bytes, Some(hit)),
        None => {
            // The tools run in memory: nothing is written but the cache entry.
            // A job failing here passed every check: its preparation notes
            // (retargeting, raw lines) go with the error.
            let (bytes, _) = pipeline::build_bytes(opts.toolchain, &prepared, &opts.work_dir)
                .map_err(|mut e| {
                    e.0.extend(prepared.notes.iter().cloned());
                    e
                })?;
            opts.cache.store(&key, &bytes).map_err(|e| {
                Diagnostics::from(
                    Diagnostic::error(
                        Code::WriteFailed,
                        format!(
                            "could not write to the object cache `{}`: {e}",
                            opts.cache.local.display()
                        ),
                    )
                    .with_help(
                        "the output directory must be a directory you can write to (no part \
                         of its path a regular file), on a disk that is not full",
                    ),
                )
            })?;
            (bytes, None)
        }
    };
    Ok(BuiltJob {
        kernel: prepared.kernel.clone(),
        target: prepared.target,
        sha256: sha256_hex(&bytes),
        asm_sha256,
        object: opts.cache.local_entry(&key),
        object_key: key,
        cached,
        symbols: prepared.symbols,
        notes: prepared.notes,
        accepted: prepared.accepted,
        job: job.clone(),
    })
}

/// The one lock writer of `gcn-patch build` and gcn-build ([`crate::config::lock`]): the lock of what
/// `built` produced with `toolchain`. `locked`: check that it reproduces the
/// lock next to the manifest (nothing written); else merge it over that lock
/// and write it. Returns the lock's path.
pub fn record_lock(
    manifest: &Manifest,
    toolchain: &Toolchain,
    built: &[BuiltJob],
    locked: bool,
) -> Result<PathBuf, Diagnostics> {
    let path = lock::path_for(&manifest.path);
    let now = lock::Lock::new(
        &toolchain.version_text,
        built.iter().map(|b| lock::Entry {
            kernel: b.kernel.clone(),
            target: b.target.name(),
            asm_sha256: b.asm_sha256.clone(),
            object_sha256: b.sha256.clone(),
        }),
    );
    let old = lock::Lock::load(&path)?;
    if locked {
        now.check_reproduces(old.as_ref(), &path)?;
    } else {
        now.merged_over(old.as_ref(), manifest).write(&path)?;
    }
    Ok(path)
}
