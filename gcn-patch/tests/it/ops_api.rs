//! The commands as a library (`gcn_patch::ops`): options in, typed reports
//! and typed diagnostics out. A diagnostic about an option names it with a
//! `Setting`, never with the command line's flag (the binary adds that);
//! findings and accepted findings are matched by their codes, not by text.

use crate::common;

use std::path::PathBuf;

use gcn_patch::base::diag::{Code, Diagnostic, Diagnostics, Setting, Severity};
use gcn_patch::config::accept::{accepts, Finding};
use gcn_patch::ops;

/// The one diagnostic of `d`.
fn one(d: Diagnostics) -> Diagnostic {
    assert_eq!(d.0.len(), 1, "{d}");
    d.0.into_iter().next().unwrap()
}

#[test]
fn option_errors_carry_their_setting_and_name_no_flag() {
    let cases: Vec<(Diagnostics, Setting)> = vec![
        (ops::parse_target("gfx9999").unwrap_err(), Setting::Target),
        (
            ops::expand_targets(&["gfx942", "gfx9-4-genric"]).unwrap_err(),
            Setting::Target,
        ),
        (
            ops::run::parse_dims(Setting::Grid, "4,0").unwrap_err(),
            Setting::Grid,
        ),
        (
            ops::run::parse_dims(Setting::Block, "1,2,3,4").unwrap_err(),
            Setting::Block,
        ),
        (
            ops::run::parse_spec("f33:1").unwrap_err(),
            Setting::KernelArguments,
        ),
        (
            ops::run::parse_spec("out:f32").unwrap_err(),
            Setting::KernelArguments,
        ),
    ];
    for (d, setting) in cases {
        let d = one(d);
        assert_eq!(d.setting, Some(setting), "{d}");
        assert!(!d.message.contains("--"), "a flag in `{}`", d.message);
    }
    // An output directory that is a file: refused before the object is read.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("out");
    std::fs::write(&file, "").unwrap();
    let opts = ops::run::RunOptions {
        object: tmp.path().join("missing.co"),
        kernel: "k".into(),
        grid: [1, 1, 1],
        block: [64, 1, 1],
        out: Some(file),
        ..Default::default()
    };
    match ops::run::run(&opts, &ops::Tools::default()) {
        Err(ops::run::RunError::Usage(d)) => {
            let d = one(d);
            assert_eq!(d.setting, Some(Setting::OutputDir), "{d}");
            assert!(!d.message.contains("--out"), "{d}");
        }
        other => panic!("expected a usage error, got {other:?}"),
    }
}

#[test]
fn arg_specs_print_as_written() {
    for spec in ["x.npy", "out:f32:16", "u32:4", "f32:1.5", "u64:0"] {
        assert_eq!(
            ops::run::parse_spec(spec).unwrap().to_string(),
            spec,
            "{spec}"
        );
    }
    assert_eq!(
        ops::expand_targets(&["gfx942", "gfx94X-dcgpu", "gfx942"])
            .unwrap()
            .iter()
            .filter(|t| t.name() == "gfx942")
            .count(),
        1,
        "each target once"
    );
}

/// A register the kernel does not declare, used in the HIP saxpy dump.
fn overusing_saxpy(dir: &std::path::Path) -> PathBuf {
    let text = std::fs::read_to_string(common::corpus().join("hip/gfx942/saxpy.s")).unwrap();
    let at = text.find("\ts_endpgm").expect("saxpy ends with s_endpgm");
    let path = dir.join("saxpy.s");
    std::fs::write(
        &path,
        format!("{}\tv_mov_b32 v120, 0\n{}", &text[..at], &text[at..]),
    )
    .unwrap();
    path
}

#[test]
fn assemble_leaves_the_register_update_to_the_caller() {
    common::toolchain();
    let tmp = tempfile::tempdir().unwrap();
    let file = overusing_saxpy(tmp.path());
    let err = ops::asm::assemble(&ops::asm::AssembleOptions {
        file,
        target: ops::parse_target("gfx942").unwrap(),
        output: tmp.path().join("saxpy.hsaco"),
        update_registers: false,
        baseline: None,
        tools: ops::Tools::default(),
    })
    .unwrap_err();
    let budget: Vec<&Diagnostic> = err
        .0
        .iter()
        .filter(|d| d.code == Code::RegisterBudgetExceeded)
        .collect();
    assert_eq!(budget.len(), 1, "{err}");
    let d = budget[0];
    // No manifest: the help says how to fix it by hand, and the setting
    // tells the caller to add its own way of asking for an update.
    assert_eq!(d.setting, Some(Setting::UpdateRegisters), "{d}");
    assert!(d.help[0].starts_with("raise "), "{d}");
    assert!(!d.to_string().contains("kernels.toml"), "{d}");
    assert!(!d.to_string().contains("--update-registers"), "{d}");
    assert!(!tmp.path().join("saxpy.hsaco").exists());
}

#[test]
fn a_manifest_kernel_names_its_registers_key() {
    // The patch uses the register (the dump does not: not inherited).
    let tmp = tempfile::tempdir().unwrap();
    let dump = std::fs::read_to_string(common::corpus().join("hip/gfx942/saxpy.s")).unwrap();
    let at = dump
        .lines()
        .position(|l| l == "\ts_endpgm")
        .expect("saxpy ends with s_endpgm")
        + 1;
    std::fs::write(tmp.path().join("saxpy.s"), &dump).unwrap();
    std::fs::write(
        tmp.path().join("p.diff"),
        format!(
            "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -{at},1 +{at},2 @@\n+\tv_mov_b32 v120, 0\n \ts_endpgm\n"
        ),
    )
    .unwrap();
    let sha = gcn_patch::base::hash::sha256_hex(dump.as_bytes());
    std::fs::write(
        tmp.path().join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"saxpy\"\n[[kernel.source]]\nasm = \"saxpy.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\"]\npatches = [\"p.diff\"]\n"
        ),
    )
    .unwrap();
    let report = ops::check::check(
        &ops::check::CheckOptions {
            manifest: tmp.path().join("kernels.toml"),
            depth: ops::check::Depth::Checks,
            ..Default::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(report.depth, ops::check::Depth::Checks);
    assert_eq!(report.jobs.len(), 1);
    assert!(!report.jobs[0].passed);
    let d = report
        .errors
        .iter()
        .find(|d| d.code == Code::RegisterBudgetExceeded)
        .expect("the budget error");
    assert_eq!(d.setting, None, "the manifest's key is named: {d}");
    assert!(
        d.help[0].contains(
            "or set `registers = \"update\"` for kernel `saxpy` in kernels.toml to rewrite the counts"
        ),
        "{d}"
    );
}

#[test]
fn accepted_findings_are_matched_by_code_as_well_as_text() {
    let target = ops::parse_target("gfx942").unwrap();
    let warning = Diagnostic::warning(Code::RegisterCountContradiction, "kernel `k`: counts");
    let f = Finding::of(&target, &warning);
    let line = f.to_line();
    assert_eq!(line, "gfx942\t-\twarning[GP0409]: kernel `k`: counts");
    assert_eq!(Finding::parse(&line), Some(f.clone()));
    // The same words under another code are another finding.
    let other = Diagnostic::warning(Code::RegisterCountUnknown, "kernel `k`: counts");
    assert_ne!(Finding::of(&target, &other), f);
    assert_eq!(f.severity, Severity::Warning);
    // A line written before findings had codes still acknowledges the
    // same words, under any code.
    let old = Finding::parse("gfx942\t-\twarning: kernel `k`: counts").unwrap();
    assert_eq!(old.code, None);
    let keys = [old].into_iter().collect();
    assert!(accepts(&keys, &f));
    assert!(accepts(&keys, &Finding::of(&target, &other)));
    assert!(!accepts(
        &keys,
        &Finding::of(
            &target,
            &Diagnostic::warning(Code::RegisterCountUnknown, "other words")
        )
    ));
    // A line that is not a finding acknowledges nothing.
    assert_eq!(Finding::parse("gfx942\t-\tnot a finding"), None);
}

/// `check --no-assemble` runs its jobs in parallel; its report (every job,
/// its notes, every error) is the one-job-at-a-time report, in plan order.
/// The demo manifest (rules, a patch, three kernels, several targets) plus
/// a kernel whose patch breaks the register budget, so that a failing job
/// sits between passing ones.
#[test]
fn a_parallel_no_assemble_check_reports_as_a_serial_one() {
    let tmp = tempfile::tempdir().unwrap();
    let root = common::repo();
    for dir in ["asm", "patches"] {
        common::copy_tree(&root.join(dir), &tmp.path().join(dir));
    }
    let demo = std::fs::read_to_string(root.join("kernels.toml")).unwrap();
    let saxpy = std::fs::read(root.join("tests/corpus/hip/gfx942/saxpy.s")).unwrap();
    std::fs::write(tmp.path().join("saxpy.s"), &saxpy).unwrap();
    let sha = gcn_patch::base::hash::sha256_hex(&saxpy);
    let budget = format!("[[kernel]]\nname = \"over\"\n[[kernel.source]]\nasm = \"saxpy.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\", \"gfx950\"]\n\n[[kernel.source.rule]]\ninsert = \"v_mov_b32 v200, 0\"\nbefore = \"s_endpgm\"\n");
    // The failing kernel first, then the demo's.
    let (head, rest) = demo.split_at(demo.find("[[kernel]]").unwrap());
    std::fs::write(
        tmp.path().join("kernels.toml"),
        format!("{head}{budget}\n{rest}"),
    )
    .unwrap();
    let check = |jobs| {
        let r = ops::check::check(
            &ops::check::CheckOptions {
                manifest: tmp.path().join("kernels.toml"),
                depth: ops::check::Depth::Checks,
                jobs: Some(jobs),
                ..Default::default()
            },
            None,
        )
        .unwrap();
        format!("{:#?}\n{:#?}", r.jobs, r.errors)
    };
    let serial = check(1);
    assert!(serial.contains("passed: false"), "{serial}");
    assert!(serial.contains("passed: true"), "{serial}");
    assert_eq!(check(4), serial);
}
