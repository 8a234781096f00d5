//! gfx1250's VGPR MSBs, resolved by control flow.
//!
//! gfx1250 has 1024 VGPRs, but an operand field holds 8 bits of the VGPR
//! number. `s_set_vgpr_msb N` sets, for the instructions run after it, the
//! two high bits of four operand *slots*: bits 1:0 of `N` for slot 0, 3:2
//! for slot 1, 5:4 for slot 2, 7:6 for slot 3 (bits 15:8 are the compiler's
//! record of the previous mode; LLVM's `AMDGPULowerVGPREncoding` writes
//! them, nothing reads them). Which operand of an instruction takes which
//! slot depends on its format: LLVM's `AMDGPU::getVGPRLoweringOperandTables`
//! (llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp), which its
//! disassembler reads to print the register an operand names
//! (`v252 /*v1020*/`), maps
//!
//! | format | slot 0 | slot 1 | slot 2 | slot 3 |
//! |---|---|---|---|---|
//! | VALU (VOP1/2/3/3P/C, DPP, WMMA) | src0 | src1 | src2 | vdst |
//! | `v_fmamk_*` (literal second) | src0 | - | src1 | vdst |
//! | VOPD (each half) | src0 | vsrc1 | vsrc2 | vdst |
//! | DS | addr | data0 | data1 | vdst |
//! | FLAT, GLOBAL, SCRATCH | vaddr | vdata | - | vdst |
//! | MUBUF, MTBUF | vaddr | - | - | vdata |
//!
//! and no slot to `v_wmma_ld_scale*_paired_*` or to the scale operands of
//! `v_wmma_scale*` (they are used as encoded). [`operand_slots`] is that
//! table over the operands as llvm-objdump prints them; the test
//! `vgpr_msb::slot_table_agrees_with_llvm_objdump` checks it against
//! llvm-objdump-22 on every instruction shape of aiter's gfx1250 sample.
//!
//! llvm-objdump takes the MSBs from the last `s_set_vgpr_msb` before an
//! instruction *in the listing*, and assumes 0 after each branch,
//! `s_endpgm` and `.long` word (LLVM's own code starts every block under
//! 0); the wave runs with those of the last one it *executed*. `resolve`
//! (run by [`Program::parse_listing_for`] on gfx1250) computes, by a
//! forward dataflow over the kernel's control flow from its entry (MSBs 0
//! at wave start; `s_set_vgpr_msb` sets them; fall-through, `s_branch`,
//! `s_cbranch_*`, `s_call_*`), the MSB states reaching each instruction,
//! and where the states that reach an instruction agree on the slots its
//! VGPR operands use, re-maps those operands: the low 8 bits as printed,
//! the high two from that state. `check` ([`Program::check_vgpr_msb`],
//! each gfx1250 dispatch, before anything runs) refuses a kernel where
//! that could not be done: an indirect jump (`s_setpc_b64`,
//! `s_swappc_b64`, `s_rfe_b64` and their gfx12 names) in a kernel that
//! sets the MSBs, a branch out of the kernel, an instruction reached under
//! MSB states that differ in a slot it uses (naming the two
//! predecessors), or one whose format has no slot table here and whose
//! listed MSBs are not the ones control flow gives. `s_set_vgpr_msb` then
//! runs as a no-op.

use super::{Instruction, Operand, Program, RegFile};
use crate::load::Kernel;
use crate::{Error, Result};

use gcn_raw::msb::{field, flow as raw_flow, listed as raw_listed, next, Insn, Next, Problem};
pub use gcn_raw::msb::{Slots, State, States};

impl Insn for Instruction {
    fn mnemonic(&self) -> &str {
        &self.mnemonic
    }
    fn addr(&self) -> u64 {
        self.addr
    }
    fn first_word(&self) -> Option<u32> {
        self.words.first().copied()
    }
}

/// The slot of each printed operand of `ins` (one half of a VOPD pair:
/// call it for [`Instruction::dual`] too), after LLVM's
/// `getVGPRLoweringOperandTables`: [`gcn_raw::msb::operand_slots`], the
/// table gcn-patch's listing analyses use too.
pub fn operand_slots(ins: &Instruction) -> Slots {
    gcn_raw::msb::operand_slots(
        &ins.mnemonic,
        ins.ops.len(),
        ins.modifier("th").is_some_and(|t| t.contains("RETURN")),
    )
}

/// The VGPR operands of `ins` (and of its VOPD half): (which half, operand
/// index, first register).
fn vgprs(ins: &Instruction) -> impl Iterator<Item = (usize, usize, u16)> + '_ {
    std::iter::once(ins)
        .chain(ins.dual.as_deref())
        .enumerate()
        .flat_map(|(h, i)| {
            i.ops
                .iter()
                .enumerate()
                .filter_map(move |(k, o)| match o.op {
                    Operand::Reg {
                        file: RegFile::V,
                        index,
                        ..
                    } => Some((h, k, index)),
                    _ => None,
                })
        })
}

/// The MSB states reaching each instruction of `p` from `entry`, and the
/// first problem met ([`gcn_raw::msb::flow`]).
fn flow(p: &Program, entry: u64) -> (Vec<States>, Option<Problem>) {
    raw_flow(&p.instructions, |a| p.index.get(&a).copied(), entry)
}

/// The MSB state each instruction is listed under: llvm-objdump-22's
/// ([`gcn_raw::msb::listed`]).
fn listed(p: &Program) -> Vec<State> {
    raw_listed(&p.instructions)
}

/// The slots of each half of `ins` that its VGPR operands use, as a mask
/// of MSB-state bits (`None`: a half whose format has no table here).
fn used_bits(ins: &Instruction) -> Option<State> {
    let halves: Vec<&Instruction> = std::iter::once(ins).chain(ins.dual.as_deref()).collect();
    let mut bits = 0;
    for (h, k, _) in vgprs(ins) {
        match operand_slots(halves[h]) {
            Slots::Fields(f) => {
                if let Some(Some(s)) = f.get(k) {
                    bits |= 3 << (2 * s);
                }
            }
            Slots::Ignored => {}
            Slots::Unknown => return None,
        }
    }
    Some(bits)
}

/// Whether the kernel sets the MSBs at all (if not, every instruction
/// runs under 0, as listed).
fn sets_msb(p: &Program) -> bool {
    p.instructions
        .iter()
        .any(|i| i.mnemonic == "s_set_vgpr_msb")
}

/// Re-map the VGPR operands of `p`'s instructions to the MSBs control flow
/// gives them from `entry` (see the module). An instruction reached under
/// states that disagree on the slots it uses, or whose format has no slot
/// table, is left as listed: [`check`] refuses to run it.
pub(super) fn resolve(p: &mut Program, entry: u64) {
    if !sets_msb(p) {
        return;
    }
    let (reach, _) = flow(p, entry);
    let listed = listed(p);
    for (i, ins) in p.instructions.iter_mut().enumerate() {
        let Some(state) = agreed(&reach[i], ins) else {
            continue;
        };
        let mut changed = false;
        let slots: Vec<Slots> = std::iter::once(&*ins)
            .chain(ins.dual.as_deref())
            .map(operand_slots)
            .collect();
        for (h, slots) in slots.iter().enumerate() {
            let Slots::Fields(f) = slots else { continue };
            let half = if h == 0 {
                &mut *ins
            } else {
                ins.dual.as_deref_mut().expect("a VOPD half")
            };
            for (k, src) in half.ops.iter_mut().enumerate() {
                if let Operand::Reg {
                    file: RegFile::V,
                    index,
                    ..
                } = &mut src.op
                {
                    if let Some(Some(slot)) = f.get(k) {
                        let real = (*index & 0xff) | field(state, *slot) << 8;
                        changed |= real != *index;
                        *index = real;
                    }
                }
            }
        }
        if changed {
            ins.text = format!(
                "{} (VGPR MSBs {state:#x} by control flow, listed under {:#x})",
                ins.text, listed[i]
            );
        }
    }
}

/// The one state (on the slots `ins` uses) that reaches it, if the states
/// that reach it agree there and its format has a slot table.
fn agreed(reach: &States, ins: &Instruction) -> Option<State> {
    reach.agreed(used_bits(ins)?)
}

/// Refuse `p` for `kernel` unless each instruction's VGPR operands are
/// the registers the wave names under the MSBs control flow gives it (see
/// the module): what a gfx1250 dispatch checks before anything runs.
pub(super) fn check(p: &Program, kernel: &Kernel) -> Result<()> {
    if !sets_msb(p) {
        return Ok(());
    }
    let refuse = |i: usize, why: String| {
        let ins = &p.instructions[i];
        Error::Decode {
            what: format!(
                "kernel `{}` at {:#x} `{}`: {why}; the emulator resolves gfx1250's VGPR MSBs (s_set_vgpr_msb) by control flow, once per dispatch, so it does not run this kernel",
                kernel.name,
                ins.addr,
                ins.text.trim()
            ),
        }
    };
    let (reach, problem) = flow(p, kernel.entry);
    match problem {
        Some(Problem::Indirect(i)) => {
            return Err(refuse(
                i,
                "an indirect jump in a kernel that sets the VGPR MSBs: the MSBs at its target are not known statically".into(),
            ))
        }
        Some(Problem::Outside(i, to)) => {
            return Err(refuse(
                i,
                format!("a branch to {to:#x}, which is no instruction of the kernel"),
            ))
        }
        None => {}
    }
    let listed = listed(p);
    for (i, ins) in p.instructions.iter().enumerate() {
        if reach[i].is_empty() || vgprs(ins).next().is_none() {
            continue;
        }
        let Some(bits) = used_bits(ins) else {
            // No slot table: the listing's registers stand only where the
            // one state reaching the instruction is the listed one.
            let mut states = reach[i].iter();
            if states.next() == Some(listed[i]) && states.next().is_none() {
                continue;
            }
            return Err(refuse(
                i,
                format!(
                    "its format has no VGPR-MSB slot table here, and control flow reaches it with MSBs {} (listed under {:#x})",
                    hexes(&reach[i]),
                    listed[i]
                ),
            ));
        };
        let Some(state) = agreed(&reach[i], ins) else {
            return Err(refuse(i, join(p, &reach, i, bits)));
        };
        let halves: Vec<&Instruction> = std::iter::once(ins).chain(ins.dual.as_deref()).collect();
        for (h, k, index) in vgprs(ins) {
            let want = match operand_slots(halves[h]) {
                Slots::Fields(f) => f.get(k).copied().flatten().map_or(0, |s| field(state, s)),
                _ => continue,
            };
            if index >> 8 != want {
                return Err(refuse(
                    i,
                    format!(
                        "operand {} names v{index}, but control flow reaches it with VGPR MSBs {state:#x} (high bits {want}): the program was not resolved (decode it with Program::parse_listing_for)",
                        k + 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `{0x0, 0xc0}`.
fn hexes(s: &States) -> String {
    let v: Vec<String> = s.iter().map(|s| format!("{s:#x}")).collect();
    format!("{{{}}}", v.join(", "))
}

/// Why instruction `t` has no one MSB state on the slots `bits`: the join
/// where two states that differ there meet, and the predecessors each
/// comes from.
fn join(p: &Program, reach: &[States], t: usize, bits: State) -> String {
    let n = p.instructions.len();
    // Each instruction's predecessors with the state each passes on.
    let mut preds: Vec<Vec<(usize, State)>> = vec![Vec::new(); n];
    for (i, ins) in p.instructions.iter().enumerate() {
        let outs: Vec<State> = match gcn_raw::msb::sets(ins) {
            Some(s) => vec![s],
            None => reach[i].iter().collect(),
        };
        let mut to = Vec::new();
        match next(ins) {
            Next::Fall => to.push(i + 1),
            Next::Jump(a) => to.extend(p.index.get(&a)),
            Next::Branch(a) => {
                to.extend(p.index.get(&a));
                to.push(i + 1);
            }
            Next::Stop | Next::Indirect => {}
        }
        for j in to.into_iter().filter(|&j| j < n) {
            for &s in &outs {
                preds[j].push((i, s));
            }
        }
    }
    let states: Vec<State> = reach[t].iter().collect();
    let a = states[0];
    let b = states
        .iter()
        .copied()
        .find(|&s| s & bits != a & bits)
        .unwrap_or(a);
    // Walk back while one predecessor passes on both states.
    let name = |i: Option<usize>| match i {
        Some(i) => {
            let ins = &p.instructions[i];
            format!("`{}` at {:#x}", ins.text.trim(), ins.addr)
        }
        None => "the wave's start".to_string(),
    };
    let mut at = t;
    for _ in 0..n {
        let from = |s: State| -> Vec<usize> {
            preds[at]
                .iter()
                .filter(|&&(_, o)| o == s)
                .map(|&(i, _)| i)
                .collect()
        };
        let (pa, pb) = (from(a), from(b));
        if let ([x], [y]) = (pa.as_slice(), pb.as_slice()) {
            if x == y {
                at = *x;
                continue;
            }
        }
        let x = pa.first().copied();
        let y = pb
            .iter()
            .copied()
            .find(|&j| Some(j) != x)
            .or(pb.first().copied());
        return format!(
            "control flow reaches it with VGPR MSBs {a:#x} and {b:#x}, which differ in the slots its VGPR operands use (mask {bits:#x}): they meet at {:#x}, from {} ({a:#x}) and from {} ({b:#x})",
            p.instructions[at].addr,
            name(x),
            name(y)
        );
    }
    format!(
        "control flow reaches it with VGPR MSBs {}",
        hexes(&reach[t])
    )
}
