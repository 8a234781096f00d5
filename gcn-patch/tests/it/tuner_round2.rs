//! The tuner's loop, round 2 (issue 23), with the real binary, real dumps and
//! the real LLVM 22: edits are never lost, outputs honour the umask, quilt
//! habits (refresh, list, drop), the same target vocabulary in every command.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{ok, repo, run_cli as gcn_patch, stderr};

/// A temp dir with `saxpy.s` (HIP, gfx942) imported as kernel `saxpy`.
fn saxpy_project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("tests/corpus/hip/gfx942/saxpy.s"),
        tmp.path().join("saxpy.s"),
    )
    .unwrap();
    ok(gcn_patch(tmp.path(), &["import", "saxpy.s"]));
    tmp
}

/// `gcn-patch edit K`: the work file's path.
fn edit(dir: &Path, kernel: &str) -> PathBuf {
    let o = ok(gcn_patch(dir, &["edit", kernel]));
    dir.join(String::from_utf8_lossy(&o.stdout).trim())
}

/// Replace the first `from` by `to` in `file`.
fn change(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{from} not in {}", file.display());
    std::fs::write(file, text.replacen(from, to, 1)).unwrap();
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn edit_refuses_to_overwrite_a_work_file_holding_unsaved_edits() {
    let tmp = saxpy_project();
    let dir = tmp.path();
    let work = edit(dir, "saxpy");
    // Reopening an untouched work file is fine.
    assert_eq!(edit(dir, "saxpy"), work);
    change(&work, "\ts_endpgm", "\ts_nop 0\n\ts_endpgm");
    let edited = read(&work);

    let o = gcn_patch(dir, &["edit", "saxpy"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!("edit_refuses_unsaved", stderr(&o));
    assert_eq!(read(&work), edited, "the hand edit is kept");

    // drop, which removes the work file, refuses too.
    let o = gcn_patch(dir, &["drop", "saxpy", "anything"]);
    assert!(!o.status.success());

    // Saved, the work file is clean again: edit rewrites it freely.
    ok(gcn_patch(dir, &["save", "saxpy", "nop"]));
    assert_eq!(edit(dir, "saxpy"), work);
    assert_eq!(read(&work), edited);

    // --force discards unsaved edits.
    change(&work, "\ts_nop 0", "\ts_nop 1");
    assert!(!gcn_patch(dir, &["edit", "saxpy"]).status.success());
    ok(gcn_patch(dir, &["edit", "saxpy", "--force"]));
    assert_eq!(read(&work), edited);

    // The work directory ignores itself in git, as cargo's target/ does.
    assert_eq!(
        read(&dir.join(".gcn-patch/.gitignore")).lines().last(),
        Some("*")
    );
}

#[test]
fn save_of_an_existing_name_refreshes_it_and_patches_lists_drop_removes() {
    let tmp = saxpy_project();
    let dir = tmp.path();
    let manifest = dir.join("kernels.toml");
    let work = edit(dir, "saxpy");
    change(&work, "\ts_endpgm", "\ts_nop 0\n\ts_endpgm");
    ok(gcn_patch(dir, &["save", "saxpy", "pad"]));
    let first = dir.join("patches/saxpy/0001-pad.diff");
    assert!(read(&first).contains("+\ts_nop 0"));

    // Same name again: the patch is refreshed, not a 0002-pad.diff.
    change(&work, "\ts_nop 0", "\ts_nop 0\n\ts_nop 1");
    let o = ok(gcn_patch(dir, &["save", "saxpy", "pad"]));
    assert!(
        stderr(&o).contains("refreshed patches/saxpy/0001-pad.diff"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("patches/saxpy/0002-pad.diff").exists());
    let refreshed = read(&first);
    assert!(refreshed.contains("+\ts_nop 0\n+\ts_nop 1"), "{refreshed}");
    assert_eq!(read(&manifest).matches("0001-pad.diff").count(), 1);

    // A second patch, then the list in order.
    change(&work, "\ts_nop 1", "\ts_nop 1\n\ts_nop 2");
    ok(gcn_patch(dir, &["save", "saxpy", "more pad"]));
    let o = ok(gcn_patch(dir, &["patches", "saxpy"]));
    insta::assert_snapshot!("patches_list", String::from_utf8_lossy(&o.stdout));

    // The first patch is no longer the last: refreshing it is refused.
    change(&work, "\ts_nop 2", "\ts_nop 3");
    let o = gcn_patch(dir, &["save", "saxpy", "pad"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("is not the last of its source"),
        "{}",
        stderr(&o)
    );

    // Dropping the first: the second needs its lines, so nothing changes.
    ok(gcn_patch(dir, &["edit", "saxpy", "--force"]));
    let before = read(&manifest);
    let o = gcn_patch(dir, &["drop", "saxpy", "pad"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("a later patch needs it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read(&manifest), before);
    assert!(first.is_file());

    // Dropping the last, then the first: back to the bare dump.
    ok(gcn_patch(dir, &["drop", "saxpy", "0002-more-pad.diff"]));
    assert!(!dir.join("patches/saxpy/0002-more-pad.diff").exists());
    ok(gcn_patch(dir, &["drop", "saxpy", "pad"]));
    assert!(
        !dir.join("patches/saxpy").exists(),
        "no empty patches/saxpy/"
    );
    assert!(!read(&manifest).contains("patches"), "{}", read(&manifest));
    let o = ok(gcn_patch(dir, &["patches", "saxpy"]));
    assert!(stderr(&o).contains("has no patches"));
    ok(gcn_patch(dir, &["check"]));
}

#[test]
fn a_refused_save_leaves_no_empty_patch_directory() {
    let tmp = saxpy_project();
    let dir = tmp.path();
    let work = edit(dir, "saxpy");
    change(&work, "\ts_endpgm", "\ts_endpgm v0, v1, v2, v3");
    let o = gcn_patch(dir, &["save", "saxpy", "broken"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nothing was saved"), "{}", stderr(&o));
    assert!(
        !dir.join("patches").exists(),
        "a refused save left patches/"
    );
}

/// Run gcn-patch in `dir` with the shell's `umask MASK` (as a user's shell would).
fn with_umask(mask: &str, dir: &Path, args: &[&str]) -> Output {
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("umask {mask} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(args)
        .current_dir(dir)
        .env_remove("TRITON_CACHE_DIR")
        .output()
        .expect("run sh");
    ok(o)
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn new_outputs_honour_the_umask_and_rewritten_files_keep_their_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(
        repo().join("tests/corpus/hip/gfx942/saxpy.s"),
        dir.join("saxpy.s"),
    )
    .unwrap();
    // A Triton dump directory (<hash>/add.{amdgcn,hsaco}) for triton-override.
    let hash = "A".repeat(52);
    let tdump = dir.join("tdump").join(&hash);
    std::fs::create_dir_all(&tdump).unwrap();
    for f in ["add.amdgcn", "add.hsaco"] {
        std::fs::copy(
            repo().join("tests/triton/add-gfx942").join(f),
            tdump.join(f),
        )
        .unwrap();
    }
    with_umask("022", dir, &["import", "saxpy.s", "tdump"]);
    let work = {
        let o = with_umask("022", dir, &["edit", "saxpy"]);
        dir.join(String::from_utf8_lossy(&o.stdout).trim())
    };
    change(&work, "\ts_endpgm", "\ts_nop 0\n\ts_endpgm");
    with_umask("022", dir, &["save", "saxpy", "pad"]);
    with_umask("022", dir, &["build", "--out", "out"]);
    with_umask("022", dir, &["triton-override", "--out", "override"]);
    for f in [
        "kernels.toml".to_string(),
        "asm/gfx942/saxpy.s".into(),
        "patches/saxpy/0001-pad.diff".into(),
        "kernels.lock".into(),
        "out/gfx942/saxpy.hsaco".into(),
        "out/gfx942/add.hsaco".into(),
        format!("override/{hash}/add.hsaco"),
    ] {
        assert_eq!(
            mode(&dir.join(&f)),
            0o644,
            "{f}: mode {:o}",
            mode(&dir.join(&f))
        );
    }
    // Another umask gives other modes: the umask decides, not a constant.
    with_umask("027", dir, &["build", "--out", "out2"]);
    assert_eq!(mode(&dir.join("out2/gfx942/saxpy.hsaco")), 0o640);

    // A rewritten file keeps its mode, whatever the umask.
    std::fs::set_permissions(
        dir.join("kernels.toml"),
        std::fs::Permissions::from_mode(0o664),
    )
    .unwrap();
    change(&work, "\ts_nop 0", "\ts_nop 1");
    with_umask("077", dir, &["save", "saxpy", "more"]);
    assert_eq!(mode(&dir.join("kernels.toml")), 0o664);
    assert_eq!(mode(&dir.join("patches/saxpy/0002-more.diff")), 0o600);
}

/// `build --target T` builds a target of a source's generation that its
/// `targets` do not list; iree-flags, apply and objdiff take the same `--target`.
#[test]
fn every_command_takes_the_target_build_built() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let dump = "module_matmul_dispatch_0_rocm_hsaco_fb.rocmasm";
    std::fs::copy(
        repo().join("tests/corpus/iree/gfx942/matmul.rocmasm"),
        dir.join(dump),
    )
    .unwrap();
    ok(gcn_patch(dir, &["import", dump]));
    let kernel = "matmul_dispatch_0";
    ok(gcn_patch(
        dir,
        &["build", "--out", "out", "--target", "gfx950"],
    ));
    assert!(dir.join("out/gfx950/matmul_dispatch_0.hsaco").is_file());
    let o = ok(gcn_patch(
        dir,
        &["iree-flags", "--out", "out", "--target", "gfx950"],
    ));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "--iree-hal-substitute-executable-object=matmul_dispatch_0=out/gfx950/matmul_dispatch_0.hsaco"
    );
    // Not built for gfx90a yet: the help names the build that makes it.
    let o = gcn_patch(dir, &["iree-flags", "--out", "out", "--target", "gfx90a"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("gcn-patch build --manifest kernels.toml --out out --target gfx90a"),
        "{}",
        stderr(&o)
    );
    let o = ok(gcn_patch(dir, &["apply", kernel, "--target", "gfx950"]));
    assert!(String::from_utf8_lossy(&o.stdout).contains("gfx950"));
    ok(gcn_patch(dir, &["objdiff", kernel, "--target", "gfx950"]));
    ok(gcn_patch(dir, &["edit", kernel, "--target", "gfx950"]));
}

/// objdiff names branch targets by label: an instruction inserted inside a
/// branch's span is exactly one `+` line (the branches around it, whose
/// targets moved, are unchanged), and the label lines show which side of a
/// label it landed on.
#[test]
fn objdiff_shows_labels_and_an_insertion_as_exactly_the_changed_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(
        repo().join("tests/corpus/hip/gfx942/reduce.s"),
        dir.join("reduce.s"),
    )
    .unwrap();
    ok(gcn_patch(dir, &["import", "reduce.s"]));
    let work = edit(dir, "reduce");
    change(
        &work,
        "\tglobal_load_dword v4, v[2:3], off\n.LBB0_2:",
        "\tglobal_load_dword v4, v[2:3], off\n\ts_nop 3\n.LBB0_2:",
    );
    ok(gcn_patch(dir, &["save", "reduce", "nop"]));
    let o = ok(gcn_patch(dir, &["objdiff", "reduce", "--target", "gfx942"]));
    let diff = String::from_utf8_lossy(&o.stdout).into_owned();
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(changed, ["+s_nop 3"], "{diff}");
    insta::assert_snapshot!("objdiff_labels", diff);
}

/// No kernels.toml yet: the help says how to make one (import), not where
/// the Rust API is documented.
#[test]
fn a_missing_manifest_points_to_import() {
    let tmp = tempfile::tempdir().unwrap();
    let o = gcn_patch(tmp.path(), &["check"]);
    assert!(!o.status.success());
    insta::assert_snapshot!("missing_manifest", stderr(&o));
}

/// `imported-from` is written relative to the manifest, whatever path the
/// import was given; a manifest holding an absolute one still reads.
#[test]
fn imported_from_is_relative_to_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("in")).unwrap();
    std::fs::create_dir_all(dir.join("proj")).unwrap();
    let dump = dir.join("in/saxpy.s");
    std::fs::copy(repo().join("tests/corpus/hip/gfx942/saxpy.s"), &dump).unwrap();
    ok(gcn_patch(
        &dir.join("proj"),
        &["import", dump.to_str().unwrap()],
    ));
    let m = read(&dir.join("proj/kernels.toml"));
    assert!(m.contains("imported-from = \"../in/saxpy.s\""), "{m}");
    ok(gcn_patch(
        dir,
        &["import", "in/saxpy.s", "--manifest", "proj/other.toml"],
    ));
    let other = read(&dir.join("proj/other.toml"));
    assert!(
        other.contains("imported-from = \"../in/saxpy.s\""),
        "{other}"
    );
    // Written by an older gcn-patch: absolute.
    std::fs::write(
        dir.join("proj/kernels.toml"),
        m.replace(
            "imported-from = \"../in/saxpy.s\"",
            &format!("imported-from = {:?}", dump.display().to_string()),
        ),
    )
    .unwrap();
    ok(gcn_patch(&dir.join("proj"), &["check", "--no-assemble"]));
    let again = ok(gcn_patch(
        &dir.join("proj"),
        &["import", dump.to_str().unwrap()],
    ));
    assert!(
        stderr(&again).contains("already imported"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn save_widens_context_until_each_hunk_matches_one_place() {
    let tmp = saxpy_project();
    let dir = tmp.path();
    let work = edit(dir, "saxpy");
    // Repetitive code: twelve identical lines before s_endpgm.
    let run = "\ts_nop 0\n".repeat(12);
    change(&work, "\ts_endpgm", &format!("{run}\ts_endpgm"));
    ok(gcn_patch(dir, &["save", "saxpy", "pad"]));
    // Change the 6th of them: 3 lines of context (`s_nop 0` × 7 on the old
    // side) match at six places, so such a hunk would be refused (GP0207).
    let mid = format!(
        "{}\ts_nop 1\n{}",
        "\ts_nop 0\n".repeat(5),
        "\ts_nop 0\n".repeat(6)
    );
    change(&work, &run, &mid);
    let edited = read(&work);
    ok(gcn_patch(dir, &["save", "saxpy", "middle"]));
    let diff = read(&dir.join("patches/saxpy/0002-middle.diff"));
    let context = diff.lines().filter(|l| l.starts_with(' ')).count();
    assert!(context > 6, "context not widened:\n{diff}");
    assert!(diff.contains("+\ts_nop 1"), "{diff}");
    // The saved patches re-apply: a fresh work file is the edited text,
    // and check (every patch applied, assembled) passes.
    ok(gcn_patch(dir, &["edit", "saxpy", "--force"]));
    assert_eq!(read(&work), edited);
    ok(gcn_patch(dir, &["check"]));
}
