//! A host `CFLAGS=-march=native` (and friends) in the real process environment
//! does not reach the AMDGPU assembler. The variables are set on a child
//! process of the test binary ([`crate::alone`]) that builds the object,
//! never on this process, whose other tests run in parallel threads.

use gcn_embed::TargetId;
use gcn_patch::base::document::Document;
use gcn_patch::stage::assemble::{assemble, AssembleRequest};
use gcn_patch::stage::toolchain::{Toolchain, ToolchainConfig};

// clang ignores `-march=native` for amdgcn assembly, so the per-target
// variables also carry a `-mcpu` that would break this gfx942 source if it
// reached clang (cc appends CFLAGS after its own flags).
const LEAK: &str = "-march=native -mcpu=gfx1100";
const HOST_ENV: [(&str, &str); 10] = [
    ("CFLAGS", "-march=native"),
    ("CFLAGS_amdgcn_amd_amdhsa", LEAK),
    ("CFLAGS_amdgcn-amd-amdhsa", LEAK),
    ("TARGET_CFLAGS", LEAK),
    ("HOST_CFLAGS", "-march=native"),
    ("CC", "/bin/false"),
    ("CC_amdgcn_amd_amdhsa", "/bin/false"),
    ("RUSTC_WRAPPER", "/bin/false"),
    ("CC_WRAPPER", "/bin/false"),
    ("CCC_OVERRIDE_OPTIONS", "+-march=native"),
];
/// Where the child writes the object it built.
const OBJECT: &str = "GCN_PATCH_TEST_DIRTY_OBJECT";

/// The toolchain, found without the [`HOST_ENV`] variables (as found before
/// they were set).
fn toolchain() -> Toolchain {
    let lookup = |k: &str| {
        if HOST_ENV.iter().any(|(n, _)| *n == k) {
            None
        } else {
            std::env::var(k).ok()
        }
    };
    Toolchain::find(&ToolchainConfig::default(), &lookup)
        .unwrap_or_else(|d| panic!("{d}\ninstall: `apt-get install -y clang-22 lld-22 llvm-22`"))
}

/// saxpy for gfx942, assembled in `dir`.
fn build(dir: &std::path::Path) -> Vec<u8> {
    let tc = toolchain();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/hip/gfx942/saxpy.s"),
    )
    .unwrap();
    let asm = Document::from_source(&text, "saxpy.s");
    let target = TargetId::parse("gfx942").unwrap();
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
}

#[test]
fn host_cflags_in_the_process_environment_do_not_leak() {
    // A child process of this binary builds with every HOST_ENV variable in
    // its process environment.
    let dirty_dir = tempfile::tempdir().unwrap();
    let object = dirty_dir.path().join("dirty.o");
    let mut env = HOST_ENV.to_vec();
    env.push((OBJECT, object.to_str().unwrap()));
    if crate::alone::in_child(
        "toolchain_env::host_cflags_in_the_process_environment_do_not_leak",
        &env,
    ) {
        for (k, v) in HOST_ENV {
            assert_eq!(std::env::var(k).as_deref(), Ok(v), "${k} in the child");
        }
        let dest = std::env::var_os(OBJECT).expect("the parent names the object");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dest, build(dir.path())).unwrap();
        return;
    }
    let clean_dir = tempfile::tempdir().unwrap();
    let clean = build(clean_dir.path());
    let dirty = std::fs::read(&object).unwrap();
    assert!(clean == dirty, "object changed with CFLAGS set");

    // Had those flags leaked, clang would have failed: the check above can fail.
    let out = std::process::Command::new(toolchain().clang)
        .args(["--target=amdgcn-amd-amdhsa", "-mcpu=gfx942"])
        .args(LEAK.split(' '))
        .args(["-c", "-o"])
        .arg(dirty_dir.path().join("x.o"))
        .arg(clean_dir.path().join("saxpy.s"))
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "clang accepted {LEAK} for a gfx942 source"
    );
}
