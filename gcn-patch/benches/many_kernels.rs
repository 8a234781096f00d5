//! Kernels per file (`cargo bench -p gcn-patch --bench many_kernels`): it
//! measures and prints, it asserts nothing.
//!
//! One gfx942 file of N tiny kernels (N = 1k, 4k, 20k; each a hipcc-style
//! kernel with its code, `.amdhsa_kernel` descriptor, `.set` symbols and
//! metadata entry; see `gen::many_kernels`), in two layouts: as clang dumps
//! it (`.Lfunc_end` labels) and as `lift` writes it (`.size k, 116`, no end
//! label). Each stage runs in its own process so that its peak memory
//! (VmHWM) is its own; time is from reading the file to the result:
//!
//! - lint: parse + `check::hazard::lint` (what `gcn-patch lint FILE` does);
//! - retarget: parse + retarget to gfx950 + print (`gcn-patch retarget`);
//! - check: load the manifest (pin), apply a rule to every kernel, then
//!   prepare both jobs, gfx942 and gfx950 (retarget, structure, budget,
//!   wait-counter and hazard checks) and print the assembler's input: what
//!   `gcn-patch check` and a build do before the assembler runs.
//!
//! `--emit N FILE` writes the dump-layout file (for `/usr/bin/time -v
//! gcn-patch lint FILE`, perf, callgrind).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use gcn_embed::TargetId;
use gcn_patch::base::document::Document;
use gcn_patch::config::manifest::{sha256_hex, Manifest};
use gcn_patch::pipeline;
use gcn_patch::stage::check::hazard::{self, LintOptions};
use gcn_patch::stage::retarget::{self, RetargetOptions};

mod gen;

const SIZES: [usize; 3] = [1_000, 4_000, 20_000];

/// Peak resident memory of this process, MiB.
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Child process: run `stage` on the project in `dir`; print "seconds MiB".
fn child(stage: &str, dir: &Path) {
    let file = dir.join("asm/many.s");
    let gfx942 = TargetId::parse("gfx942").unwrap();
    let gfx950 = TargetId::parse("gfx950").unwrap();
    let t0 = Instant::now();
    match stage {
        "lint" => {
            let text = std::fs::read_to_string(&file).expect("read");
            let doc = Document::from_source(&text, &file);
            let d = hazard::lint(&doc, &gfx942, LintOptions::default());
            std::hint::black_box(d);
        }
        "retarget" => {
            let text = std::fs::read_to_string(&file).expect("read");
            let doc = Document::from_source(&text, &file);
            let r = retarget::retarget(
                &doc,
                &RetargetOptions {
                    target: gfx950,
                    code_object_version: None,
                    assembler_llvm_major: 22,
                },
            )
            .unwrap_or_else(|d| panic!("{d}"));
            std::hint::black_box(r.asm.print());
        }
        "check" => {
            let m = Manifest::load(&dir.join("kernels.toml")).unwrap_or_else(|e| panic!("{e}"));
            let plan = pipeline::plan(&m, &[]).unwrap_or_else(|e| panic!("{e}"));
            for job in &plan.jobs {
                let p = pipeline::prepare(&m, &plan, job, 22).unwrap_or_else(|e| panic!("{e}"));
                std::hint::black_box(p.asm.print());
            }
        }
        _ => panic!("unknown stage {stage}"),
    }
    println!("{} {}", t0.elapsed().as_secs_f64(), peak_mib());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--emit") {
        let n: usize = args[i + 1].parse().expect("kernel count");
        std::fs::write(&args[i + 2], gen::many_kernels(n)).expect("write");
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], Path::new(&args[i + 2]));
        return;
    }
    let me = std::env::current_exe().expect("own path");
    println!("kernels per file (gfx942 tiny kernels; one process per cell: seconds, peak MiB)");
    println!(
        "{:<8} {:>7} {:>9} | {:>16} | {:>16} | {:>16}",
        "layout", "kernels", "MB", "lint", "retarget", "check (2 targets)"
    );
    for (layout, end_labels) in [("dump", true), ("lifted", false)] {
        for n in SIZES {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::create_dir(dir.path().join("asm")).expect("mkdir");
            let text = gen::many_kernels_with(n, end_labels);
            std::fs::write(dir.path().join("asm/many.s"), &text).expect("write");
            std::fs::write(
                dir.path().join("kernels.toml"),
                format!(
                    "[[kernel]]\nname = \"many\"\n\n[[kernel.source]]\nasm = \"asm/many.s\"\n\
                     sha256 = \"{}\"\ntargets = [\"gfx942\", \"gfx950\"]\n\n\
                     [[kernel.source.rule]]\ninsert = [\"s_nop 0\"]\nbefore = \"s_endpgm\"\nexpect = \"any\"\n",
                    sha256_hex(text.as_bytes())
                ),
            )
            .expect("write");
            let mb = text.len() as f64 / 1e6;
            drop(text);
            let cells: Vec<String> = ["lint", "retarget", "check"]
                .iter()
                .map(|stage| {
                    let out = Command::new(&me)
                        .args(["--child", stage])
                        .arg(dir.path())
                        .output()
                        .expect("run child");
                    assert!(
                        out.status.success(),
                        "{stage} of {n} kernels: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let s = String::from_utf8_lossy(&out.stdout);
                    let mut it = s.split_whitespace().map(|v| v.parse::<f64>().unwrap());
                    let (t, m) = (it.next().unwrap(), it.next().unwrap());
                    format!("{t:>7.2} s {m:>6.0} MiB")
                })
                .collect();
            println!(
                "{layout:<8} {n:>7} {mb:>9.1} | {} | {} | {}",
                cells[0], cells[1], cells[2]
            );
        }
    }
}
