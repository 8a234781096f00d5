//! Occupancy: how many waves of a kernel fit on one SIMD, and what limits it.
//!
//! The model follows LLVM's own computation, so the numbers agree with the
//! `; Occupancy:` comment `llc` prints for a kernel:
//!
//! * `llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp` (`IsaInfo`):
//!   `getVGPRAllocGranule` (8 on gfx90a+; 24/12 with 1.5x VGPRs; 16/8 on
//!   gfx10.3+; otherwise 8/4 for wave32/wave64), `getTotalNumVGPRs` (512 on
//!   gfx90a+ where AGPRs share the file; 256 before gfx10; 1024/512 for
//!   wave32/wave64 on gfx10+, 1536/768 with 1.5x VGPRs),
//!   `getNumWavesPerEUWithNumVGPRs`, `getMaxWavesPerEU` (8 on gfx90a+, 10
//!   before gfx10, 20 on gfx10.1, 16 on gfx10.3+), `getOccupancyWithNumSGPRs`
//!   (SGPRs limit occupancy only before gfx10), `getMaxWorkGroupsPerCU`
//!   (barrier limit 16, 32 in WGP mode), `getEUsPerCU` (4: a CU, or a WGP
//!   in the default WGP mode on gfx10+).
//! * `llvm/lib/Target/AMDGPU/AMDGPUSubtarget.cpp`:
//!   `getOccupancyWithWorkGroupSizes` (LDS: workgroups per CU =
//!   LDS per CU / LDS per workgroup; waves per SIMD = ⌈waves per CU / 4⌉).
//! * `llvm/docs/AMDGPUUsage.rst` *Processors* table: LDS is 64 KiB per CU
//!   (160 KiB on gfx950), 128 KiB per WGP on gfx10–gfx12 (WGP mode), 320 KiB
//!   on gfx1250.
//!
//! The unit tests pin values printed by `llc-22` (LLVM 22.1.8) for kernels
//! with known register, LDS and workgroup sizes.

use std::fmt;

use gcn_embed::{Generation, TargetId};

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
}

/// LLVM `IsaVersion::Major` of a generation.
pub fn major(generation: Generation) -> u32 {
    match generation {
        Generation::Gfx6 => 6,
        Generation::Gfx7 => 7,
        Generation::Gfx8 => 8,
        Generation::Gfx9 => 9,
        Generation::Gfx10_1 | Generation::Gfx10_3 => 10,
        Generation::Gfx11 => 11,
        Generation::Gfx12 | Generation::Gfx12_5 => 12,
    }
}

/// What bounds the occupancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limiter {
    /// VGPRs (and AGPRs, which share the file on gfx90a+).
    Vgpr,
    /// SGPRs (only before gfx10).
    Sgpr,
    /// LDS per workgroup.
    Lds,
    /// Workgroup geometry: waves per workgroup and barriers per CU.
    Workgroup,
    /// Nothing: the hardware maximum of waves per SIMD.
    Max,
}

impl fmt::Display for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limiter::Vgpr => "VGPRs",
            Limiter::Sgpr => "SGPRs",
            Limiter::Lds => "LDS",
            Limiter::Workgroup => "workgroup size",
            Limiter::Max => "the hardware maximum",
        })
    }
}

/// Occupancy of one kernel on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    /// Waves per SIMD (LLVM: waves per EU).
    pub waves_per_simd: u32,
    /// The tightest limit.
    pub limited_by: Limiter,
    /// VGPRs one wave is allocated (AGPRs included where they share the
    /// file), rounded up to the allocation granule.
    pub vgpr_granule_alloc: u32,
    /// The allocation granule used.
    pub vgpr_granule: u32,
    /// Waves per SIMD allowed by VGPRs alone.
    pub by_vgpr: u32,
    /// Waves per SIMD allowed by SGPRs alone.
    pub by_sgpr: u32,
    /// Waves per SIMD allowed by LDS and workgroup geometry alone.
    pub by_lds: u32,
    /// The hardware maximum.
    pub max_waves: u32,
}

impl fmt::Display for Occupancy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} waves per SIMD", self.waves_per_simd)?;
        match self.limited_by {
            Limiter::Vgpr => write!(
                f,
                " (limited by VGPRs: {} allocated)",
                self.vgpr_granule_alloc
            ),
            Limiter::Max => write!(f, " (the hardware maximum)"),
            l => write!(f, " (limited by {l})"),
        }
    }
}

fn align_to(x: u32, a: u32) -> u32 {
    x.div_ceil(a) * a
}

/// Occupancy of a kernel using `vgprs` arch VGPRs, `agprs` AGPRs, `sgprs`
/// SGPRs (including VCC / FLAT_SCRATCH / XNACK_MASK, like metadata
/// `.sgpr_count`), `lds_bytes` of LDS per workgroup, with `wave_size` lanes
/// and `workgroup_size` work-items per workgroup (`None`: unknown, assumed a
/// single wave, which gives LLVM's upper bound). gfx10+ is assumed to run in
/// WGP mode (the default, `.amdhsa_workgroup_processor_mode 1`).
pub fn occupancy(
    target: &TargetId,
    vgprs: u32,
    agprs: u32,
    sgprs: u32,
    lds_bytes: u32,
    wave_size: u32,
    workgroup_size: Option<u32>,
) -> Occupancy {
    let isa = Isa::of(target);
    let wave_size = if isa.generation < Generation::Gfx10_1 || wave_size == 0 {
        64
    } else {
        wave_size
    };
    let max_waves = isa.max_waves_per_simd();

    // VGPRs: getNumWavesPerEUWithNumVGPRs.
    let granule = isa.vgpr_alloc_granule(wave_size);
    let total = isa.total_vgprs(wave_size);
    let combined = isa.combined_vgprs(vgprs, agprs);
    let alloc = align_to(combined.max(1), granule);
    let by_vgpr = if combined < granule {
        max_waves
    } else {
        (total / alloc).clamp(1, max_waves)
    };

    // SGPRs: getOccupancyWithNumSGPRs.
    let by_sgpr = match isa.generation {
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
    .min(max_waves);

    // LDS and workgroup geometry: getOccupancyWithWorkGroupSizes.
    const EUS_PER_CU: u32 = 4;
    let wg = workgroup_size.unwrap_or(wave_size).max(1);
    let waves_per_wg = wg.div_ceil(wave_size);
    let max_waves_per_cu = max_waves * EUS_PER_CU;
    let max_barriers = if isa.generation >= Generation::Gfx10_1 {
        32
    } else {
        16
    };
    let wgs_by_geometry = if waves_per_wg == 1 {
        max_waves_per_cu
    } else {
        (max_waves_per_cu / waves_per_wg).min(max_barriers)
    };
    let wgs_by_lds = isa.lds_per_cu / lds_bytes.max(1);
    let (by_lds, lds_binds) = if wgs_by_lds == 0 {
        (1, true)
    } else {
        let wgs = wgs_by_geometry.min(wgs_by_lds);
        let waves = (wgs * waves_per_wg)
            .div_ceil(EUS_PER_CU)
            .clamp(1, max_waves);
        (waves, wgs_by_lds < wgs_by_geometry)
    };

    let waves = by_vgpr.min(by_sgpr).min(by_lds).min(max_waves);
    let limited_by = if waves >= max_waves {
        Limiter::Max
    } else if by_vgpr == waves {
        Limiter::Vgpr
    } else if by_lds == waves {
        if lds_binds {
            Limiter::Lds
        } else {
            Limiter::Workgroup
        }
    } else {
        Limiter::Sgpr
    };
    Occupancy {
        waves_per_simd: waves,
        limited_by,
        vgpr_granule_alloc: alloc,
        vgpr_granule: granule,
        by_vgpr,
        by_sgpr,
        by_lds,
        max_waves,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str) -> TargetId {
        TargetId::parse(name).expect("known target")
    }

    /// `(cpu, vgprs, agprs, sgprs, lds, wave, workgroup, llc-22 Occupancy)`.
    type LlcCase = (&'static str, u32, u32, u32, u32, u32, u32, u32);

    /// Cases of [`LlcCase`].
    ///
    /// Expected values printed by `llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=CPU`
    /// (LLVM 22.1.8) for a kernel whose inline asm clobbers `v(VGPRS-1)` /
    /// `a(AGPRS-1)`, which stores to an LDS array of LDS bytes, with
    /// `"amdgpu-flat-work-group-size"="WG,WG"` (and `+wavefrontsize32` /
    /// `+wavefrontsize64`): the `; Occupancy: N` line of the kernel info.
    /// SGPRS is the `; TotalNumSgprs:` llc printed (an `s` clobber plus extras).
    const LLC_22: &[LlcCase] = &[
        ("gfx942", 112, 0, 22, 50688, 64, 256, 1),
        ("gfx942", 40, 16, 6, 0, 64, 256, 8),
        ("gfx942", 8, 0, 6, 20000, 64, 64, 1),
        ("gfx950", 8, 0, 6, 20000, 64, 64, 2),
        ("gfx1100", 136, 0, 8, 0, 32, 256, 10),
        ("gfx1100", 97, 0, 8, 0, 64, 64, 7),
        ("gfx1100", 8, 0, 8, 20000, 64, 64, 2),
        ("gfx1201", 142, 0, 8, 26112, 32, 256, 10),
        ("gfx1200", 97, 0, 8, 0, 32, 32, 12),
        ("gfx12-generic", 97, 0, 8, 0, 32, 32, 12),
        ("gfx11-generic", 97, 0, 8, 0, 32, 32, 9),
        ("gfx1030", 97, 0, 8, 0, 32, 32, 9),
        ("gfx1030", 97, 0, 8, 0, 64, 64, 4),
        ("gfx10-3-generic", 97, 0, 8, 0, 32, 32, 9),
        ("gfx1010", 20, 0, 8, 0, 32, 32, 20),
        ("gfx1250", 71, 0, 8, 0, 32, 32, 12),
        ("gfx1250", 200, 0, 8, 0, 32, 32, 4),
        ("gfx908", 4, 0, 88, 0, 64, 64, 9),
        ("gfx908", 8, 128, 4, 0, 64, 64, 2),
        ("gfx942", 136, 0, 6, 0, 64, 256, 3),
        ("gfx900", 4, 0, 99, 0, 64, 64, 8),
    ];

    #[test]
    fn agrees_with_llc_22() {
        for &(cpu, v, a, s, lds, wave, wg, expected) in LLC_22 {
            let o = occupancy(&t(cpu), v, a, s, lds, wave, Some(wg));
            assert_eq!(
                o.waves_per_simd, expected,
                "{cpu} v{v} a{a} s{s} lds {lds} wave{wave} wg {wg}: {o:?}"
            );
        }
    }

    #[test]
    fn reports_the_limiter_and_allocation() {
        // gfx942: 136 VGPRs round to 136 (granule 8): 512 / 136 = 3 waves.
        let o = occupancy(&t("gfx942"), 136, 0, 22, 0, 64, Some(256));
        assert_eq!((o.waves_per_simd, o.limited_by), (3, Limiter::Vgpr));
        assert_eq!(o.vgpr_granule_alloc, 136);
        assert_eq!(
            o.to_string(),
            "3 waves per SIMD (limited by VGPRs: 136 allocated)"
        );
        // 50688 bytes of LDS: one 256-lane workgroup per CU → 1 wave per SIMD.
        let o = occupancy(&t("gfx942"), 112, 0, 22, 50688, 64, Some(256));
        assert_eq!((o.waves_per_simd, o.limited_by), (1, Limiter::Lds));
        // Small kernel: the hardware maximum (8 on gfx942, 10 on gfx908).
        let o = occupancy(&t("gfx942"), 6, 0, 14, 0, 64, Some(64));
        assert_eq!((o.waves_per_simd, o.limited_by), (8, Limiter::Max));
        let o = occupancy(&t("gfx908"), 4, 0, 11, 0, 64, None);
        assert_eq!((o.waves_per_simd, o.limited_by), (10, Limiter::Max));
        // gfx908: 90 SGPRs (with extras) → 8 waves (getOccupancyWithNumSGPRs).
        let o = occupancy(&t("gfx908"), 4, 0, 90, 0, 64, None);
        assert_eq!((o.waves_per_simd, o.limited_by), (8, Limiter::Sgpr));
        // gfx908 AGPRs are a separate file: max(vgpr, agpr) counts.
        let o = occupancy(&t("gfx908"), 8, 128, 11, 0, 64, None);
        assert_eq!((o.waves_per_simd, o.vgpr_granule_alloc), (2, 128));
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
