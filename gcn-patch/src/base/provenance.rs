//! Provenance: where each line of a patched file came from.
//!
//! Every line of patched output carries an [`Origin`]: the dump's line N, a
//! patch file's hunk, a rule, or a retargeting step. Errors found later
//! (assembler errors, register checks) are reported against that origin, not
//! against a temporary file. Lines and their origins live together in
//! [`crate::base::document::Document`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where one output line came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Unchanged line `line` (1-based) of the source dump `file`.
    Source {
        /// The dumped asm file (shared by all its lines).
        file: Arc<Path>,
        /// 1-based line number in it.
        line: usize,
    },
    /// Added by hunk `hunk` (1-based) of a unified diff.
    Patch {
        /// The patch file (shared by all its lines).
        file: Arc<Path>,
        /// 1-based hunk number.
        hunk: usize,
        /// 1-based line of the `+` line inside the patch file.
        line: usize,
    },
    /// Written by a structured rule (shared: every line of a document has an
    /// origin, this is by far the largest kind, and the lines one rule
    /// writes, and every copy of them, share one).
    Rule(Arc<RuleOrigin>),
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

/// The rule that wrote a line ([`Origin::Rule`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleOrigin {
    /// The manifest that declares the rule.
    pub manifest: PathBuf,
    /// The kernel the rule belongs to.
    pub kernel: String,
    /// 1-based index of the rule in the source's rule list.
    pub index: usize,
    /// Short description, e.g. `move "s_waitcnt vmcnt(0)"`.
    pub what: String,
}

impl Origin {
    /// File and 1-based line a user can open, if the line exists in a file.
    pub fn file_line(&self) -> Option<(&Path, usize)> {
        match self {
            Origin::Source { file, line } => Some((file, *line)),
            Origin::Patch { file, line, .. } => Some((file, *line)),
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
            Origin::Rule(r) => write!(
                f,
                "rule #{} of kernel `{}` in {} ({})",
                r.index,
                r.kernel,
                r.manifest.display(),
                r.what
            ),
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
