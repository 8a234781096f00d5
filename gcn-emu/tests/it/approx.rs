//! Approximate instructions (`v_rcp_f32`, `v_rsq_f32`, `v_sqrt_f32`,
//! `v_exp_f32`, `v_log_f32`, `v_rcp_f64`) of a HIP kernel compiled with
//! clang-22: the dispatch lists them with their counts, and
//! `Launch::perturb_approx` moves their results within the documented bound
//! (checked against references computed here), the same way for a seed
//! whatever the thread count, while an IEEE division (whose sequence holds a
//! `v_rcp_f32`) stays correctly rounded.

use crate::common;
use common::*;

use gcn_emu::approx::{lookup, steps_between, ulp_of, Format};
use gcn_emu::dispatch::Launch;

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn to_f64(b: &[u8]) -> Vec<f64> {
    b.chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The functions of the kernel's outputs `k` = 0..5, exactly (in f64).
fn exact(k: usize, x: f32, y: f32) -> f64 {
    let x = x as f64;
    match k {
        0 => 1.0 / x,
        1 => 1.0 / x.abs().sqrt(),
        2 => x.abs().sqrt(),
        3 => x.exp2(),
        4 => x.abs().log2(),
        _ => x / y as f64,
    }
}

const MNEMONICS: [&str; 5] = [
    "v_rcp_f32",
    "v_rsq_f32",
    "v_sqrt_f32",
    "v_exp_f32",
    "v_log_f32",
];

#[test]
fn approximate_results_move_within_their_bound_the_same_way_for_a_seed() {
    let dir = std::env::temp_dir().join(format!("gcn-emu-approx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 1000u32;
    let mut r = Rng(7);
    // Random values in [-8, 8), every tenth a power of two (exact results).
    let x: Vec<f32> = (0..n)
        .map(|i| {
            if i % 10 == 0 {
                [0.25f32, 2.0, 4.0, -8.0][(i / 10 % 4) as usize]
            } else {
                let v = r.f32() * 8.0;
                if v == 0.0 {
                    1.5
                } else {
                    v
                }
            }
        })
        .collect();
    let y: Vec<f32> = (0..n).map(|_| r.f32() + 2.0).collect();
    let d: Vec<f64> = (0..n).map(|_| r.f32() as f64 * 3.0 + 5.0).collect();
    for t in TARGETS {
        let obj = build("approx", t, &dir);
        let l = load(&obj, "approx");
        let go = |perturb: Option<u64>, threads: usize| {
            let mut launch = Launch::new([n.div_ceil(256), 1, 1], [256, 1, 1]);
            launch.perturb_approx = perturb;
            launch.threads = threads;
            launch_with(
                &l,
                launch,
                vec![
                    A::Buf(f32s(&x)),
                    A::Buf(f32s(&y)),
                    A::Buf(f64s(&d)),
                    A::Buf(vec![0xff; n as usize * 24]),
                    A::Buf(vec![0xff; n as usize * 8]),
                    A::Val(n.to_le_bytes().to_vec()),
                ],
            )
            .unwrap()
        };
        let (base, stats) = go(None, 0);
        let (p1, stats1) = go(Some(1), 0);
        let (p1_serial, _) = go(Some(1), 1);
        let (p2, _) = go(Some(2), 0);
        // The listing: every approximate instruction, once per address,
        // with the lanes that ran it (the IEEE division holds a second
        // v_rcp_f32).
        let mut names: Vec<&str> = stats.approx.iter().map(|e| e.mnemonic.as_str()).collect();
        names.sort();
        let mut want = MNEMONICS.to_vec();
        want.extend(["v_rcp_f32", "v_rcp_f64"]);
        want.sort();
        assert_eq!(names, want, "{t}: {:#?}", stats.approx);
        for e in &stats.approx {
            assert_eq!(e.lanes, n as u64, "{t}: {e}");
            assert_eq!(e.waves, n.div_ceil(64) as u64, "{t}: {e}");
            assert!(e.text.starts_with(&e.mnemonic), "{t}: {e}");
        }
        assert_eq!(
            stats.approx, stats1.approx,
            "{t}: perturbing changes no count"
        );
        // Deterministic per seed, whatever the thread count.
        assert_eq!(p1, p1_serial, "{t}: seed 1 on 1 thread and on all");
        assert_eq!(p1, go(Some(1), 0).0, "{t}: seed 1 twice");
        assert_ne!(p1[3], p2[3], "{t}: seeds 1 and 2 agree everywhere");
        let (b, g1, g2) = (to_f32(&base[3]), to_f32(&p1[3]), to_f32(&p2[3]));
        for i in 0..n as usize {
            for k in 0..6 {
                let e = exact(k, x[i], y[i]);
                let reference = e as f32;
                let at = format!("{t}: output {k} of x = {:e} (element {i})", x[i]);
                let j = i * 6 + k;
                if k == 5 {
                    // The IEEE division: correctly rounded, perturbed or not.
                    assert_eq!(b[j].to_bits(), (x[i] / y[i]).to_bits(), "{at}");
                    assert_eq!(g1[j].to_bits(), b[j].to_bits(), "{at}: seed 1");
                    assert_eq!(g2[j].to_bits(), b[j].to_bits(), "{at}: seed 2");
                    continue;
                }
                let bound = MNEMONICS
                    .get(k)
                    .and_then(|m| lookup(m))
                    .unwrap()
                    .bound
                    .unwrap();
                for (seed, g) in [(1, g1[j]), (2, g2[j])] {
                    let steps =
                        steps_between(Format::F32, g.to_bits() as u64, reference.to_bits() as u64);
                    // Within the bound of the exact value, hence at most one
                    // step from the correctly rounded reference…
                    assert!(
                        (g as f64 - e).abs() <= bound * ulp_of(Format::F32, e),
                        "{at}: seed {seed} gives {g:e}, exact {e:e}"
                    );
                    assert!(
                        steps <= 1,
                        "{at}: seed {seed}: {steps} steps from {reference:e}"
                    );
                    // …and never the unperturbed result (a 1 ULP bound always
                    // leaves one neighbour).
                    assert_ne!(
                        g.to_bits(),
                        b[j].to_bits(),
                        "{at}: seed {seed} did not move"
                    );
                }
            }
        }
        // f64: within 2^29 steps of the correctly rounded reciprocal.
        let (bd, d1) = (to_f64(&base[4]), to_f64(&p1[4]));
        let mut moved = 0;
        for i in 0..n as usize {
            let reference = 1.0 / d[i];
            assert_eq!(
                bd[i].to_bits(),
                reference.to_bits(),
                "{t}: rcp_f64({})",
                d[i]
            );
            let steps = steps_between(Format::F64, d1[i].to_bits(), reference.to_bits());
            assert!(steps < 1 << 29, "{t}: rcp_f64({}): {steps} steps", d[i]);
            moved += (steps > 0) as usize;
        }
        assert_eq!(moved, n as usize, "{t}: every f64 reciprocal moves");
    }
}

/// `(num_warps, shared)` of a Triton kernel's launch metadata.
fn triton_metadata(json: &std::path::Path) -> (u32, u32) {
    (triton_meta(json, "num_warps"), triton_meta(json, "shared"))
}

#[test]
fn triton_softmax_stays_within_its_tolerance_with_perturbed_exponentials() {
    // Triton 3.9's softmax (tests/triton, 6 rows of 1000 in a stride of
    // 1024): its v_exp_f32 results moved within 1 ULP change the outputs
    // but keep them within the 1e-5 relative of f64 the softmax test asks.
    const ROWS: usize = 6;
    const COLS: usize = 1000;
    const STRIDE: usize = 1024;
    for target in ["gfx942", "gfx950"] {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../tests/triton/softmax-{target}"));
        let l = load(&dir.join("softmax.hsaco"), "softmax");
        let (warps, shared) = triton_metadata(&dir.join("softmax.json"));
        let mut r = Rng(11);
        let x: Vec<f32> = (0..ROWS * STRIDE).map(|_| r.f32() * 8.0).collect();
        let go = |perturb: Option<u64>| {
            let mut launch = Launch::new([ROWS as u32, 1, 1], [warps * 64, 1, 1]);
            launch.dynamic_lds = shared;
            launch.perturb_approx = perturb;
            let (bufs, stats) = launch_with(
                &l,
                launch,
                vec![
                    A::Buf(f32s(&x)),
                    A::Buf(vec![0xff; 4 * ROWS * STRIDE]),
                    A::Val((STRIDE as u32).to_le_bytes().to_vec()),
                    A::Val((COLS as u32).to_le_bytes().to_vec()),
                    A::Val(vec![0; 8]),
                    A::Val(vec![0; 8]),
                ],
            )
            .unwrap();
            (to_f32(&bufs[1]), stats)
        };
        let (base, stats) = go(None);
        assert!(
            stats.approx.iter().any(|e| e.mnemonic == "v_exp_f32"),
            "{target}: {:#?}",
            stats.approx
        );
        for seed in 1..=3 {
            let (got, _) = go(Some(seed));
            let mut moved = 0;
            for row in 0..ROWS {
                let xs = &x[row * STRIDE..row * STRIDE + COLS];
                let m = xs.iter().fold(f64::MIN, |a, &b| a.max(b as f64));
                let s: f64 = xs.iter().map(|&v| (v as f64 - m).exp()).sum();
                for (c, &v) in xs.iter().enumerate() {
                    let want = (v as f64 - m).exp() / s;
                    let i = row * STRIDE + c;
                    let g = got[i] as f64;
                    assert!(
                        (g - want).abs() <= 1e-5 * want + 1e-12,
                        "{target} seed {seed}: [{row}][{c}] {g} vs {want}"
                    );
                    moved += (got[i] != base[i]) as usize;
                }
            }
            assert!(
                moved > ROWS * COLS / 10,
                "{target} seed {seed}: only {moved} outputs moved"
            );
        }
    }
}
