//! The lines of an `llvm-objdump -d` listing of AMDGPU code: the one reader
//! gcn-emu's decoder and gcn-patch's lift share.
//!
//! An instruction line is `\t<text>   // <address>: <word> <word>…`, the
//! words the encoding's dwords in hex (a trailing partial word printed as
//! bytes); a header is `<address> <name>:` (a symbol, or a label
//! `--symbolize-operands` made for a branch target).

/// One instruction line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// Its address.
    pub address: u64,
    /// Its encoding, in the code object's (little-endian) byte order.
    pub bytes: Vec<u8>,
    /// The disassembly as printed, trimmed: `<unknown>` for words LLVM
    /// cannot decode, `.long 0x…` for data.
    pub text: &'a str,
}

impl Line<'_> {
    /// The encoding's whole dwords (a trailing partial word left out).
    pub fn words(&self) -> Vec<u32> {
        self.bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// Whether LLVM decoded the bytes as an instruction (not `<unknown>`,
    /// data or a comment).
    pub fn is_instruction(&self) -> bool {
        !(self.text.is_empty()
            || self.text.starts_with("<unknown>")
            || self.text.starts_with(';')
            || self.text.starts_with('.'))
    }
}

/// Read an instruction line; `None` for any other line (headers, blank
/// lines, the file banner) and for a line whose `// address: words`
/// comment is not all hex words (8 digits) and bytes (2 digits).
pub fn instruction(line: &str) -> Option<Line<'_>> {
    // `// <address>: <words>` ends the line.
    let at = line.rfind("// ")?;
    let (code, enc) = (&line[..at], &line[at + 3..]);
    let (addr, words) = enc.split_once(':')?;
    let address = u64::from_str_radix(addr.trim(), 16).ok()?;
    let mut bytes = Vec::new();
    for w in words.split_whitespace() {
        if !w.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        match w.len() {
            8 => bytes.extend_from_slice(&u32::from_str_radix(w, 16).ok()?.to_le_bytes()),
            2 => bytes.push(u8::from_str_radix(w, 16).ok()?),
            _ => return None,
        }
    }
    if bytes.is_empty() {
        return None;
    }
    Some(Line {
        address,
        bytes,
        text: code.trim(),
    })
}

/// A header line: `0000000000001800 <L0>:` → (0x1800, "L0").
pub fn header(line: &str) -> Option<(u64, &str)> {
    let (addr, rest) = line.split_once(" <")?;
    let name = rest.strip_suffix(">:")?;
    if addr.len() < 8 || !addr.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((u64::from_str_radix(addr, 16).ok()?, name))
}

/// `L<digits>`: the names `--symbolize-operands` gives branch targets.
pub fn is_generated_label(name: &str) -> bool {
    name.strip_prefix('L')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_instructions_partial_words_and_headers() {
        let l = instruction(
            "\tv_and_b32_e32 v2, 0x3ff, v2                                // 000000001704: 260404FF 000003FF",
        )
        .unwrap();
        assert_eq!(l.address, 0x1704);
        assert_eq!(l.text, "v_and_b32_e32 v2, 0x3ff, v2");
        assert_eq!(l.words(), [0x260404FF, 0x000003FF]);
        assert!(l.is_instruction());
        let l = instruction("\t<unknown> // 000000001800: DEADBEEF 01 02").unwrap();
        assert_eq!(l.bytes, [0xef, 0xbe, 0xad, 0xde, 1, 2]);
        assert_eq!(l.words(), [0xDEADBEEF]);
        assert!(!l.is_instruction());
        // Not all hex: not an instruction line.
        assert_eq!(instruction("\ts_nop 0 // 000000001800: BF800000 zz"), None);
        assert_eq!(instruction("\ts_nop 0 // 000000001800: BF8000"), None);
        assert_eq!(instruction("\ts_nop 0 // 000000001800:"), None);
        assert_eq!(instruction("Disassembly of section .text:"), None);
        assert_eq!(header("0000000000001800 <L0>:"), Some((0x1800, "L0")));
        assert_eq!(header("\ts_branch <L0>:"), None);
        assert!(is_generated_label("L12") && !is_generated_label("L") && !is_generated_label("k"));
    }
}
