//! Disassemble a code object's `.text` with `llvm-objdump` and read the
//! listing back: one [`Insn`] per instruction (address, encoding, text) and a
//! label for every branch target.

use std::collections::BTreeMap;
use std::path::Path;

use crate::base::diag::{Code, Diagnostic};
use crate::stage::toolchain::Toolchain;

/// One disassembled instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    /// Original address.
    pub address: u64,
    /// Its bytes, as in the code object.
    pub bytes: Vec<u8>,
    /// The disassembly, branch targets named by their labels. Empty when
    /// `llvm-objdump` could not decode the bytes.
    pub text: String,
}

/// The listing of `.text`.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Instructions in address order.
    pub insns: Vec<Insn>,
    /// Labels `llvm-objdump --symbolize-operands` made for branch targets
    /// without a symbol: address → its name in the listing (`L0`, …).
    pub branch_targets: BTreeMap<u64, String>,
}

/// Disassemble `path` (a code object; `-d -z --symbolize-operands`, every
/// byte of `.text`, zeros included).
pub fn disassemble(
    tc: &Toolchain,
    target: &gcn_embed::TargetId,
    path: &Path,
    job: &str,
) -> Result<Listing, Diagnostic> {
    let mut args: Vec<std::ffi::OsString> = ["-d", "-z", "--symbolize-operands", "-j", ".text"]
        .map(Into::into)
        .into();
    let features = super::features(target);
    if !features.is_empty() {
        args.push(format!("--mattr={}", features.join(",")).into());
    }
    args.push(path.into());
    let text = tc.objdump(args, job, Code::LiftToolFailed)?;
    Ok(parse_listing(&text))
}

/// Read an `llvm-objdump -d --show-raw-insn` listing of AMDGPU code: lines
/// `\t<text>   // <address>: <word> <word>…` and headers `<address> <name>:`.
pub fn parse_listing(listing: &str) -> Listing {
    use gcn_raw::listing;
    let mut out = Listing::default();
    for line in listing.lines() {
        // Headers start with the address; instructions with a tab.
        if line.as_bytes().first().is_some_and(u8::is_ascii_hexdigit) {
            if let Some((addr, name)) = listing::header(line) {
                if is_generated_label(name) {
                    out.branch_targets.insert(addr, name.to_string());
                }
                continue;
            }
        }
        let Some(l) = listing::instruction(line) else {
            continue;
        };
        // Words it cannot decode: `<unknown>`, or data (`.long 0x…`).
        let text = if l.is_instruction() {
            l.text.to_string()
        } else {
            String::new()
        };
        out.insns.push(Insn {
            address: l.address,
            bytes: l.bytes,
            text,
        });
    }
    out
}

/// `L<digits>`: the names `--symbolize-operands` gives branch targets.
pub use gcn_raw::listing::is_generated_label;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_instructions_labels_and_unknown_words() {
        let l = parse_listing(
            "\nk.co:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n\
             0000000000001700 <k>:\n\
             \ts_branch L0                                                // 000000001700: BF820001\n\
             \tv_and_b32_e32 v2, 0x3ff, v2                                // 000000001704: 260404FF 000003FF\n\
             0000000000001800 <L0>:\n\
             \t<unknown>                                                  // 000000001800: DEADBEEF\n",
        );
        assert_eq!(l.insns.len(), 3);
        assert_eq!(l.insns[0].text, "s_branch L0");
        assert_eq!(l.insns[1].bytes, [0xff, 0x04, 0x04, 0x26, 0xff, 0x03, 0, 0]);
        assert_eq!(l.insns[2].text, "");
        assert_eq!(
            l.branch_targets.get(&0x1800).map(String::as_str),
            Some("L0")
        );
        assert!(!l.branch_targets.contains_key(&0x1700));
    }
}
