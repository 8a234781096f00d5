//! Writing outputs atomically: never a half-written file, never a stale temp file.
//!
//! What an output path names decides how it is written, as `cp`, `cc -o` and
//! `rustc -o` do:
//! * a regular file, or nothing yet: a temp file next to it, renamed over it;
//! * a symlink: written through, atomically next to its final target (the
//!   target gets the new bytes, the link stays a link);
//! * a character device or FIFO (`/dev/null`, `/dev/stdout`, a named pipe):
//!   written directly, never replaced;
//! * a directory: refused, with an error saying so.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` through a temp file in the same directory, synced
/// and then renamed over `path`. A new file gets mode `0666 & !umask` (as
/// `cp` and `cc -o`); an existing file keeps its permissions and stays
/// untouched if anything fails; the temp file is removed on failure.
/// Symlinks, devices, FIFOs and directories: see the module docs.
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

/// Whether a write waits for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` before the rename ([`write_atomic`]): files people keep, such
    /// as `kernels.lock`.
    Synced,
    /// No `fsync` ([`write_atomic_unsynced`]): scratch files and cache
    /// entries, verified before use and cheap to rebuild.
    Unsynced,
}

/// Write `bytes` to `path` unless it already holds exactly them, in which
/// case the file and its modification time are left alone (Cargo, make and
/// rerun checks see no change). Otherwise written atomically as
/// `durability` says, creating the parent directory. Returns whether it was
/// written. The one write-if-changed of the crate: the object cache, the
/// lock, the toolchain probe cache and the build outputs use it.
pub fn write_if_changed(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    write_atomic_with(path, bytes, durability == Durability::Synced)?;
    Ok(true)
}

/// The file a write to `path` lands in: `path` itself, or the final target
/// of the symlink chain it starts (which need not exist yet). A chain longer
/// than 40 links is refused as a loop, as the kernel does.
pub fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&p)?;
                p = if target.is_absolute() {
                    target
                } else {
                    match p.parent() {
                        Some(d) => d.join(target),
                        None => target,
                    }
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other(format!(
        "too many levels of symbolic links at {}",
        path.display()
    )))
}

/// Whether `m` is a file written in place: a character device or a FIFO
/// (block devices and sockets too; none can be replaced by a rename).
fn written_in_place(m: &std::fs::Metadata) -> bool {
    let t = m.file_type();
    !t.is_file() && !t.is_dir() && !t.is_symlink()
}

fn write_atomic_with(path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let path = &resolve_symlinks(path)?;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(io::Error::from(io::ErrorKind::IsADirectory));
        }
        if written_in_place(&meta) {
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            f.write_all(bytes)?;
            return f.flush();
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // A new file gets 0666 & ~umask, as `cp` and `cc -o` give it (the
    // temp file's own default is 0600, unreadable to other users).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
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

    #[test]
    fn write_if_changed_skips_identical_content() {
        for durability in [Durability::Synced, Durability::Unsynced] {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("a/b.txt");
            assert!(write_if_changed(&p, b"one", durability).unwrap());
            let t1 = std::fs::metadata(&p).unwrap().modified().unwrap();
            assert!(!write_if_changed(&p, b"one", durability).unwrap());
            assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), t1);
            assert!(write_if_changed(&p, b"two", durability).unwrap());
            assert_eq!(std::fs::read(&p).unwrap(), b"two");
            // No temp files left behind.
            assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
        }
    }
}
