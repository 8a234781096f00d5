//! Wait-counter hazards in `check` / gcn-build (the shared pipeline) on the
//! demo matmul: its own reordering passes, a loosened or deleted loop wait is
//! an error at the rule that made it (or a warning with `hazards = "warn"`),
//! and `--suggest` offers only loosenings that keep the kernel clean.

use crate::patch_common;

use gcn_patch::base::diag::{Diagnostics, Severity};
use gcn_patch::base::document::Document;
use gcn_patch::pipeline::{self, Prepared};
use gcn_patch::stage::check::hazard::{self, LintOptions};
use patch_common::{repo, Project};

/// The demo's `matmul` kernel entry (kernels.toml at the repository root),
/// followed by `extra` (more rules, or kernel keys placed before the source).
fn demo_manifest(kernel_keys: &str, extra_rules: &str) -> String {
    let text = std::fs::read_to_string(repo().join("kernels.toml")).unwrap();
    let start = text
        .find("[[kernel]]\nname = \"matmul\"")
        .expect("demo matmul");
    let end = text[start..].find("\n# saxpy").map(|e| start + e).unwrap();
    let entry = text[start..end].replacen(
        "iree-executable = \"matmul_dispatch_0\"\n",
        &format!("iree-executable = \"matmul_dispatch_0\"\n{kernel_keys}"),
        1,
    );
    format!("{entry}\n{extra_rules}")
}

fn project() -> Project {
    let p = Project::new();
    p.write_bytes(
        "asm/iree/gfx942/matmul.rocmasm",
        &std::fs::read(repo().join("asm/iree/gfx942/matmul.rocmasm")).unwrap(),
    );
    p.write_bytes(
        "patches/matmul-waitcnt.diff",
        &std::fs::read(repo().join("patches/matmul-waitcnt.diff")).unwrap(),
    );
    p
}

/// Prepare every job of the manifest: Ok(prepared) or the errors.
fn prepare_all(p: &Project, toml: &str) -> Vec<Result<Prepared, Diagnostics>> {
    let m = p.manifest(toml).expect("manifest");
    let plan = pipeline::plan(&m, &[]).expect("plan");
    plan.jobs
        .iter()
        .map(|j| pipeline::prepare(&m, &plan, j, 22))
        .collect()
}

#[test]
fn the_demo_reordering_has_no_hazard_on_any_target() {
    let p = project();
    let results = prepare_all(&p, &demo_manifest("", ""));
    assert_eq!(results.len(), 3);
    for r in results {
        let prepared = r.unwrap_or_else(|d| panic!("{d}"));
        assert!(
            !prepared.notes.iter().any(|n| matches!(
                n.code,
                gcn_patch::base::diag::Code::WaitHazard
                    | gcn_patch::base::diag::Code::LdsMayAlias
                    | gcn_patch::base::diag::Code::InheritedHazards
                    | gcn_patch::base::diag::Code::HazardAnalysisLimit
            )),
            "{:?}",
            prepared.notes
        );
    }
}

const LOOSEN_LAST: &str = r#"
[[kernel.source.rule]]
set-waitcnt = "s_waitcnt vmcnt(0)"
counter = "vmcnt"
value = 1
block = ".LBB0_1"
"#;

#[test]
fn loosening_the_wait_before_the_last_ds_write_is_an_error_at_the_rule() {
    let p = project();
    let results = prepare_all(&p, &demo_manifest("", LOOSEN_LAST));
    for r in &results {
        let d = r.as_ref().expect_err("hazard must fail the job");
        assert_eq!(d.0.len(), 1, "{d}");
        assert!(d.0[0].message.contains("v[100:101]"), "{d}");
        let rendered = p.norm(&d.to_string());
        assert!(
            rendered.contains("rule #4 of kernel `matmul`"),
            "{rendered}"
        );
    }
    let first = results[0].as_ref().unwrap_err();
    insta::assert_snapshot!(p.norm(&first.to_string()));
}

#[test]
fn the_issue_delete_rule_is_caught_and_hazards_warn_downgrades_it() {
    let p = project();
    // The issue's report: a `delete` rule removes the main loop's vmcnt(3).
    let rule = "\n[[kernel.source.rule]]\ndelete = \"s_waitcnt vmcnt(3)\"\nblock = \".LBB0_1\"\n";
    for r in prepare_all(&p, &demo_manifest("", rule)) {
        let d = r.expect_err("hazard");
        assert!(d.0[0].message.contains("buffer_load_dwordx4"), "{d}");
        assert!(d.0[0].message.contains("v[88:89]"), "{d}");
        assert!(
            d.0[0]
                .help
                .iter()
                .any(|h| h.contains("insert `s_waitcnt vmcnt(3)`")),
            "{d}"
        );
        // The deleted wait is named, at its dump line.
        assert!(
            d.0[0].notes.iter().any(|n| n
                .contains("the dump's `s_waitcnt vmcnt(3)` at asm/iree/gfx942/matmul.rocmasm:151")
                && n.contains("removed or changed it")),
            "{d}"
        );
    }
    // hazards = "warn": the job passes, the hazard is a warning note.
    for r in prepare_all(&p, &demo_manifest("hazards = \"warn\"\n", rule)) {
        let prepared = r.unwrap_or_else(|d| panic!("{d}"));
        let w: Vec<_> = prepared
            .notes
            .iter()
            .filter(|n| n.severity == Severity::Warning && n.message.contains("v[88:89]"))
            .collect();
        assert_eq!(w.len(), 1, "{:?}", prepared.notes);
    }
}

#[test]
fn a_bad_hazards_value_is_a_manifest_error() {
    let p = project();
    let e = p
        .manifest(&demo_manifest("hazards = \"ignore\"\n", ""))
        .expect_err("unknown variant");
    assert!(e.to_string().contains("hazards"), "{e}");
}

fn lint_text(text: &str, suggest: bool) -> Vec<gcn_patch::base::diag::Diagnostic> {
    hazard::lint(
        &Document::from_source(text, "matmul.s"),
        &gcn_embed::TargetId::parse("gfx942").unwrap(),
        LintOptions {
            suggest,
            ..LintOptions::default()
        },
    )
}

#[test]
fn suggestions_on_the_demo() {
    // The unpatched dump: LLVM's SIInsertWaitcnts already emits the loosest
    // safe value for every wait, so there is nothing to loosen.
    let dump = std::fs::read_to_string(repo().join("asm/iree/gfx942/matmul.rocmasm")).unwrap();
    let d = lint_text(&dump, true);
    assert!(d.is_empty(), "{:?}", d);
    // The demo's own patch is tight too (its one wait for the A tile is
    // exactly what the last A-tile store needs). A tuner's first, cautious
    // experiment waits for everything there instead: `--suggest` lists that
    // wait as loosenable, and applying the suggestion keeps lint clean.
    let p = project();
    let cautious = "\n[[kernel.source.rule]]\nset-waitcnt = \"s_waitcnt vmcnt(8)\"\ncounter = \"vmcnt\"\nvalue = 0\nblock = \".LBB0_1\"\n";
    let prepared = prepare_all(&p, &demo_manifest("", cautious))
        .remove(0)
        .unwrap_or_else(|d| panic!("{d}"));
    let text = prepared.asm.print();
    let notes = lint_text(&text, true);
    assert!(!notes.is_empty());
    assert!(notes.iter().all(|n| n.severity == Severity::Note));
    insta::assert_snapshot!(notes
        .iter()
        .map(|n| n.render())
        .collect::<Vec<_>>()
        .join("\n"));
    // Applying any one suggestion keeps lint clean.
    let file = gcn_patch::base::parse::parse(&text);
    for k in hazard::kernels(&file, &gcn_embed::TargetId::parse("gfx942").unwrap()) {
        for s in gcn_patch::support::hazard::suggest(&k) {
            let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
            let line = &lines[s.line];
            let max = k.model.max(s.counter);
            let value = s.loosest.min(max);
            lines[s.line] = format!("{}{}{}", &line[..s.span.0], value, &line[s.span.1..]);
            let applied = lines.join("\n");
            let after = lint_text(&applied, false);
            assert!(
                after.iter().all(|d| d.severity != Severity::Error),
                "applying {s:?} made a hazard: {:?}",
                after
            );
        }
    }
}

#[test]
fn gcn_patch_check_fails_on_a_hazard_and_passes_with_warn() {
    let p = project();
    let rule = "\n[[kernel.source.rule]]\ndelete = \"s_waitcnt vmcnt(3)\"\nblock = \".LBB0_1\"\n";
    p.manifest(&demo_manifest("", rule)).unwrap();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
            .args(["check", "--no-assemble", "--manifest"])
            .arg(p.path("kernels.toml"))
            .output()
            .unwrap()
    };
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("`v[88:89]` is read before"), "{err}");
    assert!(
        err.contains("rule #4") || err.contains("asm/iree/gfx942/matmul.rocmasm:"),
        "{err}"
    );
    p.manifest(&demo_manifest("hazards = \"warn\"\n", rule))
        .unwrap();
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning[GP0419]: kernel `matmul_dispatch_0"),
        "{err}"
    );
}
