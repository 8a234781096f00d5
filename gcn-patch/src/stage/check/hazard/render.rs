//! A hazard as a diagnostic at its read: the producer, the register, the
//! pending operations and the fix.

use super::*;

/// An LDS access while an LDS DMA is pending whose byte ranges could not be
/// bounded: a warning naming both lines and what was not proven.
pub(super) fn render_may_alias(
    doc: &Document,
    k: &KernelAnalysis,
    h: &Hazard,
    why: &str,
) -> Diagnostic {
    let asm = doc.asm();
    let c = h.counter;
    let mn = |l: usize| {
        asm.lines[l]
            .instruction()
            .map(|i| i.mnemonic.to_string())
            .unwrap_or_default()
    };
    let producer_text = crate::base::parse::strip_comment(asm.lines[h.producer].text())
        .trim()
        .to_string();
    let wait = k
        .model
        .limits
        .wait_instruction(c, h.needed)
        .unwrap_or_else(|| format!("{c} {}", h.needed));
    let d = Diagnostic::warning(Code::LdsMayAlias, format!(
        "kernel `{}`: this `{}` may {} LDS that the `{}` at {} is still writing (may alias)",
        k.name,
        mn(h.line),
        if h.access == Access::Read { "read" } else { "write" },
        mn(h.producer),
        doc.origin_text(h.producer)
    ))
    .with_note(format!(
        "`{producer_text}` (LDS DMA) at {} has not completed here: {c} ≤ {} would cover it",
        doc.origin_text(h.producer),
        h.needed
    ))
    .with_note(format!("not proven disjoint: {why}"))
    .with_help(format!(
        "if the two can touch the same LDS bytes, insert `{wait}` before {}; compilers rely on alias information the asm does not carry (e.g. a double-buffered tile)",
        doc.origin_text(h.line)
    ));
    doc.locate(d, h.line, None, "may alias the pending LDS DMA")
}

/// A read with no wait on its counter between the producer and it (in the
/// same straight line of code): the number of instructions in between, the
/// code relying on the latency of the load.
pub(super) fn timing_reliant(asm: &AsmFile, k: &KernelAnalysis, h: &Hazard) -> Option<usize> {
    if h.access != Access::Read || h.producer >= h.line {
        return None;
    }
    let mut n = 0;
    for l in h.producer + 1..h.line {
        let line = &asm.lines[l];
        if line.label().is_some() {
            return None;
        }
        if line.instruction().is_some() {
            n += 1;
        }
        if k.waits
            .get(&l)
            .is_some_and(|ws| ws.iter().any(|(c, _)| *c == h.counter))
        {
            return None;
        }
    }
    Some(n)
}

pub(super) fn render_hazard(
    doc: &Document,
    k: &KernelAnalysis,
    h: &Hazard,
    policy: HazardPolicy,
    as_written: bool,
) -> Diagnostic {
    let asm = doc.asm();
    let limits = &k.model.limits;
    let c = h.counter;
    let producer_text = asm.lines[h.producer]
        .instruction()
        .map(|_| asm.lines[h.producer].text().trim().to_string())
        .unwrap_or_default();
    let producer_text = producer_text
        .split(&[';'][..])
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let producer_mn = producer_text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
    let pending: Vec<String> = h.pending.iter().map(|u| model::unit_name(*u)).collect();
    let wait = limits
        .wait_instruction(c, h.needed)
        .unwrap_or_else(|| format!("{c} {}", h.needed));
    let what = match h.access {
        Access::Read => match timing_reliant(asm, k, h).filter(|_| as_written) {
            Some(0) => format!(
                "`{}` is read right after the `{producer_mn}` that writes it with no wait (relies on latency)",
                h.register
            ),
            Some(n) => format!(
                "`{}` is read {n} instruction{} after the `{producer_mn}` that writes it with no wait (relies on latency)",
                h.register,
                if n == 1 { "" } else { "s" }
            ),
            None => format!(
                "`{}` is read before the `{producer_mn}` that writes it has completed",
                h.register
            ),
        },
        Access::Overwrite => format!(
            "`{}` is overwritten while the `{producer_mn}` that writes it may still be in flight",
            h.register
        ),
        Access::Barrier => format!(
            "barrier while the `{producer_mn}` of this wave may not have reached LDS: other waves may read stale data"
        ),
    };
    let msg = format!("kernel `{}`: {what}", k.name);
    let mut d = match policy {
        HazardPolicy::Error | HazardPolicy::Strict => Diagnostic::error(Code::WaitHazard, msg),
        HazardPolicy::Warn => Diagnostic::warning(Code::WaitHazard, msg),
    };
    let text = asm.lines[h.line].text();
    let span = register_span(text, &h.register);
    let label = match h.access {
        Access::Read => format!("reads {}", pending.join(", ")),
        Access::Overwrite => format!("overwrites {}", pending.join(", ")),
        Access::Barrier => "barrier".to_string(),
    };
    d = d.with_note(format!(
        "{} {} written by `{producer_text}` at {}",
        pending.join(", "),
        if pending.len() == 1 { "is" } else { "are" },
        doc.origin_text(h.producer)
    ));
    let state = if h.out_of_order {
        format!(
            "{c} here: up to {} operation(s) outstanding, completing out of order ({}), so only `{}` waits for it",
            h.outstanding,
            if c == Counter::Lgkmcnt || c == Counter::Kmcnt {
                "a scalar memory load, a message, a flat access or mixed LDS/SMEM operations are pending"
            } else {
                "a flat access or mixed operation types are pending"
            },
            limits.wait_instruction(c, 0).unwrap_or_default()
        )
    } else {
        format!(
            "{c} here: up to {} operation(s) outstanding, {} issued after that `{producer_mn}`, so a wait for {c} ≤ {} covers it",
            h.outstanding, h.newer, h.needed
        )
    };
    d = d.with_note(state);
    for (what, line) in [("this line", h.line), ("the producer", h.producer)] {
        if let Some(note) = msb_note(asm, k, what, line) {
            d = d.with_note(note);
        }
    }
    let mut fix_change = None;
    if let Some((wl, wv)) = h.last_wait {
        d = d.with_note(format!(
            "the last {c} wait on every path here is `{}` at {}",
            asm.lines[wl].text().trim(),
            doc.origin_text(wl)
        ));
        if wv > h.needed && wl > h.producer {
            fix_change = Some((wl, wv));
        }
    }
    if let Some((wl, wv)) = fix_change {
        d = d.with_help(format!(
            "`{}` → `{}` at {}",
            written(k, asm, wl, c, wv),
            written(k, asm, wl, c, h.needed),
            doc.origin_text(wl)
        ));
        d = d.with_help(format!(
            "or insert `{wait}` before {}",
            doc.origin_text(h.line)
        ));
    } else {
        d = d.with_help(format!(
            "insert `{wait}` before {}",
            doc.origin_text(h.line)
        ));
    }
    doc.locate(d, h.line, span, label)
}

/// gfx1250: a note naming the VGPRs of the instruction at `line` as the
/// MSBs control flow gives them, where they are not the written (or
/// llvm-objdump's annotated) ones.
fn msb_note(asm: &AsmFile, k: &KernelAnalysis, what: &str, line: usize) -> Option<String> {
    let r = k.cfg.msb.as_ref()?.resolved(asm, line)?;
    let ops = |i: &crate::base::parse::Instruction| {
        i.operands
            .iter()
            .map(|o| o.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!("{} {}", r.mnemonic, ops(&r));
    if let Some(d) = &r.dual {
        text.push_str(&format!(" :: {} {}", d.mnemonic, ops(d)));
    }
    Some(format!(
        "gfx1250: {what} names the VGPRs of `{text}` under the `s_set_vgpr_msb` control flow reaches it with (the text's registers are their low 8 bits)"
    ))
}
