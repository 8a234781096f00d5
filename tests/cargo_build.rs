//! `cargo build` of a package that uses gcn-build, as a user runs it:
//! a clean build assembles every kernel × target; a second build does not rerun
//! the build script; editing one patch reassembles only that kernel; a host
//! `CFLAGS=-march=native` does not leak into the GPU build; a missing LLVM gives
//! the install hint; a broken patch fails with the same diagnostic as
//! `gcn-patch check`; a second checkout sharing `GCN_BUILD_CACHE_DIR` runs no
//! assembler and no linker, and neither does a second clone of the demo
//! sharing a Redis (`GCN_BUILD_CACHE=redis://…`, gcn-build's `remote-cache`
//! feature); without that feature gcn-build compiles no network stack.
//!
//! The package is a copy of the demo (kernels.toml, asm/, patches/) under
//! `target/gcn-build-it/`, built with its own target directory there (the outer
//! `cargo test` holds the workspace's).

mod common;
#[path = "support/servers.rs"]
mod servers;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

struct Pkg {
    dir: PathBuf,
    target_dir: PathBuf,
    /// The package name (the directory name, unless two checkouts share one).
    package: String,
}

/// The package files around a manifest in `dir`: Cargo.toml (gcn-embed and
/// gcn-build by path, its own workspace), the workspace's Cargo.lock, a
/// build.rs compiling `kernels.toml`, and src/lib.rs embedding the kernels.
fn write_package(dir: &Path, name: &str) {
    write_package_with(dir, name, &[]);
}

/// [`write_package`] with gcn-build's `features`. The package optimizes
/// `sha2` only (as the workspace does): the build script hashes its own
/// binary on every run, which unoptimized costs seconds of CPU per run.
fn write_package_with(dir: &Path, name: &str, features: &[&str]) {
    fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let r = repo();
    fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ngcn-embed = {{ path = {:?} }}\n\n[build-dependencies]\ngcn-build = {{ path = {:?}, features = {features:?} }}\n\n[workspace]\n\n\
             [profile.dev.package.sha2]\nopt-level = 3\n",
            r.join("gcn-embed"),
            r.join("gcn-build")
        ),
    )
    .unwrap();
    fs::write(
        dir.join("build.rs"),
        "fn main() {\n    gcn_build::Build::new().manifest(\"kernels.toml\").compile();\n}\n",
    )
    .unwrap();
    fs::write(dir.join("src/lib.rs"), "gcn_embed::include_kernels!();\n").unwrap();
}

impl Pkg {
    /// A fresh copy of the demo package at a fixed path (so Cargo reuses compiled dependencies).
    fn new(name: &str) -> Pkg {
        let root = repo().join("target/gcn-build-it");
        let dir = root.join(name);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src")).unwrap();
        for sub in ["asm", "patches"] {
            copy_tree(&repo().join(sub), &dir.join(sub));
        }
        fs::copy(repo().join("kernels.toml"), dir.join("kernels.toml")).unwrap();
        write_package(&dir, name);
        fs::write(dir.join("unrelated.txt"), "not an input\n").unwrap();
        Pkg {
            dir,
            target_dir: root.join("target"),
            package: name.to_string(),
        }
    }

    /// A checkout at `target/gcn-build-it/<checkout>` of a small package
    /// `gcn-it-cache` (the HIP saxpy gfx11-generic dump for gfx1100 and
    /// gfx11-generic: two jobs) using gcn-build from build.rs.
    fn small_checkout(checkout: &str) -> Pkg {
        Pkg::small_package(checkout, "gcn-it-cache")
    }

    /// [`Pkg::small_checkout`] of a package named `package`.
    fn small_package(checkout: &str, package: &str) -> Pkg {
        let root = repo().join("target/gcn-build-it");
        let dir = root.join(checkout);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src")).unwrap();
        fs::create_dir_all(dir.join("asm")).unwrap();
        let asm = fs::read(corpus().join("hip/gfx11-generic/saxpy.s")).unwrap();
        fs::write(dir.join("asm/saxpy.s"), &asm).unwrap();
        fs::write(
            dir.join("kernels.toml"),
            format!(
                "[[kernel]]\nname = \"saxpy\"\n\n[[kernel.source]]\nasm = \"asm/saxpy.s\"\nsha256 = \"{}\"\ntargets = [\"gfx1100\", \"gfx11-generic\"]\n",
                gcn_patch::base::hash::sha256_hex(&asm)
            ),
        )
        .unwrap();
        write_package(&dir, package);
        Pkg {
            dir,
            target_dir: root.join("target"),
            package: package.to_string(),
        }
    }

    fn cargo(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(args)
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target_dir);
        cmd.env_remove("CFLAGS").env_remove("RUSTFLAGS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(&mut cmd)
    }

    /// Build; returns (stderr, whether our build script ran).
    fn build(&self, env: &[(&str, &str)]) -> (Output, bool) {
        let out = self.cargo(&["build", "-v", "--offline"], env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ran = stderr.lines().any(|l| {
            l.contains("Running")
                && l.contains(&format!("{}-", self.name()))
                && l.contains("build-script-build")
        });
        (out, ran)
    }

    /// The package's files once Cargo has brought its lock file up to date
    /// (which `cargo package` and `cargo build` would otherwise write).
    fn settled_snapshot(&self) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
        let out = self.cargo(&["tree", "--offline", "--quiet"], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cargo tree: {stderr}");
        tree_snapshot(&self.dir)
    }

    fn name(&self) -> String {
        self.package.clone()
    }

    /// The report of the last build script run: (state, kernel, target) per line.
    fn report(&self) -> Vec<(String, String, String)> {
        let build = self.target_dir.join("debug/build");
        let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
        for e in fs::read_dir(&build).unwrap() {
            let p = e.unwrap().path().join("out/gcn-build/report.txt");
            if p.to_string_lossy().contains(&format!("{}-", self.name())) && p.is_file() {
                let t = fs::metadata(&p).unwrap().modified().unwrap();
                if newest.as_ref().is_none_or(|(n, _)| t > *n) {
                    newest = Some((t, p));
                }
            }
        }
        let (_, path) = newest.expect("no gcn-build report.txt: did the build script run?");
        fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f[0].to_string(), f[1].to_string(), f[2].to_string())
            })
            .collect()
    }

    fn cache_dirs(&self) -> Vec<PathBuf> {
        fs::read_dir(self.target_dir.join("debug/build"))
            .unwrap()
            .map(|e| e.unwrap().path().join("out/gcn-build/cache"))
            .filter(|p| p.to_string_lossy().contains(&format!("{}-", self.name())) && p.is_dir())
            .collect()
    }
}

fn expected_jobs(dir: &Path) -> usize {
    let m = gcn_patch::config::manifest::Manifest::load(&dir.join("kernels.toml")).unwrap();
    m.kernels
        .iter()
        .flat_map(|k| &k.sources)
        .map(|s| s.targets.len())
        .sum()
}

#[test]
fn build_rebuild_edit_and_cflags() {
    let pkg = Pkg::new("gcn-it-demo");
    let _ = pkg.cargo(&["clean", "-p", "gcn-it-demo", "--offline"], &[]);
    let (out, ran) = pkg.build(&[]);
    assert!(
        out.status.success(),
        "clean build failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ran);
    let report = pkg.report();
    assert_eq!(report.len(), expected_jobs(&pkg.dir));
    assert!(
        report.iter().all(|(s, _, _)| s == "assembled"),
        "{report:?}"
    );

    // Nothing changed (an unrelated file touched): the build script does not run again.
    fs::write(pkg.dir.join("unrelated.txt"), "touched\n").unwrap();
    let (out, ran) = pkg.build(&[]);
    assert!(out.status.success());
    assert!(
        !ran,
        "second build reran the build script:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Edit one patch: only the matmul's code objects are reassembled.
    let patch = pkg.dir.join("patches/matmul-waitcnt.diff");
    let text = fs::read_to_string(&patch).unwrap();
    let edited = edit_first_added_line(&text);
    fs::write(&patch, edited).unwrap();
    let (out, ran) = pkg.build(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ran);
    let report = pkg.report();
    let assembled: Vec<&(String, String, String)> =
        report.iter().filter(|(s, _, _)| s == "assembled").collect();
    assert!(
        !assembled.is_empty() && assembled.iter().all(|(_, k, _)| k == "matmul"),
        "{report:?}"
    );
    let matmul_jobs = report.iter().filter(|(_, k, _)| k == "matmul").count();
    assert_eq!(assembled.len(), matmul_jobs, "{report:?}");

    // A host CFLAGS must not reach clang for the GPU: force reassembly under it.
    for d in pkg.cache_dirs() {
        fs::remove_dir_all(d).unwrap();
    }
    fs::write(
        pkg.dir.join("kernels.toml"),
        fs::read_to_string(pkg.dir.join("kernels.toml")).unwrap() + "\n",
    )
    .unwrap();
    let (out, ran) = pkg.build(&[
        ("CFLAGS", "-march=native"),
        ("CFLAGS_amdgcn_amd_amdhsa", "-march=native"),
    ]);
    assert!(
        out.status.success(),
        "CFLAGS leaked into the GPU build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ran);
    assert!(pkg.report().iter().all(|(s, _, _)| s == "assembled"));
}

/// Append a comment to the first `+` line of a unified diff (changes the asm, keeps it applying).
fn edit_first_added_line(diff: &str) -> String {
    let mut done = false;
    diff.split_inclusive('\n')
        .map(|l| {
            if !done && l.starts_with('+') && !l.starts_with("+++") {
                done = true;
                let (body, nl) = l.strip_suffix('\n').map(|b| (b, "\n")).unwrap_or((l, ""));
                format!("{body} ; edited{nl}")
            } else {
                l.to_string()
            }
        })
        .collect()
}

#[test]
fn missing_llvm_fails_with_the_install_hint() {
    let pkg = Pkg::new("gcn-it-nollvm");
    let empty = tempfile::tempdir().unwrap();
    let (out, _) = pkg.build(&[("GCN_PATCH_LLVM_BIN", empty.path().to_str().unwrap())]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("apt-get install -y clang-22 lld-22"),
        "no install hint:\n{stderr}"
    );
    // compile() panics as cc-rs does, at the build script's own line.
    assert!(
        stderr.contains("panicked at build.rs:2:") && stderr.contains("gcn-build failed:"),
        "{stderr}"
    );
}

#[test]
fn broken_patch_fails_the_build_with_the_check_diagnostic() {
    let pkg = Pkg::new("gcn-it-broken");
    let patch = pkg.dir.join("patches/matmul-waitcnt.diff");
    let text = fs::read_to_string(&patch).unwrap();
    // Break the context of the first hunk.
    let broken = text
        .replacen("\n s_", "\n s_nop 7 ; not in the dump\n s_", 1)
        .replacen("\n \ts", "\n \ts_nop 7 ; gone\n \ts", 1);
    assert_ne!(broken, text);
    fs::write(&patch, broken).unwrap();
    let (out, _) = pkg.build(&[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("panicked at build.rs:2:"), "{stderr}");
    // `gcn-patch check` renders the same diagnostic from the same manifest.
    let manifest =
        gcn_patch::config::manifest::Manifest::load(&pkg.dir.join("kernels.toml")).unwrap();
    let check = gcn_patch::pipeline::plan(&manifest, &[]).expect_err("the broken patch must fail");
    let rendered = check.to_string();
    let first = rendered.lines().next().unwrap();
    assert!(first.contains("hunk"), "{rendered}");
    // Cargo indents a build script's stderr by two spaces.
    let unindented: Vec<&str> = stderr
        .lines()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect();
    let unindented = unindented.join("\n");
    assert!(unindented.contains(rendered.trim_end()), "build output lacks the check diagnostic:\n--- build ---\n{stderr}\n--- check ---\n{rendered}");
    // No stale generated code is left for a later build to pick up.
    for e in fs::read_dir(pkg.target_dir.join("debug/build")).unwrap() {
        let p = e.unwrap().path();
        if p.to_string_lossy().contains("gcn-it-broken-") {
            assert!(!p.join("out/gcn_kernels.rs").exists());
        }
    }
}

/// A panic in a job of the build script (injected by the test-only
/// `GCN_PATCH_TEST_PANIC` hook) fails `cargo build` with the error naming
/// the kernel and target, the build script panicking (exit 101, as a failed
/// `compile()` does); it never hangs (the job runner waited forever for a
/// panicked worker).
#[test]
fn a_panicking_job_fails_the_build_naming_kernel_and_target() {
    let pkg = Pkg::small_package("gcn-it-panic", "gcn-it-panic");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--offline"])
        .current_dir(&pkg.dir)
        .env("CARGO_TARGET_DIR", &pkg.target_dir)
        .env("GCN_PATCH_TEST_PANIC", "build:saxpy")
        .env_remove("CFLAGS")
        .env_remove("RUSTFLAGS");
    // Generous: the first build of the test compiles gcn-build's dependencies.
    let out = run_bounded(cmd, std::time::Duration::from_secs(900), "cargo build");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    for target in ["gfx1100", "gfx11-generic"] {
        let want = format!(
            "internal error while building kernel `saxpy` for {target}: injected by GCN_PATCH_TEST_PANIC=build:saxpy"
        );
        assert!(stderr.contains(&want), "`{want}` not in:\n{stderr}");
    }
    assert!(stderr.contains("exit status: 101"), "{stderr}");
}

/// A directory whose `clang` and `ld.lld` append their arguments to `log`,
/// then run the real clang-22 / ld.lld-22: every tool run of a build,
/// recorded. (Tools run with a cleared environment, so the log's path is
/// written into the scripts.)
fn recording_toolchain(dir: &Path, log: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).unwrap();
    let tc = gcn_patch::stage::toolchain::Toolchain::find(&Default::default(), &|v| {
        std::env::var(v).ok()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    for (name, real) in [("clang", &tc.clang), ("ld.lld", &tc.lld)] {
        let p = dir.join(name);
        fs::write(
            &p,
            format!(
                "#!/bin/sh\necho \"{name} $*\" >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// `GCN_BUILD_CACHE_DIR` through Cargo: two checkouts (copies) of one small
/// package, built one after the other with the same shared cache. The first
/// assembles and links every job; the second runs no assembler and no linker
/// at all (every tool run is recorded) and embeds the same code objects.
#[test]
fn a_second_checkout_builds_from_the_shared_cache_without_running_the_assembler() {
    let root = repo().join("target/gcn-build-it");
    let shared = root.join("shared-cache");
    let _ = fs::remove_dir_all(&shared);
    let (wrap, log) = (root.join("recording-llvm"), root.join("recording-llvm.log"));
    recording_toolchain(&wrap, &log);
    let env = [
        ("GCN_BUILD_CACHE_DIR", shared.to_str().unwrap()),
        ("GCN_PATCH_LLVM_BIN", wrap.to_str().unwrap()),
    ];
    let tool_runs = || -> Vec<String> {
        let runs = fs::read_to_string(&log).unwrap_or_default();
        let _ = fs::remove_file(&log);
        runs.lines().map(str::to_string).collect()
    };
    let assembler_or_linker = |runs: &[String]| -> Vec<String> {
        runs.iter()
            .filter(|r| r.starts_with("ld.lld") || r.contains("-cc1as") || r.contains(" -c "))
            .cloned()
            .collect()
    };
    let embedded = |pkg: &Pkg| -> String {
        let build = pkg.target_dir.join("debug/build");
        let newest = fs::read_dir(&build)
            .unwrap()
            .map(|e| e.unwrap().path().join("out/gcn_kernels.rs"))
            .filter(|p| p.to_string_lossy().contains("gcn-it-cache-") && p.is_file())
            .max_by_key(|p| fs::metadata(p).unwrap().modified().unwrap())
            .expect("no generated gcn_kernels.rs");
        fs::read_to_string(newest).unwrap()
    };

    let a = Pkg::small_checkout("gcn-it-cache-a");
    // No local cache from an earlier run of this test (both checkouts' build dirs).
    let _ = a.cargo(&["clean", "-p", "gcn-it-cache", "--offline"], &[]);
    let (out, ran) = a.build(&env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ran);
    let first = tool_runs();
    let report = a.report();
    assert_eq!(report.len(), 2, "{report:?}");
    assert!(
        report.iter().all(|(s, _, _)| s == "assembled"),
        "{report:?}"
    );
    // Sanity check of the recording: the first checkout assembled and linked both jobs.
    let work = assembler_or_linker(&first);
    assert_eq!(
        work.iter().filter(|r| r.contains("-cc1as")).count(),
        2,
        "{first:#?}"
    );
    assert_eq!(
        work.iter().filter(|r| r.starts_with("ld.lld")).count(),
        2,
        "{first:#?}"
    );
    let generated_a = embedded(&a);

    let b = Pkg::small_checkout("gcn-it-cache-b");
    // Two checkouts have two target directories. Here they share one, so
    // that gcn-build and its dependencies compile once; Cargo gives a
    // package the same OUT_DIR in every checkout of a workspace, so the
    // first checkout's package is cleaned: the second starts with no local
    // cache and no OUT_DIR, as in a fresh target directory.
    let _ = b.cargo(&["clean", "-p", "gcn-it-cache", "--offline"], &[]);
    assert!(b.cache_dirs().is_empty(), "{:?}", b.cache_dirs());
    let (out, ran) = b.build(&env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ran, "the second checkout's build script did not run");
    let second = tool_runs();
    assert_eq!(
        assembler_or_linker(&second),
        Vec::<String>::new(),
        "{second:#?}"
    );
    let report = b.report();
    assert_eq!(report.len(), 2, "{report:?}");
    assert!(
        report.iter().all(|(s, _, _)| s == "shared-cache"),
        "{report:?}"
    );
    // The same code objects are embedded (the generated Rust holds their sha256).
    assert_eq!(embedded(&b), generated_a);
}

/// The demo through Cargo with a team's cache on a real Redis (started
/// here, on a free port): two clones, each with its own local cache (its
/// package cleaned between them), sharing only the Redis. The first
/// assembles and links every job; the second's cold `cargo build` starts no
/// assembler and no linker (every tool run is recorded) and embeds the same
/// code objects.
#[test]
fn a_second_clone_of_the_demo_builds_from_redis_without_running_the_assembler() {
    let redis = servers::redis();
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let root = repo().join("target/gcn-build-it");
    let (wrap, log) = (
        root.join("recording-llvm-r"),
        root.join("recording-llvm-r.log"),
    );
    recording_toolchain(&wrap, &log);
    let env = [
        ("GCN_BUILD_CACHE", url.as_str()),
        ("GCN_PATCH_LLVM_BIN", wrap.to_str().unwrap()),
    ];
    let tool_runs = || -> Vec<String> {
        let runs = fs::read_to_string(&log).unwrap_or_default();
        let _ = fs::remove_file(&log);
        runs.lines()
            .filter(|r| r.starts_with("ld.lld") || r.contains("-cc1as") || r.contains(" -c "))
            .map(str::to_string)
            .collect()
    };
    let clone = |checkout: &str| {
        let pkg = Pkg::new(checkout);
        write_package_with(&pkg.dir, "gcn-it-remote", &["remote-cache"]);
        Pkg {
            package: "gcn-it-remote".into(),
            ..pkg
        }
    };
    let a = clone("gcn-it-remote-a");
    let jobs = expected_jobs(&a.dir);
    let _ = a.cargo(&["clean", "-p", "gcn-it-remote", "--offline"], &[]);
    let _ = tool_runs();
    let (out, ran) = a.build(&env);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(ran);
    assert!(!stderr.contains("warning: gcn-build"), "{stderr}");
    let report = a.report();
    assert_eq!(report.len(), jobs, "{report:?}");
    assert!(
        report.iter().all(|(s, _, _)| s == "assembled"),
        "{report:?}"
    );
    let first = tool_runs();
    assert_eq!(
        first.iter().filter(|r| r.contains("-cc1as")).count(),
        jobs,
        "{first:#?}"
    );
    let b = clone("gcn-it-remote-b");
    let _ = b.cargo(&["clean", "-p", "gcn-it-remote", "--offline"], &[]);
    assert!(b.cache_dirs().is_empty(), "{:?}", b.cache_dirs());
    let (out, ran) = b.build(&env);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(ran, "the second clone's build script did not run");
    assert_eq!(
        tool_runs(),
        Vec::<String>::new(),
        "the second clone ran tools"
    );
    let report = b.report();
    assert_eq!(report.len(), jobs, "{report:?}");
    assert!(
        report.iter().all(|(s, _, _)| s == "shared-cache"),
        "{report:?}"
    );
}

/// gcn-build without its `remote-cache` feature (the default) pulls in no
/// network stack: no OpenDAL, tokio, HTTP or TLS crate in its normal
/// dependencies.
#[test]
fn gcn_build_without_remote_cache_compiles_no_network_stack() {
    let tree = |features: &[&str]| -> String {
        let mut args = vec![
            "tree",
            "-p",
            "gcn-build",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ];
        args.extend_from_slice(features);
        let out = Command::new(env!("CARGO"))
            .args(&args)
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let network = ["opendal", "tokio ", "reqwest", "hyper ", "rustls", "redis "];
    let plain = tree(&[]);
    for n in network {
        assert!(
            !plain.contains(n),
            "gcn-build's default build has `{n}`:\n{plain}"
        );
    }
    let remote = tree(&["--features", "remote-cache"]);
    for n in network {
        assert!(
            remote.contains(n),
            "`{n}` not in the remote-cache build:\n{remote}"
        );
    }
}

/// aiter kernels embedded in a crate: every build script run prints their
/// inherited findings as cargo warnings until `gcn-patch accept` records
/// them; then a rebuild is silent (issue 23), and a new finding shows again.
#[test]
fn acknowledged_findings_leave_cargo_builds_silent() {
    let root = repo().join("target/gcn-build-it");
    let dir = root.join("gcn-it-accept");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("src")).unwrap();
    let aiter = corpus().join("aiter/gfx942");
    let mut paths = vec![];
    for f in ["all_reduce.co", "pa/pa_bf16_noquant_gqa16_1tg_4w.co"] {
        let to = dir.join(Path::new(f).file_name().unwrap());
        fs::copy(aiter.join(f), &to).unwrap();
        paths.push(to);
    }
    let manifest = dir.join("kernels.toml");
    let tools = gcn_patch::ops::Tools::default();
    let options = gcn_patch::ops::import::ImportOptions::resolve(vec![], None, &tools, &paths)
        .unwrap_or_else(|d| panic!("{d}"));
    gcn_patch::ops::import::import(&manifest, &paths, &options, None)
        .unwrap_or_else(|d| panic!("{d}"));
    write_package(&dir, "gcn-it-accept");
    let pkg = Pkg {
        dir: dir.clone(),
        target_dir: root.join("target"),
        package: "gcn-it-accept".to_string(),
    };
    let warnings = |o: &Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.starts_with("warning: gcn-it-accept"))
            .map(str::to_string)
            .collect()
    };
    let (out, ran) = pkg.build(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ran);
    let before = warnings(&out);
    assert!(
        before
            .iter()
            .any(|l| l.contains(".sgpr_count` 96 contradicts")),
        "{before:#?}"
    );

    for k in ["all_reduce", "pa_bf16_noquant_gqa16_1tg_4w"] {
        gcn_patch::ops::accept::accept(&gcn_patch::ops::accept::AcceptOptions {
            manifest: manifest.clone(),
            kernel: k.to_string(),
            tools: tools.clone(),
        })
        .unwrap_or_else(|d| panic!("{d}"));
    }
    let (out, ran) = pkg.build(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ran, "kernels.toml changed: the build script runs again");
    assert_eq!(warnings(&out), Vec::<String>::new(), "a silent rebuild");

    // A finding the accepted file does not list (here: one deleted from it)
    // is shown again.
    let file = dir.join("accepted/all_reduce.txt");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(
        &file,
        text.lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    // The accepted file is an input of the build script too.
    let (out, ran) = pkg.build(&[]);
    assert!(out.status.success());
    assert!(
        ran,
        "the accepted file changed: the build script runs again"
    );
    assert!(
        warnings(&out)
            .iter()
            .any(|l| l.contains(".sgpr_count` 96 contradicts")),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `cargo package` and `cargo publish --dry-run` of a crate using gcn-build
/// (the small saxpy package; its build.rs asks for the lock to be written):
/// Cargo verifies the package by building it from its `.crate` and fails
/// when the build script changes that copy's sources. gcn-build wrote
/// `kernels.lock` there; now it refuses (the copy holds `Cargo.toml.orig`).
/// gcn-build and gcn-embed are not on a registry yet: `[patch.crates-io]`
/// (as `--config`) puts the local crates in their place. `cargo package`
/// runs offline; `cargo publish --dry-run` publishes to a local git index
/// (`--index file://…`, made here) and reads crates.io's index for the
/// other dependencies, as every publish does.
#[test]
fn a_crate_using_gcn_build_passes_cargo_package_and_publish_dry_run() {
    let pkg = Pkg::small_package("gcn-it-publish", "gcn-it-publish");
    let r = repo();
    fs::write(
        pkg.dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"gcn-it-publish\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             license = \"Apache-2.0\"\ndescription = \"gcn-build packaging test\"\n\n\
             [dependencies]\ngcn-embed = {{ path = {:?}, version = \"0.1.0\" }}\n\n\
             [build-dependencies]\ngcn-build = {{ path = {:?}, version = \"0.1.0\" }}\n\n[workspace]\n",
            r.join("gcn-embed"),
            r.join("gcn-build")
        ),
    )
    .unwrap();
    fs::write(
        pkg.dir.join("build.rs"),
        "fn main() {\n    gcn_build::Build::new().manifest(\"kernels.toml\").write_lock(true).compile();\n}\n",
    )
    .unwrap();
    let patch = |name: &str| {
        format!(
            "patch.crates-io.{name}.path={:?}",
            r.join(name).display().to_string()
        )
    };
    let (build, embed) = (patch("gcn-build"), patch("gcn-embed"));
    let before = pkg.settled_snapshot();
    // `cargo ARGS` with the local crates patched in; its stderr, after success.
    let cargo = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--config", &build, "--config", &embed]);
        let out = pkg.cargo(&all, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "cargo {args:?} failed:\n{stderr}");
        stderr
    };
    let stderr = cargo(&["package", "--offline"]);
    assert!(stderr.contains("Verifying gcn-it-publish"), "{stderr}");
    let verified = pkg.target_dir.join("package/gcn-it-publish-0.1.0");
    assert!(verified.join("Cargo.toml.orig").is_file());
    assert!(!verified.join("kernels.lock").exists());

    let git = tool("git", "apt-get install -y git");
    let index = pkg.target_dir.join("gcn-it-index");
    let _ = fs::remove_dir_all(&index);
    fs::create_dir_all(&index).unwrap();
    fs::write(
        index.join("config.json"),
        format!(
            "{{\"dl\": \"file://{0}/dl\", \"api\": \"file://{0}/api\"}}\n",
            index.display()
        ),
    )
    .unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "config.json"],
        &[
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@localhost",
            "commit",
            "-qm",
            "index",
        ],
    ] {
        let o = run(Command::new(&git).args(args).current_dir(&index));
        assert!(o.status.success(), "git {args:?}: {o:?}");
    }
    let url = format!("file://{}", index.display());
    let stderr = cargo(&["publish", "--dry-run", "--index", &url]);
    assert!(
        stderr.contains("aborting upload due to dry run"),
        "{stderr}"
    );
    let changed = changed_files(&before, &tree_snapshot(&pkg.dir));
    assert_eq!(changed, Vec::<String>::new(), "the checkout was written to");
}

/// A read-only copy of a crate using gcn-build builds (target directory
/// elsewhere) and nothing in it is written: the files are compared before
/// and after, which holds also for a test running as root (whom `chmod`
/// does not stop).
#[test]
fn a_read_only_copy_of_a_crate_using_gcn_build_builds() {
    let pkg = Pkg::small_package("gcn-it-readonly", "gcn-it-readonly");
    let before = pkg.settled_snapshot();
    let chmod = |mode: &str| {
        let o = run(Command::new("chmod").args(["-R", mode]).arg(&pkg.dir));
        assert!(o.status.success(), "chmod -R {mode}: {o:?}");
    };
    chmod("a-w");
    let out = pkg.cargo(&["build", "--offline", "--locked"], &[]);
    chmod("u+w");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(pkg.report().len(), 2, "both jobs of the build");
    let changed = changed_files(&before, &tree_snapshot(&pkg.dir));
    assert_eq!(
        changed,
        Vec::<String>::new(),
        "the read-only sources were written to"
    );
}

/// Without gcn-patch's `lift` feature (a build script's view of gcn-patch:
/// gcn-build takes it with default features off), a binary baseline cannot
/// be read: `lint` with one is the `FeatureDisabled` error (GP0011), not a
/// lift. A package whose build script depends on gcn-patch alone, with
/// default features off, calls the library and prints the error; its
/// rendering is snapshot for the book's index of codes.
#[test]
fn a_binary_baseline_without_the_lift_feature_is_gp0011() {
    let root = repo().join("target/gcn-build-it");
    let dir = root.join("gcn-it-nolift");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    fs::copy(
        corpus().join("iree/gfx942/matmul.rocmasm"),
        dir.join("matmul.s"),
    )
    .unwrap();
    fs::copy(
        corpus().join("iree/gfx942/matmul.hsaco"),
        dir.join("matmul.hsaco"),
    )
    .unwrap();
    fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"gcn-it-nolift\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
             [build-dependencies]\ngcn-patch = {{ path = {:?}, default-features = false }}\n\n[workspace]\n",
            repo().join("gcn-patch")
        ),
    )
    .unwrap();
    fs::write(
        dir.join("build.rs"),
        "use std::path::PathBuf;\n\n\
         fn main() {\n    \
             let r = gcn_patch::ops::parse_target(\"gfx942\").and_then(|target| {\n        \
                 gcn_patch::ops::lint::lint(&gcn_patch::ops::lint::LintOptions {\n            \
                     file: PathBuf::from(\"matmul.s\"),\n            \
                     target,\n            \
                     suggest: false,\n            \
                     baseline: Some(PathBuf::from(\"matmul.hsaco\")),\n        \
                 })\n    \
             });\n    \
             match r {\n        \
                 Ok(_) => panic!(\"a binary baseline was read without the lift feature\"),\n        \
                 Err(d) => {\n            \
                     eprintln!(\"{d}\");\n            \
                     std::process::exit(1);\n        \
                 }\n    \
             }\n\
         }\n",
    )
    .unwrap();
    fs::write(dir.join("src/lib.rs"), "").unwrap();
    let pkg = Pkg {
        dir: dir.clone(),
        target_dir: root.join("target"),
        package: "gcn-it-nolift".into(),
    };
    let (out, ran) = pkg.build(&[("NO_COLOR", "1")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && ran, "{stderr}");
    // Cargo shows the build script's standard error indented under `--- stderr`.
    let shown: Vec<&str> = stderr
        .lines()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .skip_while(|l| !l.starts_with("error[GP"))
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(
        shown
            .first()
            .is_some_and(|l| l.starts_with("error[GP0011]: ")),
        "{stderr}"
    );
    insta::assert_snapshot!("GP0011_feature_disabled", shown.join("\n"));
}
