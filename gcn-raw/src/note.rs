//! ELF notes of an AMDGPU code object: the metadata note
//! (`NT_AMDGPU_METADATA`, LLVM AMDGPUUsage "Code Object Metadata"), read
//! once for gcn-emu's loader and gcn-patch's lift.

use gcn_embed::elf::NT_AMDGPU_METADATA;
use object::read::elf::{ElfFile64, SectionHeader};
use object::{Endianness, Object, ObjectSection};

/// The descriptor (MessagePack bytes) of the `AMDGPU` note of type
/// `NT_AMDGPU_METADATA` in the note sections (`SHT_NOTE`, or named
/// `.note`) of the ELF64 code object `bytes`: the first such note of a
/// section, the last section holding one winning. `Ok(None)` when there is
/// none (a note section whose notes do not parse counts as holding none);
/// the error is `object`'s, for bytes that are not an ELF64 file.
pub fn amdgpu_metadata(bytes: &[u8]) -> Result<Option<&[u8]>, object::Error> {
    let file = ElfFile64::<Endianness>::parse(bytes)?;
    let endian = file.endian();
    let mut found = None;
    for section in file.sections() {
        let header = section.elf_section_header();
        let named = section.name().is_ok_and(|n| n == ".note");
        if !named && header.sh_type(endian) != object::elf::SHT_NOTE {
            continue;
        }
        let Ok(Some(mut notes)) = header.notes(endian, bytes) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            if note.name() == b"AMDGPU" && note.n_type(endian).0 == NT_AMDGPU_METADATA {
                found = Some(note.desc());
                break;
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_metadata_of_a_real_object_and_refuses_what_is_not_elf64() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/corpus/aiter/gfx942/topksoftmax/topksoftmax_4x256x8.co");
        let bytes = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; copy aiter's sample with tests/corpus/aiter.sh",
                path.display()
            )
        });
        let desc = amdgpu_metadata(&bytes).unwrap().expect("a metadata note");
        // A MessagePack map holding the kernels.
        assert!(
            matches!(desc[0], 0x80..=0x8f | 0xde | 0xdf),
            "{:#x}",
            desc[0]
        );
        assert!(desc.windows(14).any(|w| w == b"amdhsa.kernels"));
        assert!(amdgpu_metadata(b"not an object").is_err());
        // The ELF without its sections (a truncated header table): no note.
        let mut cut = bytes.clone();
        cut[60..62].copy_from_slice(&0u16.to_le_bytes()); // e_shnum
        assert_eq!(amdgpu_metadata(&cut).ok().flatten(), None);
    }
}
