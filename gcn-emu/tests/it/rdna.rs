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
/// same results. The first run is on the typed engine, the sanitized one
/// on the reference executor alone (`Launch::typed` false): every launch
/// here also compares the two engines' results.
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
    let once = |sanitize: Checks, typed: bool| {
        let mem = Memory::new();
        let (vals, bases) = common::alloc_args(&mem, &args);
        let mut launch = Launch::new(grid, block);
        launch.max_instructions = 1_000_000;
        launch.sanitize = sanitize;
        launch.dynamic_lds = dynamic_lds;
        launch.typed = typed;
        let stats = run(&l.co, k, &l.program, &mem, &vals, &launch)?;
        let bufs: Vec<Vec<u8>> = bases.iter().map(|&b| mem.contents(b).unwrap()).collect();
        Ok::<_, gcn_emu::Error>((bufs, stats))
    };
    let (bufs, stats) = once(Checks::NONE, true)?;
    let (again, checked) = once(Checks::DEFAULT, false)?;
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
            "`{}`: the sanitized run on the reference executor computes what the typed engine does",
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

/// `rdna_ops` (tests/rdna/kernels/rdna_ops.hip): VOP3 DPP
/// (`v_fma_f32_e64_dpp ... row_shr:1 bound_ctrl:1`), `ds_cmpstore_rtn_b32`
/// and `_b64` (RDNA's operand order: new value, then the compared one),
/// RDNA's buffer atomics through a raw V# (with lanes past `num_records`
/// dropped), the renamed global atomics and LDS f32 max/min (gfx12:
/// `ds_max_num_f32`), bit for bit against NumPy.
/// Every contended atomic is order-free here (integer sums, min/max, and
/// f32 sums of quarters, exact).
#[test]
fn rdna_ops_match_numpy() {
    rdna_ops("gfx1100", 21);
}

fn rdna_ops(target: &str, seed: u64) {
    let l = load(&corpus(target, "rdna_ops"), "rdna_ops");
    let mut r = Rng(seed);
    let x: Vec<u32> = (0..32)
        .map(|_| ((r.next_u32() % 2001) as i32 - 1000) as u32)
        .collect();
    // Multiples of 1/4 below 64 in magnitude, never 0 (the f32 min/max
    // of ±0 is not what this checks).
    let f: Vec<f32> = (0..32)
        .map(|_| {
            let q = (r.next_u32() % 511) as i32 - 255;
            (if q == 0 { 1 } else { q }) as f32 / 4.0
        })
        .collect();
    // bacc: per lane (add u32, max f32, min f32, add f32) initial values.
    let mut bacc = Vec::new();
    for _ in 0..32 {
        bacc.push(r.next_u32() % 5000);
        bacc.push(((r.next_u32() % 511) as f32 / 4.0 - 64.0).to_bits());
        bacc.push(((r.next_u32() % 511) as f32 / 4.0 - 64.0).to_bits());
        bacc.push(((r.next_u32() % 511) as f32 / 4.0 - 64.0).to_bits());
    }
    let bsum = [7u32, (-100.0f32).to_bits()];
    let mut gacc = vec![0u32; 8 + 32];
    gacc[0] = 3;
    gacc[1] = 1;
    gacc[2] = 1000.0f32.to_bits();
    gacc[3] = (-1000.0f32).to_bits();
    gacc[4] = 12345;
    gacc[6] = 990;
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![
            A::Buf(u32s(&x)),
            A::Buf(f32s(&f)),
            A::Buf(vec![0; 32 * 8 * 4]),
            A::Buf(vec![0; 32 * 2 * 4]),
            A::Buf(u32s(&bacc)),
            A::Buf(u32s(&bsum)),
            A::Buf(u32s(&gacc)),
            A::Buf(vec![0; 8 * 4]),
        ],
    )
    .unwrap();
    let want = numpy(
        "x = np.frombuffer(a0, np.int32); f = np.frombuffer(a1, np.float32)
bacc = np.frombuffer(a2, np.uint32).reshape(32, 4).copy(); bsum = np.frombuffer(a3, np.uint32).copy()
gacc = np.frombuffer(a4, np.uint32).copy()
t = np.arange(32)
out = np.zeros((32, 8), np.int64)
out[:, 0] = x[t ^ 1]
out[:, 1] = np.where((t ^ 1) % 3 == 0, 1000 + (t ^ 1), x)
l64 = (x.astype(np.int64) * 3 + (t.astype(np.int64) << 40)).astype(np.uint64)
new64 = np.where(t % 4 < 2, (t.astype(np.uint64) << np.uint64(33)) | np.uint64(5), l64)
out[:, 2] = (l64 & np.uint64(0xffffffff)).astype(np.int64); out[:, 3] = (l64 >> np.uint64(32)).astype(np.int64)
out[:, 4] = (new64 & np.uint64(0xffffffff)).astype(np.int64); out[:, 5] = (new64 >> np.uint64(32)).astype(np.int64)
inr = t < 28
bf = bacc.view(np.float32)
out[:, 6] = np.where(inr, bacc[:, 0], 0)
out[:, 7] = np.where(inr, np.trunc(bf[:, 1]), 0)
nb = bacc.copy(); nf = nb.view(np.float32)
nb[inr, 0] = (bacc[inr, 0].astype(np.int64) + x[inr]).astype(np.uint32)
nf[inr, 1] = np.maximum(bf[inr, 1], f[inr]); nf[inr, 2] = np.minimum(bf[inr, 2], f[inr])
nf[inr, 3] = bf[inr, 3] + f[inr]
# DPP row_shr:1 with bound_ctrl: lane 0 of each row of 16 reads 0.
fd = np.where(t % 16 == 0, np.float32(0), f[t - 1])
fo = np.zeros((32, 2), np.float32)
fo[:, 0] = (fd.astype(np.float64) * f + 2.0).astype(np.float32)
fo[:, 1] = np.abs(fd) * -f
bs = bsum.copy(); bs[0] = (int(bs[0]) + int(x.sum())) % 2**32
bs.view(np.float32)[1] = max(bsum.view(np.float32)[1], f.max())
g = gacc.copy()
g64 = (int(gacc[0]) | int(gacc[1]) << 32) + int((x.astype(np.int64) << 20).sum())
g[0] = g64 % 2**32; g[1] = (g64 >> 32) % 2**32
gf = g.view(np.float32); gf[2] = min(gacc.view(np.float32)[2], f.min()); gf[3] = max(gacc.view(np.float32)[3], f.max())
g[4] = (int(gacc[4]) - int(x.sum())) % 2**32
c = int(gacc[6]) | int(gacc[7]) << 32
for _ in range(32): c = 0 if c >= 1000 else c + 1
g[6] = c % 2**32; g[7] = c >> 32
g[8:] = x.view(np.uint32)
lm = np.array([f[t % 4 == k].max() for k in range(4)] + [f[t % 4 == k].min() for k in range(4)], np.float32)
out = [out.astype(np.uint32), fo, nb, bs, g, lm]",
        &[&u32s(&x), &f32s(&f), &u32s(&bacc), &u32s(&bsum), &u32s(&gacc)],
    );
    let names = ["out", "fout", "bacc", "bsum", "gacc", "lmax"];
    for (k, name) in names.iter().enumerate() {
        let got = to_u32(&bufs[k + 2]);
        let exp = to_u32(&want[k]);
        for (i, (g, e)) in got.iter().zip(&exp).enumerate() {
            assert_eq!(g, e, "{target}: {name}[{i}]: got {g:#x}, NumPy {e:#x}");
        }
        assert_eq!(got.len(), exp.len(), "{target}: {name}");
    }
}

/// gfx1250's `v_permlane16_swap_b32` (clang-22's
/// `__builtin_amdgcn_permlane16_swap`, tests/rdna/inline/permlane16_swap.hip)
/// in a full wave32 against NumPy: lanes 16-31 of the first operand trade
/// with lanes 0-15 of the second (LLVM's IntrinsicsAMDGPU.td: "Odd rows of
/// the first operand are swapped with even rows of the second operand").
///
/// The listing runs as clang-22 wrote it (with its prologue's MODE bit 25
/// write).
#[test]
fn gfx1250_permlane16_swap_matches_numpy() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rdna/inline/permlane16_swap.hip");
    let d = std::env::temp_dir().join(format!("gcn-emu-permlane16-swap-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let asm = d.join("permlane16_swap.s");
    let text = hip_asm(&src, "gfx1250", &asm);
    assert!(
        text.contains("v_permlane16_swap_b32"),
        "clang-22 emits the swap"
    );
    let obj = assemble(&asm, "gfx1250", "permlane16_swap", &d);
    let l = load(&obj, "permlane16_swap");
    let x = inputs(64, 31);
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![
            A::Buf(u32s(&x)),
            A::Buf(vec![0; 64 * 4]),
            A::Val(0u32.to_le_bytes().to_vec()),
        ],
    )
    .unwrap();
    let want = numpy(
        "x = np.frombuffer(a0, np.uint32)
a, b = x[:32].copy(), x[32:].copy()
a[16:], b[:16] = x[32:48], x[16:32]
out = [np.concatenate([a, b])]",
        &[&u32s(&x)],
    );
    assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]));
    let _ = std::fs::remove_dir_all(&d);
}

/// gfx1250's `scale_offset` (tests/rdna/inline/scale_offset.hip): clang-22
/// addresses `p[t]` as `global_load_* vIDX, s[BASE] scale_offset`, the VGPR
/// index times the access's size (2, 4, 8 and 16 bytes here), and `end[-t]`
/// as a negative index (gfx1250 sign-extends the saddr form's VGPR offset)
/// plus an unscaled `offset:124`. Against NumPy bit for bit; before, the
/// index went unscaled and the results were silently wrong. The listing runs as clang-22 wrote it.
#[test]
fn gfx1250_scale_offset_matches_numpy() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rdna/inline/scale_offset.hip");
    let d = std::env::temp_dir().join(format!("gcn-emu-scale-offset-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let asm = d.join("scale_offset.s");
    let text = hip_asm(&src, "gfx1250", &asm);
    for form in [
        "global_load_b128",
        "global_load_u16",
        "global_store_b64",
        "offset:124 scale_offset",
    ] {
        assert!(
            text.lines()
                .any(|l| l.contains(form) && l.contains("scale_offset")),
            "clang-22 emits `{form}` with scale_offset"
        );
    }
    let obj = assemble(&asm, "gfx1250", "scale_offset", &d);
    let l = load(&obj, "scale_offset");
    let n = 32;
    let x = inputs(n, 41);
    let x64 = inputs(2 * n, 42);
    let x16 = inputs(n / 2, 43);
    let x128 = inputs(4 * n, 44);
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [n as u32, 1, 1],
        vec![
            A::Buf(u32s(&x)),
            A::Buf(vec![0; 2 * n * 4]),
            A::Buf(u32s(&x64)),
            A::Buf(vec![0; 2 * n * 4]),
            A::Buf(u32s(&x16)),
            A::Buf(vec![0; n * 2]),
            A::Buf(u32s(&x128)),
            A::Buf(vec![0; 4 * n * 4]),
            A::Val(0u32.to_le_bytes().to_vec()),
        ],
    )
    .unwrap();
    let want = numpy(
        "x = np.frombuffer(a0, np.int32); x64 = np.frombuffer(a1, np.int64)
x16 = np.frombuffer(a2, np.int16); x128 = np.frombuffer(a3, np.int32)
out = np.concatenate([x * np.int32(3), x[::-1]])
out = [out, x64 + 1, x16 - np.int16(5), x128 + np.int32(7)]",
        &[&u32s(&x), &u32s(&x64), &u32s(&x16), &u32s(&x128)],
    );
    for (k, name) in [(1, "out"), (3, "o64"), (5, "o16"), (7, "o128")] {
        assert_eq!(to_u32(&bufs[k]), to_u32(&want[k / 2]), "{name}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// tests/rdna/inline/NAME.hip compiled by clang-22 for gfx1250 and
/// assembled, as clang-22 wrote it, into a fresh directory (returned, for
/// the caller to remove).
fn gfx1250_inline(name: &str) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/rdna/inline/{name}.hip"));
    // One directory a call: two tests may compile the same source at once.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("gcn-emu-{name}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let asm = d.join(format!("{name}.s"));
    hip_asm(&src, "gfx1250", &asm);
    (assemble(&asm, "gfx1250", name, &d), d)
}

/// gfx1250's transposing LDS loads (tests/rdna/inline/ds_load_tr.hip,
/// clang-22's `__builtin_amdgcn_ds_load_tr16_b128_v8i16` and
/// `_tr8_b64_v2i32`), each lane at its own permuted LDS row, against NumPy
/// bit for bit under the lane maps of AMD's ROCm blog on MI450 LDS
/// (design/rdna.md, gfx1250): tr16 transposes each group of 8 lanes' 8x8
/// 16-bit elements; tr8 fills lanes 0-7 of each 16 from lanes 0-3 and
/// 8-11, lanes 8-15 from 4-7 and 12-15. `ds_load_tr4_b64` and
/// `ds_load_tr6_b96` (AMD's sources disagree on their maps) are refused by
/// name.
#[test]
fn gfx1250_ds_load_tr_matches_numpy() {
    let (obj, d) = gfx1250_inline("ds_load_tr");
    let text = std::fs::read_to_string(d.join("ds_load_tr.s")).unwrap();
    for form in ["ds_load_tr16_b128", "ds_load_tr8_b64", "ds_load_tr4_b64"] {
        assert!(text.contains(form), "clang-22 emits `{form}`");
    }
    let x = inputs(256, 61);
    let l = load(&obj, "ds_load_tr");
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0xa5; 32 * 6 * 4])],
    )
    .unwrap();
    let want = numpy(
        "lds = np.frombuffer(a0, np.uint8)
t = np.arange(32)
r16 = lds[16 * ((7 * t + 3) % 32)[:, None] + np.arange(16)].copy().view(np.uint16)
r8 = lds[512 + 8 * ((11 * t + 5) % 32)[:, None] + np.arange(8)]
tr16 = np.zeros((32, 8), np.uint16)
tr8 = np.zeros((32, 8), np.uint8)
for lane in range(32):
    for j in range(8):
        tr16[lane, j] = r16[lane // 8 * 8 + j, lane % 8]
        tr8[lane, j] = r8[lane // 16 * 16 + j % 4 + 4 * (lane // 8 % 2) + 8 * (j // 4), lane % 8]
out = [np.concatenate([tr16.view(np.uint32), tr8.view(np.uint32)], axis=1)]",
        &[&u32s(&x)],
    );
    assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]));
    let l = load(&obj, "tr4");
    let e = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0; 32 * 8])],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("ds_load_tr4_b64"), "{e}");
    let l = load(&obj, "tr6");
    let e = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0; 32 * 12])],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("ds_load_tr6_b96") && e.contains("disagree"),
        "{e}"
    );
    // The sanitizer counts them on dscnt: without the waits after them,
    // the stores read their destinations too early.
    let text = std::fs::read_to_string(d.join("ds_load_tr.s")).unwrap();
    let found = transposing_wait_mutant(
        &text,
        &d,
        ("ds_load_tr8_b64", "s_wait_dscnt 0x1"),
        "ds_load_tr",
        &x,
    );
    assert!(
        found
            .iter()
            .any(|f| f.contains("ds_load_tr16_b128") && f.contains("s_wait_dscnt")),
        "{found:#?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The sanitizer's findings on `kernel` of tests/rdna/inline/ds_load_tr.hip
/// (listing `text`, in `d`) with the first `wait` after the first `anchor`
/// removed, run on input `x` with one wave32.
fn transposing_wait_mutant(
    text: &str,
    d: &Path,
    (anchor, wait): (&str, &str),
    kernel: &str,
    x: &[u32],
) -> Vec<String> {
    let (head, tail) = text.split_at(text.find(anchor).unwrap());
    let mutant = format!("{head}{}", tail.replacen(wait, "", 1));
    assert_ne!(mutant, text, "no `{wait}` after `{anchor}` to drop");
    let name = format!("{kernel}_nowait");
    let asm = d.join(format!("{name}.s"));
    std::fs::write(&asm, mutant).unwrap();
    let l = load(&assemble(&asm, "gfx1250", &name, d), kernel);
    let mem = Memory::new();
    let args = [
        ArgValue::Pointer(mem.alloc_bytes("in", &u32s(x))),
        ArgValue::Pointer(mem.alloc_bytes("out", &[0; 32 * 6 * 4])),
    ];
    let mut launch = Launch::new([1, 1, 1], [32, 1, 1]);
    launch.sanitize = Checks::DEFAULT;
    let k = l.co.kernel(kernel).unwrap();
    let stats = run(&l.co, k, &l.program, &mem, &args, &launch).unwrap();
    stats.findings.iter().map(|f| f.to_string()).collect()
}

/// gfx1250's transposing global loads (tests/rdna/inline/ds_load_tr.hip
/// `global_tr`: clang-22's `__builtin_amdgcn_global_load_tr16_b128_v8i16`
/// and `_tr8_b64_v2i32`, each lane at its own permuted row of the input)
/// against NumPy bit for bit under the lane maps of their LDS forms;
/// `global_load_tr4_b64` is refused by name; without the `s_wait_loadcnt`
/// before the first store the sanitizer reports the early read.
#[test]
fn gfx1250_global_load_tr_matches_numpy() {
    let (obj, d) = gfx1250_inline("ds_load_tr");
    let text = std::fs::read_to_string(d.join("ds_load_tr.s")).unwrap();
    for form in [
        "global_load_tr16_b128",
        "global_load_tr8_b64",
        "global_load_tr4_b64",
    ] {
        assert!(text.contains(form), "clang-22 emits `{form}`");
    }
    let x = inputs(256, 67);
    let l = load(&obj, "global_tr");
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0xa5; 32 * 6 * 4])],
    )
    .unwrap();
    let want = numpy(
        "g = np.frombuffer(a0, np.uint8)
t = np.arange(32)
r16 = g[16 * ((5 * t + 1) % 32)[:, None] + np.arange(16)].copy().view(np.uint16)
r8 = g[512 + 8 * ((13 * t + 7) % 32)[:, None] + np.arange(8)]
tr16 = np.zeros((32, 8), np.uint16)
tr8 = np.zeros((32, 8), np.uint8)
for lane in range(32):
    for j in range(8):
        tr16[lane, j] = r16[lane // 8 * 8 + j, lane % 8]
        tr8[lane, j] = r8[lane // 16 * 16 + j % 4 + 4 * (lane // 8 % 2) + 8 * (j // 4), lane % 8]
out = [np.concatenate([tr16.view(np.uint32), tr8.view(np.uint32)], axis=1)]",
        &[&u32s(&x)],
    );
    assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]));
    let l = load(&obj, "global_tr4");
    let e = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0; 32 * 8])],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("global_load_tr4_b64") && e.contains("disagree"),
        "{e}"
    );
    // They count on loadcnt: without the wait before the first store, the
    // store reads the tr16 destination too early.
    let found = transposing_wait_mutant(
        &text,
        &d,
        ("global_load_tr16_b128", "s_wait_loadcnt 0x1"),
        "global_tr",
        &x,
    );
    assert!(
        found
            .iter()
            .any(|f| f.contains("global_load_tr16_b128") && f.contains("s_wait_loadcnt")),
        "{found:#?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// gfx1250's named barriers (tests/rdna/inline/named_barrier.hip, clang-22's
/// `__builtin_amdgcn_s_barrier_init`/`_join`/`_signal_var`/`_wait`/`_leave`
/// on `__amdgpu_named_workgroup_barrier_t`, which clang-22 emits as the M0
/// forms): four wave32 waves, waves 0 and 1 on one named barrier, 2 and 3
/// on another; each reads its partner's LDS slots after the wait, against
/// NumPy (in every wave order the dispatcher's seeds give), with no
/// sanitizer finding; without the wait, the sanitizer reports the LDS race.
/// `lonely`: a
/// wave waits on a barrier of 2 that only it joined, reported as a
/// deadlock (not a hang), with the barrier's arrivals.
#[test]
fn gfx1250_named_barriers_match_numpy_and_report_a_deadlock() {
    let (obj, d) = gfx1250_inline("named_barrier");
    let text = std::fs::read_to_string(d.join("named_barrier.s")).unwrap();
    for form in [
        "s_barrier_init m0",
        "s_barrier_join m0",
        "s_barrier_signal m0",
        "s_barrier_wait 1",
        "s_barrier_leave",
    ] {
        assert!(text.contains(form), "clang-22 emits `{form}`");
    }
    let x = inputs(128, 71);
    let l = load(&obj, "named_barrier");
    let want = numpy(
        "x = np.frombuffer(a0, np.uint32).astype(np.uint64)
t = np.arange(128)
out = [((x[t ^ 32] + 0x1234567) % 2**32).astype(np.uint32)]",
        &[&u32s(&x)],
    );
    for seed in [0, 1, 2, 3] {
        let k = l.co.kernel("named_barrier").unwrap();
        let mem = Memory::new();
        let out = mem.alloc_bytes("out", &[0; 128 * 4]);
        let args = [
            ArgValue::Pointer(mem.alloc_bytes("in", &u32s(&x))),
            ArgValue::Pointer(out),
        ];
        let mut launch = Launch::new([1, 1, 1], [128, 1, 1]);
        launch.seed = seed;
        launch.sanitize = Checks::DEFAULT;
        let stats = run(&l.co, k, &l.program, &mem, &args, &launch).unwrap();
        // The sanitizer orders the partners' LDS accesses by the named
        // barrier: no race.
        assert!(
            stats.findings.is_empty(),
            "seed {seed}: {:#?}",
            stats.findings
        );
        let mut got = vec![0u8; 128 * 4];
        mem.read(out, &mut got).unwrap();
        assert_eq!(to_u32(&got), to_u32(&want[0]), "seed {seed}");
    }
    // Without the named barrier's wait, the read of the partner's slot
    // races with its write.
    let mutant = text.replacen("s_barrier_wait 1", "", 1);
    assert_ne!(mutant, text);
    let asm = d.join("named_barrier_nowait.s");
    std::fs::write(&asm, mutant).unwrap();
    let m = load(
        &assemble(&asm, "gfx1250", "named_barrier_nowait", &d),
        "named_barrier",
    );
    let mem = Memory::new();
    let args = [
        ArgValue::Pointer(mem.alloc_bytes("in", &u32s(&x))),
        ArgValue::Pointer(mem.alloc_bytes("out", &[0; 128 * 4])),
    ];
    let mut sanitized = Launch::new([1, 1, 1], [128, 1, 1]);
    sanitized.sanitize = Checks::DEFAULT;
    let k = m.co.kernel("named_barrier").unwrap();
    let stats = run(&m.co, k, &m.program, &mem, &args, &sanitized).unwrap();
    assert!(
        stats
            .findings
            .iter()
            .any(|f| f.to_string().contains("LDS race")),
        "{:#?}",
        stats.findings
    );
    let l = load(&obj, "lonely");
    let e = launch(&l, [1, 1, 1], [64, 1, 1], vec![A::Buf(vec![0; 64 * 4])])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("deadlock at a named barrier") && e.contains("(1 of 2 arrivals)"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// gfx1250's multicast loads (tests/rdna/inline/cluster_load.hip: clang-22's
/// `__builtin_amdgcn_cluster_load_b32` and `_async_to_lds_b32`/`_b64`, mask
/// in M0) in clusters of two workgroups: each workgroup gets its own copy
/// of its slice of the input; a mask without the issuer's rank, or a multicast mask
/// without clusters, is refused by name; without `s_wait_loadcnt` /
/// `s_wait_asynccnt` the sanitizer reports the early reads (LOADcnt for the
/// register form, ASYNCcnt for the LDS one).
#[test]
fn gfx1250_cluster_loads_give_the_issuer_its_copy() {
    let (obj, d) = gfx1250_inline("cluster_load");
    let text = std::fs::read_to_string(d.join("cluster_load.s")).unwrap();
    for form in [
        "cluster_load_b32",
        "cluster_load_async_to_lds_b32",
        "cluster_load_async_to_lds_b64",
    ] {
        assert!(text.contains(form), "clang-22 emits `{form}`");
    }
    let x = inputs(4 * 128, 73);
    let run_with = |obj: &Path, mask: u32, cluster: [u32; 3], checks: Checks| {
        let l = load(obj, "cluster_load");
        let k = l.co.kernel("cluster_load").unwrap();
        let mem = Memory::new();
        let out = mem.alloc_bytes("out", &[0; 4 * 128 * 4]);
        let args = [
            ArgValue::Pointer(mem.alloc_bytes("in", &u32s(&x))),
            ArgValue::Pointer(out),
            ArgValue::Bytes(mask.to_le_bytes().to_vec()),
        ];
        let mut launch = Launch::new([4, 1, 1], [32, 1, 1]);
        launch.cluster = cluster;
        launch.sanitize = checks;
        run(&l.co, k, &l.program, &mem, &args, &launch).map(|stats| {
            let mut got = vec![0u8; 4 * 128 * 4];
            mem.read(out, &mut got).unwrap();
            (to_u32(&got), stats)
        })
    };
    // Each workgroup copies its own 128 words (32 through a register, 32
    // and 64 through LDS).
    let (got, stats) = run_with(&obj, 0b11, [2, 1, 1], Checks::DEFAULT).unwrap();
    assert_eq!(got, x);
    assert!(stats.findings.is_empty(), "{:#?}", stats.findings);
    let e = run_with(&obj, 0b10, [2, 1, 1], Checks::NONE)
        .unwrap_err()
        .to_string();
    assert!(e.contains("leaves out the issuing workgroup"), "{e}");
    let e = run_with(&obj, 0b11, [1, 1, 1], Checks::NONE)
        .unwrap_err()
        .to_string();
    assert!(e.contains("without workgroup clusters"), "{e}");
    for (wait, counter) in [
        ("s_wait_loadcnt 0x0", "s_wait_loadcnt"),
        ("s_wait_asynccnt 0x0", "s_wait_asynccnt"),
    ] {
        let mutant = text.replacen(wait, "", 1);
        assert_ne!(mutant, text);
        let name = format!("cluster_load_no_{counter}");
        let asm = d.join(format!("{name}.s"));
        std::fs::write(&asm, mutant).unwrap();
        let (_, stats) = run_with(
            &assemble(&asm, "gfx1250", &name, &d),
            0b11,
            [2, 1, 1],
            Checks::DEFAULT,
        )
        .unwrap();
        let found: Vec<String> = stats.findings.iter().map(|f| f.to_string()).collect();
        assert!(
            found
                .iter()
                .any(|f| f.contains("cluster_load") && f.contains(counter)),
            "{counter}: {found:#?}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// gfx1250's sign-extended `saddr` VGPR offset on the typed engine
/// (tests/rdna/inline/signed_voffset.hip): clang-22 addresses a load, a
/// store and an atomic as `s[BASE] + v0` with v0 = -4(t + 1), no
/// `scale_offset`, so the typed engine runs all three (asserted) and must
/// sign-extend v0 as the reference does (`launch` runs both). Against
/// NumPy bit for bit; a zero-extended offset lands 4 GiB past the buffers
/// and faults.
#[test]
fn gfx1250_negative_saddr_offsets_run_typed_and_match_numpy() {
    let (obj, d) = gfx1250_inline("signed_voffset");
    let l = load(&obj, "signed_voffset");
    // The three accesses are the saddr form, and the typed engine lowers
    // them on gfx1250.
    let p = gcn_emu::rdna::executable(&l.program);
    let lowered = gcn_emu::typed::lowered_for(&p, "gfx1250", 32);
    let saddr: Vec<_> = p
        .instructions
        .iter()
        .zip(&lowered)
        .filter(|(i, _)| i.mnemonic.starts_with("global_") && i.text.contains(", s["))
        .collect();
    assert_eq!(saddr.len(), 3, "clang-22 emits three saddr accesses");
    for (i, typed) in &saddr {
        assert!(!i.text.contains("scale_offset"), "{}", i.text);
        assert!(**typed, "`{}` runs on the typed engine", i.text);
    }
    // 40 words a buffer: lanes reach words 8..39, words 0..7 stay.
    let words = 40;
    let (x, acc) = (inputs(words, 51), inputs(words, 52));
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![
            A::Buf(u32s(&x)),
            A::Buf(vec![0xa5; words * 4]),
            A::Buf(u32s(&acc)),
            A::Val((words as u32 * 4).to_le_bytes().to_vec()),
            A::Val(0u32.to_le_bytes().to_vec()),
        ],
    )
    .unwrap();
    let want = numpy(
        "x = np.frombuffer(a0, np.int32); acc = np.frombuffer(a1, np.int32).copy()
out = np.frombuffer(bytes([0xa5]) * len(a0), np.int32).copy()
out[8:] = x[8:] + np.int32(7)
acc[8:] += x[8:]
out = [out, acc]",
        &[&u32s(&x), &u32s(&acc)],
    );
    assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]), "out");
    assert_eq!(to_u32(&bufs[2]), to_u32(&want[1]), "acc");
    let _ = std::fs::remove_dir_all(&d);
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

    /// gfx12's spellings: `buffer_atomic_max_num_f32`,
    /// `global_atomic_min_num_f32`, `th:TH_ATOMIC_RETURN`.
    #[test]
    fn rdna_ops_match_numpy() {
        rdna_ops("gfx1201", 22);
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

/// A HIP kernel compiled by clang-22 for gfx1250, run unmodified on a 3×2×2
/// grid of 32×2 workgroups: each thread stores its workgroup ID X, Y, Z
/// (LLVM 22 computes them from `s_getreg_b32 hwreg(HW_REG_IB_STS2, 6, 4)`,
/// 0 without clusters, then `ttmp9`/`ttmp7`) and its thread ID X, Y; the
/// buffer equals NumPy's expectation. The listing opens with the MODE bit 25
/// write and reads IB_STS2 (checked, so the test follows clang).
#[test]
fn gfx1250_workgroup_ids_match_numpy() {
    let d = std::env::temp_dir().join(format!("gcn-emu-gfx1250-wgid-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let src = d.join("wgid.hip");
    std::fs::write(
        &src,
        r#"extern "C" __attribute__((global)) void wgid(unsigned *o) {
  unsigned bx = __builtin_amdgcn_workgroup_id_x(), by = __builtin_amdgcn_workgroup_id_y(),
           bz = __builtin_amdgcn_workgroup_id_z();
  unsigned tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  unsigned t = (((bz * 2 + by) * 3 + bx) * 2 + ty) * 32 + tx;
  o[t * 5 + 0] = bx; o[t * 5 + 1] = by; o[t * 5 + 2] = bz;
  o[t * 5 + 3] = tx; o[t * 5 + 4] = ty;
}
"#,
    )
    .unwrap();
    let asm = d.join("wgid.s");
    let text = hip_asm(&src, "gfx1250", &asm);
    for m in [
        "s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 1",
        "hwreg(HW_REG_IB_STS2, 6, 4)",
        "ttmp9",
        "ttmp7",
    ] {
        assert!(text.contains(m), "clang-22 emits `{m}`");
    }
    let obj = assemble(&asm, "gfx1250", "wgid", &d);
    let l = load(&obj, "wgid");
    let n = 3 * 2 * 2 * 64;
    let (bufs, _) = launch(&l, [3, 2, 2], [32, 2, 1], vec![A::Buf(vec![0xff; n * 20])]).unwrap();
    let want = numpy(
        "z, y, x, ty, tx = np.meshgrid(np.arange(2), np.arange(2), np.arange(3), np.arange(2), np.arange(32), indexing='ij')
out = [np.stack([x, y, z, tx, ty], axis=-1).astype(np.uint32).reshape(-1)]",
        &[],
    );
    assert_eq!(to_u32(&bufs[0]), to_u32(&want[0]));
    let _ = std::fs::remove_dir_all(&d);
}
