//! `gcn-patch import`: one program built for several targets is one kernel
//! with a source per target (asm dumps and binaries alike), and binaries are
//! lifted into sources that build back to their own bytes.

use crate::common;

use std::path::Path;

use common::{ok, run_cli, stderr};
use gcn_patch::config::manifest::Manifest;
use gcn_patch::ops::progress::{Outcome, Progress, Task};
use object::{Object, ObjectSection};

fn manifest(dir: &Path) -> Manifest {
    Manifest::load(&dir.join("kernels.toml")).unwrap()
}

/// (kernel name, processor of each source) of the manifest.
fn shape(dir: &Path) -> Vec<(String, Vec<String>)> {
    manifest(dir)
        .kernels
        .iter()
        .map(|k| {
            let mut p: Vec<String> = k
                .sources
                .iter()
                .flat_map(|s| s.targets.iter().map(|t| t.processor.name.to_string()))
                .collect();
            p.sort();
            (k.name.clone(), p)
        })
        .collect()
}

fn text(elf: &[u8]) -> Vec<u8> {
    let f = object::File::parse(elf).unwrap();
    f.section_by_name(".text").unwrap().data().unwrap().to_vec()
}

#[test]
fn hipcc_dumps_for_two_archs_are_one_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("in")).unwrap();
    for arch in ["gfx942", "gfx1100"] {
        std::fs::copy(
            common::repo().join(format!("tests/corpus/hip/{arch}/saxpy.s")),
            dir.join(format!("in/saxpy-hip-amdgcn-amd-amdhsa-{arch}.s")),
        )
        .unwrap();
    }
    let o = ok(run_cli(
        dir,
        &[
            "import",
            "-v",
            "in/saxpy-hip-amdgcn-amd-amdhsa-gfx942.s",
            "in/saxpy-hip-amdgcn-amd-amdhsa-gfx1100.s",
        ],
    ));
    assert!(
        stderr(&o).contains("as a new source of kernel `saxpy`"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        shape(dir),
        [(
            "saxpy".to_string(),
            vec!["gfx1100".to_string(), "gfx942".to_string()]
        )]
    );
    // Importing again changes nothing.
    let before = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    ok(run_cli(dir, &["import", "in"]));
    assert_eq!(
        std::fs::read_to_string(dir.join("kernels.toml")).unwrap(),
        before
    );
    ok(run_cli(dir, &["check", "--no-assemble"]));
    ok(run_cli(dir, &["build", "--out", "out"]));
    assert!(dir.join("out/gfx942/saxpy.hsaco").is_file());
    assert!(dir.join("out/gfx1100/saxpy.hsaco").is_file());
}

#[test]
fn iree_dumps_of_one_module_for_two_targets_are_one_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for t in ["gfx942", "gfx1100"] {
        std::fs::create_dir_all(dir.join(format!("dump-{t}"))).unwrap();
        std::fs::copy(
            common::repo().join(format!("tests/corpus/iree/{t}/softmax.rocmasm")),
            dir.join(format!(
                "dump-{t}/module_softmax_dispatch_0_rocm_hsaco_fb.rocmasm"
            )),
        )
        .unwrap();
    }
    ok(run_cli(dir, &["import", "dump-gfx942", "dump-gfx1100"]));
    assert_eq!(
        shape(dir),
        [(
            "softmax_dispatch_0".to_string(),
            vec!["gfx1100".to_string(), "gfx942".to_string()]
        )]
    );
    let m = manifest(dir);
    assert_eq!(m.kernels[0].iree_executables, ["softmax_dispatch_0"]);
    ok(run_cli(dir, &["check", "--no-assemble"]));
}

/// A second kernel between the first and the new source: the source goes
/// into the right `[[kernel]]`, and a different program stays apart.
#[test]
fn a_new_source_goes_into_its_own_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir(dir.join("in")).unwrap();
    for (arch, k) in [
        ("gfx942", "saxpy"),
        ("gfx942", "reduce"),
        ("gfx1100", "saxpy"),
    ] {
        std::fs::create_dir_all(dir.join(format!("in/{arch}"))).unwrap();
        std::fs::copy(
            common::repo().join(format!("tests/corpus/hip/{arch}/{k}.s")),
            dir.join(format!("in/{arch}/{k}.s")),
        )
        .unwrap();
    }
    ok(run_cli(
        dir,
        &["import", "in/gfx942/saxpy.s", "in/gfx942/reduce.s"],
    ));
    ok(run_cli(dir, &["import", "in/gfx1100/saxpy.s"]));
    assert_eq!(
        shape(dir),
        [
            (
                "saxpy".to_string(),
                vec!["gfx1100".to_string(), "gfx942".to_string()]
            ),
            ("reduce".to_string(), vec!["gfx942".to_string()]),
        ]
    );
}

/// A HIP fat binary: one kernel, a source per member; each builds back to
/// the member's own `.text`.
#[test]
fn fat_binary_is_one_kernel_and_builds_back_to_its_members() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let host = common::repo().join("tests/corpus/containers/scale-host-compressed.o");
    let o = ok(run_cli(dir, &["import", "-v", host.to_str().unwrap()]));
    assert!(stderr(&o).contains("new source of kernel `scale_host_compressed`"));
    assert_eq!(
        shape(dir),
        [(
            "scale_host_compressed".to_string(),
            vec!["gfx1100".to_string(), "gfx942".to_string()]
        )]
    );
    let m = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    let sha = gcn_patch::base::hash::sha256_hex(&std::fs::read(&host).unwrap());
    assert_eq!(
        m.matches(&format!("imported-sha256 = \"{sha}\"")).count(),
        2,
        "{m}"
    );
    ok(run_cli(dir, &["check", "--no-assemble"]));
    ok(run_cli(dir, &["build", "--out", "out"]));
    let bytes = std::fs::read(&host).unwrap();
    let c = gcn_patch::support::lift::code_objects(&bytes, &host).unwrap();
    for member in &c.members {
        let built = std::fs::read(dir.join(format!(
            "out/{}/scale_host_compressed.hsaco",
            member.target.name()
        )))
        .unwrap();
        assert!(
            text(&built) == text(&member.bytes),
            "{}: the built .text differs from the member's",
            member.label
        );
    }
}

/// aiter ships one kernel as hsa/gfx942/…/X.co and hsa/gfx950/…/X.co: one
/// kernel, two sources, both built.
#[test]
fn aiter_gfx942_and_gfx950_of_one_kernel_are_one_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let aiter = common::repo().join("tests/corpus/aiter");
    let a = aiter.join("gfx942/topksoftmax/topksoftmax_4x128x6.co");
    let b = aiter.join("gfx950/topksoftmax/topksoftmax_4x128x6.co");
    ok(run_cli(
        dir,
        &["import", a.to_str().unwrap(), b.to_str().unwrap()],
    ));
    assert_eq!(
        shape(dir),
        [(
            "topksoftmax_4x128x6".to_string(),
            vec!["gfx942".to_string(), "gfx950".to_string()]
        )]
    );
    ok(run_cli(dir, &["check", "--no-assemble"]));
    ok(run_cli(dir, &["build", "--out", "out"]));
    for (arch, co) in [("gfx942", &a), ("gfx950", &b)] {
        let built =
            std::fs::read(dir.join(format!("out/{arch}/topksoftmax_4x128x6.hsaco"))).unwrap();
        assert!(text(&built) == text(&std::fs::read(co).unwrap()), "{arch}");
    }
}

/// Importing a binary without a toolchain is an error that says what to install.
#[test]
fn binary_import_needs_the_toolchain_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let co = common::repo().join("tests/corpus/iree/gfx942/softmax.hsaco");
    let err = gcn_patch::ops::import::import(
        &dir.path().join("kernels.toml"),
        &[co],
        &gcn_patch::ops::import::ImportOptions::default(),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("needs LLVM") && err.contains("apt-get install"),
        "{err}"
    );
    insta::assert_snapshot!(
        "binary_import_needs_llvm",
        err.replace(&common::repo().display().to_string(), "<repo>")
    );
    assert!(!dir.path().join("kernels.toml").exists());
}

/// Binaries are lifted several at once; the manifest and the asm files do
/// not depend on how many: importing the same binaries (two programs for two
/// archs each, a fat binary, an IREE hsaco) with one worker and with four
/// writes byte-identical projects, kernels and sources in argument order.
#[test]
fn parallel_lifting_writes_what_one_worker_writes() {
    let repo = common::repo();
    let inputs: Vec<std::path::PathBuf> = [
        "tests/corpus/aiter/gfx942/topksoftmax/topksoftmax_4x128x6.co",
        "tests/corpus/iree/gfx942/softmax.hsaco",
        "tests/corpus/aiter/gfx950/topksoftmax/topksoftmax_4x128x6.co",
        "tests/corpus/containers/scale-host-compressed.o",
        "tests/corpus/aiter/gfx942/all_reduce.co",
    ]
    .iter()
    .map(|p| repo.join(p))
    .collect();
    let project = |jobs: usize| {
        let dir = tempfile::tempdir().unwrap();
        let opts = gcn_patch::ops::import::ImportOptions {
            toolchain: Some(common::toolchain()),
            jobs: Some(jobs),
            ..Default::default()
        };
        // The lift phase reports each binary once, from the worker that lifted it.
        let events = std::sync::Mutex::new(Vec::new());
        let record = |p: Progress<'_>| {
            events
                .lock()
                .unwrap()
                .push((p.task, p.done, p.total, p.item.to_string(), p.outcome))
        };
        let report = gcn_patch::ops::import::import(
            &dir.path().join("kernels.toml"),
            &inputs,
            &opts,
            Some(&record),
        )
        .unwrap_or_else(|d| panic!("jobs = {jobs}: {d}"));
        let mut seen = events.into_inner().unwrap();
        seen.sort_by_key(|e| e.1);
        let mut reported: Vec<String> = seen.iter().map(|e| e.3.clone()).collect();
        reported.sort();
        let mut given: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        given.sort();
        assert_eq!(reported, given, "each binary reported once: {seen:?}");
        for (i, e) in seen.iter().enumerate() {
            assert_eq!(
                (e.0, e.1, e.2, e.4),
                (Task::Lift, i + 1, inputs.len(), Outcome::Done),
                "{seen:?}"
            );
        }
        let mut files = std::collections::BTreeMap::new();
        for e in walkdir::WalkDir::new(dir.path()).sort_by_file_name() {
            let e = e.unwrap();
            if e.file_type().is_file() {
                let rel = e.path().strip_prefix(dir.path()).unwrap().to_path_buf();
                files.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
        (report.outcomes, report.notes, files)
    };
    let one = project(1);
    let four = project(4);
    assert_eq!(one.0, four.0, "outcomes differ");
    assert_eq!(one.1, four.1, "notes differ");
    assert_eq!(
        one.2.keys().collect::<Vec<_>>(),
        four.2.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &one.2 {
        assert!(&four.2[path] == bytes, "{} differs", path.display());
    }
    // Five binaries, six code objects (the fat binary holds two): four
    // kernels, each program's pair of targets one kernel.
    assert_eq!(one.0.len(), 6, "{:?}", one.0);
    let m = String::from_utf8(one.2[std::path::Path::new("kernels.toml")].clone()).unwrap();
    assert_eq!(m.matches("[[kernel]]").count(), 4, "{m}");
}

/// aiter ships different kernels under one file name for one processor
/// (`fmha_v3_fwd/MI300/X.co` and `fmha_v3_fwd/MI308/X.co`): importing both
/// in one command gives two kernels, the second under its own directory
/// and named after it; importing them again changes nothing. (Before, the
/// second was refused as "already imported with other bytes", after the
/// first had been written.)
#[test]
fn different_binaries_of_one_file_name_are_two_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let aiter = common::repo().join("tests/corpus/aiter/gfx942/fmha_v3_fwd");
    let a = aiter.join("MI300/fwd_hd128_bf16_causal_rtna.co");
    let b = aiter.join("MI308/fwd_hd128_bf16_causal_rtna.co");
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let args = ["import", a.to_str().unwrap(), b.to_str().unwrap()];
    let o = ok(run_cli(dir, &args));
    assert_eq!(
        shape(dir),
        [
            (
                "fwd_hd128_bf16_causal_rtna".to_string(),
                vec!["gfx942".to_string()]
            ),
            (
                "MI308_fwd_hd128_bf16_causal_rtna".to_string(),
                vec!["gfx942".to_string()]
            ),
        ],
        "{}",
        stderr(&o)
    );
    let m = manifest(dir);
    assert_eq!(
        m.kernels[1].sources[0].rel,
        Path::new("asm/gfx942/MI308/fwd_hd128_bf16_causal_rtna.s")
    );
    let before = std::fs::read(dir.join("kernels.toml")).unwrap();
    // With -v, one line per file.
    let o = ok(run_cli(dir, &[&args[..], &["-v"]].concat()));
    assert_eq!(
        stderr(&o).matches("is already imported").count(),
        2,
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(dir.join("kernels.toml")).unwrap(), before);
    ok(run_cli(dir, &["check", "--no-assemble"]));
}

/// An input that fails adds nothing and keeps nothing of the others from
/// being imported: here the second binary is a file imported before whose
/// bytes changed since (an error that says to lift it over the asm); the
/// first, new, binary is imported all the same, the error says so, the
/// changed file's asm is left as it was, and the manifest is written once
/// with the new kernel only.
#[test]
fn a_failing_input_keeps_the_others_and_changes_nothing_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let aiter = common::repo().join("tests/corpus/aiter/gfx942");
    let k = dir.join("k.co");
    std::fs::copy(aiter.join("topksoftmax/topksoftmax_4x128x6.co"), &k).unwrap();
    ok(run_cli(dir, &["import", "k.co"]));
    let manifest_before = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    let k_asm = std::fs::read(dir.join("asm/gfx942/k.s")).unwrap();
    // k.co changes; fmoe_int8_g1u0_smf.co is new.
    std::fs::copy(aiter.join("all_reduce.co"), &k).unwrap();
    let new = aiter.join("fmoe_int8_g1u0_smf.co");
    let o = run_cli(dir, &["import", new.to_str().unwrap(), "k.co"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("already imported as `asm/gfx942/k.s` with other bytes")
            && e.contains("gcn-patch lift k.co -o")
            && e.contains("the other inputs were imported (1 file added to kernels.toml)"),
        "{e}"
    );
    let after = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    assert!(after.starts_with(&manifest_before), "{after}");
    assert_eq!(
        shape(dir),
        [
            ("k".to_string(), vec!["gfx942".to_string()]),
            ("fmoe_int8_g1u0_smf".to_string(), vec!["gfx942".to_string()]),
        ]
    );
    assert_eq!(std::fs::read(dir.join("asm/gfx942/k.s")).unwrap(), k_asm);
    assert!(
        files(dir)
            .iter()
            .all(|f| !f.to_string_lossy().contains(".gcn-patch-import")),
        "staging left behind: {:?}",
        files(dir)
    );
    // Importing the new one again: known by its sha256, not lifted again.
    let o = ok(run_cli(dir, &["import", "-v", new.to_str().unwrap()]));
    assert!(stderr(&o).contains("already imported"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("kernels.toml")).unwrap(),
        after
    );
}

/// clang-22 names what it dumps per processor `hist-gfx942.s`: a bare
/// `-<processor>` or `_<processor>` suffix is stripped when the rest names
/// another input, so one program is one kernel. Re-importing never renames:
/// a project that has the files as two kernels (made before this rule)
/// keeps them, and a new processor's dump joins the kernel whose imported
/// file names the same program.
#[test]
fn processor_suffixed_dumps_are_one_kernel_and_reimports_rename_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir(dir.join("in")).unwrap();
    let hip = common::repo().join("tests/corpus/hip");
    std::fs::copy(hip.join("gfx942/saxpy.s"), dir.join("in/saxpy-gfx942.s")).unwrap();
    std::fs::copy(hip.join("gfx1100/saxpy.s"), dir.join("in/saxpy_gfx1100.s")).unwrap();
    std::fs::copy(hip.join("gfx942/reduce.s"), dir.join("in/reduce-gfx942.s")).unwrap();
    ok(run_cli(
        dir,
        &[
            "import",
            "in/saxpy-gfx942.s",
            "in/saxpy_gfx1100.s",
            "in/reduce-gfx942.s",
        ],
    ));
    // Alone, `reduce-gfx942` keeps its name.
    assert_eq!(
        shape(dir),
        [
            (
                "saxpy".to_string(),
                vec!["gfx1100".to_string(), "gfx942".to_string()]
            ),
            ("reduce_gfx942".to_string(), vec!["gfx942".to_string()]),
        ]
    );

    // A project from before: `saxpy_gfx942` alone; the gfx1100 dump joins
    // it (not a new `saxpy`), and importing both again changes nothing.
    let old = tempfile::tempdir().unwrap();
    let old = old.path();
    std::fs::create_dir(old.join("in")).unwrap();
    for f in ["saxpy-gfx942.s", "saxpy_gfx1100.s"] {
        std::fs::copy(dir.join("in").join(f), old.join("in").join(f)).unwrap();
    }
    ok(run_cli(old, &["import", "in/saxpy-gfx942.s"]));
    let o = ok(run_cli(old, &["import", "-v", "in/saxpy_gfx1100.s"]));
    assert!(
        stderr(&o).contains("as a new source of kernel `saxpy_gfx942`"),
        "{}",
        stderr(&o)
    );
    let before = std::fs::read(old.join("kernels.toml")).unwrap();
    let o = ok(run_cli(
        old,
        &["import", "-v", "in/saxpy-gfx942.s", "in/saxpy_gfx1100.s"],
    ));
    assert_eq!(
        stderr(&o)
            .matches("already imported (kernel `saxpy_gfx942`")
            .count(),
        2,
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(old.join("kernels.toml")).unwrap(), before);
    ok(run_cli(old, &["check", "--no-assemble"]));
}

/// Every file under `dir` (relative), but the inputs.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().path().strip_prefix(dir).unwrap().to_path_buf())
        .filter(|p| p.extension().is_none_or(|x| x != "co"))
        .collect()
}
