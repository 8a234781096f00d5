//! Register budget and wait counters after retargeting (the pipeline order).

mod common;

use common::{corpus_files, rel};
use gcn_embed::TargetId;
use gcn_patch::check::budget::check_registers;
use gcn_patch::check::waitcnt::check_waitcnt;
use gcn_patch::check::RegisterPolicy;
use gcn_patch::diag::Severity;
use gcn_patch::document::Document;
use gcn_patch::retarget::{retarget, RetargetOptions};

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

#[test]
fn retargeted_corpus() {
    let mut report = vec![];
    let mut checked = 0;
    for (file, source) in corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let t = Document::from_source(&text, rel(&file));
        for to in family(source.processor.name) {
            let target = TargetId::parse(to).unwrap();
            // Retargeting refuses ABI changes (e.g. gfx90a → gfx942 scratch setup).
            let Ok(r) = retarget(&t, &RetargetOptions::new(target)) else {
                continue;
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
    assert!(checked >= 60, "only {checked} retargeted files checked");
}
