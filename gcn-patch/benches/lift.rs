//! Benchmark of `lift` (`cargo bench -p gcn-patch --bench lift`).
//!
//! For aiter code objects of the corpus sample (one per arch and family, the
//! first in path order), it times, as medians of three runs:
//! * `lift::lift`: disassembly, the per-instruction re-encoding check, the
//!   descriptor and metadata checks, and the identity check (the asm built
//!   as a build builds it: checks, assemble, link, compare);
//! * the same without the identity check (`lift --no-verify`): the
//!   difference is what verification costs;
//! * the crude floor: `llvm-objdump -d` of the code object and `llvm-mc` of
//!   its listing (the two tools alone, without any checking).
//!
//! It prints per-kernel times and the ratio; it asserts nothing about speed.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gcn_patch::stage::lift::{lift, LiftOptions};
use gcn_patch::stage::toolchain::{Toolchain, ToolchainConfig};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(runs: usize, mut f: F) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

/// `llvm-objdump -d` then `llvm-mc` of its instructions: the tools alone.
fn tools_alone(tc: &Toolchain, co: &Path, mcpu: &str) {
    let listing = Command::new(tc.llvm_tool("llvm-objdump"))
        .args(["-d", "--no-show-raw-insn", "--no-leading-addr"])
        .arg(co)
        .output()
        .expect("llvm-objdump");
    let text: String = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .filter(|l| l.starts_with('\t'))
        .map(|l| format!("{}\n", l.split("//").next().unwrap_or("")))
        .collect();
    let mut mc = Command::new(tc.llvm_tool("llvm-mc"))
        .args([
            "--triple=amdgcn-amd-amdhsa",
            "--filetype=obj",
            "-o",
            "/dev/null",
        ])
        .arg(format!("--mcpu={mcpu}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llvm-mc");
    let _ = mc.stdin.take().unwrap().write_all(text.as_bytes());
    let _ = mc.wait();
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/aiter");
    let index = std::fs::read_to_string(root.join("index.tsv")).expect("aiter index");
    let mut pick: BTreeMap<(String, String), PathBuf> = BTreeMap::new();
    for l in index.lines().skip(1) {
        let f: Vec<&str> = l.split('\t').collect();
        let under = f[2].trim_start_matches(&format!("hsa/{}/", f[0]));
        pick.entry((f[0].to_string(), f[1].to_string()))
            .or_insert_with(|| root.join(f[0]).join(under));
    }
    let tc = Toolchain::find(&ToolchainConfig::default(), &|k| std::env::var(k).ok())
        .expect("LLVM 22 toolchain");
    println!(
        "{:<8} {:<22} {:>7} {:>10} {:>10} {:>10} {:>6}",
        "arch", "family", "insns", "lift ms", "no-verify", "tools ms", "ratio"
    );
    let (mut sum_lift, mut sum_tools, mut n) = (Duration::ZERO, Duration::ZERO, 0u32);
    let mut sum_unverified = Duration::ZERO;
    for ((arch, family), co) in &pick {
        let bytes = std::fs::read(co).unwrap();
        let mut insns = 0;
        let l = time(3, || {
            let lifted = lift(&bytes, co, &LiftOptions::new(&tc)).expect("lift");
            insns = lifted.instructions;
        });
        let unverified = LiftOptions {
            verify: false,
            ..LiftOptions::new(&tc)
        };
        let u = time(3, || {
            lift(&bytes, co, &unverified).expect("lift --no-verify");
        });
        let t = time(3, || tools_alone(&tc, co, arch));
        println!(
            "{arch:<8} {family:<22} {insns:>7} {:>10.1} {:>10.1} {:>10.1} {:>6.2}",
            l.as_secs_f64() * 1e3,
            u.as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e3,
            l.as_secs_f64() / t.as_secs_f64()
        );
        sum_unverified += u;
        sum_lift += l;
        sum_tools += t;
        n += 1;
    }
    println!(
        "per kernel: lift {:.1} ms, without the identity check {:.1} ms, tools alone {:.1} ms, \
         ratio {:.2} ({n} kernels)",
        sum_lift.as_secs_f64() * 1e3 / f64::from(n),
        sum_unverified.as_secs_f64() * 1e3 / f64::from(n),
        sum_tools.as_secs_f64() * 1e3 / f64::from(n),
        sum_lift.as_secs_f64() / sum_tools.as_secs_f64()
    );
}
