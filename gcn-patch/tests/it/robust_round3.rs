//! Reliability round 3 (issue 22): a panic is an error naming its job, never
//! a hang; counts a user writes are checked at their manifest line; a kernel
//! that can run off its own end fails `check`. Real clang-22 / ld.lld-22.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::corpus;
use gcn_patch::base::document::Document;
use gcn_patch::support::{findings, Leak};

/// Longer than any of these commands takes; a hang is killed and fails the test.
const DEADLINE: Duration = Duration::from_secs(120);

/// Run gcn-patch in `dir` with `env`, killing it at [`DEADLINE`].
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gcn-patch"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .env_remove("GCN_PATCH_TEST_PANIC");
    for (k, v) in env {
        cmd.env(k, v);
    }
    common::run_bounded(cmd, DEADLINE, &format!("gcn-patch {}", args.join(" ")))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit status 1 and every `needles` in stderr. Returns stderr.
fn fails(o: &Output, what: &str, needles: &[&str]) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{what}: exit status:\n{e}");
    for n in needles {
        assert!(e.contains(n), "{what}: expected `{n}` in:\n{e}");
    }
    e
}

fn saxpy_text() -> String {
    std::fs::read_to_string(corpus().join("hip/gfx942/saxpy.s")).unwrap()
}

/// A project: saxpy.s (gfx942 HIP dump) and a manifest with `rules` (TOML
/// rule tables) for gfx942.
fn project(rules: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("saxpy.s"), saxpy_text()).unwrap();
    let sha = gcn_embed::sha256_hex(saxpy_text().as_bytes());
    std::fs::write(
        dir.path().join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"saxpy\"\n\n[[kernel.source]]\nasm = \"saxpy.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\"]\n{rules}"
        ),
    )
    .unwrap();
    dir
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

/// The typo of issue 22: `anchor-occurrence = 0` beside `occurrence = 1`.
/// It panicked in a worker and `check` waited forever; now it is an error at
/// its own manifest line, before anything runs.
#[test]
fn anchor_occurrence_zero_is_an_error_at_its_line_not_a_hang() {
    let rule = "\n[[kernel.source.rule]]\nmove = \"s_waitcnt vmcnt(0)\"\nbefore = \"global_store_dword v0, v1, s[0:1]\"\noccurrence = 1\nanchor-occurrence = 0\n";
    let dir = project(rule);
    let manifest = std::fs::read_to_string(dir.path().join("kernels.toml")).unwrap();
    let line = line_of(&manifest, "anchor-occurrence = 0");
    for args in [
        &["check"][..],
        &["check", "--no-assemble"],
        &["build", "--out", "out"],
    ] {
        let o = run(dir.path(), args, &[]);
        let e = fails(
            &o,
            &args.join(" "),
            &["occurrences count from 1", &format!("kernels.toml:{line}:")],
        );
        assert!(!e.contains("panicked"), "{e}");
    }
    assert!(!dir.path().join("out").exists(), "build wrote output");
}

/// The siblings: every count a rule takes is checked where it is written.
#[test]
fn every_count_a_rule_takes_is_checked_at_its_line() {
    for (key_line, needle) in [
        ("occurrence = 0", "occurrences count from 1"),
        ("occurrence = -3", "occurrences count from 1"),
        ("occurrence = \"first\"", "unknown occurrence \"first\""),
        (
            "expect = 0",
            "`expect = 0` would let the rule act on nothing",
        ),
        ("expect = -1", "`expect` must be a number of matches"),
        (
            "expect = \"some\"",
            "`expect` must be a number of matches or \"any\", not \"some\"",
        ),
    ] {
        let rule = format!("\n[[kernel.source.rule]]\ndelete = \"s_nop 0\"\n{key_line}\n");
        let dir = project(&rule);
        let manifest = std::fs::read_to_string(dir.path().join("kernels.toml")).unwrap();
        let line = line_of(&manifest, key_line);
        let o = run(dir.path(), &["check", "--no-assemble"], &[]);
        fails(&o, key_line, &[needle, &format!("kernels.toml:{line}:")]);
    }
    // A `set` value is one line: a newline would write lines no location knows.
    let dir = project(
        "\n[[kernel.source.rule]]\nset = \".amdhsa_next_free_vgpr\"\nvalue = \"8\\n\\ts_endpgm\"\n",
    );
    let o = run(dir.path(), &["check", "--no-assemble"], &[]);
    fails(&o, "multi-line set value", &["the value must be one line"]);
    // Triton launch numbers are the user's too: huge ones do not overflow.
    let dir = project("triton = { kernel = \"saxpy\", target = \"gfx942\", num-warps = 4294967295, warp-size = 4294967295 }\n");
    let o = run(dir.path(), &["check", "--no-assemble"], &[]);
    let e = fails(
        &o,
        "huge num-warps",
        &["Triton launches 18446744065119617025 threads"],
    );
    assert!(!e.contains("panicked"), "{e}");
}

/// A panic injected into a job (the test-only `GCN_PATCH_TEST_PANIC` hook) is
/// an error naming the kernel and target, exit 1, no hang: check (both
/// ways), build and the patch stage of both.
#[test]
fn a_panicking_job_is_an_error_naming_kernel_and_target() {
    let dir = project("");
    for (args, hook, job) in [
        (
            &["check"][..],
            "check:saxpy",
            "checking kernel `saxpy` for gfx942",
        ),
        (
            &["check", "--no-assemble"],
            "check:saxpy",
            "checking kernel `saxpy` for gfx942",
        ),
        (
            &["build", "--out", "out"],
            "build:saxpy",
            "building kernel `saxpy` for gfx942",
        ),
        (
            &["check"],
            "patch:saxpy",
            "patching kernel `saxpy` (source `saxpy.s`)",
        ),
        (
            &["build", "--out", "out"],
            "patch:saxpy",
            "patching kernel `saxpy` (source `saxpy.s`)",
        ),
    ] {
        let o = run(dir.path(), args, &[("GCN_PATCH_TEST_PANIC", hook)]);
        let e = fails(
            &o,
            &format!("{} with {hook}", args.join(" ")),
            &[
                &format!("internal error while {job}: injected by GCN_PATCH_TEST_PANIC={hook}"),
                "this is a bug in gcn-patch",
            ],
        );
        assert!(e.contains("please report it"), "{e}");
    }
    assert!(
        !dir.path().join("out/gfx942").exists(),
        "a failed build installed output"
    );
    // The same project without the hook builds: the hook is all that failed.
    let o = run(dir.path(), &["build", "--out", "out"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A panic while lifting a file being imported names the file and its
/// processor; the import writes nothing.
#[test]
fn a_panicking_import_names_the_file_and_target_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        corpus().join("iree/gfx942/softmax.hsaco"),
        dir.path().join("softmax.hsaco"),
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["import", "softmax.hsaco"],
        &[("GCN_PATCH_TEST_PANIC", "lift:softmax.hsaco")],
    );
    fails(
        &o,
        "import",
        &[
            "internal error while importing `softmax.hsaco`",
            "while lifting the gfx942 code object softmax.hsaco",
        ],
    );
    assert!(!dir.path().join("kernels.toml").exists());
    assert!(!dir.path().join("asm").exists());
}

/// A rule that makes the kernel run off its end fails `check`, at the line
/// where control leaves, naming the rule. Three shapes of the mistake.
#[test]
fn a_kernel_that_can_run_off_its_end_fails_check() {
    for (rule, needles) in [
        // `s_endpgm` replaced by a no-op.
        (
            "replace = \"s_endpgm\"\nwith = \"s_nop 0\"",
            &[
                "control can run off the end of kernel `saxpy`",
                "s_nop 0",
                "rule #1",
            ][..],
        ),
        // `s_endpgm` deleted: both paths into `.LBB0_2` now leave the kernel.
        (
            "delete = \"s_endpgm\"",
            &[
                "control can run off the end of kernel `saxpy`",
                "branches to `.LBB0_2`, past its last instruction",
            ],
        ),
        // The end replaced by a conditional branch: not taken, it falls off.
        (
            "replace = \"s_endpgm\"\nwith = \"s_cbranch_scc1 .LBB0_2\"",
            &[
                "control can run off the end of kernel `saxpy`",
                "s_cbranch_scc1 .LBB0_2",
                "rule #1",
            ],
        ),
    ] {
        let dir = project(&format!("\n[[kernel.source.rule]]\n{rule}\n"));
        for args in [&["check"][..], &["check", "--no-assemble"]] {
            let o = run(dir.path(), args, &[]);
            fails(&o, rule, needles);
        }
    }
    // The dump as it is passes.
    let dir = project("");
    let o = run(dir.path(), &["check"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Two kernels in one file; `a` branches into `b`'s code.
#[test]
fn a_branch_into_another_kernel_is_found() {
    let text = saxpy_text();
    let doc = Document::from_source(&text, Path::new("saxpy.s"));
    assert!(findings(&doc).is_empty(), "{:?}", findings(&doc));
    // A second copy of the kernel, renamed, after the first; then the first
    // kernel's exit branches into the copy.
    let copy = text
        .replace("saxpy", "saxpy2")
        .replace(".LBB0_", ".LBB1_")
        .replace(".Lfunc_end0", ".Lfunc_end1");
    let two = text.replacen("s_cbranch_execz .LBB0_2", "s_cbranch_execz .LBB1_2", 1) + &copy;
    let doc = Document::from_source(&two, Path::new("two.s"));
    let f = findings(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].kernel, "saxpy");
    assert_eq!(f[0].leak, Leak::IntoKernel("saxpy2".into()));
    assert!(doc.text(f[0].line).contains("s_cbranch_execz .LBB1_2"));
}

/// Silent on every unpatched compiler dump of the corpus (IREE, hipcc,
/// Triton): no finding, and every kernel was walked.
#[test]
fn control_check_is_silent_on_every_compiler_dump() {
    let mut kernels = 0;
    for (path, _) in common::corpus_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc = Document::from_source(&text, &path);
        kernels += doc.kernels().len();
        let f = findings(&doc);
        assert!(f.is_empty(), "{}: {f:?}", path.display());
    }
    assert!(kernels >= 45, "only {kernels} kernels walked");
}
