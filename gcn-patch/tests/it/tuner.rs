//! The tuner's loop outside Cargo (`gcn-patch import`, `build`, `iree-flags`,
//! the lock file) with the real binary, real dumps and the real LLVM 22.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{ok, repo, run_cli as gcn_patch, stderr};

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
    ok(gcn_patch(dir, &["check", "--no-assemble"]));
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

fn iree_compile() -> PathBuf {
    common::required_tool("iree-compile", "pip install iree-base-compiler==3.13.0")
}

/// `iree-compile` of the two-dispatch fixture for gfx942 with `extra` flags.
fn iree(dir: &Path, extra: &[String], out: &str) -> Output {
    Command::new(iree_compile())
        .arg(repo().join("gcn-patch/tests/fixtures/two_dispatch.mlir"))
        .args(["--iree-hal-target-device=hip", "--iree-rocm-target=gfx942"])
        .args(extra)
        .arg("-o")
        .arg(out)
        .current_dir(dir)
        .output()
        .expect("run iree-compile")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The loop a new user runs, for an IREE dump made linked (the default) or
/// with `--iree-hal-link-executables=false`: dump, import, patch, build,
/// --locked, iree-flags, iree-compile substituting every dispatch.
fn iree_loop(linked: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut dump_flags = vec!["--iree-hal-dump-executable-files-to=dump".to_string()];
    if !linked {
        dump_flags.push("--iree-hal-link-executables=false".into());
    }
    let o = iree(dir, &dump_flags, "plain.vmfb");
    assert!(o.status.success(), "{}", stderr(&o));

    ok(gcn_patch(dir, &["import", "dump"]));
    let m = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    let kernels: Vec<&str> = if linked {
        assert!(
            m.contains("iree-executables = [\"two_dispatch_0\", \"two_dispatch_1\"]"),
            "{m}"
        );
        vec!["two_dispatch"]
    } else {
        assert!(m.contains("iree-executables = [\"two_dispatch_1\"]"), "{m}");
        vec!["two_dispatch_0", "two_dispatch_1"]
    };
    for k in &kernels {
        assert!(m.contains(&format!("name = \"{k}\"")), "{m}");
    }

    let b = ok(gcn_patch(dir, &["build", "--out", "out"]));
    let table = String::from_utf8_lossy(&b.stdout).into_owned();
    assert!(table.contains("assembled"), "{table}");
    for e in ["two_dispatch_0", "two_dispatch_1"] {
        assert!(dir.join(format!("out/gfx942/{e}.hsaco")).is_file());
    }
    assert!(dir.join("kernels.lock").is_file());
    // Unchanged tree: --locked passes (from the cache).
    let again = ok(gcn_patch(dir, &["build", "--out", "out", "--locked"]));
    assert!(String::from_utf8_lossy(&again.stdout).contains("cached"));

    // edit, change nothing, save: says so, writes nothing.
    let first = kernels[0];
    let work = ok(gcn_patch(dir, &["edit", first]));
    let work = dir.join(String::from_utf8_lossy(&work.stdout).trim());
    let before = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    let same = ok(gcn_patch(dir, &["save", first, "nothing"]));
    assert!(stderr(&same).contains("no change"), "{}", stderr(&same));
    assert_eq!(
        std::fs::read_to_string(dir.join("kernels.toml")).unwrap(),
        before
    );
    assert!(!dir.join("patches").exists());
    // The edit: one instruction before dispatch 0's s_endpgm.
    let text = std::fs::read_to_string(&work).unwrap();
    std::fs::write(
        &work,
        text.replacen("\ts_endpgm", "\ts_setprio 1\n\ts_endpgm", 1),
    )
    .unwrap();
    let saved = ok(gcn_patch(dir, &["save", first, "raise priority"]));
    assert!(stderr(&saved).contains("+1 -0"), "{}", stderr(&saved));
    let patch = format!("patches/{first}/0001-raise-priority.diff");
    let diff = std::fs::read_to_string(dir.join(&patch)).unwrap();
    assert!(diff.contains("+\ts_setprio 1\n \ts_endpgm"), "{diff}");
    let m = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    assert!(m.contains(&format!("patches = [\"{patch}\"]")), "{m}");

    // objdiff shows exactly the edit.
    let od = ok(gcn_patch(dir, &["objdiff", first, "--target", "gfx942"]));
    let od = String::from_utf8_lossy(&od.stdout).into_owned();
    let changed: Vec<&str> = od
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(changed, ["+s_setprio 1"], "{od}");

    // The patch changed: --locked fails with a per-entry diff and writes nothing.
    let lock_before = std::fs::read_to_string(dir.join("kernels.lock")).unwrap();
    let locked = gcn_patch(dir, &["build", "--out", "out", "--locked"]);
    assert!(!locked.status.success());
    let err = stderr(&locked);
    assert!(
        err.contains("error[GP0116]: --locked: the build does not reproduce"),
        "{err}"
    );
    assert!(
        err.contains(&format!("kernel `{first}` for gfx942: patched asm sha256")),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("kernels.lock")).unwrap(),
        lock_before
    );
    ok(gcn_patch(dir, &["build", "--out", "out"]));
    ok(gcn_patch(dir, &["build", "--out", "out", "--locked"]));

    // iree-compile with the printed flags substitutes every dispatch, no warning.
    let flags = ok(gcn_patch(
        dir,
        &["iree-flags", "--out", "out", "--target", "gfx942"],
    ));
    let flags: Vec<String> = String::from_utf8_lossy(&flags.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(flags.len(), 2, "{flags:?}");
    let o = iree(dir, &flags, "tuned.vmfb");
    let log = stderr(&o);
    assert!(o.status.success(), "{log}");
    assert!(!log.contains("WARNING"), "{log}");
    for e in ["two_dispatch_0", "two_dispatch_1"] {
        assert!(
            log.contains(&format!("hal.executable `{e}` substituted")),
            "{e} not substituted:\n{log}"
        );
    }
    let vmfb = std::fs::read(dir.join("tuned.vmfb")).unwrap();
    for e in ["two_dispatch_0", "two_dispatch_1"] {
        let built = std::fs::read(dir.join(format!("out/gfx942/{e}.hsaco"))).unwrap();
        assert!(
            contains(&vmfb, &built),
            "{e}: the .vmfb lacks the built bytes"
        );
    }
}

#[test]
fn iree_loop_linked() {
    iree_loop(true);
}

#[test]
fn iree_loop_unlinked() {
    iree_loop(false);
}

#[test]
fn iree_flags_for_a_manifest_without_iree_executables_is_an_error() {
    let (tmp, _) = workspace(&["hip/gfx942/saxpy.s"]);
    let dir = tmp.path();
    ok(gcn_patch(dir, &["import", "in"]));
    let o = gcn_patch(dir, &["iree-flags", "--out", "out", "--target", "gfx942"]);
    assert!(!o.status.success());
    insta::assert_snapshot!("iree_flags_without_iree", stderr(&o));
}

#[test]
fn edit_save_and_objdiff_errors() {
    let (tmp, _) = workspace(&["hip/gfx942/saxpy.s"]);
    let dir = tmp.path();
    ok(gcn_patch(dir, &["import", "in"]));
    let o = gcn_patch(dir, &["edit", "nope"]);
    assert!(!o.status.success());
    insta::assert_snapshot!("edit_unknown_kernel", stderr(&o));

    // A work file the assembler rejects is not saved.
    let work = ok(gcn_patch(dir, &["edit", "gfx942_saxpy"]));
    let work = dir.join(String::from_utf8_lossy(&work.stdout).trim());
    let text = std::fs::read_to_string(&work).unwrap();
    std::fs::write(
        &work,
        text.replacen("\ts_endpgm", "\ts_endpgm v0, v1, v2, v3", 1),
    )
    .unwrap();
    let manifest = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    let o = gcn_patch(dir, &["save", "gfx942_saxpy", "broken"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("nothing was saved"), "{err}");
    assert!(err.contains("gcn-patch save gfx942_saxpy broken"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("kernels.toml")).unwrap(),
        manifest
    );
    assert!(!dir.join("patches/gfx942_saxpy/0001-broken.diff").exists());

    let o = gcn_patch(dir, &["objdiff", "gfx942_saxpy", "--target", "gfx1100"]);
    assert!(!o.status.success());
    insta::assert_snapshot!("objdiff_target_not_built", stderr(&o));
}

/// The engine reports every finished job once, counting up to the total, with
/// whether it was assembled or came from the cache: the CLI's terminal
/// progress line is drawn from these reports.
#[test]
fn build_progress_reports_every_job_once() {
    use gcn_patch::base::jobs;
    use gcn_patch::config::manifest::Manifest;
    use gcn_patch::pipeline::{self, build, cache};
    use gcn_patch::stage::toolchain;
    use std::sync::Mutex;

    let (tmp, _) = workspace(&["hip/gfx942/saxpy.s", "hip/gfx942/reduce.s"]);
    let dir = tmp.path();
    ok(gcn_patch(dir, &["import", "in"]));
    let m = Manifest::load(&dir.join("kernels.toml")).unwrap_or_else(|e| panic!("{e}"));
    let plan = pipeline::plan(&m, &[]).unwrap_or_else(|e| panic!("{e}"));
    let tc = toolchain::Toolchain::find(&Default::default(), &|v| std::env::var(v).ok())
        .unwrap_or_else(|e| panic!("{e}"));
    /// (done, total, "kernel target", assembled)
    type Event = (usize, usize, String, Option<bool>);
    let events: Mutex<Vec<Event>> = Mutex::new(vec![]);
    let record = |p: build::Progress<'_>| {
        let assembled = match p.outcome {
            gcn_patch::ops::progress::Outcome::Built(s) => Some(s == build::State::Assembled),
            _ => None,
        };
        events
            .lock()
            .unwrap()
            .push((p.done, p.total, p.item.to_string(), assembled))
    };
    let opts = build::BuildOptions {
        toolchain: &tc,
        cache: cache::ObjectCache {
            local: dir.join("out/cache"),
            shared: None,
        },
        work_dir: dir.join("out/work"),
        max_jobs: 2,
        tokens: &jobs::Unlimited,
        progress: Some(&record),
        fingerprints: None,
    };
    let n = plan.jobs.len();
    assert!(n >= 2, "two kernels, at least one target each");
    for expect_assembled in [true, false] {
        events.lock().unwrap().clear();
        build::build_all(&m, &plan, &opts).unwrap_or_else(|e| panic!("{e}"));
        let mut seen = events.lock().unwrap().clone();
        seen.sort();
        let dones: Vec<usize> = seen.iter().map(|e| e.0).collect();
        assert_eq!(dones, (1..=n).collect::<Vec<_>>(), "{seen:?}");
        assert!(seen.iter().all(|e| e.1 == n), "{seen:?}");
        assert!(
            seen.iter().all(|e| e.3 == Some(expect_assembled)),
            "first build assembles, second is cached: {seen:?}"
        );
        let mut labels: Vec<&String> = seen.iter().map(|e| &e.2).collect();
        labels.sort();
        labels.dedup();
        assert_eq!(labels.len(), n, "each job reported once: {seen:?}");
    }
}

/// The code objects a `build --out` wrote, by path relative to the output dir
/// (the engine's own state directory left out).
fn outputs(out: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(out)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(out).unwrap().display().to_string();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .filter(|(rel, _)| !rel.starts_with(".gcn-patch"))
        .collect()
}

/// A build killed part-way, then run again, installs the complete, correct
/// set of code objects; two builds into one output directory at once both
/// succeed and leave that same set.
#[test]
fn interrupted_and_concurrent_builds_leave_complete_correct_outputs() {
    let (tmp, _) = workspace(&[
        "hip/gfx942/saxpy.s",
        "hip/gfx942/reduce.s",
        "iree/gfx942/matmul.rocmasm",
        "iree/gfx942/conv.rocmasm",
    ]);
    let dir = tmp.path();
    ok(gcn_patch(dir, &["import", "in"]));
    // Reference: an undisturbed build.
    ok(gcn_patch(dir, &["build", "--out", "ref"]));
    let reference = outputs(&dir.join("ref"));
    assert!(reference.len() >= 4, "{:?}", reference.keys());

    // Interrupted: kill it as soon as it has started, then build again.
    let mut child = Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(["build", "--out", "killed", "-j", "1"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(150));
    let _ = child.kill();
    let _ = child.wait();
    ok(gcn_patch(dir, &["build", "--out", "killed"]));
    assert_eq!(outputs(&dir.join("killed")), reference);

    // Two at once into one directory.
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
            .args(["build", "--out", "shared"])
            .current_dir(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for o in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
        ok(o);
    }
    assert_eq!(outputs(&dir.join("shared")), reference);
}
