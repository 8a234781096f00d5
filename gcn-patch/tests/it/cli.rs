//! The `gcn-patch` binary end to end, on real dumps with the real LLVM 22.

use crate::common;

use common::repo;

use std::process::{Command, Output};

fn gcn_patch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run gcn-patch")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const MATMUL: &str = "tests/corpus/iree/gfx942/matmul.rocmasm";

#[test]
fn retarget_prints_normalized_asm_for_the_requested_target() {
    let o = gcn_patch(&["retarget", MATMUL, "--target", "gfx950"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains(".amdgcn_target \"amdgcn-amd-amdhsa--gfx950\""),
        "target directive not rewritten"
    );
    let code = |t: &str| {
        t.lines()
            .filter(|l| !l.trim_start().starts_with(';'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        !code(&out).contains("amdgpu9.42-amd-amdhsa"),
        "new-triple spelling left outside comments"
    );
    let original = std::fs::read_to_string(repo().join(MATMUL)).unwrap();
    // Same number of instruction lines: retargeting never touches code.
    let count = |t: &str| {
        t.lines()
            .filter(|l| l.starts_with('\t') && !l.trim_start().starts_with('.'))
            .count()
    };
    assert_eq!(count(&out), count(&original));
}

#[test]
fn assemble_writes_a_verified_code_object() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("matmul.hsaco");
    let o = gcn_patch(&[
        "assemble",
        MATMUL,
        "--target",
        "gfx942",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    let header = gcn_embed::elf::read_header(&bytes).unwrap();
    assert_eq!(header.flags().processor().map(|p| p.name), Some("gfx942"));
    // Only the object: no temp files left next to it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn assemble_for_the_wrong_generation_fails_without_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("matmul.hsaco");
    let o = gcn_patch(&[
        "assemble",
        MATMUL,
        "--target",
        "gfx1100",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{MATMUL}:")),
        "error must point into the dump:\n{err}"
    );
    assert!(!out.exists(), "no output on failure");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no partial files"
    );
}

#[test]
fn bad_target_lists_the_nearest_names() {
    let o = gcn_patch(&["retarget", MATMUL, "--target", "gfx9422"]);
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&o));
}

#[test]
fn targets_lists_processors_generics_and_families() {
    let o = gcn_patch(&["targets"]);
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    for needle in [
        "gfx942",
        "gfx950",
        "gfx1201",
        "gfx9-4-generic",
        "gfx11-generic",
        "gfx94X-all",
    ] {
        assert!(out.contains(needle), "`gcn-patch targets` lacks {needle}");
    }
}

#[test]
fn check_passes_on_the_demo_manifest() {
    let o = gcn_patch(&["check", "--manifest", "kernels.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("job(s) passed"));
}

#[test]
fn hand_written_kernel_leaves_register_counts_to_us() {
    // fill.s declares no .amdhsa_next_free_vgpr/_sgpr and no metadata counts.
    let src = "gcn-patch/tests/fixtures/handwritten/fill.s";
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fill.hsaco");
    let o = gcn_patch(&[
        "assemble",
        src,
        "--target",
        "gfx942",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let notes = stderr(&o);
    assert!(
        notes.contains(".amdhsa_next_free_vgpr 3 (added)"),
        "{notes}"
    );
    // The descriptor agrees: v0..v2 used → 3 VGPRs → one 8-VGPR granule on gfx942 (field value 0).
    let kds = gcn_patch::stage::verify::kernel_descriptors(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(kds.len(), 1);
    assert_eq!(
        kds[0].fields.compute_pgm_rsrc1 & 0x3f,
        0,
        "GRANULATED_WORKITEM_VGPR_COUNT"
    );
}

/// A copy of the demo project (manifest, dumps, patches) in a temp dir.
fn demo_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in walkdir::WalkDir::new(repo().join("asm"))
        .into_iter()
        .chain(walkdir::WalkDir::new(repo().join("patches")))
    {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(repo()).unwrap();
        let dest = dir.path().join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
    std::fs::copy(repo().join("kernels.toml"), dir.path().join("kernels.toml")).unwrap();
    dir
}

#[test]
fn apply_prints_the_patched_asm_for_one_target() {
    let o = gcn_patch(&["apply", "matmul", "--target", "gfx950"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains(".amdgcn_target \"amdgcn-amd-amdhsa--gfx950\""));
    // The rules' result: one wait for the A tile, the staggered waits gone.
    assert!(
        out.contains("\ts_waitcnt vmcnt(8)\n\tds_write2_b64 v75"),
        "set-waitcnt rule not applied"
    );
    assert!(!out.contains("s_waitcnt vmcnt(11)") && !out.contains("s_waitcnt vmcnt(10)"));
    let o = gcn_patch(&["apply", "matmul", "--target", "gfx1100"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not built for gfx1100"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn stale_pin_fails_check_and_pin_repairs_it() {
    let dir = demo_copy();
    let manifest = dir.path().join("kernels.toml");
    let m = manifest.to_str().unwrap();
    let asm = dir.path().join("asm/hip/gfx11-generic/saxpy.s");
    std::fs::write(
        &asm,
        std::fs::read_to_string(&asm).unwrap() + "; re-dumped\n",
    )
    .unwrap();
    let o = gcn_patch(&["check", "--no-assemble", "--manifest", m]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("asm/hip/gfx11-generic/saxpy.s") && err.contains("gcn-patch pin saxpy"),
        "{err}"
    );
    let before = std::fs::read_to_string(&manifest).unwrap();
    let o = gcn_patch(&["pin", "saxpy", "--manifest", m]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = std::fs::read_to_string(&manifest).unwrap();
    // Exactly one line changed: the stale pin.
    let changed = before
        .lines()
        .zip(after.lines())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(
        (changed, before.lines().count()),
        (1, after.lines().count())
    );
    let o = gcn_patch(&["check", "--no-assemble", "--manifest", m]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `gcn-patch build` names where each object came from in the engine's
/// words, the ones gcn-build's `report.txt` uses: `assembled`, then
/// `cached` in the same output directory, and `shared-cache` in a fresh
/// one sharing `GCN_BUILD_CACHE_DIR` (it said `shared`).
#[test]
fn build_names_each_objects_origin_in_the_engines_words() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("asm")).unwrap();
    let asm = dir.path().join("asm/saxpy.s");
    std::fs::copy(repo().join("tests/corpus/hip/gfx11-generic/saxpy.s"), &asm).unwrap();
    let sha = gcn_patch::base::hash::sha256_hex(&std::fs::read(&asm).unwrap());
    std::fs::write(
        dir.path().join("kernels.toml"),
        format!("[[kernel]]\nname = \"saxpy\"\n\n[[kernel.source]]\nasm = \"asm/saxpy.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx1100\"]\n"),
    )
    .unwrap();
    let build = |out: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
            .args(["build", "--out", out])
            .current_dir(dir.path())
            .env("GCN_BUILD_CACHE_DIR", dir.path().join("shared"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let table = String::from_utf8_lossy(&o.stdout).into_owned();
        let row = table
            .lines()
            .find(|l| l.starts_with("saxpy"))
            .unwrap_or_else(|| panic!("no saxpy row:\n{table}"))
            .to_string();
        row.split_whitespace().nth(2).unwrap().to_string()
    };
    assert_eq!(build("a"), "assembled");
    assert_eq!(build("a"), "cached");
    assert_eq!(build("b"), "shared-cache");
}
