//! Unified diffs on the real corpus dump: GNU patch equivalence, provenance,
//! and every failure report.

use crate::patch_common;

use gcn_patch::base::provenance::Origin;
use patch_common::{fixtures, gnu_patch, repo, udiff, Project};
use std::path::PathBuf;

fn toml_with(patches: &[&str]) -> String {
    let list: Vec<String> = patches.iter().map(|p| format!("\"{p}\"")).collect();
    format!(
        r#"[defaults]
targets = ["gfx942"]

[[kernel]]
name = "matmul"

[[kernel.source]]
asm = "asm/gfx942/matmul.rocmasm"
sha256 = "{{sha}}"
patches = [{}]
"#,
        list.join(", ")
    )
}

fn project_with(patches: &[(&str, PathBuf)]) -> Project {
    let p = Project::new();
    for (rel, from) in patches {
        p.write_bytes(rel, &std::fs::read(from).unwrap());
    }
    p
}

#[test]
fn demo_patch_matches_gnu_patch_and_traces_lines() {
    let demo = repo().join("patches/matmul-waitcnt.diff");
    let p = project_with(&[("patches/matmul-waitcnt.diff", demo.clone())]);
    let t = p
        .apply(&toml_with(&["patches/matmul-waitcnt.diff"]))
        .unwrap();
    let original = std::fs::read(p.path("asm/gfx942/matmul.rocmasm")).unwrap();
    assert_eq!(t.print().into_bytes(), gnu_patch(&original, &demo));
    insta::assert_snapshot!(udiff(&String::from_utf8(original).unwrap(), &t.print()));
    // Provenance around the hunk: dump lines keep their number, the + line points into the patch.
    let around: Vec<String> = (139..=146)
        .map(|l| {
            format!(
                "{l:>3} {:<45} <- {}",
                t.text(l - 1),
                t.origin(l - 1).unwrap()
            )
        })
        .collect();
    insta::assert_snapshot!(around.join("\n"));
    assert_eq!(
        t.origin(142),
        Some(&Origin::Patch {
            file: std::path::Path::new("patches/matmul-waitcnt.diff").into(),
            hunk: 1,
            line: 8
        })
    );
    assert_eq!(
        t.origin(t.len() - 1),
        Some(&Origin::Source {
            file: std::path::Path::new("asm/gfx942/matmul.rocmasm").into(),
            line: 605
        })
    );
}

#[test]
fn git_diff_with_two_hunks_and_offset_hunks_match_gnu_patch() {
    for name in ["setprio-git.diff", "offset.diff"] {
        let p = project_with(&[(name, fixtures().join(name))]);
        let t = p.apply(&toml_with(&[name])).unwrap();
        let original = std::fs::read(p.path("asm/gfx942/matmul.rocmasm")).unwrap();
        assert_eq!(
            t.print().into_bytes(),
            gnu_patch(&original, &fixtures().join(name)),
            "{name}"
        );
    }
}

#[test]
fn no_newline_at_eof_and_crlf_match_gnu_patch() {
    for (src, diff) in [
        ("noeol.s", "noeol.diff"),
        ("noeol.s", "add-eol.diff"),
        ("crlf.s", "crlf.diff"),
    ] {
        let p = Project::new();
        let original = std::fs::read(fixtures().join(src)).unwrap();
        p.write_bytes("asm/x.s", &original);
        p.write_bytes(diff, &std::fs::read(fixtures().join(diff)).unwrap());
        let toml = format!(
            "[[kernel]]\nname = \"k\"\n[[kernel.source]]\nasm = \"asm/x.s\"\nsha256 = \"{}\"\ntargets = [\"gfx942\"]\npatches = [\"{diff}\"]\n",
            p.sha("asm/x.s")
        );
        let t = p.apply(&toml).unwrap();
        assert_eq!(
            t.print().into_bytes(),
            gnu_patch(&original, &fixtures().join(diff)),
            "{diff}"
        );
    }
}

#[test]
fn multi_file_patch_is_applied_by_basename() {
    let p = project_with(&[("multi.diff", fixtures().join("multi.diff"))]);
    let t = p.apply(&toml_with(&["multi.diff"])).unwrap();
    assert_eq!(t.text(142), "\ts_waitcnt vmcnt(4)");
    // Renamed dump: no file of the patch has its base name.
    let p = project_with(&[("multi.diff", fixtures().join("multi.diff"))]);
    p.write_bytes(
        "asm/gfx942/mm.s",
        &std::fs::read(p.path("asm/gfx942/matmul.rocmasm")).unwrap(),
    );
    let err = p
        .apply(&toml_with(&["multi.diff"]).replace("matmul.rocmasm", "mm.s"))
        .unwrap_err();
    insta::assert_snapshot!(p.norm(&err.to_string()));
}

#[test]
fn failing_hunk_reports_expected_and_closest_lines() {
    let p = Project::new();
    let diff = std::fs::read_to_string(repo().join("patches/matmul-waitcnt.diff")).unwrap();
    // Made against a different compilation: one context line differs.
    p.write(
        "patches/stale.diff",
        &diff.replace(
            " \tds_write2_b64 v66, v[50:51], v[52:53] offset1:1",
            " \tds_write2_b64 v66, v[50:51], v[52:53] offset1:2",
        ),
    );
    let err = p.apply(&toml_with(&["patches/stale.diff"])).unwrap_err();
    insta::assert_snapshot!(p.norm(&err.to_string()));
}

#[test]
fn already_applied_patch_is_recognized() {
    let demo = repo().join("patches/matmul-waitcnt.diff");
    let p = project_with(&[("patches/matmul-waitcnt.diff", demo.clone())]);
    let patched = gnu_patch(
        &std::fs::read(p.path("asm/gfx942/matmul.rocmasm")).unwrap(),
        &demo,
    );
    p.write_bytes("asm/gfx942/matmul.rocmasm", &patched);
    let err = p
        .apply(&toml_with(&["patches/matmul-waitcnt.diff"]))
        .unwrap_err();
    insta::assert_snapshot!(p.norm(&err.to_string()));
}

#[test]
fn ambiguous_hunk_lists_candidates() {
    let p = Project::new();
    p.write("patches/amb.diff", "--- a/matmul.rocmasm\n+++ b/matmul.rocmasm\n@@ -112,1 +112,2 @@\n \ts_barrier\n+\ts_nop 0\n");
    let err = p.apply(&toml_with(&["patches/amb.diff"])).unwrap_err();
    insta::assert_snapshot!(p.norm(&err.to_string()));
}

#[test]
fn malformed_patch_points_at_the_bad_line() {
    let p = Project::new();
    p.write("patches/bad.diff", "--- a/matmul.rocmasm\n+++ b/matmul.rocmasm\n@@ -112,3 +112,2 @@\n \ts_barrier\n-\tbuffer_load_dwordx4 v[34:37], v50, s[12:15], 0 offen\n");
    let err = p.apply(&toml_with(&["patches/bad.diff"])).unwrap_err();
    insta::assert_snapshot!(p.norm(&err.to_string()));
    p.write("patches/empty.diff", "just text\n");
    let err = p.apply(&toml_with(&["patches/empty.diff"])).unwrap_err();
    insta::assert_snapshot!(p.norm(&err.to_string()));
}
