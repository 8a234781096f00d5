//! `gcn-patch test` catches the most common hand-tuning mistake near a
//! barrier: deleting the `s_waitcnt lgkmcnt(0)` that drains LDS writes
//! before `s_barrier`. The kernel is HIP (a block sum through LDS with
//! `__syncthreads()`, gcn-emu/tests/kernels/reduce_sync.hip) compiled by
//! clang-22; the patch is a manifest rule deleting that one wait. The
//! emulator completes every store at once, so the sums stay right: only the
//! sanitizer's model of stores in flight at a barrier sees it, and it names
//! the store, the barrier, the missing wait and the reader.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{repo, required_tool, run_cli, stderr};
use sha2::{Digest, Sha256};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A manifest in a fresh directory: reduce_sync.hip compiled for gfx942 by
/// clang-22, with `rules` after its source and one launch.
fn manifest(tag: &str, rules: &str) -> PathBuf {
    required_tool("clang-22", common::LLVM_INSTALL);
    required_tool("ld.lld-22", common::LLVM_INSTALL);
    let dir =
        std::env::temp_dir().join(format!("gcn-patch-sanbarrier-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = repo().join("gcn-emu/tests/kernels/reduce_sync.hip");
    let o = std::process::Command::new("clang-22")
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "-nogpuinc",
            "-nogpulib",
            "-O3",
            "-S",
            "--offload-arch=gfx942",
        ])
        .arg(&src)
        .arg("-o")
        .arg(dir.join("reduce.s"))
        .output()
        .expect("run clang-22");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sha: String = Sha256::digest(std::fs::read(dir.join("reduce.s")).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(
        dir.join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"reduce\"\nhazards = \"warn\"\n\n[[kernel.source]]\nasm = \"reduce.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\"]\n{rules}\n[[kernel.launch]]\nname = \"n512\"\ngrid = 2\nblock = 256\nargs = [\n  {{ random = \"f32\", shape = 512, seed = 1 }},\n  {{ output = \"f32\", shape = 2 }},\n  {{ scalar = \"u32\", value = 512 }},\n]\n"
        ),
    )
    .unwrap();
    dir
}

fn in_dir(dir: &Path, args: &[&str]) -> Output {
    run_cli(dir, args)
}

#[test]
fn a_deleted_lgkmcnt_wait_before_a_barrier_fails_test_naming_the_missing_wait() {
    // Unpatched: every barrier is preceded by its wait; clean.
    let clean = manifest("clean", "");
    let o = in_dir(&clean, &["test"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));

    // The third `s_waitcnt lgkmcnt(0)` of clang-22's gfx942 code is the one
    // between the first `ds_write_b32` and the first `s_barrier` (the first
    // two wait for the kernel arguments).
    let dir = manifest(
        "nowait",
        "[[kernel.source.rule]]\ndelete = \"s_waitcnt lgkmcnt(0)\"\noccurrence = 3\n",
    );
    let o = in_dir(&dir, &["test"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("FAILED: kernel `reduce`, gfx942, n512"),
        "{out}"
    );
    for want in [
        "LDS race (store in flight at a barrier)",
        "ds_write_b32",
        "s_barrier",
        "needs `s_waitcnt lgkmcnt(0)` before line ",
        "reduce.patched.gfx942.s:",
        "ds_read2st64_b32",
    ] {
        assert!(out.contains(want), "{want} in:\n{out}");
    }
    insta::assert_snapshot!("test_deleted_barrier_wait", out);

    // Checks are chosen: without `races` the same run is clean (the sums
    // are right; only the ordering is wrong), with it alone it fails.
    let o = in_dir(
        &dir,
        &["test", "--sanitize", "uninit,bounds,barriers,waits"],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let o = in_dir(&dir, &["test", "--sanitize", "races"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let o = in_dir(&dir, &["test", "--sanitize", "race"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("unknown sanitizer check `race`"),
        "{}",
        stderr(&o)
    );
}
