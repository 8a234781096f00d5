//! Structure check: a dump must be complete before anything else runs on it.

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::document::Document;
use crate::base::parse::{self, LineKind};

/// Unterminated strings shown at most (the rest are counted).
const MAX_SHOWN: usize = 10;

/// No line of code may open a `"` it does not close: clang-22's AMDGPU
/// assembler never returns on one (`s_and_saveexec_b64 s[2:3], vcc"`, a
/// one-character typo in a hand edit), so this is reported at file:line
/// before any assembler runs. Comments and metadata are not code.
pub fn check_strings(asm: &Document, label: &str) -> Result<(), Diagnostics> {
    let mut found = Vec::new();
    for (idx, line) in asm.lines().iter().enumerate() {
        if matches!(
            line.kind(),
            LineKind::Blank | LineKind::Comment | LineKind::Metadata
        ) {
            continue;
        }
        if let Some(at) = parse::unterminated_quote(line.text()) {
            found.push((idx, at));
        }
    }
    let mut out: Vec<Diagnostic> = found
        .iter()
        .take(MAX_SHOWN)
        .map(|&(idx, at)| {
            let d = Diagnostic::error(
                Code::UnterminatedString,
                format!("{label}: unterminated string"),
            );
            asm.locate(
                d,
                idx,
                Some((at, at + 1)),
                "this `\"` opens a string that is never closed",
            )
            .with_note(
                "clang's AMDGPU assembler (LLVM 22) never returns on such a line, so it is \
                 reported before assembling",
            )
            .with_help("delete the stray `\"`, or close the string on the same line")
        })
        .collect();
    if found.len() > MAX_SHOWN {
        out.push(Diagnostic::note(
            Code::UnterminatedString,
            format!(
                "{} more lines with an unterminated string in {label}",
                found.len() - MAX_SHOWN
            ),
        ));
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(Diagnostics(out))
    }
}

/// A dump must define at least one kernel (`.amdhsa_kernel`) and carry the
/// `.amdgpu_metadata` the loader needs: an empty or truncated dump would
/// otherwise assemble into a code object no runtime can launch anything from.
pub fn check_complete(asm: &Document, label: &str) -> Result<(), Diagnostics> {
    let file = asm.asm();
    let shown = match asm.origin(0).and_then(|o| o.file_line()) {
        Some((f, _)) => format!("`{}`", f.display()),
        None => "the asm".to_string(),
    };
    let eof = asm.len().saturating_sub(1);
    let at_end = |d: Diagnostic| match asm.origin(eof).and_then(|o| o.file_line()) {
        Some(_) => d.at(asm.location(eof, None).with_label("the input ends here")),
        None => d,
    };
    let kernels = asm.kernels();
    if kernels.is_empty() {
        let d = Diagnostic::error(Code::NoKernel, format!(
            "{label}: {shown} defines no kernel (no `.amdhsa_kernel` block)"
        ))
        .with_help(
            "pass a complete dump (.s from `hipcc --save-temps`, .rocmasm from \
             `--iree-hal-dump-executable-files-to`); a truncated or empty file has no kernel descriptor",
        );
        return Err(at_end(d).into());
    }
    // 0-based line `line` of the text as a location in the user's file.
    let at_line = |d: Diagnostic, line: Option<usize>| match line
        .filter(|&l| asm.origin(l).and_then(|o| o.file_line()).is_some())
    {
        Some(l) => d.at(asm.location(l, None)),
        None => d,
    };
    // The same kernel twice (e.g. two dumps concatenated): point at the second descriptor.
    let descriptors: Vec<(usize, &str)> = file
        .lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match l.directive() {
            Some((".amdhsa_kernel", args)) => Some((i, args.trim())),
            _ => None,
        })
        .collect();
    let mut first_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (line, name) in &descriptors {
        if let Some(&first) = first_of.get(name) {
            let d = Diagnostic::error(
                Code::KernelDefinedTwice,
                format!("{label}: kernel `{name}` is defined twice in {shown}"),
            )
            .with_note(format!(
                "its first `.amdhsa_kernel` block is at line {}",
                first + 1
            ))
            .with_help(
                "keep one copy: a dump defines each kernel once (were two files concatenated?)",
            );
            return Err(at_line(d, Some(*line)).into());
        }
        first_of.insert(name, *line);
    }
    // A descriptor kept as raw bytes (`gcn-patch lift` writes one where no
    // `.amdhsa_kernel` block re-assembles to the original 64 bytes) is a
    // `<kernel>.kd:` label on data: the kernel can be launched as it is.
    let labels: std::collections::HashSet<&str> = if kernels.iter().any(|k| k.descriptor.is_none())
    {
        file.lines.iter().filter_map(|l| l.label()).collect()
    } else {
        Default::default()
    };
    if let Some(k) = kernels
        .iter()
        .find(|k| k.descriptor.is_none() && !labels.contains(format!("{}.kd", k.name).as_str()))
    {
        // 0-based line where the kernel shows up: its label or its metadata entry.
        let line = k.symbol_line.or(k.metadata.as_ref().map(|m| m.start));
        let d = Diagnostic::error(
            Code::MissingDescriptor,
            format!(
                "{label}: kernel `{}` in {shown} has no `.amdhsa_kernel` descriptor block",
                k.name
            ),
        )
        .with_note("without a kernel descriptor (`<kernel>.kd`) the kernel cannot be launched")
        .with_help(
            "pass the complete dump: the compiler writes `.amdhsa_kernel` … \
             `.end_amdhsa_kernel` after each kernel's code",
        );
        return Err(at_line(d, line).into());
    }
    let closed = file
        .lines
        .iter()
        .any(|l| l.directive().map(|d| d.0) == Some(".end_amdgpu_metadata"));
    if file.metadata().is_none() || !closed {
        let d = Diagnostic::error(
            Code::MissingMetadata,
            format!("{label}: {shown} has no complete `.amdgpu_metadata` block"),
        )
        .with_note("the HSA loader needs the kernel metadata to launch a kernel")
        .with_help(
            "pass the complete dump: the compiler writes `.amdgpu_metadata` … \
             `.end_amdgpu_metadata` after the last kernel (the file may be truncated)",
        );
        return Err(at_end(d).into());
    }
    Ok(())
}
