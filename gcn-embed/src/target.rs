//! The table of every AMDGPU processor that LLVM 22 knows, plus the generic
//! targets.
//!
//! Sources (cited per entry group below):
//!
//! * `llvm/docs/AMDGPUUsage.rst`, tables *AMDGPU Processors*
//!   (`amdgpu-processor-table`) and *AMDGPU Generic Processors*
//!   (`amdgpu-generic-processor-table`): names, which generic target covers
//!   which processor, supported target features (`xnack`, `sramecc`,
//!   `wavefrontsize64`).
//! * `llvm/include/llvm/BinaryFormat/ELF.h`, `EF_AMDGPU_MACH_AMDGCN_*`: the
//!   `mach` values (low byte of `e_flags`).
//! * Cross-checked against the installed LLVM 22.1.8 toolchain:
//!   `llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=help` lists exactly the
//!   processors below (gfx940/gfx941 were removed in LLVM 21, their `mach`
//!   values 0x040/0x04b are now reserved), and for every processor
//!   `llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=$P -filetype=obj k.ll` followed
//!   by `llvm-readelf-22 -h` prints the `mach` below and `xnack`/`sramecc`
//!   exactly for the processors marked as supporting them (the tests in this
//!   module pin those values).

use std::fmt;

/// GPU architecture generation (roughly, the ISA manual a processor follows).
///
/// Ordered from oldest to newest, so `g >= Generation::Gfx9` works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Generation {
    /// GCN 1 (Southern Islands): gfx600–gfx602.
    Gfx6,
    /// GCN 2 (Sea Islands): gfx700–gfx705.
    Gfx7,
    /// GCN 3/4 (Volcanic Islands, Polaris): gfx801–gfx810.
    Gfx8,
    /// GCN 5 / Vega and CDNA 1–4: gfx900–gfx950.
    Gfx9,
    /// RDNA 1: gfx1010–gfx1013.
    Gfx10_1,
    /// RDNA 2: gfx1030–gfx1036.
    Gfx10_3,
    /// RDNA 3 / 3.5: gfx1100–gfx1153.
    Gfx11,
    /// RDNA 4: gfx1200, gfx1201.
    Gfx12,
    /// gfx1250, gfx1251.
    Gfx12_5,
}

impl Generation {
    /// A short human-readable label, e.g. `"GFX9"` or `"GFX10.3"`.
    pub fn label(self) -> &'static str {
        match self {
            Generation::Gfx6 => "GFX6",
            Generation::Gfx7 => "GFX7",
            Generation::Gfx8 => "GFX8",
            Generation::Gfx9 => "GFX9",
            Generation::Gfx10_1 => "GFX10.1",
            Generation::Gfx10_3 => "GFX10.3",
            Generation::Gfx11 => "GFX11",
            Generation::Gfx12 => "GFX12",
            Generation::Gfx12_5 => "GFX12.5",
        }
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One AMDGPU processor (a real GPU such as `gfx942`) or generic target (such
/// as `gfx9-4-generic`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Processor {
    /// LLVM processor name: `"gfx942"`, `"gfx9-4-generic"`.
    pub name: &'static str,
    /// `EF_AMDGPU_MACH_*` value from `llvm/BinaryFormat/ELF.h` (low byte of
    /// `e_flags`).
    pub mach: u32,
    /// Architecture generation.
    pub generation: Generation,
    /// Name of the generic target that covers this processor, per the
    /// AMDGPUUsage *Generic Processors* table (`None` if there is none, and
    /// always `None` for generic targets themselves).
    pub generic: Option<&'static str>,
    /// True for the generic targets (`gfx*-generic`).
    pub is_generic: bool,
    /// For generic targets: the `EF_AMDGPU_GENERIC_VERSION` LLVM 22 writes (1).
    /// 0 for real processors.
    pub generic_version: u32,
    /// Supports the `sramecc` target-ID feature (`gfx942:sramecc+`).
    pub sramecc: bool,
    /// Supports the `xnack` target-ID feature (`gfx942:xnack-`).
    pub xnack: bool,
    /// First LLVM major release that knows this processor. Exact for LLVM 17
    /// and later (checked against LLVM pull requests / release branches);
    /// approximate (the release that introduced the `gfxNNN` name or the
    /// processor, whichever is later) for older ones.
    pub min_llvm: u32,
    /// Has AGPRs in a unified VGPR/AGPR file, described in the kernel
    /// descriptor by `.amdhsa_accum_offset` (gfx90a, gfx942, gfx950,
    /// gfx9-4-generic).
    pub accum_offset: bool,
    /// Supports wave64.
    pub wave64: bool,
    /// Supports wave32.
    pub wave32: bool,
    /// The backend records the `xnack` state in `e_flags` (as "any" when not
    /// specified). Equal to [`Processor::xnack`] except for gfx1250/gfx1251,
    /// where LLVM 22 writes `xnack any` into `e_flags` (`0x549`) although the
    /// target-ID syntax rejects `gfx1250:xnack±` (clang-22: "invalid target
    /// ID").
    pub elf_xnack: bool,
    /// Like [`Processor::elf_xnack`], for `sramecc`.
    pub elf_sramecc: bool,
}

impl fmt::Display for Processor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

// Feature-set shorthands used by the table.
const NONE: (bool, bool) = (false, false); // (xnack, sramecc)
const X: (bool, bool) = (true, false);
const XS: (bool, bool) = (true, true);

/// Builds a real (non-generic) processor entry.
#[allow(clippy::too_many_arguments)]
const fn p(
    name: &'static str,
    mach: u32,
    generation: Generation,
    generic: Option<&'static str>,
    features: (bool, bool),
    min_llvm: u32,
    accum_offset: bool,
    waves: (bool, bool),
) -> Processor {
    Processor {
        name,
        mach,
        generation,
        generic,
        is_generic: false,
        generic_version: 0,
        xnack: features.0,
        sramecc: features.1,
        min_llvm,
        accum_offset,
        wave64: waves.0,
        wave32: waves.1,
        elf_xnack: features.0,
        elf_sramecc: features.1,
    }
}

/// Builds a generic-target entry (all generic targets need LLVM 19+ and code
/// object v6; LLVM 22 writes generic version 1 for all of them).
const fn g(
    name: &'static str,
    mach: u32,
    generation: Generation,
    features: (bool, bool),
    min_llvm: u32,
    accum_offset: bool,
    waves: (bool, bool),
) -> Processor {
    Processor {
        name,
        mach,
        generation,
        generic: None,
        is_generic: true,
        generic_version: 1,
        xnack: features.0,
        sramecc: features.1,
        min_llvm,
        accum_offset,
        wave64: waves.0,
        wave32: waves.1,
        elf_xnack: features.0,
        elf_sramecc: features.1,
    }
}

const W64: (bool, bool) = (true, false); // (wave64, wave32)
const W32_64: (bool, bool) = (true, true);
const W32: (bool, bool) = (false, true);

use Generation::*;

const GFX9_GENERIC: Option<&str> = Some("gfx9-generic");
const GFX9_4_GENERIC: Option<&str> = Some("gfx9-4-generic");
const GFX10_1_GENERIC: Option<&str> = Some("gfx10-1-generic");
const GFX10_3_GENERIC: Option<&str> = Some("gfx10-3-generic");
const GFX11_GENERIC: Option<&str> = Some("gfx11-generic");
const GFX12_GENERIC: Option<&str> = Some("gfx12-generic");

/// The table. Order: by generation, then by name; generic targets last in
/// their generation.
static PROCESSORS: &[Processor] = &[
    // --- GFX6 (AMDGPUUsage "AMDGPU Processors"; ELF.h 0x020, 0x021, 0x03a).
    p("gfx600", 0x020, Gfx6, None, NONE, 7, false, W64),
    p("gfx601", 0x021, Gfx6, None, NONE, 7, false, W64),
    p("gfx602", 0x03a, Gfx6, None, NONE, 12, false, W64),
    // --- GFX7 (ELF.h 0x022-0x026, 0x03b).
    p("gfx700", 0x022, Gfx7, None, NONE, 7, false, W64),
    p("gfx701", 0x023, Gfx7, None, NONE, 7, false, W64),
    p("gfx702", 0x024, Gfx7, None, NONE, 7, false, W64),
    p("gfx703", 0x025, Gfx7, None, NONE, 7, false, W64),
    p("gfx704", 0x026, Gfx7, None, NONE, 7, false, W64),
    p("gfx705", 0x03b, Gfx7, None, NONE, 12, false, W64),
    // --- GFX8 (ELF.h 0x028-0x02b, 0x03c). gfx801 and gfx810 (APUs) support
    // xnack.
    p("gfx801", 0x028, Gfx8, None, X, 7, false, W64),
    p("gfx802", 0x029, Gfx8, None, NONE, 7, false, W64),
    p("gfx803", 0x02a, Gfx8, None, NONE, 7, false, W64),
    p("gfx805", 0x03c, Gfx8, None, NONE, 12, false, W64),
    p("gfx810", 0x02b, Gfx8, None, X, 7, false, W64),
    // --- GFX9 (ELF.h 0x02c-0x032, 0x03f, 0x04c, 0x04f; generic 0x051, 0x05f).
    // gfx908 and gfx90a are covered by no generic target (AMDGPUUsage
    // "AMDGPU Generic Processors"); gfx940/gfx941 were removed in LLVM 21.
    p("gfx900", 0x02c, Gfx9, GFX9_GENERIC, X, 7, false, W64),
    p("gfx902", 0x02d, Gfx9, GFX9_GENERIC, X, 7, false, W64),
    p("gfx904", 0x02e, Gfx9, GFX9_GENERIC, X, 7, false, W64),
    p("gfx906", 0x02f, Gfx9, GFX9_GENERIC, XS, 7, false, W64),
    p("gfx908", 0x030, Gfx9, None, XS, 10, false, W64),
    p("gfx909", 0x031, Gfx9, GFX9_GENERIC, X, 10, false, W64),
    p("gfx90a", 0x03f, Gfx9, None, XS, 13, true, W64),
    p("gfx90c", 0x032, Gfx9, GFX9_GENERIC, X, 12, false, W64),
    p("gfx942", 0x04c, Gfx9, GFX9_4_GENERIC, XS, 17, true, W64),
    p("gfx950", 0x04f, Gfx9, GFX9_4_GENERIC, XS, 20, true, W64),
    g("gfx9-generic", 0x051, Gfx9, X, 19, false, W64),
    g("gfx9-4-generic", 0x05f, Gfx9, XS, 20, true, W64),
    // --- GFX10.1 (ELF.h 0x033-0x035, 0x042; generic 0x052).
    p(
        "gfx1010",
        0x033,
        Gfx10_1,
        GFX10_1_GENERIC,
        X,
        9,
        false,
        W32_64,
    ),
    p(
        "gfx1011",
        0x034,
        Gfx10_1,
        GFX10_1_GENERIC,
        X,
        9,
        false,
        W32_64,
    ),
    p(
        "gfx1012",
        0x035,
        Gfx10_1,
        GFX10_1_GENERIC,
        X,
        9,
        false,
        W32_64,
    ),
    p(
        "gfx1013",
        0x042,
        Gfx10_1,
        GFX10_1_GENERIC,
        X,
        13,
        false,
        W32_64,
    ),
    g("gfx10-1-generic", 0x052, Gfx10_1, X, 19, false, W32_64),
    // --- GFX10.3 (ELF.h 0x036-0x039, 0x03d, 0x03e, 0x045; generic 0x053).
    p(
        "gfx1030",
        0x036,
        Gfx10_3,
        GFX10_3_GENERIC,
        NONE,
        12,
        false,
        W32_64,
    ),
    p(
        "gfx1031",
        0x037,
        Gfx10_3,
        GFX10_3_GENERIC,
        NONE,
        12,
        false,
        W32_64,
    ),
    p(
        "gfx1032",
        0x038,
        Gfx10_3,
        GFX10_3_GENERIC,
        NONE,
        12,
        false,
        W32_64,
    ),
    p(
        "gfx1033",
        0x039,
        Gfx10_3,
        GFX10_3_GENERIC,
        NONE,
        12,
        false,
        W32_64,
    ),
    p(
        "gfx1034",
        0x03e,
        Gfx10_3,
        GFX10_3_GENERIC,
        NONE,
        13,
        false,
        W32_64,
    ),
    p(
        "gfx1035",
        0x03d,
        Gfx10_3,
        GFX10_3_GENERIC,
        NONE,
        13,
        false,
        W32_64,
    ),
    p(
        "gfx1036",
        0x045,
        Gfx10_3,
        GFX10_3_GENERIC,
        NONE,
        15,
        false,
        W32_64,
    ),
    g("gfx10-3-generic", 0x053, Gfx10_3, NONE, 19, false, W32_64),
    // --- GFX11 (ELF.h 0x041, 0x046, 0x047, 0x044, 0x043, 0x04a, 0x055,
    // 0x058; generic 0x054).
    p(
        "gfx1100",
        0x041,
        Gfx11,
        GFX11_GENERIC,
        NONE,
        15,
        false,
        W32_64,
    ),
    p(
        "gfx1101",
        0x046,
        Gfx11,
        GFX11_GENERIC,
        NONE,
        15,
        false,
        W32_64,
    ),
    p(
        "gfx1102",
        0x047,
        Gfx11,
        GFX11_GENERIC,
        NONE,
        15,
        false,
        W32_64,
    ),
    p(
        "gfx1103",
        0x044,
        Gfx11,
        GFX11_GENERIC,
        NONE,
        15,
        false,
        W32_64,
    ),
    p(
        "gfx1150",
        0x043,
        Gfx11,
        GFX11_GENERIC,
        NONE,
        17,
        false,
        W32_64,
    ),
    p(
        "gfx1151",
        0x04a,
        Gfx11,
        GFX11_GENERIC,
        NONE,
        17,
        false,
        W32_64,
    ),
    p(
        "gfx1152",
        0x055,
        Gfx11,
        GFX11_GENERIC,
        NONE,
        19,
        false,
        W32_64,
    ),
    p(
        "gfx1153",
        0x058,
        Gfx11,
        GFX11_GENERIC,
        NONE,
        20,
        false,
        W32_64,
    ),
    g("gfx11-generic", 0x054, Gfx11, NONE, 19, false, W32_64),
    // --- GFX12 (ELF.h 0x048, 0x04e; generic 0x059).
    p(
        "gfx1200",
        0x048,
        Gfx12,
        GFX12_GENERIC,
        NONE,
        18,
        false,
        W32_64,
    ),
    p(
        "gfx1201",
        0x04e,
        Gfx12,
        GFX12_GENERIC,
        NONE,
        18,
        false,
        W32_64,
    ),
    g("gfx12-generic", 0x059, Gfx12, NONE, 19, false, W32_64),
    // --- GFX12.5 (ELF.h 0x049, 0x05a). Wave32 only (clang-22
    // `-mwavefrontsize64` on gfx1250: "option 'wavefrontsize64' cannot be
    // specified on this target"). gfx12-5-generic (0x05b) postdates LLVM 22.
    // The backend writes "xnack any, sramecc any" into e_flags (0x549) but the
    // target-ID syntax accepts neither feature, hence elf_* differ.
    // gfx1250: llvm/llvm-project#144965 (June 2025, LLVM 21); gfx1251: #159430
    // (September 2025, LLVM 22).
    Processor {
        elf_xnack: true,
        elf_sramecc: true,
        ..p("gfx1250", 0x049, Gfx12_5, None, NONE, 21, false, W32)
    },
    Processor {
        elf_xnack: true,
        elf_sramecc: true,
        ..p("gfx1251", 0x05a, Gfx12_5, None, NONE, 22, false, W32)
    },
];

/// Every processor and generic target LLVM 22 knows, ordered by generation.
pub fn processors() -> &'static [Processor] {
    PROCESSORS
}

/// Looks a processor up by its exact LLVM name (`"gfx942"`,
/// `"gfx11-generic"`). Case-sensitive, like LLVM.
pub fn processor(name: &str) -> Option<&'static Processor> {
    PROCESSORS.iter().find(|p| p.name == name)
}

/// Looks a processor up by its `EF_AMDGPU_MACH_*` value.
pub fn processor_by_mach(mach: u32) -> Option<&'static Processor> {
    PROCESSORS.iter().find(|p| p.mach == mach)
}

impl Processor {
    /// The generic target that covers this processor (`gfx942` →
    /// `gfx9-4-generic`), if any.
    pub fn generic_processor(&self) -> Option<&'static Processor> {
        self.generic.and_then(processor)
    }

    /// True if a generic target covers this processor (`gfx1101`: yes,
    /// `gfx90a`: no).
    pub fn covered_by_generic(&self) -> bool {
        self.generic.is_some()
    }

    /// Lowest code object version LLVM 22 accepts for it: 6 for generic
    /// targets ("gfx11-generic is only available on code object version 6 or
    /// better"), 4 otherwise.
    pub fn min_code_object_version(&self) -> u32 {
        if self.is_generic {
            6
        } else {
            4
        }
    }

    /// The wavefront size compilers use by default: 64 on GFX6–GFX9, 32 on
    /// GFX10 and later.
    pub fn default_wavefront_size(&self) -> u32 {
        if self.wave32 {
            32
        } else {
            64
        }
    }

    /// For a generic target: every real processor it covers. Empty for real
    /// processors.
    pub fn covered_processors(&self) -> impl Iterator<Item = &'static Processor> + '_ {
        PROCESSORS
            .iter()
            .filter(move |p| self.is_generic && p.generic == Some(self.name))
    }

    /// True if code built for `self` may run on `agent` by processor alone:
    /// `self` is `agent`, or `self` is the generic target covering `agent`.
    pub fn runs_on(&self, agent: &Processor) -> bool {
        self.name == agent.name || (self.is_generic && agent.generic == Some(self.name))
    }

    /// The architecture component of the LLVM 23+ target triple (also written
    /// by IREE 3.13): `gfx942` → `"amdgpu9.42"`, `gfx90a` → `"amdgpu9.0a"`,
    /// `gfx1100` → `"amdgpu11.00"`, `gfx9-4-generic` → `"amdgpu9.4"`,
    /// `gfx11-generic` → `"amdgpu11"` (clang/test/Driver/amdgpu-triple.c).
    pub fn triple_arch(&self) -> String {
        let digits = self.name.trim_start_matches("gfx");
        if let Some(stem) = digits.strip_suffix("-generic") {
            format!("amdgpu{}", stem.replace('-', "."))
        } else {
            let (major, rest) = digits.split_at(digits.len().saturating_sub(2));
            format!("amdgpu{major}.{rest}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_mach_are_unique() {
        let mut names = HashSet::new();
        let mut machs = HashSet::new();
        for p in processors() {
            assert!(names.insert(p.name), "duplicate name {}", p.name);
            assert!(machs.insert(p.mach), "duplicate mach {:#x}", p.mach);
            assert!(p.mach > 0 && p.mach <= 0xff, "{} mach out of range", p.name);
        }
    }

    #[test]
    fn llvm22_processor_list_is_complete() {
        // `llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=help`, gfx* entries.
        let llc22 = "gfx10-1-generic gfx10-3-generic gfx1010 gfx1011 gfx1012 gfx1013 \
            gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 gfx11-generic gfx1100 \
            gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1153 gfx12-generic gfx1200 \
            gfx1201 gfx1250 gfx1251 gfx600 gfx601 gfx602 gfx700 gfx701 gfx702 gfx703 gfx704 \
            gfx705 gfx801 gfx802 gfx803 gfx805 gfx810 gfx9-4-generic gfx9-generic gfx900 \
            gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx942 gfx950";
        let want: HashSet<&str> = llc22.split_whitespace().collect();
        let have: HashSet<&str> = processors().iter().map(|p| p.name).collect();
        assert_eq!(want, have);
    }

    #[test]
    fn mach_and_default_e_flags_match_llvm22() {
        // For each processor: `llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=$P
        // -filetype=obj k.ll && llvm-readelf-22 -h` (code object v6, the LLVM
        // 22 default) printed these e_flags. 0x100 = xnack any, 0x400 =
        // sramecc any, 0x1000000 = generic_v1.
        let readelf: &[(&str, u32)] = &[
            ("gfx10-1-generic", 0x1000152),
            ("gfx10-3-generic", 0x1000053),
            ("gfx1010", 0x133),
            ("gfx1011", 0x134),
            ("gfx1012", 0x135),
            ("gfx1013", 0x142),
            ("gfx1030", 0x36),
            ("gfx1031", 0x37),
            ("gfx1032", 0x38),
            ("gfx1033", 0x39),
            ("gfx1034", 0x3e),
            ("gfx1035", 0x3d),
            ("gfx1036", 0x45),
            ("gfx11-generic", 0x1000054),
            ("gfx1100", 0x41),
            ("gfx1101", 0x46),
            ("gfx1102", 0x47),
            ("gfx1103", 0x44),
            ("gfx1150", 0x43),
            ("gfx1151", 0x4a),
            ("gfx1152", 0x55),
            ("gfx1153", 0x58),
            ("gfx12-generic", 0x1000059),
            ("gfx1200", 0x48),
            ("gfx1201", 0x4e),
            ("gfx1250", 0x549),
            ("gfx1251", 0x55a),
            ("gfx600", 0x20),
            ("gfx601", 0x21),
            ("gfx602", 0x3a),
            ("gfx700", 0x22),
            ("gfx701", 0x23),
            ("gfx702", 0x24),
            ("gfx703", 0x25),
            ("gfx704", 0x26),
            ("gfx705", 0x3b),
            ("gfx801", 0x128),
            ("gfx802", 0x29),
            ("gfx803", 0x2a),
            ("gfx805", 0x3c),
            ("gfx810", 0x12b),
            ("gfx9-4-generic", 0x100055f),
            ("gfx9-generic", 0x1000151),
            ("gfx900", 0x12c),
            ("gfx902", 0x12d),
            ("gfx904", 0x12e),
            ("gfx906", 0x52f),
            ("gfx908", 0x530),
            ("gfx909", 0x131),
            ("gfx90a", 0x53f),
            ("gfx90c", 0x132),
            ("gfx942", 0x54c),
            ("gfx950", 0x54f),
        ];
        assert_eq!(readelf.len(), processors().len());
        for &(name, flags) in readelf {
            let p = processor(name).unwrap_or_else(|| panic!("{name} missing"));
            assert_eq!(p.mach, flags & 0xff, "{name} mach");
            assert_eq!(p.elf_xnack, flags & 0x300 != 0, "{name} xnack");
            assert_eq!(p.elf_sramecc, flags & 0xc00 != 0, "{name} sramecc");
            assert_eq!(p.generic_version, flags >> 24, "{name} generic version");
        }
    }

    #[test]
    fn brief_mach_values() {
        let m = |n| processor(n).map(|p| p.mach);
        assert_eq!(m("gfx942"), Some(0x04c));
        assert_eq!(m("gfx950"), Some(0x04f));
        assert_eq!(m("gfx90a"), Some(0x03f));
        assert_eq!(m("gfx1100"), Some(0x041));
        assert_eq!(m("gfx9-4-generic"), Some(0x05f));
        assert_eq!(m("gfx11-generic"), Some(0x054));
        assert_eq!(processor_by_mach(0x04c).map(|p| p.name), Some("gfx942"));
        assert_eq!(processor("gfx940"), None);
        assert_eq!(processor("GFX942"), None);
    }

    #[test]
    fn generics_are_consistent() {
        for p in processors() {
            if p.is_generic {
                assert_eq!(p.generic, None, "{}", p.name);
                assert_eq!(p.generic_version, 1, "{}", p.name);
                assert!(p.min_llvm >= 19, "{}", p.name);
                assert!(p.name.ends_with("-generic"));
                let covered: Vec<_> = p.covered_processors().collect();
                assert!(!covered.is_empty(), "{} covers nothing", p.name);
                for c in covered {
                    assert_eq!(c.generation, p.generation, "{} / {}", p.name, c.name);
                    // A generic target only offers features every covered
                    // processor can accept, except sramecc on gfx9-generic
                    // (AMDGPUUsage: "sramecc is not available on gfx906").
                    assert!(!p.xnack || c.xnack, "{} / {}", p.name, c.name);
                    assert!(!p.sramecc || c.sramecc, "{} / {}", p.name, c.name);
                    assert_eq!(p.wave32, c.wave32);
                    assert!(p.min_llvm >= c.min_llvm || c.min_llvm > 19);
                    assert!(p.runs_on(c));
                    assert!(!c.runs_on(p));
                }
            } else {
                assert_eq!(p.generic_version, 0);
                assert_eq!(p.covered_processors().count(), 0);
                if let Some(gname) = p.generic {
                    let gp = p.generic_processor().expect("generic exists");
                    assert_eq!(gp.name, gname);
                    assert!(gp.is_generic);
                }
                assert!(p.name.starts_with("gfx"));
            }
            assert!(p.wave64 || p.wave32);
            assert!(p.runs_on(p));
        }
    }

    #[test]
    fn generation_ordering() {
        let mut prev = Generation::Gfx6;
        for p in processors() {
            assert!(p.generation >= prev, "{} out of order", p.name);
            prev = p.generation;
            let wave32_only = p.generation == Generation::Gfx12_5;
            assert_eq!(p.wave32, p.generation >= Generation::Gfx10_1, "{}", p.name);
            assert_eq!(p.wave64, !wave32_only, "{}", p.name);
        }
        assert!(Generation::Gfx9 < Generation::Gfx10_1);
        assert!(Generation::Gfx12 < Generation::Gfx12_5);
        assert_eq!(Generation::Gfx10_3.to_string(), "GFX10.3");
    }

    #[test]
    fn accum_offset_and_llvm_versions() {
        let acc: Vec<_> = processors()
            .iter()
            .filter(|p| p.accum_offset)
            .map(|p| p.name)
            .collect();
        assert_eq!(acc, ["gfx90a", "gfx942", "gfx950", "gfx9-4-generic"]);
        assert_eq!(processor("gfx950").unwrap().min_llvm, 20);
        assert_eq!(processor("gfx9-4-generic").unwrap().min_llvm, 20);
        assert_eq!(processor("gfx11-generic").unwrap().min_llvm, 19);
        assert!(processors().iter().all(|p| p.min_llvm <= 22));
    }

    #[test]
    fn coverage_per_amdgpuusage() {
        let names = |g: &str| -> Vec<&str> {
            processor(g)
                .unwrap()
                .covered_processors()
                .map(|p| p.name)
                .collect()
        };
        assert_eq!(
            names("gfx9-generic"),
            ["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"]
        );
        assert_eq!(names("gfx9-4-generic"), ["gfx942", "gfx950"]);
        assert_eq!(
            names("gfx10-1-generic"),
            ["gfx1010", "gfx1011", "gfx1012", "gfx1013"]
        );
        assert_eq!(names("gfx10-3-generic").len(), 7);
        assert_eq!(
            names("gfx11-generic"),
            [
                "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152",
                "gfx1153"
            ]
        );
        assert_eq!(names("gfx12-generic"), ["gfx1200", "gfx1201"]);
        assert_eq!(processor("gfx908").unwrap().generic_processor(), None);
        assert!(!processor("gfx908").unwrap().covered_by_generic());
        assert!(processor("gfx1151").unwrap().covered_by_generic());
        assert_eq!(
            processor("gfx11-generic")
                .unwrap()
                .min_code_object_version(),
            6
        );
        assert_eq!(processor("gfx1100").unwrap().min_code_object_version(), 4);
        assert_eq!(processor("gfx942").unwrap().default_wavefront_size(), 64);
        assert_eq!(processor("gfx1201").unwrap().default_wavefront_size(), 32);
        assert_eq!(processor("gfx90a").unwrap().generic_processor(), None);
    }

    #[test]
    fn triple_arch_spellings() {
        // clang/test/Driver/amdgpu-triple.c (LLVM 23): "-triple" "amdgpu9.42--" etc.
        let t = |n: &str| processor(n).unwrap().triple_arch();
        assert_eq!(t("gfx942"), "amdgpu9.42");
        assert_eq!(t("gfx90a"), "amdgpu9.0a");
        assert_eq!(t("gfx600"), "amdgpu6.00");
        assert_eq!(t("gfx1100"), "amdgpu11.00");
        assert_eq!(t("gfx1251"), "amdgpu12.51");
        assert_eq!(t("gfx9-generic"), "amdgpu9");
        assert_eq!(t("gfx9-4-generic"), "amdgpu9.4");
        assert_eq!(t("gfx10-3-generic"), "amdgpu10.3");
        assert_eq!(t("gfx12-generic"), "amdgpu12");
        let mut seen = HashSet::new();
        for p in processors() {
            assert!(seen.insert(p.triple_arch()), "{}", p.name);
        }
    }
}
