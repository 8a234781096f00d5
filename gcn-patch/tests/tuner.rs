//! The tuner's loop outside Cargo (`gcn-patch import`, `build`, `iree-flags`,
//! the lock file) with the real binary, real dumps and the real LLVM 22.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::repo;

fn gcn_patch(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run gcn-patch")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "gcn-patch failed:\n{}", stderr(&o));
    o
}

/// A temp dir holding copies of corpus dumps under `in/`.
fn workspace(files: &[&str]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("in")).unwrap();
    let mut out = vec![];
    for f in files {
        let src = repo().join("tests/corpus").join(f);
        let dest = tmp
            .path()
            .join("in")
            .join(f.replace('/', "_").replace("iree_", "").replace("hip_", ""));
        std::fs::copy(&src, &dest).unwrap();
        out.push(dest);
    }
    (tmp, out)
}

#[test]
fn import_copies_pins_and_records_target_symbols_and_is_idempotent() {
    let (tmp, _) = workspace(&["hip/gfx942/saxpy.s", "iree/gfx1100/matmul.rocmasm"]);
    let dir = tmp.path();
    ok(gcn_patch(dir, &["import", "in"]));
    let manifest = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    insta::assert_snapshot!("import_manifest", manifest);
    assert!(dir.join("asm/gfx942/gfx942_saxpy.s").is_file());
    // Same bytes again: a no-op that says so.
    let again = ok(gcn_patch(dir, &["import", "in/gfx942_saxpy.s"]));
    assert!(
        stderr(&again).contains("already imported"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("kernels.toml")).unwrap(),
        manifest
    );
    // The imported manifest checks.
    ok(gcn_patch(dir, &["check"]));
}

#[test]
fn import_of_a_changed_file_with_the_same_name_says_how_to_re_pin() {
    let (tmp, files) = workspace(&["hip/gfx942/saxpy.s"]);
    let dir = tmp.path();
    ok(gcn_patch(dir, &["import", "in/gfx942_saxpy.s"]));
    let mut text = std::fs::read_to_string(&files[0]).unwrap();
    text.push_str("; edited\n");
    std::fs::write(&files[0], text).unwrap();
    let o = gcn_patch(dir, &["import", "in/gfx942_saxpy.s"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("already imported"), "{err}");
    assert!(err.contains("gcn-patch pin gfx942_saxpy"), "{err}");
}

#[test]
fn import_of_a_non_amdgpu_file_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("host.s"),
        "\t.text\n\t.globl main\nmain:\n\tret\n",
    )
    .unwrap();
    let o = gcn_patch(tmp.path(), &["import", "host.s"]);
    assert!(!o.status.success());
    insta::assert_snapshot!("import_not_amdgpu", stderr(&o));
    assert!(!tmp.path().join("kernels.toml").exists());
}
