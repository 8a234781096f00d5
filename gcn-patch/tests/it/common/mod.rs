//! Shared helpers of gcn-patch's tests: the workspace test support
//! (`tests/support`: repository, corpus, required tools) plus the corpus
//! dumps with their targets, the real toolchain and an assembler.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use gcn_embed::TargetId;

#[path = "../../../../tests/support/mod.rs"]
mod support;
#[allow(unused_imports)]
pub use support::{
    copy_tree, corpus, corpus_dumps, repo, run_bounded, tool as required_tool, LLVM_INSTALL,
};

/// The real LLVM 22 toolchain (clang-22, ld.lld-22), found as the product
/// finds it, or a panic saying how to install it.
pub fn toolchain() -> gcn_patch::stage::toolchain::Toolchain {
    use gcn_patch::stage::toolchain::{Toolchain, ToolchainConfig};
    Toolchain::find(&ToolchainConfig::default(), &|k| std::env::var(k).ok())
        .unwrap_or_else(|d| panic!("{d}\n{LLVM_INSTALL}"))
}

/// Every corpus dump (`iree/<target>/*.rocmasm`, `hip/<target>/*.s`, and
/// Triton's `tests/triton/<kernel>-<target>/<kernel>.amdgcn`) with the target
/// it was compiled for, path relative to the workspace.
pub fn corpus_files() -> Vec<(PathBuf, TargetId)> {
    let mut out = vec![];
    for family in ["iree", "hip"] {
        let dir = corpus().join(family);
        let mut targets: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (run tests/corpus/regen.sh)", dir.display()))
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        targets.sort();
        for t in targets {
            let name = t.file_name().unwrap().to_string_lossy().to_string();
            let target = TargetId::parse(&name).expect("corpus target");
            let mut files: Vec<_> = std::fs::read_dir(&t)
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    matches!(
                        p.extension().and_then(|e| e.to_str()),
                        Some("s" | "rocmasm")
                    )
                })
                .collect();
            files.sort();
            out.extend(files.into_iter().map(|f| (f, target)));
        }
    }
    out.extend(triton_files());
    assert!(out.len() >= 45, "corpus incomplete: {} files", out.len());
    out
}

/// The Triton corpus (`tests/triton/<kernel>-<target>/<kernel>.amdgcn`, made by
/// `tests/triton/generate.py`) with each dump's target, sorted.
pub fn triton_files() -> Vec<(PathBuf, TargetId)> {
    let dir = repo().join("tests/triton");
    let mut out: Vec<(PathBuf, TargetId)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (run tests/triton/generate.py)", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .map(|d| {
            let name = d.file_name().unwrap().to_string_lossy().to_string();
            let (kernel, target) = name.split_once('-').expect("<kernel>-<target>");
            let target = TargetId::parse(target).expect("Triton corpus target");
            (d.join(format!("{kernel}.amdgcn")), target)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(
        out.len() >= 15,
        "Triton corpus incomplete: {} dumps",
        out.len()
    );
    out
}

/// Path relative to the workspace root, for stable snapshots.
pub fn rel(p: &Path) -> PathBuf {
    let root = repo();
    let root = root.canonicalize().unwrap_or(root);
    let p2 = p.canonicalize().unwrap_or(p.to_path_buf());
    p2.strip_prefix(&root).map(Path::to_path_buf).unwrap_or(p2)
}

fn tool(name: &str) -> String {
    let ok = Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "`{name}` not found: install LLVM 22 with AMDGPU (`apt-get install -y clang-22 lld-22 llvm-22`)"
    );
    name.to_string()
}

/// Assemble `text` for `mcpu` with clang-22 and link with ld.lld-22; returns
/// the code object bytes, or the tools' stderr.
pub fn assemble(text: &str, mcpu: &str) -> Result<Vec<u8>, String> {
    let clang = tool("clang-22");
    let lld = tool("ld.lld-22");
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let s = dir.path().join("k.s");
    let o = dir.path().join("k.o");
    let co = dir.path().join("k.hsaco");
    std::fs::write(&s, text).map_err(|e| e.to_string())?;
    let out = Command::new(&clang)
        .args(["-x", "assembler", "--target=amdgcn-amd-amdhsa"])
        .arg(format!("-mcpu={mcpu}"))
        .arg("-c")
        .arg(&s)
        .arg("-o")
        .arg(&o)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let out = Command::new(&lld)
        .arg("-shared")
        .arg(&o)
        .arg("-o")
        .arg(&co)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    std::fs::read(&co).map_err(|e| e.to_string())
}

/// The LLVM 22 spelling of IREE 3.13 (LLVM 24) target triples
/// (`amdgpu9.42-amd-amdhsa-unknown-gfx942` → `amdgcn-amd-amdhsa--gfx942`);
/// the retarget stage does this in the product.
pub fn llvm22(text: &str) -> String {
    let re =
        regex::Regex::new(r"amdgpu[0-9]+\.[0-9a-z]+-amd-amdhsa-unknown-(gfx[0-9a-z]+)").unwrap();
    re.replace_all(text, "amdgcn-amd-amdhsa--$1").into_owned()
}

/// `(group_segment_fixed_size, compute_pgm_rsrc3, compute_pgm_rsrc1)` of
/// kernel `kernel`'s descriptor, read with [`gcn_patch::stage::verify::kernel_descriptors`].
pub fn descriptor_fields(elf: &[u8], kernel: &str) -> (u32, u32, u32) {
    let kds = gcn_patch::stage::verify::kernel_descriptors(elf).expect("kernel descriptors");
    let f = kds
        .iter()
        .find(|k| k.name == kernel)
        .unwrap_or_else(|| panic!("no {kernel}.kd"))
        .fields;
    (
        f.group_segment_fixed_size,
        f.compute_pgm_rsrc3,
        f.compute_pgm_rsrc1,
    )
}

/// Run the real `gcn-patch` binary in `dir` (no backtraces, no Triton cache
/// from the environment, so outputs do not depend on the caller's shell).
pub fn run_cli(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .env_remove("TRITON_CACHE_DIR")
        .output()
        .expect("run gcn-patch")
}

/// The stdout of a run, as text.
pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Compile the HIP file `src` for `arch` (a processor or a generic target)
/// with clang-22, device code only, without ROCm (`-nogpuinc -nogpulib
/// -O3`), into `out`: a code object, or asm with `-S` among `extra`
/// (further flags: `-fno-discard-value-names`, …). A missing clang-22 or a
/// compile error fails the test with what to do.
pub fn compile_hip(src: &Path, arch: &str, out: &Path, extra: &[&str]) -> PathBuf {
    let clang = required_tool("clang-22", LLVM_INSTALL);
    let asm = extra.contains(&"-S");
    let o = Command::new(clang)
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "-nogpuinc",
            "-nogpulib",
            "-O3",
        ])
        .args(if asm {
            &[][..]
        } else {
            &["--no-gpu-bundle-output"][..]
        })
        .args(extra)
        .arg(format!("--offload-arch={arch}"))
        .arg(src)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run clang-22");
    assert!(
        o.status.success(),
        "clang-22 failed on {}: {}",
        src.display(),
        stderr(&o)
    );
    out.to_path_buf()
}

/// The f32 elements of an `.npy` file.
#[cfg(feature = "cli")]
pub fn npy_f32s(path: &Path) -> Vec<f32> {
    gcn_emu::npy::Array::read(path)
        .unwrap()
        .data
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The stderr of a run, as text.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The run, after asserting it succeeded (its stderr in the message otherwise).
pub fn ok(o: std::process::Output) -> std::process::Output {
    assert!(o.status.success(), "gcn-patch failed:\n{}", stderr(&o));
    o
}

/// `f` applied to every item, spread over the cores (each worker takes the
/// next item), the results in item order: for tests whose cases are
/// independent and run alone in their binary for most of its time.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = vec![];
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        out.push((i, f(item)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}
