//! The gfx1100 (RDNA3) HIP corpus (gcn-emu/tests/rdna/, made by
//! generate.py with clang-22) run in the emulator and compared bit for bit
//! with references NumPy computes from the kernels' descriptions
//! (gcn-emu/tests/rdna/kernels/*.hip): wave32 (the default) and wave64
//! (`-mwavefrontsize64`).

// gcn_emu::Error is large by design (its crate root says why).
use crate::common;
use common::*;

use std::path::{Path, PathBuf};

use gcn_emu::dispatch::{run, ArgValue, Launch, Stats};
use gcn_emu::memory::Memory;
use gcn_emu::sanitize::Checks;

/// Run, and return every buffer's bytes, in argument order. As
/// `common::launch` does, the same launch runs again on fresh copies of
/// the inputs under the sanitizer's default checks, which must find
/// nothing (a false-alarm check of its gfx11 counter rules) and give the
/// same results.
fn launch(
    l: &Loaded,
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<A>,
) -> Result<(Vec<Vec<u8>>, Stats), gcn_emu::Error> {
    launch_lds(l, grid, block, 0, args)
}

/// [`launch`] with `dynamic_lds` bytes of dynamic LDS a workgroup.
fn launch_lds(
    l: &Loaded,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_lds: u32,
    args: Vec<A>,
) -> Result<(Vec<Vec<u8>>, Stats), gcn_emu::Error> {
    let k = l.co.kernel(&l.name).unwrap();
    let once = |sanitize: Checks| {
        let mem = Memory::new();
        let mut bases = Vec::new();
        let vals: Vec<ArgValue> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                A::Buf(b) => {
                    let p = mem.alloc_bytes(&format!("arg{i}"), b);
                    bases.push(p);
                    ArgValue::Pointer(p)
                }
                A::Val(v) => ArgValue::Bytes(v.clone()),
            })
            .collect();
        let mut launch = Launch::new(grid, block);
        launch.max_instructions = 1_000_000;
        launch.sanitize = sanitize;
        launch.dynamic_lds = dynamic_lds;
        let stats = run(&l.co, k, &l.program, &mem, &vals, &launch)?;
        let bufs: Vec<Vec<u8>> = bases.iter().map(|&b| mem.contents(b).unwrap()).collect();
        Ok::<_, gcn_emu::Error>((bufs, stats))
    };
    let (bufs, stats) = once(Checks::NONE)?;
    let (again, checked) = once(Checks::DEFAULT)?;
    assert!(
        checked.findings.is_empty(),
        "`{}`: the sanitizer reports on a kernel that ran clean:\n{}",
        l.name,
        checked
            .findings
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Atomics may land in another order: only their buffers may differ.
    if l.name != "atomics" {
        assert_eq!(
            again, bufs,
            "`{}`: the sanitized run computes the same",
            l.name
        );
    }
    Ok((bufs, stats))
}

fn corpus(target: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/rdna")
        .join(target)
        .join(format!("{name}.hsaco"))
}

fn inputs(n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next_u32()).collect()
}

/// LDS, `s_barrier` between the two wave32 waves of a 64-thread block:
/// out[b*64+i] = in[b*64 + 63-i] * 2.
#[test]
fn lds_barrier_reverses_each_block_through_lds_across_two_wave32_waves() {
    lds_barrier("gfx1100", 1);
}

fn lds_barrier(target: &str, seed: u64) {
    let l = load(&corpus(target, "lds_barrier"), "lds_barrier");
    let k = l.co.kernel("lds_barrier").unwrap();
    assert!(k.descriptor.wave32() && k.wavefront_size == 32);
    let blocks = 5u32;
    let x = inputs(64 * blocks as usize, seed);
    let (bufs, stats) = launch(
        &l,
        [blocks, 1, 1],
        [64, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0; x.len() * 4])],
    )
    .unwrap();
    assert_eq!(stats.waves, 2 * blocks as u64, "two wave32 waves a block");
    let want = numpy(
        "x = np.frombuffer(a0, np.int32).reshape(-1, 64)\nout = [(x[:, ::-1] * np.int32(2)).astype(np.int32)]",
        &[&u32s(&x)],
    );
    assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]), "{target}");
}

/// wave32 cross-lane operations: ds_swizzle, ds_bpermute (wrapping at 32
/// lanes), v_permlane16_b32, v_permlanex16_b32, DPP row_shr with
/// bound_ctrl, DPP8.
#[test]
fn crosslane_moves_match_numpy_in_wave32() {
    crosslane("gfx1100", 2);
}

fn crosslane(target: &str, seed: u64) {
    let l = load(&corpus(target, "crosslane"), "crosslane");
    let blocks = 3u32;
    let x = inputs(32 * blocks as usize, seed);
    let (bufs, _) = launch(
        &l,
        [blocks, 1, 1],
        [32, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0; x.len() * 6 * 4])],
    )
    .unwrap();
    let want = numpy(
        "v = np.frombuffer(a0, np.uint32).reshape(-1, 32)
i = np.arange(32)
rows = [v[:, i ^ 1], v[:, (i + 1) % 32], v[:, i], v[:, i ^ 16],
        np.where(i % 16 == 0, 0, v[:, (i - 1) % 32]), v[:, i // 8 * 8 + 7 - i % 8]]
out = [np.stack(rows, axis=-1).astype(np.uint32)]",
        &[&u32s(&x)],
    );
    let (got, want) = (to_u32(&bufs[1]), to_u32(&want[0]));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{target}: thread {}, result {}", i / 6, i % 6);
    }
}

/// RDNA in wave64 (`-mwavefrontsize64`): ds_bpermute across the two
/// halves, v_readlane_b32 of lane 40, a 64-bit ballot in `vcc` (the
/// listing printed with `--mattr=+wavefrontsize64`).
#[test]
fn wave64_on_rdna_crosses_the_halves_and_ballots_64_lanes() {
    wave64("gfx1100", 3);
}

fn wave64(target: &str, seed: u64) {
    let l = load(&corpus(target, "wave64"), "wave64");
    let k = l.co.kernel("wave64").unwrap();
    assert!(!k.descriptor.wave32() && k.wavefront_size == 64);
    let blocks = 3u32;
    let x = inputs(64 * blocks as usize, seed);
    let (bufs, stats) = launch(
        &l,
        [blocks, 1, 1],
        [64, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0; x.len() * 4 * 4])],
    )
    .unwrap();
    assert_eq!(stats.waves, blocks as u64, "one wave64 wave a block");
    let want = numpy(
        "v = np.frombuffer(a0, np.uint32).reshape(-1, 64)
i = np.arange(64)
bits = (v & 1).astype(np.uint64) << i.astype(np.uint64)
ballot = np.bitwise_or.reduce(bits, axis=1)
lo = (ballot & np.uint64(0xffffffff)).astype(np.uint32)
hi = (ballot >> np.uint64(32)).astype(np.uint32)
rows = [v[:, (i + 1) % 64], np.repeat(v[:, 40:41], 64, axis=1),
        np.repeat(lo[:, None], 64, axis=1), np.repeat(hi[:, None], 64, axis=1)]
out = [np.stack(rows, axis=-1).astype(np.uint32)]",
        &[&u32s(&x)],
    );
    let (got, want) = (to_u32(&bufs[1]), to_u32(&want[0]));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{target}: thread {}, result {}", i / 4, i % 4);
    }
}

/// Raw buffer loads and stores past `num_records` under RDNA's range check
/// (V# word 3 OOB_SELECT). `buffer_oob_raw` uses composable_kernel's gfx11
/// word (OOB_SELECT 3: `offset + 4 > num_records` is out of range): lanes
/// past n_in read 0, stores past n_out are dropped. `buffer_oob` keeps
/// CDNA's word 0x00020000, whose OOB_SELECT 0 on gfx11 checks the offset
/// against the V#'s stride, 0 here: every access is out of range, so
/// nothing is stored.
#[test]
fn buffer_oob_follows_rdnas_oob_select() {
    buffer_oob("gfx1100", 4);
}

fn buffer_oob(target: &str, seed: u64) {
    let sentinel = 0xdead_beefu32;
    for (name, raw) in [("buffer_oob_raw", true), ("buffer_oob", false)] {
        let l = load(&corpus(target, name), name);
        for (n_in, n_out) in [(20u32, 32u32), (32, 7), (0, 32), (5, 0)] {
            let x = inputs(32, seed + n_in as u64);
            let (bufs, _) = launch(
                &l,
                [1, 1, 1],
                [32, 1, 1],
                vec![
                    A::Buf(u32s(&x)),
                    A::Buf(u32s(&[sentinel; 32])),
                    A::Val(n_in.to_le_bytes().to_vec()),
                    A::Val(n_out.to_le_bytes().to_vec()),
                ],
            )
            .unwrap();
            let want = numpy(
                &format!(
                    "x = np.frombuffer(a0, np.uint32)
i = np.arange(32)
raw = {}
loaded = np.where(i < {n_in}, x, 0) if raw else np.zeros(32, np.uint32)
stored = (i < {n_out}) if raw else np.zeros(32, bool)
out = [np.where(stored, loaded + np.uint32(1), np.uint32({sentinel})).astype(np.uint32)]",
                    if raw { "True" } else { "False" }
                ),
                &[&u32s(&x)],
            );
            assert_eq!(
                to_u32(&bufs[1]),
                to_u32(&want[0]),
                "{target}: {name}, n_in {n_in}, n_out {n_out}"
            );
            assert_eq!(
                to_u32(&bufs[0]),
                x,
                "{target}: {name}: the input is untouched"
            );
        }
    }
}

/// A descriptor and metadata that disagree on the wave size are refused
/// before anything runs, naming both fields.
#[test]
fn a_wave_size_the_metadata_contradicts_is_refused() {
    let mut l = load(&corpus("gfx1100", "lds_barrier"), "lds_barrier");
    l.co.kernels[0].wavefront_size = 64;
    let e = launch(
        &l,
        [1, 1, 1],
        [64, 1, 1],
        vec![A::Buf(vec![0; 256]), A::Buf(vec![0; 256])],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("wave32") && e.contains(".wavefront_size is 64"),
        "{e}"
    );
}

/// Global integer and f32 atomics and an LDS histogram, over two wave32
/// waves a block (the compiler's wave-reduced atomics: `s_ctz_i32_b32`
/// loops over `exec_lo`, `v_mbcnt_lo_u32_b32`, VOPD pairs).
#[test]
fn atomics_match_numpy_in_wave32() {
    let l = load(&corpus("gfx1100", "atomics"), "atomics");
    let blocks = 4u32;
    let n = 64 * blocks as usize;
    // Small non-negative values: no sum wraps and every f32 sum is exact,
    // so the order atomics land in does not change the results.
    let x: Vec<u32> = inputs(n, 5).iter().map(|v| v % 1000).collect();
    let acc0 = [0u32, i32::MIN as u32, u32::MAX, 0, 0];
    let (bufs, _) = launch(
        &l,
        [blocks, 1, 1],
        [64, 1, 1],
        vec![
            A::Buf(u32s(&x)),
            A::Buf(u32s(&acc0)),
            A::Buf(vec![0; n * 4]),
            A::Buf(vec![0; 16 * 4]),
            A::Buf(vec![0; 4]),
        ],
    )
    .unwrap();
    let got_old = to_u32(&bufs[2]);
    let want = numpy(
        "x = np.frombuffer(a0, np.int32)
old = np.frombuffer(a1, np.int32)
acc = np.array([x.size, x.max(), x.astype(np.uint32).min().view(np.int32),
                np.bitwise_xor.reduce(x), x.sum()], np.int32)
hist = np.bincount(x & 15, minlength=16).astype(np.int32)
facc = np.array([x.astype(np.float64).sum()], np.float32)
# The values atomicAdd returned, in the order they were taken, are the
# exclusive prefix sums of the inputs taken in that order.
o = np.argsort(old, kind='stable')
chain = np.array([old[o][0] == 0 and np.array_equal(old[o][1:], np.cumsum(x[o])[:-1])], np.int32)
out = [acc, hist, facc, chain]",
        &[&u32s(&x), &u32s(&got_old)],
    );
    assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]), "acc");
    assert_eq!(to_u32(&bufs[3]), to_u32(&want[1]), "hist");
    assert_eq!(to_f32(&bufs[4]), to_f32(&want[2]), "facc");
    assert_eq!(
        to_u32(&want[3]),
        [1],
        "old: the values atomicAdd returned chain as prefix sums"
    );
}

/// Triton 3.9's row softmax for gfx1100 (wave32, `num_warps` 4: 128
/// threads, four waves; Triton's `shared` bytes as dynamic LDS; the two
/// scratch pointers null): within 1e-5 relative of NumPy's f64 softmax
/// (`v_exp_f32` approximates, and the sums' order is the kernel's).
#[test]
fn triton_softmax_is_within_tolerance_of_numpy() {
    triton_softmax_vs_numpy("gfx1100");
}

/// Triton's row softmax on `target` against NumPy's f64 softmax (Triton's
/// `num_warps`, `warp_size` and `shared` from its `.json`).
fn triton_softmax_vs_numpy(target: &str) {
    let l = load(&corpus(target, "triton_softmax"), "softmax");
    let json = corpus(target, "triton_softmax").with_extension("json");
    let field = |key: &str| triton_meta(&json, key);
    let (warps, shared, warp) = (field("num_warps"), field("shared"), field("warp_size"));
    let (rows, n) = (5usize, 100usize);
    let mut r = Rng(6);
    let x: Vec<f32> = (0..rows * n).map(|_| r.f32() * 8.0).collect();
    let (bufs, stats) = launch_lds(
        &l,
        [rows as u32, 1, 1],
        [warps * warp, 1, 1],
        shared,
        vec![
            A::Buf(f32s(&x)),
            A::Buf(vec![0xff; 4 * rows * n]),
            A::Val((n as u32).to_le_bytes().to_vec()),
            A::Val(vec![0; 8]),
            A::Val(vec![0; 8]),
        ],
    )
    .unwrap();
    assert_eq!(
        stats.waves,
        rows as u64 * warps as u64,
        "{target}: {warps} waves of {warp} a row"
    );
    let want = numpy(
        &format!(
            "x = np.frombuffer(a0, np.float32).reshape({rows}, {n}).astype(np.float64)
e = np.exp(x - x.max(axis=1, keepdims=True))
out = [e / e.sum(axis=1, keepdims=True)]"
        ),
        &[&f32s(&x)],
    );
    let want: Vec<f64> = want[0]
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for (i, (g, w)) in to_f32(&bufs[1]).iter().zip(&want).enumerate() {
        let g = *g as f64;
        assert!(
            (g - w).abs() <= 1e-5 * w + 1e-12,
            "{target}: [{}][{}]: {g} vs {w}",
            i / n,
            i % n
        );
    }
}

/// gfx1201 (RDNA4): the same kernels compiled for gfx12 (`s_wait_*`,
/// `s_barrier_signal`/`s_barrier_wait`, `global_inv`, workgroup IDs in
/// ttmp9, VOPD) against the same NumPy references as gfx1100's.
mod gfx1201 {
    use super::*;

    /// Triton 3.9's gfx1201 row softmax (barrier signal/wait with work
    /// between, the wave ID from `ttmp8`, `v_dual_max_num_f32`) against
    /// NumPy's f64 softmax, within 1e-5 relative as on gfx1100.
    #[test]
    fn triton_softmax_is_within_tolerance_of_numpy() {
        triton_softmax_vs_numpy("gfx1201");
    }

    #[test]
    fn lds_barrier_reverses_each_block_through_lds_across_two_wave32_waves() {
        lds_barrier("gfx1201", 11);
    }

    #[test]
    fn crosslane_moves_match_numpy_in_wave32() {
        crosslane("gfx1201", 12);
    }

    #[test]
    fn wave64_crosses_the_halves_and_ballots_64_lanes() {
        wave64("gfx1201", 13);
    }

    /// gfx12's V# word 3 keeps gfx11's OOB_SELECT (bits 29:28; bits 24-27
    /// are gfx12's compression controls): the ROCm HSA headers'
    /// SQ_BUF_RSRC_WORD3_GFX12 layout. The range check each OOB_SELECT
    /// picks is taken as gfx11's (not confirmed from the RDNA4 guide).
    #[test]
    fn buffer_oob_follows_oob_select() {
        buffer_oob("gfx1201", 14);
    }

    /// Global integer and f32 atomics (`th:TH_ATOMIC_RETURN` for the one
    /// whose old value is used), an LDS histogram between two
    /// `s_barrier_signal`/`s_barrier_wait` pairs; `s_add_f32` and
    /// `s_add_co_i32` in the wave-level reductions the compiler made.
    /// acc[0] counts threads, acc[1] is the max, acc[2] the unsigned min,
    /// acc[3] the xor, acc[4] the sum (old[] a permutation of its prefix
    /// sums), hist the low-4-bit histogram; facc[0] the f32 sum, whose
    /// order of additions is the emulator's (checked to within rounding).
    #[test]
    fn atomics_match_numpy() {
        let l = load(&corpus("gfx1201", "atomics"), "atomics");
        let blocks = 4u32;
        let n = 64 * blocks as usize;
        // Small values: the f32 sum of these integers is exact.
        let x: Vec<u32> = inputs(n, 15).iter().map(|v| v % 2001).collect();
        let acc0 = [0u32, 0, u32::MAX, 0, 0];
        let (bufs, _) = launch(
            &l,
            [blocks, 1, 1],
            [64, 1, 1],
            vec![
                A::Buf(u32s(&x)),
                A::Buf(u32s(&acc0)),
                A::Buf(vec![0; n * 4]),
                A::Buf(vec![0; 16 * 4]),
                A::Buf(vec![0; 4]),
            ],
        )
        .unwrap();
        let want = numpy(
            "x = np.frombuffer(a0, np.int32)
acc = np.array([len(x), x.max(), x.astype(np.uint32).min(), np.bitwise_xor.reduce(x), x.sum()], np.int32)
hist = np.bincount(x & 15, minlength=16).astype(np.int32)
out = [acc, hist, np.array([x.astype(np.float64).sum()], np.float32)]",
            &[&u32s(&x)],
        );
        assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]), "acc");
        assert_eq!(to_u32(&bufs[3]), to_u32(&want[1]), "hist");
        assert_eq!(
            to_f32(&bufs[4]),
            to_f32(&want[2]),
            "facc (exact: integers below 2^24)"
        );
        // old[]: each value the sum of the inputs before it in some order.
        let mut old: Vec<(u32, u32)> = to_u32(&bufs[2])
            .into_iter()
            .zip(x.iter().copied())
            .collect();
        old.sort();
        let mut sum = 0u32;
        for (o, v) in old {
            assert_eq!(o, sum, "old values are the prefix sums of one order");
            sum = sum.wrapping_add(v);
        }
    }
}
