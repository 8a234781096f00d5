//! The unified VGPR/AGPR file of gfx90a, gfx942 and gfx950 (issue 33): the
//! descriptor's `ACCUM_OFFSET` splits one file, and `a[i]` is
//! `v[accum_offset + i]` (AMDGPUUsage, "Kernel Descriptor",
//! `.amdhsa_accum_offset`). Kernels assembled by clang-22 write a value
//! through one name and read it through the other, on both engines (the
//! reference executor and the typed one), and the sanitizer's shadow of
//! uninitialized values and its loads in flight follow the same aliasing.

use crate::common::{self, assemble, load, Loaded};

use std::path::{Path, PathBuf};

use gcn_emu::dispatch::{run, ArgValue, Launch};
use gcn_emu::memory::Memory;
use gcn_emu::sanitize::{Checks, Kind};

const TARGETS: [&str; 3] = ["gfx90a", "gfx942", "gfx950"];

/// The accum offset of the kernels below: 16 registers, `a0`–`a7` are
/// `v8`–`v15`.
const ACCUM: u32 = 8;

/// The alias kernel: each lane writes through one name and reads through
/// the other, storing six dwords a lane to `out` (offsets 0, 256, …, 1280
/// bytes, lane `l` at `4 l`):
///
/// 0. `a3` written, read as `v11`: 100 + lane;
/// 1. `v12` written, read as `a4`: 200 + lane;
/// 2. to 5. an MFMA whose C and D are `a[0:3]`, written as `v[8:11]`
///    (lane, lane + 1, lane + 2, lane + 4 as f32) and read as `v8`–`v11`:
///    each is C + 8 (A = 1.0 and B = 2.0 everywhere, K = 4);
///
/// and, at 1536 to 2304, an MFMA whose C and D are `v[12:15]`, written as
/// `a4`–`a7` (`v8` + 10, + 11, + 12, + 14) and read as `a4`–`a7`: C + 8.
/// `edit` changes the body's text before it is assembled.
const BODY: &str = "
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v1, 2, v0
  v_add_u32_e32 v2, 100, v0
  v_accvgpr_write_b32 a3, v2
  v_mov_b32_e32 v3, v11
  v_add_u32_e32 v12, 200, v0
  v_accvgpr_read_b32 v4, a4
  v_cvt_f32_u32_e32 v8, v0
  v_add_f32_e32 v9, 1.0, v8
  v_add_f32_e32 v10, 2.0, v8
  v_add_f32_e32 v11, 4.0, v8
  v_mov_b32_e32 v5, 1.0
  v_mov_b32_e32 v6, 2.0
  v_mfma_f32_16x16x4f32 a[0:3], v5, v6, a[0:3]
  s_nop 7
  s_nop 7
  s_nop 2
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v3, s[2:3]
  global_store_dword v1, v4, s[2:3] offset:256
  global_store_dword v1, v8, s[2:3] offset:512
  global_store_dword v1, v9, s[2:3] offset:768
  global_store_dword v1, v10, s[2:3] offset:1024
  global_store_dword v1, v11, s[2:3] offset:1280
  v_add_f32_e32 v7, 10.0, v8
  v_accvgpr_write_b32 a4, v7
  v_add_f32_e32 v7, 11.0, v8
  v_accvgpr_write_b32 a5, v7
  v_add_f32_e32 v7, 12.0, v8
  v_accvgpr_write_b32 a6, v7
  v_add_f32_e32 v7, 14.0, v8
  v_accvgpr_write_b32 a7, v7
  v_mfma_f32_16x16x4f32 v[12:15], v5, v6, v[12:15]
  s_nop 7
  s_nop 7
  s_nop 2
  v_accvgpr_read_b32 v2, a4
  global_store_dword v1, v2, s[2:3] offset:1536
  v_accvgpr_read_b32 v2, a5
  global_store_dword v1, v2, s[2:3] offset:1792
  v_accvgpr_read_b32 v2, a6
  global_store_dword v1, v2, s[2:3] offset:2048
  v_accvgpr_read_b32 v2, a7
  global_store_dword v1, v2, s[2:3] offset:2304
  s_endpgm
";

/// The kernel `alias` of `body` for `target`: 16 registers, the AGPRs from
/// [`ACCUM`] on, one pointer argument.
fn kernel(dir: &Path, target: &str, stem: &str, body: &str) -> PathBuf {
    let src = format!(
        r#"	.amdgcn_target "amdgcn-amd-amdhsa--{target}"
	.amdhsa_code_object_version 6
	.text
	.globl	alias
	.p2align	8
	.type	alias,@function
alias:
{body}
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel alias
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 16
		.amdhsa_next_free_sgpr 8
		.amdhsa_accum_offset {ACCUM}
	.end_amdhsa_kernel
	.text
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     8
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 64
    .name:           alias
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .sgpr_spill_count: 0
    .symbol:         alias.kd
    .vgpr_count:     16
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--{target}
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
"#
    );
    let path = dir.join(format!("{stem}-{target}.s"));
    std::fs::write(&path, src).unwrap();
    assemble(&path, target, &format!("{stem}-{target}"), dir)
}

/// A fresh directory for test `name`'s files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gcn-emu-unified-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// What [`BODY`] stores, lane-major per dword (10 × 64 words).
fn expected() -> Vec<u32> {
    let f = |l: u32, add: f32| (l as f32 + add + 8.0).to_bits();
    let mut out = Vec::new();
    for k in 0..10 {
        for l in 0..64u32 {
            out.push(match k {
                0 => 100 + l,
                1 => 200 + l,
                2 => f(l, 0.0),
                3 => f(l, 1.0),
                4 => f(l, 2.0),
                5 => f(l, 4.0),
                // From v8, which the first MFMA left at lane + 8.
                6 => f(l, 18.0),
                7 => f(l, 19.0),
                8 => f(l, 20.0),
                _ => f(l, 22.0),
            });
        }
    }
    out
}

/// Run `l` over one wave of 64 on the typed engine or the reference one,
/// with `checks`: the words stored and the findings.
fn run_alias(
    l: &Loaded,
    typed: bool,
    checks: Checks,
) -> (Vec<u32>, Vec<gcn_emu::sanitize::Finding>) {
    let mem = Memory::new();
    let out = mem.alloc_bytes("out", &vec![0; 4 * 640]);
    let mut launch = Launch::new([1, 1, 1], [64, 1, 1]);
    launch.typed = typed;
    launch.sanitize = checks;
    let k = l.co.kernel(&l.name).unwrap();
    let stats = run(
        &l.co,
        k,
        &l.program,
        &mem,
        &[ArgValue::Pointer(out)],
        &launch,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", l.name));
    (common::to_u32(&mem.contents(out).unwrap()), stats.findings)
}

/// A value written through `a[k]` reads back through `v[accum + k]` and
/// the other way round, plain moves and MFMA operands (C and D as AGPRs
/// written through VGPRs, and as VGPRs written through AGPRs), on both
/// engines, for every gfx90a+ target; the typed engine lowers each of the
/// instructions that cross the alias. Under every sanitizer check the
/// kernel is clean (each register it reads through one name was written
/// through the other).
#[test]
fn agprs_and_the_vgprs_past_the_accum_offset_are_one_register_file() {
    let dir = scratch("alias");
    let want = expected();
    for target in TARGETS {
        let l = load(&kernel(&dir, target, "alias", BODY), "alias");
        let k = l.co.kernel("alias").unwrap();
        assert_eq!(
            (k.descriptor.vgpr_count(), k.descriptor.accum_offset()),
            (16, ACCUM),
            "{target}"
        );
        l.program.check_registers(k).unwrap();
        // The typed engine runs the instructions that cross the alias.
        let lowered = gcn_emu::typed::lowered(&l.program);
        for (ins, low) in l.program.instructions.iter().zip(&lowered) {
            if ins.mnemonic.starts_with("v_accvgpr")
                || ins.mnemonic.starts_with("v_mfma")
                || ins.text.contains("v11")
            {
                assert!(low, "{target}: `{}` is not lowered", ins.text);
            }
        }
        for typed in [false, true] {
            let (got, findings) = run_alias(&l, typed, Checks::ALL);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g,
                    w,
                    "{target} typed={typed}: dword {} of lane {}",
                    i / 64,
                    i % 64
                );
            }
            assert!(findings.is_empty(), "{target} typed={typed}: {findings:?}");
        }
    }
}

/// The sanitizer's shadow follows the alias: a register nothing wrote under
/// either name is uninitialized when read through the other (the report
/// names both), and a load in flight into `v[accum + k]` is a premature
/// read when `a[k]` is read before the wait.
#[test]
fn the_sanitizer_follows_the_unified_file() {
    let dir = scratch("sanitize");
    for target in TARGETS {
        // `a3` never written: `v11`, read and stored, is uninitialized.
        let body = BODY.replacen("  v_accvgpr_write_b32 a3, v2\n", "", 1);
        let l = load(&kernel(&dir, target, "uninit-a", &body), "alias");
        // `v12` never written: `a4`, read and stored, is uninitialized.
        let body = BODY.replacen("  v_add_u32_e32 v12, 200, v0\n", "", 1);
        let l2 = load(&kernel(&dir, target, "uninit-v", &body), "alias");
        for (l, read, origin) in [
            (&l, "global_store_dword v1, v3,", "v11 (which is a3: "),
            (&l2, "global_store_dword v1, v4,", "v12 (which is a4: "),
        ] {
            for typed in [false, true] {
                let (_, findings) = run_alias(l, typed, Checks::UNINIT);
                let f: Vec<_> = findings
                    .iter()
                    .filter(|f| f.kind == Kind::UninitializedRegister)
                    .collect();
                assert_eq!(f.len(), 1, "{target} typed={typed}: {findings:?}");
                let at = l
                    .program
                    .instructions
                    .iter()
                    .find(|i| i.text.starts_with(read));
                assert_eq!(Some(f[0].addr), at.map(|i| i.addr), "{target}: {}", f[0]);
                assert!(f[0].message.contains(origin), "{target}: {}", f[0]);
            }
        }
        // A load into v11 in flight, read as a3 before its wait.
        let body = BODY.replacen(
            "  v_mov_b32_e32 v3, v11\n",
            "  s_waitcnt lgkmcnt(0)\n  global_load_dword v11, v1, s[2:3]\n  v_accvgpr_read_b32 v3, a3\n  s_waitcnt vmcnt(0)\n",
            1,
        );
        let l = load(&kernel(&dir, target, "premature", &body), "alias");
        for typed in [false, true] {
            let (_, findings) = run_alias(&l, typed, Checks::WAITS);
            assert_eq!(findings.len(), 1, "{target} typed={typed}: {findings:?}");
            let f = &findings[0];
            assert_eq!(f.kind, Kind::PrematureRead, "{target}: {f}");
            assert!(
                f.message.contains("reads or writes a3") && f.message.contains("still writes v11"),
                "{target}: {f}"
            );
        }
    }
}
