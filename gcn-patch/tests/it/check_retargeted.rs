//! Register budget and wait counters after retargeting (the pipeline order).

use crate::common;

use common::{corpus_files, rel};
use gcn_embed::TargetId;
use gcn_patch::base::diag::Severity;
use gcn_patch::base::document::Document;
use gcn_patch::config::policy::RegisterPolicy;
use gcn_patch::stage::check::budget::check_registers;
use gcn_patch::stage::check::waitcnt::check_waitcnt;
use gcn_patch::stage::retarget::{retarget, RetargetOptions};

/// Targets each corpus target can be retargeted to without an ABI change.
fn family(target: &str) -> &'static [&'static str] {
    match target {
        "gfx90a" | "gfx942" | "gfx950" | "gfx9-4-generic" => {
            &["gfx90a", "gfx942", "gfx950", "gfx9-4-generic"]
        }
        "gfx908" | "gfx9-generic" => &["gfx908", "gfx9-generic", "gfx900"],
        "gfx1030" | "gfx10-3-generic" => &["gfx1030", "gfx10-3-generic"],
        "gfx1100" | "gfx11-generic" => &["gfx1100", "gfx11-generic", "gfx1102"],
        "gfx1201" | "gfx12-generic" => &["gfx1201", "gfx12-generic", "gfx1200"],
        _ => &[],
    }
}

/// Every combination retargeting refuses, on purpose: `(dumps, targets, a
/// phrase of the refusal)`, one row per reason. Any other refusal fails the
/// test, and so does a listed combination that retargets.
const EXPECTED_REFUSALS: &[(&[&str], &[&str], &str)] = &[
    // ABI: gfx90a code reads the private segment buffer from user SGPRs;
    // gfx942/gfx950 have architected flat scratch and cannot provide it.
    (
        &[
            "tests/corpus/hip/gfx90a/reduce.s",
            "tests/corpus/hip/gfx90a/saxpy.s",
            "tests/corpus/iree/gfx90a/conv.rocmasm",
            "tests/corpus/iree/gfx90a/matmul.rocmasm",
            "tests/corpus/iree/gfx90a/softmax.rocmasm",
            "tests/triton/add-gfx90a/add.amdgcn",
            "tests/triton/matmul-gfx90a/matmul.amdgcn",
            "tests/triton/softmax-gfx90a/softmax.amdgcn",
        ],
        &["gfx942", "gfx950", "gfx9-4-generic"],
        "expects the private segment buffer in its user SGPRs",
    ),
    // (The gfx1201 softmax's LLVM 24 VOPD pairs are rewritten for LLVM 22 by
    // retargeting, so it is not refused any more.)
];

/// The refusal expected for `dump` → `target`, if any.
fn expected_refusal(dump: &str, target: &str) -> Option<&'static str> {
    EXPECTED_REFUSALS
        .iter()
        .find(|(dumps, targets, _)| dumps.contains(&dump) && targets.contains(&target))
        .map(|(_, _, why)| *why)
}

#[test]
fn retargeted_corpus() {
    let mut report = vec![];
    let mut checked = 0;
    let mut refused = vec![];
    for (file, source) in corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let t = Document::from_source(&text, rel(&file));
        for to in family(source.processor.name) {
            let target = TargetId::parse(to).unwrap();
            let shown = rel(&file).display().to_string();
            let expected = expected_refusal(&shown, to);
            let r = match (retarget(&t, &RetargetOptions::new(target)), expected) {
                (Ok(r), None) => r,
                (Ok(_), Some(_)) => {
                    report.push(format!(
                        "{shown} for {to}: expected a refusal, but it retargets"
                    ));
                    continue;
                }
                (Err(e), Some(why)) => {
                    let e = e.to_string();
                    if !e.contains(why) {
                        report.push(format!(
                            "{shown} for {to}: refused for another reason than `{why}`:\n{e}"
                        ));
                    }
                    refused.push(format!("{shown} -> {to}"));
                    continue;
                }
                (Err(e), None) => {
                    report.push(format!("{shown} for {to}: unexpected refusal:\n{e}"));
                    continue;
                }
            };
            checked += 1;
            let label = format!("{} for {to}", rel(&file).display());
            // The original is compared after the same retargeting: only patches show.
            match check_registers(Some(&r.asm), &r.asm, &target, RegisterPolicy::Error, &label) {
                Ok(o) => assert!(o.notes.is_empty(), "{label}: {:?}", o.notes),
                Err(e) => report.push(format!("{label}:\n{e}")),
            }
            for d in check_waitcnt(&r.asm, &target) {
                if d.severity == Severity::Error {
                    report.push(format!("{label}:\n{d}"));
                }
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
    let listed: usize = EXPECTED_REFUSALS
        .iter()
        .map(|(d, t, _)| d.len() * t.len())
        .sum();
    assert_eq!(refused.len(), listed, "refused: {refused:?}");
    println!(
        "{checked} combinations retargeted and checked, {} refused as listed",
        refused.len()
    );
    assert!(checked >= 60, "only {checked} retargeted files checked");
}
