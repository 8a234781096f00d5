//! `examples/xtask.rs`, the xtask-style driver of gcn-patch's public API,
//! built and run on a real dump: import → patch → check → build with the
//! real LLVM tools, and what it wrote is what it says.

mod common;

use std::process::Command;

use common::*;

#[test]
fn xtask_example_imports_patches_checks_and_builds() {
    let dir = tempfile::tempdir().unwrap();
    let dump = corpus().join("hip/gfx942/saxpy.s");
    let out = run(Command::new(example("xtask")).arg(dir.path()).arg(&dump));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0], "import: kernel `saxpy` from asm/gfx942/saxpy.s",
        "{stdout}"
    );
    assert_eq!(
        lines[1], "patch: patches/saxpy/0001-nop.diff (+1 -0)",
        "{stdout}"
    );
    assert_eq!(lines[2], "check: 1 of 1 jobs pass", "{stdout}");
    // The patch holds the added line, and the manifest names it.
    let patch = std::fs::read_to_string(dir.path().join("patches/saxpy/0001-nop.diff")).unwrap();
    assert!(patch.contains("\n+\ts_nop 0\n"), "{patch}");
    let toml = std::fs::read_to_string(dir.path().join("kernels.toml")).unwrap();
    assert!(toml.contains("patches/saxpy/0001-nop.diff"), "{toml}");
    // The built code object is where the example says, with the sha256 it says.
    let build: Vec<&str> = lines[3].split(' ').collect();
    assert_eq!(&build[..3], ["build:", "saxpy", "gfx942"], "{stdout}");
    let bytes = std::fs::read(build[3]).unwrap();
    assert_eq!(gcn_patch::base::hash::sha256_hex(&bytes), build[4]);
    assert_eq!(&bytes[..4], b"\x7fELF");
    assert_eq!(
        lines[4],
        format!("lock: {}", dir.path().join("kernels.lock").display())
    );
    assert!(dir.path().join("kernels.lock").is_file());
}
