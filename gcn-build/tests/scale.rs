//! A library's worth of kernels through gcn-build, the suite's stand-in for
//! embedding all of aiter (`tests/corpus/aiter-embed.sh` does that, opt-in):
//! thousands of kernels in one manifest, each from its own asm file, named as
//! libraries name them (long shared prefixes, digits, mixed case).
//!
//! * the generated Rust compiles (rustc, `-D warnings`) into a program that
//!   finds every kernel by name (`KERNELS.by_name`), with its targets, in
//!   manifest order, verifies every embedded object's bytes against its
//!   sha256, and finds no other name;
//! * a second build assembles nothing and leaves the generated file alone;
//!   its plan reads no source and every job takes its record (job
//!   fingerprints).
//!
//! The asm files hold one of four real HIP dumps each (saxpy and reduce,
//! built for gfx1100 and for gfx11-generic), so the first build runs the
//! assembler only a few times: code objects are cached by content, and the
//! cache (not the assembler) is what thousands of jobs at once exercise here.
//! Everything else — manifest, plan, jobs, one `.hsaco` and one
//! `include_bytes!` per kernel × target, the generated file — has the size of
//! the whole library.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gcn_build::Build;

#[path = "../../tests/support/mod.rs"]
mod support;
use support::{repo, run_bounded};

/// Kernels in the generated project.
const KERNELS: usize = 2000;

/// One kernel of the project: its name and the targets it is built for.
struct Spec {
    name: String,
    targets: Vec<&'static str>,
}

/// Names the way libraries spell them: aiter's and Tensile's differ late in
/// long names; some are short, some mixed case.
fn name(i: usize) -> String {
    match i % 5 {
        0 => format!("fmha_fwd_hd128_bf16_causal_{i}"),
        1 => format!("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_{i:05}"),
        2 => format!("_ZN5aiter{}fused_moe_{i}E", i % 7),
        3 => format!("k{i}"),
        _ => format!(
            "bf16gemm_fp32bf16_tn_{}x{}_pf3_{i}",
            64 << (i % 3),
            32 << (i % 4)
        ),
    }
}

/// Write the project into `dir`: `asm/<name>.s` per kernel and `kernels.toml`.
fn project(dir: &Path) -> (PathBuf, Vec<Spec>) {
    fs::create_dir_all(dir.join("asm")).unwrap();
    let dumps: Vec<(Vec<u8>, &'static str)> = [
        ("gfx1100", "saxpy"),
        ("gfx1100", "reduce"),
        ("gfx11-generic", "saxpy"),
        ("gfx11-generic", "reduce"),
    ]
    .iter()
    .map(|(dir, k)| {
        let text = fs::read(repo().join(format!("tests/corpus/hip/{dir}/{k}.s"))).unwrap();
        (text, *dir)
    })
    .collect();
    let mut manifest = String::from("[defaults]\nregisters = \"error\"\n");
    let mut specs = Vec::new();
    for i in 0..KERNELS {
        let name = name(i);
        let (text, built_for) = &dumps[i % dumps.len()];
        // Every seventh generic dump is built for two targets.
        let targets = if *built_for == "gfx11-generic" && i % 7 == 0 {
            vec!["gfx1100", "gfx11-generic"]
        } else {
            vec![*built_for]
        };
        fs::write(dir.join(format!("asm/{name}.s")), text).unwrap();
        let list: Vec<String> = targets.iter().map(|t| format!("{t:?}")).collect();
        manifest.push_str(&format!(
            "\n[[kernel]]\nname = \"{name}\"\n\n[[kernel.source]]\nasm = \"asm/{name}.s\"\ntargets = [{}]\n",
            list.join(", ")
        ));
        specs.push(Spec { name, targets });
    }
    let path = dir.join("kernels.toml");
    fs::write(&path, manifest).unwrap();
    (path, specs)
}

fn build(manifest: &Path, out: &Path) -> gcn_build::Output {
    Build::new()
        .manifest(manifest)
        .out_dir(out)
        .cargo_metadata(false)
        .jobs(2)
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The rustc of the toolchain running the tests (next to its cargo).
fn rustc() -> PathBuf {
    let beside_cargo = Path::new(env!("CARGO")).with_file_name("rustc");
    if beside_cargo.is_file() {
        beside_cargo
    } else {
        PathBuf::from("rustc")
    }
}

/// Run rustc with `args` (and `OUT_DIR`), failing with its output.
fn compile(args: &[&str], out_dir: &Path, what: &str) -> Duration {
    let start = Instant::now();
    let mut cmd = Command::new(rustc());
    cmd.args(args).env("OUT_DIR", out_dir);
    let out = run_bounded(cmd, Duration::from_secs(600), what);
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed()
}

/// The program that includes the generated file and checks every kernel
/// listed in its first argument (`name target,target` per line, manifest order).
const PROGRAM: &str = r#"
gcn_embed::include_kernels!();

fn main() {
    let path = std::env::args().nth(1).expect("the list of kernels");
    let expected = std::fs::read_to_string(path).expect("read the list");
    let names: std::collections::HashSet<&str> =
        expected.lines().filter_map(|l| l.split(' ').next()).collect();
    let mut n = 0;
    for line in expected.lines() {
        let (name, targets) = line.split_once(' ').expect("name and targets");
        let k = KERNELS
            .by_name(name)
            .unwrap_or_else(|| panic!("kernel `{name}` is not found by name"));
        assert_eq!(k.name, name);
        assert_eq!(KERNELS[n].name, name, "manifest order");
        let have: Vec<&str> = k.objects().map(|o| o.target).collect();
        assert_eq!(have.join(","), targets, "targets of `{name}`");
        for o in k.objects() {
            o.verify().unwrap_or_else(|e| panic!("`{name}` {}: {e}", o.target));
        }
        for miss in [format!("{name}_"), name[..name.len() - 1].to_string(), name.to_uppercase()] {
            if !names.contains(miss.as_str()) {
                assert!(KERNELS.by_name(&miss).is_none(), "`{miss}` found");
            }
        }
        n += 1;
    }
    assert_eq!(KERNELS.len(), n);
    KERNELS.check().expect("a well-formed table");
    println!("{n} kernels found by name");
}
"#;

#[test]
fn thousands_of_kernels_embed_compile_and_are_found_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (manifest, specs) = project(&dir.path().join("project"));
    let out = dir.path().join("out");
    let jobs: usize = specs.iter().map(|s| s.targets.len()).sum();

    let start = Instant::now();
    let first = build(&manifest, &out);
    let first_time = start.elapsed();
    assert_eq!(first.objects.len(), jobs);
    let text = fs::read_to_string(&first.generated).unwrap();
    assert_eq!(text.matches("include_bytes!").count(), jobs);

    // The generated file compiles, warning-free, against gcn-embed.
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let embed_src = repo().join("gcn-embed/src/lib.rs");
    let bin_s = bin.to_str().unwrap();
    compile(
        &[
            "--edition=2021",
            "--crate-type=rlib",
            "--crate-name=gcn_embed",
            embed_src.to_str().unwrap(),
            "--out-dir",
            bin_s,
        ],
        &out,
        "rustc of gcn-embed",
    );
    let main = bin.join("main.rs");
    fs::write(&main, PROGRAM).unwrap();
    let extern_embed = format!("gcn_embed={}", bin.join("libgcn_embed.rlib").display());
    let program = bin.join("kernels");
    let rustc_time = compile(
        &[
            "--edition=2021",
            "-Dwarnings",
            "--extern",
            &extern_embed,
            main.to_str().unwrap(),
            "-o",
            program.to_str().unwrap(),
        ],
        &out,
        "rustc of the generated file",
    );

    // Every kernel is found by name, with its targets and intact bytes.
    let list: String = specs
        .iter()
        .map(|s| format!("{} {}\n", s.name, s.targets.join(",")))
        .collect();
    fs::write(bin.join("kernels.txt"), list).unwrap();
    let mut cmd = Command::new(&program);
    cmd.arg(bin.join("kernels.txt"));
    let start = Instant::now();
    let ran = run_bounded(cmd, Duration::from_secs(120), "the program");
    let run_time = start.elapsed();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        format!("{KERNELS} kernels found by name\n")
    );

    // A second build assembles nothing and rewrites nothing.
    let stamp = fs::metadata(&first.generated).unwrap().modified().unwrap();
    let start = Instant::now();
    let second = build(&manifest, &out);
    let second_time = start.elapsed();
    assert_eq!(second.assembled(), 0);
    assert_eq!(second.objects.len(), jobs);
    // Job fingerprints: no source read by the plan, every job from its record.
    assert_eq!(second.fingerprints.sources_read, 0);
    assert_eq!(second.fingerprints.reused, jobs);
    assert_eq!(
        fs::metadata(&second.generated).unwrap().modified().unwrap(),
        stamp,
        "the unchanged generated file was rewritten"
    );
    // Figures for the reader (tests never depend on speed).
    eprintln!(
        "{KERNELS} kernels, {jobs} jobs: first build {first_time:.1?} ({} assembled), \
         rustc of the generated file ({} bytes) {rustc_time:.1?}, lookups {run_time:.1?}, \
         second build {second_time:.1?}",
        first.assembled(),
        text.len()
    );
}

/// A project of `n` kernels whose dump declares `.amdhsa_reserve_vcc 0`
/// but uses vcc: every job has an inherited register finding, a note (as
/// every imported aiter kernel with a quirk of its own has).
fn noted_project(dir: &Path, n: usize) -> PathBuf {
    fs::create_dir_all(dir.join("asm")).unwrap();
    let text = fs::read_to_string(repo().join("tests/corpus/hip/gfx1100/saxpy.s"))
        .unwrap()
        .replace(".amdhsa_reserve_vcc 1", ".amdhsa_reserve_vcc 0");
    let mut manifest = String::new();
    for i in 0..n {
        fs::write(dir.join(format!("asm/k{i}.s")), &text).unwrap();
        manifest.push_str(&format!(
            "[[kernel]]\nname = \"k{i}\"\n\n[[kernel.source]]\nasm = \"asm/k{i}.s\"\ntargets = [\"gfx1100\"]\n\n"
        ));
    }
    fs::write(dir.join("kernels.toml"), manifest).unwrap();
    dir.join("kernels.toml")
}

/// Run by `many_notes_print_few_cargo_warnings`, in its own process: a
/// build with `cargo:` output on, as in a build script.
#[test]
#[ignore = "the child process of many_notes_print_few_cargo_warnings, which runs it"]
fn many_notes_child() {
    let dir = std::env::var_os("GCN_BUILD_TEST_NOTES_DIR")
        .map(PathBuf::from)
        .expect("run by many_notes_print_few_cargo_warnings (GCN_BUILD_TEST_NOTES_DIR)");
    let manifest = noted_project(&dir, 40);
    Build::new()
        .manifest(&manifest)
        .out_dir(dir.join("out"))
        .jobs(2)
        .cargo_metadata(true)
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Cargo shows a build script's `cargo:warning` lines on every build,
/// also when it does not rerun the script: all of aiter printed 54,926
/// of them on each no-op `cargo build`. At most `WARNED_NOTES` notes are
/// warnings; one more line counts the rest and names the file with all.
#[test]
fn many_notes_print_few_cargo_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "many_notes_child", "--ignored", "--nocapture"])
        .env("GCN_BUILD_TEST_NOTES_DIR", dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let warnings: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("cargo:warning="))
        .collect();
    let headline = |l: &str| l.starts_with("warning[") || l.starts_with("note[");
    let shown = warnings.iter().filter(|l| headline(l)).count();
    assert_eq!(shown, gcn_build::WARNED_NOTES, "{warnings:#?}");
    let notes_file = dir.path().join("out/gcn-build").join(gcn_build::NOTES_FILE);
    assert_eq!(
        warnings.last().copied(),
        Some(
            format!(
                "gcn-build: 30 more note(s) not shown (40 in all); every note is in {}",
                notes_file.display()
            )
            .as_str()
        )
    );
    let all = fs::read_to_string(&notes_file).unwrap();
    let in_file = all.lines().filter(|l| headline(l)).count();
    assert_eq!(in_file, 40, "{all}");
    assert!(all.contains("kernel `k39`"), "{all}");
}
