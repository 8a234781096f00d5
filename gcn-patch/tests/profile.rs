//! `gcn-patch profile` end to end: a HIP kernel compiled with the real
//! clang-22 whose LDS bank conflicts are known by construction, the
//! terminal report (snapshot), the `--json` schema, an inserted stall, and
//! bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::repo;

fn gcn_patch(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .arg("profile")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run gcn-patch")
}

fn build(dir: &Path, name: &str, target: &str) -> PathBuf {
    let src = repo()
        .join("gcn-emu/tests/kernels")
        .join(format!("{name}.hip"));
    common::compile_hip(&src, target, &dir.join(format!("{name}.hsaco")), &[])
}

/// stdout and stderr with the temporary directory's path as `[DIR]`.
fn shown(dir: &Path, o: &Output) -> String {
    let d = dir.display().to_string();
    format!(
        "{}{}exit {}\n",
        String::from_utf8_lossy(&o.stdout).replace(&d, "[DIR]"),
        String::from_utf8_lossy(&o.stderr).replace(&d, "[DIR]"),
        o.status.code().unwrap_or(-1)
    )
}

#[test]
fn profile_reports_counts_stalls_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    build(d, "lds_stride", "gfx942");
    let o = gcn_patch(
        d,
        &[
            "lds_stride.hsaco",
            "--kernel",
            "stride_b32",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "out:u32:64",
            "--arg",
            "u32:32",
            "--device",
            "mi300x",
            "--json",
            "p.json",
        ],
    );
    let s = shown(d, &o);
    assert!(o.status.success(), "{s}");
    insta::assert_snapshot!("stride_b32_mi300x", s);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["device"], "mi300x");
    assert!(j["predicted_us"].as_f64().unwrap() > 0.0);
    assert!(j["cycles"].as_u64().unwrap() > 0);
    let ins = j["instructions"].as_array().unwrap();
    for l in ins {
        for key in [
            "address",
            "text",
            "executed",
            "stall_cycles",
            "lds_bank_conflicts",
            "cache_lines",
        ] {
            assert!(l.get(key).is_some(), "{key} missing in {l}");
        }
    }
    // Stride 32 dwords on 32 banks: all 32 lanes of a phase in one bank,
    // 2 phases of 32 cycles: 62 conflict cycles, for the write and the read.
    for m in ["ds_write_b32", "ds_read_b32"] {
        let l = ins
            .iter()
            .find(|l| l["text"].as_str().unwrap().starts_with(m))
            .unwrap();
        assert_eq!(l["lds_bank_conflicts"], 62, "{m}");
        assert_eq!(l["executed"], 1, "{m}");
    }
    let store = ins
        .iter()
        .find(|l| l["text"].as_str().unwrap().starts_with("global_store"))
        .unwrap();
    assert_eq!(store["cache_lines"]["lines64"], 4);
    assert_eq!(store["cache_lines"]["lines128"], 2);
}

fn predicted(d: &Path, n: u32) -> f64 {
    let o = gcn_patch(
        d,
        &[
            "lds_stride.hsaco",
            "--kernel",
            "nops",
            "--grid",
            "2048",
            "--block",
            "256",
            "--arg",
            "out:f32:524288",
            "--arg",
            "out:f32:524288",
            "--arg",
            &format!("u32:{n}"),
            "--device",
            "mi300x",
            "--json",
            "n.json",
        ],
    );
    assert!(o.status.success(), "{}", shown(d, &o));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("n.json")).unwrap()).unwrap();
    assert_eq!(j["workgroups"], 2048);
    j["predicted_us"].as_f64().unwrap()
}

#[test]
fn inserted_nops_predict_a_longer_time() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    build(d, "lds_stride", "gfx942");
    let (none, some) = (predicted(d, 0), predicted(d, 8));
    assert!(some > none, "8 groups of nops: {some} µs vs {none} µs");
}

#[test]
fn profile_bad_input_says_what_and_how() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    build(d, "lds_stride", "gfx942");
    let base = [
        "lds_stride.hsaco",
        "--kernel",
        "stride_b32",
        "--grid",
        "1",
        "--block",
        "64",
        "--arg",
        "out:u32:64",
        "--arg",
        "u32:1",
        "--device",
    ];
    let mut all = String::new();
    for device in ["h100", "mi355x"] {
        let mut args = base.to_vec();
        args.push(device);
        let o = gcn_patch(d, &args);
        assert_eq!(o.status.code(), Some(2), "{}", shown(d, &o));
        all += &format!("$ profile … --device {device}\n{}", shown(d, &o));
    }
    insta::assert_snapshot!("bad_device", all);
}

/// The demo's matmul patch (coarser waits in the main loop), its declared
/// launch profiled unpatched and patched.
#[test]
fn profile_of_a_manifest_kernel_compares_unpatched_and_patched() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("m.json");
    let o = Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args([
            "profile", "matmul", "--device", "mi300x", "-t", "gfx942", "--json",
        ])
        .arg(&json)
        .current_dir(repo())
        .output()
        .unwrap();
    let s = shown(tmp.path(), &o);
    assert!(o.status.success(), "{s}");
    assert!(
        s.contains("unpatched") && s.contains("stall cycles that moved"),
        "{s}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = j.as_array().unwrap();
    assert_eq!(rows.len(), 1, "one target, one launch");
    let (a, b) = (&rows[0]["unpatched"], &rows[0]["patched"]);
    // The same launch: the same counts of MFMA work, different schedules.
    assert_eq!(a["totals"]["flops"], b["totals"]["flops"]);
    assert!(a["totals"]["flops"].as_u64().unwrap() > 0);
    // The patch deletes three waits of the main loop.
    assert!(
        b["totals"]["waits"].as_u64().unwrap() < a["totals"]["waits"].as_u64().unwrap(),
        "{} vs {}",
        b["totals"]["waits"],
        a["totals"]["waits"]
    );
    assert_ne!(a["cycles"], b["cycles"]);
}

/// A kernel the emulator cannot run: the profile says which instruction,
/// exit 1 (as `run`).
#[test]
fn profile_of_an_unsupported_instruction_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    build(d, "memtime", "gfx942");
    let o = gcn_patch(
        d,
        &[
            "memtime.hsaco",
            "--kernel",
            "memtime",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "out:u64:1",
            "--device",
            "mi300x",
        ],
    );
    let s = shown(d, &o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(s.contains("s_memtime"), "{s}");
}

/// Bad input of every kind: each says what, where and how to fix, exit 2,
/// before anything runs.
#[test]
fn profile_bad_input_cases_say_what_and_how() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    build(d, "lds_stride", "gfx942");
    common::compile_hip(
        &repo().join("gcn-emu/tests/kernels/lds_stride.hip"),
        "gfx90a",
        &d.join("lds_stride_gfx90a.hsaco"),
        &[],
    );
    std::fs::write(d.join("junk.hsaco"), "not an object\n").unwrap();
    let launch = |object: &'static str, kernel: &'static str, grid: &'static str| {
        vec![
            object,
            "--kernel",
            kernel,
            "--grid",
            grid,
            "--block",
            "64",
            "--arg",
            "out:u32:64",
            "--arg",
            "u32:1",
        ]
    };
    let with = |mut v: Vec<&'static str>, more: &[&'static str]| {
        v.extend_from_slice(more);
        v
    };
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("no --device", launch("lds_stride.hsaco", "stride_b32", "1")),
        (
            "an object no device of the table runs",
            with(
                launch("lds_stride_gfx90a.hsaco", "stride_b32", "1"),
                &["--device", "mi300x"],
            ),
        ),
        (
            "a missing object",
            with(
                launch("missing.hsaco", "stride_b32", "1"),
                &["--device", "mi300x"],
            ),
        ),
        (
            "not a code object",
            with(
                launch("junk.hsaco", "stride_b32", "1"),
                &["--device", "mi300x"],
            ),
        ),
        (
            "an unknown kernel",
            with(
                launch("lds_stride.hsaco", "stride_b31", "1"),
                &["--device", "mi300x"],
            ),
        ),
        (
            "an empty grid",
            with(
                launch("lds_stride.hsaco", "stride_b32", "0"),
                &["--device", "mi300x"],
            ),
        ),
        (
            "a grid the dispatch packet cannot hold",
            with(
                launch("lds_stride.hsaco", "stride_b32", "67108864"),
                &["--device", "mi300x"],
            ),
        ),
        (
            "a bad argument",
            with(
                launch("lds_stride.hsaco", "stride_b32", "1"),
                &["--device", "mi300x", "--arg", "u33:1"],
            ),
        ),
    ];
    let mut all = String::new();
    for (what, args) in cases {
        let o = gcn_patch(d, &args);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", shown(d, &o));
        all += &format!("$ profile: {what}\n{}", shown(d, &o));
    }
    insta::assert_snapshot!("bad_input", all);
}

/// A grid of 2⁵⁸ workgroups (as many work-items in x and y as a dispatch
/// packet holds): the profile emulates one CU's round of it, at once, times
/// the grid in rounds, and says so.
#[test]
fn profile_of_a_huge_grid_samples_one_round() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    build(d, "lds_stride", "gfx942");
    let start = std::time::Instant::now();
    // 2²⁶ − 1 workgroups of 64 work-items in x, 2³² − 1 of 1 in y: 2⁵⁸ workgroups.
    let o = gcn_patch(
        d,
        &[
            "lds_stride.hsaco",
            "--kernel",
            "stride_b32",
            "--grid",
            "67108863,4294967295",
            "--block",
            "64",
            "--arg",
            "out:u32:64",
            "--arg",
            "u32:1",
            "--device",
            "mi300x",
            "--json",
            "h.json",
        ],
    );
    let s = shown(d, &o);
    assert!(o.status.success(), "{s}");
    assert!(start.elapsed().as_secs() < 30, "not sampled: {s}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("h.json")).unwrap()).unwrap();
    let workgroups = 67108863u64 * 4294967295;
    assert_eq!(j["workgroups"], workgroups, "{s}");
    let sampled = j["sampled"].as_u64().unwrap();
    assert_eq!(sampled, j["resident_workgroups"].as_u64().unwrap(), "{s}");
    assert!(
        s.contains(&format!(
            "sampled: {sampled} of {workgroups} workgroup(s) emulated"
        )),
        "{s}"
    );
    // The whole grid's rounds, each of the round's cycles.
    let rounds = workgroups / (sampled * 304);
    let (cycles, round) = (
        j["cycles"].as_u64().unwrap(),
        j["cycles_per_round"].as_u64().unwrap(),
    );
    assert!(
        cycles >= rounds * round && cycles <= (rounds + 1) * round,
        "{rounds} rounds of {round} cycles: {cycles}"
    );
}

/// A kernel that executes instructions the timing model has no rule of its
/// own for: the report's notes name each, with how it was timed.
#[test]
fn profile_notes_name_what_the_model_approximates() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    build(d, "untimed", "gfx942");
    let o = gcn_patch(
        d,
        &[
            "untimed.hsaco",
            "--kernel",
            "untimed",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "out:u32:4",
            "--device",
            "mi300x",
            "--json",
            "u.json",
        ],
    );
    let s = shown(d, &o);
    assert!(o.status.success(), "{s}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("u.json")).unwrap()).unwrap();
    let notes: Vec<&str> = j["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for (mnemonic, how) in [
        ("s_setprio", "priorities are not modelled"),
        ("s_icache_inv", "no timing rule"),
        ("global_atomic_add", "atomic units are not modelled"),
    ] {
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with(&format!("{mnemonic}:")) && n.contains(how)),
            "{mnemonic}: no note `{how}` in {notes:#?}"
        );
        assert!(s.contains(mnemonic), "{s}");
    }
    // The kernel ran: 64 lanes added 1 to out[lane % 4].
    let executed = j["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["text"].as_str().unwrap().starts_with("global_atomic_add"))
        .unwrap()["active_lanes"]
        .as_u64()
        .unwrap();
    assert_eq!(executed, 64);
}

/// An MFMA whose cycles by the device's peak rate differ from LLVM's pass
/// count (gfx950 runs the gfx942-era `v_mfma_f32_32x32x8_f16`; the
/// rate is of gfx950's double-rate shapes) is named in the notes; on
/// gfx942 the two agree and there is no such note.
#[test]
fn profile_notes_name_mfmas_whose_rate_differs_from_llvm() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut seen = Vec::new();
    for (target, device) in [("gfx942", "mi300x"), ("gfx950", "mi355x")] {
        let src = repo().join("gcn-emu/tests/kernels/chase.hip");
        let co = format!("chase-{target}.hsaco");
        common::compile_hip(&src, target, &d.join(&co), &[]);
        let o = gcn_patch(
            d,
            &[
                &co,
                "--kernel",
                "mfma_dependent",
                "--grid",
                "1",
                "--block",
                "64",
                "--arg",
                "out:f32:64",
                "--arg",
                "out:u8:2560",
                "--device",
                device,
            ],
        );
        let s = shown(d, &o);
        assert!(o.status.success(), "{s}");
        let note = s
            .lines()
            .find(|l| l.contains("MFMAs timed by the device's peak rate"))
            .map(str::to_string);
        seen.push((target, note, s));
    }
    let (_, none, s) = &seen[0];
    assert!(none.is_none(), "gfx942: {s}");
    let (_, some, s) = &seen[1];
    assert!(
        some.as_deref()
            .is_some_and(|n| n.contains("v_mfma_f32_32x32x8_f16 (") && n.contains("LLVM")),
        "gfx950: {s}"
    );
}
