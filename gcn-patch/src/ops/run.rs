//! `gcn-patch run`: one dispatch of a kernel of a code object in the
//! emulator (the `gcn-emu` crate), with arguments from [`ArgSpec`]s (the
//! command's `--arg`), and every buffer written back as `.npy`.
//!
//! Errors about an input of [`RunOptions`] name it with a [`Setting`]; the
//! binary names its flag.

use std::path::{Path, PathBuf};

use gcn_emu::decode::Program;
use gcn_emu::dispatch::{ArgValue, Launch, Stats};
use gcn_emu::launch::{bind_by_name, takes_pointer, BindError, Bound};
use gcn_emu::load::{Arg, CodeObject};
use gcn_emu::memory::Memory;
use gcn_emu::npy::Array;

use super::Tools;
use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting};

/// The byte every `out:` buffer is filled with before the run: f16/bf16/f32/f64
/// elements read as NaN, integers as -1 (all bits set), so that unwritten
/// output is visible (the launch model's).
pub use gcn_emu::launch::POISON;

/// What `gcn-patch run` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The code object.
    pub object: PathBuf,
    /// The kernel's name.
    pub kernel: String,
    /// Workgroups in X, Y and Z ([`parse_dims`] reads `X[,Y[,Z]]`).
    pub grid: [u32; 3],
    /// Work-items per workgroup in X, Y and Z.
    pub block: [u32; 3],
    /// gfx1250's workgroup cluster ([`Launch::cluster`]; `[0, 0, 0]`, the
    /// default: the kernel's `.cluster_dims`).
    pub cluster: [u32; 3],
    /// Values or buffers given by position: they fill the explicit
    /// arguments `named` leaves, in metadata order ([`parse_spec`]
    /// reads the command line's forms; [`parse_arg`] tells `NAME=SPEC`
    /// apart).
    pub args: Vec<ArgSpec>,
    /// Values or buffers given by the argument's metadata name
    /// (`--arg NAME=SPEC`), in order: a repeated name takes the next
    /// argument of that name ([`gcn_emu::launch::bind_by_name`]).
    pub named: Vec<(String, ArgSpec)>,
    /// Fill every by-value argument given neither by name nor by position
    /// with zeros (pointers are always given).
    pub zero_rest: bool,
    /// Where to write `arg<I>.npy` for every buffer argument.
    pub out: Option<PathBuf>,
    /// The sanitizer's checks (empty: off): findings make the run fail
    /// ([`RunError::Findings`]).
    pub sanitize: gcn_emu::sanitize::Checks,
    /// The schedule seed ([`Launch::seed`]): 0 runs waves in turn, any
    /// other value interleaves them in a seeded order; the same seed gives
    /// the same results and report.
    pub seed: u64,
    /// The asm source the object was assembled from: sanitizer findings and
    /// unsupported-instruction errors name its lines. Without it they name
    /// the lines of the object's lift (`OBJECT (lifted):LINE`, the text
    /// `gcn-patch lift OBJECT --no-verify` prints).
    pub asm: Option<PathBuf>,
    /// Per-wave instruction budget (default [`gcn_emu::dispatch::DEFAULT_MAX_INSTRUCTIONS`]).
    pub max_instructions: Option<u64>,
    /// The memory cap in bytes: buffers, kernarg, and each workgroup in
    /// flight's LDS, registers and scratch (default
    /// [`gcn_emu::dispatch::DEFAULT_MAX_MEMORY`]; see [`Launch::max_memory`]).
    pub max_memory: Option<u64>,
    /// The total work budget in wave-instructions over the dispatch
    /// (default [`gcn_emu::dispatch::DEFAULT_MAX_WORK`]; see [`Launch::max_work`]).
    pub max_work: Option<u64>,
    /// Dynamic LDS bytes per workgroup ([`Launch::dynamic_lds`]), beyond the
    /// descriptor's static LDS: HIP's `sharedMemBytes`, a Triton kernel's
    /// `shared`.
    pub dynamic_lds: u32,
    /// The processor a generic-target object (`gfx9-4-generic`) runs as,
    /// one of its family the emulator runs ([`run_as`]); default the first
    /// of them in [`gcn_emu::dispatch::TARGETS`] order.
    pub run_as: Option<String>,
    /// Perturb the results of approximate instructions (`v_rcp_f32`, …)
    /// within their documented bounds with this seed
    /// ([`Launch::perturb_approx`]); `None`: correctly rounded.
    pub perturb_approx: Option<u64>,
    /// With seed 0, the most instructions a wave runs before the next
    /// wave's ([`Launch::slice`]; 0: until it ends or reaches `s_barrier`).
    pub slice: u64,
}

/// The processor to emulate an object built for `processor` as: `None`
/// for a processor (no `chosen` allowed), and for a generic target
/// (`gfx9-4-generic`) `chosen`, which must be a processor it covers that
/// the emulator runs, or by default the first such processor in
/// [`gcn_emu::dispatch::TARGETS`] order (gfx9-4-generic: gfx942). The
/// family is gcn-embed's processor table (which generic target covers
/// which processor). The error says what is wrong in its own terms.
pub fn run_as(processor: &str, chosen: Option<&str>) -> Result<Option<String>, String> {
    use gcn_emu::dispatch::TARGETS;
    let generic = gcn_embed::target::processor(processor).filter(|p| p.is_generic);
    let Some(generic) = generic else {
        return match chosen {
            Some(c) if c != processor => Err(format!(
                "`{c}`: the object is built for {processor}, not a generic target; it runs as {processor}"
            )),
            _ => Ok(None),
        };
    };
    let covered: Vec<&str> = generic.covered_processors().map(|p| p.name).collect();
    let runnable: Vec<&str> = TARGETS
        .iter()
        .copied()
        .filter(|t| covered.contains(t))
        .collect();
    if runnable.is_empty() {
        return Err(format!(
            "the emulator runs no processor of {processor}'s family ({}); it runs {}",
            covered.join(", "),
            TARGETS.join(", ")
        ));
    }
    match chosen {
        None => Ok(Some(runnable[0].to_string())),
        Some(c) if runnable.contains(&c) => Ok(Some(c.to_string())),
        Some(c) => Err(format!(
            "`{c}` is not a processor of {processor}'s family that the emulator runs: one of {}",
            runnable.join(", ")
        )),
    }
}

/// What a clean run did.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The kernel.
    pub kernel: String,
    /// The processor the object ran as: its own, or for a generic-target
    /// object the one chosen ([`RunOptions::run_as`]).
    pub processor: String,
    /// The object's generic target (`gfx9-4-generic`) when it is one.
    pub generic: Option<String>,
    /// Counts.
    pub stats: Stats,
    /// LDS bytes per workgroup: the descriptor's static LDS
    /// (`group_segment_fixed_size`) and the launch's dynamic LDS.
    pub lds: (u32, u32),
    /// Files written (one per buffer argument), in argument order.
    pub outputs: Vec<PathBuf>,
    /// Each of `stats.findings` in one line
    /// ([`gcn_emu::sanitize::Finding::summary`]), in the same order.
    pub summaries: Vec<String>,
}

/// Why `gcn-patch run` failed: the exit code tells them apart.
#[derive(Debug)]
pub enum RunError {
    /// Bad input (arguments, object, launch): exit 2.
    Usage(Diagnostics),
    /// The emulated kernel faulted, hit an unsupported instruction or its
    /// instruction budget: exit 1.
    Failed(Diagnostics),
    /// The run ended but the sanitizer found problems: exit 1. The report
    /// (buffers are written first, as for a clean run).
    Findings(Box<RunReport>),
}

impl From<Diagnostic> for RunError {
    fn from(d: Diagnostic) -> Self {
        RunError::Usage(d.into())
    }
}

/// Element types of `--arg` specs: the emulator's launch model's own
/// ([`gcn_emu::launch::Dtype`]: names, sizes, NumPy type strings, encoding).
pub use gcn_emu::launch::{Dtype, DTYPES};

/// One explicit argument of a dispatch: the launch model's
/// ([`gcn_emu::launch::ArgSpec`], one type for `--arg` and `kernels.toml`
/// launches). `--arg` gives `PATH.npy` ([`ArgSpec::Npy`]),
/// `out:DTYPE:COUNT` ([`ArgSpec::Output`]) or `DTYPE:VALUE`
/// ([`ArgSpec::Scalar`]), read by [`parse_spec`].
pub use gcn_emu::launch::ArgSpec;

/// Parse one spec (`PATH.npy`, `out:DTYPE:COUNT` or `DTYPE:VALUE`,
/// [`ArgSpec::parse`]); the error says what forms there are.
pub fn parse_spec(spec: &str) -> Result<ArgSpec, Diagnostics> {
    ArgSpec::parse(spec).map_err(|e| {
        Diagnostic::error(Code::RunUsage, e)
            .about(Setting::KernelArguments)
            .into()
    })
}

/// Parse one `--arg`: `NAME=SPEC` (by the argument's metadata name) or
/// `SPEC` (by position). `NAME=` is read as a name when NAME is an
/// identifier (letters, digits, `_`, `.`, not starting with a digit); a
/// path such as `x=1.npy` is positional when written `./x=1.npy`.
pub fn parse_arg(text: &str) -> Result<(Option<String>, ArgSpec), Diagnostics> {
    if let Some((name, spec)) = text.split_once('=') {
        let ident = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
        if ident {
            let spec = ArgSpec::parse(spec).map_err(|e| {
                Diagnostics::from(
                    Diagnostic::error(Code::RunUsage, format!("`{name}=`: {e}"))
                        .about(Setting::KernelArguments),
                )
            })?;
            return Ok((Some(name.to_string()), spec));
        }
    }
    Ok((None, parse_spec(text)?))
}

/// Parse `X[,Y[,Z]]` (missing dimensions are 1, each a positive 32-bit
/// integer) for `what` ([`Setting::Grid`] or [`Setting::Block`]): the
/// launch model's parser ([`gcn_emu::launch::Dims::parse`]), which
/// `kernels.toml` launches use too.
pub fn parse_dims(what: Setting, s: &str) -> Result<[u32; 3], Diagnostics> {
    gcn_emu::launch::Dims::parse(s)
        .map(|d| d.0)
        .map_err(|e| Diagnostic::error(Code::RunUsage, e).about(what).into())
}

fn usage(msg: impl Into<String>) -> RunError {
    RunError::Usage(Diagnostic::error(Code::RunUsage, msg).into())
}

/// Bad input about the option `setting`.
fn usage_of(setting: Setting, msg: impl Into<String>) -> RunError {
    RunError::Usage(Diagnostic::error(Code::RunUsage, msg).about(setting).into())
}

fn emu_usage(e: gcn_emu::Error) -> RunError {
    usage(e.to_string())
}

/// A binding error of `--arg`/`--zero-rest`, with the command-line fix.
fn bind_error(kernel: &str, e: BindError, zero_rest: bool) -> RunError {
    let code = match e {
        BindError::UnknownName { .. } => Code::RunUsage,
        _ => Code::ArgumentCount,
    };
    let mut d = match &e {
        BindError::Missing { missing, .. } => {
            let mut d = Diagnostic::error(
                code,
                format!("kernel `{kernel}`: arguments not given, by name or by position"),
            );
            for m in missing {
                d = d.with_note(m.clone());
            }
            d
        }
        _ => Diagnostic::error(code, format!("kernel `{kernel}`: {e}")),
    };
    match &e {
        BindError::Missing {
            values, pointers, ..
        } => {
            if *values && !zero_rest {
                d = d.with_help("`--zero-rest` fills the by-value arguments not given with zeros");
            }
            if *pointers {
                d = d.with_help(
                    "a pointer is always given: PATH.npy, out:DTYPE:COUNT, or NAME=u64:0 for a null pointer",
                );
            }
        }
        BindError::TooManyOfName { name, takes, .. } => {
            d = d.with_help(format!(
                "`--arg {name}=SPEC` fills the {takes} argument(s) named `{name}` in order, one per flag"
            ));
        }
        BindError::TooManyPositional { .. } => {
            d = d.with_help("a positional `--arg SPEC` fills the next argument not given by name");
        }
        BindError::UnknownName { .. } => {}
    }
    RunError::Usage(d.about(Setting::KernelArguments).into())
}

fn describe(i: usize, a: &Arg) -> String {
    let name = a
        .name
        .as_deref()
        .map(|n| format!(" `{n}`"))
        .unwrap_or_default();
    format!("argument {i}{name} ({}, {} bytes)", a.value_kind, a.size)
}

/// Disassemble `kernel` of `co` through the toolchain's bounded runner
/// (time limit, process group killed with it) and decode it.
/// Without the asm an object was assembled from, map its instructions to
/// the lines of its lift (`gcn-patch lift OBJECT --no-verify` prints the same
/// text, so `OBJECT (lifted):LINE` can be looked up). A code object lift
/// cannot read keeps its instructions shown by address and text only.
fn attach_lifted(tc: &crate::stage::toolchain::Toolchain, object: &Path, program: &mut Program) {
    let Ok(bytes) = std::fs::read(object) else {
        return;
    };
    // No identity check: the lift only names lines.
    if let Ok(lifted) = crate::stage::lift::lift(&bytes, object, tc, None) {
        program.attach_source(&format!("{} (lifted)", object.display()), &lifted.asm);
    }
}

pub(crate) fn disassemble(
    tc: &crate::stage::toolchain::Toolchain,
    co: &CodeObject,
    kernel: &gcn_emu::load::Kernel,
) -> Result<Program, Diagnostics> {
    let job = format!("disassembling kernel `{}` of {}", kernel.name, co.path);
    let mattr = gcn_emu::decode::objdump_mattr_flag(&co.processor, kernel);
    parse(
        &listing(tc, co, mattr.as_deref(), &job)?,
        kernel,
        &co.processor,
    )
}

/// `llvm-objdump -d` of the whole object ([`crate::stage::toolchain::Toolchain::objdump`]).
fn listing(
    tc: &crate::stage::toolchain::Toolchain,
    co: &CodeObject,
    mattr: Option<&str>,
    job: &str,
) -> Result<String, Diagnostics> {
    let err = |m: String| Diagnostics::from(Diagnostic::error(Code::EmulatorFailed, m));
    let file = tempfile::Builder::new()
        .suffix(".co")
        .tempfile()
        .and_then(|mut f| std::io::Write::write_all(&mut f, &co.bytes).map(|()| f))
        .map_err(|e| err(format!("cannot write a temporary file: {e}")))?;
    let mut args: Vec<&std::ffi::OsStr> = vec!["-d".as_ref(), "--symbolize-operands".as_ref()];
    args.extend(mattr.map(std::ffi::OsStr::new));
    args.push(file.path().as_os_str());
    tc.objdump(args, job, Code::EmulatorFailed)
        .map_err(Diagnostics::from)
}

/// `kernel`'s instructions in an object's listing, in `processor`'s
/// register numbering.
fn parse(
    listing: &str,
    kernel: &gcn_emu::load::Kernel,
    processor: &str,
) -> Result<Program, Diagnostics> {
    Program::parse_listing_for(listing, kernel, processor)
        .map_err(|e| Diagnostics::from(Diagnostic::error(Code::EmulatorFailed, e.to_string())))
}

/// Run the dispatch `opts` describes.
// gcn_emu::Error is large by design (its crate root says why).
#[allow(clippy::result_large_err)]
pub fn run(opts: &RunOptions, tools: &Tools) -> Result<RunReport, RunError> {
    run_with(opts, tools, |d| {
        gcn_emu::dispatch::run(d.co, d.kernel, d.program, d.mem, d.values, d.launch)
    })
}

/// A dispatch ready to run: what [`run_with`] hands its runner.
pub(crate) struct Dispatch<'a> {
    pub co: &'a CodeObject,
    pub kernel: &'a gcn_emu::load::Kernel,
    pub program: &'a Program,
    pub mem: &'a Memory,
    pub values: &'a [ArgValue],
    pub launch: &'a Launch,
}

/// [`run`] with the dispatch itself done by `runner` (the profiler
/// observes it): the same arguments, checks, buffers and report.
#[allow(clippy::result_large_err)]
pub(crate) fn run_with(
    opts: &RunOptions,
    tools: &Tools,
    runner: impl FnOnce(&Dispatch<'_>) -> gcn_emu::Result<Stats>,
) -> Result<RunReport, RunError> {
    let (grid, block) = (opts.grid, opts.block);
    let specs = &opts.args;
    if let Some(out) = opts.out.as_ref().filter(|o| o.exists() && !o.is_dir()) {
        return Err(usage_of(
            Setting::OutputDir,
            format!("`{}` exists and is not a directory", out.display()),
        ));
    }
    let mut co = CodeObject::read_file(&opts.object).map_err(emu_usage)?;
    let generic = match run_as(&co.processor, opts.run_as.as_deref()) {
        Ok(Some(p)) => Some(std::mem::replace(&mut co.processor, p)),
        Ok(None) => None,
        Err(e) => return Err(usage_of(Setting::RunAs, e)),
    };
    let kernel = co.kernel(&opts.kernel).map_err(emu_usage)?.clone();
    let explicit: Vec<Arg> = kernel
        .args
        .iter()
        .filter(|a| !a.is_hidden())
        .cloned()
        .collect();
    let specs: Vec<Bound<ArgSpec>> = if opts.named.is_empty() && !opts.zero_rest {
        specs.iter().cloned().map(Bound::Given).collect()
    } else {
        bind_by_name(&kernel, opts.named.clone(), specs.clone(), opts.zero_rest)
            .map_err(|e| bind_error(&kernel.name, e, opts.zero_rest))?
    };
    if explicit.len() != specs.len() {
        let list: Vec<String> = explicit
            .iter()
            .enumerate()
            .map(|(i, a)| describe(i, a))
            .collect();
        return Err(RunError::Usage(
            Diagnostic::error(
                Code::ArgumentCount,
                format!(
                    "kernel `{}` takes {} explicit argument(s), {} given",
                    kernel.name,
                    explicit.len(),
                    specs.len()
                ),
            )
            .with_note(if list.is_empty() {
                "it takes none".to_string()
            } else {
                list.join("\n")
            })
            .with_help("give one value or buffer per argument, in this order, or by name (`--arg NAME=SPEC`); `--zero-rest` fills the by-value ones not given with zeros")
            .about(Setting::KernelArguments)
            .into(),
        ));
    }
    let mem = Memory::new();
    let max_memory = opts
        .max_memory
        .unwrap_or(gcn_emu::dispatch::DEFAULT_MAX_MEMORY);
    // The buffers count against the memory cap: refuse one over it before
    // it is allocated.
    let capped = |i: usize, a: &Arg, bytes: u128| {
        let held = mem.allocated() as u128 + bytes;
        if held > max_memory as u128 {
            return Err(emu_usage(gcn_emu::Error::Limit {
                context: format!("kernel `{}`: {}", kernel.name, describe(i, a)),
                field: format!(
                    "the buffers' bytes ({} held + {bytes} for this one)",
                    mem.allocated()
                ),
                value: held,
                limit: max_memory as u128,
                hint: "the memory cap in bytes; raise it with --max-memory".into(),
            }));
        }
        Ok(())
    };
    let mut values = Vec::new();
    let mut buffers: Vec<(usize, u64, String, Vec<usize>)> = Vec::new();
    for (i, (a, spec)) in explicit.iter().zip(&specs).enumerate() {
        let pointer = takes_pointer(a);
        let spec = match spec {
            Bound::Given(spec) => spec,
            Bound::Zero { size } => {
                values.push(ArgValue::Bytes(vec![0; *size]));
                continue;
            }
        };
        match spec {
            ArgSpec::Npy(_) | ArgSpec::Output { .. } | ArgSpec::Random { .. } if !pointer => {
                return Err(usage_of(
                    Setting::KernelArguments,
                    format!(
                        "{} takes a value (DTYPE:VALUE), not a buffer (`{spec}`)",
                        describe(i, a),
                    ),
                ));
            }
            ArgSpec::Npy(p) => {
                let arr = Array::read(p).map_err(emu_usage)?;
                capped(i, a, arr.data.len() as u128)?;
                let addr = mem.alloc_bytes(&format!("arg{i}"), &arr.data);
                buffers.push((i, addr, arr.descr.clone(), arr.shape.clone()));
                values.push(ArgValue::Pointer(addr));
            }
            ArgSpec::Output { dtype, shape } | ArgSpec::Random { dtype, shape, .. } => {
                capped(i, a, shape.count() as u128 * dtype.size() as u128)?;
                let data = spec.initial_bytes(i, opts.seed).unwrap_or_default();
                let addr = mem.alloc_bytes(&format!("arg{i}"), &data);
                buffers.push((i, addr, dtype.descr().to_string(), shape.0.clone()));
                values.push(ArgValue::Pointer(addr));
            }
            ArgSpec::Scalar { dtype, value } => {
                let bytes = value
                    .encode(*dtype)
                    .map_err(|e| usage_of(Setting::KernelArguments, format!("`{spec}`: {e}")))?;
                if pointer && !(bytes.len() == 8 && bytes.iter().all(|&b| b == 0)) {
                    return Err(usage_of(Setting::KernelArguments, format!(
                        "{} is a pointer: give PATH.npy, out:DTYPE:COUNT, or u64:0 for a null pointer (`{spec}` given)",
                        describe(i, a),
                    )));
                }
                if bytes.len() != a.size as usize {
                    return Err(usage_of(
                        Setting::KernelArguments,
                        format!(
                            "{}: `{spec}` gives {} bytes ({:?}); use a DTYPE of {} bytes",
                            describe(i, a),
                            bytes.len(),
                            dtype,
                            a.size
                        ),
                    ));
                }
                values.push(ArgValue::Bytes(bytes));
            }
            ArgSpec::Null if !pointer => {
                return Err(usage_of(
                    Setting::KernelArguments,
                    format!(
                        "{} takes a value (DTYPE:VALUE), not a null pointer",
                        describe(i, a)
                    ),
                ));
            }
            ArgSpec::Null => values.push(ArgValue::Pointer(0)),
            ArgSpec::Zero { size } => values.push(ArgValue::Bytes(vec![0; *size])),
        }
    }
    let tc = tools.find(None).map_err(RunError::Usage)?;
    let mut program = disassemble(&tc, &co, &kernel).map_err(RunError::Usage)?;
    if let Some(asm) = &opts.asm {
        let text = std::fs::read_to_string(asm).map_err(|e| {
            usage_of(
                Setting::AsmSource,
                format!("cannot read `{}`: {e}", asm.display()),
            )
        })?;
        if program.attach_source(&asm.display().to_string(), &text) == 0 {
            return Err(usage_of(
                Setting::AsmSource,
                format!(
                    "no instruction of kernel `{}` matches `{}`; give the asm the object was assembled from (its body starts at the label `{}:`)",
                    kernel.name,
                    asm.display(),
                    kernel.name
                ),
            ));
        }
    } else {
        attach_lifted(&tc, &opts.object, &mut program);
    }
    let mut launch = Launch::new(grid, block);
    launch.sanitize = opts.sanitize;
    launch.seed = opts.seed;
    launch.dynamic_lds = opts.dynamic_lds;
    launch.cluster = opts.cluster;
    launch.perturb_approx = opts.perturb_approx;
    launch.slice = opts.slice;
    if let Some(m) = opts.max_instructions {
        launch.max_instructions = m;
    }
    launch.max_memory = max_memory;
    if let Some(w) = opts.max_work {
        launch.max_work = w;
    }
    let stats = runner(&Dispatch {
        co: &co,
        kernel: &kernel,
        program: &program,
        mem: &mem,
        values: &values,
        launch: &launch,
    })
    .map_err(|e| match e {
        gcn_emu::Error::Launch { .. } | gcn_emu::Error::Limit { .. } => emu_usage(e),
        e => RunError::Failed(Diagnostic::error(Code::EmulatorFailed, e.to_string()).into()),
    })?;
    let mut outputs = Vec::new();
    if let Some(dir) = &opts.out {
        std::fs::create_dir_all(dir).map_err(|e| {
            RunError::Failed(
                Diagnostic::error(
                    Code::CreateDirFailed,
                    format!("cannot create {}: {e}", dir.display()),
                )
                .into(),
            )
        })?;
        for (i, addr, descr, shape) in &buffers {
            let data = mem.contents(*addr).unwrap_or_default();
            let arr = Array {
                descr: descr.clone(),
                shape: shape.clone(),
                data,
            };
            let path = dir.join(format!("arg{i}.npy"));
            crate::base::output::write_atomic(&path, &arr.to_bytes()).map_err(|e| {
                RunError::Failed(
                    Diagnostic::error(
                        Code::WriteFailed,
                        format!("cannot write {}: {e}", path.display()),
                    )
                    .into(),
                )
            })?;
            outputs.push(path);
        }
    }
    let report = RunReport {
        kernel: kernel.name.clone(),
        processor: co.processor.clone(),
        summaries: stats.findings.iter().map(|f| f.summary(&program)).collect(),
        generic,
        stats,
        lds: (kernel.descriptor.group_segment_fixed_size, opts.dynamic_lds),
        outputs,
    };
    if report.stats.findings.is_empty() {
        Ok(report)
    } else {
        Err(RunError::Findings(Box::new(report)))
    }
}

/// One mnemonic the emulator lacks, in an object `run --list-unsupported`
/// looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The mnemonic as LLVM prints it (`v_mfma_scale_f32_16x16x128_f8f6f4`).
    pub mnemonic: String,
    /// Instructions of that mnemonic the emulator refuses.
    pub count: usize,
    /// The kernels holding one, in metadata order.
    pub kernels: Vec<String>,
    /// The first such instruction: its address and text.
    pub first: (u64, String),
}

/// What `gcn-patch run OBJECT --list-unsupported` found.
#[derive(Debug, Clone)]
pub struct UnsupportedReport {
    /// The object's processor.
    pub processor: String,
    /// Kernels looked at, and instructions in them.
    pub kernels: usize,
    /// Instructions in those kernels.
    pub instructions: usize,
    /// What the emulator lacks, most instructions first (empty: it runs
    /// every instruction form of these kernels).
    pub missing: Vec<Missing>,
}

/// Which instructions of `object` (every kernel, or `kernel`) the emulator
/// does not implement: each distinct instruction form is executed once on a
/// scratch wave that has memory to hit ([`gcn_emu::Probe`]): a form
/// counts as implemented only when it runs without a fault, so a refusal
/// and a fault on the probe are both missing. Says nothing of whether a
/// launch of the kernel is right. On gfx1250, `s_set_vgpr_msb` counts as
/// missing in a kernel whose VGPR MSBs a dispatch refuses
/// (`gcn_emu::decode::Program::check_vgpr_msb`). An object for a target
/// the emulator does not run (gfx10, gfx1251, ...) is a usage error, not a
/// list.
pub fn unsupported(
    object: &Path,
    kernel: Option<&str>,
    tools: &Tools,
) -> Result<UnsupportedReport, RunError> {
    let co = CodeObject::read_file(object).map_err(emu_usage)?;
    // A target the emulator runs no processor of: every instruction would
    // be "missing", and a list of the few spellings the CDNA probe happens
    // to accept would read as if the rest ran.
    let emulated = gcn_emu::dispatch::TARGETS.contains(&co.processor.as_str())
        || matches!(run_as(&co.processor, None), Ok(Some(_)));
    if !emulated {
        return Err(usage(format!(
            "{}: target `{}` is not emulated, so no instruction of it runs: the emulator runs {}; `--list-unsupported` lists what a kernel of those targets lacks",
            co.path,
            co.processor,
            gcn_emu::dispatch::TARGETS.join(", ")
        )));
    }
    let kernels: Vec<gcn_emu::load::Kernel> = match kernel {
        Some(name) => vec![co.kernel(name).map_err(emu_usage)?.clone()],
        None => co.kernels.clone(),
    };
    let tc = tools.find(None).map_err(RunError::Usage)?;
    // A generic object's instructions are its family's (run_as).
    let processor = run_as(&co.processor, None)
        .ok()
        .flatten()
        .unwrap_or_else(|| co.processor.clone());
    let mut verdict: std::collections::HashMap<String, bool> = std::collections::HashMap::new();
    let mut missing: Vec<Missing> = Vec::new();
    let mut instructions = 0;
    // One disassembly of the object serves every kernel of a wave size
    // (RDNA's wave64 kernels are printed with `--mattr=+wavefrontsize64`).
    let mut texts: std::collections::HashMap<Option<String>, String> = Default::default();
    for k in &kernels {
        let mattr = gcn_emu::decode::objdump_mattr_flag(&co.processor, k);
        if !texts.contains_key(&mattr) {
            let t = listing(
                &tc,
                &co,
                mattr.as_deref(),
                &format!("disassembling {}", co.path),
            )
            .map_err(RunError::Usage)?;
            texts.insert(mattr.clone(), t);
        }
        let mut probe =
            gcn_emu::Probe::for_target(&processor, if k.descriptor.wave32() { 32 } else { 64 });
        let program = parse(&texts[&mattr], k, &co.processor).map_err(RunError::Usage)?;
        // gfx1250: where the VGPR MSBs cannot be resolved by control flow
        // (two states meet, an indirect jump), `s_set_vgpr_msb` is what
        // the kernel lacks.
        let msb_ok = co.processor != "gfx1250" || program.check_vgpr_msb(k).is_ok();
        for ins in &program.instructions {
            instructions += 1;
            let runs = (msb_ok || ins.mnemonic != "s_set_vgpr_msb")
                && *verdict
                    .entry(ins.text.clone())
                    .or_insert_with(|| probe.implements(ins));
            if runs {
                continue;
            }
            match missing.iter_mut().find(|m| m.mnemonic == ins.mnemonic) {
                Some(m) => {
                    m.count += 1;
                    if m.kernels.last() != Some(&k.name) {
                        m.kernels.push(k.name.clone());
                    }
                }
                None => missing.push(Missing {
                    mnemonic: ins.mnemonic.clone(),
                    count: 1,
                    kernels: vec![k.name.clone()],
                    first: (ins.addr, ins.text.clone()),
                }),
            }
        }
    }
    missing.sort_by(|a, b| b.count.cmp(&a.count).then(a.mnemonic.cmp(&b.mnemonic)));
    Ok(UnsupportedReport {
        processor: co.processor.clone(),
        kernels: kernels.len(),
        instructions,
        missing,
    })
}
