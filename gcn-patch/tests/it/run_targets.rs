//! Targets taken from where they are written: generic-target objects
//! (gfx9-4-generic) run as a processor of their family (`run`/`test`
//! `--as`, the default said in the output), and `lint` reads the target
//! from the file's `.amdgcn_target` when `--target` is absent.

use crate::common;

use std::path::{Path, PathBuf};

use common::{repo, run_cli, stderr, stdout};
use gcn_emu::npy::Array;

/// Compile the corpus' saxpy for `arch` (a processor or a generic target)
/// into `dir/saxpy-ARCH.hsaco`.
fn saxpy(dir: &Path, arch: &str) -> PathBuf {
    let src = repo().join("tests/corpus/src/saxpy.hip");
    common::compile_hip(&src, arch, &dir.join(format!("saxpy-{arch}.hsaco")), &[])
}

fn run(d: &Path, object: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run", object, "-k", "saxpy", "--grid", "1", "--block", "64", "--out", "out", "--arg",
        "f32:2", "--arg", "x.npy", "--arg", "y.npy", "--arg", "u32:3",
    ];
    args.extend(extra);
    run_cli(d, &args)
}

#[test]
fn a_generic_object_runs_as_a_processor_of_its_family() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    saxpy(d, "gfx9-4-generic");
    saxpy(d, "gfx9-generic");
    saxpy(d, "gfx942");
    let npy = |name: &str, v: &[f32]| {
        Array::new("<f4", v.iter().flat_map(|x| x.to_le_bytes()).collect())
            .write(&d.join(name))
            .unwrap()
    };
    npy("x.npy", &[1.0, 2.0, 3.0, 4.0]);
    npy("y.npy", &[10.0, 20.0, 30.0, 40.0]);
    // The default: the first processor of the family the emulator runs,
    // said in the output.
    let o = run(d, "saxpy-gfx9-4-generic.hsaco", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("gcn-patch run: running gfx9-4-generic object as gfx942; --as to choose\n"),
        "{out}"
    );
    assert!(
        out.contains("kernel `saxpy` (gfx9-4-generic as gfx942) ran clean"),
        "{out}"
    );
    assert_eq!(
        common::npy_f32s(&d.join("out/arg2.npy")),
        [12.0, 24.0, 36.0, 40.0]
    );
    // --as chooses another member; the note is not repeated.
    let o = run(d, "saxpy-gfx9-4-generic.hsaco", &["--as", "gfx950"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("--as to choose"), "{out}");
    assert!(
        out.contains("(gfx9-4-generic as gfx950) ran clean"),
        "{out}"
    );
    assert_eq!(
        common::npy_f32s(&d.join("out/arg2.npy")),
        [12.0, 24.0, 36.0, 40.0]
    );
    // A processor outside the family, --as on a processor's object, and a
    // generic target none of whose processors is emulated: exit 2, `--as`
    // or the family named.
    let o = run(d, "saxpy-gfx9-4-generic.hsaco", &["--as", "gfx90a"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).lines().next().unwrap(),
        "error[GP0816]: --as: `gfx90a` is not a processor of gfx9-4-generic's family that the emulator runs: one of gfx942, gfx950"
    );
    let o = run(d, "saxpy-gfx942.hsaco", &["--as", "gfx950"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--as: `gfx950`: the object is built for gfx942, not a generic target"),
        "{}",
        stderr(&o)
    );
    let o = run(d, "saxpy-gfx9-generic.hsaco", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the emulator runs no processor of gfx9-generic's family (gfx900,"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn test_runs_the_demo_gfx9_4_generic_launches_as_chosen() {
    let o = run_cli(
        &repo(),
        &[
            "test",
            "saxpy",
            "--target",
            "gfx9-4-generic",
            "--as",
            "gfx950",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("ok: kernel `saxpy`, gfx9-4-generic as gfx950, launch 1"),
        "{}",
        stdout(&o)
    );
    let o = run_cli(
        &repo(),
        &[
            "test",
            "saxpy",
            "--target",
            "gfx9-4-generic",
            "--as",
            "gfx1100",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("--as: `gfx1100` is not a processor of gfx9-4-generic's family"),
        "{}",
        stderr(&o)
    );
}

/// One kernel whose VALU read of v1 is not covered by a wait on the
/// global load writing it: a hazard for any gfx9 target.
fn hazard_asm(target_line: &str) -> String {
    format!(
        "{target_line}\t.text\n\t.globl k\n\t.p2align 8\n\t.type k,@function\nk:\n\
         \tglobal_load_dword v1, v[2:3], off\n\
         \tv_add_f32_e32 v0, v1, v1\n\
         \ts_endpgm\n"
    )
}

#[test]
fn lint_takes_the_target_from_amdgcn_target() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("k.s"),
        hazard_asm("\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx950\"\n"),
    )
    .unwrap();
    let o = run_cli(d, &["lint", "k.s"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("for gfx950 (its .amdgcn_target)"),
        "{}",
        stderr(&o)
    );
    // --target still wins.
    let o = run_cli(d, &["lint", "k.s", "--target", "gfx90a"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("for gfx90a\n"), "{}", stderr(&o));
    // No directive, or one that is not a target: exit 2, saying so.
    std::fs::write(d.join("none.s"), hazard_asm("")).unwrap();
    let o = run_cli(d, &["lint", "none.s"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).lines().next().unwrap(),
        "error[GP0008]: --target: `none.s` has no `.amdgcn_target` directive to take the target from"
    );
    std::fs::write(
        d.join("bad.s"),
        hazard_asm("\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx9999\"\n"),
    )
    .unwrap();
    let o = run_cli(d, &["lint", "bad.s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error[GP0008]: --target: bad.s:1: `.amdgcn_target \"amdgcn-amd-amdhsa--gfx9999\"` is not a target ID"),
        "{}",
        stderr(&o)
    );
}
