//! Benchmark of the patch stage on large generated asm (`cargo bench -p gcn-patch --bench apply_large`).
//!
//! Generates a kernel of ~25k, ~50k and ~100k lines (blocks of global loads,
//! waits and LDS stores), a unified diff touching every 50th block, and a set
//! of rules (set-waitcnt on every block, delete, insert before every load, a
//! block-scoped move, a descriptor `set`), then times `patch::apply` with the
//! diff only and with diff + rules. It measures and prints; it asserts nothing
//! beyond the patch applying. Time per line should stay flat as size doubles.

use std::time::Instant;

mod gen;
use gen::{edited, generate, RULES};

use gcn_patch::config::manifest::{sha256_hex, Manifest};

fn main() {
    println!(
        "{:>8} {:>7} {:>6} {:>12} {:>12} {:>14}",
        "lines", "blocks", "hunks", "diff ms", "diff+rules", "ns/line (all)"
    );
    for target in [25_000, 50_000, 100_000] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (text, blocks) = generate(target);
        let patched = edited(&text);
        let diff = diffy::create_patch(&text, &patched).to_string();
        let hunks = diff.lines().filter(|l| l.starts_with("@@")).count();
        std::fs::write(dir.path().join("big.s"), &text).expect("write");
        std::fs::write(dir.path().join("big.diff"), &diff).expect("write");
        let head = format!(
            "[[kernel]]\nname = \"big\"\n[[kernel.source]]\nasm = \"big.s\"\nsha256 = \"{}\"\ntargets = [\"gfx942\"]\npatches = [\"big.diff\"]\n",
            sha256_hex(text.as_bytes())
        );
        let mut times = Vec::new();
        for toml in [head.clone(), format!("{head}{RULES}")] {
            let path = dir.path().join("kernels.toml");
            std::fs::write(&path, &toml).expect("write");
            let m = Manifest::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let k = &m.kernels[0];
            // Best of 3.
            let mut best = f64::MAX;
            for _ in 0..3 {
                let t0 = Instant::now();
                let out = gcn_patch::stage::patch::apply(&m, k, &k.sources[0])
                    .unwrap_or_else(|e| panic!("{e}"));
                best = best.min(t0.elapsed().as_secs_f64());
                std::hint::black_box(out);
            }
            times.push(best);
        }
        let n = text.lines().count();
        println!(
            "{n:>8} {blocks:>7} {hunks:>6} {:>12.1} {:>12.1} {:>14.0}",
            times[0] * 1e3,
            times[1] * 1e3,
            times[1] * 1e9 / n as f64
        );
    }
}
