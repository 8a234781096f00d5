//! parse stage: a lossless line model of a dumped `.s` / `.rocmasm` file.
//!
//! [`parse`] never fails: every line keeps its exact text ([`Line::text`]) and
//! gets a [`LineKind`] derived from it, so [`AsmFile::print`] reproduces the
//! input byte-for-byte (CRLF, missing final newline and empty input included).
//! Structure above lines is computed on demand from the line kinds:
//! [`AsmFile::kernels`] (code range, basic blocks, `.amdhsa_kernel`
//! descriptor, `.set` symbols, metadata entry), [`AsmFile::target_directive`],
//! [`AsmFile::code_object_version`], [`AsmFile::metadata`].
//!
//! All line numbers in this module are **0-based indices into
//! [`AsmFile::lines`]** (add 1 for editor line numbers). With origins per
//! line and the edit API, the file is a [`crate::base::document::Document`]. Everything is linear in the input size.

pub(crate) mod edit;
mod kernel;
mod line;
mod metadata;
mod operand;
mod small;

pub use kernel::{Block, Descriptor, Field, Kernel, SetLine};
pub use line::{
    resolve_inline_comments, strip_comment, strip_register_annotations, unterminated_quote, Line,
    LineKind, RAW_MARKER,
};
pub use metadata::{unquote, KernelMetadata, MetaField, Metadata};
pub use operand::{parse_int, parse_operand, Half, Instruction, Operand, RegFile, RegisterRef};
pub use small::Str;

/// Builds a file from lines already classified (kept from another file)
/// and new texts: a kept line is parsed again only when the lines before it
/// changed the classifier's state (an opened metadata block or block
/// comment), so editing a file costs the edited lines, not the file. Every
/// file is built by it, from new texts only when parsed from scratch.
pub(crate) struct Rebuilder {
    ctx: line::Ctx,
    lines: Vec<Line>,
}

impl Rebuilder {
    /// An empty file with room for `n` lines.
    pub(crate) fn with_capacity(n: usize) -> Rebuilder {
        Rebuilder {
            ctx: line::Ctx::default(),
            lines: Vec::with_capacity(n),
        }
    }

    /// Append a line of another parsed file.
    pub(crate) fn keep(&mut self, line: Line) {
        self.lines.push(line.reclassified(&mut self.ctx));
    }

    /// Append new text (without `\n`).
    pub(crate) fn push(&mut self, text: &str) {
        self.lines.push(Line::classified(text, &mut self.ctx));
    }

    /// The file.
    pub(crate) fn finish(self, trailing_newline: bool) -> AsmFile {
        AsmFile {
            lines: self.lines,
            trailing_newline,
        }
    }
}

/// A parsed assembly file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AsmFile {
    /// The lines, split at `\n` (a `\r` before it stays in [`Line::text`]).
    pub lines: Vec<Line>,
    /// Whether the input ended with `\n`.
    pub trailing_newline: bool,
}

/// Parse `text`. Infallible and lossless: `parse(x).print() == x`.
pub fn parse(text: &str) -> AsmFile {
    let trailing_newline = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return AsmFile::default();
    }
    // Sized up front: a million-line file would otherwise grow its line
    // vector by doubling, copying it and leaving up to half of it unused.
    // (`split().count()` finds the newlines with the standard library's
    // memchr, fast even in unoptimized builds.)
    let mut file = Rebuilder::with_capacity(body.split('\n').count());
    for t in body.split('\n') {
        file.push(t);
    }
    file.finish(trailing_newline)
}

impl AsmFile {
    /// Build from line texts (without `\n`).
    pub fn from_lines<S: AsRef<str>>(
        lines: impl IntoIterator<Item = S>,
        trailing_newline: bool,
    ) -> AsmFile {
        let lines = lines.into_iter();
        let mut file = Rebuilder::with_capacity(lines.size_hint().0);
        for t in lines {
            file.push(t.as_ref());
        }
        file.finish(trailing_newline)
    }

    /// The text, byte-for-byte as parsed.
    pub fn print(&self) -> String {
        let len: usize = self.lines.iter().map(|l| l.text().len() + 1).sum();
        let mut out = String::with_capacity(len);
        for (i, l) in self.lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(l.text());
        }
        if self.trailing_newline && !self.lines.is_empty() {
            out.push('\n');
        }
        out
    }

    /// All kernels: one per `.amdhsa_kernel` block, in file order, then any
    /// metadata entry without a descriptor. Computed on each call (linear).
    pub fn kernels(&self) -> Vec<Kernel> {
        kernel::kernels(&self.lines)
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<Kernel> {
        self.kernels().into_iter().find(|k| k.name == name)
    }

    /// First `.amdgcn_target "…"`: line index and unquoted value.
    pub fn target_directive(&self) -> Option<(usize, String)> {
        self.find_directive(".amdgcn_target")
            .map(|(i, a)| (i, a.trim().trim_matches('"').to_string()))
    }

    /// `.amdhsa_code_object_version N`: line index and N.
    pub fn code_object_version(&self) -> Option<(usize, u32)> {
        self.find_directive(".amdhsa_code_object_version")
            .and_then(|(i, a)| a.trim().parse().ok().map(|v| (i, v)))
    }

    /// The `.amdgpu_metadata` block (target, version, kernel entries).
    pub fn metadata(&self) -> Option<Metadata> {
        metadata::parse_metadata(&self.lines)
    }

    /// `amdhsa.target:` line index and unquoted value.
    pub fn metadata_target(&self) -> Option<(usize, String)> {
        self.metadata().and_then(|m| m.target)
    }

    /// `amdhsa.version:` line index and numbers (e.g. `[1, 2]`).
    pub fn metadata_version(&self) -> Option<(usize, Vec<u32>)> {
        self.metadata().and_then(|m| m.version)
    }

    fn find_directive(&self, want: &str) -> Option<(usize, &str)> {
        self.lines
            .iter()
            .enumerate()
            .find_map(|(i, l)| match l.directive() {
                Some((n, a)) if n == want => Some((i, a)),
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_edge_cases() {
        for t in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb\r\n",
            "a\r\nb",
            "\n\n",
            " s_nop 0 ;x\n\t.text",
        ] {
            assert_eq!(parse(t).print(), t, "{t:?}");
        }
        assert!(parse("").lines.is_empty());
    }

    const TWO: &str = "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"
\t.amdhsa_code_object_version 5
\t.text
\t.globl\tk1
\t.p2align\t8
\t.type\tk1,@function
k1:                                     ; @k1
\ts_load_dword s3, s[0:1], 0x18
\ts_cbranch_execz .LBB0_2
; %bb.1:
\tv_mov_b32 v[4:5], v[0:1]
.LBB0_2:
\ts_endpgm
\t.section\t.rodata,\"a\",@progbits
\t.amdhsa_kernel k1
\t\t.amdhsa_next_free_vgpr 6
\t\t.amdhsa_accum_offset 8
\t.end_amdhsa_kernel
\t.text
.Lfunc_end0:
\t.size\tk1, .Lfunc_end0-k1
\t.set k1.num_vgpr, 6
\t.set .Lk1.numbered_sgpr, 8
\t.globl\tk2
\t.type\tk2,@function
k2:
\ts_endpgm
.Lfunc_end1:
\t.size\tk2, .Lfunc_end1-k2
\t.section\t.rodata,\"a\",@progbits
\t.amdhsa_kernel k2
\t\t.amdhsa_next_free_vgpr 1
\t.end_amdhsa_kernel
\t.set k2.num_vgpr, 1
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .offset:         0
        .size:           4
    .name:           k1
    .symbol:         k1.kd
    .vgpr_count:     6
    .wavefront_size: 64
  - .name:           k2
    .reqd_workgroup_size:
      - 256
    .symbol:         k2.kd
    .vgpr_count:     1
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...

\t.end_amdgpu_metadata
";

    #[test]
    fn two_kernels() {
        let f = parse(TWO);
        assert_eq!(f.print(), TWO);
        assert_eq!(
            f.target_directive(),
            Some((0, "amdgcn-amd-amdhsa--gfx942".into()))
        );
        assert_eq!(f.code_object_version(), Some((1, 5)));
        let md = f.metadata().unwrap();
        assert_eq!(md.target, Some((50, "amdgcn-amd-amdhsa--gfx942".into())));
        assert_eq!(md.version, Some((51, vec![1, 2])));
        let ks = f.kernels();
        assert_eq!(ks.len(), 2);
        let k1 = &ks[0];
        assert_eq!(k1.name, "k1");
        assert_eq!(k1.symbol_line, Some(6));
        assert_eq!(k1.end_line, Some(19));
        assert_eq!(k1.code, 6..19);
        let blocks: Vec<(&str, std::ops::Range<usize>)> = k1
            .blocks
            .iter()
            .map(|b| (b.label.as_str(), b.lines.clone()))
            .collect();
        assert_eq!(blocks, [("k1", 6..11), (".LBB0_2", 11..13)]);
        let d = k1.descriptor.as_ref().unwrap();
        assert_eq!((d.start, d.end), (14, 17));
        assert_eq!(d.get("next_free_vgpr").unwrap().value, "6");
        assert_eq!(d.get(".amdhsa_accum_offset").unwrap().line, 16);
        assert_eq!(k1.set("num_vgpr").unwrap().line, 21);
        assert_eq!(
            k1.set("numbered_sgpr").unwrap().symbol,
            ".Lk1.numbered_sgpr"
        );
        let m = k1.metadata.as_ref().unwrap();
        assert_eq!(m.name, Some((41, "k1".into())));
        assert_eq!(m.vgpr_count, Some((43, 6)));
        assert_eq!(m.agpr_count, Some((37, 0)));
        assert_eq!(m.wavefront_size, Some((44, 64)));
        assert_eq!((m.start, m.end), (37, 45));
        assert_eq!(m.fields.len(), 6);
        let k2 = &ks[1];
        assert_eq!(k2.code, 25..27);
        assert_eq!(k2.blocks.len(), 1);
        assert_eq!(k2.sets.len(), 1);
        let m2 = k2.metadata.as_ref().unwrap();
        assert_eq!(m2.symbol, Some((48, "k2.kd".into())));
        assert_eq!(m2.vgpr_count, Some((49, 1)));
        assert_eq!(m2.end, 50);
        // Registers of the block.
        let regs: Vec<String> = f.lines[10]
            .instruction()
            .unwrap()
            .registers()
            .map(|r| r.to_string())
            .collect();
        assert_eq!(regs, ["v[4:5]", "v[0:1]"]);
    }

    /// Lifted code (and hand-written asm) sizes kernels with a number, not
    /// an end label: each kernel then ends where the next kernel begins,
    /// not at the end of the file, so that a rule or check scoped to one
    /// kernel sees only its lines.
    #[test]
    fn kernels_without_end_labels_end_at_the_next_kernel() {
        let text = "\t.text\n\t.globl a\na:\n\ts_nop 0\n.La_1:\n\ts_endpgm\n\t.size a, 8\n\
                    \t.globl b\nb:\n\ts_nop 1\n\ts_endpgm\n\t.size b, 8\n\
                    \t.rodata\n\t.amdhsa_kernel a\n\t\t.amdhsa_next_free_vgpr 1\n\t.end_amdhsa_kernel\n\
                    \t.amdhsa_kernel b\n\t\t.amdhsa_next_free_vgpr 1\n\t.end_amdhsa_kernel\n";
        let ks = parse(text).kernels();
        assert_eq!(ks.len(), 2);
        assert_eq!((ks[0].code.clone(), ks[0].end_line), (2..8, None));
        let blocks: Vec<_> = ks[0].blocks.iter().map(|b| b.lines.clone()).collect();
        assert_eq!(blocks, [2..4, 4..8]);
        // The last kernel runs to the end of the file (its descriptor
        // block is in .rodata: no basic block).
        assert_eq!(ks[1].code, 8..text.lines().count());
        assert_eq!(ks[1].blocks.len(), 1);
        assert_eq!(ks[1].blocks[0].lines, 8..12);
    }

    #[test]
    fn large_input_round_trips() {
        // Linearity is measured without clocks by tests/it/scale.rs (a
        // counting allocator); a time bound here failed on a loaded machine.
        let mut s = String::from("\t.text\nk:\n");
        for i in 0..100_000 {
            s.push_str(&format!("\tv_add_f32_e32 v{}, v1, v2 ; c\n", i % 200));
            if i % 50 == 0 {
                s.push_str(&format!(".LBB0_{i}:\n"));
            }
        }
        s.push_str(
            ".Lfunc_end0:\n\t.size k, .Lfunc_end0-k\n\t.amdhsa_kernel k\n\t.end_amdhsa_kernel\n",
        );
        let f = parse(&s);
        let ks = f.kernels();
        assert_eq!(f.print(), s);
        assert_eq!(ks[0].blocks.len(), 2001);
    }
}
