//! Replays the fuzz corpus on stable: every file under fuzz/corpus/<target>/
//! (the seeds, and what fuzzing added and was kept) and
//! fuzz/regressions/<target>/ (inputs that once crashed or broke a property)
//! goes through the same check as `cargo +nightly fuzz run <target>`
//! (fuzz/checks.rs). See docs/src/design/testing.md, "Fuzzing".

#[path = "../../fuzz/checks.rs"]
mod checks;

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Every input of `target`, sorted; fails if the seed corpus is missing.
fn inputs(target: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["corpus", "regressions"] {
        let d = fuzz_dir().join(dir).join(target);
        let Ok(entries) = std::fs::read_dir(&d) else {
            assert_ne!(dir, "corpus", "{} is missing", d.display());
            continue;
        };
        out.extend(entries.map(|e| e.expect("read fuzz dir").path()));
    }
    out.sort();
    assert!(!out.is_empty(), "no seed inputs for fuzz target {target}");
    out
}

fn replay(target: &str, check: fn(&[u8])) -> usize {
    let files = inputs(target);
    for f in &files {
        let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let ok = std::panic::catch_unwind(|| check(&data));
        assert!(
            ok.is_ok(),
            "fuzz input {} fails the {target} check",
            f.display()
        );
    }
    files.len()
}

#[test]
fn asm_corpus() {
    assert!(replay("asm", checks::asm) >= 5);
}

#[test]
fn manifest_corpus() {
    assert!(replay("manifest", checks::manifest) >= 3);
}

#[test]
fn diff_corpus() {
    assert!(replay("diff", checks::diff) >= 3);
}

#[test]
fn target_id_corpus() {
    assert!(replay("target_id", checks::target_id) >= 5);
}

#[test]
fn eflags_corpus() {
    assert!(replay("eflags", checks::eflags) >= 3);
}
