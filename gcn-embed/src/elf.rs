//! Raw AMDGPU ELF definitions: header constants and the `e_flags` encoding.
//!
//! Values from `llvm/include/llvm/BinaryFormat/ELF.h` (`EM_AMDGPU`,
//! `ELFOSABI_AMDGPU_HSA`, `ELFABIVERSION_AMDGPU_HSA_V*`, `EF_AMDGPU_*`) and
//! `llvm/docs/AMDGPUUsage.rst`, section *ELF Code Object* / *Header* (tables
//! `amdgpu-elf-header-e_flags-v4-onwards` and `amdgpu-elf-header-e_flags-v6`).
//! Only code object v4 and later are modelled (LLVM 22 writes v6 by default;
//! v2/v3 flag layouts differ and are rejected by current ROCm anyway).

use std::fmt;

use crate::target::{processor_by_mach, Processor};
use crate::target_id::{Feature, TargetId};

/// `e_machine` for AMDGPU.
pub const EM_AMDGPU: u16 = 224;
/// `EI_OSABI` for code objects loaded by the ROCm (HSA) runtime.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `EI_OSABI` for PAL (graphics) code objects.
pub const ELFOSABI_AMDGPU_PAL: u8 = 65;
/// `EI_OSABI` for Mesa 3D code objects.
pub const ELFOSABI_AMDGPU_MESA3D: u8 = 66;
/// `EI_ABIVERSION` of HSA code object v2.
pub const ELFABIVERSION_AMDGPU_HSA_V2: u8 = 0;
/// `EI_ABIVERSION` of HSA code object v3.
pub const ELFABIVERSION_AMDGPU_HSA_V3: u8 = 1;
/// `EI_ABIVERSION` of HSA code object v4.
pub const ELFABIVERSION_AMDGPU_HSA_V4: u8 = 2;
/// `EI_ABIVERSION` of HSA code object v5.
pub const ELFABIVERSION_AMDGPU_HSA_V5: u8 = 3;
/// `EI_ABIVERSION` of HSA code object v6 (needed for generic targets).
pub const ELFABIVERSION_AMDGPU_HSA_V6: u8 = 4;

/// Mask of the processor (`EF_AMDGPU_MACH_*`) in `e_flags`.
pub const EF_AMDGPU_MACH: u32 = 0x0ff;
/// Mask of the v4+ xnack setting.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// xnack not supported by the processor.
pub const EF_AMDGPU_FEATURE_XNACK_UNSUPPORTED_V4: u32 = 0x000;
/// xnack any (not specified).
pub const EF_AMDGPU_FEATURE_XNACK_ANY_V4: u32 = 0x100;
/// xnack off (`xnack-`).
pub const EF_AMDGPU_FEATURE_XNACK_OFF_V4: u32 = 0x200;
/// xnack on (`xnack+`).
pub const EF_AMDGPU_FEATURE_XNACK_ON_V4: u32 = 0x300;
/// Mask of the v4+ sramecc setting.
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// sramecc not supported by the processor.
pub const EF_AMDGPU_FEATURE_SRAMECC_UNSUPPORTED_V4: u32 = 0x000;
/// sramecc any (not specified).
pub const EF_AMDGPU_FEATURE_SRAMECC_ANY_V4: u32 = 0x400;
/// sramecc off (`sramecc-`).
pub const EF_AMDGPU_FEATURE_SRAMECC_OFF_V4: u32 = 0x800;
/// sramecc on (`sramecc+`).
pub const EF_AMDGPU_FEATURE_SRAMECC_ON_V4: u32 = 0xc00;
/// Mask of the generic-target version (code object v6+, high byte).
pub const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;
/// Shift of the generic-target version.
pub const EF_AMDGPU_GENERIC_VERSION_OFFSET: u32 = 24;
/// Smallest generic version that marks a generic code object.
pub const EF_AMDGPU_GENERIC_VERSION_MIN: u32 = 1;
/// Largest encodable generic version.
pub const EF_AMDGPU_GENERIC_VERSION_MAX: u32 = 0xff;
/// Note type of the code object v3+ metadata note (owner `"AMDGPU"`).
pub const NT_AMDGPU_METADATA: u32 = 32;

/// `EI_ABIVERSION` for a code object version: 4 → 2, 5 → 3, 6 → 4
/// (`None` for versions this crate does not model).
pub fn abi_version(code_object_version: u32) -> Option<u8> {
    match code_object_version {
        4 => Some(ELFABIVERSION_AMDGPU_HSA_V4),
        5 => Some(ELFABIVERSION_AMDGPU_HSA_V5),
        6 => Some(ELFABIVERSION_AMDGPU_HSA_V6),
        _ => None,
    }
}

/// Inverse of [`abi_version`]: 2 → 4, 3 → 5, 4 → 6.
pub fn code_object_version(abi_version: u8) -> Option<u32> {
    match abi_version {
        ELFABIVERSION_AMDGPU_HSA_V4 => Some(4),
        ELFABIVERSION_AMDGPU_HSA_V5 => Some(5),
        ELFABIVERSION_AMDGPU_HSA_V6 => Some(6),
        _ => None,
    }
}

/// A 2-bit v4+ feature field of `e_flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureState {
    /// The processor does not support the feature (`0b00`).
    Unsupported,
    /// Not specified: runs with either setting (`0b01`).
    Any,
    /// Requires the feature off (`0b10`).
    Off,
    /// Requires the feature on (`0b11`).
    On,
}

impl FeatureState {
    fn bits(self) -> u32 {
        match self {
            FeatureState::Unsupported => 0,
            FeatureState::Any => 1,
            FeatureState::Off => 2,
            FeatureState::On => 3,
        }
    }

    fn from_bits(b: u32) -> FeatureState {
        match b & 3 {
            0 => FeatureState::Unsupported,
            1 => FeatureState::Any,
            2 => FeatureState::Off,
            _ => FeatureState::On,
        }
    }

    /// The target-ID setting (`Unsupported` and `Any` are both
    /// [`Feature::Any`]: nothing is written in the target ID).
    pub fn feature(self) -> Feature {
        match self {
            FeatureState::Unsupported | FeatureState::Any => Feature::Any,
            FeatureState::Off => Feature::Off,
            FeatureState::On => Feature::On,
        }
    }
}

impl fmt::Display for FeatureState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FeatureState::Unsupported => "unsupported",
            FeatureState::Any => "any",
            FeatureState::Off => "off",
            FeatureState::On => "on",
        })
    }
}

/// Decoded v4+ `e_flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EFlags {
    /// `EF_AMDGPU_MACH_*` value.
    pub mach: u32,
    /// xnack setting (bits 8–9).
    pub xnack: FeatureState,
    /// sramecc setting (bits 10–11).
    pub sramecc: FeatureState,
    /// Generic-target version (bits 24–31); 0 for real processors.
    pub generic_version: u32,
}

impl EFlags {
    /// Encodes into the `e_flags` word.
    pub fn encode(&self) -> u32 {
        (self.mach & EF_AMDGPU_MACH)
            | (self.xnack.bits() << 8)
            | (self.sramecc.bits() << 10)
            | ((self.generic_version & EF_AMDGPU_GENERIC_VERSION_MAX)
                << EF_AMDGPU_GENERIC_VERSION_OFFSET)
    }

    /// Decodes an `e_flags` word (other bits are ignored).
    pub fn decode(e_flags: u32) -> EFlags {
        EFlags {
            mach: e_flags & EF_AMDGPU_MACH,
            xnack: FeatureState::from_bits(e_flags >> 8),
            sramecc: FeatureState::from_bits(e_flags >> 10),
            generic_version: (e_flags & EF_AMDGPU_GENERIC_VERSION)
                >> EF_AMDGPU_GENERIC_VERSION_OFFSET,
        }
    }

    /// The `e_flags` LLVM 22 writes for target `t` in code object v4+ (for
    /// generic targets v6 is required and the generic version is written).
    pub fn for_target(t: &TargetId) -> EFlags {
        let p = t.processor;
        let state = |supported: bool, f: Feature| match (supported, f) {
            (false, _) => FeatureState::Unsupported,
            (true, Feature::Any) => FeatureState::Any,
            (true, Feature::On) => FeatureState::On,
            (true, Feature::Off) => FeatureState::Off,
        };
        EFlags {
            mach: p.mach,
            xnack: state(p.elf_xnack, t.xnack),
            sramecc: state(p.elf_sramecc, t.sramecc),
            generic_version: p.generic_version,
        }
    }

    /// The processor named by `mach`, if known.
    pub fn processor(&self) -> Option<&'static Processor> {
        processor_by_mach(self.mach)
    }

    /// The target ID these flags describe, if the processor is known and the
    /// feature states are valid for it.
    pub fn target_id(&self) -> Option<TargetId> {
        let p = self.processor()?;
        TargetId::new(p)
            .with_sramecc(self.sramecc.feature())
            .ok()?
            .with_xnack(self.xnack.feature())
            .ok()
    }

    /// True if the object is a generic code object (version ≥ 1).
    pub fn is_generic(&self) -> bool {
        self.generic_version >= EF_AMDGPU_GENERIC_VERSION_MIN
    }
}

impl fmt::Display for EFlags {
    /// Like `llvm-readelf -h`: `0x54c, gfx942, xnack any, sramecc any`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}, ", self.encode())?;
        match self.processor() {
            Some(p) => f.write_str(p.name)?,
            None => write!(f, "unknown mach {:#x}", self.mach)?,
        }
        if self.xnack != FeatureState::Unsupported {
            write!(f, ", xnack {}", self.xnack)?;
        }
        if self.sramecc != FeatureState::Unsupported {
            write!(f, ", sramecc {}", self.sramecc)?;
        }
        if self.generic_version != 0 {
            write!(f, ", generic_v{}", self.generic_version)?;
        }
        Ok(())
    }
}

/// The identifying fields of an AMDGPU ELF header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// `EI_OSABI` (64 = HSA).
    pub os_abi: u8,
    /// `EI_ABIVERSION` (2/3/4 = code object v4/v5/v6 for HSA).
    pub abi_version: u8,
    /// `e_type` (1 = relocatable, 3 = shared object; loadable hsaco are 3).
    pub e_type: u16,
    /// `e_machine` (224 for AMDGPU).
    pub machine: u16,
    /// Raw `e_flags`.
    pub e_flags: u32,
}

impl Header {
    /// Decoded `e_flags`. The generic version is only honoured in code object
    /// v6 (like ROCm CLR `CodeObject::getGenericVersion`, which reads it only
    /// when `EI_ABIVERSION == ELFABIVERSION_AMDGPU_HSA_V6`).
    pub fn flags(&self) -> EFlags {
        let mut f = EFlags::decode(self.e_flags);
        if self.abi_version != ELFABIVERSION_AMDGPU_HSA_V6 {
            f.generic_version = 0;
        }
        f
    }

    /// Code object version (4, 5, 6) for HSA objects.
    pub fn code_object_version(&self) -> Option<u32> {
        if self.os_abi == ELFOSABI_AMDGPU_HSA {
            code_object_version(self.abi_version)
        } else {
            None
        }
    }
}

/// Why [`read_header`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfError(String);

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ElfError {}

/// Reads the identifying header fields of a 64-bit little-endian AMDGPU ELF
/// (an `.o` or `.hsaco`). Never panics on bad input.
pub fn read_header(bytes: &[u8]) -> Result<Header, ElfError> {
    if bytes.len() < 64 {
        return Err(ElfError(format!(
            "not an ELF file: {} bytes, an ELF64 header needs 64",
            bytes.len()
        )));
    }
    if &bytes[..4] != b"\x7fELF" {
        return Err(ElfError("not an ELF file: bad magic".into()));
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Err(ElfError(
            "not a 64-bit little-endian ELF (AMDGPU code objects are ELF64 LE)".into(),
        ));
    }
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
    let machine = u16_at(18);
    if machine != EM_AMDGPU {
        return Err(ElfError(format!(
            "not an AMDGPU ELF: e_machine is {machine}, expected {EM_AMDGPU} (EM_AMDGPU)"
        )));
    }
    Ok(Header {
        os_abi: bytes[7],
        abi_version: bytes[8],
        e_type: u16_at(16),
        machine,
        e_flags: u32::from_le_bytes([bytes[48], bytes[49], bytes[50], bytes[51]]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{processor, processors};

    fn flags_for(s: &str) -> u32 {
        EFlags::for_target(&TargetId::parse(s).unwrap()).encode()
    }

    #[test]
    fn abi_versions() {
        assert_eq!(abi_version(4), Some(2));
        assert_eq!(abi_version(5), Some(3));
        assert_eq!(abi_version(6), Some(4));
        assert_eq!(abi_version(3), None);
        for v in 4..=6 {
            assert_eq!(code_object_version(abi_version(v).unwrap()), Some(v));
        }
    }

    #[test]
    fn for_target_matches_clang22() {
        // Each value: `clang-22 --target=amdgcn-amd-amdhsa -mcpu=$T -nogpulib
        // -c -x cl k.cl -o x.o && llvm-readelf-22 -h x.o` (Flags line).
        assert_eq!(flags_for("gfx942"), 0x54c);
        assert_eq!(flags_for("gfx942:sramecc+:xnack-"), 0xe4c);
        assert_eq!(flags_for("gfx942:xnack-:sramecc+"), 0xe4c);
        assert_eq!(flags_for("gfx942:xnack+"), 0x74c);
        assert_eq!(flags_for("gfx942:sramecc-"), 0x94c);
        assert_eq!(flags_for("gfx908:xnack+"), 0x730);
        assert_eq!(flags_for("gfx906:sramecc-"), 0x92f);
        assert_eq!(flags_for("gfx1010:xnack+"), 0x333);
        assert_eq!(flags_for("gfx9-4-generic"), 0x100055f);
        assert_eq!(flags_for("gfx9-4-generic:xnack-:sramecc+"), 0x1000e5f);
        assert_eq!(flags_for("gfx9-generic:xnack+"), 0x1000351);
        assert_eq!(flags_for("gfx11-generic"), 0x1000054);
        assert_eq!(flags_for("gfx1250"), 0x549);
        assert_eq!(flags_for("gfx1100"), 0x41);
    }

    #[test]
    fn encode_decode_round_trip() {
        for p in processors() {
            for x in [
                FeatureState::Unsupported,
                FeatureState::Any,
                FeatureState::Off,
                FeatureState::On,
            ] {
                for s in [FeatureState::Any, FeatureState::On] {
                    let f = EFlags {
                        mach: p.mach,
                        xnack: x,
                        sramecc: s,
                        generic_version: p.generic_version,
                    };
                    assert_eq!(EFlags::decode(f.encode()), f);
                }
            }
        }
        let d = EFlags::decode(0x1000e5f);
        assert_eq!(d.mach, 0x5f);
        assert_eq!(d.xnack, FeatureState::Off);
        assert_eq!(d.sramecc, FeatureState::On);
        assert_eq!(d.generic_version, 1);
        assert!(d.is_generic());
        assert_eq!(
            d.target_id().unwrap().name(),
            "gfx9-4-generic:sramecc+:xnack-"
        );
        assert_eq!(
            d.to_string(),
            "0x1000e5f, gfx9-4-generic, xnack off, sramecc on, generic_v1"
        );
        assert_eq!(EFlags::decode(0x41).to_string(), "0x41, gfx1100");
        assert_eq!(EFlags::decode(0x40).processor(), None); // gfx940, removed
                                                            // xnack "on" for a processor without target-ID xnack: no target ID.
        assert_eq!(EFlags::decode(0x341).target_id(), None);
    }

    #[test]
    fn for_target_inverts_target_id() {
        for p in processors() {
            let t = TargetId::new(p);
            assert_eq!(EFlags::for_target(&t).target_id(), Some(t), "{}", p.name);
        }
        let t = TargetId::parse("gfx90a:sramecc-:xnack+").unwrap();
        assert_eq!(EFlags::for_target(&t).target_id(), Some(t));
        assert_eq!(
            processor("gfx90a").unwrap().mach,
            EFlags::for_target(&t).mach
        );
    }

    #[test]
    fn read_header_rejects_garbage() {
        assert!(read_header(b"").unwrap_err().to_string().contains("64"));
        assert!(read_header(&[0u8; 64])
            .unwrap_err()
            .to_string()
            .contains("magic"));
        let mut h = [0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 1;
        assert!(read_header(&h).is_err());
        h[4] = 2;
        h[5] = 1;
        h[18] = 62; // EM_X86_64
        assert!(read_header(&h)
            .unwrap_err()
            .to_string()
            .contains("e_machine is 62"));
        h[18] = 224;
        h[7] = ELFOSABI_AMDGPU_HSA;
        h[8] = ELFABIVERSION_AMDGPU_HSA_V5;
        h[48..52].copy_from_slice(&0x0100_0054u32.to_le_bytes());
        let hdr = read_header(&h).unwrap();
        assert_eq!(hdr.code_object_version(), Some(5));
        // Generic version only counts in v6.
        assert_eq!(hdr.flags().generic_version, 0);
        h[8] = ELFABIVERSION_AMDGPU_HSA_V6;
        assert_eq!(read_header(&h).unwrap().flags().generic_version, 1);
    }
}
