//! Install built code objects into an output directory that IREE (or any
//! loader) consumes directly, and the `iree-compile` flags that use it.
//!
//! Layout of `gcn-patch build --out DIR` (one directory per target, `:` in a
//! target ID written `_`):
//!
//! ```text
//! DIR/<target>/<exec>.hsaco     one per IREE executable the kernel serves
//!                               (a linked dump's object is written once per executable)
//! DIR/<target>/<kernel>.hsaco   kernels without IREE executables (hipcc, Triton, hand-written)
//! ```
//!
//! so `--iree-hal-substitute-executable-objects-from=DIR/<target>` substitutes
//! every executable, and [`iree_flags`] spells one
//! `--iree-hal-substitute-executable-object=<exec>=<file>` per executable.

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::config::manifest::{KernelSpec, Manifest};

/// `DIR/<target>` (`:` written `_`).
pub fn target_dir(out: &Path, target: &TargetId) -> PathBuf {
    out.join(target.name().replace(':', "_"))
}

/// File names (inside [`target_dir`]) of a kernel's code object.
pub fn file_names(kernel: &KernelSpec) -> Vec<String> {
    if kernel.iree_executables.is_empty() {
        vec![format!("{}.hsaco", kernel.name)]
    } else {
        kernel
            .iree_executables
            .iter()
            .map(|e| format!("{e}.hsaco"))
            .collect()
    }
}

/// Every output file of `(kernel index, target)` pairs, with the kernel it
/// comes from; two kernels claiming one file is an error (e.g. the linked and
/// the unlinked dump of one IREE module in one manifest, both built for one target).
pub fn plan_files(
    manifest: &Manifest,
    out: &Path,
    jobs: &[(usize, TargetId)],
) -> Result<Vec<(usize, TargetId, PathBuf)>, Diagnostics> {
    let mut files: Vec<(usize, TargetId, PathBuf)> = Vec::new();
    let mut errors = Vec::new();
    for (ki, target) in jobs {
        let kernel = &manifest.kernels[*ki];
        for name in file_names(kernel) {
            claim(
                manifest,
                &mut files,
                &mut errors,
                (*ki, *target, target_dir(out, target).join(name)),
                "each IREE executable may be served by one kernel per target",
                "keep either the linked or the unlinked dump of a module in one manifest, or build them with separate manifests",
            );
        }
    }
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(Diagnostics(errors))
    }
}

/// Add output file `file` of `(kernel, target)` to `files`, or an error
/// (with `note` and `help`) when another kernel already writes it.
fn claim(
    manifest: &Manifest,
    files: &mut Vec<(usize, TargetId, PathBuf)>,
    errors: &mut Vec<Diagnostic>,
    file: (usize, TargetId, PathBuf),
    note: &str,
    help: &str,
) {
    let (ki, _, path) = &file;
    match files.iter().find(|(_, _, p)| p == path) {
        Some((other, _, _)) => errors.push(
            Diagnostic::error(
                Code::OutputCollision,
                format!(
                    "kernels `{}` and `{}` both write `{}`",
                    manifest.kernels[*other].name,
                    manifest.kernels[*ki].name,
                    path.display()
                ),
            )
            .with_note(note)
            .with_help(help),
        ),
        None => files.push(file),
    }
}

/// The `iree-compile` substitution flags for `target`: one
/// `--iree-hal-substitute-executable-object=<exec>=<DIR/target/exec.hsaco>`
/// per IREE executable of a kernel built for `target`. Every file must exist
/// (run `gcn-patch build --out DIR` first).
pub fn iree_flags(
    manifest: &Manifest,
    out: &Path,
    target: &TargetId,
) -> Result<Vec<String>, Diagnostics> {
    let iree: Vec<&KernelSpec> = manifest
        .kernels
        .iter()
        .filter(|k| !k.iree_executables.is_empty())
        .collect();
    if iree.is_empty() {
        return Err(Diagnostic::error(Code::NoIreeExecutables, format!(
            "{} has no IREE executables",
            manifest.shown().display()
        ))
        .with_note("no [[kernel]] sets `iree-executable` or `iree-executables`")
        .with_help("import an IREE dump with `gcn-patch import DUMP_DIR` (it records the executables), or add `iree-executable = \"<fn>_dispatch_<n>\"` to a kernel")
        .into());
    }
    let mut flags = Vec::new();
    let mut missing = Vec::new();
    let mut targets: Vec<String> = Vec::new();
    for k in &iree {
        for s in &k.sources {
            for t in &s.targets {
                if !targets.contains(&t.name()) {
                    targets.push(t.name());
                }
            }
        }
        // As `build --target`: a target of a source's generation is built too.
        if !k
            .sources
            .iter()
            .any(|s| crate::pipeline::builds_for(s, target))
        {
            continue;
        }
        for e in &k.iree_executables {
            let path = target_dir(out, target).join(format!("{e}.hsaco"));
            if !path.is_file() {
                missing.push(path.display().to_string());
            }
            flags.push(format!(
                "--iree-hal-substitute-executable-object={e}={}",
                path.display()
            ));
        }
    }
    if flags.is_empty() {
        return Err(Diagnostic::error(
            Code::NoIreeExecutables,
            format!(
                "no IREE executable of {} is built for {}",
                manifest.shown().display(),
                target.name()
            ),
        )
        .with_note(format!(
            "IREE kernels are built for: {}",
            targets.join(", ")
        ))
        .with_help("ask for one of those targets, or a target of the same generation")
        .into());
    }
    if !missing.is_empty() {
        return Err(Diagnostic::error(
            Code::NotBuiltYet,
            format!(
                "{} code object(s) for {} are not built yet",
                missing.len(),
                target.name()
            ),
        )
        .with_note(format!("missing: {}", missing.join(", ")))
        .with_help(format!(
            "run `gcn-patch build --manifest {} --out {} --target {}` first",
            manifest.shown().display(),
            out.display(),
            target.name()
        ))
        .into());
    }
    Ok(flags)
}

/// Output files of `gcn-patch triton-override --out DIR`: for every source
/// with Triton metadata, the job building it for its dump's target, written to
/// `DIR/<hash>/<kernel>.hsaco` ([`crate::stage::triton::override_path`]). Errors for
/// a kernel whose dump hash is unknown (imported from Triton's cache only),
/// whose dump's target is not built, or two kernels claiming one file.
pub fn triton_override_files(
    manifest: &Manifest,
    plan: &crate::pipeline::Plan,
    out: &Path,
) -> Result<Vec<(usize, TargetId, PathBuf)>, Diagnostics> {
    let mut files: Vec<(usize, TargetId, PathBuf)> = Vec::new();
    let mut errors = Vec::new();
    for (ki, kernel) in manifest.kernels.iter().enumerate() {
        for (si, source) in kernel.sources.iter().enumerate() {
            let Some(t) = &source.triton else { continue };
            let Some(hash) = &t.hash else {
                errors.push(
                    Diagnostic::error(Code::TritonHashUnknown, format!(
                        "kernel `{}`: Triton's dump hash is unknown, so its override directory cannot be named",
                        kernel.name
                    ))
                    .with_note(format!(
                        "`{}` was imported from Triton's cache, whose directory names are compilation hashes; Triton looks for overrides under the source hash its dump directory is named after",
                        source.rel.display()
                    ))
                    .with_help("run the program once with TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR=D and `gcn-patch import D` (the dump and this cache entry have the same bytes: the kernel is updated, not duplicated), or add `hash = \"<dump directory name>\"` to its `triton = { … }`"),
                );
                continue;
            };
            let target = match TargetId::parse(&t.target) {
                Ok(target) => target,
                Err(e) => {
                    errors.push(
                        Diagnostic::error(Code::TritonTargetInvalid, format!(
                            "kernel `{}`: `triton.target = \"{}\"` is not a target ID ({e})",
                            kernel.name, t.target
                        ))
                        .with_help("set it to the processor of the dump's `.amdgcn_target` (e.g. \"gfx942\"), or re-import the dump"),
                    );
                    continue;
                }
            };
            let built = plan
                .jobs
                .iter()
                .any(|j| j.kernel == ki && j.source == si && j.target == target);
            if !built {
                errors.push(
                    Diagnostic::error(
                        Code::TritonObjectMissing,
                        format!(
                            "kernel `{}` has no code object for its Triton dump's target {}",
                            kernel.name,
                            target.name()
                        ),
                    )
                    .with_note(format!(
                        "Triton compiled `{}` for {} and will load the override on that GPU only",
                        source.rel.display(),
                        target.name()
                    ))
                    .with_help(format!(
                        "add \"{}\" to the `targets` of that [[kernel.source]]",
                        target.name()
                    )),
                );
                continue;
            }
            claim(
                manifest,
                &mut files,
                &mut errors,
                (ki, target, crate::stage::triton::override_path(out, hash, &t.kernel)),
                "Triton names override directories by source hash, which does not depend on the target: one Triton kernel compiled for two GPUs has one override directory",
                "keep one of them in this manifest (or use one manifest per GPU)",
            );
        }
    }
    if files.is_empty() && errors.is_empty() {
        errors.push(
            Diagnostic::error(Code::NoTritonKernels, format!(
                "{} lists no Triton kernel",
                manifest.path.display()
            ))
            .with_help("import a Triton dump directory (TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR=D) with `gcn-patch import D`"),
        );
    }
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(Diagnostics(errors))
    }
}
