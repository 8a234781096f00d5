//! gfx1250: the lifted text's VGPR annotations by control flow.
//!
//! llvm-objdump-22 prints the VGPR an operand names after it
//! (`v81 /*v849*/`), but under the MSBs of the last `s_set_vgpr_msb` *in
//! the listing*, reset to 0 after each branch, `s_endpgm` and `.long`
//! word, so many of its annotations name registers the wave does not use
//! (and many operands above v255 go unannotated). A lift rewrites them to
//! the MSBs control flow gives ([`gcn_raw::msb::flow`] from each kernel's
//! entry, over the words themselves; the instruction under them is
//! [`crate::stage::check::msb::resolve`], the one resolution of gcn-patch):
//! an operand whose high bits are not 0 is annotated with its register, and
//! no other. Where the states reaching an instruction differ in a slot it
//! uses, or none reaches it, or its format has no slot table, the listing's
//! text stays. Annotations are comments: the bytes the asm rebuilds to do
//! not change.

use gcn_raw::msb::{flow, Insn, States};

use super::disasm;
use crate::base::parse::{parse, strip_register_annotations, Instruction, Operand, RegFile};
use crate::stage::check::msb::resolve;

/// A listed instruction seen by [`gcn_raw::msb`].
struct Listed<'a>(&'a disasm::Insn);

impl Insn for Listed<'_> {
    fn mnemonic(&self) -> &str {
        match self.0.text.split_whitespace().next() {
            Some(m) => m,
            None => ".long",
        }
    }
    fn addr(&self) -> u64 {
        self.0.address
    }
    fn first_word(&self) -> Option<u32> {
        let b = self.0.bytes.get(..4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Rewrite the VGPR annotations of `texts` (the text of each of `insns`)
/// to the MSBs control flow gives from the kernel entries `entries`
/// (addresses); nothing when no instruction sets the MSBs.
pub(crate) fn annotate(insns: &[disasm::Insn], texts: &mut [String], entries: &[u64]) {
    #[cfg(test)]
    if crate::stage::check::msb::LISTED.with(|c| c.get()) {
        return;
    }
    let listed: Vec<Listed> = insns.iter().map(Listed).collect();
    if !listed.iter().any(|i| i.mnemonic() == "s_set_vgpr_msb") {
        return;
    }
    let index: std::collections::HashMap<u64, usize> = insns
        .iter()
        .enumerate()
        .map(|(i, x)| (x.address, i))
        .collect();
    let mut reach = vec![States::default(); insns.len()];
    for &e in entries {
        let (r, _) = flow(&listed, |a| index.get(&a).copied(), e);
        for (all, one) in reach.iter_mut().zip(r) {
            for s in one.iter() {
                all.insert(s);
            }
        }
    }
    for (text, states) in texts.iter_mut().zip(&reach) {
        if states.is_empty() || text.is_empty() {
            continue;
        }
        let written = strip_register_annotations(text).into_owned();
        let file = parse(&format!("\t{written}"));
        let Some(parsed) = file.lines.first().and_then(|l| l.instruction()) else {
            continue;
        };
        let Some(resolved) = resolve(parsed, states) else {
            continue;
        };
        if let Some(t) = annotated(&written, parsed, &resolved) {
            *text = t;
        }
    }
}

/// `text` (without annotations; `written` its parse) with each VGPR
/// operand whose register in `resolved` is above v255 annotated with it;
/// `None` where an operand cannot be found in the text.
fn annotated(text: &str, written: &Instruction, resolved: &Instruction) -> Option<String> {
    let halves: Vec<(usize, usize)> = match text.find("::") {
        Some(p) => vec![(0, p), (p + 2, text.len())],
        None => vec![(0, text.len())],
    };
    let pairs = [
        Some((written, resolved)),
        written.dual.as_deref().zip(resolved.dual.as_deref()),
    ];
    let mut inserts: Vec<(usize, String)> = vec![];
    for (&(start, end), pair) in halves.iter().zip(pairs) {
        let (w, r) = pair?;
        let half = &text[start..end];
        let lead = half.len() - half.trim_start().len();
        let body = half.trim_start();
        let Some(sp) = body.find(char::is_whitespace) else {
            continue;
        };
        let ops_at = start + lead + sp;
        let rest = &text[ops_at..end];
        // Operands at top-level commas; the last one ends at the first
        // modifier.
        let mut chunks = vec![];
        let (mut depth, mut from) = (0i32, 0usize);
        for (i, c) in rest.char_indices() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ',' if depth <= 0 => {
                    chunks.push((from, i));
                    from = i + 1;
                }
                _ => {}
            }
        }
        let tail = &rest[from..];
        let t = tail.trim_start();
        let skip = tail.len() - t.len();
        let mut d = 0i32;
        let last_end = t
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' | '[' => d += 1,
                    ')' | ']' => d -= 1,
                    _ => {}
                }
                d <= 0 && c.is_whitespace()
            })
            .map_or(t.len(), |(i, _)| i);
        chunks.push((from + skip, from + skip + last_end));
        for (k, (wo, ro)) in w.operands.iter().zip(&r.operands).enumerate() {
            let (Some(wr), Some(rr)) = (wo.register(), register(ro)) else {
                continue;
            };
            if rr.file != RegFile::Vgpr || rr.first < 256 {
                continue;
            }
            let &(a, b) = chunks.get(k)?;
            let chunk = &rest[a..b];
            let name = wr.to_string();
            let at = find_token(chunk, &name)?;
            inserts.push((ops_at + a + at + name.len(), format!(" /*{rr}*/")));
        }
    }
    if inserts.is_empty() {
        return Some(text.to_string());
    }
    let mut out = String::with_capacity(text.len() + 16 * inserts.len());
    let mut at = 0;
    for (pos, s) in inserts {
        out.push_str(&text[at..pos]);
        out.push_str(&s);
        at = pos;
    }
    out.push_str(&text[at..]);
    Some(out)
}

fn register(o: &Operand) -> Option<&crate::base::parse::RegisterRef> {
    o.register()
}

/// Where `name` stands in `s` as a whole token.
fn find_token(s: &str, name: &str) -> Option<usize> {
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '[' | ']' | ':' | '.');
    s.match_indices(name).map(|(i, _)| i).find(|&i| {
        !s[..i].chars().next_back().is_some_and(word)
            && !s[i + name.len()..].chars().next().is_some_and(word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(text: &str) -> Instruction {
        parse(&format!("\t{text}")).lines[0]
            .instruction()
            .expect("instruction")
            .clone()
    }

    #[test]
    fn annotates_the_operands_the_msbs_move() {
        let w = inst("ds_load_b32 v104, v81 offset:512");
        let r = crate::stage::check::msb::remap(&w, 0x0b);
        assert_eq!(
            annotated("ds_load_b32 v104, v81 offset:512", &w, &r).as_deref(),
            Some("ds_load_b32 v104, v81 /*v849*/ offset:512")
        );
        let text = "v_dual_mov_b32 v1, v2 :: v_dual_add_f32 v3, v4, v[5:5]";
        let w = inst("v_dual_mov_b32 v1, v2 :: v_dual_add_f32 v3, v4, v5");
        let r = crate::stage::check::msb::remap(&w, 0x41);
        assert_eq!(
            annotated(&text.replace("v[5:5]", "v5"), &w, &r).as_deref(),
            Some("v_dual_mov_b32 v1 /*v257*/, v2 /*v258*/ :: v_dual_add_f32 v3 /*v259*/, v4 /*v260*/, v5")
        );
    }
}
