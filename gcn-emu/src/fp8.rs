//! 8-bit floating point: the formats of CDNA3 (gfx942: FNUZ, no negative
//! zero, one NaN, no infinity) and CDNA4 (gfx950: OCP FP8, as in the OCP
//! 8-bit floating point specification), decoded exactly and encoded with
//! round to nearest even.
//!
//! | format | exponent bias | largest finite | NaN | infinity |
//! |---|---|---|---|---|
//! | `E4M3Fnuz` (gfx942 fp8) | 8 | 240 | `0x80` | none |
//! | `E5M2Fnuz` (gfx942 bf8) | 16 | 57344 | `0x80` | none |
//! | `E4M3Fn` (gfx950 fp8) | 7 | 448 | `0x7f`, `0xff` | none |
//! | `E5M2` (gfx950 bf8) | 15 | 57344 | `0x7d`…`0x7f`, `0xfd`…`0xff` | `0x7c`, `0xfc` |
//!
//! Subnormals are kept in both directions. The hardware's result for a value
//! beyond the largest finite one, an infinity or a NaN converted *to* 8 bits
//! is not modelled: [`encode`] returns `None` and the executor reports the
//! instruction as unsupported for that input rather than guess.

/// An 8-bit float format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp8 {
    /// gfx942 `fp8`: 4 exponent bits (bias 8), 3 mantissa bits, FNUZ.
    E4M3Fnuz,
    /// gfx942 `bf8`: 5 exponent bits (bias 16), 2 mantissa bits, FNUZ.
    E5M2Fnuz,
    /// gfx950 `fp8`: OCP E4M3 (bias 7), no infinity, NaN `S.1111.111`.
    E4M3Fn,
    /// gfx950 `bf8`: OCP E5M2 (bias 15), IEEE-like.
    E5M2,
}

impl Fp8 {
    /// The format of an instruction's `fp8` or `bf8` operand: OCP on
    /// gfx950 (`ocp`), FNUZ on gfx942.
    pub fn of(bf8: bool, ocp: bool) -> Fp8 {
        match (bf8, ocp) {
            (false, false) => Fp8::E4M3Fnuz,
            (true, false) => Fp8::E5M2Fnuz,
            (false, true) => Fp8::E4M3Fn,
            (true, true) => Fp8::E5M2,
        }
    }

    /// (exponent bits, mantissa bits, bias).
    fn layout(self) -> (u32, u32, i32) {
        match self {
            Fp8::E4M3Fnuz => (4, 3, 8),
            Fp8::E5M2Fnuz => (5, 2, 16),
            Fp8::E4M3Fn => (4, 3, 7),
            Fp8::E5M2 => (5, 2, 15),
        }
    }

    /// The largest finite magnitude.
    pub fn max(self) -> f64 {
        match self {
            Fp8::E4M3Fnuz => 240.0,
            Fp8::E5M2Fnuz | Fp8::E5M2 => 57344.0,
            Fp8::E4M3Fn => 448.0,
        }
    }
}

/// The exact value of `b` in `fmt` (NaN for its NaN codes).
pub fn decode(fmt: Fp8, b: u8) -> f64 {
    let (e_bits, m_bits, bias) = fmt.layout();
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((b >> m_bits) & ((1 << e_bits) - 1) as u8) as i32;
    let m = (b & ((1 << m_bits) - 1) as u8) as f64;
    match fmt {
        Fp8::E4M3Fnuz | Fp8::E5M2Fnuz if b == 0x80 => return f64::NAN,
        Fp8::E4M3Fn if b & 0x7f == 0x7f => return f64::NAN,
        Fp8::E5M2 if e == 31 => {
            return if m == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => {}
    }
    let scale = (1u32 << m_bits) as f64;
    if e == 0 {
        sign * m / scale * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + m / scale) * 2f64.powi(e - bias)
    }
}

/// `x` rounded to nearest even in `fmt`; `None` for NaN, infinities and
/// values that round beyond the largest finite one (not modelled).
pub fn encode(fmt: Fp8, x: f32) -> Option<u8> {
    if !x.is_finite() {
        return None;
    }
    let (_, m_bits, bias) = fmt.layout();
    let neg = x.is_sign_negative();
    let a = (x as f64).abs();
    // The spacing of representable values around `a`: subnormal spacing
    // below the smallest normal, else 2^(exponent - m_bits).
    let min_exp = 1 - bias;
    let exp = if a == 0.0 {
        min_exp
    } else {
        (a.log2().floor() as i32).max(min_exp)
    };
    // log2 may be off by one at powers of two: correct it.
    let exp = if exp > min_exp && a < 2f64.powi(exp) {
        exp - 1
    } else if a >= 2f64.powi(exp + 1) {
        exp + 1
    } else {
        exp
    };
    let ulp = 2f64.powi(exp - m_bits as i32);
    let q = a / ulp; // exact: a is an f32, ulp a power of two
    let mut n = q.floor();
    let frac = q - n;
    if frac > 0.5 || (frac == 0.5 && n % 2.0 == 1.0) {
        n += 1.0;
    }
    let r = n * ulp;
    if r > fmt.max() {
        return None;
    }
    if r == 0.0 {
        // FNUZ formats have no negative zero; OCP ones keep the sign.
        return Some(match fmt {
            Fp8::E4M3Fnuz | Fp8::E5M2Fnuz => 0,
            _ if neg => 0x80,
            _ => 0,
        });
    }
    // Find the code: the value is representable, so search the 128
    // magnitudes (cheap, and exact by construction).
    let code = (0u8..0x80)
        .find(|&c| decode(fmt, c) == r)
        .expect("a rounded in-range value is representable");
    Some(if neg { code | 0x80 } else { code })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes() {
        assert_eq!(decode(Fp8::E4M3Fnuz, 0x7f), 240.0);
        assert_eq!(decode(Fp8::E4M3Fn, 0x7e), 448.0);
        assert_eq!(decode(Fp8::E5M2, 0x7b), 57344.0);
        assert_eq!(decode(Fp8::E5M2Fnuz, 0x7f), 57344.0);
        assert!(decode(Fp8::E4M3Fnuz, 0x80).is_nan());
        assert_eq!(decode(Fp8::E4M3Fn, 0x80), 0.0);
        assert_eq!(decode(Fp8::E5M2, 0x7c), f64::INFINITY);
        assert_eq!(decode(Fp8::E4M3Fn, 0x01), 2f64.powi(-9));
        assert_eq!(decode(Fp8::E4M3Fnuz, 0x01), 2f64.powi(-10));
        // 1.0 in each: bias in the exponent field.
        assert_eq!(encode(Fp8::E4M3Fnuz, 1.0), Some(8 << 3));
        assert_eq!(encode(Fp8::E4M3Fn, 1.0), Some(7 << 3));
        assert_eq!(encode(Fp8::E5M2Fnuz, 1.0), Some(16 << 2));
        assert_eq!(encode(Fp8::E5M2, -1.0), Some(0x80 | 15 << 2));
        // Ties to even: 1.0625 lies between 1.0 and 1.125 (e4m3).
        assert_eq!(encode(Fp8::E4M3Fn, 1.0625), Some(7 << 3));
        assert_eq!(encode(Fp8::E4M3Fn, 1.1875), Some(7 << 3 | 2));
        assert_eq!(encode(Fp8::E4M3Fn, 449.0), Some(0x7e));
        assert_eq!(encode(Fp8::E4M3Fn, 480.0), None);
        assert_eq!(encode(Fp8::E4M3Fnuz, f32::NAN), None);
        assert_eq!(encode(Fp8::E4M3Fnuz, -0.0), Some(0));
        assert_eq!(encode(Fp8::E4M3Fn, -0.0), Some(0x80));
    }

    #[test]
    fn every_finite_code_round_trips() {
        for fmt in [Fp8::E4M3Fnuz, Fp8::E5M2Fnuz, Fp8::E4M3Fn, Fp8::E5M2] {
            for c in 0..=255u8 {
                let v = decode(fmt, c);
                if v.is_finite() {
                    assert_eq!(encode(fmt, v as f32), Some(c), "{fmt:?} {c:#x} = {v}");
                }
            }
        }
    }
}
