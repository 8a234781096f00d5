//! `gcn_emu::profile`: exact counters of real kernels (clang-22) whose
//! answers are known by construction, and the timing model's response to
//! an inserted stall.

mod common;

use common::*;
use gcn_emu::dispatch::{run_observed, ArgValue, Launch};
use gcn_emu::memory::Memory;
use gcn_emu::profile::counters::Counters;
use gcn_emu::profile::device::Device;
use gcn_emu::profile::model::{time_launch, Assumptions};
use gcn_emu::profile::{LdsRule, Profiler, WorkgroupTrace};

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn traces(
    l: &Loaded,
    grid: [u32; 3],
    block: [u32; 3],
    args: &[ArgValue],
    mem: &Memory,
) -> Vec<WorkgroupTrace> {
    let k = l.co.kernel(&l.name).unwrap();
    let p = Profiler::new(LdsRule::of(&l.co.processor), grid);
    let (_, wgs) = run_observed(
        &l.co,
        k,
        &l.program,
        mem,
        args,
        &Launch::new(grid, block),
        &p,
    )
    .unwrap();
    wgs.into_iter().map(|w| w.into_trace()).collect()
}

fn index_of(l: &Loaded, mnemonic: &str) -> usize {
    l.program
        .instructions
        .iter()
        .position(|i| i.mnemonic == mnemonic)
        .unwrap_or_else(|| panic!("{}: no {mnemonic}", l.name))
}

/// One wave of 64 lanes, each accessing `d` dwords at element `lane ×
/// stride`: with `B` banks a phase serves `B / d` lanes, and its lanes
/// start `stride·d` dwords apart, so `gcd(stride·d, B) / d` of them share
/// each starting bank: the wave takes `64·gcd(stride·d, B) / B` cycles in
/// `64·d / B` phases. The conflict cycles are the difference.
fn expected_conflicts(banks: u64, d: u64, stride: u64) -> u64 {
    64 * gcd(stride * d, banks) / banks - 64 * d / banks
}

#[test]
fn lds_bank_conflicts_match_the_stride_formula_on_gfx942_and_gfx950() {
    let dir = tempdir("profile-lds");
    for (target, banks) in [("gfx942", 32u64), ("gfx950", 64)] {
        let path = build("lds_stride", target, &dir);
        for (kernel, d, max) in [
            ("stride_b32", 1u64, 69u64),
            ("stride_b64", 2, 34),
            ("stride_b128", 4, 17),
        ] {
            let l = load(&path, kernel);
            let write = index_of(&l, &format!("ds_write_b{}", 32 * d));
            let read = index_of(&l, &format!("ds_read_b{}", 32 * d));
            let store = l
                .program
                .instructions
                .iter()
                .position(|i| i.mnemonic.starts_with("global_store"))
                .unwrap();
            let mut strides: Vec<u64> = (0..7).map(|p| 1u64 << p).filter(|&s| s <= max).collect();
            strides.extend(strides.clone().iter().map(|s| s + 1).filter(|&s| s <= max));
            for stride in strides {
                let mem = Memory::new();
                let out = mem.alloc_bytes("out", &vec![0; 64 * 4 * d as usize]);
                let args = [
                    ArgValue::Pointer(out),
                    ArgValue::Bytes((stride as u32).to_le_bytes().to_vec()),
                ];
                let t = traces(&l, [1, 1, 1], [64, 1, 1], &args, &mem);
                let c = Counters::of(&l.program, &t);
                let want = expected_conflicts(banks, d, stride);
                let what = format!("{target} {kernel} stride {stride}");
                for (i, op) in [(write, "write"), (read, "read")] {
                    assert_eq!(c.per_instruction[i].executed, 1, "{what} {op}");
                    assert_eq!(c.per_instruction[i].active_lanes, 64, "{what} {op}");
                    assert_eq!(
                        c.per_instruction[i].lds_bank_conflicts, want,
                        "{what}: ds_{op} bank conflicts"
                    );
                }
                // The result is what the neighbour wrote.
                let got = to_u32(&mem.contents(out).unwrap());
                for lane in 0..64 {
                    assert_eq!(got[lane * d as usize], (lane ^ 1) as u32 + 1, "{what}");
                }
                // out[i]: 64 lanes × 4d contiguous bytes.
                let s = &c.per_instruction[store];
                assert_eq!(s.global_bytes, 256 * d, "{what}");
                assert_eq!(s.lines64, 4 * d, "{what}: 64-byte lines");
                assert_eq!(s.lines128, 2 * d, "{what}: 128-byte lines");
                assert_eq!(c.total.barriers, 1, "{what}");
            }
        }
    }
}

/// Cycles of one CU running one workgroup of `kernel` with `n` groups of
/// nops, and the nops executed.
fn nop_cycles(path: &std::path::Path, kernel: &str, n: u32) -> (u64, u64) {
    let l = load(path, kernel);
    let device = Device::by_name("mi300x").unwrap();
    let mem = Memory::new();
    let out = mem.alloc_bytes("out", &vec![0; 4 * 1024]);
    let inp = mem.alloc_bytes("in", &f32s(&vec![1.0; 1024]));
    let args = [
        ArgValue::Pointer(out),
        ArgValue::Pointer(inp),
        ArgValue::Bytes(n.to_le_bytes().to_vec()),
    ];
    let t = traces(&l, [4, 1, 1], [256, 1, 1], &args, &mem);
    let c = Counters::of(&l.program, &t);
    let nops = l
        .program
        .instructions
        .iter()
        .enumerate()
        .filter(|(_, i)| i.mnemonic == "s_nop")
        .map(|(k, _)| c.per_instruction[k].executed)
        .sum::<u64>();
    let timing = time_launch(
        &l.program,
        &device,
        &t[..1],
        4,
        1,
        0,
        &Assumptions::default(),
    );
    (timing.round.cycles, nops)
}

#[test]
fn inserted_nops_predict_a_longer_time_unless_a_load_hides_them() {
    let dir = tempdir("profile-nops");
    let path = build("lds_stride", "gfx942", &dir);
    let mut before = Vec::new();
    let mut shadowed = Vec::new();
    for n in [0u32, 1, 4] {
        let (c, nops) = nop_cycles(&path, "nops", n);
        assert_eq!(nops, 16 * 8 * n as u64, "n = {n}: 16 waves × 8 × n s_nop");
        before.push(c);
        let (c, nops) = nop_cycles(&path, "shadowed", n);
        assert_eq!(nops, 16 * 8 * n as u64, "n = {n}");
        shadowed.push(c);
    }
    assert!(
        before.windows(2).all(|w| w[1] > w[0]),
        "cycles grow with the nops: {before:?}"
    );
    // A wave runs its nops one after another: 8 × 8 wait states per group.
    assert!(before[2] - before[0] >= 4 * 64, "{before:?}");
    // Between the load and its wait, the load's latency hides them.
    assert!(
        shadowed[2] - shadowed[0] < before[2] - before[0],
        "before the load {before:?}, in its shadow {shadowed:?}"
    );
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gcn-emu-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An instruction as the decoder gives it, with only a destination of
/// `count` registers.
fn ins(mnemonic: &str, count: u16) -> gcn_emu::decode::Instruction {
    use gcn_emu::decode::{Instruction, Operand, RegFile, Src};
    Instruction {
        addr: 0,
        mnemonic: mnemonic.into(),
        ops: vec![Src {
            op: Operand::Reg {
                file: RegFile::A,
                index: 0,
                count,
            },
            neg: false,
            abs: false,
            sext: false,
        }],
        mods: vec![],
        words: vec![],
        text: mnemonic.into(),
    }
}

/// MFMA shapes from the mnemonic and destination, and the cycles the
/// device table's peak rates give, against LLVM's SISchedule.td
/// (SIDPGFX940FullSpeedModel: `32X32X8` f16 8 passes, `16X16X16` 4 passes,
/// `32X32X16` fp8 8 passes, `32X32X2` f32 16 passes; 4 cycles a pass).
#[test]
fn mfma_flops_and_cycles_agree_with_llvm_passes() {
    use gcn_emu::profile::counters::{Mfma, MfmaType};
    let mi300x = Device::by_name("mi300x").unwrap();
    for (m, regs, shape, ty, passes) in [
        (
            "v_mfma_f32_32x32x8_f16",
            16,
            (32, 32, 8, 1),
            MfmaType::F16,
            8,
        ),
        (
            "v_mfma_f32_16x16x16_bf16",
            4,
            (16, 16, 16, 1),
            MfmaType::F16,
            4,
        ),
        (
            "v_mfma_f32_32x32x16_fp8_fp8",
            16,
            (32, 32, 16, 1),
            MfmaType::F8,
            8,
        ),
        (
            "v_mfma_f32_32x32x2_f32",
            16,
            (32, 32, 2, 1),
            MfmaType::F32,
            16,
        ),
        (
            "v_mfma_f32_32x32x1_2b_f32",
            32,
            (32, 32, 1, 2),
            MfmaType::F32,
            16,
        ),
    ] {
        let x = Mfma::of(&ins(m, regs)).unwrap_or_else(|| panic!("{m}"));
        assert_eq!((x.m, x.n, x.k, x.blocks), shape, "{m}");
        assert_eq!(x.ty, ty, "{m}");
        let cycles = mi300x.mfma_cycles(x.ty, x.flops());
        assert!(
            (cycles - 4.0 * passes as f64).abs() < 0.05 * cycles,
            "{m}: {cycles} cycles, LLVM {passes} passes"
        );
    }
    assert!(Mfma::of(&ins("v_add_f32_e32", 1)).is_none());
}

/// Distinct 64- and 128-byte lines of one wave's dword loads at
/// `stride`, counted directly from the lane addresses.
fn lines(stride: u64, span: u64, line: u64) -> u64 {
    let mut l: Vec<u64> = (0..64).map(|i| (i * stride % span) * 4 / line).collect();
    l.sort_unstable();
    l.dedup();
    l.len() as u64
}

#[test]
fn global_lines_of_unit_strided_and_scattered_loads() {
    let dir = tempdir("profile-gather");
    let path = build("lds_stride", "gfx942", &dir);
    let l = load(&path, "gather");
    let k = l
        .program
        .instructions
        .iter()
        .position(|i| i.mnemonic.starts_with("global_load"))
        .unwrap();
    // (stride, span): unit, strided (2 … 32 dwords, 64-byte and 128-byte
    // apart and beyond), scattered (an odd stride over 64 dwords).
    for (stride, span) in [
        (1, 4096),
        (2, 4096),
        (4, 4096),
        (16, 4096),
        (32, 4096),
        (64, 4096),
        (37, 64),
        (5, 256),
    ] {
        let mem = Memory::new();
        let out = mem.alloc_bytes("out", &[0; 256]);
        let input: Vec<f32> = (0..4096).map(|i| i as f32).collect();
        let inp = mem.alloc_bytes("in", &f32s(&input));
        let args = [
            ArgValue::Pointer(out),
            ArgValue::Pointer(inp),
            ArgValue::Bytes((stride as u32).to_le_bytes().to_vec()),
            ArgValue::Bytes((span as u32).to_le_bytes().to_vec()),
        ];
        let t = traces(&l, [1, 1, 1], [64, 1, 1], &args, &mem);
        let c = Counters::of(&l.program, &t);
        let got = to_f32(&mem.contents(out).unwrap());
        for i in 0..64u64 {
            assert_eq!(got[i as usize], ((i * stride) % span) as f32);
        }
        let what = format!("stride {stride} span {span}");
        assert_eq!(c.per_instruction[k].global_bytes, 256, "{what}");
        // The buffer is 256-byte aligned (the allocator's), so lines of the
        // offsets are lines of the addresses.
        assert_eq!(inp % 256, 0);
        assert_eq!(
            c.per_instruction[k].lines64,
            lines(stride, span, 64),
            "{what}: 64-byte lines"
        );
        assert_eq!(
            c.per_instruction[k].lines128,
            lines(stride, span, 128),
            "{what}: 128-byte lines"
        );
    }
}

/// Bank conflicts cost time: the stride-32 access (32-way on gfx942)
/// predicts more cycles than the conflict-free stride 1, by the conflict
/// cycles of its write and read, less at most 4 per access (a wave resumes
/// at its SIMD's next issue slot, one every 4 cycles).
#[test]
fn bank_conflicts_predict_a_longer_time() {
    let dir = tempdir("profile-conflict-time");
    let path = build("lds_stride", "gfx942", &dir);
    let l = load(&path, "stride_b32");
    let device = Device::by_name("mi300x").unwrap();
    let cycles = |stride: u32| {
        let mem = Memory::new();
        let out = mem.alloc_bytes("out", &[0; 256]);
        let args = [
            ArgValue::Pointer(out),
            ArgValue::Bytes(stride.to_le_bytes().to_vec()),
        ];
        let t = traces(&l, [1, 1, 1], [64, 1, 1], &args, &mem);
        let c = Counters::of(&l.program, &t);
        let timing = time_launch(&l.program, &device, &t, 1, 1, 0, &Assumptions::default());
        (timing.round.cycles, c.total.lds_bank_conflicts)
    };
    let (free, none) = cycles(1);
    let (conflicted, conflicts) = cycles(32);
    assert_eq!(none, 0);
    assert_eq!(conflicts, 2 * 62);
    assert!(
        conflicted + 8 >= free + conflicts && conflicted <= free + conflicts + 8,
        "stride 32: {conflicted} cycles, stride 1: {free}, {conflicts} conflict cycles"
    );
}
