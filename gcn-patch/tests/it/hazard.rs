//! Wait-counter hazards: the corpus is clean, edits that drop a needed wait
//! are caught with a concrete fix, control flow is followed, and `--suggest`
//! offers only loosenings that keep the kernel clean.

use crate::common;

use std::path::Path;
use std::process::Command;

use gcn_embed::TargetId;
use gcn_patch::base::diag::{Diagnostic, Severity};
use gcn_patch::base::document::Document;
use gcn_patch::base::parse::parse;
use gcn_patch::stage::check::hazard::{self, LintOptions};

fn t(name: &str) -> TargetId {
    TargetId::parse(name).unwrap()
}

fn lint(text: &str, file: &str, target: &str, suggest: bool) -> Vec<Diagnostic> {
    let traced = Document::from_source(text, file);
    hazard::lint(
        &traced,
        &t(target),
        LintOptions {
            suggest,
            ..LintOptions::default()
        },
    )
}

fn render(d: &[Diagnostic]) -> String {
    d.iter().map(|d| d.render()).collect::<Vec<_>>().join("\n")
}

fn corpus_text(rel: &str) -> String {
    std::fs::read_to_string(common::corpus().join(rel)).unwrap()
}

/// Replace the `n`-th (1-based) line equal to `from` (trimmed) by `to`
/// (`None`: delete it).
fn edit(text: &str, line: usize, from: &str, to: Option<&str>) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines[line - 1].trim(), from, "line {line}");
    let replacement;
    match to {
        Some(t) => {
            replacement = format!("\t{t}");
            lines[line - 1] = &replacement;
        }
        None => {
            lines.remove(line - 1);
        }
    }
    lines.join("\n")
}

#[test]
fn compiler_generated_corpus_has_no_hazard_and_only_lds_dma_may_alias_warnings() {
    let mut bad = vec![];
    let mut kernels = 0;
    let mut may_alias = 0;
    for (file, target) in common::corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        kernels += hazard::kernels(&parse(&text), &target).len();
        // Every wait the compiler emitted is needed exactly as tight as it is
        // (LLVM's SIInsertWaitcnts emits the loosest safe value): so no
        // suggestion either. Any finding is a false positive of the model.
        let d = lint(
            &text,
            &common::rel(&file).to_string_lossy(),
            target.name().as_str(),
            true,
        );
        // The one allowed finding: IREE's gfx950 LDS-DMA matmul reads one
        // LDS tile while the DMA of the other is pending (LLVM knows from
        // alias scopes they differ; the asm does not say): a warning.
        let (alias, d): (Vec<_>, Vec<_>) = d.into_iter().partition(|d| {
            d.severity == Severity::Warning && d.code == gcn_patch::base::diag::Code::LdsMayAlias
        });
        if file.ends_with("gfx950/matmul_lds_dma.rocmasm") {
            assert_eq!(alias.len(), 1, "{}", render(&alias));
        }
        may_alias += alias.len();
        if !d.is_empty() {
            bad.push(format!(
                "{} ({}):\n{}",
                file.display(),
                target.name(),
                render(&d)
            ));
        }
    }
    println!(
        "hazard: {kernels} corpus kernels, 0 hazards, {may_alias} LDS DMA \"may alias\" warning(s)"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The example: the gfx942 matmul's main-loop `s_waitcnt vmcnt(3)`
/// deleted; the next `ds_write2_b64` reads a `buffer_load_dwordx4` result.
#[test]
fn deleted_main_loop_wait_is_a_hazard_with_a_fix() {
    let text = corpus_text("iree/gfx942/matmul.rocmasm");
    let mutated = edit(&text, 151, "s_waitcnt vmcnt(3)", None);
    let d = lint(&mutated, "asm/iree/gfx942/matmul.rocmasm", "gfx942", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert_eq!(d[0].severity, Severity::Error);
    insta::assert_snapshot!(render(&d));
}

#[test]
fn loosened_wait_names_the_value_to_restore() {
    let text = corpus_text("iree/gfx942/matmul.rocmasm");
    let mutated = edit(&text, 149, "s_waitcnt vmcnt(4)", Some("s_waitcnt vmcnt(5)"));
    let d = lint(&mutated, "asm/iree/gfx942/matmul.rocmasm", "gfx942", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    let help = d[0].help.join("\n");
    assert!(help.contains("`vmcnt(5)` → `vmcnt(4)`"), "{help}");
    insta::assert_snapshot!(render(&d));
}

#[test]
fn gfx12_loadcnt_and_kmcnt() {
    let text = corpus_text("hip/gfx1201/reduce.s");
    // `s_wait_loadcnt 0x0` before the ds_store of the loaded value.
    let mutated = edit(&text, 33, "s_wait_loadcnt 0x0", Some("s_wait_loadcnt 0x1"));
    let d = lint(
        &mutated,
        "tests/corpus/hip/gfx1201/reduce.s",
        "gfx1201",
        false,
    );
    assert_eq!(d.len(), 1, "{}", render(&d));
    insta::assert_snapshot!("gfx12_loadcnt", render(&d));
    // The scalar load's wait: SMEM is out of order, only kmcnt 0 covers it.
    let mutated = edit(&text, 13, "s_wait_kmcnt 0x0", None);
    let d = lint(
        &mutated,
        "tests/corpus/hip/gfx1201/reduce.s",
        "gfx1201",
        false,
    );
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].message.contains("`s2`"), "{}", d[0].message);
    assert!(d[0].help[0].contains("s_wait_kmcnt 0x0"), "{:?}", d[0].help);
}

#[test]
fn smem_is_out_of_order_and_mixed_lgkm_needs_zero() {
    let src = "\ts_load_dwordx2 s[4:5], s[0:1], 0x0\n\ts_load_dword s6, s[0:1], 0x8\n\ts_waitcnt lgkmcnt(1)\n\tv_mov_b32 v0, s4\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx942", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].help[0].contains("lgkmcnt(0)"), "{:?}", d[0].help);
    assert!(render(&d).contains("out of order"), "{}", render(&d));
    // LDS alone is in order: lgkmcnt(1) retires the older of two ds_reads.
    let src = "\tds_read_b32 v1, v0\n\tds_read_b32 v2, v0 offset:4\n\ts_waitcnt lgkmcnt(1)\n\tv_mov_b32 v3, v1\n\ts_endpgm\n";
    assert!(lint(src, "k.s", "gfx942", false).is_empty());
    // …but not with a scalar load in flight.
    let src = "\ts_load_dword s6, s[0:1], 0x8\n\tds_read_b32 v1, v0\n\tds_read_b32 v2, v0 offset:4\n\ts_waitcnt lgkmcnt(1)\n\tv_mov_b32 v3, v1\n\ts_endpgm\n";
    assert_eq!(lint(src, "k.s", "gfx942", false).len(), 1);
}

#[test]
fn vmem_writes_in_order_and_overwrites() {
    // Two loads into the same VGPR: in order, no wait needed.
    let src = "\tglobal_load_dword v1, v[2:3], off\n\tglobal_load_dword v1, v[2:3], off offset:4\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32 v4, v1\n\ts_endpgm\n";
    assert!(lint(src, "k.s", "gfx942", false).is_empty());
    // A VALU overwriting a pending load's destination: WAW hazard.
    let src = "\tglobal_load_dword v1, v[2:3], off\n\tv_mov_b32 v1, 0\n\ts_waitcnt vmcnt(0)\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx942", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].message.contains("overwritten"), "{}", d[0].message);
    // Stores on gfx10+ count in vscnt and write no register.
    let src = "\tglobal_store_dword v[0:1], v2, off\n\tv_mov_b32 v2, 0\n\ts_endpgm\n";
    assert!(lint(src, "k.s", "gfx1100", false).is_empty());
    // A flat load counts in vmcnt and lgkmcnt: only 0 covers it.
    let src = "\tflat_load_dword v1, v[2:3]\n\tds_read_b32 v4, v0\n\ts_waitcnt vmcnt(0) lgkmcnt(1)\n\tv_mov_b32 v5, v1\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx90a", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].help[0].contains("lgkmcnt(0)"), "{:?}", d[0].help);
}

#[test]
fn loops_carry_pending_loads_across_the_back_edge() {
    // The load at the bottom of the loop is read at its top on the next
    // iteration: only the back edge carries it there.
    let src = "k:\n\tv_mov_b32 v1, 0\n.LBB0_1:\n\tv_add_f32_e32 v2, v1, v2\n\tglobal_load_dword v1, v[4:5], off\n\ts_cbranch_scc1 .LBB0_1\n\ts_waitcnt vmcnt(0)\n\ts_endpgm\n";
    let d = lint(src, "loop.s", "gfx942", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    insta::assert_snapshot!(render(&d));
    // With the wait before the branch back it is clean.
    let fixed = src.replace("\ts_cbranch_scc1", "\ts_waitcnt vmcnt(0)\n\ts_cbranch_scc1");
    assert!(lint(&fixed, "loop.s", "gfx942", false).is_empty());
    // A join: one path waits, the other does not.
    let src = "k:\n\tglobal_load_dword v1, v[4:5], off\n\ts_cbranch_execz .LBB0_2\n\ts_waitcnt vmcnt(0)\n.LBB0_2:\n\tv_mov_b32 v3, v1\n\ts_endpgm\n";
    assert_eq!(lint(src, "join.s", "gfx942", false).len(), 1);
}

#[test]
fn calls_indirect_jumps_and_unknown_instructions_are_reported() {
    let src = "k:\n\ts_swappc_b64 s[30:31], s[4:5]\n\ts_setpc_b64 s[30:31]\n\tfoo_bar v1, v2\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx942", false);
    let warnings: Vec<_> = d
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .collect();
    assert_eq!(warnings.len(), 3, "{}", render(&d));
    insta::assert_snapshot!(render(&d));
}

#[test]
fn suggestions_loosen_only_as_far_as_safe() {
    // v1 is read after the third load: vmcnt(0) could be vmcnt(2).
    let src = "k:\n\tglobal_load_dword v1, v[8:9], off\n\tglobal_load_dword v2, v[8:9], off offset:4\n\tglobal_load_dword v3, v[8:9], off offset:8\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32 v4, v1\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32 v5, v2\n\tv_mov_b32 v6, v3\n\ts_waitcnt lgkmcnt(0)\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx942", true);
    insta::assert_snapshot!(render(&d));
    assert!(d.iter().all(|d| d.severity == Severity::Note));
    assert!(
        d[0].message.contains("could be `vmcnt(2)`"),
        "{}",
        d[0].message
    );
    // Applying it keeps the kernel clean.
    let applied = src.replacen("s_waitcnt vmcnt(0)", "s_waitcnt vmcnt(2)", 1);
    assert!(lint(&applied, "k.s", "gfx942", false).is_empty());
    // One step further is a hazard.
    let too_far = src.replacen("s_waitcnt vmcnt(0)", "s_waitcnt vmcnt(3)", 1);
    assert_eq!(lint(&too_far, "k.s", "gfx942", false).len(), 1);
    // A wait a barrier relies on (LDS stores visible to the workgroup) is not
    // offered for loosening.
    let src = "k:\n\tds_write_b32 v1, v2\n\ts_waitcnt lgkmcnt(0)\n\ts_barrier\n\ts_endpgm\n";
    assert!(lint(src, "k.s", "gfx942", true).is_empty());
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .unwrap()
}

#[test]
fn lint_cli_exit_codes() {
    let o = cli(&[
        "lint",
        "tests/corpus/iree/gfx942/matmul.rocmasm",
        "--target",
        "gfx942",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("m.s");
    let text = corpus_text("iree/gfx942/matmul.rocmasm");
    std::fs::write(&bad, edit(&text, 151, "s_waitcnt vmcnt(3)", None)).unwrap();
    let o = cli(&[
        "lint",
        bad.to_str().unwrap(),
        "--target",
        "gfx942",
        "--suggest",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("1 hazard(s)"), "{err}");
    let o = cli(&["lint", "no/such/file.s", "--target", "gfx942"]);
    assert_eq!(o.status.code(), Some(2));
    let o = cli(&[
        "lint",
        "tests/corpus/iree/gfx942/matmul.rocmasm",
        "--target",
        "gfx9422",
    ]);
    assert_eq!(o.status.code(), Some(2));
    // Without --target, the file's `.amdgcn_target` (gfx942) is the target.
    let o = cli(&["lint", "tests/corpus/iree/gfx942/matmul.rocmasm"]);
    let with = cli(&[
        "lint",
        "tests/corpus/iree/gfx942/matmul.rocmasm",
        "--target",
        "gfx942",
    ]);
    assert_eq!(o.status.code(), with.status.code());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("for gfx942 (its .amdgcn_target)"), "{err}");
}

#[test]
fn a_call_retires_what_the_callee_waits_for() {
    // Reads before the call are checked; after it, the callee has waited.
    let src = "k:\n\tglobal_load_dword v1, v[2:3], off\n\ts_swappc_b64 s[30:31], s[4:5]\n\tv_mov_b32 v4, v1\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx942", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert_eq!(d[0].severity, Severity::Warning, "{}", render(&d));
    let src =
        "k:\n\ts_load_dwordx2 s[4:5], s[0:1], 0x0\n\ts_swappc_b64 s[30:31], s[4:5]\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx942", false);
    assert!(
        d.iter().any(|d| d.severity == Severity::Error),
        "{}",
        render(&d)
    );
}

#[test]
fn generation_specific_waits_and_counters() {
    // gfx12 combined wait: loadcnt in bits 13:8, dscnt in 5:0.
    let src = "k:\n\tglobal_load_b32 v1, v[2:3], off\n\tds_load_b32 v4, v0\n\ts_wait_loadcnt_dscnt 0x0\n\tv_add_f32_e32 v5, v1, v4\n\ts_endpgm\n";
    assert!(lint(src, "k.s", "gfx1201", false).is_empty());
    let loose = src.replace("0x0\n", "0x100\n");
    let d = lint(&loose, "k.s", "gfx1201", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].message.contains("`v1`"), "{}", d[0].message);
    // gfx10/11 stores count in vscnt (`*_cnt null, N`); depctr is no counter wait.
    let src = "k:\n\tglobal_store_dword v[0:1], v2, off\n\ts_waitcnt_vscnt null, 0x0\n\ts_waitcnt_depctr 0xffe3\n\tglobal_load_dword v3, v[0:1], off\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32 v4, v3\n\ts_endpgm\n";
    assert!(
        lint(src, "k.s", "gfx1030", false).is_empty(),
        "{}",
        render(&lint(src, "k.s", "gfx1030", false))
    );
    let src = "k:\n\ts_load_dword s2, s[0:1], 0x0\n\ts_waitcnt_lgkmcnt null, 0x0\n\tv_mov_b32 v1, s2\n\ts_endpgm\n";
    assert!(lint(src, "k.s", "gfx1030", false).is_empty());
    let src =
        "k:\n\tds_load_b32 v4, v0\n\ts_wait_storecnt_dscnt 0x0\n\tv_mov_b32 v5, v4\n\ts_endpgm\n";
    assert!(lint(src, "k.s", "gfx1201", false).is_empty());
    // LDS DMA: an LDS read must wait for the buffer load that writes LDS.
    let src = "k:\n\tbuffer_load_dword v1, s[4:7], 0 offen lds\n\tds_read_b32 v2, v3\n\ts_waitcnt vmcnt(0) lgkmcnt(0)\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx942", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].help[0].contains("vmcnt(0)"), "{:?}", d[0].help);
    // Atomics return with sc0 on gfx942, glc elsewhere.
    let src = "k:\n\tglobal_atomic_add v0, v[2:3], v4, off sc0\n\tv_mov_b32 v5, v0\n\ts_endpgm\n";
    assert_eq!(lint(src, "k.s", "gfx942", false).len(), 1);
    let src = "k:\n\tglobal_atomic_add v0, v[2:3], v4, off glc\n\tv_mov_b32 v5, v0\n\ts_endpgm\n";
    assert_eq!(lint(src, "k.s", "gfx90a", false).len(), 1);
    // Export data stays locked until expcnt: overwriting it is a hazard.
    let src = "k:\n\texp mrt0 v0, v1, v2, v3 done vm\n\tv_mov_b32 v0, 0\n\ts_endpgm\n";
    let d = lint(src, "k.s", "gfx1100", false);
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].help[0].contains("expcnt(0)"), "{:?}", d[0].help);
    // Reading it is fine.
    let src = "k:\n\texp mrt0 v0, v1, v2, v3 done vm\n\tv_mov_b32 v5, v0\n\ts_endpgm\n";
    assert!(lint(src, "k.s", "gfx1100", false).is_empty());
}

/// Bad or odd input never panics: every corpus file with lines deleted,
/// duplicated, swapped or truncated (a deterministic pseudo-random walk), and
/// text that is not asm at all.
#[test]
fn odd_input_never_panics() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    for (file, target) in common::corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lines: Vec<&str> = text.split('\n').collect();
        for round in 0..10 {
            let n = lines.len();
            match next(4) {
                0 if n > 1 => {
                    lines.remove(next(n));
                }
                1 => {
                    let l = lines[next(n)];
                    lines.insert(next(n), l);
                }
                2 => lines.swap(next(n), next(n)),
                _ => lines.truncate(n - next(n / 4 + 1)),
            }
            let t = lines.join("\n");
            let _ = lint(&t, "x.s", target.name().as_str(), round == 0 && n < 400);
        }
    }
    for junk in [
        "",
        "\n\n",
        "s_waitcnt\n",
        "s_waitcnt vmcnt(\n",
        "s_waitcnt vmcnt(99999999999)\n",
        "s_wait_loadcnt_dscnt 0xffffffff\n",
        "k:\n\ts_branch k\n",
        "k:\n\ts_cbranch_scc0\n",
        "\tbuffer_load_dword v[5:2], v0, s[0:3], 0 offen\n\tv_mov_b32 v3, v4\n",
        "\tds_read_b32 v[4294967295:4294967295], v0\n",
        "---\namdhsa.kernels: []\n...\n",
    ] {
        for target in ["gfx942", "gfx1100", "gfx1201", "gfx803"] {
            let _ = lint(junk, "x.s", target, true);
        }
    }
}
