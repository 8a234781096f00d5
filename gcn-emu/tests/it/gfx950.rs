//! gfx950's microscaling (MX) instructions against references computed here
//! from ml_dtypes' tables (`tests/mx/mx-{values,encode}.txt`, written by
//! `tests/mx/generate.py`; the fp8 tables of `tests/triton/`), never from
//! the emulator:
//!
//! * `gcn_emu::mx` decodes every fp4 (E2M1), fp6 (E2M3, E3M2) and E8M0 code
//!   and encodes f32 inputs (round to nearest even, ties and saturation
//!   included) as ml_dtypes does;
//! * a HIP kernel compiled by clang-22 for gfx950 (`tests/kernels/gfx950_mx.hip`)
//!   through the builtins runs `v_cvt_scalef32_pk_fp4_f32`,
//!   `v_cvt_scalef32_pk_bf16_fp8`, `v_cvt_pk_u8_f32`,
//!   `v_mfma_scale_f32_{16x16x128,32x32x64}_f8f6f4` (every element format
//!   as A and as B, every scale byte), `v_smfmac_f32_16x16x128_fp8_fp8` and
//!   `ds_read_b64_tr_b4`.
//!
//! The matrix references sum the exact products in f64 and round once to
//! f32, the emulator's documented model. The lane layouts of the
//! block-scaled MFMA (which K a lane's element holds, which lane's scale
//! applies) are checked against an independent compiler: Triton 3.9's
//! `tl.dot_scaled` for gfx950 (`tests/mx/triton_mx.py`: fp4, fp8, bf8 and
//! mixed operands, both shapes) runs bit-exactly.

use crate::common;
use common::*;
use gcn_emu::mx::{decode, e8m0, encode, Mini};

fn table_line(file: &str, format: &str) -> Vec<String> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(file);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run python3 gcn-emu/tests/mx/generate.py)",
            p.display()
        )
    });
    let line = text
        .lines()
        .find(|l| l.split(' ').next() == Some(format))
        .unwrap_or_else(|| panic!("{}: no {format}", p.display()));
    line.split(' ').skip(1).map(str::to_string).collect()
}

/// The value of every code of `format` (mx-values.txt or fp8-values.txt).
fn values(format: &str) -> Vec<f64> {
    let file = if format.starts_with("e4") || format.starts_with("e5") {
        "triton/fp8-values.txt"
    } else {
        "mx/mx-values.txt"
    };
    table_line(file, format)
        .iter()
        .map(|h| f32::from_bits(u32::from_str_radix(h, 16).unwrap()) as f64)
        .collect()
}

/// (f32 input, ml_dtypes' code) pairs of a 4- or 6-bit format.
fn encodings(format: &str) -> Vec<(f32, u8)> {
    table_line("mx/mx-encode.txt", format)
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

const MINI: [(&str, Mini); 3] = [
    ("e2m1", Mini::E2M1),
    ("e2m3", Mini::E2M3),
    ("e3m2", Mini::E3M2),
];

fn tmp(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gcn-emu-gfx950-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_mx_module_decodes_and_rounds_as_ml_dtypes() {
    for (name, fmt) in MINI {
        let vals = values(name);
        assert_eq!(vals.len(), 1 << fmt.bits(), "{name}");
        for (c, want) in vals.iter().enumerate() {
            let got = decode(fmt, c as u8);
            assert!(
                got.to_bits() == want.to_bits(),
                "{name} {c:#04x}: {got} vs {want}"
            );
        }
        let pairs = encodings(name);
        assert!(pairs.len() > 200, "{name}: {} encodings", pairs.len());
        for (x, c) in pairs {
            assert_eq!(encode(fmt, x as f64), Some(c), "{name}: {x:e}");
        }
    }
    let scales = values("e8m0");
    for (c, want) in scales.iter().enumerate() {
        let got = e8m0(c as u8) as f32 as f64;
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "e8m0 {c:#04x}: {got} vs {want}"
        );
    }
}

#[test]
fn hip_cvt_scalef32_pk_fp4_f32_matches_ml_dtypes() {
    let l = load(&build("gfx950_mx", "gfx950", &tmp("fp4")), "fp4_encode");
    let mut pairs = encodings("e2m1");
    if pairs.len() % 2 == 1 {
        pairs.push((0.0, 0));
    }
    let n = pairs.len() / 2;
    let mut r = Rng(33);
    // Scale 2^s (mantissa bits set at random: only the exponent counts);
    // inputs multiplied by 2^s, so x / scale is ml_dtypes' input.
    let mut xs = Vec::new();
    let mut scales = Vec::new();
    for i in 0..n {
        let s = (r.next_u32() % 9) as i32 - 4;
        let p = 2f32.powi(s);
        scales.push(f32::from_bits(p.to_bits() | (r.next_u32() & 0x7f_ffff)));
        xs.push(pairs[2 * i].0 * p);
        xs.push(pairs[2 * i + 1].0 * p);
    }
    let old: Vec<u32> = (0..3 * n).map(|_| r.next_u32()).collect();
    let (bufs, _) = launch(
        &l,
        [n.div_ceil(64) as u32, 1, 1],
        [64, 1, 1],
        vec![
            A::Buf(f32s(&xs)),
            A::Buf(f32s(&scales)),
            A::Buf(u32s(&old)),
            A::Val((n as u32).to_le_bytes().to_vec()),
        ],
    )
    .unwrap();
    let out = to_u32(&bufs[2]);
    for i in 0..n {
        let byte = (pairs[2 * i].1 | pairs[2 * i + 1].1 << 4) as u32;
        for (k, sh) in [0, 8, 24].into_iter().enumerate() {
            let want = old[3 * i + k] & !(0xff << sh) | byte << sh;
            assert_eq!(
                out[3 * i + k],
                want,
                "pair {i} ({:e}, {:e}) / {}, byte {}",
                xs[2 * i],
                xs[2 * i + 1],
                scales[i],
                sh / 8
            );
        }
    }
}

#[test]
fn hip_cvt_scalef32_pk_bf16_fp8_scales_every_code() {
    let l = load(&build("gfx950_mx", "gfx950", &tmp("bf16")), "bf16_from_fp8");
    let vals = values("e4m3fn");
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
    let mut r = Rng(7);
    let exps: Vec<i32> = (0..64).map(|_| (r.next_u32() % 17) as i32 - 8).collect();
    let scales: Vec<f32> = exps
        .iter()
        .map(|&s| f32::from_bits(2f32.powi(s).to_bits() | (r.next_u32() & 0x7f_ffff)))
        .collect();
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [64, 1, 1],
        vec![
            A::Buf(u32s(&words)),
            A::Buf(f32s(&scales)),
            A::Buf(vec![0xff; 4 * 128]),
            A::Val(64u32.to_le_bytes().to_vec()),
        ],
    )
    .unwrap();
    let out = to_u32(&bufs[2]);
    for i in 0..64 {
        for k in 0..4 {
            let c = 4 * i + k;
            // fp8 × 2^s is exact in f32 and needs no more than bf16's 8
            // significant bits: the bf16 is the f32's high half.
            let want = (vals[c] * 2f64.powi(exps[i])) as f32;
            let got = (out[2 * i + k / 2] >> (16 * (k % 2))) as u16;
            if want.is_nan() {
                assert!(
                    half::bf16::from_bits(got).is_nan(),
                    "code {c:#04x}: {got:#06x}"
                );
                continue;
            }
            assert_eq!(want.to_bits() & 0xffff, 0, "code {c:#04x} is not a bf16");
            assert_eq!(
                got,
                (want.to_bits() >> 16) as u16,
                "code {c:#04x} × 2^{}",
                exps[i]
            );
        }
    }
}

#[test]
fn hip_cvt_pk_u8_f32_rounds_to_nearest_even_and_clamps() {
    let l = load(&build("gfx950_mx", "gfx950", &tmp("u8")), "pk_u8");
    let mut xs: Vec<f32> = vec![
        0.5,
        1.5,
        2.5,
        3.49,
        254.5,
        255.5,
        256.0,
        1e9,
        -0.5,
        -0.0,
        -1.0,
        -1e9,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        127.5,
    ];
    let mut r = Rng(3);
    while xs.len() < 256 {
        xs.push(r.f32() * 300.0 - 20.0);
    }
    let n = xs.len() / 4;
    let old: Vec<u32> = (0..n).map(|_| r.next_u32()).collect();
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [64, 1, 1],
        vec![
            A::Buf(f32s(&xs)),
            A::Buf(u32s(&old)),
            A::Buf(vec![0; 4 * n]),
            A::Val((n as u32).to_le_bytes().to_vec()),
        ],
    )
    .unwrap();
    let out = to_u32(&bufs[2]);
    for i in 0..n {
        for k in 0..4 {
            let x = xs[4 * i + k];
            // NumPy: np.clip(np.rint(x), 0, 255), NaN → 0.
            let want = if x.is_nan() {
                0
            } else {
                x.round_ties_even().clamp(0.0, 255.0) as u32
            };
            assert_eq!((out[i] >> (8 * k)) & 0xff, want, "{x}");
        }
    }
}

/// Element format of `cbsz`/`blgp` code `f`: (ml_dtypes name, bits).
fn f8f6f4(f: u32) -> (&'static str, usize) {
    match f {
        0 => ("e4m3fn", 8),
        1 => ("e5m2", 8),
        2 => ("e2m3", 6),
        3 => ("e3m2", 6),
        _ => ("e2m1", 4),
    }
}

/// A random code of `format` whose value is finite with |v| ≤ 8 and a
/// multiple of 1/16 (every 4/6-bit code qualifies).
fn pick(vals: &[f64], r: &mut Rng) -> u8 {
    loop {
        let c = (r.next_u32() as usize % vals.len()) as u8;
        let v = vals[c as usize];
        if v.is_finite() && v.abs() <= 8.0 && (v * 16.0).fract() == 0.0 {
            return c;
        }
    }
}

/// Pack 32 `bits`-wide codes densely into 8 dwords.
fn pack(codes: &[u8], bits: usize) -> [u32; 8] {
    let mut w = [0u32; 8];
    for (e, &c) in codes.iter().enumerate() {
        let bit = e * bits;
        let v = (c as u64) << (bit % 32);
        w[bit / 32] |= v as u32;
        if bit % 32 + bits > 32 {
            w[bit / 32 + 1] |= (v >> 32) as u32;
        }
    }
    w
}

fn dwords(v: &[[u32; 8]]) -> Vec<u8> {
    v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn hip_mfma_scale_f8f6f4_matches_an_exact_reference() {
    let obj = build("gfx950_mx", "gfx950", &tmp("mfma"));
    // (kernel, M, cbsz, blgp, byte of A's scale, byte of B's scale), as in
    // the kernel source.
    let cases = [
        ("mfma16_fp8_fp8", 16, 0, 0, 0, 0),
        ("mfma16_bf8_fp6", 16, 1, 2, 1, 2),
        ("mfma16_fp6_bf6", 16, 2, 3, 3, 0),
        ("mfma16_bf6_fp4", 16, 3, 4, 2, 1),
        ("mfma16_fp4_fp4", 16, 4, 4, 0, 3),
        ("mfma16_fp4_bf8", 16, 4, 1, 1, 1),
        ("mfma32_fp6_fp6", 32, 2, 2, 0, 2),
        ("mfma32_fp4_fp8", 32, 4, 0, 3, 1),
    ];
    let mut r = Rng(950);
    for (kernel, m, cbsz, blgp, ba, bb) in cases {
        let l = load(&obj, kernel);
        let k = 64 * 32 / m; // 128 or 64: 32 elements per lane
        let (fa, wa) = f8f6f4(cbsz);
        let (fb, wb) = f8f6f4(blgp);
        let (va, vb) = (values(fa), values(fb));
        let a: Vec<u8> = (0..m * k).map(|_| pick(&va, &mut r)).collect(); // A[i][k]
        let b: Vec<u8> = (0..k * m).map(|_| pick(&vb, &mut r)).collect(); // B[k][j]
        let dregs = m * m / 64;
        let c: Vec<f32> = (0..64 * dregs)
            .map(|_| (r.next_u32() % 64) as f32 / 4.0 - 8.0)
            .collect();
        // Scale dwords: the selected byte 2^-3..2^3, the others anything.
        let sa: Vec<u32> = (0..64).map(|_| r.next_u32()).collect();
        let sb: Vec<u32> = (0..64).map(|_| r.next_u32()).collect();
        let sa: Vec<u32> = sa
            .iter()
            .map(|w| w & !(0xff << (8 * ba)) | (124 + w % 7) << (8 * ba))
            .collect();
        let sb: Vec<u32> = sb
            .iter()
            .map(|w| w & !(0xff << (8 * bb)) | (124 + w % 7) << (8 * bb))
            .collect();
        let scale = |w: u32, byte: u32| 2f64.powi(((w >> (8 * byte)) & 0xff) as i32 - 127);
        // Lane l holds row (A) or column (B) l % M; element e is K
        // 32·(l / M) + e for 6- and 4-bit formats, and for 8-bit ones
        // (K/2)·(e / 16) + 16·(l / M) + e % 16 (two K halves), the layout
        // Triton's `dot_scaled` agrees with (`triton_dot_scaled_is_bit_exact`).
        let kof = |bits: usize, lane: usize, e: usize| {
            if bits == 8 {
                k / 2 * (e / 16) + 16 * (lane / m) + e % 16
            } else {
                32 * (lane / m) + e
            }
        };
        let mut abuf = Vec::new();
        let mut bbuf = Vec::new();
        for lane in 0..64 {
            let ac: Vec<u8> = (0..32)
                .map(|e| a[(lane % m) * k + kof(wa, lane, e)])
                .collect();
            let bc: Vec<u8> = (0..32)
                .map(|e| b[kof(wb, lane, e) * m + lane % m])
                .collect();
            abuf.push(pack(&ac, wa));
            bbuf.push(pack(&bc, wb));
        }
        // C and D: lane l, register r.
        let pos = |lane: usize, reg: usize| -> (usize, usize) {
            if m == 16 {
                (4 * (lane / 16) + reg, lane % 16)
            } else {
                (8 * (reg / 4) + 4 * (lane / 32) + reg % 4, lane % 32)
            }
        };
        let (bufs, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![
                A::Buf(dwords(&abuf)),
                A::Buf(dwords(&bbuf)),
                A::Buf(f32s(&c)),
                A::Buf(u32s(&sa)),
                A::Buf(u32s(&sb)),
                A::Buf(vec![0xff; 4 * 64 * dregs]),
            ],
        )
        .unwrap_or_else(|e| panic!("{kernel}: {e}"));
        let d = to_f32(&bufs[5]);
        for lane in 0..64 {
            for reg in 0..dregs {
                let (i, j) = pos(lane, reg);
                let mut want = c[lane * dregs + reg] as f64;
                for kk in 0..k {
                    let (la, lb) = (i + m * (kk / 32), j + m * (kk / 32));
                    want += va[a[i * k + kk] as usize]
                        * scale(sa[la], ba)
                        * vb[b[kk * m + j] as usize]
                        * scale(sb[lb], bb);
                }
                assert_eq!(d[lane * dregs + reg], want as f32, "{kernel}: D[{i}][{j}]");
            }
        }
    }
}

#[test]
fn hip_smfmac_fp8_expands_the_sparse_operand() {
    let l = load(
        &build("gfx950_mx", "gfx950", &tmp("smfmac")),
        "smfmac16_fp8",
    );
    let v = values("e4m3fn");
    let mut r = Rng(128);
    let mut abuf = Vec::new();
    let mut bbuf = Vec::new();
    let mut idx = Vec::new();
    // Dense A (16×128) and B (128×16) as values.
    let mut a = vec![0f64; 16 * 128];
    let mut b = vec![0f64; 128 * 16];
    for lane in 0..64 {
        let g = 32 * (lane / 16);
        let mut nz = [0u8; 16];
        let mut ix = 0u32;
        for grp in 0..8 {
            // Two distinct places of the group of four, in order.
            let p = r.next_u32() as usize % 6;
            let (p0, p1) = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)][p];
            for (h, place) in [(0, p0), (1, p1)] {
                let t = 2 * grp + h;
                nz[t] = pick(&v, &mut r);
                ix |= (place as u32) << (2 * t);
                a[(lane % 16) * 128 + g + 4 * grp + place] = v[nz[t] as usize];
            }
        }
        let mut aw = [0u32; 8];
        aw[..4].copy_from_slice(&pack(&nz, 8)[..4]);
        abuf.push(aw);
        idx.push(ix);
        let bc: Vec<u8> = (0..32).map(|_| pick(&v, &mut r)).collect();
        for (e, &code) in bc.iter().enumerate() {
            b[(g + e) * 16 + lane % 16] = v[code as usize];
        }
        bbuf.push(pack(&bc, 8));
    }
    let c: Vec<f32> = (0..256)
        .map(|_| (r.next_u32() % 32) as f32 - 16.0)
        .collect();
    let a4: Vec<u8> = abuf
        .iter()
        .flat_map(|w| w[..4].iter().flat_map(|x| x.to_le_bytes()))
        .collect();
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [64, 1, 1],
        vec![
            A::Buf(a4),
            A::Buf(dwords(&bbuf)),
            A::Buf(u32s(&idx)),
            A::Buf(f32s(&c)),
        ],
    )
    .unwrap();
    let d = to_f32(&bufs[3]);
    for lane in 0..64 {
        for reg in 0..4 {
            let (i, j) = (4 * (lane / 16) + reg, lane % 16);
            let want: f64 = c[lane * 4 + reg] as f64
                + (0..128)
                    .map(|kk| a[i * 128 + kk] * b[kk * 16 + j])
                    .sum::<f64>();
            assert_eq!(d[lane * 4 + reg], want as f32, "D[{i}][{j}]");
        }
    }
}

#[test]
fn hip_ds_read_b64_tr_b4_transposes_nibbles_within_16_lanes() {
    let l = load(&build("gfx950_mx", "gfx950", &tmp("tr4")), "tr4");
    let mut r = Rng(4);
    let input: Vec<u64> = (0..64)
        .map(|_| r.next_u32() as u64 | (r.next_u32() as u64) << 32)
        .collect();
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [64, 1, 1],
        vec![A::Buf(bytes), A::Buf(vec![0; 8 * 64])],
    )
    .unwrap();
    let out: Vec<u64> = bufs[1]
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // Lane 16·b + n, nibble j: nibble n of lane 16·b + j (the b8/b16 rule of
    // `gcn_emu::exec::ds_read_tr` with 16 elements a lane).
    for (lane, got) in out.iter().enumerate() {
        let (blk, n) = (lane / 16 * 16, lane % 16);
        let want = (0..16).fold(0u64, |acc, j| {
            acc | (input[blk + j] >> (4 * n) & 0xf) << (4 * j)
        });
        assert_eq!(*got, want, "lane {lane}");
    }
}

/// Triton 3.9's `tl.dot_scaled` for gfx950 (`tests/mx/triton_mx.py`): an
/// independent compiler places the fp4/fp8 elements and their E8M0 scales
/// in the lanes of `v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4` (and reads
/// them through `ds_read_b64_tr_b8`); the product must be bit-exact on inputs
/// whose every partial sum is exact in f32.
#[test]
fn triton_dot_scaled_is_bit_exact() {
    use gcn_emu::dispatch::Launch;
    // (kernel, BM, BN, BK, A format, B format), as in triton_mx.py.
    let cases = [
        ("scaled_fp4_32", 32, 32, 128, "e2m1", "e2m1"),
        ("scaled_fp4_16", 16, 16, 256, "e2m1", "e2m1"),
        ("scaled_fp8_fp4_32", 32, 32, 128, "e4m3fn", "e2m1"),
        ("scaled_fp8_fp4_16", 16, 16, 256, "e4m3fn", "e2m1"),
        ("scaled_fp8_32", 32, 32, 128, "e4m3fn", "e4m3fn"),
        ("scaled_bf8_fp8_16", 16, 16, 256, "e5m2", "e4m3fn"),
    ];
    let mut r = Rng(1250);
    for (kernel, bm, bn, bk, fa, fb) in cases {
        let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/mx")
            .join(kernel);
        let l = load(&d.join(format!("{kernel}.hsaco")), "dot_scaled");
        let json = d.join(format!("{kernel}.json"));
        assert!(
            json.exists(),
            "{kernel}: no {} (run gcn-emu/tests/mx/triton_mx.py)",
            json.display()
        );
        let num = |key: &str| triton_meta(&json, key);
        let (va, vb) = (values(fa), values(fb));
        let a: Vec<u8> = (0..bm * bk).map(|_| pick(&va, &mut r)).collect(); // A[i][k]
        let b: Vec<u8> = (0..bk * bn).map(|_| pick(&vb, &mut r)).collect(); // B[k][j]
        let sa: Vec<u8> = (0..bm * bk / 32)
            .map(|_| 125 + (r.next_u32() % 5) as u8)
            .collect();
        let sb: Vec<u8> = (0..bn * bk / 32)
            .map(|_| 125 + (r.next_u32() % 5) as u8)
            .collect();
        // fp4 is packed two a byte along K, the even K in the low nibble.
        let abytes: Vec<u8> = if fa == "e2m1" {
            (0..bm * bk / 2)
                .map(|x| {
                    let (i, kb) = (x / (bk / 2), x % (bk / 2));
                    a[i * bk + 2 * kb] | a[i * bk + 2 * kb + 1] << 4
                })
                .collect()
        } else {
            a.clone()
        };
        let bbytes: Vec<u8> = if fb == "e2m1" {
            (0..bk / 2 * bn)
                .map(|x| {
                    let (kb, j) = (x / bn, x % bn);
                    b[2 * kb * bn + j] | b[(2 * kb + 1) * bn + j] << 4
                })
                .collect()
        } else {
            b.clone()
        };
        let mut launch = Launch::new([1, 1, 1], [num("num_warps") * 64, 1, 1]);
        launch.dynamic_lds = num("shared");
        let (bufs, _) = launch_with(
            &l,
            launch,
            vec![
                A::Buf(abytes),
                A::Buf(bbytes),
                A::Buf(sa.clone()),
                A::Buf(sb.clone()),
                A::Buf(vec![0xff; 4 * bm * bn]),
                A::Val(vec![0; 8]),
                A::Val(vec![0; 8]),
            ],
        )
        .unwrap_or_else(|e| panic!("{kernel}: {e}"));
        let c = to_f32(&bufs[4]);
        let scale = |e: u8| 2f64.powi(e as i32 - 127);
        for i in 0..bm {
            for j in 0..bn {
                let want: f64 = (0..bk)
                    .map(|k| {
                        va[a[i * bk + k] as usize]
                            * scale(sa[i * bk / 32 + k / 32])
                            * vb[b[k * bn + j] as usize]
                            * scale(sb[j * bk / 32 + k / 32])
                    })
                    .sum();
                assert_eq!(c[i * bn + j], want as f32, "{kernel}: C[{i}][{j}]");
            }
        }
    }
}
