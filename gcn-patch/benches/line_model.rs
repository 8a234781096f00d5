//! The line model's memory (`cargo bench -p gcn-patch --bench line_model`):
//! bytes of live heap per line, counted by a counting global allocator, at
//! 10k, 100k and 1M generated lines (the `apply_large` kernel: blocks of
//! global loads, waits and LDS stores), one process per size:
//!
//! * `document`: what a parsed [`Document`] of the file keeps live (its
//!   lines, their kinds and origins), divided by its lines;
//! * `patch + checks`: the peak of live heap bytes while loading the
//!   manifest, patching (a diff + rules, as `build_speed` part 5 does) and
//!   preparing the gfx942 job (retarget, every check, the assembler's
//!   input), divided by the lines; and the process's peak RSS (VmHWM)
//!   after it, which adds the allocator's overhead and the generated text.
//!
//! It measures and prints; `tests/it/line_model.rs` guards the bound.

use std::process::Command;
use std::time::Instant;

use gcn_patch::base::document::Document;
use gcn_patch::base::hash::sha256_hex;
use gcn_patch::config::manifest::Manifest;
use gcn_patch::pipeline;

mod count;
mod gen;

#[global_allocator]
static GLOBAL: count::Counting = count::Counting;

fn vm_hwm_kib() -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn child(lines: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (text, _) = gen::generate(lines);
    let n = text.lines().count();
    let t0 = Instant::now();
    let (doc, doc_bytes, _) = count::measure(|| Document::from_source(&text, "big.s"));
    let t_parse = t0.elapsed().as_secs_f64();
    assert_eq!(doc.len(), n);
    drop(doc);
    let diff = diffy::create_patch(&text, &gen::edited(&text)).to_string();
    std::fs::write(dir.path().join("big.s"), &text).expect("write");
    std::fs::write(dir.path().join("big.diff"), &diff).expect("write");
    let toml = format!(
        "[[kernel]]\nname = \"big\"\nhazards = \"warn\"\n[[kernel.source]]\nasm = \"big.s\"\nsha256 = \"{}\"\ntargets = [\"gfx942\"]\npatches = [\"big.diff\"]\n{}",
        sha256_hex(text.as_bytes()),
        gen::RULES
    );
    std::fs::write(dir.path().join("kernels.toml"), toml).expect("write");
    drop((text, diff));
    let t0 = Instant::now();
    let (outcome, _, peak) = count::measure(|| {
        let m = Manifest::load(&dir.path().join("kernels.toml")).unwrap_or_else(|e| panic!("{e}"));
        let plan = pipeline::plan(&m, &[]).unwrap_or_else(|e| panic!("{e}"));
        match pipeline::prepare(&m, &plan, &plan.jobs[0], 22) {
            Ok(p) => format!("ok, {} notes", p.notes.len()),
            Err(d) => format!("{} errors, first: {}", d.0.len(), d.0[0].message),
        }
    });
    let t_all = t0.elapsed().as_secs_f64();
    let hwm = vm_hwm_kib().unwrap_or(0) * 1024;
    println!(
        "{n:>9} {:>10.0} {:>9.0} {:>12.0} {:>11.0} {:>10.0} {:>9.0}  {outcome}",
        doc_bytes as f64 / n as f64,
        t_parse * 1e9 / n as f64,
        peak as f64 / n as f64,
        hwm as f64 / n as f64,
        hwm as f64 / (1 << 20) as f64,
        t_all * 1e9 / n as f64,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(args[i + 1].parse().expect("line count"));
        return;
    }
    let sizes: Vec<usize> = std::env::var("LINE_MODEL_LINES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000]);
    println!(
        "{:>9} {:>10} {:>9} {:>12} {:>11} {:>10} {:>9}  result",
        "lines", "doc B/line", "parse ns", "peak B/line", "RSS B/line", "RSS MiB", "all ns"
    );
    let me = std::env::current_exe().expect("current exe");
    for n in sizes {
        let st = Command::new(&me)
            .args(["--child", &n.to_string()])
            .status()
            .expect("run child");
        if !st.success() {
            println!("{n:>9} failed ({st})");
        }
    }
}
