//! The instruction-property table (`gcn_emu::isa`) against what it is made
//! from and what it describes:
//! - the checked-in table is what `tools/isa_table.py generate` writes from
//!   the checked-in XML extract and target list;
//! - the target list is what llvm-mc-22 says, the MFMA timing what
//!   llvm-mca-22 says;
//! - every instruction of the corpora the emulator runs (the aiter sample,
//!   IREE's and Triton's objects, the HIP kernels of tests/kernels built for
//!   gfx90a/gfx942/gfx950) is in the table, available on its object's target,
//!   and its printed operands agree with the table's: count, and the number
//!   of registers of each register operand.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use gcn_emu::decode::{find_objdump, Instruction, Operand, Program, RegFile};
use gcn_emu::isa::{self, Access, Kind, Props, Ret, Role};
use gcn_emu::load::CodeObject;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python(args: &[&str]) -> std::process::Output {
    Command::new("python3")
        .arg(manifest().join("tools/isa_table.py"))
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("python3 not runnable ({e}): install it with `apt-get install -y python3`")
        })
}

#[test]
fn table_is_what_the_generator_writes() {
    let out = python(&["generate", "--check"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn targets_are_what_llvm_mc_says() {
    let out = python(&["targets", "--check"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn mfma_timing_is_what_llvm_mca_says() {
    let out = python(&["timing", "--check"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn table_is_sorted_and_ids_are_dense() {
    for w in isa::TABLE.windows(2) {
        assert!(w[0].name < w[1].name, "{} before {}", w[0].name, w[1].name);
    }
    for (i, p) in isa::TABLE.iter().enumerate() {
        assert_eq!(p.id().map(|id| id.0 as usize), Some(i));
        assert_eq!(isa::lookup(p.name).map(|q| q.name), Some(p.name));
    }
    for w in isa::ALIASES.windows(2) {
        assert!(w[0].0 < w[1].0);
    }
    assert!(isa::lookup("v_not_an_instruction").is_none());
}

fn objects(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            objects(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("co" | "hsaco")) {
            out.push(p);
        }
    }
}

/// The registers a printed operand names: (file, count).
fn regs(op: &Operand) -> Option<(RegFile, u16)> {
    match op {
        Operand::Reg { file, count, .. } => Some((*file, *count)),
        _ => None,
    }
}

/// Why the printed operands of `ins` disagree with `p`, if they do.
fn disagreement(ins: &Instruction, p: &Props) -> Option<String> {
    // Operands LLVM leaves out: a load into LDS names no data register, an
    // atomic without glc/sc0 no return register.
    let no_return = p.access == Access::Atomic(Ret::IfGlc) && !(ins.has("glc") || ins.has("sc0"));
    let mut table: Vec<_> = p
        .operands
        .iter()
        .filter(|o| {
            let lds = (ins.has("lds") || p.lds_dma) && matches!(o.name, "vdata" | "vdst");
            !(lds || no_return && o.name == "vdst")
        })
        .collect();
    // Immediates LLVM prints symbolically (`s_waitcnt lgkmcnt(0)`) are
    // modifiers to the decoder.
    let imms = table.iter().filter(|o| o.kind == Kind::Imm).count();
    if ins.ops.len() + imms == table.len() {
        table.retain(|o| o.kind != Kind::Imm);
    }
    if table.len() != ins.ops.len() {
        return Some(format!(
            "{} operands printed, the table has {} ({})",
            ins.ops.len(),
            table.len(),
            table.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
        ));
    }
    for (i, (o, s)) in table.iter().zip(&ins.ops).enumerate() {
        let Some((file, count)) = regs(&s.op) else {
            continue; // a constant, `off`, a label
        };
        let file_ok = match o.kind {
            Kind::Vgpr => file == RegFile::V,
            Kind::Agpr => file == RegFile::A,
            Kind::VgprOrAgpr | Kind::VgprOrAgprOrConst => file != RegFile::S,
            Kind::Sgpr | Kind::Scalar => file == RegFile::S,
            Kind::Any => true,
            Kind::Imm | Kind::Label => false,
        };
        // An address is 64 bits without a scalar base (`off`), 32 with one;
        // a buffer's vaddr is 64 bits only with both idxen and offen.
        let max = o.dwords();
        // The f8f6f4 MFMAs' sources: the XML gives the fp8 size, fp6/fp4
        // (cbsz/blgp) use fewer registers.
        let size_ok = match o.name {
            "addr" | "vaddr" => count <= max,
            "src0" | "src1" if p.name.ends_with("_f8f6f4") => count <= max,
            _ => count == max,
        };
        if !file_ok || !size_ok {
            return Some(format!(
                "operand {i} ({}, {:?}, {} bits) printed as {:?} x{count}",
                o.name, o.kind, o.bits, file
            ));
        }
    }
    None
}

/// `common::build` (its cache shared with the other tests), except that a
/// kernel written for other targets (clang: "needs target feature", or
/// gfx1250's `cluster_dims` "is not supported for this GPU architecture")
/// is skipped on this one.
fn build(src: &Path, target: &str) -> Option<PathBuf> {
    match common::build_hip(src, target) {
        Ok(out) => Some(out),
        Err(err)
            if err.contains("needs target feature")
                || err.contains("is not supported for this GPU architecture") =>
        {
            None
        }
        Err(err) => panic!("clang-22 failed on {}: {err}", src.display()),
    }
}

#[test]
fn every_corpus_instruction_is_in_the_table_and_agrees() {
    let root = manifest().join("../tests/corpus");
    let mut files = Vec::new();
    for d in [
        "aiter/gfx942",
        "aiter/gfx950",
        "iree/gfx90a",
        "iree/gfx942",
        "iree/gfx950",
    ] {
        objects(&root.join(d), &mut files);
    }
    objects(&manifest().join("tests/triton"), &mut files);
    let mut kernels: Vec<_> = std::fs::read_dir(manifest().join("tests/kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hip"))
        .collect();
    kernels.sort();
    let jobs: Vec<_> = kernels
        .iter()
        .flat_map(|k| common::TARGETS.iter().map(move |t| (k, t)))
        .collect();
    files.extend(
        common::par_map(&jobs, |(k, t)| build(k, t))
            .into_iter()
            .flatten(),
    );
    files.sort();
    let report = check(&files);
    assert!(report.is_empty(), "{report}");
}

/// Every code object of aiter's `hsa/gfx942` and `hsa/gfx950` (not only the
/// sample): `AITER_HSA=DIR cargo test -p gcn-emu --test it isa:: -- --ignored`,
/// DIR holding `gfx942/` and `gfx950/` (e.g. `git -C AITER archive HEAD
/// hsa/gfx942 hsa/gfx950 | tar -x -C /tmp` and DIR=/tmp/hsa).
#[test]
#[ignore = "needs aiter's hsa/ tree: AITER_HSA=DIR"]
fn every_aiter_instruction_is_in_the_table_and_agrees() {
    let dir = PathBuf::from(std::env::var("AITER_HSA").expect("AITER_HSA=DIR (aiter's hsa/)"));
    let mut files = Vec::new();
    objects(&dir.join("gfx942"), &mut files);
    objects(&dir.join("gfx950"), &mut files);
    assert!(!files.is_empty(), "no code objects under {}", dir.display());
    files.sort();
    let report = check(&files);
    assert!(report.is_empty(), "{report}");
}

/// The disagreements of the instructions of `files` with the table (empty
/// when none), after printing the figures.
fn check(files: &[PathBuf]) -> String {
    let objdump = find_objdump(None).unwrap();
    // mnemonic -> (targets seen, instructions seen)
    let mut seen: BTreeMap<String, (BTreeSet<String>, usize)> = BTreeMap::new();
    let mut missing: BTreeMap<String, String> = BTreeMap::new();
    let mut wrong_target: BTreeMap<String, String> = BTreeMap::new();
    let mut disagree: BTreeMap<String, String> = BTreeMap::new();
    let mut instructions = 0usize;
    // Each file over the cores; merged in file order (the first example of
    // a finding is the first file's, as in one pass).
    let per_file = common::par_map(files, |file| {
        let mut seen: BTreeMap<String, (BTreeSet<String>, usize)> = BTreeMap::new();
        let mut missing: BTreeMap<String, String> = BTreeMap::new();
        let mut wrong_target: BTreeMap<String, String> = BTreeMap::new();
        let mut disagree: BTreeMap<String, String> = BTreeMap::new();
        let mut instructions = 0usize;
        let co = CodeObject::read_file(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for k in &co.kernels {
            let p = Program::disassemble(&co, k, &objdump)
                .unwrap_or_else(|e| panic!("{}: {}: {e}", file.display(), k.name));
            for ins in &p.instructions {
                instructions += 1;
                let e = seen.entry(ins.mnemonic.clone()).or_default();
                e.0.insert(co.processor.clone());
                e.1 += 1;
                let Some(props) = isa::lookup(&ins.mnemonic) else {
                    missing
                        .entry(ins.mnemonic.clone())
                        .or_insert_with(|| format!("{}: {}", file.display(), ins.text));
                    continue;
                };
                if !props.on(&co.processor) {
                    wrong_target.entry(ins.mnemonic.clone()).or_insert_with(|| {
                        format!("{} not on {} per the table", ins.text, co.processor)
                    });
                }
                if let Some(why) = disagreement(ins, props) {
                    disagree
                        .entry(ins.mnemonic.clone())
                        .or_insert_with(|| format!("`{}`: {why}", ins.text));
                }
            }
        }
        (seen, missing, wrong_target, disagree, instructions)
    });
    for (s, m, w, d, n) in per_file {
        for (mnemonic, (targets, count)) in s {
            let e = seen.entry(mnemonic).or_default();
            e.0.extend(targets);
            e.1 += count;
        }
        for (into, from) in [
            (&mut missing, m),
            (&mut wrong_target, w),
            (&mut disagree, d),
        ] {
            for (k, v) in from {
                into.entry(k).or_insert(v);
            }
        }
        instructions += n;
    }
    println!(
        "isa table: {} code objects, {instructions} instructions, {} distinct mnemonics; {} entries ({} aliases); on gfx90a/gfx942/gfx950: {:?}",
        files.len(),
        seen.len(),
        isa::TABLE.len(),
        isa::ALIASES.len(),
        isa::TARGETS.map(|t| isa::TABLE.iter().filter(|p| p.on(t)).count())
    );
    let mut report = String::new();
    for (m, ex) in &missing {
        report += &format!("not in the table: {m}: {ex}\n");
    }
    for (m, ex) in &wrong_target {
        report += &format!("target: {m}: {ex}\n");
    }
    for (m, ex) in &disagree {
        report += &format!("operands: {m}: {ex}\n");
    }
    report
}

#[test]
fn roles_and_classes_of_known_instructions() {
    use isa::{Access, Counters, Memory, Ret};
    let p = isa::lookup("global_atomic_add_f32").unwrap();
    assert_eq!(
        (p.memory, p.access),
        (Memory::Global, Access::Atomic(Ret::IfGlc))
    );
    assert_eq!(p.counters, Counters::VM);
    let p = isa::lookup("flat_load_dword").unwrap();
    assert_eq!(p.counters, Counters::VM_LGKM);
    let p = isa::lookup("ds_add_rtn_u32").unwrap();
    assert_eq!(p.access, Access::Atomic(Ret::Yes));
    assert_eq!(p.dst().count(), 1);
    let p = isa::lookup("ds_bpermute_b32").unwrap();
    assert_eq!((p.memory, p.access), (Memory::None, Access::None));
    let p = isa::lookup("s_load_dwordx4").unwrap();
    assert_eq!(p.dst().next().unwrap().dwords(), 4);
    let p = isa::lookup("v_mfma_f32_32x32x8_bf16").unwrap();
    assert_eq!(p.format, isa::Format::Mfma);
    let acc = p.acc.unwrap();
    assert_eq!((acc.read_bits, acc.write_bits), (512, 512));
    let p = isa::lookup("v_smfmac_f32_16x16x128_fp8_fp8").unwrap();
    assert_eq!(p.operands[0].role, Role::DstSrc);
    assert!(!isa::lookup("v_mfma_scale_f32_16x16x128_f8f6f4")
        .unwrap()
        .on("gfx942"));
    assert!(isa::lookup("v_mfma_f32_32x32x8bf16_1k")
        .unwrap()
        .on("gfx90a"));
    // Every MFMA has LLVM's timing on each target it is on, nothing else has.
    for p in &isa::TABLE {
        for t in isa::TARGETS {
            let want = p.format == isa::Format::Mfma && p.on(t);
            assert_eq!(p.sched_on(t).is_some(), want, "{} on {t}", p.name);
        }
    }
    // Destinations also read: accumulate in place, lane writes, partial writes.
    for m in [
        "v_fmac_f32",
        "v_mac_f32",
        "v_pk_fmac_f16",
        "v_dot2c_f32_f16",
        "v_writelane_b32",
        "s_cmov_b32",
        "s_addk_i32",
        "s_bitset1_b32",
        "global_load_short_d16_hi",
        "buffer_load_format_d16_x",
        "ds_read_u8_d16",
    ] {
        assert_eq!(
            isa::lookup(m).unwrap().operands[0].role,
            Role::DstSrc,
            "{m}"
        );
    }
    for m in [
        "v_fma_f32",
        "buffer_load_format_d16_xy",
        "global_load_dword",
        "s_mov_b32",
    ] {
        assert_eq!(isa::lookup(m).unwrap().operands[0].role, Role::Dst, "{m}");
    }
}

#[test]
fn carry_outs_and_lane_mask_inputs_come_from_the_operand_roles() {
    // The executor and the sanitizer read these roles from the table
    // (`Props::carry_out`, `Props::mask_in`), not from lists of names.
    let with = |f: fn(&isa::Props) -> bool| -> Vec<&str> {
        isa::TABLE.iter().filter(|p| f(p)).map(|p| p.name).collect()
    };
    assert_eq!(
        with(isa::Props::carry_out),
        [
            "v_add_co_u32",
            "v_addc_co_u32",
            "v_div_scale_f32",
            "v_div_scale_f64",
            "v_mad_i64_i32",
            "v_mad_u64_u32",
            "v_sub_co_u32",
            "v_subb_co_u32",
            "v_subbrev_co_u32",
            "v_subrev_co_u32",
        ]
    );
    assert_eq!(
        with(isa::Props::mask_in),
        [
            "v_addc_co_u32",
            "v_cndmask_b32",
            "v_subb_co_u32",
            "v_subbrev_co_u32"
        ]
    );
    // LLVM's spellings resolve to the same properties.
    assert!(isa::lookup("v_addc_co_u32_e32").unwrap().mask_in());
    assert!(!isa::lookup("v_add_u32_e32").unwrap().carry_out());
}
