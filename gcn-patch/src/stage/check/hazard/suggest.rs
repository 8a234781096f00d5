//! Safe-wait suggestions: for every wait, the loosest value that still covers
//! every later use, found by re-running the analysis with that one value
//! changed (a larger value never retires more, so the search is a bisection).

use std::collections::BTreeSet;

use super::analysis::Overrides;
use super::model::counter_index;
use super::{short, written, KernelAnalysis};
use crate::base::diag::{Code, Diagnostic};
use crate::base::document::Document;
use crate::base::isa::Counter;

/// One loosenable counter of one wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// 0-based line of the wait.
    pub line: usize,
    /// The counter.
    pub counter: Counter,
    /// Its value now.
    pub value: u32,
    /// The loosest value that adds no hazard; the counter's maximum means
    /// the wait covers nothing on this counter.
    pub loosest: u32,
    /// Every counter of this wait covers nothing: the wait can be deleted.
    pub whole_wait_useless: bool,
    /// Byte range of the value in the line.
    pub span: (usize, usize),
}

/// Every wait of `k` that could be loosened without a new hazard.
pub fn suggest(k: &KernelAnalysis) -> Vec<Suggestion> {
    let key = |ov: &Overrides| -> BTreeSet<(usize, usize)> {
        k.hazards(ov)
            .into_iter()
            .map(|h| (h.line, counter_index(h.counter)))
            .collect()
    };
    let rule = || Overrides {
        barrier_rule: true,
        tied_d16: true,
        ..Overrides::default()
    };
    let base = key(&rule());
    let ok = |line: usize, c: Counter, v: u32| {
        let mut ov = rule();
        ov.waits.insert((line, counter_index(c)), v);
        key(&ov).is_subset(&base)
    };
    let fences = fence_waits(k);
    let mut out = vec![];
    for (&line, values) in &k.wait_spans {
        if fences.contains(&line) {
            continue;
        }
        let mut found = vec![];
        for &(c, v, span) in values {
            let max = k.model.max(c);
            if v >= max {
                continue;
            }
            // Compiler waits are usually tight: one run decides those.
            let loosest = if !ok(line, c, v + 1) {
                v
            } else if ok(line, c, max) {
                max
            } else {
                // Largest value in [v + 1, max) that is still safe.
                let (mut lo, mut hi) = (v + 1, max);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if ok(line, c, mid) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                lo
            };
            found.push(Suggestion {
                line,
                counter: c,
                value: v,
                loosest,
                whole_wait_useless: false,
                span,
            });
        }
        // The whole wait can go only if all its counters can go together.
        let all_max = !values.is_empty()
            && values.len() == found.len()
            && found.iter().all(|s| s.loosest == k.model.max(s.counter))
            && {
                let mut ov = rule();
                for s in &found {
                    ov.waits
                        .insert((line, counter_index(s.counter)), k.model.max(s.counter));
                }
                key(&ov).is_subset(&base)
            };
        for mut s in found {
            if s.loosest > s.value {
                s.whole_wait_useless = all_max;
                out.push(s);
            }
        }
    }
    out
}

/// Waits that are half of a fence: followed, in their block and with no
/// memory operation in between, by a barrier or a cache invalidate /
/// write-back. LLVM's SIMemoryLegalizer emits them for workgroup
/// release/acquire (`s_waitcnt vmcnt(0)` before `s_barrier`, `lgkmcnt(0)`
/// before `buffer_gl0_inv`): they order memory for other waves, which a
/// register analysis cannot see, so they are never offered for loosening.
fn fence_waits(k: &KernelAnalysis) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for node in &k.cfg.nodes {
        for (i, inst) in node.insts.iter().enumerate() {
            if !k.waits.contains_key(&inst.line) {
                continue;
            }
            for next in &node.insts[i + 1..] {
                if next.effect.fence {
                    out.insert(inst.line);
                    break;
                }
                if !next.effect.events.is_empty() {
                    break;
                }
            }
        }
    }
    out
}

/// A suggestion as a note at the wait's origin.
pub fn render(doc: &Document, k: &KernelAnalysis, s: &Suggestion) -> Diagnostic {
    let asm = doc.asm();
    let text = asm.lines[s.line].text().trim().to_string();
    let max = k.model.max(s.counter);
    let d = if s.whole_wait_useless {
        Diagnostic::note(
            Code::WaitCoversNothing,
            format!(
                "kernel `{}`: `{text}` covers nothing: no later instruction needs it",
                k.name
            ),
        )
        .with_help(format!(
            "it can be deleted (at {})",
            doc.origin_text(s.line)
        ))
    } else if s.loosest == max {
        Diagnostic::note(
            Code::WaitCoversNothing,
            format!(
                "kernel `{}`: the {} part of `{text}` covers nothing",
                k.name, s.counter
            ),
        )
        .with_help(format!(
            "drop `{}` from this wait (or raise it to {max})",
            short(s.counter, s.value, k)
        ))
    } else {
        Diagnostic::note(
            Code::WaitCanBeLooser,
            format!(
                "kernel `{}`: `{text}` here could be `{}`",
                k.name,
                short(s.counter, s.loosest, k)
            ),
        )
        .with_help(format!(
            "`{}` → `{}`: every later use is still covered",
            written(k, asm, s.line, s.counter, s.value),
            written(k, asm, s.line, s.counter, s.loosest)
        ))
    };
    let label = if s.loosest == max {
        "covers nothing".to_string()
    } else {
        format!("could be {}", s.loosest)
    };
    doc.locate(
        d.with_note("each suggestion holds on its own: after applying one, lint again"),
        s.line,
        Some(s.span),
        label,
    )
}
