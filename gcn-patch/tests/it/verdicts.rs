//! One verdict per finding (issue 23): `check`, `objdiff`, `assemble` and
//! `lint` judge a finding the unpatched original has too (inherited) the same
//! way — a warning — wherever the original is known. Real aiter code objects
//! (`tests/corpus/aiter`), the real binary and the real LLVM 22.

use crate::common;

use std::path::Path;

use common::{ok, repo, run_cli as gcn_patch, stderr};

/// Copy aiter's `tests/corpus/aiter/<rel>` into `dir` as `name`.
fn aiter(dir: &Path, rel: &str, name: &str) {
    std::fs::copy(repo().join("tests/corpus/aiter").join(rel), dir.join(name))
        .unwrap_or_else(|e| panic!("tests/corpus/aiter/{rel}: {e} (run tests/corpus/aiter.sh)"));
}

/// aiter's all_reduce.co: its `.sgpr_count` (96) contradicts its descriptor
/// (numbered SGPRs 95 + 6 extra = 101), as shipped.
const ALL_REDUCE: &str = "gfx942/all_reduce.co";
/// aiter's pa_bf16_noquant_gqa16_1tg_4w.co: reads v16/v17 before the
/// `buffer_load_dword` writing them has completed (×4), as shipped.
const PA: &str = "gfx942/pa/pa_bf16_noquant_gqa16_1tg_4w.co";

#[test]
fn check_and_objdiff_give_an_inherited_register_contradiction_one_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    aiter(dir, ALL_REDUCE, "all_reduce.co");
    ok(gcn_patch(dir, &["import", "all_reduce.co"]));
    let check = ok(gcn_patch(dir, &["check"]));
    let err = stderr(&check);
    assert!(
        err.contains(
            "warning[GP0409]: kernel `all_reduce` for gfx942: metadata `.sgpr_count` 96 contradicts"
        ),
        "{err}"
    );
    // The help names the manifest's kernel, not the ELF symbol, and says
    // that following it changes the shipped object.
    assert!(
        err.contains("for kernel `all_reduce` in kernels.toml"),
        "{err}"
    );
    assert!(!err.contains("for kernel `allreduce_kernel_func`"), "{err}");
    assert!(err.contains("changes the shipped code object"), "{err}");

    // objdiff of the unpatched kernel: the same warning, not an error.
    let o = ok(gcn_patch(
        dir,
        &["objdiff", "all_reduce", "--target", "gfx942"],
    ));
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    // `registers = "update"` rewrites the count: objdiff shows it.
    let m = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    std::fs::write(
        dir.join("kernels.toml"),
        m.replacen(
            "name = \"all_reduce\"\n",
            "name = \"all_reduce\"\nregisters = \"update\"\n",
            1,
        ),
    )
    .unwrap();
    let o = ok(gcn_patch(
        dir,
        &["objdiff", "all_reduce", "--target", "gfx942"],
    ));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("changed: allreduce_kernel_func: .sgpr_count 96 -> 101"),
        "{out}"
    );
}

#[test]
fn assemble_and_lint_of_an_unmodified_lift_judge_it_against_its_origin() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    aiter(dir, PA, "pa.co");
    ok(gcn_patch(dir, &["lift", "pa.co", "-o", "pa.s"]));
    // The lift header names pa.co, which exists: its findings are inherited.
    let o = ok(gcn_patch(
        dir,
        &["assemble", "pa.s", "--target", "gfx942", "-o", "pa.hsaco"],
    ));
    let err = stderr(&o);
    assert!(err.contains("named by the file's lift header"), "{err}");
    assert!(err.contains("4 wait-counter hazard(s) inherited"), "{err}");
    // lint lists them (what the inherited-hazard note points to); with the
    // original as baseline it gives the same verdict as assemble.
    let o = gcn_patch(dir, &["lint", "pa.s", "--target", "gfx942"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o)
            .matches("is read before the `buffer_load_dword`")
            .count(),
        4
    );
    ok(gcn_patch(
        dir,
        &["lint", "pa.s", "--target", "gfx942", "--baseline", "pa.co"],
    ));

    // Elsewhere, without the code object: errors, and the help says how to
    // name the original.
    let other = dir.join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(dir.join("pa.s"), other.join("pa.s")).unwrap();
    let o = gcn_patch(
        &other,
        &["assemble", "pa.s", "--target", "gfx942", "-o", "pa.hsaco"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(
        err.matches("is read before the `buffer_load_dword`")
            .count(),
        4,
        "{err}"
    );
    assert!(
        err.contains("was lifted from `pa.co`, which is not found: give it"),
        "{err}"
    );
    assert!(
        err.contains("name the original with `--baseline ORIGINAL`"),
        "{err}"
    );
    assert!(!other.join("pa.hsaco").exists());
    let o = gcn_patch(&other, &["lint", "pa.s", "--target", "gfx942"]);
    assert_eq!(o.status.code(), Some(1));

    // --baseline names it, as the code object or as asm; an edit elsewhere
    // keeps the inherited findings inherited.
    let text = std::fs::read_to_string(other.join("pa.s")).unwrap();
    std::fs::write(
        other.join("pa.s"),
        text.replacen("\ts_endpgm", "\ts_nop 0\n\ts_endpgm", 1),
    )
    .unwrap();
    for base in ["../pa.co", "../pa.s"] {
        let o = ok(gcn_patch(
            &other,
            &[
                "assemble",
                "pa.s",
                "--target",
                "gfx942",
                "-o",
                "pa.hsaco",
                "--baseline",
                base,
            ],
        ));
        assert!(stderr(&o).contains("inherited"), "{}", stderr(&o));
        ok(gcn_patch(
            &other,
            &["lint", "pa.s", "--target", "gfx942", "--baseline", base],
        ));
    }
}

#[test]
fn assemble_with_a_baseline_still_fails_on_a_finding_the_edit_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    aiter(dir, ALL_REDUCE, "all_reduce.co");
    ok(gcn_patch(dir, &["lift", "all_reduce.co", "-o", "ar.s"]));
    ok(gcn_patch(
        dir,
        &["assemble", "ar.s", "--target", "gfx942", "-o", "ar.hsaco"],
    ));
    let text = std::fs::read_to_string(dir.join("ar.s")).unwrap();
    std::fs::write(
        dir.join("ar.s"),
        text.replacen(".sgpr_count:     96", ".sgpr_count:     97", 1),
    )
    .unwrap();
    let o = gcn_patch(
        dir,
        &["assemble", "ar.s", "--target", "gfx942", "-o", "ar.hsaco"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(
            "error[GP0409]: kernel `ar` for gfx942: metadata `.sgpr_count` 97 contradicts"
        ),
        "{err}"
    );
    // The one-off path's help: the flag, not kernels.toml.
    assert!(err.contains("pass `--update-registers`"), "{err}");
    assert!(!err.contains("kernels.toml"), "{err}");
}

#[test]
fn accepted_findings_leave_check_and_build_silent_until_a_new_one_appears() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    aiter(dir, ALL_REDUCE, "all_reduce.co");
    aiter(dir, PA, "pa.co");
    ok(gcn_patch(dir, &["import", "all_reduce.co", "pa.co"]));
    let o = ok(gcn_patch(dir, &["build", "--out", "out"]));
    assert!(
        stderr(&o).contains("warning[GP0409]: kernel `all_reduce`"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("4 wait-counter hazard(s) inherited"),
        "{}",
        stderr(&o)
    );

    for k in ["all_reduce", "pa"] {
        ok(gcn_patch(dir, &["accept", k]));
    }
    let m = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    assert!(m.contains("accepted = \"accepted/all_reduce.txt\""), "{m}");
    insta::assert_snapshot!(
        "accepted_all_reduce",
        std::fs::read_to_string(dir.join("accepted/all_reduce.txt")).unwrap()
    );
    for cmd in [&["build", "--out", "out"][..], &["check"][..]] {
        let o = ok(gcn_patch(dir, cmd));
        let err = stderr(&o);
        assert!(
            !err.contains("warning[") && !err.contains("note["),
            "{cmd:?}: {err}"
        );
        assert!(
            err.contains("2 acknowledged finding(s) not shown"),
            "{cmd:?}: {err}"
        );
    }
    // Accepting again rewrites the file; the manifest key stays one.
    ok(gcn_patch(dir, &["accept", "all_reduce"]));
    let again = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    assert_eq!(again, m);

    // A patch that adds a finding: shown, the accepted one still not.
    let work = {
        let o = ok(gcn_patch(dir, &["edit", "all_reduce"]));
        dir.join(String::from_utf8_lossy(&o.stdout).trim())
    };
    let text = std::fs::read_to_string(&work).unwrap();
    std::fs::write(
        &work,
        text.replacen(
            "\ts_endpgm",
            "\ts_waitcnt vmcnt(0)\n\ts_waitcnt vmcnt(0)\n\ts_endpgm",
            1,
        ),
    )
    .unwrap();
    ok(gcn_patch(dir, &["save", "all_reduce", "extra-wait"]));
    let o = ok(gcn_patch(dir, &["check"]));
    let err = stderr(&o);
    assert!(err.contains("waits for nothing"), "{err}");
    assert!(!err.contains(".sgpr_count` 96 contradicts"), "{err}");
}

#[test]
fn retargeting_a_lifted_kernel_to_another_processor_is_cautioned() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    aiter(dir, ALL_REDUCE, "all_reduce.co");
    ok(gcn_patch(dir, &["import", "all_reduce.co"]));
    let o = ok(gcn_patch(dir, &["build", "--out", "out"]));
    assert!(!stderr(&o).contains("retargeted from"), "{}", stderr(&o));
    let o = ok(gcn_patch(
        dir,
        &["build", "--out", "out", "--target", "gfx950"],
    ));
    let err = stderr(&o);
    assert!(
        err.contains("warning[GP0309]: kernel `all_reduce` for gfx950: retargeted from a gfx942 code object, which may be hand-written"),
        "{err}"
    );
    assert!(
        err.contains("may rely on gfx942's timing and features"),
        "{err}"
    );
    assert!(err.contains("test it on gfx950"), "{err}");
}
