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

#[test]
fn rules_corpus() {
    assert!(replay("rules", checks::rules) >= 8);
}

/// The rules target's inputs really reach the patch stage: some seed (or
/// kept input) builds a manifest whose rules apply cleanly and one whose
/// rules are refused, so the replay is not all early returns.
#[test]
fn rules_inputs_reach_the_patch_stage() {
    let (mut applied, mut refused) = (0, 0);
    for f in inputs("rules") {
        let data = std::fs::read(&f).unwrap();
        let mut u = arbitrary::Unstructured::new(&data);
        let Ok(input) = <checks::RulesInput as arbitrary::Arbitrary>::arbitrary(&mut u) else {
            continue;
        };
        let rel = "tests/corpus/hip/gfx942/saxpy.s";
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join(rel)).unwrap();
        let manifest = checks::rules_manifest(&input, rel, &text, &["gfx942"]);
        let Ok(m) = gcn_patch::config::manifest::Manifest::parse(&manifest, &root.join("k.toml"))
        else {
            continue;
        };
        if m.kernels[0].sources[0].rules.is_empty() {
            continue;
        }
        match gcn_patch::pipeline::plan(&m, &[]) {
            Ok(_) => applied += 1,
            Err(_) => refused += 1,
        }
    }
    assert!(
        applied > 0 && refused > 0,
        "applied {applied}, refused {refused}"
    );
}

#[test]
fn elf_corpus() {
    assert!(replay("elf", checks::elf) >= 3);
}

#[test]
fn note_corpus() {
    assert!(replay("note", checks::note) >= 2);
}

#[test]
fn bundle_corpus() {
    assert!(replay("bundle", checks::bundle) >= 2);
}

#[test]
fn host_corpus() {
    assert!(replay("host", checks::host) >= 2);
}

#[test]
fn vmfb_corpus() {
    assert!(replay("vmfb", checks::vmfb) >= 2);
}
