//! Identity and cross builds of the real IREE and Triton corpora with the real LLVM 22.
//!
//! * Every IREE and Triton dump, retargeted to its own target, assembled with clang-22 and
//!   linked with ld.lld-22, gives the same code as the compiler's own `.hsaco`:
//!   the same metadata note (`.note`, byte for byte: the metadata keeps the
//!   compiler's spelling of the target) and kernel descriptors (code-entry
//!   offset included: nothing moves); byte-identical `.text` and `.rodata` on
//!   gfx9; on gfx11/gfx12 the same disassembly (LLVM 22 and 24 encode some
//!   unused instruction fields differently there).
//! * Dumps that cannot be built with LLVM 22 are listed with the reason, and the
//!   test checks that the error says so.
//! * Cross builds: the gfx942 matmul for gfx950 and gfx9-4-generic, and the
//!   error for gfx1100.
//! * Determinism across output directories.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use gcn_embed::elf::EFlags;
use gcn_embed::{Generation, TargetId};
use gcn_patch::base::document::Document;
use gcn_patch::base::provenance::Origin;
use gcn_patch::config::policy::RegisterPolicy;
use gcn_patch::pipeline::{self, Prepared};
use gcn_patch::stage::retarget::RetargetOptions;
use gcn_patch::stage::toolchain::Toolchain;
use gcn_patch::stage::verify;

use common::{corpus, toolchain};

/// Dumps LLVM 22 genuinely cannot assemble: (compiler, op, target, a phrase
/// the error must contain, the reason). None now: the IREE gfx1201 softmax's
/// VOPD pairs are rewritten (see [`rewritten_pairs`]), and the Triton gfx1201
/// matmul's True16 instructions (`v_mov_b16_e32 v1.l, 0`) assemble with
/// `+real-true16`, which the assembler gets when a dump names 16-bit
/// register halves ([`gcn_patch::stage::assemble::asm_features`]).
const KNOWN_UNBUILDABLE: &[(&str, &str, &str, &str, &str)] = &[];

/// Dumps whose build must rewrite lines for LLVM 22 (gfx12 VOPD pairs that
/// read one VGPR in both halves), with how many lines: (compiler, op, target, lines).
/// Triton's gfx1201 matmul has 14 such pairs, all two `v_dual_mov_b32`,
/// which LLVM 22 takes as they are (only their destinations obey the bank
/// rule): none is rewritten.
const REWRITTEN: &[(&str, &str, &str, usize)] = &[
    ("IREE", "softmax", "gfx1201", 2),
    ("Triton", "softmax", "gfx1201", 3),
];

/// The VOPD lines retargeting rewrote: (original line, its replacement
/// lines), whitespace collapsed, in order.
fn rewritten_pairs(input: &Document, p: &Prepared) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (text, origin) in p.asm.texts_with_origins() {
        let Origin::Retarget { replaces, what } = origin else {
            continue;
        };
        if !what.starts_with("VOPD") {
            continue;
        }
        match replaces.as_deref() {
            Some(Origin::Source { line, .. }) => {
                out.push((squash(input.text(line - 1)), vec![squash(text)]))
            }
            None => out
                .last_mut()
                .expect("a split's second line")
                .1
                .push(squash(text)),
            Some(o) => panic!("unexpected origin {o:?}"),
        }
    }
    out
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Our disassembly is the compiler's except that each rewritten pair (in order)
/// reads as its replacement.
fn same_but_rewritten(ours: &str, theirs: &str, pairs: &[(String, Vec<String>)], what: &str) {
    let ours: Vec<String> = ours.lines().map(squash).collect();
    let theirs: Vec<String> = theirs.lines().map(squash).collect();
    let (mut i, mut j, mut next) = (0, 0, 0);
    while i < theirs.len() {
        if ours.get(j) == Some(&theirs[i]) {
            i += 1;
            j += 1;
            continue;
        }
        let Some((old, new)) = pairs.get(next) else {
            panic!(
                "{what}: disassembly differs outside the rewritten pairs at `{}` / {:?}",
                theirs[i],
                ours.get(j)
            );
        };
        assert_eq!(
            &theirs[i], old,
            "{what}: the compiler's object has another line here"
        );
        assert_eq!(
            &ours[j..j + new.len()],
            &new[..],
            "{what}: our object has another rewrite"
        );
        i += 1;
        j += new.len();
        next += 1;
    }
    assert_eq!(j, ours.len(), "{what}: extra lines at the end");
    assert_eq!(
        next,
        pairs.len(),
        "{what}: a rewrite does not show in the disassembly"
    );
}

struct Row {
    op: String,
    target: String,
    rocmasm: PathBuf,
    hsaco: PathBuf,
    rel: String,
}

fn rows() -> Vec<Row> {
    let index = std::fs::read_to_string(corpus().join("iree/index.tsv"))
        .expect("tests/corpus/iree/index.tsv missing: run tests/corpus/regen.sh");
    let rows: Vec<Row> = index
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Row {
                op: f[0].into(),
                target: f[1].into(),
                rocmasm: corpus().join(f[3]),
                hsaco: corpus().join(f[4]),
                rel: format!("tests/corpus/{}", f[3]),
            }
        })
        .collect();
    assert!(
        rows.len() >= 15,
        "expected 3 ops x 5 targets in index.tsv, found {}",
        rows.len()
    );
    rows
}

/// Triton's corpus: each `.amdgcn` beside Triton's own `.hsaco`.
fn triton_rows() -> Vec<Row> {
    common::triton_files()
        .into_iter()
        .map(|(amdgcn, target)| {
            let op = amdgcn.file_stem().unwrap().to_string_lossy().to_string();
            Row {
                rel: common::rel(&amdgcn).to_string_lossy().replace('\\', "/"),
                hsaco: amdgcn.with_extension("hsaco"),
                rocmasm: amdgcn,
                target: target.name(),
                op,
            }
        })
        .collect()
}

fn prepare(
    asm: &Document,
    kernel: &str,
    target: TargetId,
    tc: &Toolchain,
) -> Result<Prepared, String> {
    let opts = RetargetOptions {
        target,
        code_object_version: None,
        assembler_llvm_major: tc.version.major,
    };
    pipeline::prepare_traced(kernel, None, asm, &opts, RegisterPolicy::Error)
        .map_err(|d| d.to_string())
}

/// Build with the toolchain's assembler (llvm-mc next to clang-22), and
/// again with `clang -cc1as`: the two objects must be the same bytes.
fn build(tc: &Toolchain, p: &Prepared, dir: &Path) -> Result<Vec<u8>, String> {
    assert!(
        tc.assembler_mc().is_some(),
        "no llvm-mc next to {}: apt-get install -y llvm-22 (or bash tests/setup.sh)",
        tc.clang.display()
    );
    let out = dir.join("out.hsaco");
    pipeline::build(tc, p, dir, &out).map_err(|d| d.to_string())?;
    let bytes = std::fs::read(&out).unwrap();
    let clang_only = Toolchain {
        llvm_mc: None,
        ..tc.clone()
    };
    let (by_clang, _) = pipeline::build_bytes(&clang_only, p, dir).map_err(|d| d.to_string())?;
    assert!(
        by_clang == bytes,
        "{} for {}: llvm-mc and clang -cc1as assembled different objects",
        p.kernel,
        p.target.name()
    );
    Ok(bytes)
}

/// The HIP corpus, each dump for its own target: llvm-mc and `clang -cc1as`
/// give the same code objects (the IREE and Triton dumps are compared in
/// [`build`]).
#[test]
fn llvm_mc_and_clang_assemble_the_hip_corpus_identically() {
    let tc = toolchain();
    let mut compared = 0;
    for entry in std::fs::read_dir(corpus().join("hip")).unwrap() {
        let dir = entry.unwrap().path();
        let target = TargetId::parse(&dir.file_name().unwrap().to_string_lossy()).unwrap();
        for k in ["saxpy", "reduce"] {
            let rel = format!("tests/corpus/hip/{}/{k}.s", target.name());
            let text = std::fs::read_to_string(dir.join(format!("{k}.s"))).unwrap();
            let p = prepare(&Document::from_source(&text, &rel), k, target, &tc)
                .unwrap_or_else(|e| panic!("{rel}: {e}"));
            let work = tempfile::tempdir().unwrap();
            build(&tc, &p, work.path()).unwrap_or_else(|e| panic!("{rel}: {e}"));
            compared += 1;
        }
    }
    assert_eq!(compared, 22, "HIP dumps compared");
}

fn disasm(bytes: &[u8], mcpu: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.hsaco");
    std::fs::write(&f, bytes).unwrap();
    let out = Command::new("llvm-objdump-22")
        .args([
            "-d",
            "--no-show-raw-insn",
            "--no-leading-addr",
            &format!("--mcpu={mcpu}"),
        ])
        .arg(&f)
        .output()
        .expect("llvm-objdump-22 missing: apt-get install -y llvm-22 (or bash tests/setup.sh)");
    assert!(out.status.success());
    // Keep the instructions: drop the file-name header and the `// address: encoding` comments
    // (the encodings of unused fields differ between LLVM 22 and 24 on gfx11/12).
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(2)
        .map(|l| l.split("//").next().unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_iree_dump_rebuilds_identically_for_its_own_target() {
    rebuild_identically(rows(), "IREE");
}

#[test]
fn every_triton_dump_rebuilds_identically_for_its_own_target() {
    rebuild_identically(triton_rows(), "Triton");
}

fn rebuild_identically(rows: Vec<Row>, compiler: &str) {
    let tc = toolchain();
    let mut checked = 0;
    let total = rows.len();
    for row in rows {
        let what = format!("{compiler} {} {}", row.op, row.target);
        let text = std::fs::read_to_string(&row.rocmasm).unwrap();
        let asm = Document::from_source(&text, &row.rel);
        let target = TargetId::parse(&row.target).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let prepared = prepare(&asm, &row.op, target, &tc);
        let pairs = prepared
            .as_ref()
            .map(|p| rewritten_pairs(&asm, p))
            .unwrap_or_default();
        let expected = REWRITTEN
            .iter()
            .find(|(c, op, t, _)| *c == compiler && *op == row.op && *t == row.target)
            .map_or(0, |r| r.3);
        assert_eq!(pairs.len(), expected, "{what}: rewritten VOPD lines");
        let built = prepared.and_then(|p| build(&tc, &p, dir.path()));
        if let Some((_, _, _, phrase, reason)) = KNOWN_UNBUILDABLE
            .iter()
            .find(|(c, op, t, _, _)| *c == compiler && *op == row.op && *t == row.target)
        {
            let err = built.expect_err(&format!(
                "{what} is listed as unbuildable ({reason}) but built"
            ));
            assert!(
                err.contains(phrase),
                "{what}: error should name the construct:\n{err}"
            );
            assert!(
                err.contains(&row.rel),
                "{what}: error should point at the dump's line:\n{err}"
            );
            continue;
        }
        let ours = built.unwrap_or_else(|e| panic!("{what} did not build:\n{e}"));
        let theirs = std::fs::read(&row.hsaco).unwrap();
        let our_desc = verify::kernel_descriptors(&ours).unwrap();
        let their_desc = verify::kernel_descriptors(&theirs).unwrap();
        assert_eq!(our_desc.len(), their_desc.len(), "{what}: kernel count");
        // The metadata note byte for byte (it once lost 12 bytes to a
        // respelled target, which moved `.rodata` and the code-entry offset).
        assert!(
            verify::section_bytes(&ours, ".note").unwrap()
                == verify::section_bytes(&theirs, ".note").unwrap(),
            "{what}: .note differs from the compiler's own hsaco"
        );
        for (a, b) in our_desc.iter().zip(&their_desc) {
            assert_eq!(
                a.fields, b.fields,
                "{what}: descriptor of {} differs",
                a.name
            );
        }
        if target.processor.generation == Generation::Gfx9 {
            for s in [".text", ".rodata"] {
                assert!(
                    verify::section_bytes(&ours, s).unwrap()
                        == verify::section_bytes(&theirs, s).unwrap(),
                    "{what}: {s} differs from the compiler's own hsaco"
                );
            }
        } else {
            same_but_rewritten(
                &disasm(&ours, &row.target),
                &disasm(&theirs, &row.target),
                &pairs,
                &what,
            );
        }
        checked += 1;
    }
    let unbuildable = KNOWN_UNBUILDABLE.iter().filter(|r| r.0 == compiler).count();
    assert_eq!(checked, total - unbuildable, "{compiler} dumps rebuilt");
}

fn matmul_gfx942() -> Document {
    let rel = "tests/corpus/iree/gfx942/matmul.rocmasm";
    Document::from_source(
        &std::fs::read_to_string(corpus().join("iree/gfx942/matmul.rocmasm")).unwrap(),
        rel,
    )
}

#[test]
fn gfx942_matmul_cross_builds_for_gfx950_and_gfx9_4_generic() {
    let tc = toolchain();
    for (spec, abi, generic_version) in [("gfx950", 3u8, 0u32), ("gfx9-4-generic", 4, 1)] {
        let target = TargetId::parse(spec).unwrap();
        let p = prepare(&matmul_gfx942(), "matmul", target, &tc).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let bytes = build(&tc, &p, dir.path()).unwrap_or_else(|e| panic!("{spec}:\n{e}"));
        let header = gcn_embed::elf::read_header(&bytes).unwrap();
        assert_eq!(header.abi_version, abi, "{spec}: ELF ABI version");
        let flags = header.flags();
        assert_eq!(
            flags,
            EFlags::for_target(&target),
            "{spec}: e_flags {:#x}",
            flags.encode()
        );
        assert_eq!(
            flags.generic_version, generic_version,
            "{spec}: generic version"
        );
    }
}

#[test]
fn gfx942_matmul_for_gfx1100_names_kernel_target_and_first_bad_line() {
    let tc = toolchain();
    let target = TargetId::parse("gfx1100").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = prepare(&matmul_gfx942(), "matmul", target, &tc)
        .and_then(|p| build(&tc, &p, dir.path()))
        .expect_err("gfx9 matmul must not assemble for gfx1100");
    assert!(
        err.contains("kernel `matmul`") && err.contains("gfx1100"),
        "{err}"
    );
    assert!(
        err.contains("tests/corpus/iree/gfx942/matmul.rocmasm:"),
        "{err}"
    );
    insta::assert_snapshot!(err);
}

#[test]
fn same_inputs_give_identical_hsaco_in_different_directories() {
    let tc = toolchain();
    let target = TargetId::parse("gfx942").unwrap();
    let p = prepare(&matmul_gfx942(), "matmul", target, &tc).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let deep = b.path().join("some/other/place");
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(
        build(&tc, &p, a.path()).unwrap(),
        build(&tc, &p, &deep).unwrap()
    );
}

/// Target IDs with features (`gfx942:sramecc+:xnack-`) reach the assembler as
/// the processor plus subtarget features, as the clang driver passes them:
/// the object carries the features in its e_flags and the same code as the
/// driver's build.
#[test]
fn feature_qualified_targets_build_with_their_features() {
    let tc = toolchain();
    for spec in ["gfx942:sramecc+:xnack-", "gfx942:xnack+", "gfx950:sramecc-"] {
        let target = TargetId::parse(spec).unwrap();
        let p = prepare(&matmul_gfx942(), "matmul", target, &tc)
            .unwrap_or_else(|e| panic!("{spec}:\n{e}"));
        let dir = tempfile::tempdir().unwrap();
        let bytes = build(&tc, &p, dir.path()).unwrap_or_else(|e| panic!("{spec}:\n{e}"));
        let flags = gcn_embed::elf::read_header(&bytes).unwrap().flags();
        assert_eq!(flags, EFlags::for_target(&target), "{spec}: e_flags");
        // The clang driver, given the same asm and `-mcpu=<target ID>`.
        let driver = common::assemble(&p.asm.print(), spec)
            .unwrap_or_else(|e| panic!("{spec}: the clang driver failed:\n{e}"));
        assert!(
            verify::section_bytes(&bytes, ".text").unwrap()
                == verify::section_bytes(&driver, ".text").unwrap(),
            "{spec}: .text differs from the clang driver's"
        );
    }
}
