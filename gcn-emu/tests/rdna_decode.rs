//! The decoder on RDNA objects (issue 35): VOPD pairs become one
//! instruction with two halves, true16 operands (`v9.l`, `v9.h`) their
//! register plus the half, on objects compiled by clang-22 and Triton 3.9.

mod common;

use std::path::{Path, PathBuf};

use gcn_emu::decode::{find_objdump, Operand, Program, RegFile};
use gcn_emu::isa;
use gcn_emu::load::CodeObject;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every kernel of `path`, decoded as `gcn-patch run` decodes it.
fn programs(path: &Path) -> (String, Vec<Program>) {
    let co = CodeObject::read_file(path).unwrap();
    let objdump = find_objdump(None).unwrap();
    let progs = co
        .kernels
        .iter()
        .map(|k| Program::disassemble(&co, k, &objdump).unwrap())
        .collect();
    (co.processor.clone(), progs)
}

/// tests/kernels/vopd.hip pins each VOPD pair to registers; clang-22
/// assembles it for gfx1100 and gfx1201. Every pair decodes as X with Y
/// in `dual`: both halves are VOPD entries of the target's table, on the
/// target, with the operands LLVM printed (a literal K for fmaak/fmamk).
#[test]
fn vopd_pairs_decode_into_their_two_halves() {
    let d = std::env::temp_dir().join(format!("gcn-emu-vopd-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let mut halves = std::collections::BTreeSet::new();
    for target in ["gfx1100", "gfx1201"] {
        let obj = common::build("vopd", target, &d);
        let (proc, progs) = programs(&obj);
        let table = isa::table_for(&proc).unwrap();
        let mut pairs = 0;
        for p in &progs {
            for i in &p.instructions {
                assert_eq!(
                    i.text.contains(" :: "),
                    i.dual.is_some(),
                    "{}: {}",
                    p.kernel,
                    i.text
                );
                let Some(y) = i.dual.as_deref() else { continue };
                pairs += 1;
                assert_eq!((y.addr, &y.words), (i.addr, &i.words));
                assert!(i.text.starts_with(&i.mnemonic) && i.text.ends_with(&y.text));
                for h in [i, y] {
                    let props = table
                        .lookup(&h.mnemonic)
                        .unwrap_or_else(|| panic!("{}: {} not in the table", p.kernel, h.mnemonic));
                    assert_eq!(props.format, isa::Format::Vopd, "{}", h.mnemonic);
                    let literal = h.mnemonic.contains("fmaak") || h.mnemonic.contains("fmamk");
                    assert_eq!(
                        h.ops.len(),
                        props.operands.len() + literal as usize,
                        "{}: {}",
                        p.kernel,
                        h.text
                    );
                    assert!(matches!(
                        h.ops[0].op,
                        Operand::Reg {
                            file: RegFile::V,
                            ..
                        }
                    ));
                    halves.insert(h.mnemonic.clone());
                }
            }
        }
        assert_eq!(pairs, 13, "{target}: VOPD pairs of vopd.hip");
    }
    let _ = std::fs::remove_dir_all(&d);
    // All 17 halves of each generation (max/min differ: RDNA4's `_num_`).
    assert_eq!(halves.len(), 17 + 2, "{halves:?}");
}

/// The VOPD pairs the compilers emitted in the RDNA corpus decode the same
/// way (both halves in the table, X's text then ` :: ` then Y's).
#[test]
fn corpus_vopd_pairs_decode() {
    let mut pairs = 0;
    for t in ["gfx1100", "gfx1201"] {
        for dir in [
            manifest().join("tests/rdna").join(t),
            manifest().join("../tests/corpus/iree").join(t),
        ] {
            for e in std::fs::read_dir(&dir).unwrap() {
                let f = e.unwrap().path();
                if f.extension().is_none_or(|x| x != "hsaco") {
                    continue;
                }
                let (proc, progs) = programs(&f);
                let table = isa::table_for(&proc).unwrap();
                for i in progs.iter().flat_map(|p| &p.instructions) {
                    if let Some(y) = i.dual.as_deref() {
                        pairs += 1;
                        assert!(table.lookup(&i.mnemonic).is_some(), "{}", i.text);
                        assert!(table.lookup(&y.mnemonic).is_some(), "{}", i.text);
                        assert_eq!(
                            i.text,
                            format!("{} :: {}", i.text.split(" :: ").next().unwrap(), y.text)
                        );
                    }
                    assert!(
                        !i.ops
                            .iter()
                            .any(|o| matches!(&o.op, Operand::Text(t) if t.contains("::"))),
                        "{}",
                        i.text
                    );
                }
            }
        }
    }
    assert!(pairs >= 100, "{pairs} VOPD pairs in the RDNA corpus");
}

/// Triton 3.9's gfx1201 matmul uses 16-bit VGPR halves: decoded with
/// `--mattr=+real-true16`, none is left as `.long`, and each half operand
/// is its register with the half in the `t16` modifier.
#[test]
fn true16_halves_decode_on_gfx12() {
    for t in ["gfx1100", "gfx1201"] {
        let (_, progs) = programs(
            &manifest()
                .join("tests/rdna")
                .join(t)
                .join("triton_matmul.hsaco"),
        );
        let mut halves = 0;
        for i in progs.iter().flat_map(|p| &p.instructions) {
            assert!(!i.mnemonic.starts_with('.'), "{t}: undecoded {}", i.text);
            assert!(
                !i.ops.iter().any(
                    |o| matches!(&o.op, Operand::Text(x) if x.ends_with(".l") || x.ends_with(".h"))
                ),
                "{t}: {}",
                i.text
            );
            if let Some(h) = i.modifier("t16") {
                halves += 1;
                assert_eq!(h.len(), i.ops.len(), "{}", i.text);
                let printed: String = i
                    .text
                    .split_once(' ')
                    .unwrap()
                    .1
                    .split(',')
                    .map(|o| match o.trim() {
                        o if o.ends_with(".l") => 'l',
                        o if o.ends_with(".h") => 'h',
                        _ => '-',
                    })
                    .collect();
                assert_eq!(h, printed, "{}", i.text);
            }
        }
        assert_eq!(halves, 16, "{t}: true16 instructions of the Triton matmul");
    }
}
