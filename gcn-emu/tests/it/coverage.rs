//! Coverage: the share of distinct mnemonics in the corpora (the aiter
//! sample in tests/corpus/aiter, IREE's objects in tests/corpus/iree for
//! gfx90a/gfx942/gfx950) that the executor implements, and the number of
//! kernels whose every instruction is implemented (each distinct form run
//! once on `gcn_emu::Probe`'s scratch wave: implemented only when it
//! runs without a fault; faults are listed apart). The figures are printed
//! (`cargo test -p gcn-emu --test it coverage:: -- --nocapture`) and are in the
//! book (guide/run.md); the floors below fail the test if they drop.
//!
//! Every kernel surveyed also passes the load-time register check
//! (`Program::check_registers`: register operands within the descriptor's
//! counts): real compiler and hand-written output is not refused.
//!
//! `aiter_full_coverage` (ignored; `tests/corpus/aiter-coverage.sh AITER_REPO`)
//! gives the same figures over every gfx942/gfx950 code object of aiter's
//! `hsa/` tree, not only the sample.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gcn_emu::decode::{find_objdump, Program};
use gcn_emu::load::CodeObject;
use gcn_emu::{Probe, ProbeOutcome};

fn objects(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            objects(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("co" | "hsaco")) {
            out.push(p);
        }
    }
}

struct Figures {
    mnemonics: BTreeMap<String, bool>,
    example: BTreeMap<String, String>,
    kernels: usize,
    complete: Vec<String>,
    /// Mnemonic → kernels it keeps from running.
    blockers: BTreeMap<String, usize>,
    /// Mnemonic → an instruction that faulted on the probe, and the fault
    /// (not counted as implemented; see `gcn_emu::Probe`).
    faults: BTreeMap<String, String>,
    /// Kernels the load-time register check refuses
    /// (`Program::check_registers`), with the error: none in real output.
    registers: Vec<String>,
    /// Code objects read, and those that could not be read or disassembled.
    files: usize,
    unreadable: Vec<String>,
}

fn survey(dirs: &[&str]) -> Figures {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    survey_in(&root, dirs)
}

fn survey_in(root: &Path, dirs: &[&str]) -> Figures {
    let mut files = Vec::new();
    for d in dirs {
        objects(&root.join(d), &mut files);
    }
    files.sort();
    let objdump = find_objdump(None).unwrap();
    // The probe catches no panic: an operand form the executor does not
    // expect is a typed refusal, so the process-wide panic hook is left alone.
    let mut probe = Probe::new();
    let mut f = Figures {
        mnemonics: BTreeMap::new(),
        example: BTreeMap::new(),
        kernels: 0,
        complete: Vec::new(),
        blockers: BTreeMap::new(),
        faults: BTreeMap::new(),
        registers: Vec::new(),
        files: files.len(),
        unreadable: Vec::new(),
    };
    for file in &files {
        let co = match CodeObject::read_file(file) {
            Ok(co) => co,
            Err(e) => {
                f.unreadable.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        for k in &co.kernels {
            // RDNA and gfx1250: a probe with the target's numbering, names
            // and wave size (one per kernel: cheap beside disassembly).
            let mut rdna_probe = gcn_emu::rdna::is_rdna(&co.processor).then(|| {
                Probe::for_target(&co.processor, if k.descriptor.wave32() { 32 } else { 64 })
            });
            let probe = rdna_probe.as_mut().unwrap_or(&mut probe);
            let p = match Program::disassemble(&co, k, &objdump) {
                Ok(p) => p,
                Err(e) => {
                    f.unreadable
                        .push(format!("{}: {}: {e}", file.display(), k.name));
                    continue;
                }
            };
            f.kernels += 1;
            if let Err(e) = p.check_registers_for(k, gcn_emu::decode::Numbering::of(&co.processor))
            {
                f.registers.push(format!("{}: {e}", file.display()));
            }
            let mut all = true;
            let mut seen = BTreeSet::new();
            let mut missing = BTreeSet::new();
            // gfx1250: where control flow cannot resolve the VGPR MSBs
            // (`Program::check_vgpr_msb`), `s_set_vgpr_msb` is what the
            // kernel lacks.
            let msb = p.check_vgpr_msb(k).err().map(|e| e.to_string());
            for ins in &p.instructions {
                // A form: the mnemonic, its modifiers with their values
                // (`scale_sel:1` is not `scale_sel:0`) but offsets', and a
                // barrier's ID (`s_barrier_signal -3` is not `-1`).
                let key = (
                    ins.mnemonic.clone(),
                    ins.mods
                        .iter()
                        .map(|m| {
                            if m.0.starts_with("offset") {
                                m.0.clone()
                            } else {
                                format!("{}:{}", m.0, m.1)
                            }
                        })
                        .collect::<Vec<_>>(),
                    ins.mnemonic
                        .starts_with("s_barrier")
                        .then(|| format!("{:?}", ins.ops.first().map(|o| &o.op))),
                );
                let ok = if ins.mnemonic == "s_set_vgpr_msb" && msb.is_some() {
                    f.example
                        .entry(ins.mnemonic.clone())
                        .or_insert_with(|| msb.clone().unwrap_or_default());
                    false
                } else if seen.insert(key.clone()) {
                    match probe.probe(ins) {
                        ProbeOutcome::Ran => true,
                        ProbeOutcome::Unsupported(_) => false,
                        ProbeOutcome::Fault(what) => {
                            f.faults
                                .entry(ins.mnemonic.clone())
                                .or_insert_with(|| format!("{}: {what}", ins.text.trim()));
                            false
                        }
                    }
                } else {
                    *f.mnemonics.get(&ins.mnemonic).unwrap_or(&true)
                };
                if !ok {
                    f.example
                        .entry(ins.mnemonic.clone())
                        .or_insert_with(|| ins.text.clone());
                }
                let e = f.mnemonics.entry(ins.mnemonic.clone()).or_insert(true);
                *e &= ok;
                all &= ok;
                if !ok {
                    missing.insert(ins.mnemonic.clone());
                }
            }
            for m in missing {
                *f.blockers.entry(m).or_default() += 1;
            }
            if all {
                f.complete.push(format!(
                    "{}: {}",
                    file.strip_prefix(root).unwrap().display(),
                    k.name
                ));
            }
        }
    }
    f
}

fn report(name: &str, f: &Figures) -> f64 {
    let done = f.mnemonics.values().filter(|&&v| v).count();
    let share = done as f64 / f.mnemonics.len() as f64;
    println!("{name}: {done} of {} distinct mnemonics implemented ({:.1}%); {} of {} kernels fully implemented ({} code objects, {} not read or not disassembled)", f.mnemonics.len(), share * 100.0, f.complete.len(), f.kernels, f.files, f.unreadable.len());
    for u in &f.unreadable {
        println!("  not surveyed: {u}");
    }
    if f.complete.len() <= 200 {
        for k in &f.complete {
            println!("  complete: {k}");
        }
    }
    let missing: Vec<&str> = f
        .mnemonics
        .iter()
        .filter(|(_, &v)| !v)
        .map(|(k, _)| k.as_str())
        .collect();
    println!("  not implemented: {}", missing.join(" "));
    let mut blockers: Vec<_> = f.blockers.iter().collect();
    blockers.sort_by(|a, b| b.1.cmp(a.1));
    println!(
        "  kernels each missing mnemonic blocks: {}",
        blockers
            .iter()
            .map(|(m, n)| format!("{m} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (m, e) in &f.example {
        println!("    e.g. {m}: {e}");
    }
    println!(
        "  faulted on the probe (not counted as implemented): {}",
        f.faults.len()
    );
    for (m, e) in &f.faults {
        println!("    fault {m}: {e}");
    }
    println!(
        "  refused by the load-time register check: {}",
        f.registers.len()
    );
    for r in &f.registers {
        println!("    {r}");
    }
    share
}

fn iree_corpus_coverage() {
    let f = survey(&["iree/gfx90a", "iree/gfx942", "iree/gfx950"]);
    let share = report("IREE corpus", &f);
    assert!(share >= 1.0, "{share}");
    assert!(f.faults.is_empty(), "{:?}", f.faults);
    assert!(f.registers.is_empty(), "{:#?}", f.registers);
    assert!(f.complete.len() >= 10, "{}", f.complete.len());
}

fn aiter_sample_coverage() {
    let f = survey(&["aiter/gfx942", "aiter/gfx950"]);
    let share = report("aiter sample", &f);
    assert!(share >= 1.0, "{share}");
    assert!(f.complete.len() >= 100, "{}", f.complete.len());
    assert!(f.faults.is_empty(), "{:?}", f.faults);
    assert!(f.registers.is_empty(), "{:#?}", f.registers);
}

/// Both corpora, one after the other (no panic hook is swapped: the probe
/// catches no panic).
#[test]
fn coverage_of_the_corpora() {
    iree_corpus_coverage();
    aiter_sample_coverage();
}

/// The figures of two disjoint sets of code objects together.
fn merge(mut a: Figures, b: Figures) -> Figures {
    for (m, ok) in b.mnemonics {
        *a.mnemonics.entry(m).or_insert(true) &= ok;
    }
    for (m, e) in b.example {
        a.example.entry(m).or_insert(e);
    }
    for (m, e) in b.faults {
        a.faults.entry(m).or_insert(e);
    }
    a.kernels += b.kernels;
    a.complete.extend(b.complete);
    for (m, n) in b.blockers {
        *a.blockers.entry(m).or_default() += n;
    }
    a.registers.extend(b.registers);
    a.files += b.files;
    a.unreadable.extend(b.unreadable);
    a
}

/// Every gfx942/gfx950 code object of aiter's `hsa/` tree (the directory in
/// `GCN_AITER_HSA`, extracted by `tests/corpus/aiter-coverage.sh`).
#[test]
#[ignore = "needs aiter's hsa/ tree: run tests/corpus/aiter-coverage.sh AITER_REPO"]
fn aiter_full_coverage() {
    let Some(dir) = std::env::var_os("GCN_AITER_HSA") else {
        panic!("GCN_AITER_HSA is not set: run `tests/corpus/aiter-coverage.sh AITER_REPO` (AITER_REPO: a clone of https://github.com/ROCm/aiter)");
    };
    let root = PathBuf::from(dir);
    for target in ["gfx942", "gfx950"] {
        assert!(
            root.join(target).is_dir(),
            "{}: no {target}/ directory: GCN_AITER_HSA must be aiter's hsa/ directory",
            root.display()
        );
    }
    let g942 = survey_in(&root, &["gfx942"]);
    report("aiter gfx942 (all)", &g942);
    let g950 = survey_in(&root, &["gfx950"]);
    report("aiter gfx950 (all)", &g950);
    let all = merge(g942, g950);
    report("aiter gfx942 + gfx950 (all)", &all);
    assert!(
        all.kernels > 0,
        "no kernel surveyed under {}",
        root.display()
    );
}

/// aiter's gfx1250 code objects: the sample in tests/corpus/aiter/gfx1250,
/// and with `GCN_AITER_HSA` set (`tests/corpus/aiter-coverage.sh
/// AITER_REPO gfx1250`) every one of aiter's `hsa/gfx1250`. Figures in
/// docs/src/design/rdna.md ("gfx1250").
#[test]
#[ignore = "survey: cargo test -p gcn-emu --test it -- --ignored coverage::aiter_gfx1250_coverage --nocapture"]
fn aiter_gfx1250_coverage() {
    let sample = survey(&["aiter/gfx1250"]);
    report("aiter gfx1250 sample", &sample);
    assert!(
        sample.kernels > 0,
        "no gfx1250 kernel in the sample: run tests/corpus/aiter.sh"
    );
    assert!(sample.unreadable.is_empty(), "{:#?}", sample.unreadable);
    if let Some(dir) = std::env::var_os("GCN_AITER_HSA") {
        let all = survey_in(&PathBuf::from(dir), &["gfx1250"]);
        report("aiter gfx1250 (all)", &all);
        assert!(all.kernels >= sample.kernels);
    }
}
