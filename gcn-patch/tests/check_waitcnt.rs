//! Wait-counter checks on the real corpus and on patched lines.

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;
use gcn_patch::check::waitcnt::{check_waitcnt, check_waitcnt_traced};
use gcn_patch::diag::Severity;
use gcn_patch::parse::parse;
use gcn_patch::provenance::{Origin, Traced};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

/// Every corpus dump with the target it was compiled for.
fn corpus_files() -> Vec<(PathBuf, TargetId)> {
    let mut out = vec![];
    for family in ["iree", "hip"] {
        let dir = corpus().join(family);
        let mut targets: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (run tests/corpus/regen.sh)", dir.display()))
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .collect();
        targets.sort_by_key(|e| e.path());
        for t in targets {
            let target = TargetId::parse(&t.file_name().to_string_lossy()).expect("corpus target");
            let mut files: Vec<_> = std::fs::read_dir(t.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    matches!(
                        p.extension().and_then(|e| e.to_str()),
                        Some("s" | "rocmasm")
                    )
                })
                .collect();
            files.sort();
            out.extend(files.into_iter().map(|f| (f, target)));
        }
    }
    assert!(out.len() >= 30, "corpus incomplete: {} files", out.len());
    out
}

#[test]
fn every_corpus_file_passes() {
    let mut bad = vec![];
    for (file, target) in corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for d in check_waitcnt(&parse(&text), &target) {
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
    let mut traced = Traced::from_source(dump, "tests/corpus/iree/gfx942/matmul.rocmasm");
    traced.lines.insert(3, "\ts_waitcnt vmcnt(1)".into());
    traced.origins.insert(
        3,
        Origin::Patch {
            file: "patches/matmul-wait.diff".into(),
            hunk: 1,
            line: 9,
        },
    );
    traced.lines.insert(4, "\ts_waitcnt lgkmcnt(16)".into());
    traced.origins.insert(
        4,
        Origin::Rule {
            manifest: "kernels.toml".into(),
            kernel: "matmul".into(),
            index: 2,
            what: "set-waitcnt lgkmcnt 16".into(),
        },
    );
    let target = TargetId::parse("gfx942").unwrap();
    let diags = check_waitcnt_traced(&traced, &target);
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
        &parse("k:\n\ts_waitcnt vmcnt(0) lgkmcnt(0)\n\ts_wait_kmcnt 0x20\n"),
        &target,
    );
    let rendered: Vec<String> = diags.iter().map(|d| d.render()).collect();
    insta::assert_snapshot!(rendered.join("\n\n"));
}
