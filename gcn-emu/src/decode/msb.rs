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

/// The VGPR MSB state: the low byte of `s_set_vgpr_msb`'s immediate.
type State = u8;

/// A set of [`State`]s.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct States([u64; 4]);

impl States {
    fn insert(&mut self, s: State) -> bool {
        let (w, b) = (s as usize / 64, 1u64 << (s % 64));
        let new = self.0[w] & b == 0;
        self.0[w] |= b;
        new
    }
    fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
    /// The states, in increasing order.
    fn iter(&self) -> impl Iterator<Item = State> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut rest = bits;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let b = rest.trailing_zeros();
                    rest &= rest - 1;
                    (w as u32 * 64 + b) as State
                })
            })
        })
    }
}

/// Which MSB field (slot) each operand of an instruction takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slots {
    /// The slot (0-3) of each operand in printed order; `None` for an
    /// operand no field applies to (a scalar, a constant, `off`, or a
    /// VGPR used as encoded, such as a WMMA scale operand).
    Fields(Vec<Option<u8>>),
    /// No field applies to any operand (`v_wmma_ld_scale*_paired_*`:
    /// LLVM's table has none for them).
    Ignored,
    /// A format this table does not cover (image, sample, export,
    /// interpolation, BVH stacks, words LLVM did not decode).
    Unknown,
}

/// The slot of each printed operand of `ins` (one half of a VOPD pair:
/// call it for [`Instruction::dual`] too), after LLVM's
/// `getVGPRLoweringOperandTables` (see the module's table).
pub fn operand_slots(ins: &Instruction) -> Slots {
    let m = ins.mnemonic.as_str();
    let n = ins.ops.len();
    // Destinations first (`dsts` of them, the first a VGPR's slot 3), then
    // the sources through `src`; anything after those takes no slot.
    let layout = |dsts: usize, src: &[Option<u8>]| {
        let mut v: Vec<Option<u8>> = (0..dsts).map(|d| (d == 0).then_some(3)).collect();
        v.extend(src.iter().copied());
        v.resize(n.max(v.len()), None);
        v.truncate(n);
        Slots::Fields(v)
    };
    if m.starts_with("s_") {
        return Slots::Fields(vec![None; n]);
    }
    if let Some(op) = m.strip_prefix("v_dual_") {
        return if op.starts_with("fmamk") {
            layout(1, &[Some(0), None, Some(2)])
        } else {
            layout(1, &[Some(0), Some(1), Some(2)])
        };
    }
    if m.starts_with("v_") {
        if m.starts_with("v_wmma_ld_scale") {
            return Slots::Ignored;
        }
        if m.starts_with("v_interp") {
            return Slots::Unknown;
        }
        // VOPC writes an SGPR mask (none for `v_cmpx`); VOP3b's second
        // destination is its carry or scale-flag SGPRs.
        let dsts = if m.starts_with("v_cmpx_") {
            0
        } else if m.contains("_co_")
            || m.starts_with("v_div_scale_")
            || m.starts_with("v_mad_u64_u32")
            || m.starts_with("v_mad_i64_i32")
        {
            2
        } else {
            1
        };
        return if m.starts_with("v_fmamk_") || m.starts_with("v_madmk_") {
            layout(dsts, &[Some(0), None, Some(2)])
        } else {
            layout(dsts, &[Some(0), Some(1), Some(2)])
        };
    }
    if let Some(op) = m.strip_prefix("ds_") {
        if op.starts_with("bvh") || op.starts_with("param") || op.starts_with("direct") {
            return Slots::Unknown;
        }
        let returns = op.contains("load")
            || op.contains("rtn")
            || op.starts_with("read")
            || ["bpermute", "permute", "swizzle", "append", "consume"]
                .iter()
                .any(|p| op.starts_with(p));
        // `ds_append`, `ds_consume`, the `addtid` forms and GWS take no
        // address VGPR: only data0 (or nothing).
        let addr = !(op.starts_with("append")
            || op.starts_with("consume")
            || op.contains("addtid")
            || op.starts_with("gws"));
        let mut src = Vec::new();
        if addr {
            src.push(Some(0));
        }
        src.extend([Some(1), Some(2)]);
        return layout(returns as usize, &src);
    }
    if ["flat_", "global_", "scratch_"]
        .iter()
        .any(|p| m.starts_with(p))
    {
        let op = m.split_once('_').map_or("", |(_, o)| o);
        if op.starts_with("load_lds") || op.starts_with("prefetch") {
            return layout(0, &[Some(0)]);
        }
        let returns = op.starts_with("load")
            || (op.starts_with("atomic")
                && (op.contains("rtn")
                    || ins.modifier("th").is_some_and(|t| t.contains("RETURN"))));
        return layout(returns as usize, &[Some(0), Some(1)]);
    }
    if m.starts_with("buffer_") || m.starts_with("tbuffer_") {
        if m.contains("_lds") {
            return Slots::Unknown;
        }
        // vdata (in or out) is printed first and takes slot 3.
        return layout(1, &[Some(0)]);
    }
    Slots::Unknown
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

/// The field of `slot` in `state`.
fn field(state: State, slot: u8) -> u16 {
    ((state >> (2 * slot)) & 3) as u16
}

/// How control can leave an instruction.
enum Next {
    /// To the next instruction.
    Fall,
    /// To a target only.
    Jump(u64),
    /// To a target or the next instruction.
    Branch(u64),
    /// Nowhere (`s_endpgm`).
    Stop,
    /// To an address in registers.
    Indirect,
}

fn next(ins: &Instruction) -> Next {
    let m = ins.mnemonic.as_str();
    let target = || {
        let simm = ins.words.first().map_or(0, |&w| w as u16 as i16 as i64);
        (ins.addr as i64).wrapping_add(4).wrapping_add(simm * 4) as u64
    };
    match m {
        _ if m.starts_with("s_endpgm") => Next::Stop,
        "s_setpc_b64" | "s_set_pc_i64" | "s_swappc_b64" | "s_swap_pc_i64" | "s_rfe_b64"
        | "s_rfe_i64" | "s_cbranch_join" => Next::Indirect,
        // The callee returns through `s_setpc_b64`, which is refused.
        "s_branch" | "s_call_b64" | "s_call_i64" => Next::Jump(target()),
        _ if m.starts_with("s_cbranch_") => Next::Branch(target()),
        _ => Next::Fall,
    }
}

/// What stops the dataflow from knowing every instruction's MSBs.
enum Problem {
    /// A reachable indirect jump at this instruction.
    Indirect(usize),
    /// A reachable branch at this instruction to an address that is no
    /// instruction of the kernel.
    Outside(usize, u64),
}

/// The MSB states reaching each instruction of `p` from `entry` (none for
/// an instruction control flow does not reach), and the first problem met.
fn flow(p: &Program, entry: u64) -> (Vec<States>, Option<Problem>) {
    let n = p.instructions.len();
    let mut reach = vec![States::default(); n];
    let mut problem = None;
    let Some(&start) = p.index.get(&entry) else {
        return (reach, problem);
    };
    reach[start].insert(0);
    let mut work = vec![start];
    let mut queued = vec![false; n];
    queued[start] = true;
    while let Some(i) = work.pop() {
        queued[i] = false;
        let ins = &p.instructions[i];
        let set = ins.mnemonic == "s_set_vgpr_msb";
        let outs: Vec<State> = if set {
            vec![ins.words.first().map_or(0, |w| (w & 0xff) as State)]
        } else {
            reach[i].iter().collect()
        };
        let mut to = Vec::with_capacity(2);
        let mut target = |t: u64, problem: &mut Option<Problem>| match p.index.get(&t) {
            Some(&j) => to.push(j),
            None => {
                problem.get_or_insert(Problem::Outside(i, t));
            }
        };
        match next(ins) {
            Next::Fall => to.extend((i + 1 < n).then_some(i + 1)),
            Next::Jump(t) => target(t, &mut problem),
            Next::Branch(t) => {
                target(t, &mut problem);
                to.extend((i + 1 < n).then_some(i + 1));
            }
            Next::Stop => {}
            Next::Indirect => {
                problem.get_or_insert(Problem::Indirect(i));
            }
        }
        for j in to {
            let mut grew = false;
            for &s in &outs {
                grew |= reach[j].insert(s);
            }
            if grew && !queued[j] {
                queued[j] = true;
                work.push(j);
            }
        }
    }
    (reach, problem)
}

/// The MSB state each instruction is listed under: llvm-objdump-22's.
/// LLVM's `AMDGPUMCInstrAnalysis::updateState`
/// (llvm/lib/Target/AMDGPU/MCTargetDesc/AMDGPUMCTargetDesc.cpp) takes the
/// low byte of each `s_set_vgpr_msb` and resets the state to 0 after each
/// terminator (`s_branch`, `s_cbranch_*`, `s_endpgm*`, `s_setpc_b64`,
/// `s_rfe_b64`: LLVM's convention that every block starts under 0, which
/// its lowering keeps and hand-written code need not), and llvm-objdump
/// resets it after a word it could not decode (printed `.long`) and at
/// each symbol (which a program of one kernel does not show).
fn listed(p: &Program) -> Vec<State> {
    let mut s = 0;
    p.instructions
        .iter()
        .map(|ins| {
            let before = s;
            let m = ins.mnemonic.as_str();
            if m == "s_set_vgpr_msb" {
                s = ins.words.first().map_or(0, |w| (w & 0xff) as State);
            } else if m == ".long"
                || m == "s_branch"
                || m.starts_with("s_cbranch_")
                || m.starts_with("s_endpgm")
                || matches!(
                    m,
                    "s_setpc_b64" | "s_set_pc_i64" | "s_rfe_b64" | "s_rfe_i64"
                )
            {
                s = 0;
            }
            before
        })
        .collect()
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
    let bits = used_bits(ins)?;
    let mut states = reach.iter().map(|s| s & bits);
    let first = states.next()?;
    states.all(|s| s == first).then_some(first)
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
        let outs: Vec<State> = if ins.mnemonic == "s_set_vgpr_msb" {
            vec![ins.words.first().map_or(0, |w| (w & 0xff) as State)]
        } else {
            reach[i].iter().collect()
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
