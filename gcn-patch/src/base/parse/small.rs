//! [`Str`]: the compact string of the parsed line model.

use std::fmt;

/// Longest string kept inline (without a heap allocation).
const INLINE: usize = 22;

/// An immutable string of the line model (a mnemonic, an operand, a
/// modifier, a comment): up to 22 bytes are kept inline, longer ones in one
/// exact-size heap allocation. 24 bytes, like a `String`, but nearly every
/// operand and mnemonic of AMDGPU assembly fits inline, so a parsed line
/// does not allocate once per token. It reads as a `&str` (`Deref`) and
/// compares with `&str` and `String`.
#[derive(Clone)]
pub struct Str(Repr);

#[derive(Clone)]
enum Repr {
    Inline(u8, [u8; INLINE]),
    Heap(Box<str>),
}

impl Str {
    /// The string.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Only whole `&str`s are stored ([`Str::from`]): always UTF-8.
            Repr::Inline(len, bytes) => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Heap(s) => s,
        }
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        if s.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Str(Repr::Inline(s.len() as u8, bytes))
        } else {
            Str(Repr::Heap(s.into()))
        }
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str::from(s.as_str())
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str::from(s.as_str())
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.as_str().to_string()
    }
}

impl std::ops::Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Default for Str {
    fn default() -> Str {
        Str::from("")
    }
}

impl PartialEq for Str {
    fn eq(&self, other: &Str) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Str {}

impl std::hash::Hash for Str {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str {
    fn cmp(&self, other: &Str) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        self == other.as_str()
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_strings_read_back() {
        for s in [
            "",
            "v0",
            "v_mfma_f32_32x32x8_f16",
            "buffer_load_dwordx4_xyz",
            "é€",
        ] {
            let t = Str::from(s);
            assert_eq!(t, s);
            assert_eq!(t.len(), s.len());
            assert_eq!(format!("{t:?}"), format!("{s:?}"));
        }
        assert!(matches!(Str::from("a".repeat(22)).0, Repr::Inline(..)));
        assert!(matches!(Str::from("a".repeat(23)).0, Repr::Heap(_)));
        assert_eq!(std::mem::size_of::<Str>(), 24);
    }
}
