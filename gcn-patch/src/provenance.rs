//! Provenance: where each line of a patched file came from.
//!
//! Every line of patched output carries an [`Origin`]: the dump's line N, a
//! patch file's hunk, a rule, or a retargeting step. Errors found later
//! (assembler errors, register checks) are reported against that origin, not
//! against a temporary file.

use std::fmt;
use std::path::PathBuf;

/// Where one output line came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Unchanged line `line` (1-based) of the source dump `file`.
    Source {
        /// The dumped asm file.
        file: PathBuf,
        /// 1-based line number in it.
        line: usize,
    },
    /// Added by hunk `hunk` (1-based) of a unified diff.
    Patch {
        /// The patch file.
        file: PathBuf,
        /// 1-based hunk number.
        hunk: usize,
        /// 1-based line of the `+` line inside the patch file.
        line: usize,
    },
    /// Written by a structured rule.
    Rule {
        /// The manifest that declares the rule.
        manifest: PathBuf,
        /// The kernel the rule belongs to.
        kernel: String,
        /// 1-based index of the rule in the source's rule list.
        index: usize,
        /// Short description, e.g. `move "s_waitcnt vmcnt(0)"`.
        what: String,
    },
    /// Rewritten by retargeting or toolchain-skew normalization.
    Retarget {
        /// The original line it replaces, if any.
        replaces: Option<Box<Origin>>,
        /// What was done, e.g. `target id for gfx950`.
        what: String,
    },
    /// Generated (e.g. a hand-written kernel's resource counts).
    Generated(String),
}

impl Origin {
    /// File and 1-based line a user can open, if the line exists in a file.
    pub fn file_line(&self) -> Option<(PathBuf, usize)> {
        match self {
            Origin::Source { file, line } => Some((file.clone(), *line)),
            Origin::Patch { file, line, .. } => Some((file.clone(), *line)),
            Origin::Retarget {
                replaces: Some(o), ..
            } => o.file_line(),
            _ => None,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Source { file, line } => write!(f, "{}:{line}", file.display()),
            Origin::Patch { file, hunk, line } => {
                write!(f, "patch {} hunk {hunk} (line {line})", file.display())
            }
            Origin::Rule {
                manifest,
                kernel,
                index,
                what,
            } => {
                write!(
                    f,
                    "rule #{index} of kernel `{kernel}` in {} ({what})",
                    manifest.display()
                )
            }
            Origin::Retarget {
                replaces: Some(o),
                what,
            } => write!(f, "{what} (rewrites {o})"),
            Origin::Retarget {
                replaces: None,
                what,
            } => write!(f, "{what}"),
            Origin::Generated(what) => write!(f, "generated: {what}"),
        }
    }
}

/// Text with one [`Origin`] per line: the currency between pipeline stages.
///
/// `lines[i]` is the text of line `i` without its line terminator;
/// `origins[i]` is where it came from. `trailing_newline` records whether the
/// text ended with a newline, so that printing is lossless.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Traced {
    /// Line texts, without terminators (a `\r` of CRLF files is kept in the text).
    pub lines: Vec<String>,
    /// One origin per line.
    pub origins: Vec<Origin>,
    /// Whether the text ends with `\n`.
    pub trailing_newline: bool,
}

impl Traced {
    /// Every line of `text` attributed to `file`, 1-based.
    pub fn from_source(text: &str, file: impl Into<PathBuf>) -> Self {
        let file = file.into();
        let trailing_newline = text.ends_with('\n');
        let body = text.strip_suffix('\n').unwrap_or(text);
        let lines: Vec<String> = if text.is_empty() {
            vec![]
        } else {
            body.split('\n').map(str::to_owned).collect()
        };
        let origins = (1..=lines.len())
            .map(|line| Origin::Source {
                file: file.clone(),
                line,
            })
            .collect();
        Traced {
            lines,
            origins,
            trailing_newline,
        }
    }

    /// The text, byte-for-byte.
    pub fn text(&self) -> String {
        let mut out = self.lines.join("\n");
        if self.trailing_newline && !self.lines.is_empty() {
            out.push('\n');
        }
        out
    }

    /// Origin of 1-based line `line` of [`Traced::text`].
    pub fn origin(&self, line: usize) -> Option<&Origin> {
        line.checked_sub(1).and_then(|i| self.origins.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_text_with_and_without_final_newline() {
        for text in ["a\nb\n", "a\nb", "", "\n", "x\r\ny\r\n"] {
            assert_eq!(Traced::from_source(text, "f.s").text(), text, "{text:?}");
        }
        let t = Traced::from_source("a\nb\n", "f.s");
        assert_eq!(t.origin(2).unwrap().to_string(), "f.s:2");
        assert!(t.origin(3).is_none());
    }
}
