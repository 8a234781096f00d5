//! Pathological inputs: a million lines (18 s and 1.7 GiB peak in the
//! unoptimized test profile on the 2-core CI machine), a 16 MiB line, deeply
//! nested expressions. Each must complete without panicking (a stack overflow
//! aborts the test binary) and without a quadratic blow-up. The bound is
//! structural, not a timing: every input here is processed by the whole
//! per-job pipeline minus the assembler, and the suite has to finish at all
//! (quadratic work on 10^6 lines is ~10^12 steps: the test would never end
//! and CI times out), while peak memory is checked against a generous
//! linear bound (VmHWM, Linux) so a blow-up in memory fails loudly.

use gcn_embed::TargetId;
use gcn_patch::check::RegisterPolicy;
use gcn_patch::document::Document;
use gcn_patch::pipeline::prepare_traced;
use gcn_patch::retarget::RetargetOptions;

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
    let body = "\tv_add_f32_e32 v1, v1, v2\n".repeat(1_000_000);
    let text = kernel_with(&body);
    run_pipeline(&text);
    if let Some(kib) = peak_kib() {
        // ~26 MB of text; allow 200 bytes of model per input byte (the other
        // tests of this binary run in the same process).
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
