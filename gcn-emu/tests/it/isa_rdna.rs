//! The RDNA instruction-property tables (`gcn_emu::isa::rdna3`, `rdna4`)
//! against what they describe (issue 35's groundwork; nothing runs RDNA yet):
//! every instruction of the RDNA corpus (gcn-emu/tests/rdna: clang-22 HIP
//! and Triton 3.9 for gfx1100 and gfx1201; IREE 3.13's objects in
//! tests/corpus/iree/gfx1100, gfx1201) is in its target's table
//! ([`isa::table_for`]), available on that target per llvm-mc-22, and its
//! printed operands agree with the table's. That the tables are what the
//! generator writes is `isa.rs`'s `table_is_what_the_generator_writes`
//! (it writes every generation). aiter's gfx1250 objects have no table (no
//! XML): the survey prints what the RDNA4 table covers of them. The
//! opcodes are checked against the compilers' encodings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gcn_emu::decode::{find_objdump, Instruction, Operand, Program, RegFile};
use gcn_emu::isa::{self, Access, Kind, Props, Ret};
use gcn_emu::load::CodeObject;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
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

/// The instructions of every kernel of `file`, with its processor.
fn listing(file: &Path) -> (String, Vec<Instruction>) {
    let objdump = find_objdump(None).unwrap();
    let co = CodeObject::read_file(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut all = Vec::new();
    for k in &co.kernels {
        let p = Program::disassemble(&co, k, &objdump)
            .unwrap_or_else(|e| panic!("{}: {}: {e}", file.display(), k.name));
        all.extend(p.instructions);
    }
    (co.processor.clone(), all)
}

/// Why the printed operands of `ins` disagree with `p`, if they do.
fn disagreement(ins: &Instruction, p: &Props) -> Option<String> {
    if p.format == isa::Format::Vopd {
        return None; // two halves printed as one: rdna_opcodes_are_the_encoded_ones checks both
    }
    // An atomic without a return names no destination (glc on gfx11,
    // th:TH_ATOMIC_RETURN on gfx12).
    let returns = ins.has("glc")
        || ins
            .mods
            .iter()
            .any(|m| m.0 == "th" && m.1.contains("RETURN"));
    let no_return = p.access == Access::Atomic(Ret::IfGlc) && !returns;
    let mut table: Vec<_> = p
        .operands
        .iter()
        .filter(|o| !(no_return && matches!(o.name, "vdst" | "sdata")))
        .collect();
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
        let Operand::Reg { file, count, .. } = s.op else {
            continue;
        };
        let file_ok = match o.kind {
            Kind::Vgpr | Kind::VgprOrAgpr | Kind::Agpr | Kind::VgprOrAgprOrConst => {
                file == RegFile::V
            }
            Kind::Sgpr | Kind::Scalar => file == RegFile::S,
            Kind::Any => true,
            Kind::Imm | Kind::Label => false,
        };
        let max = o.dwords();
        let size_ok = match o.name {
            // 64-bit without a scalar base, 32 with one; a buffer's by idxen/offen.
            "addr" | "vaddr" => count <= max,
            // A wave32 VALU's carry/compare mask is one SGPR, the XML's 64 bits.
            _ if o.kind != Kind::Vgpr && file == RegFile::S && o.bits == 64 => {
                count == 1 || count == 2
            }
            // The XML sizes WMMA for wave32; in wave64 an operand may be
            // half that (gcn_emu::wmma's layouts, AMD's calculator's).
            _ if p.format == isa::Format::Mfma && count * 2 == max => {
                gcn_emu::wmma::decode(ins).is_ok_and(|x| x.layout.wave == 64)
            }
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

fn corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for t in ["gfx1100", "gfx1201"] {
        objects(&manifest().join("tests/rdna").join(t), &mut files);
        objects(&manifest().join("../tests/corpus/iree").join(t), &mut files);
    }
    files.sort();
    files
}

#[test]
fn every_rdna_corpus_instruction_is_in_its_table_and_agrees() {
    let files = corpus();
    assert!(files.len() >= 20, "RDNA corpus missing: {files:?}");
    let mut report = String::new();
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut n = 0;
    let mut true16 = BTreeSet::new();
    for f in &files {
        let (target, ins) = listing(f);
        let table = isa::table_for(&target)
            .unwrap_or_else(|| panic!("{}: no table for {target}", f.display()));
        for i in &ins {
            if i.mnemonic == ".long" {
                // LLVM 22 decodes gfx12's true16 VALU only when asked:
                // checked by true16_words_decode_with_real_true16.
                true16.insert(f.clone());
                continue;
            }
            n += 1;
            seen.entry(target.clone())
                .or_default()
                .insert(i.mnemonic.clone());
            let Some(p) = table.lookup(&i.mnemonic) else {
                report += &format!("not in {}: {}: {}\n", table.name, f.display(), i.text);
                continue;
            };
            // The table's target bits come from llvm-mc-22 without
            // `+real-true16`, under which gfx12 has no true16 form
            // (`v_mov_b16_e32 v9.h, v9.l`): the decoder prints these with
            // it (true16_words_decode_with_real_true16).
            if i.has("t16") && target.starts_with("gfx12") {
                true16.insert(f.clone());
            } else if !p.on(&target) {
                report += &format!("not on {target} per llvm-mc: {}: {}\n", f.display(), i.text);
            }
            if let Some(why) = disagreement(i, p) {
                report += &format!("operands: {}: `{}`: {why}\n", f.display(), i.text);
            }
        }
    }
    println!(
        "rdna tables: {} objects, {n} instructions; distinct mnemonics {:?}; rdna3 {} entries, rdna4 {}; \
         true16 words (.long without --mattr=+real-true16) in {true16:?}",
        files.len(),
        seen.iter().map(|(t, m)| (t, m.len())).collect::<Vec<_>>(),
        isa::rdna3::TABLE.len(),
        isa::rdna4::TABLE.len()
    );
    let mut lines: Vec<_> = report.lines().collect();
    lines.sort();
    lines.dedup();
    assert!(lines.is_empty(), "{}", lines.join("\n"));
}

/// Words of the corpus llvm-objdump-22 prints as `.long` by default: Triton
/// 3.9 compiles gfx1201 with 16-bit VGPR halves (`v9.l`), which LLVM 22
/// decodes only with `--mattr=+real-true16`. An RDNA decoder must pass it.
#[test]
fn true16_words_decode_with_real_true16() {
    let objdump = find_objdump(None).unwrap();
    let mut found = 0;
    for f in corpus() {
        let run = |extra: &[&str]| {
            let out = std::process::Command::new(&objdump)
                .args(["-d", "--no-show-raw-insn"])
                .args(extra)
                .arg(&f)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}: {out:?}", f.display());
            String::from_utf8(out.stdout).unwrap()
        };
        let plain = run(&[]);
        let longs = plain
            .lines()
            .filter(|l| l.trim_start().starts_with(".long"))
            .count();
        if longs == 0 {
            continue;
        }
        found += longs;
        let t16 = run(&["--mattr=+real-true16"]);
        let bad: Vec<_> = t16
            .lines()
            .filter(|l| l.trim_start().starts_with(".long"))
            .collect();
        assert!(
            bad.is_empty(),
            "{}: not decoded with +real-true16: {bad:?}",
            f.display()
        );
        let halves = t16
            .lines()
            .filter(|l| l.contains(".l") || l.contains(".h"))
            .count();
        assert!(
            halves >= longs,
            "{}: {longs} words, {halves} true16 lines",
            f.display()
        );
        println!("{}: {longs} words need +real-true16", f.display());
    }
    println!("true16 words in the RDNA corpus: {found}");
}

/// aiter's gfx1250 objects (tests/corpus/aiter/gfx1250) against the RDNA4
/// table: no XML covers gfx1250, so this is a survey (printed; the book's
/// "RDNA: not yet emulated" has the figures: `cargo test -p gcn-emu --test
/// isa_rdna -- --ignored --nocapture`). What it asserts: a mnemonic
/// the RDNA4 table has is one llvm-mc-22 assembles for gfx1250 (the
/// table's gfx1250 bit), and every object disassembles.
#[test]
#[ignore = "survey of 29 aiter objects (15 s in a debug build): figures in the book; run with --ignored"]
fn gfx1250_survey_against_the_rdna4_table() {
    let mut files = Vec::new();
    objects(
        &manifest().join("../tests/corpus/aiter/gfx1250"),
        &mut files,
    );
    files.sort();
    assert!(
        !files.is_empty(),
        "tests/corpus/aiter/gfx1250 is empty: run tests/corpus/aiter.sh"
    );
    let table = isa::Table {
        name: "rdna4",
        table: &isa::rdna4::TABLE,
        aliases: &isa::rdna4::ALIASES,
    };
    let mut have: BTreeMap<String, usize> = BTreeMap::new();
    let mut missing: BTreeMap<String, usize> = BTreeMap::new();
    let mut wrong = BTreeSet::new();
    for f in &files {
        let (target, ins) = listing(f);
        assert_eq!(target, "gfx1250", "{}", f.display());
        for i in &ins {
            match table.lookup(&i.mnemonic) {
                Some(p) => {
                    *have.entry(p.name.to_string()).or_default() += 1;
                    if !p.on("gfx1250") {
                        wrong.insert(format!("{} ({})", i.text, f.display()));
                    }
                }
                None => *missing.entry(i.mnemonic.clone()).or_default() += 1,
            }
        }
    }
    println!(
        "gfx1250: {} objects; {} distinct mnemonics in the RDNA4 table ({} instructions), {} not ({} instructions): {:?}",
        files.len(),
        have.len(),
        have.values().sum::<usize>(),
        missing.len(),
        missing.values().sum::<usize>(),
        missing
    );
    assert!(
        wrong.is_empty(),
        "in the RDNA4 table but not on gfx1250 per llvm-mc-22: {wrong:?}"
    );
}

#[test]
fn table_for_picks_each_generation() {
    assert_eq!(isa::table_for("gfx942").unwrap().name, "cdna");
    assert_eq!(isa::table_for("gfx1100").unwrap().name, "rdna3");
    assert_eq!(isa::table_for("gfx11-generic").unwrap().name, "rdna3");
    assert_eq!(isa::table_for("gfx1201").unwrap().name, "rdna4");
    assert!(isa::table_for("gfx1250").is_none());
    assert!(isa::table_for("gfx908").is_none());
    for t in [isa::rdna3::TABLE.as_slice(), isa::rdna4::TABLE.as_slice()] {
        for w in t.windows(2) {
            assert!(w[0].name < w[1].name, "{} before {}", w[0].name, w[1].name);
        }
    }
    let r4 = isa::table_for("gfx1201").unwrap();
    // The same mnemonic, each generation's facts: RDNA stores count on vscnt.
    let st = r4.lookup("global_store_b32").unwrap();
    assert_eq!(st.counters, isa::Counters::VS);
    assert!(st.on("gfx1201") && !st.on("gfx1100") && !st.on("gfx942"));
    assert!(
        isa::lookup("global_store_b32").is_none(),
        "not a CDNA mnemonic"
    );
    let w = r4.lookup("v_wmma_f32_16x16x16_f16").unwrap();
    assert_eq!(w.format, isa::Format::Mfma);
    assert_eq!(w.acc.map(|a| (a.read_bits, a.write_bits)), Some((256, 256)));
    let d = isa::table_for("gfx1100")
        .unwrap()
        .lookup("v_dual_fmac_f32")
        .unwrap();
    assert_eq!(d.format, isa::Format::Vopd);
    // An RDNA entry has no CDNA id, even where the CDNA table has its name.
    let mov = isa::table_for("gfx1100")
        .unwrap()
        .lookup("s_mov_b32")
        .unwrap();
    assert!(isa::lookup("s_mov_b32").is_some() && mov.id().is_none());
    let cdna = isa::table_for("gfx942").unwrap();
    assert_eq!(cdna.lookup("s_mov_b32").unwrap().id(), cdna.id("s_mov_b32"));
    // `_e64_dpp` is stripped to the base name.
    assert_eq!(r4.lookup("v_add_f32_e64_dpp").unwrap().name, "v_add_f32");
    // The CDNA table's answers are unchanged.
    assert_eq!(
        isa::table_for("gfx950").unwrap().lookup("ds_read_b128"),
        isa::lookup("ds_read_b128")
    );
}

/// The survey the book's "RDNA: not yet emulated" reports: per target, the
/// distinct mnemonics of the RDNA corpus (base names, the table's), which
/// of them the CDNA table also names, and which instruction forms the CDNA
/// executor's probe (`exec::Probe`, what `--list-unsupported` uses) would
/// run by their spelling alone (its wave64 CDNA semantics: not a claim that
/// they are right on RDNA). `cargo test -p gcn-emu --test it
/// isa_rdna::survey -- --ignored --nocapture`.
#[test]
#[ignore = "prints the survey for the book"]
fn survey_of_the_rdna_corpus() {
    /// Per target: every mnemonic, those not in the CDNA table, those the
    /// CDNA probe refuses a form of.
    type Sets = (
        BTreeSet<&'static str>,
        BTreeSet<&'static str>,
        BTreeSet<&'static str>,
    );
    let mut by_target: BTreeMap<String, Sets> = BTreeMap::new();
    // Per target: objects and instructions.
    let mut sizes: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut probe = gcn_emu::exec::Probe::new();
    for f in corpus() {
        let (target, ins) = listing(&f);
        let n = sizes.entry(target.clone()).or_default();
        n.0 += 1;
        n.1 += ins.len();
        let table = isa::table_for(&target).unwrap();
        let e = by_target.entry(target.clone()).or_default();
        for i in &ins {
            let Some(p) = table.lookup(&i.mnemonic) else {
                continue; // .long: true16_words_decode_with_real_true16
            };
            e.0.insert(p.name);
            if isa::lookup(p.name).is_none() {
                e.1.insert(p.name);
            }
            if !probe.implements(i) {
                e.2.insert(p.name);
            }
        }
    }
    assert!(!by_target.is_empty());
    for (t, (all, rdna_only, not_run)) in &by_target {
        println!(
            "{t}: {} objects, {} instructions, {} mnemonics; {} not in the CDNA table: {:?}; {} with a form the CDNA executor refuses: {:?}",
            sizes[t].0,
            sizes[t].1,
            all.len(),
            rdna_only.len(),
            rdna_only,
            not_run.len(),
            not_run
        );
    }
}

/// The opcode field of `w0` (an instruction's first dword) if its
/// encoding-identifying bits are those of `format`'s native gfx11/gfx12
/// encoding (RDNA3 and RDNA4 ISA guides, "Microcode formats"); `None` for
/// a promoted form (`_e64`) or a format not checked here.
fn opcode_field(format: isa::Format, w0: u32) -> Option<u32> {
    use isa::Format::*;
    let bits = |hi: u32, lo: u32| (w0 >> lo) & ((1u32 << (hi - lo + 1)) - 1);
    match format {
        Sop1 if bits(31, 23) == 0x17d => Some(bits(15, 8)),
        Sopc if bits(31, 23) == 0x17e => Some(bits(22, 16)),
        Sopp if bits(31, 23) == 0x17f => Some(bits(22, 16)),
        Sopk if bits(31, 28) == 0xb => Some(bits(27, 23)),
        Sop2 if bits(31, 30) == 0b10 && bits(29, 28) != 0b11 => Some(bits(29, 23)),
        Vop1 if bits(31, 25) == 0x3f => Some(bits(16, 9)),
        Vopc if bits(31, 25) == 0x3e => Some(bits(24, 17)),
        Vop2 if bits(31, 31) == 0 => Some(bits(30, 25)),
        Vop3 if bits(31, 26) == 0b110101 => Some(bits(25, 16)),
        Vop3p | Mfma if bits(31, 24) == 0xcc => Some(bits(22, 16)),
        Ds if bits(31, 26) == 0b110110 => Some(bits(25, 18)),
        _ => None,
    }
}

/// The opcode field of a memory instruction's first dword, per generation:
/// gfx11's FLAT (GLOBAL/SCRATCH by its seg field), MUBUF and SMEM; gfx12's
/// VFLAT/VGLOBAL/VSCRATCH, VBUFFER and SMEM.
fn memory_opcode_field(gfx12: bool, format: isa::Format, w0: u32) -> Option<u32> {
    use isa::Format::*;
    let bits = |hi: u32, lo: u32| (w0 >> lo) & ((1u32 << (hi - lo + 1)) - 1);
    match (gfx12, format) {
        (false, Flat | Global | Scratch) if bits(31, 26) == 0b110111 => Some(bits(24, 18)),
        (false, Mubuf) if bits(31, 26) == 0b111000 => Some(bits(25, 18)),
        (false, Smem) if bits(31, 26) == 0b111101 => Some(bits(25, 18)),
        (true, Flat | Global | Scratch) if matches!(bits(31, 24), 0xec..=0xee) => {
            Some(bits(21, 14))
        }
        (true, Mubuf) if bits(31, 24) == 0xc4 => Some(bits(21, 14)),
        (true, Smem) if bits(31, 26) == 0b111101 => Some(bits(18, 13)),
        _ => None,
    }
}

/// The tables' opcodes (AMD's XML, via the extract) are the ones the
/// compilers encoded: the opcode field of every corpus instruction in its
/// native encoding equals its entry's `opcode`; both halves of a VOPD pair
/// are in the table, on the target, with the encoded opcodes.
#[test]
fn rdna_opcodes_are_the_encoded_ones() {
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut wrong = BTreeSet::new();
    for f in corpus() {
        let (target, ins) = listing(&f);
        let table = isa::table_for(&target).unwrap();
        for i in &ins {
            let Some(p) = table.lookup(&i.mnemonic) else {
                continue;
            };
            let w0 = i.words.first().copied().unwrap_or(0);
            if p.format == isa::Format::Vopd {
                // VOPD: X's opcode in [25:22], Y's in [21:17]; Y is printed
                // after `::`.
                let y = i
                    .text
                    .split("::")
                    .nth(1)
                    .and_then(|y| y.split_whitespace().next());
                let py = y.and_then(|y| table.lookup(y));
                let (ox, oy) = ((w0 >> 22) & 0xf, (w0 >> 17) & 0x1f);
                *checked.entry(format!("{target} Vopd")).or_default() += 1;
                match py {
                    Some(py)
                        if w0 >> 26 == 0b110010
                            && ox == p.opcode as u32
                            && oy == py.opcode as u32
                            && py.on(&target) => {}
                    _ => {
                        wrong.insert(format!(
                            "{target}: VOPD `{}` encodes X {ox} Y {oy}; the table: X {}, Y {:?}",
                            i.text,
                            p.opcode,
                            py.map(|q| (q.name, q.opcode, q.on(&target)))
                        ));
                    }
                }
                continue;
            }
            let Some(op) = opcode_field(p.format, w0)
                .or_else(|| memory_opcode_field(target.starts_with("gfx12"), p.format, w0))
            else {
                continue;
            };
            *checked
                .entry(format!("{target} {:?}", p.format))
                .or_default() += 1;
            if op != p.opcode as u32 {
                wrong.insert(format!(
                    "{target}: `{}` encodes opcode {op}, the table has {} ({:?})",
                    i.text, p.opcode, p.format
                ));
            }
        }
    }
    println!("opcodes checked: {checked:?}");
    assert!(
        wrong.is_empty(),
        "{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
    for t in ["gfx1100", "gfx1201"] {
        for fmt in [
            "Sop1", "Sop2", "Sopp", "Vop1", "Vop2", "Vop3", "Ds", "Vopd", "Mfma", "Global",
            "Mubuf", "Smem",
        ] {
            assert!(
                checked.get(&format!("{t} {fmt}")).is_some_and(|n| *n > 0),
                "no {fmt} instruction checked on {t}: {checked:?}"
            );
        }
    }
}
