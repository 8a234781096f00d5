//! `gcn-patch lift`: a code object (or a container's member) to asm.

use std::path::{Path, PathBuf};

pub(crate) mod identity;

use gcn_embed::TargetId;

use super::Tools;
use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::stage::lift::{Input, Lifted};
use crate::stage::toolchain::Toolchain;

/// How to lift.
#[derive(Debug, Clone, Copy)]
pub struct LiftOptions<'a> {
    /// The toolchain whose `llvm-objdump`, `llvm-readelf` and `llvm-mc`
    /// disassemble and check the re-encoding, and whose assembler and
    /// ld.lld rebuild the result.
    pub toolchain: &'a Toolchain,
    /// Build the lifted asm as a build does and compare it with the
    /// original byte for byte (`identity`; one assemble and link per
    /// code object). `false` (`lift --no-verify`) skips that:
    /// [`Lifted::identity`](crate::stage::lift::Lifted::identity) is then [`Identity::NotVerified`](crate::stage::lift::Identity::NotVerified).
    pub verify: bool,
}

impl<'a> LiftOptions<'a> {
    /// Lift with `toolchain`, verifying the rebuild.
    pub fn new(toolchain: &'a Toolchain) -> Self {
        LiftOptions {
            toolchain,
            verify: true,
        }
    }
}

/// Lift the code object in `path` (a bare code object, or the member of a
/// container for `target`, or its only one: see
/// [`crate::stage::lift::lift_file`]) and, with [`LiftOptions::verify`],
/// check that it rebuilds the original (`identity`). Reads
/// the file; writes nothing.
pub fn lift_file(
    path: &Path,
    target: Option<&TargetId>,
    opts: &LiftOptions,
) -> Result<Lifted, Diagnostics> {
    let tc = opts.toolchain;
    let check = |input: &Input| identity::verify(tc, input);
    crate::stage::lift::lift_file(path, target, tc, opts.verify.then_some(&check))
}

/// Lift one code object (`bytes`, read from `origin`, which names it in
/// messages) to assembly, and (with [`LiftOptions::verify`]) check that the
/// assembly, built as a build builds it, rebuilds it: `.text`, `.rodata`,
/// every other carried section, the `.note` bytes and `e_flags` identical,
/// else this is an error saying which bytes differ (bytes are never changed
/// silently).
pub fn lift_code_object(
    bytes: &[u8],
    origin: &Path,
    opts: &LiftOptions,
) -> Result<Lifted, Diagnostics> {
    let tc = opts.toolchain;
    let check = |input: &Input| identity::verify(tc, input);
    crate::stage::lift::lift(bytes, origin, tc, opts.verify.then_some(&check))
}

/// What `gcn-patch lift` is asked to do (the command's options;
/// [`LiftOptions`] is how the lifting functions of this module lift).
#[derive(Debug, Clone)]
pub struct LiftRequest {
    /// The code object, offload bundle, HIP fat binary or `.vmfb`.
    pub file: PathBuf,
    /// Where to write the asm (atomically); `None` writes nothing (the
    /// report holds the asm).
    pub output: Option<PathBuf>,
    /// The member of a container to lift (needed when it holds several);
    /// for a bare code object, the target it must be built for.
    pub target: Option<TargetId>,
    /// Check that the asm rebuilds the original ([`LiftOptions::verify`]).
    pub verify: bool,
    /// The LLVM tools.
    pub tools: Tools,
}

/// `gcn-patch lift FILE [-o OUT] [--target T] [--no-verify]`: the lifted
/// asm (with `verify`, checked to rebuild identical: see
/// `identity`), written atomically to `output` when given.
/// Nothing is written when any check fails.
pub fn lift(req: &LiftRequest) -> Result<Lifted, Diagnostics> {
    let output = req.output.as_ref();
    if let Some(out) = output {
        super::refuse_directory(out)?;
    }
    let tc = req.tools.find(None)?;
    let lifted = lift_file(
        &req.file,
        req.target.as_ref(),
        &LiftOptions {
            toolchain: &tc,
            verify: req.verify,
        },
    )?;
    if let Some(out) = output {
        crate::base::output::write_atomic(out, lifted.asm.as_bytes()).map_err(|e| {
            Diagnostic::error(
                Code::WriteFailed,
                format!("cannot write {}: {e}", out.display()),
            )
        })?;
    }
    Ok(lifted)
}
