//! Cost of starting an LLVM tool from a process holding a lot of memory:
//! [`tool_command`] (posix_spawn through `setpriv`) against a plain
//! `Command` with the `pre_exec` hook (fork). Measures, asserts nothing.
//!
//! `cargo bench -p gcn-patch --bench spawn` (ballast `GCN_BENCH_BALLAST_MB`,
//! default 2048; runs `GCN_BENCH_RUNS`, default 200).

use std::process::Command;
use std::time::{Duration, Instant};

use gcn_patch::stage::toolchain::process::{run_tool, tool_command, ToolRun};

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn time(runs: usize, mut make: impl FnMut() -> Command) -> Duration {
    let run = ToolRun {
        tool: "llvm-mc",
        job: "for the spawn benchmark",
        timeout: Duration::from_secs(60),
    };
    let start = Instant::now();
    for _ in 0..runs {
        let out = run_tool(&mut make(), &run).expect("llvm-mc-22 runs (bash tests/setup.sh)");
        assert!(out.status.success());
    }
    start.elapsed() / runs as u32
}

fn main() {
    let mb = knob("GCN_BENCH_BALLAST_MB", 2048);
    let runs = knob("GCN_BENCH_RUNS", 200);
    let mc = which("llvm-mc-22");
    // Touch every page, as lifted files in memory would.
    let mut ballast = vec![0u8; mb << 20];
    for page in ballast.chunks_mut(4096) {
        page[0] = 1;
    }
    let spawned = time(runs, || {
        let mut c = tool_command(&mc);
        c.arg("--version");
        c
    });
    let forked = time(runs, || {
        let mut c = Command::new(&mc);
        c.arg("--version");
        c
    });
    println!(
        "spawn: {runs} runs of `llvm-mc-22 --version` beside {mb} MiB of touched memory: \
         tool_command {:.2} ms/run, plain Command (fork) {:.2} ms/run",
        spawned.as_secs_f64() * 1e3,
        forked.as_secs_f64() * 1e3
    );
    std::hint::black_box(&ballast);
}

fn which(tool: &str) -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{tool} not found: run `bash tests/setup.sh`"))
}
