//! Pathological inputs: a million lines with ten thousand hazards (36 s and
//! 3.1 GiB peak in the unoptimized test profile on the 2-core CI machine), a
//! 16 MiB line, deeply nested expressions. Each must complete without panicking (a stack overflow
//! aborts the test binary) and without a quadratic blow-up. The bound is
//! structural, not a timing: every input here is processed by the whole
//! per-job pipeline minus the assembler, and the suite has to finish at all
//! (quadratic work on 10^6 lines is ~10^12 steps: the test would never end
//! and CI times out), while peak memory is checked against a generous
//! linear bound (VmHWM, Linux) so a blow-up in memory fails loudly.

use gcn_embed::TargetId;
use gcn_patch::base::document::{Document, Edits};
use gcn_patch::config::policy::RegisterPolicy;
use gcn_patch::pipeline::prepare_traced;
use gcn_patch::stage::retarget::RetargetOptions;

fn saxpy() -> String {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/hip/gfx942/saxpy.s"
    );
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e} (run tests/corpus/regen.sh)"))
}

/// The saxpy kernel with `body` inserted before its `s_endpgm`.
fn kernel_with(body: &str) -> String {
    let text = saxpy();
    let at = text.find("\ts_endpgm").expect("saxpy has s_endpgm");
    format!("{}{body}{}", &text[..at], &text[at..])
}

fn run_pipeline(text: &str) {
    let doc = Document::from_source(text, "big.s");
    assert_eq!(doc.print(), text);
    let opts = RetargetOptions::new(TargetId::parse("gfx942").unwrap());
    // Errors are fine (e.g. the register budget); panics and hangs are not.
    let _ = prepare_traced("k", Some(&doc), &doc, &opts, RegisterPolicy::Update);
}

/// Peak resident memory of this process in KiB (Linux), if known.
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_million_lines() {
    // Alone in a child process: the peak resident memory (VmHWM) is the process's.
    if !crate::alone::in_child("pathological::a_million_lines", &[]) {
        return;
    }
    // 10 000 groups of 100 lines: a load, the wait for it, a read of the
    // loaded register, 97 other instructions. The "patch" deletes every
    // wait: 10 000 hazards, each of which must name the dump's wait that was
    // removed. Every stage runs on a million lines, twice where the original
    // is involved (retarget, register budget, hazards), and a step that is
    // quadratic in lines or in hazards x lines (~10^10) would not finish.
    const GROUPS: usize = 10_000;
    let group = format!(
        "\tglobal_load_dword v1, v[2:3], off\n\ts_waitcnt vmcnt(0)\n\tv_add_f32_e32 v4, v1, v4\n{}",
        "\tv_add_f32_e32 v5, v5, v6\n".repeat(97)
    );
    let text = kernel_with(&group.repeat(GROUPS));
    let original = Document::from_source(&text, "big.s");
    assert_eq!(original.print(), text);
    let first = text[..text.find("\tglobal_load_dword v1, v[2:3]").unwrap()]
        .lines()
        .count();
    let mut edits = Edits::new();
    for g in 0..GROUPS {
        edits.delete(first + 100 * g + 1);
    }
    let mut patched = original.clone();
    patched.apply(edits);
    assert_eq!(patched.len(), original.len() - GROUPS);
    let opts = RetargetOptions::new(TargetId::parse("gfx942").unwrap());
    let errors = prepare_traced(
        "k",
        Some(&original),
        &patched,
        &opts,
        RegisterPolicy::Update,
    )
    .expect_err("every group has a hazard")
    .0;
    let removed = "is not in the patched asm as written";
    let named = errors
        .iter()
        .filter(|d| d.notes.iter().any(|n| n.contains(removed)))
        .count();
    assert_eq!((errors.len(), named), (GROUPS, GROUPS), "{}", errors[0]);
    drop((original, patched, errors));
    if let Some(kib) = peak_kib() {
        // ~26 MB of text; allow 200 bytes of model per input byte (the
        // bound predates running alone, beside this file's other tests).
        let limit = (text.len() as u64 * 200) / 1024 + 512 * 1024;
        eprintln!("peak memory {kib} KiB for {} bytes of asm", text.len());
        assert!(
            kib < limit,
            "peak memory {kib} KiB for {} bytes of asm",
            text.len()
        );
    }
}

#[test]
fn a_16_mib_line() {
    let long = format!("\ts_nop 0 ; {}\n", "x".repeat(16 << 20));
    run_pipeline(&kernel_with(&long));
    let operands = format!("\tv_add_f32_e32 v1, {}v2\n", "v1, ".repeat(1 << 20));
    run_pipeline(&kernel_with(&operands));
}

#[test]
fn deep_nesting() {
    let n = 100_000;
    let nested = format!("{}1{}", "(".repeat(n), ")".repeat(n));
    let unbalanced = "(".repeat(n);
    for e in [&nested, &unbalanced] {
        let body = format!("\t.set deep, {e}\n\ts_mov_b32 s0, {e}\n\tv_add_f32_e32 v1, {e}, v2\n");
        run_pipeline(&kernel_with(&body));
        let text = saxpy().replace(
            ".amdhsa_next_free_vgpr",
            &format!(".amdhsa_next_free_vgpr {e}\n\t\t.amdhsa_reserve_vcc"),
        );
        run_pipeline(&text);
    }
}
