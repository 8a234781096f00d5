//! A host `CFLAGS=-march=native` (and friends) in the real process environment
//! does not reach the AMDGPU assembler. Its own test binary: it sets process
//! environment variables, which must not race with other tests.

use gcn_embed::TargetId;
use gcn_patch::base::document::Document;
use gcn_patch::stage::assemble::{assemble, AssembleRequest};
use gcn_patch::stage::toolchain::{Toolchain, ToolchainConfig};

#[test]
fn host_cflags_in_the_process_environment_do_not_leak() {
    let tc = Toolchain::find(&ToolchainConfig::default(), &|k| std::env::var(k).ok())
        .unwrap_or_else(|d| panic!("{d}\ninstall: `apt-get install -y clang-22 lld-22 llvm-22`"));
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/hip/gfx942/saxpy.s"),
    )
    .unwrap();
    let asm = Document::from_source(&text, "saxpy.s");
    let target = TargetId::parse("gfx942").unwrap();
    let build = |dir: &std::path::Path| {
        let obj = assemble(&AssembleRequest {
            toolchain: &tc,
            asm: &asm,
            target: &target,
            work_dir: dir,
            name: "saxpy",
            label: "kernel `saxpy` for gfx942",
        })
        .unwrap_or_else(|d| panic!("{d}"));
        std::fs::read(obj).unwrap()
    };
    let clean_dir = tempfile::tempdir().unwrap();
    let clean = build(clean_dir.path());

    // clang ignores `-march=native` for amdgcn assembly, so the per-target
    // variables also carry a `-mcpu` that would break this gfx942 source if it
    // reached clang (cc appends CFLAGS after its own flags).
    let leak = "-march=native -mcpu=gfx1100";
    for (k, v) in [
        ("CFLAGS", "-march=native"),
        ("CFLAGS_amdgcn_amd_amdhsa", leak),
        ("CFLAGS_amdgcn-amd-amdhsa", leak),
        ("TARGET_CFLAGS", leak),
        ("HOST_CFLAGS", "-march=native"),
        ("CC", "/bin/false"),
        ("CC_amdgcn_amd_amdhsa", "/bin/false"),
        ("RUSTC_WRAPPER", "/bin/false"),
        ("CC_WRAPPER", "/bin/false"),
        ("CCC_OVERRIDE_OPTIONS", "+-march=native"),
    ] {
        // This binary has one test: no other thread reads the environment.
        std::env::set_var(k, v);
    }
    let dirty_dir = tempfile::tempdir().unwrap();
    let dirty = build(dirty_dir.path());
    assert!(clean == dirty, "object changed with CFLAGS set");

    // Had those flags leaked, clang would have failed: the check above can fail.
    let out = std::process::Command::new(&tc.clang)
        .args(["--target=amdgcn-amd-amdhsa", "-mcpu=gfx942"])
        .args(leak.split(' '))
        .args(["-c", "-o"])
        .arg(dirty_dir.path().join("x.o"))
        .arg(dirty_dir.path().join("saxpy.s"))
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "clang accepted {leak} for a gfx942 source"
    );
}
