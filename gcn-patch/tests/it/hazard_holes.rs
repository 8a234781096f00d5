//! Holes of the wait-counter model found by an adversarial test, each
//! checked on a small program: GDS operands held until `expcnt`, waits with
//! a real SGPR count, indexed register access, waits written as
//! expressions, the gfx12 combined wait's fix, LDS DMA with LDS writes and
//! with other loads, mixed LDS/GDS and export types, flat overwrites.

use gcn_embed::TargetId;
use gcn_patch::base::diag::{Diagnostic, Severity};
use gcn_patch::base::document::Document;
use gcn_patch::stage::check::hazard::{self, LintOptions};

fn lint(src: &str, target: &str) -> Vec<Diagnostic> {
    hazard::lint(
        &Document::from_source(src, "k.s"),
        &TargetId::parse(target).unwrap(),
        LintOptions::default(),
    )
}

fn render(d: &[Diagnostic]) -> String {
    d.iter().map(|d| d.render()).collect::<Vec<_>>().join("\n")
}

fn errors(d: &[Diagnostic]) -> Vec<&Diagnostic> {
    d.iter().filter(|d| d.severity == Severity::Error).collect()
}

#[test]
fn gds_data_and_address_vgprs_are_held_until_expcnt() {
    let src = "\tds_add_u32 v0, v1 gds\n\tv_mov_b32 v1, 0\n\ts_endpgm\n";
    let d = lint(src, "gfx90a");
    let e = errors(&d);
    assert_eq!(e.len(), 1, "{}", render(&d));
    assert!(
        e[0].message.contains("`v1` is overwritten"),
        "{}",
        render(&d)
    );
    assert!(e[0].help[0].contains("expcnt(0)"), "{}", render(&d));
    // The address VGPR too.
    let src = "\tds_add_u32 v0, v1 gds\n\tv_mov_b32 v0, 0\n\ts_endpgm\n";
    assert_eq!(errors(&lint(src, "gfx90a")).len(), 1);
    // With the wait, clean; an LDS (not GDS) operation holds nothing.
    let src = "\tds_add_u32 v0, v1 gds\n\ts_waitcnt expcnt(0)\n\tv_mov_b32 v1, 0\n\ts_endpgm\n";
    assert!(
        lint(src, "gfx90a").is_empty(),
        "{}",
        render(&lint(src, "gfx90a"))
    );
    let src = "\tds_add_u32 v0, v1\n\tv_mov_b32 v1, 0\n\ts_endpgm\n";
    assert!(lint(src, "gfx90a").is_empty());
}

#[test]
fn a_wait_with_a_real_sgpr_count_is_not_trusted() {
    let src =
        "\tds_read_b32 v1, v0\n\ts_waitcnt_lgkmcnt s7, 0\n\tv_add_f32_e32 v2, v1, v1\n\ts_endpgm\n";
    let d = lint(src, "gfx1030");
    assert_eq!(errors(&d).len(), 1, "{}", render(&d));
    let src = src.replace("s7", "null");
    assert!(lint(&src, "gfx1030").is_empty());
}

#[test]
fn indexed_register_access_is_reported_as_not_followed() {
    for (src, mn) in [
        (
            "\ts_mov_b32 m0, s2\n\tv_movrels_b32_e32 v1, v2\n\ts_endpgm\n",
            "v_movrels_b32_e32",
        ),
        (
            "\ts_set_gpr_idx_on s2, gpr_idx(SRC0)\n\tv_mov_b32_e32 v1, v2\n\ts_set_gpr_idx_off\n\ts_endpgm\n",
            "s_set_gpr_idx_on",
        ),
    ] {
        let d = lint(src, "gfx90a");
        assert_eq!(d.len(), 1, "{}", render(&d));
        assert_eq!(d[0].severity, Severity::Warning);
        assert!(
            d[0].message.contains("cannot follow") && d[0].message.contains(mn),
            "{}",
            render(&d)
        );
    }
}

#[test]
fn waits_written_as_expressions_are_evaluated() {
    let src = ".set VMW, 0\n\tglobal_load_dword v1, v[2:3], off\n\ts_waitcnt vmcnt(VMW)\n\tv_add_f32_e32 v2, v1, v1\n\ts_endpgm\n";
    assert!(
        lint(src, "gfx942").is_empty(),
        "{}",
        render(&lint(src, "gfx942"))
    );
    // lgkmcnt is bits 11:8 on gfx9: `0x3f | (0 << 8)` waits for lgkmcnt(0).
    let src = "\tds_read_b32 v1, v0\n\ts_waitcnt 0x3f | (0 << 8)\n\tv_add_f32_e32 v2, v1, v1\n\ts_endpgm\n";
    assert!(
        lint(src, "gfx942").is_empty(),
        "{}",
        render(&lint(src, "gfx942"))
    );
    // …and a too loose value is still a hazard.
    let src = src.replace("(0 << 8)", "(1 << 8)");
    assert_eq!(errors(&lint(&src, "gfx942")).len(), 1);
    let src = ".set N, 1\n\tglobal_load_b32 v1, v[2:3], off\n\ts_wait_loadcnt N - 1\n\tv_add_f32_e32 v2, v1, v1\n\ts_endpgm\n";
    assert!(
        lint(src, "gfx1201").is_empty(),
        "{}",
        render(&lint(src, "gfx1201"))
    );
}

#[test]
fn gfx12_combined_wait_fix_names_the_combined_instruction() {
    let src = "\tglobal_load_b32 v1, v[2:3], off\n\tds_load_b32 v4, v0\n\ts_wait_loadcnt_dscnt 0x101\n\tv_add_f32_e32 v5, v4, v4\n\ts_endpgm\n";
    let d = lint(src, "gfx1201");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(
        d[0].help[0].contains("`s_wait_loadcnt_dscnt 0x101` → `s_wait_loadcnt_dscnt 0x100`"),
        "{}",
        render(&d)
    );
}

#[test]
fn lds_write_after_lds_dma_needs_the_wait_too() {
    // M0 and the address are known and the bytes overlap: an error.
    let src = "\ts_mov_b32 m0, 0\n\tbuffer_load_dword v1, s[4:7], 0 offen lds\n\tv_mov_b32_e32 v2, 8\n\tds_write_b32 v2, v3\n\ts_endpgm\n";
    let d = lint(src, "gfx942");
    assert_eq!(errors(&d).len(), 1, "{}", render(&d));
    assert!(d[0].message.contains("LDS DMA"), "{}", render(&d));
    // Unknown M0: may alias (a warning).
    let src = "\tbuffer_load_dword v1, s[4:7], 0 offen lds\n\tds_write_b32 v2, v3\n\ts_endpgm\n";
    let d = lint(src, "gfx942");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].message.contains("may write LDS"), "{}", render(&d));
    let src = "\tbuffer_load_dword v1, s[4:7], 0 offen lds\n\ts_waitcnt vmcnt(0)\n\tds_write_b32 v2, v3\n\ts_endpgm\n";
    assert!(lint(src, "gfx942").is_empty());
}

#[test]
fn gfx10_lds_dma_and_loads_pending_together_complete_out_of_order() {
    let src = "\tbuffer_load_dword v1, v0, s[0:3], 0 offen\n\tbuffer_load_dword v2, s[4:7], 0 offen lds\n\ts_waitcnt vmcnt(1)\n\tv_add_f32_e32 v3, v1, v1\n\ts_endpgm\n";
    let d = lint(src, "gfx1030");
    assert_eq!(errors(&d).len(), 1, "{}", render(&d));
    assert!(render(&d).contains("vmcnt(0)"), "{}", render(&d));
    // gfx9: one event type, in order.
    assert!(
        lint(src, "gfx90a").is_empty(),
        "{}",
        render(&lint(src, "gfx90a"))
    );
}

#[test]
fn lds_and_gds_pending_together_complete_out_of_order() {
    let src = "\tds_read_b32 v1, v0\n\tds_add_u32 v2, v3 gds\n\ts_waitcnt lgkmcnt(1)\n\tv_add_f32_e32 v4, v1, v1\n\ts_waitcnt expcnt(0)\n\ts_endpgm\n";
    let d = lint(src, "gfx90a");
    assert_eq!(errors(&d).len(), 1, "{}", render(&d));
    assert!(render(&d).contains("lgkmcnt(0)"), "{}", render(&d));
}

#[test]
fn different_export_types_complete_out_of_order() {
    let src = "\texp pos0 v0, v1, v2, v3 done\n\texp param0 v4, v5, v6, v7\n\ts_waitcnt expcnt(1)\n\tv_mov_b32_e32 v0, 0\n\ts_endpgm\n";
    let d = lint(src, "gfx1030");
    assert_eq!(errors(&d).len(), 1, "{}", render(&d));
    assert!(render(&d).contains("expcnt(0)"), "{}", render(&d));
    // Two exports of one type: in order.
    let src = src.replace("param0", "pos1");
    assert!(
        lint(&src, "gfx1030").is_empty(),
        "{}",
        render(&lint(&src, "gfx1030"))
    );
}

#[test]
fn flat_load_overwriting_a_pending_flat_load_waits_on_vmcnt_too() {
    let src = "\tflat_load_dword v1, v[2:3]\n\tflat_load_dword v1, v[4:5]\n\ts_waitcnt vmcnt(0) lgkmcnt(0)\n\ts_endpgm\n";
    let d = lint(src, "gfx90a");
    let e = errors(&d);
    assert!(
        e.iter()
            .any(|d| d.notes.iter().any(|n| n.starts_with("vmcnt here"))),
        "{}",
        render(&d)
    );
}

#[test]
fn lds_dma_and_ds_access_proven_disjoint_overlapping_or_may_alias() {
    // The DMA writes [0, 256) (M0 = 0, 64 lanes × 4 bytes); the read is at
    // 0x400 + 16: disjoint, no finding.
    let base = "\ts_mov_b32 m0, 0\n\tbuffer_load_dword v1, s[4:7], 0 offen lds\n\tv_mov_b32_e32 v2, 0x400\n\tds_read_b32 v3, v2 offset:16\n\ts_waitcnt vmcnt(0) lgkmcnt(0)\n\ts_endpgm\n";
    assert!(
        lint(base, "gfx942").is_empty(),
        "{}",
        render(&lint(base, "gfx942"))
    );
    // M0 moved by s_add onto the read: overlap, an error.
    let src = base.replace("\tbuffer_load", "\ts_add_u32 m0, m0, 0x400\n\tbuffer_load");
    let d = lint(&src, "gfx942");
    assert_eq!(errors(&d).len(), 1, "{}", render(&d));
    // A per-lane address: not bounded, "may alias" as a warning naming both
    // lines and what was not proven.
    let src = base.replace("v_mov_b32_e32 v2, 0x400", "v_lshlrev_b32_e32 v2, 2, v0");
    let d = lint(&src, "gfx942");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert_eq!(d[0].severity, Severity::Warning);
    insta::assert_snapshot!(render(&d));
}

#[test]
fn a_read_with_no_wait_says_it_relies_on_latency() {
    let src = "\tds_read_b32 v1, v0\n\tv_mov_b32_e32 v4, 0\n\tv_mov_b32_e32 v5, 0\n\tv_add_f32_e32 v2, v1, v1\n\ts_endpgm\n";
    let d = lint(src, "gfx942");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(
        d[0].message
            .contains("is read 2 instructions after the `ds_read_b32` that writes it with no wait (relies on latency)"),
        "{}",
        render(&d)
    );
    // A wait too loose is not "no wait".
    let src = "\tds_read_b32 v1, v0\n\tds_read_b32 v3, v0\n\ts_waitcnt lgkmcnt(1)\n\tv_add_f32_e32 v2, v3, v3\n\ts_endpgm\n";
    let d = lint(src, "gfx942");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(!d[0].message.contains("latency"), "{}", render(&d));
}

#[test]
fn an_older_pending_lds_dma_overlapping_the_read_is_not_proven_disjoint() {
    // The newest DMA writes [0x400, 0x500), the read is at 0: but the older
    // one, still pending, writes [0, 256).
    let src = "\ts_mov_b32 m0, 0\n\tbuffer_load_dword v1, s[4:7], 0 offen lds\n\ts_mov_b32 m0, 0x400\n\tbuffer_load_dword v1, s[4:7], 0 offen lds\n\tv_mov_b32_e32 v2, 0\n\tds_read_b32 v3, v2\n\ts_waitcnt vmcnt(0) lgkmcnt(0)\n\ts_endpgm\n";
    let d = lint(src, "gfx942");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(
        d[0].notes
            .iter()
            .any(|n| n.contains("the LDS DMA at line 2")),
        "{}",
        render(&d)
    );
    // Both disjoint from the read: nothing.
    let src = src.replace("v_mov_b32_e32 v2, 0\n", "v_mov_b32_e32 v2, 0x800\n");
    assert!(
        lint(&src, "gfx942").is_empty(),
        "{}",
        render(&lint(&src, "gfx942"))
    );
}
