//! gfx1250's tensor data mover (`gcn_emu::tensor`): `tensor_load_to_lds`
//! and `tensor_store_from_lds` from clang-22's builtins
//! (tests/rdna/inline/tensor_dma.hip) against NumPy, TENSORcnt in the
//! sanitizer (the kernel without its `s_wait_tensorcnt` is reported), and
//! the legacy words aiter ships (which llvm-objdump-22 prints as `.long`)
//! decoded and run.

use crate::common::*;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("gcn-emu-tensor-dma-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// clang-22's assembly of tests/rdna/inline/tensor_dma.hip for gfx1250,
/// its MODE bit 25 prologue line removed (the emulator does not run it;
/// as in rdna.rs's gfx1250 tests).
fn tensor_dma_asm() -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rdna/inline/tensor_dma.hip");
    let asm = dir().join("tensor_dma.s");
    let text = hip_asm(&src, "gfx1250", &asm);
    for m in [
        "tensor_load_to_lds",
        "tensor_store_from_lds",
        "s_wait_tensorcnt 0x0",
    ] {
        assert!(text.contains(m), "clang-22 emits `{m}`");
    }
    text
}

fn build(stem: &str, text: &str) -> Loaded {
    let d = dir();
    let asm = d.join(format!("{stem}.s"));
    std::fs::write(&asm, text).unwrap();
    load(&assemble(&asm, "gfx1250", stem, &d), "tensor_dma")
}

// The tensor (dim0 x dim1 f32, rows of `STRIDE`), the load's tile origin
// (C0, R0) and the store's (C1, R1): the load's tile (16 x 6) runs past
// the tensor in both dimensions, the store's (8 x 4) too.
const DIM0: u32 = 13;
const DIM1: u32 = 9;
const STRIDE: u32 = 17;
const C0: u32 = 2;
const R0: u32 = 5;
const C1: u32 = 7;
const R1: u32 = 6;

/// The sanitizer's checks these runs use: the default ones but `uninit`.
/// Its shadow does not know gfx1250's `s_load_b96` (gfx1250 has no
/// instruction table: `gcn_emu::isa::table_for("gfx1250")` is `None`), so it
/// takes the SGPRs clang-22 loads the kernel's arguments into as never
/// written.
fn checks() -> gcn_emu::sanitize::Checks {
    use gcn_emu::sanitize::Checks;
    Checks::RACES
        .union(Checks::BOUNDS)
        .union(Checks::BARRIERS)
        .union(Checks::WAITS)
}

fn args(src: &[f32], dst: &[f32]) -> Vec<A> {
    let u = |v: u32| A::Val(v.to_le_bytes().to_vec());
    vec![
        A::Buf(f32s(src)),
        A::Buf(vec![0; 128 * 4]),
        A::Buf(f32s(dst)),
        u(DIM0),
        u(DIM1),
        u(STRIDE),
        u(C0),
        u(R0),
        u(C1),
        u(R1),
    ]
}

/// The load copies the tile into LDS as one stream with 1 dword of padding
/// after every 8 (the padding keeps the kernel's -1), out-of-bounds
/// elements as zeros; the store writes the in-bounds part of its tile only
/// (the rest of `dst` keeps its bytes). Bit-exact against NumPy.
#[test]
fn gfx1250_tensor_dma_builtins_match_numpy() {
    let l = build("tensor_dma", &tensor_dma_asm());
    for m in ["tensor_load_to_lds", "tensor_store_from_lds"] {
        assert!(
            l.program.instructions.iter().any(|i| i.mnemonic == m),
            "decoded `{m}`"
        );
    }
    let n = (DIM1 * STRIDE) as usize;
    let mut r = Rng(1250);
    let src: Vec<f32> = (0..n).map(|_| r.f32() * 4.0).collect();
    let dst: Vec<f32> = (0..n).map(|_| r.f32() * 4.0).collect();
    let mut run = gcn_emu::dispatch::Launch::new([1, 1, 1], [32, 1, 1]);
    run.sanitize = checks();
    let (bufs, _) = launch_with(&l, run, args(&src, &dst)).unwrap_or_else(|e| panic!("{e}"));
    let want = numpy(
        &format!(
            "src = np.frombuffer(a0, np.float32).reshape({DIM1}, {STRIDE})
dst = np.frombuffer(a1, np.float32).reshape({DIM1}, {STRIDE}).copy()
lds = np.full(256, -1.0, np.float32)
for k in range(16 * 6):
    i0, i1 = k % 16, k // 16
    inside = i0 < {DIM0} - {C0} and i1 < {DIM1} - {R0}
    v = src[{R0} + i1, {C0} + i0] if inside else 0.0
    off = 4 * k
    lds[(off + off // 32 * 4) // 4] = v
for k in range(8 * 4):
    i0, i1 = k % 8, k // 8
    if i0 < {DIM0} - {C1} and i1 < {DIM1} - {R1}:
        dst[{R1} + i1, {C1} + i0] = 3 * k + 1
out = [lds[:128], dst.reshape(-1)]"
        ),
        &[&f32s(&src), &f32s(&dst)],
    );
    assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]), "LDS after the load");
    assert_eq!(to_u32(&bufs[2]), to_u32(&want[1]), "dst after the store");
}

/// The same kernel without its `s_wait_tensorcnt 0x0`: its reads of the
/// LDS the tensor load writes are reported as premature, naming the load
/// and the wait that orders them (`0x1`: the store issued after it may
/// stay in flight); the run with the wait is clean (`launch_with`'s
/// false-alarm pass in the test above).
#[test]
fn gfx1250_lds_read_before_tensorcnt_wait_is_reported() {
    let text = tensor_dma_asm();
    let mutant: String = text
        .lines()
        .filter(|l| !l.trim().starts_with("s_wait_tensorcnt"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(mutant, text, "the kernel has a tensorcnt wait to drop");
    let l = build("tensor_dma_nowait", &mutant);
    let n = (DIM1 * STRIDE) as usize;
    let mem = gcn_emu::memory::Memory::new();
    let mut vals = Vec::new();
    for (i, a) in args(&vec![1.0; n], &vec![0.0; n]).into_iter().enumerate() {
        vals.push(match a {
            A::Buf(b) => {
                gcn_emu::dispatch::ArgValue::Pointer(mem.alloc_bytes(&format!("a{i}"), &b))
            }
            A::Val(v) => gcn_emu::dispatch::ArgValue::Bytes(v),
        });
    }
    let mut launch = gcn_emu::dispatch::Launch::new([1, 1, 1], [32, 1, 1]);
    launch.sanitize = checks();
    let k = l.co.kernel(&l.name).unwrap();
    let stats = gcn_emu::dispatch::run(&l.co, k, &l.program, &mem, &vals, &launch)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!stats.findings.is_empty(), "the missing wait is reported");
    for f in &stats.findings {
        assert_eq!(f.kind, gcn_emu::sanitize::Kind::PrematureRead, "{f}");
        assert!(
            f.message.contains("tensor load")
                && f.message.contains("tensor_load_to_lds")
                // The store issued after the load: retiring all but the
                // newest one retires the load (TENSORcnt holds one kind of
                // event: in issue order, LLVM's SIInsertWaitcnts rule).
                && f.message.contains("`s_wait_tensorcnt 0x1`"),
            "{f}"
        );
    }
}

/// A gfx1250 kernel of `body` with 256 bytes of LDS, wave32.
fn legacy_kernel(stem: &str, body: &str) -> Loaded {
    kernel_of(stem, body, 32)
}

/// [`legacy_kernel`] for workgroups of up to `threads` work-items.
fn kernel_of(stem: &str, body: &str, threads: u32) -> Loaded {
    let text = format!(
        r#"	.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
	.amdhsa_code_object_version 6
	.text
	.globl	tensor_dma
	.p2align	8
	.type	tensor_dma,@function
tensor_dma:
{body}
  s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel tensor_dma
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 24
		.amdhsa_group_segment_fixed_size 256
	.end_amdhsa_kernel
	.text
	.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 256
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: {threads}
    .name:           tensor_dma
    .private_segment_fixed_size: 0
    .sgpr_count:     24
    .symbol:         tensor_dma.kd
    .vgpr_count:     8
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1250
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
"#
    );
    build(stem, &text)
}

/// aiter's words: `0xd0310000 0x00200000 0x7c7c0804` (the legacy
/// `tensor_load_to_lds` form of hsa/gfx1250, `th` 2, groups s[4:7] and
/// s[8:15]) and the store `0xd0314000 0x00000000 0x7c7c0804`, which
/// llvm-objdump-22 prints as `.long`: decoded by gcn-emu and run. A 1-D
/// tile of 16 f32 goes from the buffer to LDS and back to the buffer 128
/// bytes on; an iterate-mode descriptor is refused naming the field.
#[test]
fn gfx1250_aiter_legacy_tensor_words_decode_and_run() {
    let body = |extra: &str| {
        format!(
            "  s_load_b64 s[16:17], s[0:1], 0x0
  s_wait_kmcnt 0x0
  s_mov_b32 s4, 1
  s_mov_b32 s5, 0
  s_mov_b32 s6, s16
  s_and_b32 s7, s17, 0x1ffffff
  s_or_b32 s7, s7, 0x80000000
  s_mov_b32 s8, 0x20001{extra}
  s_mov_b32 s9, 0x100000
  s_mov_b32 s10, 0
  s_mov_b32 s11, 0x100000
  s_mov_b32 s12, 0
  s_mov_b32 s13, 0
  s_mov_b32 s14, 0
  s_mov_b32 s15, 0
  .long 0xd0310000, 0x00200000, 0x7c7c0804
  s_wait_tensorcnt 0x0
  s_add_nc_u64 s[6:7], s[6:7], 128
  s_or_b32 s7, s7, 0x80000000
  .long 0xd0314000, 0x00000000, 0x7c7c0804
  s_wait_tensorcnt 0x0"
        )
    };
    let l = legacy_kernel("legacy", &body(""));
    let t: Vec<_> = l
        .program
        .instructions
        .iter()
        .filter(|i| i.mnemonic.starts_with("tensor_"))
        .collect();
    assert_eq!(t.len(), 2, "both words decoded");
    assert_eq!(t[0].mnemonic, "tensor_load_to_lds");
    assert!(
        t[0].text
            .starts_with("tensor_load_to_lds s[4:7], s[8:15] th:2"),
        "{}",
        t[0].text
    );
    assert_eq!(t[1].mnemonic, "tensor_store_from_lds");
    assert!(t[1].text.contains("legacy gfx1250"), "{}", t[1].text);
    let mut r = Rng(7);
    let buf: Vec<u8> = (0..256).map(|_| r.next_u32() as u8).collect();
    let (bufs, _) = launch(&l, [1, 1, 1], [32, 1, 1], vec![A::Buf(buf.clone())])
        .unwrap_or_else(|e| panic!("{e}"));
    let want = numpy(
        "b = np.frombuffer(a0, np.uint8).copy()\nb[128:192] = b[:64]\nout = [b]",
        &[&buf],
    );
    assert_eq!(bufs[0], want[0]);
    // Group 1 bit 19 (iterate mode): refused, naming it.
    let l = legacy_kernel("legacy_iterate", &body("\n  s_bitset1_b32 s8, 19"));
    let e = launch(&l, [1, 1, 1], [32, 1, 1], vec![A::Buf(buf)]).unwrap_err();
    assert!(
        e.to_string().contains("iterate mode (group 1 bit 19)"),
        "{e}"
    );
}

/// Two wave32 waves each tensor-load their half of 64 dwords into LDS
/// (aiter's legacy words), meet at a barrier, and read the other wave's
/// half back reversed. With `s_wait_tensorcnt 0x0` before the barrier the
/// run is clean (`launch`'s false-alarm pass) and matches NumPy; without
/// it the sanitizer reports the load in flight at the barrier, naming the
/// wait.
#[test]
fn gfx1250_missing_tensorcnt_wait_before_a_barrier_is_reported() {
    let body = |wait: &str| {
        format!(
            "  s_load_b64 s[16:17], s[0:1], 0x0
  v_and_b32_e32 v0, 0x3ff, v0
  v_readfirstlane_b32 s18, v0
  s_lshr_b32 s18, s18, 5
  s_lshl_b32 s18, s18, 7
  s_wait_kmcnt 0x0
  s_mov_b32 s4, 1
  s_mov_b32 s5, s18
  s_add_co_u32 s6, s16, s18
  s_add_co_ci_u32 s7, s17, 0
  s_and_b32 s7, s7, 0x1ffffff
  s_or_b32 s7, s7, 0x80000000
  s_mov_b32 s8, 0x20001
  s_mov_b32 s9, 0x200000
  s_mov_b32 s10, 0
  s_mov_b32 s11, 0x200000
  s_mov_b32 s12, 0
  s_mov_b32 s13, 0
  s_mov_b32 s14, 0
  s_mov_b32 s15, 0
  .long 0xd0310000, 0x00000000, 0x7c7c0804
{wait}  s_barrier_signal -1
  s_barrier_wait -1
  v_sub_nc_u32_e32 v2, 63, v0
  v_lshlrev_b32_e32 v2, 2, v2
  v_lshlrev_b32_e32 v1, 2, v0
  ds_load_b32 v3, v2
  s_wait_dscnt 0x0
  global_store_b32 v1, v3, s[16:17] offset:256"
        )
    };
    let mut r = Rng(64);
    let mut buf: Vec<u8> = (0..256).map(|_| r.next_u32() as u8).collect();
    buf.resize(512, 0);
    let good = kernel_of("barrier_wait", &body("  s_wait_tensorcnt 0x0\n"), 64);
    let (bufs, _) = launch(&good, [1, 1, 1], [64, 1, 1], vec![A::Buf(buf.clone())])
        .unwrap_or_else(|e| panic!("{e}"));
    let want = numpy(
        "b = np.frombuffer(a0, np.uint32).copy()\nb[64:] = b[:64][::-1]\nout = [b]",
        &[&buf],
    );
    assert_eq!(bufs[0], want[0]);
    let bad = kernel_of("barrier_nowait", &body(""), 64);
    let mem = gcn_emu::memory::Memory::new();
    let p = mem.alloc_bytes("buf", &buf);
    let mut run = gcn_emu::dispatch::Launch::new([1, 1, 1], [64, 1, 1]);
    run.sanitize = checks();
    let k = bad.co.kernel(&bad.name).unwrap();
    let stats = gcn_emu::dispatch::run(
        &bad.co,
        k,
        &bad.program,
        &mem,
        &[gcn_emu::dispatch::ArgValue::Pointer(p)],
        &run,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let f = stats
        .findings
        .iter()
        .find(|f| f.kind == gcn_emu::sanitize::Kind::StoreInFlightAtBarrier)
        .unwrap_or_else(|| panic!("not reported: {:?}", stats.findings));
    assert!(
        f.message.contains("tensor_load_to_lds") && f.message.contains("`s_wait_tensorcnt 0x0`"),
        "{f}"
    );
}
