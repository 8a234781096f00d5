//! Content-addressed cache of code objects, ccache style.
//!
//! A code object is stored under the sha256 of everything that determines its
//! bytes ([`key`]): the patched, retargeted asm text, the target ID, the code
//! object version, the toolchain identity (version text and resolved paths),
//! the exact assembler and linker arguments, and this crate's version. Editing
//! one patch changes only the keys of that kernel's jobs, so only they are
//! reassembled.
//!
//! Two levels ([`ObjectCache`]):
//! - the build's own directory (gcn-build: `$OUT_DIR/gcn-build/cache`), always;
//! - an optional shared directory ([`ENV_CACHE_DIR`], `GCN_BUILD_CACHE_DIR`)
//!   used by every checkout and CI run on the machine: a second checkout of the
//!   same project builds with no assembler run.
//!
//! The shared directory is safe with concurrent writers: entries are written
//! to a temp file and renamed into place (a reader sees a whole entry or none;
//! two writers of one key write the same bytes), and every hit is verified as a
//! code object before use, so even a damaged entry only costs a rebuild. Its
//! size is bounded ([`ENV_CACHE_SIZE`], default [`DEFAULT_SHARED_LIMIT`]):
//! after a build that stored new entries, the least recently used entries
//! (by modification time, refreshed on every hit) are removed until the
//! directory fits.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::base::output::{write_if_changed, Durability};

/// Environment variable naming the shared cache directory.
pub const ENV_CACHE_DIR: &str = "GCN_BUILD_CACHE_DIR";
/// Environment variable bounding the shared cache: bytes, or with a `K`, `M` or `G` suffix.
pub const ENV_CACHE_SIZE: &str = "GCN_BUILD_CACHE_SIZE";
/// Default bound of the shared cache: 1 GiB.
pub const DEFAULT_SHARED_LIMIT: u64 = 1 << 30;

/// Bump when the way objects are produced changes without any input changing.
const CACHE_FORMAT: &str = "gcn-patch-object-cache-v2";

/// The cache key of one job: sha256 (hex) over length-prefixed `parts`, the
/// cache format and this crate's version.
pub fn key(parts: &[&str]) -> String {
    let mut buf = Vec::with_capacity(parts.iter().map(|p| p.len() + 8).sum::<usize>() + 64);
    for p in [CACHE_FORMAT, env!("CARGO_PKG_VERSION")]
        .iter()
        .chain(parts)
    {
        // Length-prefix each part so that ("ab","c") and ("a","bc") differ.
        buf.extend_from_slice(&(p.len() as u64).to_le_bytes());
        buf.extend_from_slice(p.as_bytes());
    }
    crate::base::hash::sha256_hex(&buf)
}

/// Where a cached object was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// In the build's own directory.
    Local,
    /// In the shared directory (and copied into the local one).
    Shared,
}

/// The shared level of an [`ObjectCache`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedCache {
    /// The directory (created on first store).
    pub dir: PathBuf,
    /// Upper bound of the entries' total size, in bytes.
    pub limit: u64,
}

impl SharedCache {
    /// The shared cache configured by [`ENV_CACHE_DIR`] and [`ENV_CACHE_SIZE`],
    /// read through `env` (gcn-build's one environment reader). `None` when
    /// [`ENV_CACHE_DIR`] is unset or empty; an unparsable size is an error.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        let Some(dir) = env(ENV_CACHE_DIR).filter(|d| !d.trim().is_empty()) else {
            return Ok(None);
        };
        let limit = match env(ENV_CACHE_SIZE).filter(|s| !s.trim().is_empty()) {
            None => DEFAULT_SHARED_LIMIT,
            Some(s) => parse_size(&s).ok_or_else(|| {
                format!(
                    "{ENV_CACHE_SIZE}={s:?} is not a size: write bytes, or a number \
                     with K, M or G (e.g. `512M`)"
                )
            })?,
        };
        Ok(Some(SharedCache {
            dir: PathBuf::from(dir),
            limit,
        }))
    }

    /// Remove the least recently used entries until the total size is at most
    /// the limit. Entries vanishing meanwhile (another trimmer) are fine.
    pub fn trim(&self) -> io::Result<()> {
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let read = match fs::read_dir(&self.dir) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        // The objects, and the job records beside them
        // ([`crate::pipeline::fingerprint`]): a record whose object was
        // removed is only a miss.
        let records = fs::read_dir(self.dir.join("records")).into_iter().flatten();
        for e in read.chain(records).flatten() {
            let path = e.path();
            if path
                .extension()
                .is_none_or(|x| x != "hsaco" && x != "job" && x != "src")
            {
                continue;
            }
            if let Ok(m) = e.metadata() {
                let t = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                entries.push((t, m.len(), path));
            }
        }
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.limit {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
        Ok(())
    }
}

/// Parse `123`, `64K`, `512M`, `2G` (binary units).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()?.to_ascii_uppercase() {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// A two-level content-addressed object cache (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectCache {
    /// The build's own cache directory.
    pub local: PathBuf,
    /// The shared directory, if configured.
    pub shared: Option<SharedCache>,
}

impl ObjectCache {
    /// Path of the local entry for `key`.
    pub fn local_entry(&self, key: &str) -> PathBuf {
        entry(&self.local, key)
    }

    /// The bytes stored under `key` that `valid` accepts: local first, then
    /// shared (a shared hit is copied into the local directory and its time
    /// refreshed, so it counts as recently used). After a hit the local
    /// entry holds the bytes ([`ObjectCache::local_entry`]): a shared entry
    /// that cannot be copied there is no hit.
    pub fn get(&self, key: &str, valid: &dyn Fn(&[u8]) -> bool) -> Option<(Vec<u8>, Hit)> {
        if let Ok(bytes) = fs::read(self.local_entry(key)) {
            if valid(&bytes) {
                return Some((bytes, Hit::Local));
            }
        }
        let shared = self.shared.as_ref()?;
        let path = entry(&shared.dir, key);
        let bytes = fs::read(&path).ok().filter(|b| valid(b))?;
        touch(&path);
        write_if_changed(&self.local_entry(key), &bytes, Durability::Unsynced).ok()?;
        Some((bytes, Hit::Shared))
    }

    /// Store a freshly built object: in the local directory (an error there
    /// is returned), then in the shared one (errors there never fail a build:
    /// the shared cache is an accelerator).
    pub fn store(&self, key: &str, bytes: &[u8]) -> io::Result<()> {
        write_if_changed(&self.local_entry(key), bytes, Durability::Unsynced)?;
        self.publish(key, bytes);
        Ok(())
    }

    fn publish(&self, key: &str, bytes: &[u8]) {
        if let Some(shared) = &self.shared {
            let path = entry(&shared.dir, key);
            if fs::metadata(&path).is_err() {
                let _ = fs::create_dir_all(&shared.dir);
                let _ = crate::base::output::write_atomic_unsynced(&path, bytes);
            }
        }
    }
}

/// Path of the entry for `key` under `dir`.
pub fn entry(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.hsaco"))
}

/// Mark `path` as recently used.
fn touch(path: &Path) {
    if let Ok(f) = fs::File::options().append(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
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
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("100"), Some(100));
        assert_eq!(parse_size("64k"), Some(64 << 10));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn shared_hits_are_copied_locally_and_invalid_entries_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ObjectCache {
            local: dir.path().join("local"),
            shared: Some(SharedCache {
                dir: dir.path().join("shared"),
                limit: 1 << 20,
            }),
        };
        let ok = |b: &[u8]| b.starts_with(b"OBJ");
        assert!(cache.get("k", &ok).is_none());
        cache.publish("k", b"OBJ1");
        // `store` writes the local entry too.
        cache.store("k2", b"OBJ2").unwrap();
        assert_eq!(cache.get("k2", &ok), Some((b"OBJ2".to_vec(), Hit::Local)));
        assert_eq!(cache.get("k", &ok), Some((b"OBJ1".to_vec(), Hit::Shared)));
        assert_eq!(cache.get("k", &ok), Some((b"OBJ1".to_vec(), Hit::Local)));
        fs::write(entry(&cache.shared.as_ref().unwrap().dir, "bad"), b"junk").unwrap();
        assert!(cache.get("bad", &ok).is_none());
    }

    #[test]
    fn trim_removes_least_recently_used_entries_first() {
        let dir = tempfile::tempdir().unwrap();
        let shared = SharedCache {
            dir: dir.path().to_path_buf(),
            limit: 25,
        };
        let base = SystemTime::now() - std::time::Duration::from_secs(100);
        for (i, name) in ["old", "mid", "new"].iter().enumerate() {
            let p = entry(&shared.dir, name);
            fs::write(&p, [0u8; 10]).unwrap();
            let f = fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(base + std::time::Duration::from_secs(10 * i as u64))
                .unwrap();
        }
        fs::write(dir.path().join("unrelated.txt"), [0u8; 100]).unwrap();
        // Job records count as entries too (the oldest of all here).
        let records = dir.path().join("records");
        fs::create_dir_all(&records).unwrap();
        let record = records.join("r.job");
        fs::write(&record, [0u8; 10]).unwrap();
        let f = fs::File::options().append(true).open(&record).unwrap();
        f.set_modified(base - std::time::Duration::from_secs(10))
            .unwrap();
        fs::write(records.join("files.txt"), [0u8; 100]).unwrap();
        shared.trim().unwrap();
        assert!(!record.exists());
        assert!(records.join("files.txt").exists());
        assert!(!entry(&shared.dir, "old").exists());
        assert!(entry(&shared.dir, "mid").exists());
        assert!(entry(&shared.dir, "new").exists());
        assert!(dir.path().join("unrelated.txt").exists());
    }

    #[test]
    fn from_env_reads_dir_and_size() {
        let env = |n: &str| match n {
            ENV_CACHE_DIR => Some("/c".to_string()),
            ENV_CACHE_SIZE => Some("2M".to_string()),
            _ => None,
        };
        assert_eq!(
            SharedCache::from_env(&env).unwrap(),
            Some(SharedCache {
                dir: PathBuf::from("/c"),
                limit: 2 << 20
            })
        );
        assert_eq!(SharedCache::from_env(&|_| None).unwrap(), None);
        let bad = |n: &str| (n != "x").then(|| "huge".to_string());
        assert!(SharedCache::from_env(&bad)
            .unwrap_err()
            .contains("not a size"));
    }
}
