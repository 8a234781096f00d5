//! What the long commands say on standard error (`import`, `check`,
//! `build`): one summary line off a terminal (snapshots), a line per file
//! or job with `-v`, errors only with `-q`; and on a terminal (a
//! pseudo-terminal from util-linux's `script`), a progress bar that is
//! drawn while the command runs and cleared before the summary line.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{ok, repo, run_cli as gcn_patch, stderr};

/// A temp dir holding HIP dumps under `in/` (two programs for gfx942, one
/// for gfx1100) and a text file that is not AMDGPU asm.
fn workspace() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("in");
    std::fs::create_dir_all(&dir).unwrap();
    for (from, to) in [
        ("hip/gfx942/saxpy.s", "saxpy-gfx942.s"),
        ("hip/gfx942/reduce.s", "reduce-gfx942.s"),
        ("hip/gfx1100/saxpy.s", "saxpy-gfx1100.s"),
    ] {
        std::fs::copy(repo().join("tests/corpus").join(from), dir.join(to)).unwrap();
    }
    std::fs::write(dir.join("notes.s"), "; not a dump\n").unwrap();
    tmp
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error with the temp dir shown as `<dir>`.
fn shown(o: &Output, dir: &Path) -> String {
    stderr(o).replace(&dir.display().to_string(), "<dir>")
}

#[test]
fn import_says_one_line_each_file_with_v_and_nothing_with_q() {
    let tmp = workspace();
    let dir = tmp.path();
    let o = ok(gcn_patch(dir, &["import", "in"]));
    insta::assert_snapshot!("import_default", shown(&o, dir));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));

    let o = ok(gcn_patch(dir, &["import", "in", "-v"]));
    let err = shown(&o, dir);
    insta::assert_snapshot!("import_verbose", err);
    assert_eq!(err.matches("is already imported").count(), 3, "{err}");

    let o = ok(gcn_patch(dir, &["-q", "import", "in"]));
    assert_eq!(stderr(&o), "", "-q prints nothing when all is well");

    // Errors still print with -q.
    let o = gcn_patch(dir, &["import", "-q", "missing.s"]);
    assert_eq!(o.status.code(), Some(1));
    let err = shown(&o, dir);
    assert!(err.starts_with("error[GP"), "{err}");
    assert!(err.contains("missing.s"), "{err}");
}

#[test]
fn check_and_build_say_one_line_each_job_with_v_and_nothing_with_q() {
    let tmp = workspace();
    let dir = tmp.path();
    ok(gcn_patch(dir, &["import", "in"]));

    let o = ok(gcn_patch(dir, &["check", "--no-assemble"]));
    insta::assert_snapshot!("check_default", shown(&o, dir));
    let o = ok(gcn_patch(dir, &["check", "--no-assemble", "-v"]));
    let err = shown(&o, dir);
    insta::assert_snapshot!("check_verbose", err);
    assert_eq!(
        err.matches("\nok: ").count() + err.starts_with("ok: ") as usize,
        3
    );
    let o = ok(gcn_patch(dir, &["check", "--no-assemble", "--quiet"]));
    assert_eq!(stderr(&o), "");

    let o = ok(gcn_patch(dir, &["build", "--out", "out", "-j", "2"]));
    insta::assert_snapshot!("build_default", shown(&o, dir));
    assert_eq!(stdout(&o).lines().count(), 4, "the table: {}", stdout(&o));
    let o = ok(gcn_patch(dir, &["build", "--out", "out", "-q"]));
    assert_eq!(stderr(&o), "");
    assert_eq!(stdout(&o).lines().count(), 4, "-q keeps the table");

    // -q and -v together: clap refuses, naming both.
    let o = gcn_patch(dir, &["build", "--out", "out", "-q", "-v"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--quiet") && stderr(&o).contains("--verbose"));

    // A failing job: the error prints with -q, nothing else does.
    let asm = dir.join("asm/gfx942/saxpy-gfx942.s");
    let text = std::fs::read_to_string(&asm).unwrap();
    std::fs::write(&asm, text.replacen("s_endpgm", "s_bogus_instruction", 1)).unwrap();
    let o = gcn_patch(dir, &["check", "-q"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.starts_with("error[GP0201]"), "the pin: {err}");
    assert!(
        !err.contains("\nnote") && !err.contains("gcn-patch check:"),
        "{err}"
    );
}

/// `script` from util-linux, or a panic saying how to install it.
fn script() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("script"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("`script` (util-linux) not found on PATH: apt-get install -y bsdutils")
        })
}

/// Run `gcn-patch ARGS` in `dir` on a pseudo-terminal; what the terminal
/// showed (standard output and error together, with escape sequences).
fn on_a_terminal(dir: &Path, args: &str) -> String {
    let o = Command::new(script())
        .args(["-qec"])
        .arg(format!("{} {args}", env!("CARGO_BIN_EXE_gcn-patch")))
        .arg("/dev/null")
        .current_dir(dir)
        // A terminal, outside CI (where no bar is drawn).
        .env_remove("CI")
        .env("TERM", "xterm")
        .env("COLUMNS", "160")
        .env_remove("RUST_BACKTRACE")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run script");
    let shown = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "gcn-patch {args} on a terminal failed:\n{shown}{}",
        stderr(&o)
    );
    shown
}

/// What a terminal ends up showing on the line of each `\r`- or
/// `\n`-separated piece, escape sequences removed.
fn plain(s: &str) -> Vec<String> {
    let esc = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap();
    esc.replace_all(s, "")
        .split(['\r', '\n'])
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn a_terminal_gets_a_progress_bar_then_the_summary() {
    let tmp = workspace();
    let dir = tmp.path();
    let shown = on_a_terminal(dir, "import in");
    let lines = plain(&shown);
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("Importing [")
                && l.contains("/4 files, ")
                && l.contains("/s, ETA ")),
        "no bar drawn:\n{shown:?}"
    );
    assert_eq!(
        lines.last().unwrap(),
        "gcn-patch import: 3 file(s) into kernels.toml: 2 new kernel(s), 1 new source(s) of existing kernels, 1 other file(s) skipped: not AMDGPU assembly",
        "{shown:?}"
    );

    let shown = on_a_terminal(dir, "build --out out -j 1");
    let lines = plain(&shown);
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("Building [") && l.contains("/3 jobs, ")),
        "no bar drawn:\n{shown:?}"
    );
    assert!(
        lines.last().unwrap().starts_with(
            "gcn-patch build: 3 code object(s) (3 assembled, 0 cached) in out; wrote "
        ),
        "{shown:?}"
    );
    // The bar is cleared (erase line) before the table and the summary.
    let table = shown.find("kernel ").expect("the table");
    assert!(shown[..table].ends_with("\x1b[2K"), "{shown:?}");

    let shown = on_a_terminal(dir, "check");
    let lines = plain(&shown);
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("Checking [") && l.contains("/3 jobs, ")),
        "no bar drawn:\n{shown:?}"
    );
    assert_eq!(
        lines.last().unwrap(),
        "gcn-patch check: 3 job(s) passed (assembled, linked and verified)",
        "{shown:?}"
    );
}
