//! `gcn-patch retarget` and `gcn-patch assemble`: one asm file, no manifest.

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use super::{kernel_name, read_asm, scratch, Tools};
use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting};
use crate::base::document::Document;
use crate::config::policy::RegisterPolicy;
use crate::pipeline;
use crate::stage::retarget::RetargetOptions as StageRetarget;

/// What `gcn-patch retarget` is asked to do.
#[derive(Debug, Clone)]
pub struct RetargetOptions {
    /// The asm file.
    pub file: PathBuf,
    /// The target to retarget it for.
    pub target: TargetId,
    /// The LLVM tools (their assembler's version decides the skew
    /// normalization; 22 when none is found).
    pub tools: Tools,
}

/// `gcn-patch retarget FILE --target T`: FILE retargeted, with toolchain
/// skew normalized for the assembler `tools` finds.
pub fn retarget(opts: &RetargetOptions) -> Result<Document, Diagnostics> {
    let asm = read_asm(&opts.file)?;
    let stage = StageRetarget {
        target: opts.target,
        code_object_version: None,
        assembler_llvm_major: opts.tools.assembler_major(None),
    };
    Ok(crate::stage::retarget::retarget(&asm, &stage)?.asm)
}

/// What `gcn-patch assemble` is asked to do.
#[derive(Debug, Clone)]
pub struct AssembleOptions {
    /// The asm file.
    pub file: PathBuf,
    /// The target.
    pub target: TargetId,
    /// The code object to write (atomically).
    pub output: PathBuf,
    /// Rewrite register counts to what the code uses instead of failing.
    pub update_registers: bool,
    /// The unpatched original (asm, or a code object/container to lift):
    /// findings it has too are inherited, warnings, as `check` judges a
    /// manifest's patched dump. Default: the file named by a `lift` header
    /// (`; Lifted by gcn-patch from X`), when it exists.
    pub baseline: Option<PathBuf>,
    /// The LLVM tools.
    pub tools: Tools,
}

/// What `gcn-patch assemble` did.
#[derive(Debug)]
pub struct Assembled {
    /// The code object written.
    pub output: PathBuf,
    /// Its target.
    pub target: TargetId,
    /// Its ELF `e_flags`.
    pub e_flags: u32,
    /// How many kernels it holds.
    pub kernels: usize,
    /// Notes from preparation (occupancy, register updates, rewrites).
    pub notes: Vec<Diagnostic>,
    /// The original findings were judged against, and whether it was found
    /// through the file's lift header (not `--baseline`).
    pub baseline: Option<(PathBuf, bool)>,
}

/// The code object a `lift` output names in its first line
/// (`; Lifted by gcn-patch from X (…`), as written.
pub fn lift_origin(asm: &str) -> Option<PathBuf> {
    let first = asm.lines().next()?;
    let rest = first.strip_prefix("; Lifted by gcn-patch from ")?;
    let end = rest.rfind(" (")?;
    Some(PathBuf::from(&rest[..end]))
}

/// Whether `bytes` are a binary to lift rather than asm text (ELF, an offload
/// bundle, a HIP fat binary, a .vmfb: anything with a NUL byte in its head).
fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(4096).any(|&b| b == 0)
}

/// Read the baseline `path` as a document: asm as is, a binary lifted for
/// `target`.
pub(crate) fn read_baseline(
    path: &Path,
    target: &TargetId,
    tools: &Tools,
) -> Result<Document, Diagnostics> {
    let bytes = std::fs::read(path).map_err(|e| {
        Diagnostic::error(
            Code::ReadFailed,
            format!("cannot read baseline `{}`: {e}", path.display()),
        )
        .with_help("pass the unpatched original: the asm, or the code object it was lifted from")
    })?;
    if is_binary(&bytes) {
        return lift_baseline(path, target, tools);
    }
    read_asm(path)
}

/// A binary baseline, lifted for `target` (else for its own processor).
#[cfg(feature = "lift")]
fn lift_baseline(path: &Path, target: &TargetId, tools: &Tools) -> Result<Document, Diagnostics> {
    let tc = &tools.find(None)?;
    // The baseline is only read for its findings: its rebuild is not
    // checked (that is `lift`'s job, and would double the cost).
    let lifted = crate::stage::lift::lift_file(path, Some(target), tc, None)
        .or_else(|_| crate::stage::lift::lift_file(path, None, tc, None))?;
    Ok(Document::from_source(&lifted.asm, path))
}

/// Without the `lift` feature a binary baseline cannot be read.
#[cfg(not(feature = "lift"))]
fn lift_baseline(path: &Path, _: &TargetId, _: &Tools) -> Result<Document, Diagnostics> {
    Err(Diagnostic::error(
        Code::FeatureDisabled,
        format!(
            "baseline `{}` is a binary: reading it needs gcn-patch's `lift` feature",
            path.display()
        ),
    )
    .with_help("pass the unpatched asm, or enable the feature (the `gcn-patch` command has it)")
    .into())
}

/// `base` with each line that a diff alignment matches to a line of `asm`
/// attributed to that line of `file` (the others to `base` itself): the
/// checks match a finding to the original's by the lines' origins, as they
/// match a patched dump to its dump.
fn aligned_original(asm: &Document, base: &Document, file: &Path) -> Document {
    let a: Vec<&str> = asm.texts().collect();
    let b: Vec<&str> = base.texts().collect();
    let map = crate::base::align::align(&a, &b).b_to_a;
    let file: std::sync::Arc<Path> = file.into();
    let lines =
        (0..base.len()).map(|j| {
            let origin =
                match map[j] {
                    Some(i) => crate::base::provenance::Origin::Source {
                        file: file.clone(),
                        line: i + 1,
                    },
                    None => base.origin(j).cloned().unwrap_or(
                        crate::base::provenance::Origin::Generated("baseline".into()),
                    ),
                };
            (base.text(j).to_string(), origin)
        });
    Document::from_lines(lines, base.trailing_newline())
}

/// The original of `file`: `--baseline`, else the existing code object its
/// lift header names (relative to the working directory, or to `file`'s
/// directory).
pub(crate) fn find_baseline(
    file: &Path,
    asm: &Document,
    explicit: Option<&Path>,
) -> Option<(PathBuf, bool)> {
    if let Some(b) = explicit {
        return Some((b.to_path_buf(), false));
    }
    let origin = lift_origin(first_line(asm))?;
    let beside = file.parent().map(|d| d.join(&origin));
    [Some(origin), beside]
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
        .map(|p| (p, true))
}

/// `gcn-patch assemble FILE --target T -o OUT`: retarget, check, assemble,
/// link and verify FILE into OUT.
pub fn assemble(opts: &AssembleOptions) -> Result<Assembled, Diagnostics> {
    let target = opts.target;
    super::refuse_directory(&opts.output)?;
    let tc = opts.tools.find(None)?;
    let asm = read_asm(&opts.file)?;
    let retarget = StageRetarget {
        target,
        code_object_version: None,
        assembler_llvm_major: tc.version.major,
    };
    let policy = if opts.update_registers {
        RegisterPolicy::Update
    } else {
        RegisterPolicy::Error
    };
    let baseline = find_baseline(&opts.file, &asm, opts.baseline.as_deref());
    let original = match &baseline {
        Some((path, _)) => Some(aligned_original(
            &asm,
            &read_baseline(path, &target, &opts.tools)?,
            &opts.file,
        )),
        None => None,
    };
    let prepared = pipeline::prepare_traced(
        &kernel_name(&opts.file),
        original.as_ref(),
        &asm,
        &retarget,
        policy,
    )
    .map_err(|d| missing_baseline_help(d, &opts.file, &asm, baseline.is_some()))?;
    let work = scratch()?;
    let report = pipeline::build(&tc, &prepared, work.path(), &opts.output)?;
    Ok(Assembled {
        output: opts.output.clone(),
        target: prepared.target,
        e_flags: report.e_flags,
        kernels: prepared.symbols.len(),
        notes: prepared.notes,
        baseline,
    })
}

/// The errors of a one-off `assemble` of a lift output whose code object is
/// not found, without a baseline: the first says to give the original as
/// [`AssembleOptions::baseline`] ([`Setting::Baseline`], unless it is about
/// another setting already), so that findings the original has too are
/// warnings. Findings a register update fixes keep their
/// [`Setting::UpdateRegisters`] (the caller names its option).
fn missing_baseline_help(
    mut d: Diagnostics,
    file: &Path,
    asm: &Document,
    has_baseline: bool,
) -> Diagnostics {
    if !has_baseline {
        if let (Some(first), Some(origin)) = (d.0.first_mut(), lift_origin(first_line(asm))) {
            first.help.push(format!(
                "`{}` was lifted from `{}`, which is not found: give it (the code object or its unmodified lift) as the baseline so that findings the original has too are warnings, as `check` treats them",
                file.display(),
                origin.display(),
            ));
            if first.setting.is_none() {
                first.setting = Some(Setting::Baseline);
            }
        }
    }
    d
}

fn first_line(asm: &Document) -> &str {
    asm.text(0)
}
