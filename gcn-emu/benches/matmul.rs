//! Emulation speed: IREE's 256×256×256 f16 matmul (tests/corpus, gfx942),
//! single-threaded and with workgroups on every core. Prints wall time and
//! emulated lane-instructions per second (wave-instructions × 64).
//! `cargo bench -p gcn-emu --bench matmul`

use std::path::Path;
use std::time::Instant;

use gcn_emu::decode::{find_objdump, Program};
use gcn_emu::dispatch::{run, ArgValue, Launch};
use gcn_emu::load::CodeObject;
use gcn_emu::memory::Memory;

fn main() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/iree/gfx942/matmul.hsaco");
    let co = CodeObject::read_file(&path).expect("the corpus matmul");
    let k = co
        .kernel("matmul_dispatch_0_matmul_256x256x256_f16xf16xf32")
        .unwrap();
    let program = Program::disassemble(&co, k, &find_objdump(None).unwrap()).unwrap();
    let ones: Vec<u8> = (0..256 * 256)
        .flat_map(|i| half::f16::from_f32((i % 7) as f32 / 8.0).to_le_bytes())
        .collect();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    for threads in [1, cores] {
        let mem = Memory::new();
        let a = mem.alloc_bytes("a", &ones);
        let b = mem.alloc_bytes("b", &ones);
        let c = mem.alloc_bytes("c", &vec![0; 4 * 256 * 256]);
        let mut launch = Launch::new([8, 1, 1], [256, 1, 1]);
        launch.threads = threads;
        let args = [
            ArgValue::Pointer(a),
            ArgValue::Pointer(b),
            ArgValue::Pointer(c),
        ];
        let t = Instant::now();
        let stats = run(&co, k, &program, &mem, &args, &launch).unwrap();
        let s = t.elapsed().as_secs_f64();
        println!(
            "matmul 256x256x256 f16, {threads} thread(s): {s:.3} s, {} wave-instructions, {:.1} M lane-instructions/s",
            stats.instructions,
            stats.instructions as f64 * 64.0 / s / 1e6
        );
    }
    // Softmax 128×1024 f32: 128 workgroups of mostly vector ALU work.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/iree/gfx942/softmax.hsaco");
    let co = CodeObject::read_file(&path).expect("the corpus softmax");
    let k = co
        .kernel("softmax_dispatch_0_softmax_128x1024xf32_dispatch_tensor_store")
        .unwrap();
    let program = Program::disassemble(&co, k, &find_objdump(None).unwrap()).unwrap();
    let x: Vec<u8> = (0..128 * 1024)
        .flat_map(|i| ((i % 97) as f32 / 10.0).to_le_bytes())
        .collect();
    for threads in [1, cores] {
        let mem = Memory::new();
        let a = mem.alloc_bytes("x", &x);
        let b = mem.alloc_bytes("y", &vec![0; x.len()]);
        let mut launch = Launch::new([128, 1, 1], [256, 1, 1]);
        launch.threads = threads;
        let t = Instant::now();
        let stats = run(
            &co,
            k,
            &program,
            &mem,
            &[ArgValue::Pointer(a), ArgValue::Pointer(b)],
            &launch,
        )
        .unwrap();
        let s = t.elapsed().as_secs_f64();
        println!(
            "softmax 128x1024 f32, {threads} thread(s): {s:.3} s, {} wave-instructions, {:.1} M lane-instructions/s",
            stats.instructions,
            stats.instructions as f64 * 64.0 / s / 1e6
        );
    }
}
