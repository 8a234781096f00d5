//! `gcn-patch run`: one dispatch of a kernel of a code object in the
//! emulator (the `gcn-emu` crate), with arguments from [`ArgSpec`]s (the
//! command's `--arg`), and every buffer written back as `.npy`.
//!
//! Errors about an input of [`RunOptions`] name it with a [`Setting`]; the
//! binary names its flag.

use std::path::{Path, PathBuf};

use gcn_emu::decode::Program;
use gcn_emu::dispatch::{ArgValue, Launch, Stats};
use gcn_emu::load::{Arg, CodeObject};
use gcn_emu::memory::Memory;
use gcn_emu::npy::Array;

use super::Tools;
use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting};

/// The byte every `out:` buffer is filled with before the run: f16/bf16/f32/f64
/// elements read as NaN, integers as -1 (all bits set), so that unwritten
/// output is visible.
pub const POISON: u8 = 0xff;

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
    /// One value or buffer per explicit argument, in metadata order
    /// ([`ArgSpec::parse`] reads the command line's forms).
    pub args: Vec<ArgSpec>,
    /// Where to write `arg<I>.npy` for every buffer argument.
    pub out: Option<PathBuf>,
    /// Run the sanitizer: findings make the run fail ([`RunError::Findings`]).
    pub sanitize: bool,
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
    /// Perturb the results of approximate instructions (`v_rcp_f32`, …)
    /// within their documented bounds with this seed
    /// ([`Launch::perturb_approx`]); `None`: correctly rounded.
    pub perturb_approx: Option<u64>,
}

/// What a clean run did.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The kernel.
    pub kernel: String,
    /// The code object's processor.
    pub processor: String,
    /// Counts.
    pub stats: Stats,
    /// Files written (one per buffer argument), in argument order.
    pub outputs: Vec<PathBuf>,
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

/// One explicit argument of a dispatch (`--arg`).
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// `PATH.npy`: a buffer holding the array.
    Npy(PathBuf),
    /// `out:DTYPE:COUNT`: a buffer of COUNT poisoned elements.
    Out(Dtype, usize),
    /// `DTYPE:VALUE`: a value.
    Value(Dtype, Vec<u8>),
}

impl std::fmt::Display for ArgSpec {
    /// The spec as written: `PATH.npy`, `out:DTYPE:COUNT` or `DTYPE:VALUE`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgSpec::Npy(p) => write!(f, "{}", p.display()),
            ArgSpec::Out(d, n) => write!(f, "out:{}:{n}", d.name()),
            ArgSpec::Value(d, bytes) => write!(f, "{}:{}", d.name(), d.format(bytes)),
        }
    }
}

impl ArgSpec {
    /// Parse one spec (`PATH.npy`, `out:DTYPE:COUNT` or `DTYPE:VALUE`);
    /// the error says what forms there are.
    pub fn parse(spec: &str) -> Result<Self, Diagnostics> {
        Self::parse_text(spec).map_err(|e| {
            Diagnostic::error(Code::RunUsage, e)
                .about(Setting::KernelArguments)
                .into()
        })
    }

    fn parse_text(spec: &str) -> Result<Self, String> {
        let forms = "expected PATH.npy, out:DTYPE:COUNT or DTYPE:VALUE";
        if spec.ends_with(".npy") {
            return Ok(ArgSpec::Npy(PathBuf::from(spec)));
        }
        if let Some(rest) = spec.strip_prefix("out:") {
            let (d, n) = rest
                .split_once(':')
                .ok_or_else(|| format!("`{spec}`: {forms} (COUNT missing)"))?;
            let d = Dtype::parse(d)
                .ok_or_else(|| format!("`{spec}`: unknown DTYPE `{d}` (one of {DTYPES})"))?;
            let n = n
                .parse::<usize>()
                .map_err(|_| format!("`{spec}`: COUNT `{n}` is not a non-negative integer"))?;
            if n.checked_mul(d.size()).is_none_or(|b| b > 1 << 34) {
                return Err(format!(
                    "`{spec}`: {n} elements is more than the emulator allocates (16 GiB)"
                ));
            }
            return Ok(ArgSpec::Out(d, n));
        }
        let (d, v) = spec
            .split_once(':')
            .ok_or_else(|| format!("`{spec}`: {forms}"))?;
        let d = Dtype::parse(d)
            .ok_or_else(|| format!("`{spec}`: unknown DTYPE `{d}` (one of {DTYPES}); {forms}"))?;
        let bytes = d.encode(v).map_err(|e| format!("`{spec}`: {e}"))?;
        Ok(ArgSpec::Value(d, bytes))
    }
}

/// Parse `X[,Y[,Z]]` (missing dimensions are 1) for `what`
/// ([`Setting::Grid`] or [`Setting::Block`]).
pub fn parse_dims(what: Setting, s: &str) -> Result<[u32; 3], Diagnostics> {
    dims(s).map_err(|e| Diagnostic::error(Code::RunUsage, e).about(what).into())
}

fn dims(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{s}`: expected X[,Y[,Z]]"));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| format!("`{s}`: `{p}` is not a positive integer"))?;
    }
    Ok(d)
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
    let err = |m: String| Diagnostics::from(Diagnostic::error(Code::EmulatorFailed, m));
    let file = tempfile::Builder::new()
        .suffix(".co")
        .tempfile()
        .and_then(|mut f| std::io::Write::write_all(&mut f, &co.bytes).map(|()| f))
        .map_err(|e| err(format!("cannot write a temporary file: {e}")))?;
    let objdump = tc.llvm_tool("llvm-objdump");
    let mut cmd = crate::stage::toolchain::run::tool_command(&objdump);
    cmd.args(["-d", "--symbolize-operands"]).arg(file.path());
    let job = format!("disassembling kernel `{}` of {}", kernel.name, co.path);
    let out = tc
        .run(&mut cmd, "llvm-objdump", &job)
        .map_err(|e| Diagnostics::from(e.to_diagnostic()))?;
    if !out.status.success() {
        return Err(err(format!(
            "llvm-objdump failed {job}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let listing = String::from_utf8_lossy(&out.stdout);
    Program::parse_listing(&listing, kernel).map_err(|e| err(e.to_string()))
}

/// Run the dispatch `opts` describes.
pub fn run(opts: &RunOptions, tools: &Tools) -> Result<RunReport, RunError> {
    let (grid, block) = (opts.grid, opts.block);
    let specs = &opts.args;
    if let Some(out) = opts.out.as_ref().filter(|o| o.exists() && !o.is_dir()) {
        return Err(usage_of(
            Setting::OutputDir,
            format!("`{}` exists and is not a directory", out.display()),
        ));
    }
    let co = CodeObject::read_file(&opts.object).map_err(emu_usage)?;
    let kernel = co.kernel(&opts.kernel).map_err(emu_usage)?.clone();
    let explicit: Vec<Arg> = kernel
        .args
        .iter()
        .filter(|a| !a.is_hidden())
        .cloned()
        .collect();
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
            .with_help("give one value or buffer per argument, in this order")
            .about(Setting::KernelArguments)
            .into(),
        ));
    }
    let mem = Memory::new();
    let mut values = Vec::new();
    let mut buffers: Vec<(usize, u64, String, Vec<usize>)> = Vec::new();
    for (i, (a, spec)) in explicit.iter().zip(specs).enumerate() {
        let pointer = a.is_pointer() || a.address_space.is_some() && a.value_kind != "by_value";
        match spec {
            ArgSpec::Npy(_) | ArgSpec::Out(..) if !pointer => {
                return Err(usage(format!(
                    "{} takes a value (DTYPE:VALUE), not a buffer (`{spec}`)",
                    describe(i, a),
                )));
            }
            ArgSpec::Npy(p) => {
                let arr = Array::read(p).map_err(emu_usage)?;
                let addr = mem.alloc_bytes(&format!("arg{i}"), &arr.data);
                buffers.push((i, addr, arr.descr.clone(), arr.shape.clone()));
                values.push(ArgValue::Pointer(addr));
            }
            ArgSpec::Out(d, n) => {
                let addr = mem.alloc_bytes(&format!("arg{i}"), &vec![POISON; n * d.size()]);
                buffers.push((i, addr, d.descr().to_string(), vec![*n]));
                values.push(ArgValue::Pointer(addr));
            }
            ArgSpec::Value(d, bytes) => {
                if pointer && !(bytes.len() == 8 && bytes.iter().all(|&b| b == 0)) {
                    return Err(usage(format!(
                        "{} is a pointer: give PATH.npy, out:DTYPE:COUNT, or u64:0 for a null pointer (`{spec}` given)",
                        describe(i, a),
                    )));
                }
                if bytes.len() != a.size as usize {
                    return Err(usage(format!(
                        "{}: `{spec}` gives {} bytes ({:?}); use a DTYPE of {} bytes",
                        describe(i, a),
                        bytes.len(),
                        d,
                        a.size
                    )));
                }
                values.push(ArgValue::Bytes(bytes.clone()));
            }
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
    launch.perturb_approx = opts.perturb_approx;
    if let Some(m) = opts.max_instructions {
        launch.max_instructions = m;
    }
    let stats = gcn_emu::dispatch::run(&co, &kernel, &program, &mem, &values, &launch).map_err(
        |e| match e {
            gcn_emu::Error::Launch { .. } => emu_usage(e),
            e => RunError::Failed(Diagnostic::error(Code::EmulatorFailed, e.to_string()).into()),
        },
    )?;
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
        stats,
        outputs,
    };
    if report.stats.findings.is_empty() {
        Ok(report)
    } else {
        Err(RunError::Findings(Box::new(report)))
    }
}
