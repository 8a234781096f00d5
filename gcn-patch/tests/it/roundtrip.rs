//! parse on the real corpus: lossless round trip, kernels with descriptor and
//! metadata, and structured summaries as snapshots.

use crate::common;

use common::corpus;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use gcn_patch::base::parse::{parse, AsmFile, RegFile};

/// Every `.s` / `.rocmasm` under tests/corpus (sorted).
fn corpus_files() -> Vec<PathBuf> {
    common::corpus_dumps()
}

#[test]
fn every_corpus_file_round_trips_and_has_named_kernels() {
    let files = corpus_files();
    // 15 IREE dumps + 22 HIP files at the time of writing.
    assert!(files.len() >= 37, "only {} corpus files", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let f = parse(&text);
        assert!(
            f.print() == text,
            "{}: print(parse(x)) != x",
            path.display()
        );
        let ks = f.kernels();
        assert!(!ks.is_empty(), "{}: no kernel", path.display());
        for k in &ks {
            let d = k.descriptor.as_ref().unwrap_or_else(|| {
                panic!("{}: kernel {} has no descriptor", path.display(), k.name)
            });
            let m = k
                .metadata
                .as_ref()
                .unwrap_or_else(|| panic!("{}: kernel {} has no metadata", path.display(), k.name));
            assert_eq!(m.name.as_ref().map(|n| n.1.as_str()), Some(k.name.as_str()));
            assert_eq!(
                m.symbol.as_ref().map(|n| n.1.clone()),
                Some(format!("{}.kd", k.name))
            );
            assert!(f.lines[d.start].text().contains(&k.name));
            assert!(d.get("next_free_vgpr").is_some(), "{}", path.display());
            assert!(
                k.symbol_line.is_some() && k.end_line.is_some(),
                "{}",
                path.display()
            );
            assert!(!k.blocks.is_empty());
            assert!(
                k.set("num_vgpr").is_some(),
                "{}: no .set num_vgpr",
                path.display()
            );
            assert!(m.vgpr_count.is_some() && m.wavefront_size.is_some());
        }
        assert!(f.target_directive().is_some(), "{}", path.display());
        assert!(f.code_object_version().is_some(), "{}", path.display());
        let (_, mt) = f.metadata_target().expect("amdhsa.target");
        assert_eq!(Some(mt), f.target_directive().map(|t| t.1));
        // CRLF and no final newline stay lossless too.
        let crlf = text.replace('\n', "\r\n");
        assert!(parse(&crlf).print() == crlf, "{}: CRLF", path.display());
        assert_eq!(
            parse(&crlf).kernels().len(),
            ks.len(),
            "{}: CRLF",
            path.display()
        );
        let trimmed = text.trim_end_matches('\n');
        assert!(parse(trimmed).print() == trimmed);
    }
}

/// A structured summary of a parsed file, for snapshots.
fn summary(f: &AsmFile) -> String {
    let mut s = String::new();
    writeln!(s, "lines: {}", f.lines.len()).unwrap();
    writeln!(s, "target directive: {:?}", f.target_directive()).unwrap();
    writeln!(s, "code object version: {:?}", f.code_object_version()).unwrap();
    writeln!(s, "metadata target: {:?}", f.metadata_target()).unwrap();
    writeln!(s, "metadata version: {:?}", f.metadata_version()).unwrap();
    for k in f.kernels() {
        writeln!(s, "kernel {}", k.name).unwrap();
        writeln!(
            s,
            "  symbol line {:?}, end line {:?}, code {:?}",
            k.symbol_line, k.end_line, k.code
        )
        .unwrap();
        for b in &k.blocks {
            let n = b
                .lines
                .clone()
                .filter(|&i| f.lines[i].instruction().is_some())
                .count();
            writeln!(s, "  block {} {:?}: {n} instructions", b.label, b.lines).unwrap();
        }
        if let Some(d) = &k.descriptor {
            writeln!(
                s,
                "  descriptor {}..={}: {} fields",
                d.start,
                d.end,
                d.fields.len()
            )
            .unwrap();
            for name in [
                "next_free_vgpr",
                "next_free_sgpr",
                "accum_offset",
                "group_segment_fixed_size",
            ] {
                if let Some(fl) = d.get(name) {
                    writeln!(s, "    {} = {} (line {})", fl.name, fl.value, fl.line).unwrap();
                }
            }
        }
        for set in &k.sets {
            writeln!(s, "  set {} = {} (line {})", set.field, set.value, set.line).unwrap();
        }
        if let Some(m) = &k.metadata {
            writeln!(
                s,
                "  metadata {}..{}: {} keys",
                m.start,
                m.end,
                m.fields.len()
            )
            .unwrap();
            writeln!(
                s,
                "    vgpr {:?} sgpr {:?} agpr {:?} lds {:?} wave {:?}",
                m.vgpr_count,
                m.sgpr_count,
                m.agpr_count,
                m.group_segment_fixed_size,
                m.wavefront_size
            )
            .unwrap();
        }
        // Register ranges used in the kernel's blocks: min..=max per file.
        let mut used: BTreeMap<RegFile, (u32, u32, usize)> = BTreeMap::new();
        for b in &k.blocks {
            for i in b.lines.clone() {
                if let Some(ins) = f.lines[i].instruction() {
                    for r in ins.registers() {
                        let e = used.entry(r.file).or_insert((u32::MAX, 0, 0));
                        e.0 = e.0.min(r.first);
                        e.1 = e.1.max(r.last);
                        e.2 += 1;
                    }
                }
            }
        }
        for (file, (lo, hi, n)) in used {
            if file.is_indexed() {
                writeln!(
                    s,
                    "  uses {}{lo}..={}{hi} ({n} operands)",
                    file.name(),
                    file.name()
                )
                .unwrap();
            } else {
                writeln!(s, "  uses {} ({n} operands)", file.name()).unwrap();
            }
        }
    }
    s
}

#[test]
fn summary_iree_gfx942_matmul() {
    let text = std::fs::read_to_string(corpus().join("iree/gfx942/matmul.rocmasm")).unwrap();
    insta::assert_snapshot!(summary(&parse(&text)));
}

#[test]
fn summary_hip_gfx1100_reduce() {
    let text = std::fs::read_to_string(corpus().join("hip/gfx1100/reduce.s")).unwrap();
    insta::assert_snapshot!(summary(&parse(&text)));
}

/// saxpy and reduce compiled together by clang-22: one file, two kernels.
#[test]
fn two_hip_kernels_in_one_file() {
    let src = corpus().join("src");
    let mut hip = std::fs::read_to_string(src.join("saxpy.hip")).unwrap();
    hip.push_str(&std::fs::read_to_string(src.join("reduce.hip")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("both.hip");
    let output = dir.path().join("both.s");
    std::fs::write(&input, hip).unwrap();
    let status = Command::new("clang-22")
        .args(["-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib"])
        .args(["--offload-arch=gfx942", "-O3", "-S"])
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .status()
        .unwrap_or_else(|e| {
            panic!("cannot run clang-22 ({e}): install it with `apt-get install -y clang-22 lld-22 llvm-22`")
        });
    assert!(status.success(), "clang-22 failed on {}", input.display());
    let text = std::fs::read_to_string(&output).unwrap();
    let f = parse(&text);
    assert_eq!(f.print(), text);
    let ks = f.kernels();
    let names: Vec<&str> = ks.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["saxpy", "reduce"]);
    for k in &ks {
        let m = k.metadata.as_ref().unwrap();
        assert_eq!(m.name.as_ref().unwrap().1, k.name);
        assert!(k.descriptor.as_ref().unwrap().start > k.symbol_line.unwrap());
        assert_eq!(k.sets.len(), 10, "{}", k.name);
        // Blocks stay inside the kernel and never include the descriptor.
        for b in &k.blocks {
            assert!(b.lines.start >= k.code.start && b.lines.end <= k.code.end);
            assert!(b.lines.end <= k.descriptor.as_ref().unwrap().start);
        }
    }
    assert!(ks[0].code.end < ks[1].code.start);
    assert!(ks[1].blocks.len() > ks[0].blocks.len());
    assert!(ks[0].metadata.as_ref().unwrap().end <= ks[1].metadata.as_ref().unwrap().start);
}
