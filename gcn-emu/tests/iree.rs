//! IREE's 256×256×256 f16 matmul (tests/corpus/iree, compiled by IREE 3.13,
//! MFMA `v_mfma_f32_16x16x16_f16`) emulated and compared with a Rust f64
//! reference: bit-exact on inputs whose products and sums are exact in f32,
//! within 1e-3 absolute on random f16 inputs in [-1, 1).

mod common;
use common::*;

const KERNEL: &str = "matmul_dispatch_0_matmul_256x256x256_f16xf16xf32";
const N: usize = 256;

fn corpus(target: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/corpus/iree/{target}/matmul.hsaco"))
}

fn f16s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|&x| half::f16::from_f32(x).to_le_bytes()).collect()
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
    let (bufs, stats) = launch(&l, [8, 1, 1], [256, 1, 1], vec![A::Buf(f16s(a)), A::Buf(f16s(b)), A::Buf(vec![0xff; 4 * N * N])]).unwrap();
    assert_eq!(stats.waves, 32);
    to_f32(&bufs[2])
}

#[test]
fn iree_matmul_is_bit_exact_on_exactly_representable_inputs() {
    for target in ["gfx942", "gfx90a"] {
        let mut r = Rng(21);
        // Multiples of 1/8 in [-1, 1): every partial sum is exact in f32.
        let a: Vec<f32> = (0..N * N).map(|_| (r.next_u32() % 16) as f32 / 8.0 - 1.0).collect();
        let b: Vec<f32> = (0..N * N).map(|_| (r.next_u32() % 16) as f32 / 8.0 - 1.0).collect();
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
    let a: Vec<f32> = (0..N * N).map(|_| half::f16::from_f32(r.f32()).to_f32()).collect();
    let b: Vec<f32> = (0..N * N).map(|_| half::f16::from_f32(r.f32()).to_f32()).collect();
    let got = run_matmul("gfx942", &a, &b);
    let want = reference(&a, &b);
    let worst = (0..N * N).map(|i| (got[i] as f64 - want[i]).abs()).fold(0f64, f64::max);
    assert!(worst < 1e-3, "worst absolute error {worst}");
}
