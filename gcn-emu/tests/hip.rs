//! HIP kernels compiled with clang-22 for gfx90a, gfx942 and gfx950, run in
//! the emulator and compared with Rust references: bit-exact where the math
//! is exact (integer math, IEEE-rounded f32 add/mul/fma/div/sqrt, LDS,
//! cross-lane moves, atomics, buffer bounds).

mod common;
use common::*;

#[test]
fn saxpy_matches_the_reference_bit_for_bit() {
    let dir = tempfile_dir();
    for t in TARGETS {
        let l = load(&build("saxpy", t, &dir), "saxpy");
        let n = 1000u32;
        let mut r = Rng(1);
        let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
        let y: Vec<f32> = (0..n).map(|_| r.f32()).collect();
        let a = 0.75f32;
        let (bufs, _) = launch(
            &l,
            [n.div_ceil(256), 1, 1],
            [256, 1, 1],
            vec![A::Val(a.to_le_bytes().to_vec()), A::Buf(f32s(&x)), A::Buf(f32s(&y)), A::Val(n.to_le_bytes().to_vec())],
        )
        .unwrap();
        let got = to_f32(&bufs[1]);
        for i in 0..n as usize {
            // v_fmac_f32: one rounding, as f32::mul_add.
            assert_eq!(got[i].to_bits(), a.mul_add(x[i], y[i]).to_bits(), "{t}: y[{i}]");
        }
        assert_eq!(to_f32(&bufs[0]), x, "{t}: x untouched");
    }
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gcn-emu-test-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
