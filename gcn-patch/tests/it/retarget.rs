//! retarget on real corpus dumps; outputs are assembled with the real
//! clang-22 / ld.lld-22 and compared with IREE's own code objects.

use crate::common;

use common::corpus;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::process::Command;

use gcn_embed::TargetId;
use gcn_patch::base::document::Document;
use gcn_patch::base::provenance::Origin;
use gcn_patch::stage::retarget::{retarget, RetargetOptions, Retargeted};
use object::{Object, ObjectSection};

fn load(rel: &str) -> Document {
    let text = std::fs::read_to_string(corpus().join(rel)).unwrap();
    Document::from_source(&text, rel)
}

fn opts(target: &str) -> RetargetOptions {
    RetargetOptions::new(TargetId::parse(target).unwrap())
}

/// The changed lines as a diff (`-` original, `+` new, with the origin's
/// `what`), then the notes.
fn changes(input: &Document, out: &Retargeted) -> String {
    let mut kept: HashSet<usize> = HashSet::new();
    let mut s = String::new();
    for (text, origin) in out.asm.texts_with_origins() {
        match origin {
            Origin::Source { line, .. } => {
                kept.insert(*line);
            }
            Origin::Retarget {
                replaces: Some(o),
                what,
            } => {
                if let Origin::Source { line, .. } = **o {
                    kept.insert(line);
                    writeln!(s, "{line:>4} - {}", input.text(line - 1)).unwrap();
                }
                writeln!(s, "     + {text}    [{what}]").unwrap();
            }
            Origin::Retarget {
                replaces: None,
                what,
            } => writeln!(s, "     + {text}    [{what}] (inserted)").unwrap(),
            other => writeln!(s, "     ? {text} [{other}]").unwrap(),
        }
    }
    for (i, text) in input.texts().enumerate() {
        if !kept.contains(&(i + 1)) {
            writeln!(s, "{:>4} - {text}    (deleted)", i + 1).unwrap();
        }
    }
    writeln!(s, "code object version: {}", out.code_object_version).unwrap();
    for n in &out.notes {
        writeln!(s, "note: {n}").unwrap();
    }
    s
}

/// Assemble and link with clang-22 / ld.lld-22; the code object bytes or the assembler's stderr.
fn assemble(text: &str, mcpu: &str) -> Result<Vec<u8>, String> {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("k.s");
    let o = dir.path().join("k.o");
    let h = dir.path().join("k.hsaco");
    std::fs::write(&s, text).unwrap();
    let install = "install it with `apt-get install -y clang-22 lld-22 llvm-22`";
    let out = Command::new("clang-22")
        .args(["-x", "assembler", "--target=amdgcn-amd-amdhsa"])
        .arg(format!("-mcpu={mcpu}"))
        .arg("-c")
        .arg(&s)
        .arg("-o")
        .arg(&o)
        .output()
        .unwrap_or_else(|e| panic!("cannot run clang-22 ({e}): {install}"));
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let out = Command::new("ld.lld-22")
        .arg("-shared")
        .arg(&o)
        .arg("-o")
        .arg(&h)
        .output()
        .unwrap_or_else(|e| panic!("cannot run ld.lld-22 ({e}): {install}"));
    assert!(
        out.status.success(),
        "ld.lld-22: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(std::fs::read(&h).unwrap())
}

fn section(elf: &[u8], name: &str) -> Vec<u8> {
    let f = object::File::parse(elf).unwrap();
    f.section_by_name(name)
        .unwrap_or_else(|| panic!("no {name}"))
        .data()
        .unwrap()
        .to_vec()
}

/// ELF64 `e_flags` (offset 48).
fn e_flags(elf: &[u8]) -> u32 {
    u32::from_le_bytes(elf[48..52].try_into().unwrap())
}

/// `.text` and `.rodata` equal IREE's own hsaco for the same dump.
fn assert_same_code(hsaco: &[u8], iree_hsaco: &str) {
    let theirs = std::fs::read(corpus().join(iree_hsaco)).unwrap();
    for s in [".text", ".rodata"] {
        assert!(
            section(hsaco, s) == section(&theirs, s),
            "{s} differs from {iree_hsaco}"
        );
    }
}

#[test]
fn new_triple_is_normalized_and_gfx9_dumps_reassemble_identically() {
    for op in ["matmul", "conv", "softmax"] {
        for t in ["gfx942", "gfx950", "gfx90a"] {
            let input = load(&format!("iree/{t}/{op}.rocmasm"));
            let out = retarget(&input, &opts(t)).unwrap();
            let text = out.asm.print();
            // The directive LLVM 22 parses is normalized; the metadata keeps
            // IREE's spelling of the same target (so the note keeps its bytes).
            let (_, directive) = out.asm.asm().target_directive().unwrap();
            assert_eq!(directive, format!("amdgcn-amd-amdhsa--{t}"), "{t} {op}");
            let md = out.asm.asm().metadata().unwrap().target.unwrap().1;
            assert!(
                md.ends_with(&format!("-amd-amdhsa-unknown-{t}")),
                "{t} {op}: {md}"
            );
            let hsaco = assemble(&text, t).unwrap_or_else(|e| panic!("{t} {op}: {e}"));
            assert_same_code(&hsaco, &format!("iree/{t}/{op}.hsaco"));
            let theirs = std::fs::read(corpus().join(format!("iree/{t}/{op}.hsaco"))).unwrap();
            assert!(
                section(&hsaco, ".note") == section(&theirs, ".note"),
                "{t} {op}: the metadata note differs from IREE's"
            );
            if (t, op) == ("gfx942", "matmul") {
                insta::assert_snapshot!(changes(&input, &out));
            }
        }
    }
}

#[test]
fn instprefsize_is_rewritten_for_llvm22() {
    let input = load("iree/gfx1100/matmul.rocmasm");
    let out = retarget(&input, &opts("gfx1100")).unwrap();
    insta::assert_snapshot!(changes(&input, &out));
    // Same code and descriptor (INST_PREF_SIZE = 63, clamped) as IREE's hsaco.
    let hsaco = assemble(&out.asm.print(), "gfx1100").unwrap();
    assert_same_code(&hsaco, "iree/gfx1100/matmul.hsaco");
    let hsaco = assemble(
        &retarget(&load("iree/gfx1201/matmul.rocmasm"), &opts("gfx1201"))
            .unwrap()
            .asm
            .print(),
        "gfx1201",
    )
    .unwrap();
    assert_same_code(&hsaco, "iree/gfx1201/matmul.hsaco");
    // conv (34 cache lines, not clamped): .rodata identical; .text differs only in
    // LLVM 24's encoding of unused VOP3 src2 bits (see tests/corpus/README.md).
    let hsaco = assemble(
        &retarget(&load("iree/gfx1100/conv.rocmasm"), &opts("gfx1100"))
            .unwrap()
            .asm
            .print(),
        "gfx1100",
    )
    .unwrap();
    let theirs = std::fs::read(corpus().join("iree/gfx1100/conv.hsaco")).unwrap();
    assert!(section(&hsaco, ".rodata") == section(&theirs, ".rodata"));
    // An assembler that knows instprefsize() gets the line unchanged.
    let mut new = opts("gfx1100");
    new.assembler_llvm_major = 24;
    let out = retarget(&input, &new).unwrap();
    assert!(out.asm.print().contains("instprefsize("));
}

#[test]
fn instprefsize_expression_follows_code_size() {
    // Add 64 s_nop (256 bytes = 2 cache lines) to the conv kernel (34 lines):
    // the rewritten expression must give 36.
    let input = load("iree/gfx1100/conv.rocmasm");
    let out = retarget(&input, &opts("gfx1100")).unwrap();
    let f = out.asm.asm().clone();
    let k = &f.kernels()[0];
    let at = k.blocks[0].lines.start + 1;
    let mut lines: Vec<String> = out.asm.texts().map(str::to_owned).collect();
    for _ in 0..64 {
        lines.insert(at, "\ts_nop 0".into());
    }
    let hsaco = assemble(&(lines.join("\n") + "\n"), "gfx1100").unwrap();
    let rodata = section(&hsaco, ".rodata");
    // COMPUTE_PGM_RSRC3 is at offset 44 of the kernel descriptor; INST_PREF_SIZE is bits 4..9.
    let rsrc3 = u32::from_le_bytes(rodata[44..48].try_into().unwrap());
    assert_eq!((rsrc3 >> 4) & 0x3f, 36);
    let theirs = std::fs::read(corpus().join("iree/gfx1100/conv.hsaco")).unwrap();
    let rsrc3 = u32::from_le_bytes(section(&theirs, ".rodata")[44..48].try_into().unwrap());
    assert_eq!((rsrc3 >> 4) & 0x3f, 34);
}

#[test]
fn gfx942_to_gfx950() {
    let input = load("iree/gfx942/matmul.rocmasm");
    let out = retarget(&input, &opts("gfx950")).unwrap();
    insta::assert_snapshot!(changes(&input, &out));
    let hsaco = assemble(&out.asm.print(), "gfx950").unwrap();
    assert_eq!(e_flags(&hsaco) & 0xff, 0x4f);
    // The instructions are the same: identical code to the gfx942 build.
    assert_same_code(&hsaco, "iree/gfx942/matmul.hsaco");
}

#[test]
fn gfx942_to_gfx9_4_generic_forces_version_6() {
    let input = load("iree/gfx942/conv.rocmasm");
    let out = retarget(&input, &opts("gfx9-4-generic")).unwrap();
    assert_eq!(out.code_object_version, 6);
    insta::assert_snapshot!(changes(&input, &out));
    let hsaco = assemble(&out.asm.print(), "gfx9-4-generic").unwrap();
    // mach 0x5f, generic version 1, ELF ABI version 4 (= code object v6).
    assert_eq!(e_flags(&hsaco) & 0xff, 0x5f);
    assert_eq!(e_flags(&hsaco) >> 24, 1);
    assert_eq!(hsaco[8], 4);
    assert_same_code(&hsaco, "iree/gfx942/conv.hsaco");
}

#[test]
fn gfx942_to_gfx90a_translates_the_scratch_fields() {
    let input = load("iree/gfx942/softmax.rocmasm");
    let out = retarget(&input, &opts("gfx90a")).unwrap();
    insta::assert_snapshot!(changes(&input, &out));
    // Same descriptor bits, same code: byte-identical to the gfx942 build.
    let hsaco = assemble(&out.asm.print(), "gfx90a").unwrap();
    assert_same_code(&hsaco, "iree/gfx942/softmax.hsaco");
    // gfx942-only instructions are left for the assembler to reject.
    let out = retarget(&load("iree/gfx942/matmul.rocmasm"), &opts("gfx90a")).unwrap();
    let err = assemble(&out.asm.print(), "gfx90a").unwrap_err();
    assert!(
        err.contains("instruction not supported on this GPU"),
        "{err}"
    );
}

#[test]
fn xnack_off_rewrites_reserve_xnack_mask() {
    let input = load("iree/gfx942/matmul.rocmasm");
    let out = retarget(&input, &opts("gfx942:sramecc+:xnack-")).unwrap();
    let text = out.asm.print();
    assert!(text.contains("\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-\""));
    assert!(text.contains("amdhsa.target:   'amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-'"));
    assert!(text.contains(".amdhsa_reserve_xnack_mask 0"));
    let hsaco = assemble(&text, "gfx942:sramecc+:xnack-").unwrap();
    assert_eq!(e_flags(&hsaco), 0x64c | 0xc00);
}

#[test]
fn source_without_version_directive() {
    let text = std::fs::read_to_string(corpus().join("hip/gfx942/saxpy.s")).unwrap();
    let stripped: String = text
        .lines()
        .filter(|l| !l.contains(".amdhsa_code_object_version"))
        .map(|l| format!("{l}\n"))
        .collect();
    let input = Document::from_source(&stripped, "saxpy-nover.s");
    let out = retarget(&input, &opts("gfx942")).unwrap();
    insta::assert_snapshot!(changes(&input, &out));
    assert_eq!(out.code_object_version, 5);
    assemble(&out.asm.print(), "gfx942").unwrap();
    // Explicit version wins; metadata follows (v4 -> amdhsa.version [1, 1]).
    let mut o = opts("gfx942");
    o.code_object_version = Some(4);
    let out = retarget(&input, &o).unwrap();
    let f = out.asm.asm().clone();
    assert_eq!(f.code_object_version().unwrap().1, 4);
    assert_eq!(f.metadata_version().unwrap().1, [1, 1]);
    let hsaco = assemble(&out.asm.print(), "gfx942").unwrap();
    assert_eq!(hsaco[8], 2, "ELF ABI version 2 = code object v4");
}

#[test]
fn cross_generation_leaves_instructions_to_the_assembler() {
    let input = load("iree/gfx942/matmul.rocmasm");
    let out = retarget(&input, &opts("gfx1100")).unwrap();
    insta::assert_snapshot!(changes(&input, &out));
    let err = assemble(&out.asm.print(), "gfx1100").unwrap_err();
    // The first error is an instruction inside the kernel's code.
    let first = err.lines().find(|l| l.contains("error:")).unwrap();
    let line: usize = first.split(':').nth(1).unwrap().parse().unwrap();
    let k = &out.asm.asm().kernels()[0];
    assert!(k.code.contains(&(line - 1)), "{first}");
}

fn render(r: Result<Retargeted, gcn_patch::base::diag::Diagnostics>) -> String {
    r.expect_err("retarget must fail").to_string()
}

#[test]
fn invalid_combinations_are_errors() {
    // Generic targets need code object v6.
    let mut o = opts("gfx9-4-generic");
    o.code_object_version = Some(5);
    let e1 = render(retarget(&load("iree/gfx942/matmul.rocmasm"), &o));
    // gfx90a code takes the private segment buffer in s[0:3]; gfx942 cannot provide it.
    let e2 = render(retarget(&load("hip/gfx90a/saxpy.s"), &opts("gfx942")));
    // Unsupported code object version.
    let mut o = opts("gfx942");
    o.code_object_version = Some(7);
    let e3 = render(retarget(&load("iree/gfx942/matmul.rocmasm"), &o));
    // The assembler's LLVM is too old for the processor.
    let mut o = opts("gfx950");
    o.assembler_llvm_major = 19;
    let e4 = render(retarget(&load("iree/gfx942/matmul.rocmasm"), &o));
    // v5 -> v4 when the kernel reads hidden arguments.
    let text = std::fs::read_to_string(corpus().join("hip/gfx942/saxpy.s"))
        .unwrap()
        .replacen(
            "        .value_kind:     by_value\n",
            "        .value_kind:     hidden_block_count_x\n",
            1,
        );
    let mut o = opts("gfx942");
    o.code_object_version = Some(4);
    let e5 = render(retarget(
        &Document::from_source(&text, "hip/gfx942/saxpy.s"),
        &o,
    ));
    insta::assert_snapshot!(format!("{e1}\n\n{e2}\n\n{e3}\n\n{e4}\n\n{e5}"));
    // xnack+ on gfx1100 never gets here: the target ID is rejected.
    assert!(TargetId::parse("gfx1100:xnack+").is_err());
}

#[test]
fn gfx1201_softmax_vopd_pairs_are_rewritten_for_llvm22() {
    let input = load("iree/gfx1201/softmax.rocmasm");
    let out = retarget(&input, &opts("gfx1201")).unwrap();
    let notes: Vec<String> = out.rewrites.iter().map(|d| d.render()).collect();
    // The whole change, then the notes the user sees.
    insta::assert_snapshot!(format!("{}\n{}", changes(&input, &out), notes.join("\n")));
    // clang-22 accepts the result (it rejected the dump).
    assemble(&out.asm.print(), "gfx1201").unwrap_or_else(|e| panic!("{e}"));
    assert!(assemble(
        &input.print().replace(
            "amdgpu12.01-amd-amdhsa-unknown-gfx1201",
            "amdgcn-amd-amdhsa--gfx1201"
        ),
        "gfx1201"
    )
    .is_err_and(|e| e.contains("src1 operands must use different VGPR banks")));
    // LLVM 24 accepts it (and instprefsize) as is: nothing is rewritten.
    let mut o = opts("gfx1201");
    o.assembler_llvm_major = 24;
    let out = retarget(&input, &o).unwrap();
    assert!(out.asm.print().contains("instprefsize("));
    assert!(out.rewrites.is_empty());
    assert!(out
        .asm
        .print()
        .contains("v_dual_sub_f32 v3, v3, v7 :: v_dual_sub_f32 v4, v4, v7"));
    // Every other gfx11/gfx12 dump retargets and assembles with clang-22.
    for (t, op) in [
        ("gfx1100", "conv"),
        ("gfx1100", "softmax"),
        ("gfx1201", "conv"),
    ] {
        let out = retarget(&load(&format!("iree/{t}/{op}.rocmasm")), &opts(t)).unwrap();
        assert!(out.rewrites.is_empty(), "{t} {op}");
        assemble(&out.asm.print(), t).unwrap_or_else(|e| panic!("{t} {op}: {e}"));
    }
}

/// Each kind of VOPD pair LLVM 22 rejects: swapped (sub/subrev, commutative,
/// the first half), split (in dependency order), or an error
/// when there is no exact equivalent. Every rewrite is assembled by clang-22.
#[test]
fn vopd_rewrites_cover_each_case_and_clang22_accepts_them() {
    let header = "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx1201\"\n\t.text\n";
    let cases = [
        // src1 shared: swap the second half (sub -> subrev).
        "v_dual_sub_f32 v1, v1, v7 :: v_dual_sub_f32 v2, v2, v7",
        // commutative, second half.
        "v_dual_mul_f32 v1, v1, v7 :: v_dual_mul_f32 v2, v2, v7 ; keep me",
        // only swapping the first half works (the second's src0 is an SGPR).
        "v_dual_sub_f32 v1, v5, v7 :: v_dual_sub_f32 v2, s0, v7",
        // subrev -> sub.
        "v_dual_subrev_f32 v1, v1, v7 :: v_dual_subrev_f32 v2, v2, v7",
        // shared src0 (both halves read v4 as src0): add is commutative.
        "v_dual_add_f32 v1, v4, v5 :: v_dual_add_f32 v2, v4, v6",
        // no swap works: split, X first.
        "v_dual_sub_f32 v3, v3, v7 :: v_dual_sub_f32 v4, v4, v7",
        // no swap works and Y reads X's destination: split, Y first.
        "v_dual_sub_f32 v3, v3, v7 :: v_dual_max_num_f32 v4, v3, v7",
        // literal src0, not commutable to a VGPR and no split without a
        // literal: an error.
        "v_dual_mul_f32 v1, 0x3fb8aa3b, v7 :: v_dual_mul_f32 v2, 0x3fb8aa3b, v7",
        // legal for LLVM 22 already: untouched.
        "v_dual_mul_f32 v7, 0x3fb8aa3b, v1 :: v_dual_mul_f32 v8, 0x3fb8aa3b, v2",
    ];
    let mut report = String::new();
    for case in cases {
        let input = Document::from_source(&format!("{header}\t{case}\n"), "k.s");
        let r = gcn_patch::stage::retarget::normalize_vopd(
            &input,
            TargetId::parse("gfx1201").unwrap().processor,
            22,
        );
        writeln!(report, "{case}").unwrap();
        for w in &r.rewrites {
            for l in &w.lines {
                writeln!(report, "  => {}", l.trim_start()).unwrap();
            }
            let text = format!("{header}{}\n", w.lines.join("\n"));
            assemble(&text, "gfx1201").unwrap_or_else(|e| panic!("{case}:\n{text}\n{e}"));
        }
        for e in &r.errors {
            writeln!(report, "{}", e.render()).unwrap();
            let text = format!("{header}\t{case}\n");
            assert!(
                assemble(&text, "gfx1201").is_err(),
                "{case}: clang-22 accepts it"
            );
        }
    }
    insta::assert_snapshot!(report);
}

/// Issue 22: lines LLVM 22 takes as they are reach it as they are.
/// * A raw line (`.long … ; raw: <VOPD pair>`, as lift keeps a pair LLVM 22
///   rejects) is data: the VOPD normalization once split its text into
///   `v_sub_f32_e32 0xc94a0f03, 0x03040f04`, which no assembler takes.
/// * Two `v_dual_mov_b32` reading one VGPR: on gfx12 LLVM checks only their
///   destinations' banks; the normalization once split them, changing the
///   bytes of Triton's gfx1201 matmul.
#[test]
fn raw_lines_and_pairs_llvm22_accepts_are_never_rewritten() {
    let raw = "\t.long\t0xc94a0f03, 0x03040f04 ; raw: v_dual_sub_f32 v3, v3, v7 :: v_dual_sub_f32 v4, v4, v7";
    let movs = "\tv_dual_mov_b32 v12, v8 :: v_dual_mov_b32 v13, v8";
    let labeled = "l0: .long\t0xc94a0f03, 0x03040f04 ; raw: v_dual_sub_f32 v3, v3, v7 :: v_dual_sub_f32 v4, v4, v7";
    let text = format!(
        "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx1201\"\n\t.amdhsa_code_object_version 5\n\t.text\n{raw}\n{movs}\n{labeled}\n\ts_endpgm\n"
    );
    let input = Document::from_source(&text, "k.s");
    for line in [3, 5] {
        assert!(input.lines()[line].is_raw(), "line {}", line + 1);
        assert!(input.lines()[line].written_instruction().is_none());
        // The checks still read the pair.
        assert!(input.instruction(line).unwrap().dual.is_some());
    }
    let gfx1201 = TargetId::parse("gfx1201").unwrap().processor;
    let r = gcn_patch::stage::retarget::normalize_vopd(&input, gfx1201, 22);
    assert!(r.rewrites.is_empty() && r.errors.is_empty(), "{r:?}");
    let out = retarget(&input, &opts("gfx1201")).unwrap();
    assert_eq!(out.asm.print(), input.print());
    assert!(out.rewrites.is_empty());
    // What clang-22 makes of it: the raw words, and the pair as written.
    let hsaco = assemble(&out.asm.print(), "gfx1201").unwrap_or_else(|e| panic!("{e}"));
    let code = section(&hsaco, ".text");
    let words = [0xc94a0f03u32, 0x03040f04];
    let raw_bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(&code[..8], &raw_bytes[..]);
    assert_eq!(
        &code[8..16],
        &[0x08, 0x01, 0x10, 0xca, 0x08, 0x01, 0x0c, 0x0c]
    );
    assert_eq!(&code[16..24], &raw_bytes[..]);
    // A mov paired with another operation on the same source is still rewritten.
    let add = Document::from_source(
        "\t.text\n\tv_dual_mov_b32 v12, v8 :: v_dual_add_f32 v13, v8, v1\n",
        "k.s",
    );
    assert_eq!(
        gcn_patch::stage::retarget::normalize_vopd(&add, gfx1201, 22)
            .rewrites
            .len(),
        1
    );
}

#[test]
fn origins_and_crlf_are_kept() {
    let text = std::fs::read_to_string(corpus().join("iree/gfx942/matmul.rocmasm")).unwrap();
    let crlf = text.replace('\n', "\r\n");
    let input = Document::from_source(&crlf, "m.rocmasm");
    let out = retarget(&input, &opts("gfx950")).unwrap();
    assert!(out.asm.texts().all(|l| l.ends_with('\r')));
    let f = out.asm.asm().clone();
    let (i, t) = f.target_directive().unwrap();
    assert_eq!(t, "amdgcn-amd-amdhsa--gfx950");
    match &out.asm.origin(i).unwrap() {
        Origin::Retarget {
            replaces: Some(o),
            what,
        } => {
            assert_eq!(o.to_string(), "m.rocmasm:4");
            assert_eq!(what, "target ID gfx950");
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(out.asm.len(), input.len());
    assert!(out
        .asm
        .print()
        .replace("\r\n", "\n")
        .contains("amdhsa.target:   amdgcn-amd-amdhsa--gfx950\n"));
}
