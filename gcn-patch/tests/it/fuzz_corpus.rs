//! Replays the fuzz corpus on stable: every file under fuzz/corpus/<target>/
//! (the seeds, and what fuzzing added and was kept) and
//! fuzz/regressions/<target>/ (inputs that once crashed or broke a property)
//! goes through the same check as `cargo +nightly fuzz run <target>`
//! (fuzz/checks.rs). See docs/src/design/testing.md, "Fuzzing".

#[path = "../../../fuzz/checks.rs"]
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

#[test]
fn emu_corpus() {
    assert!(replay("emu", checks::emu) >= 8);
}

/// The emu seeds really run kernels: the listing seeds decode and a clean
/// saxpy dispatch executes instructions, so the replay is not all early
/// returns.
#[test]
fn emu_inputs_reach_the_executor() {
    let data = std::fs::read(fuzz_dir().join("corpus/emu/saxpy-gfx942")).unwrap();
    let marker = b"\0\0LISTING\0\0";
    let at = data
        .windows(marker.len())
        .position(|w| w == marker)
        .expect("a listing");
    let co = gcn_emu::load::CodeObject::parse(data[18..at].to_vec(), "seed").unwrap();
    let k = co.kernel("saxpy").unwrap();
    let listing = String::from_utf8_lossy(&data[at + marker.len()..]);
    let p = gcn_emu::decode::Program::parse_listing(&listing, k).unwrap();
    assert!(p.instructions.len() > 10);
    let mem = gcn_emu::memory::Memory::new();
    let buf = mem.alloc_bytes("x", &[0x3c; 256]);
    let args = [
        gcn_emu::dispatch::ArgValue::Bytes(vec![1; 4]),
        gcn_emu::dispatch::ArgValue::Pointer(buf),
        gcn_emu::dispatch::ArgValue::Pointer(buf),
        gcn_emu::dispatch::ArgValue::Bytes(vec![1; 4]),
    ];
    let launch = gcn_emu::dispatch::Launch::new([1, 1, 1], [64, 1, 1]);
    let stats = gcn_emu::dispatch::run(&co, k, &p, &mem, &args, &launch).unwrap();
    assert!(stats.instructions > 10, "{stats:?}");
}
