//! What lift now does in its own process instead of running a tool — the
//! kernel descriptors decoded (`llvm-objdump -D`), each descriptor's block
//! chosen by a model of the assembler (the `llvm-mc` rounds), the metadata
//! written as YAML (`llvm-readelf --notes`) — gives exactly what those
//! tools give, on every code object of the corpus: the aiter sample
//! (gfx942, gfx950, gfx1250) and the IREE and Triton objects (gfx90a,
//! gfx942, gfx950, gfx1100, gfx1201). A lift also proves it each time by
//! its identity check; this test proves it is the same *text* the tools
//! would have given, and that the corpus targets stay in process.

use crate::common;

use std::path::PathBuf;

use gcn_patch::stage::lift;

fn corpus() -> Vec<PathBuf> {
    let mut files = vec![];
    for entry in walkdir::WalkDir::new(common::repo().join("tests"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
    {
        let p = entry.path();
        let aiter = p.to_string_lossy().contains("/corpus/aiter/");
        if p.extension().is_some_and(|e| e == "hsaco")
            || (aiter && p.extension().is_some_and(|e| e == "co"))
        {
            files.push(p.to_path_buf());
        }
    }
    files
}

#[test]
fn descriptors_and_metadata_described_in_process_are_what_the_tools_give() {
    let tc = common::toolchain();
    let files = corpus();
    assert!(
        files.len() >= 129 + 30,
        "{} corpus code objects",
        files.len()
    );
    let mut failures = vec![];
    let (mut decoded, mut predicted, mut yaml) = (0, 0, 0);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let r = lift::in_process(&bytes, f, &tc).unwrap_or_else(|d| panic!("{}: {d}", f.display()));
        decoded += usize::from(r.decoded);
        predicted += usize::from(r.predicted);
        yaml += usize::from(r.yaml);
        if !r.differences.is_empty() {
            failures.push(format!(
                "{}:\n{}",
                common::rel(f).display(),
                r.differences.join("\n")
            ));
        }
        if !(r.decoded && (r.predicted || r.raw_descriptors) && r.yaml) {
            failures.push(format!(
                "{}: not all in process (descriptors decoded {}, chosen {}, metadata {}; raw \
                 descriptors {})",
                common::rel(f).display(),
                r.decoded,
                r.predicted,
                r.yaml,
                r.raw_descriptors
            ));
        }
    }
    println!(
        "{} objects: descriptors decoded in process {decoded}, chosen {predicted}, metadata {yaml}",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The raw lines a lift predicts before its first identity attempt (so
/// that one assemble and link proves it) are exactly those the
/// per-instruction re-encoding run (`llvm-mc --show-encoding` of every
/// instruction) finds, with the same reason, on every corpus object: the
/// aiter sample (gfx942, gfx950 with its `v_mfma_scale_*` lines, gfx1250
/// with 15.9 % raw) and the IREE and Triton objects.
#[test]
fn raw_lines_predicted_are_those_the_reencoding_run_finds() {
    let tc = common::toolchain();
    let files = corpus();
    let mut failures = vec![];
    let (mut predicted, mut checked, mut exact) = (0, 0, 0);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let r =
            lift::raw_prediction(&bytes, f, &tc).unwrap_or_else(|d| panic!("{}: {d}", f.display()));
        predicted += r.predicted;
        checked += r.checked;
        if r.differences.is_empty() {
            exact += 1;
        } else {
            failures.push(format!(
                "{}: {} predicted, {} found; {} differ:\n{}",
                common::rel(f).display(),
                r.predicted,
                r.checked,
                r.differences.len(),
                r.differences
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    println!(
        "{} objects: raw lines predicted {predicted}, found by the re-encoding run {checked}; \
         prediction exact on {exact}",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
