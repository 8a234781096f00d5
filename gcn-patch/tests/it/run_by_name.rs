//! `gcn-patch run --arg NAME=SPEC` and `--zero-rest` end to end: aiter's
//! bf16 GEMM (76 explicit arguments, 54 of them `pad`) launched by name and
//! checked against a reference computed here; named and positional
//! arguments mixed on a HIP kernel; and the binding errors (unknown name,
//! a name given too often, arguments left, too many positional), snapshot
//! tested.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{repo, required_tool, run_cli, stderr};
use gcn_emu::npy::Array;

/// aiter's gfx950 bf16 GEMM, 256x256 tile, A row-major M x K, B row-major
/// N x K ("tn"), D = A * B^T in bf16 (tests/corpus/aiter, copied unchanged
/// by tests/corpus/aiter.sh).
const GEMM: &str = "tests/corpus/aiter/gfx950/bf16gemm/bf16gemm_bf16_tn_256x256.co";
const GEMM_KERNEL: &str = "_ZN5aiter24bf16gemm_bf16_tn_256x256E";

fn bf16(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// `n` bf16 values from a small LCG, in [-1, 1) with 1/64 steps (exact in
/// bf16), as raw bits.
fn bf16_inputs(n: usize, mut seed: u64) -> Vec<u16> {
    (0..n)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((seed >> 33) % 128) as f32 / 64.0 - 1.0;
            (v.to_bits() >> 16) as u16
        })
        .collect()
}

fn write_u16(path: &Path, v: &[u16]) {
    Array::new("<u2", v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .write(path)
        .unwrap();
}

/// The launch aiter's `gemm_a16w16_asm` makes (csrc/py_itfs_cu/
/// asm_gemm_a16w16.cu): alpha 1, beta 0, C and Bias null, strides in bytes
/// (A and B: K elements per row; D and C: N), splitk 1 and no semaphore,
/// is_out_b16 1; every `pad` zero.
fn gemm_args(m: usize, n: usize, k: usize) -> Vec<String> {
    let mut a: Vec<String> = [
        format!("D=out:bf16:{}", m * n),
        "C=u64:0".into(),
        "A=a.npy".into(),
        "B=b.npy".into(),
        "alpha=f32:1".into(),
        "beta=f32:0".into(),
        format!("strideD0=u32:{}", n * 2),
        format!("strideC0=u32:{}", n * 2),
        format!("strideA0=u32:{}", k * 2),
        format!("strideB0=u32:{}", k * 2),
        format!("Mdim=u32:{m}"),
        format!("Ndim=u32:{n}"),
        format!("Kdim=u32:{k}"),
        "splitk=u32:1".into(),
        "is_out_b16=u32:1".into(),
        "Bias=u64:0".into(),
        "ptr_semaphore=u64:0".into(),
    ]
    .to_vec();
    a = a
        .into_iter()
        .flat_map(|s| ["--arg".to_string(), s])
        .collect();
    a.push("--zero-rest".into());
    a
}

#[test]
fn aiter_bf16_gemm_launches_by_name_and_matches_a_reference() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (m, n, k) = (256, 256, 64);
    let a = bf16_inputs(m * k, 1);
    let b = bf16_inputs(n * k, 2);
    write_u16(&d.join("a.npy"), &a);
    write_u16(&d.join("b.npy"), &b);
    let object = repo().join(GEMM);
    let object = object.to_str().unwrap();
    let mut args = vec![
        "run",
        object,
        "-k",
        GEMM_KERNEL,
        "--grid",
        "1",
        "--block",
        "256",
        "--out",
        "out",
    ];
    let named = gemm_args(m, n, k);
    args.extend(named.iter().map(String::as_str));
    // 17 named arguments and --zero-rest instead of 68 positional ones.
    assert_eq!(named.iter().filter(|s| *s == "--arg").count(), 17);
    let o = run_cli(d, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = Array::read(&d.join("out/arg0.npy")).unwrap();
    assert_eq!(out.descr, "<u2");
    assert_eq!(out.shape, [m * n]);
    let got: Vec<f32> = out
        .data
        .chunks(2)
        .map(|c| bf16(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    // The reference: bf16 inputs, products and sums in f32 (aiter's MFMA
    // accumulates in f32), in order of k.
    // Tolerance: one bf16 ulp of the reference, |got - ref| <= 2^-7 |ref|
    // (+2^-20 near 0): the kernel rounds its f32 sums to bf16 (half an
    // ulp), and its summation order differs from this loop's (f32
    // rounding, far below a bf16 ulp for K = 64).
    let mut worst = 0f32;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for kk in 0..k {
                acc += bf16(a[i * k + kk]) * bf16(b[j * k + kk]);
            }
            let g = got[i * n + j];
            let err = (g - acc).abs();
            assert!(
                err <= acc.abs() / 128.0 + 1e-6,
                "D[{i}][{j}] = {g}, reference {acc}"
            );
            worst = worst.max(err);
        }
    }
    // The inputs are not degenerate: the results span both signs.
    assert!(got.iter().any(|&v| v > 1.0) && got.iter().any(|&v| v < -1.0));
    eprintln!("largest error {worst}");
}

#[test]
fn binding_errors_name_the_arguments_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let object = repo().join(GEMM);
    let object = object.to_str().unwrap();
    let base = [
        "run",
        object,
        "-k",
        GEMM_KERNEL,
        "--grid",
        "1",
        "--block",
        "256",
    ];
    let cases: Vec<Vec<&str>> = vec![
        // A misspelt name: the nearest one, and the list.
        vec!["--zero-rest", "--arg", "Kdmi=u32:64"],
        // More `pad`s than the kernel has.
        {
            let mut v = vec!["--zero-rest"];
            for _ in 0..62 {
                v.extend(["--arg", "pad=u32:0"]);
            }
            v
        },
        // Arguments left: the by-value ones grouped by name, the pointers.
        vec!["--arg", "A=a.npy", "--arg", "Kdim=u32:64"],
        // With --zero-rest only the pointers are left.
        vec!["--zero-rest", "--arg", "A=a.npy", "--arg", "B=b.npy"],
        // A bad spec after a name says which name.
        vec!["--arg", "alpha=f33:1"],
    ];
    let mut all = String::new();
    for c in cases {
        let mut args = base.to_vec();
        args.extend(c);
        let o = run_cli(d, &args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains("--arg"), "the flag is named: {e}");
        let shown: Vec<&str> = args[8..]
            .iter()
            .map(|a| if a.len() > 40 { "…" } else { a })
            .collect();
        all.push_str(&format!(
            "$ gcn-patch run GEMM.co -k KERNEL --grid 1 --block 256 {}\nexit 2\n{}\n",
            shown
                .join(" ")
                .replace("--arg pad=u32:0 ", "")
                .replace("--arg pad=u32:0", "(--arg pad=u32:0 ×62)"),
            e.replace(object, "GEMM.co")
        ));
    }
    insta::assert_snapshot!("binding_errors", all);
}

/// Compile the corpus' saxpy for gfx942 into `dir/saxpy.hsaco`, keeping
/// the arguments' names (`a`, `x.coerce`, `y.coerce`, `n`: without
/// `-fno-discard-value-names` clang drops them from the metadata).
fn saxpy(dir: &Path) -> PathBuf {
    let src = repo().join("tests/corpus/src/saxpy.hip");
    common::compile_hip(
        &src,
        "gfx942",
        &dir.join("saxpy.hsaco"),
        &["-fno-discard-value-names"],
    )
}

#[test]
fn named_and_positional_arguments_mix_names_first() {
    // saxpy(float a, const float *x, float *y, unsigned n): y = a*x + y;
    // `x` names the argument clang calls `x.coerce`.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    saxpy(d);
    let npy = |name: &str, v: &[f32]| {
        Array::new("<f4", v.iter().flat_map(|x| x.to_le_bytes()).collect())
            .write(&d.join(name))
            .unwrap()
    };
    npy("x.npy", &[1.0, 2.0, 3.0, 4.0, 5.0]);
    npy("y.npy", &[10.0, 20.0, 30.0, 40.0, 50.0]);
    let base = [
        "run",
        "saxpy.hsaco",
        "-k",
        "saxpy",
        "--grid",
        "1",
        "--block",
        "64",
        "--out",
        "out",
    ];
    // `x` and `a` by name; the positional specs fill `y` then `n`, the
    // arguments left in metadata order, wherever they are written.
    let mut args = base.to_vec();
    args.extend([
        "--arg", "y.npy", "--arg", "x=x.npy", "--arg", "u32:4", "--arg", "a=f32:2",
    ]);
    let o = run_cli(d, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    // x is argument 1: untouched; y is argument 2: 4 elements updated.
    assert_eq!(
        common::npy_f32s(&d.join("out/arg1.npy")),
        [1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(
        common::npy_f32s(&d.join("out/arg2.npy")),
        [12.0, 24.0, 36.0, 48.0, 50.0]
    );
    // --zero-rest gives n = 0 (by value): nothing is written.
    let mut args = base.to_vec();
    args.extend([
        "--zero-rest",
        "--arg",
        "a=f32:2",
        "--arg",
        "x=x.npy",
        "--arg",
        "y=y.npy",
    ]);
    let o = run_cli(d, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        common::npy_f32s(&d.join("out/arg2.npy")),
        [10.0, 20.0, 30.0, 40.0, 50.0]
    );
    // A value where the named argument is a pointer: the same check as by position.
    let mut args = base.to_vec();
    args.extend([
        "--zero-rest",
        "--arg",
        "a=f32:2",
        "--arg",
        "x=f32:1",
        "--arg",
        "y=y.npy",
    ]);
    let o = run_cli(d, &args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--arg: argument 1 `x.coerce` (global_buffer, 8 bytes) is a pointer"),
        "{}",
        stderr(&o)
    );
    // More positional specs than arguments left.
    let mut args = base.to_vec();
    args.extend([
        "--arg", "a=f32:2", "--arg", "x.npy", "--arg", "y.npy", "--arg", "u32:4", "--arg", "u32:4",
    ]);
    let o = run_cli(d, &args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("4 argument(s) given by position, 3 left"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_manifest_launch_takes_arguments_by_name() {
    // The corpus saxpy compiled to asm with its arguments' names (`a`,
    // `x.coerce`, `y.coerce`, `n`), pinned by `gcn-patch pin`.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let clang = required_tool("clang-22", common::LLVM_INSTALL);
    let o = Command::new(clang)
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "-nogpuinc",
            "-nogpulib",
            "-O3",
            "-fno-discard-value-names",
            "-S",
            "--offload-arch=gfx942",
        ])
        .arg(repo().join("tests/corpus/src/saxpy.hip"))
        .arg("-o")
        .arg(d.join("saxpy.s"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let write = |launches: &str| {
        std::fs::write(
            d.join("kernels.toml"),
            format!(
                "[[kernel]]\nname = \"saxpy\"\n[[kernel.source]]\nasm = \"saxpy.s\"\nsha256 = \"{}\"\ntargets = [\"gfx942\"]\n{launches}",
                "0".repeat(64)
            ),
        )
        .unwrap();
        let o = run_cli(d, &["pin", "saxpy"]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    write(
        "\n[[kernel.launch]]\nname = \"by-name\"\ngrid = 4\nblock = 256\n\
         [kernel.launch.args]\nn = { scalar = \"u32\", value = 1000 }\n\
         x = { random = \"f32\", shape = 1000, seed = 1 }\n\
         y = { random = \"f32\", shape = 1000, seed = 2 }\n\
         a = { scalar = \"f32\", value = 0.75 }\n\
         \n[[kernel.launch]]\nname = \"zero-n\"\ngrid = 4\nblock = 256\nzero-rest = true\n\
         args = { x = { random = \"f32\", shape = 1000 }, y = { output = \"f32\", shape = 1000 } }\n",
    );
    let o = run_cli(d, &["test"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.contains("ok: kernel `saxpy`, gfx942, by-name (kernels.toml:"),
        "{out}"
    );
    assert!(
        out.contains("ok: kernel `saxpy`, gfx942, zero-n (kernels.toml:"),
        "{out}"
    );
    // A misspelt name and a missing pointer: exit 2 at the launch's line,
    // with the kernel's names and the TOML way to fix it.
    write(
        "\n[[kernel.launch]]\ngrid = 1\nblock = 64\nzero-rest = true\n\
         args = { x = { random = \"f32\", shape = 4 }, yy = { output = \"f32\", shape = 4 } }\n",
    );
    let o = run_cli(d, &["test"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("kernels.toml:8: kernel `saxpy`: no explicit argument is named `yy`; did you mean `y`? (its arguments: a, x.coerce, y.coerce, n)"),
        "{}",
        stderr(&o)
    );
    write(
        "\n[[kernel.launch]]\ngrid = 1\nblock = 64\nzero-rest = true\n\
         args = { x = { random = \"f32\", shape = 4 } }\n",
    );
    let o = run_cli(d, &["test"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("arguments not given: argument 2 `y.coerce` (global_buffer, 8 bytes) (a pointer is always given: `NAME = { null = true }` for a null one)"),
        "{}",
        stderr(&o)
    );
}
