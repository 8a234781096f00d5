//! RDNA WMMA/SWMMAC (issue 35): the lane layouts of `gcn_emu::wmma` against
//! AMD's Matrix Instruction Calculator, and the arithmetic on instructions
//! assembled by llvm-mc-22 against a NumPy-free reference computed here from
//! the matrices themselves.

use gcn_emu::wmma::{Gen, Layout, Matrix, Op};

/// One layout of AMD's calculator (tests/rdna/wmma_layouts.txt): for each
/// register slot `(reg, lane, slot)` the element it holds, `(i, k)` of A and
/// the index, `(k, j)` of B, `(i, j)` of C/D.
struct Calc {
    head: String,
    gen: Gen,
    op: Op,
    wave: usize,
    m: Matrix,
    cells: std::collections::HashMap<(usize, usize, usize), (usize, usize)>,
}

fn calculator() -> &'static [Calc] {
    static ALL: std::sync::OnceLock<Vec<Calc>> = std::sync::OnceLock::new();
    ALL.get_or_init(read_calculator)
}

fn read_calculator() -> Vec<Calc> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rdna/wmma_layouts.txt");
    let text = std::fs::read_to_string(path).expect("tests/rdna/wmma_layouts.txt");
    let mut out = Vec::new();
    let mut lines = text.lines().filter(|l| !l.starts_with('#')).peekable();
    while let Some(head) = lines.next() {
        let f: Vec<&str> = head.split_whitespace().collect();
        assert_eq!(f[0], "layout", "{head}");
        let gen = match f[1] {
            "rdna3" => Gen::Gfx11,
            _ => Gen::Gfx12,
        };
        let op = Op::parse(f[2]).unwrap_or_else(|| panic!("{head}: not parsed"));
        let wave: usize = f[3].parse().unwrap();
        let m = match f[4] {
            "A" => Matrix::A,
            "B" => Matrix::B,
            "C" | "D" => Matrix::C,
            _ => Matrix::Index,
        };
        let cols: Vec<(usize, usize, usize)> = lines
            .next()
            .unwrap()
            .strip_prefix("cols ")
            .unwrap()
            .split(' ')
            .map(|c| {
                let v: Vec<usize> = c.split('.').map(|x| x.parse().unwrap()).collect();
                (v[0], v[1], v[2])
            })
            .collect();
        let mut cells = std::collections::HashMap::new();
        while let Some(row) = lines.next_if(|l| !l.starts_with("layout")) {
            let (lane, hex) = row.split_once(' ').unwrap();
            let lane: usize = lane.parse().unwrap();
            for (c, &(reg, lo, hi)) in cols.iter().enumerate() {
                let cell = &hex[3 * c..3 * c + 3];
                if cell != "---" {
                    let i = usize::from_str_radix(&cell[..1], 16).unwrap();
                    let k = usize::from_str_radix(&cell[1..], 16).unwrap();
                    // B's cells are (j, k) of B[k][j].
                    let e = if m == Matrix::B { (k, i) } else { (i, k) };
                    // Keyed by slot index: the slot width is the column's.
                    cells.insert((reg, lane, lo / (hi - lo)), e);
                }
            }
        }
        out.push(Calc {
            head: head.to_string(),
            gen,
            op,
            wave,
            m,
            cells,
        });
    }
    out
}

/// Every register slot of every lane of one instruction per layout class
/// (both generations, both wave sizes, A, B, C/D and the sparse index) is
/// the element AMD's calculator says (tests/rdna/wmma_layouts.txt, made by
/// tests/rdna/wmma_layouts.py from the calculator), and no other slot holds
/// one.
#[test]
fn layouts_are_amds_calculators() {
    let all = calculator();
    let mut cells = 0;
    for c in all {
        let l = Layout::new(c.gen, c.wave, c.op).unwrap_or_else(|| panic!("{}: no layout", c.head));
        let sb = l.slot_bits(c.m);
        let mut ours = 0;
        for reg in 0..l.regs(c.m) {
            for lane in 0..c.wave {
                for slot in 0..32 / sb {
                    let got = l.element(c.m, reg, lane, slot);
                    let want = c.cells.get(&(reg, lane, slot)).copied();
                    assert_eq!(got, want, "{}: v{reg} lane {lane} slot {slot}", c.head);
                    ours += got.is_some() as usize;
                }
            }
        }
        assert_eq!(
            ours,
            c.cells.len(),
            "{}: slots outside our registers",
            c.head
        );
        cells += ours;
    }
    assert_eq!(all.len(), 108, "layouts in the file");
    assert_eq!(cells, 38_400, "slots in the file");
}

use crate::common;
use common::{load, numpy, to_f32, to_u32, triton_meta, u32s, Loaded, Rng, A};

use std::path::{Path, PathBuf};

use gcn_emu::dispatch::{run, ArgValue, Launch};
use gcn_emu::memory::Memory;

fn corpus(target: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/rdna")
        .join(target)
        .join(format!("{name}.hsaco"))
}

/// Run (`common::launch`: also the sanitizer's false-alarm pass, which
/// must find nothing) and return every buffer's bytes, in argument order.
fn launch(l: &Loaded, grid: [u32; 3], block: [u32; 3], args: Vec<A>) -> Vec<Vec<u8>> {
    common::launch(l, grid, block, args)
        .unwrap_or_else(|e| panic!("{}: {e}", l.name))
        .0
}

/// f16 bits of small integers in [-r, r]: their products and sums of 16
/// (or K) of them are exact in f32, so any summation order gives the same
/// bits.
fn small_f16(n: usize, r: i32, seed: u64) -> Vec<u16> {
    let mut g = Rng(seed);
    (0..n)
        .map(|_| {
            let v = (g.next_u32() % (2 * r as u32 + 1)) as i32 - r;
            half::f16::from_f32(v as f32).to_bits()
        })
        .collect()
}

/// Random f16 values in about [-2, 2] (not exactly summable).
fn random_f16(n: usize, seed: u64) -> Vec<u16> {
    let mut g = Rng(seed);
    (0..n)
        .map(|_| half::f16::from_f32(g.f32() * 4.0 - 2.0).to_bits())
        .collect()
}

fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The corpus' `wmma` kernel (one `v_wmma_f32_16x16x16_f16`, A and B
/// row-major 16×16 f16, C and D row-major f32) on `target`, against NumPy:
/// bit for bit on small integers (every partial sum exact), and on random
/// f16 against the model's rounding (the exact products summed in f64 and
/// rounded once to f32: what hardware's order and precision give is not
/// claimed).
fn hip_wmma(target: &str) {
    let l = load(&corpus(target, "wmma"), "wmma");
    for (exact, seed) in [(true, 1u64), (false, 2)] {
        let (a, b) = if exact {
            (small_f16(256, 8, seed), small_f16(256, 8, seed + 10))
        } else {
            (random_f16(256, seed), random_f16(256, seed + 10))
        };
        let c: Vec<f32> = small_f16(256, 100, seed + 20)
            .iter()
            .map(|&h| half::f16::from_bits(h).to_f32())
            .collect();
        let cb: Vec<u8> = c.iter().flat_map(|x| x.to_le_bytes()).collect();
        let bufs = launch(
            &l,
            [1, 1, 1],
            [32, 1, 1],
            vec![
                A::Buf(u16s(&a)),
                A::Buf(u16s(&b)),
                A::Buf(cb.clone()),
                A::Buf(vec![0; 1024]),
            ],
        );
        let want = numpy(
            "a = np.frombuffer(a0, np.float16).reshape(16, 16).astype(np.float64)\n\
             b = np.frombuffer(a1, np.float16).reshape(16, 16).astype(np.float64)\n\
             c = np.frombuffer(a2, np.float32).reshape(16, 16).astype(np.float64)\n\
             out = [(a @ b + c).astype(np.float32)]",
            &[&u16s(&a), &u16s(&b), &cb],
        );
        let (got, want) = (to_f32(&bufs[3]), to_f32(&want[0]));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{target} wmma (exact inputs: {exact}): D[{}][{}] = {g}, NumPy {w}",
                i / 16,
                i % 16
            );
        }
    }
}

/// The wave64 twin (`wmma_w64.hip`, `-mwavefrontsize64`, one block of 64
/// threads), against NumPy bit for bit on small integers.
fn hip_wmma_w64(target: &str) {
    let l = load(&corpus(target, "wmma_w64"), "wmma_w64");
    let k = l.co.kernel("wmma_w64").unwrap();
    assert!(!k.descriptor.wave32() && k.wavefront_size == 64);
    let (a, b) = (small_f16(256, 8, 70), small_f16(256, 8, 71));
    let c: Vec<u8> = small_f16(256, 100, 72)
        .iter()
        .flat_map(|&h| half::f16::from_bits(h).to_f32().to_le_bytes())
        .collect();
    let bufs = launch(
        &l,
        [1, 1, 1],
        [64, 1, 1],
        vec![
            A::Buf(u16s(&a)),
            A::Buf(u16s(&b)),
            A::Buf(c.clone()),
            A::Buf(vec![0xff; 1024]),
        ],
    );
    let want = numpy(
        "a = np.frombuffer(a0, np.float16).reshape(16, 16).astype(np.float64)\n\
         b = np.frombuffer(a1, np.float16).reshape(16, 16).astype(np.float64)\n\
         c = np.frombuffer(a2, np.float32).reshape(16, 16).astype(np.float64)\n\
         out = [(a @ b + c).astype(np.float32).view(np.uint32)]",
        &[&u16s(&a), &u16s(&b), &c],
    );
    assert_eq!(to_u32(&bufs[3]), to_u32(&want[0]), "{target} wmma_w64");
}

#[test]
fn hip_wmma_w64_gfx1100_matches_numpy() {
    hip_wmma_w64("gfx1100");
}

#[test]
fn hip_wmma_w64_gfx1201_matches_numpy() {
    hip_wmma_w64("gfx1201");
}

#[test]
fn hip_wmma_gfx1100_matches_numpy() {
    hip_wmma("gfx1100");
}

/// gfx12's layout on the same kernel.
#[test]
fn hip_wmma_gfx1201_matches_numpy() {
    hip_wmma("gfx1201");
}

/// Triton 3.9's `tl.dot` matmul for `target` (tests/rdna/TARGET/
/// triton_matmul.{hsaco,json}: BM = BN = BK = 32, 4 wave32 warps): a
/// 64×96 by 96×64 f16 product on a 2×2 grid, three K steps per program,
/// against NumPy. Small-integer inputs (every partial sum exact in f32)
/// must match bit for bit. Random f16 in [-1, 1) (`exact` false) must be
/// within 1e-3: the kernel rounds to f32 after each of its six WMMAs per
/// output (two per K step of 32), NumPy once.
fn triton_matmul(target: &str, exact: bool) {
    const M: usize = 64;
    const N: usize = 64;
    const K: usize = 96;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/rdna")
        .join(target);
    let json = dir.join("triton_matmul.json");
    let field = |key: &str| triton_meta(&json, key);
    let (warps, shared, warp) = (field("num_warps"), field("shared"), field("warp_size"));
    let bm = field("BM") as usize;
    // Triton's objects run as Triton wrote them (gfx1250's prologue sets
    // MODE bit 25, which the emulator accepts: design/rdna.md, gfx1250).
    let l = load(&dir.join("triton_matmul.hsaco"), "matmul");
    if target == "gfx1250" {
        assert!(
            l.program
                .instructions
                .iter()
                .any(|i| i.mnemonic == "ds_load_tr16_b128"),
            "Triton's gfx1250 matmul loads B with ds_load_tr16_b128"
        );
    }
    let (a, b) = if exact {
        (small_f16(M * K, 4, 7), small_f16(K * N, 4, 8))
    } else {
        let mut g = Rng(9);
        let mut f = |n: usize| -> Vec<u16> {
            (0..n)
                .map(|_| half::f16::from_f32(g.f32()).to_bits())
                .collect()
        };
        (f(M * K), f(K * N))
    };
    let mem = Memory::new();
    let pa = mem.alloc_bytes("a", &u16s(&a));
    let pb = mem.alloc_bytes("b", &u16s(&b));
    let pc = mem.alloc_bytes("c", &vec![0xff; 4 * M * N]);
    let mut args = vec![
        ArgValue::Pointer(pa),
        ArgValue::Pointer(pb),
        ArgValue::Pointer(pc),
    ];
    for v in [M, N, K] {
        args.push(ArgValue::Bytes((v as u32).to_le_bytes().to_vec()));
    }
    // Triton's global and profile scratch pointers: null (none needed).
    args.push(ArgValue::Bytes(vec![0; 8]));
    args.push(ArgValue::Bytes(vec![0; 8]));
    let mut launch = Launch::new([(M / bm) as u32, (N / bm) as u32, 1], [warps * warp, 1, 1]);
    launch.dynamic_lds = shared;
    launch.max_instructions = 10_000_000;
    let k = l.co.kernel("matmul").unwrap();
    let stats = run(&l.co, k, &l.program, &mem, &args, &launch)
        .unwrap_or_else(|e| panic!("{target} triton matmul: {e}"));
    assert_eq!(stats.waves, 4 * warps as u64);
    let got = to_f32(&mem.contents(pc).unwrap());
    let want = numpy(
        &format!(
            "a = np.frombuffer(a0, np.float16).reshape({M}, {K}).astype(np.float64)\n\
             b = np.frombuffer(a1, np.float16).reshape({K}, {N}).astype(np.float64)\n\
             out = [(a @ b).astype(np.float32)]"
        ),
        &[&u16s(&a), &u16s(&b)],
    );
    let want = to_f32(&want[0]);
    if !exact {
        let worst = (0..M * N)
            .map(|i| (got[i] - want[i]).abs())
            .fold(0f32, f32::max);
        assert!(
            worst < 1e-3,
            "{target} triton matmul: worst absolute error {worst}"
        );
        return;
    }
    for i in 0..M * N {
        assert_eq!(
            got[i].to_bits(),
            want[i].to_bits(),
            "{target} triton matmul: C[{}][{}] = {}, NumPy {}",
            i / N,
            i % N,
            got[i],
            want[i]
        );
    }
}

/// Triton's gfx11 code also needs true16 (`v_mov_b16_e32 v9.l, 0`) and
/// VOPD pairs from the core.
#[test]
fn triton_matmul_gfx1100_matches_numpy() {
    triton_matmul("gfx1100", true);
    triton_matmul("gfx1100", false);
}

/// Triton 3.9's gfx1250 matmul (tests/rdna/gfx1250, generate.py gfx1250):
/// its B tiles go through LDS and `ds_load_tr16_b128` into
/// `v_wmma_f32_16x16x32_f16`, so its products are NumPy's only if the
/// transposing load's lane map and the WMMA's layout agree with what
/// Triton's compiler assumed (bit for bit on small integers, random f16
/// within 1e-3 as gfx1100's).
#[test]
fn triton_matmul_gfx1250_matches_numpy() {
    triton_matmul("gfx1250", true);
    triton_matmul("gfx1250", false);
}

/// `text` assembled by llvm-mc-22 for `target` in wave `wave`, printed back
/// as a listing line (`\tTEXT // 000000000000: WORDS`, the words its
/// encoding) and parsed as the emulator parses llvm-objdump's.
fn assembled(target: &str, wave: usize, text: &str) -> gcn_emu::decode::Instruction {
    use std::io::Write;
    let mut p = std::process::Command::new("llvm-mc-22")
        .args(["-triple=amdgcn", "-show-encoding"])
        .arg(format!("-mcpu={target}"))
        .arg(format!("-mattr=+wavefrontsize{wave}"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("llvm-mc-22 not runnable ({e}): apt-get install -y llvm-22 (or bash tests/setup.sh)"));
    p.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = p.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "llvm-mc-22 refuses `{text}` for {target} wave{wave}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().find(|l| l.contains("encoding:")).unwrap();
    let (body, enc) = line.split_once(" ; encoding: ").unwrap();
    let bytes: Vec<u8> = enc
        .trim_matches(['[', ']'])
        .split(',')
        .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap())
        .collect();
    let words: Vec<String> = bytes
        .chunks(4)
        .map(|c| format!("{:08X}", u32::from_le_bytes(c.try_into().unwrap())))
        .collect();
    let listing = format!("\t{} // 000000000000: {}", body.trim(), words.join(" "));
    gcn_emu::decode::parse_line(&listing)
        .unwrap()
        .unwrap_or_else(|| panic!("not an instruction line: {listing}"))
}

/// An element format as the NumPy reference decodes it.
fn np_decode(fmt: &str, var: &str, signed: bool) -> String {
    match fmt {
        "f16" => format!("{var}.astype(np.uint16).view(np.float16).astype(np.float64)"),
        "bf16" => format!("({var}.astype(np.uint32) << 16).view(np.float32).astype(np.float64)"),
        "f32" => format!("{var}.astype(np.uint32).view(np.float32).astype(np.float64)"),
        "i32" => format!("{var}.astype(np.uint32).view(np.int32).astype(np.int64)"),
        "fp8" | "bf8" => {
            // OCP E4M3 / E5M2 by their definition (sign, biased exponent,
            // mantissa; exponent 0 is subnormal).
            let (e, m, bias) = if fmt == "fp8" { (4, 3, 7) } else { (5, 2, 15) };
            format!(
                "(lambda x: np.where(x >> 7, -1.0, 1.0) * np.where((x >> {m}) & {em} == 0, \
                 (x & {mm}) / {mf} * 2.0 ** (1 - {bias}), \
                 (1 + (x & {mm}) / {mf}) * 2.0 ** (((x >> {m}) & {em}).astype(np.int64) - {bias})))({var}.astype(np.int64))",
                em = (1 << e) - 1,
                mm = (1 << m) - 1,
                mf = 1 << m
            )
        }
        "iu8" if signed => format!("{var}.astype(np.uint8).view(np.int8).astype(np.int64)"),
        "iu4" if signed => format!("(({var}.astype(np.int64) ^ 8) - 8)"),
        _ => format!("{var}.astype(np.int64)"),
    }
}

/// One assembled instruction on matrices of element codes: the codes go
/// into registers where AMD's calculator says (not the emulator's own
/// layout), `gcn_emu::wmma::decode` and `compute` run it, D comes back out
/// through the calculator's C layout and must equal NumPy's A·B + C bit for
/// bit. `a` is 16×K codes (sparse: dense, two non-zero codes per group of
/// four), `b` K×16, `c` 16×16. The inputs keep every sum exact in f64
/// (small values; fp8's whole range), so the one rounding to D's type,
/// which NumPy makes too, is all that separates D from the math.
#[allow(clippy::too_many_arguments)]
fn check_assembled(
    target: &str,
    wave: usize,
    text: &str,
    fmt: (&str, &str, &str),
    signed: (bool, bool),
    a: &[u32],
    b: &[u32],
    c: &[u32],
    reference: &str,
) {
    let ins = assembled(target, wave, text);
    let x = gcn_emu::wmma::decode(&ins).unwrap_or_else(|e| panic!("{text}: {e}"));
    let l = x.layout;
    let gen = Gen::of_target(target).unwrap();
    assert_eq!((l.gen, l.wave), (gen, wave), "{text}: layout");
    let k = l.op.k;
    let all = calculator();
    let class = |m: Matrix| -> &Calc {
        all.iter()
            .find(|c| {
                c.gen == gen
                    && c.wave == wave
                    && c.m == m
                    && c.op.k == k
                    && c.op.sparse == l.op.sparse
                    && c.op.a.bits() == l.op.a.bits()
                    && c.op.acc.bits() == l.op.acc.bits()
            })
            .unwrap_or_else(|| panic!("{text}: no calculator layout for {m:?}"))
    };
    let w = l.op.a.bits();
    let accb = l.op.acc.bits();
    let hi_half = if x.mods.op_sel_hi_half { 16 } else { 0 };
    let mut regs: std::collections::HashMap<(Matrix, usize), Vec<u32>> = Default::default();
    let mut put = |m: Matrix, reg: usize, lane: usize, bit: usize, width: usize, v: u32| {
        let word = &mut regs.entry((m, reg)).or_insert_with(|| vec![0; wave])[lane];
        let mask = ((1u64 << width) - 1) as u32;
        *word = *word & !(mask << bit) | (v & mask) << bit;
    };
    // The old D (= C's registers here): garbage in the half a gfx11 16-bit
    // result does not write.
    if accb == 16 && gen == Gen::Gfx11 {
        for reg in 0..l.regs(Matrix::C) {
            for lane in 0..wave {
                put(
                    Matrix::C,
                    reg,
                    lane,
                    16 - hi_half,
                    16,
                    0x5a5a ^ (reg * 64 + lane) as u32,
                );
            }
        }
    }
    for (&(reg, lane, slot), &(i, kk)) in &class(Matrix::A).cells {
        if l.op.sparse {
            let group = &a[i * k + kk..i * k + kk + 4];
            let nz: Vec<usize> = (0..4).filter(|&t| group[t] != 0).collect();
            assert_eq!(nz.len(), 2, "sparse A row {i} group {kk}: two non-zeros");
            for (s, &t) in nz.iter().enumerate() {
                put(Matrix::A, reg, lane, slot * 2 * w + s * w, w, group[t]);
            }
        } else {
            put(Matrix::A, reg, lane, slot * w, w, a[i * k + kk]);
        }
    }
    for (&(reg, lane, slot), &(kk, j)) in &class(Matrix::B).cells {
        put(Matrix::B, reg, lane, slot * w, w, b[kk * 16 + j]);
    }
    for (&(reg, lane, slot), &(i, j)) in &class(Matrix::C).cells {
        put(
            Matrix::C,
            reg,
            lane,
            slot * accb + hi_half,
            accb,
            c[i * 16 + j],
        );
    }
    if l.op.sparse {
        let off = 4 * x.mods.index_key * (32 / 4 / l.index_sets());
        for (&(_, lane, slot), &(i, kk)) in &class(Matrix::Index).cells {
            let group = &a[i * k + kk..i * k + kk + 4];
            let nz: Vec<u32> = (0..4)
                .filter(|&t| group[t] != 0)
                .map(|t| t as u32)
                .collect();
            put(
                Matrix::Index,
                0,
                lane,
                off + 4 * slot,
                4,
                nz[0] | nz[1] << 2,
            );
        }
    }
    let read =
        |m: Matrix, reg: usize, lane: usize| -> u32 { regs.get(&(m, reg)).map_or(0, |v| v[lane]) };
    let old = |reg: usize, lane: usize| read(Matrix::C, reg, lane);
    let d =
        gcn_emu::wmma::compute(&l, &x.mods, &read, &old).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut got = vec![0u32; 256];
    for (&(reg, lane, slot), &(i, j)) in &class(Matrix::C).cells {
        let word = d[reg][lane];
        got[i * 16 + j] = if accb == 32 {
            word
        } else {
            word >> (slot * 16 + hi_half) & 0xffff
        };
        if accb == 16 && gen == Gen::Gfx11 {
            assert_eq!(
                word >> (16 - hi_half) & 0xffff,
                0x5a5a ^ (reg * 64 + lane) as u32,
                "{text}: v{reg} lane {lane}: the half op_sel does not select is kept"
            );
        }
    }
    let a_bytes = u32s(a);
    let b_bytes = u32s(b);
    let c_bytes = u32s(c);
    let script = format!(
        "A = np.frombuffer(a0, np.uint32).reshape(16, {k})\n\
         B = np.frombuffer(a1, np.uint32).reshape({k}, 16)\n\
         C = np.frombuffer(a2, np.uint32).reshape(16, 16)\n\
         a = {}\nb = {}\nc = {}\n{reference}\n",
        np_decode(fmt.0, "A", signed.0),
        np_decode(fmt.1, "B", signed.1),
        np_decode(fmt.2, "C", true),
    );
    let want = to_u32(&numpy(&script, &[&a_bytes, &b_bytes, &c_bytes])[0]);
    for i in 0..256 {
        assert_eq!(
            got[i],
            want[i],
            "{text}: D[{}][{}] = {:#x}, NumPy {:#x}",
            i / 16,
            i % 16,
            got[i],
            want[i]
        );
    }
}

/// Codes of small values of `fmt` (their products and sums exact).
fn codes(n: usize, fmt: &str, seed: u64) -> Vec<u32> {
    let mut g = Rng(seed);
    (0..n)
        .map(|_| {
            let v = (g.next_u32() % 7) as i32 - 3;
            match fmt {
                "f16" => half::f16::from_f32(v as f32).to_bits() as u32,
                "bf16" => half::bf16::from_f32(v as f32).to_bits() as u32,
                "f32" => (v as f32 * 4.0).to_bits(),
                // OCP E4M3 / E5M2 codes: any but NaN/inf (exponent all ones
                // is excluded for both, a subset that keeps sums exact).
                "fp8" | "bf8" => {
                    let top = if fmt == "fp8" { 0x70 } else { 0x78 };
                    let c = g.next_u32() % top;
                    c | (g.next_u32() & 0x80)
                }
                "iu4" => g.next_u32() & 0xf,
                "i32" => g.next_u32() % 2000,
                _ => g.next_u32() & 0xff,
            }
        })
        .collect()
}

/// 4:2 sparse: in every group of four K two random places keep their code.
fn sparsify(a: &mut [u32], seed: u64) {
    let mut g = Rng(seed);
    for group in a.chunks_mut(4) {
        let p = g.next_u32() as usize % 4;
        let q = (p + 1 + g.next_u32() as usize % 3) % 4;
        for (t, v) in group.iter_mut().enumerate() {
            if t != p && t != q {
                *v = 0;
            } else if *v == 0 {
                *v = 1;
            }
        }
    }
}

const F32_REF: &str = "out = [(a @ b + c).astype(np.float32).view(np.uint32)]";

#[test]
fn assembled_gfx11_iu8_signed_a_unsigned_b_with_clamp() {
    let (a, b) = (codes(256, "iu8", 1), codes(256, "iu8", 2));
    // C near the i32 limits so that clamp saturates some sums.
    let c: Vec<u32> = (0..256)
        .map(|i| {
            if i % 3 == 0 {
                i32::MAX as u32 - 1000
            } else {
                (i32::MIN + 1000) as u32
            }
        })
        .collect();
    check_assembled(
        "gfx1100",
        32,
        "v_wmma_i32_16x16x16_iu8 v[0:7], v[8:11], v[12:15], v[0:7] neg_lo:[1,0,0] clamp",
        ("iu8", "iu8", "i32"),
        (true, false),
        &a,
        &b,
        &c,
        "out = [np.clip(a @ b + c, -2**31, 2**31 - 1).astype(np.int32).view(np.uint32)]",
    );
}

#[test]
fn assembled_gfx11_bf16() {
    check_assembled(
        "gfx1100",
        32,
        "v_wmma_f32_16x16x16_bf16 v[0:7], v[8:15], v[16:23], v[0:7]",
        ("bf16", "bf16", "f32"),
        (false, false),
        &codes(256, "bf16", 3),
        &codes(256, "bf16", 4),
        &codes(256, "f32", 5),
        F32_REF,
    );
}

#[test]
fn assembled_gfx11_f16_result_in_the_high_halves_with_op_sel() {
    check_assembled(
        "gfx1100",
        32,
        "v_wmma_f16_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7] op_sel:[0,0,1]",
        ("f16", "f16", "f16"),
        (false, false),
        &codes(256, "f16", 6),
        &codes(256, "f16", 7),
        &codes(256, "f16", 8),
        "out = [(a @ b + c).astype(np.float16).view(np.uint16).astype(np.uint32)]",
    );
}

#[test]
fn assembled_gfx11_wave64_f16_and_iu4() {
    check_assembled(
        "gfx1100",
        64,
        "v_wmma_f32_16x16x16_f16 v[0:3], v[8:15], v[16:23], v[0:3]",
        ("f16", "f16", "f32"),
        (false, false),
        &codes(256, "f16", 9),
        &codes(256, "f16", 10),
        &codes(256, "f32", 11),
        F32_REF,
    );
    check_assembled(
        "gfx1100",
        64,
        "v_wmma_i32_16x16x16_iu4 v[0:3], v[8:9], v[10:11], v[0:3] neg_lo:[1,1,0]",
        ("iu4", "iu4", "i32"),
        (true, true),
        &codes(256, "iu4", 12),
        &codes(256, "iu4", 13),
        &codes(256, "i32", 14),
        "out = [(a @ b + c).astype(np.int32).view(np.uint32)]",
    );
}

#[test]
fn assembled_gfx12_fp8_bf8() {
    check_assembled(
        "gfx1201",
        32,
        "v_wmma_f32_16x16x16_fp8_bf8 v[0:7], v[8:9], v[10:11], v[0:7]",
        ("fp8", "bf8", "f32"),
        (false, false),
        &codes(256, "fp8", 15),
        &codes(256, "bf8", 16),
        &codes(256, "f32", 17),
        F32_REF,
    );
}

#[test]
fn assembled_gfx12_f16_negated_a_and_c_and_bf16_result() {
    check_assembled(
        "gfx1201",
        32,
        "v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7] neg_lo:[1,0,1] neg_hi:[1,0,0]",
        ("f16", "f16", "f32"),
        (false, false),
        &codes(256, "f16", 18),
        &codes(256, "f16", 19),
        &codes(256, "f32", 20),
        "out = [(-a @ b - c).astype(np.float32).view(np.uint32)]",
    );
    check_assembled(
        "gfx1201",
        32,
        "v_wmma_bf16_16x16x16_bf16 v[0:3], v[8:11], v[12:15], v[0:3]",
        ("bf16", "bf16", "bf16"),
        (false, false),
        &codes(256, "bf16", 21),
        &codes(256, "bf16", 22),
        &codes(256, "bf16", 23),
        "s = (a @ b + c).astype(np.float32).view(np.uint32)\nassert (s & 0xffff == 0).all()\nout = [s >> 16]",
    );
}

#[test]
fn assembled_gfx12_swmmac() {
    let mut a = codes(16 * 32, "f16", 24);
    sparsify(&mut a, 25);
    check_assembled(
        "gfx1201",
        32,
        "v_swmmac_f32_16x16x32_f16 v[0:7], v[8:11], v[12:19], v20 index_key:1",
        ("f16", "f16", "f32"),
        (false, false),
        &a,
        &codes(32 * 16, "f16", 26),
        &codes(256, "f32", 27),
        F32_REF,
    );
    let mut a = codes(16 * 32, "iu8", 28);
    sparsify(&mut a, 29);
    check_assembled(
        "gfx1201",
        64,
        "v_swmmac_i32_16x16x32_iu8 v[0:3], v8, v[10:11], v20 neg_lo:[1,1,0]",
        ("iu8", "iu8", "i32"),
        (true, true),
        &a,
        &codes(32 * 16, "iu8", 30),
        &codes(256, "i32", 31),
        "out = [(a @ b + c).astype(np.int32).view(np.uint32)]",
    );
}

/// gfx1250's `v_wmma_f32_16x16x32_bf16` (wave32), assembled by llvm-mc-22
/// with its `matrix_a_reuse` hint, on matrices placed as AMD's FlyDSL
/// gfx1250 kernels place them (ROCm/FlyDSL `kernels/bmm_gfx1250.py`'s
/// `load_wmma_frag`: lane `l` holds A[l % 16][8h + e] in its elements 0–7
/// and A[l % 16][16 + 8h + e − 8] in 8–15, h = l / 16; B likewise by
/// column; D register `r` is D[8h + r][l % 16]): not an ISA document, a
/// claim the emulator shares. Against NumPy bit for bit.
#[test]
fn assembled_gfx1250_bf16_16x16x32() {
    let ins = assembled(
        "gfx1250",
        32,
        "v_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[0:7] matrix_a_reuse",
    );
    let x = gcn_emu::wmma::decode(&ins).unwrap();
    assert_eq!((x.layout.gen, x.layout.wave), (Gen::Gfx1250, 32));
    let (a, b, c) = (
        codes(16 * 32, "bf16", 40),
        codes(32 * 16, "bf16", 41),
        codes(256, "f32", 42),
    );
    let kof = |lane: usize, e: usize| 16 * (e / 8) + 8 * (lane / 16) + e % 8;
    let read = |m: Matrix, reg: usize, lane: usize| -> u32 {
        let (r, h) = (lane % 16, lane / 16);
        match m {
            Matrix::A => a[r * 32 + kof(lane, 2 * reg)] | a[r * 32 + kof(lane, 2 * reg + 1)] << 16,
            Matrix::B => b[kof(lane, 2 * reg) * 16 + r] | b[kof(lane, 2 * reg + 1) * 16 + r] << 16,
            Matrix::C => c[(8 * h + reg) * 16 + r],
            Matrix::Index => 0,
        }
    };
    let d = gcn_emu::wmma::compute(&x.layout, &x.mods, &read, &|_, _| 0).unwrap();
    let mut got = vec![0u32; 256];
    for (reg, lanes) in d.iter().enumerate() {
        for (lane, &v) in lanes.iter().enumerate().take(32) {
            got[(8 * (lane / 16) + reg) * 16 + lane % 16] = v;
        }
    }
    let script = format!(
        "A = np.frombuffer(a0, np.uint32).reshape(16, 32)\n\
         B = np.frombuffer(a1, np.uint32).reshape(32, 16)\n\
         C = np.frombuffer(a2, np.uint32).reshape(16, 16)\n\
         a = {}\nb = {}\nc = {}\n{F32_REF}\n",
        np_decode("bf16", "A", false),
        np_decode("bf16", "B", false),
        np_decode("f32", "C", true),
    );
    let want = to_u32(&numpy(&script, &[&u32s(&a), &u32s(&b), &u32s(&c)])[0]);
    assert_eq!(got, want);
}

/// gfx1250's `v_wmma_f32_16x16x64_{fp8,bf8}_{fp8,bf8}` (wave32; aiter's
/// gfx1250 kernels use the fp8_fp8 one), assembled by llvm-mc-22, on
/// matrices placed as AMD's rocjitsu emulator places them for CDNA5
/// (ROCm/rocm-systems `emulation/rocjitsu/.../shared/mma/layout.h`,
/// `wmma_input_loc` with dim 16, K 64, 8-bit data: block = 16 elements,
/// element `k` of row `i` is in lane `16·((k / 16) % 2) + i`, local element
/// `16·(k / 32) + k % 16`, byte `local % 4` of register `local / 4`; B
/// likewise by column; `wmma_output_loc_32`: D[row][col] is register
/// `row % 8` of lane `16·(row / 8) + col`). Written here from rocjitsu's
/// forward mapping (element to register), not the emulator's inverse. The
/// codes are OCP E4M3/E5M2 (NumPy decodes them by definition); bf8 codes
/// keep exponents 8–23 so every f64 partial sum is exact. Against NumPy
/// bit for bit.
#[test]
fn assembled_gfx1250_fp8_16x16x64() {
    for (fa, fb) in [
        ("fp8", "fp8"),
        ("fp8", "bf8"),
        ("bf8", "fp8"),
        ("bf8", "bf8"),
    ] {
        let text = format!(
            "v_wmma_f32_16x16x64_{fa}_{fb} v[0:7], v[8:15], v[16:23], v[24:31] matrix_b_reuse"
        );
        gfx1250_fp8(&text, 64, fa, fb);
    }
}

/// gfx1250's K = 128 fp8/bf8 WMMAs, `v_wmma_f32_16x16x128_{fp8,bf8}_{fp8,bf8}`
/// and `v_wmma_f32_16x16x128_f8f6f4` with its FP8/BF8 operand formats
/// (`matrix_a_fmt`/`matrix_b_fmt`, FP8 by default; aiter's gfx1250 kernels
/// use both names), as [`assembled_gfx1250_fp8_16x16x64`]: rocjitsu's
/// `wmma_input_loc` keeps 16-element blocks for 8-bit K = 128 (its comment:
/// "CDNA5 K=128 dense WMMA uses 16-element K blocks"), so element `k` is in
/// lane `16·((k / 16) % 2) + i`, local element `16·(k / 32) + k % 16`.
#[test]
fn assembled_gfx1250_fp8_16x16x128() {
    for (text, fa, fb) in [
        (
            "v_wmma_f32_16x16x128_fp8_fp8 v[0:7], v[8:23], v[24:39], v[40:47]",
            "fp8",
            "fp8",
        ),
        (
            "v_wmma_f32_16x16x128_bf8_fp8 v[0:7], v[8:23], v[24:39], v[40:47]",
            "bf8",
            "fp8",
        ),
        (
            "v_wmma_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47]",
            "fp8",
            "fp8",
        ),
        (
            "v_wmma_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39], v[40:47] \
             matrix_a_fmt:MATRIX_FMT_BF8 matrix_b_fmt:MATRIX_FMT_BF8",
            "bf8",
            "bf8",
        ),
    ] {
        gfx1250_fp8(text, 128, fa, fb);
    }
}

/// One gfx1250 fp8/bf8 WMMA of K `kk` (64 or 128) against NumPy, its
/// operands placed by rocjitsu's forward mapping (element to register).
fn gfx1250_fp8(text: &str, kk: usize, fa: &str, fb: &str) {
    let ins = assembled("gfx1250", 32, text);
    let x = gcn_emu::wmma::decode(&ins).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!((x.layout.gen, x.layout.wave), (Gen::Gfx1250, 32));
    let narrow = |v: Vec<u32>, f: &str| -> Vec<u32> {
        if f == "bf8" {
            v.iter()
                .map(|c| (c & 0x80) | (0x20 + (c & 0x7f) % 0x40))
                .collect()
        } else {
            v
        }
    };
    let a = narrow(codes(16 * kk, fa, 50), fa);
    let b = narrow(codes(kk * 16, fb, 51), fb);
    let c = codes(256, "f32", 52);
    // rocjitsu's forward mapping: (outer index, k) to (register, lane, byte).
    let loc = |i: usize, k: usize| {
        let lane = 16 * ((k / 16) % 2) + i;
        let local = 16 * (k / 32) + k % 16;
        (local / 4, lane, local % 4)
    };
    let mut regs = [[[0u32; 32]; 16]; 3];
    for i in 0..16 {
        for k in 0..kk {
            let (r, l, byte) = loc(i, k);
            regs[0][r][l] |= a[i * kk + k] << (8 * byte);
            regs[1][r][l] |= b[k * 16 + i] << (8 * byte);
        }
    }
    for row in 0..16 {
        for col in 0..16 {
            regs[2][row % 8][16 * (row / 8) + col] = c[row * 16 + col];
        }
    }
    let read = |m: Matrix, reg: usize, lane: usize| -> u32 {
        match m {
            Matrix::A => regs[0][reg][lane],
            Matrix::B => regs[1][reg][lane],
            Matrix::C => regs[2][reg][lane],
            Matrix::Index => 0,
        }
    };
    let d = gcn_emu::wmma::compute(&x.layout, &x.mods, &read, &|_, _| 0).unwrap();
    let mut got = vec![0u32; 256];
    for row in 0..16 {
        for col in 0..16 {
            got[row * 16 + col] = d[row % 8][16 * (row / 8) + col];
        }
    }
    let script = format!(
        "A = np.frombuffer(a0, np.uint32).reshape(16, {kk})\n\
         B = np.frombuffer(a1, np.uint32).reshape({kk}, 16)\n\
         C = np.frombuffer(a2, np.uint32).reshape(16, 16)\n\
         a = {}\nb = {}\nc = {}\n{F32_REF}\n",
        np_decode(fa, "A", false),
        np_decode(fb, "B", false),
        np_decode("f32", "C", true),
    );
    let want = to_u32(&numpy(&script, &[&u32s(&a), &u32s(&b), &u32s(&c)])[0]);
    assert_eq!(got, want, "{text}");
}

/// What `wmma::decode` does not understand is an error naming it, never a
/// guess or a panic: register counts of no layout, a modifier it does not
/// model, an index_key past the register's sets.
#[test]
fn wmma_decode_refuses_what_it_does_not_model() {
    let line = |t: &str| {
        gcn_emu::decode::parse_line(&format!("\t{t} // 000000000000: CC404011 1C460309"))
            .unwrap()
            .unwrap()
    };
    let e = gcn_emu::wmma::decode(&line(
        "v_wmma_f32_16x16x16_f16 v[0:3], v[8:11], v[12:15], v[0:3]",
    ))
    .unwrap_err();
    assert!(e.contains("match no RDNA3/RDNA4 layout"), "{e}");
    let e = gcn_emu::wmma::decode(&line(
        "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7] matrix_a_fmt:1",
    ))
    .unwrap_err();
    assert!(e.contains("matrix_a_fmt"), "{e}");
    let e = gcn_emu::wmma::decode(&line(
        "v_wmma_f32_16x16x128_f8f6f4 v[0:7], v[8:15], v[24:39], v[0:7] matrix_a_fmt:MATRIX_FMT_FP4",
    ))
    .unwrap_err();
    assert!(e.contains("matrix_a_fmt:MATRIX_FMT_FP4"), "{e}");
    let e = gcn_emu::wmma::decode(&line(
        "v_wmma_f32_32x16x128_f4 v[0:15], v[8:23], v[24:31], v[0:15]",
    ))
    .unwrap_err();
    assert!(e.contains("not implemented"), "{e}");
    let x = gcn_emu::wmma::decode(&line(
        "v_swmmac_i32_16x16x64_iu4 v[0:7], v[8:9], v[10:13], v20 index_key:1",
    ))
    .unwrap();
    let e = gcn_emu::wmma::compute(&x.layout, &x.mods, &|_, _, _| 0, &|_, _| 0).unwrap_err();
    assert!(e.contains("index_key:1"), "{e}");
}

/// IREE 3.13's 256×256×256 f16 matmul for `target` (tests/corpus/iree,
/// `v_wmma_f32_16x16x16_f16`, 4 wave32 waves a workgroup; `grid`
/// workgroups, as IREE tiled it for the target; gfx1100's spills to
/// scratch), against NumPy bit for bit on small integers (every
/// partial sum exact). The output starts as NaN, so a tile left unwritten
/// fails too.
fn iree_matmul(target: &str, grid: u32) {
    const N: usize = 256;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../tests/corpus/iree/{target}/matmul.hsaco"));
    let l = load(&path, "matmul_dispatch_0_matmul_256x256x256_f16xf16xf32");
    let a = small_f16(N * N, 2, 50);
    let b = small_f16(N * N, 2, 51);
    let bufs = launch(
        &l,
        [grid, 1, 1],
        [128, 1, 1],
        vec![
            A::Buf(u16s(&a)),
            A::Buf(u16s(&b)),
            A::Buf(vec![0xff; 4 * N * N]),
        ],
    );
    let got = to_u32(&bufs[2]);
    let want = numpy(
        "a = np.frombuffer(a0, np.float16).reshape(256, 256).astype(np.float64)\n\
         b = np.frombuffer(a1, np.float16).reshape(256, 256).astype(np.float64)\n\
         out = [(a @ b).astype(np.float32).view(np.uint32)]",
        &[&u16s(&a), &u16s(&b)],
    );
    let want = to_u32(&want[0]);
    if let Some(i) = (0..N * N).find(|&i| got[i] != want[i]) {
        panic!(
            "{target} IREE matmul: C[{}][{}] = {:#x}, NumPy {:#x} ({} differ)",
            i / N,
            i % N,
            got[i],
            want[i],
            (0..N * N).filter(|&i| got[i] != want[i]).count()
        );
    }
}

/// IREE 3.13's 3×3 conv (1×34×34×64 f16 input, 3×3×64×64 HWCF filter,
/// 1×32×32×64 f32 output) for `target`, WMMA over an implicit GEMM, 256
/// threads a workgroup, 8 workgroups: against NumPy bit for bit on small
/// integers.
fn iree_conv(target: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../tests/corpus/iree/{target}/conv.hsaco"));
    let l = load(&path, "conv_dispatch_0_conv_32x32x64x3x3x64_f16xf16xf32");
    let x = small_f16(34 * 34 * 64, 2, 60);
    let f = small_f16(3 * 3 * 64 * 64, 2, 61);
    let bufs = launch(
        &l,
        [8, 1, 1],
        [256, 1, 1],
        vec![
            A::Buf(u16s(&x)),
            A::Buf(u16s(&f)),
            A::Buf(vec![0xff; 4 * 32 * 32 * 64]),
        ],
    );
    let got = to_u32(&bufs[2]);
    let want = numpy(
        "x = np.frombuffer(a0, np.float16).reshape(34, 34, 64).astype(np.float64)\n\
         f = np.frombuffer(a1, np.float16).reshape(3, 3, 64, 64).astype(np.float64)\n\
         w = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(0, 1))\n\
         out = [np.einsum('hwcyx,yxco->hwo', w, f).astype(np.float32).view(np.uint32)]",
        &[&u16s(&x), &u16s(&f)],
    );
    let want = to_u32(&want[0]);
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{target} IREE conv: out[{}][{}][{}] = {:#x}, NumPy {:#x} ({} differ)",
            i / 2048,
            i / 64 % 32,
            i % 64,
            got[i],
            want[i],
            (0..got.len()).filter(|&i| got[i] != want[i]).count()
        );
    }
}

#[test]
fn iree_matmul_gfx1100_matches_numpy() {
    iree_matmul("gfx1100", 8);
}

#[test]
fn iree_conv_gfx1100_matches_numpy() {
    iree_conv("gfx1100");
}

/// gfx12's WMMA layouts in IREE's compiled kernels (its gfx1201 matmul
/// tiles the output for 16 workgroups).
#[test]
fn iree_matmul_and_conv_gfx1201_match_numpy() {
    iree_matmul("gfx1201", 16);
    iree_conv("gfx1201");
}

/// Triton's gfx1201 matmul: gfx12's WMMA layouts, true16, VOPD and
/// `v_xor3_b32` (its LDS swizzle).
#[test]
fn triton_matmul_gfx1201_matches_numpy() {
    triton_matmul("gfx1201", true);
    triton_matmul("gfx1201", false);
}
