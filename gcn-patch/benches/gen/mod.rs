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

/// One tiny kernel `k{i}` modelled on the hipcc gfx942 saxpy dump
/// (tests/corpus/hip/gfx942/saxpy.s): its code, its `.amdhsa_kernel`
/// descriptor, its `.set` resource symbols, and (in `meta`) its entry in
/// the `.amdgpu_metadata` block.
/// With `end_labels` false the kernel ends as lifted code does (`.size
/// k, 116`, no `.Lfunc_end` label).
fn tiny_kernel(i: usize, end_labels: bool, code: &mut String, meta: &mut String) {
    let _ = write!(
        code,
        "\t.protected\tk{i}\n\t.globl\tk{i}\n\t.p2align\t8\n\t.type\tk{i},@function\n\
k{i}:\n\
\ts_load_dword s3, s[0:1], 0x18\n\
\tv_lshl_add_u32 v0, s2, 8, v0\n\
\ts_waitcnt lgkmcnt(0)\n\
\tv_cmp_gt_u32_e32 vcc, s3, v0\n\
\ts_and_saveexec_b64 s[2:3], vcc\n\
\ts_cbranch_execz .LBB{i}_2\n\
\ts_load_dwordx4 s[4:7], s[0:1], 0x8\n\
\ts_load_dword s2, s[0:1], 0x0\n\
\tv_mov_b32_e32 v1, 0\n\
\tv_lshlrev_b64 v[0:1], 2, v[0:1]\n\
\ts_waitcnt lgkmcnt(0)\n\
\tv_lshl_add_u64 v[2:3], s[4:5], 0, v[0:1]\n\
\tv_lshl_add_u64 v[0:1], s[6:7], 0, v[0:1]\n\
\tglobal_load_dword v4, v[2:3], off\n\
\tglobal_load_dword v5, v[0:1], off\n\
\ts_waitcnt vmcnt(0)\n\
\tv_fmac_f32_e32 v5, s2, v4\n\
\tglobal_store_dword v[0:1], v5, off\n\
.LBB{i}_2:\n\
\ts_endpgm\n\
\t.section\t.rodata,\"a\",@progbits\n\
\t.p2align\t6, 0x0\n\
\t.amdhsa_kernel k{i}\n\
\t\t.amdhsa_group_segment_fixed_size 0\n\
\t\t.amdhsa_private_segment_fixed_size 0\n\
\t\t.amdhsa_kernarg_size 28\n\
\t\t.amdhsa_user_sgpr_count 2\n\
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1\n\
\t\t.amdhsa_system_sgpr_workgroup_id_x 1\n\
\t\t.amdhsa_system_vgpr_workitem_id 0\n\
\t\t.amdhsa_next_free_vgpr 6\n\
\t\t.amdhsa_next_free_sgpr 8\n\
\t\t.amdhsa_accum_offset 8\n\
\t\t.amdhsa_reserve_vcc 1\n\
\t\t.amdhsa_float_denorm_mode_32 3\n\
\t\t.amdhsa_float_denorm_mode_16_64 3\n\
\t\t.amdhsa_dx10_clamp 1\n\
\t\t.amdhsa_ieee_mode 1\n\
\t.end_amdhsa_kernel\n\
\t.text\n\
{end}\
\t.set k{i}.num_vgpr, 6\n\
\t.set k{i}.num_agpr, 0\n\
\t.set k{i}.numbered_sgpr, 8\n\
\t.set k{i}.private_seg_size, 0\n\
\t.set k{i}.uses_vcc, 1\n\
\t.set k{i}.uses_flat_scratch, 0\n\
\t.set k{i}.has_dyn_sized_stack, 0\n\
\t.set k{i}.has_recursion, 0\n\
\t.set k{i}.has_indirect_call, 0\n\
\t.section\t.AMDGPU.csdata,\"\",@progbits\n\
; Kernel info:\n\
; codeLenInByte = 116\n\
; NumVgprs: 6\n\
\t.text\n",
        end = if end_labels {
            format!(".Lfunc_end{i}:\n\t.size\tk{i}, .Lfunc_end{i}-k{i}\n")
        } else {
            format!("\t.size\tk{i}, 116\n")
        }
    );
    let _ = write!(
        meta,
        "  - .agpr_count:     0\n\
\x20   .args:\n\
\x20     - .offset:         0\n\
\x20       .size:           4\n\
\x20       .value_kind:     by_value\n\
\x20     - .address_space:  global\n\
\x20       .offset:         8\n\
\x20       .size:           8\n\
\x20       .value_kind:     global_buffer\n\
\x20     - .address_space:  global\n\
\x20       .offset:         16\n\
\x20       .size:           8\n\
\x20       .value_kind:     global_buffer\n\
\x20     - .offset:         24\n\
\x20       .size:           4\n\
\x20       .value_kind:     by_value\n\
\x20   .group_segment_fixed_size: 0\n\
\x20   .kernarg_segment_align: 8\n\
\x20   .kernarg_segment_size: 28\n\
\x20   .max_flat_workgroup_size: 1024\n\
\x20   .name:           k{i}\n\
\x20   .private_segment_fixed_size: 0\n\
\x20   .sgpr_count:     14\n\
\x20   .sgpr_spill_count: 0\n\
\x20   .symbol:         k{i}.kd\n\
\x20   .vgpr_count:     6\n\
\x20   .vgpr_spill_count: 0\n\
\x20   .wavefront_size: 64\n"
    );
}

/// A gfx942 code object's asm with `n` tiny kernels `k0`…`k{n-1}` (see
/// [`tiny_kernel`]), each with its descriptor and metadata entry, as one
/// file: what a Tensile library, a linked IREE module or a lifted
/// container looks like to the tool.
pub fn many_kernels(n: usize) -> String {
    many_kernels_with(n, true)
}

/// [`many_kernels`], with `end_labels` false laid out as lifted code
/// (`.size k, 116`, no end label: each kernel ends where the next begins).
pub fn many_kernels_with(n: usize, end_labels: bool) -> String {
    let mut code = String::with_capacity(n * 2200 + 256);
    let mut meta = String::with_capacity(n * 900 + 256);
    code.push_str(
        "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n\t.amdhsa_code_object_version 6\n\t.text\n",
    );
    for i in 0..n {
        tiny_kernel(i, end_labels, &mut code, &mut meta);
    }
    code.push_str("\t.amdgpu_metadata\n---\namdhsa.kernels:\n");
    code.push_str(&meta);
    code.push_str(
        "amdhsa.target:   amdgcn-amd-amdhsa--gfx942\namdhsa.version:\n  - 1\n  - 2\n...\n\n\t.end_amdgpu_metadata\n",
    );
    code
}
