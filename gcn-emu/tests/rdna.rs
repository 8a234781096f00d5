//! The gfx1100 (RDNA3) HIP corpus (gcn-emu/tests/rdna/, made by
//! generate.py with clang-22) run in the emulator and compared bit for bit
//! with references NumPy computes from the kernels' descriptions
//! (gcn-emu/tests/rdna/kernels/*.hip): wave32 (the default) and wave64
//! (`-mwavefrontsize64`).

mod common;
use common::*;

use std::path::{Path, PathBuf};

use gcn_emu::dispatch::{run, ArgValue, Launch, Stats};
use gcn_emu::memory::Memory;

/// Run once (the sanitizer's false-alarm pass of `common::launch` is not
/// made: its counters are gfx9's until it learns gfx11's `s_waitcnt`) and
/// return every buffer's bytes, in argument order.
fn launch(
    l: &Loaded,
    grid: [u32; 3],
    block: [u32; 3],
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
    let mut launch = Launch::new(grid, block);
    launch.max_instructions = 1_000_000;
    let k = l.co.kernel(&l.name).unwrap();
    let stats = run(&l.co, k, &l.program, &mem, &vals, &launch)?;
    Ok((
        bases.iter().map(|&b| mem.contents(b).unwrap()).collect(),
        stats,
    ))
}

fn corpus(target: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/rdna")
        .join(target)
        .join(format!("{name}.hsaco"))
}

/// Run `script` with NumPy: `ins[i]` is the raw bytes of `a{i}` (read
/// with `np.frombuffer`, the dtypes the script gives), and the script
/// sets `out` to a list of arrays; their bytes come back in order.
fn numpy(script: &str, ins: &[&[u8]]) -> Vec<Vec<u8>> {
    let dir = std::env::temp_dir().join(format!(
        "gcn-emu-rdna-np-{}-{:?}",
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

fn inputs(n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next_u32()).collect()
}

/// LDS, `s_barrier` between the two wave32 waves of a 64-thread block:
/// out[b*64+i] = in[b*64 + 63-i] * 2.
#[test]
fn lds_barrier_reverses_each_block_through_lds_across_two_wave32_waves() {
    let l = load(&corpus("gfx1100", "lds_barrier"), "lds_barrier");
    let k = l.co.kernel("lds_barrier").unwrap();
    assert!(k.descriptor.wave32() && k.wavefront_size == 32);
    let blocks = 5u32;
    let x = inputs(64 * blocks as usize, 1);
    let (bufs, stats) = launch(
        &l,
        [blocks, 1, 1],
        [64, 1, 1],
        vec![A::Buf(u32s(&x)), A::Buf(vec![0; x.len() * 4])],
    )
    .unwrap();
    assert_eq!(stats.waves, 2 * blocks as u64, "two wave32 waves a block");
    let want = numpy(
        "x = np.frombuffer(a0, np.int32).reshape(-1, 64)\nout = [(x[:, ::-1] * np.int32(2)).astype(np.int32)]",
        &[&u32s(&x)],
    );
    assert_eq!(to_u32(&bufs[1]), to_u32(&want[0]));
}
