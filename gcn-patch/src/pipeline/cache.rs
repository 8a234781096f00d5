//! Content-addressed cache of code objects, ccache style.
//!
//! A code object is stored under the sha256 of everything that determines its
//! bytes ([`key`]): the patched, retargeted asm text, the target ID, the code
//! object version, the toolchain identity (version text and resolved paths),
//! the exact assembler and linker arguments, and this crate's version. Editing
//! one patch changes only the keys of that kernel's jobs, so only they are
//! reassembled.
//!
//! Two levels ([`ObjectCache`]), looked up in order, and a build that writes both:
//! - the build's own directory (gcn-build: `$OUT_DIR/gcn-build/cache`), always;
//! - an optional shared cache ([`Shared`]) used by every checkout and CI run:
//!   a directory ([`ENV_CACHE_DIR`], `GCN_BUILD_CACHE_DIR`, or a path in
//!   [`ENV_CACHE`]) on the machine, or, with the `remote-cache` feature, remote
//!   storage named by a URL in [`ENV_CACHE`] (`GCN_BUILD_CACHE=redis://…`,
//!   `pipeline::remote`). A second checkout of the same project builds
//!   with no assembler run. [`ENV_CACHE_READONLY`] reads it and never writes.
//!
//! Objects and job records ([`crate::pipeline::fingerprint`]) are kept in two
//! namespaces ([`Space`]).
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
/// Environment variable naming the shared cache: a directory, or (feature
/// `remote-cache`) `redis://…`, `webdav+https://…`, `s3://bucket/prefix` or
/// `ghac`. Takes precedence over [`ENV_CACHE_DIR`].
pub const ENV_CACHE: &str = "GCN_BUILD_CACHE";
/// Environment variable: `1` reads the shared cache and never writes it
/// (forks, untrusted pull requests).
pub const ENV_CACHE_READONLY: &str = "GCN_BUILD_CACHE_READONLY";
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
    /// Read, never written ([`ENV_CACHE_READONLY`]).
    pub read_only: bool,
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
            read_only: flag(env, ENV_CACHE_READONLY),
        }))
    }

    /// Remove the least recently used entries until the total size is at most
    /// the limit. Entries vanishing meanwhile (another trimmer) are fine.
    pub fn trim(&self) -> io::Result<()> {
        if self.read_only {
            return Ok(());
        }
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

/// A variable set to something other than empty or `0`.
fn flag(env: &dyn Fn(&str) -> Option<String>, name: &str) -> bool {
    env(name).is_some_and(|v| !v.trim().is_empty() && v.trim() != "0")
}

/// The two namespaces of a shared cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// Code objects, `<key>.hsaco`.
    Objects,
    /// Job records, `<key>.job` and `<key>.src` ([`crate::pipeline::fingerprint`]).
    Records,
}

impl Space {
    /// Where entry `name` lives under a remote cache's root.
    #[cfg(feature = "remote-cache")]
    fn remote_path(self, name: &str) -> String {
        match self {
            Space::Objects => format!("objects/{name}"),
            Space::Records => format!("records/{name}"),
        }
    }
}

/// The shared level of an [`ObjectCache`]: where it is.
#[derive(Debug, Clone)]
pub enum Shared {
    /// A directory on this machine.
    Dir(SharedCache),
    /// Remote storage through OpenDAL ([`super::remote`]).
    #[cfg(feature = "remote-cache")]
    Remote(std::sync::Arc<super::remote::RemoteCache>),
    /// Configured, but not usable in this build (a URL without the
    /// `remote-cache` feature): nothing is shared; the text says why.
    Unavailable(String),
}

impl PartialEq for Shared {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Shared::Dir(a), Shared::Dir(b)) => a == b,
            #[cfg(feature = "remote-cache")]
            (Shared::Remote(a), Shared::Remote(b)) => std::sync::Arc::ptr_eq(a, b),
            (Shared::Unavailable(a), Shared::Unavailable(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Shared {}

impl Shared {
    /// The shared cache the environment configures, read through `env`
    /// (gcn-build's one environment reader): [`ENV_CACHE`] (a directory or
    /// a URL), else [`ENV_CACHE_DIR`], with [`ENV_CACHE_SIZE`] (directories),
    /// [`ENV_CACHE_READONLY`] and the remote settings
    /// (`GCN_BUILD_CACHE_TIMEOUT`, credentials). `spec`, when
    /// given, replaces [`ENV_CACHE`] (a builder's `.shared_cache(…)`).
    /// `None` when none is set; a setting that cannot be read is an error.
    pub fn configure(
        spec: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Shared>, String> {
        let nonempty = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
        let spec = match spec {
            Some(s) => Some(s.to_string()),
            None => nonempty(env(ENV_CACHE)).or_else(|| nonempty(env(ENV_CACHE_DIR))),
        };
        let Some(spec) = spec else {
            return Ok(None);
        };
        let spec = spec.trim();
        if !is_url(spec) {
            let dir = spec.strip_prefix("file://").unwrap_or(spec).to_string();
            return SharedCache::from_env(&|name| match name {
                ENV_CACHE_DIR => Some(dir.clone()),
                _ => env(name),
            })
            .map(|s| s.map(Shared::Dir));
        }
        Self::remote(spec, env)
    }

    #[cfg(feature = "remote-cache")]
    fn remote(spec: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Shared>, String> {
        use super::remote::{RemoteCache, DEFAULT_TIMEOUT, ENV_CACHE_TIMEOUT};
        if !super::remote::is_remote(spec) {
            return Err(format!(
                "`{spec}` is not a shared cache: write a directory, `redis://HOST:PORT`, \
                 `webdav+https://HOST/PATH`, `s3://BUCKET/PREFIX` or `ghac`"
            ));
        }
        let timeout = match env(ENV_CACHE_TIMEOUT).filter(|s| !s.trim().is_empty()) {
            None => DEFAULT_TIMEOUT,
            Some(s) => s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|t| t.is_finite() && *t > 0.0 && *t < 3600.0)
                .map(std::time::Duration::from_secs_f64)
                .ok_or_else(|| {
                    format!("{ENV_CACHE_TIMEOUT}={s:?} is not a time: write seconds (e.g. `2` or `0.5`)")
                })?,
        };
        let remote = RemoteCache::from_url(spec, flag(env, ENV_CACHE_READONLY), timeout, env)?;
        Ok(Some(Shared::Remote(std::sync::Arc::new(remote))))
    }

    #[cfg(not(feature = "remote-cache"))]
    fn remote(spec: &str, _env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Shared>, String> {
        Ok(Some(Shared::Unavailable(format!(
            "the shared cache `{spec}` is not used: this gcn-build was built without its \
             `remote-cache` feature (enable it: `gcn-build = {{ version = \"…\", features = \
             [\"remote-cache\"] }}`); building with the local cache only"
        ))))
    }

    /// The directory, for a directory cache.
    pub fn dir(&self) -> Option<&SharedCache> {
        match self {
            Shared::Dir(d) => Some(d),
            _ => None,
        }
    }

    /// Entry `name` of `space`, if there (a remote entry verified against
    /// its hash; a damaged one is a miss). A directory's object is marked
    /// as recently used.
    pub fn read(&self, space: Space, name: &str) -> Option<Vec<u8>> {
        match self {
            Shared::Dir(d) => {
                let path = d.path(space, name);
                let bytes = fs::read(&path).ok()?;
                if space == Space::Objects && !d.read_only {
                    touch(&path);
                }
                Some(bytes)
            }
            #[cfg(feature = "remote-cache")]
            Shared::Remote(r) => r.read(&space.remote_path(name)),
            Shared::Unavailable(_) => None,
        }
    }

    /// Store `bytes` as entry `name` of `space`, replacing what is there
    /// (a damaged entry: a store follows a miss). Never fails a build:
    /// errors only cost a later rebuild (a remote cache's first one is
    /// reported by [`Shared::warning`]). Nothing is written when read-only.
    pub fn write(&self, space: Space, name: &str, bytes: &[u8]) {
        match self {
            Shared::Dir(d) => {
                if d.read_only {
                    return;
                }
                let path = d.path(space, name);
                if let Some(parent) = path.parent() {
                    let _ = fs::create_dir_all(parent);
                }
                let _ = crate::base::output::write_atomic_unsynced(&path, bytes);
            }
            #[cfg(feature = "remote-cache")]
            Shared::Remote(r) => r.write(&space.remote_path(name), bytes),
            Shared::Unavailable(_) => {}
        }
    }

    /// What went wrong with the shared cache in this build, once: a remote
    /// cache that failed (and is not used any more), or one that is
    /// configured but not available. `None` when all is well.
    pub fn warning(&self) -> Option<String> {
        match self {
            Shared::Dir(_) => None,
            #[cfg(feature = "remote-cache")]
            Shared::Remote(r) => r.warning().map(str::to_string),
            Shared::Unavailable(why) => Some(why.clone()),
        }
    }
}

/// Whether `spec` is written as a URL (`scheme://…`, or `ghac`) rather than a path.
fn is_url(spec: &str) -> bool {
    spec == "ghac"
        || spec.split_once("://").is_some_and(|(scheme, _)| {
            scheme != "file"
                && !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
}

impl SharedCache {
    /// Where entry `name` of `space` lives.
    fn path(&self, space: Space, name: &str) -> PathBuf {
        match space {
            Space::Objects => self.dir.join(name),
            Space::Records => self.dir.join("records").join(name),
        }
    }
}

/// A two-level content-addressed object cache (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectCache {
    /// The build's own cache directory.
    pub local: PathBuf,
    /// The shared cache, if configured.
    pub shared: Option<Shared>,
}

impl ObjectCache {
    /// Path of the local entry for `key`.
    pub fn local_entry(&self, key: &str) -> PathBuf {
        entry(&self.local, key)
    }

    /// The bytes stored under `key` that `valid` accepts: local first, then
    /// shared (a shared hit is copied into the local directory; a shared
    /// directory's entry has its time refreshed, so it counts as recently
    /// used). After a hit the local entry holds the bytes
    /// ([`ObjectCache::local_entry`]): a shared entry that cannot be copied
    /// there is no hit.
    pub fn get(&self, key: &str, valid: &dyn Fn(&[u8]) -> bool) -> Option<(Vec<u8>, Hit)> {
        if let Ok(bytes) = fs::read(self.local_entry(key)) {
            if valid(&bytes) {
                return Some((bytes, Hit::Local));
            }
        }
        let shared = self.shared.as_ref()?;
        let bytes = shared
            .read(Space::Objects, &format!("{key}.hsaco"))
            .filter(|b| valid(b))?;
        write_if_changed(&self.local_entry(key), &bytes, Durability::Unsynced).ok()?;
        Some((bytes, Hit::Shared))
    }

    /// Store a freshly built object: in the local directory (an error there
    /// is returned), then in the shared cache (errors there never fail a
    /// build: the shared cache is an accelerator).
    pub fn store(&self, key: &str, bytes: &[u8]) -> io::Result<()> {
        write_if_changed(&self.local_entry(key), bytes, Durability::Unsynced)?;
        self.publish(key, bytes);
        Ok(())
    }

    fn publish(&self, key: &str, bytes: &[u8]) {
        if let Some(shared) = &self.shared {
            shared.write(Space::Objects, &format!("{key}.hsaco"), bytes);
        }
    }

    /// The shared cache's warning for this build, if any ([`Shared::warning`]).
    pub fn warning(&self) -> Option<String> {
        self.shared.as_ref().and_then(Shared::warning)
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
            shared: Some(Shared::Dir(SharedCache {
                dir: dir.path().join("shared"),
                limit: 1 << 20,
                read_only: false,
            })),
        };
        let ok = |b: &[u8]| b.starts_with(b"OBJ");
        assert!(cache.get("k", &ok).is_none());
        cache.publish("k", b"OBJ1");
        // `store` writes the local entry too.
        cache.store("k2", b"OBJ2").unwrap();
        assert_eq!(cache.get("k2", &ok), Some((b"OBJ2".to_vec(), Hit::Local)));
        assert_eq!(cache.get("k", &ok), Some((b"OBJ1".to_vec(), Hit::Shared)));
        assert_eq!(cache.get("k", &ok), Some((b"OBJ1".to_vec(), Hit::Local)));
        let dir = &cache.shared.as_ref().unwrap().dir().unwrap().dir;
        fs::write(entry(dir, "bad"), b"junk").unwrap();
        assert!(cache.get("bad", &ok).is_none());
        // A damaged entry is replaced by the store that follows the miss.
        cache.store("bad", b"OBJ3").unwrap();
        assert_eq!(fs::read(entry(dir, "bad")).unwrap(), b"OBJ3");
    }

    #[test]
    fn trim_removes_least_recently_used_entries_first() {
        let dir = tempfile::tempdir().unwrap();
        let shared = SharedCache {
            dir: dir.path().to_path_buf(),
            limit: 25,
            read_only: false,
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
                limit: 2 << 20,
                read_only: false,
            })
        );
        assert_eq!(SharedCache::from_env(&|_| None).unwrap(), None);
        let bad = |n: &str| (n != "x").then(|| "huge".to_string());
        assert!(SharedCache::from_env(&bad)
            .unwrap_err()
            .contains("not a size"));
    }

    #[test]
    fn configure_prefers_gcn_build_cache_and_reads_paths_and_read_only() {
        let env = |n: &str| match n {
            ENV_CACHE => Some("file:///a".to_string()),
            ENV_CACHE_DIR => Some("/b".to_string()),
            ENV_CACHE_READONLY => Some("1".to_string()),
            _ => None,
        };
        let s = Shared::configure(None, &env).unwrap().unwrap();
        let d = s.dir().unwrap();
        assert_eq!((d.dir.as_path(), d.read_only), (Path::new("/a"), true));
        let s = Shared::configure(Some("/c"), &env).unwrap().unwrap();
        assert_eq!(s.dir().unwrap().dir, Path::new("/c"));
        assert_eq!(Shared::configure(None, &|_| None).unwrap(), None);
        assert!(is_url("redis://h:1") && is_url("ghac") && is_url("webdav+https://h/p"));
        assert!(!is_url("/x/y") && !is_url("file:///x") && !is_url("C:\\x"));
        // A read-only directory is read, never written.
        let tmp = tempfile::tempdir().unwrap();
        let ro = Shared::Dir(SharedCache {
            dir: tmp.path().to_path_buf(),
            limit: 1 << 20,
            read_only: true,
        });
        ro.write(Space::Records, "r.job", b"x");
        assert!(!tmp.path().join("records/r.job").exists());
    }

    #[cfg(not(feature = "remote-cache"))]
    #[test]
    fn a_url_without_the_feature_is_a_warning_not_an_error() {
        let s = Shared::configure(Some("redis://127.0.0.1:6379"), &|_| None)
            .unwrap()
            .unwrap();
        assert!(s.read(Space::Objects, "k.hsaco").is_none());
        assert!(s.warning().unwrap().contains("remote-cache"));
    }
}
