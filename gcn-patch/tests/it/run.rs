//! `gcn-patch run` end to end: HIP kernels compiled with the real clang-22,
//! emulated, their .npy outputs compared with references; and bad input
//! (objects, argument specs, argument counts), unsupported instructions and
//! the instruction budget, with their messages snapshot-tested.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{repo, required_tool, stdout};
use gcn_emu::npy::Array;

fn gcn_patch(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(["run"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run gcn-patch")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Compile gcn-emu/tests/kernels/NAME.hip (or tests/corpus/src/NAME.hip)
/// for `target` into `dir/NAME.hsaco`.
fn build(dir: &Path, name: &str, target: &str) -> PathBuf {
    let mut src = repo()
        .join("gcn-emu/tests/kernels")
        .join(format!("{name}.hip"));
    if !src.exists() {
        src = repo().join("tests/corpus/src").join(format!("{name}.hip"));
    }
    common::compile_hip(&src, target, &dir.join(format!("{name}.hsaco")), &[])
}

/// Compile the corpus' NAME.hip for `target` to asm, replace `from` by `to`
/// in it (once, which must match), assemble with clang-22 and link with
/// ld.lld-22 into `dir/NAME.hsaco`.
fn build_mutant(dir: &Path, name: &str, target: &str, from: &str, to: &str) -> PathBuf {
    let clang = required_tool("clang-22", common::LLVM_INSTALL);
    let lld = required_tool("ld.lld-22", common::LLVM_INSTALL);
    let src = repo().join("tests/corpus/src").join(format!("{name}.hip"));
    let s = dir.join(format!("{name}.s"));
    let o = Command::new(&clang)
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "-nogpuinc",
            "-nogpulib",
            "-O3",
            "-S",
        ])
        .arg(format!("--offload-arch={target}"))
        .arg(&src)
        .arg("-o")
        .arg(&s)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&s).unwrap();
    assert_eq!(text.matches(from).count(), 1, "`{from}` once in {name}.s");
    std::fs::write(&s, text.replacen(from, to, 1)).unwrap();
    let obj = dir.join(format!("{name}.o"));
    let o = Command::new(&clang)
        .args(["-target", "amdgcn-amd-amdhsa", "-x", "assembler", "-c"])
        .arg(format!("-mcpu={target}"))
        .arg(&s)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.join(format!("{name}.hsaco"));
    let o = Command::new(lld)
        .arg("-shared")
        .arg(&obj)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn npy_f32(path: &Path, v: &[f32]) {
    Array::new("<f4", v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .write(path)
        .unwrap();
}

#[test]
fn saxpy_runs_from_npy_inputs_and_writes_npy_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for target in ["gfx90a", "gfx942", "gfx950"] {
        build(d, "saxpy", target);
        let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25 - 7.0).collect();
        let y: Vec<f32> = (0..1000).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        npy_f32(&d.join("x.npy"), &x);
        npy_f32(&d.join("y.npy"), &y);
        let o = gcn_patch(
            d,
            &[
                "saxpy.hsaco",
                "--kernel",
                "saxpy",
                "--grid",
                "4",
                "--block",
                "256",
                "--arg",
                "f32:-1.5",
                "--arg",
                "x.npy",
                "--arg",
                "y.npy",
                "--arg",
                "u32:1000",
                "--out",
                "out",
            ],
        );
        assert!(o.status.success(), "{target}: {}", stderr(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("ran clean: 4 workgroup(s), 16 wave(s)"),
            "{stdout}"
        );
        let got = Array::read(&d.join("out/arg2.npy")).unwrap();
        assert_eq!(
            (got.descr.as_str(), got.shape.as_slice()),
            ("<f4", &[1000usize][..])
        );
        for i in 0..1000 {
            let g = f32::from_le_bytes(got.data[4 * i..4 * i + 4].try_into().unwrap());
            assert_eq!(
                g.to_bits(),
                (-1.5f32).mul_add(x[i], y[i]).to_bits(),
                "{target}: y[{i}]"
            );
        }
        assert_eq!(
            Array::read(&d.join("out/arg1.npy")).unwrap().data.len(),
            4000
        );
    }
}

#[test]
fn out_buffers_are_poisoned_so_unwritten_elements_show() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "saxpy", "gfx942");
    npy_f32(&d.join("x.npy"), &[1.0; 300]);
    // y is an out: buffer of 300 poisoned (NaN) elements; n = 200 leaves 100 unwritten.
    let o = gcn_patch(
        d,
        &[
            "saxpy.hsaco",
            "-k",
            "saxpy",
            "--grid",
            "2",
            "--block",
            "256",
            "--arg",
            "f32:2",
            "--arg",
            "x.npy",
            "--arg",
            "out:f32:300",
            "--arg",
            "u32:200",
            "--out",
            "o",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let y = Array::read(&d.join("o/arg2.npy")).unwrap();
    let v: Vec<f32> = y
        .data
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // 2 * 1 + NaN = NaN for the first 200 too: the kernel reads y.
    assert!(v[..200].iter().all(|f| f.is_nan()));
    // Elements 200.. were never written: still the poison bytes.
    assert!(v[200..].iter().all(|f| f.to_bits() == 0xffff_ffff));
}

fn snapshot_case(d: &Path, args: &[&str]) -> String {
    let o = gcn_patch(d, args);
    format!(
        "$ gcn-patch run {}\nexit {}\n{}",
        args.join(" "),
        o.status.code().unwrap_or(-1),
        stderr(&o)
    )
}

#[test]
fn bad_argument_specs_and_counts_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "saxpy", "gfx942");
    npy_f32(&d.join("x.npy"), &[1.0; 4]);
    let base = ["saxpy.hsaco", "-k", "saxpy", "--grid", "1", "--block", "64"];
    let cases: Vec<Vec<&str>> = vec![
        vec!["--arg", "f32:1"],
        vec![
            "--arg", "f33:1", "--arg", "x.npy", "--arg", "x.npy", "--arg", "u32:4",
        ],
        vec![
            "--arg", "f32:abc", "--arg", "x.npy", "--arg", "x.npy", "--arg", "u32:4",
        ],
        vec![
            "--arg", "f32:1", "--arg", "out:f32", "--arg", "x.npy", "--arg", "u32:4",
        ],
        vec![
            "--arg", "f32:1", "--arg", "x.npy", "--arg", "x.npy", "--arg", "u8:300",
        ],
        vec![
            "--arg", "f32:1", "--arg", "x.npy", "--arg", "x.npy", "--arg", "u64:4",
        ],
        vec![
            "--arg", "x.npy", "--arg", "x.npy", "--arg", "x.npy", "--arg", "u32:4",
        ],
        vec![
            "--arg", "f32:1", "--arg", "u32:5", "--arg", "x.npy", "--arg", "u32:4",
        ],
        vec![
            "--arg",
            "f32:1",
            "--arg",
            "missing.npy",
            "--arg",
            "x.npy",
            "--arg",
            "u32:4",
        ],
    ];
    let mut all = String::new();
    for c in cases {
        let mut args = base.to_vec();
        args.extend(c);
        let s = snapshot_case(d, &args);
        assert!(s.contains("\nexit 2\n"), "{s}");
        all.push_str(&s);
        all.push('\n');
    }
    let grid = snapshot_case(
        d,
        &["saxpy.hsaco", "-k", "saxpy", "--grid", "0", "--block", "64"],
    );
    all.push_str(&grid);
    let mut args = vec![
        "saxpy.hsaco",
        "-k",
        "saxpy",
        "--grid",
        "1",
        "--block",
        "64,32",
    ];
    args.extend([
        "--arg", "f32:1", "--arg", "x.npy", "--arg", "x.npy", "--arg", "u32:4",
    ]);
    let block = snapshot_case(d, &args);
    all.push_str(&block);
    let kernel = snapshot_case(
        d,
        &["saxpy.hsaco", "-k", "nope", "--grid", "1", "--block", "64"],
    );
    all.push_str(&kernel);
    assert!(!d.join("out").exists());
    insta::assert_snapshot!("bad_arguments", all);
}

#[test]
fn malformed_objects_are_usage_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let saxpy = build(d, "saxpy", "gfx942");
    std::fs::write(d.join("text.hsaco"), "not an object\n").unwrap();
    let bytes = std::fs::read(&saxpy).unwrap();
    std::fs::write(d.join("cut.hsaco"), &bytes[..bytes.len() / 3]).unwrap();
    std::fs::write(d.join("empty.hsaco"), b"").unwrap();
    // The host's own ELF: not AMDGPU.
    std::fs::copy(env!("CARGO_BIN_EXE_gcn-patch"), d.join("host.elf")).unwrap();
    let mut all = String::new();
    for f in [
        "text.hsaco",
        "cut.hsaco",
        "empty.hsaco",
        "host.elf",
        "absent.hsaco",
    ] {
        let s = snapshot_case(
            d,
            &[
                f, "-k", "saxpy", "--grid", "1", "--block", "64", "--out", "o",
            ],
        );
        assert!(s.contains("\nexit 2\n"), "{s}");
        all.push_str(&s.replace(&d.display().to_string(), "[TMP]"));
    }
    assert!(!d.join("o").exists(), "nothing written on failure");
    insta::assert_snapshot!("malformed_objects", all);
}

#[test]
fn an_unsupported_instruction_is_an_error_naming_it_and_its_address() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "memtime", "gfx942");
    let s = snapshot_case(
        d,
        &[
            "memtime.hsaco",
            "-k",
            "memtime",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "out:u64:1",
            "--out",
            "o",
        ],
    );
    assert!(s.contains("\nexit 1\n"), "{s}");
    assert!(!d.join("o").exists(), "nothing written on failure");
    insta::assert_snapshot!("unsupported_instruction", s);
}

#[test]
fn an_endless_kernel_is_stopped_by_the_budget_with_its_loop() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "spin", "gfx942");
    Array::new("<u4", vec![0; 4])
        .write(&d.join("flag.npy"))
        .unwrap();
    let s = snapshot_case(
        d,
        &[
            "spin.hsaco",
            "-k",
            "spin",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "flag.npy",
            "--arg",
            "out:u32:1",
            "--max-instructions",
            "5000",
        ],
    );
    assert!(s.contains("\nexit 1\n"), "{s}");
    insta::assert_snapshot!("instruction_budget", s);
}

#[test]
fn a_fault_names_the_lane_and_the_nearest_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "saxpy", "gfx942");
    npy_f32(&d.join("x.npy"), &[1.0; 64]);
    // n = 100 but the buffers hold 64 elements: lane 0 of wave 1 reads past x.
    let s = snapshot_case(
        d,
        &[
            "saxpy.hsaco",
            "-k",
            "saxpy",
            "--grid",
            "1",
            "--block",
            "128",
            "--arg",
            "f32:1",
            "--arg",
            "x.npy",
            "--arg",
            "x.npy",
            "--arg",
            "u32:100",
        ],
    );
    assert!(s.contains("\nexit 1\n"), "{s}");
    insta::assert_snapshot!("fault", s);
}

const SAXPY_ARGS: [&str; 16] = [
    "saxpy.hsaco",
    "-k",
    "saxpy",
    "--grid",
    "2",
    "--block",
    "256",
    "--arg",
    "f32:2",
    "--arg",
    "x.npy",
    "--arg",
    "y.npy",
    "--arg",
    "u32:500",
    "--sanitize",
];

#[test]
fn sanitize_is_clean_on_saxpy_and_reports_a_loosened_wait_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy_f32(&d.join("x.npy"), &[1.0; 512]);
    npy_f32(&d.join("y.npy"), &[0.5; 512]);
    build(d, "saxpy", "gfx942");
    let o = gcn_patch(d, &SAXPY_ARGS);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ran clean"));
    // The wait for both loads loosened: the second load's v5 is read early.
    build_mutant(
        d,
        "saxpy",
        "gfx942",
        "s_waitcnt vmcnt(0)",
        "s_waitcnt vmcnt(1)",
    );
    let o = gcn_patch(d, &SAXPY_ARGS);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report = stderr(&o);
    assert_eq!(report, stderr(&gcn_patch(d, &SAXPY_ARGS)), "deterministic");
    insta::assert_snapshot!("sanitize_saxpy_vmcnt_loosened", report);
    // Without --asm each instruction names its line in the object's lift,
    // which `gcn-patch lift --no-verify` prints.
    let lifted = Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(["lift", "saxpy.hsaco", "--no-verify"])
        .current_dir(d)
        .output()
        .expect("run gcn-patch lift");
    assert!(lifted.status.success(), "{}", stderr(&lifted));
    let lifted = String::from_utf8_lossy(&lifted.stdout).into_owned();
    for t in ["v_fmac_f32_e32 v5, s2, v4", "s_waitcnt vmcnt(1)"] {
        let no = lifted
            .lines()
            .position(|l| l.trim().starts_with(t))
            .unwrap()
            + 1;
        let want = format!("(saxpy.hsaco (lifted):{no}: {t})");
        assert!(report.contains(&want), "{want} in {report}");
    }
    // With the asm it was assembled from, each instruction has its line.
    let mut with_asm = SAXPY_ARGS.to_vec();
    with_asm.extend(["--asm", "saxpy.s"]);
    let o = gcn_patch(d, &with_asm);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = std::fs::read_to_string(d.join("saxpy.s")).unwrap();
    let line = |t: &str| text.lines().position(|l| l.trim() == t).unwrap() + 1;
    for (t, what) in [
        ("v_fmac_f32_e32 v5, s2, v4", "the use"),
        ("global_load_dword v5, v[0:1], off", "the load"),
        ("s_waitcnt vmcnt(1)", "the wait"),
    ] {
        let want = format!("(saxpy.s:{}: {t})", line(t));
        assert!(
            stderr(&o).contains(&want),
            "{what} {want} in {}",
            stderr(&o)
        );
    }
    // An asm that is not the object's source is a usage error.
    std::fs::write(d.join("other.s"), "nothing:\n\ts_nop 0\n").unwrap();
    let mut bad = SAXPY_ARGS.to_vec();
    bad.extend(["--asm", "other.s"]);
    let o = gcn_patch(d, &bad);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--asm: no instruction of kernel `saxpy` matches `other.s`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sanitize_reports_a_removed_barrier_as_an_lds_race() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy_f32(&d.join("x.npy"), &[1.0; 512]);
    // The first barrier, after every wave stored its element.
    build_mutant(
        d,
        "reduce",
        "gfx942",
        "ds_write_b32 v1, v4\n\ts_barrier\n",
        "ds_write_b32 v1, v4\n",
    );
    let args = [
        "reduce.hsaco",
        "-k",
        "reduce",
        "--grid",
        "2",
        "--block",
        "256",
        "--arg",
        "x.npy",
        "--arg",
        "out:f32:2",
        "--arg",
        "u32:512",
        "--sanitize",
    ];
    let o = gcn_patch(d, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report = stderr(&o);
    // The second finding in one line: both instructions and the waves.
    assert!(
        report.contains("\nsanitizer: LDS race: `ds_write_b32 v1, v4` (reduce.hsaco (lifted):"),
        "{report}"
    );
    assert!(report.contains(", in 2 waves\n"), "{report}");
    // The removed barrier's race and uninitialized read (reported where
    // the value read reaches global memory), and the corpus dump's own LDS
    // write in flight at the next barrier.
    assert!(
        report.contains("found 3 problem(s): ")
            && report.contains("uninitialized LDS read ×1")
            && report.contains("\nsanitizer: uninitialized LDS read: `global_store_dword ")
            && report.contains("LDS race (store in flight at a barrier) ×1")
            && report.contains(", LDS race ×1")
            && report.contains("(the first in full"),
        "{report}"
    );
    // Unmutated: the corpus' reduce uses a bare s_barrier, its LDS writes
    // still in flight at it (no `s_waitcnt lgkmcnt(0)`): the `races` check
    // reports that; every other check finds it clean.
    build(d, "reduce", "gfx942");
    let o = gcn_patch(d, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("LDS race (store in flight at a barrier)"),
        "{}",
        stderr(&o)
    );
    let mut others = args.to_vec();
    let last = others.len() - 1;
    others[last] = "--sanitize=uninit,bounds,barriers,waits";
    let o = gcn_patch(d, &others);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A hand-edited object using a VGPR its descriptor does not allocate
/// (issue 33): clang-22's saxpy with `v_mov_b32_e32 v255, 0` added after
/// the compiler counted 6 VGPRs. An exit-2 error before anything runs,
/// naming the kernel, the instruction with its asm line, the register and
/// the limit; nothing written.
#[test]
fn a_register_past_the_descriptors_allocation_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_mutant(
        d,
        "saxpy",
        "gfx942",
        "s_waitcnt vmcnt(0)",
        "s_waitcnt vmcnt(0)\n\tv_mov_b32_e32 v255, 0",
    );
    npy_f32(&d.join("x.npy"), &[1.0; 64]);
    let s = snapshot_case(
        d,
        &[
            "saxpy.hsaco",
            "-k",
            "saxpy",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "f32:2",
            "--arg",
            "x.npy",
            "--arg",
            "x.npy",
            "--arg",
            "u32:64",
            "--asm",
            "saxpy.s",
            "--out",
            "o",
        ],
    );
    assert!(s.contains("\nexit 2\n"), "{s}");
    assert!(!d.join("o").exists(), "nothing written");
    insta::assert_snapshot!("register_past_allocation", s);
}

/// Hostile launches (issue 33): a descriptor asking for 4 GiB of scratch per
/// work-item, a grid of 2^96 workgroups, a `.npy` whose shape product wraps
/// in 64 bits, and buffers over the memory cap are exit-2 errors naming the
/// field and the limit, quickly, with nothing written; never an abort or a
/// run until killed.
#[test]
fn hostile_launches_are_usage_errors_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "saxpy.hsaco",
            "-k",
            "saxpy",
            "--block",
            "256",
            "--arg",
            "f32:2",
            "--out",
            "o",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let check = |extra: &[&str], wants: &[&str]| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let start = std::time::Instant::now();
        let o = gcn_patch(d, &a);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {e}");
        assert!(start.elapsed().as_secs() < 60, "{extra:?}: too slow");
        for w in wants {
            assert!(e.contains(w), "{extra:?}: `{w}` not in {e}");
        }
        assert!(!d.join("o").exists(), "{extra:?}: output written");
    };
    npy_f32(&d.join("x.npy"), &[1.0; 256]);
    build_mutant(
        d,
        "saxpy",
        "gfx942",
        ".amdhsa_private_segment_fixed_size 0",
        ".amdhsa_private_segment_fixed_size 4294967295",
    );
    let bufs = ["--arg", "x.npy", "--arg", "x.npy", "--arg", "u32:256"];
    let with = |grid: &str, more: &[&str]| {
        let mut v = vec!["--grid", grid];
        v.extend(bufs);
        v.extend(more);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let v = with("1", &[]);
    check(
        &v.iter().map(String::as_str).collect::<Vec<_>>(),
        &[
            ".amdhsa_private_segment_fixed_size 4294967295 × 64 lanes",
            "over the limit of 4294967296",
            "--max-memory",
        ],
    );
    build(d, "saxpy", "gfx942");
    // The largest grid a dispatch packet holds (2³² − 1 work-items a
    // dimension, 16777215 workgroups of 256) is over the work budget.
    let v = with("16777215,16777215,16777215", &[]);
    check(
        &v.iter().map(String::as_str).collect::<Vec<_>>(),
        &[
            "4722365638444765413375 workgroups × 4 waves",
            "over the limit of 1000000000",
            "--max-work",
        ],
    );
    // A larger one does not fit the packet at all.
    let v = with("4294967295,4294967295,4294967295", &[]);
    check(
        &v.iter().map(String::as_str).collect::<Vec<_>>(),
        &["1099511627520 work-items in x", "grid_size_x"],
    );
    let v = with("64", &["--max-work", "1000"]);
    check(
        &v.iter().map(String::as_str).collect::<Vec<_>>(),
        &["wave-instructions executed", "over the limit of 1000"],
    );
    let v = with("1", &["--max-memory", "1500"]);
    check(
        &v.iter().map(String::as_str).collect::<Vec<_>>(),
        &[
            "the buffers' bytes (1024 held + 1024",
            "over the limit of 1500",
        ],
    );
    // A shape of 2^62 × 4 f32 elements: 2^66 bytes, 0 in 64 bits.
    let mut h =
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }\n".to_vec();
    let mut f = b"\x93NUMPY\x01\x00".to_vec();
    f.extend((h.len() as u16).to_le_bytes());
    f.append(&mut h);
    std::fs::write(d.join("wrap.npy"), f).unwrap();
    let v: Vec<String> = [
        "--grid", "1", "--arg", "wrap.npy", "--arg", "x.npy", "--arg", "u32:1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    check(
        &v.iter().map(String::as_str).collect::<Vec<_>>(),
        &["wrap.npy", "needs 73786976294838206464"],
    );
}

#[test]
fn sanitize_shows_the_first_finding_in_full_and_one_line_for_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    npy_f32(&d.join("x.npy"), &[1.0; 512]);
    npy_f32(&d.join("y.npy"), &[0.5; 512]);
    // No wait for either load: both registers are read early.
    build_mutant(d, "saxpy", "gfx942", "s_waitcnt vmcnt(0)\n", "");
    let mut args = SAXPY_ARGS.to_vec();
    args.extend(["--asm", "saxpy.s"]);
    let o = gcn_patch(d, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report = stderr(&o);
    let lines: Vec<&str> = report.lines().collect();
    // The first in full (with its count of waves), the second in one line
    // naming both instructions' lines, the count by kind.
    assert_eq!(lines.len(), 4, "{report}");
    assert!(
        lines[0].contains("reads or writes v4 while the load"),
        "{report}"
    );
    let text = std::fs::read_to_string(d.join("saxpy.s")).unwrap();
    let line = |t: &str| text.lines().position(|l| l.trim() == t).unwrap() + 1;
    assert_eq!(
        lines[2],
        format!(
            "sanitizer: premature read: `v_fmac_f32_e32 v5, s2, v4` (saxpy.s:{}) with `global_load_dword v5, v[0:1], off` (saxpy.s:{}), in 8 waves",
            line("v_fmac_f32_e32 v5, s2, v4"),
            line("global_load_dword v5, v[0:1], off")
        )
    );
    assert!(lines[2].len() < lines[0].len() / 2, "{report}");
    insta::assert_snapshot!("sanitize_saxpy_no_wait", report);
}

/// `run OBJECT --list-unsupported` runs nothing: it names each mnemonic the
/// emulator lacks, with counts and the first instruction, and exits 0 only
/// when nothing is missing (aiter's fp4 GEMM needs the gfx950 scaled MFMA;
/// topksoftmax needs nothing more).
#[test]
fn list_unsupported_names_what_is_missing_and_exits_0_only_when_nothing_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let aiter = repo().join("tests/corpus/aiter");
    // The shader clock (`s_memtime`) is not emulated.
    let memtime = common::compile_hip(
        &repo().join("gcn-emu/tests/kernels/memtime.hip"),
        "gfx942",
        &d.join("memtime.hsaco"),
        &[],
    );
    let o = gcn_patch(d, &[memtime.to_str().unwrap(), "--list-unsupported"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("unsupported: s_memtime ×1 in kernel `memtime`")
            && lines[0].contains("; first at 0x")
            && lines[0].contains("`s_memtime s["),
        "{out}"
    );
    let count: usize = lines[0]
        .split('×')
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        lines[1].contains(&format!("{count} of ")) && lines[1].contains("1 mnemonic(s)"),
        "{out}"
    );
    // aiter's fp4 GEMM (gfx950's block-scaled MFMA, fp4 conversions) and
    // its topksoftmax: everything implemented, every probe fault-free.
    for obj in [
        "gfx950/f4gemm/f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128.co",
        "gfx942/topksoftmax/topksoftmax_4x128x6.co",
    ] {
        let o = gcn_patch(
            d,
            &[aiter.join(obj).to_str().unwrap(), "--list-unsupported"],
        );
        assert!(o.status.success(), "{obj}: {}{}", stdout(&o), stderr(&o));
        assert!(
            stdout(&o).contains("implements every instruction of 1 kernel(s)"),
            "{obj}: {}",
            stdout(&o)
        );
    }
    // gfx11 (RDNA3) is emulated: its instructions are probed under their
    // executor names, wave32 and wave64 alike.
    for k in ["lds_barrier", "wave64"] {
        let rdna = repo().join(format!("gcn-emu/tests/rdna/gfx1100/{k}.hsaco"));
        let o = gcn_patch(d, &[rdna.to_str().unwrap(), "--list-unsupported"]);
        assert!(o.status.success(), "{k}: {}{}", stdout(&o), stderr(&o));
        assert!(
            stdout(&o).contains("implements every instruction of 1 kernel(s)"),
            "{k}: {}",
            stdout(&o)
        );
    }
    // A target the emulator does not run is refused, not listed: a list of
    // the few spellings the CDNA probe accepts would read as if the rest ran.
    let gfx10 = build(d, "saxpy", "gfx1030");
    let o = gcn_patch(d, &[gfx10.to_str().unwrap(), "--list-unsupported"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("target `gfx1030` is not emulated") && stderr(&o).contains("gfx942"),
        "{}",
        stderr(&o)
    );
    let top = aiter.join("gfx942/topksoftmax/topksoftmax_4x128x6.co");
    // It runs nothing: launch options are refused beside it.
    let o = gcn_patch(
        d,
        &[top.to_str().unwrap(), "--list-unsupported", "--grid", "1"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Every RDNA corpus object the emulator runs (gcn-emu/tests/rdna's HIP
/// and Triton objects for gfx1100 and gfx1201, and IREE's for both):
/// `--list-unsupported` finds nothing missing and exits 0. The probe takes
/// each kernel's RDNA names and wave size as a launch does (gfx1201's
/// wave64 `wmma_w64` once listed its `global_load_b32` as missing).
#[test]
fn list_unsupported_finds_nothing_missing_in_the_rdna_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let mut objects: Vec<PathBuf> = Vec::new();
    for target in ["gfx1100", "gfx1201"] {
        for d in [
            repo().join("gcn-emu/tests/rdna").join(target),
            repo().join("tests/corpus/iree").join(target),
        ] {
            for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "hsaco") {
                    objects.push(p);
                }
            }
        }
    }
    objects.sort();
    // 10 HIP and Triton objects and 3 IREE ones a target.
    assert!(objects.len() >= 26, "{objects:?}");
    for obj in &objects {
        let o = gcn_patch(dir.path(), &[obj.to_str().unwrap(), "--list-unsupported"]);
        assert!(
            o.status.success(),
            "{}: {}{}",
            obj.display(),
            stdout(&o),
            stderr(&o)
        );
        assert!(
            stdout(&o).contains("implements every instruction of"),
            "{}: {}",
            obj.display(),
            stdout(&o)
        );
    }
}

/// `--grid`/`--block` are read by the launch model's parser
/// (`gcn_emu::launch::Dims`), the one `kernels.toml` launches use: a
/// dimension past 32 bits is named as such (gcn-patch's own parser called
/// 4294967296 "not a positive integer").
#[test]
fn grid_and_block_are_read_by_the_launch_models_parser() {
    use gcn_patch::base::diag::Setting;
    use gcn_patch::ops::run::parse_dims;
    assert_eq!(parse_dims(Setting::Grid, "4").unwrap(), [4, 1, 1]);
    assert_eq!(parse_dims(Setting::Block, "64, 2").unwrap(), [64, 2, 1]);
    for (text, says) in [
        (
            "4294967296",
            "dimension 4294967296 is not a positive 32-bit integer",
        ),
        ("0,1", "dimension 0 is not a positive 32-bit integer"),
        ("1,x", "`x` is not a positive integer"),
        ("1,1,1,1", "expected X[,Y[,Z]]"),
    ] {
        let e = parse_dims(Setting::Grid, text).unwrap_err();
        let toml = gcn_emu::launch::Dims::parse(text).unwrap_err();
        assert!(e.0[0].message.contains(says), "{text}: {}", e.0[0].message);
        assert_eq!(e.0[0].message, toml, "{text}");
    }
}

/// `--slice N` ([`gcn_emu::dispatch::Launch::slice`]): clang-22's
/// `interleave.hip` kernels, whose results depend on how a workgroup's four
/// waves interleave between barriers. In turn (the default), a lost update
/// counts every wave and a hand-off never ends; one instruction at a time,
/// every wave reads the counter before any writes it, and the waiting wave
/// sees the flag.
#[test]
fn slice_interleaves_the_waves_of_a_workgroup() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "interleave", "gfx942");
    let u32s = |p: &Path| -> Vec<u32> {
        Array::read(p)
            .unwrap()
            .data
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let lost = |slice: &str| {
        let out = format!("lost{slice}");
        let mut args = vec![
            "interleave.hsaco",
            "-k",
            "lost_update",
            "--grid",
            "1",
            "--block",
            "256",
            "--arg",
            "out:u32:1",
            "--out",
            &out,
        ];
        if !slice.is_empty() {
            args.extend(["--slice", slice]);
        }
        let o = gcn_patch(d, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        u32s(&d.join(&out).join("arg0.npy"))[0]
    };
    assert_eq!(lost(""), 4, "in turn: every wave's update counts");
    assert_eq!(lost("0"), 4);
    assert_eq!(lost("1"), 1, "interleaved: three updates lost");
    assert_eq!(lost("2"), 1);
    let handoff = |slice: &str| {
        gcn_patch(
            d,
            &[
                "interleave.hsaco",
                "-k",
                "handoff",
                "--grid",
                "1",
                "--block",
                "256",
                "--arg",
                "out:u32:1",
                "--arg",
                "out:u32:1",
                "--max-instructions",
                "20000",
                "--slice",
                slice,
                "--out",
                "handoff",
            ],
        )
    };
    let o = handoff("0");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("instruction budget"), "{}", stderr(&o));
    let o = handoff("1");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(u32s(&d.join("handoff/arg0.npy"))[0], 1, "wave 1 set it");
    assert!(u32s(&d.join("handoff/arg1.npy"))[0] < 20000, "spun a while");
    // A seeded schedule slices on its own: both is a usage error.
    let o = gcn_patch(
        d,
        &[
            "interleave.hsaco",
            "-k",
            "lost_update",
            "--grid",
            "1",
            "--block",
            "256",
            "--arg",
            "out:u32:1",
            "--slice",
            "1",
            "--seed",
            "3",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("'--slice <N>' cannot be used with '--seed <SEED>'"));
}

/// `--cluster`: gcn-emu's cluster barrier exchange kernel (its workgroups
/// of a 4-workgroup cluster swap phase-tagged values through global
/// memory at `__builtin_amdgcn_s_cluster_barrier`) runs with its
/// `.cluster_dims` by default and with `--cluster 4` (every workgroup
/// reads its peers' values of each round); `--cluster 1` is refused at the
/// cluster barrier and `--cluster 3` before the run, each naming how to
/// launch it.
#[test]
fn run_launches_a_gfx1250_workgroup_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let co = build(d, "gfx1250_cluster", "gfx1250");
    let co = co.to_str().unwrap();
    let rounds = 3u32;
    let run = |extra: &[&str], out: &str| {
        let mut args = vec![
            co,
            "-k",
            "exchange",
            "--grid",
            "8",
            "--block",
            "64",
            "--arg",
            "out:u32:32",
            "--arg",
            "out:u32:384",
            "--arg",
            "u32:3",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        gcn_patch(d, &args)
    };
    for (extra, out) in [(&[][..], "a"), (&["--cluster", "4,1,1"][..], "b")] {
        let o = run(extra, out);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let got = Array::read(&d.join(out).join("arg1.npy")).unwrap().data;
        let got: Vec<u32> = got
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for wg in 0..8u32 {
            for r in 0..rounds {
                for t in 0..4u32 {
                    let i = ((wg * rounds + r) * 4 + t) as usize;
                    assert_eq!(
                        got[i],
                        (r + 1) << 8 | t,
                        "{extra:?}: wg {wg} round {r} peer {t}"
                    );
                }
            }
        }
    }
    let o = run(&["--cluster", "1"], "c");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("without workgroup clusters") && e.contains("--cluster"),
        "{e}"
    );
    let o = run(&["--cluster", "3"], "d");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("not whole clusters"), "{e}");
}
