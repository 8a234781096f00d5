//! The line model's memory, counted by a counting global allocator (see
//! `benches/line_model.rs` for the figures at a million lines and the
//! "Line model" section of the measurements page): a parsed document's live
//! heap bytes per line, what a copy of it costs, and the peak of live heap
//! bytes per line through patch + checks. Deterministic: bytes are counted,
//! not timed.
//!
//! The counters are global and a test running in a parallel thread would
//! add its allocations to them: the test runs alone in a child process of
//! the test binary ([`crate::alone`]).

use gcn_patch::base::document::{Document, Edits};
use gcn_patch::base::hash::sha256_hex;
use gcn_patch::base::provenance::Origin;
use gcn_patch::config::manifest::Manifest;
use gcn_patch::pipeline;

use crate::count;
use crate::gen;

/// Live heap bytes per line of a parsed document of the generated kernel
/// (334; was 436, then 368 before modifiers lost their growth slack).
const DOCUMENT_BYTES_PER_LINE: f64 = 345.0;
/// Live heap bytes per line that an edited copy of a document adds: its
/// line handles and origins; texts and kinds are shared.
const COPY_BYTES_PER_LINE: f64 = 56.0;
/// Peak live heap bytes per line while loading, patching (a diff and
/// rules) and preparing one job (retarget, every check, the assembler's
/// input): 587 at 20k lines (was 2,174 at 10k lines, then 1,032 before
/// the changes of the measurements page's "Line model" section that cut
/// it to 600 or less).
const PIPELINE_PEAK_BYTES_PER_LINE: f64 = 610.0;

#[test]
fn the_line_model_stays_within_its_bytes_per_line() {
    // Alone in a child process: the counting allocator's totals are the process's.
    if !crate::alone::in_child(
        "line_model::the_line_model_stays_within_its_bytes_per_line",
        &[],
    ) {
        return;
    }
    let mut failures = vec![];
    let mut check = |what: &str, bytes: usize, lines: usize, bound: f64| {
        let per_line = bytes as f64 / lines as f64;
        println!(
            "{what}: {bytes} bytes for {lines} lines, {per_line:.0} bytes per line (bound {bound})"
        );
        if per_line > bound {
            failures.push(format!(
                "{what}: {per_line:.0} bytes per line, more than {bound}"
            ));
        }
    };

    let (text, _) = gen::generate(100_000);
    let (doc, kept, _) = count::measure(|| Document::from_source(&text, "big.s"));
    let n = doc.len();
    assert_eq!(doc.print(), text, "the round trip is lossless");
    check("parsed document", kept, n, DOCUMENT_BYTES_PER_LINE);

    // A copy with one line replaced: the retarget stage and the first
    // diff make such copies.
    let (copy, kept, _) = count::measure(|| {
        let mut e = Edits::new();
        e.replace(
            7,
            doc.styled(7, "s_nop 0"),
            Origin::Generated("test".into()),
        );
        doc.applied(e)
    });
    assert_eq!(copy.len(), n);
    assert_eq!(copy.text(7), "\ts_nop 0");
    assert_eq!(copy.text(8), doc.text(8));
    check("edited copy", kept, n, COPY_BYTES_PER_LINE);
    drop((doc, copy));

    // Patch + checks, as `build_speed` part 5 measures them, on 20k lines.
    let (text, _) = gen::generate(20_000);
    let n = text.lines().count();
    let dir = tempfile::tempdir().unwrap();
    let diff = diffy::create_patch(&text, &gen::edited(&text)).to_string();
    std::fs::write(dir.path().join("big.s"), &text).unwrap();
    std::fs::write(dir.path().join("big.diff"), &diff).unwrap();
    std::fs::write(
        dir.path().join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"big\"\nhazards = \"warn\"\n[[kernel.source]]\nasm = \"big.s\"\nsha256 = \"{}\"\ntargets = [\"gfx942\"]\npatches = [\"big.diff\"]\n{}",
            sha256_hex(text.as_bytes()),
            gen::RULES
        ),
    )
    .unwrap();
    drop((text, diff));
    let (notes, _, peak) = count::measure(|| {
        let m = Manifest::load(&dir.path().join("kernels.toml")).unwrap_or_else(|e| panic!("{e}"));
        let plan = pipeline::plan(&m, &[]).unwrap_or_else(|e| panic!("{e}"));
        let prepared = pipeline::prepare(&m, &plan, &plan.jobs[0], 22)
            .unwrap_or_else(|d| panic!("{}", d.0[0].message));
        prepared.notes.len()
    });
    assert!(notes > 0, "the rules' notes");
    check(
        "patch + checks (peak)",
        peak,
        n,
        PIPELINE_PEAK_BYTES_PER_LINE,
    );

    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
