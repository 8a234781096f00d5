//! `gcn-patch test` catches the most common hand-tuning mistake near a
//! barrier: deleting the `s_waitcnt lgkmcnt(0)` that drains LDS writes
//! before `s_barrier`. The kernel is HIP (a block sum through LDS with
//! `__syncthreads()`, gcn-emu/tests/kernels/reduce_sync.hip) compiled by
//! clang-22; the patch is a manifest rule deleting that one wait. The
//! emulator completes every store at once, so the sums stay right: only the
//! sanitizer's model of stores in flight at a barrier sees it, and it names
//! the store, the barrier, the missing wait and the reader.

use crate::common;

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

/// A NumPy `.npy` (version 1.0) of little-endian f32 values.
fn npy_f32(v: &[f32]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
        v.len()
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    out
}

#[test]
fn run_with_findings_still_writes_the_buffers_and_says_the_run_was_not_clean() {
    let dir = manifest("run", "");
    // The same mutant by hand: the third `s_waitcnt lgkmcnt(0)` deleted.
    let text = std::fs::read_to_string(dir.join("reduce.s")).unwrap();
    let mut seen = 0;
    let mutant: Vec<&str> = text
        .lines()
        .filter(|l| {
            if l.trim() == "s_waitcnt lgkmcnt(0)" {
                seen += 1;
                return seen != 3;
            }
            true
        })
        .collect();
    std::fs::write(dir.join("m.s"), mutant.join("\n") + "\n").unwrap();
    let o = std::process::Command::new("clang-22")
        .args([
            "-target",
            "amdgcn-amd-amdhsa",
            "-x",
            "assembler",
            "-c",
            "-mcpu=gfx942",
        ])
        .arg(dir.join("m.s"))
        .arg("-o")
        .arg(dir.join("m.o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = std::process::Command::new("ld.lld-22")
        .arg("-shared")
        .arg(dir.join("m.o"))
        .arg("-o")
        .arg(dir.join("m.hsaco"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let x: Vec<f32> = (0..512).map(|i| (i % 7) as f32).collect();
    std::fs::write(dir.join("x.npy"), npy_f32(&x)).unwrap();
    let args = |sanitize: &str| -> Vec<String> {
        [
            "run",
            "m.hsaco",
            "--kernel",
            "reduce",
            "--grid",
            "2",
            "--block",
            "256",
            "--arg",
            "x.npy",
            "--arg",
            "out:f32:2",
            "--arg",
            "u32:512",
            "--asm",
            "m.s",
            "--out",
            "out",
            sanitize,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |sanitize: &str| {
        let a = args(sanitize);
        in_dir(&dir, &a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run("--sanitize");
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("gcn-patch run: kernel `reduce` (gfx942) did NOT run clean: the sanitizer (races,uninit,bounds,barriers,waits) found 1 problem(s), reported on stderr"),
        "{out}"
    );
    assert!(
        out.contains("wrote out/arg1.npy") || out.contains("arg1.npy"),
        "{out}"
    );
    assert!(
        stderr(&o).contains("needs `s_waitcnt lgkmcnt(0)` before line "),
        "{}",
        stderr(&o)
    );
    // The buffers hold the (right) sums all the same.
    let y = std::fs::read(dir.join("out/arg1.npy")).unwrap();
    let sums: Vec<f32> = y[y.len() - 8..]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<f32> = x.chunks(256).map(|c| c.iter().sum()).collect();
    assert_eq!(sums, want);
    // Without `races` the run is clean and says which checks ran.
    let o = run("--sanitize=uninit,waits");
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("ran clean: 2 workgroup(s), 8 wave(s)")
            && stdout(&o).contains("; sanitizer checks: uninit,waits"),
        "{}",
        stdout(&o)
    );
    let o = run("--sanitize=bogus");
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("unknown sanitizer check `bogus`"),
        "{}",
        stderr(&o)
    );
}
