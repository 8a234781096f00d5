//! `gcn-patch`: a thin CLI over the gcn-patch library.
//!
//! ```text
//! gcn-patch retarget FILE --target T            print retargeted, normalized asm
//! gcn-patch assemble FILE --target T -o OUT [--baseline ORIGINAL]   retarget, assemble, link, verify
//! gcn-patch apply KERNEL [--manifest M] [--target T]   print patched, retargeted asm
//! gcn-patch check [--manifest M] [--no-assemble]  apply, check and build every kernel × target
//! gcn-patch pin KERNEL [--manifest M]           re-pin a kernel's dumps after re-checking patches
//! gcn-patch targets                             list known processors and families
//! gcn-patch lint FILE [--target T] [--suggest] [--baseline BASE]  wait-counter hazards (exit 0 clean, 1 hazard, 2 input error)
//! gcn-patch import PATH... [--manifest M]       copy dumps under asm/, pin them, add them to the manifest
//! gcn-patch build --out DIR [--manifest M] [--target T]... [--locked] [-j N]
//!                                               every kernel × target to DIR/<target>/, writes kernels.lock
//! gcn-patch edit KERNEL [--target T] [--manifest M] [--force]   write the patched dump to a work file, print its path
//! gcn-patch save KERNEL NAME [--manifest M]     the work file's edits -> patches/<kernel>/NNNN-NAME.diff (or refresh NAME)
//! gcn-patch patches KERNEL [--manifest M]       list a kernel's patches in order
//! gcn-patch accept KERNEL [--manifest M]        acknowledge a kernel's current findings (builds stop showing them)
//! gcn-patch drop KERNEL NAME [--manifest M] [--force]   remove a patch
//! gcn-patch objdiff KERNEL --target T [--manifest M]   disassembly diff, unpatched vs patched
//! gcn-patch iree-flags --out DIR --target T [--manifest M]   iree-compile substitution flags
//! ```

mod args;
mod progress;
mod render;

use std::process::ExitCode;

use clap::Parser;
use gcn_patch::base::diag::Diagnostics;
use gcn_patch::ops::{self, build::Layout};

use args::{markdown_help, Cli, Command};
use progress::{detail, say};
use render::{build, import, lint, print_notes, targets};

fn main() -> ExitCode {
    let cli = Cli::parse();
    progress::set_verbosity(cli.quiet, cli.verbose);
    // A panic anywhere (a bug) is an error and exit 1, like any failure.
    ops::catch(|| dispatch(cli)).unwrap_or_else(|p| {
        let command: Vec<String> = std::env::args().take(4).collect();
        let job = format!("running `{} …`", command.join(" "));
        eprintln!("{}", Diagnostics::from(p.into_diagnostic(&job)));
        ExitCode::FAILURE
    })
}

fn dispatch(cli: Cli) -> ExitCode {
    if let Command::Lint {
        file,
        target,
        suggest,
        baseline,
    } = &cli.command
    {
        return lint(file, target.as_deref(), *suggest, baseline.as_deref());
    }
    if let Command::Run {
        object,
        kernel,
        grid,
        block,
        cluster,
        args,
        zero_rest,
        out,
        sanitize,
        seed,
        asm,
        max_instructions,
        max_memory,
        max_work,
        dynamic_lds,
        run_as,
        perturb_approx,
        slice,
        list_unsupported,
        llvm,
    } = cli.command
    {
        use gcn_patch::base::diag::Setting;
        if list_unsupported {
            return render::unsupported(&object, kernel.as_deref(), &llvm.tools());
        }
        // clap requires these without --list-unsupported.
        let (kernel, grid, block) = (
            kernel.unwrap_or_default(),
            grid.unwrap_or_default(),
            block.unwrap_or_default(),
        );
        let parsed = ops::run::parse_dims(Setting::Grid, &grid).and_then(|grid| {
            let block = ops::run::parse_dims(Setting::Block, &block)?;
            let cluster = match &cluster {
                Some(c) => ops::run::parse_dims(Setting::Cluster, c)?,
                None => [0; 3],
            };
            let (mut named, mut positional) = (Vec::new(), Vec::new());
            for a in &args {
                match ops::run::parse_arg(a)? {
                    (Some(name), spec) => named.push((name, spec)),
                    (None, spec) => positional.push(spec),
                }
            }
            Ok((grid, block, cluster, (positional, named)))
        });
        let (grid, block, cluster, (args, named)) = match parsed {
            Ok(p) => p,
            Err(d) => return render::usage(d),
        };
        let opts = ops::run::RunOptions {
            object,
            kernel,
            grid,
            block,
            cluster,
            args,
            named,
            zero_rest,
            out,
            sanitize: sanitize.unwrap_or_default(),
            seed,
            asm,
            max_instructions,
            max_memory,
            max_work,
            dynamic_lds,
            run_as,
            perturb_approx,
            slice,
        };
        return render::run(&opts, &llvm.tools());
    }
    if let Command::Profile {
        object,
        kernel,
        grid,
        block,
        target,
        manifest,
        args,
        zero_rest,
        device,
        json,
        trace,
        html,
        annotate,
        top,
        asm,
        max_instructions,
        dynamic_lds,
        run_as,
        llvm,
    } = cli.command
    {
        use gcn_patch::base::diag::Setting;
        let files = ops::profile::ReportFiles {
            json,
            trace,
            html,
            annotate,
        };
        let (Some(grid), Some(block), Some(kernel)) = (grid, block, kernel) else {
            let target = match target.as_deref().map(ops::parse_target).transpose() {
                Ok(t) => t,
                Err(d) => return render::usage(d),
            };
            let opts = ops::emulate::CompareOptions {
                manifest,
                kernel: object.display().to_string(),
                target,
                tolerance: None,
                max_instructions,
                run_as,
                perturb_approx: None,
                slice: 0,
            };
            return render::profile_declared(&opts, &device, &files, top, &llvm.tools());
        };
        let parsed = ops::run::parse_dims(Setting::Grid, &grid).and_then(|grid| {
            let block = ops::run::parse_dims(Setting::Block, &block)?;
            let (mut named, mut positional) = (Vec::new(), Vec::new());
            for a in &args {
                match ops::run::parse_arg(a)? {
                    (Some(name), spec) => named.push((name, spec)),
                    (None, spec) => positional.push(spec),
                }
            }
            Ok((grid, block, (positional, named)))
        });
        let (grid, block, (args, named)) = match parsed {
            Ok(p) => p,
            Err(d) => return render::usage(d),
        };
        let opts = ops::profile::ProfileOptions {
            run: ops::run::RunOptions {
                object,
                kernel,
                grid,
                block,
                args,
                named,
                zero_rest,
                asm,
                max_instructions,
                dynamic_lds,
                run_as,
                ..Default::default()
            },
            device,
            timeline: files.timeline(),
        };
        return render::profile(&opts, &files, top, &llvm.tools());
    }
    if let Command::Compare {
        kernel,
        target,
        tolerance,
        max_instructions,
        run_as,
        slice,
        perturb_approx,
        manifest,
        llvm,
    } = cli.command
    {
        let parsed = target
            .as_deref()
            .map(ops::parse_target)
            .transpose()
            .and_then(|target| {
                let tolerance = tolerance
                    .as_deref()
                    .map(ops::emulate::parse_tolerance)
                    .transpose()?;
                Ok((target, tolerance))
            });
        let (target, tolerance) = match parsed {
            Ok(p) => p,
            Err(d) => return render::usage(d),
        };
        let opts = ops::emulate::CompareOptions {
            manifest,
            kernel,
            target,
            tolerance,
            max_instructions,
            run_as,
            perturb_approx,
            slice,
        };
        return render::compare(&opts, &llvm.tools());
    }
    if let Command::Test {
        kernel,
        target,
        seeds,
        max_instructions,
        sanitize,
        run_as,
        slice,
        perturb_approx,
        manifest,
        llvm,
    } = cli.command
    {
        let target = match target.as_deref().map(ops::parse_target).transpose() {
            Ok(t) => t,
            Err(d) => return render::usage(d),
        };
        let opts = ops::emulate::TestOptions {
            manifest,
            kernel,
            target,
            seeds,
            max_instructions,
            sanitize,
            run_as,
            perturb_approx,
            slice,
        };
        return render::test(&opts, &llvm.tools());
    }
    if let Command::MarkdownHelp = &cli.command {
        print!("{}", markdown_help());
        return ExitCode::SUCCESS;
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(d) => {
            eprintln!("{}", render::name_flags(d));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), Diagnostics> {
    match cli.command {
        Command::Retarget { file, target, llvm } => {
            let opts = ops::asm::RetargetOptions {
                file,
                target: ops::parse_target(&target)?,
                tools: llvm.tools(),
            };
            print!("{}", ops::asm::retarget(&opts)?.print());
        }
        Command::Assemble {
            file,
            target,
            output,
            update_registers,
            baseline,
            llvm,
        } => {
            let a = ops::asm::assemble(&ops::asm::AssembleOptions {
                file,
                target: ops::parse_target(&target)?,
                output,
                update_registers,
                baseline,
                tools: llvm.tools(),
            })?;
            if let Some((b, true)) = &a.baseline {
                say!(
                    "gcn-patch: findings of {} (named by the file's lift header) are inherited: warnings; `--baseline` picks another original",
                    b.display()
                );
            }
            print_notes(&render::name_flags(Diagnostics(a.notes)).0);
            say!(
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
            let a = ops::apply::apply(&ops::apply::ApplyOptions {
                manifest,
                kernel,
                target: target.as_deref().map(ops::parse_target).transpose()?,
                tools: llvm.tools(),
            })?;
            print_notes(&a.notes);
            print!("{}", a.asm.print());
        }
        Command::Check {
            manifest,
            no_assemble,
            assemble: _,
            jobs,
            run,
            llvm,
        } => {
            let bar = progress::Bar::new();
            let opts = ops::check::CheckOptions {
                manifest: manifest.clone(),
                depth: if no_assemble {
                    ops::check::Depth::Checks
                } else {
                    ops::check::Depth::Build
                },
                jobs,
                tools: llvm.tools(),
            };
            let r = ops::check::check(&opts, bar.observer());
            bar.finish();
            let r = r?;
            if let Some(w) = &r.cache_warning {
                eprintln!("warning: {w}");
            }
            // Each finding once: repeats at other lines listed under the
            // first, register updates in one note (all of them with -v).
            let verbose = progress::verbosity() >= progress::Verbosity::Verbose;
            for j in &r.jobs {
                if verbose {
                    print_notes(&j.notes);
                } else {
                    print_notes(&ops::notes::collapse_repeats(
                        j.notes
                            .iter()
                            .filter(|d| !ops::notes::is_register_note(d))
                            .cloned()
                            .collect(),
                    ));
                }
                if j.passed {
                    detail!("ok: {}", ops::label(&j.kernel, &j.target));
                }
            }
            if !verbose {
                if let Some(d) = ops::notes::register_summary(
                    r.jobs
                        .iter()
                        .map(|j| (j.kernel.as_str(), &j.target, j.notes.as_slice())),
                ) {
                    say!("{d}");
                }
            }
            if !r.errors.is_empty() {
                return Err(Diagnostics(r.errors));
            }
            say!(
                "gcn-patch check: {} job(s) passed{}",
                r.jobs.len(),
                if r.depth == ops::check::Depth::Build {
                    " (assembled, linked and verified)"
                } else {
                    " (not assembled: --no-assemble)"
                }
            );
            let accepted: usize = r.jobs.iter().map(|j| j.accepted).sum();
            if accepted > 0 {
                say!(
                    "gcn-patch check: {accepted} acknowledged finding(s) not shown (the kernels' `accepted` files)"
                );
            }
            if run {
                let opts = ops::emulate::TestOptions {
                    manifest: manifest.clone(),
                    ..Default::default()
                };
                let t = ops::emulate::test(&opts, &llvm.tools())?;
                eprint!("{}", render::test_report(&t, &manifest));
                if !t.passed() {
                    return Err(gcn_patch::base::diag::Diagnostic::error(
                        gcn_patch::base::diag::Code::LaunchNotClean,
                        "gcn-patch check --run: a declared launch did not run clean",
                    )
                    .into());
                }
            }
        }
        Command::Pin { kernel, manifest } => {
            let changes = ops::pin::pin(&ops::pin::PinOptions {
                manifest,
                kernel: kernel.clone(),
            })?;
            if changes.is_empty() {
                say!("gcn-patch: kernel `{kernel}`: every pin already matches");
            }
            for c in changes {
                say!(
                    "gcn-patch: pinned {}: {} -> {}",
                    c.dump.display(),
                    c.old,
                    c.new
                );
            }
        }
        Command::Lint { .. }
        | Command::MarkdownHelp
        | Command::Run { .. }
        | Command::Profile { .. }
        | Command::Compare { .. }
        | Command::Test { .. } => {
            unreachable!("handled in main")
        }
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
            engine,
        } => build(
            manifest,
            out,
            Layout::Build(ops::expand_targets(&target)?),
            engine,
        )?,
        Command::TritonOverride {
            manifest,
            out,
            engine,
        } => build(manifest, out, Layout::TritonOverride, engine)?,
        Command::Edit {
            kernel,
            force,
            target,
            manifest,
        } => {
            let target = target.as_deref().map(ops::parse_target).transpose()?;
            let w = ops::quilt::edit(&ops::quilt::EditOptions {
                manifest,
                kernel: kernel.clone(),
                target,
                force,
            })?;
            println!("{}", w.path.display());
            say!(
                "gcn-patch: {} with its patches applied; edit it, then run `gcn-patch save {kernel} NAME`",
                w.dump.display()
            );
            if w.rules > 0 {
                say!(
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
            use ops::quilt::Saved;
            let opts = ops::quilt::SaveOptions {
                manifest: manifest.clone(),
                kernel: kernel.clone(),
                name,
                tools: llvm.tools(),
            };
            match ops::quilt::save(&opts)? {
                Saved::NoChange => say!(
                    "gcn-patch: kernel `{kernel}`: the work file has no change; nothing written"
                ),
                Saved::Patch {
                    rel,
                    added,
                    removed,
                    refreshed: false,
                } => say!(
                    "gcn-patch: wrote {} (+{added} -{removed} lines) and added it to {}",
                    rel.display(),
                    manifest.display()
                ),
                Saved::Patch {
                    rel,
                    added,
                    removed,
                    refreshed: true,
                } => say!(
                    "gcn-patch: refreshed {} (now +{added} -{removed} lines)",
                    rel.display()
                ),
            }
        }
        Command::Accept {
            kernel,
            manifest,
            llvm,
        } => {
            let a = ops::accept::accept(&ops::accept::AcceptOptions {
                manifest: manifest.clone(),
                kernel: kernel.clone(),
                tools: llvm.tools(),
            })?;
            say!(
                "gcn-patch: wrote {} ({} finding(s) of kernel `{kernel}` acknowledged){}",
                a.rel.display(),
                a.findings,
                if a.manifest_updated {
                    format!("; its `accepted` key is in {}", manifest.display())
                } else {
                    String::new()
                }
            );
        }
        Command::Patches { kernel, manifest } => {
            let listed = ops::quilt::list(&ops::quilt::ListOptions {
                manifest,
                kernel: kernel.clone(),
            })?;
            if listed.is_empty() {
                say!("gcn-patch: kernel `{kernel}` has no patches");
            }
            let mut dump = None;
            for p in &listed {
                if dump.as_ref() != Some(&p.dump) {
                    println!("{}:", p.dump.display());
                    dump = Some(p.dump.clone());
                }
                let lines = match p.lines {
                    Some((a, r)) => format!("+{a} -{r}"),
                    None => "unreadable".into(),
                };
                println!(
                    "  {:>2}  {:<24} {}  ({lines})",
                    p.index,
                    p.name,
                    p.rel.display()
                );
            }
        }
        Command::Drop {
            kernel,
            name,
            force,
            manifest,
        } => {
            let d = ops::quilt::drop(&ops::quilt::DropOptions {
                manifest: manifest.clone(),
                kernel: kernel.clone(),
                name,
                force,
            })?;
            say!(
                "gcn-patch: dropped {} from {} and deleted it",
                d.rel.display(),
                manifest.display()
            );
            if let Some(w) = d.work {
                say!(
                    "gcn-patch: removed the work file {} (it held the dropped changes); run `gcn-patch edit {kernel}` for a fresh one",
                    w.display()
                );
            }
        }
        Command::Lift {
            file,
            output,
            target,
            no_verify,
            llvm,
        } => {
            let tools = llvm.tools();
            let target = target.as_deref().map(ops::parse_target).transpose()?;
            let lifted = ops::lift::lift(&ops::lift::LiftRequest {
                file: file.clone(),
                output: output.clone(),
                target,
                verify: !no_verify,
                tools,
            })?;
            if output.is_none() {
                print!("{}", lifted.asm);
            }
            for n in &lifted.notes {
                say!("{n}");
            }
            say!(
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
            let target = ops::parse_target(&target)?;
            let d = ops::objdiff::objdiff(&ops::objdiff::ObjdiffOptions {
                manifest,
                kernel: kernel.clone(),
                target,
                tools: llvm.tools(),
            })?;
            print!("{}", d.diff);
            if d.diff.is_empty() {
                say!(
                    "gcn-patch: kernel `{kernel}` for {}: the patches change no instruction",
                    target.name()
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
        } => {
            let opts = ops::iree::IreeFlagsOptions {
                manifest,
                out,
                target: ops::parse_target(&target)?,
            };
            println!("{}", ops::iree::iree_flags(&opts)?.join(" "))
        }
        Command::Targets => targets(),
    }
    Ok(())
}
