//! Applying structured rewrite rules (their schema, and how `kernels.toml`
//! writes them: [`crate::config::rules`]) to a document.
//!
//! `set-waitcnt` checks the value against the counter's field width of every
//! generation involved (the dump's `.amdgcn_target` and the source's targets):
//! gfx9 vmcnt ≤ 63, expcnt ≤ 7, lgkmcnt ≤ 15; gfx10/11 vmcnt, lgkmcnt,
//! vscnt ≤ 63; gfx12 loadcnt, storecnt, samplecnt, dscnt ≤ 63, kmcnt ≤ 31,
//! bvhcnt, expcnt ≤ 7 (LLVM `AMDGPUBaseInfo.cpp`: `getVmcntBitWidthLo/Hi`,
//! `getLgkmcntBitWidth`, `getKmcntBitWidth`, …). On gfx12 the counter name is
//! mapped onto the matched `s_wait_*` instruction (`vmcnt` → loadcnt,
//! `lgkmcnt` → dscnt or kmcnt, `vscnt` → storecnt) and the output line's origin
//! records the choice; on gfx9–11 `loadcnt`/`dscnt`/`kmcnt` map back to
//! `vmcnt`/`lgkmcnt` of `s_waitcnt`. A counter missing from an `s_waitcnt` is
//! added. Encoded immediates (`s_waitcnt 0`) and combined gfx12 waits
//! (`s_wait_loadcnt_dscnt`) are refused.

use std::ops::Range;
use std::path::Path;

use gcn_embed::{Generation, TargetId};
use regex::Regex;

use crate::base::diag::{Code, Diagnostic};
use crate::base::document::{Document, Edits};
use crate::base::isa::{major, waitcnt_limits, Counter, WaitInstruction};
use crate::base::parse::{strip_comment, Line, LineKind};
use crate::base::provenance::{Origin, RuleOrigin};
use crate::config::rules::{Expect, Occurrence, Pattern, Rule, RuleKind};

impl Pattern {
    fn class(&self) -> Class {
        if self.text.ends_with(':') {
            Class::Label
        } else if self.text.starts_with('.') {
            Class::Directive
        } else {
            Class::Instruction
        }
    }

    /// Whether line `l` (classified) matches.
    #[cfg(test)]
    fn matches(&self, l: &LineInfo) -> bool {
        self.matches_normalized(l, &self.normalized())
    }

    /// The literal pattern as lines are compared with it: without a label's
    /// `:`, whitespace collapsed (see [`normalize`]).
    fn normalized(&self) -> String {
        if self.class() == Class::Label {
            normalize(self.text.trim_end_matches(':'))
        } else {
            normalize(&self.text)
        }
    }

    /// [`Pattern::matches`] with the pattern already [`normalized`]
    /// (once per search, not once per line).
    ///
    /// [`normalized`]: Pattern::normalized
    fn matches_normalized(&self, l: &LineInfo, want: &str) -> bool {
        if self.class() == Class::Label {
            let Some(label) = l.label else {
                return false;
            };
            return match &self.regex {
                Some(re) => re.is_match(label),
                None => label == want,
            };
        }
        if l.class != self.class() {
            return false;
        }
        match &self.regex {
            Some(re) => re.is_match(&l.norm),
            None => {
                *l.norm == *want
                    || (self.class() == Class::Instruction
                        && !want.contains(' ')
                        && l.mnemonic == Some(want))
            }
        }
    }
}

/// What a line is to a rule pattern, from its [`LineKind`] (see
/// [`line_info`]): a pattern ending in `:` matches labels, one starting with
/// `.` directives, anything else instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// [`LineKind::Instruction`] (also after a label).
    Instruction,
    /// [`LineKind::Label`].
    Label,
    /// [`LineKind::Directive`], [`LineKind::DescriptorField`], [`LineKind::Set`].
    Directive,
    /// [`LineKind::Metadata`]: YAML inside `.amdgpu_metadata`, only for `set`.
    Metadata,
    /// Blank lines, comments (`;`, `//`, `#`, `/* */`), anything else.
    Other,
}

/// One line as rules see it: the class of its code, the normalized code
/// and the label it defines.
#[derive(Debug, Clone)]
///
/// One per line of the document while a rule runs: the label and mnemonic
/// are borrowed from the parsed line, and the info is dropped before the
/// rule's edits are applied (a large file's peak memory).
struct LineInfo<'a> {
    class: Class,
    /// Normalized code (no label, no comment); empty for labels, blanks and
    /// comments.
    norm: Box<str>,
    /// The label the line defines (`x:` or `x: s_nop 0`).
    label: Option<&'a str>,
    /// The instruction's mnemonic, from `parse`.
    mnemonic: Option<&'a str>,
}

/// Collapse whitespace, drop comments, one space after commas.
fn normalize(s: &str) -> String {
    let code = strip_comment(s);
    let mut out = String::with_capacity(code.len());
    for (i, part) in code.split(',').enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let mut first = true;
        for w in part.split_whitespace() {
            if !first {
                out.push(' ');
            }
            out.push_str(w);
            first = false;
        }
    }
    out.trim().to_string()
}

/// How rules see a parsed line: the class comes from `parse`'s
/// [`LineKind`] (never from the rule engine's own reading of the text), so
/// commented-out code (`/* … */`, `#`) is never matched.
fn line_info(line: &Line) -> LineInfo<'_> {
    let (label, kind) = match line.kind() {
        LineKind::LabeledLine { label, rest } => (Some(label.as_str()), &**rest),
        LineKind::Label(l) => (Some(l.as_str()), line.kind()),
        k => (None, k),
    };
    let class = match kind {
        LineKind::Instruction(_) => Class::Instruction,
        LineKind::Label(_) => Class::Label,
        LineKind::Directive { .. }
        | LineKind::DescriptorField { .. }
        | LineKind::Set { .. }
        | LineKind::Raw(_) => Class::Directive,
        LineKind::Metadata => Class::Metadata,
        LineKind::Blank | LineKind::Comment | LineKind::Other | LineKind::LabeledLine { .. } => {
            Class::Other
        }
    };
    let norm = match (class, label) {
        (Class::Label | Class::Other, _) => String::new(),
        (_, Some(l)) => {
            // The code after `label:`.
            let code = strip_comment(line.text()).trim_start();
            normalize(code.strip_prefix(l).map_or(code, |r| &r[1..]))
        }
        (_, None) => normalize(line.text()),
    }
    .into_boxed_str();
    let mnemonic = match kind {
        LineKind::Instruction(i) => Some(i.mnemonic.as_str()),
        _ => None,
    };
    LineInfo {
        class,
        norm,
        label,
        mnemonic,
    }
}

/// Generation of a target ID in any spelling (`gfx942`, `gfx90a:xnack+`,
/// an `.amdgcn_target` string such as `amdgpu9.42-amd-amdhsa-unknown-gfx942`).
fn generation(name: &str) -> Option<Generation> {
    TargetId::parse(name).ok().map(|t| t.processor.generation)
}

/// Context the rules run in.
pub(crate) struct Ctx<'a> {
    pub manifest: &'a Path,
    pub kernel: &'a str,
    /// Generations of the source's targets.
    pub generations: Vec<Generation>,
}

/// Apply `rules` in order to `t`.
pub(crate) fn apply_rules(t: &mut Document, rules: &[Rule], ctx: &Ctx) -> Result<(), Diagnostic> {
    for r in rules {
        let _doing = crate::base::jobs::doing(
            format!("applying rule #{} ({})", r.index, r.what()),
            Some(r.at.clone()),
        );
        apply_rule(t, r, ctx)?;
    }
    Ok(())
}

fn origin(r: &Rule, ctx: &Ctx, what: String) -> Origin {
    Origin::Rule(std::sync::Arc::new(RuleOrigin {
        manifest: ctx.manifest.to_path_buf(),
        kernel: ctx.kernel.to_string(),
        index: r.index,
        what,
    }))
}

/// Line ranges a rule may touch: the whole file, or (from [`crate::base::parse`])
/// a kernel's code, descriptor, `.set` lines and metadata entry, and/or one
/// basic block (label to next label).
fn scope(t: &Document, r: &Rule) -> Result<Vec<Range<usize>>, Diagnostic> {
    if r.kernel.is_none() && r.block.is_none() {
        return Ok(std::iter::once(0..t.len()).collect());
    }
    let kernels = t.kernels();
    let chosen: Vec<&crate::base::parse::Kernel> = match &r.kernel {
        Some(k) => kernels.iter().filter(|x| &x.name == k).collect(),
        None => kernels.iter().collect(),
    };
    if let (Some(k), true) = (&r.kernel, chosen.is_empty()) {
        let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
        return Err(Diagnostic::error(
            Code::RuleScopeNotFound,
            format!("rule #{}: kernel `{k}` not found in the asm", r.index),
        )
        .at(r.at.clone())
        .with_note(format!("kernels in this file: {}", names.join(", ")))
        .with_help(
            "`kernel` names the asm symbol (as in `.amdhsa_kernel`), not the manifest kernel",
        ));
    }
    if let Some(b) = &r.block {
        let b = b.trim_end_matches(':');
        return match chosen.iter().find_map(|k| k.block(b)) {
            Some(block) => Ok(vec![block.lines.clone()]),
            None => {
                let labels: Vec<&str> = chosen
                    .iter()
                    .flat_map(|k| k.blocks.iter().skip(1).map(|b| b.label.as_str()))
                    .collect();
                Err(Diagnostic::error(
                    Code::RuleScopeNotFound,
                    format!(
                        "rule #{}: block `{b}` not found in {}",
                        r.index,
                        scope_desc(&Rule {
                            block: None,
                            ..r.clone()
                        })
                    ),
                )
                .at(r.at.clone())
                .with_note(format!("basic block labels: {}", labels.join(" ")))
                .with_help("name a label of the asm, e.g. `block = \".LBB0_1\"`"))
            }
        };
    }
    let mut ranges = Vec::new();
    for k in chosen {
        ranges.push(k.code.clone());
        if let Some(d) = &k.descriptor {
            ranges.push(d.start..d.end + 1);
        }
        ranges.extend(k.sets.iter().map(|s| s.line..s.line + 1));
        if let Some(m) = &k.metadata {
            ranges.push(m.start..m.end);
        }
    }
    Ok(ranges)
}

fn find(info: &[LineInfo], ranges: &[Range<usize>], p: &Pattern) -> Vec<usize> {
    let want = p.normalized();
    let mut v: Vec<usize> = ranges
        .iter()
        .flat_map(|r| r.clone())
        .filter(|&i| p.matches_normalized(&info[i], &want))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn scope_desc(r: &Rule) -> String {
    match (&r.kernel, &r.block) {
        (None, None) => "the file".into(),
        (Some(k), None) => format!("kernel `{k}`"),
        (None, Some(b)) => format!("block `{b}`"),
        (Some(k), Some(b)) => format!("block `{b}` of kernel `{k}`"),
    }
}

fn listing(t: &Document, idx: &[usize]) -> String {
    let mut s = String::new();
    for &i in idx.iter().take(20) {
        s.push_str(&format!(
            "\n  line {}: {}  [{}]",
            i + 1,
            t.text(i).trim(),
            origin_of(t, i)
        ));
    }
    if idx.len() > 20 {
        s.push_str(&format!("\n  … and {} more", idx.len() - 20));
    }
    s
}

/// Lines near-matching `p` (same mnemonic / directive name / label prefix), for hints.
fn near(info: &[LineInfo], ranges: &[Range<usize>], p: &Pattern) -> Vec<usize> {
    let head = p
        .text
        .split(|c: char| c.is_whitespace() || c == '(' || c == '\\')
        .next()
        .unwrap_or("");
    let head = head.trim_end_matches(':');
    let want = normalize(&p.text);
    let common = |s: &str| {
        s.chars()
            .zip(want.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    let mut v: Vec<usize> = ranges
        .iter()
        .flat_map(|r| r.clone())
        .filter(|&i| {
            info[i].class == p.class()
                && !head.is_empty()
                && info[i].norm.split(' ').next() == Some(head)
        })
        .collect();
    // Most similar first (longest common prefix), at most 8, shown in file order.
    v.sort_by_key(|&i| (std::cmp::Reverse(common(&info[i].norm)), i));
    v.truncate(8);
    v.sort_unstable();
    v
}

/// Select the matches a rule acts on, checking counts.
#[allow(clippy::too_many_arguments)]
fn select(
    t: &Document,
    info: &[LineInfo],
    ranges: &[Range<usize>],
    p: &Pattern,
    occ: Option<Occurrence>,
    expect: Expect,
    r: &Rule,
    role: &str,
) -> Result<Vec<usize>, Diagnostic> {
    let found = find(info, ranges, p);
    let count_ok = match (expect, occ) {
        (Expect::Any(_), _) => !found.is_empty(),
        (Expect::Exactly(n), None) => found.len() == n,
        (Expect::Exactly(n), Some(_)) => found.len() >= n.max(1),
    };
    let occ_ok = match occ {
        Some(Occurrence::Nth(n)) => n <= found.len(),
        _ => !found.is_empty(),
    };
    if !count_ok || !occ_ok {
        let expected = match (expect, occ) {
            (Expect::Any(_), _) => "at least 1".to_string(),
            (Expect::Exactly(n), None) => format!("exactly {n}"),
            (Expect::Exactly(n), Some(Occurrence::Nth(k))) => format!("at least {}", n.max(k)),
            (Expect::Exactly(n), Some(_)) => format!("at least {}", n.max(1)),
        };
        let mut d = Diagnostic::error(
            Code::RuleMatchCount,
            format!(
                "rule #{} ({}): {role} `{}` matches {} line{} in {}, expected {expected}",
                r.index,
                r.what(),
                p.text,
                found.len(),
                if found.len() == 1 { "" } else { "s" },
                scope_desc(r)
            ),
        )
        .at(r.at.clone());
        if found.is_empty() {
            let n = near(info, ranges, p);
            if n.is_empty() {
                d = d.with_note("no similar line in scope");
            } else {
                d = d.with_note(format!("similar lines in scope:{}", listing(t, &n)));
            }
            d = d.with_help("patterns match the whole instruction with whitespace normalized and comments ignored; check the dump, or use `regex = true`");
        } else {
            d = d.with_note(format!("candidates:{}", listing(t, &found)));
            d = d.with_help(format!(
                "narrow the scope (`block = …`, `kernel = …`), pick one with `{}occurrence = N` / \"last\", or state the count with `expect = {}`",
                if role == "anchor" { "anchor-" } else { "" },
                found.len()
            ));
        }
        return Err(d);
    }
    Ok(pick(found, occ))
}

/// The matches `occ` picks from `found` (whose count the caller checked;
/// nothing, rather than a panic, if it did not).
fn pick(found: Vec<usize>, occ: Option<Occurrence>) -> Vec<usize> {
    match occ {
        Some(Occurrence::Nth(n)) => n
            .checked_sub(1)
            .and_then(|i| found.get(i))
            .copied()
            .into_iter()
            .collect(),
        Some(Occurrence::Last(_)) => found.last().copied().into_iter().collect(),
        None => found,
    }
}

/// Origin of line `i` of `t` (every line has one).
fn origin_of(t: &Document, i: usize) -> Origin {
    t.origin(i)
        .cloned()
        .unwrap_or_else(|| Origin::Generated("patched asm".into()))
}

fn apply_rule(t: &mut Document, r: &Rule, ctx: &Ctx) -> Result<(), Diagnostic> {
    let info: Vec<LineInfo> = t.lines().iter().map(line_info).collect();
    let ranges = scope(t, r)?;
    let role = if matches!(r.kind, RuleKind::Insert { .. }) {
        "anchor"
    } else {
        "pattern"
    };
    let pat = match &r.kind {
        RuleKind::Set { .. } => None,
        _ => Some(&r.pattern),
    };
    let hits = match pat {
        Some(p) => select(t, &info, &ranges, p, r.occurrence, r.expect, r, role)?,
        None => {
            let found = find_set(t.lines(), &info, &ranges, &r.pattern.text);
            let ok = match (r.expect, r.occurrence) {
                (Expect::Any(_), _) => !found.is_empty(),
                (Expect::Exactly(n), None) => found.len() == n,
                (Expect::Exactly(n), Some(_)) => found.len() >= n.max(1),
            };
            if !ok || matches!(r.occurrence, Some(Occurrence::Nth(n)) if n > found.len()) {
                return Err(Diagnostic::error(
                    Code::RuleMatchCount,
                    format!(
                        "rule #{} ({}): `{}` found {} time{} in {}, expected {}",
                        r.index,
                        r.what(),
                        r.pattern.text,
                        found.len(),
                        if found.len() == 1 { "" } else { "s" },
                        scope_desc(r),
                        match r.expect {
                            Expect::Any(_) => "at least 1".into(),
                            Expect::Exactly(n) => format!("{n}"),
                        }
                    ),
                )
                .at(r.at.clone())
                .with_note(if found.is_empty() {
                    "no descriptor field, metadata key or `.set` symbol by that name".to_string()
                } else {
                    format!("candidates:{}", listing(t, &found))
                })
                .with_help(
                    "use `kernel = \"<symbol>\"` to pick one kernel, or `expect`/`occurrence`",
                ));
            }
            pick(found, r.occurrence)
        }
    };
    let what = r.what();
    let mut edits = Edits::new();
    match &r.kind {
        RuleKind::Delete => {
            // One origin for every line the rule writes (shared).
            let o = origin(r, ctx, what.clone());
            for &i in &hits {
                match label_prefix(t.text(i), &info[i]) {
                    // `.L1: s_nop 0`: the label stays.
                    Some((label, _)) => {
                        edits.replace(i, t.styled(i, label.trim_start()), o.clone())
                    }
                    None => edits.delete(i),
                };
            }
        }
        RuleKind::Replace { with } => {
            let o = origin(r, ctx, what.clone());
            for &i in &hits {
                let new = match &r.pattern.regex {
                    Some(re) => re.replace(&info[i].norm, with.as_str()).into_owned(),
                    None => with.clone(),
                };
                let mut lines: Vec<(String, Origin)> = new
                    .split('\n')
                    .map(|l| (t.styled(i, l.trim()), o.clone()))
                    .collect();
                if let (Some((label, _)), Some(first)) =
                    (label_prefix(t.text(i), &info[i]), lines.first_mut())
                {
                    first.0 = t.styled(i, &format!("{} {}", label.trim_start(), first.0.trim()));
                }
                edits.replace_lines(i, lines);
            }
        }
        RuleKind::Insert { lines, position } => {
            let o = origin(r, ctx, what.clone());
            for &i in &hits {
                for l in lines {
                    edits.insert(i, *position, t.styled(i, l), o.clone());
                }
            }
        }
        RuleKind::Move(anchor) => {
            let a = select(
                t,
                &info,
                &ranges,
                &anchor.pattern,
                anchor.occurrence,
                Expect::Exactly(1),
                r,
                "anchor",
            )?;
            let Some(&a) = a.first() else {
                return Err(Diagnostic::error(
                    Code::RuleAnchor,
                    format!(
                        "rule #{}: no anchor `{}` selected",
                        r.index, anchor.pattern.text
                    ),
                )
                .at(r.at.clone()));
            };
            if hits.contains(&a) {
                return Err(Diagnostic::error(
                    Code::RuleAnchor,
                    format!(
                        "rule #{}: the anchor `{}` is one of the lines being moved (line {})",
                        r.index,
                        anchor.pattern.text,
                        a + 1
                    ),
                )
                .at(r.at.clone())
                .with_help("choose an anchor outside the moved lines"));
            }
            for &i in &hits {
                let o = origin(r, ctx, format!("{what} (was {})", origin_of(t, i)));
                match label_prefix(t.text(i), &info[i]) {
                    // `.L1: s_nop 0`: the label stays, the code moves.
                    Some((label, code)) => {
                        edits.replace(i, t.styled(i, label.trim_start()), origin_of(t, i));
                        edits.insert(a, anchor.position, t.styled(a, code), o);
                    }
                    None => {
                        edits.move_line(t, i, anchor.position, a, o);
                    }
                }
            }
        }
        RuleKind::SetWaitcnt { counter, value } => {
            let mut gens = ctx.generations.clone();
            if let Some(g) = dump_generation(t) {
                gens.push(g);
            }
            gens.sort_unstable();
            gens.dedup();
            for &i in &hits {
                let new = set_waitcnt(&info[i].norm, counter, *value, &gens).map_err(|m| {
                    Diagnostic::error(Code::RuleFailed, format!("rule #{} ({what}): {m}", r.index))
                        .at(r.at.clone())
                        .with_note(format!(
                            "matched line {}: {}  [{}]",
                            i + 1,
                            t.text(i).trim(),
                            origin_of(t, i)
                        ))
                })?;
                let code = match label_prefix(t.text(i), &info[i]) {
                    Some((label, _)) => format!("{} {}", label.trim_start(), new.0),
                    None => new.0,
                };
                edits.replace(
                    i,
                    t.styled(i, &code),
                    origin(r, ctx, format!("{what} ({})", new.1)),
                );
            }
        }
        RuleKind::Set { value } => {
            let o = origin(r, ctx, what.clone());
            for &i in &hits {
                edits.replace(
                    i,
                    crate::base::parse::edit::replace_value(t.text(i), value),
                    o.clone(),
                );
            }
        }
    }
    // The rule's view of the lines is not needed while the document is
    // rebuilt (the peak of a large file's patching).
    drop(info);
    t.apply(edits);
    Ok(())
}

/// For a line that defines a label before its code (`.L1: s_nop 0`, matched
/// by its code): the text up to and including the label's `:`, and the code
/// after it (comment included). Edits keep the label where it is.
fn label_prefix<'a>(text: &'a str, info: &LineInfo) -> Option<(&'a str, &'a str)> {
    let label = info.label?;
    if info.class == Class::Label {
        return None;
    }
    let end = text.find(label)? + label.len() + 1;
    let rest = text.get(end..)?.trim();
    Some((
        &text[..end],
        rest.strip_suffix('\r').unwrap_or(rest).trim_end(),
    ))
}

fn dump_generation(t: &Document) -> Option<Generation> {
    t.asm().target_directive().and_then(|(_, v)| generation(&v))
}

/// Lines a `set` rule of `name` acts on.
fn find_set(lines: &[Line], info: &[LineInfo], ranges: &[Range<usize>], name: &str) -> Vec<usize> {
    let mut v: Vec<usize> = ranges
        .iter()
        .flat_map(|r| r.clone())
        .filter(|&i| match lines[i].kind() {
            LineKind::Metadata => {
                let key = info[i].norm.trim_start_matches("- ");
                key.split(':').next() == Some(name) && key.contains(':')
            }
            LineKind::Set { name: sym, .. } => {
                sym == name || (name.starts_with('.') && sym.ends_with(name))
            }
            LineKind::Directive {
                name: n,
                args: value,
            }
            | LineKind::DescriptorField { name: n, value } => n == name && !value.is_empty(),
            _ => false,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// New text of a wait instruction and a note on the counter chosen.
fn set_waitcnt(
    norm: &str,
    counter: &str,
    value: u32,
    gens: &[Generation],
) -> Result<(String, String), String> {
    let mnemonic = norm.split(' ').next().unwrap_or("");
    let operands = norm[mnemonic.len()..].trim();
    // Map the counter name onto the instruction's counter.
    // The names a rule may use for a counter: its own, or the gfx12 name
    // of a gfx9–11 counter and the other way round.
    let names = |own: Counter| -> bool {
        own.name() == counter
            || matches!(
                (own, counter),
                (Counter::Vmcnt, "loadcnt")
                    | (Counter::Lgkmcnt, "dscnt" | "kmcnt")
                    | (Counter::Vscnt, "storecnt")
                    | (Counter::Loadcnt, "vmcnt")
                    | (Counter::Dscnt | Counter::Kmcnt, "lgkmcnt")
                    | (Counter::Storecnt, "vscnt")
            )
    };
    let (actual, kind): (&str, &str) = match WaitInstruction::of(mnemonic) {
        Some(WaitInstruction::Combined) => {
            match [Counter::Vmcnt, Counter::Lgkmcnt, Counter::Expcnt].into_iter().find(|c| names(*c)) {
                Some(c) => (c.name(), "s_waitcnt"),
                None => return Err(format!("counter `{counter}` is not part of `s_waitcnt` (it has vmcnt, expcnt, lgkmcnt)")),
            }
        }
        Some(WaitInstruction::Register(own)) => {
            if !names(own) {
                return Err(format!("`{mnemonic}` only has {own}, not `{counter}`"));
            }
            (own.name(), "imm")
        }
        Some(WaitInstruction::Split(own)) => {
            if !names(own) {
                return Err(format!("`{mnemonic}` waits on {own}, not `{counter}`; match the `s_wait_*` instruction of that counter"));
            }
            (own.name(), "imm")
        }
        _ => {
            return Err(format!(
                "`{mnemonic}` is not a wait instruction set-waitcnt can edit (s_waitcnt, s_waitcnt_vscnt, s_wait_loadcnt, s_wait_dscnt, …)"
            ))
        }
    };
    let counter_of_insn = Counter::from_name(actual);
    for &gen in gens {
        let g = major(gen);
        match counter_of_insn.and_then(|c| waitcnt_limits(gen).max(c)) {
            Some(max) if value > max => {
                return Err(format!(
                    "{actual} = {value} does not fit gfx{g}'s {actual} field (maximum {max})"
                ))
            }
            None => return Err(format!("gfx{g} has no {actual} counter")),
            _ => {}
        }
    }
    let note = if actual == counter {
        actual.to_string()
    } else {
        format!("{counter} means {actual} here")
    };
    if kind == "imm" {
        // `s_wait_loadcnt 0x3` / `s_waitcnt_vscnt null, 0x0`: replace the last operand.
        let (head, last) = match operands.rfind(", ") {
            Some(c) => (&operands[..c + 2], &operands[c + 2..]),
            None => ("", operands),
        };
        let hex = last.starts_with("0x");
        let v = if hex {
            format!("0x{value:x}")
        } else {
            value.to_string()
        };
        return Ok((format!("{mnemonic} {head}{v}"), note));
    }
    static COUNTER: std::sync::OnceLock<Result<Regex, regex::Error>> = std::sync::OnceLock::new();
    let re = COUNTER
        .get_or_init(|| Regex::new(r"(\w+)\(\s*(\d+)\s*\)"))
        .as_ref()
        .map_err(|e| e.to_string())?;
    if !operands.is_empty() && !re.is_match(operands) {
        return Err(format!("`{norm}` uses an encoded immediate; write it with named counters (vmcnt(N) expcnt(N) lgkmcnt(N)) first"));
    }
    let mut found = false;
    let new_ops = re.replace_all(operands, |c: &regex::Captures| {
        let name = &c[1];
        if name == actual || name == format!("{actual}_sat") {
            found = true;
            format!("{name}({value})")
        } else {
            c[0].to_string()
        }
    });
    let new_ops = if found {
        new_ops.into_owned()
    } else if operands.is_empty() {
        format!("{actual}({value})")
    } else {
        format!("{operands} {actual}({value})")
    };
    Ok((format!("{mnemonic} {new_ops}"), note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_whitespace_commas_and_comments() {
        assert_eq!(
            normalize("\tv_add_u32  v1,v2 ,  v3 ; hi"),
            "v_add_u32 v1, v2, v3"
        );
        assert_eq!(normalize("  s_nop 0 // x"), "s_nop 0");
    }

    #[test]
    fn generations() {
        for (n, g) in [
            ("gfx942", 9),
            ("gfx90a:xnack+", 9),
            ("gfx1100", 11),
            ("gfx1201", 12),
            ("gfx9-4-generic", 9),
            ("gfx10-3-generic", 10),
            ("amdgpu9.42-amd-amdhsa-unknown-gfx942", 9),
            ("amdgcn-amd-amdhsa--gfx1030", 10),
        ] {
            assert_eq!(generation(n).map(major), Some(g), "{n}");
        }
    }

    #[test]
    fn waitcnt_edits_keep_other_counters() {
        assert_eq!(
            set_waitcnt(
                "s_waitcnt vmcnt(11) lgkmcnt(0)",
                "vmcnt",
                4,
                &[Generation::Gfx9]
            )
            .unwrap()
            .0,
            "s_waitcnt vmcnt(4) lgkmcnt(0)"
        );
        assert_eq!(
            set_waitcnt("s_waitcnt lgkmcnt(0)", "vmcnt", 4, &[Generation::Gfx9])
                .unwrap()
                .0,
            "s_waitcnt lgkmcnt(0) vmcnt(4)"
        );
        assert_eq!(
            set_waitcnt("s_wait_loadcnt 0x3", "vmcnt", 5, &[Generation::Gfx12]).unwrap(),
            (
                "s_wait_loadcnt 0x5".into(),
                "vmcnt means loadcnt here".into()
            )
        );
        assert_eq!(
            set_waitcnt(
                "s_waitcnt_vscnt null, 0x0",
                "vscnt",
                2,
                &[Generation::Gfx11]
            )
            .unwrap()
            .0,
            "s_waitcnt_vscnt null, 0x2"
        );
        assert!(
            set_waitcnt("s_waitcnt lgkmcnt(0)", "lgkmcnt", 16, &[Generation::Gfx9])
                .unwrap_err()
                .contains("maximum 15")
        );
        assert!(set_waitcnt(
            "s_waitcnt lgkmcnt(0)",
            "lgkmcnt",
            16,
            &[Generation::Gfx10_1]
        )
        .is_ok());
        assert!(
            set_waitcnt("s_waitcnt vmcnt(0)", "vmcnt", 64, &[Generation::Gfx9])
                .unwrap_err()
                .contains("maximum 63")
        );
        assert!(set_waitcnt("s_wait_kmcnt 0x0", "kmcnt", 32, &[Generation::Gfx12]).is_err());
        assert!(set_waitcnt("s_wait_dscnt 0x0", "loadcnt", 1, &[Generation::Gfx12]).is_err());
        assert!(set_waitcnt("s_waitcnt 0", "vmcnt", 1, &[Generation::Gfx9]).is_err());
        // The gfx10–11 single-counter forms other than vscnt are edited the same way.
        assert_eq!(
            set_waitcnt(
                "s_waitcnt_vmcnt null, 0x0",
                "loadcnt",
                3,
                &[Generation::Gfx11]
            )
            .unwrap()
            .0,
            "s_waitcnt_vmcnt null, 0x3"
        );
        // `s_wait_idle` has no counter to set.
        assert!(
            set_waitcnt("s_wait_idle", "loadcnt", 1, &[Generation::Gfx12])
                .unwrap_err()
                .contains("not a wait instruction set-waitcnt can edit")
        );
    }

    /// Line kinds the corpus does not have: `#` and `/* */` comments,
    /// labelled code, quoted labels, free text.
    const EXTRA: &str = "# s_nop 0\n/*\n\ts_nop 0\n */\n\ts_nop 1 /* s_nop 0 */\nx: s_nop 0\n\"q l\":\n.L2: .p2align 2\n\t1 + 2\n";

    fn kind_name(k: &LineKind) -> &'static str {
        match k {
            LineKind::Blank => "blank",
            LineKind::Comment => "comment",
            LineKind::Label(_) => "label",
            LineKind::LabeledLine { .. } => "labelled line",
            LineKind::Directive { .. } => "directive",
            LineKind::Instruction(_) => "instruction",
            LineKind::Raw(_) => "raw instruction",
            LineKind::DescriptorField { .. } => "descriptor field",
            LineKind::Set { .. } => "set",
            LineKind::Metadata => "metadata",
            LineKind::Other => "other",
        }
    }

    fn literal(text: &str) -> Pattern {
        Pattern {
            text: text.to_string(),
            regex: None,
        }
    }

    /// Rules and `parse` classify every corpus line the same way, for every
    /// line kind the parser knows: the pattern a user writes for a line
    /// (its code, its mnemonic, `label:`) selects it exactly when `parse`
    /// says the line holds that code or label; comments, metadata and free
    /// text are never selected, whatever their text looks like.
    #[test]
    fn rules_and_parse_agree_on_every_corpus_line() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
        let mut texts = vec![EXTRA.to_string()];
        for e in walkdir::WalkDir::new(&corpus).sort_by_file_name() {
            let e = e.expect("corpus readable (run tests/corpus/regen.sh)");
            if matches!(
                e.path().extension().and_then(|x| x.to_str()),
                Some("s" | "rocmasm")
            ) {
                texts.push(std::fs::read_to_string(e.path()).unwrap());
            }
        }
        assert!(
            texts.len() > 30,
            "corpus missing: run tests/corpus/regen.sh"
        );
        let mut seen = std::collections::BTreeMap::new();
        let mut lines = 0;
        for text in &texts {
            for line in &crate::base::parse::parse(text).lines {
                lines += 1;
                *seen.entry(kind_name(line.kind())).or_insert(0) += 1;
                let info = line_info(line);
                let at = format!("{:?} ({})", line.text(), kind_name(line.kind()));
                let (label, code) = match line.kind() {
                    LineKind::LabeledLine { label, rest } => (Some(label), &**rest),
                    LineKind::Label(l) => (Some(l), line.kind()),
                    k => (None, k),
                };
                if let Some(l) = label {
                    assert!(literal(&format!("{l}:")).matches(&info), "{at}");
                }
                match code {
                    LineKind::Instruction(i) => {
                        assert_eq!(info.class, Class::Instruction, "{at}");
                        assert!(literal(&info.norm).matches(&info), "{at}");
                        assert!(literal(&i.mnemonic).matches(&info), "{at}");
                    }
                    LineKind::Directive { name, .. }
                    | LineKind::DescriptorField { name, .. }
                    | LineKind::Set { name, .. } => {
                        assert_eq!(info.class, Class::Directive, "{at}");
                        if !name.starts_with('.') {
                            // `.set`'s name is the symbol.
                            assert!(info.norm.starts_with(".set"), "{at}");
                        }
                        assert!(literal(&info.norm).matches(&info), "{at}");
                    }
                    LineKind::Label(_) => assert_eq!(info.class, Class::Label, "{at}"),
                    _ => {
                        // Whatever the text says once comment markers are
                        // dropped, no pattern selects it.
                        let t = line.text().trim().trim_start_matches(['#', ';', '/', '*']);
                        let t = t.trim_end_matches(['*', '/']).trim();
                        if !t.is_empty() {
                            assert!(!literal(t).matches(&info), "{at}");
                            let word = t.split_whitespace().next().unwrap_or(t);
                            assert!(!literal(word).matches(&info), "{at}");
                        }
                    }
                }
            }
        }
        for k in [
            "blank",
            "comment",
            "label",
            "labelled line",
            "directive",
            "instruction",
            "descriptor field",
            "set",
            "metadata",
            "other",
        ] {
            assert!(seen.contains_key(k), "no {k} line in the corpus: {seen:?}");
        }
        println!("{lines} lines agree: {seen:?}");
    }
}
