//! `gcn-patch lint` on SCHED_MODE_2 (GFX12 expert scheduling) kernels: a
//! missing `s_wait_alu` is GP0432 with the exact wait to insert, the file
//! with that wait is clean, and the same code in the normal mode has no
//! finding (`stage::check::hazard::alu`; the model is in the book,
//! `docs/src/design/hazards.md`).

use std::process::Command;

const MODE2: &str = "\ts_setreg_imm32_b32 hwreg(HW_REG_WAVE_SCHED_MODE, 0, 2), 2\n";

/// Lint `src` for gfx1250: (exit status, standard error).
fn lint(src: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.s");
    std::fs::write(&path, src).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(["lint", "k.s", "--target", "gfx1250"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn lint_names_the_missing_s_wait_alu_and_the_fixed_file_is_clean() {
    // A loop: the address of the async load is computed by a VALU right
    // before it (RAW, va_vdst), and the next iteration overwrites the
    // address the load may not have read (WAR across the back edge,
    // vm_vsrc).
    let src = format!(
        "{MODE2}.LBB0_1:\n\tv_add_nc_u64_e32 v[2:3], s[4:5], v[2:3]\n\tglobal_load_async_to_lds_b128 v1, v[2:3], off\n\ts_cbranch_scc1 .LBB0_1\n\ts_endpgm\n"
    );
    let (status, err) = lint(&src);
    assert_eq!(status, Some(1), "{err}");
    assert_eq!(err.matches("error[GP0432]").count(), 2, "{err}");
    assert!(
        err.contains("insert `s_wait_alu depctr_va_vdst(0)` before k.s:4"),
        "{err}"
    );
    assert!(
        err.contains("insert `s_wait_alu depctr_vm_vsrc(0)` before k.s:3"),
        "{err}"
    );
    // The user's fix: both waits inserted.
    let fixed = src
        .replace(
            "\tv_add_nc_u64",
            "\ts_wait_alu depctr_vm_vsrc(0)\n\tv_add_nc_u64",
        )
        .replace(
            "\tglobal_load",
            "\ts_wait_alu depctr_va_vdst(0)\n\tglobal_load",
        );
    let (status, err) = lint(&fixed);
    assert_eq!(status, Some(0), "{err}");
    assert!(!err.contains("GP0432"), "{err}");
    // The same code in the normal scheduling mode: no finding.
    let (status, err) = lint(&src.replace(MODE2, ""));
    assert_eq!(status, Some(0), "{err}");
    assert!(!err.contains("GP0432"), "{err}");
}
