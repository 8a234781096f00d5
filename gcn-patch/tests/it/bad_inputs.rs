//! One table of bad inputs, each driven through the CLI (`gcn-patch check`,
//! which assembles, the pipeline gcn-build runs, or `gcn-patch build --out`) with
//! its exact diagnostic as an insta snapshot: every bad input the robustness
//! issue lists is a row here, also those that other tests cover in more depth
//! (the toolchain search in `toolchain.rs`, unwritable `-o` paths in
//! `robust_cli.rs`, hung and killed tools in `tool_bounds.rs`, killed and
//! concurrent `build`s of four kernels in `tuner.rs`).
//!
//! Real clang-22 / ld.lld-22 wherever a toolchain is involved; a fake `clang`
//! script (through `GCN_PATCH_LLVM_BIN`, the documented toolchain setting)
//! only where the toolchain itself is the bad input: too old, crashing on its
//! version probe, crashing or hanging while assembling (the fake hands every
//! other run to the real clang). Every row must exit with its status (1, or 0
//! for the inputs that must work, like CRLF) without a panic.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus(rel: &str) -> String {
    let p = repo().join("tests/corpus").join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn saxpy() -> String {
    corpus("hip/gfx942/saxpy.s")
}

fn manifest(asm: &str, extra: &str) -> String {
    format!(
        "[[kernel]]\nname = \"saxpy\"\n[[kernel.source]]\nasm = \"{asm}\"\ntargets = [\"gfx942\"]\n{extra}"
    )
}

/// The real clang and ld.lld (what the fake toolchains hand real work to).
fn real_tools() -> (PathBuf, PathBuf) {
    let tc = gcn_patch::stage::toolchain::Toolchain::find(&Default::default(), &|v| {
        std::env::var(v).ok()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    (tc.clang, tc.lld)
}

const DIFF: &str = "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -14,1 +14,1 @@\n-\ts_and_saveexec_b64 s[2:3], vcc\n+\ts_and_saveexec_b64 s[2:3], vcc ; edited\n";

/// The toolchain a row runs with.
#[derive(Clone)]
enum Tool {
    /// Found as usual (clang-22 / ld.lld-22 on `PATH`).
    Real,
    /// `GCN_PATCH_LLVM_BIN` names an empty directory and `PATH` holds nothing.
    Missing,
    /// `GCN_PATCH_LLVM_BIN` holds this `clang` script and a no-op `ld.lld`.
    FakeProbe(&'static str),
    /// `GCN_PATCH_LLVM_BIN` holds the real clang and ld.lld, except that
    /// clang's assembler job (`-cc1as`) runs this script instead.
    FakeAssembler(String),
}

/// What a row runs.
#[derive(Clone, Copy)]
enum Run {
    /// The CLI with these arguments, once.
    Cli(&'static [&'static str]),
    /// `gcn-patch build --out out -j 1` killed with SIGKILL while assembling
    /// its second job, then run again (snapshot: the rerun and its outputs).
    KilledThenRebuilt,
    /// Two `gcn-patch build --out out` at once (snapshot: both, and the outputs).
    TwoAtOnce,
}

const CHECK: Run = Run::Cli(&["check"]);

struct Case {
    name: &'static str,
    /// Files to write (relative path, bytes).
    files: Vec<(&'static str, Vec<u8>)>,
    /// Expected exit status.
    status: i32,
    run: Run,
    tool: Tool,
    /// Extra environment.
    env: Vec<(&'static str, &'static str)>,
}

fn case(name: &'static str, files: Vec<(&'static str, Vec<u8>)>) -> Case {
    Case {
        name,
        files,
        status: 1,
        run: CHECK,
        tool: Tool::Real,
        env: vec![],
    }
}

fn executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A `fakebin` directory for `tool`, if it needs one.
fn fake_bin(dir: &Path, tool: &Tool) -> Option<PathBuf> {
    let bin = dir.join("fakebin");
    match tool {
        Tool::Real | Tool::Missing => return None,
        Tool::FakeProbe(script) => {
            std::fs::create_dir_all(&bin).unwrap();
            executable(&bin.join("clang"), script);
            executable(&bin.join("ld.lld"), "#!/bin/sh\nexit 0\n");
        }
        Tool::FakeAssembler(script) => {
            let (clang, lld) = real_tools();
            std::fs::create_dir_all(&bin).unwrap();
            executable(
                &bin.join("clang"),
                &format!(
                    "#!/bin/sh\nif [ \"$1\" = -cc1as ]; then\n{script}\nfi\nexec {} \"$@\"\n",
                    clang.display()
                ),
            );
            std::os::unix::fs::symlink(lld, bin.join("ld.lld")).unwrap();
        }
    }
    Some(bin)
}

/// The rows. `SHA` in a manifest stands for the sha256 of the row's `saxpy.s`.
fn cases() -> Vec<Case> {
    let s = saxpy();
    let m = |extra: &str| manifest("saxpy.s", extra).into_bytes();
    let with_asm = |asm: Vec<u8>| vec![("kernels.toml", m("")), ("saxpy.s", asm)];
    let good = || with_asm(s.clone().into_bytes());
    let two_kernels = || {
        vec![
            (
                "kernels.toml",
                format!(
                    "{}[[kernel]]\nname = \"reduce\"\n[[kernel.source]]\nasm = \"reduce.s\"\ntargets = [\"gfx942\"]\n",
                    manifest("saxpy.s", "")
                )
                .into_bytes(),
            ),
            ("saxpy.s", s.clone().into_bytes()),
            ("reduce.s", corpus("hip/gfx942/reduce.s").into_bytes()),
        ]
    };
    vec![
        case("malformed_toml", vec![("kernels.toml", b"[[kernel]\nname = \"x\"\n".to_vec())]),
        case("unknown_key", vec![("kernels.toml", m("colour = \"red\"")), ("saxpy.s", s.clone().into_bytes())]),
        case("missing_file", vec![("kernels.toml", m(""))]),
        case("directory_instead_of_file", vec![("kernels.toml", m("")), ("saxpy.s/keep", vec![])]),
        case("non_utf8_asm", with_asm(b"\ts_nop 0\n\xff\xfe\n".to_vec())),
        case("empty_asm", with_asm(vec![])),
        case("diff_for_another_file", vec![
            ("kernels.toml", m("sha256 = \"SHA\"\npatches = [\"p.diff\"]")),
            ("saxpy.s", s.clone().into_bytes()),
            // A diff made for another file: its lines are not in this dump.
            // (A one-file diff is applied by content whatever its header
            // names, so that `diff -u old.s new.s` works.)
            ("p.diff", b"--- a/other.s\n+++ b/other.s\n@@ -1,2 +1,2 @@\n \tv_mov_b32 v9, 0\n-\ts_nop 3\n+\ts_nop 1\n".to_vec()),
        ]),
        case("binary_patch", vec![
            ("kernels.toml", m("sha256 = \"SHA\"\npatches = [\"p.diff\"]")),
            ("saxpy.s", s.clone().into_bytes()),
            ("p.diff", b"diff --git a/saxpy.s b/saxpy.s\nGIT binary patch\nliteral 3\nKcmZ>\n\n".to_vec()),
        ]),
        Case {
            status: 0,
            ..case("crlf_dump_and_patch_work", vec![
                ("kernels.toml", m("sha256 = \"SHA\"\npatches = [\"p.diff\"]")),
                ("saxpy.s", s.replace('\n', "\r\n").into_bytes()),
                ("p.diff", DIFF.replace('\n', "\r\n").into_bytes()),
            ])
        },
        case("stale_pin", vec![
            ("kernels.toml", m(&format!("sha256 = \"{}\"", "0".repeat(64)))),
            ("saxpy.s", s.clone().into_bytes()),
        ]),
        case("ambiguous_rule", vec![
            ("kernels.toml", m("sha256 = \"SHA\"\n[[kernel.source.rule]]\ndelete = \"s_waitcnt lgkmcnt(0)\"\n")),
            ("saxpy.s", s.clone().into_bytes()),
        ]),
        case("path_escape_dotdot", vec![("kernels.toml", manifest("../saxpy.s", "").into_bytes())]),
        case("path_escape_absolute", vec![("kernels.toml", manifest("/etc/passwd", "").into_bytes())]),
        case("path_escape_symlink", vec![("kernels.toml", manifest("link.s", "").into_bytes())]),
        case("unknown_target", vec![
            ("kernels.toml", manifest("saxpy.s", "").replace("[\"gfx942\"]", "[\"gfx9999\"]").into_bytes()),
            ("saxpy.s", s.clone().into_bytes()),
        ]),
        // A gfx9 dump for gfx1100: the assembler rejects its instructions.
        case("unsupported_target", vec![
            ("kernels.toml", manifest("saxpy.s", "").replace("[\"gfx942\"]", "[\"gfx1100\"]").into_bytes()),
            ("saxpy.s", s.clone().into_bytes()),
        ]),
        case("unterminated_string", with_asm(s.replacen("vcc\n", "vcc\"\n", 1).into_bytes())),
        // The toolchain.
        Case { tool: Tool::Missing, ..case("toolchain_missing", good()) },
        Case {
            tool: Tool::FakeProbe("#!/bin/sh\necho 'clang version 15.0.7'\n"),
            ..case("toolchain_too_old", good())
        },
        Case {
            tool: Tool::FakeProbe("#!/bin/sh\nkill -SEGV $$\n"),
            ..case("toolchain_crashing", good())
        },
        Case {
            tool: Tool::FakeAssembler("kill -SEGV $$".into()),
            ..case("assembler_crashing", good())
        },
        Case {
            tool: Tool::FakeAssembler("exec sleep 60".into()),
            env: vec![("GCN_PATCH_TOOL_TIMEOUT", "1")],
            ..case("assembler_hanging", good())
        },
        // Assembling and linking: what the parser and checks accept but the tools do not.
        case("assembler_error", with_asm(
            s.replacen("s_and_saveexec_b64 s[2:3], vcc\n", "s_and_saveexec_b64 s[2:3], vcc, vcc\n", 1).into_bytes(),
        )),
        case("linker_error", with_asm(
            s.replacen(
                "\ts_endpgm",
                "\ts_getpc_b64 s[4:5]\n\ts_add_u32 s4, s4, missing_table@rel32@lo+4\n\
                 \ts_addc_u32 s5, s5, missing_table@rel32@hi+12\n\ts_endpgm",
                1,
            )
            .into_bytes(),
        )),
        // Outputs. A path under a regular file cannot be created even by root
        // (a read-only directory can: CI may run as root). Two jobs, one error.
        Case {
            run: Run::Cli(&["build", "--out", "file/out"]),
            ..case("output_dir_not_writable", {
                let mut f = two_kernels();
                f.push(("file", b"a regular file\n".to_vec()));
                f
            })
        },
        Case {
            run: Run::KilledThenRebuilt,
            status: 0,
            ..case("interrupted_build_then_rebuilt", two_kernels())
        },
        Case {
            run: Run::TwoAtOnce,
            status: 0,
            ..case("two_builds_into_one_output_directory", two_kernels())
        },
    ]
}

/// Code objects under `out` by relative path (the engine's `.gcn-patch` state left out).
fn outputs(out: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(out).unwrap().display().to_string();
            if rel.starts_with(".gcn-patch") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                files.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    files
}

/// Stderr with the case directory, scratch names and code object hashes made stable.
fn normalize(text: &str, dir: &Path) -> String {
    let text = text.replace(&dir.display().to_string(), "[DIR]");
    // tempfile's random names (scratch directories, `.o` and `.hsaco` temp files).
    let text = regex::Regex::new(r"\.tmp[A-Za-z0-9]{6}")
        .unwrap()
        .replace_all(&text, ".tmpXXXXXX");
    let text = regex::Regex::new(r"\.[A-Za-z0-9]{6}\.o\.tmp\b")
        .unwrap()
        .replace_all(&text, ".XXXXXX.o.tmp");
    // `gcn-patch build`'s table shows each object's sha256 (it depends on the LLVM build).
    regex::Regex::new(r"\b[0-9a-f]{16}\b")
        .unwrap()
        .replace_all(&text, "[sha256]")
        .into_owned()
}

fn status_line(o: &Output) -> String {
    match o.status.code() {
        Some(c) => format!("exit {c}"),
        None => format!("{}", o.status),
    }
}

/// Run one row in a fresh directory: (exit status, snapshot text).
fn run_case(c: &Case) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let asm_sha = c
        .files
        .iter()
        .find(|(r, _)| *r == "saxpy.s")
        .map(|(_, b)| gcn_embed::sha256_hex(b))
        .unwrap_or_default();
    for (rel, bytes) in &c.files {
        let bytes = &if *rel == "kernels.toml" {
            String::from_utf8(bytes.clone())
                .unwrap()
                .replace("SHA", &asm_sha)
                .into_bytes()
        } else {
            bytes.clone()
        };
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        if !rel.ends_with("/keep") {
            std::fs::write(&p, bytes).unwrap();
        }
    }
    if c.name == "path_escape_symlink" {
        std::os::unix::fs::symlink("/etc/hostname", d.join("link.s")).unwrap();
    }
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let bin = fake_bin(d, &c.tool);
    let command = |tool: &Tool, args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gcn-patch"));
        cmd.args(args)
            .current_dir(d)
            .env("TMPDIR", &tmp)
            .env_remove("RUST_BACKTRACE")
            .env_remove("GCN_PATCH_TOOL_TIMEOUT");
        match tool {
            Tool::Real => {}
            Tool::Missing => {
                cmd.env("PATH", d)
                    .env("GCN_PATCH_LLVM_BIN", d.join("nowhere"));
            }
            Tool::FakeProbe(_) | Tool::FakeAssembler(_) => {
                cmd.env("GCN_PATCH_LLVM_BIN", bin.as_ref().unwrap());
            }
        }
        for (k, v) in &c.env {
            cmd.env(k, v);
        }
        cmd
    };
    let (status, text) = match c.run {
        Run::Cli(args) => {
            let o = command(&c.tool, args).output().unwrap();
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        }
        Run::KilledThenRebuilt => {
            let reference = undisturbed_build(d, &command);
            // The first assembler run goes through; the second one writes
            // its pid and waits: the build is killed there, part-way.
            let mark = d.join("assembling");
            let script = format!(
                "if [ -e {m}.first ]; then echo $$ > {m}; exec sleep 60; fi; touch {m}.first",
                m = mark.display()
            );
            fake_bin(&d.join("slow"), &Tool::FakeAssembler(script));
            let mut killed = command(&Tool::Real, &["build", "--out", "out", "-j", "1"]);
            killed
                .env("GCN_PATCH_LLVM_BIN", d.join("slow/fakebin"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            let mut child = killed.spawn().unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            while !mark.exists() {
                assert!(
                    Instant::now() < deadline,
                    "the build never reached its second job"
                );
                assert!(child.try_wait().unwrap().is_none(), "the build ended early");
                std::thread::sleep(Duration::from_millis(10));
            }
            child.kill().unwrap();
            child.wait().unwrap();
            // The rerun, with the real toolchain.
            let o = command(&Tool::Real, &["build", "--out", "out"])
                .output()
                .unwrap();
            let mut text = format!(
                "{}\n{}",
                status_line(&o),
                String::from_utf8_lossy(&o.stderr)
            );
            text.push_str(&compare_outputs(&d.join("out"), &reference));
            (o.status.code(), text)
        }
        Run::TwoAtOnce => {
            let reference = undisturbed_build(d, &command);
            let spawn = || {
                command(&Tool::Real, &["build", "--out", "out"])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            };
            let (a, b) = (spawn(), spawn());
            let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
            // Which build assembled and which found the other's objects in
            // the cache is a race: the snapshot holds the outcome only.
            let mut text = format!(
                "build 1: {}\nbuild 2: {}\n",
                status_line(&a),
                status_line(&b)
            );
            for o in [&a, &b] {
                if !o.status.success() {
                    text.push_str(&String::from_utf8_lossy(&o.stderr));
                }
            }
            text.push_str(&compare_outputs(&d.join("out"), &reference));
            let status = if a.status.success() {
                b.status.code()
            } else {
                a.status.code()
            };
            (status, text)
        }
    };
    let text = normalize(&text, d);
    assert!(!text.contains("panicked"), "{}: {text}", c.name);
    (status, text)
}

/// `gcn-patch build --out ref` with the real toolchain: its code objects.
fn undisturbed_build(
    d: &Path,
    command: &dyn Fn(&Tool, &[&str]) -> Command,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    let o = command(&Tool::Real, &["build", "--out", "ref"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reference = outputs(&d.join("ref"));
    assert!(reference.len() >= 2, "{:?}", reference.keys());
    reference
}

/// The outputs of `out`, each said to be identical to the reference or not.
fn compare_outputs(out: &Path, reference: &std::collections::BTreeMap<String, Vec<u8>>) -> String {
    let got = outputs(out);
    let mut text = String::from("outputs:\n");
    for (rel, bytes) in &got {
        let same = match reference.get(rel) {
            Some(r) if r == bytes => "identical to an undisturbed build's",
            Some(_) => "DIFFERENT from an undisturbed build's",
            None => "NOT made by an undisturbed build",
        };
        text.push_str(&format!("  {rel}: {same}\n"));
    }
    for rel in reference.keys().filter(|r| !got.contains_key(*r)) {
        text.push_str(&format!("  {rel}: MISSING\n"));
    }
    text
}

#[test]
fn bad_inputs_give_exact_diagnostics() {
    // The cases are independent processes: run them over the cores, then
    // assert in case order (snapshots and failures read the same either way).
    let cases = cases();
    let results = common::par_map(&cases, run_case);
    let mut failures = Vec::new();
    for (c, (status, text)) in cases.iter().zip(results) {
        if status != Some(c.status) {
            failures.push(format!(
                "{}: exit {status:?}, expected {}\n{text}",
                c.name, c.status
            ));
        }
        insta::assert_snapshot!(c.name, text);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
