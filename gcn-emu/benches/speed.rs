//! The emulator's speed against NumPy on one core, measured in one run
//! (issue "the emulator, round 2"): each figure is a ratio of two rates taken
//! on the same machine minutes apart, so that it says how far the emulator is
//! from the machine's own speed, whatever the machine.
//!
//! - **VALU-bound**: `tests/kernels/valu_loop.hip` (clang-22, gfx942), 8
//!   workgroups of 256 work-items, 2,000 rounds of integer arithmetic each:
//!   emulated lane-instructions per second (wave-instructions × 64) over
//!   NumPy's `np.add` of two u32 arrays of 2^24 elements, in elements per
//!   second.
//! - **IREE**: the corpus' 256×256×256 f16 matmul and 128×1024 f32 softmax
//!   (gfx942), lane-instructions per second.
//! - **NumPy's f32 matmul** (1024³, one BLAS thread) in multiply-accumulates
//!   per second, the yardstick of emulated MFMA GEMMs.
//!
//! - **aiter's `bf16gemm_bf16_tn_256x256`** (gfx950): one workgroup, one
//!   256×256 tile with K = 4096, in multiply-accumulates per second against
//!   NumPy's f32 matmul.
//! - **RDNA (wave32)**: `valu_loop` built for gfx1100 and the corpus' IREE
//!   softmax for gfx1100, lane-instructions per second (wave-instructions ×
//!   32).
//!
//! Every emulated run is single-threaded (`Launch::threads = 1`); NumPy runs
//! with `OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=MKL_NUM_THREADS=1`. Times are
//! the process's CPU time on both sides (`CLOCK_PROCESS_CPUTIME_ID`,
//! Python's `time.process_time`), so that a ratio holds on a loaded machine.
//! Needs clang-22 and python3 with NumPy.
//!
//! `cargo bench -p gcn-emu --bench speed` (`GCN_EMU_SPEED_ONLY=gemm` runs
//! only the aiter GEMM, for a profiler — or `valu`, `matmul`, `softmax`,
//! `valu_rdna`, `softmax_rdna`, a
//! comma-separated list; `GCN_EMU_SPEED_OLD=0` skips the old engine; `GCN_EMU_SPEED_MIX=1` also prints
//! each kernel's most executed mnemonics and whether the typed engine runs
//! them, from an observed launch).

use std::path::Path;
use std::process::Command;

use gcn_emu::decode::{find_objdump, Program};
use gcn_emu::dispatch::{run, run_observed, ArgValue, Launch, Stats};
use gcn_emu::load::CodeObject;
use gcn_emu::memory::Memory;

#[path = "../tests/it/common/mod.rs"]
mod common;

/// NumPy's rates on one core: (u32 add elements/s, f32 matmul MAC/s).
fn numpy() -> (f64, f64) {
    let script = r#"
import time, numpy as np
n = 1 << 24
a = np.arange(n, dtype=np.uint32); b = a[::-1].copy(); c = np.empty_like(a)
best = min((lambda t0: (np.add(a, b, out=c), time.process_time() - t0)[1])(time.process_time()) for _ in range(7))
m = 1024
x = np.random.default_rng(0).random((m, m), dtype=np.float32); y = x.T.copy()
mm = min((lambda t0: (x @ y, time.process_time() - t0)[1])(time.process_time()) for _ in range(3))
print(n / best, m ** 3 / mm)
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("OMP_NUM_THREADS", "1")
        .env("MKL_NUM_THREADS", "1")
        .output()
        .expect("python3 (with NumPy: pip install numpy)");
    assert!(
        out.status.success(),
        "python3 with NumPy failed (pip install numpy): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    (v[0], v[1])
}

/// Whether `GCN_EMU_SPEED_ONLY` (a comma-separated list; all when unset)
/// names kernel `what`.
fn wanted(what: &str) -> bool {
    std::env::var("GCN_EMU_SPEED_ONLY").map_or(true, |v| v.split(',').any(|w| w == what))
}

/// The process's CPU time in seconds.
fn cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "clock_gettime");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// CPU seconds of one single-threaded launch on the typed engine and on
/// the reference executor alone (the old engine), and the typed run's
/// stats; both must compute the same buffers (`out`).
fn timed(
    co: &CodeObject,
    kernel: &str,
    program: &Program,
    mem: &Memory,
    args: &[ArgValue],
    grid: u32,
    out: u64,
) -> (f64, f64, Stats) {
    let k = co.kernel(kernel).unwrap();
    let mut launch = Launch::new([grid, 1, 1], [256, 1, 1]);
    launch.threads = 1;
    launch.typed = false;
    let t = cpu();
    let with_old = std::env::var_os("GCN_EMU_SPEED_OLD").is_none_or(|v| v != "0");
    if with_old {
        run(co, k, program, mem, args, &launch).unwrap();
    }
    let old = cpu() - t;
    let before = mem.contents(out).unwrap();
    launch.typed = true;
    let t = cpu();
    let stats = run(co, k, program, mem, args, &launch).unwrap();
    let new = cpu() - t;
    assert!(
        !with_old || mem.contents(out).unwrap() == before,
        "{kernel}: the typed engine computed other results than the reference executor"
    );
    (old, new, stats)
}

/// Counts executed instructions by index.
struct Count(Vec<u64>);

impl gcn_emu::observe::Observer for Count {
    fn executed(&mut self, event: &gcn_emu::observe::Event<'_>) {
        self.0[event.index] += 1;
    }
}

struct Counts(usize);

impl gcn_emu::observe::Observe for Counts {
    type Workgroup = Count;
    fn workgroup(&self, _: [u32; 3]) -> Count {
        Count(vec![0; self.0])
    }
}

/// With `GCN_EMU_SPEED_MIX` set, print the kernel's most executed
/// mnemonics, each marked `typed` or `reference` (where it runs).
fn mix(
    co: &CodeObject,
    kernel: &str,
    program: &Program,
    mem: &Memory,
    args: &[ArgValue],
    grid: u32,
) {
    if std::env::var_os("GCN_EMU_SPEED_MIX").is_none() {
        return;
    }
    let k = co.kernel(kernel).unwrap();
    let mut launch = Launch::new([grid, 1, 1], [256, 1, 1]);
    launch.threads = 1;
    let (_, wgs) = run_observed(
        co,
        k,
        program,
        mem,
        args,
        &launch,
        &Counts(program.instructions.len()),
    )
    .unwrap();
    let wave = k.descriptor.wave32();
    let lowered = if gcn_emu::rdna::is_rdna(&co.processor) {
        let wave = if wave { 32 } else { 64 };
        gcn_emu::typed::lowered_for(&gcn_emu::rdna::executable(program), &co.processor, wave)
    } else {
        gcn_emu::typed::lowered(program)
    };
    let mut by: std::collections::HashMap<(String, bool), u64> = Default::default();
    let mut total = 0;
    for wg in &wgs {
        for (i, &n) in wg.0.iter().enumerate() {
            total += n;
            let ins = &program.instructions[i];
            *by.entry((ins.mnemonic.clone(), lowered[i])).or_default() += n;
        }
    }
    let mut v: Vec<_> = by.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    let fallback: u64 = v.iter().filter(|((_, l), _)| !l).map(|(_, n)| n).sum();
    println!(
        "  mix of {kernel}: {total} wave-instructions, {:.1} % on the reference executor",
        100.0 * fallback as f64 / total.max(1) as f64
    );
    // The most executed, then every other one the reference executor runs.
    let shown = v
        .iter()
        .enumerate()
        .filter(|(i, ((_, l), n))| *i < 12 || (!l && *n * 1000 >= total));
    for (_, ((m, l), n)) in shown {
        println!(
            "    {:6.2} %  {m} ({})",
            100.0 * *n as f64 / total.max(1) as f64,
            if *l { "typed" } else { "reference" }
        );
    }
}

/// Print one bench line: old and new rates, their ratio to NumPy's.
fn line(what: &str, unit: &str, work: f64, old: f64, new: f64, numpy: f64) {
    println!(
        "{what}: old engine {:.1} M {unit}/s = {:.4}x NumPy; new engine {:.1} M {unit}/s = {:.4}x NumPy ({:.1}x faster)",
        work / old / 1e6,
        work / old / numpy,
        work / new / 1e6,
        work / new / numpy,
        old / new
    );
}

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/iree/gfx942");
    let objdump = find_objdump(None).unwrap();
    let dir = std::env::temp_dir().join(format!("gcn-emu-speed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let (add_rate, mac_rate) = numpy();
    println!(
        "NumPy, one core: u32 add {:.1} M elements/s; f32 matmul 1024^3 {:.2} G MAC/s",
        add_rate / 1e6,
        mac_rate / 1e9
    );

    others(&objdump, &corpus, &dir, add_rate, mac_rate);
    if wanted("gemm") {
        gemm(&objdump, mac_rate);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The VALU-bound HIP kernel and IREE's matmul and softmax.
fn others(objdump: &Path, corpus: &Path, dir: &Path, add_rate: f64, mac_rate: f64) {
    // VALU-bound HIP kernel.
    if wanted("valu") {
        valu(objdump, dir, add_rate);
    }
    if wanted("matmul") {
        matmul(objdump, corpus, mac_rate);
    }
    if wanted("softmax") {
        softmax(objdump, corpus, add_rate);
    }
    if wanted("valu_rdna") {
        valu_rdna(objdump, dir, add_rate);
    }
    if wanted("softmax_rdna") {
        softmax_rdna(objdump, corpus, add_rate);
    }
}

/// The VALU-bound HIP kernel built for gfx1100 (RDNA3, wave32).
fn valu_rdna(objdump: &Path, dir: &Path, add_rate: f64) {
    let path = common::build("valu_loop", "gfx1100", dir);
    let co = CodeObject::read_file(&path).unwrap();
    let program = Program::disassemble(&co, co.kernel("valu_loop").unwrap(), objdump).unwrap();
    let n = 8 * 256;
    let mem = Memory::new();
    let seed = mem.alloc_bytes("seed", &common::u32s(&(0..n as u32).collect::<Vec<_>>()));
    let out = mem.alloc_bytes("out", &vec![0; 4 * n]);
    let args = [
        ArgValue::Pointer(seed),
        ArgValue::Pointer(out),
        ArgValue::Bytes(2000u32.to_le_bytes().to_vec()),
    ];
    mix(&co, "valu_loop", &program, &mem, &args, 8);
    let (old, new, stats) = timed(&co, "valu_loop", &program, &mem, &args, 8, out);
    line(
        &format!(
            "valu_loop (gfx1100 wave32, 8x256 items, 2000 rounds, {} wave-instructions)",
            stats.instructions
        ),
        "lane-instructions",
        stats.instructions as f64 * 32.0,
        old,
        new,
        add_rate,
    );
}

/// IREE softmax 128x1024 f32 for gfx1100 (wave32).
fn softmax_rdna(objdump: &Path, corpus: &Path, add_rate: f64) {
    softmax_of(
        objdump,
        &corpus.join("../gfx1100/softmax.hsaco"),
        "gfx1100 wave32",
        32,
        add_rate,
    );
}

/// The VALU-bound HIP kernel.
fn valu(objdump: &Path, dir: &Path, add_rate: f64) {
    let path = common::build("valu_loop", "gfx942", dir);
    let co = CodeObject::read_file(&path).unwrap();
    let program = Program::disassemble(&co, co.kernel("valu_loop").unwrap(), objdump).unwrap();
    let n = 8 * 256;
    let mem = Memory::new();
    let seed = mem.alloc_bytes("seed", &common::u32s(&(0..n as u32).collect::<Vec<_>>()));
    let out = mem.alloc_bytes("out", &vec![0; 4 * n]);
    let args = [
        ArgValue::Pointer(seed),
        ArgValue::Pointer(out),
        ArgValue::Bytes(2000u32.to_le_bytes().to_vec()),
    ];
    mix(&co, "valu_loop", &program, &mem, &args, 8);
    let (old, new, stats) = timed(&co, "valu_loop", &program, &mem, &args, 8, out);
    line(
        &format!(
            "valu_loop (gfx942, 8x256 items, 2000 rounds, {} wave-instructions)",
            stats.instructions
        ),
        "lane-instructions",
        stats.instructions as f64 * 64.0,
        old,
        new,
        add_rate,
    );
}

/// IREE matmul 256x256x256 f16 -> f32.
fn matmul(objdump: &Path, corpus: &Path, mac_rate: f64) {
    let co = CodeObject::read_file(&corpus.join("matmul.hsaco")).unwrap();
    let name = "matmul_dispatch_0_matmul_256x256x256_f16xf16xf32";
    let program = Program::disassemble(&co, co.kernel(name).unwrap(), objdump).unwrap();
    let halves: Vec<u8> = (0..256 * 256)
        .flat_map(|i| half::f16::from_f32((i % 7) as f32 / 8.0).to_le_bytes())
        .collect();
    let mem = Memory::new();
    let c = mem.alloc_bytes("c", &vec![0; 4 * 256 * 256]);
    let args = [
        ArgValue::Pointer(mem.alloc_bytes("a", &halves)),
        ArgValue::Pointer(mem.alloc_bytes("b", &halves)),
        ArgValue::Pointer(c),
    ];
    mix(&co, name, &program, &mem, &args, 8);
    let (old, new, _) = timed(&co, name, &program, &mem, &args, 8, c);
    let macs = 256f64 * 256.0 * 256.0;
    line(
        "IREE matmul 256x256x256 f16 (gfx942)",
        "MAC",
        macs,
        old,
        new,
        mac_rate,
    );
}

/// IREE softmax 128x1024 f32.
fn softmax(objdump: &Path, corpus: &Path, add_rate: f64) {
    softmax_of(
        objdump,
        &corpus.join("softmax.hsaco"),
        "gfx942",
        64,
        add_rate,
    );
}

/// IREE's softmax 128x1024 f32 in the object `path` (for `target`, waves of
/// `lanes`): its lane-instruction rate, old and new engine.
fn softmax_of(objdump: &Path, path: &Path, target: &str, lanes: u32, add_rate: f64) {
    let co = CodeObject::read_file(path).unwrap();
    let name = "softmax_dispatch_0_softmax_128x1024xf32_dispatch_tensor_store";
    let program = Program::disassemble(&co, co.kernel(name).unwrap(), objdump).unwrap();
    let x: Vec<u8> = (0..128 * 1024)
        .flat_map(|i| ((i % 97) as f32 / 10.0).to_le_bytes())
        .collect();
    let mem = Memory::new();
    let y = mem.alloc_bytes("y", &vec![0; x.len()]);
    let args = [
        ArgValue::Pointer(mem.alloc_bytes("x", &x)),
        ArgValue::Pointer(y),
    ];
    mix(&co, name, &program, &mem, &args, 128);
    let (old, new, stats) = timed(&co, name, &program, &mem, &args, 128, y);
    line(
        &format!("IREE softmax 128x1024 f32 ({target})"),
        "lane-instructions",
        stats.instructions as f64 * lanes as f64,
        old,
        new,
        add_rate,
    );
}

/// aiter's bf16 GEMM, one 256x256 tile, K = 4096 (arguments as aiter's
/// launcher sets them: gcn-emu/tests/it/aiter.rs).
fn gemm(objdump: &Path, mac_rate: f64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/aiter/gfx950/bf16gemm/bf16gemm_bf16_tn_256x256.co");
    let co = CodeObject::read_file(&path).unwrap();
    let name = "_ZN5aiter24bf16gemm_bf16_tn_256x256E";
    let kd = co.kernel(name).unwrap();
    let program = Program::disassemble(&co, kd, objdump).unwrap();
    let (m, n, k) = (256usize, 256usize, 4096usize);
    let ones: Vec<u8> = (0..m * k)
        .flat_map(|i| half::bf16::from_f32((i % 5) as f32 / 4.0).to_le_bytes())
        .collect();
    let mem = Memory::new();
    let d = mem.alloc_bytes("d", &vec![0; 2 * m * n]);
    let u32v = |v: usize| ArgValue::Bytes((v as u32).to_le_bytes().to_vec());
    let args: Vec<ArgValue> = kd
        .args
        .iter()
        .filter(|a| !a.is_hidden())
        .map(|arg| match arg.name.as_deref().unwrap_or("") {
            "D" => ArgValue::Pointer(d),
            "A" => ArgValue::Pointer(mem.alloc_bytes("a", &ones)),
            "B" => ArgValue::Pointer(mem.alloc_bytes("b", &ones)),
            "ptr_semaphore" => ArgValue::Pointer(mem.alloc_bytes("sem", &[0; 4])),
            "alpha" => ArgValue::Bytes(1.0f32.to_le_bytes().to_vec()),
            "strideD0" | "strideC0" => u32v(2 * n),
            "strideA0" | "strideB0" => u32v(2 * k),
            "Mdim" => u32v(m),
            "Ndim" => u32v(n),
            "Kdim" => u32v(k),
            "splitk" => u32v(1),
            "is_out_b16" => u32v(1),
            _ => ArgValue::Bytes(vec![0; arg.size as usize]),
        })
        .collect();
    mix(&co, name, &program, &mem, &args, 1);
    let (old, new, _) = timed(&co, name, &program, &mem, &args, 1, d);
    line(
        "aiter bf16gemm_bf16_tn_256x256 (gfx950, one workgroup, K=4096)",
        "MAC",
        (m * n * k) as f64,
        old,
        new,
        mac_rate,
    );
}
