//! gfx1250's eight-element scaled conversions (`gcn_emu` exec/cvt_pk8.rs)
//! run from HIP kernels compiled by clang-22 for gfx1250
//! (`tests/kernels/gfx1250_cvt.hip`, through the
//! `__builtin_amdgcn_cvt_scale*_pk8_*` builtins), against references from
//! ml_dtypes and NumPy, never from the emulator:
//!
//! * up (`v_cvt_scale_pk8_{bf16_fp8,f32_bf8,f16_fp4}`): every source code
//!   under eleven E8M0 scale bytes (0, 1, …, 254 and the NaN 255) against
//!   `tests/mx/gfx1250-cvt.txt` (written by `tests/mx/gfx1250_cvt.py`);
//! * down (`v_cvt_scalef32_pk8_{fp8,fp4}_f32`): ml_dtypes' round-to-nearest-
//!   even codes of `tests/triton/fp8-encode.txt` (E4M3) and
//!   `tests/mx/mx-encode.txt` (E2M1, saturating), every finite code's value,
//!   the inputs multiplied by the f32 scale's power of two (whose mantissa
//!   bits are random: only the exponent counts).
//!
//! What is not modelled is refused with an error, and tested as such:
//! `scale_sel` other than 0, fp8 results out of range.

use crate::common;
use common::*;

fn table(file: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run python3 gcn-emu/tests/mx/gfx1250_cvt.py)",
            p.display()
        )
    })
}

/// The hex fields after the `prefix` of a table line.
fn line(file: &str, prefix: &str) -> Vec<u32> {
    let text = table(file);
    let l = text
        .lines()
        .find(|l| l.starts_with(&format!("{prefix} ")))
        .unwrap_or_else(|| panic!("{file}: no line {prefix}"));
    l[prefix.len() + 1..]
        .split(' ')
        .map(|h| u32::from_str_radix(h, 16).unwrap())
        .collect()
}

/// (f32 input, code) pairs of an encode table.
fn pairs(file: &str, format: &str) -> Vec<(f32, u8)> {
    let text = table(file);
    let l = text
        .lines()
        .find(|l| l.split(' ').next() == Some(format))
        .unwrap_or_else(|| panic!("{file}: no {format}"));
    l.split(' ')
        .skip(1)
        .map(|p| {
            let (x, c) = p.split_once(':').unwrap();
            (
                f32::from_bits(u32::from_str_radix(x, 16).unwrap()),
                u8::from_str_radix(c, 16).unwrap(),
            )
        })
        .collect()
}

const SCALES: [u32; 11] = [0, 1, 100, 117, 127, 128, 134, 150, 200, 254, 255];

/// The kernel `name` of `tests/kernels/gfx1250_cvt.hip`, compiled by
/// clang-22 to assembly and assembled unmodified (its prologue's MODE bit
/// 25 write included, exec.rs `HwRegs`).
fn kernel(name: &str) -> Loaded {
    static OBJ: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let obj = OBJ.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("gcn-emu-gfx1250-cvt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/gfx1250_cvt.hip");
        let s = dir.join("gfx1250_cvt.s");
        let asm = hip_asm(&src, "gfx1250", &s);
        assert!(
            asm.contains("s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 1"),
            "clang-22 opens the kernel with its MODE bit 25 write, which runs unmodified"
        );
        assemble(&s, "gfx1250", "gfx1250_cvt", &dir)
    });
    load(obj, name)
}

/// Runs an up-conversion kernel over every code (packed `per_word` codes a
/// source word, `words` source words a group of eight) under every scale;
/// returns the destination bits per (scale, code).
fn run_up(name: &str, codes: usize, width: u32, dst_bits: u32) -> Vec<Vec<u32>> {
    let l = kernel(name);
    let groups_per_scale = codes / 8;
    let n = groups_per_scale * SCALES.len();
    let mut src = Vec::new();
    let mut scale = Vec::new();
    for (si, &e) in SCALES.iter().enumerate() {
        for g in 0..groups_per_scale {
            let mut bits = 0u64;
            for k in 0..8 {
                bits |= ((g * 8 + k) as u64) << (width as usize * k);
            }
            if width == 8 {
                src.extend_from_slice(&bits.to_le_bytes());
            } else {
                src.extend_from_slice(&(bits as u32).to_le_bytes());
            }
            // The other scale bytes differ from byte 0: reading them fails.
            scale.push(e | (si as u32 * 37 + 11) << 8 | 0x5a << 16 | 0xa5 << 24);
        }
    }
    let out_bytes = n * 8 * dst_bits as usize / 8;
    let (bufs, _) = launch(
        &l,
        [1, 1, 1],
        [32 * n.div_ceil(32) as u32, 1, 1],
        vec![
            A::Buf(src),
            A::Buf(u32s(&scale)),
            A::Buf(vec![0xee; out_bytes]),
            A::Val((n as u32).to_le_bytes().to_vec()),
        ],
    )
    .unwrap();
    let out = &bufs[2];
    let elem = |i: usize| -> u32 {
        if dst_bits == 32 {
            u32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap())
        } else {
            u16::from_le_bytes(out[2 * i..2 * i + 2].try_into().unwrap()) as u32
        }
    };
    (0..SCALES.len())
        .map(|si| (0..codes).map(|c| elem(si * codes + c)).collect())
        .collect()
}

fn check_up(name: &str, dst: &str, src: &str, width: u32, dst_bits: u32, nan: fn(u32) -> bool) {
    let codes = 1 << width;
    let got = run_up(name, codes, width, dst_bits);
    for (si, &e) in SCALES.iter().enumerate() {
        let want = line("mx/gfx1250-cvt.txt", &format!("{dst} {src} {e}"));
        assert_eq!(want.len(), codes);
        for c in 0..codes {
            let (g, w) = (got[si][c], want[c]);
            if nan(w) {
                assert!(
                    nan(g),
                    "{name}: code {c:#x} × 2^({e} - 127): {g:#x}, want a NaN"
                );
            } else {
                assert_eq!(g, w, "{name}: code {c:#x} × 2^({e} - 127)");
            }
        }
    }
}

#[test]
fn hip_cvt_scale_pk8_bf16_fp8_every_code_and_scale() {
    check_up("bf16_from_fp8", "bf16", "e4m3fn", 8, 16, |b| {
        half::bf16::from_bits(b as u16).is_nan()
    });
}

#[test]
fn hip_cvt_scale_pk8_f32_bf8_every_code_and_scale() {
    check_up("f32_from_bf8", "f32", "e5m2", 8, 32, |b| {
        f32::from_bits(b).is_nan()
    });
}

#[test]
fn hip_cvt_scale_pk8_f16_fp4_every_code_and_scale() {
    // 16 codes: two groups of eight a scale.
    check_up("f16_from_fp4", "f16", "e2m1", 4, 16, |b| {
        half::f16::from_bits(b as u16).is_nan()
    });
}

#[test]
fn hip_cvt_scale_pk8_other_scale_sel_is_refused() {
    let l = kernel("bf16_from_fp8_sel1");
    let err = launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![
            A::Buf(vec![0; 8 * 32]),
            A::Buf(vec![0x7f; 4 * 32]),
            A::Buf(vec![0; 16 * 32]),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("only scale_sel:0"), "{err}");
}

/// Runs a down-conversion kernel on groups of eight f32 inputs, scale
/// `2^s` (random mantissa bits) per group; returns the output words.
fn run_down(name: &str, xs: &[f32], scales: &[f32], out_words: usize) -> Result<Vec<u32>, String> {
    let l = kernel(name);
    let n = scales.len();
    let mut args = vec![A::Buf(f32s(xs))];
    if !scales.is_empty() && name != "fp4_from_f32_one" {
        args.push(A::Buf(f32s(scales)));
    }
    args.push(A::Buf(vec![0xee; 4 * out_words * n]));
    args.push(A::Val((n as u32).to_le_bytes().to_vec()));
    let out = args.len() - 2;
    let (bufs, _) = launch(&l, [1, 1, 1], [32 * n.div_ceil(32) as u32, 1, 1], args)
        .map_err(|e| e.to_string())?;
    Ok(to_u32(&bufs[out]))
}

/// Input/code pairs padded to groups of eight, scaled by 2^s a group;
/// returns (inputs, scales, codes).
fn scaled(mut p: Vec<(f32, u8)>, seed: u64, spread: u32) -> (Vec<f32>, Vec<f32>, Vec<u8>) {
    while p.len() % 8 != 0 {
        p.push((0.0, 0));
    }
    let mut r = Rng(seed);
    let (mut xs, mut scales, mut codes) = (Vec::new(), Vec::new(), Vec::new());
    for g in p.chunks(8) {
        let s = (r.next_u32() % (2 * spread + 1)) as i32 - spread as i32;
        let m = 2f32.powi(s);
        scales.push(f32::from_bits(m.to_bits() | (r.next_u32() & 0x7f_ffff)));
        for &(x, c) in g {
            xs.push(x * m);
            codes.push(c);
        }
    }
    (xs, scales, codes)
}

#[test]
fn hip_cvt_scalef32_pk8_fp8_f32_matches_ml_dtypes() {
    let mut p = pairs("triton/fp8-encode.txt", "e4m3fn");
    // Every finite code's own value, too.
    let vals = line("triton/fp8-values.txt", "e4m3fn");
    for (c, v) in vals.iter().enumerate() {
        let v = f32::from_bits(*v);
        if v.is_finite() {
            p.push((v, c as u8));
        }
    }
    let (xs, scales, codes) = scaled(p, 5, 20);
    let out = run_down("fp8_from_f32", &xs, &scales, 2).unwrap();
    for (i, &c) in codes.iter().enumerate() {
        let got = (out[i / 4] >> (8 * (i % 4))) as u8;
        assert_eq!(got, c, "{:e} / {:e}", xs[i], scales[i / 8]);
    }
    // Out of range: refused, not guessed.
    let mut big = vec![1.0f32; 8];
    big[3] = 1e6;
    let err = run_down("fp8_from_f32", &big, &[1.0], 2).unwrap_err();
    assert!(err.contains("beyond the fp8/bf8 range"), "{err}");
}

#[test]
fn hip_cvt_scalef32_pk8_fp4_f32_matches_ml_dtypes() {
    let mut p = pairs("mx/mx-encode.txt", "e2m1");
    let vals = line("mx/mx-values.txt", "e2m1");
    for (c, v) in vals.iter().enumerate() {
        p.push((f32::from_bits(*v), c as u8));
    }
    let (xs, scales, codes) = scaled(p.clone(), 9, 8);
    let out = run_down("fp4_from_f32", &xs, &scales, 1).unwrap();
    for (i, &c) in codes.iter().enumerate() {
        let got = (out[i / 8] >> (4 * (i % 8))) as u8 & 0xf;
        assert_eq!(got, c, "{:e} / {:e}", xs[i], scales[i / 8]);
    }
    // aiter's form: the inline constant 1.0 as the scale.
    let (xs, _, codes) = scaled(p, 9, 0);
    let n = xs.len() / 8;
    let out = run_down("fp4_from_f32_one", &xs, &vec![1.0; n], 1).unwrap();
    for (i, &c) in codes.iter().enumerate() {
        let got = (out[i / 8] >> (4 * (i % 8))) as u8 & 0xf;
        assert_eq!(got, c, "{:e} / 1.0", xs[i]);
    }
}
