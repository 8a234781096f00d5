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

use gcn_embed::TargetId;
use object::{Object, ObjectSection, ObjectSymbol};

use crate::base::diag::{Code, Diagnostic};
use crate::stage::assemble::TRIPLE;
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
    let objdump = tc.llvm_tool("llvm-objdump");
    let mut cmd = crate::stage::toolchain::run::tool_command(&objdump);
    cmd.env_clear()
        .env("LC_ALL", "C")
        .args(["-D", "-j", ".rodata"])
        .arg(path);
    let out = tc
        .run(&mut cmd, "llvm-objdump", job)
        .map_err(|e| e.to_diagnostic())?;
    if !out.status.success() {
        return Err(Diagnostic::error(
            Code::LiftToolFailed,
            format!(
                "llvm-objdump failed {job}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(parse_blocks(&String::from_utf8_lossy(&out.stdout)))
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
                // In order of preference; the first that re-assembles to
                // the original bytes wins.
                let fixed = completed(b, &wanted[k]);
                let vcc = set(&fixed, ".amdhsa_reserve_vcc", u32::from(code.vcc));
                let sgprs = field(&vcc, ".amdhsa_next_free_sgpr").unwrap_or(0);
                let raised = set(&vcc, ".amdhsa_next_free_sgpr", sgprs.max(code.sgprs));
                for v in [raised, vcc, fixed, b.clone()] {
                    if !variants.iter().any(|(n, w)| n == k && *w == v) {
                        variants.push((k.clone(), v));
                    }
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
        for v in sgpr_variants(&completed(&blocks[k], &wanted[k]), &wanted[k], code.vcc) {
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
        out.entry(k).or_insert_with(|| {
            Lifted::Raw(
                "no .amdhsa_kernel block re-assembles to these bytes with LLVM 22 (tried \
                 llvm-objdump's block and every SGPR count and reservation of the same granule)"
                    .into(),
            )
        });
    }
    Ok(out)
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
/// user SGPR count (`compute_pgm_rsrc2` bits 1..5), which code written
/// or compiled with more user SGPRs than the enabled ones sets.
fn completed(block: &[String], want: &[u8; 64]) -> Vec<String> {
    let mut out = block.to_vec();
    if !out.iter().any(|l| l.starts_with(".amdhsa_user_sgpr_count")) {
        let rsrc2 = u32::from_le_bytes([want[52], want[53], want[54], want[55]]);
        out.push(format!(".amdhsa_user_sgpr_count {}", (rsrc2 >> 1) & 0x1f));
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
    let rsrc1 = u32::from_le_bytes([want[48], want[49], want[50], want[51]]);
    let granule = (rsrc1 >> 6) & 0xf;
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

/// A comment decoding every field of a descriptor (AMDGPUUsage, "Kernel
/// Descriptor"), one `; name = value` line each.
pub fn decode_comment(d: &[u8; 64], target: &TargetId) -> Vec<String> {
    let u32_at = |o: usize| u32::from_le_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]]);
    let u16_at = |o: usize| u16::from_le_bytes([d[o], d[o + 1]]);
    let bits = |v: u32, lo: u32, hi: u32| (v >> lo) & ((1u64 << (hi - lo + 1)) - 1) as u32;
    let mut out = vec![
        format!("group_segment_fixed_size = {}", u32_at(0)),
        format!("private_segment_fixed_size = {}", u32_at(4)),
        format!("kernarg_size = {}", u32_at(8)),
        format!(
            "kernel_code_entry_byte_offset = {} (written by the linker)",
            i64::from_le_bytes(d[16..24].try_into().unwrap_or([0; 8]))
        ),
    ];
    let rsrc3 = u32_at(44);
    let rsrc1 = u32_at(48);
    let rsrc2 = u32_at(52);
    let props = u32::from(u16_at(56));
    let preload = u32::from(u16_at(58));
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
    for (name, lo, hi) in [
        ("enable_private_segment", 0, 0),
        ("user_sgpr_count", 1, 5),
        ("enable_trap_handler", 6, 6),
        ("enable_sgpr_workgroup_id_x", 7, 7),
        ("enable_sgpr_workgroup_id_y", 8, 8),
        ("enable_sgpr_workgroup_id_z", 9, 9),
        ("enable_sgpr_workgroup_info", 10, 10),
        ("enable_vgpr_workitem_id", 11, 12),
        ("enable_exception_address_watch", 13, 13),
        ("enable_exception_memory", 14, 14),
        ("granulated_lds_size", 15, 23),
        ("enable_exception (ieee_invalid … int_div_zero)", 24, 30),
    ] {
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
