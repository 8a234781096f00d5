//! gfx1250's eight-element scaled conversions (LLVM pull requests 151758
//! `v_cvt_scalef32_pk8_*` and the `v_cvt_scale_pk8_*` of
//! `llvm.amdgcn.cvt.scale.pk8.*`): the gfx950 `v_cvt_scalef32_pk_*` pairs
//! widened to eight lanes' worth of elements in one instruction. The element
//! formats are OCP's (gfx1250 has no FNUZ fp8: composable_kernel's gfx1250
//! path asserts "Only OCP interpretations are supported"); the rounding and
//! the scale are those of [`crate::mx`] and [`crate::fp8`]:
//!
//! * down, `v_cvt_scalef32_pk8_{fp8,bf8,fp4}_{f32,f16,bf16} vdst, src, scale`:
//!   element `k` of src (eight f32 in `src[k]`, or eight 16-bit floats packed
//!   two a register) divided by 2^(E − 127), E the f32 scale operand's
//!   exponent field ([`crate::mx::scalef32`]), rounded to nearest even:
//!   into byte `k` of the two-register vdst (fp8/bf8) or nibble `k` of the
//!   one-register vdst (fp4, saturating as [`crate::mx::encode`]). An fp8/bf8
//!   result beyond the format's largest finite value, an infinity or a NaN
//!   is not modelled ([`crate::fp8::encode`]): the instruction is reported
//!   unsupported for that input;
//! * up, `v_cvt_scale_pk8_{f32,f16,bf16}_{fp8,bf8,fp4} vdst, src, scale`:
//!   byte `k` of the two-register src (nibble `k` of one register for fp4)
//!   times 2^(e − 127), `e` an E8M0 byte of the scale register
//!   ([`crate::mx::e8m0`]; 0xff is NaN), rounded once to the destination
//!   format (element `k` in register `k` for f32, else half `k % 2` of
//!   register `k / 2`). The scale is byte 0 with `scale_sel:0`, the only
//!   selection modelled: LLVM accepts `scale_sel` 0–7 (encoded in op_sel
//!   bits 0–2); aiter's `opus.hpp` says the immediate "selects which byte"
//!   but broadcasts its scale to all four bytes, and composable_kernel
//!   builds it as `(byte & 1) << 2 | (byte & 2) | half`: which byte values
//!   1–7 pick is not settled by any source read for this work, so they are
//!   reported unsupported.

use super::{f32b, unsup, Ctx, Instruction, Ty, Wave, LANES, R};
use crate::decode::{Operand, Src};
use crate::fp8::Fp8;
use crate::mx::Mini;

/// An element format of the narrow side.
#[derive(Clone, Copy)]
enum Narrow {
    Fp8(Fp8),
    Fp4,
}

/// A wide format.
#[derive(Clone, Copy)]
enum Wide {
    F32,
    F16,
    Bf16,
}

fn narrow(name: &str) -> Option<Narrow> {
    Some(match name {
        "fp8" => Narrow::Fp8(Fp8::E4M3Fn),
        "bf8" => Narrow::Fp8(Fp8::E5M2),
        "fp4" => Narrow::Fp4,
        _ => return None,
    })
}

fn wide(name: &str) -> Option<Wide> {
    Some(match name {
        "f32" => Wide::F32,
        "f16" => Wide::F16,
        "bf16" => Wide::Bf16,
        _ => return None,
    })
}

/// Whether `m` (without `_e64`) is one of this module's instructions; then
/// [`run`] executes it.
pub(super) fn handles(m: &str) -> bool {
    parse(m).is_some()
}

/// (down, narrow, wide) of a mnemonic.
fn parse(m: &str) -> Option<(bool, Narrow, Wide)> {
    if let Some(rest) = m.strip_prefix("v_cvt_scalef32_pk8_") {
        let (n, w) = rest.split_once('_')?;
        return Some((true, narrow(n)?, wide(w)?));
    }
    let rest = m.strip_prefix("v_cvt_scale_pk8_")?;
    let (w, n) = rest.split_once('_')?;
    Some((false, narrow(n)?, wide(w)?))
}

/// Register `k` of a register-range operand (a constant is itself).
fn reg(src: &Src, k: u16) -> Src {
    let mut s = src.clone();
    if let Operand::Reg { index, count, .. } = &mut s.op {
        *index += k;
        *count = 1;
    }
    s
}

/// Runs one of the conversions [`handles`] accepts.
pub(super) fn run(w: &mut Wave, ins: &Instruction, ctx: &mut Ctx) -> R<()> {
    let m = ins.mnemonic.strip_suffix("_e64").unwrap_or(&ins.mnemonic);
    let Some((down, nf, wf)) = parse(m) else {
        return unsup("not a pk8 scaled conversion");
    };
    if ins.ops.len() != 3 || ins.ops.iter().any(|o| o.neg || o.abs) {
        return unsup("operand modifiers or count");
    }
    if ins.has("clamp") || ins.has("mul") || ins.has("div") || ins.has("op_sel") {
        return unsup("clamp/omod/op_sel");
    }
    let sel = ins.modifier("scale_sel").unwrap_or("0");
    if sel != "0" {
        return unsup(format!(
            "scale_sel:{sel} (only scale_sel:0, the scale register's byte 0, is modelled)"
        ));
    }
    let exec = w.exec();
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        if down {
            down_lane(w, ins, ctx, lane, nf, wf)?;
        } else {
            up_lane(w, ins, ctx, lane, nf, wf)?;
        }
    }
    Ok(())
}

fn down_lane(
    w: &mut Wave,
    ins: &Instruction,
    ctx: &mut Ctx,
    lane: usize,
    nf: Narrow,
    wf: Wide,
) -> R<()> {
    let scale = crate::mx::scalef32(w.vread(&ins.ops[2], lane, Ty::B32, ctx)? as u32);
    let mut xs = [0f64; 8];
    for (k, x) in xs.iter_mut().enumerate() {
        *x = match wf {
            Wide::F32 => f32b(w.vread(&reg(&ins.ops[1], k as u16), lane, Ty::B32, ctx)?) as f64,
            Wide::F16 | Wide::Bf16 => {
                let r = w.vread(&reg(&ins.ops[1], k as u16 / 2), lane, Ty::B32, ctx)? as u32;
                let h = (r >> (16 * (k % 2))) as u16;
                match wf {
                    Wide::F16 => half::f16::from_bits(h).to_f64(),
                    _ => half::bf16::from_bits(h).to_f64(),
                }
            }
        };
    }
    match nf {
        Narrow::Fp4 => {
            let mut out = 0u32;
            for (k, &x) in xs.iter().enumerate() {
                // x / 2^n is exact in f64 for these inputs: rounded once.
                let Some(c) = crate::mx::encode(Mini::E2M1, x / scale) else {
                    return unsup("a NaN converted to fp4 (not modelled)");
                };
                out |= (c as u32) << (4 * k);
            }
            w.vwrite(&ins.ops[0], lane, Ty::B32, out as u64)
        }
        Narrow::Fp8(fmt) => {
            let mut out = [0u32; 2];
            for (k, &x) in xs.iter().enumerate() {
                let q = x / scale;
                // An f32 quotient is exact when it is a normal f32; else
                // fp8 rounding of the f64 quotient could differ from the
                // hardware's: report it.
                let qf = q as f32;
                if qf as f64 != q {
                    return unsup(format!(
                        "{x:e} / {scale:e} is not an f32 (the rounding of such quotients is not modelled)"
                    ));
                }
                let Some(c) = crate::fp8::encode(fmt, qf) else {
                    return unsup(format!(
                        "{x:e} / {scale:e} is beyond the fp8/bf8 range or not finite (saturation and NaN not modelled)"
                    ));
                };
                out[k / 4] |= (c as u32) << (8 * (k % 4));
            }
            for (k, v) in out.into_iter().enumerate() {
                w.vwrite(&reg(&ins.ops[0], k as u16), lane, Ty::B32, v as u64)?;
            }
            Ok(())
        }
    }
}

fn up_lane(
    w: &mut Wave,
    ins: &Instruction,
    ctx: &mut Ctx,
    lane: usize,
    nf: Narrow,
    wf: Wide,
) -> R<()> {
    let scale = crate::mx::e8m0(w.vread(&ins.ops[2], lane, Ty::B32, ctx)? as u8);
    let words = match nf {
        Narrow::Fp4 => 1,
        Narrow::Fp8(_) => 2,
    };
    let mut src = 0u64;
    for k in 0..words {
        src |= w.vread(&reg(&ins.ops[1], k), lane, Ty::B32, ctx)? << (32 * k);
    }
    let mut out = [0u32; 8];
    for k in 0..8 {
        let v = match nf {
            Narrow::Fp4 => crate::mx::decode(Mini::E2M1, (src >> (4 * k)) as u8 & 0xf),
            Narrow::Fp8(fmt) => crate::fp8::decode(fmt, (src >> (8 * k)) as u8),
        };
        // Every fp8/fp4 value times a power of two is exact in f64 (or
        // overflows to an infinity past f64's range, which E8M0 cannot
        // reach); the destination rounds once.
        let x = v * scale;
        match wf {
            Wide::F32 => out[k] = (x as f32).to_bits(),
            Wide::F16 => out[k / 2] |= (half::f16::from_f64(x).to_bits() as u32) << (16 * (k % 2)),
            Wide::Bf16 => {
                out[k / 2] |= (half::bf16::from_f64(x).to_bits() as u32) << (16 * (k % 2))
            }
        }
    }
    let regs = match wf {
        Wide::F32 => 8,
        _ => 4,
    };
    for (k, v) in out.into_iter().take(regs).enumerate() {
        w.vwrite(&reg(&ins.ops[0], k as u16), lane, Ty::B32, v as u64)?;
    }
    Ok(())
}
