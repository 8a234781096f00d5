//! Kernel descriptors: as `.amdhsa_kernel` blocks where re-assembling the
//! block gives the original 64 bytes, else as raw bytes with every field
//! decoded in a comment.
//!
//! The blocks come from `llvm-objdump -D -j .rodata`, which decodes
//! descriptors. Some of its blocks do not re-assemble to the same bytes:
//! it writes the SGPR count without the SGPRs the target reserves (VCC,
//! flat scratch, XNACK mask) and `.amdhsa_reserve_xnack_mask 0` where the
//! target ID says xnack "any", which the assembler refuses. So each block is
//! assembled and compared; a block that does not match is tried again with
//! the SGPR count and reservations that give the same granulated count,
//! every variant in one assembler run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gcn_embed::{Feature, Generation, TargetId};
use object::{Object, ObjectSection, ObjectSymbol};

use crate::base::diag::{Code, Diagnostic};
use crate::stage::assemble::TRIPLE;
use crate::stage::toolchain::ToolDiagnostic as _;
use crate::stage::toolchain::Toolchain;

/// Bytes 16..24 hold `kernel_code_entry_byte_offset`, a link-time value.
pub const ENTRY_OFFSET: std::ops::Range<usize> = 16..24;

/// A kernel's descriptor as lifted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifted {
    /// The `.amdhsa_*` lines of an `.amdhsa_kernel` block that re-assembles
    /// to the original bytes.
    Block(Vec<String>),
    /// Raw bytes; the reason directives cannot express it.
    Raw(String),
}

/// The `.amdhsa_kernel` blocks `llvm-objdump -D -j .rodata` prints, by kernel.
pub fn objdump_blocks(
    tc: &Toolchain,
    path: &std::path::Path,
    job: &str,
) -> Result<BTreeMap<String, Vec<String>>, Diagnostic> {
    let args = ["-D", "-j", ".rodata"]
        .map(std::ffi::OsStr::new)
        .into_iter()
        .chain([path.as_os_str()]);
    let text = tc.objdump(args, job, Code::LiftToolFailed)?;
    Ok(parse_blocks(&text))
}

/// The `.amdhsa_kernel NAME … .end_amdhsa_kernel` blocks of a listing.
pub fn parse_blocks(listing: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in listing.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix(".amdhsa_kernel ") {
            current = Some((name.trim().to_string(), Vec::new()));
        } else if t == ".end_amdhsa_kernel" {
            if let Some((name, lines)) = current.take() {
                out.insert(name, lines);
            }
        } else if let Some((_, lines)) = current.as_mut() {
            if t.starts_with(".amdhsa_") {
                lines.push(t.to_string());
            }
        }
    }
    out
}

/// What the instructions use, which the descriptor should say where more
/// than one block gives the original bytes (the register check reads it).
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeUse {
    /// The code names `vcc`.
    pub vcc: bool,
    /// One past the highest SGPR the code names.
    pub sgprs: u32,
}

/// Decide each descriptor: `wanted` maps a kernel to its 64 original bytes,
/// `blocks` to objdump's block.
pub fn lift(
    tc: &Toolchain,
    target: &TargetId,
    code_object_version: u32,
    wanted: &BTreeMap<String, [u8; 64]>,
    blocks: &BTreeMap<String, Vec<String>>,
    code: CodeUse,
    job: &str,
) -> Result<BTreeMap<String, Lifted>, Diagnostic> {
    let mut out = BTreeMap::new();
    // Round 1: objdump's block, with `.amdhsa_reserve_vcc` saying what the
    // code does when that gives the same bytes (the register check reads it),
    // else as it is. The first variant that matches wins.
    let mut variants = Vec::new();
    for k in wanted.keys() {
        match blocks.get(k) {
            Some(b) => {
                for v in round_one(b, &wanted[k], code, target.processor.name) {
                    variants.push((k.clone(), v));
                }
            }
            None => {
                out.insert(
                    k.clone(),
                    Lifted::Raw("llvm-objdump printed no .amdhsa_kernel block for it".into()),
                );
            }
        }
    }
    let assembled = assemble_variants(tc, target, code_object_version, &variants, job)?;
    for (i, (k, block)) in variants.iter().enumerate() {
        if !out.contains_key(k) && same(assembled.get(&i).and_then(|b| b.as_ref()), &wanted[k]) {
            out.insert(k.clone(), Lifted::Block(block.clone()));
        }
    }
    let retry: Vec<String> = wanted
        .keys()
        .filter(|k| !out.contains_key(*k))
        .cloned()
        .collect();
    if retry.is_empty() {
        return Ok(out);
    }
    // Round 2: every SGPR count and reservation with the same granule.
    let mut variants = Vec::new();
    for k in &retry {
        for v in sgpr_variants(
            &completed(&blocks[k], &wanted[k], target.processor.name),
            &wanted[k],
            code.vcc,
        ) {
            variants.push((k.clone(), v));
        }
    }
    let assembled = assemble_variants(tc, target, code_object_version, &variants, job)?;
    for (i, (k, block)) in variants.iter().enumerate() {
        if out.contains_key(k) {
            continue;
        }
        if same(assembled.get(&i).and_then(|b| b.as_ref()), &wanted[k]) {
            out.insert(k.clone(), Lifted::Block(block.clone()));
        }
    }
    for k in retry {
        out.entry(k).or_insert_with(|| Lifted::Raw(NO_BLOCK.into()));
    }
    Ok(out)
}

/// Why a descriptor stays raw bytes when no variant matches.
const NO_BLOCK: &str = "no .amdhsa_kernel block re-assembles to these bytes with LLVM 22 (tried \
     llvm-objdump's block and every SGPR count and reservation of the same granule)";

/// Round one's variants of objdump's block `b`, in order of preference
/// (the first that re-assembles to the original bytes wins):
/// `.amdhsa_reserve_vcc` saying what the code does and the SGPR count
/// raised to what it names, then that without the raise, then the block
/// completed ([`completed`]), then the block as printed.
fn round_one(b: &[String], want: &[u8; 64], code: CodeUse, processor: &str) -> Vec<Vec<String>> {
    let fixed = completed(b, want, processor);
    let vcc = set(&fixed, ".amdhsa_reserve_vcc", u32::from(code.vcc));
    let sgprs = field(&vcc, ".amdhsa_next_free_sgpr").unwrap_or(0);
    let raised = set(&vcc, ".amdhsa_next_free_sgpr", sgprs.max(code.sgprs));
    let mut out: Vec<Vec<String>> = Vec::new();
    for v in [raised, vcc, fixed, b.to_vec()] {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The value of `name` in a block.
fn field(block: &[String], name: &str) -> Option<u32> {
    block
        .iter()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
}

/// `block` with `name` set to `value` (added if absent).
fn set(block: &[String], name: &str, value: u32) -> Vec<String> {
    let mut out: Vec<String> = block
        .iter()
        .filter(|l| l.split_whitespace().next() != Some(name))
        .cloned()
        .collect();
    out.push(format!("{name} {value}"));
    out
}

/// objdump's block plus what LLVM 22's objdump leaves out: the explicit
/// user SGPR count (`compute_pgm_rsrc2` bits 1..5, 1..6 on gfx1250), which
/// code written or compiled with more user SGPRs than the enabled ones
/// sets.
fn completed(block: &[String], want: &[u8; 64], processor: &str) -> Vec<String> {
    let mut out = block.to_vec();
    if !out.iter().any(|l| l.starts_with(".amdhsa_user_sgpr_count")) {
        let user_sgprs = gcn_raw::kd::Descriptor::parse(want).user_sgpr_count_on(processor);
        out.push(format!(".amdhsa_user_sgpr_count {user_sgprs}"));
    }
    out
}

/// Equal but for the entry offset (a relocation in an unlinked object).
fn same(got: Option<&[u8; 64]>, want: &[u8; 64]) -> bool {
    got.is_some_and(|g| {
        g.iter()
            .zip(want)
            .enumerate()
            .all(|(i, (a, b))| ENTRY_OFFSET.contains(&i) || a == b)
    })
}

/// objdump's block with `.amdhsa_next_free_sgpr`, `.amdhsa_reserve_vcc`
/// and `.amdhsa_reserve_xnack_mask` varied over the values that can give
/// the original granulated SGPR count.
fn sgpr_variants(block: &[String], want: &[u8; 64], uses_vcc: bool) -> Vec<Vec<String>> {
    let granule = (gcn_raw::kd::Descriptor::parse(want).rsrc1 >> 6) & 0xf;
    let top = (granule + 1) * 8;
    let low = (granule * 8 + 1).saturating_sub(6);
    let keep: Vec<&String> = block
        .iter()
        .filter(|l| {
            !l.starts_with(".amdhsa_next_free_sgpr")
                && !l.starts_with(".amdhsa_reserve_vcc")
                && !l.starts_with(".amdhsa_reserve_xnack_mask")
        })
        .collect();
    let mut out = Vec::new();
    for n in (low..=top).rev() {
        for vcc in [u8::from(uses_vcc), u8::from(!uses_vcc)] {
            let mut v: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
            v.push(format!(".amdhsa_next_free_sgpr {n}"));
            v.push(format!(".amdhsa_reserve_vcc {vcc}"));
            out.push(v);
        }
    }
    out
}

/// Assemble each variant as the descriptor of a kernel of its own, in one
/// run (dropping variants the assembler rejects and running again); the
/// 64 bytes each variant gave, by index (`None`: rejected).
fn assemble_variants(
    tc: &Toolchain,
    target: &TargetId,
    code_object_version: u32,
    variants: &[(String, Vec<String>)],
    job: &str,
) -> Result<BTreeMap<usize, Option<[u8; 64]>>, Diagnostic> {
    let mut result: BTreeMap<usize, Option<[u8; 64]>> = BTreeMap::new();
    if variants.is_empty() {
        return Ok(result);
    }
    let mut live: Vec<usize> = (0..variants.len()).collect();
    for _round in 0..8 {
        if live.is_empty() {
            return Ok(result);
        }
        let mut src = format!(
            "\t.amdgcn_target \"{TRIPLE}--{}\"\n\t.amdhsa_code_object_version {code_object_version}\n\t.text\n",
            target.name()
        );
        for i in &live {
            let _ = writeln!(src, "__lift_kd_{i}:\n\ts_endpgm");
        }
        let mut owner = BTreeMap::new();
        src.push_str("\t.rodata\n");
        let mut line = src.lines().count();
        for i in &live {
            let _ = writeln!(src, "\t.p2align 6\n\t.amdhsa_kernel __lift_kd_{i}");
            for l in &variants[*i].1 {
                let _ = writeln!(src, "\t\t{l}");
            }
            let _ = writeln!(src, "\t.end_amdhsa_kernel");
            for _ in 0..variants[*i].1.len() + 3 {
                line += 1;
                owner.insert(line, *i);
            }
        }
        let mut cmd = super::mc_command(tc, target, &["--filetype=obj"]);
        let out = tc
            .run_with_input(&mut cmd, "llvm-mc", job, Some(src.as_bytes()))
            .map_err(|e| e.to_diagnostic())?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let bad: std::collections::BTreeSet<usize> = stderr
            .lines()
            .filter(|l| l.contains(": error:"))
            .filter_map(|l| l.strip_prefix("<stdin>:")?.split(':').next()?.parse().ok())
            .filter_map(|line: usize| owner.get(&line).copied())
            .collect();
        if !bad.is_empty() {
            for i in &bad {
                result.insert(*i, None);
            }
            live.retain(|i| !bad.contains(i));
            continue;
        }
        if !out.status.success() {
            return Err(Diagnostic::error(
                Code::LiftToolFailed,
                format!(
                    "llvm-mc failed assembling kernel descriptors {job}: {}",
                    stderr.trim()
                ),
            ));
        }
        let obj = object::File::parse(&*out.stdout).map_err(|e| {
            Diagnostic::error(
                Code::LiftToolFailed,
                format!("llvm-mc wrote no readable object {job}: {e}"),
            )
        })?;
        let rodata = obj.section_by_name(".rodata");
        let data = rodata.as_ref().and_then(|s| s.data().ok()).unwrap_or(&[]);
        for sym in obj.symbols() {
            let Ok(name) = sym.name() else { continue };
            let Some(i) = name
                .strip_prefix("__lift_kd_")
                .and_then(|n| n.strip_suffix(".kd"))
                .and_then(|n| n.parse::<usize>().ok())
            else {
                continue;
            };
            let at = sym.address() as usize;
            let bytes = data.get(at..at + 64).map(|b| {
                let mut d = [0u8; 64];
                d.copy_from_slice(b);
                d
            });
            result.insert(i, bytes);
        }
        return Ok(result);
    }
    Err(Diagnostic::error(
        Code::LiftToolFailed,
        format!("llvm-mc kept rejecting kernel descriptor blocks {job}"),
    ))
}

/// What decoding a descriptor depends on: the target's generation and
/// features, and the code object version. `None` for targets whose
/// descriptors are not decoded here (then `llvm-objdump -D` decodes them):
/// those the corpus does not cover (gfx6–gfx8, gfx10, gfx9 without AGPRs).
#[derive(Debug, Clone, Copy)]
struct Layout {
    generation: Generation,
    /// gfx90a, gfx942, gfx950: `.amdhsa_accum_offset` in `COMPUTE_PGM_RSRC3`.
    accum: bool,
    /// Flat scratch set up by the hardware (gfx94x, gfx950, gfx11+): no
    /// flat scratch or private segment buffer SGPRs.
    architected_flat_scratch: bool,
    /// `.amdhsa_reserve_xnack_mask` must say this (xnack on or any).
    xnack: bool,
    /// The processor always has xnack (gfx1250: no `xnack±` in its
    /// target ID): the decoder's `.amdhsa_reserve_xnack_mask` then says 1,
    /// elsewhere 0 whatever the target ID says.
    xnack_always: bool,
    code_object_version: u32,
}

impl Layout {
    fn of(target: &TargetId, code_object_version: u32) -> Option<Layout> {
        let p = target.processor;
        let generation = p.generation;
        let accum = p.accum_offset;
        let known = (generation == Generation::Gfx9 && accum && !p.is_generic)
            || matches!(
                generation,
                Generation::Gfx11 | Generation::Gfx12 | Generation::Gfx12_5
            );
        if !known {
            return None;
        }
        Some(Layout {
            generation,
            accum,
            architected_flat_scratch: generation >= Generation::Gfx11
                || (accum && p.name != "gfx90a"),
            xnack: p.elf_xnack && target.xnack != Feature::Off,
            xnack_always: p.elf_xnack && !p.xnack,
            code_object_version,
        })
    }

    /// Registers per `granulated_workitem_vgpr_count` step.
    fn vgpr_granule(&self, wave32: bool) -> u32 {
        if self.accum {
            8
        } else if self.generation == Generation::Gfx12_5 {
            16
        } else if wave32 {
            8
        } else {
            4
        }
    }
}

/// A directive's field: name, word offset, first bit, bit count.
type Field = (&'static str, usize, u32, u32);

/// A field a directive sets directly: the 32-bit word at `word` (a 16-bit
/// one at 56 and 58), bits `lo` and up, `width` of them.
const fn f(
    name: &'static str,
    word: usize,
    lo: u32,
    width: u32,
) -> (&'static str, usize, u32, u32) {
    (name, word, lo, width)
}

const RSRC3: usize = 44;
const RSRC1: usize = 48;
const RSRC2: usize = 52;
const PROPS: usize = 56;
const PRELOAD: usize = 58;

/// The fields a directive of `layout` sets directly, in the order
/// `llvm-objdump` (LLVM 22) prints them, each with whether it is printed.
fn fields(l: &Layout, wave32: bool) -> Vec<(Field, bool)> {
    let g = l.generation;
    let gfx11 = g >= Generation::Gfx11;
    let gfx12 = g >= Generation::Gfx12;
    let gfx125 = g == Generation::Gfx12_5;
    let mut v = vec![
        (f(".amdhsa_group_segment_fixed_size", 0, 0, 32), true),
        (f(".amdhsa_private_segment_fixed_size", 4, 0, 32), true),
        (f(".amdhsa_kernarg_size", 8, 0, 32), true),
        (f(".amdhsa_tg_split", RSRC3, 16, 1), l.accum),
        (
            f(".amdhsa_shared_vgpr_count", RSRC3, 0, 4),
            gfx11 && !gfx12 && !wave32,
        ),
        (
            f(
                ".amdhsa_inst_pref_size",
                RSRC3,
                4,
                if gfx12 { 8 } else { 6 },
            ),
            gfx11,
        ),
        (f(".amdhsa_named_barrier_count", RSRC3, 14, 3), gfx125),
        (f(".amdhsa_float_round_mode_32", RSRC1, 12, 2), true),
        (f(".amdhsa_float_round_mode_16_64", RSRC1, 14, 2), true),
        (f(".amdhsa_float_denorm_mode_32", RSRC1, 16, 2), true),
        (f(".amdhsa_float_denorm_mode_16_64", RSRC1, 18, 2), true),
        (f(".amdhsa_dx10_clamp", RSRC1, 21, 1), !gfx12),
        (f(".amdhsa_ieee_mode", RSRC1, 23, 1), !gfx12),
        (f(".amdhsa_fp16_overflow", RSRC1, 26, 1), true),
        (
            f(".amdhsa_workgroup_processor_mode", RSRC1, 29, 1),
            gfx11 && !gfx125,
        ),
        (f(".amdhsa_memory_ordered", RSRC1, 30, 1), gfx11),
        (f(".amdhsa_forward_progress", RSRC1, 31, 1), gfx11),
        (f(".amdhsa_round_robin_scheduling", RSRC1, 21, 1), gfx12),
        (
            f(".amdhsa_enable_private_segment", RSRC2, 0, 1),
            l.architected_flat_scratch,
        ),
        (
            f(
                ".amdhsa_system_sgpr_private_segment_wavefront_offset",
                RSRC2,
                0,
                1,
            ),
            !l.architected_flat_scratch,
        ),
        (f(".amdhsa_system_sgpr_workgroup_id_x", RSRC2, 7, 1), true),
        (f(".amdhsa_system_sgpr_workgroup_id_y", RSRC2, 8, 1), true),
        (f(".amdhsa_system_sgpr_workgroup_id_z", RSRC2, 9, 1), true),
        (f(".amdhsa_system_sgpr_workgroup_info", RSRC2, 10, 1), true),
        (f(".amdhsa_system_vgpr_workitem_id", RSRC2, 11, 2), true),
        (
            f(".amdhsa_exception_fp_ieee_invalid_op", RSRC2, 24, 1),
            true,
        ),
        (f(".amdhsa_exception_fp_denorm_src", RSRC2, 25, 1), true),
        (f(".amdhsa_exception_fp_ieee_div_zero", RSRC2, 26, 1), true),
        (f(".amdhsa_exception_fp_ieee_overflow", RSRC2, 27, 1), true),
        (f(".amdhsa_exception_fp_ieee_underflow", RSRC2, 28, 1), true),
        (f(".amdhsa_exception_fp_ieee_inexact", RSRC2, 29, 1), true),
        (f(".amdhsa_exception_int_div_zero", RSRC2, 30, 1), true),
        (
            f(".amdhsa_user_sgpr_private_segment_buffer", PROPS, 0, 1),
            !l.architected_flat_scratch,
        ),
        (f(".amdhsa_user_sgpr_dispatch_ptr", PROPS, 1, 1), true),
        (f(".amdhsa_user_sgpr_queue_ptr", PROPS, 2, 1), true),
        (
            f(".amdhsa_user_sgpr_kernarg_segment_ptr", PROPS, 3, 1),
            true,
        ),
        (f(".amdhsa_user_sgpr_dispatch_id", PROPS, 4, 1), true),
        (
            f(".amdhsa_user_sgpr_flat_scratch_init", PROPS, 5, 1),
            !l.architected_flat_scratch,
        ),
        (
            f(".amdhsa_user_sgpr_private_segment_size", PROPS, 6, 1),
            true,
        ),
        (f(".amdhsa_wavefront_size32", PROPS, 10, 1), gfx11),
        (
            f(".amdhsa_uses_dynamic_stack", PROPS, 11, 1),
            l.code_object_version >= 5,
        ),
        (
            f(".amdhsa_user_sgpr_kernarg_preload_length", PRELOAD, 0, 7),
            true,
        ),
        (
            f(".amdhsa_user_sgpr_kernarg_preload_offset", PRELOAD, 7, 9),
            true,
        ),
    ];
    v.retain(|(_, shown)| *shown);
    v
}

fn word(d: &[u8; 64], at: usize) -> u32 {
    if at >= PROPS {
        u32::from(u16::from_le_bytes([d[at], d[at + 1]]))
    } else {
        u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]])
    }
}

fn bits(v: u32, lo: u32, width: u32) -> u32 {
    ((u64::from(v) >> lo) & ((1u64 << width) - 1)) as u32
}

/// The bits of each word that a field of `l` occupies (set: printed as a
/// directive or a comment, or derived); a set bit elsewhere is one
/// `llvm-objdump` refuses to decode.
fn known_bits(l: &Layout, word_at: usize, wave32: bool) -> u32 {
    let mask = |lo: u32, width: u32| (((1u64 << width) - 1) << lo) as u32;
    let mut m = 0u32;
    for ((_, w, lo, width), _) in fields(l, wave32) {
        if w == word_at {
            m |= mask(lo, width);
        }
    }
    let g = l.generation;
    match word_at {
        RSRC3 if l.accum => m |= mask(0, 6),
        RSRC3 => {
            // Printed as comments: shared VGPRs (wave32), trap on start and
            // end (gfx11), GLG_EN (gfx12+), dynamic VGPRs, TCP split and DIDT
            // throttle (gfx1250), IMAGE_OP.
            if g < Generation::Gfx12 {
                m |= mask(0, 4) | mask(10, 2);
            } else {
                m |= mask(13, 1);
            }
            if g == Generation::Gfx12_5 {
                m |= mask(17, 5);
            }
            m |= mask(31, 1);
        }
        RSRC1 => {
            m |= mask(0, 6);
            if g < Generation::Gfx11 {
                m |= mask(6, 4);
            }
            if g == Generation::Gfx12_5 {
                m |= mask(27, 1);
            }
            if g >= Generation::Gfx12 {
                // DISABLE_PERF (bit 23) is not checked by the decoder.
                m |= mask(23, 1);
            }
        }
        RSRC2 => {
            // The user SGPR count and the trap handler are not printed nor
            // checked; WGP_TAKEOVER (gfx12+) is a comment.
            m |= mask(1, 6);
            if g >= Generation::Gfx12 {
                m |= mask(31, 1);
            }
        }
        PROPS => {
            // Without architected flat scratch these are printed; with it,
            // they are neither printed nor checked.
            m |= mask(0, 1) | mask(5, 1);
            if l.code_object_version < 5 {
                m |= mask(11, 1);
            }
        }
        _ => {}
    }
    m
}

/// The `.amdhsa_*` lines `llvm-objdump -D` (LLVM 22) prints for the
/// descriptor `d`, decoded here instead of run (`parse_blocks` of its
/// listing gives the same lines; a test compares both on every corpus
/// object). `None` where it prints no block (reserved bits set) or where
/// this decoder does not know the target ([`Layout::of`]).
pub fn decode(d: &[u8; 64], target: &TargetId, code_object_version: u32) -> Option<Vec<String>> {
    let l = Layout::of(target, code_object_version)?;
    if d[12..16]
        .iter()
        .chain(&d[24..44])
        .chain(&d[60..64])
        .any(|b| *b != 0)
    {
        return None;
    }
    let wave32 = l.generation >= Generation::Gfx11 && bits(word(d, PROPS), 10, 1) == 1;
    for at in [RSRC3, RSRC1, RSRC2, PROPS] {
        if word(d, at) & !known_bits(&l, at, wave32) != 0 {
            return None;
        }
    }
    if l.generation == Generation::Gfx9 && bits(word(d, PROPS), 10, 1) == 1 {
        return None;
    }
    let rsrc1 = word(d, RSRC1);
    let fields = fields(&l, wave32);
    let mut out = Vec::new();
    let emit = |out: &mut Vec<String>, name: &str| {
        if let Some(((n, at, lo, width), _)) = fields.iter().find(|(x, _)| x.0 == name) {
            let v = bits(word(d, *at), *lo, *width);
            let optional = *at == PRELOAD;
            if !(optional && v == 0) {
                out.push(format!("{n} {v}"));
            }
        }
    };
    for n in [
        ".amdhsa_group_segment_fixed_size",
        ".amdhsa_private_segment_fixed_size",
        ".amdhsa_kernarg_size",
    ] {
        emit(&mut out, n);
    }
    if l.accum {
        out.push(format!(
            ".amdhsa_accum_offset {}",
            (bits(word(d, RSRC3), 0, 6) + 1) * 4
        ));
    }
    for n in [
        ".amdhsa_tg_split",
        ".amdhsa_shared_vgpr_count",
        ".amdhsa_inst_pref_size",
        ".amdhsa_named_barrier_count",
    ] {
        emit(&mut out, n);
    }
    out.push(format!(
        ".amdhsa_next_free_vgpr {}",
        (bits(rsrc1, 0, 6) + 1) * l.vgpr_granule(wave32)
    ));
    out.push(".amdhsa_reserve_vcc 0".into());
    if !l.architected_flat_scratch {
        out.push(".amdhsa_reserve_flat_scratch 0".into());
    }
    out.push(format!(
        ".amdhsa_reserve_xnack_mask {}",
        u8::from(l.xnack_always)
    ));
    out.push(format!(
        ".amdhsa_next_free_sgpr {}",
        (bits(rsrc1, 6, 4) + 1) * 8
    ));
    for ((n, ..), _) in fields
        .iter()
        .skip_while(|((n, ..), _)| !n.starts_with(".amdhsa_float"))
    {
        emit(&mut out, n);
    }
    Some(out)
}

/// What LLVM 22's assembler makes of a descriptor block, modelled here so
/// that a lift need not run it: the 64 bytes (entry offset zero), or why
/// it refuses the block. `None` when the block has a directive the model
/// does not know.
fn model(block: &[String], l: &Layout) -> Option<Result<[u8; 64], ()>> {
    let mut vals: Vec<(&str, u64)> = Vec::with_capacity(block.len());
    for line in block {
        let (n, v) = line.split_once(' ')?;
        vals.push((n, v.trim().parse().ok()?));
    }
    let get = |n: &str| vals.iter().rev().find(|(k, _)| *k == n).map(|(_, v)| *v);
    let wave32 = get(".amdhsa_wavefront_size32").unwrap_or(0) == 1;
    let fields = fields(l, wave32);
    let special = [
        ".amdhsa_accum_offset",
        ".amdhsa_next_free_vgpr",
        ".amdhsa_next_free_sgpr",
        ".amdhsa_reserve_vcc",
        ".amdhsa_reserve_flat_scratch",
        ".amdhsa_reserve_xnack_mask",
        ".amdhsa_user_sgpr_count",
    ];
    let mut d = [0u8; 64];
    let put = |d: &mut [u8; 64], at: usize, lo: u32, width: u32, v: u64| -> bool {
        if width < 32 && v >> width != 0 {
            return false;
        }
        let mask = (((1u64 << width) - 1) << lo) as u32;
        let w = (word(d, at) & !mask) | (((v << lo) as u32) & mask);
        if at >= PROPS {
            d[at..at + 2].copy_from_slice(&(w as u16).to_le_bytes());
        } else {
            d[at..at + 4].copy_from_slice(&w.to_le_bytes());
        }
        true
    };
    for (n, v) in &vals {
        if special.contains(n) {
            continue;
        }
        let ((_, at, lo, width), _) = fields.iter().find(|((k, ..), _)| k == n)?;
        if !put(&mut d, *at, *lo, *width, *v) {
            return Some(Err(()));
        }
    }
    // `.amdhsa_reserve_xnack_mask` must match the target ID.
    let xnack = match get(".amdhsa_reserve_xnack_mask") {
        Some(v) if v != u64::from(l.xnack) => return Some(Err(())),
        Some(v) => v == 1,
        None => l.xnack,
    };
    let vgprs = get(".amdhsa_next_free_vgpr")?;
    let sgprs = get(".amdhsa_next_free_sgpr")?;
    let blocks = |n: u64, granule: u64| n.max(1).div_ceil(granule) - 1;
    if !put(
        &mut d,
        RSRC1,
        0,
        6,
        blocks(vgprs, u64::from(l.vgpr_granule(wave32))),
    ) {
        return Some(Err(()));
    }
    if l.generation < Generation::Gfx10_1 {
        // Addressable SGPRs on gfx8+ (no SGPR init bug): 102.
        if sgprs > 102 {
            return Some(Err(()));
        }
        let vcc = get(".amdhsa_reserve_vcc").unwrap_or(1) == 1;
        let flat = get(".amdhsa_reserve_flat_scratch").unwrap_or(1) == 1;
        let mut extra = if vcc { 2 } else { 0 };
        if xnack {
            extra = 4;
        }
        if flat || l.architected_flat_scratch {
            extra = 6;
        }
        if !put(&mut d, RSRC1, 6, 4, blocks(sgprs + extra, 8)) {
            return Some(Err(()));
        }
    }
    if l.accum {
        let a = get(".amdhsa_accum_offset")?;
        if !(4..=256).contains(&a) || a % 4 != 0 || a > vgprs.max(1).next_multiple_of(4) {
            return Some(Err(()));
        }
        put(&mut d, RSRC3, 0, 6, a / 4 - 1);
    }
    let props = word(&d, PROPS);
    let implied: u64 = [(0, 4), (1, 2), (2, 2), (3, 2), (4, 2), (5, 2), (6, 1)]
        .iter()
        .map(|(bit, n)| u64::from(bits(props, *bit, 1)) * n)
        .sum::<u64>()
        + u64::from(bits(word(&d, PRELOAD), 0, 7));
    let count = match get(".amdhsa_user_sgpr_count") {
        Some(c) if c < implied => return Some(Err(())),
        Some(c) => c,
        None => implied,
    };
    // gfx1250's user SGPR count has 6 bits (up to 32 with preloading).
    let width = if l.generation == Generation::Gfx12_5 {
        6
    } else {
        5
    };
    if !put(&mut d, RSRC2, 1, width, count) {
        return Some(Err(()));
    }
    Some(Ok(d))
}

/// [`lift`] without running the assembler: the same choice, each variant's
/// bytes given by the model of LLVM 22's assembler ([`model`]) instead of
/// an llvm-mc run. `None` when the model does not cover a variant it would
/// have to judge, or when it finds no variant that gives the original
/// bytes (the caller then runs [`lift`]). What it returns is
/// proved by the identity check, which assembles the asm for real.
pub fn predict(
    target: &TargetId,
    code_object_version: u32,
    wanted: &BTreeMap<String, [u8; 64]>,
    blocks: &BTreeMap<String, Vec<String>>,
    code: CodeUse,
) -> Option<BTreeMap<String, Lifted>> {
    let l = Layout::of(target, code_object_version)?;
    let matches = |v: &[String], want: &[u8; 64]| -> Option<bool> {
        Some(match model(v, &l)? {
            Ok(b) => same(Some(&b), want),
            Err(()) => false,
        })
    };
    let mut out = BTreeMap::new();
    'kernels: for (k, want) in wanted {
        let Some(b) = blocks.get(k) else {
            out.insert(
                k.clone(),
                Lifted::Raw("llvm-objdump printed no .amdhsa_kernel block for it".into()),
            );
            continue;
        };
        for v in round_one(b, want, code, target.processor.name) {
            if matches(&v, want)? {
                out.insert(k.clone(), Lifted::Block(v));
                continue 'kernels;
            }
        }
        for v in sgpr_variants(&completed(b, want, target.processor.name), want, code.vcc) {
            if matches(&v, want)? {
                out.insert(k.clone(), Lifted::Block(v));
                continue 'kernels;
            }
        }
        // No variant the model accepts: let llvm-mc judge them (a raw
        // descriptor must not come from a gap in the model).
        return None;
    }
    Some(out)
}

/// A comment decoding every field of a descriptor (AMDGPUUsage, "Kernel
/// Descriptor"), one `; name = value` line each.
pub fn decode_comment(d: &[u8; 64], target: &TargetId) -> Vec<String> {
    let bits = |v: u32, lo: u32, hi: u32| (v >> lo) & ((1u64 << (hi - lo + 1)) - 1) as u32;
    let kd = gcn_raw::kd::Descriptor::parse(d);
    let mut out = vec![
        format!("group_segment_fixed_size = {}", kd.group_segment_fixed_size),
        format!(
            "private_segment_fixed_size = {}",
            kd.private_segment_fixed_size
        ),
        format!("kernarg_size = {}", kd.kernarg_size),
        format!(
            "kernel_code_entry_byte_offset = {} (written by the linker)",
            kd.kernel_code_entry_byte_offset
        ),
    ];
    let (rsrc3, rsrc1, rsrc2) = (kd.rsrc3, kd.rsrc1, kd.rsrc2);
    let props = u32::from(kd.properties);
    let preload = u32::from(kd.kernarg_preload);
    let gfx9 = target.processor.name.starts_with("gfx9");
    if gfx9 && target.processor.name != "gfx900" {
        out.push(format!(
            "compute_pgm_rsrc3 = {rsrc3:#010x}: accum_offset = {} ((value + 1) * 4), tg_split = {}",
            bits(rsrc3, 0, 5),
            bits(rsrc3, 16, 16)
        ));
    } else {
        out.push(format!("compute_pgm_rsrc3 = {rsrc3:#010x}: shared_vgpr_count = {}, inst_pref_size = {}, trap_on_start = {}, trap_on_end = {}, image_op = {}",
            bits(rsrc3, 0, 3), bits(rsrc3, 4, 9), bits(rsrc3, 10, 10), bits(rsrc3, 11, 11), bits(rsrc3, 31, 31)));
    }
    for (name, lo, hi) in [
        ("granulated_workitem_vgpr_count", 0, 5),
        ("granulated_wavefront_sgpr_count", 6, 9),
        ("priority", 10, 11),
        ("float_round_mode_32", 12, 13),
        ("float_round_mode_16_64", 14, 15),
        ("float_denorm_mode_32", 16, 17),
        ("float_denorm_mode_16_64", 18, 19),
        ("priv", 20, 20),
        ("enable_dx10_clamp / wg_rr_en", 21, 21),
        ("debug_mode", 22, 22),
        ("enable_ieee_mode / disable_perf", 23, 23),
        ("bulky", 24, 24),
        ("cdbg_user", 25, 25),
        ("fp16_ovfl", 26, 26),
        ("wgp_mode", 29, 29),
        ("mem_ordered", 30, 30),
        ("fwd_progress", 31, 31),
    ] {
        out.push(format!(
            "compute_pgm_rsrc1.{name} = {}",
            bits(rsrc1, lo, hi)
        ));
    }
    // gfx1250 widens USER_SGPR_COUNT over bit 6 (ENABLE_TRAP_HANDLER
    // before it).
    let (sgpr_hi, trap) = if target.processor.name.starts_with("gfx125") {
        (6, None)
    } else {
        (5, Some(("enable_trap_handler", 6, 6)))
    };
    for (name, lo, hi) in [
        ("enable_private_segment", 0, 0),
        ("user_sgpr_count", 1, sgpr_hi),
    ]
    .into_iter()
    .chain(trap)
    .chain([
        ("enable_sgpr_workgroup_id_x", 7, 7),
        ("enable_sgpr_workgroup_id_y", 8, 8),
        ("enable_sgpr_workgroup_id_z", 9, 9),
        ("enable_sgpr_workgroup_info", 10, 10),
        ("enable_vgpr_workitem_id", 11, 12),
        ("enable_exception_address_watch", 13, 13),
        ("enable_exception_memory", 14, 14),
        ("granulated_lds_size", 15, 23),
        ("enable_exception (ieee_invalid … int_div_zero)", 24, 30),
    ]) {
        out.push(format!(
            "compute_pgm_rsrc2.{name} = {}",
            bits(rsrc2, lo, hi)
        ));
    }
    for (name, lo, hi) in [
        ("enable_sgpr_private_segment_buffer", 0, 0),
        ("enable_sgpr_dispatch_ptr", 1, 1),
        ("enable_sgpr_queue_ptr", 2, 2),
        ("enable_sgpr_kernarg_segment_ptr", 3, 3),
        ("enable_sgpr_dispatch_id", 4, 4),
        ("enable_sgpr_flat_scratch_init", 5, 5),
        ("enable_sgpr_private_segment_size", 6, 6),
        ("enable_wavefront_size32", 10, 10),
        ("uses_dynamic_stack", 11, 11),
    ] {
        out.push(format!(
            "kernel_code_properties.{name} = {}",
            bits(props, lo, hi)
        ));
    }
    out.push(format!(
        "kernarg_preload: length = {}, offset = {}",
        bits(preload, 0, 6),
        bits(preload, 7, 15)
    ));
    let reserved: Vec<usize> = (12..16)
        .chain(24..44)
        .chain(60..64)
        .filter(|&i| d[i] != 0)
        .collect();
    if !reserved.is_empty() {
        out.push(format!(
            "reserved bytes set (no directive writes them): {reserved:?}"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_blocks_and_varies_sgprs() {
        let b = parse_blocks(
            "0000000000001880 <k.kd>:\n.amdhsa_kernel k\n\t.amdhsa_next_free_sgpr 112\n\t.amdhsa_reserve_vcc 0\n\t.amdhsa_reserve_xnack_mask 0\n.end_amdhsa_kernel\n",
        );
        assert_eq!(b["k"].len(), 3);
        let mut d = [0u8; 64];
        // Granule 13: 105..=112 SGPRs with the reserved ones.
        d[48..52].copy_from_slice(&(13u32 << 6).to_le_bytes());
        let v = sgpr_variants(&b["k"], &d, true);
        assert_eq!(v.len(), (112 - 99 + 1) * 2);
        assert!(v.iter().all(|v| !v.iter().any(|l| l.contains("xnack"))));
        assert!(v[0].contains(&".amdhsa_next_free_sgpr 112".to_string()));
        assert!(v[0].contains(&".amdhsa_reserve_vcc 1".to_string()));
    }
}
