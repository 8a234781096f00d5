//! How each command's report is shown: tables on standard output, notes,
//! progress and summaries on standard error, and exit codes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gcn_patch::base::diag::{Diagnostic, Diagnostics, Setting, Severity};
use gcn_patch::ops::{self, build::Layout};

use crate::args::{EngineArgs, LlvmArgs};
use crate::progress::{detail, say, Bar};

/// The library names what is wrong in its own terms and marks a diagnostic
/// about a caller-chosen input with its [`Setting`]; the command line names
/// the option that sets it. A message about the option's value starts with
/// the flag (`--target: invalid target ID …`).
pub(crate) fn name_flags(mut d: Diagnostics) -> Diagnostics {
    for d in &mut d.0 {
        let flag = match d.setting {
            Some(Setting::Target) => "--target",
            Some(Setting::Locked) => "--locked",
            Some(Setting::Output) => "-o",
            Some(Setting::Grid) => "--grid",
            Some(Setting::Block) => "--block",
            Some(Setting::Cluster) => "--cluster",
            Some(Setting::KernelArguments) => "--arg",
            Some(Setting::OutputDir) => "--out",
            Some(Setting::AsmSource) => "--asm",
            Some(Setting::RunAs) => "--as",
            Some(Setting::Device) => "--device",
            Some(Setting::Force) => {
                d.help
                    .push("discard them: run the same command again with `--force`".into());
                continue;
            }
            Some(Setting::UpdateRegisters) => {
                let how = "or pass `--update-registers` to rewrite the counts (either changes the code object)";
                match d.help.first_mut() {
                    Some(h) => {
                        h.push_str(", ");
                        h.push_str(how);
                    }
                    None => d.help.push(how.into()),
                }
                continue;
            }
            Some(Setting::Baseline) => {
                d.help
                    .push("name the original with `--baseline ORIGINAL`".into());
                continue;
            }
            Some(Setting::TritonCache) => {
                d.help
                    .push("name the cache directory with `--triton-cache DIR`".into());
                continue;
            }
            _ => continue,
        };
        d.message = format!("{flag}: {}", d.message);
    }
    d
}

/// Bad input of a command whose exit codes tell it apart (`lint`, `run`,
/// `compare`, `test`): the error, exit 2.
pub(crate) fn usage(d: Diagnostics) -> ExitCode {
    eprintln!("{}", name_flags(d));
    ExitCode::from(2)
}

/// Notes, one after the other, on standard error.
pub(crate) fn print_notes(notes: &[Diagnostic]) {
    for n in notes {
        say!("{n}");
    }
}

/// `gcn-patch lint`: exit 0 without (new) hazard, 1 with one, 2 on bad input.
pub(crate) fn lint(
    file: &Path,
    target: Option<&str>,
    suggest: bool,
    baseline: Option<&Path>,
) -> ExitCode {
    let chosen = match target {
        Some(t) => ops::parse_target(t),
        None => ops::lint::file_target(file),
    };
    let r = match chosen.and_then(|target| {
        ops::lint::lint(&ops::lint::LintOptions {
            file: file.to_path_buf(),
            target,
            suggest,
            baseline: baseline.map(Path::to_path_buf),
        })
    }) {
        Ok(r) => r,
        Err(d) => {
            eprintln!("{}", name_flags(d));
            return ExitCode::from(2);
        }
    };
    for d in &r.diagnostics {
        if d.severity == Severity::Error {
            eprintln!("{d}\n");
        } else {
            say!("{d}\n");
        }
    }
    let hazards = r.hazards();
    let inherited = r.inherited();
    let notes = r.count(Severity::Note) - inherited;
    let warnings = r.diagnostics.len() - hazards - notes - inherited;
    if let Some((b, true)) = &r.baseline {
        say!(
            "gcn-patch lint: baseline {} (named by the file's lift header); `--baseline` picks another",
            b.display()
        );
    }
    match r.baseline.as_ref().map(|(b, _)| b) {
        Some(b) => say!(
            "gcn-patch lint: {}: {hazards} hazard(s) not in {}, {warnings} warning(s), {notes} suggestion(s), {inherited} kernel(s) with inherited hazards, for {}",
            file.display(),
            b.display(),
            r.target.name()
        ),
        None => say!(
            "gcn-patch lint: {}: {hazards} hazard(s), {warnings} warning(s), {notes} suggestion(s) for {}{}",
            file.display(),
            r.target.name(),
            if target.is_none() {
                " (its .amdgcn_target)"
            } else {
                ""
            }
        ),
    }
    if hazards > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `gcn-patch import`: warnings and one summary line; with `-v`, one line
/// per file first (and the notes and skipped files).
pub(crate) fn import(
    manifest: &Path,
    paths: &[PathBuf],
    triton_caches: Vec<PathBuf>,
    jobs: Option<usize>,
    llvm: &LlvmArgs,
) -> Result<(), Diagnostics> {
    use ops::import::Outcome;
    let options = ops::import::ImportOptions::resolve(triton_caches, jobs, &llvm.tools(), paths)?;
    let bar = Bar::new();
    let report = ops::import::import(manifest, paths, &options, bar.observer());
    bar.finish();
    let report = report?;
    let (mut kernels, mut sources, mut unchanged) = (0, 0, 0);
    for o in &report.outcomes {
        match o {
            Outcome::Added { kernel, asm } => {
                kernels += 1;
                detail!(
                    "gcn-patch: imported {} as kernel `{kernel}` into {}",
                    asm.display(),
                    manifest.display()
                )
            }
            Outcome::AddedSource { kernel, asm } => {
                sources += 1;
                detail!(
                    "gcn-patch: imported {} as a new source of kernel `{kernel}` in {}",
                    asm.display(),
                    manifest.display()
                )
            }
            Outcome::Unchanged { kernel, asm } => {
                unchanged += 1;
                detail!(
                    "gcn-patch: {} is already imported (kernel `{kernel}`, same sha256): nothing to do",
                    asm.display()
                )
            }
        }
    }
    for f in &report.skipped {
        detail!("gcn-patch: skipped {}: not AMDGPU assembly", f.display());
    }
    for w in name_flags(Diagnostics(report.warnings)).0 {
        say!("{w}");
    }
    for n in &report.notes {
        detail!("{n}");
    }
    let mut parts = Vec::new();
    if kernels > 0 {
        parts.push(format!("{kernels} new kernel(s)"));
    }
    if sources > 0 {
        parts.push(format!("{sources} new source(s) of existing kernels"));
    }
    if unchanged > 0 {
        parts.push(format!("{unchanged} already imported (same sha256)"));
    }
    if !report.notes.is_empty() {
        parts.push(format!("{} note(s), shown with -v", report.notes.len()));
    }
    if !report.skipped.is_empty() {
        parts.push(format!(
            "{} other file(s) skipped: not AMDGPU assembly",
            report.skipped.len()
        ));
    }
    if parts.is_empty() {
        parts.push("nothing imported".into());
    }
    say!(
        "gcn-patch import: {} file(s) into {}: {}",
        report.outcomes.len(),
        manifest.display(),
        parts.join(", ")
    );
    Ok(())
}

/// `gcn-patch build` and `triton-override`: the build, then a summary table.
pub(crate) fn build(
    manifest: PathBuf,
    out: PathBuf,
    layout: Layout,
    engine: EngineArgs,
) -> Result<(), Diagnostics> {
    // Each command names itself in what it prints.
    let command = match layout {
        Layout::Build(_) => "build",
        Layout::TritonOverride => "triton-override",
    };
    let req = ops::build::BuildRequest {
        manifest,
        out,
        layout,
        locked: engine.locked,
        jobs: engine.jobs,
        tools: engine.llvm.tools(),
    };
    let bar = Bar::new();
    let built = ops::build::build(&req, bar.observer());
    bar.finish();
    let r = built?;
    print_notes(&r.notes);
    if let Some(w) = &r.cache_warning {
        eprintln!("warning: {w}");
    }
    print!("{}", build_table(&r.rows));
    say!(
        "gcn-patch {command}: {} code object(s) ({} assembled, {} cached) in {}; {} {}",
        r.rows.len(),
        r.assembled(),
        r.rows.len() - r.assembled(),
        req.out.display(),
        if req.locked { "reproduces" } else { "wrote" },
        r.lock.display()
    );
    if r.accepted > 0 {
        say!(
            "gcn-patch {command}: {} acknowledged finding(s) not shown (the kernels' `accepted` files)",
            r.accepted
        );
    }
    Ok(())
}

/// The build's table: kernel, target, state, the sha256's first 16 digits
/// and the files written. A column is as wide as its longest entry (at
/// least 24, 22 and 10 characters), so long names keep the columns aligned.
pub(crate) fn build_table(rows: &[ops::build::Row]) -> String {
    let width = |min: usize, cells: &mut dyn Iterator<Item = usize>| cells.fold(min, usize::max);
    let k = width(24, &mut rows.iter().map(|r| r.kernel.chars().count()));
    let t = width(
        22,
        &mut rows.iter().map(|r| r.target.name().chars().count()),
    );
    let st = width(
        10,
        &mut rows.iter().map(|r| r.state.as_str().chars().count()),
    );
    let mut s = format!(
        "{:<k$} {:<t$} {:<st$} {:<16} files\n",
        "kernel", "target", "state", "sha256"
    );
    for row in rows {
        let files: Vec<String> = row.files.iter().map(|p| p.display().to_string()).collect();
        s.push_str(&format!(
            "{:<k$} {:<t$} {:<st$} {:<16} {}\n",
            row.kernel,
            row.target.name(),
            row.state.as_str(),
            row.sha256.get(..16).unwrap_or(&row.sha256),
            files.join(" ")
        ));
    }
    s
}

/// `gcn-patch targets`: processors, then families.
pub(crate) fn targets() {
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

/// `gcn-patch run`: a summary line and the files written on stdout;
/// the error on stderr (exit 1 for a fault in the kernel or a sanitizer
/// finding, 2 for bad input).
/// `gcn-patch run OBJECT --list-unsupported`: one line per mnemonic the
/// emulator lacks (stdout), then a summary; exit 0 only when nothing is
/// missing.
pub(crate) fn unsupported(
    object: &std::path::Path,
    kernel: Option<&str>,
    tools: &ops::Tools,
) -> ExitCode {
    match ops::run::unsupported(object, kernel, tools) {
        Ok(r) => {
            for m in &r.missing {
                let kernels = match m.kernels.as_slice() {
                    [one] => format!("kernel `{one}`"),
                    more => format!("{} kernels (first `{}`)", more.len(), more[0]),
                };
                println!(
                    "unsupported: {} ×{} in {kernels}; first at {:#x} `{}`",
                    m.mnemonic, m.count, m.first.0, m.first.1
                );
            }
            let n: usize = r.missing.iter().map(|m| m.count).sum();
            if r.missing.is_empty() {
                println!(
                    "gcn-patch run: {} ({}): the emulator implements every instruction of {} kernel(s) ({} instructions); whether a launch computes the right result is what `run` and `compare` tell",
                    object.display(),
                    r.processor,
                    r.kernels,
                    r.instructions
                );
                ExitCode::SUCCESS
            } else {
                println!(
                    "gcn-patch run: {} ({}): {n} of {} instructions in {} kernel(s) use {} mnemonic(s) the emulator does not implement",
                    object.display(),
                    r.processor,
                    r.instructions,
                    r.kernels,
                    r.missing.len()
                );
                ExitCode::FAILURE
            }
        }
        Err(ops::run::RunError::Usage(d)) => usage(d),
        Err(ops::run::RunError::Failed(d)) => {
            eprintln!("{}", name_flags(d));
            ExitCode::FAILURE
        }
        Err(ops::run::RunError::Findings(_)) => ExitCode::FAILURE,
    }
}

pub(crate) fn run(opts: &ops::run::RunOptions, tools: &ops::Tools) -> ExitCode {
    let result = ops::run::run(opts, tools);
    let generic = match &result {
        Ok(r) => r.generic.as_ref().map(|g| (g, &r.processor)),
        Err(ops::run::RunError::Findings(r)) => r.generic.as_ref().map(|g| (g, &r.processor)),
        Err(_) => None,
    };
    if let Some((g, p)) = generic {
        if opts.run_as.is_none() {
            println!("gcn-patch run: running {g} object as {p}; --as to choose");
        }
    }
    match result {
        Ok(r) => {
            let processor = match &r.generic {
                Some(g) => format!("{g} as {}", r.processor),
                None => r.processor.clone(),
            };
            let checks = if opts.sanitize.is_empty() {
                String::new()
            } else {
                format!("; sanitizer checks: {}", opts.sanitize)
            };
            let counts = format!(
                "{} workgroup(s), {} wave(s), {} wave-instructions{checks}",
                r.stats.workgroups, r.stats.waves, r.stats.instructions
            );
            match lds_out_of_range(&r, false) {
                None => println!(
                    "gcn-patch run: kernel `{}` ({processor}) ran clean: {counts}",
                    r.kernel
                ),
                Some(lds) => println!(
                    "gcn-patch run: kernel `{}` ({processor}) ran to the end: {counts}; {lds}",
                    r.kernel
                ),
            }
            print!(
                "{}",
                approx_report(&r.stats.approx, opts.perturb_approx, "")
            );
            for p in &r.outputs {
                println!("wrote {}", p.display());
            }
            ExitCode::SUCCESS
        }
        Err(ops::run::RunError::Usage(d)) => usage(d),
        Err(ops::run::RunError::Failed(d)) => {
            eprintln!("{}", name_flags(d));
            ExitCode::FAILURE
        }
        Err(ops::run::RunError::Findings(r)) => {
            eprint!("{}", render_findings(&r));
            println!(
                "gcn-patch run: kernel `{}` ({}) did NOT run clean: the sanitizer ({}) found {} problem(s), reported on stderr; {} workgroup(s), {} wave(s), {} wave-instructions",
                r.kernel,
                r.processor,
                opts.sanitize,
                r.stats.findings.len(),
                r.stats.workgroups,
                r.stats.waves,
                r.stats.instructions
            );
            print!(
                "{}",
                approx_report(&r.stats.approx, opts.perturb_approx, "")
            );
            for p in &r.outputs {
                println!("wrote {}", p.display());
            }
            ExitCode::FAILURE
        }
    }
}

/// `gcn-patch compare`: one paragraph per target and launch; exit 0 when
/// every buffer agrees, 1 on a difference or a failed side, 2 on bad input.
pub(crate) fn compare(opts: &ops::emulate::CompareOptions, tools: &ops::Tools) -> ExitCode {
    match ops::emulate::compare(opts, tools) {
        Ok(r) => {
            print!("{}", compare_report(&r, &opts.manifest));
            print!("{}", compare_approx_note(&r));
            if r.equal() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(d) => usage(d),
    }
}

/// The text of a compare report.
pub(crate) fn compare_report(
    r: &ops::emulate::CompareReport,
    manifest: &std::path::Path,
) -> String {
    let mut s = String::new();
    for row in &r.rows {
        let head = format!(
            "kernel `{}`, {}, {} ({}:{})",
            r.kernel,
            row.target,
            row.launch,
            manifest.display(),
            row.line
        );
        match &row.result {
            Err(e) => s.push_str(&format!("error: {head}: {e}\n")),
            Ok(c) if c.equal() => s.push_str(&format!(
                "same: {head}: {} buffer(s) agree ({})\n",
                c.buffers.len(),
                c.tolerance
            )),
            Ok(c) => {
                let n = c.buffers.iter().filter(|b| b.differing > 0).count();
                s.push_str(&format!(
                    "DIFFERENT: {head}: {n} of {} buffer(s) differ ({}; unpatched vs patched)\n",
                    c.buffers.len(),
                    c.tolerance
                ));
                for b in c.buffers.iter().filter(|b| b.differing > 0) {
                    let name = b
                        .buffer
                        .name
                        .as_deref()
                        .map(|n| format!(" `{n}`"))
                        .unwrap_or_default();
                    s.push_str(&format!(
                        "  argument {}{name} ({}, shape {:?}): {} of {} element(s) differ",
                        b.buffer.index, b.buffer.dtype, b.buffer.shape, b.differing, b.elements
                    ));
                    if b.buffer.dtype.is_float() && b.max_abs > 0.0 {
                        s.push_str(&format!(", largest absolute difference {}", b.max_abs));
                    }
                    s.push('\n');
                    for e in &b.first {
                        s.push_str(&format!("    {e}\n"));
                    }
                    if b.differing > b.first.len() {
                        s.push_str(&format!("    … and {} more\n", b.differing - b.first.len()));
                    }
                }
            }
        }
        let (x, y) = row.lds_out_of_range;
        for (side, n) in [("unpatched", x), ("patched", y)] {
            if n > 0 {
                s.push_str(&format!(
                    "  note: on the {side} side {n} LDS access(es) (lane x instruction) fell outside the workgroup's LDS allocation ({} dynamic byte(s)): they read 0 and their writes were dropped; `gcn-patch test` names them\n",
                    row.dynamic_lds
                ));
            }
        }
        s.push_str(&compare_approx(row));
    }
    s
}

/// The approximate instructions a run executed, one line per mnemonic
/// (`approximate: v_rcp_f32 ×1 at …`), and whether their results were
/// perturbed; nothing when it executed none.
fn approx_report(
    executed: &[gcn_emu::approx::Executed],
    perturb: Option<u64>,
    indent: &str,
) -> String {
    if executed.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for l in gcn_emu::approx::summarize(executed) {
        s.push_str(&format!("{indent}approximate: {l}\n"));
    }
    s.push_str(&match perturb {
        Some(seed) => format!(
            "{indent}note: approximate results moved within the hardware's bounds (--perturb-approx {seed})\n"
        ),
        None => format!(
            "{indent}note: the emulator rounds approximate results correctly, hardware only within the bounds shown; --perturb-approx SEED moves them within those bounds\n"
        ),
    });
    s
}

/// Under a compared launch: the approximate instructions each side ran
/// (one line per side, by mnemonic) and those the patch adds.
fn compare_approx(row: &ops::emulate::Compared) -> String {
    let mut s = String::new();
    let by_mnemonic = |list: &[gcn_emu::approx::Executed]| -> String {
        let mut names: Vec<(String, usize)> = Vec::new();
        for e in list {
            match names.iter_mut().find(|(n, _)| *n == e.mnemonic) {
                Some((_, c)) => *c += 1,
                None => names.push((e.mnemonic.clone(), 1)),
            }
        }
        if names.is_empty() {
            "none".into()
        } else {
            names
                .iter()
                .map(|(n, c)| format!("{n} ×{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let [u, p] = &row.approx;
    if u.is_empty() && p.is_empty() {
        return s;
    }
    s.push_str(&format!(
        "  approximate instructions run: unpatched {}; patched {}\n",
        by_mnemonic(u),
        by_mnemonic(p)
    ));
    for l in gcn_emu::approx::summarize(&row.added) {
        s.push_str(&format!("  the patch adds approximate: {l}\n"));
    }
    s
}

/// After a compare report: how approximate results were computed, when a
/// patch adds approximate instructions.
fn compare_approx_note(r: &ops::emulate::CompareReport) -> String {
    let Some(row) = r.rows.iter().find(|row| !row.added.is_empty()) else {
        return String::new();
    };
    match row.perturb_approx {
        Some(seed) => format!(
            "note: approximate results moved within the hardware's bounds, as the same function of the input on both sides (perturbation seed {seed})\n"
        ),
        None => "note: the patch adds approximate instructions, run correctly rounded on both sides; on hardware their results are only within the bounds shown, so a result that depends on their exact values may differ: rerun with --perturb-approx SEED (any number) to move them within those bounds\n".to_string(),
    }
}

/// `gcn-patch test`: one line per kernel, target and launch, findings
/// below; exit 0 when all ran clean, 1 otherwise, 2 on bad input.
pub(crate) fn test(opts: &ops::emulate::TestOptions, tools: &ops::Tools) -> ExitCode {
    match ops::emulate::test(opts, tools) {
        Ok(r) => {
            print!("{}", test_report(&r, &opts.manifest));
            if r.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(d) => usage(d),
    }
}

/// The text of a test report.
pub(crate) fn test_report(r: &ops::emulate::TestReport, manifest: &std::path::Path) -> String {
    use ops::emulate::Outcome;
    let mut s = String::new();
    for row in &r.rows {
        let head = format!(
            "kernel `{}`, {}, {} ({}:{})",
            row.kernel,
            row.target,
            row.launch,
            manifest.display(),
            row.line
        );
        match &row.outcome {
            Outcome::Clean(n) => {
                let only = if row.checks == gcn_emu::sanitize::Checks::DEFAULT {
                    String::new()
                } else {
                    format!(" (sanitizer checks: {} only)", row.checks)
                };
                s.push_str(&format!(
                    "ok: {head}: ran clean{only}, {n} wave-instructions\n"
                ))
            }
            Outcome::Findings(f) => {
                // Every failing seed, and the seeds run when more.
                let failing = if row.seeds.len() > 1 {
                    format!(
                        " (schedule seed{} {} of {})",
                        if f.seeds.len() == 1 { "" } else { "s" },
                        list(&f.seeds),
                        list(&row.seeds)
                    )
                } else {
                    format!(" (schedule seed {})", list(&f.seeds))
                };
                s.push_str(&format!(
                    "FAILED: {head}: the sanitizer found {} problem(s){}{failing}\n",
                    f.findings.len(),
                    by_kind(f.findings.iter().map(|x| x.kind.to_string()))
                ));
                for (i, x) in f.findings.iter().enumerate() {
                    let text = if i == 0 { &x.full } else { &x.summary };
                    // Which seeds, when not all the failing ones.
                    let seeds = if x.seeds.len() < f.seeds.len() {
                        format!(
                            " (seed{} {})",
                            if x.seeds.len() == 1 { "" } else { "s" },
                            list(&x.seeds)
                        )
                    } else {
                        String::new()
                    };
                    // After the headline, before the count of waves.
                    let (first, more) = match text.split_once('\n') {
                        Some((a, b)) => (a, format!("\n{b}")),
                        None => (text.as_str(), String::new()),
                    };
                    s.push_str(&format!(
                        "  sanitizer: {first}{seeds}{}\n",
                        more.replace('\n', "\n  ")
                    ));
                }
            }
            Outcome::Failed(e) => s.push_str(&format!("FAILED: {head}: {e}\n")),
        }
        for l in gcn_emu::approx::summarize(&row.approx) {
            s.push_str(&format!("  approximate: {l}\n"));
        }
    }
    for (k, targets) in &r.not_run {
        s.push_str(&format!(
            "not run: kernel `{k}` for {}: the emulator runs {} only\n",
            targets.join(", "),
            gcn_emu::dispatch::TARGETS.join(", ")
        ));
    }
    let clean = r
        .rows
        .iter()
        .filter(|x| matches!(x.outcome, Outcome::Clean(_)))
        .count();
    s.push_str(&format!(
        "gcn-patch test: {clean} of {} launch(es) ran clean{}{}\n",
        r.rows.len(),
        if r.seeds.len() > 1 {
            format!(" under schedule seeds {}", list(&r.seeds))
        } else {
            under(&r.seeds)
        },
        if r.not_run.is_empty() {
            String::new()
        } else {
            format!(
                "; {} target(s) not run",
                r.not_run.iter().map(|(_, t)| t.len()).sum::<usize>()
            )
        }
    ));
    s
}

/// How many LDS accesses fell outside the workgroup's LDS allocation, said
/// for the run summary; `None` when none did.
fn lds_out_of_range(r: &ops::run::RunReport, sanitized: bool) -> Option<String> {
    let n = r.stats.lds_out_of_range;
    if n == 0 {
        return None;
    }
    let (fixed, dynamic) = r.lds;
    let mut s = format!(
        "{n} LDS access(es) (lane x instruction) fell outside the workgroup's LDS allocation of {} bytes ({fixed} static + {dynamic} dynamic): they read 0 and their writes were dropped",
        fixed as u64 + dynamic as u64
    );
    if dynamic == 0 {
        s.push_str("; a kernel that allocates LDS at launch needs --dynamic-lds BYTES (Triton: its `shared`)");
    }
    if !sanitized {
        s.push_str("; --sanitize names the instructions");
    }
    Some(s)
}

/// ` under schedule seed 3`: the seed of a single-seed run.
fn under(seeds: &[u64]) -> String {
    match seeds {
        [one] => format!(" under schedule seed {one}"),
        _ => format!(" under schedule seeds {}", list(seeds)),
    }
}

/// `0, 3, 5`.
fn list(seeds: &[u64]) -> String {
    seeds
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sanitizer's report: the first finding in full, each other distinct
/// finding in one line (with how many waves showed it), and a count by kind.
fn render_findings(r: &ops::run::RunReport) -> String {
    let mut s = String::new();
    let findings = &r.stats.findings;
    for (i, f) in findings.iter().enumerate() {
        match r.summaries.get(i) {
            Some(line) if i > 0 => s.push_str(&format!("sanitizer: {line}\n")),
            _ => s.push_str(&format!("sanitizer: {f}\n")),
        }
    }
    if let Some(lds) = lds_out_of_range(r, true) {
        s.push_str(&format!("gcn-patch run: {lds}\n"));
    }
    s.push_str(&format!(
        "gcn-patch run: kernel `{}` ({}): the sanitizer found {} problem(s){}{}\n",
        r.kernel,
        r.processor,
        findings.len(),
        by_kind(findings.iter().map(|f| f.kind.to_string())),
        if findings.len() > 1 {
            " (the first in full, one line for each other)"
        } else {
            ""
        }
    ));
    s
}

/// `: LDS race ×3, premature read ×1`: how many findings of each kind, in
/// order of first appearance, when there are several.
fn by_kind(kinds: impl Iterator<Item = String>) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for k in kinds {
        match counts.iter_mut().find(|(x, _)| *x == k) {
            Some((_, n)) => *n += 1,
            None => counts.push((k, 1)),
        }
    }
    if counts.iter().map(|(_, n)| n).sum::<usize>() < 2 {
        return String::new();
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    format!(": {}", parts.join(", "))
}

/// `gcn-patch profile`: the prediction, occupancy, roofline, stalls and
/// hottest lines on standard output; `--json`, `--trace` and `--html` also
/// write the report's files.
pub(crate) fn profile(
    opts: &ops::profile::ProfileOptions,
    files: &ops::profile::ReportFiles,
    top: usize,
    tools: &ops::Tools,
) -> ExitCode {
    let r = match ops::profile::profile(opts, tools) {
        Ok(r) => r,
        Err(ops::run::RunError::Usage(d)) => return usage(d),
        Err(ops::run::RunError::Failed(d)) => {
            eprintln!("{}", name_flags(d));
            return ExitCode::FAILURE;
        }
        Err(ops::run::RunError::Findings(_)) => return ExitCode::FAILURE,
    };
    print!("{}", profile_report(&r, top));
    wrote(files.write(&r))
}

/// "wrote FILE" per file written, or the error (exit 1).
fn wrote(written: Result<Vec<std::path::PathBuf>, ops::profile::ReportFileError>) -> ExitCode {
    match written {
        Ok(paths) => {
            for p in paths {
                println!("wrote {}", p.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The terminal report of `gcn-patch profile`.
pub(crate) fn profile_report(r: &ops::profile::ProfileReport, top: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "gcn-patch profile: kernel `{}` ({}) on {}: predicted {:.2} µs ({}-bound; a model, not a measurement)",
        r.kernel, r.processor, r.device, r.predicted_us, r.bound
    );
    let _ = writeln!(
        s,
        "  occupancy: {}; {} workgroup(s) resident per CU",
        r.occupancy_limited_by, r.resident_workgroups
    );
    let _ = writeln!(
        s,
        "  cycles: {} per CU round of {} workgroup(s); {} over the grid of {} workgroup(s)",
        r.cycles_per_round, r.round_workgroups, r.cycles, r.workgroups
    );
    match r.peak_tflops {
        Some(p) => {
            let _ = writeln!(
                s,
                "  compute: {:.3e} FLOP (MFMA), {:.2} TFLOP/s of {p} peak ({:.1}%)",
                r.flops,
                r.tflops,
                100.0 * r.tflops / p
            );
        }
        None => {
            let _ = writeln!(s, "  compute: no MFMA");
        }
    }
    let _ = writeln!(
        s,
        "  memory: {:.0} global bytes requested, {:.1} GB/s of {} HBM peak ({:.1}%); compulsory HBM bytes {}",
        r.global_bytes,
        r.gbps,
        r.peak_gbps,
        100.0 * r.gbps / r.peak_gbps,
        r.hbm_bytes
    );
    let t = &r.totals;
    let _ = writeln!(
        s,
        "  counts (sampled workgroups): {} wave-instructions, {} LDS bank-conflict cycles, {} global 64-byte lines, {} scalar loads, {} MFMA, {} waits, {} barriers",
        t.executed, t.lds_bank_conflicts, t.lines64, t.scalar_loads, t.mfma_ops, t.waits, t.barriers
    );
    let total: u64 = r.stalls.iter().map(|t| t.cycles).sum();
    if total > 0 {
        let list: Vec<String> = r
            .stalls
            .iter()
            .take(5)
            .map(|t| {
                format!(
                    "{} {} ({:.0}%)",
                    t.reason,
                    t.cycles,
                    100.0 * t.cycles as f64 / total as f64
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "  top stalls (one CU round, cycles summed over waves): {}",
            list.join(", ")
        );
    }
    let mut hot: Vec<&ops::profile::Line> = r.instructions.iter().collect();
    let stall = |l: &ops::profile::Line| l.stall_cycles.values().sum::<u64>();
    hot.sort_by(|a, b| {
        stall(b)
            .cmp(&stall(a))
            .then(b.executed.cmp(&a.executed))
            .then(a.address.cmp(&b.address))
    });
    let _ = writeln!(s, "  hottest lines:");
    let _ = writeln!(
        s,
        "    {:>8} {:>9} {:>9}  {:<24} {:>9} {:>11}  text",
        "address", "executed", "stall", "mostly", "conflicts", "lines/acc"
    );
    for l in hot.iter().take(top) {
        let mostly = l
            .stall_cycles
            .iter()
            .max_by_key(|(n, v)| (**v, std::cmp::Reverse(**n)))
            .map(|(n, _)| n.to_string())
            .unwrap_or_default();
        let text = match &l.source {
            Some(src) => src.clone(),
            None => l.text.clone(),
        };
        let _ = writeln!(
            s,
            "    {:>8x} {:>9} {:>9}  {:<24} {:>9} {:>11}  {}",
            l.address,
            l.executed,
            stall(l),
            mostly,
            l.lds_bank_conflicts,
            if l.cache_lines.lines64 > 0 {
                format!("{:.2}", l.cache_lines.per_access)
            } else {
                "-".into()
            },
            text
        );
    }
    let _ = writeln!(s, "notes:");
    for n in &r.notes {
        let _ = writeln!(s, "  - {n}");
    }
    s
}

/// `gcn-patch profile KERNEL`: per target and declared launch, the
/// unpatched and patched predictions, the delta, the stall reasons that
/// moved, and each side's hottest lines; `--json FILE` writes both reports.
pub(crate) fn profile_declared(
    opts: &ops::emulate::CompareOptions,
    device: &str,
    files: &ops::profile::ReportFiles,
    top: usize,
    tools: &ops::Tools,
) -> ExitCode {
    let rows = match ops::emulate::profile(opts, device, files.timeline(), tools) {
        Ok(r) => r,
        // The emulated kernel failed: exit 1, as `run`.
        Err(d)
            if d.codes()
                .contains(&gcn_patch::base::diag::Code::EmulatorFailed) =>
        {
            eprintln!("{}", name_flags(d));
            return ExitCode::FAILURE;
        }
        Err(d) => return usage(d),
    };
    for r in &rows {
        let (a, b) = (&r.unpatched, &r.patched);
        println!(
            "gcn-patch profile: kernel `{}` {} {} on {}: unpatched {:.2} µs, patched {:.2} µs ({:+.1}%; a model, not a measurement)",
            opts.kernel,
            r.target,
            r.launch,
            a.device,
            a.predicted_us,
            b.predicted_us,
            100.0 * (b.predicted_us / a.predicted_us - 1.0)
        );
        println!(
            "  cycles per CU round: {} unpatched, {} patched",
            a.cycles_per_round, b.cycles_per_round
        );
        let mut reasons: Vec<&str> = a
            .stalls
            .iter()
            .chain(&b.stalls)
            .map(|t| t.reason.as_str())
            .collect();
        reasons.sort();
        reasons.dedup();
        let of = |r: &ops::profile::ProfileReport, n: &str| {
            r.stalls
                .iter()
                .find(|t| t.reason == n)
                .map_or(0, |t| t.cycles)
        };
        let moved: Vec<String> = reasons
            .iter()
            .map(|n| (n, of(a, n), of(b, n)))
            .filter(|(_, x, y)| x != y)
            .map(|(n, x, y)| format!("{n} {x} → {y}"))
            .collect();
        println!("  stall cycles that moved: {}", moved.join(", "));
        let lines = ops::profile::line_deltas(a, b);
        if !lines.is_empty() {
            println!(
                "  lines that account for the difference (stall cycles, unpatched → patched):"
            );
            for d in lines.iter().take(top) {
                let side = match (&d.unpatched, &d.patched) {
                    // `file:line` of the unpatched side, then the patched line.
                    (Some(x), Some(y)) => match x.split_once(": ") {
                        Some((at, _)) if x != y => format!("{at} / {y}"),
                        _ => y.clone(),
                    },
                    (Some(x), None) => format!("{x} (removed)"),
                    (None, Some(y)) => format!("{y} (added)"),
                    (None, None) => String::new(),
                };
                println!(
                    "    {:>+8}  {:>7} → {:<7}  {side}",
                    d.delta, d.unpatched_stall, d.patched_stall
                );
            }
        }
        for (side, rep) in [("unpatched", a), ("patched", b)] {
            println!("  {side}:");
            let text = profile_report(rep, top);
            for l in text
                .lines()
                .skip_while(|l| !l.starts_with("  hottest lines"))
                .skip(1)
                .take_while(|l| !l.starts_with("notes"))
            {
                println!("  {l}");
            }
        }
    }
    if let Some(n) = rows.first() {
        println!("notes:");
        for n in &n.patched.notes {
            println!("  - {n}");
        }
    }
    wrote(files.write_declared(&opts.kernel, &rows, top))
}
