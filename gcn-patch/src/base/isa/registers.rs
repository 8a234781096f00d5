//! Register-file facts of one target: VGPR allocation granule and file size,
//! AGPR layout, extra SGPRs, addressable SGPRs, LDS per CU and the hardware
//! wave limit — the inputs of the occupancy computation in
//! [`check::occupancy`](mod@crate::stage::check::occupancy) and of the register budget.
//!
//! Sources: `llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp` (`IsaInfo`:
//! `getVGPRAllocGranule`, `getTotalNumVGPRs`, `getMaxWavesPerEU`,
//! `getNumExtraSGPRs`, `getAddressableNumSGPRs`, `getOccupancyWithNumSGPRs`)
//! and the *Processors* table of `llvm/docs/AMDGPUUsage.rst` (LDS sizes).

use gcn_embed::{Generation, TargetId};

use super::major;

/// Register-file facts of one target, derived from its processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Isa {
    /// Architecture generation.
    pub generation: Generation,
    /// AGPRs live in the VGPR file after `.amdhsa_accum_offset`
    /// (gfx90a, gfx942, gfx950, gfx9-4-generic).
    pub unified_agprs: bool,
    /// A separate 256-entry AGPR file (gfx908).
    pub separate_agprs: bool,
    /// 50% more VGPRs per SIMD (gfx1100, gfx1101, gfx1151, gfx1200, gfx1201,
    /// gfx12-generic).
    pub vgprs_1_5x: bool,
    /// Flat scratch is architected (gfx942, gfx950, gfx9-4-generic): LLVM
    /// always counts the 6 extra SGPRs.
    pub architected_flat_scratch: bool,
    /// The processor supports XNACK replay (`xnack` target feature).
    pub xnack_supported: bool,
    /// LDS bytes shared by the waves of one CU (WGP on gfx10+).
    pub lds_per_cu: u32,
}

impl Isa {
    /// The facts for a target.
    pub fn of(target: &TargetId) -> Isa {
        let p = target.processor;
        let name = p.name;
        let minor_4_plus =
            name.starts_with("gfx94") || name.starts_with("gfx95") || name.starts_with("gfx9-4");
        let vgprs_1_5x = matches!(
            name,
            "gfx1100" | "gfx1101" | "gfx1151" | "gfx1200" | "gfx1201" | "gfx12-generic"
        );
        let lds_per_cu = match p.generation {
            Generation::Gfx12_5 => 320 * 1024,
            g if g >= Generation::Gfx10_1 => 128 * 1024,
            _ if name == "gfx950" => 160 * 1024,
            _ => 64 * 1024,
        };
        Isa {
            generation: p.generation,
            unified_agprs: p.accum_offset,
            separate_agprs: name == "gfx908",
            vgprs_1_5x,
            architected_flat_scratch: p.generation == Generation::Gfx9 && minor_4_plus,
            xnack_supported: p.xnack,
            lds_per_cu,
        }
    }

    /// Major ISA version (6 … 12), as LLVM's `IsaVersion::Major`.
    pub fn major(&self) -> u32 {
        major(self.generation)
    }

    /// Waves per SIMD the hardware supports at most (`getMaxWavesPerEU`).
    pub fn max_waves_per_simd(&self) -> u32 {
        if self.unified_agprs {
            8
        } else {
            match self.generation {
                Generation::Gfx6 | Generation::Gfx7 | Generation::Gfx8 | Generation::Gfx9 => 10,
                Generation::Gfx10_1 => 20,
                _ => 16,
            }
        }
    }

    /// VGPR allocation granule (`getVGPRAllocGranule`).
    pub fn vgpr_alloc_granule(&self, wave_size: u32) -> u32 {
        let wave32 = wave_size == 32 && self.generation >= Generation::Gfx10_1;
        if self.unified_agprs {
            8
        } else if self.generation == Generation::Gfx12_5 {
            16
        } else if self.vgprs_1_5x {
            if wave32 {
                24
            } else {
                12
            }
        } else if self.generation >= Generation::Gfx10_3 {
            if wave32 {
                16
            } else {
                8
            }
        } else if wave32 {
            8
        } else {
            4
        }
    }

    /// VGPRs per SIMD lane group (`getTotalNumVGPRs`).
    pub fn total_vgprs(&self, wave_size: u32) -> u32 {
        let wave32 = wave_size == 32;
        if self.unified_agprs {
            512
        } else if self.generation < Generation::Gfx10_1 {
            256
        } else if self.generation == Generation::Gfx12_5 {
            1024
        } else if self.vgprs_1_5x {
            if wave32 {
                1536
            } else {
                768
            }
        } else if wave32 {
            1024
        } else {
            512
        }
    }

    /// Registers of the VGPR file one wave occupies for `vgprs` arch VGPRs
    /// and `agprs` AGPRs, before rounding to the granule (LLVM's
    /// `getTotalNumVGPRs(hasGFX90AInsts, NumAGPR, NumVGPR)`).
    pub fn combined_vgprs(&self, vgprs: u32, agprs: u32) -> u32 {
        if self.unified_agprs && agprs > 0 {
            align_to(vgprs, 4) + agprs
        } else {
            vgprs.max(agprs)
        }
    }

    /// Extra SGPRs the hardware allocates after the numbered ones
    /// (`getNumExtraSGPRs`): VCC 2; before gfx10 XNACK_MASK makes it 4 and
    /// FLAT_SCRATCH (or architected flat scratch) 6 on gfx8/gfx9; 4 for
    /// FLAT_SCRATCH on gfx6/7.
    pub fn extra_sgprs(&self, vcc: bool, flat_scratch: bool, xnack: bool) -> u32 {
        let mut extra = if vcc { 2 } else { 0 };
        match self.generation {
            g if g >= Generation::Gfx10_1 => {}
            Generation::Gfx6 | Generation::Gfx7 => {
                if flat_scratch {
                    extra = 4;
                }
            }
            _ => {
                if xnack {
                    extra = 4;
                }
                if flat_scratch || self.architected_flat_scratch {
                    extra = 6;
                }
            }
        }
        extra
    }

    /// Numbered SGPRs a kernel may address (`getAddressableNumSGPRs`), not
    /// counting the extra ones: 102 on gfx8/9, 104 on gfx6/7, 106 on gfx10+.
    pub fn addressable_sgprs(&self) -> u32 {
        match self.generation {
            Generation::Gfx6 | Generation::Gfx7 => 104,
            Generation::Gfx8 | Generation::Gfx9 => 102,
            _ => 106,
        }
    }

    /// Waves per SIMD the SGPRs alone allow for `sgprs` SGPRs, extra ones
    /// included (`getOccupancyWithNumSGPRs`; SGPRs do not limit occupancy
    /// from gfx10 on).
    pub fn waves_by_sgprs(&self, sgprs: u32) -> u32 {
        let max_waves = self.max_waves_per_simd();
        match self.generation {
            g if g >= Generation::Gfx10_1 => max_waves,
            Generation::Gfx8 | Generation::Gfx9 => match sgprs {
                0..=80 => 10,
                81..=88 => 9,
                89..=100 => 8,
                _ => 7,
            },
            _ => match sgprs {
                0..=48 => 10,
                49..=56 => 9,
                57..=64 => 8,
                65..=72 => 7,
                73..=80 => 6,
                _ => 5,
            },
        }
        .min(max_waves)
    }

    /// Workgroup barriers one CU (WGP on gfx10+) holds at most
    /// (`getMaxWorkGroupsPerCU`): 16, 32 in WGP mode.
    pub fn max_barriers_per_cu(&self) -> u32 {
        if self.generation >= Generation::Gfx10_1 {
            32
        } else {
            16
        }
    }
}

/// SIMDs (LLVM: EUs) per CU, or per WGP in the default WGP mode on gfx10+
/// (`getEUsPerCU`).
pub const EUS_PER_CU: u32 = 4;

/// `x` rounded up to a multiple of `a`.
pub fn align_to(x: u32, a: u32) -> u32 {
    x.div_ceil(a) * a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str) -> TargetId {
        TargetId::parse(name).expect("known target")
    }

    #[test]
    fn unified_agprs_follow_accum_offset() {
        let isa = Isa::of(&t("gfx90a"));
        // AGPRs start at alignTo(num_vgpr, 4): 9 VGPRs + 32 AGPRs = 12 + 32.
        assert_eq!(isa.combined_vgprs(9, 32), 44);
        assert_eq!(isa.combined_vgprs(9, 0), 9);
    }

    #[test]
    fn extra_sgprs_match_the_corpus_metadata() {
        // .sgpr_count - .numbered_sgpr in tests/corpus: gfx942 +6 (architected
        // flat scratch), gfx90a/gfx908 +4 (xnack), gfx1100 +2 (vcc) or 0.
        assert_eq!(Isa::of(&t("gfx942")).extra_sgprs(false, false, true), 6);
        assert_eq!(Isa::of(&t("gfx90a")).extra_sgprs(true, false, true), 4);
        assert_eq!(Isa::of(&t("gfx908")).extra_sgprs(true, false, true), 4);
        assert_eq!(Isa::of(&t("gfx1100")).extra_sgprs(true, false, false), 2);
        assert_eq!(Isa::of(&t("gfx1201")).extra_sgprs(false, false, false), 0);
    }
}
