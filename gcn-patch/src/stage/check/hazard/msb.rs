//! gfx1250's VGPR MSBs by control flow for the hazard check: the
//! registers an instruction names are the low 8 bits of its VGPR operands
//! and the two high bits the `s_set_vgpr_msb` the wave last *executed*
//! gives their slots, not those llvm-objdump's `/*v1020*/` annotations
//! assume (it resets them to 0 after each branch, `s_endpgm` and `.long`
//! word). The slot table and the MSB-state sets are gcn-raw's
//! ([`gcn_raw::msb`]), shared with gcn-emu's `decode::msb`; the dataflow
//! here runs over the check's control-flow graph.

use gcn_raw::msb::{field, operand_slots, sets, Insn, Slots, State, States};

use super::cfg::Cfg;
use crate::base::parse::{AsmFile, Instruction, Operand, RegFile, RegisterRef};

#[cfg(test)]
thread_local! {
    /// Tests: take the registers as annotated (the check before the MSBs
    /// were resolved), to compare verdicts.
    pub(super) static LISTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A parsed instruction seen by [`gcn_raw::msb`]: only `s_set_vgpr_msb`'s
/// immediate is read.
struct Parsed<'a>(&'a Instruction);

impl Insn for Parsed<'_> {
    fn mnemonic(&self) -> &str {
        &self.0.mnemonic
    }
    fn addr(&self) -> u64 {
        0
    }
    fn first_word(&self) -> Option<u32> {
        self.0.operands.iter().find_map(|o| match o {
            Operand::Integer(v) => Some(*v as u32),
            _ => None,
        })
    }
}

fn reg_mut(o: &mut Operand) -> Option<&mut RegisterRef> {
    match o {
        Operand::Register(r) => Some(r),
        Operand::Neg(o) | Operand::Abs(o) | Operand::Sext(o) => reg_mut(o),
        _ => None,
    }
}

/// The slots of `i`'s (and its VOPD half's) VGPR operands, as a mask of
/// MSB-state bits; `None` for a format with no slot table.
fn used_bits(i: &Instruction) -> Option<State> {
    let mut bits = 0;
    for half in std::iter::once(i).chain(i.dual.as_deref()) {
        let th = half
            .modifier_value("th")
            .is_some_and(|t| t.contains("RETURN"));
        match operand_slots(&half.mnemonic, half.operands.len(), th) {
            Slots::Fields(f) => {
                for (k, o) in half.operands.iter().enumerate() {
                    if let (Some(r), Some(Some(s))) = (o.register(), f.get(k)) {
                        if r.file == RegFile::Vgpr {
                            bits |= 3 << (2 * s);
                        }
                    }
                }
            }
            Slots::Ignored => {}
            Slots::Unknown => return None,
        }
    }
    Some(bits)
}

/// `i` with its VGPR operands re-mapped to `state`: the low 8 bits as
/// written, the high two from the state's field of each one's slot.
pub(super) fn remap(i: &Instruction, state: State) -> Instruction {
    let mut out = i.clone();
    remap_half(&mut out, state);
    if let Some(d) = out.dual.as_deref_mut() {
        remap_half(d, state);
    }
    out
}

fn remap_half(half: &mut Instruction, state: State) {
    let th = half
        .modifier_value("th")
        .is_some_and(|t| t.contains("RETURN"));
    let Slots::Fields(f) = operand_slots(&half.mnemonic, half.operands.len(), th) else {
        return;
    };
    for (k, o) in half.operands.iter_mut().enumerate() {
        if let (Some(r), Some(Some(s))) = (reg_mut(o), f.get(k)) {
            if r.file == RegFile::Vgpr {
                let first = (r.first & 0xff) | u32::from(field(state, *s)) << 8;
                r.last = first + (r.last - r.first);
                r.first = first;
            }
        }
    }
}

/// For each line of `lines` (the instruction lines of each node of
/// `cfg`), the MSB state control flow gives the VGPR operands of its
/// instruction, where the states reaching it agree on the slots it uses;
/// `None` for the whole kernel when it never sets the MSBs (every line
/// stands as parsed).
pub(super) fn states(
    asm: &AsmFile,
    cfg: &Cfg,
    lines: &[Vec<usize>],
) -> Option<std::collections::HashMap<usize, State>> {
    #[cfg(test)]
    if LISTED.with(|c| c.get()) {
        return None;
    }
    let inst = |l: usize| asm.lines.get(l).and_then(|x| x.instruction());
    if !lines
        .iter()
        .flatten()
        .any(|&l| inst(l).is_some_and(|i| sets(&Parsed(i)).is_some()))
    {
        return None;
    }
    let n = lines.len();
    let mut entry = vec![States::default(); n];
    if n > 0 {
        entry[0].insert(0);
    }
    let mut work: Vec<usize> = (0..n.min(1)).collect();
    let mut queued = vec![false; n];
    if n > 0 {
        queued[0] = true;
    }
    let transfer = |node: usize, s: &States| -> States {
        let mut cur = *s;
        for &l in &lines[node] {
            if let Some(set) = inst(l).and_then(|i| sets(&Parsed(i))) {
                cur = States::default();
                cur.insert(set);
            }
        }
        cur
    };
    while let Some(b) = work.pop() {
        queued[b] = false;
        let out = transfer(b, &entry[b]);
        for &t in cfg.nodes.get(b).map_or(&[][..], |x| &x.succs[..]) {
            if t >= n {
                continue;
            }
            let mut grew = false;
            for s in out.iter() {
                grew |= entry[t].insert(s);
            }
            if grew && !queued[t] {
                queued[t] = true;
                work.push(t);
            }
        }
    }
    let mut at = std::collections::HashMap::new();
    for (b, ls) in lines.iter().enumerate() {
        let mut cur = entry[b];
        for &l in ls {
            let Some(i) = inst(l) else { continue };
            if let Some(set) = sets(&Parsed(i)) {
                cur = States::default();
                cur.insert(set);
                continue;
            }
            if let Some(s) = used_bits(i).and_then(|bits| cur.agreed(bits)) {
                at.insert(l, s);
            }
        }
    }
    Some(at)
}
