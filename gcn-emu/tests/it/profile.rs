//! `gcn_emu::profile`: exact counters of real kernels (clang-22) whose
//! answers are known by construction, and the timing model's response to
//! an inserted stall.

use crate::common;

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
                // The closed form agrees with the rule applied lane by lane
                // (the write's and the read's addresses: the same set).
                let first: Vec<u64> = (0..64).map(|i| i * stride * d).collect();
                let phases = 64 * d / banks;
                assert_eq!(
                    lds_cycles_by_rule_wide(banks as usize, d, &first) - phases,
                    want,
                    "{target} {kernel} stride {stride}: the rule lane by lane"
                );
                let neighbour: Vec<u64> = (0..64).map(|i| (i ^ 1) * stride * d).collect();
                assert_eq!(
                    lds_cycles_by_rule_wide(banks as usize, d, &neighbour) - phases,
                    want,
                    "{target} {kernel} stride {stride}: the read, lane by lane"
                );
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
    let dst = Src {
        op: Operand::Reg {
            file: RegFile::A,
            index: 0,
            count,
        },
        neg: false,
        abs: false,
        sext: false,
    };
    Instruction::new(0, mnemonic, vec![dst], vec![], vec![], mnemonic.into())
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

// ---------------------------------------------------------------------
// The machinery is consistent: latency microkernels (tests/kernels/
// chase.hip) timed by the model reproduce the device table's figures.
// Every expectation is computed from the device table (and the model's
// stated assumptions) at run time, never written down.

/// A deterministic permutation of `0..n` (a linear congruential shuffle),
/// the order a pointer chase visits its slots in.
fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    let mut x = seed;
    for i in (1..n).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.swap(i, (x >> 33) as usize % (i + 1));
    }
    v
}

/// The chase steps of a kernel: the instructions `MNEMONIC vN, vN, …`
/// (the load whose address is its own destination), each followed by its
/// `s_waitcnt`; their indices and their waits'.
fn chase_steps(l: &Loaded, mnemonic: &str) -> Vec<(usize, usize)> {
    let is = &l.program.instructions;
    let v: Vec<(usize, usize)> = (0..is.len() - 1)
        .filter(|&k| {
            is[k].mnemonic == mnemonic && is[k].ops.len() >= 2 && is[k].ops[0].op == is[k].ops[1].op
        })
        .map(|k| {
            assert!(
                is[k + 1].mnemonic == "s_waitcnt",
                "{}: `{}` is not followed by its wait",
                l.name,
                is[k].text
            );
            (k, k + 1)
        })
        .collect();
    assert_eq!(v.len(), 8, "{}: 8 chase steps in the loop body", l.name);
    v
}

/// One workgroup's schedule on one CU of `device`.
fn schedule(
    l: &Loaded,
    t: &[WorkgroupTrace],
    device: &Device,
) -> gcn_emu::profile::model::CuTiming {
    gcn_emu::profile::model::simulate_cu(&l.program, device, t, 1, &Assumptions::default())
}

/// Stall cycles of the chase waits, summed over their executions.
fn wait_stalls(c: &gcn_emu::profile::model::CuTiming, steps: &[(usize, usize)]) -> u64 {
    steps
        .iter()
        .map(|&(_, w)| c.stalls[w].iter().sum::<u64>())
        .sum()
}

/// The LDS cycles of one wave-instruction whose lane `i` reads the dword
/// at `dwords[i]`, by the cited rule computed here: phases of `banks`
/// lanes (b32), in each the most distinct dwords one bank holds.
fn lds_cycles_by_rule(banks: usize, dwords: &[u64]) -> u64 {
    lds_cycles_by_rule_wide(banks, 1, dwords)
}

/// The same for lanes of `d` dwords each from `first[i]`: phases of
/// `banks / d` lanes (a phase moves `banks` dwords).
fn lds_cycles_by_rule_wide(banks: usize, d: u64, first: &[u64]) -> u64 {
    first
        .chunks(banks / d as usize)
        .map(|phase| {
            let mut per_bank = vec![std::collections::BTreeSet::new(); banks];
            for &f in phase {
                for w in f..f + d {
                    per_bank[(w % banks as u64) as usize].insert(w);
                }
            }
            per_bank.iter().map(|s| s.len() as u64).max().unwrap_or(0)
        })
        .sum()
}

/// A chase's layout: its name, its slots, and the dword of lane `i` in
/// slot `s`.
type Layout = (&'static str, usize, fn(u64, u64) -> u64);

/// LDS pointer chase, one wave: each step (a `ds_read_b32` of the address
/// the previous one returned, then `s_waitcnt lgkmcnt(0)`) takes the
/// device's LDS latency plus the access's cycles in the LDS pipe (its
/// phases and bank conflicts, by the bank rule computed in the test); the
/// wave resumes at its SIMD's next issue slot (one in 4 cycles), so a step
/// takes at most 3 more. Conflict-free (lane i in bank i) and 32-way
/// conflicted (every lane in bank 0 or 32), on gfx942 and gfx950.
#[test]
fn lds_pointer_chase_takes_the_device_lds_latency_plus_the_bank_rule() {
    let dir = tempdir("profile-lds-chase");
    for (target, device) in [("gfx942", "mi300x"), ("gfx950", "mi355x")] {
        let device = Device::by_name(device).unwrap();
        let banks = device.lds_banks.value as usize;
        let path = build("chase", target, &dir);
        let l = load(&path, "lds_chase");
        let steps = chase_steps(&l, "ds_read_b32");
        // (name, slots, dword of lane i in slot s): the chain of lane i
        // visits the slots in a permuted order.
        let layouts: [Layout; 2] = [
            ("conflict-free", 16, |i, s| s * 64 + i),
            ("conflicted", 4, |i, s| s * 2048 + i * 32),
        ];
        for (what, slots, at) in layouts {
            let order = permutation(slots, 7);
            let n = (0..64).map(|i| at(i, slots as u64 - 1) + 1).max().unwrap() as usize;
            let mut table = vec![0u32; n];
            for i in 0..64u64 {
                for k in 0..slots {
                    let (here, next) = (order[k], order[(k + 1) % slots]);
                    table[at(i, here as u64) as usize] = 4 * at(i, next as u64) as u32;
                }
            }
            let start: Vec<u32> = (0..64).map(|i| 4 * at(i, order[0] as u64) as u32).collect();
            let dwords: Vec<u64> = (0..64).map(|i| at(i, order[0] as u64)).collect();
            let cycles = lds_cycles_by_rule(banks, &dwords);
            let expect = cycles + device.lds_latency.value.round() as u64;
            {
                let n_steps = 64u32;
                let mem = Memory::new();
                let out = mem.alloc_bytes("out", &[0; 256]);
                let tab = mem.alloc_bytes("table", &u32s(&table));
                let st = mem.alloc_bytes("start", &u32s(&start));
                let args = [
                    ArgValue::Pointer(out),
                    ArgValue::Pointer(tab),
                    ArgValue::Pointer(st),
                    ArgValue::Bytes((n as u32).to_le_bytes().to_vec()),
                    ArgValue::Bytes(n_steps.to_le_bytes().to_vec()),
                ];
                let t = traces(&l, [1, 1, 1], [64, 1, 1], &args, &mem);
                // It chased: lane i ends where its chain is after n_steps.
                let got = to_u32(&mem.contents(out).unwrap());
                for i in 0..64u64 {
                    let slot = order[n_steps as usize % slots] as u64;
                    assert_eq!(
                        got[i as usize],
                        4 * at(i, slot) as u32,
                        "{target} {what} lane {i}"
                    );
                }
                let c = Counters::of(&l.program, &t);
                let executed: u64 = steps
                    .iter()
                    .map(|&(_, w)| c.per_instruction[w].executed)
                    .sum();
                assert_eq!(executed, n_steps as u64, "{target} {what}");
                // Every step's access costs what the rule says.
                let lds: u64 = steps
                    .iter()
                    .map(|&(k, _)| c.per_instruction[k].lds_cycles)
                    .sum();
                assert_eq!(lds, cycles * n_steps as u64, "{target} {what}: LDS cycles");
                let timing = schedule(&l, &t, &device);
                let stall = wait_stalls(&timing, &steps);
                // A step: the load's issue (4 cycles) and its wait's stall.
                let per_step = (stall + 4 * n_steps as u64) as f64 / n_steps as f64;
                eprintln!("{target} {what}: {per_step} cycles per step; LDS latency {} + {cycles} cycles in the pipe", device.lds_latency.value);
                assert!(
                    per_step >= expect as f64 && per_step <= expect as f64 + 3.0,
                    "{target} {what}: {per_step} cycles per step, expected {expect} (LDS latency {} + {cycles} pipe cycles) to {} (the next issue slot)",
                    device.lds_latency.value,
                    expect + 3
                );
            }
        }
    }
}

/// Global pointer chase, one wave (every lane on the same chain, one
/// 64-byte line per load): a ring of `slots` lines, each its own line,
/// visited in a permuted order. The cycles of the steps from `from` to
/// `to` (the stall of each step's `s_waitcnt vmcnt(0)` plus the load's
/// issue), from two runs that differ only in those steps; and the lines
/// the schedule looked up at each level (L1, L2, HBM) in those steps.
fn global_chase(l: &Loaded, device: &Device, slots: usize, from: u32, to: u32) -> (f64, [u64; 3]) {
    let steps = chase_steps(l, "global_load_dword");
    let order = permutation(slots, 11);
    // 16 dwords (64 bytes) a slot.
    let mut ring = vec![0u32; slots * 16];
    for k in 0..slots {
        let (here, next) = (order[k], order[(k + 1) % slots]);
        ring[here * 16] = (next * 64) as u32;
    }
    // The chain starts at offset 0: rotate the order to start at slot 0.
    let first = order.iter().position(|&s| s == 0).unwrap();
    let run = |n: u32| {
        let mem = Memory::new();
        let out = mem.alloc_bytes("out", &[0; 256]);
        let r = mem.alloc_bytes("ring", &u32s(&ring));
        let args = [
            ArgValue::Pointer(out),
            ArgValue::Pointer(r),
            ArgValue::Bytes(n.to_le_bytes().to_vec()),
        ];
        let t = traces(l, [1, 1, 1], [64, 1, 1], &args, &mem);
        let got = to_u32(&mem.contents(out).unwrap());
        let end = order[(first + n as usize) % slots] * 64;
        assert_eq!(
            got[0] as usize, end,
            "{}: the chase ends where the ring says",
            l.name
        );
        let c = Counters::of(&l.program, &t);
        let lines: u64 = steps
            .iter()
            .map(|&(k, _)| c.per_instruction[k].lines64)
            .sum();
        assert_eq!(lines, n as u64, "one 64-byte line a step");
        let timing = schedule(l, &t, device);
        (wait_stalls(&timing, &steps), timing.lines_by_level)
    };
    let (a, la) = run(from);
    let (b, lb) = run(to);
    let n = (to - from) as f64;
    let levels = [lb[0] - la[0], lb[1] - la[1], lb[2] - la[2]];
    ((b - a) as f64 / n + 4.0, levels)
}

/// Global pointer chase whose ring fits the L1, fits the L2 only, or
/// fits neither: after the first (cold) pass each step takes the device
/// table's L1, L2 or HBM latency, plus the line's cycle on the CU's
/// address path, plus at most 3 (the wave resumes at its SIMD's next
/// issue slot). The L1's size is the model's stated assumption, the
/// L2's the device table's.
#[test]
fn global_pointer_chase_takes_the_device_l1_l2_and_hbm_latencies() {
    let dir = tempdir("profile-global-chase");
    let path = build("chase", "gfx942", &dir);
    let l = load(&path, "global_chase");
    let device = Device::by_name("mi300x").unwrap();
    let l1_lines = (Assumptions::default().l1_bytes / 64) as usize;
    let l2_lines = (device.l2_bytes.value / 64.0) as usize;
    let round8 = |n: usize| n.div_ceil(8) as u32 * 8;
    // (what, ring slots, measured steps, the level, its latency)
    let cases = [
        ("fits L1", l1_lines / 8, 0usize, device.l1_latency),
        ("fits L2, not L1", 2 * l1_lines, 1, device.l2_latency),
        (
            "fits neither",
            l2_lines + l2_lines / 16,
            2,
            device.hbm_latency,
        ),
    ];
    for (what, slots, level, latency) in cases {
        // The second pass over the ring (the first touches every line).
        let from = round8(slots);
        let to = from + round8(slots.min(4096));
        let (per_step, levels) = global_chase(&l, &device, slots, from, to);
        let n = (to - from) as u64;
        let mut want = [0u64; 3];
        want[level] = n;
        assert_eq!(
            levels, want,
            "{what}: lines by level (L1, L2, HBM) in the measured steps"
        );
        let expect = latency.value.round() + 1.0;
        eprintln!(
            "{what}: {per_step} cycles per step; latency {} + 1 line",
            latency.value
        );
        assert!(
            per_step >= expect && per_step <= expect + 3.0,
            "{what}: {per_step} cycles per step, expected {expect} (latency {} + 1 line) to {}",
            latency.value,
            expect + 3.0
        );
    }
}

/// A run of `kernel` (16 MFMAs in a chain) by `waves` waves of one
/// workgroup: for each MFMA that directly follows another, the cycles from
/// the previous one's issue to its own (its stall plus the previous one's
/// 4-cycle issue), averaged over the waves; the CU's cycles; and the cycles
/// one MFMA holds the matrix core by the device table (its FLOPs over the
/// per-SIMD peak rate of its type), rounded as the model rounds.
fn mfma_run(l: &Loaded, device: &Device, waves: u32) -> (Vec<f64>, u64, f64, u64) {
    use gcn_emu::profile::counters::Mfma;
    let is = &l.program.instructions;
    let mfmas: Vec<usize> = (0..is.len())
        .filter(|&k| is[k].mnemonic.starts_with("v_mfma"))
        .collect();
    assert_eq!(mfmas.len(), 16, "{}: 16 MFMAs", l.name);
    let m = Mfma::of(&is[mfmas[0]]).unwrap();
    let pass = device.mfma_cycles(m.ty, m.flops()).round();
    let mem = Memory::new();
    let out = mem.alloc_bytes("out", &vec![0; 4 * 64 * waves as usize]);
    // b, then 4 × a, each half 0x3c3c (1.0078125).
    let ab = mem.alloc_bytes("ab", &vec![0x3c; 2 * 4 * 64 * 5]);
    let args = [ArgValue::Pointer(out), ArgValue::Pointer(ab)];
    let t = traces(l, [1, 1, 1], [64 * waves, 1, 1], &args, &mem);
    // It computed: lane sums of 16 × K products of 1.0078125².
    let got = to_f32(&mem.contents(out).unwrap());
    assert!(got.iter().all(|&x| x > 0.0), "{}: {got:?}", l.name);
    let c = Counters::of(&l.program, &t);
    assert_eq!(c.total.mfma_ops, 16 * waves as u64, "{}", l.name);
    assert_eq!(c.total.flops, 16 * waves as u64 * m.flops(), "{}", l.name);
    let timing = schedule(l, &t, device);
    let periods = mfmas
        .iter()
        .filter(|&&k| is[k - 1].mnemonic.starts_with("v_mfma"))
        .map(|&k| timing.stalls[k].iter().sum::<u64>() as f64 / waves as f64 + 4.0)
        .collect();
    (periods, timing.cycles, pass, c.total.lines64 / waves as u64)
}

/// A chain of MFMAs, each one's srcC the previous one's result (the
/// compiler puts no wait states between them), and four independent
/// accumulators in turn. On one wave each MFMA issues when its SIMD's
/// matrix core is free, after the cycles the device table's peak rate
/// gives (for `v_mfma_f32_32x32x8_f16` on MI300X, LLVM's 8 passes of 4
/// cycles: `mfma_flops_and_cycles_agree_with_llvm_passes`), plus at most
/// 3 (the next issue slot). Four waves, one on each SIMD, take the one
/// wave's time (four matrix cores) give or take the issue slots; eight
/// waves, two on each SIMD, share each core: 16 more MFMAs a core.
#[test]
fn mfma_chains_take_the_device_table_cycles_per_simd() {
    let dir = tempdir("profile-mfma-chain");
    for (target, device) in [("gfx942", "mi300x"), ("gfx950", "mi355x")] {
        let device = Device::by_name(device).unwrap();
        let path = build("chase", target, &dir);
        for kernel in ["mfma_dependent", "mfma_independent"] {
            let l = load(&path, kernel);
            let what = format!("{target} {kernel}");
            let (periods, one, pass, lines) = mfma_run(&l, &device, 1);
            assert!(periods.len() >= 8, "{what}: back-to-back MFMAs");
            eprintln!("{what}: MFMAs {periods:?} cycles apart; the table's {pass} cycles an MFMA");
            for p in &periods {
                assert!(
                    *p >= pass && *p <= pass + 3.0,
                    "{what}: MFMAs {p} cycles apart, expected the table's {pass} to {}",
                    pass + 3.0
                );
            }
            let (_, four, _, _) = mfma_run(&l, &device, 4);
            let (_, eight, _, _) = mfma_run(&l, &device, 8);
            eprintln!(
                "{what}: {one} cycles on 1 wave, {four} on 4, {eight} on 8; {lines} lines a wave"
            );
            // Four matrix cores: the other waves delay the last one by no
            // more than their lines on the CU's address path (one a cycle)
            // and the issue slots.
            assert!(
                four >= one && four <= one + 3 * lines + 4,
                "{what}: 4 waves {four} cycles, 1 wave {one}"
            );
            // Two waves a core: 16 more MFMAs on each, each a slot late at
            // most, the 4 more waves' lines on the address path.
            let more = eight - four;
            let most = 16 * (pass as u64 + 3) + 4 * lines;
            assert!(
                more as f64 >= 16.0 * pass && more <= most,
                "{what}: 8 waves take {more} cycles more than 4, expected 16 × {pass} to {most}"
            );
        }
    }
}

/// Every MFMA of the instruction table (AMD's XML, with LLVM 22's
/// scheduling model per target): the cycles the device table's peak rates
/// give against LLVM's pass count (4 cycles a pass). They must agree for
/// every dense single-block MFMA of gfx942 (MI300X), and of gfx950
/// (MI355X) for those new in gfx950 (its double-rate shapes). The others
/// are listed (the book's profile guide says which and why): multi-block
/// and sparse forms, gfx950's gfx942-era MFMAs, f8f6f4 by format.
#[test]
fn mfma_cycles_of_the_device_table_against_llvm_passes_for_every_mfma() {
    use gcn_emu::profile::counters::Mfma;
    for (target, device) in [("gfx942", "mi300x"), ("gfx950", "mi355x")] {
        let device = Device::by_name(device).unwrap();
        let (mut agree, mut differ) = (0, Vec::new());
        for p in gcn_emu::isa::TABLE.iter() {
            let dense = p.name.starts_with("v_mfma");
            if !(dense || p.name.starts_with("v_smfmac")) || !p.on(target) {
                continue;
            }
            let Some(s) = p.sched_on(target) else {
                continue;
            };
            let bits = p.operands.first().map_or(32, |o| o.bits);
            let m = Mfma::of(&ins(p.name, bits.div_ceil(32)))
                .unwrap_or_else(|| panic!("{target}: {}: no shape", p.name));
            let cycles = device.mfma_cycles(m.ty, m.flops()).round() as u64;
            let checked = dense
                && m.blocks == 1
                && !p.name.contains("f8f6f4")
                && (target == "gfx942" || p.targets == gcn_emu::isa::T_GFX950);
            if cycles == 4 * s.issue as u64 {
                agree += 1;
            } else {
                assert!(
                    !checked,
                    "{target}: {}: {cycles} cycles by the device table, LLVM {} passes",
                    p.name, s.issue
                );
                differ.push(format!(
                    "{}: {cycles} cycles, LLVM {} passes",
                    p.name, s.issue
                ));
            }
        }
        assert!(agree >= 10, "{target}: {agree} MFMAs agree");
        eprintln!(
            "{target}: {agree} agree; {} differ:\n{}",
            differ.len(),
            differ.join("\n")
        );
    }
}

/// Scattered loads of dwords and of 16-byte elements at random indices (a
/// seeded shuffle, the same on gfx942 and gfx950), and unit-stride ones:
/// the 64- and 128-byte lines of each wave-instruction are the distinct
/// lines of its lanes' byte ranges, counted here from the indices.
#[test]
fn global_lines_of_scattered_dword_and_dwordx4_loads_on_gfx942_and_gfx950() {
    let dir = tempdir("profile-scatter");
    for target in ["gfx942", "gfx950"] {
        let path = build("scatter", target, &dir);
        for (kernel, bytes) in [("gather_idx", 4u64), ("gather4_idx", 16)] {
            let l = load(&path, kernel);
            // The element's load: the last (the first loads the index).
            let k = l
                .program
                .instructions
                .iter()
                .rposition(|i| i.mnemonic.starts_with("global_load"))
                .unwrap();
            let n = 4096usize;
            for (what, idx) in [
                ("unit", (0..64u32).collect::<Vec<_>>()),
                (
                    "scattered",
                    permutation(n, 5)[..64].iter().map(|&x| x as u32).collect(),
                ),
                ("one element", vec![7u32; 64]),
            ] {
                let mem = Memory::new();
                let out = mem.alloc_bytes("out", &vec![0; 64 * bytes as usize]);
                let input: Vec<f32> = (0..n * bytes as usize / 4).map(|i| i as f32).collect();
                let inp = mem.alloc_bytes("in", &f32s(&input));
                let ix = mem.alloc_bytes("idx", &u32s(&idx));
                let args = [
                    ArgValue::Pointer(out),
                    ArgValue::Pointer(inp),
                    ArgValue::Pointer(ix),
                ];
                let t = traces(&l, [1, 1, 1], [64, 1, 1], &args, &mem);
                let c = Counters::of(&l.program, &t);
                let got = to_f32(&mem.contents(out).unwrap());
                let per = bytes as usize / 4;
                for lane in 0..64 {
                    assert_eq!(
                        got[lane * per],
                        (idx[lane] as usize * per) as f32,
                        "{target} {kernel} {what}"
                    );
                }
                assert_eq!(inp % 256, 0);
                let lines = |line: u64| {
                    let mut v: Vec<u64> = idx
                        .iter()
                        .flat_map(|&e| {
                            let a = e as u64 * bytes;
                            a / line..=(a + bytes - 1) / line
                        })
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    v.len() as u64
                };
                let s = &c.per_instruction[k];
                let w = format!(
                    "{target} {kernel} {what}: `{}`",
                    l.program.instructions[k].text
                );
                assert_eq!(s.global_bytes, 64 * bytes, "{w}");
                assert_eq!(s.lines64, lines(64), "{w}: 64-byte lines");
                assert_eq!(s.lines128, lines(128), "{w}: 128-byte lines");
            }
        }
    }
}
