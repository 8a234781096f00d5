//! Diagnostics: one type every stage reports with, rendered in rustc style.
//!
//! A [`Diagnostic`] says *what* failed (`message`), *where* (`location`: file,
//! line, column, plus an optional provenance note such as "from patch
//! patches/x.diff hunk 2"), and *how to fix it* (`help`). Rendering uses
//! `annotate-snippets`, so the output looks like rustc's.

use std::fmt;
use std::path::PathBuf;

use annotate_snippets::{Level, Renderer, Snippet};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Blocks the build.
    Error,
    /// Reported, does not block.
    Warning,
    /// Informational (e.g. an occupancy report).
    Note,
}

/// A place in a source file, 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File as the user knows it (relative to the manifest where possible).
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, if known.
    pub column: Option<usize>,
    /// Length of the highlighted span in characters (0 = whole line).
    pub len: usize,
    /// The text of that line, shown under the message.
    pub source_line: Option<String>,
    /// Label printed under the highlighted span.
    pub label: Option<String>,
}

impl Location {
    /// A location covering a whole line.
    pub fn line(file: impl Into<PathBuf>, line: usize, source_line: Option<String>) -> Self {
        Location {
            file: file.into(),
            line,
            column: None,
            len: 0,
            source_line,
            label: None,
        }
    }

    /// Attach a label to the highlighted span.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Highlight `len` characters starting at 1-based `column`.
    pub fn with_span(mut self, column: usize, len: usize) -> Self {
        self.column = Some(column);
        self.len = len;
        self
    }
}

/// One diagnostic: what, where, how to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// What failed, one line.
    pub message: String,
    /// Where, if it is tied to a source line.
    pub location: Option<Location>,
    /// Extra facts (`= note: …`), e.g. provenance or context.
    pub notes: Vec<String>,
    /// How to fix it (`= help: …`).
    pub help: Vec<String>,
}

impl Diagnostic {
    /// A new error diagnostic.
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            location: None,
            notes: vec![],
            help: vec![],
        }
    }
    /// A new warning diagnostic.
    pub fn warning(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }
    /// A new note diagnostic.
    pub fn note(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Note,
            ..Diagnostic::error(message)
        }
    }
    /// Set the location.
    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }
    /// Add a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
    /// Add a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// Render without colors, rustc style.
    pub fn render(&self) -> String {
        let level = match self.severity {
            Severity::Error => Level::Error,
            Severity::Warning => Level::Warning,
            Severity::Note => Level::Note,
        };
        let origin;
        let expanded;
        let mut msg = level.title(&self.message);
        if let Some(loc) = &self.location {
            // annotate-snippets appends `:line:col` itself.
            origin = loc.file.display().to_string();
            if let Some(src) = &loc.source_line {
                let (start, end) = span_of(src, loc.column, loc.len);
                // One display column per character (see `displayable`), so carets and the
                // reported column both match the file's columns.
                let (src, start, end) = displayable(src, start, end);
                expanded = src;
                let src = expanded.as_str();
                let mut annotation = level.span(start..end);
                if let Some(label) = &loc.label {
                    annotation = annotation.label(label);
                }
                msg = msg.snippet(
                    Snippet::source(src)
                        .line_start(loc.line)
                        .origin(&origin)
                        .fold(false)
                        .annotation(annotation),
                );
            }
        }
        for n in &self.notes {
            msg = msg.footer(Level::Note.title(n));
        }
        for h in &self.help {
            msg = msg.footer(Level::Help.title(h));
        }
        let rendered = Renderer::plain().render(msg).to_string();
        match (
            &self.location,
            self.location.as_ref().and_then(|l| l.source_line.as_ref()),
        ) {
            // No source text to show: still say where, on its own line.
            (Some(loc), None) => {
                let at = match loc.column {
                    Some(c) => format!("{}:{}:{}", loc.file.display(), loc.line, c),
                    None => format!("{}:{}", loc.file.display(), loc.line),
                };
                let mut lines = rendered.lines();
                let first = lines.next().unwrap_or_default().to_string();
                let rest: Vec<&str> = lines.collect();
                let mut out = format!("{first}\n  --> {at}");
                for l in rest {
                    out.push('\n');
                    out.push_str(l);
                }
                out
            }
            _ => rendered,
        }
    }
}

/// Byte span of a 1-based column/length within `src`; whole trimmed line when unknown.
fn span_of(src: &str, column: Option<usize>, len: usize) -> (usize, usize) {
    let char_to_byte = |c: usize| {
        src.char_indices()
            .nth(c)
            .map(|(i, _)| i)
            .unwrap_or(src.len())
    };
    match column {
        Some(col) if col >= 1 => {
            let start = char_to_byte(col - 1);
            let end = if len == 0 {
                src.len()
            } else {
                char_to_byte(col - 1 + len)
            };
            (start, end.max(start))
        }
        _ => {
            let start = src.len() - src.trim_start().len();
            let end = src.trim_end().len().max(start);
            (start, end)
        }
    }
}

/// The source line as shown under a diagnostic, moving the byte span along:
/// every character stays one character, of display width one, so the caret
/// and the reported column match the file's columns.
///
/// * Tabs and Unicode spaces are shown as one space (annotate-snippets 0.11
///   misplaces carets after tabs).
/// * A line's last `\r` (CRLF files) is not shown; other control
///   characters, `\r` included, are shown as their Unicode control
///   pictures (`\r` as `␍`, `\0` as `␀`, DEL as `␡`; C1 controls as `�`): a
///   stray `\r` is often the error itself, and a diagnostic never sends
///   terminal control sequences from a file to the user's terminal.
/// * annotate-snippets 0.11 panics (an integer underflow in its margin
///   computation) on a line too long for the terminal whose highlighted span
///   lies inside its indentation (found by fuzzing the diff and manifest
///   targets: patch and TOML lines of `\r`s, control characters and spaces).
///   Then the highlighted whitespace character is shown as `·`, which ends
///   the indentation there.
fn displayable(src: &str, start: usize, end: usize) -> (String, usize, usize) {
    // A CRLF file's lines keep their `\r`: a line ending, not content.
    let src = src.strip_suffix('\r').unwrap_or(src);
    let (start, end) = (start.min(src.len()), end.min(src.len()));
    let mut out = String::with_capacity(src.len() + 8);
    let (mut s, mut e) = (start, end);
    for (i, ch) in src.char_indices() {
        if i == start {
            s = out.len();
        }
        if i == end {
            e = out.len();
        }
        out.push(match ch {
            '\t' => ' ',
            c @ '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            '\x7f' => '\u{2421}',
            c if c.is_control() => '\u{fffd}',
            c if c.is_whitespace() => ' ',
            c => c,
        });
    }
    if start >= src.len() {
        s = out.len();
    }
    if end >= src.len() {
        e = out.len();
    }
    // annotate-snippets trims lines longer (in bytes) than its terminal width
    // (140 columns, less the line number gutter): the bug needs such a line.
    const LONG_LINE: usize = 100;
    let indent = out.len() - out.trim_start_matches(' ').len();
    if s < indent && out.len() > LONG_LINE {
        // Every character before `s` is a one-byte space: `s` is a char index too.
        out.replace_range(s..s + 1, "\u{b7}");
        if e == s {
            e = s + '\u{b7}'.len_utf8();
        } else {
            e += '\u{b7}'.len_utf8() - 1;
        }
    }
    (out, s, e)
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Diagnostic {}

/// A list of diagnostics that failed an operation; `Display` renders all of them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// True if any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            f.write_str(&d.render())?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_label_note_and_help() {
        let d = Diagnostic::error("register budget exceeded")
            .at(
                Location::line("asm/mm.s", 42, Some("\tv_mov_b32 v120, 0".into()))
                    .with_span(12, 4)
                    .with_label("v120 is above .amdhsa_next_free_vgpr 112"),
            )
            .with_note("line from patch patches/mm.diff hunk 1")
            .with_help("raise the budget or set `registers = \"update\"`");
        insta::assert_snapshot!(d.render());
    }

    #[test]
    fn control_characters_render_one_column_each_without_panicking() {
        // Long lines whose span lies in the indentation: annotate-snippets
        // 0.11 underflowed on them (fuzz/regressions/diff, manifest).
        let lines = [
            (format!("{}{}", "\r".repeat(17), "\0".repeat(120)), None, 0),
            (
                format!("{}{}", "\r".repeat(19), "x".repeat(200)),
                Some(2),
                1,
            ),
            (format!("{}{}", " ".repeat(30), "x".repeat(200)), Some(2), 1),
            (
                format!("{}{}", "\t".repeat(30), "x".repeat(200)),
                Some(30),
                0,
            ),
            (
                format!("{}{}", "\u{3000}".repeat(40), "x".repeat(200)),
                Some(1),
                3,
            ),
            (format!("{}x", " ".repeat(300)), Some(1), 1),
            // Short in characters, long in bytes (3 per control picture).
            (
                format!("{}{}", "\r".repeat(15), "\x11".repeat(40)),
                Some(2),
                1,
            ),
        ];
        for (src, column, len) in lines {
            let mut loc = Location::line("p.diff", 1, Some(src.clone()));
            loc.column = column;
            loc.len = len;
            let r = Diagnostic::error("x").at(loc).render();
            assert!(
                !r.contains('\r') && !r.contains('\0') && !r.contains('\t'),
                "{r}"
            );
            if let Some(c) = column {
                assert!(r.contains(&format!("p.diff:1:{c}")), "{r}");
            }
        }
        let (text, s, e) = displayable("\ta\x1b[31m\u{85}b\r\r", 2, 9);
        assert_eq!(text, " a\u{241b}[31m\u{fffd}b\u{240d}");
        assert_eq!(&text[s..e], "\u{241b}[31m\u{fffd}");
        assert_eq!(displayable("\tx\r", 0, 3), (" x".to_string(), 0, 2));
        // Short lines are shown as they are, also with the span in the indentation.
        assert_eq!(displayable("  x", 0, 1), ("  x".to_string(), 0, 1));
    }

    #[test]
    fn whole_line_span_skips_indentation() {
        assert_eq!(span_of("\ts_nop 0  ", None, 0), (1, 8));
        assert_eq!(span_of("abc", Some(2), 1), (1, 2));
        assert_eq!(span_of("abc", Some(9), 1), (3, 3));
    }
}
