//! Check, instruction by instruction, that the assembler re-encodes each
//! disassembled instruction to its original bytes (`llvm-mc --show-encoding`,
//! one run for the whole `.text`), and say why where it does not.

use std::collections::BTreeMap;

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic};
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

/// The instructions llvm-objdump could not decode (empty text): those stay
/// raw whatever the assembler says. Indexes count instructions only.
pub fn undecoded(items: &[Item]) -> BTreeMap<usize, Refusal> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Insn(t, _) => Some(*t),
            Item::Label(_) => None,
        })
        .enumerate()
        .filter(|(_, t)| t.is_empty())
        .map(|(i, _)| (i, Refusal::Undecoded))
        .collect()
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
