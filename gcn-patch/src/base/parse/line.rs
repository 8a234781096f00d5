//! Classification of one line of AMDGPU assembly.

use super::operand::{parse_instruction, split_top_level, Instruction};

/// One line: its exact text and what it is.
///
/// A cheap handle: cloning a line (copying a document, keeping a line
/// through an edit) shares its text and kind instead of copying them, so
/// the documents of one pipeline (the dump, the patched asm, the
/// retargeted copy) hold each unchanged line once.
#[derive(Clone)]
pub struct Line(std::sync::Arc<LineData>);

/// What a [`Line`] shares.
#[derive(PartialEq, Eq)]
struct LineData {
    /// Exact text without the `\n` terminator (a CRLF file keeps its `\r` here).
    text: Box<str>,
    /// What the line is, derived from `text`.
    kind: LineKind,
    /// The classifier's state before and after this line: a rebuilt file
    /// keeps the line as classified when the state before it is unchanged
    /// ([`super::Rebuilder`]).
    states: (Ctx, Ctx),
}

impl PartialEq for Line {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Eq for Line {}

impl std::fmt::Debug for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Line")
            .field("text", &self.text())
            .field("kind", self.kind())
            .field("states", &self.0.states)
            .finish()
    }
}

/// What a line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    /// Empty or whitespace only.
    Blank,
    /// Only a comment (`;`, `//`, `#`, or `/* */`).
    Comment,
    /// A label definition `name:` (optionally followed by a comment).
    Label(String),
    /// A label followed by code on the same line (`name: s_nop 0`).
    LabeledLine {
        /// The label.
        label: String,
        /// What follows the label.
        rest: Box<LineKind>,
    },
    /// A directive other than `.set` and descriptor fields.
    Directive {
        /// Directive name including the dot, e.g. `.amdgcn_target`.
        name: String,
        /// Argument text, trimmed, trailing comment removed.
        args: String,
    },
    /// A machine instruction.
    Instruction(Instruction),
    /// A machine instruction kept as its encoding by `gcn-patch lift`:
    /// `.long 0x…, 0x… ; raw: <disassembly>`. The assembler sees data; the
    /// checks see the instruction the comment decodes it to.
    Raw(Instruction),
    /// A `.amdhsa_*` field inside `.amdhsa_kernel … .end_amdhsa_kernel`.
    DescriptorField {
        /// Field name including the dot, e.g. `.amdhsa_next_free_vgpr`.
        name: String,
        /// Value text, trimmed, trailing comment removed.
        value: String,
    },
    /// `.set name, value`.
    Set {
        /// Symbol being set.
        name: String,
        /// Value expression text.
        value: String,
    },
    /// A YAML line inside `.amdgpu_metadata … .end_amdgpu_metadata`.
    Metadata,
    /// Anything else (kept verbatim).
    Other,
}

impl Line {
    /// Classify `text` in the state `ctx` (advanced past the line).
    pub(crate) fn classified(text: &str, ctx: &mut Ctx) -> Line {
        let before = *ctx;
        let kind = classify(text, ctx);
        Line(std::sync::Arc::new(LineData {
            text: text.into(),
            kind,
            states: (before, *ctx),
        }))
    }

    /// This line in the state `ctx`: kept as it is (shared, not copied)
    /// when that is the state it was classified in, else classified again;
    /// `ctx` is advanced past it.
    pub(crate) fn reclassified(self, ctx: &mut Ctx) -> Line {
        if self.0.states.0 == *ctx {
            *ctx = self.0.states.1;
            self
        } else {
            Line::classified(self.text(), ctx)
        }
    }

    /// Exact text without the `\n` terminator (a CRLF file keeps its `\r`
    /// here).
    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// What the line is, derived from [`Line::text`].
    pub fn kind(&self) -> &LineKind {
        &self.0.kind
    }

    /// The label this line defines, if any.
    pub fn label(&self) -> Option<&str> {
        match self.kind() {
            LineKind::Label(l) | LineKind::LabeledLine { label: l, .. } => Some(l),
            _ => None,
        }
    }

    /// The instruction on this line, if any (also after a label), written
    /// as text or kept raw ([`LineKind::Raw`]: what the checks read). A
    /// rewrite of the line's text must use [`Line::written_instruction`]:
    /// the text of a raw line is data (`.long …`), not this instruction.
    pub fn instruction(&self) -> Option<&Instruction> {
        match self.kind() {
            LineKind::Instruction(i) | LineKind::Raw(i) => Some(i),
            LineKind::LabeledLine { rest, .. } => match &**rest {
                LineKind::Instruction(i) | LineKind::Raw(i) => Some(i),
                _ => None,
            },
            _ => None,
        }
    }

    /// The instruction on this line when it is written as text, the only
    /// kind a rewrite may change: `None` for a raw line (`.long 0x… ; raw:
    /// …`), whose bytes are the instruction and must reach the assembler
    /// untouched.
    pub fn written_instruction(&self) -> Option<&Instruction> {
        match self.kind() {
            LineKind::Instruction(i) => Some(i),
            LineKind::LabeledLine { rest, .. } => match &**rest {
                LineKind::Instruction(i) => Some(i),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether this line is an instruction kept as its encoding
    /// ([`LineKind::Raw`], also after a label).
    pub fn is_raw(&self) -> bool {
        match self.kind() {
            LineKind::Raw(_) => true,
            LineKind::LabeledLine { rest, .. } => matches!(**rest, LineKind::Raw(_)),
            _ => false,
        }
    }

    /// Directive name and arguments, if this line is a plain directive.
    pub fn directive(&self) -> Option<(&str, &str)> {
        match self.kind() {
            LineKind::Directive { name, args } => Some((name, args)),
            _ => None,
        }
    }
}

/// State carried from line to line while classifying.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ctx {
    in_descriptor: bool,
    in_metadata: bool,
    in_block_comment: bool,
}

/// Classify one line's text.
pub(crate) fn classify(text: &str, ctx: &mut Ctx) -> LineKind {
    let s = text.strip_suffix('\r').unwrap_or(text);
    let trimmed = s.trim();
    if ctx.in_metadata {
        if trimmed == ".end_amdgpu_metadata" {
            ctx.in_metadata = false;
            return directive(trimmed, "", ctx);
        }
        return LineKind::Metadata;
    }
    if ctx.in_block_comment {
        if s.contains("*/") {
            ctx.in_block_comment = false;
        }
        return LineKind::Comment;
    }
    let (code, comment) = split_comment(s, ctx);
    let code = resolve_inline_comments(code);
    let code = code.trim();
    if code.is_empty() {
        return if comment.is_some() {
            LineKind::Comment
        } else {
            LineKind::Blank
        };
    }
    if let Some((label, rest)) = split_label(code) {
        let rest = rest.trim();
        if rest.is_empty() {
            return LineKind::Label(label.to_string());
        }
        return LineKind::LabeledLine {
            label: label.to_string(),
            rest: Box::new(code_kind(rest, comment, ctx)),
        };
    }
    code_kind(code, comment, ctx)
}

/// The comment that marks a raw instruction line (see [`LineKind::Raw`]).
pub const RAW_MARKER: &str = "; raw: ";

fn code_kind(code: &str, comment: Option<&str>, ctx: &mut Ctx) -> LineKind {
    if let Some(text) = comment.and_then(|c| c.strip_prefix(RAW_MARKER)) {
        if (code.starts_with(".long") || code.starts_with(".byte"))
            && text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            return LineKind::Raw(parse_instruction(
                resolve_inline_comments(strip_comment(text)).trim(),
                None,
            ));
        }
    }
    if code.starts_with('.') {
        let (name, args) = match code.find(char::is_whitespace) {
            Some(i) => (&code[..i], code[i..].trim()),
            None => (code, ""),
        };
        return directive(name, args, ctx);
    }
    if code.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return LineKind::Instruction(parse_instruction(code, comment));
    }
    LineKind::Other
}

fn directive(name: &str, args: &str, ctx: &mut Ctx) -> LineKind {
    match name {
        ".set" => {
            let parts = split_top_level(args, |c| c == ',');
            let sym = parts[0].trim().to_string();
            let value = args
                .get(parts[0].len() + 1..)
                .unwrap_or("")
                .trim()
                .to_string();
            return LineKind::Set { name: sym, value };
        }
        ".amdhsa_kernel" => ctx.in_descriptor = true,
        ".end_amdhsa_kernel" => ctx.in_descriptor = false,
        ".amdgpu_metadata" => ctx.in_metadata = true,
        _ if ctx.in_descriptor && name.starts_with(".amdhsa_") => {
            return LineKind::DescriptorField {
                name: name.to_string(),
                value: args.to_string(),
            }
        }
        _ => {}
    }
    LineKind::Directive {
        name: name.to_string(),
        args: args.to_string(),
    }
}

/// Split `name: rest` if the line starts with a label definition.
fn split_label(code: &str) -> Option<(&str, &str)> {
    let end = if let Some(q) = code.strip_prefix('"') {
        q.find('"').map(|i| i + 2)?
    } else {
        code.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '@')))?
    };
    if end == 0 || !code[end..].starts_with(':') || code[end..].starts_with("::") {
        return None;
    }
    let rest = &code[end + 1..];
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    Some((&code[..end], rest))
}

/// The code of one line without its comment (`;`, `//`, `/*`, or a leading
/// `#`; markers inside double quotes do not count). The one comment splitter
/// of the crate: the line classifier, rules, and checks all use it.
pub fn strip_comment(s: &str) -> &str {
    split_comment(s, &mut Ctx::default()).0
}

/// Split code from a trailing comment (`;`, `//`, `/*`, or a leading `#`),
/// ignoring markers inside double quotes.
fn split_comment<'a>(s: &'a str, ctx: &mut Ctx) -> (&'a str, Option<&'a str>) {
    if s.trim_start().starts_with('#') {
        return ("", Some(s.trim_start()));
    }
    let bytes = s.as_bytes();
    let mut quote = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => quote = !quote,
            b'\\' if quote => i += 1,
            b';' if !quote => return (&s[..i], Some(&s[i..])),
            b'/' if !quote && bytes.get(i + 1) == Some(&b'/') => return (&s[..i], Some(&s[i..])),
            b'/' if !quote && bytes.get(i + 1) == Some(&b'*') => {
                let Some(close) = s[i + 2..].find("*/").map(|c| i + 2 + c + 2) else {
                    ctx.in_block_comment = true;
                    return (&s[..i], Some(&s[i..]));
                };
                // A block comment closed on the line inside the code (code
                // follows it), or annotating a register (llvm-objdump's
                // gfx1250 `v252 /*v1020*/`), is part of the code: the
                // classifier resolves it ([`resolve_inline_comments`]).
                let after = s[close..].trim_start();
                let inline = !s[..i].trim().is_empty()
                    && ((!after.is_empty()
                        && !after.starts_with(';')
                        && !after.starts_with("//")
                        && !after.starts_with("/*"))
                        || register_annotation(&s[i..close]).is_some());
                if !inline {
                    return (&s[..i], Some(&s[i..]));
                }
                i = close;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (s, None)
}

/// The register a block comment names, if it is only a register
/// (`/*v1020*/`, `/* v[352:355] */`): llvm-objdump's annotation of the
/// physical register behind an operand of a gfx1250 instruction after
/// `s_set_vgpr_msb`.
fn register_annotation(comment: &str) -> Option<&str> {
    let inner = comment.strip_prefix("/*")?.strip_suffix("*/")?.trim();
    let (file, rest) = inner.split_at_checked(1)?;
    if !matches!(file, "v" | "s" | "a") {
        return None;
    }
    let ok = match rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        Some(range) => {
            let (a, b) = range.split_once(':').unwrap_or((range, "0"));
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        }
        None => !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_digit()),
    };
    ok.then_some(inner)
}

/// The code of a line as the analyses read it: every block comment closed
/// inside it removed, and a register followed by llvm-objdump's physical
/// register annotation (`v252 /*v1020*/`, `v[96:99] /*v[352:355]*/`)
/// replaced by the annotated register. On gfx1250 the written operand is
/// the low 8 bits of the VGPR number and `s_set_vgpr_msb` supplies the
/// rest; dependencies, hazards and register budgets are between physical
/// registers, so the physical one is the operand. Text without `/*` is
/// returned as it is.
pub fn resolve_inline_comments(code: &str) -> std::borrow::Cow<'_, str> {
    each_block_comment(
        code,
        |out, before, reg| match reg {
            Some(reg) => {
                // Replace the register written just before the comment.
                let kept = before.trim_end();
                let start = kept
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '[' | ']' | ':')))
                    .map_or(0, |p| p + 1);
                let written = &kept[start..];
                if register_annotation(&format!("/*{written}*/")).is_some() {
                    out.push_str(&kept[..start]);
                    out.push_str(reg);
                } else {
                    out.push_str(before);
                }
            }
            None => out.push_str(before),
        },
        true,
    )
}

/// `code` without llvm-objdump's register annotations (`v252 /*v1020*/`
/// → `v252`): the registers as written, whose VGPRs gfx1250's MSBs
/// complete. Other block comments stay.
pub fn strip_register_annotations(code: &str) -> std::borrow::Cow<'_, str> {
    each_block_comment(
        code,
        |out, before, reg| match reg {
            Some(_) => out.push_str(before.trim_end_matches(' ')),
            None => out.push_str(before),
        },
        false,
    )
}

/// `code` rebuilt around each block comment closed in it: `emit(out, text
/// before it, the register it annotates if it is a register annotation)`
/// writes the text before the comment; a comment that is no annotation is
/// dropped (`drop_others`) or kept. Text without `/*` is returned as it is.
fn each_block_comment(
    code: &str,
    mut emit: impl FnMut(&mut String, &str, Option<&str>),
    drop_others: bool,
) -> std::borrow::Cow<'_, str> {
    if !code.contains("/*") {
        return std::borrow::Cow::Borrowed(code);
    }
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(open) = rest.find("/*") {
        let Some(close) = rest[open + 2..].find("*/").map(|c| open + 2 + c + 2) else {
            break;
        };
        let reg = register_annotation(&rest[open..close]);
        if reg.is_none() && !drop_others {
            out.push_str(&rest[..close]);
            rest = &rest[close..];
            continue;
        }
        emit(&mut out, &rest[..open], reg);
        rest = &rest[close..];
        // Keep tokens apart (`a/*x*/b` → `a b`), add no space before `,`.
        if drop_others
            && !out.ends_with(char::is_whitespace)
            && !rest.starts_with(|c: char| c.is_whitespace() || c == ',')
        {
            out.push(' ');
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Byte offset of the `"` that opens a string never closed on this line of
/// code (comments and `#` lines excluded, `\\"` escapes honoured), if any.
/// clang-22's AMDGPU assembler never returns on such a line, so the check
/// stage reports it before any assembler run.
pub fn unterminated_quote(text: &str) -> Option<usize> {
    let s = text.strip_suffix('\r').unwrap_or(text);
    if s.trim_start().starts_with('#') {
        return None;
    }
    let bytes = s.as_bytes();
    let mut open = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => open = if open.is_some() { None } else { Some(i) },
            b'\\' if open.is_some() => i += 1,
            b';' if open.is_none() => return None,
            b'/' if open.is_none() && matches!(bytes.get(i + 1), Some(b'/' | b'*')) => return None,
            _ => {}
        }
        i += 1;
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_unterminated_quotes() {
        assert_eq!(
            unterminated_quote("s_and_saveexec_b64 s[2:3], vcc\""),
            Some(30)
        );
        assert_eq!(
            unterminated_quote("  .amdgcn_target \"amdgcn-amd-amdhsa--gfx942"),
            Some(17)
        );
        assert_eq!(unterminated_quote(".amdgcn_target \"a\\\"b\"\r"), None);
        assert_eq!(unterminated_quote("\"a;b\": s_nop 0 ; \"x"), None);
        assert_eq!(unterminated_quote("s_nop 0 // \"x"), None);
        assert_eq!(unterminated_quote("# \"x"), None);
        assert_eq!(unterminated_quote("s_nop 0"), None);
    }

    fn kind(s: &str) -> LineKind {
        classify(s, &mut Ctx::default())
    }

    #[test]
    fn classifies_lines() {
        assert_eq!(kind(""), LineKind::Blank);
        assert_eq!(kind("  \t\r"), LineKind::Blank);
        assert_eq!(kind("; %bb.0:"), LineKind::Comment);
        assert_eq!(kind("  // x"), LineKind::Comment);
        assert_eq!(kind("/* x */"), LineKind::Comment);
        // gfx1250 listings annotate physical registers inside the operands
        // (llvm-objdump-22): the operands go on past the comment, and the
        // annotated (physical) register is the operand.
        let LineKind::Instruction(i) = kind("\tv_mov_b32 v252 /*v1020*/, v1 ; c") else {
            panic!("not an instruction");
        };
        assert_eq!(i.operands.len(), 2);
        assert_eq!(i.operands[0].to_string(), "v1020");
        assert_eq!(i.operands[1].to_string(), "v1");
        assert_eq!(i.comment.as_deref(), Some("; c"));
        let LineKind::Instruction(i) =
            kind("\tds_load_b128 v[96:99] /*v[352:355]*/, v158 /*v414*/ offset:128")
        else {
            panic!("not an instruction");
        };
        assert_eq!(i.operands[0].to_string(), "v[352:355]");
        assert_eq!(i.operands[1].to_string(), "v414");
        assert_eq!(i.modifier_value("offset"), Some("128"));
        // A last operand's annotation; a non-register inline comment is
        // skipped; a trailing one stays the comment.
        let LineKind::Instruction(i) = kind("\tv_add_f32 v1, v2, v300 /*v812*/") else {
            panic!("not an instruction");
        };
        assert_eq!(i.operands[2].to_string(), "v812");
        assert!(i.comment.is_none());
        let LineKind::Instruction(i) = kind("\tv_add_f32 v1, /* x */ v2, v3 /* note */") else {
            panic!("not an instruction");
        };
        assert_eq!(i.operands.len(), 3);
        assert_eq!(i.operands[1].to_string(), "v2");
        assert_eq!(i.comment.as_deref(), Some("/* note */"));
        let LineKind::Raw(i) = kind("\t.long\t0xcc1f4480, 0x9e90cd80 ; raw: v_pk_fma_f32 v[128:129] /*v[640:641]*/, v[128:129] /*v[640:641]*/, s[102:103], v[164:165] /*v[676:677]*/ neg_lo:[0,0,1]") else {
            panic!("not raw");
        };
        assert_eq!(i.operands.len(), 4);
        assert_eq!(i.operands[3].to_string(), "v[676:677]");
        assert_eq!(
            resolve_inline_comments("v_mov_b32 v252 /*v1020*/, v1"),
            "v_mov_b32 v1020, v1"
        );
        assert_eq!(
            kind("saxpy:                 ; @saxpy"),
            LineKind::Label("saxpy".into())
        );
        assert_eq!(kind(".LBB0_2:"), LineKind::Label(".LBB0_2".into()));
        assert_eq!(
            kind("\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\""),
            LineKind::Directive {
                name: ".amdgcn_target".into(),
                args: "\"amdgcn-amd-amdhsa--gfx942\"".into()
            }
        );
        assert_eq!(
            kind("\t.section\t\".note.GNU-stack\",\"\",@progbits"),
            LineKind::Directive {
                name: ".section".into(),
                args: "\".note.GNU-stack\",\"\",@progbits".into()
            }
        );
        assert_eq!(
            kind("\t.set .Lk.num_vgpr, max(3, 4)"),
            LineKind::Set {
                name: ".Lk.num_vgpr".into(),
                value: "max(3, 4)".into()
            }
        );
        assert!(
            matches!(kind("\ts_nop 0 ; hi"), LineKind::Instruction(i) if i.comment.as_deref() == Some("; hi"))
        );
        assert!(matches!(kind("x: s_nop 0"), LineKind::LabeledLine { label, .. } if label == "x"));
        assert!(matches!(
            kind("\tv_dual_mov_b32 v4, 0 :: v_dual_and_b32 v1, 0x3ff, v0"),
            LineKind::Instruction(_)
        ));
        assert_eq!(kind("\t1 + 2"), LineKind::Other);
        assert!(matches!(
            kind("\t.long\t0xd3ac6000, 0x0003118c ; raw: v_mfma_x a[0:3], v[72:75]"),
            LineKind::Raw(i) if i.mnemonic == "v_mfma_x" && i.registers().count() == 2
        ));
        // Not decoded: data the checks cannot follow.
        assert!(matches!(
            kind("\t.long\t0xd0310000 ; raw: (not decoded)"),
            LineKind::Directive { .. }
        ));
    }

    #[test]
    fn tracks_descriptor_metadata_and_block_comments() {
        let mut c = Ctx::default();
        assert!(matches!(
            classify("\t.amdhsa_kernel k", &mut c),
            LineKind::Directive { .. }
        ));
        assert!(matches!(
            classify("\t\t.amdhsa_next_free_vgpr 6", &mut c),
            LineKind::DescriptorField { name, value } if name == ".amdhsa_next_free_vgpr" && value == "6"
        ));
        assert!(matches!(
            classify("\t.end_amdhsa_kernel", &mut c),
            LineKind::Directive { .. }
        ));
        assert!(matches!(
            classify("\t.amdhsa_code_object_version 5", &mut c),
            LineKind::Directive { .. }
        ));
        classify("\t.amdgpu_metadata", &mut c);
        assert_eq!(classify("amdhsa.kernels: ; x", &mut c), LineKind::Metadata);
        assert!(matches!(
            classify("\t.end_amdgpu_metadata", &mut c),
            LineKind::Directive { .. }
        ));
        assert_eq!(classify("/* a", &mut c), LineKind::Comment);
        assert_eq!(classify("s_nop 0", &mut c), LineKind::Comment);
        assert_eq!(classify("b */", &mut c), LineKind::Comment);
        assert!(matches!(
            classify("s_nop 0", &mut c),
            LineKind::Instruction(_)
        ));
    }
}
