//! Register budget on the real corpus, with real clang-22 / ld.lld-22.

use crate::common;

use std::path::Path;

use common::{assemble, corpus, corpus_files, descriptor_fields, llvm22, rel};
use gcn_embed::TargetId;
use gcn_patch::base::diag::Diagnostics;
use gcn_patch::base::document::{Document, Edits};
use gcn_patch::base::isa::Isa;
use gcn_patch::base::parse::parse;
use gcn_patch::base::provenance::Origin;
use gcn_patch::config::policy::RegisterPolicy;
use gcn_patch::stage::check::budget::{analyze, check_registers, CheckOutcome, DeclaredValue};

fn load(path: &str) -> Document {
    let full = corpus().join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()));
    Document::from_source(&text, Path::new("tests/corpus").join(path))
}

/// Insert `text` before the first `s_endpgm` of the file, as line `line` of
/// hunk 1 of `patches/test.diff`.
fn patch_before_endpgm(t: &Document, lines: &[&str]) -> Document {
    let mut out = t.clone();
    let at = out
        .texts()
        .position(|l| l.trim() == "s_endpgm")
        .expect("s_endpgm");
    let mut edits = Edits::new();
    for (i, l) in lines.iter().enumerate() {
        edits.insert_before(
            at,
            l.to_string(),
            Origin::Patch {
                file: std::path::Path::new("patches/test.diff").into(),
                hunk: 1,
                line: 7 + i,
            },
        );
    }
    out.apply(edits);
    out
}

fn check(t: &Document, target: &str, policy: RegisterPolicy) -> Result<CheckOutcome, Diagnostics> {
    let target = TargetId::parse(target).unwrap();
    check_registers(
        None,
        t,
        &target,
        policy,
        &format!("test kernel for {}", target.name()),
    )
}

/// Lines that differ between two traced texts of equal length, with origins.
fn changed_lines(before: &Document, after: &Document) -> String {
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while j < after.len() {
        if i < before.len() && before.text(i) == after.text(j) {
            i += 1;
            j += 1;
            continue;
        }
        if matches!(after.origin(j).unwrap(), Origin::Generated(_)) {
            out.push_str(&format!(
                "+ {}    [{}]\n",
                after.text(j),
                after.origin(j).unwrap()
            ));
            j += 1;
            continue;
        }
        out.push_str(&format!(
            "- {}\n+ {}    [{}]\n",
            before.text(i),
            after.text(j),
            after.origin(j).unwrap()
        ));
        i += 1;
        j += 1;
    }
    out
}

#[test]
fn every_corpus_kernel_passes_unchanged() {
    let mut kernels = 0;
    for (file, target) in corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let t = Document::from_source(&text, rel(&file));
        for policy in [RegisterPolicy::Error, RegisterPolicy::Update] {
            let label = format!("{} for {}", rel(&file).display(), target.name());
            match check_registers(Some(&t), &t, &target, policy, &label) {
                Ok(o) => {
                    assert_eq!(o.asm, t, "{label}: {policy:?} changed the asm");
                    assert!(o.notes.is_empty(), "{label}: {:?}", o.notes);
                }
                Err(e) => panic!("{label}: {policy:?}:\n{e}"),
            }
        }
        // Usage equals the `.set` counts LLVM wrote, register by register.
        for kb in analyze(&parse(&text), &target) {
            kernels += 1;
            let d = &kb.declared;
            let v = |x: &Option<gcn_patch::stage::check::budget::DeclaredValue>| {
                x.as_ref().and_then(|x| x.value)
            };
            assert_eq!(
                Some(kb.used.vgpr),
                v(&d.num_vgpr),
                "{} {}",
                file.display(),
                kb.kernel
            );
            assert_eq!(
                Some(kb.used.agpr),
                v(&d.num_agpr),
                "{} {}",
                file.display(),
                kb.kernel
            );
            assert_eq!(
                Some(kb.used.sgpr),
                v(&d.numbered_sgpr),
                "{} {}",
                file.display(),
                kb.kernel
            );
            assert!(v(&d.next_free_vgpr).is_some() && v(&d.sgpr_count).is_some());
        }
    }
    assert!(kernels >= 37, "{kernels} kernels");
}

#[test]
fn overuse_is_reported_at_the_patch_line() {
    let t = load("iree/gfx942/matmul.rocmasm");
    let p = patch_before_endpgm(&t, &["\tv_mov_b32 v120, 0", "\ts_mov_b64 s[20:21], 0"]);
    let err = check(&p, "gfx942", RegisterPolicy::Error).unwrap_err();
    insta::assert_snapshot!(err.to_string());
}

#[test]
fn inconsistent_declarations_are_errors() {
    let mut t = load("hip/gfx942/saxpy.s");
    let i = t.texts().position(|l| l.contains(".vgpr_count:")).unwrap();
    let mut edits = Edits::new();
    let origin = t.origin(i).unwrap().clone();
    edits.replace(i, t.text(i).replace('6', "4"), origin);
    t.apply(edits);
    let err = check(&t, "gfx942", RegisterPolicy::Error).unwrap_err();
    insta::assert_snapshot!(err.to_string());
}

/// Assemble the updated text for `mcpu` and compare the kernel descriptor
/// the assembler wrote with the updated directives.
fn assert_descriptor_agrees(updated: &Document, mcpu: &str) -> (u32, u32, u32) {
    let text = llvm22(&updated.print());
    let elf = assemble(&text, mcpu).unwrap_or_else(|e| panic!("assembling for {mcpu}:\n{e}"));
    let target = TargetId::parse(mcpu).unwrap();
    let budgets = analyze(&parse(&text), &target);
    let kb = &budgets[0];
    let (_lds, rsrc3, rsrc1) = descriptor_fields(&elf, &kb.kernel);
    let d = &kb.declared;
    let next_free_vgpr = d.next_free_vgpr.as_ref().unwrap().value.unwrap();
    // COMPUTE_PGM_RSRC1 GRANULATED_WORKITEM_VGPR_COUNT (bits 5:0): blocks of 8
    // on gfx90a+ (AMDGPUUsage, compute_pgm_rsrc1 table).
    assert_eq!(rsrc1 & 0x3f, next_free_vgpr.div_ceil(8) - 1, "VGPR blocks");
    // GRANULATED_WAVEFRONT_SGPR_COUNT (bits 9:6, gfx6–gfx9): blocks of 8 of
    // next_free_sgpr plus the extra SGPRs the .amdhsa_reserve_* flags add
    // (defaults: 1, and xnack when the target supports it).
    let isa = Isa::of(&target);
    let flag = |v: &Option<DeclaredValue>, default: bool| {
        v.as_ref().and_then(|v| v.value).map_or(default, |v| v != 0)
    };
    let extra = isa.extra_sgprs(
        flag(&d.reserve_vcc, true),
        flag(&d.reserve_flat_scratch, true),
        flag(&d.reserve_xnack_mask, isa.xnack_supported),
    );
    let next_free_sgpr = d.next_free_sgpr.as_ref().unwrap().value.unwrap();
    assert_eq!(
        (rsrc1 >> 6) & 0xf,
        (next_free_sgpr + extra).div_ceil(8) - 1,
        "SGPR blocks"
    );
    if let Some(acc) = &d.accum_offset {
        // COMPUTE_PGM_RSRC3 (gfx90a+) ACCUM_OFFSET (bits 5:0): accum_offset / 4 - 1.
        assert_eq!(rsrc3 & 0x3f, acc.value.unwrap() / 4 - 1, "ACCUM_OFFSET");
    }
    (rsrc1 & 0x3f, (rsrc1 >> 6) & 0xf, rsrc3 & 0x3f)
}

#[test]
fn update_fixes_overuse_and_the_result_assembles() {
    let t = load("iree/gfx942/matmul.rocmasm");
    let p = patch_before_endpgm(&t, &["\tv_mov_b32 v120, 0", "\ts_mov_b64 s[20:21], 0"]);
    let o = check(&p, "gfx942", RegisterPolicy::Update).unwrap();
    let again = check(&o.asm, "gfx942", RegisterPolicy::Error).expect("consistent after update");
    assert_eq!(again.asm, o.asm);
    let (vgpr_blocks, _, accum) = assert_descriptor_agrees(&o.asm, "gfx942");
    // next_free_vgpr 257 (IREE padding) is kept; AGPRs now start at 124.
    assert_eq!((vgpr_blocks, accum), (32, 30));
    let notes: Vec<String> = o.notes.iter().map(|d| d.render()).collect();
    insta::assert_snapshot!(format!(
        "{}\n{}",
        changed_lines(&p, &o.asm),
        notes.join("\n")
    ));
}

#[test]
fn update_grows_descriptor_agprs_and_sgprs() {
    // gfx90a: AGPRs after accum_offset in the unified file.
    let t = load("hip/gfx90a/saxpy.s");
    let p = patch_before_endpgm(&t, &["\tv_accvgpr_write_b32 a5, v0", "\ts_mov_b32 s30, 0"]);
    let err = check(&p, "gfx90a", RegisterPolicy::Error).unwrap_err();
    insta::assert_snapshot!("gfx90a_agpr_and_sgpr_overuse", err.to_string());
    let o = check(&p, "gfx90a", RegisterPolicy::Update).unwrap();
    check(&o.asm, "gfx90a", RegisterPolicy::Error).expect("consistent after update");
    let (vgpr_blocks, sgpr_blocks, accum) = assert_descriptor_agrees(&o.asm, "gfx90a");
    // accum_offset 4, 6 AGPRs: next_free_vgpr 10 → 2 blocks of 8; 31 SGPRs +
    // 4 extra (vcc, xnack) = 35 → 5 blocks of 8.
    assert_eq!((vgpr_blocks, sgpr_blocks, accum), (1, 4, 0));
    insta::assert_snapshot!(changed_lines(&p, &o.asm));
}

#[test]
fn occupancy_changes_are_reported() {
    // saxpy on gfx942: 6 VGPRs → a patch touching v130 needs 136 registers.
    let t = load("hip/gfx942/saxpy.s");
    let p = patch_before_endpgm(&t, &["\tv_mov_b32 v130, 0"]);
    let target = TargetId::parse("gfx942").unwrap();
    let o = check_registers(
        Some(&t),
        &p,
        &target,
        RegisterPolicy::Update,
        "kernel `saxpy` for gfx942",
    )
    .unwrap();
    assert_descriptor_agrees(&o.asm, "gfx942");
    // softmax on gfx90a: 12 → 41 VGPRs keeps the 8-wave maximum.
    let t2 = load("iree/gfx90a/softmax.rocmasm");
    let p2 = patch_before_endpgm(&t2, &["\tv_mov_b32 v40, 0"]);
    let target2 = TargetId::parse("gfx90a").unwrap();
    let o2 = check_registers(
        Some(&t2),
        &p2,
        &target2,
        RegisterPolicy::Update,
        "kernel `softmax` for gfx90a",
    )
    .unwrap();
    assert_descriptor_agrees(&o2.asm, "gfx90a");
    let notes: Vec<String> = o
        .notes
        .iter()
        .chain(&o2.notes)
        .map(|d| d.render())
        .collect();
    insta::assert_snapshot!(notes.join("\n"));
}

#[test]
fn a_hand_written_kernel_without_counts_gets_them() {
    let src = "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"
\t.text
\t.globl\tk
\t.p2align\t8
\t.type\tk,@function
k:
\tv_mov_b32 v9, s3
\tv_accvgpr_write_b32 a1, v9
\ts_endpgm
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
\t.rodata
\t.p2align\t6
\t.amdhsa_kernel k
\t\t.amdhsa_user_sgpr_count 0
\t.end_amdhsa_kernel
";
    let t = Document::from_source(src, "asm/k.s");
    let o = check(&t, "gfx942", RegisterPolicy::Update).unwrap();
    assert_descriptor_agrees(&o.asm, "gfx942");
    insta::assert_snapshot!(changed_lines(&t, &o.asm));
    let asm = o.asm.asm().clone();
    let kb = &analyze(&asm, &TargetId::parse("gfx942").unwrap())[0];
    assert_eq!(kb.declared.next_free_vgpr.as_ref().unwrap().value, Some(14));
}

/// LLVM may print the descriptor counts as expressions over the `.set`
/// symbols (clang-22 assembles them, symbols defined later included). An
/// update then only rewrites the `.set` lines and the metadata.
#[test]
fn descriptor_expressions_follow_updated_set_symbols() {
    let text = load("hip/gfx942/saxpy.s")
        .print()
        .replace(
            ".amdhsa_next_free_vgpr 6",
            ".amdhsa_next_free_vgpr max(totalnumvgprs(saxpy.num_agpr, saxpy.num_vgpr), 1, 0)",
        )
        .replace(
            ".amdhsa_accum_offset 8",
            ".amdhsa_accum_offset ((((alignto(max(1, saxpy.num_vgpr), 4))/4)-1)&63)*4+4",
        )
        .replace(
            ".amdhsa_next_free_sgpr 8",
            ".amdhsa_next_free_sgpr saxpy.numbered_sgpr",
        );
    let t = Document::from_source(&text, Path::new("tests/corpus/hip/gfx942/saxpy.s"));
    let kb = &analyze(t.asm(), &TargetId::parse("gfx942").unwrap())[0];
    assert_eq!(kb.declared.next_free_vgpr.as_ref().unwrap().value, Some(6));
    assert_eq!(kb.declared.accum_offset.as_ref().unwrap().value, Some(8));
    let o = check(&t, "gfx942", RegisterPolicy::Error).expect("unpatched passes");
    assert!(o.notes.is_empty());
    assert_descriptor_agrees(&t, "gfx942");

    let p = patch_before_endpgm(&t, &["\tv_mov_b32 v10, 0", "\tv_accvgpr_write_b32 a3, v0"]);
    let err = check(&p, "gfx942", RegisterPolicy::Error).unwrap_err();
    assert!(err.to_string().contains("uses v10"), "{err}");
    let o = check(&p, "gfx942", RegisterPolicy::Update).unwrap();
    check(&o.asm, "gfx942", RegisterPolicy::Error).expect("consistent after update");
    // 11 VGPRs → accum_offset 12; 4 AGPRs → next_free_vgpr 16.
    let (vgpr_blocks, _, accum) = assert_descriptor_agrees(&o.asm, "gfx942");
    assert_eq!((vgpr_blocks, accum), (1, 2));
    insta::assert_snapshot!(changed_lines(&p, &o.asm));
}

/// IREE's (LLVM 24) and Triton's (LLVM 23+) own code objects agree with the
/// counts read from the dumps: the descriptor the compiler wrote has the VGPR/SGPR blocks and
/// ACCUM_OFFSET that the dump's directives and the extra-SGPR rule imply.
#[test]
fn compiler_code_objects_agree_with_dump_counts() {
    let mut checked = 0;
    for (file, target) in corpus_files() {
        let hsaco = file.with_extension("hsaco");
        let Ok(elf) = std::fs::read(&hsaco) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let isa = Isa::of(&target);
        for kb in analyze(&parse(&text), &target) {
            let d = &kb.declared;
            let (_, rsrc3, rsrc1) = descriptor_fields(&elf, &kb.kernel);
            let v = |x: &Option<DeclaredValue>| x.as_ref().and_then(|x| x.value);
            let wave32 = v(&d.wavefront_size32) == Some(1);
            // getVGPREncodingGranule: 8 on gfx90a+ and for wave32, else 4.
            let granule = if isa.unified_agprs || wave32 { 8 } else { 4 };
            let nfv = v(&d.next_free_vgpr).unwrap();
            assert_eq!(
                rsrc1 & 0x3f,
                nfv.div_ceil(granule) - 1,
                "{}",
                hsaco.display()
            );
            if isa.major() < 10 {
                let flag =
                    |x: &Option<DeclaredValue>, default: bool| v(x).map_or(default, |x| x != 0);
                let extra = isa.extra_sgprs(
                    flag(&d.reserve_vcc, true),
                    flag(&d.reserve_flat_scratch, true),
                    flag(&d.reserve_xnack_mask, isa.xnack_supported),
                );
                let nfs = v(&d.next_free_sgpr).unwrap();
                assert_eq!(
                    (rsrc1 >> 6) & 0xf,
                    (nfs + extra).div_ceil(8) - 1,
                    "{}",
                    hsaco.display()
                );
            }
            if let Some(acc) = v(&d.accum_offset) {
                assert_eq!(rsrc3 & 0x3f, acc / 4 - 1, "{}", hsaco.display());
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 31, "IREE and Triton kernels with a code object");
}
