//! Which `.amdhsa_*` descriptor fields LLVM 22's assembler accepts on which
//! processor.
//!
//! Learned by assembling clang-22's HIP output for gfx908, gfx90a, gfx942,
//! gfx950, gfx9-4-generic, gfx1030, gfx1100, gfx11-generic and gfx1201 with
//! each field of the union of all corpus descriptors added; the reasons are
//! the assembler's own error messages.

use gcn_embed::{Generation, Processor};

/// Has architected flat scratch (gfx940+ in GFX9, and GFX11+): the
/// `.amdhsa_enable_private_segment` ABI without flat-scratch init SGPRs.
pub fn architected_flat_scratch(p: &Processor) -> bool {
    p.generation >= Generation::Gfx11
        || matches!(
            p.name,
            "gfx940" | "gfx941" | "gfx942" | "gfx950" | "gfx9-4-generic"
        )
}

/// `Err(reason)` if LLVM 22 rejects descriptor field `name` on `p`.
pub fn support(name: &str, p: &Processor) -> Result<(), &'static str> {
    let g = p.generation;
    let short = name.strip_prefix(".amdhsa_").unwrap_or(name);
    let ok = |cond: bool, why: &'static str| if cond { Ok(()) } else { Err(why) };
    match short {
        "accum_offset" | "tg_split" => ok(p.accum_offset, "directive requires gfx90a+"),
        // Kernarg preloading: gfx90a+ in GFX9 and GFX12.5 (llvm-mc-22 takes
        // `.amdhsa_user_sgpr_kernarg_preload_length` for gfx1250 and gfx1251,
        // as aiter's gfx1250 kernels use it; not for gfx1200 or gfx1100).
        "user_sgpr_kernarg_preload_length" | "user_sgpr_kernarg_preload_offset" => ok(
            p.accum_offset || g == Generation::Gfx12_5,
            "directive requires gfx90a+",
        ),
        "enable_private_segment" => ok(
            architected_flat_scratch(p),
            "directive is not supported without architected flat scratch",
        ),
        "reserve_flat_scratch"
        | "system_sgpr_private_segment_wavefront_offset"
        | "user_sgpr_flat_scratch_init"
        | "user_sgpr_private_segment_buffer" => ok(
            !architected_flat_scratch(p),
            "directive is not supported with architected flat scratch",
        ),
        "forward_progress" | "memory_ordered" | "wavefront_size32" => {
            ok(g >= Generation::Gfx10_1, "directive requires gfx10+")
        }
        "workgroup_processor_mode" => ok(g >= Generation::Gfx10_1, "directive unsupported on gfx9"),
        "inst_pref_size" => ok(g >= Generation::Gfx11, "directive requires gfx11+"),
        "round_robin_scheduling" => ok(g >= Generation::Gfx12, "directive requires gfx12+"),
        "shared_vgpr_count" => ok(
            (Generation::Gfx10_1..=Generation::Gfx11).contains(&g),
            "directive requires gfx10 or gfx11",
        ),
        "dx10_clamp" | "ieee_mode" => ok(g < Generation::Gfx12, "directive unsupported on gfx12+"),
        "named_barrier_count" => ok(g >= Generation::Gfx12_5, "directive requires gfx1250+"),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str) -> &'static Processor {
        gcn_embed::processor(name).unwrap()
    }

    #[test]
    fn matches_llvm22_assembler() {
        assert!(support(".amdhsa_accum_offset", p("gfx942")).is_ok());
        assert!(support(".amdhsa_accum_offset", p("gfx908")).is_err());
        assert!(support(".amdhsa_accum_offset", p("gfx1100")).is_err());
        assert!(support(".amdhsa_enable_private_segment", p("gfx90a")).is_err());
        assert!(support(".amdhsa_enable_private_segment", p("gfx9-4-generic")).is_ok());
        assert!(support(".amdhsa_reserve_flat_scratch", p("gfx942")).is_err());
        assert!(support(".amdhsa_reserve_flat_scratch", p("gfx1030")).is_ok());
        assert!(support(".amdhsa_inst_pref_size", p("gfx1030")).is_err());
        assert!(support(".amdhsa_inst_pref_size", p("gfx11-generic")).is_ok());
        assert!(support(".amdhsa_shared_vgpr_count", p("gfx1201")).is_err());
        assert!(support(".amdhsa_ieee_mode", p("gfx1201")).is_err());
        assert!(support(".amdhsa_round_robin_scheduling", p("gfx1100")).is_err());
        assert!(support(".amdhsa_next_free_vgpr", p("gfx1100")).is_ok());
    }
}
