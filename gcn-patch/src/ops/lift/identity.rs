//! Lift's identity check: the lifted asm is built the way `gcn-patch
//! assemble`, `build` and `check` build an unpatched source (retargeted to
//! its own target with toolchain skew normalized, the build's checks, the
//! toolchain's assembler, ld.lld, the build's verification), and the
//! result is compared byte for byte with the original code object:
//!
//! * `e_flags`;
//! * `.text`;
//! * `.rodata` (the kernel descriptors) and every other allocated section
//!   lift carries (`.data`, `.bss` sizes);
//! * the `.note` section: the metadata note (`NT_AMDGPU_METADATA`),
//!   byte for byte, not only as a decoded document.
//!
//! Not compared: what ld.lld writes for itself (`.dynsym`, `.gnu.hash`,
//! `.hash`, `.dynstr`, `.dynamic`, `.symtab`, `.strtab`, `.shstrtab`,
//! `.comment`, section and program headers). Those describe the same
//! symbols but may differ where the original linker did (another LLVM's
//! `.comment`, section indices, a symbol table holding more local labels).
//!
//! A difference is an error naming each part that differs: the section,
//! the offset and address of the first differing byte and how many differ,
//! the instruction or descriptor field there, and why when it is known (a
//! line the build's preparation rewrote, sections that moved, another
//! metadata value or encoding).

use std::fmt::Write as _;

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::document::Document;
use crate::config::policy::RegisterPolicy;
use crate::stage::retarget::RetargetOptions;
use crate::stage::toolchain::Toolchain;

use crate::pipeline;
use crate::stage::lift::{elf, metadata, Identity, Input};

/// Build `input.asm` as a build builds an unpatched source and compare the
/// result with the original: [`Identity::Identical`], or an error saying
/// which bytes differ and why.
pub(crate) fn verify(tc: &Toolchain, input: &Input) -> Result<Identity, Diagnostics> {
    let origin = input.origin;
    let name = origin
        .file_stem()
        .map(|s| crate::stage::lift::identifier(&s.to_string_lossy()))
        .unwrap_or_else(|| "lifted".into());
    let doc = Document::from_source(input.asm, format!("{name}.s (lifted)"));
    let opts = RetargetOptions {
        target: input.co.target,
        code_object_version: None,
        assembler_llvm_major: tc.version.major,
    };
    let fail = |what: &str, d: Diagnostics| -> Diagnostics {
        let mut out = vec![Diagnostic::error(
            Code::LiftDoesNotRebuild,
            format!("cannot lift {}: the lifted asm {what}", origin.display()),
        )
        .with_help(
            "this is a gcn-patch bug: please report it with the code object; \
             `gcn-patch lift --no-verify` writes the asm without this check",
        )];
        out.extend(d.0);
        Diagnostics(out)
    };
    // An unpatched source: its own original (inherited findings warn, and
    // are not looked for: their notes would be discarded here).
    let prepared =
        pipeline::prepare_unpatched_errors_only(&name, &doc, &opts, RegisterPolicy::Error)
            .map_err(|d| fail("does not pass the checks a build runs", d))?;
    let work = tempfile::tempdir().map_err(|e| {
        Diagnostic::error(
            Code::TempFileFailed,
            format!("cannot create a temporary directory: {e}"),
        )
    })?;
    let (bytes, _) = pipeline::build_bytes(tc, &prepared, work.path())
        .map_err(|d| fail("does not build as a build builds it", d))?;
    let again = elf::read(&bytes, origin).map_err(|d| {
        Diagnostic::error(
            Code::LiftDoesNotRebuild,
            format!(
                "cannot lift {}: the rebuilt code object cannot be read: {}",
                origin.display(),
                d.message
            ),
        )
    })?;
    let diffs = differences(input, &again);
    if diffs.is_empty() {
        return Ok(Identity::Identical);
    }
    let mut d = Diagnostic::error(
        Code::LiftNotIdentical,
        format!(
            "cannot lift {}: the lifted asm does not rebuild the same code object",
            origin.display()
        ),
    );
    for diff in diffs {
        d = d.with_note(diff);
    }
    if !prepared.steps.is_empty() {
        d = d.with_note(format!(
            "preparing the build changed the lifted asm: {}",
            prepared.steps.join("; ")
        ));
    }
    Err(d
        .with_help(format!(
            "gcn-patch cannot reproduce these bytes with LLVM {}: please report it with the \
             code object; `gcn-patch lift --no-verify` writes the asm anyway, and a build of \
             it then differs from the original as said above",
            tc.version.major
        ))
        .into())
}

/// One sentence per part that differs between the original and the rebuild.
fn differences(input: &Input, again: &elf::CodeObject) -> Vec<String> {
    let co = input.co;
    let mut out = Vec::new();
    if again.e_flags != co.e_flags {
        out.push(format!(
            "e_flags: {:#x} rebuilt, {:#x} in the original ({} vs {})",
            again.e_flags,
            co.e_flags,
            again.target.name(),
            co.target.name()
        ));
    }
    let moved = |name: &str, a: u64, b: u64| {
        (a != b).then(|| {
            format!(
                "{name} starts at {a:#x} in the rebuild, {b:#x} in the original: a section \
                 before it changed size"
            )
        })
    };
    if let Some(m) = moved(".text", again.text.address, co.text.address) {
        out.push(m);
    }
    if let Some(d) = section_difference(&co.text, &again.text) {
        let at = co.text.address + d.offset as u64;
        let insn = input
            .insns
            .iter()
            .zip(input.texts)
            .find(|(i, _)| i.address <= at && at < i.address + i.bytes.len() as u64)
            .map(|(i, t)| format!(" (instruction at {:#x}: `{t}`)", i.address))
            .unwrap_or_default();
        out.push(format!("{}{insn}", d.sentence(".text", co.text.address)));
    }
    for s in &co.data {
        match again.data.iter().find(|r| r.name == s.name) {
            None => out.push(format!("{}: missing from the rebuild", s.name)),
            Some(r) => {
                if let Some(d) = section_difference(s, r) {
                    let mut line = d.sentence(&s.name, s.address);
                    if let Some(f) = descriptor_field(s, r, d.offset, co, again) {
                        let _ = write!(line, "; {f}");
                    }
                    out.push(line);
                }
            }
        }
    }
    for r in &again.data {
        if !co.data.iter().any(|s| s.name == r.name) {
            out.push(format!("{}: only in the rebuild", r.name));
        }
    }
    if again.note != co.note {
        out.push(note_difference(co, again));
    }
    out
}

/// The first difference between two sections' bytes.
struct Difference {
    offset: usize,
    count: usize,
    sizes: (usize, usize),
    original: Vec<u8>,
    rebuilt: Vec<u8>,
}

impl Difference {
    fn sentence(&self, name: &str, address: u64) -> String {
        let hex = |b: &[u8]| {
            b.iter()
                .map(|x| format!("{x:02x}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut s = format!(
            "{name}: {} byte(s) differ from offset {:#x} (address {:#x} of the original): \
             `{}` in the original, `{}` rebuilt",
            self.count,
            self.offset,
            address + self.offset as u64,
            hex(&self.original),
            hex(&self.rebuilt)
        );
        if self.sizes.0 != self.sizes.1 {
            let _ = write!(
                s,
                "; {} bytes in the original, {} rebuilt",
                self.sizes.0, self.sizes.1
            );
        }
        s
    }
}

fn section_difference(original: &elf::Section, rebuilt: &elf::Section) -> Option<Difference> {
    let (a, b) = (&original.bytes, &rebuilt.bytes);
    if a == b && original.size == rebuilt.size {
        return None;
    }
    let offset = a
        .iter()
        .zip(b.iter())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let count = a.iter().zip(b.iter()).filter(|(x, y)| x != y).count() + a.len().abs_diff(b.len());
    let window = |v: &[u8]| {
        v.get(offset..v.len().min(offset + 8))
            .unwrap_or(&[])
            .to_vec()
    };
    Some(Difference {
        offset,
        count,
        sizes: (original.size as usize, rebuilt.size as usize),
        original: window(a),
        rebuilt: window(b),
    })
}

/// When `offset` of data section `s` lies in a kernel descriptor: which
/// field, its two values, and why for the code-entry offset.
fn descriptor_field(
    s: &elf::Section,
    r: &elf::Section,
    offset: usize,
    co: &elf::CodeObject,
    again: &elf::CodeObject,
) -> Option<String> {
    let sym = s.symbols.iter().find(|y| {
        y.name.ends_with(".kd") && (y.offset as usize..y.offset as usize + 64).contains(&offset)
    })?;
    let at = offset - sym.offset as usize;
    let o = sym.offset as usize;
    let field = |b: &[u8], lo: usize, hi: usize| -> u64 {
        let mut v = [0u8; 8];
        if let Some(x) = b.get(o + lo..o + hi) {
            v[..hi - lo].copy_from_slice(x);
        }
        u64::from_le_bytes(v)
    };
    let (name, lo, hi) = match at {
        0..=3 => ("group_segment_fixed_size", 0, 4),
        4..=7 => ("private_segment_fixed_size", 4, 8),
        8..=11 => ("kernarg_size", 8, 12),
        16..=23 => ("kernel_code_entry_byte_offset", 16, 24),
        44..=47 => ("compute_pgm_rsrc3", 44, 48),
        48..=51 => ("compute_pgm_rsrc1", 48, 52),
        52..=55 => ("compute_pgm_rsrc2", 52, 56),
        56..=57 => ("kernel_code_properties", 56, 58),
        58..=59 => ("kernarg_preload", 58, 60),
        _ => ("reserved bytes", at, at + 1),
    };
    let (a, b) = (field(&s.bytes, lo, hi), field(&r.bytes, lo, hi));
    let mut out = format!(
        "descriptor field {name} of `{}`: {a:#x} in the original, {b:#x} rebuilt",
        sym.name
    );
    if name == "kernel_code_entry_byte_offset" {
        let _ = write!(
            out,
            " (it is the distance from the descriptor to the code: the linker placed \
             {} at {:#x} and .text at {:#x}, the original at {:#x} and {:#x})",
            s.name, r.address, again.text.address, s.address, co.text.address
        );
    }
    Some(out)
}

/// Why the `.note` sections differ: sizes, and the first metadata value that
/// differs, or that the same document is encoded otherwise.
fn note_difference(co: &elf::CodeObject, again: &elf::CodeObject) -> String {
    let (a, b) = (&co.note, &again.note);
    let offset = a
        .iter()
        .zip(b.iter())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let mut s = format!(
        ".note: {} bytes in the original, {} rebuilt, first difference at offset {offset:#x}",
        a.len(),
        b.len()
    );
    match (&co.metadata, &again.metadata) {
        (Some(x), Some(y)) => match metadata::first_difference(x, y) {
            Some(d) => {
                let _ = write!(s, ": the metadata differs at {d}");
            }
            None if x != y => {
                let _ = write!(
                    s,
                    ": the metadata is the same document, encoded otherwise (MessagePack \
                     {} bytes in the original, {} rebuilt): the assembler writes its own \
                     encoding of the `.amdgpu_metadata` YAML",
                    x.len(),
                    y.len()
                );
            }
            None => s.push_str(": the metadata note is the same; another note differs"),
        },
        (Some(_), None) => s.push_str(": the rebuild has no metadata note"),
        (None, Some(_)) => s.push_str(": only the rebuild has a metadata note"),
        (None, None) => {}
    }
    s
}
