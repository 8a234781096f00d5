//! retarget stage: rewrite a dump for a target ID and normalize toolchain skew.
//!
//! [`retarget`] takes the traced lines of a (patched) dump and returns them
//! rewritten for [`RetargetOptions::target`], assembled later by the LLVM of
//! [`RetargetOptions::assembler_llvm_major`]:
//!
//! * `.amdgcn_target` becomes [`TargetId::hsa_isa_name`]
//!   (`amdgcn-amd-amdhsa--gfx950`, with features if pinned). This also
//!   normalizes the LLVM 23+ triple spelling
//!   (`amdgpu9.42-amd-amdhsa-unknown-gfx942`) that LLVM 22 rejects there.
//!   Metadata `amdhsa.target` becomes the same when it names another target
//!   ID; another spelling of the target built is kept (LLVM 22 takes any
//!   string there), so the metadata note keeps the compiler's bytes. The
//!   metadata value is single-quoted when it contains `:`, as clang-22 writes.
//! * `.amdhsa_code_object_version` is kept (or inserted when missing), set from
//!   [`RetargetOptions::code_object_version`], and forced to 6 for generic
//!   targets (the assembler does not enforce it but the ROCm loader rejects
//!   generic code objects below v6). When the version changes (or the source
//!   declares none), metadata `amdhsa.version` follows: v4 → `[1, 1]`, v5 and
//!   v6 → `[1, 2]` (what clang-22 writes); the source's own version keeps its
//!   metadata version (aiter's v5 objects say `[1, 0]`).
//! * Descriptor fields the target lacks are removed or translated (see
//!   `fields`); fields the target requires are inserted
//!   (`.amdhsa_accum_offset`, `.amdhsa_wavefront_size32 0` for wave64 code on
//!   gfx10+); `.amdhsa_reserve_xnack_mask` follows the target's xnack setting.
//!   Changes that would alter the kernel's ABI (user SGPR layout, scratch
//!   setup, AGPR layout, preloaded kernel arguments, wave size, implicit
//!   argument layout of v4 vs v5+) are errors.
//! * Instructions are never translated: retargeting across generations
//!   (gfx942 → gfx1100) leaves them for the assembler to reject.
//! * Skew (`skew`): `instprefsize(...)` becomes an LLVM 22 expression;
//!   gfx12 VOPD pairs that read one VGPR in both halves get src0/src1 of a
//!   half swapped where an exact equivalent exists
//!   ([`skew::normalize_vopd`]); the other pairs are errors.
//!
//! Every rewritten line gets `Origin::Retarget { replaces: Some(original) }`,
//! every inserted line `Origin::Retarget { replaces: None }`; deleted lines
//! are listed in [`Retargeted::notes`].

pub(crate) mod fields;
pub(crate) mod skew;

use std::collections::HashSet;

use gcn_embed::{Feature, Generation, Processor, TargetId};

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::document::{indent_of, Document, Edits};
use crate::base::parse::edit::replace_value;
use crate::base::parse::{AsmFile, Descriptor, Kernel, LineKind, RegFile};
use crate::base::provenance::Origin;

pub use skew::normalize_vopd;

/// What to retarget to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetargetOptions {
    /// The target ID to write (`gfx950`, `gfx942:xnack-`, `gfx9-4-generic`).
    pub target: TargetId,
    /// Code object version to write. `None`: keep the source's (generic
    /// targets force 6).
    pub code_object_version: Option<u32>,
    /// Major version of the LLVM that will assemble the output (e.g. 22).
    pub assembler_llvm_major: u32,
}

impl RetargetOptions {
    /// Options for `target`, keeping the code object version, for LLVM 22.
    pub fn new(target: TargetId) -> Self {
        RetargetOptions {
            target,
            code_object_version: None,
            assembler_llvm_major: 22,
        }
    }
}

/// The result of [`retarget`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retargeted {
    /// The rewritten lines with their origins.
    pub asm: Document,
    /// The code object version the output declares.
    pub code_object_version: u32,
    /// What was changed or removed, one sentence each.
    pub notes: Vec<String>,
    /// Lines rewritten for toolchain skew (gfx12 VOPD pairs), each a note at
    /// the line the user wrote: worth showing on every build.
    pub rewrites: Vec<Diagnostic>,
}

/// Code object versions LLVM 22's assembler accepts.
pub const SUPPORTED_CODE_OBJECT_VERSIONS: [u32; 3] = [4, 5, 6];

/// Rewrite `input` for `opts.target`. See the [module docs](self).
pub fn retarget(input: &Document, opts: &RetargetOptions) -> Result<Retargeted, Diagnostics> {
    let file = input.asm();
    let target = &opts.target;
    let p = target.processor;
    let mut cx = Cx {
        cross_generation: false,
        input,
        file,
        opts,
        edits: Rewrites::new(input),
        errors: vec![],
        notes: vec![],
    };

    if p.min_llvm > opts.assembler_llvm_major {
        cx.errors.push(
            Diagnostic::error(
                Code::AssemblerTooOld,
                format!(
                    "LLVM {} cannot assemble for {}: it needs LLVM >= {}",
                    opts.assembler_llvm_major, p.name, p.min_llvm
                ),
            )
            .with_help(format!(
                "install a newer LLVM (clang and ld.lld >= {}) or drop {} from the targets",
                p.min_llvm, p.name
            )),
        );
    }

    // Source target.
    let src_target = file.target_directive();
    let src_id = match &src_target {
        Some((i, s)) => match TargetId::parse(s) {
            Ok(id) => Some(id),
            Err(e) => {
                cx.error_at(
                    Code::DumpTargetInvalid,
                    *i,
                    format!("cannot read the dump's target ID `{s}`"),
                    Some(e.to_string()),
                    "fix the `.amdgcn_target` line (e.g. `.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"`)",
                );
                None
            }
        },
        None => None,
    };
    let src_proc = src_id.as_ref().map(|t| t.processor);
    cx.cross_generation = src_proc.is_some_and(|s| s.generation != p.generation);

    let version = cx.code_object_version(src_proc);
    let isa = target.hsa_isa_name();
    // `.amdgcn_target` and `.amdhsa_code_object_version`.
    let what_target = format!("target ID {}", target.name());
    let target_line = src_target.as_ref().map(|(i, _)| *i);
    match target_line {
        Some(i) => {
            let text = input.text(i);
            if let Some(new) = replace_quoted(text, &isa) {
                cx.edits.replace(i, new, &what_target);
                if let Some((_, old)) = &src_target {
                    cx.notes.push(format!("target `{old}` -> `{isa}`"));
                }
            }
        }
        None => {
            cx.edits
                .insert_front(format!("\t.amdgcn_target \"{isa}\""), &what_target);
            cx.notes.push(format!(
                "inserted `.amdgcn_target \"{isa}\"` (the source had none)"
            ));
        }
    }
    if let Some(v) = version {
        let what = format!("code object version {v}");
        match file.code_object_version() {
            Some((i, old)) if old != v => {
                let new = replace_value(input.text(i), &v.to_string());
                cx.edits.replace(i, new, &what);
                cx.notes.push(format!("code object version {old} -> {v}"));
            }
            Some(_) => {}
            None => {
                let line = format!("\t.amdhsa_code_object_version {v}");
                match target_line {
                    Some(i) => cx.edits.insert_after(i, line, &what),
                    None => cx.edits.insert_front(line, &what),
                }
                cx.notes.push(format!(
                    "inserted `.amdhsa_code_object_version {v}` (the source had none)"
                ));
            }
        }
        cx.metadata(&isa, v, &what_target);
    }

    for k in input.kernels() {
        if let Some(d) = &k.descriptor {
            cx.descriptor(k, d, src_proc);
        }
    }

    let vopd = skew::normalize_vopd(input, p, opts.assembler_llvm_major);
    let mut rewrites = Vec::new();
    for r in vopd.rewrites {
        let mut lines = r.lines.into_iter();
        if let Some(first) = lines.next() {
            cx.edits.replace(r.line, first, &r.what);
        }
        for more in lines {
            cx.edits.insert_after(r.line, more, &r.what);
        }
        cx.notes.push(r.note);
        rewrites.push(r.diagnostic);
    }
    cx.errors.extend(vopd.errors);

    if let Some(src) = &src_id {
        if src.processor.name != p.name {
            if src.processor.generation != p.generation {
                cx.notes.push(format!(
                    "{} ({}) -> {} ({}): instructions are not translated; the assembler \
                     rejects those {} lacks",
                    src.processor.name, src.processor.generation, p.name, p.generation, p.name
                ));
            } else {
                cx.notes.push(format!(
                    "{} -> {}: same generation ({}); instructions are kept as they are",
                    src.processor.name, p.name, p.generation
                ));
            }
        }
        if src.xnack == Feature::Off && target.xnack != Feature::Off && p.xnack {
            cx.notes.push(format!(
                "the source was compiled for xnack- but the target is {}: code built \
                 without XNACK replay may fault under demand paging",
                target.name()
            ));
        }
    }

    if !cx.errors.is_empty() {
        return Err(Diagnostics(cx.errors));
    }
    let Some(version) = version else {
        // Unreachable in practice: a missing version is always an error above.
        return Err(Diagnostic::error(
            Code::NoCodeObjectVersion,
            "no code object version could be chosen",
        )
        .into());
    };
    let asm = cx.edits.apply();
    Ok(Retargeted {
        asm,
        code_object_version: version,
        notes: cx.notes,
        rewrites,
    })
}

struct Cx<'a> {
    /// Source and target are in different generations: ABI problems are
    /// left for the assembler (which rejects the instructions first).
    cross_generation: bool,
    input: &'a Document,
    file: &'a AsmFile,
    opts: &'a RetargetOptions,
    edits: Rewrites<'a>,
    errors: Vec<Diagnostic>,
    notes: Vec<String>,
}

impl Cx<'_> {
    /// A descriptor change that would break the kernel's ABI: an error, or,
    /// across generations, a note (the line is kept and the assembler
    /// rejects it, after the first unsupported instruction).
    fn abi_problem(&mut self, i: usize, msg: String, note: Option<String>, help: &str) {
        if self.cross_generation {
            self.notes.push(format!(
                "{msg}; kept `{}` for the assembler to reject",
                self.input.text(i).trim()
            ));
        } else {
            self.error_at(Code::RetargetAbiChange, i, msg, note, help);
        }
    }

    fn error_at(&mut self, code: Code, i: usize, msg: String, note: Option<String>, help: &str) {
        let mut d = self
            .input
            .locate(Diagnostic::error(code, msg).with_help(help), i, None, "");
        if let Some(n) = note {
            d = d.with_note(n);
        }
        self.errors.push(d);
    }

    /// The version to write, or `None` after pushing an error.
    fn code_object_version(&mut self, src_proc: Option<&Processor>) -> Option<u32> {
        let p = self.opts.target.processor;
        let src = self.file.code_object_version();
        let inferred = src.map(|s| s.1).or_else(|| {
            if src_proc.is_some_and(|s| s.is_generic) {
                return Some(6);
            }
            match self.file.metadata_version() {
                Some((_, v)) if v == [1, 1] => Some(4),
                Some((_, v)) if v == [1, 2] => Some(5),
                _ => None,
            }
        });
        let v = if p.is_generic {
            match self.opts.code_object_version {
                Some(v) if v < 6 => {
                    self.errors.push(
                        Diagnostic::error(
                            Code::CodeObjectVersionForGeneric,
                            format!(
                                "code object version {v} was requested for the generic target {}",
                                p.name
                            ),
                        )
                        .with_note("the ROCm loader rejects generic code objects below version 6")
                        .with_help("request code object version 6 (or leave it unset)"),
                    );
                    return None;
                }
                _ => 6,
            }
        } else {
            self.opts.code_object_version.or(inferred).unwrap_or(5)
        };
        if !SUPPORTED_CODE_OBJECT_VERSIONS.contains(&v) {
            self.errors.push(
                Diagnostic::error(
                    Code::UnsupportedCodeObjectVersion,
                    format!("code object version {v} is not supported"),
                )
                .with_note(format!(
                    "LLVM {} assembles code object versions 4, 5 and 6",
                    self.opts.assembler_llvm_major
                ))
                .with_help("request version 4, 5 or 6"),
            );
            return None;
        }
        if let Some(old) = inferred {
            if (old == 4) != (v == 4) {
                if let Some(i) = self.hidden_argument_line() {
                    self.error_at(
                        Code::CodeObjectVersionChange,
                        i,
                        format!(
                            "cannot change the code object version from {old} to {v}: the kernel \
                             reads implicit (hidden) kernel arguments"
                        ),
                        Some(format!(
                            "code object v4 and v5/v6 lay out the implicit kernel arguments \
                             differently; the code reads them at the v{old} offsets"
                        )),
                        &format!("keep code object version {old}, or recompile for v{v}"),
                    );
                    return None;
                }
            }
        }
        if src.is_none() && inferred.is_some() && !p.is_generic {
            self.notes.push(format!(
                "no `.amdhsa_code_object_version` in the source: using {v} (from amdhsa.version)"
            ));
        }
        Some(v)
    }

    fn hidden_argument_line(&self) -> Option<usize> {
        self.file.lines.iter().position(|l| {
            *l.kind() == LineKind::Metadata
                && l.text().contains(".value_kind:")
                && l.text().contains("hidden_")
        })
    }

    fn metadata(&mut self, isa: &str, version: u32, what_target: &str) {
        let Some(md) = self.file.metadata() else {
            return;
        };
        if let Some((i, old)) = &md.target {
            let text = self.input.text(*i);
            let quoted = if isa.contains(':') {
                format!("'{isa}'")
            } else {
                isa.to_string()
            };
            // Another spelling of the very target built (the LLVM 23+ triple
            // `amdgpu9.42-amd-amdhsa-unknown-gfx942`, which LLVM 22 takes in
            // metadata) is kept: the note then keeps the compiler's bytes and
            // length, so the layout after it (`.rodata`, the descriptors'
            // code-entry offsets) does not move.
            let same_target = TargetId::parse(old).is_ok_and(|t| t == self.opts.target);
            if old != isa && !same_target {
                let new = replace_value(text, &quoted);
                self.edits.replace(*i, new, what_target);
            }
        }
        let want: [u32; 2] = if version == 4 { [1, 1] } else { [1, 2] };
        // The source's own code object version is kept with its own metadata
        // version (aiter's v5 objects say `[1, 0]`; rewriting it changed the
        // note's bytes); only a version change rewrites it.
        let same_version = self
            .file
            .code_object_version()
            .is_some_and(|(_, v)| v == version);
        if let Some((i, old)) = &md.version {
            if old.as_slice() == want || same_version {
                return;
            }
            let what = format!("metadata version for code object v{version}");
            let text = self.input.text(*i);
            let list_lines: Vec<usize> = (*i + 1..self.file.lines.len())
                .take_while(|&j| {
                    let t = self.input.text(j).trim_start();
                    *self.file.lines[j].kind() == LineKind::Metadata && t.starts_with("- ")
                })
                .collect();
            if list_lines.len() == 2 && old.len() == 2 {
                for (k, &j) in list_lines.iter().enumerate() {
                    if old[k] != want[k] {
                        let t = self.input.text(j);
                        let new = t.replacen(&old[k].to_string(), &want[k].to_string(), 1);
                        self.edits.replace(j, new, &what);
                    }
                }
            } else {
                let cr = if text.ends_with('\r') { "\r" } else { "" };
                self.edits.replace(
                    *i,
                    format!("amdhsa.version: [ {}, {} ]{cr}", want[0], want[1]),
                    &what,
                );
                for j in list_lines {
                    self.edits.delete(j);
                }
            }
        }
    }

    fn descriptor(&mut self, k: &Kernel, d: &Descriptor, src_proc: Option<&Processor>) {
        let target = &self.opts.target;
        let p = target.processor;
        let name = &k.name;
        let has = |short: &str| d.get(short).is_some();
        let uses_agpr = k
            .set("num_agpr")
            .and_then(|s| s.value.trim().parse::<u64>().ok())
            .is_some_and(|n| n > 0)
            || k.metadata
                .as_ref()
                .and_then(|m| m.agpr_count)
                .is_some_and(|(_, n)| n > 0)
            || k.blocks.iter().any(|b| {
                b.lines.clone().any(|i| {
                    self.file.lines[i]
                        .instruction()
                        .is_some_and(|ins| ins.registers().any(|r| r.file == RegFile::Agpr))
                })
            });
        let wave32 = d
            .get("wavefront_size32")
            .is_some_and(|f| f.value.trim() == "1")
            || k.metadata
                .as_ref()
                .and_then(|m| m.wavefront_size)
                .is_some_and(|(_, w)| w == 32);
        if wave32 && !p.wave32 {
            let line = d.get("wavefront_size32").map(|f| f.line).unwrap_or(d.start);
            self.abi_problem(
                line,
                format!(
                    "kernel `{name}` runs in wave32, which {} does not support",
                    p.name
                ),
                None,
                "retarget wave32 code only to gfx10+ targets, or recompile with wave64",
            );
        }
        let mut inserted: HashSet<&str> = HashSet::new();
        for f in &d.fields {
            let short = f.name.strip_prefix(".amdhsa_").unwrap_or(&f.name);
            let value = f.value.trim();
            let what = format!("descriptor of `{name}` for {}", p.name);
            match fields::support(&f.name, p) {
                Err(why) => match short {
                    "accum_offset" if uses_agpr => self.abi_problem(
                        f.line,
                        format!(
                            "kernel `{name}` uses AGPRs in the unified register file; {} has none",
                            p.name
                        ),
                        Some(format!("LLVM: {} on {}", why, p.name)),
                        "recompile for the target instead of retargeting",
                    ),
                    "user_sgpr_kernarg_preload_length" if value != "0" => self.abi_problem(
                        f.line,
                        format!(
                            "kernel `{name}` preloads {value} kernel-argument SGPRs; {} cannot",
                            p.name
                        ),
                        Some(format!("LLVM: {why}")),
                        "recompile for the target (without kernarg preloading)",
                    ),
                    "enable_private_segment" => {
                        if value != "0" {
                            self.abi_problem(
                                f.line,
                                format!(
                                    "kernel `{name}` uses scratch through architected flat scratch, \
                                     which {} lacks",
                                    p.name
                                ),
                                Some(format!(
                                    "{} needs flat-scratch initialization code in the kernel",
                                    p.name
                                )),
                                "recompile for the target instead of retargeting",
                            );
                            continue;
                        }
                        let new = self.input.styled(
                            f.line,
                            ".amdhsa_system_sgpr_private_segment_wavefront_offset 0",
                        );
                        self.edits.replace(f.line, new, &what);
                        if !has("reserve_flat_scratch") && inserted.insert("reserve_flat_scratch") {
                            let new = self.input.styled(f.line, ".amdhsa_reserve_flat_scratch 0");
                            self.edits.insert_after(f.line, new, &what);
                        }
                        self.notes.push(format!(
                            "`{name}`: .amdhsa_enable_private_segment 0 -> \
                             .amdhsa_system_sgpr_private_segment_wavefront_offset 0 \
                             (+ .amdhsa_reserve_flat_scratch 0): {} has no architected flat scratch",
                            p.name
                        ));
                    }
                    "user_sgpr_private_segment_buffer" | "user_sgpr_flat_scratch_init"
                        if value != "0" =>
                    {
                        self.abi_problem(
                            f.line,
                            format!(
                                "kernel `{name}` expects {} in its user SGPRs; {} (architected \
                                 flat scratch) cannot provide it",
                                if short.ends_with("buffer") {
                                    "the private segment buffer"
                                } else {
                                    "flat scratch init"
                                },
                                p.name
                            ),
                            Some("the user SGPR layout (and kernel argument pointer register) would change".into()),
                            "recompile for the target instead of retargeting",
                        )
                    }
                    "system_sgpr_private_segment_wavefront_offset" => {
                        let new = self
                            .input
                            .styled(f.line, &format!(".amdhsa_enable_private_segment {value}"));
                        self.edits.replace(f.line, new, &what);
                        self.notes.push(format!(
                            "`{name}`: .amdhsa_system_sgpr_private_segment_wavefront_offset \
                             {value} -> .amdhsa_enable_private_segment {value} ({} has \
                             architected flat scratch)",
                            p.name
                        ));
                    }
                    "wavefront_size32" if value != "0" => {} // reported above
                    _ => {
                        self.edits.delete(f.line);
                        self.notes.push(format!(
                            "`{name}`: removed `{} {}` (LLVM: {} on {})",
                            f.name, value, why, p.name
                        ));
                    }
                },
                Ok(()) => match short {
                    "reserve_xnack_mask" => {
                        // gfx1250/gfx1251: no xnack in the target-ID syntax,
                        // but LLVM 22 treats it as on ("any" in e_flags) and
                        // requires the mask reserved (`elf_xnack`).
                        let want = if (p.xnack || p.elf_xnack) && target.xnack != Feature::Off {
                            "1"
                        } else {
                            "0"
                        };
                        if value != want {
                            let new = replace_value(self.input.text(f.line), want);
                            self.edits.replace(f.line, new, &what);
                            self.notes.push(format!(
                                "`{name}`: .amdhsa_reserve_xnack_mask {value} -> {want} \
                                 (must match the target ID {})",
                                target.name()
                            ));
                        }
                    }
                    "inst_pref_size"
                        if self.opts.assembler_llvm_major < skew::INSTPREFSIZE_LLVM =>
                    {
                        if let Some(expr) =
                            skew::instprefsize_expr(value, skew::inst_pref_size_max(p))
                        {
                            let new = replace_value(self.input.text(f.line), &expr);
                            self.edits.replace(
                                f.line,
                                new,
                                &format!(
                                    "instprefsize() for LLVM {}",
                                    self.opts.assembler_llvm_major
                                ),
                            );
                            self.notes.push(format!(
                                "`{name}`: instprefsize(...) (LLVM >= {}) rewritten as an LLVM {} \
                                 expression",
                                skew::INSTPREFSIZE_LLVM,
                                self.opts.assembler_llvm_major
                            ));
                        }
                    }
                    _ => {}
                },
            }
        }
        // Fields the target requires.
        let anchor = d
            .get("next_free_vgpr")
            .map(|f| f.line)
            .or(d.fields.last().map(|f| f.line))
            .unwrap_or(d.start);
        let indent = d
            .fields
            .first()
            .map(|f| indent_of(self.input.text(f.line)).to_string())
            .unwrap_or_else(|| "\t\t".into());
        let cr = if self.input.text(d.start).ends_with('\r') {
            "\r"
        } else {
            ""
        };
        let what = format!("descriptor of `{name}` for {}", p.name);
        if p.accum_offset && !has("accum_offset") {
            let nfv = d
                .get("next_free_vgpr")
                .and_then(|f| f.value.trim().parse::<u32>().ok());
            match (uses_agpr, nfv) {
                (false, Some(n)) => {
                    let acc = n.max(1).div_ceil(4) * 4;
                    self.edits.insert_after(
                        anchor,
                        format!("{indent}.amdhsa_accum_offset {acc}{cr}"),
                        &what,
                    );
                    self.notes.push(format!(
                        "`{name}`: inserted .amdhsa_accum_offset {acc} (required on {})",
                        p.name
                    ));
                }
                _ => self.abi_problem(
                    d.start,
                    format!(
                        "kernel `{name}` needs .amdhsa_accum_offset on {} but it cannot be derived",
                        p.name
                    ),
                    Some(if uses_agpr {
                        "the kernel uses AGPRs, whose layout differs in the unified register file"
                            .into()
                    } else {
                        ".amdhsa_next_free_vgpr is not a number".into()
                    }),
                    "recompile for the target, or add `.amdhsa_accum_offset` in a patch",
                ),
            }
        }
        let src_wave64 = !wave32
            && (src_proc.is_some_and(|s| s.generation < Generation::Gfx10_1)
                || k.metadata
                    .as_ref()
                    .and_then(|m| m.wavefront_size)
                    .is_some_and(|(_, w)| w == 64));
        if p.generation >= Generation::Gfx10_1 && !has("wavefront_size32") && src_wave64 {
            self.edits.insert_after(
                anchor,
                format!("{indent}.amdhsa_wavefront_size32 0{cr}"),
                &what,
            );
            self.notes.push(format!(
                "`{name}`: inserted .amdhsa_wavefront_size32 0 (wave64 code on {})",
                p.name
            ));
        }
    }
}

/// Retargeting's edits: [`Edits`] of the input, each rewritten line's
/// origin recording what it replaces and why.
struct Rewrites<'a> {
    input: &'a Document,
    edits: Edits,
}

impl<'a> Rewrites<'a> {
    fn new(input: &'a Document) -> Self {
        Rewrites {
            input,
            edits: Edits::new(),
        }
    }
    fn origin(&self, i: usize) -> Origin {
        self.input
            .origin(i)
            .cloned()
            .unwrap_or_else(|| Origin::Generated("patched asm".into()))
    }
    /// Replace line `i`, unless it is a raw instruction line: its bytes are
    /// the instruction as the original code object has it, and no
    /// retargeting step may rewrite them (none means to: this guards the
    /// steps to come).
    fn replace(&mut self, i: usize, text: String, what: &str) {
        if self.input.lines().get(i).is_some_and(|l| l.is_raw()) {
            debug_assert!(false, "{what} would rewrite the raw line {}", i + 1);
            return;
        }
        let origin = if text == self.input.text(i) {
            self.origin(i)
        } else {
            Origin::Retarget {
                replaces: Some(Box::new(self.origin(i))),
                what: what.to_string(),
            }
        };
        self.edits.replace(i, text, origin);
    }
    fn delete(&mut self, i: usize) {
        self.edits.delete(i);
    }
    fn insert_after(&mut self, i: usize, text: String, what: &str) {
        self.edits.insert_after(i, text, inserted(what));
    }
    fn insert_front(&mut self, text: String, what: &str) {
        self.edits.insert_before(0, text, inserted(what));
    }
    fn apply(self) -> Document {
        self.input.applied(self.edits)
    }
}

fn inserted(what: &str) -> Origin {
    Origin::Retarget {
        replaces: None,
        what: what.to_string(),
    }
}

/// Replace the first `"…"` of `text` by `"new"`; `None` if unchanged or no quotes.
fn replace_quoted(text: &str, new: &str) -> Option<String> {
    let a = text.find('"')?;
    let b = a + 1 + text[a + 1..].find('"')?;
    if &text[a + 1..b] == new {
        return None;
    }
    Some(format!("{}\"{new}\"{}", &text[..a], &text[b + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_helpers_keep_layout() {
        assert_eq!(
            replace_quoted(
                "\t.amdgcn_target \"amdgpu9.42-amd-amdhsa-unknown-gfx942\"",
                "amdgcn-amd-amdhsa--gfx950"
            ),
            Some("\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx950\"".into())
        );
        assert_eq!(replace_quoted("\t.amdgcn_target \"x\"", "x"), None);
    }
}
