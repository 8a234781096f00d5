//! The one document model every stage reads and edits.
//!
//! A [`Document`] is an asm file as a list of lines; each line holds its
//! exact text, its [`LineKind`] (from [`crate::base::parse`]) and its [`Origin`]
//! (the dump's line, a patch hunk, a rule, a retargeting step), all behind
//! private fields so they cannot drift apart. The structure above lines
//! (kernels, blocks, descriptor, metadata) comes from [`Document::asm`].
//! A [`Line`] is a shared handle: a copy or an edit of a document shares
//! its unchanged lines (text and parsed kind) with the original and adds a
//! handle and an origin per line.
//!
//! Every change goes through one edit API, [`Edits`]: replace, insert
//! before/after, delete and move, all addressed by line indices of the
//! document as it was before the edits, applied in one linear pass by
//! [`Document::apply`] (or [`Document::applied`] for an edited copy), which
//! records each new line's origin and parses only the new lines (and kept
//! lines whose parsing context the edit changed, e.g. below an inserted
//! `.amdgpu_metadata`). [`Document::styled`] gives new code the indentation and
//! line ending (`\r` of CRLF files) of the line it replaces or is inserted
//! next to.
//!
//! Diagnostics locate a line through [`Document::locate`] (or
//! [`Document::location`]): the file and line the user can open — the dump,
//! or the `+` line of a patch, shown as written there — plus a note naming
//! the rule or retargeting step that wrote the line, never a temp file.
//!
//! All indices are 0-based; locations are 1-based.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::base::diag::{Diagnostic, Location};
use crate::base::parse::{AsmFile, Instruction, Kernel, Line, LineKind, Rebuilder};
use crate::base::provenance::Origin;

/// An asm file: lines with text, kind and origin. See the [module docs](self).
#[derive(Clone, Default)]
pub struct Document {
    /// Texts and kinds (parsed), and whether the text ends with `\n`.
    file: AsmFile,
    /// One origin per line of `file`.
    origins: Vec<Origin>,
    /// The kernels of `file`, found on first use ([`Document::kernels`]):
    /// several checks ask, and a document never changes (an edit makes a
    /// new one).
    kernels: OnceLock<Vec<Kernel>>,
}

/// Two documents are equal when their lines, origins and final newline are.
impl PartialEq for Document {
    fn eq(&self, other: &Self) -> bool {
        self.file == other.file && self.origins == other.origins
    }
}

impl Eq for Document {}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("file", &self.file)
            .field("origins", &self.origins)
            .finish()
    }
}

impl Document {
    /// Every line of `text` attributed to `file`, 1-based
    /// ([`Origin::Source`]).
    pub fn from_source(text: &str, file: impl Into<PathBuf>) -> Document {
        let file: std::sync::Arc<std::path::Path> = file.into().into();
        let asm = crate::base::parse::parse(text);
        let origins = (1..=asm.lines.len())
            .map(|line| Origin::Source {
                file: file.clone(),
                line,
            })
            .collect();
        Document::new(asm, origins)
    }

    /// A document of `file` with one origin per line.
    fn new(file: AsmFile, origins: Vec<Origin>) -> Document {
        Document {
            file,
            origins,
            kernels: OnceLock::new(),
        }
    }

    /// A document from lines (texts without `\n`) and their origins.
    pub fn from_lines(
        lines: impl IntoIterator<Item = (String, Origin)>,
        trailing_newline: bool,
    ) -> Document {
        let (texts, origins): (Vec<String>, Vec<Origin>) = lines.into_iter().unzip();
        Document::new(AsmFile::from_lines(texts, trailing_newline), origins)
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.origins.len()
    }

    /// True when the document has no line.
    pub fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    /// The parsed file: lines with text and kind, and the structure queries
    /// ([`AsmFile::kernels`], [`AsmFile::metadata`], …).
    pub fn asm(&self) -> &AsmFile {
        &self.file
    }

    /// Whether `other` has the same lines (texts, hence kinds; origins
    /// aside), e.g. an unpatched source's patched asm and its dump.
    pub fn same_lines(&self, other: &Document) -> bool {
        std::ptr::eq(self, other) || (self.len() == other.len() && self.texts().eq(other.texts()))
    }

    /// Every kernel ([`AsmFile::kernels`]), found once per document.
    pub fn kernels(&self) -> &[Kernel] {
        self.kernels.get_or_init(|| self.file.kernels())
    }

    /// The lines (text and kind).
    pub fn lines(&self) -> &[Line] {
        &self.file.lines
    }

    /// Line `i` (text and kind).
    pub fn line(&self, i: usize) -> Option<&Line> {
        self.file.lines.get(i)
    }

    /// Exact text of line `i` without `\n` (a CRLF file keeps its `\r`); ""
    /// past the end.
    pub fn text(&self, i: usize) -> &str {
        self.file.lines.get(i).map_or("", Line::text)
    }

    /// Kind of line `i`.
    pub fn kind(&self, i: usize) -> Option<&LineKind> {
        self.file.lines.get(i).map(Line::kind)
    }

    /// The instruction on line `i`, if any (also after a label).
    pub fn instruction(&self, i: usize) -> Option<&Instruction> {
        self.file.lines.get(i).and_then(Line::instruction)
    }

    /// Where line `i` came from.
    pub fn origin(&self, i: usize) -> Option<&Origin> {
        self.origins.get(i)
    }

    /// The line texts, in order.
    pub fn texts(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.file.lines.iter().map(Line::text)
    }

    /// Each line's text with its origin, in order.
    pub fn texts_with_origins(&self) -> impl ExactSizeIterator<Item = (&str, &Origin)> + '_ {
        self.texts().zip(&self.origins)
    }

    /// Whether the text ends with `\n`.
    pub fn trailing_newline(&self) -> bool {
        self.file.trailing_newline
    }

    /// The text, byte-for-byte.
    pub fn print(&self) -> String {
        self.file.print()
    }

    /// `code` (trimmed) with the indentation and line ending of line `like`;
    /// a label definition (`name:`) stays unindented, and code that starts
    /// with whitespace keeps its own indentation.
    pub fn styled(&self, like: usize, code: &str) -> String {
        let model = self.text(like);
        let cr = if model.ends_with('\r') { "\r" } else { "" };
        let code = code.trim_end_matches(['\r', '\n']).trim_end();
        if code.starts_with(char::is_whitespace) || (code.ends_with(':') && !code.contains(' ')) {
            return format!("{code}{cr}");
        }
        format!("{}{code}{cr}", indent_of(model))
    }

    /// Apply `edits` (indices of this document before the edits) in one
    /// pass. Unedited lines are moved, not copied, and parsed again only
    /// when the parsing context before them changed (an edit opened or
    /// closed a metadata block or block comment), so an edit costs what it
    /// touches plus one move per line.
    pub fn apply(&mut self, edits: Edits) {
        if edits.is_empty() {
            return;
        }
        let trailing_newline = self.file.trailing_newline || self.is_empty();
        let pieces = edits.into_pieces(self.len());
        *self = std::mem::take(self).splice(pieces, trailing_newline);
    }

    /// This document with `edits` applied, leaving this one as it is: like
    /// [`Document::apply`] on a clone, but only the kept lines are copied.
    pub fn applied(&self, edits: Edits) -> Document {
        if edits.is_empty() {
            return self.clone();
        }
        let trailing_newline = self.file.trailing_newline || self.is_empty();
        self.spliced_copy(edits.into_pieces(self.len()), trailing_newline)
    }

    /// [`Document::splice`] leaving this document as it is: kept lines are
    /// copied (not parsed again unless their parsing context changed).
    pub(crate) fn spliced_copy(&self, pieces: Vec<Piece>, trailing_newline: bool) -> Document {
        Document::from_pieces(pieces, trailing_newline, |r, push| {
            let r = r.start.min(self.len())..r.end.min(self.len());
            for (line, origin) in self.file.lines[r.clone()].iter().zip(&self.origins[r]) {
                push(line.clone(), origin.clone());
            }
        })
    }

    /// A new document from `pieces`: runs of lines of this one, moved with
    /// their origins ([`Piece::Keep`], in increasing order, not
    /// overlapping), and new lines. Kept lines are not parsed again unless
    /// the parsing context before them changed.
    pub(crate) fn splice(self, pieces: Vec<Piece>, trailing_newline: bool) -> Document {
        let mut old = self.file.lines.into_iter().zip(self.origins);
        let mut pos = 0;
        Document::from_pieces(pieces, trailing_newline, |r, push| {
            assert!(
                r.start >= pos,
                "Document::splice keeps runs in increasing order"
            );
            if r.start > pos {
                old.nth(r.start - pos - 1);
            }
            for (line, origin) in old.by_ref().take(r.len()) {
                push(line, origin);
            }
            pos = r.end;
        })
    }

    /// The document of `pieces`: `keep` hands over the lines (with their
    /// origins) of each kept run, new lines are parsed.
    fn from_pieces(
        pieces: Vec<Piece>,
        trailing_newline: bool,
        mut keep: impl FnMut(std::ops::Range<usize>, &mut dyn FnMut(Line, Origin)),
    ) -> Document {
        let total = pieces.iter().map(Piece::len).sum();
        let mut origins = Vec::with_capacity(total);
        let mut file = Rebuilder::with_capacity(total);
        for piece in pieces {
            match piece {
                Piece::Keep(r) => keep(r, &mut |line, origin| {
                    file.keep(line);
                    origins.push(origin);
                }),
                Piece::New(text, origin) => {
                    file.push(&text);
                    origins.push(origin);
                }
            }
        }
        Document::new(file.finish(trailing_newline), origins)
    }

    /// Where line `i` came from, as text for a note: `file:line` for dump
    /// and patch lines, else "line N of the patched asm (origin)".
    pub fn origin_text(&self, i: usize) -> String {
        match self.origins.get(i) {
            Some(o @ (Origin::Source { .. } | Origin::Patch { .. })) => o.to_string(),
            Some(o) => format!("line {} of the patched asm ({o})", i + 1),
            None => format!("line {} of the patched asm", i + 1),
        }
    }

    /// The location of line `i` for a diagnostic: the file and line its
    /// origin names, showing the line as written there (a patch's `+` line
    /// with its `+`); `span` is a byte range of [`Document::text`]`(i)` to
    /// highlight. Lines that exist in no file (written by a rule, a
    /// retargeting step) are shown as `<patched asm>:N`.
    pub fn location(&self, i: usize, span: Option<(usize, usize)>) -> Location {
        let text = self.text(i);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let origin = self.origins.get(i);
        let (mut loc, shift) = match origin.and_then(Origin::file_line) {
            Some((file, line)) => match origin {
                Some(Origin::Patch { .. }) => {
                    (Location::line(file, line, Some(format!("+{text}"))), 1)
                }
                _ => (Location::line(file, line, Some(text.to_string())), 0),
            },
            None => (
                Location::line(
                    PathBuf::from("<patched asm>"),
                    i + 1,
                    Some(text.to_string()),
                ),
                0,
            ),
        };
        if let Some((s, e)) = span {
            let (s, e) = (s.min(text.len()), e.min(text.len()));
            if s <= e && text.is_char_boundary(s) && text.is_char_boundary(e) {
                loc = loc.with_span(column(text, s) + shift, text[s..e].chars().count());
            }
        }
        loc
    }

    /// The note saying where line `i` came from when it is not the dump
    /// itself ("this line was added by patch … hunk 2 (line 9)", "… written
    /// by rule #1 …", "… retargeted …").
    pub fn provenance_note(&self, i: usize) -> Option<String> {
        match self.origins.get(i)? {
            Origin::Source { .. } => None,
            o @ Origin::Patch { .. } => Some(format!("this line was added by {o}")),
            o @ Origin::Rule(_) => Some(format!("this line was written by {o}")),
            o => Some(format!("this line was {o}")),
        }
    }

    /// Attach line `i`'s [`location`](Document::location) (with `label`
    /// under `span`) and its [`provenance_note`](Document::provenance_note)
    /// to `diag`.
    pub fn locate(
        &self,
        diag: Diagnostic,
        i: usize,
        span: Option<(usize, usize)>,
        label: impl Into<String>,
    ) -> Diagnostic {
        let label = label.into();
        let mut loc = self.location(i, span);
        if !label.is_empty() {
            loc = loc.with_label(label);
        }
        let diag = diag.at(loc);
        match self.provenance_note(i) {
            Some(n) => diag.with_note(n),
            None => diag,
        }
    }
}

/// 1-based column of byte offset `byte` in `text`.
pub fn column(text: &str, byte: usize) -> usize {
    text.get(..byte).map_or(text.len(), |t| t.chars().count()) + 1
}

/// Leading whitespace of `s`.
pub fn indent_of(s: &str) -> &str {
    &s[..s.len() - s.trim_start().len()]
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    Delete,
    Replace(Vec<(String, Origin)>),
}

/// A batch of line edits against one [`Document`], addressed by its line
/// indices before any edit; apply with [`Document::apply`]. Later edits of
/// the same line replace earlier ones; insertions at one place keep their
/// order.
#[derive(Debug, Clone, Default)]
pub struct Edits {
    change: std::collections::BTreeMap<usize, Change>,
    before: std::collections::BTreeMap<usize, Vec<(String, Origin)>>,
    after: std::collections::BTreeMap<usize, Vec<(String, Origin)>>,
}

impl Edits {
    /// The document of `n` lines after these edits, as runs of kept lines
    /// and new lines ([`Document::splice`]).
    fn into_pieces(self, n: usize) -> Vec<Piece> {
        let Edits {
            mut change,
            mut before,
            mut after,
        } = self;
        let mut at: Vec<usize> = change
            .keys()
            .chain(before.keys())
            .chain(after.keys())
            .copied()
            .filter(|&i| i < n)
            .collect();
        at.sort_unstable();
        at.dedup();
        let mut pieces = Vec::with_capacity(2 * at.len() + 1 + before.len() + after.len());
        let new = |v: Vec<(String, Origin)>| v.into_iter().map(|(t, o)| Piece::New(t, o));
        let mut next = 0;
        for i in at {
            if next < i {
                pieces.push(Piece::Keep(next..i));
            }
            if let Some(v) = before.remove(&i) {
                pieces.extend(new(v));
            }
            match change.remove(&i) {
                None => pieces.push(Piece::Keep(i..i + 1)),
                Some(Change::Delete) => {}
                Some(Change::Replace(v)) => pieces.extend(new(v)),
            }
            if let Some(v) = after.remove(&i) {
                pieces.extend(new(v));
            }
            next = i + 1;
        }
        if next < n {
            pieces.push(Piece::Keep(next..n));
        }
        // Insertions at or past the end (e.g. into an empty document).
        for (_, v) in before.into_iter().chain(after) {
            pieces.extend(new(v));
        }
        pieces
    }

    /// No edits yet.
    pub fn new() -> Edits {
        Edits::default()
    }

    /// True when nothing would change.
    pub fn is_empty(&self) -> bool {
        self.change.is_empty() && self.before.is_empty() && self.after.is_empty()
    }

    /// Replace line `i` by `text` (exact text; see [`Document::styled`]).
    pub fn replace(&mut self, i: usize, text: String, origin: Origin) -> &mut Self {
        self.replace_lines(i, vec![(text, origin)])
    }

    /// Replace line `i` by several lines.
    pub fn replace_lines(&mut self, i: usize, lines: Vec<(String, Origin)>) -> &mut Self {
        self.change.insert(i, Change::Replace(lines));
        self
    }

    /// Delete line `i`.
    pub fn delete(&mut self, i: usize) -> &mut Self {
        self.change.insert(i, Change::Delete);
        self
    }

    /// Insert a line before line `i` (`i == len` appends).
    pub fn insert_before(&mut self, i: usize, text: String, origin: Origin) -> &mut Self {
        self.before.entry(i).or_default().push((text, origin));
        self
    }

    /// Insert a line after line `i`.
    pub fn insert_after(&mut self, i: usize, text: String, origin: Origin) -> &mut Self {
        self.after.entry(i).or_default().push((text, origin));
        self
    }

    /// Insert a line before or after line `i`.
    pub fn insert(&mut self, i: usize, at: Position, text: String, origin: Origin) -> &mut Self {
        match at {
            Position::Before => self.insert_before(i, text, origin),
            Position::After => self.insert_after(i, text, origin),
        }
    }

    /// Move line `from` of `doc` next to line `to` (just before or just
    /// after it), with a new origin.
    pub fn move_line(
        &mut self,
        doc: &Document,
        from: usize,
        at: Position,
        to: usize,
        origin: Origin,
    ) -> &mut Self {
        self.delete(from);
        self.insert(to, at, doc.text(from).to_string(), origin)
    }
}

/// A run of lines of a document rebuilt by [`Document::splice`].
pub(crate) enum Piece {
    /// Lines `start..end` of the old document, with their origins.
    Keep(std::ops::Range<usize>),
    /// A new line: text (without `\n`) and origin.
    New(String, Origin),
}

impl Piece {
    /// Number of lines.
    pub(crate) fn len(&self) -> usize {
        match self {
            Piece::Keep(r) => r.len(),
            Piece::New(..) => 1,
        }
    }
}

/// Before or after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Just before the line.
    Before,
    /// Just after the line.
    After,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn rule(what: &str) -> Origin {
        Origin::Generated(what.into())
    }

    #[test]
    fn round_trips_text_with_and_without_final_newline() {
        for text in ["a\nb\n", "a\nb", "", "\n", "x\r\ny\r\n"] {
            assert_eq!(Document::from_source(text, "f.s").print(), text, "{text:?}");
        }
        let d = Document::from_source("a\nb\n", "f.s");
        assert_eq!(d.origin(1).unwrap().to_string(), "f.s:2");
        assert!(d.origin(2).is_none());
    }

    #[test]
    fn edits_keep_layout_origins_and_kinds() {
        let mut d = Document::from_source("k:\r\n\ts_nop 0\r\n\ts_endpgm\r\n", "f.s");
        let mut e = Edits::new();
        e.replace(1, d.styled(1, "s_nop 1"), rule("r"))
            .insert_before(1, d.styled(1, "s_barrier"), rule("i"))
            .insert_after(2, d.styled(2, ".LBB0_1:"), rule("l"))
            .move_line(&d, 2, Position::Before, 1, rule("m"));
        d.apply(e);
        assert_eq!(
            d.print(),
            "k:\r\n\ts_barrier\r\n\ts_endpgm\r\n\ts_nop 1\r\n.LBB0_1:\r\n"
        );
        assert_eq!(d.instruction(1).unwrap().mnemonic, "s_barrier");
        assert_eq!(d.kind(4), Some(&LineKind::Label(".LBB0_1".into())));
        assert_eq!(d.origin(0).unwrap().to_string(), "f.s:1");
        assert_eq!(d.origin(2), Some(&rule("m")));
        let mut e = Edits::new();
        e.delete(0).delete(4);
        d.apply(e);
        assert_eq!(d.len(), 3);
        assert_eq!(d.print(), "\ts_barrier\r\n\ts_endpgm\r\n\ts_nop 1\r\n");
    }

    /// Kept lines are not parsed again, yet every line's kind equals a
    /// fresh parse of the result, also when an edit opens or closes a
    /// metadata block, block comment or descriptor above kept lines.
    #[test]
    fn applied_kinds_equal_a_fresh_parse() {
        let text = "k:\n\ts_nop 0\n/* a\n\ts_nop 1\n*/\n\t.amdhsa_kernel k\n\t\t.amdhsa_next_free_vgpr 6\n\t.end_amdhsa_kernel\n\t.amdgpu_metadata\nx: 1\n\t.end_amdgpu_metadata\n\ts_endpgm\n";
        let n = Document::from_source(text, "f.s").len();
        type Edit = fn(&mut Edits, &Document);
        let edits: [Edit; 8] = [
            |e, d| {
                e.insert_before(1, d.styled(1, ".amdgpu_metadata"), rule("open"));
            },
            |e, _| {
                e.delete(2);
            },
            |e, _| {
                e.delete(4);
            },
            |e, _| {
                e.delete(5).delete(7);
            },
            |e, _| {
                e.delete(8);
            },
            |e, _| {
                e.delete(10);
            },
            |e, d| {
                e.replace(1, d.styled(1, "s_nop 0 /* open"), rule("r"));
            },
            |e, d| {
                e.insert_after(5, d.styled(6, ".end_amdhsa_kernel"), rule("close"));
            },
        ];
        for (k, edit) in edits.iter().enumerate() {
            let mut d = Document::from_source(text, "f.s");
            let mut e = Edits::new();
            edit(&mut e, &d);
            d.apply(e);
            let fresh = crate::base::parse::parse(&d.print());
            let kinds = |ls: &[Line]| ls.iter().map(|l| l.kind().clone()).collect::<Vec<_>>();
            assert_eq!(kinds(d.lines()), kinds(&fresh.lines), "edit #{k}");
            assert_ne!(d.len(), 0, "edit #{k} of {n} lines");
        }
    }

    /// `applied` gives what `apply` on a clone gives, and leaves the
    /// document as it was.
    #[test]
    fn applied_equals_apply_on_a_clone() {
        let d = Document::from_source(
            "k:\n\ts_nop 0\n\t.amdgpu_metadata\nx: 1\n\t.end_amdgpu_metadata\n",
            "f.s",
        );
        let before = d.clone();
        let edits = || {
            let mut e = Edits::new();
            e.delete(2)
                .insert_after(1, "\ts_nop 1".into(), rule("i"))
                .insert_before(9, "\ts_endpgm".into(), rule("end"));
            e
        };
        let mut cloned = d.clone();
        cloned.apply(edits());
        let out = d.applied(edits());
        assert_eq!(out, cloned);
        assert_eq!(d, before);
        assert!(
            matches!(out.kind(3), Some(LineKind::LabeledLine { .. })),
            "x: 1 is code once its metadata block is gone"
        );
        assert_eq!(d.applied(Edits::new()), d);
    }

    #[test]
    fn locations_follow_origins() {
        let mut d = Document::from_source("\ts_nop 0\n", "f.s");
        let mut e = Edits::new();
        e.insert_after(
            0,
            "\ts_nop 1".into(),
            Origin::Patch {
                file: Path::new("p.diff").into(),
                hunk: 2,
                line: 9,
            },
        );
        e.insert_after(0, "\ts_nop 2".into(), rule("x"));
        d.apply(e);
        let l = d.location(1, Some((1, 6)));
        assert_eq!((l.file.display().to_string(), l.line), ("p.diff".into(), 9));
        assert_eq!(l.source_line.as_deref(), Some("+\ts_nop 1"));
        assert_eq!(l.column, Some(3));
        let l = d.location(2, None);
        assert_eq!(
            (l.file.display().to_string(), l.line),
            ("<patched asm>".into(), 3)
        );
        assert_eq!(d.provenance_note(0), None);
        assert_eq!(
            d.provenance_note(2).as_deref(),
            Some("this line was generated: x")
        );
        assert_eq!(d.origin_text(1), "patch p.diff hunk 2 (line 9)");
    }
}
