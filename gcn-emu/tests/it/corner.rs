//! Emulator corner cases of ordinary compiler output: HIP kernels of
//! tests/kernels/corner.hip compiled by clang-22 for gfx90a, gfx942 and
//! gfx950, run in the emulator and compared bit for bit with references
//! that do not come from the emulator: Rust's IEEE-754 arithmetic (correctly
//! rounded f64/f32 add, fma, division, square root, denormals included),
//! f16 quotients rounded once from the exact-enough f64 quotient, and exact
//! integer arithmetic. LLVM's division and square-root expansions are
//! correctly rounded, so any difference is an emulation error.

use crate::common;

use common::{build, launch, load, Rng, A, TARGETS};

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "gcn-emu-corner-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn to_f64(b: &[u8]) -> Vec<f64> {
    b.chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
fn same64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
}

/// Random doubles over a wide range of exponents, with special values.
fn doubles(r: &mut Rng, n: usize, salt: usize) -> Vec<f64> {
    let special = [
        0.0,
        -0.0,
        1.0,
        -3.0,
        f64::MAX,
        -f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        -2.5e-310,
        f64::INFINITY,
        1e300,
        1e-300,
    ];
    (0..n)
        .map(|i| {
            if (i + salt) % 5 == 0 {
                special[(i + salt) / 5 % special.len()]
            } else {
                let m = r.f32() as f64 + r.f32() as f64 * 1e-8;
                let e = (r.next_u32() % 200) as i32 - 100;
                m * 2f64.powi(e)
            }
        })
        .collect()
}

fn grid(n: usize) -> [u32; 3] {
    [(n as u32).div_ceil(64), 1, 1]
}

#[test]
fn f64_neg_and_abs_on_src1_and_src2_are_applied() {
    let dir = dir();
    let n = 200;
    let mut r = Rng(11);
    let (x, y, z) = (
        doubles(&mut r, n, 0),
        doubles(&mut r, n, 2),
        doubles(&mut r, n, 4),
    );
    for t in TARGETS {
        let l = load(&build("corner", t, &dir), "f64_mods");
        let (bufs, _) = launch(
            &l,
            grid(n),
            [64, 1, 1],
            vec![
                A::Buf(f64s(&x)),
                A::Buf(f64s(&y)),
                A::Buf(f64s(&z)),
                A::Buf(vec![0; 8 * 4 * n]),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = to_f64(&bufs[3]);
        for i in 0..n {
            let (a, b, c) = (x[i], y[i], z[i]);
            let want = [
                a - b,
                a + b.abs(),
                a.mul_add(-b, -c),
                a.mul_add(b, -c.abs()),
            ];
            for k in 0..4 {
                assert!(
                    same64(got[i * 4 + k], want[k]),
                    "{t}: op {k} of ({a:e}, {b:e}, {c:e}): {:e} vs {:e}",
                    got[i * 4 + k],
                    want[k]
                );
            }
        }
    }
}

#[test]
fn f64_division_and_square_root_are_correctly_rounded() {
    let dir = dir();
    let n = 300;
    let mut r = Rng(12);
    let (x, y) = (doubles(&mut r, n, 0), doubles(&mut r, n, 1));
    for t in TARGETS {
        let l = load(&build("corner", t, &dir), "f64_div");
        let (bufs, _) = launch(
            &l,
            grid(n),
            [64, 1, 1],
            vec![
                A::Buf(f64s(&x)),
                A::Buf(f64s(&y)),
                A::Buf(vec![0; 8 * 2 * n]),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = to_f64(&bufs[2]);
        for i in 0..n {
            let (a, b) = (x[i], y[i]);
            let (q, s) = (got[2 * i], got[2 * i + 1]);
            assert!(same64(q, a / b), "{t}: {a:e} / {b:e}: {q:e} vs {:e}", a / b);
            let w = a.abs().sqrt();
            assert!(same64(s, w), "{t}: sqrt(|{a:e}|): {s:e} vs {w:e}");
        }
    }
}

#[test]
fn f32_division_by_flt_max_gives_the_denormal_quotient() {
    let dir = dir();
    let mut r = Rng(13);
    let mut x = vec![
        1.0f32,
        -1.0,
        0.5,
        3.0,
        1e-5,
        -7.25,
        0.0,
        f32::MAX,
        1e30,
        2.0f32.powi(-100),
    ];
    let mut y = vec![
        f32::MAX,
        f32::MAX,
        -f32::MAX,
        -f32::MAX,
        f32::MAX,
        f32::MAX,
        f32::MAX,
    ];
    y.extend([f32::MAX, -f32::MAX, 1e-30]);
    while x.len() < 130 {
        let v = r.f32() * 2f32.powi((r.next_u32() % 60) as i32 - 30);
        x.push(v);
        y.push(if x.len() % 2 == 0 {
            f32::MAX
        } else {
            r.f32() * 2f32.powi((r.next_u32() % 200) as i32 - 100)
        });
    }
    let n = x.len();
    for t in TARGETS {
        let l = load(&build("corner", t, &dir), "f32_div");
        let (bufs, _) = launch(
            &l,
            grid(n),
            [64, 1, 1],
            vec![
                A::Buf(common::f32s(&x)),
                A::Buf(common::f32s(&y)),
                A::Buf(vec![0; 4 * n]),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = common::to_f32(&bufs[2]);
        for i in 0..n {
            let w = x[i] / y[i];
            assert!(
                got[i].to_bits() == w.to_bits() || got[i].is_nan() && w.is_nan(),
                "{t}: {:e} / {:e}: {:e} vs {w:e}",
                x[i],
                y[i],
                got[i]
            );
        }
    }
}

#[test]
fn f16_division_is_correctly_rounded() {
    use half::f16;
    let dir = dir();
    // Every 37th f16 bit pattern against a spread of divisors.
    let x: Vec<f16> = (0..0x10000u32)
        .step_by(37)
        .map(|b| f16::from_bits(b as u16))
        .collect();
    let mut r = Rng(14);
    let y: Vec<f16> = (0..x.len())
        .map(|i| match i % 9 {
            0 => f16::MAX,
            1 => f16::from_bits(1),
            2 => f16::NEG_ZERO,
            _ => f16::from_bits(r.next_u32() as u16),
        })
        .collect();
    let n = x.len();
    let bytes = |v: &[f16]| -> Vec<u8> { v.iter().flat_map(|h| h.to_le_bytes()).collect() };
    for t in TARGETS {
        let l = load(&build("corner", t, &dir), "f16_div");
        let (bufs, _) = launch(
            &l,
            grid(n),
            [64, 1, 1],
            vec![
                A::Buf(bytes(&x)),
                A::Buf(bytes(&y)),
                A::Buf(vec![0; 2 * n]),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        for i in 0..n {
            let g = f16::from_le_bytes([bufs[2][2 * i], bufs[2][2 * i + 1]]);
            // The f64 quotient of two f16 values rounds once more to the
            // correctly rounded f16 (53 >= 2 * 11 + 2 bits).
            let w = f16::from_f64(x[i].to_f64() / y[i].to_f64());
            assert!(
                g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan(),
                "{t}: {} / {}: {} vs {}",
                x[i],
                y[i],
                g,
                w
            );
        }
    }
}

#[test]
fn saturating_add_sub_and_64_bit_bit_scans_are_exact() {
    let dir = dir();
    let mut r = Rng(15);
    let n = 256;
    let edge = [
        0u32,
        1,
        0x7fff_ffff,
        0x8000_0000,
        u32::MAX,
        0x7fff,
        0x8000,
        0xffff,
    ];
    let a: Vec<u32> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                edge[i / 3 % 8]
            } else {
                r.next_u32()
            }
        })
        .collect();
    let b: Vec<u32> = (0..n)
        .map(|i| {
            if i % 4 == 0 {
                edge[i / 4 % 8]
            } else {
                r.next_u32()
            }
        })
        .collect();
    let w: Vec<u64> = (0..n)
        .map(|i| match i % 6 {
            0 => 0,
            1 => 1u64 << (i % 64),
            2 => (r.next_u32() as u64) << 32,
            3 => r.next_u32() as u64,
            _ => (r.next_u32() as u64) << 32 | r.next_u32() as u64,
        })
        .collect();
    for t in TARGETS {
        let l = load(&build("corner", t, &dir), "int_sat");
        let (bufs, _) = launch(
            &l,
            grid(n),
            [64, 1, 1],
            vec![
                A::Buf(common::u32s(&a)),
                A::Buf(common::u32s(&b)),
                A::Buf(w.iter().flat_map(|v| v.to_le_bytes()).collect()),
                A::Buf(vec![0; 4 * 9 * n]),
                A::Val((n as u32).to_le_bytes().to_vec()),
            ],
        )
        .unwrap();
        let got = common::to_u32(&bufs[3]);
        for i in 0..n {
            let (av, bv, wv) = (a[i], b[i], w[i]);
            let (ai, bi) = (av as i32, bv as i32);
            let want = [
                av.saturating_add(bv),
                av.saturating_sub(bv),
                ai.saturating_add(bi) as u32,
                ai.saturating_sub(bi) as u32,
                (ai as i16).saturating_add(bi as i16) as u16 as u32,
                (av as u16).saturating_add(bv as u16) as u32,
                wv.leading_zeros(),
                wv.trailing_zeros(),
                if wv == 0 { 0 } else { wv.trailing_zeros() + 1 },
            ];
            assert_eq!(
                &got[i * 9..i * 9 + 9],
                &want,
                "{t}: element {i} ({av:#x}, {bv:#x}, {wv:#x})"
            );
        }
    }
}
