//! Kernels per file: the work of every stage (parse, patch, retarget, the
//! checks, the assembler's input, lint) grows linearly with the number of
//! kernels in one file. Measured without clocks: a counting global
//! allocator counts the bytes each stage allocates and
//! its peak of live bytes, for N and 4N generated kernels; the ratio must be
//! near 4. A stage that handles each kernel by scanning or copying the rest
//! of the file (the bug: a kernel without an end label ran to the end of the
//! file) gives a ratio near 16.
//!
//! The counters are global and a test running in a parallel thread would
//! add its allocations to them: the test runs alone in a child process of
//! the test binary ([`crate::alone`]).

use gcn_embed::TargetId;
use gcn_patch::base::document::Document;
use gcn_patch::base::hash::sha256_hex;
use gcn_patch::config::manifest::Manifest;
use gcn_patch::pipeline;
use gcn_patch::stage::check::hazard::{self, LintOptions};
use gcn_patch::stage::retarget::{self, RetargetOptions};

use crate::gen;

use crate::count;

use count::measure_allocated as measure;

/// (stage, bytes allocated, peak live bytes) of every stage on `n` kernels.
fn stages(n: usize, end_labels: bool) -> Vec<(&'static str, usize, usize)> {
    let gfx942 = TargetId::parse("gfx942").unwrap();
    let gfx950 = TargetId::parse("gfx950").unwrap();
    let text = gen::many_kernels_with(n, end_labels);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("asm")).unwrap();
    std::fs::write(dir.path().join("asm/many.s"), &text).unwrap();
    // A rule on every kernel and one on a single kernel: the patch stage
    // edits all kernels and looks one up.
    std::fs::write(
        dir.path().join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"many\"\n\n[[kernel.source]]\nasm = \"asm/many.s\"\n\
             sha256 = \"{}\"\ntargets = [\"gfx942\", \"gfx950\"]\n\n\
             [[kernel.source.rule]]\ninsert = [\"s_nop 0\"]\nbefore = \"s_endpgm\"\nexpect = \"any\"\n\n\
             [[kernel.source.rule]]\nset = \".amdhsa_next_free_vgpr\"\nvalue = 8\nkernel = \"k3\"\n",
            sha256_hex(text.as_bytes())
        ),
    )
    .unwrap();
    let mut out = vec![];
    let (doc, a, p) = measure(|| Document::from_source(&text, "many.s"));
    out.push(("parse", a, p));
    let (kernels, a, p) = measure(|| doc.kernels().len());
    assert_eq!(kernels, n);
    out.push(("kernels", a, p));
    let (findings, a, p) = measure(|| {
        hazard::lint(
            &doc,
            &gfx942,
            LintOptions {
                suggest: true,
                ..LintOptions::default()
            },
        )
    });
    assert!(
        findings
            .iter()
            .all(|d| d.severity != gcn_patch::base::diag::Severity::Error),
        "the generated kernels have no hazard"
    );
    out.push(("lint --suggest", a, p));
    let (r, a, p) = measure(|| {
        retarget::retarget(
            &doc,
            &RetargetOptions {
                target: gfx950,
                code_object_version: None,
                assembler_llvm_major: 22,
            },
        )
    });
    r.unwrap_or_else(|d| panic!("{d}"));
    out.push(("retarget", a, p));
    drop(doc);
    let manifest =
        Manifest::load(&dir.path().join("kernels.toml")).unwrap_or_else(|e| panic!("{e}"));
    let (plan, a, p) = measure(|| pipeline::plan(&manifest, &[]).unwrap_or_else(|d| panic!("{d}")));
    out.push(("load + patch", a, p));
    assert_eq!(plan.jobs.len(), 2);
    for job in &plan.jobs {
        let (asm, a, p) = measure(|| {
            let prepared =
                pipeline::prepare(&manifest, &plan, job, 22).unwrap_or_else(|d| panic!("{d}"));
            assert_eq!(prepared.symbols.len(), n);
            // What the assembler reads.
            prepared.asm.print()
        });
        assert_eq!(asm.matches("\ts_nop 0\n").count(), n);
        out.push((
            if job.target == gfx942 {
                "prepare gfx942 (retarget, checks, assembler input)"
            } else {
                "prepare gfx950 (retarget, checks, assembler input)"
            },
            a,
            p,
        ));
    }
    out
}

#[test]
fn work_and_memory_are_linear_in_kernels_per_file() {
    // Alone in a child process: the counting allocator's totals are the process's.
    if !crate::alone::in_child("scale::work_and_memory_are_linear_in_kernels_per_file", &[]) {
        return;
    }
    const N: usize = 150;
    let mut failures = vec![];
    for end_labels in [true, false] {
        let layout = if end_labels {
            "dump layout (.Lfunc_end labels)"
        } else {
            "lifted layout (.size k, 116; no end label)"
        };
        let small = stages(N, end_labels);
        let large = stages(4 * N, end_labels);
        for ((stage, a1, p1), (_, a4, p4)) in small.iter().zip(&large) {
            let (ra, rp) = (*a4 as f64 / *a1 as f64, *p4 as f64 / *p1 as f64);
            println!(
                "{layout}: {stage}: allocated {a1} -> {a4} bytes (x{ra:.2}), peak {p1} -> {p4} bytes (x{rp:.2})"
            );
            // Linear: x4 (a little less where a fixed cost shows, a
            // little more where a vector's doubling lands differently);
            // quadratic: x16.
            for (what, r) in [("allocated bytes", ra), ("peak live bytes", rp)] {
                if !(2.5..=6.0).contains(&r) {
                    failures.push(format!(
                        "{layout}: {stage}: {what} grew x{r:.2} for x4 kernels"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "not linear:\n{}", failures.join("\n"));
}
