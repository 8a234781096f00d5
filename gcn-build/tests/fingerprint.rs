//! Job fingerprints through gcn-build (real clang-22 + ld.lld-22): a rerun
//! with nothing changed reads no source and writes the same outputs; a
//! changed input (any file a job reads, a manifest setting) reruns exactly
//! the jobs it feeds and gives what a cold build gives; a damaged record is
//! a miss.

use std::fs;
use std::path::{Path, PathBuf};

use gcn_build::Build;

#[path = "../../tests/support/mod.rs"]
mod support;
use support::repo;

fn sha256(path: &Path) -> String {
    gcn_patch::base::hash::sha256_hex(&fs::read(path).unwrap())
}

/// The saxpy patch: an `s_nop 0` after the multiply-add.
const PATCH: &str = "--- a/asm/saxpy.s\n+++ b/asm/saxpy.s\n@@ -31,3 +31,4 @@\n \ts_waitcnt vmcnt(0)\n \tv_fmac_f32_e32 v3, s0, v2\n+\ts_nop 0\n \tglobal_store_b32 v[0:1], v3, off\n";

/// A project of two kernels (the gfx11-generic HIP dumps), each built for
/// gfx1100 and gfx11-generic (4 jobs), with every kind of input: saxpy has a
/// patch file, a rule (its wait deleted, a hazard warned about: notes) and an
/// accepted-findings file; both dumps are pinned.
fn project(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir.join("asm")).unwrap();
    fs::create_dir_all(dir.join("patches")).unwrap();
    fs::create_dir_all(dir.join("accepted")).unwrap();
    for k in ["saxpy", "reduce"] {
        fs::copy(
            repo().join(format!("tests/corpus/hip/gfx11-generic/{k}.s")),
            dir.join(format!("asm/{k}.s")),
        )
        .unwrap();
    }
    fs::write(dir.join("patches/saxpy.diff"), PATCH).unwrap();
    fs::write(dir.join("accepted/saxpy.txt"), "# nothing accepted yet\n").unwrap();
    write_manifest(dir, "");
    dir.join("kernels.toml")
}

/// The project's manifest, with `reduce_keys` in the reduce kernel's table.
fn write_manifest(dir: &Path, reduce_keys: &str) {
    let sha = |k: &str| sha256(&dir.join(format!("asm/{k}.s")));
    let text = format!(
        "[defaults]\nregisters = \"error\"\n\n\
         [[kernel]]\nname = \"saxpy\"\nhazards = \"warn\"\naccepted = \"accepted/saxpy.txt\"\n\n\
         [[kernel.source]]\nasm = \"asm/saxpy.s\"\nsha256 = \"{}\"\ntargets = [\"gfx1100\", \"gfx11-generic\"]\npatches = [\"patches/saxpy.diff\"]\n\n\
         [[kernel.source.rule]]\ndelete = \"s_waitcnt vmcnt(0)\"\n\n\
         [[kernel]]\nname = \"reduce\"\n{reduce_keys}\n\
         [[kernel.source]]\nasm = \"asm/reduce.s\"\nsha256 = \"{}\"\ntargets = [\"gfx1100\", \"gfx11-generic\"]\n",
        sha("saxpy"),
        sha("reduce")
    );
    fs::write(dir.join("kernels.toml"), text).unwrap();
}

fn build(manifest: &Path, out: &Path) -> Result<gcn_build::Output, gcn_build::Error> {
    Build::new()
        .manifest(manifest)
        .out_dir(out)
        .cargo_metadata(false)
        .write_lock(true)
        .jobs(2)
        .try_compile()
}

/// Everything a build gives, whether its objects were assembled or cached:
/// the error, or the generated Rust, the report (without the words saying
/// where each object came from), every note, the lock and the objects.
fn outcome(r: &Result<gcn_build::Output, gcn_build::Error>, out: &Path, manifest: &Path) -> String {
    match r {
        Err(e) => format!("error:\n{e}"),
        Ok(o) => {
            let read = |p: &Path| fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
            let report: Vec<String> = read(&out.join("gcn-build/report.txt"))
                .lines()
                .map(|l| l.split_once(' ').unwrap().1.to_string())
                .collect();
            let objects: Vec<String> = o
                .objects
                .iter()
                .map(|b| format!("{} {} {} {}", b.kernel, b.target, b.sha256, sha256(&b.path)))
                .collect();
            format!(
                "generated:\n{}\nreport:\n{}\nnotes:\n{}\nnotes.txt:\n{}\nlock:\n{}\nobjects:\n{}",
                read(&o.generated),
                report.join("\n"),
                o.notes.join("\n"),
                read(&out.join("gcn-build/notes.txt")),
                read(&manifest.with_file_name("kernels.lock")),
                objects.join("\n")
            )
        }
    }
}

/// A cold build of the project as it is now (a fresh output directory).
fn cold(manifest: &Path, scratch: &Path) -> String {
    let out = scratch.join(format!(
        "cold-{}",
        fs::read_dir(scratch).map_or(0, |d| d.count())
    ));
    let r = build(manifest, &out);
    if let Ok(o) = &r {
        assert_eq!(o.fingerprints.reused, 0, "a cold build reused a record");
    }
    outcome(&r, &out, manifest)
}

#[test]
fn a_rerun_with_nothing_changed_reads_no_source_and_writes_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let out = dir.path().join("out");
    let first = build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.assembled(), 4);
    assert_eq!(first.fingerprints.sources_read, 2);
    assert_eq!(first.fingerprints.reused, 0);
    assert!(
        first.notes.iter().any(|n| n.contains("GP04")),
        "the fixture's saxpy must have notes: {:?}",
        first.notes
    );
    // A rerun without records (each job loaded, patched, checked, its
    // object found in the cache): what a hit must give, byte for byte.
    fs::remove_dir_all(out.join("gcn-build/cache/records")).unwrap();
    let miss = build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(miss.fingerprints.sources_read, 2);
    assert_eq!(miss.fingerprints.reused, 0);
    assert_eq!(miss.assembled(), 0);
    let before = outcome(&Ok(miss.clone()), &out, &manifest);
    let files = support::tree_snapshot(&out.join("gcn-build"));
    let stamp = fs::metadata(&miss.generated).unwrap().modified().unwrap();
    // `touch kernels.toml`: what makes Cargo rerun the build script.
    let f = fs::File::options().append(true).open(&manifest).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    let second = build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        second.fingerprints.sources_read, 0,
        "the plan read a source"
    );
    assert_eq!(second.fingerprints.reused, 4, "a job loaded its source");
    assert_eq!(second.assembled(), 0);
    assert_eq!(outcome(&Ok(second.clone()), &out, &manifest), before);
    assert_eq!(second.notes, first.notes);
    assert_eq!(second.objects, miss.objects);
    assert_eq!(
        fs::metadata(&second.generated).unwrap().modified().unwrap(),
        stamp,
        "the generated file was rewritten"
    );
    // Byte for byte: the objects, the generated Rust, report.txt, notes.txt
    // (the records and remembered hashes may be new files).
    let again = support::tree_snapshot(&out.join("gcn-build"));
    for (path, bytes) in &files {
        if !path.starts_with("cache/records") {
            assert_eq!(again.get(path), Some(bytes), "{} changed", path.display());
        }
    }
}

/// The stat data of every file a rerun looks at (dumps, patches, the
/// accepted file, the cached and the installed objects) is remembered once
/// the file is older than the racy window: a second rerun reads none.
#[test]
fn a_rerun_hashes_no_file_whose_stat_data_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let out = dir.path().join("out");
    build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    // Past the racy window: files changed within it are hashed every time.
    std::thread::sleep(std::time::Duration::from_millis(
        gcn_patch::pipeline::fingerprint::RACY_SECONDS * 1000 + 200,
    ));
    let warm = build(&manifest, &out).unwrap();
    // The 4 cached and 4 installed objects (the first build hashed
    // neither); the 2 dumps, the patch, the accepted file and this test
    // program (in the key) too when the first build saw them within the
    // racy window (how long it took decides).
    assert!(
        (8..=13).contains(&warm.fingerprints.hashed),
        "{:?}",
        warm.fingerprints
    );
    let again = build(&manifest, &out).unwrap();
    assert_eq!(again.fingerprints.reused, 4);
    assert_eq!(again.fingerprints.hashed, 0, "a file was read again");
    // A touched dump is hashed again (one file), and still a hit.
    let f = fs::File::options()
        .append(true)
        .open(dir.path().join("asm/reduce.s"))
        .unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    let touched = build(&manifest, &out).unwrap();
    assert_eq!(touched.fingerprints.hashed, 1);
    assert_eq!(touched.fingerprints.reused, 4);
}

#[test]
fn a_changed_input_reruns_exactly_its_jobs_and_gives_the_cold_result() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let out = dir.path().join("out");
    build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));

    // Each change, then how many of the 4 jobs (saxpy's 2, reduce's 2) may
    // reuse their records.
    type Change = Box<dyn Fn(&Path)>;
    let changes: Vec<(&str, Change, usize)> = vec![
        (
            "a byte of the patch",
            Box::new(|d| {
                let p = d.join("patches/saxpy.diff");
                let t = fs::read_to_string(&p)
                    .unwrap()
                    .replace("s_nop 0", "s_nop 1");
                fs::write(p, t).unwrap();
            }),
            2,
        ),
        (
            "a kernel's option in the manifest",
            Box::new(|d| write_manifest(d, "registers = \"update\"\n")),
            2,
        ),
        (
            "the accepted-findings file",
            Box::new(|d| {
                // Accept saxpy's hazard findings for gfx1100.
                let mut text = String::from("# accepted\n");
                for n in saxpy_notes_lines(d) {
                    text.push_str(&n);
                    text.push('\n');
                }
                fs::write(d.join("accepted/saxpy.txt"), text).unwrap();
            }),
            2,
        ),
        (
            "the dump, pinned again",
            Box::new(|d| {
                let p = d.join("asm/reduce.s");
                let mut t = fs::read_to_string(&p).unwrap();
                t.push_str("\t; a comment\n");
                fs::write(p, t).unwrap();
                write_manifest(d, "registers = \"update\"\n");
            }),
            2,
        ),
        (
            "a dump's modification time only (the same bytes)",
            Box::new(|d| {
                let p = d.join("asm/reduce.s");
                let t = fs::read(&p).unwrap();
                fs::write(&p, t).unwrap();
            }),
            4,
        ),
        (
            "the dump, not pinned again (an error)",
            Box::new(|d| {
                let p = d.join("asm/reduce.s");
                let mut t = fs::read_to_string(&p).unwrap();
                t.push_str("\t; another comment\n");
                fs::write(p, t).unwrap();
            }),
            usize::MAX,
        ),
    ];
    for (what, change, reused) in changes {
        change(dir.path());
        let rerun = build(&manifest, &out);
        match (&rerun, reused) {
            (Err(_), usize::MAX) => {}
            (Ok(o), n) => assert_eq!(o.fingerprints.reused, n, "after changing {what}"),
            (r, _) => panic!(
                "after changing {what}: {:?}",
                r.as_ref().err().map(|e| e.to_string())
            ),
        }
        let rerun = outcome(&rerun, &out, &manifest);
        assert_eq!(
            rerun,
            cold(&manifest, scratch.path()),
            "after changing {what}"
        );
    }
}

/// saxpy's findings for gfx1100, as lines of an accepted file (its notes
/// read from a build of the project as it is).
fn saxpy_notes_lines(dir: &Path) -> Vec<String> {
    let m = gcn_patch::config::manifest::Manifest::load(&dir.join("kernels.toml")).unwrap();
    let plan = gcn_patch::pipeline::plan(&m, &[]).unwrap();
    plan.jobs
        .iter()
        .filter(|j| m.kernels[j.kernel].name == "saxpy" && j.target.name() == "gfx1100")
        .flat_map(|j| {
            let p = gcn_patch::pipeline::prepare_every_finding(&m, &plan, j, 22).unwrap();
            p.notes
                .iter()
                .map(|d| gcn_patch::config::accept::Finding::of(&j.target, d).to_line())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The test that fails when a file a job reads is left out of its
/// fingerprint: every file of the project, emptied in turn, changes the
/// build's result (to an error, or other objects or notes), and the rerun
/// gives exactly what a cold build gives.
#[test]
fn every_file_a_job_reads_is_in_its_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let out = dir.path().join("out");
    // The accepted file must accept something, so that emptying it shows.
    let lines = saxpy_notes_lines(dir.path());
    assert!(!lines.is_empty());
    fs::write(
        dir.path().join("accepted/saxpy.txt"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    let first = outcome(&build(&manifest, &out), &out, &manifest);
    let files: Vec<PathBuf> = walk(dir.path())
        .into_iter()
        .filter(|p| !p.starts_with(&out) && p.file_name().is_some_and(|n| n != "kernels.lock"))
        .collect();
    assert_eq!(files.len(), 5, "{files:?}");
    for file in files {
        let saved = fs::read(&file).unwrap();
        // Warm: the records of the project as it is.
        build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
        fs::write(&file, "").unwrap();
        let rerun = outcome(&build(&manifest, &out), &out, &manifest);
        assert_ne!(rerun, first, "emptying {} changed nothing", file.display());
        assert_eq!(
            rerun,
            cold(&manifest, scratch.path()),
            "emptying {}",
            file.display()
        );
        fs::write(&file, saved).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn a_damaged_record_or_a_missing_object_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = project(dir.path());
    let out = dir.path().join("out");
    let first = build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    let expected = outcome(&Ok(first), &out, &manifest);
    let records = out.join("gcn-build/cache/records");
    let of_kind = |ext: &str| -> Vec<PathBuf> {
        walk(&records)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect()
    };
    assert_eq!(of_kind("job").len(), 4);
    assert_eq!(of_kind("src").len(), 2);
    // Truncated, garbage, empty, another format: each job record is a miss.
    for (i, p) in of_kind("job").iter().enumerate() {
        let bytes = fs::read(p).unwrap();
        let damaged: Vec<u8> = match i {
            0 => bytes[..bytes.len() / 2].to_vec(),
            1 => b"\xff\xfe garbage".to_vec(),
            2 => Vec::new(),
            _ => String::from_utf8(bytes)
                .unwrap()
                .replace("job-record-v1", "job-record-v0")
                .into_bytes(),
        };
        fs::write(p, damaged).unwrap();
    }
    for p in of_kind("src") {
        fs::write(p, "").unwrap();
    }
    fs::write(records.join("files.txt"), "damaged\n").unwrap();
    let r = build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.fingerprints.reused, 0);
    assert_eq!(r.fingerprints.sources_read, 2);
    assert_eq!(outcome(&Ok(r), &out, &manifest), expected);
    // Rewritten by that build: every record reused again.
    let r = build(&manifest, &out).unwrap();
    assert_eq!(r.fingerprints.reused, 4);
    // An object gone from the cache (or damaged) behind a good record: the
    // job runs, and the object is assembled again.
    let cache = out.join("gcn-build/cache");
    for p in walk(&cache)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "hsaco"))
    {
        fs::write(p, b"not an object").unwrap();
    }
    let r = build(&manifest, &out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.fingerprints.reused, 0);
    assert_eq!(r.assembled(), 4);
    assert_eq!(outcome(&Ok(r), &out, &manifest), expected);
}
