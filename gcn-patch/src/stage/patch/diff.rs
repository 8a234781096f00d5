//! Unified diffs, applied with exact context.
//!
//! Files are standard unified diffs (`diff -u`, `git diff` with its
//! `diff --git` / `index` headers), parsed with `diffy`. Hunks are applied in
//! order with **exact** context (no fuzz). A hunk may be found at an offset
//! from the line its `@@` header names, but its context and removed lines
//! must then match at exactly one place after the previous hunk: several
//! matches are an error listing the candidates, never a guess. When a hunk
//! applies cleanly the result is what GNU `patch` produces (tested against
//! the real tool), including `\ No newline at end of file` and CRLF files.
//!
//! File names in the diff need not match the dump (dumps get renamed). A diff
//! touching several files is accepted only if exactly one of its files has the
//! dump's base name; that one is applied.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use crate::base::diag::{Code, Diagnostic, Location};
use crate::base::document::{Document, Piece};
use crate::base::provenance::Origin;
use crate::config::manifest::PatchFile;

/// One hunk line: text without `\n`, whether it had one, and its patch file line.
#[derive(Debug, Clone)]
struct HLine {
    text: String,
    newline: bool,
    patch_line: usize,
}

#[derive(Debug)]
struct Hunk {
    header_line: usize,
    header: String,
    old_start: usize,
    /// (kind, line): kind is ' ', '-' or '+'.
    lines: Vec<(char, HLine)>,
}

impl Hunk {
    fn old(&self) -> Vec<&HLine> {
        self.lines
            .iter()
            .filter(|(k, _)| *k != '+')
            .map(|(_, l)| l)
            .collect()
    }
    fn new_side(&self) -> Vec<&HLine> {
        self.lines
            .iter()
            .filter(|(k, _)| *k != '-')
            .map(|(_, l)| l)
            .collect()
    }
}

/// The file being patched: lines and whether each ends in `\n`.
struct Input<'a> {
    t: &'a Document,
}

impl Input<'_> {
    fn len(&self) -> usize {
        self.t.len()
    }
    fn newline(&self, i: usize) -> bool {
        i + 1 < self.len() || self.t.trailing_newline()
    }
    fn eq(&self, i: usize, l: &HLine) -> bool {
        self.t.text(i) == l.text
            && (l.newline || (i + 1 == self.len() && !self.t.trailing_newline()))
    }
    fn matches_at(&self, p: usize, side: &[&HLine]) -> bool {
        p + side.len() <= self.len() && side.iter().enumerate().all(|(j, l)| self.eq(p + j, l))
    }
}

/// Patch-file location of 1-based line `line`.
fn patch_loc(rel: &Path, text: &str, line: usize) -> Location {
    let src = text
        .lines()
        .nth(line.saturating_sub(1))
        .map(|s| s.trim_end_matches('\r').to_string());
    Location::line(rel.to_path_buf(), line, src)
}

/// Parse `text` (the patch file) into the hunks for the dump `source_rel`.
fn parse(text: &str, pf: &PatchFile, source_rel: &Path) -> Result<Vec<Hunk>, Diagnostic> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // File sections: a `--- ` line followed by a `+++ ` line.
    let mut sections: Vec<(usize, String)> = Vec::new();
    for i in 0..lines.len().saturating_sub(1) {
        if lines[i].starts_with("--- ") && lines[i + 1].starts_with("+++ ") {
            sections.push((i, file_name(&lines[i + 1][4..])));
        }
    }
    if sections.is_empty() {
        return Err(Diagnostic::error(
            Code::NotAUnifiedDiff,
            format!(
                "`{}` is not a unified diff (no `--- a/file` / `+++ b/file` header)",
                pf.rel.display()
            ),
        )
        .at(patch_loc(&pf.rel, text, 1))
        .with_help("make it with `diff -u old.s new.s > file.diff` or `git diff`"));
    }
    let base = source_rel
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let pick = if sections.len() == 1 {
        0
    } else {
        let same: Vec<usize> = (0..sections.len())
            .filter(|&i| {
                Path::new(&sections[i].1)
                    .file_name()
                    .map(|s| s.to_string_lossy())
                    == Some(base.as_str().into())
            })
            .collect();
        if same.len() != 1 {
            let names: Vec<String> = sections
                .iter()
                .map(|(l, n)| format!("{n} (line {})", l + 1))
                .collect();
            return Err(Diagnostic::error(Code::DiffForOtherFile, format!(
                "`{}` patches {} files; cannot tell which one is `{}`",
                pf.rel.display(),
                sections.len(),
                source_rel.display()
            ))
            .at(patch_loc(&pf.rel, text, sections[0].0 + 1))
            .with_note(format!("files in the patch: {}", names.join(", ")))
            .with_help(format!("split it into one patch per dump, or name the dump `{base}` in exactly one `+++` header")));
        }
        same[0]
    };
    let start = sections[pick].0;
    let end = sections.get(pick + 1).map_or(lines.len(), |s| {
        // Do not feed the next file's `diff --git`/`index` preamble to diffy.
        let mut e = s.0;
        while e > start + 2 && !lines[e - 1].starts_with([' ', '-', '+', '\\', '@']) {
            e -= 1;
        }
        e
    });
    let section: String = lines[start..end].concat();
    let patch = diffy::Patch::from_str(&section).map_err(|e| {
        let full = e.to_string();
        let msg = full.split_once(": ").map_or(full.as_str(), |(_, m)| m).to_string();
        let line = full
            .split("at byte ")
            .nth(1)
            .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|b| b.parse::<usize>().ok())
            .map_or(start + 1, |b| start + section[..b.min(section.len())].matches('\n').count() + 1);
        Diagnostic::error(Code::MalformedDiff, format!("cannot parse patch `{}`: {msg}", pf.rel.display()))
            .at(patch_loc(&pf.rel, text, line))
            .with_help("regenerate it with `diff -u` or `git diff`; hunk line counts in `@@ -a,b +c,d @@` must match the hunk body")
    })?;
    // A header and nothing else: GNU patch says "only garbage was found".
    // Applying it as a no-op would let a truncated or mangled patch pass.
    if patch.hunks().is_empty() {
        return Err(Diagnostic::error(Code::EmptyDiff, format!(
            "patch `{}` has a `--- `/`+++ ` header but no hunk: it changes nothing",
            pf.rel.display()
        ))
        .at(patch_loc(&pf.rel, text, start + 2).with_label("no `@@ -a,b +c,d @@` hunk follows"))
        .with_note("GNU patch rejects such a file (\"Only garbage was found in the patch input\")")
        .with_help(format!(
            "regenerate it with `diff -u` or `gcn-patch save`, or remove `{}` from the source's `patches`",
            pf.rel.display()
        )));
    }
    // Patch-file line numbers: walk the section in step with diffy's hunks.
    let mut out = Vec::new();
    let mut li = start;
    for h in patch.hunks() {
        while li < end && !lines[li].starts_with("@@") {
            li += 1;
        }
        let header_line = li + 1;
        let header = lines
            .get(li)
            .map_or(String::new(), |s| s.trim_end().to_string());
        li += 1;
        let mut hl = Vec::new();
        for l in h.lines() {
            while li < end && lines[li].starts_with('\\') {
                li += 1;
            }
            let (k, s) = match l {
                diffy::Line::Context(s) => (' ', *s),
                diffy::Line::Delete(s) => ('-', *s),
                diffy::Line::Insert(s) => ('+', *s),
            };
            let (text, newline) = match s.strip_suffix('\n') {
                Some(t) => (t.to_string(), true),
                None => (s.to_string(), false),
            };
            hl.push((
                k,
                HLine {
                    text,
                    newline,
                    patch_line: li + 1,
                },
            ));
            li += 1;
        }
        out.push(Hunk {
            header_line,
            header,
            old_start: h.old_range().start(),
            lines: hl,
        });
    }
    Ok(out)
}

/// `b/asm/x.s\t2024-…` → `asm/x.s`.
fn file_name(s: &str) -> String {
    let s = s.trim_end_matches(['\n', '\r']);
    let s = s.split('\t').next().unwrap_or(s);
    let s = s.trim_matches('"');
    s.strip_prefix("b/")
        .or_else(|| s.strip_prefix("a/"))
        .unwrap_or(s)
        .to_string()
}

/// Positions `p >= from` where `side` matches, using an index on its rarest line.
fn positions(
    inp: &Input,
    index: &HashMap<&str, Vec<usize>>,
    side: &[&HLine],
    from: usize,
) -> Vec<usize> {
    if side.is_empty() {
        return vec![];
    }
    let (k, occ) = side
        .iter()
        .enumerate()
        .map(|(j, l)| {
            (
                j,
                index.get(l.text.as_str()).map_or(&[][..], |v| v.as_slice()),
            )
        })
        .min_by_key(|(_, v)| v.len())
        .unwrap_or((0, &[]));
    occ.iter()
        .filter_map(|&i| i.checked_sub(k))
        .filter(|&p| p >= from && inp.matches_at(p, side))
        .collect()
}

/// Apply the patch file `pf` to `t` (the dump `source_rel`, possibly already patched).
/// A borrowed `t` is left as it is (its kept lines are copied); an owned one
/// is consumed (its kept lines are moved).
pub(crate) fn apply_diff(
    t: Cow<'_, Document>,
    pf: &PatchFile,
    source_rel: &Path,
) -> Result<Document, Diagnostic> {
    let text = std::fs::read_to_string(&pf.path).map_err(|e| {
        Diagnostic::error(
            Code::ReadFailed,
            format!("cannot read patch `{}`: {e}", pf.rel.display()),
        )
        .with_help("patch files must be UTF-8 text next to the manifest")
    })?;
    let (pieces, trailing_newline) = splice_plan(&t, &text, pf, source_rel)?;
    Ok(match t {
        Cow::Borrowed(t) => t.spliced_copy(pieces, trailing_newline),
        Cow::Owned(t) => t.splice(pieces, trailing_newline),
    })
}

/// Apply the unified diff `text`, the contents of the patch file `pf`, to
/// `t` (the dump `source_rel`). The file-free core of applying a patch (the
/// fuzz targets and their replay test call it directly).
pub fn apply_diff_text(
    t: &Document,
    text: &str,
    pf: &PatchFile,
    source_rel: &Path,
) -> Result<Document, Diagnostic> {
    let (pieces, trailing_newline) = splice_plan(t, text, pf, source_rel)?;
    Ok(t.spliced_copy(pieces, trailing_newline))
}

/// The lines of `t` with the diff `text` applied, as kept and new lines
/// ([`Document::splice`]), and whether the result ends with `\n`.
fn splice_plan(
    t: &Document,
    text: &str,
    pf: &PatchFile,
    source_rel: &Path,
) -> Result<(Vec<Piece>, bool), Diagnostic> {
    let text = text.to_string();
    let hunks = parse(&text, pf, source_rel)?;
    let inp = Input { t };
    let mut index: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, l) in t.texts().enumerate() {
        index.entry(l).or_default().push(i);
    }
    let mut out: Vec<(Piece, bool)> = Vec::with_capacity(t.len() + 16);
    let patch_file: std::sync::Arc<Path> = pf.rel.as_path().into();
    let mut cursor = 0usize;
    let mut offset: isize = 0;
    for (k, h) in hunks.iter().enumerate() {
        let hn = k + 1;
        let old = h.old();
        let expected = (h
            .old_start
            .saturating_sub(if old.is_empty() { 0 } else { 1 }) as isize
            + offset)
            .max(0) as usize;
        let p = if old.is_empty() {
            if expected.max(cursor) > inp.len() {
                return Err(hunk_error(
                    t,
                    pf,
                    &text,
                    h,
                    hn,
                    "inserts past the end of the file",
                    vec![],
                ));
            }
            expected.max(cursor)
        } else {
            let found = positions(&inp, &index, &old, cursor);
            match found.len() {
                1 => found[0],
                0 => return Err(not_found(&inp, &index, pf, &text, h, hn, cursor, expected)),
                _ => {
                    let list: Vec<String> = found.iter().map(|p| (p + 1).to_string()).collect();
                    return Err(hunk_error(
                        t,
                        pf,
                        &text,
                        h,
                        hn,
                        &format!("is ambiguous: its context and removed lines match at {} places", found.len()),
                        vec![format!("candidate lines: {}", list.join(", "))],
                    )
                    .with_help("add context to the hunk (e.g. `diff -U6`) so that it matches at exactly one place"));
                }
            }
        };
        offset = p as isize - (h.old_start as isize - if old.is_empty() { 0 } else { 1 });
        if cursor < p {
            out.push((Piece::Keep(cursor..p), inp.newline(p - 1)));
        }
        let mut src = p;
        for (kind, l) in &h.lines {
            match kind {
                ' ' => {
                    // The context line as the document has it (the hunk may
                    // differ in trailing whitespace or `\r`).
                    out.push((Piece::Keep(src..src + 1), l.newline));
                    src += 1;
                }
                '-' => src += 1,
                _ => out.push((
                    Piece::New(
                        l.text.clone(),
                        Origin::Patch {
                            file: patch_file.clone(),
                            hunk: hn,
                            line: l.patch_line,
                        },
                    ),
                    l.newline,
                )),
            }
        }
        cursor = src;
    }
    if cursor < t.len() {
        out.push((Piece::Keep(cursor..t.len()), inp.newline(t.len() - 1)));
    }
    // Each piece's flag is its last line's newline; only the file's last
    // line may lack one (a kept run's inner lines all have theirs).
    let total: usize = out.iter().map(|(p, _)| p.len()).sum();
    let mut end = 0;
    let mut bad = None;
    for (p, nl) in &out {
        end += p.len();
        if !nl && p.len() > 0 && end < total {
            bad = Some((end - 1, p));
        }
    }
    if let Some((i, p)) = bad {
        let from = match p {
            Piece::Keep(r) => origin(t, r.end - 1),
            Piece::New(_, o) => o.clone(),
        };
        return Err(Diagnostic::error(
            Code::NoNewlineInMiddle,
            format!(
            "patch `{}` leaves a line without newline in the middle of the file (output line {})",
            pf.rel.display(),
            i + 1
        ),
        )
        .with_note(format!("line from {from}"))
        .with_help(
            "a `\\ No newline at end of file` marker belongs only to the last line of the file",
        ));
    }
    let trailing_newline = out.last().is_some_and(|l| l.1);
    Ok((out.into_iter().map(|(p, _)| p).collect(), trailing_newline))
}

/// Origin of line `i` of `t` (every line has one).
fn origin(t: &Document, i: usize) -> Origin {
    t.origin(i)
        .cloned()
        .unwrap_or_else(|| Origin::Generated("patched asm".into()))
}

fn show(l: &str) -> String {
    let l = l.trim_end_matches('\r');
    if l.is_empty() {
        "(empty line)".into()
    } else {
        l.replace('\t', "    ")
    }
}

fn hunk_error(
    t: &Document,
    pf: &PatchFile,
    text: &str,
    h: &Hunk,
    hn: usize,
    what: &str,
    notes: Vec<String>,
) -> Diagnostic {
    let _ = t;
    let mut d = Diagnostic::error(
        Code::HunkDoesNotApply,
        format!("hunk #{hn} of `{}` {what}", pf.rel.display()),
    )
    .at(patch_loc(&pf.rel, text, h.header_line).with_label(format!("hunk #{hn}")));
    for n in notes {
        d = d.with_note(n);
    }
    let _ = &h.header;
    d
}

#[allow(clippy::too_many_arguments)]
fn not_found(
    inp: &Input,
    index: &HashMap<&str, Vec<usize>>,
    pf: &PatchFile,
    text: &str,
    h: &Hunk,
    hn: usize,
    cursor: usize,
    expected: usize,
) -> Diagnostic {
    let old = h.old();
    let new = h.new_side();
    let t = inp.t;
    let expected_lines: String = h
        .lines
        .iter()
        .filter(|(k, _)| *k != '+')
        .map(|(k, l)| format!("\n  {k}{}", show(&l.text)))
        .collect();
    // Already applied? Its + side (context + added lines) is in the file.
    let applied = positions(inp, index, &new, 0);
    if !applied.is_empty() && h.lines.iter().any(|(k, _)| *k != ' ') {
        return hunk_error(
            t,
            pf,
            text,
            h,
            hn,
            "does not apply: it looks already applied",
            vec![
                format!(
                    "the hunk's result (context and `+` lines) is already at line {} of the input",
                    applied[0] + 1
                ),
                format!("expected these lines (context and `-` lines):{expected_lines}"),
            ],
        )
        .with_help(format!(
            "the dump already contains this change: remove `{}` from `patches`, or re-dump from a compiler that does not do it",
            pf.rel.display()
        ));
    }
    // Best partial match: most equal lines, nearest the expected position.
    let n = inp.len();
    let mut best: Option<(usize, usize)> = None;
    if n > 0 {
        let last = n.saturating_sub(old.len().min(n));
        for p in 0..=last {
            let score = old
                .iter()
                .enumerate()
                .filter(|(j, l)| p + j < n && inp.eq(p + j, l))
                .count();
            let better = match best {
                None => true,
                Some((bp, bs)) => {
                    score > bs || (score == bs && p.abs_diff(expected) < bp.abs_diff(expected))
                }
            };
            if better {
                best = Some((p, score));
            }
        }
    }
    let mut notes = vec![format!(
        "expected these lines (context and `-` lines):{expected_lines}"
    )];
    let mut help =
        "re-make the patch against this dump (`diff -u`), or fix the hunk's context lines by hand"
            .to_string();
    match best {
        Some((p, score)) if score > 0 => {
            let mut found = String::new();
            for (j, l) in old.iter().enumerate() {
                if p + j >= n {
                    break;
                }
                let mark = if inp.eq(p + j, l) { ' ' } else { '!' };
                found.push_str(&format!(
                    "\n  {mark} {:>5} | {}",
                    p + j + 1,
                    show(t.text(p + j))
                ));
            }
            notes.push(format!(
                "closest match: lines {}-{} ({score} of {} lines equal; `!` marks a difference), from {}:{found}",
                p + 1,
                (p + old.len()).min(n),
                old.len(),
                origin(t, p)
            ));
            if p < cursor {
                help = format!("{help}; note the closest match lies before hunk #{hn}'s predecessor (hunks must be in file order)");
            }
        }
        _ => notes.push("no line of the hunk's context occurs in the input".into()),
    }
    // A patch saved with CRLF line ends never matches an LF dump (and vice versa).
    let patch_crlf = old.iter().any(|l| l.text.ends_with('\r'));
    let dump_crlf = t.texts().any(|l| l.ends_with('\r'));
    if !old.is_empty() && patch_crlf != dump_crlf {
        let (p, d) = if patch_crlf {
            ("CRLF", "LF")
        } else {
            ("LF", "CRLF")
        };
        notes.push(format!("the patch has {p} line ends but the dump has {d}"));
        help = format!(
            "convert `{}` to the dump's line ends (e.g. `dos2unix` / `unix2dos`), then retry",
            pf.rel.display()
        );
    }
    hunk_error(t, pf, text, h, hn, "does not apply", notes).with_help(help)
}
