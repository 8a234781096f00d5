//! Helpers shared by the root integration tests: locating real tools and binaries.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../support/mod.rs"]
mod support;
#[allow(unused_imports)]
pub use support::{changed_files, copy_tree, corpus, repo, run_bounded, tool, tree_snapshot};

/// llvm-objdump from LLVM 22.
pub fn objdump() -> PathBuf {
    tool("llvm-objdump-22", "apt-get install -y llvm-22")
}

/// iree-compile from iree-base-compiler 3.13.0.
pub fn iree_compile() -> PathBuf {
    tool("iree-compile", "pip install iree-base-compiler==3.13.0")
}

/// An example binary built by `cargo test` (examples are built alongside tests).
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test>-<hash> → target/<profile>/examples/<name>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile dir");
    let p = profile_dir.join("examples").join(name);
    assert!(
        p.is_file(),
        "example binary {} not built; run `cargo test --workspace` (it builds examples)",
        p.display()
    );
    p
}

/// Run a command and return its output, panicking with its stderr if it cannot start.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Disassemble a code object with llvm-objdump-22 for `mcpu`.
pub fn disassemble(bytes: &[u8], mcpu: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("obj.hsaco");
    std::fs::write(&f, bytes).unwrap();
    let out = run(Command::new(objdump())
        .args([
            "-d",
            "--no-show-raw-insn",
            "--no-leading-addr",
            &format!("--mcpu={mcpu}"),
        ])
        .arg(&f));
    assert!(
        out.status.success(),
        "llvm-objdump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `s_waitcnt` lines of a text (asm or disassembly), whitespace-normalized, comments dropped.
pub fn waitcnts(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            l.split(';')
                .next()
                .unwrap_or("")
                .split("//")
                .next()
                .unwrap_or("")
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| l.starts_with("s_waitcnt"))
        .collect()
}
