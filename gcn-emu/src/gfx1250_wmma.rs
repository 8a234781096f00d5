//! gfx1250's WMMA words llvm-objdump-22 prints as `.long` in aiter's
//! kernels, decoded here from their fields, and the scale pairs.
//!
//! A scaled WMMA on gfx1250 is two VOP3P instructions, 16 bytes: a
//! `v_wmma_ld_scale_paired_b32` (opcode 0x35, E8M0 scales of 32-element
//! blocks) or `v_wmma_ld_scale16_paired_b64` (0x3a, scales of 16-element
//! blocks) supplying the scales of A and B, then the WMMA itself
//! (`v_wmma_f32_16x16x128_f8f6f4`, 0x33, or `v_wmma_f32_32x16x128_f4`,
//! 0x88). LLVM 22 prints a pair it decodes as one instruction,
//! `v_wmma_scale[16]_f32_… D, A, B, C, scale_a, scale_b` (llvm-mc-22
//! `-mcpu=gfx1250 -show-encoding` encodes `v_wmma_scale_f32_16x16x128_f8f6f4`
//! as the 8 bytes of `v_wmma_ld_scale_paired_b32` followed by the 8 of
//! `v_wmma_f32_16x16x128_f8f6f4`). It does not decode:
//!
//! - a `v_wmma_ld_scale*` whose unused `src2` field is not `v0` (0x100,
//!   as LLVM 22 encodes it; LLVM encoded 0 before llvm/llvm-project
//!   #167777, "scale src2 = vgpr0 (dummy)"; aiter's words have 0, Triton
//!   3.9's 0x80): 3,968 words in aiter's 38 gfx1250 objects, each followed
//!   by a `v_wmma_f32_16x16x128_f8f6f4` it then decodes alone;
//! - a `v_wmma_f32_32x16x128_f4` whose word-0 bit 14 is clear (LLVM 22
//!   encodes `op_sel_hi` as all ones on this instruction, bit 14 being
//!   `op_sel_hi[2]`): 1,024 words, 512 of them after a `v_wmma_ld_scale*`
//!   LLVM decodes alone.
//!
//! [`decode`] reads those words' fields (VOP3P: word 0 `[7:0]` vdst,
//! `[10:8]` neg_hi, `[13:11]` op_sel, `[14]` op_sel_hi\[2\], `[15]` clamp,
//! `[23:16]` opcode; word 1 `[8:0]` src0, `[17:9]` src1, `[26:18]` src2,
//! `[28:27]` op_sel_hi\[1:0\], `[31:29]` neg), naming each field as
//! llvm-mc-22 assembles it (checked field by field by the tests, which
//! also compare this decoder with LLVM's text on every such word of
//! aiter's sample LLVM does decode):
//!
//! - `v_wmma_ld_scale*`: src0 the scales of A, src1 those of B;
//!   `op_sel[0]` `matrix_a_scale:MATRIX_SCALE_ROW1`, `op_sel_hi[0]`
//!   `matrix_b_scale:MATRIX_SCALE_ROW1`, `neg[1:0]` `matrix_a_scale_fmt`
//!   and `neg_hi[1:0]` `matrix_b_scale_fmt` (1 `E5M3`, 2 `E4M3`; 0, E8M0,
//!   is not printed), `op_sel[2]` `matrix_a_reuse`, `op_sel_hi[2]`
//!   `matrix_b_reuse`; src2 is not read (any value);
//! - `v_wmma_f32_32x16x128_f4`: D 16 VGPRs, A 16, B 8, C 16 VGPRs or an
//!   inline constant, `neg[2]`/`neg_hi[2]` `neg_lo:[0,0,1]`/`neg_hi:[0,0,1]`;
//!   `op_sel_hi[1:0]` must be 3 as LLVM encodes it, and bit 14 is taken as
//!   not changing the result (what it does is not known here).
//!
//! Any other field set is an error naming it. [`pair`] then joins each
//! `v_wmma_ld_scale*` with the WMMA right after it into the one
//! instruction LLVM would print, whoever decoded either half; a
//! `v_wmma_ld_scale*` not followed by its WMMA keeps its name and its text
//! says so, and the executor refuses it.

use crate::decode::Instruction;

/// The VOP3P opcodes [`decode`] reads.
pub const OPCODES: &[(u32, &str)] = &[
    (0x35, "v_wmma_ld_scale_paired_b32"),
    (0x3a, "v_wmma_ld_scale16_paired_b64"),
    (0x88, "v_wmma_f32_32x16x128_f4"),
];

/// A 9-bit VOP3P source field as LLVM prints it, `count` registers wide:
/// a VGPR (0x100 + n), an SGPR `s0`–`s105`, or an integer or float inline
/// constant; anything else is an error.
fn src(field: u32, count: u32) -> Result<String, String> {
    let range = |p: &str, n: u32| {
        if count == 1 {
            format!("{p}{n}")
        } else {
            format!("{p}[{n}:{}]", n + count - 1)
        }
    };
    Ok(match field {
        0x100..=0x1ff => range("v", field - 0x100),
        0..=105 => range("s", field),
        128..=192 => (field - 128).to_string(),
        193..=208 => format!("-{}", field - 192),
        240 => "0.5".into(),
        241 => "-0.5".into(),
        242 => "1.0".into(),
        243 => "-1.0".into(),
        244 => "2.0".into(),
        245 => "-2.0".into(),
        246 => "4.0".into(),
        247 => "-4.0".into(),
        _ => {
            return Err(format!(
                "source field {field:#x} (not a VGPR, SGPR or inline constant this decoder reads)"
            ))
        }
    })
}

/// `matrix_*_scale_fmt` values.
fn scale_fmt(v: u32) -> Result<Option<&'static str>, String> {
    match v {
        0 => Ok(None),
        1 => Ok(Some("MATRIX_SCALE_FMT_E5M3")),
        2 => Ok(Some("MATRIX_SCALE_FMT_E4M3")),
        _ => Err(format!("scale format {v} (LLVM names 0–2)")),
    }
}

/// The instruction text (LLVM's syntax) of a gfx1250 VOP3P instruction
/// in [`OPCODES`], from its two dwords; `None` for another instruction,
/// an error naming a field this decoder does not read.
pub fn text(w0: u32, w1: u32) -> Option<Result<String, String>> {
    if w0 >> 24 != 0xcc {
        return None;
    }
    let op = (w0 >> 16) & 0xff;
    let name = OPCODES.iter().find(|e| e.0 == op)?.1;
    Some(fields(name, w0, w1))
}

fn fields(name: &str, w0: u32, w1: u32) -> Result<String, String> {
    let bit = |w: u32, b: u32| (w >> b) & 1 != 0;
    let (s0, s1, s2) = (w1 & 0x1ff, (w1 >> 9) & 0x1ff, (w1 >> 18) & 0x1ff);
    let clear = |what: &str, set: bool| -> Result<(), String> {
        if set {
            Err(format!(
                "`{name}` with {what} set (not read by this decoder)"
            ))
        } else {
            Ok(())
        }
    };
    clear("clamp (word 0 bit 15)", bit(w0, 15))?;
    if name == "v_wmma_f32_32x16x128_f4" {
        clear("op_sel (word 0 bits 13:11)", (w0 >> 11) & 7 != 0)?;
        clear("neg_hi[1:0] (word 0 bits 9:8)", (w0 >> 8) & 3 != 0)?;
        clear("neg[1:0] (word 1 bits 30:29)", (w1 >> 29) & 3 != 0)?;
        if (w1 >> 27) & 3 != 3 {
            return Err(format!(
                "`{name}` with op_sel_hi[1:0] (word 1 bits 28:27) {} (LLVM encodes 3)",
                (w1 >> 27) & 3
            ));
        }
        let vgpr = |f: u32, n: u32, what: &str| -> Result<String, String> {
            if f >= 0x100 {
                src(f, n)
            } else {
                Err(format!("`{name}` {what} is not a VGPR ({f:#x})"))
            }
        };
        let c = if s2 >= 0x100 {
            src(s2, 16)?
        } else {
            src(s2, 1)?
        };
        if (0..=105).contains(&s2) {
            return Err(format!("`{name}` C is an SGPR ({s2:#x})"));
        }
        let mut t = format!(
            "{name} {}, {}, {}, {c}",
            src(0x100 + (w0 & 0xff), 16)?,
            vgpr(s0, 16, "A")?,
            vgpr(s1, 8, "B")?,
        );
        if bit(w1, 31) {
            t.push_str(" neg_lo:[0,0,1]");
        }
        if bit(w0, 10) {
            t.push_str(" neg_hi:[0,0,1]");
        }
        return Ok(t);
    }
    // v_wmma_ld_scale*: vdst and src2 are not read (LLVM encodes 0 and v0).
    let n = if name.ends_with("_b64") { 2 } else { 1 };
    clear("vdst (word 0 bits 7:0)", w0 & 0xff != 0)?;
    clear("neg_hi[2] (word 0 bit 10)", bit(w0, 10))?;
    clear("op_sel[1] (word 0 bit 12)", bit(w0, 12))?;
    clear("op_sel_hi[1] (word 1 bit 28)", bit(w1, 28))?;
    clear("neg[2] (word 1 bit 31)", bit(w1, 31))?;
    // src2 is a dummy (llvm/llvm-project #167777 changed LLVM's encoding
    // of it from 0 to 0x100, `v0`): any value is accepted and not read.
    let _ = s2;
    let mut t = format!("{name} {}, {}", src(s0, n)?, src(s1, n)?);
    let mut m = |s: &str| {
        t.push(' ');
        t.push_str(s);
    };
    if bit(w0, 11) {
        m("matrix_a_scale:MATRIX_SCALE_ROW1");
    }
    if bit(w1, 27) {
        m("matrix_b_scale:MATRIX_SCALE_ROW1");
    }
    if let Some(f) = scale_fmt((w1 >> 29) & 3)? {
        m(&format!("matrix_a_scale_fmt:{f}"));
    }
    if let Some(f) = scale_fmt((w0 >> 8) & 3)? {
        m(&format!("matrix_b_scale_fmt:{f}"));
    }
    if bit(w0, 13) {
        m("matrix_a_reuse");
    }
    if bit(w0, 14) {
        m("matrix_b_reuse");
    }
    Ok(t)
}

/// The instruction a joined gfx1250 `.long` (its words, at `addr`) is:
/// `None` when its first word is not one of [`OPCODES`] or it is not two
/// dwords; an error (which field) when a field is not read here.
pub fn decode(addr: u64, words: &[u32]) -> Option<Result<Instruction, String>> {
    let [w0, w1] = words else { return None };
    let t = match text(*w0, *w1)? {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    let line = format!("\t{t} // {addr:012X}: {w0:08X} {w1:08X}");
    Some(match crate::decode::parse_line(&line) {
        Ok(Some(i)) => Ok(i),
        Ok(None) => Err(format!("`{t}`: not an instruction line")),
        Err(e) => Err(format!("`{t}`: {e}")),
    })
}

/// The WMMA a `v_wmma_ld_scale*` pairs with, and the scaled WMMA's name:
/// (ld_scale, WMMA, pair).
pub const PAIRS: &[(&str, &str, &str)] = &[
    (
        "v_wmma_ld_scale_paired_b32",
        "v_wmma_f32_16x16x128_f8f6f4",
        "v_wmma_scale_f32_16x16x128_f8f6f4",
    ),
    (
        "v_wmma_ld_scale16_paired_b64",
        "v_wmma_f32_16x16x128_f8f6f4",
        "v_wmma_scale16_f32_16x16x128_f8f6f4",
    ),
    (
        "v_wmma_ld_scale_paired_b32",
        "v_wmma_f32_32x16x128_f4",
        "v_wmma_scale_f32_32x16x128_f4",
    ),
    (
        "v_wmma_ld_scale16_paired_b64",
        "v_wmma_f32_32x16x128_f4",
        "v_wmma_scale16_f32_32x16x128_f4",
    ),
];

/// Join each `v_wmma_ld_scale*` with the WMMA at the next address into the
/// scaled WMMA LLVM prints for the pair: its operands D, A, B, C, then the
/// scales of A and B; its modifiers the WMMA's then the ld_scale's; its
/// words all four. A `v_wmma_ld_scale*` followed by anything else stays,
/// its text saying what follows it (the executor refuses it by name).
pub fn pair(instructions: Vec<Instruction>) -> Vec<Instruction> {
    let mut out: Vec<Instruction> = Vec::with_capacity(instructions.len());
    let mut it = instructions.into_iter().peekable();
    while let Some(mut ins) = it.next() {
        if !ins.mnemonic.starts_with("v_wmma_ld_scale") {
            out.push(ins);
            continue;
        }
        let end = ins.addr + 4 * ins.words.len() as u64;
        let next = it.peek().filter(|n| n.addr == end);
        let found = next.and_then(|n| {
            PAIRS
                .iter()
                .find(|p| p.0 == ins.mnemonic && p.1 == n.mnemonic)
        });
        let Some(&(_, _, name)) = found else {
            ins.text = format!(
                "{} (not followed by the WMMA it supplies scales to: {}; the scale pair is not modelled apart)",
                ins.text,
                next.map_or("nothing at the next address".to_string(), |n| format!(
                    "`{}`",
                    n.text
                )),
            );
            out.push(ins);
            continue;
        };
        let w = it.next().expect("peeked");
        let mut ops = w.ops.clone();
        ops.extend(ins.ops.iter().cloned());
        let mut mods = w.mods.clone();
        mods.extend(ins.mods.iter().cloned());
        let mut words = ins.words.clone();
        words.extend(&w.words);
        let (wt, lt) = (w.text.trim(), ins.text.trim());
        let wops = wt.split_once(' ').map_or("", |x| x.1);
        let lops = lt.split_once(' ').map_or("", |x| x.1);
        // `D, A, B, C[ mods]` + `, SA, SB[ mods]`: the scales after C.
        let (wo, wm) = split_mods(wops, w.ops.len());
        let (lo, lm) = split_mods(lops, ins.ops.len());
        let text = format!("{name} {wo}, {lo}{wm}{lm}");
        out.push(Instruction::new(ins.addr, name, ops, mods, words, text));
    }
    out
}

/// `operands[ modifiers]` of a text with `n` operands: the part up to the
/// end of the `n`-th operand, and the rest (with its leading space).
fn split_mods(s: &str, n: usize) -> (&str, &str) {
    let mut depth = 0i32;
    let mut seen = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => seen += 1,
            ' ' if depth == 0
                && seen + 1 >= n
                && !s[..i].ends_with(',')
                && !s[i + 1..].starts_with("/*") =>
            {
                return (&s[..i], &s[i..]);
            }
            _ => {}
        }
    }
    (s, "")
}
