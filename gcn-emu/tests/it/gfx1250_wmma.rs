//! gfx1250's WMMA words LLVM 22 prints as `.long` (`gcn_emu::gfx1250_wmma`):
//! the field decoder against llvm-mc-22's encodings and against
//! llvm-objdump-22's text on the words it does decode, and aiter's sample
//! objects with every such word decoded and every scale pair joined.

use crate::common;
use common::*;
use gcn_emu::gfx1250_wmma::{text, PAIRS};

/// llvm-mc-22's two dwords and printed text for `asm` on gfx1250.
fn mc(asm: &str) -> (u32, u32, String) {
    let out = std::process::Command::new("llvm-mc-22")
        .args(["-triple=amdgcn", "-mcpu=gfx1250", "-show-encoding"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(asm.as_bytes())?;
            c.wait_with_output()
        })
        .expect("llvm-mc-22 (apt-get install -y llvm-22, or run tests/setup.sh)");
    let s = String::from_utf8_lossy(&out.stdout);
    let line = s
        .lines()
        .find(|l| l.contains("encoding: ["))
        .unwrap_or_else(|| panic!("{asm}: {s}{}", String::from_utf8_lossy(&out.stderr)));
    let (t, enc) = line.split_once("; encoding: [").unwrap();
    let b: Vec<u32> = enc
        .split([',', ']'])
        .take(8)
        .map(|x| u32::from_str_radix(x.trim().trim_start_matches("0x"), 16).unwrap())
        .collect();
    let w = |i: usize| b[i] | b[i + 1] << 8 | b[i + 2] << 16 | b[i + 3] << 24;
    (w(0), w(4), t.trim().to_string())
}

/// Every field the decoder names, one at a time and together, as
/// llvm-mc-22 assembles it: the decoder's text of LLVM's words is LLVM's
/// text. A field it does not read is an error naming it, and aiter's form
/// of each word (ld_scale's src2 0, the f4 WMMA's bit 14 clear) decodes
/// as the LLVM form does.
#[test]
fn gfx1250_wmma_fields_decode_as_llvm_mc_encodes_them() {
    let mods = [
        "",
        " matrix_a_scale:MATRIX_SCALE_ROW1",
        " matrix_b_scale:MATRIX_SCALE_ROW1",
        " matrix_a_scale_fmt:MATRIX_SCALE_FMT_E5M3",
        " matrix_a_scale_fmt:MATRIX_SCALE_FMT_E4M3",
        " matrix_b_scale_fmt:MATRIX_SCALE_FMT_E5M3",
        " matrix_b_scale_fmt:MATRIX_SCALE_FMT_E4M3",
        " matrix_a_reuse",
        " matrix_b_reuse",
        " matrix_a_scale:MATRIX_SCALE_ROW1 matrix_b_scale:MATRIX_SCALE_ROW1 matrix_a_scale_fmt:MATRIX_SCALE_FMT_E4M3 matrix_b_scale_fmt:MATRIX_SCALE_FMT_E5M3 matrix_a_reuse matrix_b_reuse",
    ];
    let mut cases = Vec::new();
    for m in mods {
        cases.push(format!("v_wmma_ld_scale_paired_b32 v1, v200{m}"));
        cases.push(format!("v_wmma_ld_scale_paired_b32 s7, 3{m}"));
        cases.push(format!(
            "v_wmma_ld_scale16_paired_b64 v[4:5], v[250:251]{m}"
        ));
    }
    for c in [
        "v[4:19]",
        "0",
        "1.0",
        "v[4:19] neg_lo:[0,0,1]",
        "v[4:19] neg_hi:[0,0,1]",
        "v[4:19] neg_lo:[0,0,1] neg_hi:[0,0,1]",
    ] {
        cases.push(format!(
            "v_wmma_f32_32x16x128_f4 v[4:19], v[100:115], v[20:27], {c}"
        ));
    }
    for asm in &cases {
        let (w0, w1, printed) = mc(asm);
        let ours = text(w0, w1)
            .expect("one of the decoder's opcodes")
            .unwrap_or_else(|e| panic!("{asm}: {e}"));
        assert_eq!(ours, printed, "{w0:08x} {w1:08x}");
        // aiter's forms: ld_scale with src2 0, the f4 WMMA with bit 14 clear.
        if asm.starts_with("v_wmma_ld") {
            assert_eq!(text(w0, w1 & !(0x1ff << 18)).unwrap().unwrap(), printed);
            // Triton 3.9's: src2 an inline 0 (0x80).
            let w1t = w1 & !(0x1ff << 18) | 0x80 << 18;
            assert_eq!(text(w0, w1t).unwrap().unwrap(), printed);
        } else {
            assert_eq!(text(w0 & !(1 << 14), w1).unwrap().unwrap(), printed);
        }
    }
    // Fields it does not read: named.
    let (w0, w1, _) = mc("v_wmma_ld_scale_paired_b32 v1, v2");
    for (w0, w1, what) in [
        (w0 | 1 << 15, w1, "clamp"),
        (w0 | 5, w1, "vdst"),
        (w0, w1 | 1 << 31, "neg[2]"),
        (w0, w1 | 3 << 29, "scale format 3"),
    ] {
        let e = text(w0, w1).unwrap().unwrap_err();
        assert!(e.contains(what), "{what}: {e}");
    }
    let (w0, w1, _) = mc("v_wmma_f32_32x16x128_f4 v[4:19], v[100:115], v[20:27], 0");
    for (w0, w1, what) in [
        (w0 | 1 << 11, w1, "op_sel"),
        (w0, w1 & !(3 << 27), "op_sel_hi[1:0]"),
        (w0, w1 | 1 << 29, "neg[1:0]"),
        (w0, w1 & !0x1ff | 0x7, "A is not a VGPR"),
    ] {
        let e = text(w0, w1).unwrap().unwrap_err();
        assert!(e.contains(what), "{what}: {e}");
    }
    // Other instructions are not this decoder's.
    let (w0, w1, _) = mc("v_wmma_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[0:7]");
    assert!(text(w0, w1).is_none());
}

/// aiter's sample objects (tests/corpus/aiter/gfx1250).
fn sample() -> Vec<std::path::PathBuf> {
    sample_in(&[])
}

/// The sample objects of the family directories `only` (all if empty).
fn sample_in(only: &[&str]) -> Vec<std::path::PathBuf> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/aiter/gfx1250");
    let mut out = Vec::new();
    for d in std::fs::read_dir(&dir).unwrap() {
        let d = d.unwrap().path();
        let family = d.file_name().unwrap().to_string_lossy().to_string();
        if !only.is_empty() && !only.contains(&family.as_str()) {
            continue;
        }
        for f in std::fs::read_dir(d).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "co") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 6, "{}", dir.display());
    out
}

/// Every word of the decoder's opcodes llvm-objdump-22 decodes in aiter's
/// sample families that have them all (`f4gemm`, `fmha_fwd_mxfp8`: the
/// ld_scale halves it prints alone, the f4 WMMAs, and both halves of each
/// `v_wmma_scale*` pair it prints whole) is decoded to
/// LLVM's text; lines carrying gfx1250 VGPR-MSB comments are skipped (the
/// decoder prints the encoded register).
#[test]
fn gfx1250_wmma_decoder_agrees_with_llvm_objdump_on_aiters_words() {
    let objdump = gcn_emu::decode::find_objdump(None).unwrap();
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for co in sample_in(&["f4gemm", "fmha_fwd_mxfp8"]) {
        let out = std::process::Command::new(&objdump)
            .args(["-d", "--mcpu=gfx1250"])
            .arg(&co)
            .output()
            .unwrap();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Some(raw) = gcn_raw::listing::instruction(line) else {
                continue;
            };
            let (t, w) = (raw.text.trim().to_string(), raw.words());
            if t.contains("/*") {
                continue;
            }
            let name = t.split(' ').next().unwrap_or("").to_string();
            if w.len() == 2 && name != ".long" {
                if let Some(ours) = text(w[0], w[1]) {
                    assert_eq!(ours.unwrap(), t, "{}: {line}", co.display());
                    *checked.entry(name).or_default() += 1;
                }
            } else if w.len() == 4 && name.starts_with("v_wmma_scale") {
                // The pair: our ld_scale half, LLVM's text of the WMMA half.
                let half = text(w[0], w[1]).unwrap().unwrap();
                let (ld, _) = half.split_once(' ').unwrap();
                assert!(
                    PAIRS.iter().any(|p| p.0 == ld && p.2 == name),
                    "{ld} / {name}"
                );
                if let Some(f4) = text(w[2], w[3]) {
                    let f4 = f4.unwrap();
                    assert!(
                        t.starts_with(&f4.replace("v_wmma_f32_32x16x128_f4", &name)),
                        "{f4}\n{t}"
                    );
                    *checked.entry("v_wmma_f32_32x16x128_f4".into()).or_default() += 1;
                }
                *checked.entry(name).or_default() += 1;
            }
        }
    }
    eprintln!("{checked:?}");
    for n in [
        "v_wmma_ld_scale_paired_b32",
        "v_wmma_ld_scale16_paired_b64",
        "v_wmma_f32_32x16x128_f4",
        "v_wmma_scale_f32_32x16x128_f4",
        "v_wmma_scale_f32_16x16x128_f8f6f4",
    ] {
        assert!(checked.get(n).copied().unwrap_or(0) > 0, "{n}: {checked:?}");
    }
}

/// Loaded for gfx1250, aiter's sample has none of the decoder's opcodes
/// left as `.long`, no `v_wmma_ld_scale*` left alone, and a scaled WMMA
/// for each pair: the same instruction, operands and modifiers whether
/// LLVM printed the pair whole or our decoder read a half of it.
#[test]
fn aiter_gfx1250_wmma_words_decode_and_scale_pairs_join() {
    let mut names = std::collections::BTreeMap::<String, usize>::new();
    for co in sample() {
        let obj = gcn_emu::load::CodeObject::read_file(&co).unwrap();
        for k in &obj.kernels {
            let l = load(&co, &k.name);
            for i in &l.program.instructions {
                if i.mnemonic == ".long" && i.words.len() == 2 {
                    let op = (i.words[0] >> 16) & 0xff;
                    assert!(
                        !gcn_emu::gfx1250_wmma::OPCODES.iter().any(|o| o.0 == op),
                        "{}: {:#x} {}",
                        co.display(),
                        i.addr,
                        i.text
                    );
                }
                assert!(
                    !i.mnemonic.starts_with("v_wmma_ld_scale"),
                    "{}: {:#x} {}",
                    co.display(),
                    i.addr,
                    i.text
                );
                if i.mnemonic.starts_with("v_wmma_scale") {
                    assert_eq!(i.words.len(), 4, "{}", i.text);
                    assert_eq!(i.ops.len(), 6, "{}", i.text);
                    *names.entry(i.mnemonic.clone()).or_default() += 1;
                }
                if i.mnemonic.contains("wmma") {
                    *names.entry("any wmma".into()).or_default() += 1;
                }
            }
        }
    }
    eprintln!("{names:?}");
    assert!(
        names
            .get("v_wmma_scale_f32_16x16x128_f8f6f4")
            .copied()
            .unwrap_or(0)
            > 0
    );
    assert!(
        names
            .get("v_wmma_scale_f32_32x16x128_f4")
            .copied()
            .unwrap_or(0)
            > 0
    );
    assert!(
        names
            .get("v_wmma_scale16_f32_32x16x128_f4")
            .copied()
            .unwrap_or(0)
            > 0
    );
}

/// A random code of a dot_scaled format, finite and in a narrow range
/// (fp8 exponents within 2^±2 of 1, fp4 any code), so that every partial
/// sum of the 128 scaled products is exact in f64 and the result does not
/// depend on the order of the additions.
fn code(fmt: &str, r: &mut Rng) -> u8 {
    let x = r.next_u32();
    let (sign, m) = ((x >> 8 & 1) as u8, (x & 7) as u8);
    match fmt {
        "e4m3" => sign << 7 | ((5 + (x >> 4) % 5) as u8) << 3 | m,
        "e5m2" => sign << 7 | ((13 + (x >> 4) % 5) as u8) << 2 | (m & 3),
        _ => (x & 0xf) as u8,
    }
}

/// Triton 3.9's `tl.dot_scaled` for gfx1250 (M×16×128 for M 16 and 32,
/// E8M0 scales per 32 K; gcn-emu/tests/triton_gfx1250/generate.py),
/// which it lowers to `v_wmma_scale_f32_16x16x128_f8f6f4` with fp8, bf8 and
/// fp4 operands (M 32: two, one with `matrix_b_scale:MATRIX_SCALE_ROW1`),
/// run on random codes and scales against NumPy with ml_dtypes' decoding of
/// the formats: bit-exact (every partial sum is exact, see [`code`]). Triton
/// places the operands in registers by its own (AMD's) model of the lane
/// layout, and the scales by its own; a wrong layout in the emulator
/// (which K a lane's element holds, which lane's byte scales a row) gives a
/// wrong product here, unless it errs the same way for A, B and the scales.
#[test]
fn triton_gfx1250_dot_scaled_matches_numpy() {
    const K: usize = 128;
    for (fa, fb, m) in [
        ("e4m3", "e4m3", 16),
        ("e5m2", "e4m3", 16),
        ("e2m1", "e2m1", 16),
        ("e4m3", "e2m1", 16),
        ("e2m1", "e2m1", 32),
    ] {
        let name = if m == 16 {
            format!("ds_{fa}_{fb}")
        } else {
            format!("ds{m}_{fa}_{fb}")
        };
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/triton_gfx1250/{name}-gfx1250"));
        let l = load(&dir.join("ds.hsaco"), "ds");
        let shared = triton_meta(&dir.join("ds.json"), "shared");
        let mut r = Rng(0x9e37_79b9
            ^ (m * 131 + fa.as_bytes()[1] as usize * 31 + fb.as_bytes()[1] as usize) as u64);
        let pack = |fmt: &str, codes: Vec<u8>, along_k_rows: bool| -> Vec<u8> {
            // fp4: two codes a byte along K, the lower K in the low nibble.
            if fmt != "e2m1" {
                return codes;
            }
            if along_k_rows {
                // A: [M][128] → [M][64].
                codes.chunks(2).map(|p| p[0] | p[1] << 4).collect()
            } else {
                // B: [128][16] → [64][16].
                let mut out = vec![0u8; K / 2 * 16];
                for k in 0..K / 2 {
                    for j in 0..16 {
                        out[k * 16 + j] = codes[2 * k * 16 + j] | codes[(2 * k + 1) * 16 + j] << 4;
                    }
                }
                out
            }
        };
        let a: Vec<u8> = (0..m * K).map(|_| code(fa, &mut r)).collect();
        let b: Vec<u8> = (0..K * 16).map(|_| code(fb, &mut r)).collect();
        let sa: Vec<u8> = (0..m * 4).map(|_| 125 + (r.next_u32() % 5) as u8).collect();
        let sb: Vec<u8> = (0..16 * 4)
            .map(|_| 125 + (r.next_u32() % 5) as u8)
            .collect();
        let mut launch = gcn_emu::dispatch::Launch::new([1, 1, 1], [32, 1, 1]);
        launch.dynamic_lds = shared;
        let (bufs, _) = launch_with(
            &l,
            launch,
            vec![
                A::Buf(pack(fa, a.clone(), true)),
                A::Buf(pack(fb, b.clone(), false)),
                A::Buf(sa.clone()),
                A::Buf(sb.clone()),
                A::Buf(vec![0xff; 4 * m * 16]),
                A::Val(vec![0; 8]),
                A::Val(vec![0; 8]),
            ],
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let script = format!(
            "import ml_dtypes\n\
             t = {{'e4m3': ml_dtypes.float8_e4m3fn, 'e5m2': ml_dtypes.float8_e5m2, 'e2m1': ml_dtypes.float4_e2m1fn}}\n\
             A = np.frombuffer(a0, np.uint8).view(t['{fa}']).astype(np.float64).reshape({m}, {K})\n\
             B = np.frombuffer(a1, np.uint8).view(t['{fb}']).astype(np.float64).reshape({K}, 16)\n\
             SA = np.frombuffer(a2, np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float64).reshape({m}, 4)\n\
             SB = np.frombuffer(a3, np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float64).reshape(16, 4)\n\
             A = A * np.repeat(SA, 32, axis=1)\n\
             B = B * np.repeat(SB, 32, axis=1).T\n\
             out = [(A @ B).astype(np.float32)]\n"
        );
        let want = numpy(&script, &[&a, &b, &sa, &sb]);
        let got = to_f32(&bufs[4]);
        let want = to_f32(&want[0]);
        let bad: Vec<String> = (0..m * 16)
            .filter(|&i| got[i].to_bits() != want[i].to_bits())
            .take(6)
            .map(|i| format!("C[{}][{}] = {} (NumPy {})", i / 16, i % 16, got[i], want[i]))
            .collect();
        assert!(bad.is_empty(), "{name}: {} ...", bad.join(", "));
        assert!(want.iter().any(|&x| x != 0.0));
    }
}

/// `v_wmma_scale16_f32_32x16x128_f4` with E4M3 scales (aiter's
/// `f4gemm_bf16_nvfp4` form) on random registers, against NumPy with
/// ml_dtypes' FP4 E2M1 and FP8 E4M3 values: A's registers 0–7 are rows
/// 0–15 and 8–15 rows 16–31 (each block laid out as the 16×16×128 FP4
/// operand Triton's kernels check above), C/D likewise by halves, 16 K a
/// scale, A's row `i` scaled from lane `i`, B's column `j` from lane `j`.
/// What this checks is the decoding of the pair's operands, the E4M3 scale
/// values and blocks of 16; the 32-row layout itself is the emulator's
/// stated assumption, not checked against a compiler here.
#[test]
fn gfx1250_scale16_32x16x128_f4_e4m3_matches_numpy() {
    let line = "\tv_wmma_scale16_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v[56:57], v[58:59] matrix_a_scale_fmt:MATRIX_SCALE_FMT_E4M3 matrix_b_scale_fmt:MATRIX_SCALE_FMT_E4M3 // 000000000000: CC3A2200 4402A966 CC884074 1DD22118";
    let ins = gcn_emu::decode::parse_line(line).unwrap().unwrap();
    let x = gcn_emu::wmma::decode_f8f6f4(&ins).unwrap();
    assert_eq!((x.m, x.scales.unwrap().block), (32, 16));
    let mut r = Rng(77);
    let mut regs = vec![[0u32; 32]; 60];
    for (i, reg) in regs.iter_mut().enumerate() {
        for w in reg.iter_mut() {
            *w = match i {
                // C: small f32 values, exact.
                40..=55 => ((r.next_u32() % 64) as f32 / 8.0 - 4.0).to_bits(),
                // E4M3 scales: positive, exponents 2^-2..2^2.
                56..=59 => u32::from_le_bytes(std::array::from_fn(|_| {
                    (((5 + r.next_u32() % 5) << 3) | (r.next_u32() & 7)) as u8
                })),
                _ => r.next_u32(),
            };
        }
    }
    let read = |m: gcn_emu::wmma::Matrix, i: usize, lane: usize| -> u32 {
        use gcn_emu::wmma::Matrix;
        let base = match m {
            Matrix::A => 16,
            Matrix::B => 32,
            Matrix::C => 40,
            Matrix::Index => 56,
        };
        regs[base + i][lane]
    };
    let d = gcn_emu::wmma::compute_f8f6f4(&x, &read, 0);
    let bytes: Vec<u8> = regs
        .iter()
        .flat_map(|r| r.iter().flat_map(|w| w.to_le_bytes()))
        .collect();
    let script = "import ml_dtypes\n\
        R = np.frombuffer(a0, '<u4').reshape(60, 32)\n\
        def nib(regs, lane):\n    b = regs[:, lane].astype('<u4').tobytes()\n    v = np.frombuffer(b, np.uint8)\n    return np.stack([v & 15, v >> 4], 1).reshape(-1)\n\
        fp4 = lambda c: c.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)\n\
        kof = lambda e, h: 64 * (e // 32) + 32 * h + e % 32\n\
        A = np.zeros((32, 128)); B = np.zeros((128, 16))\n\
        for lane in range(32):\n    row, h = lane % 16, lane // 16\n    for blk in range(2):\n        c = fp4(nib(R[16 + 8 * blk:24 + 8 * blk], lane))\n        for e in range(64): A[16 * blk + row, kof(e, h)] = c[e]\n    c = fp4(nib(R[32:40], lane))\n    for e in range(64): B[kof(e, h), row] = c[e]\n\
        sc = lambda regs, lane: np.frombuffer(regs[:, lane].astype('<u4').tobytes(), np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)\n\
        for i in range(32): A[i] *= np.repeat(sc(R[56:58], i), 16)\n\
        for j in range(16): B[:, j] *= np.repeat(sc(R[58:60], j), 16)\n\
        C = np.zeros((32, 16))\n\
        for reg in range(16):\n    for lane in range(32):\n        C[16 * (reg // 8) + 8 * (lane // 16) + reg % 8, lane % 16] = R[40 + reg, lane].view(np.float32)\n\
        Dm = (C + A @ B).astype(np.float32)\n\
        D = np.zeros((16, 32), np.float32)\n\
        for reg in range(16):\n    for lane in range(32):\n        D[reg, lane] = Dm[16 * (reg // 8) + 8 * (lane // 16) + reg % 8, lane % 16]\n\
        out = [D]\n";
    let want = to_f32(&numpy(script, &[&bytes])[0]);
    let mut bad = 0;
    for reg in 0..16 {
        for lane in 0..32 {
            let (g, w) = (f32::from_bits(d[reg][lane]), want[reg * 32 + lane]);
            // f64 sums (both sides) of products with ≤ 4-bit significands
            // scaled by 2^±2·(1..2): exact, so bit-equal.
            if g.to_bits() != w.to_bits() {
                bad += 1;
                assert!(bad < 5, "D reg {reg} lane {lane}: {g} (NumPy {w})");
            }
        }
    }
    assert_eq!(bad, 0);
}
