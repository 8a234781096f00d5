//! Structured rewrite rules as `kernels.toml` writes them: the schema, read
//! and validated into [`Rule`]s. Applying them is
//! `crate::stage::patch::rules`'s job.
//!
//!
//! Each `[[kernel.source.rule]]` has exactly one *kind* key (`move`,
//! `replace`, `insert`, `delete`, `set-waitcnt`, `set`), whose value is the
//! pattern selecting the lines it acts on, plus optional keys:
//!
//! | key | meaning |
//! |---|---|
//! | `regex = true` | the rule's pattern is a regex (whole-line match on the normalized text; `$1` usable in `with`); `move` anchors stay literal |
//! | `kernel = "sym"` | only inside kernel symbol `sym` (its code, descriptor, `.set`s and metadata entry) |
//! | `block = ".LBB0_1"` | only inside that basic block (from its label to the next label or branch/`s_endpgm`) |
//! | `occurrence = N` / `"last"` | act on the Nth (1-based) / last match only |
//! | `expect = N` / `"any"` | number of matches required (default 1; with `occurrence`, at least N); `"any"` (alias `"all"`): at least one, all acted on |
//! | `before = "pat"` / `after = "pat"` | anchor of `move` / `insert`, searched in the same scope |
//! | `anchor-occurrence = N` / `"last"` | `move` only: which anchor match (default: the anchor must match exactly once); an `insert`'s anchor is its pattern, so `occurrence` picks it |
//!
//! **Patterns.** A pattern ending in `:` matches label lines; one starting
//! with `.` matches directive lines; anything else matches instruction lines.
//! Matching is on normalized text: trailing `;` comments dropped, whitespace
//! runs collapsed, `", "` after every comma. A literal pattern matches a line
//! whose normalized text is equal, or — if the pattern is a bare mnemonic
//! (`buffer_load_dwordx4`) — every instruction with that mnemonic.
//!
//! ```toml
//! # move every matching line (in order) to just before/after an anchor
//! [[kernel.source.rule]]
//! move = 'v_add_u32_e32 v1(0[5-9]|1[01]), 0x[0-9a-f]+, v104'
//! regex = true
//! expect = 7
//! before = "buffer_load_dwordx4 v[34:37], v50, s[12:15], 0 offen"
//! block = ".LBB0_1"
//!
//! # replace (regex captures usable in `with`; `with` may hold several lines)
//! [[kernel.source.rule]]
//! replace = 's_waitcnt vmcnt\((\d+)\)'
//! regex = true
//! occurrence = 1
//! expect = "any"
//! with = 's_waitcnt vmcnt($1) ; was here'
//!
//! # insert lines before/after an anchor (indented like the anchor)
//! [[kernel.source.rule]]
//! insert = ["s_setprio 1"]
//! before = "v_mfma_f32_16x16x16_f16"
//! anchor-occurrence = 1
//!
//! # delete
//! [[kernel.source.rule]]
//! delete = "s_waitcnt vmcnt(10)"
//!
//! # change one counter of a wait, keeping the others
//! [[kernel.source.rule]]
//! set-waitcnt = "s_waitcnt vmcnt(11)"
//! counter = "vmcnt"        # gfx12: loadcnt/dscnt/kmcnt/...; vmcnt→loadcnt, lgkmcnt→dscnt|kmcnt accepted
//! value = 8
//!
//! # set a descriptor field, a metadata value or a `.set` symbol
//! [[kernel.source.rule]]
//! set = ".amdhsa_next_free_vgpr"   # or ".vgpr_count" (metadata) or ".num_vgpr" (suffix of a .set symbol)
//! value = 128
//! ```
//!

use regex::Regex;
use serde::Deserialize;

use crate::base::diag::{Code, Diagnostic, Location};
pub use crate::base::document::Position;
use crate::base::isa::Counter;

/// A rule as written in TOML (validated into [`Rule`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawRule {
    #[serde(rename = "move")]
    mv: Option<String>,
    replace: Option<String>,
    insert: Option<OneOrMany>,
    delete: Option<String>,
    set_waitcnt: Option<String>,
    set: Option<String>,
    with: Option<String>,
    counter: Option<String>,
    value: Option<IntOrString>,
    before: Option<String>,
    after: Option<String>,
    anchor_occurrence: Option<Occurrence>,
    #[serde(default)]
    regex: bool,
    kernel: Option<String>,
    block: Option<String>,
    occurrence: Option<Occurrence>,
    expect: Option<Expect>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum IntOrString {
    Int(i64),
    Str(String),
}

/// Which match to act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurrence {
    /// The Nth (1-based: never 0).
    Nth(usize),
    /// `"last"`.
    Last(LastKw),
}

/// `occurrence` / `anchor-occurrence`: a count from 1, or `"last"`. Checked
/// while the TOML is read, so a bad value is an error at its own key.
impl<'de> Deserialize<'de> for Occurrence {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Occurrence;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a match number counted from 1, or \"last\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Occurrence, E> {
                match usize::try_from(v) {
                    Ok(n) if n >= 1 => Ok(Occurrence::Nth(n)),
                    _ => Err(E::custom(format!(
                        "occurrences count from 1: {v} is not valid (1 is the first match; \"last\" the last)"
                    ))),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Occurrence, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(-1))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Occurrence, E> {
                match v {
                    "last" => Ok(Occurrence::Last(LastKw::Last)),
                    _ => Err(E::custom(format!(
                        "unknown occurrence \"{v}\": write a match number counted from 1, or \"last\""
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The keyword `"last"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastKw {
    /// `"last"`.
    Last,
}

/// How many matches a rule expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Exactly N (at least N with `occurrence`).
    Exactly(usize),
    /// `"any"`: at least one.
    Any(AnyKw),
}

/// `expect`: a number of matches (at least 1), or `"any"`/`"all"`. Checked
/// while the TOML is read, so a bad value is an error at its own key.
impl<'de> Deserialize<'de> for Expect {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Expect;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of matches (at least 1), or \"any\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Expect, E> {
                match usize::try_from(v) {
                    Ok(n) if n >= 1 => Ok(Expect::Exactly(n)),
                    Ok(_) => Err(E::custom(
                        "`expect = 0` would let the rule act on nothing: a rule acts on at least one line (remove the rule, or state the number of lines it must match)",
                    )),
                    Err(_) => Err(E::custom(format!(
                        "`expect` must be a number of matches or \"any\", not {v}"
                    ))),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Expect, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(-1))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Expect, E> {
                match v {
                    "any" | "all" => Ok(Expect::Any(AnyKw::Any)),
                    _ => Err(E::custom(format!(
                        "`expect` must be a number of matches or \"any\", not \"{v}\""
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The keyword `"any"` (alias `"all"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnyKw {
    /// `"any"` / `"all"`.
    Any,
}

/// Anchor of a `move` or `insert`.
#[derive(Debug, Clone)]
pub struct Anchor {
    /// Before or after.
    pub position: Position,
    /// Pattern of the anchor line.
    pub pattern: Pattern,
    /// Which anchor match; `None`: exactly one required.
    pub occurrence: Option<Occurrence>,
}

/// What a rule does.
#[derive(Debug, Clone)]
pub enum RuleKind {
    /// Move the matched lines (in order) next to the anchor.
    Move(Anchor),
    /// Replace each matched line by `with` (regex captures expanded).
    Replace {
        /// Replacement text; `\n` separates lines.
        with: String,
    },
    /// Insert `lines` next to each matched anchor (the rule's pattern is the anchor).
    Insert {
        /// Lines to insert.
        lines: Vec<String>,
        /// Before or after the matched line.
        position: Position,
    },
    /// Delete the matched lines.
    Delete,
    /// Set one counter of the matched wait instructions.
    SetWaitcnt {
        /// Counter as written (`vmcnt`, `lgkmcnt`, `loadcnt`, …).
        counter: String,
        /// New value.
        value: u32,
    },
    /// Set a descriptor field, metadata value or `.set` symbol (the pattern is its name).
    Set {
        /// New value, verbatim.
        value: String,
    },
}

/// A line pattern (see the module docs).
#[derive(Debug, Clone)]
pub struct Pattern {
    /// As written.
    pub text: String,
    /// Compiled, anchored regex when `regex = true`.
    pub regex: Option<Regex>,
}

/// A validated structured rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// 1-based index in its source's rule list.
    pub index: usize,
    /// What it does.
    pub kind: RuleKind,
    /// The lines it acts on (the anchor, for `insert`; the name, for `set`).
    pub pattern: Pattern,
    /// `kernel = …`: kernel symbol scope.
    pub kernel: Option<String>,
    /// `block = …`: basic block scope.
    pub block: Option<String>,
    /// `occurrence = …`.
    pub occurrence: Option<Occurrence>,
    /// `expect = …` (default exactly 1).
    pub expect: Expect,
    /// Where the rule is written in the manifest.
    pub at: Location,
}

impl Pattern {
    pub(crate) fn new(text: &str, regex: bool, at: &Location) -> Result<Pattern, Diagnostic> {
        let text = text.trim().to_string();
        if text.is_empty() {
            return Err(
                Diagnostic::error(Code::RuleInvalid, "empty pattern in rule")
                    .at(at.clone())
                    .with_help("give the line to match, e.g. `delete = \"s_nop 0\"`"),
            );
        }
        let regex = if regex {
            Some(Regex::new(&format!("^(?:{text})$")).map_err(|e| {
                Diagnostic::error(Code::InvalidRegex, format!("invalid regex `{text}`"))
                    .at(at.clone())
                    .with_note(e.to_string())
                    .with_help(
                        "remove `regex = true` to match literally, or escape `( ) [ ] .` with `\\`",
                    )
            })?)
        } else {
            None
        };
        Ok(Pattern { text, regex })
    }
}

impl Rule {
    pub(crate) fn from_raw(index: usize, r: &RawRule, at: Location) -> Result<Rule, Diagnostic> {
        let kinds: Vec<&str> = [
            ("move", r.mv.is_some()),
            ("replace", r.replace.is_some()),
            ("insert", r.insert.is_some()),
            ("delete", r.delete.is_some()),
            ("set-waitcnt", r.set_waitcnt.is_some()),
            ("set", r.set.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, on)| on.then_some(k))
        .collect();
        let err = |m: String| Diagnostic::error(Code::RuleInvalid, m).at(at.clone());
        if kinds.len() != 1 {
            return Err(err(format!(
                "rule #{index} must have exactly one of `move`, `replace`, `insert`, `delete`, `set-waitcnt`, `set` (found {})",
                if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") }
            ))
            .with_help("split it into one rule per edit"));
        }
        let kind_name = kinds[0];
        let allowed: &[&str] = match kind_name {
            "move" => &["before", "after", "anchor-occurrence"],
            "replace" => &["with"],
            "insert" => &["before", "after"],
            "set-waitcnt" => &["counter", "value"],
            "set" => &["value"],
            _ => &[],
        };
        for (key, on) in [
            ("with", r.with.is_some()),
            ("counter", r.counter.is_some()),
            ("value", r.value.is_some()),
            ("before", r.before.is_some()),
            ("after", r.after.is_some()),
            ("anchor-occurrence", r.anchor_occurrence.is_some()),
        ] {
            if on && !allowed.contains(&key) {
                let an = if kind_name.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                let mut help = format!(
                    "{an} `{kind_name}` rule takes {}",
                    if allowed.is_empty() {
                        "no extra keys besides the scope keys".to_string()
                    } else {
                        allowed
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                );
                if kind_name == "insert" && key == "anchor-occurrence" {
                    // An insert's pattern is its anchor: `occurrence` picks it.
                    help.push_str(
                        "; to pick which match of its anchor to insert at, use \
                         `occurrence = N` / \"last\" (an insert's anchor is its pattern)",
                    );
                }
                return Err(
                    err(format!("`{key}` does not apply to {an} `{kind_name}` rule"))
                        .with_help(help),
                );
            }
        }
        let position = || match (&r.before, &r.after) {
            (Some(b), None) => Ok((Position::Before, b.as_str())),
            (None, Some(a)) => Ok((Position::After, a.as_str())),
            _ => Err(err(format!(
                "a `{kind_name}` rule needs exactly one of `before` or `after`"
            ))),
        };
        let (pattern, kind) = match kind_name {
            "move" => {
                let (position, anchor) = position()?;
                (
                    r.mv.as_deref().unwrap_or_default(),
                    RuleKind::Move(Anchor {
                        position,
                        pattern: Pattern::new(anchor, false, &at)?,
                        occurrence: r.anchor_occurrence,
                    }),
                )
            }
            "replace" => {
                let with = r.with.clone().ok_or_else(|| {
                    err("a `replace` rule needs `with = \"…\"`".into())
                        .with_help("to remove lines use a `delete` rule")
                })?;
                (
                    r.replace.as_deref().unwrap_or_default(),
                    RuleKind::Replace { with },
                )
            }
            "insert" => {
                let (position, anchor) = position()?;
                let lines = match &r.insert {
                    Some(OneOrMany::One(s)) => s.lines().map(str::to_owned).collect(),
                    // An entry holding newlines is several lines, as in the one-string form.
                    Some(OneOrMany::Many(v)) => v
                        .iter()
                        .flat_map(|s| s.lines().map(str::to_owned))
                        .collect(),
                    None => vec![],
                };
                if lines.is_empty() {
                    return Err(err("`insert` has no lines".into()));
                }
                (anchor, RuleKind::Insert { lines, position })
            }
            "delete" => (r.delete.as_deref().unwrap_or_default(), RuleKind::Delete),
            "set-waitcnt" => {
                let counter = r.counter.clone().ok_or_else(|| {
                    err("a `set-waitcnt` rule needs `counter` (vmcnt, lgkmcnt, expcnt, vscnt, loadcnt, storecnt, dscnt, kmcnt, samplecnt, bvhcnt)".into())
                })?;
                if Counter::from_name(&counter).is_none() {
                    return Err(err(format!("unknown wait counter `{counter}`")).with_help(
                        "use vmcnt, lgkmcnt, expcnt, vscnt (gfx9–11) or loadcnt, storecnt, dscnt, kmcnt, samplecnt, bvhcnt, expcnt (gfx12)",
                    ));
                }
                let value = match &r.value {
                    Some(IntOrString::Int(v)) if *v >= 0 && *v <= u32::MAX as i64 => *v as u32,
                    _ => {
                        return Err(err(
                            "a `set-waitcnt` rule needs `value = <non-negative integer>`".into(),
                        ))
                    }
                };
                (
                    r.set_waitcnt.as_deref().unwrap_or_default(),
                    RuleKind::SetWaitcnt { counter, value },
                )
            }
            _ => {
                let value = match &r.value {
                    Some(IntOrString::Int(v)) => v.to_string(),
                    Some(IntOrString::Str(s)) => s.clone(),
                    None => return Err(err("a `set` rule needs `value = …`".into())),
                };
                let name = r.set.as_deref().unwrap_or_default();
                if value.contains(['\n', '\r']) {
                    return Err(err(format!(
                        "`set = \"{name}\"`: the value must be one line (it replaces the value on the field's own line)"
                    ))
                    .with_help("to add lines, use an `insert` rule"));
                }
                if !name.starts_with('.') && !name.contains('.') {
                    return Err(err(format!("`set = \"{name}\"`: expected a descriptor field (.amdhsa_…), a metadata key (.vgpr_count) or a `.set` symbol")));
                }
                (name, RuleKind::Set { value })
            }
        };
        let regex = r.regex && !matches!(kind, RuleKind::Set { .. });
        Ok(Rule {
            index,
            pattern: Pattern::new(pattern, regex, &at)?,
            kind,
            kernel: r.kernel.clone(),
            block: r.block.clone(),
            occurrence: r.occurrence,
            expect: r.expect.unwrap_or(Expect::Exactly(1)),
            at,
        })
    }

    /// Short description used in origins, e.g. ``move `s_waitcnt vmcnt(0)` ``.
    pub fn what(&self) -> String {
        let p = &self.pattern.text;
        match &self.kind {
            RuleKind::Move(a) => format!(
                "move `{p}` {} `{}`",
                if a.position == Position::Before {
                    "before"
                } else {
                    "after"
                },
                a.pattern.text
            ),
            RuleKind::Replace { .. } => format!("replace `{p}`"),
            RuleKind::Insert { position, .. } => format!(
                "insert {} `{p}`",
                if *position == Position::Before {
                    "before"
                } else {
                    "after"
                }
            ),
            RuleKind::Delete => format!("delete `{p}`"),
            RuleKind::SetWaitcnt { counter, value } => {
                format!("set-waitcnt {counter}={value} on `{p}`")
            }
            RuleKind::Set { value } => format!("set {p} = {value}"),
        }
    }
}
