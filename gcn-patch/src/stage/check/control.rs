//! Control-flow check: every path through a kernel leaves it on purpose.
//!
//! A wave runs until an instruction ends it. If a path through a kernel's
//! code reaches its last instruction and that instruction falls through (a
//! rule that replaced `s_endpgm` with `s_nop 0`, a deleted `s_endpgm`, a
//! conditional branch as the last instruction), the wave goes on executing
//! whatever the code object holds next: padding, another kernel, data. A
//! branch to a label of *another* kernel is the same mistake in another shape.
//! Neither is an assembler error, so this check reports them at the line
//! where control leaves, with the patch hunk or rule that wrote that line.
//!
//! Paths end at `s_endpgm`, `s_endpgm_saved` (and the other ends the
//! hazard model knows), a trap (`s_trap`), `s_setpc_b64` and indirect or
//! unstructured flow (not followed), and a call (`s_swappc_b64`,
//! `s_call_b64`) whose return is the kernel's last instruction is accepted as
//! a way out. Data in the code (`.long` words that are not a lifted raw
//! instruction) and branches whose target is not a label of the file are
//! not followed either: the check reports only what it can see, so it
//! stays silent on every unpatched compiler dump and lifted code object.

use std::collections::HashMap;

use crate::base::diag::{Code, Diagnostic, Severity};
use crate::base::document::Document;
use crate::base::parse::LineKind;
use crate::stage::check::hazard::model::{flow_of, Flow};

/// One way control leaves a kernel other than through an end instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Leak {
    /// The path runs past the kernel's last instruction.
    FallsOff,
    /// A branch into the code of another kernel (named).
    IntoKernel(String),
    /// A branch to a label after the kernel's last instruction.
    PastEnd(String),
}

/// A path that leaves a kernel through no end instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The kernel symbol.
    pub kernel: String,
    /// 0-based line of the instruction control leaves from.
    pub line: usize,
    /// How it leaves.
    pub leak: Leak,
}

/// An instruction (or data word) of a kernel's code, in order.
enum Item<'a> {
    /// An instruction (also a lifted raw one, by its decoded form).
    Inst(usize, &'a crate::base::parse::Instruction),
    /// Data in the code: where it goes is unknown.
    Data,
}

/// Every path of every kernel of `asm` that leaves its kernel through no end
/// instruction, in kernel and line order (one finding per line and kind).
pub fn findings(asm: &Document) -> Vec<Finding> {
    let file = asm.asm();
    let kernels = asm.kernels();
    // Every label inside a kernel's code: (kernel, index of the item it precedes).
    let mut items_of: Vec<Vec<Item>> = Vec::with_capacity(kernels.len());
    let mut labels: HashMap<&str, (usize, usize)> = HashMap::new();
    for (ki, k) in kernels.iter().enumerate() {
        let mut items = Vec::new();
        for b in &k.blocks {
            for idx in b.lines.clone() {
                let Some(line) = file.lines.get(idx) else {
                    continue;
                };
                if let Some(l) = line.label() {
                    labels.insert(l, (ki, items.len()));
                }
                if let Some(i) = line.instruction() {
                    items.push(Item::Inst(idx, i));
                } else if is_data(line.kind()) {
                    items.push(Item::Data);
                }
            }
        }
        items_of.push(items);
    }
    let mut out = Vec::new();
    for (ki, k) in kernels.iter().enumerate() {
        let items = &items_of[ki];
        if items.is_empty() {
            continue;
        }
        let mut seen = vec![false; items.len()];
        let mut work = vec![0usize];
        let mut found: Vec<(usize, Leak)> = Vec::new();
        while let Some(i) = work.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            let Item::Inst(line, inst) = &items[i] else {
                continue;
            };
            // Where control may go next: the next item, a label, or nowhere.
            let mut succs: Vec<Result<usize, Leak>> = Vec::new();
            let next = if i + 1 < items.len() {
                Ok(i + 1)
            } else {
                Err(Leak::FallsOff)
            };
            let to_label = |t: &str| match labels.get(t) {
                Some(&(other, _)) if other != ki => {
                    Some(Err(Leak::IntoKernel(kernels[other].name.clone())))
                }
                Some(&(_, at)) if at >= items.len() => Some(Err(Leak::PastEnd(t.into()))),
                Some(&(_, at)) => Some(Ok(at)),
                // Not a label of the file (an expression, a symbol of
                // another object): not followed.
                None => None,
            };
            match flow_of(inst) {
                _ if inst.mnemonic == "s_trap" => {}
                None | Some(Flow::Next) => succs.push(next),
                Some(Flow::Branch(t)) => {
                    succs.extend(to_label(&t));
                    succs.push(next);
                }
                Some(Flow::Jump(t)) => succs.extend(to_label(&t)),
                // A call returns to the next instruction; as the last one,
                // it is accepted as the kernel's way out.
                Some(Flow::Call) => succs.extend(next.ok().map(Ok)),
                Some(Flow::End | Flow::Indirect) => {}
            }
            for s in succs {
                match s {
                    Ok(at) => work.push(at),
                    Err(leak) => {
                        if !found.iter().any(|(l, k)| l == line && *k == leak) {
                            found.push((*line, leak));
                        }
                    }
                }
            }
        }
        found.sort_by_key(|(line, _)| *line);
        out.extend(found.into_iter().map(|(line, leak)| Finding {
            kernel: k.name.clone(),
            line,
            leak,
        }));
    }
    out
}

/// Data words in code that are not a lifted raw instruction.
fn is_data(kind: &LineKind) -> bool {
    match kind {
        LineKind::Directive { name, .. } => matches!(
            name.as_str(),
            ".long"
                | ".word"
                | ".short"
                | ".byte"
                | ".quad"
                | ".4byte"
                | ".2byte"
                | ".8byte"
                | ".inst"
        ),
        LineKind::LabeledLine { rest, .. } => is_data(rest),
        _ => false,
    }
}

/// The control-flow findings of `asm` as diagnostics (`label` names the job).
/// A finding the unpatched `original` has too, at a line of the same text in
/// the same kernel, is inherited: a warning. Every other one is an error.
pub fn check_control(asm: &Document, original: Option<&Document>, label: &str) -> Vec<Diagnostic> {
    let found = findings(asm);
    if found.is_empty() {
        return Vec::new();
    }
    let key = |doc: &Document, f: &Finding| {
        (
            f.kernel.clone(),
            f.leak.clone(),
            doc.text(f.line).trim().to_string(),
        )
    };
    let inherited: std::collections::HashSet<_> = original
        .map(|o| findings(o).iter().map(|f| key(o, f)).collect())
        .unwrap_or_default();
    found
        .iter()
        .map(|f| {
            let text = asm.text(f.line).trim().to_string();
            let (message, here, note) = match &f.leak {
                Leak::FallsOff => (
                    format!(
                        "{label}: control can run off the end of kernel `{}`",
                        f.kernel
                    ),
                    "the kernel's last instruction: execution continues past it",
                    "a path through the kernel reaches its last instruction and does not end there: \
                     the wave would go on executing whatever follows in the code object \
                     (padding, the next kernel, data)"
                        .to_string(),
                ),
                Leak::IntoKernel(other) => (
                    format!(
                        "{label}: kernel `{}` branches into the code of kernel `{other}`",
                        f.kernel
                    ),
                    "branches into another kernel",
                    format!("the target is a label of `{other}`: a kernel's paths stay in its own code"),
                ),
                Leak::PastEnd(t) => (
                    format!(
                        "{label}: kernel `{}` branches to `{t}`, past its last instruction",
                        f.kernel
                    ),
                    "branches past the kernel's end",
                    "nothing follows the label in the kernel's code: the wave would run off its end"
                        .to_string(),
                ),
            };
            let mut d = asm.locate(Diagnostic::error(Code::ControlFlowLeak, message), f.line, None, here);
            d = d.with_note(note);
            if inherited.contains(&key(asm, f)) {
                d.severity = Severity::Warning;
                d = d.with_note(
                    "the unpatched source has this too (inherited): not an error; a patch that changes it is",
                );
            } else {
                d = d.with_help(format!(
                    "end every path with `s_endpgm` (or branch to a block that does): check the \
                     patches and rules that changed `{}` near `{text}` — a replaced or deleted \
                     `s_endpgm`, or a branch retargeted to the wrong label",
                    f.kernel
                ));
            }
            d
        })
        .collect()
}
