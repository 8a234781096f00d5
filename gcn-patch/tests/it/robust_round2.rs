//! What a hostile or unlucky user still broke (round 2): outputs that are
//! not regular files, manifests behind symlinks, silent successes on bad
//! input, `pin` repairing the pin it is asked to write. Real clang-22 /
//! ld.lld-22 build whatever gets that far.

use crate::common;

use common::corpus;

use std::path::Path;
use std::process::{Command, Output};

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

fn ok(o: &Output, what: &str) {
    assert!(o.status.success(), "{what} failed:\n{}", stderr(o));
}

/// Status 1, no panic, and every `needles` in stderr. Returns stderr.
fn fails(o: &Output, what: &str, needles: &[&str]) -> String {
    let e = stderr(o);
    assert!(!e.contains("panicked"), "{what}: panicked:\n{e}");
    assert_eq!(o.status.code(), Some(1), "{what}: exit status:\n{e}");
    for n in needles {
        assert!(e.contains(n), "{what}: expected `{n}` in:\n{e}");
    }
    e
}

fn is_elf(bytes: &[u8]) -> bool {
    gcn_embed::elf::read_header(bytes).is_ok()
}

fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
}

/// A project: saxpy.s and `kernels.toml` (`manifest`), in a temp dir.
fn project(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        corpus().join("hip/gfx942/saxpy.s"),
        dir.path().join("saxpy.s"),
    )
    .unwrap();
    std::fs::write(dir.path().join("kernels.toml"), manifest).unwrap();
    dir
}

fn saxpy_sha() -> String {
    gcn_embed::sha256_hex(&std::fs::read(corpus().join("hip/gfx942/saxpy.s")).unwrap())
}

fn saxpy(extra: &str) -> String {
    format!(
        "[[kernel]]\nname = \"saxpy\"\n[[kernel.source]]\nasm = \"saxpy.s\"\ntargets = [\"gfx942\"]\n{extra}"
    )
}

/// `-o` naming a symlink (and a chain of them): the final target gets the
/// code object, every link stays a link, nothing else appears.
#[cfg(unix)]
#[test]
fn output_through_a_symlink_updates_its_target() {
    let dir = project("");
    let d = dir.path();
    std::fs::create_dir(d.join("store")).unwrap();
    std::fs::write(d.join("store/real.hsaco"), "old bytes").unwrap();
    std::os::unix::fs::symlink("store/real.hsaco", d.join("link.hsaco")).unwrap();
    std::os::unix::fs::symlink(d.join("link.hsaco"), d.join("link2.hsaco")).unwrap();
    // A dangling link: its target is created.
    std::os::unix::fs::symlink("store/new.hsaco", d.join("dangling.hsaco")).unwrap();
    for link in ["link.hsaco", "link2.hsaco", "dangling.hsaco"] {
        std::fs::write(d.join("store/real.hsaco"), "old bytes").unwrap();
        let o = run(d, &["assemble", "saxpy.s", "-t", "gfx942", "-o", link]);
        ok(&o, link);
        assert!(is_symlink(&d.join(link)), "{link} was replaced by a file");
        let real = if link == "dangling.hsaco" {
            "store/new.hsaco"
        } else {
            "store/real.hsaco"
        };
        assert!(
            is_elf(&std::fs::read(d.join(real)).unwrap()),
            "{link}: {real} did not get the code object"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(d.join("store"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["new.hsaco", "real.hsaco"], "temp files left behind");
    // `lift -o` goes through the same writer.
    std::fs::write(d.join("store/lifted.s"), "old").unwrap();
    std::os::unix::fs::symlink("store/lifted.s", d.join("link.s")).unwrap();
    let o = run(d, &["lift", "store/new.hsaco", "-o", "link.s"]);
    ok(&o, "lift -o link");
    assert!(is_symlink(&d.join("link.s")));
    assert!(std::fs::read_to_string(d.join("store/lifted.s"))
        .unwrap()
        .contains(".amdhsa_kernel"));
}

/// `-o` naming a FIFO or a character device: written into, never replaced
/// (as root, `-o /dev/null` used to replace /dev/null with a regular file).
#[cfg(unix)]
#[test]
fn output_into_a_fifo_or_device_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = project("");
    let d = dir.path();
    let fifo = d.join("pipe");
    let st = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(st.success(), "mkfifo failed");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = run(d, &["assemble", "saxpy.s", "-t", "gfx942", "-o", "pipe"]);
    ok(&o, "-o fifo");
    // Checked before joining: a replaced FIFO leaves the reader blocked.
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced by a file"
    );
    let got = reader.join().unwrap();
    assert!(is_elf(&got), "the reader did not get the code object");

    // A character device: the null device made here (as root), else
    // /dev/null itself (unprivileged, a regression cannot replace it; it
    // fails to create its temp file in /dev instead, which fails the test).
    let node = d.join("null");
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let dev = if made {
        node
    } else {
        std::path::PathBuf::from("/dev/null")
    };
    let o = run(
        d,
        &[
            "assemble",
            "saxpy.s",
            "-t",
            "gfx942",
            "-o",
            dev.to_str().unwrap(),
        ],
    );
    ok(&o, "-o device");
    let m = std::fs::symlink_metadata(&dev).unwrap();
    assert!(m.file_type().is_char_device(), "{} replaced", dev.display());
    assert_eq!(m.len(), 0);
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected = vec!["kernels.toml", "pipe", "saxpy.s"];
    if made {
        expected.insert(1, "null");
    }
    assert_eq!(names, expected, "temp files left behind");
}

/// `-o` naming a directory, or a symlink to one: refused up front with a
/// clear error, the directory untouched.
#[cfg(unix)]
#[test]
fn output_naming_a_directory_is_refused() {
    let dir = project("");
    let d = dir.path();
    std::fs::create_dir(d.join("outdir")).unwrap();
    std::os::unix::fs::symlink("outdir", d.join("dirlink")).unwrap();
    for out in ["outdir", "dirlink"] {
        let o = run(d, &["assemble", "saxpy.s", "-t", "gfx942", "-o", out]);
        fails(&o, out, &[out, "is a directory", "help:"]);
        assert!(std::fs::read_dir(d.join("outdir"))
            .unwrap()
            .next()
            .is_none());
    }
}

/// `pin`, `import`, `edit`/`save` and the lock writer on a manifest (and a
/// lock) that are symlinks: the link's target is updated, the link stays.
#[cfg(unix)]
#[test]
fn manifest_and_lock_behind_symlinks_are_updated_in_place() {
    let dir = project("");
    let d = dir.path();
    std::fs::remove_file(d.join("kernels.toml")).unwrap();
    std::fs::create_dir(d.join("real")).unwrap();
    std::fs::write(d.join("real/kernels.toml"), saxpy("patches = []\n")).unwrap();
    std::os::unix::fs::symlink("real/kernels.toml", d.join("kernels.toml")).unwrap();
    let real = |f: &str| std::fs::read_to_string(d.join("real").join(f)).unwrap();

    let o = run(d, &["pin", "saxpy"]);
    ok(&o, "pin");
    assert!(is_symlink(&d.join("kernels.toml")), "pin replaced the link");
    assert!(
        real("kernels.toml").contains(&saxpy_sha()),
        "target not pinned"
    );

    std::fs::copy(corpus().join("hip/gfx942/reduce.s"), d.join("reduce-in.s")).unwrap();
    let o = run(d, &["import", "reduce-in.s"]);
    ok(&o, "import");
    assert!(
        is_symlink(&d.join("kernels.toml")),
        "import replaced the link"
    );
    assert!(
        real("kernels.toml").contains("reduce"),
        "target not updated"
    );

    let o = run(d, &["edit", "saxpy"]);
    ok(&o, "edit");
    let work = String::from_utf8(o.stdout).unwrap();
    let work = d.join(work.trim());
    let text = std::fs::read_to_string(&work).unwrap();
    std::fs::write(&work, text.replacen("s_endpgm", "s_nop 0\n\ts_endpgm", 1)).unwrap();
    let o = run(d, &["save", "saxpy", "nop"]);
    ok(&o, "save");
    assert!(
        is_symlink(&d.join("kernels.toml")),
        "save replaced the link"
    );
    assert!(
        real("kernels.toml").contains("0001-nop.diff"),
        "target not updated"
    );

    // A lock from a first build, moved behind a link; the next build
    // (after `save` changed the code) rewrites it.
    let o = run(d, &["build", "--out", "out", "-j", "1"]);
    ok(&o, "build");
    let lock = std::fs::read_to_string(d.join("real/kernels.lock"))
        .or_else(|_| std::fs::read_to_string(d.join("kernels.lock")))
        .unwrap();
    let _ = std::fs::remove_file(d.join("kernels.lock"));
    std::fs::write(d.join("real/kernels.lock"), &lock).unwrap();
    std::os::unix::fs::symlink("real/kernels.lock", d.join("kernels.lock")).unwrap();
    let text = real("kernels.toml");
    std::fs::write(
        d.join("real/kernels.toml"),
        text.replace("\"0001-nop.diff\"", "\"patches/saxpy/0001-nop.diff\""),
    )
    .unwrap();
    let o = run(d, &["build", "--out", "out", "-j", "1"]);
    ok(&o, "build");
    assert!(
        is_symlink(&d.join("kernels.lock")),
        "the lock writer replaced the link"
    );
    assert!(
        real("kernels.lock").contains("saxpy"),
        "lock target not written"
    );
}

/// `pin` on a malformed or missing pin repairs it (it used to fail with
/// "sha256 must be 64 lowercase hex digits … help: run `gcn-patch pin`").
#[test]
fn pin_repairs_malformed_and_missing_pins() {
    let sha = saxpy_sha();
    std::fs::create_dir_all(std::env::temp_dir()).unwrap();
    for (what, extra) in [
        ("malformed", "sha256 = \"00\"\npatches = [\"nop.diff\"]\n"),
        (
            "upper case",
            &*format!("sha256 = \"{}\"\n", sha.to_uppercase()),
        ),
        ("missing with patches", "patches = [\"nop.diff\"]\n"),
    ] {
        let dir = project(&saxpy(extra));
        let d = dir.path();
        std::fs::write(d.join("nop.diff"), nop_diff()).unwrap();
        let o = run(d, &["check", "--no-assemble"]);
        fails(&o, what, &["kernels.toml:", "gcn-patch pin saxpy"]);
        let o = run(d, &["pin", "saxpy"]);
        ok(&o, &format!("pin {what}"));
        let text = std::fs::read_to_string(d.join("kernels.toml")).unwrap();
        assert!(
            text.contains(&format!("sha256 = \"{sha}\"")),
            "{what}:\n{text}"
        );
        assert_eq!(text.matches("sha256").count(), 1, "{what}:\n{text}");
        let o = run(d, &["check", "--no-assemble"]);
        ok(&o, &format!("check after pin ({what})"));
    }
}

/// A diff inserting `s_nop 0` before saxpy's `s_endpgm`.
fn nop_diff() -> String {
    let text = std::fs::read_to_string(corpus().join("hip/gfx942/saxpy.s")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.trim() == "s_endpgm")
        .expect("s_endpgm");
    format!(
        "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -{},2 +{},3 @@\n {}\n+\ts_nop 0\n {}\n",
        i,
        i,
        lines[i - 1],
        lines[i]
    )
}

/// A unified diff with a header and no hunk is an error naming the patch
/// file (it used to apply as a no-op, and `check` said ok).
#[test]
fn a_diff_with_no_hunk_is_an_error() {
    let sha = saxpy_sha();
    let dir = project(&saxpy(&format!(
        "sha256 = \"{sha}\"\npatches = [\"empty.diff\"]\n"
    )));
    let d = dir.path();
    std::fs::write(d.join("empty.diff"), "--- a/saxpy.s\n+++ b/saxpy.s\n").unwrap();
    for args in [&["check", "--no-assemble"][..], &["apply", "saxpy"]] {
        let o = run(d, args);
        let e = fails(&o, &args.join(" "), &["empty.diff:2", "no hunk", "help:"]);
        if args[0] == "check" {
            insta::assert_snapshot!(e);
        }
    }
}

/// A kernel whose generated identifier is one of gcn-build's fixed names
/// (`KERNELS`) fails at manifest load, at its line (it used to pass `check`
/// and break the generated Rust with E0428).
#[test]
fn a_kernel_named_like_a_generated_item_is_refused() {
    for name in ["kernels", "KERNELS", "Kernels"] {
        let m = saxpy("").replace("name = \"saxpy\"", &format!("name = \"{name}\""));
        let dir = project(&m);
        let o = run(dir.path(), &["check", "--no-assemble"]);
        let e = fails(
            &o,
            name,
            &["kernels.toml:2", "`pub static KERNELS`", "help: rename"],
        );
        if name == "kernels" {
            insta::assert_snapshot!(e);
        }
    }
}

/// `check` assembles by default, so "ok" means it builds: a gfx942 MFMA
/// dump targeted at gfx1100 passes every static check but cannot assemble
/// (it used to say "ok" unless `--assemble` was given). `--no-assemble`
/// keeps the old, static-only check.
#[test]
fn check_assembles_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(
        corpus().join("iree/gfx942/matmul.rocmasm"),
        d.join("matmul.rocmasm"),
    )
    .unwrap();
    std::fs::write(
        d.join("kernels.toml"),
        "[[kernel]]\nname = \"matmul\"\n[[kernel.source]]\nasm = \"matmul.rocmasm\"\ntargets = [\"gfx1100\"]\n",
    )
    .unwrap();
    let o = run(d, &["check"]);
    fails(
        &o,
        "check",
        &["matmul.rocmasm:", "v_mfma", "gfx1100", "not supported"],
    );
    assert!(!stderr(&o).contains("ok: "), "{}", stderr(&o));
    let o = run(d, &["check", "--no-assemble"]);
    ok(&o, "check --no-assemble");
    assert!(stderr(&o).contains("not assembled: --no-assemble"));
    // The saxpy project: assembled and ok, nothing written next to it.
    let dir = project(&saxpy(""));
    let o = run(dir.path(), &["check"]);
    ok(&o, "check saxpy");
    assert!(stderr(&o).contains("(assembled, linked and verified)"));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["kernels.toml", "saxpy.s"]);
}

/// A typo'd symbol in a patch hunk or a rule is reported at that hunk's or
/// rule's line before linking (ld.lld used to say only "undefined symbol:
/// my_typo_sym >>> referenced by saxpy-gfx942.o:(saxpy)").
#[test]
fn undefined_symbols_are_reported_at_the_line_that_introduced_them() {
    let sha = saxpy_sha();
    let patch = "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -29,2 +29,3 @@\n .LBB0_2:\n+\ts_mov_b32 s2, my_typo_sym\n \ts_endpgm\n";
    let rule = "\n[[kernel.source.rule]]\ninsert = [\"s_add_u32 s3, s3, other_typo@rel32@lo+4\"]\nbefore = \"s_endpgm\"\n";
    let dir = project(&saxpy(&format!(
        "sha256 = \"{sha}\"\npatches = [\"typo.diff\"]\n{rule}"
    )));
    let d = dir.path();
    std::fs::write(d.join("typo.diff"), patch).unwrap();
    let o = run(d, &["check"]);
    let e = fails(
        &o,
        "check",
        &[
            "undefined symbol `my_typo_sym`",
            "typo.diff:5",
            "hunk 1",
            "undefined symbol `other_typo`",
            "rule #1",
        ],
    );
    assert!(!e.contains("ld.lld:"), "reached the linker:\n{e}");
    insta::assert_snapshot!(e);
    // The same through `build`: nothing written.
    let o = run(d, &["build", "--out", "out"]);
    fails(
        &o,
        "build",
        &["undefined symbol `my_typo_sym`", "typo.diff:5"],
    );
    assert!(!d.join("out/gfx942/saxpy.hsaco").exists());
}

/// A 10 MB undefined name is reported at once and shown cut (ld.lld used to
/// spend minutes on it).
#[test]
fn a_huge_undefined_name_is_reported_short() {
    let dir = project("");
    let d = dir.path();
    let name = "x".repeat(10_000_000);
    let text = std::fs::read_to_string(d.join("saxpy.s"))
        .unwrap()
        .replacen(
            "\ts_endpgm",
            &format!("\ts_mov_b32 s2, {name}\n\ts_endpgm"),
            1,
        );
    std::fs::write(d.join("big.s"), text).unwrap();
    let o = run(d, &["assemble", "big.s", "-t", "gfx942", "-o", "big.hsaco"]);
    let e = fails(
        &o,
        "huge name",
        &["undefined symbol `xxxx", "(10000000 bytes)", "big.s:30"],
    );
    assert!(e.len() < 4000, "{} bytes of diagnostics", e.len());
    assert!(!d.join("big.hsaco").exists());
}

/// `import DIR` walks the directory with walkdir, following symlinks: a
/// symlinked subdirectory is imported, and a symlink back to an ancestor is
/// an error naming the loop (the hand-written walk went down the loop until
/// the path grew too long).
#[test]
fn import_of_a_directory_follows_links_and_refuses_a_loop() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    let real = d.join("real");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::copy(
        corpus().join("hip/gfx11-generic/saxpy.s"),
        real.join("saxpy.s"),
    )
    .unwrap();
    std::fs::create_dir_all(d.join("dumps")).unwrap();
    std::os::unix::fs::symlink(&real, d.join("dumps/linked")).unwrap();
    let o = run(d, &["import", "dumps"]);
    ok(&o, "import through a symlinked directory");
    let manifest = std::fs::read_to_string(d.join("kernels.toml")).unwrap();
    assert!(manifest.contains("name = \"saxpy\""), "{manifest}");

    std::os::unix::fs::symlink(d.join("dumps"), real.join("loop")).unwrap();
    let o = run(d, &["import", "--manifest", "other.toml", "dumps"]);
    fails(
        &o,
        "import of a directory with a symlink loop",
        &["cannot read directory", "loop"],
    );
    assert!(!d.join("other.toml").exists());
}
