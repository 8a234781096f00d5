//! A small reader and writer of NumPy's `.npy` format (versions 1.0–3.0,
//! little-endian or byte-sized element types, C order).
//!
//! The format: the magic `\x93NUMPY`, a major and a minor version byte, the
//! header length (u16 for version 1, u32 for 2 and 3), an ASCII Python dict
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }` padded with
//! spaces and ended by `\n` so that the data starts on a 64-byte boundary,
//! then the data. NumPy has no bfloat16: the emulator writes bf16 data as
//! `<u2` (the raw bits).

use std::path::Path;

use crate::{Error, Result};

/// An array read from or to be written to a `.npy` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Array {
    /// The NumPy type string, e.g. `<f4`, `|u1`.
    pub descr: String,
    /// The shape (C order).
    pub shape: Vec<usize>,
    /// The element data, little-endian.
    pub data: Vec<u8>,
}

/// Size in bytes of an element of a supported `descr`, or `None`.
pub fn descr_size(descr: &str) -> Option<usize> {
    Some(match descr {
        "|b1" | "|i1" | "|u1" | "<i1" | "<u1" => 1,
        "<i2" | "<u2" | "<f2" => 2,
        "<i4" | "<u4" | "<f4" => 4,
        "<i8" | "<u8" | "<f8" => 8,
        _ => return None,
    })
}

impl Array {
    /// A one-dimensional array.
    pub fn new(descr: &str, data: Vec<u8>) -> Self {
        let n = data.len() / descr_size(descr).unwrap_or(1);
        Array {
            descr: descr.to_string(),
            shape: vec![n],
            data,
        }
    }

    /// Read a `.npy` file.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&bytes).map_err(|what| Error::Npy {
            path: path.display().to_string(),
            what,
        })
    }

    /// Parse the bytes of a `.npy` file.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Self, String> {
        if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
            return Err("not a .npy file (no \\x93NUMPY magic)".into());
        }
        let major = bytes[6];
        let (hlen, start) = match major {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 if bytes.len() >= 12 => (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            ),
            _ => {
                return Err(format!(
                    ".npy version {major} is not supported (1, 2, 3 are)"
                ))
            }
        };
        let header = bytes
            .get(start..start + hlen)
            .ok_or("the .npy header is cut short")?;
        let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
        let descr = dict_value(header, "descr").ok_or("the .npy header has no 'descr'")?;
        let descr = descr.trim_matches(|c| c == '\'' || c == '"').to_string();
        let size = descr_size(&descr).ok_or_else(|| {
            format!("element type '{descr}' is not supported (little-endian integers and floats of 1, 2, 4, 8 bytes are)")
        })?;
        let fortran =
            dict_value(header, "fortran_order").ok_or("the .npy header has no 'fortran_order'")?;
        let shape_text = dict_value(header, "shape").ok_or("the .npy header has no 'shape'")?;
        let shape: Vec<usize> = shape_text
            .trim_matches(|c| c == '(' || c == ')')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<usize>()
                    .map_err(|_| format!("bad shape {shape_text}"))
            })
            .collect::<std::result::Result<_, _>>()?;
        if fortran.trim() == "True" && shape.len() > 1 {
            return Err(
                "Fortran-order arrays are not supported; save with np.ascontiguousarray".into(),
            );
        }
        // The product in 128 bits: a hostile shape must not wrap to a size
        // that matches the data.
        let need = shape
            .iter()
            .try_fold(size as u128, |n, &d| n.checked_mul(d as u128));
        let data = &bytes[start + hlen..];
        if need != Some(data.len() as u128) {
            return Err(format!(
                "the data holds {} bytes, but shape {:?} of '{descr}' needs {}",
                data.len(),
                shape,
                need.map_or_else(|| "more than 2^128".to_string(), |n| n.to_string())
            ));
        }
        Ok(Array {
            descr,
            shape,
            data: data.to_vec(),
        })
    }

    /// The bytes of a version 1.0 `.npy` file holding this array.
    pub fn to_bytes(&self) -> Vec<u8> {
        let shape = match self.shape.len() {
            1 => format!("({},)", self.shape[0]),
            _ => format!(
                "({})",
                self.shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
            self.descr, shape
        );
        let total = 10 + header.len() + 1;
        header.push_str(&" ".repeat((64 - total % 64) % 64));
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.data);
        out
    }

    /// Write a version 1.0 `.npy` file.
    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_bytes()).map_err(|source| Error::Io {
            action: "write",
            path: path.to_path_buf(),
            source,
        })
    }
}

/// The text of a key's value in the header dict (up to the next top-level comma).
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let k = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = &header[k + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_descr_shape_and_data_aligned_to_64() {
        let a = Array {
            descr: "<f4".into(),
            shape: vec![2, 3],
            data: (0..24).collect(),
        };
        let bytes = a.to_bytes();
        let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        assert_eq!(Array::parse(&bytes).unwrap(), a);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        assert!(Array::parse(b"hello").unwrap_err().contains("magic"));
        let mut a = Array::new("<u4", vec![0; 8]).to_bytes();
        a.pop();
        assert!(Array::parse(&a).unwrap_err().contains("needs 8"));
        let b = Array::new(">f4", vec![0; 8]).to_bytes();
        assert!(Array::parse(&b).unwrap_err().contains("not supported"));
    }
}
