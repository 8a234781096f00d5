//! The book's HIP-without-ROCm example (tests/kernels/no_rocm.hip, shown in
//! docs/src/guide/run.md): it compiles with clang-22 `-nogpuinc -nogpulib`
//! for every emulated target, and its kernels compute what their comments
//! say (workgroup-size, barrier, static and dynamic LDS, ds_bpermute).

use crate::common;
use common::*;

#[test]
fn the_books_hip_without_rocm_example_builds_and_runs() {
    let dir = std::env::temp_dir().join(format!("gcn-emu-no-rocm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for t in TARGETS {
        let obj = build("no_rocm", t, &dir);
        // reverse_block: 3 workgroups of 256, n = 700 (the last one partial).
        let l = load(&obj, "reverse_block");
        let n = 700usize;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
        let (bufs, _) = launch(
            &l,
            [3, 1, 1],
            [256, 1, 1],
            vec![
                A::Buf(f32s(&x)),
                A::Buf(f32s(&vec![-1.0; n])),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = to_f32(&bufs[1]);
        for (i, &g) in got.iter().enumerate() {
            let (b, lane) = (i / 256, i % 256);
            let src = b * 256 + 255 - lane;
            let want = if src < n { x[src] } else { 0.0 };
            assert_eq!(g, want, "{t}: reverse_block out[{i}]");
        }
        // rotate_lanes: 2 workgroups of 128 (2 waves each), 512 bytes of
        // dynamic LDS.
        let l = load(&obj, "rotate_lanes");
        let v: Vec<u32> = (0..256u32).map(|i| i * 7 + 1).collect();
        let mut launch_desc = gcn_emu::dispatch::Launch::new([2, 1, 1], [128, 1, 1]);
        launch_desc.dynamic_lds = 512;
        let (bufs, _) = launch_with(
            &l,
            launch_desc,
            vec![A::Buf(u32s(&v)), A::Buf(vec![0; 4 * 256])],
        )
        .unwrap();
        let got = to_u32(&bufs[1]);
        for i in 0..256 {
            let wave = i / 64;
            assert_eq!(
                got[i],
                v[wave * 64 + (i % 64 + 1) % 64],
                "{t}: rotate_lanes out[{i}]"
            );
        }
    }
}
