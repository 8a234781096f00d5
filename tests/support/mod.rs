//! Test support shared by the tests of every package of the workspace: the
//! repository, the corpus, required external tools. Standard library only,
//! so that gcn-embed (no dependencies) can use it too.
//!
//! Include it with a path relative to the including file:
//!
//! ```ignore
//! #[path = "../../tests/support/mod.rs"] // from <package>/tests/x.rs
//! mod support;
//! ```
//!
//! (`tests/common/mod.rs` of the root package re-exports it.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// How to install the LLVM 22 tools the tests use.
pub const LLVM_INSTALL: &str =
    "install LLVM 22 with AMDGPU: `apt-get install -y clang-22 lld-22 llvm-22` (or run `bash tests/setup.sh`)";

/// The workspace root (the directory holding `Cargo.lock`).
pub fn repo() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("Cargo.lock").is_file() && d.join("tests/corpus").is_dir())
        .unwrap_or(here)
        .to_path_buf()
}

/// `tests/corpus` of the workspace (real compiler dumps and objects), or a
/// panic saying how to regenerate it.
pub fn corpus() -> PathBuf {
    let dir = repo().join("tests/corpus");
    assert!(
        dir.join("iree/index.tsv").is_file(),
        "corpus missing at {}: run tests/corpus/regen.sh",
        dir.display()
    );
    dir
}

/// Every asm dump under `tests/corpus` (`.s`, `.rocmasm`), sorted.
pub fn corpus_dumps() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("s" | "rocmasm")
            ) {
                out.push(p);
            }
        }
    }
    let mut files = vec![];
    walk(&corpus(), &mut files);
    files.sort();
    assert!(
        files.len() >= 30,
        "corpus incomplete ({} dumps): run tests/corpus/regen.sh",
        files.len()
    );
    files
}

/// A required external tool found on `PATH`, or a panic that says how to
/// install it (tests never skip silently).
pub fn tool(name: &str, install: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!("`{name}` is required by this test but is not on PATH; install it with: {install}\n(or run `bash tests/setup.sh`)");
}

/// Copy the tree below `from` into `to` (created).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// Every file below `dir` (relative path and bytes), sorted: compare two
/// snapshots with [`changed_files`] to show that nothing below `dir` was
/// written. (Permissions cannot show it for a test running as root, which
/// writes anyway.)
pub fn tree_snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut files = std::collections::BTreeMap::new();
    walk(dir, dir, &mut files);
    files
}

/// The files added, removed or changed between two [`tree_snapshot`]s.
pub fn changed_files(
    before: &std::collections::BTreeMap<PathBuf, Vec<u8>>,
    after: &std::collections::BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<String> {
    let mut changed = Vec::new();
    for (p, bytes) in after {
        match before.get(p) {
            None => changed.push(format!("added {}", p.display())),
            Some(b) if b != bytes => changed.push(format!("changed {}", p.display())),
            Some(_) => {}
        }
    }
    for p in before.keys().filter(|p| !after.contains_key(*p)) {
        changed.push(format!("removed {}", p.display()));
    }
    changed
}

/// Run `cmd` (stdout and stderr captured), failing the test if it has not
/// ended within `deadline`: a hang is killed and reported, never waited for.
pub fn run_bounded(
    mut cmd: std::process::Command,
    deadline: std::time::Duration,
    what: &str,
) -> std::process::Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    // Drain the pipes on threads so a chatty child cannot block on them.
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).ok();
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {deadline:?} (a hang)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: out.join().expect("stdout"),
        stderr: err.join().expect("stderr"),
    }
}
