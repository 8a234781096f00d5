//! Lift stage: one AMDGPU code object → editable assembly that rebuilds
//! byte-identically (`gcn-patch lift`, and `gcn-patch import` of binaries).
//!
//! The output is an ordinary dump: `.amdgcn_target` and
//! `.amdhsa_code_object_version` from the ELF header, every symbol with its
//! type, binding, visibility and size, the `.text` as instructions (each
//! checked to re-encode to its original bytes, else kept as a raw `.long`
//! line with its disassembly beside it), each kernel descriptor as an
//! `.amdhsa_kernel` block (checked to re-assemble to the same 64 bytes, else
//! raw bytes with every field decoded in a comment), other `.rodata`/`.data`
//! with its symbols, and the metadata as `.amdgpu_metadata` (checked to decode
//! to the same MessagePack document).

// `Diagnostic` is the error type of every stage (see `diag`); it is large by design.
#![allow(clippy::result_large_err)]

use std::path::Path;

use gcn_embed::TargetId;

use crate::diag::{Diagnostic, Diagnostics};
use crate::toolchain::Toolchain;

/// How to lift.
#[derive(Debug, Clone, Copy)]
pub struct LiftOptions<'a> {
    /// The toolchain whose `llvm-objdump`, `llvm-readelf` and `llvm-mc`
    /// disassemble and check the re-encoding.
    pub toolchain: &'a Toolchain,
}

/// A lifted code object.
#[derive(Debug, Clone)]
pub struct Lifted {
    /// The assembly text (a complete `.s`).
    pub asm: String,
    /// The code object's target ID, from `e_flags`.
    pub target: TargetId,
    /// Code object version, from `EI_ABIVERSION`.
    pub code_object_version: u32,
    /// Kernel symbols (those with a `.kd` descriptor), in address order.
    pub kernels: Vec<String>,
    /// Instructions in `.text`.
    pub instructions: usize,
    /// Instructions kept as raw encodings (`.long … // raw: <disassembly>`).
    pub raw_instructions: usize,
    /// Kernels whose descriptor is kept as raw bytes.
    pub raw_descriptors: Vec<String>,
    /// What a user should know (raw lines and why, raw descriptors), one per item.
    pub notes: Vec<String>,
}

/// Lift one code object (`bytes`, read from `origin`, which names it in
/// messages) to assembly.
pub fn lift(bytes: &[u8], origin: &Path, opts: &LiftOptions) -> Result<Lifted, Diagnostics> {
    let _ = (bytes, opts);
    Err(Diagnostic::error(format!(
        "cannot lift {}: not implemented yet",
        origin.display()
    ))
    .into())
}
