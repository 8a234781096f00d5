//! Check, instruction by instruction, that the assembler re-encodes each
//! disassembled instruction to its original bytes (`llvm-mc --show-encoding`,
//! one run for the whole `.text`), and say why where it does not.

use std::collections::BTreeMap;

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic};
use crate::stage::toolchain::ToolDiagnostic as _;
use crate::stage::toolchain::Toolchain;

/// One line of the `.text` being checked.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    /// A label definition.
    Label(&'a str),
    /// An instruction's text and the bytes it must encode to.
    Insn(&'a str, &'a [u8]),
}

/// Why an instruction cannot stay text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `llvm-objdump` printed no instruction for these bytes.
    Undecoded,
    /// The assembler rejects the text (its message).
    Rejected(String),
    /// The assembler accepts it but encodes other bytes.
    Reencoded(Vec<Option<u8>>),
}

/// The instructions a lift keeps raw without asking the assembler first:
/// those llvm-objdump could not decode ([`undecoded`]), and those whose
/// disassembly is known not to re-encode to their bytes with LLVM 22
/// ([`predict`]). The identity check proves the guess; when it fails, the
/// lift runs [`check`] and tries again.
pub fn predicted(target: &TargetId, items: &[Item]) -> BTreeMap<usize, Refusal> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Insn(t, b) => Some((*t, *b)),
            Item::Label(_) => None,
        })
        .enumerate()
        .filter_map(|(i, (t, b))| {
            if t.is_empty() {
                Some((i, Refusal::Undecoded))
            } else {
                predict(target, t, b).map(|r| (i, r))
            }
        })
        .collect()
}

/// Whether the decoded instruction `text` (of encoding `bytes`) is known
/// not to re-encode to `bytes`, and what the assembler then says: the
/// rules the re-encoding run ([`check`]) gives on the corpus (aiter's
/// gfx942, gfx950 and gfx1250 objects, IREE's and Triton's gfx11 and gfx12
/// ones; `tests/it/lift_in_process.rs` holds the prediction to be exactly
/// [`check`]'s answer there). Each is about bits the disassembly does not
/// show, or operands LLVM 22 decodes but rejects:
///
/// * a disassembly that marks an invalid register (`/*Invalid register,
///   operand has 'VReg_64_Align2' register class*/`): rejected;
/// * `v_nop` with bits set in its unused operand field;
/// * gfx11 and gfx12 VOP3 instructions with bits set in the field of a
///   source they do not have (a two-source `v_cmp_*_e64`, `v_add_co_u32`,
///   `v_cvt_pk_bf16_f32` whose `src2` field is not zero);
/// * gfx11 and gfx12 VOPD pairs whose two `src1` VGPRs share a bank:
///   rejected;
/// * gfx1250 `v_pk_{add,mul,fma}_f32` reading an SGPR pair: rejected
///   ("invalid op_sel operand"); two-source `v_pk_add_f32`/`v_pk_mul_f32`
///   whose third `op_sel_hi` bit is clear or whose `src2` field is not
///   zero;
/// * gfx950 `v_mfma_scale_*` with the scale instruction's `op_sel[2]` or
///   `op_sel_hi[2]` bit set (LLVM 22 drops them).
///
/// `None`: no rule applies (the instruction is expected to round-trip).
/// A wrong guess costs time, never bytes: the identity check decides, and
/// the lift then asks the assembler.
pub fn predict(target: &TargetId, text: &str, bytes: &[u8]) -> Option<Refusal> {
    use gcn_embed::Generation;
    let word = |i: usize| {
        bytes
            .get(4 * i..4 * i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    // The encoding with word `i` made `f(word)`, when that differs.
    let with = |i: usize, f: &dyn Fn(u32) -> u32| {
        let old = word(i)?;
        let new = f(old);
        (new != old).then(|| {
            let mut out: Vec<Option<u8>> = bytes.iter().copied().map(Some).collect();
            for (k, b) in new.to_le_bytes().iter().enumerate() {
                out[4 * i + k] = Some(*b);
            }
            Refusal::Reencoded(out)
        })
    };
    if text.contains("/*Invalid register") {
        return Some(Refusal::Rejected(
            "invalid operand for instruction".to_string(),
        ));
    }
    let mnemonic = text.split_whitespace().next().unwrap_or("");
    if mnemonic == "v_nop" && bytes.len() == 4 {
        return with(0, &|_| 0x7e00_0000);
    }
    let generation = target.processor.generation;
    let gfx11_up = generation >= Generation::Gfx11;
    if gfx11_up && text.contains(" :: ") {
        return vopd_banks(text);
    }
    // The source fields a VOP3(P) instruction does not use: `src<n>` is
    // bits 9n..9n+8 of the second word.
    let unused = |sources: usize| (sources..3).fold(0u32, |m, k| m | 0x1ff << (9 * k));
    if gfx11_up && bytes.len() >= 8 && word(0)? >> 26 == 0x35 {
        let sources = operands(text).checked_sub(destinations(mnemonic))?;
        return with(1, &|w| w & !unused(sources));
    }
    if generation == Generation::Gfx12_5 && bytes.len() == 8 {
        let pk = matches!(mnemonic, "v_pk_add_f32" | "v_pk_mul_f32" | "v_pk_fma_f32");
        if pk && text.contains("s[") {
            return Some(Refusal::Rejected("invalid op_sel operand".to_string()));
        }
        if matches!(mnemonic, "v_pk_add_f32" | "v_pk_mul_f32") {
            let mut out = with(0, &|w| w | 1 << 14);
            if let Some(Refusal::Reencoded(b)) = with(1, &|w| w & !unused(2)) {
                out = Some(match out {
                    Some(Refusal::Reencoded(mut a)) => {
                        a[4..].copy_from_slice(&b[4..]);
                        Refusal::Reencoded(a)
                    }
                    _ => Refusal::Reencoded(b),
                });
            }
            return out;
        }
    }
    if generation == Generation::Gfx9 && mnemonic.starts_with("v_mfma_scale_") && bytes.len() == 16
    {
        return with(0, &|w| w & !0x6000);
    }
    None
}

/// How many operands `text` lists: its comma-separated words after the
/// mnemonic, outside brackets and comments (`op_sel:[0,1]` and the
/// modifiers after the last operand do not count).
fn operands(text: &str) -> usize {
    let Some((_, rest)) = text.split_once(char::is_whitespace) else {
        return 0;
    };
    let (mut n, mut depth, mut any, mut comment) = (0, 0i32, false, false);
    let b = rest.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if comment {
            comment = !(c == b'/' && i > 0 && b[i - 1] == b'*');
            continue;
        }
        match c {
            b'/' if b.get(i + 1) == Some(&b'*') => comment = true,
            b'[' | b'(' => depth += 1,
            b']' | b')' => depth -= 1,
            b',' if depth == 0 => n += 1,
            _ if !c.is_ascii_whitespace() => any = true,
            _ => {}
        }
    }
    if any {
        n + 1
    } else {
        0
    }
}

/// How many of a VOP3 instruction's operands are destinations: none for
/// `v_cmpx_*` (it writes `exec`), two for those that also write a carry
/// or condition SGPR, else one.
fn destinations(mnemonic: &str) -> usize {
    let base = mnemonic.trim_end_matches("_e64");
    if base.starts_with("v_cmpx_") {
        0
    } else if matches!(
        base,
        "v_add_co_u32"
            | "v_sub_co_u32"
            | "v_subrev_co_u32"
            | "v_add_co_ci_u32"
            | "v_sub_co_ci_u32"
            | "v_subrev_co_ci_u32"
            | "v_mad_u64_u32"
            | "v_mad_i64_i32"
            | "v_mad_co_u64_u32"
            | "v_mad_co_i64_i32"
            | "v_div_scale_f32"
            | "v_div_scale_f64"
    ) {
        2
    } else {
        1
    }
}

/// A VOPD pair (`v_dual_x … :: v_dual_y …`) whose two `src1` operands are
/// VGPRs of one bank (the register number modulo 4): LLVM rejects it.
fn vopd_banks(text: &str) -> Option<Refusal> {
    let src1 = |half: &str| -> Option<u32> {
        let (_, ops) = half.trim().split_once(char::is_whitespace)?;
        let op = ops.split(',').nth(2)?.trim();
        op.strip_prefix('v')?.parse().ok()
    };
    let (x, y) = text.split_once(" :: ")?;
    let (a, b) = (src1(x)?, src1(y)?);
    (a % 4 == b % 4)
        .then(|| Refusal::Rejected("src1 operands must use different VGPR banks".to_string()))
}

/// Check `items`; returns the instructions (indices among the `Insn` items)
/// that must be kept as raw encodings, with the reason.
pub fn check(
    tc: &Toolchain,
    target: &TargetId,
    items: &[Item],
    job: &str,
) -> Result<BTreeMap<usize, Refusal>, Diagnostic> {
    let mut refused = BTreeMap::new();
    let insns: Vec<(&str, &[u8])> = items
        .iter()
        .filter_map(|i| match i {
            Item::Insn(t, b) => Some((*t, *b)),
            Item::Label(_) => None,
        })
        .collect();
    for (i, (text, _)) in insns.iter().enumerate() {
        if text.is_empty() {
            refused.insert(i, Refusal::Undecoded);
        }
    }
    // Rejected lines drop out and the rest is assembled again; two rounds
    // normally suffice (the assembler reports every bad line in one run).
    for _round in 0..4 {
        let mut src = String::from("\t.text\n");
        // Source line (1-based) → instruction index.
        let mut line_of = BTreeMap::new();
        let mut fed = Vec::new();
        let mut n = 0usize;
        // The line the next push starts (line 1 is `.text`).
        let mut line = 2usize;
        for item in items {
            match item {
                Item::Label(l) => {
                    src.push_str(l);
                    src.push_str(":\n");
                    line += 1;
                }
                Item::Insn(text, bytes) => {
                    line += 1;
                    if refused.contains_key(&n) {
                        // Keep the layout: the same number of bytes.
                        src.push_str(&format!("\t.fill {}, 1, 0\n", bytes.len()));
                    } else {
                        line_of.insert(line - 1, n);
                        fed.push(n);
                        src.push('\t');
                        src.push_str(text);
                        src.push('\n');
                    }
                    n += 1;
                }
            }
        }
        let mut cmd = super::mc_command(tc, target, &["--show-encoding"]);
        let out = tc
            .run_with_input(&mut cmd, "llvm-mc", job, Some(src.as_bytes()))
            .map_err(|e| e.to_diagnostic())?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut rejected = false;
        for (line, msg) in errors(&stderr) {
            if let Some(&i) = line_of.get(&line) {
                refused.entry(i).or_insert(Refusal::Rejected(msg));
                rejected = true;
            }
        }
        if rejected {
            continue;
        }
        if !out.status.success() {
            return Err(Diagnostic::error(
                Code::LiftToolFailed,
                format!("llvm-mc failed {job}: {}", stderr.trim()),
            ));
        }
        let encodings = encodings(&String::from_utf8_lossy(&out.stdout));
        if encodings.len() != fed.len() {
            return Err(Diagnostic::error(
                Code::LiftToolFailed,
                format!(
                    "llvm-mc printed {} encodings for {} instructions {job}",
                    encodings.len(),
                    fed.len()
                ),
            )
            .with_help("this is a gcn-patch bug: please report it with the code object"));
        }
        for (&i, enc) in fed.iter().zip(encodings) {
            let want = insns[i].1;
            let same = enc.len() == want.len()
                && enc.iter().zip(want).all(|(e, w)| e.is_none_or(|e| e == *w));
            if !same {
                refused.insert(i, Refusal::Reencoded(enc));
            }
        }
        return Ok(refused);
    }
    Err(Diagnostic::error(
        Code::LiftToolFailed,
        format!("llvm-mc kept rejecting new lines {job}"),
    ))
}

/// `<stdin>:LINE:COL: error: MESSAGE` → (LINE, MESSAGE).
fn errors(stderr: &str) -> Vec<(usize, String)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("<stdin>:")?;
            let (line, rest) = rest.split_once(':')?;
            let (_, rest) = rest.split_once(':')?;
            let msg = rest.trim().strip_prefix("error:")?;
            Some((line.parse().ok()?, msg.trim().to_string()))
        })
        .collect()
}

/// Every `; encoding: [0x.., A, …]` of llvm-mc's output, in order
/// (`None`: a byte a fixup fills in).
fn encodings(out: &str) -> Vec<Vec<Option<u8>>> {
    out.lines()
        .filter_map(|l| {
            let at = l.find("; encoding: [")?;
            let list = l[at + 13..].split(']').next()?;
            Some(
                list.split(',')
                    .map(|b| {
                        b.trim()
                            .strip_prefix("0x")
                            .and_then(|h| u8::from_str_radix(h, 16).ok())
                    })
                    .collect(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_operands_and_reads_vopd_banks() {
        assert_eq!(
            operands("v_pk_fma_f32 v[2:3], v[2:3], v[4:5], v[6:7] neg_lo:[0,0,1] neg_hi:[0,0,1]"),
            4
        );
        assert_eq!(
            operands("v_cvt_pk_bf16_f32 v45 /*v301*/, v70 /*v326*/, v71 /*v327*/"),
            3
        );
        assert_eq!(operands("v_nop"), 0);
        assert_eq!(destinations("v_add_co_u32"), 2);
        assert_eq!(destinations("v_cmpx_eq_u32_e64"), 0);
        assert_eq!(destinations("v_cmp_gt_i32_e64"), 1);
        assert!(vopd_banks("v_dual_sub_f32 v1, v1, v7 :: v_dual_sub_f32 v2, v2, v7").is_some());
        assert!(vopd_banks("v_dual_sub_f32 v1, v1, v7 :: v_dual_sub_f32 v2, v2, v8").is_none());
        let gfx1250 = TargetId::parse("gfx1250").unwrap();
        // The unused src2 field is v0 (0x100): LLVM encodes 0 there.
        assert!(matches!(
            predict(
                &gfx1250,
                "v_cvt_pk_bf16_f32 v28, v28, v29",
                &[0x1c, 0, 0x6d, 0xd7, 0x1c, 0x3b, 0x02, 0x04]
            ),
            Some(Refusal::Reencoded(_))
        ));
        assert_eq!(
            predict(
                &gfx1250,
                "v_cvt_pk_bf16_f32 v28, v28, v29",
                &[0x1c, 0, 0x6d, 0xd7, 0x1c, 0x3b, 0x02, 0x00]
            ),
            None
        );
    }

    #[test]
    fn reads_errors_and_encodings() {
        assert_eq!(
            errors("<stdin>:3:2: error: invalid operand for instruction\n v_x\n ^\n"),
            vec![(3, "invalid operand for instruction".to_string())]
        );
        assert_eq!(
            encodings(
                "\ts_nop 0 ; encoding: [0x00,0x00,0x80,0xbf]\n\ts_branch a ; encoding: [A,A,0x82,0xbf]\n"
            ),
            vec![
                vec![Some(0), Some(0), Some(0x80), Some(0xbf)],
                vec![None, None, Some(0x82), Some(0xbf)]
            ]
        );
    }
}
