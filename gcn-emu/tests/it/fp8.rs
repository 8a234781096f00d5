//! 8-bit floats: gfx942's FNUZ formats (e4m3fnuz, e5m2fnuz) and gfx950's
//! OCP ones (e4m3fn, e5m2), checked against ml_dtypes (an independent
//! implementation; its tables are `tests/triton/fp8-{values,encode}.txt`,
//! written by `tests/triton/generate.py`):
//!
//! * `gcn_emu::fp8` decodes every code and encodes (round to nearest even,
//!   ties included) as ml_dtypes does;
//! * the conversion instructions, in a HIP kernel compiled with clang-22 for
//!   gfx942 and gfx950 (`tests/kernels/fp8.hip`: `v_cvt_f32_{fp8,bf8}` in
//!   their VOP1 and SDWA forms, `v_cvt_pk_f32_{fp8,bf8}`,
//!   `v_cvt_pk_{fp8,bf8}_f32` with `op_sel` on the destination), give the
//!   same codes and values;
//! * the fp8/bf8 MFMA `v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}` of the same
//!   kernel computes a 16×16×32 product bit-exactly (inputs whose partial
//!   sums are exact in f32).

use crate::common;
use common::*;
use gcn_emu::fp8::{decode, encode, Fp8};

const FORMATS: [(&str, Fp8); 4] = [
    ("e4m3fnuz", Fp8::E4M3Fnuz),
    ("e5m2fnuz", Fp8::E5M2Fnuz),
    ("e4m3fn", Fp8::E4M3Fn),
    ("e5m2", Fp8::E5M2),
];

fn table(file: &str, format: &str) -> Vec<String> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/triton")
        .join(file);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run gcn-emu/tests/triton/generate.py)",
            p.display()
        )
    });
    let line = text
        .lines()
        .find(|l| l.split(' ').next() == Some(format))
        .unwrap_or_else(|| panic!("{}: no {format}", p.display()));
    line.split(' ').skip(1).map(str::to_string).collect()
}

fn values(format: &str) -> Vec<f32> {
    table("fp8-values.txt", format)
        .iter()
        .map(|h| f32::from_bits(u32::from_str_radix(h, 16).unwrap()))
        .collect()
}

/// (f32 input, ml_dtypes' code) pairs.
fn encodings(format: &str) -> Vec<(f32, u8)> {
    table("fp8-encode.txt", format)
        .iter()
        .map(|p| {
            let (x, c) = p.split_once(':').unwrap();
            (
                f32::from_bits(u32::from_str_radix(x, 16).unwrap()),
                u8::from_str_radix(c, 16).unwrap(),
            )
        })
        .collect()
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn the_fp8_module_decodes_and_rounds_as_ml_dtypes() {
    for (name, fmt) in FORMATS {
        let vals = values(name);
        for c in 0..=255u8 {
            let got = decode(fmt, c) as f32;
            assert!(
                same(got, vals[c as usize]),
                "{name} {c:#04x}: {got} vs {}",
                vals[c as usize]
            );
        }
        let pairs = encodings(name);
        assert!(pairs.len() > 300, "{name}: {} encodings", pairs.len());
        for (x, c) in pairs {
            assert_eq!(encode(fmt, x), Some(c), "{name}: {x:e}");
        }
    }
}

#[test]
fn hip_fp8_conversions_match_ml_dtypes() {
    let dir = std::env::temp_dir().join(format!("gcn-emu-fp8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (target, fp8, bf8) in [
        ("gfx942", "e4m3fnuz", "e5m2fnuz"),
        ("gfx950", "e4m3fn", "e5m2"),
    ] {
        let obj = build("fp8", target, &dir);
        // Decoding: every byte, through every decoder.
        let l = load(&obj, "fp8_decode");
        let words: Vec<u32> = (0..64u32)
            .map(|i| {
                u32::from_le_bytes([
                    4 * i as u8,
                    4 * i as u8 + 1,
                    4 * i as u8 + 2,
                    4 * i as u8 + 3,
                ])
            })
            .collect();
        let (bufs, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![A::Buf(u32s(&words)), A::Buf(vec![0xff; 4 * 16 * 64])],
        )
        .unwrap();
        let out = to_f32(&bufs[1]);
        let (vf, vb) = (values(fp8), values(bf8));
        for i in 0..64 {
            for k in 0..4 {
                let c = 4 * i + k;
                for (slot, want, what) in [
                    (k, vf[c], "v_cvt_f32_fp8"),
                    (4 + k, vb[c], "v_cvt_f32_bf8"),
                    (8 + k, vf[c], "v_cvt_pk_f32_fp8"),
                    (12 + k, vb[c], "v_cvt_pk_f32_bf8"),
                ] {
                    let got = out[16 * i + slot];
                    assert!(
                        same(got, want),
                        "{target} {what} of {c:#04x}: {got} vs {want}"
                    );
                }
            }
        }
        // Encoding: ml_dtypes' inputs, four per lane.
        for (format, kernel) in [(fp8, "fp8_encode"), (bf8, "bf8_encode")] {
            let l = load(&obj, kernel);
            let mut pairs = encodings(format);
            while pairs.len() % 4 != 0 {
                pairs.push((0.0, 0));
            }
            let n = pairs.len() / 4;
            let xs: Vec<f32> = pairs.iter().map(|p| p.0).collect();
            let (bufs, _) = launch(
                &l,
                [n.div_ceil(64) as u32, 1, 1],
                [64, 1, 1],
                vec![
                    A::Buf(f32s(&xs)),
                    A::Buf(vec![0xff; 4 * n]),
                    A::Val((n as u32).to_le_bytes().to_vec()),
                ],
            )
            .unwrap();
            let got: Vec<u8> = bufs[1].clone();
            for (i, (x, c)) in pairs.iter().enumerate() {
                assert_eq!(
                    got[i], *c,
                    "{target} {format}: {x:e} encoded {:#04x}, ml_dtypes {c:#04x}",
                    got[i]
                );
            }
        }
    }
}

#[test]
fn hip_fp8_mfma_is_bit_exact() {
    let dir = std::env::temp_dir().join(format!("gcn-emu-fp8m-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (target, fp8, bf8) in [
        ("gfx942", "e4m3fnuz", "e5m2fnuz"),
        ("gfx950", "e4m3fn", "e5m2"),
    ] {
        let l = load(&build("fp8", target, &dir), "fp8_mfma");
        let (vf, vb) = (values(fp8), values(bf8));
        // Codes of multiples of 1/8 within [-4, 4]: exact partial sums.
        let pick = |vals: &[f32], r: &mut Rng| -> u8 {
            loop {
                let c = r.next_u32() as u8;
                let v = vals[c as usize];
                if v.is_finite() && v.abs() <= 4.0 && (v * 8.0).fract() == 0.0 {
                    return c;
                }
            }
        };
        let mut r = Rng(23);
        // A[i][k] (fp8 then bf8), B[k][j] (fp8 then bf8), row-major 16×32 and 32×16.
        let a: [Vec<u8>; 2] = [
            (0..512).map(|_| pick(&vf, &mut r)).collect(),
            (0..512).map(|_| pick(&vb, &mut r)).collect(),
        ];
        let b: [Vec<u8>; 2] = [
            (0..512).map(|_| pick(&vf, &mut r)).collect(),
            (0..512).map(|_| pick(&vb, &mut r)).collect(),
        ];
        // Lane l holds A[l % 16][8 (l / 16) + e] and B[8 (l / 16) + e][l % 16] in byte e.
        let mut abuf = vec![0u8; 2 * 64 * 8];
        let mut bbuf = vec![0u8; 2 * 64 * 8];
        for t in 0..2 {
            for l in 0..64 {
                for e in 0..8 {
                    let k = 8 * (l / 16) + e;
                    abuf[(64 * t + l) * 8 + e] = a[t][(l % 16) * 32 + k];
                    bbuf[(64 * t + l) * 8 + e] = b[t][k * 16 + l % 16];
                }
            }
        }
        let (bufs, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![A::Buf(abuf), A::Buf(bbuf), A::Buf(vec![0xff; 4 * 1024])],
        )
        .unwrap();
        let d = to_f32(&bufs[2]);
        let vals = [&vf, &vb];
        for (t, (ta, tb)) in [(0, 0), (0, 1), (1, 0), (1, 1)].into_iter().enumerate() {
            for l in 0..64 {
                for reg in 0..4 {
                    let (i, j) = (4 * (l / 16) + reg, l % 16);
                    let want: f64 = (0..32)
                        .map(|k| {
                            vals[ta][a[ta][i * 32 + k] as usize] as f64
                                * vals[tb][b[tb][k * 16 + j] as usize] as f64
                        })
                        .sum();
                    assert_eq!(
                        d[256 * t + 64 * reg + l] as f64,
                        want,
                        "{target} mfma {t}: D[{i}][{j}]"
                    );
                }
            }
        }
    }
}
