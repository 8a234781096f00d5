//! `gcn-patch`: a thin CLI over the gcn-patch library.
//!
//! ```text
//! gcn-patch retarget FILE --target T            print retargeted, normalized asm
//! gcn-patch assemble FILE --target T -o OUT     retarget, assemble, link, verify
//! gcn-patch apply KERNEL [--manifest M] [--target T]   print patched, retargeted asm
//! gcn-patch check [--manifest M]                apply and check every kernel × target
//! gcn-patch pin KERNEL [--manifest M]           re-pin a kernel's dumps after re-checking patches
//! gcn-patch targets                             list known processors and families
//! gcn-patch lint FILE --target T [--suggest]    wait-counter hazards (exit 0 clean, 1 hazard, 2 input error)
//! gcn-patch import PATH... [--manifest M]       copy dumps under asm/, pin them, add them to the manifest
//! gcn-patch build --out DIR [--manifest M] [--target T]... [--locked] [-j N]
//!                                               every kernel × target to DIR/<target>/, writes kernels.lock
//! gcn-patch edit KERNEL [--target T] [--manifest M]   write the patched dump to a work file, print its path
//! gcn-patch save KERNEL NAME [--manifest M]     the work file's edits -> patches/<kernel>/NNNN-NAME.diff
//! gcn-patch objdiff KERNEL --target T [--manifest M]   disassembly diff, unpatched vs patched
//! gcn-patch iree-flags --out DIR --target T [--manifest M]   iree-compile substitution flags
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gcn_embed::TargetId;
use gcn_patch::check::RegisterPolicy;
use gcn_patch::diag::{Diagnostic, Diagnostics, Severity};
use gcn_patch::document::Document;
use gcn_patch::manifest::Manifest;
use gcn_patch::pipeline;
use gcn_patch::retarget::RetargetOptions;
use gcn_patch::toolchain::{Toolchain, ToolchainConfig};

/// Patch, retarget, check and assemble hand-tuned AMDGPU assembly.
#[derive(Parser)]
#[command(name = "gcn-patch", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print FILE retargeted for --target, with toolchain skew normalized.
    Retarget {
        /// Dumped asm (.s, .rocmasm).
        file: PathBuf,
        /// Target ID, e.g. gfx942, gfx942:sramecc+:xnack-, gfx9-4-generic.
        #[arg(long, short)]
        target: String,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Lift a code object back to editable asm that rebuilds it
    /// byte-identically (checked before anything is written).
    Lift {
        /// The code object (.co, .hsaco), offload bundle, HIP host object or
        /// executable (.hip_fatbin), or IREE .vmfb.
        file: PathBuf,
        /// Write the asm here (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// The target to take from a container (needed when it holds
        /// several); for a bare code object, the target it must be built for.
        #[arg(long, short)]
        target: Option<String>,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Retarget, assemble, link and verify FILE into a code object.
    Assemble {
        /// Dumped asm (.s, .rocmasm).
        file: PathBuf,
        /// Target ID.
        #[arg(long, short)]
        target: String,
        /// Output .hsaco.
        #[arg(long, short)]
        output: PathBuf,
        /// Rewrite register counts to what the code uses instead of failing.
        #[arg(long)]
        update_registers: bool,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Print a kernel's patched, retargeted asm.
    Apply {
        /// Kernel name from kernels.toml.
        kernel: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Target (default: the first target of the kernel's first source).
        #[arg(long, short)]
        target: Option<String>,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Apply every patch for every target and run every check.
    Check {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Also assemble, link and verify every job with the real toolchain.
        #[arg(long)]
        assemble: bool,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Re-pin a kernel's dumps (sha256 in kernels.toml) after re-checking its patches.
    Pin {
        /// Kernel name from kernels.toml.
        kernel: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
    },
    /// List every known processor, generic target and family name.
    Targets,
    /// Import dumped AMDGPU asm (files or dump directories: IREE linked and
    /// unlinked dumps, hipcc --save-temps .s, Triton .amdgcn, any AMDGPU .s):
    /// copy each under asm/<processor>/, pin its sha256 and add a [[kernel]]
    /// recording its target, kernel symbols and IREE executables to the
    /// manifest (created if absent). Re-importing the same bytes is a no-op.
    /// Triton dump directories (TRITON_DUMP_DIR) and cache entries are
    /// recognized: the dump hash and launch metadata go to `triton = {…}`.
    Import {
        /// Dumped files or directories holding them; or binaries to lift: code
        /// objects (.co, .hsaco), offload bundles, HIP host objects or
        /// executables, IREE .vmfb.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The manifest (created if absent).
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Triton cache directory searched for a Triton dump's launch metadata
        /// (repeatable; default: $TRITON_CACHE_DIR, else ~/.triton/cache).
        #[arg(long)]
        triton_cache: Vec<PathBuf>,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Build every Triton kernel of the manifest for its dump's target (the
    /// engine of `build`) and write DIR/<hash>/<kernel>.hsaco, so that
    /// `TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=DIR` runs the patched code.
    TritonOverride {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Override directory to write.
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Build every kernel × target of the manifest outside Cargo (in parallel,
    /// cached, the engine gcn-build uses) into DIR/<target>/<exec>.hsaco per
    /// IREE executable (DIR/<target>/<kernel>.hsaco for other kernels), so
    /// `--iree-hal-substitute-executable-objects-from=DIR/<target>` works;
    /// writes kernels.lock next to the manifest (with --locked: checks it).
    Build {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Build only these targets (IDs or families; repeatable). A target
        /// of the same generation as a source's dump is added to it.
        #[arg(long, short)]
        target: Vec<String>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Write KERNEL's dump with its diffs applied (rules run after them) to a
    /// work file under .gcn-patch/edit/ and print its path; edit it, then `save`.
    Edit {
        /// Kernel name from the manifest.
        kernel: String,
        /// The source building this target (default: the first source).
        #[arg(long, short)]
        target: Option<String>,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
    },
    /// Turn the edits in KERNEL's work file into the next numbered unified
    /// diff patches/<kernel>/NNNN-NAME.diff, appended to the source's
    /// `patches` (quilt style). No change: says so and writes nothing.
    Save {
        /// Kernel name from the manifest.
        kernel: String,
        /// Short name of the patch, e.g. coarser-waits.
        name: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Build KERNEL for --target from the unpatched and the patched dump,
    /// disassemble both with llvm-objdump and print a unified diff of the
    /// instructions (addresses stripped) and the register/LDS/occupancy
    /// fields that changed.
    Objdiff {
        /// Kernel name from the manifest.
        kernel: String,
        /// Target ID.
        #[arg(long, short)]
        target: String,
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        #[command(flatten)]
        llvm: LlvmArgs,
    },
    /// Print the iree-compile flags substituting every IREE executable of the
    /// manifest built for --target by `gcn-patch build --out DIR`,
    /// whitespace-separated, ready for `$(...)`.
    IreeFlags {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// The `gcn-patch build` output directory.
        #[arg(long)]
        out: PathBuf,
        /// Target ID the IREE program is compiled for.
        #[arg(long, short)]
        target: String,
    },
    /// Check FILE for wait-counter hazards: reads or overwrites of registers
    /// a pending memory operation will write. Exit 0: no hazard (notes and
    /// warnings allowed); 1: at least one hazard; 2: usage or input error.
    Lint {
        /// Any AMDGPU asm file (.s, .rocmasm); no manifest needed.
        file: PathBuf,
        /// Target ID the file is for, e.g. gfx942, gfx1100, gfx1201.
        #[arg(long, short)]
        target: String,
        /// Also list waits that could be loosened, and waits that cover nothing (notes).
        #[arg(long)]
        suggest: bool,
    },
}

/// How `build` and `triton-override` run the build engine.
#[derive(clap::Args)]
struct RunArgs {
    /// Fail, with a per-entry diff, if the build does not reproduce
    /// kernels.lock (the lock is not written).
    #[arg(long)]
    locked: bool,
    /// Parallel jobs (default: the number of CPUs).
    #[arg(long, short)]
    jobs: Option<usize>,
    #[command(flatten)]
    llvm: LlvmArgs,
}

#[derive(clap::Args)]
struct LlvmArgs {
    /// Directory holding clang and ld.lld (default: search; see README).
    #[arg(long, global = true)]
    llvm_bin: Option<PathBuf>,
    /// Time limit of every clang/ld.lld run, in seconds (default 300, or
    /// GCN_PATCH_TOOL_TIMEOUT); a tool past it is killed with its children.
    #[arg(long, global = true, value_name = "SECONDS", value_parser = parse_tool_timeout)]
    tool_timeout: Option<std::time::Duration>,
}

fn parse_tool_timeout(text: &str) -> Result<std::time::Duration, String> {
    gcn_patch::toolchain::run::parse_timeout(text)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Lint {
        file,
        target,
        suggest,
    } = &cli.command
    {
        return lint(file, target, *suggest);
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(d) => {
            eprintln!("{d}");
            ExitCode::FAILURE
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

fn parse_target(spec: &str) -> Result<TargetId, Diagnostics> {
    TargetId::parse(spec).map_err(|e| Diagnostic::error(format!("--target: {e}")).into())
}

fn toolchain(llvm: &LlvmArgs, manifest: Option<&Manifest>) -> Result<Toolchain, Diagnostics> {
    let config = ToolchainConfig {
        llvm_bin: llvm
            .llvm_bin
            .clone()
            .or_else(|| manifest.and_then(|m| m.defaults.llvm.clone())),
        timeout: llvm.tool_timeout,
        ..ToolchainConfig::default()
    };
    Toolchain::find(&config, &env).map_err(Diagnostics::from)
}

/// LLVM major of the assembler, for skew normalization: the toolchain's if one is found.
fn assembler_major(llvm: &LlvmArgs, manifest: Option<&Manifest>) -> u32 {
    toolchain(llvm, manifest)
        .map(|t| t.version.major)
        .unwrap_or(22)
}

fn read_traced(file: &Path) -> Result<Document, Diagnostics> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Diagnostic::error(format!("cannot read `{}`: {e}", file.display()))
            .with_help("check the path; dumps are plain-text .s/.rocmasm files")
    })?;
    if text.trim().is_empty() {
        return Err(
            Diagnostic::error(format!("`{}` is empty: it has no asm", file.display()))
                .with_help("pass a dumped .s/.rocmasm file (the dump may have failed to write)")
                .into(),
        );
    }
    Ok(Document::from_source(&text, file))
}

fn kernel_name(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "asm".into())
}

fn print_notes(notes: &[Diagnostic]) {
    for n in notes {
        eprintln!("{n}");
    }
}

fn run(cli: Cli) -> Result<(), Diagnostics> {
    match cli.command {
        Command::Retarget { file, target, llvm } => {
            let target = parse_target(&target)?;
            let asm = read_traced(&file)?;
            let opts = RetargetOptions {
                target,
                code_object_version: None,
                assembler_llvm_major: assembler_major(&llvm, None),
            };
            let out = gcn_patch::retarget::retarget(&asm, &opts)?;
            print!("{}", out.asm.print());
            Ok(())
        }
        Command::Assemble {
            file,
            target,
            output,
            update_registers,
            llvm,
        } => {
            let target = parse_target(&target)?;
            let tc = toolchain(&llvm, None)?;
            let asm = read_traced(&file)?;
            let opts = RetargetOptions {
                target,
                code_object_version: None,
                assembler_llvm_major: tc.version.major,
            };
            let policy = if update_registers {
                RegisterPolicy::Update
            } else {
                RegisterPolicy::Error
            };
            let prepared =
                pipeline::prepare_traced(&kernel_name(&file), None, &asm, &opts, policy)?;
            print_notes(&prepared.notes);
            let work = tempfile::tempdir()
                .map_err(|e| Diagnostic::error(format!("cannot create a temp dir: {e}")))?;
            let report = pipeline::build(&tc, &prepared, work.path(), &output)?;
            eprintln!(
                "gcn-patch: wrote {} ({}, e_flags {:#x}, {} kernel(s))",
                output.display(),
                prepared.target.name(),
                report.e_flags,
                prepared.symbols.len()
            );
            Ok(())
        }
        Command::Apply {
            kernel,
            manifest,
            target,
            llvm,
        } => {
            let m = Manifest::load(&manifest)?;
            let ki = m
                .kernels
                .iter()
                .position(|k| k.name == kernel)
                .ok_or_else(|| unknown_kernel(&m, &kernel))?;
            let plan = pipeline::plan(&m, &[])?;
            let job = match &target {
                Some(t) => {
                    let t = parse_target(t)?;
                    plan.jobs
                        .iter()
                        .find(|j| j.kernel == ki && j.target == t)
                        .cloned()
                        .ok_or_else(|| not_built_for(&plan, ki, &kernel, &t))?
                }
                None => plan
                    .jobs
                    .iter()
                    .find(|j| j.kernel == ki)
                    .cloned()
                    .ok_or_else(|| {
                        Diagnostics::from(Diagnostic::error(format!(
                            "kernel `{kernel}` has no targets"
                        )))
                    })?,
            };
            let prepared = pipeline::prepare(&m, &plan, &job, assembler_major(&llvm, Some(&m)))?;
            print_notes(&prepared.notes);
            print!("{}", prepared.asm.print());
            Ok(())
        }
        Command::Check {
            manifest,
            assemble,
            llvm,
        } => check(&manifest, assemble, &llvm),
        Command::Pin { kernel, manifest } => {
            let changes = gcn_patch::patch::pin(&manifest, &kernel)?;
            if changes.is_empty() {
                eprintln!("gcn-patch: kernel `{kernel}`: every pin already matches");
            }
            for (path, old, new) in changes {
                eprintln!("gcn-patch: pinned {}: {old} -> {new}", path.display());
            }
            Ok(())
        }
        Command::Lint { .. } => unreachable!("handled in main"),
        Command::Import {
            paths,
            manifest,
            triton_cache,
            llvm,
        } => import(&manifest, &paths, triton_cache, &llvm),
        Command::Build {
            manifest,
            out,
            target,
            run,
        } => build(&manifest, &out, Layout::Build(&target), &run),
        Command::TritonOverride { manifest, out, run } => {
            build(&manifest, &out, Layout::TritonOverride, &run)
        }
        Command::Edit {
            kernel,
            target,
            manifest,
        } => {
            let target = target.as_deref().map(parse_target).transpose()?;
            let w = gcn_patch::patch::quilt::edit(&manifest, &kernel, target.as_ref())?;
            println!("{}", w.path.display());
            eprintln!(
                "gcn-patch: {} with its patches applied; edit it, then run `gcn-patch save {kernel} NAME`",
                w.dump.display()
            );
            if w.rules > 0 {
                eprintln!(
                    "gcn-patch: note: the source's {} rule(s) are applied after your edits, as after every patch",
                    w.rules
                );
            }
            Ok(())
        }
        Command::Save {
            kernel,
            name,
            manifest,
            llvm,
        } => {
            use gcn_patch::patch::quilt::Saved;
            let tc = toolchain(&llvm, None)?;
            match gcn_patch::patch::quilt::save(&manifest, &kernel, &name, &tc)? {
                Saved::NoChange => eprintln!(
                    "gcn-patch: kernel `{kernel}`: the work file has no change; nothing written"
                ),
                Saved::Patch {
                    rel,
                    added,
                    removed,
                } => eprintln!(
                    "gcn-patch: wrote {} (+{added} -{removed} lines) and added it to {}",
                    rel.display(),
                    manifest.display()
                ),
            }
            Ok(())
        }
        Command::Lift {
            file,
            output,
            target,
            llvm,
        } => {
            let tc = toolchain(&llvm, None)?;
            let t = target.as_deref().map(parse_target).transpose()?;
            let lifted = gcn_patch::lift::lift_file(
                &file,
                t.as_ref(),
                &gcn_patch::lift::LiftOptions { toolchain: &tc },
            )?;
            match &output {
                Some(out) => {
                    gcn_patch::output::write_atomic(out, lifted.asm.as_bytes()).map_err(|e| {
                        Diagnostic::error(format!("cannot write {}: {e}", out.display()))
                    })?
                }
                None => print!("{}", lifted.asm),
            }
            for n in &lifted.notes {
                eprintln!("note: {n}");
            }
            eprintln!(
                "gcn-patch lift: {} ({}): {} kernel(s), {} instructions, {} raw; rebuilds byte-identically",
                file.display(),
                lifted.target.name(),
                lifted.kernels.len(),
                lifted.instructions,
                lifted.raw_instructions
            );
            Ok(())
        }
        Command::Objdiff {
            kernel,
            target,
            manifest,
            llvm,
        } => objdiff(&manifest, &kernel, &target, &llvm),
        Command::IreeFlags {
            manifest,
            out,
            target,
        } => {
            let m = Manifest::load(&manifest)?;
            let t = parse_target(&target)?;
            let flags = gcn_patch::install::iree_flags(&m, &out, &t)?;
            println!("{}", flags.join(" "));
            Ok(())
        }
        Command::Targets => {
            println!(
                "{:<18} {:>6}  {:<18} {:<8} {:<6} {:>4}",
                "processor", "mach", "generic", "sramecc", "xnack", "llvm"
            );
            for p in gcn_embed::processors() {
                println!(
                    "{:<18} {:>#6x}  {:<18} {:<8} {:<6} {:>4}",
                    p.name,
                    p.mach,
                    p.generic.unwrap_or("-"),
                    if p.sramecc { "yes" } else { "-" },
                    if p.xnack { "yes" } else { "-" },
                    p.min_llvm
                );
            }
            println!();
            for (family, members) in gcn_embed::family::families() {
                println!("{family:<14} {}", members.join(" "));
            }
            Ok(())
        }
    }
}

/// `gcn-patch lint`: exit 0 without hazard, 1 with one, 2 on bad input.
fn lint(file: &Path, target: &str, suggest: bool) -> ExitCode {
    let input = parse_target(target).and_then(|t| read_traced(file).map(|a| (t, a)));
    let (target, asm) = match input {
        Ok(x) => x,
        Err(d) => {
            eprintln!("{d}");
            return ExitCode::from(2);
        }
    };
    let opts = gcn_patch::check::hazard::LintOptions {
        policy: gcn_patch::check::HazardPolicy::Error,
        suggest,
    };
    let diags = gcn_patch::check::hazard::lint(&asm, &target, opts);
    let hazards = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    for d in &diags {
        eprintln!("{d}\n");
    }
    let notes = diags
        .iter()
        .filter(|d| d.severity == Severity::Note)
        .count();
    let warnings = diags.len() - hazards - notes;
    eprintln!(
        "gcn-patch lint: {}: {hazards} hazard(s), {warnings} warning(s), {notes} suggestion(s) for {}",
        file.display(),
        target.name()
    );
    if hazards > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn unknown_kernel(m: &Manifest, name: &str) -> Diagnostics {
    let names: Vec<&str> = m.kernels.iter().map(|k| k.name.as_str()).collect();
    Diagnostic::error(format!("no kernel `{name}` in {}", m.path.display()))
        .with_note(format!("kernels: {}", names.join(", ")))
        .with_help("pass the `name` of a [[kernel]] in the manifest")
        .into()
}

/// `gcn-patch check`: every kernel × target, all diagnostics, exit 0 only if all pass.
fn check(manifest: &Path, assemble: bool, llvm: &LlvmArgs) -> Result<(), Diagnostics> {
    let m = Manifest::load(manifest)?;
    let plan = pipeline::plan(&m, &[])?;
    if plan.jobs.is_empty() {
        return Err(
            Diagnostic::error(format!("{} lists no kernel to check", manifest.display()))
                .with_help(
                    "add a [[kernel]] with a [[kernel.source]] (see README, \"kernels.toml\")",
                )
                .into(),
        );
    }
    let tc = if assemble {
        Some(toolchain(llvm, Some(&m))?)
    } else {
        None
    };
    let major = tc
        .as_ref()
        .map(|t| t.version.major)
        .unwrap_or_else(|| assembler_major(llvm, Some(&m)));
    let mut errors = Vec::new();
    let work = tempfile::tempdir()
        .map_err(|e| Diagnostic::error(format!("cannot create a temp dir: {e}")))?;
    for job in &plan.jobs {
        let kernel = &m.kernels[job.kernel].name;
        let result = pipeline::prepare(&m, &plan, job, major).and_then(|p| {
            print_notes(&p.notes);
            if let Some(tc) = &tc {
                let out = work.path().join(format!(
                    "{kernel}-{}.hsaco",
                    job.target.name().replace(':', "_")
                ));
                pipeline::build(tc, &p, work.path(), &out)?;
            }
            Ok(())
        });
        match result {
            Ok(()) => eprintln!("ok: {}", pipeline::label(kernel, &job.target)),
            Err(d) => errors.extend(d.0.into_iter().filter(|d| d.severity == Severity::Error)),
        }
    }
    if errors.is_empty() {
        eprintln!("gcn-patch check: {} job(s) passed", plan.jobs.len());
        Ok(())
    } else {
        Err(Diagnostics(errors))
    }
}

/// `gcn-patch import`: one line per file, then what was skipped.
fn import(
    manifest: &Path,
    paths: &[PathBuf],
    triton_caches: Vec<PathBuf>,
    llvm: &LlvmArgs,
) -> Result<(), Diagnostics> {
    use gcn_patch::import::{ImportOptions, Outcome};
    let mut options = ImportOptions::with_triton_caches(triton_caches, &env);
    // Binaries are lifted with the toolchain's LLVM tools (found only when one is given).
    if paths.iter().any(|p| gcn_patch::import::is_binary(p)) {
        options.toolchain = Some(toolchain(llvm, None)?);
    }
    let report = gcn_patch::import::import_with(manifest, paths, &options)?;
    for o in &report.outcomes {
        match o {
            Outcome::Added { kernel, asm } => eprintln!(
                "gcn-patch: imported {} as kernel `{kernel}` into {}",
                asm.display(),
                manifest.display()
            ),
            Outcome::AddedSource { kernel, asm } => eprintln!(
                "gcn-patch: imported {} as a new source of kernel `{kernel}` in {}",
                asm.display(),
                manifest.display()
            ),
            Outcome::Unchanged { kernel, asm } => eprintln!(
                "gcn-patch: {} is already imported (kernel `{kernel}`, same sha256): nothing to do",
                asm.display()
            ),
        }
    }
    for n in &report.notes {
        eprintln!("note: {n}");
    }
    if !report.skipped.is_empty() {
        eprintln!(
            "gcn-patch: skipped {} file(s) that are not AMDGPU assembly",
            report.skipped.len()
        );
    }
    Ok(())
}

/// Which jobs to build and where their objects go.
enum Layout<'a> {
    /// `gcn-patch build --target …`: `DIR/<target>/<exec or kernel>.hsaco`.
    Build(&'a [String]),
    /// `gcn-patch triton-override`: `DIR/<hash>/<kernel>.hsaco` per Triton kernel.
    TritonOverride,
}

/// `gcn-patch build` and `triton-override`: plan, build in parallel through
/// the shared engine, check or write the lock, install into the output
/// layout, print a summary table.
fn build(
    manifest: &Path,
    out: &Path,
    layout: Layout<'_>,
    run: &RunArgs,
) -> Result<(), Diagnostics> {
    let RunArgs { locked, jobs, llvm } = run;
    let (locked, jobs) = (*locked, *jobs);
    use gcn_patch::build::{build_all, BuildOptions};
    use gcn_patch::cache::{self, ObjectCache, SharedCache};
    use std::io::IsTerminal;
    let m = Manifest::load(manifest)?;
    let targets = match layout {
        Layout::Build(t) => t,
        Layout::TritonOverride => &[],
    };
    let mut wanted: Vec<TargetId> = Vec::new();
    for t in targets {
        wanted.extend(
            gcn_embed::family::expand(t)
                .map_err(|e| Diagnostics::from(Diagnostic::error(format!("--target: {e}"))))?,
        );
    }
    let max_jobs = jobs
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .max(1);
    let mut plan = pipeline::plan_with(&m, &wanted, max_jobs, &gcn_patch::jobs::Unlimited)?;
    if !wanted.is_empty() {
        plan.jobs.retain(|j| wanted.contains(&j.target));
        for t in &wanted {
            if !plan.jobs.iter().any(|j| j.target == *t) {
                return Err(Diagnostic::error(format!(
                    "no kernel of {} builds for {}",
                    manifest.display(),
                    t.name()
                ))
                .with_help("a source builds for its `targets` and for targets of its dump's generation; check `--target`")
                .into());
            }
        }
    }
    if plan.jobs.is_empty() {
        return Err(
            Diagnostic::error(format!("{} lists no kernel to build", manifest.display()))
                .with_help("import dumps with `gcn-patch import DUMP...` or add a [[kernel]] (see README, \"kernels.toml\")")
                .into(),
        );
    }
    let files = match layout {
        Layout::Build(_) => {
            let pairs: Vec<(usize, TargetId)> =
                plan.jobs.iter().map(|j| (j.kernel, j.target)).collect();
            gcn_patch::install::plan_files(&m, out, &pairs)?
        }
        Layout::TritonOverride => {
            let files = gcn_patch::install::triton_override_files(&m, &plan, out)?;
            plan.jobs.retain(|j| {
                files
                    .iter()
                    .any(|(k, t, _)| *k == j.kernel && *t == j.target)
            });
            files
        }
    };
    let tc = toolchain(llvm, Some(&m))?;
    let shared = SharedCache::from_env(&env)
        .map_err(|e| Diagnostic::error(e).with_help("unset it for the default (1 GiB)"))?;
    let state_dir = out.join(".gcn-patch");
    let terminal = std::io::stderr().is_terminal();
    if terminal {
        eprintln!(
            "gcn-patch: building {} code object(s), {max_jobs} at a time…",
            plan.jobs.len()
        );
    }
    // On a terminal, one line redrawn per finished job; cleared before the table.
    let progress = |p: gcn_patch::build::Progress<'_>| {
        let state = match p.assembled {
            Some(true) => "assembled",
            Some(false) => "cached",
            None => "failed",
        };
        eprint!(
            "\r\x1b[K[{}/{}] {} {} {state}",
            p.done,
            p.total,
            p.kernel,
            p.target.name()
        );
    };
    let opts = BuildOptions {
        toolchain: &tc,
        cache: ObjectCache {
            local: state_dir.join("cache"),
            shared,
        },
        work_dir: state_dir.join("work"),
        max_jobs,
        tokens: &gcn_patch::jobs::Unlimited,
        progress: if terminal { Some(&progress) } else { None },
    };
    let built = build_all(&m, &plan, &opts);
    if terminal {
        eprint!("\r\x1b[K");
    }
    let built = built?;
    for b in &built {
        print_notes(&b.notes);
    }
    let lock = gcn_patch::lock::record(&m, &tc, &built, locked)?;
    println!(
        "{:<24} {:<22} {:<10} {:<16} files",
        "kernel", "target", "state", "sha256"
    );
    for b in &built {
        let mine: Vec<String> = files
            .iter()
            .filter(|(k, t, _)| *k == b.job.kernel && *t == b.target)
            .map(|(_, _, p)| p.strip_prefix(out).unwrap_or(p).display().to_string())
            .collect();
        for (_, _, p) in files
            .iter()
            .filter(|(k, t, _)| *k == b.job.kernel && *t == b.target)
        {
            cache::write_if_changed(p, &b.bytes).map_err(|e| {
                Diagnostic::error(format!("cannot write `{}`: {e}", p.display()))
                    .with_help("check that the output directory is writable")
            })?;
        }
        let state = match b.cached {
            None => "assembled",
            Some(cache::Hit::Local) => "cached",
            Some(_) => "shared",
        };
        println!(
            "{:<24} {:<22} {:<10} {:<16} {}",
            b.kernel,
            b.target.name(),
            state,
            &b.sha256[..16],
            mine.join(" ")
        );
    }
    let assembled = built.iter().filter(|b| b.cached.is_none()).count();
    eprintln!(
        "gcn-patch build: {} code object(s) ({assembled} assembled, {} cached) in {}; {} {}",
        built.len(),
        built.len() - assembled,
        out.display(),
        if locked { "reproduces" } else { "wrote" },
        lock.display()
    );
    Ok(())
}

/// `gcn-patch objdiff`: the job of KERNEL for T, unpatched vs patched.
fn objdiff(
    manifest: &Path,
    kernel: &str,
    target: &str,
    llvm: &LlvmArgs,
) -> Result<(), Diagnostics> {
    let m = Manifest::load(manifest)?;
    let t = parse_target(target)?;
    let ki = m
        .kernels
        .iter()
        .position(|k| k.name == kernel)
        .ok_or_else(|| unknown_kernel(&m, kernel))?;
    let plan = pipeline::plan(&m, &[])?;
    let job = plan
        .jobs
        .iter()
        .find(|j| j.kernel == ki && j.target == t)
        .cloned()
        .ok_or_else(|| not_built_for(&plan, ki, kernel, &t))?;
    let tc = toolchain(llvm, Some(&m))?;
    let work = tempfile::tempdir()
        .map_err(|e| Diagnostic::error(format!("cannot create a temp dir: {e}")))?;
    let d = gcn_patch::objdiff::objdiff(&m, &plan, &job, &tc, work.path())?;
    print!("{}", d.diff);
    if d.diff.is_empty() {
        eprintln!(
            "gcn-patch: kernel `{kernel}` for {}: the patches change no instruction",
            t.name()
        );
    }
    for f in &d.fields {
        println!("changed: {f}");
    }
    Ok(())
}

fn not_built_for(plan: &pipeline::Plan, ki: usize, kernel: &str, t: &TargetId) -> Diagnostics {
    let have: Vec<String> = plan
        .jobs
        .iter()
        .filter(|j| j.kernel == ki)
        .map(|j| j.target.name())
        .collect();
    Diagnostic::error(format!("kernel `{kernel}` is not built for {}", t.name()))
        .with_note(format!("its targets: {}", have.join(", ")))
        .with_help("add the target to a source's `targets` in kernels.toml")
        .into()
}
