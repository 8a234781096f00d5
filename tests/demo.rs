//! The demo package as a user meets it: what build.rs embedded, run-time
//! selection, the patched instructions in the built matmul, the examples, and
//! iree-compile accepting the patched code object.

mod common;

use std::process::Command;

use common::*;
use gcn_embed::TargetId;
use gcn_patch::config::manifest::Manifest;
use gcn_patch_demo::{KERNELS, MATMUL};

fn manifest() -> Manifest {
    Manifest::load(&repo().join("kernels.toml")).unwrap_or_else(|d| panic!("{d}"))
}

/// The `.amdhsa_code_object_version` written in the dump that builds `target`.
fn dump_code_object_version(spec: &gcn_patch::config::manifest::KernelSpec, target: &str) -> u32 {
    let source = spec
        .sources
        .iter()
        .find(|s| s.targets.iter().any(|t| t.name() == target))
        .expect("a source builds the target");
    let text = std::fs::read_to_string(&source.asm).unwrap();
    text.lines()
        .find_map(|l| l.trim().strip_prefix(".amdhsa_code_object_version"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}: no code object version", source.asm.display()))
}

#[test]
fn every_kernel_and_target_of_the_manifest_is_embedded_and_verified() {
    let m = manifest();
    assert_eq!(KERNELS.len(), m.kernels.len());
    for (spec, kernel) in m.kernels.iter().zip(KERNELS) {
        assert_eq!(spec.name, kernel.name);
        let want: Vec<String> = spec
            .sources
            .iter()
            .flat_map(|s| s.targets.iter().map(|t| t.name()))
            .collect();
        let have: Vec<String> = kernel.objects().map(|o| o.target.to_string()).collect();
        assert_eq!(have, want, "kernel {}", spec.name);
        for o in kernel.objects() {
            let target = TargetId::parse(o.target).unwrap();
            let header = gcn_embed::elf::read_header(o.bytes).unwrap();
            assert_eq!(
                header.flags(),
                gcn_embed::EFlags::for_target(&target),
                "{} {}",
                kernel.name,
                o.target
            );
            // Generic targets need code object v6; exact ones keep the dump's own
            // `.amdhsa_code_object_version` (5 for the IREE matmul, 6 for the HIP dumps).
            let want_cov = if target.processor.is_generic {
                6
            } else {
                dump_code_object_version(spec, o.target)
            };
            assert_eq!(
                Some(header.abi_version),
                gcn_embed::elf::abi_version(want_cov),
                "{} {}: code object v{want_cov} expected",
                kernel.name,
                o.target
            );
            let digest = gcn_patch::base::hash::sha256_hex(o.bytes);
            assert_eq!(
                digest, o.sha256,
                "{} {}: embedded hash",
                kernel.name, o.target
            );
            assert!(!o.kernels.is_empty());
        }
    }
}

#[test]
fn selection_follows_the_loader_rules_on_the_embedded_table() {
    let saxpy = gcn_patch_demo::kernel("saxpy").unwrap();
    let pick = |k: &gcn_embed::Kernel, isa: &str| {
        k.select(isa).map(|o| o.target).map_err(|e| e.to_string())
    };
    assert_eq!(
        pick(&MATMUL, "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
        Ok("gfx942")
    );
    assert_eq!(pick(&MATMUL, "gfx950"), Ok("gfx950"));
    assert_eq!(pick(saxpy, "gfx1101"), Ok("gfx11-generic"));
    assert_eq!(pick(saxpy, "gfx1036"), Ok("gfx10-3-generic"));
    assert_eq!(pick(saxpy, "gfx90a:sramecc+:xnack+"), Ok("gfx90a"));
    let err = pick(&MATMUL, "gfx1101").unwrap_err();
    assert!(
        err.contains("gfx942") && err.contains("gfx11-generic"),
        "{err}"
    );
}

#[test]
fn patched_wait_counters_are_in_the_built_matmul() {
    let m = manifest();
    gcn_patch::pipeline::plan(&m, &[]).unwrap_or_else(|d| panic!("{d}"));
    let patched = gcn_patch::pipeline::load(&m, 0, 0).unwrap_or_else(|d| panic!("{d}"));
    let original = std::fs::read_to_string(repo().join("asm/iree/gfx942/matmul.rocmasm")).unwrap();
    let (want, before) = (waitcnts(&patched.patched.print()), waitcnts(&original));
    assert_ne!(
        want, before,
        "the demo patches must change the wait-counter schedule"
    );
    for target in ["gfx942", "gfx950", "gfx9-4-generic"] {
        let o = MATMUL.get(target).unwrap();
        let got = waitcnts(&disassemble(o.bytes, target));
        assert_eq!(
            got, want,
            "{target}: disassembled s_waitcnt sequence differs from the patched asm"
        );
    }
}

#[test]
fn iree_compile_accepts_the_patched_matmul_and_embeds_its_exact_bytes() {
    let object = MATMUL.get("gfx942").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hsaco = dir.path().join("matmul.hsaco");
    std::fs::write(&hsaco, object.bytes).unwrap();
    let vmfb = dir.path().join("matmul.vmfb");
    let exe = MATMUL.iree_executable.unwrap();
    let out = run(Command::new(iree_compile())
        .arg(repo().join("tests/corpus/src/matmul.mlir"))
        .args(["--iree-hal-target-device=hip", "--iree-rocm-target=gfx942"])
        .arg(format!(
            "--iree-hal-substitute-executable-object={exe}={}",
            hsaco.display()
        ))
        .arg("-o")
        .arg(&vmfb));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "iree-compile failed:\n{stderr}");
    // A wrong executable name only warns and exits 0, so check the NOTE.
    assert!(
        stderr.contains("substituted"),
        "iree-compile did not substitute:\n{stderr}"
    );
    let module = std::fs::read(&vmfb).unwrap();
    assert!(
        module
            .windows(object.bytes.len())
            .any(|w| w == object.bytes),
        "the .vmfb does not contain the patched code object byte for byte"
    );
}

#[test]
fn select_example_prints_table_and_selections() {
    let out = run(Command::new(example("select")).args(["--isa", "gfx1101"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("saxpy    -> gfx11-generic"), "{text}");
    assert!(text.contains("matmul   -> error"), "{text}");
    let out = run(Command::new(example("select")).args(["--isa", "gfx950"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("matmul   -> gfx950"),
        "{text}"
    );
    let out = run(Command::new(example("select")).args(["--isa", "gfx9999"]));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("error"));
}

#[test]
fn export_example_writes_the_selected_object_and_the_iree_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.hsaco");
    let out = run(Command::new(example("export"))
        .args(["matmul", "gfx942:sramecc+:xnack-"])
        .arg(&path));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        MATMUL.get("gfx942").unwrap().bytes
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--iree-hal-substitute-executable-object=matmul_dispatch_0="),
        "{text}"
    );
}

/// Whether the dynamic loader can find a HIP runtime here, decided apart from
/// the example: `/opt/rocm/lib/libamdhip64.so`, or `libamdhip64.so` in the
/// loader cache (`ldconfig -p`).
fn hip_runtime_present() -> bool {
    std::path::Path::new("/opt/rocm/lib/libamdhip64.so").exists()
        || ["ldconfig", "/sbin/ldconfig"].iter().any(|ldconfig| {
            Command::new(ldconfig)
                .arg("-p")
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("libamdhip64.so"))
        })
}

#[test]
fn hip_load_example_selects_by_isa_with_or_without_a_hip_runtime() {
    let out = Command::new(example("hip_load"))
        .args(["--isa", "gfx1100", "--kernel", "reduce"])
        .output()
        .expect("run the hip_load example");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("selected gfx1100"), "{text}{err}");
    if hip_runtime_present() {
        // ROCm installed: the example loads the object (success) or reports
        // why HIP refused it (e.g. no gfx1100 GPU), never the missing-runtime path.
        assert!(!text.contains("no HIP runtime"), "{text}");
        assert_eq!(
            out.status.success(),
            text.contains("loaded with hipModuleLoadData"),
            "{text}{err}"
        );
    } else {
        assert!(out.status.success(), "{err}");
        assert!(text.contains("no HIP runtime"), "{text}");
        assert!(text.contains("falling back to --isa gfx1100"), "{text}");
        assert!(text.contains("not loaded"), "{text}");
    }
}
