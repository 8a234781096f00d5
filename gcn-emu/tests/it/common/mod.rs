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
    clang_version();
    PathBuf::from("clang-22")
}

/// `clang-22 --version`, asked once per test binary (it keys the build
/// cache), or a failure saying how to install it.
fn clang_version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| match Command::new("clang-22").arg("--version").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => panic!("clang-22 not found on PATH: install it with `apt-get install -y clang-22 lld-22 llvm-22` (or run tests/setup.sh)"),
    })
}

/// The clang-22 flags of a HIP kernel's device code object.
const HIP_FLAGS: &[&str] = &[
    "-x",
    "hip",
    "--cuda-device-only",
    "-nogpuinc",
    "-nogpulib",
    "-O3",
    "--no-gpu-bundle-output",
];

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
    match build_hip(&src, target) {
        Ok(cached) => {
            std::fs::copy(&cached, &out)
                .unwrap_or_else(|e| panic!("copy {} to {}: {e}", cached.display(), out.display()));
        }
        Err(err) => panic!("clang-22 failed on {}: {err}", src.display()),
    }
    out
}

/// Compile the HIP file `src` for `target` with clang-22 ([`HIP_FLAGS`])
/// once: the code object is kept in a cache shared by the test binaries
/// (under Cargo's `CARGO_TARGET_TMPDIR`), keyed by the source's bytes,
/// the target, the flags and clang's version, so a kernel that several
/// tests (or binaries) run is compiled once per CI run. Returns the cached
/// object (callers copy it before changing it), or clang's stderr.
pub fn build_hip(src: &Path, target: &str) -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let text = std::fs::read(src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&text, target, HIP_FLAGS, clang_version()).hash(&mut h);
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gcn-emu-hip-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let stem = src.file_stem().unwrap().to_string_lossy();
    let cached = cache.join(format!("{stem}-{target}-{:016x}.hsaco", h.finish()));
    // One compile per key in this process: a test that asks while another
    // thread compiles it waits for that result.
    type Slot = std::sync::Arc<std::sync::OnceLock<Result<PathBuf, String>>>;
    static SLOTS: std::sync::Mutex<Vec<(PathBuf, Slot)>> = std::sync::Mutex::new(Vec::new());
    let slot: Slot = {
        let mut slots = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        match slots.iter().find(|(k, _)| *k == cached) {
            Some((_, s)) => s.clone(),
            None => {
                let s = Slot::default();
                slots.push((cached.clone(), s.clone()));
                s
            }
        }
    };
    slot.get_or_init(|| compile_hip(src, target, &cache, &cached))
        .clone()
}

/// [`build_hip`]'s compile of `src` into `cached` (kept when it exists).
fn compile_hip(src: &Path, target: &str, cache: &Path, cached: &Path) -> Result<PathBuf, String> {
    if cached.exists() {
        return Ok(cached.to_path_buf());
    }
    // Compiled under a name of this process, then renamed: another test
    // binary reading the same key never sees a partial file.
    let partial = cache.join(format!(
        "{}.{}.tmp",
        cached.file_name().unwrap().to_string_lossy(),
        std::process::id()
    ));
    let st = Command::new(clang())
        .args(HIP_FLAGS)
        .arg(format!("--offload-arch={target}"))
        .arg(src)
        .arg("-o")
        .arg(&partial)
        .output()
        .expect("run clang-22");
    if !st.status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(String::from_utf8_lossy(&st.stderr).into_owned());
    }
    std::fs::rename(&partial, cached).unwrap();
    Ok(cached.to_path_buf())
}

/// Compile the HIP file `src` for `target` to assembly at `out` with
/// clang-22 (`-x hip --cuda-device-only -nogpuinc -nogpulib -O3 -S`), for
/// tests that read or edit the listing before assembling it; returns the
/// text. A failed compile panics with clang's stderr.
pub fn hip_asm(src: &Path, target: &str, out: &Path) -> String {
    let o = Command::new(clang())
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
        .arg(src)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run clang-22 (apt-get install -y clang-22, or bash tests/setup.sh)");
    assert!(
        o.status.success(),
        "clang-22 failed on {}: {}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(out).unwrap_or_else(|e| panic!("{}: {e}", out.display()))
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

/// `args` as kernel arguments in `mem`: each buffer allocated as `arg{i}`.
/// The argument values and the buffers' base addresses, in order.
pub fn alloc_args(mem: &Memory, args: &[A]) -> (Vec<ArgValue>, Vec<u64>) {
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
    (vals, bases)
}

/// [`launch`] with a launch description of the caller's (dynamic LDS, …).
pub fn launch_with(
    l: &Loaded,
    mut launch: Launch,
    args: Vec<A>,
) -> Result<(Vec<Vec<u8>>, Stats), gcn_emu::Error> {
    let mem = Memory::new();
    let (vals, bases) = alloc_args(&mem, &args);
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

/// Run `script` with NumPy: `ins[i]` is the raw bytes of `a{i}` (read
/// with `np.frombuffer`, the dtypes the script gives), and the script
/// sets `out` to a list of arrays; their bytes come back in order.
pub fn numpy(script: &str, ins: &[&[u8]]) -> Vec<Vec<u8>> {
    let dir = std::env::temp_dir().join(format!(
        "gcn-emu-np-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, b) in ins.iter().enumerate() {
        std::fs::write(dir.join(format!("a{i}.bin")), b).unwrap();
    }
    let prelude = format!(
        "import sys, numpy as np\nd = sys.argv[1]\n{}\n",
        (0..ins.len())
            .map(|i| format!("a{i} = open(d + '/a{i}.bin', 'rb').read()"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let epilogue = "\nfor j, o in enumerate(out):\n    open(d + f'/out{j}.bin', 'wb').write(np.ascontiguousarray(o).tobytes())\nprint(len(out))\n";
    let run = std::process::Command::new("python3")
        .arg("-c")
        .arg(format!("{prelude}{script}{epilogue}"))
        .arg(&dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("python3 not found ({e}): install it with NumPy (apt-get install -y python3-numpy, or bash tests/setup.sh)")
        });
    assert!(
        run.status.success(),
        "the NumPy reference failed (is NumPy installed? pip install numpy, or bash tests/setup.sh): {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let n: usize = String::from_utf8_lossy(&run.stdout).trim().parse().unwrap();
    let out = (0..n)
        .map(|j| std::fs::read(dir.join(format!("out{j}.bin"))).unwrap())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// The integer `key` of a Triton launch-metadata `.json` (generate.py
/// writes them beside the objects): at the top level (`num_warps`,
/// `shared`, `warp_size`) or in its `constexprs` (`BM`, ...).
pub fn triton_meta(json: &Path, key: &str) -> u32 {
    let text = std::fs::read_to_string(json).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (made by the generate.py beside it)",
            json.display()
        )
    });
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", json.display()));
    v.get(key)
        .or_else(|| v.get("constexprs").and_then(|c| c.get(key)))
        .and_then(|x| x.as_u64())
        .and_then(|x| u32::try_from(x).ok())
        .unwrap_or_else(|| panic!("{}: no integer `{key}`", json.display()))
}

/// `f` over `items` on every core (workers take the next item), the results
/// in `items`' order.
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
