//! RDNA's matrix instructions: WMMA on RDNA3 (gfx11) and RDNA4 (gfx12), and
//! RDNA4's sparse SWMMAC. Their lane layouts are data here ([`Layout`]); the
//! arithmetic is [`compute`], which reads registers through a closure so it
//! is independent of the wave's representation (`exec` calls it for
//! instructions of the table's `Format::Mfma` on RDNA targets).
//!
//! The layouts are AMD's Matrix Instruction Calculator's
//! (github.com/ROCm/amd_matrix_instruction_calculator, commit 2ef91896bcdc,
//! `--register-layout`/`--matrix-layout` for RDNA3 and RDNA4);
//! `tests/wmma.rs` checks every register slot of one instruction per layout
//! class, both wave sizes, against its output (`tests/rdna/wmma_layouts.txt`,
//! made by `tests/rdna/wmma_layouts.py`). In words, with `h = (lane / 16) % 2`:
//!
//! - **gfx11**: A's row `lane % 16` (B's column) holds all 16 K, element `e`
//!   at register `e / (32 / bits)`; lanes 16–31 (and 32–63 in wave64) repeat
//!   lanes 0–15. C/D: register `r` of lane `l` is row `2r + l / 16` (wave32)
//!   or `4r + l / 16` (wave64), column `l % 16`; a 16-bit result uses one half
//!   of each register, chosen by `op_sel[2]`.
//! - **gfx12** (wave32): each lane holds half of K. Counting a lane's A/B
//!   elements `e` in register order, in chunks of `c` elements (64 bits of
//!   the stored operand, or all of it if smaller; twice that many K for
//!   sparse A, whose 64 bits hold half of the K they cover),
//!   `k = 2c·(e / c) + c·h + e % c`. C/D: register `r` is row `8h + r` (32-bit)
//!   or rows `8h + 2r` and `8h + 2r + 1` in its halves (16-bit). Wave64 is the
//!   wave32 layout with the upper half of each operand's registers moved to
//!   lanes 32–63 (an operand of one register stays in lanes 0–31; lanes 32–63
//!   are ignored).
//! - **SWMMAC** (gfx12): A keeps two of every four K (4:2 sparsity); a
//!   register slot of A holds the two values of one group of four, and the
//!   index operand's nibble for that group (same lane, nibbles in A's group
//!   order) gives their places: bits `[1:0]` the first value's, `[3:2]` the
//!   second's. `index_key` selects which set of nibbles of the index
//!   register is used.
//! - **gfx1250** (wave32; `v_wmma_f32_16x16x32_{f16,bf16}` and
//!   `v_wmma_f32_16x16x{64,128}_{fp8,bf8}_{fp8,bf8}`, and
//!   `v_wmma_f32_16x16x128_f8f6f4` with fp8/bf8 operands): A row
//!   `lane % 16` (B column) holds K in chunks of `c` elements (`K / 4`: 8
//!   for K = 32, 16 for K = 64; 16 for K = 128), alternating between the
//!   half-waves:
//!   `k = 2c·(e / c) + c·h + e % c`; C/D as gfx12's. For K = 32 this is how
//!   AMD's FlyDSL gfx1250 kernels load the operands (ROCm/FlyDSL
//!   `kernels/bmm_gfx1250.py`, `load_wmma_frag`); for both K it is AMD's
//!   rocjitsu emulator's CDNA5 layout (ROCm/rocm-systems
//!   `emulation/rocjitsu/.../shared/mma/layout.h`, `wmma_input_loc`:
//!   blocks of `K / 4` elements, the lane group `(k / block) % 2`, and
//!   `wmma_output_loc_32` for C/D). Neither is an ISA document; which K a
//!   lane holds cannot change a dense product as long as A and B agree.

/// The generation, whose layouts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gen {
    /// RDNA3 (gfx1100–gfx1103, gfx1150–gfx1153).
    Gfx11,
    /// RDNA4 (gfx1200, gfx1201).
    Gfx12,
    /// gfx1250 (wave32 only): its dense 16×16×32 f16/bf16 and 16×16×64
    /// fp8/bf8 → f32 WMMAs.
    Gfx1250,
}

impl Gen {
    /// The generation of a target (`gfx1100`, `gfx1201`, `gfx1250`, ...),
    /// if it has these WMMA layouts.
    pub fn of_target(target: &str) -> Option<Gen> {
        let t = target.split(':').next().unwrap_or(target);
        if t.starts_with("gfx11") {
            Some(Gen::Gfx11)
        } else if matches!(t, "gfx1200" | "gfx1201" | "gfx12-generic") {
            Some(Gen::Gfx12)
        } else if t == "gfx1250" {
            Some(Gen::Gfx1250)
        } else {
            None
        }
    }
}

/// An input element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Elem {
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// 8-bit integer, signed or unsigned by `neg_lo`.
    Iu8,
    /// 4-bit integer, signed or unsigned by `neg_lo`.
    Iu4,
    /// OCP E4M3 (gfx12).
    Fp8,
    /// OCP E5M2 (gfx12).
    Bf8,
}

impl Elem {
    /// Bits per element.
    pub fn bits(self) -> usize {
        match self {
            Elem::F16 | Elem::Bf16 => 16,
            Elem::Iu8 | Elem::Fp8 | Elem::Bf8 => 8,
            Elem::Iu4 => 4,
        }
    }
    fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "f16" => Elem::F16,
            "bf16" => Elem::Bf16,
            "iu8" => Elem::Iu8,
            "iu4" => Elem::Iu4,
            "fp8" => Elem::Fp8,
            "bf8" => Elem::Bf8,
            _ => return None,
        })
    }
    fn is_int(self) -> bool {
        matches!(self, Elem::Iu8 | Elem::Iu4)
    }
}

/// The accumulator (C and D) type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Acc {
    /// IEEE single.
    F32,
    /// 32-bit integer.
    I32,
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
}

impl Acc {
    /// Bits per element.
    pub fn bits(self) -> usize {
        match self {
            Acc::F32 | Acc::I32 => 32,
            Acc::F16 | Acc::Bf16 => 16,
        }
    }
}

/// One WMMA/SWMMAC instruction's shape and types, from its mnemonic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Op {
    /// K (M = N = 16).
    pub k: usize,
    /// A's element type.
    pub a: Elem,
    /// B's element type.
    pub b: Elem,
    /// C's and D's type.
    pub acc: Acc,
    /// SWMMAC: A is 4:2 sparse, with an index operand in place of C (D is
    /// also the accumulator).
    pub sparse: bool,
}

impl Op {
    /// `v_wmma_<acc>_16x16x<K>_<a>[_<b>]` or `v_swmmac_…`, as LLVM spells
    /// them for gfx11/gfx12; `None` for any other mnemonic.
    pub fn parse(name: &str) -> Option<Op> {
        let (sparse, rest) = match name.strip_prefix("v_wmma_") {
            Some(r) => (false, r),
            None => (true, name.strip_prefix("v_swmmac_")?),
        };
        let mut it = rest.split('_');
        let acc = match it.next()? {
            "f32" => Acc::F32,
            "i32" => Acc::I32,
            "f16" => Acc::F16,
            "bf16" => Acc::Bf16,
            _ => return None,
        };
        let k = it.next()?.strip_prefix("16x16x")?.parse().ok()?;
        let a = Elem::parse(it.next()?)?;
        let b = match it.next() {
            Some(t) => Elem::parse(t)?,
            None => a,
        };
        if it.next().is_some() || a.bits() != b.bits() || a.is_int() != b.is_int() {
            return None;
        }
        Some(Op {
            k,
            a,
            b,
            acc,
            sparse,
        })
    }
}

/// An operand of the instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Matrix {
    /// A, 16×K (rows `i`, columns `k`).
    A,
    /// B, K×16 (rows `k`, columns `j`).
    B,
    /// C and D, 16×16.
    C,
    /// SWMMAC's sparsity index: one nibble per group of four K of A.
    Index,
}

/// The lane layout of one instruction on one generation and wave size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The generation.
    pub gen: Gen,
    /// 32 or 64.
    pub wave: usize,
    /// The instruction.
    pub op: Op,
}

impl Layout {
    /// The layout, or `None` for a combination that does not exist or is
    /// not covered (SWMMAC, fp8 or K = 32 on gfx11; a wave size other than
    /// 32 or 64; on gfx1250 anything but wave32 16×16×32 f16/bf16 → f32 and
    /// 16×16×64 and 16×16×128 fp8/bf8 → f32).
    pub fn new(gen: Gen, wave: usize, op: Op) -> Option<Layout> {
        if gen == Gen::Gfx1250 {
            let ok = wave == 32
                && !op.sparse
                && op.acc == Acc::F32
                && match op.k {
                    32 => matches!(op.a, Elem::F16 | Elem::Bf16),
                    64 | 128 => matches!(op.a, Elem::Fp8 | Elem::Bf8),
                    _ => false,
                };
            return ok.then_some(Layout { gen, wave, op });
        }
        let gfx12_only = op.sparse || op.k != 16 || matches!(op.a, Elem::Fp8 | Elem::Bf8);
        if (wave != 32 && wave != 64) || (gen == Gen::Gfx11 && gfx12_only) {
            return None;
        }
        let k16 = 16 * (1 + op.sparse as usize);
        if op.k != k16 && !(op.a == Elem::Iu4 && op.k == 2 * k16) {
            return None;
        }
        Some(Layout { gen, wave, op })
    }

    /// The layout whose register counts are those of the printed operands
    /// (A, B, C or SWMMAC's D): LLVM sizes them by generation and wave size,
    /// and no two combinations that exist for one instruction agree on all
    /// three (`None` if none does, or several would).
    pub fn infer(op: Op, a_regs: usize, b_regs: usize, c_regs: usize) -> Option<Layout> {
        let mut found = None;
        for gen in [Gen::Gfx11, Gen::Gfx12, Gen::Gfx1250] {
            for wave in [32, 64] {
                if let Some(l) = Layout::new(gen, wave, op) {
                    if l.regs(Matrix::A) == a_regs
                        && l.regs(Matrix::B) == b_regs
                        && l.regs(Matrix::C) == c_regs
                    {
                        if found.is_some() {
                            return None;
                        }
                        found = Some(l);
                    }
                }
            }
        }
        found
    }

    /// Bits of one register slot: an element of A or B (two of sparse A: a
    /// group of four K), of C, or a nibble of the index.
    pub fn slot_bits(&self, m: Matrix) -> usize {
        match m {
            Matrix::A => self.op.a.bits() * (1 + self.op.sparse as usize),
            Matrix::B => self.op.b.bits(),
            Matrix::C => self.op.acc.bits(),
            Matrix::Index => 4,
        }
    }

    /// Registers of an operand in this wave size.
    pub fn regs(&self, m: Matrix) -> usize {
        let op = &self.op;
        let w = op.a.bits();
        match (self.gen, m) {
            (Gen::Gfx11, Matrix::A | Matrix::B) => 16 * w / 32,
            (Gen::Gfx11, Matrix::C) => 256 / self.wave,
            (Gen::Gfx11, Matrix::Index) => 0,
            (Gen::Gfx12 | Gen::Gfx1250, Matrix::C) => 16 * 16 * op.acc.bits() / 32 / self.wave,
            (Gen::Gfx1250, Matrix::Index) => 0,
            (Gen::Gfx1250, _) => op.k / 2 * w / 32,
            (Gen::Gfx12, Matrix::Index) => op.sparse as usize,
            (Gen::Gfx12, _) => {
                let r32 = self.regs32(m);
                if self.wave == 64 && r32 > 1 {
                    r32 / 2
                } else {
                    r32
                }
            }
        }
    }

    /// gfx12: registers of A or B in wave32.
    fn regs32(&self, m: Matrix) -> usize {
        let w = self.op.a.bits();
        let stored_k = match m {
            Matrix::A if self.op.sparse => self.op.k / 4,
            _ => self.op.k / 2,
        };
        (stored_k * w).div_ceil(32)
    }

    /// The matrix element register `reg`, lane `lane`, slot `slot` (bits
    /// `[slot·b, (slot+1)·b)`, `b` = [`Layout::slot_bits`]) holds: `(i, k)`
    /// of A, `(k, j)` of B, `(i, j)` of C/D, and for sparse A and the index
    /// `(i, k)` of the first K of the group of four. `None` when the slot
    /// holds nothing (past the operand, the unused half of a gfx11 16-bit
    /// result with `op_sel[2]` clear, lanes 32–63 of a one-register gfx12
    /// wave64 operand). The index's slots are those of its first set
    /// (`index_key:0`).
    pub fn element(
        &self,
        m: Matrix,
        reg: usize,
        lane: usize,
        slot: usize,
    ) -> Option<(usize, usize)> {
        if lane >= self.wave
            || reg >= self.regs(m)
            || slot >= 32 / self.slot_bits(m)
            || (m == Matrix::Index && slot >= self.index_nibbles())
        {
            return None;
        }
        let (row, h) = (lane % 16, (lane / 16) % 2);
        let w = self.op.a.bits();
        match (self.gen, m) {
            (Gen::Gfx11, Matrix::A) => Some((row, (32 / w) * reg + slot)),
            (Gen::Gfx11, Matrix::B) => Some(((32 / w) * reg + slot, row)),
            (Gen::Gfx11, Matrix::C) => {
                if self.op.acc.bits() == 16 && slot != 0 {
                    return None;
                }
                Some(((self.wave / 16) * reg + lane / 16, row))
            }
            (Gen::Gfx11 | Gen::Gfx1250, Matrix::Index) => None,
            // gfx1250: chunks of K / 4 elements (16 for K = 128),
            // alternating between the half-waves.
            (Gen::Gfx1250, Matrix::A | Matrix::B) => {
                let (e, c) = ((32 / w) * reg + slot, (self.op.k / 4).min(16));
                let k = 2 * c * (e / c) + c * h + e % c;
                Some(if m == Matrix::A { (row, k) } else { (k, row) })
            }
            (Gen::Gfx1250, Matrix::C) => Some((8 * h + reg, row)),
            (Gen::Gfx12, Matrix::C) => {
                // Wave64 folds wave32's registers r ≥ n/2 into lanes 32–63.
                let n32 = 16 * 16 * self.op.acc.bits() / 32 / 32;
                let r = reg + (n32 / 2) * (lane / 32) * (self.wave / 64);
                let per = 32 / self.op.acc.bits();
                Some((8 * h + per * r + slot, row))
            }
            (Gen::Gfx12, _) => {
                // The wave32 register (or index nibble) this wave64 slot is.
                // The index folds as A does.
                let r32 = self.regs32(if m == Matrix::B { m } else { Matrix::A });
                let (reg, nib) = if self.wave == 64 {
                    if r32 == 1 {
                        if lane >= 32 {
                            return None;
                        }
                        (reg, slot)
                    } else if m == Matrix::Index {
                        (0, slot + self.index_nibbles() * (lane / 32))
                    } else {
                        (reg + (r32 / 2) * (lane / 32), slot)
                    }
                } else {
                    (reg, slot)
                };
                let c = self.chunk();
                let k = |e: usize| 2 * c * (e / c) + c * h + e % c;
                Some(match m {
                    Matrix::A if self.op.sparse => (row, k(4 * (reg * (32 / (2 * w)) + nib))),
                    Matrix::A => (row, k(reg * (32 / w) + nib)),
                    Matrix::B => (k(reg * (32 / w) + nib), row),
                    _ => (row, k(4 * nib)),
                })
            }
        }
    }

    /// gfx12: K per chunk of a lane's A/B elements (see the module's notes).
    fn chunk(&self) -> usize {
        let w = self.op.a.bits();
        let stored = self.regs32(Matrix::A) * 32;
        let c = stored.min(64) / w;
        if self.op.sparse {
            2 * c
        } else {
            c
        }
    }

    /// Index nibbles a lane's set holds (groups of four K of A per lane).
    fn index_nibbles(&self) -> usize {
        if !self.op.sparse {
            return 0;
        }
        let groups32 = self.op.k / 8;
        if self.wave == 64 && self.regs32(Matrix::A) > 1 {
            groups32 / 2
        } else {
            groups32
        }
    }

    /// Sets in the index register (`index_key` ranges over `0..sets`).
    pub fn index_sets(&self) -> usize {
        match self.index_nibbles() {
            0 => 0,
            n => 8 / n,
        }
    }
}

/// The instruction's modifiers, as LLVM prints them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mods {
    /// `neg_lo:[a,b,c]`: float: negate the low 16-bit elements of A / B, and
    /// subtract C; integer: A / B are signed.
    pub neg_lo: [bool; 3],
    /// `neg_hi:[a,b,c]`: float: negate the high 16-bit elements of A / B,
    /// and use |C|.
    pub neg_hi: [bool; 3],
    /// `op_sel:[0,0,1]` (gfx11, 16-bit results): C and D in the high halves.
    pub op_sel_hi_half: bool,
    /// `index_key:N` (SWMMAC): the set of the index register.
    pub index_key: usize,
    /// `clamp`: integer results saturate (float: not modelled).
    pub clamp: bool,
}

/// D of one instruction: `d[reg][lane]`, every lane of the wave written.
/// `read(m, reg, lane)` gives operand `m`'s register word (`Matrix::C` is
/// SWMMAC's D, its accumulator); `old_d` gives D's word before the
/// instruction, whose other half a gfx11 16-bit result keeps.
pub fn compute(
    l: &Layout,
    mods: &Mods,
    read: &dyn Fn(Matrix, usize, usize) -> u32,
    old_d: &dyn Fn(usize, usize) -> u32,
) -> Result<Vec<Vec<u32>>, String> {
    let op = l.op;
    let k = op.k;
    if op.a.is_int() && (mods.neg_lo[2] || mods.neg_hi.iter().any(|&b| b)) {
        return Err("integer WMMA with neg_lo[2] or neg_hi (must be zero)".into());
    }
    if matches!(op.a, Elem::Fp8 | Elem::Bf8)
        && (mods.neg_lo[..2].iter().any(|&b| b) || mods.neg_hi[..2].iter().any(|&b| b))
    {
        return Err("fp8/bf8 WMMA with neg on A or B (not supported by the instruction)".into());
    }
    if mods.clamp && !op.a.is_int() {
        return Err("clamp on a float WMMA (not modelled)".into());
    }
    if mods.op_sel_hi_half && !(l.gen == Gen::Gfx11 && op.acc.bits() == 16) {
        return Err("op_sel on a WMMA whose C/D is not gfx11 16-bit".into());
    }
    if op.sparse && mods.index_key >= l.index_sets() {
        return Err(format!(
            "index_key:{} (this SWMMAC has {} sets)",
            mods.index_key,
            l.index_sets()
        ));
    }
    let value = |e: Elem, bits: u32, signed: bool, neg: bool| -> f64 {
        let v = match e {
            Elem::F16 => half::f16::from_bits(bits as u16).to_f64(),
            Elem::Bf16 => half::bf16::from_bits(bits as u16).to_f64(),
            Elem::Fp8 => crate::fp8::decode(crate::fp8::Fp8::of(false, true), bits as u8),
            Elem::Bf8 => crate::fp8::decode(crate::fp8::Fp8::of(true, true), bits as u8),
            Elem::Iu8 if signed => bits as u8 as i8 as f64,
            Elem::Iu8 => (bits & 0xff) as f64,
            Elem::Iu4 if signed => (((bits as u8) << 4) as i8 >> 4) as f64,
            Elem::Iu4 => (bits & 0xf) as f64,
        };
        if neg {
            -v
        } else {
            v
        }
    };
    // Gather: the first lane holding an element wins (gfx11's copies are
    // assumed equal).
    let mut a = vec![None::<f64>; 16 * k];
    // (Sparse A: a group's four K are set together, from its first copy.)
    let mut b = vec![None::<f64>; k * 16];
    let mut idx = vec![None::<u32>; 16 * (k / 4)];
    if op.sparse {
        let off = 4 * l.index_nibbles() * mods.index_key;
        for lane in 0..l.wave {
            for slot in 0..l.index_nibbles() {
                if let Some((i, kk)) = l.element(Matrix::Index, 0, lane, slot) {
                    let word = read(Matrix::Index, 0, lane);
                    idx[i * (k / 4) + kk / 4].get_or_insert(word >> (off + 4 * slot) & 0xf);
                }
            }
        }
    }
    for (m, e) in [(Matrix::A, op.a), (Matrix::B, op.b)] {
        let sb = l.slot_bits(m);
        let w = e.bits();
        let signed = mods.neg_lo[(m == Matrix::B) as usize];
        for reg in 0..l.regs(m) {
            for lane in 0..l.wave {
                let word = read(m, reg, lane);
                for slot in 0..32 / sb {
                    let Some((r, c)) = l.element(m, reg, lane, slot) else {
                        continue;
                    };
                    let at = |s: usize| -> (u32, bool) {
                        let bit = slot * sb + s * w;
                        let neg = !e.is_int()
                            && if bit < 16 {
                                mods.neg_lo[(m == Matrix::B) as usize]
                            } else {
                                mods.neg_hi[(m == Matrix::B) as usize]
                            };
                        (word >> bit & ((1u64 << w) - 1) as u32, neg)
                    };
                    if m == Matrix::A && op.sparse {
                        let Some(nib) = idx[r * (k / 4) + c / 4] else {
                            return Err(format!("no index for A[{r}][{c}]"));
                        };
                        let base = r * k + c;
                        if a[base].is_some() {
                            continue;
                        }
                        let mut group = [0.0; 4];
                        for s in 0..2 {
                            let (bits, neg) = at(s);
                            group[(nib >> (2 * s) & 3) as usize] += value(e, bits, signed, neg);
                        }
                        for (t, g) in group.iter().enumerate() {
                            a[base + t] = Some(*g);
                        }
                    } else {
                        let (bits, neg) = at(0);
                        let v = value(e, bits, signed, neg);
                        match m {
                            Matrix::A => a[r * k + c].get_or_insert(v),
                            _ => b[r * 16 + c].get_or_insert(v),
                        };
                    }
                }
            }
        }
    }
    let a: Vec<f64> = a.into_iter().map(|v| v.unwrap_or(0.0)).collect();
    let b: Vec<f64> = b.into_iter().map(|v| v.unwrap_or(0.0)).collect();
    // C and D share one layout; D is written in place of C's slots.
    let acc_bits = op.acc.bits();
    let half = if mods.op_sel_hi_half { 16 } else { 0 };
    let nregs = l.regs(Matrix::C);
    let mut d = vec![vec![0u32; l.wave]; nregs];
    for (reg, out) in d.iter_mut().enumerate() {
        for (lane, o) in out.iter_mut().enumerate() {
            let cword = read(Matrix::C, reg, lane);
            let mut word = if acc_bits == 16 && l.gen == Gen::Gfx11 {
                old_d(reg, lane)
            } else {
                0
            };
            for slot in 0..32 / acc_bits {
                let Some((i, j)) = l.element(Matrix::C, reg, lane, slot) else {
                    continue;
                };
                let shift = slot * acc_bits + half;
                let cbits = if acc_bits == 32 {
                    cword
                } else {
                    cword >> shift & 0xffff
                };
                let dot = (0..k).map(|kk| a[i * k + kk] * b[kk * 16 + j]);
                let bits: u32 = match op.acc {
                    Acc::I32 => {
                        let s = cbits as i32 as i64 + dot.map(|x| x as i64).sum::<i64>();
                        if mods.clamp {
                            s.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
                        } else {
                            s as u32
                        }
                    }
                    _ => {
                        let mut c = match op.acc {
                            Acc::F32 => f32::from_bits(cbits) as f64,
                            Acc::F16 => half::f16::from_bits(cbits as u16).to_f64(),
                            _ => half::bf16::from_bits(cbits as u16).to_f64(),
                        };
                        if mods.neg_hi[2] {
                            c = c.abs();
                        }
                        if mods.neg_lo[2] {
                            c = -c;
                        }
                        let s = c + dot.sum::<f64>();
                        match op.acc {
                            Acc::F32 => canonical32(s as f32),
                            Acc::F16 => canonical16(half::f16::from_f64(s).to_bits(), true),
                            _ => canonical16(half::bf16::from_f64(s).to_bits(), false),
                        }
                    }
                };
                let mask = if acc_bits == 32 {
                    u32::MAX
                } else {
                    0xffff << shift
                };
                word = word & !mask | (bits << shift & mask);
            }
            *o = word;
        }
    }
    Ok(d)
}

fn canonical32(x: f32) -> u32 {
    if x.is_nan() {
        0x7fc0_0000
    } else {
        x.to_bits()
    }
}

fn canonical16(bits: u16, f16: bool) -> u32 {
    let nan = if f16 {
        half::f16::from_bits(bits).is_nan()
    } else {
        half::bf16::from_bits(bits).is_nan()
    };
    match (nan, f16) {
        (true, true) => 0x7e00,
        (true, false) => 0x7fc0,
        _ => bits as u32,
    }
}

/// A decoded WMMA/SWMMAC instruction: its layout, modifiers and the first
/// VGPR of each operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// The layout: [`Layout::infer`]'s from the operands' register counts
    /// (they differ between gfx11 and gfx12 and between wave sizes).
    pub layout: Layout,
    /// The modifiers.
    pub mods: Mods,
    /// D's first VGPR (SWMMAC: also the accumulator).
    pub d: usize,
    /// A's first VGPR.
    pub a: usize,
    /// B's first VGPR.
    pub b: usize,
    /// C's (SWMMAC: the index's) first VGPR; `None` for an inline constant.
    pub c: Option<usize>,
    /// C's register count as printed (0 for a constant).
    pub c_regs: usize,
}

/// `v_wmma_* vdst, A, B, C` / `v_swmmac_* vdst, A, B, index` as LLVM
/// prints them, with `op_sel:[0,0,1]` (gfx11 16-bit results), `neg_lo`,
/// `neg_hi`, `index_key:N` and `clamp`; an error names what is not
/// understood.
pub fn decode(ins: &crate::decode::Instruction) -> Result<Decoded, String> {
    use crate::decode::{Operand, RegFile};
    let name = crate::exec::base_name(&ins.mnemonic).0;
    // gfx1250's f8f6f4 WMMA names its operands' formats in modifiers
    // (MATRIX_FMT_FP8, the default, or BF8 run; FP6, BF6 and FP4 pack
    // other layouts and are refused).
    let f8f6f4 = name == "v_wmma_f32_16x16x128_f8f6f4";
    let op = if f8f6f4 {
        let fmt = |key: &str| match ins.modifier(key) {
            None | Some("MATRIX_FMT_FP8") | Some("0") => Ok(Elem::Fp8),
            Some("MATRIX_FMT_BF8") | Some("1") => Ok(Elem::Bf8),
            Some(v) => Err(format!(
                "WMMA {key}:{v} (FP6/BF6/FP4 operands) is not modelled"
            )),
        };
        Op {
            k: 128,
            a: fmt("matrix_a_fmt")?,
            b: fmt("matrix_b_fmt")?,
            acc: Acc::F32,
            sparse: false,
        }
    } else {
        Op::parse(name).ok_or("this WMMA shape/type is not implemented")?
    };
    if ins.ops.len() != 4 || ins.ops.iter().any(|o| o.neg || o.abs) {
        return Err("WMMA operands (4 expected, without neg/abs)".into());
    }
    let reg = |i: usize| -> Result<Option<(usize, usize)>, String> {
        match ins.ops[i].op {
            Operand::Reg {
                file: RegFile::V,
                index,
                count,
            } => Ok(Some((index as usize, count as usize))),
            Operand::Int(_) | Operand::Float(_) if i == 3 && !op.sparse => Ok(None),
            _ => Err(format!("WMMA operand {i}: not a VGPR range")),
        }
    };
    let need = |i: usize| reg(i)?.ok_or_else(|| format!("WMMA operand {i}: not a VGPR range"));
    let (d, nd) = need(0)?;
    let (a, na) = need(1)?;
    let (b, nb) = need(2)?;
    let c = reg(3)?;
    let layout = Layout::infer(op, na, nb, nd).ok_or_else(|| {
        format!("register counts {na}/{nb}/{nd} (A/B/D) match no RDNA3/RDNA4 layout of {name}")
    })?;
    let bits = |key: &str| -> Result<[bool; 3], String> {
        let mut out = [false; 3];
        if let Some(v) = ins.modifier(key) {
            for (i, b) in v.trim_matches(['[', ']']).split(',').enumerate() {
                match (i, b.trim()) {
                    (0..=2, "0") => {}
                    (0..=2, "1") => out[i] = true,
                    _ => return Err(format!("{key}:{v}")),
                }
            }
        }
        Ok(out)
    };
    const KNOWN: &[&str] = &[
        "op_sel",
        "neg_lo",
        "neg_hi",
        "index_key",
        "clamp",
        // gfx1250's operand-reuse hints: no effect on the result.
        "matrix_a_reuse",
        "matrix_b_reuse",
    ];
    let fmt_key = |k: &str| f8f6f4 && matches!(k, "matrix_a_fmt" | "matrix_b_fmt");
    if let Some((k, _)) = ins
        .mods
        .iter()
        .find(|(k, _)| !KNOWN.contains(&k.as_str()) && !fmt_key(k))
    {
        return Err(format!("WMMA modifier {k} is not modelled"));
    }
    let op_sel = bits("op_sel")?;
    if op_sel[0] || op_sel[1] {
        return Err("WMMA op_sel on A/B".into());
    }
    let mods = Mods {
        neg_lo: bits("neg_lo")?,
        neg_hi: bits("neg_hi")?,
        op_sel_hi_half: op_sel[2],
        index_key: match ins.modifier("index_key") {
            Some(v) => v.parse().map_err(|_| format!("index_key:{v}"))?,
            None => 0,
        },
        clamp: ins.has("clamp"),
    };
    Ok(Decoded {
        layout,
        mods,
        d,
        a,
        b,
        c: c.map(|c| c.0),
        c_regs: c.map_or(0, |c| c.1),
    })
}
