//! Sources per manifest: `check` and `build` of a whole library stream. The
//! plan keeps no document, each job loads and patches its source and drops
//! it, so the peak of live bytes of `gcn-patch check` (with and without
//! assembling) and `gcn-patch build` depends on the jobs in flight, not on
//! the number of sources: a scaled stand-in for all of aiter (2,909 code
//! objects; see docs/src/measurements.md, "Whole library: check and build").
//!
//! Measured without clocks: a counting global allocator counts the peak of
//! live bytes for N and 4N generated sources (each a file of many kernels,
//! a rule on each), one job at a time, so the peak does not depend on which
//! jobs happen to overlap. The engine that held every source's dump and
//! patched text until the end grew about x3 here; a streaming one stays
//! within a few percent (the reports and lock grow with the jobs, by far
//! less than a document). With two jobs at a time the peak stays under two
//! single jobs'.
//!
//! The counters are global and a test running in a parallel thread would
//! add its allocations to them: the test runs alone in a child process of
//! the test binary ([`crate::alone`]).

use std::path::Path;

use count::measure;
use gcn_patch::base::hash::sha256_hex;
use gcn_patch::ops::{self, Tools};

use crate::gen;

use crate::common;
use crate::count;

/// Kernels per generated source: about 2,400 lines, a few MB as documents.
const KERNELS: usize = 60;

/// A project of `n` sources, one kernel each, every source a file of
/// [`KERNELS`] kernels with a rule (so planning patches it too).
fn project(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir.join("asm")).unwrap();
    let mut manifest = String::new();
    for i in 0..n {
        // Each source its own text (and so its own cache key), as a
        // library's are.
        let text = format!("; source {i}\n{}", gen::many_kernels(KERNELS));
        std::fs::write(dir.join(format!("asm/s{i}.s")), &text).unwrap();
        manifest.push_str(&format!(
            "[[kernel]]\nname = \"s{i}\"\n\n[[kernel.source]]\nasm = \"asm/s{i}.s\"\n\
             sha256 = \"{}\"\ntargets = [\"gfx942\"]\n\n\
             [[kernel.source.rule]]\ninsert = [\"s_nop 0\"]\nbefore = \"s_endpgm\"\nexpect = \"any\"\n\n",
            sha256_hex(text.as_bytes())
        ));
    }
    std::fs::write(dir.join("kernels.toml"), manifest).unwrap();
}

/// Peak live bytes of check (no assembling), check and build of an
/// `n`-source project, `jobs` at once.
fn peaks(n: usize, jobs: usize) -> [(&'static str, usize); 3] {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), n);
    let manifest = dir.path().join("kernels.toml");
    let tools = Tools::default();
    let check = |assemble: bool| {
        let (report, _, peak) = measure(|| {
            let opts = ops::check::CheckOptions {
                manifest: manifest.clone(),
                depth: if assemble {
                    ops::check::Depth::Build
                } else {
                    ops::check::Depth::Checks
                },
                jobs: Some(jobs),
                tools: tools.clone(),
            };
            ops::check::check(&opts, None).unwrap_or_else(|d| panic!("{d}"))
        });
        assert_eq!(report.jobs.len(), n);
        assert!(report.jobs.iter().all(|j| j.passed), "{:#?}", report.errors);
        peak
    };
    let no_assemble = check(false);
    let assembled = check(true);
    let req = ops::build::BuildRequest {
        manifest: manifest.clone(),
        out: dir.path().join("out"),
        layout: ops::build::Layout::Build(vec![]),
        locked: false,
        jobs: Some(jobs),
        tools: tools.clone(),
    };
    let (report, _, build) =
        measure(|| ops::build::build(&req, None).unwrap_or_else(|d| panic!("{d}")));
    assert_eq!(report.rows.len(), n);
    assert_eq!(report.assembled(), n);
    [
        ("check --no-assemble", no_assemble),
        ("check", assembled),
        ("build", build),
    ]
}

#[test]
fn check_and_build_memory_does_not_grow_with_sources() {
    // Alone in a child process: the counting allocator's totals are the process's.
    if !crate::alone::in_child(
        "library_scale::check_and_build_memory_does_not_grow_with_sources",
        &[],
    ) {
        return;
    }
    // The real toolchain, or a failure saying how to install it.
    common::toolchain();
    const N: usize = 4;
    let small = peaks(N, 1);
    let large = peaks(4 * N, 1);
    let two = peaks(4 * N, 2);
    let mut failures = vec![];
    for (((what, p1), (_, p4)), (_, p2)) in small.iter().zip(&large).zip(&two) {
        let r = *p4 as f64 / *p1 as f64;
        let r2 = *p2 as f64 / *p4 as f64;
        println!(
            "{what}: peak {p1} bytes for {N} sources, {p4} for {} (x{r:.2}); {p2} with 2 jobs at once (x{r2:.2})",
            4 * N
        );
        // Streaming: flat (x1, plus the reports' growth); holding every
        // source: about x3 here.
        if r > 1.25 {
            failures.push(format!(
                "{what}: peak grew x{r:.2} for x4 sources, one job at a time"
            ));
        }
        if r2 > 2.25 {
            failures.push(format!(
                "{what}: two jobs at once peaked at x{r2:.2} one job's"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "memory grows with the manifest:\n{}",
        failures.join("\n")
    );
}
