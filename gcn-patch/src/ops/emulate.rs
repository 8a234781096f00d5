//! `gcn-patch compare` and `gcn-patch test`: the launches a kernel declares
//! in `kernels.toml` (`[[kernel.launch]]`, [`gcn_emu::launch::LaunchSpec`])
//! run in the emulator.
//!
//! - [`compare`] builds a kernel's unpatched and patched objects through the
//!   pipeline (as `objdiff` does), runs both on the same inputs and compares
//!   every buffer element by element.
//! - [`test()`] builds every kernel that declares launches, for every target
//!   the emulator runs, and runs each launch with the sanitizer.
//!
//! Neither prints: they return reports the binary renders.

use gcn_emu::sanitize::Checks;
use std::path::PathBuf;

use gcn_embed::TargetId;
use gcn_emu::approx::Executed;
use gcn_emu::decode::Program;
use gcn_emu::dispatch::{Launch, Stats, TARGETS};
use gcn_emu::launch::{Comparison, LaunchSpec, Output, Tolerance};
use gcn_emu::load::CodeObject;
use gcn_emu::memory::Memory;

use super::{scratch, Tools};
use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::config::manifest::{KernelSpec, Manifest};
use crate::pipeline::{self, Job, Plan, Prepared};
use crate::stage::toolchain::Toolchain;

/// How many differing elements of each buffer a comparison keeps.
pub const FIRST_DIFFERENCES: usize = 5;

/// A tolerance as written (`exact`, `abs:X`, `rel:X`, `abs:X,rel:Y`,
/// `ulp:N`: [`Tolerance::parse`]).
pub fn parse_tolerance(spec: &str) -> Result<Tolerance, Diagnostics> {
    Tolerance::parse(spec)
        .map_err(|e| Diagnostics::from(Diagnostic::error(Code::BadTolerance, e.to_string())))
}

/// What `gcn-patch compare` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
    /// Only this target (default: every target of the kernel the emulator
    /// runs).
    pub target: Option<TargetId>,
    /// Overrides every launch's `tolerance` ([`parse_tolerance`] reads the
    /// command line's `exact`, `abs:X`, `rel:X`, `abs:X,rel:Y`, `ulp:N`).
    pub tolerance: Option<Tolerance>,
    /// Per-wave instruction budget (default
    /// [`gcn_emu::dispatch::DEFAULT_MAX_INSTRUCTIONS`]).
    pub max_instructions: Option<u64>,
    /// The processor generic targets run as (default: the first of each
    /// family the emulator runs; [`super::run::run_as`]).
    pub run_as: Option<String>,
    /// Perturb the results of approximate instructions within their
    /// documented bounds with this seed, on both sides alike
    /// ([`Launch::perturb_approx`]: the same input gives the same result
    /// on both sides, so only approximations the patch adds or feeds
    /// differently can change results). Overrides the launches'
    /// `perturb-approx`.
    pub perturb_approx: Option<u64>,
    /// The most instructions a wave runs before the next wave's, on both
    /// sides ([`Launch::slice`]; 0: until it ends or reaches `s_barrier`).
    pub slice: u64,
}

/// One launch of one target, compared.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The target.
    pub target: String,
    /// The launch's name (`name`, or `launch N`).
    pub launch: String,
    /// Its manifest line.
    pub line: usize,
    /// The comparison, or why a side could not run (fault, unsupported
    /// instruction, instruction budget), naming the side.
    pub result: Result<Comparison, String>,
    /// The dynamic LDS both sides ran with ([`launch_lds`]).
    pub dynamic_lds: u32,
    /// LDS accesses outside the allocation ([`Stats::lds_out_of_range`]),
    /// unpatched and patched side: they read 0 and dropped their writes.
    pub lds_out_of_range: (u64, u64),
    /// The approximate instructions each side executed (unpatched,
    /// patched; empty for a side that failed).
    pub approx: [Vec<Executed>; 2],
    /// The approximate instructions the patched side executed whose text
    /// the unpatched side's executed ones lack (new or changed by the
    /// patch).
    pub added: Vec<Executed>,
    /// The perturbation seed both sides ran with (the option's, else the
    /// launch's `perturb-approx`), `None`: correctly rounded.
    pub perturb_approx: Option<u64>,
}

/// What `gcn-patch compare` found.
#[derive(Debug, Clone)]
pub struct CompareReport {
    /// The kernel.
    pub kernel: String,
    /// One per target and launch, in manifest order.
    pub rows: Vec<Compared>,
}

impl CompareReport {
    /// Whether every launch ran on both sides and every buffer agreed.
    pub fn equal(&self) -> bool {
        self.rows
            .iter()
            .all(|r| r.result.as_ref().is_ok_and(|c| c.equal()))
    }
}

/// What `gcn-patch test` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct TestOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// Only this kernel (default: every kernel that declares launches).
    pub kernel: Option<String>,
    /// Only this target (default: every target the emulator runs).
    pub target: Option<TargetId>,
    /// The schedule seeds to run each launch with ([`Launch::seed`]; default
    /// `[0]`).
    pub seeds: Vec<u64>,
    /// Per-wave instruction budget.
    pub max_instructions: Option<u64>,
    /// The sanitizer's checks, over each launch's `sanitize` (default:
    /// [`Checks::DEFAULT`], every check but the opt-in `barrier-pairs`).
    pub sanitize: Option<Checks>,
    /// The processor generic targets run as (default: the first of each
    /// family the emulator runs; [`super::run::run_as`]).
    pub run_as: Option<String>,
    /// Perturb the results of approximate instructions within their
    /// documented bounds with this seed ([`Launch::perturb_approx`]).
    pub perturb_approx: Option<u64>,
    /// Under schedule seed 0, the most instructions a wave runs before the
    /// next wave's ([`Launch::slice`]; 0: until it ends or reaches
    /// `s_barrier`).
    pub slice: u64,
}

/// How one launch of the patched object went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Ran clean under every seed: wave-instructions of the first run.
    Clean(u64),
    /// The sanitizer's findings under every seed that had any.
    Findings(Findings),
    /// A fault, unsupported instruction or instruction budget (the seeds
    /// after the one it happened under are not run).
    Failed(String),
}

/// The sanitizer's findings of one launch, over the seeds it ran.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Findings {
    /// The seeds whose runs had findings, in the order run.
    pub seeds: Vec<u64>,
    /// Each distinct finding (kind, instruction, other instruction) once,
    /// in the order first found.
    pub findings: Vec<Reported>,
}

/// One distinct sanitizer finding of a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// The full report, as the first seed that had it gave it.
    pub full: String,
    /// The same in one line ([`gcn_emu::sanitize::Finding::summary`]).
    pub summary: String,
    /// The seeds whose runs had it.
    pub seeds: Vec<u64>,
    /// Its kind.
    pub kind: gcn_emu::sanitize::Kind,
    /// The instruction that found it and the other one.
    key: (u64, Option<u64>),
}

impl Findings {
    /// Add the findings of the run under `seed`.
    fn add(&mut self, seed: u64, found: &[gcn_emu::sanitize::Finding], program: &Program) {
        if found.is_empty() {
            return;
        }
        self.seeds.push(seed);
        for f in found {
            let kind = f.kind;
            let key = (f.addr, f.other);
            match self
                .findings
                .iter_mut()
                .find(|r| r.kind == kind && r.key == key)
            {
                Some(r) => r.seeds.push(seed),
                None => self.findings.push(Reported {
                    full: f.to_string(),
                    summary: f.summary(program),
                    seeds: vec![seed],
                    kind,
                    key,
                }),
            }
        }
    }
}

/// One launch of one kernel for one target, tested.
#[derive(Debug, Clone)]
pub struct Tested {
    /// The kernel.
    pub kernel: String,
    /// The target.
    pub target: String,
    /// The launch's name.
    pub launch: String,
    /// Its manifest line.
    pub line: usize,
    /// The schedule seeds it ran under, in order.
    pub seeds: Vec<u64>,
    /// What happened.
    pub outcome: Outcome,
    /// The sanitizer's checks it ran with.
    pub checks: Checks,
    /// The approximate instructions the first run executed.
    pub approx: Vec<Executed>,
}

/// What `gcn-patch test` found.
#[derive(Debug, Clone, Default)]
pub struct TestReport {
    /// One per kernel, target and launch run.
    pub rows: Vec<Tested>,
    /// Targets of kernels with launches that the emulator does not run
    /// (RDNA, generic targets of no emulated processor, gfx908 and older),
    /// per kernel: shown, never silently passed over.
    pub not_run: Vec<(String, Vec<String>)>,
    /// The schedule seeds each launch runs under, in order.
    pub seeds: Vec<u64>,
}

impl TestReport {
    /// Whether every launch ran clean.
    pub fn passed(&self) -> bool {
        self.rows
            .iter()
            .all(|r| matches!(r.outcome, Outcome::Clean(_)))
    }
}

/// Whether the emulator runs `t` (its processor, any features): one of
/// [`TARGETS`], or a generic target that covers one (run as that
/// processor, [`super::run::run_as`]).
pub fn emulated(t: &TargetId) -> bool {
    let name = t.name();
    let processor = name.split(':').next().unwrap_or("");
    TARGETS.contains(&processor) || super::run::run_as(processor, None).is_ok_and(|p| p.is_some())
}

/// The processor target `t` runs as, `run_as` for a generic one when
/// given, and its label in reports: `gfx942`, or `gfx9-4-generic as
/// gfx942`.
fn runs_as(t: &TargetId, run_as: Option<&str>) -> Result<(Option<String>, String), Diagnostics> {
    let name = t.name();
    let processor = name.split(':').next().unwrap_or("");
    let generic = processor.ends_with("-generic");
    match super::run::run_as(processor, run_as.filter(|_| generic)) {
        Ok(Some(p)) => Ok((Some(p.clone()), format!("{name} as {p}"))),
        Ok(None) => Ok((None, name)),
        Err(e) => Err(Diagnostic::error(Code::TargetNotEmulated, e)
            .about(crate::base::diag::Setting::RunAs)
            .into()),
    }
}

fn no_launch(m: &Manifest, k: &KernelSpec) -> Diagnostics {
    Diagnostic::error(Code::NoLaunch, format!(
        "kernel `{}` declares no launch in {}",
        k.name,
        m.path.display()
    ))
    .with_help("add one after its sources (schema: docs/src/reference/kernels-toml.md, \"[[kernel.launch]]\"), e.g.\n[[kernel.launch]]\ngrid = 4\nblock = 256\nargs = [{ random = \"f32\", shape = 1024 }, { output = \"f32\", shape = 1024 }]")
    .into()
}

/// The jobs of kernel `ki` the emulator runs, for `target` or all of its
/// declared targets (one job per target: the first source that declares
/// it, else, for a `target` no source declares, the first that builds for
/// it), and the kernel's targets it does not run. An error names the
/// targets when none is runnable.
fn emulated_jobs(
    m: &Manifest,
    ki: usize,
    target: Option<&TargetId>,
) -> Result<(Plan, Vec<Job>, Vec<String>), Diagnostics> {
    let k = &m.kernels[ki];
    let t = target.copied();
    if let Some(t) = &t {
        if !emulated(t) {
            return Err(Diagnostic::error(
                Code::TargetNotEmulated,
                format!(
                    "the emulator does not run {}: it runs {}",
                    t.name(),
                    TARGETS.join(", ")
                ),
            )
            .into());
        }
    }
    let mut plan = pipeline::plan(m, &[])?;
    let declared = |plan: &Plan| -> Vec<Job> {
        let mut jobs: Vec<Job> = Vec::new();
        for j in plan.jobs.iter().filter(|j| j.kernel == ki) {
            if t.as_ref().is_none_or(|t| &j.target == t)
                && !jobs.iter().any(|x| x.target == j.target)
            {
                jobs.push(j.clone());
            }
        }
        jobs
    };
    let mut all = declared(&plan);
    if all.is_empty() {
        if let Some(t) = &t {
            plan = pipeline::plan(m, std::slice::from_ref(t))?;
            all = declared(&plan);
        }
    }
    let (jobs, skipped): (Vec<Job>, Vec<Job>) = all.into_iter().partition(|j| emulated(&j.target));
    let skipped: Vec<String> = skipped.iter().map(|j| j.target.name()).collect();
    if jobs.is_empty() {
        return Err(Diagnostic::error(
            Code::TargetNotEmulated,
            format!(
                "kernel `{}` has no target the emulator runs ({})",
                k.name,
                TARGETS.join(", ")
            ),
        )
        .with_note(format!(
            "its targets: {}",
            if skipped.is_empty() {
                "none".to_string()
            } else {
                skipped.join(", ")
            }
        ))
        .with_help("add gfx90a, gfx942 or gfx950 to a source's `targets`, or pass --target")
        .into());
    }
    Ok((plan, jobs, skipped))
}

/// A built object, loaded and decoded, with its asm attached for lines.
struct Loaded {
    co: CodeObject,
    program: Program,
    kernel: gcn_emu::load::Kernel,
}

fn load(
    tc: &Toolchain,
    prepared: &Prepared,
    side: &str,
    spec_kernel: Option<&str>,
    dir: &std::path::Path,
    run_as: Option<&str>,
) -> Result<Loaded, Diagnostics> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            Code::CreateDirFailed,
            format!("cannot create `{}`: {e}", dir.display()),
        ))
    })?;
    let out = dir.join("out.hsaco");
    pipeline::build(tc, prepared, dir, &out)?;
    let err = |e: gcn_emu::Error| {
        Diagnostics::from(Diagnostic::error(Code::EmulatorFailed, e.to_string()))
    };
    let mut co = CodeObject::read_file(&out).map_err(err)?;
    if let Some(p) = run_as {
        co.processor = p.to_string();
    }
    let kernel = match spec_kernel {
        Some(name) => co.kernel(name).map_err(err)?.clone(),
        None if co.kernels.len() == 1 => co.kernels[0].clone(),
        None => {
            return Err(Diagnostic::error(
                Code::LaunchKernelAmbiguous,
                format!(
                "the {side} object of kernel `{}` holds {} kernels ({}): the launch must name one",
                prepared.kernel,
                co.kernels.len(),
                co.kernels
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            )
            .with_help("add `kernel = \"SYMBOL\"` to the [[kernel.launch]]")
            .into())
        }
    };
    let mut program = super::run::disassemble(tc, &co, &kernel)?;
    let text: String = prepared.asm.texts().flat_map(|l| [l, "\n"]).collect();
    let file = format!(
        "{}.{side}.{}.s",
        prepared.kernel,
        prepared.target.name().replace(':', "_")
    );
    program.attach_source(&file, &text);
    Ok(Loaded {
        co,
        program,
        kernel,
    })
}

/// The emulator's reading of the manifest: every kernel's
/// `[[kernel.launch]]` tables as launch descriptions (other keys ignored).
#[derive(serde::Deserialize)]
struct LaunchView {
    #[serde(default)]
    kernel: Vec<KernelLaunches>,
}

#[derive(serde::Deserialize)]
struct KernelLaunches {
    #[serde(default)]
    launch: Vec<toml::Spanned<LaunchSpec>>,
}

/// One `[[kernel.launch]]`, read as a launch description.
struct Declared {
    /// 1-based manifest line of its header.
    line: usize,
    spec: LaunchSpec,
}

/// Every kernel's launches, in manifest order (indexed like
/// [`Manifest::kernels`]); a bad launch is an error at its key.
fn declared(m: &Manifest) -> Result<Vec<Vec<Declared>>, Diagnostics> {
    let view: LaunchView = m.read_view()?;
    Ok(view
        .kernel
        .into_iter()
        .map(|k| {
            k.launch
                .into_iter()
                .map(|l| Declared {
                    line: m.line_of(l.span().start),
                    spec: l.into_inner(),
                })
                .collect()
        })
        .collect())
}

/// The launch declared at `decl` fits the kernel's arguments, or an error
/// at its manifest line.
fn fits(m: &Manifest, decl: &Declared, l: &Loaded) -> Result<(), Diagnostics> {
    decl.spec.check(&l.kernel).map_err(|e| {
        Diagnostics::from(
            Diagnostic::error(
                Code::LaunchDoesNotFit,
                format!("{}:{}: {e}", m.path.display(), decl.line),
            )
            .with_help("give one argument per explicit kernel argument, in metadata order (`args = [ … ]`), or by name (`args = { NAME = { … } }`, `zero-rest = true` for the by-value ones left)"),
        )
    })
}

/// The dynamic LDS a launch of `job` runs with: the launch's `dynamic-lds`,
/// else the `shared` bytes the job's source records for a Triton kernel
/// (Triton launches with them), else 0.
pub fn launch_lds(m: &Manifest, job: &Job, spec: &LaunchSpec) -> u32 {
    spec.dynamic_lds.unwrap_or_else(|| {
        m.kernels[job.kernel]
            .sources
            .get(job.source)
            .and_then(|s| s.triton.as_ref())
            .and_then(|t| t.shared)
            .unwrap_or(0)
    })
}

/// The command line's settings of a [`run_once`] launch.
#[derive(Debug, Clone, Copy)]
struct Knobs {
    max_instructions: Option<u64>,
    perturb_approx: Option<u64>,
    slice: u64,
}

/// Run `spec` on `l` with `dynamic_lds` bytes of dynamic LDS; the buffers
/// afterwards and the stats.
fn run_once(
    l: &Loaded,
    spec: &LaunchSpec,
    dynamic_lds: u32,
    sanitize: Checks,
    seed: u64,
    knobs: Knobs,
) -> Result<(Vec<Output>, Stats), String> {
    let mem = Memory::new();
    let p = spec.prepare(&l.kernel, &mem).map_err(|e| e.to_string())?;
    let mut launch = Launch::new(spec.grid.0, spec.block.0);
    launch.cluster = spec.cluster.map_or([0; 3], |c| c.0);
    launch.dynamic_lds = dynamic_lds;
    launch.sanitize = sanitize;
    launch.seed = seed;
    launch.slice = knobs.slice;
    launch.perturb_approx = knobs.perturb_approx.or(spec.perturb_approx);
    if let Some(m) = knobs.max_instructions {
        launch.max_instructions = m;
    }
    let stats = gcn_emu::dispatch::run(&l.co, &l.kernel, &l.program, &mem, &p.values, &launch)
        .map_err(|e| e.to_string())?;
    Ok((p.outputs(&mem), stats))
}

/// The approximate instructions of `patched` whose text `unpatched` lacks
/// (as many times as it lacks it): the ones a patch adds or changes.
pub fn added_approx(unpatched: &[Executed], patched: &[Executed]) -> Vec<Executed> {
    let mut have: Vec<&str> = unpatched.iter().map(|e| e.text.as_str()).collect();
    patched
        .iter()
        .filter(|e| match have.iter().position(|t| *t == e.text) {
            Some(i) => {
                have.swap_remove(i);
                false
            }
            None => true,
        })
        .cloned()
        .collect()
}

/// One declared launch of one target, both sides built as `objdiff` builds
/// them and loaded ([`each_pair`]).
struct Pair<'a> {
    /// The manifest.
    m: &'a Manifest,
    /// The launch.
    decl: &'a Declared,
    /// Its index among the kernel's launches.
    li: usize,
    /// The target's label (`gfx942`, `gfx9-4-generic as gfx942`).
    target: &'a str,
    /// The processor it runs as.
    processor: &'a str,
    /// The unpatched side.
    unpatched: Loaded,
    /// The patched side (checked to fit the launch).
    patched: Loaded,
    /// The dynamic LDS both sides run with ([`launch_lds`]).
    lds: u32,
}

/// The launch loop of `compare` and `profile`: for each target of kernel
/// `opts.kernel` the emulator runs (or `opts.target`) whose processor
/// `keep` accepts, and each declared launch, both sides built and loaded,
/// given to `f`. `run_as` is the processor a generic target runs as (the
/// job's choice; [`runs_as`]). Returns the kernel's name.
fn each_pair(
    opts: &CompareOptions,
    tools: &Tools,
    run_as: impl Fn(&Job) -> Option<String>,
    keep: impl Fn(&str) -> bool,
    mut f: impl FnMut(Pair<'_>) -> Result<(), Diagnostics>,
) -> Result<String, Diagnostics> {
    let m = Manifest::load(&opts.manifest)?;
    let ki = m.kernel_index(&opts.kernel)?;
    let k = &m.kernels[ki];
    if k.launches.is_empty() {
        return Err(no_launch(&m, k));
    }
    let launches = declared(&m)?;
    let (plan, jobs, _) = emulated_jobs(&m, ki, opts.target.as_ref())?;
    let tc = tools.find(Some(&m))?;
    let work = scratch()?;
    for job in &jobs {
        let (run_as, t) = runs_as(&job.target, run_as(job).as_deref())?;
        let processor = run_as
            .clone()
            .unwrap_or(job.target.processor.name.to_string());
        if !keep(&processor) {
            continue;
        }
        let patched = pipeline::prepare(&m, &plan, job, tc.version.major)?;
        let (original, popts) = pipeline::job_inputs(&m, &plan, job, tc.version.major)?;
        // The unpatched side as objdiff builds it: the dump as shipped,
        // judged against itself.
        let unpatched = pipeline::prepare_traced_with(
            &k.name,
            Some(&original.original),
            &original.original,
            &popts,
            crate::config::policy::RegisterPolicy::Error,
            crate::config::policy::HazardPolicy::Warn,
        )?;
        let dir = work.path().join(t.replace([':', ' '], "_"));
        for (li, decl) in launches[ki].iter().enumerate() {
            let spec = &decl.spec;
            let name = spec.kernel.as_deref();
            let a = load(
                &tc,
                &unpatched,
                "unpatched",
                name,
                &dir.join("unpatched"),
                run_as.as_deref(),
            )?;
            let b = load(
                &tc,
                &patched,
                "patched",
                name,
                &dir.join("patched"),
                run_as.as_deref(),
            )?;
            fits(&m, decl, &b)?;
            f(Pair {
                m: &m,
                decl,
                li,
                target: &t,
                processor: &processor,
                unpatched: a,
                patched: b,
                // Both sides get the same LDS.
                lds: launch_lds(&m, job, spec),
            })?;
        }
    }
    Ok(k.name.clone())
}

/// `gcn-patch compare KERNEL`: for each target the emulator runs and each
/// declared launch, the unpatched and the patched object on the same inputs,
/// every buffer compared.
pub fn compare(opts: &CompareOptions, tools: &Tools) -> Result<CompareReport, Diagnostics> {
    let mut rows = Vec::new();
    let kernel = each_pair(
        opts,
        tools,
        |_| opts.run_as.clone(),
        |_| true,
        |p| {
            let spec = &p.decl.spec;
            let tol = opts.tolerance.unwrap_or(spec.tolerance);
            let mut oob = (0, 0);
            let knobs = Knobs {
                max_instructions: opts.max_instructions,
                perturb_approx: opts.perturb_approx,
                slice: opts.slice,
            };
            let (x, y) = (
                run_once(&p.unpatched, spec, p.lds, Checks::NONE, 0, knobs),
                run_once(&p.patched, spec, p.lds, Checks::NONE, 0, knobs),
            );
            let approx = [&x, &y].map(|r| {
                r.as_ref()
                    .map(|(_, s)| s.approx.clone())
                    .unwrap_or_default()
            });
            let added = added_approx(&approx[0], &approx[1]);
            let result = match (x, y) {
                (Err(e), _) => Err(format!("the unpatched object failed: {e}")),
                (_, Err(e)) => Err(format!("the patched object failed: {e}")),
                (Ok((x, sx)), Ok((y, sy))) => {
                    oob = (sx.lds_out_of_range, sy.lds_out_of_range);
                    gcn_emu::launch::compare(&x, &y, tol, FIRST_DIFFERENCES)
                        .map_err(|e| e.to_string())
                }
            };
            rows.push(Compared {
                target: p.target.to_string(),
                launch: spec.label(p.li),
                line: p.decl.line,
                result,
                dynamic_lds: p.lds,
                lds_out_of_range: oob,
                approx,
                added,
                perturb_approx: opts.perturb_approx.or(spec.perturb_approx),
            });
            Ok(())
        },
    )?;
    Ok(CompareReport { kernel, rows })
}

/// `gcn-patch test`: every declared launch of every kernel (or `kernel`),
/// for every target the emulator runs (or `target`), on the patched object
/// with the sanitizer, under each schedule seed.
pub fn test(opts: &TestOptions, tools: &Tools) -> Result<TestReport, Diagnostics> {
    let m = Manifest::load(&opts.manifest)?;
    let kernels: Vec<usize> = match &opts.kernel {
        Some(name) => {
            let ki = m.kernel_index(name)?;
            if m.kernels[ki].launches.is_empty() {
                return Err(no_launch(&m, &m.kernels[ki]));
            }
            vec![ki]
        }
        None => (0..m.kernels.len())
            .filter(|&i| !m.kernels[i].launches.is_empty())
            .collect(),
    };
    if kernels.is_empty() {
        return Err(Diagnostic::error(
            Code::NoLaunch,
            format!("no kernel of {} declares a launch", m.path.display()),
        )
        .with_help(
            "add a [[kernel.launch]] to a kernel (schema: docs/src/reference/kernels-toml.md)",
        )
        .into());
    }
    let seeds = if opts.seeds.is_empty() {
        vec![0]
    } else {
        opts.seeds.clone()
    };
    let launches = declared(&m)?;
    let tc = tools.find(Some(&m))?;
    let work = scratch()?;
    let mut report = TestReport {
        seeds: seeds.clone(),
        ..TestReport::default()
    };
    for ki in kernels {
        let k = &m.kernels[ki];
        let (plan, jobs) = match emulated_jobs(&m, ki, opts.target.as_ref()) {
            Ok((plan, jobs, skipped)) => {
                if !skipped.is_empty() {
                    report.not_run.push((k.name.clone(), skipped));
                }
                (plan, jobs)
            }
            Err(_) if opts.target.is_none() => {
                let plan = pipeline::plan(&m, &[])?;
                let mut have: Vec<String> = Vec::new();
                for j in plan.jobs.iter().filter(|j| j.kernel == ki) {
                    if !have.contains(&j.target.name()) {
                        have.push(j.target.name());
                    }
                }
                report.not_run.push((k.name.clone(), have));
                continue;
            }
            Err(e) => return Err(e),
        };
        for job in &jobs {
            let (run_as, t) = runs_as(&job.target, opts.run_as.as_deref())?;
            let prepared = pipeline::prepare(&m, &plan, job, tc.version.major)?;
            let dir = work
                .path()
                .join(format!("{}-{}", k.name, t.replace([':', ' '], "_")));
            for (li, decl) in launches[ki].iter().enumerate() {
                let l = load(
                    &tc,
                    &prepared,
                    "patched",
                    decl.spec.kernel.as_deref(),
                    &dir,
                    run_as.as_deref(),
                )?;
                fits(&m, decl, &l)?;
                // Every seed runs, so that every failing one is named; a
                // fault stops the launch (the next seeds would repeat it).
                let mut clean = None;
                let mut found = Findings::default();
                let mut failed = None;
                let mut ran = Vec::new();
                let mut approx = None;
                let checks = opts
                    .sanitize
                    .or(decl.spec.sanitize)
                    .unwrap_or(Checks::DEFAULT);
                let lds = launch_lds(&m, job, &decl.spec);
                for &seed in &seeds {
                    ran.push(seed);
                    let run = run_once(
                        &l,
                        &decl.spec,
                        lds,
                        checks,
                        seed,
                        Knobs {
                            max_instructions: opts.max_instructions,
                            perturb_approx: opts.perturb_approx,
                            slice: opts.slice,
                        },
                    );
                    if let Ok((_, s)) = &run {
                        approx.get_or_insert_with(|| s.approx.clone());
                    }
                    match run {
                        Err(e) => {
                            failed = Some(if seeds.len() > 1 {
                                format!("{e} (schedule seed {seed})")
                            } else {
                                e
                            });
                            break;
                        }
                        Ok((_, s)) => {
                            found.add(seed, &s.findings, &l.program);
                            clean.get_or_insert(s.instructions);
                        }
                    }
                }
                let outcome = match failed {
                    Some(e) => Outcome::Failed(e),
                    None if !found.seeds.is_empty() => Outcome::Findings(found),
                    None => Outcome::Clean(clean.unwrap_or(0)),
                };
                report.rows.push(Tested {
                    kernel: k.name.clone(),
                    target: t.clone(),
                    launch: decl.spec.label(li),
                    line: decl.line,
                    seeds: ran,
                    outcome,
                    checks,
                    approx: approx.unwrap_or_default(),
                });
            }
        }
    }
    Ok(report)
}

/// One declared launch of a kernel's patched object, run (see [`outputs`]).
#[derive(Debug, Clone)]
pub struct Launched {
    /// The target.
    pub target: String,
    /// The launch's name (`name`, or `launch N`).
    pub launch: String,
    /// Its manifest line.
    pub line: usize,
    /// The dynamic LDS it ran with ([`launch_lds`]).
    pub dynamic_lds: u32,
    /// Every buffer after the run and the run's counts, or why it failed.
    pub result: Result<(Vec<Output>, Stats), String>,
}

/// Every declared launch of kernel `opts.kernel`'s patched object, for each
/// target the emulator runs (or `opts.target`), without the sanitizer, as
/// `compare` runs its patched side: the buffers afterwards, for a caller
/// that checks them against a reference. `opts.tolerance` is not used.
pub fn outputs(opts: &CompareOptions, tools: &Tools) -> Result<Vec<Launched>, Diagnostics> {
    let m = Manifest::load(&opts.manifest)?;
    let ki = m.kernel_index(&opts.kernel)?;
    let k = &m.kernels[ki];
    if k.launches.is_empty() {
        return Err(no_launch(&m, k));
    }
    let launches = declared(&m)?;
    let (plan, jobs, _) = emulated_jobs(&m, ki, opts.target.as_ref())?;
    let tc = tools.find(Some(&m))?;
    let work = scratch()?;
    let mut out = Vec::new();
    for job in &jobs {
        let t = job.target.name();
        let prepared = pipeline::prepare(&m, &plan, job, tc.version.major)?;
        let dir = work.path().join(t.replace(':', "_"));
        for (li, decl) in launches[ki].iter().enumerate() {
            let l = load(
                &tc,
                &prepared,
                "patched",
                decl.spec.kernel.as_deref(),
                &dir,
                opts.run_as.as_deref(),
            )?;
            fits(&m, decl, &l)?;
            let lds = launch_lds(&m, job, &decl.spec);
            out.push(Launched {
                target: t.clone(),
                launch: decl.spec.label(li),
                line: decl.line,
                dynamic_lds: lds,
                result: run_once(
                    &l,
                    &decl.spec,
                    lds,
                    Checks::NONE,
                    0,
                    Knobs {
                        max_instructions: opts.max_instructions,
                        perturb_approx: opts.perturb_approx,
                        slice: opts.slice,
                    },
                ),
            });
        }
    }
    Ok(out)
}

/// `gcn-patch profile KERNEL`: every declared launch of the kernel, for
/// every target the emulator runs whose processor is the device's (or
/// `opts.target`), profiled on `device` unpatched and patched, both sides
/// built as `compare` builds them (the same launch loop). `opts.tolerance`
/// and `perturb_approx` are not used. `timeline`: keep each wave's
/// timeline in the reports (for `--trace`).
pub fn profile(
    opts: &CompareOptions,
    device: &str,
    timeline: bool,
    tools: &Tools,
) -> Result<Vec<super::profile::Profiled>, Diagnostics> {
    let dev = gcn_emu::profile::device::Device::by_name(device).ok_or_else(|| {
        Diagnostics::from(
            Diagnostic::error(
                Code::RunUsage,
                format!(
                    "unknown device `{device}`; known: {}",
                    gcn_emu::profile::device::Device::names().join(", ")
                ),
            )
            .about(crate::base::diag::Setting::Device),
        )
    })?;
    let mut rows = Vec::new();
    let kernel = each_pair(
        opts,
        tools,
        // A generic target runs as the device's processor unless told.
        |job| {
            opts.run_as.clone().or_else(|| {
                job.target
                    .processor
                    .is_generic
                    .then(|| dev.processor.to_string())
            })
        },
        |processor| processor == dev.processor,
        |p| {
            let target = TargetId::parse(p.processor)
                .map_err(|e| Diagnostics::from(Diagnostic::error(Code::RunUsage, e.to_string())))?;
            let spec = &p.decl.spec;
            fits(p.m, p.decl, &p.unpatched)?;
            let mut sides = Vec::new();
            for (side, l) in [("unpatched", &p.unpatched), ("patched", &p.patched)] {
                let plan = super::profile::Plan::new(
                    &dev,
                    &target,
                    &l.kernel,
                    spec.grid.0,
                    spec.block.0,
                    p.lds,
                )
                .keep_timeline(timeline);
                let mem = Memory::new();
                let failed = |e: String| {
                    Diagnostics::from(Diagnostic::error(
                        Code::EmulatorFailed,
                        format!("the {side} object of `{}` ({}): {e}", opts.kernel, p.target),
                    ))
                };
                let prep = spec
                    .prepare(&l.kernel, &mem)
                    .map_err(|e| failed(e.to_string()))?;
                let mut launch = Launch::new(spec.grid.0, spec.block.0);
                launch.cluster = spec.cluster.map_or([0; 3], |c| c.0);
                launch.dynamic_lds = p.lds;
                if let Some(n) = opts.max_instructions {
                    launch.max_instructions = n;
                }
                let (_, traces, hbm) = plan
                    .observe(&l.co, &l.kernel, &l.program, &mem, &prep.values, &launch)
                    .map_err(|e| failed(e.to_string()))?;
                sides.push(plan.report(&l.kernel.name, &l.program, &traces, hbm));
            }
            let patched = sides.pop().expect("two sides");
            let unpatched = sides.pop().expect("two sides");
            rows.push(super::profile::Profiled {
                target: p.target.to_string(),
                launch: spec.label(p.li),
                unpatched,
                patched,
            });
            Ok(())
        },
    )?;
    if rows.is_empty() {
        return Err(Diagnostic::error(
            Code::RunUsage,
            format!(
                "kernel `{kernel}` has no target the emulator runs as {} ({}'s processor)",
                dev.processor, dev.name
            ),
        )
        .about(crate::base::diag::Setting::Device)
        .into());
    }
    Ok(rows)
}
