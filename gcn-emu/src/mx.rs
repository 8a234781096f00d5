//! The OCP microscaling (MX) element and scale formats of gfx950 (CDNA4):
//! 4- and 6-bit floats and the 8-bit power-of-two scale E8M0, decoded
//! exactly and encoded with round to nearest even.
//!
//! | format | exponent bias | largest finite | used by |
//! |---|---|---|---|
//! | `E2M1` (fp4) | 1 | 6 | `cbsz`/`blgp` 4, `v_cvt_scalef32_pk_fp4_f32` |
//! | `E2M3` (fp6) | 1 | 7.5 | `cbsz`/`blgp` 2 |
//! | `E3M2` (bf6) | 3 | 28 | `cbsz`/`blgp` 3 |
//!
//! None of them has an infinity or a NaN. An input beyond the largest finite
//! magnitude (an infinity included) saturates to it, as ml_dtypes does
//! (`float4_e2m1fn`, `float6_e2m3fn`, `float6_e3m2fn`) and as AMD's own
//! emulator generated from the ISA does (rocjitsu, ROCm/rocm-systems pull
//! request 6870: the FP4 conversion returns `sign | 0x7` past the top
//! exponent). A NaN input is not modelled ([`encode`] returns `None`).
//!
//! E8M0 (`float8_e8m0fnu`) is a biased exponent only: code `e` is
//! 2^(e − 127), code 0xff is NaN, there is no zero or sign.

/// A 4- or 6-bit float format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mini {
    /// OCP FP4 E2M1 (bias 1): ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}.
    E2M1,
    /// OCP FP6 E2M3 (bias 1), largest 7.5.
    E2M3,
    /// OCP FP6 E3M2 (bias 3), largest 28.
    E3M2,
}

impl Mini {
    /// (exponent bits, mantissa bits, bias).
    fn layout(self) -> (u32, u32, i32) {
        match self {
            Mini::E2M1 => (2, 1, 1),
            Mini::E2M3 => (2, 3, 1),
            Mini::E3M2 => (3, 2, 3),
        }
    }

    /// The width of a code in bits (4 or 6).
    pub fn bits(self) -> u32 {
        let (e, m, _) = self.layout();
        1 + e + m
    }

    /// The largest finite magnitude.
    pub fn max(self) -> f64 {
        decode(self, (1 << (self.bits() - 1)) - 1)
    }
}

/// The exact value of code `c` (its low [`Mini::bits`] bits) in `fmt`.
pub fn decode(fmt: Mini, c: u8) -> f64 {
    let (e_bits, m_bits, bias) = fmt.layout();
    let sign_bit = 1u8 << (e_bits + m_bits);
    let sign = if c & sign_bit != 0 { -1.0 } else { 1.0 };
    let e = ((c >> m_bits) & ((1 << e_bits) - 1)) as i32;
    let m = (c & ((1 << m_bits) - 1)) as f64;
    let scale = (1u32 << m_bits) as f64;
    if e == 0 {
        sign * m / scale * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + m / scale) * 2f64.powi(e - bias)
    }
}

/// `x` rounded to nearest even in `fmt`, saturating beyond the largest
/// finite magnitude (infinities too); `None` for a NaN (not modelled).
/// Negative values that round to zero keep their sign (code `S.000…`).
pub fn encode(fmt: Mini, x: f64) -> Option<u8> {
    if x.is_nan() {
        return None;
    }
    let sign_bit = 1u8 << (fmt.bits() - 1);
    let neg = x.is_sign_negative();
    let a = x.abs();
    // The nearest of the (at most 32) magnitudes; ties to the even code,
    // which for these formats is the one whose mantissa's last bit is 0.
    let mut best = 0u8;
    if a >= fmt.max() {
        best = sign_bit - 1;
    } else {
        for c in 1..sign_bit {
            let (dc, db) = ((decode(fmt, c) - a).abs(), (decode(fmt, best) - a).abs());
            if dc < db || (dc == db && c & 1 == 0) {
                best = c;
            }
        }
    }
    Some(if neg { best | sign_bit } else { best })
}

/// The value of an E8M0 scale code: 2^(e − 127), NaN for 0xff.
pub fn e8m0(e: u8) -> f64 {
    if e == 0xff {
        f64::NAN
    } else {
        2f64.powi(e as i32 - 127)
    }
}

/// The power of two a `v_cvt_scalef32_*` instruction scales by: its f32
/// scale operand's biased exponent field `E`, read as 2^(E − 127) (the
/// mantissa and sign are ignored, as in CDNA4's pseudocode
/// `exponent(S2.f32)`), NaN for an all-ones exponent.
pub fn scalef32(bits: u32) -> f64 {
    e8m0((bits >> 23) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes() {
        let fp4: Vec<f64> = (0..16).map(|c| decode(Mini::E2M1, c)).collect();
        assert_eq!(
            fp4,
            [
                0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0,
                -6.0
            ]
        );
        assert_eq!(Mini::E2M3.max(), 7.5);
        assert_eq!(Mini::E3M2.max(), 28.0);
        assert_eq!(encode(Mini::E2M1, 5.0), Some(6)); // tie 4|6 → even (4)
        assert_eq!(encode(Mini::E2M1, 5.01), Some(7));
        assert_eq!(encode(Mini::E2M1, 100.0), Some(7));
        assert_eq!(encode(Mini::E2M1, f64::NEG_INFINITY), Some(15));
        assert_eq!(encode(Mini::E2M1, -0.2), Some(8));
        assert_eq!(encode(Mini::E2M1, f64::NAN), None);
        assert_eq!(e8m0(127), 1.0);
        assert!(e8m0(255).is_nan());
        assert_eq!(scalef32(4.0f32.to_bits()), 4.0);
        assert_eq!(scalef32(6.0f32.to_bits()), 4.0);
    }

    #[test]
    fn every_code_round_trips() {
        for fmt in [Mini::E2M1, Mini::E2M3, Mini::E3M2] {
            for c in 0..(1u8 << fmt.bits()) {
                let v = decode(fmt, c);
                assert_eq!(encode(fmt, v), Some(c), "{fmt:?} {c:#x} = {v}");
            }
        }
    }
}
