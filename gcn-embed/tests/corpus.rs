//! Target IDs and e_flags against the real corpus (tests/corpus at the
//! workspace root): IREE 3.13 dumps and code objects, clang-22 HIP asm.

use std::fs;

use gcn_embed::elf::read_header;
use gcn_embed::{select, CodeObject, EFlags, TargetId};

#[path = "../../tests/support/mod.rs"]
mod support;
use support::corpus;

/// The quoted operand of `.amdgcn_target` and the `amdhsa.target:` value.
fn targets_in(asm: &str) -> (String, String) {
    let directive = asm
        .lines()
        .find_map(|l| l.trim().strip_prefix(".amdgcn_target"))
        .expect(".amdgcn_target present")
        .trim()
        .trim_matches('"')
        .to_string();
    let meta = asm
        .lines()
        .find_map(|l| l.trim().strip_prefix("amdhsa.target:"))
        .expect("amdhsa.target present")
        .trim()
        .to_string();
    (directive, meta)
}

#[test]
fn iree_targets_and_e_flags() {
    let dir = corpus();
    let index = fs::read_to_string(dir.join("iree/index.tsv")).unwrap();
    let mut rows = 0;
    for line in index.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (target, asm, hsaco) = (cols[1], cols[3], cols[4]);
        let asm = fs::read_to_string(dir.join(asm)).unwrap();
        let (directive, meta) = targets_in(&asm);
        // IREE 3.13 writes the LLVM 23+ triple: amdgpu9.42-amd-amdhsa-unknown-gfx942.
        assert!(directive.starts_with("amdgpu"), "{directive}");
        let t = TargetId::parse(&directive).unwrap();
        assert_eq!(t.name(), target);
        assert_eq!(TargetId::parse(&meta).unwrap(), t);
        assert_eq!(t.llvm23_name(), directive);
        // IREE's code object: v5, e_flags exactly what LLVM writes for the
        // target (gfx942: 0x54c, xnack any, sramecc any).
        let bytes = fs::read(dir.join(hsaco)).unwrap();
        let h = read_header(&bytes).unwrap();
        assert_eq!(h.code_object_version(), Some(5), "{hsaco}");
        assert_eq!(h.e_flags, EFlags::for_target(&t).encode(), "{hsaco}");
        assert_eq!(h.flags().target_id(), Some(t));
        rows += 1;
    }
    assert_eq!(rows, 16);
    let gfx942 = read_header(&fs::read(dir.join("iree/gfx942/matmul.hsaco")).unwrap()).unwrap();
    assert_eq!(gfx942.e_flags, 0x54c);
}

#[test]
fn iree_objects_select_like_the_loader() {
    let dir = corpus();
    let objects: Vec<CodeObject> = ["gfx942", "gfx950", "gfx90a", "gfx1100", "gfx1201"]
        .iter()
        .map(|t| {
            let bytes = fs::read(dir.join(format!("iree/{t}/matmul.hsaco"))).unwrap();
            CodeObject {
                target: t,
                bytes: Box::leak(bytes.into_boxed_slice()),
                sha256: "",
                kernels: &["matmul_dispatch_0"],
            }
        })
        .collect();
    let pick = |agent: &str| select(&objects, agent).map(|o| o.target);
    assert_eq!(
        pick("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
        Ok("gfx942")
    );
    assert_eq!(
        pick("amdgcn-amd-amdhsa--gfx950:sramecc+:xnack-"),
        Ok("gfx950")
    );
    assert_eq!(pick("gfx90a:sramecc-:xnack+"), Ok("gfx90a"));
    assert_eq!(pick("amdgcn-amd-amdhsa--gfx1201"), Ok("gfx1201"));
    // No generic objects in IREE's output: gfx1101 has nothing to run.
    let e = select(&objects, "amdgcn-amd-amdhsa--gfx1101").unwrap_err();
    assert_eq!(e.rejected().len(), 5);
}

#[test]
fn hip_asm_targets() {
    let dir = corpus().join("hip");
    let mut n = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let target_dir = entry.unwrap().path();
        let target = target_dir
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        for f in fs::read_dir(&target_dir).unwrap() {
            let f = f.unwrap().path();
            let (directive, meta) = targets_in(&fs::read_to_string(&f).unwrap());
            let t = TargetId::parse(&directive).unwrap();
            assert_eq!(t.name(), target, "{}", f.display());
            assert_eq!(t.hsa_isa_name(), directive);
            assert_eq!(TargetId::parse(&meta).unwrap(), t);
            n += 1;
        }
    }
    assert!(n >= 22, "{n} HIP files");
}
