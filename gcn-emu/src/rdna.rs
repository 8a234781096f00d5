//! RDNA3 (gfx11) code on the executor: the one table of RDNA names the
//! executor runs under gfx9 semantics ([`ALIASES`]), and the targets it runs.
//!
//! RDNA renamed most memory and several ALU instructions without changing
//! what they compute (`global_load_b32` is gfx9's `global_load_dword`,
//! `v_add_co_ci_u32` its `v_addc_co_u32`, `s_and_not1_b32` its
//! `s_andn2_b32`). A dispatch of an RDNA kernel runs a copy of its
//! [`Program`] whose mnemonics went through [`ALIASES`] ([`executable`]);
//! the program the caller decoded, which observers index, keeps LLVM's
//! names. What differs beyond the name is in the executor itself, keyed on
//! the wave: wave32 lane masks ([`crate::exec::Wave::wave_size`]), the
//! gfx11 SGPR numbering ([`crate::decode::Numbering`]), DPP8 and
//! `row_xmask`, `v_permlane16_b32`/`v_permlanex16_b32`, `v_cmpx` writing
//! EXEC alone, and RDNA's buffer range check.

use crate::decode::Program;

/// The RDNA3 targets the emulator runs (wave32 and wave64).
pub const TARGETS: &[&str] = &[
    "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
];

/// The RDNA4 (gfx12) targets the emulator runs: RDNA3's core with gfx12's
/// instructions (`crate::exec`'s `salu_gfx12`, the gfx12 [`ALIASES`]) and
/// workgroup IDs in TTMP registers ([`GFX12_TTMP_WORKGROUP_ID`]). gfx1250
/// (wave32 only) runs on the same rules with its own instructions where
/// aiter's kernels need them (`crate::exec`'s `gfx1250`); what it changes
/// beyond those (1024 VGPRs through `s_set_vgpr_msb`, tensor DMA, async
/// LDS loads) is refused by name.
pub const TARGETS_GFX12: &[&str] = &["gfx1200", "gfx1201", "gfx1250"];

/// gfx12's architected SGPRs: the workgroup ID X is in `ttmp9`, Y in
/// `ttmp7[15:0]`, Z in `ttmp7[31:16]` (LLVM's `FeatureArchitectedSGPRs`,
/// on for gfx12: AMDGPULegalizerInfo's `WorkGroupIDX = TTMP9`,
/// `WorkGroupIDY = TTMP7 & 0xffff`, `WorkGroupIDZ = TTMP7 & 0xffff0000`,
/// llvm-project PR 76140). Hardware SGPR indices of ttmp9 and ttmp7.
pub const GFX12_TTMP_WORKGROUP_ID: (usize, usize) = (108 + 9, 108 + 7);

/// gfx12's architected wave ID: the wave's index in its workgroup is
/// `ttmp8[29:25]` (LLVM lowers `llvm.amdgcn.wave.id` to
/// `s_bfe_u32 sN, ttmp8, 0x50019`, as Triton's gfx1201 softmax reads it;
/// llvm-project PR 76140). Hardware SGPR index of ttmp8.
pub const GFX12_TTMP_WAVE_ID: usize = 108 + 8;

/// Whether `processor` is one of [`TARGETS`].
pub fn is_rdna3(processor: &str) -> bool {
    TARGETS.contains(&processor)
}

/// Whether `processor` is one of [`TARGETS_GFX12`].
pub fn is_gfx12(processor: &str) -> bool {
    TARGETS_GFX12.contains(&processor)
}

/// Whether `processor` is an RDNA target the emulator runs ([`TARGETS`]
/// or [`TARGETS_GFX12`]).
pub fn is_rdna(processor: &str) -> bool {
    is_rdna3(processor) || is_gfx12(processor)
}

/// RDNA3's spelling → the executor's name of the same operation (gfx9's,
/// or an [`crate::exec`] `UNLISTED` name). Each left side is an RDNA3 table
/// name ([`crate::isa::table_for`]`("gfx1100")`); each right side is one
/// the executor routes ([`crate::exec`]'s table or `UNLISTED`). Tested.
/// Not here: names both generations share (`v_mov_b32`, `ds_add_u32`,
/// `s_and_saveexec_b32`, ...), which run as they are.
pub const ALIASES: &[(&str, &str)] = &[
    // Scheduling hints, clauses and cache invalidations: nothing to do in
    // an emulator whose memory instructions complete in order.
    ("s_delay_alu", "s_nop"),
    ("s_clause", "s_nop"),
    ("s_waitcnt_depctr", "s_nop"),
    ("buffer_gl0_inv", "buffer_wbinvl1"),
    ("buffer_gl1_inv", "buffer_wbinvl1"),
    // Scalar ALU.
    // gfx12's renamed SALU and VALU carries (RDNA4 table names).
    ("s_add_co_i32", "s_add_i32"),
    ("s_addk_co_i32", "s_addk_i32"),
    ("s_sub_co_i32", "s_sub_i32"),
    ("s_add_co_u32", "s_add_u32"),
    ("s_sub_co_u32", "s_sub_u32"),
    ("s_add_co_ci_u32", "s_addc_u32"),
    ("s_sub_co_ci_u32", "s_subb_u32"),
    ("v_mad_co_u64_u32", "v_mad_u64_u32"),
    ("v_mad_co_i64_i32", "v_mad_i64_i32"),
    ("s_and_not1_b32", "s_andn2_b32"),
    ("s_and_not1_b64", "s_andn2_b64"),
    ("s_or_not1_b32", "s_orn2_b32"),
    ("s_or_not1_b64", "s_orn2_b64"),
    ("s_ctz_i32_b32", "s_ff1_i32_b32"),
    ("s_ctz_i32_b64", "s_ff1_i32_b64"),
    ("s_clz_i32_u32", "s_flbit_i32_b32"),
    ("s_clz_i32_u64", "s_flbit_i32_b64"),
    ("s_cls_i32", "s_flbit_i32"),
    ("s_cls_i32_i64", "s_flbit_i32_i64"),
    ("s_and_not1_saveexec_b32", "s_andn2_saveexec_b32"),
    ("s_and_not0_saveexec_b32", "s_andn1_saveexec_b32"),
    ("s_or_not1_saveexec_b32", "s_orn2_saveexec_b32"),
    ("s_or_not0_saveexec_b32", "s_orn1_saveexec_b32"),
    ("s_and_not1_saveexec_b64", "s_andn2_saveexec_b64"),
    ("s_and_not0_saveexec_b64", "s_andn1_saveexec_b64"),
    ("s_or_not1_saveexec_b64", "s_orn2_saveexec_b64"),
    ("s_or_not0_saveexec_b64", "s_orn1_saveexec_b64"),
    // Scalar memory.
    ("s_load_b32", "s_load_dword"),
    ("s_load_b64", "s_load_dwordx2"),
    ("s_load_b128", "s_load_dwordx4"),
    ("s_load_b256", "s_load_dwordx8"),
    ("s_load_b512", "s_load_dwordx16"),
    ("s_buffer_load_b32", "s_buffer_load_dword"),
    ("s_buffer_load_b64", "s_buffer_load_dwordx2"),
    ("s_buffer_load_b128", "s_buffer_load_dwordx4"),
    ("s_buffer_load_b256", "s_buffer_load_dwordx8"),
    ("s_buffer_load_b512", "s_buffer_load_dwordx16"),
    // Vector ALU.
    ("v_add_nc_u32", "v_add_u32"),
    ("v_add_nc_i32", "v_add_i32"),
    ("v_sub_nc_i32", "v_sub_i32"),
    ("v_sub_nc_u32", "v_sub_u32"),
    ("v_subrev_nc_u32", "v_subrev_u32"),
    ("v_add_nc_u16", "v_add_u16"),
    ("v_sub_nc_u16", "v_sub_u16"),
    ("v_add_co_ci_u32", "v_addc_co_u32"),
    ("v_sub_co_ci_u32", "v_subb_co_u32"),
    ("v_subrev_co_ci_u32", "v_subbrev_co_u32"),
    // LDS.
    ("ds_load_b32", "ds_read_b32"),
    ("ds_load_b64", "ds_read_b64"),
    ("ds_load_b96", "ds_read_b96"),
    ("ds_load_b128", "ds_read_b128"),
    ("ds_load_u8", "ds_read_u8"),
    ("ds_load_i8", "ds_read_i8"),
    ("ds_load_u16", "ds_read_u16"),
    ("ds_load_i16", "ds_read_i16"),
    ("ds_load_u8_d16", "ds_read_u8_d16"),
    ("ds_load_u8_d16_hi", "ds_read_u8_d16_hi"),
    ("ds_load_i8_d16", "ds_read_i8_d16"),
    ("ds_load_i8_d16_hi", "ds_read_i8_d16_hi"),
    ("ds_load_u16_d16", "ds_read_u16_d16"),
    ("ds_load_u16_d16_hi", "ds_read_u16_d16_hi"),
    ("ds_load_2addr_b32", "ds_read2_b32"),
    ("ds_load_2addr_b64", "ds_read2_b64"),
    ("ds_load_2addr_stride64_b32", "ds_read2st64_b32"),
    ("ds_load_2addr_stride64_b64", "ds_read2st64_b64"),
    ("ds_store_b8", "ds_write_b8"),
    ("ds_store_b16", "ds_write_b16"),
    ("ds_store_b32", "ds_write_b32"),
    ("ds_store_b64", "ds_write_b64"),
    ("ds_store_b96", "ds_write_b96"),
    ("ds_store_b128", "ds_write_b128"),
    ("ds_store_b8_d16_hi", "ds_write_b8_d16_hi"),
    ("ds_store_b16_d16_hi", "ds_write_b16_d16_hi"),
    ("ds_store_2addr_b32", "ds_write2_b32"),
    ("ds_store_2addr_b64", "ds_write2_b64"),
    ("ds_store_2addr_stride64_b32", "ds_write2st64_b32"),
    ("ds_store_2addr_stride64_b64", "ds_write2st64_b64"),
    ("ds_storexchg_rtn_b32", "ds_wrxchg_rtn_b32"),
    ("ds_storexchg_rtn_b64", "ds_wrxchg_rtn_b64"),
    // Global memory; FLAT and SCRATCH below follow the same renaming.
    ("global_load_b32", "global_load_dword"),
    ("global_load_b64", "global_load_dwordx2"),
    ("global_load_b96", "global_load_dwordx3"),
    ("global_load_b128", "global_load_dwordx4"),
    ("global_load_u8", "global_load_ubyte"),
    ("global_load_i8", "global_load_sbyte"),
    ("global_load_u16", "global_load_ushort"),
    ("global_load_i16", "global_load_sshort"),
    ("global_load_d16_b16", "global_load_short_d16"),
    ("global_load_d16_hi_b16", "global_load_short_d16_hi"),
    ("global_load_d16_u8", "global_load_ubyte_d16"),
    ("global_load_d16_hi_u8", "global_load_ubyte_d16_hi"),
    ("global_load_d16_i8", "global_load_sbyte_d16"),
    ("global_load_d16_hi_i8", "global_load_sbyte_d16_hi"),
    ("global_store_b8", "global_store_byte"),
    ("global_store_b16", "global_store_short"),
    ("global_store_b32", "global_store_dword"),
    ("global_store_b64", "global_store_dwordx2"),
    ("global_store_b96", "global_store_dwordx3"),
    ("global_store_b128", "global_store_dwordx4"),
    ("global_store_d16_hi_b8", "global_store_byte_d16_hi"),
    ("global_store_d16_hi_b16", "global_store_short_d16_hi"),
    ("global_atomic_add_u32", "global_atomic_add"),
    ("global_atomic_sub_u32", "global_atomic_sub"),
    ("global_atomic_min_i32", "global_atomic_smin"),
    ("global_atomic_max_i32", "global_atomic_smax"),
    ("global_atomic_min_u32", "global_atomic_umin"),
    ("global_atomic_max_u32", "global_atomic_umax"),
    ("global_atomic_and_b32", "global_atomic_and"),
    ("global_atomic_or_b32", "global_atomic_or"),
    ("global_atomic_xor_b32", "global_atomic_xor"),
    ("global_atomic_inc_u32", "global_atomic_inc"),
    ("global_atomic_dec_u32", "global_atomic_dec"),
    ("global_atomic_swap_b32", "global_atomic_swap"),
    ("global_atomic_cmpswap_b32", "global_atomic_cmpswap"),
    ("global_atomic_add_u64", "global_atomic_add_x2"),
    ("global_atomic_sub_u64", "global_atomic_sub_x2"),
    ("global_atomic_min_i64", "global_atomic_smin_x2"),
    ("global_atomic_max_i64", "global_atomic_smax_x2"),
    ("global_atomic_min_u64", "global_atomic_umin_x2"),
    ("global_atomic_max_u64", "global_atomic_umax_x2"),
    ("global_atomic_and_b64", "global_atomic_and_x2"),
    ("global_atomic_or_b64", "global_atomic_or_x2"),
    ("global_atomic_xor_b64", "global_atomic_xor_x2"),
    ("global_atomic_swap_b64", "global_atomic_swap_x2"),
    ("global_atomic_inc_u64", "global_atomic_inc_x2"),
    ("global_atomic_dec_u64", "global_atomic_dec_x2"),
    ("global_atomic_cmpswap_b64", "global_atomic_cmpswap_x2"),
    // FLAT (the same operations through the flat aperture).
    ("flat_load_b32", "flat_load_dword"),
    ("flat_load_b64", "flat_load_dwordx2"),
    ("flat_load_b96", "flat_load_dwordx3"),
    ("flat_load_b128", "flat_load_dwordx4"),
    ("flat_load_u8", "flat_load_ubyte"),
    ("flat_load_i8", "flat_load_sbyte"),
    ("flat_load_u16", "flat_load_ushort"),
    ("flat_load_i16", "flat_load_sshort"),
    ("flat_load_d16_b16", "flat_load_short_d16"),
    ("flat_load_d16_hi_b16", "flat_load_short_d16_hi"),
    ("flat_load_d16_u8", "flat_load_ubyte_d16"),
    ("flat_load_d16_hi_u8", "flat_load_ubyte_d16_hi"),
    ("flat_load_d16_i8", "flat_load_sbyte_d16"),
    ("flat_load_d16_hi_i8", "flat_load_sbyte_d16_hi"),
    ("flat_store_b8", "flat_store_byte"),
    ("flat_store_b16", "flat_store_short"),
    ("flat_store_b32", "flat_store_dword"),
    ("flat_store_b64", "flat_store_dwordx2"),
    ("flat_store_b96", "flat_store_dwordx3"),
    ("flat_store_b128", "flat_store_dwordx4"),
    ("flat_store_d16_hi_b8", "flat_store_byte_d16_hi"),
    ("flat_store_d16_hi_b16", "flat_store_short_d16_hi"),
    ("flat_atomic_add_u32", "flat_atomic_add"),
    ("flat_atomic_sub_u32", "flat_atomic_sub"),
    ("flat_atomic_min_i32", "flat_atomic_smin"),
    ("flat_atomic_max_i32", "flat_atomic_smax"),
    ("flat_atomic_min_u32", "flat_atomic_umin"),
    ("flat_atomic_max_u32", "flat_atomic_umax"),
    ("flat_atomic_and_b32", "flat_atomic_and"),
    ("flat_atomic_or_b32", "flat_atomic_or"),
    ("flat_atomic_xor_b32", "flat_atomic_xor"),
    ("flat_atomic_inc_u32", "flat_atomic_inc"),
    ("flat_atomic_dec_u32", "flat_atomic_dec"),
    ("flat_atomic_swap_b32", "flat_atomic_swap"),
    ("flat_atomic_cmpswap_b32", "flat_atomic_cmpswap"),
    ("flat_atomic_add_u64", "flat_atomic_add_x2"),
    ("flat_atomic_sub_u64", "flat_atomic_sub_x2"),
    ("flat_atomic_min_i64", "flat_atomic_smin_x2"),
    ("flat_atomic_max_i64", "flat_atomic_smax_x2"),
    ("flat_atomic_min_u64", "flat_atomic_umin_x2"),
    ("flat_atomic_max_u64", "flat_atomic_umax_x2"),
    ("flat_atomic_and_b64", "flat_atomic_and_x2"),
    ("flat_atomic_or_b64", "flat_atomic_or_x2"),
    ("flat_atomic_xor_b64", "flat_atomic_xor_x2"),
    ("flat_atomic_swap_b64", "flat_atomic_swap_x2"),
    ("flat_atomic_inc_u64", "flat_atomic_inc_x2"),
    ("flat_atomic_dec_u64", "flat_atomic_dec_x2"),
    ("flat_atomic_cmpswap_b64", "flat_atomic_cmpswap_x2"),
    // SCRATCH (the lane's private memory).
    ("scratch_load_b32", "scratch_load_dword"),
    ("scratch_load_b64", "scratch_load_dwordx2"),
    ("scratch_load_b96", "scratch_load_dwordx3"),
    ("scratch_load_b128", "scratch_load_dwordx4"),
    ("scratch_load_u8", "scratch_load_ubyte"),
    ("scratch_load_i8", "scratch_load_sbyte"),
    ("scratch_load_u16", "scratch_load_ushort"),
    ("scratch_load_i16", "scratch_load_sshort"),
    ("scratch_load_d16_b16", "scratch_load_short_d16"),
    ("scratch_load_d16_hi_b16", "scratch_load_short_d16_hi"),
    ("scratch_load_d16_u8", "scratch_load_ubyte_d16"),
    ("scratch_load_d16_hi_u8", "scratch_load_ubyte_d16_hi"),
    ("scratch_load_d16_i8", "scratch_load_sbyte_d16"),
    ("scratch_load_d16_hi_i8", "scratch_load_sbyte_d16_hi"),
    ("scratch_store_b8", "scratch_store_byte"),
    ("scratch_store_b16", "scratch_store_short"),
    ("scratch_store_b32", "scratch_store_dword"),
    ("scratch_store_b64", "scratch_store_dwordx2"),
    ("scratch_store_b96", "scratch_store_dwordx3"),
    ("scratch_store_b128", "scratch_store_dwordx4"),
    ("scratch_store_d16_hi_b8", "scratch_store_byte_d16_hi"),
    ("scratch_store_d16_hi_b16", "scratch_store_short_d16_hi"),
    // Buffer memory (the V# range check is RDNA's: `crate::exec`).
    ("buffer_load_b32", "buffer_load_dword"),
    ("buffer_load_b64", "buffer_load_dwordx2"),
    ("buffer_load_b96", "buffer_load_dwordx3"),
    ("buffer_load_b128", "buffer_load_dwordx4"),
    ("buffer_load_u8", "buffer_load_ubyte"),
    ("buffer_load_i8", "buffer_load_sbyte"),
    ("buffer_load_u16", "buffer_load_ushort"),
    ("buffer_load_i16", "buffer_load_sshort"),
    ("buffer_store_b8", "buffer_store_byte"),
    ("buffer_store_b16", "buffer_store_short"),
    ("buffer_store_b32", "buffer_store_dword"),
    ("buffer_store_b64", "buffer_store_dwordx2"),
    ("buffer_store_b96", "buffer_store_dwordx3"),
    ("buffer_store_b128", "buffer_store_dwordx4"),
    // The d16 loads and stores: the RDNA3/RDNA4 guides' pseudo-code is
    // gfx9's (BUFFER_LOAD_D16_U8: "RETURN_DATA[15 : 0].u16 = 16'U({ 8'0U,
    // MEM[ADDR].u8 })", the other half preserved), as for GLOBAL above.
    ("buffer_load_d16_b16", "buffer_load_short_d16"),
    ("buffer_load_d16_hi_b16", "buffer_load_short_d16_hi"),
    ("buffer_load_d16_u8", "buffer_load_ubyte_d16"),
    ("buffer_load_d16_hi_u8", "buffer_load_ubyte_d16_hi"),
    ("buffer_load_d16_i8", "buffer_load_sbyte_d16"),
    ("buffer_load_d16_hi_i8", "buffer_load_sbyte_d16_hi"),
    ("buffer_store_d16_hi_b8", "buffer_store_byte_d16_hi"),
    ("buffer_store_d16_hi_b16", "buffer_store_short_d16_hi"),
    // Buffer atomics (gfx11 and gfx12 spell them alike; the V# range check
    // is RDNA's, as for loads and stores). The f32 min/max (gfx11
    // `_max_f32`, gfx12 `_max_num_f32`) keep their names: `crate::exec`.
    ("buffer_atomic_add_u32", "buffer_atomic_add"),
    ("buffer_atomic_sub_u32", "buffer_atomic_sub"),
    ("buffer_atomic_min_i32", "buffer_atomic_smin"),
    ("buffer_atomic_max_i32", "buffer_atomic_smax"),
    ("buffer_atomic_min_u32", "buffer_atomic_umin"),
    ("buffer_atomic_max_u32", "buffer_atomic_umax"),
    ("buffer_atomic_and_b32", "buffer_atomic_and"),
    ("buffer_atomic_or_b32", "buffer_atomic_or"),
    ("buffer_atomic_xor_b32", "buffer_atomic_xor"),
    ("buffer_atomic_inc_u32", "buffer_atomic_inc"),
    ("buffer_atomic_dec_u32", "buffer_atomic_dec"),
    ("buffer_atomic_swap_b32", "buffer_atomic_swap"),
    ("buffer_atomic_cmpswap_b32", "buffer_atomic_cmpswap"),
    ("buffer_atomic_add_u64", "buffer_atomic_add_x2"),
    ("buffer_atomic_sub_u64", "buffer_atomic_sub_x2"),
    ("buffer_atomic_min_i64", "buffer_atomic_smin_x2"),
    ("buffer_atomic_max_i64", "buffer_atomic_smax_x2"),
    ("buffer_atomic_min_u64", "buffer_atomic_umin_x2"),
    ("buffer_atomic_max_u64", "buffer_atomic_umax_x2"),
    ("buffer_atomic_and_b64", "buffer_atomic_and_x2"),
    ("buffer_atomic_or_b64", "buffer_atomic_or_x2"),
    ("buffer_atomic_xor_b64", "buffer_atomic_xor_x2"),
    ("buffer_atomic_inc_u64", "buffer_atomic_inc_x2"),
    ("buffer_atomic_dec_u64", "buffer_atomic_dec_x2"),
    ("buffer_atomic_swap_b64", "buffer_atomic_swap_x2"),
    ("buffer_atomic_cmpswap_b64", "buffer_atomic_cmpswap_x2"),
];

/// gfx1250's own names (in no RDNA table) → the executor's name. Each is
/// a no-op in this executor, or a rename:
/// - `s_set_vgpr_msb`: the decoder already resolved each operand's
///   register by control flow (`crate::decode::msb`), and each dispatch
///   checks that it could;
/// - `s_version`: records the ISA version, no effect (RDNA4 ISA guide);
/// - `s_wait_tensorcnt`, `s_wait_asynccnt`, `s_wait_xcnt`: wait for tensor
///   DMA, asynchronous global↔LDS transfers and address translation; tensor
///   DMA ([`crate::tensor`]) and the async transfers complete at issue here (the sanitizer checks the waits, [`crate::waitcnt`]), and
///   the last has nothing to wait for;
/// - `s_prefetch_inst`, `s_prefetch_inst_pc_rel`, `global_prefetch_b8`:
///   cache hints;
/// - `s_get_pc_i64`: gfx9's `s_getpc_b64`.
pub const GFX1250_ALIASES: &[(&str, &str)] = &[
    ("s_set_vgpr_msb", "s_nop"),
    ("s_version", "s_nop"),
    ("s_wait_tensorcnt", "s_nop"),
    ("s_wait_asynccnt", "s_nop"),
    ("s_wait_xcnt", "s_nop"),
    ("s_prefetch_inst", "s_nop"),
    ("s_prefetch_inst_pc_rel", "s_nop"),
    ("global_prefetch_b8", "s_nop"),
    ("s_get_pc_i64", "s_getpc_b64"),
];

/// The executor's name of RDNA3's `mnemonic` as LLVM prints it (encoding
/// suffixes kept): through [`ALIASES`] and [`GFX1250_ALIASES`], else
/// unchanged.
pub fn executor_name(mnemonic: &str) -> std::borrow::Cow<'_, str> {
    let (base, suffix) = crate::exec::base_name(mnemonic);
    match ALIASES
        .iter()
        .chain(GFX1250_ALIASES)
        .find(|(rdna, _)| *rdna == base)
    {
        Some((_, to)) => format!("{to}{suffix}").into(),
        None => mnemonic.into(),
    }
}

/// `program` with each mnemonic renamed for the executor
/// ([`executor_name`]); addresses, operands, words and text unchanged.
pub fn executable(program: &Program) -> Program {
    let mut p = program.clone();
    for ins in &mut p.instructions {
        if let std::borrow::Cow::Owned(m) = executor_name(&ins.mnemonic) {
            ins.set_mnemonic(&m);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In wave32 nothing reaches lanes 32-63 or `exec_hi`/`vcc_hi`, a lane
    /// mask is one SGPR, and gfx11's `null` reads 0 and drops writes.
    #[test]
    fn wave32_masks_are_one_sgpr_and_null_drops_writes() {
        use crate::decode::{Numbering, Operand, RegFile, Src, EXEC, NULL_GFX11, VCC};
        let mut w = crate::exec::Wave::new(4, 0);
        w.numbering = Numbering::GFX11;
        w.wave_size = 32;
        w.set_exec(u64::MAX);
        assert_eq!(w.exec(), 0xffff_ffff);
        assert_eq!(w.s[EXEC as usize + 1], 0, "exec_hi untouched");
        w.s[EXEC as usize + 1] = 0xffff_ffff;
        assert_eq!(
            w.exec(),
            0xffff_ffff,
            "exec_hi is not part of a wave32 mask"
        );
        let sgpr = |index: u16, count: u16| Src {
            op: Operand::Reg {
                file: RegFile::S,
                index,
                count,
            },
            neg: false,
            abs: false,
            sext: false,
        };
        w.s[5] = 7;
        w.write_mask(&sgpr(4, 1), u64::MAX).unwrap();
        assert_eq!((w.s[4], w.s[5]), (u32::MAX, 7), "one SGPR written");
        w.write_mask(&sgpr(NULL_GFX11, 1), 5).unwrap();
        assert_eq!(w.s[NULL_GFX11 as usize], 0, "null drops the write");
        w.set_vcc(u64::MAX);
        assert_eq!((w.s[VCC as usize], w.s[VCC as usize + 1]), (u32::MAX, 0));
        assert_eq!(w.m0(), w.s[125]);
    }

    /// Every alias is an RDNA3 name, none is also a gfx9 name (it would
    /// shadow it), and each runs on the executor under its new name.
    #[test]
    fn every_alias_is_an_rdna3_name_the_executor_runs_under_a_gfx9_name() {
        let rdna3 = crate::isa::table_for("gfx1100").unwrap();
        let rdna4 = crate::isa::table_for("gfx1201").unwrap();
        let mut seen = std::collections::HashSet::new();
        for (from, to) in ALIASES {
            assert!(seen.insert(from), "{from} twice");
            assert!(
                rdna3.lookup(from).or(rdna4.lookup(from)).is_some(),
                "{from} is not an RDNA3 or RDNA4 name"
            );
            assert!(
                crate::isa::lookup(from).is_none(),
                "{from} is a gfx9 name too"
            );
            assert_ne!(
                crate::exec::unit(to),
                crate::exec::Unit::None,
                "{from} -> {to}: the executor does not route {to}"
            );
            // Same family of encoding (a load stays a load of the same
            // memory).
            let f = rdna3.lookup(from).or(rdna4.lookup(from)).unwrap().format;
            let t = crate::exec::format_of(to).unwrap();
            let family = |f: crate::isa::Format| {
                use crate::isa::Format::*;
                match f {
                    Sop1 | Sop2 | Sopk | Sopc | Sopp => 0,
                    Vop1 | Vop2 | Vop3 | Vop3p | Vopc => 1,
                    x => 2 + x as u8,
                }
            };
            assert_eq!(family(f), family(t), "{from} ({f:?}) -> {to} ({t:?})");
        }
        assert_eq!(
            executor_name("v_add_nc_u32_e32"),
            "v_add_u32_e32",
            "suffix kept"
        );
        assert_eq!(executor_name("v_mov_b32_e32"), "v_mov_b32_e32");
    }
}
