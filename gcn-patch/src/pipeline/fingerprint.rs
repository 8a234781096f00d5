//! Job fingerprints: a rerun skips every job whose inputs did not change.
//!
//! The object [`cache`](mod@crate::pipeline::cache) is keyed by the patched,
//! retargeted asm, so finding an object there needs the source loaded,
//! patched, retargeted and checked first. A fingerprint is a key computed
//! before any of that, from the job's raw inputs ([`Fingerprints::job_key`]):
//!
//! * the sha256 of every file the job reads: the dump, each patch file, the
//!   kernel's accepted-findings file (or that it is missing);
//! * every manifest setting the job depends on: the source's entry (dump
//!   path, pin, targets, rules, symbols, import provenance, Triton
//!   metadata; not the line it is on), the kernel's name, register and
//!   hazard policies and accepted file, the `[defaults]`, the manifest's
//!   directory and file name (diagnostics name them);
//! * the running program's sha256 (the build script or the `gcn-patch`
//!   binary: gcn-patch's code changes between builds of one version);
//! * the target, the toolchain's identity (version text and resolved paths)
//!   and gcn-patch's version and record format ([`RECORD_FORMAT`]).
//!
//! It maps to a [`Record`] of the job's result: the object cache key and
//! the object's sha256 (the object stays in the object cache and is
//! checked against that sha256 on use), the patched asm's sha256 (for the
//! lock), the kernel symbols, the notes and the accepted count. A hit gives
//! the same [`BuiltJob`](super::build::BuiltJob) as running the job, so
//! reports, the lock and gcn-build's generated Rust are byte-identical.
//!
//! Planning uses the same inputs: a source whose key ([`Fingerprints::source_key`])
//! has passed the plan's check (pin, patches, rules) is not read again.
//!
//! Records live beside the objects, one file per key (`<key>.job`,
//! `<key>.src`), in the local directory and, when set, in the shared cache's
//! record namespace ([`cache::Space::Records`]: a directory's `records/`, a
//! remote cache's `records/`), written atomically. A record that is missing,
//! unreadable, truncated or of another format is a miss, never an error.
//! Only successful jobs are recorded: a job that failed runs again.
//!
//! **What it trusts.** Hashing every dump on every rerun costs as much as
//! reading the library (609 MB for all of aiter: seconds from a cold page
//! cache). A file's sha256 is therefore remembered with its size,
//! modification time, change time and inode (`files.txt` in the local
//! directory, as cargo's fingerprints and ccache's direct mode trust
//! stat data); when any of them differs the file is read and hashed again.
//! A file modified within [`RACY_SECONDS`] of being hashed is not
//! remembered (its next change could keep the same timestamps), so it is
//! hashed again on the next run.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Location, Severity};
use crate::base::hash::sha256_hex;
use crate::config::manifest::Manifest;
use crate::pipeline::cache::{self, ObjectCache, Shared, Space};

/// Bump when a record's meaning or layout changes: older records are misses.
pub const RECORD_FORMAT: &str = "gcn-patch-job-record-v1";

/// A file modified this recently when hashed is hashed again next time.
pub const RACY_SECONDS: u64 = 2;

/// Name of the remembered file hashes, in the local record directory.
const FILES: &str = "files.txt";

/// The recorded result of one successful job (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The object cache key of its code object.
    pub object_key: String,
    /// Hex sha256 of the code object.
    pub object_sha256: String,
    /// Hex sha256 of the patched, retargeted asm (the lock's `asm-sha256`).
    pub asm_sha256: String,
    /// Kernel symbols in the object.
    pub symbols: Vec<String>,
    /// The job's notes, as it reported them.
    pub notes: Vec<Diagnostic>,
    /// Findings the kernel's accepted file left out of the notes.
    pub accepted: usize,
}

/// The fingerprints of one build: the remembered file hashes and where
/// records are stored. Shared by the plan and the jobs of a build.
pub struct Fingerprints {
    local: PathBuf,
    shared: Option<Shared>,
    files: Mutex<FileHashes>,
    /// Sources the plan read and checked (no record of a passed check).
    sources_read: AtomicUsize,
    /// Jobs whose record was reused.
    reused: AtomicUsize,
    /// Files read and hashed (their stat data not remembered or changed).
    hashed: AtomicUsize,
    /// The key of each source asked about, computed once per build.
    source_keys: Mutex<HashMap<(usize, usize), Option<String>>>,
    /// The sha256 of the running program ([`Fingerprints::program`]).
    program: std::sync::OnceLock<String>,
    /// Records to write at [`Fingerprints::save`]: (name, bytes, also in
    /// the shared directory). Nothing is written before: a build that
    /// fails before its end leaves no partial output.
    pending: Mutex<Vec<(String, Vec<u8>, bool)>>,
}

impl std::fmt::Debug for Fingerprints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fingerprints")
            .field("local", &self.local)
            .field("shared", &self.shared)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// What [`Fingerprints`] saw: how much of a build was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Sources the plan read and checked (the others had a record of it).
    pub sources_read: usize,
    /// Jobs taken from their records (no source loaded, patched or checked).
    pub reused: usize,
    /// Files read and hashed because their stat data was not remembered
    /// or changed (sources, patches, accepted files, objects).
    pub hashed: usize,
}

impl Fingerprints {
    /// The fingerprints stored beside `cache`: in `cache.local`'s
    /// `records/` and, with a shared cache, its record namespace.
    pub fn new(cache: &ObjectCache) -> Fingerprints {
        let local = cache.local.join("records");
        let files = FileHashes::load(&local.join(FILES));
        Fingerprints {
            shared: cache.shared.clone(),
            local,
            files: Mutex::new(files),
            sources_read: AtomicUsize::new(0),
            reused: AtomicUsize::new(0),
            hashed: AtomicUsize::new(0),
            source_keys: Mutex::new(HashMap::new()),
            program: std::sync::OnceLock::new(),
            pending: Mutex::new(Vec::new()),
        }
    }

    /// What this build skipped so far.
    pub fn stats(&self) -> Stats {
        Stats {
            sources_read: self.sources_read.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            hashed: self.hashed.load(Ordering::Relaxed),
        }
    }

    /// The sha256 of `path`'s bytes: remembered when its stat data did not
    /// change, else read and hashed (see the module docs: what it trusts).
    /// `None` when it cannot be read. The engine also asks it about the
    /// objects it finds in the cache and gcn-build about the objects it
    /// installed, so a rerun reads no object either.
    pub fn sha256_of(&self, path: &Path) -> Option<String> {
        let meta = fs::metadata(path).ok()?;
        let stat = Stat::of(&meta);
        let lock = || {
            self.files
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(sha) = lock().get(path, &stat) {
            return Some(sha);
        }
        let bytes = fs::read(path).ok()?;
        self.hashed.fetch_add(1, Ordering::Relaxed);
        let sha = sha256_hex(&bytes);
        // The stat of what was read: a file changed meanwhile is not remembered.
        let after = fs::metadata(path).ok().map(|m| Stat::of(&m));
        if after.as_ref() == Some(&stat) && bytes.len() as u64 == stat.size && !stat.racy() {
            lock().insert(path.to_path_buf(), stat, sha.clone());
        }
        Some(sha)
    }

    /// The key of source `source` of kernel `kernel`: every input of its
    /// patching (see the module docs). `None` when a file cannot be read
    /// (the job then runs and reports it).
    pub fn source_key(&self, manifest: &Manifest, kernel: usize, source: usize) -> Option<String> {
        let keys = || {
            self.source_keys
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(key) = keys().get(&(kernel, source)) {
            return key.clone();
        }
        let key = self.compute_source_key(manifest, kernel, source);
        keys().insert((kernel, source), key.clone());
        key
    }

    /// The sha256 of the running program (the build script, the
    /// `gcn-patch` binary): gcn-patch's code, whose checks make the notes a
    /// record holds, changes between builds of one version (a path or git
    /// dependency), and any rebuild of it makes new records. Remembered
    /// with its stat data like any file; `"unknown"` when it cannot be read.
    fn program(&self) -> &str {
        self.program.get_or_init(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| self.sha256_of(&p))
                .unwrap_or_else(|| "unknown".into())
        })
    }

    /// [`Fingerprints::source_key`], computed.
    fn compute_source_key(
        &self,
        manifest: &Manifest,
        kernel: usize,
        source: usize,
    ) -> Option<String> {
        let k = &manifest.kernels[kernel];
        let s = &k.sources[source];
        let mut entry = s.clone();
        // The line of the pin shows only in a pin mismatch, never recorded.
        entry.sha256_line = 0;
        let mut parts: Vec<String> = vec![
            RECORD_FORMAT.into(),
            env!("CARGO_PKG_VERSION").into(),
            self.program().into(),
            manifest.dir.display().to_string(),
            manifest.shown().display().to_string(),
            format!("{:?}", manifest.defaults),
            k.name.clone(),
            format!("{:?} {:?}", k.registers, k.hazards),
            format!("{:?}", entry),
            self.sha256_of(&s.asm)?,
        ];
        for p in &s.patches {
            parts.push(self.sha256_of(&p.path)?);
        }
        parts.push(format!("{:?}", k.accepted_rel));
        if let Some(a) = &k.accepted {
            // A missing accepted file is an error of the job: never recorded.
            parts.push(self.sha256_of(a).unwrap_or_else(|| "unreadable".into()));
        }
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        Some(cache::key(&parts))
    }

    /// The key of the job of source `source` of kernel `kernel` for
    /// `target`, built with the toolchain of identity `toolchain`
    /// ([`crate::stage::toolchain::Toolchain::identity`]: version text and
    /// resolved paths): its source's key, the target and the toolchain.
    pub fn job_key(
        &self,
        manifest: &Manifest,
        (kernel, source): (usize, usize),
        target: &TargetId,
        toolchain: &str,
    ) -> Option<String> {
        let source = self.source_key(manifest, kernel, source)?;
        Some(cache::key(&[
            RECORD_FORMAT,
            &source,
            &target.name(),
            toolchain,
        ]))
    }

    /// Whether the plan's check of the source with key `key` passed before.
    pub fn source_checked(&self, key: &str) -> bool {
        let name = format!("{key}.src");
        let ok = |b: Option<Vec<u8>>| b.is_some_and(|b| b == RECORD_FORMAT.as_bytes());
        if ok(fs::read(self.local.join(&name)).ok()) {
            return true;
        }
        if self
            .shared
            .as_ref()
            .is_some_and(|s| ok(s.read(Space::Records, &name)))
        {
            self.defer(
                format!("{key}.src"),
                RECORD_FORMAT.as_bytes().to_vec(),
                false,
            );
            return true;
        }
        false
    }

    /// The plan read and checked a source (key `key`, if it has one): a
    /// check that `passed` is recorded.
    pub fn checked_source(&self, key: Option<&str>, passed: bool) {
        self.sources_read.fetch_add(1, Ordering::Relaxed);
        if let (Some(key), true) = (key, passed) {
            self.store(&format!("{key}.src"), RECORD_FORMAT.as_bytes());
        }
    }

    /// The record of the job with key `key`, if one can be read.
    pub fn get(&self, key: &str) -> Option<Record> {
        let name = format!("{key}.job");
        let read = |b: Option<Vec<u8>>| b.and_then(|b| decode(&b, key));
        if let Some(r) = read(fs::read(self.local.join(&name)).ok()) {
            return Some(r);
        }
        let r = read(self.shared.as_ref()?.read(Space::Records, &name))?;
        self.defer(name, encode(&r, key)?, false);
        Some(r)
    }

    /// Count a record reused by a job.
    pub fn reused(&self) {
        self.reused.fetch_add(1, Ordering::Relaxed);
    }

    /// Record the result of the job with key `key`. Nothing is recorded
    /// for a result that cannot be written back exactly (a note naming a
    /// caller's setting, a path that is not UTF-8): that job always runs.
    pub fn put(&self, key: &str, record: &Record) {
        if let Some(bytes) = encode(record, key) {
            self.store(&format!("{key}.job"), &bytes);
        }
    }

    /// Write the records of this build, then the remembered file hashes
    /// of the files it asked about, when any changed (or some were not asked about: files of
    /// an older manifest are forgotten). Call it once, when the build is
    /// done with files (gcn-build: after installing its objects). Errors
    /// are ignored: the next run hashes the files again.
    pub fn save(&self) {
        let pending = std::mem::take(
            &mut *self
                .pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for (name, bytes, shared) in pending {
            self.write(&self.local, &name, &bytes);
            if let (true, Some(s)) = (shared, &self.shared) {
                s.write(Space::Records, &name, &bytes);
            }
        }
        let mut files = self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if files.changed || files.map.len() > files.used.len() {
            let _ = fs::create_dir_all(&self.local);
            let written = crate::base::output::write_atomic_unsynced(
                &self.local.join(FILES),
                files.text().as_bytes(),
            );
            if written.is_ok() {
                files.changed = false;
                let used = std::mem::take(&mut files.used);
                files.map.retain(|p, _| used.contains(p));
                files.used = used;
            }
        }
    }

    /// Store a record locally and in the shared directory, at
    /// [`Fingerprints::save`]; failures only cost a rerun of the job.
    fn store(&self, name: &str, bytes: &[u8]) {
        self.defer(name.to_string(), bytes.to_vec(), true);
    }

    /// Write `name` at [`Fingerprints::save`] (`shared`: in the shared
    /// directory too).
    fn defer(&self, name: String, bytes: Vec<u8>, shared: bool) {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((name, bytes, shared));
    }

    fn write(&self, dir: &Path, name: &str, bytes: &[u8]) {
        let _ = fs::create_dir_all(dir);
        let _ = crate::base::output::write_atomic_unsynced(&dir.join(name), bytes);
    }
}

/// A file's stat data, as the remembered hashes compare it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    inode: u64,
}

impl Stat {
    fn of(m: &fs::Metadata) -> Stat {
        let ns = |t: Option<SystemTime>| {
            t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128)
        };
        #[cfg(unix)]
        let (ctime_ns, inode) = {
            use std::os::unix::fs::MetadataExt;
            (
                i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
                m.ino(),
            )
        };
        #[cfg(not(unix))]
        let (ctime_ns, inode) = (0, 0);
        Stat {
            size: m.len(),
            mtime_ns: ns(m.modified().ok()),
            ctime_ns,
            inode,
        }
    }

    /// Modified (or changed) within [`RACY_SECONDS`] of now.
    fn racy(&self) -> bool {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_nanos() as i128;
        let limit = i128::from(RACY_SECONDS) * 1_000_000_000;
        now - self.mtime_ns.max(self.ctime_ns) < limit
    }
}

/// Remembered file hashes: path → (stat, sha256).
#[derive(Default)]
struct FileHashes {
    map: HashMap<PathBuf, (Stat, String)>,
    /// The paths asked about by this build: the ones written back.
    used: std::collections::HashSet<PathBuf>,
    /// An entry was added since the last save.
    changed: bool,
}

impl FileHashes {
    /// The hashes in `path`; a missing or damaged file remembers nothing
    /// (a damaged line is skipped).
    fn load(path: &Path) -> FileHashes {
        let mut out = FileHashes::default();
        let Ok(text) = fs::read_to_string(path) else {
            return out;
        };
        let mut lines = text.lines();
        if lines.next() != Some(RECORD_FORMAT) {
            return out;
        }
        for line in lines {
            let mut f = line.splitn(6, ' ');
            let mut next = || f.next();
            let parsed = (|| {
                let size = next()?.parse().ok()?;
                let mtime_ns = next()?.parse().ok()?;
                let ctime_ns = next()?.parse().ok()?;
                let inode = next()?.parse().ok()?;
                let sha = next()?;
                let path = next()?;
                (sha.len() == 64).then(|| {
                    (
                        PathBuf::from(path),
                        Stat {
                            size,
                            mtime_ns,
                            ctime_ns,
                            inode,
                        },
                        sha.to_string(),
                    )
                })
            })();
            if let Some((p, stat, sha)) = parsed {
                out.map.insert(p, (stat, sha));
            }
        }
        out
    }

    fn get(&mut self, path: &Path, stat: &Stat) -> Option<String> {
        let sha = self
            .map
            .get(path)
            .filter(|(s, _)| s == stat)
            .map(|(_, sha)| sha.clone())?;
        if !self.used.contains(path) {
            self.used.insert(path.to_path_buf());
        }
        Some(sha)
    }

    fn insert(&mut self, path: PathBuf, stat: Stat, sha: String) {
        // Paths with a newline cannot be written back: not remembered.
        if path.to_str().is_some_and(|p| !p.contains('\n')) {
            self.used.insert(path.clone());
            self.map.insert(path, (stat, sha));
            self.changed = true;
        }
    }

    /// The file's text: the entries asked about by this build.
    fn text(&self) -> String {
        let mut rows: Vec<_> = self
            .map
            .iter()
            .filter(|(p, _)| self.used.contains(*p))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = format!("{RECORD_FORMAT}\n");
        for (p, (s, sha)) in rows {
            if let Some(p) = p.to_str() {
                out.push_str(&format!(
                    "{} {} {} {} {sha} {p}\n",
                    s.size, s.mtime_ns, s.ctime_ns, s.inode
                ));
            }
        }
        out
    }
}

/// A record's bytes: the format, the key, then length-prefixed fields and
/// an end marker. `None` when the record cannot be written back exactly.
fn encode(r: &Record, key: &str) -> Option<Vec<u8>> {
    let mut e = Enc(String::new());
    e.put(RECORD_FORMAT);
    e.put(key);
    e.put(&r.object_key);
    e.put(&r.object_sha256);
    e.put(&r.asm_sha256);
    e.list(&r.symbols);
    e.put(&r.accepted.to_string());
    e.put(&r.notes.len().to_string());
    for d in &r.notes {
        if d.setting.is_some() {
            return None;
        }
        e.put(match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        });
        e.put(d.code.as_str());
        e.put(&d.message);
        match &d.location {
            None => e.put("-"),
            Some(l) => {
                e.put("+");
                e.put(l.file.to_str()?);
                e.put(&l.line.to_string());
                e.opt(l.column.map(|c| c.to_string()).as_deref());
                e.put(&l.len.to_string());
                e.opt(l.source_line.as_deref());
                e.opt(l.label.as_deref());
            }
        }
        e.list(&d.notes);
        e.list(&d.help);
    }
    e.put("end");
    Some(e.0.into_bytes())
}

/// The record in `bytes`, if it is one of [`RECORD_FORMAT`] for `key`, whole.
fn decode(bytes: &[u8], key: &str) -> Option<Record> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut d = Dec(text);
    if d.get()? != RECORD_FORMAT || d.get()? != key {
        return None;
    }
    let object_key = d.get()?.to_string();
    let object_sha256 = d.get()?.to_string();
    let asm_sha256 = d.get()?.to_string();
    let symbols = d.list()?;
    let accepted = d.get()?.parse().ok()?;
    let n: usize = d.get()?.parse().ok()?;
    let mut notes = Vec::new();
    for _ in 0..n {
        let severity = match d.get()? {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            "note" => Severity::Note,
            _ => return None,
        };
        let code = Code::from_code(d.get()?)?;
        let mut diag = Diagnostic::new(severity, code, d.get()?);
        match d.get()? {
            "-" => {}
            "+" => {
                let file = PathBuf::from(d.get()?);
                let line = d.get()?.parse().ok()?;
                let column = match d.opt()? {
                    Some(c) => Some(c.parse().ok()?),
                    None => None,
                };
                let len = d.get()?.parse().ok()?;
                let source_line = d.opt()?.map(str::to_string);
                let label = d.opt()?.map(str::to_string);
                diag = diag.at(Location {
                    file,
                    line,
                    column,
                    len,
                    source_line,
                    label,
                });
            }
            _ => return None,
        }
        diag.notes = d.list()?;
        diag.help = d.list()?;
        notes.push(diag);
    }
    if d.get()? != "end" || !d.0.is_empty() {
        return None;
    }
    Some(Record {
        object_key,
        object_sha256,
        asm_sha256,
        symbols,
        notes,
        accepted,
    })
}

/// Writes fields as `<length>:<text>\n`.
struct Enc(String);

impl Enc {
    fn put(&mut self, s: &str) {
        self.0.push_str(&s.len().to_string());
        self.0.push(':');
        self.0.push_str(s);
        self.0.push('\n');
    }
    fn opt(&mut self, s: Option<&str>) {
        match s {
            None => self.put("-"),
            Some(s) => {
                self.put("+");
                self.put(s);
            }
        }
    }
    fn list(&mut self, items: &[String]) {
        self.put(&items.len().to_string());
        for i in items {
            self.put(i);
        }
    }
}

/// Reads what [`Enc`] wrote; `None` at anything else.
struct Dec<'a>(&'a str);

impl<'a> Dec<'a> {
    fn get(&mut self) -> Option<&'a str> {
        let (len, rest) = self.0.split_once(':')?;
        if len.is_empty() || len.len() > 12 || !len.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let len: usize = len.parse().ok()?;
        let field = rest.get(..len)?;
        let rest = rest.get(len..)?.strip_prefix('\n')?;
        self.0 = rest;
        Some(field)
    }
    fn opt(&mut self) -> Option<Option<&'a str>> {
        match self.get()? {
            "-" => Some(None),
            "+" => Some(Some(self.get()?)),
            _ => None,
        }
    }
    fn list(&mut self) -> Option<Vec<String>> {
        let n: usize = self.get()?.parse().ok()?;
        // A damaged count cannot ask for more items than the bytes hold.
        if n > self.0.len() {
            return None;
        }
        (0..n).map(|_| self.get().map(str::to_string)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            object_key: "k".repeat(64),
            object_sha256: "o".repeat(64),
            asm_sha256: "a".repeat(64),
            symbols: vec!["main".into(), "with\nnewline:".into()],
            notes: vec![
                Diagnostic::warning(Code::RetargetedFromGeneric, "m: 12\n")
                    .at(Location::line("asm/x.s", 3, Some("  s_nop 0".into()))
                        .with_span(3, 5)
                        .with_label("here"))
                    .with_note("n1")
                    .with_help("h1")
                    .with_help(""),
                Diagnostic::note(Code::RetargetedFromGeneric, ""),
            ],
            accepted: 7,
        }
    }

    #[test]
    fn records_round_trip_and_any_damage_is_a_miss() {
        let r = record();
        let bytes = encode(&r, "key").unwrap();
        assert_eq!(decode(&bytes, "key"), Some(r.clone()));
        // Another key's record, every truncation and a changed format: misses.
        assert_eq!(decode(&bytes, "other"), None);
        for n in 0..bytes.len() {
            assert_eq!(decode(&bytes[..n], "key"), None, "truncated at {n}");
        }
        let text = String::from_utf8(bytes.clone()).unwrap();
        let older = text.replace(RECORD_FORMAT, "gcn-patch-job-record-v0");
        assert_eq!(decode(older.as_bytes(), "key"), None);
        let mut extra = bytes.clone();
        extra.push(b'x');
        assert_eq!(decode(&extra, "key"), None);
        // A note naming a caller's setting is not recorded.
        let mut s = r;
        s.notes[0].setting = Some(crate::base::diag::Setting::Target);
        assert_eq!(encode(&s, "key"), None);
    }

    #[test]
    fn file_hashes_round_trip_and_skip_damaged_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = FileHashes::default();
        let stat = Stat {
            size: 3,
            mtime_ns: 5,
            ctime_ns: 6,
            inode: 7,
        };
        h.insert(PathBuf::from("/a b/c"), stat.clone(), "f".repeat(64));
        let path = dir.path().join(FILES);
        fs::write(&path, h.text() + "12 x\n").unwrap();
        let mut back = FileHashes::load(&path);
        assert_eq!(back.map.len(), 1);
        assert_eq!(back.get(Path::new("/a b/c"), &stat), Some("f".repeat(64)));
        let moved = Stat { inode: 8, ..stat };
        assert_eq!(back.get(Path::new("/a b/c"), &moved), None);
    }
}
