//! Launch descriptions: a dispatch's grid, block and arguments as data, the
//! deterministic random inputs they name, and the comparison of two runs'
//! buffers.
//!
//! A [`LaunchSpec`] says what to run, not how: a grid, a block and one
//! [`ArgSpec`] per explicit kernel argument (random inputs of a dtype,
//! shape and seed; output buffers of a dtype and shape; scalars; null
//! pointers). It deserializes with serde (the `[[kernel.launch]]` tables of
//! gcn-patch's `kernels.toml`):
//!
//! ```toml
//! grid = [4]            # workgroups (HIP's grid), 1 to 3 dimensions
//! block = [256]         # work-items per workgroup
//! args = [
//!   { scalar = "f32", value = 2.0 },
//!   { random = "f32", shape = [1000], seed = 1 },
//!   { random = "f32", shape = [1000], seed = 2, range = [-4, 4] },
//!   { scalar = "u32", value = 1000 },
//! ]
//! # optional: tolerance = "ulp:1", seed = 7, name = "small", dynamic-lds = 4096,
//! # cluster = [4, 1, 1] (gfx1250)
//! ```
//!
//! **Nothing in it is specific to the emulator.** Every field maps onto a
//! HIP launch: buffers are `hipMalloc` + `hipMemcpy` of [`materialize`]d
//! bytes, scalars and pointers are the kernarg bytes of
//! `hipModuleLaunchKernel`, grid and block are its `gridDim`/`blockDim`, and
//! [`compare`] works on the bytes read back. A HIP runner can take the same
//! description later; none is built here (there is no GPU to test it on).
//!
//! Random inputs come from SplitMix64 (Steele, Lea and Flood, 2014; the
//! generator of Java's `SplittableRandom`), written out here so that a seed
//! gives the same bytes on every machine and in every future version: no
//! crate's stream can change under it. The unit tests pin its published
//! output.

use std::fmt;

use serde::Deserialize;

use crate::dispatch::ArgValue;
use crate::load::{Arg, Kernel};
use crate::memory::Memory;
use crate::{Error, Result};

/// Element types of buffers and scalars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE single.
    F32,
    /// IEEE double.
    F64,
}

/// The dtype names, as a list for messages.
pub const DTYPES: &str = "i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64";

impl Dtype {
    /// Parse a name such as `f32`.
    pub fn parse(s: &str) -> Option<Self> {
        use Dtype::*;
        Some(match s {
            "i8" => I8,
            "u8" => U8,
            "i16" => I16,
            "u16" => U16,
            "i32" => I32,
            "u32" => U32,
            "i64" => I64,
            "u64" => U64,
            "f16" => F16,
            "bf16" => Bf16,
            "f32" => F32,
            "f64" => F64,
            _ => return None,
        })
    }

    /// The name, as [`Dtype::parse`] reads it.
    pub fn name(self) -> &'static str {
        use Dtype::*;
        match self {
            I8 => "i8",
            U8 => "u8",
            I16 => "i16",
            U16 => "u16",
            I32 => "i32",
            U32 => "u32",
            I64 => "i64",
            U64 => "u64",
            F16 => "f16",
            Bf16 => "bf16",
            F32 => "f32",
            F64 => "f64",
        }
    }

    /// Size in bytes.
    pub fn size(self) -> usize {
        use Dtype::*;
        match self {
            I8 | U8 => 1,
            I16 | U16 | F16 | Bf16 => 2,
            I32 | U32 | F32 => 4,
            I64 | U64 | F64 => 8,
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F16 | Dtype::Bf16 | Dtype::F32 | Dtype::F64)
    }

    /// NumPy type string (bf16, which NumPy lacks, as its raw bits `<u2`).
    pub fn descr(self) -> &'static str {
        use Dtype::*;
        match self {
            I8 => "|i1",
            U8 => "|u1",
            I16 => "<i2",
            U16 | Bf16 => "<u2",
            I32 => "<i4",
            U32 => "<u4",
            I64 => "<i8",
            U64 => "<u8",
            F16 => "<f2",
            F32 => "<f4",
            F64 => "<f8",
        }
    }

    /// The dtype of a NumPy type string ([`Dtype::descr`]'s inverse; `<u2`
    /// is u16).
    pub fn from_descr(descr: &str) -> Option<Self> {
        use Dtype::*;
        Some(match descr {
            "|i1" | "<i1" => I8,
            "|u1" | "<u1" | "|b1" => U8,
            "<i2" => I16,
            "<u2" => U16,
            "<i4" => I32,
            "<u4" => U32,
            "<i8" => I64,
            "<u8" => U64,
            "<f2" => F16,
            "<f4" => F32,
            "<f8" => F64,
            _ => return None,
        })
    }

    /// The little-endian bytes of `text` as this type (integers in decimal
    /// or `0x` hex, floats in Rust's float syntax).
    pub fn encode(self, text: &str) -> std::result::Result<Vec<u8>, String> {
        let t = text.trim();
        if self.is_float() {
            let v = t
                .parse::<f64>()
                .map_err(|_| format!("`{text}` is not a number"))?;
            return Ok(self.from_f64(v));
        }
        let v = if let Some(h) = t.strip_prefix("0x") {
            i128::from_str_radix(h, 16).ok()
        } else {
            t.parse::<i128>().ok()
        }
        .ok_or_else(|| format!("`{text}` is not an integer"))?;
        self.from_int(v)
    }

    /// The bytes of integer `v`, refused when it does not fit.
    pub fn from_int(self, v: i128) -> std::result::Result<Vec<u8>, String> {
        let (min, max) = self
            .int_range()
            .ok_or_else(|| format!("{} is a float type", self.name()))?;
        if v < min || v > max {
            return Err(format!("{v} does not fit {} ({min}..={max})", self.name()));
        }
        Ok((v as u64).to_le_bytes()[..self.size()].to_vec())
    }

    /// The bytes of `v` rounded to this float type (to nearest even), or
    /// truncated toward zero and saturated for an integer type.
    pub fn from_f64(self, v: f64) -> Vec<u8> {
        use Dtype::*;
        match self {
            F16 => half::f16::from_f64(v).to_le_bytes().to_vec(),
            Bf16 => half::bf16::from_f64(v).to_le_bytes().to_vec(),
            F32 => (v as f32).to_le_bytes().to_vec(),
            F64 => v.to_le_bytes().to_vec(),
            _ => {
                let (min, max) = self.int_range().unwrap_or((0, 0));
                let i = (v as i128).clamp(min, max);
                (i as u64).to_le_bytes()[..self.size()].to_vec()
            }
        }
    }

    /// Smallest and largest value of an integer type.
    pub fn int_range(self) -> Option<(i128, i128)> {
        use Dtype::*;
        Some(match self {
            I8 => (i8::MIN as i128, i8::MAX as i128),
            U8 => (0, u8::MAX as i128),
            I16 => (i16::MIN as i128, i16::MAX as i128),
            U16 => (0, u16::MAX as i128),
            I32 => (i32::MIN as i128, i32::MAX as i128),
            U32 => (0, u32::MAX as i128),
            I64 => (i64::MIN as i128, i64::MAX as i128),
            U64 => (0, u64::MAX as i128),
            _ => return None,
        })
    }

    /// The raw bits of the element at `bytes` (little-endian, zero-extended).
    fn bits(self, bytes: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        b[..self.size()].copy_from_slice(&bytes[..self.size()]);
        u64::from_le_bytes(b)
    }

    /// The element at `bytes` as f64 (floats), or `None` for integers.
    fn float(self, bytes: &[u8]) -> Option<f64> {
        let bits = self.bits(bytes);
        Some(match self {
            Dtype::F16 => half::f16::from_bits(bits as u16).to_f64(),
            Dtype::Bf16 => half::bf16::from_bits(bits as u16).to_f64(),
            Dtype::F32 => f32::from_bits(bits as u32) as f64,
            Dtype::F64 => f64::from_bits(bits),
            _ => return None,
        })
    }

    /// The element at `bytes` as text: the value of an integer, the shortest
    /// round-tripping text of a float.
    pub fn format(self, bytes: &[u8]) -> String {
        use Dtype::*;
        let bits = self.bits(bytes);
        match self {
            I8 => (bits as i8).to_string(),
            I16 => (bits as i16).to_string(),
            I32 => (bits as i32).to_string(),
            I64 => (bits as i64).to_string(),
            U8 | U16 | U32 | U64 => bits.to_string(),
            F16 => format!("{:?}", half::f16::from_bits(bits as u16).to_f32()),
            Bf16 => format!("{:?}", half::bf16::from_bits(bits as u16).to_f32()),
            F32 => format!("{:?}", f32::from_bits(bits as u32)),
            F64 => format!("{:?}", f64::from_bits(bits)),
        }
    }

    /// The float's position on the integer line where adjacent floats are
    /// one apart (negative floats below positive ones; -0 and +0 both 0).
    fn ordinal(self, bytes: &[u8]) -> i128 {
        let bits = self.bits(bytes);
        let (sign, mag) = match self {
            Dtype::F16 | Dtype::Bf16 => (bits >> 15 & 1, bits & 0x7fff),
            Dtype::F32 => (bits >> 31 & 1, bits & 0x7fff_ffff),
            _ => (bits >> 63, bits & 0x7fff_ffff_ffff_ffff),
        };
        if sign == 1 {
            -(mag as i128)
        } else {
            mag as i128
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Dtype {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Dtype::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown dtype `{s}` (one of {DTYPES})"))
        })
    }
}

/// One to three dimensions, missing ones 1: `4`, `[4]`, `[4, 2]`, `[4, 2, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims(pub [u32; 3]);

impl Dims {
    /// Parse `X[,Y[,Z]]`, every dimension a positive integer.
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        let parts: Vec<&str> = s.split(',').collect();
        if parts.len() > 3 {
            return Err(format!("`{s}`: expected X[,Y[,Z]]"));
        }
        let list = parts
            .iter()
            .map(|p| {
                p.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("`{s}`: `{p}` is not a positive integer"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Self::from_list(&list).map_err(|e| format!("`{s}`: {e}"))
    }

    fn from_list(list: &[u64]) -> std::result::Result<Self, String> {
        if list.is_empty() || list.len() > 3 {
            return Err(format!("expected 1 to 3 dimensions, {} given", list.len()));
        }
        let mut d = [1u32; 3];
        for (i, &v) in list.iter().enumerate() {
            d[i] = u32::try_from(v)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("dimension {v} is not a positive 32-bit integer"))?;
        }
        Ok(Dims(d))
    }
}

/// `4` or `[4, 2]` as a list of numbers; anything else is `expected`.
fn numbers<'de, D: serde::Deserializer<'de>>(
    d: D,
    expected: &str,
) -> std::result::Result<Vec<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        One(u64),
        List(Vec<u64>),
    }
    match Raw::deserialize(d).map_err(|_| serde::de::Error::custom(expected))? {
        Raw::One(v) => Ok(vec![v]),
        Raw::List(l) => Ok(l),
    }
}

impl<'de> Deserialize<'de> for Dims {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let list = numbers(
            d,
            "expected a positive integer or a list of 1 to 3 of them, e.g. [4, 2]",
        )?;
        Dims::from_list(&list).map_err(serde::de::Error::custom)
    }
}

/// A buffer's shape: `1000` or `[64, 64]`. Elements are in C order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape(pub Vec<usize>);

impl Shape {
    /// The number of elements.
    pub fn count(&self) -> usize {
        self.0.iter().product()
    }
}

/// The most bytes one buffer of a launch may hold (16 GiB).
pub const MAX_BUFFER_BYTES: usize = 1 << 34;

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let list = numbers(
            d,
            "expected an element count or a list of dimensions, e.g. [64, 64]",
        )?;
        if list.is_empty() {
            return Err(serde::de::Error::custom(
                "a shape needs at least one dimension",
            ));
        }
        let mut n: usize = 1;
        for &v in &list {
            n = usize::try_from(v)
                .ok()
                .and_then(|v| n.checked_mul(v))
                .filter(|&n| n <= MAX_BUFFER_BYTES)
                .ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "shape {list:?} has more elements than the emulator allocates (16 GiB)"
                    ))
                })?;
        }
        Ok(Shape(list.into_iter().map(|v| v as usize).collect()))
    }
}

/// A scalar's value as written: an integer, a float, or text (`"0x10"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// Text, parsed as the dtype ([`Dtype::encode`]).
    Text(String),
}

impl Scalar {
    /// The little-endian bytes of this value as `dtype`.
    pub fn encode(&self, dtype: Dtype) -> std::result::Result<Vec<u8>, String> {
        match self {
            Scalar::Int(i) if dtype.is_float() => Ok(dtype.from_f64(*i as f64)),
            Scalar::Int(i) => dtype.from_int(*i as i128),
            Scalar::Float(f) if dtype.is_float() => Ok(dtype.from_f64(*f)),
            Scalar::Float(f) => Err(format!("{f} is not an integer, and the dtype is {dtype}")),
            Scalar::Text(t) => dtype.encode(t),
        }
    }
}

/// One explicit kernel argument of a launch.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// A buffer of random elements, also written back (kernels may update it
    /// in place).
    Random {
        /// Element type.
        dtype: Dtype,
        /// Shape.
        shape: Shape,
        /// The generator's seed; by default the launch's seed plus the
        /// argument's index.
        seed: Option<u64>,
        /// Values are uniform in `[lo, hi)` (floats, then rounded to the
        /// dtype) or `[lo, hi]` (integers); default [`ArgSpec::default_range`].
        range: Option<(f64, f64)>,
    },
    /// A buffer the kernel writes, every byte 0xff ([`POISON`]) before the
    /// run, so unwritten elements stand out (NaN for floats, -1 for
    /// integers).
    Output {
        /// Element type.
        dtype: Dtype,
        /// Shape.
        shape: Shape,
    },
    /// A value argument.
    Scalar {
        /// Its type: its size must be the argument's.
        dtype: Dtype,
        /// Its value.
        value: Scalar,
    },
    /// A null pointer.
    Null,
    /// A buffer holding a `.npy` file's array (its dtype and shape kept),
    /// read when the launch is prepared: the command line's `PATH.npy`
    /// ([`ArgSpec::parse`]); not written in TOML.
    Npy(std::path::PathBuf),
    /// A by-value argument of `size` zero bytes: what `zero-rest` fills in
    /// ([`LaunchSpec::bind`]); not written in TOML.
    Zero {
        /// The argument's size in bytes.
        size: usize,
    },
}

/// The byte output buffers are filled with before a run.
pub const POISON: u8 = 0xff;

impl ArgSpec {
    /// The default range of random values: `[-1, 1)` for floats, `[-100,
    /// 100]` for signed and `[0, 100]` for unsigned integers.
    pub fn default_range(dtype: Dtype) -> (f64, f64) {
        match dtype {
            Dtype::F16 | Dtype::Bf16 | Dtype::F32 | Dtype::F64 => (-1.0, 1.0),
            Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64 => (0.0, 100.0),
            _ => (-100.0, 100.0),
        }
    }

    /// Parse the command line's forms of an argument (`gcn-patch run
    /// --arg`): `PATH.npy` ([`ArgSpec::Npy`]), `out:DTYPE:COUNT` (a
    /// one-dimensional [`ArgSpec::Output`]) or `DTYPE:VALUE` (a
    /// [`ArgSpec::Scalar`], its value checked against the dtype here); the
    /// error says what forms there are. [`fmt::Display`] prints them back.
    pub fn parse(spec: &str) -> std::result::Result<Self, String> {
        let forms = "expected PATH.npy, out:DTYPE:COUNT or DTYPE:VALUE";
        if spec.ends_with(".npy") {
            return Ok(ArgSpec::Npy(spec.into()));
        }
        if let Some(rest) = spec.strip_prefix("out:") {
            let (d, n) = rest
                .split_once(':')
                .ok_or_else(|| format!("`{spec}`: {forms} (COUNT missing)"))?;
            let dtype = Dtype::parse(d)
                .ok_or_else(|| format!("`{spec}`: unknown DTYPE `{d}` (one of {DTYPES})"))?;
            let n = n
                .parse::<usize>()
                .map_err(|_| format!("`{spec}`: COUNT `{n}` is not a non-negative integer"))?;
            if n.checked_mul(dtype.size())
                .is_none_or(|b| b > MAX_BUFFER_BYTES)
            {
                return Err(format!(
                    "`{spec}`: {n} elements is more than the emulator allocates (16 GiB)"
                ));
            }
            return Ok(ArgSpec::Output {
                dtype,
                shape: Shape(vec![n]),
            });
        }
        let (d, v) = spec
            .split_once(':')
            .ok_or_else(|| format!("`{spec}`: {forms}"))?;
        let dtype = Dtype::parse(d)
            .ok_or_else(|| format!("`{spec}`: unknown DTYPE `{d}` (one of {DTYPES}); {forms}"))?;
        dtype.encode(v).map_err(|e| format!("`{spec}`: {e}"))?;
        Ok(ArgSpec::Scalar {
            dtype,
            value: Scalar::Text(v.to_string()),
        })
    }

    /// The bytes a buffer argument holds before the run, as argument
    /// `index` of a launch seeded `seed`: random inputs from their seed (by
    /// default `seed + index`), outputs poisoned ([`POISON`]); `None` for
    /// values, null pointers and `.npy` buffers (the file's bytes).
    pub fn initial_bytes(&self, index: usize, seed: u64) -> Option<Vec<u8>> {
        match self {
            ArgSpec::Random {
                dtype,
                shape,
                seed: own,
                range,
            } => Some(random_bytes(
                *dtype,
                shape.count(),
                own.unwrap_or(seed.wrapping_add(index as u64)),
                range.unwrap_or(ArgSpec::default_range(*dtype)),
            )),
            ArgSpec::Output { dtype, shape } => Some(vec![POISON; shape.count() * dtype.size()]),
            _ => None,
        }
    }

    /// A buffer's dtype and shape, `None` for scalars and null pointers.
    pub fn buffer(&self) -> Option<(Dtype, &Shape)> {
        match self {
            ArgSpec::Random { dtype, shape, .. } | ArgSpec::Output { dtype, shape } => {
                Some((*dtype, shape))
            }
            _ => None,
        }
    }
}

impl fmt::Display for ArgSpec {
    /// The command line's forms as written (`PATH.npy`, `out:DTYPE:COUNT`,
    /// `DTYPE:VALUE`, the value as the dtype holds it); the others as TOML.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims = |s: &Shape| {
            s.0.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            ArgSpec::Npy(p) => write!(f, "{}", p.display()),
            ArgSpec::Output { dtype, shape } if shape.0.len() == 1 => {
                write!(f, "out:{}:{}", dtype.name(), shape.0[0])
            }
            ArgSpec::Output { dtype, shape } => {
                write!(
                    f,
                    "{{ output = \"{}\", shape = [{}] }}",
                    dtype.name(),
                    dims(shape)
                )
            }
            ArgSpec::Scalar { dtype, value } => match value.encode(*dtype) {
                Ok(bytes) => write!(f, "{}:{}", dtype.name(), dtype.format(&bytes)),
                Err(_) => write!(f, "{}:{value:?}", dtype.name()),
            },
            ArgSpec::Random {
                dtype,
                shape,
                seed,
                range,
            } => {
                write!(
                    f,
                    "{{ random = \"{}\", shape = [{}]",
                    dtype.name(),
                    dims(shape)
                )?;
                if let Some(s) = seed {
                    write!(f, ", seed = {s}")?;
                }
                if let Some((lo, hi)) = range {
                    write!(f, ", range = [{lo}, {hi}]")?;
                }
                write!(f, " }}")
            }
            ArgSpec::Null => write!(f, "{{ null = true }}"),
            ArgSpec::Zero { size } => write!(f, "{size} zero bytes"),
        }
    }
}

impl<'de> Deserialize<'de> for ArgSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            random: Option<Dtype>,
            output: Option<Dtype>,
            scalar: Option<Dtype>,
            null: Option<bool>,
            shape: Option<Shape>,
            seed: Option<u64>,
            range: Option<[f64; 2]>,
            value: Option<Scalar>,
        }
        use serde::de::Error as _;
        let r = Raw::deserialize(d)?;
        let kinds = [
            r.random.is_some(),
            r.output.is_some(),
            r.scalar.is_some(),
            r.null.is_some(),
        ];
        let forms = "`{ random = DTYPE, shape = … }`, `{ output = DTYPE, shape = … }`, `{ scalar = DTYPE, value = … }` or `{ null = true }`";
        if kinds.iter().filter(|&&k| k).count() != 1 {
            return Err(D::Error::custom(format!(
                "an argument is exactly one of {forms}"
            )));
        }
        let only = |allowed: &[&str]| -> std::result::Result<(), D::Error> {
            for (key, set) in [
                ("shape", r.shape.is_some()),
                ("seed", r.seed.is_some()),
                ("range", r.range.is_some()),
                ("value", r.value.is_some()),
            ] {
                if set && !allowed.contains(&key) {
                    return Err(D::Error::custom(format!(
                        "`{key}` does not belong to this kind of argument (it takes {})",
                        if allowed.is_empty() {
                            "no other key".to_string()
                        } else {
                            allowed
                                .iter()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    )));
                }
            }
            Ok(())
        };
        let need_shape = |what: &str| {
            D::Error::custom(format!(
                "{what} buffer needs `shape` (an element count or a list of dimensions)"
            ))
        };
        if let Some(dtype) = r.random {
            only(&["shape", "seed", "range"])?;
            let range = match r.range {
                Some([lo, hi]) if !(lo.is_finite() && hi.is_finite() && lo < hi) => {
                    return Err(D::Error::custom(format!(
                        "range [{lo}, {hi}]: expected two finite numbers, the first below the second"
                    )))
                }
                Some([lo, hi]) => {
                    if let Some((min, max)) = dtype.int_range() {
                        if lo.fract() != 0.0 || hi.fract() != 0.0 {
                            return Err(D::Error::custom(format!(
                                "range [{lo}, {hi}]: an integer dtype takes integer bounds"
                            )));
                        }
                        if (lo as i128) < min || (hi as i128) > max {
                            return Err(D::Error::custom(format!(
                                "range [{lo}, {hi}] does not fit {dtype} ({min}..={max})"
                            )));
                        }
                    }
                    Some((lo, hi))
                }
                None => None,
            };
            let shape = r.shape.ok_or_else(|| need_shape("a random"))?;
            check_bytes(dtype, &shape).map_err(D::Error::custom)?;
            return Ok(ArgSpec::Random {
                dtype,
                shape,
                seed: r.seed,
                range,
            });
        }
        if let Some(dtype) = r.output {
            only(&["shape"])?;
            let shape = r.shape.ok_or_else(|| need_shape("an output"))?;
            check_bytes(dtype, &shape).map_err(D::Error::custom)?;
            return Ok(ArgSpec::Output { dtype, shape });
        }
        if let Some(dtype) = r.scalar {
            only(&["value"])?;
            let value = r
                .value
                .ok_or_else(|| D::Error::custom("a scalar needs `value`"))?;
            value
                .encode(dtype)
                .map_err(|e| D::Error::custom(format!("`value`: {e}")))?;
            return Ok(ArgSpec::Scalar { dtype, value });
        }
        only(&[])?;
        if r.null != Some(true) {
            return Err(D::Error::custom(
                "`null = true` passes a null pointer; leave the key out otherwise",
            ));
        }
        Ok(ArgSpec::Null)
    }
}

fn check_bytes(dtype: Dtype, shape: &Shape) -> std::result::Result<(), String> {
    match shape.count().checked_mul(dtype.size()) {
        Some(b) if b <= MAX_BUFFER_BYTES => Ok(()),
        _ => Err(format!(
            "shape {:?} of {dtype} is more than the emulator allocates (16 GiB)",
            shape.0
        )),
    }
}

/// How closely two runs' float elements must agree. Integer elements are
/// always compared bit for bit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Tolerance {
    /// Bit for bit (the default): equal bits, NaN payloads included.
    #[default]
    Exact,
    /// `|a - b| <= abs + rel * max(|a|, |b|)`; NaNs agree with NaNs, an
    /// infinity only with the same infinity.
    Close {
        /// Absolute tolerance.
        abs: f64,
        /// Relative tolerance.
        rel: f64,
    },
    /// At most this many units in the last place of the dtype apart (-0
    /// and +0 are 0 apart); NaNs agree with NaNs.
    Ulp(u64),
}

impl Tolerance {
    /// Parse `exact`, `abs:X`, `rel:X`, `abs:X,rel:Y` or `ulp:N`.
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        let forms = "expected `exact`, `abs:X`, `rel:X`, `abs:X,rel:Y` or `ulp:N`";
        let t = s.trim();
        if t == "exact" {
            return Ok(Tolerance::Exact);
        }
        if let Some(n) = t.strip_prefix("ulp:") {
            return n
                .trim()
                .parse::<u64>()
                .map(Tolerance::Ulp)
                .map_err(|_| format!("tolerance `{s}`: `{n}` is not a whole number of ulps"));
        }
        let (mut abs, mut rel) = (None, None);
        for part in t.split(',') {
            let (k, v) = part
                .split_once(':')
                .ok_or_else(|| format!("tolerance `{s}`: {forms}"))?;
            let v: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    format!("tolerance `{s}`: `{v}` is not a finite non-negative number")
                })?;
            let slot = match k.trim() {
                "abs" => &mut abs,
                "rel" => &mut rel,
                _ => return Err(format!("tolerance `{s}`: {forms}")),
            };
            if slot.replace(v).is_some() {
                return Err(format!("tolerance `{s}`: `{}` given twice", k.trim()));
            }
        }
        Ok(Tolerance::Close {
            abs: abs.unwrap_or(0.0),
            rel: rel.unwrap_or(0.0),
        })
    }

    /// Whether float elements `a` and `b` of `dtype` agree.
    fn agrees(self, dtype: Dtype, a: &[u8], b: &[u8]) -> bool {
        if dtype.bits(a) == dtype.bits(b) {
            return true;
        }
        let (Some(x), Some(y)) = (dtype.float(a), dtype.float(b)) else {
            return false;
        };
        match self {
            Tolerance::Exact => false,
            _ if x.is_nan() || y.is_nan() => x.is_nan() && y.is_nan(),
            _ if x.is_infinite() || y.is_infinite() => x == y,
            Tolerance::Close { abs, rel } => (x - y).abs() <= abs + rel * x.abs().max(y.abs()),
            Tolerance::Ulp(n) => (dtype.ordinal(a) - dtype.ordinal(b)).unsigned_abs() <= n as u128,
        }
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tolerance::Exact => f.write_str("exact"),
            Tolerance::Close { abs, rel } => match (*abs > 0.0, *rel > 0.0) {
                (true, true) => write!(f, "abs:{abs},rel:{rel}"),
                (false, true) => write!(f, "rel:{rel}"),
                _ => write!(f, "abs:{abs}"),
            },
            Tolerance::Ulp(n) => write!(f, "ulp:{n}"),
        }
    }
}

impl<'de> Deserialize<'de> for Tolerance {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Tolerance::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// One dispatch, described as data (see the [module](self) documentation).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LaunchSpec {
    /// A name to tell launches apart in reports (default: `launch N`).
    #[serde(default)]
    pub name: Option<String>,
    /// The kernel symbol to launch, when the code object holds several
    /// (HIP's `hipModuleGetFunction` name).
    #[serde(default)]
    pub kernel: Option<String>,
    /// Workgroups in X, Y, Z (HIP's grid).
    pub grid: Dims,
    /// Work-items per workgroup in X, Y, Z (HIP's block).
    pub block: Dims,
    /// gfx1250's workgroup cluster in X, Y, Z (HIP's
    /// `hipLaunchAttributeClusterDimension`; `cluster = [4, 1, 1]`).
    /// `None`: the kernel's `.cluster_dims`
    /// ([`crate::dispatch::Launch::cluster`]).
    #[serde(default)]
    pub cluster: Option<Dims>,
    /// The explicit kernel arguments: an array (in metadata order), or a
    /// table by metadata name ([`Args`]).
    #[serde(default)]
    pub args: Args,
    /// Fill every by-value argument `args` does not give with zeros
    /// ([`bind_by_name`]); pointers are always given.
    #[serde(default)]
    pub zero_rest: bool,
    /// The seed of random arguments that give none: argument `i` uses
    /// `seed + i` (default 0).
    #[serde(default)]
    pub seed: u64,
    /// How closely two runs' float outputs must agree (default exact).
    #[serde(default)]
    pub tolerance: Tolerance,
    /// The sanitizer's checks for this launch under `gcn-patch test`
    /// (`"races,waits"`, …; default: [`crate::sanitize::Checks::DEFAULT`]).
    #[serde(default)]
    pub sanitize: Option<crate::sanitize::Checks>,
    /// Dynamic LDS bytes per workgroup, beyond the descriptor's static LDS
    /// (HIP's `sharedMemBytes`; Triton launches with its kernel's `shared`).
    /// `None`: not given (gcn-patch then uses the Triton `shared` its
    /// manifest records, else 0).
    #[serde(default)]
    pub dynamic_lds: Option<u32>,
    /// Perturb the results of approximate instructions within their
    /// documented bounds with this seed ([`crate::approx`],
    /// [`crate::dispatch::Launch::perturb_approx`]); default: correctly
    /// rounded.
    #[serde(default)]
    pub perturb_approx: Option<u64>,
}

/// A launch's `args`: an array of specs, in metadata order
/// (`args = [{ … }, { … }]`), or a table of specs by the arguments'
/// metadata names (`args = { A = { … }, alpha = { … } }`, or a
/// `[kernel.launch.args]` table), where a name that several arguments have
/// takes an array (`pad = [{ … }, { … }]`, the k-th for the k-th argument of
/// that name). Both bind through [`bind_by_name`]; in the table form the
/// order of different names does not matter.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Args {
    /// The array form's specs, in order.
    pub positional: Vec<ArgSpec>,
    /// The table form's specs, a repeated name's in order.
    pub named: Vec<(String, ArgSpec)>,
}

impl Args {
    /// Positional specs only.
    pub fn positional(specs: Vec<ArgSpec>) -> Self {
        Args {
            positional: specs,
            named: Vec::new(),
        }
    }

    /// How many specs are given.
    pub fn len(&self) -> usize {
        self.positional.len() + self.named.len()
    }

    /// Whether none is given.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct ArgsVisitor;
        impl<'de> serde::de::Visitor<'de> for ArgsVisitor {
            type Value = Args;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of arguments in metadata order, or a table of them by name")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Args, A::Error> {
                let mut specs = Vec::new();
                while let Some(spec) = seq.next_element::<ArgSpec>()? {
                    specs.push(spec);
                }
                Ok(Args::positional(specs))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Args, A::Error> {
                let mut named = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    let OneOrMany(specs) = map.next_value()?;
                    named.extend(specs.into_iter().map(|s| (name.clone(), s)));
                }
                Ok(Args {
                    positional: Vec::new(),
                    named,
                })
            }
        }
        d.deserialize_any(ArgsVisitor)
    }
}

/// One spec (a table) or several (an array of tables) for a name.
struct OneOrMany(Vec<ArgSpec>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an argument (`{ random = … }`, `{ output = … }`, `{ scalar = … }`, `{ null = true }`) or an array of them for a repeated name")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<OneOrMany, A::Error> {
                let mut specs = Vec::new();
                while let Some(spec) = seq.next_element::<ArgSpec>()? {
                    specs.push(spec);
                }
                Ok(OneOrMany(specs))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<OneOrMany, A::Error> {
                let spec = ArgSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(OneOrMany(vec![spec]))
            }
        }
        d.deserialize_any(V)
    }
}

/// SplitMix64: a 64-bit state advanced by the golden gamma and mixed; the
/// generator of the launch's random inputs (see the module documentation).
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The bytes of `count` random elements of `dtype` from `seed`: floats
/// uniform in `[lo, hi)` rounded to the dtype, integers uniform in
/// `[lo, hi]` (by a 128-bit multiply, no modulo bias).
pub fn random_bytes(dtype: Dtype, count: usize, seed: u64, range: (f64, f64)) -> Vec<u8> {
    let mut g = SplitMix64(seed);
    let mut out = Vec::with_capacity(count * dtype.size());
    let (lo, hi) = range;
    for _ in 0..count {
        if dtype.is_float() {
            let v = lo + g.next_f64() * (hi - lo);
            out.extend(dtype.from_f64(v.min(hi)));
        } else {
            let (lo, hi) = (lo as i128, hi as i128);
            let span = (hi - lo + 1) as u128;
            let v = lo + ((g.next_u64() as u128 * span) >> 64) as i128;
            out.extend_from_slice(&(v as u64).to_le_bytes()[..dtype.size()]);
        }
    }
    out
}

/// One buffer argument of a prepared launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    /// The explicit argument's index.
    pub index: usize,
    /// The argument's name in the metadata, when it has one.
    pub name: Option<String>,
    /// Element type.
    pub dtype: Dtype,
    /// Shape.
    pub shape: Vec<usize>,
    /// The allocation's address.
    pub addr: u64,
}

/// A launch made concrete for one kernel: its argument values and buffers,
/// allocated in a [`Memory`].
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The explicit arguments, ready for [`crate::dispatch::run`].
    pub values: Vec<ArgValue>,
    /// The buffers, in argument order.
    pub buffers: Vec<Buffer>,
}

/// The bytes of a launch's buffers before the run, in argument order (what
/// a HIP runner would copy to the device): random inputs from their seeds,
/// outputs poisoned.
///
/// Of a bound launch ([`LaunchSpec::bind`]), where every argument is in
/// `args.positional` in metadata order; of an unbound one, the positional
/// specs only.
pub fn materialize(spec: &LaunchSpec) -> Vec<(usize, Vec<u8>)> {
    spec.args
        .positional
        .iter()
        .enumerate()
        .filter_map(|(i, a)| Some((i, a.initial_bytes(i, spec.seed)?)))
        .collect()
}

fn describe(i: usize, a: &Arg) -> String {
    let name = a
        .name
        .as_deref()
        .map(|n| format!(" `{n}`"))
        .unwrap_or_default();
    format!("argument {i}{name} ({}, {} bytes)", a.value_kind, a.size)
}

/// Whether explicit argument `a` takes a pointer (a buffer or null) rather
/// than a value.
pub fn takes_pointer(a: &Arg) -> bool {
    a.is_pointer() || a.address_space.is_some() && a.value_kind != "by_value"
}

/// What [`bind_by_name`] gives one explicit argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound<T> {
    /// The spec given for it, by name or by position.
    Given(T),
    /// Nothing was given and it takes a value: `size` zero bytes
    /// (`--zero-rest`, `zero-rest = true`).
    Zero {
        /// The argument's size in bytes.
        size: usize,
    },
}

/// Why the arguments given do not bind to a kernel's explicit arguments
/// ([`bind_by_name`]). Its text names the arguments by index, name, kind
/// and size; callers add how to write the fix in their own syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindError {
    /// No explicit argument has this name.
    UnknownName {
        /// The name given.
        name: String,
        /// The closest name the kernel has, when one is close.
        suggestion: Option<String>,
        /// The kernel's argument names, in order, a repeated one once with
        /// its count (`pad ×61`).
        names: Vec<String>,
    },
    /// A name given more times than the kernel has arguments of that name.
    TooManyOfName {
        /// The name.
        name: String,
        /// How many times it was given.
        given: usize,
        /// How many arguments have it.
        takes: usize,
    },
    /// More positional specs than arguments left after the named ones.
    TooManyPositional {
        /// Positional specs given.
        given: usize,
        /// Arguments left for them.
        left: usize,
        /// The kernel's explicit arguments, described.
        arguments: Vec<String>,
    },
    /// Arguments nothing was given for (and not zero-filled).
    Missing {
        /// The arguments, described with kind and size, a name missing more
        /// than once as one entry with its count and indices.
        missing: Vec<String>,
        /// Whether any of them takes a value (`zero-rest` would fill those).
        values: bool,
        /// Whether any of them is a pointer (never zero-filled).
        pointers: bool,
    },
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindError::UnknownName {
                name,
                suggestion,
                names,
            } => {
                write!(f, "no explicit argument is named `{name}`")?;
                if let Some(s) = suggestion {
                    write!(f, "; did you mean `{s}`?")?;
                }
                if names.is_empty() {
                    write!(f, " (the metadata names none of the kernel's arguments: give them by position)")
                } else {
                    write!(f, " (its arguments: {})", names.join(", "))
                }
            }
            BindError::TooManyOfName { name, given, takes } => write!(
                f,
                "`{name}` is given {given} times; the kernel has {takes} argument(s) of that name"
            ),
            BindError::TooManyPositional {
                given,
                left,
                arguments,
            } => write!(
                f,
                "{given} argument(s) given by position, {left} left for them after those given by name (its explicit arguments: {})",
                if arguments.is_empty() {
                    "none".to_string()
                } else {
                    arguments.join("; ")
                }
            ),
            BindError::Missing { missing, .. } => {
                write!(f, "arguments not given: {}", missing.join("; "))
            }
        }
    }
}

impl std::error::Error for BindError {}

/// Bind specs to `kernel`'s explicit arguments: the one shared rule of
/// `gcn-patch run --arg` and `[[kernel.launch]]` `args`.
///
/// 1. Each `named` spec `(NAME, spec)` fills the argument whose metadata
///    `.name` is NAME (or `NAME.coerce`, clang's name of a HIP pointer
///    argument); the k-th spec of a name fills the k-th argument of that
///    name (aiter's `pad`s).
/// 2. The `positional` specs then fill the arguments left, in metadata
///    order: named and positional specs may be mixed, and a positional one
///    never takes an argument given by name.
/// 3. With `zero_rest`, every by-value argument still left is
///    [`Bound::Zero`]. A pointer left is never zero-filled (a null pointer
///    is given explicitly, so that a forgotten buffer is an error, not a
///    fault far away).
///
/// Errors: an unknown name (with the nearest name, by Jaro-Winkler
/// similarity, and the list), a name given too often, too many positional
/// specs, arguments left unbound (listed with kind and size).
pub fn bind_by_name<T>(
    kernel: &Kernel,
    named: Vec<(String, T)>,
    positional: Vec<T>,
    zero_rest: bool,
) -> std::result::Result<Vec<Bound<T>>, BindError> {
    let explicit: Vec<&Arg> = kernel.args.iter().filter(|a| !a.is_hidden()).collect();
    let mut slots: Vec<Option<T>> = explicit.iter().map(|_| None).collect();
    let times = |name: &str| named.iter().filter(|(n, _)| n == name).count();
    let counts: Vec<usize> = named.iter().map(|(n, _)| times(n)).collect();
    for ((name, spec), given) in named.into_iter().zip(counts) {
        let of_name: Vec<usize> = (0..explicit.len())
            .filter(|&i| {
                explicit[i]
                    .name
                    .as_deref()
                    .is_some_and(|n| names_match(n, &name))
            })
            .collect();
        if of_name.is_empty() {
            return Err(unknown_name(&explicit, name));
        }
        match of_name.iter().find(|&&i| slots[i].is_none()) {
            Some(&i) => slots[i] = Some(spec),
            None => {
                return Err(BindError::TooManyOfName {
                    takes: of_name.len(),
                    given,
                    name,
                })
            }
        }
    }
    let left = slots.iter().filter(|s| s.is_none()).count();
    if positional.len() > left {
        return Err(BindError::TooManyPositional {
            given: positional.len(),
            left,
            arguments: explicit
                .iter()
                .enumerate()
                .map(|(i, a)| describe(i, a))
                .collect(),
        });
    }
    let mut positional = positional.into_iter();
    for slot in slots.iter_mut().filter(|s| s.is_none()) {
        match positional.next() {
            Some(spec) => *slot = Some(spec),
            None => break,
        }
    }
    let mut bound = Vec::with_capacity(slots.len());
    let mut missing: Vec<usize> = Vec::new();
    for (i, slot) in slots.into_iter().enumerate() {
        match slot {
            Some(spec) => bound.push(Bound::Given(spec)),
            None if zero_rest && !takes_pointer(explicit[i]) => bound.push(Bound::Zero {
                size: explicit[i].size as usize,
            }),
            None => {
                missing.push(i);
                bound.push(Bound::Zero { size: 0 });
            }
        }
    }
    if missing.is_empty() {
        return Ok(bound);
    }
    Err(BindError::Missing {
        values: missing.iter().any(|&i| !takes_pointer(explicit[i])),
        pointers: missing.iter().any(|&i| takes_pointer(explicit[i])),
        missing: missing_lines(&explicit, &missing),
    })
}

/// The missing arguments, one entry per argument, except that a name
/// missing more than once is one entry (`61 arguments `pad` (by_value, 4
/// or 8 bytes): 1, 3, 5, 7, 9, 10, 11, 13, …`).
fn missing_lines(explicit: &[&Arg], missing: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for &i in missing {
        let a = explicit[i];
        let Some(name) = a.name.as_deref() else {
            out.push(describe(i, a));
            continue;
        };
        if done.contains(&name) {
            continue;
        }
        done.push(name);
        let same: Vec<usize> = missing
            .iter()
            .copied()
            .filter(|&j| explicit[j].name.as_deref() == Some(name))
            .collect();
        if same.len() == 1 {
            out.push(describe(i, a));
            continue;
        }
        let mut kinds: Vec<&str> = same
            .iter()
            .map(|&j| explicit[j].value_kind.as_str())
            .collect();
        kinds.dedup();
        let mut sizes: Vec<u32> = same.iter().map(|&j| explicit[j].size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let sizes: Vec<String> = sizes.iter().map(u32::to_string).collect();
        let shown: Vec<String> = same.iter().take(8).map(usize::to_string).collect();
        out.push(format!(
            "{} arguments `{name}` ({}, {} bytes): {}{}",
            same.len(),
            kinds.join("/"),
            sizes.join(" or "),
            shown.join(", "),
            if same.len() > 8 { ", …" } else { "" }
        ));
    }
    out
}

/// Whether metadata name `meta` is `given`: equal, or `given.coerce`
/// (clang's name of a HIP pointer argument, passed coerced).
fn names_match(meta: &str, given: &str) -> bool {
    meta == given || meta.strip_suffix(".coerce") == Some(given)
}

fn unknown_name(explicit: &[&Arg], name: String) -> BindError {
    let mut names: Vec<(&str, usize)> = Vec::new();
    for n in explicit.iter().filter_map(|a| a.name.as_deref()) {
        match names.iter_mut().find(|(m, _)| *m == n) {
            Some((_, c)) => *c += 1,
            None => names.push((n, 1)),
        }
    }
    // Suggest a name as it may be given: `x` for clang's `x.coerce`.
    let suggestion = names
        .iter()
        .map(|(n, _)| n.strip_suffix(".coerce").unwrap_or(n))
        .map(|n| {
            (
                strsim::jaro_winkler(&name.to_lowercase(), &n.to_lowercase()),
                n,
            )
        })
        .filter(|(s, _)| *s >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n.to_string());
    BindError::UnknownName {
        name,
        suggestion,
        names: names
            .into_iter()
            .map(|(n, c)| {
                if c > 1 {
                    format!("{n} ×{c}")
                } else {
                    n.to_string()
                }
            })
            .collect(),
    }
}

impl LaunchSpec {
    /// The launch's name in reports: its `name`, or `launch N` (1-based).
    pub fn label(&self, n: usize) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("launch {}", n + 1))
    }

    /// This launch with its arguments bound to `kernel`'s explicit
    /// arguments by [`bind_by_name`]: `args.positional` holds one spec per
    /// explicit argument in metadata order (zero-filled ones as
    /// [`ArgSpec::Zero`]), `args.named` is empty and `zero_rest` false.
    pub fn bind(&self, kernel: &Kernel) -> Result<LaunchSpec> {
        if self.args.named.is_empty() && !self.zero_rest {
            return Ok(self.clone());
        }
        let bound = bind_by_name(
            kernel,
            self.args.named.clone(),
            self.args.positional.clone(),
            self.zero_rest,
        )
        .map_err(|e| {
            let hint = match &e {
                BindError::Missing {
                    values, pointers, ..
                } => {
                    let mut h = Vec::new();
                    if *values && !self.zero_rest {
                        h.push("`zero-rest = true` fills the by-value ones with zeros");
                    }
                    if *pointers {
                        h.push(
                            "a pointer is always given: `NAME = { null = true }` for a null one",
                        );
                    }
                    h.join("; ")
                }
                BindError::TooManyOfName { .. } => {
                    "a repeated name takes an array: `NAME = [{ … }, { … }]`".to_string()
                }
                _ => String::new(),
            };
            Error::launch(format!(
                "kernel `{}`: {e}{}",
                kernel.name,
                if hint.is_empty() {
                    String::new()
                } else {
                    format!(" ({hint})")
                }
            ))
        })?;
        let mut spec = self.clone();
        spec.args = Args::positional(
            bound
                .into_iter()
                .map(|b| match b {
                    Bound::Given(s) => s,
                    Bound::Zero { size } => ArgSpec::Zero { size },
                })
                .collect(),
        );
        spec.zero_rest = false;
        Ok(spec)
    }

    /// Check the arguments against `kernel`'s explicit arguments (binding
    /// names, count, buffer or value, sizes); the error names the argument
    /// and the fix.
    pub fn check(&self, kernel: &Kernel) -> Result<()> {
        self.bind(kernel)?.check_bound(kernel)
    }

    fn check_bound(&self, kernel: &Kernel) -> Result<()> {
        let explicit: Vec<&Arg> = kernel.args.iter().filter(|a| !a.is_hidden()).collect();
        if explicit.len() != self.args.len() {
            return Err(Error::launch(format!(
                "kernel `{}` takes {} explicit argument(s), the launch gives {}: {}",
                kernel.name,
                explicit.len(),
                self.args.len(),
                if explicit.is_empty() {
                    "it takes none".to_string()
                } else {
                    explicit
                        .iter()
                        .enumerate()
                        .map(|(i, a)| describe(i, a))
                        .collect::<Vec<_>>()
                        .join("; ")
                }
            )));
        }
        for (i, (a, spec)) in explicit.iter().zip(&self.args.positional).enumerate() {
            let pointer = takes_pointer(a);
            match spec {
                ArgSpec::Random { .. }
                | ArgSpec::Output { .. }
                | ArgSpec::Null
                | ArgSpec::Npy(_)
                    if !pointer =>
                {
                    return Err(Error::launch(format!(
                        "kernel `{}`: {} takes a value (`{{ scalar = DTYPE, value = … }}`), not a buffer or pointer",
                        kernel.name,
                        describe(i, a)
                    )))
                }
                ArgSpec::Scalar { .. } if pointer => {
                    return Err(Error::launch(format!(
                        "kernel `{}`: {} is a pointer: give `{{ random = … }}`, `{{ output = … }}` or `{{ null = true }}`",
                        kernel.name,
                        describe(i, a)
                    )))
                }
                ArgSpec::Scalar { dtype, .. } if dtype.size() != a.size as usize => {
                    return Err(Error::launch(format!(
                        "kernel `{}`: {} is {} bytes, the scalar's dtype {dtype} is {}; use a dtype of {} bytes",
                        kernel.name,
                        describe(i, a),
                        a.size,
                        dtype.size(),
                        a.size
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Allocate the buffers in `mem` (named `arg<I>`) and build the
    /// argument values, after [`LaunchSpec::check`].
    pub fn prepare(&self, kernel: &Kernel, mem: &Memory) -> Result<Prepared> {
        let bound = self.bind(kernel)?;
        bound.check_bound(kernel)?;
        let explicit: Vec<&Arg> = kernel.args.iter().filter(|a| !a.is_hidden()).collect();
        let mut bytes = materialize(&bound).into_iter();
        let mut values = Vec::new();
        let mut buffers = Vec::new();
        for (i, spec) in bound.args.positional.iter().enumerate() {
            match spec {
                ArgSpec::Random { dtype, shape, .. } | ArgSpec::Output { dtype, shape } => {
                    let (_, data) = bytes.next().unwrap_or_default();
                    let addr = mem.alloc_bytes(&format!("arg{i}"), &data);
                    buffers.push(Buffer {
                        index: i,
                        name: explicit[i].name.clone(),
                        dtype: *dtype,
                        shape: shape.0.clone(),
                        addr,
                    });
                    values.push(ArgValue::Pointer(addr));
                }
                ArgSpec::Scalar { dtype, value } => {
                    values.push(ArgValue::Bytes(
                        value.encode(*dtype).map_err(Error::launch)?,
                    ));
                }
                ArgSpec::Npy(path) => {
                    let arr = crate::npy::Array::read(path)?;
                    let dtype = Dtype::from_descr(&arr.descr).ok_or_else(|| {
                        Error::launch(format!(
                            "{}: dtype `{}` is not one of {DTYPES}",
                            path.display(),
                            arr.descr
                        ))
                    })?;
                    let addr = mem.alloc_bytes(&format!("arg{i}"), &arr.data);
                    buffers.push(Buffer {
                        index: i,
                        name: explicit[i].name.clone(),
                        dtype,
                        shape: arr.shape.clone(),
                        addr,
                    });
                    values.push(ArgValue::Pointer(addr));
                }
                ArgSpec::Null => values.push(ArgValue::Pointer(0)),
                ArgSpec::Zero { size } => values.push(ArgValue::Bytes(vec![0; *size])),
            }
        }
        Ok(Prepared { values, buffers })
    }
}

/// A buffer's contents after a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Which buffer.
    pub buffer: Buffer,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl Prepared {
    /// Read every buffer back from `mem` after the run.
    pub fn outputs(&self, mem: &Memory) -> Vec<Output> {
        self.buffers
            .iter()
            .map(|b| Output {
                buffer: b.clone(),
                data: mem.contents(b.addr).unwrap_or_default(),
            })
            .collect()
    }
}

/// One element that differs between two runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementDiff {
    /// Its index in C order, one per dimension.
    pub index: Vec<usize>,
    /// Its value in the first run, as text ([`Dtype::format`]).
    pub a: String,
    /// Its value in the second run.
    pub b: String,
    /// The first run's raw bits.
    pub a_bits: u64,
    /// The second run's raw bits.
    pub b_bits: u64,
}

/// How one buffer compares.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferDiff {
    /// The buffer (of the first run).
    pub buffer: Buffer,
    /// Its elements.
    pub elements: usize,
    /// How many differ beyond the tolerance.
    pub differing: usize,
    /// The first differing elements, at most the `limit` given to
    /// [`compare`].
    pub first: Vec<ElementDiff>,
    /// The largest absolute difference of any float element that is not
    /// bit-identical and not NaN (0 when none).
    pub max_abs: f64,
}

/// The comparison of two runs' buffers.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The tolerance applied to floats.
    pub tolerance: Tolerance,
    /// One per buffer, in argument order.
    pub buffers: Vec<BufferDiff>,
}

impl Comparison {
    /// Whether every element of every buffer agrees.
    pub fn equal(&self) -> bool {
        self.buffers.iter().all(|b| b.differing == 0)
    }
}

/// Compare two runs' buffers of the same launch element by element: bit for
/// bit for integers and under `tolerance` for floats, keeping the first
/// `limit` differing elements of each buffer. Buffers must be the same
/// launch's (same order, dtypes and sizes); a mismatch is an error.
pub fn compare(
    a: &[Output],
    b: &[Output],
    tolerance: Tolerance,
    limit: usize,
) -> Result<Comparison> {
    if a.len() != b.len() {
        return Err(Error::launch(format!(
            "the runs have {} and {} buffers; compare runs of the same launch",
            a.len(),
            b.len()
        )));
    }
    let mut buffers = Vec::new();
    for (x, y) in a.iter().zip(b) {
        let d = x.buffer.dtype;
        if x.buffer.index != y.buffer.index || d != y.buffer.dtype || x.data.len() != y.data.len() {
            return Err(Error::launch(format!(
                "buffer of argument {} ({d}, {} bytes) and of argument {} ({}, {} bytes) differ in kind; compare runs of the same launch",
                x.buffer.index,
                x.data.len(),
                y.buffer.index,
                y.buffer.dtype,
                y.data.len()
            )));
        }
        let size = d.size();
        let n = x.data.len() / size;
        let mut diff = BufferDiff {
            buffer: x.buffer.clone(),
            elements: n,
            differing: 0,
            first: Vec::new(),
            max_abs: 0.0,
        };
        for (e, (p, q)) in x
            .data
            .chunks_exact(size)
            .zip(y.data.chunks_exact(size))
            .enumerate()
        {
            if p == q {
                continue;
            }
            if let (Some(u), Some(v)) = (d.float(p), d.float(q)) {
                let delta = (u - v).abs();
                if delta.is_finite() {
                    diff.max_abs = diff.max_abs.max(delta);
                }
                if tolerance.agrees(d, p, q) {
                    continue;
                }
            }
            diff.differing += 1;
            if diff.first.len() < limit {
                diff.first.push(ElementDiff {
                    index: unravel(e, &x.buffer.shape),
                    a: d.format(p),
                    b: d.format(q),
                    a_bits: d.bits(p),
                    b_bits: d.bits(q),
                });
            }
        }
        buffers.push(diff);
    }
    Ok(Comparison { tolerance, buffers })
}

/// The C-order index of flat element `e` of `shape`.
fn unravel(mut e: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len().max(1)];
    for (k, &dim) in shape.iter().enumerate().rev() {
        if dim > 0 {
            idx[k] = e % dim;
            e /= dim;
        }
    }
    idx
}

impl fmt::Display for ElementDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let idx: Vec<String> = self.index.iter().map(|i| i.to_string()).collect();
        write!(
            f,
            "[{}]: {} vs {} (bits {:#x} vs {:#x})",
            idx.join(", "),
            self.a,
            self.b,
            self.a_bits,
            self.b_bits
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> std::result::Result<LaunchSpec, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn splitmix64_gives_the_published_sequence() {
        // The reference output of Vigna's splitmix64.c for seed 1234567.
        let mut g = SplitMix64(1234567);
        let got: Vec<u64> = (0..5).map(|_| g.next_u64()).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
    }

    #[test]
    fn a_launch_reads_from_toml_with_every_kind_of_argument() {
        let s = spec(
            r#"
            name = "small"
            grid = 4
            block = [64, 2]
            seed = 9
            tolerance = "abs:1e-3,rel:1e-5"
            args = [
              { scalar = "f32", value = 2 },
              { random = "f16", shape = [8, 8], range = [-2, 2] },
              { random = "i32", shape = 5, seed = 3 },
              { output = "bf16", shape = 100 },
              { scalar = "u32", value = "0x10" },
              { null = true },
            ]
            "#,
        )
        .unwrap();
        assert_eq!(s.grid, Dims([4, 1, 1]));
        assert_eq!(s.block, Dims([64, 2, 1]));
        assert_eq!(
            s.tolerance,
            Tolerance::Close {
                abs: 1e-3,
                rel: 1e-5
            }
        );
        assert_eq!(s.args.positional.len(), 6);
        assert_eq!(
            s.args.positional[1],
            ArgSpec::Random {
                dtype: Dtype::F16,
                shape: Shape(vec![8, 8]),
                seed: None,
                range: Some((-2.0, 2.0))
            }
        );
        assert_eq!(s.args.positional[5], ArgSpec::Null);
        assert_eq!(
            ArgSpec::Scalar {
                dtype: Dtype::U32,
                value: Scalar::Text("0x10".into())
            },
            s.args.positional[4]
        );
        let m = materialize(&s);
        assert_eq!(
            m.iter().map(|(i, b)| (*i, b.len())).collect::<Vec<_>>(),
            [(1, 128), (2, 20), (3, 200)]
        );
        assert!(m[2].1.iter().all(|&b| b == POISON));
    }

    #[test]
    fn bad_launches_say_what_is_wrong() {
        let cases = [
            ("grid = 0\nblock = 1", "not a positive"),
            ("grid = [1, 2, 3, 4]\nblock = 1", "1 to 3 dimensions"),
            ("grid = 1\nblock = 1\nwarps = 4", "unknown field `warps`"),
            (
                "grid = 1\nblock = 1\nargs = [{ random = \"f33\", shape = 4 }]",
                "unknown dtype `f33`",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ random = \"f32\" }]",
                "needs `shape`",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ output = \"f32\", shape = 4, seed = 1 }]",
                "`seed` does not belong",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ random = \"f32\", output = \"f32\", shape = 4 }]",
                "exactly one of",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ random = \"u8\", shape = 4, range = [0, 300] }]",
                "does not fit u8",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ random = \"f32\", shape = 4, range = [1, 1] }]",
                "the first below",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ scalar = \"u8\", value = 256 }]",
                "256 does not fit u8",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ scalar = \"i32\", value = 0.5 }]",
                "not an integer",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ output = \"f64\", shape = [65536, 65536, 65536] }]",
                "16 GiB",
            ),
            (
                "grid = 1\nblock = 1\nargs = [{ null = false }]",
                "null = true",
            ),
            (
                "grid = 1\nblock = 1\ntolerance = \"abs:-1\"",
                "non-negative",
            ),
            (
                "grid = 1\nblock = 1\ntolerance = \"ulps:2\"",
                "expected `exact`",
            ),
        ];
        for (text, want) in cases {
            let e = spec(text).unwrap_err();
            assert!(e.contains(want), "{text}\n---\n{e}\n--- wanted: {want}");
        }
    }

    #[test]
    fn random_inputs_are_deterministic_in_range_and_seed_dependent() {
        let a = random_bytes(Dtype::F32, 1000, 5, (-1.0, 1.0));
        assert_eq!(a, random_bytes(Dtype::F32, 1000, 5, (-1.0, 1.0)));
        assert_ne!(a, random_bytes(Dtype::F32, 1000, 6, (-1.0, 1.0)));
        let f: Vec<f32> = a
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert!(f.iter().all(|&v| (-1.0..1.0).contains(&v)));
        assert!(f.iter().any(|&v| v < -0.9) && f.iter().any(|&v| v > 0.9));
        // The first element, pinned: a seed means these bytes forever.
        let first = (SplitMix64(5).next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        assert_eq!(f[0], first as f32);
        let i = random_bytes(Dtype::I8, 4000, 1, (-3.0, 3.0));
        let mut seen = [false; 7];
        for &b in &i {
            let v = b as i8;
            assert!((-3..=3).contains(&v));
            seen[(v + 3) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "both bounds are reachable");
        let h = random_bytes(Dtype::F16, 100, 1, (-2.0, 2.0));
        assert!(h
            .chunks(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
            .all(|v| (-2.0..=2.0).contains(&v)));
    }

    fn out(index: usize, dtype: Dtype, shape: Vec<usize>, data: Vec<u8>) -> Output {
        Output {
            buffer: Buffer {
                index,
                name: None,
                dtype,
                shape,
                addr: 0,
            },
            data,
        }
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn compare_reports_the_first_differing_elements_with_their_index() {
        let a = [
            out(
                0,
                Dtype::F32,
                vec![2, 3],
                f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            ),
            out(2, Dtype::I32, vec![2], vec![1, 0, 0, 0, 2, 0, 0, 0]),
        ];
        let b = [
            out(
                0,
                Dtype::F32,
                vec![2, 3],
                f32s(&[1.0, 2.5, 3.0, 4.0, 5.0, 7.0]),
            ),
            out(2, Dtype::I32, vec![2], vec![1, 0, 0, 0, 3, 0, 0, 0]),
        ];
        let c = compare(&a, &b, Tolerance::Exact, 1).unwrap();
        assert!(!c.equal());
        assert_eq!(c.buffers[0].differing, 2);
        assert_eq!(c.buffers[0].first.len(), 1);
        assert_eq!(
            c.buffers[0].first[0].to_string(),
            "[0, 1]: 2.0 vs 2.5 (bits 0x40000000 vs 0x40200000)"
        );
        assert_eq!(c.buffers[0].max_abs, 1.0);
        assert_eq!(
            c.buffers[1].first[0].to_string(),
            "[1]: 2 vs 3 (bits 0x2 vs 0x3)"
        );
        let c = compare(&a, &a, Tolerance::Exact, 5).unwrap();
        assert!(c.equal());
        // The tolerance applies to floats only.
        let c = compare(&a, &b, Tolerance::Close { abs: 1.0, rel: 0.0 }, 5).unwrap();
        assert_eq!(c.buffers[0].differing, 0);
        assert_eq!(c.buffers[1].differing, 1);
        // Mismatched runs are an error.
        assert!(compare(&a, &b[..1], Tolerance::Exact, 5).is_err());
    }

    #[test]
    fn tolerances_abs_rel_ulp_and_nan() {
        let one = 1.0f32.to_le_bytes();
        let next = f32::from_bits(1.0f32.to_bits() + 1).to_le_bytes();
        let two_up = f32::from_bits(1.0f32.to_bits() + 2).to_le_bytes();
        let d = Dtype::F32;
        assert!(!Tolerance::Exact.agrees(d, &one, &next));
        assert!(Tolerance::Ulp(1).agrees(d, &one, &next));
        assert!(!Tolerance::Ulp(1).agrees(d, &one, &two_up));
        let (pz, nz) = (0.0f32.to_le_bytes(), (-0.0f32).to_le_bytes());
        assert!(!Tolerance::Exact.agrees(d, &pz, &nz));
        assert!(Tolerance::Ulp(0).agrees(d, &pz, &nz));
        let tiny_neg = (-f32::from_bits(1)).to_le_bytes();
        let tiny_pos = f32::from_bits(1).to_le_bytes();
        assert!(Tolerance::Ulp(2).agrees(d, &tiny_neg, &tiny_pos));
        assert!(!Tolerance::Ulp(1).agrees(d, &tiny_neg, &tiny_pos));
        let rel = Tolerance::parse("rel:1e-3").unwrap();
        assert!(rel.agrees(d, &1000.0f32.to_le_bytes(), &1000.5f32.to_le_bytes()));
        assert!(!rel.agrees(d, &1.0f32.to_le_bytes(), &1.5f32.to_le_bytes()));
        let nan1 = f32::from_bits(0x7fc0_0000).to_le_bytes();
        let nan2 = f32::from_bits(0x7fc0_0001).to_le_bytes();
        assert!(!Tolerance::Exact.agrees(d, &nan1, &nan2));
        assert!(rel.agrees(d, &nan1, &nan2));
        assert!(!rel.agrees(d, &nan1, &one));
        let inf = f32::INFINITY.to_le_bytes();
        assert!(!Tolerance::parse("abs:1e30")
            .unwrap()
            .agrees(d, &inf, &f32::MAX.to_le_bytes()));
        // bf16: one ulp at 1.0 is 2^-7.
        let b1 = half::bf16::from_f32(1.0).to_le_bytes();
        let b2 = half::bf16::from_bits(half::bf16::from_f32(1.0).to_bits() + 1).to_le_bytes();
        assert!(Tolerance::Ulp(1).agrees(Dtype::Bf16, &b1, &b2));
        assert_eq!(
            Tolerance::parse("abs:0.5,rel:0.1").unwrap().to_string(),
            "abs:0.5,rel:0.1"
        );
        assert_eq!(Tolerance::parse("ulp:3").unwrap(), Tolerance::Ulp(3));
        assert!(Tolerance::parse("abs:1,abs:2")
            .unwrap_err()
            .contains("twice"));
    }

    /// A kernel shaped like aiter's bf16 GEMM: named pointers and values
    /// with `pad`s between them, one unnamed argument, one hidden one.
    fn gemm_like() -> Kernel {
        let arg = |name: Option<&str>, size: u32, kind: &str| Arg {
            name: name.map(str::to_string),
            offset: 0,
            size,
            value_kind: kind.to_string(),
            address_space: (kind == "global_buffer").then(|| "global".to_string()),
            type_name: None,
        };
        Kernel {
            name: "gemm".into(),
            descriptor: Default::default(),
            args: vec![
                arg(Some("D"), 8, "global_buffer"),
                arg(Some("pad"), 8, "by_value"),
                arg(Some("A"), 8, "global_buffer"),
                arg(Some("pad"), 8, "by_value"),
                arg(Some("alpha"), 4, "by_value"),
                arg(Some("pad"), 4, "by_value"),
                arg(None, 4, "by_value"),
                arg(Some("Bias"), 8, "global_buffer"),
                arg(None, 8, "hidden_block_count_x"),
            ],
            kernarg_size: 0,
            kernarg_align: 8,
            wavefront_size: 64,
            cluster_dims: [0; 3],
            entry: 0,
            code_end: 0,
        }
    }

    fn named(list: &[(&str, u32)]) -> Vec<(String, u32)> {
        list.iter().map(|(n, v)| (n.to_string(), *v)).collect()
    }

    #[test]
    fn names_bind_first_then_positions_fill_the_rest_in_order() {
        let k = gemm_like();
        // A repeated name takes the next argument of that name; positional
        // specs fill what is left, in metadata order, whatever their place.
        let b = bind_by_name(
            &k,
            named(&[("alpha", 10), ("pad", 11), ("pad", 12), ("D", 13)]),
            vec![20, 21, 22, 23],
            false,
        )
        .unwrap();
        use Bound::Given as G;
        assert_eq!(b, [G(13), G(11), G(20), G(12), G(10), G(21), G(22), G(23)]);
        // Zero-rest fills by-value arguments only; the pointers not given
        // are listed, with kind and size.
        let e = bind_by_name(&k, named(&[("A", 1)]), vec![], true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "arguments not given: argument 0 `D` (global_buffer, 8 bytes); argument 7 `Bias` (global_buffer, 8 bytes)"
        );
        assert!(matches!(
            e,
            BindError::Missing {
                values: false,
                pointers: true,
                ..
            }
        ));
        let b = bind_by_name(&k, named(&[("A", 1), ("D", 2), ("Bias", 3)]), vec![], true).unwrap();
        assert_eq!(
            b,
            [
                G(2),
                Bound::Zero { size: 8 },
                G(1),
                Bound::Zero { size: 8 },
                Bound::Zero { size: 4 },
                Bound::Zero { size: 4 },
                Bound::Zero { size: 4 },
                G(3)
            ]
        );
        // Without zero-rest, a repeated name missing is one entry.
        let e = bind_by_name(
            &k,
            named(&[("A", 1), ("D", 2), ("Bias", 3), ("alpha", 4)]),
            vec![],
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "arguments not given: 3 arguments `pad` (by_value, 4 or 8 bytes): 1, 3, 5; argument 6 (by_value, 4 bytes)"
        );
        assert!(matches!(
            e,
            BindError::Missing {
                values: true,
                pointers: false,
                ..
            }
        ));
    }

    #[test]
    fn binding_errors_name_the_argument() {
        let k = gemm_like();
        let e = bind_by_name(&k, named(&[("alhpa", 1)]), vec![], true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no explicit argument is named `alhpa`; did you mean `alpha`? (its arguments: D, pad ×3, A, alpha, Bias)"
        );
        let e = bind_by_name(&k, named(&[("zzz", 1)]), vec![], true).unwrap_err();
        assert!(
            matches!(
                e,
                BindError::UnknownName {
                    suggestion: None,
                    ..
                }
            ),
            "{e}"
        );
        let e = bind_by_name(&k, named(&[("pad", 1); 4]), vec![], true).unwrap_err();
        assert_eq!(
            e,
            BindError::TooManyOfName {
                name: "pad".into(),
                given: 4,
                takes: 3
            }
        );
        let e = bind_by_name(&k, named(&[("D", 1)]), vec![0; 8], false).unwrap_err();
        assert!(
            matches!(
                e,
                BindError::TooManyPositional {
                    given: 8,
                    left: 7,
                    ..
                }
            ),
            "{e}"
        );
        // Hidden arguments are never bound.
        assert_eq!(
            bind_by_name(&k, vec![], vec![0u32; 8], false)
                .unwrap()
                .len(),
            8
        );
    }

    #[test]
    fn a_launch_takes_its_arguments_by_name_in_toml() {
        let k = gemm_like();
        let s = spec(
            r#"
            grid = 1
            block = 64
            zero-rest = true
            [args]
            D = { output = "f32", shape = 4 }
            A = { random = "f32", shape = 4 }
            Bias = { null = true }
            alpha = { scalar = "f32", value = 2 }
            pad = [{ scalar = "u64", value = 7 }, { scalar = "u64", value = 8 }]
            "#,
        )
        .unwrap();
        assert!(s.zero_rest);
        assert_eq!(s.args.named.len(), 6);
        let b = s.bind(&k).unwrap();
        assert!(b.args.named.is_empty() && !b.zero_rest);
        assert_eq!(b.args.positional.len(), 8);
        let given = |n: &str| s.args.named.iter().find(|(m, _)| m == n).unwrap().1.clone();
        assert_eq!(b.args.positional[0], given("D"));
        assert_eq!(b.args.positional[2], given("A"));
        assert_eq!(
            b.args.positional[3],
            ArgSpec::Scalar {
                dtype: Dtype::U64,
                value: Scalar::Int(8)
            }
        );
        assert_eq!(b.args.positional[5], ArgSpec::Zero { size: 4 });
        assert_eq!(b.args.positional[7], ArgSpec::Null);
        let mem = Memory::new();
        let p = s.prepare(&k, &mem).unwrap();
        assert_eq!(p.values.len(), 8);
        assert_eq!(p.values[6], ArgValue::Bytes(vec![0; 4]));
        assert_eq!(
            p.buffers
                .iter()
                .map(|b| (b.index, b.name.as_deref()))
                .collect::<Vec<_>>(),
            [(0, Some("D")), (2, Some("A"))]
        );
        // The random input's seed is its metadata index, as in the array form.
        assert_eq!(
            materialize(&b)[1].1,
            random_bytes(Dtype::F32, 4, 2, (-1.0, 1.0))
        );
        // Errors carry the TOML way to fix them.
        let s =
            spec("grid = 1\nblock = 64\nargs = { A = { random = \"f32\", shape = 4 } }").unwrap();
        let e = s.check(&k).unwrap_err().to_string();
        assert!(e.contains("kernel `gemm`: arguments not given"), "{e}");
        assert!(
            e.contains("`zero-rest = true`") && e.contains("{ null = true }"),
            "{e}"
        );
        let s = spec("grid = 1\nblock = 64\nargs = { pad = { scalar = \"u32\", value = 1 }, Alpha = { scalar = \"f32\", value = 1 } }\nzero-rest = true")
            .unwrap();
        let e = s.check(&k).unwrap_err().to_string();
        assert!(e.contains("did you mean `alpha`"), "{e}");
        // A by-name spec is checked like a positional one (pointer or value, size).
        let s = spec("grid = 1\nblock = 64\nzero-rest = true\nargs = { D = { null = true }, A = { null = true }, Bias = { null = true }, alpha = { scalar = \"f64\", value = 1 } }")
            .unwrap();
        let e = s.check(&k).unwrap_err().to_string();
        assert!(
            e.contains("argument 4 `alpha` (by_value, 4 bytes) is 4 bytes"),
            "{e}"
        );
        // Bad values in the table form say what is wrong, as in the array form.
        let e = spec("grid = 1\nblock = 1\nargs = { x = { random = \"f32\" } }").unwrap_err();
        assert!(e.contains("needs `shape`"), "{e}");
        let e = spec("grid = 1\nblock = 1\nargs = { x = 3 }").unwrap_err();
        assert!(e.contains("an argument"), "{e}");
    }

    /// The one `ArgSpec` reads the command line's forms too (`gcn-patch run
    /// --arg`), prints them back as written, and a `.npy` buffer is read
    /// when the launch is prepared, its dtype and shape kept.
    #[test]
    fn command_line_specs_parse_print_and_prepare() {
        for text in ["x.npy", "out:f32:16", "u32:4", "f32:1.5", "u64:0", "i8:-3"] {
            assert_eq!(ArgSpec::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            ArgSpec::parse("out:bf16:3").unwrap(),
            ArgSpec::Output {
                dtype: Dtype::Bf16,
                shape: Shape(vec![3])
            }
        );
        for (bad, says) in [
            ("f33:1", "unknown DTYPE `f33`"),
            ("out:f32", "COUNT missing"),
            ("u8:300", "`u8:300`"),
            ("nothing", "expected PATH.npy"),
        ] {
            let e = ArgSpec::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let dir = std::env::temp_dir().join(format!("gcn-emu-argspec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.npy");
        let mut array =
            crate::npy::Array::new("<i4", (0..6i32).flat_map(i32::to_le_bytes).collect());
        array.shape = vec![2, 3];
        array.write(&path).unwrap();
        let mut k = gemm_like();
        k.args.truncate(1);
        let launch = LaunchSpec {
            args: Args::positional(vec![ArgSpec::Npy(path.clone())]),
            ..spec("grid = 1\nblock = 64\nargs = []").unwrap()
        };
        let mem = Memory::new();
        let p = launch.prepare(&k, &mem).unwrap();
        assert_eq!(
            (p.buffers[0].dtype, p.buffers[0].shape.clone()),
            (Dtype::I32, vec![2, 3])
        );
        assert_eq!(mem.contents(p.buffers[0].addr).unwrap(), array.data);
        let _ = std::fs::remove_dir_all(&dir);
        // A `.npy` for a by-value argument is refused, as other buffers are.
        let mut k = gemm_like();
        k.args = vec![k.args[1].clone()];
        let e = launch.check(&k).unwrap_err().to_string();
        assert!(e.contains("takes a value"), "{e}");
    }

    #[test]
    fn unravel_is_c_order() {
        assert_eq!(unravel(5, &[2, 3]), [1, 2]);
        assert_eq!(unravel(7, &[2, 2, 2]), [1, 1, 1]);
        assert_eq!(unravel(3, &[4]), [3]);
    }
}
