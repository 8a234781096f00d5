//! The `gcn-patch` binary as an adversarial user drives it: every bad input
//! exits with status 1 (never a panic), says which file (and line) is wrong
//! and how to fix it, and leaves no output or temp file behind. Real clang-22
//! / ld.lld-22 assemble whatever gets that far.

use crate::common;

use common::corpus;

use std::path::Path;
use std::process::{Command, Output};

fn read(rel: &str) -> String {
    let p = corpus().join(rel);
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run tests/corpus/regen.sh)", p.display()))
}

/// Run gcn-patch in `dir`.
fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run gcn-patch")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Status 1, no panic, and every `needles` in stderr. Returns stderr.
fn fails(o: &Output, what: &str, needles: &[&str]) -> String {
    let e = stderr(o);
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "{what}: panicked:\n{e}"
    );
    assert_eq!(o.status.code(), Some(1), "{what}: exit status:\n{e}");
    assert!(o.stdout.is_empty(), "{what}: printed output on failure");
    for n in needles {
        assert!(e.contains(n), "{what}: expected `{n}` in:\n{e}");
    }
    e
}

/// Sorted names in `dir`.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `text` with `dir` replaced by `[TMP]`, for snapshots.
fn norm(text: &str, dir: &Path) -> String {
    let d = dir.display().to_string();
    let canon = dir
        .canonicalize()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| d.clone());
    text.replace(&canon, "[TMP]").replace(&d, "[TMP]")
}

#[test]
fn files_that_are_not_dumps_fail_without_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("empty.s"), "").unwrap();
    std::fs::write(d.join("blank.s"), "\n \r\n\t\n").unwrap();
    std::fs::write(d.join("garbage.s"), [0xffu8, 0xfe, 0x00, 0x80, 0xc3, 0x28]).unwrap();
    std::fs::create_dir(d.join("dir.s")).unwrap();
    let before = entries(d);
    let mut shown = String::new();
    for (file, expect) in [
        ("empty.s", "is empty"),
        ("blank.s", "is empty"),
        ("garbage.s", "valid UTF-8"),
        ("dir.s", "cannot read"),
        ("missing.s", "No such file"),
    ] {
        let o = run(d, &["retarget", file, "--target", "gfx942"]);
        let e = fails(&o, &format!("retarget {file}"), &[file, expect, "help:"]);
        let o = run(
            d,
            &["assemble", file, "--target", "gfx942", "-o", "out.hsaco"],
        );
        fails(&o, &format!("assemble {file}"), &[file, expect, "help:"]);
        shown.push_str(&e);
    }
    assert_eq!(entries(d), before, "files left behind");
    insta::assert_snapshot!(norm(&shown, d));
}

/// A dump cut at any ~50th line never becomes a code object: the error
/// names the file and the line where the input ends.
#[test]
fn truncated_dumps_fail_with_a_location_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut first = None;
    for (rel, step) in [
        ("iree/gfx942/matmul.rocmasm", 50),
        ("hip/gfx942/saxpy.s", 25),
    ] {
        let text = read(rel);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for cut in (step..lines.len()).step_by(step) {
            std::fs::write(d.join("t.s"), lines[..cut].concat()).unwrap();
            let o = run(
                d,
                &["assemble", "t.s", "--target", "gfx942", "-o", "t.hsaco"],
            );
            let what = format!("{rel} cut after line {cut}");
            let e = fails(&o, &what, &["t.s:", "help:"]);
            assert_eq!(entries(d), ["t.s"], "{what}: files left behind");
            if rel.starts_with("iree") && cut == 550 {
                first = Some(e);
            }
        }
        // Control: the whole dump assembles.
        std::fs::write(d.join("t.s"), &text).unwrap();
        let o = run(
            d,
            &["assemble", "t.s", "--target", "gfx942", "-o", "t.hsaco"],
        );
        assert!(o.status.success(), "{rel}: {}", stderr(&o));
        std::fs::remove_file(d.join("t.hsaco")).unwrap();
    }
    insta::assert_snapshot!(norm(&first.expect("cut at 550"), d));
}

#[test]
fn kernel_and_metadata_blocks_must_both_be_there() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = read("hip/gfx942/saxpy.s");
    let md = text.find("\t.amdgpu_metadata").expect("metadata");
    let kd = text.find("\t.amdhsa_kernel").expect("descriptor");
    let end = text.find(".end_amdhsa_kernel").expect("end") + ".end_amdhsa_kernel\n".len();
    std::fs::write(d.join("nometa.s"), &text[..md]).unwrap();
    std::fs::write(d.join("nokd.s"), format!("{}{}", &text[..kd], &text[end..])).unwrap();
    std::fs::write(d.join("dup.s"), format!("{text}{text}")).unwrap();
    let o = run(
        d,
        &["assemble", "nometa.s", "-t", "gfx942", "-o", "o.hsaco"],
    );
    let nometa = fails(
        &o,
        "no metadata",
        &["nometa.s:", "`.amdgpu_metadata`", "help:"],
    );
    let o = run(d, &["assemble", "nokd.s", "-t", "gfx942", "-o", "o.hsaco"]);
    let nokd = fails(
        &o,
        "no descriptor",
        &["nokd.s:", "`.amdhsa_kernel`", "help:"],
    );
    // The same kernel twice: reported at the second copy.
    let o = run(d, &["assemble", "dup.s", "-t", "gfx942", "-o", "o.hsaco"]);
    let lines = text.lines().count();
    let kd_line = text[..kd].lines().count() + 1;
    let dup = fails(
        &o,
        "duplicated kernel",
        &[
            "kernel `saxpy` is defined twice",
            &format!("dup.s:{}", lines + kd_line),
            "help:",
        ],
    );
    assert_eq!(entries(d), ["dup.s", "nokd.s", "nometa.s"]);
    insta::assert_snapshot!(format!("{nometa}\n{nokd}\n{dup}"));
}

/// Odd but valid text assembles: CRLF line ends, unicode and very long comment lines.
#[test]
fn crlf_unicode_and_long_lines_still_assemble() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = read("hip/gfx942/saxpy.s");
    let variants = [
        ("crlf.s", text.replace('\n', "\r\n")),
        ("unicode.s", format!("; ☃ ünïcødé 日本語 \u{202e}\n{text}")),
        ("long.s", format!("; {}\n{text}", "x".repeat(100_000))),
    ];
    for (name, body) in &variants {
        std::fs::write(d.join(name), body).unwrap();
        let out = format!("{name}.hsaco");
        let o = run(d, &["assemble", name, "-t", "gfx942", "-o", &out]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let bytes = std::fs::read(d.join(&out)).unwrap();
        let h = gcn_embed::elf::read_header(&bytes).expect("an AMDGPU ELF");
        assert_eq!(h.flags().processor().map(|p| p.name), Some("gfx942"));
    }
}

#[test]
fn existing_output_is_replaced_only_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("out.hsaco"), "previous build").unwrap();
    std::fs::copy(corpus().join("hip/gfx942/saxpy.s"), d.join("saxpy.s")).unwrap();
    std::fs::write(d.join("empty.s"), "").unwrap();
    // Fails in clang (gfx9 code for gfx1100), and before clang (empty input).
    for (input, target) in [("saxpy.s", "gfx1100"), ("empty.s", "gfx942")] {
        let o = run(d, &["assemble", input, "-t", target, "-o", "out.hsaco"]);
        fails(&o, input, &[input]);
        assert_eq!(
            std::fs::read_to_string(d.join("out.hsaco")).unwrap(),
            "previous build",
            "{input}: output touched on failure"
        );
        assert_eq!(entries(d), ["empty.s", "out.hsaco", "saxpy.s"]);
    }
    let o = run(
        d,
        &["assemble", "saxpy.s", "-t", "gfx942", "-o", "out.hsaco"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(d.join("out.hsaco")).unwrap();
    assert!(gcn_embed::elf::read_header(&bytes).is_ok(), "not replaced");
    assert_eq!(entries(d), ["empty.s", "out.hsaco", "saxpy.s"]);
}

#[test]
fn unwritable_outputs_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(corpus().join("hip/gfx942/saxpy.s"), d.join("saxpy.s")).unwrap();
    std::fs::create_dir(d.join("outdir")).unwrap();
    std::fs::write(d.join("file"), "x").unwrap();
    let cases = [
        ("outdir", "outdir"),                                 // a directory
        ("file/x.hsaco", "file"),                             // under a regular file
        ("/proc/gcn-patch-qa/x.hsaco", "/proc/gcn-patch-qa"), // cannot be created
    ];
    for (out, named) in cases {
        let o = run(d, &["assemble", "saxpy.s", "-t", "gfx942", "-o", out]);
        fails(&o, out, &[named, "help:"]);
        assert_eq!(entries(d), ["file", "outdir", "saxpy.s"], "{out}");
        assert!(entries(&d.join("outdir")).is_empty(), "{out}");
    }
    // A read-only directory (only meaningful when permissions apply to us).
    let ro = d.join("ro");
    std::fs::create_dir(&ro).unwrap();
    set_mode(&ro, 0o555);
    if std::fs::write(ro.join("probe"), "").is_ok() {
        std::fs::remove_file(ro.join("probe")).unwrap();
    } else {
        let o = run(
            d,
            &["assemble", "saxpy.s", "-t", "gfx942", "-o", "ro/x.hsaco"],
        );
        fails(&o, "read-only dir", &["ro", "help:"]);
        assert!(entries(&ro).is_empty());
    }
    set_mode(&ro, 0o755);
}

#[cfg(unix)]
fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}
#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

#[test]
fn weird_target_strings_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(corpus().join("hip/gfx942/saxpy.s"), d.join("saxpy.s")).unwrap();
    let long = "a".repeat(10_000);
    let mut shown = String::new();
    for t in [
        "gfx",
        ":",
        "gfx942:xnack",
        "gfx942:xnack+:xnack-",
        long.as_str(),
    ] {
        let o = run(d, &["retarget", "saxpy.s", "--target", t]);
        let e = fails(&o, t, &["--target", "invalid target ID"]);
        assert!(
            e.len() < 1000,
            "error echoes the whole input: {} bytes",
            e.len()
        );
        shown.push_str(&e);
    }
    insta::assert_snapshot!(shown);
}

fn project(kernels_toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        corpus().join("hip/gfx942/saxpy.s"),
        dir.path().join("saxpy.s"),
    )
    .unwrap();
    std::fs::write(dir.path().join("kernels.toml"), kernels_toml).unwrap();
    dir
}

fn source(extra: &str) -> String {
    format!(
        "[[kernel]]\nname = \"saxpy\"\n[[kernel.source]]\nasm = \"saxpy.s\"\ntargets = [\"gfx942\"]\n{extra}"
    )
}

#[test]
fn bad_manifests_fail_at_the_manifest_line() {
    let sha = gcn_embed::sha256_hex(read("hip/gfx942/saxpy.s").as_bytes());
    let pinned = |extra: &str| source(&format!("sha256 = \"{sha}\"\n{extra}"));
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "wrong type",
            "[[kernel]]\nname = 5\n".into(),
            vec!["kernels.toml:2", "invalid type"],
        ),
        (
            "unknown key",
            source("colour = \"red\""),
            vec!["kernels.toml:6", "unknown field `colour`"],
        ),
        (
            "duplicate",
            format!("{}{}", source(""), source("")),
            vec!["kernels.toml:7", "declared twice"],
        ),
        (
            "bad sha",
            source("sha256 = \"xyz\""),
            vec!["kernels.toml:6", "64 lowercase hex"],
        ),
        (
            "wrong sha",
            source(&format!("sha256 = \"{}\"", "0".repeat(64))),
            vec!["kernels.toml:6", "changed since", "gcn-patch pin saxpy"],
        ),
        (
            "escaping",
            source("").replace("\"saxpy.s\"", "\"../saxpy.s\""),
            vec!["kernels.toml:4", "escapes"],
        ),
        (
            "symlink",
            source("").replace("\"saxpy.s\"", "\"link.s\""),
            vec!["kernels.toml:4", "symlink"],
        ),
        (
            "bad regex",
            pinned("[[kernel.source.rule]]\ndelete = '(x'\nregex = true"),
            vec!["kernels.toml:7", "invalid regex"],
        ),
        (
            "garbage patch",
            pinned("patches = [\"garbage.diff\"]"),
            vec!["garbage.diff", "UTF-8"],
        ),
        (
            "empty patch",
            pinned("patches = [\"empty.diff\"]"),
            vec!["empty.diff:1", "not a unified diff"],
        ),
        (
            "syntax",
            "[[kernel]\nname =".into(),
            vec!["kernels.toml:1", "invalid manifest"],
        ),
        ("empty", String::new(), vec!["kernels.toml", "no kernel"]),
    ];
    let mut snap = String::new();
    for (what, text, needles) in cases {
        let dir = project(&text);
        let d = dir.path();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", d.join("link.s")).unwrap();
        std::fs::write(d.join("garbage.diff"), [0x80u8, 0xff, 0x00, 0x41]).unwrap();
        std::fs::write(d.join("empty.diff"), "").unwrap();
        let before = entries(d);
        let mut needles = needles;
        needles.push("help:");
        for args in [
            &["check", "--no-assemble"][..],
            &["apply", "saxpy"],
            &["check"],
        ] {
            let o = run(d, args);
            let e = fails(&o, &format!("{what}: {args:?}"), &needles);
            if args == ["check", "--no-assemble"]
                && ["unknown key", "symlink", "bad regex", "empty"].contains(&what)
            {
                snap.push_str(&format!("--- {what}\n{}", norm(&e, d)));
            }
        }
        assert_eq!(entries(d), before, "{what}: files left behind");
    }
    insta::assert_snapshot!(snap);
}

#[test]
fn pin_and_apply_fail_cleanly() {
    let dir = project(&source(""));
    let d = dir.path();
    let manifest = std::fs::read(d.join("kernels.toml")).unwrap();
    let o = run(d, &["pin", "nope"]);
    fails(
        &o,
        "pin unknown kernel",
        &["no kernel `nope`", "kernels.toml", "saxpy", "help:"],
    );
    let o = run(d, &["pin", "saxpy", "--manifest", "missing.toml"]);
    fails(&o, "pin missing manifest", &["missing.toml", "help:"]);
    let o = run(d, &["pin", "saxpy", "--manifest", "."]);
    fails(&o, "pin directory", &["cannot read manifest", "help:"]);
    let o = run(d, &["apply", "saxpy", "--target", "gfx1100"]);
    fails(
        &o,
        "apply other target",
        &["not built for gfx1100", "help:"],
    );
    let o = run(d, &["apply", "saxpy", "--target", "gfx"]);
    fails(&o, "apply bad target", &["invalid target ID `gfx`"]);
    assert_eq!(std::fs::read(d.join("kernels.toml")).unwrap(), manifest);

    // A read-only manifest directory (only meaningful when permissions apply to us).
    set_mode(d, 0o555);
    if std::fs::write(d.join("probe"), "").is_ok() {
        std::fs::remove_file(d.join("probe")).unwrap();
    } else {
        let o = run(d, &["pin", "saxpy"]);
        fails(
            &o,
            "pin read-only",
            &["cannot write", "kernels.toml", "writable"],
        );
        assert_eq!(std::fs::read(d.join("kernels.toml")).unwrap(), manifest);
    }
    set_mode(d, 0o755);
    assert_eq!(entries(d), ["kernels.toml", "saxpy.s"]);
}

/// A patch saved with CRLF line ends does not apply to an LF dump; the
/// error says so instead of only "no line of the context occurs".
#[test]
fn crlf_patch_on_lf_dump_says_why() {
    let text = read("hip/gfx942/saxpy.s");
    let sha = gcn_embed::sha256_hex(text.as_bytes());
    let dir = project(&source(&format!(
        "sha256 = \"{sha}\"\npatches = [\"crlf.diff\"]"
    )));
    let d = dir.path();
    let patch =
        "--- a/saxpy.s\r\n+++ b/saxpy.s\r\n@@ -30,1 +30,2 @@\r\n \ts_endpgm\r\n+\ts_nop 0\r\n";
    std::fs::write(d.join("crlf.diff"), patch).unwrap();
    let o = run(d, &["check", "--no-assemble"]);
    fails(
        &o,
        "crlf patch",
        &[
            "crlf.diff:3",
            "CRLF line ends but the dump has LF",
            "dos2unix",
        ],
    );
    // The same patch with LF line ends applies.
    std::fs::write(d.join("crlf.diff"), patch.replace("\r\n", "\n")).unwrap();
    let o = run(d, &["check", "--no-assemble"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A patch that deletes the metadata block: the error points at the
/// patched result and says that the patches may be the cause.
#[test]
fn patch_removing_the_metadata_is_caught_before_assembly() {
    let text = read("hip/gfx942/saxpy.s");
    let sha = gcn_embed::sha256_hex(text.as_bytes());
    let dir = project(&source(&format!(
        "sha256 = \"{sha}\"\npatches = [\"drop.diff\"]"
    )));
    let d = dir.path();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == ".amdgpu_metadata")
        .expect("metadata");
    let mut patch = format!(
        "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -{},{} +{},0 @@\n",
        start + 1,
        lines.len() - start,
        start
    );
    for l in &lines[start..] {
        patch.push_str(&format!("-{l}\n"));
    }
    std::fs::write(d.join("drop.diff"), patch).unwrap();
    let before = entries(d);
    for args in [&["check", "--no-assemble"][..], &["check"]] {
        let o = run(d, args);
        fails(
            &o,
            "metadata deleted by a patch",
            &[
                &format!("saxpy.s:{start}"),
                "no complete `.amdgpu_metadata`",
                "no patch or rule removes",
            ],
        );
    }
    assert_eq!(entries(d), before);
}
