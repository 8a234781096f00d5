//! Running one test alone in a child process of this test binary.
//!
//! All of gcn-patch's integration tests share one process (`tests/it`), and
//! libtest runs them in parallel threads. A test that changes or measures
//! process-wide state (the process environment, signal dispositions, the
//! table of running tools, the counting allocator's totals, peak resident
//! memory) calls [`in_child`] first: in the parent it re-runs this binary
//! with only that test (`--exact`) and the given environment, asserts that
//! the test ran and passed there, and returns `false`; in that child it
//! returns `true` and the test does its work, alone in its process, as it
//! did when it had a test binary of its own.

use std::process::Command;

/// The variable naming the test a child process was started for.
const CHILD: &str = "GCN_PATCH_TEST_ALONE";

/// `true` when this process is the child started for `test` (libtest's name,
/// `module::function`): run the test's body. Otherwise runs the test in such
/// a child, with `env` added to its environment, panics unless it passed,
/// and returns `false`.
pub fn in_child(test: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var_os(CHILD).is_some_and(|v| v == test) {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(&exe)
        .args([test, "--exact", "--include-ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env(CHILD, test)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Shown with the parent's output (captured unless --nocapture).
    print!("{stdout}");
    eprint!("{stderr}");
    // The child runs with `--nocapture`, so the test's own output can stand
    // between its name and its result: the summary says whether it ran.
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed;"),
        "`{test}` alone in a child process ({}): {}, not exactly one test passed",
        exe.display(),
        out.status
    );
    false
}
