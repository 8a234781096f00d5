//! Benchmark of the patch stage on large generated asm (`cargo bench -p gcn-patch --bench apply_large`).
//!
//! Generates a kernel of ~25k, ~50k and ~100k lines (blocks of global loads,
//! waits and LDS stores), a unified diff touching every 50th block, and a set
//! of rules (set-waitcnt on every block, delete, insert before every load, a
//! block-scoped move, a descriptor `set`), then times `patch::apply` with the
//! diff only and with diff + rules. It measures and prints; it asserts nothing
//! beyond the patch applying. Time per line should stay flat as size doubles.

use std::fmt::Write as _;
use std::time::Instant;

use gcn_patch::manifest::{sha256_hex, Manifest};

fn block(k: usize, out: &mut String) {
    let _ = writeln!(out, ".LBB0_{k}:");
    for j in 0..8 {
        let _ = writeln!(out, "\tv_add_u32_e32 v{}, 0x{:x}, v1", 10 + j, k * 8 + j);
    }
    for j in 0..8 {
        let _ = writeln!(
            out,
            "\tbuffer_load_dwordx4 v[{}:{}], v{}, s[4:7], 0 offen",
            20 + 4 * j,
            23 + 4 * j,
            10 + j
        );
    }
    for j in 0..8 {
        let _ = writeln!(out, "\ts_waitcnt vmcnt({})", 7 - j);
        let _ = writeln!(
            out,
            "\tds_write2_b64 v{}, v[{}:{}], v[{}:{}] offset1:1 ; blk {k}",
            10 + j,
            20 + 4 * j,
            21 + 4 * j,
            22 + 4 * j,
            23 + 4 * j
        );
    }
    let _ = writeln!(out, "\ts_cbranch_scc0 .LBB0_{k}");
}

fn generate(lines: usize) -> (String, usize) {
    let mut s = String::with_capacity(lines * 40);
    s.push_str("\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n\t.text\n\t.globl\tbench\n\t.p2align\t8\n\t.type\tbench,@function\nbench:\n");
    let mut k = 0;
    while s.lines().count() < lines.saturating_sub(12) && k < usize::MAX {
        // Generate in chunks to avoid recounting every block.
        for _ in 0..100 {
            block(k, &mut s);
            k += 1;
        }
    }
    s.push_str("\ts_endpgm\n.Lfunc_end0:\n\t.size\tbench, .Lfunc_end0-bench\n\t.section\t.rodata,\"a\",@progbits\n\t.amdhsa_kernel bench\n\t\t.amdhsa_next_free_vgpr 64\n\t\t.amdhsa_next_free_sgpr 16\n\t\t.amdhsa_accum_offset 64\n\t.end_amdhsa_kernel\n\t.text\n\t.set .Lbench.num_vgpr, 64\n");
    (s, k)
}

/// The generated text with every 50th block's vmcnt(4)/(5) waits merged: made into a diff by diffy.
fn edited(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blk = 0usize;
    for l in text.lines() {
        if let Some(n) = l.strip_prefix(".LBB0_") {
            blk = n.trim_end_matches(':').parse().unwrap_or(0);
        }
        if blk % 50 == 7 && l == "\ts_waitcnt vmcnt(5)" {
            out.push_str("\ts_waitcnt vmcnt(4)\n");
            continue;
        }
        if blk % 50 == 7 && l == "\ts_waitcnt vmcnt(4)" {
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

const RULES: &str = r#"
[[kernel.source.rule]]
set-waitcnt = "s_waitcnt vmcnt(7)"
counter = "vmcnt"
value = 6
expect = "any"

[[kernel.source.rule]]
delete = 's_waitcnt vmcnt\(1\)'
regex = true
expect = "any"

[[kernel.source.rule]]
insert = ["s_setprio 1"]
before = "buffer_load_dwordx4"
expect = "any"

[[kernel.source.rule]]
move = "s_waitcnt vmcnt(0)"
block = ".LBB0_3"
after = "buffer_load_dwordx4"
anchor-occurrence = "last"

[[kernel.source.rule]]
set = ".amdhsa_next_free_vgpr"
value = 128
"#;

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
                let out =
                    gcn_patch::patch::apply(&m, k, &k.sources[0]).unwrap_or_else(|e| panic!("{e}"));
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
