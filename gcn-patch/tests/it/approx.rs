//! Approximate instructions through `compare`, `test` and `run`: a HIP f32
//! division compiled by clang-22 (v_div_scale, v_rcp_f32, Newton steps,
//! v_div_fmas, v_div_fixup) patched into the fast-math `v_rcp_f32` +
//! `v_mul_f32`. With a divisor whose reciprocal is exact, the emulator's
//! correctly rounded `v_rcp_f32` gives bit-for-bit the same results, so
//! `compare` says "same"; it must name the approximate instruction the
//! patch adds and say how to check it, and with `--perturb-approx` the
//! fast-math edit is DIFFERENT while the unpatched division is not moved
//! (a patch that adds no approximation stays "same").

use crate::common;

use std::path::{Path, PathBuf};

use common::{repo, required_tool, run_cli, stderr, stdout};
use sha2::{Digest, Sha256};

/// gcn-emu/tests/kernels/fdiv.hip compiled by clang-22 to asm for gfx942.
fn fdiv_asm(dir: &Path) -> String {
    required_tool("ld.lld-22", common::LLVM_INSTALL);
    let src = repo().join("gcn-emu/tests/kernels/fdiv.hip");
    let s = common::compile_hip(&src, "gfx942", &dir.join("fdiv.s"), &["-S"]);
    std::fs::read_to_string(&s).unwrap()
}

/// The IEEE division sequence clang-22 emits for `x[i] / d` (d in s4).
const DIVISION: &[&str] = &[
    "v_div_scale_f32 v3, s[2:3], s4, s4, v2",
    "v_rcp_f32_e32 v4, v3",
    "v_div_scale_f32 v5, vcc, v2, s4, v2",
    "v_fma_f32 v6, -v3, v4, 1.0",
    "v_fmac_f32_e32 v4, v6, v4",
    "v_mul_f32_e32 v6, v5, v4",
    "v_fma_f32 v7, -v3, v6, v5",
    "v_fmac_f32_e32 v6, v7, v4",
    "v_fma_f32 v3, -v3, v6, v5",
    "v_div_fmas_f32 v3, v3, v4, v6",
    "v_div_fixup_f32 v2, v3, s4, v2",
];

/// A manifest in a fresh directory: the fdiv dump, `rules` and a launch
/// dividing 1000 random floats by `d`.
fn manifest(tag: &str, rules: &str, d: f32) -> PathBuf {
    manifest_with(tag, rules, d, "")
}

/// [`manifest`] with `extra` keys in the launch.
fn manifest_with(tag: &str, rules: &str, d: f32, extra: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gcn-patch-approx-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let asm = fdiv_asm(&dir);
    for l in DIVISION {
        assert_eq!(
            asm.lines().filter(|x| x.trim() == *l).count(),
            1,
            "clang-22's division changed: `{l}` not once in\n{asm}"
        );
    }
    let sha: String = Sha256::digest(asm.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(
        dir.join("kernels.toml"),
        format!(
            "[[kernel]]\nname = \"fdiv\"\nhazards = \"warn\"\n[[kernel.source]]\nasm = \"fdiv.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\"]\n{rules}\n\
             [[kernel.launch]]\nname = \"n1000\"\n{extra}grid = 4\nblock = 256\nargs = [\n  {{ random = \"f32\", shape = 1000, seed = 1 }},\n  {{ scalar = \"f32\", value = {d:?} }},\n  {{ output = \"f32\", shape = 1000 }},\n  {{ scalar = \"u32\", value = 1000 }},\n]\n"
        ),
    )
    .unwrap();
    dir
}

/// The fast-math edit: the sequence replaced by `v_rcp_f32` of the divisor
/// and a multiply.
fn fast_math_rules() -> String {
    let mut r = format!(
        "[[kernel.source.rule]]\nreplace = \"{}\"\nwith = \"v_rcp_f32_e32 v4, s4\\nv_mul_f32_e32 v2, v2, v4\"\n",
        DIVISION[0]
    );
    for l in &DIVISION[1..] {
        r.push_str(&format!("[[kernel.source.rule]]\ndelete = \"{l}\"\n"));
    }
    r
}

#[test]
fn a_fast_math_rcp_edit_is_named_by_compare_and_differs_under_perturbation() {
    let dir = manifest("fastmath", &fast_math_rules(), 4.0);
    // Correctly rounded: 1/4 is exact, so x·rcp(4) = x/4 bit for bit.
    let o = run_cli(&dir, &["compare", "fdiv"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.starts_with("same: kernel `fdiv`, gfx942, n1000 (kernels.toml:"),
        "{out}"
    );
    assert!(
        out.contains(
            "  approximate instructions run: unpatched v_rcp_f32 ×1; patched v_rcp_f32 ×1\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("  the patch adds approximate: v_rcp_f32 ×1 (hardware: within 1 ULP), 16 wave-execution(s): fdiv.patched.gfx942.s:"),
        "the added instruction with its line: {out}"
    );
    assert!(out.contains(" `v_rcp_f32_e32 v4, s4`\n"), "{out}");
    assert!(out.contains("rerun with --perturb-approx SEED"), "{out}");
    insta::assert_snapshot!("approx_fast_math_same", out);
    // Perturbed within 1 ULP: the fast-math quotient moves, the IEEE
    // division (whose v_rcp_f32 moves too) does not.
    for seed in ["1", "2"] {
        let o = run_cli(&dir, &["compare", "fdiv", "--perturb-approx", seed]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "seed {seed}: {out}{}", stderr(&o));
        assert!(
            out.starts_with("DIFFERENT: kernel `fdiv`, gfx942, n1000 (kernels.toml:"),
            "seed {seed}: {out}"
        );
        assert!(
            out.contains("argument 2 (f32, shape [1000]): "),
            "seed {seed}: {out}"
        );
        assert!(
            out.contains(&format!("(perturbation seed {seed})")),
            "{out}"
        );
        let again = run_cli(&dir, &["compare", "fdiv", "--perturb-approx", seed]);
        assert_eq!(stdout(&again), out, "seed {seed} twice");
        if seed == "1" {
            insta::assert_snapshot!("approx_fast_math_perturbed", out);
        }
    }
    // The launch may ask for it itself.
    let keyed = manifest_with("keyed", &fast_math_rules(), 4.0, "perturb-approx = 1\n");
    let o = run_cli(&keyed, &["compare", "fdiv"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("(perturbation seed 1)"),
        "{}",
        stdout(&o)
    );
    // A tolerance of the bound's size absorbs it: the difference is the
    // approximation's, nothing else.
    let o = run_cli(
        &dir,
        &[
            "compare",
            "fdiv",
            "--perturb-approx",
            "1",
            "--tolerance",
            "ulp:2",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // test and run list the approximate instruction the kernel executed.
    let o = run_cli(&dir, &["test", "--perturb-approx", "1"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.contains("  approximate: v_rcp_f32 ×1 (hardware: within 1 ULP), 16 wave-execution(s): fdiv.patched.gfx942.s:"),
        "{out}"
    );
}

#[test]
fn a_patch_that_adds_no_approximation_stays_same_under_perturbation() {
    let dir = manifest(
        "nop",
        "[[kernel.source.rule]]\ninsert = \"s_nop 0\"\nbefore = \"global_store_dword v[0:1], v2, off\"\n",
        3.0,
    );
    for args in [
        vec!["compare", "fdiv"],
        vec!["compare", "fdiv", "--perturb-approx", "7"],
    ] {
        let o = run_cli(&dir, &args);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {out}{}", stderr(&o));
        assert!(out.starts_with("same: "), "{args:?}: {out}");
        assert!(!out.contains("the patch adds"), "{args:?}: {out}");
        assert!(!out.contains("note:"), "{args:?}: {out}");
    }
}

#[test]
fn run_lists_the_approximate_instructions_and_perturbs_within_one_ulp() {
    let dir = manifest("run", "", 3.0);
    let asm = std::fs::read_to_string(dir.join("fdiv.s")).unwrap();
    let fast = DIVISION[1..].iter().fold(
        asm.replacen(
            DIVISION[0],
            "v_rcp_f32_e32 v4, s4\n\tv_mul_f32_e32 v2, v2, v4",
            1,
        ),
        |a, l| a.replacen(&format!("\t{l}\n"), "", 1),
    );
    let co = common::assemble(&fast, "gfx942").unwrap();
    std::fs::write(dir.join("fast.hsaco"), co).unwrap();
    std::fs::write(dir.join("fast.s"), &fast).unwrap();
    let x: Vec<f32> = (0..1000).map(|i| (i as f32 - 500.0) / 7.0 + 0.01).collect();
    gcn_emu::npy::Array::new("<f4", x.iter().flat_map(|v| v.to_le_bytes()).collect())
        .write(&dir.join("x.npy"))
        .unwrap();
    let go = |seed: Option<&str>, out: &str| {
        let mut args = vec![
            "run",
            "fast.hsaco",
            "--kernel",
            "fdiv",
            "--grid",
            "4",
            "--block",
            "256",
            "--arg",
            "x.npy",
            "--arg",
            "f32:3",
            "--arg",
            "out:f32:1000",
            "--arg",
            "u32:1000",
            "--asm",
            "fast.s",
            "--out",
            out,
        ];
        if let Some(s) = seed {
            args.extend(["--perturb-approx", s]);
        }
        let o = run_cli(&dir, &args);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let r = gcn_emu::npy::Array::read(&dir.join(out).join("arg2.npy")).unwrap();
        let v: Vec<f32> = r
            .data
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        (stdout(&o), v)
    };
    let (text, exact) = go(None, "exact");
    assert!(
        text.contains(
            "approximate: v_rcp_f32 ×1 (hardware: within 1 ULP), 16 wave-execution(s): fast.s:27 `v_rcp_f32_e32 v4, s4`\n"
        ),
        "{text}"
    );
    assert!(text.contains("--perturb-approx SEED moves them"), "{text}");
    let (text, moved) = go(Some("5"), "moved");
    assert!(text.contains("(--perturb-approx 5)"), "{text}");
    let rcp = 1.0f32 / 3.0;
    let mut differ = 0;
    for i in 0..1000 {
        assert_eq!(exact[i].to_bits(), (x[i] * rcp).to_bits(), "x[{i}]·rcp(3)");
        // rcp(3) is one step away (the other faithful rounding of 1/3); the
        // product moves by at most a few steps.
        let p = (x[i] as f64 * (1.0 / 3.0f64)).abs();
        assert!(
            ((moved[i] as f64).abs() - p).abs()
                <= 3.0 * gcn_emu::approx::ulp_of(gcn_emu::approx::Format::F32, p),
            "x[{i}] = {}: {} vs {}",
            x[i],
            moved[i],
            exact[i]
        );
        differ += (moved[i] != exact[i]) as usize;
    }
    assert!(differ > 100, "only {differ} of 1000 quotients moved");
}
