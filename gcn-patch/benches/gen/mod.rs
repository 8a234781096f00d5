//! The generated kernel shared by the benchmarks: blocks of global loads,
//! waits and LDS stores, an edit of every 50th block, and a rule set.
#![allow(dead_code)]

use std::fmt::Write as _;

pub fn block(k: usize, out: &mut String) {
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

pub fn generate(lines: usize) -> (String, usize) {
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
    // The metadata block every dump has (without it the checks stop at the
    // structure check and the benchmark measures nothing after the patch).
    s.push_str("\t.amdgpu_metadata\n---\namdhsa.kernels:\n  - .agpr_count:     0\n    .args:           []\n    .group_segment_fixed_size: 0\n    .kernarg_segment_align: 8\n    .kernarg_segment_size: 0\n    .max_flat_workgroup_size: 256\n    .name:           bench\n    .private_segment_fixed_size: 0\n    .sgpr_count:     16\n    .sgpr_spill_count: 0\n    .symbol:         bench.kd\n    .vgpr_count:     64\n    .vgpr_spill_count: 0\n    .wavefront_size: 64\namdhsa.target:   amdgcn-amd-amdhsa--gfx942\namdhsa.version:\n  - 1\n  - 2\n...\n\n\t.end_amdgpu_metadata\n");
    (s, k)
}

/// The generated text with every 50th block's vmcnt(4)/(5) waits merged: made into a diff by diffy.
pub fn edited(text: &str) -> String {
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

pub const RULES: &str = r#"
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
