//! `gcn-patch`: a thin CLI over the gcn-patch library.
//!
//! ```text
//! gcn-patch retarget FILE --target T            print retargeted, normalized asm
//! gcn-patch assemble FILE --target T -o OUT     retarget, assemble, link, verify
//! gcn-patch apply KERNEL [--manifest M] [--target T]   print patched, retargeted asm
//! gcn-patch check [--manifest M] [--no-assemble]  apply, check and build every kernel × target
//! gcn-patch pin KERNEL [--manifest M]           re-pin a kernel's dumps after re-checking patches
//! gcn-patch targets                             list known processors and families
//! gcn-patch lint FILE --target T [--suggest] [--baseline BASE]    wait-counter hazards (exit 0 clean, 1 hazard, 2 input error)
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
use gcn_patch::diag::{Diagnostic, Diagnostics, Severity};
use gcn_patch::ops::{self, build::Layout, Tools};

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
    /// Apply every patch for every target, run every check, and assemble,
    /// link and verify every job with the real toolchain (in parallel,
    /// through the object cache): "ok" means it builds.
    Check {
        /// The manifest.
        #[arg(long, short, default_value = "kernels.toml")]
        manifest: PathBuf,
        /// Skip assembling: only apply and check (no toolchain needed; an
        /// "ok" then does not mean the assembler accepts every instruction).
        #[arg(long, conflicts_with = "assemble")]
        no_assemble: bool,
        /// Assemble, link and verify (the default; kept for scripts).
        #[arg(long, hide = true)]
        assemble: bool,
        /// Parallel jobs when assembling (default: the number of CPUs).
        #[arg(long, short)]
        jobs: Option<usize>,
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
        /// Report only hazards FILE has that BASE does not (or has with a
        /// stricter wait): lines are matched by a diff alignment of the two
        /// files. Exit 1 if there is any.
        #[arg(long, value_name = "BASE")]
        baseline: Option<PathBuf>,
    },
    /// Print this command-line reference as Markdown (the book's
    /// docs/src/reference/cli-options.md is generated with it).
    #[command(hide = true)]
    MarkdownHelp,
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
    /// Directory holding clang and ld.lld (default: search; see docs/src/reference/toolchain.md).
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
        baseline,
    } = &cli.command
    {
        return lint(file, target, *suggest, baseline.as_deref());
    }
    if let Command::MarkdownHelp = &cli.command {
        print!("{}", markdown_help());
        return ExitCode::SUCCESS;
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(d) => {
            eprintln!("{d}");
            ExitCode::FAILURE
        }
    }
}

/// The command-line reference in Markdown, from the argument parser itself.
fn markdown_help() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("Command-line options".to_string())
        .show_footer(false);
    let body = escape_angle_brackets(&clap_markdown::help_markdown_custom::<Cli>(&options));
    format!(
        "<!-- Generated by `gcn-patch markdown-help`; do not edit. Regenerate with\n     \
         cargo run -p gcn-patch -- markdown-help > docs/src/reference/cli-options.md -->\n\n{body}"
    )
}

/// `<kernel>` in help text is a placeholder, not an HTML tag: escape `<` and
/// `>` outside code spans and fenced blocks, so Markdown renderers show it.
fn escape_angle_brackets(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fenced = false;
    for line in markdown.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            out.push_str(line);
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            match c {
                '`' => {
                    in_code = !in_code;
                    out.push(c);
                }
                '<' if !in_code => out.push_str("&lt;"),
                '>' if !in_code => out.push_str("&gt;"),
                _ => out.push(c),
            }
        }
    }
    out
}

impl LlvmArgs {
    fn tools(&self) -> Tools {
        Tools {
            llvm_bin: self.llvm_bin.clone(),
            tool_timeout: self.tool_timeout,
        }
    }
}

fn print_notes(notes: &[Diagnostic]) {
    for n in notes {
        eprintln!("{n}");
    }
}

fn run(cli: Cli) -> Result<(), Diagnostics> {
    match cli.command {
        Command::Retarget { file, target, llvm } => {
            print!(
                "{}",
                ops::asm::retarget(&file, &target, &llvm.tools())?.print()
            );
        }
        Command::Assemble {
            file,
            target,
            output,
            update_registers,
            llvm,
        } => {
            let a = ops::asm::assemble(&ops::asm::AssembleOptions {
                file,
                target,
                output,
                update_registers,
                tools: llvm.tools(),
            })?;
            print_notes(&a.notes);
            eprintln!(
                "gcn-patch: wrote {} ({}, e_flags {:#x}, {} kernel(s))",
                a.output.display(),
                a.target.name(),
                a.e_flags,
                a.kernels
            );
        }
        Command::Apply {
            kernel,
            manifest,
            target,
            llvm,
        } => {
            let a = ops::kernel::apply(&manifest, &kernel, target.as_deref(), &llvm.tools())?;
            print_notes(&a.notes);
            print!("{}", a.asm.print());
        }
        Command::Check {
            manifest,
            no_assemble,
            assemble: _,
            jobs,
            llvm,
        } => {
            let r = ops::check::check(&manifest, !no_assemble, jobs, &llvm.tools())?;
            for j in &r.jobs {
                print_notes(&j.notes);
                if j.passed {
                    eprintln!("ok: {}", gcn_patch::pipeline::label(&j.kernel, &j.target));
                }
            }
            if !r.errors.is_empty() {
                return Err(Diagnostics(r.errors));
            }
            eprintln!(
                "gcn-patch check: {} job(s) passed{}",
                r.jobs.len(),
                if r.assembled {
                    " (assembled, linked and verified)"
                } else {
                    " (not assembled: --no-assemble)"
                }
            );
        }
        Command::Pin { kernel, manifest } => {
            let changes = gcn_patch::patch::pin(&manifest, &kernel)?;
            if changes.is_empty() {
                eprintln!("gcn-patch: kernel `{kernel}`: every pin already matches");
            }
            for (path, old, new) in changes {
                eprintln!("gcn-patch: pinned {}: {old} -> {new}", path.display());
            }
        }
        Command::Lint { .. } | Command::MarkdownHelp => unreachable!("handled in main"),
        Command::Import {
            paths,
            manifest,
            triton_cache,
            llvm,
        } => import(&manifest, &paths, triton_cache, &llvm)?,
        Command::Build {
            manifest,
            out,
            target,
            run,
        } => build(manifest, out, Layout::Build(target), run)?,
        Command::TritonOverride { manifest, out, run } => {
            build(manifest, out, Layout::TritonOverride, run)?
        }
        Command::Edit {
            kernel,
            target,
            manifest,
        } => {
            let target = target.as_deref().map(ops::parse_target).transpose()?;
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
        }
        Command::Save {
            kernel,
            name,
            manifest,
            llvm,
        } => {
            use gcn_patch::patch::quilt::Saved;
            let tc = llvm.tools().find(None)?;
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
        }
        Command::Lift {
            file,
            output,
            target,
            llvm,
        } => {
            let lifted = ops::lift::lift(&file, output.as_ref(), target.as_deref(), &llvm.tools())?;
            if output.is_none() {
                print!("{}", lifted.asm);
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
        }
        Command::Objdiff {
            kernel,
            target,
            manifest,
            llvm,
        } => {
            let d = ops::kernel::objdiff(&manifest, &kernel, &target, &llvm.tools())?;
            print!("{}", d.diff);
            if d.diff.is_empty() {
                eprintln!(
                    "gcn-patch: kernel `{kernel}` for {}: the patches change no instruction",
                    ops::parse_target(&target)?.name()
                );
            }
            for f in &d.fields {
                println!("changed: {f}");
            }
        }
        Command::IreeFlags {
            manifest,
            out,
            target,
        } => println!(
            "{}",
            ops::kernel::iree_flags(&manifest, &out, &target)?.join(" ")
        ),
        Command::Targets => targets(),
    }
    Ok(())
}

/// `gcn-patch lint`: exit 0 without (new) hazard, 1 with one, 2 on bad input.
fn lint(file: &Path, target: &str, suggest: bool, baseline: Option<&Path>) -> ExitCode {
    let r = match ops::lint::lint(file, target, suggest, baseline) {
        Ok(r) => r,
        Err(d) => {
            eprintln!("{d}");
            return ExitCode::from(2);
        }
    };
    for d in &r.diagnostics {
        eprintln!("{d}\n");
    }
    let hazards = r.hazards();
    let inherited = r.inherited();
    let notes = r.count(Severity::Note) - inherited;
    let warnings = r.diagnostics.len() - hazards - notes - inherited;
    match baseline {
        Some(b) => eprintln!(
            "gcn-patch lint: {}: {hazards} hazard(s) not in {}, {warnings} warning(s), {notes} suggestion(s), {inherited} kernel(s) with inherited hazards, for {}",
            file.display(),
            b.display(),
            r.target.name()
        ),
        None => eprintln!(
            "gcn-patch lint: {}: {hazards} hazard(s), {warnings} warning(s), {notes} suggestion(s) for {}",
            file.display(),
            r.target.name()
        ),
    }
    if hazards > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `gcn-patch import`: one line per file, then what was skipped.
fn import(
    manifest: &Path,
    paths: &[PathBuf],
    triton_caches: Vec<PathBuf>,
    llvm: &LlvmArgs,
) -> Result<(), Diagnostics> {
    use gcn_patch::import::Outcome;
    let report = ops::import::import(manifest, paths, triton_caches, &llvm.tools())?;
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

/// Draws one progress line, redrawn per finished job, on a terminal.
struct Terminal {
    /// The command, which names itself (`build`, `triton-override`).
    command: &'static str,
}

impl ops::build::Observer for Terminal {
    fn start(&self, jobs: usize, max_jobs: usize) {
        eprintln!(
            "gcn-patch {}: building {jobs} code object(s), {max_jobs} at a time…",
            self.command
        );
    }
    fn progress(&self, p: gcn_patch::build::Progress<'_>) {
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
    }
}

/// `gcn-patch build` and `triton-override`: the build, then a summary table.
fn build(manifest: PathBuf, out: PathBuf, layout: Layout, run: RunArgs) -> Result<(), Diagnostics> {
    use std::io::IsTerminal;
    // Each command names itself in what it prints.
    let command = match layout {
        Layout::Build(_) => "build",
        Layout::TritonOverride => "triton-override",
    };
    let req = ops::build::BuildRequest {
        manifest,
        out,
        layout,
        locked: run.locked,
        jobs: run.jobs,
        tools: run.llvm.tools(),
    };
    let terminal = std::io::stderr().is_terminal();
    let observer: &dyn ops::build::Observer = if terminal {
        &Terminal { command }
    } else {
        &ops::build::Quiet
    };
    let built = ops::build::build(&req, observer);
    if terminal {
        eprint!("\r\x1b[K");
    }
    let r = built?;
    print_notes(&r.notes);
    println!(
        "{:<24} {:<22} {:<10} {:<16} files",
        "kernel", "target", "state", "sha256"
    );
    for row in &r.rows {
        let files: Vec<String> = row.files.iter().map(|p| p.display().to_string()).collect();
        println!(
            "{:<24} {:<22} {:<10} {:<16} {}",
            row.kernel,
            row.target.name(),
            row.state.as_str(),
            &row.sha256[..16],
            files.join(" ")
        );
    }
    eprintln!(
        "gcn-patch {command}: {} code object(s) ({} assembled, {} cached) in {}; {} {}",
        r.rows.len(),
        r.assembled(),
        r.rows.len() - r.assembled(),
        req.out.display(),
        if req.locked { "reproduces" } else { "wrote" },
        r.lock.display()
    );
    Ok(())
}

/// `gcn-patch targets`: processors, then families.
fn targets() {
    let t = ops::targets::targets();
    println!(
        "{:<18} {:>6}  {:<18} {:<8} {:<6} {:>4}",
        "processor", "mach", "generic", "sramecc", "xnack", "llvm"
    );
    for p in t.processors {
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
    for (family, members) in t.families {
        println!("{family:<14} {}", members.join(" "));
    }
}
