//! The typed executor (`gcn_emu::typed`, instructions decoded once) against
//! the reference executor (`gcn_emu::exec`): every instruction of the
//! corpora that lowers to a typed operation — the HIP test kernels built by
//! clang-22 for gfx942/gfx950, IREE's and Triton's objects, the aiter
//! sample — runs on both from random wave states (random registers, exec
//! mask and scc; see `typed::differential`), and every register, scc and
//! the program counter must agree.

mod common;

use std::path::{Path, PathBuf};

use gcn_emu::decode::{find_objdump, Program};
use gcn_emu::load::CodeObject;

fn objects(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("{}: missing (run tests/setup.sh)", dir.display());
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            objects(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("co" | "hsaco")) {
            out.push(p);
        }
    }
}

#[test]
fn typed_operations_agree_with_the_reference_executor() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("gcn-emu-typed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for sub in [
        "../tests/corpus/iree/gfx90a",
        "../tests/corpus/iree/gfx942",
        "../tests/corpus/iree/gfx950",
        "../tests/corpus/aiter/gfx942",
        "../tests/corpus/aiter/gfx950",
        "tests/triton",
    ] {
        objects(&root.join(sub), &mut files);
    }
    let mut kernels: Vec<String> = std::fs::read_dir(root.join("tests/kernels"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "hip").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    kernels.sort();
    // gfx942 and gfx950 (gfx90a's code is in IREE's corpus; some test
    // kernels use builtins gfx90a lacks); `gfx950_*` kernels use gfx950's
    // own builtins.
    for k in &kernels {
        for target in ["gfx942", "gfx950"] {
            if k.starts_with("gfx950_") && target != "gfx950" {
                continue;
            }
            files.push(common::build(k, target, &dir));
        }
    }
    files.sort();
    let objdump = find_objdump(None).unwrap();
    let states: Vec<_> = (0..4).map(gcn_emu::typed::random_wave).collect();
    let (mut total, mut lowered, mut runs) = (0usize, 0usize, 0usize);
    let mut kinds = std::collections::BTreeSet::new();
    let mut seen = std::collections::HashSet::new();
    let mut failures = Vec::new();
    for file in &files {
        let co = CodeObject::read_file(file).unwrap();
        for k in &co.kernels {
            let p = Program::disassemble(&co, k, &objdump).unwrap();
            total += p.instructions.len();
            for (i, ins) in p.instructions.iter().enumerate() {
                // Each distinct instruction once (a branch's target differs
                // by address: branches are all checked).
                let text = ins.text.split("//").next().unwrap_or("").trim();
                if !ins.mnemonic.contains("branch") && !seen.insert(text.to_string()) {
                    continue;
                }
                for (n, state) in states.iter().enumerate() {
                    for seed in 0..2u64 {
                        match gcn_emu::typed::differential(&p, i, state, seed * 31 + n as u64) {
                            Ok(false) => break,
                            Ok(true) => {
                                runs += 1;
                                if n == 0 && seed == 0 {
                                    lowered += 1;
                                    kinds.insert(ins.mnemonic.clone());
                                }
                            }
                            Err(e) => {
                                failures.push(format!("{}: {}: {e}", file.display(), k.name));
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{} objects, {total} instructions, {lowered} distinct ones lowered ({} mnemonics), {runs} differential runs",
        files.len(),
        kinds.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The comparison covers what it claims to: most mnemonics the typed
    // executor knows occur in the corpora.
    assert!(kinds.len() >= 60, "{} mnemonics lowered", kinds.len());
}
