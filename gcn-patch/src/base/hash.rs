//! Content hashes: lowercase hex sha256, as pins, the lock and the object
//! cache write them.

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes` (e.g. a digest). gcn-embed, which has no
/// dependencies, keeps its own.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
