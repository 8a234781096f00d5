//! Every tool run is bounded, and a killed gcn-patch takes its clang with it.
//! Real clang-22: the parser catches the unterminated string on which clang
//! never returns; a `.rept` of two billion empty repetitions keeps the real
//! clang busy for minutes on an input the parser rightly accepts, which is
//! what the time limit and the kill paths are tested with.

use crate::common;

use common::repo;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn saxpy() -> String {
    let p = repo().join("tests/corpus/hip/gfx942/saxpy.s");
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run tests/corpus/regen.sh)", p.display()))
}

/// The saxpy dump with line `s_and_saveexec_b64 s[2:3], vcc` changed by `edit`.
fn saxpy_with(edit: &str) -> String {
    let text = saxpy();
    let line = "\ts_and_saveexec_b64 s[2:3], vcc\n";
    assert!(text.contains(line), "corpus saxpy changed: fix this test");
    text.replacen(line, edit, 1)
}

/// A kernel that keeps the real clang busy for minutes (and ~80 MB).
fn slow() -> String {
    saxpy_with("\ts_and_saveexec_b64 s[2:3], vcc\n.rept 2000000000\n.endr\n")
}

fn gcn_patch(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gcn-patch"));
    c.current_dir(dir)
        .env("TMPDIR", dir)
        .env_remove("RUST_BACKTRACE")
        .env_remove("GCN_PATCH_TOOL_TIMEOUT");
    c
}

/// A kernel (file) name unique to `dir`: the tools read their input from
/// stdin, so a tool's command line names the job (`-main-file-name
/// <stem>-gfx942.s`), not the directory; this is how its processes are found.
fn stem(dir: &Path) -> String {
    let name = dir.file_name().unwrap().to_string_lossy();
    format!(
        "k{}",
        name.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
    )
}

fn norm(text: &str, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "[DIR]")
}

/// Every file and directory under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            let e = e.expect("walk");
            e.path().strip_prefix(dir).unwrap().display().to_string()
        })
        .collect();
    v.sort();
    v
}

fn failed(o: &Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!e.contains("panicked"), "{e}");
    assert_eq!(o.status.code(), Some(1), "{e}");
    e
}

#[test]
fn an_unterminated_string_is_an_error_at_its_line_before_clang_runs() {
    // clang-22 never returns on this file (checked in assemble's unit tests).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.s"),
        saxpy_with("\ts_and_saveexec_b64 s[2:3], vcc\"\n"),
    )
    .unwrap();
    // A 1 s limit: if the parser missed it, clang would hang and this would
    // fail with the time-limit message instead.
    let o = gcn_patch(dir.path())
        .args(["assemble", "k.s", "--target", "gfx942", "-o", "k.hsaco"])
        .args(["--tool-timeout", "1"])
        .output()
        .unwrap();
    let e = failed(&o);
    insta::assert_snapshot!(norm(&e, dir.path()));
    assert_eq!(tree(dir.path()), ["k.s"]);
}

#[test]
fn a_tool_past_its_time_limit_is_killed_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let k = stem(dir.path());
    let (src, out) = (format!("{k}.s"), format!("{k}.hsaco"));
    std::fs::write(dir.path().join(&src), slow()).unwrap();
    std::fs::write(dir.path().join(&out), "previous build").unwrap();
    let started = Instant::now();
    let o = gcn_patch(dir.path())
        .args(["assemble", &src, "--target", "gfx942", "-o", &out])
        .env("GCN_PATCH_TOOL_TIMEOUT", "1.5")
        .output()
        .unwrap();
    let e = failed(&o);
    // Structure, not speed: the run ended because of the limit (the message
    // says so) rather than because clang finished; the bound below is only
    // there so that a regression fails instead of hanging for minutes.
    assert!(started.elapsed() < Duration::from_secs(120));
    let e = norm(&e, dir.path()).replace(&k, "k");
    let e = regex::Regex::new(r"command: \S+")
        .unwrap()
        .replace_all(&e, "command: [ASSEMBLER]");
    insta::assert_snapshot!(e);
    // The old output is untouched and nothing else is left.
    assert_eq!(
        std::fs::read_to_string(dir.path().join(&out)).unwrap(),
        "previous build"
    );
    assert_eq!(tree(dir.path()), [out.as_str(), src.as_str()]);
    assert!(no_process_mentions(dir.path()), "a tool survived");

    // The CLI flag wins over the variable.
    let o = gcn_patch(dir.path())
        .args(["assemble", &src, "--target", "gfx942", "-o", &out])
        .args(["--tool-timeout", "1"])
        .env("GCN_PATCH_TOOL_TIMEOUT", "100000")
        .output()
        .unwrap();
    assert!(failed(&o).contains(" did not finish within 1 s assembling kernel"));

    // A bad limit is a usage error naming the variable.
    let o = gcn_patch(dir.path())
        .args(["assemble", &src, "--target", "gfx942", "-o", &out])
        .env("GCN_PATCH_TOOL_TIMEOUT", "soon")
        .output()
        .unwrap();
    let e = failed(&o);
    insta::assert_snapshot!("bad_timeout_variable", e);
}

/// Pids of processes whose command line mentions `dir` or its [`stem`].
fn processes_mentioning(dir: &Path) -> Vec<(i32, String)> {
    let (needle, job) = (dir.display().to_string(), stem(dir));
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z');
        if (cmd.contains(&needle) || cmd.contains(&job)) && !zombie {
            out.push((pid, cmd));
        }
    }
    out
}

/// No live process mentions `dir`, allowing a few seconds for SIGKILL to land.
fn no_process_mentions(dir: &Path) -> bool {
    for _ in 0..500 {
        if processes_mentioning(dir).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("still running: {:?}", processes_mentioning(dir));
    false
}

/// Start a slow build and wait until its clang runs; returns gcn-patch and clang's pid.
// The child is returned to the caller, which waits for it.
#[allow(clippy::zombie_processes)]
fn start_slow_build(dir: &Path) -> (Child, i32) {
    let k = stem(dir);
    std::fs::write(dir.join(format!("{k}.s")), slow()).unwrap();
    let mut cmd = gcn_patch(dir);
    // The signals this test sends end gcn-patch by default; a shell that
    // started the suite in the background (`cmd &` without job control, or
    // under nohup) leaves SIGINT ignored, and gcn-patch rightly leaves an
    // ignored signal alone. Start it with the default dispositions.
    // SAFETY: signal(2) is async-signal-safe.
    #[cfg(unix)]
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let mut child = cmd
        .args(["assemble", &format!("{k}.s"), "--target", "gfx942"])
        .args(["-o", &format!("{k}.hsaco")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let clang = processes_mentioning(dir).into_iter().find(|(_, cmd)| {
            (cmd.contains("-cc1as") || cmd.contains("llvm-mc")) && cmd.contains("gfx942")
        });
        if let Some((pid, _)) = clang {
            return (child, pid);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("clang never started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[test]
fn interrupting_gcn_patch_kills_its_clang() {
    for sig in ["-TERM", "-INT", "-KILL"] {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, clang) = start_slow_build(dir.path());
        signal(child.id(), sig);
        let status = child.wait().unwrap();
        assert!(!status.success(), "{sig}: {status}");
        assert!(
            no_process_mentions(dir.path()),
            "{sig}: clang {clang} is still running after gcn-patch was killed"
        );
        assert!(
            !dir.path()
                .join(format!("{}.hsaco", stem(dir.path())))
                .exists(),
            "{sig}: partial output"
        );
    }
}
