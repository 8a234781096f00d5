//! Hostile inputs: descriptors, metadata, launches, listings and `.npy`
//! files built to exhaust memory, run forever or index past a table. Each
//! must be a typed [`gcn_emu::Error`] naming the field and the limit, never
//! an abort, a hang or a panic.

// gcn_emu::Error is large by design (see the crate root).
use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clang, f32s, TARGETS};
use gcn_emu::decode::{find_objdump, Program};
use gcn_emu::dispatch::{run, ArgValue, Launch};
use gcn_emu::load::CodeObject;
use gcn_emu::memory::Memory;
use gcn_emu::Error;

/// The corpus' saxpy compiled by clang-22 to asm for `target`, `from`
/// replaced by `to` (it must occur), assembled and linked.
fn saxpy_mutant(dir: &Path, target: &str, from: &str, to: &str) -> PathBuf {
    saxpy_edited(dir, target, |text| {
        assert!(text.contains(from), "`{from}` not in saxpy's asm");
        text.replacen(from, to, 1)
    })
}

/// The corpus' saxpy compiled by clang-22 to asm for `target`, changed by
/// `edit`, assembled and linked.
fn saxpy_edited(dir: &Path, target: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let text = saxpy_asm(dir, target);
    let m = dir.join(format!("saxpy-{target}-mutant.s"));
    std::fs::write(&m, edit(&text)).unwrap();
    common::assemble(&m, target, &format!("saxpy-{target}-mutant"), dir)
}

/// The corpus' saxpy compiled by clang-22 to asm for `target`, once per
/// target in this test binary (the mutants all start from it).
fn saxpy_asm(dir: &Path, target: &str) -> String {
    static ASM: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
    let mut asm = ASM.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, text)) = asm.iter().find(|(t, _)| t == target) {
        return text.clone();
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = manifest.join("../tests/corpus/src/saxpy.hip");
    let s = dir.join(format!("saxpy-{target}.s"));
    let o = Command::new(clang())
        .args(["-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib"])
        .args(["-O3", "-S", &format!("--offload-arch={target}")])
        .arg(&src)
        .arg("-o")
        .arg(&s)
        .output()
        .expect("run clang-22");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&s).unwrap();
    asm.push((target.to_string(), text.clone()));
    text
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "gcn-emu-hostile-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Saxpy {
    co: CodeObject,
    program: Program,
}

fn load(path: &Path) -> Saxpy {
    let co = CodeObject::read_file(path).unwrap();
    let k = co.kernel("saxpy").unwrap().clone();
    let program = Program::disassemble(&co, &k, &find_objdump(None).unwrap()).unwrap();
    Saxpy { co, program }
}

/// Run saxpy on `n` elements in `mem` (x = i, y = 1, a = 2).
fn run_saxpy(s: &Saxpy, mem: &Memory, launch: &Launch, n: u32) -> gcn_emu::Result<Vec<f32>> {
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let xa = mem.alloc_bytes("x", &f32s(&x));
    let ya = mem.alloc_bytes("y", &f32s(&vec![1.0; n as usize]));
    let args = [
        ArgValue::Bytes(2.0f32.to_le_bytes().to_vec()),
        ArgValue::Pointer(xa),
        ArgValue::Pointer(ya),
        ArgValue::Bytes(n.to_le_bytes().to_vec()),
    ];
    let k = s.co.kernel("saxpy").unwrap();
    let r = run(&s.co, k, &s.program, mem, &args, launch);
    let y = mem.contents(ya).unwrap();
    mem.free(xa);
    mem.free(ya);
    r?;
    Ok(y.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

fn limit(e: Error) -> (String, String, u128, u128) {
    match e {
        Error::Limit {
            context,
            field,
            value,
            limit,
            ..
        } => (context, field, value, limit),
        other => panic!("expected Error::Limit, got {other:?}"),
    }
}

#[test]
fn a_private_segment_over_the_memory_cap_is_refused_before_allocation() {
    let dir = TempDir::new();
    for target in TARGETS {
        let path = saxpy_mutant(
            dir.path(),
            target,
            ".amdhsa_private_segment_fixed_size 0",
            ".amdhsa_private_segment_fixed_size 4294967295",
        );
        let s = load(&path);
        let mem = Memory::new();
        let e = run_saxpy(&s, &mem, &Launch::new([1, 1, 1], [256, 1, 1]), 256).unwrap_err();
        let msg = e.to_string();
        let (context, field, value, cap) = limit(e);
        assert!(context.contains("saxpy"), "{msg}");
        assert!(
            field.contains(".amdhsa_private_segment_fixed_size 4294967295 × 64 lanes"),
            "{msg}"
        );
        assert!(value >= 4294967295u128 * 64 * 4, "{msg}");
        assert_eq!(cap, gcn_emu::dispatch::DEFAULT_MAX_MEMORY as u128);
        assert!(msg.contains("--max-memory"), "{msg}");
        // The dispatch's own allocations were freed on the error path too.
        assert_eq!(mem.allocations(), 0, "{msg}");
    }
}

#[test]
fn the_memory_cap_is_overridable_both_ways() {
    let dir = TempDir::new();
    let path = saxpy_mutant(
        dir.path(),
        "gfx942",
        ".amdhsa_private_segment_fixed_size 0",
        ".amdhsa_private_segment_fixed_size 1024",
    );
    let s = load(&path);
    let mem = Memory::new();
    // 4 waves × 1 KiB × 64 lanes = 256 KiB of scratch per workgroup.
    let mut launch = Launch::new([2, 1, 1], [256, 1, 1]);
    launch.threads = 1;
    let y = run_saxpy(&s, &mem, &launch, 512).unwrap();
    assert_eq!(y[7], 15.0);
    launch.max_memory = 200 << 10;
    let (_, field, value, cap) = limit(run_saxpy(&s, &mem, &launch, 512).unwrap_err());
    assert!(field.contains("1 workgroup(s) in flight"), "{field}");
    assert!(value > 256 << 10, "{value}");
    assert_eq!(cap, 200 << 10);
}

#[test]
fn a_grid_over_the_work_budget_is_refused_up_front_with_the_numbers() {
    let dir = TempDir::new();
    let s = load(&common::build("saxpy", "gfx942", dir.path()));
    let mem = Memory::new();
    let start = std::time::Instant::now();
    // The largest grid a dispatch packet holds: 2³² − 1 work-items a
    // dimension.
    let g = u32::MAX / 256;
    let launch = Launch::new([g; 3], [256, 1, 1]);
    let e = run_saxpy(&s, &mem, &launch, 256).unwrap_err();
    assert!(start.elapsed().as_secs() < 5, "not refused up front");
    let msg = e.to_string();
    let (_, field, value, cap) = limit(e);
    assert_eq!(value, (g as u128).pow(3) * 4, "{msg}");
    assert_eq!(cap, gcn_emu::dispatch::DEFAULT_MAX_WORK as u128);
    assert!(
        field.contains("4722365638444765413375 workgroups × 4 waves"),
        "{msg}"
    );
    assert!(msg.contains("--max-work"), "{msg}");
    // One more workgroup in x does not fit the packet's 32 bits.
    let launch = Launch::new([g + 1, 1, 1], [256, 1, 1]);
    let msg = run_saxpy(&s, &mem, &launch, 256).unwrap_err().to_string();
    assert!(
        msg.contains("4294967296 work-items in x") && msg.contains("grid_size_x"),
        "{msg}"
    );
}

#[test]
fn the_work_budget_stops_a_run_that_reaches_it() {
    let dir = TempDir::new();
    let s = load(&common::build("saxpy", "gfx942", dir.path()));
    let mem = Memory::new();
    let mut launch = Launch::new([64, 1, 1], [256, 1, 1]);
    let y = run_saxpy(&s, &mem, &launch, 64 * 256).unwrap();
    assert_eq!(y[100], 201.0);
    // 256 waves fit the budget up front; their instructions do not.
    launch.max_work = 1000;
    for threads in [1, 2] {
        launch.threads = threads;
        let (context, field, value, cap) =
            limit(run_saxpy(&s, &mem, &launch, 64 * 256).unwrap_err());
        assert!(context.contains("stopped at workgroup"), "{context}");
        assert!(field.contains("executed"), "{field}");
        assert_eq!(cap, 1000);
        assert!(value >= 1000, "{value}");
    }
}

#[test]
fn a_reused_memory_does_not_grow() {
    let dir = TempDir::new();
    let s = load(&common::build("saxpy", "gfx942", dir.path()));
    let mem = Memory::new();
    let keep = mem.alloc_bytes("keep", &[1, 2, 3]);
    for _ in 0..3 {
        run_saxpy(&s, &mem, &Launch::new([1, 1, 1], [256, 1, 1]), 256).unwrap();
        assert_eq!(mem.allocations(), 1);
        assert_eq!(mem.allocated(), 3);
    }
    assert_eq!(mem.contents(keep).unwrap(), [1, 2, 3]);
}

#[test]
fn npy_shapes_whose_product_overflows_are_refused() {
    let npy = |shape: &str, data: usize| {
        let mut h =
            format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}").into_bytes();
        h.push(b'\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((h.len() as u16).to_le_bytes());
        b.extend(h);
        b.extend(vec![0u8; data]);
        b
    };
    // 2^62 × 4 elements of 4 bytes wrap to 0 bytes in 64 bits.
    let e = gcn_emu::npy::Array::parse(&npy("(4611686018427387904, 4)", 0)).unwrap_err();
    assert!(e.contains("needs 73786976294838206464"), "{e}");
    let e = gcn_emu::npy::Array::parse(&npy(
        "(18446744073709551615, 18446744073709551615, 18446744073709551615)",
        0,
    ))
    .unwrap_err();
    assert!(e.contains("needs more than 2^128"), "{e}");
    // The well-formed one still reads.
    let a = gcn_emu::npy::Array::parse(&npy("(2, 3)", 24)).unwrap();
    assert_eq!(a.shape, [2, 3]);
}

#[test]
fn metadata_offset_plus_size_that_overflows_is_refused_at_load() {
    let dir = TempDir::new();
    for (offset, size) in [("18446744073709551615", "8"), ("4294967295", "8")] {
        let path = saxpy_mutant(
            dir.path(),
            "gfx942",
            "        .offset:         8\n        .size:           8",
            &format!("        .offset:         {offset}\n        .size:           {size}"),
        );
        let e = CodeObject::read_file(&path).unwrap_err();
        let msg = e.to_string();
        let (context, field, value, cap) = limit(e);
        assert!(context.contains("kernel `saxpy`: argument 1"), "{msg}");
        assert!(field.contains(".offset + .size"), "{msg}");
        assert_eq!(
            value,
            offset.parse::<u128>().unwrap() + size.parse::<u128>().unwrap()
        );
        assert_eq!(cap, gcn_emu::load::MAX_KERNARG_BYTES as u128);
    }
}

#[test]
fn a_kernel_built_by_hand_with_a_wrapping_argument_is_refused_at_dispatch() {
    let dir = TempDir::new();
    let s = load(&common::build("saxpy", "gfx942", dir.path()));
    let mut k = s.co.kernel("saxpy").unwrap().clone();
    k.args[1].offset = u32::MAX;
    let args = [
        ArgValue::Bytes(vec![0; 4]),
        ArgValue::Pointer(0),
        ArgValue::Pointer(0),
        ArgValue::Bytes(vec![0; 4]),
    ];
    let e = gcn_emu::dispatch::kernarg_bytes(&k, &args, &Launch::new([1; 3], [64, 1, 1]));
    let (_, field, value, _) = limit(e.unwrap_err());
    assert!(field.contains(".offset + .size"), "{field}");
    assert_eq!(value, u32::MAX as u128 + 8);
}

/// saxpy's program with its first instruction replaced by `text`.
fn with_first(s: &Saxpy, text: &str) -> gcn_emu::Result<Program> {
    let k = s.co.kernel("saxpy").unwrap();
    let listing = format!("\t{text} // {:012X}: 00000000 00000000\n", k.entry);
    Program::parse_listing(&listing, k)
}

#[test]
fn register_ranges_past_the_file_are_decode_errors() {
    let dir = TempDir::new();
    let s = load(&common::build("saxpy", "gfx942", dir.path()));
    for (text, reg) in [
        ("v_mov_b32 v[0:65535], 0", "v[0:65535]"),
        ("v_mov_b32 v0, v1024", "v1024"),
        ("s_mov_b64 s[126:128], 0", "s[126:128]"),
        ("s_mov_b32 ttmp16, 0", "ttmp16"),
        ("v_accvgpr_read_b32 v0, a256", "a256"),
        ("s_mov_b32 s0, ttmp65535", "ttmp65535"),
    ] {
        match with_first(&s, text) {
            Err(Error::Decode { what }) => {
                assert!(
                    what.contains(reg) && what.contains("beyond the register file"),
                    "{what}"
                )
            }
            other => panic!("`{text}`: expected a decode error, got {other:?}"),
        }
    }
}

/// The executor's own check stays as a defence behind the load-time one:
/// registers it reads wider than LLVM printed them (a 64-bit read of
/// `exec_hi`, a 4-register buffer base at `exec`) pass the load-time check,
/// which sees named registers, and fault when run.
#[test]
fn a_64_bit_read_past_the_last_sgpr_is_a_typed_fault() {
    let dir = TempDir::new();
    let s = load(&common::build("saxpy", "gfx942", dir.path()));
    let k = s.co.kernel("saxpy").unwrap();
    for text in [
        "v_add_f64 v[0:1], exec_hi, v[2:3]",
        "s_load_dwordx2 exec_hi, s[0:1], 0x0",
        "s_buffer_load_dword s0, exec, 0x0",
    ] {
        let p = with_first(&s, text).unwrap();
        p.check_registers(k).unwrap();
        let mem = Memory::new();
        let args = [
            ArgValue::Bytes(vec![0; 4]),
            ArgValue::Pointer(0),
            ArgValue::Pointer(0),
            ArgValue::Bytes(vec![0; 4]),
        ];
        match run(&s.co, k, &p, &mem, &args, &Launch::new([1; 3], [64, 1, 1])) {
            Err(Error::Fault { what, .. }) => {
                assert!(
                    what.contains("beyond the 128 scalar registers"),
                    "{text}: {what}"
                )
            }
            other => panic!("`{text}`: expected a fault, got {other:?}"),
        }
    }
}

/// Register operands are checked against the descriptor's counts when a
/// dispatch starts, before anything runs (issue 33): saxpy for gfx942 as
/// clang-22 builds it allocates 16 SGPRs (`TotalNumSgprs: 14`, 8-blocks
/// field 1), 8 VGPRs and no AGPR (`.amdhsa_accum_offset 8`). The last
/// register of each allocation passes; one past it is an `Error::Limit`
/// naming the kernel, the instruction, the register and the limit; named
/// registers and constants are not counted.
#[test]
fn registers_past_the_descriptors_counts_are_refused_before_the_run() {
    let dir = TempDir::new();
    let s = load(&common::build("saxpy", "gfx942", dir.path()));
    let k = s.co.kernel("saxpy").unwrap();
    let d = &k.descriptor;
    assert_eq!(
        (d.sgpr_count(), d.vgpr_count(), d.agpr_count()),
        (16, 8, 0),
        "saxpy's descriptor as clang-22 builds it"
    );
    for text in [
        "v_mov_b32 v7, 0",
        "v_lshlrev_b64 v[6:7], 2, v[0:1]",
        "s_mov_b64 s[14:15], 0",
        "s_load_dwordx4 s[12:15], s[0:1], 0x8",
        "s_mov_b64 exec, vcc",
        "s_mov_b32 m0, -1",
        "s_mov_b64 s[0:1], flat_scratch",
        "s_mov_b64 ttmp[14:15], xnack_mask",
        "v_add_f32_e32 v0, 0.5, v1",
        "v_mov_b32_e32 v0, 0x12345678",
    ] {
        let p = with_first(&s, text).unwrap();
        p.check_registers(k)
            .unwrap_or_else(|e| panic!("`{text}` refused: {e}"));
    }
    for (text, reg, value, cap) in [
        ("v_mov_b32 v8, 0", "`v8`", 9, 8),
        ("v_mov_b32 v255, 0", "`v255`", 256, 8),
        ("v_lshlrev_b64 v[7:8], 2, v[0:1]", "`v[7:8]`", 9, 8),
        ("global_load_dwordx4 v[4:7], v[8:9], off", "`v[8:9]`", 10, 8),
        ("s_mov_b64 s[15:16], 0", "`s[15:16]`", 17, 16),
        (
            "s_load_dwordx8 s[8:15], s[16:17], 0x0",
            "`s[16:17]`",
            18,
            16,
        ),
        ("s_mov_b64 s[126:127], 0", "`s[126:127]`", 128, 102),
        ("s_mov_b32 s0, s102", "`s102`", 103, 102),
        ("v_accvgpr_write_b32 a0, 0", "`a0`", 1, 0),
        ("v_accvgpr_read_b32 v0, a255", "`a255`", 256, 0),
    ] {
        let p = with_first(&s, text).unwrap();
        let e = p.check_registers(k).unwrap_err();
        let msg = e.to_string();
        let (context, field, v, l) = limit(e);
        assert!(
            context.contains("kernel `saxpy`") && context.contains(text),
            "{msg}"
        );
        assert!(field.contains(reg), "{text}: {msg}");
        assert_eq!((v, l), (value, cap), "{text}: {msg}");
        // A dispatch refuses it the same way, before running anything.
        let mem = Memory::new();
        let args = [
            ArgValue::Bytes(vec![0; 4]),
            ArgValue::Pointer(0),
            ArgValue::Pointer(0),
            ArgValue::Bytes(vec![0; 4]),
        ];
        let e = run(&s.co, k, &p, &mem, &args, &Launch::new([1; 3], [64, 1, 1])).unwrap_err();
        assert_eq!(e.to_string(), msg);
        assert_eq!(mem.allocations(), 0, "{msg}");
    }
}

/// A hand-edited object (issue 33): clang-22's saxpy for each target with
/// one register raised past what the compiler counted, assembled with the
/// descriptor the compiler wrote. The dispatch is refused before anything
/// runs, with the asm line when the source is attached.
#[test]
fn a_hand_edited_object_using_registers_it_did_not_allocate_is_refused() {
    let dir = TempDir::new();
    for target in TARGETS {
        for (to, reg) in [
            ("v_mov_b32_e32 v255, 0", "`v255`"),
            ("v_fmac_f32_e32 v0, s90, v1", "`s90`"),
            ("v_accvgpr_write_b32 a9, 0", "`a9`"),
        ] {
            let from = "s_waitcnt vmcnt(0)";
            let path = saxpy_mutant(dir.path(), target, from, &format!("{from}\n\t{to}"));
            let mut s = load(&path);
            let asm = dir.path().join(format!("saxpy-{target}-mutant.s"));
            let text = std::fs::read_to_string(&asm).unwrap();
            assert!(s.program.attach_source("saxpy.s", &text) > 0);
            let mem = Memory::new();
            let e = run_saxpy(&s, &mem, &Launch::new([1, 1, 1], [64, 1, 1]), 64).unwrap_err();
            let msg = e.to_string();
            let (context, field, value, cap) = limit(e);
            assert!(field.contains(reg), "{target}: {msg}");
            assert!(value > cap, "{target}: {msg}");
            assert!(
                context.contains("kernel `saxpy`") && context.contains("(saxpy.s:"),
                "{target}: {msg}"
            );
            assert!(
                context.contains(to.split_whitespace().next().unwrap()),
                "{msg}"
            );
        }
    }
}

/// Only what a dispatch can reach is checked: the instruction a branch
/// jumps over and data after `s_endpgm` are not; both arms of a
/// conditional branch are; a reachable indirect jump makes everything from
/// the entry count.
#[test]
fn the_register_check_follows_what_the_dispatch_can_reach() {
    let dir = TempDir::new();
    let s = load(&common::build("saxpy", "gfx942", dir.path()));
    let k = s.co.kernel("saxpy").unwrap();
    let check = |lines: &[(&str, u32)]| {
        let listing: String = lines
            .iter()
            .enumerate()
            .map(|(i, (text, word))| {
                format!("\t{text} // {:012X}: {word:08X}\n", k.entry + 4 * i as u64)
            })
            .collect();
        let p = Program::parse_listing(&listing, k).unwrap();
        assert_eq!(p.instructions.len(), lines.len());
        p.check_registers(k).map_err(|e| e.to_string())
    };
    let v255 = ("v_mov_b32_e32 v255, 0", 0x7FFE0280);
    let endpgm = ("s_endpgm", 0xBF810000);
    let v254 = ("v_mov_b32_e32 v254, 0", 0x7FFC0280);
    // s_branch over the next instruction (simm16 = 1); data after s_endpgm.
    check(&[("s_branch 1", 0xBF820001), v255, endpgm, v254]).unwrap();
    // Both arms of a conditional branch; falling through.
    for first in [("s_cbranch_scc0 1", 0xBF840001), ("s_nop 0", 0xBF800000)] {
        let e = check(&[first, v255, endpgm, v254]).unwrap_err();
        assert!(e.contains("`v255`"), "{}: {e}", first.0);
    }
    check(&[("s_nop 0", 0xBF800000), endpgm, v254]).unwrap();
    // An indirect jump: everything from the entry, past s_endpgm too.
    let e = check(&[("s_setpc_b64 s[0:1]", 0xBE801D00), endpgm, v254]).unwrap_err();
    assert!(e.contains("`v254`"), "{e}");
}

/// saxpy's asm for `target` given 16 registers of the unified VGPR/AGPR
/// file (`.amdhsa_next_free_vgpr 16`, the compiler's `.amdhsa_accum_offset`
/// kept: 4 on gfx90a, 8 on gfx942/gfx950, so 12 or 8 AGPRs) and `lines`
/// inserted after its last wait (`{accum}` in them: the accum offset,
/// `{accum1}` one more).
/// The accum offset and the object.
fn unified_saxpy(dir: &Path, target: &str, lines: &[&str]) -> (u32, PathBuf) {
    let accum = std::cell::Cell::new(0);
    let path = saxpy_edited(dir, target, |text| {
        let field = |key: &str| -> (usize, usize, u32) {
            let at = text.find(key).unwrap_or_else(|| panic!("no {key}"));
            let end = at + text[at..].find('\n').unwrap();
            (at, end, text[at + key.len()..end].trim().parse().unwrap())
        };
        accum.set(field(".amdhsa_accum_offset").2);
        let (at, end, _) = field(".amdhsa_next_free_vgpr");
        let text = format!("{}.amdhsa_next_free_vgpr 16{}", &text[..at], &text[end..]);
        let wait = "s_waitcnt vmcnt(0)\n";
        let inserted: String = lines
            .iter()
            .map(|l| {
                let l = l.replace("{accum1}", &(accum.get() + 1).to_string());
                format!("\t{}\n", l.replace("{accum}", &accum.get().to_string()))
            })
            .collect();
        text.replacen(wait, &format!("{wait}{inserted}"), 1)
    });
    (accum.get(), path)
}

/// gfx90a+ has one file of VGPRs and AGPRs, the AGPRs from
/// `.amdhsa_accum_offset` on: `v[accum + i]` is `a[i]`, and the executor
/// keeps them as one, so a kernel may name both a VGPR past the offset and
/// the AGPR it is (aiter's gfx942 `fmoe_bf16_a16_blockscaleFp8_g1u1_vs_silu`
/// kernels do; `unified::` checks the values through both names). The
/// registers past the file are still refused: an AGPR past the count past
/// the offset.
#[test]
fn vgprs_and_agprs_sharing_the_unified_file_run() {
    let dir = TempDir::new();
    for target in TARGETS {
        let (accum, path) = unified_saxpy(
            dir.path(),
            target,
            &["v_accvgpr_write_b32 a1, 0", "v_mov_b32_e32 v{accum}, 0"],
        );
        let mut s = load(&path);
        let k = s.co.kernel("saxpy").unwrap();
        assert_eq!(
            (k.descriptor.vgpr_count(), k.descriptor.accum_offset()),
            (16, accum),
            "{target}"
        );
        assert!(s.program.check_registers(k).is_ok(), "{target}");
        let mem = Memory::new();
        let y = run_saxpy(&s, &mem, &Launch::new([1, 1, 1], [64, 1, 1]), 64).unwrap();
        assert_eq!(y[5], 11.0, "{target}");

        // A range reaching a1, which the kernel writes too: the same
        // register, checked and run.
        let (_, path) = unified_saxpy(
            dir.path(),
            target,
            &[
                "v_accvgpr_write_b32 a1, 0",
                "v_lshlrev_b64 v[{accum}:{accum1}], 2, v[0:1]",
            ],
        );
        s = load(&path);
        let k = s.co.kernel("saxpy").unwrap();
        assert!(s.program.check_registers(k).is_ok(), "{target}");
        let y = run_saxpy(&s, &mem, &Launch::new([1, 1, 1], [64, 1, 1]), 64).unwrap();
        assert_eq!(y[5], 11.0, "{target}");

        // The last AGPR of the file runs; one past it is refused.
        let agprs = 16 - accum;
        let last = format!("v_accvgpr_write_b32 a{}, 0", agprs - 1);
        let (_, path) = unified_saxpy(dir.path(), target, &[&last]);
        s = load(&path);
        let k = s.co.kernel("saxpy").unwrap();
        assert!(s.program.check_registers(k).is_ok(), "{target}");
        let past = format!("v_accvgpr_write_b32 a{agprs}, 0");
        let (_, path) = unified_saxpy(dir.path(), target, &[&past]);
        s = load(&path);
        let k = s.co.kernel("saxpy").unwrap();
        let (_, field, value, cap) = limit(s.program.check_registers(k).unwrap_err());
        assert!(field.contains(&format!("`a{agprs}`")), "{target}: {field}");
        assert_eq!((value, cap), (agprs as u128 + 1, agprs as u128));
    }
}

/// Registers reached through VGPR indexing (`s_set_gpr_idx_on`) are not
/// operands the load-time check sees: past the file they are a typed fault
/// when run, naming the register; within it they run (past the accum
/// offset: the AGPRs of the unified file).
#[test]
fn vgpr_indexing_out_of_range_is_a_typed_fault() {
    let dir = TempDir::new();
    // gfx942's saxpy: v[2:3] (x's address) is free after the loads; v2 is
    // indexed, v2 + M0[7:0].
    let block = |idx: u32, mode: &str, ins: &str| {
        vec![
            format!("s_mov_b32 s7, {idx}"),
            format!("s_set_gpr_idx_on s7, gpr_idx({mode})"),
            ins.to_string(),
            "s_set_gpr_idx_off".to_string(),
        ]
    };
    let fault = |s: &Saxpy| -> String {
        let mem = Memory::new();
        match run_saxpy(s, &mem, &Launch::new([1, 1, 1], [64, 1, 1]), 64) {
            Err(Error::Fault { what, .. }) => what,
            other => panic!("expected a fault, got {other:?}"),
        }
    };
    // The compiler's descriptor: 8 VGPRs, no AGPR.
    for (idx, mode, ins, ok) in [
        (5, "SRC0", "v_mov_b32_e32 v2, v2", true),
        (6, "SRC0", "v_mov_b32_e32 v2, v2", false),
        (6, "DST", "v_mov_b32_e32 v2, 0", false),
        (255, "SRC0", "v_mov_b32_e32 v2, v2", false),
    ] {
        let lines = block(idx, mode, ins);
        let edit = |text: &str| {
            let wait = "s_waitcnt vmcnt(0)\n";
            let inserted: String = lines.iter().map(|l| format!("\t{l}\n")).collect();
            text.replacen(wait, &format!("{wait}{inserted}"), 1)
        };
        let s = load(&saxpy_edited(dir.path(), "gfx942", edit));
        let k = s.co.kernel("saxpy").unwrap();
        s.program.check_registers(k).unwrap();
        if ok {
            let mem = Memory::new();
            let y = run_saxpy(&s, &mem, &Launch::new([1, 1, 1], [64, 1, 1]), 64).unwrap();
            assert_eq!(y[5], 11.0);
        } else {
            let what = fault(&s);
            assert!(
                what.contains(&format!("v{} is beyond the 8 registers", idx + 2))
                    || what.contains(&format!("register {} is beyond the 8 registers", idx + 2)),
                "{idx} {mode}: {what}"
            );
        }
    }
    // 16 registers, AGPRs from v8: an index past the offset reaches them
    // (v2 + 6 is v8, a0); past the file it faults.
    for (idx, ok) in [(6, true), (13, true), (14, false)] {
        let lines = block(idx, "SRC0", "v_mov_b32_e32 v2, v2");
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (accum, path) = unified_saxpy(dir.path(), "gfx942", &refs);
        assert_eq!(accum, 8);
        let s = load(&path);
        let k = s.co.kernel("saxpy").unwrap();
        s.program.check_registers(k).unwrap();
        if ok {
            let mem = Memory::new();
            let y = run_saxpy(&s, &mem, &Launch::new([1, 1, 1], [64, 1, 1]), 64).unwrap();
            assert_eq!(y[5], 11.0);
        } else {
            let what = fault(&s);
            assert!(what.contains("v16 is beyond the 16 registers"), "{what}");
        }
    }
}
