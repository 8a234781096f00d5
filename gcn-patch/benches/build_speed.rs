//! Build speed (`cargo bench -p gcn-patch --bench build_speed`): it measures and
//! prints, it asserts nothing.
//!
//! 1. Cold build of the demo manifest (every kernel × target) through
//!    [`gcn_patch::pipeline::build::build_all`] against a plain script doing only the
//!    tool runs, `xargs -P$(nproc)` over `clang -x assembler
//!    --target=amdgcn-amd-amdhsa -mcpu=T -c` + `ld.lld -shared` on the same
//!    patched asm: paired runs (alternating order), median of the ratios.
//!    The build's time includes loading the manifest, patching, retargeting,
//!    every check and verification; the script's does not.
//! 2. Fully cached rerun (every object in the local cache).
//! 3. One-source edit: one dump changes (and its pin), the rest is cached.
//! 4. Through Cargo, as users run it: a cold `cargo build` of a copy of the
//!    demo crate (its build script assembles every job, then the crate
//!    compiles) against the plain script followed by the same `cargo build`
//!    of the crate (its sources touched, so it recompiles; the build script
//!    does not rerun). The copy has the demo's Cargo.toml profile sections
//!    (the configuration the README tells users to use), its own target
//!    directory under `target/build-speed-cargo` (dependencies are compiled
//!    once, before timing) and the workspace's Cargo.lock; `--offline`.
//!    Paired runs, alternating order, median of the ratios
//!    (`BUILD_SPEED_CARGO=0` skips this part; `--cargo-only` runs only it).
//! 5. Patch + checks on 10k, 100k and 1M generated lines (diff + rules, then
//!    retarget and every check for gfx942), each run in its own process so
//!    that its peak memory (VmHWM) is its own; three runs per size, then the
//!    medians.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use gcn_patch::base::hash::sha256_hex;
use gcn_patch::base::jobs::Unlimited;
use gcn_patch::config::manifest::Manifest;
use gcn_patch::pipeline;
use gcn_patch::pipeline::build::{build_all, BuildOptions};
use gcn_patch::pipeline::cache::ObjectCache;
use gcn_patch::stage::toolchain::Toolchain;

mod gen;

const PAIRS: usize = 7;

/// (wall, CPU) seconds of one round: plain script + cargo build, cold
/// cargo build, cold cargo build with the toolchain probed.
type Round = [(f64, f64); 3];

/// Rounds of the through-Cargo measurement.
const CARGO_PAIRS: usize = 5;

/// CPU seconds (user + system) of this process and its waited-for children so far.
fn cpu() -> f64 {
    let get = |who| {
        // SAFETY: getrusage fills the zeroed struct it is given.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut r) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        tv(r.ru_utime) + tv(r.ru_stime)
    };
    get(libc::RUSAGE_SELF) + get(libc::RUSAGE_CHILDREN)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn copy_project(from: &Path, to: &Path) {
    for sub in ["asm", "patches"] {
        for e in walkdir::WalkDir::new(from.join(sub)) {
            let e = e.expect("walk the demo");
            let dest = to.join(e.path().strip_prefix(from).expect("inside"));
            if e.file_type().is_dir() {
                std::fs::create_dir_all(&dest).expect("mkdir");
            } else {
                std::fs::copy(e.path(), &dest).expect("copy");
            }
        }
    }
    std::fs::copy(from.join("kernels.toml"), to.join("kernels.toml")).expect("copy manifest");
}

/// Load, plan and build the project at `dir` with the cache at `cache`: (seconds, assembled).
fn engine(tc: &Toolchain, dir: &Path, cache: &Path, jobs: usize) -> (f64, usize) {
    let t0 = Instant::now();
    let m = Manifest::load(&dir.join("kernels.toml")).unwrap_or_else(|e| panic!("{e}"));
    let plan = pipeline::plan_with(&m, &[], jobs, &Unlimited).unwrap_or_else(|e| panic!("{e}"));
    let opts = BuildOptions {
        toolchain: tc,
        cache: ObjectCache {
            local: cache.to_path_buf(),
            shared: None,
        },
        work_dir: cache.with_extension("work"),
        max_jobs: jobs,
        tokens: &Unlimited,
        progress: None,
        fingerprints: None,
    };
    let built = build_all(&m, &plan, &opts).unwrap_or_else(|e| panic!("{e}"));
    let secs = t0.elapsed().as_secs_f64();
    (secs, built.iter().filter(|b| b.cached.is_none()).count())
}

/// Write every job's patched asm and the script's argument list; returns the list file.
fn script_inputs(tc: &Toolchain, dir: &Path, out: &Path) -> (PathBuf, usize) {
    let m = Manifest::load(&dir.join("kernels.toml")).unwrap_or_else(|e| panic!("{e}"));
    let plan = pipeline::plan(&m, &[]).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(out).expect("mkdir");
    let mut list = String::new();
    for (i, job) in plan.jobs.iter().enumerate() {
        let p =
            pipeline::prepare(&m, &plan, job, tc.version.major).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(out.join(format!("j{i}.s")), p.asm.print()).expect("write asm");
        list.push_str(&format!("j{i} {}\n", job.target.name()));
    }
    let path = out.join("jobs.txt");
    std::fs::write(&path, list).expect("write list");
    (path, plan.jobs.len())
}

fn script(tc: &Toolchain, list: &Path, jobs: usize) -> f64 {
    let dir = list.parent().expect("dir");
    let body = format!(
        "{} -x assembler --target=amdgcn-amd-amdhsa -mcpu=\"$1\" -c \"$0.s\" -o \"$0.o\" && {} -shared \"$0.o\" -o \"$0.hsaco\"",
        tc.clang.display(),
        tc.lld.display()
    );
    let t0 = Instant::now();
    let st = Command::new("sh")
        .arg("-c")
        .arg(format!("xargs -P{jobs} -n2 sh -c '{body}' < jobs.txt"))
        .current_dir(dir)
        .status()
        .expect("run xargs");
    let secs = t0.elapsed().as_secs_f64();
    assert!(st.success(), "the plain script failed");
    secs
}

/// Child process: patch + checks on `lines` generated lines; prints one table row.
fn lines_child(lines: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (text, _) = gen::generate(lines);
    let diff = diffy::create_patch(&text, &gen::edited(&text)).to_string();
    std::fs::write(dir.path().join("big.s"), &text).expect("write");
    std::fs::write(dir.path().join("big.diff"), &diff).expect("write");
    let toml = format!(
        "[[kernel]]\nname = \"big\"\nhazards = \"warn\"\n[[kernel.source]]\nasm = \"big.s\"\nsha256 = \"{}\"\ntargets = [\"gfx942\"]\npatches = [\"big.diff\"]\n{}",
        sha256_hex(text.as_bytes()),
        gen::RULES
    );
    std::fs::write(dir.path().join("kernels.toml"), toml).expect("write");
    let n = text.lines().count();
    drop(text);
    let t0 = Instant::now();
    let m = Manifest::load(&dir.path().join("kernels.toml")).unwrap_or_else(|e| panic!("{e}"));
    let plan = pipeline::plan(&m, &[]).unwrap_or_else(|e| panic!("{e}"));
    let t_patch = t0.elapsed().as_secs_f64();
    let prepared = pipeline::prepare(&m, &plan, &plan.jobs[0], 22);
    let t_all = t0.elapsed().as_secs_f64();
    let outcome = match &prepared {
        Ok(p) => format!("ok, {} notes", p.notes.len()),
        Err(d) => format!("{} errors, first: {}", d.0.len(), d.0[0].message),
    };
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or("?".to_string(), |kb| format!("{:.0}", kb as f64 / 1024.0));
    println!(
        "{n:>9} {:>10.1} {:>12.1} {:>10.0} {:>9} {outcome}",
        t_patch * 1e3,
        t_all * 1e3,
        t_all * 1e9 / n as f64,
        hwm
    );
}

/// The `[profile…]` sections of a Cargo.toml, verbatim.
fn profile_sections(toml: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in toml.lines() {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn cargo_build(cargo: &str, proj: &Path, target: &Path, quiet: bool) {
    let mut c = Command::new(cargo);
    c.args(["build", "--offline"])
        .arg("--target-dir")
        .arg(target)
        .current_dir(proj)
        .env_remove("GCN_BUILD_CACHE_DIR")
        .env_remove("CARGO_TARGET_DIR");
    if quiet {
        c.arg("-q");
    }
    let st = c.status().expect("run cargo");
    assert!(st.success(), "cargo build of the demo copy failed");
}

/// Rewrite `path` with its own bytes: a new mtime, as an editor's save.
fn touch(path: &Path) {
    let bytes = std::fs::read(path).expect("read");
    std::fs::write(path, bytes).expect("write");
}

/// 4. Through Cargo: (cold cargo build, script + cargo build) seconds per pair.
fn through_cargo(repo: &Path, tc: &Toolchain, jobs: usize) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let base = repo.join("target/build-speed-cargo");
    let proj = base.join("demo");
    let target = base.join("target");
    let _ = std::fs::remove_dir_all(&proj);
    std::fs::create_dir_all(proj.join("src")).expect("mkdir");
    copy_project(repo, &proj);
    for f in ["build.rs", "src/lib.rs", "Cargo.lock"] {
        std::fs::copy(repo.join(f), proj.join(f)).expect("copy the demo");
    }
    let root = std::fs::read_to_string(repo.join("Cargo.toml")).expect("read Cargo.toml");
    // `BUILD_SPEED_CARGO_PROFILES=0`: without the demo's profile settings
    // (plain dev profile), in a target directory of its own.
    let plain_dev = std::env::var("BUILD_SPEED_CARGO_PROFILES").is_ok_and(|v| v == "0");
    let profiles = if plain_dev {
        String::new()
    } else {
        profile_sections(&root)
    };
    let target = if plain_dev {
        base.join("target-plain-dev")
    } else {
        target
    };
    std::fs::write(
        proj.join("Cargo.toml"),
        format!(
            "[package]\nname = \"gcn-patch-demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ngcn-embed = {{ path = {:?} }}\n\n[build-dependencies]\ngcn-build = {{ path = {:?} }}\n\n\
             [workspace]\n\n{profiles}",
            repo.join("gcn-embed"),
            repo.join("gcn-build"),
        ),
    )
    .expect("write Cargo.toml");
    println!(
        "through Cargo (dev profile{}): compiling the demo copy's dependencies once, untimed …",
        if profiles.is_empty() {
            String::new()
        } else {
            format!(", with {}", profiles.lines().collect::<Vec<_>>().join(" "))
        }
    );
    cargo_build(&cargo, &proj, &target, false);
    // The build script's OUT_DIR: the one whose generated file is newest.
    let out_dir = std::fs::read_dir(target.join("debug/build"))
        .expect("build dir")
        .filter_map(|e| {
            let out = e.ok()?.path().join("out");
            let t = out
                .join("gcn_kernels.rs")
                .metadata()
                .ok()?
                .modified()
                .ok()?;
            Some((t, out))
        })
        .max()
        .map(|(_, p)| p)
        .expect("the demo's OUT_DIR");
    let (list, _) = script_inputs(tc, &proj, &base.join("script"));
    // Cold: every object assembled. `fresh` also removes what the build
    // script remembers of the toolchain (gcn-build/toolchain.txt: the
    // probes' answers), as after a toolchain change or in a new target dir.
    let cold = |fresh: bool| {
        let gb = out_dir.join("gcn-build");
        if fresh {
            let _ = std::fs::remove_dir_all(&gb);
        } else if let Ok(entries) = std::fs::read_dir(&gb) {
            for e in entries.flatten() {
                if e.file_name() != "toolchain.txt" {
                    let p = e.path();
                    let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
                }
            }
        }
        touch(&proj.join("kernels.toml"));
        let (t0, c0) = (Instant::now(), cpu());
        cargo_build(&cargo, &proj, &target, true);
        let t = (t0.elapsed().as_secs_f64(), cpu() - c0);
        let report = std::fs::read_to_string(gb.join("report.txt")).expect("report");
        assert!(
            report.lines().all(|l| l.starts_with("assembled ")),
            "a cold build reused an object"
        );
        t
    };
    let plain = || {
        let (t0, c0) = (Instant::now(), cpu());
        script(tc, &list, jobs);
        touch(&proj.join("src/lib.rs"));
        cargo_build(&cargo, &proj, &target, true);
        (t0.elapsed().as_secs_f64(), cpu() - c0)
    };
    // One untimed round (page cache, the build script's first run).
    cold(true);
    cold(false);
    plain();
    // Triples in rotating order: plain, cold, cold with the toolchain probed.
    let mut rows: Vec<Round> = Vec::new();
    for i in 0..CARGO_PAIRS {
        let mut row = [(0.0, 0.0); 3];
        for k in 0..3 {
            row[(i + k) % 3] = match (i + k) % 3 {
                0 => plain(),
                1 => cold(false),
                _ => cold(true),
            };
        }
        let [p, c, f] = row;
        println!(
            "  round {i}: script + cargo build {:.3} s ({:.3} s CPU); cold cargo build {:.3} s \
             ({:.3} s CPU), ratio {:.3} (CPU {:.3}); with the toolchain probed {:.3} s, ratio {:.3} (CPU {:.3})",
            p.0,
            p.1,
            c.0,
            c.1,
            c.0 / p.0,
            c.1 / p.1,
            f.0,
            f.0 / p.0,
            f.1 / p.1
        );
        rows.push(row);
    }
    let med = |f: &dyn Fn(&Round) -> f64| median(rows.iter().map(f).collect());
    println!(
        "script + cargo build:          {:>7.3} s  ({:.3} s CPU)",
        med(&|r| r[0].0),
        med(&|r| r[0].1)
    );
    for (k, what) in [
        (1, "cold cargo build:"),
        (2, "  with the toolchain probed:"),
    ] {
        println!(
            "{what:<31}{:>7.3} s  ({:.3} s CPU)   ratio (median of {CARGO_PAIRS}): {:.2} wall, {:.2} CPU",
            med(&|r| r[k].0),
            med(&|r| r[k].1),
            med(&|r| r[k].0 / r[0].0),
            med(&|r| r[k].1 / r[0].1)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--lines-child") {
        lines_child(args[i + 1].parse().expect("line count"));
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo");
    let tc = Toolchain::find(&Default::default(), &|v| std::env::var(v).ok())
        .unwrap_or_else(|e| panic!("{e}"));
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let tmp = tempfile::tempdir().expect("tempdir");
    let proj = tmp.path().join("demo");
    copy_project(repo, &proj);
    // For profilers (`strace -f`, `perf`, callgrind): one cold build through
    // the engine (`--engine-once`), the plain script (`--script-once`), or
    // only the preparation of every job on one thread (`--prepare-once`).
    if args.iter().any(|a| a == "--engine-once") {
        let (t, n) = engine(&tc, &proj, &tmp.path().join("once"), jobs);
        println!("engine: {t:.3} s, {n} assembled");
        return;
    }
    if args.iter().any(|a| a == "--prepare-once") {
        let t0 = Instant::now();
        let (_, n) = script_inputs(&tc, &proj, &tmp.path().join("script"));
        println!("prepare: {:.3} s, {n} jobs", t0.elapsed().as_secs_f64());
        return;
    }
    if args.iter().any(|a| a == "--cargo-only") {
        through_cargo(repo, &tc, jobs);
        return;
    }
    if args.iter().any(|a| a == "--script-once") {
        let (list, _) = script_inputs(&tc, &proj, &tmp.path().join("script"));
        println!("script: {:.3} s", script(&tc, &list, jobs));
        return;
    }
    let t0 = Instant::now();
    let (list, njobs) = script_inputs(&tc, &proj, &tmp.path().join("script"));
    let prep = t0.elapsed().as_secs_f64();
    println!(
        "demo manifest: {njobs} kernel × target jobs, {jobs} workers, {}",
        tc.version_text
    );
    println!("load + patch + retarget + checks of every job, one thread: {prep:.3} s");

    // 1. Cold: paired runs, alternating which goes first.
    let (mut ratios, mut cold, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    let (mut cpu_ratios, mut cpu_cold, mut cpu_plain) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..PAIRS {
        let cache = tmp.path().join(format!("cold-{i}"));
        let run_script = || {
            let c0 = cpu();
            let s = script(&tc, &list, jobs);
            (s, cpu() - c0)
        };
        let run_engine = || {
            let c0 = cpu();
            let e = engine(&tc, &proj, &cache, jobs).0;
            (e, cpu() - c0)
        };
        let ((s, sc), (e, ec)) = if i % 2 == 0 {
            let s = run_script();
            (s, run_engine())
        } else {
            let e = run_engine();
            (run_script(), e)
        };
        ratios.push(e / s);
        cold.push(e);
        plain.push(s);
        cpu_ratios.push(ec / sc);
        cpu_cold.push(ec);
        cpu_plain.push(sc);
    }
    println!(
        "cold build:        {:>7.3} s   plain xargs script: {:>7.3} s   ratio (median of {PAIRS} pairs): {:.2}",
        median(cold),
        median(plain),
        median(ratios)
    );
    println!(
        "  CPU time:        {:>7.3} s   plain xargs script: {:>7.3} s   ratio (median of {PAIRS} pairs): {:.2}",
        median(cpu_cold),
        median(cpu_plain),
        median(cpu_ratios)
    );

    // 2. Fully cached rerun.
    let cache = tmp.path().join("cold-0");
    let reruns: Vec<f64> = (0..5)
        .map(|_| {
            let (t, assembled) = engine(&tc, &proj, &cache, jobs);
            assert_eq!(assembled, 0, "a rerun assembled");
            t
        })
        .collect();
    println!(
        "cached rerun:      {:>7.3} s   (0 assembled; median of 5)",
        median(reruns)
    );

    // 3. One source edited (a comment appended, pin updated): only its jobs rebuild.
    let manifest = proj.join("kernels.toml");
    let asm = proj.join("asm/hip/gfx11-generic/reduce.s");
    let mut edits = Vec::new();
    let mut assembled = 0;
    for i in 0..3 {
        let old = std::fs::read(&asm).expect("read dump");
        let mut new = old.clone();
        new.extend_from_slice(format!("; bench edit {i}\n").as_bytes());
        std::fs::write(&asm, &new).expect("write dump");
        let toml = std::fs::read_to_string(&manifest).expect("read manifest");
        std::fs::write(
            &manifest,
            toml.replace(&sha256_hex(&old), &sha256_hex(&new)),
        )
        .expect("write manifest");
        let (t, a) = engine(&tc, &proj, &cache, jobs);
        edits.push(t);
        assembled = a;
    }
    println!(
        "one-source edit:   {:>7.3} s   ({assembled} of {njobs} jobs assembled; median of 3)",
        median(edits)
    );

    // 4. Through Cargo.
    if !std::env::var("BUILD_SPEED_CARGO").is_ok_and(|v| v == "0") {
        through_cargo(repo, &tc, jobs);
    }

    // 5. Patch + checks on generated lines, one process per size
    //    (`BUILD_SPEED_LINES=0` skips this part).
    if std::env::var("BUILD_SPEED_LINES").is_ok_and(|v| v == "0") {
        return;
    }
    println!();
    println!("patch + checks, {LINE_RUNS} runs per size (one process each), then their medians:");
    println!(
        "{:>9} {:>10} {:>12} {:>10} {:>9} result",
        "lines", "patch ms", "+checks ms", "ns/line", "peak MiB"
    );
    let me = std::env::current_exe().expect("current exe");
    let mut medians = Vec::new();
    for n in [10_000usize, 100_000, 1_000_000] {
        let (mut patch, mut all, mut count) = (Vec::new(), Vec::new(), n as f64);
        for _ in 0..LINE_RUNS {
            let out = Command::new(&me)
                .args(["--lines-child", &n.to_string()])
                .output()
                .expect("run child");
            let row = String::from_utf8_lossy(&out.stdout);
            print!("{row}");
            if !out.status.success() {
                println!("{n:>9} failed ({})", out.status);
                continue;
            }
            let cols: Vec<f64> = row
                .split_whitespace()
                .take(3)
                .filter_map(|c| c.parse().ok())
                .collect();
            if let [lines, p, a] = cols[..] {
                count = lines;
                patch.push(p);
                all.push(a);
            }
        }
        if !all.is_empty() {
            medians.push((count, median(patch), median(all)));
        }
    }
    println!("medians:");
    for (n, p, a) in medians {
        println!("{n:>9} {p:>10.1} {a:>12.1} {:>10.0}", a * 1e6 / n);
    }
}

/// Runs per size of the patch + checks measurement.
const LINE_RUNS: usize = 3;
