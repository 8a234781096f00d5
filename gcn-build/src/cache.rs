//! Content-addressed cache of code objects inside `OUT_DIR`.
//!
//! The key hashes everything that determines the bytes of a code object: the
//! patched, retargeted asm text, the target ID, the code object version, the
//! toolchain identity (version text and paths), the assembler/linker flags and
//! gcn-build's own version. Editing one patch changes only the keys of that
//! kernel's jobs, so only they are reassembled.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Bump when the way objects are produced changes without any input changing.
const CACHE_FORMAT: &str = "gcn-build-cache-v1";

/// The cache key of one job.
pub fn key(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    h.update(CACHE_FORMAT.as_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    for p in parts {
        // Length-prefix each part so that ("ab","c") and ("a","bc") differ.
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    gcn_patch::manifest::hex(&h.finalize())
}

/// Path of the cached object for `key` under `dir`.
pub fn entry(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.hsaco"))
}

/// Write `bytes` to `path` only if its content differs; atomically (temp file + rename).
/// Returns whether the file was written.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    if fs::read(path).map(|old| old == bytes).unwrap_or(false) {
        return Ok(false);
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    gcn_patch::output::write_atomic(path, bytes)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_separates_parts_and_is_stable() {
        assert_ne!(key(&["ab", "c"]), key(&["a", "bc"]));
        assert_eq!(key(&["x", "y"]), key(&["x", "y"]));
        assert_eq!(key(&["x"]).len(), 64);
    }

    #[test]
    fn write_if_changed_skips_identical_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b.txt");
        assert!(write_if_changed(&p, b"one").unwrap());
        let t1 = fs::metadata(&p).unwrap().modified().unwrap();
        assert!(!write_if_changed(&p, b"one").unwrap());
        assert_eq!(fs::metadata(&p).unwrap().modified().unwrap(), t1);
        assert!(write_if_changed(&p, b"two").unwrap());
        assert_eq!(fs::read(&p).unwrap(), b"two");
        // No temp files left behind.
        assert_eq!(fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    }
}
