//! Read what lifting needs from an AMDGPU code object: the target, the code
//! object version, the sections to carry over and every symbol.

use std::path::Path;

use gcn_embed::elf::{self as raw, EFlags};
use gcn_embed::TargetId;
use object::elf::{STB_GLOBAL, STB_LOCAL, STB_WEAK, STT_FUNC, STT_NOTYPE, STT_OBJECT};
use object::read::elf::{ElfFile64, FileHeader, SectionHeader, Sym};
use object::{Endianness, Object, ObjectSection, ObjectSymbol, SectionKind};

use crate::base::diag::{Code, Diagnostic};

/// Sections a linked code object has that the linker makes itself: lifting
/// does not carry them (the rebuild's link writes them again).
const LINKER_SECTIONS: &[&str] = &[
    ".note",
    ".dynsym",
    ".gnu.hash",
    ".hash",
    ".dynstr",
    ".dynamic",
    ".relro_padding",
    ".comment",
    ".symtab",
    ".shstrtab",
    ".strtab",
    ".rela.dyn",
];

/// A symbol's binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// `STB_LOCAL`.
    Local,
    /// `STB_GLOBAL`.
    Global,
    /// `STB_WEAK`.
    Weak,
}

/// A symbol's ELF type, as far as asm can say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymType {
    /// `STT_NOTYPE` (labels).
    NoType,
    /// `STT_FUNC` (kernels and functions).
    Func,
    /// `STT_OBJECT` (descriptors, data).
    Object,
}

/// One symbol defined in a carried section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// Offset in its section.
    pub offset: u64,
    /// Original address (for labels that match `llvm-objdump`).
    pub address: u64,
    /// `st_size`.
    pub size: u64,
    /// Binding.
    pub binding: Binding,
    /// Type.
    pub kind: SymType,
    /// `STV_*` visibility (0 default, 1 internal, 2 hidden, 3 protected).
    pub visibility: u8,
}

/// One allocated section carried into the asm.
#[derive(Debug, Clone)]
pub struct Section {
    /// Name (`.text`, `.rodata`, `.data`, …).
    pub name: String,
    /// Address in the original.
    pub address: u64,
    /// Contents (empty for `NOBITS`).
    pub bytes: Vec<u8>,
    /// `sh_size` (differs from `bytes.len()` for `NOBITS`).
    pub size: u64,
    /// `sh_addralign`.
    pub align: u64,
    /// Section flags as the `.section` directive spells them (`a`, `ax`, `aw`).
    pub flags: String,
    /// `NOBITS` (`.bss`).
    pub nobits: bool,
    /// Symbols defined in it, by offset then name.
    pub symbols: Vec<Symbol>,
}

/// What lifting reads from a code object.
#[derive(Debug, Clone)]
pub struct CodeObject {
    /// Target ID from `e_flags`.
    pub target: TargetId,
    /// The `e_flags` word.
    pub e_flags: u32,
    /// Code object version from `EI_ABIVERSION`.
    pub code_object_version: u32,
    /// `.text`.
    pub text: Section,
    /// Other allocated sections, in address order (`.rodata`, `.data`, …).
    pub data: Vec<Section>,
    /// The metadata note's MessagePack bytes (`NT_AMDGPU_METADATA`).
    pub metadata: Option<Vec<u8>>,
    /// The bytes of the note sections (`.note`), in section order: the
    /// metadata note with its header and padding, as the identity check
    /// compares it.
    pub note: Vec<u8>,
    /// Dynamic relocations present (`.rela.dyn` entries): their targets are
    /// kept as bytes, which is only right at the original addresses.
    pub dynamic_relocations: usize,
}

impl CodeObject {
    /// Kernel names: symbols `K` with a descriptor `K.kd`, in `.text` order.
    pub fn kernels(&self) -> Vec<String> {
        let kds: std::collections::HashSet<&str> = self
            .data
            .iter()
            .flat_map(|s| s.symbols.iter())
            .filter_map(|s| s.name.strip_suffix(".kd"))
            .collect();
        self.text
            .symbols
            .iter()
            .filter(|s| kds.contains(s.name.as_str()))
            .map(|s| s.name.clone())
            .collect()
    }
}

/// Read `bytes` (named `origin` in errors).
pub fn read(bytes: &[u8], origin: &Path) -> Result<CodeObject, Diagnostic> {
    let what = origin.display();
    let header = raw::read_header(bytes).map_err(|e| {
        Diagnostic::error(Code::NotACodeObject, format!("cannot lift {what}: {e}")).with_help(
            "give an AMDGPU code object (.co/.hsaco), or a container holding one (offload \
             bundle, host object with .hip_fatbin, .vmfb) and its target",
        )
    })?;
    let bad = |why: String| {
        Diagnostic::error(Code::CorruptElf, format!("cannot lift {what}: {why}")).with_help(
            "the file is damaged or truncated: take it again from where it was built or installed",
        )
    };
    if header.os_abi != raw::ELFOSABI_AMDGPU_HSA {
        return Err(Diagnostic::error(Code::UnsupportedOsAbi, format!(
            "cannot lift {what}: EI_OSABI is {}, not {} (HSA): only ROCm code objects are supported",
            header.os_abi,
            raw::ELFOSABI_AMDGPU_HSA
        )));
    }
    let code_object_version = raw::code_object_version(header.abi_version).ok_or_else(|| {
        Diagnostic::error(
            Code::UnsupportedAbiVersion,
            format!(
                "cannot lift {what}: EI_ABIVERSION {} is code object v{}, and only v4, v5 and v6 \
             are supported (what LLVM 22 assembles)",
                header.abi_version,
                u32::from(header.abi_version) + 2
            ),
        )
    })?;
    let flags = EFlags::decode(header.e_flags);
    let target = flags.target_id().ok_or_else(|| {
        Diagnostic::error(
            Code::UnknownProcessor,
            format!(
                "cannot lift {what}: e_flags {:#x} name no processor gcn-patch knows",
                header.e_flags
            ),
        )
    })?;
    let file = ElfFile64::<Endianness>::parse(bytes).map_err(|e| bad(format!("bad ELF: {e}")))?;
    let endian = file.endian();

    let mut text = None;
    let mut data = Vec::new();
    let mut note = Vec::new();
    let mut dynamic_relocations = 0;
    for section in file.sections() {
        let name = section
            .name()
            .map_err(|e| bad(format!("bad section name: {e}")))?;
        let shdr = section.elf_section_header();
        let flags = match section.flags() {
            object::SectionFlags::Elf { sh_flags, .. } => sh_flags.0,
            _ => 0,
        };
        if name == ".note" || shdr.sh_type(endian) == object::elf::SHT_NOTE {
            if let Ok(b) = section.data() {
                note.extend_from_slice(b);
            }
            continue;
        }
        if name == ".rela.dyn" {
            dynamic_relocations = (section.size() / 24) as usize;
            continue;
        }
        if LINKER_SECTIONS.contains(&name) || flags & object::elf::SHF_ALLOC.0 == 0 {
            continue;
        }
        let nobits = section.kind() == SectionKind::UninitializedData;
        let contents = if nobits {
            Vec::new()
        } else {
            section
                .data()
                .map_err(|e| bad(format!("cannot read section {name}: {e}")))?
                .to_vec()
        };
        let mut f = String::from("a");
        if flags & object::elf::SHF_WRITE.0 != 0 {
            f.push('w');
        }
        if flags & object::elf::SHF_EXECINSTR.0 != 0 {
            f.push('x');
        }
        let s = Section {
            name: name.to_string(),
            address: section.address(),
            size: section.size(),
            bytes: contents,
            align: section.align().max(1),
            flags: f,
            nobits,
            symbols: Vec::new(),
        };
        if name == ".text" {
            text = Some(s);
        } else {
            data.push(s);
        }
    }
    let mut text = text.ok_or_else(|| bad("it has no .text section".into()))?;
    // The metadata note: gcn-raw's reader, which the emulator's loader uses too.
    let metadata = gcn_raw::note::amdgpu_metadata(bytes)
        .map_err(|e| bad(format!("bad ELF: {e}")))?
        .map(<[u8]>::to_vec);
    data.sort_by_key(|s| s.address);

    // Symbols: the full table when there is one, else the dynamic one.
    let symbols: Vec<_> = if file.symbols().next().is_some() {
        file.symbols().collect()
    } else {
        file.dynamic_symbols().collect()
    };
    for sym in symbols {
        let Some(index) = sym.section_index() else {
            continue;
        };
        let Ok(name) = sym.name() else { continue };
        let elf = sym.elf_symbol();
        let kind = match elf.st_type() {
            t if t == STT_NOTYPE => SymType::NoType,
            t if t == STT_FUNC => SymType::Func,
            t if t == STT_OBJECT => SymType::Object,
            _ => continue, // section and file symbols
        };
        if name.is_empty() {
            continue;
        }
        let binding = match elf.st_bind() {
            b if b == STB_LOCAL => Binding::Local,
            b if b == STB_GLOBAL => Binding::Global,
            b if b == STB_WEAK => Binding::Weak,
            _ => continue,
        };
        let Ok(sec) = file.section_by_index(index) else {
            continue;
        };
        let Ok(sec_name) = sec.name() else { continue };
        let target_section = if sec_name == ".text" {
            &mut text
        } else if let Some(s) = data.iter_mut().find(|s| s.name == sec_name) {
            s
        } else {
            continue;
        };
        let Some(offset) = sym.address().checked_sub(target_section.address) else {
            return Err(bad(format!("symbol {name} lies before its section")));
        };
        if offset > target_section.size {
            return Err(bad(format!(
                "symbol {name} lies past the end of {sec_name}"
            )));
        }
        target_section.symbols.push(Symbol {
            name: name.to_string(),
            offset,
            address: sym.address(),
            size: elf.st_size(endian),
            binding,
            kind,
            visibility: elf.st_visibility().0,
        });
    }
    for s in std::iter::once(&mut text).chain(data.iter_mut()) {
        s.symbols
            .sort_by(|a, b| a.offset.cmp(&b.offset).then(a.name.cmp(&b.name)));
        s.symbols
            .dedup_by(|a, b| a.name == b.name && a.offset == b.offset);
    }
    let _ = file.elf_header().e_flags(endian);
    Ok(CodeObject {
        target,
        e_flags: header.e_flags,
        code_object_version,
        text,
        data,
        metadata,
        note,
        dynamic_relocations,
    })
}
