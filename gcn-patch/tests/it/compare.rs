//! `gcn-patch compare`, `gcn-patch test` and `check --run`: launches
//! declared in `kernels.toml` run in the emulator on objects built through
//! the real pipeline (clang-22, ld.lld-22). A patch that changes results is
//! caught by compare with the element; a patch that does not passes; the
//! demo manifest's launches run clean; a patch that removes a needed wait is
//! a sanitizer finding in `test`; a bad launch is an error at its line.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{repo, required_tool, run_cli, stderr};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const LAUNCH: &str = r#"
[[kernel.launch]]
name = "n1000"
grid = 4
block = 256
args = [
  { scalar = "f32", value = 0.75 },
  { random = "f32", shape = 1000, seed = 1 },
  { random = "f32", shape = 1000, seed = 2 },
  { scalar = "u32", value = 1000 },
]
"#;

/// A manifest in a fresh directory: the demo's gfx942 saxpy dump with
/// `rules` (TOML `[[kernel.source.rule]]` tables) and `extra` after them.
fn manifest(tag: &str, kernel_keys: &str, rules: &str, extra: &str) -> PathBuf {
    required_tool("clang-22", common::LLVM_INSTALL);
    required_tool("ld.lld-22", common::LLVM_INSTALL);
    let dir = std::env::temp_dir().join(format!("gcn-patch-compare-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        repo().join("asm/hip/gfx9-4-generic/saxpy.s"),
        dir.join("saxpy.s"),
    )
    .unwrap();
    std::fs::write(
        dir.join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"saxpy\"\n{kernel_keys}\n[[kernel.source]]\nasm = \"saxpy.s\"\nsha256 = \"{SAXPY_SHA256}\"\ntargets = [\"gfx942\"]\n{rules}{extra}"
        ),
    )
    .unwrap();
    dir
}

/// The demo manifest's pin of asm/hip/gfx9-4-generic/saxpy.s.
const SAXPY_SHA256: &str = "1f59e9f4c1765d3d0116d31b4c18ce1af605bd9552dccb48c56608f38ad4a038";

fn in_dir(dir: &Path, args: &[&str]) -> Output {
    run_cli(dir, args)
}

#[test]
fn a_patch_that_changes_results_is_caught_by_compare_with_the_element() {
    // y = a + x instead of a·x + y.
    let dir = manifest(
        "changed",
        "",
        "[[kernel.source.rule]]\nreplace = \"v_fmac_f32_e32 v5, s2, v4\"\nwith = \"v_add_f32_e32 v5, s2, v4\"\n",
        LAUNCH,
    );
    let o = in_dir(&dir, &["compare", "saxpy"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("DIFFERENT: kernel `saxpy`, gfx942, n1000 (kernels.toml:12): 1 of 2 buffer(s) differ (exact; unpatched vs patched)"), "{out}");
    assert!(
        out.contains("argument 2 (f32, shape [1000]): 1000 of 1000 element(s) differ"),
        "{out}"
    );
    insta::assert_snapshot!("compare_changed", out);
    // No tolerance hides a difference this large; a huge one does.
    let o = in_dir(&dir, &["compare", "saxpy", "--tolerance", "rel:1e-3"]);
    assert_eq!(o.status.code(), Some(1));
    let o = in_dir(&dir, &["compare", "saxpy", "--tolerance", "abs:100"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn a_patch_that_keeps_results_passes_compare_bit_for_bit() {
    // A no-op before the store and a coarser wait: the same results.
    let dir = manifest(
        "same",
        "",
        "[[kernel.source.rule]]\ninsert = \"s_nop 0\"\nbefore = \"global_store_dword v[0:1], v5, off\"\n",
        LAUNCH,
    );
    let o = in_dir(&dir, &["compare", "saxpy", "--target", "gfx942"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o),
        "same: kernel `saxpy`, gfx942, n1000 (kernels.toml:12): 2 buffer(s) agree (exact)\n"
    );
    let o = in_dir(&dir, &["test"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let o = in_dir(&dir, &["check", "--run"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("gcn-patch test: 1 of 1 launch(es) ran clean"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_removed_wait_is_a_sanitizer_finding_in_test_and_check_run() {
    // The static hazard check would refuse it; the kernel downgrades
    // hazards to warnings so that the emulator sees it.
    let dir = manifest(
        "nowait",
        "hazards = \"warn\"",
        "[[kernel.source.rule]]\ndelete = \"s_waitcnt vmcnt(0)\"\n",
        LAUNCH,
    );
    let o = in_dir(&dir, &["test", "--seed", "0", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    // Every seed runs and every failing one is named, with the seeds run.
    assert!(out.starts_with("FAILED: kernel `saxpy`, gfx942, n1000 (kernels.toml:11): the sanitizer found 2 problem(s): premature read ×2 (schedule seeds 0, 3 of 0, 3)"), "{out}");
    assert!(
        out.ends_with("gcn-patch test: 0 of 1 launch(es) ran clean under schedule seeds 0, 3\n"),
        "{out}"
    );
    // The first finding in full, the other in one line.
    assert!(
        out.contains("\n  sanitizer: premature read: `v_fmac_f32_e32 v5, s2, v4` (saxpy.patched.gfx942.s:26) with `global_load_dword v5, v[0:1], off` (saxpy.patched.gfx942.s:25), in 16 waves\n"),
        "{out}"
    );
    assert!(out.contains("premature read"), "{out}");
    assert!(
        out.contains("saxpy.patched.gfx942.s:"),
        "the patched asm's line: {out}"
    );
    insta::assert_snapshot!("test_removed_wait", out);
    let again = in_dir(&dir, &["test", "--seed", "0", "--seed", "3"]);
    assert_eq!(stdout(&again), out, "same seeds, same report");
    let o = in_dir(&dir, &["check", "--run"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let at = err
        .find("error[GP0826]: ")
        .unwrap_or_else(|| panic!("no GP0826 in:\n{err}"));
    assert!(err.contains("a declared launch did not run clean"), "{err}");
    insta::assert_snapshot!("check_run_removed_wait", &err[at..]);
}

#[test]
fn the_demo_manifest_declares_launches_that_run_clean_and_compare_equal() {
    let o = run_cli(&repo(), &["test"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    insta::assert_snapshot!("test_demo", stdout(&o));
    // The matmul's patch only changes waits: bit for bit the same.
    let o = run_cli(&repo(), &["compare", "matmul"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o),
        "same: kernel `matmul`, gfx942, launch 1 (kernels.toml:53): 3 buffer(s) agree (exact)\n\
         same: kernel `matmul`, gfx950, launch 1 (kernels.toml:53): 3 buffer(s) agree (exact)\n\
         same: kernel `matmul`, gfx9-4-generic as gfx942, launch 1 (kernels.toml:53): 3 buffer(s) agree (exact)\n"
    );
}

#[test]
fn bad_launches_and_options_are_errors_at_their_line_exit_2() {
    let mut all = String::new();
    for (tag, extra, args) in [
        (
            "dtype",
            "[[kernel.launch]]\ngrid = 1\nblock = 64\nargs = [\n  { random = \"f33\", shape = 4 },\n]\n",
            vec!["compare", "saxpy"],
        ),
        (
            "unknown",
            "[[kernel.launch]]\ngrid = 1\nblock = 64\nthreads = 4\n",
            vec!["test"],
        ),
        (
            "grid",
            "[[kernel.launch]]\ngrid = [0, 1]\nblock = 64\n",
            vec!["test"],
        ),
        (
            "arity",
            "[[kernel.launch]]\ngrid = 1\nblock = 64\nargs = [{ null = true }]\n",
            vec!["test"],
        ),
        ("none", "", vec!["compare", "saxpy"]),
        ("tolerance", LAUNCH, vec!["compare", "saxpy", "--tolerance", "ulps:1"]),
        ("target", LAUNCH, vec!["compare", "saxpy", "--target", "gfx1030"]),
    ] {
        let dir = manifest(&format!("bad-{tag}"), "", "", extra);
        let o = in_dir(&dir, &args);
        assert_eq!(o.status.code(), Some(2), "{tag}: {}{}", stdout(&o), stderr(&o));
        all.push_str(&format!("== {tag}: gcn-patch {}\n{}{}", args.join(" "), stdout(&o), stderr(&o)));
    }
    insta::assert_snapshot!("bad_launches", all);
}

#[test]
fn test_names_every_failing_seed_and_the_seeds_of_each_finding() {
    // reduce without its second barrier: which races show depends on the
    // schedule. (A wait before each barrier first, so that the bare
    // barriers' LDS stores in flight, which every seed reports, are not
    // what is counted.)
    let dir = std::env::temp_dir().join(format!("gcn-patch-compare-{}-seeds", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let asm = repo().join("asm/hip/gfx9-4-generic/reduce.s");
    std::fs::copy(&asm, dir.join("reduce.s")).unwrap();
    let sha = gcn_patch::base::hash::sha256_hex(&std::fs::read(&asm).unwrap());
    std::fs::write(
        dir.join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"reduce\"\n\n[[kernel.source]]\nasm = \"reduce.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\"]\n\n[[kernel.source.rule]]\ninsert = \"s_waitcnt lgkmcnt(0)\"\nbefore = \"s_barrier\"\nexpect = \"any\"\n\n[[kernel.source.rule]]\ndelete = \"s_barrier\"\noccurrence = 2\n\n[[kernel.launch]]\ngrid = 2\nblock = 256\nargs = [\n  {{ random = \"f32\", shape = 512, seed = 1 }},\n  {{ output = \"f32\", shape = 2 }},\n  {{ scalar = \"u32\", value = 512 }},\n]\n"
        ),
    )
    .unwrap();
    let o = in_dir(&dir, &["test", "--seed", "0", "--seed", "1", "--seed", "6"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].ends_with("(schedule seeds 0, 1, 6 of 0, 1, 6)"),
        "{out}"
    );
    // Each finding names the seeds that had it when not all did.
    let findings: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("  sanitizer: "))
        .collect();
    assert_eq!(findings.len(), 2, "{out}");
    assert!(findings[0].ends_with(" (seeds 0, 1)"), "{out}");
    assert!(findings[1].ends_with(" (seeds 1, 6)"), "{out}");
    assert_eq!(
        *lines.last().unwrap(),
        "gcn-patch test: 0 of 1 launch(es) ran clean under schedule seeds 0, 1, 6"
    );
}

/// `compare --slice` and `test --slice` run every side with the slice:
/// clang-22's `handoff` (gcn-emu/tests/kernels/interleave.hip), whose
/// waiting wave ends only when the waves interleave, as a manifest kernel
/// (patched by a no-op).
#[test]
fn slice_reaches_both_sides_of_compare_and_every_run_of_test() {
    let dir = std::env::temp_dir().join(format!("gcn-patch-compare-{}-slice", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let asm = common::compile_hip(
        &repo().join("gcn-emu/tests/kernels/interleave.hip"),
        "gfx942",
        &dir.join("interleave.s"),
        &["-S"],
    );
    let sha = gcn_patch::base::hash::sha256_hex(&std::fs::read(&asm).unwrap());
    std::fs::write(
        dir.join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"handoff\"\n\n[[kernel.source]]\nasm = \"interleave.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\"]\n\n[[kernel.source.rule]]\ninsert = \"s_nop 0\"\nbefore = \"s_endpgm\"\nexpect = \"any\"\n\n[[kernel.launch]]\nkernel = \"handoff\"\ngrid = 1\nblock = 256\nargs = [\n  {{ output = \"u32\", shape = 1 }},\n  {{ output = \"u32\", shape = 1 }},\n]\n"
        ),
    )
    .unwrap();
    let budget = ["--max-instructions", "20000"];
    let o = in_dir(&dir, &[&["compare", "handoff"][..], &budget].concat());
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("instruction"), "{}", stdout(&o));
    let o = in_dir(
        &dir,
        &[&["compare", "handoff", "--slice", "1"][..], &budget].concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).starts_with("same: kernel `handoff`"),
        "{}",
        stdout(&o)
    );
    let o = in_dir(&dir, &[&["test"][..], &budget].concat());
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let o = in_dir(&dir, &[&["test", "--slice", "1"][..], &budget].concat());
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}
