//! gcn-build as a library, on a small real project (the HIP saxpy/reduce dumps,
//! real clang-22 + ld.lld-22): generated code, determinism, caching, atomicity.

use std::fs;
use std::path::{Path, PathBuf};

use gcn_build::Build;

#[path = "../../tests/support/mod.rs"]
mod support;
use support::{changed_files, repo, tree_snapshot as tree};

fn sha256(path: &Path) -> String {
    gcn_patch::base::hash::sha256_hex(&fs::read(path).unwrap())
}

/// A project with two kernels, each from one gfx11-generic HIP dump, for gfx1100 and gfx11-generic.
fn project(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir.join("asm")).unwrap();
    let mut manifest = String::from("[defaults]\nregisters = \"error\"\n");
    for k in ["saxpy", "reduce"] {
        let src = repo().join(format!("tests/corpus/hip/gfx11-generic/{k}.s"));
        let dst = dir.join(format!("asm/{k}.s"));
        fs::copy(&src, &dst).unwrap();
        manifest.push_str(&format!(
            "\n[[kernel]]\nname = \"{k}\"\n\n[[kernel.source]]\nasm = \"asm/{k}.s\"\nsha256 = \"{}\"\ntargets = [\"gfx1100\", \"gfx11-generic\"]\n",
            sha256(&dst)
        ));
    }
    let path = dir.join("kernels.toml");
    fs::write(&path, manifest).unwrap();
    path
}

fn build(manifest: &Path, out: &Path) -> Result<gcn_build::Output, gcn_build::Error> {
    Build::new()
        .manifest(manifest)
        .out_dir(out)
        .cargo_metadata(false)
        .jobs(2)
        .try_compile()
}

/// Replace every quoted 64-digit hex string by `[sha256]`.
fn redact_hashes(text: &str) -> String {
    text.split('"')
        .map(|part| {
            if part.len() == 64 && part.bytes().all(|b| b.is_ascii_hexdigit()) {
                "[sha256]"
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join("\"")
}

#[test]
fn generated_rust_is_deterministic_and_snapshotted() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (pa, pb) = (
        project(a.path()),
        project(&b.path().join("elsewhere/deeper")),
    );
    let (oa, ob) = (a.path().join("out"), b.path().join("out"));
    let ra = build(&pa, &oa).unwrap_or_else(|e| panic!("{e}"));
    let rb = build(&pb, &ob).unwrap_or_else(|e| panic!("{e}"));
    let (ga, gb) = (
        fs::read_to_string(&ra.generated).unwrap(),
        fs::read_to_string(&rb.generated).unwrap(),
    );
    assert_eq!(ga, gb, "generated Rust depends on the directory");
    assert!(ga.starts_with("// @generated"));
    for (x, y) in ra.objects.iter().zip(&rb.objects) {
        assert_eq!(
            fs::read(&x.path).unwrap(),
            fs::read(&y.path).unwrap(),
            "{} {}",
            x.kernel,
            x.target
        );
    }
    // Hashes depend on the exact LLVM build; the test above already checks they are stable.
    insta::assert_snapshot!(redact_hashes(&ga));
}

#[test]
fn second_build_is_all_cached_and_rewrites_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let out = dir.path().join("out");
    let first = build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.assembled(), 4);
    let stamp = fs::metadata(&first.generated).unwrap().modified().unwrap();
    let second = build(&manifest, &out).unwrap();
    assert_eq!(second.assembled(), 0, "{:?}", second.objects);
    assert_eq!(
        fs::metadata(&second.generated).unwrap().modified().unwrap(),
        stamp,
        "unchanged code was rewritten"
    );
}

#[test]
fn a_second_checkout_builds_from_the_shared_cache_with_no_assembler_run() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared-cache");
    let build_in = |checkout: &str| {
        let root = dir.path().join(checkout);
        let manifest = project(&root);
        Build::new()
            .manifest(&manifest)
            .out_dir(root.join("out"))
            .cargo_metadata(false)
            .shared_cache(&shared)
            .jobs(2)
            .try_compile()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let first = build_in("checkout-a");
    assert_eq!(first.assembled(), 4);
    assert!(first.objects.iter().all(|o| !o.shared_hit));
    // Every object was published to the shared directory, and every job's
    // record beside them (records of another checkout's manifest never
    // match: its directory is in their keys).
    let count = |dir: &Path, ext: &str| {
        fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == ext)
            })
            .count()
    };
    assert_eq!(count(&shared, "hsaco"), 4, "shared cache entries");
    assert_eq!(count(&shared.join("records"), "job"), 4, "shared records");
    let second = build_in("checkout-b");
    assert_eq!(second.assembled(), 0, "{:?}", second.objects);
    assert!(second.objects.iter().all(|o| o.cached && o.shared_hit));
    let shas = |o: &gcn_build::Output| {
        o.objects
            .iter()
            .map(|b| b.sha256.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(shas(&first), shas(&second));
    for o in &second.objects {
        assert_eq!(sha256(&o.path), o.sha256, "{}", o.path.display());
    }
    let report =
        fs::read_to_string(dir.path().join("checkout-b/out/gcn-build/report.txt")).unwrap();
    assert_eq!(
        report
            .lines()
            .filter(|l| l.starts_with("shared-cache "))
            .count(),
        4,
        "{report}"
    );
}

#[test]
fn a_failing_build_leaves_no_generated_code() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let out = dir.path().join("out");
    let ok = build(&manifest, &out).unwrap();
    assert!(ok.generated.exists());
    // The dump changes under its pin: the build must fail and remove the stale generated file.
    let asm = dir.path().join("asm/saxpy.s");
    fs::write(
        &asm,
        fs::read_to_string(&asm).unwrap() + "; edited after pinning\n",
    )
    .unwrap();
    let err = build(&manifest, &out).expect_err("stale pin must fail the build");
    assert!(err.to_string().contains("sha256"), "{err}");
    assert!(!ok.generated.exists(), "stale generated code left behind");
}

#[test]
fn extra_family_target_adds_jobs_of_the_same_generation_only() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let out = dir.path().join("out");
    let r = Build::new()
        .manifest(&manifest)
        .out_dir(&out)
        .cargo_metadata(false)
        .target("gfx110X-all")
        .target("gfx942")
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"));
    let targets: Vec<&str> = r
        .objects
        .iter()
        .filter(|o| o.kernel == "saxpy")
        .map(|o| o.target.as_str())
        .collect();
    assert_eq!(
        targets,
        ["gfx1100", "gfx11-generic", "gfx1101", "gfx1102", "gfx1103"]
    );
}

#[test]
fn a_misspelled_extra_target_is_an_error_naming_the_call_and_the_nearest_names() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let err = Build::new()
        .manifest(&manifest)
        .out_dir(dir.path().join("out"))
        .cargo_metadata(false)
        .target("gfx1101x")
        .try_compile()
        .expect_err("unknown target");
    let text = err.to_string();
    assert!(
        text.contains("gcn_build::Build::target(\"gfx1101x\")"),
        "{text}"
    );
    assert!(text.contains("did you mean gfx1101"), "{text}");
    assert!(!dir.path().join("out/gcn_kernels.rs").exists());
}

#[test]
fn outside_a_build_script_without_out_dir_says_how_to_fix_it() {
    // Cargo sets OUT_DIR only for build scripts; integration tests do not have it.
    assert!(std::env::var_os("OUT_DIR").is_none());
    let err = Build::new()
        .manifest("kernels.toml")
        .cargo_metadata(false)
        .try_compile()
        .expect_err("no OUT_DIR");
    let text = err.to_string();
    assert!(
        text.contains("OUT_DIR is not set") && text.contains(".out_dir("),
        "{text}"
    );
    insta::assert_snapshot!("out_dir_not_set", text);
}

/// A rule deleting the wait before a load's result is used: gcn-build fails
/// with the same hazard diagnostic as `gcn-patch check`, naming the rule's
/// kernel and the read; `hazards = "warn"` lets it build.
#[test]
fn a_wait_counter_hazard_fails_the_build_unless_warned() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("asm")).unwrap();
    let dst = dir.path().join("asm/saxpy.s");
    fs::copy(repo().join("tests/corpus/hip/gfx11-generic/saxpy.s"), &dst).unwrap();
    let manifest = |keys: &str| {
        format!(
            "[[kernel]]\nname = \"saxpy\"\n{keys}\n[[kernel.source]]\nasm = \"asm/saxpy.s\"\nsha256 = \"{}\"\ntargets = [\"gfx1100\"]\n\n[[kernel.source.rule]]\ndelete = \"s_waitcnt vmcnt(0)\"\n",
            sha256(&dst)
        )
    };
    let path = dir.path().join("kernels.toml");
    fs::write(&path, manifest("")).unwrap();
    let err = build(&path, &dir.path().join("out")).expect_err("hazard must fail the build");
    let text = err.to_string();
    assert!(
        text.contains("is read before the `global_load_b32`"),
        "{text}"
    );
    assert!(text.contains("insert `s_waitcnt vmcnt(0)`"), "{text}");
    fs::write(&path, manifest("hazards = \"warn\"\n")).unwrap();
    build(&path, &dir.path().join("out")).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_build_writes_kernels_lock_when_asked_and_locked_fails_with_a_diff_after_a_change() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(tmp.path());
    let lock = tmp.path().join("kernels.lock");
    let locked = |yes: bool| {
        Build::new()
            .manifest(&manifest)
            .out_dir(tmp.path().join("out"))
            .cargo_metadata(false)
            .jobs(2)
            .locked(yes)
            .write_lock(true)
            .try_compile()
    };
    // No lock yet: a locked build has nothing to reproduce.
    let err = locked(true).unwrap_err();
    assert_eq!(err.codes(), [gcn_build::Code::LockMissing], "{err}");
    let err = err.rendered();
    assert!(
        err.contains("locked build (`Build::locked`, GCN_BUILD_LOCKED): there is no `"),
        "{err}"
    );
    assert!(!lock.exists());
    assert_eq!(
        locked(false).unwrap().lock,
        gcn_build::LockOutcome::Written(lock.clone())
    );
    let text = fs::read_to_string(&lock).unwrap();
    assert_eq!(text.matches("[[object]]").count(), 4, "{text}");
    assert_eq!(
        locked(true).unwrap().lock,
        gcn_build::LockOutcome::Reproduced(lock.clone())
    );
    // Change a dump (re-pinned): the locked build lists the changed entries.
    let asm = tmp.path().join("asm/saxpy.s");
    let mut src = fs::read_to_string(&asm).unwrap();
    src = src.replacen("s_endpgm", "s_nop 0\n\ts_endpgm", 1);
    fs::write(&asm, &src).unwrap();
    let m = fs::read_to_string(&manifest).unwrap();
    let old = m
        .lines()
        .find(|l| l.starts_with("sha256") && m.contains("asm/saxpy.s"))
        .unwrap()
        .to_string();
    fs::write(
        &manifest,
        m.replacen(&old, &format!("sha256 = \"{}\"", sha256(&asm)), 1),
    )
    .unwrap();
    let err = locked(true).unwrap_err();
    assert_eq!(err.codes(), [gcn_build::Code::LockMismatch], "{err}");
    let err = err.rendered();
    assert!(err.contains("does not reproduce"), "{err}");
    assert!(
        err.contains("kernel `saxpy` for gfx1100: patched asm sha256"),
        "{err}"
    );
    assert!(!err.contains("kernel `reduce`"), "{err}");
    assert_eq!(fs::read_to_string(&lock).unwrap(), text);
}

/// Unasked, a build writes nothing beside the manifest (only into its
/// output directory); asked, it writes the lock, except in a packaged copy
/// (here: `cargo package`'s `Cargo.toml.orig` beside the manifest), where
/// the request is refused and the outcome says why.
#[test]
fn the_lock_is_written_only_when_asked_and_never_in_a_packaged_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let manifest = project(&src);
    let before = tree(&src);
    let out = tmp.path().join("out");
    let r = build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.lock, gcn_build::LockOutcome::NotRequested);
    let changed = changed_files(&before, &tree(&src));
    assert_eq!(
        changed,
        Vec::<String>::new(),
        "an unasked build wrote beside the manifest"
    );

    fs::write(src.join("Cargo.toml.orig"), "[package]\n").unwrap();
    let before = tree(&src);
    let r = Build::new()
        .manifest(&manifest)
        .out_dir(&out)
        .cargo_metadata(false)
        .write_lock(true)
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"));
    let gcn_build::LockOutcome::Refused(why) = &r.lock else {
        panic!("a packaged copy got a lock: {:?}", r.lock)
    };
    assert!(
        why.contains("Cargo.toml.orig") && why.contains("not a local checkout"),
        "{why}"
    );
    let changed = changed_files(&before, &tree(&src));
    assert_eq!(
        changed,
        Vec::<String>::new(),
        "a packaged copy was written to"
    );
}

/// `try_compile`'s error holds the typed diagnostics (not only their text):
/// a stale pin is an error located at the manifest's `sha256` line.
#[test]
fn try_compile_returns_typed_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let asm = dir.path().join("asm/reduce.s");
    fs::write(&asm, fs::read_to_string(&asm).unwrap() + "; edited\n").unwrap();
    let err = build(&manifest, &dir.path().join("out")).expect_err("stale pin");
    let d = &err.diagnostics()[0];
    assert_eq!(d.severity, gcn_patch::base::diag::Severity::Error);
    assert!(d.message.contains("asm/reduce.s` changed"), "{d:?}");
    let at = d.location.as_ref().expect("the stale pin has a location");
    assert!(at.file.ends_with("kernels.toml"), "{at:?}");
    assert_eq!(at.label.as_deref(), Some("pinned sha256"), "{at:?}");
    assert_eq!(err.messages()[0], d.message);
    assert_eq!(err.into_diagnostics().0.len(), 1);
}

/// The child half of [`quiet_when_cargo_metadata_is_off`]: a whole build,
/// run in a process of its own so that its standard output can be read
/// (the test harness captures a test's `println!` in-process).
#[test]
#[ignore = "the child process of quiet_when_cargo_metadata_is_off, which runs it"]
fn quiet_build_child() {
    let dir = std::env::var_os("GCN_BUILD_TEST_QUIET_DIR")
        .map(PathBuf::from)
        .expect(
            "run by quiet_when_cargo_metadata_is_off (GCN_BUILD_TEST_QUIET_DIR names its project)",
        );
    let manifest = project(&dir);
    let quiet = std::env::var("GCN_BUILD_TEST_QUIET").unwrap() == "1";
    let mut b = Build::new();
    b.manifest(&manifest).out_dir(dir.join("out")).jobs(2);
    if quiet {
        b.cargo_metadata(false);
    } else {
        b.cargo_metadata(true);
    }
    b.try_compile().unwrap_or_else(|e| panic!("{e}"));
}

/// With `cargo_metadata(false)` a build prints nothing at all (no
/// `cargo:` line, no status line); with it on, both.
#[test]
fn quiet_when_cargo_metadata_is_off() {
    let run = |quiet: bool| {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "quiet_build_child", "--ignored", "--nocapture"])
            .env("GCN_BUILD_TEST_QUIET_DIR", dir.path())
            .env("GCN_BUILD_TEST_QUIET", if quiet { "1" } else { "0" })
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("1 passed"),
            "the child test did not run:\n{stdout}"
        );
        stdout
            .lines()
            .filter(|l| l.starts_with("gcn-build") || l.starts_with("cargo:"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(run(true), Vec::<String>::new());
    let loud = run(false);
    assert!(
        loud.iter()
            .any(|l| l.starts_with("gcn-build: 4 code objects, 4 assembled")),
        "{loud:#?}"
    );
    assert!(
        loud.iter()
            .any(|l| l.starts_with("cargo:rerun-if-changed=")),
        "{loud:#?}"
    );
}

/// A rerun of the build script starts no toolchain probe while the tools
/// are the same files (their answers are remembered in
/// `OUT_DIR/gcn-build/toolchain.txt`), also when every object is
/// reassembled. clang is a script that logs its arguments and runs the
/// real clang.
#[test]
fn a_rerun_starts_no_toolchain_probe() {
    let tc = gcn_patch::stage::toolchain::Toolchain::find(&Default::default(), &|k| {
        std::env::var(k).ok()
    })
    .unwrap_or_else(|d| panic!("{d}"));
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let log = dir.path().join("clang-runs.log");
    let wrapper = dir.path().join("bin/clang");
    fs::create_dir_all(wrapper.parent().unwrap()).unwrap();
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            tc.clang.canonicalize().unwrap().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("out");
    let run = || {
        Build::new()
            .manifest(&manifest)
            .out_dir(&out)
            .clang(&wrapper)
            .lld(&tc.lld)
            .cargo_metadata(false)
            .jobs(2)
            .try_compile()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let probes = || {
        fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| matches!(*l, "--version" | "-print-targets" | "--print-targets"))
            .count()
    };
    assert_eq!(run().assembled(), 4);
    let first = probes();
    assert!(first >= 2, "the first run probes clang: {first}");
    assert!(out.join("gcn-build/toolchain.txt").is_file());
    assert_eq!(run().assembled(), 0);
    assert_eq!(probes(), first, "a cached rerun probed again");
    fs::remove_dir_all(out.join("gcn-build/cache")).unwrap();
    assert_eq!(run().assembled(), 4);
    assert_eq!(
        probes(),
        first,
        "a rerun assembling everything probed again"
    );
}

/// gcn-build's dependency graph holds nothing only the command line or
/// `lift`/`import` need: they sit behind gcn-patch features (`cli`, `lift`)
/// that gcn-build does not enable.
#[test]
fn the_build_dependency_graph_has_no_cli_or_lift_crates() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "gcn-build",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(names.contains(&"gcn-patch"), "{tree}");
    for unwanted in [
        "clap",
        "clap-markdown",
        "gcn-emu",
        "half",
        "rmpv",
        "ruzstd",
        "miniz_oxide",
        "serde_json",
        "walkdir",
    ] {
        assert!(
            !names.contains(&unwanted),
            "`{unwanted}` in gcn-build's graph:\n{tree}"
        );
    }
}

/// `registers = "update"` rewrites the counts on every build: Cargo is shown
/// one note for the build, naming the kernel's targets and the `gcn-patch
/// accept` command, while `notes.txt` (and `Output::notes`) keep each job's
/// notes in full.
#[test]
fn register_updates_are_one_cargo_note_that_names_accept() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(tmp.path());
    // A patch that uses v40 in saxpy, for both targets.
    let text = fs::read_to_string(&manifest).unwrap().replacen(
        "registers = \"error\"",
        "registers = \"update\"",
        1,
    );
    let text = text.replacen(
        "targets = [\"gfx1100\", \"gfx11-generic\"]\n",
        "targets = [\"gfx1100\", \"gfx11-generic\"]\n\n[[kernel.source.rule]]\ninsert = \"v_mov_b32 v40, 0\"\nbefore = \"s_endpgm\"\n",
        1,
    );
    fs::write(&manifest, text).unwrap();
    let out = build(&manifest, &tmp.path().join("out")).unwrap_or_else(|e| panic!("{e}"));
    let updates = |notes: &[String]| notes.iter().filter(|n| n.contains("[GP0412]")).count();
    assert_eq!(updates(&out.notes), 2, "{:#?}", out.notes);
    assert_eq!(updates(&out.shown), 1, "{:#?}", out.shown);
    let note = out.shown.iter().find(|n| n.contains("[GP0412]")).unwrap();
    assert!(
        note.contains("kernel `saxpy` for gfx1100, gfx11-generic"),
        "{note}"
    );
    assert!(note.contains("`gcn-patch accept saxpy`"), "{note}");
    assert!(
        !out.shown.iter().any(|n| n.starts_with("note[GP0413]")),
        "occupancy folded into the one note: {:#?}",
        out.shown
    );
}
