//! HIP kernels compiled with clang-22 for gfx90a, gfx942 and gfx950, run in
//! the emulator and compared with Rust references: bit-exact where the math
//! is exact (integer math, IEEE-rounded f32 add/mul/fma/div/sqrt, LDS,
//! cross-lane moves, atomics, buffer bounds).

use crate::common;
use common::*;

use gcn_emu::dispatch::{run, ArgValue, Launch};
use gcn_emu::memory::Memory;
use gcn_emu::sanitize::{Checks, Kind};

#[test]
fn saxpy_matches_the_reference_bit_for_bit() {
    let dir = tempfile_dir();
    let objects: Vec<(String, std::path::PathBuf)> = TARGETS
        .iter()
        .map(|t| (t.to_string(), build("saxpy", t, &dir)))
        .chain(
            ["gfx90a", "gfx942"]
                .iter()
                .map(|t| (format!("corpus {t}"), assemble_corpus("saxpy", t, &dir))),
        )
        .collect();
    for (t, obj) in &objects {
        let l = load(obj, "saxpy");
        let n = 1000u32;
        let mut r = Rng(1);
        let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
        let y: Vec<f32> = (0..n).map(|_| r.f32()).collect();
        let a = 0.75f32;
        let (bufs, _) = launch(
            &l,
            [n.div_ceil(256), 1, 1],
            [256, 1, 1],
            vec![
                A::Val(a.to_le_bytes().to_vec()),
                A::Buf(f32s(&x)),
                A::Buf(f32s(&y)),
                A::Val(n.to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = to_f32(&bufs[1]);
        for i in 0..n as usize {
            // v_fmac_f32: one rounding, as f32::mul_add.
            assert_eq!(
                got[i].to_bits(),
                a.mul_add(x[i], y[i]).to_bits(),
                "{t}: y[{i}]"
            );
        }
        assert_eq!(to_f32(&bufs[0]), x, "{t}: x untouched");
    }
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "gcn-emu-test-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn reduce_sums_each_block_through_lds_and_barriers() {
    let dir = tempfile_dir();
    // Freshly compiled for three targets (reduce_sync.hip: the corpus'
    // reduce.hip with __syncthreads()), and the corpus' committed dumps
    // (tests/corpus/hip/{gfx90a,gfx942}/reduce.s) assembled. The dumps use a
    // bare s_barrier with the LDS write before it still in flight: their
    // sums are right in the emulator, but the sanitizer's `races` check
    // reports the missing `s_waitcnt lgkmcnt(0)` (checked below); the other
    // checks find nothing.
    let objects: Vec<(String, std::path::PathBuf)> = TARGETS
        .iter()
        .map(|t| (t.to_string(), build("reduce_sync", t, &dir)))
        .chain(
            ["gfx90a", "gfx942"]
                .iter()
                .map(|t| (format!("corpus {t}"), assemble_corpus("reduce", t, &dir))),
        )
        .collect();
    for (t, obj) in &objects {
        let l = load(obj, "reduce");
        let n = 256 * 5 - 17;
        // Small integers: every partial sum is exact in f32, so the result
        // is bit-exact whatever the summation order.
        let mut r = Rng(7);
        let x: Vec<f32> = (0..n)
            .map(|_| (r.next_u32() % 201) as f32 - 100.0)
            .collect();
        let blocks = (n as u32).div_ceil(256);
        let args = || {
            vec![
                A::Buf(f32s(&x)),
                A::Buf(vec![0xAA; 4 * blocks as usize]),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ]
        };
        let mut lc = Launch::new([blocks, 1, 1], [256, 1, 1]);
        if t.starts_with("corpus") {
            lc.sanitize = Checks::parse("uninit,bounds,barriers,waits").unwrap();
            let mut racy = Launch::new([blocks, 1, 1], [256, 1, 1]);
            racy.sanitize = Checks::RACES;
            let mem = Memory::new();
            let vals = [
                ArgValue::Pointer(mem.alloc_bytes("x", &f32s(&x))),
                ArgValue::Pointer(mem.alloc_bytes("y", &vec![0; 4 * blocks as usize])),
                ArgValue::Bytes((n as u32).to_le_bytes().to_vec()),
            ];
            let k = l.co.kernel("reduce").unwrap();
            let s = run(&l.co, k, &l.program, &mem, &vals, &racy).unwrap();
            assert!(
                s.findings
                    .iter()
                    .any(|f| f.kind == Kind::StoreInFlightAtBarrier
                        && f.message.contains("needs `s_waitcnt lgkmcnt(0)`")),
                "{t}: {:?}",
                s.findings
            );
        }
        let (bufs, _) = launch_with(&l, lc, args()).unwrap();
        let got = to_f32(&bufs[1]);
        for b in 0..blocks as usize {
            let want: f32 = x[b * 256..((b + 1) * 256).min(n)].iter().sum();
            assert_eq!(got[b], want, "{t}: block {b}");
        }
    }
}

#[test]
fn reduce_of_random_floats_is_within_tree_rounding_of_f64() {
    let dir = tempfile_dir();
    let l = load(&build("reduce_sync", "gfx942", &dir), "reduce");
    let mut r = Rng(9);
    let x: Vec<f32> = (0..512).map(|_| r.f32()).collect();
    let (bufs, _) = launch(
        &l,
        [2, 1, 1],
        [256, 1, 1],
        vec![
            A::Buf(f32s(&x)),
            A::Buf(vec![0; 8]),
            A::Val(512u32.to_le_bytes().to_vec()),
        ],
    )
    .unwrap();
    let got = to_f32(&bufs[1]);
    for b in 0..2 {
        // The kernel's tree: partial[t] += partial[t + stride], stride 128..1.
        let mut p: Vec<f32> = x[b * 256..(b + 1) * 256].to_vec();
        let mut s = 128;
        while s > 0 {
            for t in 0..s {
                p[t] += p[t + s];
            }
            s /= 2;
        }
        assert_eq!(
            got[b].to_bits(),
            p[0].to_bits(),
            "block {b}: same tree, same roundings"
        );
        let exact: f64 = x[b * 256..(b + 1) * 256].iter().map(|&v| v as f64).sum();
        assert!(
            (got[b] as f64 - exact).abs() < 1e-4,
            "block {b}: {} vs {exact}",
            got[b]
        );
    }
}

#[test]
fn cross_lane_bpermute_readlane_dpp_swizzle_readfirstlane() {
    let dir = tempfile_dir();
    for t in TARGETS {
        let l = load(&build("crosslane", t, &dir), "crosslane");
        let waves = 3usize;
        let mut r = Rng(3);
        let x: Vec<u32> = (0..64 * waves).map(|_| r.next_u32()).collect();
        let (bufs, _) = launch(
            &l,
            [waves as u32, 1, 1],
            [64, 1, 1],
            vec![A::Buf(u32s(&x)), A::Buf(vec![0; 4 * 5 * 64 * waves])],
        )
        .unwrap();
        let got = to_u32(&bufs[1]);
        for w in 0..waves {
            let v = |lane: usize| x[w * 64 + lane];
            for lane in 0..64 {
                let g = w * 64 + lane;
                let o = &got[g * 5..g * 5 + 5];
                assert_eq!(o[0], v((lane + 1) % 64), "{t}: bpermute lane {g}");
                assert_eq!(o[1], v(7), "{t}: readlane lane {g}");
                // row_shr:1 with bound_ctrl: lane 0 of each row of 16 reads 0.
                let dpp = if lane % 16 == 0 { 0 } else { v(lane - 1) };
                assert_eq!(o[2], dpp, "{t}: dpp lane {g}");
                assert_eq!(o[3], v(lane ^ 1), "{t}: swizzle lane {g}");
                assert_eq!(o[4], v(0), "{t}: readfirstlane lane {g}");
            }
        }
    }
}

#[test]
fn atomics_histogram_and_max_in_lds_and_global_memory() {
    let dir = tempfile_dir();
    for t in TARGETS {
        let l = load(&build("atomics", t, &dir), "histogram");
        let n = 256 * 6 + 100;
        let mut r = Rng(11);
        let x: Vec<u32> = (0..n).map(|_| r.next_u32() >> 4).collect();
        let blocks = (n as u32).div_ceil(256);
        let (bufs, _) = launch(
            &l,
            [blocks, 1, 1],
            [256, 1, 1],
            vec![
                A::Buf(u32s(&x)),
                A::Buf(vec![0; 64]),
                A::Buf(vec![0; 4]),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let mut want = [0u32; 16];
        for v in &x {
            want[(v & 15) as usize] += 1;
        }
        assert_eq!(to_u32(&bufs[1]), want.to_vec(), "{t}: histogram");
        assert_eq!(to_u32(&bufs[2])[0], *x.iter().max().unwrap(), "{t}: max");
    }
}

#[test]
fn buffer_loads_past_num_records_read_zero_and_stores_are_dropped() {
    let dir = tempfile_dir();
    for t in TARGETS {
        let l = load(&build("buffer_oob", t, &dir), "buffer_oob");
        let x: Vec<u32> = (0..64).map(|i| 1000 + i).collect();
        let (n_in, n_out) = (40i32, 50i32);
        let poison = vec![0xEE; 256];
        let (bufs, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![
                A::Buf(u32s(&x)),
                A::Buf(poison),
                A::Val(n_in.to_le_bytes().to_vec()),
                A::Val(n_out.to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = to_u32(&bufs[1]);
        for i in 0..64 {
            let want = if i >= n_out as usize {
                0xEEEE_EEEE // dropped
            } else if i >= n_in as usize {
                1 // loaded 0, plus 1
            } else {
                x[i] + 1
            };
            assert_eq!(got[i], want, "{t}: out[{i}]");
        }
    }
}

#[test]
fn integer_and_float_math_matches_rust() {
    let dir = tempfile_dir();
    for t in TARGETS {
        let l = load(&build("math", t, &dir), "math");
        let n = 128 * 4 + 31;
        let mut r = Rng(5);
        let a: Vec<u32> = (0..n).map(|_| r.next_u32()).collect();
        let b: Vec<u32> = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    r.next_u32() % 50
                } else {
                    r.next_u32()
                }
            })
            .collect();
        let mut fr = |i: usize| match i % 7 {
            0 => r.f32() * 1e30,
            1 => r.f32() * 1e-30,
            2 => -0.0,
            _ => r.f32() * 100.0,
        };
        let x: Vec<f32> = (0..n).map(&mut fr).collect();
        let y: Vec<f32> = (0..n).map(|i| fr(i + 3)).collect();
        let z: Vec<f32> = (0..n).map(|i| fr(i + 5)).collect();
        let (bufs, _) = launch(
            &l,
            [(n as u32).div_ceil(128), 1, 1],
            [128, 1, 1],
            vec![
                A::Buf(u32s(&a)),
                A::Buf(u32s(&b)),
                A::Buf(f32s(&x)),
                A::Buf(f32s(&y)),
                A::Buf(f32s(&z)),
                A::Buf(vec![0; 4 * 6 * n]),
                A::Buf(vec![0; 4 * 6 * n]),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let io = to_u32(&bufs[5]);
        let fo = to_f32(&bufs[6]);
        for i in 0..n {
            let (av, bv) = (a[i], b[i] | 1);
            let wi = [
                av.wrapping_add(bv),
                av.wrapping_mul(bv),
                av / bv,
                av % bv,
                ((av as u64 * bv as u64) >> 32) as u32,
                av.wrapping_shl(bv & 31) ^ (av >> 3),
            ];
            assert_eq!(
                &io[i * 6..i * 6 + 6],
                &wi,
                "{t}: integers of element {i} ({av}, {bv})"
            );
            let (xv, yv, zv) = (x[i], y[i], z[i]);
            let wf = [
                xv.mul_add(yv, zv),
                xv / yv,
                xv.abs().sqrt(),
                xv.min(yv),
                av as i32 as f32,
                xv - yv,
            ];
            for k in 0..6 {
                let (g, w) = (fo[i * 6 + k], wf[k]);
                assert!(
                    g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan(),
                    "{t}: float op {k} of element {i} ({xv}, {yv}, {zv}): {g} vs {w}"
                );
            }
        }
    }
}

#[test]
fn lds_dma_buffer_and_global_loads_fill_lds_per_lane() {
    let dir = tempfile_dir();
    for t in TARGETS {
        let l = load(&build("lds_dma", t, &dir), "lds_dma");
        let x: Vec<u32> = (0..128).map(|i| 5000 + i).collect();
        let n = 50i32;
        let (bufs, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![
                A::Buf(u32s(&x)),
                A::Buf(vec![0xEE; 4 * 128]),
                A::Val(n.to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = to_u32(&bufs[1]);
        for lane in 0..64 {
            // Buffer path: in[lane + 4] (offset 16 bytes) while in range of n dwords, else 0.
            let want = if lane + 4 < n as usize {
                x[lane + 4]
            } else {
                0
            };
            assert_eq!(got[lane], want, "{t}: buffer LDS DMA lane {lane}");
            assert_eq!(
                got[64 + lane],
                x[64 + lane],
                "{t}: global LDS DMA lane {lane}"
            );
        }
    }
}

#[test]
fn flat_accesses_reach_lds_through_the_shared_aperture() {
    let dir = tempfile_dir();
    for t in TARGETS {
        let l = load(&build("flat_lds", t, &dir), "flat_lds");
        for use_lds in [1i32, 0] {
            let (bufs, _) = launch(
                &l,
                [1, 1, 1],
                [64, 1, 1],
                vec![
                    A::Buf(vec![0; 256]),
                    A::Buf(vec![0xEE; 256]),
                    A::Val(use_lds.to_le_bytes().to_vec()),
                ],
            )
            .unwrap();
            let out = to_u32(&bufs[1]);
            for (lane, &o) in out.iter().enumerate() {
                let j = (lane + 1) % 64;
                assert_eq!(
                    o,
                    3 * j as u32 + 1 + 100,
                    "{t}: use_lds {use_lds}, lane {lane}"
                );
            }
            // Through LDS the global buffer stays untouched.
            let g = to_u32(&bufs[0]);
            assert_eq!(
                g.iter().all(|&v| v == 0),
                use_lds == 1,
                "{t}: use_lds {use_lds}"
            );
        }
    }
}

/// Buffer atomics with and without return, past `num_records` (dropped,
/// returning 0) and a 64-bit compare-and-swap; gfx942/gfx950's packed bf16
/// global atomic; scalar atomics and a scalar store
/// (`tests/kernels/atomics2.hip`, inline asm assembled by clang-22).
#[test]
fn buffer_bf16_and_scalar_atomics_match_the_reference() {
    let dir = tempfile_dir();
    for t in TARGETS {
        let obj = build("atomics2", t, &dir);
        // Buffer: 12 dwords in the V#'s range (dword 11 and up are past it:
        // num_records 44 bytes), 16 allocated.
        let l = load(&obj, "buffer_atomics");
        let init: Vec<u32> = (0..16).map(|i| 100 * i).collect();
        let (bufs, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![
                A::Buf(u32s(&init)),
                A::Val(44u32.to_le_bytes().to_vec()),
                A::Buf(vec![0xff; 4 * 64]),
                A::Buf([42u64, 0].iter().flat_map(|v| v.to_le_bytes()).collect()),
            ],
        )
        .unwrap();
        let buf = to_u32(&bufs[0]);
        let old = to_u32(&bufs[1]);
        for j in 0..8usize {
            // Lanes j, j + 8, …: whatever order the lanes went in, sorted by
            // the value each saw they chain from the initial to the final value.
            let mut lanes: Vec<usize> = (j..64).step_by(8).collect();
            lanes.sort_by_key(|&l| old[l]);
            let mut at = init[j];
            for &l in &lanes {
                assert_eq!(old[l], at, "{t}: lane {l}'s return at dword {j}");
                at += l as u32 + 1;
            }
            assert_eq!(buf[j], at, "{t}: dword {j}");
        }
        // umax at dwords 8..12: 8, 9, 10 in range; 11 is past num_records.
        for j in 8..12usize {
            let want = if j < 11 {
                init[j].max(1000 + (j as u32 - 8) + 60)
            } else {
                init[j]
            };
            assert_eq!(buf[j], want, "{t}: umax dword {j}");
        }
        assert_eq!(&buf[12..], &init[12..], "{t}: past the buffer's range");
        let cas: Vec<u64> = bufs[2]
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(
            cas,
            vec![0x1122_3344_5566_7788, 42],
            "{t}: cmpswap_x2 and its return"
        );

        // Scalar memory.
        let l = load(&obj, "scalar_atomics");
        let (bufs, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![A::Buf(u32s(&[10, 0, 50, 9])), A::Buf(vec![0xff; 4])],
        )
        .unwrap();
        assert_eq!(
            to_u32(&bufs[0]),
            vec![15, 123, 77, 9],
            "{t}: s_atomic_add, s_store_dword, s_atomic_umax"
        );
        assert_eq!(
            to_u32(&bufs[1]),
            vec![10],
            "{t}: s_atomic_add's return (glc)"
        );

        if *t != "gfx90a" {
            // 16 lanes add (1.5, -0.25) to each of 4 pairs starting at (1, 2): exact.
            let l = load(&obj, "bf16_atomics");
            let one_two = 0x4000_3f80u32; // bf16 2.0 (hi), 1.0 (lo)
            let (bufs, _) =
                launch(&l, [1, 1, 1], [64, 1, 1], vec![A::Buf(u32s(&[one_two; 4]))]).unwrap();
            let want = (half::bf16::from_f32(2.0 - 4.0).to_bits() as u32) << 16
                | half::bf16::from_f32(1.0 + 24.0).to_bits() as u32;
            assert_eq!(
                to_u32(&bufs[0]),
                vec![want; 4],
                "{t}: global_atomic_pk_add_bf16"
            );
        }
    }
}

/// `s_setvskip` (the GCN ISA: VSKIP = S0[S1], vector instructions not issued),
/// gfx950's `v_cvt_f32_bf16` (against the `half` crate, every bf16),
/// gfx950's `v_permlane16_swap_b32`/`v_permlane32_swap_b32` (LLVM's
/// definition: odd rows of the first operand swap with even rows of the
/// second; rows 2–3 of the first with rows 0–1 of the second) and
/// `v_cvt_off_f32_i4` (the ISA's table: a signed nibble over 16).
#[test]
fn vskip_permlane_swaps_and_cvt_off_match_their_definitions() {
    let dir = tempfile_dir();
    let l = load(&build("atomics2", "gfx950", &dir), "permlane_swaps");
    let (bufs, _) = launch(&l, [1, 1, 1], [64, 1, 1], vec![A::Buf(vec![0xff; 4 * 256])]).unwrap();
    let out = to_u32(&bufs[0]);
    let (x, y) = (|l: usize| l as u32, |l: usize| 100 + l as u32);
    for l in 0..64 {
        let row = l / 16;
        // permlane16: x's odd rows get y's even rows and vice versa.
        let p0 = if row % 2 == 1 { y(l - 16) } else { x(l) };
        let p1 = if row % 2 == 0 { x(l + 16) } else { y(l) };
        let q0 = if row >= 2 { y(l - 32) } else { x(l) };
        let q1 = if row < 2 { x(l + 32) } else { y(l) };
        assert_eq!(
            [out[l], out[64 + l], out[128 + l], out[192 + l]],
            [p0, p1, q0, q1],
            "lane {l}"
        );
    }
    // gfx950's v_cvt_f32_bf16 on every bf16 (high halves set, to be ignored):
    // the f32 with the same top 16 bits (NaNs: quiet NaN).
    let l = load(&build("atomics2", "gfx950", &dir), "cvt_bf16");
    let input: Vec<u32> = (0..65536u32).map(|b| 0xdead_0000 | b).collect();
    let (bufs, _) = launch(
        &l,
        [256, 1, 1],
        [256, 1, 1],
        vec![A::Buf(u32s(&input)), A::Buf(vec![0xff; 4 * 65536])],
    )
    .unwrap();
    let got = to_f32(&bufs[1]);
    for (b, g) in got.iter().enumerate() {
        let want = half::bf16::from_bits(b as u16).to_f32();
        assert!(
            g.to_bits() == want.to_bits() || (want.is_nan() && g.is_nan()),
            "v_cvt_f32_bf16 of {b:#06x}: {g} vs {want}"
        );
    }
    for t in TARGETS {
        // s_setvskip (VSKIP = S0[S1]): bit 2 of 4 set skips the v_mov, bit 1 does not.
        let l = load(&build("atomics2", t, &dir), "vskip");
        let (bufs, _) = launch(&l, [1, 1, 1], [64, 1, 1], vec![A::Buf(vec![0xff; 512])]).unwrap();
        let out = to_u32(&bufs[0]);
        assert_eq!(
            (&out[..64], &out[64..]),
            (&[7u32; 64][..], &[42u32; 64][..]),
            "{t}: s_setvskip"
        );
        let l = load(&build("atomics2", t, &dir), "cvt_off");
        let input: Vec<u32> = (0..64).map(|i| 0xabcd_e000_u32 | i).collect();
        let (bufs, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![A::Buf(u32s(&input)), A::Buf(vec![0xff; 256])],
        )
        .unwrap();
        let got = to_f32(&bufs[1]);
        let table = [
            0.0, 0.0625, 0.125, 0.1875, 0.25, 0.3125, 0.375, 0.4375, -0.5, -0.4375, -0.375,
            -0.3125, -0.25, -0.1875, -0.125, -0.0625f32,
        ];
        for i in 0..64 {
            assert_eq!(
                got[i],
                table[i % 16],
                "{t}: v_cvt_off_f32_i4 of {:#x}",
                input[i]
            );
        }
    }
}

#[test]
fn a_private_array_in_scratch_matches_the_reference() {
    // gcn-emu/tests/kernels/private.hip: a 64-element array per work-item,
    // indexed at run time, so clang puts it in scratch: scratch_* on
    // gfx942/gfx950, MUBUF through the private segment buffer on gfx90a.
    let dir = tempfile_dir();
    for t in TARGETS {
        let obj = build("private", t, &dir);
        let l = load(&obj, "private_array");
        assert!(
            l.co.kernel("private_array")
                .unwrap()
                .descriptor
                .private_segment_fixed_size
                > 0,
            "{t}: uses scratch"
        );
        let scratch_ops = l
            .program
            .instructions
            .iter()
            .filter(|i| i.mnemonic.starts_with("scratch_") || i.text.contains("s[0:3], 0"))
            .count();
        assert!(scratch_ops > 0, "{t}: private accesses in the code");
        let n = 1000u32;
        let mut r = Rng(7);
        let input: Vec<u32> = (0..n).map(|_| r.next_u32()).collect();
        let (bufs, _) = launch(
            &l,
            [n.div_ceil(256), 1, 1],
            [256, 1, 1],
            vec![
                A::Buf(u32s(&input)),
                A::Buf(vec![0xff; 4 * n as usize]),
                A::Val(n.to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = to_u32(&bufs[1]);
        for i in 0..n as usize {
            let a = |j: usize| input[(i + j) % n as usize].wrapping_mul(j as u32 + 1);
            let k = (input[i] % 64) as usize;
            assert_eq!(got[i], a(k).wrapping_add(a((k + 7) % 64)), "{t}: out[{i}]");
        }
    }
}

#[test]
fn a_generic_pointer_reaches_private_memory_through_the_private_aperture() {
    // private_or_global: a pointer that is a private array (odd inputs) or
    // a global buffer (even ones) at run time, so clang accesses it with
    // flat_*; private addresses are in the aperture of src_private_base.
    let dir = tempfile_dir();
    for t in TARGETS {
        let obj = build("private", t, &dir);
        let l = load(&obj, "private_or_global");
        assert!(
            l.program
                .instructions
                .iter()
                .any(|i| i.mnemonic.starts_with("flat_store")),
            "{t}"
        );
        let n = 700u32;
        let mut r = Rng(3);
        let input: Vec<u32> = (0..n).map(|_| r.next_u32() >> 8).collect();
        let (bufs, _) = launch(
            &l,
            [n.div_ceil(256), 1, 1],
            [256, 1, 1],
            vec![
                A::Buf(u32s(&input)),
                A::Buf(vec![0xff; 4 * n as usize]),
                A::Buf(vec![0; 64 * n as usize]),
                A::Val(n.to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = to_u32(&bufs[1]);
        let spill = to_u32(&bufs[2]);
        for i in 0..n as usize {
            let m = (input[i] % 16 + 1) as usize;
            let want = (0..m).fold(0u32, |s, j| {
                s.wrapping_add(input[(i + j) % n as usize] + j as u32)
            });
            assert_eq!(got[i], want, "{t}: out[{i}]");
            // Odd inputs wrote the private array, even ones the buffer.
            let wrote = spill[i * 16..i * 16 + 16].iter().any(|&v| v != 0);
            assert_eq!(wrote, input[i] & 1 == 0, "{t}: spill[{i}]");
        }
    }
}

#[test]
fn a_disassembler_that_does_not_finish_is_killed_at_the_time_limit() {
    // A stand-in for llvm-objdump that never answers (the real one cannot be
    // made to hang on demand): Program::disassemble_within kills it and
    // says so, instead of waiting forever.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile_dir();
    let obj = build("saxpy", "gfx942", &dir);
    let co = gcn_emu::load::CodeObject::read_file(&obj).unwrap();
    let k = co.kernel("saxpy").unwrap().clone();
    let tool = dir.join("hanging-objdump");
    std::fs::write(&tool, "#!/bin/sh\nexec sleep 60\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let start = std::time::Instant::now();
    let e = gcn_emu::decode::Program::disassemble_within(
        &co,
        &k,
        &tool,
        std::time::Duration::from_secs(1),
    )
    .unwrap_err()
    .to_string();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert!(
        e.contains("did not finish within 1 s") && e.contains("it was killed"),
        "{e}"
    );
    // The real one, with the same limit's default, decodes the kernel.
    let objdump = gcn_emu::decode::find_objdump(None).unwrap();
    let p = gcn_emu::decode::Program::disassemble_within(
        &co,
        &k,
        &objdump,
        gcn_emu::decode::DISASSEMBLE_TIMEOUT,
    )
    .unwrap();
    assert!(p.instructions.iter().any(|i| i.mnemonic == "s_endpgm"));
}

#[test]
fn a_disassembler_killed_at_the_time_limit_takes_its_children_with_it() {
    // The runner is gcn-raw's (gcn-patch's): the stand-in's whole process
    // group is killed. The decoder's own runner killed only the process it
    // started, and a child it had forked (here a `sleep`) lived on.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile_dir();
    let obj = build("saxpy", "gfx942", &dir);
    let co = gcn_emu::load::CodeObject::read_file(&obj).unwrap();
    let k = co.kernel("saxpy").unwrap().clone();
    let tool = dir.join("forking-objdump");
    let pid_file = dir.join("child.pid");
    std::fs::write(
        &tool,
        format!(
            "#!/bin/sh\nsleep 60 &\necho $! > '{}'\nwait\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = gcn_emu::decode::Program::disassemble_within(
        &co,
        &k,
        &tool,
        std::time::Duration::from_secs(1),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("did not finish within 1 s"), "{e}");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc = std::path::PathBuf::from(format!("/proc/{}/stat", pid.trim()));
    // Gone, or a zombie waiting for init to reap it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let state = std::fs::read_to_string(&proc).unwrap_or_default();
        let state = state.rsplit(')').next().unwrap_or("").trim_start();
        if state.is_empty() || state.starts_with('Z') || state.starts_with('X') {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the disassembler's child {} still runs: {state}",
            pid.trim()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn packed_bf16_and_buffer_atomics_add_exactly() {
    // gcn-emu/tests/kernels/atomics3.hip on gfx942 and gfx950 (gfx90a has no
    // global_atomic_pk_add_bf16). Small integers, so every sum is exact
    // whatever order the atomics land in.
    let dir = tempfile_dir();
    for t in ["gfx942", "gfx950"] {
        let obj = build("atomics3", t, &dir);
        let l = load(&obj, "pk_add_bf16");
        assert!(
            l.program
                .instructions
                .iter()
                .any(|i| i.mnemonic == "global_atomic_pk_add_bf16"),
            "{t}"
        );
        let n = 512u32;
        let bf = |v: f32| half::bf16::from_f32(v).to_bits();
        let input: Vec<u16> = (0..2 * n).map(|i| bf((i * 7 % 4) as f32)).collect();
        let init: Vec<u16> = (0..16).map(|i| bf(i as f32)).collect();
        let bytes = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let (bufs, _) = launch(
            &l,
            [n / 256, 1, 1],
            [256, 1, 1],
            vec![
                A::Buf(bytes(&init)),
                A::Buf(bytes(&input)),
                A::Val(n.to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got: Vec<f32> = bufs[0]
            .chunks(2)
            .map(|c| half::bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
            .collect();
        for slot in 0..8 {
            for half_ in 0..2 {
                // At most 15 + 64·3 = 207: an integer bf16 holds exactly.
                let mut want = (2 * slot + half_) as f32;
                for ti in (slot..n as usize).step_by(8) {
                    want += half::bf16::from_bits(input[2 * ti + half_]).to_f32();
                }
                assert_eq!(got[2 * slot + half_], want, "{t}: acc[{slot}].{half_}");
            }
        }

        let l = load(&obj, "buffer_atomics");
        assert!(
            l.program
                .instructions
                .iter()
                .any(|i| i.mnemonic == "buffer_atomic_add_f32"),
            "{t}"
        );
        let n = 1000u32;
        let vals: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
        let (bufs, _) = launch(
            &l,
            [n.div_ceil(256), 1, 1],
            [256, 1, 1],
            vec![
                A::Buf(f32s(&[0.25; 20])),
                A::Buf(u32s(&[100; 20])),
                A::Buf(f32s(&vals)),
                A::Val(n.to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let (f, u) = (to_f32(&bufs[0]), to_u32(&bufs[1]));
        for k in 0..20usize {
            let hits: Vec<usize> = (0..n as usize).filter(|i| i % 20 == k).collect();
            if k < 16 {
                let want = hits.iter().fold(0.25f32, |s, &i| s + vals[i]);
                assert_eq!(f[k], want, "{t}: facc[{k}]");
                assert_eq!(u[k], 100 + hits.len() as u32, "{t}: uacc[{k}]");
            } else {
                // Past num_records (16 elements): the atomics do nothing.
                assert_eq!(
                    (f[k], u[k]),
                    (0.25, 100),
                    "{t}: element {k} past num_records"
                );
            }
        }
    }
}
