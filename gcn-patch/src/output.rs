//! Writing outputs atomically: never a half-written file, never a stale temp file.

use std::io::{self, Write};
use std::path::Path;

/// Write `bytes` to `path` through a temp file in the same directory, synced
/// and then renamed over `path`. An existing file keeps its permissions and
/// stays untouched if anything fails; the temp file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, true)
}

/// [`write_atomic`] without the `fsync`: still never a half-written file
/// (rename), but after a power loss the file may be empty. For scratch files
/// and cache entries, which are verified before use and cheap to rebuild; an
/// `fsync` per job was a tenth of a cold build's time.
pub fn write_atomic_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, false)
}

fn write_atomic_with(path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if sync {
        tmp.as_file().sync_all()?;
    }
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A directory in the way: an error, and the directory is untouched.
        let d = dir.path().join("sub");
        std::fs::create_dir(&d).unwrap();
        assert!(write_atomic(&d, b"x").is_err());
        assert!(d.is_dir());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
