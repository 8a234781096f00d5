//! Benchmark of the wait-counter hazard checker (`cargo bench -p gcn-patch --bench lint`).
//!
//! On the largest corpus dump (the IREE gfx1100 matmul) it times, as medians
//! of repeated runs: `check::hazard::lint` (the analysis `check` and gcn-build
//! run), `lint --suggest` (which re-runs the analysis per wait), and
//! assembling the same (retargeted) file with the real clang. It prints the
//! ratios lint / assembly; it asserts nothing about speed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use gcn_embed::TargetId;
use gcn_patch::base::document::Document;
use gcn_patch::stage::check::hazard::{self, LintOptions};
use gcn_patch::stage::retarget::{self, RetargetOptions};
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

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    // The largest dump of the corpus.
    let mut files: Vec<(u64, std::path::PathBuf, String)> = vec![];
    for family in ["iree", "hip"] {
        for t in std::fs::read_dir(corpus.join(family)).expect("corpus") {
            let t = t.unwrap().path();
            if !t.is_dir() {
                continue;
            }
            for f in std::fs::read_dir(&t).unwrap() {
                let f = f.unwrap().path();
                if matches!(
                    f.extension().and_then(|e| e.to_str()),
                    Some("s" | "rocmasm")
                ) {
                    let len = f.metadata().unwrap().len();
                    let target = t.file_name().unwrap().to_string_lossy().into_owned();
                    files.push((len, f, target));
                }
            }
        }
    }
    files.sort();
    let (_, file, target_name) = files.pop().expect("a corpus dump");
    let target = TargetId::parse(&target_name).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let doc = Document::from_source(&text, &file);
    let lines = text.lines().count();

    let tc = Toolchain::find(&ToolchainConfig::default(), &|k| std::env::var(k).ok())
        .unwrap_or_else(|d| panic!("{d}"));
    let retargeted = retarget::retarget(
        &doc,
        &RetargetOptions {
            target,
            code_object_version: None,
            assembler_llvm_major: tc.version.major,
        },
    )
    .unwrap_or_else(|d| panic!("{d}"));
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.s");
    let obj = dir.path().join("k.o");
    std::fs::write(&src, retargeted.asm.print()).unwrap();

    let assemble = || {
        let out = Command::new(&tc.clang)
            .args(["-x", "assembler", "--target=amdgcn-amd-amdhsa"])
            .arg(format!("-mcpu={}", target.name()))
            .arg("-c")
            .arg(&src)
            .arg("-o")
            .arg(&obj)
            .output()
            .expect("run clang");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let lint = |suggest: bool| {
        let d = hazard::lint(
            &doc,
            &target,
            LintOptions {
                suggest,
                ..LintOptions::default()
            },
        );
        std::hint::black_box(d);
    };
    // Warm up.
    assemble();
    lint(false);
    let t_asm = time(11, assemble);
    let t_lint = time(31, || lint(false));
    let t_suggest = time(5, || lint(true));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "lint bench: {} ({lines} lines, {})",
        file.strip_prefix(corpus.parent().unwrap().parent().unwrap())
            .unwrap_or(&file)
            .display(),
        target.name()
    );
    println!(
        "  clang assemble            {:>9.2} ms (median of 11)",
        ms(t_asm)
    );
    println!(
        "  hazard lint               {:>9.2} ms (median of 31)  ratio lint/assemble = {:.3}",
        ms(t_lint),
        ms(t_lint) / ms(t_asm)
    );
    println!(
        "  hazard lint --suggest     {:>9.2} ms (median of 5)   ratio = {:.3}",
        ms(t_suggest),
        ms(t_suggest) / ms(t_asm)
    );
}
