//! IREE's 256×256×256 f16 matmul (tests/corpus/iree, compiled by IREE 3.13,
//! MFMA `v_mfma_f32_16x16x16_f16`; on gfx950 `v_mfma_f32_16x16x32_f16` fed
//! by `ds_read_b64_tr_b16`), its conv and softmax, for gfx942, gfx90a and
//! gfx950, emulated and compared with a Rust f64 reference: bit-exact on inputs whose products and sums are exact in f32,
//! within 1e-3 absolute on random f16 inputs in [-1, 1).

use crate::common;
use common::*;

const KERNEL: &str = "matmul_dispatch_0_matmul_256x256x256_f16xf16xf32";
const N: usize = 256;

fn corpus(target: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../tests/corpus/iree/{target}/matmul.hsaco"))
}

fn f16s(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
        .collect()
}

fn reference(a: &[f32], b: &[f32]) -> Vec<f64> {
    let mut c = vec![0f64; N * N];
    for i in 0..N {
        for k in 0..N {
            let x = a[i * N + k] as f64;
            for j in 0..N {
                c[i * N + j] += x * b[k * N + j] as f64;
            }
        }
    }
    c
}

fn run_matmul(target: &str, a: &[f32], b: &[f32]) -> Vec<f32> {
    let l = load(&corpus(target), KERNEL);
    // IREE's workgroup tile is 64×128 of the output: 8 workgroups of 256.
    let (bufs, stats) = launch(
        &l,
        [8, 1, 1],
        [256, 1, 1],
        vec![
            A::Buf(f16s(a)),
            A::Buf(f16s(b)),
            A::Buf(vec![0xff; 4 * N * N]),
        ],
    )
    .unwrap();
    assert_eq!(stats.waves, 32);
    to_f32(&bufs[2])
}

#[test]
fn iree_matmul_is_bit_exact_on_exactly_representable_inputs() {
    for target in ["gfx942", "gfx90a", "gfx950"] {
        let mut r = Rng(21);
        // Multiples of 1/8 in [-1, 1): every partial sum is exact in f32.
        let a: Vec<f32> = (0..N * N)
            .map(|_| (r.next_u32() % 16) as f32 / 8.0 - 1.0)
            .collect();
        let b: Vec<f32> = (0..N * N)
            .map(|_| (r.next_u32() % 16) as f32 / 8.0 - 1.0)
            .collect();
        let got = run_matmul(target, &a, &b);
        let want = reference(&a, &b);
        for i in 0..N * N {
            assert_eq!(got[i] as f64, want[i], "{target}: C[{}][{}]", i / N, i % N);
        }
    }
}

#[test]
fn iree_matmul_is_within_tolerance_on_random_f16() {
    let mut r = Rng(33);
    let a: Vec<f32> = (0..N * N)
        .map(|_| half::f16::from_f32(r.f32()).to_f32())
        .collect();
    let b: Vec<f32> = (0..N * N)
        .map(|_| half::f16::from_f32(r.f32()).to_f32())
        .collect();
    let got = run_matmul("gfx942", &a, &b);
    let want = reference(&a, &b);
    let worst = (0..N * N)
        .map(|i| (got[i] as f64 - want[i]).abs())
        .fold(0f64, f64::max);
    assert!(worst < 1e-3, "worst absolute error {worst}");
}

#[test]
fn iree_conv_is_bit_exact_on_exactly_representable_inputs() {
    // 1×34×34×64 input, 3×3×64×64 filter (HWCF), 1×32×32×64 output; 8 workgroups of 512.
    const K: &str = "conv_dispatch_0_conv_32x32x64x3x3x64_f16xf16xf32";
    for target in ["gfx942", "gfx90a", "gfx950"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../tests/corpus/iree/{target}/conv.hsaco"));
        let l = load(&path, K);
        let mut r = Rng(5);
        let x: Vec<f32> = (0..34 * 34 * 64)
            .map(|_| (r.next_u32() % 16) as f32 / 8.0 - 1.0)
            .collect();
        let f: Vec<f32> = (0..3 * 3 * 64 * 64)
            .map(|_| (r.next_u32() % 16) as f32 / 8.0 - 1.0)
            .collect();
        let (bufs, _) = launch(
            &l,
            [8, 1, 1],
            [512, 1, 1],
            vec![
                A::Buf(f16s(&x)),
                A::Buf(f16s(&f)),
                A::Buf(vec![0xff; 4 * 32 * 32 * 64]),
            ],
        )
        .unwrap();
        let got = to_f32(&bufs[2]);
        for h in 0..32 {
            for w in 0..32 {
                for o in 0..64 {
                    let mut want = 0f64;
                    for dy in 0..3 {
                        for dx in 0..3 {
                            for c in 0..64 {
                                want += x[((h + dy) * 34 + w + dx) * 64 + c] as f64
                                    * f[((dy * 3 + dx) * 64 + c) * 64 + o] as f64;
                            }
                        }
                    }
                    assert_eq!(
                        got[(h * 32 + w) * 64 + o] as f64,
                        want,
                        "{target}: out[{h}][{w}][{o}]"
                    );
                }
            }
        }
    }
}

#[test]
fn iree_softmax_is_within_tolerance_of_f64() {
    // 128×1024 f32, softmax over rows; 128 workgroups of 256. The kernel uses
    // v_exp_f32 (hardware: an approximation; here: exp2 rounded), DPP adds
    // and packed f32 adds: compared within 1e-5 relative.
    const K: &str = "softmax_dispatch_0_softmax_128x1024xf32_dispatch_tensor_store";
    for target in ["gfx942", "gfx90a", "gfx950"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../tests/corpus/iree/{target}/softmax.hsaco"));
        let l = load(&path, K);
        let mut r = Rng(8);
        let x: Vec<f32> = (0..128 * 1024).map(|_| r.f32() * 8.0).collect();
        let (bufs, _) = launch(
            &l,
            [128, 1, 1],
            [256, 1, 1],
            vec![A::Buf(f32s(&x)), A::Buf(vec![0xff; 4 * 128 * 1024])],
        )
        .unwrap();
        let got = to_f32(&bufs[1]);
        for row in 0..128 {
            let xs = &x[row * 1024..(row + 1) * 1024];
            let m = xs.iter().fold(f64::MIN, |a, &b| a.max(b as f64));
            let s: f64 = xs.iter().map(|&v| (v as f64 - m).exp()).sum();
            for (c, &v) in xs.iter().enumerate() {
                let want = (v as f64 - m).exp() / s;
                let g = got[row * 1024 + c] as f64;
                assert!(
                    (g - want).abs() <= 1e-5 * want + 1e-12,
                    "{target}: [{row}][{c}] {g} vs {want}"
                );
            }
        }
    }
}

/// IREE 3.13's softmax for gfx1100 and gfx1201 (wave32, 8 waves a
/// workgroup of 256): VOPD pairs, DPP `v_max_num_f32`/`v_add_f32` row
/// reductions, `v_permlanex16_b32`, `v_max3_num_f32`, buffer loads and
/// stores through IREE's V#, and on gfx1201 `s_barrier_signal`/
/// `s_barrier_wait` and the split waits. Compared with the f64 softmax
/// within 1e-5 relative, as on CDNA (`v_exp_f32` is exp2 rounded here, an
/// approximation on hardware). The reference is NumPy's f64 softmax.
#[test]
fn iree_softmax_on_rdna_is_within_tolerance_of_f64() {
    const K: &str = "softmax_dispatch_0_softmax_128x1024xf32_dispatch_tensor_store";
    for target in ["gfx1100", "gfx1201"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../tests/corpus/iree/{target}/softmax.hsaco"));
        let l = load(&path, K);
        let mut r = Rng(9);
        let x: Vec<f32> = (0..128 * 1024).map(|_| r.f32() * 8.0).collect();
        let mem = gcn_emu::memory::Memory::new();
        let (a, b) = (
            mem.alloc_bytes("x", &f32s(&x)),
            mem.alloc_bytes("y", &vec![0xff; 4 * 128 * 1024]),
        );
        // One run: the sanitizer's false-alarm pass of `common::launch` is
        // left to its RDNA counters' own tests.
        let mut launch = gcn_emu::dispatch::Launch::new([128, 1, 1], [256, 1, 1]);
        launch.max_instructions = 10_000_000;
        let stats = gcn_emu::dispatch::run(
            &l.co,
            l.co.kernel(K).unwrap(),
            &l.program,
            &mem,
            &[
                gcn_emu::dispatch::ArgValue::Pointer(a),
                gcn_emu::dispatch::ArgValue::Pointer(b),
            ],
            &launch,
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(stats.waves, 128 * 8, "{target}: wave32");
        let got = to_f32(&mem.contents(b).unwrap());
        let want = numpy_softmax(&x, 1024);
        for row in 0..128 {
            for c in 0..1024 {
                let want = want[row * 1024 + c];
                let g = got[row * 1024 + c] as f64;
                assert!(
                    (g - want).abs() <= 1e-5 * want + 1e-12,
                    "{target}: [{row}][{c}] {g} vs {want}"
                );
            }
        }
    }
}

/// NumPy's f64 softmax over rows of `cols` of `x` (python3 with NumPy).
fn numpy_softmax(x: &[f32], cols: usize) -> Vec<f64> {
    let y = numpy(
        &format!(
            "x = np.frombuffer(a0, np.float32).reshape(-1, {cols}).astype(np.float64)
e = np.exp(x - x.max(axis=1, keepdims=True))
out = [e / e.sum(axis=1, keepdims=True)]"
        ),
        &[&f32s(x)],
    );
    y[0].chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
