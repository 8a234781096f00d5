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

mod args;
mod render;

use std::process::ExitCode;

use clap::Parser;
use gcn_patch::diag::Diagnostics;
use gcn_patch::ops::{self, build::Layout};

use args::{markdown_help, Cli, Command};
use render::{build, import, lint, print_notes, targets};

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
            jobs,
            llvm,
        } => import(&manifest, &paths, triton_cache, jobs, &llvm)?,
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
            no_verify,
            llvm,
        } => {
            let lifted = ops::lift::lift(
                &file,
                output.as_ref(),
                target.as_deref(),
                !no_verify,
                &llvm.tools(),
            )?;
            if output.is_none() {
                print!("{}", lifted.asm);
            }
            for n in &lifted.notes {
                eprintln!("note: {n}");
            }
            eprintln!(
                "gcn-patch lift: {} ({}): {} kernel(s), {} instructions, {} raw; {}",
                file.display(),
                lifted.target.name(),
                lifted.kernels.len(),
                lifted.instructions,
                lifted.raw_instructions,
                lifted.identity
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
