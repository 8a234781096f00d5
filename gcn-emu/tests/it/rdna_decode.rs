//! The decoder on RDNA objects (issue 35): VOPD pairs become one
//! instruction with two halves, true16 operands (`v9.l`, `v9.h`) their
//! register plus the half, on objects compiled by clang-22 and Triton 3.9.

use crate::common;

use std::path::{Path, PathBuf};

use gcn_emu::decode::{find_objdump, Operand, Program, RegFile};
use gcn_emu::isa;
use gcn_emu::load::CodeObject;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compile `tests/rdna/inline/NAME.hip` (RDNA inline asm: kept out of
/// tests/kernels, whose kernels every CDNA test builds) with clang-22 for
/// `target`; the object's path.
fn build_rdna(name: &str, target: &str, dir: &Path) -> PathBuf {
    let src = manifest().join(format!("tests/rdna/inline/{name}.hip"));
    let out = dir.join(format!("{name}-{target}.hsaco"));
    let st = std::process::Command::new(common::clang())
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "-nogpuinc",
            "-nogpulib",
            "-O3",
        ])
        .arg("--no-gpu-bundle-output")
        .arg(format!("--offload-arch={target}"))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run clang-22");
    assert!(
        st.status.success(),
        "clang-22 failed on {}: {}",
        src.display(),
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

/// Every kernel of `path`, decoded as `gcn-patch run` decodes it.
fn programs(path: &Path) -> (String, Vec<Program>) {
    let co = CodeObject::read_file(path).unwrap();
    let objdump = find_objdump(None).unwrap();
    let progs = co
        .kernels
        .iter()
        .map(|k| Program::disassemble(&co, k, &objdump).unwrap())
        .collect();
    (co.processor.clone(), progs)
}

/// tests/rdna/inline/vopd.hip pins each VOPD pair to registers; clang-22
/// assembles it for gfx1100 and gfx1201. Every pair decodes as X with Y
/// in `dual`: both halves are VOPD entries of the target's table, on the
/// target, with the operands LLVM printed (a literal K for fmaak/fmamk).
#[test]
fn vopd_pairs_decode_into_their_two_halves() {
    let d = std::env::temp_dir().join(format!("gcn-emu-vopd-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let mut halves = std::collections::BTreeSet::new();
    for target in ["gfx1100", "gfx1201"] {
        let obj = build_rdna("vopd", target, &d);
        let (proc, progs) = programs(&obj);
        let table = isa::table_for(&proc).unwrap();
        let mut pairs = 0;
        for p in &progs {
            for i in &p.instructions {
                assert_eq!(
                    i.text.contains(" :: "),
                    i.dual.is_some(),
                    "{}: {}",
                    p.kernel,
                    i.text
                );
                let Some(y) = i.dual.as_deref() else { continue };
                pairs += 1;
                assert_eq!((y.addr, &y.words), (i.addr, &i.words));
                assert!(i.text.starts_with(&i.mnemonic) && i.text.ends_with(&y.text));
                for h in [i, y] {
                    let props = table
                        .lookup(&h.mnemonic)
                        .unwrap_or_else(|| panic!("{}: {} not in the table", p.kernel, h.mnemonic));
                    assert_eq!(props.format, isa::Format::Vopd, "{}", h.mnemonic);
                    let literal = h.mnemonic.contains("fmaak") || h.mnemonic.contains("fmamk");
                    assert_eq!(
                        h.ops.len(),
                        props.operands.len() + literal as usize,
                        "{}: {}",
                        p.kernel,
                        h.text
                    );
                    assert!(matches!(
                        h.ops[0].op,
                        Operand::Reg {
                            file: RegFile::V,
                            ..
                        }
                    ));
                    halves.insert(h.mnemonic.clone());
                }
            }
        }
        assert_eq!(pairs, 13, "{target}: VOPD pairs of vopd.hip");
    }
    let _ = std::fs::remove_dir_all(&d);
    // All 17 halves of each generation (max/min differ: RDNA4's `_num_`).
    assert_eq!(halves.len(), 17 + 2, "{halves:?}");
}

/// The VOPD pairs the compilers emitted in the RDNA corpus decode the same
/// way (both halves in the table, X's text then ` :: ` then Y's).
#[test]
fn corpus_vopd_pairs_decode() {
    let mut pairs = 0;
    for t in ["gfx1100", "gfx1201"] {
        for dir in [
            manifest().join("tests/rdna").join(t),
            manifest().join("../tests/corpus/iree").join(t),
        ] {
            for e in std::fs::read_dir(&dir).unwrap() {
                let f = e.unwrap().path();
                if f.extension().is_none_or(|x| x != "hsaco") {
                    continue;
                }
                let (proc, progs) = programs(&f);
                let table = isa::table_for(&proc).unwrap();
                for i in progs.iter().flat_map(|p| &p.instructions) {
                    if let Some(y) = i.dual.as_deref() {
                        pairs += 1;
                        assert!(table.lookup(&i.mnemonic).is_some(), "{}", i.text);
                        assert!(table.lookup(&y.mnemonic).is_some(), "{}", i.text);
                        assert_eq!(
                            i.text,
                            format!("{} :: {}", i.text.split(" :: ").next().unwrap(), y.text)
                        );
                    }
                    assert!(
                        !i.ops
                            .iter()
                            .any(|o| matches!(&o.op, Operand::Text(t) if t.contains("::"))),
                        "{}",
                        i.text
                    );
                }
            }
        }
    }
    assert!(pairs >= 100, "{pairs} VOPD pairs in the RDNA corpus");
}

/// Triton 3.9's gfx1201 matmul uses 16-bit VGPR halves: decoded with
/// `--mattr=+real-true16`, none is left as `.long`, and each half operand
/// is its register with the half in the `t16` modifier.
#[test]
fn true16_halves_decode_on_gfx12() {
    for t in ["gfx1100", "gfx1201"] {
        let (_, progs) = programs(
            &manifest()
                .join("tests/rdna")
                .join(t)
                .join("triton_matmul.hsaco"),
        );
        let mut halves = 0;
        for i in progs.iter().flat_map(|p| &p.instructions) {
            assert!(!i.mnemonic.starts_with('.'), "{t}: undecoded {}", i.text);
            assert!(
                !i.ops.iter().any(
                    |o| matches!(&o.op, Operand::Text(x) if x.ends_with(".l") || x.ends_with(".h"))
                ),
                "{t}: {}",
                i.text
            );
            if let Some(h) = i.modifier("t16") {
                halves += 1;
                assert_eq!(h.len(), i.ops.len(), "{}", i.text);
                let printed: String = i
                    .text
                    .split_once(' ')
                    .unwrap()
                    .1
                    .split(',')
                    .map(|o| match o.trim() {
                        o if o.ends_with(".l") => 'l',
                        o if o.ends_with(".h") => 'h',
                        _ => '-',
                    })
                    .collect();
                assert_eq!(h, printed, "{}", i.text);
            }
        }
        assert_eq!(halves, 16, "{t}: true16 instructions of the Triton matmul");
    }
}

/// One lane's inputs of a vopd.hip kernel: a, b, c, d, and the old values
/// of X's and Y's destinations.
#[derive(Clone, Copy)]
struct Lane {
    a: u32,
    b: u32,
    c: u32,
    d: u32,
    x: u32,
    y: u32,
}

/// 32 lanes of inputs: random floats in [-4, 4), with zeros, NaNs, ±0 and
/// infinities in some lanes (for dx9's 0·x, the `_num_` NaN rules and
/// cndmask's sign test).
fn lanes() -> Vec<Lane> {
    let mut r = common::Rng(35);
    let mut f = || ((r.next_u32() >> 8) as f32 / (1 << 24) as f32 * 8.0 - 4.0).to_bits();
    let mut out: Vec<Lane> = (0..32)
        .map(|_| Lane {
            a: f(),
            b: f(),
            c: f(),
            d: f(),
            x: f(),
            y: f(),
        })
        .collect();
    let special = [0.0f32, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    for (i, l) in out.iter_mut().enumerate().take(10) {
        let s = special[i % special.len()].to_bits();
        match i / special.len() {
            0 => (l.a, l.c) = (s, s),
            _ => (l.b, l.d) = (s, s),
        }
    }
    out[10].a = 0x7fa0_0001; // a signalling NaN
    out[10].b = 0x7fc0_1234;
    out[11].c = 0x7fa0_0002;
    out[11].d = 0x7fc0_5678;
    out
}

/// Run kernel `name` of `obj` on `lanes`; (X's, Y's destination) per lane.
fn run_pair(obj: &Path, name: &str, lanes: &[Lane]) -> Vec<(u32, u32)> {
    let l = common::load(obj, name);
    let mut io = vec![0u32; 256];
    for (i, v) in lanes.iter().enumerate() {
        for (k, w) in [v.a, v.b, v.c, v.d, v.x, v.y].into_iter().enumerate() {
            io[32 * k + i] = w;
        }
    }
    // `common::launch` also runs it under the sanitizer (gfx11's and
    // gfx12's wait counters), which must find nothing.
    let (bufs, _) = common::launch(
        &l,
        [1, 1, 1],
        [32, 1, 1],
        vec![common::A::Buf(common::u32s(&io))],
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let out = common::to_u32(&bufs[0]);
    (0..32).map(|i| (out[192 + i], out[224 + i])).collect()
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}
/// A float result as the hardware writes it: any NaN as the canonical
/// quiet NaN (compared as such).
fn canon(x: u32) -> u32 {
    if f(x).is_nan() {
        0x7fc0_0000
    } else {
        x
    }
}
fn b(x: f32) -> u32 {
    canon(x.to_bits())
}

/// RDNA4's maximumNumber/minimumNumber (ISA pseudo-code of
/// `v_max_num_f32`): a NaN yields the other operand, two NaNs src0
/// quieted, +0 above -0.
fn num(a: u32, b: u32, max: bool) -> u32 {
    match (f(a).is_nan(), f(b).is_nan()) {
        (true, true) => a | 0x0040_0000,
        (true, false) => b,
        (false, true) => a,
        _ if f(a) == f(b) => {
            // ±0: the positive one for max, the negative for min.
            if (a >> 31 == 0) == max {
                a
            } else {
                b
            }
        }
        _ if (f(a) > f(b)) == max => a,
        _ => b,
    }
}

/// Each VOPD pair of tests/rdna/inline/vopd.hip (all 17 halves of each
/// generation) run on gfx1100 (wave32) and gfx1201, against the ISA's
/// pseudo-code of each half, computed here lane by lane. Both halves read
/// their sources before either writes: `y_reads_x` (Y reads X's
/// destination and gets the old value) and `swap` (each reads the other's).
#[test]
fn vopd_pairs_run_with_each_halfs_semantics() {
    let d = std::env::temp_dir().join(format!("gcn-emu-vopd-run-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let ls = lanes();
    for target in ["gfx1100", "gfx1201"] {
        let obj = build_rdna("vopd", target, &d);
        let gfx12 = target == "gfx1201";
        type Want = fn(&Lane, bool) -> (u32, u32);
        let cases: &[(&str, Want)] = &[
            ("fmac_fmaak", |l, _| {
                (
                    b(f(l.a).mul_add(f(l.b), f(l.x))),
                    b(f(l.c).mul_add(f(l.d), 3.0)),
                )
            }),
            ("fmamk_mul", |l, _| {
                (b(f(l.a).mul_add(1.5, f(l.b))), b(f(l.c) * f(l.d)))
            }),
            ("add_sub", |l, _| (b(f(l.a) + f(l.b)), b(f(l.c) - f(l.d)))),
            ("subrev_dx9", |l, _| {
                let dx9 = if f(l.c) == 0.0 || f(l.d) == 0.0 {
                    0
                } else {
                    b(f(l.c) * f(l.d))
                };
                (b(f(l.b) - f(l.a)), dx9)
            }),
            ("mov_cndmask", |l, _| {
                // vcc_lo = 0 < c; cndmask: vcc ? vsrc1 : src0.
                (l.a, if 0.0 < f(l.c) { l.d } else { l.c })
            }),
            ("cndmask_mov", |l, _| {
                (if 0.0 < f(l.b) { l.b } else { l.a }, 1.0f32.to_bits())
            }),
            ("max_min", |l, gfx12| {
                if gfx12 {
                    (num(l.a, l.b, true), num(l.c, l.d, false))
                } else {
                    // RDNA3's v_max_f32/v_min_f32 (IEEE mode): a NaN
                    // yields the other operand.
                    (b(f(l.a).max(f(l.b))), b(f(l.c).min(f(l.d))))
                }
            }),
            ("dot2_f16_bf16", |l, _| {
                let h = |v: u32| half::f16::from_bits(v as u16).to_f32();
                let bf = |v: u32| f32::from_bits(v << 16);
                let mut x = f(l.x);
                x += h(l.a) * h(l.b);
                x += h(l.a >> 16) * h(l.b >> 16);
                let mut y = f(l.y);
                y += bf(l.c & 0xffff) * bf(l.d & 0xffff);
                y += bf(l.c >> 16) * bf(l.d >> 16);
                (b(x), b(y))
            }),
            ("mul_addnc", |l, _| {
                (b(f(l.a) * f(l.b)), l.c.wrapping_add(l.d))
            }),
            ("add_lshlrev", |l, _| {
                (b(f(l.a) + f(l.b)), l.d << (l.c & 31))
            }),
            ("sub_and", |l, _| (b(f(l.a) - f(l.b)), l.c & l.d)),
            ("y_reads_x", |l, _| (b(f(l.a) * f(l.b)), b(f(l.x) + f(l.d)))),
            ("swap", |l, _| (l.y, l.x)),
        ];
        for (name, want) in cases {
            let got = run_pair(&obj, name, &ls);
            // Which results are floats whose NaNs compare as one (the
            // `_num_` rules of gfx12 keep a NaN operand's payload).
            let floats = match *name {
                "mov_cndmask" | "cndmask_mov" | "swap" => (false, false),
                "mul_addnc" | "add_lshlrev" | "sub_and" => (true, false),
                "max_min" if gfx12 => (false, false),
                _ => (true, true),
            };
            for (i, (l, g)) in ls.iter().zip(&got).enumerate() {
                let c = |v: u32, float: bool| if float { canon(v) } else { v };
                let w = want(l, gfx12);
                let (g, w) = (
                    (c(g.0, floats.0), c(g.1, floats.1)),
                    (c(w.0, floats.0), c(w.1, floats.1)),
                );
                assert_eq!(
                    g,
                    w,
                    "{target} {name} lane {i}: a={:?} b={:?} c={:?} d={:?} x={:?} y={:?}",
                    f(l.a),
                    f(l.b),
                    f(l.c),
                    f(l.d),
                    f(l.x),
                    f(l.y)
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// 32 rows (a, b, c) of f32 bit patterns: ordinary values, ±0, NaNs (a
/// quiet one with a payload, a signalling one), ±∞, values past i32/u32
/// (for the saturating conversions), halves (for rndne) and integers.
fn gfx12_rows() -> Vec<[u32; 3]> {
    let fl = |x: f32| x.to_bits();
    let special = [
        fl(0.0),
        fl(-0.0),
        fl(1.5),
        fl(-2.25),
        0x7fc0_1234,
        0x7fa0_0001,
        fl(f32::INFINITY),
        fl(f32::NEG_INFINITY),
        fl(3.0e9),
        fl(-1.0e10),
        fl(2.5),
        fl(-2.5),
        fl(0.5),
        7,
        0xffff_fff9,
        (0x4200 << 16) | 0x3c00, // f16 3.0 : 1.0
    ];
    let mut r = common::Rng(77);
    (0..32)
        .map(|i| {
            let mut pick = || {
                if r.next_u32() % 2 == 0 {
                    special[r.next_u32() as usize % special.len()]
                } else {
                    fl((r.next_u32() >> 8) as f32 / (1 << 20) as f32 - 8.0)
                }
            };
            let row = [pick(), pick(), pick()];
            if i < special.len() {
                [special[i], row[1], row[2]]
            } else {
                row
            }
        })
        .collect()
}

/// Run kernel `name` of tests/rdna/inline/gfx12_ops.hip (gfx1201) on `rows`:
/// `out_words` words out.
fn run_gfx12(obj: &Path, name: &str, rows: &[[u32; 3]], out_words: usize, n: bool) -> Vec<u32> {
    let l = common::load(obj, name);
    let input: Vec<u32> = rows.iter().flatten().copied().collect();
    let mut args = vec![
        common::A::Buf(common::u32s(&input)),
        common::A::Buf(vec![0xcd; out_words * 4]),
    ];
    if n {
        args.push(common::A::Val((rows.len() as u32).to_le_bytes().to_vec()));
    }
    let (bufs, _) =
        common::launch(&l, [1, 1, 1], [32, 1, 1], args).unwrap_or_else(|e| panic!("{name}: {e}"));
    common::to_u32(&bufs[1])
}

/// gfx12's SALU float (`s_add_f32`, `s_sub_f32`, `s_mul_f32`, `s_fmac_f32`,
/// `s_max_num_f32`, `s_min_num_f32`, the conversions, rounding and
/// compares), `s_add_nc_u64`, the VALU `_num_` min/max and
/// `v_mad_co_u64_u32`, each run by clang-22's gfx1201 code on 32 rows and
/// compared with the RDNA4 ISA pseudo-code computed here. Float results
/// compare NaNs as one (the executor writes the canonical quiet NaN),
/// except the `_num_` ones, which pass a NaN operand through unchanged.
#[test]
fn gfx12_scalar_float_and_num_ops_follow_the_isa() {
    let d = std::env::temp_dir().join(format!("gcn-emu-gfx12-ops-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let obj = build_rdna("gfx12_ops", "gfx1201", &d);
    let rows = gfx12_rows();
    let n = rows.len();
    type One = fn(u32, u32, u32) -> u32;
    let scalar: &[(&str, One, bool)] = &[
        ("s_add_f32", |a, b, _| b32(f(a) + f(b)), true),
        ("s_sub_f32", |a, b, _| b32(f(a) - f(b)), true),
        ("s_mul_f32", |a, b, _| b32(f(a) * f(b)), true),
        ("s_fmac_f32", |a, b, c| b32(f(a).mul_add(f(b), f(c))), true),
        ("s_max_num_f32", |a, b, _| num(a, b, true), false),
        ("s_min_num_f32", |a, b, _| num(a, b, false), false),
        (
            "s_cvt_f32_i32",
            |a, _, _| (a as i32 as f32).to_bits(),
            false,
        ),
        ("s_cvt_f32_u32", |a, _, _| (a as f32).to_bits(), false),
        // Saturating, NaN to 0.
        ("s_cvt_i32_f32", |a, _, _| f(a) as i32 as u32, false),
        ("s_cvt_u32_f32", |a, _, _| f(a) as u32, false),
        (
            "s_cvt_f32_f16",
            |a, _, _| b32(half::f16::from_bits(a as u16).to_f32()),
            true,
        ),
        (
            "s_cvt_hi_f32_f16",
            |a, _, _| b32(half::f16::from_bits((a >> 16) as u16).to_f32()),
            true,
        ),
        ("s_ceil_f32", |a, _, _| b32(f(a).ceil()), true),
        ("s_floor_f32", |a, _, _| b32(f(a).floor()), true),
        ("s_trunc_f32", |a, _, _| b32(f(a).trunc()), true),
        ("s_rndne_f32", |a, _, _| b32(f(a).round_ties_even()), true),
        (
            "s_cmp_f32",
            |a, b, _| {
                let (x, y) = (f(a), f(b));
                (x < y) as u32
                    | ((x == y) as u32) << 1
                    | ((x.is_nan() || y.is_nan()) as u32) << 2
                    | (matches!(x.partial_cmp(&y), None | Some(std::cmp::Ordering::Less)) as u32)
                        << 3
            },
            false,
        ),
    ];
    for (name, want, float) in scalar {
        let got = run_gfx12(&obj, name, &rows, n, true);
        for (k, r) in rows.iter().enumerate() {
            let w = want(r[0], r[1], r[2]);
            let (g, w) = if *float {
                (canon(got[k]), canon(w))
            } else {
                (got[k], w)
            };
            assert_eq!(g, w, "{name} row {k}: {:#x} {:#x} {:#x}", r[0], r[1], r[2]);
        }
    }
    let got = run_gfx12(&obj, "s_add_nc_u64", &rows, 2 * n, true);
    for (k, r) in rows.iter().enumerate() {
        let x = r[0] as u64 | (r[1] as u64) << 32;
        let y = r[1] as u64 | (r[0] as u64) << 32;
        let g = got[2 * k] as u64 | (got[2 * k + 1] as u64) << 32;
        assert_eq!(g, x.wrapping_add(y), "s_add_nc_u64 row {k}");
    }
    let got = run_gfx12(&obj, "valu_num", &rows, 6 * n, false);
    for (i, r) in rows.iter().enumerate() {
        let (a, b, c) = (r[0], r[1], r[2]);
        let mad = a as u128 * b as u128 + (c as u64 | (a as u64) << 32) as u128;
        let w = [
            num(a, b, true),
            num(a, b, false),
            num(num(a, b, true), c, true),
            mad as u32,
            (mad >> 32) as u32,
            (mad >> 64) as u32,
        ];
        assert_eq!(got[6 * i..6 * i + 6], w, "lane {i}: {a:#x} {b:#x} {c:#x}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

fn b32(x: f32) -> u32 {
    x.to_bits()
}

/// The RDNA names that had no executor name (rdna.md's list): the probe
/// for gfx1100 or gfx1201 runs each (its semantics are tested in
/// `gcn_emu`'s `rdna_sub_clamp_cond_sub_and_f32_compare_stores_follow_the_pseudo_code`;
/// the d16 buffer names run gfx9's d16 loads and stores).
#[test]
fn rdna_atomic_and_d16_buffer_names_run() {
    let gfx11 = [
        "ds_cmpstore_f32 v1, v2, v3",
        "ds_cmpstore_rtn_f32 v0, v1, v2, v3",
        "global_atomic_cmpswap_f32 v0, v1, v[2:3], s[0:1] glc",
        "global_atomic_csub_u32 v0, v1, v2, s[0:1] glc",
        "buffer_atomic_csub_u32 v1, v0, s[4:7], 0 offen glc",
        "buffer_atomic_cmpswap_f32 v[2:3], v0, s[4:7], 0 offen glc",
        "buffer_load_d16_b16 v1, v0, s[4:7], 0 offen",
        "buffer_load_d16_hi_u8 v1, v0, s[4:7], 0 offen",
        "buffer_load_d16_i8 v1, v0, s[4:7], 0 offen",
        "buffer_store_d16_hi_b16 v1, v0, s[4:7], 0 offen",
    ];
    let gfx12 = [
        "ds_cond_sub_u32 v1, v2",
        "ds_cond_sub_rtn_u32 v0, v1, v2",
        "ds_sub_clamp_rtn_u32 v0, v1, v2",
        "global_atomic_cond_sub_u32 v0, v1, v2, s[0:1] th:TH_ATOMIC_RETURN",
        "global_atomic_sub_clamp_u32 v1, v2, s[0:1]",
        "buffer_atomic_cond_sub_u32 v1, v0, s[4:7], 0 offen",
        "buffer_load_d16_hi_b16 v1, v0, s[4:7], 0 offen",
        "buffer_store_d16_hi_b8 v1, v0, s[4:7], 0 offen",
    ];
    for (target, lines) in [("gfx1100", &gfx11[..]), ("gfx1201", &gfx12[..])] {
        let mut probe = gcn_emu::Probe::for_target(target, 32);
        for text in lines {
            let ins = gcn_emu::decode::parse_line(&format!("\t{text} // 000000001600: 00000000"))
                .unwrap()
                .unwrap();
            let outcome = probe.probe(&ins);
            assert!(
                matches!(outcome, gcn_emu::ProbeOutcome::Ran),
                "{target}: `{text}` runs: {outcome:?}"
            );
        }
    }
}

/// The probe behind `gcn-patch run --list-unsupported`, for gfx1201 (its
/// names through `rdna::ALIASES`, gfx11's numbering, wave32), implements
/// every instruction of the gfx1201 HIP corpus (WMMA aside: issue 35's
/// WMMA work), Triton's softmax and IREE's softmax.
#[test]
fn the_probe_implements_the_gfx1201_corpus() {
    let mut files: Vec<PathBuf> = [
        "atomics",
        "buffer_oob",
        "buffer_oob_raw",
        "crosslane",
        "lds_barrier",
        "wave64",
        "triton_softmax",
    ]
    .iter()
    .map(|n| manifest().join(format!("tests/rdna/gfx1201/{n}.hsaco")))
    .collect();
    files.push(manifest().join("../tests/corpus/iree/gfx1201/softmax.hsaco"));
    for f in &files {
        let co = CodeObject::read_file(f).unwrap();
        let objdump = find_objdump(None).unwrap();
        for k in &co.kernels {
            let p = Program::disassemble(&co, k, &objdump).unwrap();
            let mut probe = gcn_emu::Probe::for_target(
                &co.processor,
                if k.descriptor.wave32() { 32 } else { 64 },
            );
            let missing: Vec<_> = p
                .instructions
                .iter()
                .filter(|i| !probe.implements(i))
                .map(|i| i.text.clone())
                .collect();
            assert!(missing.is_empty(), "{}: {missing:?}", f.display());
        }
    }
}
