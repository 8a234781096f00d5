//! `gcn-patch lift`: a code object (or a container's member) to asm.

use std::path::{Path, PathBuf};

use super::{parse_target, Tools};
use crate::base::diag::{Diagnostic, Diagnostics};
use crate::stage::lift::{LiftOptions, Lifted};

/// `gcn-patch lift FILE [-o OUT] [--target T] [--no-verify]`: the lifted
/// asm (with `verify`, checked to rebuild identical: see
/// [`crate::stage::lift::identity`]), written atomically to `output` when given.
/// Nothing is written when any check fails.
pub fn lift(
    file: &Path,
    output: Option<&PathBuf>,
    target: Option<&str>,
    verify: bool,
    tools: &Tools,
) -> Result<Lifted, Diagnostics> {
    if let Some(out) = output {
        super::refuse_directory(out)?;
    }
    let tc = tools.find(None)?;
    let t = target.map(parse_target).transpose()?;
    let lifted = crate::stage::lift::lift_file(
        file,
        t.as_ref(),
        &LiftOptions {
            toolchain: &tc,
            verify,
        },
    )?;
    if let Some(out) = output {
        crate::base::output::write_atomic(out, lifted.asm.as_bytes())
            .map_err(|e| Diagnostic::error(format!("cannot write {}: {e}", out.display())))?;
    }
    Ok(lifted)
}
