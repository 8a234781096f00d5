//! Approximate instructions: the transcendental VALU operations whose
//! hardware results are within a documented error of the exact value, not
//! correctly rounded.
//!
//! The executor computes every one of them correctly rounded (or as the
//! host's math library does). This module keeps the one table of those
//! instructions with their bounds ([`TABLE`]), counts their executions
//! during a dispatch ([`Tally`], reported as [`Executed`] in
//! [`crate::dispatch::Stats::approx`]), and, when a launch asks for it
//! ([`crate::dispatch::Launch::perturb_approx`]), moves their results
//! within the bound ([`Approx::perturb`]), so that a result that depends on
//! the exact values shows up as a difference.
//!
//! # The perturbation model
//!
//! A seed stands for one hypothetical hardware implementation that is off
//! wherever its documented bound lets it be: the result is the correctly
//! rounded one moved by a nonzero number of representable steps, chosen by
//! SplitMix64 from the seed, the mnemonic and the input bits, among the
//! steps that keep it within the bound of the exact value (computed in
//! f64 for f16 and f32 operations). The perturbation is therefore a
//! function of the input, as the hardware's is: the same input gives the
//! same result in every lane, wave, workgroup and thread count, and in
//! both objects of a comparison. When no step fits (an f16 result with a
//! 0.51 ULP bound whose exact value is not near a tie), the result stays
//! correctly rounded. NaN, infinities and zeros are kept as computed.
//!
//! For a 1 ULP bound, the only step that fits is the other neighbour of
//! the exact value (the other faithful rounding), or either neighbour when
//! the result is exact; so seeds differ only on exact results there.
//! For f64 operations (bound 2^29 ULP) there is no exact reference: the
//! step is at most 2^29 − 1 representable values from the correctly
//! rounded result, magnitude and sign chosen by the seed.

use crate::launch::SplitMix64;
use std::collections::BTreeMap;

/// Floating-point format of an approximate operation's source and result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// IEEE half.
    F16,
    /// IEEE single.
    F32,
    /// IEEE double.
    F64,
}

/// What one approximate operation computes from its source `x` (before
/// rounding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// 1 / x.
    Rcp,
    /// 1 / sqrt(x).
    Rsq,
    /// sqrt(x).
    Sqrt,
    /// 2^x.
    Exp2,
    /// log2(x).
    Log2,
    /// sin(2πx).
    Sin,
    /// cos(2πx).
    Cos,
}

/// One approximate instruction of [`TABLE`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Approx {
    /// The mnemonic without encoding suffix (`v_rcp_f32`).
    pub mnemonic: &'static str,
    /// Source and result format.
    pub format: Format,
    /// The function.
    pub function: Function,
    /// The documented worst-case error, in ULPs of the exact value; `None`
    /// when no source documents one (listed, never perturbed).
    pub bound: Option<f64>,
    /// Where the bound comes from.
    pub source: &'static str,
}

const RCP_RSQ: &str = "LLVM AMDGPUCodeGenPrepare.cpp (optimizeWithRcp) and SIISelLowering.cpp (lowerFastUnsafeFDIV): \"v_rcp_f32 and v_rsq_f32 do not support denormals, and according to the CI documentation has a worst case error of 1 ulp\"";
const SQRT: &str = "LLVM AMDGPUCodeGenPrepare.cpp (visitSqrt): \"The raw instruction is 1 ulp\"";
const EXP_LOG: &str = "LLVM docs/AMDGPUUsage.rst, llvm.exp2 and llvm.log2: \"Hardware provides 1ULP accuracy for float, and 0.51ULP for half\"";
const RCP16: &str =
    "LLVM AMDGPUCodeGenPrepare.cpp (optimizeWithRcp): \"rcp_f16 is accurate to 0.51 ulp\"";
const F64: &str = "LLVM SIISelLowering.cpp (lowerFastUnsafeFDIV), on the f64 reciprocal square root: \"The maximum ULP error seems really high at 2^29 ULP\"; \"rcp_f64 is never accurate\" (AMDGPUCodeGenPrepare.cpp); applied to v_rcp_f64, v_rsq_f64 and v_sqrt_f64 alike";
const NONE: &str = "no documented bound found: listed, not perturbed";

/// The approximate instructions the executor implements, with their bounds.
/// One table: the listing, the perturbation and the book's reference
/// (docs/src/guide/run.md, "Approximate instructions") all read it.
pub const TABLE: &[Approx] = &[
    a("v_rcp_f32", Format::F32, Function::Rcp, Some(1.0), RCP_RSQ),
    // The reciprocal LLVM uses for integer division; the same unit.
    a(
        "v_rcp_iflag_f32",
        Format::F32,
        Function::Rcp,
        Some(1.0),
        "assumed as v_rcp_f32 (LLVM uses it as the same reciprocal for integer division; no bound of its own found)",
    ),
    a("v_rsq_f32", Format::F32, Function::Rsq, Some(1.0), RCP_RSQ),
    a("v_sqrt_f32", Format::F32, Function::Sqrt, Some(1.0), SQRT),
    a("v_exp_f32", Format::F32, Function::Exp2, Some(1.0), EXP_LOG),
    a("v_log_f32", Format::F32, Function::Log2, Some(1.0), EXP_LOG),
    a("v_sin_f32", Format::F32, Function::Sin, None, NONE),
    a("v_cos_f32", Format::F32, Function::Cos, None, NONE),
    a("v_rcp_f16", Format::F16, Function::Rcp, Some(0.51), RCP16),
    a("v_exp_f16", Format::F16, Function::Exp2, Some(0.51), EXP_LOG),
    a("v_sqrt_f16", Format::F16, Function::Sqrt, None, NONE),
    a("v_rcp_f64", Format::F64, Function::Rcp, Some(F64_BOUND), F64),
    a("v_rsq_f64", Format::F64, Function::Rsq, Some(F64_BOUND), F64),
    a("v_sqrt_f64", Format::F64, Function::Sqrt, Some(F64_BOUND), F64),
];

const F64_BOUND: f64 = (1u64 << 29) as f64;
/// The most steps an f16/f32 perturbation takes (the table's bounds need 1).
const MAX_STEPS_16_32: u64 = 4;

const fn a(
    mnemonic: &'static str,
    format: Format,
    function: Function,
    bound: Option<f64>,
    source: &'static str,
) -> Approx {
    Approx {
        mnemonic,
        format,
        function,
        bound,
        source,
    }
}

/// The table's entry for `mnemonic` (without encoding suffix), if it is
/// approximate.
pub fn lookup(mnemonic: &str) -> Option<&'static Approx> {
    if !mnemonic.starts_with("v_") {
        return None;
    }
    TABLE.iter().find(|a| a.mnemonic == mnemonic)
}

impl Approx {
    /// The largest number of representable steps a perturbed result may be
    /// from the correctly rounded one (0: not perturbed).
    pub fn max_steps(&self) -> u64 {
        match (self.bound, self.format) {
            (None, _) => 0,
            (Some(_), Format::F64) => (1 << 29) - 1,
            // A result within B ULPs of the exact value is at most
            // B + 0.5 ULPs from the correctly rounded one.
            (Some(b), _) => (b + 0.5).floor() as u64,
        }
    }

    /// The exact value of the function at `x`, in f64 (None for f64
    /// operations, which have no wider reference here).
    fn exact(&self, x: f64) -> f64 {
        match self.function {
            Function::Rcp => 1.0 / x,
            Function::Rsq => 1.0 / x.sqrt(),
            Function::Sqrt => x.sqrt(),
            Function::Exp2 => x.exp2(),
            Function::Log2 => x.log2(),
            Function::Sin => (x * std::f64::consts::TAU).sin(),
            Function::Cos => (x * std::f64::consts::TAU).cos(),
        }
    }

    /// `result` (the correctly rounded bits of this operation on the
    /// source bits `input`, low bits of the format) moved within the bound
    /// as the seed's hypothetical hardware would (see the module
    /// documentation). Deterministic in (`seed`, mnemonic, `input`).
    pub fn perturb(&self, seed: u64, input: u64, result: u64) -> u64 {
        let max = self.max_steps();
        if max == 0 {
            return result;
        }
        let (bits, sign_bit, inf_bits) = match self.format {
            Format::F16 => (16u32, 1u64 << 15, 0x7c00u64),
            Format::F32 => (32, 1 << 31, 0x7f80_0000),
            Format::F64 => (64, 1 << 63, 0x7ff0_0000_0000_0000),
        };
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let result = result & mask;
        let input = input & mask;
        let sign = result & sign_bit;
        let mag = result & !sign_bit;
        if mag == 0 || mag >= inf_bits {
            return result;
        }
        let mut key = seed ^ 0x6a09_e667_f3bc_c909;
        for b in self.mnemonic.bytes() {
            key = (key ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut g = SplitMix64(key ^ input.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        // A magnitude of `mag + k` steps, if it stays a nonzero finite value
        // of the same sign.
        let step = |k: i64| -> Option<u64> {
            let m = mag as i128 + k as i128;
            (m > 0 && m < inf_bits as i128).then_some(sign | m as u64)
        };
        if self.format == Format::F64 {
            let n = 1 + g.next_u64() % max;
            let k = if g.next_u64() & 1 == 0 {
                n as i64
            } else {
                -(n as i64)
            };
            return step(k).or_else(|| step(-k)).unwrap_or(result);
        }
        let bound = self.bound.unwrap_or(0.0);
        let value = |b: u64| match self.format {
            Format::F16 => half::f16::from_bits(b as u16).to_f64(),
            _ => f32::from_bits(b as u32) as f64,
        };
        let exact = self.exact(value(input));
        if !exact.is_finite() {
            return result;
        }
        let ulp = ulp_of(self.format, exact);
        // The candidates, without allocating (f16/f32 bounds are a few
        // ULPs: 1 step each way for the table's).
        let mut fits = [0u64; 2 * MAX_STEPS_16_32 as usize];
        let mut n = 0;
        for k in (1..=max.min(MAX_STEPS_16_32) as i64).flat_map(|k| [k, -k]) {
            if let Some(b) = step(k).filter(|&b| (value(b) - exact).abs() <= bound * ulp) {
                fits[n] = b;
                n += 1;
            }
        }
        if n == 0 {
            return result;
        }
        fits[(g.next_u64() % n as u64) as usize]
    }
}

/// One ULP of `format` at the real value `x`: 2^(e − p + 1), where
/// 2^e ≤ |x| < 2^(e+1) (at least the format's smallest normal exponent)
/// and p the format's precision.
pub fn ulp_of(format: Format, x: f64) -> f64 {
    let (p, emin) = match format {
        Format::F16 => (11, -14),
        Format::F32 => (24, -126),
        Format::F64 => (53, -1022),
    };
    let ax = x.abs();
    let e = if ax == 0.0 || !ax.is_finite() {
        emin
    } else {
        (((ax.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(emin)
    };
    2f64.powi(e - p + 1)
}

/// The number of representable values of `format` from `a` to `b` (bits in
/// the format's low bits; both finite): 0 when equal, 1 for neighbours.
pub fn steps_between(format: Format, a: u64, b: u64) -> u64 {
    let (sign_bit, mask) = match format {
        Format::F16 => (1u64 << 15, 0xffffu64),
        Format::F32 => (1 << 31, 0xffff_ffff),
        Format::F64 => (1 << 63, u64::MAX),
    };
    let ordered = |x: u64| -> i128 {
        let x = x & mask;
        if x & sign_bit != 0 {
            -((x & !sign_bit) as i128)
        } else {
            x as i128
        }
    };
    (ordered(a) - ordered(b)).unsigned_abs() as u64
}

/// How often one approximate instruction ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// Wave-executions.
    pub waves: u64,
    /// Lane-executions (active lanes summed).
    pub lanes: u64,
}

/// A wave's record of the approximate instructions it executed, and the
/// perturbation seed of the launch.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Perturb results with this seed ([`Approx::perturb`]); `None`: exact.
    pub perturb: Option<u64>,
    /// Executions per instruction address.
    pub counts: BTreeMap<u64, Count>,
}

impl Tally {
    /// One execution of the instruction at `addr` on `lanes` lanes.
    pub fn record(&mut self, addr: u64, lanes: u32) {
        let c = self.counts.entry(addr).or_default();
        c.waves += 1;
        c.lanes += lanes as u64;
    }
}

/// One approximate instruction a dispatch executed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executed {
    /// Its address.
    pub addr: u64,
    /// Its mnemonic without encoding suffix.
    pub mnemonic: String,
    /// Its text as disassembled.
    pub text: String,
    /// Its source line (`file:line`), when the program has one (the asm
    /// attached with [`crate::decode::Program::attach_source`]).
    pub line: Option<String>,
    /// Wave-executions.
    pub waves: u64,
    /// Lane-executions.
    pub lanes: u64,
}

impl Executed {
    /// The table's entry for this instruction.
    pub fn approx(&self) -> Option<&'static Approx> {
        lookup(&self.mnemonic)
    }
}

impl std::fmt::Display for Executed {
    /// `v_rcp_f32 ×N waves (M lanes) at ADDR `TEXT` (FILE:LINE), within 1 ULP`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} wave(s), {} lane(s), at {:#x} `{}`",
            self.mnemonic, self.waves, self.lanes, self.addr, self.text
        )?;
        if let Some(l) = &self.line {
            write!(f, " ({l})")?;
        }
        match self.approx() {
            Some(a) => write!(f, "; hardware: {}", a.bound_text()),
            None => Ok(()),
        }
    }
}

/// One line per mnemonic of `executed`, in [`TABLE`] order: the mnemonic,
/// how many of its instructions ran, the hardware's bound, the
/// wave-executions, and each instruction (the first 8) with its
/// `file:line` (`:line` after one of the same file; the address when it has
/// no line) and text: ``v_rcp_f32 ×2 (hardware: within 1 ULP), 32
/// wave-execution(s): k.s:30 `v_rcp_f32_e32 v4, v3`, :41 `…` ``.
pub fn summarize(executed: &[Executed]) -> Vec<String> {
    const SHOWN: usize = 8;
    let mut lines = Vec::new();
    for a in TABLE {
        let these: Vec<&Executed> = executed
            .iter()
            .filter(|e| e.mnemonic == a.mnemonic)
            .collect();
        if these.is_empty() {
            continue;
        }
        // `file:line`, then `:line` while the file stays the same.
        let mut file = None;
        let mut at: Vec<String> = these
            .iter()
            .take(SHOWN)
            .map(|e| {
                let at = match e.line.as_deref().and_then(|l| l.rsplit_once(':')) {
                    Some((f, no)) if file == Some(f) => format!(":{no}"),
                    Some((f, no)) => {
                        file = Some(f);
                        format!("{f}:{no}")
                    }
                    None => {
                        file = None;
                        format!("{:#x}", e.addr)
                    }
                };
                format!("{at} `{}`", e.text)
            })
            .collect();
        if these.len() > SHOWN {
            at.push(format!("… {} more", these.len() - SHOWN));
        }
        let waves: u64 = these.iter().map(|e| e.waves).sum();
        lines.push(format!(
            "{} ×{} (hardware: {}), {waves} wave-execution(s): {}",
            a.mnemonic,
            these.len(),
            a.bound_text(),
            at.join(", ")
        ));
    }
    lines
}

impl Approx {
    /// The bound as the reports say it: `within 1 ULP`.
    pub fn bound_text(&self) -> String {
        match self.bound {
            Some(b) if b >= F64_BOUND => "within 2^29 ULP".into(),
            Some(b) => format!("within {b} ULP"),
            None => "approximate, no documented bound".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_a_distinct_vector_mnemonic_with_a_source() {
        for (i, a) in TABLE.iter().enumerate() {
            assert!(a.mnemonic.starts_with("v_"), "{a:?}");
            assert!(!a.source.is_empty());
            assert!(TABLE[..i].iter().all(|b| b.mnemonic != a.mnemonic));
            assert_eq!(lookup(a.mnemonic), Some(a));
        }
        assert_eq!(lookup("v_mul_f32"), None);
        assert_eq!(lookup("v_div_fixup_f32"), None);
    }

    #[test]
    fn a_one_ulp_perturbation_is_the_other_faithful_rounding() {
        let rcp = lookup("v_rcp_f32").unwrap();
        for x in [3.0f32, 7.0, 0.1, -5.5, 1e-20, 123456.7] {
            let cr = (1.0 / x).to_bits() as u64;
            for seed in 1..20 {
                let p = rcp.perturb(seed, x.to_bits() as u64, cr);
                assert_eq!(steps_between(Format::F32, p, cr), 1, "{x} seed {seed}");
                let exact = 1.0 / x as f64;
                let err = (f32::from_bits(p as u32) as f64 - exact).abs();
                assert!(err <= ulp_of(Format::F32, exact), "{x}: {err}");
                // The same input gives the same result.
                assert_eq!(p, rcp.perturb(seed, x.to_bits() as u64, cr));
            }
        }
        // Exact results may move either way; special results stay.
        let four = (0.25f32).to_bits() as u64;
        let moved: std::collections::BTreeSet<u64> = (0..64)
            .map(|s| rcp.perturb(s, 4.0f32.to_bits() as u64, four))
            .collect();
        assert_eq!(moved.len(), 2, "{moved:?}");
        for special in [0u64, f32::INFINITY.to_bits() as u64, 0x7fc0_0000] {
            assert_eq!(rcp.perturb(5, 0, special), special);
        }
        let sin = lookup("v_sin_f32").unwrap();
        assert_eq!(sin.perturb(5, 0x3e80_0000, 0x3f80_0000), 0x3f80_0000);
    }
}
