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

use crate::base::isa::{align_to, Isa, EUS_PER_CU};

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
    let by_sgpr = isa.waves_by_sgprs(sgprs);

    // LDS and workgroup geometry: getOccupancyWithWorkGroupSizes.
    let wg = workgroup_size.unwrap_or(wave_size).max(1);
    let waves_per_wg = wg.div_ceil(wave_size);
    let max_waves_per_cu = max_waves * EUS_PER_CU;
    let max_barriers = isa.max_barriers_per_cu();
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
}
