//! `gcn-patch import`: one program built for several targets is one kernel
//! with a source per target (asm dumps and binaries alike), and binaries are
//! lifted into sources that build back to their own bytes.

mod common;

use std::path::Path;

use common::{ok, run_cli, stderr};
use gcn_patch::manifest::Manifest;
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
    let o = ok(run_cli(dir, &["import", host.to_str().unwrap()]));
    assert!(stderr(&o).contains("new source of kernel `scale_host_compressed`"));
    assert_eq!(
        shape(dir),
        [(
            "scale_host_compressed".to_string(),
            vec!["gfx1100".to_string(), "gfx942".to_string()]
        )]
    );
    let m = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    let sha = gcn_patch::manifest::sha256_hex(&std::fs::read(&host).unwrap());
    assert_eq!(
        m.matches(&format!("imported-sha256 = \"{sha}\"")).count(),
        2,
        "{m}"
    );
    ok(run_cli(dir, &["check", "--no-assemble"]));
    ok(run_cli(dir, &["build", "--out", "out"]));
    let bytes = std::fs::read(&host).unwrap();
    let c = gcn_patch::lift::container::code_objects(&bytes, &host).unwrap();
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
    let err = gcn_patch::import::import_with(
        &dir.path().join("kernels.toml"),
        &[co],
        &gcn_patch::import::ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("needs LLVM") && err.contains("apt-get install"),
        "{err}"
    );
    assert!(!dir.path().join("kernels.toml").exists());
}
