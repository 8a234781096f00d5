//! Inherited hazards: a hazard the unpatched dump has too (same producer and
//! reader dump lines, same register, no looser wait) is not an error in
//! `check` / `build` (the engine gcn-build runs) but one note per kernel; a
//! new hazard, or the same one with a looser wait, is an error; `hazards =
//! "strict"` makes inherited ones errors. `gcn-patch lint --baseline` does
//! the same for two arbitrary files, matched by a diff alignment.

use crate::common;

use gcn_patch::base::diag::{Diagnostics, Severity};
use gcn_patch::base::hash::sha256_hex;
use gcn_patch::config::manifest::Manifest;
use gcn_patch::pipeline::{self, Prepared};

/// The IREE gfx942 matmul with its `s_waitcnt vmcnt(4)` before the
/// `ds_write2_b64 … v[84:85]` loosened to `vmcnt(5)`: a dump that has a
/// hazard of its own (as expert code does).
fn dump() -> String {
    let text =
        std::fs::read_to_string(common::corpus().join("iree/gfx942/matmul.rocmasm")).unwrap();
    let mut lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines[148].trim(), "s_waitcnt vmcnt(4)");
    lines[148] = "\ts_waitcnt vmcnt(5)";
    lines.join("\n")
}

struct P {
    dir: tempfile::TempDir,
    text: String,
}

impl P {
    fn new() -> P {
        P::with(dump())
    }

    fn with(text: String) -> P {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("asm")).unwrap();
        std::fs::write(dir.path().join("asm/mm.rocmasm"), &text).unwrap();
        P { dir, text }
    }

    /// kernels.toml for kernel `mm` with `keys` and `rules`.
    fn manifest(&self, keys: &str, rules: &str) -> Manifest {
        let sha = sha256_hex(self.text.as_bytes());
        let toml = format!(
            "[[kernel]]\nname = \"mm\"\n{keys}\n[[kernel.source]]\nasm = \"asm/mm.rocmasm\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\"]\n{rules}"
        );
        std::fs::write(self.dir.path().join("kernels.toml"), toml).unwrap();
        Manifest::load(&self.dir.path().join("kernels.toml")).expect("manifest")
    }

    fn prepare(&self, keys: &str, rules: &str) -> Result<Prepared, Diagnostics> {
        let m = self.manifest(keys, rules);
        let plan = pipeline::plan(&m, &[]).expect("plan");
        assert_eq!(plan.jobs.len(), 1);
        pipeline::prepare(&m, &plan, &plan.jobs[0], 22)
    }

    fn norm(&self, s: &str) -> String {
        let d = self.dir.path().canonicalize().unwrap();
        s.replace(&d.display().to_string(), "<project>")
            .replace(&self.dir.path().display().to_string(), "<project>")
    }
}

const DELETE_VMCNT3: &str =
    "\n[[kernel.source.rule]]\ndelete = \"s_waitcnt vmcnt(3)\"\nblock = \".LBB0_1\"\n";
const LOOSEN_VMCNT5: &str = "\n[[kernel.source.rule]]\nset-waitcnt = \"s_waitcnt vmcnt(5)\"\ncounter = \"vmcnt\"\nvalue = 6\nexpect = 2\nblock = \".LBB0_1\"\n";

#[test]
fn the_dumps_own_hazard_is_inherited_a_note_not_an_error() {
    let p = P::new();
    let prepared = p.prepare("", "").unwrap_or_else(|d| panic!("{d}"));
    let inherited: Vec<_> = prepared
        .notes
        .iter()
        .filter(|n| n.code == gcn_patch::base::diag::Code::InheritedHazards)
        .collect();
    assert_eq!(inherited.len(), 1, "{:?}", prepared.notes);
    assert_eq!(inherited[0].severity, Severity::Note);
    insta::assert_snapshot!(p.norm(&inherited[0].render()));
    // Also with a patch that leaves the hazard as it is (a rule elsewhere).
    let rule = "\n[[kernel.source.rule]]\nset-waitcnt = \"s_waitcnt vmcnt(0)\"\ncounter = \"vmcnt\"\nvalue = 0\nblock = \".LBB0_1\"\n";
    let prepared = p.prepare("", rule).unwrap_or_else(|d| panic!("{d}"));
    assert!(prepared
        .notes
        .iter()
        .any(|n| n.code == gcn_patch::base::diag::Code::InheritedHazards
            && n.message.contains("1 wait-counter hazard(s) inherited")));
}

#[test]
fn strict_makes_inherited_hazards_errors() {
    let p = P::new();
    let d = p
        .prepare("hazards = \"strict\"\n", "")
        .expect_err("strict: the inherited hazard is an error");
    assert_eq!(d.0.len(), 1, "{d}");
    assert!(d.0[0].message.contains("v[84:85]"), "{d}");
    insta::assert_snapshot!(p.norm(&d.to_string()));
}

#[test]
fn a_new_hazard_is_an_error_next_to_the_inherited_note() {
    let p = P::new();
    let d = p.prepare("", DELETE_VMCNT3).expect_err("new hazard");
    assert_eq!(d.0.len(), 1, "{d}");
    assert!(d.0[0].message.contains("v[88:89]"), "{d}");
    insta::assert_snapshot!(p.norm(&d.to_string()));
    // `hazards = "warn"`: the new one is a warning, the inherited one a note.
    let prepared = p
        .prepare("hazards = \"warn\"\n", DELETE_VMCNT3)
        .unwrap_or_else(|d| panic!("{d}"));
    assert!(prepared
        .notes
        .iter()
        .any(|n| n.severity == Severity::Warning && n.message.contains("v[88:89]")));
    assert!(prepared
        .notes
        .iter()
        .any(|n| n.code == gcn_patch::base::diag::Code::InheritedHazards
            && n.message.contains("1 wait-counter hazard(s) inherited")));
}

#[test]
fn a_looser_wait_before_an_inherited_hazard_makes_it_worse_an_error() {
    let p = P::new();
    // Both vmcnt(5) → vmcnt(6): the read after the first is a new hazard,
    // the inherited one after the second now has 6 loads outstanding, not 5.
    let d = p.prepare("", LOOSEN_VMCNT5).expect_err("worse hazard");
    assert_eq!(d.0.len(), 2, "{d}");
    let worse: Vec<_> =
        d.0.iter()
            .filter(|e| {
                e.notes
                    .iter()
                    .any(|n| n.contains("waits less (made worse)"))
            })
            .collect();
    assert_eq!(worse.len(), 1, "{d}");
    assert!(worse[0].message.contains("v[84:85]"), "{d}");
    insta::assert_snapshot!(p.norm(&d.to_string()));
}

#[test]
fn check_and_build_cli_pass_inherited_and_fail_new() {
    let p = P::new();
    p.manifest("", "");
    let o = common::run_cli(p.dir.path(), &["check"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let out = common::ok(common::run_cli(p.dir.path(), &["build", "--out", "out"]));
    assert!(
        common::stderr(&out).contains("inherited") || p.dir.path().join("out/gfx942").exists(),
        "{}",
        common::stderr(&out)
    );
    assert!(p.dir.path().join("out/gfx942/mm.hsaco").exists());
    p.manifest("", DELETE_VMCNT3);
    let o = common::run_cli(p.dir.path(), &["check"]);
    assert!(!o.status.success());
    assert!(
        common::stderr(&o).contains("v[88:89]"),
        "{}",
        common::stderr(&o)
    );
    let o = common::run_cli(p.dir.path(), &["build", "--out", "out2"]);
    assert!(!o.status.success());
    assert!(!p.dir.path().join("out2/gfx942/mm.hsaco").exists());
    p.manifest("hazards = \"strict\"\n", "");
    let o = common::run_cli(p.dir.path(), &["check"]);
    assert!(!o.status.success());
    insta::assert_snapshot!(p.norm(&common::stderr(&o)));
}

#[test]
fn lint_baseline_reports_only_what_the_file_adds() {
    let dir = tempfile::tempdir().unwrap();
    let base = dump();
    std::fs::write(dir.path().join("base.s"), &base).unwrap();
    // The same code with a comment line inserted near the top (so the
    // lines shift) and the main loop's vmcnt(3) deleted.
    let mut lines: Vec<&str> = base.split('\n').collect();
    assert_eq!(lines[150].trim(), "s_waitcnt vmcnt(3)");
    lines.remove(150);
    lines.insert(20, "; a tuner's note");
    std::fs::write(dir.path().join("new.s"), lines.join("\n")).unwrap();
    let run = |args: &[&str]| common::run_cli(dir.path(), args);
    // Without a baseline: both hazards.
    let o = run(&["lint", "new.s", "--target", "gfx942"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o).contains("2 hazard(s)"),
        "{}",
        common::stderr(&o)
    );
    // With it: only the new one, exit 1.
    let o = run(&[
        "lint",
        "new.s",
        "--target",
        "gfx942",
        "--baseline",
        "base.s",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    insta::assert_snapshot!(common::stderr(&o));
    // The base against itself, and the file against itself: nothing new.
    let o = run(&[
        "lint",
        "base.s",
        "--target",
        "gfx942",
        "--baseline",
        "base.s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let o = run(&["lint", "new.s", "--target", "gfx942", "--baseline", "new.s"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    // A missing baseline is an input error.
    let o = run(&[
        "lint",
        "new.s",
        "--target",
        "gfx942",
        "--baseline",
        "nope.s",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// Register findings of the dump itself (here a metadata `.sgpr_count` too
/// small, as hand-written kernels declare their own) are inherited too:
/// warnings; a register use a patch adds beyond the budget is an error.
#[test]
fn the_dumps_own_register_findings_are_inherited_new_ones_are_errors() {
    let p = P::with(dump().replace(".sgpr_count:     22", ".sgpr_count:     12"));
    let prepared = p.prepare("", "").unwrap_or_else(|d| panic!("{d}"));
    let w: Vec<_> = prepared
        .notes
        .iter()
        .filter(|n| n.code == gcn_patch::base::diag::Code::RegisterCountContradiction)
        .collect();
    assert_eq!(w.len(), 1, "{:?}", prepared.notes);
    assert_eq!(w[0].severity, Severity::Warning);
    assert!(
        w[0].notes.iter().any(|n| n.contains("(inherited)")),
        "{}",
        w[0].render()
    );
    // A rule elsewhere keeps it inherited.
    let rule = "\n[[kernel.source.rule]]\ninsert = [\"s_nop 0\"]\nafter = \"s_barrier\"\noccurrence = 1\nexpect = \"any\"\n";
    p.prepare("", rule).unwrap_or_else(|d| panic!("{d}"));
    // A rule using an SGPR beyond the declared budget: a new error.
    let rule = "\n[[kernel.source.rule]]\ninsert = [\"s_mov_b32 s90, 0\"]\nafter = \"s_barrier\"\noccurrence = 1\nexpect = \"any\"\n";
    let d = p.prepare("", rule).expect_err("new register finding");
    assert!(d.0.iter().all(|e| e.message.contains("s90")), "{d}");
}

/// A job that passes every check and then fails at the assembler keeps its
/// notes: `check` shows the inherited-hazard note beside the assembler's
/// error (it used to show the error alone), and `build` does the same.
#[test]
fn a_job_the_assembler_rejects_keeps_its_notes() {
    let p = P::new();
    p.manifest(
        "",
        "\n[[kernel.source.rule]]\ninsert = [\"v_mov_b32 v1, v2, v3\"]\nbefore = \"s_endpgm\"\n",
    );
    let o = common::run_cli(p.dir.path(), &["check", "--no-assemble"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    for args in [&["check"][..], &["build", "--out", "out"]] {
        let o = common::run_cli(p.dir.path(), args);
        let e = common::stderr(&o);
        assert!(!o.status.success(), "{args:?}: {e}");
        assert!(e.contains("v_mov_b32 v1, v2, v3"), "{args:?}: {e}");
        assert!(
            e.contains("1 wait-counter hazard(s) inherited"),
            "{args:?}: the note is missing: {e}"
        );
    }
    assert!(!p.dir.path().join("out/gfx942/mm.hsaco").exists());
}
