//! Triton 3.9's add, softmax and `tl.dot` matmul (tests/triton, compiled
//! without a GPU by `tests/triton/generate.py` for gfx90a, gfx942 and
//! gfx950) emulated and compared with Rust references:
//!
//! * add: f32, bit-exact (one IEEE addition per element);
//! * softmax: within 1e-5 relative of f64 (`v_exp_f32` is an approximation
//!   on hardware and the sums' order is the kernel's own);
//! * matmul: f16 × f16 → f32, bit-exact on inputs whose every partial sum is
//!   exact in f32, within 1e-3 absolute of f64 on random f16 inputs.
//!
//! Triton launches with `num_warps` × 64 work-items per workgroup and
//! passes the kernel's `shared` bytes (from its `.json`) as dynamic LDS; its
//! last two explicit arguments are the global and profile scratch pointers,
//! null when the kernel needs none (`global_scratch_size` 0).

use crate::common;
use common::*;
use gcn_emu::dispatch::Launch;

const TARGETS: &[&str] = &["gfx90a", "gfx942", "gfx950"];

fn dir(kernel: &str, target: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../tests/triton/{kernel}-{target}"))
}

/// `(num_warps, shared)` from Triton's launch metadata.
fn metadata(kernel: &str, target: &str) -> (u32, u32) {
    let p = dir(kernel, target).join(format!("{kernel}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let field = |key: &str| -> u32 {
        let at = text
            .find(&format!("\"{key}\":"))
            .unwrap_or_else(|| panic!("{}: no `{key}`", p.display()));
        text[at + key.len() + 3..]
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (field("num_warps"), field("shared"))
}

/// Run Triton kernel `kernel` for `target` on a grid, with its metadata's
/// block and dynamic LDS; the two scratch pointers are appended as null.
fn run_triton(kernel: &str, target: &str, grid: [u32; 3], mut args: Vec<A>) -> Vec<Vec<u8>> {
    let l = load(&dir(kernel, target).join(format!("{kernel}.hsaco")), kernel);
    let (warps, shared) = metadata(kernel, target);
    let mut launch = Launch::new(grid, [warps * 64, 1, 1]);
    launch.dynamic_lds = shared;
    args.push(A::Val(vec![0; 8]));
    args.push(A::Val(vec![0; 8]));
    let (bufs, stats) =
        launch_with(&l, launch, args).unwrap_or_else(|e| panic!("{kernel} on {target}: {e}"));
    assert_eq!(
        stats.waves,
        grid.iter().product::<u32>() as u64 * warps as u64
    );
    bufs
}

#[test]
fn triton_add_is_bit_exact() {
    // 3000 elements, BLOCK 1024: three programs, the last one masked.
    const N: usize = 3000;
    for target in TARGETS {
        let mut r = Rng(3);
        let x: Vec<f32> = (0..N).map(|_| r.f32() * 100.0).collect();
        let y: Vec<f32> = (0..N).map(|_| r.f32()).collect();
        let bufs = run_triton(
            "add",
            target,
            [3, 1, 1],
            vec![
                A::Buf(f32s(&x)),
                A::Buf(f32s(&y)),
                A::Buf(vec![0xff; 4 * (N + 72)]),
                A::Val((N as u32).to_le_bytes().to_vec()),
            ],
        );
        let got = to_f32(&bufs[2]);
        for i in 0..N {
            assert_eq!(
                got[i].to_bits(),
                (x[i] + y[i]).to_bits(),
                "{target}: o[{i}]"
            );
        }
        // Beyond n the mask holds: the poison is untouched.
        assert!(
            got[N..].iter().all(|v| v.to_bits() == u32::MAX),
            "{target}: wrote past n"
        );
    }
}

#[test]
fn triton_softmax_is_within_tolerance_of_f64() {
    // 6 rows of 1000 columns with a row stride of 1024 (BLOCK 1024: the last
    // 24 lanes masked to -inf): one program per row.
    const ROWS: usize = 6;
    const COLS: usize = 1000;
    const STRIDE: usize = 1024;
    for target in TARGETS {
        let mut r = Rng(11);
        let x: Vec<f32> = (0..ROWS * STRIDE).map(|_| r.f32() * 8.0).collect();
        let bufs = run_triton(
            "softmax",
            target,
            [ROWS as u32, 1, 1],
            vec![
                A::Buf(f32s(&x)),
                A::Buf(vec![0xff; 4 * ROWS * STRIDE]),
                A::Val((STRIDE as u32).to_le_bytes().to_vec()),
                A::Val((COLS as u32).to_le_bytes().to_vec()),
            ],
        );
        let got = to_f32(&bufs[1]);
        for row in 0..ROWS {
            let xs = &x[row * STRIDE..row * STRIDE + COLS];
            let m = xs.iter().fold(f64::MIN, |a, &b| a.max(b as f64));
            let s: f64 = xs.iter().map(|&v| (v as f64 - m).exp()).sum();
            for (c, &v) in xs.iter().enumerate() {
                let want = (v as f64 - m).exp() / s;
                let g = got[row * STRIDE + c] as f64;
                assert!(
                    (g - want).abs() <= 1e-5 * want + 1e-12,
                    "{target}: [{row}][{c}] {g} vs {want}"
                );
            }
            assert!(
                got[row * STRIDE + COLS..(row + 1) * STRIDE]
                    .iter()
                    .all(|v| v.to_bits() == u32::MAX),
                "{target}: row {row} written past n"
            );
        }
    }
}

const M: usize = 128;
const NN: usize = 128;
const K: usize = 96;

fn f16s(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
        .collect()
}

fn matmul_reference(a: &[f32], b: &[f32]) -> Vec<f64> {
    let mut c = vec![0f64; M * NN];
    for i in 0..M {
        for k in 0..K {
            let x = a[i * K + k] as f64;
            for j in 0..NN {
                c[i * NN + j] += x * b[k * NN + j] as f64;
            }
        }
    }
    c
}

fn run_matmul(target: &str, a: &[f32], b: &[f32]) -> Vec<f32> {
    // BM = BN = 64, BK = 32: a 2×2 grid of programs, three K steps each.
    let bufs = run_triton(
        "matmul",
        target,
        [(M / 64) as u32, (NN / 64) as u32, 1],
        vec![
            A::Buf(f16s(a)),
            A::Buf(f16s(b)),
            A::Buf(vec![0xff; 4 * M * NN]),
            A::Val((M as u32).to_le_bytes().to_vec()),
            A::Val((NN as u32).to_le_bytes().to_vec()),
            A::Val((K as u32).to_le_bytes().to_vec()),
        ],
    );
    to_f32(&bufs[2])
}

#[test]
fn triton_matmul_is_bit_exact_on_exactly_representable_inputs() {
    for target in TARGETS {
        let mut r = Rng(21);
        // Multiples of 1/8 in [-1, 1): every partial sum is exact in f32.
        let a: Vec<f32> = (0..M * K)
            .map(|_| (r.next_u32() % 16) as f32 / 8.0 - 1.0)
            .collect();
        let b: Vec<f32> = (0..K * NN)
            .map(|_| (r.next_u32() % 16) as f32 / 8.0 - 1.0)
            .collect();
        let got = run_matmul(target, &a, &b);
        let want = matmul_reference(&a, &b);
        for i in 0..M * NN {
            assert_eq!(
                got[i] as f64,
                want[i],
                "{target}: C[{}][{}]",
                i / NN,
                i % NN
            );
        }
    }
}

#[test]
fn triton_matmul_is_within_tolerance_on_random_f16() {
    for target in TARGETS {
        let mut r = Rng(33);
        let a: Vec<f32> = (0..M * K)
            .map(|_| half::f16::from_f32(r.f32()).to_f32())
            .collect();
        let b: Vec<f32> = (0..K * NN)
            .map(|_| half::f16::from_f32(r.f32()).to_f32())
            .collect();
        let got = run_matmul(target, &a, &b);
        let want = matmul_reference(&a, &b);
        let worst = (0..M * NN)
            .map(|i| (got[i] as f64 - want[i]).abs())
            .fold(0f64, f64::max);
        assert!(worst < 1e-3, "{target}: worst absolute error {worst}");
    }
}

/// Triton 3.9 `tl.dot` on 8-bit inputs (`gcn-emu/tests/triton/generate.py`):
/// 32×32 tiles, BK 64, on a 64×64×128 problem (2×2 programs, two K steps).
/// gfx942 runs `v_mfma_f32_32x32x16_{fp8,bf8}_*` (FNUZ) and
/// `v_mfma_i32_32x32x16_i8`; gfx950 `v_mfma_f32_32x32x64_f8f6f4` (OCP, the
/// format in `cbsz`/`blgp`), `v_mfma_i32_32x32x32_i8` and
/// `ds_read_b64_tr_b8`.
mod eight_bit {
    use super::*;

    const M: usize = 64;
    const N: usize = 64;
    const K: usize = 128;

    fn dir(kernel: &str, target: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/triton/{kernel}-{target}"))
    }

    /// The f32 value of every code of `format`, from ml_dtypes
    /// (`tests/triton/fp8-values.txt`).
    pub fn values(format: &str) -> Vec<f32> {
        let p =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/triton/fp8-values.txt");
        let text = std::fs::read_to_string(&p).unwrap();
        let line = text
            .lines()
            .find(|l| l.split(' ').next() == Some(format))
            .unwrap_or_else(|| panic!("{}: no {format}", p.display()));
        let v: Vec<f32> = line
            .split(' ')
            .skip(1)
            .map(|h| f32::from_bits(u32::from_str_radix(h, 16).unwrap()))
            .collect();
        assert_eq!(v.len(), 256);
        v
    }

    fn run(kernel: &str, target: &str, a: &[u8], b: &[u8], out_bytes: usize) -> Vec<u8> {
        let d = dir(kernel, target);
        let l = load(&d.join(format!("{kernel}.hsaco")), "mm8");
        let text = std::fs::read_to_string(d.join(format!("{kernel}.json"))).unwrap();
        let num = |key: &str| -> u32 {
            let at = text.find(&format!("\"{key}\":")).unwrap() + key.len() + 3;
            text[at..]
                .trim_start()
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let mut launch = Launch::new(
            [(M / 32) as u32, (N / 32) as u32, 1],
            [num("num_warps") * 64, 1, 1],
        );
        launch.dynamic_lds = num("shared");
        let (bufs, _) = launch_with(
            &l,
            launch,
            vec![
                A::Buf(a.to_vec()),
                A::Buf(b.to_vec()),
                A::Buf(vec![0xff; out_bytes]),
                A::Val((M as u32).to_le_bytes().to_vec()),
                A::Val((N as u32).to_le_bytes().to_vec()),
                A::Val((K as u32).to_le_bytes().to_vec()),
                A::Val(vec![0; 8]),
                A::Val(vec![0; 8]),
            ],
        )
        .unwrap_or_else(|e| panic!("{kernel} on {target}: {e}"));
        bufs[2].clone()
    }

    /// Random codes whose values are multiples of 1/8 within [-4, 4]: every
    /// product and partial sum of a 128-long dot product is exact in f32.
    fn codes(vals: &[f32], n: usize, r: &mut Rng) -> Vec<u8> {
        let ok: Vec<u8> = (0..=255u8)
            .filter(|&c| {
                let v = vals[c as usize];
                v.is_finite() && v.abs() <= 4.0 && (v * 8.0).fract() == 0.0
            })
            .collect();
        (0..n)
            .map(|_| ok[r.next_u32() as usize % ok.len()])
            .collect()
    }

    #[test]
    fn triton_fp8_and_bf8_matmuls_are_bit_exact() {
        for (kernel, target, format) in [
            ("mm_fp8", "gfx942", "e4m3fnuz"),
            ("mm_bf8", "gfx942", "e5m2fnuz"),
            ("mm_fp8", "gfx950", "e4m3fn"),
            ("mm_bf8", "gfx950", "e5m2"),
        ] {
            let vals = values(format);
            let mut r = Rng(17);
            let a = codes(&vals, M * K, &mut r);
            let b = codes(&vals, K * N, &mut r);
            let got = to_f32(&run(kernel, target, &a, &b, 4 * M * N));
            for i in 0..M {
                for j in 0..N {
                    let want: f64 = (0..K)
                        .map(|k| {
                            vals[a[i * K + k] as usize] as f64 * vals[b[k * N + j] as usize] as f64
                        })
                        .sum();
                    assert_eq!(
                        got[i * N + j] as f64,
                        want,
                        "{kernel} {target} ({format}): C[{i}][{j}]"
                    );
                }
            }
        }
    }

    #[test]
    fn triton_i8_matmul_is_exact() {
        for target in ["gfx942", "gfx950"] {
            let mut r = Rng(19);
            let a: Vec<u8> = (0..M * K).map(|_| r.next_u32() as u8).collect();
            let b: Vec<u8> = (0..K * N).map(|_| r.next_u32() as u8).collect();
            let got = to_u32(&run("mm_i8", target, &a, &b, 4 * M * N));
            for i in 0..M {
                for j in 0..N {
                    let want: i32 = (0..K)
                        .map(|k| a[i * K + k] as i8 as i32 * b[k * N + j] as i8 as i32)
                        .sum();
                    assert_eq!(got[i * N + j] as i32, want, "mm_i8 {target}: C[{i}][{j}]");
                }
            }
        }
    }
}

/// Findings on a Triton kernel name lines of its `.amdgcn`, as on HIP's
/// asm: Triton aligns blocks with `.p2align`, which the assembler pads with
/// `s_nop` the source does not have; every source instruction of the body
/// still maps to its line.
#[test]
fn every_instruction_of_a_triton_kernel_maps_to_its_amdgcn_line() {
    for kernel in ["matmul", "softmax", "add"] {
        for target in TARGETS {
            let d = dir(kernel, target);
            let mut l = load(&d.join(format!("{kernel}.hsaco")), kernel);
            let path = d.join(format!("{kernel}.amdgcn"));
            let text = std::fs::read_to_string(&path).unwrap();
            let mapped = l.program.attach_source(&format!("{kernel}.amdgcn"), &text);
            let padding = l
                .program
                .instructions
                .iter()
                .filter(|i| !l.program.lines.contains_key(&i.addr))
                .map(|i| i.mnemonic.as_str())
                .collect::<Vec<_>>();
            assert!(
                padding.iter().all(|m| *m == "s_nop" || *m == "s_code_end"),
                "{kernel} on {target}: unmapped {padding:?} ({mapped} mapped)"
            );
            let last = l
                .program
                .instructions
                .iter()
                .rposition(|i| i.mnemonic == "s_endpgm")
                .unwrap();
            let endpgm = l.program.instructions[last].addr;
            let line = &l.program.lines[&endpgm];
            assert!(
                line.starts_with(&format!("{kernel}.amdgcn:")) && line.ends_with("s_endpgm"),
                "{line}"
            );
        }
    }
}
