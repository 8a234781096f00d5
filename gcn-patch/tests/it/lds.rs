//! Dynamic LDS (issue 34): Triton's `tl.dot` matmul (tests/triton/matmul-*,
//! compiled by triton 3.9 with `tests/triton/generate.py`) allocates its LDS
//! at launch (`shared` in its metadata; the descriptor declares 0).
//!
//! - `gcn-patch run --dynamic-lds SHARED` computes the product a Rust
//!   reference computes; without it, the summary counts the LDS accesses
//!   outside the allocation, and `--sanitize` names them (instruction with
//!   file:line, lane, offset, allocation).
//! - Imported from a real Triton dump, the manifest records `shared`, and a
//!   `[[kernel.launch]]` without `dynamic-lds` gets it: the launch computes
//!   the reference, `test` runs clean, and a rule that writes the wrong
//!   register with a `ds_write` is DIFFERENT in `compare`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{ok, repo, required_tool, run_cli, stderr};
use gcn_emu::launch::Dtype;
use gcn_emu::npy::Array;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The matmul's tile: BM = BN = 64, BK = 32 (generate.py); one workgroup
/// of 4 waves computes C (64×64) = A (64×K) · B (K×64).
const M: usize = 64;
const N: usize = 64;
const K: usize = 64;

/// `shared` from the corpus kernel's Triton metadata.
fn shared(arch: &str) -> u32 {
    let json = std::fs::read_to_string(
        repo()
            .join("tests/triton")
            .join(format!("matmul-{arch}"))
            .join("matmul.json"),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["shared"].as_u64().expect("`shared` in matmul.json") as u32
}

/// IEEE half bits to f64 (normal, subnormal and zero; the inputs hold no
/// infinities or NaNs).
fn f16(bits: u16) -> f64 {
    let sign = if bits >> 15 == 1 { -1.0 } else { 1.0 };
    let e = ((bits >> 10) & 0x1f) as i32;
    let m = (bits & 0x3ff) as f64;
    sign * if e == 0 {
        m * 2f64.powi(-24)
    } else {
        (1.0 + m / 1024.0) * 2f64.powi(e - 15)
    }
}

fn halves(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks(2)
        .map(|c| f16(u16::from_le_bytes([c[0], c[1]])))
        .collect()
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// C = A · B, row-major, in f64.
fn reference(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; M * N];
    for i in 0..M {
        for j in 0..N {
            c[i * N + j] = (0..K).map(|k| a[i * K + k] * b[k * N + j]).sum();
        }
    }
    c
}

/// Inputs of quarters in [-2, 2]: every product and partial sum is exact
/// in f32, so the kernel's result must equal the reference bit for bit,
/// whatever order its MFMA sums in.
fn quarters(seed: u64, n: usize) -> Vec<f64> {
    let mut r = gcn_emu::launch::SplitMix64(seed);
    (0..n)
        .map(|_| (r.next_u64() % 17) as f64 / 4.0 - 2.0)
        .collect()
}

fn write_f16(path: &Path, v: &[f64], shape: Vec<usize>) {
    let data: Vec<u8> = v.iter().flat_map(|&x| Dtype::F16.from_f64(x)).collect();
    let arr = Array {
        descr: "<f2".into(),
        shape,
        data,
    };
    std::fs::write(path, arr.to_bytes()).unwrap();
}

fn gcn_patch_run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .arg("run")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run gcn-patch")
}

/// `gcn-patch run` of the corpus matmul for `arch` on fresh inputs, with
/// `extra` flags; the output and the product it should be.
fn run_matmul(arch: &str, extra: &[&str]) -> (Output, PathBuf, Vec<f64>) {
    required_tool("llvm-objdump-22", common::LLVM_INSTALL);
    let tmp = tempfile::tempdir().unwrap().keep();
    let (a, b) = (quarters(1, M * K), quarters(2, K * N));
    write_f16(&tmp.join("a.npy"), &a, vec![M, K]);
    write_f16(&tmp.join("b.npy"), &b, vec![K, N]);
    let object = repo()
        .join("tests/triton")
        .join(format!("matmul-{arch}"))
        .join("matmul.hsaco");
    let count = format!("out:f32:{}", M * N);
    let dims = [format!("i32:{M}"), format!("i32:{N}"), format!("i32:{K}")];
    let mut args: Vec<&str> = vec![
        object.to_str().unwrap(),
        "-k",
        "matmul",
        "--grid",
        "1,1",
        "--block",
        "256",
        "--arg",
        "a.npy",
        "--arg",
        "b.npy",
        "--arg",
        &count,
        "--arg",
        &dims[0],
        "--arg",
        &dims[1],
        "--arg",
        &dims[2],
        // Triton 3.9's global and profile scratch pointers: unused here.
        "--arg",
        "u64:0",
        "--arg",
        "u64:0",
        "--out",
        "out",
    ];
    args.extend_from_slice(extra);
    let o = gcn_patch_run(&tmp, &args);
    (o, tmp, reference(&a, &b))
}

fn result(dir: &Path) -> Vec<f32> {
    let arr = Array::read(&dir.join("out/arg2.npy")).unwrap();
    floats(&arr.data)
}

#[test]
fn triton_matmul_matches_the_reference_with_its_shared_lds() {
    for arch in ["gfx942", "gfx950"] {
        let shared = shared(arch).to_string();
        assert!(shared != "0", "{arch}: the corpus matmul uses LDS");
        let (o, dir, want) = run_matmul(arch, &["--dynamic-lds", &shared, "--sanitize"]);
        assert!(o.status.success(), "{arch}: {}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("ran clean"), "{arch}: {}", stdout(&o));
        let got = result(&dir);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(*g as f64, *w, "{arch}: C[{}][{}]", i / N, i % N);
        }
        assert!(want.iter().any(|&w| w != 0.0), "a non-trivial product");
    }
}

#[test]
fn without_its_lds_the_matmul_is_wrong_and_the_run_says_why() {
    // Without the sanitizer: the run ends (exit 0, as hardware would), the
    // result is not the product, and the summary counts the accesses.
    let (o, dir, want) = run_matmul("gfx942", &[]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("ran clean"), "{out}");
    assert!(
        out.contains("LDS access(es) (lane x instruction) fell outside the workgroup's LDS allocation of 0 bytes (0 static + 0 dynamic)")
            && out.contains("--dynamic-lds BYTES"),
        "{out}"
    );
    let n: u64 = out
        .split("; ")
        .find_map(|p| p.split(" LDS access").next()?.parse().ok())
        .expect("a count");
    assert!(n > 0, "{out}");
    let got = result(&dir);
    assert!(
        got.iter().zip(&want).any(|(g, w)| *g as f64 != *w),
        "zero LDS cannot give the product"
    );

    // Too little: 16 bytes short of what Triton allocates.
    let short = (shared("gfx942") - 16).to_string();
    let (o, _, _) = run_matmul("gfx942", &["--dynamic-lds", &short]);
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "outside the workgroup's LDS allocation of {short} bytes (0 static + {short} dynamic)"
        )),
        "{out}"
    );

    // With the sanitizer: findings naming instruction, lane, offset and
    // allocation; exit 1.
    let (o, _, _) = run_matmul("gfx942", &["--sanitize"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let first = err
        .lines()
        .find(|l| l.starts_with("sanitizer: LDS out-of-bounds access"))
        .unwrap_or_else(|| panic!("no LDS out-of-bounds finding:\n{err}"));
    assert!(
        first.contains("`ds_write_b16 v36, v58`")
            && first.contains("matmul.hsaco (lifted):260: ds_write_b16 v36, v58)")
            && first.contains(", lane 0: 2-byte LDS write at offset 0x0 is outside the workgroup's LDS allocation of 0 bytes (0 static from the descriptor + 0 dynamic from the launch)")
            && first.contains("--dynamic-lds BYTES"),
        "{first}"
    );
    assert!(
        err.contains("2-byte LDS write")
            && err.contains("sanitizer: LDS out-of-bounds access: `ds_read_b64"),
        "writes and reads both (the first in full, the others one line each): {err}"
    );
}

/// A Triton dump of the matmul for gfx942 (roundtrip.py, triton 3.9),
/// imported into a fresh project with its cache entry; the project dir.
fn imported_matmul(tmp: &Path) -> PathBuf {
    required_tool("clang-22", common::LLVM_INSTALL);
    required_tool("ld.lld-22", common::LLVM_INSTALL);
    let o = Command::new("python3")
        .arg(repo().join("tests/triton/roundtrip.py"))
        .args(["dump", "matmul", "gfx942"])
        .arg(tmp.join("dump"))
        .arg(tmp.join("cache"))
        .output()
        .expect("python3 not found: install Python 3 and run `bash tests/setup.sh`");
    assert!(
        o.status.success(),
        "tests/triton/roundtrip.py failed (Triton 3.9.0 missing? run `bash tests/setup.sh`):\n{}{}",
        stdout(&o),
        stderr(&o)
    );
    let proj = tmp.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    ok(run_cli(
        &proj,
        &["import", "../dump", "--triton-cache", "../cache"],
    ));
    proj
}

const LAUNCH: &str = r#"
[[kernel.launch]]
grid = [1, 1]
block = 256
args = [
  { random = "f16", shape = [64, 64], seed = 1, range = [-2, 2] },
  { random = "f16", shape = [64, 64], seed = 2, range = [-2, 2] },
  { output = "f32", shape = [64, 64] },
  { scalar = "i32", value = 64 },
  { scalar = "i32", value = 64 },
  { scalar = "i32", value = 64 },
  { null = true },
  { null = true },
]
"#;

fn append(manifest: &Path, text: &str) {
    let mut m = std::fs::read_to_string(manifest).unwrap();
    m.push_str(text);
    std::fs::write(manifest, m).unwrap();
}

#[test]
fn an_imported_triton_launch_gets_shared_as_dynamic_lds() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = imported_matmul(tmp.path());
    let manifest = proj.join("kernels.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let shared = shared("gfx942");
    assert!(text.contains(&format!("shared = {shared},")), "{text}");
    append(&manifest, LAUNCH);

    // The launch, as compare and test run it, computes the product.
    let tools = gcn_patch::ops::Tools::default();
    let opts = gcn_patch::ops::emulate::CompareOptions {
        manifest: manifest.clone(),
        kernel: "matmul".into(),
        target: None,
        ..Default::default()
    };
    let runs = gcn_patch::ops::emulate::outputs(&opts, &tools).unwrap();
    assert_eq!(runs.len(), 1, "one target, one launch");
    let run = &runs[0];
    assert_eq!(run.dynamic_lds, shared, "filled from `shared`");
    let (bufs, stats) = run.result.as_ref().unwrap();
    assert_eq!(stats.lds_out_of_range, 0);
    let (a, b) = (halves(&bufs[0].data), halves(&bufs[1].data));
    let want = reference(&a, &b);
    let got = floats(&bufs[2].data);
    // Random halves: products are exact in f32, sums of 64 of them
    // round; 1e-3 is far above that and far below any wrong element.
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (*g as f64 - w).abs() <= 1e-3,
            "C[{}][{}]: {g} != {w}",
            i / N,
            i % N
        );
    }

    // test: clean under the sanitizer (no access outside the allocation).
    let o = run_cli(&proj, &["test"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));

    // An explicit key wins: 0 bytes is a finding in test.
    let zero = LAUNCH.replace("block = 256", "block = 256\ndynamic-lds = 0");
    std::fs::write(&manifest, format!("{text}{zero}")).unwrap();
    let o = run_cli(&proj, &["test"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("LDS out-of-bounds access"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_wrong_ds_write_operand_is_different_in_compare() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = imported_matmul(tmp.path());
    let manifest = proj.join("kernels.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    // The B tile's second half-row written from the wrong register.
    let rule = r#"
[[kernel.source.rule]]
replace = "ds_write_b16 v37, v59 offset:512"
with = "ds_write_b16 v37, v58 offset:512"
"#;
    std::fs::write(&manifest, format!("{text}{rule}{LAUNCH}")).unwrap();
    let o = run_cli(&proj, &["compare", "matmul"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.starts_with("DIFFERENT: kernel `matmul`, gfx942, launch 1")
            && out.contains("argument 2 (f32, shape [64, 64])"),
        "{out}"
    );
    assert!(!out.contains("LDS access"), "both sides had the LDS: {out}");

    // The same instruction rewritten to itself: same.
    let rule = r#"
[[kernel.source.rule]]
replace = "ds_write_b16 v37, v59 offset:512"
with = "ds_write_b16 v37, v59 offset:512"
"#;
    std::fs::write(&manifest, format!("{text}{rule}{LAUNCH}")).unwrap();
    let o = run_cli(&proj, &["compare", "matmul"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("same: "), "{}", stdout(&o));
}

/// gcn-emu/tests/kernels/dyn_shared.hip for gfx942, compiled with clang-22
/// into `dir`: 1024 bytes of static LDS and an `extern __shared__` array.
fn dyn_shared(dir: &Path) -> PathBuf {
    let clang = required_tool("clang-22", common::LLVM_INSTALL);
    required_tool("llvm-objdump-22", common::LLVM_INSTALL);
    let out = dir.join("dyn_shared.hsaco");
    let o = Command::new(clang)
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "-nogpuinc",
            "-nogpulib",
            "-O3",
            "--no-gpu-bundle-output",
            "--offload-arch=gfx942",
        ])
        .arg(repo().join("gcn-emu/tests/kernels/dyn_shared.hip"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// `run` of `reverse` on 2 workgroups of 256 with `extra` flags; the
/// output, the directory and the expected result.
fn run_reverse(extra: &[&str]) -> (Output, PathBuf, Vec<f32>) {
    let dir = tempfile::tempdir().unwrap().keep();
    let object = dyn_shared(&dir);
    let input: Vec<f32> = (0..512).map(|i| (i as f32) * 0.5 - 3.0).collect();
    let arr = Array {
        descr: "<f4".into(),
        shape: vec![512],
        data: input.iter().flat_map(|x| x.to_le_bytes()).collect(),
    };
    std::fs::write(dir.join("in.npy"), arr.to_bytes()).unwrap();
    let want: Vec<f32> = (0..512)
        .map(|g| {
            let (base, t) = (g / 256 * 256, g % 256);
            input[base + 255 - t] + 2.0 * input[base + (t ^ 1)]
        })
        .collect();
    let mut args = vec![
        object.to_str().unwrap(),
        "-k",
        "reverse",
        "--grid",
        "2",
        "--block",
        "256",
        "--arg",
        "in.npy",
        "--arg",
        "out:f32:512",
        "--out",
        "out",
    ];
    args.extend_from_slice(extra);
    (gcn_patch_run(&dir, &args), dir, want)
}

#[test]
fn hip_extern_shared_takes_its_size_from_the_launch() {
    let (o, dir, want) = run_reverse(&["--dynamic-lds", "1024", "--sanitize"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("ran clean"), "{}", stdout(&o));
    let got = floats(&Array::read(&dir.join("out/arg1.npy")).unwrap().data);
    assert_eq!(got, want);

    // Without it: the static array works, the dynamic one reads 0; every
    // lane's dynamic write and read is counted (2 workgroups × 256 × 2).
    let (o, dir, want) = run_reverse(&[]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("; 1024 LDS access(es) (lane x instruction) fell outside the workgroup's LDS allocation of 1024 bytes (1024 static + 0 dynamic)"),
        "{out}"
    );
    let got = floats(&Array::read(&dir.join("out/arg1.npy")).unwrap().data);
    assert_ne!(got, want);

    // Half of it: work-items 128 to 255 of each workgroup fall outside,
    // a finding at the first such lane.
    let (o, _, _) = run_reverse(&["--dynamic-lds", "512", "--sanitize"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("`ds_write_b32 v5, v1`")
            && err.contains(", lane 0: 4-byte LDS write at offset 0x600 is outside the workgroup's LDS allocation of 1536 bytes (1024 static from the descriptor + 512 dynamic from the launch); the emulator drops the write\n"),
        "{err}"
    );
    assert!(
        err.contains("gcn-patch run: 512 LDS access(es)"),
        "counted with the sanitizer too: {err}"
    );
}

/// More dynamic LDS than the processor has is bad input (exit 2), naming
/// the sizes and what fits; nothing runs.
#[test]
fn more_dynamic_lds_than_the_processor_has_is_a_usage_error() {
    let (o, _, _) = run_matmul("gfx942", &["--dynamic-lds", "100000"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "kernel `matmul`: 0 bytes of static LDS + 100000 dynamic = 100000 bytes per workgroup; gfx942 has 65536: at most 65536 dynamic bytes fit"
        ),
        "{}",
        stderr(&o)
    );
}
