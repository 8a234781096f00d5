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
        (w0, w1 & !(0x1ff << 18) | 0x101 << 18, "src2"),
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
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/aiter/gfx1250");
    let mut out = Vec::new();
    for d in std::fs::read_dir(&dir).unwrap() {
        for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "co") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 20, "{}", dir.display());
    out
}

/// Every word of the decoder's opcodes llvm-objdump-22 decodes in aiter's
/// sample (the ld_scale halves it prints alone, the f4 WMMAs, and both
/// halves of each `v_wmma_scale*` pair it prints whole) is decoded to
/// LLVM's text; lines carrying gfx1250 VGPR-MSB comments are skipped (the
/// decoder prints the encoded register).
#[test]
fn gfx1250_wmma_decoder_agrees_with_llvm_objdump_on_aiters_words() {
    let objdump = gcn_emu::decode::find_objdump(None).unwrap();
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for co in sample() {
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
