//! `gcn-patch retarget` and `gcn-patch assemble`: one asm file, no manifest.

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use super::{kernel_name, parse_target, read_asm, scratch, Tools};
use crate::check::RegisterPolicy;
use crate::diag::{Diagnostic, Diagnostics};
use crate::document::Document;
use crate::pipeline;
use crate::retarget::RetargetOptions;

/// `gcn-patch retarget FILE --target T`: FILE retargeted, with toolchain
/// skew normalized for the assembler `tools` finds.
pub fn retarget(file: &Path, target: &str, tools: &Tools) -> Result<Document, Diagnostics> {
    let target = parse_target(target)?;
    let asm = read_asm(file)?;
    let opts = RetargetOptions {
        target,
        code_object_version: None,
        assembler_llvm_major: tools.assembler_major(None),
    };
    Ok(crate::retarget::retarget(&asm, &opts)?.asm)
}

/// What `gcn-patch assemble` is asked to do.
#[derive(Debug, Clone)]
pub struct AssembleOptions {
    /// The asm file.
    pub file: PathBuf,
    /// Target ID (`--target`).
    pub target: String,
    /// The code object to write (atomically).
    pub output: PathBuf,
    /// Rewrite register counts to what the code uses instead of failing.
    pub update_registers: bool,
    /// The LLVM tools.
    pub tools: Tools,
}

/// What `gcn-patch assemble` did.
#[derive(Debug)]
pub struct Assembled {
    /// The code object written.
    pub output: PathBuf,
    /// Its target.
    pub target: TargetId,
    /// Its ELF `e_flags`.
    pub e_flags: u32,
    /// How many kernels it holds.
    pub kernels: usize,
    /// Notes from preparation (occupancy, register updates, rewrites).
    pub notes: Vec<Diagnostic>,
}

/// `gcn-patch assemble FILE --target T -o OUT`: retarget, check, assemble,
/// link and verify FILE into OUT.
pub fn assemble(opts: &AssembleOptions) -> Result<Assembled, Diagnostics> {
    let target = parse_target(&opts.target)?;
    super::refuse_directory(&opts.output)?;
    let tc = opts.tools.find(None)?;
    let asm = read_asm(&opts.file)?;
    let retarget = RetargetOptions {
        target,
        code_object_version: None,
        assembler_llvm_major: tc.version.major,
    };
    let policy = if opts.update_registers {
        RegisterPolicy::Update
    } else {
        RegisterPolicy::Error
    };
    let prepared =
        pipeline::prepare_traced(&kernel_name(&opts.file), None, &asm, &retarget, policy)?;
    let work = scratch()?;
    let report = pipeline::build(&tc, &prepared, work.path(), &opts.output)?;
    Ok(Assembled {
        output: opts.output.clone(),
        target: prepared.target,
        e_flags: report.e_flags,
        kernels: prepared.symbols.len(),
        notes: prepared.notes,
    })
}
