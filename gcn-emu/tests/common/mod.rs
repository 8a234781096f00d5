//! Shared helpers of the emulator's tests: compile a HIP kernel with
//! clang-22, run it, read its buffers back.

#![allow(dead_code)]
// gcn_emu::Error is large by design (see the crate root).
#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};
use std::process::Command;

use gcn_emu::decode::{find_objdump, Program};
use gcn_emu::dispatch::{run, ArgValue, Launch, Stats};
use gcn_emu::load::CodeObject;
use gcn_emu::memory::Memory;
use gcn_emu::sanitize::Checks;

/// The targets every kernel is built for.
pub const TARGETS: &[&str] = &["gfx90a", "gfx942", "gfx950"];

/// clang-22, or a failure saying how to install it.
pub fn clang() -> PathBuf {
    for name in ["clang-22"] {
        if let Ok(out) = Command::new(name).arg("--version").output() {
            if out.status.success() {
                return PathBuf::from(name);
            }
        }
    }
    panic!("clang-22 not found on PATH: install it with `apt-get install -y clang-22 lld-22 llvm-22` (or run tests/setup.sh)");
}

/// Compile `tests/kernels/NAME.hip` (or the corpus' `tests/corpus/src/NAME.hip`)
/// for `target` into a code object; returns its path (in a temp dir kept for
/// the test's life).
pub fn build(name: &str, target: &str, dir: &Path) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut src = manifest.join("tests/kernels").join(format!("{name}.hip"));
    if !src.exists() {
        src = manifest
            .join("../tests/corpus/src")
            .join(format!("{name}.hip"));
    }
    let out = dir.join(format!("{name}-{target}.hsaco"));
    let st = Command::new(clang())
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "-nogpuinc",
            "-nogpulib",
            "-O3",
            "--no-gpu-bundle-output",
        ])
        .arg(format!("--offload-arch={target}"))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run clang-22");
    assert!(
        st.status.success(),
        "clang-22 failed on {}: {}",
        src.display(),
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

/// Assemble and link the corpus' clang-22 HIP dump `tests/corpus/hip/TARGET/NAME.s`
/// (as `gcn-patch assemble` would: clang-22 -x assembler, ld.lld-22 -shared).
pub fn assemble_corpus(name: &str, target: &str, dir: &Path) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = manifest
        .join("../tests/corpus/hip")
        .join(target)
        .join(format!("{name}.s"));
    assemble(&src, target, &format!("{name}-{target}-corpus"), dir)
}

/// Assemble and link the asm file `src` for `target` into `DIR/STEM.hsaco`.
pub fn assemble(src: &Path, target: &str, stem: &str, dir: &Path) -> PathBuf {
    let obj = dir.join(format!("{stem}.o"));
    let out = dir.join(format!("{stem}.hsaco"));
    let st = Command::new(clang())
        .args(["-target", "amdgcn-amd-amdhsa", "-x", "assembler", "-c"])
        .arg(format!("-mcpu={target}"))
        .arg(src)
        .arg("-o")
        .arg(&obj)
        .output()
        .expect("run clang-22");
    assert!(
        st.status.success(),
        "clang-22 failed on {}: {}",
        src.display(),
        String::from_utf8_lossy(&st.stderr)
    );
    let st = Command::new("ld.lld-22").arg("-shared").arg(&obj).arg("-o").arg(&out).output().unwrap_or_else(|e| {
        panic!("ld.lld-22 not runnable ({e}): install it with `apt-get install -y lld-22` (or run tests/setup.sh)")
    });
    assert!(
        st.status.success(),
        "ld.lld-22 failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

/// A loaded kernel ready to run.
pub struct Loaded {
    pub co: CodeObject,
    pub program: Program,
    pub name: String,
}

pub fn load(path: &Path, kernel: &str) -> Loaded {
    let co = CodeObject::read_file(path).unwrap();
    let k = co.kernel(kernel).unwrap().clone();
    let program = Program::disassemble(&co, &k, &find_objdump(None).unwrap()).unwrap();
    Loaded {
        co,
        program,
        name: kernel.to_string(),
    }
}

/// An argument of a test launch.
pub enum A {
    /// A buffer with these bytes.
    Buf(Vec<u8>),
    /// A value.
    Val(Vec<u8>),
}

/// Run and return every buffer's bytes afterwards, in argument order.
pub fn launch(
    l: &Loaded,
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<A>,
) -> Result<(Vec<Vec<u8>>, Stats), gcn_emu::Error> {
    launch_with(l, Launch::new(grid, block), args)
}

/// [`launch`] with a launch description of the caller's (dynamic LDS, …).
pub fn launch_with(
    l: &Loaded,
    mut launch: Launch,
    args: Vec<A>,
) -> Result<(Vec<Vec<u8>>, Stats), gcn_emu::Error> {
    let mem = Memory::new();
    let mut bases = Vec::new();
    let vals: Vec<ArgValue> = args
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            A::Buf(b) => {
                let p = mem.alloc_bytes(&format!("arg{i}"), b);
                bases.push(p);
                ArgValue::Pointer(p)
            }
            A::Val(v) => ArgValue::Bytes(v.clone()),
        })
        .collect();
    let k = l.co.kernel(&l.name).unwrap();
    launch.max_instructions = 10_000_000;
    let stats = run(&l.co, k, &l.program, &mem, &vals, &launch)?;
    let out: Vec<Vec<u8>> = bases.iter().map(|&b| mem.contents(b).unwrap()).collect();
    // Every clean run is also a false-alarm check of the sanitizer: the
    // same launch on fresh copies of the inputs must give no finding and
    // the same results.
    let mem2 = Memory::new();
    let vals2: Vec<ArgValue> = args
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            A::Buf(b) => ArgValue::Pointer(mem2.alloc_bytes(&format!("arg{i}"), b)),
            A::Val(v) => ArgValue::Bytes(v.clone()),
        })
        .collect();
    let mut sl = launch.clone();
    // The launch's own checks, if it names some; else the default ones.
    if sl.sanitize.is_empty() {
        sl.sanitize = Checks::DEFAULT;
    }
    let s = run(&l.co, k, &l.program, &mem2, &vals2, &sl)?;
    assert!(
        s.findings.is_empty(),
        "`{}`: the sanitizer reports on a kernel that ran clean:\n{}",
        l.name,
        s.findings
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    Ok((out, stats))
}

pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
pub fn to_u32(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A deterministic pseudo-random generator (xorshift64*), for inputs.
pub struct Rng(pub u64);
impl Rng {
    pub fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }
    /// Uniform in [-1, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }
}
