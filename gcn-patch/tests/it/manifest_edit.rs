//! `kernels.toml` is the user's file: `import`, `pin`, `save` and `drop`
//! edit it key by key (toml_edit) and leave every comment, blank line, key
//! order and quoting style as written. Each step's manifest is a snapshot.

use crate::common;

use std::path::Path;

use common::{ok, run_cli, stderr};

/// A hand-written manifest: a header, `[defaults]` with comments, a kernel
/// with a stale pin and a commented, oddly spaced source, then a second
/// kernel with a comment above it (where `import` must not put the first
/// kernel's new source).
const HAND_WRITTEN: &str = r#"# Our kernels. Keep this header.
#   (gcn-patch edits this file; it must keep these comments.)

[defaults]
targets = ["gfx942"]      # MI300 only for now
hazards = 'error'         # single quotes stay single

# --- saxpy -------------------------------------------------------------
[[kernel]]
name = "saxpy"            # the HIP one

[[kernel.source]]
asm    = "asm/gfx942/saxpy.s"   # dumped with hipcc --save-temps
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"  # stale on purpose
targets = [ "gfx942" ]
symbols = ["saxpy"]       # what import compares to join a new processor's dump

# --- reduce (below saxpy on purpose) -------------------------------------
[[kernel]]
name = "reduce"

[[kernel.source]]
asm = "asm/gfx942/reduce.s"
targets = ["gfx942"]      # no pin: hand-written asm

# trailing comment of the file
"#;

fn read(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("kernels.toml")).unwrap()
}

#[test]
fn comments_and_layout_survive_import_pin_save_and_drop() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hip = common::repo().join("tests/corpus/hip");
    std::fs::create_dir_all(dir.join("asm/gfx942")).unwrap();
    std::fs::create_dir_all(dir.join("in")).unwrap();
    for f in ["saxpy.s", "reduce.s"] {
        std::fs::copy(hip.join("gfx942").join(f), dir.join("asm/gfx942").join(f)).unwrap();
    }
    std::fs::copy(
        hip.join("gfx1100/saxpy.s"),
        dir.join("in/saxpy-hip-amdgcn-amd-amdhsa-gfx1100.s"),
    )
    .unwrap();
    std::fs::copy(hip.join("gfx1100/reduce.s"), dir.join("in/other.s")).unwrap();
    std::fs::write(dir.join("kernels.toml"), HAND_WRITTEN).unwrap();

    // import: saxpy's gfx1100 dump becomes its second source (before the
    // `reduce` comment), `other` a new kernel at the end; nothing else moves.
    let o = ok(run_cli(
        dir,
        &[
            "import",
            "-v",
            "in/saxpy-hip-amdgcn-amd-amdhsa-gfx1100.s",
            "in/other.s",
        ],
    ));
    assert!(
        stderr(&o).contains("as a new source of kernel `saxpy`"),
        "{}",
        stderr(&o)
    );
    let imported = read(dir);
    assert!(imported.starts_with(HAND_WRITTEN.split("# --- reduce").next().unwrap()));
    insta::assert_snapshot!("after_import", imported);

    // pin: the stale value replaced in place (its comment kept); the
    // unpinned source of `reduce` gets a pin right after its `asm`.
    ok(run_cli(dir, &["pin", "saxpy"]));
    ok(run_cli(dir, &["pin", "reduce"]));
    let pinned = read(dir);
    assert!(pinned.contains("  # stale on purpose\n"), "{pinned}");
    insta::assert_snapshot!("after_pin", pinned);

    // save: the edit becomes a patch, appended to the gfx942 source's
    // `patches` (a new key after its pin).
    let work = ok(run_cli(dir, &["edit", "saxpy"]));
    let work = dir.join(String::from_utf8_lossy(&work.stdout).trim());
    let text = std::fs::read_to_string(&work).unwrap();
    std::fs::write(
        &work,
        text.replacen("\ts_endpgm", "\ts_setprio 1\n\ts_endpgm", 1),
    )
    .unwrap();
    ok(run_cli(dir, &["save", "saxpy", "raise priority"]));
    let saved = read(dir);
    insta::assert_snapshot!("after_save", saved);

    // drop: the patch and its key go; the file is what pin left.
    ok(run_cli(dir, &["drop", "saxpy", "raise-priority"]));
    assert_eq!(read(dir), pinned);
    ok(run_cli(dir, &["check", "--no-assemble"]));
}

/// The same on a CRLF manifest: edited lines keep CRLF.
#[test]
fn a_crlf_manifest_stays_crlf() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hip = common::repo().join("tests/corpus/hip");
    std::fs::create_dir_all(dir.join("asm/gfx942")).unwrap();
    std::fs::create_dir_all(dir.join("in")).unwrap();
    for f in ["saxpy.s", "reduce.s"] {
        std::fs::copy(hip.join("gfx942").join(f), dir.join("asm/gfx942").join(f)).unwrap();
    }
    std::fs::copy(hip.join("gfx1100/saxpy.s"), dir.join("in/saxpy-gfx1100.s")).unwrap();
    std::fs::write(dir.join("kernels.toml"), HAND_WRITTEN.replace('\n', "\r\n")).unwrap();
    ok(run_cli(dir, &["pin", "saxpy"]));
    ok(run_cli(dir, &["import", "in/saxpy-gfx1100.s"]));
    let text = read(dir);
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count();
    assert_eq!(crlf, lf, "{text:?}");
    insta::assert_snapshot!("crlf", text.replace("\r\n", "⏎\n"));
}
