//! The table of running tools that a signal kills (issue 22, process
//! hygiene): it has a fixed size ([`MAX_LIVE_TOOLS`]); a run past it waits
//! for a slot instead of running unregistered, so every tool that runs can be
//! killed. Alone in a child process of the test binary ([`crate::alone`]):
//! [`kill_running_tools`] kills every tool of the process, which would break
//! other tests running beside it.

#![cfg(unix)]

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gcn_patch::stage::toolchain::process::{
    kill_running_tools, run_tool, set_signal_handlers, ToolRun, MAX_LIVE_TOOLS,
};

/// One test: both parts are process-wide (signal dispositions, killing
/// every running tool), so they run in this order, alone in their process.
#[test]
fn signal_handlers_can_be_declined_and_every_running_tool_is_killable() {
    // Alone in a child process: signal dispositions and the tool table are per process.
    if !crate::alone::in_child(
        "tool_table::signal_handlers_can_be_declined_and_every_running_tool_is_killable",
        &[],
    ) {
        return;
    }
    an_embedding_program_can_keep_its_signal_dispositions();
    every_running_tool_is_killable_even_past_the_table_size();
}

/// The SIGINT disposition, as a raw handler value.
fn sigint_action() -> libc::sighandler_t {
    // SAFETY: a query only (null new action), into a zeroed out-parameter.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old), 0);
        old.sa_sigaction
    }
}

fn an_embedding_program_can_keep_its_signal_dispositions() {
    // The harness may start us with SIGINT ignored; what matters is that
    // the tool run leaves the disposition as it was.
    let before = sigint_action();
    set_signal_handlers(false);
    let out = run_tool(
        &mut Command::new("true"),
        &ToolRun {
            tool: "true",
            job: "the signal opt-out test",
            timeout: Duration::from_secs(60),
        },
    )
    .expect("true runs");
    assert!(out.status.success());
    assert_eq!(
        sigint_action(),
        before,
        "a tool run installed a SIGINT handler"
    );
}

fn every_running_tool_is_killable_even_past_the_table_size() {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let n = MAX_LIVE_TOOLS + 44;
    let done = AtomicUsize::new(0);
    let begin = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| {
                let mut cmd = Command::new("sh");
                cmd.arg("-c")
                    .arg(format!("echo x >> '{}'; exec sleep 60", started.display()));
                let run = ToolRun {
                    tool: "sh",
                    job: "the tool-table test",
                    timeout: Duration::from_secs(120),
                };
                let out = run_tool(&mut cmd, &run).expect("the tool ran");
                assert!(!out.status.success(), "a killed tool exited 0");
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
        // Wait until the table is full (every slot's tool has started)...
        let lines = || {
            std::fs::read_to_string(&started)
                .map(|t| t.lines().count())
                .unwrap_or(0)
        };
        while lines() < MAX_LIVE_TOOLS && begin.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
        // ...and no more than the table holds runs at once.
        std::thread::sleep(Duration::from_millis(300));
        let running = lines();
        assert_eq!(running, MAX_LIVE_TOOLS, "tools started past the table size");
        // What a signal handler does, until every run has ended: the runs
        // that waited for a slot start and are killed too. Before, the 44
        // beyond the table ran unregistered and slept their full minute.
        while done.load(Ordering::SeqCst) < n && begin.elapsed() < Duration::from_secs(50) {
            kill_running_tools();
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            done.load(Ordering::SeqCst),
            n,
            "tools still running after every registered one was killed"
        );
    });
}
