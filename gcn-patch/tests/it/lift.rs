//! `gcn-patch lift`: code objects back to asm that rebuilds them.
//!
//! Every lifted file is rebuilt here independently of the product's own
//! rebuild check (which builds it as `gcn-patch build` does, see
//! `gcn_patch::ops::lift::identity`): with llvm-mc and ld.lld, then `.text`,
//! `.rodata`, the `.note` section and `e_flags` are compared byte for byte
//! (and the metadata notes as decoded MessagePack documents, to say why).
//! Each lift must also report [`Identity::Identical`].
//!
//! The aiter sample (`tests/corpus/aiter`, made by `tests/corpus/aiter.sh`
//! from ROCm/aiter) is chosen by a rule, not by hand: for each of gfx942,
//! gfx950 and gfx1250, in every family (first directory under
//! `hsa/<arch>/`, plus the files directly in it), the `.co` files sorted by
//! path at ranks floor(i*n/4), i = 0..3. The test checks the sample is what
//! that rule gives on aiter's listing as recorded in `index.tsv`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use gcn_patch::ops::lift::{lift_code_object, LiftOptions};
use gcn_patch::stage::lift::{Identity, Lifted};
use object::{Object, ObjectSection};

fn aiter_dir() -> PathBuf {
    common::repo().join("tests/corpus/aiter")
}

/// (arch, family, path) of every sampled code object, from `index.tsv`.
fn aiter_sample() -> Vec<(String, String, PathBuf)> {
    let index = std::fs::read_to_string(aiter_dir().join("index.tsv"))
        .expect("tests/corpus/aiter/index.tsv (run tests/corpus/aiter.sh AITER_REPO)");
    index
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let under = f[2]
                .strip_prefix(&format!("hsa/{}/", f[0]))
                .expect("aiter path under hsa/<arch>/");
            let path = aiter_dir().join(f[0]).join(under);
            (f[0].to_string(), f[1].to_string(), path)
        })
        .collect()
}

fn section(elf: &[u8], name: &str) -> Option<Vec<u8>> {
    let f = object::File::parse(elf).ok()?;
    let s = f.section_by_name(name)?;
    s.data().ok().map(<[u8]>::to_vec)
}

fn e_flags(elf: &[u8]) -> u32 {
    u32::from_le_bytes(elf[48..52].try_into().unwrap())
}

/// The metadata note's decoded document, canonical.
fn metadata(elf: &[u8]) -> Option<String> {
    let f = object::read::elf::ElfFile64::<object::Endianness>::parse(elf).ok()?;
    use object::read::elf::{FileHeader, SectionHeader};
    let endian = f.endian();
    for s in f.elf_header().sections(endian, elf).ok()?.iter() {
        if let Ok(Some(mut notes)) = s.notes(endian, elf) {
            while let Ok(Some(n)) = notes.next() {
                if n.name() == b"AMDGPU" && n.n_type(endian).0 == 32 {
                    return gcn_patch::support::lift::canonical(n.desc()).ok();
                }
            }
        }
    }
    None
}

/// The tables ld.lld writes that the identity check does not compare, but
/// that lift reproduces too (the descriptors' own visibility, `.bss`
/// symbols' sizes): measured here on every corpus object.
const LINKER_TABLES: [&str; 4] = [".dynsym", ".gnu.hash", ".hash", ".dynstr"];

/// Rebuild `lifted` with llvm-mc + ld.lld and say how it differs from
/// `original` (empty: identical), and which of [`LINKER_TABLES`] differ.
fn rebuild_differences(lifted: &Lifted, original: &[u8]) -> (Vec<String>, Vec<&'static str>) {
    let rebuilt = match assemble(&lifted.asm, &lifted.target) {
        Ok(b) => b,
        Err(e) => return (vec![format!("does not assemble: {e}")], vec![]),
    };
    let tables = LINKER_TABLES
        .into_iter()
        .filter(|s| section(&rebuilt, s) != section(original, s))
        .collect();
    (parts_differences(lifted, original, &rebuilt), tables)
}

fn parts_differences(lifted: &Lifted, original: &[u8], rebuilt: &[u8]) -> Vec<String> {
    let mut out = vec![];
    for s in [".text", ".rodata", ".note"] {
        if section(rebuilt, s) != section(original, s) {
            out.push(format!("{s} differs"));
        }
    }
    if lifted.identity != Identity::Identical {
        out.push(format!("lift reports {}", lifted.identity));
    }
    if e_flags(rebuilt) != e_flags(original) {
        out.push("e_flags differ".into());
    }
    if metadata(rebuilt) != metadata(original) {
        out.push("metadata differs".into());
    }
    out
}

/// Assemble with llvm-mc (`--mcpu`, the target ID's features, and
/// `+real-true16` when the text names 16-bit register halves) and link with
/// ld.lld.
fn assemble(text: &str, target: &gcn_embed::TargetId) -> Result<Vec<u8>, String> {
    let true16 = regex::Regex::new(r"\bv[0-9]+\.[lh]\b").unwrap();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (s, o, co) = (
        dir.path().join("k.s"),
        dir.path().join("k.o"),
        dir.path().join("k.hsaco"),
    );
    std::fs::write(&s, text).map_err(|e| e.to_string())?;
    let mut features: Vec<String> = [("sramecc", target.sramecc), ("xnack", target.xnack)]
        .iter()
        .filter(|(_, f)| f.is_pinned())
        .map(|(n, f)| format!("{}{n}", f.sign()))
        .collect();
    if true16.is_match(text) {
        features.push("+real-true16".into());
    }
    let mut mc =
        std::process::Command::new(common::required_tool("llvm-mc-22", common::LLVM_INSTALL));
    mc.args(["--triple=amdgcn-amd-amdhsa", "--filetype=obj"])
        .arg(format!("--mcpu={}", target.processor.name))
        .arg(format!("--mattr={}", features.join(",")));
    let run = |cmd: &mut std::process::Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    };
    run(mc.arg(&s).arg("-o").arg(&o))?;
    run(
        std::process::Command::new(common::required_tool("ld.lld-22", common::LLVM_INSTALL))
            .arg("-shared")
            .arg(&o)
            .arg("-o")
            .arg(&co),
    )?;
    std::fs::read(&co).map_err(|e| e.to_string())
}

#[derive(Default)]
struct Tally {
    files: usize,
    identical: usize,
    /// Files whose [`LINKER_TABLES`] are identical too.
    tables_identical: usize,
    instructions: usize,
    raw: usize,
    failures: Vec<String>,
    table_failures: Vec<String>,
    /// Lifted files with a control-flow finding (a path off a kernel's end
    /// or into another kernel): there must be none in unpatched code.
    control: Vec<String>,
}

/// Lift and rebuild `files` on two threads; tallies by the key each file gives.
fn lift_all(files: &[(String, PathBuf)]) -> BTreeMap<String, Tally> {
    let tc = common::toolchain();
    let tallies: Mutex<BTreeMap<String, Tally>> = Mutex::new(BTreeMap::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some((key, path)) = files.get(i) else {
                    return;
                };
                let bytes = std::fs::read(path).unwrap();
                let result = lift_code_object(&bytes, path, &LiftOptions::new(&tc));
                let control = result.as_ref().ok().map(|l| {
                    let doc = gcn_patch::base::document::Document::from_source(&l.asm, path);
                    gcn_patch::support::findings(&doc)
                });
                // Progress for the long survey (standard error, not asserted).
                if files.len() >= 500 && (i + 1) % 100 == 0 {
                    eprintln!("  lifted {} of {}", i + 1, files.len());
                }
                let mut t = tallies.lock().unwrap();
                let t = t.entry(key.clone()).or_default();
                t.files += 1;
                match result {
                    Ok(l) => {
                        if let Some(f) = control.filter(|f| !f.is_empty()) {
                            t.control.push(format!("{}: {f:?}", path.display()));
                        }
                        let (diffs, tables) = rebuild_differences(&l, &bytes);
                        t.instructions += l.instructions;
                        t.raw += l.raw_instructions;
                        if tables.is_empty() {
                            t.tables_identical += 1;
                        } else {
                            t.table_failures.push(format!(
                                "{}: {}",
                                path.display(),
                                tables.join(", ")
                            ));
                        }
                        if diffs.is_empty() {
                            t.identical += 1;
                        } else {
                            t.failures
                                .push(format!("{}: {}", path.display(), diffs.join("; ")));
                        }
                    }
                    Err(e) => t.failures.push(format!("{}: {e}", path.display())),
                }
            });
        }
    });
    tallies.into_inner().unwrap()
}

fn report(title: &str, tallies: &BTreeMap<String, Tally>) {
    eprintln!("{title}");
    eprintln!(
        "  {:<24} {:>5} {:>10} {:>8} {:>12} {:>8} {:>7}",
        "target", "files", "identical", "tables", "instructions", "raw", "raw %"
    );
    for (k, t) in tallies {
        eprintln!(
            "  {k:<24} {:>5} {:>10} {:>8} {:>12} {:>8} {:>6.2}%",
            t.files,
            t.identical,
            t.tables_identical,
            t.instructions,
            t.raw,
            100.0 * t.raw as f64 / t.instructions.max(1) as f64
        );
        for f in &t.failures {
            eprintln!("    FAILED {f}");
        }
        for f in &t.table_failures {
            eprintln!("    linker tables differ: {f}");
        }
    }
}

/// [`report`], the overall figure, and the issue's bar: at least 99 % of the
/// aiter code objects rebuild identically.
fn report_at_least_99_percent(title: &str, tallies: &BTreeMap<String, Tally>) {
    report(title, tallies);
    let total: usize = tallies.values().map(|t| t.files).sum();
    let identical: usize = tallies.values().map(|t| t.identical).sum();
    eprintln!(
        "  all: {identical} of {total} identical ({:.2}%)",
        100.0 * identical as f64 / total as f64
    );
    assert!(
        identical * 100 >= total * 99,
        "only {identical} of {total} aiter code objects rebuild identically"
    );
    let control: Vec<&String> = tallies.values().flat_map(|t| &t.control).collect();
    eprintln!("  control-flow findings in lifted code: {}", control.len());
    assert!(
        control.is_empty(),
        "control-flow findings in unpatched code: {control:#?}"
    );
}

#[test]
fn aiter_sample_follows_the_rule_and_covers_every_family() {
    let sample = aiter_sample();
    assert!(sample.len() >= 100, "{} files", sample.len());
    let mut per_family: BTreeMap<(String, String), Vec<&Path>> = BTreeMap::new();
    for (arch, fam, path) in &sample {
        assert!(path.is_file(), "{} is missing", path.display());
        per_family
            .entry((arch.clone(), fam.clone()))
            .or_default()
            .push(path);
    }
    for arch in ["gfx942", "gfx950", "gfx1250"] {
        let families = per_family.keys().filter(|(a, _)| a == arch).count();
        assert!(families >= 9, "{arch}: {families} families");
    }
    // Several families of each kind the issue names.
    for kind in ["gemm", "fmha", "fmoe", "pa", "mla", "topk"] {
        assert!(
            per_family.keys().any(|(_, f)| f.contains(kind)),
            "no {kind} family in the sample"
        );
    }
    for (fam, files) in &per_family {
        assert!(files.len() <= 4, "{fam:?}: more than 4 files");
        let mut sorted = files.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(
            &sorted, files,
            "{fam:?}: index.tsv not in path order, or a file twice"
        );
    }
    let license = std::fs::read_to_string(aiter_dir().join("SOURCE.txt")).unwrap();
    assert!(license.contains("MIT License") && license.contains("Permission is hereby granted"));
}

#[test]
fn aiter_code_objects_rebuild_byte_identically() {
    let files: Vec<(String, PathBuf)> = aiter_sample()
        .into_iter()
        .map(|(arch, _, p)| (arch, p))
        .collect();
    let tallies = lift_all(&files);
    report_at_least_99_percent(
        "aiter sample: lift, then rebuild with llvm-mc-22 + ld.lld-22",
        &tallies,
    );
    // The linker's tables too, for every file of the sample (measured
    // claim of the book; the identity check itself does not compare them).
    for (k, t) in &tallies {
        assert_eq!(t.tables_identical, t.files, "{k}: {:?}", t.table_failures);
    }
    // gfx942 keeps (almost) every instruction as text.
    let g = &tallies["gfx942"];
    assert!(
        g.raw * 1000 <= g.instructions,
        "gfx942: {} of {} instructions raw",
        g.raw,
        g.instructions
    );
}

/// The whole of aiter's `hsa/` tree, not a sample: about 2,900 code objects,
/// some 10 minutes on two cores (release build), so it is not part of the
/// suite. Run it
/// with `tests/corpus/aiter-survey.sh AITER_REPO`, which extracts `hsa/`
/// from a clone of ROCm/aiter and runs this test on it. It fails, saying
/// so, when `GCN_AITER_HSA` does not name such a directory.
#[test]
#[ignore = "the full aiter survey: run tests/corpus/aiter-survey.sh AITER_REPO"]
fn aiter_full_survey_rebuilds_byte_identically() {
    let hsa = std::env::var_os("GCN_AITER_HSA").map(PathBuf::from).expect(
        "GCN_AITER_HSA must name the hsa/ directory of ROCm/aiter: run \
         tests/corpus/aiter-survey.sh AITER_REPO",
    );
    let mut files = vec![];
    for arch in ["gfx942", "gfx950", "gfx1250"] {
        let dir = hsa.join(arch);
        assert!(dir.is_dir(), "{} is not a directory", dir.display());
        for e in walkdir::WalkDir::new(&dir).sort_by_file_name() {
            let e = e.unwrap();
            if e.path().extension().is_some_and(|x| x == "co") {
                files.push((arch.to_string(), e.into_path()));
            }
        }
    }
    assert!(
        files.len() >= 1000,
        "only {} .co files under {}",
        files.len(),
        hsa.display()
    );
    let tallies = lift_all(&files);
    report_at_least_99_percent("all of aiter's hsa/: lift, then rebuild", &tallies);
}

#[test]
fn compiler_made_code_objects_rebuild_byte_identically() {
    let mut files = vec![];
    for entry in walkdir::WalkDir::new(common::repo().join("tests"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
    {
        let p = entry.path();
        if p.extension().is_some_and(|e| e == "hsaco") {
            let key = if p.to_string_lossy().contains("/triton/") {
                "triton"
            } else {
                "iree"
            };
            files.push((key.to_string(), p.to_path_buf()));
        }
    }
    assert!(files.len() >= 30, "{} hsaco in the corpus", files.len());
    let tallies = lift_all(&files);
    report("compiler-made code objects", &tallies);
    for (k, t) in &tallies {
        assert_eq!(t.identical, t.files, "{k}: {:?}", t.failures);
        assert_eq!(t.tables_identical, t.files, "{k}: {:?}", t.table_failures);
        assert!(
            t.control.is_empty(),
            "{k}: control-flow findings {:?}",
            t.control
        );
    }
}

/// Raw lines stay visible to the checks: a register used only on a raw line
/// counts, and the line keeps its bytes.
#[test]
fn raw_lines_are_read_by_the_checks() {
    let tc = common::toolchain();
    let co = aiter_sample()
        .into_iter()
        .find(|(arch, fam, _)| arch == "gfx950" && fam == "f4gemm")
        .expect("a gfx950 f4gemm in the sample")
        .2;
    let lifted =
        lift_code_object(&std::fs::read(&co).unwrap(), &co, &LiftOptions::new(&tc)).unwrap();
    assert!(
        lifted.raw_instructions > 0,
        "expected raw lines in {}",
        co.display()
    );
    let doc = gcn_patch::base::document::Document::from_source(&lifted.asm, "k.s");
    let raw: Vec<usize> = (0..doc.len())
        .filter(|&i| matches!(doc.kind(i), Some(gcn_patch::base::parse::LineKind::Raw(_))))
        .collect();
    assert_eq!(raw.len(), lifted.raw_instructions);
    for &i in &raw {
        let insn = doc.instruction(i).expect("raw line read as an instruction");
        assert!(insn.mnemonic.starts_with("v_mfma_scale"), "{}", doc.text(i));
        assert!(insn.registers().count() >= 4);
    }
    assert!(lifted
        .notes
        .iter()
        .any(|n| n.code == gcn_patch::base::diag::Code::RawEncodings));
}

#[test]
fn cli_lift_writes_the_asm_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let co = common::repo().join("tests/corpus/iree/gfx942/softmax.hsaco");
    let out = dir.path().join("softmax.s");
    let o = common::ok(common::run_cli(
        dir.path(),
        &["lift", co.to_str().unwrap(), "-o", out.to_str().unwrap()],
    ));
    let err = common::stderr(&o);
    assert!(
        err.contains("; rebuilds identical (.text, .rodata, .note (metadata), e_flags)"),
        "{err}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let body: String = text.lines().skip(1).collect::<Vec<_>>().join("\n");
    insta::assert_snapshot!("lifted_iree_softmax_gfx942", body);
}

/// Issue 22: IREE 3.13's and Triton 3.9's own gfx1100 and gfx1201 code
/// objects (the corpus files, made by `tests/corpus/regen.sh` and
/// `tests/triton/generate.py`; regenerated on 2026-11-24 with the pinned
/// versions they are byte for byte what those compilers make today) lift,
/// and `gcn-patch assemble` of the lifted asm (the build path: retarget,
/// skew normalization, checks, assembler, ld.lld) gives back `.text`,
/// `.rodata`, the `.note` section and `e_flags` byte for byte. Before, no
/// `.note` was identical and 5 of these 10 also differed in `.text` or
/// `.rodata` or did not assemble: the metadata target respelled (the note
/// 12 bytes shorter, `.rodata` moved, the code-entry offset 0x10c0 ->
/// 0x1100), a raw VOPD line rewritten into text the assembler rejects, and
/// two movs split.
#[test]
fn fresh_gfx11_gfx12_iree_and_triton_objects_rebuild_identical_through_assemble() {
    let mut objects = vec![];
    for t in ["gfx1100", "gfx1201"] {
        for op in ["matmul", "softmax", "conv"] {
            objects.push((format!("tests/corpus/iree/{t}/{op}.hsaco"), t));
        }
        for k in ["matmul", "softmax"] {
            objects.push((format!("tests/triton/{k}-{t}/{k}.hsaco"), t));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = vec![];
    for (i, (rel, t)) in objects.iter().enumerate() {
        let co = common::repo().join(rel);
        let original = std::fs::read(&co).unwrap();
        let (asm, built) = (format!("k{i}.s"), format!("k{i}.hsaco"));
        let o = common::ok(common::run_cli(
            dir.path(),
            &["lift", co.to_str().unwrap(), "-o", &asm],
        ));
        let err = common::stderr(&o);
        assert!(
            err.contains(&format!("({t}): 1 kernel(s), "))
                && err.contains("; rebuilds identical (.text, .rodata, .note (metadata), e_flags)"),
            "{rel}: {err}"
        );
        let o = common::run_cli(dir.path(), &["assemble", &asm, "--target", t, "-o", &built]);
        if !o.status.success() {
            failures.push(format!("{rel}: assemble failed: {}", common::stderr(&o)));
            continue;
        }
        let rebuilt = std::fs::read(dir.path().join(&built)).unwrap();
        for s in [".text", ".rodata", ".note"] {
            if section(&rebuilt, s) != section(&original, s) {
                failures.push(format!("{rel}: {s} differs"));
            }
        }
        if e_flags(&rebuilt) != e_flags(&original) {
            failures.push(format!("{rel}: e_flags differ"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// What lift says when the rebuild differs: the error names the part, the
/// offset and address, the bytes, the descriptor field or metadata, and
/// why; nothing is written. `--no-verify` writes the asm and says it was
/// not verified. The inputs are real code objects changed where LLVM 22
/// cannot follow: the metadata note's map keys out of LLVM's order (the
/// same document, other bytes), and a kernel descriptor whose code-entry
/// offset is not the distance to its code (0x1100 where the layout gives
/// 0x10c0, the figure of issue 22).
#[test]
fn a_rebuild_that_differs_fails_naming_the_bytes_and_no_verify_writes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // gfx942 softmax: swap the `.sgpr_count` and `.vgpr_count` entries of
    // the kernel's metadata map (13 bytes each: a fixstr key and a fixint).
    let mut note =
        std::fs::read(common::repo().join("tests/corpus/iree/gfx942/softmax.hsaco")).unwrap();
    let at = |b: &[u8], k: &[u8]| b.windows(k.len()).position(|w| w == k).unwrap();
    let (i, j) = (at(&note, b"\xab.sgpr_count"), at(&note, b"\xab.vgpr_count"));
    assert!(note[i + 12] < 0x80 && note[j + 12] < 0x80);
    let (a, b) = (note[i..i + 13].to_vec(), note[j..j + 13].to_vec());
    note[i..i + 13].copy_from_slice(&b);
    note[j..j + 13].copy_from_slice(&a);
    std::fs::write(d.join("note.hsaco"), &note).unwrap();
    // gfx1100 softmax: the descriptor's kernel_code_entry_byte_offset + 0x40.
    let mut entry =
        std::fs::read(common::repo().join("tests/corpus/iree/gfx1100/softmax.hsaco")).unwrap();
    let rodata = {
        let f = object::File::parse(&*entry).unwrap();
        let s = f.section_by_name(".rodata").unwrap();
        s.file_range().unwrap().0 as usize
    };
    let old = i64::from_le_bytes(entry[rodata + 16..rodata + 24].try_into().unwrap());
    assert_eq!(old, 0x10c0);
    entry[rodata + 16..rodata + 24].copy_from_slice(&(old + 0x40).to_le_bytes());
    std::fs::write(d.join("entry.hsaco"), &entry).unwrap();

    let mut shown = String::new();
    for input in ["note.hsaco", "entry.hsaco"] {
        let out = format!("{input}.s");
        let o = common::run_cli(d, &["lift", input, "-o", &out]);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{input}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!d.join(&out).exists(), "{input}: wrote {out}");
        shown.push_str(&err);
        // --no-verify writes it and says so.
        let o = common::ok(common::run_cli(
            d,
            &["lift", input, "-o", &out, "--no-verify"],
        ));
        assert!(
            common::stderr(&o).contains("; not verified (--no-verify)"),
            "{}",
            common::stderr(&o)
        );
        assert!(d.join(&out).is_file());
    }
    insta::assert_snapshot!("lift_rebuild_differs", shown);
}

#[test]
fn bad_inputs_fail_clearly_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good =
        std::fs::read(common::repo().join("tests/corpus/iree/gfx942/softmax.hsaco")).unwrap();
    let host = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.co",
            good[..good.len() / 2].to_vec(),
            "damaged or truncated",
        ),
        (
            "empty.co",
            vec![],
            "is not a code object, an offload bundle",
        ),
        (
            "host.co",
            host[..4096.min(host.len())].to_vec(),
            "not an AMDGPU ELF",
        ),
        (
            "text.co",
            b"s_endpgm\n".to_vec(),
            "is not a code object, an offload bundle",
        ),
    ];
    for (name, bytes, want) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, &bytes).unwrap();
        let out = dir.path().join(format!("{name}.s"));
        let o = common::run_cli(
            dir.path(),
            &["lift", input.to_str().unwrap(), "-o", out.to_str().unwrap()],
        );
        let err = common::stderr(&o);
        assert!(!o.status.success(), "{name}: succeeded");
        assert!(err.contains(want), "{name}: {err}");
        assert!(
            err.contains(name),
            "{name}: error does not name the file: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(!out.exists(), "{name}: wrote {}", out.display());
    }
}

/// A lifted aiter kernel is a source like a dump: imported, patched by a
/// rule, checked, built; objdiff shows exactly the rule's change.
#[test]
fn rule_patch_on_a_lifted_aiter_kernel_builds_and_objdiff_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let co = aiter_sample()
        .into_iter()
        .find(|(arch, fam, p)| {
            arch == "gfx942" && fam == "topksoftmax" && p.ends_with("topksoftmax_4x128x6.co")
        })
        .expect("gfx942 topksoftmax_4x128x6 in the sample")
        .2;
    common::ok(common::run_cli(
        dir,
        &["lift", co.to_str().unwrap(), "-o", "topk.s"],
    ));
    common::ok(common::run_cli(dir, &["import", "topk.s"]));
    let manifest = dir.join("kernels.toml");
    let mut m = std::fs::read_to_string(&manifest).unwrap();
    m.push_str(
        "\n[[kernel.source.rule]]\ninsert = [\"s_setprio 2\"]\nbefore = \"s_endpgm\"\noccurrence = 1\n",
    );
    std::fs::write(&manifest, m).unwrap();
    common::ok(common::run_cli(dir, &["check", "--no-assemble"]));
    let b = common::ok(common::run_cli(dir, &["build", "--out", "out"]));
    assert!(
        String::from_utf8_lossy(&b.stdout).contains("assembled"),
        "{}",
        common::stderr(&b)
    );
    let od = common::ok(common::run_cli(
        dir,
        &["objdiff", "topk", "--target", "gfx942"],
    ));
    let od = String::from_utf8_lossy(&od.stdout).into_owned();
    let changed: Vec<&str> = od
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(changed, ["+s_setprio 2"], "{od}");
}

fn containers() -> PathBuf {
    common::repo().join("tests/corpus/containers")
}

/// Members as `clang-offload-bundler --unbundle` extracts them (from the
/// `.hip_fatbin` section `llvm-objcopy` dumps, for a host object).
fn unbundled(input: &Path, host: bool, target: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("member.co");
    let fatbin = dir.path().join("fatbin");
    let input = if host {
        let o = std::process::Command::new(common::required_tool(
            "llvm-objcopy-22",
            common::LLVM_INSTALL,
        ))
        .arg(format!("--dump-section=.hip_fatbin={}", fatbin.display()))
        .arg(input)
        .arg(dir.path().join("host.o"))
        .output()
        .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        fatbin.as_path()
    } else {
        input
    };
    let kind = "o";
    let o = std::process::Command::new(common::required_tool(
        "clang-offload-bundler-22",
        common::LLVM_INSTALL,
    ))
    .arg("--unbundle")
    .arg(format!("--type={kind}"))
    .arg(format!("--targets=hipv4-amdgcn-amd-amdhsa--{target}"))
    .arg(format!("--input={}", input.display()))
    .arg(format!("--output={}", out.display()))
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

/// Every member of every container: found as the real bundler finds it,
/// lifted, and rebuilt byte-identically.
#[test]
fn container_members_match_the_bundler_and_rebuild() {
    use gcn_patch::support::lift::{code_objects, Kind};
    let tc = common::toolchain();
    let cases = [
        ("scale-host.o", Kind::HostObject, Some(true)),
        ("scale-host-compressed.o", Kind::HostObject, Some(true)),
        ("scale.hipfb", Kind::Bundle, Some(false)),
        ("softmax-gfx942.vmfb", Kind::Vmfb, None),
    ];
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    for (name, kind, host) in cases {
        let path = containers().join(name);
        let bytes = std::fs::read(&path).unwrap();
        let c = code_objects(&bytes, &path).unwrap();
        assert_eq!(c.kind, kind, "{name}");
        let targets: Vec<String> = c.members.iter().map(|m| m.target.name()).collect();
        match host {
            Some(t) => {
                assert_eq!(targets, ["gfx1100", "gfx942"], "{name}");
                for m in &c.members {
                    let want = unbundled(&path, t, &m.target.name());
                    assert!(
                        m.bytes == want,
                        "{name}: {} differs from the bundler's",
                        m.label
                    );
                }
            }
            None => {
                assert_eq!(targets, ["gfx942"], "{name}");
                // IREE embeds the code object it also dumps.
                let dumped =
                    std::fs::read(common::repo().join("tests/corpus/iree/gfx942/softmax.hsaco"))
                        .unwrap();
                assert!(c.members[0].bytes == dumped, "{name}: not IREE's hsaco");
            }
        }
        for m in &c.members {
            let t = tallies.entry(name.to_string()).or_default();
            t.files += 1;
            let origin = path.join(&m.label);
            match lift_code_object(&m.bytes, &origin, &LiftOptions::new(&tc)) {
                Ok(l) => {
                    t.instructions += l.instructions;
                    t.raw += l.raw_instructions;
                    let (d, tables) = rebuild_differences(&l, &m.bytes);
                    if tables.is_empty() {
                        t.tables_identical += 1;
                    } else {
                        t.table_failures
                            .push(format!("{}: {}", m.label, tables.join(", ")));
                    }
                    if d.is_empty() {
                        t.identical += 1;
                    } else {
                        t.failures.push(format!("{}: {}", m.label, d.join("; ")));
                    }
                }
                Err(e) => t.failures.push(format!("{}: {e}", m.label)),
            }
        }
    }
    report("container members", &tallies);
    for (k, t) in &tallies {
        assert_eq!(t.identical, t.files, "{k}: {:?}", t.failures);
        assert_eq!(t.tables_identical, t.files, "{k}: {:?}", t.table_failures);
    }
}

/// Bad containers: a clear error naming the file, and no output.
#[test]
fn bad_containers_fail_clearly_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let host = std::fs::read(containers().join("scale-host-compressed.o")).unwrap();
    // Damage the zstd payload of the compressed bundle inside .hip_fatbin.
    let at = host
        .windows(4)
        .position(|w| w == b"CCOB")
        .expect("a CCOB bundle");
    let mut corrupt = host.clone();
    for b in &mut corrupt[at + 40..at + 120] {
        *b ^= 0x5a;
    }
    std::fs::write(dir.path().join("corrupt.o"), corrupt).unwrap();
    let cases: [(&str, PathBuf, &[&str], &str); 4] = [
        (
            "a bundle without the requested target",
            containers().join("scale.hipfb"),
            &["--target", "gfx90a"],
            "has no code object for gfx90a",
        ),
        (
            "several targets and no --target",
            containers().join("scale-host.o"),
            &[],
            "holds 2 code objects",
        ),
        (
            "a corrupt compressed bundle",
            dir.path().join("corrupt.o"),
            &["--target", "gfx942"],
            "corrupt offload bundle",
        ),
        (
            "a .vmfb without AMDGPU code",
            containers().join("softmax-cpu.vmfb"),
            &[],
            "without AMDGPU code objects",
        ),
    ];
    for (what, input, extra, want) in cases {
        let out = dir.path().join("out.s");
        let mut args = vec!["lift", input.to_str().unwrap(), "-o", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = common::run_cli(dir.path(), &args);
        let err = common::stderr(&o);
        assert!(!o.status.success(), "{what}: succeeded");
        assert!(err.contains(want), "{what}: {err}");
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        assert!(err.contains(&name), "{what}: does not name the file: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert!(!out.exists(), "{what}: wrote output");
    }
    // The bundle error lists what there is.
    let o = common::run_cli(
        dir.path(),
        &[
            "lift",
            containers().join("scale.hipfb").to_str().unwrap(),
            "--target",
            "gfx90a",
        ],
    );
    assert!(common::stderr(&o).contains("gfx1100, gfx942"));
}

/// Objects that need raw lines lift with one assembler run and one link:
/// the raw lines are predicted before the identity check, so neither a
/// failing first attempt nor the per-instruction re-encoding run
/// (`llvm-mc --show-encoding`) happens. The tools here are scripts in a
/// `--llvm-bin` directory that log each run and run the real tool. One
/// object per kind of raw line: gfx1250 (`v_pk_*_f32`, VOP3 `src2`,
/// undecodable words), gfx950 `f4gemm` (`v_mfma_scale_*`), Triton's
/// gfx1201 softmax (VOP3 fields, a VOPD pair LLVM rejects).
#[test]
fn objects_with_raw_lines_lift_with_one_assembly_and_one_link() {
    use gcn_patch::stage::toolchain::{Toolchain, ToolchainConfig};
    use std::os::unix::fs::PermissionsExt;
    let real = common::toolchain();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.path().join("runs.log");
    for (name, path) in [
        ("clang", real.clang.clone()),
        ("ld.lld", real.lld.clone()),
        ("llvm-mc", real.llvm_tool("llvm-mc")),
        ("llvm-objdump", real.llvm_tool("llvm-objdump")),
    ] {
        let script = bin.join(name);
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"{name} $*\" >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                path.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let config = ToolchainConfig {
        llvm_bin: Some(bin.clone()),
        ..ToolchainConfig::default()
    };
    let tc = Toolchain::find(&config, &|_| None).unwrap_or_else(|d| panic!("{d}"));
    let repo = common::repo();
    for (file, min_raw) in [
        (
            "tests/corpus/aiter/gfx1250/mla/mla_a8w8_qh64_1tg_16mx4_64nx1_np.co",
            3000,
        ),
        (
            "tests/corpus/aiter/gfx950/f4gemm/f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128.co",
            256,
        ),
        ("tests/triton/softmax-gfx1201/softmax.hsaco", 20),
    ] {
        let path = repo.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&log);
        let lifted = lift_code_object(&bytes, &path, &LiftOptions::new(&tc))
            .unwrap_or_else(|d| panic!("{file}: {d}"));
        assert_eq!(lifted.identity, Identity::Identical, "{file}");
        assert!(
            lifted.raw_instructions >= min_raw,
            "{file}: {} raw lines",
            lifted.raw_instructions
        );
        let runs = std::fs::read_to_string(&log).unwrap();
        let count = |tool: &str, pred: &dyn Fn(&str) -> bool| {
            runs.lines()
                .filter(|l| l.split(' ').next() == Some(tool) && pred(l))
                .count()
        };
        assert_eq!(
            count("llvm-mc", &|l| l.contains("--show-encoding")),
            0,
            "{file}: no re-encoding run\n{runs}"
        );
        assert_eq!(
            count("llvm-mc", &|l| l.contains("-filetype=obj")),
            1,
            "{file}: one assembly\n{runs}"
        );
        assert_eq!(count("ld.lld", &|_| true), 1, "{file}: one link\n{runs}");
        assert_eq!(
            count("llvm-objdump", &|_| true),
            1,
            "{file}: one disassembly\n{runs}"
        );
    }
}

/// The identity check prepares the lifted asm as an unpatched source whose
/// warnings it discards, skipping the control-flow, wait-count and hazard
/// checks (against its own original every finding of theirs is inherited):
/// the prepared asm, steps and errors are those of the full preparation,
/// on a lifted object of each aiter arch and every IREE/HIP corpus dump;
/// only the skipped checks' warnings are missing.
#[test]
fn identity_preparation_skips_only_checks_that_cannot_fail_an_unpatched_source() {
    use gcn_patch::base::document::Document;
    use gcn_patch::config::policy::{HazardPolicy, RegisterPolicy};
    use gcn_patch::pipeline;
    use gcn_patch::stage::retarget::RetargetOptions;
    let tc = common::toolchain();
    let mut sources: Vec<(String, Document, gcn_embed::TargetId)> = vec![];
    for arch in ["gfx942", "gfx950", "gfx1250"] {
        let (_, _, path) = aiter_sample()
            .into_iter()
            .find(|(a, _, _)| a == arch)
            .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let mut opts = LiftOptions::new(&tc);
        opts.verify = false;
        let lifted = lift_code_object(&bytes, &path, &opts).unwrap_or_else(|d| panic!("{d}"));
        let doc = Document::from_source(&lifted.asm, "lifted.s");
        sources.push((common::rel(&path).display().to_string(), doc, lifted.target));
    }
    for (path, target) in common::corpus_files() {
        let text = std::fs::read_to_string(common::repo().join(&path)).unwrap();
        sources.push((
            path.display().to_string(),
            Document::from_source(&text, &path),
            target,
        ));
    }
    let mut fewer_notes = 0;
    for (name, doc, target) in &sources {
        let opts = RetargetOptions {
            target: *target,
            code_object_version: None,
            assembler_llvm_major: tc.version.major,
        };
        let full = pipeline::prepare_traced_with(
            "k",
            Some(doc),
            doc,
            &opts,
            RegisterPolicy::Error,
            HazardPolicy::Warn,
        );
        let quick = pipeline::prepare_unpatched_errors_only("k", doc, &opts, RegisterPolicy::Error);
        match (full, quick) {
            (Ok(a), Ok(b)) => {
                let lines = |p: &pipeline::Prepared| {
                    (0..p.asm.len())
                        .map(|i| p.asm.text(i).to_string())
                        .collect::<Vec<_>>()
                };
                assert!(lines(&a) == lines(&b), "{name}: the same prepared asm");
                assert_eq!(a.steps, b.steps, "{name}");
                assert_eq!(a.code_object_version, b.code_object_version, "{name}");
                assert_eq!(a.symbols, b.symbols, "{name}");
                assert!(b.notes.len() <= a.notes.len(), "{name}");
                fewer_notes += usize::from(b.notes.len() < a.notes.len());
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
            (a, b) => panic!(
                "{name}: full preparation {:?}, errors only {:?}",
                a.map(|_| ()).map_err(|d| d.to_string()),
                b.map(|_| ()).map_err(|d| d.to_string())
            ),
        }
    }
    assert!(
        fewer_notes > 0,
        "the skipped checks warn on some of the {} sources",
        sources.len()
    );
}

/// gfx1250 widens USER_SGPR_COUNT to 6 bits (COMPUTE_PGM_RSRC2 bits 1–6):
/// aiter's flash-attention forward has 32 user SGPRs (its kernarg pointer
/// and 30 preloaded dwords, plus one llvm-objdump-22 does not print). Read
/// as 5 bits the count was 0, no block re-assembled and the descriptor
/// stayed raw bytes; now the lifted block says 32 and rebuilds identically.
#[test]
fn gfx1250_descriptor_with_32_user_sgprs_lifts_as_a_block() {
    let tc = common::toolchain();
    let path = aiter_dir().join("gfx1250/fmha_fwd_bf16/fmha_bf16_pertokenBf16_hd64_128x256.co");
    let bytes = std::fs::read(&path).unwrap();
    let l =
        lift_code_object(&bytes, &path, &LiftOptions::new(&tc)).unwrap_or_else(|e| panic!("{e}"));
    let block: Vec<&str> = l
        .asm
        .lines()
        .skip_while(|s| !s.trim_start().starts_with(".amdhsa_kernel"))
        .take_while(|s| !s.trim_start().starts_with(".end_amdhsa_kernel"))
        .collect();
    assert!(
        block
            .iter()
            .any(|s| s.split_whitespace().collect::<Vec<_>>() == [".amdhsa_user_sgpr_count", "32"]),
        "no `.amdhsa_user_sgpr_count 32` in the lifted block: {block:#?}"
    );
    let (diffs, _) = rebuild_differences(&l, &bytes);
    assert!(diffs.is_empty(), "{diffs:?}");
}
