//! Uninitialized values by propagation, as MemorySanitizer tracks them.
//!
//! Every VGPR and AGPR has a shadow per lane and 16-bit half (poisoned or
//! not), every SGPR one per bit, `scc` one bit. The launch's registers are
//! defined (the SGPRs it sets, `v0`, the special registers `m0`, `vcc`,
//! `exec`, …); every other register starts poisoned, its origin itself. A
//! poisoned LDS byte is one nothing of this dispatch wrote, or one written
//! with a poisoned value (the LDS shadow). Before each instruction the
//! destination shadow is derived from the sources' shadows, read from the
//! operands of [`Instruction`] (the roles the executor uses, from the
//! instruction-property table: [`crate::isa::Props::carry_out`],
//! [`crate::isa::Props::mask_in`], the `DstSrc` role), in the lanes the
//! instruction writes. A use is reported,
//! once per instruction and wave: an address (DS, buffer, flat, global,
//! scratch and scalar memory, descriptors and `m0` of LDS DMA included), a
//! branch condition (`scc`, `vcc`, `exec` of `s_cbranch_*`), the exec mask
//! (written poisoned), a branch target (`s_setpc`/`s_swappc`), a lane or
//! VGPR index (`v_readlane`, `v_writelane`, `s_set_gpr_idx_*`), and a store
//! to global memory (a kernel's output is its observable use).

use std::collections::HashSet;

use super::{classify, describe, reg_name, Finding, Kind, LdsShadow};
use crate::decode::{Instruction, Operand, Program, RegFile, EXEC, M0, VCC};
use crate::exec::{base_name, Ty, Unit, Wave};
use crate::isa::Role;

/// Where a poisoned value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A register nothing wrote (the wave, the register).
    Reg {
        /// The wave in its workgroup.
        wave: u32,
        /// The file.
        file: RegFile,
        /// The register.
        reg: u16,
    },
    /// An LDS byte nothing of this dispatch wrote, and the instruction that
    /// read it.
    Lds {
        /// The byte's LDS offset.
        byte: u32,
        /// The reading instruction's address.
        read: u64,
    },
    /// A private (scratch) byte nothing wrote, and the instruction that
    /// read it.
    Scratch {
        /// The lane.
        lane: u32,
        /// The byte's offset in the lane's private segment.
        offset: u32,
        /// The reading instruction's address.
        read: u64,
    },
}

/// A poison lane mask and the origin of its poison.
#[derive(Debug, Clone, Copy)]
struct P {
    m: u64,
    o: Option<Origin>,
}

impl P {
    const CLEAN: P = P { m: 0, o: None };
    fn or(self, b: P) -> P {
        P {
            m: self.m | b.m,
            o: if self.m != 0 {
                self.o
            } else {
                b.o.filter(|_| b.m != 0)
            },
        }
    }
    fn and(self, lanes: u64) -> P {
        P {
            m: self.m & lanes,
            o: self.o,
        }
    }
    /// Every lane when any is poisoned.
    fn any(self) -> P {
        P {
            m: if self.m != 0 { u64::MAX } else { 0 },
            o: self.o,
        }
    }
}

/// The halves of a 32-bit VGPR an operand reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Half {
    Lo,
    Hi,
    Both,
}

impl Half {
    fn has(self, h: usize) -> bool {
        match self {
            Half::Lo => h == 0,
            Half::Hi => h == 1,
            Half::Both => true,
        }
    }
}

/// What a memory instruction's destination gets after it ran.
#[derive(Debug, Clone)]
struct Fill {
    file: RegFile,
    first: u16,
    count: u16,
    half: Half,
    lanes: u64,
    /// The transposing loads (`ds_read_b64_tr_*`, gfx1250's
    /// `ds_load_tr*` and `global_load_tr*`): lanes exchange data within groups of this many lanes
    /// (0: none).
    group: u8,
    /// Scalar destination (`s_load_*`): clean.
    scalar: bool,
}

/// One wave's shadow registers.
#[derive(Debug, Clone)]
pub(super) struct Shadow {
    wave: u32,
    /// The vector registers' poison per row of the unified VGPR/AGPR file
    /// (as [`Wave::v`]: `vN` is row `N`, `aN` row `accum + N`), and origin.
    v: Vec<[u64; 2]>,
    vo: Vec<Origin>,
    /// The row of `a0`, the wave's accum offset ([`Wave::accum`]).
    accum: usize,
    s: [u32; 128],
    so: [Option<Origin>; 128],
    scc: bool,
    scco: Option<Origin>,
    /// What the launch set, for reports.
    loaded: String,
    /// Instructions already reported.
    reported: HashSet<u64>,
    fill: Option<Fill>,
    /// Private memory, lane-major as `Wave::private`: bytes written, bytes
    /// written with an uninitialized value and its origin (allocated at
    /// the first access).
    private_written: Vec<u64>,
    private_poison: Vec<u64>,
    private_origin: std::collections::HashMap<usize, Origin>,
    /// Per dword of the data a private store writes, the uninitialized
    /// lanes, and the origin.
    private_data: ([u64; 8], Option<Origin>),
    /// The current instruction's address.
    at: u64,
    /// A bitwise SALU result's `scc` (result != 0), decided after it ran:
    /// the destination's first register, its count, and its poisoned bits.
    scc_of: Option<(u16, u16, u64, Option<Origin>)>,
    /// The target's instruction table (RDNA: names the CDNA table lacks,
    /// such as gfx12's `s_add_f32`); `None`: CDNA's.
    table: Option<crate::isa::Table>,
    /// The wave's lane bits (wave32: lanes 0-31; lane masks are one SGPR),
    /// `m0`'s and `null`'s SGPR (gfx11+ swap them), from the wave.
    lane_bits: u64,
    m0: u16,
    null: Option<u16>,
}

/// The value of 32-bit chunk `i` of a scalar operand, if known.
fn sval(w: &Wave, op: &Operand, i: u16) -> Option<u32> {
    match op {
        Operand::Reg {
            file: RegFile::S,
            index,
            ..
        } => w.s.get((index + i) as usize).copied(),
        Operand::Int(n) => Some(((*n as u64) >> (32 * i as u64)) as u32),
        Operand::Scc => Some(w.scc as u32),
        _ => None,
    }
}

/// Whether a scalar instruction's first operand is an SGPR it writes (or
/// reads and writes), from the instruction-property table: not a branch,
/// wait, message, cache or mode instruction, compare or `s_setreg`.
pub(crate) fn writes_sgpr_first(ins: &Instruction) -> bool {
    use crate::isa::{Kind, Role};
    ins.props()
        .and_then(|p| p.operands.first())
        .is_some_and(|o| o.role != Role::Src && matches!(o.kind, Kind::Sgpr | Kind::Scalar))
}

fn regs_of(op: &Operand) -> Option<(RegFile, u16, u16)> {
    super::regs(op)
}

/// `sdwa_sel` of a source: which half it reads.
fn sel_half(sel: Option<&str>) -> Half {
    match sel {
        Some("WORD_1") | Some("BYTE_2") | Some("BYTE_3") => Half::Hi,
        Some("WORD_0") | Some("BYTE_0") | Some("BYTE_1") => Half::Lo,
        _ => Half::Both,
    }
}

fn parse_bits(s: &str) -> Vec<u8> {
    s.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|b| u8::from(b.trim() == "1"))
        .collect()
}

fn is16(t: Ty) -> bool {
    matches!(t, Ty::F16 | Ty::B16)
}

/// Whether instructions of this mnemonic write `scc` (SALU).
fn writes_scc(m: &str) -> bool {
    const NO: [&str; 16] = [
        "s_mov",
        "s_cmov",
        "s_cselect",
        "s_movk",
        "s_mul_i32",
        "s_mul_hi",
        "s_mulk",
        "s_bfm",
        "s_brev",
        "s_ff0",
        "s_ff1",
        "s_flbit",
        "s_sext",
        "s_pack",
        "s_getreg",
        "s_bitset",
    ];
    !NO.iter().any(|p| m.starts_with(p)) && !m.starts_with("s_getpc")
}

/// The half of its data register a store of this mnemonic writes.
fn data_half(m: &str) -> Half {
    if m.contains("_d16_hi") {
        Half::Hi
    } else if ["_b8", "_b16", "_byte", "_short"]
        .iter()
        .any(|x| m.ends_with(x))
    {
        Half::Lo
    } else {
        Half::Both
    }
}

impl Shadow {
    /// Per dword of the data operands `ops` (in order), the lanes of
    /// `lanes` whose value is uninitialized (halves `h` of each), and the
    /// origin.
    fn data_dwords(
        &self,
        ops: &[crate::decode::Src],
        h: Half,
        lanes: u64,
    ) -> ([u64; 8], Option<Origin>) {
        let mut out = [0u64; 8];
        let mut o = None;
        let mut k = 0;
        for s in ops {
            match regs_of(&s.op) {
                Some((file, first, count)) => {
                    for r in first..first + count {
                        let p = if file == RegFile::S {
                            self.op(
                                &Operand::Reg {
                                    file,
                                    index: r,
                                    count: 1,
                                },
                                h,
                            )
                        } else {
                            self.vreg(file, r, h)
                        };
                        let m = p.m & lanes;
                        if m != 0 && o.is_none() {
                            o = p.o;
                        }
                        out[k.min(7)] |= m;
                        k += 1;
                    }
                }
                None => k += 1,
            }
        }
        (out, o)
    }

    /// Every register poisoned but the `sgprs` the launch set, `v0` and the
    /// special SGPRs (102 up).
    pub(super) fn new(wave: u32, sgprs: u16, loaded: String) -> Self {
        let vo = (0..512)
            .map(|r| Origin::Reg {
                wave,
                file: RegFile::V,
                reg: r,
            })
            .collect();
        let mut s = [0u32; 128];
        let mut so = [None; 128];
        for r in sgprs.min(102)..102 {
            s[r as usize] = u32::MAX;
            so[r as usize] = Some(Origin::Reg {
                wave,
                file: RegFile::S,
                reg: r,
            });
        }
        let mut v = vec![[u64::MAX; 2]; 512];
        v[0] = [0, 0];
        Shadow {
            wave,
            v,
            vo,
            // Set from the wave before each instruction.
            accum: 512,
            s,
            so,
            scc: false,
            scco: None,
            loaded,
            reported: HashSet::new(),
            fill: None,
            scc_of: None,
            private_written: Vec::new(),
            private_poison: Vec::new(),
            private_origin: Default::default(),
            private_data: ([0; 8], None),
            at: 0,
            table: None,
            lane_bits: u64::MAX,
            m0: M0,
            null: None,
        }
    }

    /// Read `table`'s instructions (an RDNA target's) where the CDNA table
    /// has no entry.
    pub(super) fn set_table(&mut self, table: Option<crate::isa::Table>) {
        self.table = table;
    }

    /// The counter event of a memory instruction (see `classify`): the
    /// CDNA table's (the executor's names), else the target's.
    fn classify(&self, ins: &Instruction) -> Option<(super::Event, bool)> {
        classify(ins, None).or_else(|| self.table.and_then(|_| classify(ins, self.table)))
    }

    /// The properties of `ins`: the CDNA table's, else the target's.
    fn props(&self, ins: &Instruction) -> Option<&'static crate::isa::Props> {
        ins.props()
            .or_else(|| self.table.and_then(|t| t.lookup(&ins.mnemonic)))
    }

    /// Whether the wave runs 32 lanes (a lane mask is one SGPR).
    fn wave32(&self) -> bool {
        self.lane_bits >> 32 == 0
    }

    // ----- reading shadows -------------------------------------------------

    /// The row of vector register `r` of `file` in the unified file (`None`:
    /// not a vector register, or past the shadow's rows).
    fn vrow(&self, file: RegFile, r: u16) -> Option<usize> {
        let row = match file {
            RegFile::V => r as usize,
            RegFile::A => self.accum + r as usize,
            RegFile::S => return None,
        };
        (row < self.v.len()).then_some(row)
    }

    /// The poison of register `r` of a vector file, half `h`.
    fn vreg(&self, file: RegFile, r: u16, h: Half) -> P {
        let Some(row) = self.vrow(file, r) else {
            return P::CLEAN;
        };
        let x = &self.v[row];
        let m = match h {
            Half::Lo => x[0],
            Half::Hi => x[1],
            Half::Both => x[0] | x[1],
        };
        P {
            m,
            o: Some(self.vo[row]),
        }
    }

    /// Scalar register `r`'s poisoned bits and origin.
    fn sreg(&self, r: u16) -> (u32, Option<Origin>) {
        match self.s.get(r as usize) {
            Some(&b) => (b, self.so[r as usize]),
            None => (0, None),
        }
    }

    /// The poison an operand brings to each lane (a scalar one: all lanes
    /// when any bit is poisoned); registers `skip..` of it only.
    fn op(&self, op: &Operand, h: Half) -> P {
        match op {
            Operand::Reg { file, index, count } => {
                let mut p = P::CLEAN;
                for r in *index..index + (*count).max(1) {
                    p = p.or(match file {
                        RegFile::S => {
                            let (b, o) = self.sreg(r);
                            P {
                                m: if b != 0 { u64::MAX } else { 0 },
                                o,
                            }
                        }
                        _ => self.vreg(*file, r, h),
                    });
                }
                p
            }
            Operand::Scc if self.scc => P {
                m: u64::MAX,
                o: self.scco,
            },
            _ => P::CLEAN,
        }
    }

    /// The poison of a lane mask in an SGPR pair (bit L: lane L).
    fn lanes(&self, op: &Operand) -> P {
        match op {
            Operand::Reg {
                file: RegFile::S,
                index,
                ..
            } => {
                let (lo, o1) = self.sreg(*index);
                let (hi, o2) = if self.wave32() {
                    (0, None)
                } else {
                    self.sreg(index + 1)
                };
                P {
                    m: lo as u64 | (hi as u64) << 32,
                    o: if lo != 0 { o1 } else { o2 },
                }
            }
            _ => P::CLEAN,
        }
    }

    // ----- writing shadows -------------------------------------------------

    /// Set halves `h` of registers `first..first+count` in `lanes` to `p`.
    fn set_v(&mut self, file: RegFile, first: u16, count: u16, h: Half, p: P, lanes: u64) {
        for r in first..first + count.max(1) {
            let Some(row) = self.vrow(file, r) else {
                continue;
            };
            let x = &mut self.v[row];
            for (k, half) in x.iter_mut().enumerate() {
                if h.has(k) {
                    *half = (*half & !lanes) | (p.m & lanes);
                }
            }
            if p.m & lanes != 0 {
                if let Some(og) = p.o {
                    self.vo[row] = og;
                }
            }
        }
    }

    fn set_s(&mut self, r: u16, bits: u32, o: Option<Origin>) {
        // gfx11+'s `null` reads 0 and drops writes.
        if self.null == Some(r) {
            return;
        }
        if let Some(x) = self.s.get_mut(r as usize) {
            *x = bits;
            self.so[r as usize] = if bits != 0 { o } else { None };
        }
    }

    /// Write lane mask `p` (bit L: lane L) to the SGPR pair of `op`.
    fn set_lanes(&mut self, op: &Operand, p: P) {
        if let Operand::Reg {
            file: RegFile::S,
            index,
            count,
        } = op
        {
            self.set_s(*index, p.m as u32, p.o);
            // wave32: a lane mask is one SGPR (`vcc_lo`, `exec_lo`).
            if self.wave32() {
                return;
            }
            if *count > 1 || *index == VCC || *index == EXEC {
                self.set_s(index + 1, (p.m >> 32) as u32, p.o);
            }
        }
    }

    /// Set a destination operand: vector registers in `lanes`, scalar ones
    /// all bits when any lane is poisoned.
    fn set_dst(&mut self, op: &Operand, h: Half, p: P, lanes: u64) {
        match op {
            Operand::Reg {
                file: RegFile::S,
                index,
                count,
            } => {
                let bits = if p.m & lanes != 0 { u32::MAX } else { 0 };
                for r in *index..index + (*count).max(1) {
                    self.set_s(r, bits, p.o);
                }
            }
            Operand::Reg { file, index, count } => self.set_v(*file, *index, *count, h, p, lanes),
            _ => {}
        }
    }

    // ----- reports ---------------------------------------------------------

    /// Report a use of a poisoned value: `as_what` (e.g. "as an address"),
    /// the register and lane that carried it.
    #[allow(clippy::too_many_arguments)]
    fn report(
        &mut self,
        out: &mut Vec<Finding>,
        wg: [u32; 3],
        program: &Program,
        ins: &Instruction,
        as_what: &str,
        what: String,
        o: Option<Origin>,
    ) {
        if !self.reported.insert(ins.addr) {
            return;
        }
        let (kind, other, from) = match o {
            Some(Origin::Reg { wave, file, reg }) => (
                Kind::UninitializedRegister,
                None,
                format!(
                    "it comes from {}{}, which nothing wrote: not the launch (it sets {}) and no earlier instruction of wave {wave}; hardware leaves such a register holding whatever the last wave on the SIMD left there",
                    reg_name((file, reg, 1)),
                    // The unified file: the VGPR past the accum offset is
                    // that AGPR too.
                    match (reg as usize).checked_sub(self.accum) {
                        Some(a) if file == RegFile::V => format!(
                            " (which is a{a}: the VGPRs and AGPRs are one file, the AGPRs from v{})",
                            self.accum
                        ),
                        _ => String::new(),
                    },
                    self.loaded
                ),
            ),
            Some(Origin::Lds { byte, read }) => (
                Kind::UninitializedLds,
                Some(read),
                format!(
                    "it comes from LDS byte {byte:#x}, read by {} but written by nothing in this dispatch",
                    describe(program, read)
                ),
            ),
            Some(Origin::Scratch { lane, offset, read }) => (
                Kind::UninitializedScratch,
                Some(read),
                format!(
                    "it comes from private (scratch) byte {offset:#x} of lane {lane}, read by {} but written by nothing in this dispatch",
                    describe(program, read)
                ),
            ),
            None => (
                Kind::UninitializedRegister,
                None,
                "its origin is not known".to_string(),
            ),
        };
        out.push(Finding {
            kind,
            workgroup: wg,
            wave: self.wave,
            addr: ins.addr,
            other,
            message: format!(
                "{} uses an uninitialized value {as_what}: {what}; {from}",
                describe(program, ins.addr)
            ),
            occurrences: 1,
        });
    }

    /// Report when operand `op` carries poison in `lanes` (vector) or any
    /// bit (scalar).
    #[allow(clippy::too_many_arguments)]
    fn check(
        &mut self,
        out: &mut Vec<Finding>,
        wg: [u32; 3],
        program: &Program,
        ins: &Instruction,
        op: &Operand,
        lanes: u64,
        as_what: &str,
    ) {
        let Some(r) = regs_of(op) else {
            if matches!(op, Operand::Scc) && self.scc {
                let o = self.scco;
                self.report(out, wg, program, ins, as_what, "scc".into(), o);
            }
            return;
        };
        let p = self.op(op, Half::Both);
        let p = if r.0 == RegFile::S { p } else { p.and(lanes) };
        if p.m == 0 {
            return;
        }
        let what = if r.0 == RegFile::S {
            reg_name(r)
        } else {
            format!("{}, lane {}", reg_name(r), p.m.trailing_zeros())
        };
        self.report(out, wg, program, ins, as_what, what, p.o);
    }

    // ----- the hooks -------------------------------------------------------

    /// Propagate through `ins`, about to run on `w`; report the uses of
    /// poisoned values. Memory destinations are filled by [`Shadow::after`].
    pub(super) fn before(
        &mut self,
        ins: &Instruction,
        w: &Wave,
        program: &Program,
        lds: Option<&LdsShadow>,
        wg: [u32; 3],
        out: &mut Vec<Finding>,
    ) {
        self.fill = None;
        self.scc_of = None;
        self.at = ins.addr;
        self.lane_bits = w.lane_bits();
        self.accum = w.accum;
        self.m0 = w.numbering.m0;
        self.null = w.numbering.null;
        self.private_data = ([0; 8], None);
        if let Some(sh) = lds {
            sh.begin_values();
        }
        // The executor's routing, from the instruction-property table
        // (resolved when the instruction was decoded).
        let unit = ins.route.unit;
        if unit.is_scalar() {
            if self.classify(ins).is_some() {
                self.smem(ins, program, wg, out);
            } else {
                self.salu(ins, w, program, wg, out);
            }
            return;
        }
        if w.vskip {
            return;
        }
        // A VOPD pair: both halves read before either writes (as the
        // executor runs it).
        if let Some(y) = ins.dual.as_deref() {
            if let Ok((xh, yh, xd)) = crate::exec::vopd_halves(ins, y) {
                let before = (self.v.get(xd).copied(), self.vo.get(xd).cloned());
                self.valu(&xh, w);
                if let (true, (Some(v), Some(o))) = (crate::exec::reads_vgpr(&yh, xd), before) {
                    let after = (
                        std::mem::replace(&mut self.v[xd], v),
                        std::mem::replace(&mut self.vo[xd], o),
                    );
                    self.valu(&yh, w);
                    (self.v[xd], self.vo[xd]) = after;
                } else {
                    self.valu(&yh, w);
                }
            }
            return;
        }
        let indexed;
        let ins = if w.gpr_idx && unit.is_vector_alu() {
            self.check(
                out,
                wg,
                program,
                ins,
                &Operand::Reg {
                    file: RegFile::S,
                    index: self.m0,
                    count: 1,
                },
                0,
                "as a VGPR index (m0 of s_set_gpr_idx_on)",
            );
            match crate::exec::gpr_indexed(w, ins) {
                Ok(i) => {
                    indexed = i;
                    &indexed
                }
                Err(_) => return,
            }
        } else {
            ins
        };
        // Cross-lane moves and packed math, from the property table.
        let props = ins.props();
        if unit == Unit::Vcmp {
            self.vcmp(ins, w, program, wg, out);
        } else if props.is_some_and(|p| p.lane_select()) {
            self.lane_op(ins, w, program, wg, out);
        } else if unit == Unit::Mfma {
            self.mfma(ins);
        } else if props.is_some_and(|p| p.packed()) {
            self.vop3p(ins, w);
        } else if unit == Unit::Valu {
            self.valu(ins, w);
        } else if unit == Unit::Ds {
            self.ds(ins, w, program, lds, wg, out);
        } else if self.classify(ins).is_some() {
            self.vmem(ins, w, program, lds, wg, out);
        }
    }

    /// Fill the destination of the memory instruction `ins` just ran: from
    /// the LDS bytes it read (a DS or flat load), else defined.
    pub(super) fn after(
        &mut self,
        w: &Wave,
        lds: Option<&LdsShadow>,
        private: &[(u32, u32, u32, bool)],
    ) {
        let (pread, porigin) = self.private_accesses(w, private);
        if let Some((d, n, poison, o)) = self.scc_of.take() {
            let mut v = 0u64;
            for i in 0..n.min(2) {
                v |= (w.s.get((d + i) as usize).copied().unwrap_or(0) as u64) << (32 * i);
            }
            // Decided by any defined one bit.
            self.scc = poison != 0 && v & !poison == 0;
            self.scco = if self.scc { o } else { None };
        }
        let Some(f) = self.fill.take() else { return };
        if f.scalar {
            for r in f.first..f.first + f.count.max(1) {
                self.set_s(r, 0, None);
            }
            return;
        }
        let (mut read, mut o) = lds.map(|sh| sh.read_poison()).unwrap_or(([0; 8], None));
        for (r, p) in read.iter_mut().zip(pread) {
            *r |= p;
        }
        if o.is_none() {
            o = porigin;
        }
        if f.group > 0 {
            // Lanes exchange data within groups of `f.group`.
            let mut m = read.iter().fold(0, |a, d| a | d) & f.lanes;
            let size = f.group as u32;
            for g in 0..64 / size {
                let mask = ((1u64 << size) - 1) << (size * g);
                if m & mask != 0 {
                    m |= mask;
                }
            }
            let p = P { m: m & f.lanes, o };
            self.set_v(f.file, f.first, f.count, f.half, p, f.lanes);
            return;
        }
        for j in 0..f.count.max(1) {
            let p = P {
                m: read[(j as usize).min(7)] & f.lanes,
                o,
            };
            self.set_v(f.file, f.first + j, 1, f.half, p, f.lanes);
        }
    }

    /// Apply the current instruction's private accesses (lane, offset,
    /// length, write): writes store [`Shadow::private_data`]'s shadow,
    /// reads return, per dword of the data read, the lanes that read an
    /// uninitialized byte, and the first origin.
    fn private_accesses(
        &mut self,
        w: &Wave,
        log: &[(u32, u32, u32, bool)],
    ) -> ([u64; 8], Option<Origin>) {
        let mut read = [0u64; 8];
        let mut origin = None;
        if log.is_empty() {
            return (read, origin);
        }
        let size = w.private_size as usize;
        let bytes = size * 64;
        if self.private_written.len() * 64 < bytes {
            self.private_written = vec![0; bytes.div_ceil(64)];
            self.private_poison = vec![0; bytes.div_ceil(64)];
        }
        let (mut rcur, mut wcur) = ([0usize; 64], [0usize; 64]);
        let bit = |v: &[u64], i: usize| v.get(i / 64).is_some_and(|x| x >> (i % 64) & 1 != 0);
        for &(lane, off, len, write) in log {
            let l = (lane % 64) as usize;
            for i in 0..len as usize {
                let idx = l * size + off as usize + i;
                if idx / 64 >= self.private_written.len() {
                    break;
                }
                let (word, b) = (idx / 64, 1u64 << (idx % 64));
                if write {
                    let dw = ((wcur[l] + i) / 4).min(7);
                    let poisoned = self.private_data.0[dw] >> l & 1 != 0;
                    self.private_written[word] |= b;
                    if poisoned {
                        self.private_poison[word] |= b;
                        if let Some(o) = self.private_data.1 {
                            self.private_origin.insert(idx, o);
                        }
                    } else {
                        self.private_poison[word] &= !b;
                        self.private_origin.remove(&idx);
                    }
                } else {
                    let o = if !bit(&self.private_written, idx) {
                        Some(Origin::Scratch {
                            lane,
                            offset: off + i as u32,
                            read: self.at,
                        })
                    } else if bit(&self.private_poison, idx) {
                        self.private_origin.get(&idx).copied()
                    } else {
                        continue;
                    };
                    read[((rcur[l] + i) / 4).min(7)] |= 1 << l;
                    origin = origin.or(o);
                }
            }
            if write {
                wcur[l] += len as usize;
            } else {
                rcur[l] += len as usize;
            }
        }
        (read, origin)
    }

    // ----- scalar ----------------------------------------------------------

    fn smem(&mut self, ins: &Instruction, program: &Program, wg: [u32; 3], out: &mut Vec<Finding>) {
        let m = ins.mnemonic.as_str();
        let Some((_, has_dst)) = self.classify(ins) else {
            return;
        };
        let o = &ins.ops;
        if m.starts_with("s_memtime") || m.starts_with("s_memrealtime") {
            if let Some(d) = o.first().and_then(|s| regs_of(&s.op)) {
                self.fill = Some(Fill {
                    file: d.0,
                    first: d.1,
                    count: d.2,
                    half: Half::Both,
                    lanes: 0,
                    group: 0,
                    scalar: true,
                });
            }
            return;
        }
        for (i, s) in o.iter().enumerate().skip(1) {
            self.check(
                out,
                wg,
                program,
                ins,
                &s.op,
                0,
                if i == 1 {
                    "as a scalar memory address"
                } else {
                    "as a scalar memory offset"
                },
            );
        }
        if has_dst {
            if let Some(d) = o.first().and_then(|s| regs_of(&s.op)) {
                self.fill = Some(Fill {
                    file: d.0,
                    first: d.1,
                    count: d.2,
                    half: Half::Both,
                    lanes: 0,
                    group: 0,
                    scalar: true,
                });
            }
        } else if let Some(d) = o.first() {
            self.check(
                out,
                wg,
                program,
                ins,
                &d.op,
                0,
                "in a store to global memory",
            );
        }
    }

    /// A branch on a 64-bit lane mask: decided unless no defined bit is set
    /// and some bit is poisoned.
    fn mask_undecided(&self, r: u16, w: &Wave) -> Option<(String, Option<Origin>)> {
        let (lo, o1) = self.sreg(r);
        let (hi, o2) = self.sreg(r + 1);
        let sh = (lo as u64 | (hi as u64) << 32) & self.lane_bits;
        let v = w.s[r as usize] as u64 | (w.s[r as usize + 1] as u64) << 32;
        (sh != 0 && v & !sh == 0).then(|| {
            let name = if r == VCC { "vcc" } else { "exec" };
            (
                format!("{name} (lane bit {})", sh.trailing_zeros()),
                if lo != 0 { o1 } else { o2 },
            )
        })
    }

    fn salu(
        &mut self,
        ins: &Instruction,
        w: &Wave,
        program: &Program,
        wg: [u32; 3],
        out: &mut Vec<Finding>,
    ) {
        let m = ins.mnemonic.as_str();
        let o = &ins.ops;
        match m {
            "s_cbranch_scc0" | "s_cbranch_scc1" => {
                if self.scc {
                    let og = self.scco;
                    self.report(
                        out,
                        wg,
                        program,
                        ins,
                        "as a branch condition",
                        "scc".into(),
                        og,
                    );
                }
                return;
            }
            "s_cbranch_vccz" | "s_cbranch_vccnz" | "s_cbranch_execz" | "s_cbranch_execnz" => {
                let r = if m.contains("vcc") { VCC } else { EXEC };
                if let Some((what, og)) = self.mask_undecided(r, w) {
                    self.report(out, wg, program, ins, "as a branch condition", what, og);
                }
                return;
            }
            "s_setpc_b64" | "s_swappc_b64" => {
                let src = if m == "s_setpc_b64" { 0 } else { 1 };
                if let Some(s) = o.get(src) {
                    self.check(out, wg, program, ins, &s.op, 0, "as a branch target");
                }
                if m == "s_swappc_b64" {
                    if let Some(d) = o.first() {
                        self.set_dst(&d.op, Half::Both, P::CLEAN, u64::MAX);
                    }
                }
                return;
            }
            "s_getpc_b64" | "s_getreg_b32" => {
                if let Some(d) = o.first() {
                    self.set_dst(&d.op, Half::Both, P::CLEAN, u64::MAX);
                }
                return;
            }
            "s_set_gpr_idx_on" | "s_set_gpr_idx_idx" => {
                if let Some(s) = o.first() {
                    self.check(out, wg, program, ins, &s.op, 0, "as a VGPR index");
                }
                return;
            }
            _ => {}
        }
        // Compares: scc from every source bit.
        if m.starts_with("s_cmp") || m.starts_with("s_bitcmp") {
            let mut p = P::CLEAN;
            for s in o {
                p = p.or(self.op(&s.op, Half::Both));
            }
            self.scc = p.m != 0;
            self.scco = p.o;
            return;
        }
        // Only an instruction whose first operand is an SGPR it writes
        // (the table's role; RDNA names the CDNA table lacks: the target's
        // table, and wave32's `s_*_saveexec_b32`) goes on.
        let saveexec = m.contains("_saveexec_") || m.contains("_wrexec_");
        let first_written = writes_sgpr_first(ins)
            || (ins.props().is_none()
                && (saveexec
                    || self.props(ins).is_some_and(|p| {
                        p.operands.first().is_some_and(|o| {
                            o.role != Role::Src
                                && matches!(
                                    o.kind,
                                    crate::isa::Kind::Sgpr | crate::isa::Kind::Scalar
                                )
                        })
                    })));
        if !first_written || o.is_empty() {
            return;
        }
        let dst = &o[0].op;
        let Some((RegFile::S, d, n)) = regs_of(dst) else {
            return;
        };
        let srcs = &o[1..];
        let wide = n.max(1);
        // (bits, origin) per destination chunk.
        let mut res: Vec<(u32, Option<Origin>)> = vec![(0, None); wide as usize];
        let chunk = |sh: &Self, s: &Operand, i: u16| -> (u32, Option<Origin>) {
            match s {
                Operand::Reg {
                    file: RegFile::S,
                    index,
                    count,
                } => sh.sreg(index + i.min((*count).max(1) - 1)),
                Operand::Scc if sh.scc => (u32::MAX, sh.scco),
                _ => (0, None),
            }
        };
        let or_o = |a: Option<Origin>, ab: u32, b: Option<Origin>| if ab != 0 { a } else { b };
        let bitwise = |op: &str, a: u32, sa: u32, b: u32, sb: u32| -> u32 {
            match op {
                "and" | "nand" => (sa & sb) | (sa & b) | (a & sb),
                "or" | "nor" => (sa & sb) | (sa & !b) | (!a & sb),
                "andn2" => (sa & sb) | (sa & !b) | (a & sb),
                "orn2" => (sa & sb) | (sa & b) | (!a & sb),
                "andn1" => (sa & sb) | (sa & b) | (!a & sb),
                "orn1" => (sa & sb) | (sa & !b) | (a & sb),
                _ => sa | sb,
            }
        };
        let mut scc_p: Option<(bool, Option<Origin>)> = None;
        if saveexec {
            // s_OP_saveexec_b64 d, s: d = exec, exec = OP(s, exec); the
            // wrexec forms write the new exec to d.
            let op = m
                .strip_prefix("s_")
                .and_then(|r| r.split('_').next())
                .unwrap_or("");
            let mut new = [(0u32, None); 2];
            let old = [self.sreg(EXEC), self.sreg(EXEC + 1)];
            // wave32's `_b32` forms: `exec_lo` and one SGPR.
            let chunks = if m.ends_with("_b32") { 1 } else { 2 };
            for (i, x) in new.iter_mut().enumerate().take(chunks) {
                let i16 = i as u16;
                let (sa, oa) = srcs
                    .first()
                    .map(|s| chunk(self, &s.op, i16))
                    .unwrap_or((0, None));
                let a = srcs
                    .first()
                    .and_then(|s| sval(w, &s.op, i16))
                    .unwrap_or(u32::MAX);
                let (sb, ob) = old[i];
                let b = w.s[EXEC as usize + i];
                let bits = bitwise(op, a, sa, b, sb);
                *x = (bits, or_o(oa, sa, ob));
            }
            let wrexec = m.contains("_wrexec_");
            for i in 0..chunks as u16 {
                let (b, og) = if wrexec {
                    new[i as usize]
                } else {
                    old[i as usize]
                };
                self.set_s(d + i, b, og);
                self.set_s(EXEC + i, new[i as usize].0, new[i as usize].1);
            }
            let any = new[0].0 | new[1].0;
            if any != 0 {
                let og = if new[0].0 != 0 { new[0].1 } else { new[1].1 };
                self.report(
                    out,
                    wg,
                    program,
                    ins,
                    "as the exec mask",
                    format!(
                        "exec (lane bit {})",
                        (new[0].0 as u64 | (new[1].0 as u64) << 32).trailing_zeros()
                    ),
                    og,
                );
            }
            self.scc = any != 0;
            self.scco = if any != 0 {
                new[0].1.or(new[1].1)
            } else {
                None
            };
            return;
        }
        // The operation: `s_and_b64` → `and`, `s_pack_lh_b32_b16` → `pack_lh`.
        let op = match m.strip_prefix("s_pack_") {
            Some(r) => &m[..7 + r.find('_').unwrap_or(r.len())],
            None => m.rsplit_once('_').map(|x| x.0).unwrap_or(m),
        };
        let op = op.strip_prefix("s_").unwrap_or(op);
        match op {
            "mov" | "movk" | "not" | "and" | "or" | "xor" | "andn2" | "orn2" | "nand" | "nor"
            | "xnor" => {
                for i in 0..wide {
                    let (sa, oa) = srcs
                        .first()
                        .map(|s| chunk(self, &s.op, i))
                        .unwrap_or((0, None));
                    let (sb, ob) = srcs
                        .get(1)
                        .map(|s| chunk(self, &s.op, i))
                        .unwrap_or((0, None));
                    let a = srcs
                        .first()
                        .and_then(|s| sval(w, &s.op, i))
                        .unwrap_or(u32::MAX);
                    let b = srcs
                        .get(1)
                        .and_then(|s| sval(w, &s.op, i))
                        .unwrap_or(u32::MAX);
                    let bits = if srcs.len() < 2 {
                        sa
                    } else {
                        bitwise(op, a, sa, b, sb)
                    };
                    res[i as usize] = (bits, or_o(oa, sa, ob));
                }
            }
            "cselect" | "cmov" | "cmovk" => {
                for i in 0..wide {
                    let (x, y) = if op == "cselect" {
                        (srcs.first(), srcs.get(1))
                    } else {
                        (srcs.first(), o.first())
                    };
                    let (sa, oa) = x.map(|s| chunk(self, &s.op, i)).unwrap_or((0, None));
                    let (sb, ob) = y.map(|s| chunk(self, &s.op, i)).unwrap_or((0, None));
                    let bits = if self.scc {
                        let a = x.and_then(|s| sval(w, &s.op, i)).unwrap_or(0);
                        let b = y.and_then(|s| sval(w, &s.op, i)).unwrap_or(u32::MAX);
                        sa | sb | (a ^ b)
                    } else if w.scc {
                        sa
                    } else {
                        sb
                    };
                    let og = if self.scc {
                        self.scco
                    } else {
                        or_o(oa, sa, ob)
                    };
                    res[i as usize] = (bits, og);
                }
            }
            "pack_ll" | "pack_lh" | "pack_hh" | "pack_hl" => {
                let (sa, oa) = srcs
                    .first()
                    .map(|s| chunk(self, &s.op, 0))
                    .unwrap_or((0, None));
                let (sb, ob) = srcs
                    .get(1)
                    .map(|s| chunk(self, &s.op, 0))
                    .unwrap_or((0, None));
                let bits = match op {
                    "pack_ll" => (sa & 0xffff) | sb << 16,
                    "pack_lh" => (sa & 0xffff) | (sb & 0xffff_0000),
                    "pack_hh" => sa >> 16 | (sb & 0xffff_0000),
                    _ => sa >> 16 | sb << 16,
                };
                res[0] = (bits, or_o(oa, sa, ob));
            }
            _ => {
                // Arithmetic: any poisoned source bit poisons every bit.
                let mut p = P::CLEAN;
                for s in srcs {
                    p = p.or(self.op(&s.op, Half::Both));
                }
                // `s_addk`, `s_mulk`, `s_bitset*`: the table's `DstSrc`.
                let reads_dst = self
                    .props(ins)
                    .is_some_and(|p| p.operands.first().is_some_and(|o| o.role == Role::DstSrc));
                if reads_dst {
                    p = p.or(self.op(dst, Half::Both));
                }
                if matches!(op, "addc" | "subb") {
                    p = p.or(self.op(&Operand::Scc, Half::Both));
                }
                // A shift by a defined amount moves the poisoned bits.
                let shift = ["s_lshl_b", "s_lshr_b"].iter().any(|x| m.starts_with(x));
                let amt = srcs.get(1).and_then(|s| sval(w, &s.op, 0));
                let amt_clean = srcs
                    .get(1)
                    .map(|s| self.op(&s.op, Half::Both).m == 0)
                    .unwrap_or(false);
                if shift && amt_clean && amt.is_some() {
                    let amt = amt.unwrap_or(0);
                    let mut sh = 0u64;
                    for i in 0..wide {
                        let (b, _) = srcs
                            .first()
                            .map(|s| chunk(self, &s.op, i))
                            .unwrap_or((0, None));
                        sh |= (b as u64) << (32 * i);
                    }
                    let sh = if wide == 1 {
                        let a = amt & 31;
                        if m.starts_with("s_lshl") {
                            (sh << a) & 0xffff_ffff
                        } else {
                            sh >> a
                        }
                    } else {
                        let a = amt & 63;
                        if m.starts_with("s_lshl") {
                            sh << a
                        } else {
                            sh >> a
                        }
                    };
                    for i in 0..wide {
                        res[i as usize] = ((sh >> (32 * i)) as u32, p.o);
                    }
                } else {
                    let bits = if p.m != 0 { u32::MAX } else { 0 };
                    for r in res.iter_mut() {
                        *r = (bits, p.o);
                    }
                    scc_p = Some((p.m != 0, p.o));
                }
            }
        }
        for (i, &(b, og)) in res.iter().enumerate() {
            self.set_s(d + i as u16, b, og);
        }
        if d <= EXEC + 1 && d + wide > EXEC {
            let (lo, o1) = self.sreg(EXEC);
            let (hi, o2) = self.sreg(EXEC + 1);
            if lo | hi != 0 {
                self.report(
                    out,
                    wg,
                    program,
                    ins,
                    "as the exec mask",
                    format!(
                        "exec (lane bit {})",
                        (lo as u64 | (hi as u64) << 32).trailing_zeros()
                    ),
                    if lo != 0 { o1 } else { o2 },
                );
            }
        }
        if writes_scc(m) {
            match scc_p {
                Some((b, og)) => {
                    self.scc = b;
                    self.scco = og;
                }
                None => {
                    let mut poison = 0u64;
                    for (i, r) in res.iter().enumerate().take(2) {
                        poison |= (r.0 as u64) << (32 * i);
                    }
                    let og = res.iter().find(|r| r.0 != 0).and_then(|r| r.1);
                    self.scc_of = Some((d, wide, poison, og));
                }
            }
        }
    }

    // ----- vector ALU ------------------------------------------------------

    fn valu(&mut self, ins: &Instruction, w: &Wave) {
        let (name, enc) = base_name(&ins.mnemonic);
        let ops = &ins.ops;
        if ops.is_empty() {
            return;
        }
        if matches!(
            name,
            "v_swap_b32" | "v_permlane16_swap_b32" | "v_permlane32_swap_b32"
        ) {
            self.swap(name, ops, w.exec());
            return;
        }
        // The roles the executor reads, from the property table.
        let (has_sdst, mask_in) = self
            .props(ins)
            .map_or((false, false), |p| (p.carry_out(), p.mask_in()));
        let first = if has_sdst { 2 } else { 1 };
        let last = if mask_in { ops.len() - 1 } else { ops.len() };
        if last < first {
            return;
        }
        let srcs = &ops[first..last];
        let (dty, sty) = crate::exec::valu_types(name);
        let sdwa = enc == "_sdwa";
        let op_sel = ins.modifier("op_sel").map(parse_bits).unwrap_or_default();
        // Whether 16-bit source types mean half a register: not for packed,
        // dot or mixed-precision operations.
        let halves = !["dot", "_pk", "mix", "sad", "perm"]
            .iter()
            .any(|x| name.contains(x));
        let exec = w.exec();
        // true16 (RDNA): `.h`/`.l` name the half each printed operand
        // reads or writes (`crate::exec`'s `t16` modifier).
        let t16 = ins.modifier("t16").map(str::as_bytes);
        let t16_half = |k: usize| match t16.and_then(|t| t.get(k)) {
            Some(b'h') => Some(Half::Hi),
            Some(b'l') => Some(Half::Lo),
            _ => None,
        };
        // The lanes written; DPP's source lanes.
        let mut written = exec;
        let mut dpp_src: Option<[Option<usize>; 64]> = None;
        if (enc == "_dpp" || enc == "_e64_dpp") && ins.has("dpp8") {
            // DPP8: lane `l` reads lane `sel[l % 8]` of its group of 8 (the
            // executor refuses an inactive source lane and `fi:1`).
            let word = ins.words.get(if enc == "_e64_dpp" { 2 } else { 1 });
            let sel = word.copied().unwrap_or(0) >> 8;
            let mut map = [None; 64];
            for (lane, slot) in map.iter_mut().enumerate() {
                if exec >> lane & 1 != 0 {
                    *slot = Some(lane / 8 * 8 + (sel >> (3 * (lane % 8)) & 7) as usize);
                }
            }
            dpp_src = Some(map);
        } else if enc == "_dpp" || enc == "_e64_dpp" {
            // VOP3 DPP's word follows VOP3's two (as the executor reads it).
            let word = ins
                .words
                .get(if enc == "_e64_dpp" { 2 } else { 1 })
                .copied()
                .unwrap_or(0);
            let (ctrl, bound, bank, row) = (
                word >> 8 & 0x1ff,
                word >> 19 & 1 != 0,
                word >> 24 & 0xf,
                word >> 28 & 0xf,
            );
            let mut map = [None; 64];
            for (lane, slot) in map.iter_mut().enumerate() {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                if row >> (lane / 16) & 1 == 0 || bank >> (lane % 16 / 4) & 1 == 0 {
                    written &= !(1 << lane);
                    continue;
                }
                match crate::exec::dpp_source(ctrl, lane) {
                    Some(s) if exec >> s & 1 != 0 => *slot = Some(s),
                    _ if bound => {}
                    _ => written &= !(1 << lane),
                }
            }
            dpp_src = Some(map);
        }
        // Per-source poison (lane masks).
        let mut ps: Vec<P> = Vec::with_capacity(3);
        for (k, s) in srcs.iter().enumerate() {
            let h = if let Some(h) = t16_half(first + k) {
                h
            } else if sdwa && k < 2 {
                sel_half(ins.modifier(if k == 0 { "src0_sel" } else { "src1_sel" }))
            } else if halves && is16(sty[k.min(2)]) {
                if op_sel.get(k).copied().unwrap_or(0) == 1 {
                    Half::Hi
                } else {
                    Half::Lo
                }
            } else {
                Half::Both
            };
            let mut p = self.op(&s.op, h);
            if k == 0 {
                if let Some(map) = &dpp_src {
                    let mut m = 0u64;
                    for (lane, sl) in map.iter().enumerate() {
                        if let Some(l) = sl {
                            m |= (p.m >> l & 1) << lane;
                        }
                    }
                    p.m = m;
                }
            }
            // gfx10+'s row permutes: lane `l` reads a lane the selects
            // name; any poisoned active source lane poisons every result.
            if k == 0 && matches!(name, "v_permlane16_b32" | "v_permlanex16_b32") {
                p = p.and(exec).any();
            }
            ps.push(p);
        }
        let mask = if mask_in {
            self.lanes(&ops[ops.len() - 1].op)
        } else if crate::exec::reads_vcc_implicitly(name) {
            self.lanes(&Operand::Reg {
                file: RegFile::S,
                index: VCC,
                count: 2,
            })
        } else {
            P::CLEAN
        };
        let all = ps.iter().fold(mask, |a, &b| a.or(b));
        let dst = &ops[0].op;
        // The result's poison, low and high registers (64-bit results
        // whose low half depends on the low halves of the sources only).
        // One 32-bit half (register) of 64-bit source `k`.
        let part = |sh: &Self, k: usize, hi: bool| -> P {
            match srcs.get(k).map(|s| &s.op) {
                Some(Operand::Reg { file, index, count }) if *count >= 2 => sh.op(
                    &Operand::Reg {
                        file: *file,
                        index: index + u16::from(hi),
                        count: 1,
                    },
                    Half::Both,
                ),
                Some(o) => sh.op(o, Half::Both),
                None => P::CLEAN,
            }
        };
        let (lo, hi) = match name {
            "v_cndmask_b32" => {
                let sel = match &ops[ops.len() - 1].op {
                    Operand::Reg {
                        file: RegFile::S,
                        index,
                        ..
                    } => {
                        w.s[*index as usize] as u64
                            | (w.s.get(*index as usize + 1).copied().unwrap_or(0) as u64) << 32
                    }
                    _ => 0,
                };
                let (p0, p1) = (
                    ps.first().copied().unwrap_or(P::CLEAN),
                    ps.get(1).copied().unwrap_or(P::CLEAN),
                );
                let m = mask.m | (sel & p1.m) | (!sel & p0.m);
                let o = if mask.m != 0 {
                    mask.o
                } else if sel & p1.m != 0 {
                    p1.o
                } else {
                    p0.o
                };
                let p = P { m, o };
                (p, p)
            }
            "v_mad_u64_u32" | "v_mad_i64_i32" | "v_lshl_add_u64" => {
                // Low result bits from the low halves only (carries go up).
                let lo = if name == "v_lshl_add_u64" {
                    part(self, 0, false)
                        .or(ps.get(1).copied().unwrap_or(P::CLEAN))
                        .or(part(self, 2, false))
                } else {
                    ps[0]
                        .or(ps.get(1).copied().unwrap_or(P::CLEAN))
                        .or(part(self, 2, false))
                };
                (lo, all)
            }
            // Shifts of a 64-bit value: left, the low result comes from the
            // low half; right, the high result from the high half.
            "v_lshlrev_b64" => (ps[0].or(part(self, 1, false)), all),
            "v_lshrrev_b64" | "v_ashrrev_i64" => (all, ps[0].or(part(self, 1, true))),
            "v_pack_b32_f16" | "v_cvt_pkrtz_f16_f32" | "v_cvt_pk_u16_u32" | "v_cvt_pk_i16_i32" => {
                let p0 = ps.first().copied().unwrap_or(P::CLEAN);
                let p1 = ps.get(1).copied().unwrap_or(P::CLEAN);
                self.set_v_lanes(dst, Half::Lo, p0, written);
                self.set_v_lanes(dst, Half::Hi, p1, written);
                return;
            }
            _ => (all, all),
        };
        match dst {
            Operand::Reg {
                file: RegFile::S, ..
            } => self.set_dst(dst, Half::Both, all.and(written), written),
            Operand::Reg { file, index, count } => {
                let (file, index, count) = (*file, *index, (*count).max(1));
                if sdwa {
                    let sel = ins.modifier("dst_sel");
                    let unused = ins.modifier("dst_unused").unwrap_or("UNUSED_PAD");
                    let h = sel_half(sel);
                    if h == Half::Both || unused == "UNUSED_SEXT" {
                        self.set_v(file, index, count, Half::Both, lo, written);
                    } else {
                        let byte = matches!(sel, Some(s) if s.starts_with("BYTE"));
                        let other = if h == Half::Lo { Half::Hi } else { Half::Lo };
                        let p = if byte && unused == "UNUSED_PRESERVE" {
                            lo.or(self.vreg(file, index, h))
                        } else {
                            lo
                        };
                        self.set_v(file, index, count, h, p, written);
                        if unused != "UNUSED_PRESERVE" {
                            self.set_v(file, index, count, other, P::CLEAN, written);
                        }
                    }
                } else if let Some(h) = t16_half(0) {
                    // A true16 result writes its half and keeps the other.
                    self.set_v(file, index, count, h, lo, written);
                } else if is16(dty) && halves {
                    if op_sel.get(3).copied().unwrap_or(0) == 1 {
                        self.set_v(file, index, count, Half::Hi, lo, written);
                    } else {
                        self.set_v(file, index, count, Half::Lo, lo, written);
                        self.set_v(file, index, count, Half::Hi, P::CLEAN, written);
                    }
                } else if count >= 2 {
                    self.set_v(file, index, 1, Half::Both, lo, written);
                    self.set_v(file, index + 1, count - 1, Half::Both, hi, written);
                } else {
                    self.set_v(file, index, count, Half::Both, lo, written);
                }
            }
            _ => {}
        }
        if has_sdst {
            // The carry (or scale flag) of each written lane; others 0.
            self.set_lanes(&ops[1].op, all.and(written));
        }
    }

    /// `v_swap_b32` (the exec lanes of two registers) and gfx950's
    /// `v_permlane{16,32}_swap_b32` (odd rows of the first with even rows of
    /// the second, or rows 2–3 with rows 0–1), as the executor swaps data.
    fn swap(&mut self, name: &str, ops: &[crate::decode::Src], exec: u64) {
        let (Some((f0, i0, _)), Some((f1, i1, _))) = (
            ops.first().and_then(|o| regs_of(&o.op)),
            ops.get(1).and_then(|o| regs_of(&o.op)),
        ) else {
            return;
        };
        let (Some(ra), Some(rb)) = (self.vrow(f0, i0), self.vrow(f1, i1)) else {
            return;
        };
        let (sa, sb) = (self.v[ra], self.v[rb]);
        let (oa, ob) = (self.vo[ra], self.vo[rb]);
        let (mut na, mut nb) = (sa, sb);
        for lane in 0..64usize {
            let partner = match name {
                "v_swap_b32" => (exec >> lane & 1 != 0).then_some(lane),
                "v_permlane16_swap_b32" => (lane / 16 % 2 == 1).then(|| lane - 16),
                _ => (lane >= 32).then(|| lane - 32),
            };
            if let Some(p) = partner {
                for h in 0..2 {
                    let (x, y) = (sa[h] >> lane & 1, sb[h] >> p & 1);
                    na[h] = (na[h] & !(1 << lane)) | y << lane;
                    nb[h] = (nb[h] & !(1 << p)) | x << p;
                }
            }
        }
        // The origin of a swapped-in poison, else the register's own.
        let oa2 = if sb != [0, 0] { ob } else { oa };
        let ob2 = if sa != [0, 0] { oa } else { ob };
        for (f, i, n, o) in [(f0, i0, na, oa2), (f1, i1, nb, ob2)] {
            for (h, half) in [Half::Lo, Half::Hi].into_iter().enumerate() {
                self.set_v(
                    f,
                    i,
                    1,
                    half,
                    P {
                        m: n[h],
                        o: Some(o),
                    },
                    u64::MAX,
                );
            }
        }
    }

    fn set_v_lanes(&mut self, dst: &Operand, h: Half, p: P, lanes: u64) {
        if let Operand::Reg { file, index, count } = dst {
            self.set_v(*file, *index, *count, h, p, lanes);
        }
    }

    fn vcmp(
        &mut self,
        ins: &Instruction,
        w: &Wave,
        program: &Program,
        wg: [u32; 3],
        out: &mut Vec<Finding>,
    ) {
        let (name, enc) = base_name(&ins.mnemonic);
        let ops = &ins.ops;
        let (sdst, srcs) = match ops.len() {
            3 => (Some(&ops[0].op), &ops[1..]),
            2 => (None, &ops[..]),
            _ => return,
        };
        let x = name.starts_with("v_cmpx_");
        let sty = match name.rsplit('_').next() {
            Some("f16") | Some("i16") | Some("u16") => Half::Lo,
            _ => Half::Both,
        };
        let op_sel = ins.modifier("op_sel").map(parse_bits).unwrap_or_default();
        let exec = w.exec();
        let mut p = P::CLEAN;
        let t16 = ins.modifier("t16").map(str::as_bytes);
        let printed = usize::from(sdst.is_some());
        for (k, s) in srcs.iter().enumerate() {
            let h = if let Some(&c) = t16.and_then(|t| t.get(printed + k)).filter(|c| **c != b'-') {
                if c == b'h' {
                    Half::Hi
                } else {
                    Half::Lo
                }
            } else if enc == "_sdwa" {
                sel_half(ins.modifier(if k == 0 { "src0_sel" } else { "src1_sel" }))
            } else if sty == Half::Lo && op_sel.get(k).copied().unwrap_or(0) == 1 {
                Half::Hi
            } else {
                sty
            };
            p = p.or(self.op(&s.op, h));
        }
        let p = p.and(exec);
        match sdst {
            Some(d) => self.set_lanes(d, p),
            None if !x => self.set_lanes(
                &Operand::Reg {
                    file: RegFile::S,
                    index: VCC,
                    count: 2,
                },
                p,
            ),
            None => {}
        }
        if x {
            self.set_lanes(
                &Operand::Reg {
                    file: RegFile::S,
                    index: EXEC,
                    count: 2,
                },
                p,
            );
            if p.m != 0 {
                self.report(
                    out,
                    wg,
                    program,
                    ins,
                    "as the exec mask",
                    format!("exec (lane bit {})", p.m.trailing_zeros()),
                    p.o,
                );
            }
        }
    }

    fn lane_op(
        &mut self,
        ins: &Instruction,
        w: &Wave,
        program: &Program,
        wg: [u32; 3],
        out: &mut Vec<Finding>,
    ) {
        let (name, _) = base_name(&ins.mnemonic);
        let ops = &ins.ops;
        if ops.len() < 2 {
            return;
        }
        match name {
            "v_readlane_b32" | "v_readfirstlane_b32" => {
                let lane = if name == "v_readlane_b32" {
                    let Some(sel) = ops.get(2) else { return };
                    self.check(out, wg, program, ins, &sel.op, 0, "as a lane index");
                    sval(w, &sel.op, 0).unwrap_or(0) % w.wave_size
                } else {
                    let e = w.exec();
                    if e == 0 {
                        0
                    } else {
                        e.trailing_zeros()
                    }
                };
                let p = self.op(&ops[1].op, Half::Both);
                let p = P {
                    m: p.m >> lane & 1,
                    o: p.o,
                };
                self.set_dst(&ops[0].op, Half::Both, p, 1);
            }
            "v_writelane_b32" => {
                let Some(sel) = ops.get(2) else { return };
                self.check(out, wg, program, ins, &sel.op, 0, "as a lane index");
                let lane = sval(w, &sel.op, 0).unwrap_or(0) % w.wave_size;
                let p = self.op(&ops[1].op, Half::Both);
                self.set_dst(&ops[0].op, Half::Both, p, 1 << lane);
            }
            _ => {}
        }
    }

    fn mfma(&mut self, ins: &Instruction) {
        // Every lane of A and B meets every lane of the result: any poison
        // poisons it all.
        let ops = &ins.ops;
        if ops.is_empty() {
            return;
        }
        let mut p = P::CLEAN;
        for s in &ops[1..] {
            p = p.or(self.op(&s.op, Half::Both));
        }
        // The wave's lanes only (wave32's WMMA: lanes 0-31).
        let p = p.and(self.lane_bits);
        self.set_dst(&ops[0].op, Half::Both, p.any(), self.lane_bits);
    }

    fn vop3p(&mut self, ins: &Instruction, w: &Wave) {
        let name = ins.mnemonic.as_str();
        let ops = &ins.ops;
        if ops.is_empty() {
            return;
        }
        let bits = |k: &str, d: u8| -> Vec<u8> {
            ins.modifier(k)
                .map(parse_bits)
                .unwrap_or_else(|| vec![d; 3])
        };
        let (op_sel, op_sel_hi) = (bits("op_sel", 0), bits("op_sel_hi", 1));
        let exec = w.exec();
        let Operand::Reg { file, index, .. } = ops[0].op else {
            return;
        };
        let srcs = &ops[1..];
        if name == "v_pk_mov_b32" || name.ends_with("_f32") {
            // 64-bit pairs: result register 0 from register op_sel[k] of
            // each source, register 1 from op_sel_hi[k] (v_pk_mov_b32:
            // src0 and src1 by op_sel[0] and op_sel[1]).
            let pick = |sh: &Self, k: usize, hi: bool| -> P {
                match srcs.get(k).map(|s| &s.op) {
                    Some(Operand::Reg { file, index, count }) if *count >= 2 => sh.op(
                        &Operand::Reg {
                            file: *file,
                            index: index + u16::from(hi),
                            count: 1,
                        },
                        Half::Both,
                    ),
                    Some(o) => sh.op(o, Half::Both),
                    None => P::CLEAN,
                }
            };
            let (r0, r1) = if name == "v_pk_mov_b32" {
                (
                    pick(self, 0, op_sel.first() == Some(&1)),
                    pick(self, 1, op_sel.get(1) == Some(&1)),
                )
            } else {
                let mut r0 = P::CLEAN;
                let mut r1 = P::CLEAN;
                for k in 0..srcs.len() {
                    r0 = r0.or(pick(self, k, op_sel.get(k) == Some(&1)));
                    r1 = r1.or(pick(self, k, op_sel_hi.get(k).copied().unwrap_or(1) == 1));
                }
                (r0, r1)
            };
            self.set_v(file, index, 1, Half::Both, r0, exec);
            self.set_v(file, index + 1, 1, Half::Both, r1, exec);
            return;
        }
        let sixteen = ["_f16", "_u16", "_i16", "_b16"]
            .iter()
            .any(|x| name.ends_with(x));
        if !sixteen {
            let mut p = P::CLEAN;
            for s in srcs {
                p = p.or(self.op(&s.op, Half::Both));
            }
            self.set_v(file, index, 1, Half::Both, p, exec);
            return;
        }
        let mut lo = P::CLEAN;
        let mut hi = P::CLEAN;
        for (k, s) in srcs.iter().enumerate() {
            let h = |b: bool| if b { Half::Hi } else { Half::Lo };
            lo = lo.or(self.op(&s.op, h(op_sel.get(k) == Some(&1))));
            hi = hi.or(self.op(&s.op, h(op_sel_hi.get(k).copied().unwrap_or(1) == 1)));
        }
        self.set_v(file, index, 1, Half::Lo, lo, exec);
        self.set_v(file, index, 1, Half::Hi, hi, exec);
    }

    // ----- memory ----------------------------------------------------------

    fn ds(
        &mut self,
        ins: &Instruction,
        w: &Wave,
        program: &Program,
        lds: Option<&LdsShadow>,
        wg: [u32; 3],
        out: &mut Vec<Finding>,
    ) {
        let m = ins.mnemonic.as_str();
        let ops = &ins.ops;
        let exec = w.exec();
        let word = ins.words.first().copied().unwrap_or(0);
        match m {
            "ds_nop" => return,
            "ds_swizzle_b32" => {
                let (Some(d), Some(s)) = (ops.first(), ops.get(1)) else {
                    return;
                };
                let offset = word & 0xffff;
                let p = self.op(&s.op, Half::Both);
                let mut mm = 0u64;
                for lane in 0..64usize {
                    let src = if offset & 0x8000 != 0 {
                        lane / 4 * 4 + ((offset >> (2 * (lane % 4))) & 3) as usize
                    } else {
                        let (and, or, xor) =
                            (offset & 0x1f, (offset >> 5) & 0x1f, (offset >> 10) & 0x1f);
                        (lane & 0x20) | (((lane as u32 & and) | or) ^ xor) as usize
                    };
                    if exec >> src & 1 != 0 {
                        mm |= (p.m >> src & 1) << lane;
                    }
                }
                self.set_dst(&d.op, Half::Both, P { m: mm, o: p.o }, exec);
                return;
            }
            "ds_bpermute_b32" | "ds_permute_b32" => {
                let (Some(d), Some(a), Some(s)) = (ops.first(), ops.get(1), ops.get(2)) else {
                    return;
                };
                self.check(
                    out,
                    wg,
                    program,
                    ins,
                    &a.op,
                    exec,
                    "as an LDS permute address",
                );
                let Some((RegFile::V, ar, _)) = regs_of(&a.op) else {
                    return;
                };
                let offset = word & 0xffff;
                let p = self.op(&s.op, Half::Both);
                let mut mm = 0u64;
                for lane in 0..64usize {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let at = w.v.get(ar as usize).map(|r| r[lane]).unwrap_or(0);
                    let other = (at.wrapping_add(offset) / 4 % w.wave_size) as usize;
                    if m == "ds_bpermute_b32" {
                        if exec >> other & 1 != 0 {
                            mm |= (p.m >> other & 1) << lane;
                        }
                    } else {
                        mm = (mm & !(1 << other)) | (p.m >> lane & 1) << other;
                    }
                }
                self.set_dst(&d.op, Half::Both, P { m: mm, o: p.o }, exec);
                return;
            }
            _ => {}
        }
        let Some((_, has_dst)) = self.classify(ins) else {
            return;
        };
        if m.starts_with("ds_append") || m.starts_with("ds_consume") {
            if let Some(d) = ops.first() {
                self.set_dst(&d.op, Half::Both, P::CLEAN, exec);
            }
            return;
        }
        // The address operand (`addr`) and the data after it, from the
        // table's operands (a returning access prints its destination first).
        let a = ins
            .props()
            .and_then(|p| p.operands.iter().position(|o| o.name == "addr"))
            .unwrap_or(usize::from(has_dst));
        if let Some(addr) = ops.get(a) {
            self.check(out, wg, program, ins, &addr.op, exec, "as an LDS address");
        }
        if let Some(sh) = lds {
            let (data, o) = self.data_dwords(&ops[(a + 1).min(ops.len())..], data_half(m), exec);
            sh.set_data(data, o);
        }
        if has_dst {
            if let Some((file, first, count)) = ops.first().and_then(|d| regs_of(&d.op)) {
                self.fill = Some(Fill {
                    file,
                    first,
                    count,
                    half: if m.ends_with("_d16_hi") {
                        Half::Hi
                    } else if m.ends_with("_d16") {
                        Half::Lo
                    } else {
                        Half::Both
                    },
                    lanes: exec,
                    group: match m {
                        _ if m.contains("_tr_") => 16,
                        "ds_load_tr16_b128" => 8,
                        _ if m.starts_with("ds_load_tr") => 16,
                        _ => 0,
                    },
                    scalar: false,
                });
            }
        }
    }

    fn vmem(
        &mut self,
        ins: &Instruction,
        w: &Wave,
        program: &Program,
        lds: Option<&LdsShadow>,
        wg: [u32; 3],
        out: &mut Vec<Finding>,
    ) {
        let m = ins.mnemonic.as_str();
        let Some((_, has_dst)) = self.classify(ins) else {
            return;
        };
        let ops = &ins.ops;
        let exec = w.exec();
        let buffer = m.starts_with("buffer_");
        let lds_dma = ins.has("lds") || m.contains("load_lds");
        if ["wbinvl1", "inv", "wb"]
            .iter()
            .any(|p| m.split_once('_').is_some_and(|(_, r)| r.starts_with(p)))
        {
            return;
        }
        let load = m.contains("_load_");
        let vaddr = if buffer {
            usize::from(!lds_dma)
        } else {
            usize::from(has_dst)
        };
        // Addresses: the vector address and every scalar operand (base,
        // descriptor, offset), m0 for LDS DMA.
        if let Some(a) = ops.get(vaddr) {
            self.check(out, wg, program, ins, &a.op, exec, "as a memory address");
        }
        for s in ops {
            if matches!(
                s.op,
                Operand::Reg {
                    file: RegFile::S,
                    ..
                }
            ) {
                self.check(
                    out,
                    wg,
                    program,
                    ins,
                    &s.op,
                    exec,
                    "as a memory address or descriptor",
                );
            }
        }
        if lds_dma {
            self.check(
                out,
                wg,
                program,
                ins,
                &Operand::Reg {
                    file: RegFile::S,
                    index: self.m0,
                    count: 1,
                },
                exec,
                "as an LDS DMA address (m0)",
            );
            return;
        }
        // The data stored (stores, atomics).
        let data_i = if buffer {
            Some(0)
        } else if load {
            None
        } else {
            Some(vaddr + 1)
        };
        let scratch =
            m.starts_with("scratch_") || (buffer && private_vsharp(w, ops.get(2).map(|s| &s.op)));
        if let Some(di) = data_i.filter(|_| !load) {
            if let Some(d) = ops.get(di) {
                let h = data_half(m);
                let p = self.op(&d.op, h);
                let (data, o) = self.data_dwords(std::slice::from_ref(d), h, exec);
                if let Some(sh) = lds {
                    sh.set_data(data, o);
                }
                // Private (scratch) stores keep the data's shadow too.
                self.private_data = (data, o);
                // Lanes whose flat address falls in global memory.
                let mut global = exec;
                if m.starts_with("flat_") {
                    if let Some((RegFile::V, r, 2)) = ops.get(vaddr).and_then(|a| regs_of(&a.op)) {
                        for lane in 0..64 {
                            let hi = w.v.get(r as usize + 1).map(|x| x[lane]).unwrap_or(0);
                            if hi == crate::dispatch::SHARED_BASE_HI
                                || hi == crate::dispatch::PRIVATE_BASE_HI
                            {
                                global &= !(1 << lane);
                            }
                        }
                    }
                }
                if !scratch && p.m & global != 0 {
                    let r = regs_of(&d.op).unwrap_or((RegFile::V, 0, 1));
                    let what = format!("{}, lane {}", reg_name(r), (p.m & global).trailing_zeros());
                    self.report(
                        out,
                        wg,
                        program,
                        ins,
                        "in a store to global memory",
                        what,
                        p.o,
                    );
                }
            }
        }
        if has_dst {
            if let Some((file, first, count)) = ops.first().and_then(|d| regs_of(&d.op)) {
                self.fill = Some(Fill {
                    file,
                    first,
                    count,
                    half: if m.ends_with("_d16_hi") {
                        Half::Hi
                    } else if m.ends_with("_d16") {
                        Half::Lo
                    } else {
                        Half::Both
                    },
                    lanes: exec,
                    // Transposing global loads exchange data across lanes
                    // as the LDS ones do.
                    group: match m {
                        "global_load_tr16_b128" => 8,
                        _ if m.starts_with("global_load_tr") => 16,
                        _ => 0,
                    },
                    scalar: false,
                });
            }
        }
    }
}

/// Whether scalar registers `op` hold the private segment buffer V# (the
/// test `exec::buffer` makes).
fn private_vsharp(w: &Wave, op: Option<&Operand>) -> bool {
    let Some(Operand::Reg {
        file: RegFile::S,
        index,
        ..
    }) = op
    else {
        return false;
    };
    let i = *index as usize;
    let (Some(&w1), Some(&w3)) = (w.s.get(i + 1), w.s.get(i + 3)) else {
        return false;
    };
    w1 & 0xffff_0000 == crate::exec::PRIVATE_VSHARP_WORD1
        && w3 & crate::exec::PRIVATE_VSHARP_WORD3 != 0
        && w.private_size > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::parse_line;

    /// An instruction from its text (the words matter only for DPP/DS).
    fn ins(text: &str) -> Instruction {
        parse_line(&format!("\t{text} // 000000001000: 00000000"))
            .unwrap()
            .unwrap()
    }

    fn program() -> Program {
        Program {
            kernel: "k".into(),
            instructions: vec![],
            index: Default::default(),
            lines: Default::default(),
        }
    }

    /// A wave of 64 active lanes whose launch set s0–s3 and v0; the shadow.
    fn setup() -> (Shadow, Wave) {
        let mut w = Wave::new(64, 0);
        w.set_exec(u64::MAX);
        (Shadow::new(0, 4, "s0–s3 and v0".into()), w)
    }

    /// Run `text` through the shadow; its findings.
    fn step(sh: &mut Shadow, w: &Wave, text: &str) -> Vec<Finding> {
        let mut out = Vec::new();
        sh.before(&ins(text), w, &program(), None, [0; 3], &mut out);
        sh.after(w, None, &[]);
        out
    }

    fn v(sh: &Shadow, r: u16) -> u64 {
        sh.v[r as usize][0] | sh.v[r as usize][1]
    }

    /// Which scalar instructions write their first operand, from the
    /// table ([`writes_sgpr_first`]), against the old prefix list, for every
    /// SALU name and alias of the table and every unlisted one: the same,
    /// except compares (handled before, by name, as before) and ten the
    /// old list missed, whose first operand is a source (`s_setpc_b64`'s
    /// target, `s_setkill`'s immediate, ...): the old rule took it for a
    /// destination.
    #[test]
    fn sgpr_destinations_from_the_table_are_the_old_list() {
        const NO_DST: [&str; 18] = [
            "s_cbranch",
            "s_branch",
            "s_waitcnt",
            "s_nop",
            "s_endpgm",
            "s_barrier",
            "s_sendmsg",
            "s_setprio",
            "s_sleep",
            "s_set_gpr_idx",
            "s_trap",
            "s_dcache",
            "s_icache",
            "s_ttrace",
            "s_code_end",
            "s_setvskip",
            "s_setreg",
            "s_wakeup",
        ];
        let names = crate::isa::TABLE
            .iter()
            .map(|p| p.name)
            .chain(crate::isa::ALIASES.iter().map(|a| a.0))
            .chain(crate::exec::UNLISTED.iter().map(|u| u.0));
        let (mut differ, mut salu) = (Vec::new(), 0);
        for m in names {
            let i = Instruction::new(0, m, vec![], vec![], vec![], m.into());
            if i.route.unit != Unit::Salu || m.starts_with("s_cmp") || m.starts_with("s_bitcmp") {
                continue;
            }
            salu += 1;
            let old = NO_DST.iter().any(|p| m.starts_with(p)) || i.props().is_none();
            if old != writes_sgpr_first(&i) {
                continue;
            }
            differ.push(m);
        }
        assert!(salu > 150, "{salu}");
        differ.sort();
        assert_eq!(
            differ,
            [
                "s_atc_probe",
                "s_atc_probe_buffer",
                "s_decperflevel",
                "s_incperflevel",
                "s_rfe_b64",
                "s_rfe_restore_b64",
                "s_set_valu_coexec_mode",
                "s_sethalt",
                "s_setkill",
                "s_setpc_b64",
            ]
        );
    }

    #[test]
    fn mad_u64_u32_poisons_only_the_high_result_from_the_high_addend() {
        let (mut sh, w) = setup();
        step(&mut sh, &w, "v_mov_b32_e32 v4, s0");
        step(&mut sh, &w, "v_mov_b32_e32 v14, v0");
        // v5 never written.
        assert_eq!(v(&sh, 5), u64::MAX);
        step(&mut sh, &w, "v_mad_u64_u32 v[4:5], s[6:7], v14, 24, v[4:5]");
        assert_eq!(v(&sh, 4), 0, "the low result is defined");
        assert_eq!(v(&sh, 5), u64::MAX, "the high result is not");
        // The low result as an address: no finding.
        assert!(step(&mut sh, &w, "global_load_dword v1, v4, s[0:1]").is_empty());
        // The high one: a finding naming v5's lane 0 and origin v5.
        let f = step(&mut sh, &w, "global_load_dword v1, v[4:5], off");
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("as a memory address: v[4:5], lane 0"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message
                .contains("it comes from v5, which nothing wrote"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn a_64_bit_add_carries_poison_up_but_not_down() {
        let (mut sh, w) = setup();
        step(&mut sh, &w, "v_mov_b32_e32 v2, s0");
        step(&mut sh, &w, "v_add_co_u32_e32 v4, vcc, s1, v2");
        // v3 (high half of the other addend) never written.
        step(&mut sh, &w, "v_addc_co_u32_e32 v5, vcc, 0, v3, vcc");
        assert_eq!((v(&sh, 4), v(&sh, 5)), (0, u64::MAX));
        // A poisoned low half poisons the carry and so the high result.
        let (mut sh, w) = setup();
        step(&mut sh, &w, "v_add_co_u32_e32 v4, vcc, s1, v9");
        step(&mut sh, &w, "v_addc_co_u32_e32 v5, vcc, 0, v0, vcc");
        assert_eq!((v(&sh, 4), v(&sh, 5)), (u64::MAX, u64::MAX));
    }

    #[test]
    fn cndmask_takes_the_chosen_operands_shadow() {
        let (mut sh, mut w) = setup();
        // vcc: lanes 0–31 pick src1 (v9, never written), the others src0.
        w.s[VCC as usize] = u32::MAX;
        w.s[VCC as usize + 1] = 0;
        step(&mut sh, &w, "v_cndmask_b32_e32 v1, v0, v9, vcc");
        assert_eq!(v(&sh, 1), 0xffff_ffff);
        // A poisoned select poisons the lane whatever it picks.
        step(&mut sh, &w, "v_cmp_gt_u32_e32 vcc, v0, v9");
        step(&mut sh, &w, "v_cndmask_b32_e32 v1, 0, v0, vcc");
        assert_eq!(v(&sh, 1), u64::MAX);
    }

    #[test]
    fn exec_and_branches_report_only_what_no_defined_bit_decides() {
        let (mut sh, mut w) = setup();
        // Half the lanes active: the compare's inactive lanes are defined 0.
        w.set_exec(0xffff_ffff);
        step(&mut sh, &w, "v_cmp_gt_u32_e32 vcc, v0, v9");
        w.set_exec(u64::MAX);
        let f = step(&mut sh, &w, "s_and_saveexec_b64 s[2:3], vcc");
        assert_eq!(f.len(), 1, "poisoned active lanes reach exec");
        assert!(f[0].message.contains("as the exec mask"));
        assert_eq!(
            sh.s[EXEC as usize + 1],
            0,
            "exec's high lanes: exec was 1, vcc defined 0"
        );
        // s_and with a defined zero: defined.
        let (mut sh, mut w) = setup();
        w.set_exec(0);
        assert!(step(&mut sh, &w, "s_and_b64 s[8:9], exec, s[10:11]").is_empty());
        assert_eq!((sh.s[8], sh.s[9]), (0, 0));
        // scc from an undefined compare decides a branch: a finding.
        let (mut sh, w) = setup();
        step(&mut sh, &w, "s_cmp_eq_u32 s5, 0");
        let f = step(&mut sh, &w, "s_cbranch_scc1 65535");
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("as a branch condition: scc"));
        assert!(f[0].message.contains("it comes from s5"));
    }

    #[test]
    fn swaps_exchange_shadow_lane_by_lane() {
        let (mut sh, w) = setup();
        step(&mut sh, &w, "v_mov_b32_e32 v1, v0");
        // v2 never written: after the swap v1 is poisoned, v2 defined.
        step(&mut sh, &w, "v_swap_b32 v1, v2");
        assert_eq!((v(&sh, 1), v(&sh, 2)), (u64::MAX, 0));
        // permlane32: rows 2–3 of v2 swap with rows 0–1 of v1.
        step(&mut sh, &w, "v_permlane32_swap_b32 v2, v1");
        assert_eq!(v(&sh, 2), 0xffff_ffff << 32);
        assert_eq!(v(&sh, 1), 0xffff_ffff_0000_0000);
    }

    #[test]
    fn d16_loads_and_16_bit_results_write_halves() {
        let (mut sh, w) = setup();
        step(&mut sh, &w, "global_load_short_d16 v1, v0, s[0:1]");
        assert_eq!(sh.v[1], [0, u64::MAX], "the low half loaded");
        step(&mut sh, &w, "global_load_short_d16_hi v1, v0, s[0:1]");
        assert_eq!(sh.v[1], [0, 0]);
        // A 16-bit result zeroes the high half; a store of it is clean.
        step(&mut sh, &w, "v_add_f16_e32 v2, v1, v1");
        assert_eq!(sh.v[2], [0, 0]);
        // v_cvt_f32_f16 reads the low half only.
        step(&mut sh, &w, "global_load_short_d16 v3, v0, s[0:1]");
        step(&mut sh, &w, "v_cvt_f32_f16_e32 v4, v3");
        assert_eq!(v(&sh, 4), 0);
        assert!(step(&mut sh, &w, "global_store_dword v0, v4, s[0:1]").is_empty());
        // Storing v3 whole stores its undefined high half.
        let f = step(&mut sh, &w, "global_store_dword v0, v3, s[0:1]");
        assert!(f[0]
            .message
            .contains("in a store to global memory: v3, lane 0"));
        // A 16-bit store of it does not.
        let (mut sh, w) = setup();
        step(&mut sh, &w, "global_load_short_d16 v3, v0, s[0:1]");
        assert!(step(&mut sh, &w, "global_store_short v0, v3, s[0:1]").is_empty());
    }
}
