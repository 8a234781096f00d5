//! Undefined symbols, found before linking and reported at the line that
//! uses them.
//!
//! A typo in a hand edit (`s_mov_b32 s0, my_typo_sym`, a misspelled label in
//! an expression) assembles: the assembler leaves the name undefined in the
//! object, and ld.lld (`--no-undefined`) only says "undefined symbol …
//! referenced by saxpy-gfx942.o:(saxpy)" — after minutes when the name is
//! megabytes long. The assembled object's symbol table says exactly which
//! names are undefined (no guessing which operand is a register, a
//! modifier, an assembler builtin or a `.set` symbol); each is reported at
//! the first line that names it, with the patch hunk or rule that wrote
//! that line ([`Document::locate`]).

use object::{Object, ObjectSymbol, SymbolKind};

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::document::Document;
use crate::base::parse::strip_comment;

/// Names at most this long are shown whole; longer ones are cut.
const SHOWN: usize = 80;

/// Symbols ld.lld defines itself when a program references them (reserved
/// names, and `__start_`/`__stop_` plus a section name).
const LINKER_DEFINED: &[&str] = &[
    "_GLOBAL_OFFSET_TABLE_",
    "_DYNAMIC",
    "_TLS_MODULE_BASE_",
    "__ehdr_start",
    "__executable_start",
    "__dso_handle",
    "__bss_start",
    "__global_pointer$",
    "__init_array_start",
    "__init_array_end",
    "__fini_array_start",
    "__fini_array_end",
    "__preinit_array_start",
    "__preinit_array_end",
    "_etext",
    "etext",
    "_edata",
    "edata",
    "_end",
    "end",
];

/// Whether ld.lld resolves `name` without a definition in the object.
fn linker_defined(name: &str) -> bool {
    LINKER_DEFINED.contains(&name) || name.starts_with("__start_") || name.starts_with("__stop_")
}

/// The undefined, non-weak symbols of the relocatable `object` (the
/// assembler's output) that ld.lld does not define itself, in symbol table
/// order.
pub fn undefined_symbols(object: &[u8]) -> Vec<String> {
    let Ok(file) = object::File::parse(object) else {
        return Vec::new();
    };
    file.symbols()
        .filter(|s| {
            s.is_undefined()
                && !s.is_weak()
                && !matches!(s.kind(), SymbolKind::Section | SymbolKind::File)
        })
        .filter_map(|s| {
            s.name()
                .ok()
                .filter(|n| !n.is_empty() && !linker_defined(n))
                .map(str::to_owned)
        })
        .collect()
}

/// An error per undefined symbol of `object` (assembled from `asm`), at the
/// first line of `asm` that names it; `Ok` when every symbol is defined.
/// `label` says what was built ("kernel `k` for gfx942").
pub fn check(asm: &Document, object: &[u8], label: &str) -> Result<(), Diagnostics> {
    let names = undefined_symbols(object);
    if names.is_empty() {
        return Ok(());
    }
    let errors = names
        .iter()
        .map(|name| {
            let shown = shorten(name);
            let d = Diagnostic::error(Code::UndefinedSymbol, format!(
                "undefined symbol `{shown}` building {label}"
            ))
            .with_help(if name.len() <= SHOWN {
                format!("fix the name if it is a typo, define `{name}` (a label `{name}:` or `.set {name}, …`), or restore the label a patch or rule renamed or removed")
            } else {
                format!("a {}-byte name is a mistake: fix the line", name.len())
            });
            match find_use(asm, name) {
                // At most SHOWN carets: the name can be megabytes long.
                Some((i, start)) => asm.locate(
                    d,
                    i,
                    Some((start, start + name.len().min(SHOWN))),
                    "not defined in this file",
                ),
                None => d.with_note("no line names it directly: it is used through an expression or a `.set`"),
            }
            .with_note("ld.lld would refuse the object (`--no-undefined`): a code object cannot import symbols")
        })
        .collect();
    Err(Diagnostics(errors))
}

/// `name` as messages show it: at most [`SHOWN`] characters.
fn shorten(name: &str) -> String {
    if name.chars().count() <= SHOWN {
        name.to_string()
    } else {
        let head: String = name.chars().take(SHOWN).collect();
        format!("{head}…({} bytes)", name.len())
    }
}

/// The first line naming `name` as a whole symbol token outside comments,
/// preferring instructions; its index and the byte offset of the name.
fn find_use(asm: &Document, name: &str) -> Option<(usize, usize)> {
    let is_sym = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$');
    let in_line = |text: &str| {
        let code = strip_comment(text);
        code.match_indices(name)
            .map(|(i, _)| i)
            .find(|&i| !code[..i].ends_with(is_sym) && !code[i + name.len()..].starts_with(is_sym))
    };
    let mut fallback = None;
    for (i, line) in asm.lines().iter().enumerate() {
        if let Some(at) = in_line(line.text()) {
            if line.instruction().is_some() {
                return Some((i, at));
            }
            fallback.get_or_insert((i, at));
        }
    }
    fallback
}
