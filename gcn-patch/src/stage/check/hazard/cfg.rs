//! Control flow of one kernel: basic blocks split at labels and after
//! branches, with fall-through and branch edges.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use super::model::{Effect, Flow, Model};
use crate::base::parse::{AsmFile, Instruction};
use crate::stage::check::msb;

/// One instruction of a kernel with its effect.
#[derive(Debug, Clone)]
pub struct Inst {
    /// 0-based line in the file.
    pub line: usize,
    /// What it does: shared by the instructions of the kernel with the
    /// same effect (unrolled code repeats its registers), so an instruction
    /// costs 16 bytes here and each distinct effect is kept once.
    pub effect: Arc<Effect>,
}

/// A basic block: straight-line instructions.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// Instructions in order.
    pub insts: Vec<Inst>,
    /// Successor nodes.
    pub succs: Vec<usize>,
}

/// Something the CFG could not follow (reported as a warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfollowed {
    /// 0-based line.
    pub line: usize,
    /// What and what the analysis assumes.
    pub what: String,
}

/// The control-flow graph of one kernel; node 0 is the entry.
#[derive(Debug, Clone, Default)]
pub struct Cfg {
    /// Nodes; node 0 is the kernel entry (nothing pending).
    pub nodes: Vec<Node>,
    /// Control flow the analysis cannot follow.
    pub unfollowed: Vec<Unfollowed>,
    /// gfx1250: the VGPR MSBs control flow gives each instruction (`None`
    /// when the kernel never sets them); the effects are of the
    /// instructions it re-maps.
    pub(crate) msb: Option<msb::Flow>,
}

impl Cfg {
    /// The instruction at `line` as the analyses read it: on gfx1250 with
    /// the VGPRs the wave names under the MSBs control flow gives
    /// ([`msb::Flow::resolved`]), else as parsed.
    pub fn instruction<'a>(
        &self,
        asm: &'a AsmFile,
        line: usize,
    ) -> Option<std::borrow::Cow<'a, Instruction>> {
        if let Some(r) = self.msb.as_ref().and_then(|f| f.resolved(asm, line)) {
            return Some(std::borrow::Cow::Owned(r));
        }
        asm.lines
            .get(line)?
            .instruction()
            .map(std::borrow::Cow::Borrowed)
    }
}

/// Build the CFG of the instructions in `ranges` (line ranges of the kernel's
/// label blocks, in file order).
pub fn build(asm: &AsmFile, ranges: &[Range<usize>], model: &Model) -> Cfg {
    let mut nodes: Vec<Node> = vec![Node::default()];
    let mut labels: HashMap<String, usize> = HashMap::new();
    // (node, flow, line) of each node's last instruction, resolved below.
    let mut exits: Vec<(usize, Flow, usize)> = vec![];
    let mut cur = 0usize;
    // The distinct effects seen so far (dropped after the build).
    let mut seen: HashSet<Arc<Effect>, foldhash::fast::FixedState> = HashSet::default();
    // (A fast, fixed hash: the keys are the kernel's own effects, not
    // untrusted input that could aim at collisions.)
    for range in ranges {
        for idx in range.clone() {
            let Some(line) = asm.lines.get(idx) else {
                continue;
            };
            if let Some(label) = line.label() {
                // A label starts a block, entered by falling through.
                if !nodes[cur].insts.is_empty() {
                    let next = nodes.len();
                    nodes.push(Node::default());
                    nodes[cur].succs.push(next);
                    cur = next;
                }
                labels.insert(label.to_string(), cur);
            }
            let Some(inst) = line.instruction() else {
                continue;
            };
            let effect = model.effect(inst);
            let flow = effect.flow.clone();
            let effect = match seen.get(&effect) {
                Some(e) => e.clone(),
                None => {
                    let e = Arc::new(effect);
                    seen.insert(e.clone());
                    e
                }
            };
            nodes[cur].insts.push(Inst { line: idx, effect });
            if flow != Flow::Next {
                // The instruction ends its block; only a conditional branch
                // or a call falls through to the next one (code after an
                // unconditional jump without a label is unreachable).
                exits.push((cur, flow.clone(), idx));
                let next = nodes.len();
                nodes.push(Node::default());
                if matches!(flow, Flow::Branch(_) | Flow::Call) {
                    nodes[cur].succs.push(next);
                }
                cur = next;
            }
        }
    }
    // The analysis keeps every block while it runs: no growth slack.
    for n in &mut nodes {
        n.insts.shrink_to_fit();
    }
    let mut unfollowed = vec![];
    for (node, flow, line) in exits {
        match flow {
            Flow::Jump(t) | Flow::Branch(t) => match labels.get(&t) {
                Some(&n) => nodes[node].succs.push(n),
                None => unfollowed.push(Unfollowed {
                    line,
                    what: format!(
                        "branch to `{t}`, which is not a label of this kernel: the path is not followed"
                    ),
                }),
            },
            Flow::Call => unfollowed.push(Unfollowed {
                line,
                what: "call: the callee is not analysed; assumed to follow the AMDGPU calling convention (it waits for every counter at entry and before it returns, as SIInsertWaitcnts does for non-kernel functions)".into(),
            }),
            Flow::Indirect => unfollowed.push(Unfollowed {
                line,
                what: "indirect or unstructured control flow: where it continues is unknown, the path is not followed".into(),
            }),
            Flow::End | Flow::Next => {}
        }
    }
    // gfx1250: each instruction's effect is of the VGPRs the wave names
    // under the MSBs control flow gives (not llvm-objdump's annotations).
    let blocks: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| n.insts.iter().map(|i| i.line).collect())
        .collect();
    let succs: Vec<Vec<usize>> = nodes.iter().map(|n| n.succs.clone()).collect();
    let msb = msb::Flow::over(asm, &blocks, &succs);
    if let Some(f) = &msb {
        for inst in nodes.iter_mut().flat_map(|n| &mut n.insts) {
            if let Some(r) = f.resolved(asm, inst.line) {
                let effect = model.effect(&r);
                inst.effect = match seen.get(&effect) {
                    Some(e) => e.clone(),
                    None => {
                        let e = Arc::new(effect);
                        seen.insert(e.clone());
                        e
                    }
                };
            }
        }
    }
    Cfg {
        nodes,
        unfollowed,
        msb,
    }
}
