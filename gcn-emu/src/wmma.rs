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
//! - **gfx1250's f8f6f4 family** (FP8/BF8/FP6/BF6/FP4 operands,
//!   `v_wmma_f32_32x16x128_f4`, the scaled `v_wmma_scale[16]_*`):
//!   [`F8f6f4`], [`decode_f8f6f4`], [`compute_f8f6f4`], [`f8f6f4_k`]; block
//!   scales make the K placement matter, and Triton 3.9's `tl.dot_scaled`
//!   kernels check it (`tests/it/gfx1250_wmma.rs`).

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

/// An element format of gfx1250's `f8f6f4` WMMAs (`matrix_a_fmt` /
/// `matrix_b_fmt`: LLVM's `MATRIX_FMT_FP8` 0, `BF8` 1, `FP6` 2, `BF6` 3,
/// `FP4` 4, SIDefines.h `AMDGPU::WMMA::MatrixFMT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fmt {
    /// OCP E4M3.
    Fp8,
    /// OCP E5M2.
    Bf8,
    /// OCP FP6 E2M3.
    Fp6,
    /// OCP FP6 E3M2.
    Bf6,
    /// OCP FP4 E2M1.
    Fp4,
}

impl Fmt {
    /// Bits per element.
    pub fn bits(self) -> usize {
        match self {
            Fmt::Fp8 | Fmt::Bf8 => 8,
            Fmt::Fp6 | Fmt::Bf6 => 6,
            Fmt::Fp4 => 4,
        }
    }
    /// The exact value of code `c`.
    pub fn value(self, c: u32) -> f64 {
        use crate::mx::{decode as mini, Mini};
        match self {
            Fmt::Fp8 => crate::fp8::decode(crate::fp8::Fp8::of(false, true), c as u8),
            Fmt::Bf8 => crate::fp8::decode(crate::fp8::Fp8::of(true, true), c as u8),
            Fmt::Fp6 => mini(Mini::E2M3, c as u8),
            Fmt::Bf6 => mini(Mini::E3M2, c as u8),
            Fmt::Fp4 => mini(Mini::E2M1, c as u8),
        }
    }
    fn parse(v: Option<&str>) -> Result<Fmt, String> {
        Ok(match v {
            None | Some("MATRIX_FMT_FP8") | Some("0") => Fmt::Fp8,
            Some("MATRIX_FMT_BF8") | Some("1") => Fmt::Bf8,
            Some("MATRIX_FMT_FP6") | Some("2") => Fmt::Fp6,
            Some("MATRIX_FMT_BF6") | Some("3") => Fmt::Bf6,
            Some("MATRIX_FMT_FP4") | Some("4") => Fmt::Fp4,
            Some(v) => return Err(format!("matrix format {v}")),
        })
    }
}

/// The block scales of a scaled WMMA (`v_wmma_scale[16]_*`), which its
/// `v_wmma_ld_scale*_paired_*` half supplies (`crate::gfx1250_wmma`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scales {
    /// K per scale: 32 (`v_wmma_scale_*`, one VGPR of 4 scale bytes a
    /// lane) or 16 (`v_wmma_scale16_*`, two VGPRs of 8).
    pub block: usize,
    /// `matrix_a_scale:MATRIX_SCALE_ROW1`: A's scales from lanes 16–31.
    pub a_row1: bool,
    /// `matrix_b_scale:MATRIX_SCALE_ROW1`: B's scales from lanes 16–31.
    pub b_row1: bool,
    /// The VGPR of A's scales.
    pub a: usize,
    /// The VGPR of B's scales.
    pub b: usize,
    /// `matrix_a_scale_fmt:MATRIX_SCALE_FMT_E4M3`: A's scale bytes are
    /// E4M3 values (NVFP4's scale format), not E8M0.
    pub a_e4m3: bool,
    /// `matrix_b_scale_fmt:MATRIX_SCALE_FMT_E4M3`, for B.
    pub b_e4m3: bool,
}

/// A decoded gfx1250 `f8f6f4`-family WMMA: `v_wmma_f32_16x16x128_f8f6f4`,
/// `v_wmma_f32_32x16x128_f4` and their scaled forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct F8f6f4 {
    /// M: 16, or 32 (`32x16x128_f4`).
    pub m: usize,
    /// A's format.
    pub fa: Fmt,
    /// B's format.
    pub fb: Fmt,
    /// D's first VGPR.
    pub d: usize,
    /// A's first VGPR.
    pub a: usize,
    /// B's first VGPR.
    pub b: usize,
    /// C's first VGPR; `None` for an inline constant.
    pub c: Option<usize>,
    /// `neg_lo:[0,0,1]`: subtract C.
    pub neg_c: bool,
    /// `neg_hi:[0,0,1]`: |C|.
    pub abs_c: bool,
    /// The scales, for a scaled WMMA.
    pub scales: Option<Scales>,
}

impl F8f6f4 {
    /// Registers of A (`m` rows), B, or C/D (wave32).
    pub fn regs(&self, mtx: Matrix) -> usize {
        match mtx {
            Matrix::A => self.m * 128 * self.fa.bits() / 32 / 32,
            Matrix::B => 16 * 128 * self.fb.bits() / 32 / 32,
            _ => self.m * 16 / 32,
        }
    }
}

/// Names of the family [`decode_f8f6f4`] reads.
pub const F8F6F4: &[&str] = &[
    "v_wmma_f32_16x16x128_f8f6f4",
    "v_wmma_scale_f32_16x16x128_f8f6f4",
    "v_wmma_scale16_f32_16x16x128_f8f6f4",
    "v_wmma_f32_32x16x128_f4",
    "v_wmma_scale_f32_32x16x128_f4",
    "v_wmma_scale16_f32_32x16x128_f4",
];

/// `D, A, B, C[, scale_a, scale_b]` and the modifiers of an [`F8F6F4`]
/// instruction as LLVM prints it; an error names what is not modelled
/// (scale formats other than E8M0, `neg`/`abs` on A or B).
pub fn decode_f8f6f4(ins: &crate::decode::Instruction) -> Result<F8f6f4, String> {
    use crate::decode::{Operand, RegFile};
    let name = crate::exec::base_name(&ins.mnemonic).0;
    if !F8F6F4.contains(&name) {
        return Err(format!("{name} is not a gfx1250 f8f6f4 WMMA"));
    }
    let f4 = name.ends_with("_f4");
    let scale16 = name.contains("scale16");
    let scaled = name.contains("_scale");
    let (fa, fb) = if f4 {
        (Fmt::Fp4, Fmt::Fp4)
    } else {
        (
            Fmt::parse(ins.modifier("matrix_a_fmt"))?,
            Fmt::parse(ins.modifier("matrix_b_fmt"))?,
        )
    };
    let n = if scaled { 6 } else { 4 };
    if ins.ops.len() != n || ins.ops.iter().any(|o| o.neg || o.abs) {
        return Err(format!("{name}: {n} operands expected, without neg/abs"));
    }
    let vreg = |i: usize| match ins.ops[i].op {
        Operand::Reg {
            file: RegFile::V,
            index,
            count,
        } => Some((index as usize, count as usize)),
        _ => None,
    };
    let need = |i: usize| vreg(i).ok_or_else(|| format!("{name} operand {i}: not a VGPR range"));
    let mut x = F8f6f4 {
        m: if f4 { 32 } else { 16 },
        fa,
        fb,
        d: need(0)?.0,
        a: need(1)?.0,
        b: need(2)?.0,
        c: vreg(3).map(|c| c.0),
        neg_c: false,
        abs_c: false,
        scales: None,
    };
    for (i, m) in [
        (0, Matrix::C),
        (1, Matrix::A),
        (2, Matrix::B),
        (3, Matrix::C),
    ] {
        if let Some((_, cnt)) = vreg(i) {
            if cnt != x.regs(m) {
                return Err(format!(
                    "{name} operand {i}: {cnt} VGPRs, {} expected for {:?}×{:?}",
                    x.regs(m),
                    fa,
                    fb
                ));
            }
        }
    }
    if x.c.is_none() && !matches!(ins.ops[3].op, Operand::Int(_) | Operand::Float(_)) {
        return Err(format!("{name} C: not a VGPR range or an inline constant"));
    }
    let c_bits = |key: &str| -> Result<bool, String> {
        match ins.modifier(key) {
            None | Some("[0,0,0]") => Ok(false),
            Some("[0,0,1]") => Ok(true),
            Some(v) => Err(format!("{name} {key}:{v} (only C's bit is modelled)")),
        }
    };
    x.neg_c = c_bits("neg_lo")?;
    x.abs_c = c_bits("neg_hi")?;
    if scaled {
        let e4m3 = |key: &str| match ins.modifier(key) {
            None | Some("MATRIX_SCALE_FMT_E8") | Some("0") => Ok(false),
            Some("MATRIX_SCALE_FMT_E4M3") | Some("2") => Ok(true),
            Some(v) => Err(format!(
                "{name} {key}:{v}: only E8M0 and E4M3 scales are modelled"
            )),
        };
        let (a_e4m3, b_e4m3) = (e4m3("matrix_a_scale_fmt")?, e4m3("matrix_b_scale_fmt")?);
        let row1 = |key: &str| matches!(ins.modifier(key), Some("MATRIX_SCALE_ROW1") | Some("1"));
        let sw = if scale16 { 2 } else { 1 };
        let s = |i: usize| {
            match vreg(i) {
            Some((r, c)) if c == sw => Ok(r),
            _ => Err(format!(
                "{name} operand {i}: the scales must be {sw} VGPR(s) (SGPR or constant scales are not modelled)"
            )),
        }
        };
        x.scales = Some(Scales {
            block: if scale16 { 16 } else { 32 },
            a_row1: row1("matrix_a_scale"),
            b_row1: row1("matrix_b_scale"),
            a: s(4)?,
            b: s(5)?,
            a_e4m3,
            b_e4m3,
        });
    }
    const KNOWN: &[&str] = &[
        "matrix_a_fmt",
        "matrix_b_fmt",
        "matrix_a_scale",
        "matrix_b_scale",
        "matrix_a_scale_fmt",
        "matrix_b_scale_fmt",
        "matrix_a_reuse",
        "matrix_b_reuse",
        "neg_lo",
        "neg_hi",
    ];
    if let Some((k, _)) = ins.mods.iter().find(|(k, _)| !KNOWN.contains(&k.as_str())) {
        return Err(format!("{name} modifier {k} is not modelled"));
    }
    Ok(x)
}

/// The K a lane's element `e` of a 16-row A (or B) block holds (wave32
/// gfx1250: the half-wave `h` = lane / 16; chunks of 16 elements for 8-bit
/// formats, as [`Layout::element`]'s gfx1250 rule, and of 32 for 4- and
/// 6-bit ones: 128 bits of 4-bit codes).
pub fn f8f6f4_k(fmt: Fmt, e: usize, h: usize) -> usize {
    let c = if fmt.bits() == 8 { 16 } else { 32 };
    2 * c * (e / c) + c * h + e % c
}

/// D of a gfx1250 [`F8f6f4`] WMMA, `d[reg][lane]` (wave32): the exact sum
/// of C and the products `A[i][k]·B[k][j]` (each scaled by its E8M0 block
/// scales when [`F8f6f4::scales`] is set), rounded once to f32 (NaN
/// canonical). `read(m, reg, lane)` reads operand `m`'s register
/// (`Matrix::Index` reads the scale VGPRs: `reg` 0/1 A's, 2/3 B's);
/// `c_const` is C's value for an inline constant. A's and B's element
/// codes are packed densely in each lane's consecutive registers (a 6-bit
/// code may straddle two).
pub fn compute_f8f6f4(
    x: &F8f6f4,
    read: &dyn Fn(Matrix, usize, usize) -> u32,
    c_const: u32,
) -> Vec<Vec<u32>> {
    let k = 128;
    let code = |m: Matrix, base: usize, lane: usize, e: usize, bits: usize| -> u32 {
        let bit = e * bits;
        let (r, off) = (base + bit / 32, bit % 32);
        let lo = read(m, r, lane) as u64;
        let hi = if off + bits > 32 {
            read(m, r + 1, lane) as u64
        } else {
            0
        };
        (((hi << 32 | lo) >> off) & ((1 << bits) - 1)) as u32
    };
    // A: rows in blocks of 16 (32x16x128: registers 0–7 rows 0–15, 8–15
    // rows 16–31), each lane half of K.
    let per = 64; // elements of a 16-row block a lane holds
    let a_regs16 = x.regs(Matrix::A) / (x.m / 16);
    let mut a = vec![0f64; x.m * k];
    let mut b = vec![0f64; k * 16];
    for lane in 0..32 {
        let (row, h) = (lane % 16, lane / 16);
        for blk in 0..x.m / 16 {
            for e in 0..per {
                let kk = f8f6f4_k(x.fa, e, h);
                let c = code(Matrix::A, blk * a_regs16, lane, e, x.fa.bits());
                a[(16 * blk + row) * k + kk] = x.fa.value(c);
            }
        }
        for e in 0..per {
            let kk = f8f6f4_k(x.fb, e, h);
            b[kk * 16 + row] = x.fb.value(code(Matrix::B, 0, lane, e, x.fb.bits()));
        }
    }
    // Scales: row i's (column j's) scale of K block q is byte q of the
    // scale registers of lane i % 16 (+16 with MATRIX_SCALE_ROW1); a
    // 32-row A takes rows 16–31's from lanes 16–31.
    if let Some(s) = x.scales {
        // E8M0: 2^(e - 127); E4M3: the OCP E4M3 value of the byte.
        let byte = |reg0: usize, lane: usize, q: usize| -> f64 {
            let w = read(Matrix::Index, reg0 + q / 4, lane);
            let b = (w >> (8 * (q % 4))) as u8;
            let e4m3 = if reg0 == 0 { s.a_e4m3 } else { s.b_e4m3 };
            if e4m3 {
                crate::fp8::decode(crate::fp8::Fp8::of(false, true), b)
            } else {
                crate::mx::e8m0(b)
            }
        };
        for i in 0..x.m {
            let lane = if x.m == 32 {
                i
            } else {
                i + 16 * s.a_row1 as usize
            };
            for kk in 0..k {
                a[i * k + kk] *= byte(0, lane, kk / s.block);
            }
        }
        for j in 0..16 {
            let lane = j + 16 * s.b_row1 as usize;
            for kk in 0..k {
                b[kk * 16 + j] *= byte(2, lane, kk / s.block);
            }
        }
    }
    let mut d = vec![vec![0u32; 32]; x.regs(Matrix::C)];
    for (reg, out) in d.iter_mut().enumerate() {
        for (lane, o) in out.iter_mut().enumerate() {
            let (blk, r) = (reg / 8, reg % 8);
            let (i, j) = (16 * blk + 8 * (lane / 16) + r, lane % 16);
            let cw = match x.c {
                Some(_) => read(Matrix::C, reg, lane),
                None => c_const,
            };
            let mut c = f32::from_bits(cw) as f64;
            if x.abs_c {
                c = c.abs();
            }
            if x.neg_c {
                c = -c;
            }
            let s = c + (0..k).map(|kk| a[i * k + kk] * b[kk * 16 + j]).sum::<f64>();
            *o = canonical32(s as f32);
        }
    }
    d
}
