//! gfx1250's VGPR MSBs over a listing's instructions: the listing-level
//! core shared by gcn-emu (`decode::msb`, which re-maps operands and
//! refuses what it cannot resolve) and gcn-patch.
//!
//! gfx1250 has 1024 VGPRs, but an operand field holds 8 bits of the VGPR
//! number. `s_set_vgpr_msb N` sets, for the instructions run after it, the
//! two high bits of four operand *slots*: bits 1:0 of `N` for slot 0, 3:2
//! for slot 1, 5:4 for slot 2, 7:6 for slot 3. Which printed operand takes
//! which slot is [`operand_slots`] (after LLVM's
//! `AMDGPU::getVGPRLoweringOperandTables`).
//!
//! llvm-objdump takes the MSBs from the last `s_set_vgpr_msb` before an
//! instruction *in the listing* and resets them to 0 after each branch,
//! `s_endpgm` and `.long` word ([`listed`]); the wave runs with those of
//! the last one it *executed*. [`flow`] is the forward dataflow over the
//! control flow (fall-through, `s_branch`, `s_cbranch_*`, `s_call_*`) from
//! an entry, MSBs 0 at wave start, giving the set of MSB states that
//! reach each instruction.

/// The VGPR MSB state: the low byte of `s_set_vgpr_msb`'s immediate.
pub type State = u8;

/// A set of [`State`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct States([u64; 4]);

impl States {
    /// Add `s`; whether it was new.
    pub fn insert(&mut self, s: State) -> bool {
        let (w, b) = (s as usize / 64, 1u64 << (s % 64));
        let new = self.0[w] & b == 0;
        self.0[w] |= b;
        new
    }
    /// Whether no state is in the set (an instruction control flow does
    /// not reach).
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
    /// The states, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = State> + '_ {
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
    /// The one state on the MSB-state bits `mask` that every state of the
    /// set has, if they agree there (and the set is not empty).
    pub fn agreed(&self, mask: State) -> Option<State> {
        let mut states = self.iter().map(|s| s & mask);
        let first = states.next()?;
        states.all(|s| s == first).then_some(first)
    }
}

/// What the MSB analysis needs of one listed instruction.
pub trait Insn {
    /// The mnemonic as llvm-objdump prints it (`.long` for an undecoded
    /// word).
    fn mnemonic(&self) -> &str;
    /// The instruction's address.
    fn addr(&self) -> u64;
    /// Its first encoding word (the immediate of a SOPP such as
    /// `s_set_vgpr_msb` or a branch is its low 16 bits).
    fn first_word(&self) -> Option<u32>;
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

/// The slot of each of the `n` printed operands of an instruction (one
/// half of a VOPD pair) named `m`; `th_return`: a FLAT atomic whose `th`
/// modifier asks for the old value. After LLVM's
/// `getVGPRLoweringOperandTables`:
///
/// | format | slot 0 | slot 1 | slot 2 | slot 3 |
/// |---|---|---|---|---|
/// | VALU (VOP1/2/3/3P/C, DPP, WMMA) | src0 | src1 | src2 | vdst |
/// | `v_fmamk_*` (literal second) | src0 | - | src1 | vdst |
/// | VOPD (each half) | src0 | vsrc1 | vsrc2 | vdst |
/// | DS | addr | data0 | data1 | vdst |
/// | FLAT, GLOBAL, SCRATCH | vaddr | vdata | - | vdst |
/// | MUBUF, MTBUF | vaddr | - | - | vdata |
pub fn operand_slots(m: &str, n: usize, th_return: bool) -> Slots {
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
            || (op.starts_with("atomic") && (op.contains("rtn") || th_return));
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

/// The high two bits `state` gives a VGPR operand in `slot`.
pub fn field(state: State, slot: u8) -> u16 {
    ((state >> (2 * slot)) & 3) as u16
}

/// How control can leave an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
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

/// How control leaves `ins`.
pub fn next(ins: &impl Insn) -> Next {
    let m = ins.mnemonic();
    let target = || {
        let simm = ins.first_word().map_or(0, |w| w as u16 as i16 as i64);
        (ins.addr() as i64).wrapping_add(4).wrapping_add(simm * 4) as u64
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

/// The state `s_set_vgpr_msb` sets, if `ins` is one.
pub fn sets(ins: &impl Insn) -> Option<State> {
    (ins.mnemonic() == "s_set_vgpr_msb")
        .then(|| ins.first_word().map_or(0, |w| (w & 0xff) as State))
}

/// What stops the dataflow from knowing every instruction's MSBs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// A reachable indirect jump at this instruction.
    Indirect(usize),
    /// A reachable branch at this instruction to an address that is no
    /// instruction of the kernel.
    Outside(usize, u64),
}

/// The MSB states reaching each of `insns` from the instruction at
/// address `entry` (none for an instruction control flow does not
/// reach), and the first problem met; `index` finds an instruction by
/// address.
pub fn flow<I: Insn>(
    insns: &[I],
    index: impl Fn(u64) -> Option<usize>,
    entry: u64,
) -> (Vec<States>, Option<Problem>) {
    let n = insns.len();
    flow_graph(
        n,
        index(entry),
        |i| sets(&insns[i]),
        |i, to| {
            let ins = &insns[i];
            let mut problem = None;
            let mut target = |t: u64, to: &mut Vec<usize>| match index(t) {
                Some(j) => to.push(j),
                None => problem = Some(Problem::Outside(i, t)),
            };
            match next(ins) {
                Next::Fall => to.extend((i + 1 < n).then_some(i + 1)),
                Next::Jump(t) => target(t, to),
                Next::Branch(t) => {
                    target(t, to);
                    to.extend((i + 1 < n).then_some(i + 1));
                }
                Next::Stop => {}
                Next::Indirect => problem = Some(Problem::Indirect(i)),
            }
            problem
        },
    )
}

/// The dataflow behind [`flow`] over any graph of `n` nodes (instructions,
/// or basic blocks of a parsed program): the MSB states reaching each node
/// from `start` (MSBs 0 there), where node `i` leaves the state
/// `sets(i)` (the last `s_set_vgpr_msb` in it) or, with `None`, the states
/// that reach it; `succs(i, to)` pushes `i`'s successors onto `to` and
/// returns a problem where control flow cannot be followed (the first one
/// met is returned).
pub fn flow_graph(
    n: usize,
    start: Option<usize>,
    sets: impl Fn(usize) -> Option<State>,
    mut succs: impl FnMut(usize, &mut Vec<usize>) -> Option<Problem>,
) -> (Vec<States>, Option<Problem>) {
    let mut reach = vec![States::default(); n];
    let mut problem = None;
    let Some(start) = start.filter(|&s| s < n) else {
        return (reach, problem);
    };
    reach[start].insert(0);
    let mut work = vec![start];
    let mut queued = vec![false; n];
    queued[start] = true;
    let mut to = Vec::with_capacity(2);
    while let Some(i) = work.pop() {
        queued[i] = false;
        let outs: Vec<State> = match sets(i) {
            Some(s) => vec![s],
            None => reach[i].iter().collect(),
        };
        to.clear();
        if let Some(p) = succs(i, &mut to) {
            problem.get_or_insert(p);
        }
        for &j in to.iter().filter(|&&j| j < n) {
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
/// `s_rfe_b64`), and llvm-objdump resets it after a word it could not
/// decode (printed `.long`) and at each symbol (which a program of one
/// kernel does not show).
pub fn listed<I: Insn>(insns: &[I]) -> Vec<State> {
    let mut s = 0;
    insns
        .iter()
        .map(|ins| {
            let before = s;
            let m = ins.mnemonic();
            if let Some(set) = sets(ins) {
                s = set;
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

#[cfg(test)]
mod tests {
    use super::*;

    struct I(&'static str, u64, u32);
    impl Insn for I {
        fn mnemonic(&self) -> &str {
            self.0
        }
        fn addr(&self) -> u64 {
            self.1
        }
        fn first_word(&self) -> Option<u32> {
            Some(self.2)
        }
    }

    /// A branch over a block into one the listing prints under 0: the
    /// wave reaches it under the `s_set_vgpr_msb` before the branch.
    #[test]
    fn branch_target_keeps_the_executed_msbs() {
        let p = [
            I("s_set_vgpr_msb", 0, 0xbf86_0040),
            I("s_cbranch_scc0", 4, 0xbfa1_0001), // to 12
            I("s_set_vgpr_msb", 8, 0xbf86_4000),
            I("v_mov_b32", 12, 0),
            I("s_endpgm", 16, 0),
        ];
        let index = |a: u64| p.iter().position(|i| i.1 == a);
        let (reach, problem) = flow(&p, index, 0);
        assert_eq!(problem, None);
        assert_eq!(reach[3].iter().collect::<Vec<_>>(), vec![0x00, 0x40]);
        assert_eq!(reach[3].agreed(0xc0), None);
        assert_eq!(reach[3].agreed(0x03), Some(0));
        assert_eq!(listed(&p)[3], 0x00);
        assert_eq!(listed(&p)[1], 0x40);
    }
}
