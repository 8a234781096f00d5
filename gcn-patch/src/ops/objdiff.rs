//! `gcn-patch objdiff`: what the patches changed in the code object.
//!
//! Builds one job twice, from the unpatched dump and from the patched one
//! (both retargeted and checked the same way), disassembles both code objects
//! with `llvm-objdump --symbolize-operands` (run through the bounded
//! [`crate::stage::toolchain::process`]), strips addresses and encodings (the `// ADDR:
//! ENCODING` comments) and the alignment padding after each kernel, names
//! branch targets by label (`L0`, `L1`, … per kernel, in address order, in
//! place of objdump's address-derived `label_XXXX`), and prints a unified
//! diff of the instructions and labels plus the descriptor/metadata fields
//! that changed (VGPRs, SGPRs, AGPRs, LDS, occupancy). An inserted
//! instruction is then exactly the lines that changed: a branch whose target
//! moved keeps its label, and a label line shows which side of it the edit
//! landed on.

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use super::{find_job, scratch, Tools};
use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::document::Document;
use crate::config::manifest::Manifest;
use crate::pipeline::{self, Job, Plan, Prepared};
use crate::stage::check::budget;
use crate::stage::toolchain::Toolchain;

/// Result of [`objdiff()`].
#[derive(Debug, Clone)]
pub struct ObjDiff {
    /// Unified diff of the normalized disassemblies (empty: same instructions).
    pub diff: String,
    /// `kernel: field old -> new`, one per changed field.
    pub fields: Vec<String>,
}

/// What `gcn-patch objdiff` is asked to do.
#[derive(Debug, Clone)]
pub struct ObjdiffOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
    /// The target whose job is built twice.
    pub target: TargetId,
    /// The LLVM tools.
    pub tools: Tools,
}

/// `gcn-patch objdiff KERNEL --target T`: the job built from the unpatched
/// and the patched dump, disassembled and compared.
pub fn objdiff(opts: &ObjdiffOptions) -> Result<ObjDiff, Diagnostics> {
    let m = Manifest::load(&opts.manifest)?;
    let t = opts.target;
    let kernel = &opts.kernel;
    let ki = m.kernel_index(kernel)?;
    let plan = pipeline::plan(&m, &[t])?;
    let job = find_job(&plan, ki, kernel, Some(&t))?;
    let tc = opts.tools.find(Some(&m))?;
    let work = scratch()?;
    diff_job(&m, &plan, &job, &tc, work.path())
}

/// Disassemble `hsaco` ([`Toolchain::objdump`]), normalized by [`normalize`].
pub(crate) fn disassemble(tc: &Toolchain, hsaco: &Path, job: &str) -> Result<String, Diagnostics> {
    let flags = [
        "-d",
        "--symbolize-operands",
        "--no-show-raw-insn",
        "--no-leading-addr",
    ];
    let args = flags
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([hsaco.as_os_str()]);
    let text = tc.objdump(args, job, Code::ToolFailed)?;
    Ok(normalize(&text))
}

/// Whether `name` is a label `llvm-objdump --symbolize-operands` made up
/// for a branch target (`label_0153` on AMDGPU, `L0` elsewhere), not a symbol.
fn is_branch_label(name: &str) -> bool {
    let hex = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_hexdigit());
    name.strip_prefix("label_").is_some_and(hex)
        || name
            .strip_prefix('L')
            .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
}

/// Keep the `<symbol>:` lines, the branch-target labels and the
/// instructions; drop the file header, `// address: encoding` comments and
/// each kernel's trailing padding (`s_nop 0`, `s_code_end`), whose length
/// moves when code is inserted. Branch-target labels, whose names objdump
/// derives from addresses, are renamed `L0`, `L1`, … in order within each
/// symbol, in their `Ln:` lines and in the operands naming them.
pub(crate) fn normalize(listing: &str) -> String {
    // Lines as (is a label, text), with each symbol's labels renamed.
    let mut out: Vec<String> = Vec::new();
    let trim_padding = |out: &mut Vec<String>| {
        while out
            .last()
            .is_some_and(|l| l == "s_nop 0" || l == "s_code_end")
        {
            out.pop();
        }
    };
    // The code lines of one symbol, then renamed when the symbol ends.
    let mut block: Vec<(bool, String)> = Vec::new();
    let flush = |block: &mut Vec<(bool, String)>, out: &mut Vec<String>| {
        let mut names: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        for (is_label, text) in block.iter() {
            if *is_label {
                let n = names.len();
                names.entry(text.clone()).or_insert_with(|| format!("L{n}"));
            }
        }
        for (is_label, text) in block.drain(..) {
            if is_label {
                out.push(format!("{}:", names[&text]));
            } else {
                let renamed: Vec<String> = text
                    .split(' ')
                    .map(|w| {
                        let (core, comma) = match w.strip_suffix(',') {
                            Some(c) => (c, ","),
                            None => (w, ""),
                        };
                        let core = core.trim_start_matches('<').trim_end_matches('>');
                        match names.get(core) {
                            Some(n) => format!("{n}{comma}"),
                            None => w.to_string(),
                        }
                    })
                    .collect();
                out.push(renamed.join(" "));
            }
        }
        trim_padding(out);
    };
    for line in listing.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        if code.is_empty() || code.contains("file format") || code.starts_with("Disassembly of") {
            continue;
        }
        if code.starts_with('<') && code.ends_with(">:") {
            let name = &code[1..code.len() - 2];
            if is_branch_label(name) {
                block.push((true, name.to_string()));
                continue;
            }
            flush(&mut block, &mut out);
            out.push(String::new());
            out.push(code.to_string());
            continue;
        }
        block.push((false, code.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    flush(&mut block, &mut out);
    let mut text = out.join("\n");
    text.push('\n');
    text.trim_start_matches('\n').to_string()
}

/// Register, LDS and occupancy fields of every kernel that differ between
/// the two prepared asm texts.
pub(crate) fn field_changes(before: &Document, after: &Document, target: &TargetId) -> Vec<String> {
    let b = budget::analyze(before.asm(), target);
    let a = budget::analyze(after.asm(), target);
    let mut out = Vec::new();
    let show = |v: &Option<budget::DeclaredValue>| {
        v.as_ref()
            .map(|v| v.text.clone())
            .unwrap_or_else(|| "-".into())
    };
    for ka in &a {
        let Some(kb) = b.iter().find(|k| k.kernel == ka.kernel) else {
            continue;
        };
        let (db, da) = (&kb.declared, &ka.declared);
        let pairs = [
            (
                ".amdhsa_next_free_vgpr",
                &db.next_free_vgpr,
                &da.next_free_vgpr,
            ),
            (
                ".amdhsa_next_free_sgpr",
                &db.next_free_sgpr,
                &da.next_free_sgpr,
            ),
            (".amdhsa_accum_offset", &db.accum_offset, &da.accum_offset),
            (
                ".amdhsa_group_segment_fixed_size (LDS bytes)",
                &db.group_segment_fixed_size,
                &da.group_segment_fixed_size,
            ),
            (".vgpr_count", &db.vgpr_count, &da.vgpr_count),
            (".agpr_count", &db.agpr_count, &da.agpr_count),
            (".sgpr_count", &db.sgpr_count, &da.sgpr_count),
        ];
        for (name, x, y) in pairs {
            let (x, y) = (show(x), show(y));
            if x != y {
                out.push(format!("{}: {name} {x} -> {y}", ka.kernel));
            }
        }
        let occ = |k: &budget::KernelBudget| {
            budget::allocated_occupancy(k, target).map(|(o, _, _)| o.to_string())
        };
        let (ob, oa) = (occ(kb), occ(ka));
        if ob != oa {
            out.push(format!(
                "{}: occupancy {} -> {}",
                ka.kernel,
                ob.unwrap_or_else(|| "-".into()),
                oa.unwrap_or_else(|| "-".into())
            ));
        }
    }
    out
}

/// Build `job` from the unpatched and the patched dump and compare.
pub(crate) fn diff_job(
    manifest: &Manifest,
    plan: &Plan,
    job: &Job,
    tc: &Toolchain,
    work: &Path,
) -> Result<ObjDiff, Diagnostics> {
    let kernel = &manifest.kernels[job.kernel];
    let label = pipeline::label(&kernel.name, &job.target);
    let patched = pipeline::prepare(manifest, plan, job, tc.version.major)?;
    let (original, opts) = pipeline::job_inputs(manifest, plan, job, tc.version.major)?;
    // The unpatched side is the dump as shipped: judged against itself (its
    // findings are inherited warnings, as `check` and `build` judge them),
    // and its register counts kept as declared, so that a rewrite by
    // `registers = "update"` shows as a field change.
    let unpatched: Prepared = pipeline::prepare_traced_with(
        &kernel.name,
        Some(&original.original),
        &original.original,
        &opts,
        crate::config::policy::RegisterPolicy::Error,
        crate::config::policy::HazardPolicy::Warn,
    )?;
    let mut listings = Vec::new();
    for (name, p) in [("unpatched", &unpatched), ("patched", &patched)] {
        let dir = work.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| {
            Diagnostics::from(Diagnostic::error(
                Code::CreateDirFailed,
                format!("cannot create `{}`: {e}", dir.display()),
            ))
        })?;
        let out = dir.join("out.hsaco");
        pipeline::build(tc, p, &dir, &out)?;
        listings.push(disassemble(tc, &out, &format!("{name} {label}"))?);
    }
    let t = job.target.name();
    let diff = if listings[0] == listings[1] {
        String::new()
    } else {
        let body = diffy::create_patch(&listings[0], &listings[1]).to_string();
        let hunks = body.find("\n@@").map_or("", |i| &body[i + 1..]);
        format!(
            "--- {}.unpatched.{t}.hsaco\n+++ {}.patched.{t}.hsaco\n{hunks}",
            kernel.name, kernel.name
        )
    };
    Ok(ObjDiff {
        diff,
        fields: field_changes(&unpatched.asm, &patched.asm, &job.target),
    })
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn normalize_names_branch_targets_by_label_in_order() {
        let listing = "<k0>:\n\ts_cbranch_scc0 label_0153 // 000000002500: BF840012\n\ts_nop 1\n<label_0153>:\n\ts_branch label_0150\n\ts_endpgm\n<label_0150>:\n\ts_nop 0\n\n<k1>:\n<label_0201>:\n\ts_branch label_0201\n";
        assert_eq!(
            normalize(listing),
            "<k0>:\ns_cbranch_scc0 L0\ns_nop 1\nL0:\ns_branch L1\ns_endpgm\nL1:\n\n<k1>:\nL0:\ns_branch L0\n"
        );
    }

    #[test]
    fn normalize_strips_addresses_encodings_and_padding() {
        let listing = "\nx.hsaco:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n<k0>:\n\ts_load_dwordx2 s[2:3], s[0:1], 0x0   // 000000001A00: C0060080 00000000\n\ts_endpgm  // 000000001A08: BF810000\n\ts_nop 0   // 000000001A0C: BF800000\n\ts_code_end // 000000001A10: BF9F0000\n\n<k1>:\n\ts_endpgm // 000000001B00: BF810000\n";
        assert_eq!(
            normalize(listing),
            "<k0>:\ns_load_dwordx2 s[2:3], s[0:1], 0x0\ns_endpgm\n\n<k1>:\ns_endpgm\n"
        );
    }
}
