//! kernels.toml: schema, path checks, targets, and every diagnostic.

use crate::patch_common;

use gcn_patch::config::policy::RegisterPolicy;
use patch_common::Project;

fn err(p: &Project, toml: &str) -> String {
    p.norm(&p.manifest(toml).unwrap_err().to_string())
}

const FULL: &str = r#"# demo manifest
[defaults]
targets = ["gfx942"]
code-object-version = 5
llvm = "llvm/bin"
registers = "error"

[[kernel]]
name = "matmul"
iree-executable = "matmul_dispatch_0"
registers = "update"

[[kernel.source]]
asm = "asm/gfx942/matmul.rocmasm"
sha256 = "{sha}"
targets = ["gfx942", "gfx94X-all", "gfx9-4-generic"]
patches = ["patches/a.diff", "./patches/b.diff"]

[[kernel.source.rule]]
delete = "s_barrier"
occurrence = 1
expect = 3

[[kernel]]
name = "plain"

[[kernel.source]]
asm = "asm/gfx942/matmul.rocmasm"
"#;

fn full_project() -> Project {
    let p = Project::new();
    p.write("patches/a.diff", "");
    p.write("patches/b.diff", "");
    p
}

#[test]
fn full_example_loads() {
    let p = full_project();
    let m = p.manifest(FULL).unwrap();
    assert_eq!(m.defaults.code_object_version, Some(5));
    assert_eq!(
        m.defaults.llvm.as_deref(),
        Some(p.path("llvm/bin").as_path())
    );
    assert_eq!(m.defaults.registers, RegisterPolicy::Error);
    let k = m.kernel("matmul").unwrap();
    assert_eq!(k.iree_executable.as_deref(), Some("matmul_dispatch_0"));
    assert_eq!(k.registers, RegisterPolicy::Update);
    let s = &k.sources[0];
    assert_eq!(s.asm, p.path("asm/gfx942/matmul.rocmasm"));
    assert_eq!(s.rel, std::path::Path::new("asm/gfx942/matmul.rocmasm"));
    assert_eq!(
        s.sha256.as_deref(),
        Some(p.sha("asm/gfx942/matmul.rocmasm").as_str())
    );
    // The family expands; duplicates (gfx942 twice) are dropped.
    let targets: Vec<String> = s.targets.iter().map(|t| t.to_string()).collect();
    insta::assert_snapshot!(targets.join(" "));
    assert_eq!(s.patches.len(), 2);
    assert_eq!(s.rules.len(), 1);
    // Defaults fill in.
    let plain = m.kernel("plain").unwrap();
    assert_eq!(plain.registers, RegisterPolicy::Error);
    assert_eq!(
        plain.sources[0]
            .targets
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>(),
        ["gfx942"]
    );
    assert!(plain.sources[0].sha256.is_none());
    let files: Vec<String> = m
        .input_files()
        .iter()
        .map(|f| p.norm(&f.display().to_string()))
        .collect();
    insta::assert_snapshot!(files.join("\n"));
    // The one unknown-kernel error: the kernels, and the nearest name.
    let err = m.kernel("plian").unwrap_err().render();
    assert!(err.contains("no kernel `plian` in kernels.toml"), "{err}");
    assert!(err.contains("did you mean `plain`?"), "{err}");
    let err = m.kernel("nope").unwrap_err().render();
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn unknown_key_points_at_line_and_column() {
    let p = full_project();
    insta::assert_snapshot!(err(&p, &FULL.replace("iree-executable", "iree_executable")));
    insta::assert_snapshot!(err(&p, &FULL.replace("occurrence = 1", "occurence = 1")));
}

#[test]
fn bad_target_lists_nearest_names() {
    let p = full_project();
    insta::assert_snapshot!(err(&p, &FULL.replace("\"gfx9-4-generic\"", "\"gfx924\"")));
    insta::assert_snapshot!(err(&p, &FULL.replace("gfx94X-all", "gfx94x-al")));
}

#[test]
fn paths_must_stay_inside_the_manifest_directory() {
    let p = full_project();
    insta::assert_snapshot!(err(&p, &FULL.replace("patches/a.diff", "../a.diff")));
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace(
            "asm = \"asm/gfx942/matmul.rocmasm\"\nsha256",
            "asm = \"/etc/hostname\"\nsha256"
        )
    ));
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.diff"), "").unwrap();
    std::os::unix::fs::symlink(outside.path().join("x.diff"), p.path("patches/link.diff")).unwrap();
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace("patches/a.diff", "patches/link.diff")
    ));
    // `..` that stays inside is fine.
    assert!(p
        .manifest(&FULL.replace("patches/a.diff", "asm/../patches/a.diff"))
        .is_ok());
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace("patches/a.diff", "patches/missing.diff")
    ));
}

#[test]
fn kernel_names_are_unique_rust_identifiers() {
    let p = full_project();
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace("name = \"plain\"", "name = \"matmul\"")
    ));
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace("name = \"plain\"", "name = \"mat-mul\"")
    ));
}

/// `mm` and `MM` would both generate `pub static MM`.
#[test]
fn kernel_names_differing_only_in_case_are_an_error() {
    let p = full_project();
    let e = err(&p, &FULL.replace("name = \"plain\"", "name = \"MATMUL\""));
    assert!(
        e.contains("`matmul` and `MATMUL` differ only in case"),
        "{e}"
    );
    insta::assert_snapshot!(e);
}

#[test]
fn patched_source_needs_a_pin() {
    let p = full_project();
    let e = err(&p, &FULL.replace("sha256 = \"{sha}\"\n", ""));
    insta::assert_snapshot!(e);
    assert!(e.contains(&p.sha("asm/gfx942/matmul.rocmasm")));
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace("sha256 = \"{sha}\"", "sha256 = \"abc\"")
    ));
}

#[test]
fn bad_rules_are_reported_at_the_rule() {
    let p = full_project();
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace(
            "delete = \"s_barrier\"",
            "delete = \"s_barrier\"\nmove = \"s_nop 0\""
        )
    ));
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace("delete = \"s_barrier\"", "move = \"s_nop 0\"")
    ));
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace(
            "delete = \"s_barrier\"",
            "delete = \"s_waitcnt vmcnt(\"\nregex = true"
        )
    ));
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace(
            "delete = \"s_barrier\"",
            "set-waitcnt = \"s_waitcnt vmcnt(0)\"\ncounter = \"vmcount\"\nvalue = 1"
        )
    ));
}

#[test]
fn targets_are_required_and_toml_syntax_errors_have_a_location() {
    let p = full_project();
    insta::assert_snapshot!(err(&p, &FULL.replace("targets = [\"gfx942\"]\n", "")));
    insta::assert_snapshot!(err(&p, &FULL.replace("[defaults]", "[defaults")));
    insta::assert_snapshot!(err(
        &p,
        &FULL.replace("code-object-version = 5", "code-object-version = 3")
    ));
}
