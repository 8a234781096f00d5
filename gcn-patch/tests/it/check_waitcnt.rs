//! Wait-counter checks on the real corpus and on patched lines.

use crate::common;

use std::path::Path;

use common::{corpus, corpus_files};

use gcn_embed::TargetId;
use gcn_patch::base::diag::Severity;
use gcn_patch::base::document::{Document, Edits};
use gcn_patch::base::provenance::{Origin, RuleOrigin};
use gcn_patch::stage::check::waitcnt::check_waitcnt;

#[test]
fn every_corpus_file_passes() {
    let mut bad = vec![];
    for (file, target) in corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for d in check_waitcnt(&Document::from_source(&text, "<asm>"), &target) {
            bad.push(format!(
                "{} ({}):\n{}",
                file.display(),
                target.name(),
                d.render()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A patch that adds an out-of-range wait and a useless one, reported at the
/// patch hunk.
#[test]
fn patched_waits_are_reported_at_their_origin() {
    let dump = "matmul:\n\ts_waitcnt vmcnt(0)\n\tglobal_load_dwordx4 v[0:3], v[8:9], off\n\ts_waitcnt lgkmcnt(0)\n\ts_endpgm\n";
    let mut traced = Document::from_source(dump, "tests/corpus/iree/gfx942/matmul.rocmasm");
    let mut edits = Edits::new();
    edits.insert_before(
        3,
        "\ts_waitcnt vmcnt(1)".into(),
        Origin::Patch {
            file: std::path::Path::new("patches/matmul-wait.diff").into(),
            hunk: 1,
            line: 9,
        },
    );
    edits.insert_before(
        3,
        "\ts_waitcnt lgkmcnt(16)".into(),
        Origin::Rule(std::sync::Arc::new(RuleOrigin {
            manifest: "kernels.toml".into(),
            kernel: "matmul".into(),
            index: 2,
            what: "set-waitcnt lgkmcnt 16".into(),
        })),
    );
    traced.apply(edits);
    let target = TargetId::parse("gfx942").unwrap();
    let diags = check_waitcnt(&traced, &target);
    assert_eq!(
        diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count(),
        1
    );
    let rendered: Vec<String> = diags.iter().map(|d| d.render()).collect();
    insta::assert_snapshot!(rendered.join("\n\n"));
}

#[test]
fn gfx12_rejects_gfx11_waits() {
    let target = TargetId::parse("gfx1201").unwrap();
    let diags = check_waitcnt(
        &Document::from_source(
            "k:\n\ts_waitcnt vmcnt(0) lgkmcnt(0)\n\ts_wait_kmcnt 0x20\n",
            "<asm>",
        ),
        &target,
    );
    let rendered: Vec<String> = diags.iter().map(|d| d.render()).collect();
    insta::assert_snapshot!(rendered.join("\n\n"));
}

/// The demo patch of the repository (patches/matmul-waitcnt.diff) keeps every
/// wait meaningful and within the gfx942 limits, and the registers in budget.
#[test]
fn demo_patch_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dump = std::fs::read_to_string(corpus().join("iree/gfx942/matmul.rocmasm")).unwrap();
    let diff = std::fs::read_to_string(root.join("patches/matmul-waitcnt.diff")).unwrap();
    let patched = diffy::apply(&dump, &diffy::Patch::from_str(&diff).unwrap()).unwrap();
    assert_ne!(patched, dump);
    let target = TargetId::parse("gfx942").unwrap();
    let diags = check_waitcnt(&Document::from_source(&patched, "<asm>"), &target);
    assert!(diags.is_empty(), "{diags:?}");
    let t = Document::from_source(&patched, "matmul.rocmasm");
    let o = gcn_patch::stage::check::check_registers(
        None,
        &t,
        &target,
        gcn_patch::config::policy::RegisterPolicy::Error,
        "kernel `matmul` for gfx942",
    )
    .unwrap();
    assert!(o.notes.is_empty());
}

/// A wait after a `vmcnt(0)` with no load since waits for nothing, and there
/// is no count below 0 to lower it to: the help says to delete it.
#[test]
fn a_wait_with_nothing_outstanding_is_not_told_to_go_below_zero() {
    let src = "k:\n\tglobal_load_dword v1, v[2:3], off\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32 v0, v1\n\ts_waitcnt vmcnt(0)\n\ts_endpgm\n";
    let diags = check_waitcnt(
        &Document::from_source(src, "k.s"),
        &TargetId::parse("gfx942").unwrap(),
    );
    assert_eq!(diags.len(), 1, "{diags:?}");
    let text = diags[0].render();
    assert!(!text.contains("below 0"), "{text}");
    assert!(text.contains("delete the wait"), "{text}");
}
